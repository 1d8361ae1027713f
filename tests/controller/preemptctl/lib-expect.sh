# Sourced by tests/controller/preemptctl/test-*.sh (after tests/lib.sh, with $tmp set to a scratch directory).
# expect RC STDOUT STDERR CMD...: exact stdout and stderr ("*" = anything, "~TEXT" = contains TEXT)
expect() {
	local rc=$1 out=$2 err=$3 got_rc got_out got_err; shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"; got_rc=$?
	got_out=$(cat "$tmp/out"); got_err=$(cat "$tmp/err")
	local bad=0
	[ "$got_rc" = "$rc" ] || { echo "# exit $got_rc, want $rc"; bad=1; }
	[ "$out" = "*" ] || [ "$got_out" = "$out" ] || { echo "# stdout:"; diff <(echo "$out") <(echo "$got_out") | sed 's/^/#   /'; bad=1; }
	case "$err" in
	"*") ;;
	"~"*) [[ "$got_err" == *"${err#\~}"* ]] || { echo "# stderr lacks '${err#\~}':"; sed 's/^/#   /' "$tmp/err"; bad=1; } ;;
	*) [ "$got_err" = "$err" ] || { echo "# stderr:"; diff <(echo "$err") <(echo "$got_err") | sed 's/^/#   /'; bad=1; } ;;
	esac
	return $bad
}
