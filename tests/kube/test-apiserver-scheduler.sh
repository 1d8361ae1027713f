#!/bin/bash
# The stand-in API server (tests/kube/apiserver.py) as a scheduler sees it: pods/binding, the
# unfinished-pods watch, status patches, graceful DELETE, the kubelet simulation (start,
# admission, termination, slow and stuck kubelets, pod GC), Leases, events.k8s.io Events, and
# the faults a controller must survive (429 with Retry-After on one kind of write, a garbled
# watch, an outage with the state kept). Each check names the upstream behaviour it pins.
set -u
cd "$(dirname "$0")" || exit 1
. ../lib.sh
. ./lib-apiserver.sh
. ./lib-checks.sh

kube_start --bookmark-interval 0.3 --grace-scale 0.02 --kubelet-start-delay 0.2 --podgc-delay 0.3 ||
	{ echo "not ok 1 - server starts"; exit 1; }
out=$KUBE_DIR/out
api=$KUBE_URL/api/v1
ns=$api/namespaces/default
# req METHOD URL [BODY [CONTENT-TYPE]]: as admin; prints the code, body in $out
req() {
	local a=(-X "$1")
	[ $# -ge 3 ] && a+=(-H "Content-Type: ${4:-application/json}" --data-binary "$3")
	code admin "$2" "${a[@]}"
}
obj() { kube_ctl GET "/objects/$1" >"$out"; }      # obj RES/NS/NAME: the stored object in $out
jqs() { jq -se "$1" "$2" >/dev/null; }             # jqs FILTER FILE: FILE's JSON lines, slurped, match
# eventually SECONDS COMMAND...: COMMAND succeeds within SECONDS (polled every 0.1 s)
eventually() { local end=$((SECONDS + $1)); shift; until "$@"; do [ $SECONDS -ge "$end" ] && return 1; sleep 0.1; done; }
uid_of() { kube_ctl GET "/objects/pods/default/$1" | jq -r .metadata.uid; }
binding() {	# binding NAME NODE [UID]
	echo "{\"apiVersion\":\"v1\",\"kind\":\"Binding\",\"metadata\":{\"name\":\"$1\",\"namespace\":\"default\"${3:+,\"uid\":\"$3\"}},\"target\":{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"name\":\"$2\"}}"
}

kube_apply "$(kube_node_json node-1 4 8Gi)" >/dev/null
kube_apply "$(kube_node_json node-2 1 2Gi)" >/dev/null

# ---- pods/binding -----------------------------------------------------------------------------
w=$KUBE_DIR/watch
unfinished="fieldSelector=status.phase%21%3DSucceeded%2Cstatus.phase%21%3DFailed"
rv0=$(kube_ctl GET /rv | jq -r .resourceVersion)
# curl itself in the background (not kube_curl's subshell), so that its pid ends the watch
curl -s --cacert "$KUBE_DIR/ca.crt" --cert "$KUBE_DIR/admin.crt" --key "$KUBE_DIR/admin.key" -N \
	"$api/pods?watch=true&$unfinished&allowWatchBookmarks=true&resourceVersion=$rv0&timeoutSeconds=120" >"$w" &
wp=$!
ok "a pending pod is created through the API (201, phase Pending, no node)" eval '
	is "$(req POST "$ns/pods" "$(kube_pending_pod_json default p1 100 500m 256Mi)")" 201 &&
	jqo ".status.phase==\"Pending\" and .spec.nodeName==null and .spec.schedulerName==\"preemptd\""'
uid=$(uid_of p1)
st='{"status":{"conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/2 nodes are available: 2 Insufficient cpu."}]}}'
req PATCH "$ns/pods/p1/status" "$st" application/strategic-merge-patch+json >/dev/null
kube_kubelet '{"nodes":{"node-1":{"mode":"stuck"}}}'     # until the checks of the bound, not started pod
ok "binding with the pod's uid: 201 Status Success, code 201" eval '
	is "$(req POST "$ns/pods/p1/binding" "$(binding p1 node-1 "$uid")")" 201 &&
	jqo ".kind==\"Status\" and .status==\"Success\" and .code==201"'
obj pods/default/p1
ok "... spec.nodeName set, PodScheduled=True replacing Unschedulable (reason and message gone)" \
	jqo '.spec.nodeName=="node-1" and (.status.conditions|map(select(.type=="PodScheduled"))|length==1)
	     and (.status.conditions[]|select(.type=="PodScheduled")|.status=="True" and .reason==null and .message==null)'
ok "... Pending while node-1's kubelet has not started it (stuck, holding one start)" eval '
	jqo ".status.phase==\"Pending\"" && kube_ctl GET /kubelet | jq -e ".waiting[\"node-1\"]==1" >/dev/null'
kube_kubelet '{"nodes":{"node-1":{"mode":"normal"}}}'
running() { obj "pods/default/$1"; jqo '.status.phase=="Running"'; }
ok "the kubelet simulation starts it: Running with startTime, Ready, podIP, a running container" eval '
	eventually 10 running p1 && jqo "(.status.startTime|test(\"Z$\")) and (.status.podIP|startswith(\"10.244.\"))
		and (.status.conditions[]|select(.type==\"Ready\").status==\"True\")
		and (.status.conditions[]|select(.type==\"PodScheduled\").status==\"True\")
		and (.status.containerStatuses[0].state.running.startedAt!=null)"'
ok "a second binding: 409 Conflict on pods/binding, 'already assigned to node'" eval '
	is "$(req POST "$ns/pods/p1/binding" "$(binding p1 node-2 "$uid")")" 409 &&
	jqo ".reason==\"Conflict\" and .details.kind==\"pods/binding\" and .message==\"Operation cannot be fulfilled on pods/binding \\\"p1\\\": pod p1 is already assigned to node \\\"node-1\\\"\""'
req POST "$ns/pods" "$(kube_pending_pod_json default p2 10)" >/dev/null
ok "binding with a stale uid: 409 with the storage layer's precondition text" eval '
	is "$(req POST "$ns/pods/p2/binding" "$(binding p2 node-1 0000)")" 409 &&
	jqo ".message==\"Operation cannot be fulfilled on pods \\\"p2\\\": StorageError: invalid object, Code: 4, Key: /registry/pods/default/p2, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: 0000, UID in object meta: $(uid_of p2)\""'
ok "binding of a missing pod: 404 NotFound" is "$(req POST "$ns/pods/nope/binding" "$(binding nope node-1)")" 404
ok "binding whose name differs from the URL's: 400" eval '
	is "$(req POST "$ns/pods/p2/binding" "$(binding p1 node-1)")" 400 && jqo ".message==\"name in URL does not match name in Binding object\""'
ok "binding without a target node: 500, ValidatePodBinding's 'target.name: Required value'" eval '
	is "$(req POST "$ns/pods/p2/binding" "{\"metadata\":{\"name\":\"p2\"},\"target\":{}}")" 500 &&
	jqo ".message==\"target.name: Required value\" and (has(\"reason\")|not)"'
kube_apply '{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"default","name":"gated"},"spec":{"schedulingGates":[{"name":"example.com/wait"}]}}' >/dev/null
ok "binding of a pod with schedulingGates: 409" eval '
	is "$(req POST "$ns/pods/gated/binding" "$(binding gated node-1)")" 409 && jqo ".message|endswith(\"pod gated has non-empty .spec.schedulingGates\")"'
kube_apply '{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"default","name":"leaving","deletionTimestamp":"2030-01-01T00:00:00Z","deletionGracePeriodSeconds":30},"spec":{}}' >/dev/null
ok "binding of a pod being deleted: 409 'is being deleted, cannot be assigned to a host'" eval '
	is "$(req POST "$ns/pods/leaving/binding" "$(binding leaving node-1)")" 409 && jqo ".message|endswith(\"pod leaving is being deleted, cannot be assigned to a host\")"'
kube_ctl DELETE /objects/pods/default/leaving >/dev/null
kube_ctl DELETE /objects/pods/default/gated >/dev/null

# ---- status patches: nomination, conditions -----------------------------------------------------
nom='{"$setElementOrder/conditions":[{"type":"PodScheduled"}],"status":{"nominatedNodeName":"node-1","conditions":[{"type":"PodScheduled","status":"False","reason":"Unschedulable","message":"0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod."}]}}'
ok "strategic-merge status patch: nominatedNodeName and PodScheduled=False (directives accepted)" eval '
	is "$(req PATCH "$ns/pods/p2/status" "$nom" application/strategic-merge-patch+json)" 200 &&
	jqo ".status.nominatedNodeName==\"node-1\" and (.status.conditions|map(select(.type==\"PodScheduled\"))|length==1) and .status.conditions[0].reason==\"Unschedulable\""'
ok "merge-patch nominatedNodeName: null clears it, the conditions stay" eval '
	is "$(req PATCH "$ns/pods/p2/status" "{\"status\":{\"nominatedNodeName\":null}}" application/merge-patch+json)" 200 &&
	jqo "(.status|has(\"nominatedNodeName\")|not) and (.status.conditions|length==1)"'
dt='{"status":{"conditions":[{"type":"DisruptionTarget","status":"True","reason":"PreemptionByScheduler","message":"preemptd: preempting to accommodate a higher priority pod"}]}}'
ok "a victim's DisruptionTarget condition is merged beside the kubelet's" eval '
	is "$(req PATCH "$ns/pods/p1/status" "$dt" application/strategic-merge-patch+json)" 200 &&
	jqo "[.status.conditions[].type]|contains([\"Ready\",\"PodScheduled\",\"DisruptionTarget\"])"'

# ---- graceful DELETE and the kubelet's termination ----------------------------------------------
kube_kubelet '{"nodes":{"node-1":{"mode":"stuck"}}}'     # p1 terminates only when the checks are done
ok "DELETE with empty DeleteOptions of a running pod: 200, deletionTimestamp, its own grace (30 s)" eval '
	is "$(req DELETE "$ns/pods/p1" "{}")" 200 &&
	jqo ".metadata.deletionTimestamp!=null and .metadata.deletionGracePeriodSeconds==30 and .status.phase==\"Running\""'
ok "... the pod is still there while its grace period runs (not removed at once)" eval 'obj pods/default/p1 && jqo ".metadata.deletionTimestamp!=null"'
ok "... a second DELETE while it terminates: 200, unchanged" eval '
	is "$(req DELETE "$ns/pods/p1" "{}")" 200 && jqo ".metadata.deletionGracePeriodSeconds==30"'
gone() { [ "$(kube_curl admin -o /dev/null -w '%{http_code}' "$ns/pods/$1")" = 404 ]; }
kube_kubelet '{"nodes":{"node-1":{"mode":"normal"}}}'
ok "... gone after its grace period (30 s × grace-scale 0.02) once the kubelet acts" eventually 10 gone p1
sleep 0.3   # the watch's last events
kill "$wp"; wait "$wp" 2>/dev/null
evs=$(jq -r 'select(.type!="BOOKMARK") | .type+" "+.object.metadata.name+" "+(.object.status.phase // "")+" "+(if .object.metadata.deletionTimestamp then "deleting" else "" end)' "$w" | grep ' p1 ' | tr -s ' ' | tr '\n' ',')
ok "the unfinished-pods watch saw p1 created, bound, running, terminating, then leave on its terminal phase" \
	is "$evs" "ADDED p1 Pending ,MODIFIED p1 Pending ,MODIFIED p1 Pending ,MODIFIED p1 Running ,MODIFIED p1 Running ,MODIFIED p1 Running deleting,DELETED p1 Failed deleting,"
ok "... the DELETED object is the terminal one: containers terminated with 143" \
	jqs 'map(select(.type=="DELETED" and .object.metadata.name=="p1"))[0].object.status.containerStatuses[0].state.terminated.exitCode==143' "$w"

# ---- kubelet: admission, slow, stuck, pod GC ------------------------------------------------------
for p in a1 a2; do req POST "$ns/pods" "$(kube_pending_pod_json default $p 0 600m 64Mi)" >/dev/null; done
req POST "$ns/pods/a1/binding" "$(binding a1 node-2)" >/dev/null
eventually 10 running a1
req POST "$ns/pods/a2/binding" "$(binding a2 node-2)" >/dev/null
rejected() { obj pods/default/a2; jqo '.status.phase=="Failed"'; }
ok "the kubelet rejects a pod that does not fit (OutOfcpu, its message)" eval '
	eventually 10 rejected && jqo ".status.reason==\"OutOfcpu\" and .status.message==\"Pod was rejected: Node didn'"'"'t have enough resource: cpu, requested: 600, used: 600, capacity: 1000\""'
ok "... with the kubelet's Warning Event" eval '
	kube_ctl GET /objects/events/default >"$out" &&
	jqo "any(.[]; .reason==\"OutOfcpu\" and .type==\"Warning\" and .involvedObject.name==\"a2\" and .source.component==\"kubelet\" and .source.host==\"node-2\")"'
kube_kubelet '{"nodes":{"node-2":{"mode":"slow","factor":15}}}'
req POST "$ns/pods" "$(kube_pending_pod_json default s1 0 100m 64Mi)" >/dev/null
req POST "$ns/pods/s1/binding" "$(binding s1 node-2)" >/dev/null
sleep 0.6
ok "a slow kubelet (15 × 0.2 s): still Pending after 0.6 s" eval 'obj pods/default/s1 && jqo ".status.phase==\"Pending\""'
ok "... Running later" eventually 6 running s1
kube_kubelet '{"nodes":{"node-2":{"mode":"stuck"}}}'
req DELETE "$ns/pods/s1" '{"gracePeriodSeconds":1}' >/dev/null
sleep 0.5
ok "a stuck kubelet: the terminating pod stays (grace 1 s × 0.02 long past)" eval 'obj pods/default/s1 && jqo ".metadata.deletionTimestamp!=null"'
ok "... the control endpoint shows what it holds" eval 'kube_ctl GET /kubelet >"$out" && jqo ".waiting[\"node-2\"]==1 and .nodes[\"node-2\"].mode==\"stuck\""'
kube_kubelet '{"nodes":{"node-2":{"mode":"normal"}}}'
ok "... unstuck, it finishes the termination" eventually 10 gone s1
kube_apply "$(kube_node_json node-3)" >/dev/null
req POST "$ns/pods" "$(kube_pending_pod_json default g1)" >/dev/null
req POST "$ns/pods/g1/binding" "$(binding g1 node-3)" >/dev/null
eventually 10 running g1
kube_ctl DELETE /objects/nodes/node-3 >/dev/null
ok "a Node removed at run time: the pod GC deletes its pods" eventually 10 gone g1
ok "... after marking them DisruptionTarget DeletionByPodGC" eval '
	kube_requests >/dev/null; kube_curl admin "$api/pods?watch=1&resourceVersion=$rv0&timeoutSeconds=1" |
	jq -se "any(.[]; .type==\"MODIFIED\" and .object.metadata.name==\"g1\" and any(.object.status.conditions[]; .reason==\"DeletionByPodGC\"))" >/dev/null'
req POST "$ns/pods" "$(kube_pending_pod_json default g2)" >/dev/null
req POST "$ns/pods/g2/binding" "$(binding g2 node-gone)" >/dev/null
ok "a pod bound to a Node that does not exist (deleted while a scheduler decided): the pod GC deletes it" eventually 10 gone g2

# ---- watches of nodes, PriorityClasses, PDBs ----------------------------------------------------
rvn=$(kube_ctl GET /rv | jq -r .resourceVersion)
kube_curl admin -N "$api/nodes?watch=1&allowWatchBookmarks=true&resourceVersion=$rvn&timeoutSeconds=2" >"$w" &
wp=$!
sleep 0.3
kube_apply "$(kube_node_json node-4)" >/dev/null
kube_ctl DELETE /objects/nodes/node-4 >/dev/null
wait "$wp"
ok "nodes added and removed at run time: ADDED then DELETED on a node watch, with BOOKMARKs" eval '
	is "$(jq -r "select(.type!=\"BOOKMARK\")|.type+\" \"+.object.metadata.name" "$w" | tr "\n" ,)" "ADDED node-4,DELETED node-4," &&
	jq -se "any(.[]; .type==\"BOOKMARK\")" "$w" >/dev/null'
kube_curl admin -N "$KUBE_URL/apis/scheduling.k8s.io/v1/priorityclasses?watch=1&timeoutSeconds=1" >"$w"
ok "PriorityClasses watch from 0: the built-in classes as ADDED" \
	is "$(jq -r .object.metadata.name "$w" | sort | tr '\n' ,)" "system-cluster-critical,system-node-critical,"
kube_ctl POST /compact >/dev/null
kube_curl admin -N "$KUBE_URL/apis/policy/v1/poddisruptionbudgets?watch=1&resourceVersion=$rvn&timeoutSeconds=1" >"$w"
ok "PDB watch from a compacted resourceVersion: ERROR 410 Expired" \
	jqs '.[0].type=="ERROR" and .[0].object.code==410' "$w"

# ---- Leases --------------------------------------------------------------------------------------
leases=$KUBE_URL/apis/coordination.k8s.io/v1/namespaces/kube-system/leases
lease() {	# lease HOLDER RENEW-TIME [RESOURCE-VERSION] [DURATION]
	echo "{\"apiVersion\":\"coordination.k8s.io/v1\",\"kind\":\"Lease\",\"metadata\":{\"name\":\"preemptd\",\"namespace\":\"kube-system\"${3:+,\"resourceVersion\":\"$3\"}},\"spec\":{\"holderIdentity\":\"$1\",\"leaseDurationSeconds\":${4:-15},\"acquireTime\":\"$2\",\"renewTime\":\"$2\",\"leaseTransitions\":0}}"
}
ok "GET of a missing Lease: 404 with the qualified resource" eval '
	is "$(req GET "$leases/preemptd")" 404 && jqo ".message==\"leases.coordination.k8s.io \\\"preemptd\\\" not found\" and .details.group==\"coordination.k8s.io\""'
ok "a Lease time without six fraction digits: 400 with Go's parse error" eval '
	is "$(req POST "$leases" "$(lease a 2026-01-02T03:04:05Z)")" 400 &&
	jqo ".message==\"Lease in version \\\"v1\\\" cannot be handled as a Lease: parsing time \\\"2026-01-02T03:04:05Z\\\" as \\\"2006-01-02T15:04:05.000000Z07:00\\\": cannot parse \\\"Z\\\" as \\\".000000\\\"\""'
ok "leaseDurationSeconds 0: 422 Invalid" eval '
	is "$(req POST "$leases" "$(lease a 2026-01-02T03:04:05.000001Z "" 0)")" 422 &&
	jqo ".message==\"Lease.coordination.k8s.io \\\"preemptd\\\" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0\" and .details.causes[0].field==\"spec.leaseDurationSeconds\""'
ok "create: 201, MicroTime stored in UTC with six digits" eval '
	is "$(req POST "$leases" "$(lease a 2026-01-02T05:04:05.123456+02:00)")" 201 &&
	jqo ".spec.renewTime==\"2026-01-02T03:04:05.123456Z\" and .spec.holderIdentity==\"a\""'
rv=$(jq -r .metadata.resourceVersion "$out")
ok "a racing create: 409 AlreadyExists" eval '
	is "$(req POST "$leases" "$(lease b 2026-01-02T03:04:06.000000Z)")" 409 && jqo ".reason==\"AlreadyExists\" and .message==\"leases.coordination.k8s.io \\\"preemptd\\\" already exists\""'
ok "update without a resourceVersion: 422 'must be specified for an update'" eval '
	is "$(req PUT "$leases/preemptd" "$(lease b 2026-01-02T03:04:06.000000Z)")" 422 &&
	jqo ".message==\"leases.coordination.k8s.io \\\"preemptd\\\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update\""'
ok "update with the current resourceVersion: 200, a new resourceVersion" eval '
	is "$(req PUT "$leases/preemptd" "$(lease a 2026-01-02T03:04:07.000000Z "$rv")")" 200 &&
	jqo ".metadata.resourceVersion!=\"$rv\" and .spec.renewTime==\"2026-01-02T03:04:07.000000Z\""'
ok "update with the stale resourceVersion: 409 Conflict (optimistic concurrency)" eval '
	is "$(req PUT "$leases/preemptd" "$(lease b 2026-01-02T03:04:08.000000Z "$rv")")" 409 &&
	jqo ".message==\"Operation cannot be fulfilled on leases.coordination.k8s.io \\\"preemptd\\\": the object has been modified; please apply your changes to the latest version and try again\""'
ok "PUT of a missing Lease creates it (AllowCreateOnUpdate): 201" eval '
	is "$(req PUT "$KUBE_URL/apis/coordination.k8s.io/v1/namespaces/default/leases/preemptd" "$(lease c 2026-01-02T03:04:05.000000Z | sed s/kube-system/default/)")" 201'
race() {	# ten rounds of two simultaneous creates: always exactly one 201 and one 409
	local i a b pid
	for i in $(seq 10); do
		kube_curl admin -o /dev/null -w '%{http_code}\n' -X POST -H 'Content-Type: application/json' --data-binary "$(lease x$i 2026-01-02T03:04:05.000000Z | sed "s/\"preemptd\"/\"race$i\"/")" "$leases" >"$out.a" &
		pid=$!
		kube_curl admin -o /dev/null -w '%{http_code}\n' -X POST -H 'Content-Type: application/json' --data-binary "$(lease y$i 2026-01-02T03:04:05.000000Z | sed "s/\"preemptd\"/\"race$i\"/")" "$leases" >"$out.b"
		wait "$pid"
		a=$(cat "$out.a"); b=$(cat "$out.b")
		[ "$(printf '%s\n' "$a" "$b" | sort | tr '\n' ,)" = "201,409," ] || { echo "# round $i: $a $b"; return 1; }
	done
}
ok "racing creates of one Lease: one 201, one 409, ten times" race

# ---- Events ---------------------------------------------------------------------------------------
evs_url=$KUBE_URL/apis/events.k8s.io/v1/namespaces/default/events
sched_ev='{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"p2.17c0a1b2c3d4e5f6","namespace":"default"},
 "eventTime":"2026-01-02T03:04:05.123456Z","reportingController":"preemptd","reportingInstance":"preemptd-host-1",
 "action":"Scheduling","reason":"FailedScheduling","type":"Warning","note":"0/2 nodes are available: 2 Insufficient cpu.",
 "regarding":{"kind":"Pod","namespace":"default","name":"p2","uid":"u","apiVersion":"v1"}}'
ok "events.k8s.io/v1 Event as kube-scheduler's recorder fills it: 201" eval '
	is "$(req POST "$evs_url" "$sched_ev")" 201 && jqo ".eventTime==\"2026-01-02T03:04:05.123456Z\" and (.note|startswith(\"0/2\"))"'
bad=$(jq -c 'del(.reportingController, .action) | .type="Fatal" | .metadata.name="p2.bad"' <<<"$sched_ev")
ok "no reportingController, no action, a bad type: 422 with every cause" eval '
	is "$(req POST "$evs_url" "$bad")" 422 &&
	jqo ".message==\"Event.events.k8s.io \\\"p2.bad\\\" is invalid: [reportingController: Required value, reportingController: Invalid value: \\\"\\\": name part must be non-empty, reportingController: Invalid value: \\\"\\\": name part must consist of alphanumeric characters, '"'-', '_' or '.'"', and must start and end with an alphanumeric character (e.g. '"'MyName'"',  or '"'my.name'"',  or '"'123-abc'"', regex used for validation is '"'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'"'), action: Required value, type: Invalid value: \\\"\\\": has invalid value: Fatal]\" and (.details.causes|length==5)"'
long=$(jq -c --arg n "$(head -c 1025 /dev/zero | tr '\0' x)" '.note=$n | .metadata.name="p2.long"' <<<"$sched_ev")
ok "a note over 1024 bytes: 422" eval 'is "$(req POST "$evs_url" "$long")" 422 && jqo ".details.causes[0].field==\"message\""'
ok "an events.k8s.io Event without eventTime: 422 Required" eval '
	is "$(req POST "$evs_url" "$(jq -c "del(.eventTime) | .metadata.name=\"p2.t\"" <<<"$sched_ev")")" 422 && jqo "any(.details.causes[]; .field==\"eventTime\")"'
series='{"series":{"count":2,"lastObservedTime":"2026-01-02T03:04:15.000000Z"}}'
ok "a series update by strategic-merge PATCH: 200" eval '
	is "$(req PATCH "$evs_url/p2.17c0a1b2c3d4e5f6" "$series" application/strategic-merge-patch+json)" 200 && jqo ".series.count==2"'
ok "a PATCH that changes the note: 422 field is immutable" eval '
	is "$(req PATCH "$evs_url/p2.17c0a1b2c3d4e5f6" "{\"note\":\"other\"}" application/merge-patch+json)" 422 && jqo ".message|endswith(\"message: Invalid value: \\\"other\\\": field is immutable\")"'
core_ev='{"apiVersion":"v1","kind":"Event","metadata":{"name":"p2.core","namespace":"default"},"involvedObject":{"kind":"Pod","namespace":"default","name":"p2"},"reason":"Scheduled","message":"Successfully assigned default/p2 to node-1","type":"Normal","source":{"component":"preemptd"}}'
ok "core/v1 Event (legacy rules): 201" is "$(req POST "$api/namespaces/default/events" "$core_ev")" 201
ok "core/v1 Event whose involvedObject is in another namespace: 422" eval '
	is "$(req POST "$api/namespaces/default/events" "$(jq -c ".metadata.name=\"x\" | .involvedObject.namespace=\"other\"" <<<"$core_ev")")" 422 &&
	jqo ".message==\"Event \\\"x\\\" is invalid: involvedObject.namespace: Invalid value: \\\"other\\\": does not match event.namespace\""'

# ---- faults a controller must survive -------------------------------------------------------------
req POST "$ns/pods" "$(kube_pending_pod_json default f1)" >/dev/null
kube_fault '{"kind":"status","code":429,"retry_after":3,"count":2,"resource":"pods/binding"}'
ok "429 on the next 2 bindings only: Retry-After 3 and details.retryAfterSeconds, reads unaffected" eval '
	is "$(req GET "$ns/pods/f1")" 200 &&
	is "$(code admin "$ns/pods/f1/binding" -X POST -H "Content-Type: application/json" --data-binary "$(binding f1 node-1)" -D "$out.h")" 429 &&
	has "Retry-After: 3" "$out.h" &&
	jqo ".reason==\"TooManyRequests\" and .details.retryAfterSeconds==3" &&
	is "$(req POST "$ns/pods/f1/binding" "$(binding f1 node-1)")" 429 &&
	is "$(req POST "$ns/pods/f1/binding" "$(binding f1 node-1)")" 201'
kube_fault '{"kind":"status","code":503,"write":true}'
ok "a 503 on the next write of any kind, not on a read" eval '
	is "$(req GET "$ns/pods/f1")" 200 && is "$(req PATCH "$ns/pods/f1/status" "{}" application/merge-patch+json)" 503 &&
	is "$(req PATCH "$ns/pods/f1/status" "{}" application/merge-patch+json)" 200'
kube_fault '{"kind":"garbage","after":1,"resource":"nodes","verb":"watch"}'
kube_curl admin -N "$api/nodes?watch=1&timeoutSeconds=1" >"$w"
ok "a watch garbled at its second event: the first is JSON, the second is not" eval '
	head -n1 "$w" | jq -e .type >/dev/null && sed -n 2p "$w" >"$w.2" && not_json "$w.2"'
rvo=$(kube_ctl GET /rv | jq -r .resourceVersion)
kube_curl admin -N "$api/pods?watch=1&resourceVersion=$rvo&timeoutSeconds=30" >"$w" 2>/dev/null & wp=$!
sleep 0.3
t0=$(date +%s%N)
kube_outage 2
kube_curl admin -o /dev/null "$api/pods"; rc=$?
ok "outage: new connections refused (curl exit 7)" is "$rc" 7
wait "$wp"; wrc=$?
ok "... an open watch is cut without its terminating chunk (curl exit 18)" is "$wrc" 18
ok "... the control endpoint says it is down" eval 'kube_ctl GET /outage >"$out" && jqo ".down==true"'
back() { [ "$(kube_curl admin -o /dev/null -w '%{http_code}' "$api/pods")" = 200 ]; }
eventually 10 back; t1=$(date +%s%N)
ok "... back after about 2 s ($(( (t1 - t0) / 1000000 )) ms) on the same port" eval '[ $(( (t1 - t0) / 1000000 )) -ge 1900 ]'
ok "... with its state: the pods, the Lease, the resourceVersion counter" eval '
	is "$(req GET "$ns/pods/f1")" 200 && is "$(req GET "$leases/preemptd")" 200 &&
	[ "$(kube_ctl GET /rv | jq -r .resourceVersion)" -ge "$rvo" ]'

# ---- request log ----------------------------------------------------------------------------------
kube_requests >"$out"
ok "request log: each request's verb, resource, subresource, namespace and name" \
	jqs 'any(.[]; .verb=="create" and .resource=="pods" and .subresource=="binding" and .name=="f1" and .namespace=="default" and .status==201)' "$out"
ok "request log: a list carries verb list, a watch verb watch, a Lease update verb update" \
	jqs 'any(.[]; .verb=="list" and .resource=="pods") and any(.[]; .verb=="watch" and .resource=="nodes") and any(.[]; .verb=="update" and .resource=="leases" and .api_group=="coordination.k8s.io")' "$out"
done_testing
