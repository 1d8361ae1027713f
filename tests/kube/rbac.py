"""RBAC for the stand-in API server (tests/kube/apiserver.py), as kube-apiserver's RBAC
authorizer (plugin/pkg/auth/authorizer/rbac) decides it, plus an account of what was used.

Pure functions over the stored rbac.authorization.k8s.io/v1 objects, Python standard library
only (YAML manifests are read by load_manifest, which needs python3-yaml).

The account: every rule of every Role and ClusterRole is expanded into atoms (API group ×
resource × verb × resource name); each allowed request marks every atom that allowed it. A role
whose atoms were all used and a run with no denial show a role that is exactly what the client
needed — no verb missing, none to spare.
"""

import threading


def subject_applies(subject, user, groups, binding_ns):
    """rbac.appliesToUser."""
    kind = subject.get("kind")
    if kind == "User":
        return subject.get("name") == user
    if kind == "Group":
        return subject.get("name") in groups
    if kind == "ServiceAccount":
        ns = subject.get("namespace") or binding_ns
        return bool(ns) and user == "system:serviceaccount:%s:%s" % (ns, subject.get("name"))
    return False


def rule_allows(rule, verb, group, resource, sub, name):
    """rbac.RuleAllows for a resource request."""
    verbs, groups = rule.get("verbs") or [], rule.get("apiGroups") or []
    if "*" not in verbs and verb not in verbs:
        return False
    if "*" not in groups and group not in groups:
        return False
    combined = resource + ("/" + sub if sub else "")
    ok = False
    for r in rule.get("resources") or []:
        if r in ("*", combined) or (sub and r == "*/" + sub):
            ok = True
            break
    if not ok:
        return False
    names = rule.get("resourceNames") or []
    return not names or name in names


def atoms(rule):
    """Every (api_group, resource, verb, resource_name) a rule grants, '' for any name."""
    out = []
    for g in rule.get("apiGroups") or [""]:
        for res in rule.get("resources") or []:
            for v in rule.get("verbs") or []:
                for n in rule.get("resourceNames") or [""]:
                    out.append((g, res, v, n))
    return out


def atom_matches(atom, verb, group, resource, sub, name):
    g, res, v, n = atom
    return rule_allows({"apiGroups": [g], "resources": [res], "verbs": [v],
                        "resourceNames": [n] if n else []}, verb, group, resource, sub, name)


def role_key(obj):
    md = obj["metadata"]
    return (obj["kind"], md.get("namespace", ""), md["name"])


class Account:
    """Thread-safe: used atoms and denied requests since start (or reset)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.used = {}      # (role key, rule index, atom) -> count
        self.denied = {}    # (user, verb, group, resource, ns, name) -> count
        self.allowed = 0

    def reset(self):
        with self.lock:
            self.used.clear()
            self.denied.clear()
            self.allowed = 0

    def authorize(self, store_objs, user, groups, verb, group, resource, sub, ns, name):
        """True when some binding of the user grants the request; records what granted it, or
        the denial. store_objs: {"ClusterRole": [...], "ClusterRoleBinding": [...], "Role":
        [...], "RoleBinding": [...]}."""
        roles = {role_key(o): o for kind in ("ClusterRole", "Role")
                 for o in store_objs.get(kind, [])}
        granted = []
        for kind in ("ClusterRoleBinding", "RoleBinding"):
            for b in store_objs.get(kind, []):
                bns = b["metadata"].get("namespace", "")
                if kind == "RoleBinding" and bns != ns:
                    continue
                if not any(subject_applies(s, user, groups, bns) for s in b.get("subjects") or []):
                    continue
                ref = b.get("roleRef") or {}
                rk = (ref.get("kind"), bns if ref.get("kind") == "Role" else "", ref.get("name"))
                role = roles.get(rk)
                if role is None:
                    continue
                for i, rule in enumerate(role.get("rules") or []):
                    if rule_allows(rule, verb, group, resource, sub, name):
                        granted += [(rk, i, a) for a in atoms(rule)
                                    if atom_matches(a, verb, group, resource, sub, name)]
        with self.lock:
            if not granted:
                key = (user, verb, group, resource + ("/" + sub if sub else ""), ns, name)
                self.denied[key] = self.denied.get(key, 0) + 1
                return False
            self.allowed += 1
            for k in granted:
                self.used[k] = self.used.get(k, 0) + 1
            return True

    def report(self, store_objs):
        """{"roles": [{kind, namespace, name, bound_by, rules: [{index, rule, atoms: [{api_group,
        resource, verb, resource_name, count}]}]}], "denied": [...], "allowed": N}."""
        bound = {}
        for kind in ("ClusterRoleBinding", "RoleBinding"):
            for b in store_objs.get(kind, []):
                ref = b.get("roleRef") or {}
                bns = b["metadata"].get("namespace", "")
                rk = (ref.get("kind"), bns if ref.get("kind") == "Role" else "", ref.get("name"))
                bound.setdefault(rk, []).append("%s/%s%s" % (
                    kind, bns + "/" if bns else "", b["metadata"]["name"]))
        out = []
        with self.lock:
            for kind in ("ClusterRole", "Role"):
                for role in store_objs.get(kind, []):
                    rk = role_key(role)
                    rules = []
                    for i, rule in enumerate(role.get("rules") or []):
                        rules.append({"index": i, "rule": rule, "atoms": [
                            {"api_group": g, "resource": res, "verb": v, "resource_name": n,
                             "count": self.used.get((rk, i, (g, res, v, n)), 0)}
                            for g, res, v, n in atoms(rule)]})
                    out.append({"kind": rk[0], "namespace": rk[1], "name": rk[2],
                                "bound_by": bound.get(rk, []), "rules": rules})
            denied = [{"user": u, "verb": v, "api_group": g, "resource": r, "namespace": n,
                       "name": nm, "count": c}
                      for (u, v, g, r, n, nm), c in sorted(self.denied.items())]
            return {"roles": out, "denied": denied, "allowed": self.allowed}


def load_manifest(path):
    """The objects of a YAML (or JSON) manifest, several documents and `List`s flattened."""
    try:
        import yaml
    except ImportError:
        raise SystemExit("%s: reading a YAML manifest needs python3-yaml" % path) from None
    with open(path, encoding="utf-8") as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    out = []
    for d in docs:
        if isinstance(d, dict) and d.get("kind", "").endswith("List") and "items" in d:
            out += d["items"]
        else:
            out.append(d)
    return out
