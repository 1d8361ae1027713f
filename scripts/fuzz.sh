#!/bin/bash
# `make fuzz`: builds every libFuzzer target tests/fuzz/fuzz-*.c with clang
# (-fsanitize=fuzzer,address,undefined; the project's objects with fuzzer-no-link), replays the
# saved regression inputs, then fuzzes each target for FUZZ_SECONDS (default 60) starting from its
# seed corpus. One line per target; exit 1 if any target crashed, leaked, hung or failed to build.
#
#   FUZZ_SECONDS=10 make fuzz            the CI smoke run
#   FUZZ_TARGETS="quantity config" ...   only these targets
#   FUZZ_JOBS=1                          parallel targets (default 1: the machine is shared)
#   FUZZ_MAX_LEN=16384                   input size of the main run
#   FUZZ_BIG_MAX_LEN=1048576             a second run per target with inputs this large, for
#   FUZZ_BIG_SECONDS=FUZZ_SECONDS/3      size-driven paths (limits, buffers, chunking); 0: none
#
# A target declares which archives it needs with a comment line "fuzz-links: lib agent controller"
# ("kube": the Kubernetes decoder alone; "controller" implies it; "evictd-kube": evictd-kube's
# archive, for its parsers).
# Crashing inputs land in build-fuzz/fuzz/artifacts/<target>/; copy them into
# tests/fuzz/regressions/<target>/ once fixed, so `make check` replays them forever.
set -uo pipefail
cd "$(dirname "$0")/.."

SECONDS_PER=${FUZZ_SECONDS:-60}
BF=${FUZZ_BUILD:-build-fuzz}
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
OBJ_CFLAGS="-g -O1 -fsanitize=fuzzer-no-link $SAN"
FUZZ_CFLAGS="-g -O1 -fsanitize=fuzzer $SAN -std=c11 -D_GNU_SOURCE -Ilib/include -Ilib -Iagent/common -Iagent/observe -Iagent/decide -Iagent/act -Iagent/report -Iagent/evictd -Iagent/evictd-kube -Icontroller/report -Icontroller/queue -Icontroller/model -Icontroller/cycle -Icontroller/watch -Icontroller/act -Icontroller/preemptctl -Ikube -Icri -I$BF/cri -Ibase -Itests/fuzz"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

scripts/ensure-deps.sh build fuzz || exit 1
command -v clang >/dev/null || { echo "fuzz: clang not found" >&2; exit 1; }

targets=()
for f in tests/fuzz/fuzz-*.c; do
	[ -e "$f" ] || continue
	n=$(basename "$f" .c); n=${n#fuzz-}
	if [ -n "${FUZZ_TARGETS:-}" ] && ! grep -qw -- "$n" <<<"$FUZZ_TARGETS"; then continue; fi
	targets+=("$n")
done
[ ${#targets[@]} -gt 0 ] || { echo "fuzz: no fuzz targets"; exit 0; }

# Which archives the selected targets need, built once with the Makefile's own rules.
need=""
for n in "${targets[@]}"; do
	need="$need $(sed -n 's/.*fuzz-links:\(.*\)\*\/.*/\1/p' "tests/fuzz/fuzz-$n.c" | head -1)"
done
grep -qw controller <<<"$need" && need="$need kube"
archives=()
for a in lib agent evictd-kube controller kube cri; do
	if grep -qw "$a" <<<"$need"; then
		case $a in
		lib) archives+=("$BF/libpreempt.a") ;;
		agent) archives+=("$BF/agent-evictd.a" "$BF/agent-report.a" "$BF/agent-act.a" "$BF/agent-decide.a" "$BF/agent-observe.a" "$BF/agent-common.a") ;;
		evictd-kube) archives+=("$BF/agent-evictd-kube.a" "$BF/agent-common.a") ;;
		controller) archives+=("$BF/controller-preemptctl.a" "$BF/controller-act.a" "$BF/controller-watch.a" "$BF/controller-cycle.a" "$BF/controller-model.a" "$BF/controller-queue.a" "$BF/controller-report.a") ;;
		kube) archives+=("$BF/kube.a") ;;
		cri) archives+=("$BF/cri.a") ;;
		esac
	fi
