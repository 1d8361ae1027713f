#!/bin/bash
# Self-test of the stand-in API server (tests/kube/apiserver.py): the wire behaviour the
# Kubernetes clients of evictd and preemptctl rely on, checked with curl (and kubectl when
# installed), so that a client test failing against it is the client's fault.
set -u
cd "$(dirname "$0")" || exit 1
. ../lib.sh
. ./lib-apiserver.sh
. ./lib-checks.sh

kube_start --bookmark-interval 0.3 --grace-scale 0.02 || { echo "not ok 1 - server starts"; exit 1; }
N=$KUBE_NODE
ca=(--cacert "$KUBE_DIR/ca.crt")
pods="$KUBE_URL/api/v1/pods"
mine="fieldSelector=spec.nodeName%3D$N"
out=$KUBE_DIR/out

kube_apply "$(kube_pod_json default web $N 100 512Mi)" >/dev/null
kube_apply "$(kube_pod_json default db $N 1000 1Gi)" >/dev/null
kube_apply "$(kube_pod_json kube-system crit $N 2000001000 128Mi)" >/dev/null
kube_apply "$(kube_pod_json default elsewhere node-2 0 64Mi)" >/dev/null
kube_apply '{"apiVersion":"v1","kind":"Node","metadata":{"name":"'$N'"}}' >/dev/null
kube_apply '{"apiVersion":"v1","kind":"Node","metadata":{"name":"node-2"}}' >/dev/null

# --- TLS and authentication ------------------------------------------------------------------
ok "server certificate verifies against the test CA for 127.0.0.1" is "$(code admin "$KUBE_URL/version")" 200
ok "no credentials: 401 Unauthorized Status" \
	eval 'is "$(code anonymous "$pods")" 401 && jqo ".kind==\"Status\" and .reason==\"Unauthorized\" and .code==401"'
ok "expired client certificate: 401" is "$(code expired "$pods")" 401
ok "client certificate from an unknown CA: TLS refused" \
	eval '! kube_curl rogue -o /dev/null "$pods"'
ok "admin bearer token: 200" is "$(code admin-token "$pods")" 200
ok "unknown bearer token: 401" is "$(code anonymous "$pods" -H 'Authorization: Bearer nope')" 401
d2=$KUBE_DIR/expired-server; mkdir -p "$d2"
python3 apiserver.py --dir "$d2" --certs "$KUBE_DIR" --expired-server-cert 2>/dev/null & xp=$!
for _ in $(seq 100); do [ -s "$d2/ports.json" ] && break; sleep 0.05; done
xport=$(jq -r .port "$d2/ports.json" 2>/dev/null)
curl -s "${ca[@]}" -o /dev/null "https://127.0.0.1:$xport/version" 2>"$d2/err"; xrc=$?
ok "expired server certificate: the client's verification fails (curl 60)" is "$xrc" 60
kill "$xp"; wait "$xp" 2>/dev/null
ok "the server exits on SIGTERM and removes its ports file" eval '[ ! -e "$d2/ports.json" ]'

# --- discovery ----------------------------------------------------------------------------------
ok "/api lists v1" eval 'code admin "$KUBE_URL/api" >/dev/null && jqo ".versions==[\"v1\"]"'
ok "/api/v1 has pods, pods/status, pods/eviction" eval 'code admin "$KUBE_URL/api/v1" >/dev/null &&
	jqo "[.resources[].name] | contains([\"pods\",\"pods/status\",\"pods/eviction\",\"events\",\"nodes\"])"'
ok "/apis has scheduling.k8s.io, policy, events.k8s.io" eval 'code admin "$KUBE_URL/apis" >/dev/null &&
	jqo "[.groups[].name] | contains([\"scheduling.k8s.io\",\"policy\",\"events.k8s.io\"])"'

# --- lists --------------------------------------------------------------------------------------
ok "list across namespaces: PodList in etcd key order, resourceVersion set" eval 'code admin "$pods" >/dev/null &&
	jqo "(.kind==\"PodList\") and ([.items[].metadata.name]==[\"db\",\"elsewhere\",\"web\",\"crit\"]) and (.metadata.resourceVersion|tonumber>0)"'
