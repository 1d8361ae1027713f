#!/bin/bash
# Scenario 8 — reclaim (issue 21) under real memory pressure with a memory-backed emptyDir.
#   batch  priority 10, request 64Mi: a tmpfs emptyDir (medium: Memory) filled with FILL MiB by a
#          process in the pod's cgroup — its pages stay charged to the pod after the process dies,
#          until the volume is unmounted, as with the kubelet's memory-backed emptyDir
#   web    priority 1000, request 256Mi, 32 MiB of anonymous memory: within its request
# A hard memory.available threshold HEADROOM MiB above what is available once batch filled its
# tmpfs (and FILL - HEADROOM under what is available without it). evictd evicts batch; killing its
# processes gives nothing back (the tmpfs holds the memory), and while its pod cgroup is there
# evictd waits for the reclaim instead of choosing web — also across a systemctl restart and a
# kill -9 (issue 29: the pending reclaim is resumed from its record). A kubelet-like cleaner then
# unmounts the volume and removes the pod cgroup: "reclaimed" with the measured change, web survives.
# batch's pod cgroup is made with mkdir, not systemd-run: systemd would remove a transient slice
# by itself once its processes are gone, which would fake "cgroup gone" before the cleaner ran.
. ./lib.sh

FILL=256
HEADROOM=128
WAIT_HELD=5
BATCH=e2e00000000000000000000000000801
WEB=e2e00000000000000000000000000802
BCG=$(pod_cg $BATCH burstable)
VOL=/var/lib/kubelet/pods/$BATCH/volumes/kubernetes.io~empty-dir/cache
BPID=

cleanup() {
	[ -n "$BPID" ] && kill -9 "$BPID" 2>/dev/null
	[ -e "$BCG/cgroup.kill" ] && echo 1 > "$BCG/cgroup.kill" 2>/dev/null
	mountpoint -q "$VOL" && umount "$VOL"
	sleep 0.2
	rmdir "$BCG/ctr" "$BCG" 2>/dev/null
	rm -rf "/var/lib/kubelet/pods/$BATCH"
	pod_kill $WEB burstable
}
trap cleanup EXIT

pod_descriptor $BATCH namespace=e2e name=batch priority=10 memory-request=64Mi termination-grace-period=2s
pod_descriptor $WEB namespace=e2e name=web priority=1000 memory-request=256Mi termination-grace-period=30s
ok "pod e2e/web running (32 MiB)" pod_start $WEB burstable -- --alloc 32 || bail "web did not start"
WEB_PID=$PODHOG_PID

# ---- batch: its pod cgroup made as the kubelet's cgroupfs code does, by hand -----------------------
PARENT=$(dirname "$BCG")
for c in memory pids; do
	grep -qw $c "$PARENT/cgroup.subtree_control" || echo "+$c" > "$PARENT/cgroup.subtree_control"
done
mkdir -p "$BCG" && echo "+memory +pids" > "$BCG/cgroup.subtree_control" && mkdir -p "$BCG/ctr" ||
	bail "cannot create batch's pod cgroup $BCG"
ok "batch's pod cgroup has the memory controller" grep -qw memory "$BCG/cgroup.controllers"
mkdir -p "$VOL" && mount -t tmpfs -o size=$((FILL + 64))m tmpfs "$VOL" || bail "cannot mount the emptyDir tmpfs"
# The "container": moves itself into the pod's cgroup, then writes the emptyDir (charged to the pod).
bash -c 'echo $$ > "$1/ctr/cgroup.procs" || exit 1
	dd if=/dev/zero of="$2/fill" bs=1M count="$3" status=none && touch "$4"
	exec sleep infinity' batch "$BCG" "$VOL" "$FILL" "$STATE/batch.filled" > "$STATE/batch.out" 2>&1 &
BPID=$!
disown
ok "batch filled its memory-backed emptyDir with ${FILL} MiB" wait_until 60 test -e "$STATE/batch.filled" ||
	bail "batch did not fill its emptyDir: $(cat "$STATE/batch.out")"
