#!/bin/bash
# preemptctl and the ResourceQuota admission plugin (issue 30): a pod the API server would refuse
# at creation is refused before any scheduling, with kube-apiserver's own message; quota is charged
# at creation in input order; check reports refusals, spent quotas and classes no quota covers.
# The scenario is the README's (examples/quota/); the other inputs are written here.
. "$(dirname "$0")/../../lib.sh"

PCTL=$BUILD/preemptctl
E=examples/quota
A=$E/admission.yaml
[ -x "$PCTL" ] || skip_all "$PCTL not built"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
NOW=--now=2024-06-01T00:00:00Z
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/fuzz/lsan.supp:print_suppressions=0}
. "$(dirname "$0")/lib-expect.sh"

SCOPES='insufficient quota to match these scopes: [{PriorityClass In [cluster-services]}]'

# --- preempt: the README's scenario -------------------------------------------------------------
ok "without the admission configuration a tenant's pod at cluster-services preempts like any other" expect 0 \
	'{"pod":"tenant-a/log-agent","node":"node-1","victims":["tenant-a/batch-2"]}' "" \
	"$PCTL" preempt $E/cluster.yaml $E/tenant-pod.yaml --pod tenant-a/log-agent $NOW
ok "with it, the tenant's pod is refused at admission with the API server's message, exit 0" expect 0 \
	"{\"pod\":\"tenant-a/log-agent\",\"node\":null,\"refused\":\"ResourceQuota\",\"reason\":\"$SCOPES\"}" "" \
	"$PCTL" preempt $E/cluster.yaml $E/tenant-pod.yaml --pod tenant-a/log-agent --admission-config $A $NOW
ok "the same pod in kube-system, where a quota covers the class, is admitted and preempts" expect 0 \
	'{"pod":"kube-system/log-agent","node":"node-1","victims":["tenant-a/batch-2"]}' "" \
	"$PCTL" preempt $E/cluster.yaml $E/system-pod.yaml --pod kube-system/log-agent --admission-config $A $NOW
ok "a pod over the tenant's spent compute quota: 'exceeded quota', the usage counted from the pods" expect 0 \
	'{"pod":"tenant-a/batch-3","node":null,"refused":"ResourceQuota","reason":"pods \"batch-3\" is forbidden: exceeded quota: compute, requested: requests.cpu=3, used: requests.cpu=6, limited: requests.cpu=8"}' "" \
	"$PCTL" preempt $E/cluster.yaml $E/batch-pod.yaml --pod tenant-a/batch-3 $NOW
ok "--explain says why and claims no preemption" expect 0 "*" \
"pod tenant-a/log-agent: refused at admission by the ResourceQuota plugin (HTTP 500): $SCOPES
  why: the admission configuration (limitedResources.matchScopes) allows these scopes only in a namespace where the scopes of a ResourceQuota cover them, and none here does
decision: refused at admission: the pod is never created, so nothing is scheduled and nothing is preempted" \
	"$PCTL" preempt $E/cluster.yaml $E/tenant-pod.yaml --pod tenant-a/log-agent --admission-config $A --explain $NOW
ok "another refused pod of the input is left out, with a warning" expect 0 \
	'{"pod":"kube-system/log-agent","node":"node-1","victims":["tenant-a/batch-2"]}' \
	"$E/tenant-pod.yaml:2: warning: pods/tenant-a/log-agent: refused at admission by the ResourceQuota plugin, so not created: $SCOPES" \
	"$PCTL" preempt $E/cluster.yaml $E/tenant-pod.yaml $E/system-pod.yaml --pod kube-system/log-agent --admission-config $A $NOW

