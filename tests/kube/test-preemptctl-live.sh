#!/bin/bash
# preemptctl --kubeconfig: the cluster listed from an API server (the stand-in of tests/kube),
# page by page, decoded like a file: the same decisions as from the same objects in a file; the
# server's and the transport's failures (403, 5xx, a cut or garbage body, a missing exec plugin, a
# server that is gone) end in one clear message and exit 1.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-apiserver.sh"

command -v python3 >/dev/null || skip_all "python3 missing"
command -v openssl >/dev/null || skip_all "openssl missing (test certificates)"
command -v curl >/dev/null || skip_all "curl missing"
PCTL=$BUILD/preemptctl
[ -x "$PCTL" ] || skip_all "$PCTL not built"
F=tests/fixtures/k8s
NOW=--now=2024-06-01T00:00:00Z
T=$(mktemp -d /tmp/preemptctl-live.XXXXXX)
KUBE_NO_TRAP=1
trap 'kube_stop; rm -rf "$T"' EXIT
# python3 and openssl are there: a stand-in that does not start is our regression, not a skip
kube_start || bail "the stand-in API server starts"
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0}
ADMIN=$KUBE_DIR/kubeconfig-admin

# expect RC STDOUT STDERR CMD...: exact stdout, stderr exact or "~contains" or "*"
expect() {
	local rc=$1 out=$2 err=$3 got_rc; shift 3
	"$@" >"$T/out" 2>"$T/err"; got_rc=$?
	local bad=0
	[ "$got_rc" = "$rc" ] || { echo "# exit $got_rc, want $rc"; bad=1; }
	[ "$out" = "*" ] || [ "$(cat "$T/out")" = "$out" ] || { echo "# stdout:"; sed 's/^/#   /' "$T/out"; bad=1; }
	case "$err" in
	"*") ;;
	"~"*) grep -qF -- "${err#\~}" "$T/err" || { echo "# stderr lacks '${err#\~}':"; sed 's/^/#   /' "$T/err"; bad=1; } ;;
	*) [ "$(cat "$T/err")" = "$err" ] || { echo "# stderr:"; sed 's/^/#   /' "$T/err"; bad=1; } ;;
	esac
	return $bad
}
requests() { kube_requests > "$T/req"; }

kube_apply "$(cat $F/cluster.json)" >/dev/null
file_answer=$("$PCTL" preempt $F/cluster.json --pod default/preemptor $NOW)
ok "preempt --kubeconfig: the same decision as from the same objects in a file" \
	expect 0 "$file_answer" "" "$PCTL" preempt --kubeconfig "$ADMIN" --pod default/preemptor $NOW
ok "check --kubeconfig: every kind listed (the server's two system classes too)" \
	expect 0 "ok: 6 PriorityClasses, 3 nodes, 10 pods (6 bound, 4 pending, 0 finished), 0 PodDisruptionBudgets" "" \
	"$PCTL" check --kubeconfig "$ADMIN"
ok "schedule --kubeconfig runs the queue over the live cluster" \
	expect 0 "*" "*" "$PCTL" schedule --kubeconfig "$ADMIN" --until-idle $NOW
ok "files add to the live cluster (a class and a pod to try)" expect 0 '{"pod":"default/nginx","node":"n1","victims":[]}' "" \
	"$PCTL" preempt --kubeconfig "$ADMIN" $F/docs-priorityclass.yaml $F/docs-pod.yaml --pod default/nginx $NOW
ok "a token kubeconfig works too" expect 0 "$file_answer" "" \
	"$PCTL" preempt --kubeconfig "$KUBE_DIR/kubeconfig-admin-token" --pod default/preemptor $NOW

# pagination: 1,200 more pods are three pages of 500; every page's items are read once
python3 -c '
import json
items = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "filler-%04d" % i, "namespace": "fill"},
          "spec": {"nodeName": "n3", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1m"}}}]}}
         for i in range(1200)]
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))' > "$T/pods.json"
curl -sf -X POST -H 'Content-Type: application/json' --data-binary @"$T/pods.json" "$KUBE_CTL/objects" >/dev/null
kube_ctl POST /requests/reset >/dev/null 2>&1 || true
ok "1,210 pods in pages of 500" expect 0 \
	"ok: 6 PriorityClasses, 3 nodes, 1210 pods (1206 bound, 4 pending, 0 finished), 0 PodDisruptionBudgets" "" \
	"$PCTL" check --kubeconfig "$ADMIN"
