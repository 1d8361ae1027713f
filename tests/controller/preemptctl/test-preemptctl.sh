#!/bin/bash
# preemptctl on files: decisions (stdout, exactly one JSON object), errors (stderr, exact text),
# exit codes (0 decision, 1 input rejected, 2 usage).
. "$(dirname "$0")/../../lib.sh"

PCTL=$BUILD/preemptctl
F=tests/fixtures/k8s
[ -x "$PCTL" ] || skip_all "$PCTL not built"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# pods without status.startTime count as started "now": pin it so runs are reproducible
NOW=--now=2024-06-01T00:00:00Z

. "$(dirname "$0")/lib-expect.sh"

# --- usage ---------------------------------------------------------------------------------------
ok "--help exits 0 and shows both commands" expect 0 "*" "" bash -c "$PCTL --help | grep -q 'preempt CLUSTER' && $PCTL --help | grep -q 'check CLUSTER'"
ok "--version" expect 0 "preemptctl 0.1.0 (libpreempt 0.1)" "" "$PCTL" --version
ok "no command is a usage error" expect 2 "" "preemptctl: missing command (preempt, schedule or check)
Try 'preemptctl --help'." "$PCTL"
ok "unknown command" expect 2 "" "~unknown command 'schedulee'" "$PCTL" schedulee $F/cluster.json
ok "unknown option" expect 2 "" "~unknown option '--bogus'" "$PCTL" check --bogus $F/cluster.json
ok "preempt without a file" expect 2 "" "~preempt needs a CLUSTER file" "$PCTL" preempt --pod default/x
ok "--pod with an empty namespace" expect 2 "" "~--pod '/x': expected NAMESPACE/NAME" "$PCTL" preempt $F/cluster.json --pod /x
ok "--pod argument missing" expect 2 "" "~option '--pod' needs an argument" "$PCTL" preempt $F/cluster.json --pod
ok "bad --now" expect 2 "" "~--now 'tomorrow'" "$PCTL" preempt $F/cluster.json --pod x --now tomorrow
ok "check takes no --pod" expect 2 "" "~check takes no --pod" "$PCTL" check $F/cluster.json --pod default/x
ok "--pdb other than prefer or strict" expect 2 "" "preemptctl: --pdb: expected prefer or strict, not \"lax\"
Try 'preemptctl --help'." "$PCTL" preempt $F/cluster.json --pod x --pdb lax
ok "schedule --pdb other than prefer or strict" expect 2 "" "~--pdb: expected prefer or strict" \
	"$PCTL" schedule $F/cluster.json --pdb lax
ok "check takes no --pdb" expect 2 "" "~check takes no --pod, --explain, --now or --pdb" "$PCTL" check $F/cluster.json --pdb strict
# the README's example (examples/pdb/): kube-scheduler breaks the budget web on node-a; strict
# goes to node-c, as preemptd --pdb strict would
nominates() {	# nominates WANT ARGS...: the schedule nominates payments-0 as WANT says
	local want=$1; shift
	"$PCTL" schedule examples/pdb/cluster.yaml --max-time 1s "$NOW" "$@" 2>/dev/null |
		grep -qF "\"event\":\"nominate\",\"pod\":\"default/payments-0\",$want"
}
ok "schedule (--pdb prefer, the default): node-a, web-0 among the victims" \
	nominates '"node":"node-a","victims":["default/report-0","default/web-0"]}'
ok "schedule --pdb strict: node-c, within the budgets" nominates '"node":"node-c","victims":["default/db-large"]}' --pdb strict

# --- check: good inputs -------------------------------------------------------------------------
ok "check: kubectl List (JSON)" expect 0 \
	"ok: 5 PriorityClasses, 3 nodes, 10 pods (6 bound, 4 pending, 0 finished), 0 PodDisruptionBudgets" "" \
	"$PCTL" check $F/cluster.json
ok "check: the same List in YAML" expect 0 \
	"ok: 5 PriorityClasses, 3 nodes, 10 pods (6 bound, 4 pending, 0 finished), 0 PodDisruptionBudgets" "" \
	"$PCTL" check $F/cluster.yaml
ok "check: the documentation's examples load as written" expect 0 \
	"ok: 2 PriorityClasses, 0 nodes, 1 pod (0 bound, 1 pending, 0 finished), 0 PodDisruptionBudgets" "" \
	"$PCTL" check $F/docs-priorityclass.yaml $F/docs-priorityclass-nonpreempting.yaml $F/docs-pod.yaml
