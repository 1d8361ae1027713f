# Setup shared by the agent's shell tests; sourced after ../lib.sh. Its name keeps it out of the
# Makefile's tests/*/test-*.sh, so it is never run as a test itself.

# The configuration every fixture tree is read with: minimum reclaim gives a multi-pod eviction
# list, and high-priority is the class the fixture descriptors name.
fixture_conf() {	# fixture_conf FILE
	cat >"$1" <<'CONF'
[agent]
nodefs-path = /
imagefs-path = /
[eviction-minimum-reclaim]
memory.available = 2Gi
[priority-class high-priority]
value = 1000000
CONF
}

# fixture_daemon_conf FILE STATUS-FILE [LINES]: a dry-run daemon on the fixture tree with 100 ms
# ticks, its status file where the test wants it; LINES (more sections) are appended.
fixture_daemon_conf() {
	cat >"$1" <<CONF
[agent]
interval = 100ms
nodefs-path = /
imagefs-path = /
status-file = $2
dry-run = yes
[priority-class high-priority]
value = 1000000
CONF
	[ -z "${3:-}" ] || printf '%s\n' "$3" >>"$1"
}

# once_env ROOT-REASON: EVICTD = the built evictd, tmp = a scratch directory removed on exit;
# skips the file unless evictd is built, this runs as root (ROOT-REASON says why) and python3 exists.
once_env() {
	EVICTD=$BUILD/evictd
	[ -x "$EVICTD" ] || skip_all "$EVICTD not built"
	[ "$(id -u)" = 0 ] || skip_all "$1"
	command -v python3 >/dev/null || skip_all "python3 missing"
	tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
}

