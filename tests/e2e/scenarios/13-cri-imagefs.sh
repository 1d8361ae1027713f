#!/bin/bash
# Scenario 13 — issue 31 (c): a dedicated image filesystem. The VM's second disk
# (/dev/disk/by-id/virtio-e2e-imagefs, blank) is formatted and mounted at /var/lib/containerd
# before containerd starts, so the runtime's images and containers' writable layers live there
# while the kubelet's root and the pod logs stay on the root disk (the kubelet's "dedicated
# imagefs" layout). busybox is imported into the empty store with ctr. Three pods:
#   big     priority 500, no request: BIG MiB into its root filesystem
#   small   priority 500, no request: SMALL MiB into its root filesystem
#   quiet   priority 0, ephemeral-storage request 16Mi: nothing
# Once ContainerStats show both writers' layers, big writes 8 MiB more, NEED MiB past a hard
# imagefs.available threshold. The kubelet ranks imagefs pressure on this layout by the pods'
# writable layers (exceeding requests first, then priority, then usage): big goes first, by its
# writable layer — ranked by priority alone, quiet would. Its dead container holds its layer
# until the kubelet stand-in's container GC: nothing else is evicted meanwhile, and imagefs is
# back above the threshold after it.
. ./lib.sh
. ./lib-cri.sh

BIG=64
SMALL=24
NEED=4
DISK=/dev/disk/by-id/virtio-e2e-imagefs
STORE=/var/lib/containerd
# UIDs in the opposite order of the usage: a ranking that fell back to a tie-break would take small
QUIETP=$(pod_uid 13 1)
SMALLP=$(pod_uid 13 2)
BIGP=$(pod_uid 13 3)
cleanup() {
	cri_cleanup
	# evictd holds the image filesystem open (statvfs by descriptor) in its own mount namespace,
	# which makes the disk busy here too; the removed pods' shims may still be exiting
	systemctl stop evictd.service
	mountpoint -q "$STORE" && ! wait_until 20 umount "$STORE" && echo "# $STORE still busy: left mounted"
}
trap cleanup EXIT
[ -b "$DISK" ] || skip_all "no second disk $DISK (run.sh gives the VM one)"

# ---- containerd's store on its own disk -------------------------------------------------------------
systemctl stop containerd.service 2>/dev/null
ok "the second disk formatted (ext4)" mkfs.ext4 -q -F -L e2e-imagefs "$DISK" || bail "mkfs failed"
ok "mounted at $STORE (the root disk's store stays beneath, unused)" mount "$DISK" "$STORE" || bail "mount failed"
cri_setup
ok "busybox imported into the empty store with ctr" cri_has_image "$BUSYBOX"
ok "no other image there" test -z "$(blob_images)"
ok "$STORE and /var/lib/kubelet are on different devices" \
	test "$(stat -c %d "$STORE")" != "$(stat -c %d /var/lib/kubelet)"
fsi=$(kubelet imagefs-info)
note "ImageFsInfo: $fsi"
ok "ImageFsInfo's mountpoint is on the second disk" test "$(stat -c %d "$(jq -r .mountpoint <<< "$fsi")")" = "$(stat -c %d "$STORE")"

cri_node_config 50Mi
CTLDIR=$(ctl_dir big)
ok "pod e2e/quiet created (priority 0, ephemeral-storage request 16Mi)" cri_pod e2e/quiet "$QUIETP" \
	--priority 0 --storage-request 16Mi --container 'main=exec sleep 2147483647' || bail "quiet did not start"
ok "pod e2e/small created (priority 500)" cri_pod e2e/small "$SMALLP" --priority 500 \
	--host-dir "$(ctl_dir small):/ctl" --container "main=$(writer_script /data $SMALL 0)" || bail "small did not start"
ok "pod e2e/big created (priority 500)" cri_pod e2e/big "$BIGP" --priority 500 \
	--host-dir "$CTLDIR:/ctl" --container "main=$(writer_script /data $BIG 8)" || bail "big did not start"
ok "ContainerStats: small's writable layer ≥ ${SMALL} MiB" kubelet wait-stats "$SMALLP" main "${SMALL}Mi" --within 60
ok "ContainerStats: big's writable layer ≥ ${BIG} MiB" kubelet wait-stats "$BIGP" main "${BIG}Mi" --within 60
note "big: $(kubelet stats "$BIGP")"
note "small: $(kubelet stats "$SMALLP")"

avail=$(fs_avail "$STORE")
thr=$((avail - (8 - NEED) * MIB))
note "imagefs.available $(mib "$avail") MiB of $(mib "$(fs_size "$STORE")") MiB; hard threshold $(mib "$thr") MiB: big's last 8 MiB go ${NEED} MiB past it"
cri_evictd cri-imagefs imagefs.available "$thr" "an imagefs.available threshold ${NEED} MiB short of what big's last 8 MiB leave"
layout=$(j_select '.MESSAGE | test("disk layout")' | head -n1 | jq -r .MESSAGE)
note "$layout"
ok "evictd: the layout is a dedicated image filesystem" matches "$layout" 'dedicated'

# ---- the fill ---------------------------------------------------------------------------------------
cri_serve "${KUBELET_HARD[@]}" ||
	bail "the kubelet stand-in did not start"
touch "$CTLDIR/go"
cri_first_chosen imagefs.available "e2e/big, the bigger writer" "$BIGP" "$BIG"
ok "big's processes are gone" wait_until 30 not ctr_running "$BIGP" main
ok "kubelet: container GC removed big's dead container" \
	wait_until 90 kubelet_said "gc: RemoveContainer .* main \\(pod e2e/big,"
evicted_at=$(kubelet_when "pod e2e/big .*terminating")
gc_at=$(kubelet_when "gc: RemoveContainer .* main \\(pod e2e/big,")
note "big's dead container stayed $(awk -v a="$evicted_at" -v b="$gc_at" 'BEGIN { printf "%.0f", b - a }') s before the container GC removed it"
ok "imagefs.available is back above the threshold" wait_until 15 fs_above "$STORE" "$thr"
note "imagefs.available now $(mib "$(fs_avail "$STORE")") MiB (threshold $(mib "$thr") MiB)"
cleared="$(j_id "$MSGID_THRESHOLD_CLEARED") and .EVICTD_SIGNAL == \"imagefs.available\""
ok "journal: the imagefs.available threshold cleared" j_wait 30 "$cleared"
sleep 3
note "pods chosen in the scenario: $(j_select "$(j_id "$MSGID_POD_CHOSEN")" | jq -r .EVICTD_POD | tr '\n' ' ')"
ok "exactly one pod chosen in the whole scenario" test "$(j_select "$(j_id "$MSGID_POD_CHOSEN")" | wc -l)" = 1
ok "e2e/small still running" ctr_running "$SMALLP" main
ok "e2e/quiet still running" ctr_running "$QUIETP" main
ok "busybox, in use, still there" cri_has_image "$BUSYBOX"
cri_done