ok "preempt: no node at all is Kubernetes' ErrNoNodesAvailable alone, no preemption attempted" expect 0 \
	'{"pod":"default/nginx","node":null,"reason":"no nodes available to schedule pods"}' "" \
	"$PCTL" preempt $F/docs-priorityclass.yaml $F/docs-pod.yaml --pod default/nginx $NOW
ok "preempt: two globalDefault classes read back from a cluster load with a warning; the lowest wins" expect 0 \
	'{"pod":"default/classless","node":"n1","victims":[]}' \
"$F/two-defaults-snapshot.yaml:10: warning: priorityclasses/also-standard: globalDefault: PriorityClass standard is also marked as default; pods without a priorityClassName get the lowest value, also-standard's 500
pod default/classless: priority 500, preemptionPolicy PreemptLowerPriority
node n1: fits
decision: fits on n1 without preemption (the feasible node with the smallest name)" \
	"$PCTL" preempt $F/two-defaults-snapshot.yaml --pod classless --explain $NOW
ok "check: a namespace on a cluster-scoped object is rejected as the API server does" expect 1 "" \
"$F/bad-cluster-scoped-namespace.yaml:5: priorityclasses/tier1: metadata.namespace: Forbidden: not allowed on this type
$F/bad-cluster-scoped-namespace.yaml:12: nodes/n1: metadata.namespace: Forbidden: not allowed on this type
preemptctl: 2 problems found" \
	"$PCTL" check $F/bad-cluster-scoped-namespace.yaml
ok "check: standard input" expect 0 \
	"ok: 1 PriorityClass, 0 nodes, 0 pods (0 bound, 0 pending, 0 finished), 0 PodDisruptionBudgets" "" \
	bash -c "$PCTL check - < $F/docs-priorityclass.yaml"

# a malformed kubeconfig: our one line with its line and column, none of libfyaml's own output
printf 'apiVersion: v1\n[clusters: 1\n' >"$tmp/bad-kubeconfig"
chmod 600 "$tmp/bad-kubeconfig"
ok "check --kubeconfig: malformed YAML is one line with FILE:LINE:COLUMN, no parser internals" expect 1 "" \
"preemptctl: $tmp/bad-kubeconfig:2:1: not valid YAML: could not find expected ':'
preemptctl: 1 problem found" \
	"$PCTL" check --kubeconfig "$tmp/bad-kubeconfig"
# --- check: bad inputs, every problem reported ---------------------------------------------------
# never a silently smaller cluster: an input that holds nothing, or a List that lost its end
: >"$tmp/empty.json"
ok "check: an empty file is refused, not an empty cluster (one line, status 2)" expect 2 "" \
"$tmp/empty.json: empty: no object or List in it" \
	"$PCTL" check "$tmp/empty.json"
ok "check: empty standard input likewise" expect 2 "" "~<stdin>: empty: no object or List in it" \
	bash -c "$PCTL check - </dev/null"
printf '{"apiVersion": "v1", "items": []}\n' >"$tmp/nokind.json"
ok "check: a List without kind is refused (one line, status 2)" expect 2 "" \
"$tmp/nokind.json:1: a List (top-level \"items\") without kind" \
	"$PCTL" check "$tmp/nokind.json"
# kubectl get -o yaml: apiVersion, items, then kind: List and metadata — cut after an item, the
# rest of the file reads as valid YAML with one pod fewer
cat >"$tmp/kubectl.yaml" <<'YAML'
apiVersion: v1
items:
- apiVersion: scheduling.k8s.io/v1
  kind: PriorityClass
  metadata:
    name: high-priority
  value: 1000000
- apiVersion: v1
  kind: Pod
  metadata:
    name: nginx
    namespace: default
  spec:
    priorityClassName: high-priority
    containers:
    - name: nginx
      image: nginx
kind: List
metadata:
  resourceVersion: ""
YAML
ok "check: kubectl's whole List is read (1 pod)" expect 0 \
	"ok: 1 PriorityClass, 0 nodes, 1 pod (0 bound, 1 pending, 0 finished), 0 PodDisruptionBudgets" "" \
	"$PCTL" check "$tmp/kubectl.yaml"
head -7 "$tmp/kubectl.yaml" >"$tmp/cut.yaml"
ok "check: the same List cut at an item boundary is refused, not read as 0 pods" expect 2 "" \
"$tmp/cut.yaml:1: a List (top-level \"items\") without kind: cut short after its items? (kubectl's ends with kind: List)" \
	"$PCTL" check "$tmp/cut.yaml"
