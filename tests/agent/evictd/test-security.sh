#!/bin/bash
# Security properties of evictd on fixture trees (`--once --json --dry-run`):
#   - a tenant who can write a metadata file that is not root-owned, or group/other-writable, or
#     who can plant a symlink or a hard link to another pod's descriptor, or rename descriptors in
#     a writable metadata directory, cannot raise its priority;
#   - a tenant who can create cgroups inside its own pod cgroup cannot make a fake pod appear
#     (e.g. one carrying another pod's UID and so its metadata);
#   - evictd never follows symlinks out of the cgroup root (neither a pod directory nor a file);
# The attack's goal in each case: keep default/web-1 (priority 0, 1.2Gi over its request) from
# being evicted first. A control case shows that the same descriptor, when trusted, would succeed,
# so every check here can fail. The exec action's "no shell, one argv entry per placeholder" is
# covered by the fuzz target tests/fuzz/fuzz-exec-argv.c (replayed by tests/agent/common/test-fuzz-replay)
# and end to end by tests/agent/act/test-evictor.c (a recorder command receiving hostile names).
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"
once_env "needs root (root-owned descriptors, chown)"
WEB=a1b2c3d4-0000-4000-8000-00000000000a   # default/web-1, the tenant
DB=a1b2c3d4-0000-4000-8000-00000000000c    # prod/db-0, priority 1000000 via high-priority

fixture_base
HIGH='[pod]
namespace = default
name = web-1
priority-class = high-priority
memory-request = 4Gi
'
web_first() { js "ev[:1] == ['default/web-1'] or ev[:1] == ['$WEB']"; }

tree control; printf '%s' "$HIGH" >"$D"; run
ok "control: a trusted high-priority descriptor does protect web-1 (the attack is meaningful)" \
	js "'default/web-1' not in ev[:2] and rank['$WEB']['priority'] == 1000000"

attack() {	# attack NAME SHELL: web-1 must still be first, with priority 0, and a warning for the file
	tree "$1"; eval "$2"; run; local rc=$?
	ok "$1: answers (exit $rc)" test $rc -eq 0
	ok "$1: priority not raised, web-1 still evicted first" bash -c "$(declare -f js web_first); T='$T' WEB='$WEB' web_first && T='$T' js \"rank['$WEB']['priority'] == 0\""
	ok "$1: warning names the descriptor" grep -q "$WEB.conf" "$T/err"
}
attack "descriptor owned by the tenant" 'printf "%s" "$HIGH" >"$D"; chown 65534 "$D"'
attack "descriptor group-writable" 'printf "%s" "$HIGH" >"$D"; chmod 0664 "$D"'
attack "descriptor world-writable" 'printf "%s" "$HIGH" >"$D"; chmod 0666 "$D"'
attack "descriptor symlinked to a root-owned high-priority file" 'printf "%s" "$HIGH" >"$T/high.conf"; rm "$D"; ln -s "$T/high.conf" "$D"'
attack "descriptor hard-linked to a root-owned high-priority file" 'printf "%s" "$HIGH" >"$T/high.conf"; rm "$D"; ln "$T/high.conf" "$D"'

# A metadata directory anyone can write lets a tenant rename another pod's (root-owned, 0644)
# descriptor over its own. Such a directory must not be trusted (finding agent-metadir-trust),
# nor one whose parent others can write (they could swap the whole directory), sticky or not for
# the directory itself; a sticky ancestor (/tmp, where every tree here lives) is fine.
metadir_attack() {	# metadir_attack NAME SHELL REASON
	tree "$1"; mv "$T/pods/$DB.conf" "$D"; eval "$2"; run; local rc=$?
	ok "$1: answers (exit $rc)" test $rc -eq 0
	ok "$1: a renamed descriptor does not raise web-1's priority" js "rank['$WEB']['priority'] == 0 and all(p['pod'] == p['uid'] for p in mem)"
	ok "$1: warning says the directory is not trusted and why" \
		grep -qE "metadata directory .*pods is not trusted: .*$3" "$T/err"
	ok "$1: said once, not per pod" test "$(grep -c 'not trusted' "$T/err")" -eq 1
}
metadir_attack "writable metadata directory" 'chmod 0777 "$T/pods"' "writable by others"
metadir_attack "sticky world-writable metadata directory" 'chmod 1777 "$T/pods"' "writable by others"
metadir_attack "group-writable metadata directory" 'chmod 0775 "$T/pods"' "writable by its group"
metadir_attack "metadata directory owned by a tenant" 'chown 65534 "$T/pods"' "owned by uid 65534"
metadir_attack "metadata directory in a writable parent" 'chmod 0777 "$T"' "ancestor .*writable by others"
tree "trusted metadata directory"; mv "$T/pods/$DB.conf" "$D"; run
ok "control: the same rename in a root-only directory is what root did: trusted" \
	js "rank['$WEB']['priority'] == 1000000"

