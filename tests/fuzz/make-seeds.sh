#!/bin/bash
# Regenerates the seed corpora tests/fuzz/corpus/<target>/ from the test fixtures and unit tests,
# so that fuzzing starts from every shape of input the project already knows about.
# Run from anywhere; idempotent (files are named by content hash).
set -euo pipefail
cd "$(dirname "$0")/../.."
C=tests/fuzz/corpus

seed() {	# seed TARGET < content
	local t=$1 tmp
	mkdir -p "$C/$t"
	tmp=$(mktemp)
	cat >"$tmp"
	mv "$tmp" "$C/$t/$(sha1sum <"$tmp" | cut -c1-16)"
	chmod 0644 "$C/$t/"*
}
seed_file() {	# seed_file TARGET FILE
	[ -f "$2" ] && seed "$1" <"$2"
	return 0
}
# String literals passed to the parsers in the unit tests.
literals() {	# literals FILE FUNC...
	local f=$1; shift
	for fn in "$@"; do
		grep -oE "\\b$fn\\(\"[^\"]*\"" "$f" 2>/dev/null | sed -E "s/^$fn\\(\"(.*)\"$/\\1/" || true
	done
}

# quantity: quantities and durations from the unit tests and the shipped configuration.
{
	# every short literal without a format directive: the examples and the error cases
	grep -hoE '"[^"%]{0,60}"' tests/lib/test-quantity.c | sed -E 's/^"(.*)"$/\1/' || true
	grep -hoE '=\s*[0-9.+-][0-9A-Za-z.+%-]*' conf/*.conf 2>/dev/null | sed -E 's/^=\s*//' || true
	printf '%s\n' 128974848 129e6 129M 123Mi 1.5Gi 100m 0.1 1e-3 1E+3 7Ei 1m30s 1.5h 300ms 0 5m 90s
} | sort -u | while IFS= read -r q; do [ -n "$q" ] && printf '%s' "$q" | seed quantity; done

# priority: command scripts (see fuzz-priority.c) built from the Kubernetes documentation's classes.
printf 'a high-priority 1000000 0 PreemptLowerPriority This priority class should be used for XYZ service pods only.\np high-priority - -\np - - -\n' | seed priority
printf 'a high-priority-nonpreempting 1000000 0 Never\np high-priority-nonpreempting 1000000 Never\np high-priority-nonpreempting 5 -\n' | seed priority
printf 'a default 100 1 PreemptLowerPriority\na other 5 1 Never\np - - -\nu default 100 0 PreemptLowerPriority\nu other 5 1 Never\np - - -\nr other\n' | seed priority
printf 'a system-cluster-critical 2000000000 0 PreemptLowerPriority\na system-x 5 0 Never\np system-node-critical 2000001000 -\nr system-node-critical\nd a.b-c.d\n' | seed priority
printf 'a max 1000000000 0 Never\na over 1000000001 0 Never\na min -2147483648 0 Never\na hex 0xffffffff 0 Never\np missing - -\n' | seed priority

# sched-queue: option bytes, then {op, pod, a, b} (see fuzz-sched-queue.c): add/pop/fail/event/time.
printf '\x03\x04\x05\x00\x01\x05\x00\x00\x02\x0a\x00\x03\x00\x00\x00\x05\x01\x01\x00\x06\x00\x01\x00\x08\x00\x1e\x01\x03\x00\x00\x00\x04\x01\x00\x00' | seed sched-queue
printf '\x00\x00\x00\x00\x01\x83\x07\x00\x02\x80\x00\x03\x00\x00\x00\x05\x01\x01\x04\x08\x00\x20\x02\x09\x00\x03\x00\x07\x02\x00\x00\x03\x00\x00\x00\x01\x02\x00\x00' | seed sched-queue

