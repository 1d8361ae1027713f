#!/bin/bash
# --min-runtime against the stand-in: kube-scheduler's choice (preemptctl preempt, and preemptd
# without the option) takes the pod that started last; with --min-runtime 10m the pod that has run
# for hours goes instead, and the young one is taken only when nothing else fits. About 8 s.
. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/../../kube/lib-apiserver.sh"
. "$(dirname "$0")/lib-preemptd.sh"
pd_require
pd_setup

started() {	# started NAME NODE TIME: a running pod of another scheduler, started at TIME
	kube_apply "$(kube_pod_json default "$1" "$2" 0 64Mi 3 |
		jq -c --arg t "$3" '.spec.schedulerName = "default-scheduler" | .status = {"startTime": $t}')" >/dev/null
}
node n1 4
node n2 4
started old n1 2020-01-01T00:00:00Z
started young n2 "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
pending default p 1000 3
"$PCTL" preempt --kubeconfig "$KUBE_DIR/kubeconfig-admin" --pod default/p >"$T/kube.json" 2>/dev/null
ok "kube-scheduler's choice (preemptctl): the young pod on n2" jq -e '.node == "n2" and .victims == ["default/young"]' "$T/kube.json"

pd_start a --leader-elect no --min-runtime 10m
ok "with --min-runtime 10m p preempts the old pod on n1" wait_for 10 eval 'nominated p n1 && deleted old'
ok "...the young one is spared" eval '! deleted young'
ok "p is bound to n1" wait_for 10 bound_to default p n1
# nothing but the young pod is left to preempt
pending default q 1000 3
ok "when nothing else fits, the young pod is a victim after all" wait_for 10 eval 'nominated q n2 && deleted young'
ok "q is bound to n2" wait_for 10 bound_to default q n2
done_testing
