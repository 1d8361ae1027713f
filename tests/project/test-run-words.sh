#!/bin/bash
# What ./run says (README "The two commands"): `./run --help` answers which mode this machine gets
# on a fresh clone, nothing built — the same answer as once evictd is built; `./run`'s first line
# is the mode line, the build before it quiet; a build that fails shows its output and stops.
# Runs on a copy of the tree (with a copy of build/, one source touched so that make has work).
. "$(dirname "$0")/../lib.sh"

[ -x "$BUILD/evictd" ] || skip_all "$BUILD/evictd not built"
[ "$BUILD" = build ] || skip_all "./run builds into build/, not $BUILD"
command -v git >/dev/null || skip_all "git missing (the copy is of the tracked files)"
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || skip_all "not a git work tree"
T=$(mktemp -d)
RPID=
cleanup() {
	[ -n "$RPID" ] && { kill -KILL -- "-$RPID"; wait "$RPID"; } 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

# A fresh clone, as far as ./run can tell: the tracked files as they are now, no build/.
git ls-files -z | tar --null -T - -cf - | tar -C "$T" -xf - || bail "copying the tracked files"
[ ! -e "$T/build" ] || bail "the copy has no build/"

# --- ./run --help before anything is built ---------------------------------------------------------
(cd "$T" && ./run --help) > "$T/help.out" 2>&1
rc=$?
ok "./run --help on a fresh clone exits 0" test "$rc" = 0
answer() { sed -n 's/^On this machine \.\/run chooses \(--[a-z]*\): .*/\1/p' "$1"; }
ok "...and says which mode this machine gets" test -n "$(answer "$T/help.out")"
ok "...not that evictd is not built" bash -c "! grep -qi 'not built' '$T/help.out'"
ok "...and built nothing" test ! -e "$T/build"
./run --help > "$T/help-built.out" 2>&1
ok "the same answer as evictd's own discovery once built ($(answer "$T/help-built.out"))" \
	test "$(answer "$T/help.out")" = "$(answer "$T/help-built.out")"

# --- ./run: the mode line first, the build quiet -----------------------------------------------------
cp -a build "$T/build"
touch "$T/agent/evictd/evictd.c"   # make has something to compile and link
first_line() {	# first_line FILE: waits (20 s) for a first complete line in FILE
	local i
	for ((i = 0; i < 200; i++)); do [ "$(wc -l < "$1")" -ge 1 ] && break; sleep 0.1; done
	head -n1 "$1"
}
# --monitor: the mode this test can stop at once (dry-run; the demonstration builds a sandbox).
# As root the monitoring keeps its status file and lock in /run/evictd: a /run of its own here.
private_run=()
if [ "$(id -u)" = 0 ]; then
	unshare -m --propagation private true 2>/dev/null ||
		skip_all "cannot create a private mount namespace here (for a /run of the test's own)"
	private_run=(unshare -m --propagation private -- sh -c 'mount -t tmpfs evictd-test-run /run && exec "$@"' sh)
fi
: > "$T/run.out"
set -m
(cd "$T" && exec "${private_run[@]}" ./run --monitor) > "$T/run.out" 2>&1 < /dev/null &
RPID=$!
set +m
line=$(first_line "$T/run.out")
echo "# first line: $line"
ok "./run's first line is the mode line" test "$line" = "run: --monitor: monitoring this machine in dry-run"
kill -INT -- "-$RPID" 2>/dev/null
for _ in $(seq 50); do kill -0 "$RPID" 2>/dev/null || break; sleep 0.1; done
kill -KILL -- "-$RPID" 2>/dev/null; wait "$RPID" 2>/dev/null; RPID=
ok "...after a build that compiled (evictd was relinked)" test "$T/build/evictd" -nt "$T/agent/evictd/evictd.c"
ok "...quietly: no compiler line anywhere" bash -c "! grep -qE '^(cc|gcc|ar) ' '$T/run.out'"

# --- a failing build shows its output ------------------------------------------------------------------
echo '#error deliberately broken by test-run-words' >> "$T/agent/evictd/evictd.c"
(cd "$T" && timeout 120 "${private_run[@]}" ./run --monitor) > "$T/fail.out" 2>&1 < /dev/null
rc=$?
ok "a failing build: ./run exits 1" test "$rc" = 1
ok "...showing the compiler's error" grep -q 'deliberately broken by test-run-words' "$T/fail.out"
ok "...and saying the build failed" grep -q '^\./run: the build failed' "$T/fail.out"
ok "...and nothing was run" bash -c "! grep -q '^run: ' '$T/fail.out'"
done_testing
