#!/bin/bash
# Fault injection on fixture cgroup trees, through `evictd --once --json --dry-run`: files that
# vanish, are truncated, unreadable or full of garbage; metadata files that are huge, binary,
# symlinks, FIFOs or owned by another user; a configuration that is a FIFO; a pod cgroup that
# disappears while evictd reads it. Each must give: an answer (no crash, no hang), no wrong
# eviction (a pod whose usage cannot be read is never chosen; the others still are), and a clear
# message. Daemon-level faults (signals, journal, status directory) are in test-faults-daemon.sh.
#
# Findings fixed here (tests/fuzz/FINDINGS.md): config-fifo, agent-fifo-hang, agent-silent-stats.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"
once_env "descriptors must be root-owned to be trusted and chown needs root"
WEB=a1b2c3d4-0000-4000-8000-00000000000a   # default/web-1: first to go in the baseline

fixture_base
# Random inputs come from a fixed seed, so a failure can be replayed; the seed is in the names of
# the checks that use it (EVICTD_TEST_SEED=N picks another).
SEED=${EVICTD_TEST_SEED:-24}
random_bytes() {	# random_bytes STREAM COUNT: COUNT bytes from SEED's stream STREAM
	python3 -c 'import random, sys
r = random.Random(int(sys.argv[1]) * 1000 + int(sys.argv[2]))
sys.stdout.buffer.write(bytes(r.getrandbits(8) for _ in range(int(sys.argv[3]))))' "$SEED" "$1" "$2"
}
logged_pod_file() {	# logged_pod_file FILE [REASON]: a warning line names web-1's UID, FILE and REASON
	grep "warning" "$T/err" | grep -F -- "$WEB" | grep -F -- " $1 " | grep -qF -- "${2:-}"
}

tree baseline; run
ok "baseline: answers" test $? -eq 0
ok "baseline: web-1, batch-1, api-0 evicted" js 'ev == ["default/web-1", "default/batch-1", "prod/api-0"]'

# --- pod statistics -------------------------------------------------------------------------
stat_fault() {	# stat_fault NAME SHELL FILE: web-1's FILE broken -> unmeasured, not evicted, others are
	local name=$1
	tree "$name"; eval "$2"; run; local rc=$?
	ok "$name: answers (exit $rc)" test $rc -eq 0
	[ $rc -eq 0 ] || return
	ok "$name: web-1 not evicted, batch-1 still is" js '"default/web-1" not in ev and "default/batch-1" in ev'
	ok "$name: web-1 listed as unmeasured" js "rank['$WEB']['usage_bytes'] is None and not rank['$WEB']['candidate']"
	ok "$name: a warning names the pod and $3${4:+ ($4)}" logged_pod_file "$3" "${4:-}"
	ok "$name: said once per pod and file" test "$(grep -F -- "$WEB" "$T/err" | grep -cF -- " $3 ")" -eq 1
}
stat_fault "memory.current missing (pod vanishing mid-read)" 'rm "$P/memory.current"' "memory.current" "it is missing"
stat_fault "memory.current garbage" 'echo abc >"$P/memory.current"' "memory.current"
stat_fault "memory.current negative" 'echo -5 >"$P/memory.current"' "memory.current"
stat_fault "memory.current overflows int64" 'echo 99999999999999999999999 >"$P/memory.current"' "memory.current"
stat_fault "memory.current empty" ': >"$P/memory.current"' "memory.current"
stat_fault "memory.current trailing junk" 'echo 12abc >"$P/memory.current"' "memory.current"
stat_fault "memory.current a symlink" 'rm "$P/memory.current"; echo 1 >"$T/one"; ln -s "$T/one" "$P/memory.current"' \
	"memory.current" "it is a symbolic link"
stat_fault "memory.stat unreadable (a directory)" 'rm "$P/memory.stat"; mkdir "$P/memory.stat"' \
	"memory.stat" "it is not a regular file"
stat_fault "memory.stat truncated" 'head -c 7 "$P/memory.stat" >"$T/x"; mv "$T/x" "$P/memory.stat"' \
	"memory.stat" "it has no inactive_file line"
stat_fault "pod cgroup emptied" 'rm -rf "$P"/*' "memory.current"

tree "cpu.stat garbage"; printf 'usage_usec x\nuser_usec\n' >"$P/cpu.stat"; run
ok "cpu.stat garbage: answers" test $? -eq 0
ok "cpu.stat garbage: memory decision unchanged" js 'ev == ["default/web-1", "default/batch-1", "prod/api-0"]'
tree "cpu.stat truncated"; : >"$P/cpu.stat"; run
ok "cpu.stat truncated: answers" test $? -eq 0

for f in memory.current memory.stat; do
	tree "$f FIFO"; rm "$P/$f"; mkfifo "$P/$f"; run; rc=$?
	ok "$f is a FIFO: answers without hanging (exit $rc)" test $rc -eq 0
	ok "$f is a FIFO: web-1 unmeasured and not evicted" js "rank['$WEB']['usage_bytes'] is None and 'default/web-1' not in ev"
	ok "$f is a FIFO: the warning says so" logged_pod_file "$f" "it is not a regular file"
