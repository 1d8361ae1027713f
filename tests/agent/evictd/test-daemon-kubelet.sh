#!/bin/bash
# The daemon beside a kubelet: its thresholds from the kubelet's configuration plus kubelet-margin,
# the ordering warning at start, a change of the kubelet's file picked up like a reload (replaced
# by rename as kubeadm does, and written in place), a broken file on reload refused with the
# running configuration kept, a broken file at start one warning and evictd running on
# evictd.conf; and `--dump-config` naming where each setting came from.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"
fixture_daemon_env
K=$tmp/kubelet
mkdir -p "$K"

kubelet_conf() {	# kubelet_conf FILE MEMORY: a KubeletConfiguration evicting at MEMORY
	printf 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ncgroupDriver: systemd\nevictionHard:\n  memory.available: %s\n  nodefs.available: "10%%"\n' "$2" >"$1"
}
start() { fixture_daemon_start "$FX" "$@"; }	# start CONF LOG: the daemon on the fixture tree
stop() { fixture_daemon_stop; }
wait_for() { wait_log "$@"; }

# --- thresholds from the kubelet, and the warning where evictd.conf sets one at or below ---
kubelet_conf "$K/config.yaml" 500Mi
fixture_daemon_conf "$tmp/evictd.conf" "$tmp/status.json" "[kubernetes]
kubelet-config = $K/config.yaml
[eviction-hard]
nodefs.available = 10%"
start "$tmp/evictd.conf" "$tmp/log"
ok "start: memory.available is the kubelet's 500Mi plus 25%" wait_for "$tmp/log" "monitoring memory.available (hard 625Mi)"
ok "start: one warning for nodefs.available naming both values and both files" \
	wait_for "$tmp/log" "nodefs.available: evictd's hard threshold 10% (\[eviction-hard\] nodefs.available, $tmp/evictd.conf:12) is at or below the kubelet's hard 10% (kubelet $K/config.yaml:6)"
