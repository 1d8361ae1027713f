#!/bin/bash
# preemptd whose exec credential plugin hangs when it renews the token: the event loop goes on
# with the token it has (still valid) — the Lease is renewed, /healthz answers, a pending pod is
# bound — while the plugin runs; at its deadline (30 s) the plugin is killed and reaped, one line
# says so, and the next run renews the token before the old one expires. Nothing is left behind.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
pd_setup

# the plugin under a name of this test's own: pgrep finds no other test's
PLUGIN=$T/hang-exec-plugin.py
cp tests/kube/fake-exec-plugin.py "$PLUGIN"
TOKEN=$(cut -d, -f1 "$KUBE_DIR/tokens.csv" | grep '^admin-token')
[ -n "$TOKEN" ] || bail "the stand-in's admin token"
RUNS=$T/plugin.runs
# 55 s of validity: renewed after 5.5 s (its tenth; 80% of it would leave less than the plugin's
# deadline and two retries), the second run hangs until killed at ~36 s, the third at ~46 s
# renews it 9 s before it expires
python3 - "$T/kubeconfig" "$KUBE_URL" "$KUBE_DIR/ca.crt" "$PLUGIN" "$TOKEN" "$RUNS" <<'PY'
import json, os, sys
path, server, ca, cmd, token, runs = sys.argv[1:]
ex = {"apiVersion": "client.authentication.k8s.io/v1", "command": cmd, "interactiveMode": "Never",
      "env": [{"name": "FAKE_TOKEN", "value": token}, {"name": "FAKE_COUNT", "value": runs},
              {"name": "FAKE_EXPIRES_IN", "value": "55"}, {"name": "FAKE_HANG_RUN", "value": "2"}]}
doc = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
       "clusters": [{"name": "k", "cluster": {"server": server, "certificate-authority": ca}}],
       "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
       "users": [{"name": "u", "user": {"exec": ex}}]}
with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
    json.dump(doc, f)
PY
runs() { [ -f "$RUNS" ] && wc -l <"$RUNS" || echo 0; }
hung() { pgrep -f "$PLUGIN" >/dev/null; }
lease_renewals() { nreqs '.resource == "leases" and .verb == "update" and .status == 200'; }
refused() { nreqs '.status == 401'; }

node n1 4
pd_start a --kubeconfig "$T/kubeconfig" --leader-elect-retry-period 1s --leader-elect-renew-deadline 5s \
	--leader-elect-lease-duration 8s
second_hangs() { [ "$(runs)" -ge 2 ] && hung; }
ok "the renewal's run starts (the second) and hangs" wait_for 15 second_hangs
before=$(lease_renewals)
pending default web 0 500m
ok "...meanwhile a pending pod is bound, with the token in use" wait_for 10 bound_to default web n1
healthz() { [ "$(curl -s -m 3 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$(pd_port a)/healthz")" = 200 ]; }
ok ".../healthz answers" healthz
sleep 8
after=$(lease_renewals)
renewing() { hung && [ "$after" -ge $((before + 5)) ]; }
ok "...the Lease is renewed every second (no renew deadline missed: $before, then $after after 8 s)" renewing ||
	sed 's/^/# /' "$T/a.log"
ok "...and the plugin still runs: only one run at a time" [ "$(runs)" = 2 ]
gone_plugin() { ! hung; }
ok "at its deadline the plugin is killed" wait_for 35 gone_plugin
ok "...one line says so, and that the token in use is still valid" bash -c \
	"[ \$(grep -c 'exec plugin \"$PLUGIN\" gave no answer within 30 s: killed (tried again in 10 s; the credential in use is valid for [0-9]* s more)' '$T/a.log') = 1 ]" ||
	sed 's/^/# /' "$T/a.log"
third() { [ "$(runs)" -ge 3 ]; }
# 10 s after the kill, and a python plugin starting on a loaded machine; the token's expiry is
# checked next (no request refused)
ok "a later run renews the token" wait_for 25 third
ok "...before it expired: the API server refused no request" bash -c "[ $(refused) = 0 ]"
ok "preemptd stays up, and leader" bash -c "kill -0 ${PD_PID[a]} && ! grep -q 'Lost Lease' '$T/a.log'"
pd_stop a
ok "no plugin process is left behind" gone_plugin
done_testing
