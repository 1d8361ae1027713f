#!/bin/bash
# `evictd --status` and `evictd --reload` against a real daemon on the fixture tree: the status of
# a running daemon (JSON, ending with a newline), a reload that waits for the daemon and one
# refused for a bad file, then "not running" (exit 3, one line) once the daemon has stopped, when
# the file is missing, when its pid belongs to another program, and while it is stopping.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"
EVICTD=$PWD/$BUILD/evictd
[ -x "$EVICTD" ] || skip_all "$EVICTD not built"
command -v python3 >/dev/null || skip_all "python3 missing"
FX=$PWD/tests/fixtures/cgroup/systemd
tmp=$(mktemp -d); D=
cleanup() { [ -n "$D" ] && { kill -9 "$D" 2>/dev/null; wait "$D" 2>/dev/null; }; rm -rf "$tmp"; }
trap cleanup EXIT

fixture_daemon_conf "$tmp/evictd.conf" "$tmp/status.json"
st() { "$EVICTD" --config "$tmp/evictd.conf" "$@" >"$tmp/out" 2>"$tmp/err"; }
one_line_not_running() {	# one_line_not_running WORDS: exit 3, one stderr line saying so, nothing on stdout
	local rc=$1; shift
	[ "$rc" -eq 3 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "^evictd is not running: .*$*" "$tmp/err" &&
		[ ! -s "$tmp/out" ] || { echo "# rc=$rc"; sed 's/^/# /' "$tmp/err" "$tmp/out"; return 1; }
}

st --status; ok "no status file: exit 3, 'not running', does not exist" one_line_not_running $? "does not exist"

"$EVICTD" --config "$tmp/evictd.conf" --cgroup-root "$FX/root" --proc-root "$FX/proc" \
	--metadata-dir "$FX/pods" --log-target stderr 2>"$tmp/log" &
D=$!
for _ in $(seq 100); do [ -s "$tmp/status.json" ] && break; sleep 0.05; done

running_status() {
	st --status || { sed 's/^/# /' "$tmp/err"; return 1; }
	[ "$(tail -c1 "$tmp/out" | od -An -c | tr -d ' ')" = '\n' ] || { echo "# no final newline"; return 1; }
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["pid"]==int(sys.argv[2]) and d["state"]=="running", d' \
		"$tmp/out" "$D"
}
ok "running daemon: its status as JSON with its pid, ending with a newline, exit 0" running_status

reload_waits() {
	local before; before=$(grep -c "Configuration reloaded" "$tmp/log")
	st --reload || { sed 's/^/# /' "$tmp/err"; return 1; }
	# --reload returns once the daemon has re-read the file, not merely after the signal.
	[ "$(grep -c "Configuration reloaded" "$tmp/log")" -gt "$before" ]
}
ok "--reload: the daemon has reloaded when it returns" reload_waits

reload_refused() {
	cp "$tmp/evictd.conf" "$tmp/good.conf"
	printf '[eviction-hard]\nmemory.available = lots\n' >>"$tmp/evictd.conf"
	local before; before=$(grep -c "Configuration" "$tmp/log")
	st --reload; local rc=$?
	cp "$tmp/good.conf" "$tmp/evictd.conf"
	sleep 0.3
	[ "$rc" -eq 1 ] && grep -q "Configuration rejected: $tmp/evictd.conf:10: .*; not reloading" "$tmp/err" &&
		[ "$(grep -c "Configuration" "$tmp/log")" -eq "$before" ] || { echo "# rc=$rc"; sed 's/^/# /' "$tmp/err"; return 1; }
}
ok "--reload with a bad file: exit 1 with file:line, the daemon is not signalled" reload_refused
reload_other() { st --reload=$$; [ $? -eq 3 ] && grep -q "pid $$ is not a running evictd" "$tmp/err"; }
ok "--reload=PID of something else: refused, exit 3" reload_other

kill -TERM "$D"; wait "$D"; D=
st --status; ok "after the daemon stopped: exit 3, 'has exited'" one_line_not_running $? "its pid [0-9]* has exited"

sleep 1000 & S=$!
python3 - "$tmp/status.json" "$S" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["pid"] = int(sys.argv[2]); d["state"] = "running"
open(sys.argv[1], "w").write(json.dumps(d))
PY
st --status; rc=$?
kill "$S"; wait "$S" 2>/dev/null
ok "a pid that is not evictd: exit 3" one_line_not_running $rc "now belongs to another program"
# A stopping daemon is not running (README): evictd alive, its status file saying "stopping". It
# stays stopping while an eviction command it started runs (commands keep their timeout), so the
# check is not a race: action = exec with a command that waits, SIGTERM once it runs.
cat >"$tmp/slow.sh" <<EOF
#!/bin/sh
echo "\$\$" >>"$tmp/calls"
exec sleep 60
EOF
chmod 0755 "$tmp/slow.sh"
cat >"$tmp/stopping.conf" <<EOF
[agent]
interval = 100ms
nodefs-path = /
imagefs-path = /
status-file = $tmp/status.json
action = exec
exec = $tmp/slow.sh {uid}
exec-fallback = none
[eviction-hard]
memory.available = 100Mi
EOF
rm -f "$tmp/status.json"
"$EVICTD" --config "$tmp/stopping.conf" --cgroup-root "$FX/root" --proc-root "$FX/proc" \
	--metadata-dir "$FX/pods" --log-target stderr 2>"$tmp/log" &
D=$!
for _ in $(seq 200); do [ -s "$tmp/calls" ] && break; sleep 0.05; done
ok "stopping: the daemon's eviction command runs" test -s "$tmp/calls"
kill -TERM "$D"
for _ in $(seq 200); do grep -q '"state":"stopping"' "$tmp/status.json" 2>/dev/null && break; sleep 0.05; done
"$EVICTD" --config "$tmp/stopping.conf" --status >"$tmp/out" 2>"$tmp/err"; rc=$?
ok "stopping: the daemon is alive, its status file says stopping" bash -c "kill -0 $D && grep -q '\"state\":\"stopping\"' '$tmp/status.json'"
ok "--status while the daemon is stopping: exit 3, 'is stopping', no JSON" one_line_not_running $rc "pid $D is stopping"
kill -TERM "$D"; wait "$D"; D=
while read -r p; do kill "$p" 2>/dev/null; done <"$tmp/calls"
done_testing
