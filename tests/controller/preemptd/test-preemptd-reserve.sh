#!/bin/bash
# A reservation that holds, against the stand-in API server and its kubelets: while a preemptor
# waits for the last of its victims (a long grace period), the room the first one freed is not
# taken by a pod of lower priority, nor by one of equal priority; once the victims are gone the
# preemptor is bound there. A preemptor deleted while it waits frees its room at once
# (kubernetes#102339), not at its nomination's deadline. About 15 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
pd_setup

never() { kube_apply "$(kube_pending_pod_json default "$1" "$2" "$3" | jq -c '.spec.preemptionPolicy = "Never"')" >/dev/null; }
pending_phase() { [ "$(cond default "$1" PodScheduled reason)" = Unschedulable ] && [ -z "$(node_of default "$1")" ]; }
ndeletes() { nreqs '.verb == "delete" and .resource == "pods"'; }

# v1 goes in 0.1 s, v2 takes 6 s: p needs the whole node
node n1 4
running_grace default v1 n1 0 2 5
running_grace default v2 n1 0 2 300
pending default p 1000 4
pd_start a --leader-elect no
ok "p is nominated to n1, its two victims deleted" wait_for 10 nominated p n1
ok "...v1 is gone soon" wait_for 5 gone default v1
# half the node is free now: it is p's
never low 500 2
pending default equal 1000 2
tried() { [ "$(nevents default "select(.regarding.name == \"$1\" and .reason == \"FailedScheduling\")")" -ge 1 ]; }
ok "a pod of lower priority that would fit the freed room is tried" wait_for 5 tried low
ok "...and one of equal priority" wait_for 5 tried equal
sleep 1
ok "v2 is still terminating" terminating v2
ok "the lower-priority pod is not bound: the room is p's" pending_phase low
ok "the equal-priority pod is not bound either" pending_phase equal
ok "...nor did it preempt (still 2 DELETEs)" [ "$(ndeletes)" = 2 ]
ok "p keeps its nomination" nominated p n1
ok "once v2 is gone p is bound to n1" wait_for 15 bound_to default p n1
ok "...and the other two still wait" eval 'pending_phase low && pending_phase equal'

# A deleted preemptor: q waits on n2 for w2 (20 s) after w1 went; the room w1 freed is q's until
# q is deleted, then the lower-priority pod takes it at once.
kube_curl admin -X DELETE "$KUBE_URL/api/v1/namespaces/default/pods/low" >/dev/null
kube_curl admin -X DELETE "$KUBE_URL/api/v1/namespaces/default/pods/equal" >/dev/null
node n2 4
running_grace default w1 n2 0 2 5
running_grace default w2 n2 0 2 1000
pending default q 1000 4
ok "q is nominated to n2" wait_for 10 nominated q n2
ok "...w1 is gone soon" wait_for 5 gone default w1
never low2 500 2
ok "a lower-priority pod waits for q's room" wait_for 5 tried low2
sleep 1
ok "...not bound" pending_phase low2
kube_curl admin -X DELETE "$KUBE_URL/api/v1/namespaces/default/pods/q" >/dev/null
t0=$SECONDS
ok "q deleted: the lower-priority pod is bound to n2 at once" wait_for 3 bound_to default low2 n2
echo "# bound $((SECONDS - t0)) s after the preemptor was deleted; w2 terminates for 20 s"
ok "...while w2 still terminates" terminating w2
done_testing
