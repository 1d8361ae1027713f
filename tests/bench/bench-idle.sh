#!/bin/bash
# Idle cost of evictd side by side, in the same windows, with earlyoom (Debian package, foreground,
# its defaults, -r 3600: it never acts on a node with memory to spare) and with the floor of this
# machine, a bare loop waking once a second on epoll + timerfd (build/bench/idle-floor).
# evictd: interval = 1s, one nodefs threshold with plenty of headroom (nodefs.available = 64Mi on
# /dev/shm; every other threshold 0%), as in issue 23. CPU is the first field of
# /proc/PID/schedstat (ns of CPU time), wake-ups the voluntary context switches of
# /proc/PID/status; both as deltas over each window, per minute.
#   tests/bench/bench-idle.sh [BUILD_DIR]     WINDOWS (default 3) windows of IDLE_SECONDS (default 60)
#   BASELINE=/path/to/other/evictd adds that build in the same windows (before/after).
# make bench runs it with these defaults (about 3.5 minutes).
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-${BUILD:-build}}
WINDOWS=${WINDOWS:-3}
# not SECONDS: bash sets that one itself (the seconds since the shell started)
SECONDS_PER_WINDOW=${IDLE_SECONDS:-60}
[ -x "$B/evictd" ] && [ -x "$B/bench/idle-floor" ] || { echo "bench-idle: $B/evictd or $B/bench/idle-floor not built" >&2; exit 1; }
[ -r /proc/self/schedstat ] || { echo "bench-idle: skipped: no /proc/PID/schedstat (kernel without schedstats)"; exit 0; }
EARLYOOM=$(command -v earlyoom || true)
[ -n "$EARLYOOM" ] || echo "bench-idle: earlyoom not installed (apt-get install earlyoom): measured without it"

cg=
for c in /sys/fs/cgroup/unified /sys/fs/cgroup; do
	[ "$(stat -f -c %T "$c" 2>/dev/null)" = cgroup2fs ] && cg=$c
done
tmp=$(mktemp -d /dev/shm/bench-idle.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

cat >"$tmp/evictd.conf" <<CONF
[agent]
interval = 1s
nodefs-path = /dev/shm
imagefs-path = /dev/shm
status-file = $tmp/status.json
run-directory = $tmp
pod-metadata-dir = $tmp
[eviction-hard]
nodefs.available = 64Mi
memory.available = 0%
nodefs.inodesFree = 0%
imagefs.available = 0%
imagefs.inodesFree = 0%
CONF

"$B/evictd" --config "$tmp/evictd.conf" ${cg:+--cgroup-root "$cg"} --log-target stderr 2>"$tmp/evictd.log" &
ep=$!; pids+=("$ep")
bp=
if [ -n "${BASELINE:-}" ]; then
	mkdir -p "$tmp/base"
	sed "s|^status-file = .*|status-file = $tmp/base/status.json|; s|^run-directory = .*|run-directory = $tmp/base|" \
		"$tmp/evictd.conf" >"$tmp/base.conf"
	"$BASELINE" --config "$tmp/base.conf" ${cg:+--cgroup-root "$cg"} --log-target stderr 2>"$tmp/base.log" &
	bp=$!; pids+=("$bp")
fi
if [ -n "$EARLYOOM" ]; then "$EARLYOOM" -r 3600 >"$tmp/earlyoom.log" 2>&1 & op=$!; pids+=("$op"); fi
"$B/bench/idle-floor" & fp=$!; pids+=("$fp")
sleep 5
kill -0 "$ep" 2>/dev/null || { cat "$tmp/evictd.log" >&2; echo "bench-idle: evictd did not start" >&2; exit 1; }
grep -m1 'monitoring' "$tmp/evictd.log" || true

cpu() { awk '{print $1}' "/proc/$1/schedstat"; }
wake() { awk '/^voluntary_ctxt_switches/ {print $2}' "/proc/$1/status"; }
per_min() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { printf "%.2f", (b - a) / 1e6 * 60e9 / t }'; }
wake_min() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { printf "%.1f", (b - a) * 60e9 / t }'; }
now() { date +%s%N; }

printf '%-8s %-22s %-22s %-22s%s\n' window "evictd ms/min (wakes)" "earlyoom ms/min (wakes)" "floor ms/min (wakes)" \
	"${bp:+ baseline ms/min (wakes)}"
for ((w = 1; w <= WINDOWS; w++)); do
	t0=$(now); ec0=$(cpu "$ep"); ew0=$(wake "$ep"); fc0=$(cpu "$fp"); fw0=$(wake "$fp")
	[ -n "$EARLYOOM" ] && { oc0=$(cpu "$op"); ow0=$(wake "$op"); }
	[ -n "$bp" ] && { bc0=$(cpu "$bp"); bw0=$(wake "$bp"); }
	sleep "$SECONDS_PER_WINDOW"
	t1=$(now); ec1=$(cpu "$ep"); ew1=$(wake "$ep"); fc1=$(cpu "$fp"); fw1=$(wake "$fp")
	[ -n "$EARLYOOM" ] && { oc1=$(cpu "$op"); ow1=$(wake "$op"); }
	[ -n "$bp" ] && { bc1=$(cpu "$bp"); bw1=$(wake "$bp"); }
	dt=$((t1 - t0))
	bo=
	[ -n "$bp" ] && bo=" $(per_min "$bc0" "$bc1" $dt) ($(wake_min "$bw0" "$bw1" $dt))"
	eo="-"
	[ -n "$EARLYOOM" ] && eo="$(per_min "$oc0" "$oc1" $dt) ($(wake_min "$ow0" "$ow1" $dt))"
	printf '%-8s %-22s %-22s %-22s%s\n' "$w" "$(per_min "$ec0" "$ec1" $dt) ($(wake_min "$ew0" "$ew1" $dt))" "$eo" \
		"$(per_min "$fc0" "$fc1" $dt) ($(wake_min "$fw0" "$fw1" $dt))" "$bo"
done
kill -0 "$ep" 2>/dev/null || { echo "bench-idle: evictd died" >&2; cat "$tmp/evictd.log" >&2; exit 1; }
