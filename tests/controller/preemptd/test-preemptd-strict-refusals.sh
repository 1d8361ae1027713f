#!/bin/bash
# --pdb strict when the API server refuses what the dry run could not foresee (the stand-in as the
# API server, which enforces PodDisruptionBudgets on eviction as kube-apiserver does):
#  - a budget with a {} selector covers its whole namespace for the API server, nothing for
#    kube-scheduler's preemption: its 429 leads to another choice (another node), the refused pod
#    protected and still running, the preemptor bound elsewhere;
#  - a budget the dry run sees, allowing a disruption by the status the watch showed, refused by
#    the API server all the same: the dry run repeated with the budget as observed (spent) chooses
#    another node; prefer, on the same cluster, DELETEs the pod the API server would not evict;
#  - a partial preemption: the first victim (the tighter budget) evicted, the second refused → the
#    preemption withdrawn (never nominated there, nothing more evicted), the preemptor retried and
#    bound elsewhere; no budget broken;
#  - a budget whose spec the disruption controller has not processed (observedGeneration behind):
#    the refusal names it, the model counts it spent, and the controller's catching up lets the
#    preemptor in;
#  - API Priority and Fairness' 429 on an eviction is load, not a refusal: retried.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
pd_setup

running_app() {	# running_app NS NAME NODE PRIO CPU APP
	kube_apply "$(kube_pod_json "$1" "$2" "$3" "$4" 64Mi "$5" |
		jq -c --arg app "$6" '.spec.schedulerName = "default-scheduler" | .metadata.labels.app = $app')" >/dev/null
}
pdb() {	# pdb NS NAME SELECTOR-JSON ALLOWED [GENERATION OBSERVED-GENERATION]
	kube_apply "{\"apiVersion\":\"policy/v1\",\"kind\":\"PodDisruptionBudget\",
	 \"metadata\":{\"namespace\":\"$1\",\"name\":\"$2\",\"generation\":${5:-1}},
	 \"spec\":{\"maxUnavailable\":1,\"selector\":$3},
	 \"status\":{\"disruptionsAllowed\":$4,\"currentHealthy\":2,\"desiredHealthy\":$((2 - $4)),\"expectedPods\":2,
	  \"observedGeneration\":${6:-1}}}" >/dev/null
}
evictions() { nreqs ".subresource == \"eviction\" and .name == \"$1\" and .status == $2"; }
still_runs() { [ "$(node_of "$1" "$2")" = "$3" ] && [ -z "$(obj "$1" "$2" | jq -r '.metadata.deletionTimestamp // ""')" ]; }

# --- a {} budget: 429 → another choice -------------------------------------------------------------
node n1 1
node n2 1
running_app team-a a n1 0 1 a          # the cheapest victim, but team-a's budget covers every pod of it
running_app default b n2 5 1 b
pdb team-a all '{}' 0
pending default pre 1000 1
pd_start a --leader-elect no --pdb strict
ok "{} budget: the eviction of team-a/a is refused (429)" wait_for 15 eval '[ "$(evictions a 429)" = 1 ]'
ok "...another choice: b evicted on n2" wait_for 15 eval '[ "$(evictions b 201)" = 1 ]'
ok "...the preemptor bound on n2" wait_for 15 bound_to default pre n2
ok "...team-a/a still runs on n1, evicted once at most" eval 'still_runs team-a a n1 && [ "$(evictions a 429)" = 1 ]'
ok "...never nominated to n1" [ "$(nreqs '.name == "pre" and .body.status.nominatedNodeName == "n1"')" = 0 ]
ok "...the journal says why, naming the budget and the protected pod" \
	logged a "Preemption for pod default/pre on node n1 withdrawn: the eviction of team-a/a was refused (HTTP 429, PodDisruptionBudget team-a/all: .*no victim was evicted; the pod is tried again, team-a/a is no victim until a PodDisruptionBudget of team-a changes"
