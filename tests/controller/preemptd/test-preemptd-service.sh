#!/bin/bash
# preemptd as a service: /healthz /livez /readyz (not ready before its caches are synced) and
# /metrics read by a real Prometheus text parser (python3-prometheus-client) with kube-scheduler's
# names and types, values that count what happened (a binding, a preemption, API errors); the
# configuration file and flags (a flag wins, errors name the file and line); and the in-cluster
# service account (environment and token directory, in a private mount namespace).
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
"$PY" -c 'import prometheus_client.parser' 2>/dev/null || skip_all "python3-prometheus-client missing"
pd_setup

# --- configuration: file, flags, errors --------------------------------------------------------
printf '[preemptd]\nscheduler-name = from-file\nleader-elect = maybe\n' >"$T/bad.conf"
"$PD" --config "$T/bad.conf" >"$T/out" 2>&1; rc=$?
ok "a bad value in the file: exit 2, FILE:LINE: what" bash -c "[ $rc = 2 ] && grep -q '$T/bad.conf:3: leader-elect: expected yes or no, not \"maybe\"' '$T/out'"
printf '[preemptd]\nno-such-key = 1\n' >"$T/bad2.conf"
"$PD" --config "$T/bad2.conf" >"$T/out" 2>&1; rc=$?
ok "an unknown key: named with its line" bash -c "[ $rc = 2 ] && grep -q 'bad2.conf:2: unknown key \"no-such-key\"' '$T/out'"
"$PD" --config "$T/absent.conf" >"$T/out" 2>&1; rc=$?
ok "an explicit --config that does not exist: an error" bash -c "[ $rc = 2 ] && grep -q 'absent.conf: No such file' '$T/out'"
"$PD" --config /dev/null --leader-elect-renew-deadline 20s >"$T/out" 2>&1; rc=$?
ok "renew deadline not shorter than the lease: refused" bash -c "[ $rc = 2 ] && grep -q 'renew-deadline < lease-duration' '$T/out'"
"$PD" --config /dev/null --leader-elect-retry-period 1x >"$T/out" 2>&1; rc=$?
ok "a bad duration flag: refused, named" bash -c "[ $rc = 2 ] && grep -q -- '--leader-elect-retry-period: ' '$T/out'"
refused() {	# refused WHAT-STDERR-SAYS OPTIONS...: exit 2, and the message
	local want=$1; shift
	"$PD" --config /dev/null "$@" >"$T/out" 2>&1
	[ $? = 2 ] && grep -qF -- "$want" "$T/out" || { sed 's/^/# /' "$T/out"; return 1; }
}
ok "a bad --nomination-timeout: refused, saying what it takes" \
	refused 'nomination-timeout: expected grace+DURATION (e.g. grace+30s), DURATION or never, not "soon"' --nomination-timeout soon
ok "...grace+ with a bad duration too" refused 'nomination-timeout: ' --nomination-timeout grace+x
ok "--max-victims-per-minute 0 or -1: refused (none is the way to say no limit)" eval \
	"refused 'max-victims-per-minute: expected a number from 1 to 1000000, not \"0\"' --max-victims-per-minute 0 &&
	 refused 'not \"-1\"' --max-victims-per-minute -1"
ok "--max-victims-per-minute-per-pool without LABEL=, or with a bad label key: refused" eval \
	"refused 'expected LABEL=N' --max-victims-per-minute-per-pool 5 &&
	 refused 'expected LABEL=N' --max-victims-per-minute-per-pool '-bad=5' &&
	 refused 'max-victims-per-minute-per-pool: expected a number' --max-victims-per-minute-per-pool zone=x"
printf '[preemptd]\nmin-runtime = 5 minutes\n' >"$T/bad3.conf"
ok "a bad min-runtime in the file: FILE:LINE" refused "$T/bad3.conf:2: min-runtime: " --config "$T/bad3.conf"

# the file sets a scheduler name, the flag wins
printf '[preemptd]\nscheduler-name = from-file\nleader-elect = no\nlisten = 127.0.0.1:0\n' >"$T/pd.conf"
node n1 4
running default low n1 0 3500m
pending default mine 0 100m flag-name
pending default filed 0 100m from-file
kube_fault '{"kind": "delay", "ms": 2500, "verb": "list", "resource": "nodes"}'
"$PD" --config "$T/pd.conf" --scheduler-name flag-name --kubeconfig "$KUBE_DIR/kubeconfig-admin" \
	--log-target stderr >"$T/a.log" 2>&1 &
PD_PID[a]=$!
has_port() { [ -n "$(pd_port a)" ]; }
wait_for 5 has_port || bail "preemptd serves HTTP"
ok "/healthz and /livez answer 200 at once" [ "$(pd_code a /healthz)" = 200 ] && [ "$(pd_code a /livez)" = 200 ]
ok "/readyz is 503 while the caches are not synced" [ "$(pd_code a /readyz)" = 503 ]
ready() { [ "$(pd_code a /readyz)" = 200 ]; }
ok "...200 once they are" wait_for 10 ready
ok "the flag's scheduler name wins over the file's: its pod bound" wait_for 10 bound_to default mine n1
ok "...the file's is not this scheduler's" [ -z "$(node_of default filed)" ]
ok "unknown paths: 404; POST: 405" [ "$(pd_code a /nope)" = 404 ] && [ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$(pd_port a)/metrics")" = 405 ]

