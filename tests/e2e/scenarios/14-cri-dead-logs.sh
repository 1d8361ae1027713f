#!/bin/bash
# Scenario 14 — issue 31 (d): dead containers' logs cover the need; no eviction while the
# kubelet's reclaim is pending. Single-disk node, no unused image.
#   report  a finished job (restartPolicy Never, priority 0): printed LOG MiB to stdout and exited;
#           its dead container keeps /var/log/pods/e2e_report_<uid>/main/0.log. Then the API
#           deletes the pod (a Job's TTL, a user): the kubelet removes a deleted pod's containers
#           and logs at its next container GC — not before (its GC runs every minute)
#   filler  priority 1000, no request: writes FILL MiB into an emptyDir, NEED MiB past a hard
#           nodefs.available threshold
# The kubelet would not evict for this (its node-level reclaim removes dead containers first);
# evictd must count the dead container's log as pending node-level reclaim (its journal entry)
# and evict nobody; when the kubelet stand-in's container GC removes the container and its log,
# nodefs.available is back above the threshold, still with no pod evicted.
# The stand-in is started after the job has finished (a kubelet that restarted finds it so), so
# its first container GC comes a known 60 s later; the fill comes 15 s into that.
. ./lib.sh
. ./lib-cri.sh

LOG=32
FILL=24
NEED=12
REPORT=$(pod_uid 14 1)
FILLER=$(pod_uid 14 2)
trap cri_cleanup EXIT
cri_setup

cri_no_unused_images
cri_node_config

# ---- the finished job ---------------------------------------------------------------------------------
# shellcheck disable=SC2016   # expanded by the container's shell
# 8000-byte lines: the shim's CRI logger costs per line (1000-byte ones went at 1 MiB/s here)
job='line=$(head -c 8000 /dev/zero | tr "\000" x); yes "$line" | head -c BYTES; exit 0'
ok "pod e2e/report created (restartPolicy Never)" cri_pod e2e/report "$REPORT" --restart Never --priority 0 \
	--container "main=${job/BYTES/$((LOG * MIB))}" || bail "report did not start"
ok "report's container exited" kubelet wait "$REPORT" main exited --within 120 >/dev/null
RLOG=/var/log/pods/e2e_report_$REPORT/main/0.log
ok "its log $RLOG holds ≥ ${LOG} MiB" test "$(stat -c %s "$RLOG")" -ge $((LOG * MIB))
note "report's log: $(mib "$(stat -c %s "$RLOG")") MiB"
CTLDIR=$(ctl_dir filler)
ok "pod e2e/filler created (priority 1000, an emptyDir)" cri_pod e2e/filler "$FILLER" --priority 1000 \
	--empty-dir cache:/cache --host-dir "$CTLDIR:/ctl" --container "main=$(writer_script /cache 0 $FILL)" ||
	bail "filler did not start"
ok "filler's container running" wait_until 30 ctr_running "$FILLER" main

avail=$(fs_avail /var/lib/kubelet)
thr=$((avail - (FILL - NEED) * MIB))
note "nodefs.available $(mib "$avail") MiB; hard threshold $(mib "$thr") MiB: filler's ${FILL} MiB go ${NEED} MiB past it"
cri_evictd cri-dead-logs nodefs.available "$thr" "a nodefs.available threshold ${NEED} MiB short of what filler's ${FILL} MiB leave"

# ---- the kubelet: the job terminated, then deleted from the API --------------------------------------
cri_serve "${KUBELET_HARD[@]}" ||
	bail "the kubelet stand-in did not start"
served=$(kubelet_when 'serving')
ok "kubelet: report terminated (completed): its sandbox stopped" \
	wait_until 30 kubelet_said "pod e2e/report .*terminating \\(completed\\)"
ok "the API deletes report" kubelet delete "$REPORT"
ok "kubelet: report deleted, its dead container left for the container GC" \
	wait_until 30 kubelet_said "pod e2e/report: deleted from the API"
ok "its dead container and log are still there" test -s "$RLOG"
until awk -v s="$served" -v n="$(mono_ns)" 'BEGIN { exit !(n / 1e9 >= s + 15) }'; do sleep 0.5; done

# ---- the fill ---------------------------------------------------------------------------------------
touch "$CTLDIR/go"
ok "filler wrote ${FILL} MiB into its emptyDir" wait_until 60 test -e "$CTLDIR/done"
met="$(j_id "$MSGID_THRESHOLD_MET") and .EVICTD_SIGNAL == \"nodefs.available\""
ok "journal: the nodefs.available threshold was met" j_wait 30 "$met"
ok "journal: node-level reclaim pending covers it" j_wait 60 "$(j_id "$MSGID_NODE_RECLAIM_PENDING")"
pending=$(j_select "$(j_id "$MSGID_NODE_RECLAIM_PENDING")" | head -n1)
note "$(jq -r .MESSAGE <<< "$pending")"
p() { jq -r --arg f "$1" '.[$f] // empty' <<< "$pending"; }
ok "for nodefs.available" test "$(p EVICTD_SIGNAL)" = nodefs.available
ok "one dead container (EVICTD_CONTAINERS_COUNT=$(p EVICTD_CONTAINERS_COUNT))" test "$(p EVICTD_CONTAINERS_COUNT)" = 1
ok "EVICTD_PENDING $(p EVICTD_PENDING) covers report's log" test "$(p EVICTD_PENDING)" -ge $((LOG * MIB))
ok "no image removed (none unused but the sandbox image, kept)" not j_has "$(j_id "$MSGID_NODE_RECLAIM_IMAGES") and has(\"EVICTD_FREED_BYTES\")"
ok "kubelet: container GC removed report's container and its log" \
	wait_until 75 kubelet_said "gc: RemoveContainer .* main \\(pod e2e/report,"
note "$(grep -m1 'gc: RemoveContainer .* (pod e2e/report,' "$KUBELET_LOG")"
crossed=$(j_time "$met")
gc_at=$(kubelet_when "gc: RemoveContainer .* main \\(pod e2e/report,")
note "the dead container's log was pending $(awk -v a="$crossed" -v b="$gc_at" 'BEGIN { printf "%.0f", b - a / 1e9 }') s"
ok "no pod was chosen while it was pending" not j_has "$(j_id "$MSGID_POD_CHOSEN")"
ok "the log is gone" not test -e "$RLOG"
ok "kubelet: report's pod log directory removed" wait_until 10 kubelet_said "gc: pod log directory .*e2e_report_"
ok "nodefs.available is back above the threshold" wait_until 15 fs_above /var/lib/kubelet "$thr"
note "nodefs.available now $(mib "$(fs_avail /var/lib/kubelet)") MiB (threshold $(mib "$thr") MiB)"
cleared="$(j_id "$MSGID_THRESHOLD_CLEARED") and .EVICTD_SIGNAL == \"nodefs.available\""
ok "journal: the nodefs.available threshold cleared" j_wait 30 "$cleared"
sleep 3
ok "no pod chosen in the whole scenario" not j_has "$(j_id "$MSGID_POD_CHOSEN") or $(j_id "$MSGID_EVICTION_STARTED")"
ok "filler still running" ctr_running "$FILLER" main
cri_done
