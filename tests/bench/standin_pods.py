"""Pods created one at a time through the stand-in API server's control port, for
bench-preemptd-e2e.sh: each created, then waited for until it is bound; afterwards the stand-in's
request log, each request with its time after its pod's creation."""
import datetime
import json
import time
import urllib.request


def call(ctl, method, path, body=None):
    req = urllib.request.Request(ctl + path, method=method, data=json.dumps(body).encode() if body else None,
                                 headers={"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))


def create_one_at_a_time(ctl, names, priority, cpu, timeout):
    """Creates a pod of schedulerName preemptd per name, each once the one before is bound (or
    timeout seconds have passed); returns {name: its creation time}."""
    created = {}
    for name in names:
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "default", "name": name},
               "spec": {"schedulerName": "preemptd", "priority": priority,
                        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]}}
        created[name] = time.time()  # before the POST: the watch may deliver the pod before it returns
        call(ctl, "POST", "/objects", pod)
        deadline = time.time() + timeout
        while time.time() < deadline and not call(ctl, "GET", "/objects/pods/default/" + name)["spec"].get("nodeName"):
            time.sleep(0.002)
    return created


def requests_after(ctl, created):
    """The request log as (request, ms after the creation of the pod it names, or None)."""
    for line in urllib.request.urlopen(ctl + "/requests").read().decode().splitlines():
        r = json.loads(line)
        t = datetime.datetime.fromisoformat(r["ts"]).timestamp()
        name = r.get("name")
        yield r, (t - created[name]) * 1000 if name in created else None
