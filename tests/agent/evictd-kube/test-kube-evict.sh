#!/bin/bash
# evictd + evictd-kube against the stand-in API server, pods as real cgroup v2 groups:
# evictd-kube writes one descriptor per pod of this node (not the other node's); evictd ranks with
# the API's priorities (a static pod of priority 0 is critical and never chosen; the pod the
# cgroup order alone would pick is protected by its API priority); the victim gets the Warning
# Event "Evicted" with the kubelet's message, the DisruptionTarget condition and a DELETE with its
# UID as precondition; the node gets EvictionThresholdMet; a pod deleted in the API loses its
# descriptor. API away: 503s keep the report in the spool, in order, across a restart of
# evictd-kube, until the API answers.
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
T=$(mktemp -d /tmp/evictd-kube.XXXXXX)
ROOT=$CG2/evictd-kubetest-$$
# cgroup names sort critical < high < low: without the API's data the order would differ
CRIT=$ROOT/kubepods/besteffort/pod0000-cccc
HIGH=$ROOT/kubepods/besteffort/podaaaa-1111
LOW=$ROOT/kubepods/besteffort/podbbbb-2222
PIDS=()
DPID=""; KPID=""

cleanup() {
	[ -n "${KEEP:-}" ] && cp -r "$T" /tmp/kube-evict-keep 2>/dev/null
	[ -n "$DPID" ] && kill -9 "$DPID" 2>/dev/null
	[ -n "$KPID" ] && kill -9 "$KPID" 2>/dev/null
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for cg in "$CRIT" "$HIGH" "$LOW"; do [ -e "$cg/cgroup.kill" ] && echo 1 > "$cg/cgroup.kill"; done
	sleep 0.2
	for d in "$CRIT" "$HIGH" "$LOW" "$ROOT/kubepods/besteffort" "$ROOT/kubepods" "$ROOT"; do rmdir "$d" 2>/dev/null; done
	umount "$T/nodefs" 2>/dev/null
	rm -rf "$T"
	kube_stop
}
KUBE_NO_TRAP=1
trap cleanup EXIT

mkdir_cg "$CRIT" "$HIGH" "$LOW"
[ -e "$LOW/cgroup.kill" ] || skip_all "no cgroup.kill (kernel < 5.14)"
mkdir -p "$T/nodefs" "$T/meta"
mount -t tmpfs -o size=8m tmpfs "$T/nodefs" || skip_all "cannot mount a tmpfs"
# python3, openssl and curl are there (checked above): a stand-in that does not start is a
# regression of our own test tool, not a reason to skip
kube_start --bookmark-interval 0.5 --grace-scale 0.01 || bail "the stand-in API server starts"

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
req_count() {	# req_count N PYTHON-EXPR: exactly N requests r in the stand-in's log satisfy it
	kube_requests > "$T/requests.jsonl"
	python3 - "$T/requests.jsonl" "$1" "$2" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sys.exit(0 if sum(1 for r in rs if eval(sys.argv[3], {}, {"r": r})) == int(sys.argv[2]) else 1)
PY
}
start_pod() {	# start_pod CGROUP FILE: 0 once in its cgroup, else the recorder's exit status
	"$REC" --cgroup "$1" "$2" &
	PIDS+=($!)
	for _ in $(seq 250); do
		grep -q ready "$2" 2>/dev/null && grep -qx "${PIDS[-1]}" "$1/cgroup.procs" && return 0
		kill -0 "${PIDS[-1]}" 2>/dev/null || { wait "${PIDS[-1]}"; return $?; }
		sleep 0.02
	done
	return 1
}
api_pod() {	# api_pod NS NAME UID PRIORITY [ANNOTATIONS-JSON] [NODE]
	kube_apply "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"namespace\":\"$1\",\"name\":\"$2\",\"uid\":\"$3\",
	  \"annotations\":${5:-{\}}},\"spec\":{\"nodeName\":\"${6:-node-1}\",\"priority\":$4,
	  \"containers\":[{\"name\":\"main\",\"image\":\"pause\",\"resources\":{\"requests\":{\"memory\":\"64Mi\"}}}]}}" >/dev/null
}

