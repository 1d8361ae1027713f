#!/bin/bash
# The small words that sent readers astray (issue 36.9), kept true:
#   - the snapshot command is the same wherever it is shown — preemptctl --help, preemptctl(1),
#     docs/preemptctl.md, examples/README.md and the hint for a missing snapshot — and names the
#     five kinds --kubeconfig reads (priorityclasses, nodes, pods, pdb, resourcequota);
#   - preemptd(8) names /etc/evictd/preemptd.kubeconfig, which its unit requires;
#   - preemptctl(1) SEE ALSO names preemptd(8), evictd(8) names evictd-kube(8).
# (The start line "preemptd: Started: ..." is checked by tests/project/test-run-preemptd.sh, the
# demonstration's heartbeat without a pid by tests/project/test-demo-ctrl-c.sh.)
. "$(dirname "$0")/../lib.sh"
PCTL=$BUILD/preemptctl
[ -x "$PCTL" ] || skip_all "$PCTL not built"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
want='kubectl get priorityclasses,nodes,pods,pdb,resourcequota -A -o json'
snapshots() {	# every "kubectl get priorityclasses..." of FILE, one a line, roff escapes undone
	grep -oE 'kubectl get priorityclasses[^ ]* (\\)?-A (\\)?-o json' "$1" | sed 's/\\-/-/g'
}
"$PCTL" --help > "$tmp/help" 2>&1
"$PCTL" preempt "$tmp/none.json" > "$tmp/hint" 2>&1
for f in "$tmp/help" man/preemptctl.1 docs/preemptctl.md examples/README.md "$tmp/hint"; do
	name=${f#"$tmp/"}
	case $name in help) name="preemptctl --help" ;; hint) name="the hint for a missing snapshot" ;; esac
	ok "$name shows '$want', and no other" \
		eval '[ -n "$(snapshots "$f")" ] && [ -z "$(snapshots "$f" | grep -vxF -- "$want")" ]'
done
ok "preemptd(8) names /etc/evictd/preemptd.kubeconfig, which its unit requires" \
	eval 'grep -q "^LoadCredential=kubeconfig:/etc/evictd/preemptd.kubeconfig$" systemd/preemptd.service &&
	      grep -q "^\.It Pa /etc/evictd/preemptd\.kubeconfig$" man/preemptd.8'
see_also() { awk '/^\.Sh SEE ALSO/ { f = 1; next } /^\.Sh / { f = 0 } f' "$1" | grep -q "^\.Xr $2 $3"; }
ok "preemptctl(1) SEE ALSO names preemptd(8)" see_also man/preemptctl.1 preemptd 8
ok "evictd(8) SEE ALSO names evictd-kube(8)" see_also man/evictd.8 evictd-kube 8
done_testing
