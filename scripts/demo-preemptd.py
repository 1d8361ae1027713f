#!/usr/bin/env python3
"""`./run --preemptd`: preemptd against a throwaway API server, on any machine, no cluster needed.

    scripts/demo-preemptd.py PREEMPTD          the demonstration, until Ctrl-C
    scripts/demo-preemptd.py --check [PREEMPTD] prints why it cannot run here (exit 1), or nothing

The API server is the test suite's stand-in (tests/kube/apiserver.py: the API a scheduler uses,
a kubelet simulation, TLS with certificates made for the run by tests/kube/mkcerts.sh). The cluster
is examples/preemptd/: two nodes, three priority classes, pods another scheduler placed, a
PodDisruptionBudget allowing no disruption. preemptd (not in a dry run) binds one pod, reports one
unschedulable in kube-scheduler's words, and preempts for a high-priority pod, sparing the
budget's pod; the pods and Events are shown as `kubectl get pods -o wide` and `kubectl get events`
show them (read from the API here: kubectl is not needed). Then preemptd keeps running until
Ctrl-C, which stops both servers, removes the directory and checks that nothing is left.

The servers run in sessions of their own (the terminal's Ctrl-C reaches this program alone, which
stops them in order) and die with it (PR_SET_PDEATHSIG) should it be killed.
"""
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(TOP, "examples", "preemptd")
KUBE = os.path.join(TOP, "tests", "kube")
T0 = time.monotonic()


class Stop(Exception):
    pass


def on_signal(signum, frame):
    raise Stop()


def why_not():
    for tool in ("openssl",):
        if not shutil.which(tool):
            return f"{tool} is missing (the API server's certificates)"
    try:
        import yaml  # noqa: F401
    except ImportError:
        return "python3-yaml is missing (the manifests of examples/preemptd/)"
    for f in (os.path.join(KUBE, "apiserver.py"), os.path.join(KUBE, "mkcerts.sh")):
        if not os.path.exists(f):
            return f"{os.path.relpath(f, TOP)} is missing"
    return ""


def die_with_parent():
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def ts():
    return f"{'+%.3fs' % (time.monotonic() - T0):>9}"


def say(*a):
    print(*a, flush=True)


