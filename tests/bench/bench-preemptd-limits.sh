#!/bin/bash
# preemptd's controller loop (build/bench/bench-preemptd, see its comment) from scheduler_perf's
# 5000 nodes / 20,000 pods up to Kubernetes' published limits: 5000 nodes and 150,000 pods (30 a
# node), in one run, side by side: 4, 15 and 30 pods a node (20,000, 75,000, 150,000 pods), every
# node as full as scheduler_perf's (3600m of 4 cpu asked), so that a 3000m preemptor needs 3, 11
# and 22 victims among its node's pods. Per shape: load time and the live model's heap against
# preemptctl's decoded objects, pods bound per CPU-second, preemptions per CPU-second, the same
# beside 250 PodDisruptionBudgets (--pdb prefer), and a relist after 410 Gone with every preemptor
# nominated: how long preemptd is blind (the 410 to the model synced, wall and CPU seconds; the
# queue and the nominations kept, the pods deleted meanwhile gone: the bench fails otherwise),
# the lists answered in pages of 500 (from storage) and whole (the watch cache).
#   tests/bench/bench-preemptd-limits.sh          LIMITS_PODS_PER_NODE="4 15 30" NODES=5000
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
NODES=${NODES:-5000}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
printf '%-8s %-8s %-8s %-10s %-28s %-18s %-18s %-18s %-10s %-32s\n' nodes pods victims "load s" \
	"model MiB / decoded MiB" "binds/CPU-s" "preempt/CPU-s" "w/ PDBs/CPU-s" "shadow" \
	"relist blind s/CPU-s paged, whole"
for k in ${LIMITS_PODS_PER_NODE:-4 15 30}; do
	rm -rf "${d:?}"/*
	python3 tests/bench/gen-cluster.py --watch-dir "$d" --nodes "$NODES" --pods-per-node "$k" --fit 10000 --preemptors 2000
	v=$(python3 tests/bench/gen-cluster.py --pods-per-node "$k" --victims-needed)
	BENCH_VICTIMS=$v "$BUILD/bench/bench-preemptd" "$d" >"$d/out" 2>&1 || { cat "$d/out"; exit 1; }
	awk -v nodes="$NODES" -v pods=$((NODES * k)) -v v="$v" '
		/^load:/ { for (i = 1; i <= NF; i++) { if ($i == "in") ls = $(i + 1); if ($i == "model") mm = $(i + 1);
		           if ($i == "cluster") dm = $(i + 1); } ratio = $NF }
		/^schedule:/ { for (i = 1; i <= NF; i++) if ($i == "pods" && $(i + 1) == "per") bs = $(i - 1) }
		/^preempt, kube-scheduler/ { for (i = 1; i <= NF; i++) if ($i == "per" && $(i + 1) == "CPU-second") ps = $(i - 1) }
		/^budgets, --pdb prefer/ { for (i = 1; i <= NF; i++) if ($i == "per" && $(i + 1) == "CPU-second") bp = $(i - 1) }
		/^shadow: .* preempt decisions/ { sh = "agrees" }
		function blind(  i, w, c) { for (i = 1; i <= NF; i++) { if ($i == "synced" && $(i + 1) == "in") w = $(i + 2)
		                            if ($i == "of" && $(i + 1) == "CPU" && c == "") c = $(i - 2) } return w "/" c }
		/^relist, storage: 410 Gone/ { rp = blind() }
		/^relist, watch cache: 410 Gone/ { rw = blind() }
		END { printf "%-8s %-8s %-8s %-10s %-28s %-18s %-18s %-18s %-10s %-32s\n", nodes, pods, v, ls,
		      mm " / " dm " " ratio, bs, ps, bp, sh, rp ", " rw }' "$d/out"
	[ -n "${LIMITS_VERBOSE:-}" ] && sed 's/^/    /' "$d/out"
done
