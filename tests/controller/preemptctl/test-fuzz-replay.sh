#!/bin/bash
# Replays every saved fuzz input of the Kubernetes-objects target (tests/fuzz/{regressions,corpus}/k8s)
# through the real preemptctl: `check` must answer 0 (accepted) or 1 (rejected, with a message)
# within 10 s — never crash, hang or leak (under SANITIZE=1). Pending findings (tests/fuzz/pending/k8s)
# are reported as skips until fixed.
. "$(dirname "$0")/../../lib.sh"
P=$BUILD/preemptctl
[ -x "$P" ] || skip_all "$P not built"
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0}
out=$(mktemp); trap 'rm -f "$out"' EXIT

replay() {	# replay FILE: 0 or 1 with a message, no sanitizer report
	local rc
	timeout -k 5 "${T:-10}" "$P" check "$1" >"$out" 2>&1; rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then echo "# $1: exit $rc"; tail -n 5 "$out" | sed 's/^/#   /'; return 1; fi
	if grep -qE 'Sanitizer|runtime error' "$out"; then echo "# $1: sanitizer report"; grep -m3 -E 'ERROR|runtime error' "$out" | sed 's/^/#   /'; return 1; fi
	if [ $rc -eq 1 ] && ! [ -s "$out" ]; then echo "# $1: rejected without a message"; return 1; fi
	return 0
}

n=0
for f in tests/fuzz/regressions/k8s/* tests/fuzz/corpus/k8s/*; do
	[ -f "$f" ] || continue
	ok "preemptctl check $(basename "$(dirname "$f")")/$(basename "$f")" replay "$f"
	n=$((n + 1))
done
[ $n -gt 0 ] || ok "saved k8s fuzz inputs exist" false
for f in tests/fuzz/pending/k8s/*; do
	[ -f "$f" ] || continue
	if T=3 replay "$f" >/dev/null 2>&1; then
		ok "pending $(basename "$f") now passes: move it to tests/fuzz/regressions/k8s/" false
	else
		skip "preemptctl check pending/$(basename "$f")" "pending finding (tests/fuzz/FINDINGS.md)"
	fi
done
done_testing
