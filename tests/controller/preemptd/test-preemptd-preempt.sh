#!/bin/bash
# Preemption end to end against the stand-in API server and its kubelet simulation: the victims
# preemptctl preempt names for the same cluster get DisruptionTarget=True/PreemptionByScheduler,
# then a DELETE with a uid precondition, then a Normal Preempted Event; the preemptor gets
# status.nominatedNodeName, and the journal explains the decision in preemptctl --explain's words.
# While the victims terminate (their kubelet stuck) the preemptor does
# not preempt again and a lower-priority pod does not take the room; once they are gone the
# preemptor is bound there.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
pd_setup

node n1 4
running default v1 n1 0 1500m
running default v2 n1 0 1500m
running default v3 n1 0 500m
pending default p 1000 2500m
# the what-if first, on the same cluster
"$PCTL" preempt --kubeconfig "$KUBE_DIR/kubeconfig-admin" --pod default/p --explain >"$T/want.json" 2>"$T/pctl.err"
preempts_on_n1() { jq -e '.node == "n1" and (.victims | length) > 0' "$T/want.json" >/dev/null; }
ok "preemptctl preempts on n1" preempts_on_n1
want=$(jq -r '.victims | join(" ")' "$T/want.json")
puid=$(uid_of default p)
# the victims' kubelet does not finish them until told
kube_kubelet '{"nodes": {"n1": {"mode": "stuck"}}}'
pd_start a --leader-elect no --log-level debug
nominated() { [ "$(nominated_of default p)" = n1 ]; }
ok "the preemptor gets status.nominatedNodeName n1" wait_for 10 nominated
deleted_victims() { reqs '.verb == "delete" and .resource == "pods" and .status == 200' | jq -r .name | sort | tr '\n' ' ' | sed 's/ $//'; }
all_deleted() { [ "$(deleted_victims)" = "$(tr ' ' '\n' <<<"$want" | sed 's|.*/||' | sort | tr '\n' ' ' | sed 's/ $//')" ]; }
ok "the victims deleted are preemptctl's ($want)" wait_for 10 all_deleted
guarded() {
	local v uid
	for v in $want; do
		v=${v#*/}; uid=$(uid_of default "$v")
		reqs ".verb == \"delete\" and .name == \"$v\"" | jq -e --arg uid "$uid" '.body.preconditions.uid == $uid' >/dev/null || return 1
	done
}
ok "...each DELETE with the victim's uid as precondition and no grace period of ours" guarded
condition_first() {
	local v
	for v in $want; do
		v=${v#*/}
		kube_requests | jq -s -e --arg v "$v" '
			[.[] | select(.name == $v and (.verb == "patch" or .verb == "delete"))] as $w |
			($w | length) == 2 and $w[0].subresource == "status" and $w[1].verb == "delete" and
			([$w[0].body.status.conditions[] | select(.type == "DisruptionTarget" and .status == "True" and
			  .reason == "PreemptionByScheduler" and
			  .message == "preemptd: preempting to accommodate a higher priority pod")] | length) == 1' >/dev/null || return 1
		[ "$(cond default "$v" DisruptionTarget reason)" = PreemptionByScheduler ] || return 1
	done
}
ok "...after the condition DisruptionTarget=True/PreemptionByScheduler, on the pod" condition_first
preempted_events() {
	local v
	for v in $want; do
		[ "$(nevents default "select(.reason == \"Preempted\" and .type == \"Normal\" and .action == \"Preempting\" and
			.regarding.name == \"${v#*/}\" and .related.uid == \"$puid\" and
			.note == \"Preempted by pod $puid on node n1 (priority 0 < 1000; no PodDisruptionBudget)\")")" = 1 ] || return 1
	done
}
ok "...and an Event Normal Preempted \"Preempted by pod UID on node n1 (why)\" on each" wait_for 5 preempted_events
same_words() {	# every node, victim and decision line of preemptctl's --explain is in preemptd's journal
	local line n=0
	while IFS= read -r line; do
		case "$line" in "node "* | "    victim "* | "decision:"*) ;; *) continue ;; esac
		n=$((n + 1))
		grep -qxF -- "$line" "$T/a.log" || { echo "# not in preemptd's log: $line"; return 1; }
	done <"$T/pctl.err"
	[ "$n" -ge 3 ]
}
ok "at log level debug, preemptd explains it in preemptctl --explain's words" same_words
ok "the preemptor's condition: PodScheduled=False, its FitError" \
	[ "$(cond default p PodScheduled message)" = "0/1 nodes are available: 1 Insufficient cpu." ]

# while they terminate: a node joins (every unschedulable pod is tried again) and a pod of lower
# priority arrives that would fit in the room the victims leave, were it not the preemptor's
# (preemptionPolicy Never: it may only take free room, not make its own beside the preemptor)
node n2 1
kube_apply "$(kube_pending_pod_json default low 500 1500m | jq -c '.spec.preemptionPolicy = "Never"')" >/dev/null
sleep 3
ndel=$(nreqs '.verb == "delete" and .resource == "pods"')
ok "no second preemption while the victims terminate (still $(wc -w <<<"$want") DELETEs)" [ "$ndel" = "$(wc -w <<<"$want")" ]
ok "...the preemptor keeps its nomination" nominated
ok "...it was tried again and found its nominated node's victims terminating" \
	logged a "not eligible due to a terminating pod on the nominated node"
ok "...the victims are still there, terminating" [ -n "$(obj default v2 | jq -r '.metadata.deletionTimestamp // ""')" ]
ok "...the lower-priority pod is not bound to n1" [ "$(node_of default low)" != n1 ]

kube_kubelet '{"nodes": {"n1": {"mode": "normal"}}}'
victims_gone() { local v; for v in $want; do gone default "${v#*/}" || return 1; done; }
ok "the kubelet finishes the victims" wait_for 10 victims_gone
ok "the preemptor is bound to n1" wait_for 15 bound_to default p n1
ok "...with one binding" [ "$(nreqs '.subresource == "binding" and .name == "p" and .status == 201')" = 1 ]
ok "the lower-priority pod did not take its room" [ "$(node_of default low)" != n1 ]
low_waits() { [ "$(cond default low PodScheduled reason)" = Unschedulable ]; }
ok "...it waits, unschedulable" wait_for 5 low_waits
ok "the reprieved pod v1 still runs" bound_to default v1 n1
done_testing
