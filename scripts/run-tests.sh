#!/bin/bash
# Runs every test program and shell test, counts individual test cases (TAP lines from cmocka
# and from tests/lib.sh) and ends with the one line CI reads: "N passed, N failed, N skipped".
# A program that exits 77 is skipped as a whole (it says why); a program that crashes or exits
# non-zero without reporting a failed case still counts as one failure.
set -u
pass=0 fail=0 skip=0
failed_names=()
out=$(mktemp); trap 'rm -f "$out"' EXIT
export CMOCKA_MESSAGE_OUTPUT=TAP
export BUILD=${BUILD:-build}
for t in "$@"; do
	case "$t" in *.sh) cmd=(bash "$t") ;; *) cmd=("./$t") ;; esac
	timeout --kill-after=10 "${TEST_TIMEOUT:-600}" "${cmd[@]}" >"$out" 2>&1
	rc=$?
	p=$(grep -cE '^ok [0-9]+' "$out" | head -1)
	# cmocka 1.1 prints a skipped test as "not ok N # SKIP": a skip, not a failure.
	s=$(grep -cE '^(not )?ok [0-9]+.*# (SKIP|skip)' "$out" | head -1)
	f=$(grep -E '^not ok [0-9]+' "$out" | grep -cvE '# (SKIP|skip)' | head -1)
	p=$((p - $(grep -cE '^ok [0-9]+.*# (SKIP|skip)' "$out" | head -1)))
	if [ "$rc" -eq 77 ]; then
		skip=$((skip + 1))
		echo "SKIP $t: $(grep -m1 -i 'skip' "$out" || tail -n1 "$out")"
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
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
