#!/usr/bin/env python3
"""evictd-kube against the stand-in API server (tests/kube/apiserver.py, a test double):

  1. API event -> descriptor: a Pod created on the API server until its descriptor file is in
     place for evictd (which reads it at its next scan of that pod), median / p99 over N pods.
  2. decision -> DELETE: a spool record renamed into place (what evictd does in the tick that
     decides) until the stand-in receives the DELETE (after the Event POST and the status PATCH),
     median / p99 over N evictions.
  3. idle CPU and RSS with 110 pods watched (bookmarks every 5 s, as a real API server sends
     them about once a minute), side by side with `kubectl get pods --watch` on the same
     selector (the Go client-go a user would otherwise run).

  --idle [WINDOWS] [SECONDS]: only 3., with bookmarks once a minute (a real API server's rate),
     WINDOWS windows (default 3) of SECONDS (default 60), CPU in ns from /proc/PID/schedstat and
     wake-ups (voluntary context switches) per minute, evictd-kube and kubectl in the same window.
     KUBE_BENCH_STRACE=FILE also writes `strace -f -tt` of evictd-kube over the first window.

Usage (root, from the source tree, after `make`):  tests/bench/kube-bench.py [N] [IDLE_SECONDS]
                                                   tests/bench/kube-bench.py --idle [WINDOWS] [SECONDS]
"""
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime

IDLE_ONLY = len(sys.argv) > 1 and sys.argv[1] == "--idle"
if IDLE_ONLY:
    WINDOWS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    IDLE = int(sys.argv[3]) if len(sys.argv) > 3 else 60
    N = 0
else:
    N = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    IDLE = int(sys.argv[2]) if len(sys.argv) > 2 else 60
BUILD = os.environ.get("BUILD", "build")
HERE = os.path.dirname(os.path.abspath(__file__))
KUBE = os.path.join(HERE, "..", "kube")
NODE = "node-1"
tmp = tempfile.mkdtemp(prefix="kube-bench.")
procs = []


def cleanup():
    for p in procs:
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()
    shutil.rmtree(tmp, ignore_errors=True)


def ctl(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(CTL + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        return r.read()


def pod(name, uid, prio=0):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"namespace": "bench", "name": name, "uid": uid},
            "spec": {"nodeName": NODE, "priority": prio,
                     "containers": [{"name": "main", "image": "pause",
                                     "resources": {"requests": {"memory": "64Mi", "cpu": "100m"}}}]}}


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def cpu_ns_wakes(pid):
    """CPU ns and voluntary switches summed over the process's threads (kubectl is a Go program)."""
    ns = wakes = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                ns += int(f.read().split()[0])
            with open(f"/proc/{pid}/task/{t}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches:"):
                        wakes += int(line.split()[1])
        except FileNotFoundError:  # a thread gone meanwhile
            pass
    return ns, wakes


def idle_windows(ek, kp):
    """evictd-kube and kubectl in the same windows: ms CPU and wake-ups per minute, RSS."""
    strace = None
    if os.environ.get("KUBE_BENCH_STRACE") and shutil.which("strace"):
        strace = subprocess.Popen(["strace", "-f", "-tt", "-o", os.environ["KUBE_BENCH_STRACE"], "-p", str(ek.pid)],
                                  stderr=subprocess.DEVNULL)
        time.sleep(1)
    print(f"{'window':8} {'evictd-kube ms/min (wakes/min)':32} {'kubectl --watch ms/min (wakes/min)':36}")
    for w in range(WINDOWS):
        t0 = time.monotonic_ns()
        e0 = cpu_ns_wakes(ek.pid)
        k0 = cpu_ns_wakes(kp.pid) if kp else None
        time.sleep(IDLE)
        dt = time.monotonic_ns() - t0
        e1 = cpu_ns_wakes(ek.pid)
        k1 = cpu_ns_wakes(kp.pid) if kp else None
        if strace:
            strace.terminate()
            strace.wait()
            strace = None
        f = lambda a, b: f"{(b[0] - a[0]) / 1e6 * 60e9 / dt:.2f} ({(b[1] - a[1]) * 60e9 / dt:.1f})"
        print(f"{w + 1:<8} {f(e0, e1):32} {f(k0, k1) if kp else '-':36}")
    print(f"RSS: evictd-kube {cpu_rss(ek.pid)[1] / 1024:.1f} MiB" +
          (f", kubectl {cpu_rss(kp.pid)[1] / 1024:.1f} MiB" if kp else ""))


def cpu_rss(pid):
    with open(f"/proc/{pid}/stat") as f:
        st = f.read().rsplit(")", 1)[1].split()
    ticks = int(st[11]) + int(st[12])
    rss = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    return ticks / os.sysconf("SC_CLK_TCK"), rss


