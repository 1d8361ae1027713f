#!/bin/bash
# preemptd explains its decisions in the words preemptctl preempt --explain uses for the same
# cluster state (one function: controller/cycle/explain.c): for four cluster shapes — taints and
# resources (unschedulable), PodDisruptionBudgets with a runner-up, a tie to the node name, and a
# preemption of 150 pods — the FailedScheduling Event's note is kube's FitError, unchanged, then
# preemptctl's "why:" text; each victim's Preempted Event adds the victim's reason from that text;
# the journal (a real systemd-journald in a private mount namespace) carries the same text in
# PREEMPTD_EXPLANATION, with PREEMPTD_CRITERION and PREEMPTD_RUNNER_UP; every note fits the
# API's 1024 bytes. preemptctl reads the state first, while the pending pod names another
# scheduler; then the pod is handed to preemptd (spec.schedulerName), which sees the same state.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
pd_in_journal_ns "$@" || skip_all "needs root, systemd-journald and a private mount namespace (a journald of its own)"
pd_setup
trap 'pd_journald_stop; pd_cleanup' EXIT
pd_journald || skip_all "systemd-journald did not start here: $(head -n 1 "$T/journald.out" 2>/dev/null)"

PREEMPTION=d2b7e61f0c4a4f8e9a35b6c1e7f04a23
UNSCHEDULABLE=8f0f4d62a1e34c55b3d7f2e9a04c6b12

# objects, with what the shapes need beyond lib-preemptd.sh's helpers
apply() { kube_apply "$1" >/dev/null; }
tainted_node() { apply "$(kube_node_json "$1" "$2" | jq -c '.spec.taints = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]')"; }
big_node() { apply "$(kube_node_json "$1" "$2" 64Gi "$3")"; }
# runs NS NAME NODE PRIO CPU [START]: a running pod of another scheduler, its startTime as given
runs() {
	local j
	j=$(kube_pod_json "$1" "$2" "$3" "$4" 64Mi "$5" | jq -c '.spec.schedulerName = "default-scheduler"')
	[ -n "${6:-}" ] && j=$(jq -c --arg t "$6" '.status = {"phase": "Running", "startTime": $t}' <<<"$j")
	apply "$j"
}
# budget NAME APP ALLOWED: a PodDisruptionBudget over app=APP with status.disruptionsAllowed
budget() {
	apply "{\"apiVersion\": \"policy/v1\", \"kind\": \"PodDisruptionBudget\",
	  \"metadata\": {\"namespace\": \"default\", \"name\": \"$1\"},
	  \"spec\": {\"minAvailable\": 1, \"selector\": {\"matchLabels\": {\"app\": \"$2\"}}},
	  \"status\": {\"disruptionsAllowed\": $3, \"currentHealthy\": 1, \"desiredHealthy\": 1, \"expectedPods\": 1}}"
}
parked() { pending default "$1" "$2" "$3" parked; } # a pending pod no scheduler here takes