# --- the API's pods ---------------------------------------------------------------------------
api_pod kube-system etcd-node-1 0000-cccc 0 '{"kubernetes.io/config.source":"file"}'
api_pod default high aaaa-1111 1000
api_pod default low bbbb-2222 0
api_pod default elsewhere dddd-4444 0 '{}' node-2

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
retry-max-interval = 1s
EOC

# --- kubeconfig errors: one clear line each -----------------------------------------------------
"$EKUBE" --config "$T/evictd.conf" --kubeconfig "$KUBE_DIR/kubeconfig-exec" --log-target stderr 2>"$T/err"; rc=$?
ok "exec credential plugin: refused with one line" bash -c "[ $rc = 1 ] && grep -q 'credential plugins (exec/auth-provider) are not supported' '$T/err' && [ \$(wc -l < '$T/err') = 1 ]"
"$EKUBE" --config "$T/evictd.conf" --kubeconfig "$T/none" --log-target stderr 2>"$T/err"; rc=$?
ok "missing kubeconfig: clear error" bash -c "[ $rc = 1 ] && grep -q '$T/none: no such file' '$T/err'"
cp "$KUBE_DIR/kubeconfig-node" "$T/kc-open"; chmod 0644 "$T/kc-open"
"$EKUBE" --config "$T/evictd.conf" --kubeconfig "$T/kc-open" --log-target stderr 2>"$T/err"; rc=$?
ok "kubeconfig readable by others: refused" bash -c "[ $rc = 1 ] && grep -q 'refused: it holds credentials and is accessible by others (mode 0644' '$T/err'"

# --- descriptors from the API -----------------------------------------------------------------
"$EKUBE" --config "$T/evictd.conf" --log-target stderr 2>"$T/kube.err" &
KPID=$!
ok "evictd-kube writes a descriptor per pod of node-1" wait_for 10 test -e "$T/kube-pods/bbbb-2222.conf" -a -e "$T/kube-pods/aaaa-1111.conf" -a -e "$T/kube-pods/0000-cccc.conf"
ok "...not for the other node's pod" test ! -e "$T/kube-pods/dddd-4444.conf"
ok "...listed with the node field selector" req "r['path']=='/api/v1/pods' and r['query'].get('fieldSelector')=='spec.nodeName=node-1' and r['status']==200"
ok "...then watched with bookmarks from the list's resourceVersion" wait_for 5 req "r.get('watch') and r['query'].get('allowWatchBookmarks')=='true' and r['query'].get('resourceVersion')"
ok "the static pod is marked critical" grep -qx "critical = yes" "$T/kube-pods/0000-cccc.conf"
ok "priority comes from spec.priority" grep -qx "priority = 1000" "$T/kube-pods/aaaa-1111.conf"
ok "descriptors are root 0644" test "$(stat -c %a:%u "$T/kube-pods/bbbb-2222.conf")" = 644:0
api_pod default late eeee-5555 7
ok "a pod added in the API gets its descriptor (watch)" wait_for 5 grep -qx "priority = 7" "$T/kube-pods/eeee-5555.conf"
kube_ctl DELETE /objects/pods/default/late >/dev/null
ok "a pod deleted in the API loses it" wait_for 5 test ! -e "$T/kube-pods/eeee-5555.conf"

