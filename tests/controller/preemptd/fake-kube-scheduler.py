#!/usr/bin/env python3
"""A stand-in for kube-scheduler, for preemptd --shadow's tests: it watches the pods of the
stand-in API server (HTTPS, the admin client certificate) and, for each pending pod of its
scheduler name, does what a plan says, on the wire as kube-scheduler does it (reference §12):

  {"NS/NAME": {"bind": "NODE"}}                  POST pods/NAME/binding
  {"NS/NAME": {"preempt": {"node": "NODE", "victims": ["NS/V", ...]}}}
        each victim: PATCH pods/V/status DisruptionTarget=True/PreemptionByScheduler, then DELETE;
        the preemptor: PATCH status PodScheduled=False + nominatedNodeName; once the victims are
        gone, POST pods/NAME/binding to NODE
  {"NS/NAME": {"unschedulable": "MESSAGE"}}      PATCH status PodScheduled=False/Unschedulable

Pods the plan does not name are left alone. Every action is printed on stdout. It is a test
double of the scheduler's writes, not a scheduler: where to bind is the test's to say.

  fake-kube-scheduler.py --dir KUBE_DIR --url https://127.0.0.1:PORT --plan PLAN.json
         [--scheduler-name default-scheduler]
"""
import argparse
import http.client
import json
import signal
import ssl
import sys
import threading
import time
import urllib.parse

AGENT = "fake-kube-scheduler"


class Api:
    def __init__(self, url, kube_dir):
        u = urllib.parse.urlsplit(url)
        self.host, self.port = u.hostname, u.port
        self.ctx = ssl.create_default_context(cafile=kube_dir + "/ca.crt")
        self.ctx.load_cert_chain(kube_dir + "/admin.crt", kube_dir + "/admin.key")

    def conn(self, timeout=30):
        return http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=timeout)

    def call(self, method, path, body=None, ctype="application/json"):
        c = self.conn()
        headers = {"User-Agent": AGENT, "Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = ctype
        c.request(method, path, body=data, headers=headers)
        r = c.getresponse()
        out = r.read()
        c.close()
        print("%s %s -> %d" % (method, path, r.status), flush=True)
        return r.status, out


def pod_path(ns, name, sub=""):
    return "/api/v1/namespaces/%s/pods/%s%s" % (ns, name, "/" + sub if sub else "")


def bind(api, pod, node):
    ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    api.call("POST", pod_path(ns, name, "binding"), {
        "apiVersion": "v1", "kind": "Binding",
        "metadata": {"namespace": ns, "name": name, "uid": pod["metadata"]["uid"]},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node}})


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def preempt(api, pod, node, victims, scheduler):
    ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    for v in victims:
        vns, vname = v.split("/", 1)
        api.call("PATCH", pod_path(vns, vname, "status"), {"status": {"conditions": [{
            "type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
            "message": "%s: preempting to accommodate a higher priority pod" % scheduler,
            "lastTransitionTime": now()}]}}, "application/strategic-merge-patch+json")
        api.call("DELETE", pod_path(vns, vname))
    api.call("PATCH", pod_path(ns, name, "status"), {"status": {"nominatedNodeName": node, "conditions": [{
        "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
        "message": "0/1 nodes are available: 1 Insufficient cpu.", "lastTransitionTime": now()}]}},
        "application/strategic-merge-patch+json")
    deadline = time.time() + 60
    while time.time() < deadline:
        if all(api.call("GET", pod_path(*v.split("/", 1)))[0] == 404 for v in victims):
            bind(api, pod, node)
            return
        time.sleep(0.1)
    print("victims of %s/%s never went" % (ns, name), flush=True)


def unschedulable(api, pod, message):
    ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    api.call("PATCH", pod_path(ns, name, "status"), {"status": {"conditions": [{
        "type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message,
        "lastTransitionTime": now()}]}}, "application/strategic-merge-patch+json")


def act(api, plan, pod, scheduler):
    key = "%s/%s" % (pod["metadata"]["namespace"], pod["metadata"]["name"])
    what = plan.get(key)
    if what is None:
        print("not in the plan: %s" % key, flush=True)
    elif "bind" in what:
        bind(api, pod, what["bind"])
    elif "preempt" in what:
        preempt(api, pod, what["preempt"]["node"], what["preempt"]["victims"], scheduler)
    elif "unschedulable" in what:
        unschedulable(api, pod, what["unschedulable"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--url", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--scheduler-name", default="default-scheduler")
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    plan = json.load(open(a.plan))
    api = Api(a.url, a.dir)
    seen = set()
    while True:  # a dropped watch starts again
        c = api.conn(timeout=None)
        c.request("GET", "/api/v1/pods?watch=1", headers={"User-Agent": AGENT})
        r = c.getresponse()
        for line in r:
            if not line.strip():
                continue
            ev = json.loads(line)
            pod = ev.get("object", {})
            if ev.get("type") not in ("ADDED", "MODIFIED") or pod.get("kind") != "Pod":
                continue
            spec, meta = pod.get("spec", {}), pod["metadata"]
            if spec.get("nodeName") or spec.get("schedulerName") != a.scheduler_name or meta["uid"] in seen:
                continue
            seen.add(meta["uid"])
            threading.Thread(target=act, args=(api, plan, pod, a.scheduler_name), daemon=True).start()
        c.close()
        time.sleep(0.2)


if __name__ == "__main__":
    main()
