#!/bin/bash
# Scenario 10 — the CRI node itself: what the CRI scenarios (11-14) take for granted, as 00-node
# does for the others. containerd and runc from Debian answer the CRI (runtime.v1) on their
# socket; a pod made by the kubelet stand-in (tests/e2e/cri/kubelet.py) through RunPodSandbox,
# CreateContainer and StartContainer lands where the kubelet's pods land: its containers in
# cri-containerd-<id>.scope units under kubepods.slice/kubepods-burstable.slice/
# kubepods-burstable-pod<uid>.slice (SystemdCgroup), the kubelet's labels on sandbox and
# containers, CRI-format logs in /var/log/pods/<ns>_<name>_<uid>/<container>/0.log, the
# writable layer counted by ContainerStats, the images ImageFsInfo reports, the images made with
# the VM image in the store (none from a registry). evictd --once sees the pod with its descriptor's name and priority. Killed as evictd
# kills (cgroup.kill), the pod is torn down by the stand-in's relist: StopPodSandbox, pod cgroup
# gone, its dead containers and logs left for the container GC.
. ./lib.sh
. ./lib-cri.sh

trap cri_cleanup EXIT
T0=$(date +%s.%N)
cri_setup
note "containerd up and busybox imported in $(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')s"

v=$CRI_VERSION
note "runtime: $v"
ok "the runtime answers runtime.v1 Version: containerd, API v1" \
	jqt '.runtime_name == "containerd" and .runtime_api_version == "v1"' <<< "$v"
ok "containerd runs under systemd with its unit (Delegate, KillMode=process)" \
	test "$(systemctl show -p Delegate --value containerd.service)/$(systemctl show -p KillMode --value containerd.service)" = yes/process

images=$(kubelet images)
tags=$(jq -r '.tags[]' <<< "$images")
note "images: $(tr '\n' ' ' <<< "$tags")"
ok "the CRI lists busybox" grep -qxF "$BUSYBOX" <<< "$tags"
ok "no image comes from a registry (every tag is localhost/)" not grep -qv '^localhost/' <<< "$tags"
ok "blob8, blob16 and blob24 are in the store (imported when the VM image was built)" \
	test "$(grep '^localhost/e2e/blob' <<< "$tags" | sort | tr '\n' ' ')" = "localhost/e2e/blob16:latest localhost/e2e/blob24:latest localhost/e2e/blob8:latest "
for n in 8 16 24; do
	sz=$(jq -r --arg t "localhost/e2e/blob$n:latest" 'select(any(.tags[]; . == $t)) | .size' <<< "$images")
	ok "blob$n: Image.size $sz covers its ${n} MiB layer" test "${sz:-0}" -ge $((n * MIB))
done

# ---- a pod as the kubelet makes it ------------------------------------------------------------------
UID1=$(pod_uid 10 1)
CG1=$(pod_cg "${UID1//-/_}" burstable)
ok "pod e2e/probe created through the CRI" cri_pod e2e/probe "$UID1" --qos burstable --priority 100 \
	--memory-request 32Mi --label app=probe \
	--container 'main=echo hello from main; dd if=/dev/zero of=/data.bin bs=1M count=8 2>/dev/null; sync; exec sleep 2147483647' ||
	bail "kubelet run-pod failed"
out=$(cat "$STATE/pod-$UID1.json")
note "pod: $out"
SB=$(jq -r .sandbox <<< "$out")
CID=$(jq -r .containers.main <<< "$out")
ok "the pod's slice is kubepods-burstable-pod<uid with _>.slice" test -d "$CG1"
ok "the container runs in cri-containerd-<id>.scope under it" wait_until 10 grep -q . "$CG1/cri-containerd-$CID.scope/cgroup.procs"
ok "the sandbox runs there too" grep -q . "$CG1/cri-containerd-$SB.scope/cgroup.procs"
ok "systemd knows the container's scope" systemctl is-active --quiet "cri-containerd-$CID.scope"
ls_out=$(kubelet ls)
sb_labels=$(jq -c --arg id "$SB" 'select(.kind == "sandbox" and .id == $id) | .labels' <<< "$ls_out")
note "sandbox labels: $sb_labels"
ok "sandbox labels: the pod's own and io.kubernetes.pod.{uid,name,namespace}" jqt --arg u "$UID1" \
	'.app == "probe" and .["io.kubernetes.pod.uid"] == $u and .["io.kubernetes.pod.name"] == "probe" and .["io.kubernetes.pod.namespace"] == "e2e"' <<< "$sb_labels"
ctr_line=$(jq -c --arg id "$CID" 'select(.kind == "container" and .id == $id)' <<< "$ls_out")
ok "container main is RUNNING with the pod's uid label" jqt --arg u "$UID1" '.state == "CONTAINER_RUNNING" and .pod_uid == $u' <<< "$ctr_line"
LOG1=/var/log/pods/e2e_probe_$UID1/main/0.log
ok "ContainerStatus.log_path is $LOG1" test "$(jq -r .log_path <<< "$ctr_line")" = "$LOG1"
ok "the log has the CRI format (time stdout F text)" wait_until 10 grep -Eq '^[0-9T:.+Z-]+ stdout F hello from main$' "$LOG1"
st=$(kubelet wait-stats "$UID1" main 8Mi --within 30)
ok "ContainerStats: writable layer ≥ 8 MiB" test -n "$st"
note "stats: $st"
ok "writable layer on containerd's overlayfs snapshotter" \
	jqt '.mountpoint == "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs"' <<< "$st"
fsi=$(kubelet imagefs-info)
note "ImageFsInfo: $fsi"
ok "ImageFsInfo names the same mountpoint" jqt 'select(.kind == "image") | .mountpoint == "/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs"' <<< "$fsi"
ok "descriptor /run/evictd/pods/$UID1.conf written (root, 0644)" \
	test "$(stat -c '%U %a' "$PODS_DIR/$UID1.conf" 2>/dev/null)" = "root 644"
once=$(evictd --once --json 2>/dev/null)
ok "evictd --once sees e2e/probe with priority 100" \
	jqt --arg u "$UID1" '[.. | objects | select(.uid? == $u)] | any(.name? == "probe" or .pod? == "e2e/probe")' <<< "$once"
jq -c --arg u "$UID1" '[.. | objects | select(.uid? == $u)][0]' <<< "$once" | sed 's/^/# evictd --once: /'
ok "evictd --once: the runtime's layout is a single filesystem (containerd's store on the kubelet's disk)" \
	jqt '.node_reclaim.layout == "single filesystem" and (.node_reclaim.image_filesystem | endswith("overlayfs"))' <<< "$once"

# ---- killed as evictd kills it; the kubelet's relist tears it down -----------------------------------
cri_serve || bail "the kubelet stand-in did not start"
ok "cgroup.kill on the pod's cgroup (evictd's kill action)" pod_kill "${UID1//-/_}" burstable
ok "kubelet: pod terminated (evicted)" wait_until 30 kubelet_said "pod e2e/probe .*terminating \\(evicted\\)"
ok "kubelet: StopPodSandbox, pod cgroup removed" wait_until 30 kubelet_said "pod e2e/probe: pod cgroup .* removed"
ok "the pod's cgroup is gone" wait_until 10 not test -d "$CG1"
ok "its descriptor is gone (deleted from the API)" not test -e "$PODS_DIR/$UID1.conf"
ok "its dead container is still listed (left for the container GC)" \
	jqt --arg id "$CID" 'select(.id == $id) | .state == "CONTAINER_EXITED"' <<< "$(kubelet ls)"
ok "its log is still there" test -s "$LOG1"
kubelet_show 10
done_testing
