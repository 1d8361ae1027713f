#!/bin/bash
# `evictd --once --json` on the fixture trees: the exact JSON shape of issue 5 and its values.
. "$(dirname "$0")/../lib.sh"
EVICTD=$BUILD/evictd
[ -x "$EVICTD" ] || skip_all "$EVICTD not built"
[ "$(id -u)" = 0 ] || skip_all "descriptors must be root-owned to be trusted; run as root"
command -v python3 >/dev/null || skip_all "python3 missing"
FX=$PWD/tests/fixtures/cgroup
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for l in systemd cgroupfs; do cp -r "$FX/$l/pods" "$tmp/$l-pods"; chmod 0644 "$tmp/$l-pods"/*; done
cat >"$tmp/evictd.conf" <<'CONF'
[agent]
nodefs-path = /
imagefs-path = /
[eviction-minimum-reclaim]
memory.available = 2Gi
[priority-class high-priority]
value = 1000000
CONF
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
assert set(d["ranking"]) == {"memory", "pid", "disk"}
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
		grep -q 'default/web-1 .*working set 1.2Gi exceeds request 512Mi; priority 0' "$tmp/out.txt" &&
		grep -q 'default/web-1 (uid a1b2c3d4-0000-4000-8000-00000000000a) for memory.available (hard threshold, rank 1, grace 0s' "$tmp/out.txt"
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

ok "--once --json on the systemd-driver fixture: shape, ranking, batch selection" check_systemd_json
ok "--once --json on the cgroupfs-driver fixture: allocatable signal, cgroup-derived request" check_cgroupfs_json
ok "--once text output" check_text
ok "--once with a bad config names file:line and exits 1" check_bad_config
ok "usage errors exit 2" check_usage
done_testing
