#!/bin/bash
# Long-run soak of preemptd against the stand-in API server: continuous churn (tests/bench/soak-churn.py:
# pods created and deleted, preemptors of several priorities, nodes leaving and joining, PDBs
# changing) at SOAK_RATE operations a second around SOAK_PODS pods on SOAK_NODES nodes. preemptd's RSS,
# open fds and the model's size (preemptd_cluster_objects) are sampled every SOAK_SAMPLE seconds into
# SOAK_OUT (lines "t_sec rss_kib fds model_pods model_nodes bindings"); at the end the script prints
# start/end/max and fails if preemptd died or RSS, fds or the model kept growing after warm-up.
# tests/bench/plot-soak.sh SOAK_OUT PNG draws RSS over time.
#
#   tests/bench/soak-preemptd.sh [SECONDS]    default 600; BUILD=build-rel to pick the binary
#   SOAK_RATE=10 SOAK_PODS=300 SOAK_NODES=40 SOAK_SEED=1 SOAK_OUT=/tmp/soak.samples tests/bench/soak-preemptd.sh 1800
# Not part of `make check`: it takes minutes. Results go in BENCHMARKS.md.
set -u
cd "$(dirname "$0")/../.." || exit 1
DURATION=${1:-600}
BUILD=${BUILD:-build}
RATE=${SOAK_RATE:-10}
PODS=${SOAK_PODS:-300}
NODES=${SOAK_NODES:-40}
SAMPLE=${SOAK_SAMPLE:-10}
SEED=${SOAK_SEED:-$RANDOM}
OUT=${SOAK_OUT:-$(mktemp "${TMPDIR:-/tmp}/soak-preemptd.XXXXXX")}
. tests/lib.sh
. tests/kube/lib-apiserver.sh
. tests/controller/preemptd/lib-preemptd.sh
[ -x "$PD" ] || { echo "soak: $PD not built (make B=$BUILD)"; exit 2; }
pd_setup --podgc-delay 2
churner=0
stop_churn() { [ "$churner" -gt 0 ] && kill "$churner" 2>/dev/null && wait "$churner" 2>/dev/null; churner=0; }
trap 'stop_churn; pd_cleanup' EXIT
trap 'exit 130' INT TERM

pd_start a --leader-elect no
synced() { logged a "Caches synced"; }
wait_for 20 synced || { echo "soak: preemptd not synced:"; tail "$T/a.log"; exit 1; }
daemon=${PD_PID[a]}
"$PY" tests/bench/soak-churn.py "$KUBE_CTL" "$NODES" "$PODS" "$RATE" "$SEED" 2>"$T/churn.log" &
churner=$!

sample() {	# RSS_KiB FDS MODEL_PODS MODEL_NODES BINDINGS
	local rss fds
	rss=$(awk '/^VmRSS:/ {print $2}' /proc/$daemon/status 2>/dev/null)
	fds=$(ls /proc/$daemon/fd 2>/dev/null | wc -l)
	echo "${rss:-0} $fds $(metric a preemptd_cluster_objects '{"kind":"pods"}' || echo 0)" \
		"$(metric a preemptd_cluster_objects '{"kind":"nodes"}' || echo 0) $(metric a preemptd_bindings_total || echo 0)"
}
echo "soak: preemptd pid $daemon, seed $SEED, ~$PODS pods on $NODES nodes, $RATE changes/s, ${DURATION}s, samples in $OUT"
echo "# t_sec rss_kib fds model_pods model_nodes bindings" | tee "$OUT"
start=$SECONDS; n=0
declare -a RSS FDS MOD NOD
while :; do
	t=$((SECONDS - start))
	kill -0 "$daemon" 2>/dev/null || { echo "soak: FAIL preemptd died after ${t}s"; tail -n 20 "$T/a.log"; exit 1; }
	kill -0 "$churner" 2>/dev/null || { echo "soak: FAIL the churn stopped after ${t}s"; tail "$T/churn.log"; exit 1; }
	read -r rss fds mpods mnodes binds < <(sample)
	RSS[n]=$rss; FDS[n]=$fds; MOD[n]=$mpods; NOD[n]=$mnodes
	echo "$t $rss $fds $mpods $mnodes $binds" | tee -a "$OUT"
	n=$((n + 1))
	kube_ctl DELETE /requests >/dev/null	# the stand-in's log, not preemptd's, would fill the disk
	[ $t -ge "$DURATION" ] && break
	sleep "$SAMPLE"
done
stop_churn
errors=$(grep -ciE 'assert|sanitizer|out of memory' "$T/a.log")
pd_stop a; rc=$?

# After warm-up (the first quarter), "flat": the last quarter's maximum is not above the second
# quarter's maximum by more than 10% (RSS, model); for fds, the medians by more than 4 (the
# connections to the API server come and go with the writes in flight, up to the writer's 32, so
# a quarter's maximum is a burst; a leak of descriptors moves the median).
q=$((n / 4)); m1=0; m2=0; f1=0; f2=0; o1=0; o2=0; d1=0; d2=0
for ((i = q; i < n; i++)); do
	if [ $i -lt $((2 * q)) ]; then
		[ "${RSS[i]}" -gt $m1 ] && m1=${RSS[i]}; [ "${FDS[i]}" -gt $f1 ] && f1=${FDS[i]}; [ "${MOD[i]}" -gt $o1 ] && o1=${MOD[i]}; [ "${NOD[i]}" -gt $d1 ] && d1=${NOD[i]}
	elif [ $i -ge $((3 * q)) ]; then
		[ "${RSS[i]}" -gt $m2 ] && m2=${RSS[i]}; [ "${FDS[i]}" -gt $f2 ] && f2=${FDS[i]}; [ "${MOD[i]}" -gt $o2 ] && o2=${MOD[i]}; [ "${NOD[i]}" -gt $d2 ] && d2=${NOD[i]}
	fi
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
fm1=$(median "${FDS[@]:q:q}"); fm2=$(median "${FDS[@]:3*q}")
echo "soak: ${DURATION}s, $n samples, seed $SEED; RSS KiB start ${RSS[0]} end ${RSS[n-1]} (2nd quarter max $m1, last quarter max $m2);" \
	"fds start ${FDS[0]} end ${FDS[n-1]} (max $f1 / $f2, median $fm1 / $fm2); model pods ${MOD[0]} -> ${MOD[n-1]} (max $o1 / $o2), nodes ${NOD[0]} -> ${NOD[n-1]} (max $d1 / $d2; $NODES in the cluster);" \
	"$errors assertion lines; exit $rc on SIGTERM"
verdict=0
if [ $n -ge 8 ]; then
	[ $m2 -gt $((m1 + m1 / 10)) ] && { echo "soak: FAIL RSS still growing"; verdict=1; }
	[ "$fm2" -gt $((fm1 + 4)) ] && { echo "soak: FAIL fd count still growing"; verdict=1; }
	[ $o2 -gt $((o1 + o1 / 10 + 10)) ] && { echo "soak: FAIL the model's pods still growing"; verdict=1; }
	[ $d2 -gt $((d1 + d1 / 10 + 3)) ] && { echo "soak: FAIL the model's nodes still growing ($d2, the cluster $NODES)"; verdict=1; }
fi
[ "$errors" -ne 0 ] && verdict=1
[ $rc -ne 0 ] && { echo "soak: FAIL preemptd exited $rc on SIGTERM"; verdict=1; }
[ $verdict -eq 0 ] && echo "soak: PASS"
exit $verdict
