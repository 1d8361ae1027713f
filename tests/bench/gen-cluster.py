#!/usr/bin/env python3
"""Writes a `kubectl get priorityclasses,nodes,pods,pdb -A -o json`-shaped List for benchmarks.

Shape: scheduler_perf "PreemptionBasic" — NODES nodes of 4 cpu / 32Gi / 110 pods, each running
PODS_PER_NODE priority-0 pods of 3600m / PODS_PER_NODE (900m at the default 4) / 500Mi, plus one pending pod default/preemptor of priority
10 asking 3000m / 500Mi. Objects carry the common fields kubectl prints (less managedFields,
volumes, tolerations, pod conditions, nodeInfo), indented as kubectl does, so file size and parser
cost are realistic: 5000 nodes / 20,000 pods ≈ 47 MB of JSON.

usage: gen-cluster.py [--nodes N] [--pods-per-node K] [--yaml] > cluster.json
       preemptctl preempt cluster.json --pod default/preemptor
       gen-cluster.py --watch-dir DIR [--nodes N] [--pods-per-node K] [--fit N] [--preemptors N]

--watch-dir writes what an API server's watches would stream instead (one event per line, objects
with kind and apiVersion, as a watch sends them), for preemptd's benchmark: DIR/priorityclasses,
DIR/nodes, DIR/pods (the bound pods), DIR/fit (N pending pods of schedulerName preemptd, 100m /
100Mi, that fit beside them), DIR/preempt (N preemptors of schedulerName preemptd, priority
10, 3000m / 500Mi, each needing three victims) and DIR/pdbs (PodDisruptionBudgets over the bound
pods: budget wNNNN selects app=wNNNN, the label of the pods of every node i with i % 250 == NNNN
(a value as long as the List's app=bench, so that the model's size is the same whether or not
DIR/pdbs is replayed); every tenth allows no disruption, the others 3).
"""
import argparse
import json
import sys


def pclass(name, value):
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name, "uid": "uid-pc-" + name, "resourceVersion": "1",
                         "creationTimestamp": "2024-05-01T09:00:00Z"},
            "value": value, "globalDefault": False, "preemptionPolicy": "PreemptLowerPriority"}


def node(i):
    name = "node-%05d" % i
    res = {"cpu": "4", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": "uid-" + name, "resourceVersion": str(1000 + i),
                         "creationTimestamp": "2024-05-01T09:00:00Z",
                         "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                                    "kubernetes.io/arch": "amd64",
                                    "topology.kubernetes.io/zone": "zone-%d" % (i % 3)},
                         "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
            "spec": {"podCIDR": "10.%d.%d.0/24" % (i // 256 % 256, i % 256),
                     "providerID": "kind://docker/bench/" + name},
            "status": {"capacity": dict(res), "allocatable": dict(res),
                       "addresses": [{"type": "InternalIP", "address": "172.18.%d.%d" % (i // 250 % 250, i % 250 + 2)},
                                     {"type": "Hostname", "address": name}],
                       "conditions": [{"type": t, "status": s, "reason": r,
                                       "lastTransitionTime": "2024-05-01T09:00:00Z"}
                                      for t, s, r in (("MemoryPressure", "False", "KubeletHasSufficientMemory"),
                                                      ("DiskPressure", "False", "KubeletHasNoDiskPressure"),
                                                      ("PIDPressure", "False", "KubeletHasSufficientPID"),
                                                      ("Ready", "True", "KubeletReady"))]}}


BUDGETS = 250


def budget_of(i):
    return "w%04d" % (i % BUDGETS)


def pdb(k):
    name = budget_of(k)
    allowed = 0 if k % 10 == 0 else 3
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name, "namespace": "default", "uid": "uid-pdb-" + name, "resourceVersion": "3",
                         "generation": 1, "creationTimestamp": "2024-05-01T09:00:00Z"},
            "spec": {"maxUnavailable": allowed, "selector": {"matchLabels": {"app": name}}},
            "status": {"observedGeneration": 1, "disruptionsAllowed": allowed, "currentHealthy": 80,
                       "desiredHealthy": 80 - allowed, "expectedPods": 80}}


