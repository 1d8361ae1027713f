#!/bin/bash
# evictd's eviction entries in a real journal: systemd-journald is started by hand in a private
# mount namespace (tmpfs over /run/systemd, /run/log, /var/log/journal), evictd evicts a pod
# from a real cgroup under a met hard threshold (nodefs.available on a small tmpfs), and the
# entries are read back with `journalctl -o json`: MESSAGE_ID and EVICTD_* fields of "eviction
# started" and "eviction finished".
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"

JOURNALD=/lib/systemd/systemd-journald
[ "$(id -u)" = 0 ] || skip_all "needs root (mount namespace, cgroups)"
[ -x "$JOURNALD" ] || skip_all "no $JOURNALD (package systemd)"
command -v journalctl > /dev/null || skip_all "no journalctl"
find_cgroup2

if [ -z "${EVICTD_IN_NS:-}" ]; then
	need_mount_ns
	EVICTD_IN_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi

EVICTD=$BUILD/evictd
REC=$BUILD/tests/helpers/sigrecorder
T=$(mktemp -d -t evictd-jrnl.XXXXXX)
ROOT=$CG2/evictd-jtest-$TEST_TAG
LOW=$ROOT/kubepods/podcccc-3333
HIGH=$ROOT/kubepods/poddddd-4444
PIDS=()
cleanup() {
	[ -n "${DPID:-}" ] && kill -9 "$DPID" 2>/dev/null
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	for cg in "$LOW" "$HIGH"; do [ -e "$cg/cgroup.kill" ] && echo 1 > "$cg/cgroup.kill"; done
	[ -n "${JPID:-}" ] && { kill "$JPID" 2>/dev/null; wait "$JPID" 2>/dev/null; }
	sleep 0.2
	for d in "$LOW" "$HIGH" "$ROOT/kubepods" "$ROOT"; do rmdir "$d" 2>/dev/null; done
	umount "$T/nodefs" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

mkdir_cg "$LOW" "$HIGH"
mkdir -p "$T/nodefs" "$T/meta"
mount -t tmpfs -o size=8m tmpfs "$T/nodefs" || skip_all "cannot mount a tmpfs"
mount -t tmpfs tmpfs /run/systemd || skip_all "cannot mount over /run/systemd"
mkdir -p /run/systemd/journal /run/log /var/log/journal
mount -t tmpfs tmpfs /run/log && mount -t tmpfs tmpfs /var/log/journal || skip_all "cannot mount journal dirs"
"$JOURNALD" > "$T/journald.out" 2>&1 &
JPID=$!
for _ in $(seq 100); do [ -S /run/systemd/journal/socket ] && break; sleep 0.05; done
[ -S /run/systemd/journal/socket ] || skip_all "systemd-journald did not start"

printf '[pod]\nnamespace = shop\nname = batch\npriority = 10\ntermination-grace-period = 5s\n' > "$T/meta/cccc-3333.conf"
printf '[pod]\nnamespace = shop\nname = web\npriority = 2000000000\n' > "$T/meta/dddd-4444.conf"
daemon_conf
echo "nodefs.available = 4Mi" >> "$T/evictd.conf"
start_pod() {	# start_pod CGROUP FILE: a sigrecorder in CGROUP; 0 once ready, else its exit status
	"$REC" --cgroup "$1" "$2" &
	PIDS+=($!)
	for _ in $(seq 250); do
		grep -q ready "$2" 2>/dev/null && return 0
		kill -0 "${PIDS[-1]}" 2>/dev/null || { wait "${PIDS[-1]}"; return $?; }
		sleep 0.02
	done
	return 1
}
start_pod "$LOW" "$T/low.rec" || env_or_fail $? "cannot move a process into $LOW"
LOWPID=${PIDS[-1]}
start_pod "$HIGH" "$T/high.rec" || env_or_fail $? "cannot move a process into $HIGH"
HIGHPID=${PIDS[-1]}
ok "both pods' processes run in their cgroups" bash -c \
	"grep -qx $LOWPID '$LOW/cgroup.procs' && grep -qx $HIGHPID '$HIGH/cgroup.procs'"
dd if=/dev/zero of="$T/nodefs/fill" bs=1M count=6 status=none

"$EVICTD" --config "$T/evictd.conf" --cgroup-root "$ROOT" --log-target journal 2> "$T/stderr" &
DPID=$!
for _ in $(seq 100); do kill -0 "$LOWPID" 2>/dev/null || break; sleep 0.05; done
ok "the low-priority pod was evicted" bash -c "! kill -0 $LOWPID 2>/dev/null && [ -z \"\$(cat '$LOW/cgroup.procs')\" ]"
ok "the higher-priority pod survived" kill -0 "$HIGHPID"
for _ in $(seq 100); do
	journalctl --no-pager -o json MESSAGE_ID=0651b0dd2c3347a1a2bcdd650890bdf6 2>/dev/null | grep -q . && break
	sleep 0.05
done
kill -TERM "$DPID"; wait "$DPID"; DPID=

journalctl --no-pager -o json SYSLOG_IDENTIFIER=evictd > "$T/journal.json" 2>/dev/null
check() {	# check PYTHON-EXPR over the list `e` of evictd entries
	python3 - "$T/journal.json" "$1" <<'EOP'
import json, sys
e = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sys.exit(0 if eval(sys.argv[2]) else 1)
EOP
}
STARTED=ddd52a80a54f4fc8ba4f5b6f851a0e41
FINISHED=0651b0dd2c3347a1a2bcdd650890bdf6
ok "journal has an 'eviction started' entry for shop/batch" check \
	"any(x.get('MESSAGE_ID')=='$STARTED' and x.get('EVICTD_POD')=='shop/batch' for x in e)"
ok "started: pod, uid, namespace, priority, signal, kind, grace, action, dry-run fields" check \
	"any(x.get('MESSAGE_ID')=='$STARTED' and x.get('EVICTD_POD_UID')=='cccc-3333' and x.get('EVICTD_NAMESPACE')=='shop' and x.get('EVICTD_PRIORITY')=='10' and x.get('EVICTD_SIGNAL')=='nodefs.available' and x.get('EVICTD_THRESHOLD_KIND')=='hard' and x.get('EVICTD_GRACE_SEC')=='0' and x.get('EVICTD_ACTION')=='kill' and x.get('EVICTD_DRY_RUN')=='0' and x.get('EVICTD_PROCESSES')=='0' for x in e)"
ok "journal has an 'eviction finished' entry with outcome and duration" check \
	"any(x.get('MESSAGE_ID')=='$FINISHED' and x.get('EVICTD_POD')=='shop/batch' and x.get('EVICTD_OUTCOME')=='done' and int(x.get('EVICTD_DURATION_MSEC','-1'))>=0 and x['MESSAGE'].startswith('Evicted shop/batch in ') for x in e)"
ok "finished comes after started" check \
	"[x.get('MESSAGE_ID') for x in e if x.get('MESSAGE_ID') in ('$STARTED','$FINISHED')][:2]==['$STARTED','$FINISHED']"
ok "no eviction entry for the higher-priority pod" check \
	"not any(x.get('EVICTD_POD')=='shop/web' and x.get('MESSAGE_ID') in ('$STARTED','$FINISHED') for x in e)"
ok "nothing went to stderr (journal target)" test ! -s "$T/stderr"
done_testing
