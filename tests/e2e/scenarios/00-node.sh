#!/bin/bash
# Scenario 0 — the node itself: what every other scenario takes for granted. systemd is PID 1,
# the cgroup hierarchy is pure v2 with memory/cpu/pids delegated down, PSI is on, `make install`
# put a runnable evictd and its unit on the node, a Type=notify service reaches "active
# (running)" with its STATUS=, and a pod in the kubelet's cgroup layout can be created,
# measured and killed. No evictd behaviour is judged here.
. ./lib.sh

ok "systemd is PID 1 ($(readlink /proc/1/exe))" bash -c '[[ $(readlink /proc/1/exe) == */systemd ]]'
state=$(systemctl is-system-running 2>/dev/null)
ok "system is running (is-system-running: $state)" test "$state" = running
[ "$state" = running ] || systemctl --failed --no-pager | sed 's/^/# /'

ok "/sys/fs/cgroup is cgroup2 (pure v2)" test "$(stat -fc %T $CG)" = cgroup2fs
ok "no cgroup v1 hierarchy mounted" bash -c '! awk '\''$3 == "cgroup"'\'' /proc/mounts | grep -q .'
note "root cgroup.subtree_control: $(cat $CG/cgroup.subtree_control)"
for c in memory cpu pids; do
	ok "controller $c enabled below the root" grep -qw "$c" $CG/cgroup.subtree_control
done
ok "PSI available (/proc/pressure/memory, root memory.pressure)" test -r /proc/pressure/memory -a -r $CG/memory.pressure
ok "root memory.stat has anon, file, inactive_file" bash -c "grep -q '^anon ' $CG/memory.stat && grep -q '^file ' $CG/memory.stat && grep -q '^inactive_file ' $CG/memory.stat"
avail=$(mem_available)
total=$(( $(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024 ))
note "memory.available $((avail / MIB)) MiB of MemTotal $((total / MIB)) MiB"
ok "memory.available is between 0 and MemTotal" test "$avail" -gt 0 -a "$avail" -lt "$total"

# ---- what `make install DESTDIR=... PREFIX=/usr` put on the node ----------------------------------
for f in /usr/sbin/evictd /usr/sbin/evictd-kube /usr/sbin/preemptd /usr/bin/preemptctl; do
	ok "$f installed and executable" test -x "$f"
	ok "$f: every shared library resolves" bash -c "ldd $f | grep -q . && ! ldd $f | grep -q 'not found'"
done
ok "evictd.service installed where systemd finds it" bash -c "systemctl cat evictd.service >/dev/null 2>&1"
ok "/etc/evictd/evictd.conf installed" test -f /etc/evictd/evictd.conf
ok "/etc/evictd/evictd.conf.d/ installed" test -d /etc/evictd/evictd.conf.d

# ---- a Type=notify service: READY=1 makes it active (running), STATUS= is shown ----------------
systemd-run --quiet --unit=e2e-placeholder -p Type=notify -p NotifyAccess=all \
	/bin/sh -c 'systemd-notify --ready --status="placeholder: watching nothing"; exec sleep infinity'
st="$(systemctl show -p ActiveState --value e2e-placeholder.service) ($(systemctl show -p SubState --value e2e-placeholder.service)), STATUS=$(systemctl show -p StatusText --value e2e-placeholder.service)"
ok "placeholder Type=notify service: $st" test "$st" = "active (running), STATUS=placeholder: watching nothing"
systemctl stop e2e-placeholder.service

# ---- a pod, laid out as the kubelet's systemd driver does it ------------------------------------
uid=e2e00000000000000000000000000001
pod_descriptor "$uid" namespace=e2e name=smoke priority=0 memory-request=8Mi
if pod_start "$uid" burstable -- --alloc 32; then
	pass "pod started in $(pod_slice "$uid" burstable)"
else
	fail "pod did not start: $(cat "$STATE/$uid.out" 2>/dev/null)"
fi
pcg=$(pod_cg "$uid" burstable)
note "pod cgroup: ${pcg#$CG/}"
note "pod processes: $(find "$pcg" -name cgroup.procs -exec cat {} + | tr '\n' ' ')"
ok "pod cgroup is in the kubelet layout and populated" pod_populated "$uid" burstable
ok "pod cgroup has memory, cpu and pids controllers" \
	bash -c "grep -qw memory $pcg/cgroup.controllers && grep -qw cpu $pcg/cgroup.controllers && grep -qw pids $pcg/cgroup.controllers"
cur=$(cat "$pcg/memory.current" 2>/dev/null || echo 0)
ok "pod memory.current counts its 32 MiB ($((cur / MIB)) MiB)" test "$cur" -ge $((32 * MIB))
ok "pod cpu.weight exists (cpu controller on)" test -r "$pcg/cpu.weight"
pod_kill "$uid" burstable
ok "cgroup.kill on the pod cgroup ends the pod" wait_until 10 pod_gone "$uid" burstable
done_testing