# Nested cgroups a tenant creates inside its own pod (delegation) are not pods.
tree "fake pod inside a pod"
fake=$P/kubepods-burstable-pod${DB//-/_}.slice
mkdir -p "$fake"; cp "$P"/memory.* "$P/cgroup.procs" "$fake/"; echo 1 >"$fake/memory.current"
run
ok "fake pod inside a pod: answers" test $? -eq 0
ok "fake pod inside a pod: not discovered (6 pods, db-0 from its real cgroup)" \
	js "len(mem) == 6 and rank['$DB']['cgroup'] == 'kubepods.slice/kubepods-pod${DB//-/_}.slice' and ev[0] == 'default/web-1'"
tree "fake pod inside a Guaranteed pod"
G=$T/root/kubepods.slice/kubepods-podffffffff_0000_4000_8000_000000000001.slice
mkdir -p "$G/kubepods-burstable-pod${DB//-/_}.slice"
cp "$P"/memory.* "$P/cgroup.procs" "$G/"; cp "$P"/memory.* "$G/kubepods-burstable-pod${DB//-/_}.slice/"
run
ok "fake pod inside a Guaranteed pod: answers" test $? -eq 0
ok "fake pod inside a Guaranteed pod: only the outer pod is new" \
	js "len(mem) == 7 and rank['$DB']['cgroup'] == 'kubepods.slice/kubepods-pod${DB//-/_}.slice' and 'ffffffff-0000-4000-8000-000000000001' in rank"

# Symlinks out of the cgroup root.
tree "symlinked pod directory"
mkdir "$T/outside"; cp -a "$P/." "$T/outside/"
ln -s "$T/outside" "$T/root/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podeeeeeeee_0000_4000_8000_000000000099.slice"
run
ok "symlinked pod directory: answers" test $? -eq 0
ok "symlinked pod directory: not followed out of the cgroup root" \
	js "'eeeeeeee-0000-4000-8000-000000000099' not in rank and len(mem) == 6"
ok "symlinked pod directory: a warning names the link" \
	grep -q "Not following symbolic link kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podeeeeeeee" "$T/err"
tree "symlinked qos directory"
mv "$T/root/kubepods.slice/kubepods-besteffort.slice" "$T/outside-qos"
ln -s "$T/outside-qos" "$T/root/kubepods.slice/kubepods-besteffort.slice"
run
ok "symlinked qos directory: answers" test $? -eq 0
ok "symlinked qos directory: pods behind it are not read" \
	js "'a1b2c3d4-0000-4000-8000-00000000000b' not in rank"
ok "symlinked qos directory: a warning names the link" \
	grep -q "Not following symbolic link kubepods.slice/kubepods-besteffort.slice under" "$T/err"
tree "symlinked kubepods.slice"
mv "$T/root/kubepods.slice" "$T/outside-kubepods"; ln -s "$T/outside-kubepods" "$T/root/kubepods.slice"
run
ok "symlinked kubepods.slice: answers" test $? -eq 0
ok "symlinked kubepods.slice: no pod read, nothing evicted, allocatable not read through it" \
	js "len(mem) == 0 and ev == [] and [s for s in d['signals'] if s['signal'] == 'allocatableMemory.available' and s['available'] is None]"
ok "symlinked kubepods.slice: a warning names the link" grep -q "Not following symbolic link kubepods.slice under" "$T/err"
tree "symlinked memory.current"
rm "$P/memory.current"; echo 1 >"$T/one"; ln -s "$T/one" "$P/memory.current"
run
ok "symlinked memory.current: not read through the link (usage unknown, web-1 not evicted)" \
	js "rank['$WEB']['usage_bytes'] is None and 'default/web-1' not in ev"

done_testing
