#!/bin/bash
# preemptctl --kubeconfig with an exec credential plugin, as kubectl runs one (the form GKE, EKS,
# AKS and OIDC set-ups write into ~/.kube/config): tests/kube/fake-exec-plugin.py answers a token
# or a client certificate, v1 or v1beta1, and the stand-in API server checks the bearer token it
# returned. An expiring credential is renewed, a refused one (401) too; a missing command, a
# failing plugin, interactiveMode Always are one clear line; the plugin's stderr reaches the user.
# proxy-url takes the requests through a CONNECT proxy (tests/kube/connect-proxy.py). preemptd
# renews the token while it runs; with a CA that is not the server's it says once that it retries.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/lib-apiserver.sh"

command -v python3 >/dev/null || skip_all "python3 missing"
command -v openssl >/dev/null || skip_all "openssl missing (test certificates)"
command -v curl >/dev/null || skip_all "curl missing"
PCTL=$BUILD/preemptctl
[ -x "$PCTL" ] || skip_all "$PCTL not built"
PLUGIN=$PWD/tests/kube/fake-exec-plugin.py
T=$(mktemp -d "${TMPDIR:-/tmp}/exec-plugin.XXXXXX")
KUBE_NO_TRAP=1
proxy_pid="" pd_pid=""
trap '[ -n "$proxy_pid" ] && kill "$proxy_pid" 2>/dev/null; [ -n "$pd_pid" ] && kill "$pd_pid" 2>/dev/null; kube_stop; rm -rf "$T"' EXIT
kube_start || bail "the stand-in API server starts"
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0}
TOKEN=$(cut -d, -f1 "$KUBE_DIR/tokens.csv" | grep '^admin-token')
[ -n "$TOKEN" ] || bail "the stand-in's admin token"

# kcfg NAME API-VERSION INTERACTIVE-MODE COMMAND [ENV-NAME=VALUE...]: $T/NAME, an exec user
kcfg() {
	local name=$1 api=$2 mode=$3 cmd=$4; shift 4
	python3 - "$T/$name" "$KUBE_URL" "$KUBE_DIR/ca.crt" "$api" "$mode" "$cmd" "$@" <<'PY'
import json, os, sys
path, server, ca, api, mode, cmd, *env = sys.argv[1:]
ex = {"apiVersion": api, "command": cmd, "args": ["get-token", "--audience", "test"],
      "env": [{"name": e.split("=", 1)[0], "value": e.split("=", 1)[1]} for e in env],
      "provideClusterInfo": True, "installHint": "install fake-exec-plugin from the test suite"}
if mode:
    ex["interactiveMode"] = mode
doc = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
       "clusters": [{"name": "k", "cluster": {"server": server, "certificate-authority": ca}}],
       "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
       "users": [{"name": "u", "user": {"exec": ex}}]}
with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
    json.dump(doc, f)
PY
}
runs() { [ -f "$1" ] && wc -l <"$1" || echo 0; }
# check KUBECONFIG: preemptctl check, its status in $rc, output in $T/out and $T/err
check() { "$PCTL" check --kubeconfig "$1" >"$T/out" 2>"$T/err"; rc=$?; }
show() { sed 's/^/# /' "$T/err"; false; }

kcfg v1 client.authentication.k8s.io/v1 Never "$PLUGIN" FAKE_TOKEN="$TOKEN" FAKE_COUNT="$T/v1.runs" \
	FAKE_WANT_CLUSTER=1 FAKE_EXPIRES_IN=3600
check "$T/v1"
ok "v1 plugin, token answer: the cluster is listed with the token it returned" \
	bash -c "[ $rc = 0 ] && grep -q '^ok: ' '$T/out'" || show
ok "...the plugin ran once (the token is good for an hour), KUBERNETES_EXEC_INFO carried the cluster" \
	[ "$(runs "$T/v1.runs")" = 1 ]
# the kubeconfig holds no other credential: every request the stand-in authenticated as
# kubernetes-admin carried the plugin's token
all_admin() {
	kube_requests | python3 -c 'import json, sys
ids = [json.loads(l)["identity"] for l in sys.stdin if l.strip()]
sys.exit(0 if ids and all(i == "kubernetes-admin" for i in ids) else 1)'
}
ok "...the stand-in authenticated every request as the token's user" all_admin