class Demo:
    def __init__(self, preemptd):
        self.preemptd = os.path.abspath(preemptd)
        self.dir = None
        self.procs = {}
        self.control = None

    # -- the API, through the stand-in's control endpoint (plain HTTP on 127.0.0.1) --------------
    def ctl(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.control + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.load(r)

    def apply(self, name, patch=None):
        import yaml
        with open(os.path.join(EXAMPLES, name), encoding="utf-8") as f:
            objs = [o for o in yaml.safe_load_all(f) if o]
        for o in objs:
            if patch:
                patch(o)
        self.ctl("POST", "/objects", objs)
        return objs

    def pods(self):
        return sorted(self.ctl("GET", "/objects/pods/default"), key=lambda p: p["metadata"]["name"])

    def pod(self, name):
        try:
            return self.ctl("GET", f"/objects/pods/default/{name}")
        except urllib.error.HTTPError:
            return None

    def events(self):
        ev = self.ctl("GET", "/objects/events.events.k8s.io/default")
        return sorted(ev, key=lambda e: e.get("eventTime") or e.get("deprecatedLastTimestamp") or "")

    def wait(self, what, seconds, test):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if test():
                return True
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise RuntimeError(f"{name} exited with status {p.returncode} (its log: {self.dir}/{name}.log)")
            time.sleep(0.1)
        raise RuntimeError(f"{what}: not within {seconds} s")

    # -- the tables, as kubectl prints them ----------------------------------------------------
    def get_pods(self):
        rows = [("NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED NODE", "READINESS GATES")]
        now = time.time()
        for p in self.pods():
            st = p.get("status", {})
            phase = st.get("phase", "Pending")
            status = "Terminating" if p["metadata"].get("deletionTimestamp") else phase
            cs = st.get("containerStatuses") or []
            ready = sum(1 for c in cs if c.get("ready"))
            rows.append((p["metadata"]["name"], f"{ready}/{len(p['spec'].get('containers', []))}", status,
                         "0", age(p["metadata"].get("creationTimestamp"), now), st.get("podIP") or "<none>",
                         p["spec"].get("nodeName") or "<none>", st.get("nominatedNodeName") or "<none>", "<none>"))
        table(rows)

    def get_events(self):
        rows = [("LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE")]
        now = time.time()
        for e in self.events():
            reg = e.get("regarding", {})
            rows.append((age(e.get("eventTime") or e.get("deprecatedLastTimestamp"), now), e.get("type", ""),
                         e.get("reason", ""), f"{reg.get('kind', '').lower()}/{reg.get('name', '')}", e.get("note", "")))
        table(rows)

    # -- the run ---------------------------------------------------------------------------------
    def start(self, name, argv):
        log = open(os.path.join(self.dir, f"{name}.log"), "w")
        self.procs[name] = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True, preexec_fn=die_with_parent)
        log.close()

    def follow(self, name, prefix):
        def run():
            path = os.path.join(self.dir, name + ".log")
            with open(path, encoding="utf-8", errors="replace") as f:
                while name in self.procs:
                    line = f.readline()
                    if not line:
                        if self.procs[name].poll() is not None:
                            return
                        time.sleep(0.05)
                        continue
                    say(f"  {ts()} {prefix}{line.rstrip()}")
        threading.Thread(target=run, daemon=True).start()

    def run(self, exit_after):
        self.dir = tempfile.mkdtemp(prefix="evictd-preemptd-demo.")
        say("preemptd demonstration: preemptd, not in a dry run, against a throwaway API server on this machine "
            "(Ctrl-C stops it and removes everything)")
        say(f"  API server: the stand-in tests/kube/apiserver.py, TLS, its state and logs in {self.dir}")
        r = subprocess.run([os.path.join(KUBE, "mkcerts.sh"), self.dir, "node-a"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        if r.returncode:
            raise RuntimeError(f"the certificates: {r.stderr.strip()}")
        self.start("apiserver", [sys.executable, os.path.join(KUBE, "apiserver.py"), "--dir", self.dir,
                                 "--grace-scale", "0.05", "--kubelet-start-delay", "0.1", "--bookmark-interval", "1"])
        ports = os.path.join(self.dir, "ports.json")
        self.wait("the API server starts", 20, lambda: os.path.exists(ports) and os.path.getsize(ports) > 0)
        with open(ports, encoding="utf-8") as f:
            p = json.load(f)
        self.control = f"http://127.0.0.1:{p['control_port']}"
        kubeconfig = os.path.join(self.dir, "kubeconfig-admin")

        def no_disruption(o):   # the disruption controller's answer: web-1 is its only pod
            if o["kind"] == "PodDisruptionBudget":
                o["status"] = {"disruptionsAllowed": 0, "currentHealthy": 1, "desiredHealthy": 1,
                               "expectedPods": 1, "observedGeneration": 1}
        self.apply("cluster.yaml", no_disruption)
        self.wait("the cluster's pods run", 20,
                  lambda: all(p.get("status", {}).get("phase") == "Running" for p in self.pods()))
        say("")
        say("The cluster (examples/preemptd/cluster.yaml): node-a and node-b, 4 CPUs each; priority classes "
            "batch (100), web-tier (1000), critical (1000000);")
        say("  web-1 (web-tier, 3 CPUs) on node-a, under PodDisruptionBudget web (minAvailable 1: no disruption "
            "allowed); batch-1 (2 CPUs) and batch-2 (1 CPU) on node-b")
        say("")
        say(f"preemptd --kubeconfig {kubeconfig} --leader-elect no --log-target stderr")
        self.start("preemptd", [self.preemptd, "--kubeconfig", kubeconfig, "--config", "/dev/null",
                                "--leader-elect", "no", "--log-target", "stderr", "--listen", "127.0.0.1:0"])
        self.follow("preemptd", "")
        self.wait("preemptd watches", 20, lambda: "Started: " in open(os.path.join(self.dir, "preemptd.log")).read())

        time.sleep(0.3)
        say("")
        say("Two pods for preemptd (examples/preemptd/pods.yaml): report (1 CPU) and huge (8 CPUs)")
        self.apply("pods.yaml")

        def scheduled(name):
            p = self.pod(name)
            return p and p["spec"].get("nodeName")

        def unschedulable(name):
            p = self.pod(name)
            return p and any(c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable"
                             for c in p.get("status", {}).get("conditions", []))
        self.wait("report is bound", 20, lambda: scheduled("report"))
        self.wait("huge is reported unschedulable", 20, lambda: unschedulable("huge"))
        time.sleep(0.5)
        say("")
        say("$ kubectl get pods -o wide")
        self.get_pods()
        huge = self.pod("huge")
        msg = [c.get("message") for c in huge["status"]["conditions"] if c.get("type") == "PodScheduled"][0]
        say(f"huge: PodScheduled=False, Unschedulable: {msg}")

        say("")
        say("A pod of priority class critical (examples/preemptd/critical.yaml): 3 CPUs, which no node has free")
        self.apply("critical.yaml")
        self.wait("critical is bound after the preemption", 40, lambda: scheduled("critical"))
        time.sleep(0.5)
        say("")
        say("$ kubectl get pods -o wide")
        self.get_pods()
        say("")
        say("$ kubectl get events")
        self.get_events()
        gone = sorted({"batch-1", "batch-2", "web-1", "report"} - {p["metadata"]["name"] for p in self.pods()})
        say("")
        say("Summary")
        say(f"  critical bound to {self.pod('critical')['spec']['nodeName']}; preempted: {', '.join(gone) or 'none'}; "
            f"web-1 kept (its PodDisruptionBudget allows no disruption); huge still Pending, Unschedulable")
        if exit_after:
            return
        say("")
        say("preemptd keeps running against the API server. Try it with kubectl (the stand-in serves what it needs):")
        say(f"  KUBECONFIG={kubeconfig} kubectl get pods -o wide")
        say("  a second critical pod, for which preemptd has to break the budget (docs/preemptd.md):")
        say(f"  sed 's/name: critical$/name: critical-2/' examples/preemptd/critical.yaml | KUBECONFIG={kubeconfig} kubectl apply -f -")
        say("Ctrl-C stops both and removes everything.")
        while all(p.poll() is None for p in self.procs.values()):
            time.sleep(0.2)
        raise RuntimeError("a server exited: " + ", ".join(f"{n} status {p.returncode}" for n, p in self.procs.items()
                                                             if p.poll() is not None))

    def teardown(self):
        """Stops the servers (SIGTERM, SIGKILL after 1 s), removes the directory; what is left."""
        for name in ("preemptd", "apiserver"):
            p = self.procs.get(name)
            if p and p.poll() is None:
                p.terminate()
        end = time.monotonic() + 1
        for p in self.procs.values():
            try:
                p.wait(max(0.01, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        pids = [p.pid for p in self.procs.values()]
        status = {n: p.returncode for n, p in self.procs.items()}
        self.procs = {}
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        left = [f"directory {self.dir}"] if self.dir and os.path.exists(self.dir) else []
        for pid in pids:
            try:
                os.kill(pid, 0)
                left.append(f"process {pid}")
            except ProcessLookupError:
                pass
        if self.dir:
            for d in os.listdir("/proc"):
                if d.isdigit() and int(d) != os.getpid():
                    try:
                        with open(f"/proc/{d}/cmdline", "rb") as f:
                            if self.dir.encode() in f.read():
                                left.append(f"process {d}")
                    except OSError:
                        pass
        return status, left


def main():
    args = sys.argv[1:]
    if args[:1] == ["--check"]:
        why = why_not()
        if why:
            print(why)
            return 1
        return 0
    exit_after = args[:1] == ["--exit-after-preemption"]
    if exit_after:
        args = args[1:]
    if len(args) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    why = why_not()
    if why:
        print(f"demo-preemptd: cannot run here: {why}", file=sys.stderr)
        return 3
    demo = Demo(args[0])
    rc = 0
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    try:
        demo.run(exit_after)
    except Stop:
        pass
    except Exception as e:  # a failed step: said in one line, then the same teardown
        say(f"demo-preemptd: FAILED: {e}")
        rc = 1
    finally:
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(s, signal.SIG_IGN)
        status, left = demo.teardown()
    say("")
    say("stopping: " + (", ".join(f"{n} exited with status {s}" for n, s in status.items()) or "nothing was running"))
    if left:
        for what in left:
            say(f"demo-preemptd: LEFT BEHIND: {what}")
        return 1
    say("teardown checked: no process (preemptd and the API server are gone), no file (the directory is removed) left")
    return rc


def age(stamp, now):
    if not stamp:
        return "<unknown>"
    import datetime
    try:
        t = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return "<unknown>"
    s = max(0, int(now - t))
    return f"{s}s" if s < 120 else f"{s // 60}m"


def table(rows):
    w = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        say("   ".join(str(c).ljust(w[i]) for i, c in enumerate(r)).rstrip())


if __name__ == "__main__":
    sys.exit(main())
