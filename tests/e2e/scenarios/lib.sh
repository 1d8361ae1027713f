# Shared helpers for the e2e scenarios (sourced; runs in the guest as root).
# Output is TAP-like: "ok N - what" / "not ok N - what", "# ..." for facts worth reading.
# A scenario exits 0 only if no check failed; `skip_all` exits 77.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

CG=/sys/fs/cgroup
PODS_DIR=/run/evictd/pods
DROPIN_DIR=/etc/evictd/evictd.conf.d
STATE=/run/e2e            # per-scenario scratch (the runner wipes it between scenarios)
mkdir -p "$STATE" "$PODS_DIR" "$DROPIN_DIR"
MIB=1048576

_n=0
_failed=0
ok() {   # ok WHAT COMMAND...: passes when COMMAND exits 0
	local what=$1; shift
	_n=$((_n + 1))
	if "$@"; then echo "ok $_n - $what"; else echo "not ok $_n - $what"; _failed=1; fi
}
pass() { _n=$((_n + 1)); echo "ok $_n - $*"; }
fail() { _n=$((_n + 1)); echo "not ok $_n - $*"; _failed=1; }
note() { echo "# $*"; }
bail() { fail "$*"; note "cannot go on"; done_testing; }
matches() { [[ $1 =~ $2 ]]; }   # matches STRING ERE
jqe() { jq -e "$@" >/dev/null 2>&1; }   # jqe FILTER [FILE]: the filter's result is true
not() { ! "$@"; }
skip_all() { echo "skip: $*"; exit 77; }
done_testing() { echo "1..$_n"; exit "$_failed"; }

# wait_until TIMEOUT_S COMMAND...: polls COMMAND every 0.2 s; 1 if it never succeeded.
wait_until() {
	local end=$(( $(date +%s) + $1 )); shift
	until "$@"; do
		[ "$(date +%s)" -ge "$end" ] && return 1
		sleep 0.2
	done
}

mono_ns() { podhog --now | cut -d' ' -f1; }
# memory.available as the kubelet (and evictd) compute it on cgroup v2, in bytes.
mem_available() { podhog --available; }
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (b - a) / 1e6 }'; }   # ns interval → ms

