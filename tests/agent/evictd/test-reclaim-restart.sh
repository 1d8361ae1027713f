#!/bin/bash
# A pending reclaim survives a restart of evictd (issue 29, item 1), on the real cgroup v2 hierarchy
# with nodefs on a tmpfs laid out as the kubelet lays it out and a kubelet-like cleaner that removes
# the dead pod's volumes and cgroup a few seconds after its processes are gone. Pods: a (priority
# 10, a 3 MiB emptyDir), b (priority 20, 3 MiB), a critical guard; nodefs.available = 6Mi with
# 4 MiB available: a alone covers the need. evictd is restarted at each moment of a's eviction:
#   1. kill -9 while a reclaims (its cgroup still there);
#   2. an orderly restart (SIGTERM) while a reclaims;
#   3. kill -9 during a's grace period (soft threshold; a ignores SIGTERM);
#   4. kill -9 right after the kill (the record still says "killing": the moment is reproduced from
#      evictd's own record, see the case);
#   5. a record of the previous version (evictd before this change), and a corrupt one.
# Each time: the new process resumes a (its eviction, then its reclaim, from the record), b is never
# evicted, and the reclaim, once the cleaner is done, is credited to a with a's figures.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"

node_init reclaim-restart
A=aaaa-0010 B=bbbb-0020 G=gggg-crit CASE=0

record_phase() {	# record_phase UID PHASE: evictd's record of the pod is in that phase
	python3 -c "import json,sys; sys.exit(0 if json.load(open('$T/inflight/$1.json'))['phase'] == '$2' else 1)" 2>/dev/null
}
never_b() { ! node_logged "Evicting default/b"; }
# pods, data and pressure; CONF-LINES for node_conf
pods() {
	node_reset
	[ -s "$T/stderr" ] && mv "$T/stderr" "$T/stderr.$((++CASE))"	# (KEEP=1 keeps each case's log)
	: > "$T/stderr"
	node_pod $G guard 2000001000
	node_pod $B b 20; BPID=$NODE_PID
	node_pod $A a 10 0 3s "$@"; APID=$NODE_PID
	node_emptydir $A 3
	node_emptydir $B 3
	node_fill_to 4
}
# the reclaim resumed by the new process, b spared, a credited once the cleaner is done
after_restart() {	# after_restart CASE [reclaiming]: reclaiming = the reclaim itself was resumed
	if [ "${2:-}" = reclaiming ]; then
		ok "$1: the new evictd resumes a's pending reclaim" node_wait 5 node_logged \
			"Resumed the reclaim of evicted default/a begun by a previous evictd"
		ok "$1: ...with what a was expected to give back" node_logged \
			"Resumed the reclaim of evicted default/a .*pending nodefs.available 3Mi"
	fi
	sleep 1
	ok "$1: b is not evicted while a's reclaim is pending" never_b
	ok "$1: a's reclaim is credited to a, with a's figures" node_wait 10 node_logged \
		"Reclaimed: what evicted default/a held is back (pod cgroup[^)]*), .*; nodefs.available 4Mi -> 7Mi (+3Mi, expected 3Mi)"
	sleep 0.5
	ok "$1: b was never evicted, nor credited with a's reclaim" bash -c \
		"! grep -E 'Evicting default/b|Reclaimed: .*default/b' '$T/stderr'"
	ok "$1: b is alive" node_alive "$BPID"
	ok "$1: a's record is gone with its reclaim" test ! -e "$T/inflight/$A.json"
	[ "$1" = v1 ] || ok "$1: a was evicted once" test "$(node_count 'Evicting default/a (nodefs')" = 1
}

# --- 1 + 2. restarted while a reclaims: kill -9, then an orderly restart ---------------------
for how in kill9 stop; do
	pods
	node_conf 6Mi
	node_cleaner $A a 3 0
	node_start
	ok "$how: a evicted" node_wait 5 node_logged "Evicted default/a in"
	ok "$how: its record holds the pending reclaim" node_wait 3 record_phase $A reclaiming
	if [ $how = kill9 ]; then node_kill9; else node_stop; fi
	ok "$how: a's cgroup is still there (the kubelet is slow)" test -d "$PODS/pod$A"
	node_start
	after_restart "$how" reclaiming
done

# --- 3. kill -9 during a's grace period (soft threshold) -------------------------------------
pods --ignore-term
node_conf 0% "[eviction-soft]" "nodefs.available = 6Mi" \
	"[eviction-soft-grace-period]" "nodefs.available = 100ms"
