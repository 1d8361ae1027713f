#!/bin/bash
# evictd's own Node conditions through evictd-kube, against the stand-in API server: a condition
# record from the spool becomes a strategic merge patch of nodes/<node>/status with
# EvictdMemoryPressure (reason, message), cleared by the next record; the kubelet's own
# MemoryPressure is never touched; a record superseded by a newer one of the same condition is not
# posted; with another node's name the node authorizer refuses (403, logged, the record done) and
# the other node is unchanged. evictd itself is played by a status file that a loop rewrites for a
# sleeping process (heartbeat_usec 1 s): when the rewrites stop the conditions go Unknown
# (EvictdNotResponding) after 1.5 s, come back with them, go Unknown (EvictdNotRunning) when the
# process ends without a word, and when the status file is gone.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"

# evictd-kube believes only root-owned spool records, as written by evictd (root)
[ "$(id -u)" = 0 ] || skip_all "needs root (spool records are trusted only when root-owned)"
command -v python3 >/dev/null || skip_all "python3 missing"
command -v openssl >/dev/null || skip_all "openssl missing (test certificates)"
command -v curl >/dev/null || skip_all "curl missing"
EKUBE=$BUILD/evictd-kube
[ -x "$EKUBE" ] || skip_all "$EKUBE not built"
T=$(mktemp -d /tmp/evictd-kcond.XXXXXX)
KPID=""; FAKE=""; BEAT=""
cleanup() {
	[ -n "$KPID" ] && kill -9 "$KPID" 2>/dev/null
	[ -n "$BEAT" ] && { kill -9 "$BEAT"; wait "$BEAT"; } 2>/dev/null
	[ -n "$FAKE" ] && { kill -9 "$FAKE"; wait "$FAKE"; } 2>/dev/null
	rm -rf "$T"
	kube_stop
}
KUBE_NO_TRAP=1
trap cleanup EXIT
kube_start || skip_all "the stand-in API server does not start"

