#!/bin/bash
# The kubelet's configuration followed wherever it goes (issue 29): a kubelet-config whose
# directory does not exist yet (evictd installed before the kubelet) is read when the directory
# and the file appear, and evictd then acts at the kubelet's threshold plus margin; a directory
# removed and made again (kubeadm reset / join) is followed; `evictd --reload` re-arms a watch
# gone stale; a kubelet-config path written in evictd.conf that does not exist is one warning at
# start and one per reload, the default path none. After every change the running daemon's
# thresholds (status.json) are --dump-config's within a second.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"
fixture_daemon_env python3

# The systemd fixture with 200Mi of memory available: above evictd's default hard 100Mi, below a
# kubelet evicting at 250Mi (MemTotal raised by the 120Mi between 80Mi and 200Mi).
mkdir "$tmp/fx"
cp -r "$FX/root" "$FX/proc" "$FX/pods" "$tmp/fx/"
sed -i 's/^MemTotal: .*/MemTotal:       8511488 kB/' "$tmp/fx/proc/meminfo"

kubelet_conf() {	# kubelet_conf FILE MEMORY: a KubeletConfiguration evicting at MEMORY, written in place
	printf 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nevictionHard:\n  memory.available: %s\n' "$2" >"$1"
}
replace_conf() {	# replace_conf FILE MEMORY: the same, replaced by rename as kubeadm does
	kubelet_conf "$1.tmp" "$2" && mv "$1.tmp" "$1"
}
start() { fixture_daemon_start "$tmp/fx" "$@"; }	# start CONF LOG
count() { grep -c -- "$2" "$1"; }

# after CONF CHANGE: runs the shell command CHANGE, then --dump-config beside the daemon, and
# passes when the daemon's thresholds (status.json, resolved) are --dump-config's within 1 s of the
# change. Python makes the change itself, so that its own start is not counted.
cat >"$tmp/after.py" <<'PY'
import json, re, struct, subprocess, sys, time
evictd, conf, status, dump, change = sys.argv[1:6]
UNIT = {"": 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60}
f32 = lambda x: struct.unpack("f", struct.pack("f", x))[0]
def resolve(v, cap, psi):	# as config_threshold_resolve: float32 fractions, truncated (PSI: rounded)
    if v is None or v in ("none", "0%"):
        return None
    total = 0
    for part in v.split("+"):
        m = re.fullmatch(r"([0-9.]+)%", part)
        if m:
            x = cap * f32(float(m.group(1)) / 100)
            total += round(x) if psi else int(x)
        else:
            m = re.fullmatch(r"(-?[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei)?", part)
            total += int(m.group(1)) * UNIT[m.group(2) or ""]
    return total
t0 = time.monotonic()
subprocess.run(["bash", "-c", change], check=True)
text = subprocess.run([evictd, "--dump-config", "--config", conf], check=True, capture_output=True, text=True).stdout
open(dump, "w").write(text)
want, sec = {}, None
for line in text.splitlines():
    line = line.split(";", 1)[0].strip()
    if line.startswith("["):
        sec = line[1:-1]
    elif "=" in line:
        k, v = (x.strip() for x in line.split("=", 1))
        want[(sec, k)] = v
def differences():
    try:
        d = json.load(open(status))
    except (OSError, ValueError) as e:
        return [str(e)]
    out = []
    for s in d["signals"]:
        if s.get("capacity") is None:
            continue
        psi = s["unit"] == "centipercent"
        for kind in ("hard", "soft"):
            w = resolve(want.get(("eviction-" + kind, s["signal"])), s["capacity"], psi)
            if s[kind + "_threshold"] != w:
                out.append("%s %s: daemon %s, --dump-config %s" % (s["signal"], kind, s[kind + "_threshold"], w))
    return out
while True:
    diff = differences()
    took = time.monotonic() - t0
    if not diff:
        print("# agreed %.0f ms after the change" % (took * 1000))
        sys.exit(0 if took <= 1.0 else 1)
    if took > 5:
        print("# 5 s after the change the daemon and --dump-config still differ:\n# " + "\n# ".join(diff))
        sys.exit(1)
    time.sleep(0.02)
PY
after() { python3 "$tmp/after.py" "$EVICTD" "$1" "$tmp/status.json" "$tmp/dump" "$2"; }
dump_has() { grep -q -- "$1" "$tmp/dump" || { sed 's/^/# /' "$tmp/dump"; return 1; }; }

# The helpers above, for the changes run by after (a child bash).
export -f kubelet_conf replace_conf

# --- late: the kubelet's directory made after evictd started -------------------------------
NODE=$tmp/node
K=$NODE/var/lib/kubelet
export K NODE
fixture_daemon_conf "$tmp/evictd.conf" "$tmp/status.json" "[kubernetes]
kubelet-config = $K/config.yaml"
start "$tmp/evictd.conf" "$tmp/log"
ok "late: the missing path set in evictd.conf is one warning at start, naming the key's file:line" \
	test "$(count "$tmp/log" "Kubelet configuration $K/config.yaml (\[kubernetes\] kubelet-config, $tmp/evictd.conf:10) does not exist")" -eq 1
ok "late: meanwhile evictd's own thresholds (200Mi free, hard 100Mi: nothing to do)" \
	wait_log "$tmp/log" "monitoring memory.available (hard 100Mi)"
