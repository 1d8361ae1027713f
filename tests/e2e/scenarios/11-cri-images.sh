#!/bin/bash
# Scenario 11 — issue 31 (a): a fast nodefs fill on a single-disk node with unused images.
# containerd's store is on the root filesystem with the kubelet's (one filesystem: nodefs and
# imagefs are the same). blob8, blob16 and blob24 are in the store and no container uses them;
# busybox runs every pod. writer (priority 1000, no ephemeral-storage request) fills its root
# filesystem with FILL MiB at once, NEED MiB past a hard nodefs.available threshold. The kubelet
# would first delete unused containers and images (its node-level reclaim) and evict only if a
# threshold were still met; evictd must do the same: unused images removed through the CRI (the
# fewest that cover the need, one journal entry per step), no pod evicted, nodefs.available back
# above the threshold, the image in use kept. The kubelet stand-in serves throughout (relist,
# container GC) with its own thresholds far below.
# Issue 34: containerd 1.6.20 names its sandbox image only in its verbose Status
# (info.config.sandboxImage), which evictd reads and logs; and a pod created after evictd's last
# listing (late, running blob8, the smallest unused image until then) keeps its image: evictd
# lists again before it removes, so blob8 survives and the next smallest goes instead.
# Then a second fill (from the node's side) takes the last unused blob image; containerd's sandbox
# image (localhost/e2e/pause, no container's image, not pinned by containerd 1.6.20) is then the
# only unused image left, journaled as kept; it is still in the store and a new pod sandbox starts.
. ./lib.sh
. ./lib-cri.sh

FILL=48
NEED=4
WRITER=$(pod_uid 11 1)
LATE=$(pod_uid 11 2)
AFTER=$(pod_uid 11 3)
FILL2=/var/lib/e2e-fill-11   # on the root filesystem, as /var/lib/kubelet
trap 'rm -f "$FILL2"; cri_cleanup' EXIT
cri_setup

before=$(blob_images | tr '\n' ' ')
note "unused images: $before"
ok "blob8, blob16 and blob24 are in the store, unused" \
	test "$before" = "localhost/e2e/blob16:latest localhost/e2e/blob24:latest localhost/e2e/blob8:latest "
ok "the sandbox image $PAUSE is in the store, an image of its own (not busybox's)" \
	test "$(ctr -n k8s.io images ls | awk -v p="$PAUSE" -v b="$BUSYBOX" '$1 == p || $1 == b { print $3 }' | sort -u | wc -l)" = 2
cri_node_config
cri_serve "${KUBELET_HARD[@]}" ||
	bail "the kubelet stand-in did not start"
CTLDIR=$(ctl_dir writer)
ok "pod e2e/writer created through the CRI (priority 1000)" cri_pod e2e/writer "$WRITER" --priority 1000 \
	--host-dir "$CTLDIR:/ctl" --container "main=$(writer_script /data 0 $FILL)" || bail "writer did not start"
ok "writer's container running" wait_until 30 ctr_running "$WRITER" main

avail=$(fs_avail /var/lib/kubelet)
thr=$((avail - (FILL - NEED) * MIB))
note "nodefs.available $(mib "$avail") MiB; hard threshold ${thr} bytes ($(mib "$thr") MiB): a ${FILL} MiB fill goes ${NEED} MiB past it"
# a removal's entry (the images kept, the sandbox image among them, share its MESSAGE_ID)
removal="$(j_id "$MSGID_NODE_RECLAIM_IMAGES") and has(\"EVICTD_FREED_BYTES\")"
cri_evictd cri-images nodefs.available "$thr" "a nodefs.available threshold ${NEED} MiB short of what a ${FILL} MiB fill leaves"
note "runtime: $(j_select "$(j_id "$MSGID_RUNTIME_STATUS")" | head -n1 | jq -r .MESSAGE)"
sleep 3   # the images are older than imageMinimumGCAge for evictd now
sandbox='(.MESSAGE | startswith("Container runtime'"'"'s sandbox image: '"$PAUSE"'; never removed"))'
ok "journal: containerd's sandbox image read from its verbose Status (info.config.sandboxImage)" j_wait 10 "$sandbox"
# evictd has listed at its start and lists again only under disk pressure: this pod is not in its listing
ok "pod e2e/late created after evictd's last listing, its container running blob8" \
	cri_pod e2e/late "$LATE" --priority 2000 --container "main=exec sleep 100000" --image main=localhost/e2e/blob8:latest
ok "late's container running" wait_until 30 ctr_running "$LATE" main

