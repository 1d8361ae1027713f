#!/bin/bash
# `evictd --once --json` on the fixture trees: the exact JSON shape of issue 5 and its values.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../lib-agent.sh"
once_env "descriptors must be root-owned to be trusted; run as root"
FX=$PWD/tests/fixtures/cgroup
for l in systemd cgroupfs; do cp -r "$FX/$l/pods" "$tmp/$l-pods"; chmod 0644 "$tmp/$l-pods"/*; done
fixture_conf "$tmp/evictd.conf"
once() { # once LAYOUT [ARGS...]: runs evictd --once on a fixture layout
	local l=$1; shift
	"$EVICTD" --once --config "$tmp/evictd.conf" --cgroup-root "$FX/$l/root" --proc-root "$FX/$l/proc" \
		--metadata-dir "$tmp/$l-pods" "$@"
}

check_systemd_json() {
	once systemd --json --dry-run >"$tmp/out.json" 2>"$tmp/err" || return 1
	python3 - "$tmp/out.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert set(d) >= {"signals", "conditions", "ranking", "evict"}, d.keys()
assert "memory" in d["cgroup"]["controllers"] and d["cgroup"]["mode"] == "directory", d["cgroup"]
sig = {s["signal"]: s for s in d["signals"]}
for s in d["signals"]:
    assert set(s) >= {"signal", "available", "capacity", "threshold", "met"}, s
    assert isinstance(s["met"], bool)
    for k in ("available", "capacity", "threshold"):
        assert s[k] is None or isinstance(s[k], int), (k, s)
m = sig["memory.available"]
assert m == {**m, "available": 80 << 20, "capacity": 8 << 30, "threshold": 100 << 20, "met": True}, m
assert sig["allocatableMemory.available"]["met"] is False
assert sig["pid.available"]["available"] == 62000 - 412 and sig["pid.available"]["threshold"] is None
assert d["conditions"] == ["MemoryPressure"], d["conditions"]
assert set(d["ranking"]) == {"memory", "pid", "disk", "inodes", "imagefs", "imagefs_inodes"}, d["ranking"].keys()
assert all(p["usage_bytes"] is None for p in d["ranking"]["imagefs"])
mem = d["ranking"]["memory"]
assert [p["pod"] for p in mem] == ["default/web-1", "default/batch-1", "prod/api-0", "kube-system/coredns",
                                   "default/cache", "prod/db-0"], [p["pod"] for p in mem]
for p in mem:
    assert set(p) >= {"pod", "uid", "priority", "usage_bytes", "request_bytes", "exceeds_requests"}, p
    assert isinstance(p["usage_bytes"], int) and isinstance(p["request_bytes"], int)
web = mem[0]
assert web["uid"] == "a1b2c3d4-0000-4000-8000-00000000000a" and web["priority"] == 0
assert web["request_bytes"] == 512 << 20 and web["exceeds_requests"] is True
assert mem[4]["exceeds_requests"] is False and mem[3]["candidate"] is False
assert [p["pod"] for p in d["ranking"]["pid"]][0] == "default/batch-1"
# 100Mi + 2Gi min reclaim - 80Mi: web-1 + batch-1 + api-0, immediately (hard)
ev = d["evict"]
assert [e["pod"] for e in ev] == ["default/web-1", "default/batch-1", "prod/api-0"], ev
for e in ev:
    assert set(e) >= {"pod", "uid", "signal", "grace_sec"} and e["signal"] == "memory.available" and e["grace_sec"] == 0
assert d["dry_run"] is True
PY
}

check_cgroupfs_json() {
	once cgroupfs --json >"$tmp/out2.json" 2>/dev/null || return 1
	python3 - "$tmp/out2.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
sig = {s["signal"]: s for s in d["signals"]}
a = sig["allocatableMemory.available"]
assert a["available"] == 50 << 20 and a["capacity"] == 6 << 30 and a["threshold"] == 100 << 20 and a["met"], a
assert sig["memory.available"]["met"] is False
names = [p["pod"] for p in d["ranking"]["memory"]]
# the pod without descriptor is named by its UID, with requests from memory.min
nodesc = [p for p in d["ranking"]["memory"] if p["uid"] == "11111111-2222-3333-4444-555555555555"][0]
assert nodesc["pod"] == "11111111-2222-3333-4444-555555555555" and nodesc["request_bytes"] == 256 << 20, nodesc
assert all(e["signal"] == "allocatableMemory.available" for e in d["evict"]) and d["evict"], d["evict"]
PY
}

check_text() {
	once systemd >"$tmp/out.txt" 2>/dev/null || return 1
	grep -q '^memory.available .* 80Mi .* 100Mi yes (hard)' "$tmp/out.txt" &&
		grep -q '^conditions: MemoryPressure' "$tmp/out.txt" &&
		grep -qx 'fall rates for 2 CPUs: memory 12Gi/s, pids 20000/s; disk 4Gi/s, inodes 100000/s' "$tmp/out.txt" &&
		grep -q 'default/web-1 .*working set 1.2Gi exceeds request 512Mi; priority 0' "$tmp/out.txt" &&
		grep -q 'default/web-1 (uid a1b2c3d4-0000-4000-8000-00000000000a) for memory.available (hard threshold, rank 1, grace 0s' "$tmp/out.txt"
}

# The fall-rate defaults follow the node's CPUs (proc-root/stat); a key still wins.
check_fall_rates() {
	cp -r "$FX/systemd/proc" "$tmp/proc64"
	{ echo 'cpu  1 2 3 4'; for i in $(seq 0 63); do echo "cpu$i 1 2 3 4"; done; echo 'intr 1 2 3'; } >"$tmp/proc64/stat"
	"$EVICTD" --once --json --config "$tmp/evictd.conf" --cgroup-root "$FX/systemd/root" --proc-root "$tmp/proc64" \
		--metadata-dir "$tmp/systemd-pods" >"$tmp/r64.json" 2>/dev/null || return 1
	cp "$tmp/evictd.conf" "$tmp/rate.conf"
	printf '[agent]\nmemory-max-rate = 1Gi\n' >>"$tmp/rate.conf"
	"$EVICTD" --once --json --config "$tmp/rate.conf" --cgroup-root "$FX/systemd/root" --proc-root "$tmp/proc64" \
		--metadata-dir "$tmp/systemd-pods" >"$tmp/rkey.json" 2>/dev/null || return 1
	python3 - "$tmp/r64.json" "$tmp/rkey.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["fall_rates"]
assert r == {"online_cpus": 64, "memory": 256 << 30, "memory_derived": True, "pid": 640000, "pid_derived": True,
             "disk": 4 << 30, "inodes": 100000}, r
k = json.load(open(sys.argv[2]))["fall_rates"]
assert k["memory"] == 1 << 30 and k["memory_derived"] is False and k["pid"] == 640000, k
PY
	# --dump-config shows the rates in force and where they come from
	"$EVICTD" --dump-config --config "$tmp/rate.conf" --proc-root "$tmp/proc64" >"$tmp/dump" 2>/dev/null &&
		grep -qE '^memory-max-rate = 1Gi/s +; .*rate\.conf:[0-9]+$' "$tmp/dump" &&
		grep -qE '^pid-max-rate = 640000/s \(for 64 CPUs\) +; default$' "$tmp/dump"
}

check_bad_config() {
	printf '[agent]\ninterval = 1s\nfrobnicate = yes\n' >"$tmp/bad.conf"
	"$EVICTD" --once --config "$tmp/bad.conf" >/dev/null 2>"$tmp/err"
	local rc=$?
	[ $rc -eq 1 ] && grep -q "bad.conf:3: unknown key \"frobnicate\"" "$tmp/err"
}

check_usage() {
	"$EVICTD" --once --bogus >/dev/null 2>&1; [ $? -eq 2 ] || return 1
	"$EVICTD" --json >/dev/null 2>&1; [ $? -eq 2 ]
}

# Per-pod nodefs usage: emptyDir volumes and logs in a kubelet tree built here.
make_kubelet_tree() {
	local k=$tmp/kubelet l=$tmp/logs a=a1b2c3d4-0000-4000-8000-00000000000a
	rm -rf "$k" "$l" "$tmp/disk-pods"
	mkdir -p "$k/pods/$a/volumes/kubernetes.io~empty-dir/data" "$l/default_web-1_$a/app" \
		"$k/pods/a1b2c3d4-0000-4000-8000-00000000000d/volumes/kubernetes.io~empty-dir/scratch" \
		"$l/default_renamed_a1b2c3d4-0000-4000-8000-00000000000f/app"
	head -c $((2 << 20)) /dev/urandom >"$k/pods/$a/volumes/kubernetes.io~empty-dir/data/f"
	head -c $((512 << 10)) /dev/urandom >"$l/default_web-1_$a/app/0.log"
	head -c $((4 << 20)) /dev/urandom >"$k/pods/a1b2c3d4-0000-4000-8000-00000000000d/volumes/kubernetes.io~empty-dir/scratch/f"
	head -c $((256 << 10)) /dev/urandom >"$l/default_renamed_a1b2c3d4-0000-4000-8000-00000000000f/app/0.log"
	# a symlink to the whole node in web-1's volume: counted as a link, never followed
	ln -s / "$k/pods/$a/volumes/kubernetes.io~empty-dir/data/root"
	cp -r "$tmp/systemd-pods" "$tmp/disk-pods"
	echo "ephemeral-storage-request = 1Mi" >>"$tmp/disk-pods/$a.conf"
	chmod 0644 "$tmp/disk-pods"/*
	cat >"$tmp/disk.conf" <<CONF
[agent]
kubelet-root-dir = $k
pod-logs-dir = $l
nodefs-path = /
imagefs-path = /
${1:-}
[eviction-hard]
memory.available = 0%
nodefs.available = 99%
[priority-class high-priority]
value = 1000000
CONF
}
once_disk() {
	"$EVICTD" --once --config "$tmp/disk.conf" --cgroup-root "$FX/systemd/root" --proc-root "$FX/systemd/proc" \
		--metadata-dir "$tmp/disk-pods" "$@"
}

check_disk_json() {
	make_kubelet_tree
	once_disk --json --dry-run >"$tmp/disk.json" 2>"$tmp/disk.err" || return 1
	python3 - "$tmp/disk.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
disk = d["ranking"]["disk"]
names = [p["pod"] for p in disk]
assert names == ["default/web-1", "default/cache", "prod/api-0", "default/batch-1", "prod/db-0",
                 "kube-system/coredns"], names
by = {p["pod"]: p for p in disk}
web = by["default/web-1"]
# 2Mi emptyDir + 512Ki of logs (allocated blocks), not the node behind the symlink
assert (2 << 20) + (512 << 10) <= web["usage_bytes"] < (3 << 20) + (512 << 10), web
assert web["disk_inodes"] == 6 and web["request_bytes"] == 1 << 20 and web["exceeds_requests"], web
assert web["disk_lower_bound"] is False
# cache has no descriptor-named log dir: found by its UID suffix
assert (256 << 10) <= by["default/cache"]["usage_bytes"] < (512 << 10), by["default/cache"]
assert by["default/batch-1"]["usage_bytes"] == 0 and not by["default/batch-1"]["exceeds_requests"]
# inodes: no request, any inode "exceeds"
ino = d["ranking"]["inodes"]
assert ino[0]["pod"] == "default/web-1" and ino[0]["usage_bytes"] is None and ino[0]["disk_inodes"] == 6, ino[0]
# imagefs: priority only
assert all(p["usage_bytes"] is None for p in d["ranking"]["imagefs"])
# DiskPressure on "/" (nodefs.available = 99%: the need is nearly the whole filesystem, which no set of pods
# can give back): not a batch of every exceeding pod but one, the kubelet's step (issue 21), with
# its measured usage as expected reclaim
assert "DiskPressure" in d["conditions"], d["conditions"]
ev = [e for e in d["evict"] if e["signal"] == "nodefs.available"]
assert [e["pod"] for e in ev] == ["default/web-1"], ev
for e in ev:
    assert e["expected_reclaim"] == by[e["pod"]]["usage_bytes"], e
PY
}

check_disk_limit_warning() {
	make_kubelet_tree "pod-disk-walk-limit = 1"
	once_disk --json >"$tmp/disk2.json" 2>"$tmp/disk2.err" || return 1
	grep -q 'Disk usage of pod default/web-1 is at least .*pod-disk-walk-limit' "$tmp/disk2.err" || return 1
	python3 - "$tmp/disk2.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
web = [p for p in d["ranking"]["disk"] if p["pod"] == "default/web-1"][0]
assert web["disk_lower_bound"] is True and web["usage_bytes"] < (2 << 20) + (512 << 10), web
# a lower bound ends the batch: one pod, whichever ranks first
by = {p["pod"]: p for p in d["ranking"]["disk"]}
ev = [e["pod"] for e in d["evict"] if e["signal"] == "nodefs.available"]
assert len(ev) == 1 and by[ev[0]]["disk_lower_bound"] is True, ev
PY
	once_disk >"$tmp/disk.txt" 2>/dev/null &&
		grep -q 'default/web-1 .*emptyDir+logs at least .* ephemeral-storage request 1Mi' "$tmp/disk.txt"
}

# pid.available short from outside the pods (issue 21): 412 tasks needed, the pods hold 86: not
# every candidate (priority-1000000 db-0 included) but one pod, the kubelet's step
check_pid_one_pod() {
	{ cat "$tmp/evictd.conf"; printf '[eviction-hard]\nmemory.available = 0%%\npid.available = 62000\n'; } >"$tmp/pid.conf"
	"$EVICTD" --once --json --dry-run --config "$tmp/pid.conf" --cgroup-root "$FX/systemd/root" \
		--proc-root "$FX/systemd/proc" --metadata-dir "$tmp/systemd-pods" >"$tmp/pid.json" 2>/dev/null || return 1
	python3 -c "
import json, sys
d = json.load(open('$tmp/pid.json'))
ev = [e['pod'] for e in d['evict']]
sys.exit(0 if ev == ['default/batch-1'] else 1)"
}

ok "--once --json on the systemd-driver fixture: shape, ranking, batch selection" check_systemd_json
ok "--once: pid.available short by more than every pod holds: one pod, not all" check_pid_one_pod
ok "--once --json: per-pod nodefs usage (emptyDir + logs), disk ranking, one pod when no batch covers the need" check_disk_json
ok "--once: disk walk limit gives a lower bound, a warning, and ends the batch" check_disk_limit_warning
ok "--once --json on the cgroupfs-driver fixture: allocatable signal, cgroup-derived request" check_cgroupfs_json
ok "--once text output" check_text
ok "--once: fall-rate defaults from a 64-CPU proc-root, an explicit key wins" check_fall_rates
ok "--once with a bad config names file:line and exits 1" check_bad_config
ok "usage errors exit 2" check_usage

# Paths on the command line are relative to the working directory (resolved at start); those in
# the configuration file must be absolute (test-config.c).
check_relative_paths() {
	once systemd --json >"$tmp/abs.json" 2>/dev/null || return 1
	local ev; ev=$(realpath "$EVICTD")
	(cd "$FX/systemd" && "$ev" --once --json --config "$tmp/evictd.conf" --cgroup-root root --proc-root ./proc \
		--metadata-dir "$(realpath --relative-to="$FX/systemd" "$tmp/systemd-pods")" \
		>"$tmp/rel.json" 2>/dev/null) || return 1
	# the same reading, the same ranking (the cgroup root is reported resolved)
	python3 - "$tmp/abs.json" "$tmp/rel.json" <<'PY'
import json, sys
a, r = (json.load(open(f)) for f in sys.argv[1:3])
assert a["cgroup"] == r["cgroup"], (a["cgroup"], r["cgroup"])
assert a["ranking"] == r["ranking"] and a["evict"] == r["evict"]
PY
}
ok "--cgroup-root, --proc-root, --metadata-dir: relative paths are resolved against the working directory" \
	check_relative_paths
check_relative_missing() {
	local ev; ev=$(realpath "$EVICTD")
	(cd "$tmp" && "$ev" --once --cgroup-root no-such-dir) >/dev/null 2>"$tmp/err"; local rc=$?
	[ $rc = 2 ] && grep -qx 'evictd: --cgroup-root no-such-dir: No such file or directory' "$tmp/err" ||
		{ echo "# exit $rc"; sed 's/^/#   /' "$tmp/err"; return 1; }
}
ok "a relative path that does not exist: usage error naming the option" check_relative_missing
done_testing
