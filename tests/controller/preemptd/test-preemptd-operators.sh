#!/bin/bash
# What a kube-scheduler operator reads, as kube-scheduler gives it (docs/kube-scheduler-operators.md):
# an attempt ends with its binding (scheduler_schedule_attempts_total counts a binding refused
# with 409 as "error", scheduler_scheduling_attempt_duration_seconds includes the binding's
# answer), every PostFilter run is a preemption attempt, scheduler_pod_scheduling_attempts, the
# SLI duration, the Bind extension point and leader_election_master_status exist;
# scheduler_queue_incoming_pods_total counts entries by queue and kube's event label; a
# FailedScheduling repeated grows the first Event's series; a refused binding is a Warning
# FailedScheduling Event in the API server's words; the Lease (by its uid) gets "<identity> became
# leader"; Events carry kube's
# reportingInstance and are read through /api/v1 as kubectl get events / describe pod read them;
# /readyz?verbose lists its checks.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
"$PY" -c 'import prometheus_client' 2>/dev/null || skip_all "python3-prometheus-client missing"
pd_setup

node n1 4
# the binding's answer comes 0.6 s late: the attempt's duration includes it (schedule_one.go's
# bindingCycle runs inside the attempt metrics.PodScheduled observes)
kube_fault '{"kind": "delay", "ms": 600, "resource": "pods/binding"}'
pd_start a --leader-elect yes --lease kube-system/pd-lease --identity pd-a
pending default slow 0 100m
ok "a pod is bound" wait_for 15 bound_to default slow n1
scheduled_once() { [ "$(metric a scheduler_schedule_attempts_total '{"result": "scheduled"}')" = 1 ]; }
ok "scheduler_schedule_attempts_total{result=scheduled} 1, counted once the binding is answered" wait_for 5 scheduled_once
sum=$(metric a scheduler_scheduling_attempt_duration_seconds_sum '{"result": "scheduled"}')
ok "scheduler_scheduling_attempt_duration_seconds_sum{result=scheduled} includes the delayed binding (>= 0.6: $sum)" \
	"$PY" -c "import sys; sys.exit(0 if float('$sum') >= 0.6 else 1)"
bind_sum=$(metric a scheduler_framework_extension_point_duration_seconds_sum '{"extension_point": "Bind", "status": "Success"}')
ok "scheduler_framework_extension_point_duration_seconds{extension_point=Bind} times it ($bind_sum)" \
	"$PY" -c "import sys; sys.exit(0 if float('$bind_sum') >= 0.6 else 1)"
ok "scheduler_pod_scheduling_attempts: one pod bound at its first attempt" \
	[ "$(metric a scheduler_pod_scheduling_attempts_count)" = 1 ] && [ "$(metric a scheduler_pod_scheduling_attempts_sum)" = 1 ]
sli=$(metric a scheduler_pod_scheduling_sli_duration_seconds_sum '{"attempts": "1"}')
ok "scheduler_pod_scheduling_sli_duration_seconds{attempts=1}: first attempt to binding ($sli >= 0.6)" \
	"$PY" -c "import sys; sys.exit(0 if float('${sli:-0}') >= 0.6 else 1)"
ok "scheduler_queue_incoming_pods_total{queue=active,event=PodAdd}: the pod entered activeQ once" \
	[ "$(metric a scheduler_queue_incoming_pods_total '{"queue": "active", "event": "PodAdd"}')" = 1 ]
ok "leader_election_master_status{name=pd-lease} 1" [ "$(metric a leader_election_master_status '{"name": "pd-lease"}')" = 1 ]
lease_uid=$(kube_ctl GET /objects/leases/kube-system/pd-lease | jq -r '.metadata.uid // ""')
leader_event() {
	[ "$(nevents kube-system 'select(.reason == "LeaderElection" and .type == "Normal" and .note == "pd-a became leader" and
	      .regarding.kind == "Lease" and .regarding.name == "pd-lease" and .regarding.namespace == "kube-system" and
	      .regarding.uid == "'"$lease_uid"'")')" = 1 ]
}
ok "Event Normal LeaderElection \"pd-a became leader\" regarding the Lease, by its uid ($lease_uid)" wait_for 5 leader_event
host=$(hostname)
ok "reportingInstance is <scheduler-name>-<hostname> (preemptd-$host)" \
	[ "$(nevents default "select(.reason == \"Scheduled\" and .reportingInstance == \"preemptd-$host\")")" = 1 ]

# 409: someone else bound it first; kube counts the attempt as an error and tells the pod
msg409='Operation cannot be fulfilled on pods/binding "c409": pod c409 is already assigned to node "elsewhere"'
kube_fault "$(jq -cn --arg m "$msg409" '{kind: "status", code: 409, resource: "pods/binding", message: $m}')"
pending default c409 0 100m
errored() { [ "$(metric a scheduler_schedule_attempts_total '{"result": "error"}')" = 1 ]; }
ok "a binding refused with 409: scheduler_schedule_attempts_total{result=error} 1" wait_for 10 errored
ok "...and not counted scheduled" [ "$(metric a scheduler_schedule_attempts_total '{"result": "scheduled"}')" = 1 ]
refused_event() {
	[ "$(events default | jq --arg m "$msg409" '[.[] | select(.reason == "FailedScheduling" and .type == "Warning" and
	      .regarding.name == "c409" and .note == $m)] | length')" = 1 ]
}
ok "...and a Warning FailedScheduling Event with the API server's refusal" wait_for 5 refused_event