kcfg beta client.authentication.k8s.io/v1beta1 "" "$PLUGIN" FAKE_TOKEN="$TOKEN"
check "$T/beta"
ok "v1beta1 plugin without interactiveMode (IfAvailable: run without a terminal)" bash -c "[ $rc = 0 ]" || show

kcfg wrong client.authentication.k8s.io/v1 Never "$PLUGIN" FAKE_TOKEN=not-a-known-token
check "$T/wrong"
ok "a token the server does not know: 401, no cluster" bash -c "[ $rc = 1 ] && grep -q 'HTTP 401' '$T/err'" || show

kcfg cert client.authentication.k8s.io/v1 IfAvailable "$PLUGIN" FAKE_CERT="$KUBE_DIR/admin.crt" \
	FAKE_KEY="$KUBE_DIR/admin.key"
check "$T/cert"
ok "a client certificate and key answer: TLS client authentication with them" bash -c "[ $rc = 0 ]" || show

kcfg expiring client.authentication.k8s.io/v1 Never "$PLUGIN" FAKE_TOKEN="$TOKEN" FAKE_EXPIRES_IN=2 \
	FAKE_COUNT="$T/expiring.runs"
check "$T/expiring"
ok "a token about to expire is renewed before use: the plugin ran again for the later requests" \
	bash -c "[ $rc = 0 ] && [ \$(wc -l < '$T/expiring.runs') -ge 3 ]" || show

kcfg rotated client.authentication.k8s.io/v1 Never "$PLUGIN" FAKE_FIRST_TOKEN=revoked-token FAKE_TOKEN="$TOKEN" \
	FAKE_COUNT="$T/rotated.runs"
check "$T/rotated"
ok "a token refused with 401 is renewed once and the request retried" \
	bash -c "[ $rc = 0 ] && [ \$(wc -l < '$T/rotated.runs') = 2 ]" || show

kcfg missing client.authentication.k8s.io/v1 Never /nonexistent/gke-gcloud-auth-plugin
check "$T/missing"
ok "a missing command: one line naming it, with the kubeconfig's installHint" bash -c \
	"[ $rc = 1 ] && grep -q 'exec plugin \"/nonexistent/gke-gcloud-auth-plugin\" not found: install fake-exec-plugin from the test suite' '$T/err'" || show

kcfg failing client.authentication.k8s.io/v1 Never "$PLUGIN" FAKE_STDERR="please run: fake login" FAKE_EXIT=3
check "$T/failing"
ok "a failing plugin: its stderr passed through, then its exit status" bash -c \
	"[ $rc = 1 ] && grep -qx 'please run: fake login' '$T/err' && grep -q 'exited with status 3' '$T/err'" || show

kcfg always client.authentication.k8s.io/v1 Always "$PLUGIN" FAKE_TOKEN="$TOKEN" FAKE_COUNT="$T/always.runs"
check "$T/always"
ok "interactiveMode Always: refused (no terminal), not run" bash -c \
	"[ $rc = 1 ] && grep -q 'interactiveMode Always' '$T/err' && [ ! -e '$T/always.runs' ]" || show

kcfg otherapi client.authentication.k8s.io/v1 Never "$PLUGIN" FAKE_TOKEN="$TOKEN" \
	FAKE_API=client.authentication.k8s.io/v1beta1
check "$T/otherapi"
ok "an answer in another apiVersion than asked: refused" bash -c \
	"[ $rc = 1 ] && grep -q 'answered apiVersion \"client.authentication.k8s.io/v1beta1\"' '$T/err'" || show

# proxy-url: the requests go through it (a CONNECT tunnel), as kubectl's would
python3 tests/kube/connect-proxy.py "$T/proxy.port" "$T/proxy.log" &
proxy_pid=$!
for _ in $(seq 1 100); do [ -s "$T/proxy.port" ] && break; sleep 0.05; done
python3 - "$KUBE_DIR/kubeconfig-admin" "$T/proxied" "http://127.0.0.1:$(cat "$T/proxy.port")" <<'PY'
import json, os, sys
doc = json.load(open(sys.argv[1]))
for c in doc["clusters"]:
    c["cluster"]["proxy-url"] = sys.argv[3]
