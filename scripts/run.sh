#!/bin/sh
# `./run` and `make run` once evictd is built: chooses what to run and runs it in the foreground.
#   scripts/run.sh EVICTD [--demo | --monitor]
#   scripts/run.sh --help [EVICTD]      what the modes are, and which one this machine gets
# Where evictd finds pod cgroups (a Kubernetes node): --monitor, dry-run monitoring of this machine
# (scripts/run-local.sh), exactly as before there was a choice. Where it finds none, the
# demonstration (scripts/demo.sh) if the sandbox can be built here, else one line saying why and
# the monitoring. Plain POSIX sh, like ./run.
set -eu

usage() {
	cat << 'EOF'
Usage: ./run [--demo | --monitor | --preemptd]   (make run RUN_ARGS=--demo, RUN_ARGS=--preemptd, ...)
Builds evictd and runs it in the foreground until Ctrl-C, in one of two modes:
  --monitor  evictd on this machine with the shipped configuration (conf/evictd.conf) and
             --dry-run: it decides and logs, and never signals anything. The default where
             evictd finds pod cgroups (a Kubernetes node).
  --demo     the demonstration: the real daemon, not in dry-run, on a throwaway node built for it
             (a cgroup v2 subtree with four pods, their descriptors, a 64 MiB tmpfs as nodefs with
             their emptyDirs, a pressure ramp, a kubelet-like cleaner), confined to it by its own
             PID and mount namespaces; it shows the ranking, the eviction with its reason and
             timing, and the reclaim, then keeps evictd running until Ctrl-C, which removes
             everything. Needs root, a writable cgroup v2 hierarchy and tmpfs. The default where
             evictd finds no pod cgroups; where the sandbox cannot be built, ./run says why in one
             line and monitors instead.
Or, on any machine, without a cluster:
  --preemptd preemptd, not in dry-run, against a throwaway API server (the test suite's stand-in,
             with TLS) holding two nodes, priority classes, running pods and a
             PodDisruptionBudget (examples/preemptd/): it binds a pod, reports one unschedulable
             in kube-scheduler's words and preempts for a high-priority pod, the budget respected;
             shown as `kubectl get pods -o wide` and `kubectl get events` show them. Then it keeps
             running until Ctrl-C, which removes everything. Needs python3, python3-yaml, openssl
             (installed as root with the build's packages).
EOF
}

pods_found() {	# pods_found EVICTD: evictd's own discovery, with the shipped configuration
	"$1" --once --dry-run --config conf/evictd.conf 2> /dev/null |
		awk '/^ranking for memory pressure/ { getline; found = ($0 !~ /\(no pods\)/); exit } END { exit !found }'
}

# Before evictd is built (./run --help on a fresh clone): the same question from the shell, with
# evictd's default pod patterns (conf/evictd.conf's pods) under the cgroup v2 hierarchy.
pods_found_unbuilt() {
	for root in /sys/fs/cgroup/unified /sys/fs/cgroup; do
		[ "$(stat -f -c %T "$root" 2> /dev/null)" = cgroup2fs ] || continue
		for p in kubepods.slice/kubepods-*.slice/kubepods-*-pod*.slice kubepods.slice/kubepods-pod*.slice \
			kubepods/*/pod* kubepods/pod*; do
			for d in "$root"/$p; do [ -d "$d" ] && return 0; done
		done
		return 1
	done
	return 1
}

# choose EVICTD: prints "monitor REASON" or "demo REASON"
choose() {
	if { [ -x "$1" ] && pods_found "$1"; } || { [ ! -x "$1" ] && pods_found_unbuilt; }; then
		echo "monitor pod cgroups found on this machine"
	elif why=$(scripts/demo.sh --check "$1"); then
		echo "demo no pod cgroups on this machine"
	else
		echo "monitor no pod cgroups on this machine, and no demonstration: $why"
	fi
}

case "${1:-}" in
-h | --help)
	usage
	c=$(choose "${2:-build/evictd}")
	echo "On this machine ./run chooses --${c%% *}: ${c#* }."
	exit 0 ;;
"") usage >&2; exit 2 ;;
esac
evictd=$1
mode=${2:-}
case $mode in
--demo)
	if ! why=$(scripts/demo.sh --check "$evictd"); then
		echo "run: cannot run the demonstration here: $why" >&2
		exit 1
	fi
	echo "run: --demo: running the demonstration" >&2
	exec scripts/demo.sh "$evictd" ;;
--monitor)
	echo "run: --monitor: monitoring this machine in dry-run" >&2
	exec scripts/run-local.sh "$evictd" ;;
--preemptd)	# preemptd beside evictd in the build directory (make run RUN_ARGS=--preemptd)
	exec python3 scripts/demo-preemptd.py "$(dirname "$evictd")/preemptd" ;;
"") ;;
*) echo "run: unknown mode '$mode'" >&2; usage >&2; exit 2 ;;
esac

c=$(choose "$evictd")
case $c in
demo*)
	echo "run: ${c#* }: running the demonstration (./run --monitor watches this machine instead)" >&2
	exec scripts/demo.sh "$evictd" ;;
*)
	echo "run: ${c#* }; monitoring this machine in dry-run (./run --help for the modes)" >&2
	exec scripts/run-local.sh "$evictd" ;;
esac
