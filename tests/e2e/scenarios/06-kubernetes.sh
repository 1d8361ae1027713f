#!/bin/bash
# Scenario 6 — on a "Kubernetes node": evictd + evictd-kube (both installed by `make install`)
# and the stand-in API server (tests/kube/apiserver.py, a test double) in the guest. The
# kubelet's kubeconfig at /etc/kubernetes/kubelet.conf names the node's client certificate; the
# node name is evictd-kube's default (the lower-cased hostname). Three pods exist in both places
# — API objects and cgroups in the kubelet's layout — and NO operator descriptor: all evictd knows
# comes from the API:
#   hog       e2e, priority 1000, request 64Mi, grows past the threshold: exceeds its request
#   low       e2e, priority 0, request 256Mi, uses 24 MiB: within its request
#   critical  kube-system, priorityClassName system-node-critical (2000001000), exceeds its request
# Real memory pressure; hog must be evicted (kubelet order) with the API's priority, critical and
# low survive; the stand-in's request record must show the Warning Event "Evicted" with the
# kubelet's message (naming the container), the DisruptionTarget condition, the DELETE with the
# UID precondition and the node's EvictionThresholdMet; evictd-kube's journal has each outcome.
# Then evictd's own Node condition under the real sandbox of evictd-kube (no capability, private
# users, /run read-only): True from evictd's record; Unknown (EvictdNotRunning) after a SIGKILL of
# evictd (its pidfd), back when systemd restarts it; EvictdStopped on systemctl stop.
. ./lib.sh

[ -n "$KUBE_SRC" ] && [ -f "$KUBE_SRC/apiserver.py" ] || skip_all "tests/kube not shipped to the guest"
command -v python3 >/dev/null && command -v openssl >/dev/null && command -v curl >/dev/null ||
	skip_all "python3, openssl and curl are needed for the stand-in API server (image/packages)"
[ -x /usr/sbin/evictd-kube ] || bail "evictd-kube is not installed"