# ---- journal -------------------------------------------------------------------------------------
# j_mark: later j_* calls only see entries logged after this point. (By monotonic time, not by
# cursor: journalctl -u with --after-cursor was seen to skip systemd's own entries about the unit.)
J_MONO_US=0
J_SINCE=
j_mark() {
	local now
	now=$(podhog --now)
	J_MONO_US=$(( ${now% *} / 1000 ))
	J_SINCE=$(( ${now#* } / 1000000000 - 2 ))
}
# j_select JQ_CONDITION: entries of evictd.service (its own and systemd's about it) since j_mark
# that match, one JSON object per line.
j_select() {
	journalctl -u evictd.service -o json --no-pager ${J_SINCE:+--since="@$J_SINCE"} 2>/dev/null |
		jq -c "select((.__MONOTONIC_TIMESTAMP | tonumber) > $J_MONO_US) | select($1)" 2>/dev/null
}
j_evictd() { j_select true; }
j_has() { [ -n "$(j_select "$1" | head -n1)" ]; }
j_wait() { wait_until "$1" j_has "$2"; }                      # j_wait TIMEOUT_S JQ_CONDITION
j_show() { j_evictd | jq -r '"#   " + (.MESSAGE // "" | tostring)' 2>/dev/null | tail -n "${1:-20}"; }

# Entry kinds by MESSAGE_ID (agent/common/log.h; explained by systemd/evictd.catalog for journalctl -x).
# shellcheck disable=SC2034   # used by the scenarios that source this file
{
	MSGID_THRESHOLD_MET=f7c5f6af75cd48aeb357803bdd6de3c4
	MSGID_THRESHOLD_CLEARED=a47c3e5bc2d04704990c35a35319257f
	MSGID_CONDITION_CHANGED=4e4f4c2ac74a4eb1ad6e957b7578a127
	MSGID_POD_CHOSEN=a303a0f905e14500a87462de5e5e36fb
	MSGID_EVICTION_STARTED=ddd52a80a54f4fc8ba4f5b6f851a0e41
	MSGID_EVICTION_FINISHED=0651b0dd2c3347a1a2bcdd650890bdf6
	MSGID_EVICTION_RECLAIMED=df4e95020acb41b694cb18cd725febc5
	MSGID_RECLAIM_TIMEOUT=43dbda9dde214bdab7341cc2cf76fbff
	MSGID_EVICTION_FAILED=46c580319dc046efbfc12795e324cec2
	MSGID_CONFIG_REJECTED=66c4dcae33c544ab98841e90cf502d80
	MSGID_CONFIG_LOADED=7fa6fd181a6747859af23d487c11872e
	MSGID_RECLAIM_RESUMED=d5cc88c02fbe439ebdd71c424809cffc
	MSGID_NODE_RECLAIM_IMAGES=a4f66582d18e434398317e0f4e92b276
	MSGID_NODE_RECLAIM_PENDING=c5993dbfb40d40c8b727d3b09f362030
	MSGID_RUNTIME_STATUS=91d3378316bd47e8926cc2d501ab150c
}
j_id() { echo "(.MESSAGE_ID == \"$1\")"; }                                    # j_id MSGID
j_pod() { echo "(.MESSAGE_ID == \"$1\") and (.EVICTD_POD_UID == \"$2\")"; }  # j_pod MSGID UID
# j_field JQ_CONDITION FIELD: FIELD of the first matching entry
j_field() { j_select "$1" | head -n1 | jq -r --arg f "$2" '.[$f] // empty'; }
# j_time JQ_CONDITION: monotonic ns of the first matching entry (same clock as podhog's)
j_time() { j_select "$1" | head -n1 | jq -r '(.__MONOTONIC_TIMESTAMP | tonumber) * 1000'; }

# ---- evictd --------------------------------------------------------------------------------------
unit_prop() { systemctl show -p "$1" --value evictd.service; }
evictd_running() { [ "$(unit_prop ActiveState)/$(unit_prop SubState)" = active/running ]; }
# dropin NAME < CONTENT: /etc/evictd/evictd.conf.d/e2e-NAME.conf, as an operator would write it.
dropin() { install -m 644 /dev/stdin "$DROPIN_DIR/e2e-$1.conf"; }
# evictd_restart: (re)start with the current configuration; fails if it does not come up.
evictd_restart() {
	systemctl restart evictd.service || { note "systemctl restart evictd failed"; return 1; }
	wait_until 30 evictd_running
}
evictd_status_json() { cat /run/evictd/status.json 2>/dev/null; }
# has_condition NAME / lacks_condition NAME: what status.json says (both fail without the file)
has_condition() { evictd_status_json | jq -e --arg c "$1" '.conditions | index($c) != null' >/dev/null 2>&1; }
lacks_condition() { evictd_status_json | jq -e --arg c "$1" '.conditions | index($c) == null' >/dev/null 2>&1; }

# ---- pods ----------------------------------------------------------------------------------------
# Pods are laid out as the kubelet's systemd cgroup driver does it: a slice per pod
# (kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid>.slice, guaranteed pods directly
# under kubepods.slice) with the "container" processes in a scope below it. UIDs carry no '-'
# (the kubelet escapes it to '_' in unit names), so the path and the descriptor agree on it.
pod_slice() {   # pod_slice UID QOS
	case "$2" in
	guaranteed) echo "kubepods-pod$1.slice" ;;
	*) echo "kubepods-$2-pod$1.slice" ;;
	esac
}
pod_cg() {      # pod_cg UID QOS: the pod's cgroup directory
	case "$2" in
	guaranteed) echo "$CG/kubepods.slice/kubepods-pod$1.slice" ;;
	*) echo "$CG/kubepods.slice/kubepods-$2.slice/kubepods-$2-pod$1.slice" ;;
	esac
}
pod_populated() { grep -q '^populated 1' "$(pod_cg "$1" "$2")/cgroup.events" 2>/dev/null; }
pod_gone() { ! pod_populated "$@"; }
pod_events() { echo "$STATE/$1.events"; }
# pod_event UID EVENT: monotonic ns of the first EVENT line ("" if none yet)
pod_event() { awk -v e="$2" '$1 == e { print $2; exit }' "$(pod_events "$1")" 2>/dev/null; }
pod_has_event() { [ -n "$(pod_event "$1" "$2")" ]; }
pod_heartbeat() { cat "$STATE/$1.hb" 2>/dev/null; }

