#!/bin/bash
# A resumed eviction keeps the grace period it had, whatever the wall clock did between the write of
# its record and the resume (issue 34, item 6), on the real cgroup v2 hierarchy. Pod a ignores
# SIGTERM; no threshold is crossed, so only the resumed eviction acts.
#   1. a record of an evictd before the boot clock, written while the wall clock was 1 h ahead (then
#      stepped back), a 1 s grace: the kill comes within about the grace, not an hour later;
#   2. a record with the boot clock whose wall-clock deadline is an hour past (the wall clock
#      stepped forward since), a 3 s grace: the kill comes at the boot clock's deadline, 2 s on,
#      not at once.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"

node_init resume-clock
A=aaaa-0010

# record BOOT-CLOCK(0|1) WALL-OFFSET-S BOOT-DEADLINE-S GRACE-S: a's record 0.2 s into its grace,
# phase terminating (SIGTERM sent), as written while the wall clock was WALL-OFFSET-S off
record() {
	mkdir -p "$T/inflight"
	python3 - "$T/inflight" "$A" "$PODS/pod$A" "$@" <<'PY'
import json, sys, time
d, uid, cg, boot, wall, left, grace = sys.argv[1:]
off, left, grace = float(wall), float(left), float(grace)
now = time.time() + off
r = {"version": 2, "boot_id": open("/proc/sys/kernel/random/boot_id").read().strip(), "uid": uid,
     "namespace": "default", "name": "a", "cgroup": cg, "phase": "terminating", "failures": 0,
     "retry_monotonic_usec": 0, "refused": False, "signal": "nodefs.available", "hard": False,
     "action": "kill", "priority": 10, "grace_usec": int(grace * 1e6), "usage": 1 << 20, "expected_reclaim": 1 << 20,
     "started_realtime_usec": int((now - 0.2) * 1e6), "deadline_realtime_usec": int((now + grace - 0.2) * 1e6)}
if boot == "1":
    b = time.clock_gettime(time.CLOCK_BOOTTIME)
    r.update(started_boottime_usec=int((b - 0.2) * 1e6), deadline_boottime_usec=int((b + left) * 1e6))
json.dump(r, open(d + "/" + uid + ".json", "w"))
PY
}
resumed() { node_logged "Resumed the eviction of default/a (nodefs.available, soft threshold) begun by a previous evictd: terminating"; }
kill_in() {	# the seconds left that the resume line says
	sed -n 's/.*Resumed the eviction of default\/a .*cgroup.kill in \([0-9]*\)\.[0-9]*s.*/\1/p' "$T/stderr" | tail -1
}

# --- 1. a record from the future, without the boot clock -------------------------------------
node_pod $A a 10 0 1s --ignore-term; APID=$NODE_PID
node_conf 1Mi
record 0 3600 0 1
node_start
ok "future: the eviction is resumed" node_wait 5 resumed
ok "future: ...with at most its grace left ($(kill_in) s)" test "$(kill_in)" -le 1
ok "future: a (ignoring SIGTERM) is killed within about its grace" node_wait 4 node_dead "$APID"
ok "future: SIGTERM was not sent again" bash -c "! grep -q '^TERM' '$T/$A.rec'"
node_stop

# --- 2. the boot clock's deadline, the wall clock stepped forward ------------------------------
node_reset
: > "$T/stderr"
node_pod $A a 10 0 3s --ignore-term; APID=$NODE_PID
node_conf 1Mi
record 1 -3600 2 3
node_start
ok "boot clock: the eviction is resumed" node_wait 5 resumed
ok "boot clock: ...with the boot clock's time left, not none ($(kill_in) s)" test "$(kill_in)" = 1
sleep 0.5
ok "boot clock: a still runs before its deadline" node_alive "$APID"
ok "boot clock: a is killed at its deadline" node_wait 4 node_dead "$APID"
node_stop

done_testing
