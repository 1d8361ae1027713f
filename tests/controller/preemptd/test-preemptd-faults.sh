#!/bin/bash
# preemptd when the API server misbehaves (stand-in faults): a binding refused with 409 is never
# sent again and gets no Scheduled Event; 500s and a 429 with Retry-After are retried (the 429
# after its Retry-After); a watch answered with 410 Gone, cut, or garbled is resumed and what
# happened meanwhile is seen; a pod the decoder refuses is logged once (KIND/NS/NAME: field: what)
# and skipped while the others are scheduled; a 403 names the permission missing; the API server
# down for a minute and back loses no pending pod, and none is bound twice.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
pd_setup

node n1 16
# watches end every 2 s, so that a fault injected for the next watch is met soon
PD_WATCH_TIMEOUT=2s pd_start a --leader-elect no
synced() { logged a "Caches synced"; }
wait_for 10 synced || bail "preemptd syncs its caches"

# 409: someone else bound it first (the stand-in answers as if)
kube_fault '{"kind": "status", "code": 409, "resource": "pods/binding", "message": "pod c409 is already assigned to node \"elsewhere\""}'
pending default c409 0 100m
refused409() { logged a "Binding of pod default/c409 refused (HTTP 409)"; }
ok "409 on the binding: logged as someone else's decision" wait_for 10 refused409
sleep 1.5
ok "...not sent again" [ "$(nreqs '.subresource == "binding" and .name == "c409"')" = 1 ]
ok "...no Scheduled Event for it" [ "$(nevents default 'select(.reason == "Scheduled" and .regarding.name == "c409")')" = 0 ]
# the watch says something new about it (still pending: whoever had it let it go): its turn again
kube_ctl POST /objects "$(obj default c409 | jq -c '.metadata.labels.touched = "yes"')" >/dev/null
ok "...scheduled again once the watch brings news of it" wait_for 10 bound_to default c409 n1

# 500 twice, then fine
kube_fault '{"kind": "status", "code": 500, "count": 2, "resource": "pods/binding"}'
pending default c500 0 100m
ok "500 on the binding: retried until bound" wait_for 15 bound_to default c500 n1
ok "...three attempts, one accepted" [ "$(nreqs '.subresource == "binding" and .name == "c500"')" = 3 ]

# 429 with Retry-After: 2
kube_fault '{"kind": "status", "code": 429, "retry_after": 2, "resource": "pods/binding"}'
pending default c429 0 100m
ok "429 on the binding: bound in the end" wait_for 15 bound_to default c429 n1
waited() {
	local t
	mapfile -t t < <(reqs '.subresource == "binding" and .name == "c429"' | jq -r .ts)
	[ "${#t[@]}" = 2 ] && "$PY" -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= 1.95 else 1)' "$(ts_diff "${t[0]}" "${t[1]}")"
}
ok "...the second try after the Retry-After (2 s)" waited

# watches: 410 Gone, a cut, garbage — each resumed, what happened meanwhile seen. Each fault is
# taken by the next pod watch (they end every 2 s); the pod is created once it was.
consumed() { [ "$(kube_ctl GET /faults | jq length)" = 0 ]; }
kube_fault '{"kind": "gone", "resource": "pods"}'
wait_for 5 consumed
pending default w410 0 100m
ok "a 410 Gone on the pod watch: relisted, the pod seen and bound" wait_for 15 bound_to default w410 n1
ok "...the relist said so" logged a "relisting"
kube_fault '{"kind": "drop", "resource": "pods", "after": 0}'
wait_for 5 consumed
pending default wdrop 0 100m
ok "a watch cut mid-stream: resumed, the pod bound" wait_for 15 bound_to default wdrop n1
kube_fault '{"kind": "garbage", "resource": "pods", "watch": true}'
wait_for 5 consumed
pending default wgarb 0 100m
ok "garbage in the watch: resumed, the pod bound" wait_for 15 bound_to default wgarb n1
ok "...the garbage logged" logged a "Malformed watch stream"

# a pod the decoder refuses: once in the log, skipped; the others go on
kube_ctl POST '/objects?raw=1' '{"apiVersion":"v1","kind":"Pod","metadata":{"namespace":"default","name":"bad"},
  "spec":{"schedulerName":"preemptd","priority":0,"containers":[{"name":"c","resources":{"requests":{"cpu":"1x"}}}]},
  "status":{"phase":"Pending"}}' >/dev/null
kube_ctl POST '/objects?raw=1' "$(kube_ctl GET /objects/pods/default/bad | jq -c '.metadata.labels.again = "yes"')" >/dev/null
pending default good 0 100m
ok "a good pod next to a bad one is bound" wait_for 10 bound_to default good n1
refused_once() {
	[ "$(logged_n a 'pods/default/bad: spec.containers\[0\].resources.requests.cpu: invalid quantity "1x"')" = 1 ]
}
ok "the bad one: logged once as pods/default/bad: field: what, skipped" refused_once
ok "...counted in preemptd_objects_refused_total" [ "$(metric a preemptd_objects_refused_total '{"resource":"pods"}')" -ge 2 ]

# 403: the permission missing is named
kube_fault '{"kind": "forbidden", "count": -1, "resource": "pods/binding"}'
pending default c403 0 100m
named() { logged a "preemptd's ClusterRole lacks create on pods/binding"; }
ok "403 on the binding: the journal names the permission missing" wait_for 10 named
kube_ctl DELETE /faults >/dev/null
ok "...bound once it is granted" wait_for 20 bound_to default c403 n1

# the API server away for a minute: pods created meanwhile (the control port stays up) are all
# scheduled when it is back, each once
kube_outage ${PD_OUTAGE:-60}
for i in $(seq 1 5); do pending default "out$i" 0 100m; done
sleep $(( ${PD_OUTAGE:-60} + 1 ))
all_out_bound() { local i; for i in $(seq 1 5); do bound_to default "out$i" n1 || return 1; done; }
ok "the API server down a minute and back: every pending pod bound" wait_for 40 all_out_bound
once() { kube_requests | jq -s -e '[.[] | select(.subresource == "binding" and .status == 201) | .name] | group_by(.) | all(length == 1)' >/dev/null; }
ok "...none bound twice" once
ok "...preemptd stayed up throughout" pd_alive a
done_testing