bmem=$(cat "$BCG/memory.current")
note "batch pod cgroup memory.current $((bmem / MIB)) MiB, shmem $(awk '$1 == "shmem" { print int($2 / 1048576) }' "$BCG/memory.stat") MiB"
ok "the emptyDir's pages are charged to batch's pod cgroup" test "$bmem" -ge $(( (FILL - 8) * MIB ))

thr=$(mib_below_available -$HEADROOM)
note "memory.available $(( $(mem_available) / MIB )) MiB; hard threshold set to ${thr}Mi"
dropin reclaim <<EOF
# e2e: a hard threshold ${HEADROOM} MiB above what is available with batch's emptyDir full
[eviction-hard]
memory.available = ${thr}Mi
[eviction]
pressure-transition-period = 10s
reclaim-timeout = 300s
EOF
j_mark
ok "evictd (re)started with the drop-in" evictd_restart || bail "evictd is not running"

# ---- batch is evicted; its memory is not back while the volume is mounted -------------------------
ok "journal: a pod was chosen for eviction" j_wait 60 "$(j_id $MSGID_POD_CHOSEN)"
first=$(j_select "$(j_id $MSGID_POD_CHOSEN)" | head -n1)
note "chosen: $(jq -r .MESSAGE <<< "$first")"
ok "the pod chosen is e2e/batch" test "$(jq -r .EVICTD_POD_UID <<< "$first")" = $BATCH
ok "its expected reclaim covers the emptyDir" \
	test "$(jq -r '.EVICTD_EXPECTED_RECLAIM // 0' <<< "$first")" -ge $(( (FILL - 8) * MIB ))
ok "batch's processes are gone (killed)" wait_until 30 pod_gone $BATCH burstable
ok "journal: eviction of e2e/batch finished" j_wait 30 "$(j_pod $MSGID_EVICTION_FINISHED $BATCH)"
note "finished: $(j_select "$(j_pod $MSGID_EVICTION_FINISHED $BATCH)" | head -n1 | jq -r .MESSAGE)"
ok "batch's pod cgroup is still there (no kubelet cleanup yet)" test -d "$BCG"
ok "its emptyDir still holds the memory" test "$(cat "$BCG/memory.current")" -ge $(( (FILL - 8) * MIB ))
sleep $WAIT_HELD
avail=$(mem_available)
note "after ${WAIT_HELD}s: memory.available $((avail / MIB)) MiB (threshold ${thr}Mi)"
ok "memory.available is still under the threshold (memory not back)" test "$avail" -lt $((thr * MIB))
ok "no second pod chosen while batch reclaims" test "$(j_select "$(j_id $MSGID_POD_CHOSEN)" | wc -l)" = 1
ok "e2e/web was never chosen" not j_has "$(j_pod $MSGID_POD_CHOSEN $WEB)"
ok "e2e/web still running" pod_populated $WEB burstable
# (for batch: a reclaim an earlier scenario left pending is resumed by the restart above, and ends)
ok "nothing said \"reclaimed\" or \"reclaim timed out\" of batch yet" \
	not j_has "$(j_pod $MSGID_EVICTION_RECLAIMED $BATCH) or $(j_pod $MSGID_RECLAIM_TIMEOUT $BATCH)"