done
# base/ (clocks, array growth, curl on sd-event, the JSON writer) sits under every archive but libpreempt's.
grep -qwE 'agent|evictd-kube|controller|kube|cri' <<<"$need" && archives+=("$BF/base.a")
# preemptctl links the shared libpreempt (its internal symbols stay hidden), so controller
# targets do the same; the rest link the static archive, which reaches internal functions.
# (The Makefile's .so rule links with --no-undefined, which an ASan-instrumented shared object
# cannot satisfy: the runtime lives in the executable. So it is linked here.)
if grep -qw kube <<<"$need" && ! grep -qw lib <<<"${archives[*]##*/}"; then
	archives+=("$BF/libpreempt.a")
fi
mkdir -p "$BF/fuzz"
blog="$BF/fuzz/build.log"
if ! make -s B="$BF" FUZZ=1 CC=clang CFLAGS="$OBJ_CFLAGS" LDFLAGS="$SAN" "${archives[@]}" >"$blog" 2>&1; then
	echo "fuzz: building the instrumented archives failed:" >&2
	tail -n 40 "$blog" >&2
	exit 1
fi
pkglibs=""
grep -qw agent <<<"$need" && pkglibs="$pkglibs $(pkg-config --libs libsystemd libcgroup inih libfyaml yajl)"
grep -qw kube <<<"$need" && pkglibs="$pkglibs $(pkg-config --libs libfyaml yajl)"
grep -qw evictd-kube <<<"$need" && pkglibs="$pkglibs $(pkg-config --libs yajl)"
grep -qw controller <<<"$need" && pkglibs="$pkglibs $(pkg-config --libs libcurl libsystemd libmicrohttpd)"
grep -qw cri <<<"$need" && pkglibs="$pkglibs $(pkg-config --libs libprotobuf-c libcurl libsystemd)"
grep -qwE 'agent|evictd-kube|controller|kube|cri' <<<"$need" && pkglibs="$pkglibs $(pkg-config --libs libcurl libsystemd yajl)"
pkgcflags="$(pkg-config --cflags libsystemd libcgroup inih libfyaml yajl 2>/dev/null)"

if grep -qw kube <<<"$need"; then
	# shellcheck disable=SC2046
	clang -shared $SAN -fsanitize=fuzzer-no-link -Wl,-soname,libpreempt.so.0 -Wl,--version-script=lib/libpreempt.map \
		-o "$BF/fuzz/libpreempt.so.0" $(ar t "$BF/libpreempt.a" | sed "s|^|$BF/lib/|") >>"$blog" 2>&1 \
		&& ln -sf libpreempt.so.0 "$BF/fuzz/libpreempt.so" \
		|| { echo "fuzz: linking the instrumented libpreempt.so failed:" >&2; tail -n 20 "$blog" >&2; exit 1; }
fi