# C string literals (adjacent ones concatenated) from a test source that look like ini text.
ini_literals() {	# ini_literals FILE -> NUL-separated texts
	python3 - "$1" <<'PY'
import re, sys, codecs
src = open(sys.argv[1]).read() if __import__("os").path.exists(sys.argv[1]) else ""
for m in re.finditer(r'(?:"(?:[^"\\\n]|\\.)*"\s*)+', src):
    parts = re.findall(r'"((?:[^"\\\n]|\\.)*)"', m.group(0))
    text = codecs.decode("".join(parts), "unicode_escape")
    if "[" in text and "=" in text and "%" not in text:
        sys.stdout.write(text + "\0")
PY
}

# Whole-file targets: every fixture of the right kind.
for f in conf/*.conf conf/*.conf.d/*.conf tests/fixtures/conf/*.conf tests/fixtures/config/*.conf; do
	seed_file config "$f"
done
ini_literals tests/agent/common/test-config.c | while IFS= read -r -d '' t; do printf '%s' "$t" | seed config; done
# Main file plus drop-ins (pieces separated by a line "%%", see fuzz-config.c).
printf '[agent]\ninterval = 1s\n[eviction-hard]\nmemory.available = 100Mi\n%%%%\n[eviction-hard]\nmemory.available = 200Mi\n%%%%\n[priority-class high]\nvalue = 1000\nglobal-default = yes\n' | seed config
printf '[priority-class a]\nvalue = 1\nglobal-default = yes\n%%%%\n[priority-class b]\nvalue = 2\nglobal-default = yes\n' | seed config
printf '[eviction-soft]\nmemory.available = 500Mi\n%%%%\n[eviction-soft-grace-period]\nmemory.available = 1m30s\n%%%%\n[eviction-minimum-reclaim]\nmemory.available = 10%%\n' | seed config
for f in $(find tests/fixtures -path "*pods*" -name "*.conf" 2>/dev/null) tests/fixtures/metadata/*.conf; do
	seed_file podmeta "$f"
done
ini_literals tests/agent/observe/test-scan.c | while IFS= read -r -d '' t; do case $t in *"[pod]"*) printf '%s' "$t" | seed podmeta ;; esac; done
for f in tests/fixtures/clusters/*.json tests/fixtures/clusters/*.yaml tests/fixtures/clusters/*.yml \
         tests/fixtures/k8s/*.json tests/fixtures/k8s/*.yaml tests/controller/*.json tests/controller/*.yaml; do
	seed_file k8s "$f"
done
for f in examples/quota/*.yaml; do
	seed_file k8s "$f"
done
# admission: kube-apiserver admission configurations (the README's, the older group by path, the
# plugin's matchContains and presence scopes, another plugin only).
seed_file admission examples/quota/admission.yaml
printf 'apiVersion: apiserver.k8s.io/v1alpha1\nkind: AdmissionConfiguration\nplugins:\n- {name: ResourceQuota, path: rq.yaml}\n' | seed admission
printf 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ResourceQuota\n  configuration:\n    apiVersion: resourcequota.admission.k8s.io/v1beta1\n    kind: Configuration\n    limitedResources:\n    - {resource: pods, matchContains: [requests.memory, cpu]}\n    - {resource: pods, matchScopes: [{scopeName: BestEffort, operator: Exists}, {scopeName: PriorityClass, operator: NotIn, values: [batch]}]}\n' | seed admission
printf '{"apiVersion":"apiserver.config.k8s.io/v1","kind":"AdmissionConfiguration","plugins":[{"name":"PodSecurity","configuration":{"defaults":{}}},{"name":"ResourceQuota","configuration":{"apiVersion":"apiserver.config.k8s.io/v1","kind":"ResourceQuotaConfiguration","limitedResources":[{"resource":"pods","matchScopes":[{"scopeName":"PriorityClass","operator":"Exists"}]}]}}]}' | seed admission
echo "seeds: $(for d in "$C"/*/; do printf '%s=%s ' "$(basename "$d")" "$(ls "$d" | wc -l)"; done)"
