#!/bin/bash
# pid.available ranking on a host whose cgroup v2 tree has no pids controller: the fixture's pod
# cgroups lose pids.current and get cgroup.threads instead; `evictd --once` must count each pod's
# tasks over its subtree (pod + containers) and rank by them, not leave the pods unmeasured.
. "$(dirname "$0")/../../lib.sh"
EVICTD=$BUILD/evictd
[ -x "$EVICTD" ] || skip_all "$EVICTD not built"
command -v python3 >/dev/null || skip_all "python3 missing"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cp -r "$PWD/tests/fixtures/cgroup/systemd/root" "$PWD/tests/fixtures/cgroup/systemd/proc" "$tmp/"
find "$tmp/root" -name pids.current -delete
# Each cgroup lists as many threads as the last hex digit of its pod's UID, times its depth below
# the pod (1 for the pod, 2 for a container): pod ...00f has 15 + 2*15 per container, and so on.
python3 - "$tmp/root" >"$tmp/expect" <<'PY'
import os, re, sys
root = sys.argv[1]
expect = {}
for d, subdirs, files in os.walk(root):
    m = re.search(r'pod([0-9a-f_]+)\.slice', d)
    if not m:
        continue
    uid = m.group(1).replace('_', '-')
    k = int(uid[-1], 16) or 1
    depth = d[d.index(m.group(0)):].count('/') + 1
    with open(os.path.join(d, 'cgroup.threads'), 'w') as f:
        f.write(''.join('%d\n' % (1000 + i) for i in range(k * depth)))
    expect[uid] = expect.get(uid, 0) + k * depth
for uid, n in sorted(expect.items()):
    print(uid, n)
PY
printf '[agent]\nnodefs-path = /\nimagefs-path = /\n[eviction-hard]\npid.available = 10%%\n' >"$tmp/evictd.conf"
"$EVICTD" --once --json --config "$tmp/evictd.conf" --cgroup-root "$tmp/root" --proc-root "$tmp/proc" \
	--metadata-dir "$tmp/none" >"$tmp/out.json" 2>"$tmp/err"
counts_match() {
	python3 - "$tmp/out.json" "$tmp/expect" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
got = {p["uid"]: p["processes"] for p in d["ranking"]["pid"]}
want = dict((l.split()[0], int(l.split()[1])) for l in open(sys.argv[2]))
assert want and all(got.get(u) == n for u, n in want.items()), (got, want)
PY
}
ok "no pids.current: each pod's tasks are counted from cgroup.threads over its subtree" counts_match
ok "the pods are not reported as unmeasured" bash -c "! grep -q 'pids.current' '$tmp/err'"
done_testing
