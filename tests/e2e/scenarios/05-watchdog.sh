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
t_stop=$(mono_ns)
kill -STOP "$pid"
note "SIGSTOP to MainPID $pid (NRestarts $restarts)"
restarted() { local p; p=$(unit_prop MainPID); [ "$p" != 0 ] && [ "$p" != "$pid" ] && evictd_running; }
ok "systemd restarted evictd" wait_until $((wd + 60)) restarted
note "new MainPID $(unit_prop MainPID), $(ms "$t_stop" "$(mono_ns)") ms after SIGSTOP"
timeout_entry='(.MESSAGE // "" | test("[Ww]atchdog timeout"))'
ok "journal: systemd reports the watchdog timeout" j_has "$timeout_entry"
t_wd=$(j_time "$timeout_entry")
if [ -n "$t_wd" ]; then
	# sd-event pings when a quarter to half of WatchdogSec has passed since the last ping, so
	# systemd fires between WatchdogSec/4 and WatchdogSec after the process stopped — and never
	# while it was running.
	waited=$(( (${t_wd%.*} - t_stop) / 1000000 ))
	note "watchdog timeout ${waited} ms after SIGSTOP (WatchdogSec ${wd}s)"
	ok "the timeout came at least WatchdogSec/4 after the stop" test "$waited" -ge $((wd * 250 - 1000))
	ok "the timeout came at most WatchdogSec (+5s) after the stop" test "$waited" -le $((wd * 1000 + 5000))
fi
ok "NRestarts went up ($restarts -> $(unit_prop NRestarts))" test "$(unit_prop NRestarts)" -gt "$restarts"
ok "the stopped process is gone" not kill -0 "$pid" 2>/dev/null
ok "the new instance is ready again (active (running), STATUS= set)" test -n "$(unit_prop StatusText)"
j_show 8
done_testing