ok "list one namespace" eval 'code admin "$KUBE_URL/api/v1/namespaces/kube-system/pods" >/dev/null &&
	jqo "[.items[].metadata.name]==[\"crit\"]"'
ok "pod JSON as kubectl prints it (uid, qosClass, containerd:// IDs, priority, grace)" eval '
	code admin "$KUBE_URL/api/v1/namespaces/default/pods/web" >/dev/null &&
	jqo ".kind==\"Pod\" and (.metadata.uid|test(\"^[0-9a-f-]{36}$\")) and .status.qosClass==\"Burstable\"
	     and (.status.containerStatuses[0].containerID|startswith(\"containerd://\")) and .spec.priority==100
	     and .spec.terminationGracePeriodSeconds==30 and .spec.preemptionPolicy==\"PreemptLowerPriority\"
	     and .status.phase==\"Running\""'
ok "GET a missing pod: 404 NotFound Status with details" eval '
	is "$(code admin "$KUBE_URL/api/v1/namespaces/default/pods/nope")" 404 &&
	jqo ".reason==\"NotFound\" and .message==\"pods \\\"nope\\\" not found\" and .details.name==\"nope\""'
ok "fieldSelector metadata.name and metadata.namespace" eval '
	code admin "$pods?fieldSelector=metadata.name%3Dweb,metadata.namespace%3Ddefault" >/dev/null &&
	jqo "[.items[].metadata.name]==[\"web\"]"'
ok "labelSelector" eval 'code admin "$pods?labelSelector=app%3Ddb" >/dev/null && jqo "[.items[].metadata.name]==[\"db\"]"'
ok "unknown field selector: 400 BadRequest" is "$(code admin "$pods?fieldSelector=spec.bogus%3Dx")" 400
code admin "$pods?limit=2" >/dev/null; tok=$(jq -r .metadata.continue "$out"); rv1=$(jq -r .metadata.resourceVersion "$out")
ok "limit=2: two items, a continue token, remainingItemCount 2" \
	eval 'jqo "(.items|length)==2 and .metadata.remainingItemCount==2" && [ -n "$tok" ] && [ "$tok" != null ]'
code admin "$pods?limit=2&continue=$tok" >/dev/null
ok "continue: the rest, same resourceVersion, no further token" \
	eval 'jqo "[.items[].metadata.name]==[\"web\",\"crit\"] and .metadata.resourceVersion==\"$rv1\" and (.metadata.continue==null)"'

# --- node authorizer ----------------------------------------------------------------------------
ok "node lists pods without the field selector: 403 with the node authorizer's reason" eval '
	is "$(code node "$pods")" 403 &&
	jqo ".message==\"pods is forbidden: User \\\"system:node:$N\\\" cannot list resource \\\"pods\\\" in API group \\\"\\\" at the cluster scope: can only list/watch pods with spec.nodeName field selector\""'
ok "node lists with spec.nodeName=itself: only its pods" eval '
	is "$(code node "$pods?$mine")" 200 && jqo "[.items[].metadata.name]==[\"db\",\"web\",\"crit\"]"'
ok "node token identity follows the same rule" is "$(code node-token "$pods?$mine")" 200
ok "node gets its own pod" is "$(code node "$KUBE_URL/api/v1/namespaces/default/pods/web")" 200
ok "node gets another node's pod: 403 no relationship" eval '
	is "$(code node "$KUBE_URL/api/v1/namespaces/default/pods/elsewhere")" 403 && jqo ".message|endswith(\"no relationship found between node '"'$N'"' and this object\")"'
ok "node reads priorityclasses: 403" eval '
	is "$(code node "$KUBE_URL/apis/scheduling.k8s.io/v1/priorityclasses")" 403 &&
	jqo ".message|startswith(\"priorityclasses.scheduling.k8s.io is forbidden\")"'
ok "node reads poddisruptionbudgets: 403" is "$(code node "$KUBE_URL/apis/policy/v1/poddisruptionbudgets")" 403
ok "node gets its own Node, not another" eval '
	is "$(code node "$KUBE_URL/api/v1/nodes/$N")" 200 && is "$(code node "$KUBE_URL/api/v1/nodes/node-2")" 403'
ok "admin reads the built-in priorityclasses" eval '
	code admin "$KUBE_URL/apis/scheduling.k8s.io/v1/priorityclasses" >/dev/null &&
	jqo "[.items[]|{(.metadata.name): .value}]|add == {\"system-cluster-critical\":2000000000,\"system-node-critical\":2000001000}"'
ev='{"apiVersion":"v1","kind":"Event","metadata":{"generateName":"web.","namespace":"default"},
 "involvedObject":{"kind":"Pod","namespace":"default","name":"web","apiVersion":"v1"},
 "reason":"Evicted","message":"The node was low on resource: memory.","type":"Warning",
 "source":{"component":"evictd","host":"'$N'"},"count":1}'
ok "node creates a core/v1 Event: 201, named from generateName" eval '
	is "$(code node "$KUBE_URL/api/v1/namespaces/default/events" -X POST -H "Content-Type: application/json" -d "$ev")" 201 &&
	jqo ".kind==\"Event\" and (.metadata.name|startswith(\"web.\")) and .reason==\"Evicted\""'
ok "Event in another namespace than the URL: 400" is "$(code node "$KUBE_URL/api/v1/namespaces/other/events" -X POST -H "Content-Type: application/json" -d "$ev")" 400
ok "node may not create events.k8s.io/v1 Events" is "$(code node "$KUBE_URL/apis/events.k8s.io/v1/namespaces/default/events" -X POST -H "Content-Type: application/json" -d "$ev")" 403

# --- pods/status PATCH ----------------------------------------------------------------------------
st='{"status":{"conditions":[{"type":"DisruptionTarget","status":"True","reason":"TerminationByKubelet","message":"low on memory"}]}}'
ok "strategic-merge status patch adds a condition and keeps the others" eval '
	is "$(code node "$KUBE_URL/api/v1/namespaces/default/pods/web/status" -X PATCH -H "Content-Type: application/strategic-merge-patch+json" -d "$st")" 200 &&
	jqo "([.status.conditions[].type]|contains([\"Ready\",\"DisruptionTarget\"])) and (.status.conditions|map(select(.type==\"DisruptionTarget\"))[0].reason==\"TerminationByKubelet\")"'
st2='{"status":{"conditions":[{"type":"DisruptionTarget","status":"True","reason":"Again"}]}}'
ok "a second strategic patch of the same type replaces it (merged by type)" eval '
	code node "$KUBE_URL/api/v1/namespaces/default/pods/web/status" -X PATCH -H "Content-Type: application/strategic-merge-patch+json" -d "$st2" >/dev/null &&
	jqo "(.status.conditions|map(select(.type==\"DisruptionTarget\"))|length)==1 and (.status.conditions|map(select(.type==\"DisruptionTarget\"))[0].reason==\"Again\")"'
ok "status patch ignores spec changes" eval '
	code admin "$KUBE_URL/api/v1/namespaces/default/pods/web/status" -X PATCH -H "Content-Type: application/merge-patch+json" -d "{\"spec\":{\"nodeName\":\"x\"},\"status\":{\"message\":\"m\"}}" >/dev/null &&
	jqo ".spec.nodeName==\"$N\" and .status.message==\"m\""'
ok "merge-patch replaces the conditions list" eval '
	code admin "$KUBE_URL/api/v1/namespaces/default/pods/web/status" -X PATCH -H "Content-Type: application/merge-patch+json" -d "$st" >/dev/null &&
	jqo "[.status.conditions[].type]==[\"DisruptionTarget\"]"'
ok "node patches another node's pod status: 403 NodeRestriction" eval '
	is "$(code node "$KUBE_URL/api/v1/namespaces/default/pods/elsewhere/status" -X PATCH -H "Content-Type: application/merge-patch+json" -d "$st")" 403 &&
	jqo ".message==\"pods \\\"elsewhere\\\" is forbidden: node \\\"$N\\\" can only update pod status for pods with spec.nodeName set to itself\""'
ok "unsupported patch content type: 415" is "$(code admin "$KUBE_URL/api/v1/namespaces/default/pods/web/status" -X PATCH -H "Content-Type: application/json" -d "$st")" 415

# --- DELETE -----------------------------------------------------------------------------------
uid=$(kube_ctl GET /objects/pods/default/web | jq -r .metadata.uid)
ok "DELETE with a wrong UID precondition: 409 Conflict with the upstream message" eval '
	is "$(code node "$KUBE_URL/api/v1/namespaces/default/pods/web" -X DELETE -H "Content-Type: application/json" -d "{\"preconditions\":{\"uid\":\"0000\"}}")" 409 &&
	jqo ".reason==\"Conflict\" and .details.kind==\"Pod\" and .message==\"Operation cannot be fulfilled on Pod \\\"web\\\": the UID in the precondition (0000) does not match the UID in record ($uid). The object might have been deleted and then recreated\""'
ok "DELETE of another node's pod: 403" is "$(code node "$KUBE_URL/api/v1/namespaces/default/pods/elsewhere" -X DELETE)" 403
ok "DELETE with the right UID and a grace period: deletionTimestamp set" eval '
	is "$(code node "$KUBE_URL/api/v1/namespaces/default/pods/web" -X DELETE -H "Content-Type: application/json" -d "{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\",\"gracePeriodSeconds\":10,\"preconditions\":{\"uid\":\"$uid\"}}")" 200 &&
	jqo ".metadata.deletionTimestamp != null and .metadata.deletionGracePeriodSeconds==10"'
sleep 0.5    # 10 s × --grace-scale 0.02
ok "... and the pod is gone after the (scaled) grace period" is "$(code admin "$KUBE_URL/api/v1/namespaces/default/pods/web")" 404
ok "DELETE ?gracePeriodSeconds=0 removes at once" eval '
	is "$(code admin "$KUBE_URL/api/v1/namespaces/default/pods/elsewhere?gracePeriodSeconds=0" -X DELETE)" 200 &&
	is "$(code admin "$KUBE_URL/api/v1/namespaces/default/pods/elsewhere")" 404'

# --- Eviction -----------------------------------------------------------------------------------
kube_apply '{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"namespace":"default","name":"db-pdb"},
 "spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"db"}}},
 "status":{"disruptionsAllowed":0,"currentHealthy":1,"desiredHealthy":1,"expectedPods":1}}' >/dev/null
