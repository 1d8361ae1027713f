#!/bin/bash
# Victims that never terminate (kubernetes#95752), against the stand-in: p preempts on n1, whose
# kubelet is stuck. preemptd is killed (-9) and restarted meanwhile: the new instance takes the
# nomination over from status.nominatedNodeName (no second preemption) with the deadline the victim's
# deletion time gives it (--nomination-timeout grace+2s: 2 s after the victim was due to be gone).
# Then the nomination is withdrawn — a uid-guarded status patch and a Warning NominationExpired
# Event that says why — and p preempts on n2 instead, without taking the stuck victim again, and is
# bound there. About 15 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
pd_setup

deletes_of() { nreqs ".verb == \"delete\" and .resource == \"pods\" and .name == \"$1\""; }

node n1 4
node n2 4
# n1's victim is the cheaper one (priority 0 against 10): p goes there first
running_grace default v1 n1 0 3 2
running_grace default w1 n2 10 3 2
pending default p 1000 3
puid=$(uid_of default p)
kube_kubelet '{"nodes": {"n1": {"mode": "stuck"}}}'
pd_start a --leader-elect no --nomination-timeout grace+2s
ok "p is nominated to n1, v1 deleted" wait_for 10 eval 'nominated p n1 && [ "$(deletes_of v1)" = 1 ]'
t_delete=$(reqs '.verb == "delete" and .name == "v1"' | jq -r .ts | head -1)
sleep 1
pd_kill a
pd_start b --leader-elect no --nomination-timeout grace+2s
ok "restarted: the new instance lists the cluster" wait_for 10 logged b "Caches synced"
sleep 0.5
ok "...p keeps its nomination to n1" nominated p n1
ok "...and does not preempt again (v1 deleted once, w1 not at all)" eval '[ "$(deletes_of v1)" = 1 ] && [ "$(deletes_of w1)" = 0 ]'

ok "the nomination expires and p preempts on n2" wait_for 15 nominated p n2
cleared() {	# the patch that withdrew the nomination, guarded by p's uid
	reqs ".verb == \"patch\" and .name == \"p\" and .subresource == \"status\" and .status == 200" |
		jq -s -e --arg uid "$puid" '[.[] | select(.body.status | has("nominatedNodeName") and .nominatedNodeName == null)
			| select(.body.metadata.uid == $uid)] | length == 1' >/dev/null
}
ok "...withdrawn by a status patch (nominatedNodeName: null, metadata.uid guard)" cleared
t_clear=$(reqs ".verb == \"patch\" and .name == \"p\" and .subresource == \"status\"" |
	jq -r 'select(.body.status | has("nominatedNodeName") and .nominatedNodeName == null) | .ts' | head -1)
held=$(ts_diff "$t_delete" "$t_clear")
echo "# withdrawn $held s after v1's DELETE (grace 2 s + 2 s)"
# (deletionTimestamp has whole seconds, as metav1.Time: the deadline may come up to 1 s early)
ok "...v1's grace period + 2 s after its DELETE" "$PY" -c 'import sys; sys.exit(not 2.9 <= float(sys.argv[1]) <= 7)' "$held"
expired_event() {
	[ "$(nevents default 'select(.regarding.name == "p" and .type == "Warning" and .reason == "NominationExpired" and
		.action == "Scheduling" and .reportingController == "preemptd" and
		.note == "Nomination to node n1 expired: 1 pod preempted there has not terminated within its grace period + 2s")')" = 1 ]
}
ok "...and a Warning NominationExpired Event that says why" wait_for 5 expired_event
ok "...logged" logged b "Nomination to node n1 expired"
ok "v1 is not preempted again (stuck: no victim any more), w1 is" eval '[ "$(deletes_of v1)" = 1 ] && [ "$(deletes_of w1)" = 1 ]'
ok "p is bound to n2" wait_for 10 bound_to default p n2
ok "preemptd_nominations_expired_total is 1" [ "$(metric b preemptd_nominations_expired_total)" = 1 ]
kube_kubelet '{"nodes": {"n1": {"mode": "normal"}}}'
ok "v1 goes once its kubelet is back" wait_for 10 gone default v1
done_testing
