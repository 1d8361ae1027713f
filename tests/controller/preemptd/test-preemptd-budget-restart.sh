#!/bin/bash
# The preemption budget holds across a kill -9: with --max-victims-per-minute 1, p1's preemption
# takes the minute's budget; preemptd is killed and started again while p1's victim still
# terminates, and the new instance counts that victim (its DisruptionTarget condition names
# preemptd; deleted when its deletionTimestamp minus its grace period says) — so p2 waits instead
# of taking a second victim in the same minute. A victim of another scheduler costs nothing.
# About 10 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
pd_setup


node n1 4
node n2 4
node n3 4
# v1 terminates for 40 s (2000 × 0.02), long after the restart
running_grace default v1 n1 0 3 2000
running default v2 n2 10 3
# another scheduler's victim, terminating with kube-scheduler's condition: not ours to count (and of
# a priority no preemptor here may take)
kube_apply "$(kube_pod_json default k3 n3 2000 64Mi 3 | jq -c '.spec.schedulerName = "default-scheduler" |
	.spec.terminationGracePeriodSeconds = 2000 | .status.conditions = [{"type": "DisruptionTarget", "status": "True",
	"reason": "PreemptionByScheduler", "message": "default-scheduler: preempting to accommodate a higher priority pod"}]')" >/dev/null
kube_curl admin -X DELETE "$KUBE_URL/api/v1/namespaces/default/pods/k3" >/dev/null
pending default p1 1000 3
pd_start a --leader-elect no --max-victims-per-minute 1
ok "p1 preempts on n1 (v1 is the cheaper victim)" wait_for 10 eval 'nominated p1 n1 && deleted v1'
pd_kill a
ok "v1 still terminates" terminating v1
pd_start b --leader-elect no --max-victims-per-minute 1
ok "restarted: the new instance lists the cluster" wait_for 10 logged b "Caches synced"
ok "...and counts v1 against the budget (1 victim in the last minute)" \
	wait_for 5 eval '[ "$(metric b preemptd_budget_victims_last_minute "{\"scope\":\"cluster\"}")" = 1 ]'
pending default p2 1000 3
told() {
	[[ "$(cond default p2 PodScheduled message)" == *"preemption postponed: 1 victim on node n2 would exceed the budget of 1 victim per minute (max-victims-per-minute)."* ]]
}
ok "p2 waits for the budget the restarted instance restored" wait_for 10 told
ok "...v2 is not deleted" eval '! deleted v2'
ok "preemptd_preemptors_waiting is 1" [ "$(metric b preemptd_preemptors_waiting)" = 1 ]
done_testing
