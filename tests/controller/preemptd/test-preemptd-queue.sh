#!/bin/bash
# preemptd's scheduling queue as kube-scheduler 1.33+'s: with activeQ empty a pod backing off is
# popped at once (SchedulerPopFromBackoffQ, activeQueue.unlockedPop → backoffQ.popBackoff): a pod
# whose node appears 0.3 s after its failure is bound well before its 1 s backoff ends. A Node
# deleted while its pods terminate is no longer counted in "0/N nodes are available". A node
# event requeues an unschedulable pod only if it may help it (kube's QueueingHints of
# NodeAffinity and NodeResourcesFit): a label it does not select or a node too small does not.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
pd_setup

node small 1
pd_start a --leader-elect no
wait_for 20 logged a "Caches synced" || bail "preemptd syncs its caches"

# pop from backoffQ: 2 CPUs fit nowhere; a node that fits comes 0.3 s after the failure
pending default big 0 2
failed() { [ "$(nreqs '.resource == "pods" and .subresource == "status" and .name == "big"')" -ge 1 ]; }
wait_for 10 failed || bail "the first attempt of big fails (its status patched)"
sleep 0.3
node roomy 8
bound() { [ -n "$(node_of default big)" ]; }
ok "a node that fits appears 0.3 s after the failure: the pod is bound" wait_for 10 bound
quick() {
	local f b
	f=$(reqs '.resource == "pods" and .subresource == "status" and .name == "big"' | head -1 | jq -r .ts)
	b=$(reqs '.subresource == "binding" and .name == "big"' | head -1 | jq -r .ts)
	d=$(ts_diff "$f" "$b")
	"$PY" -c 'import sys; sys.exit(0 if float(sys.argv[1]) < 0.8 else 1)' "$d"
}
ok "...popped from backoffQ, before its 1 s backoff ended (bound $(quick; echo "$d") s after the failure)" quick

# a Node deleted while a pod on it is still terminating: kept for that pod, but not counted in
# "0/N nodes are available" (kube's snapshot has only nodes whose Node exists: UpdateSnapshot)
node doomed 4
running_grace default stuck doomed 0 100m 3000
kube_curl admin -X DELETE "$KUBE_URL/api/v1/namespaces/default/pods/stuck" >/dev/null
wait_for 10 terminating stuck || bail "pod stuck is terminating"
kube_ctl DELETE /objects/nodes/doomed >/dev/null
sleep 0.5
pending default huge 0 100
msg() { cond default huge PodScheduled message; }
said() { [ -n "$(msg)" ]; }
wait_for 10 said || bail "huge's failure is told"
ok "a deleted node with a terminating pod is not counted: '$(msg | cut -c1-60)…'" eval '[[ "$(msg)" == "0/2 nodes are available: 2 Insufficient cpu."* ]]'

# QueueingHints (isPodWorthRequeuing): a node event requeues an unschedulable pod only if the
# rejecting plugin's hint says it may help — NodeAffinity: the node matches now and did not before;
# NodeResourcesFit: the pod fits the node's allocatable (and, for an update, a requested resource
# grew)
attempts() { metric a scheduler_schedule_attempts_total '{"result":"unschedulable"}'; }
kube_apply "$(kube_pending_pod_json default picky 0 100m 64Mi preemptd | jq -c '.spec.nodeSelector = {"disk": "ssd"}')" >/dev/null
picky_failed() { [ -n "$(cond default picky PodScheduled message)" ]; }
wait_for 10 picky_failed || bail "picky (nodeSelector disk=ssd) fails"
sleep 1.2
n0=$(attempts)
kube_apply "$(kube_node_json small 1 | jq -c '.metadata.labels.irrelevant = "yes"')" >/dev/null
node medium 8
sleep 2.5
ok "a label picky does not select and a node too small for huge requeue neither ($n0 → $(attempts) unschedulable attempts)" \
	[ "$(attempts)" = "$n0" ]
kube_apply "$(kube_node_json small 1 | jq -c '.metadata.labels.disk = "ssd"')" >/dev/null
ok "the label it selects: picky is tried again and bound" wait_for 5 bound_to default picky small
pd_stop a
done_testing
