#!/bin/bash
# deploy/preemptd.yaml, what `kubectl apply -f deploy/` applies: it parses (python3-yaml), holds
# exactly the six objects a cluster needs (ServiceAccount, ClusterRole and its binding, the Lease
# Role and its binding, the Deployment), wired to each other, with no wildcard permission and no
# permission outside the scheduler's resources; the Lease Role names the Lease preemptd uses by
# default; the Deployment runs 2 replicas as the ServiceAccount, non-root on a read-only root,
# with probes on /readyz and /livez at preemptd's port. Then `kubectl apply -f deploy/` against the
# stand-in API server creates all of it (when kubectl is installed).
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
command -v python3 >/dev/null || skip_all "python3 not installed"
python3 -c 'import yaml' 2>/dev/null || skip_all "python3-yaml not installed"

# The default Lease of the built preemptd (`--lease` in its --help), when it is built.
lease=kube-system/preemptd
if [ -x "$BUILD/preemptd" ]; then
	lease=$("$BUILD/preemptd" --help | sed -n 's/.*--lease NS\/NAME .*(default \([^)]*\)).*/\1/p')
fi

# the python part prints its own TAP lines, numbered from 1; the shell's continue after them
# The image `make image` builds (scripts/build-image.sh: tag VERSION; the README loads it as
# localhost/preemptd:VERSION, a name no registry is asked for).
image=localhost/preemptd:$(sed -n 's/^VERSION *:= *//p' Makefile)
python3 - deploy/preemptd.yaml "$lease" "$image" >"${TMPDIR:-/tmp}/deploy-tap.$$" <<'PY'
import sys, yaml

n = 0
failed = False


def ok(cond, what):
    global n, failed
    n += 1
    print(("ok %d - %s" if cond else "not ok %d - %s") % (n, what))
    failed |= not cond


path, lease, image = sys.argv[1], sys.argv[2], sys.argv[3]
try:
    docs = [d for d in yaml.safe_load_all(open(path, encoding="utf-8")) if d is not None]
except yaml.YAMLError as e:
    print("not ok 1 - %s parses as YAML: %s" % (path, e))
    sys.exit(1)
ok(True, "%s parses as YAML (%d documents)" % (path, len(docs)))
kinds = sorted(d.get("kind", "?") for d in docs)
ok(kinds == sorted(["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
                    "Deployment"]), "exactly the six objects, one of each kind: %s" % kinds)
by = {d["kind"]: d for d in docs}
API = {"ServiceAccount": "v1", "ClusterRole": "rbac.authorization.k8s.io/v1",
       "ClusterRoleBinding": "rbac.authorization.k8s.io/v1", "Role": "rbac.authorization.k8s.io/v1",
       "RoleBinding": "rbac.authorization.k8s.io/v1", "Deployment": "apps/v1"}
ok(all(by.get(k, {}).get("apiVersion") == v for k, v in API.items()),
   "each object's apiVersion is the served one (no beta or removed versions)")
sa = by.get("ServiceAccount", {}).get("metadata", {})
ok(sa.get("name") == "preemptd" and sa.get("namespace") == "kube-system",
   "ServiceAccount kube-system/preemptd")
ok(all((d.get("metadata") or {}).get("namespace") == "kube-system"
       for k, d in by.items() if k in ("ServiceAccount", "Role", "RoleBinding", "Deployment")),
   "every namespaced object in kube-system; the cluster-scoped ones name none")
ok(all("namespace" not in (d.get("metadata") or {}) for k, d in by.items()
       if k in ("ClusterRole", "ClusterRoleBinding")), "... ClusterRole and ClusterRoleBinding carry no namespace")


def binds(b, kind, role):
    subj = b.get("subjects") or []
    return (b.get("roleRef") == {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role}
            and subj == [{"kind": "ServiceAccount", "name": "preemptd", "namespace": "kube-system"}])


cr, role = by.get("ClusterRole", {}), by.get("Role", {})
ok(binds(by.get("ClusterRoleBinding", {}), "ClusterRole", cr.get("metadata", {}).get("name")),
   "the ClusterRoleBinding gives the ClusterRole to the ServiceAccount, and to nobody else")
ok(binds(by.get("RoleBinding", {}), "Role", role.get("metadata", {}).get("name")),
   "the RoleBinding gives the Lease Role to the ServiceAccount, and to nobody else")
rules = (cr.get("rules") or []) + (role.get("rules") or [])
ok(rules and all("*" not in r.get(f, []) and not any(str(x).startswith("*/") for x in r.get(f, []))
                 for r in rules for f in ("apiGroups", "resources", "verbs")),
   "no wildcard in any rule: every group, resource and verb named")
ok(not any(r.get("nonResourceURLs") for r in rules), "no nonResourceURLs")
allowed = {("", "pods"), ("", "pods/binding"), ("", "pods/status"), ("", "pods/eviction"), ("", "nodes"),
           ("policy", "poddisruptionbudgets"), ("scheduling.k8s.io", "priorityclasses"),
           ("events.k8s.io", "events"), ("", "events")}
got = {(g, res) for r in cr.get("rules") or [] for g in r.get("apiGroups", []) for res in r.get("resources", [])}
ok(got <= allowed, "the ClusterRole touches only the scheduler's resources (no secrets, "
   "configmaps, nodes/status, ...): %s" % sorted(got - allowed))
