#!/bin/bash
# Eviction-API mode without loops (issue 21): eviction-api = eviction, the lowest-priority pod
# guarded by a PodDisruptionBudget that allows no disruption (the API answers 429), nodefs
# pressure from outside the pods (it lasts). evictd kills the pod at once (hard threshold) and
# reports it; evictd-kube posts the Eviction first, gets 429, sets no DisruptionTarget condition
# and no Evicted Event, and writes the refusal back (<spool-dir>.outcome/<uid>.outcome); evictd
# then lets the pod be — a process restarted in its cgroup (the kubelet restarting its containers)
# is not killed again — and chooses the next pod in the ranking while pressure lasts, whose
# eviction the API accepts. A malformed or untrusted outcome file is ignored with a reason.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (creates cgroups, mounts a tmpfs)"
command -v python3 >/dev/null || skip_all "python3 missing"
command -v openssl >/dev/null || skip_all "openssl missing (test certificates)"
command -v curl >/dev/null || skip_all "curl missing"
find_cgroup2

EVICTD=$BUILD/evictd
EKUBE=$BUILD/evictd-kube
REC=$BUILD/tests/helpers/sigrecorder
T=$(mktemp -d /tmp/evictd-kpdb.XXXXXX)
ROOT=$CG2/evictd-kpdb-$TEST_TAG
LOW=$ROOT/kubepods/besteffort/podbbbb-0000
MID=$ROOT/kubepods/besteffort/podcccc-0010
HIGH=$ROOT/kubepods/besteffort/podaaaa-1000
PIDS=()
DPID=""; KPID=""

cleanup() {
	[ -n "${KEEP:-}" ] && cp -r "$T" /tmp/kube-pdb-keep 2>/dev/null
	[ -n "$DPID" ] && kill -9 "$DPID" 2>/dev/null
	[ -n "$KPID" ] && kill -9 "$KPID" 2>/dev/null
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for cg in "$LOW" "$MID" "$HIGH"; do [ -e "$cg/cgroup.kill" ] && echo 1 > "$cg/cgroup.kill"; done
	sleep 0.2
	for d in "$LOW" "$MID" "$HIGH" "$ROOT/kubepods/besteffort" "$ROOT/kubepods" "$ROOT"; do rmdir "$d" 2>/dev/null; done
	umount "$T/nodefs" 2>/dev/null
	rm -rf "$T"
	kube_stop
}
KUBE_NO_TRAP=1
trap cleanup EXIT

mkdir -p "$LOW" "$MID" "$HIGH" || skip_all "cannot create cgroups under $CG2"
[ -e "$LOW/cgroup.kill" ] || skip_all "no cgroup.kill (kernel < 5.14)"
mkdir -p "$T/nodefs" "$T/meta"
mount -t tmpfs -o size=8m tmpfs "$T/nodefs" || skip_all "cannot mount a tmpfs"
kube_start --bookmark-interval 0.5 --grace-scale 0.01 || skip_all "the stand-in API server does not start"

wait_for() { local end=$((SECONDS + $1)); shift; until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.05; done; }
alive() { kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
dead() { ! alive "$1"; }
req() {	# req PYTHON-EXPR: some request r in the stand-in's log satisfies it
	kube_requests > "$T/requests.jsonl"
	python3 - "$T/requests.jsonl" "$1" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sys.exit(0 if any(eval(sys.argv[2], {}, {"r": r}) for r in rs) else 1)
PY
}
start_pod() {	# start_pod CGROUP FILE
	"$REC" --cgroup "$1" "$2" &
	PIDS+=($!)
	for _ in $(seq 100); do grep -q ready "$2" 2>/dev/null && return 0; sleep 0.02; done
	return 1
}
api_pod() {	# api_pod NAME UID PRIORITY APP
	kube_apply "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"default\",\"name\":\"$1\",
	  \"uid\":\"$2\",\"labels\":{\"app\":\"$4\"}},\"spec\":{\"nodeName\":\"node-1\",\"priority\":$3,
	  \"containers\":[{\"name\":\"main\",\"image\":\"pause\",\"resources\":{\"requests\":{\"memory\":\"64Mi\"}}}]}}" >/dev/null
}
count() { grep -c -- "$1" "$2" || true; }

api_pod low bbbb-0000 0 guarded
api_pod mid cccc-0010 10 free
api_pod high aaaa-1000 1000 free
kube_apply '{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"namespace":"default","name":"guard"},
  "spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"guarded"}}},"status":{"disruptionsAllowed":0,
  "currentHealthy":1,"desiredHealthy":1,"expectedPods":1}}' >/dev/null

