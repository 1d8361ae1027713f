#!/bin/bash
# RBAC in the stand-in API server (tests/kube/apiserver.py, rbac.py): a ServiceAccount's token
# from a manifest given to --rbac, requests allowed or refused with kube-apiserver's 403 text as
# the RBAC authorizer decides from the stored roles and bindings (cluster-wide and namespaced,
# resourceNames, subresources), and the account of which rule atoms were used, which were not,
# and what was denied — the evidence that a role is exactly what a client needs. Then the same
# manifest applied with kubectl (when installed) instead of --rbac.
set -u
cd "$(dirname "$0")" || exit 1
. ../lib.sh
. ./lib-apiserver.sh
. ./lib-checks.sh
python3 -c 'import yaml' 2>/dev/null || skip_all "python3-yaml not installed"

manifest=$(mktemp); trap 'rm -f "$manifest"; kube_stop' EXIT
cat >"$manifest" <<'YAML'
apiVersion: v1
kind: ServiceAccount
metadata: {name: ctl, namespace: kube-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ctl}
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [pods/binding]
  verbs: [create]
- apiGroups: [events.k8s.io]
  resources: [events]
  verbs: [create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ctl}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ctl}
subjects: [{kind: ServiceAccount, name: ctl, namespace: kube-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: ctl-lease, namespace: kube-system}
rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [create]
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  resourceNames: [ctl]
  verbs: [get, update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: ctl-lease, namespace: kube-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: ctl-lease}
subjects: [{kind: ServiceAccount, name: ctl, namespace: kube-system}]
YAML

KUBE_NO_TRAP=1 kube_start --rbac "$manifest" --kubelet-start-delay 0.05 || { echo "not ok 1 - server starts"; exit 1; }
out=$KUBE_DIR/out
api=$KUBE_URL/api/v1
leases=$KUBE_URL/apis/coordination.k8s.io/v1/namespaces/kube-system/leases
SA=system:serviceaccount:kube-system:ctl
kube_apply "$(kube_pending_pod_json default p1)" >/dev/null
kube_apply "$(kube_pod_json default running node-1)" >/dev/null

sa=$(kube_ctl GET /serviceaccount/kube-system/ctl)
tok=$(jq -r .token <<<"$sa")
ok "the ServiceAccount from --rbac has a token, a kubeconfig and the in-cluster directory" eval '
	[ -n "$tok" ] && [ "$tok" != null ] && jq -e ".users[0].user.token==\"$tok\"" "$(jq -r .kubeconfig <<<"$sa")" >/dev/null &&
	d=$(jq -r .dir <<<"$sa") && is "$(cat "$d/token")" "$tok" && is "$(cat "$d/namespace")" kube-system && cmp -s "$d/ca.crt" "$KUBE_DIR/ca.crt"'
# as METHOD URL [BODY [CONTENT-TYPE]]: the ServiceAccount's request; code printed, body in $out
as() {
	local a=(-X "$1" -H "Authorization: Bearer $tok")
	[ $# -ge 3 ] && a+=(-H "Content-Type: ${4:-application/json}" --data-binary "$3")
	code anonymous "$2" "${a[@]}"
}
forbidden() {	# forbidden MESSAGE: the last answer is kube-apiserver's RBAC 403 with MESSAGE
	jqo --arg m "$1" '.kind=="Status" and .code==403 and .reason=="Forbidden" and .message==$m'
}

ok "list pods (ClusterRole, all namespaces): 200" is "$(as GET "$api/pods")" 200
ok "watch pods: 200" is "$(as GET "$api/pods?watch=1&timeoutSeconds=1")" 200
ok "get one pod: 200" is "$(as GET "$api/namespaces/default/pods/p1")" 200
binding='{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p1","namespace":"default"},"target":{"kind":"Node","name":"node-1"}}'
ok "create pods/binding (a subresource rule): 201" is "$(as POST "$api/namespaces/default/pods/p1/binding" "$binding")" 201
ok "patch pods/status, not granted: 403 naming the subresource" eval '
	is "$(as PATCH "$api/namespaces/default/pods/p1/status" "{}" application/merge-patch+json)" 403 &&
	forbidden "pods \"p1\" is forbidden: User \"$SA\" cannot patch resource \"pods/status\" in API group \"\" in the namespace \"default\""'
ok "delete a pod, not granted: 403 with the upstream message" eval '
	is "$(as DELETE "$api/namespaces/default/pods/running")" 403 &&
	forbidden "pods \"running\" is forbidden: User \"$SA\" cannot delete resource \"pods\" in API group \"\" in the namespace \"default\""'
ok "list nodes, not granted: 403 at the cluster scope" eval '
	is "$(as GET "$api/nodes")" 403 &&
	forbidden "nodes is forbidden: User \"$SA\" cannot list resource \"nodes\" in API group \"\" at the cluster scope"'
ev='{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"p1.1","namespace":"default"},"eventTime":"2026-01-02T03:04:05.000000Z","reportingController":"ctl","reportingInstance":"ctl-1","action":"Binding","reason":"Scheduled","type":"Normal","note":"Successfully assigned default/p1 to node-1","regarding":{"kind":"Pod","namespace":"default","name":"p1"}}'
ok "create an events.k8s.io Event: 201" is "$(as POST "$KUBE_URL/apis/events.k8s.io/v1/namespaces/default/events" "$ev")" 201
ok "create a core/v1 Event (another API group): 403" eval '
	is "$(as POST "$api/namespaces/default/events" "$(jq -c ".apiVersion=\"v1\" | .metadata.name=\"p1.2\"" <<<"$ev")")" 403 &&
	forbidden "events is forbidden: User \"$SA\" cannot create resource \"events\" in API group \"\" in the namespace \"default\""'
lease='{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"ctl","namespace":"kube-system"},"spec":{"holderIdentity":"a","leaseDurationSeconds":15}}'
ok "create a Lease in the Role's namespace: 201" is "$(as POST "$leases" "$lease")" 201
rv=$(jq -r .metadata.resourceVersion "$out")
ok "get the named Lease (resourceNames): 200" is "$(as GET "$leases/ctl")" 200
ok "update the named Lease: 200" is "$(as PUT "$leases/ctl" "$(jq -c ".metadata.resourceVersion=\"$rv\"" <<<"$lease")")" 200
ok "get another Lease of that namespace: 403 (resourceNames)" eval '
	kube_apply "$(jq -c ".metadata.name=\"other\"" <<<"$lease")" >/dev/null &&
	is "$(as GET "$leases/other")" 403 &&
	forbidden "leases.coordination.k8s.io \"other\" is forbidden: User \"$SA\" cannot get resource \"leases\" in API group \"coordination.k8s.io\" in the namespace \"kube-system\""'
ok "create a Lease in another namespace: 403 (a RoleBinding is namespaced)" \
	is "$(as POST "$KUBE_URL/apis/coordination.k8s.io/v1/namespaces/default/leases" "$(jq -c ".metadata.namespace=\"default\"" <<<"$lease")")" 403

kube_ctl GET /rbac >"$out"
ok "report: the ClusterRole and the Role with their bindings" \
	jqo '[.roles[]|.kind+"/"+.name+" "+(.bound_by|join(","))]|sort==["ClusterRole/ctl ClusterRoleBinding/ctl","Role/ctl-lease RoleBinding/kube-system/ctl-lease"]'
ok "report: every atom used, with how often (get pods: 1, list pods: 1, ...)" \
	jqo '[.roles[].rules[].atoms[]|select(.count==0)]==[] and ([.roles[].rules[].atoms[]|select(.resource=="pods" and .verb=="list")][0].count==1)'
ok "report: the named-lease atoms carry the resource name" \
	jqo 'any(.roles[].rules[].atoms[]; .resource=="leases" and .verb=="update" and .resource_name=="ctl" and .count==1)'
ok "report: the six denials, each with its attributes" \
	jqo '[.denied[]|.verb+" "+.api_group+"/"+.resource+" "+.namespace+"/"+.name]|sort==["create /events default/","create coordination.k8s.io/leases default/","delete /pods default/running","get coordination.k8s.io/leases kube-system/other","list /nodes /","patch /pods/status default/p1"]'
kube_ctl DELETE /rbac >/dev/null
kube_ctl GET /rbac >"$out"
ok "report reset: nothing used, nothing denied" jqo '[.roles[].rules[].atoms[]|select(.count>0)]==[] and .denied==[] and .allowed==0'
as GET "$api/pods" >/dev/null
kube_ctl GET /rbac >"$out"
ok "... and an unused verb shows: after one list, get and watch are unused" \
	jqo '[.roles[].rules[0].atoms[]?|select(.resource=="pods" and .count==0)|.verb]|sort==["get","watch"]'
kube_ctl DELETE /objects/serviceaccounts/kube-system/ctl >/dev/null
ok "the ServiceAccount deleted: its token is refused (401)" is "$(as GET "$api/pods")" 401
ok "the node identity keeps the node authorizer's rules beside RBAC" \
	is "$(code node "$api/pods?fieldSelector=spec.nodeName%3Dnode-1")" 200

if command -v kubectl >/dev/null 2>&1; then
	kube_stop
	KUBE_NO_TRAP=1 kube_start || { echo "not ok - server restarts"; exit 1; }
	out=$KUBE_DIR/out; api=$KUBE_URL/api/v1
	k() { kubectl --kubeconfig "$KUBE_DIR/kubeconfig-admin" --cache-dir "$KUBE_DIR/kcache" --request-timeout 10s "$@"; }
	ok "kubectl apply -f the manifest (client-side apply): every object created" eval '
		k apply --validate=false -f "$manifest" >"$out" 2>&1 && is "$(grep -c " created$" "$out")" 5'
	ok "... and applied again: unchanged" eval 'k apply --validate=false -f "$manifest" >"$out" 2>&1 && is "$(grep -c " unchanged$" "$out")" 5'
	tok=$(kube_ctl GET /serviceaccount/kube-system/ctl | jq -r .token)
	ok "the applied roles are enforced: the ServiceAccount lists pods, is refused nodes" eval '
		is "$(as GET "$api/pods")" 200 && is "$(as GET "$api/nodes")" 403'
else
	skip "kubectl apply of the manifest" "kubectl not installed"
fi
done_testing
