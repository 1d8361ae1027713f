#!/bin/bash
# evictd-kube's journal entries, read back from a real journal: systemd-journald is started by
# hand in a private mount namespace (tmpfs over /run/systemd, /run/log, /var/log/journal) as
# tests/agent/test-daemon-journal.sh does, evictd-kube (--log-target journal) reports one spool
# record to the stand-in API server, and `journalctl -o json` must show each API call with
# MESSAGE_ID c4b807f8… and EVICTD_POD, EVICTD_POD_UID, EVICTD_NAMESPACE, EVICTD_PRIORITY,
# EVICTD_KUBE_STEP, EVICTD_KUBE_STATUS, then the finished report (MESSAGE_ID facadd06…), as
# README promises.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"

JOURNALD=/lib/systemd/systemd-journald
[ "$(id -u)" = 0 ] || skip_all "needs root (mount namespace; spool records are trusted only when root owns them)"
[ -x "$JOURNALD" ] || skip_all "no $JOURNALD (package systemd)"
command -v journalctl > /dev/null || skip_all "no journalctl (package systemd)"
command -v python3 >/dev/null || skip_all "python3 missing"
command -v openssl >/dev/null || skip_all "openssl missing (test certificates)"
command -v curl >/dev/null || skip_all "curl missing"
EKUBE=$BUILD/evictd-kube
[ -x "$EKUBE" ] || skip_all "$EKUBE not built"

if [ -z "${EVICTD_IN_NS:-}" ]; then
	need_mount_ns
	EVICTD_IN_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi

T=$(mktemp -d -t evictd-kjrnl.XXXXXX)
KPID=""; JPID=""
cleanup() {
	[ -n "$KPID" ] && kill -9 "$KPID" 2>/dev/null
	[ -n "$JPID" ] && { kill "$JPID" 2>/dev/null; wait "$JPID" 2>/dev/null; }
	kube_stop
	rm -rf "$T"
}
KUBE_NO_TRAP=1
trap cleanup EXIT

mount -t tmpfs tmpfs /run/systemd || skip_all "cannot mount over /run/systemd"
mkdir -p /run/systemd/journal /run/log /var/log/journal
mount -t tmpfs tmpfs /run/log && mount -t tmpfs tmpfs /var/log/journal || skip_all "cannot mount journal dirs"
"$JOURNALD" > "$T/journald.out" 2>&1 &
JPID=$!
for _ in $(seq 200); do [ -S /run/systemd/journal/socket ] && break; sleep 0.05; done
# systemd's own journald not starting in a namespace we could make is not our regression
[ -S /run/systemd/journal/socket ] || skip_all "systemd-journald did not start: $(head -n 1 "$T/journald.out")"

kube_start --bookmark-interval 0.5 || bail "the stand-in API server starts"
wait_for() { local end=$((SECONDS + $1)); shift; until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.05; done; }
req() {	# req PYTHON-EXPR: some request r in the stand-in's log satisfies it
	kube_requests > "$T/requests.jsonl"
	python3 - "$T/requests.jsonl" "$1" <<'PY'
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sys.exit(0 if any(eval(sys.argv[2], {}, {"r": r}) for r in rs) else 1)
PY
}

kube_apply '{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"shop","name":"batch","uid":"5555-jjjj"},
  "spec":{"nodeName":"node-1","priority":42,"containers":[{"name":"main","image":"pause"}]}}' >/dev/null
mkdir -p "$T/spool"
printf '[kubernetes]\nenable = yes\nnode-name = node-1\nkubeconfig = %s\ndescriptor-dir = %s\nspool-dir = %s\nretry-max-interval = 1s\n' \
	"$KUBE_DIR/kubeconfig-node" "$T/desc" "$T/spool" > "$T/evictd.conf"
"$EKUBE" --config "$T/evictd.conf" --log-target journal 2>"$T/stderr" &
KPID=$!
cat > "$T/spool/.tmp" <<'EOF'
{"kind":"eviction","uid":"5555-jjjj","namespace":"shop","name":"batch","signal":"memory.available","resource":"memory","hard":true,"threshold":"100Mi","available":"80Mi","priority":42,"gracePeriodSeconds":0,"startedAt":"2026-01-01T00:00:00Z","containers":[],"message":"m"}
EOF
mv "$T/spool/.tmp" "$T/spool/00000000000000000001-5555-jjjj.json"
ok "the report reaches the API (DELETE 200)" wait_for 15 req \
	"r['method']=='DELETE' and r['path']=='/api/v1/namespaces/shop/pods/batch' and r['status']==200"
ok "...and the record leaves the spool" wait_for 5 test ! -e "$T/spool/00000000000000000001-5555-jjjj.json"

CALL=c4b807f89fca4097820f4eedb97aeb62
DONE=facadd06e42f459495da5605b11923ff
journal() {	# journal: evictd-kube's entries about the pod, as JSON lines, in $T/journal.json
	journalctl --no-pager -o json EVICTD_POD_UID=5555-jjjj > "$T/journal.json" 2>/dev/null
	[ -s "$T/journal.json" ]
}
check() {	# check PYTHON-EXPR over the list `e` of entries
	python3 - "$T/journal.json" "$1" <<'EOP'
import json, sys
e = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ok = eval(sys.argv[2])
if not ok:
    for x in e:
        print("# " + " ".join("%s=%s" % (k, x.get(k)) for k in ("MESSAGE_ID", "EVICTD_KUBE_STEP", "EVICTD_KUBE_STATUS", "MESSAGE")))
sys.exit(0 if ok else 1)
EOP
}
ok "the journal has evictd-kube's entries for the pod" wait_for 10 bash -c "$(declare -f journal); T='$T' journal && grep -q $DONE '$T/journal.json'"
journal
fields="x.get('MESSAGE_ID')=='$CALL' and x.get('EVICTD_POD')=='shop/batch' and x.get('EVICTD_POD_UID')=='5555-jjjj' and x.get('EVICTD_NAMESPACE')=='shop' and x.get('EVICTD_PRIORITY')=='42'"
ok "Event call: MESSAGE_ID, pod, uid, namespace, priority, step event, status 201" check \
	"any($fields and x.get('EVICTD_KUBE_STEP')=='event' and x.get('EVICTD_KUBE_STATUS')=='201' for x in e)"
ok "status patch call: step condition, status 200" check \
	"any($fields and x.get('EVICTD_KUBE_STEP')=='condition' and x.get('EVICTD_KUBE_STATUS')=='200' for x in e)"
ok "DELETE call: step delete, status 200" check \
	"any($fields and x.get('EVICTD_KUBE_STEP')=='delete' and x.get('EVICTD_KUBE_STATUS')=='200' for x in e)"
ok "the finished report: MESSAGE_ID $DONE with the pod, after the three calls" check \
	"[x.get('EVICTD_KUBE_STEP') or x.get('MESSAGE_ID') for x in e if x.get('MESSAGE_ID') in ('$CALL','$DONE')]==['event','condition','delete','$DONE']"
ok "entries are evictd-kube's (SYSLOG_IDENTIFIER)" check "all(x.get('SYSLOG_IDENTIFIER')=='evictd-kube' for x in e)"
kill -TERM "$KPID"; wait "$KPID"; rc=$?; KPID=""
ok "clean exit on SIGTERM" test "$rc" = 0
ok "nothing went to stderr (journal target)" test ! -s "$T/stderr"
done_testing
