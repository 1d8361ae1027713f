#!/bin/bash
# scripts/demo.sh — what evictd is for, on a machine that is not a Kubernetes node: the real daemon
# (build/evictd, not in dry-run) on a throwaway node built for it, until Ctrl-C.
#
#   scripts/demo.sh [--exit-after-reclaim] [--verbose] EVICTD
#   scripts/demo.sh --check EVICTD     prints why the sandbox cannot be built here (exit 1), or
#                                      nothing (exit 0)
#
# The throwaway node:
# - a cgroup v2 subtree, <cgroup2 mount>/evictd-demo-<id>/kubepods/..., laid out as the kubelet's
#   cgroupfs driver lays out pods (Guaranteed: kubepods/pod<uid>, Burstable and BestEffort:
#   kubepods/<qos>/pod<uid>), with one process in each pod;
# - a descriptor per pod, as evictd-kube writes them from the API server (root-owned 0644: evictd
#   trusts nothing else): priorities, QoS, requests, ephemeral-storage requests;
# - a 64 MiB tmpfs as the node's nodefs, i.e. the kubelet's --root-dir, with each pod's emptyDir
#   where the kubelet puts it (pods/<uid>/volumes/kubernetes.io~empty-dir/<name>/), partly filled;
# - evictd with the shipped thresholds that apply (nodefs.available < 10%, the kubelet's default);
#   the memory thresholds are off (the sandbox must not react to this machine's memory, which may
#   not even be on cgroup v2 here) and so is imagefs (the demo node has no image filesystem of its
#   own: imagefs-path is the same tmpfs, and its 15% would be met first);
# - a pressure ramp: one pod (batch/report-builder) writes 1 MiB into its emptyDir every 100 ms,
#   until nodefs.available crosses the threshold;
# - a kubelet-like cleaner: once an evicted pod's processes are dead it waits 1.5 s (the kubelet
#   tears volumes down from its reconciler and removes pod cgroups from housekeeping, every 1-2 s),
#   then removes the pod's volumes, its cgroup and its descriptor (evictd-kube removes it when the
#   pod is deleted), so the reclaim is visible.
#
# Confinement: evictd is not in dry-run, yet it cannot signal anything outside the sandbox.
# - Its own PID namespace (unshare --pid): kill(2) reaches only processes of that namespace, which
#   holds the demo's own processes and nothing else; the cgroup.procs it reads list every outside
#   process as pid 0.
# - Its own mount namespace (unshare --mount): the only cgroup file system mounted there is the
#   sandbox subtree (a bind mount); every other cgroup mount is detached, so no cgroup.kill,
#   cgroup.procs or freezer file outside the sandbox has a path.
# - Without CAP_SYS_ADMIN (setpriv --bounding-set): evictd keeps the capabilities its unit gives
#   it (kill, dac_override, dac_read_search, sys_resource) and cannot mount the cgroup file system
#   again, enter another namespace or undo the above.
# Everything lives in the namespaces and one temporary directory: when the demonstration ends (or
# Ctrl-C), evictd is stopped, the pods' cgroups are killed and removed, the namespaces end (their
# mounts and any process left in them with them), and the script checks and says that no cgroup,
# mount or process is left. If this script itself is killed (SIGKILL), its unshare is killed too
# (setpriv --pdeathsig) and the namespaces end with it (unshare --kill-child); only the empty
# cgroup directories and the temporary directory stay.
#
# Exit status: 0 the demonstration ran (and, after Ctrl-C, everything is gone); 1 it failed or
# left something behind (said); 2 usage; 3 the sandbox cannot be built here (the reason, one line).
set -u

usage() {
	cat << 'EOF'
Usage: scripts/demo.sh [--exit-after-reclaim] [--verbose] EVICTD
       scripts/demo.sh --check EVICTD
The demonstration ./run gives where evictd finds no pods: EVICTD, not in dry-run, on a throwaway
node confined to its own PID and mount namespaces, until Ctrl-C (which removes everything).
  --exit-after-reclaim  stop after the eviction and the reclaim instead of waiting for Ctrl-C
  --verbose             evictd's lines with their journal fields
  --check               print why the sandbox cannot be built here (exit 1), or nothing (exit 0)
EOF
}