# what kubectl describe pod reads: /api/v1 Events by involvedObject field selector
uid=$(uid_of default c409)
described() {
	kube_curl admin -s -G "$KUBE_URL/api/v1/namespaces/default/events" \
		--data-urlencode "fieldSelector=involvedObject.name=c409,involvedObject.namespace=default,involvedObject.uid=$uid,involvedObject.kind=Pod" |
		jq -e --arg m "$msg409" '.kind == "EventList" and (.items | length) == 1 and .items[0].message == $m and
			.items[0].reason == "FailedScheduling" and .items[0].involvedObject.uid == "'"$uid"'" and
			.items[0].reportingComponent == "preemptd" and .items[0].eventTime != null' >/dev/null
}
ok "/api/v1 serves it as a core Event (note->message, regarding->involvedObject), found by involvedObject.*" described

# fits nowhere, nothing to preempt: each attempt runs PostFilter (DefaultPreemption.PostFilter's
# deferred metrics.PreemptionAttempts.Inc()), helpful or not
pending default big 0 64
unsched() { [ "$(cond default big PodScheduled reason)" = Unschedulable ]; }
ok "a pod that fits nowhere is unschedulable" wait_for 10 unsched
preempt_counted() { [ "$(metric a scheduler_preemption_attempts_total)" -ge 1 ]; }
ok "scheduler_preemption_attempts_total counts its PostFilter run" wait_for 5 preempt_counted
parked() { [ "$(metric a scheduler_queue_incoming_pods_total '{"queue": "unschedulable", "event": "ScheduleAttemptFailure"}')" -ge 1 ]; }
ok "scheduler_queue_incoming_pods_total{queue=unschedulable,event=ScheduleAttemptFailure} counts it parked" wait_for 5 parked

# tried again (a bound pod went, which may free room: kube's AssignedPodDelete; a node label the
# pod does not select no longer requeues it, as with kube's queueing hints) and refused in the
# same words: the Event grows a series instead of being repeated or kept quiet (client-go's events
# broadcaster: recordToSink, createPatchBytesForSeries)
kube_curl admin -s -X DELETE "$KUBE_URL/api/v1/namespaces/default/pods/slow" >/dev/null
requeued() {
	local a b
	a=$(metric a scheduler_queue_incoming_pods_total '{"queue": "active", "event": "AssignedPodDelete"}')
	b=$(metric a scheduler_queue_incoming_pods_total '{"queue": "backoff", "event": "AssignedPodDelete"}')
	[ $((${a:-0} + ${b:-0})) -ge 1 ]
}
ok "scheduler_queue_incoming_pods_total{event=AssignedPodDelete}: the bound pod's deletion requeued it" wait_for 10 requeued
series_two() {
	[ "$(nevents default 'select(.reason == "FailedScheduling" and .regarding.name == "big" and .series.count == 2 and
	      (.series.lastObservedTime | test("\\.[0-9]{6}Z$")))')" = 1 ]
}
ok "a repeated FailedScheduling: one Event, series.count 2, series.lastObservedTime set" wait_for 10 series_two
ok "...sent as a strategic merge patch of the series" \
	[ "$(nreqs '.method == "PATCH" and .resource == "events" and .status == 200 and (.body | keys) == ["series"]')" -ge 1 ]
ok "...no second FailedScheduling Event for it" \
	[ "$(nevents default 'select(.reason == "FailedScheduling" and .regarding.name == "big")')" = 1 ]
core_count() {
	kube_curl admin -s -G "$KUBE_URL/api/v1/namespaces/default/events" --data-urlencode "fieldSelector=involvedObject.name=big" |
		jq -e '[.items[] | select(.reason == "FailedScheduling" and .series.count == 2)] | length == 1' >/dev/null
}
ok "...and /api/v1 shows the series too (kubectl get events' COUNT)" core_count

# the walk-through's commands themselves, when kubectl is there
if command -v kubectl >/dev/null 2>&1; then
	k() { kubectl --kubeconfig "$KUBE_DIR/kubeconfig-admin" --cache-dir "$T/kcache" --request-timeout 10s "$@"; }
	got_events() {
		k get events -o wide >"$T/kevents" 2>&1 &&
		grep -E "Warning +FailedScheduling +pod/big .*preemptd, preemptd-$host .* 2 +big\." "$T/kevents" >/dev/null &&
		grep -F "pod/c409" "$T/kevents" | grep -F "$msg409" >/dev/null
	}
	ok "kubectl get events -o wide: preemptd's Events, its source, the series' count" got_events ||
		sed 's/^/# /' "$T/kevents"
	described() {
		k describe pod c409 >"$T/kdescribe" 2>&1 &&
		sed -n '/^Events:/,$p' "$T/kdescribe" | grep -E "Warning +FailedScheduling +[^ ]+ +preemptd +" |
			grep -F "$msg409" >/dev/null
	}
	ok "kubectl describe pod: its Events show the refused binding" described || sed 's/^/# /' "$T/kdescribe"
else
	skip "kubectl get events / describe pod" "kubectl not installed"
fi

v=$(pd_get a '/readyz?verbose')
ok "/readyz?verbose lists kube-scheduler's checks then 'readyz check passed'" \
	[ "$v" = $'[+]shutdown ok\n[+]sched-handler-sync ok\n[+]leaderElection ok\nreadyz check passed' ]
ok "/readyz without ?verbose: ok" [ "$(pd_get a /readyz)" = ok ]
ok "preemptd stays up" pd_alive a
done_testing
