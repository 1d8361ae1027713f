#!/bin/bash
# deploy/grafana/preemptd-dashboard.json and deploy/prometheus/preemptd-rules.yaml name only
# metrics preemptd exposes: a preemptd runs against the stand-in API server (leader election on,
# a pod bound, one unschedulable), its /metrics is scraped, and every metric name in every panel's
# query and every rule's expression must be among the samples (a typo, or a metric renamed or
# dropped, would leave a panel empty or an alert silent).
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
. tests/kube/lib-apiserver.sh
. tests/controller/preemptd/lib-preemptd.sh
pd_require
"$PY" -c 'import prometheus_client, yaml' 2>/dev/null || skip_all "python3-prometheus-client or python3-yaml missing"
pd_setup

node n1 2
pending default web 0 100m
pending default big 0 8
pd_start a --leader-elect yes
ok "preemptd binds a pod" wait_for 15 bound_to default web n1
unsched() { [ "$(cond default big PodScheduled reason)" = Unschedulable ]; }
ok "...and finds another unschedulable" wait_for 10 unsched
scheduled() { [ "$(metric a scheduler_schedule_attempts_total '{"result": "scheduled"}')" = 1 ]; }
wait_for 5 scheduled
pd_get a /metrics >"$T/metrics.txt"

# every metric name a PromQL expression reads: identifiers that are not functions, keywords,
# label names (in {...}, by/without/on/ignoring (...)), durations or strings
"$PY" - "$T/metrics.txt" deploy/grafana/preemptd-dashboard.json deploy/prometheus/preemptd-rules.yaml >"$T/check.out" 2>&1 <<'PY'
import json, re, sys, yaml
from prometheus_client.parser import text_string_to_metric_families
fams = list(text_string_to_metric_families(open(sys.argv[1]).read()))
exposed = {s.name for f in fams for s in f.samples}
# a family declared without samples yet (no API error so far) is exposed all the same
exposed |= {f.name + "_total" if f.type == "counter" else f.name for f in fams}
# Prometheus' own series, not preemptd's
exposed |= {"up"}
KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right", "inf", "nan"}
def names(expr):
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    e = re.sub(r'\{[^}]*\}', ' ', e)
    e = re.sub(r'\[[^\]]*\]', ' ', e)
    e = re.sub(r'\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)', ' ', e)
    out = set()
    for m in re.finditer(r'[a-zA-Z_:][a-zA-Z0-9_:]*', e):
        rest = e[m.end():].lstrip()
        if rest.startswith("(") or m.group(0).lower() in KEYWORDS:
            continue
        out.add(m.group(0))
    return out
queries = []
for p in json.load(open(sys.argv[2]))["panels"]:
    for t in p.get("targets", []):
        queries.append(("panel " + repr(p["title"]), t["expr"]))
for g in yaml.safe_load(open(sys.argv[3]))["groups"]:
    for r in g["rules"]:
        queries.append(("rule " + r.get("alert", r.get("record", "?")), r["expr"]))
bad = 0
seen = set()
for where, q in queries:
    ns = names(q)
    if not ns:
        print("%s: no metric in %s" % (where, q)); bad += 1
    for n in sorted(ns):
        seen.add(n)
        if n not in exposed:
            print("%s: %s is not exposed by preemptd" % (where, n)); bad += 1
print("%d queries, %d metric names checked" % (len(queries), len(seen)))
sys.exit(1 if bad else 0)
PY
rc=$?
sed 's/^/# /' "$T/check.out"
ok "every query of the dashboard and every alert rule names a metric preemptd exposes" [ $rc = 0 ]
done_testing
