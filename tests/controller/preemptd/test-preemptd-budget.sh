#!/bin/bash
# The preemption budget against the stand-in: --max-victims-per-minute 2 and
# --max-victims-per-minute-per-pool pool=1. Four preemptors, each held to one pool by a node
# selector: the first takes pool a's budget, so the second (pool a again) waits; pool b has its
# own budget and the third goes; the fourth (pool c) is the cluster's third victim in a minute and
# waits. The waiting ones are told (PodScheduled and FailedScheduling: "preemption postponed: ..."),
# counted in the metrics, retried by a timer when the minute has passed — not in a loop — and then
# preempt; no 60 s window of the request log ever holds more DELETEs than the budgets allow.
# About 70 s: the budget's minute is a real one.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
pd_setup

pool_node() { kube_apply "$(kube_node_json "$1" 4 | jq -c --arg p "$2" '.metadata.labels.pool = $p')" >/dev/null; }
for n in a1:a a2:a b1:b c1:c; do
	pool_node "${n%:*}" "${n#*:}"
	running default "v-${n%:*}" "${n%:*}" 0 3
done
preemptor() {	# preemptor NAME PRIORITY POOL
	kube_apply "$(kube_pending_pod_json default "$1" "$2" 3 | jq -c --arg p "$3" '.spec.nodeSelector = {"pool": $p}')" >/dev/null
}
delete_ts() { reqs ".verb == \"delete\" and .resource == \"pods\" and .name == \"$1\"" | jq -r .ts | head -1; }

pd_start a --leader-elect no --max-victims-per-minute 2 --max-victims-per-minute-per-pool pool=1
preemptor p1 1000 a
# where p1 went: its nomination, or its node once bound (the binding clears the nomination)
where() { local n; n=$(node_of default "$1"); echo "${n:-$(nominated_of default "$1")}"; }
ok "p1 preempts in pool a" wait_for 10 eval 'n=$(where p1); [ -n "$n" ] && deleted "v-$n"'
first=$(where p1)
other=a1; [ "$first" = a1 ] && other=a2
preemptor p2 1000 a   # equal: a higher one would take p1's room on its node, whose victim is already going
preemptor p3 1000 b
ok "p3 preempts on b1: pool b has its own budget" wait_for 10 eval 'nominated p3 b1 && deleted v-b1'
preemptor p4 1000 c
fit_error="0/4 nodes are available: 1 Insufficient cpu, 3 node(s) didn't match Pod's node affinity/selector."
told() {	# told POD NODE(S)-FITTING MESSAGE-TAIL: a FailedScheduling Event with it, and its condition says it waits
	local want
	want="0/4 nodes are available: $2 Insufficient cpu, $((4 - $2)) node(s) didn't match Pod's node affinity/selector. preemption postponed: $3"
	# the note goes on with the explanation, in the conditional: nothing was deleted
	[ "$(nevents default "select(.regarding.name == \"$1\" and .type == \"Warning\" and .reason == \"FailedScheduling\" and (.note | startswith(\"$want Would preempt on node \")))")" -ge 1 ] &&
		[[ "$(cond default "$1" PodScheduled message)" == *" preemption postponed: "* ]]
}
ok "p2 waits for pool a's budget, and is told so" wait_for 10 told p2 2 \
	"1 victim on node $other would exceed the budget of 1 victim per minute of node pool pool=a (max-victims-per-minute-per-pool)."
ok "p4 waits for the cluster's budget, and is told so" wait_for 10 told p4 1 \
	"1 victim on node c1 would exceed the budget of 2 victims per minute (max-victims-per-minute)."
ok "...neither is nominated, their victims untouched" \
	eval '! nominated p2 "$other" && ! nominated p4 c1 && ! deleted "v-$other" && ! deleted v-c1'
ok "...logged" logged a "Preemption for pod default/p2 on node $other postponed"
ok "preemptd_preemptors_waiting is 2" [ "$(metric a preemptd_preemptors_waiting)" = 2 ]
ok "preemptd_preemptions_postponed_total counts a pool's and the cluster's" \
	eval '[ "$(metric a preemptd_preemptions_postponed_total "{\"budget\":\"pool\"}")" -ge 1 ] &&
	      [ "$(metric a preemptd_preemptions_postponed_total "{\"budget\":\"cluster\"}")" -ge 1 ]'
ok "preemptd_budget_victims_last_minute: 2 cluster-wide, 1 in pool a" \
	eval '[ "$(metric a preemptd_budget_victims_last_minute "{\"scope\":\"cluster\"}")" = 2 ] &&
	      [ "$(metric a preemptd_budget_victims_last_minute "{\"scope\":\"pool\",\"pool\":\"a\"}")" = 1 ]'
attempts0=$(metric a scheduler_schedule_attempts_total '{"result":"unschedulable","profile":"preemptd"}')

ok "when the minute has passed, p2 preempts on $other" wait_for 75 eval 'nominated p2 "$other" && deleted "v-$other"'
ok "...and p4 on c1" wait_for 10 eval 'nominated p4 c1 && deleted v-c1'
# The budget counts at the decision; the API server sees each DELETE a few ms later, more or less:
# a window of 59.5 s of the request log leaves room for that.
gap() { "$PY" -c 'import sys; sys.exit(not float(sys.argv[1]) >= 59.5)' "$(ts_diff "$(delete_ts "$1")" "$(delete_ts "$2")")"; }
ok "...$other's victim a minute after $first's (pool a)" gap "v-$first" "v-$other"
ok "...c1's victim a minute after b1's (the cluster's third)" gap v-b1 v-c1
within_budget() {	# no 59.5 s window of DELETEs holds more than 2, nor more than 1 in pool a
	reqs '.verb == "delete" and .resource == "pods" and .status == 200' | jq -s '[.[] | {ts, name}]' | "$PY" -c '
import datetime, json, sys
d = [(datetime.datetime.fromisoformat(x["ts"]), x["name"]) for x in json.load(sys.stdin)]
w = datetime.timedelta(seconds=59.5)
def worst(items):
    return max((sum(1 for u, _ in items if t <= u < t + w) for t, _ in items), default=0)
sys.exit(not (len(d) == 4 and worst(d) <= 2 and worst([x for x in d if x[1] in ("v-a1", "v-a2")]) <= 1))'
}
ok "no minute held more DELETEs than the budgets allow" within_budget
attempts1=$(metric a scheduler_schedule_attempts_total '{"result":"unschedulable","profile":"preemptd"}')
echo "# unschedulable attempts while waiting: $((attempts1 - attempts0))"
ok "...waited on a timer, not a loop (few attempts in the minute)" [ $((attempts1 - attempts0)) -le 10 ]
ok "preemptd_preemptors_waiting is 0 again" [ "$(metric a preemptd_preemptors_waiting)" = 0 ]
ok "all four are bound" wait_for 10 eval 'bound_to default p1 "$first" && bound_to default p2 "$other" &&
	bound_to default p3 b1 && bound_to default p4 c1'
# a pod told twice in one turn (its nomination cleared, then its own FailedScheduling) gets two
# Events with two names: none is refused as a duplicate
ok "no Event was refused (409)" [ "$(nreqs '.resource == "events" and .status == 409')" = 0 ]
done_testing