done

# --- node signals ---------------------------------------------------------------------------
node_fault() {	# node_fault NAME SHELL: memory.available unknown -> no memory eviction, reason given
	tree "$1"; eval "$2"; run; local rc=$?
	ok "$1: answers (exit $rc)" test $rc -eq 0
	[ $rc -eq 0 ] || return
	ok "$1: nothing evicted on an unknown signal" js 'ev == []'
	ok "$1: memory.available unavailable with a reason" \
		js '[s for s in d["signals"] if s["signal"] == "memory.available" and s["available"] is None and s.get("unavailable")]'
}
node_fault "meminfo garbage" 'sed -i "s/^MemTotal:.*/MemTotal: lots kB/" "$T/proc/meminfo"'
node_fault "meminfo missing" 'rm "$T/proc/meminfo"'
node_fault "root memory.stat missing" 'rm "$T/root/memory.stat"'

# --- pod metadata files ---------------------------------------------------------------------
# A bad descriptor is ignored with a warning naming the file; the pod falls back to defaults
# (named by its UID, priority 0), keeps being ranked, and nothing blocks.
meta_fault() {	# meta_fault NAME SHELL REASON-REGEX
	tree "$1"; eval "$2"; run; local rc=$?
	ok "$1: answers (exit $rc)" test $rc -eq 0
	[ $rc -eq 0 ] || return
	ok "$1: warning names the file and why" grep -qE "$WEB\\.conf.*($3)" "$T/err"
	ok "$1: pod falls back to defaults and is still ranked" js "rank['$WEB']['pod'] == '$WEB' and rank['$WEB']['priority'] == 0"
}
meta_fault "descriptor huge" 'head -c 20000000 /dev/zero | tr "\0" " " >"$D"' "larger than"
meta_fault "descriptor binary (seed $SEED)" 'random_bytes 1 3000 >"$D"' "NUL|line|invalid|syntax"
meta_fault "descriptor a symlink" 'mv "$D" "$T/elsewhere.conf"; ln -s "$T/elsewhere.conf" "$D"' "symbolic link"
meta_fault "descriptor a FIFO" 'rm "$D"; mkfifo "$D"' "not a regular file"
meta_fault "descriptor owned by another user" 'chown 65534 "$D"' "owned by uid 65534"
meta_fault "descriptor a directory" 'rm "$D"; mkdir "$D"' "not a regular file"

# --- configuration --------------------------------------------------------------------------
tree "config FIFO"; rm "$T/evictd.conf"; mkfifo "$T/evictd.conf"; run; rc=$?
ok "configuration file is a FIFO: refused without hanging (exit $rc)" test $rc -ne 124 -a $rc -ne 0
ok "configuration file is a FIFO: error names the file" logged "evictd.conf: not a regular file"
tree "drop-in FIFO"; mkdir "$T/evictd.conf.d"; mkfifo "$T/evictd.conf.d/50-x.conf"; run; rc=$?
ok "drop-in is a FIFO: refused without hanging (exit $rc)" test $rc -ne 124 -a $rc -ne 0
ok "drop-in is a FIFO: error names the drop-in" logged "50-x.conf: not a regular file"
tree "config symlink"; mv "$T/evictd.conf" "$T/real.conf"; ln -s "$T/real.conf" "$T/evictd.conf"; run; rc=$?
ok "configuration file is a symlink to a regular file: accepted (config management)" test $rc -eq 0
tree "config huge"; { cat "$T/evictd.conf"; head -c 2000000 /dev/zero | tr '\0' '\n'; } >"$T/x"; mv "$T/x" "$T/evictd.conf"
run; rc=$?
ok "configuration larger than 1 MiB: refused with the size (exit $rc)" \
	bash -c "[ $rc -ne 0 ] && grep -q 'evictd.conf: larger than 1048576 bytes' '$T/err'"
tree "config garbage"; random_bytes 2 2000 >"$T/evictd.conf"; run; rc=$?
ok "configuration garbage (seed $SEED): refused with file:line (exit $rc)" bash -c "[ $rc -ne 0 ] && grep -q 'evictd.conf:[0-9]' '$T/err'"

# --- a pod cgroup disappearing while evictd reads it (race, 40 runs) --------------------------
tree race
cp -a "$P" "$T/saved"
( while :; do rm -rf "$P"; cp -a "$T/saved" "$P"; done ) 2>/dev/null &
racer=$!
bad=0
for i in $(seq 40); do
	run || { bad=1; echo "# run $i: exit $?"; tail -3 "$T/err"; break; }
	js '"default/batch-1" in ev and all(rank[e["uid"]]["usage_bytes"] is not None for e in d["evict"])' ||
		{ bad=1; echo "# run $i: wrong decision"; cat "$T/out.json"; break; }
done
kill $racer; wait $racer 2>/dev/null
ok "pod cgroup vanishing during 40 scans: always answers, never evicts an unmeasured pod" test $bad -eq 0

done_testing
