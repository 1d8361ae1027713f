#!/bin/bash
# Each program's messages point its own way (issue 22): a missing kubeconfig gives the hint of the
# program that was asked (preemptctl has no configuration file; evictd-kube names the option or
# the key it came from), evictd-kube says "the default" when no configuration file was read
# instead of blaming a file that does not exist, and evictd-kube -V prints evictd's version.
. "$(dirname "$0")/../../lib.sh"
EKUBE=$BUILD/evictd-kube
PCTL=$BUILD/preemptctl
EVICTD=$BUILD/evictd
[ -x "$EKUBE" ] && [ -x "$PCTL" ] && [ -x "$EVICTD" ] || skip_all "evictd-kube, preemptctl and evictd not built"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# has FILE TEXT / lacks FILE TEXT, showing the file when wrong
has() { grep -qF -- "$2" "$1" || { echo "# lacks '$2':"; sed 's/^/#   /' "$1"; false; }; }
lacks() { ! grep -qF -- "$2" "$1" || { echo "# has '$2':"; sed 's/^/#   /' "$1"; false; }; }

"$PCTL" check --kubeconfig "$tmp/none" >"$tmp/out" 2>"$tmp/p.err"; echo $? >"$tmp/rc"
ok "preemptctl --kubeconfig missing: input rejected (exit 1)" test "$(cat "$tmp/rc")" = 1
ok "preemptctl --kubeconfig missing: preemptctl's own hint" \
	has "$tmp/p.err" "preemptctl: $tmp/none: no such file (--kubeconfig wants a kubeconfig file, such as kubectl's ~/.kube/config)"
ok "preemptctl --kubeconfig missing: not evictd-kube's hint" lacks "$tmp/p.err" "[kubernetes]"

: >"$tmp/empty.conf"
"$EKUBE" --config "$tmp/empty.conf" --kubeconfig "$tmp/none" --log-target stderr 2>"$tmp/k1.err"; echo $? >"$tmp/rc"
ok "evictd-kube --kubeconfig missing: exit 1" test "$(cat "$tmp/rc")" = 1
ok "evictd-kube --kubeconfig missing: the hint names the option that was given" \
	has "$tmp/k1.err" "$tmp/none: no such file (is this a Kubernetes node? --kubeconfig names the kubelet's kubeconfig)"

printf '[kubernetes]\nenable = yes\nnode-name = n1\nkubeconfig = %s\n' "$tmp/none" >"$tmp/k.conf"
"$EKUBE" --config "$tmp/k.conf" --log-target stderr 2>"$tmp/k2.err"; echo $? >"$tmp/rc"
ok "evictd-kube, kubeconfig from the file missing: exit 1" test "$(cat "$tmp/rc")" = 1
ok "evictd-kube, kubeconfig from the file missing: the hint names the key" \
	has "$tmp/k2.err" "$tmp/none: no such file (is this a Kubernetes node? set [kubernetes] kubeconfig)"

printf '[kubernetes]\nenable = no\n' >"$tmp/off.conf"
"$EKUBE" --config "$tmp/off.conf" --log-target stderr 2>"$tmp/k3.err"; echo $? >"$tmp/rc"
ok "evictd-kube, enable = no in a file: exit 0, names the file" \
	bash -c "[ $(cat "$tmp/rc") = 0 ] && grep -qF '([kubernetes] enable = no in $tmp/off.conf): nothing to do' '$tmp/k3.err'"
# Under systemd (Type=notify) an exit without READY=1 is a protocol failure that Restart=on-failure
# turns into a restart loop: the disabled service says READY=1 before it exits.
NCAP=$BUILD/tests/helpers/notify-capture
if [ -x "$NCAP" ]; then
	sock="evictd-kube-test-$$"
	"$NCAP" "$sock" "$tmp/notify" & ncap=$!
	for _ in $(seq 50); do grep -q listening "$tmp/notify" 2>/dev/null && break; sleep 0.1; done
	ok "notify capture is listening" grep -q listening "$tmp/notify"
	NOTIFY_SOCKET="@$sock" "$EKUBE" --config "$tmp/off.conf" --log-target stderr 2>/dev/null; echo $? >"$tmp/rc"
	kill "$ncap"; wait "$ncap" 2>/dev/null
	ok "evictd-kube, enable = no under systemd: READY=1 before the exit (exit 0)" \
		bash -c "[ $(cat "$tmp/rc") = 0 ] && grep -q 'READY=1' '$tmp/notify'"
else
	skip "evictd-kube, enable = no under systemd: READY=1 before the exit" "notify-capture not built"
fi
if [ -e /etc/evictd/evictd.conf ] || [ -e /etc/evictd/evictd.conf.d ]; then
	skip "evictd-kube without a configuration file says enable = no is the default" "/etc/evictd exists here"
else
	"$EKUBE" --log-target stderr 2>"$tmp/k4.err"; echo $? >"$tmp/rc"
	ok "evictd-kube without a configuration file: exit 0, 'the default', no file blamed" \
		bash -c "[ $(cat "$tmp/rc") = 0 ] && grep -qF '([kubernetes] enable = no, the default: no /etc/evictd/evictd.conf): nothing to do' '$tmp/k4.err'"
fi

ev=$("$EVICTD" --version) kv=$("$EKUBE" --version) kv2=$("$EKUBE" -V)
ok "evictd-kube --version prints evictd's version string" test "$kv" = "evictd-kube ${ev#evictd }"
ok "evictd-kube -V is --version" test "$kv2" = "$kv"
ok "evictd-kube --help lists -V, --version" bash -c "'$EKUBE' --help | grep -qE '^ +-V, --version'"
done_testing