evict='{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"db","namespace":"default"}}'
evurl="$KUBE_URL/api/v1/namespaces/default/pods/db/eviction"
ok "Eviction blocked by a PDB: 429 TooManyRequests with the upstream message and cause" eval '
	is "$(code node "$evurl" -X POST -H "Content-Type: application/json" -d "$evict")" 429 &&
	jqo ".reason==\"TooManyRequests\" and .message==\"Cannot evict pod as it would violate the pod'"'"'s disruption budget.\"
	     and .details.causes[0].reason==\"DisruptionBudget\" and .details.causes[0].message==\"The disruption budget db-pdb needs 1 healthy pods and has 1 currently\""'
kube_apply '{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"namespace":"default","name":"db-pdb","generation":2},
 "spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"db"}}},
 "status":{"disruptionsAllowed":1,"currentHealthy":2,"desiredHealthy":1,"expectedPods":2,"observedGeneration":1}}' >/dev/null
ok "Eviction while the budget's spec is not processed: 429, \"still being processed\", Retry-After 10" eval '
	is "$(code node "$evurl" -X POST -H "Content-Type: application/json" -d "$evict")" 429 &&
	jqo ".details.causes[0].reason==\"DisruptionBudget\" and .details.causes[0].message==\"The disruption budget db-pdb is still being processed by the server.\" and .details.retryAfterSeconds==10"'
