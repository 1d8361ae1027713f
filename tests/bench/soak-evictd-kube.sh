#!/bin/bash
# Long-run soak of evictd-kube against the stand-in API server: its node holds SOAK_PODS pods (110,
# the kubelet's default maximum), SOAK_CHURN of them replaced every second (created, their
# descriptors written; deleted, their descriptors removed), with bookmarks every 5 s. evictd-kube's
# RSS, open fds and its descriptor count are sampled every SOAK_SAMPLE seconds into SOAK_OUT (lines
# "t_sec rss_kib fds descriptors"); at the end the script fails if it died or RSS or fds kept growing.
#
#   tests/bench/soak-evictd-kube.sh [SECONDS]    default 600; BUILD=build-rel to pick the binary
# Not part of `make check`: it takes minutes. Results go in BENCHMARKS.md.
set -u
cd "$(dirname "$0")/../.." || exit 1
DURATION=${1:-600}
BUILD=${BUILD:-build}
PODS=${SOAK_PODS:-110}
CHURN=${SOAK_CHURN:-5}
SAMPLE=${SOAK_SAMPLE:-10}
OUT=${SOAK_OUT:-$(mktemp "${TMPDIR:-/tmp}/soak-evictd-kube.XXXXXX")}
EK=$BUILD/evictd-kube
[ -x "$EK" ] || { echo "soak: $EK not built (make B=$BUILD)"; exit 2; }
. tests/kube/lib-apiserver.sh
kube_start --bookmark-interval 5 --grace-scale 0.01 || { echo "soak: the stand-in does not start"; exit 1; }
T=$KUBE_DIR
daemon=0 churner=0
cleanup() {
	[ "$churner" -gt 0 ] && kill "$churner" 2>/dev/null && wait "$churner" 2>/dev/null
	[ "$daemon" -gt 0 ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	kube_stop
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$T/desc" "$T/spool"
printf '[kubernetes]\nenable = yes\nnode-name = %s\nkubeconfig = %s\ndescriptor-dir = %s\nspool-dir = %s\n' \
	"$KUBE_NODE" "$T/kubeconfig-node" "$T/desc" "$T/spool" >"$T/evictd.conf"
"$EK" --config "$T/evictd.conf" --log-target stderr 2>"$T/evictd-kube.log" &
daemon=$!

python3 - "$KUBE_CTL" "$KUBE_NODE" "$PODS" "$CHURN" 2>"$T/churn.log" <<'PY' &
import json, random, sys, time, urllib.request
ctl, node, pods, churn = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def call(method, path, body=None):
    req = urllib.request.Request(ctl + path, method=method, data=json.dumps(body).encode() if body else None,
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=30).read()
def pod(i):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "soak", "name": "p%07d" % i},
            "spec": {"nodeName": node, "priority": random.choice((0, 100, 1000)),
                     "containers": [{"name": "c", "resources": {"requests": {"cpu": "10m", "memory": "%dMi" % random.randint(8, 256)}}}]}}
call("POST", "/objects", [pod(i) for i in range(pods)])
lo, hi = 0, pods
while True:
    for k in range(churn):
        call("DELETE", "/objects/pods/soak/p%07d" % (lo + k))
        call("POST", "/objects", pod(hi + k))
    lo += churn; hi += churn
    call("DELETE", "/requests")
    time.sleep(1)
PY
churner=$!
sleep 3
echo "soak: evictd-kube pid $daemon, $PODS pods, $CHURN replaced a second, ${DURATION}s, samples in $OUT"
echo "# t_sec rss_kib fds descriptors" | tee "$OUT"
start=$SECONDS; n=0
declare -a RSS FDS
while :; do
	t=$((SECONDS - start))
	kill -0 $daemon 2>/dev/null || { echo "soak: FAIL evictd-kube died after ${t}s"; tail "$T/evictd-kube.log"; exit 1; }
	kill -0 $churner 2>/dev/null || { echo "soak: FAIL the churn stopped after ${t}s"; tail "$T/churn.log"; exit 1; }
	rss=$(awk '/^VmRSS:/ {print $2}' /proc/$daemon/status)
	fds=$(ls /proc/$daemon/fd | wc -l)
	RSS[n]=$rss; FDS[n]=$fds
	echo "$t $rss $fds $(find "$T/desc" -name '*.conf' | wc -l)" | tee -a "$OUT"
	n=$((n + 1))
	[ $t -ge "$DURATION" ] && break
	sleep "$SAMPLE"
done
kill $churner 2>/dev/null; wait $churner 2>/dev/null; churner=0
kill -TERM $daemon; wait $daemon; rc=$?; daemon=0
q=$((n / 4)); m1=0; m2=0; f1=0; f2=0
for ((i = q; i < n; i++)); do
	if [ $i -lt $((2 * q)) ]; then [ "${RSS[i]}" -gt $m1 ] && m1=${RSS[i]}; [ "${FDS[i]}" -gt $f1 ] && f1=${FDS[i]}
	elif [ $i -ge $((3 * q)) ]; then [ "${RSS[i]}" -gt $m2 ] && m2=${RSS[i]}; [ "${FDS[i]}" -gt $f2 ] && f2=${FDS[i]}; fi
done
echo "soak: ${DURATION}s, $n samples; RSS KiB start ${RSS[0]} end ${RSS[n-1]} (2nd quarter max $m1, last quarter max $m2);" \
	"fds start ${FDS[0]} end ${FDS[n-1]} (max $f1 / $f2); exit $rc on SIGTERM"
verdict=0
if [ $n -ge 8 ]; then
	[ $m2 -gt $((m1 + m1 / 10)) ] && { echo "soak: FAIL RSS still growing"; verdict=1; }
	[ $f2 -gt $((f1 + 4)) ] && { echo "soak: FAIL fd count still growing"; verdict=1; }
fi
[ $rc -ne 0 ] && { echo "soak: FAIL evictd-kube exited $rc on SIGTERM"; verdict=1; }
[ $verdict -eq 0 ] && echo "soak: PASS"
exit $verdict
