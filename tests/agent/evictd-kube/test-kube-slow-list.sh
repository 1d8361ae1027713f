#!/bin/bash
# A list the API server takes longer than request-timeout to send, bytes flowing all along (the
# watch cache serialising 150,000 pods): the list is bounded by its progress, not cut at the
# request timeout and retried for ever. A list that stalls for longer than request-timeout is
# cut, said, and retried. evictd-kube and preemptd share the reflector (kube/reflector.c).
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"

command -v python3 >/dev/null || skip_all "python3 missing"
command -v openssl >/dev/null || skip_all "openssl missing (test certificates)"
command -v curl >/dev/null || skip_all "curl missing"
EKUBE=$BUILD/evictd-kube
[ -x "$EKUBE" ] || skip_all "$EKUBE not built"

T=$(mktemp -d /tmp/kube-slow-list.XXXXXX)
KPID=""
cleanup() { [ -n "$KPID" ] && kill -9 "$KPID" 2>/dev/null; [ -n "${KEEP:-}" ] && cp "$T/kube.err" /tmp/slow-list.err; kube_stop; rm -rf "$T"; }
KUBE_NO_TRAP=1
trap cleanup EXIT
kube_start || bail "the stand-in API server starts"

wait_for() { local end=$((SECONDS + $1)); shift; until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.05; done; }
pod() { kube_apply "$(kube_pod_json default "$1" node-1 0)" >/dev/null; }
uid_of() { kube_ctl GET "/objects/pods/default/$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["uid"])'; }
has_desc() { test -e "$T/desc/$(uid_of "$1").conf"; }
lists() { kube_requests | python3 -c 'import json,sys; print(sum(1 for l in sys.stdin if (r := json.loads(l))["path"] == "/api/v1/pods" and not r.get("watch")))'; }
printf '[kubernetes]\nenable = yes\nnode-name = node-1\nkubeconfig = %s\ndescriptor-dir = %s\nspool-dir = %s\nretry-max-interval = 1s\nrequest-timeout = 2s\n' \
	"$KUBE_DIR/kubeconfig-node-data" "$T/desc" "$T/spool" > "$T/evictd.conf"
start() { "$EKUBE" --config "$T/evictd.conf" --log-target stderr 2>>"$T/kube.err" & KPID=$!; }
stop() { kill "$KPID" 2>/dev/null; wait "$KPID" 2>/dev/null; KPID=""; }

for p in a b c d; do pod "$p"; done
# the pods' list sent 256 bytes every 0.25 s: 4 pods' list is some 6 KiB, about 6 s, 3 request
# timeouts (the whole call's bound is 10 of them)
kube_fault '{"kind": "trickle", "path": "^/api/v1/pods$", "watch": false, "chunk": 256, "every_ms": 250, "count": -1}'
start
ok "a list that takes 3 request timeouts, bytes flowing: synced" wait_for 30 has_desc d
ok "...in one list, not cut and retried" test "$(lists)" = 1
stop
kube_ctl DELETE /faults >/dev/null

# one answer that stalls for 5 s (request-timeout 2 s) after its first bytes
kube_fault '{"kind": "trickle", "path": "^/api/v1/pods$", "watch": false, "chunk": 64, "every_ms": 0, "pause_ms": 5000}'
start
ok "a list stalled for longer than request-timeout: cut and said" wait_for 15 grep -q "nothing received for 2 s" "$T/kube.err"
relisted() { [ "$(grep -c "Listed 4 pod(s)" "$T/kube.err")" = 2 ]; }
ok "...retried, and synced" wait_for 15 relisted
stop
done_testing
