#!/bin/bash
# Scenario 2 — real memory pressure, real pods. Three pods in the kubelet's layout:
#   hog       priority 1000, request 64Mi, grows until memory.available is under the hard
#             threshold (then 64 MiB more): exceeds its request
#   low       priority 0, request 256Mi, uses 24 MiB: within its request
#   critical  priority-class system-node-critical, request 8Mi, uses 48 MiB: exceeds its request
# Kubelet ranking: pods exceeding their requests go first, then by priority, and critical pods
# are never evicted — so "hog" must be evicted first (although "low" has the lower priority),
# "critical" must survive although it exceeds its request, and evicting "hog" alone brings the
# node back, so "low" survives too. Then MemoryPressure clears after the transition period.
. ./lib.sh

TRANSITION=10
HOG=e2e00000000000000000000000000201
LOW=e2e00000000000000000000000000202
CRIT=e2e00000000000000000000000000203

pod_descriptor $LOW namespace=e2e name=low priority=0 memory-request=256Mi termination-grace-period=30s
pod_descriptor $CRIT namespace=kube-system name=critical priority-class=system-node-critical \
	memory-request=8Mi termination-grace-period=30s
ok "pod e2e/low running (24 MiB)" pod_start $LOW burstable -- --alloc 24
ok "pod kube-system/critical running (48 MiB)" pod_start $CRIT burstable -- --alloc 48

thr=$(mib_below_available 300)
note "memory.available $((($(mem_available)) / MIB)) MiB; hard threshold set to ${thr}Mi"
dropin pressure <<EOF
# e2e: a hard threshold 300 MiB under what this VM has free, and a short transition period
[eviction-hard]
memory.available = ${thr}Mi
[eviction]
pressure-transition-period = ${TRANSITION}s
EOF
ok "evictd (re)started with the drop-in" evictd_restart || bail "evictd is not running"
sleep 2   # a scan or two with all pods in place, so the hog is the only thing that changes
j_mark

pod_descriptor $HOG namespace=e2e name=hog priority=1000 memory-request=64Mi termination-grace-period=30s
pod_start $HOG burstable -- --until-avail $((thr * MIB)) --extra 64 --max 1024
ok "hog pushed memory.available under ${thr}Mi" wait_until 60 pod_has_event $HOG cross
note "hog: $(grep -E '^(cross|held)' "$(pod_events $HOG)" | cut -d' ' -f1,4- | tr '\n' ' ')"

ok "journal: hard threshold met for memory.available" \
	j_wait 30 "$(j_id $MSGID_THRESHOLD_MET) and .EVICTD_SIGNAL == \"memory.available\" and .EVICTD_THRESHOLD_KIND == \"hard\""
ok "journal: MemoryPressure became True" \
	j_wait 30 "$(j_id $MSGID_CONDITION_CHANGED) and .EVICTD_CONDITION == \"MemoryPressure\" and .EVICTD_CONDITION_STATUS == \"True\""
ok "journal: a pod was chosen for eviction" j_wait 60 "$(j_id $MSGID_POD_CHOSEN)"
first=$(j_select "$(j_id $MSGID_POD_CHOSEN)" | head -n1)
note "first eviction: $(jq -r .MESSAGE <<< "$first")"
ok "the first pod evicted is e2e/hog (exceeds its request, ranked first)" \
	test "$(jq -r .EVICTD_POD_UID <<< "$first")" = $HOG

# Every field DESIGN §5 promises on an eviction decision, with values the scenario can predict.
for f in EVICTD_POD EVICTD_POD_UID EVICTD_NAMESPACE EVICTD_PRIORITY EVICTD_SIGNAL EVICTD_OBSERVED \
	EVICTD_THRESHOLD EVICTD_USAGE_BYTES EVICTD_REQUEST_BYTES EVICTD_RANK EVICTD_GRACE_SEC EVICTD_DRY_RUN; do
	v=$(jq -r --arg f $f '.[$f] // empty' <<< "$first")
	ok "eviction entry has $f${v:+=$v}" test -n "$v"