# --- `--once --json --dry-run` on altered copies of the systemd fixture ----------------------
# The caller sets tmp (a scratch directory) and WEB (default/web-1's UID), then calls
# fixture_base once and, per case, tree NAME; <change the copy>; run; js/logged ...
fixture_base() {	# fixture_base: $tmp/base = the systemd fixture with trusted descriptors
	local fx=$PWD/tests/fixtures/cgroup/systemd
	mkdir -p "$tmp/base"
	cp -r "$fx/root" "$fx/proc" "$fx/pods" "$tmp/base/"
	chmod 0644 "$tmp/base/pods"/*
	fixture_conf "$tmp/base/evictd.conf"
}
T=""; P=""; D=""
tree() {	# tree NAME: a fresh copy of the fixture; $P = web-1's cgroup, $D = its descriptor
	T=$tmp/$1; rm -rf "$T"; cp -a "$tmp/base" "$T"
	P=$(find "$T/root" -type d -name "*${WEB//-/_}.slice")
	D=$T/pods/$WEB.conf
}
run() {	# run [ARGS]: --once on $T; 124 = hung
	timeout -k 2 10 "$EVICTD" --once --json --dry-run --config "$T/evictd.conf" --cgroup-root "$T/root" \
		--proc-root "$T/proc" --metadata-dir "$T/pods" "$@" >"$T/out.json" 2>"$T/err"
}
js() {	# js PYTHON-EXPR: with d = the JSON output, ev = evicted pods, mem = the memory ranking, rank = it by UID
	python3 - "$T/out.json" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = [e["pod"] for e in d["evict"]]
mem = d["ranking"]["memory"]
rank = {p["uid"]: p for p in mem}
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}
logged() { grep -q -- "$1" "$T/err"; }

# --- the daemon on the real cgroup v2 hierarchy ----------------------------------------------
find_cgroup2() {	# find_cgroup2: CG2 = a mounted cgroup v2 hierarchy, or the file is skipped
	local c
	CG2=
	for c in /sys/fs/cgroup/unified /sys/fs/cgroup; do
		[ "$(stat -f -c %T "$c" 2>/dev/null)" = cgroup2fs ] && { CG2=$c; return 0; }
	done
	skip_all "no cgroup v2 hierarchy mounted"
}
# Every signal but nodefs.available is switched off, so only the tmpfs the test fills at
# $T/nodefs can cross a threshold; the caller appends nodefs.available and what else it needs.
daemon_conf() {	# daemon_conf: writes $T/evictd.conf up to and within [eviction-hard]
	cat >"$T/evictd.conf" <<EOC
[agent]
interval = 1s
status-file = $T/status.json
nodefs-path = $T/nodefs
imagefs-path = $T/nodefs
pod-metadata-dir = $T/meta
[eviction-hard]
memory.available = 0%
imagefs.available = 0%
imagefs.inodesFree = 0%
nodefs.inodesFree = 0%
EOC
}

# --- a kubelet node on the real cgroup v2 hierarchy, with a kubelet-like cleaner ----------------
# For the reclaim tests: nodefs is a tmpfs at $T/nodefs laid out as the kubelet lays it out
# (kubelet/pods/<uid>/volumes/kubernetes.io~empty-dir/<name>, logs/<ns>_<name>_<uid>/<container>/),
# pods are cgroups under $PODS with a sigrecorder each, and only nodefs.available has a threshold.
# On a real node the kill alone frees nothing on disk: the kubelet removes a dead pod's volumes and
# cgroup seconds later, the runtime's container GC its logs later still (node_cleaner).
#   node_init NAME            T, ROOT, PODS; the tmpfs; skips the file where the machine cannot
#   node_pod UID NAME PRIO [STORAGE-REQUEST] [GRACE] [sigrecorder options]   descriptor, cgroup,
#                             process (its pid: NODE_PID, also in PIDS); NODE_UIDS lists the pods
#   node_emptydir UID MiB / node_logs UID NAME MiB    the pod's data on nodefs
#   node_fill_to MiB          fills nodefs from outside the pods until MiB are available
#   node_conf HARD [LINES...] $T/evictd.conf: nodefs.available < HARD only, 100 ms ticks, LINES appended
#   node_start / node_kill9 / node_stop    evictd in the background (DPID), stderr appended to $T/stderr
#   node_cleaner UID NAME VOLUMES-DELAY LOGS-DELAY   the kubelet's part, in the background
#   node_restart_container UID [sigrecorder options]  the kubelet restarting a container in place
node_init() {
	[ "$(id -u)" = 0 ] || skip_all "needs root (creates cgroups, mounts a tmpfs)"
	find_cgroup2
	EVICTD=$BUILD/evictd
	REC=$BUILD/tests/helpers/sigrecorder
	T=$(mktemp -d -t "evictd-$1.XXXXXX")
	ROOT=$CG2/evictd-$1-$TEST_TAG
	PODS=$ROOT/kubepods/besteffort
	PIDS=() NODE_UIDS=() CLEANERS=()
	DPID=""
	trap node_cleanup EXIT
	mkdir_cg "$PODS"
	[ -e "$ROOT/cgroup.kill" ] || skip_all "no cgroup.kill (kernel < 5.14)"
	mkdir -p "$T/nodefs" "$T/meta"; : > "$T/stderr"
	mount -t tmpfs -o size=24m tmpfs "$T/nodefs" || skip_all "cannot mount a tmpfs"
}
node_reset() {	# node_reset: kills everything, removes the pods, empties nodefs, forgets evictd's records
	[ -n "$DPID" ] && kill -9 "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	DPID=""
	for p in "${CLEANERS[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
	local u
	for u in "${NODE_UIDS[@]}"; do [ -e "$PODS/pod$u/cgroup.kill" ] && echo 1 > "$PODS/pod$u/cgroup.kill"; done
	sleep 0.2
	for u in "${NODE_UIDS[@]}"; do rmdir "$PODS/pod$u" 2>/dev/null; done
	[ ${#PIDS[@]} -eq 0 ] || wait "${PIDS[@]}" 2>/dev/null	# only ours: a test may run other helpers
	PIDS=() NODE_UIDS=() CLEANERS=()
	rm -rf "${T:?}/nodefs"/* "$T/meta"/* "$T/inflight" "$T"/*.rec "$T/status.json"
}
node_cleanup() {
	[ -n "${KEEP:-}" ] && cp -r "$T" "/tmp/$(basename "$T")-kept" 2>/dev/null
	node_reset
	for d in "$PODS" "$ROOT/kubepods" "$ROOT"; do rmdir "$d" 2>/dev/null; done
	umount "$T/nodefs" 2>/dev/null
	rm -rf "$T"
}
node_pod() {	# node_pod UID NAME PRIO [STORAGE-REQUEST] [GRACE] [sigrecorder options]
	local uid=$1 name=$2 prio=$3 req=${4:-0} grace=${5:-2s}
	shift $(( $# < 5 ? $# : 5 ))
	mkdir -p "$PODS/pod$uid"
	printf '[pod]\nnamespace = default\nname = %s\npriority = %s\nephemeral-storage-request = %s\ntermination-grace-period = %s\n' \
		"$name" "$prio" "$req" "$grace" > "$T/meta/$uid.conf"
	chmod 0644 "$T/meta/$uid.conf"
	NODE_UIDS+=("$uid")
	node_restart_container "$uid" "$@"
}
node_restart_container() {	# node_restart_container UID [sigrecorder options]
	local uid=$1; shift
	rm -f "$T/$uid.rec"
	"$REC" --cgroup "$PODS/pod$uid" "$@" "$T/$uid.rec" & NODE_PID=$!
	PIDS+=("$NODE_PID")
	local _i
	for _i in $(seq 250); do
		grep -q ready "$T/$uid.rec" 2>/dev/null && return 0
		kill -0 "$NODE_PID" 2>/dev/null || { wait "$NODE_PID"; env_or_fail $? "cannot move a process into $PODS/pod$uid"; }
		sleep 0.02
	done
	bail "the process of pod $uid did not start"
}
node_emptydir() {	# node_emptydir UID MiB: an emptyDir volume "data" on nodefs
	local d=$T/nodefs/kubelet/pods/$1/volumes/kubernetes.io~empty-dir/data
	mkdir -p "$d"
	dd if=/dev/zero of="$d/f" bs=1M count="$2" status=none
}
node_logs() {	# node_logs UID NAME MiB: its container's log under pod-logs-dir
	local d=$T/nodefs/logs/default_$2_$1/main
	mkdir -p "$d"
	dd if=/dev/zero of="$d/0.log" bs=1M count="$3" status=none
}
node_fill_to() {	# node_fill_to MiB: fills nodefs from outside the pods until MiB are available
	local avail
	avail=$(df -B1 --output=avail "$T/nodefs" | tail -1)
	dd if=/dev/zero of="$T/nodefs/fill$RANDOM" bs=4K count=$(( (avail - ($1 << 20)) / 4096 )) status=none
}
node_conf() {	# node_conf HARD-NODEFS [LINES...]: nodefs.available's hard threshold, then more sections
	daemon_conf
	sed -i 's/^interval = 1s/interval = 100ms/' "$T/evictd.conf"
	echo "nodefs.available = $1" >> "$T/evictd.conf"
	shift
	printf '%s\n' "[agent]" "kubelet-root-dir = $T/nodefs/kubelet" "pod-logs-dir = $T/nodefs/logs" \
		"[eviction]" "pressure-transition-period = 0s" "$@" >> "$T/evictd.conf"
}
node_start() {
	"$EVICTD" --config "$T/evictd.conf" --cgroup-root "$ROOT" --log-target stderr >>"$T/out" 2>>"$T/stderr" &
	DPID=$!
}
node_kill9() { kill -9 "$DPID"; wait "$DPID" 2>/dev/null; DPID=""; }
node_stop() { kill -TERM "$DPID"; wait "$DPID" 2>/dev/null; DPID=""; }
node_cleaner() {	# node_cleaner UID NAME VOLUMES-DELAY LOGS-DELAY
	local cg=$PODS/pod$1
	( while grep -q "populated 1" "$cg/cgroup.events" 2>/dev/null; do sleep 0.05; done
	  sleep "$3"
	  rm -rf "$T/nodefs/kubelet/pods/$1"
	  rmdir "$cg"
	  sleep "$4"
	  rm -rf "$T/nodefs/logs/default_$2_$1" ) &
	CLEANERS+=($!)
}
node_wait() {	# node_wait SECONDS COMMAND...: polls until COMMAND succeeds
	local end=$((SECONDS + $1)); shift
	until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.05; done
}
node_alive() { kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
node_dead() { ! node_alive "$1"; }
node_logged() { grep -q -- "$1" "$T/stderr"; }
node_count() { grep -c -- "$1" "$T/stderr"; }

# --- the daemon on a fixture tree, logging to a file ----------------------------------------
# fixture_daemon_env [python3]: EVICTD, FX (the systemd fixture), tmp (removed on exit, with the
# daemon D if still running); skips the file unless evictd is built (and python3 is there when
# named).
fixture_daemon_env() {
	EVICTD=$PWD/$BUILD/evictd
	[ -x "$EVICTD" ] || skip_all "$EVICTD not built"
	[ "${1:-}" != python3 ] || command -v python3 >/dev/null || skip_all "python3 missing"
	FX=$PWD/tests/fixtures/cgroup/systemd
	tmp=$(mktemp -d); D=
	trap '[ -n "$D" ] && { kill -9 "$D" 2>/dev/null; wait "$D" 2>/dev/null; }; rm -rf "$tmp"' EXIT
}
fixture_daemon_start() {	# fixture_daemon_start TREE CONF LOG: D = evictd on TREE/{root,proc,pods}, once it monitors
	"$EVICTD" --config "$2" --cgroup-root "$1/root" --proc-root "$1/proc" \
		--metadata-dir "$1/pods" --log-target stderr 2>"$3" &
	D=$!
	for _ in $(seq 100); do grep -q "evictd: monitoring" "$3" 2>/dev/null && break; sleep 0.05; done
}
fixture_daemon_stop() { kill -TERM "$D" 2>/dev/null; wait "$D" 2>/dev/null; D=; }
wait_log() {	# wait_log FILE PATTERN [COUNT]: up to 5 s for COUNT lines matching
	for _ in $(seq 100); do [ "$(grep -c -- "$2" "$1")" -ge "${3:-1}" ] && return 0; sleep 0.05; done
	echo "# no \"$2\" (x${3:-1}) in $1:"; sed 's/^/# /' "$1"; return 1
}

# --- evictd-kube against the stand-in API server ---------------------------------------------
# kube_section NODE: the [kubernetes] section for node NODE's identity at the stand-in
# (tests/kube/lib-apiserver.sh: KUBE_DIR), descriptors and spool in $T, retries within 1 s.
kube_section() {
	cat <<EOC
[kubernetes]
enable = yes
node-name = $1
kubeconfig = $KUBE_DIR/kubeconfig-node
descriptor-dir = $T/kube-pods
spool-dir = $T/spool
retry-max-interval = 1s
EOC
}

# cri_python: prints a python3 that imports grpc (python3-grpcio), for the stand-in CRI runtime
# (tests/cri/cri-standin.py); fails when there is none. A pyenv or venv python3 first in PATH does
# not see Debian's modules, so /usr/bin/python3 is tried after it.
cri_python() {
	local p
	for p in python3 /usr/bin/python3; do
		command -v "$p" >/dev/null && "$p" -c 'import grpc, google.protobuf' 2>/dev/null && { command -v "$p"; return 0; }
	done
	return 1
}
