#!/bin/bash
# evictd's Node conditions tell the truth across stops, kills and restarts of either process: the
# real evictd (memory pressure switched on and off in a fixture memory.stat, no pods) and the real
# evictd-kube against the stand-in API server, condition-heartbeat = 1s.
#   running: True with evictd's reason; lastHeartbeatTime moves on, lastTransitionTime does not;
#   evictd-kube restarted: lastTransitionTime unchanged (the Node is read first);
#   evictd stopped in order under pressure: Unknown, reason EvictdStopped;
#   evictd restarted without pressure, then stopped in order: False (EvictdStopped), its
#     lastTransitionTime that of the False before it (a restart is no transition);
#   evictd killed (SIGKILL) under pressure: Unknown (EvictdNotRunning) within 5 s (the pidfd: at
#     once), True again when evictd runs again.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (evictd-kube believes only root-owned spool records and status files)"
command -v python3 >/dev/null || skip_all "python3 missing"
command -v openssl >/dev/null || skip_all "openssl missing (test certificates)"
command -v curl >/dev/null || skip_all "curl missing"
EVICTD=$BUILD/evictd
EKUBE=$BUILD/evictd-kube
[ -x "$EVICTD" ] && [ -x "$EKUBE" ] || skip_all "evictd or evictd-kube not built"
FX=$PWD/tests/fixtures/cgroup/systemd
T=$(mktemp -d /tmp/evictd-kstates.XXXXXX)
DPID=""; KPID=""
cleanup() {
	[ -n "$DPID" ] && { kill -9 "$DPID"; wait "$DPID"; } 2>/dev/null
	[ -n "$KPID" ] && { kill -9 "$KPID"; wait "$KPID"; } 2>/dev/null
	[ -n "${KEEP:-}" ] && cp -r "$T" /tmp/kstates-keep
	rm -rf "$T"
	kube_stop
}
KUBE_NO_TRAP=1
trap cleanup EXIT
kube_start || bail "the stand-in API server starts"

# The node: the fixture's root memory.stat and /proc (memory.available 80Mi), no pod cgroup at all.
mkdir -p "$T/root" "$T/meta"
cp "$FX/root/memory.stat" "$FX/root/cgroup.controllers" "$T/root/"
cp -r "$FX/proc" "$T/proc"
pressure() {	# pressure on|off: anon 7.4GiB (80Mi available, under 100Mi) or 1.8GiB; same length, in place
	local anon=7969177600
	[ "$1" = on ] || anon=1969177600
	sed "s/^anon .*/anon $anon/" "$T/root/memory.stat" > "$T/stat.new"
	dd if="$T/stat.new" of="$T/root/memory.stat" conv=notrunc status=none
}
cat > "$T/evictd.conf" <<EOC
[agent]
interval = 100ms
status-file = $T/status.json
pod-metadata-dir = $T/meta
nodefs-path = $T
imagefs-path = $T
[eviction-hard]
memory.available = 100Mi
allocatableMemory.available = 0%
nodefs.available = 0%
nodefs.inodesFree = 0%
imagefs.available = 0%
imagefs.inodesFree = 0%
[eviction]
pressure-transition-period = 0s
$(kube_section node-1)
condition-heartbeat = 1s
kubelet-config = none
EOC
kube_apply '{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-1"}}' >/dev/null

