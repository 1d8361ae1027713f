#!/bin/bash
# Creation to binding through the stand-in API server (a Python test double: its own handling time
# is in every figure), one node, N pods created one at a time with preemptd running: from the moment
# the pod is created (its POST to the stand-in's control port returned) to the moment the stand-in
# logged the binding request. Beside kube-scheduler's published figure: the pod startup SLO (99th
# percentile ≤ 5 s from creation to running containers, of which scheduling is a part).
set -eu
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
N=${N:-50}
. tests/lib.sh
. tests/kube/lib-apiserver.sh
. tests/controller/preemptd/lib-preemptd.sh
pd_setup
node n1 64
pd_start a --leader-elect no
synced() { logged a "Caches synced"; }
wait_for 10 synced
"$PY" - "$KUBE_CTL" "$N" <<'PY'
import json, sys, time, urllib.request, datetime
ctl, n = sys.argv[1], int(sys.argv[2])
def call(method, path, body=None):
    req = urllib.request.Request(ctl + path, method=method, data=json.dumps(body).encode() if body else None,
                                 headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))
created = {}
for i in range(n):
    name = "e2e-%03d" % i
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "default", "name": name},
           "spec": {"schedulerName": "preemptd", "priority": 0,
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}
    created[name] = time.time()  # before the POST: the watch may deliver the pod before it returns
    call("POST", "/objects", pod)
    deadline = time.time() + 5
    while time.time() < deadline and not call("GET", "/objects/pods/default/" + name)["spec"].get("nodeName"):
        time.sleep(0.002)
log = urllib.request.urlopen(ctl + "/requests").read().decode().splitlines()
lat = []
for line in log:
    r = json.loads(line)
    if r.get("subresource") == "binding" and r.get("status") == 201 and r.get("name") in created:
        t = datetime.datetime.fromisoformat(r["ts"]).timestamp()
        lat.append((t - created[r["name"]]) * 1000)
lat.sort()
if len(lat) != n:
    sys.exit("only %d of %d pods bound" % (len(lat), n))
print("creation -> binding request through the stand-in, %d pods one at a time: median %.1f ms, p90 %.1f ms, "
      "p99 %.1f ms, max %.1f ms (kube-scheduler's SLO, creation to running: p99 <= 5000 ms)" %
      (n, lat[n // 2], lat[n * 9 // 10], lat[min(n - 1, n * 99 // 100)], lat[-1]))
PY
