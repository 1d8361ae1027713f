#!/bin/bash
# ./check cleans up only what its tests made (issue 36.8): a mount another program makes while the
# tests run (outside the runner's own directory) is named in a note and left mounted; a mount a
# test leaves in the runner's directory is a "left behind:" failure, and unmounted.
# The runner runs in its own PID and mount namespaces (nothing of this test reaches the machine),
# where it sees no other test run: the case of a machine doing other work.
. "$(dirname "$0")/../lib.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root (mounts, namespaces)"
command -v unshare >/dev/null || skip_all "unshare missing"
unshare --mount --pid --fork --mount-proc --propagation private true 2>/dev/null ||
	skip_all "cannot create PID and mount namespaces here"
T=$(mktemp -d)
trap 'rm -rf --one-file-system "$T"' EXIT
mkdir "$T/runner" "$T/other"

# The test the runner runs: it lets the other program mount, then leaves a mount of its own.
cat > "$T/leaves-a-mount.sh" << 'EOF'
touch "$SIGNALS/started"
for _ in $(seq 200); do [ -e "$SIGNALS/mounted" ] && break; sleep 0.05; done
mkdir "$TMPDIR/leak" && mount -t tmpfs leak "$TMPDIR/leak"
echo "ok 1 - a test that leaves a mount"
echo "1..1"
EOF

# In the namespaces: the runner in the background; "another program" (this shell, without the
# test-run mark) mounts a tmpfs once the test has started; afterwards, is it still there?
env -u EVICTD_TEST_RUN SIGNALS="$T" TMPDIR="$T/runner" TOP="$PWD" unshare --mount --pid --fork --mount-proc \
	--propagation private bash -c '
	"$TOP/scripts/run-tests.sh" "$SIGNALS/leaves-a-mount.sh" > "$SIGNALS/out" 2>&1 &
	r=$!
	for _ in $(seq 200); do [ -e "$SIGNALS/started" ] && break; sleep 0.05; done
	mount -t tmpfs other-program "$SIGNALS/other" && touch "$SIGNALS/mounted"
	wait $r
	echo $? > "$SIGNALS/rc"
	mountpoint -q "$SIGNALS/other" && touch "$SIGNALS/other-still-mounted"
	grep -q " $SIGNALS/runner/evictd-tests[^ ]*/leak " /proc/self/mountinfo && touch "$SIGNALS/leak-still-mounted"
	umount "$SIGNALS/other" 2> /dev/null
	exit 0'
sed 's/^/# /' "$T/out"
ok "the other program could mount while the tests ran" test -e "$T/mounted"
ok "the other program's tmpfs is still mounted after the run" test -e "$T/other-still-mounted"
ok "...and the run names it in a note, without blaming a test" \
	grep -q "^note: mount $T/other appeared during the run, outside this run's directory: not unmounted" "$T/out"
ok "the test's own mount is reported left behind" grep -qE "^left behind: mount $T/runner/evictd-tests[^ ]*/leak$" "$T/out"
ok "...and unmounted" test ! -e "$T/leak-still-mounted"
ok "...and the run fails for it" test "$(cat "$T/rc")" != 0
done_testing
