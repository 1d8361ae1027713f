#!/bin/bash
# Scenario 9 — preemptd as installed (`make install`: /usr/sbin/preemptd, preemptd.service,
# /etc/evictd/preemptd.conf) under systemd, against the stand-in API server (tests/kube/
# apiserver.py, a test double) in the guest. The stand-in starts with deploy/preemptd.yaml's
# objects and enforces its RBAC; preemptd's kubeconfig is that ServiceAccount's (a token, the CA
# embedded), handed to the unit as its credential. The stand-in's kubelet simulation runs what is
# bound and ends what is deleted (grace periods × 0.1).
#
#   node-1: 2 cpu, runs `low` (priority 0, 1500m)      node-2: 1 cpu
#   web   (priority 100, 100m)  fits: bound at once
#   big   (priority 1000, 1500m) fits nowhere: preempts low on node-1 (DisruptionTarget, DELETE,
#         Event), nominated there, bound once low is gone
#   r1..r6 (100m) created around `systemctl restart preemptd`: each bound exactly once (one
#         binding request each, none refused by a kubelet), the Lease passed to the new process
# Throughout: READY=1 (Type=notify), a dynamic user with no capability, /readyz, the journal's
# MESSAGE_IDs, no request refused by RBAC.
. ./lib.sh

DEPLOY=$(cd ../deploy 2>/dev/null && pwd)/preemptd.yaml
[ -n "$KUBE_SRC" ] && [ -f "$KUBE_SRC/apiserver.py" ] && [ -f "$DEPLOY" ] ||
	skip_all "tests/kube and deploy/ not shipped to the guest"
command -v python3 >/dev/null && python3 -c 'import yaml' 2>/dev/null && command -v openssl >/dev/null &&
	command -v curl >/dev/null || skip_all "python3, python3-yaml, openssl and curl are needed for the stand-in (image/packages)"
[ -x /usr/sbin/preemptd ] || bail "preemptd is not installed"
[ -f /usr/lib/systemd/system/preemptd.service ] || bail "preemptd.service is not installed"

# preemptd's journal (MESSAGE_IDs of controller/report/journal.h; systemd/preemptd.catalog)
MSGID_POD_BOUND=3c9d2a07c7a14b6f9f1e0d5c22a61b01
MSGID_PREEMPTION=d2b7e61f0c4a4f8e9a35b6c1e7f04a23
MSGID_LEADER=51e0a9c3b8d24e7fa6c3019d5b2e8f34
KUBECONFIG_CRED=/etc/evictd/preemptd.kubeconfig
cleanup() {
	systemctl stop preemptd.service 2>/dev/null
	systemctl reset-failed preemptd.service 2>/dev/null
	standin_stop
	rm -f "$KUBECONFIG_CRED"
}
trap cleanup EXIT
pd() { systemctl show -p "$1" --value preemptd.service; }
pd_running() { [ "$(pd ActiveState)/$(pd SubState)" = active/running ]; }
# pd_journal JQ: preemptd's entries since the scenario began that match, one JSON object a line
T0=$(date +%s)
pd_journal() {
	journalctl -u preemptd.service -o json --no-pager --since="@$((T0 - 2))" 2>/dev/null |
		jq -c "select($1)" 2>/dev/null
}
pd_logged() { [ -n "$(pd_journal "$1" | head -n1)" ]; }
api() { ctl GET "/objects/$1"; }     # api RES/NS/NAME: the stored object
pod_on() { [ "$(api "pods/e2e/$1" | jq -r '.spec.nodeName // empty')" = "$2" ]; }   # pod_on NAME NODE
pod_bound() { [ -n "$(api "pods/e2e/$1" | jq -r '.spec.nodeName // empty')" ]; }
pod_running() { api "pods/e2e/$1" | jq -e '.status.phase == "Running"' >/dev/null; }
pod_gone() { [ "$(curl -s -o /dev/null -w '%{http_code}' "$CTL/objects/pods/e2e/$1")" = 404 ]; }
pending_pod() {	# pending_pod NAME PRIORITY CPU
	ctl POST /objects "{\"apiVersion\": \"v1\", \"kind\": \"Pod\",
	  \"metadata\": {\"namespace\": \"e2e\", \"name\": \"$1\", \"labels\": {\"app\": \"$1\"}},
	  \"spec\": {\"schedulerName\": \"preemptd\", \"priority\": $2, \"containers\": [{\"name\": \"main\",
	    \"image\": \"pause\", \"resources\": {\"requests\": {\"cpu\": \"$3\", \"memory\": \"64Mi\"}}}]}}" |
		jq -e .metadata.uid >/dev/null
}
node() {	# node NAME CPU
	ctl POST /objects "{\"apiVersion\": \"v1\", \"kind\": \"Node\", \"metadata\": {\"name\": \"$1\"},
	  \"status\": {\"capacity\": {\"cpu\": \"$2\", \"memory\": \"8Gi\", \"pods\": \"110\"},
	               \"allocatable\": {\"cpu\": \"$2\", \"memory\": \"8Gi\", \"pods\": \"110\"},
	               \"addresses\": [{\"type\": \"InternalIP\", \"address\": \"10.0.0.$3\"}]}}" |
		jq -e .metadata.uid >/dev/null
}
bindings() { requests | jq -c 'select(.subresource == "binding")'; }   # every binding request

