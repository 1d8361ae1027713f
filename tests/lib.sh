# Shared helpers for shell tests: TAP output that scripts/run-tests.sh counts.
# Usage: . "$(dirname "$0")/../lib.sh"; ok "name" cmd...; skip_all "reason"
_tap_n=0
_tap_failed=0
BUILD=${BUILD:-build}
# In the name of every cgroup a test creates (evictd-<what>-$TEST_TAG): the test run's id, by which
# scripts/run-tests.sh finds any left behind. Scratch files go under $TMPDIR (mktemp -t / -d).
TEST_TAG=${EVICTD_TEST_RUN:-norun}-$$
ok() {	# ok NAME COMMAND...: passes when COMMAND exits 0
	local name=$1; shift
	_tap_n=$((_tap_n + 1))
	if "$@"; then echo "ok $_tap_n - $name"; else echo "not ok $_tap_n - $name"; _tap_failed=1; fi
}
skip() {	# skip NAME REASON
	_tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $1 # SKIP $2"
}
skip_all() {	# the whole file cannot run here
	echo "skipped: $*"; exit 77
}
bail() {	# bail WHAT: a failed check that makes the rest pointless (our own tool broke): not a skip
	_tap_n=$((_tap_n + 1)); echo "not ok $_tap_n - $*"; echo "1..$_tap_n"; exit 1
}
# env_or_fail RC WHAT: after a helper failed with status RC: 77 means the machine cannot give it
# (the helper saw EPERM, EACCES, EROFS or ENOENT: no root, no writable cgroup v2) and skips the
# file; any other status is a failure (an EBUSY or a broken helper must not read as a skip).
env_or_fail() {
	if [ "$1" = 77 ]; then skip_all "$2"; fi
	bail "$2 (exit $1: not a missing privilege or cgroup v2)"
}
# mkdir_cg DIR...: mkdir -p for test cgroups; skips the file when the kernel refuses for want of
# privilege or a writable cgroup v2, fails on any other error.
mkdir_cg() {
	local err
	err=$(LC_ALL=C mkdir -p "$@" 2>&1) && return 0
	case "$err" in
	*"Permission denied"* | *"Operation not permitted"* | *"Read-only file system"* | *"No such file or directory"*)
		skip_all "cannot create cgroups: $err" ;;
	esac
	bail "cannot create cgroups: $err"
}
need_mount_ns() {	# skips the file unless a private mount namespace can be made here
	command -v unshare > /dev/null || skip_all "unshare missing (package util-linux)"
	# Fails where / is not a mount point (a plain chroot): propagation cannot be changed there.
	unshare -m --propagation private true 2> /dev/null ||
		skip_all "cannot create a private mount namespace here (unshare -m --propagation private)"
}
done_testing() {
	echo "1..$_tap_n"; exit $_tap_failed
}