# what preemptctl says of pod NAME (the state now), in $T/NAME.{json,err}; WHY: its "why:" text
ask() {
	"$PCTL" preempt --kubeconfig "$KUBE_DIR/kubeconfig-admin" --pod "default/$1" --explain \
		>"$T/$1.json" 2>"$T/$1.err" || bail "preemptctl preempt --pod default/$1"
	WHY=$(sed -n 's/^why: //p' "$T/$1.err")
}
# hands pod NAME to preemptd: the same object, spec.schedulerName preemptd
hand_over() { apply "$(obj default "$1" | jq -c '.spec.schedulerName = "preemptd"')"; }
note_of() {	# note_of REASON NAME [PREFIX]: the note of the Event REASON on pod NAME (that starts with PREFIX)
	events default | jq -r --arg r "$1" --arg n "$2" --arg p "${3:-}" \
		'[.[] | select(.reason == $r and .regarding.name == $n and (.note | startswith($p)))][0].note // ""'
}
has_event() { [ -n "$(note_of "$@")" ]; }
same() {	# same WHAT GOT WANT
	[ "$2" = "$3" ] && return 0
	echo "# $1:"; echo "#   preemptd:   $2"; echo "#   preemptctl: $3"; return 1
}
# the journal's entries of kind ID about pod default/NAME, as JSON lines in $T/j.json
entry() {
	journalctl --no-pager -o json MESSAGE_ID="$1" PREEMPTD_POD="default/$2" >"$T/j.json" 2>/dev/null
	[ -s "$T/j.json" ]
}
field() { head -n 1 "$T/j.json" | jq -r --arg f "$1" '.[$f] // ""'; }
# the reason given for victim NAME inside the why text: "default/NAME (REASON)", parentheses nested
victim_reason() {
	"$PY" -c '
import sys
why, name = sys.argv[1], "default/" + sys.argv[2] + " ("
i = why.index(name) + len(name)
depth, j = 1, i
while depth:
    depth += {"(": 1, ")": -1}.get(why[j], 0)
    j += 1
print(why[i:j - 1])' "$WHY" "$1"
}

pd_start a --leader-elect no --log-target journal

# --- taints and resources: no node, and which filters preemption cannot resolve ------------------
tainted_node t1 4
node s1 1
node f1 4
running default high f1 5000 4
parked u 100 2
ask u
ok "taints: preemptctl names what preemption cannot resolve" \
	same "why" "$WHY" "Preemption cannot resolve: 1 Insufficient cpu, 1 node(s) had untolerated taint {dedicated: gpu}."
fit=$(jq -r .reason "$T/u.json")
hand_over u
ok "taints: preemptd's FailedScheduling Event" wait_for 10 has_event FailedScheduling u
ok "...its note: kube's FitError unchanged, then preemptctl's words" same note "$(note_of FailedScheduling u)" "$fit $WHY"
ok "...the PodScheduled condition keeps the FitError alone, byte for byte" same condition "$(cond default u PodScheduled message)" "$fit"
ok "...the journal's entry" wait_for 10 entry $UNSCHEDULABLE u
ok "...PREEMPTD_EXPLANATION: preemptctl's words" same PREEMPTD_EXPLANATION "$(field PREEMPTD_EXPLANATION)" "$WHY"
ok "...PREEMPTD_REASON: the FitError" same PREEMPTD_REASON "$(field PREEMPTD_REASON)" "$fit"

# --- budgets: the criterion, the runner-up, each victim's budget ---------------------------------
kube_ctl POST /reset >/dev/null
for n in n1 n2 n3; do node $n 4; done
runs default v1a n1 10 2
runs default v1b n1 10 2
runs default v2a n2 50 4
runs default v3a n3 5 2 2024-05-01T10:00:00Z
runs default v3b n3 5 2 2024-05-01T10:00:01Z
budget web v1a 0
budget batch v2a 1
budget db3 v3a 0
parked p 1000 4
ask p
ok "budgets: preemptctl picks n2 for its budget, n3 the runner-up" \
	same "why" "$WHY" "Preempting on node n2, picked by fewest PDB violations: 0 against 1 on n3. Victims: default/v2a (priority 50 < 1000; within PodDisruptionBudget default/batch (1 disruption allowed))."
hand_over p
ok "budgets: preemptd preempts v2a on n2" wait_for 10 has_event Preempted v2a
puid=$(uid_of default p)
ok "...the victim's Preempted note: kube's words, then its reason from preemptctl's" \
	same note "$(note_of Preempted v2a)" "Preempted by pod $puid on node n2 ($(victim_reason v2a))"
