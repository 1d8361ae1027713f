#!/bin/bash
# preemptd's option and configuration errors, before it talks to any API server: each is one line
# on stderr naming the flag (or FILE:LINE) and the value given, and the status is 2 (a usage error).
. "$(dirname "$0")/../../lib.sh"
PD=$BUILD/preemptd
[ -x "$PD" ] || skip_all "$PD not built"
T=$(mktemp -d "${TMPDIR:-/tmp}/preemptd-options.XXXXXX")
pd=""
trap '[ -n "$pd" ] && kill "$pd" 2>/dev/null; rm -rf "$T"' EXIT

# refused WANT ARGS...: exit 2, exactly one line on stderr, containing WANT, nothing on stdout
refused() {
	local want=$1; shift
	"$PD" "$@" >"$T/out" 2>"$T/err"
	local rc=$?
	if [ $rc = 2 ] && [ ! -s "$T/out" ] && [ "$(wc -l <"$T/err")" = 1 ] && grep -qF -- "$want" "$T/err"; then
		return 0
	fi
	echo "# exit $rc, stderr:"; sed 's/^/#   /' "$T/err"
	return 1
}

ok "--listen with a port above 65535: refused with its value (not served on port 34463)" \
	refused 'preemptd: --listen: expected ADDRESS:PORT (a numeric address, a port from 0 to 65535) or "", not "127.0.0.1:99999"' \
	--config /dev/null --listen 127.0.0.1:99999
ok "...70000 likewise" refused 'not "127.0.0.1:70000"' --config /dev/null --listen 127.0.0.1:70000
ok "...a host name (only numeric addresses are served)" refused 'not "localhost:80"' --config /dev/null --listen localhost:80
printf '[preemptd]\nlisten = 127.0.0.1:99999\n' >"$T/listen.conf"
ok "...and from the file, at its line" refused "$T/listen.conf:2: listen: expected ADDRESS:PORT" --config "$T/listen.conf"
ok "--identity '': refused, named (not 'Cannot set up: Invalid argument')" \
	refused 'preemptd: --identity: "" is not an identity' --config /dev/null --identity ''
ok "--leader-elect followed by another option: the flag is named, its missing value said" \
	refused 'preemptd: --leader-elect: missing value ("--log-target" is the next option)' \
	--config /dev/null --leader-elect --log-target stderr
ok "an unknown option: one line" refused "preemptd: unknown option '--bogus'" --config /dev/null --bogus
ok "a stray argument: one line" refused "preemptd: unexpected argument 'stray'" --config /dev/null stray
printf '[preemptd]\nscheduler-name =\n' >"$T/name.conf"
ok "an empty scheduler-name in the file: FILE:LINE and the value" \
	refused "$T/name.conf:2: scheduler-name: \"\" is not a valid name" --config "$T/name.conf"
ok "a bad --scheduler-name: named with its value" refused '--scheduler-name: "Not_A_Name" is not a valid name' \
	--config /dev/null --scheduler-name Not_A_Name
printf '[preemtpd]\nleader-elect = no\n' >"$T/typo.conf"
ok "a misspelt section on line 1 is reported at line 1" \
	refused "$T/typo.conf:1: unknown section [preemtpd] (only [preemptd])" --config "$T/typo.conf"
printf '[preemptd]\nleader-elect = no\n[other]\n' >"$T/typo3.conf"
ok "...and a later one at its own line, even without keys under it" \
	refused "$T/typo3.conf:3: unknown section [other]" --config "$T/typo3.conf"
ok "renew-deadline not below lease-duration: the values given are shown" \
	refused 'retry-period < renew-deadline < lease-duration (a leader must stop before its lease can expire), not 2s, 20s, 15s' \
	--config /dev/null --leader-elect-renew-deadline 20s
ok "pod-initial-backoff above pod-max-backoff: both values shown" \
	refused 'pod-initial-backoff 1m30s is longer than pod-max-backoff 10s' --config /dev/null --pod-initial-backoff 90s
printf 'apiVersion: v1\n[clusters: 1\n' >"$T/bad-kubeconfig"
chmod 600 "$T/bad-kubeconfig"
"$PD" --config /dev/null --kubeconfig "$T/bad-kubeconfig" --log-target stderr >"$T/out" 2>"$T/err"; rc=$?
ok "a malformed kubeconfig: exit 1 and one line, FILE:LINE:COLUMN, none of libfyaml's output" bash -c \
	"[ $rc = 1 ] && [ \"\$(cat '$T/err')\" = \"preemptd: $T/bad-kubeconfig:2:1: not valid YAML: could not find expected ':'\" ] || { sed 's/^/# /' '$T/err'; false; }"
# an unreachable server: the first line says which server, kubeconfig, CA and credential every
# later "LIST ... failed" is about
printf '{"apiVersion": "v1", "kind": "Config", "current-context": "c",
 "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:1", "certificate-authority": "%s/ca.crt"}}],
 "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
 "users": [{"name": "u", "user": {"token": "t"}}]}\n' "$T" >"$T/unreachable"
chmod 600 "$T/unreachable"
"$PD" --config /dev/null --kubeconfig "$T/unreachable" --listen '' --log-target stderr >"$T/log" 2>&1 &
pd=$!
said() { grep -qF "preemptd: API server https://127.0.0.1:1 from kubeconfig $T/unreachable (context c, user u): CA $T/ca.crt, credential a bearer token" "$T/log"; }
for _ in $(seq 1 100); do said && break; sleep 0.05; done
sleep 4 # the lists are retried within a second or two, several times over (18 lines in 20 s before)
kill "$pd" 2>/dev/null; wait "$pd" 2>/dev/null
ok "the API server, the kubeconfig, its CA and the kind of credential are said once at start" said || sed 's/^/# /' "$T/log"
ok "...the failing lists: one line saying it retries, against which server with which CA, no more in a minute" \
	bash -c "[ \$(grep -c ' failed: ' '$T/log') = 1 ] &&
		grep -qF 'Couldn'\''t connect to server; retrying with backoff (API server https://127.0.0.1:1, CA $T/ca.crt), at most one line a minute until it answers' '$T/log'" ||
	sed 's/^/# /' "$T/log"
echo "1..$_tap_n"
exit $_tap_failed