daemon_conf
cat >> "$T/evictd.conf" <<EOC
nodefs.available = 4Mi
[eviction]
pressure-transition-period = 0s
[kubernetes]
enable = yes
node-name = node-1
kubeconfig = $KUBE_DIR/kubeconfig-node
descriptor-dir = $T/kube-pods
spool-dir = $T/spool
eviction-api = eviction
retry-max-interval = 1s
EOC
sed -i "s|^pod-metadata-dir = .*|pod-metadata-dir = $T/kube-pods|" "$T/evictd.conf"

"$EKUBE" --config "$T/evictd.conf" --log-target stderr 2>"$T/kube.err" &
KPID=$!
ok "evictd-kube writes the descriptors" wait_for 10 test -e "$T/kube-pods/bbbb-0000.conf" -a -e "$T/kube-pods/cccc-0010.conf" -a -e "$T/kube-pods/aaaa-1000.conf"
start_pod "$LOW" "$T/low.rec" || skip_all "cannot move a process into $LOW"
LOWPID=${PIDS[-1]}
start_pod "$MID" "$T/mid.rec"; MIDPID=${PIDS[-1]}
start_pod "$HIGH" "$T/high.rec"; HIGHPID=${PIDS[-1]}
"$EVICTD" --config "$T/evictd.conf" --cgroup-root "$ROOT" --log-target stderr 2>"$T/evictd.err" &
DPID=$!
sleep 1
dd if=/dev/zero of="$T/nodefs/fill" bs=1M count=6 status=none   # from outside the pods: it lasts

ok "the lowest-priority pod is killed at once (hard threshold)" wait_for 5 dead "$LOWPID"
ok "the Eviction API is asked first and answers 429 (the PodDisruptionBudget)" wait_for 10 req \
	"r['method']=='POST' and r['path']=='/api/v1/namespaces/default/pods/low/eviction' and r['status']==429"
ok "evictd-kube: refused, evictd told" wait_for 5 grep -q "Eviction API refused pod default/low (429, a PodDisruptionBudget): evictd is told" "$T/kube.err"
ok "evictd: the refusal is heard" wait_for 5 grep -q "The API server refused the eviction of default/low (HTTP 429, a PodDisruptionBudget): it is not killed again" "$T/evictd.err"
ok "the outcome file was consumed" wait_for 3 bash -c "[ -z \"\$(ls '$T/spool.outcome')\" ]"
ok "no DisruptionTarget condition on the refused pod" bash -c "! grep -q '/pods/low/status' '$T/requests.jsonl'"
ok "no Evicted Event for the refused pod" bash -c "! python3 -c \"
import json,sys
rs=[json.loads(l) for l in open('$T/requests.jsonl') if l.strip()]
sys.exit(0 if any(r['method']=='POST' and r['path'].endswith('/events') and r['body'].get('involvedObject',{}).get('name')=='low' for r in rs) else 1)\""
# the kubelet restarts the refused pod's containers: they are left running (no loop)
start_pod "$LOW" "$T/low2.rec"; LOW2=${PIDS[-1]}
sleep 2
ok "a restarted container of the refused pod is not killed again" alive "$LOW2"
ok "the next pod in the ranking is chosen while pressure lasts" wait_for 5 dead "$MIDPID"
ok "...whose eviction the API accepts" wait_for 10 req \
	"r['method']=='POST' and r['path']=='/api/v1/namespaces/default/pods/mid/eviction' and r['status']==201"
ok "...and gets its Evicted Event after it" wait_for 10 req \
	"r['method']=='POST' and r['path']=='/api/v1/namespaces/default/events' and r['body']['involvedObject']['name']=='mid' and r['body']['reason']=='Evicted'"
ok "the refused pod was evicted (killed) once" test "$(count 'Evicting default/low (nodefs' "$T/evictd.err")" = 1
ok "the high-priority pod survives" alive "$HIGHPID"

# A malformed and an untrusted outcome: ignored with a reason, nothing else happens
# Each file appears whole and with its final mode (written aside, then renamed in): evictd reads
# the directory at any decision, and must not see the untrusted one while it is still 0644.
printf 'uid=cccc-0010\noutcome=refused\nstatus=4290\n' > "$T/cccc-0010.outcome"
printf 'uid=aaaa-1000\noutcome=refused\nstatus=429\n' > "$T/aaaa-1000.outcome"
chmod 0666 "$T/aaaa-1000.outcome"
mv "$T/cccc-0010.outcome" "$T/aaaa-1000.outcome" "$T/spool.outcome/"
rm -f "$T/nodefs/fill"; dd if=/dev/zero of="$T/nodefs/fill" bs=1M count=6 status=none  # a decision reads them
ok "a malformed outcome is ignored, saying why" wait_for 5 grep -q "cccc-0010.outcome ignored: line 3 is not status=<HTTP status 400-599>" "$T/evictd.err"
ok "an untrusted outcome is ignored, saying why" wait_for 5 grep -q "aaaa-1000.outcome ignored: not trusted" "$T/evictd.err"
ok "evictd still running" alive "$DPID"
done_testing
