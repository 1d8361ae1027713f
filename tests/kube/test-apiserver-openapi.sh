#!/bin/bash
# The stand-in serves what `kubectl apply` reads before it writes, validation on (its default):
# the OpenAPI v3 index and one document per group-version, fetched as kubectl fetches them (the
# index, then each document's serverRelativeURL, as JSON). kubectl looks for the PATCH operation of
# the object's kind (x-kubernetes-group-version-kind) and its fieldValidation query parameter;
# found, it leaves the validation to the server. Before, the stand-in answered 404 and every
# `kubectl apply` failed with "failed to download openapi" until --validate=false (issue 36.2).
# With a kubectl: `kubectl apply -f examples/preemptd/` as a user types it, and `kubectl explain`.
cd "$(dirname "$0")" || exit 1
. ../lib.sh
. ./lib-apiserver.sh
. ./lib-checks.sh

kube_start || { echo "not ok 1 - server starts"; exit 1; }
out=$KUBE_DIR/out

ok "GET /openapi/v3 (Accept: application/json): 200, a path per group-version served" eval '
	is "$(code admin "$KUBE_URL/openapi/v3" -H "Accept: application/json")" 200 &&
	jqo "(.paths | keys) as \$k | [\"api/v1\", \"apis/scheduling.k8s.io/v1\", \"apis/policy/v1\", \"apis/events.k8s.io/v1\", \"apis/coordination.k8s.io/v1\"] - \$k == []" &&
	jqo "[.paths[].serverRelativeURL | test(\"^/openapi/v3/(api|apis/[^?]+)/v1\\\\?hash=[0-9A-F]+\$\")] | all"'
url=$(jq -r '.paths["api/v1"].serverRelativeURL' "$out")
ok "the api/v1 document at its serverRelativeURL: OpenAPI 3.0, Pod's schema named as kube-apiserver names it" eval '
	is "$(code admin "$KUBE_URL$url" -H "Accept: application/json")" 200 &&
	jqo ".openapi == \"3.0.0\" and .components.schemas[\"io.k8s.api.core.v1.Pod\"][\"x-kubernetes-group-version-kind\"] == [{\"group\": \"\", \"version\": \"v1\", \"kind\": \"Pod\"}]"'
ok "...the PATCH of a pod carries Pod's group-version-kind and the fieldValidation query parameter" \
	jqo '.paths["/api/v1/namespaces/{namespace}/pods/{name}"].patch |
		.["x-kubernetes-group-version-kind"] == {"group": "", "version": "v1", "kind": "Pod"} and
		([.parameters[] | select(.name == "fieldValidation" and .in == "query")] | length == 1)'
ok "...every \$ref resolves within the document" eval '
	jq -e "[.. | objects | .[\"\$ref\"]? // empty | sub(\"#/components/schemas/\"; \"\")] - (.components.schemas | keys) == []" "$out" >/dev/null'
ok "an unknown group-version: 404" is "$(code admin "$KUBE_URL/openapi/v3/apis/example.com/v1")" 404
ok "anonymous: 401, like the rest of the API" is "$(code anonymous "$KUBE_URL/openapi/v3")" 401

if command -v kubectl >/dev/null 2>&1; then
	k() { kubectl --kubeconfig "$KUBE_DIR/kubeconfig-admin" --cache-dir "$KUBE_DIR/kcache" --request-timeout 10s "$@"; }
	ok "kubectl apply -f examples/preemptd/ (validation on): every object created" eval '
		k apply -f ../../examples/preemptd/ >"$out" 2>&1 && has "pod/critical created" "$out" &&
		has "poddisruptionbudget.policy/web created" "$out" && has "priorityclass.scheduling.k8s.io/batch created" "$out"'
	ok "...nothing said about openapi" bash -c "! grep -qi openapi '$out'"
	ok "...and again: unchanged (the three-way patch computed)" eval '
		k apply -f ../../examples/preemptd/critical.yaml >"$out" 2>&1 && has "pod/critical unchanged" "$out"'
	ok "kubectl explain finds the kinds" eval 'k explain poddisruptionbudget >"$out" 2>&1 && has "PodDisruptionBudget" "$out"'
else
	skip "kubectl apply with validation" "kubectl not installed"
fi
done_testing
