#!/bin/bash
# Scenario 12 — issue 31 (b): the same fast nodefs fill on a single-disk node, with no unused
# image (the blob images are removed first, as an earlier image GC would have) and one writer pod.
#   writer  priority 1000, no ephemeral-storage request: writes FIRST MiB into its root filesystem
#           (its writable layer, which only the runtime can attribute to it), then — once the
#           runtime's ContainerStats show them — REST MiB more, NEED MiB past the threshold
#   quiet   priority 0, ephemeral-storage request 64Mi, writes nothing: ranked by priority alone it
#           would go first; ranked as the kubelet ranks (exceeding the request first, then
#           priority, then usage) it never does
# Node-level reclaim has nothing to remove (busybox is in use, no dead container): writer must be
# evicted, by its writable layer, and nothing else — also while the kubelet stand-in holds its
# dead container (and so its writable layer) until its container GC, up to a minute later.
# Then nodefs.available is back above the threshold and no image was removed.
. ./lib.sh
. ./lib-cri.sh

FIRST=40
REST=16
NEED=8
WRITER=$(pod_uid 12 1)
QUIET=$(pod_uid 12 2)
trap cri_cleanup EXIT
cri_setup

cri_no_unused_images
images_before=$(ctr -n k8s.io images ls -q | sort | tr '\n' ' ')
cri_node_config
CTLDIR=$(ctl_dir writer)
ok "pod e2e/quiet created (priority 0, ephemeral-storage request 64Mi)" cri_pod e2e/quiet "$QUIET" \
	--priority 0 --storage-request 64Mi --container 'main=exec sleep 2147483647' || bail "quiet did not start"
ok "pod e2e/writer created (priority 1000, no request)" cri_pod e2e/writer "$WRITER" --priority 1000 \
	--host-dir "$CTLDIR:/ctl" --container "main=$(writer_script /data $FIRST $REST)" || bail "writer did not start"
ok "writer wrote its first ${FIRST} MiB" wait_until 60 test -e "$CTLDIR/wrote"
st=$(kubelet wait-stats "$WRITER" main "${FIRST}Mi" --within 30)
ok "ContainerStats: writer's writable layer ≥ ${FIRST} MiB" test -n "$st"
note "writer: $st"

avail=$(fs_avail /var/lib/kubelet)
thr=$((avail - (REST - NEED) * MIB))
note "nodefs.available $(mib "$avail") MiB; hard threshold $(mib "$thr") MiB: ${REST} MiB more go ${NEED} MiB past it"
cri_evictd cri-writer nodefs.available "$thr" "a nodefs.available threshold ${NEED} MiB short of what writer's last ${REST} MiB leave"
sleep 3   # past imageMinimumGCAge: had there been an unused image, it could go

# ---- the fill ---------------------------------------------------------------------------------------
# The kubelet stand-in starts now: its first container GC comes 60 s later, so writer's dead
# container stays there for most of the kubelet's GC period after the eviction.
cri_serve "${KUBELET_HARD[@]}" ||
	bail "the kubelet stand-in did not start"
touch "$CTLDIR/go"
cri_first_chosen nodefs.available "e2e/writer" "$WRITER" "$FIRST"
ok "no image was removed for it (none unused but the sandbox image, kept)" not j_has "$(j_id "$MSGID_NODE_RECLAIM_IMAGES") and has(\"EVICTD_FREED_BYTES\")"
ok "writer's processes are gone" wait_until 30 not ctr_running "$WRITER" main
ok "kubelet: writer terminated, its pod cgroup removed" \
	wait_until 30 kubelet_said "pod e2e/writer: pod cgroup .* removed"
# Its writable layer is freed only when the kubelet removes the dead container (container GC).
ok "kubelet: container GC removed writer's dead container" \
	wait_until 90 kubelet_said "gc: RemoveContainer .* main \\(pod e2e/writer,"
gc_at=$(kubelet_when "gc: RemoveContainer .* main \\(pod e2e/writer,")
ok "nodefs.available is back above the threshold" wait_until 15 fs_above /var/lib/kubelet "$thr"
note "nodefs.available now $(mib "$(fs_avail /var/lib/kubelet)") MiB (threshold $(mib "$thr") MiB)"
pending=$(j_select "$(j_id "$MSGID_NODE_RECLAIM_PENDING")" | head -n1)
[ -n "$pending" ] && note "pending: $(jq -r .MESSAGE <<< "$pending")"
cleared="$(j_id "$MSGID_THRESHOLD_CLEARED") and .EVICTD_SIGNAL == \"nodefs.available\""
ok "journal: the nodefs.available threshold cleared" j_wait 30 "$cleared"
sleep 3
evicted_at=$(kubelet_when "pod e2e/writer .*terminating")
note "writer's dead container stayed $(awk -v a="$evicted_at" -v b="$gc_at" 'BEGIN { printf "%.0f", b - a }') s before the container GC removed it; pods chosen in the scenario: $(j_select "$(j_id "$MSGID_POD_CHOSEN")" | jq -r .EVICTD_POD | tr '\n' ' ')"
ok "exactly one pod chosen in the whole scenario, also while writer's layer was pending" \
	test "$(j_select "$(j_id "$MSGID_POD_CHOSEN")" | wc -l)" = 1
ok "e2e/quiet was never chosen" not j_has "$(j_pod "$MSGID_POD_CHOSEN" "$QUIET")"
ok "e2e/quiet still running" ctr_running "$QUIET" main
ok "the images are the ones there before (busybox in use kept)" \
	test "$(ctr -n k8s.io images ls -q | sort | tr '\n' ' ')" = "$images_before"
cri_done
