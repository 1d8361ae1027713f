#!/bin/bash
# --pdb strict against --pdb prefer (kube-scheduler's), on the same cluster against the stand-in API
# server: the one victim that fits the preemptor is covered by a PodDisruptionBudget that allows no
# disruption. prefer DELETEs it anyway (the budget broken, as kube-scheduler breaks it); strict sends
# nothing, the preemptor stays pending with a FitError naming the budget. Then the budget allows a
# disruption (its status rises): the preemptor is moved, preempts through the Eviction API
# (policy/v1 Eviction, the victim's uid as precondition, no DELETE, no condition of ours), the
# victim gets the API server's DisruptionTarget and a Preempted Event, the preemptor its nomination
# after the eviction, and binds once the victim is gone. Last, across a kill -9: a victim being
# evicted (the API server's EvictionByEvictionAPI, not kube-scheduler's PreemptionByScheduler)
# still holds its preemptor back from preempting again elsewhere, as kube-scheduler's own victims do.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
pd_setup

running_app() {	# running_app NS NAME NODE PRIO CPU APP
	kube_apply "$(kube_pod_json "$1" "$2" "$3" "$4" 64Mi "$5" |
		jq -c --arg app "$6" '.spec.schedulerName = "default-scheduler" | .metadata.labels.app = $app')" >/dev/null
}
pdb() {	# pdb NS NAME APP ALLOWED: a budget over app=APP whose status allows ALLOWED disruptions
	kube_apply "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",
	 \"metadata\":{\"namespace\":\"$1\",\"name\":\"$2\"},
	 \"spec\":{\"minAvailable\":1,\"selector\":{\"matchLabels\":{\"app\":\"$3\"}}},
	 \"status\":{\"disruptionsAllowed\":$4,\"currentHealthy\":$((1 + $4)),\"desiredHealthy\":1,\"expectedPods\":$((1 + $4)),
	  \"observedGeneration\":1}}" >/dev/null
}
cluster() {
	kube_ctl POST /reset >/dev/null
	node n1 1
	running_app default db-0 n1 0 1 db
	pdb default db db 0
	pending default pre 1000 1
}

# --- prefer: kube-scheduler's ------------------------------------------------------------------------
cluster
pd_start prefer --leader-elect no --pdb prefer
deleted() { [ "$(nreqs '.verb == "delete" and .name == "db-0" and .status == 200')" = 1 ]; }
ok "prefer: the victim covered by a budget allowing no disruption is DELETEd all the same" wait_for 15 deleted
ok "...the budget broken: it allowed 0 disruptions" \
	[ "$(kube_ctl GET /objects/pdb/default/db | jq .status.disruptionsAllowed)" = 0 ]
ok "...no eviction was asked for" [ "$(nreqs '.subresource == "eviction"')" = 0 ]
pd_stop prefer