# ---- the cluster, preemptd's credential -----------------------------------------------------------
ok "stand-in API server up with deploy/preemptd.yaml's objects and RBAC" \
	standin_start node-1 --bookmark-interval 1 --grace-scale 0.1 --rbac "$DEPLOY"
running_pod() {	# running_pod NAME NODE PRIORITY CPU: a pod the kubelet already runs
	ctl POST /objects "{\"apiVersion\": \"v1\", \"kind\": \"Pod\",
	  \"metadata\": {\"namespace\": \"e2e\", \"name\": \"$1\", \"labels\": {\"app\": \"$1\"}},
	  \"spec\": {\"nodeName\": \"$2\", \"priority\": $3, \"containers\": [{\"name\": \"main\", \"image\": \"pause\",
	    \"resources\": {\"requests\": {\"cpu\": \"$4\", \"memory\": \"64Mi\"}}}]}}" | jq -e .metadata.uid >/dev/null
}
ok "node-1 (2 cpu)" node node-1 2 11
ok "node-2 (1 cpu)" node node-2 1 12
ok "e2e/low running on node-1 (priority 0, 1500m, grace 30 s)" running_pod low node-1 0 1500m
ok "the ServiceAccount's kubeconfig installed as $KUBECONFIG_CRED (root, 0600)" \
	install -m 600 "$KDIR/kubeconfig-sa-kube-system-preemptd" "$KUBECONFIG_CRED"

# ---- the unit ---------------------------------------------------------------------------------------
ok "preemptd.service is installed, not enabled (it needs its kubeconfig first)" \
	test "$(systemctl is-enabled preemptd.service 2>/dev/null)" = disabled
