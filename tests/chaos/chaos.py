#!/usr/bin/env python3
"""Chaos run of preemptd against the stand-in API server (tests/kube/apiserver.py), driven by chaos.sh.

Two preemptd replicas share one Lease. A stream of pods arrives (fitting ones, unschedulable ones,
preemptors of several priorities, some under PodDisruptionBudgets, some with long grace periods),
and at moments a seeded random generator picks, the run: kill -9s the leader or the standby,
SIGTERMs the leader, answers 500 and 429 (with Retry-After), cuts, garbles and drops watches, sends
410 Gone (and compacts the history, so the relist is a real one), slows bindings down, deletes a
node. Then the faults stop and the cluster settles, and the whole request log is checked:

  bound-twice        no pod bound twice (two accepted bindings)
  over-allocatable   no node's pods (terminating ones included, sampled every SAMPLE s and at the
                     end) ask for more than its allocatable cpu, memory or pods; no pod refused by
                     the kubelet's admission (OutOfcpu, ...)
  victim-order       every victim's DELETE by preemptd was preceded by its DisruptionTarget patch,
                     and went with a nomination to (or a binding on) the victim's node sent since
                     the decision (a second before that patch) or later, or an Event saying a
                     nomination expired
  lease-term         no write (but the Lease's) sent by a replica while the Lease named another
                     holder: one writer per lease term
  unresolved         every pod of schedulerName preemptd finally bound, nominated, or
                     PodScheduled=False/Unschedulable with kube-scheduler's "0/N nodes are
                     available: ..." message
  refused            no request refused 403 or 422

--split-brain gives each replica a Lease of its own (two leaders at once): the checks' own test,
which must report lease-term violations (and usually bound-twice ones).

The seed is printed first; the same seed replays the same stream of pods and faults at the same
moments (the processes' timing still varies). Exit 0 with no violation, 1 otherwise.

usage: chaos.py --ctl URL --kubeconfig FILE --preemptd PATH --dir DIR --seed N --seconds S
"""
import argparse
import collections
import ctypes
import datetime
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

LEASE = "kube-system/chaos-lease"


def cpu_of(q):
    q = str(q)
    return float(q[:-1]) / 1000 if q.endswith("m") else float(q)


def mem_of(q):
    q = str(q)
    for suffix, mult in (("Ki", 1 << 10), ("Mi", 1 << 20), ("Gi", 1 << 30)):
        if q.endswith(suffix):
            return float(q[:-2]) * mult
    return float(q)


def stamp():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M:%S.%f")


