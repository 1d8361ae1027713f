#!/bin/bash
# Long-run soak: evictd as a daemon (dry run) over a fixture cgroup tree in tmpfs whose pods churn
# (created and removed continuously, with descriptors, changing usage), while a memory threshold
# stays met so that every scan ranks and "evicts". RSS and open fds are sampled; at the end the
# script prints start/end/max and fails if the daemon died or either figure kept growing.
#
#   tests/bench/soak.sh [SECONDS]        default 600; BUILD=build-rel to pick the binary
#   SOAK_PODS=100 SOAK_CHURN=5 SOAK_SAMPLE=10 SOAK_INTERVAL=200ms SOAK_SIGHUP=1 tests/bench/soak.sh 60
# Not part of `make check`: it takes minutes. Results go in BENCHMARKS.md.
set -u
cd "$(dirname "$0")/../.."
DURATION=${1:-600}
BUILD=${BUILD:-build}
EVICTD=${EVICTD:-$BUILD/evictd}
PODS=${SOAK_PODS:-100}      # pods alive at any time
CHURN=${SOAK_CHURN:-5}      # pods replaced per churn step (every 0.2 s)
SAMPLE=${SOAK_SAMPLE:-10}   # seconds between samples
INTERVAL=${SOAK_INTERVAL:-200ms}
[ -x "$EVICTD" ] || { echo "soak: $EVICTD not built (make B=$BUILD)"; exit 2; }
FX=tests/fixtures/cgroup/systemd
base=$(mktemp -d /dev/shm/evictd-soak.XXXXXX 2>/dev/null || mktemp -d)
daemon=0 churner=0
cleanup() {
	[ "$churner" -gt 0 ] && kill "$churner" 2>/dev/null && wait "$churner" 2>/dev/null
	[ "$daemon" -gt 0 ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	rm -rf "$base"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cp -r "$FX/root" "$FX/proc" "$base/"
mkdir -p "$base/pods" "$base/run"
Q=$base/root/kubepods.slice/kubepods-besteffort.slice
# Only churning pods compete for eviction (the fixture's own pods would always win).
rm -rf "$base"/root/kubepods.slice/kubepods-*.slice/kubepods-*pod*.slice "$base"/root/kubepods.slice/kubepods-pod*.slice
cat >"$base/evictd.conf" <<CONF
[agent]
interval = $INTERVAL
nodefs-path = $base
imagefs-path = $base
status-file = $base/run/status.json
[eviction-minimum-reclaim]
memory.available = 500Mi
[priority-class soak-high]
value = 1000
CONF

uid_of() { printf 'c0ffee00-0000-4000-8000-%012d' "$1"; }
make_pod() {	# make_pod N: a BestEffort pod cgroup with usage and a trusted descriptor
	local u d
	u=$(uid_of "$1"); d="$Q/kubepods-besteffort-pod${u//-/_}.slice"
	mkdir -p "$d"
	echo $(( (RANDOM % 500 + 1) * 1048576 )) >"$d/memory.current"
	printf 'anon %d\nfile 1048576\ninactive_file %d\nactive_file 0\n' $((RANDOM * 1000)) $((RANDOM * 10)) >"$d/memory.stat"
	printf 'usage_usec %d\nuser_usec 1\nsystem_usec 1\n' $((RANDOM * 1000)) >"$d/cpu.stat"
	echo $((RANDOM % 50 + 1)) >"$d/pids.current"
	: >"$d/cgroup.procs"
	printf 'populated 1\nfrozen 0\n' >"$d/cgroup.events"
	echo 0 >"$d/memory.min"; echo 1 >"$d/cpu.weight"
	printf 'some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n' >"$d/memory.pressure"
	printf '[pod]\nnamespace = soak\nname = pod-%d\npriority = %d\nmemory-request = %dMi\n' "$1" $((RANDOM % 3 * 500)) $((RANDOM % 200)) \
		>"$base/pods/$u.conf"
	chmod 0644 "$base/pods/$u.conf"
}
drop_pod() {
	local u; u=$(uid_of "$1")
	rm -rf "$Q/kubepods-besteffort-pod${u//-/_}.slice" "$base/pods/$u.conf"
}
for ((i = 0; i < PODS; i++)); do make_pod $i; done

churn() {	# oldest CHURN pods out, CHURN new ones in, forever; usage of survivors changes too
	local lo=0 hi=$PODS k
	while :; do
		for ((k = 0; k < CHURN; k++)); do drop_pod $((lo + k)); make_pod $((hi + k)); done
		lo=$((lo + CHURN)); hi=$((hi + CHURN))
		echo $(( (RANDOM % 900 + 1) * 1048576 )) >"$Q/kubepods-besteffort-pod$(uid_of $((lo + RANDOM % PODS)) | tr - _).slice/memory.current" 2>/dev/null
		sleep 0.2
	done
}

"$EVICTD" --dry-run --log-target stderr --config "$base/evictd.conf" --cgroup-root "$base/root" \
	--proc-root "$base/proc" --metadata-dir "$base/pods" 2>"$base/evictd.log" &
daemon=$!
sleep 2
kill -0 $daemon 2>/dev/null || { echo "soak: evictd exited at start:"; tail "$base/evictd.log"; exit 1; }
churn &
churner=$!

sample() {	# RSS_KiB FDS
	local rss fds
	rss=$(awk '/^VmRSS:/ {print $2}' /proc/$daemon/status 2>/dev/null)
	fds=$(ls /proc/$daemon/fd 2>/dev/null | wc -l)
	echo "${rss:-0} $fds"
}
echo "soak: evictd pid $daemon, $PODS pods churning $CHURN per 0.2 s, interval $INTERVAL, ${DURATION}s"
echo "# t_sec rss_kib fds pods_seen"
start=$(date +%s); n=0; rss0=0 fd0=0 rssmax=0 fdmax=0 rss_warm=0 fd_warm=0
declare -a RSS FDS
while :; do
	now=$(date +%s); t=$((now - start))
	kill -0 $daemon 2>/dev/null || { echo "soak: FAIL evictd died after ${t}s"; tail -n 20 "$base/evictd.log"; exit 1; }
	[ "${SOAK_SIGHUP:-0}" = 1 ] && kill -HUP $daemon
	read -r rss fds < <(sample)
	RSS[n]=$rss; FDS[n]=$fds
	[ $n -eq 0 ] && { rss0=$rss; fd0=$fds; }
	[ "$rss" -gt "$rssmax" ] && rssmax=$rss
	[ "$fds" -gt "$fdmax" ] && fdmax=$fds
	echo "$t $rss $fds $(ls -d "$Q"/*pod*.slice 2>/dev/null | wc -l)"
	n=$((n + 1))
	[ $t -ge "$DURATION" ] && break
	sleep "$SAMPLE"
done
kill $churner 2>/dev/null; wait $churner 2>/dev/null; churner=0
decisions=$(grep -ci 'would evict' "$base/evictd.log")
seen=$(grep -oiE "would evict soak/pod-[0-9]+" "$base/evictd.log" | sort -u | wc -l)
errors=$(grep -ciE 'error|assert|sanitizer' "$base/evictd.log")
kill -TERM $daemon; wait $daemon; rc=$?; daemon=0

# "Flat": the second half's maximum is not above the first half's maximum by more than 10%
# (RSS) or by more than 4 fds (transient ones: the status file being rewritten, a reload
# reopening the cgroup fd cache). Early growth (caches filling) is allowed; steady growth is not.
half=$((n / 2)); m1=0; m2=0; f1=0; f2=0
for ((i = 0; i < n; i++)); do
	if [ $i -lt $half ]; then [ "${RSS[i]}" -gt $m1 ] && m1=${RSS[i]}; [ "${FDS[i]}" -gt $f1 ] && f1=${FDS[i]}
	else [ "${RSS[i]}" -gt $m2 ] && m2=${RSS[i]}; [ "${FDS[i]}" -gt $f2 ] && f2=${FDS[i]}; fi
done
echo "soak: ${DURATION}s, $n samples; RSS KiB start $rss0 end ${RSS[n-1]} max $rssmax (first half max $m1, second half max $m2);" \
	"fds start $fd0 end ${FDS[n-1]} max $fdmax; $decisions dry-run decisions logged ($seen distinct pods), $errors error lines; exit $rc on SIGTERM"
verdict=0
[ $n -ge 4 ] && [ $m2 -gt $((m1 + m1 / 10)) ] && { echo "soak: FAIL RSS still growing"; verdict=1; }
[ $n -ge 4 ] && [ $f2 -gt $((f1 + 4)) ] && { echo "soak: FAIL fd count still growing"; verdict=1; }
[ $rc -ne 0 ] && { echo "soak: FAIL evictd exited $rc on SIGTERM"; verdict=1; }
[ $verdict -eq 0 ] && echo "soak: PASS"
exit $verdict