wait_for() { local end=$((SECONDS + $1)); shift; until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.05; done; }
req() {	# req PYTHON-EXPR: some request r in the stand-in's log satisfies it
	kube_requests > "$T/requests.jsonl"
	python3 - "$T/requests.jsonl" "$1" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sys.exit(0 if any(eval(sys.argv[2], {}, {"r": r}) for r in rs) else 1)
PY
}
node_cond() {	# node_cond NODE PYTHON-EXPR: with c = {type: condition} of the Node in the stand-in
	curl -sS "$KUBE_CTL/objects/nodes/$1" > "$T/node.json"
	python3 - "$T/node.json" "$2" <<'PY'
import json, sys
n = json.load(open(sys.argv[1]))
c = {x["type"]: x for x in n.get("status", {}).get("conditions", [])}
sys.exit(0 if eval(sys.argv[2], {}, {"c": c}) else 1)
PY
}
record() {	# record NAME STATUS REASON MESSAGE: a condition record as evictd writes it (spool.h)
	printf '{"kind":"condition","type":"EvictdMemoryPressure","status":"%s","reason":"%s","message":"%s","startedAt":"2026-11-25T18:00:00Z"}' \
		"$2" "$3" "$4" > "$T/spool/.tmp"
	mv "$T/spool/.tmp" "$T/spool/$1"
}
kubelet_node() {	# kubelet_node NAME: a Node with the kubelet's own MemoryPressure condition
	kube_apply "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"$1\"},\"status\":{\"conditions\":[
	  {\"type\":\"MemoryPressure\",\"status\":\"False\",\"reason\":\"KubeletHasSufficientMemory\",\"message\":\"kubelet has sufficient memory available\"},
	  {\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",\"message\":\"kubelet is posting ready status\"}]}}" >/dev/null
}
kubelet_node node-1
kubelet_node node-2
mkdir -p "$T/spool"
# evictd, as evictd-kube sees it: a process, and its status file rewritten every 0.3 s
sleep 600 &
FAKE=$!
status() {	# status PID: evictd's status file as evictd writes it (atomically), "running"
	printf '{"pid":%s,"state":"running","dry_run":false,"updated_usec":%s,"heartbeat_usec":1000000,"conditions":[]}\n' \
		"$1" "$(date +%s%6N)" > "$T/status.tmp"
	mv "$T/status.tmp" "$T/status.json"
}
beat_start() { (while :; do status "$FAKE"; sleep 0.3; done) & BEAT=$!; }
beat_stop() { kill "$BEAT"; wait "$BEAT" 2>/dev/null; BEAT=""; }
beat_start
conf() {	# conf NODE-NAME
	cat > "$T/evictd.conf" <<EOC
[agent]
status-file = $T/status.json
$(kube_section "$1")
kubelet-config = none
EOC
}
conf node-1
"$EKUBE" --config "$T/evictd.conf" --log-target stderr 2>"$T/kube.err" &
KPID=$!

MSG='evictd is evicting pods to relieve MemoryPressure: memory.available 80Mi < 625Mi (hard)'
record 00000000000000000001-cond-EvictdMemoryPressure.json True EvictdHasInsufficientMemory "$MSG"
ok "True: PATCH nodes/node-1/status as a strategic merge patch, as the node itself, 200" wait_for 10 req \
	"r['method']=='PATCH' and r['path']=='/api/v1/nodes/node-1/status' and r['status']==200 and r['content_type']=='application/strategic-merge-patch+json' and r['identity']=='system:node:node-1' and [c['type'] for c in r['body']['status']['conditions']]==['EvictdMemoryPressure']"
ok "the Node has EvictdMemoryPressure=True with reason and message" wait_for 5 node_cond node-1 \
	"c['EvictdMemoryPressure']['status']=='True' and c['EvictdMemoryPressure']['reason']=='EvictdHasInsufficientMemory' and c['EvictdMemoryPressure']['message']=='$MSG' and c['EvictdMemoryPressure'].get('lastTransitionTime')"
ok "the kubelet's own conditions are untouched" node_cond node-1 \
	"c['MemoryPressure']['reason']=='KubeletHasSufficientMemory' and c['Ready']['status']=='True'"
ok "the delivered record left the spool" wait_for 5 test ! -e "$T/spool/00000000000000000001-cond-EvictdMemoryPressure.json"
ok "logged" grep -q "Node condition EvictdMemoryPressure=True: HTTP 200" "$T/kube.err"

record 00000000000000000002-cond-EvictdMemoryPressure.json False EvictdHasSufficientMemory "no evictd threshold for this condition is met"
ok "cleared: EvictdMemoryPressure=False" wait_for 10 node_cond node-1 \
	"c['EvictdMemoryPressure']['status']=='False' and c['EvictdMemoryPressure']['reason']=='EvictdHasSufficientMemory'"

# a record naming one of the kubelet's own types is never sent
printf '{"kind":"condition","type":"MemoryPressure","status":"True","reason":"x","message":"x"}' > "$T/spool/.tmp"
mv "$T/spool/.tmp" "$T/spool/00000000000000000003-cond-MemoryPressure.json"
ok "a record with a kubelet condition type: dropped, not sent" wait_for 5 test ! -e "$T/spool/00000000000000000003-cond-MemoryPressure.json"
ok "...the kubelet's MemoryPressure unchanged" node_cond node-1 "c['MemoryPressure']['status']=='False'"

# --- evictd's liveness, from its status file and its process ----------------------------------
beat_stop
ok "status file not rewritten for 1.5 x heartbeat_usec: Unknown, EvictdNotResponding" wait_for 10 node_cond node-1 \
	"c['EvictdMemoryPressure']['status']=='Unknown' and c['EvictdMemoryPressure']['reason']=='EvictdNotResponding'"
beat_start
ok "rewritten again: evictd's last word again (False)" wait_for 10 node_cond node-1 \
	"c['EvictdMemoryPressure']['status']=='False' and c['EvictdMemoryPressure']['reason']=='EvictdHasSufficientMemory'"
beat_stop
status "$FAKE"
kill -9 "$FAKE"; wait "$FAKE" 2>/dev/null; FAKE=""
ok "its process ended, the status still \"running\": Unknown, EvictdNotRunning" wait_for 5 node_cond node-1 \
	"c['EvictdMemoryPressure']['status']=='Unknown' and c['EvictdMemoryPressure']['reason']=='EvictdNotRunning' and 'without an orderly stop' in c['EvictdMemoryPressure']['message']"
sleep 600 &
FAKE=$!
beat_start
ok "a new evictd: its last word again" wait_for 10 node_cond node-1 "c['EvictdMemoryPressure']['status']=='False'"
beat_stop
rm "$T/status.json"
ok "no status file: Unknown, EvictdNotRunning" wait_for 10 node_cond node-1 \
	"c['EvictdMemoryPressure']['status']=='Unknown' and 'no status file' in c['EvictdMemoryPressure']['message']"
record 00000000000000000004-cond-EvictdMemoryPressure.json True EvictdHasInsufficientMemory "$MSG"
ok "...records while there is no status file: one warning naming the setting" wait_for 10 grep -q \
	"evictd's condition records arrive, but its status file $T/status.json does not exist.*\[agent\] status-file" "$T/kube.err"
ok "...and the condition stays Unknown (evictd's liveness is not known)" node_cond node-1 \
	"c['EvictdMemoryPressure']['status']=='Unknown'"
beat_start

# --- a record superseded by a newer one of the same condition is not posted --------------------
kill -TERM "$KPID"; wait "$KPID"; KPID=""
record 00000000000000000005-cond-EvictdMemoryPressure.json True EvictdHasInsufficientMemory "older word"
record 00000000000000000006-cond-EvictdMemoryPressure.json False EvictdHasSufficientMemory "newer word"
kube_ctl DELETE /requests >/dev/null
"$EKUBE" --config "$T/evictd.conf" --log-target stderr 2>>"$T/kube.err" &
KPID=$!
ok "two records of one condition waiting: the newer is posted" wait_for 10 node_cond node-1 \
	"c['EvictdMemoryPressure']['message']=='newer word'"
ok "...the older never was" bash -c "! curl -sS '$KUBE_CTL/requests' | grep -q 'older word'"
ok "...and was dropped as superseded" grep -q "00000000000000000005-cond-EvictdMemoryPressure.json: superseded" "$T/kube.err"

# --- an orderly stop seen before its records: evictd's stop record is its word, not a guess -------
# An eviction report ahead of it is held up by 503s, so the stop record waits in the spool while the
# status file already says "stopping".
kill -TERM "$KPID"; wait "$KPID"; KPID=""
beat_stop
printf '{"pid":%s,"state":"stopping","dry_run":false,"updated_usec":%s,"heartbeat_usec":1000000,"conditions":[]}\n' \
	"$FAKE" "$(date +%s%6N)" > "$T/status.tmp"
mv "$T/status.tmp" "$T/status.json"
kube_apply "$(kube_pod_json default held node-1)" >/dev/null
kube_fault '{"kind": "status", "code": 503, "count": -1, "path": "/api/v1/namespaces/default/events"}'
printf '{"kind":"eviction","uid":"%s","namespace":"default","name":"held","signal":"memory.available","resource":"memory","hard":true,"threshold":"100Mi","available":"80Mi","priority":0,"gracePeriodSeconds":0,"startedAt":"2026-01-01T00:00:00Z","containers":[],"message":"m"}' \
	"$(curl -sS "$KUBE_CTL/objects/pods/default/held" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["uid"])')" > "$T/spool/.tmp"
mv "$T/spool/.tmp" "$T/spool/00000000000000000007-held.json"
record 00000000000000000008-cond-EvictdMemoryPressure.json False EvictdStopped "evictd stopped; no threshold for MemoryPressure was met at its last evaluation"
kube_ctl DELETE /requests >/dev/null
"$EKUBE" --config "$T/evictd.conf" --log-target stderr 2>>"$T/kube.err" &
KPID=$!
ok "stopped, its stop record behind a held-up report: the report is retried" wait_for 10 grep -q "Pod default/held event: HTTP 503.*will retry" "$T/kube.err"
sleep 1
kube_ctl DELETE /faults >/dev/null
ok "...then the stop record: False, EvictdStopped" wait_for 10 node_cond node-1 \
	"c['EvictdMemoryPressure']['status']=='False' and c['EvictdMemoryPressure']['reason']=='EvictdStopped'"
ok "...and no Unknown of evictd-kube's own guess was posted meanwhile" bash -c \
	"! curl -sS '$KUBE_CTL/requests' | grep -q 'without a word'"
beat_start

# the node authorizer: node-1's credentials may not patch node-2
kill -TERM "$KPID"; wait "$KPID"; KPID=""
conf node-2
"$EKUBE" --config "$T/evictd.conf" --log-target stderr 2>"$T/kube2.err" &
KPID=$!
record 00000000000000000009-cond-EvictdMemoryPressure.json True EvictdHasInsufficientMemory "$MSG"
ok "another node's status: 403 from the node authorizer" wait_for 10 req \
	"r['method']=='PATCH' and r['path']=='/api/v1/nodes/node-2/status' and r['status']==403"
ok "...logged, and the record is done (403 is final)" wait_for 5 test ! -e "$T/spool/00000000000000000009-cond-EvictdMemoryPressure.json"
ok "...node-2 has no evictd condition" node_cond node-2 "'EvictdMemoryPressure' not in c"
ok "...the 403 is in evictd-kube's log" grep -q "Node condition EvictdMemoryPressure=True: HTTP 403" "$T/kube2.err"
kill -TERM "$KPID"; wait "$KPID"; rc=$?; KPID=""
ok "clean exit on SIGTERM" test "$rc" = 0
done_testing
