#!/bin/bash
# deploy/shadow/preemptd-shadow.yaml gives preemptd --shadow exactly what it needs: the stand-in
# API server starts with the manifest's objects (--rbac) and enforces RBAC; preemptd runs as its
# ServiceAccount with the Deployment's own arguments, while a pod of kube-scheduler's is bound (by
# the test, as kube-scheduler would) and compared. The account must show no denied request, no
# permission unused, and every request preemptd made a read. The Deployment runs one replica with
# --shadow=yes, as the ServiceAccount, non-root on a read-only root, with deploy/preemptd.yaml's image.
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
M=deploy/shadow/preemptd-shadow.yaml
PREEMPTD=$BUILD/preemptd
[ -x "$PREEMPTD" ] || skip_all "$PREEMPTD not built"
for t in python3 curl openssl jq; do
	command -v "$t" >/dev/null || skip_all "$t not installed"
done
python3 -c 'import yaml' 2>/dev/null || skip_all "python3-yaml not installed"
. tests/kube/lib-apiserver.sh

args=$(python3 -c 'import json, sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d and d["kind"] == "Deployment":
        print(json.dumps({"replicas": d["spec"]["replicas"], "sa": d["spec"]["template"]["spec"]["serviceAccountName"],
                          "c": d["spec"]["template"]["spec"]["containers"][0],
                          "sc": d["spec"]["template"]["spec"]["securityContext"]}))' "$M") ||
	bail "$M parses"
jqa() { jq -e "$1" <<<"$args" >/dev/null; }
ok "the Deployment: one replica, as preemptd-shadow, --shadow=yes" \
	jqa '.replicas == 1 and .sa == "preemptd-shadow" and (.c.args | index("--shadow=yes")) != null'
ok "...non-root, read-only root, no capability" \
	jqa '.sc.runAsNonRoot and .c.securityContext.readOnlyRootFilesystem and .c.securityContext.capabilities.drop == ["ALL"]'
image=$(python3 -c 'import sys, yaml
print(next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "Deployment")
      ["spec"]["template"]["spec"]["containers"][0]["image"])' deploy/preemptd.yaml)
ok "...the image of deploy/preemptd.yaml ($image)" jqa ".c.image == \"$image\""

kube_start --rbac "$M" --bookmark-interval 1 || bail "the stand-in API server starts with $M"
out=$KUBE_DIR/out
PD=
trap 'if [ -n "$PD" ]; then kill "$PD" 2>/dev/null; wait "$PD" 2>/dev/null; fi; kube_stop' EXIT
logged() { kube_requests | jq -e -s "any(.[]; $1)" >/dev/null; }
waitfor() {
	local end=$((SECONDS + $1))
	until logged "$2"; do [ $SECONDS -ge "$end" ] && return 1; sleep 0.2; done
}

kube_apply "$(kube_node_json node-1 2 4Gi)" >/dev/null
kube_apply '{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"namespace":"default","name":"any"},"spec":{"minAvailable":0,"selector":{"matchLabels":{"app":"x"}}}}' >/dev/null
mapfile -t dargs < <(jq -r '.c.args[]' <<<"$args")
"$PREEMPTD" --config /dev/null --kubeconfig "$KUBE_DIR/kubeconfig-sa-kube-system-preemptd-shadow" \
	"${dargs[@]}" --listen 127.0.0.1:0 --log-target stderr --log-level debug >"$KUBE_DIR/preemptd.log" 2>&1 &
PD=$!
ok "preemptd --shadow as the ServiceAccount lists and watches pods" \
	waitfor 20 '.resource=="pods" and .verb=="watch" and .status==200'
for _ in $(seq 100); do grep -q 'Caches synced' "$KUBE_DIR/preemptd.log" && break; sleep 0.1; done
kube_apply "$(kube_pending_pod_json default theirs 0 100m 64Mi default-scheduler)" >/dev/null
sleep 0.5
uid=$(kube_ctl GET /objects/pods/default/theirs | jq -r .metadata.uid)
# kube-scheduler's binding, as the test's admin (kube-scheduler's identity is not the manifest's)
kube_curl admin -X POST -H 'Content-Type: application/json' \
	"$KUBE_URL/api/v1/namespaces/default/pods/theirs/binding" \
	-d "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"theirs\",\"uid\":\"$uid\"},\"target\":{\"kind\":\"Node\",\"name\":\"node-1\"}}" >/dev/null
compared() { grep -q 'Shadow of default-scheduler, pod default/theirs: agree: preemptd would bind to node-1' "$KUBE_DIR/preemptd.log"; }
for _ in $(seq 100); do compared && break; sleep 0.1; done
ok "...and compares kube-scheduler's binding with its own decision" compared
kill "$PD"; wait "$PD"; PD=
kube_ctl GET /rbac >"$out"
denied=$(jq '.denied | length' "$out")
ok "no request of preemptd was refused ($denied)" test "$denied" = 0
unused=$(jq -r '.roles[]|.kind+"/"+.name as $r|.rules[].atoms[]|select(.count==0)|"\($r): \(.verb) \(.api_group)/\(.resource)"' "$out")
ok "every permission of the ClusterRole was used${unused:+ (unused: $(echo $unused))}" test -z "$unused"
writes=$(kube_requests | jq -s '[.[] | select((.user_agent // "" | startswith("preemptd")) and .method != "GET")] | length')
ok "every request of preemptd was a read ($writes writes)" test "$writes" = 0
done_testing