# ---- evictd restarted while batch reclaims (issue 29): a package upgrade, then a crash ------------
# The memory is still not back; the new process must resume batch's pending reclaim, not choose web.
ok "systemctl restart while batch reclaims" evictd_restart
ok "journal: batch's reclaim resumed by the new process" j_wait 30 "$(j_pod $MSGID_RECLAIM_RESUMED $BATCH)"
note "resumed: $(j_select "$(j_pod $MSGID_RECLAIM_RESUMED $BATCH)" | head -n1 | jq -r .MESSAGE)"
pid=$(unit_prop MainPID)
kill -9 "$pid"
restarted() { [ "$(unit_prop MainPID)" != "$pid" ] && evictd_running; }
resumed_twice() { [ "$(j_select "$(j_pod $MSGID_RECLAIM_RESUMED $BATCH)" | wc -l)" -ge 2 ]; }
ok "kill -9: systemd starts evictd again (Restart=on-failure)" wait_until 30 restarted
ok "journal: batch's reclaim resumed again after the crash" wait_until 30 resumed_twice
sleep $WAIT_HELD
ok "after both restarts: still one pod chosen" test "$(j_select "$(j_id $MSGID_POD_CHOSEN)" | wc -l)" = 1
ok "after both restarts: e2e/web still running" pod_populated $WEB burstable

# ---- the kubelet's part: volumes unmounted, then the pod cgroup removed ------------------------
ok "cleaner: batch's emptyDir unmounted" umount "$VOL"
rm -rf "/var/lib/kubelet/pods/$BATCH"
ok "cleaner: batch's pod cgroup removed" rmdir "$BCG/ctr" "$BCG"
reclaimed="$(j_pod $MSGID_EVICTION_RECLAIMED $BATCH)"
ok "journal: batch reclaimed" j_wait 30 "$reclaimed"
rec=$(j_select "$reclaimed" | head -n1)
note "reclaimed: $(jq -r .MESSAGE <<< "$rec")"
rfield() { jq -r --arg f "$1" '.[$f] // empty' <<< "$rec"; }
for f in EVICTD_POD EVICTD_CGROUP EVICTD_SIGNAL EVICTD_UNIT EVICTD_RECLAIM_MSEC EVICTD_EXPECTED_RECLAIM \
	EVICTD_RECLAIMED EVICTD_OBSERVED EVICTD_DRY_RUN; do
	ok "reclaimed entry has $f=$(rfield $f)" test -n "$(rfield $f)"
done
ok "EVICTD_POD is e2e/batch" test "$(rfield EVICTD_POD)" = e2e/batch
ok "EVICTD_SIGNAL is memory.available" test "$(rfield EVICTD_SIGNAL)" = memory.available
ok "EVICTD_RECLAIM_MSEC covers the ${WAIT_HELD}s the volume stayed" test "$(rfield EVICTD_RECLAIM_MSEC)" -ge $((WAIT_HELD * 1000))
ok "EVICTD_RECLAIM_MSEC is under reclaim-timeout" test "$(rfield EVICTD_RECLAIM_MSEC)" -lt 300000
ok "EVICTD_RECLAIMED is most of the emptyDir (≥ $((FILL / 2)) MiB)" test "$(rfield EVICTD_RECLAIMED)" -ge $((FILL / 2 * MIB))
ok "EVICTD_OBSERVED is back over the threshold" test "$(rfield EVICTD_OBSERVED)" -gt $((thr * MIB))
ok "EVICTD_DRY_RUN is 0" test "$(rfield EVICTD_DRY_RUN)" = 0
ok "no \"reclaim timed out\" of batch" not j_has "$(j_pod $MSGID_RECLAIM_TIMEOUT $BATCH)"

cleared="$(j_id $MSGID_CONDITION_CHANGED) and .EVICTD_CONDITION == \"MemoryPressure\" and .EVICTD_CONDITION_STATUS == \"False\""
ok "journal: MemoryPressure cleared" j_wait 40 "$cleared"
ok "e2e/web survived" pod_populated $WEB burstable
ok "e2e/web's process alive" kill -0 "$WEB_PID"
ok "e2e/web was never chosen" not j_has "$(j_pod $MSGID_POD_CHOSEN $WEB)"
ok "exactly one pod chosen in the whole scenario" test "$(j_select "$(j_id $MSGID_POD_CHOSEN)" | wc -l)" = 1
ok "evictd still active (running)" evictd_running
j_show 15
done_testing
