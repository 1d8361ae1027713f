#!/bin/bash
# Scenario 5 — the watchdog: a stuck evictd (SIGSTOP: alive, but its event loop no longer runs,
# so no WATCHDOG=1) is killed and restarted by systemd after WatchdogSec, as shipped.
. ./lib.sh

ok "evictd started" evictd_restart || bail "evictd is not running"
wd_us=$(unit_prop WatchdogUSec)
note "WatchdogUSec=$wd_us RestartUSec=$(unit_prop RestartUSec) Restart=$(unit_prop Restart)"
# systemctl shows "30s" style values; normalise to seconds.
to_s() { systemd-analyze timespan "$1" 2>/dev/null | awk '/μs:|us:/ { print int($2 / 1000000) }'; }
wd=$(to_s "$wd_us")
ok "the shipped unit sets WatchdogSec (${wd:-?}s)" test "${wd:-0}" -gt 0
[ "${wd:-0}" -gt 0 ] || done_testing
ok "Restart= restarts a failed evictd" matches "$(unit_prop Restart)" '^(on-failure|on-abnormal|on-watchdog|always)$'

sleep 2   # at least one WATCHDOG=1 from the running daemon
j_mark
pid=$(unit_prop MainPID)
restarts=$(unit_prop NRestarts)
kill -STOP "$pid"
t0=$(date +%s.%N)
note "SIGSTOP to MainPID $pid (NRestarts $restarts)"
restarted() { local p; p=$(unit_prop MainPID); [ "$p" != 0 ] && [ "$p" != "$pid" ] && evictd_running; }
ok "systemd restarted evictd" wait_until $((wd + 60)) restarted
t1=$(date +%s.%N)
took=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
note "new MainPID $(unit_prop MainPID), ${took}s after SIGSTOP"
ok "not before WatchdogSec (${wd}s) had passed" awk -v t="$took" -v w="$wd" 'BEGIN { exit !(t >= w - 1) }'
ok "NRestarts went up ($restarts -> $(unit_prop NRestarts))" test "$(unit_prop NRestarts)" -gt "$restarts"
ok "journal: systemd reports the watchdog timeout" j_has '(.MESSAGE // "" | test("[Ww]atchdog timeout"))'
ok "the stopped process is gone" not kill -0 "$pid" 2>/dev/null
ok "the new instance is ready again (active (running), STATUS= set)" test -n "$(unit_prop StatusText)"
j_show 8
done_testing
