#!/bin/bash
# What a reclaim waits for, and how much one decision takes (issue 29, items 2 and 5), on the real
# cgroup v2 hierarchy with nodefs on a tmpfs laid out as the kubelet lays it out and a kubelet-like
# cleaner: the volumes and the cgroup go a second after the pod's processes, its container logs
# (the runtime's container GC) seconds later.
#   1. A reclaim waits for everything it counted: batch (priority 10) has a 1 MiB emptyDir and 3 MiB
#      of logs, web (priority 1000) 5 MiB; nodefs.available = 6Mi with 4 MiB available. When batch's
#      cgroup and volumes are gone, 5 MiB are available — still under 6Mi — but its 3 MiB of logs are
#      pending: web is not evicted, and the log lines say the logs are outstanding until they go.
#   2. The batch rule: a and b (priority 10 and 20, 2 MiB each over a 1 MiB ephemeral-storage
#      request) cannot cover a 5 MiB need; with c (priority 30, 4 MiB within its 100 MiB request)
#      the ranking can. a and b go in one decision; c, the next step, once they are reclaimed and the
#      signal is measured again. Each reclaim is credited to its own pod (b's is measured from a's).
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"

node_init reclaim-parts
G=gggg-crit

# --- 1. the logs are part of the reclaim ------------------------------------------------------
BATCH=aaaa-0010 WEB=bbbb-1000
node_reset
: > "$T/stderr"
node_pod $G guard 2000001000
node_pod $WEB web 1000; WPID=$NODE_PID
node_pod $BATCH batch 10; BPID=$NODE_PID
node_emptydir $BATCH 1
node_logs $BATCH batch 3
node_emptydir $WEB 5
node_fill_to 4
LOGS=$T/nodefs/logs/default_batch_$BATCH
node_conf 6Mi
node_cleaner $BATCH batch 1 3
node_start
ok "logs: batch evicted" node_wait 5 node_logged "Evicted default/batch in"
ok "logs: its expected reclaim counts its emptyDir and its logs" node_logged \
	"Evicting default/batch (priority 10): nodefs.available 4Mi < 6Mi; emptyDir+logs 4Mi exceeds"
# (the cleaner removes the volumes, then the cgroup: one look or two)
ok "logs: its cgroup and volumes back, the logs said outstanding" node_wait 5 node_logged \
	"Reclaim of evicted default/batch: [a-zA-Z, ]* back [0-9.]*s after its processes; still outstanding: container logs $LOGS (3Mi for nodefs.available)"
ok "logs: status.json names the outstanding part" node_wait 2 python3 -c "
import json, sys; d = json.load(open('$T/status.json'))
r = [x for x in d['reclaiming'] if x['uid'] == '$BATCH']
sys.exit(0 if r and [o['part'] for o in r[0]['outstanding']] == ['container logs'] else 1)"
ok "logs: 5 MiB available now, under the threshold" test "$(df -B1 --output=avail "$T/nodefs" | tail -1)" -lt $((6 << 20))
ok "logs: its record holds the logs as outstanding" python3 -c "
import json, sys; r = json.load(open('$T/inflight/$BATCH.json'))['reclaim']['parts']
sys.exit(0 if r['cgroup']['back'] and r['volumes']['back'] and not r['logs']['back'] and r['logs']['bytes'] == 3 << 20 else 1)"
ok "logs: nothing said reclaimed while the logs are there" bash -c "[ -d '$LOGS' ] && ! grep -q 'Reclaimed:' '$T/stderr'"
ok "logs: reclaimed once the logs are gone, with everything it counted" node_wait 20 node_logged \
	"Reclaimed: what evicted default/batch held is back (pod cgroup, emptyDir volumes, container logs), [0-9.]*s after its processes; nodefs.available 4Mi -> 8Mi (+4Mi, expected 4Mi)"
sleep 0.5
ok "logs: web was never evicted (the logs' removal made it unneeded)" bash -c "! grep -q 'Evicting default/web' '$T/stderr'"
ok "logs: web is alive" node_alive "$WPID"
ok "logs: batch's record is gone" test ! -e "$T/inflight/$BATCH.json"
node_stop

# --- 2. the batch rule -------------------------------------------------------------------------
A=aaaa-0001 B=bbbb-0002 C=cccc-0003
node_reset
: > "$T/stderr"
node_pod $G guard 2000001000
node_pod $C c 30 100Mi; CPID=$NODE_PID
node_pod $B b 20 1Mi; BPID=$NODE_PID
node_pod $A a 10 1Mi; APID=$NODE_PID
node_emptydir $A 2
node_emptydir $B 2
node_emptydir $C 4
node_fill_to 3
node_conf 8Mi
node_cleaner $A a 1 0
node_cleaner $B b 3 0
node_start
ok "batch: a and b killed" node_wait 5 bash -c "! kill -0 $APID 2>/dev/null && ! kill -0 $BPID 2>/dev/null"
chosen() { grep -o 'Evicting default/[a-z]* (priority' "$T/stderr" | cut -d/ -f2 | cut -d' ' -f1 | tr '\n' ' '; }
ok "batch: a and b chosen in one decision ($(chosen))" bash -c \
	"grep -A1 'Evicting default/a (priority 10): nodefs.available 3Mi < 8Mi' '$T/stderr' | tail -1 | grep -q 'Evicting default/b (priority 20): nodefs.available 3Mi < 8Mi'"
ok "batch: c (within its request) not in that batch" bash -c \
	"! grep -q 'Evicting default/c (priority 30): nodefs.available 3Mi' '$T/stderr'"
line_of() { grep -n -m1 -E -- "$1" "$T/stderr" | cut -d: -f1; }
# A pod's nodefs reclaim is back with its volumes (its cgroup may take a moment longer: the signal
# does not wait for it, signal by signal).
volumes_back() { line_of "Reclaim of evicted default/$1: [a-zA-Z, ]*emptyDir volumes[a-zA-Z, ]* back|Reclaimed: what evicted default/$1 "; }
c_next() {	# c chosen after a's and b's volumes were back (measured again: 7 MiB available)
	local c ra rb
	c=$(line_of 'Evicting default/c \(priority 30\): nodefs.available') ra=$(volumes_back a) rb=$(volumes_back b)
	[ -n "$c" ] && [ -n "$ra" ] && [ -n "$rb" ] && [ "$c" -gt "$ra" ] && [ "$c" -gt "$rb" ]
}
if ! node_wait 15 c_next; then	# what happened instead, for the log
	grep -E "Evicting default|Reclaim" "$T/stderr" | cut -c1-170 | sed 's/^/# /'
fi
ok "batch: c, the next step, after a and b are reclaimed and the signal measured again" c_next
ok "batch: each reclaim credited to its own pod" bash -c \
	"grep -q 'Reclaimed: what evicted default/a .*nodefs.available 3Mi -> 5Mi (+2Mi, expected 2Mi)' '$T/stderr' &&
	 grep -q 'Reclaimed: what evicted default/b .*nodefs.available 5Mi -> 7Mi (+2Mi, expected 2Mi)' '$T/stderr'"
ok "batch: c killed" node_wait 10 node_dead "$CPID"
ok "batch: three pods, three evictions" test "$(node_count 'cgroup.kill at once')" = 3
node_stop
done_testing