# --- schedule -------------------------------------------------------------------------------------
ok "schedule: refused pods are events at time 0, before anything is scheduled" expect 0 \
"{\"time\":0,\"event\":\"refused\",\"pod\":\"tenant-a/log-agent\",\"plugin\":\"ResourceQuota\",\"message\":\"$SCOPES\"}
{\"time\":0,\"event\":\"refused\",\"pod\":\"tenant-a/batch-3\",\"plugin\":\"ResourceQuota\",\"message\":\"pods \\\"batch-3\\\" is forbidden: exceeded quota: compute, requested: requests.cpu=3, used: requests.cpu=6, limited: requests.cpu=8\"}
{\"time\":0,\"event\":\"nominate\",\"pod\":\"kube-system/log-agent\",\"node\":\"node-1\",\"victims\":[\"tenant-a/batch-2\"]}
{\"time\":30,\"event\":\"victim-gone\",\"pod\":\"tenant-a/batch-2\",\"node\":\"node-1\",\"preemptor\":\"kube-system/log-agent\"}
{\"time\":30,\"event\":\"bind\",\"pod\":\"kube-system/log-agent\",\"node\":\"node-1\"}" \
	"preemptctl: idle at 30s: 1 bound, 1 preemption, 0 pods still pending, 0 victims terminating, 2 refused at admission" \
	"$PCTL" schedule $E/cluster.yaml $E/tenant-pod.yaml $E/system-pod.yaml $E/batch-pod.yaml --admission-config $A --until-idle $NOW

# Quota is charged when a pod is created, not when it is bound: of two new pods and room for one,
# the first of the input is admitted even though the second has the higher priority and would be
# scheduled first.
cat > "$tmp/order.yaml" <<'EOF'
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: one-pod, namespace: q}
spec: {hard: {pods: "1"}}
---
apiVersion: v1
kind: Pod
metadata: {name: first, namespace: q}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: second, namespace: q}
spec: {priorityClassName: high, containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
EOF
ok "schedule: quota is charged at creation, in input order, not at binding" expect 0 \
'{"time":0,"event":"refused","pod":"q/second","plugin":"ResourceQuota","message":"pods \"second\" is forbidden: exceeded quota: one-pod, requested: pods=1, used: pods=1, limited: pods=1"}
{"time":0,"event":"bind","pod":"q/first","node":"n1"}' "*" \
	"$PCTL" schedule "$tmp/order.yaml" --until-idle $NOW

# --- check ----------------------------------------------------------------------------------------
WARN_METRICS="$E/cluster.yaml:54: warning: pods/tenant-a/metrics: namespace tenant-a runs 1 pod at PriorityClass cluster-services that the admission configuration limits (limitedResources) and no ResourceQuota of tenant-a covers: a pod like it, created now, is refused: $SCOPES"
ok "check: a running pod at a class the configuration limits and no quota of its namespace covers is a warning" \
	expect 0 "ok: 2 PriorityClasses, 2 nodes, 3 pods (3 bound, 0 pending, 0 finished), 0 PodDisruptionBudgets, 2 ResourceQuotas, 1 warning" \
	"$WARN_METRICS" "$PCTL" check $E/cluster.yaml --admission-config $A
ok "check: a pod of the input that the API server would refuse is a problem" expect 1 "" \
"$E/tenant-pod.yaml:2: pods/tenant-a/log-agent: refused at admission by the ResourceQuota plugin: $SCOPES
$WARN_METRICS
preemptctl: 1 problem found" \
	"$PCTL" check $E/cluster.yaml $E/tenant-pod.yaml --admission-config $A

# A snapshot as `kubectl get resourcequota -A -o json` prints it: status.used is the API server's,
# not counted again from the pods (here it says more than the pods use), and its formats print back.
cat > "$tmp/status.json" <<'EOF'
{"apiVersion": "v1", "kind": "List", "items": [
 {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
  "status": {"allocatable": {"cpu": "8", "memory": "8Gi", "pods": "10"}}},
 {"apiVersion": "v1", "kind": "ResourceQuota",
  "metadata": {"name": "compute", "namespace": "team", "creationTimestamp": "2024-05-01T00:00:00Z"},
  "spec": {"hard": {"requests.cpu": "2", "requests.memory": "4Gi", "limits.memory": "8Gi"}},
  "status": {"hard": {"requests.cpu": "2", "requests.memory": "4Gi", "limits.memory": "8Gi"},
             "used": {"requests.cpu": "1500m", "requests.memory": "1536Mi", "limits.memory": "2Gi"}}},
 {"apiVersion": "v1", "kind": "ResourceQuota",
  "metadata": {"name": "over", "namespace": "spent", "creationTimestamp": "2024-05-01T00:00:00Z"},
  "spec": {"hard": {"pods": "2"}}, "status": {"hard": {"pods": "2"}, "used": {"pods": "3"}}},
 {"apiVersion": "v1", "kind": "ResourceQuota",
  "metadata": {"name": "unsynced", "namespace": "fresh"},
  "spec": {"hard": {"pods": "2", "requests.cpu": "1"}}, "status": {"hard": {"pods": "2", "requests.cpu": "1"}, "used": {"pods": "0"}}}
]}
EOF
pod() { # pod NAMESPACE NAME RESOURCES-JSON: a new pod's manifest
	printf '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "%s", "namespace": "%s"}, "spec": {"containers": [{"name": "app", "image": "x", "resources": %s}]}}\n' "$2" "$1" "$3"
}
pod team web '{"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"memory": "1Gi"}}' > "$tmp/web.json"
pod team lim '{"limits": {"cpu": "600m", "memory": "3Gi"}}' > "$tmp/lim.json"
pod team nolimit '{"requests": {"cpu": "100m", "memory": "1Gi"}}' > "$tmp/nolimit.json"
pod fresh new '{"requests": {"cpu": "100m"}}' > "$tmp/fresh.json"
ok "status.used as the API server wrote it, in its own formats" expect 0 \
	'{"pod":"team/web","node":null,"refused":"ResourceQuota","reason":"pods \"web\" is forbidden: exceeded quota: compute, requested: requests.cpu=1, used: requests.cpu=1500m, limited: requests.cpu=2"}' "" \
	"$PCTL" preempt "$tmp/status.json" "$tmp/web.json" --pod team/web $NOW
ok "limits without requests are requests (the API server's defaulting), so they count as such" expect 0 \
	'{"pod":"team/lim","node":null,"refused":"ResourceQuota","reason":"pods \"lim\" is forbidden: exceeded quota: compute, requested: requests.cpu=600m,requests.memory=3Gi, used: requests.cpu=1500m,requests.memory=1536Mi, limited: requests.cpu=2,requests.memory=4Gi"}' "" \
	"$PCTL" preempt "$tmp/status.json" "$tmp/lim.json" --pod team/lim $NOW
ok "a quota limiting limits.memory makes every container state it" expect 0 \
	'{"pod":"team/nolimit","node":null,"refused":"ResourceQuota","reason":"pods \"nolimit\" is forbidden: failed quota: compute: must specify limits.memory for: app"}' "" \
	"$PCTL" preempt "$tmp/status.json" "$tmp/nolimit.json" --pod team/nolimit $NOW
ok "a quota whose status does not count a limited resource yet refuses until it does" expect 0 \
	'{"pod":"fresh/new","node":null,"refused":"ResourceQuota","reason":"pods \"new\" is forbidden: status unknown for quota: unsynced, resources: pods,requests.cpu"}' "" \
	"$PCTL" preempt "$tmp/status.json" "$tmp/fresh.json" --pod fresh/new $NOW
ok "check: a quota already above its limit is a warning" expect 0 \
	"ok: 0 PriorityClasses, 1 node, 0 pods (0 bound, 0 pending, 0 finished), 0 PodDisruptionBudgets, 3 ResourceQuotas, 1 warning" \
	"$tmp/status.json:9: warning: resourcequotas/spent/over: usage above the limit (used: pods=3, limited: pods=2): new pods of spent that use pods are refused" \
	"$PCTL" check "$tmp/status.json"

# --- the configuration: matchContains, the default class, its file ---------------------------------
cat > "$tmp/contains.yaml" <<'EOF'
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: ResourceQuota
  path: rq.yaml
EOF
cat > "$tmp/rq.yaml" <<'EOF'
apiVersion: resourcequota.admission.k8s.io/v1beta1
kind: Configuration
limitedResources:
- resource: pods
  matchContains: ["requests.memory"]
- resource: pods
  matchScopes: [{scopeName: PriorityClass, operator: In, values: [batch]}]
EOF
pod tenant-b plain '{"requests": {"cpu": "1"}}' > "$tmp/plain.json"
ok "matchContains: memory only where a quota limits it (the plugin's configuration by path, v1beta1)" expect 0 \
	'{"pod":"tenant-a/batch-3","node":null,"refused":"ResourceQuota","reason":"pods \"batch-3\" is forbidden: insufficient quota to consume: requests.memory"}' "" \
	"$PCTL" preempt $E/cluster.yaml $E/batch-pod.yaml --pod tenant-a/batch-3 --admission-config "$tmp/contains.yaml" $NOW
ok "a pod naming no class gets the globalDefault before the quota plugin looks at its class" expect 0 \
	'{"pod":"tenant-b/plain","node":null,"refused":"ResourceQuota","reason":"insufficient quota to match these scopes: [{PriorityClass In [batch]}]"}' "" \
	"$PCTL" preempt $E/cluster.yaml "$tmp/plain.json" --pod tenant-b/plain --admission-config "$tmp/contains.yaml" $NOW
ok "--admission-config twice is a usage error" expect 2 "" "~--admission-config given twice" \
	"$PCTL" preempt $E/cluster.yaml --pod a/b --admission-config $A --admission-config $A
ok "schedule: --admission-config twice too" expect 2 "" "~--admission-config given twice" \
	"$PCTL" schedule $E/cluster.yaml --admission-config $A --admission-config $A
ok "a missing admission configuration rejects the input" expect 1 "" \
"preemptctl: $tmp/none.yaml: No such file or directory
preemptctl: nothing decided: the admission configuration $tmp/none.yaml cannot be read; give the file kube-apiserver's --admission-control-config-file names" \
	"$PCTL" preempt $E/cluster.yaml --pod tenant-a/batch-1 --admission-config "$tmp/none.yaml" $NOW
sed 's/matchScopes:/matchScope:/' "$A" > "$tmp/typo.yaml"
ok "a misspelt field of the configuration is an error (kube-apiserver decodes it strictly)" expect 1 "" \
"$tmp/typo.yaml:12: ResourceQuotaConfiguration: plugins[0].configuration.limitedResources[0].matchScope: unknown field (kube-apiserver decodes this file strictly)
preemptctl: 1 problem found" \
	"$PCTL" check $E/cluster.yaml --admission-config "$tmp/typo.yaml"
sed 's/operator: In/operator: in/' "$A" > "$tmp/op.yaml"
ok "an operator kube-apiserver could not evaluate (it would admit every pod) is an error" expect 1 "" \
"$tmp/op.yaml:11: ResourceQuota plugin configuration: limitedResources[0].matchScopes[0].operator: not a valid selector operator \"in\" (In, NotIn, Exists or DoesNotExist)
preemptctl: 1 problem found" \
	"$PCTL" check $E/cluster.yaml --admission-config "$tmp/op.yaml"
printf 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: pod-security.yaml\n' > "$tmp/other.yaml"
ok "a configuration without the ResourceQuota plugin: its default applies, with a warning" expect 0 "*" \
	"$tmp/other.yaml: warning: no plugin named ResourceQuota: its default configuration applies (no limitedResources)" \
	"$PCTL" check $E/cluster.yaml --admission-config "$tmp/other.yaml"
done_testing