wait_for() { local end=$((SECONDS + $1)); shift; until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.1; done; }
mem() {	# mem PYTHON-EXPR: with c = the Node's EvictdMemoryPressure condition ({} when none)
	curl -sS "$KUBE_CTL/objects/nodes/node-1" > "$T/node.json"
	python3 - "$T/node.json" "$1" <<'PY'
import json, sys
n = json.load(open(sys.argv[1]))
c = {x["type"]: x for x in n.get("status", {}).get("conditions", [])}.get("EvictdMemoryPressure", {})
sys.exit(0 if eval(sys.argv[2], {}, {"c": c}) else 1)
PY
}
field() { curl -sS "$KUBE_CTL/objects/nodes/node-1" | python3 -c '
import json, sys
c = {x["type"]: x for x in json.load(sys.stdin)["status"]["conditions"]}
print(c.get("EvictdMemoryPressure", {}).get(sys.argv[1], ""))' "$1"; }
start_evictd() {
	"$EVICTD" --config "$T/evictd.conf" --cgroup-root "$T/root" --proc-root "$T/proc" --log-target stderr \
		2>>"$T/evictd.err" &
	DPID=$!
}
start_kube() { "$EKUBE" --config "$T/evictd.conf" --log-target stderr 2>>"$T/kube.err" & KPID=$!; }
stop() { kill -"$1" "$2"; wait "$2" 2>/dev/null; }

# --- running -------------------------------------------------------------------------------------
pressure on
start_evictd
start_kube
ok "evictd under pressure: EvictdMemoryPressure=True, evictd's reason and message" wait_for 10 mem \
	"c.get('status')=='True' and c['reason']=='EvictdHasInsufficientMemory' and c['message'].startswith('evictd is evicting pods to relieve MemoryPressure: memory.available 80Mi < 100Mi')"
since=$(field lastTransitionTime)
beat=$(field lastHeartbeatTime)
ok "running: lastHeartbeatTime is refreshed (condition-heartbeat = 1s)" wait_for 5 mem "c['lastHeartbeatTime'] > '$beat'"
ok "...and refreshed again" wait_for 5 mem "c['lastHeartbeatTime'] > '$(field lastHeartbeatTime)'"
ok "...while lastTransitionTime stays" mem "c['lastTransitionTime']=='$since' and c['status']=='True'"

# --- evictd-kube restarted: the Node's transition time is kept ------------------------------------
sleep 1.1	# a post at a later second would show a changed lastTransitionTime
stop TERM "$KPID"; KPID=""
kube_ctl DELETE /requests >/dev/null
start_kube
ok "evictd-kube restarted: it reads its Node first" wait_for 10 bash -c \
	"curl -sS '$KUBE_CTL/requests' | python3 -c 'import json, sys; sys.exit(not any(r[\"method\"] == \"GET\" and r[\"path\"] == \"/api/v1/nodes/node-1\" for r in map(json.loads, sys.stdin)))'"
beat=$(field lastHeartbeatTime)
ok "...posts again (lastHeartbeatTime moves on)" wait_for 5 mem "c['lastHeartbeatTime'] > '$beat'"
ok "...and lastTransitionTime is unchanged" mem "c['status']=='True' and c['lastTransitionTime']=='$since'"

# --- orderly stop under pressure ------------------------------------------------------------------
stop TERM "$DPID"; DPID=""
ok "evictd stopped under pressure: Unknown, reason EvictdStopped (not False)" wait_for 10 mem \
	"c['status']=='Unknown' and c['reason']=='EvictdStopped' and 'while MemoryPressure held' in c['message']"
beat=$(field lastHeartbeatTime)
ok "...still refreshed by evictd-kube while evictd is stopped" wait_for 5 mem "c['lastHeartbeatTime'] > '$beat'"

# --- orderly stop after the pressure cleared, across a restart of evictd ------------------------------
pressure off
start_evictd
ok "evictd running again without pressure: False" wait_for 10 mem \
	"c['status']=='False' and c['reason']=='EvictdHasSufficientMemory'"
since=$(field lastTransitionTime)
sleep 1.1
stop TERM "$DPID"; DPID=""
ok "evictd stopped with the pressure gone: False, reason EvictdStopped" wait_for 10 mem \
	"c['status']=='False' and c['reason']=='EvictdStopped' and 'no threshold for MemoryPressure was met' in c['message']"
ok "...lastTransitionTime that of the False before it" mem "c['lastTransitionTime']=='$since'"
start_evictd
ok "evictd restarted: False again (its own reason)" wait_for 10 mem \
	"c['status']=='False' and c['reason']=='EvictdHasSufficientMemory'"
ok "...and still the same lastTransitionTime (a restart is no transition)" mem "c['lastTransitionTime']=='$since'"

# --- kill -9 under pressure -------------------------------------------------------------------------
pressure on
ok "pressure again: True" wait_for 10 mem "c['status']=='True'"
t0=$(date +%s.%N)
stop KILL "$DPID"; DPID=""
ok "evictd killed (SIGKILL): Unknown, reason EvictdNotRunning, within 5 s" wait_for 5 mem \
	"c['status']=='Unknown' and c['reason']=='EvictdNotRunning' and 'without an orderly stop' in c['message']"
# the stand-in's log: when the PATCH saying so came, after the kill
kube_requests | python3 -c '
import datetime, json, sys
t0 = float(sys.argv[1])
for l in sys.stdin:
    r = json.loads(l)
    if r["method"] == "PATCH" and "EvictdNotRunning" in json.dumps(r.get("body")):
        ts = datetime.datetime.fromisoformat(r["ts"].replace("Z", "+00:00")).timestamp()
        print("# the Unknown reached the API server %.3f s after the SIGKILL" % (ts - t0))
        break' "$t0"
ok "...evictd-kube says it in its log" grep -q "Node condition EvictdMemoryPressure=Unknown: HTTP 200 (EvictdNotRunning)" "$T/kube.err"
start_evictd
ok "evictd back: True again" wait_for 10 mem "c['status']=='True' and c['reason']=='EvictdHasInsufficientMemory'"

stop TERM "$KPID"; rc=$?; KPID=""
ok "evictd-kube exits 0 on SIGTERM" test "$rc" = 0
ok "...and leaves evictd's conditions as they were (True, evictd still runs)" mem "c['status']=='True'"
stop TERM "$DPID"; DPID=""
done_testing