with open(os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
    json.dump(doc, f)
PY
check "$T/proxied"
ok "proxy-url: the cluster is listed through the proxy's CONNECT tunnel" bash -c \
	"[ $rc = 0 ] && grep -q '^CONNECT 127.0.0.1:$KUBE_PORT' '$T/proxy.log'" || show
kill "$proxy_pid" 2>/dev/null; wait "$proxy_pid" 2>/dev/null
sed 's|"proxy-url": "http://|"proxy-url": "ftp://|' "$T/proxied" >"$T/badproxy"; chmod 600 "$T/badproxy"
check "$T/badproxy"
ok "...a proxy-url libcurl cannot take: refused, one line" bash -c \
	"[ $rc = 1 ] && grep -q 'proxy-url \"ftp://127.0.0.1:[0-9]*\" is not an http://, https:// or socks5:// URL' '$T/err'" || show

# preemptd: the same plugin, its token renewed while it runs (watches, the Lease) — 11 s of
# validity, renewed 10 s ahead: again within seconds, with no request refused
PD=$BUILD/preemptd
if [ -x "$PD" ]; then
	kcfg pd client.authentication.k8s.io/v1 Never "$PLUGIN" FAKE_TOKEN="$TOKEN" FAKE_EXPIRES_IN=11 \
		FAKE_COUNT="$T/pd.runs"
	"$PD" --config /dev/null --kubeconfig "$T/pd" --listen '' --log-target stderr --leader-elect-retry-period 1s \
		--leader-elect-renew-deadline 5s --leader-elect-lease-duration 8s >"$T/pd.log" 2>&1 &
	pd_pid=$!
	renewed() { [ "$(runs "$T/pd.runs")" -ge 3 ]; }
	for _ in $(seq 1 100); do renewed && break; sleep 0.1; done
	pd_never_refused() {
		kube_requests | python3 -c 'import json, sys
recs = [json.loads(l) for l in sys.stdin if l.strip()]
pd = [r for r in recs if (r.get("user_agent") or "").startswith("preemptd/")]
sys.exit(0 if pd and all(r["status"] != 401 and r["identity"] == "kubernetes-admin" for r in pd) else 1)'
	}
	ok "preemptd: the plugin's expiring token is renewed while it runs" renewed
	ok "...and the API server never refused it (every request as the token's user)" pd_never_refused || \
		{ sed 's/^/# /' "$T/pd.log"; false; }
	kill "$pd_pid" 2>/dev/null; wait "$pd_pid" 2>/dev/null
	# a CA that is not the server's: TLS fails at every list; said once, naming server and CA
	python3 - "$T/pd" "$T/wrongca" "$KUBE_DIR/rogue-ca.crt" <<'PY'
import json, os, sys
doc = json.load(open(sys.argv[1]))
doc["clusters"][0]["cluster"]["certificate-authority"] = sys.argv[3]
with open(os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
    json.dump(doc, f)
PY
	"$PD" --config /dev/null --kubeconfig "$T/wrongca" --listen '' --log-target stderr >"$T/wrongca.log" 2>&1 &
	pd_pid=$!
	sleep 4
	kill "$pd_pid" 2>/dev/null; wait "$pd_pid" 2>/dev/null
	ok "preemptd with a CA that is not the server's: one line saying it retries, with the server and that CA" bash -c \
		"[ \$(grep -c ' failed: ' '$T/wrongca.log') = 1 ] &&
		 grep -qF 'retrying with backoff (API server $KUBE_URL, CA $KUBE_DIR/rogue-ca.crt)' '$T/wrongca.log'" ||
		sed 's/^/# /' "$T/wrongca.log"
else
	skip "preemptd with an exec plugin" "$PD not built"
fi

ok "no plugin process is left behind" bash -c "! pgrep -f 'fake-exec-plugin[.]py' >/dev/null"
echo "1..$_tap_n"
exit $_tap_failed