ok "preempt: an empty input is a usage error too" expect 2 "" "~empty: no object or List in it" \
	"$PCTL" preempt "$tmp/empty.json" --pod default/x
ok "check: invalid quantity" expect 1 "" \
"$F/bad-quantity.json:19: pods/default/web-1: spec.containers[0].resources.requests.cpu: invalid quantity \"1x\": unknown suffix \"x\"
preemptctl: 1 problem found" \
	"$PCTL" check $F/bad-quantity.json
ok "check: unknown PriorityClass (the docs' pod without its class)" expect 1 "" \
"$F/docs-pod.yaml:1: pods/default/nginx: spec.priorityClassName: no PriorityClass with name high-priority was found
preemptctl: 1 problem found" \
	"$PCTL" check $F/docs-pod.yaml
ok "check: duplicate globalDefault" expect 1 "" \
"$F/bad-two-defaults.yaml:9: priorityclasses/also-standard: globalDefault: Forbidden: PriorityClass standard is already marked as default. Only one default can exist
preemptctl: 1 problem found" \
	"$PCTL" check $F/bad-two-defaults.yaml
ok "check: missing fields, all of them" expect 1 "" \
"$F/bad-missing-fields.yaml:1: priorityclasses/no-value: value: required field is missing
$F/bad-missing-fields.yaml:10: nodes/(unnamed): metadata.name: required field is missing
$F/bad-missing-fields.yaml:19: pods/default/no-containers: spec.containers: required field is missing
$F/bad-missing-fields.yaml:27: pods/default/nameless-container: spec.containers[0].name: required field is missing
preemptctl: 4 problems found" \
	"$PCTL" check $F/bad-missing-fields.yaml
ok "check: truncated JSON" expect 1 "" \
"$F/bad-truncated.json:316: syntax error: premature EOF
preemptctl: 1 problem found" \
	"$PCTL" check $F/bad-truncated.json
ok "check: YAML syntax error" expect 1 "" \
"$F/bad-syntax.yaml:6: syntax error: missing comma in flow mapping
preemptctl: 1 problem found" \
	"$PCTL" check $F/bad-syntax.yaml
ok "check: PriorityClass rules, references and duplicates, all reported" expect 1 "" \
"$F/bad-rules.yaml:27: priorityclasses/Bad_Name: metadata.name: Invalid value: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character
$F/bad-rules.yaml:31: priorityclasses/system-foo: metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only
$F/bad-rules.yaml:35: priorityclasses/huge: value: Forbidden: maximum allowed value of a user defined priority is 1000000000
$F/bad-rules.yaml:39: priorityclasses/pol: preemptionPolicy: invalid preemptionPolicy \"Sometimes\": supported values: \"Never\", \"PreemptLowerPriority\"
$F/bad-rules.yaml:19: nodes/n1: listed twice
$F/bad-rules.yaml:6: pods/default/p: spec.nodeName: node ghost is not in the input
$F/bad-rules.yaml:10: warning: pods/default/q: status.nominatedNodeName: node elsewhere is not in the input, ignored
$F/bad-rules.yaml:15: pods/default/q: listed twice
preemptctl: 7 problems found" \
	"$PCTL" check $F/bad-rules.yaml
ok "check: priority admission conflicts (spec.priority, preemptionPolicy)" expect 1 "" \
"$F/bad-admission.yaml:3: pods/default/wrong-priority: spec.priority: Forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000000 from the given PriorityClass name
$F/bad-admission.yaml:11: pods/default/wrong-policy: spec.preemptionPolicy: Forbidden: the preemptionPolicy (PreemptLowerPriority) must not differ from the one of PriorityClass high-priority-nonpreempting (Never)
preemptctl: 2 problems found" \
	"$PCTL" check $F/docs-priorityclass.yaml $F/docs-priorityclass-nonpreempting.yaml $F/bad-admission.yaml
ok "check: problems in several files are all reported" expect 1 "" "~preemptctl: 3 problems found" \
	"$PCTL" check $F/bad-quantity.json $F/bad-syntax.yaml $F/docs-pod.yaml
ok "check: a missing file" expect 1 "" \
"preemptctl: $F/nope.json: No such file or directory
preemptctl: 1 problem found" \
	"$PCTL" check $F/nope.json