ok "late: the daemon agrees with --dump-config before the kubelet comes" after "$tmp/evictd.conf" true
ok "late: directory and config.yaml made: the kubelet's 250Mi + 25% within a second, as --dump-config says" \
	after "$tmp/evictd.conf" 'mkdir -p "$K" && kubelet_conf "$K/config.yaml" 250Mi'
ok "late: --dump-config says 312.5Mi (320000Ki) from the kubelet's file" \
	dump_has "^memory.available = 320000Ki  *; kubelet $K/config.yaml:4 + kubelet-margin 25%$"
ok "late: 200Mi free is below the kubelet's 250Mi: evictd acts (dry run: would evict)" \
	wait_log "$tmp/log" "Would evict .*memory.available 200Mi < 312Mi"
printf 'KUBELET_KUBEADM_ARGS="--root-dir=/data/kubelet"\n' >"$K/kubeadm-flags.env"
ok "late: kubeadm-flags.env beside it is followed too" \
	wait_log "$tmp/log" "Reloading the configuration: the kubelet's kubeadm-flags.env changed"

# --- removed and made again (kubeadm reset, kubeadm join) ----------------------------------
ok "removed: evictd's own thresholds again within a second, as --dump-config says" \
	after "$tmp/evictd.conf" 'rm -rf "$K"'
ok "removed: the reload says why" wait_log "$tmp/log" "Reloading the configuration: the kubelet's .*\(was removed\|is gone\)"
ok "made again: the kubelet's new 300Mi + 25% within a second, as --dump-config says" \
	after "$tmp/evictd.conf" 'mkdir "$K" && replace_conf "$K/config.yaml" 300Mi'
ok "renamed away: evictd's own thresholds within a second" after "$tmp/evictd.conf" 'mv "$K" "$K.old"'
ok "renamed back: the kubelet's 300Mi + 25% within a second" after "$tmp/evictd.conf" 'mv "$K.old" "$K"'
ok "the whole tree removed: evictd's own thresholds within a second" after "$tmp/evictd.conf" 'rm -rf "$NODE"'
ok "the whole tree made again: 400Mi + 25% within a second" \
	after "$tmp/evictd.conf" 'mkdir -p "$K" && kubelet_conf "$K/config.yaml" 400Mi'
n=$(count "$tmp/log" "does not exist")
ok "a missing kubelet file is said again on each reload that finds it missing (start + 3)" test "$n" -eq 4
fixture_daemon_stop

# --- a typo in an explicit path: one warning at start and on reload; the default path silent --
fixture_daemon_conf "$tmp/typo.conf" "$tmp/status.json" "[kubernetes]
kubelet-config = $tmp/var/lib/kubelt/config.yaml"
start "$tmp/typo.conf" "$tmp/log2"
typo_warnings() { count "$tmp/log2" "Kubelet configuration $tmp/var/lib/kubelt/config.yaml (\[kubernetes\] kubelet-config, $tmp/typo.conf:10) does not exist"; }
ok "typo: one warning at start" test "$(typo_warnings)" -eq 1
ok "typo: evictd --reload succeeds" "$EVICTD" --reload --config "$tmp/typo.conf"
ok "typo: one more on the reload" wait_log "$tmp/log2" "does not exist" 2
sleep 0.3
ok "typo: and no other" test "$(typo_warnings)" -eq 2
"$EVICTD" --dump-config --config "$tmp/typo.conf" >"$tmp/dump" 2>&1
ok "typo: --dump-config warns too" dump_has "^; warning: kubelet configuration $tmp/var/lib/kubelt/config.yaml (\[kubernetes\] kubelet-config, $tmp/typo.conf:10) does not exist"
fixture_daemon_stop
if [ -e /var/lib/kubelet/config.yaml ]; then
	skip "default path: silent when missing" "this machine has /var/lib/kubelet/config.yaml"
else
	fixture_daemon_conf "$tmp/default.conf" "$tmp/status.json"
	start "$tmp/default.conf" "$tmp/log3"
	"$EVICTD" --reload --config "$tmp/default.conf" >/dev/null 2>&1
	wait_log "$tmp/log3" "Configuration reloaded" >/dev/null
	ok "default path missing: not a word about the kubelet, at start or on reload" \
		eval '! grep -i "kubelet" "$tmp/log3" | sed "s/^/# /" | grep .'
	fixture_daemon_stop
fi

# --- --reload re-arms a stale watch --------------------------------------------------------
# Renaming a directory above the kubelet's moves the watched directory with it, without an event
# there: the new directory is not seen until a reload watches the path anew.
R=$tmp/r/node/kubelet
export R
mkdir -p "$R" && kubelet_conf "$R/config.yaml" 300Mi
fixture_daemon_conf "$tmp/rearm.conf" "$tmp/status.json" "[kubernetes]
kubelet-config = $R/config.yaml"
start "$tmp/rearm.conf" "$tmp/log4"
ok "re-arm: started on the kubelet's 300Mi + 25%" wait_log "$tmp/log4" "monitoring memory.available (hard 375Mi)"
mv "$tmp/r/node" "$tmp/r/node.old"
mkdir -p "$R" && kubelet_conf "$R/config.yaml" 400Mi
ok "re-arm: evictd --reload succeeds" "$EVICTD" --reload --config "$tmp/rearm.conf"
ok "re-arm: the reload read the new directory's file (400Mi + 25%)" after "$tmp/rearm.conf" true
ok "re-arm: a change after the reload is seen: 800Mi + 25% within a second" \
	after "$tmp/rearm.conf" 'replace_conf "$R/config.yaml" 800Mi'
fixture_daemon_stop
done_testing