# a preemption, and an API error
pending default big 100 2 flag-name
kube_fault '{"kind": "status", "code": 503, "resource": "pods/binding"}'
pending default later 0 100m flag-name
victim_gone() { gone default low; }
wait_for 15 victim_gone
wait_for 15 bound_to default later n1
# an attempt is counted when its binding's answer is read, a moment after the pod shows bound
three_scheduled() { [ "$(metric a scheduler_schedule_attempts_total '{"result": "scheduled"}')" -ge 3 ]; }
wait_for 5 three_scheduled
pd_get a /metrics >"$T/metrics.txt"
parse() {
	"$PY" - "$T/metrics.txt" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
fams = {f.name: f for f in text_string_to_metric_families(open(sys.argv[1]).read())}
def val(name, **labels):
    for f in fams.values():
        for s in f.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    raise SystemExit("no sample %s %s" % (name, labels))
want = {  # kube-scheduler's names and types (the parser drops a counter's _total from the family)
    "scheduler_schedule_attempts": "counter", "scheduler_scheduling_attempt_duration_seconds": "histogram",
    "scheduler_pending_pods": "gauge", "scheduler_preemption_attempts": "counter",
    "scheduler_preemption_victims": "histogram", "preemptd_leader": "gauge",
    "preemptd_watch_restarts": "counter", "preemptd_api_requests": "counter", "preemptd_api_errors": "counter"}
for n, t in want.items():
    assert n in fams, "no family " + n
    assert fams[n].type == t, "%s is %s" % (n, fams[n].type)
assert val("scheduler_schedule_attempts_total", result="scheduled", profile="flag-name") >= 3
# every PostFilter run: the preemption, and any attempt while its victim still terminated
assert val("scheduler_preemption_attempts_total") >= 1
assert val("scheduler_preemption_victims_count") == 1 and val("scheduler_preemption_victims_sum") == 1
assert val("scheduler_scheduling_attempt_duration_seconds_count", result="scheduled") >= 3
for q in ("active", "backoff", "unschedulable", "gated"):
    val("scheduler_pending_pods", queue=q)
assert val("preemptd_api_errors_total", verb="POST", code="503") == 1
assert val("preemptd_api_requests_total", verb="POST", code="201") >= 3
assert val("preemptd_api_requests_total", verb="DELETE", code="200") == 1
assert val("preemptd_leader") == 1 and val("preemptd_caches_synced") == 1
assert val("preemptd_cluster_objects", kind="nodes") == 1
PY
}
ok "/metrics parses; kube-scheduler's families and types; the counts of what happened" parse
pd_stop a

# --- the in-cluster service account ------------------------------------------------------------
incluster() {
	kube_ctl POST /objects '{"apiVersion":"v1","kind":"ServiceAccount","metadata":{"namespace":"kube-system","name":"pd"}}' >/dev/null
	kube_ctl POST /objects '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRoleBinding","metadata":{"name":"pd-admin"},
		"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"pd-all"},
		"subjects":[{"kind":"ServiceAccount","name":"pd","namespace":"kube-system"}]}' >/dev/null
	kube_ctl POST /objects '{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"pd-all"},
		"rules":[{"apiGroups":["*"],"resources":["*"],"verbs":["*"]}]}' >/dev/null
	local dir; dir=$(kube_ctl GET /serviceaccount/kube-system/pd | jq -r .dir)
	[ -s "$dir/token" ] || { echo "# no token directory"; return 1; }
	pending default incl 0 100m
	# the real path, /var/run/secrets/kubernetes.io/serviceaccount, in a private mount namespace
	unshare -m --propagation private bash -c '
		mkdir -p /var/run/secrets/kubernetes.io/serviceaccount &&
		mount --bind "$1" /var/run/secrets/kubernetes.io/serviceaccount &&
		KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=$2 timeout 10 "$3" --config /dev/null \
			--leader-elect no --listen "" --log-target stderr' _ "$dir" "$KUBE_PORT" "$PD" >"$T/incl.log" 2>&1 &
	local pid=$!
	wait_for 10 bound_to default incl n1; local r=$?
	kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
	[ $r = 0 ] && [ "$(nreqs '.name == "incl" and .subresource == "binding" and .identity == "system:serviceaccount:kube-system:pd"')" = 1 ]
}
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
	ok "in a cluster: KUBERNETES_SERVICE_HOST/PORT and the service account's token and CA" incluster
else
	skip "in a cluster: the service account" "needs root and a mount namespace"
fi
env -u KUBERNETES_SERVICE_HOST "$PD" --config /dev/null --log-target stderr >"$T/out" 2>&1; rc=$?
ok "neither --kubeconfig nor a cluster: exit 1, saying so" bash -c "[ $rc = 1 ] && grep -q 'not in a cluster' '$T/out'"
done_testing
