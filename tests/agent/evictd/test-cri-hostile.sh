#!/bin/bash
# The daemon against a hostile or slow container runtime (issue 34; the stand-in CRI runtime of
# tests/cri/cri-standin.py, a test double, not containerd), on a tmpfs nodefs with one writer pod
# (priority 0, a 2 MiB emptyDir) and nodefs.available = 6Mi with 4 MiB available:
#   1. ListContainers, ListImages and ListContainerStats answer 16 MiB of empty repeated items
#      (1.4 GB once unpacked before the fix): evictd's peak resident size (VmHWM) stays under
#      96 MiB, the refusal is logged with its reason, and the writer is evicted by what evictd
#      measures itself;
#   2. the same with the items nested in one container, image or stat (the decode budget);
#   3. a runtime that accepts and never answers (ignores grpc-timeout, a stuck handler): the writer
#      is evicted about one runtime-request-timeout (1 s) after the start, not never;
#   4. 40 containers whose ContainerStatus answers in 0.9 s each, within the 1 s deadline: the
#      listing as a whole has that deadline, the writer is evicted about one deadline after the
#      start (10 s before the fix: 10 rounds of 4 calls).
# The bounds are generous (a loaded machine): what they tell apart is 96 MiB from 1.4 GB, 6 s
# from 10 s or never.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (creates cgroups, mounts a tmpfs)"
find_cgroup2
PY=$(cri_python) || skip_all "no python3 with grpc here (python3-grpcio)"

EVICTD=$BUILD/evictd
REC=$BUILD/tests/helpers/sigrecorder
[ -x "$EVICTD" ] && [ -x "$REC" ] || skip_all "evictd or the helpers are not built"
T=$(mktemp -d -t evictd-crih.XXXXXX)
ROOT=$CG2/evictd-crih-$TEST_TAG
W_UID=wwww-0001-crih
W=$ROOT/kubepods/besteffort/pod$W_UID
DPID=""; SPID=""; WPID=""; CASE=0
PEAK_MAX_KB=$((96 * 1024))
# AddressSanitizer's shadow memory and quarantine triple a process's resident size: a wider bound,
# still far below the 1.4 GB of an unbounded decode
grep -qa __asan_init "$EVICTD" && PEAK_MAX_KB=$((320 * 1024))