failed=0
for n in "${targets[@]}"; do
	src=tests/fuzz/fuzz-$n.c bin=$BF/fuzz/fuzz-$n
	work=$BF/fuzz/corpus/$n art=$BF/fuzz/artifacts/$n/ log=$BF/fuzz/$n.log
	mkdir -p "$work" "$art"
	# Link order: controller/agent before libpreempt.
	links=$(sed -n 's/.*fuzz-links:\(.*\)\*\/.*/\1/p' "$src" | head -1)
	link=()
	grep -qw controller <<<"$links" && link+=("$BF/controller-preemptctl.a" "$BF/controller-act.a" "$BF/controller-watch.a" "$BF/controller-cycle.a" "$BF/controller-model.a" "$BF/controller-queue.a" "$BF/controller-report.a")
	grep -qwE 'controller|kube' <<<"$links" && link+=("$BF/kube.a" -L"$BF/fuzz" -lpreempt -Wl,-rpath,"$PWD/$BF/fuzz")
	grep -qw agent <<<"$links" && link+=("$BF/agent-evictd.a" "$BF/agent-report.a" "$BF/agent-act.a" "$BF/agent-decide.a" "$BF/agent-observe.a" "$BF/agent-common.a")
	grep -qw evictd-kube <<<"$links" && link+=("$BF/agent-evictd-kube.a" "$BF/agent-common.a")
	grep -qw cri <<<"$links" && link+=("$BF/cri.a")
	grep -qwE 'agent|evictd-kube|controller|kube|cri' <<<"$links" && link+=("$BF/base.a")
	grep -qwE 'controller|kube' <<<"$links" || link+=("$BF/libpreempt.a")
	# shellcheck disable=SC2086
	if ! clang $FUZZ_CFLAGS $pkgcflags -o "$bin" "$src" "${link[@]}" $pkglibs -lm >"$log" 2>&1; then
		echo "fuzz-$n: BUILD FAILED (see $log)"; tail -n 20 "$log" | sed 's/^/    /'
		failed=1; continue
	fi
	opts=(-artifact_prefix="$art" -timeout=10 -rss_limit_mb=2048 -max_len="${FUZZ_MAX_LEN:-16384}")
	[ -f "tests/fuzz/$n.dict" ] && opts+=(-dict="tests/fuzz/$n.dict")
	# Saved regressions first: they must all pass before new ground is explored.
	regs=(tests/fuzz/regressions/"$n"/*)
	if [ -e "${regs[0]}" ] && ! "$bin" "${opts[@]}" "${regs[@]}" >"$log" 2>&1; then
		echo "fuzz-$n: REGRESSION FAILED (see $log)"; grep -m5 -E 'ERROR|invariant|runtime error' "$log" | sed 's/^/    /'
		failed=1; continue
	fi
	seeds=()
	[ -d "tests/fuzz/corpus/$n" ] && seeds+=("tests/fuzz/corpus/$n")
	[ -d "tests/fuzz/regressions/$n" ] && seeds+=("tests/fuzz/regressions/$n")
	"$bin" "${opts[@]}" -max_total_time="$SECONDS_PER" -print_final_stats=1 "$work" "${seeds[@]}" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
	if [ $rc -eq 0 ]; then
		echo "fuzz-$n: ok, ${execs:-?} execs in ${SECONDS_PER}s, ${cov:-cov: ?}, corpus $(ls "$work" | wc -l)"
	else
		echo "fuzz-$n: FAILED (exit $rc) after ${execs:-?} execs; input in $art (log $log)"
		grep -m5 -E 'ERROR|invariant|runtime error|SUMMARY' "$log" | sed 's/^/    /'
		failed=1
		continue
	fi
	# Large inputs: the main run's max_len never reaches size bounds and multi-chunk paths.
	big=${FUZZ_BIG_MAX_LEN:-1048576} bigsec=${FUZZ_BIG_SECONDS:-$(( SECONDS_PER / 3 > 5 ? SECONDS_PER / 3 : 5 ))}
	[ "$big" -gt 0 ] && [ "$bigsec" -gt 0 ] || continue
	"$bin" "${opts[@]}" -max_len="$big" -len_control=0 -max_total_time="$bigsec" -print_final_stats=1 \
		"$work" "${seeds[@]}" >"$log.big" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log.big" | tail -1)
	if [ $rc -eq 0 ]; then
		echo "fuzz-$n: ok at -max_len=$big, ${execs:-?} execs in ${bigsec}s"
	else
		echo "fuzz-$n: FAILED at -max_len=$big (exit $rc) after ${execs:-?} execs; input in $art (log $log.big)"
		grep -m5 -E 'ERROR|invariant|runtime error|SUMMARY' "$log.big" | sed 's/^/    /'
		failed=1
	fi
done
exit $failed