CHECK=no EXIT_AFTER=no VERBOSE=no INNER=no
while [ $# -gt 0 ]; do
	case $1 in
	--check) CHECK=yes ;;
	--exit-after-reclaim) EXIT_AFTER=yes ;;
	--verbose) VERBOSE=yes ;;
	--inner) INNER=yes ;;
	-h | --help) usage; exit 0 ;;
	-*) echo "demo: unknown option $1" >&2; usage >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done

# ---- the pods -----------------------------------------------------------------------------------
# uid namespace/name priority qos memory-request cpu-request(m) storage-request emptyDir-MiB class
PODS=(
	"6f1c2a9e-3b4d-4e5f-8a6b-7c8d9e0f1a01 shop/checkout 1000000 Guaranteed 268435456 500 33554432 8 shop-critical"
	"6f1c2a9e-3b4d-4e5f-8a6b-7c8d9e0f1a02 shop/web 1000 Burstable 134217728 250 16777216 6 shop"
	"6f1c2a9e-3b4d-4e5f-8a6b-7c8d9e0f1a03 batch/log-shipper 0 BestEffort - - - 2 -"
	"6f1c2a9e-3b4d-4e5f-8a6b-7c8d9e0f1a04 batch/report-builder 0 Burstable 67108864 100 4194304 12 -"
)
VICTIM=batch/report-builder
NODEFS_MIB=64
THRESHOLD=10%
CLEAN_DELAY=1.5   # the kubelet-like cleaner's wait once a pod's processes are gone (one decimal)
RAMP_LIMIT=60     # seconds the ramp may take before the demonstration gives up

pod_field() { local a; read -r -a a <<< "$1"; echo "${a[$2]}"; }   # pod_field LINE INDEX
pod_cgroup() {	# pod_cgroup LINE: the pod's cgroup, relative to the cgroup root
	local uid qos
	uid=$(pod_field "$1" 0) qos=$(pod_field "$1" 3)
	case $qos in
	Guaranteed) echo "kubepods/pod$uid" ;;
	Burstable) echo "kubepods/burstable/pod$uid" ;;
	*) echo "kubepods/besteffort/pod$uid" ;;
	esac
}
P_UID=() P_NAME=() P_CG=()   # per pod, computed once: the cleaner polls without forking
for p in "${PODS[@]}"; do
	P_UID+=("$(pod_field "$p" 0)") P_NAME+=("$(pod_field "$p" 1)") P_CG+=("$(pod_cgroup "$p")")
done
mib() { awk -v b="$1" 'BEGIN { printf "%.1fMi", b / 1048576 }'; }
free_bytes() { local a s; read -r a s < <(stat -f -c '%a %S' "$1") && echo $((a * s)); }

# ---- what the machine offers ----------------------------------------------------------------------
find_cgroup2() {
	local c
	for c in /sys/fs/cgroup/unified /sys/fs/cgroup; do
		[ "$(stat -f -c %T "$c" 2> /dev/null)" = cgroup2fs ] && { echo "$c"; return 0; }
	done
	return 1
}
why_not() {	# prints the one reason the sandbox cannot be built here, or nothing (run it in $(...))
	local t cg2 probe d err
	trap '' INT TERM HUP   # Ctrl-C meanwhile is the caller's to handle, once the probes are removed
	[ "$(id -u)" = 0 ] || { echo "not root: the sandbox needs to create cgroups and mount a tmpfs"; return; }
	for t in unshare setpriv mount umount stat tail awk; do
		command -v "$t" > /dev/null || { echo "$t is missing"; return; }
	done
	cg2=$(find_cgroup2) || { echo "no cgroup v2 hierarchy is mounted (looked at /sys/fs/cgroup and /sys/fs/cgroup/unified)"; return; }
	probe=$cg2/evictd-demo-probe-$$
	err=$(mkdir "$probe" 2>&1) || { echo "cannot create a cgroup under $cg2: ${err##*: }"; return; }
	if [ ! -e "$probe/cgroup.kill" ]; then
		rmdir "$probe"; echo "the kernel has no cgroup.kill (older than 5.14)"; return
	fi
	rmdir "$probe"
	d=$(mktemp -d "${TMPDIR:-/tmp}/evictd-demo-probe.XXXXXX") || { echo "cannot create a temporary directory"; return; }
	err=$(unshare --pid --fork --mount --mount-proc --propagation private -- \
		mount -t tmpfs -o size=1m evictd-demo-probe "$d" 2>&1)
	t=$?
	rmdir "$d"
	[ $t = 0 ] || echo "cannot create PID and mount namespaces with a tmpfs in them: ${err:-unshare failed}"
}