requests
pages=$(python3 -c '
import json, sys
n = c = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r.get("path") == "/api/v1/pods" and r.get("method") == "GET":
        q = r.get("query") or {}
        n += 1
        c += "continue" in q
        assert q.get("limit") in ("500", ["500"]), q
print(n, c)' "$T/req")
ok "the pod list took 3 requests, 2 with a continue token (got: $pages)" test "${pages% *}" -ge 3 -a "${pages#* }" -ge 2

# ResourceQuotas come from the server too, status and all (the pods are not counted again)
kube_apply '{"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "two-cpus", "namespace": "default"},
  "spec": {"hard": {"requests.cpu": "2"}}, "status": {"hard": {"requests.cpu": "2"}, "used": {"requests.cpu": "1500m"}}}' >/dev/null
echo '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big", "namespace": "default"},
  "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}]}}' > "$T/big.json"
ok "a ResourceQuota listed from the server refuses a pod over it, with the API server's message" expect 0 \
	'{"pod":"default/big","node":null,"refused":"ResourceQuota","reason":"pods \"big\" is forbidden: exceeded quota: two-cpus, requested: requests.cpu=1, used: requests.cpu=1500m, limited: requests.cpu=2"}' "" \
	"$PCTL" preempt --kubeconfig "$ADMIN" "$T/big.json" --pod default/big $NOW

# failures
ok "403: the server's message, exit 1" expect 1 "" \
"preemptctl: GET /apis/scheduling.k8s.io/v1/priorityclasses: HTTP 403: priorityclasses.scheduling.k8s.io is forbidden: User \"system:node:node-1\" cannot list resource \"priorityclasses\" in API group \"scheduling.k8s.io\" at the cluster scope
preemptctl: 1 problem found" \
	"$PCTL" check --kubeconfig "$KUBE_DIR/kubeconfig-node"
kube_fault '{"kind": "status", "code": 503, "path": "^/api/v1/nodes$", "message": "etcd is down"}' >/dev/null
ok "5xx: the status and message, no decision" expect 1 "" "~GET /api/v1/nodes: HTTP 503: etcd is down" \
	"$PCTL" preempt --kubeconfig "$ADMIN" --pod default/preemptor $NOW
kube_fault '{"kind": "truncate", "path": "^/api/v1/nodes$"}' >/dev/null
ok "a truncated body is an error, not a smaller cluster" expect 1 "" "~GET /api/v1/nodes" \
	"$PCTL" check --kubeconfig "$ADMIN"
kube_fault '{"kind": "garbage", "path": "^/api/v1/pods$", "body": "{\"kind\": \"PodList\", \"items\": [{\"metadata\": "}' >/dev/null
ok "a body cut inside its JSON: URL:LINE and the syntax error" expect 1 "" \
	"~$KUBE_URL/api/v1/pods:1: syntax error: premature EOF" "$PCTL" check --kubeconfig "$ADMIN"
kube_fault '{"kind": "garbage", "path": "^/api/v1/pods$", "body": "<html>proxy error</html>"}' >/dev/null
ok "a non-JSON body: syntax error at URL:LINE" expect 1 "" "~$KUBE_URL/api/v1/pods:1: syntax error" \
	"$PCTL" check --kubeconfig "$ADMIN"
ok "an exec credential plugin that is not installed: a clear error naming it" expect 1 "" \
	"~exec plugin \"aws-iam-authenticator\" not found (is it installed, and in PATH?)" \
	env PATH=/nonexistent "$PCTL" check --kubeconfig "$KUBE_DIR/kubeconfig-exec"
ok "a missing kubeconfig" expect 1 "" "~$T/nope" "$PCTL" check --kubeconfig "$T/nope"
ok "an untrusted server certificate fails TLS" expect 1 "" "~GET /apis/scheduling.k8s.io/v1/priorityclasses" \
	"$PCTL" check --kubeconfig "$KUBE_DIR/kubeconfig-rogue"
cp "$ADMIN" "$T/kubeconfig-admin"
chmod 600 "$T/kubeconfig-admin"
kube_stop
ok "a server that is gone: the connection error" expect 1 "" "~GET /apis/scheduling.k8s.io/v1/priorityclasses" \
	"$PCTL" check --kubeconfig "$T/kubeconfig-admin"
done_testing