score=$(systemd-analyze security preemptd.service 2>/dev/null | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
note "systemd-analyze security preemptd.service: ${score:-none}"
ok "systemd-analyze security rates it at most 2.0 on this host" awk -v s="${score:-9}" 'BEGIN { exit !(s <= 2.0) }'
systemctl start preemptd.service
ok "systemctl start preemptd: active (running), which Type=notify reaches on READY=1" pd_running
pid1=$(pd MainPID)
uid=$(awk '/^Uid:/ { print $2 }' "/proc/$pid1/status" 2>/dev/null)
ok "it runs as a dynamic user (uid $uid), not root" test -n "$uid" -a "${uid:-0}" -ge 61184
ok "... with no capability" grep -q '^CapEff:[[:space:]]*0*$' "/proc/$pid1/status"
ok "... its kubeconfig read from the credentials directory" grep -qa -- '--kubeconfig.*/run/credentials/preemptd.service/kubeconfig' "/proc/$pid1/cmdline"
ok "journal: Lease kube-system/preemptd acquired" wait_until 60 pd_logged ".MESSAGE_ID == \"$MSGID_LEADER\""
readyz() { [ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:10271/readyz)" = 200 ]; }
ok "/readyz answers 200 (caches synced, leader)" wait_until 60 readyz

# ---- bind ---------------------------------------------------------------------------------------------
ok "e2e/web created pending (priority 100, 100m)" pending_pod web 100 100m
ok "e2e/web bound" wait_until 60 pod_bound web
ok "... and Running (the stand-in's kubelet)" wait_until 30 pod_running web
ok "... with its Scheduled Event" wait_until 30 req \
	'.resource == "events" and .body.reason == "Scheduled" and .body.regarding.name == "web" and .status == 201'
ok "journal: MESSAGE_ID pod bound for e2e/web with the node" wait_until 30 pd_logged \
	".MESSAGE_ID == \"$MSGID_POD_BOUND\" and .PREEMPTD_POD == \"e2e/web\" and (.PREEMPTD_NODE | startswith(\"node-\"))"

# ---- preempt ------------------------------------------------------------------------------------------
ok "e2e/big created pending (priority 1000, 1500m: fits nowhere)" pending_pod big 1000 1500m
ok "journal: preemption for e2e/big on node-1, victim e2e/low" wait_until 60 pd_logged \
	".MESSAGE_ID == \"$MSGID_PREEMPTION\" and .PREEMPTD_POD == \"e2e/big\" and .PREEMPTD_NODE == \"node-1\" and .PREEMPTD_VICTIMS == \"e2e/low\""
condition_then_delete() {	# the victim's condition was written before its DELETE
	requests | jq -e -s '
		(map(.method == "PATCH" and .name == "low" and .subresource == "status" and
		     any(.body.status.conditions[]?; .type == "DisruptionTarget" and .reason == "PreemptionByScheduler")) | index(true)) as $p |
		(map(.verb == "delete" and .name == "low" and .status == 200) | index(true)) as $d |
		$p != null and $d != null and $p < $d' >/dev/null
}
ok "the victim's DisruptionTarget (PreemptionByScheduler), then its DELETE" wait_until 30 condition_then_delete
ok "Event Preempted on the victim" wait_until 30 req \
	'.resource == "events" and .body.reason == "Preempted" and .body.regarding.name == "low" and .status == 201'
nominated() { api pods/e2e/big | jq -e '.status.nominatedNodeName == "node-1" or .spec.nodeName == "node-1"' >/dev/null; }
ok "e2e/big nominated to node-1" wait_until 30 nominated
ok "e2e/low is gone after its (scaled) grace period" wait_until 30 pod_gone low
ok "e2e/big bound to node-1 once the victim is gone" wait_until 60 pod_on big node-1
ok "... and Running there (it fits: the kubelet admitted it)" wait_until 30 pod_running big

# ---- restart --------------------------------------------------------------------------------------------
for p in r1 r2 r3; do pending_pod $p 50 100m; done
systemctl restart preemptd.service
for p in r4 r5 r6; do pending_pod $p 50 100m; done
ok "systemctl restart preemptd: active (running) again" wait_until 30 pd_running
pid2=$(pd MainPID)
ok "... a new process ($pid1 -> $pid2)" test -n "$pid2" -a "$pid2" != "$pid1" -a "$pid2" != 0
all_bound() { local p; for p in r1 r2 r3 r4 r5 r6; do pod_bound $p || return 1; done; }
ok "the six pods created around the restart are bound" wait_until 90 all_bound
sleep 2    # a late second binding would show in the record by now
bindings > "$STATE/bindings.jsonl"
once_each() {	# web, big, r1..r6: one binding request each, accepted
	jq -s -e 'group_by(.name) | all(length == 1 and .[0].status == 201) and length == 8' "$STATE/bindings.jsonl" >/dev/null ||
		{ jq -c '[.name, .status]' "$STATE/bindings.jsonl" | sed 's/^/# /'; return 1; }
}
ok "each pod bound exactly once: one binding request per pod, each accepted" once_each
none_failed() { ctl GET /objects/pods/e2e | jq -e 'all(.[]; .status.phase != "Failed")' >/dev/null; }
ok "no pod refused by a kubelet (no double placement)" none_failed
lease_held() { api leases/kube-system/preemptd | jq -e '(.spec.holderIdentity // "") != "" and .spec.leaseTransitions >= 1' >/dev/null; }
ok "the Lease held again, one transition or more" wait_until 30 lease_held
acquired_twice() { [ "$(pd_journal ".MESSAGE_ID == \"$MSGID_LEADER\" and (.MESSAGE | test(\"Acquired\"))" | wc -l)" -ge 2 ]; }
ok "journal: the Lease acquired twice (before and after the restart)" acquired_twice

# ---- RBAC, stop -------------------------------------------------------------------------------------------
ctl GET /rbac > "$STATE/rbac.json"
none_denied() { jq -e '.denied == [] and .allowed > 0' "$STATE/rbac.json" >/dev/null; }
ok "no request of preemptd refused by deploy/preemptd.yaml's roles" none_denied
note "permissions unused in this scenario: $(jq -r '[.roles[].rules[].atoms[] | select(.count == 0) | .verb + " " + .resource] | join(", ")' "$STATE/rbac.json")"
systemctl stop preemptd.service
ok "systemctl stop preemptd: inactive" test "$(pd ActiveState)" = inactive
released() { api leases/kube-system/preemptd | jq -e '(.spec.holderIdentity // "") == ""' >/dev/null; }
ok "... the Lease released (no holder)" released
journalctl -u preemptd.service --no-pager -o cat --since="@$((T0 - 2))" 2>/dev/null | tail -n 15 | sed 's/^/#   /'
done_testing