# --- evictd ranks with them, the eviction is reported ------------------------------------------
start_pod "$CRIT" "$T/crit.rec" || env_or_fail $? "cannot move a process into $CRIT"
CRITPID=${PIDS[-1]}
start_pod "$HIGH" "$T/high.rec"; r1=$?; HIGHPID=${PIDS[-1]}
start_pod "$LOW" "$T/low.rec"; r2=$?; LOWPID=${PIDS[-1]}
ok "the three pods' processes run in their cgroups" test "$r1:$r2" = 0:0
"$EVICTD" --config "$T/evictd.conf" --cgroup-root "$ROOT" --log-target stderr 2>"$T/evictd.err" &
DPID=$!
sleep 1
# The low pod fills nodefs through a file it holds open and unlinked, as a pod writes its emptyDir:
# its eviction frees the space, so pressure ends with it and the next pod is never needed.
sh -c 'echo $$ > "$1/cgroup.procs" && exec 3>"$2" && dd if=/dev/zero bs=1M count=6 status=none >&3 &&
	rm -f "$2" && exec sleep 600' fill "$LOW" "$T/nodefs/fill" &
PIDS+=($!)
ok "the API's lowest-priority pod is evicted" wait_for 5 dead "$LOWPID"
ok "the critical (static, priority 0) pod survives" alive "$CRITPID"
ok "the higher-priority pod survives" alive "$HIGHPID"
ok "evictd logged it under its API name" grep -q "Evicting default/low (nodefs.available, hard threshold)" "$T/evictd.err"
MSG='The node was low on resource: ephemeral-storage. Threshold quantity: 4Mi, available: '
ok "Warning Event Evicted on the pod with the kubelet's message" wait_for 10 req \
	"r['method']=='POST' and r['path']=='/api/v1/namespaces/default/events' and r['status']==201 and r['body']['reason']=='Evicted' and r['body']['type']=='Warning' and r['body']['involvedObject']['uid']=='bbbb-2222' and r['body']['message'].startswith('$MSG')"
ok "DisruptionTarget condition, reason TerminationByKubelet" wait_for 10 req \
	"r['method']=='PATCH' and r['path']=='/api/v1/namespaces/default/pods/low/status' and r['status']==200 and any(c['type']=='DisruptionTarget' and c['reason']=='TerminationByKubelet' for c in r['body']['status']['conditions'])"
ok "DELETE with the UID precondition" wait_for 10 req \
	"r['method']=='DELETE' and r['path']=='/api/v1/namespaces/default/pods/low' and r['status']==200 and r['body']['preconditions']['uid']=='bbbb-2222'"
ok "node Event EvictionThresholdMet" wait_for 10 req \
	"r['method']=='POST' and r['body'].get('reason')=='EvictionThresholdMet' and r['body']['involvedObject']['kind']=='Node' and r['body']['message']=='Attempting to reclaim ephemeral-storage'"
ok "the pod is gone from the API, and its descriptor" wait_for 10 test ! -e "$T/kube-pods/bbbb-2222.conf"
ok "the delivered record left the spool" wait_for 5 bash -c "[ -d '$T/spool' ] && [ -z \"\$(ls '$T/spool')\" ]"
ok "no write about the critical or the high pod" bash -c "! grep -v '\"GET\"' '$T/requests.jsonl' | grep -qE '0000-cccc|aaaa-1111|/pods/high|etcd-node-1'"
ok "the API outcome is in the log with the pod" grep -q "Pod default/low delete: HTTP 200" "$T/kube.err"

# --- API away: reports wait in the spool, in order, across a restart of evictd-kube ----------
kube_fault '{"kind": "status", "code": 503, "count": -1, "path": "/api/v1/namespaces/.*"}'
cat > "$T/spool/.tmp" <<'EOF'
{"kind":"eviction","uid":"aaaa-1111","namespace":"default","name":"high","signal":"memory.available","resource":"memory","hard":true,"threshold":"100Mi","available":"80Mi","priority":1000,"gracePeriodSeconds":0,"startedAt":"2026-01-01T00:00:00Z","containers":[],"message":"The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi. "}
EOF
mv "$T/spool/.tmp" "$T/spool/00000000000000000001-aaaa-1111.json"
# two more behind it, written newest first: the order is the names' (the evictions'), not the writes'
api_pod default ord-a 8888-0001 1
api_pod default ord-b 8888-0002 1
for r in "00000000000000000005-8888-0002 ord-b" "00000000000000000004-8888-0001 ord-a"; do
	set -- $r
	printf '{"kind":"eviction","uid":"%s","namespace":"default","name":"%s","signal":"memory.available","resource":"memory","hard":true,"threshold":"100Mi","available":"80Mi","priority":1,"gracePeriodSeconds":0,"startedAt":"2026-01-01T00:00:00Z","containers":[],"message":"m"}' \
		"${1#*-}" "$2" > "$T/spool/.tmp"
	mv "$T/spool/.tmp" "$T/spool/$1.json"
