#!/bin/bash
# preemptd's controller loop at scheduler_perf's 5000-node shape (make bench): recorded watch
# streams from gen-cluster.py --watch-dir, replayed by build/bench/bench-preemptd (see its
# comment), then the end-to-end time from a pod's creation to its binding through the stand-in
# API server (bench-preemptd-e2e.sh).
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
python3 tests/bench/gen-cluster.py --watch-dir "$d" --nodes "${NODES:-5000}" --fit "${FIT:-10000}" \
	--preemptors "${PREEMPTORS:-2000}"
"$BUILD/bench/bench-preemptd" "$d"
BUILD=${BUILD:-build} tests/bench/bench-preemptd-e2e.sh
