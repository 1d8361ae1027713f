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