def ts(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


class Ctl:
    def __init__(self, url):
        self.url = url

    def call(self, method, path, body=None):
        req = urllib.request.Request(self.url + path, method=method,
                                     data=json.dumps(body).encode() if body is not None else None,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                data = r.read()
        except urllib.error.HTTPError as e:
            data = e.read()
        try:
            return json.loads(data)
        except ValueError:
            return data.decode("utf-8", "replace")


def die_with_parent():
    # the replicas go when the run goes, even on kill -9 of the run: nothing is left behind
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Replica:
    def __init__(self, name, args):
        self.name, self.args, self.proc, self.log = name, args, None, None

    def start(self):
        self.log = open(os.path.join(self.args.dir, self.name + ".log"), "a")
        cmd = [self.args.preemptd, "--kubeconfig", self.args.kubeconfig, "--config", "/dev/null",
               "--log-target", "stderr", "--listen", "127.0.0.1:0", "--retry-max", "2s", "--watch-timeout", "20s",
               "--leader-elect", "yes", "--lease", LEASE + ("-" + self.name if self.args.split_brain else ""), "--leader-elect-lease-duration", "3s",
               "--leader-elect-renew-deadline", "2s", "--leader-elect-retry-period", "500ms",
               "--nomination-timeout", "grace+5s", "--identity", self.name]
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log, preexec_fn=die_with_parent)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def signal(self, sig):
        if self.alive():
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        code = self.proc.returncode if self.proc else None
        self.proc = None
        if self.log:
            self.log.close()
        return code


class Run:
    def __init__(self, args):
        self.args = args
        # two generators: the stream of pods and the faults each the same for a seed, whatever
        # the interleaving the processes' timing gives them
        self.rng = random.Random(args.seed)
        self.rng_chaos = random.Random(args.seed ^ 0x5EED)
        self.ctl = Ctl(args.ctl)
        self.replicas = {n: Replica(n, args) for n in ("pd-a", "pd-b")}
        self.counts = collections.Counter()
        self.violations = []
        self.serial = 0
        self.nodes = []
        self.node_serial = 0
        self.restart_at = {}
        self.node_deleted = {}

    def violation(self, kind, text):
        self.violations.append((kind, text))
        print("chaos: VIOLATION %s: %s" % (kind, text), flush=True)

    # --- the cluster --------------------------------------------------------------------------
    def add_node(self):
        name = "cn%03d" % self.node_serial
        self.node_serial += 1
        res = {"cpu": "4", "memory": "8Gi", "pods": "110"}
        self.ctl.call("POST", "/objects", {"apiVersion": "v1", "kind": "Node",
                                           "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                                           "status": {"allocatable": res, "capacity": dict(res),
                                                      "conditions": [{"type": "Ready", "status": "True"}]}})
        self.nodes.append(name)

    def budget(self, k, allowed):
        return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                "metadata": {"namespace": "chaos", "name": "budget-%d" % k, "generation": 1},
                "spec": {"maxUnavailable": allowed, "selector": {"matchLabels": {"budget": str(k)}}},
                "status": {"disruptionsAllowed": allowed, "currentHealthy": 5, "desiredHealthy": 5 - allowed,
                           "expectedPods": 5, "observedGeneration": 1}}

    def pod(self):
        self.serial += 1
        r = self.rng.random()
        labels = {"app": "chaos"}
        grace = self.rng.choice((0, 1, 30, 30, 300))  # × the stand-in's grace scale (0.02)
        if r < 0.55:
            kind, prio, cpu = "fit", self.rng.choice((0, 0, 10)), self.rng.choice(("100m", "250m", "500m", "1"))
        elif r < 0.65:
            kind, prio, cpu = "unsched", self.rng.choice((0, 1000)), "16"
        else:
            kind, prio, cpu = "preemptor", self.rng.choice((100, 1000, 10000)), self.rng.choice(("1", "2", "3"))
        if self.rng.random() < 0.4:
            labels["budget"] = str(self.rng.randrange(4))
        self.counts["pods_" + kind] += 1
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"namespace": "chaos", "name": "%s-%05d" % (kind, self.serial), "labels": labels},
                "spec": {"schedulerName": "preemptd", "priority": prio, "terminationGracePeriodSeconds": grace,
                         "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "256Mi"}}}]}}

    # --- the faults ---------------------------------------------------------------------------
    def leader(self):
        lease = self.ctl.call("GET", "/objects/leases/" + LEASE + ("-pd-a" if self.args.split_brain else ""))
        return (lease.get("spec") or {}).get("holderIdentity") or "" if isinstance(lease, dict) else ""

    def chaos_step(self):
        rng = self.rng_chaos
        what = rng.choice(("kill-leader", "kill-standby", "term-leader", "500", "429", "watch-truncate",
                           "watch-garbage", "watch-drop", "gone", "slow-binding", "node-deleted", "500-write"))
        leader = self.leader()
        if what in ("kill-leader", "kill-standby", "term-leader"):
            names = [n for n, r in self.replicas.items() if r.alive()]
            if what == "kill-standby":
                names = [n for n in names if n != leader]
            else:
                names = [n for n in names if n == leader]
            if not names:
                return
            name = names[0]
            code = self.replicas[name].signal(signal.SIGKILL if what.startswith("kill") else signal.SIGTERM)
            if what == "term-leader" and code != 0:
                self.violation("sigterm", "%s exited %s on SIGTERM" % (name, code))
            self.restart_at[name] = time.time() + rng.uniform(0.3, 2.0)
            self.counts["kills" if what.startswith("kill") else "sigterms"] += 1
            print("chaos: %s %s (%s)" % (stamp(), what, name), flush=True)
            return
        res = rng.choice(("pods", "pods/binding", "pods/status", "nodes", "poddisruptionbudgets", "leases", "events"))
        if what == "500":
            fault = {"kind": "status", "code": 500, "count": rng.randint(1, 4), "resource": res}
        elif what == "500-write":
            fault = {"kind": "status", "code": rng.choice((500, 503)), "count": rng.randint(1, 4), "write": True}
        elif what == "429":
            fault = {"kind": "status", "code": 429, "retry_after": rng.randint(1, 2), "count": rng.randint(1, 4),
                     "resource": res}
        elif what == "watch-truncate":
            fault = {"kind": "truncate", "watch": True, "resource": rng.choice(("pods", "nodes")), "after": rng.randint(0, 5)}
        elif what == "watch-garbage":
            fault = {"kind": "garbage", "watch": True, "resource": rng.choice(("pods", "nodes")), "after": rng.randint(0, 5)}
        elif what == "watch-drop":
            fault = {"kind": "drop", "watch": True, "resource": rng.choice(("pods", "nodes", "poddisruptionbudgets")),
                     "after": rng.randint(0, 5)}
        elif what == "gone":
            self.ctl.call("POST", "/compact")
            fault = {"kind": "gone", "watch": True, "resource": rng.choice(("pods", "nodes"))}
        elif what == "slow-binding":
            fault = {"kind": "delay", "ms": rng.randint(1000, 2500), "count": rng.randint(1, 3), "resource": "pods/binding"}
        else:  # node-deleted: its pods go with it (the pod GC), a fresh node joins
            if len(self.nodes) > 3:
                gone = self.nodes.pop(rng.randrange(len(self.nodes)))
                self.node_deleted[gone] = time.time()
                self.ctl.call("DELETE", "/objects/nodes/" + gone)
                self.add_node()
                self.counts["faults"] += 1
                self.counts["fault_node-deleted"] += 1
                print("chaos: %s node %s deleted" % (stamp(), gone), flush=True)
            return
        self.ctl.call("POST", "/faults", fault)
        self.counts["faults"] += 1
        self.counts["fault_" + what] += 1
        print("chaos: %s fault %s" % (stamp(), json.dumps(fault)), flush=True)

    # --- checks while running -----------------------------------------------------------------
    def check_allocatable(self, final=False):
        nodes = self.ctl.call("GET", "/objects/nodes")
        pods = self.ctl.call("GET", "/objects/pods")
        if not isinstance(nodes, list) or not isinstance(pods, list):
            return
        alloc = {n["metadata"]["name"]: n["status"]["allocatable"] for n in nodes}
        used = collections.defaultdict(lambda: [0.0, 0.0, 0])
        for p in pods:
            st = p.get("status") or {}
            if st.get("phase") == "Failed" and (st.get("reason") or "").startswith("OutOf"):
                key = "admission " + p["metadata"]["name"]
                if key not in self.seen:
                    self.seen.add(key)
                    self.violation("over-allocatable", "%s refused by the kubelet on %s: %s" %
                                   (p["metadata"]["name"], p["spec"].get("nodeName"), st.get("reason")))
            node = p["spec"].get("nodeName")
            if not node or st.get("phase") in ("Succeeded", "Failed"):
                continue
            u = used[node]
            for c in p["spec"]["containers"]:
                req = (c.get("resources") or {}).get("requests") or {}
                u[0] += cpu_of(req.get("cpu", "0"))
                u[1] += mem_of(req.get("memory", "0"))
            u[2] += 1
        self.counts["allocatable_samples"] += 1
        for node, (cpu, mem, n) in used.items():
            a = alloc.get(node)
            if a is None:
                continue
            if cpu > cpu_of(a["cpu"]) + 1e-9 or mem > mem_of(a["memory"]) or n > int(a["pods"]):
                key = "node %s %.3f %d %d" % (node, cpu, mem, n)
                if key not in self.seen:
                    self.seen.add(key)
                    self.violation("over-allocatable", "%s holds %.3f cpu, %d bytes, %d pods (allocatable %s)%s" %
                                   (node, cpu, mem, n, json.dumps(a), " at the end" if final else ""))

    # --- the run ------------------------------------------------------------------------------
    def run(self):
        args, rng = self.args, self.rng
        self.seen = set()
        for _ in range(args.nodes):
            self.add_node()
        self.ctl.call("POST", "/objects", [self.budget(k, rng.choice((0, 1, 2))) for k in range(4)])
        for r in self.replicas.values():
            r.start()
        t_end = time.time() + args.seconds
        next_pod = next_chaos = next_sample = time.time() + 1
        while time.time() < t_end:
            now = time.time()
            for name, at in list(self.restart_at.items()):
                if now >= at:
                    self.replicas[name].start()
                    del self.restart_at[name]
            if now >= next_pod:
                self.ctl.call("POST", "/objects", self.pod())
                if rng.random() < 0.15:  # a pod finishes: room for the queue
                    bound = [p for p in self.ctl.call("GET", "/objects/pods/chaos") or []
                             if p["spec"].get("nodeName") and not p["metadata"].get("deletionTimestamp")]
                    if bound:
                        p = rng.choice(bound)
                        self.ctl.call("DELETE", "/objects/pods/chaos/" + p["metadata"]["name"])
                if rng.random() < 0.05:
                    self.ctl.call("POST", "/objects", self.budget(rng.randrange(4), rng.choice((0, 1, 2))))
                next_pod = now + rng.uniform(0.05, 0.4)
            if now >= next_chaos:
                self.chaos_step()
                next_chaos = now + self.rng_chaos.uniform(0.5, args.chaos_interval)
            if now >= next_sample:
                self.check_allocatable()
                next_sample = now + args.sample
            time.sleep(0.02)
        # settle: no more faults, both replicas up, and time for the queue to drain
        self.ctl.call("DELETE", "/faults")
        for name in list(self.restart_at):
            self.replicas[name].start()
        self.restart_at.clear()
        print("chaos: faults over, settling", flush=True)
        deadline = time.time() + args.settle
        time.sleep(5)
        while time.time() < deadline:
            if not self.unresolved(report=False):
                break
            self.check_allocatable()
            time.sleep(1)
        time.sleep(1)
        self.check_allocatable(final=True)
        self.unresolved(report=True)
        for r in self.replicas.values():
            code = r.signal(signal.SIGTERM)
            if code not in (0, None):
                self.violation("sigterm", "%s exited %s on SIGTERM at the end" % (r.name, code))
        self.check_log()
        return self.summary()

    def unresolved(self, report):
        pods = self.ctl.call("GET", "/objects/pods/chaos")
        if not isinstance(pods, list):
            return True
        left = []
        for p in pods:
            if p["spec"].get("schedulerName") != "preemptd" or p["metadata"].get("deletionTimestamp"):
                continue
            st = p.get("status") or {}
            if p["spec"].get("nodeName") or st.get("nominatedNodeName"):
                continue
            cond = [c for c in st.get("conditions") or [] if c.get("type") == "PodScheduled"]
            if cond and cond[0].get("status") == "False" and cond[0].get("reason") == "Unschedulable" and \
                    re.match(r"^0/\d+ nodes are available: ", cond[0].get("message") or ""):
                continue
            left.append(p["metadata"]["name"])
        if report:
            for name in left:
                self.violation("unresolved", "%s neither bound, nominated nor reported unschedulable" % name)
        return left

    # --- checks over the request log ----------------------------------------------------------
    def check_log(self):
        log = [json.loads(line) for line in open(os.path.join(self.args.kube_dir, "requests.jsonl"))]
        self.counts["requests"] = len(log)
        writes = ("create", "update", "patch", "delete")

        def who(r):
            m = re.search(r"\((pd-[ab])\)", r.get("user_agent") or "")
            return m.group(1) if m else None

        # bound-twice
        bound = collections.Counter(r["name"] for r in log if r.get("subresource") == "binding" and r.get("status") == 201)
        for name, n in bound.items():
            if n > 1:
                self.violation("bound-twice", "%s bound %d times" % (name, n))
        # refused
        for r in log:
            if r.get("status") in (403, 422) and not r.get("fault"):
                self.violation("refused", "%s %s -> %d: %s" % (r["method"], r["path"], r["status"],
                                                                 json.dumps(r.get("body"))[:200]))
        # lease-term: holder changes in the order the Lease's successful writes were answered
        terms = []
        for r in log:
            # a create names its Lease in the body, not in the path
            name = r.get("name") or ((r.get("body") or {}).get("metadata") or {}).get("name", "") \
                if isinstance(r.get("body"), dict) else r.get("name") or ""
            if r.get("resource") == "leases" and name.startswith(LEASE.split("/")[1]) and \
                    r.get("verb") in ("create", "update", "patch") and \
                    r.get("status") in (200, 201) and isinstance(r.get("body"), dict):
                terms.append((ts(r["ts"]), (r["body"].get("spec") or {}).get("holderIdentity") or ""))

        def holder_at(t):
            h = ""
            for at, name in terms:
                if at > t:
                    break
                h = name
            return h

        for r in log:
            if r.get("verb") in writes and r.get("resource") != "leases" and who(r) and r.get("status", 0) > 0:
                sent = ts(r.get("received") or r["ts"])
                h = holder_at(sent)
                if h != who(r):
                    self.violation("lease-term", "%s wrote %s %s/%s at %s while the Lease named %r" %
                                   (who(r), r["verb"], r.get("resource"), r.get("name"), r.get("received") or r["ts"], h))
        # victim-order
        node_of = {}
        for r in log:
            if r.get("subresource") == "binding" and r.get("status") == 201 and isinstance(r.get("body"), dict):
                node_of[r["name"]] = (r["body"].get("target") or {}).get("name")
        marked_at = {}
        for i, q in enumerate(log):
            if q.get("subresource") == "status" and q.get("status") == 200 and \
                    any(c.get("type") == "DisruptionTarget" and c.get("status") == "True"
                        for c in ((q.get("body") or {}).get("status") or {}).get("conditions") or []):
                marked_at.setdefault(q.get("name"), i)
        for i, r in enumerate(log):
            if not (r.get("verb") == "delete" and r.get("resource") == "pods" and not r.get("subresource")
                    and who(r) and r.get("status") == 200):
                continue
            name, t = r["name"], ts(r["ts"])
            self.counts["victims"] += 1
            if not (name in marked_at and marked_at[name] < i):
                self.violation("victim-order", "%s deleted at %s without its DisruptionTarget patch first" % (name, r["ts"]))
            node = node_of.get(name)
            # The preemptor's nomination is sent with the decision, beside the victims' writes
            # (the requests run at once, so it may be answered before this DELETE): any sent
            # since the decision began — a second before the victim's DisruptionTarget patch —
            # counts. A node deleted since is no place for a nomination any more.
            since = ts(log[marked_at[name]].get("received") or log[marked_at[name]]["ts"]) - 1 \
                if name in marked_at else t
            followed = node is None or node in self.node_deleted and self.node_deleted[node] >= t - 1 or any(
                ts(q.get("received") or q["ts"]) >= since and (
                    (q.get("subresource") == "status" and q.get("status") == 200 and
                     ((q.get("body") or {}).get("status") or {}).get("nominatedNodeName") == node) or
                    (q.get("subresource") == "binding" and q.get("status") == 201 and
                     ((q.get("body") or {}).get("target") or {}).get("name") == node) or
                    (q.get("resource") == "events" and "NominationExpired" in json.dumps(q.get("body"))))
                for q in log[max(0, marked_at.get(name, i) - 200):])
            if not followed:
                self.violation("victim-order", "%s (on %s) deleted at %s, and no pod was nominated to or bound on %s "
                               "afterwards, nor a nomination's expiry reported" % (name, node, r["ts"], node))

    def summary(self):
        c = self.counts
        fault_kinds = ", ".join("%s %d" % (k[6:], v) for k, v in sorted(c.items()) if k.startswith("fault_"))
        print("chaos: seed %d, %ds: %d pods (%d fitting, %d unschedulable, %d preemptors), %d kill -9 and %d SIGTERM "
              "survived, %d faults injected (%s), %d victims, %d requests checked, %d allocatable samples, "
              "%d violations" % (self.args.seed, self.args.seconds, self.serial, c["pods_fit"], c["pods_unsched"],
                                 c["pods_preemptor"], c["kills"], c["sigterms"], c["faults"], fault_kinds, c["victims"],
                                 c["requests"], c["allocatable_samples"], len(self.violations)), flush=True)
        by_kind = collections.Counter(k for k, _ in self.violations)
        if by_kind:
            print("chaos: violations by kind: %s; replay with CHAOS_SEED=%d" %
                  (dict(by_kind), self.args.seed), flush=True)
        return 1 if self.violations else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ctl", required=True)
    ap.add_argument("--kube-dir", required=True)
    ap.add_argument("--kubeconfig", required=True)
    ap.add_argument("--preemptd", required=True)
    ap.add_argument("--dir", required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--nodes", type=int, default=6)
    ap.add_argument("--chaos-interval", type=float, default=3.0, help="longest pause between two faults")
    ap.add_argument("--sample", type=float, default=1.0)
    ap.add_argument("--settle", type=float, default=30.0)
    ap.add_argument("--split-brain", action="store_true",
                    help="each replica its own Lease (two leaders): the checks' own test, it must find violations")
    args = ap.parse_args()
    print("chaos: seed %d (replay: CHAOS_SEED=%d)" % (args.seed, args.seed), flush=True)
    run = Run(args)
    try:
        sys.exit(run.run())
    finally:
        for r in run.replicas.values():
            if r.alive():
                r.signal(signal.SIGKILL)


if __name__ == "__main__":
    main()