# libfyaml 0.7.12 loops forever on these bytes in a directive line (FINDINGS.md k8s-libfyaml-hang)
ok "check: invalid UTF-8 on standard input, before the parser" expect 1 "" \
"<stdin>:1:2: invalid UTF-8 (byte 0xff): Kubernetes objects are UTF-8 text
preemptctl: 1 problem found" \
	bash -c "printf '%%\\xff\\n' | timeout 10 $PCTL check -"
printf 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: caf\xc3\xa9\xe0\x80\n' >"$tmp/bad-utf8.yaml"
ok "check: invalid UTF-8 in a file, line and column in characters" expect 1 "" \
"$tmp/bad-utf8.yaml:4:13: invalid UTF-8 (byte 0xe0): Kubernetes objects are UTF-8 text
preemptctl: 1 problem found" \
	timeout 10 "$PCTL" check "$tmp/bad-utf8.yaml"
truncate -s 300M "$tmp/huge.json"
ok "check: a file over 256 MiB is refused without reading it" expect 1 "" \
"preemptctl: $tmp/huge.json: larger than 268435456 bytes, refusing to read it
preemptctl: 1 problem found" \
	timeout 10 "$PCTL" check "$tmp/huge.json"
rm -f "$tmp/huge.json"

# --- check: warnings ------------------------------------------------------------------------------
ok "check: a deleted class keeps admitted pods' priority (warning); finished pods are ignored" expect 0 \
	"ok: 0 PriorityClasses, 1 node, 2 pods (1 bound, 0 pending, 1 finished), 0 PodDisruptionBudgets, 1 warning" \
	"$F/deleted-class.yaml:3: warning: pods/batch/legacy: spec.priorityClassName: no PriorityClass with name retired was found; the pod was admitted before, keeping spec.priority 500" \
	"$PCTL" check $F/deleted-class.yaml $F/one-node.yaml
ok "check: other kinds are ignored with a warning" expect 0 "*" \
	"<stdin>:1: warning: Service/web: kind Service is not used by preemptctl, ignored" \
	bash -c "printf 'apiVersion: v1\nkind: Service\nmetadata: {name: web}\n' | $PCTL check -"

# --- preempt: decisions --------------------------------------------------------------------------
# n1 would lose a1 (priority 500), n2 loses b2 (priority 100, the younger of b1/b2), n3 cannot fit
# the pod even without its lower-priority pod: n2 wins on "lowest highest-victim priority".
ok "preempt: picks the node and victims (JSON List)" expect 0 \
	'{"pod":"default/preemptor","node":"n2","victims":["default/b2"]}' "" \
	"$PCTL" preempt $F/cluster.json --pod default/preemptor $NOW
ok "preempt: the same from the YAML List, options first" expect 0 \
	'{"pod":"default/preemptor","node":"n2","victims":["default/b2"]}' "" \
	"$PCTL" preempt --pod=default/preemptor $NOW $F/cluster.yaml
ok "preempt: NAME alone means namespace default" expect 0 \
	'{"pod":"default/preemptor","node":"n2","victims":["default/b2"]}' "" \
	"$PCTL" preempt $F/cluster.json --pod preemptor $NOW
ok "preempt: fits without preemption" expect 0 \
	'{"pod":"default/small","node":"n3","victims":[]}' "" \
	"$PCTL" preempt $F/cluster.json --pod default/small $NOW
ok "preempt: preemptionPolicy Never gives node null with the reason" expect 0 \
	'{"pod":"default/polite","node":null,"reason":"0/3 nodes are available: 3 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never."}' "" \
	"$PCTL" preempt $F/cluster.json --pod default/polite $NOW
ok "preempt: preemption cannot help" expect 0 \
	'{"pod":"default/huge","node":null,"reason":"0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."}' "" \
	"$PCTL" preempt $F/cluster.json --pod default/huge $NOW
ok "preempt: the documentation's nginx pod with its class, on one node" expect 0 \
	'{"pod":"default/nginx","node":"worker-1","victims":[]}' "" \
	"$PCTL" preempt $F/docs-priorityclass.yaml $F/docs-priorityclass-nonpreempting.yaml $F/docs-pod.yaml $F/one-node.yaml --pod default/nginx
ok "preempt: victims in the order Kubernetes returns them (most important first)" expect 0 \
	'{"pod":"default/preemptor","node":"z1","victims":["default/prio-3","default/prio-2","default/prio-1"]}' "" \
	"$PCTL" preempt $F/victims-order.yaml --pod preemptor $NOW
