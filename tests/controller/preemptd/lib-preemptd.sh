# Shell helpers for preemptd's tests against the stand-in API server (tests/kube/apiserver.py).
# Source after tests/lib.sh and tests/kube/lib-apiserver.sh, then:
#   pd_setup [apiserver options...]     stand-in up (bookmarks every 0.5 s, grace ×0.02), $T scratch
#   pd_start NAME [preemptd options...] preemptd in the background (log $T/NAME.log, pid PD_PID[NAME],
#                                       HTTP port in $T/NAME.port); --kubeconfig admin unless given
#   pd_stop NAME / pd_kill NAME         SIGTERM and wait / kill -9
#   wait_for SECONDS CMD...             until CMD succeeds
#   node NAME CPU, pending NS NAME PRIO CPU [SCHEDULER], running NS NAME NODE PRIO CPU
#   running_grace NS NAME NODE PRIO CPU GRACE   running, with terminationGracePeriodSeconds GRACE
#   nominated POD NODE, deleted POD (one DELETE of it), terminating POD   (namespace default)
#   node_of NS NAME, nominated_of NS NAME, cond NS NAME TYPE FIELD, uid_of NS NAME
#   reqs FILTER                         the request log, jq -c 'select(FILTER)' lines
#   metric NAME [LABELS-JSON]           a sample's value from /metrics, parsed by prometheus_client
#   pd_in_journal_ns "$@"               before pd_setup: re-runs the test in a private mount namespace
#                                       where a journald of its own can run (root), or returns 1
#   pd_journald                         after pd_setup, in that namespace: starts it (JPID), so that
#                                       preemptd --log-target journal can be read with journalctl
PD=$BUILD/preemptd
PCTL=$BUILD/preemptctl
declare -A PD_PID

pd_require() {
	command -v python3 >/dev/null || skip_all "python3 missing"
	command -v openssl >/dev/null || skip_all "openssl missing (test certificates)"
	command -v curl >/dev/null || skip_all "curl missing"
	command -v jq >/dev/null || skip_all "jq missing"
	[ -x "$PD" ] || skip_all "$PD not built"
}

pd_cleanup() {
	local n
	for n in "${!PD_PID[@]}"; do kill -9 "${PD_PID[$n]}" 2>/dev/null; wait "${PD_PID[$n]}" 2>/dev/null; done
	[ -n "${KEEP:-}" ] && cp -r "$T" "/tmp/pd-keep.$$"
	kube_stop
	rm -rf "$T"
}

pd_setup() {
	T=$(mktemp -d "${TMPDIR:-/tmp}/preemptd-test.XXXXXX")
	KUBE_NO_TRAP=1
	trap pd_cleanup EXIT
	# python3, openssl and curl are there: a stand-in that does not start is a failure, not a skip
	kube_start --bookmark-interval 0.5 --grace-scale 0.02 --kubelet-start-delay 0.02 "$@" ||
		bail "the stand-in API server starts"
}

pd_start() {	# pd_start NAME [options...]
	local name=$1; shift
	local kc=(--kubeconfig "$KUBE_DIR/kubeconfig-admin")
	case " $* " in *" --kubeconfig "*) kc=() ;; esac
	"$PD" "${kc[@]}" --config /dev/null --log-target stderr --listen 127.0.0.1:0 --retry-max 2s \
		--watch-timeout "${PD_WATCH_TIMEOUT:-30s}" "$@" >>"$T/$name.log" 2>&1 &
	PD_PID[$name]=$!
}