stop_all() {
	[ -n "$DPID" ] && kill -9 "$DPID" 2>/dev/null
	[ -n "$SPID" ] && kill "$SPID" 2>/dev/null
	[ -n "$WPID" ] && kill -9 "$WPID" 2>/dev/null
	wait "$DPID" "$SPID" "$WPID" 2>/dev/null
	DPID=""; SPID=""; WPID=""
	[ -e "$W/cgroup.kill" ] && echo 1 > "$W/cgroup.kill"
	wait_for 5 bash -c "! [ -d '$W' ] || rmdir '$W' 2>/dev/null"
}
cleanup() {
	stop_all
	for d in "$ROOT/kubepods/besteffort" "$ROOT/kubepods" "$ROOT"; do rmdir "$d" 2>/dev/null; done
	umount "$T/nodefs" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap 'cp -r "$T" /tmp/crih-keep 2>/dev/null; cleanup' EXIT
wait_for() {	# wait_for SECONDS COMMAND...
	local end=$((SECONDS + $1)); shift
	until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.05; done
}

mkdir -p "$ROOT/kubepods/besteffort" || skip_all "cannot create cgroups under $CG2"
mkdir -p "$T/nodefs" "$T/meta"
mount -t tmpfs -o size=16m tmpfs "$T/nodefs" || skip_all "cannot mount a tmpfs"
printf '[pod]\nnamespace = default\nname = writer\npriority = 0\ntermination-grace-period = 1s\n' > "$T/meta/$W_UID.conf"
chmod 0644 "$T/meta/$W_UID.conf"
LOGDIR=$T/nodefs/logs/default_writer_$W_UID/app

# state [EXTRA-CONTAINERS-JSON] [FAULTS-JSON]: the stand-in's view of the node
state() {
	cat > "$T/cri.json" <<EOS
{"image_filesystems": [{"mountpoint": "$T/nodefs", "used_bytes": 1}],
 "images": [{"id": "sha256:used", "tags": ["localhost/app:1"], "size": 1000}],
 "sandboxes": [{"id": "s1", "uid": "$W_UID", "name": "writer", "namespace": "default", "created_at": 1}],
 "containers": [{"id": "c-run", "sandbox": "s1", "name": "app", "image_ref": "sha256:used", "created_at": 30,
                 "writable_bytes": 1048576, "writable_inodes": 3, "log_path": "$LOGDIR/2.log"}${1:+, $1}],
 "faults": {${2:-}}}
EOS
}
# setup [TIMEOUT]: the writer running with its emptyDir, nodefs filled to 4 MiB available
setup() {
	stop_all
	[ -e "$T/stderr" ] && mv "$T/stderr" "$T/stderr.$((++CASE))"
	rm -rf "$T/nodefs"/* "$T/status.json" "$T/calls.jsonl" "$T/inflight" "$T/node-reclaim.json"
	mkdir -p "$W" "$T/nodefs/kubelet/pods/$W_UID/volumes/kubernetes.io~empty-dir/data" "$LOGDIR"
	dd if=/dev/zero of="$T/nodefs/kubelet/pods/$W_UID/volumes/kubernetes.io~empty-dir/data/f" bs=1M count=2 status=none
	: > "$LOGDIR/2.log"
	rm -f "$T/w.rec"
	"$REC" --cgroup "$W" "$T/w.rec" & WPID=$!
	daemon_conf
	sed -i 's/^interval = 1s/interval = 100ms/' "$T/evictd.conf"
	printf '%s\n' "nodefs.available = 6Mi" "[agent]" "kubelet-root-dir = $T/nodefs/kubelet" \
		"pod-logs-dir = $T/nodefs/logs" "container-runtime-endpoint = unix://$T/cri.sock" \
		"runtime-request-timeout = ${1:-1s}" "[eviction]" "pressure-transition-period = 0s" >> "$T/evictd.conf"
	wait_for 5 test -s "$T/w.rec"
	local avail
	avail=$(df -B1 --output=avail "$T/nodefs" | tail -1)
	dd if=/dev/zero of="$T/nodefs/fill" bs=4K count=$(( (avail - (4 << 20)) / 4096 )) status=none
}
standin() {	# standin [--hang]
	rm -f "$T/cri.sock"
	"$PY" tests/cri/cri-standin.py --socket "$T/cri.sock" --state "$T/cri.json" --log "$T/calls.jsonl" "$@" &
	SPID=$!
	wait_for 10 test -S "$T/cri.sock"
}
start_daemon() {
	T0=$(date +%s%3N)
	"$EVICTD" --config "$T/evictd.conf" --cgroup-root "$ROOT" --log-target stderr >"$T/out" 2>"$T/stderr" &
	DPID=$!
}
evicted() { grep -q "Evicting default/writer (nodefs.available" "$T/stderr"; }
since_start() { echo $(( $(date +%s%3N) - T0 )); }
peak_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$DPID/status"; }
refused() { grep -q "did not answer usably: .*$1" "$T/stderr"; }

# --- 1. 16 MiB of empty items ----------------------------------------------------------------
# (a deadline long enough for a loaded machine to send them all: the memory is what is measured)
HUGE=16000000
setup 30s
state "" "\"ListContainers\": {\"huge\": $HUGE}, \"ListImages\": {\"huge\": $HUGE}, \"ListContainerStats\": {\"huge\": $HUGE}"
standin
start_daemon
ok "1: 16 MiB of empty items: the writer is evicted all the same" wait_for 45 evicted
ok "1: the refusal is logged with its reason" refused "more than 65536"
sleep 1
peak=$(peak_kb)
ok "1: evictd's peak resident size stays under $((PEAK_MAX_KB / 1024)) MiB (${peak} kB; 1.4 GB before)" \
	test "${peak:-999999999}" -lt "$PEAK_MAX_KB"

# --- 2. the same, nested in one item ---------------------------------------------------------
setup 30s
state "" "\"ListContainers\": {\"huge_nested\": $HUGE}, \"ListImages\": {\"huge_nested\": $HUGE}, \"ListContainerStats\": {\"huge_nested\": $HUGE}"
standin
start_daemon
ok "2: 16 MiB of empty nested items: the writer is evicted all the same" wait_for 45 evicted
ok "2: the refusal is logged with its reason" refused "needs more than 32 MiB to decode"
sleep 1
peak=$(peak_kb)
ok "2: evictd's peak resident size stays under $((PEAK_MAX_KB / 1024)) MiB (${peak} kB; 740 MB before)" \
	test "${peak:-999999999}" -lt "$PEAK_MAX_KB"

# --- 3. a runtime that never answers ---------------------------------------------------------
setup
state
standin --hang
start_daemon
ok "3: a runtime that never answers: the writer is evicted" wait_for 20 evicted
took=$(since_start)
ok "3: ...about one deadline after the start ($took ms; the deadline 1 s)" test "$took" -lt 6000
ok "3: the listing's deadline is logged" refused "deadline exceeded"

# --- 4. 40 slow ContainerStatus answers, each within the deadline ------------------------------
MANY=""
for i in $(seq -w 1 40); do
	MANY="$MANY${MANY:+, }{\"id\": \"c-old$i\", \"sandbox\": \"s1\", \"name\": \"app\", \"image_ref\": \"sha256:used\", \"state\": \"EXITED\", \"created_at\": $((10#$i)), \"log_path\": \"$LOGDIR/old$i.log\"}"
done
setup
state "$MANY" "\"ContainerStatus\": {\"delay\": 0.9}"
standin
start_daemon
ok "4: 40 ContainerStatus answers of 0.9 s each: the writer is evicted" wait_for 30 evicted
took=$(since_start)
ok "4: ...about one deadline after the start, not 10 s later ($took ms)" test "$took" -lt 6000
ok "4: the listing's deadline is logged" refused "deadline exceeded"

done_testing