done
field() { jq -r --arg f "$1" '.[$f] // empty' <<< "$first"; }
ok "EVICTD_POD is e2e/hog" test "$(field EVICTD_POD)" = e2e/hog
ok "EVICTD_NAMESPACE is e2e" test "$(field EVICTD_NAMESPACE)" = e2e
ok "EVICTD_PRIORITY is 1000" test "$(field EVICTD_PRIORITY)" = 1000
ok "EVICTD_SIGNAL is memory.available" test "$(field EVICTD_SIGNAL)" = memory.available
ok "EVICTD_THRESHOLD is ${thr}Mi in bytes" test "$(field EVICTD_THRESHOLD)" = $((thr * MIB))
ok "EVICTD_OBSERVED is under the threshold" test "$(field EVICTD_OBSERVED)" -lt $((thr * MIB))
ok "EVICTD_REQUEST_BYTES is 64Mi" test "$(field EVICTD_REQUEST_BYTES)" = $((64 * MIB))
ok "EVICTD_USAGE_BYTES exceeds the request" test "$(field EVICTD_USAGE_BYTES)" -gt $((64 * MIB))
ok "EVICTD_RANK is 1" test "$(field EVICTD_RANK)" = 1
ok "EVICTD_GRACE_SEC is 0 (hard threshold: no grace)" test "$(field EVICTD_GRACE_SEC)" = 0
ok "EVICTD_DRY_RUN is 0" test "$(field EVICTD_DRY_RUN)" = 0

ok "the hog pod's cgroup is empty (evicted)" wait_until 30 pod_gone $HOG burstable
ok "journal: eviction of e2e/hog started" j_wait 10 "$(j_pod $MSGID_EVICTION_STARTED $HOG)"
ok "journal: eviction of e2e/hog finished" j_wait 30 "$(j_pod $MSGID_EVICTION_FINISHED $HOG)"
note "finished: $(j_select "$(j_pod $MSGID_EVICTION_FINISHED $HOG)" | head -n1 | jq -r .MESSAGE)"
t_evict=$(j_time "$(j_pod $MSGID_EVICTION_FINISHED $HOG)")

# ---- recovery ---------------------------------------------------------------------------------
cleared="$(j_id $MSGID_CONDITION_CHANGED) and .EVICTD_CONDITION == \"MemoryPressure\" and .EVICTD_CONDITION_STATUS == \"False\""
ok "journal: MemoryPressure cleared" j_wait $((TRANSITION + 60)) "$cleared"
t_clear=$(j_time "$cleared")
if [ -n "$t_evict" ] && [ -n "$t_clear" ]; then
	note "MemoryPressure cleared $(ms "$t_evict" "$t_clear") ms after the eviction finished (transition period ${TRANSITION}s)"
	ok "MemoryPressure held for the transition period after the eviction" \
		test $(( (${t_clear%.*} - ${t_evict%.*}) / 1000000 )) -ge $(( TRANSITION * 1000 - 1000 ))
fi
ok "status.json: no condition left" wait_until 10 lacks_condition MemoryPressure
ok "STATUS= says no pressure" matches "$(unit_prop StatusText)" 'no pressure'
ok "status.json: the decision for e2e/hog is recorded" \
	bash -c "jq -e '[.decisions[] | select(.uid == \"$HOG\")] | length > 0' /run/evictd/status.json >/dev/null"

ok "kube-system/critical survived" pod_populated $CRIT burstable
ok "kube-system/critical was never chosen" not j_has "$(j_pod $MSGID_POD_CHOSEN $CRIT)"
ok "e2e/low survived (within its request; evicting hog was enough)" pod_populated $LOW burstable
ok "e2e/low was never chosen" not j_has "$(j_pod $MSGID_POD_CHOSEN $LOW)"
ok "evictd still active (running)" evictd_running
j_show 15
done_testing
