#!/bin/bash
# preemptctl loading a cluster snapshot, side by side with what a user would reach for, in one run:
# python3's json.load and `jq length` on the same kubectl-style List (tests/bench/gen-cluster.py),
# then the scaling of preemptctl at 500 / 5000 / 15000 nodes (4 pods per node) and the memory of
# the decoded model per node and per pod (from runs with 0 and 4 pods per node).
# Wall time and peak RSS by /usr/bin/time; each figure is the best of RUNS (default 3) runs.
#   tests/bench/bench-load.sh [BUILD_DIR]        (make bench runs it)
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${1:-${BUILD:-build}}
P=$B/preemptctl
RUNS=${RUNS:-3}
[ -x "$P" ] || { echo "bench-load: $P not built" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench-load: /usr/bin/time missing (package time), skipped"; exit 0; }
tmp=$(mktemp -d /tmp/bench-load.XXXXXX); trap 'rm -rf "$tmp"' EXIT
NOW=--now=2024-06-01T00:00:00Z

best() {	# best LABEL CMD...: prints "LABEL wall_s rss_mb" (minimum of RUNS runs each)
	local label=$1; shift
	local w=999 m=999999 i
	for ((i = 0; i < RUNS; i++)); do
		/usr/bin/time -f '%e %M' -o "$tmp/t" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; return 1; }
		read -r tw tm <"$tmp/t"
		w=$(awk -v a="$w" -v b="$tw" 'BEGIN { print (b < a ? b : a) }')
		m=$(( tm < m ? tm : m ))
	done
	echo "$label $w $((m / 1024))"
}

gen() {	# gen NODES PODS_PER_NODE [--yaml] -> file name
	local f=$tmp/c-$1-$2${3:+-yaml}.${3:+yaml}
	f=${f%.}; [ -n "${3:-}" ] || f=$f.json
	[ -e "$f" ] || python3 tests/bench/gen-cluster.py --nodes "$1" --pods-per-node "$2" ${3:-} >"$f"
	echo "$f"
}

f=$(gen 5000 4)
y=$(gen 5000 4 --yaml)
echo "Input: $(basename "$f") $(( $(stat -c %s "$f") / 1000000 )) MB JSON, 5000 nodes, 20,001 pods; $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
echo
echo "| program | wall (s) | peak RSS (MB) |"
echo "|---|---:|---:|"
for row in \
	"$(best 'preemptctl preempt (JSON)' "$P" preempt "$f" --pod default/preemptor $NOW)" \
	"$(best 'preemptctl check (JSON)' "$P" check "$f")" \
	"$(best 'python3 json.load' python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$f")" \
	"$(best 'jq length' jq length "$f")" \
	"$(best "preemptctl preempt (YAML, $(( $(stat -c %s "$y") / 1000000 )) MB)" "$P" preempt "$y" --pod default/preemptor $NOW)"; do
	read -r -a a <<<"$row"
	n=${#a[@]}
	echo "| ${a[*]:0:n-2} | ${a[n-2]} | ${a[n-1]} |"
done
echo
echo "Scaling (JSON, 4 pods per node):"
echo
echo "| nodes | pods | MB in | wall (s) | peak RSS (MB) |"
echo "|---:|---:|---:|---:|---:|"
for n in 500 5000 15000; do
	g=$(gen $n 4)
	read -r _ w m <<<"$(best x "$P" check "$g")"
	echo "| $n | $((n * 4 + 1)) | $(( $(stat -c %s "$g") / 1000000 )) | $w | $m |"
done
echo
# model memory: peak RSS differences between 5000 and 15000 nodes, without and with pods
read -r _ _ m0a <<<"$(best x "$P" check "$(gen 5000 0)")"
read -r _ _ m0b <<<"$(best x "$P" check "$(gen 15000 0)")"
read -r _ _ m4a <<<"$(best x "$P" check "$(gen 5000 4)")"
read -r _ _ m4b <<<"$(best x "$P" check "$(gen 15000 4)")"
per_node=$(( (m0b - m0a) * 1024 * 1024 / 10000 ))
per_pod=$(( ((m4b - m4a) - (m0b - m0a)) * 1024 * 1024 / 40000 ))
echo "Decoded model (preemptctl's structs + libpreempt's cluster, peak RSS slope): ~$per_node bytes per node, ~$per_pod bytes per pod"
