#!/bin/bash
# Creation to binding through the stand-in API server (a Python test double: its own handling time
# is in every figure), one node, N pods created one at a time with preemptd running: from the moment
# the pod is created (its POST to the stand-in's control port returned) to the moment the stand-in
# logged the binding request. Beside kube-scheduler's published figure: the pod startup SLO (99th
# percentile ≤ 5 s from creation to running containers, of which scheduling is a part).
# Then preemption, --pdb prefer against --pdb strict (issue 28): P nodes of 4 CPUs, each full with
# four running pods of 1 CPU under a PodDisruptionBudget of their own that allows 3 disruptions;
# P preemptors of 3 CPUs created one at a time, each preempting three pods: from creation to its
# nomination written (every victim DELETEd under prefer, evicted one at a time under strict), and
# to its binding once they have gone (victims' grace periods scaled to 0.02 by the stand-in).
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
N=${N:-50}
P=${P:-20}
. tests/lib.sh
. tests/kube/lib-apiserver.sh
. tests/controller/preemptd/lib-preemptd.sh
pd_setup
node n1 64
pd_start a --leader-elect no
synced() { logged a "Caches synced"; }
wait_for 10 synced
"$PY" - "$KUBE_CTL" "$N" <<'PY'
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, "tests/bench")
from standin_pods import create_one_at_a_time, requests_after
ctl, n = sys.argv[1], int(sys.argv[2])
created = create_one_at_a_time(ctl, ["e2e-%03d" % i for i in range(n)], 0, "100m", 5)
lat = [ms for r, ms in requests_after(ctl, created)
       if ms is not None and r.get("subresource") == "binding" and r.get("status") == 201]
lat.sort()
if len(lat) != n:
    sys.exit("only %d of %d pods bound" % (len(lat), n))
print("creation -> binding request through the stand-in, %d pods one at a time: median %.1f ms, p90 %.1f ms, "
      "p99 %.1f ms, max %.1f ms (kube-scheduler's SLO, creation to running: p99 <= 5000 ms)" %
      (n, lat[n // 2], lat[n * 9 // 10], lat[min(n - 1, n * 99 // 100)], lat[-1]))
PY
pd_stop a

preemptions() {	# preemptions POLICY
	kube_ctl POST /reset >/dev/null
	"$PY" - "$KUBE_CTL" "$P" <<'PY'
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, "tests/bench")
from standin_pods import call
ctl, p = sys.argv[1], int(sys.argv[2])
def post(body):
    call(ctl, "POST", "/objects", body)
for i in range(p):
    node = "n%02d" % i
    post({"apiVersion": "v1", "kind": "Node", "metadata": {"name": node, "labels": {"kubernetes.io/hostname": node}},
          "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                     "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                     "conditions": [{"type": "Ready", "status": "True"}]}})
    for k in range(4):
        post({"apiVersion": "v1", "kind": "Pod",
              "metadata": {"namespace": "default", "name": "v%02d-%d" % (i, k), "labels": {"app": node}},
              "spec": {"nodeName": node, "priority": k,
                       "containers": [{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "64Mi"}}}]}})
    post({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"namespace": "default", "name": node},
          "spec": {"maxUnavailable": 3, "selector": {"matchLabels": {"app": node}}},
          "status": {"disruptionsAllowed": 3, "currentHealthy": 4, "desiredHealthy": 1, "expectedPods": 4,
                     "observedGeneration": 1}})
PY
	pd_start "$1" --leader-elect no --pdb "$1"
	synced() { logged "$1" "Caches synced" 2>/dev/null; }   # the log may not be there yet
	wait_for 10 synced "$1"
	"$PY" - "$KUBE_CTL" "$P" "$1" <<'PY'
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, "tests/bench")
from standin_pods import create_one_at_a_time, requests_after
ctl, p, policy = sys.argv[1], int(sys.argv[2]), sys.argv[3]
created = create_one_at_a_time(ctl, ["pre-%02d" % i for i in range(p)], 1000, "3", 10)
nominated, bound, deletes, evictions = {}, {}, 0, 0
for r, ms in requests_after(ctl, created):
    deletes += r.get("verb") == "delete" and (r.get("name") or "").startswith("v")
    evictions += r.get("subresource") == "eviction" and r.get("status") == 201
    if ms is None:
        continue
    if r.get("subresource") == "status" and ((r.get("body") or {}).get("status") or {}).get("nominatedNodeName"):
        nominated.setdefault(r["name"], ms)
    if r.get("subresource") == "binding" and r.get("status") == 201:
        bound[r["name"]] = ms
if len(nominated) != p or len(bound) != p:
    sys.exit("--pdb %s: %d of %d preemptors nominated, %d bound" % (policy, len(nominated), p, len(bound)))
def q(v):
    v = sorted(v.values())
    return "median %.1f ms, p90 %.1f ms, max %.1f ms" % (v[len(v) // 2], v[len(v) * 9 // 10], v[-1])
print("--pdb %-6s %d preemptions of 3 victims each (%d DELETEs, %d evictions): creation -> nomination %s; "
      "-> binding %s" % (policy, p, deletes, evictions, q(nominated), q(bound)))
PY
	pd_stop "$1"
}
preemptions prefer
preemptions strict