kube_apply '{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"namespace":"default","name":"db-pdb"},
 "spec":{"minAvailable":1,"selector":{"matchLabels":{"app":"db"}}},
 "status":{"disruptionsAllowed":1,"currentHealthy":2,"desiredHealthy":1,"expectedPods":2}}' >/dev/null
ok "Eviction with a wrong UID precondition: 409" is "$(code node "$evurl" -X POST -H "Content-Type: application/json" -d '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"db","namespace":"default"},"deleteOptions":{"preconditions":{"uid":"x"}}}')" 409
ok "Eviction allowed: 201 Success, DisruptionTarget EvictionByEvictionAPI, pod deleting" eval '
	is "$(code node "$evurl" -X POST -H "Content-Type: application/json" -d "$evict")" 201 && jqo ".status==\"Success\"" &&
	kube_ctl GET /objects/pods/default/db >"$out" && jqo ".metadata.deletionTimestamp!=null and (.status.conditions|map(select(.type==\"DisruptionTarget\"))[0].reason==\"EvictionByEvictionAPI\")"'
ok "... and the budget's disruptionsAllowed dropped to 0" eval '
	kube_ctl GET /objects/pdb/default/db-pdb >"$out" && jqo ".status.disruptionsAllowed==0"'

sleep 0.8    # 30 s × 0.02
ok "... and the evicted pod is gone after its grace period" is "$(code admin "$KUBE_URL/api/v1/namespaces/default/pods/db")" 404