HOG=e2e00000000000000000000000000601
LOW=e2e00000000000000000000000000602
CRIT=e2e00000000000000000000000000603
HOG_CTR=$(printf 'e2e6%060d' 1)
NODE=$(hostname | tr 'A-Z' 'a-z')
cleanup() {
	systemctl stop evictd-kube.service 2>/dev/null
	standin_stop
	rm -rf /etc/kubernetes /run/evictd/kube-pods/* /run/evictd/evictions/*
}
trap cleanup EXIT

# ---- the stand-in API server and the kubelet's kubeconfig -------------------------------------
ok "stand-in API server up, test PKI for node $NODE" standin_start "$NODE" --bookmark-interval 1 --grace-scale 0.01
mkdir -p /etc/kubernetes
install -m 600 "$KDIR/kubeconfig-node" /etc/kubernetes/kubelet.conf
api_pod() {	# api_pod NS NAME UID [PRIORITY|CLASS] MEM-REQ [CONTAINER-ID]
	local prio status=""
	case "$4" in [0-9]*) prio="\"priority\": $4" ;; *) prio="\"priorityClassName\": \"$4\"" ;; esac
	[ -n "${6:-}" ] && status=", \"status\": {\"containerStatuses\": [{\"name\": \"main\", \"containerID\": \"containerd://$6\", \"ready\": true, \"restartCount\": 0, \"image\": \"pause\", \"imageID\": \"\"}]}"
	ctl POST /objects "{\"apiVersion\": \"v1\", \"kind\": \"Pod\",
	  \"metadata\": {\"namespace\": \"$1\", \"name\": \"$2\", \"uid\": \"$3\"},
	  \"spec\": {\"nodeName\": \"$NODE\", $prio, \"containers\": [{\"name\": \"main\", \"image\": \"pause\",
	    \"resources\": {\"requests\": {\"memory\": \"$5\"}}}]}$status}" | jq -e .metadata.uid >/dev/null
}
node_create() { ctl POST /objects "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"$NODE\"}}" | jq -e .metadata.uid >/dev/null; }
ok "the Node $NODE (evictd's conditions go on its status)" node_create
ok "API pod e2e/hog" api_pod e2e hog $HOG 1000 64Mi "$HOG_CTR"
ok "API pod e2e/low" api_pod e2e low $LOW 0 256Mi
ok "API pod kube-system/critical" api_pod kube-system critical $CRIT system-node-critical 8Mi

# ---- evictd-kube: descriptors from the API ------------------------------------------------------
thr=$(mib_below_available 300)
dropin kubernetes <<EOF
[kubernetes]
enable = yes
retry-max-interval = 2s
[eviction-hard]
memory.available = ${thr}Mi
[eviction]
pressure-transition-period = 10s
EOF
ok "evictd-kube is installed enabled" test "$(systemctl is-enabled evictd-kube.service)" = enabled
# README's figure ("rates both units 1.4", pinned offline by tests/agent/test-unit.sh); awk fails
# when systemd-analyze printed no rating at all
ok "systemd-analyze security rates evictd-kube.service 1.4, as README states" bash -c \
	"systemd-analyze security evictd-kube.service 2>/dev/null | awk '/Overall exposure/ { s = \$(NF-2) } END { exit !(s == \"1.4\") }'"
note "$(systemd-analyze security evictd-kube.service 2>/dev/null | grep 'Overall exposure')"
systemctl restart evictd-kube.service
ok "evictd-kube active (running)" wait_until 30 bash -c \
	'[ "$(systemctl show -p ActiveState --value evictd-kube.service)" = active ]'
for u in $HOG $LOW $CRIT; do
	ok "descriptor for $u from the API" wait_until 30 test -s /run/evictd/kube-pods/$u.conf
done
ok "the critical pod's descriptor says critical (priority from its class)" \
	grep -qx 'priority = 2000001000' /run/evictd/kube-pods/$CRIT.conf
ok "listed with the default node name ($NODE) in the field selector" \
	req ".path == \"/api/v1/pods\" and .query.fieldSelector == \"spec.nodeName=$NODE\" and .status == 200"
ok "no operator descriptor: metadata comes from the API only" bash -c '[ -d /run/evictd/pods ] && [ -z "$(ls /run/evictd/pods)" ]'

# ---- pods as cgroups, evictd, pressure ------------------------------------------------------------
ctr_start() {	# ctr_start UID UNIT -- PODHOG_ARGS: a "container" scope with the runtime's name
	local uid=$1 unit=$2; shift 3
	rm -f "$(pod_events "$uid")"
	systemd-run --scope --quiet --unit="$unit" --slice="$(pod_slice "$uid" burstable)" \
		-- podhog --out "$(pod_events "$uid")" --heartbeat "$STATE/$uid.hb" "$@" > "$STATE/$uid.out" 2>&1 &
	disown
	wait_until 60 pod_has_event "$uid" ready
}
ok "pod e2e/low running (24 MiB)" ctr_start $LOW e2e-ctr-$LOW -- --alloc 24
ok "pod kube-system/critical running (48 MiB)" ctr_start $CRIT e2e-ctr-$CRIT -- --alloc 48
ok "evictd (re)started" evictd_restart || bail "evictd is not running"
sleep 2
j_mark
ctr_start $HOG "cri-containerd-$HOG_CTR" -- --until-avail $((thr * MIB)) --extra 64 --max 1024
ok "hog pushed memory.available under ${thr}Mi" wait_until 60 pod_has_event $HOG cross

ok "journal: a pod was chosen" j_wait 60 "$(j_id $MSGID_POD_CHOSEN)"
first=$(j_select "$(j_id $MSGID_POD_CHOSEN)" | head -n1)
note "first eviction: $(jq -r .MESSAGE <<< "$first")"
ok "e2e/hog evicted first, named from the API" test "$(jq -r .EVICTD_POD <<< "$first")" = e2e/hog
ok "...with the API's priority (1000)" test "$(jq -r .EVICTD_PRIORITY <<< "$first")" = 1000
ok "...and the API's request (64Mi)" test "$(jq -r .EVICTD_REQUEST_BYTES <<< "$first")" = $((64 * MIB))
ok "the hog pod's cgroup is empty" wait_until 30 pod_gone $HOG burstable

# ---- what Kubernetes saw ----------------------------------------------------------------------------
thrq=${thr}Mi; [ $((thr % 1024)) = 0 ] && thrq=$((thr / 1024))Gi   # Kubernetes' canonical form
MSG="The node was low on resource: memory. Threshold quantity: $thrq, available: "
ok "Warning Event Evicted on e2e/hog with the kubelet's message" wait_until 60 req \
	".method == \"POST\" and .path == \"/api/v1/namespaces/e2e/events\" and .status == 201 and .body.reason == \"Evicted\" and .body.type == \"Warning\" and .body.involvedObject.uid == \"$HOG\" and (.body.message | startswith(\"$MSG\"))"
ev=$(requests | jq -c "select(.body.reason? == \"Evicted\")" | head -n1)
note "event message: $(jq -r .body.message <<< "$ev")"
ok "...naming container main over its 64Mi request" \
	bash -c "jq -r .body.message <<< '$ev' | grep -Eq 'Container main was using [0-9]+(Ki|Mi)?, request is 64Mi, has larger consumption of memory\. $'"
ok "...with the kubelet's annotations" test "$(jq -r '.body.metadata.annotations.starved_resource' <<< "$ev")" = memory
ok "DisruptionTarget condition (TerminationByKubelet)" wait_until 60 req \
	".method == \"PATCH\" and .path == \"/api/v1/namespaces/e2e/pods/hog/status\" and .status == 200 and any(.body.status.conditions[]; .type == \"DisruptionTarget\" and .reason == \"TerminationByKubelet\")"
ok "DELETE with the UID precondition" wait_until 60 req \
	".method == \"DELETE\" and .path == \"/api/v1/namespaces/e2e/pods/hog\" and .status == 200 and .body.preconditions.uid == \"$HOG\""
ok "node Event EvictionThresholdMet" wait_until 60 req \
	".method == \"POST\" and .body.reason? == \"EvictionThresholdMet\" and .body.involvedObject.name == \"$NODE\""
# a 404 from a stand-in that answers (not a failed curl: a dead stand-in must not read as "gone")
ok "e2e/hog is gone from the API" wait_until 30 bash -c \
	"[ \"\$(curl -s -o /dev/null -w '%{http_code}' '$CTL/objects/pods/e2e/hog')\" = 404 ] && curl -sf '$CTL/objects/pods/kube-system/critical' >/dev/null"
ok "...and its descriptor" wait_until 30 test ! -e /run/evictd/kube-pods/$HOG.conf
ok "no write about critical or low" bash -c \
	"curl -sSf '$CTL/requests' > $STATE/requests.jsonl && [ -s $STATE/requests.jsonl ] && ! jq -r 'select(.method != \"GET\") | .path' $STATE/requests.jsonl | grep -Eq '/pods/(critical|low)'"
ok "evictd-kube's journal: the DELETE's outcome with the pod" wait_until 30 bash -c \
	"journalctl -u evictd-kube.service -o json --no-pager | jq -e -s 'any(.[]; .MESSAGE_ID == \"c4b807f89fca4097820f4eedb97aeb62\" and .EVICTD_POD == \"e2e/hog\" and .EVICTD_KUBE_STEP == \"delete\" and .EVICTD_KUBE_STATUS == \"200\")' >/dev/null"
ok "the spool is empty (every report delivered)" wait_until 30 bash -c '[ -d /run/evictd/evictions ] && [ -z "$(ls /run/evictd/evictions)" ]'
ok "kube-system/critical survived" pod_populated $CRIT burstable
ok "e2e/low survived" pod_populated $LOW burstable
ok "evictd still active (running)" evictd_running

# ---- evictd's Node condition, and what it says when evictd is not there -----------------------------
# cond_patch JQ: evictd-kube patched the Node's EvictdMemoryPressure as JQ says (on .c)
cond_patch() {
	req ".method == \"PATCH\" and .path == \"/api/v1/nodes/$NODE/status\" and .status == 200 and any(.body.status.conditions[]; .type == \"EvictdMemoryPressure\" and (. as \$c | {c: \$c} | $1))"
}
ok "EvictdMemoryPressure=True posted from evictd's record" wait_until 30 cond_patch \
	'.c.status == "True" and .c.reason == "EvictdHasInsufficientMemory"'
ctl DELETE /requests >/dev/null
systemctl kill -s KILL --kill-who=main evictd.service
ok "evictd killed (SIGKILL): Unknown, EvictdNotRunning (seen through its pidfd, under the sandbox)" \
	wait_until 10 cond_patch '.c.status == "Unknown" and .c.reason == "EvictdNotRunning"'
ok "systemd restarts evictd" wait_until 30 evictd_running
ok "...and the condition is evictd's word again" wait_until 30 cond_patch '.c.reason != "EvictdNotRunning"'
ctl DELETE /requests >/dev/null
systemctl stop evictd.service
ok "systemctl stop evictd: reason EvictdStopped" wait_until 30 cond_patch '.c.reason == "EvictdStopped"'
ok "evictd started again" evictd_restart
journalctl -u evictd-kube.service --no-pager -o cat 2>/dev/null | tail -n 12 | sed 's/^/#   /'
done_testing
