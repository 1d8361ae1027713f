#!/bin/bash
# The newcomer's path to preemptd (README "Try each in a minute"), run as written: `./run --preemptd`
# in its own process group, as a terminal runs it. Asserts what a person must see — a pod bound,
# one reported unschedulable in kube-scheduler's words, the preemption for the high-priority pod
# with its victim and why that node (the PodDisruptionBudget spared), the tables `kubectl get
# pods -o wide` and `kubectl get events` would print — then Ctrl-C (SIGINT to the group): stopped
# within 2 s, exit 0, "teardown checked", nothing left (no process, no directory).
. "$(dirname "$0")/../lib.sh"

[ -x "$BUILD/preemptd" ] || skip_all "$BUILD/preemptd not built"
[ "$BUILD" = build ] || skip_all "./run builds into build/, not $BUILD"
command -v python3 >/dev/null || skip_all "python3 missing"
why=$(python3 scripts/demo-preemptd.py --check) || skip_all "./run --preemptd cannot run here: $why"

T=$(mktemp -d)
OUT=$T/out
RPID=
cleanup() {
	[ -n "$RPID" ] && { kill -KILL -- "-$RPID"; wait "$RPID"; } 2> /dev/null
	rm -rf "$T"
}
trap cleanup EXIT
wait_for() { local end=$((SECONDS + $1)); shift; until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.1; done; }
no_process() {	# nothing runs with the directory on its command line
	local f
	for f in /proc/[0-9]*/cmdline; do
		tr '\0' ' ' 2> /dev/null < "$f" | grep -qF -- "$DIR" && { echo "# left: $f"; return 1; }
	done
	return 0
}
out_has() { grep -qE -- "$1" "$OUT"; }

ok "./run --help names --preemptd" eval './run --help 2>&1 | grep -q "^  --preemptd preemptd, not in dry-run, against a throwaway API server"'
set -m
./run --preemptd > "$OUT" 2>&1 < /dev/null &
RPID=$!
set +m
ok "it reaches 'keeps running' (within 120 s)" wait_for 120 out_has '^preemptd keeps running against the API server'
sed 's/^/# /' "$OUT"
DIR=$(sed -n 's/^  API server: .* its state and logs in \(.*\)$/\1/p' "$OUT")
ok "it names its directory" test -n "$DIR"
ok "preemptd's start line names it once ('preemptd: Started: scheduling pods ...')" \
	eval 'out_has "preemptd: Started: scheduling pods with schedulerName preemptd, API server https://127\.0\.0\.1:" && ! out_has "preemptd: preemptd started"'
ok "preemptd binds report (its line)" out_has 'preemptd: Bound pod default/report to node node-a'
ok "huge is unschedulable, in kube-scheduler's words" \
	out_has '^huge: PodScheduled=False, Unschedulable: 0/2 nodes are available: 2 Insufficient cpu\.'
ok "the preemption: batch-1 on node-b, node-a spared for its PodDisruptionBudget" \
	out_has 'preemptd: Preempting 1 pod on node node-b for pod default/critical \(priority 1000000\): default/batch-1\. .*fewest PDB violations: 0 against 1 on node-a'
ok "a 'kubectl get pods -o wide' table: critical Running on node-b" \
	out_has '^critical +1/1 +Running +0 +[0-9]+s +[0-9.]+ +node-b '
ok "a 'kubectl get events' table: batch-1 Preempted" out_has '^[0-9]+s +Normal +Preempted +pod/batch-1 +Preempted by pod '
ok "...critical's FailedScheduling with the explanation" \
	out_has '^[0-9]+s +Warning +FailedScheduling +pod/critical +0/2 nodes are available: 2 Insufficient cpu\. Preempting on node node-b'
ok "the summary" out_has '^  critical bound to node-b; preempted: batch-1; web-1 kept'
ok "the servers are running" eval '! no_process > /dev/null'

# What docs/preemptd.md suggests doing while it runs, with kubectl: a second critical pod, for which
# preemptd breaks the budget (no other node helps), and says so.
if command -v kubectl > /dev/null; then
	kc=$(sed -n 's/^  KUBECONFIG=\([^ ]*\) kubectl get pods -o wide$/\1/p' "$OUT")
	# validation from OpenAPI v3 from kubectl 1.27 on; an older one (Debian 12's 1.20) validates
	# from v2, which the stand-in serves without schemas (docs/preemptd.md says so)
	minor=$(kubectl version --client -o json 2>/dev/null | jq -r '.clientVersion.minor' | tr -dc 0-9)
	validate=""
	[ "${minor:-0}" -lt 27 ] && validate=--validate=false && echo "# kubectl 1.${minor:-?}: applied with --validate=false"
	ok "kubectl apply, as docs/preemptd.md shows it (validation on from kubectl 1.27)" eval '
		sed "s/name: critical\$/name: critical-2/" examples/preemptd/critical.yaml |
			KUBECONFIG="$kc" kubectl --cache-dir "$T/kcache" apply $validate -f - > "$T/kubectl" 2>&1'
	sed 's/^/# /' "$T/kubectl"
	ok "...preemptd preempts web-1 on node-a, the budget violated, and says so" wait_for 20 out_has \
		'preemptd: Preempting 1 pod on node node-a for pod default/critical-2 .*default/web-1 \(priority 1000 < 1000000; violates PodDisruptionBudget default/web \(0 disruptions allowed\)\)'
else
	skip "kubectl apply while it runs" "kubectl not installed"
fi

t0=$EPOCHREALTIME
kill -INT -- "-$RPID"
wait_for 30 bash -c "! kill -0 -- -$RPID 2> /dev/null"
ms=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%d", (b - a) * 1000 }')
echo "# stopped $ms ms after SIGINT"
ok "Ctrl-C stops it within 2 s (took $ms ms)" test "$ms" -le 2000
rc=
kill -0 -- "-$RPID" 2> /dev/null || { wait "$RPID"; rc=$?; RPID=; }
ok "exit status 0" test "$rc" = 0
ok "it says it checked that nothing is left" out_has '^teardown checked: no process .* no file .* left$'
ok "its directory is gone" test ! -e "$DIR"
ok "no process of it is left" no_process
done_testing
