"""Continuous churn against the stand-in API server's control port, for soak-preemptd.sh: pending
pods of schedulerName preemptd created (fitting ones and preemptors of several priorities), bound
pods deleted, nodes leaving and joining, PodDisruptionBudgets changing, at RATE operations a second,
until killed. The population stays around PODS pods on NODES nodes, so that any growth of
preemptd's memory is a leak and not the cluster growing.

usage: soak-churn.py CTL_URL NODES PODS RATE SEED
"""
import json
import random
import sys
import time
import urllib.error
import urllib.request

ctl, nodes, pods, rate, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
rng = random.Random(seed)


def call(method, path, body=None):
    req = urllib.request.Request(ctl + path, method=method, data=json.dumps(body).encode() if body else None,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.load(r)
    except (urllib.error.URLError, OSError, ValueError):
        return None


def node(name):
    res = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": res, "capacity": dict(res), "conditions": [{"type": "Ready", "status": "True"}]}}


def pdb(k, allowed):
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"namespace": "soak", "name": "b%d" % k, "generation": 1},
            "spec": {"maxUnavailable": allowed, "selector": {"matchLabels": {"budget": "b%d" % k}}},
            "status": {"disruptionsAllowed": allowed, "currentHealthy": 10, "desiredHealthy": 10 - allowed,
                       "expectedPods": 10, "observedGeneration": 1}}


serial = 0


def pending_pod():
    global serial
    serial += 1
    prio = rng.choice((0, 0, 0, 100, 100, 1000))
    cpu = rng.choice(("100m", "250m", "500m", "1", "2")) if prio < 1000 else rng.choice(("1", "2", "3"))
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"namespace": "soak", "name": "s%07d" % serial, "labels": {"budget": "b%d" % (serial % 8)}},
            "spec": {"schedulerName": "preemptd", "priority": prio, "terminationGracePeriodSeconds": rng.choice((0, 1, 30)),
                     "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]}}


node_serial = nodes
live_nodes = ["sn%05d" % i for i in range(nodes)]
call("POST", "/objects", [node(n) for n in live_nodes] + [pdb(k, 2) for k in range(8)])
for _ in range(pods):
    call("POST", "/objects", pending_pod())

period = 1.0 / rate
while True:
    t0 = time.time()
    r = rng.random()
    if r < 0.45:
        call("POST", "/objects", pending_pod())
    elif r < 0.9:
        listed = call("GET", "/objects/pods/soak") or []
        if len(listed) > pods * 0.8:
            victim = rng.choice(listed)["metadata"]["name"]
            call("DELETE", "/objects/pods/soak/" + victim)
        else:
            call("POST", "/objects", pending_pod())
    elif r < 0.95:
        call("POST", "/objects", pdb(rng.randrange(8), rng.choice((0, 1, 2, 5))))
    else:
        gone = live_nodes.pop(rng.randrange(len(live_nodes)))
        call("DELETE", "/objects/nodes/" + gone)
        node_serial += 1
        live_nodes.append("sn%05d" % node_serial)
        call("POST", "/objects", node(live_nodes[-1]))
    time.sleep(max(0.0, period - (time.time() - t0)))
