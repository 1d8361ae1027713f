#!/bin/bash
# The words an operator reads (issue 29.7), as README.md and the manual pages promise them:
#   - --dump-config shows one row per setting: a PSI threshold set under its older name
#     ([eviction] psi-memory-some) appears once, under [eviction-hard] memory.some, its origin
#     naming the older name;
#   - the ordering warning compares hard with hard and soft with soft, and names the key the
#     operator wrote (the issue's node: the kubelet at hard 200Mi, soft 500Mi/1m30s, evictd.conf
#     memory.available = 100Mi: one warning, for memory.available, none for
#     allocatableMemory.available, which nobody wrote);
#   - lines on a terminal carry no journal fields ("... unknown suffix" without
#     "[EVICTD_CONFIG_LINE=2]").
# The terminal run with nothing to watch (a heartbeat at start, a line at stop, a line per
# reason) is tests/agent/evictd/test-monitoring.sh.
. "$(dirname "$0")/../lib.sh"
EVICTD=$PWD/$BUILD/evictd
[ -x "$EVICTD" ] || skip_all "$EVICTD not built"
FX=$PWD/tests/fixtures/cgroup/systemd
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
no_kubelet="[kubernetes]
kubelet-config = none"

# --- one row per setting --------------------------------------------------------------------
printf '%s\n[eviction-hard]\nmemory.some = 40%%\n' "$no_kubelet" >"$tmp/psi.conf"
printf '%s\n[eviction]\npsi-memory-some = 40%%\n' "$no_kubelet" >"$tmp/alias.conf"
"$EVICTD" --dump-config --config "$tmp/psi.conf" >"$tmp/psi.dump" 2>&1
"$EVICTD" --dump-config --config "$tmp/alias.conf" >"$tmp/alias.dump" 2>&1
rows() { grep -cE "^(memory\.some|psi-memory-some) = " "$1"; }
ok "[eviction-hard] memory.some = 40%: one row for the setting" test "$(rows "$tmp/psi.dump")" -eq 1
ok "... under [eviction-hard], with its file:line" \
	eval 'sed -n "/^\[eviction-hard\]/,/^\[/p" "$tmp/psi.dump" | grep -qE "^memory\.some = 40%  *; $tmp/psi\.conf:4$"'
ok "no psi-memory-* row at all" eval '! grep -q "psi-memory" "$tmp/psi.dump"'
ok "[eviction] psi-memory-some = 40%: one row too, under its key" test "$(rows "$tmp/alias.dump")" -eq 1
ok "... its origin naming the older name" \
	grep -qE "^memory\.some = 40%  *; $tmp/alias\.conf:4 \(\[eviction\] psi-memory-some\)$" "$tmp/alias.dump"

# --- the ordering warning -------------------------------------------------------------------
mkdir "$tmp/kubelet"
cat >"$tmp/kubelet/config.yaml" <<'YAML'
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
evictionHard:
  memory.available: 200Mi
evictionSoft:
  memory.available: 500Mi
evictionSoftGracePeriod:
  memory.available: 1m30s
YAML
printf '[kubernetes]\nkubelet-config = %s\n[eviction-hard]\nmemory.available = 100Mi\n' \
	"$tmp/kubelet/config.yaml" >"$tmp/order.conf"
"$EVICTD" --dump-config --config "$tmp/order.conf" >"$tmp/order.dump" 2>&1
warned() { grep -c "^; warning: .* is at or below the kubelet's" "$tmp/order.dump"; }
ok "the issue's node: exactly one ordering warning" test "$(warned)" -eq 1
ok "... hard with hard, naming the key that was written and what removing it gives" \
	grep -qxF "; warning: memory.available: evictd's hard threshold 100Mi ([eviction-hard] memory.available, $tmp/order.conf:4) is at or below the kubelet's hard 200Mi (kubelet $tmp/kubelet/config.yaml:4): the kubelet may evict first; raise it above 200Mi, or remove it from evictd.conf to take the kubelet's plus kubelet-margin (250Mi)" "$tmp/order.dump"
ok "... and nothing about allocatableMemory.available, which nobody wrote" \
	eval '! grep -q "warning: allocatableMemory" "$tmp/order.dump"'
"$EVICTD" --once --dry-run --config "$tmp/order.conf" --cgroup-root "$FX/root" --proc-root "$FX/proc" \
	--metadata-dir "$FX/pods" >/dev/null 2>"$tmp/once.err"
ok "--once says the same, once" test "$(grep -c "is at or below the kubelet's" "$tmp/once.err")" -eq 1
# evictd's soft threshold below the kubelet's soft one: the other kind, its own key
printf '[kubernetes]\nkubelet-config = %s\n[eviction-soft]\nmemory.available = 400Mi\n[eviction-soft-grace-period]\nmemory.available = 30s\n' \
	"$tmp/kubelet/config.yaml" >"$tmp/soft.conf"
"$EVICTD" --dump-config --config "$tmp/soft.conf" >"$tmp/soft.dump" 2>&1
ok "soft with soft: evictd's 400Mi below the kubelet's soft 500Mi, named by its key" \
	grep -qF "; warning: memory.available: evictd's soft threshold 400Mi ([eviction-soft] memory.available, $tmp/soft.conf:4) is at or below the kubelet's soft 500Mi" "$tmp/soft.dump"

# --- no journal fields on a terminal --------------------------------------------------------
printf '[agent]\ninterval = 5Q\n' >"$tmp/bad.conf"
fields() { ! grep -E "EVICTD_[A-Z_]+=" "$1" | sed 's/^/# fields: /' | grep .; }
"$EVICTD" --once --config "$tmp/bad.conf" 2>"$tmp/once-bad.err" >/dev/null
ok "--once, a bad value: the message names file:line" grep -q "$tmp/bad.conf:2: interval: invalid duration \"5Q\"" "$tmp/once-bad.err"
ok "--once, a bad value: no journal field on the line" fields "$tmp/once-bad.err"
"$EVICTD" --config "$tmp/bad.conf" --log-target stderr --cgroup-root "$FX/root" --proc-root "$FX/proc" \
	--metadata-dir "$FX/pods" 2>"$tmp/daemon-bad.err" >/dev/null
ok "the daemon refusing a bad value: one line naming file:line" \
	test "$(grep -c "$tmp/bad.conf:2: interval" "$tmp/daemon-bad.err")" -eq 1
ok "the daemon refusing a bad value: no journal field on any line" fields "$tmp/daemon-bad.err"
# a decision: "Would evict ..." as a person reads it, the figures in the message
"$EVICTD" --once --dry-run --config "$tmp/psi.conf" --cgroup-root "$FX/root" --proc-root "$FX/proc" \
	--metadata-dir "$FX/pods" >/dev/null 2>"$tmp/once-ok.err"
ok "--once on the fixture: no journal field on any line" fields "$tmp/once-ok.err"
done_testing
