#!/bin/bash
# tests/fresh/run.sh — `make fresh`: the README's two commands on a bare Debian 12, typed by a new
# user in a fresh clone, as root and as an ordinary user.
#
# The machine is a copy of `mmdebstrap --variant=minbase` + git + ca-certificates from this
# machine's apt sources (tests/fresh/mkrootfs.sh, cached per day and recipe): no make, no
# compiler, no sudo. The tree tested is a `git clone` of this repository's HEAD (uncommitted
# changes are not part of it). Each command runs in a chroot inside a private mount and pid
# namespace (/proc, /sys, /dev, a tmpfs /run): its mounts and processes end with it.
#
# The commands are read from the README's "## The two commands" block, in its order: the first
# runs evictd, is stopped with SIGINT FRESH_RUN_SECONDS after an evictd process appeared and must
# exit 0; the second runs every test (it must exit 0, end with "N passed, 0 failed, N skipped",
# and skip only what EXPECTED_SKIPS_ROOT/_USER below list). The machine has no pods, so the run
# command gives, as root, the demonstration (scripts/demo.sh: the low-priority pod evicted with its
# reason, the summary, and after SIGINT the check that nothing is left), and as a user the one line
# saying why there is none, then evictd's "monitoring ..." line. Stages, each timed:
#   1. ordinary user, no packages: both commands print the exact `apt-get ...` line (no sudo)
#      and exit non-zero
#   2. root: run command (the demonstration), then test command (they install what they need)
#   3. root: the apt-get line stage 1 printed, verbatim, succeeds
#   4. ordinary user (packages now present, own clone): run command (the one-line reason, then
#      dry-run monitoring), then test command
#   5. nothing left behind: no process in the machine after each command
# Exit status: 0 every stage passed; 1 one failed (its log is shown); 77 this machine cannot do it
# (not root, no mmdebstrap, no mirror) — the reason is printed. Logs stay in build/fresh/.
#
# Environment:
#   FRESH_CACHE        root tree cache (default: ${XDG_CACHE_HOME:-$HOME/.cache}/evictd-fresh)
#   FRESH_RUN_SECONDS  how long the run command runs once evictd has started (default 20)
#   FRESH_RUN_EXPECT   what the user's run must print after the reason (extended regex, any case;
#                      default: monitoring)
#   FRESH_TIMEOUT      time limit of each command, installs and builds included (default 1800)
#   FRESH_KEEP=1       keep the machine's directory (printed) instead of removing it
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
RUN_SECONDS=${FRESH_RUN_SECONDS:-20}
RUN_EXPECT=${FRESH_RUN_EXPECT:-monitoring}
TIMEOUT=${FRESH_TIMEOUT:-1800}
DEV_UID=1000
DEV=dev
SYS_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin   # Debian's, for root
USER_PATH=/usr/local/bin:/usr/bin:/bin                                # and for other users

