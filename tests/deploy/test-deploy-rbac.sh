#!/bin/bash
# deploy/preemptd.yaml's roles are exactly what preemptd needs. The stand-in API server starts
# with the manifest's objects (--rbac) and enforces RBAC; preemptd runs as the manifest's
# ServiceAccount (its token, no other credential) through a cycle that makes every kind of
# request it has: the four lists and watches, the Lease (get, create, renewals), a binding with
# its Event, a preemption (status patches, the victim's DELETE, Events), a FailedScheduling repeated
# (its series patched), then with --pdb strict a
# preemption through the Eviction API. Then the stand-in's account must show no denied request and
# no permission left unused. A second run with `delete pods` taken out of the ClusterRole shows the
# check seeing a missing permission.
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
PREEMPTD=$BUILD/preemptd
[ -x "$PREEMPTD" ] || skip_all "$PREEMPTD not built"
for t in python3 curl openssl jq; do
	command -v "$t" >/dev/null || skip_all "$t not installed"
done
python3 -c 'import yaml' 2>/dev/null || skip_all "python3-yaml not installed"
. tests/kube/lib-apiserver.sh
kube_start --rbac deploy/preemptd.yaml --grace-scale 0.02 --bookmark-interval 1 ||
	bail "the stand-in API server starts with deploy/preemptd.yaml"
out=$KUBE_DIR/out
PD=
trap 'if [ -n "$PD" ]; then kill "$PD" 2>/dev/null; wait "$PD" 2>/dev/null; fi; kube_stop' EXIT

jqf() { jq -e "$1" "$out" >/dev/null; }    # jqf FILTER: the last report ($out) matches
logged() { kube_requests | jq -e -s "any(.[]; $1)" >/dev/null; }    # logged JQ-CONDITION
waitfor() {	# waitfor SECONDS JQ-CONDITION: some request in the log matches, polled
	local end=$((SECONDS + $1))
	until logged "$2"; do [ $SECONDS -ge "$end" ] && return 1; sleep 0.2; done
}
run_preemptd() {	# a cluster where preemptd must bind one pod and preempt for another
	kube_apply "$(kube_node_json node-1 2 4Gi)" >/dev/null
	kube_apply "$(kube_node_json node-2 1 2Gi)" >/dev/null
	kube_apply "$(kube_pod_json default low node-1 0 1Gi 1500m)" >/dev/null
	kube_apply '{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"namespace":"default","name":"low"},"spec":{"minAvailable":0,"selector":{"matchLabels":{"app":"low"}}}}' >/dev/null
	kube_apply "$(kube_pending_pod_json default fits 100 100m 64Mi)" >/dev/null
	kube_apply "$(kube_pending_pod_json default big 1000 1500m 256Mi)" >/dev/null
	start_preemptd
}
start_preemptd() {
	"$PREEMPTD" --config /dev/null --kubeconfig "$KUBE_DIR/kubeconfig-sa-kube-system-preemptd" \
		--listen "" --log-target stderr --leader-elect-retry-period 1s "$@" >>"$KUBE_DIR/preemptd.log" 2>&1 &
	PD=$!
}
stop_preemptd() { kill "$PD"; wait "$PD"; PD=; }

run_preemptd
ok "preemptd as the ServiceAccount acquires the Lease (get, create) and renews it (update)" \
	waitfor 20 '.resource=="leases" and .verb=="update" and .status==200'
ok "... binds the pod that fits (a binding, then the Scheduled Event)" \
	waitfor 20 '.subresource=="binding" and .name=="fits" and .status==201'
ok "... preempts for the pod that does not: the victim's DELETE" \
	waitfor 20 '.verb=="delete" and .resource=="pods" and .name=="low" and .status==200'
ok "... and its Events" waitfor 20 '.resource=="events" and .api_group=="events.k8s.io" and .body.reason=="Preempted" and .status==201'
# a pod that fits nowhere, tried again after a bound pod went (which may free room; a node label
# it does not select no longer requeues it, as with kube's queueing hints): its FailedScheduling
# grows a series
kube_apply "$(kube_pending_pod_json default huge 0 64 64Mi)" >/dev/null
waitfor 20 '.resource=="events" and .body.reason=="FailedScheduling" and .body.regarding.name=="huge" and .status==201'
series_patched() {
	local i
	for i in $(seq 20); do
		kube_apply "$(kube_pod_json default "gone-$i" node-2 0 1Mi 1m)" >/dev/null
		kube_curl admin -s -X DELETE "$KUBE_URL/api/v1/namespaces/default/pods/gone-$i" >/dev/null
		logged '.resource=="events" and .verb=="patch" and .status==200' && return 0
		sleep 1
	done
	return 1
}
ok "... and the series of a repeated FailedScheduling (patch on events)" series_patched
stop_preemptd
# --pdb strict: the next victim is evicted (node-1 and node-2 keep too little room for big2)
kube_apply "$(kube_node_json node-3 1 2Gi)" >/dev/null
kube_apply "$(kube_pod_json default low2 node-3 0 1Gi 1000m)" >/dev/null
kube_apply "$(kube_pending_pod_json default big2 1000 1000m 256Mi)" >/dev/null
start_preemptd --pdb strict
ok "with --pdb strict, the victim is evicted (create on pods/eviction)" \
	waitfor 20 '.subresource=="eviction" and .name=="low2" and .status==201'
stop_preemptd
kube_ctl GET /rbac >"$out"
ok "no request of preemptd was refused" jqf '.denied==[]'
unused=$(jq -r '.roles[]|.kind+"/"+.name as $r|.rules[].atoms[]|select(.count==0)|"\($r): \(.verb) \(.api_group)/\(.resource) \(.resource_name)"' "$out")
ok "every permission of the ClusterRole and the Role was used${unused:+ (unused: $(echo $unused))}" test -z "$unused"
ok "... through the ServiceAccount's bindings" jqf '[.roles[].bound_by[]]|sort==["ClusterRoleBinding/preemptd","RoleBinding/kube-system/preemptd-lease"]'
ok "preemptd logged no refusal" bash -c "! grep -qi forbidden '$KUBE_DIR/preemptd.log'"

# The same run with `delete pods` taken out of the ClusterRole: the denial must show.
kube_ctl POST /reset >/dev/null
kube_ctl POST /objects "$(python3 -c 'import json, sys, yaml
for d in yaml.safe_load_all(open("deploy/preemptd.yaml")):
    if d and d["kind"] == "ClusterRole":
        d["rules"] = [r for r in d["rules"] if r.get("verbs") != ["delete"]]
    if d:
        print(json.dumps(d))' | jq -s -c .)" >/dev/null
run_preemptd
waitfor 20 '.verb=="delete" and .name=="low"'
# the refusal is logged when preemptd reads the answer: under a sanitizer that can come a moment
# after the stand-in logged it, and a SIGTERM before then drops the write unread
for _ in $(seq 100); do grep -i forbidden "$KUBE_DIR/preemptd.log" | grep -qi delete && break; sleep 0.1; done
stop_preemptd
kube_ctl GET /rbac >"$out"
ok "without 'delete pods' preemptd reports the refused DELETE" \
	bash -c "grep -i forbidden '$KUBE_DIR/preemptd.log' | grep -qi delete"
ok "... and the account shows it" \
	jqf 'any(.denied[]; .verb=="delete" and .resource=="pods" and .name=="low" and .user=="system:serviceaccount:kube-system:preemptd")'
done_testing