# pod_descriptor UID KEY=VALUE...: /run/evictd/pods/UID.conf, root-owned 0644 as evictd demands.
pod_descriptor() {
	local uid=$1 kv; shift
	{
		echo "[pod]"
		for kv in "$@"; do echo "${kv%%=*} = ${kv#*=}"; done
	} > "$PODS_DIR/.$uid.tmp"
	chmod 644 "$PODS_DIR/.$uid.tmp"
	mv -f "$PODS_DIR/.$uid.tmp" "$PODS_DIR/$uid.conf"
}
# pod_start UID QOS -- PODHOG_ARGS...: runs podhog as the pod's container and waits until it has
# allocated its initial memory ("ready"). PODHOG_PID is the process.
PODHOG_PID=
pod_start() {
	local uid=$1 qos=$2; shift 3
	rm -f "$(pod_events "$uid")"
	systemd-run --scope --quiet --unit="e2e-ctr-$uid" --slice="$(pod_slice "$uid" "$qos")" \
		-- podhog --out "$(pod_events "$uid")" --heartbeat "$STATE/$uid.hb" "$@" \
		> "$STATE/$uid.out" 2>&1 &
	PODHOG_PID=$!
	disown   # its death by eviction is expected, not news for the log
	wait_until 60 pod_has_event "$uid" ready
}
pod_kill() { echo 1 > "$(pod_cg "$1" "$2")/cgroup.kill" 2>/dev/null; }

# Thresholds are set relative to what this VM has free right now: MiB, rounded down.
mib_below_available() { echo $(( ($(mem_available) / MIB) - $1 )); }

# ---- the stand-in API server (tests/kube/apiserver.py, a test double) in the guest -------------
KUBE_SRC=$(cd ../kube 2>/dev/null && pwd)
KDIR=$STATE/kube
APID=
CTL=
# standin_start NODE [apiserver.py OPTIONS...]: test PKI for node NODE and the server in the
# background (its state, kubeconfigs and request log in $KDIR); sets APID and CTL.
standin_start() {
	local node=$1; shift
	mkdir -p "$KDIR"
	"$KUBE_SRC/mkcerts.sh" "$KDIR" "$node" > "$STATE/mkcerts.log" 2>&1 || return 1
	python3 "$KUBE_SRC/apiserver.py" --dir "$KDIR" --port 0 "$@" 2> "$STATE/apiserver.stderr" &
	APID=$!
	wait_until 30 test -s "$KDIR/ports.json" || { cat "$STATE/apiserver.stderr"; return 1; }
	CTL=$(jq -r .control "$KDIR/ports.json")
}
standin_stop() { if [ -n "$APID" ]; then kill "$APID" 2>/dev/null; APID=; fi; }
ctl() {	# ctl METHOD PATH [JSON]: the stand-in's control endpoint
	if [ $# -ge 3 ]; then curl -sS -X "$1" -H 'Content-Type: application/json' --data-binary "$3" "$CTL$2"
	else curl -sS -X "$1" "$CTL$2"; fi
}
requests() { ctl GET /requests; }
# req JQ: some request in the stand-in's record matches
req() { requests | jq -e -s "any(.[]; $1)" >/dev/null 2>&1; }