done
ok "503: the report is retried, the record kept" wait_for 10 grep -q "Pod default/high event: HTTP 503.*will retry" "$T/kube.err"
ok "...and evictd-kube keeps running" alive "$KPID"
kill -TERM "$KPID"; wait "$KPID"; KPID=""
ok "the record stays while evictd-kube is stopped" test -e "$T/spool/00000000000000000001-aaaa-1111.json"
n=$(wc -l < "$T/kube.err")
"$EKUBE" --config "$T/evictd.conf" --log-target stderr 2>>"$T/kube.err" &
KPID=$!
ok "the restarted evictd-kube takes the record up again (503 again)" \
	wait_for 10 bash -c "tail -n +$((n + 1)) '$T/kube.err' | grep -q 'Pod default/high event: HTTP 503.*will retry'"
ok "the record survives evictd-kube's restart" test -e "$T/spool/00000000000000000001-aaaa-1111.json"
kube_ctl DELETE /requests >/dev/null	# first: nothing delivered once the faults go is missed
kube_ctl DELETE /faults >/dev/null
ok "API back: the report is delivered" wait_for 10 req \
	"r['method']=='DELETE' and r['path']=='/api/v1/namespaces/default/pods/high' and r['body']['preconditions']['uid']=='aaaa-1111'"
ok "...and removed from the spool" wait_for 5 test ! -e "$T/spool/00000000000000000001-aaaa-1111.json"
ok "the two records behind it are delivered too" wait_for 10 req \
	"r['method']=='DELETE' and r['path']=='/api/v1/namespaces/default/pods/ord-b' and r['status']==200"
in_order() {	# the DELETEs (and the Events) came in the records' order: high, ord-a, ord-b
	kube_requests > "$T/requests.jsonl"
	python3 - "$T/requests.jsonl" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
dels = [r["path"].rsplit("/", 1)[1] for r in rs if r["method"] == "DELETE" and r["status"] == 200]
evs = [r["body"]["involvedObject"]["name"] for r in rs
       if r["method"] == "POST" and r["path"].endswith("/events") and r["status"] == 201]
ok = dels == ["high", "ord-a", "ord-b"] and evs == ["high", "ord-a", "ord-b"]
if not ok:
    print("# DELETEs %s, Events %s" % (dels, evs))
sys.exit(0 if ok else 1)
PY
}
ok "...in the order of the evictions, one record after the other" in_order
ok "...and the spool is empty" wait_for 5 bash -c "[ -d '$T/spool' ] && [ -z \"\$(ls '$T/spool')\" ]"

# --- a replacement with the same name is never deleted ----------------------------------------
api_pod default high ffff-6666 1000
cat > "$T/spool/.tmp" <<'EOF'
{"kind":"eviction","uid":"aaaa-1111","namespace":"default","name":"high","signal":"memory.available","resource":"memory","hard":true,"threshold":"100Mi","available":"80Mi","priority":1000,"gracePeriodSeconds":0,"startedAt":"2026-01-01T00:00:00Z","containers":[],"message":"m"}
EOF
mv "$T/spool/.tmp" "$T/spool/00000000000000000002-aaaa-1111.json"
ok "the UID precondition protects the replacement (record done)" wait_for 10 test ! -e "$T/spool/00000000000000000002-aaaa-1111.json"
ok "...the DELETE was sent with the old UID and answered 409" req \
	"r['method']=='DELETE' and r['path']=='/api/v1/namespaces/default/pods/high' and r['status']==409 and r['body']['preconditions']['uid']=='aaaa-1111'"