try:
    subprocess.run([os.path.join(KUBE, "mkcerts.sh"), tmp, NODE], check=True, stdout=subprocess.DEVNULL)
    procs.append(subprocess.Popen([sys.executable, os.path.join(KUBE, "apiserver.py"), "--dir", tmp, "--port", "0",
                                   "--bookmark-interval", "60" if IDLE_ONLY else "5", "--grace-scale", "0.01"],
                                  stderr=open(os.path.join(tmp, "apiserver.err"), "w")))
    for _ in range(200):
        if os.path.exists(os.path.join(tmp, "ports.json")):
            break
        time.sleep(0.05)
    ports = json.load(open(os.path.join(tmp, "ports.json")))
    CTL = ports["control"]
    desc, spool = os.path.join(tmp, "desc"), os.path.join(tmp, "spool")
    with open(os.path.join(tmp, "evictd.conf"), "w") as f:
        f.write(f"[kubernetes]\nenable = yes\nnode-name = {NODE}\nkubeconfig = {tmp}/kubeconfig-node\n"
                f"descriptor-dir = {desc}\nspool-dir = {spool}\n")
    ek = subprocess.Popen([os.path.join(BUILD, "evictd-kube"), "--config", os.path.join(tmp, "evictd.conf"),
                           "--log-target", "stderr"], stderr=open(os.path.join(tmp, "kube.err"), "w"))
    procs.append(ek)
    time.sleep(1)

    if IDLE_ONLY:
        ctl("POST", "/objects", [pod(f"idle-{i}", f"idle-{i:04d}") for i in range(110)])
        while len([n for n in os.listdir(desc) if n.endswith(".conf")]) < 110:
            time.sleep(0.1)
        kc = shutil.which("kubectl")
        kp = None
        if kc:
            kp = subprocess.Popen([kc, "--kubeconfig", os.path.join(tmp, "kubeconfig-node"), "get", "pods", "-A",
                                   "--field-selector", f"spec.nodeName={NODE}", "--watch", "-o", "name"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            procs.append(kp)
        else:
            print("kubectl not installed (package kubernetes-client): evictd-kube alone")
        time.sleep(5)
        idle_windows(ek, kp)
        sys.exit(0)

    # 1. API event -> descriptor
    lat = []
    for i in range(N):
        uid = f"lat-{i:04d}"
        path = os.path.join(desc, uid + ".conf")
        t0 = time.monotonic()
        ctl("POST", "/objects", pod(f"lat-{i}", uid))
        while not os.path.exists(path):
            time.sleep(0.0002)
        lat.append((time.monotonic() - t0) * 1000)
        time.sleep(0.02)
    print(f"API event -> descriptor ({N} pods): median {statistics.median(lat):.2f} ms, "
          f"p99 {pct(lat, 99):.2f} ms, max {max(lat):.2f} ms")

    # 2. decision -> DELETE received
    ctl("DELETE", "/requests")
    dl, ev_lat = [], []
    for i in range(N):
        uid = f"lat-{i:04d}"
        name = f"{time.time_ns() // 1000:020d}-{uid}.json"
        rec = {"kind": "eviction", "uid": uid, "namespace": "bench", "name": f"lat-{i}",
               "signal": "memory.available", "resource": "memory", "hard": True, "threshold": "100Mi",
               "available": "80Mi", "priority": 0, "gracePeriodSeconds": 0, "containers": [],
               "startedAt": "2026-01-01T00:00:00Z",
               "message": "The node was low on resource: memory. Threshold quantity: 100Mi, available: 80Mi. "}
        with open(os.path.join(spool, ".tmp"), "w") as f:
            json.dump(rec, f)
        t0 = time.time()
        os.rename(os.path.join(spool, ".tmp"), os.path.join(spool, name))
        path = f"/api/v1/namespaces/bench/pods/lat-{i}"
        got = None
        for _ in range(20000):
            for line in ctl("GET", "/requests").decode().splitlines():
                r = json.loads(line)
                if r.get("method") == "DELETE" and r.get("path") == path:
                    got = r
                    break
            if got:
                break
            time.sleep(0.002)
        ts = got["ts"]
        if isinstance(ts, str):
            ts = datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
        dl.append((ts - t0) * 1000)
        ev = [json.loads(l) for l in ctl("GET", "/requests").decode().splitlines()]
        first = [r for r in ev if r.get("method") == "POST" and r.get("path") == "/api/v1/namespaces/bench/events"
                 and r.get("body", {}).get("involvedObject", {}).get("uid") == uid]
        if first:
            fts = datetime.fromisoformat(first[0]["ts"].replace("Z", "+00:00")).timestamp()
            ev_lat.append((fts - t0) * 1000)
    print(f"decision (spool record) -> DELETE received ({N} evictions, after Event + status PATCH): "
          f"median {statistics.median(dl):.2f} ms, p99 {pct(dl, 99):.2f} ms, max {max(dl):.2f} ms")
    if ev_lat:
        print(f"   of which record -> Event POST received: median {statistics.median(ev_lat):.2f} ms, "
              f"p99 {pct(ev_lat, 99):.2f} ms")

    # 3. idle with 110 pods watched, side by side with kubectl --watch
    # the evictions above deleted the latency pods: 110 fresh ones
    ctl("POST", "/objects", [pod(f"idle-{i}", f"idle-{i:04d}") for i in range(110)])
    while len([n for n in os.listdir(desc) if n.endswith(".conf")]) < 110:
        time.sleep(0.1)
    kc = shutil.which("kubectl")
    kp = None
    if kc:
        kp = subprocess.Popen([kc, "--kubeconfig", os.path.join(tmp, "kubeconfig-node"), "get", "pods", "-A",
                               "--field-selector", f"spec.nodeName={NODE}", "--watch", "-o", "name"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(kp)
    time.sleep(5)
    a0, _ = cpu_rss(ek.pid)
    k0 = cpu_rss(kp.pid)[0] if kp else 0
    time.sleep(IDLE)
    a1, arss = cpu_rss(ek.pid)
    print(f"idle, 110 pods watched, {IDLE} s: evictd-kube {(a1 - a0) * 1000 / IDLE * 60:.1f} ms CPU/min, "
          f"RSS {arss / 1024:.1f} MiB")
    if kp:
        k1, krss = cpu_rss(kp.pid)
        print(f"                      same window: kubectl get pods --watch {(k1 - k0) * 1000 / IDLE * 60:.1f} ms CPU/min, "
              f"RSS {krss / 1024:.1f} MiB")
finally:
    cleanup()
