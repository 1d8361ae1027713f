#!/bin/bash
# Chaos run (issue 38): two preemptd replicas with a Lease against the stand-in API server, a
# stream of pods, and kills, SIGTERMs, API errors, broken watches, 410 Gone, slow bindings and
# deleted nodes at moments a seeded generator picks; then the whole request log is checked
# (tests/chaos/chaos.py says what). TAP: one test per seed.
#
#   tests/chaos/chaos.sh                      one run of CHAOS_SECONDS (60) with a random seed
#   CHAOS_SEED=1234 tests/chaos/chaos.sh      replay a seed (several: CHAOS_SEED="1 2 3")
#   CHAOS_SECONDS=120 CHAOS_RUNS=3 tests/chaos/chaos.sh    three random seeds of two minutes
#   CHAOS_SPLIT_BRAIN=1 tests/chaos/chaos.sh   each replica its own Lease: the checks must fail
# `make chaos` runs it; BUILD=build-san picks the sanitizer build.
cd "$(dirname "$0")/../.." || exit 1
BUILD=${BUILD:-build}
. tests/lib.sh
. tests/kube/lib-apiserver.sh
. tests/controller/preemptd/lib-preemptd.sh
pd_require
SECONDS_EACH=${CHAOS_SECONDS:-60}
SEEDS=${CHAOS_SEED:-}
if [ -z "$SEEDS" ]; then
	for ((i = 0; i < ${CHAOS_RUNS:-1}; i++)); do SEEDS="$SEEDS $(( (RANDOM << 15) | RANDOM ))"; done
fi
for seed in $SEEDS; do
	pd_setup --podgc-delay 2
	echo "# chaos: seed $seed, ${SECONDS_EACH}s (replay: CHAOS_SEED=$seed $0)"
	"$PY" tests/chaos/chaos.py --ctl "$KUBE_CTL" --kube-dir "$KUBE_DIR" --kubeconfig "$KUBE_DIR/kubeconfig-admin" \
		--preemptd "$PD" --dir "$T" --seed "$seed" --seconds "$SECONDS_EACH" ${CHAOS_SPLIT_BRAIN:+--split-brain} >"$T/chaos.out" 2>&1
	rc=$?
	sed 's/^/# /' "$T/chaos.out" | grep -E '^# chaos: VIOLATION' | head -20
	sed 's/^/# /' "$T/chaos.out" | grep -E '^# chaos: (seed [0-9]+,|violations by kind)'
	ok "seed $seed: no violation over the request log" [ $rc -eq 0 ]
	[ $rc -ne 0 ] && [ -n "${CHAOS_KEEP:-}" ] && cp -r "$T" "$CHAOS_KEEP.$seed" && cp "$KUBE_DIR/requests.jsonl" "$CHAOS_KEEP.$seed/"
	pd_cleanup
	trap - EXIT
done
done_testing