EVICTD=${1:-}
[ -n "$EVICTD" ] || { usage >&2; exit 2; }
if [ $CHECK = yes ]; then
	reason=$(why_not)
	[ -z "$reason" ] || { echo "$reason"; exit 1; }
	exit 0
fi

# ==== inside the namespaces ========================================================================
# --inner EVICTD WORK SANDBOX-CGROUP: pid 1 of the demo's PID namespace, in its mount namespace.
# SIGINT is ignored here (the outer script takes Ctrl-C and sends SIGTERM to this process).
if [ $INNER = yes ]; then
	WORK=$2 SB_CG=$3
	CG=$WORK/cgroup NODE=$WORK/node CONF=$WORK/evictd.conf LOG=$WORK/evictd.log
	STOP=no
	trap 'STOP=yes' TERM
	T0=$EPOCHREALTIME
	ts() { awk -v a="$T0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%8s", sprintf("+%.3fs", b - a) }'; }
	say() { echo "$*"; }

	# -- mounts: the nodefs tmpfs, the sandbox subtree as the only cgroup file system
	mkdir -p "$NODE" "$CG" "$WORK/pods" "$WORK/run" "$WORK/state"
	mount -t tmpfs -o "size=${NODEFS_MIB}m,mode=0755" evictd-demo-nodefs "$NODE" || exit 1
	mount --bind "$SB_CG" "$CG" || exit 1
	# Every other cgroup mount of this namespace is detached (lazily: a busy one goes when idle).
	# Deepest first, so that a mount under another (cgroup v1 under the /sys/fs/cgroup tmpfs) goes
	# before its parent's turn.
	awk -v keep="$CG" '{ for (i = 7; $i != "-"; i++); if (($(i + 1) == "cgroup" || $(i + 1) == "cgroup2") && $5 != keep) print $5 }' \
		/proc/self/mountinfo | sort -r | while read -r m; do umount -l "$(printf '%b' "$m")"; done
	if awk '{ for (i = 7; $i != "-"; i++); if ($(i + 1) ~ /^cgroup2?$/) n++ } END { exit n != 1 }' /proc/self/mountinfo; then
		:
	else
		echo "demo: could not hide this machine's cgroup file systems from the sandbox; stopping" >&2
		exit 1
	fi

	# -- the pods: descriptors, cgroups, emptyDirs, processes
	for p in "${PODS[@]}"; do
		read -r uid nsname prio qos mem cpu storage used class <<< "$p"
		ns=${nsname%/*} name=${nsname#*/}
		{
			echo "# Written by evictd-kube from the API server; an operator's descriptor in pod-metadata-dir wins."
			printf '[pod]\nuid = %s\nnamespace = %s\nname = %s\npriority = %s\n' "$uid" "$ns" "$name" "$prio"
			[ "$class" = - ] || echo "# priority-class: $class"
			printf 'preemption-policy = PreemptLowerPriority\nqos-class = %s\ncritical = no\n' "$qos"
			[ "$mem" = - ] || echo "memory-request = $mem"
			[ "$cpu" = - ] || echo "cpu-request = ${cpu}m"
			[ "$storage" = - ] || echo "ephemeral-storage-request = $storage"
			echo "termination-grace-period = 30s"
			printf 'container = %s -' "$name"
			[ "$mem" = - ] || printf ' memory=%s' "$mem"
			[ "$storage" = - ] || printf ' ephemeral-storage=%s' "$storage"
			[ "$cpu" = - ] || printf ' cpu=%sm' "$cpu"
			echo
		} > "$WORK/pods/.$uid.conf"
		chmod 0644 "$WORK/pods/.$uid.conf"
		mv "$WORK/pods/.$uid.conf" "$WORK/pods/$uid.conf"
		vol=$NODE/pods/$uid/volumes/kubernetes.io~empty-dir/scratch
		mkdir -p "$vol" "$CG/$(pod_cgroup "$p")"
		head -c $((used * 1048576)) /dev/zero > "$vol/data"
		cgp=$CG/$(pod_cgroup "$p")/cgroup.procs
		if [ "$nsname" = "$VICTIM" ]; then
			# The pod that fills the node: after $WORK/state/ramp appears, 1 MiB every 100 ms into its
			# emptyDir, each write logged with its time and the free space after it.
			( exec bash -c 'echo $$ > "$1" || exit 1
				until [ -e "$2/state/ramp" ]; do sleep 0.05; done
				while :; do
					echo "$EPOCHREALTIME start" >> "$2/state/ramp.log"
					head -c 1048576 /dev/zero >> "$3/output.log" 2> /dev/null || { sleep 1; continue; }
					echo "$EPOCHREALTIME $(stat -f -c "%a %S" "$4")" >> "$2/state/ramp.log"
					sleep 0.1
				done' report-builder "$cgp" "$WORK" "$vol" "$NODE" & )
		else
			( exec bash -c 'echo $$ > "$1" && exec sleep infinity' "$name" "$cgp" & )
		fi
	done
	mkdir -p "$NODE/logs"
	for _ in $(seq 100); do   # every pod has its process
		n=0
		for p in "${PODS[@]}"; do grep -q 'populated 1' "$CG/$(pod_cgroup "$p")/cgroup.events" && n=$((n + 1)); done
		[ $n = ${#PODS[@]} ] && break
		sleep 0.02
	done
	[ "$n" = "${#PODS[@]}" ] || { echo "demo: the pods' processes did not start" >&2; exit 1; }

	cat > "$CONF" << EOF
# The demonstration's node: only nodefs.available (the kubelet's default 10%) can be met.
[agent]
interval = 1s
pod-metadata-dir = $WORK/pods
kubelet-root-dir = $NODE
pod-logs-dir = $NODE/logs
nodefs-path = $NODE
imagefs-path = $NODE
status-file = $WORK/run/status.json
run-directory = $WORK/run
[eviction-hard]
memory.available = 0%
nodefs.available = $THRESHOLD
imagefs.available = 0%
imagefs.inodesFree = 0%
[eviction]
pressure-transition-period = 5s
EOF
	# The capabilities of evictd's unit, none more: no CAP_SYS_ADMIN, so no way out of the above.
	# (An array, not a function: "$CONFINED" cmd & must be evictd's own pid, with no shell between.)
	CONFINED=(setpriv --inh-caps=-all --bounding-set=-all,+kill,+dac_override,+dac_read_search,+sys_resource
		--no-new-privs --)

	say ""
	say "The node: ${#PODS[@]} pods in $SB_CG, nodefs = a ${NODEFS_MIB} MiB tmpfs (kubelet root-dir), hard threshold nodefs.available < $THRESHOLD"
	say "  POD                     PRIORITY  QOS         EPHEMERAL-STORAGE REQUEST  emptyDir"
	for p in "${PODS[@]}"; do
		read -r uid nsname prio qos mem cpu storage used class <<< "$p"
		req=-; [ "$storage" = - ] || req=$(mib "$storage")
		extra=; [ "$nsname" = "$VICTIM" ] && extra="  (will write 10 MiB/s)"
		printf '  %-22s %9s  %-10s  %-25s  %sMi%s\n' "$nsname" "$prio" "$qos" "$req" "$used" "$extra"
	done

	# -- the ranking, as evictd sees it before the crossing
	say ""
	say "evictd --once (read-only) before the pressure: the nodefs signal and the ranking for disk pressure"
	# Ctrl-C while the node is built: pid 1 leaving ends every process of the namespace and its
	# mounts; the outside removes the cgroups and checks.
	[ $STOP = no ] || exit 0
	"${CONFINED[@]}" "$EVICTD" --once --dry-run --config "$CONF" --cgroup-root "$CG" > "$WORK/once.txt" 2> "$WORK/once.err" ||
		{ echo "demo: evictd --once failed:" >&2; cat "$WORK/once.err" >&2; exit 1; }
	grep -E '^(SIGNAL|nodefs\.available) ' "$WORK/once.txt" | sed 's/^/  /'
	awk '/^ranking for disk pressure/ { s = 1 } s && /^$/ { exit } s' "$WORK/once.txt" | sed 's/^/  /'

	# -- the daemon, its log shown as it comes
	say ""
	say "evictd (not in dry-run, confined to the sandbox): $EVICTD --config $CONF --cgroup-root $CG"
	# --log-target stderr: evictd's own lines, as it prints them without a journal socket (with one,
	# and stderr not a terminal, "auto" would send them to the journal instead of to this screen).
	# Into a file, not a pipe: a reader gone at Ctrl-C must not take evictd down with SIGPIPE.
	[ $STOP = no ] || exit 0
	: > "$LOG"
	"${CONFINED[@]}" "$EVICTD" --config "$CONF" --cgroup-root "$CG" --log-target stderr 2>> "$LOG" < /dev/null &
	EPID=$!
	follow() {
		tail -n +1 -f -s 0.1 --pid="$EPID" "$LOG" | while IFS= read -r line; do
			[ $VERBOSE = yes ] || line=${line% \[EVICTD_*\]}
			# evictd names its pid in this PID namespace: typed on the host, that kill would signal
			# an unrelated process (SIGUSR1 terminates most). The demonstration's way is Ctrl-C.
			[[ $line =~ ^(.*)", or on kill -USR1 "[0-9]+(.*)$ ]] && line=${BASH_REMATCH[1]}${BASH_REMATCH[2]}
			echo "  $(ts) $line"
			echo "$EPOCHREALTIME $line" >> "$WORK/state/evictd.timed"
		done
	}
	follow &
	FPID=$!

	# -- the kubelet-like cleaner
	cleaner() {	# one pass every 50 ms; one pod cleaned at a time, so each reclaim is its own
		local i uid nsname cgd before after k v now
		local -A due=()
		while :; do
			now=${EPOCHREALTIME/./}
			for i in "${!PODS[@]}"; do
				uid=${P_UID[i]} nsname=${P_NAME[i]} cgd=$CG/${P_CG[i]}
				if [ -n "${due[$uid]:-}" ]; then
					[ "${due[$uid]}" != "cleaned" ] && [ "$now" -ge "${due[$uid]}" ] || continue
					due[$uid]="cleaned"
					before=$(free_bytes "$NODE")
					rm -rf "$NODE/pods/$uid"
					rmdir "$cgd" 2> /dev/null
					rm -f "$WORK/pods/$uid.conf"
					after=$(free_bytes "$NODE")
					echo "$before $after" > "$WORK/state/cleaned.$uid"
					echo "  $(ts) kubelet (demo): $nsname cleaned up: volumes and cgroup removed; nodefs.available $(mib "$before") -> $(mib "$after")"
					continue
				fi
				POP=
				{ while read -r k v; do [ "$k" = populated ] && POP=$v; done < "$cgd/cgroup.events"; } 2> /dev/null
				[ "$POP" = 0 ] || continue
				touch "$WORK/state/gone.$uid"
				due[$uid]=$((now + ${CLEAN_DELAY/./} * 100000))
				echo "  $(ts) kubelet (demo): $nsname's processes are gone; its volumes and cgroup go in ${CLEAN_DELAY}s"
			done
			sleep 0.05
		done
	}
	cleaner &
	CPID=$!

	teardown() {
		local p cgd n i
		trap '' TERM
		kill "$CPID" 2> /dev/null
		kill "${RPID:-}" 2> /dev/null
		if kill -0 "$EPID" 2> /dev/null; then
			kill -TERM "$EPID"
			for i in $(seq 20); do kill -0 "$EPID" 2> /dev/null || break; sleep 0.05; done
			kill -KILL "$EPID" 2> /dev/null
		fi
		wait "$EPID" 2> /dev/null
		ERC=$?
		wait "$FPID" 2> /dev/null
		n=0
		for p in "${PODS[@]}"; do
			cgd=$CG/$(pod_cgroup "$p")
			[ -d "$cgd" ] || continue
			grep -q 'populated 1' "$cgd/cgroup.events" && n=$((n + 1))
			echo 1 > "$cgd/cgroup.kill"
		done
		for p in "${PODS[@]}"; do
			cgd=$CG/$(pod_cgroup "$p")
			for i in $(seq 100); do [ -d "$cgd" ] || break; rmdir "$cgd" 2> /dev/null && break; sleep 0.05; done
		done
		rmdir "$CG/kubepods/burstable" "$CG/kubepods/besteffort" "$CG/kubepods" 2> /dev/null
		left=
		[ -d "$CG/kubepods" ] && left=" (some cgroups could not be removed yet)"
		umount "$CG" || left="$left (the cgroup bind mount is busy)"
		umount "$NODE" || left="$left (the tmpfs is busy)"
		say ""
		say "stopping: evictd exited with status $ERC; pods still running, killed: $n; the sandbox's cgroups removed and its mounts gone$left"
	}

	# -- the pressure ramp, once evictd watches
	for _ in $(seq 200); do grep -q ': monitoring ' "$LOG" && break; kill -0 "$EPID" 2> /dev/null || break; [ $STOP = no ] || break; sleep 0.05; done
	[ $STOP = no ] || { teardown; exit 0; }
	if ! grep -q ': monitoring ' "$LOG"; then
		say "demo: FAILED: evictd did not start monitoring the sandbox"
		teardown; exit 1
	fi
	sleep 0.2
	say ""
	say "The pressure: $VICTIM writes 1 MiB into its emptyDir every 100 ms"
	touch "$WORK/state/ramp"
	thr=$(awk -v c="$(stat -f -c '%b %S' "$NODE" | awk '{ print $1 * $2 }')" -v t="${THRESHOLD%\%}" 'BEGIN { printf "%d", c * t / 100 }')
	(
		while :; do echo "  $(ts) nodefs.available $(mib "$(free_bytes "$NODE")") (hard threshold $(mib "$thr"))"; sleep 0.5; done
	) &
	RPID=$!
	victim_line=; for p in "${PODS[@]}"; do [ "$(pod_field "$p" 1)" = "$VICTIM" ] && victim_line=$p; done
	victim_uid=$(pod_field "$victim_line" 0)
	end=$((SECONDS + RAMP_LIMIT))
	until [ -e "$WORK/state/gone.$victim_uid" ] || [ $STOP = yes ] || [ $SECONDS -ge $end ]; do sleep 0.05; done
	kill "$RPID" 2> /dev/null; wait "$RPID" 2> /dev/null; RPID=
	if [ $STOP = no ] && [ ! -e "$WORK/state/gone.$victim_uid" ]; then
		say "demo: FAILED: $VICTIM was not evicted within ${RAMP_LIMIT}s of the pressure starting"
		teardown; exit 1
	fi
	# The reclaim, once the cleaner is done with the victim (and any other pod evicted meanwhile).
	until [ -e "$WORK/state/cleaned.$victim_uid" ] || [ $STOP = yes ] || [ $SECONDS -ge $((end + 10)) ]; do sleep 0.05; done
	sleep 1
	for _ in $(seq 100); do
		pending=0
		for p in "${PODS[@]}"; do
			u=$(pod_field "$p" 0)
			[ -e "$WORK/state/gone.$u" ] && [ ! -e "$WORK/state/cleaned.$u" ] && pending=1
		done
		[ $pending = 0 ] || [ $STOP = yes ] && break
		sleep 0.1
	done

	# -- the summary: what a person wants to know
	if [ $STOP = no ]; then
		say ""
		say "Summary"
		# The crossing: the first write after which nodefs.available was under the threshold; when
		# evictd killed the writer before it could log that, the write it was in (its start).
		cross=$(awk -v t="$thr" '$2 == "start" { s = $1; next } { if ($2 * $3 < t) { print $1; f = 1; exit } } END { if (!f && s) print s }' "$WORK/state/ramp.log")
		status=$WORK/run/status.json
		# evictd's own clock for the start of the eviction (status.json, time_usec)
		started=$(grep -o "\"time_usec\":[0-9]*,\"pod\":\"$VICTIM\"" "$status" 2> /dev/null | tail -n1 | sed 's/.*"time_usec":\([0-9]*\).*/\1/')
		# evictd's own clock for the eviction (status.json: its start and how long the kill took)
		dec=$(grep -o "{\"time_usec\":[0-9]*,\"pod\":\"$VICTIM\"[^}]*}" "$WORK/run/status.json" 2> /dev/null | tail -n1)
		started=$(echo "$dec" | sed -n 's/.*"time_usec":\([0-9]*\).*/\1/p')
		took=$(echo "$dec" | sed -n 's/.*"duration_usec":\([0-9]*\).*/\1/p')
		if [ -n "$cross" ] && [ -n "$started" ]; then
			say "  threshold crossed at $(awk -v c="$cross" -v a="$T0" 'BEGIN { printf "+%.3fs", c - a }') (the write that took nodefs.available under $(mib "$thr"));" \
				"evictd started evicting $VICTIM $(awk -v c="$cross" -v s="$started" 'BEGIN { printf "%.0f ms", (s / 1e6 - c) * 1000 }') later${took:+, its processes were dead $(awk -v c="$cross" -v s="$started" -v d="$took" 'BEGIN { printf "%.0f ms", ((s + d) / 1e6 - c) * 1000 }') after the crossing}"
		else
			say "  (the crossing or evictd's decision could not be timed: ramp log or status.json incomplete)"
		fi
		if [ -e "$WORK/state/cleaned.$victim_uid" ]; then
			read -r before after < "$WORK/state/cleaned.$victim_uid"
			say "  reclaim: nodefs.available $(mib "$before") while $VICTIM's volumes were still there, $(mib "$after") once the kubelet (demo) removed them (threshold $(mib "$thr"))"
		fi
		# evicted in evictd's order; still running: those whose processes were never gone
		mapfile -t evicted < <(sed -n 's/^[0-9.]* evictd: [a-z]*: Evicting \([^ ]*\) (priority .*/\1/p' "$WORK/state/evictd.timed")
		survived=()
		for i in "${!PODS[@]}"; do [ -e "$WORK/state/gone.${P_UID[i]}" ] || survived+=("${P_NAME[i]}"); done
		say "  evicted: ${evicted[*]:-none}; still running: ${survived[*]:-none}"
		if [ ${#evicted[@]} -gt 1 ]; then
			say "  ${#evicted[@]} pods evicted where one was enough: this evictd counts an eviction as over when the pod's processes are"
			say "  dead, not when its disk is back; until the kubelet has removed the volumes, the pressure lasts and the next pod goes."
		fi
	fi
	if [ $STOP = no ] && [ $EXIT_AFTER = no ]; then
		say ""
		say "evictd keeps running on the sandbox: a heartbeat now and every minute. Ctrl-C stops it and removes the sandbox."
		kill -USR1 "$EPID" 2> /dev/null
		while [ $STOP = no ] && kill -0 "$EPID" 2> /dev/null; do sleep 0.2; done
	fi
	teardown
	exit 0
fi

# ==== outside: build the sandbox's cgroup and directory, run the inside, tear down, check ============
STOPPING=no
trap 'STOPPING=yes' INT TERM HUP
reason=$(why_not)
[ $STOPPING = no ] || exit 0   # Ctrl-C before anything was built
if [ -n "$reason" ]; then echo "demo: cannot build the sandbox: $reason" >&2; exit 3; fi
case $EVICTD in /*) ;; *) EVICTD=$PWD/$EVICTD ;; esac
[ -x "$EVICTD" ] || { echo "demo: $EVICTD is not an executable" >&2; exit 2; }
CG2=$(find_cgroup2)
TAG=${EVICTD_TEST_RUN:+$EVICTD_TEST_RUN-}$$
SB_CG=$CG2/evictd-demo-$TAG
WORK=$(mktemp -d "${TMPDIR:-/tmp}/evictd-demo.XXXXXX") || exit 1
mkdir "$SB_CG" || { rm -rf "$WORK"; exit 1; }
if [ $STOPPING = yes ]; then rmdir "$SB_CG"; rm -rf "$WORK"; exit 0; fi
mode="cgroup v2"; [ "$CG2" = /sys/fs/cgroup/unified ] && mode="cgroup v2, hybrid layout"

echo "evictd demonstration: the real daemon, not in dry-run, on a throwaway node (Ctrl-C stops it and removes everything)"
echo "  sandbox: cgroup $SB_CG ($mode), directory $WORK"
echo "  confinement: evictd runs in its own PID namespace (it can signal only the sandbox's processes) and mount"
echo "  namespace (the sandbox subtree is the only cgroup file system it can reach), without CAP_SYS_ADMIN"

# In the background, so that this script takes SIGINT (Ctrl-C) and hands it on as SIGTERM to the
# inside; the inside and everything it starts ignore SIGINT (asynchronous commands of a script),
# so Ctrl-C stops the demonstration once, in order.
INNER_FLAGS=()
[ $EXIT_AFTER = yes ] && INNER_FLAGS+=(--exit-after-reclaim)
[ $VERBOSE = yes ] && INNER_FLAGS+=(--verbose)
# setpriv --pdeathsig: should this script die without its teardown (SIGKILL), unshare dies with it,
# and --kill-child takes the namespace's pid 1, hence every process of the namespace, along.
setpriv --pdeathsig KILL -- unshare --pid --fork --kill-child --mount --mount-proc --propagation private -- \
	bash "$0" --inner "${INNER_FLAGS[@]}" \
	"$EVICTD" "$WORK" "$SB_CG" < /dev/null &
UPID=$!
inner_pid() {	# the inside's pid 1, as this namespace sees it: unshare's child
	local f l
	for f in /proc/[0-9]*/stat; do
		read -r l 2> /dev/null < "$f" || continue
		l=${l##*) }
		set -- $l   # split on purpose: the fields of /proc/PID/stat after the command name
		[ "$2" = "$UPID" ] && { f=${f#/proc/}; echo "${f%/stat}"; return 0; }
	done
	return 1
}
IPID= PIDNS= WDPID=
# Ctrl-C at any moment stops the demonstration within 2 s: the inside is asked (SIGTERM: its
# teardown says how evictd ended), and a watchdog takes the whole namespace down with SIGKILL
# (its pid 1 killed, the kernel kills every process of the namespace) should the inside not be done in STOP_GRACE
# seconds — still starting and without its handler, or slow on a loaded machine. What the
# inside could not remove, the teardown below does, and checks.
STOP_GRACE=1.0
stop() {
	[ -n "$IPID" ] || IPID=$(inner_pid)
	[ -n "$IPID" ] && kill -TERM "$IPID" 2> /dev/null
	[ $STOPPING = yes ] && [ -n "$WDPID" ] && return
	STOPPING=yes
	# SIGKILL to the namespace's pid 1 (unshare, still alive, reaps it: no orphan is left for the
	# host's init to reap), to unshare should pid 1 not be known.
	(trap 'kill "$s"; wait "$s"; exit 3' TERM; sleep "$STOP_GRACE" & s=$!; wait $s
	 kill -KILL "${IPID:-$UPID}") 2> /dev/null < /dev/null &
	WDPID=$!
}
trap stop INT TERM HUP
for _ in $(seq 100); do [ $STOPPING = no ] || break; IPID=$(inner_pid) && break; sleep 0.02; done
[ -n "$IPID" ] && PIDNS=$(readlink "/proc/$IPID/ns/pid" 2> /dev/null)
while :; do
	# pid 1 of a namespace drops a signal it has no handler for yet: a stop asked for while the
	# inside was still starting is asked again (every 0.2 s) until it ends or the watchdog fires.
	[ $STOPPING = yes ] && stop
	if [ $STOPPING = yes ]; then
		sleep 0.2 & wait $!
		kill -0 "$UPID" 2> /dev/null && continue
	fi
	wait "$UPID"; rc=$?
	if [ $rc -gt 128 ] && kill -0 "$UPID" 2> /dev/null; then continue; fi
	break
done
trap - INT TERM HUP
if [ -n "$WDPID" ]; then
	kill "$WDPID" 2> /dev/null
	wait "$WDPID" 2> /dev/null
	fired=$?
	# Exit 3: stopped before it fired. Fired, the status is unshare's for a pid 1 killed by
	# SIGKILL (137, or 1 where unshare fails to pass the signal on: "sigprocmask unblock failed").
	if [ $fired != 3 ] && [ $rc != 0 ]; then
		echo "stopping: the demonstration's namespace did not end within ${STOP_GRACE}s of Ctrl-C: killed"
		rc=0
	fi
fi

# ---- teardown outside, and the check that nothing is left --------------------------------------
left=()
for _ in $(seq 50); do   # the namespace's processes are killed with its pid 1; reaping takes a moment
	find "$SB_CG" -depth -type d -exec rmdir {} + 2> /dev/null
	[ -d "$SB_CG" ] || break
	sleep 0.1
done
[ -d "$SB_CG" ] && left+=("cgroup $SB_CG")
if [ -n "$PIDNS" ]; then
	# One ls for all: a readlink per process takes seconds on a loaded machine. The namespace's
	# processes are killed with its pid 1; a loaded machine may take a moment to reap them.
	ns_pids() { ls -l /proc/[0-9]*/ns/pid 2> /dev/null | grep -F -- "-> $PIDNS" | sed 's,.*/proc/\([0-9]*\)/ns/pid.*,\1,'; }
	for _ in $(seq 10); do [ -z "$(ns_pids)" ] && break; sleep 0.05; done
	while read -r f; do
		left+=("process $f")
	done < <(ns_pids)
fi
if awk -v w="$WORK" 'index($5, w) == 1 || $0 ~ /evictd-demo-nodefs/ { f = 1 } END { exit !f }' /proc/self/mountinfo; then
	left+=("a mount under $WORK")
else
	rm -rf --one-file-system "$WORK"
fi
[ -e "$WORK" ] && left+=("directory $WORK")
if [ ${#left[@]} -gt 0 ]; then
	printf 'demo: LEFT BEHIND: %s\n' "${left[@]}"
	exit 1
fi
echo "teardown checked: no cgroup (${SB_CG##*/} is gone), no mount, no process (the demo's PID namespace is empty) left"
exit $rc
