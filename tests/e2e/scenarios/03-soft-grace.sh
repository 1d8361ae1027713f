#!/bin/bash
# Scenario 3 — a soft threshold and the pod's grace period, as the pod lives through them.
# The pod pushes memory.available under a soft threshold (3 s soft grace) and ignores SIGTERM:
#   - nothing happens for the soft grace period, then the pod's SIGTERM handler runs;
#   - the pod is killed only when its grace, min(termination-grace-period 6s,
#     max-pod-grace-period 60s), has passed — not before, and not much later.
# Then the same with max-pod-grace-period 4s and a pod asking for 30s: the cap wins.
# The pod records its own times (podhog: "cross", "sigterm", a 100 ms heartbeat until death).
. ./lib.sh

SOFT_GRACE=3
SLACK_MS=500      # the handler may run late on a starved vCPU (TCG on a busy host)
LATE_S=30         # kill no later than grace + this (TCG, a busy host)

configure() {     # configure MAX_POD_GRACE_S: soft threshold 250 MiB under what is free now
	local soft
	soft=$(mib_below_available 250)
	dropin soft <<EOF
# e2e: soft threshold with a short grace; hard threshold far away
[eviction-hard]
memory.available = 100Mi
[eviction-soft]
memory.available = ${soft}Mi
[eviction-soft-grace-period]
memory.available = ${SOFT_GRACE}s
[eviction]
max-pod-grace-period = ${1}s
pressure-transition-period = 5s
EOF
	SOFT=$((soft * MIB))
	note "soft threshold memory.available ${soft}Mi, soft grace ${SOFT_GRACE}s, max-pod-grace-period ${1}s"
}

# run_case UID NAME POD_GRACE_S EXPECTED_GRACE_S
run_case() {
	local uid=$1 name=$2 pod_grace=$3 grace=$4 t_cross t_term t_dead chosen
	j_mark
	pod_descriptor "$uid" namespace=e2e name="$name" priority=0 memory-request=16Mi \
		termination-grace-period="${pod_grace}s"
	pod_start "$uid" burstable -- --delay 300 --until-avail "$SOFT" --extra 32 --max 1024 --on-term ignore
	# Death as seen from outside the pod (pidfd): never earlier than the real one.
	podhog --watch "$PODHOG_PID" --out "$(pod_events "$uid")" &
	ok "$name pushed memory.available under the soft threshold" wait_until 60 pod_has_event "$uid" cross
	ok "journal: soft threshold met" j_wait 30 \
		"$(j_id $MSGID_THRESHOLD_MET) and .EVICTD_SIGNAL == \"memory.available\" and .EVICTD_THRESHOLD_KIND == \"soft\""
	ok "$name received SIGTERM (its handler ran)" wait_until $((SOFT_GRACE + 60)) pod_has_event "$uid" sigterm
	t_cross=$(pod_event "$uid" cross)
	t_term=$(pod_event "$uid" sigterm)
	if [ -n "$t_cross" ] && [ -n "$t_term" ]; then
		note "$name: SIGTERM $(ms "$t_cross" "$t_term") ms after crossing the soft threshold"
		ok "no SIGTERM before the soft grace period (${SOFT_GRACE}s) had passed" \
			test $(((t_term - t_cross) / 1000000)) -ge $((SOFT_GRACE * 1000 - SLACK_MS))
	fi
	chosen=$(j_select "$(j_pod $MSGID_POD_CHOSEN "$uid")" | head -n1)
	note "decision: $(jq -r .MESSAGE <<< "$chosen" 2>/dev/null)"
	ok "journal: e2e/$name chosen with EVICTD_GRACE_SEC=$grace" \
		test "$(jq -r .EVICTD_GRACE_SEC <<< "$chosen" 2>/dev/null)" = "$grace"
	ok "$name killed after its grace period" wait_until $((grace + LATE_S)) pod_has_event "$uid" died
	ok "$name's cgroup is empty" wait_until 10 pod_gone "$uid" burstable
	t_dead=$(pod_event "$uid" died)
	if [ -n "$t_term" ] && [ -n "$t_dead" ]; then
		note "$name: died $(ms "$t_term" "$t_dead") ms after SIGTERM, last heartbeat $(ms "$t_term" "$(pod_heartbeat "$uid")") ms (grace ${grace}s)"
		ok "not killed before the grace period (${grace}s) ended" \
			test $(((t_dead - t_term) / 1000000)) -ge $((grace * 1000 - SLACK_MS))
		ok "killed within ${LATE_S}s after the grace period ended" \
			test $(((t_dead - t_term) / 1000000)) -le $(((grace + LATE_S) * 1000))
	fi
	ok "journal: eviction of e2e/$name finished" j_wait 30 "$(j_pod $MSGID_EVICTION_FINISHED "$uid")"
	note "finished: $(j_select "$(j_pod $MSGID_EVICTION_FINISHED "$uid")" | head -n1 | jq -r .MESSAGE)"
}

configure 60
ok "evictd (re)started with the drop-in" evictd_restart || bail "evictd is not running"
run_case e2e00000000000000000000000000301 stubborn 6 6

# Let the node settle (soft threshold cleared) before the second case.
wait_until 30 bash -c "[ \$(podhog --available) -gt $((SOFT + 64 * MIB)) ]"
configure 4
ok "systemctl reload with max-pod-grace-period 4s" systemctl reload evictd.service
sleep 1
run_case e2e00000000000000000000000000302 capped 30 4
ok "evictd still active (running)" evictd_running
done_testing
