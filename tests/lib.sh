# Shared helpers for shell tests: TAP output that scripts/run-tests.sh counts.
# Usage: . "$(dirname "$0")/../lib.sh"; ok "name" cmd...; skip_all "reason"
_tap_n=0
_tap_failed=0
BUILD=${BUILD:-build}
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
done_testing() {
	echo "1..$_tap_n"; exit $_tap_failed
}