node_start
ok "grace: SIGTERM sent to a" node_wait 5 grep -q '^TERM' "$T/$A.rec"
ok "grace: its record says terminating" record_phase $A terminating
sleep 0.5
node_kill9
ok "grace: a still runs (its grace is not over)" node_alive "$APID"
node_cleaner $A a 2 0
node_start
ok "grace: the eviction is resumed" node_wait 5 node_logged "Resumed the eviction of default/a"
ok "grace: a killed at its original deadline" node_wait 5 node_dead "$APID"
ok "grace: SIGTERM was not sent again" test "$(grep -c '^TERM' "$T/$A.rec")" = 1
ok "grace: the resumed eviction is tracked for reclaim" node_wait 3 record_phase $A reclaiming
after_restart grace

# --- 4. kill -9 right after the kill ----------------------------------------------------------
# The moment between cgroup.kill and the pod's processes being gone lasts a millisecond: evictd's
# record then says "killing". That is the state this case restarts from: evictd runs the eviction,
# is killed once a's processes are gone, and its record is put back to what it was a millisecond
# earlier — the same file, "killing", as the evictor writes it before cgroup.kill, with the reclaim
# as it was armed (nothing back, no value once gone).
pods
node_conf 6Mi
node_cleaner $A a 4 0
node_start
ok "kill: a killed (hard threshold)" node_wait 5 node_logged \
	"Evicting default/a (nodefs.available, hard threshold): no grace period, cgroup.kill at once"
ok "kill: a's processes are gone" node_wait 3 record_phase $A reclaiming
node_kill9
ok "kill: the record as it was right after cgroup.kill" python3 - "$T/inflight/$A.json" <<'PY'
import json, sys, time
p = sys.argv[1]; r = json.load(open(p))
now = int(time.time() * 1e6)
r.update(phase="killing", signal="nodefs.available", hard=True, action="kill", priority=10, grace_usec=0,
         usage=3 << 20, expected_reclaim=3 << 20, started_realtime_usec=now - 50000,
         deadline_realtime_usec=now + 10000000)
c = r["reclaim"]
c.update(reclaiming=False, gone_monotonic_usec=0, deadline_monotonic_usec=0, bound_set=False, rekills=0)
for part in c["parts"].values(): part["back"] = False
for sig in c["signals"].values(): sig["gone"] = None
json.dump(r, open(p + ".tmp", "w")); __import__("os").rename(p + ".tmp", p)
PY
node_start
ok "kill: the resumed eviction is tracked for reclaim" node_wait 3 record_phase $A reclaiming
ok "kill: the new evictd carried the kill on" node_logged \
	"Resumed the eviction of default/a (nodefs.available, hard threshold) begun by a previous evictd: killing (its kill is carried on)"
after_restart kill
node_stop

# --- 5. records of an older evictd, and a corrupt one ----------------------------------------
# evictd before issue 29 wrote version 1 records (no version key, no reclaim) and removed them when
# the processes were gone: one left by a crash right after its cgroup.kill is resumed and tracked
# for reclaim with the expected reclaim it holds. A corrupt record is logged and removed.
pods
echo 1 > "$PODS/pod$A/cgroup.kill"
node_wait 3 node_dead "$APID"
mkdir -p "$T/inflight"
python3 - "$T/inflight" "$A" "$PODS/pod$A" <<'PY'
import json, sys, time
d, uid, cg = sys.argv[1:]
now = int(time.time() * 1e6)
json.dump({"boot_id": open("/proc/sys/kernel/random/boot_id").read().strip(), "uid": uid, "namespace": "default",
           "name": "a", "cgroup": cg, "signal": "nodefs.available", "hard": True, "action": "kill", "priority": 10,
           "grace_usec": 0, "usage": 3 << 20, "expected_reclaim": 3 << 20, "phase": "killing",
           "started_realtime_usec": now - 200000, "deadline_realtime_usec": now + 9800000}, open(d + "/" + uid + ".json", "w"))
open(d + "/cccc-0030.json", "w").write('{"version": 2, "boot_id": "')
PY
node_cleaner $A a 2.5 0
node_conf 6Mi
node_start
ok "v1: the older record is resumed" node_wait 5 node_logged \
	"Resumed the eviction of default/a (nodefs.available, hard threshold) begun by a previous evictd: killing"
ok "v1: ...and tracked for reclaim, now as a version 2 record" node_wait 3 python3 -c "
import json, sys; r = json.load(open('$T/inflight/$A.json'))
sys.exit(0 if r['version'] == 2 and r['phase'] == 'reclaiming' else 1)"
ok "corrupt: logged with what is wrong, and removed" node_wait 3 node_logged \
	"Victim record $T/inflight/cccc-0030.json discarded: not valid JSON"
ok "corrupt: the file is gone" test ! -e "$T/inflight/cccc-0030.json"
after_restart v1
node_stop
done_testing