ok "metrics: a refusal by a budget, a retry with nothing evicted" eval '
	[ "$(metric a preemptd_eviction_refusals_total "{\"reason\":\"disruption_budget\"}")" = 1 ] &&
	[ "$(metric a preemptd_preemption_retries_total "{\"evicted\":\"none\"}")" = 1 ] &&
	[ "$(metric a preemptd_preemption_retries_total "{\"evicted\":\"some\"}")" = 0 ] &&
	[ "$(metric a preemptd_evictions_total)" = 1 ]'
pd_stop a

# --- a budget the dry run sees, refused: the budget as observed, another node ---------------------
# The status says 1 but the disruption controller has not processed the spec's generation 2: the
# API server refuses (429, "still being processed"), as it refuses an eviction of a budget spent
# since the watch showed it.
stale_cluster() {
	kube_ctl POST /reset >/dev/null
	node n6 1
	node n7 1
	running_app default x6 n6 0 1 x6       # the cheapest victim, its budget allowing 1 by the status
	running_app default y7 n7 5 1 y7       # more important, no budget
	pdb default x6 '{"matchLabels":{"app":"x6"}}' 1 2 1
	pending default pre 1000 1
}
stale_cluster
pd_start s --leader-elect no --pdb strict
ok "a budget the dry run sees: x6's eviction refused (429)" wait_for 15 eval '[ "$(evictions x6 429)" = 1 ]'
ok "...the dry run again with the budget spent: y7 evicted on n7, the preemptor bound there" \
	wait_for 20 eval '[ "$(evictions y7 201)" = 1 ] && bound_to default pre n7'
ok "...x6 still runs, asked once, never nominated to n6" eval 'still_runs default x6 n6 && [ "$(evictions x6 429)" = 1 ] &&
	[ "$(nreqs ".name == \"pre\" and .body.status.nominatedNodeName == \"n6\"")" = 0 ]'
ok "...the journal names the budget counted spent" \
	logged s "Preemption for pod default/pre on node n6 withdrawn: the eviction of default/x6 was refused (HTTP 429, PodDisruptionBudget default/x6"
ok "...metrics: one refusal by a budget not processed, a retry with nothing evicted" eval '
	[ "$(metric s preemptd_eviction_refusals_total "{\"reason\":\"budget_not_processed\"}")" = 1 ] &&
	[ "$(metric s preemptd_preemption_retries_total "{\"evicted\":\"none\"}")" = 1 ]'
pd_stop s
stale_cluster
pd_start sp --leader-elect no --pdb prefer
ok "prefer on the same cluster: x6 DELETEd, past what the API server would have let go" \
	wait_for 15 eval '[ "$(nreqs ".verb == \"delete\" and .name == \"x6\" and .status == 200")" = 1 ]'
ok "...y7 untouched" [ "$(nreqs '.name == "y7" and .verb != "get" and .verb != "list" and .verb != "watch"')" = 0 ]
pd_stop sp

# --- a partial preemption ----------------------------------------------------------------------------
kube_ctl POST /reset >/dev/null
node n3 2
node n4 2
running_app default v1 n3 0 1 web       # covered by web (allowed 1): the tighter budget, evicted first
running_app team-b v2 n3 1 1 v2         # kube's first victim (more important), but under team-b's {}
                                        # budget, which the dry run cannot see: no budget, evicted last
running_app default w4 n4 3 2 w4        # the other way: more important, no budget
pdb default web '{"matchLabels":{"app":"web"}}' 1
pdb team-b all '{}' 0
pending default pre 1000 2
pd_start c --leader-elect no --pdb strict --log-level debug
ok "partial: v1 (the tightest budget) evicted first" wait_for 15 eval '[ "$(evictions v1 201)" = 1 ]'
ok "...then v2 refused" wait_for 15 eval '[ "$(evictions v2 429)" = 1 ]'
first_v1() {
	kube_requests | jq -s -e '[.[] | select(.subresource == "eviction") | .name][:2] == ["v1", "v2"]' >/dev/null
}
ok "...in that order, not kube-scheduler's (v2 is the more important)" first_v1
ok "...the preemption withdrawn: never nominated to n3, nothing more evicted there" \
	eval '[ "$(nreqs ".name == \"pre\" and .body.status.nominatedNodeName == \"n3\"")" = 0 ] && [ "$(evictions v2 201)" = 0 ]'
ok "...retried: w4 evicted on n4 and the preemptor bound there" \
	wait_for 20 eval '[ "$(evictions w4 201)" = 1 ] && bound_to default pre n4'
ok "...no budget broken: v2 still runs" still_runs team-b v2 n3
ok "...v1 went within its budget (1 allowed, 1 used)" \
	[ "$(kube_ctl GET /objects/pdb/default/web | jq .status.disruptionsAllowed)" = 0 ]
ok "...the journal names what was evicted before the refusal" \
	logged c "withdrawn: the eviction of team-b/v2 was refused (HTTP 429, PodDisruptionBudget team-b/all: .*evicted before it, gone for good (their room is free once they have terminated): default/v1"
ok "metrics: a retry after a partial eviction" \
	[ "$(metric c preemptd_preemption_retries_total "{\"evicted\":\"some\"}")" = 1 ]
pd_stop c

# --- a budget not processed yet; then APF's 429 on an eviction ------------------------------------------
kube_ctl POST /reset >/dev/null
node n5 1
running_app default d5 n5 0 1 d5
pdb default d5 '{"matchLabels":{"app":"d5"}}' 1 2 1   # generation 2, observed 1: the API server refuses
pending default pre 1000 1
pd_start e --leader-elect no --pdb strict
msg="0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 node(s) would need more evictions than PodDisruptionBudget default/d5 allows."
named() { [ "$(cond default pre PodScheduled message)" = "$msg" ]; }
ok "a budget not processed yet: refused (429 'still being processed'), then pending with the budget named" \
	wait_for 15 eval '[ "$(evictions d5 429)" = 1 ] && named'
ok "...counted as spent: asked once" eval 'sleep 2; [ "$(evictions d5 429)" = 1 ]'
ok "...metrics: refused as not processed" \
	[ "$(metric e preemptd_eviction_refusals_total "{\"reason\":\"budget_not_processed\"}")" = 1 ]
# the disruption controller catches up; the API server's first answer to the next eviction is APF's
kube_fault '{"kind": "status", "code": 429, "retry_after": 1, "resource": "pods/eviction"}'
pdb default d5 '{"matchLabels":{"app":"d5"}}' 1 2 2
ok "the controller caught up: the preemptor preempts; APF's 429 retried, then the eviction accepted" \
	wait_for 20 eval '[ "$(evictions d5 201)" = 1 ]'
ok "...APF's 429 was no refusal" eval '
	[ "$(nreqs ".subresource == \"eviction\" and .status == 429")" = 2 ] &&
	[ "$(metric e preemptd_eviction_refusals_total "{\"reason\":\"budget_not_processed\"}")" = 1 ] &&
	[ "$(metric e preemptd_eviction_refusals_total "{\"reason\":\"disruption_budget\"}")" = 0 ] &&
	[ "$(metric e preemptd_preemption_retries_total "{\"evicted\":\"none\"}")" = 1 ]'
ok "...the preemptor bound" wait_for 15 bound_to default pre n5
done_testing