def pod(name, node_name, priority, cls, cpu, mem, app="bench"):
    container = {"name": "main", "image": "registry.k8s.io/pause:3.9", "imagePullPolicy": "IfNotPresent",
                 "resources": {"requests": {"cpu": cpu, "memory": mem}}}
    spec = {"containers": [container], "dnsPolicy": "ClusterFirst", "enableServiceLinks": True,
            "preemptionPolicy": "PreemptLowerPriority", "priority": priority,
            "restartPolicy": "Always", "schedulerName": "default-scheduler", "securityContext": {},
            "serviceAccountName": "default", "terminationGracePeriodSeconds": 30}
    if cls:
        spec["priorityClassName"] = cls
    status = {"phase": "Pending", "qosClass": "Burstable"}
    if node_name:
        spec["nodeName"] = node_name
        status = {"phase": "Running", "startTime": "2024-05-01T10:00:00Z", "qosClass": "Burstable",
                  "podIP": "10.244.0.5"}
    labels = {"app": app, "pod-template-hash": "5d4f8c7b9"}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "uid": "uid-" + name,
                         "resourceVersion": "2000", "creationTimestamp": "2024-05-01T10:00:00Z",
                         "labels": labels},
            "spec": spec, "status": status}


def watch_stream(path, objects):
    with open(path, "w") as f:
        for o in objects:
            f.write(json.dumps({"type": "ADDED", "object": o}, separators=(",", ":")))
            f.write("\n")


def ours(p, i):
    p["spec"]["schedulerName"] = "preemptd"
    p["metadata"]["uid"] = "uid-%s-%d" % (p["metadata"]["name"], i)
    return p


def bound_cpu(a):
    """Every node as full as scheduler_perf's (3600m of its 4 cpu asked) whatever the pods a node:
    900m at 4 a node, 120m at 30 (Kubernetes' 150,000 pods on 5000 nodes)."""
    return "%dm" % (3600 // a.pods_per_node)


def victims_needed(a):
    """Victims a 3000m preemptor needs on a node whose 400m free are not enough."""
    per = 3600 // a.pods_per_node
    return -(-(3000 - (4000 - per * a.pods_per_node)) // per)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods-per-node", type=int, default=4)
    ap.add_argument("--yaml", action="store_true", help="write block-style YAML instead of JSON (needs PyYAML)")
    ap.add_argument("--watch-dir", help="write watch streams into this directory (see above)")
    ap.add_argument("--fit", type=int, default=10000, help="--watch-dir: pending pods that fit")
    ap.add_argument("--preemptors", type=int, default=2000, help="--watch-dir: pending pods that preempt")
    ap.add_argument("--victims-needed", action="store_true", help="print how many victims a preemptor needs and exit")
    a = ap.parse_args()
    if a.victims_needed:
        print(victims_needed(a))
        return
    if a.watch_dir:
        watch_stream(a.watch_dir + "/priorityclasses", [pclass("bench-high", 10)])
        watch_stream(a.watch_dir + "/nodes", (node(i) for i in range(a.nodes)))
        watch_stream(a.watch_dir + "/pods", (pod("bench-%05d-%d" % (i, k), "node-%05d" % i, 0, None, bound_cpu(a), "500Mi",
                                                 budget_of(i))
                                             for i in range(a.nodes) for k in range(a.pods_per_node)))
        watch_stream(a.watch_dir + "/pdbs", (pdb(k) for k in range(BUDGETS)))
        watch_stream(a.watch_dir + "/fit", (ours(pod("fit-%05d" % i, None, 0, None, "100m", "100Mi"), i)
                                            for i in range(a.fit)))
        watch_stream(a.watch_dir + "/preempt", (ours(pod("preemptor-%05d" % i, None, 10, "bench-high", "3000m", "500Mi"), i)
                                                for i in range(a.preemptors)))
        return
    items = [pclass("bench-high", 10)]
    for i in range(a.nodes):
        items.append(node(i))
    for i in range(a.nodes):
        for k in range(a.pods_per_node):
            items.append(pod("bench-%05d-%d" % (i, k), "node-%05d" % i, 0, None, bound_cpu(a), "500Mi"))
    items.append(pod("preemptor", None, 10, "bench-high", "3000m", "500Mi"))
    doc = {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}
    if a.yaml:
        import yaml
        yaml.safe_dump(doc, sys.stdout, default_flow_style=False, sort_keys=False)
    else:
        json.dump(doc, sys.stdout, indent=4)
        sys.stdout.write("\n")


if __name__ == "__main__":
    main()
