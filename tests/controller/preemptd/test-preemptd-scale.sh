#!/bin/bash
# 500 pending pods of preemptd on 100 nodes through the stand-in API server and its kubelets:
# every pod bound, each by exactly one accepted binding, none overcommitting a node (the
# kubelet's admission would reject it: no pod may end Failed), and the metrics count them.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
pd_setup

# 100 nodes of 2 cpu; 500 pods of 300m: 6 fit per node, 600 places for 500 pods
{
	echo '['
	for i in $(seq -w 1 100); do kube_node_json "n$i" 2 8Gi; echo ,; done
	for i in $(seq -w 1 500); do kube_pending_pod_json load "p$i" 0 300m 64Mi; [ "$i" = 500 ] || echo ,; done
	echo ']'
} >"$T/objects.json"
curl -sS -X POST -H "Content-Type: application/json" --data-binary @"$T/objects.json" "$KUBE_CTL/objects" >/dev/null
t0=$SECONDS
pd_start a --leader-elect no
all_bound() { [ "$(kube_ctl GET /objects/pods/load | jq '[.[] | select(.spec.nodeName)] | length')" = 500 ]; }
ok "500 pending pods on 100 nodes: all bound" wait_for 120 all_bound
echo "# bound in $((SECONDS - t0)) s"
once() {
	kube_requests | jq -s -e '[.[] | select(.subresource == "binding" and .status == 201) | .name] |
		(length == 500) and (group_by(.) | all(length == 1))' >/dev/null
}
ok "...each by exactly one accepted binding" once
ok "...no binding refused" [ "$(nreqs '.subresource == "binding" and .status != 201')" = 0 ]
running_all() { [ "$(kube_ctl GET /objects/pods/load | jq '[.[] | select(.status.phase == "Running")] | length')" = 500 ]; }
ok "...every one admitted by its kubelet (none rejected for want of room)" wait_for 30 running_all
per_node() { kube_ctl GET /objects/pods/load | jq -e '[group_by(.spec.nodeName)[] | length] | max <= 6' >/dev/null; }
ok "...no node given more than its 2 cpu" per_node
ok "scheduler_schedule_attempts_total{result=scheduled} counts 500" \
	[ "$(metric a scheduler_schedule_attempts_total '{"result":"scheduled","profile":"preemptd"}')" = 500 ]
ok "preemptd_bindings_total{result=bound} counts 500" [ "$(metric a preemptd_bindings_total '{"result":"bound"}')" = 500 ]
ok "nothing pending any more" [ "$(metric a scheduler_pending_pods '{"queue":"active"}')" = 0 ]
done_testing
