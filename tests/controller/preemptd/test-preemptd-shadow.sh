#!/bin/bash
# preemptd --shadow against the stand-in API server and a fake kube-scheduler
# (fake-kube-scheduler.py: it binds, preempts or reports unschedulable the pending pods of
# default-scheduler as a plan says, on the wire as kube-scheduler does). Two runs on the same
# cluster: one where the fake does what preemptd would — a bind to a node preemptd scores as good
# as its own pick (a tie), a bind to its pick, a preemption of the same victim on the same node,
# an unschedulable pod — and one where it binds and preempts elsewhere and finds no node for a pod
# preemptd would bind (a filter preemptd lacks). Agreement is counted in
# preemptd_shadow_decisions_total{kind,agree} (read with prometheus_client), each disagreement
# journaled with ours, theirs and why; preemptd writes nothing at all (the stand-in's request
# log), takes no Lease although leader election is on by default, and counts every bound pod.
# Where a journald of its own can run (root), run 2's disagreements are read from the journal
# with their fields (PREEMPTD_KIND, _AGREE, _OURS, _THEIRS, _REASON).
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
"$PY" -c 'import prometheus_client' 2>/dev/null || skip_all "python3-prometheus-client missing"
pd_in_journal_ns "$@"
pd_setup
FAKE=$(dirname "$0")/fake-kube-scheduler.py
FPID=""
trap '[ -n "$FPID" ] && { kill "$FPID"; wait "$FPID"; } 2>/dev/null; pd_journald_stop; pd_cleanup' EXIT
[ -n "${PD_IN_NS:-}" ] && pd_journald || echo "# no journald of its own here: run 2 is read from stderr"
SHADOW=fce8eb23525341c991911a4e51a24bed
# said NAME TEXT: preemptd said TEXT (its stderr, or the journal when run 2 logs there)
said() {
	if [ -n "$JPID" ]; then journalctl --no-pager -o cat SYSLOG_IDENTIFIER=preemptd | grep -qF -- "$2"
	else logged "$1" "$2"; fi
}
# disagreement POD FIELD: the field of the journal's disagreement entry about default/POD
disagreement() {
	journalctl --no-pager -o json MESSAGE_ID=$SHADOW PREEMPTD_POD="default/$1" PREEMPTD_AGREE=false |
		head -n 1 | jq -r --arg f "$2" '.[$f] // ""'
}

fake_start() {	# fake_start PLAN-JSON: the fake kube-scheduler with that plan
	echo "$1" >"$T/plan.json"
	"$PY" "$FAKE" --dir "$KUBE_DIR" --url "$KUBE_URL" --plan "$T/plan.json" >>"$T/fake.log" 2>&1 &
	FPID=$!
}
fake_stop() { kill "$FPID" 2>/dev/null; wait "$FPID" 2>/dev/null; FPID=""; }
theirs() { pending default "$1" "$2" "$3" default-scheduler; } # theirs NAME PRIO CPU
count() { metric a preemptd_shadow_decisions_total "{\"kind\": \"$1\", \"agree\": \"$2\"}"; }
counted() { [ "$(count "$1" "$2")" = "$3" ]; }
synced() { logged a "Caches synced: shadowing the pods of default-scheduler"; }
preemptd_writes() { nreqs '(.user_agent // "" | startswith("preemptd")) and .method != "GET"'; }

# runs NAME NODE CPU START: a running pod of another scheduler, priority 0, started at START
runs() {
	kube_apply "$(kube_pod_json default "$1" "$2" 0 64Mi "$3" | jq -c --arg t "$4" \
		'.spec.schedulerName = "default-scheduler" | .status = {"phase": "Running", "startTime": $t}')" >/dev/null
}
# the cluster: n1 half full, n2 and n3 a quarter (equally good for a small pod)
cluster() {
	kube_ctl POST /reset >/dev/null
	node n1 4
	node n2 4
	node n3 4
	runs r1 n1 2 2024-05-01T10:00:00Z
	runs r2 n2 1 2024-05-01T10:00:01Z
	runs r3 n3 1 2024-05-01T10:00:02Z
}
# the model counts every pod the API server has that has not finished
all_counted() {
	[ "$(metric a preemptd_cluster_objects '{"kind": "pods"}')" = \
	  "$(kube_ctl GET /objects/pods/default | jq '[.[] | select(.status.phase != "Succeeded" and .status.phase != "Failed")] | length')" ]
}

# --- run 1: kube-scheduler does what preemptd would ------------------------------------------------
cluster
fake_start '{"default/b1": {"bind": "n3"}, "default/b2": {"bind": "n2"},
  "default/big": {"preempt": {"node": "n1", "victims": ["default/r1"]}},
  "default/huge": {"unschedulable": "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."}}'
pd_start a --shadow yes --log-level debug
ok "shadow: caches synced, shadowing default-scheduler" wait_for 10 synced
theirs b1 0 1
ok "run 1: b1 bound by the fake to n3, as good as n2 (preemptd's first pick)" \
	wait_for 10 bound_to default b1 n3
ok "...counted: bind, agree=true (kube's node among preemptd's equally best)" wait_for 5 counted bind true 1
theirs b2 0 1
ok "run 1: b2 bound to n2, preemptd's pick" wait_for 10 bound_to default b2 n2
ok "...counted: bind, agree=true" wait_for 5 counted bind true 2
# 4 cpu: every node must lose pods, n1 only one (r1): the lowest sum of priorities (criterion 3)
"$PCTL" preempt --kubeconfig "$KUBE_DIR/kubeconfig-admin" --pod default/big >"$T/want.json" 2>/dev/null
ok "(preemptctl on the same state: preempt r1 on n1)" \
	jq -e '.node == "n1" and .victims == ["default/r1"]' "$T/want.json"
