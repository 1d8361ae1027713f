#!/bin/bash
# Runs every test program and shell test, counts individual test cases (TAP lines from cmocka
# and from tests/lib.sh) and ends with the one line CI reads: "N passed, N failed, N skipped".
# A program that exits 77 without a failed case is skipped from there on (it says why; the cases
# it passed before count); any "not ok" makes the file a failure whatever its exit status (a
# skip_all after a failed check is a failure, not a skip); a program that crashes or exits
# non-zero without reporting a failed case still counts as one failure.
#
# Before the last line, one line names the slowest tests with their seconds (where CI's time goes).
#
# Tests leave nothing behind. Every test process carries EVICTD_TEST_RUN=<this run> in its
# environment and gets TMPDIR=<a directory of this run>; cgroups a test creates carry the run's
# id in their name. At the end, each of these still there is a failure with a "left behind:" line
# naming it: a process with this run's mark, a mount point under the run's TMPDIR, a cgroup
# with the id, a file in the run's TMPDIR or a new /tmp/evictd* entry. (While another run is active
# on the machine, /tmp entries cannot be told apart and are not compared.) A mount that appeared
# elsewhere is named in a "note:" line and left alone: it may be another program's. Left-behind
# cgroups are removed if empty. Left-behind processes are then killed, so that the run itself
# leaves nothing either.
set -u
pass=0 fail=0 skip=0
failed_names=()
EVICTD_TEST_RUN=run$$x$(date +%s%N)
export EVICTD_TEST_RUN
TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/evictd-tests.XXXXXX")
out=$(mktemp); trap 'rm -f "$out"; rm -rf --one-file-system "$TEST_TMP"' EXIT
export CMOCKA_MESSAGE_OUTPUT=TAP
export BUILD=${BUILD:-build}