# --- watch --------------------------------------------------------------------------------------
w=$KUBE_DIR/watch
kube_apply "$(kube_pod_json default w1 $N 10)" >/dev/null
rv0=$(kube_ctl GET /rv | jq -r .resourceVersion)
kube_curl node -N -D "$w.h" "$pods?watch=true&$mine&allowWatchBookmarks=true&resourceVersion=$rv0&timeoutSeconds=2" >"$w" & wp=$!
sleep 0.3
kube_apply "$(kube_pod_json default w2 $N 20)" >/dev/null
kube_apply "$(kube_pod_json default w2 $N 20 100Mi)" >/dev/null       # update: MODIFIED
kube_apply "$(kube_pod_json default notmine node-2 20)" >/dev/null     # filtered out
kube_ctl DELETE /objects/pods/default/w2 >/dev/null
wait "$wp"; wrc=$?
ok "watch: chunked HTTP/1.1 stream" has "Transfer-Encoding: chunked" "$w.h"
ok "watch from a resourceVersion: ADDED, MODIFIED, DELETED in order, other nodes filtered" eval '
	is "$(jq -r "select(.type!=\"BOOKMARK\") | .type+\" \"+.object.metadata.name" "$w" | tr "\n" ,)" "ADDED w2,MODIFIED w2,DELETED w2,"'
ok "watch objects carry kind and apiVersion; resourceVersions increase" eval '
	jq -se "map(select(.type!=\"BOOKMARK\")) | all(.object.kind==\"Pod\" and .object.apiVersion==\"v1\") and
	        ((map(.object.metadata.resourceVersion|tonumber)) as \$r | \$r==(\$r|sort))" "$w" >/dev/null'
ok "watch with allowWatchBookmarks: BOOKMARK events with a resourceVersion" eval '
	jq -se "map(select(.type==\"BOOKMARK\")) | length>=1 and all(.object.metadata.resourceVersion|tonumber>0)" "$w" >/dev/null'
ok "timeoutSeconds ends the watch cleanly (curl exit 0)" is "$wrc" 0
kube_curl node -N "$pods?watch=1&$mine&timeoutSeconds=1" >"$w"
ok "watch without resourceVersion: the current pods as ADDED first" eval '
	is "$(jq -r ".type+\" \"+.object.metadata.name" "$w" | tr "\n" ,)" "ADDED w1,ADDED crit,"'
kube_curl node -N "$pods?watch=1&$mine&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1" >"$w"
ok "sendInitialEvents: BOOKMARK with k8s.io/initial-events-end after the initial ADDED" eval '
	jq -se "map(select(.type==\"BOOKMARK\"))[0].object.metadata.annotations[\"k8s.io/initial-events-end\"]==\"true\"" "$w" >/dev/null'
kube_ctl POST /compact >/dev/null
kube_curl node -N "$pods?watch=1&$mine&resourceVersion=$rv0" >"$w"
ok "watch from a compacted resourceVersion: ERROR event with a 410 Expired Status" eval '
	jq -se "length==1 and .[0].type==\"ERROR\" and .[0].object.kind==\"Status\" and .[0].object.code==410 and .[0].object.reason==\"Expired\" and (.[0].object.message|startswith(\"too old resource version: $rv0\"))" "$w" >/dev/null'
