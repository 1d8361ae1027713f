#!/bin/bash
# The metrics-file (node_exporter textfile collector) of a daemon on the fixture tree, read back
# with a real Prometheus text-format parser (python3-prometheus-client): every family parses with
# HELP and TYPE, the values a user would graph are right (memory.available observed and its
# threshold, threshold met, MemoryPressure), the eviction counter rises as the dry-run evictions
# finish, the file is 0644 with no temporary files left, and an idle daemon does not rewrite it.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"
EVICTD=$PWD/$BUILD/evictd
[ -x "$EVICTD" ] || skip_all "$EVICTD not built"
# Debian's python3 (python3-prometheus-client), not one earlier in PATH (pyenv, venv).
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
"$PY" -c 'import prometheus_client.parser' 2>/dev/null || skip_all "python3-prometheus-client missing"
FX=$PWD/tests/fixtures/cgroup/systemd
tmp=$(mktemp -d); D=
cleanup() { [ -n "$D" ] && { kill -9 "$D" 2>/dev/null; wait "$D" 2>/dev/null; }; rm -rf "$tmp"; }
trap cleanup EXIT
mkdir -p "$tmp/textfile" "$tmp/pods"
cp "$FX/pods/"*.conf "$tmp/pods/" && chmod 0644 "$tmp/pods/"*

start() {	# start EXTRA-CONF: the daemon on the fixture, metrics in $tmp/textfile/evictd.prom
	fixture_daemon_conf "$tmp/evictd.conf" "$tmp/status.json" "[agent]
metrics-file = $tmp/textfile/evictd.prom
$1"
	"$EVICTD" --config "$tmp/evictd.conf" --cgroup-root "$FX/root" --proc-root "$FX/proc" \
		--metadata-dir "$tmp/pods" --log-target stderr 2>"$tmp/log" &
	D=$!
}
stop() { kill -TERM "$D"; wait "$D"; D=; }
prom() {	# prom PYTHON-EXPR: with m[(name, labels...)] = value of every sample, fam = {name: type}
	"$PY" - "$tmp/textfile/evictd.prom" "$1" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families
text = open(sys.argv[1]).read()
fam, m = {}, {}
for f in text_string_to_metric_families(text):
    fam[f.name] = f.type
    assert f.documentation, f.name
    for s in f.samples:
        m[(s.name,) + tuple(sorted(s.labels.items()))] = s.value
def ev(outcome="dry-run", signal="memory.available", kind="hard"):
    return m.get(("evictd_evictions_total", ("kind", kind), ("outcome", outcome), ("signal", signal)), 0)
ok = eval(sys.argv[2])
if not ok:
    print("# " + "\n# ".join(l for l in text.splitlines() if not l.startswith("#")))
sys.exit(0 if ok else 1)
PY
}
wait_prom() {	# wait_prom SECONDS PYTHON-EXPR
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		[ -s "$tmp/textfile/evictd.prom" ] && prom "$2" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	prom "$2"
}

start ""
ok "the file appears and parses; every family has HELP and TYPE" wait_prom 5 \
	'fam["evictd_evictions"] == "counter" and fam["evictd_signal_observed"] == "gauge" and fam["evictd_decision_duration_seconds"] == "histogram" and fam["evictd_scan_duration_seconds"] == "histogram"'
ok "memory.available observed (80Mi) and its hard threshold (100Mi)" prom \
	'm[("evictd_signal_observed", ("signal", "memory.available"))] == 80 << 20 and m[("evictd_signal_threshold", ("kind", "hard"), ("signal", "memory.available"))] == 100 << 20'
ok "threshold met and MemoryPressure are 1, DiskPressure 0" prom \
	'm[("evictd_threshold_met", ("kind", "hard"), ("signal", "memory.available"))] == 1 and m[("evictd_node_condition", ("condition", "MemoryPressure"))] == 1 and m[("evictd_node_condition", ("condition", "DiskPressure"))] == 0'
ok "a finished (dry-run) eviction is counted by signal, kind and outcome" wait_prom 5 'ev() >= 1'
first=$("$PY" -c 'import sys,re; print(sum(float(x) for x in re.findall(r"^evictd_evictions_total\{[^}]*\} (\S+)$", open(sys.argv[1]).read(), re.M)))' "$tmp/textfile/evictd.prom")
ok "the counter rises with the next evictions (was $first)" wait_prom 5 "ev() > $first"
ok "decisions and scans are in the histograms" prom \
	'm[("evictd_decision_duration_seconds_count",)] >= 1 and m[("evictd_scan_duration_seconds_count",)] >= 1 and m[("evictd_decision_duration_seconds_bucket", ("le", "+Inf"))] == m[("evictd_decision_duration_seconds_count",)]'
stop
# Checked once the daemon has stopped: while it runs, a temporary file may exist for an instant.
ok "mode 0644, no temporary file left" bash -c "[ \$(stat -c %a '$tmp/textfile/evictd.prom') = 644 ] && [ \$(ls '$tmp/textfile' | wc -l) = 1 ]"

# No threshold met: written once, then left alone while nothing changes.
rm -f "$tmp/textfile/evictd.prom"
start $'[eviction-hard]\nmemory.available = 0%\nallocatableMemory.available = 0%'
wait_prom 5 'm[("evictd_threshold_met", ("kind", "hard"), ("signal", "nodefs.available"))] == 0' >/dev/null
# The inode alone does not tell: a rename-over can alternate two inode numbers. The change time
# (ns) changes with any rewrite, rename or write in place; the file must be there to compare.
stamp() { stat -c '%i %z %y' "$tmp/textfile/evictd.prom" 2>/dev/null; }
before=$(stamp)
ok "the idle daemon wrote the file" test -n "$before"
sleep 2
ok "an idle daemon does not rewrite the file (same inode and change time after 2 s of 100 ms ticks)" \
	bash -c "[ -n '$before' ] && [ \"\$(stat -c '%i %z %y' '$tmp/textfile/evictd.prom')\" = '$before' ] && kill -0 $D"
stop
done_testing