one_warning() { [ "$(grep -c "is at or below the kubelet's" "$tmp/log")" -eq 1 ]; }
ok "start: no warning for the signals evictd acts on first" one_warning

# kubeadm replaces the file: write elsewhere, rename over it (IN_MOVED_TO on the directory)
kubelet_conf "$K/.config.yaml.tmp" 800Mi; mv "$K/.config.yaml.tmp" "$K/config.yaml"
ok "kubelet config replaced by rename: reloaded, memory.available 800Mi plus 25%" \
	wait_for "$tmp/log" "Configuration reloaded.*memory.available<1000Mi"
ok "the reload says why" grep -q "Reloading the configuration: the kubelet's config.yaml changed" "$tmp/log"
ok "the nodefs warning is said again on reload" wait_for "$tmp/log" "nodefs.available: evictd's hard threshold 10%" 2

# written in place (IN_CLOSE_WRITE)
kubelet_conf "$K/config.yaml" 1Gi
ok "kubelet config written in place: reloaded, 1Gi plus 25%" wait_for "$tmp/log" "Configuration reloaded.*memory.available<1280Mi"

# an unrelated file in the directory is not a reload
n=$(grep -c "Configuration reloaded" "$tmp/log")
echo x >"$K/cpu_manager_state"; sleep 0.5
ok "another file in the kubelet's directory: no reload" test "$(grep -c "Configuration reloaded" "$tmp/log")" -eq "$n"

# broken on reload: refused, the running configuration stays
printf 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nevictionHard:\n  memory.available: lots\n' >"$K/config.yaml"
ok "broken kubelet config on reload: rejected with file:line, the running configuration kept" \
	wait_for "$tmp/log" "Kubelet configuration rejected, keeping the running configuration: $K/config.yaml:4: "
ok "no reload happened" test "$(grep -c "Configuration reloaded" "$tmp/log")" -eq "$n"
status_ok() { kill -0 "$D"; }
ok "the daemon keeps running" status_ok
stop

# --- broken at start: one warning, evictd runs on evictd.conf alone ---
start "$tmp/evictd.conf" "$tmp/log2"
ok "broken kubelet config at start: started with evictd.conf alone (memory.available 100Mi)" \
	wait_for "$tmp/log2" "monitoring memory.available (hard 100Mi)"
one_broken() { [ "$(grep -c "Kubelet configuration ignored" "$tmp/log2")" -eq 1 ] &&
	grep -q "Kubelet configuration ignored, evictd runs on its own configuration: $K/config.yaml:4: " "$tmp/log2"; }
ok "broken kubelet config at start: exactly one warning naming file:line" one_broken
stop

# --- missing: the path evictd.conf names is one warning, nothing else (the default path: none,
# test-kubelet-follow.sh) ---
rm -f "$K/config.yaml"
start "$tmp/evictd.conf" "$tmp/log3"
one_missing() { wait_for "$tmp/log3" "evictd: monitoring" &&
	[ "$(grep -ciE "kubelet configuration|the kubelet.s" "$tmp/log3")" -eq 1 ] &&
	grep -q "Kubelet configuration $K/config.yaml (\[kubernetes\] kubelet-config, $tmp/evictd.conf:10) does not exist" "$tmp/log3"; }
ok "no kubelet config where evictd.conf says: one warning, nothing else" one_missing
# ... and one appearing later (kubeadm join) is read
kubelet_conf "$K/config.yaml" 500Mi
ok "a kubelet config created later: reloaded with it" wait_for "$tmp/log3" "Configuration reloaded.*memory.available<625Mi"
stop

# --- --dump-config ---
dump() {
	"$EVICTD" --dump-config --config "$tmp/evictd.conf" >"$tmp/dump" 2>"$tmp/dump.err" || { sed 's/^/# /' "$tmp/dump.err"; return 1; }
	grep -q "^memory.available = 625Mi  *; kubelet $K/config.yaml:5 + kubelet-margin 25%$" "$tmp/dump" &&
	grep -q "^nodefs.available = 10%  *; $tmp/evictd.conf:12$" "$tmp/dump" &&
	grep -q "^interval = 100ms  *; $tmp/evictd.conf:2$" "$tmp/dump" &&
	grep -q "^exec-timeout = 30s  *; default$" "$tmp/dump" &&
	grep -q "^; warning: nodefs.available: evictd's hard threshold 10%" "$tmp/dump" ||
		{ sed 's/^/# /' "$tmp/dump"; return 1; }
}
ok "--dump-config: every setting with its origin (evictd.conf:LINE, kubelet FILE:LINE, default)" dump
every_key() {	# every key of the table appears once (signal sections: at least the set ones; aliases: no)
	local k s missing=0
	while read -r s k; do
		case $s in eviction-hard|eviction-soft|eviction-soft-grace-period|eviction-minimum-reclaim|priority-class) continue;; esac
		# an alias is shown under the key it names (test-words.sh)
		case "$s $k" in "eviction psi-memory-"*) continue;; esac
		grep -q "^$k = " "$tmp/dump" || { echo "# [$s] $k missing"; missing=1; }
	done < <("$EVICTD" --dump-config-keys)
	[ $missing -eq 0 ] && ! grep -q " = ?  " "$tmp/dump"
}
ok "--dump-config: every key of the table has a value" every_key
once_json() {	# --once --json: the configuration with origins and the kubelet's notes
	"$EVICTD" --once --json --dry-run --config "$tmp/evictd.conf" --cgroup-root "$FX/root" --proc-root "$FX/proc" \
		--metadata-dir "$FX/pods" >"$tmp/once.json" 2>"$tmp/once.err" || { sed 's/^/# /' "$tmp/once.err"; return 1; }
	python3 - "$tmp/once.json" "$K/config.yaml" "$FX/root" <<'PY' || { sed 's/^/# /' "$tmp/once.json"; return 1; }
import json, sys
d = json.load(open(sys.argv[1]))
cfg = {(e["section"], e["key"]): e for e in d["configuration"]}
assert d["kubelet"]["config"] == sys.argv[2] and d["kubelet"]["warning"] is None, d["kubelet"]
assert [c["signal"] for c in d["kubelet"]["conflicts"]] == ["nodefs.available"], d["kubelet"]
assert cfg[("eviction-hard", "memory.available")]["value"] == "625Mi"
assert cfg[("eviction-hard", "memory.available")]["origin"].startswith("kubelet " + sys.argv[2] + ":5")
assert cfg[("agent", "cgroup-root")] == {"section": "agent", "key": "cgroup-root", "value": sys.argv[3], "origin": "command line (--cgroup-root)"}
PY
	grep -q "warning: nodefs.available: evictd's hard threshold 10%" "$tmp/once.err"
}
if command -v python3 >/dev/null; then ok "--once --json: configuration with origins, the kubelet's config and the conflict" once_json
else skip "--once --json: configuration with origins" "python3 missing"; fi
done_testing