ok "...the replacement still exists" bash -c "kube_ctl() { curl -sS -X GET '$KUBE_CTL/objects/pods/default/high'; }; kube_ctl | grep -q ffff-6666"

# --- a restart after the Event was posted: the repeat is a 409 AlreadyExists, not a second Event --
# The Event goes through (201), the pod's status patch and DELETE get 503s; evictd-kube restarts
# and posts the Event again under the same name (derived from the record): 409, taken as done.
api_pod default twice 7777-aaaa 5
kube_ctl DELETE /requests >/dev/null
kube_fault '{"kind": "status", "code": 503, "count": -1, "path": "/api/v1/namespaces/default/pods/twice.*"}'
cat > "$T/spool/.tmp" <<'EOF'
{"kind":"eviction","uid":"7777-aaaa","namespace":"default","name":"twice","signal":"memory.available","resource":"memory","hard":true,"threshold":"100Mi","available":"80Mi","priority":5,"gracePeriodSeconds":0,"startedAt":"2026-01-01T00:00:03Z","containers":[],"message":"m"}
EOF
mv "$T/spool/.tmp" "$T/spool/00000000000000000003-7777-aaaa.json"
ok "restart/409: the Event is posted (201)" wait_for 10 req \
	"r['method']=='POST' and r['path']=='/api/v1/namespaces/default/events' and r['status']==201 and r['body']['involvedObject']['uid']=='7777-aaaa'"
ok "...the status patch then fails (503, retried)" wait_for 10 grep -q "Pod default/twice condition: HTTP 503.*will retry" "$T/kube.err"
kill -TERM "$KPID"; wait "$KPID"; KPID=""
ok "...the record is still there at the restart" test -e "$T/spool/00000000000000000003-7777-aaaa.json"
kube_ctl DELETE /faults >/dev/null
"$EKUBE" --config "$T/evictd.conf" --log-target stderr 2>>"$T/kube.err" &
KPID=$!
ok "after the restart the report completes (DELETE 200)" wait_for 10 req \
	"r['method']=='DELETE' and r['path']=='/api/v1/namespaces/default/pods/twice' and r['status']==200 and r['body']['preconditions']['uid']=='7777-aaaa'"
ok "...the repeated Event was answered 409 AlreadyExists" req \
	"r['method']=='POST' and r['path']=='/api/v1/namespaces/default/events' and r['status']==409 and r['body']['involvedObject']['uid']=='7777-aaaa'"
ok "...one Event for the pod was created, not two" req_count 1 \
	"r['method']=='POST' and r['path']=='/api/v1/namespaces/default/events' and r['status']==201 and r['body']['involvedObject']['uid']=='7777-aaaa'"
ok "...and the record left the spool" wait_for 5 test ! -e "$T/spool/00000000000000000003-7777-aaaa.json"

# --- expired client certificate: logged, retried, never fatal ---------------------------------
kill -TERM "$KPID"; wait "$KPID"; KPID=""
"$EKUBE" --config "$T/evictd.conf" --kubeconfig "$KUBE_DIR/kubeconfig-expired" --log-target stderr 2>"$T/exp.err" &
KPID=$!
ok "expired certificate: 401 logged" wait_for 10 grep -q "LIST pods: HTTP 401" "$T/exp.err"
ok "...and evictd-kube keeps retrying" alive "$KPID"
kill -TERM "$KPID"; wait "$KPID"; rc=$?; KPID=""
ok "clean exit on SIGTERM" test "$rc" = 0
ok "evictd still running throughout" alive "$DPID"
done_testing
