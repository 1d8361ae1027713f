#!/usr/bin/env python3
"""A stand-in exec credential plugin (client.authentication.k8s.io v1 / v1beta1), as kubectl runs
gke-gcloud-auth-plugin or kubelogin. Behaviour from its environment (the kubeconfig's exec env):
  FAKE_COUNT=FILE      a line appended per run (how often it ran)
  FAKE_TOKEN=T         answer status.token T; FAKE_FIRST_TOKEN=T: the first run answers T instead
  FAKE_CERT/FAKE_KEY   PEM files: answer clientCertificateData/clientKeyData
  FAKE_EXPIRES_IN=S    expirationTimestamp S seconds from now
  FAKE_STDERR=TEXT     printed on standard error (passed through to the user)
  FAKE_EXIT=N          exit with status N after printing nothing
  FAKE_WANT_CLUSTER=1  fail unless KUBERNETES_EXEC_INFO holds spec.cluster.server
  FAKE_API=V           answer apiVersion V instead of the one KUBERNETES_EXEC_INFO asked for
  FAKE_HANG_RUN=N      run N prints nothing and never ends (a plugin stuck on a browser login)
It checks what kubectl guarantees: KUBERNETES_EXEC_INFO is set, spec.interactive is false (no
terminal), standard input is not a terminal."""
import datetime
import json
import os
import sys
import time

env = os.environ
if env.get("FAKE_STDERR"):
    print(env["FAKE_STDERR"], file=sys.stderr)
n = 0
if env.get("FAKE_COUNT"):
    with open(env["FAKE_COUNT"], "a", encoding="utf-8") as f:
        f.write("run\n")
    with open(env["FAKE_COUNT"], encoding="utf-8") as f:
        n = len(f.readlines())
if env.get("FAKE_HANG_RUN") and n == int(env["FAKE_HANG_RUN"]):
    while True:
        time.sleep(3600)
if env.get("FAKE_EXIT"):
    sys.exit(int(env["FAKE_EXIT"]))
info = json.loads(env["KUBERNETES_EXEC_INFO"])
if info.get("kind") != "ExecCredential" or info["spec"].get("interactive") is not False:
    sys.exit("fake-exec-plugin: bad KUBERNETES_EXEC_INFO: " + env["KUBERNETES_EXEC_INFO"])
if os.isatty(0):
    sys.exit("fake-exec-plugin: standard input is a terminal")
if env.get("FAKE_WANT_CLUSTER") and not info["spec"].get("cluster", {}).get("server", "").startswith("https://"):
    sys.exit("fake-exec-plugin: no spec.cluster.server in KUBERNETES_EXEC_INFO")
status = {}
if env.get("FAKE_TOKEN"):
    status["token"] = env["FAKE_FIRST_TOKEN"] if n == 1 and env.get("FAKE_FIRST_TOKEN") else env["FAKE_TOKEN"]
if env.get("FAKE_CERT"):
    with open(env["FAKE_CERT"], encoding="utf-8") as f:
        status["clientCertificateData"] = f.read()
    with open(env["FAKE_KEY"], encoding="utf-8") as f:
        status["clientKeyData"] = f.read()
if env.get("FAKE_EXPIRES_IN"):
    t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=int(env["FAKE_EXPIRES_IN"]))
    status["expirationTimestamp"] = t.strftime("%Y-%m-%dT%H:%M:%SZ")
print(json.dumps({"kind": "ExecCredential", "apiVersion": env.get("FAKE_API", info["apiVersion"]),
                  "status": status}))