# --- strict: the same cluster --------------------------------------------------------------------
cluster
kube_ctl DELETE /requests >/dev/null
pd_start strict --leader-elect no --pdb strict --log-level debug
msg="0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 node(s) would need more evictions than PodDisruptionBudget default/db allows."
pending_named() { [ "$(cond default pre PodScheduled message)" = "$msg" ]; }
ok "strict: the preemptor stays pending, its FitError naming the budget" wait_for 15 pending_named
ok "...the same words in its FailedScheduling Event" \
	[ "$(nevents default "select(.reason == \"FailedScheduling\" and .regarding.name == \"pre\" and .note == \"$msg\")")" = 1 ]
ok "...nothing asked of the victim: no DELETE, no eviction, no condition" \
	[ "$(nreqs '.name == "db-0" and .verb != "get" and .verb != "list" and .verb != "watch"')" = 0 ]
ok "...the victim runs" [ -z "$(obj default db-0 | jq -r '.metadata.deletionTimestamp // ""')" ]
ok "...not nominated" [ -z "$(nominated_of default pre)" ]

# the disruption controller's recount: one disruption allowed now
puid=$(uid_of default pre)
vuid=$(uid_of default db-0)
pdb default db db 1
evicted() { [ "$(nreqs '.subresource == "eviction" and .name == "db-0" and .status == 201')" = 1 ]; }
ok "the budget allows one: the preemptor preempts, through the Eviction API" wait_for 15 evicted
ok "...a policy/v1 Eviction with the victim's uid as precondition" \
	eval "reqs '.subresource == \"eviction\"' | jq -e --arg uid '$vuid' '.body.apiVersion == \"policy/v1\" and .body.kind == \"Eviction\" and
		.body.metadata.name == \"db-0\" and .body.deleteOptions.preconditions.uid == \$uid and
		(.body.deleteOptions | has(\"gracePeriodSeconds\") | not)' >/dev/null"
ok "...no DELETE and no DisruptionTarget of preemptd's: the API server's is there (EvictionByEvictionAPI)" \
	eval "[ \"\$(nreqs '.name == \"db-0\" and (.verb == \"delete\" or .subresource == \"status\")')\" = 0 ] &&
	      [ \"\$(cond default db-0 DisruptionTarget reason)\" = EvictionByEvictionAPI ] || gone default db-0"
ok "...the API server counted it against the budget" \
	[ "$(kube_ctl GET /objects/pdb/default/db | jq .status.disruptionsAllowed)" = 0 ]
preempted_event() {
	[ "$(nevents default "select(.reason == \"Preempted\" and .regarding.name == \"db-0\" and
		(.note | startswith(\"Preempted by pod $puid on node n1 (priority \")))")" = 1 ]
}
ok "...an Event Preempted on the victim" wait_for 5 preempted_event
nominated_after() {	# the nomination is written once the eviction is accepted, not before
	kube_requests | jq -s -e '
		([.[] | select(.subresource == "eviction" and .status == 201)][0].ts) as $e |
		[.[] | select(.name == "pre" and .subresource == "status" and .body.status.nominatedNodeName == "n1")] |
		length >= 1 and all(.ts >= $e)' >/dev/null
}
ok "...the preemptor nominated to n1 after the eviction" wait_for 5 nominated_after
ok "the preemptor binds on n1 once the victim is gone" wait_for 15 bound_to default pre n1
ok "metrics: one eviction, no refusal, one preemption completed" eval '
	[ "$(metric strict preemptd_evictions_total)" = 1 ] && [ "$(metric strict preemptd_pdb_strict)" = 1 ] &&
	[ "$(metric strict preemptd_eviction_refusals_total "{\"reason\":\"disruption_budget\"}")" = 0 ] &&
	[ "$(metric strict preemptd_preemptions_completed_total)" = 1 ]'

# --- across a restart: the eviction's condition counts as a preemption under way ------------------
kube_ctl POST /reset >/dev/null
pd_stop strict
node n1 1
running_app default v1 n1 5 1 v1
pending default pre 1000 1
kube_kubelet '{"nodes": {"n1": {"mode": "stuck"}}}'   # v1 terminates only when told
pd_start r1 --leader-elect no --pdb strict
nominated_n1() { [ "$(nominated_of default pre)" = n1 ]; }
ok "restart: v1 evicted, the preemptor nominated to n1" \
	wait_for 15 eval '[ "$(nreqs ".subresource == \"eviction\" and .name == \"v1\" and .status == 201")" = 1 ] && nominated_n1'
pd_kill r1
# a cheaper victim appears elsewhere while v1 still terminates
node n2 1
running_app default v2 n2 0 1 v2
pd_start r2 --leader-elect no --pdb strict --log-level debug
ok "...after kill -9, the new instance finds v1 terminating and does not preempt again" \
	wait_for 15 logged r2 "not eligible due to a terminating pod on the nominated node"
ok "...v2 untouched, the nomination kept" \
	eval 'sleep 1; [ "$(nreqs ".name == \"v2\" and .verb != \"get\" and .verb != \"list\" and .verb != \"watch\"")" = 0 ] && nominated_n1'
kube_kubelet '{"nodes": {"n1": {"mode": "normal"}}}'
ok "...v1 gone, the preemptor binds on n1" wait_for 15 bound_to default pre n1
done_testing