theirs big 1000 4
ok "run 1: the fake preempts r1 on n1 and binds big there" wait_for 20 bound_to default big n1
ok "...counted: preempt, agree=true" wait_for 5 counted preempt true 1
theirs huge 0 100
ok "run 1: huge reported unschedulable by the fake; counted: unschedulable, agree=true" \
	wait_for 10 counted unschedulable true 1
for k in bind preempt unschedulable; do
	ok "run 1: $k, agree=false: 0" counted $k false 0
done
ok "run 1: nothing journaled as a disagreement" [ "$(logged_n a ': disagree: ')" = 0 ]
ok "preemptd wrote nothing at all: every request of its User-Agent a GET ($(nreqs '.user_agent // "" | startswith("preemptd")') requests)" \
	[ "$(preemptd_writes)" = 0 ]
ok "...while the fake's writes are in the same log" [ "$(nreqs '.user_agent == "fake-kube-scheduler" and .method != "GET"')" -gt 5 ]
ok "...no Lease touched, though leader election is on by default" [ "$(nreqs '.resource == "leases"')" = 0 ]
ok "...its read-only transport refused nothing (no code path tried to write)" \
	[ "$(metric a preemptd_shadow_writes_refused_total)" = 0 ]
ok "its model counts every pod, of every scheduler, bound or pending" wait_for 10 all_counted
ok "/readyz: ready without a Lease" [ "$(pd_code a /readyz)" = 200 ]
pd_stop a
fake_stop

# --- run 2: kube-scheduler binds and preempts elsewhere ---------------------------------------------
: >"$T/a.log"
cluster
fake_start '{"default/b1": {"bind": "n1"},
  "default/big": {"preempt": {"node": "n2", "victims": ["default/r2"]}},
  "default/vol": {"unschedulable": "0/3 nodes are available: 3 node(s) had volume node affinity conflict."}}'
log=()
[ -n "$JPID" ] && log=(--log-target journal)
pd_start a --shadow yes --shadow-scheduler default-scheduler "${log[@]}"
synced() { said a "Caches synced: shadowing the pods of default-scheduler"; }
ok "run 2: synced" wait_for 10 synced
theirs b1 0 1
ok "run 2: b1 bound by the fake to n1, not one of preemptd's best" wait_for 10 bound_to default b1 n1
ok "...counted: bind, agree=false" wait_for 5 counted bind false 1
ok "...journaled: pod, ours, theirs, why (n1's score against n2's)" \
	said a "Shadow of default-scheduler, pod default/b1: disagree: preemptd would bind to n2 (or, as good: n3); default-scheduler bound it to n1: n1 fits in preemptd's model too, with a LeastAllocated score of"
# n1 now needs two victims; n2 and n3 one each, equal but for their start: r3 started last
theirs big 1000 4
ok "run 2: the fake preempts r2 on n2 and binds big there" wait_for 20 bound_to default big n2
ok "...counted: preempt, agree=false" wait_for 5 counted preempt false 1
ok "...journaled: preemptd would preempt r3 on n3; default-scheduler preempted r2 on n2" \
	said a "Shadow of default-scheduler, pod default/big: disagree: preemptd would preempt on n3: default/r3; default-scheduler preempted on n2: default/r2; bound it to n2"
ok "...and why: n2 lost at the start-time criterion" \
	said a "preemption would help on n2 too (1 victim), but it lost at latest start of the highest-priority victims"
# a filter preemptd lacks (volumes): kube-scheduler finds no node where preemptd would bind
theirs vol 0 1
ok "run 2: vol reported unschedulable by the fake, where preemptd would bind: bind, agree=false" \
	wait_for 10 counted bind false 2
ok "...journaled with kube's message" \
	said a "Shadow of default-scheduler, pod default/vol: disagree: preemptd would bind to n3; default-scheduler left it unschedulable: 0/3 nodes are available: 3 node(s) had volume node affinity conflict."
ok "run 2: no agreement counted" bash -c "[ \"$(count bind true)$(count preempt true)\" = 00 ]"
ok "run 2: preemptd wrote nothing" [ "$(preemptd_writes)" = 0 ]
if [ -n "$JPID" ]; then
	ok "journal: b1's entry: PREEMPTD_KIND bind, PREEMPTD_OURS, PREEMPTD_THEIRS" \
		[ "$(disagreement b1 PREEMPTD_KIND)|$(disagreement b1 PREEMPTD_OURS)|$(disagreement b1 PREEMPTD_THEIRS)" = \
		  "bind|bind to n2 (or, as good: n3)|bound it to n1" ]
	ok "...PREEMPTD_REASON: n1's score against n2's" \
		bash -c '[[ "$1" == "n1 fits in preemptd'"'"'s model too, with a LeastAllocated score of "*" on n2 (kube-scheduler scores with more plugins)" ]]' _ "$(disagreement b1 PREEMPTD_REASON)"
	ok "journal: big's entry: kind preempt, ours, theirs, PREEMPTD_SCHEDULER" \
		[ "$(disagreement big PREEMPTD_KIND)|$(disagreement big PREEMPTD_OURS)|$(disagreement big PREEMPTD_THEIRS)|$(disagreement big PREEMPTD_SCHEDULER)" = \
		  "preempt|preempt on n3: default/r3|preempted on n2: default/r2; bound it to n2|default-scheduler" ]
	ok "...PREEMPTD_EXPLANATION: preemptd's own reasons, in preemptctl's words" \
		bash -c '[[ "$1" == "Preempting on node n3, picked by latest start of the highest-priority victims: "* ]]' _ "$(disagreement big PREEMPTD_EXPLANATION)"
else
	skip "journal fields of the disagreements" "no journald of its own here (needs root and a mount namespace)"
fi
pd_stop a
fake_stop
done_testing