ok "continue token older than the compaction: 410 with the upstream message" eval '
	is "$(code admin "$pods?limit=2&continue=$tok")" 410 && jqo ".reason==\"Expired\" and (.message|startswith(\"The provided continue parameter is too old\"))"'
kube_ctl POST /config '{"history": 3}' >/dev/null
rv1=$(kube_ctl GET /rv | jq -r .resourceVersion)
for i in 1 2 3 4; do kube_apply "$(kube_pod_json default h$i $N)" >/dev/null; done
kube_curl node -N "$pods?watch=1&$mine&resourceVersion=$rv1" >"$w"
ok "history window: a resourceVersion older than the retained events gets 410" eval '
	jq -se ".[0].type==\"ERROR\" and .[0].object.code==410" "$w" >/dev/null'
kube_ctl POST /config '{"history": 1000}' >/dev/null

# --- faults -------------------------------------------------------------------------------------
kube_fault '{"kind":"status","code":500,"count":2,"path":"/api/v1/pods"}'
ok "fault: next 2 requests 500 InternalError Status, then normal" eval '
	is "$(code admin "$pods")" 500 && jqo ".reason==\"InternalError\"" && is "$(code admin "$pods")" 500 && is "$(code admin "$pods")" 200'
kube_fault '{"kind":"status","code":503}'
ok "fault: 503 ServiceUnavailable with Retry-After" eval '
	is "$(code admin "$pods" -D "$out.h")" 503 && has "Retry-After: 1" "$out.h"'
kube_fault '{"kind":"delay","ms":600}'
ok "fault: slow response (600 ms)" eval '
	t=$(kube_curl admin -o /dev/null -w "%{time_total}" "$pods"); awk -v t="$t" "BEGIN{exit !(t>=0.6)}"'
kube_fault '{"kind":"garbage"}'
ok "fault: garbage body with 200 (not JSON)" eval 'is "$(code admin "$pods")" 200 && [ -s "$out" ] && not_json "$out"'
kube_fault '{"kind":"truncate"}'
kube_curl admin -o "$out" "$pods"; trc=$?
ok "fault: truncated body (curl sees a short transfer)" eval '[ "$trc" -ne 0 ] && [ -s "$out" ] && not_json "$out"'
kube_fault '{"kind":"reset"}'
ok "fault: connection closed without a response" eval '! kube_curl admin -o /dev/null "$pods"'
kube_fault '{"kind":"forbidden","count":-1}'
ok "fault: 403 until cleared" eval 'is "$(code admin "$pods")" 403 && is "$(code admin "$pods")" 403'
kube_ctl DELETE /faults >/dev/null
ok "faults cleared" is "$(code admin "$pods")" 200
kube_ctl POST /forbid '{"on":true}' >/dev/null
ok "forbid toggle: 403 for every identity" eval 'is "$(code admin "$pods")" 403 && is "$(code node "$pods?$mine")" 403'
kube_ctl POST /forbid '{"on":false}' >/dev/null
kube_fault '{"kind":"drop","after":2}'
kube_curl node -N "$pods?watch=1&$mine&timeoutSeconds=5" >"$w"; drc=$?
ok "fault: watch dropped mid-stream after 2 events (no terminating chunk)" eval '
	[ "$drc" -ne 0 ] && is "$(wc -l <"$w")" 2'
kube_fault '{"kind":"gone"}'
kube_curl node -N "$pods?watch=1&$mine&timeoutSeconds=5" >"$w"
ok "fault: forced 410 on a watch" eval 'jq -se ".[0].type==\"ERROR\" and .[0].object.code==410" "$w" >/dev/null'
kube_fault '{"kind":"truncate","watch":true}'
kube_curl node -N "$pods?watch=1&$mine&timeoutSeconds=5" >"$w"
ok "fault: watch event truncated mid-line" eval '[ -s "$w" ] && not_json "$w" lines'

