#!/bin/bash
# Scenario 7 — the Debian packages under a real systemd (PID 1): installed with dpkg on a node
# that has what `make install` put there removed first, evictd runs and both units are enabled;
# an upgrade restarts evictd (new MainPID) and keeps an edited conffile; removal stops the units
# and keeps /etc/evictd; purge leaves no unit, link or /etc/evictd. preemptd.service is neither
# enabled nor started by the package; enabled by the operator (its kubeconfig: a ServiceAccount of
# the stand-in API server, tests/kube/apiserver.py) it runs, the upgrade restarts it and removal
# stops it. Runs only when the packages were handed in (tests/pkg/run.sh with PKG_VM=1:
# /e2e/debs/{old,new}/*.deb); skipped otherwise.
. ./lib.sh
DEBS=/e2e/debs
[ -d "$DEBS/old" ] && [ -d "$DEBS/new" ] || skip_all "no packages handed in (tests/pkg/run.sh PKG_VM=1)"
kube_prop() { systemctl show -p "$1" --value evictd-kube.service; }
pd() { systemctl show -p "$1" --value preemptd.service; }
pd_running() { [ "$(pd ActiveState)/$(pd SubState)" = active/running ]; }
DEPLOY=$(cd ../deploy 2>/dev/null && pwd)/preemptd.yaml
PD_KUBECONFIG=/etc/evictd/preemptd.kubeconfig
trap 'systemctl stop preemptd.service 2>/dev/null; standin_stop' EXIT

# The node as before any install: what the runner's `make install` tree put there goes.
systemctl disable --now evictd.service evictd-kube.service preemptd.service > /dev/null 2>&1
(cd /e2e/stage && find . -type f -o -type l) | sed 's#^\.##' | while read -r f; do rm -f "$f"; done
rm -rf /etc/evictd
systemctl daemon-reload
systemctl reset-failed evictd.service evictd-kube.service preemptd.service 2> /dev/null

j_mark
ok "dpkg -i the previous version" dpkg -i "$DEBS"/old/*.deb
old=$(dpkg-query -W -f='${Version}' evictd)
note "installed evictd $old: $(evictd --version)"
ok "evictd.service enabled" systemctl is-enabled --quiet evictd.service
ok "evictd-kube.service enabled" systemctl is-enabled --quiet evictd-kube.service
ok "evictd.service started by the postinst: active (running)" wait_until 30 evictd_running
sleep 12   # evictd-kube: RestartSec=5s; two periods show a restart loop if there is one
note "evictd-kube.service: $(kube_prop ActiveState)/$(kube_prop SubState), Result=$(kube_prop Result), NRestarts=$(kube_prop NRestarts)"
note "evictd-kube journal: $(journalctl -u evictd-kube.service -b --no-pager -o cat 2>/dev/null | tail -n 6 | tr '\n' '|')"
# It exits at once while [kubernetes] enable = no; under Type=notify that is a success only after
# READY=1, otherwise systemd records Result=protocol and Restart=on-failure starts it again.
ok "evictd-kube.service (enable = no) exited without failing (Result=success)" test "$(kube_prop Result)" = success
ok "evictd-kube.service not restarted in a loop (NRestarts 0)" test "$(kube_prop NRestarts)" = 0
ok "the journal catalog has evictd's entries (systemd's trigger)" bash -c 'journalctl --list-catalog | grep -q evictd'
pid1=$(unit_prop MainPID)
ok "preemptd.service installed, not enabled (it needs its kubeconfig first)" \
	test "$(systemctl is-enabled preemptd.service 2>/dev/null)" = disabled
ok "... and not started by the postinst" test "$(pd ActiveState)" = inactive
# The operator's part (README): preemptd's kubeconfig, then the unit enabled and started.
[ -n "$KUBE_SRC" ] && [ -f "$DEPLOY" ] || bail "tests/kube and deploy/ not shipped to the guest"
ok "stand-in API server up with deploy/preemptd.yaml's objects and RBAC" \
	standin_start node-1 --bookmark-interval 1 --rbac "$DEPLOY"
install -m 600 "$KDIR/kubeconfig-sa-kube-system-preemptd" "$PD_KUBECONFIG"
ok "systemctl enable --now preemptd: active (running), READY=1" \
	bash -c 'systemctl enable --now preemptd.service && [ "$(systemctl show -p SubState --value preemptd.service)" = running ]'
pdpid1=$(pd MainPID)

sed -i 's/^#interval = 1s$/interval = 2s/' /etc/evictd/evictd.conf
ok "dpkg -i the new version over it" dpkg -i "$DEBS"/new/*.deb
note "upgraded $old -> $(dpkg-query -W -f='${Version}' evictd): $(evictd --version)"
ok "evictd.service running after the upgrade" wait_until 30 evictd_running
pid2=$(unit_prop MainPID)
note "MainPID $pid1 -> $pid2"
ok "evictd.service restarted by the upgrade (new MainPID)" test "$pid1" != "$pid2"
ok "the edited evictd.conf kept" grep -qx 'interval = 2s' /etc/evictd/evictd.conf
ok "no .dpkg-* file beside it" test -z "$(find /etc/evictd -name '*.dpkg-*')"
ok "preemptd.service running after the upgrade" wait_until 30 pd_running
pdpid2=$(pd MainPID)
ok "preemptd.service restarted by the upgrade ($pdpid1 -> $pdpid2)" test "$pdpid1" != "$pdpid2"

ok "dpkg -r" dpkg -r evictd preemptctl libpreempt-dev libpreempt0 preemptd
ok "preemptd.service stopped on removal" test "$(pd ActiveState)" = inactive
ok "evictd.service stopped on removal" test "$(unit_prop ActiveState)" = inactive
ok "evictd-kube.service not running after removal" test "$(kube_prop ActiveState)" != active
ok "/etc/evictd/evictd.conf kept on removal" grep -qx 'interval = 2s' /etc/evictd/evictd.conf
rm -f "$PD_KUBECONFIG"   # the operator's file, not the package's
ok "dpkg -P" dpkg -P evictd preemptd
ok "/etc/evictd gone on purge" test ! -e /etc/evictd
left=$(find /etc/systemd/system -name evictd.service -o -name evictd-kube.service -o -name preemptd.service)
[ -z "$left" ] || note "left: $left"
ok "no enable link left" test -z "$left"
known=$(systemctl list-unit-files evictd.service evictd-kube.service preemptd.service --no-legend)
[ -z "$known" ] || note "unit files: $known"
ok "systemd knows no evictd unit file" test -z "$known"
done_testing