# ---- inside the namespaces (the script runs itself through unshare) ----------------------------
# --inside MACHINE UID HOME LOG MODE COMMAND: MODE "wait" runs COMMAND to its end and exits with
# its status; MODE "run" stops it with SIGINT (to its process group, as Ctrl-C does)
# RUN_SECONDS after an evictd process appeared, and exits with its status.
if [ "${1:-}" = --inside ]; then
	M=$2 uid=$3 home=$4 log=$5 mode=$6 cmd=$7
	# The machine's / must be a mount point, as on a real one (`unshare -m` needs it).
	mount --bind "$M" "$M"
	mount -t proc proc "$M/proc"
	mount --rbind /sys "$M/sys"
	mount --rbind /dev "$M/dev"
	mount -t tmpfs -o mode=755,nosuid,nodev tmpfs "$M/run"
	mkdir -m 1777 "$M/run/lock"
	path=$USER_PATH name=$DEV
	[ "$uid" = 0 ] && path=$SYS_PATH name=root
	# As typed at a shell prompt: the command (not a shell around it) is the foreground job.
	[ "$mode" = run ] && cmd="exec $cmd"
	in_machine=(chroot --userspec="$uid:$uid" --groups="$uid" "$M"
		env -i HOME="$home" USER="$name" LOGNAME="$name" PATH="$path" TERM=dumb SHELL=/bin/sh
		sh -c "cd && cd evictd && $cmd")
	mounts_before=$(awk '{ print $5 }' /proc/self/mountinfo | sort)
	set +e
	if [ "$mode" = wait ]; then
		timeout -k 10 "$TIMEOUT" "${in_machine[@]}" > "$log" 2>&1 < /dev/null
		rc=$?
	else
		set -m   # the command gets its own process group, like a terminal's foreground job
		"${in_machine[@]}" > "$log" 2>&1 < /dev/null &
		job=$!
		started=
		for ((i = 0; i < TIMEOUT; i++)); do
			kill -0 "$job" 2> /dev/null || break
			if [ -z "$started" ] && grep -qx evictd "$M"/proc/[0-9]*/comm 2> /dev/null; then
				started=$i
				echo "fresh: evictd started after ${i}s; SIGINT in ${RUN_SECONDS}s" >> "$log.note"
			fi
			[ -n "$started" ] && [ $((i - started)) -ge "$RUN_SECONDS" ] && break
			sleep 1
		done
		kill -INT -- "-$job" 2> /dev/null
		for ((i = 0; i < 100; i++)); do kill -0 "$job" 2> /dev/null || break; sleep 0.1; done
		kill -KILL -- "-$job" 2> /dev/null && echo "fresh: still running 10s after SIGINT: killed" >> "$log.note"
		wait "$job"
		rc=$?
		[ -n "$started" ] || echo "fresh: evictd never started" >> "$log.note"
	fi
	set -e
	# Nothing may outlive the command: pid 1 here is this script.
	left=0
	for p in "$M"/proc/[0-9]*; do
		p=${p##*/}
		[ "$p" = 1 ] || [ "$p" = "$BASHPID" ] && continue
		c=$(tr '\0' ' ' < "$M/proc/$p/cmdline" 2> /dev/null) || continue
		[ -n "$c" ] || continue
		echo "fresh: left behind: process $p: $c" >> "$log.note"
		left=1
	done
	new_mounts=$(comm -13 <(echo "$mounts_before") <(awk '{ print $5 }' /proc/self/mountinfo | sort))
	if [ -n "$new_mounts" ]; then
		echo "$new_mounts" | sed 's/^/fresh: left behind: mount /' >> "$log.note"
		left=1
	fi
	[ $left = 0 ] || [ "$rc" != 0 ] || rc=99
	exit "$rc"
fi

# ---- outside -------------------------------------------------------------------------------------
say() { echo "fresh: $*"; }
cannot() { echo "fresh: SKIP: $* — the fresh-machine test cannot run here"; exit 77; }
since() { echo $(($(date +%s) - $1)); }

[ "$(id -u)" = 0 ] || cannot "it needs root (mmdebstrap, chroot, namespaces)"
for t in unshare chroot git tar; do command -v "$t" > /dev/null || cannot "missing tool: $t"; done

# The README's two commands, in its order.
mapfile -t CMDS < <(awk '/^## The two commands/ { s = 1; next } s && /^```sh$/ { c = 1; next }
	c && /^```$/ { exit } c { sub(/[ \t]+#.*/, ""); if (NF) print }' "$ROOT/README.md")
[ ${#CMDS[@]} = 2 ] || { say "ERROR: README.md's \"## The two commands\" block must hold two commands (found ${#CMDS[@]})"; exit 1; }
RUN_CMD=${CMDS[0]} CHECK_CMD=${CMDS[1]}
say "run command: $RUN_CMD    test command: $CHECK_CMD"

LOGS=$ROOT/build/fresh
rm -rf "$LOGS"
mkdir -p "$LOGS"
T_ALL=$(date +%s)

# ---- the machine -----------------------------------------------------------------------------
t=$(date +%s)
. "$HERE/machine.sh"
machine_unpack fresh "${FRESH_KEEP:-}"
# An ordinary user, as the installer creates one (useradd is not needed for that).
echo "$DEV:x:$DEV_UID:$DEV_UID:$DEV:/home/$DEV:/bin/bash" >> "$M/etc/passwd"
echo "$DEV:x:$DEV_UID:" >> "$M/etc/group"
echo "$DEV:*:19000:0:99999:7:::" >> "$M/etc/shadow"
install -d -m 755 -o "$DEV_UID" -g "$DEV_UID" "$M/home/$DEV"
dirty=$(git -C "$ROOT" status --porcelain --untracked-files=no | head -n1)
[ -z "$dirty" ] || say "note: uncommitted changes are not tested (the machine gets a clone of HEAD)"
git clone -q --no-hardlinks "$ROOT" "$M/root/evictd"
git clone -q --no-hardlinks "$ROOT" "$M/home/$DEV/evictd"
chown -R "$DEV_UID:$DEV_UID" "$M/home/$DEV/evictd"
say "machine ready in $(since "$t")s: $TARBALL, clone of $(git -C "$ROOT" rev-parse --short HEAD)"

# ---- stages ----------------------------------------------------------------------------------
failed=0
TIMES=()
# stage NAME UID MODE COMMAND CHECK...: runs COMMAND in the machine, then CHECK (a function
# given the log file); prints one line, and the log when it failed.
stage() {
	local name=$1 uid=$2 mode=$3 cmd=$4 home=/root log rc t0 why=""
	shift 4
	[ "$uid" = 0 ] || home=/home/$DEV
	log=$LOGS/$(echo "$name" | tr -c 'a-z0-9\n' '-').log
	t0=$(date +%s)
	set +e
	# In the foreground: an asynchronous command would start with SIGINT ignored, and evictd with
	# it. --kill-child: when unshare dies (Ctrl-C), so does the namespace's pid 1, and with it
	# everything in the machine (pid 1 of a pid namespace ignores SIGTERM from outside).
	unshare --mount --pid --fork --kill-child --propagation private -- \
		"$0" --inside "$M" "$uid" "$home" "$log" "$mode" "$cmd"
	rc=$?
	set -e
	if [ -e "$log.note" ]; then cat "$log.note" >> "$log"; rm -f "$log.note"; fi
	WHY=
	if [ $rc = 99 ]; then
		WHY="something was left behind"
	elif ! "$@" "$log" "$rc"; then
		WHY=${WHY:-failed}
	fi
	why=$WHY
	TIMES+=("$(printf '%5ss  %s' "$(since "$t0")" "$name")")
	if [ -z "$why" ]; then
		say "ok   $name ($(since "$t0")s)"
	else
		say "FAIL $name ($(since "$t0")s): $why (exit $rc); its log ($log):"
		tail -n 60 "$log" | sed 's/^/    /'
		failed=1
	fi
}

APT_RE='^apt-get update && apt-get install -y --no-install-recommends [a-z0-9]'
APT_LINE=
# Checks: CHECK LOG RC; on failure they set WHY and return 1.
prints_apt_line() {	# stopped with the install line, without installing anything
	if [ "$2" = 0 ]; then WHY="exited 0 without the packages"; return 1; fi
	if grep -q sudo "$1"; then WHY="the output mentions sudo"; return 1; fi
	if [ "$(grep -cE "$APT_RE" "$1")" != 1 ]; then WHY="not exactly one '$APT_RE' line"; return 1; fi
	APT_LINE=$(grep -E "$APT_RE" "$1")
}
monitored() {	# evictd said what it monitors, and Ctrl-C ended it cleanly
	if grep -q '^fresh: evictd never started' "$1"; then WHY="evictd never started"; return 1; fi
	if ! grep -qiE "$RUN_EXPECT" "$1"; then WHY="evictd printed no line matching '$RUN_EXPECT'"; return 1; fi
	if [ "$2" != 0 ]; then WHY="exit status $2 after SIGINT, not 0"; return 1; fi
}
demonstrated() {	# the demonstration evicted the right pod, and Ctrl-C removed everything
	if grep -q '^fresh: evictd never started' "$1"; then WHY="evictd never started"; return 1; fi
	if ! grep -q '^run: no pod cgroups on this machine: running the demonstration' "$1"; then
		WHY="./run did not choose the demonstration"; return 1
	fi
	if ! grep -qE 'evictd: warning: Evicting batch/report-builder \(priority 0\): nodefs\.available .* exceeds ephemeral-storage request' "$1"; then
		WHY="evictd did not evict batch/report-builder with its reason"; return 1
	fi
	if ! grep -qE '^  reclaim: nodefs\.available ' "$1"; then WHY="no reclaim line"; return 1; fi
	if ! grep -qE '^teardown checked: no cgroup .* no mount, no process' "$1"; then
		WHY="no 'teardown checked' line after SIGINT"; return 1
	fi
	if [ "$2" != 0 ]; then WHY="exit status $2 after SIGINT, not 0"; return 1; fi
}
fell_back() {	# one line saying why there is no demonstration, then the monitoring
	if [ "$(grep -c '^run: no pod cgroups on this machine, and no demonstration: not root' "$1")" != 1 ]; then
		WHY="not exactly one line saying why there is no demonstration"; return 1
	fi
	monitored "$@"
}
# The skips each test command may report, as extended regexes over the reasons scripts/run-tests.sh
# prints ("SKIP FILE: skipped: REASON", "ok N - NAME # SKIP REASON", cmocka's "# skip NAME: REASON").
# As root: none but the documentation's (below). The test command installs every package the tests use (scripts/ensure-deps.sh
# check), and the machine has root, cgroup v2 (/sys) and mount namespaces; a skip there means a
# test lost its coverage. As an ordinary user: only what needs root (cgroups, mounts, namespaces,
# root-owned descriptors and spool records).
# Both: the documentation's commands that no development machine can run (tests/docs: a
# Kubernetes cluster, systemd as PID 1, a preemptd running against a cluster, a node's container
# runtime or a registry, the image build's tools, an install into /usr, or the run/test command
# itself).
EXPECTED_SKIPS_DOCS='needs (a cluster|kubectl and a cluster|evictd (running )?under systemd|preemptd (--shadow )?running|preemptd under systemd|kubectl, a cluster|containerd on (each|the) node|CRI-O or podman on the node|a registry the nodes pull from|root, mmdebstrap, umoci|root, and a kubeconfig|root on a systemd host|root on the node|make install|debhelper and lintian)|runs (evictd|preemptd) until Ctrl-C|runs the test suite this test is part of'
EXPECTED_SKIPS_ROOT=("$EXPECTED_SKIPS_DOCS")
EXPECTED_SKIPS_USER=(
	"$EXPECTED_SKIPS_DOCS"
	'needs root|not root'                         # said so by the test (the demonstration: "not root")
	'root-owned|root owns'                        # descriptors and spool records are trusted only then
	'Permission denied|Operation not permitted'   # creating cgroups, a private mount namespace
	'private mount namespace'                     # unshare -m as a user
)
# all_passed_as root|user LOG RC: exit 0, "N passed, 0 failed, N skipped", and every skip expected
all_passed_as() {
	local who=$1 log=$2 rc=$3 last re reasons unexpected n_cm n_why
	last=$(grep -v '^fresh: ' "$log" | tail -n1)
	if [ "$rc" != 0 ]; then WHY="exit status $rc"; return 1; fi
	if ! echo "$last" | grep -qE '^[0-9]+ passed, 0 failed, [0-9]+ skipped$'; then
		WHY="last line is not 'N passed, 0 failed, N skipped': $last"; return 1
	fi
	if [ "$who" = root ]; then re=$(IFS='|'; echo "${EXPECTED_SKIPS_ROOT[*]:-}")
	else re=$(IFS='|'; echo "${EXPECTED_SKIPS_USER[*]}"); fi
	reasons=$(sed -nE 's/^SKIP ([^:]*): (.*)/\1: \2/p; s/^ *(not )?ok [0-9]+ - (.*) # SKIP (.+)/\2: \3/p; s/^ *# skip (.*)/\1/p' "$log")
	if [ -n "$re" ]; then unexpected=$(echo "$reasons" | grep -vE "$re" | grep .)
	else unexpected=$(echo "$reasons" | grep .); fi
	# cmocka's own "# SKIP test_x" lines carry no reason: each must come with a "# skip" line
	n_cm=$(grep -cE '^ *(not )?ok [0-9]+ # SKIP' "$log")
	n_why=$(grep -cE '^ *# skip ' "$log")
	if [ -n "$unexpected" ] || [ "$n_cm" -gt "$n_why" ]; then
		WHY="unexpected skip(s) as $who: $(echo "$unexpected" | head -n 5 | tr '\n' ';')${n_cm:+ ($n_cm cmocka skips, $n_why with a reason)}"
		return 1
	fi
}
all_passed_root() { all_passed_as root "$@"; }
all_passed_user() { all_passed_as user "$@"; }
succeeded() { if [ "$2" != 0 ]; then WHY="exit status $2"; return 1; fi; }

stage "user, no packages: run command prints the apt-get line" "$DEV_UID" wait "$RUN_CMD" prints_apt_line
stage "user, no packages: test command prints the apt-get line" "$DEV_UID" wait "$CHECK_CMD" prints_apt_line
stage "root: run command (the demonstration)" 0 run "$RUN_CMD" demonstrated
stage "root: test command" 0 wait "$CHECK_CMD" all_passed_root
if [ -n "$APT_LINE" ]; then
	stage "root: the printed apt-get line, verbatim" 0 wait "$APT_LINE" succeeded
fi
stage "user: run command (the reason, then monitoring)" "$DEV_UID" run "$RUN_CMD" fell_back
stage "user: test command" "$DEV_UID" wait "$CHECK_CMD" all_passed_user

say "stage times:"
printf '    %s\n' "${TIMES[@]}"
say "total $(since "$T_ALL")s"
if [ $failed = 0 ]; then say "the README's two commands work on a bare Debian 12, as root and as a user"; fi
exit $failed
