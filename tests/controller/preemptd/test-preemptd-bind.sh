#!/bin/bash
# preemptd against the stand-in API server: a pending pod of its own is bound (POST pods/binding
# with the pod's uid, then Event Scheduled); another scheduler's pending pod is left alone; a pod
# that fits nowhere gets PodScheduled=False/Unschedulable with the FitError preemptctl prints for
# the same cluster, byte for byte, and a FailedScheduling Event, and is bound once a node joins.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
pd_setup

node n1 4
pending default web 0 500m
pending default theirs 0 100m default-scheduler
pd_start a --leader-elect no
ok "a pending pod of its own is bound" wait_for 10 bound_to default web n1
uid=$(uid_of default web)
binding_ok() {
	[ "$(nreqs '.method == "POST" and .resource == "pods" and .subresource == "binding" and .name == "web"')" = 1 ] &&
	reqs '.subresource == "binding" and .name == "web"' | jq -e --arg uid "$uid" \
		'.status == 201 and .body.metadata.uid == $uid and .body.target.name == "n1" and .body.target.kind == "Node"' >/dev/null
}
ok "...with one POST pods/web/binding guarded by the pod's uid, answered 201" binding_ok
scheduled_event() {
	[ "$(nevents default "select(.reason == \"Scheduled\" and .regarding.uid == \"$uid\" and .type == \"Normal\" and
	      .action == \"Binding\" and .reportingController == \"preemptd\" and
	      .note == \"Successfully assigned default/web to n1\")")" = 1 ]
}
ok "...and one events.k8s.io Event Normal Scheduled \"Successfully assigned default/web to n1\"" wait_for 5 scheduled_event
untouched() {
	[ "$(nreqs '.name == "theirs" and (.verb == "create" or .verb == "patch" or .verb == "update" or .verb == "delete")')" = 0 ] &&
	[ -z "$(node_of default theirs)" ]
}
ok "another scheduler's pending pod is not touched" untouched

# fits nowhere: n1 has 3.5 cpu left
pending default big 0 8
unsched() { [ "$(cond default big PodScheduled reason)" = Unschedulable ]; }
ok "a pod that fits nowhere: PodScheduled=False, Unschedulable" wait_for 10 unsched
msg=$(cond default big PodScheduled message)
# what preemptctl says about the same cluster, read from the same API server
"$PCTL" preempt --kubeconfig "$KUBE_DIR/kubeconfig-admin" --pod default/big --explain >"$T/pctl.json" 2>"$T/pctl.err"
want=$(jq -r .reason "$T/pctl.json")
why=$(sed -n 's/^why: //p' "$T/pctl.err")
same_text() { [ -n "$msg" ] && [ "$msg" = "$want" ] || { echo "# preemptd: $msg"; echo "# preemptctl: $want"; return 1; }; }
ok "...its message is preemptctl preempt's reason, byte for byte" same_text
failed_event() {
	[ "$(events default | jq --arg m "$msg $why" '[.[] | select(.reason == "FailedScheduling" and .type == "Warning" and
	      .note == $m and .regarding.name == "big")] | length')" = 1 ]
}
ok "...and a Warning FailedScheduling Event with the same message, then preemptctl's why" wait_for 5 failed_event
ok "the journal line names it" logged a "Pod default/big is unschedulable: $msg"
node n2 16
ok "bound once a node joins where it fits" wait_for 15 bound_to default big n2
ok "preemptd stays up" pd_alive a
pid=${PD_PID[a]}
kill -TERM "$pid"; wait "$pid"; rc=$?; unset "PD_PID[a]"
ok "SIGTERM: it exits 0" [ "$rc" = 0 ]
done_testing
