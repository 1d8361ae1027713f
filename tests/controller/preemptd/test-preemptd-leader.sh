#!/bin/bash
# Two preemptd instances and one Lease (durations shortened: lease 3s, renew deadline 2s, retry
# 0.5s): one leader, and only it writes; kill -9 of the leader: the standby takes over within the
# lease duration and schedules what came meanwhile; no pod is ever bound twice; a leader that
# cannot renew stops writing before its lease could expire, and nobody writes until a Lease is
# held again; SIGTERM releases the Lease even while a renewal is in flight. Each instance names
# itself in its User-Agent, which the stand-in logs.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
pd_setup

LE=(--leader-elect yes --lease kube-system/pd-lease --leader-elect-lease-duration 3s
    --leader-elect-renew-deadline 2s --leader-elect-retry-period 500ms)
lease() { kube_ctl GET /objects/leases/kube-system/pd-lease; }
holder() { lease | jq -r '.spec.holderIdentity // ""'; }
held() { [ -n "$(holder)" ]; }
writes_by() { nreqs "(.user_agent | test(\"\\\\($1\\\\)\")) and (.verb == \"create\" or .verb == \"update\" or .verb == \"patch\" or .verb == \"delete\") and .resource != \"leases\""; }
all_bound() { local i; for ((i = $1; i < $2; i++)); do [ -n "$(node_of default "p$i")" ] || return 1; done; }
bound_once() {	# every pod p<i> was bound by exactly one accepted binding, overall
	kube_requests | jq -s -e '[.[] | select(.subresource == "binding" and .status == 201) | .name] |
		group_by(.) | all(length == 1)' >/dev/null &&
	[ "$(nreqs '.subresource == "binding" and .status == 201')" = "$1" ]
}

for i in 1 2 3; do node "n$i" 8; done
pd_start a "${LE[@]}" --identity pd-a
pd_start b "${LE[@]}" --identity pd-b
ok "one of the two holds the Lease" wait_for 10 held
leader=$(holder); standby=$([ "$leader" = pd-a ] && echo pd-b || echo pd-a)
L=${leader#pd-}; S=${standby#pd-}
lease_shape() {
	lease | jq -e '.spec.leaseDurationSeconds == 3 and (.spec.renewTime | test("^[0-9-]{10}T[0-9:]{8}\\.[0-9]{6}Z$")) and
		(.spec.acquireTime | test("\\.[0-9]{6}Z$")) and .spec.leaseTransitions >= 0' >/dev/null
}
ok "the Lease: leaseDurationSeconds 3, acquire and renew times as MicroTime (six digits)" lease_shape
renewed() { local t0; t0=$(lease | jq -r .spec.renewTime); sleep 1.2; [ "$(lease | jq -r .spec.renewTime)" != "$t0" ]; }
ok "the leader renews it" renewed
for i in $(seq 0 9); do pending default "p$i" 0 500m; done
ok "the leader binds the pods" wait_for 15 all_bound 0 10
ok "...and only it wrote (the standby: $(writes_by "$standby") writes)" [ "$(writes_by "$standby")" = 0 ]
ok "the standby is ready too (caches synced)" [ "$(pd_code "$S" /readyz)" = 200 ]
leader_gauges() { [ "$(metric "$L" preemptd_leader)" = 1 ] && [ "$(metric "$S" preemptd_leader)" = 0 ]; }
ok "preemptd_leader is 1 on the leader, 0 on the standby" leader_gauges

# the leader dies without a word
transitions=$(lease | jq -r .spec.leaseTransitions)
t0=$SECONDS
pd_kill "$L"
for i in $(seq 10 19); do pending default "p$i" 0 500m; done
taken() { [ "$(holder)" = "$standby" ]; }
ok "the standby takes the Lease over after kill -9" wait_for 10 taken
took=$((SECONDS - t0))
ok "...within the lease duration and a retry (${took}s ≤ 5s)" [ "$took" -le 5 ]
ok "...a transition counted" [ "$(lease | jq -r .spec.leaseTransitions)" -gt "$transitions" ]
ok "the new leader binds what came meanwhile" wait_for 15 all_bound 10 20
ok "no pod was bound twice, and every one once" bound_once 20

# the Lease can no longer be renewed (its updates fail): the leader stops before it could expire
kube_fault '{"kind": "status", "code": 500, "count": -1, "resource": "leases", "write": true}'
lost() { logged "$S" "no longer leader"; }
ok "a leader that cannot renew says it is no longer leader" wait_for 6 lost
last_renew=$(reqs ".resource == \"leases\" and .verb == \"update\" and .status == 200 and (.user_agent | test(\"$standby\"))" | tail -1 | jq -r .ts)
pending default late 0 500m
sleep 2
last_write=$(reqs "(.user_agent | test(\"$standby\")) and .verb != \"get\" and .verb != \"list\" and .verb != \"watch\" and .resource != \"leases\"" | tail -1 | jq -r .ts)
before_expiry() {
	python3 -c '
import datetime, sys
p = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
renew, write = p(sys.argv[1]), p(sys.argv[2])
sys.exit(0 if (write - renew).total_seconds() < 3 else 1)' "$last_renew" "$last_write"
}
ok "...its last write came before its lease could expire (renewed $last_renew, wrote $last_write)" before_expiry
ok "...and nobody binds while no one holds a fresh Lease" [ -z "$(node_of default late)" ]
kube_ctl DELETE /faults >/dev/null
late_bound() { [ -n "$(node_of default late)" ]; }
ok "the Lease renewable again: a leader again, the pod bound" wait_for 10 late_bound
ok "still no pod bound twice" bound_once 21
# SIGTERM on a loaded API server (each Lease write takes 1 s, so a renewal is most likely in
# flight): the release is read-then-write as client-go's LeaderElector.release() and waited for
# (ReleaseOnCancel) — a renewal that lands after all is a 409 that is read again and retried
kube_fault '{"kind": "delay", "ms": 1000, "count": -1, "resource": "leases", "write": true}'
sleep 1.2
standing_before=$(logged_n "$S" "standing by")
pd_stop "$S"
released() { [ -z "$(holder)" ] && [ "$(lease | jq -r .spec.leaseDurationSeconds)" = 1 ]; }
ok "SIGTERM: the leader releases the Lease (holder empty, duration 1) before it exits" released
ok "...and says 'Released Lease'" logged "$S" "Released Lease kube-system/pd-lease"
ok "...not 'Lost Lease ...: standing by'" [ "$(logged_n "$S" "standing by")" = "$standing_before" ]
kube_ctl DELETE /faults >/dev/null
done_testing