mount_points() { awk '{ print $5 }' /proc/self/mountinfo | sort; }
# marked_pids VALUE-REGEX: processes but this one whose EVICTD_TEST_RUN matches (the glob is
# expanded here, before grep starts, so grep never lists itself).
marked_pids() {
	local f list=$TEST_TMP.pids.$BASHPID
	grep -lzxE "EVICTD_TEST_RUN=$1" /proc/[0-9]*/environ > "$list" 2> /dev/null
	while read -r f; do
		f=${f#/proc/}; f=${f%/environ}
		[ "$f" != $$ ] && [ "$f" != "$BASHPID" ] && echo "$f"
	done < "$list"
	rm -f "$list"
}
others_active() {	# another test run has processes right now (its mark, or an unmarked runner)
	local f list=$TEST_TMP.runners.$BASHPID
	[ -n "$(comm -23 <(marked_pids '.*' | sort) <(marked_pids "$EVICTD_TEST_RUN" | sort))" ] && return 0
	grep -lzE '(^|/)run-tests\.sh$' /proc/[0-9]*/cmdline > "$list" 2> /dev/null
	while read -r f; do
		f=${f#/proc/}; f=${f%/cmdline}
		[ "$f" != $$ ] && [ "$f" != "$BASHPID" ] && { rm -f "$list"; return 0; }
	done < "$list"
	rm -f "$list"
	return 1
}
mounts_before=$(mount_points)
tmp_evictd() { local f; for f in /tmp/evictd*; do [ -e "$f" ] && echo "${f#/tmp/}"; done | sort; }
tmp_before=$(tmp_evictd)
concurrent=no
others_active && concurrent=yes
export TMPDIR=$TEST_TMP
times=()
for t in "$@"; do
	case "$t" in *.sh) cmd=(bash "$t") ;; *) cmd=("./$t") ;; esac
	t0=$(date +%s%N)
	timeout --kill-after=10 "${TEST_TIMEOUT:-600}" "${cmd[@]}" >"$out" 2>&1
	rc=$?
	times+=("$((($(date +%s%N) - t0) / 100000000)) $t")
	p=$(grep -cE '^ok [0-9]+' "$out" | head -1)
	# cmocka 1.1 prints a skipped test as "not ok N # SKIP": a skip, not a failure.
	s=$(grep -cE '^(not )?ok [0-9]+.*# (SKIP|skip)' "$out" | head -1)
	f=$(grep -E '^not ok [0-9]+' "$out" | grep -cvE '# (SKIP|skip)' | head -1)
	p=$((p - $(grep -cE '^ok [0-9]+.*# (SKIP|skip)' "$out" | head -1)))
	# Exit 77 skips the rest of a file only when nothing failed before it: a file that printed
	# "not ok" is a failure whatever its exit status. The checks that passed before it count.
	if [ "$rc" -eq 77 ] && [ "$f" -eq 0 ]; then
		pass=$((pass + p)); skip=$((skip + s + 1))
		echo "SKIP $t: $(grep -m1 -iE '^skipped:|skip' "$out" || tail -n1 "$out")${p:+ (after $p passed)}" |
			sed 's/ (after 0 passed)$//'
		grep -E '# (SKIP|skip)' "$out" | sed 's/^/    /'
		continue
	fi
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
	if [ "$rc" -eq 0 ] && [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && [ "$s" -eq 0 ]; then p=1; fi
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
	if [ "$f" -gt 0 ]; then
		failed_names+=("$t")
		echo "FAIL $t (exit $rc)"; sed 's/^/    /' "$out"
	else
		echo "ok   $t: $p passed${s:+, $s skipped}" | sed 's/, 0 skipped//'
		grep -E '# (SKIP|skip)' "$out" | sed 's/^/    /'
	fi
done
# --- nothing left behind ---------------------------------------------------------------------
left=()
for _ in $(seq 20); do   # a process may still be on its way out
	[ -z "$(marked_pids "$EVICTD_TEST_RUN")" ] && break
	sleep 0.1
done
for p in $(marked_pids "$EVICTD_TEST_RUN"); do
	c=$(tr '\0' ' ' < "/proc/$p/cmdline" 2> /dev/null) || continue
	left+=("process $p: ${c:-?}")
	kill -KILL "$p" 2> /dev/null
done
others_active && concurrent=yes
# A mount under this run's directory is a test's: a failure, and unmounted. One elsewhere that
# appeared meanwhile may be another program's (a machine doing other work): said, never touched.
while read -r m; do
	[ -n "$m" ] || continue
	case "$m" in
	"$TEST_TMP"/*)
		left+=("mount $m")
		umount -l "$m" 2> /dev/null ;;
	*)
		echo "note: mount $m appeared during the run, outside this run's directory: not unmounted (a test's, or another program's)" ;;
	esac
done < <(comm -13 <(echo "$mounts_before") <(mount_points))
while read -r cg; do
	[ -n "$cg" ] || continue
	left+=("cgroup $cg")
	find "$cg" -depth -type d -exec rmdir {} + 2> /dev/null
done < <(awk '$0 ~ / - cgroup2? / { print $5 }' /proc/self/mountinfo | sort -u |
	while read -r m; do find "$m" -maxdepth 3 -type d -name "*$EVICTD_TEST_RUN*" -prune 2> /dev/null; done)
while read -r f; do
	[ -n "$f" ] && left+=("file $f")
done < <(find "$TEST_TMP" -mindepth 1 -maxdepth 1 2> /dev/null | sort)
if [ $concurrent = no ]; then
	while read -r f; do
		[ -n "$f" ] && [ "/tmp/$f" != "$TEST_TMP" ] && left+=("file /tmp/$f")
	done < <(comm -13 <(echo "$tmp_before") <(tmp_evictd))
fi
if [ ${#left[@]} -gt 0 ]; then
	printf 'left behind: %s\n' "${left[@]}"
	fail=$((fail + ${#left[@]}))
	failed_names+=("(left behind: ${#left[@]})")
fi
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
[ ${#times[@]} -gt 1 ] && printf '%s\n' "${times[@]}" | sort -rn | head -n 8 |
	awk '{ s = s (NR > 1 ? ", " : "") $2 " " int($1 / 10) "." $1 % 10 " s" } END { print "slowest: " s }'
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