pd_stop() { kill -TERM "${PD_PID[$1]}" 2>/dev/null; wait "${PD_PID[$1]}" 2>/dev/null; unset "PD_PID[$1]"; }
pd_kill() { kill -9 "${PD_PID[$1]}" 2>/dev/null; wait "${PD_PID[$1]}" 2>/dev/null; unset "PD_PID[$1]"; }
pd_alive() { kill -0 "${PD_PID[$1]}" 2>/dev/null; }
# The port preemptd's HTTP server took (--listen 127.0.0.1:0), as it logs it (to stderr, or to the
# test's own journal: pd_journald)
pd_port() {
	{ cat "$T/$1.log"; [ -n "$JPID" ] && journalctl --no-pager -o cat SYSLOG_IDENTIFIER=preemptd 2>/dev/null; } |
		sed -n 's/.*metrics on port \([0-9]*\).*/\1/p' | tail -1
}
pd_get() { curl -s "http://127.0.0.1:$(pd_port "$1")$2"; }
pd_code() { curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$(pd_port "$1")$2"; }
logged() { grep -q -- "$2" "$T/$1.log"; }
logged_n() { grep -c -- "$2" "$T/$1.log"; }

# seconds from one request log timestamp to another
ts_diff() { "$PY" -c 'import datetime, sys; p = datetime.datetime.fromisoformat; print((p(sys.argv[2]) - p(sys.argv[1])).total_seconds())' "$1" "$2"; }
wait_for() { local end=$((SECONDS + $1)); shift; until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.05; done; }

node() { kube_apply "$(kube_node_json "$1" "${2:-4}" "${3:-8Gi}")" >/dev/null; }
pending() { kube_apply "$(kube_pending_pod_json "$1" "$2" "${3:-0}" "${4:-100m}" 64Mi "${5:-preemptd}")" >/dev/null; }
running() {	# running NS NAME NODE PRIO CPU: a pod of another scheduler, bound and running
	kube_apply "$(kube_pod_json "$1" "$2" "$3" "$4" 64Mi "$5" | jq -c '.spec.schedulerName = "default-scheduler"')" >/dev/null
}
running_grace() {
	kube_apply "$(kube_pod_json "$1" "$2" "$3" "$4" 64Mi "$5" |
		jq -c --argjson g "$6" '.spec.schedulerName = "default-scheduler" | .spec.terminationGracePeriodSeconds = $g')" >/dev/null
}
obj() { kube_ctl GET "/objects/pods/$1/$2"; }
node_of() { obj "$1" "$2" | jq -r '.spec.nodeName // ""'; }
nominated_of() { obj "$1" "$2" | jq -r '.status.nominatedNodeName // ""'; }
uid_of() { obj "$1" "$2" | jq -r '.metadata.uid'; }
cond() { obj "$1" "$2" | jq -r --arg t "$3" --arg f "$4" '[.status.conditions[]? | select(.type == $t)][0][$f] // ""'; }
gone() { [ "$(kube_ctl GET "/objects/pods/$1/$2" | jq -r '.kind // ""')" != Pod ]; }
bound_to() { [ "$(node_of "$1" "$2")" = "$3" ]; }
nominated() { [ "$(nominated_of default "$1")" = "$2" ]; }
terminating() { [ -n "$(obj default "$1" | jq -r '.metadata.deletionTimestamp // ""')" ]; }
reqs() { kube_requests | jq -c "select($1)"; }
deleted() { [ "$(nreqs ".verb == \"delete\" and .resource == \"pods\" and .name == \"$1\"")" = 1 ]; }
# events.k8s.io Events of a namespace, one JSON array
events() { kube_ctl GET "/objects/events.events.k8s.io/$1"; }
# how many Events of namespace NS match a jq filter
nevents() { events "$1" | jq "[.[] | select($2)] | length"; }
nreqs() { reqs "$1" | wc -l; }

# Debian's python3 (python3-prometheus-client), not one earlier in PATH (pyenv, venv).
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3
# The value of a sample of /metrics, read with a real Prometheus text parser (prometheus_client).
metric() {	# metric PDNAME NAME [LABELS-JSON]
	pd_get "$1" /metrics | "$PY" -c '
import json, sys
from prometheus_client.parser import text_string_to_metric_families
name, labels = sys.argv[1], json.loads(sys.argv[2])
for fam in text_string_to_metric_families(sys.stdin.read()):
    for s in fam.samples:
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
            print(int(s.value) if s.value == int(s.value) else s.value)
            sys.exit(0)
sys.exit(1)' "$2" "${3:-{\}}"
}

JOURNALD=/lib/systemd/systemd-journald
pd_in_journal_ns() {
	[ -n "${PD_IN_NS:-}" ] && return 0
	[ "$(id -u)" = 0 ] && [ -x "$JOURNALD" ] && command -v journalctl >/dev/null && command -v unshare >/dev/null &&
		unshare -m --propagation private true 2>/dev/null || return 1
	PD_IN_NS=1 exec unshare -m --propagation private bash "$0" "$@"
}

JPID=""
pd_journald() {	# tmpfs over the journal's directories (this namespace only), then journald
	mount -t tmpfs tmpfs /run/systemd && mkdir -p /run/systemd/journal /run/log /var/log/journal &&
		mount -t tmpfs tmpfs /run/log && mount -t tmpfs tmpfs /var/log/journal || return 1
	"$JOURNALD" >"$T/journald.out" 2>&1 &
	JPID=$!
	local _
	for _ in $(seq 200); do [ -S /run/systemd/journal/socket ] && return 0; sleep 0.05; done
	return 1
}
pd_journald_stop() { [ -n "$JPID" ] && { kill "$JPID"; wait "$JPID"; } 2>/dev/null; JPID=""; }