ok "preempt: the PDB split evicts the older pod and reprieves the newer one" expect 0 \
	'{"pod":"shop/urgent","node":"x1","victims":["shop/web-old"]}' "" \
	"$PCTL" preempt $F/pdb-reprieve.yaml --pod shop/urgent $NOW
ok "preempt: requests summed exactly, rounded once per pod" expect 0 \
	'{"pod":"default/halves","node":"tiny","victims":[]}' "" "$PCTL" preempt $F/rounding.yaml --pod halves
ok "preempt: an init container counts through max(sum, init)" expect 0 \
	'{"pod":"default/init-fits","node":"tiny","victims":[]}' "" "$PCTL" preempt $F/rounding.yaml --pod init-fits
ok "preempt: a sidecar adds to the pod's request" expect 0 \
	'{"pod":"default/sidecar-too-big","node":null,"reason":"0/1 nodes are available: 1 Insufficient memory. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."}' "" \
	"$PCTL" preempt $F/rounding.yaml --pod sidecar-too-big
ok "preempt: --explain gives every node's verdict and the deciding criterion" expect 0 \
	'{"pod":"default/preemptor","node":"n2","victims":["default/b2"]}' \
"pod default/preemptor: priority 1000, preemptionPolicy PreemptLowerPriority
node n1: candidate: 1 victim, 0 PDB violations, priority sum 2147484148; lost at: lowest highest-victim priority
    victim default/a1: priority 500, started 2024-05-01T10:00:00Z
node n2: candidate: 1 victim, 0 PDB violations, priority sum 2147483748
    victim default/b2: priority 100, started 2024-05-01T10:05:00Z
node n3: rejected, preemption does not help: Insufficient cpu
decision: preempt 1 pod on n2, picked by: lowest highest-victim priority
why: Preempting on node n2, picked by lowest highest-victim priority: 100 against 500 on n1. Victims: default/b2 (priority 100 < 1000; no PodDisruptionBudget)." \
	"$PCTL" preempt $F/cluster.json --pod default/preemptor --explain $NOW
ok "preempt: --explain for a Never pod says preemption was not attempted and why, no node 'does not help'" \
	expect 0 "*" \
"pod default/polite: priority 1000, preemptionPolicy Never
preemption not attempted: not eligible due to preemptionPolicy=Never
node n1: does not fit: Insufficient cpu
node n2: does not fit: Insufficient cpu
node n3: does not fit: Insufficient cpu
decision: no node: 0/3 nodes are available: 3 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never." \
	"$PCTL" preempt $F/cluster.json --pod default/polite --explain $NOW

# --- preempt: rejected input ---------------------------------------------------------------------
ok "preempt: unknown PriorityClass rejects the input" expect 1 "" \
"$F/docs-pod.yaml:1: pods/default/nginx: spec.priorityClassName: no PriorityClass with name high-priority was found
preemptctl: input rejected (1 problem, above): nothing is decided until it is fixed" \
	"$PCTL" preempt $F/docs-pod.yaml $F/one-node.yaml --pod default/nginx
ok "preempt: an invalid quantity anywhere rejects the input" expect 1 "" \
"$F/bad-quantity.json:19: pods/default/web-1: spec.containers[0].resources.requests.cpu: invalid quantity \"1x\": unknown suffix \"x\"
preemptctl: input rejected (1 problem, above): nothing is decided until it is fixed" \
	"$PCTL" preempt $F/cluster.json $F/bad-quantity.json --pod default/preemptor
ok "preempt: truncated JSON" expect 1 "" "~$F/bad-truncated.json:316: syntax error:" \
	"$PCTL" preempt $F/bad-truncated.json --pod default/preemptor
ok "preempt: no such pod, with the pending pods it could have meant (few: all, closest first)" expect 1 "" \
	"preemptctl: pods/default/preemtor: no such pod in the input; the pending pods: default/preemptor, default/polite, default/huge, default/small" \
	"$PCTL" preempt $F/cluster.json --pod default/preemtor
# many pending pods: the three closest names, not all of them
for i in $(seq 1 12); do
	printf -- '---\napiVersion: v1\nkind: Pod\nmetadata: {name: job-%02d, namespace: batch}\nspec: {containers: [{name: c, image: i}]}\n' "$i"
done > "$tmp/many.yaml"
ok "preempt: no such pod among many pending: the closest three" expect 1 "" \
	"preemptctl: pods/batch/job-7: no such pod in the input; the closest of 16 pending pods: batch/job-07, batch/job-01, batch/job-02" \
	"$PCTL" preempt $F/cluster.json "$tmp/many.yaml" --pod batch/job-7