ok(not any(v in ("update", "patch", "delete", "create", "deletecollection")
           for r in cr.get("rules") or [] if r.get("resources") == ["nodes"] for v in r.get("verbs", [])),
   "the ClusterRole cannot change Nodes")
lns, lname = (lease.split("/", 1) + [""])[:2]
lr = role.get("rules") or []
ok(role.get("metadata", {}).get("namespace") == lns and
   all(r.get("apiGroups") == ["coordination.k8s.io"] and r.get("resources") == ["leases"] for r in lr),
   "the Role is about leases only, in the namespace of preemptd's default Lease (%s)" % lease)
ok(any(r.get("verbs") == ["create"] and not r.get("resourceNames") for r in lr) and
   any(sorted(r.get("verbs", [])) == ["get", "update"] and r.get("resourceNames") == [lname] for r in lr),
   "leases: create (a create has no name to restrict), get and update of %s only" % lname)

dep = by.get("Deployment", {})
spec = dep.get("spec") or {}
pod = (spec.get("template") or {}).get("spec") or {}
ctrs = pod.get("containers") or []
c = ctrs[0] if len(ctrs) == 1 else {}
ok(spec.get("replicas") == 2, "Deployment: 2 replicas")
ok(spec.get("selector", {}).get("matchLabels") and all(
   (spec.get("template", {}).get("metadata", {}).get("labels") or {}).get(k) == v
   for k, v in spec["selector"]["matchLabels"].items()), "... its selector matches its pod template")
ok(pod.get("serviceAccountName") == "preemptd" and pod.get("automountServiceAccountToken", True),
   "... runs as the ServiceAccount, its token mounted (the in-cluster credentials)")
ok(len(ctrs) == 1 and c.get("image") == image,
   "... one container, the image make image builds: %s (it says %s)" % (image, c.get("image")))
ok(not any(a.startswith("--kubeconfig") for a in c.get("args") or []),
   "... no --kubeconfig: preemptd uses the in-cluster service account")
port = next((p for p in c.get("ports") or [] if p.get("containerPort") == 10271), None)
ok(port is not None and "--listen=0.0.0.0:10271" in (c.get("args") or []),
   "... listens on all addresses at 10271 (the probes come from the kubelet, not loopback)")


def probe(name):
    p = (c.get(name) or {}).get("httpGet") or {}
    target = p.get("port")
    return p.get("path"), 10271 if target in (10271, (port or {}).get("name")) else target


ok(probe("readinessProbe") == ("/readyz", 10271), "readinessProbe: GET /readyz on 10271")
ok(probe("livenessProbe") == ("/livez", 10271), "livenessProbe: GET /livez on 10271")
psc, csc = pod.get("securityContext") or {}, c.get("securityContext") or {}
ok(psc.get("runAsNonRoot") is True and (psc.get("runAsUser") or 0) > 0,
   "non-root: runAsNonRoot and a non-zero runAsUser")
ok(csc.get("readOnlyRootFilesystem") is True, "read-only root file system")
ok(csc.get("allowPrivilegeEscalation") is False and
   (csc.get("capabilities") or {}).get("drop") == ["ALL"], "no privilege escalation, every capability dropped")
ok((psc.get("seccompProfile") or {}).get("type") == "RuntimeDefault", "the runtime's default seccomp profile")
ok((c.get("resources") or {}).get("requests", {}).get("memory") and
   (c.get("resources") or {}).get("limits", {}).get("memory"), "memory requested and limited")
print("1..%d" % n)
sys.exit(1 if failed else 0)
PY
rc=$?
grep -v '^1\.\.' "${TMPDIR:-/tmp}/deploy-tap.$$"
_tap_n=$(grep -cE '^(not )?ok ' "${TMPDIR:-/tmp}/deploy-tap.$$")
rm -f "${TMPDIR:-/tmp}/deploy-tap.$$"
[ $rc -eq 0 ] || _tap_failed=1

if command -v kubectl >/dev/null 2>&1 && command -v curl >/dev/null && command -v openssl >/dev/null; then
	. tests/kube/lib-apiserver.sh
	kube_start || bail "the stand-in API server starts"
	out=$KUBE_DIR/out
	k() { kubectl --kubeconfig "$KUBE_DIR/kubeconfig-admin" --cache-dir "$KUBE_DIR/kcache" --request-timeout 10s "$@"; }
	# --validate=false: the stand-in serves no OpenAPI document to validate against
	ok "kubectl apply -f deploy/ against the stand-in API server: the six objects created" eval '
		k apply --validate=false -f deploy/ >"$out" 2>&1 && [ "$(grep -c " created$" "$out")" = 6 ] || { sed "s/^/# /" "$out"; false; }'
	ok "... a second apply changes nothing" eval '
		k apply --validate=false -f deploy/ >"$out" 2>&1 && [ "$(grep -c " unchanged$" "$out")" = 6 ] || { sed "s/^/# /" "$out"; false; }'
	ok "... and the ServiceAccount has a token to act with" eval 'kube_ctl GET /serviceaccount/kube-system/preemptd | grep -q "\"token\""'
else
	skip "kubectl apply -f deploy/ against the stand-in" "kubectl, curl or openssl not installed"
fi
done_testing