# --- request log --------------------------------------------------------------------------------
kube_requests >"$out"
ok "request log: one JSON line per request with method, path, query, identity, status" eval '
	jq -se "map(select(.path==\"/api/v1/pods\" and .identity==\"system:node:$N\" and .status==403 and .query.fieldSelector==null))|length>=1" "$out" >/dev/null &&
	jq -se "all(has(\"ts\") and has(\"status\"))" "$out" >/dev/null'
ok "request log: bodies of writes (the DELETE precondition)" eval '
	jq -se "map(select(.method==\"DELETE\" and .body.preconditions.uid==\"$uid\"))|length==1" "$out" >/dev/null'
ok "request log: watches marked, faults named" eval '
	jq -se "(map(select(.watch==true))|length>=5) and (map(select(.fault==[\"garbage\"]))|length==1)" "$out" >/dev/null'
ok "request log: TLS handshake failures recorded" eval 'jq -se "map(select(.tls_error))|length>=1" "$out" >/dev/null'
kube_ctl POST /reset >/dev/null
ok "reset: objects, log and faults cleared; built-in priorityclasses kept" eval '
	code admin "$pods" >/dev/null && jqo ".items==[]" && kube_ctl GET /objects/priorityclasses | jq -e "length==2" >/dev/null'

# --- kubectl (Debian's kubernetes-client or any kubectl) ----------------------------------------
if command -v kubectl >/dev/null 2>&1; then
	kube_apply "$(kube_pod_json default web $N 100 512Mi)" >/dev/null
	kube_apply "$(kube_pod_json kube-system crit $N 2000001000 128Mi)" >/dev/null
	k() { local cfg=$1; shift; kubectl --kubeconfig "$KUBE_DIR/kubeconfig-$cfg" --cache-dir "$KUBE_DIR/kcache" --request-timeout 10s "$@"; }
	ok "kubectl get pods -A (admin kubeconfig with embedded certificates)" eval '
		k admin get pods -A >"$out" 2>&1 && has "kube-system   crit" "$out" && has "Running" "$out"'
	ok "kubectl get pods -o json parses and carries the stand-in's objects" eval '
		k admin get pods -o json >"$out" && jqo "[.items[].metadata.name]==[\"web\"] and .items[0].spec.priority==100"'
	ok "kubectl get priorityclasses" eval 'k admin get priorityclasses >"$out" && has system-node-critical "$out"'
	ok "kubectl with the node kubeconfig (file paths): the node authorizer's 403" eval '
		! k node get pods -A >"$out" 2>&1 && has "can only list/watch pods with spec.nodeName field selector" "$out"'
	ok "kubectl with the node kubeconfig and the field selector" eval '
		k node get pods -A --field-selector spec.nodeName=$N -o name >"$out" && has pod/crit "$out"'
	ok "kubectl with a bearer-token kubeconfig" eval 'k node-token get pods -A --field-selector spec.nodeName=$N -o name >/dev/null'
	ok "kubectl with the exec kubeconfig fails in the credential plugin" eval '
		! k exec get pods >"$out" 2>&1 && has "exec" "$out"'
else
	skip "kubectl checks" "kubectl not installed"
fi

# --- process hygiene ----------------------------------------------------------------------------
d3=$KUBE_DIR/orphan; mkdir -p "$d3"
# the parent exits once the server is ready (ports.json), and says whether it was
bash -c 'python3 apiserver.py --dir "$1" --certs "$2" 2>/dev/null & echo $! >"$1/pid"
	for _ in $(seq 200); do [ -s "$1/ports.json" ] && { echo ready >"$1/started"; exit 0; }; sleep 0.05; done' _ "$d3" "$KUBE_DIR"
opid=$(cat "$d3/pid")
# a zombie (reaped late by whatever adopted it) counts as exited
alive() { [ -e "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
ok "the orphaned server started" eval '[ -n "$opid" ] && [ -s "$d3/started" ]'
# polled, up to 30 s: the server notices its parent's death at its next check, later under load
for _ in $(seq 300); do alive "$opid" || break; sleep 0.1; done
ok "the server exits when the process that started it dies" eval '! alive "$opid"'
pid=$KUBE_PID dir=$KUBE_DIR
kube_stop
ok "kube_stop leaves no process and no directory" eval '! kill -0 $pid 2>/dev/null && [ ! -e "$dir" ]'
done_testing
