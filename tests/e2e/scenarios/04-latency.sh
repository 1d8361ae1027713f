#!/bin/bash
# Scenario 4 — reaction latency, measured from the pod's side (recorded, not asserted: under
# software emulation every figure is several times what a real node shows).
# Each run: a pod grows until memory.available is under the hard threshold and records that
# moment ("cross", CLOCK_MONOTONIC); then
#   - its SIGTERM handler records when SIGTERM arrived — when it gets to run at all: for a hard
#     threshold evictd writes cgroup.kill right after SIGTERM, and SIGKILL usually wins;
#   - a watcher outside the pod records when the pod's process died (pidfd): the latest moment
#     SIGTERM can have been sent;
#   - the journal's receive time of evictd's decision (POD_CHOSEN) for the pod.
# Printed: n, median, p99 (nearest rank), min, max of each, in ms. Also written to
# /e2e/out/latency.txt (host: $B/e2e/).
. ./lib.sh

RUNS=${E2E_LATENCY_RUNS:-12}
GAP=128           # MiB between what is free and the threshold: what each run allocates
OUT=/e2e/out/latency.txt

set_threshold() {
	THR=$(mib_below_available $GAP)
	dropin latency <<EOF
# e2e: hard threshold ${GAP} MiB under what is free
[eviction-hard]
memory.available = ${THR}Mi
[eviction]
pressure-transition-period = 2s
EOF
}
set_threshold
ok "evictd (re)started, hard threshold ${THR}Mi" evictd_restart || bail "evictd is not running"

: > "$STATE/term" ; : > "$STATE/death" ; : > "$STATE/decision"
evicted=0
for i in $(seq "$RUNS"); do
	uid=$(printf 'e2e000000000000000000000000004%02d' "$i")
	# Free memory drifts (journal, page cache): keep the threshold GAP under it, by reload.
	free_mib=$(( $(mem_available) / MIB ))
	if [ $((free_mib - THR)) -lt $((GAP / 2)) ] || [ $((free_mib - THR)) -gt $((GAP * 2)) ]; then
		set_threshold
		systemctl reload evictd.service
		sleep 1
		note "run $i: threshold moved to ${THR}Mi (free ${free_mib} MiB)"
	fi
	j_mark
	pod_descriptor "$uid" namespace=e2e name="latency-$i" priority=0 memory-request=8Mi \
		termination-grace-period=30s
	pod_start "$uid" burstable -- --delay 300 --until-avail $((THR * MIB)) --extra 32 --max 1024 --on-term exit
	podhog --watch "$PODHOG_PID" --out "$(pod_events "$uid")" &
	if ! wait_until 60 pod_has_event "$uid" died; then
		fail "run $i: pod not evicted within 60s ($(cut -d' ' -f1 "$(pod_events "$uid")" | tr '\n' ' '))"
		pod_kill "$uid" burstable
		wait_until 10 pod_gone "$uid" burstable
		continue
	fi
	evicted=$((evicted + 1))
	c=$(pod_event "$uid" cross) t=$(pod_event "$uid" sigterm) d=$(pod_event "$uid" died)
	j=$(j_time "$(j_pod $MSGID_POD_CHOSEN "$uid")")
	[ -n "$j" ] || { j_wait 5 "$(j_pod $MSGID_POD_CHOSEN "$uid")"; j=$(j_time "$(j_pod $MSGID_POD_CHOSEN "$uid")"); }
	line="run $i:"
	if [ -n "$c" ]; then
		[ -n "$t" ] && { ms "$c" "$t" >> "$STATE/term"; echo >> "$STATE/term"; line+=" SIGTERM +$(ms "$c" "$t") ms"; }
		[ -n "$d" ] && { ms "$c" "$d" >> "$STATE/death"; echo >> "$STATE/death"; line+=" dead +$(ms "$c" "$d") ms"; }
		[ -n "$j" ] && { ms "$c" "$j" >> "$STATE/decision"; echo >> "$STATE/decision"; line+=" decision logged +$(ms "$c" "$j") ms"; }
	else
		line+=" evicted before it recorded crossing the threshold"
	fi
	note "$line"
	wait_until 10 pod_gone "$uid" burstable
	systemctl stop --no-block "$(pod_slice "$uid" burstable)" 2>/dev/null
	# Next run from a recovered node.
	wait_until 20 bash -c "[ \$(podhog --available) -gt $(((THR + GAP / 2) * MIB)) ]"
done

stats() {   # stats FILE: "n=N median=X p99=Y min=A max=B" (ms)
	sort -n "$1" | awk 'NF { v[++n] = $1 }
		END {
			if (!n) { print "n=0"; exit }
			med = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
			r = int(0.99 * n); if (r < 0.99 * n) r++
			printf "n=%d median=%.1f p99=%.1f min=%.1f max=%.1f (ms)\n", n, med, v[r], v[1], v[n]
		}'
}
accel=$(systemd-detect-virt 2>/dev/null || echo unknown)
{
	echo "latency from memory.available crossing the hard threshold ($RUNS runs, virt=$accel, $(nproc) vCPUs):"
	echo "  -> SIGTERM in the pod's handler:     $(stats "$STATE/term")"
	echo "  -> pod process dead:                 $(stats "$STATE/death")"
	echo "  -> evictd's decision in the journal: $(stats "$STATE/decision")"
} | tee "$OUT" | sed 's/^/# /'
ok "$evicted of $RUNS runs evicted (>= 10 measured)" test "$evicted" -ge 10 -a "$evicted" = "$RUNS"
ok "evictd still active (running)" evictd_running
done_testing