# (its condition moves on as it waits: "not eligible due to a terminating pod on the nominated node")
fit="0/3 nodes are available: 3 Insufficient cpu."
ok "...the preemptor's FailedScheduling Event" wait_for 10 has_event FailedScheduling p "$fit"
ok "...its note: the filters' FitError, then preemptctl's words" same note "$(note_of FailedScheduling p "$fit")" "$fit $WHY"
ok "...the journal's preemption entry" wait_for 10 entry $PREEMPTION p
ok "...PREEMPTD_EXPLANATION: preemptctl's words" same PREEMPTD_EXPLANATION "$(field PREEMPTD_EXPLANATION)" "$WHY"
ok "...PREEMPTD_CRITERION and PREEMPTD_RUNNER_UP" \
	same "criterion, runner-up" "$(field PREEMPTD_CRITERION), $(field PREEMPTD_RUNNER_UP)" "fewest PDB violations, n3"
ok "...PREEMPTD_VICTIMS as preemptctl's" same victims "$(field PREEMPTD_VICTIMS)" "$(jq -r '.victims | join(",")' "$T/p.json")"

# --- a tie on every criterion: the node name ------------------------------------------------------
kube_ctl POST /reset >/dev/null
node a1 1
node a2 1
runs default x1 a1 3 1 2024-05-01T10:00:00Z
runs default x2 a2 3 1 2024-05-01T10:00:00Z
parked q 10 1
ask q
ok "ties: preemptctl decides by the node name" \
	same "why" "$WHY" "Preempting on node a1, picked by smallest node name: equal to a2 on every other criterion. Victims: default/x1 (priority 3 < 10; no PodDisruptionBudget)."
hand_over q
ok "ties: preemptd preempts x1" wait_for 10 has_event Preempted x1
fit="0/2 nodes are available: 2 Insufficient cpu."
ok "...and its FailedScheduling Event" wait_for 10 has_event FailedScheduling q "$fit"
ok "...whose note ends in preemptctl's words" same note "$(note_of FailedScheduling q "$fit")" "$fit $WHY"
ok "...the journal's too" wait_for 10 entry $PREEMPTION q
ok "...PREEMPTD_EXPLANATION, PREEMPTD_RUNNER_UP" same "explanation, runner-up" \
	"$(field PREEMPTD_EXPLANATION), $(field PREEMPTD_RUNNER_UP)" "$WHY, a2"

# --- 150 victims: the note within the API's limit ---------------------------------------------------
kube_ctl POST /reset >/dev/null
big_node big 150 200
objs=$(for i in $(seq -w 1 150); do
	kube_pod_json default "a-rather-long-name-of-a-batch-job-pod-$i" big 1 64Mi 1 |
		jq -c '.spec.schedulerName = "default-scheduler"'
done | jq -s -c '{"apiVersion": "v1", "kind": "List", "items": .}')
apply "$objs"
parked r 10 150
ask r
ok "150 victims: preemptctl names them all" [ "$(jq '.victims | length' "$T/r.json")" = 150 ]
hand_over r
head="0/1 nodes are available: 1 Insufficient cpu."
ok "150 victims: preemptd's FailedScheduling Event (after 450 writes for the victims)" wait_for 60 has_event FailedScheduling r "$head"
n=$(note_of FailedScheduling r "$head")
ok "...within 1024 bytes ($(printf %s "$n" | wc -c))" [ "$(printf %s "$n" | wc -c)" -le 1024 ]
ok "...kube's FitError first, unchanged" [ "${n:0:${#head}}" = "$head" ]
ok "...then preemptctl's words as far as they fit, the rest counted" \
	bash -c '[[ "$1" == *" more victims." ]] && [[ "$2" == "${1% and * more victims.}"* ]]' _ "${n#"$head "}" "$WHY"
ok "...no Event refused by the API server (422)" [ "$(nreqs '.resource == "events" and .status == 422')" = 0 ]
ok "...the journal holds the longer account" wait_for 10 entry $PREEMPTION r
ok "...PREEMPTD_EXPLANATION: preemptctl's words" same PREEMPTD_EXPLANATION "$(field PREEMPTD_EXPLANATION)" "$WHY"
ok "preemptd stays up" pd_alive a
done_testing