# ---- the fill ---------------------------------------------------------------------------------------
touch "$CTLDIR/go"
ok "writer wrote ${FILL} MiB into its root filesystem" wait_until 60 test -e "$CTLDIR/done"
ok "journal: node-level reclaim removed images for nodefs.available" j_wait 60 "$removal"
rec=$(j_select "$removal")
note "$(jq -r .MESSAGE <<< "$rec" | head -n3)"
first=$(head -n1 <<< "$rec")
f() { jq -r --arg f "$1" '.[$f] // empty' <<< "$first"; }
ok "EVICTD_SIGNAL is nodefs.available" test "$(f EVICTD_SIGNAL)" = nodefs.available
ok "one step removed one image: the smallest unused one covers the need (EVICTD_IMAGES_COUNT=$(f EVICTD_IMAGES_COUNT))" \
	test "$(f EVICTD_IMAGES_COUNT)" = 1 -a "$(wc -l <<< "$rec")" = 1
ok "EVICTD_IMAGES names a blob image ($(f EVICTD_IMAGES))" matches "$(f EVICTD_IMAGES)" 'localhost/e2e/blob[0-9]+'
ok "EVICTD_FREED_BYTES $(f EVICTD_FREED_BYTES) ≥ the need" test "$(f EVICTD_FREED_BYTES)" -ge $((NEED * MIB))
ok "EVICTD_OBSERVED $(f EVICTD_OBSERVED) was under the threshold" test "$(f EVICTD_OBSERVED)" -lt "$thr"
ok "EVICTD_OBSERVED_AFTER $(f EVICTD_OBSERVED_AFTER) is over it" test "$(f EVICTD_OBSERVED_AFTER)" -gt "$thr"
after=$(blob_images | tr '\n' ' ')
note "unused images left: $after"
ok "exactly one blob image is gone (blob8 is listed, now in use)" test "$(wc -w <<< "$after")" = 2
ok "it is the one the journal names" not grep -qF "$(f EVICTD_IMAGES)" <<< "$after"
ok "busybox, in use, is still there" cri_has_image "$BUSYBOX"
ok "the sandbox image, unused, is still there" cri_has_image "$PAUSE"
ok "blob8, used by a container created after evictd's last listing, is still there (listed again before removing)" \
	cri_has_image localhost/e2e/blob8:latest
ok "...and the journal does not name it" not grep -qF blob8 <<< "$(f EVICTD_IMAGES)"
ok "nodefs.available is back above the threshold" wait_until 10 fs_above /var/lib/kubelet "$thr"
note "nodefs.available now $(mib "$(fs_avail /var/lib/kubelet)") MiB"
cleared="$(j_id "$MSGID_THRESHOLD_CLEARED") and .EVICTD_SIGNAL == \"nodefs.available\""
ok "journal: the nodefs.available threshold cleared" j_wait 30 "$cleared"
sleep 3
ok "no pod was chosen for eviction" not j_has "$(j_id "$MSGID_POD_CHOSEN") or $(j_id "$MSGID_EVICTION_STARTED")"
ok "writer still running" ctr_running "$WRITER" main

# ---- a reclaim that takes every other unused image: the sandbox image stays ------------------------
# one blob image is left unused (blob8 runs late's container, busybox writer's); a fill from the
# node's side NEED MiB past the threshold, which it covers
last=$(blob_images | grep -vxF localhost/e2e/blob8:latest)
note "the last unused blob image: $last"
j_mark
avail=$(fs_avail /var/lib/kubelet)
fill=$(( (avail - thr + MIB - 1) / MIB + NEED ))
note "second fill: ${fill} MiB from the node's side (nodefs.available $(mib "$avail") MiB)"
ok "the node's own ${fill} MiB written" dd if=/dev/zero of="$FILL2" bs=1M count="$fill" conv=fsync status=none
ok "journal: node-level reclaim removed images again" j_wait 60 "$removal"
rec=$(j_select "$removal")
note "$(jq -r .MESSAGE <<< "$rec" | head -n3)"
ok "the removal names the last unused blob image, $last" \
	test "$(jq -r '.EVICTD_IMAGES // empty' <<< "$rec")" = "$last"
ok "...and not the sandbox image" not grep -qF "$PAUSE" <<< "$(jq -r '.EVICTD_IMAGES // empty' <<< "$rec")"
ok "no unused blob image is left (blob8 still runs late's container)" \
	test "$(blob_images | tr '\n' ' ')" = "localhost/e2e/blob8:latest "
ok "the sandbox image survives the reclaim that took every other unused image" cri_has_image "$PAUSE"
ok "journal: the sandbox image named as kept (the runtime's sandbox image)" j_has \
	"(.MESSAGE | contains(\"may not be removed (yet)\")) and (.MESSAGE | contains(\"$PAUSE\")) and (.MESSAGE | contains(\"the runtime's sandbox image\"))"
ok "nodefs.available is back above the threshold" wait_until 10 fs_above /var/lib/kubelet "$thr"
rm -f "$FILL2"
ok "a new pod sandbox starts from the kept sandbox image (nothing to pull: no registry)" \
	cri_pod e2e/after "$AFTER" --priority 0 --container "main=exec sleep 100000"
ok "its container running" wait_until 30 ctr_running "$AFTER" main
ok "still no pod chosen for eviction" not j_has "$(j_id "$MSGID_POD_CHOSEN") or $(j_id "$MSGID_EVICTION_STARTED")"
cri_done