ok "preempt: the CLUSTER file does not exist: how to make one, not 'preemptctl check'" expect 1 "" \
"preemptctl: $tmp/nope.json: No such file or directory
preemptctl: nothing decided: the cluster snapshot $tmp/nope.json cannot be read; \`kubectl get priorityclasses,nodes,pods,pdb,resourcequota -A -o json > $tmp/nope.json\` writes one" \
	"$PCTL" preempt "$tmp/nope.json" --pod default/x
ok "preempt: the pod file does not exist: what it should be" expect 1 "" \
"preemptctl: $tmp/nope.yaml: No such file or directory
preemptctl: nothing decided: $tmp/nope.yaml cannot be read; give the path of a pod's manifest (YAML or JSON, as for kubectl apply -f)" \
	"$PCTL" preempt $F/cluster.json "$tmp/nope.yaml" --pod default/x
ok "preempt: a pod file with exactly one pod needs no --pod" expect 0 \
	'{"pod":"default/web-9","node":"n2","victims":["default/b2"]}' "" \
	"$PCTL" preempt examples/cluster.json examples/new-pod.yaml $NOW
ok "preempt: pod files with several pods still need --pod, and say so" expect 2 "" \
	"preemptctl: preempt needs --pod NAMESPACE/NAME: the pod files hold 12 pods, batch/job-01 the first" \
	"$PCTL" preempt $F/cluster.json "$tmp/many.yaml"
ok "preempt: no pod file and no --pod: the pending pods" expect 2 "" \
	"preemptctl: preempt needs --pod NAMESPACE/NAME; the pending pods: default/huge, default/polite, default/preemptor, default/small" \
	"$PCTL" preempt $F/cluster.json
ok "preempt: a bound pod is not pending" expect 1 "" \
	"preemptctl: pods/default/a1: already bound to node n1 (spec.nodeName); only a pending pod can be scheduled" \
	"$PCTL" preempt $F/cluster.json --pod default/a1
ok "preempt: a finished pod" expect 1 "" "~preemptctl: pods/batch/done: the pod has finished (status.phase), nothing to schedule" \
	"$PCTL" preempt $F/deleted-class.yaml $F/one-node.yaml --pod batch/done
ok "preempt: exactly one JSON object on stdout" bash -c \
	"[ \$($PCTL preempt $F/cluster.json --pod default/preemptor --explain $NOW 2>/dev/null | wc -l) = 1 ]"

# --- the message cap: after 100 messages the rest are counted (README) ----------------------------
python3 - "$tmp/many.json" <<'PY'
import json, sys
items = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "default", "name": "p%d" % i},
          "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1x"}}}]}}
         for i in range(105)]
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, open(sys.argv[1], "w"), indent=1)
PY
capped() {
	"$PCTL" check "$tmp/many.json" >"$tmp/out" 2>"$tmp/err"; local rc=$?
	[ "$rc" = 1 ] || { echo "# exit $rc, want 1"; return 1; }
	[ "$(grep -c 'invalid quantity "1x"' "$tmp/err")" = 100 ] || { echo "# $(grep -c 'invalid quantity' "$tmp/err") shown, want 100"; return 1; }
	tail -n 2 "$tmp/err" | head -n 1 | grep -qx 'preemptctl: … and 5 more messages (not shown)' ||
		{ echo "# last lines:"; tail -n 2 "$tmp/err" | sed 's/^/#   /'; return 1; }
	tail -n 1 "$tmp/err" | grep -qx 'preemptctl: 105 problems found'
}
ok "105 problems: 100 shown, then '… and 5 more messages (not shown)', all 105 counted" capped
# --- nesting: 64 levels are read, the 65th is refused (README) ------------------------------------
nest() { python3 -c 'import sys; d = int(sys.argv[1]); print("[" * d + "]" * d)' "$1" >"$tmp/nest$1.json"; }
nest 64; nest 65
ok "64 nested levels are read (then refused as not an object)" expect 1 "" \
	"$tmp/nest64.json:1: expected an object, got a list
preemptctl: 1 problem found" "$PCTL" check "$tmp/nest64.json"
ok "65 nested levels: refused as too deep" expect 1 "" \
	"$tmp/nest65.json:1: nested deeper than 64 levels, refusing it
preemptctl: 1 problem found" "$PCTL" check "$tmp/nest65.json"
done_testing
