#!/bin/bash
# preemptd's start-up through the stand-in API server (a Python test double: its own handling time
# and its serialisation of every page are in the figure): scheduler_perf's 5000 nodes with
# PODS_PER_NODE bound pods each (gen-cluster.py's objects, loaded through the stand-in's control
# port), then preemptd --kubeconfig to it: the time from its start to /readyz 200, and from its
# request log the lists it asked: pages, the first at resourceVersion=0 with limit, the pages after
# it with continue and no resourceVersion, as client-go's reflector and pager ask. The stand-in
# filters and sorts its whole store for every page: at 150,000 pods its time grows with the square
# of the pods (about 10 minutes here), preemptd's does not (bench-preemptd's relist phase).
#   tests/bench/bench-preemptd-startup.sh        NODES=5000 PODS_PER_NODE=4 (20,000 pods)
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
NODES=${NODES:-5000}
PODS_PER_NODE=${PODS_PER_NODE:-4}
. tests/lib.sh
. tests/kube/lib-apiserver.sh
. tests/controller/preemptd/lib-preemptd.sh
[ -x "$PD" ] || { echo "$PD not built (make all)" >&2; exit 1; }
pd_setup
mkdir "$T/streams"
python3 tests/bench/gen-cluster.py --watch-dir "$T/streams" --nodes "$NODES" --pods-per-node "$PODS_PER_NODE" \
	--fit 0 --preemptors 0
# the objects of the streams, into the stand-in in lists of 5000
python3 - "$KUBE_CTL" "$T/streams" <<'PY'
import json, sys, urllib.request
ctl, d = sys.argv[1], sys.argv[2]
for f in ("priorityclasses", "nodes", "pods"):
    objs = [json.loads(line)["object"] for line in open("%s/%s" % (d, f), encoding="utf-8") if line.strip()]
    for i in range(0, len(objs), 5000):
        body = json.dumps({"kind": "List", "apiVersion": "v1", "items": objs[i:i + 5000]}).encode()
        urllib.request.urlopen(urllib.request.Request(ctl + "/objects?raw=1", data=body, method="POST",
                                                      headers={"Content-Type": "application/json"})).read()
PY
t0=$(date +%s.%N)
pd_start a --leader-elect no
ready() { [ "$(pd_code a /readyz 2>/dev/null)" = 200 ]; }
wait_for "${READY_TIMEOUT:-600}" ready || { cat "$T/a.log" >&2; echo "preemptd not ready" >&2; exit 1; }
t1=$(date +%s.%N)
# preemptd's own CPU time so far (utime + stime): the stand-in's is most of the wall time
cpu=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/${PD_PID[a]}/stat")
rss=$(awk '/^VmRSS/ { printf "%.0f", $2 / 1024 }' "/proc/${PD_PID[a]}/status")
pd_stop a
kube_requests >"$T/requests"
python3 - "$T/requests" "$t0" "$t1" "$NODES" "$PODS_PER_NODE" "$cpu" "$rss" <<'PY'
import datetime, json, sys
log, t0, t1, nodes, ppn = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
cpu, rss = sys.argv[6], sys.argv[7]
lists = {}
for line in open(log, encoding="utf-8"):
    r = json.loads(line)
    q = r.get("query") or {}
    if r.get("method") == "GET" and r.get("verb") == "list" and "watch" not in q:
        lists.setdefault(r["path"], []).append(r)
bad = []
for path, rs in lists.items():
    first, rest = rs[0]["query"], [r["query"] for r in rs[1:]]
    if first.get("resourceVersion") != "0" or "limit" not in first or "continue" in first:
        bad.append("%s: first page %s" % (path, first))
    bad += ["%s: page %s" % (path, q) for q in rest if "continue" not in q or "resourceVersion" in q or "limit" not in q]
pods = lists.get("/api/v1/pods", [])
ts = [datetime.datetime.fromisoformat(r["ts"]).timestamp() for r in pods]
print("start-up through the stand-in, %d nodes, %d pods: preemptd started -> /readyz 200 in %.1f s, %s s of "
      "preemptd's CPU, %s MiB RSS; the pods listed in %d pages (limit=%s; first page resourceVersion=%s, the %d after it with continue and no resourceVersion: "
      "%s), their pages served over %.1f s; %s" %
      (nodes, nodes * ppn, t1 - t0, cpu, rss, len(pods), pods[0]["query"].get("limit") if pods else "-",
       pods[0]["query"].get("resourceVersion") if pods else "-", max(0, len(pods) - 1),
       "all" if not bad else "NOT all", (ts[-1] - ts[0]) if ts else 0,
       ", ".join("%s %d pages" % (p.rsplit("/", 1)[-1], len(rs)) for p, rs in sorted(lists.items()))))
if bad or len(pods) < nodes * ppn // 500:
    sys.exit("bench-preemptd-startup: lists not asked as client-go asks them: " + "; ".join(bad[:5]))
PY
set +e # the EXIT trap's clean-up kills what may have gone already
