#!/usr/bin/env python3
"""A stand-in Kubernetes API server for evictd's and preemptd's tests.

Not a kube-apiserver: a test double that speaks the same wire protocol (HTTPS, client
certificates and bearer tokens, Status objects, list/watch with resourceVersion, chunked
watch streams, BOOKMARK, 410 Gone, limit/continue, field selectors, the node authorizer's
rules and RBAC, DELETE preconditions, pods/status patches, pods/binding, Leases, Events,
Eviction with PodDisruptionBudgets) and serves objects in the JSON layout `kubectl get -o json`
prints; beside the API it plays the cluster's kubelets and pod GC (KubeletSim) and can go down
and come back (begin_outage). Tests drive it through a plain-HTTP control port on 127.0.0.1:
objects, injected faults, kubelet modes, the request log, the RBAC account.

One file over 600 lines because every part works on one shared state (the store, its history
and the watches waiting on it, the kubelets' timers, the outage) and the tests and the e2e guest
start it by path; what needs none of it lives beside it (apivalidation.py: upstream's decoder
and validator texts; rbac.py: the authorizer and its account).

Python 3 standard library only (python3-yaml for --rbac manifests).  See tests/kube/README.md.
"""

import argparse
import base64
import bisect
import copy
import ctypes
import datetime
import hashlib
import heapq
import http.server
import json
import os
import random
import re
import signal
import socket
import ssl
import string
import sys
import threading
import time
import urllib.parse
import uuid

import apivalidation as V
import rbac

# ----------------------------------------------------------------------------------------------
# Resources

CORE = ""


class Res:
    def __init__(self, name, group, version, kind, namespaced, short=(), verbs=None, subs=(),
                 create_on_update=False, unconditional_update=True):
        self.name, self.group, self.version, self.kind = name, group, version, kind
        self.namespaced, self.short, self.subs = namespaced, list(short), subs
        # the registry strategy's AllowCreateOnUpdate / AllowUnconditionalUpdate
        self.create_on_update, self.unconditional_update = create_on_update, unconditional_update
        self.verbs = verbs or ["create", "delete", "deletecollection", "get", "list", "patch",
                               "update", "watch"]

    @property
    def api_version(self):
        return self.version if not self.group else self.group + "/" + self.version

    @property
    def qualified(self):
        """The resource as error messages name it: pods, priorityclasses.scheduling.k8s.io."""
        return self.name if not self.group else self.name + "." + self.group


RESOURCES = [
    Res("pods", CORE, "v1", "Pod", True, ["po"], subs=("status", "eviction", "binding")),
    Res("nodes", CORE, "v1", "Node", False, ["no"], subs=("status",)),
    Res("namespaces", CORE, "v1", "Namespace", False, ["ns"]),
    Res("events", CORE, "v1", "Event", True, ["ev"]),
    Res("events", "events.k8s.io", "v1", "Event", True, ["ev"]),
    Res("priorityclasses", "scheduling.k8s.io", "v1", "PriorityClass", False, ["pc"]),
    Res("poddisruptionbudgets", "policy", "v1", "PodDisruptionBudget", True, ["pdb"],
        subs=("status",)),
    Res("leases", "coordination.k8s.io", "v1", "Lease", True, create_on_update=True,
        unconditional_update=False),
    # Stored only (no controller acts on them), so that `kubectl apply -f deploy/` works and RBAC
    # can be enforced from the roles and bindings it created (rbac.py).
    Res("serviceaccounts", CORE, "v1", "ServiceAccount", True, ["sa"]),
    Res("clusterroles", "rbac.authorization.k8s.io", "v1", "ClusterRole", False),
    Res("clusterrolebindings", "rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", False),
    Res("roles", "rbac.authorization.k8s.io", "v1", "Role", True),
    Res("rolebindings", "rbac.authorization.k8s.io", "v1", "RoleBinding", True),
    Res("deployments", "apps", "v1", "Deployment", True, ["deploy"], subs=("status",)),
    Res("resourcequotas", CORE, "v1", "ResourceQuota", True, ["quota"], subs=("status",)),
]
BY_PATH = {(r.group, r.version, r.name): r for r in RESOURCES}
BY_KIND = {(r.api_version, r.kind): r for r in RESOURCES}


# ----------------------------------------------------------------------------------------------
# OpenAPI v3, what kubectl reads before `kubectl apply` (validation on, its default): the index
# (/openapi/v3) and one document per group-version. kubectl looks for the PATCH operation of the
# object's kind (x-kubernetes-group-version-kind) and its fieldValidation query parameter: there,
# it leaves the validation to the server (fieldValidation=Strict) and downloads nothing else;
# without /openapi/v3 it fell back to /openapi/v2 (protobuf) and failed: "failed to download
# openapi". The schemas are minimal (an object with apiVersion, kind, metadata; the rest kept as
# sent) but valid, named as kube-apiserver names them, so `kubectl explain` finds each kind.

class RawBody(bytes):
    """A response body that is not JSON (send_json sends it as is, with its content type)."""
    ctype = "application/octet-stream"


OPENAPI_V2_PB = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


def openapi_v2(accept):
    """/openapi/v2, for a kubectl older than OpenAPI v3 (Debian 12's kubernetes-client, 1.20): the
    smallest valid document, {swagger: "2.0", info}, no definitions — kubectl then validates no
    kind client-side (it skips a kind it has no schema for) and builds its patches from its own
    types. As protobuf (gnostic's openapi_v2.Document: swagger = 1, info = 2 {title = 1,
    version = 2}) when asked for it, as kubectl does, else as JSON."""
    title, version = "Kubernetes", VERSION["gitVersion"]
    if OPENAPI_V2_PB in accept:
        def field(num, data):
            data = data.encode() if isinstance(data, str) else data
            return bytes([num << 3 | 2, len(data)]) + data     # every length here is < 128
        body = RawBody(field(1, "2.0") + field(2, field(1, title) + field(2, version)))
        body.ctype = OPENAPI_V2_PB
        return body
    return {"swagger": "2.0", "info": {"title": title, "version": version}, "paths": {}}


def openapi_gv_path(group, version):
    return "api/" + version if not group else "apis/%s/%s" % (group, version)


def openapi_v3_index():
    gvs = sorted({openapi_gv_path(r.group, r.version) for r in RESOURCES})
    return {"paths": {gv: {"serverRelativeURL": "/openapi/v3/%s?hash=%s" % (
        gv, hashlib.sha512(json.dumps(openapi_v3_document(gv), sort_keys=True).encode())
        .hexdigest()[:64].upper())} for gv in gvs}}


def openapi_schema_name(r):
    group = {CORE: "core", "events.k8s.io": "events", "scheduling.k8s.io": "scheduling",
             "coordination.k8s.io": "coordination", "rbac.authorization.k8s.io": "rbac"}.get(
        r.group, r.group)
    return "io.k8s.api.%s.%s.%s" % (group, r.version, r.kind)


def openapi_v3_document(gv):
    rs = [r for r in RESOURCES if openapi_gv_path(r.group, r.version) == gv]
    if not rs:
        return None
    query = lambda name: {"name": name, "in": "query", "schema": {"type": "string"},
                          "uniqueItems": True}
    paths, schemas = {}, {}
    for r in rs:
        gvk = {"group": r.group, "version": r.version, "kind": r.kind}
        ref = {"$ref": "#/components/schemas/" + openapi_schema_name(r)}
        body = {"content": {"application/json": {"schema": ref}}}
        ok = {"200": {"description": "OK", "content": {"application/json": {"schema": ref}}}}

        def op(action, params, request=None):
            o = {"operationId": action + r.kind, "x-kubernetes-action": action,
                 "x-kubernetes-group-version-kind": gvk, "responses": ok,
                 "parameters": [query(n) for n in params]}
            if request:
                o["requestBody"] = request
            return o
        base = "/" + gv + ("/namespaces/{namespace}" if r.namespaced else "") + "/" + r.name
        ns_param = [{"name": "namespace", "in": "path", "required": True,
                     "schema": {"type": "string"}}] if r.namespaced else []
        write = ["dryRun", "fieldManager", "fieldValidation"]
        paths[base] = {"parameters": ns_param,
                       "get": op("list", ["labelSelector", "fieldSelector", "limit", "continue",
                                          "resourceVersion", "watch"]),
                       "post": op("post", write, body)}
        # No requestBody on PATCH: kubectl then builds a strategic merge patch from its own types
        # rather than from these minimal schemas.
        paths[base + "/{name}"] = {
            "parameters": ns_param + [{"name": "name", "in": "path", "required": True,
                                       "schema": {"type": "string"}}],
            "get": op("get", []), "put": op("put", write, body),
            "patch": op("patch", write + ["force"]), "delete": op("delete", ["dryRun"])}
        schemas[openapi_schema_name(r)] = {
            "type": "object", "description": "%s (%s), as this stand-in stores it." % (
                r.kind, r.api_version),
            "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                           "metadata": {"type": "object",
                                        "x-kubernetes-preserve-unknown-fields": True}},
            "x-kubernetes-preserve-unknown-fields": True,
            "x-kubernetes-group-version-kind": [gvk]}
    return {"openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": VERSION["gitVersion"]},
            "paths": paths, "components": {"schemas": schemas}}


def res_key(r):
    return r.group + "/" + r.name


def now_rfc3339(t=None):
    t = time.time() if t is None else t
    return datetime.datetime.fromtimestamp(int(t), datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


# ----------------------------------------------------------------------------------------------
# Status objects (the error format every Kubernetes client parses)

def status(code, reason, message, details=None, st="Failure"):
    s = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": st,
         "message": message, "reason": reason, "code": code}
    if details is not None:
        s["details"] = details
    if st == "Success":
        s = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": st, "code": code}
        if details is not None:
            s["details"] = details
    return s


class ApiError(Exception):
    def __init__(self, st, headers=None):
        super().__init__(st.get("message"))
        self.st = st
        self.headers = headers or {}


def err_not_found(r, name):
    d = {"name": name, "kind": r.name}
    if r.group:
        d["group"] = r.group
    return ApiError(status(404, "NotFound", '%s "%s" not found' % (r.qualified, name), d))


def err_forbidden(r, name, msg):
    d = {"kind": r.name}
    if name:
        d["name"] = name
    if r.group:
        d["group"] = r.group
    head = '%s "%s" is forbidden' % (r.qualified, name) if name else \
        "%s is forbidden" % r.qualified
    return ApiError(status(403, "Forbidden", head + ": " + msg, d))


def forbidden_by_authz(r, name, user, verb, ns, sub, why=""):
    res = r.name + ("/" + sub if sub else "")
    if ns:
        m = 'User "%s" cannot %s resource "%s" in API group "%s" in the namespace "%s"' % (
            user, verb, res, r.group, ns)
    else:
        m = 'User "%s" cannot %s resource "%s" in API group "%s" at the cluster scope' % (
            user, verb, res, r.group)
    return err_forbidden(r, name, m + (": " + why if why else ""))


def err_conflict(r, name, why):
    d = {"name": name, "kind": r.name}
    if r.group:
        d["group"] = r.group
    return ApiError(status(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": %s' % (
        r.qualified, name, why), d))


def err_bad_request(msg):
    return ApiError(status(400, "BadRequest", msg))


def err_expired(msg):
    return ApiError(status(410, "Expired", msg))


CONTINUE_TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. You can "
    "start a new list without the continue parameter, or use the continue token in this response "
    "to retrieve the remainder of the results. Continuing with the provided token results in an "
    "inconsistent list - objects that were created, modified, or deleted between the time the "
    "first chunk was returned and now may show up in the list.")

# ----------------------------------------------------------------------------------------------
# Quantities (enough for QoS and the Table printer)

_SUFFIX = {"": 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
           "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def qty(s):
    m = re.fullmatch(r"([+-]?[0-9.]+)(?:[eE]([+-]?[0-9]+))?([a-zA-Z]*)", str(s).strip())
    if not m or m.group(3) not in _SUFFIX:
        raise ValueError("quantities must match the regular expression "
                         "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    v = float(m.group(1)) * _SUFFIX[m.group(3)]
    if m.group(2):
        v *= 10 ** int(m.group(2))
    return v


def qos_class(spec):
    """status.qosClass as pkg/apis/core/v1/helper/qos computes it."""
    ctrs = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    req, lim, guaranteed = {}, {}, True
    for c in ctrs:
        res = c.get("resources") or {}
        r = {k: qty(v) for k, v in (res.get("requests") or {}).items() if k in ("cpu", "memory")}
        l_ = {k: qty(v) for k, v in (res.get("limits") or {}).items() if k in ("cpu", "memory")}
        for k, v in r.items():
            if v:
                req[k] = req.get(k, 0) + v
        for k, v in l_.items():
            if v:
                lim[k] = lim.get(k, 0) + v
        if set(l_) != {"cpu", "memory"}:
            guaranteed = False
        for k in l_:
            if k in r and r[k] != l_[k]:
                guaranteed = False
    if not req and not lim:
        return "BestEffort"
    if guaranteed and set(lim) == {"cpu", "memory"}:
        return "Guaranteed"
    return "Burstable"


# ----------------------------------------------------------------------------------------------
# Selectors

def parse_field_selector(s):
    """[(field, op, value)]; op is '=' or '!='."""
    out = []
    if not s:
        return out
    for term in s.split(","):
        term = term.strip()
        if not term:
            continue
        m = re.fullmatch(r"([^=!]+)(==|!=|=)(.*)", term)
        if not m:
            raise err_bad_request('invalid selector: \'%s\'; can\'t understand \'%s\'' % (s, term))
        out.append((m.group(1), "!=" if m.group(2) == "!=" else "=", m.group(3)))
    return out


FIELDS = {
    "metadata.name": lambda o: o["metadata"].get("name", ""),
    "metadata.namespace": lambda o: o["metadata"].get("namespace", ""),
    "spec.nodeName": lambda o: (o.get("spec") or {}).get("nodeName", ""),
    "status.phase": lambda o: (o.get("status") or {}).get("phase", ""),
    "spec.schedulerName": lambda o: (o.get("spec") or {}).get("schedulerName", ""),
    "involvedObject.uid": lambda o: (o.get("involvedObject") or {}).get("uid", ""),
    "involvedObject.name": lambda o: (o.get("involvedObject") or {}).get("name", ""),
    "involvedObject.namespace": lambda o: (o.get("involvedObject") or {}).get("namespace", ""),
    "involvedObject.kind": lambda o: (o.get("involvedObject") or {}).get("kind", ""),
    "involvedObject.apiVersion": lambda o: (o.get("involvedObject") or {}).get("apiVersion", ""),
    "involvedObject.resourceVersion":
        lambda o: (o.get("involvedObject") or {}).get("resourceVersion", ""),
    "involvedObject.fieldPath": lambda o: (o.get("involvedObject") or {}).get("fieldPath", ""),
    "source": lambda o: (o.get("source") or {}).get("component", ""),
    "type": lambda o: o.get("type", ""),
    "reason": lambda o: o.get("reason", ""),
}


def event_as_core(ev):
    """An events.k8s.io/v1 Event as /api/v1 serves it: one storage, two versions
    (pkg/apis/events/v1/conversion.go, Convert_v1_Event_To_core_Event): note -> message,
    regarding -> involvedObject, reportingController -> reportingComponent, deprecatedSource ->
    source, deprecatedFirstTimestamp/LastTimestamp/Count -> firstTimestamp/lastTimestamp/count;
    eventTime, series, action, related, reportingInstance, type, reason as they are."""
    out = {"kind": "Event", "apiVersion": "v1", "metadata": copy.deepcopy(ev["metadata"]),
           "involvedObject": copy.deepcopy(ev.get("regarding") or {}),
           "reason": ev.get("reason", ""), "message": ev.get("note", ""),
           "source": copy.deepcopy(ev.get("deprecatedSource") or {}),
           "firstTimestamp": ev.get("deprecatedFirstTimestamp"),
           "lastTimestamp": ev.get("deprecatedLastTimestamp"),
           "type": ev.get("type", ""), "eventTime": ev.get("eventTime"),
           "action": ev.get("action", ""),
           "reportingComponent": ev.get("reportingController", ""),
           "reportingInstance": ev.get("reportingInstance", "")}
    if ev.get("deprecatedCount"):
        out["count"] = ev["deprecatedCount"]
    for k in ("series", "related"):
        if ev.get(k) is not None:
            out[k] = copy.deepcopy(ev[k])
    return out


def core_event_view(store, r, ns):
    """/api/v1 events: the core ones and the events.k8s.io ones, converted (lock held)."""
    items = list(store.list(r, ns))
    if r.name == "events" and not r.group:
        items += [event_as_core(o) for o in store.list(BY_PATH[("events.k8s.io", "v1", "events")], ns)]
        items.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
    return items


def check_fields(r, sel):
    for f, _, _ in sel:
        if f not in FIELDS or (f.startswith("spec.") or f.startswith("status.")) \
                and r.name != "pods":
            raise err_bad_request('field label not supported: %s' % f)


def match_fields(obj, sel):
    for f, op, v in sel:
        got = FIELDS[f](obj)
        if (got == v) != (op == "="):
            return False
    return True


def parse_label_selector(s):
    out = []
    if not s:
        return out
    # split on commas not inside parentheses
    for term in re.split(r",(?![^(]*\))", s):
        term = term.strip()
        if not term:
            continue
        m = re.fullmatch(r"(\S+)\s+(in|notin)\s+\((.*)\)", term)
        if m:
            out.append((m.group(1), m.group(2), {x.strip() for x in m.group(3).split(",")}))
            continue
        m = re.fullmatch(r"([^=!]+)(==|!=|=)(.*)", term)
        if m:
            out.append((m.group(1).strip(), "!=" if m.group(2) == "!=" else "=", m.group(3).strip()))
            continue
        if term.startswith("!"):
            out.append((term[1:], "!", None))
        else:
            out.append((term, "exists", None))
    return out


def match_labels(obj, sel):
    labels = obj["metadata"].get("labels") or {}
    for k, op, v in sel:
        if op == "=" and labels.get(k) != v:
            return False
        if op == "!=" and labels.get(k) == v:
            return False
        if op == "in" and labels.get(k) not in v:
            return False
        if op == "notin" and k in labels and labels[k] in v:
            return False
        if op == "exists" and k not in labels:
            return False
        if op == "!" and k in labels:
            return False
    return True


def match_label_selector_obj(sel, labels):
    """metav1.LabelSelector (matchLabels, matchExpressions) against a label map."""
    if sel is None:
        return False
    for k, v in (sel.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in sel.get("matchExpressions") or []:
        k, op, vals = e.get("key"), e.get("operator"), e.get("values") or []
        if op == "In" and labels.get(k) not in vals:
            return False
        if op == "NotIn" and k in labels and labels[k] in vals:
            return False
        if op == "Exists" and k not in labels:
            return False
        if op == "DoesNotExist" and k in labels:
            return False
    return True


# ----------------------------------------------------------------------------------------------
# Patches

def merge_patch(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


# patchMergeKey of the lists a status patch touches (from the API types' struct tags)
MERGE_KEYS = {"conditions": "type", "containerStatuses": "name", "initContainerStatuses": "name",
              "ephemeralContainerStatuses": "name", "containers": "name",
              "initContainers": "name", "tolerations": None, "ownerReferences": "uid",
              "podIPs": "ip", "hostIPs": "ip", "addresses": "type", "env": "name",
              "volumes": "name", "volumeMounts": "mountPath", "ports": "containerPort"}


def strategic_merge(target, patch, key=None):
    if isinstance(patch, list):
        mk = MERGE_KEYS.get(key)
        if not mk or not isinstance(target, list):
            return [x for x in copy.deepcopy(patch) if not (isinstance(x, dict) and "$patch" in x)]
        out = copy.deepcopy(target)
        for item in patch:
            if not isinstance(item, dict) or mk not in item:
                continue
            idx = next((i for i, t in enumerate(out) if isinstance(t, dict)
                        and t.get(mk) == item[mk]), None)
            if item.get("$patch") == "delete":
                if idx is not None:
                    out.pop(idx)
            elif idx is None:
                out.append({k: v for k, v in item.items() if v is not None})
            else:
                out[idx] = strategic_merge(out[idx], item)
        return out
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if k.startswith("$"):
            continue
        if v is None:
            out.pop(k, None)
        else:
            out[k] = strategic_merge(out.get(k), v, k)
    return out


def json_patch(target, ops):
    out = copy.deepcopy(target)

    def walk(path):
        parts = [p.replace("~1", "/").replace("~0", "~") for p in path.split("/")[1:]]
        cur = out
        for p in parts[:-1]:
            cur = cur[int(p)] if isinstance(cur, list) else cur[p]
        return cur, parts[-1]
    for op in ops:
        try:
            parent, last = walk(op["path"])
            o = op["op"]
            if o in ("add", "replace"):
                if isinstance(parent, list):
                    i = len(parent) if last == "-" else int(last)
                    if o == "add":
                        parent.insert(i, op["value"])
                    else:
                        parent[i] = op["value"]
                else:
                    if o == "replace" and last not in parent:
                        raise KeyError(last)
                    parent[last] = op["value"]
            elif o == "remove":
                if isinstance(parent, list):
                    parent.pop(int(last))
                else:
                    del parent[last]
            elif o == "test":
                cur = parent[int(last)] if isinstance(parent, list) else parent[last]
                if cur != op.get("value"):
                    raise ValueError("testing value %s failed" % op["path"])
            else:
                raise ValueError("unexpected kind: %s" % o)
        except (KeyError, IndexError, ValueError, TypeError) as e:
            raise ApiError(status(422, "Invalid", "the server rejected our request due to an "
                                  "error in our request: %s" % e)) from None
    return out


# ----------------------------------------------------------------------------------------------
# The store: objects, one global resourceVersion counter, retained event history, watchers

class Store:
    def __init__(self, history, continue_ttl):
        self.lock = threading.Condition()
        self.rv = 100
        self.objs = {}              # (reskey, ns, name) -> obj
        self.history = []           # (rv, reskey, type, obj, prev)
        self.history_max = history
        self.compacted = 0          # watches/continues from an rv below this get 410
        self.continue_ttl = continue_ttl
        self.grace_scale = 1.0
        self.hooks = []             # fn(r, type, obj, prev) after each change, lock held

    def next_rv(self):
        self.rv += 1
        return self.rv

    def _record(self, r, typ, obj, prev):
        self.history.append((int(obj["metadata"]["resourceVersion"]), res_key(r), typ,
                             copy.deepcopy(obj), prev))
        while len(self.history) > self.history_max:
            old = self.history.pop(0)
            self.compacted = max(self.compacted, old[0])
        for hook in self.hooks:
            hook(r, typ, obj, prev)
        self.lock.notify_all()

    def compact(self):
        with self.lock:
            self.history.clear()
            self.compacted = self.rv
            self.lock.notify_all()

    def get(self, r, ns, name):
        return self.objs.get((res_key(r), ns or "", name))

    def list(self, r, ns=None):
        k = res_key(r)
        items = [o for (rk, ons, _), o in self.objs.items()
                 if rk == k and (ns is None or ons == ns)]
        items.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
        return items

    def put(self, r, obj, typ=None):
        """Create or replace; stamps resourceVersion and records the event.  Lock held."""
        md = obj["metadata"]
        key = (res_key(r), md.get("namespace", "") if r.namespaced else "", md["name"])
        prev = self.objs.get(key)
        md["resourceVersion"] = str(self.next_rv())
        self.objs[key] = obj
        self._record(r, typ or ("MODIFIED" if prev else "ADDED"), obj, prev)
        return obj

    def remove(self, r, obj):
        md = obj["metadata"]
        key = (res_key(r), md.get("namespace", "") if r.namespaced else "", md["name"])
        if key not in self.objs:
            return
        del self.objs[key]
        obj = copy.deepcopy(obj)
        obj["metadata"]["resourceVersion"] = str(self.next_rv())
        self._record(r, "DELETED", obj, None)


# ----------------------------------------------------------------------------------------------
# Object defaulting: what admission and the kubelet would have filled in

BUILTIN_PCS = [("system-node-critical", 2000001000,
                "Used for system critical pods that must not be moved from their current node."),
               ("system-cluster-critical", 2000000000,
                "Used for system critical pods that must run in the cluster, but can be moved "
                "to another node if necessary.")]


def rand_hex(n):
    return "".join(random.choice("0123456789abcdef") for _ in range(n))


def rand_suffix(n=5):
    return "".join(random.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(n))


def default_meta(r, obj, ns):
    md = obj.setdefault("metadata", {})
    obj["apiVersion"], obj["kind"] = r.api_version, r.kind
    if not md.get("name") and md.get("generateName"):
        md["name"] = md["generateName"] + rand_suffix()
    if not md.get("name"):
        raise ApiError(status(422, "Invalid", "%s \"\" is invalid: metadata.name: Required value: "
                              "name or generateName is required" % r.kind,
                              {"kind": r.kind, "causes": [{"reason": "FieldValueRequired",
                               "message": "Required value: name or generateName is required",
                                                           "field": "metadata.name"}]}))
    if r.namespaced:
        md["namespace"] = md.get("namespace") or ns or "default"
    else:
        md.pop("namespace", None)
    md.setdefault("uid", str(uuid.uuid4()))
    md.setdefault("creationTimestamp", now_rfc3339())
    return md


def default_pod(store, pod):
    spec = pod.setdefault("spec", {})
    md = pod["metadata"]
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})
    spec.setdefault("serviceAccountName", "default")
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("tolerations", [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300}])
    spec.setdefault("containers", [{"name": "main", "image": "registry.k8s.io/pause:3.9"}])
    for c in list(spec.get("containers") or []) + list(spec.get("initContainers") or []):
        c.setdefault("image", "registry.k8s.io/pause:3.9")
        c.setdefault("imagePullPolicy", "IfNotPresent")
        c.setdefault("resources", {})
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
    # The Priority admission plugin: spec.priority from the class (or the global default).
    if "priority" not in spec:
        pcr = BY_KIND[("scheduling.k8s.io/v1", "PriorityClass")]
        name = spec.get("priorityClassName")
        if name:
            pc = store.get(pcr, "", name)
            if pc is None:
                raise ApiError(status(403, "Forbidden", 'pods "%s" is forbidden: no PriorityClass '
                                      'with name %s was found' % (md["name"], name),
                                      {"name": md["name"], "kind": "pods"}))
            spec["priority"] = pc.get("value", 0)
            if pc.get("preemptionPolicy"):
                spec.setdefault("preemptionPolicy", pc["preemptionPolicy"])
        else:
            defaults = [p for p in store.list(pcr) if p.get("globalDefault")]
            if defaults:
                pc = min(defaults, key=lambda p: p.get("value", 0))
                spec["priorityClassName"] = pc["metadata"]["name"]
                spec["priority"] = pc.get("value", 0)
            else:
                spec["priority"] = 0
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    if pod.get("status") is None:
        pod["status"] = {}
    st = pod["status"]
    st.setdefault("qosClass", qos_class(spec))
    if not spec.get("nodeName"):
        st.setdefault("phase", "Pending")
        return pod
    st.setdefault("phase", "Running")
    kubelet_status(pod, md["creationTimestamp"], "10.0.0.10")
    return pod


def kubelet_status(pod, started, host_ip):
    """The status a kubelet posts for a pod it runs (fields already there are kept): addresses,
    startTime, the five conditions, containerStatuses with containerd IDs. `started` is the
    time of every transition."""
    spec, st = pod["spec"], pod["status"]
    running = st["phase"] == "Running"
    st.setdefault("hostIP", host_ip)
    st.setdefault("hostIPs", [{"ip": st["hostIP"]}])
    if running:
        ip = "10.244.%d.%d" % (random.randint(0, 255), random.randint(2, 254))
        st.setdefault("podIP", ip)
        st.setdefault("podIPs", [{"ip": st["podIP"]}])
    st.setdefault("startTime", started)
    tf = "True" if running else "False"
    st.setdefault("conditions", [
        {"type": "PodReadyToStartContainers", "status": tf, "lastProbeTime": None,
         "lastTransitionTime": started},
        {"type": "Initialized", "status": "True", "lastProbeTime": None,
         "lastTransitionTime": started},
        {"type": "Ready", "status": tf, "lastProbeTime": None, "lastTransitionTime": started},
        {"type": "ContainersReady", "status": tf, "lastProbeTime": None,
         "lastTransitionTime": started},
        {"type": "PodScheduled", "status": "True", "lastProbeTime": None,
         "lastTransitionTime": started}])
    if "containerStatuses" not in st:
        st["containerStatuses"] = []
        for c in spec["containers"]:
            cs = {"name": c["name"], "image": c["image"],
                  "imageID": c["image"].split(":")[0] + "@sha256:" + hashlib.sha256(
                      c["image"].encode()).hexdigest(),
                  "containerID": "containerd://" + rand_hex(64), "ready": running,
                  "restartCount": 0, "started": running,
                  "state": {"running": {"startedAt": started}} if running else
                  {"waiting": {"reason": "ContainerCreating"}},
                  "lastState": {}}
            st["containerStatuses"].append(cs)
    return pod


def default_object(store, r, obj, ns=None):
    default_meta(r, obj, ns)
    if r.kind == "Pod":
        default_pod(store, obj)
    elif r.kind == "PriorityClass":
        obj.setdefault("value", 0)
        obj.setdefault("preemptionPolicy", "PreemptLowerPriority")
    elif r.kind == "PodDisruptionBudget":
        obj.setdefault("spec", {})
        st = obj.setdefault("status", {})
        st.setdefault("disruptionsAllowed", 1)
        st.setdefault("currentHealthy", 1)
        st.setdefault("desiredHealthy", 0)
        st.setdefault("expectedPods", 1)
        st.setdefault("observedGeneration", 1)
        obj["metadata"].setdefault("generation", 1)
    elif r.kind == "Node":
        obj.setdefault("spec", {})
        st = obj.setdefault("status", {})
        st.setdefault("capacity", {"cpu": "4", "memory": "8Gi", "pods": "110",
                                   "ephemeral-storage": "100Gi"})
        st.setdefault("allocatable", dict(st["capacity"]))
        st.setdefault("conditions", [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                      "message": "kubelet is posting ready status",
                                      "lastHeartbeatTime": obj["metadata"]["creationTimestamp"],
                                      "lastTransitionTime": obj["metadata"]["creationTimestamp"]}])
        st.setdefault("nodeInfo", {"kubeletVersion": "v1.32.0", "containerRuntimeVersion":
                                   "containerd://1.7.0", "operatingSystem": "linux",
                                   "architecture": "amd64"})
    elif r.kind == "Namespace":
        obj.setdefault("spec", {"finalizers": ["kubernetes"]})
        obj.setdefault("status", {"phase": "Active"})
    elif r.kind == "Event" and r.group == "":
        obj.setdefault("firstTimestamp", None)
        obj.setdefault("lastTimestamp", None)
        obj.setdefault("reportingComponent", "")
        obj.setdefault("reportingInstance", "")
    return obj


# ----------------------------------------------------------------------------------------------
# Faults

class Faults:
    """Injected faults, each {kind, count (-1 = until cleared), path (regex), method, ...}."""

    def __init__(self):
        self.lock = threading.Lock()
        self.items = []

    def add(self, f):
        f = dict(f)
        f.setdefault("count", 1)
        if f.get("kind") not in ("status", "delay", "drop", "garbage", "truncate", "forbidden",
                                 "gone", "reset", "trickle"):
            raise ValueError("unknown fault kind %r" % f.get("kind"))
        with self.lock:
            self.items.append(f)

    def clear(self):
        with self.lock:
            self.items.clear()

    def take(self, method, path, watch, attrs=None):
        """Every fault that applies to this request (each consumes one of its count)."""
        out = []
        with self.lock:
            for f in list(self.items):
                if f.get("path") and not re.search(f["path"], path):
                    continue
                if not fault_matches_attrs(f, attrs):
                    continue
                if f.get("method") and f["method"].upper() != method:
                    continue
                if f.get("watch") is not None and bool(f["watch"]) != watch:
                    continue
                if f["kind"] in ("drop", "gone") and not watch and f.get("watch") is None:
                    continue     # stream faults apply to watches unless told otherwise
                out.append(f)
                if f["count"] > 0:
                    f["count"] -= 1
                    if f["count"] == 0:
                        self.items.remove(f)
        return out

    def snapshot(self):
        with self.lock:
            return copy.deepcopy(self.items)


def fault_matches_attrs(f, attrs):
    """The request-attribute filters of a fault: "verb" (one or a list: create, get, list,
    watch, update, patch, delete...), "resource" ("pods", "pods/binding", "leases"...),
    "group" (API group, "" for core), "write": true (any create/update/patch/delete)."""
    if not any(k in f for k in ("verb", "resource", "group", "write")):
        return True
    if attrs is None:
        return False
    verbs = f.get("verb")
    if verbs is not None and attrs["verb"] not in (verbs if isinstance(verbs, list) else [verbs]):
        return False
    if f.get("write") and attrs["verb"] not in WRITE_VERBS:
        return False
    res = attrs["resource"] + ("/" + attrs["subresource"] if attrs["subresource"] else "")
    if f.get("resource") is not None and f["resource"] != res:
        return False
    if f.get("group") is not None and f["group"] != attrs["api_group"]:
        return False
    return True


# ----------------------------------------------------------------------------------------------
# Request log

class RequestLog:
    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.f = open(path, "a", encoding="utf-8")

    def write(self, rec):
        line = json.dumps(rec, sort_keys=True)
        with self.lock:
            self.f.write(line + "\n")
            self.f.flush()

    def read(self):
        with self.lock:
            with open(self.path, encoding="utf-8") as f:
                return f.read()

    def reset(self):
        with self.lock:
            self.f.truncate(0)
            self.f.seek(0)


# ----------------------------------------------------------------------------------------------
# The server

class State:
    pass


S = State()


def identity_of(handler):
    """(user, groups) from the client certificate or bearer token; None when unauthenticated.
    Raises ApiError(401) for an expired or not-yet-valid certificate or an unknown token."""
    auth = handler.headers.get("Authorization", "")
    if auth.startswith("Bearer "):
        tok = auth[7:].strip()
        if tok in S.tokens:
            return S.tokens[tok]
        with S.store.lock:
            if tok in S.sa_tokens:
                return S.sa_tokens[tok]
        raise ApiError(status(401, "Unauthorized", "Unauthorized"))
    cert = None
    try:
        cert = handler.connection.getpeercert()
    except (ValueError, AttributeError):
        cert = None
    if not cert:
        return None
    nb = ssl.cert_time_to_seconds(cert["notBefore"])
    na = ssl.cert_time_to_seconds(cert["notAfter"])
    if not nb <= time.time() <= na:
        # kube-apiserver: "verifying certificate ... failed: x509: certificate has expired or is
        # not yet valid" is logged; the client sees a plain 401.
        raise ApiError(status(401, "Unauthorized", "Unauthorized"))
    cn, groups = None, []
    for rdn in cert.get("subject", ()):
        for k, v in rdn:
            if k == "commonName":
                cn = v
            elif k == "organizationName":
                groups.append(v)
    if not cn:
        return None
    return cn, groups + ["system:authenticated"]


def node_of(user):
    return user[0][len("system:node:"):] if user[0].startswith("system:node:") and \
        "system:nodes" in user[1] else None


def authorize(user, verb, r, ns, name, sub, fsel, obj):
    """The node authorizer + NodeRestriction + RBAC bootstrap roles, as far as tests need.
    Raises ApiError 403 with the upstream message."""
    if S.forbid_all:
        raise forbidden_by_authz(r, name, user[0], verb, ns, sub)
    if "system:masters" in user[1]:
        return
    node = node_of(user)
    if node is None:
        rbac_authorize(user, verb, r, ns, name, sub, fsel)
        return
    if r.kind == "Pod":
        if sub == "" and verb in ("list", "watch"):
            if any(f == "spec.nodeName" and op == "=" and v == node for f, op, v in fsel):
                return
            raise forbidden_by_authz(r, name, user[0], verb, ns, sub,
                                     "can only list/watch pods with spec.nodeName field selector")
        if (sub, verb) in (("", "get"), ("status", "get")):
            if obj is not None and (obj.get("spec") or {}).get("nodeName") == node:
                return
            raise forbidden_by_authz(r, name, user[0], verb, ns, sub,
                                     "no relationship found between node '%s' and this object"
                                     % node)
        # RBAC allows these; NodeRestriction admission narrows them to the node's own pods.
        rules = {("", "delete"): "delete pods", ("status", "patch"): "update pod status for pods",
                 ("status", "update"): "update pod status for pods",
                 ("eviction", "create"): "evict pods"}
        if (sub, verb) in rules:
            if obj is None:
                raise err_not_found(r, name)
            if (obj.get("spec") or {}).get("nodeName") != node:
                raise err_forbidden(r, name, 'node "%s" can only %s with spec.nodeName set to '
                                    'itself' % (node, rules[(sub, verb)]))
            return
        raise forbidden_by_authz(r, name, user[0], verb, ns, sub)
    if r.kind == "Event" and r.group == "" and verb in ("create", "update", "patch"):
        return
    if r.kind == "Node":
        if verb in ("get", "watch", "list") and name == node and sub == "":
            return
        if verb in ("list", "watch") and any(f == "metadata.name" and op == "=" and v == node
                                             for f, op, v in fsel):
            return
        if verb in ("patch", "update") and name == node and sub in ("", "status"):
            return
        if verb == "get":
            raise forbidden_by_authz(r, name, user[0], verb, ns, sub,
                                     "node '%s' cannot read '%s', only its own Node object"
                                     % (node, name))
    raise forbidden_by_authz(r, name, user[0], verb, ns, sub)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "evictd-test-apiserver"
    sys_version = ""

    def setup(self):
        super().setup()
        self.tls_error = None

    def log_message(self, *args):   # the JSON request log replaces the stderr access log
        pass

    # --- plumbing -----------------------------------------------------------------------------
    def send_json(self, code, obj, headers=None, faults=()):
        if isinstance(obj, RawBody):
            body, ctype = bytes(obj), obj.ctype
        else:
            body, ctype = (json.dumps(obj) + "\n").encode(), "application/json"
        for f in faults:
            if f["kind"] == "garbage":
                body = f.get("body", "\x00\xffgarbage{[\"not json").encode("latin-1")
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Audit-Id", str(uuid.uuid4()))
        self.send_header("Cache-Control", "no-cache, private")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if any(f["kind"] == "truncate" for f in faults):
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        trickle = next((f for f in faults if f["kind"] == "trickle"), None)
        if trickle:
            # an answer that takes long to send: `chunk` bytes every `every_ms`, and `pause_ms`
            # of silence after the first chunk (a server stalled mid-answer)
            chunk = max(1, int(trickle.get("chunk", 1024)))
            every, pause = trickle.get("every_ms", 200) / 1000.0, trickle.get("pause_ms", 0) / 1000.0
            for i in range(0, len(body), chunk):
                self.wfile.write(body[i:i + chunk])
                self.wfile.flush()
                if i + chunk < len(body):
                    time.sleep(pause if i == 0 and pause else every)
            return
        self.wfile.write(body)

    def log_request_rec(self, code, user, extra=None):
        rec = {"ts": datetime.datetime.now(datetime.timezone.utc).isoformat(
                   timespec="microseconds"),
               "method": self.command, "path": self.url.path,
               "query": {k: v[0] if len(v) == 1 else v for k, v in self.qs.items()},
               "identity": user[0] if user else None,
               "groups": user[1] if user else None,
               "content_type": self.headers.get("Content-Type"),
               "accept": self.headers.get("Accept"),
               "user_agent": self.headers.get("User-Agent"),
               "status": code}
        if getattr(self, "attrs", None):
            rec.update(self.attrs)
        if getattr(self, "received", None):
            rec["received"] = self.received
        if self.raw_body:
            try:
                rec["body"] = json.loads(self.raw_body)
            except ValueError:
                rec["body"] = self.raw_body.decode("utf-8", "replace")
        if extra:
            rec.update(extra)
        S.log.write(rec)

    def handle_one_request(self):
        try:
            super().handle_one_request()
        except (ConnectionError, ssl.SSLError, socket.timeout, OSError):
            self.close_connection = True

    def do_GET(self):
        self.dispatch()

    do_POST = do_PUT = do_PATCH = do_DELETE = do_GET

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                line = self.rfile.readline()
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
            return data
        return self.rfile.read(n) if n else b""

    def dispatch(self):
        # when the request arrived (before any delay fault): "received" in the request log, so
        # that a check can tell when a write was sent, not only when it was answered
        self.received = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds")
        self.url = urllib.parse.urlsplit(self.path)
        self.qs = urllib.parse.parse_qs(self.url.query, keep_blank_values=True)
        self.raw_body = self.read_body()
        user = None
        is_watch = self.q("watch") in ("1", "true", "True")
        self.attrs = request_info(self.command, self.url.path, self.qs)
        faults = S.faults.take(self.command, self.url.path, is_watch, self.attrs)
        try:
            user = identity_of(self)
            if user is None:
                raise ApiError(status(401, "Unauthorized", "Unauthorized"))
            self.user = user
            for f in faults:
                if f["kind"] == "delay":
                    time.sleep(f.get("ms", 1000) / 1000.0)
            for f in faults:
                if f["kind"] == "reset":
                    self.log_request_rec(0, user, {"fault": "reset"})
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if f["kind"] == "status":
                    code = int(f.get("code", 500))
                    reason = {500: "InternalError", 503: "ServiceUnavailable",
                              429: "TooManyRequests", 504: "Timeout"}.get(code, "InternalError")
                    msg = f.get("message", {500: "Internal error occurred: injected fault",
                                            429: "Too many requests, please try again later."}
                                .get(code, "the server is currently unable to handle the request"))
                    after = int(f.get("retry_after", 1))
                    st = status(code, reason, msg)
                    if code == 429:     # API Priority and Fairness' rejection
                        st["details"] = {"retryAfterSeconds": after}
                    raise ApiError(st, {"Retry-After": str(after)}
                                   if code in (429, 503) else None)
                if f["kind"] == "forbidden":
                    raise ApiError(status(403, "Forbidden", f.get(
                        "message", "forbidden: injected fault")))
                if f["kind"] == "gone" and not is_watch:
                    # a list from a resourceVersion the watch cache no longer has
                    raise err_expired("too old resource version: %s" %
                                      self.q("resourceVersion", ""))
            code, obj, headers = self.route(user, is_watch, faults)
            if code is None:
                return      # a watch: it logged and answered itself
            self.log_request_rec(code, user, {"fault": [f["kind"] for f in faults]}
                                 if faults else None)
            self.send_json(code, obj, headers, faults)
        except ApiError as e:
            self.log_request_rec(e.st["code"], user, {"fault": [f["kind"] for f in faults]}
                                 if faults else None)
            self.send_json(e.st["code"], e.st, e.headers, faults)
        except (ConnectionError, BrokenPipeError, ssl.SSLError):
            self.close_connection = True
        except Exception as e:  # a bug here must show as a 500, not a hung client
            import traceback
            traceback.print_exc()
            st = status(500, "InternalError", "Internal error occurred: %s" % e)
            self.log_request_rec(500, user)
            try:
                self.send_json(500, st)
            except OSError:
                pass

    def q(self, k, default=None):
        v = self.qs.get(k)
        return v[0] if v else default

    def body_json(self):
        if not self.raw_body:
            return {}
        try:
            return json.loads(self.raw_body)
        except ValueError as e:
            raise err_bad_request("error decoding request body: %s" % e) from None

    # --- routing ------------------------------------------------------------------------------
    def route(self, user, is_watch, faults):
        p = [x for x in self.url.path.split("/") if x]
        m = self.command
        if m == "GET":
            if p in (["healthz"], ["readyz"], ["livez"]):
                return 200, "ok", None
            if p == ["version"]:
                return 200, VERSION, None
            if p == ["api"]:
                return 200, {"kind": "APIVersions", "versions": ["v1"],
                             "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0",
                                                             "serverAddress": S.address}]}, None
            if p == ["apis"]:
                return 200, api_group_list(), None
            if p == ["openapi", "v2"]:
                return 200, openapi_v2(self.headers.get("Accept", "")), None
            if p == ["openapi", "v3"]:
                return 200, openapi_v3_index(), None
            if p[:2] == ["openapi", "v3"]:
                doc = openapi_v3_document("/".join(p[2:]))
                if doc is None:
                    raise ApiError(status(404, "NotFound", "the server could not find the "
                                          "requested resource"))
                return 200, doc, None
            if p == ["api", "v1"]:
                return 200, resource_list(CORE, "v1"), None
            if len(p) == 3 and p[0] == "apis":
                if not any(r.group == p[1] and r.version == p[2] for r in RESOURCES):
                    raise ApiError(status(404, "NotFound", "the server could not find the "
                                          "requested resource"))
                return 200, resource_list(p[1], p[2]), None
            if len(p) == 2 and p[0] == "apis":
                g = next((x for x in api_group_list()["groups"] if x["name"] == p[1]), None)
                if g:
                    return 200, dict(g, kind="APIGroup", apiVersion="v1"), None
        # /api/v1/... or /apis/G/V/...
        if p[:2] == ["api", "v1"]:
            group, version, rest = CORE, "v1", p[2:]
        elif len(p) >= 3 and p[0] == "apis":
            group, version, rest = p[1], p[2], p[3:]
        else:
            raise ApiError(status(404, "NotFound", "the server could not find the requested "
                                  "resource"))
        ns = None
        if len(rest) >= 2 and rest[0] == "namespaces" and len(rest) != 2:
            ns, rest = rest[1], rest[2:]
        elif len(rest) >= 2 and rest[0] == "namespaces" and len(rest) == 2:
            rest = ["namespaces", rest[1]]
        if not rest:
            raise ApiError(status(404, "NotFound", "the server could not find the requested "
                                  "resource"))
        r = BY_PATH.get((group, version, rest[0]))
        if r is None or (ns is not None and not r.namespaced):
            raise ApiError(status(404, "NotFound", "the server could not find the requested "
                                  "resource"))
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        if len(rest) > 3 or (sub and sub not in r.subs):
            raise ApiError(status(404, "NotFound", "the server could not find the requested "
                                  "resource"))
        fsel = parse_field_selector(self.q("fieldSelector"))
        if fsel:
            check_fields(r, fsel)
        lsel = parse_label_selector(self.q("labelSelector"))
        with S.store.lock:
            obj = S.store.get(r, ns, name) if name else None
            if obj is None and name and r.name == "events" and not r.group and m == "GET":
                ev = S.store.get(BY_PATH[("events.k8s.io", "v1", "events")], ns, name)
                obj = event_as_core(ev) if ev else None
            obj = copy.deepcopy(obj)
        if not name:
            if m == "GET":
                verb = "watch" if is_watch else "list"
                authorize(user, verb, r, ns, "", "", fsel, None)
                if is_watch:
                    self.serve_watch(user, r, ns, fsel, lsel, faults)
                    return None, None, None
                return 200, self.list(r, ns, fsel, lsel), None
            if m == "POST":
                authorize(user, "create", r, ns, "", "", fsel, None)
                return self.create(r, ns, self.body_json())
            raise ApiError(status(405, "MethodNotAllowed", "the server does not allow this method "
                                  "on the requested resource"))
        verb = {"GET": "get", "DELETE": "delete", "PATCH": "patch", "PUT": "update",
                "POST": "create"}[m]
        if m == "GET" and is_watch:
            fsel = fsel + [("metadata.name", "=", name)]
            authorize(user, "watch", r, ns, name, sub, fsel, obj)
            self.serve_watch(user, r, ns, fsel, lsel, faults)
            return None, None, None
        authorize(user, verb, r, ns, name, sub, fsel, obj)
        if sub == "eviction":
            if m != "POST":
                raise ApiError(status(405, "MethodNotAllowed", "the server does not allow this "
                                      "method on the requested resource"))
            return self.evict(r, ns, name)
        if sub == "binding":
            if m != "POST":
                raise ApiError(status(405, "MethodNotAllowed", "the server does not allow this "
                                      "method on the requested resource"))
            return bind_pod(r, ns, name, self.body_json())
        if m == "POST":
            raise ApiError(status(405, "MethodNotAllowed", "the server does not allow this method "
                                  "on the requested resource"))
        if obj is None and not (m == "PUT" and r.create_on_update and not sub):
            raise err_not_found(r, name)
        if m == "GET":
            return 200, self.maybe_table(r, obj, single=True), None
        if m == "DELETE":
            return self.delete(r, ns, name)
        if m == "PATCH":
            return self.patch(r, ns, name, sub)
        if m == "PUT":
            return self.update(r, ns, name, sub)
        raise ApiError(status(405, "MethodNotAllowed", "method not allowed"))

    # --- list / table -------------------------------------------------------------------------
    def list(self, r, ns, fsel, lsel):
        limit = int(self.q("limit", "0") or 0)
        cont = self.q("continue")
        start, rv = "", None
        if cont:
            try:
                tok = json.loads(base64.urlsafe_b64decode(cont + "=" * (-len(cont) % 4)))
                start, rv, issued = tok["start"], int(tok["rv"]), tok.get("t", 0)
            except (ValueError, KeyError, TypeError):
                raise err_bad_request("continue key is not valid: incorrect encoded start "
                                      "resourceVersion (version meta.k8s.io/v1)") from None
            with S.store.lock:
                too_old = rv < S.store.compacted or (
                    S.store.continue_ttl > 0 and time.time() - issued > S.store.continue_ttl)
            if too_old:
                raise err_expired(CONTINUE_TOO_OLD)
        keyf = (lambda o: o["metadata"].get("namespace", "") + "/" + o["metadata"]["name"])
        rest = 0
        with S.store.lock:
            items = [o for o in core_event_view(S.store, r, ns)
                     if match_fields(o, fsel) and match_labels(o, lsel) and (not start or keyf(o) > start)]
            if limit > 0 and len(items) > limit:
                rest = len(items) - limit
                items = items[:limit]
            # only the page is copied: a copy of every object for each page made a paged list of
            # 150,000 pods quadratic in the stand-in
            items = [copy.deepcopy(o) for o in items]
            cur = S.store.rv
        if rv is None:
            rv = cur
        meta = {"resourceVersion": str(rv)}
        if rest:
            tok = {"v": "meta.k8s.io/v1", "rv": rv, "start": keyf(items[-1]), "t": int(time.time())}
            meta["continue"] = base64.urlsafe_b64encode(
                json.dumps(tok, separators=(",", ":")).encode()).decode().rstrip("=")
            meta["remainingItemCount"] = rest
        lst = {"kind": r.kind + "List", "apiVersion": r.api_version, "metadata": meta,
               "items": items}
        for o in items:     # list items carry no kind/apiVersion in kube-apiserver's output
            o.pop("kind", None)
            o.pop("apiVersion", None)
        return self.maybe_table(r, lst)

    def maybe_table(self, r, obj, single=False):
        if "as=Table" not in (self.headers.get("Accept") or ""):
            return obj
        items = [obj] if single else obj["items"]
        include = self.q("includeObject", "Metadata")
        if r.kind == "Event" and not r.group:
            # printEvent (pkg/printers/internalversion): what kubectl get events shows
            cols = [("Last Seen", "string", "", 0), ("Type", "string", "", 0),
                    ("Reason", "string", "", 0), ("Object", "string", "", 0),
                    ("Subobject", "string", "", 1), ("Source", "string", "", 1),
                    ("Message", "string", "", 0), ("First Seen", "string", "", 1),
                    ("Count", "integer", "", 1), ("Name", "string", "name", 1)]
        elif r.kind == "Pod":
            cols = [("Name", "string", "name", 0), ("Ready", "string", "", 0),
                    ("Status", "string", "", 0), ("Restarts", "string", "", 0),
                    ("Age", "string", "", 0), ("IP", "string", "", 1), ("Node", "string", "", 1),
                    ("Nominated Node", "string", "", 1), ("Readiness Gates", "string", "", 1)]
        else:
            cols = [("Name", "string", "name", 0), ("Age", "string", "", 0)]
        rows = []
        for o in items:
            md = o["metadata"]
            age = age_str(md.get("creationTimestamp"))
            if r.kind == "Event" and not r.group:
                cells = event_cells(o)
            elif r.kind == "Pod":
                st, sp = o.get("status") or {}, o.get("spec") or {}
                css = st.get("containerStatuses") or []
                ready = "%d/%d" % (sum(1 for c in css if c.get("ready")),
                                   len(sp.get("containers") or []))
                phase = "Terminating" if md.get("deletionTimestamp") else \
                    st.get("reason") or st.get("phase", "")
                cells = [md["name"], ready, phase, sum(c.get("restartCount", 0) for c in css),
                         age, st.get("podIP", "<none>"), sp.get("nodeName", "<none>"),
                         "<none>", "<none>"]
            else:
                cells = [md["name"], age]
            row = {"cells": cells}
            if include == "Object":
                row["object"] = dict(o, kind=r.kind, apiVersion=r.api_version)
            elif include != "None":
                row["object"] = {"kind": "PartialObjectMetadata",
                                 "apiVersion": "meta.k8s.io/v1", "metadata": md}
            rows.append(row)
        meta = {"resourceVersion": obj["metadata"].get("resourceVersion", "")}
        if not single and obj["metadata"].get("continue"):
            meta["continue"] = obj["metadata"]["continue"]
        return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta,
                "columnDefinitions": [{"name": n, "type": t, "format": f, "description": n,
                                       "priority": p} for n, t, f, p in cols],
                "rows": rows}

    # --- watch --------------------------------------------------------------------------------
    def chunk(self, data):
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def serve_watch(self, user, r, ns, fsel, lsel, faults):
        rvs = self.q("resourceVersion", "")
        bookmarks = self.q("allowWatchBookmarks") in ("1", "true", "True")
        initial = self.q("sendInitialEvents") in ("1", "true", "True")
        timeout = float(self.q("timeoutSeconds", "0") or 0) or S.watch_timeout
        drop_after = next((int(f.get("after", 0)) for f in faults if f["kind"] == "drop"), None)
        # garbage / truncate: the event at index "after" (default the first) is spoiled
        truncate = next((int(f.get("after", 0)) for f in faults if f["kind"] == "truncate"), None)
        garbage = next((int(f.get("after", 0)) for f in faults if f["kind"] == "garbage"), None)
        gone = any(f["kind"] == "gone" for f in faults)
        try:
            since = int(rvs) if rvs else 0
        except ValueError:
            raise err_bad_request('invalid resource version: strconv.ParseUint: parsing "%s": '
                                  'invalid syntax' % rvs) from None
        k = res_key(r)

        def visible(o):
            return o is not None and (ns is None or o["metadata"].get("namespace") == ns) and \
                match_fields(o, fsel) and match_labels(o, lsel)
        with S.store.lock:
            if rvs in ("", "0") or initial:
                pending = [("ADDED", copy.deepcopy(o)) for o in S.store.list(r, ns)
                           if visible(o)]
                pos = S.store.rv
                expired = False
            else:
                expired = since < S.store.compacted
                pos = since
                pending = []
            oldest = S.store.compacted
        self.log_request_rec(200, user, {"watch": True, "fault": [f["kind"] for f in faults]}
                             if faults else {"watch": True})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Audit-Id", str(uuid.uuid4()))
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()
        self.close_connection = True
        sent = 0

        def emit(ev):
            nonlocal sent
            if drop_after is not None and sent >= drop_after:
                raise ConnectionAbortedError("injected drop")
            data = (json.dumps(ev) + "\n").encode()
            if garbage == sent:
                data = b"{\"type\":\"ADDED\",\"object\":\x00\xff garbage }}}\n"
            if truncate == sent:
                self.chunk(data[:len(data) // 2])
                raise ConnectionAbortedError("injected truncation")
            self.chunk(data)
            sent += 1
        try:
            if gone or expired:
                emit({"type": "ERROR", "object": status(
                    410, "Expired", "too old resource version: %d (%d)" % (since, oldest))})
                self.chunk(b"")
                return
            for typ, o in pending:
                o.update(kind=r.kind, apiVersion=r.api_version)
                emit({"type": typ, "object": o})
            if initial and bookmarks:
                emit({"type": "BOOKMARK", "object": {
                    "kind": r.kind, "apiVersion": r.api_version, "metadata": {
                        "resourceVersion": str(pos), "creationTimestamp": None,
                        "annotations": {"k8s.io/initial-events-end": "true"}}}})
            deadline = time.monotonic() + timeout
            next_bm = time.monotonic() + S.bookmark_interval
            bm_gen = S.bookmark_gen
            epoch = S.epoch
            while not S.stopping:
                if S.epoch != epoch:
                    raise ConnectionAbortedError("API server outage")
                evs = []
                with S.store.lock:
                    now = time.monotonic()
                    wait = min(deadline, next_bm) - now
                    if wait > 0 and S.bookmark_gen == bm_gen and S.store.rv <= pos:
                        S.store.lock.wait(min(wait, 0.5))
                    if pos < S.store.compacted:
                        # history dropped under us (compaction): the client must relist
                        evs = [("ERROR", status(410, "Expired", "too old resource version: %d "
                                                "(%d)" % (pos, S.store.compacted)))]
                    else:
                        first = bisect.bisect_right(S.store.history, pos, key=lambda h: h[0])
                        for hrv, hk, typ, o, prev in S.store.history[first:]:
                            if hk != k:
                                continue
                            now_vis, was_vis = visible(o), visible(prev)
                            if typ == "MODIFIED" and now_vis and not was_vis:
                                typ = "ADDED"
                            elif typ == "MODIFIED" and was_vis and not now_vis:
                                typ, now_vis = "DELETED", True
                            if now_vis:
                                evs.append((typ, copy.deepcopy(o)))
                        pos = S.store.rv    # the scan covered every retained event up to here
                    cur = S.store.rv
                for typ, o in evs:
                    if typ == "ERROR":
                        emit({"type": "ERROR", "object": o})
                        self.chunk(b"")
                        return
                    o.update(kind=r.kind, apiVersion=r.api_version)
                    emit({"type": typ, "object": o})
                now = time.monotonic()
                if bookmarks and (now >= next_bm or S.bookmark_gen != bm_gen):
                    bm_gen = S.bookmark_gen
                    next_bm = now + S.bookmark_interval
                    emit({"type": "BOOKMARK", "object": {
                        "kind": r.kind, "apiVersion": r.api_version,
                        "metadata": {"resourceVersion": str(max(pos, cur)),
                                     "creationTimestamp": None}}})
                if now >= deadline:
                    break
            self.chunk(b"")
        except (ConnectionError, BrokenPipeError, ssl.SSLError, OSError):
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    # --- writes -------------------------------------------------------------------------------
    def create(self, r, ns, body):
        if not isinstance(body, dict):
            raise err_bad_request("the body of the request was in an unknown format")
        bns = (body.get("metadata") or {}).get("namespace")
        if r.namespaced and bns and ns and bns != ns:
            raise err_bad_request("the namespace of the provided object does not match the "
                                  "namespace sent on the request")
        with S.store.lock:
            obj = default_object(S.store, r, copy.deepcopy(body), ns)
            admit(r, obj)
            if S.store.get(r, obj["metadata"].get("namespace"), obj["metadata"]["name"]):
                d = {"name": obj["metadata"]["name"], "kind": r.name}
                if r.group:
                    d["group"] = r.group
                raise ApiError(status(409, "AlreadyExists", '%s "%s" already exists' % (
                    r.qualified, obj["metadata"]["name"]), d))
            S.store.put(r, obj)
            return 201, copy.deepcopy(obj), None

    def delete_options(self):
        opts = self.body_json() if self.raw_body else {}
        if not isinstance(opts, dict):
            raise err_bad_request("DeleteOptions must be an object")
        if self.q("gracePeriodSeconds") is not None:
            opts["gracePeriodSeconds"] = int(self.q("gracePeriodSeconds"))
        return opts

    def delete(self, r, ns, name, opts=None):
        opts = self.delete_options() if opts is None else opts
        with S.store.lock:
            obj = S.store.get(r, ns, name)
            if obj is None:
                raise err_not_found(r, name)
            check_delete_preconditions(r, obj, opts)
            grace = opts.get("gracePeriodSeconds")
            if r.kind == "Pod":
                if grace is None:
                    grace = (obj.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
                if not (obj.get("spec") or {}).get("nodeName") or \
                        (obj.get("status") or {}).get("phase") in ("Failed", "Succeeded"):
                    grace = 0
            else:
                grace = 0
            if grace and grace > 0:
                if obj["metadata"].get("deletionTimestamp"):
                    return 200, copy.deepcopy(obj), None
                obj = copy.deepcopy(obj)
                obj["metadata"]["deletionTimestamp"] = now_rfc3339(time.time() + grace)
                obj["metadata"]["deletionGracePeriodSeconds"] = grace
                obj["spec"]["terminationGracePeriodSeconds"] = grace
                S.store.put(r, obj)     # the kubelet simulation removes it (KubeletSim)
                return 200, copy.deepcopy(obj), None
            S.store.remove(r, obj)
            return 200, copy.deepcopy(obj), None

    def patch(self, r, ns, name, sub):
        ctype = (self.headers.get("Content-Type") or "").split(";")[0].strip()
        body = self.body_json()
        if ctype == "application/strategic-merge-patch+json":
            fn = strategic_merge
        elif ctype == "application/merge-patch+json":
            fn = merge_patch
        elif ctype == "application/json-patch+json":
            fn = json_patch
        else:
            raise ApiError(status(415, "UnsupportedMediaType", 'the body of the request was in an '
                                  'unknown format - accepted media types include: '
                                  'application/json-patch+json, application/merge-patch+json, '
                                  'application/apply-patch+yaml, '
                                  'application/strategic-merge-patch+json'))
        with S.store.lock:
            obj = S.store.get(r, ns, name)
            if obj is None:
                raise err_not_found(r, name)
            new = fn(obj, body)
            if not isinstance(new, dict):
                raise err_bad_request("patch did not produce an object")
            if sub == "status":     # the status subresource ignores everything but status
                keep = copy.deepcopy(obj)
                keep["status"] = new.get("status", {})
                new = keep
            elif "status" in new and r.subs and "status" in r.subs:
                new["status"] = copy.deepcopy(obj.get("status"))
            new["metadata"]["uid"] = obj["metadata"]["uid"]
            new["metadata"]["name"] = obj["metadata"]["name"]
            if r.namespaced:
                new["metadata"]["namespace"] = obj["metadata"]["namespace"]
            new["metadata"]["creationTimestamp"] = obj["metadata"]["creationTimestamp"]
            admit(r, new, obj)
            S.store.put(r, new)
            return 200, copy.deepcopy(new), None

    def update(self, r, ns, name, sub):
        body = self.body_json()
        check_update_name(body, name)
        with S.store.lock:
            obj = S.store.get(r, ns, name)
            if obj is None and r.create_on_update and not sub:
                # an update that creates is authorized as a create too (handlers/update.go)
                authorize(self.user, "create", r, ns, name, "", [], None)
                return self.create(r, ns, body)
            if obj is None:
                raise err_not_found(r, name)
            rv = (body.get("metadata") or {}).get("resourceVersion")
            if not rv and not r.unconditional_update:
                raise err_rv_required(r, name)
            if rv and rv != obj["metadata"]["resourceVersion"]:
                raise err_conflict(r, name, "the object has been modified; please apply your "
                                   "changes to the latest version and try again")
            new = copy.deepcopy(obj)
            if sub == "status":
                new["status"] = body.get("status", {})
            else:
                for k, v in body.items():
                    if k not in ("metadata", "status"):
                        new[k] = v
                for k in ("labels", "annotations", "ownerReferences", "finalizers"):
                    if k in (body.get("metadata") or {}):
                        new["metadata"][k] = body["metadata"][k]
            admit(r, new, obj)
            S.store.put(r, new)
            return 200, copy.deepcopy(new), None

    def evict(self, r, ns, name):
        body = self.body_json()
        if body.get("kind") not in (None, "Eviction"):
            raise err_bad_request("the body of the request was in an unknown format")
        opts = body.get("deleteOptions") or {}
        with S.store.lock:
            pod = S.store.get(r, ns, name)
            if pod is None:
                raise err_not_found(r, name)
            check_delete_preconditions(r, pod, opts)
            terminal = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
            pdbr = BY_KIND[("policy/v1", "PodDisruptionBudget")]
            labels = pod["metadata"].get("labels") or {}
            pdbs = [p for p in S.store.list(pdbr, ns)
                    if match_label_selector_obj((p.get("spec") or {}).get("selector"), labels)]
            if pdbs and not terminal and not pod["metadata"].get("deletionTimestamp"):
                if len(pdbs) > 1:
                    raise ApiError(status(500, "InternalError", "This pod has more than one "
                                          "PodDisruptionBudget, which the eviction subresource "
                                          "does not support."))
                pdb = pdbs[0]
                pst = pdb.get("status") or {}
                if pst.get("observedGeneration", 0) < pdb["metadata"].get("generation", 0):
                    # checkAndDecrement: the disruption controller has not seen this spec yet
                    raise ApiError(status(429, "TooManyRequests", "Cannot evict pod as it would violate "
                                          "the pod's disruption budget.", {"causes": [{
                                              "reason": "DisruptionBudget",
                                              "message": "The disruption budget %s is still being "
                                              "processed by the server." % pdb["metadata"]["name"]}],
                                              "retryAfterSeconds": 10}), {"Retry-After": "10"})
                if pst.get("disruptionsAllowed", 0) <= 0:
                    st = status(429, "TooManyRequests", "Cannot evict pod as it would violate the "
                                "pod's disruption budget.", {"causes": [{
                                    "reason": "DisruptionBudget",
                                    "message": "The disruption budget %s needs %d healthy pods and "
                                    "has %d currently" % (pdb["metadata"]["name"],
                                                          pst.get("desiredHealthy", 0),
                                                          pst.get("currentHealthy", 0))}]})
                    raise ApiError(st)
                pdb = copy.deepcopy(pdb)
                pdb["status"]["disruptionsAllowed"] = pst["disruptionsAllowed"] - 1
                pdb["status"].setdefault("disruptedPods", {})[name] = now_rfc3339()
                S.store.put(pdbr, pdb)
            pod = copy.deepcopy(pod)
            conds = pod.setdefault("status", {}).setdefault("conditions", [])
            conds[:] = [c for c in conds if c.get("type") != "DisruptionTarget"]
            conds.append({"type": "DisruptionTarget", "status": "True", "lastProbeTime": None,
                          "lastTransitionTime": now_rfc3339(), "reason": "EvictionByEvictionAPI",
                          "message": "Eviction API: evicting"})
            S.store.put(r, pod)
        self.delete(r, ns, name, opts)
        return 201, status(201, "", "", st="Success"), None


# ----------------------------------------------------------------------------------------------
# Request attributes: what kube-apiserver's RequestInfoFactory derives from a request, and what
# RBAC, injected faults and the request log match on.

WRITE_VERBS = ("create", "update", "patch", "delete", "deletecollection")


def request_info(method, path, qs):
    """{"verb", "api_group", "resource", "subresource", "namespace", "name"} of a request for an
    API resource; None for any other path (discovery, /version, /healthz)."""
    p = [x for x in path.split("/") if x]
    if p[:2] == ["api", "v1"]:
        group, rest = CORE, p[2:]
    elif len(p) >= 3 and p[0] == "apis":
        group, rest = p[1], p[3:]
    else:
        return None
    if not rest:
        return None
    ns = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        ns = rest[1]
        if len(rest) > 2:
            rest = rest[2:]
    resource = rest[0]
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""
    watch = (qs.get("watch") or [""])[0] in ("1", "true", "True")
    verb = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete",
            "GET": "watch" if watch else "get"}.get(method, method.lower())
    if not name:
        verb = {"get": "list", "delete": "deletecollection"}.get(verb, verb)
        if verb in ("list", "watch"):
            # a list or watch of one object by field selector is authorized by its name
            for f, op, v in parse_field_selector((qs.get("fieldSelector") or [""])[0]):
                if f == "metadata.name" and op == "=":
                    name = v
    return {"verb": verb, "api_group": group, "resource": resource, "subresource": sub,
            "namespace": ns, "name": name}


# ----------------------------------------------------------------------------------------------
# Admission and validation of what a scheduler writes: Lease, Event (core/v1 and events.k8s.io),
# MicroTime fields, update preconditions.

def err_invalid(kind, group, name, errs):
    """422 Invalid as errors.NewInvalid builds it from field errors."""
    d = {"name": name, "kind": kind, "causes": V.causes(errs)}
    if group:
        d["group"] = group
    return ApiError(status(422, "Invalid", '%s "%s" is invalid: %s' % (
        kind + ("." + group if group else ""), name, V.aggregate(errs)), d))


def err_decode(r, why):
    """400 for a body the decoder refused (transformDecodeError)."""
    return err_bad_request('%s in version "%s" cannot be handled as a %s: %s' % (
        r.kind, r.version, r.kind, why))


def err_rv_required(r, name):
    # the registry names the resource where the Kind would go ("leases.coordination.k8s.io"),
    # and prints the uint64 zero with %#v
    return err_invalid(r.name, r.group, name, [V.invalid(
        "metadata.resourceVersion", 0, "must be specified for an update", raw_value="0x0")])


def check_update_name(body, name):
    bname = (body.get("metadata") or {}).get("name") if isinstance(body, dict) else None
    if bname and bname != name:
        raise err_bad_request("the name of the object (%s) does not match the name on the URL "
                              "(%s)" % (bname, name))


def normalize_times(r, obj, paths):
    """Decode the time fields at paths [(("spec", "renewTime"), micro), ...] as the server does
    and store them in its canonical form; a malformed one is the decoder's 400."""
    for path, micro in paths:
        parent = obj
        for k in path[:-1]:
            parent = parent.get(k) if isinstance(parent, dict) else None
        if not isinstance(parent, dict) or parent.get(path[-1]) is None:
            continue
        try:
            parent[path[-1]] = V.parse_time(parent[path[-1]], micro)[1]
        except V.TimeError as e:
            raise err_decode(r, e) from None


def check_int32(r, obj, go_type, path):
    parent = obj
    for k in path[:-1]:
        parent = parent.get(k) if isinstance(parent, dict) else None
    v = parent.get(path[-1]) if isinstance(parent, dict) else None
    if v is None or (isinstance(v, int) and not isinstance(v, bool)):
        return
    what = "number %s" % v if isinstance(v, float) else \
        {str: "string", bool: "bool", list: "array", dict: "object"}.get(type(v), "value")
    raise err_decode(r, "json: cannot unmarshal %s into Go struct field %s.%s of type int32" % (
        what, go_type, ".".join(path)))


def name_errors(obj):
    name = obj["metadata"].get("name", "")
    return [V.invalid("metadata.name", name, m) for m in V.dns1123_subdomain(name)]


def admit(r, obj, old=None):
    """Decoding and validation of a create (old None) or update through the API."""
    if r.kind == "Lease":
        admit_lease(r, obj)
    elif r.kind == "Event":
        admit_event(r, obj, old)


def admit_lease(r, lease):
    if not isinstance(lease.get("spec"), dict):
        lease["spec"] = {}
    normalize_times(r, lease, [(("spec", "acquireTime"), True), (("spec", "renewTime"), True)])
    for f in ("leaseDurationSeconds", "leaseTransitions"):
        check_int32(r, lease, "LeaseSpec", ("spec", f))
    spec, errs = lease["spec"], name_errors(lease)
    if spec.get("leaseDurationSeconds") is not None and spec["leaseDurationSeconds"] <= 0:
        errs.append(V.invalid("spec.leaseDurationSeconds", spec["leaseDurationSeconds"],
                              "must be greater than 0"))
    if spec.get("leaseTransitions") is not None and spec["leaseTransitions"] < 0:
        errs.append(V.invalid("spec.leaseTransitions", spec["leaseTransitions"],
                              "must be greater than or equal to 0"))
    if errs:
        raise err_invalid(r.kind, r.group, lease["metadata"]["name"], errs)


# events.k8s.io/v1 field -> the internal (core) field the validator names
EVENT_V1_FIELDS = {"note": "message", "regarding": "involvedObject", "deprecatedCount": "count",
                   "deprecatedSource": "source", "deprecatedFirstTimestamp": "firstTimestamp",
                   "deprecatedLastTimestamp": "lastTimestamp"}
EVENT_CORE_FIELDS = {"reportingComponent": "reportingController"}
EVENT_IMMUTABLE = ("involvedObject", "reason", "message", "source", "firstTimestamp",
                   "lastTimestamp", "count", "type", "eventTime", "action", "related",
                   "reportingController", "reportingInstance")


def admit_event(r, ev, old):
    """pkg/apis/core/validation/events.go: the legacy rules for every Event, the strict ones
    for events.k8s.io/v1 (ValidateEventCreate / ValidateEventUpdate)."""
    strict = bool(r.group)
    dtime = "deprecatedFirstTimestamp" if strict else "firstTimestamp"
    normalize_times(r, ev, [(("eventTime",), True), (("series", "lastObservedTime"), True),
                            ((dtime,), False), ((dtime.replace("First", "Last"),), False)])
    names = EVENT_V1_FIELDS if strict else EVENT_CORE_FIELDS

    def internal(e):
        return {names.get(k, k): v for k, v in e.items()} if e is not None else None
    e, prev = internal(ev), internal(old)
    ns = ev["metadata"].get("namespace", "")
    ins = (e.get("involvedObject") or {}).get("namespace") or ""
    errs = []
    ns_err = V.invalid("involvedObject.namespace", ins, "does not match event.namespace")
    if not e.get("eventTime"):
        if (not ins and ns not in ("", "default")) or (ins and ins != ns):
            errs.append(ns_err)
    else:
        if not ins and ns not in ("default", "kube-system"):
            errs.append(ns_err)
        rc = e.get("reportingController") or ""
        if not rc:
            errs.append(V.required("reportingController"))
        errs += [V.invalid("reportingController", rc, m) for m in V.qualified_name(rc)]
        for f, limit in (("reportingInstance", 128), ("action", 128), ("reason", 128)):
            if not e.get(f):
                errs.append(V.required(f))
            if len(e.get(f) or "") > limit:
                errs.append(V.invalid(f, "", "can have at most %d characters" % limit))
        if len((e.get("message") or "").encode()) > 1024:
            errs.append(V.invalid("message", "", "can have at most 1024 characters"))
    errs += [V.invalid("namespace", ns, m) for m in V.dns1123_subdomain(ns)]
    if strict:
        series = e.get("series")
        if old is None:
            errs += name_errors(ev)
        if series is not None and (old is None or series != prev.get("series")):
            if (series.get("count") or 0) < 2:
                errs.append(V.invalid("series.count", "", "should be at least 2"))
            if not series.get("lastObservedTime"):
                errs.append(V.required("series.lastObservedTime"))
        if old is None:
            if not e.get("eventTime"):
                errs.append(V.required("eventTime"))
            if e.get("type") not in ("Normal", "Warning"):
                errs.append(V.invalid("type", "", "has invalid value: %s" % (e.get("type") or "")))
            for f in ("firstTimestamp", "lastTimestamp", "count"):
                if e.get(f):
                    errs.append(V.invalid(f, "", "needs to be unset"))
            src = e.get("source") or {}
            if src.get("component") or src.get("host"):
                errs.append(V.invalid("source", "", "needs to be unset"))
        else:
            errs += [V.invalid(f, e.get(f), "field is immutable") for f in EVENT_IMMUTABLE
                     if e.get(f) != prev.get(f)]
    if errs:
        raise err_invalid(r.kind, r.group, ev["metadata"]["name"], errs)


# ----------------------------------------------------------------------------------------------
# pods/binding (pkg/registry/core/pod/storage/storage.go, BindingREST)

BINDING = Res("pods/binding", CORE, "v1", "Binding", True)


def storage_precondition_conflict(r, ns, name, what, want, have):
    """A precondition the storage layer checked (GuaranteedUpdate): the Conflict carries the
    StorageError's own text."""
    return err_conflict(r, name, "StorageError: invalid object, Code: 4, Key: /registry/%s/%s/%s, "
                        "ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: %s in "
                        "precondition: %s, %s in object meta: %s" % (
                            r.name, ns, name, what, want, what, have))


def update_pod_condition(st, cond, now):
    """podutil.UpdatePodCondition: the condition replaced whole (reason and message go with
    it); lastTransitionTime kept when the status did not change."""
    cond = dict({"lastProbeTime": None, "lastTransitionTime": now}, **cond)
    conds = st.setdefault("conditions", [])
    for i, c in enumerate(conds):
        if c.get("type") == cond["type"]:
            if c.get("status") == cond["status"]:
                cond["lastTransitionTime"] = c.get("lastTransitionTime")
            conds[i] = cond
            return
    conds.append(cond)


def bind_pod(r, ns, name, body):
    if not isinstance(body, dict) or body.get("kind") not in (None, "Binding"):
        raise err_bad_request("not a Binding object: %s" % (
            body.get("kind") if isinstance(body, dict) else type(body).__name__))
    md = body.get("metadata") or {}
    if md.get("namespace") and md["namespace"] != ns:
        raise err_bad_request("the namespace of the provided object does not match the "
                              "namespace sent on the request")
    if md.get("name") != name:
        raise err_bad_request("name in URL does not match name in Binding object")
    target = body.get("target") or {}
    errs = []
    if target.get("kind") not in (None, "", "Node"):
        errs.append(V.not_supported("target.kind", target["kind"], ["Node", "<empty>"]))
    if not target.get("name"):
        errs.append(V.required("target.name"))
    if errs:
        # ValidatePodBinding's errors are not a Status: the server answers 500, reason unset
        raise ApiError({"kind": "Status", "apiVersion": "v1", "metadata": {},
                        "status": "Failure", "message": V.aggregate(errs), "code": 500})
    with S.store.lock:
        pod = S.store.get(r, ns, name)
        if pod is None:
            raise err_not_found(r, name)
        pmd = pod["metadata"]
        for field, what in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
            if md.get(field) and md[field] != pmd[field]:
                raise storage_precondition_conflict(r, ns, name, what, md[field], pmd[field])
        spec = pod.get("spec") or {}
        if pmd.get("deletionTimestamp"):
            raise err_conflict(BINDING, name, "pod %s is being deleted, cannot be assigned to a "
                               "host" % name)
        if spec.get("nodeName"):
            raise err_conflict(BINDING, name, 'pod %s is already assigned to node "%s"' % (
                name, spec["nodeName"]))
        if spec.get("schedulingGates"):
            raise err_conflict(BINDING, name, "pod %s has non-empty .spec.schedulingGates" % name)
        pod = copy.deepcopy(pod)
        pod["spec"]["nodeName"] = target["name"]
        if md.get("annotations"):
            pod["metadata"].setdefault("annotations", {}).update(md["annotations"])
        update_pod_condition(pod.setdefault("status", {}), {"type": "PodScheduled",
                                                           "status": "True"}, now_rfc3339())
        S.store.put(r, pod)
    return 201, status(201, "", "", st="Success"), None


# ----------------------------------------------------------------------------------------------
# The kubelets (and the pod garbage collector) of the cluster, as the API server sees them: a
# pod bound to a node starts there after a short delay (or is rejected by the kubelet's
# admission when it does not fit the Node's allocatable); a pod being deleted gracefully ends
# after its grace period (terminal status, then removed); pods of a Node removed from the API
# are deleted by the pod GC. Per node a kubelet may be slow (every delay multiplied) or stuck
# (does nothing until unstuck). Delays: start-delay, grace × grace_scale, podgc-delay.

KUBELET_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")
PODS = ("", "pods")
NODES = ("", "nodes")


def pod_requests(pod):
    """Millicores, bytes: max(sum of containers, largest init container), as the kubelet's
    admission adds them up."""
    spec = pod.get("spec") or {}

    def req(c):
        r = (c.get("resources") or {}).get("requests") or {}
        return (qty(r.get("cpu", 0)) * 1000, qty(r.get("memory", 0)))
    cs = [req(c) for c in spec.get("containers") or []]
    inits = [req(c) for c in spec.get("initContainers") or []]
    total = (sum(c[0] for c in cs), sum(c[1] for c in cs))
    return tuple(int(round(max([total[i]] + [c[i] for c in inits]))) for i in (0, 1))


class KubeletSim:
    def __init__(self, start_delay, podgc_delay):
        self.start_delay, self.podgc_delay = start_delay, podgc_delay
        self.admit = True
        self.nodes = {}             # node -> {"mode": normal|slow|stuck, "factor": F}
        self.waiting = {}           # node -> [(fn, args)] held while its kubelet is stuck
        self.heap, self.seq = [], 0
        self.cv = threading.Condition()
        threading.Thread(target=self.run, daemon=True).start()

    # -- timing ------------------------------------------------------------------------------
    def later(self, node, delay, fn, *args):
        cfg = self.nodes.get(node) or {}
        if cfg.get("mode") == "stuck":
            self.waiting.setdefault(node, []).append((delay, fn, args))
            return
        if cfg.get("mode") == "slow":
            delay *= float(cfg.get("factor", 10))
        with self.cv:
            self.seq += 1
            heapq.heappush(self.heap, (time.monotonic() + delay, self.seq, fn, args))
            self.cv.notify()

    def run(self):
        while True:
            with self.cv:
                while not self.heap or self.heap[0][0] > time.monotonic():
                    self.cv.wait(None if not self.heap else self.heap[0][0] - time.monotonic())
                _, _, fn, args = heapq.heappop(self.heap)
            try:
                with S.store.lock:
                    fn(*args)
            except Exception:   # a bug here must not stop every other kubelet
                import traceback
                traceback.print_exc()

    def configure(self, cfg):
        with S.store.lock:
            for k in ("start_delay", "podgc_delay"):
                if k in cfg:
                    setattr(self, k, float(cfg[k]))
            if "admit" in cfg:
                self.admit = bool(cfg["admit"])
            for node, ncfg in (cfg.get("nodes") or {}).items():
                if ncfg.get("mode") not in ("normal", "slow", "stuck"):
                    raise ValueError("kubelet mode must be normal, slow or stuck")
                self.nodes[node] = dict(ncfg)
                if ncfg["mode"] != "stuck":
                    for delay, fn, args in self.waiting.pop(node, []):
                        self.later(node, delay, fn, *args)

    def reset(self):
        with S.store.lock:
            self.nodes.clear()
            self.waiting.clear()

    def snapshot(self):
        with S.store.lock:
            return {"start_delay": self.start_delay, "podgc_delay": self.podgc_delay,
                    "admit": self.admit, "nodes": copy.deepcopy(self.nodes),
                    "waiting": {n: len(w) for n, w in self.waiting.items() if w}}

    # -- the store's changes -----------------------------------------------------------------
    def on_change(self, r, typ, obj, prev):
        if (r.group, r.name) == NODES:
            if typ == "DELETED":
                self.later(None, self.podgc_delay, self.podgc,
                           obj["metadata"]["name"], obj["metadata"]["uid"])
            return
        if (r.group, r.name) != PODS or typ == "DELETED":
            return
        md, spec = obj["metadata"], obj.get("spec") or {}
        node = spec.get("nodeName")
        if not node:
            return
        key = (md.get("namespace", ""), md["name"], md["uid"])
        was_bound = prev is not None and (prev.get("spec") or {}).get("nodeName")
        if prev is not None and not was_bound and S.store.get(BY_KIND[("v1", "Node")], "", node) is None:
            # a pending pod bound to a Node that does not exist (deleted while a scheduler
            # decided): the pod GC's sweep of orphaned pods collects it after its quarantine, as
            # for a deleted Node. Pods created bound (tests' fixtures on a node with no Node
            # object) stay.
            self.later(None, self.podgc_delay, self.podgc, node, None)
        if not was_bound and not md.get("deletionTimestamp") and \
                (obj.get("status") or {}).get("phase", "Pending") == "Pending":
            self.later(node, self.start_delay, self.start, r, key)
        if md.get("deletionTimestamp") and not (prev or {}).get("metadata", {}).get(
                "deletionTimestamp"):
            grace = md.get("deletionGracePeriodSeconds") or 0
            self.later(node, grace * S.store.grace_scale, self.terminate, r, key)

    def current(self, r, key):
        pod = S.store.get(r, key[0], key[1])
        return copy.deepcopy(pod) if pod is not None and pod["metadata"]["uid"] == key[2] \
            else None

    # -- what a kubelet does -----------------------------------------------------------------
    def start(self, r, key):
        pod = self.current(r, key)
        if pod is None or pod["metadata"].get("deletionTimestamp") or \
                (pod.get("status") or {}).get("phase", "Pending") != "Pending":
            return
        node = S.store.get(BY_KIND[("v1", "Node")], "", pod["spec"]["nodeName"])
        st = pod.setdefault("status", {})
        rejected = self.admission(pod, node) if self.admit else None
        if rejected:
            reason, message = rejected
            st.update(phase="Failed", reason=reason, message="Pod was rejected: " + message)
            S.store.put(r, pod)
            self.event(pod, "Warning", reason, message)
            return
        kept = [c for c in st.pop("conditions", []) if c.get("type") not in KUBELET_CONDITIONS]
        st.pop("containerStatuses", None)
        st["phase"] = "Running"
        addrs = ((node or {}).get("status") or {}).get("addresses") or []
        host_ip = next((a["address"] for a in addrs if a.get("type") == "InternalIP"),
                       "10.0.0.10")
        kubelet_status(pod, now_rfc3339(), host_ip)
        st["conditions"] = [c for c in st["conditions"]
                            if c["type"] not in {k["type"] for k in kept}] + kept
        S.store.put(r, pod)

    def admission(self, pod, node):
        """The kubelet's resource admission (lifecycle/predicate.go): (reason, message) when
        the pod does not fit the Node's allocatable next to the pods the kubelet runs."""
        if node is None:
            return None
        alloc = (node.get("status") or {}).get("allocatable") or {}
        running = [p for p in S.store.list(BY_KIND[("v1", "Pod")])
                   if (p.get("spec") or {}).get("nodeName") == pod["spec"]["nodeName"] and
                   p["metadata"]["uid"] != pod["metadata"]["uid"] and
                   (p.get("status") or {}).get("phase") == "Running"]
        if "pods" in alloc and len(running) + 1 > qty(alloc["pods"]):
            return "OutOfpods", "Node didn't have enough resource: pods, requested: 1, used: " \
                "%d, capacity: %d" % (len(running), qty(alloc["pods"]))
        want, used = pod_requests(pod), [0, 0]
        for p in running:
            for i, v in enumerate(pod_requests(p)):
                used[i] += v
        for i, res in enumerate(("cpu", "memory")):
            if res not in alloc or not want[i]:
                continue
            cap = int(round(qty(alloc[res]) * (1000 if res == "cpu" else 1)))
            if used[i] + want[i] > cap:
                return "OutOf" + res, "Node didn't have enough resource: %s, requested: %d, " \
                    "used: %d, capacity: %d" % (res, want[i], used[i], cap)
        return None

    def terminate(self, r, key):
        """The end of a graceful deletion: the containers stopped (SIGTERM: exit 143), the
        terminal phase posted, then the pod removed (the kubelet's DELETE with grace 0)."""
        pod = self.current(r, key)
        if pod is None:
            return
        st = pod.setdefault("status", {})
        if st.get("phase") not in ("Succeeded", "Failed"):
            now = now_rfc3339()
            st["phase"] = "Failed"
            for c in st.get("conditions") or []:
                if c.get("type") in ("Ready", "ContainersReady") and c.get("status") != "False":
                    c.update(status="False", lastTransitionTime=now)
            for cs in st.get("containerStatuses") or []:
                started = ((cs.get("state") or {}).get("running") or {}).get("startedAt")
                cs.update(ready=False, started=False, state={"terminated": {
                    "exitCode": 143, "reason": "Error", "startedAt": started, "finishedAt": now,
                    "containerID": cs.get("containerID")}})
            S.store.put(r, pod)
        S.store.remove(r, pod)

    def podgc(self, node, node_uid):
        """kube-controller-manager's pod GC: pods bound to a Node that no longer exists are
        marked (DisruptionTarget DeletionByPodGC, phase Failed) and deleted at once."""
        nr = BY_KIND[("v1", "Node")]
        if S.store.get(nr, "", node) is not None:
            return      # the node came back
        pr = BY_KIND[("v1", "Pod")]
        for pod in S.store.list(pr):
            if (pod.get("spec") or {}).get("nodeName") != node:
                continue
            pod = copy.deepcopy(pod)
            st = pod.setdefault("status", {})
            if st.get("phase") not in ("Succeeded", "Failed"):
                st["phase"] = "Failed"
                update_pod_condition(st, {"type": "DisruptionTarget", "status": "True",
                                          "reason": "DeletionByPodGC",
                                          "message": "PodGC: node no longer exists"},
                                     now_rfc3339())
                S.store.put(pr, pod)
            S.store.remove(pr, pod)

    def event(self, pod, typ, reason, message):
        """A core/v1 Event as the kubelet's recorder posts it."""
        er = BY_KIND[("v1", "Event")]
        md = pod["metadata"]
        now = now_rfc3339()
        ev = {"metadata": {"name": "%s.%x" % (md["name"], time.time_ns()),
                           "namespace": md.get("namespace", "default")},
              "involvedObject": {"kind": "Pod", "namespace": md.get("namespace"),
                                 "name": md["name"], "uid": md["uid"], "apiVersion": "v1",
                                 "resourceVersion": md.get("resourceVersion")},
              "reason": reason, "message": message, "type": typ, "count": 1,
              "source": {"component": "kubelet", "host": pod["spec"]["nodeName"]},
              "firstTimestamp": now, "lastTimestamp": now, "reportingComponent": "kubelet",
              "reportingInstance": pod["spec"]["nodeName"]}
        S.store.put(er, default_object(S.store, er, ev))


def check_delete_preconditions(r, obj, opts):
    """rest.BeforeDelete's early check of DeleteOptions.preconditions (its message names the
    Kind, not the resource)."""
    pre = opts.get("preconditions") or {}
    md = obj["metadata"]
    for field, label, tail in (("uid", "UID", "deleted and then recreated"),
                               ("resourceVersion", "ResourceVersion", "modified")):
        if pre.get(field) and pre[field] != md.get(field):
            raise ApiError(status(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": the '
                                  '%s in the precondition (%s) does not match the %s in record '
                                  '(%s). The object might have been %s' % (
                                      r.kind, md["name"], label, pre[field], label, md.get(field),
                                      tail), dict({"name": md["name"], "kind": r.kind},
                                                  **({"group": r.group} if r.group else {}))))


def micro_age_str(ts):
    """age_str of a MicroTime (or a Time)."""
    return age_str(re.sub(r"\.[0-9]+Z$", "Z", ts)) if ts else "<unknown>"


def event_cells(ev):
    """One row of kubectl get events (printEvent): first and last seen from firstTimestamp /
    lastTimestamp, else eventTime and series.lastObservedTime; count from series, else count,
    else 1; the source from source, else reportingComponent and reportingInstance."""
    first = micro_age_str(ev.get("firstTimestamp") or ev.get("eventTime"))
    last = micro_age_str(ev.get("lastTimestamp")) if ev.get("lastTimestamp") else first
    count = ev.get("count") or 1
    if ev.get("series"):
        last = micro_age_str(ev["series"].get("lastObservedTime"))
        count = ev["series"].get("count") or count
    src = ev.get("source") or {}
    comp = src.get("component") or ev.get("reportingComponent", "")
    inst = src.get("host") or ev.get("reportingInstance", "")
    io = ev.get("involvedObject") or {}
    return [last, ev.get("type", ""), ev.get("reason", ""),
            "%s/%s" % (io.get("kind", "").lower(), io.get("name", "")), io.get("fieldPath", ""),
            comp + (", " + inst if inst else ""), (ev.get("message") or "").strip(), first, count,
            ev["metadata"]["name"]]


def age_str(ts):
    if not ts:
        return "<unknown>"
    t = datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=datetime.timezone.utc).timestamp()
    d = max(0, int(time.time() - t))
    if d < 120:
        return "%ds" % d
    if d < 7200:
        return "%dm" % (d // 60)
    return "%dh" % (d // 3600)


VERSION = {"major": "1", "minor": "32", "gitVersion": "v1.32.0-evictd-test",
           "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
           "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.23.0", "compiler": "gc",
           "platform": "linux/amd64"}


def api_group_list():
    groups = {}
    for r in RESOURCES:
        if r.group:
            groups.setdefault(r.group, r.version)
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
        {"name": g, "versions": [{"groupVersion": g + "/" + v, "version": v}],
         "preferredVersion": {"groupVersion": g + "/" + v, "version": v}}
        for g, v in groups.items()]}


def resource_list(group, version):
    out = []
    for r in RESOURCES:
        if r.group != group or r.version != version:
            continue
        e = {"name": r.name, "singularName": r.kind.lower(), "namespaced": r.namespaced,
             "kind": r.kind, "verbs": r.verbs}
        if r.short:
            e["shortNames"] = r.short
        if r.name == "pods":
            e["categories"] = ["all"]
        out.append(e)
        for s in r.subs:
            if s == "eviction":
                out.append({"name": r.name + "/eviction", "singularName": "",
                            "namespaced": True, "group": "policy", "version": "v1",
                            "kind": "Eviction", "verbs": ["create"]})
            elif s == "binding":
                out.append({"name": r.name + "/binding", "singularName": "",
                            "namespaced": True, "kind": "Binding", "verbs": ["create"]})
            else:
                out.append({"name": r.name + "/" + s, "singularName": "",
                            "namespaced": r.namespaced, "kind": r.kind,
                            "verbs": ["get", "patch", "update"]})
    return {"kind": "APIResourceList", "apiVersion": "v1",
            "groupVersion": group + "/" + version if group else version, "resources": out}


# ----------------------------------------------------------------------------------------------
# Control endpoint (plain HTTP, 127.0.0.1 only)

def resource_for(obj):
    k = (obj.get("apiVersion", "v1"), obj.get("kind"))
    if k not in BY_KIND:
        raise ValueError("unknown apiVersion/kind %s/%s" % k)
    return BY_KIND[k]


def resource_by_name(name):
    for r in RESOURCES:
        if name in (r.name, r.qualified, r.kind.lower()) or name in r.short:
            if r.name == "events" and name == "events" and r.group:
                continue
            return r
    raise ValueError("unknown resource %r" % name)


class Control(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, obj, ctype="application/json"):
        body = obj.encode() if isinstance(obj, str) else (json.dumps(obj) + "\n").encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.handle_ctl()

    do_POST = do_PUT = do_DELETE = do_GET

    def handle_ctl(self):
        url = urllib.parse.urlsplit(self.path)
        qs = dict(urllib.parse.parse_qsl(url.query))
        p = [x for x in url.path.split("/") if x]
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        try:
            body = json.loads(raw) if raw.strip() else None
        except ValueError as e:
            return self.reply(400, {"error": "bad JSON: %s" % e})
        m = self.command
        try:
            if p == ["healthz"]:
                return self.reply(200, "ok\n", "text/plain")
            if p == ["requests"] and m == "GET":
                return self.reply(200, S.log.read(), "application/x-ndjson")
            if p == ["requests"] and m == "DELETE":
                S.log.reset()
                return self.reply(200, {"ok": True})
            if p == ["faults"]:
                if m == "GET":
                    return self.reply(200, S.faults.snapshot())
                if m == "DELETE":
                    S.faults.clear()
                    return self.reply(200, {"ok": True})
                for f in body if isinstance(body, list) else [body]:
                    S.faults.add(f)
                return self.reply(200, S.faults.snapshot())
            if p == ["forbid"] and m == "POST":      # 403 for everything while on
                S.forbid_all = bool((body or {}).get("on", True))
                return self.reply(200, {"forbid": S.forbid_all})
            if p == ["compact"] and m == "POST":     # every older resourceVersion -> 410
                S.store.compact()
                return self.reply(200, {"compacted": S.store.compacted})
            if p == ["bookmark"] and m == "POST":    # every bookmark-enabled watch: one now
                with S.store.lock:
                    S.bookmark_gen += 1
                    S.store.lock.notify_all()
                return self.reply(200, {"ok": True})
            if p == ["config"] and m == "POST":
                b = body or {}
                with S.store.lock:
                    if "history" in b:
                        S.store.history_max = int(b["history"])
                    if "continue_ttl" in b:
                        S.store.continue_ttl = float(b["continue_ttl"])
                    if "bookmark_interval" in b:
                        S.bookmark_interval = float(b["bookmark_interval"])
                    if "grace_scale" in b:
                        S.store.grace_scale = float(b["grace_scale"])
                return self.reply(200, {"ok": True})
            if p == ["reset"] and m == "POST":
                S.faults.clear()
                S.log.reset()
                S.forbid_all = False
                S.kubelet.reset()
                S.rbac.reset()
                with S.store.lock:
                    for (rk, ns, name), o in list(S.store.objs.items()):
                        r = next(x for x in RESOURCES if res_key(x) == rk)
                        if r.kind == "PriorityClass" and name in dict(
                                (n, v) for n, v, _ in BUILTIN_PCS):
                            continue
                        S.store.remove(r, o)
                return self.reply(200, {"ok": True})
            if p == ["rv"]:
                return self.reply(200, {"resourceVersion": str(S.store.rv)})
            if p == ["outage"]:
                if m == "POST":
                    begin_outage(float((body or {}).get("seconds", 5)))
                elif m == "DELETE":
                    end_outage(S.epoch)
                return self.reply(200, {"down": not S.up.is_set(),
                                        "seconds_left": max(0.0, S.down_until - time.time())})
            if p == ["rbac"]:
                if m == "DELETE":
                    S.rbac.reset()
                return self.reply(200, S.rbac.report(rbac_objects()))
            if len(p) == 3 and p[0] == "serviceaccount":
                with S.store.lock:
                    sa = S.store.get(BY_KIND[("v1", "ServiceAccount")], p[1], p[2])
                    tok = next((t for t, u in S.sa_tokens.items()
                                if u[0] == "system:serviceaccount:%s:%s" % (p[1], p[2])), None)
                if sa is None or tok is None:
                    return self.reply(404, {"error": "no such ServiceAccount"})
                kcfg, sdir = sa_files(p[1], p[2])
                return self.reply(200, {"token": tok, "kubeconfig": kcfg, "dir": sdir})
            if p == ["kubelet"]:
                if m == "POST":
                    S.kubelet.configure(body or {})
                return self.reply(200, S.kubelet.snapshot())
            if p and p[0] == "objects":
                return self.objects(m, p[1:], body, qs)
            return self.reply(404, {"error": "no such control endpoint"})
        except ApiError as e:
            return self.reply(e.st["code"], e.st)
        except (ValueError, KeyError, TypeError) as e:
            return self.reply(400, {"error": str(e)})

    def objects(self, m, p, body, qs):
        if m in ("POST", "PUT"):
            objs = body.get("items") if isinstance(body, dict) and "items" in body and \
                body.get("kind", "").endswith("List") else body
            objs = objs if isinstance(objs, list) else [objs]
            out = []
            with S.store.lock:
                for o in objs:
                    r = resource_for(o)
                    o = copy.deepcopy(o)
                    md = o.setdefault("metadata", {})
                    old = S.store.get(r, md.get("namespace", "default") if r.namespaced else "",
                                      md.get("name", ""))
                    if old is not None:     # an update keeps identity unless told otherwise
                        md.setdefault("uid", old["metadata"]["uid"])
                        md.setdefault("creationTimestamp", old["metadata"]["creationTimestamp"])
                    if qs.get("raw") not in ("1", "true"):
                        default_object(S.store, r, o)
                    else:
                        default_meta(r, o, None)
                    S.store.put(r, o)
                    out.append(copy.deepcopy(o))
            return self.reply(200, out if isinstance(body, list) or len(out) != 1 else out[0])
        if not p:
            return self.reply(400, {"error": "name a resource: /objects/RESOURCE[/NS]/NAME"})
        r = resource_by_name(p[0])
        ns = p[1] if r.namespaced and len(p) > 2 else ("" if not r.namespaced else None)
        name = p[-1] if (len(p) == 3 if r.namespaced else len(p) == 2) else None
        if r.namespaced and len(p) == 2:
            ns, name = p[1], None
        with S.store.lock:
            if name is None:
                if m == "GET":
                    return self.reply(200, S.store.list(r, ns))
                if m == "DELETE":
                    for o in S.store.list(r, ns):
                        S.store.remove(r, o)
                    return self.reply(200, {"ok": True})
            obj = S.store.get(r, ns or "", name)
            if obj is None:
                return self.reply(404, {"error": "not found"})
            if m == "GET":
                return self.reply(200, obj)
            if m == "DELETE":
                S.store.remove(r, obj)
                return self.reply(200, obj)
        return self.reply(405, {"error": "method not allowed"})


# ----------------------------------------------------------------------------------------------
# Startup

def kubeconfig(path, server, ca, user, name="test"):
    ctx = {"cluster": name, "user": name}
    doc = {"apiVersion": "v1", "kind": "Config", "preferences": {},
           "clusters": [{"name": name, "cluster": dict({"server": server}, **ca)}],
           "contexts": [{"name": name, "context": ctx}],
           "current-context": name,
           "users": [{"name": name, "user": user}]}
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)     # JSON is YAML: every kubeconfig reader takes it
    os.chmod(tmp, 0o600)
    os.rename(tmp, path)


def write_kubeconfigs(d, certs, server):
    def b64(name):
        with open(os.path.join(certs, name), "rb") as f:
            return base64.b64encode(f.read()).decode()

    def fp(name):
        return os.path.abspath(os.path.join(certs, name))
    ca_data = {"certificate-authority-data": b64("ca.crt")}
    ca_file = {"certificate-authority": fp("ca.crt")}
    tok = {}
    with open(os.path.join(certs, "tokens.csv"), encoding="utf-8") as f:
        for line in f:
            parts = line.strip().split(",", 3)
            if len(parts) >= 2:
                tok[parts[1]] = parts[0]
    node_user = next((u for u in tok if u.startswith("system:node:")), None)
    kubeconfig(os.path.join(d, "kubeconfig-admin"), server, ca_data,
               {"client-certificate-data": b64("admin.crt"), "client-key-data": b64("admin.key")})
    kubeconfig(os.path.join(d, "kubeconfig-node"), server, ca_file,
               {"client-certificate": fp("node.crt"), "client-key": fp("node.key")})
    kubeconfig(os.path.join(d, "kubeconfig-node-data"), server, ca_data,
               {"client-certificate-data": b64("node.crt"), "client-key-data": b64("node.key")})
    kubeconfig(os.path.join(d, "kubeconfig-expired"), server, ca_file,
               {"client-certificate": fp("expired.crt"), "client-key": fp("expired.key")})
    kubeconfig(os.path.join(d, "kubeconfig-rogue"), server, ca_file,
               {"client-certificate": fp("rogue.crt"), "client-key": fp("rogue.key")})
    if node_user:
        kubeconfig(os.path.join(d, "kubeconfig-node-token"), server, ca_file,
                   {"token": tok[node_user]})
    if "kubernetes-admin" in tok:
        kubeconfig(os.path.join(d, "kubeconfig-admin-token"), server, ca_data,
                   {"token": tok["kubernetes-admin"]})
    kubeconfig(os.path.join(d, "kubeconfig-exec"), server, ca_file,
               {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command":
                         "aws-iam-authenticator", "args": ["token", "-i", "test"],
                         "interactiveMode": "Never", "provideClusterInfo": False}})
    kubeconfig(os.path.join(d, "kubeconfig-anonymous"), server, ca_file, {})


def load_tokens(path):
    out = {}
    if not path or not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = next(iter(__import__("csv").reader([line])))
            groups = parts[3].split(",") if len(parts) > 3 and parts[3] else []
            out[parts[0]] = (parts[1], groups + ["system:authenticated"])
    return out


class TLSServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, addr, handler, ctx):
        super().__init__(addr, handler)
        self.ctx = ctx

    def get_request(self):
        sock, addr = self.socket.accept()
        # The handshake runs in the request's thread: a stalled client cannot block accept().
        return self.ctx.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), addr

    def finish_request(self, request, client_address):
        request.settimeout(S.handshake_timeout)
        try:
            request.do_handshake()
        except (ssl.SSLError, OSError) as e:
            S.log.write({"ts": datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="microseconds"), "tls_error": str(e), "status": 0})
            return
        request.settimeout(None)
        with S.conns_lock:
            S.conns.add(request)
        try:
            super().finish_request(request, client_address)
        finally:
            with S.conns_lock:
                S.conns.discard(request)

    def handle_error(self, request, client_address):
        pass


def begin_outage(seconds):
    """The API server goes away for `seconds` and comes back with its state, as a restarted
    kube-apiserver in front of the same etcd: the listening socket closes (new connections are
    refused), every open connection and watch is cut without a goodbye, then the same port
    serves again. A request being handled when it starts may still change the state (its
    answer is lost)."""
    with S.outage_lock:
        if not S.up.is_set():
            S.down_until = max(S.down_until, time.time() + seconds)
            return
        S.up.clear()
        S.epoch += 1
        S.down_until = time.time() + seconds
        S.httpd.shutdown()          # serve_forever (the main thread) returns ...
        S.httpd.server_close()      # ... and the port refuses connections from now on
    with S.conns_lock:
        for c in list(S.conns):
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
    with S.store.lock:
        S.store.lock.notify_all()       # watches waiting for events see the new epoch
    epoch = S.epoch

    def wait_then_end():
        while S.down_until > time.time() and not S.stopping:
            time.sleep(min(0.1, S.down_until - time.time()))
        end_outage(epoch)
    threading.Thread(target=wait_then_end, daemon=True).start()


def end_outage(epoch):
    if epoch == S.epoch:
        S.down_until = 0.0
        S.up.set()


# ----------------------------------------------------------------------------------------------
# RBAC (rbac.py) from the roles and bindings in the store, and service account identities

RBAC_KINDS = ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")


def rbac_objects():
    with S.store.lock:
        return {k: copy.deepcopy(S.store.list(BY_KIND[("rbac.authorization.k8s.io/v1", k)]))
                for k in RBAC_KINDS}


def rbac_authorize(user, verb, r, ns, name, sub, fsel):
    """Users other than system:masters and nodes: RBAC, kube-apiserver's 403 when it denies."""
    if not name:    # a list or watch by metadata.name is authorized for that name
        name = next((v for f, op, v in fsel if f == "metadata.name" and op == "="), "")
    if not S.rbac.authorize(rbac_objects(), user[0], user[1], verb, r.group, r.name, sub,
                            ns or "", name):
        raise forbidden_by_authz(r, name, user[0], verb, ns, sub)


def sa_files(ns, name):
    return (os.path.join(S.dir, "kubeconfig-sa-%s-%s" % (ns, name)),
            os.path.join(S.dir, "serviceaccount-%s-%s" % (ns, name)))


def on_serviceaccount(r, typ, obj, prev):
    """A token per ServiceAccount, valid while it exists (as a bound token dies with its
    account): a kubeconfig `kubeconfig-sa-NS-NAME` and the in-cluster directory
    `serviceaccount-NS-NAME/` (token, ca.crt, namespace) in --dir."""
    if r.kind != "ServiceAccount":
        return
    md = obj["metadata"]
    ns, name = md["namespace"], md["name"]
    user = "system:serviceaccount:%s:%s" % (ns, name)
    for tok in [t for t, u in S.sa_tokens.items() if u[0] == user]:
        del S.sa_tokens[tok]
    kcfg, sdir = sa_files(ns, name)
    if typ == "DELETED":
        for f in ("token", "ca.crt", "namespace"):
            if os.path.exists(os.path.join(sdir, f)):
                os.unlink(os.path.join(sdir, f))
        if os.path.exists(kcfg):
            os.unlink(kcfg)
        return
    tok = "sa-" + hashlib.sha256(("%s/%s/%s" % (ns, name, md["uid"])).encode()).hexdigest()[:40]
    S.sa_tokens[tok] = (user, ["system:serviceaccounts", "system:serviceaccounts:" + ns,
                               "system:authenticated"])
    with open(os.path.join(S.certs, "ca.crt"), "rb") as f:
        ca = f.read()
    kubeconfig(kcfg, "https://" + S.address, {"certificate-authority-data":
                                               base64.b64encode(ca).decode()}, {"token": tok})
    os.makedirs(sdir, exist_ok=True)
    for f, data in (("token", tok.encode()), ("ca.crt", ca), ("namespace", ns.encode())):
        with open(os.path.join(sdir, f), "wb") as out:
            out.write(data)


def load_manifests(paths):
    """--rbac FILE: the manifest's objects stored at startup, as `kubectl apply -f` would."""
    with S.store.lock:
        for path in paths:
            for o in rbac.load_manifest(path):
                try:
                    r = resource_for(o)
                except ValueError as e:
                    raise SystemExit("%s: %s" % (path, e)) from None
                o = copy.deepcopy(o)
                S.store.put(r, default_object(S.store, r, o))


def watch_parent(ppid):
    """Exit when the process that started us goes away (tests must leave nothing behind)."""
    while True:
        time.sleep(0.5)
        if os.getppid() != ppid:
            os.kill(os.getpid(), signal.SIGTERM)
            return


def main():
    ap = argparse.ArgumentParser(description="Stand-in Kubernetes API server for tests "
                                 "(not a kube-apiserver).")
    ap.add_argument("--dir", required=True, help="state directory: ports, request log, "
                    "kubeconfigs")
    ap.add_argument("--certs", help="directory made by mkcerts.sh (default: --dir)")
    ap.add_argument("--port", type=int, default=0, help="HTTPS port (0: any)")
    ap.add_argument("--control-port", type=int, default=0, help="control port (0: any)")
    ap.add_argument("--expired-server-cert", action="store_true",
                    help="serve server-expired.crt instead of server.crt")
    ap.add_argument("--history", type=int, default=1000,
                    help="watch events retained; older resourceVersions get 410 Gone")
    ap.add_argument("--bookmark-interval", type=float, default=5.0,
                    help="seconds between BOOKMARK events on watches that allow them")
    ap.add_argument("--watch-timeout", type=float, default=1800.0,
                    help="watch length when the client gives no timeoutSeconds")
    ap.add_argument("--continue-ttl", type=float, default=0,
                    help="continue tokens older than this many seconds get 410 (0: never)")
    ap.add_argument("--grace-scale", type=float, default=1.0,
                    help="multiplier on deletion grace periods (0.01: 30 s become 0.3 s)")
    ap.add_argument("--no-builtin-priorityclasses", action="store_true",
                    help="do not create system-node-critical and system-cluster-critical")
    ap.add_argument("--rbac", action="append", default=[], metavar="FILE",
                    help="a manifest (YAML, e.g. deploy/preemptd.yaml) whose objects — "
                    "ServiceAccounts, roles, bindings — exist from the start")
    ap.add_argument("--kubelet-start-delay", type=float, default=0.05,
                    help="seconds from a pod's binding to its kubelet's Running status")
    ap.add_argument("--podgc-delay", type=float, default=40.0,
                    help="seconds after a Node's removal until the pod GC deletes its pods")
    a = ap.parse_args()
    certs = a.certs or a.dir
    os.makedirs(a.dir, exist_ok=True)

    S.store = Store(a.history, a.continue_ttl)
    S.store.grace_scale = a.grace_scale
    S.faults = Faults()
    S.log = RequestLog(os.path.join(a.dir, "requests.jsonl"))
    S.tokens = load_tokens(os.path.join(certs, "tokens.csv"))
    S.forbid_all = False
    S.stopping = False
    S.bookmark_interval = a.bookmark_interval
    S.bookmark_gen = 0
    S.watch_timeout = a.watch_timeout
    S.handshake_timeout = 10
    S.kubelet = KubeletSim(a.kubelet_start_delay, a.podgc_delay)
    S.store.hooks.append(S.kubelet.on_change)
    S.rbac, S.sa_tokens = rbac.Account(), {}
    S.dir, S.certs = a.dir, certs
    if not a.no_builtin_priorityclasses:
        pcr = BY_KIND[("scheduling.k8s.io/v1", "PriorityClass")]
        with S.store.lock:
            for name, value, desc in BUILTIN_PCS:
                S.store.put(pcr, default_object(S.store, pcr, {
                    "metadata": {"name": name}, "value": value, "description": desc}))

    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    srv = "server-expired" if a.expired_server_cert else "server"
    ctx.load_cert_chain(os.path.join(certs, srv + ".crt"), os.path.join(certs, srv + ".key"))
    ctx.load_verify_locations(os.path.join(certs, "ca.crt"))
    ctx.verify_mode = ssl.CERT_OPTIONAL
    # X509_V_FLAG_NO_CHECK_TIME: an expired client certificate completes the handshake and is
    # refused with 401 as kube-apiserver does (it verifies client certificates after TLS).
    ctx.verify_flags = ctx.verify_flags | 0x200000
    ctx.set_alpn_protocols(["http/1.1"])

    S.conns, S.conns_lock = set(), threading.Lock()
    S.epoch, S.down_until, S.outage_lock = 0, 0.0, threading.Lock()
    S.up = threading.Event()
    S.up.set()
    httpd = S.httpd = TLSServer(("127.0.0.1", a.port), Handler, ctx)
    ctl = http.server.ThreadingHTTPServer(("127.0.0.1", a.control_port), Control)
    ctl.daemon_threads = True
    port, cport = httpd.server_address[1], ctl.server_address[1]
    S.address = "127.0.0.1:%d" % port
    write_kubeconfigs(a.dir, certs, "https://127.0.0.1:%d" % port)
    S.store.hooks.append(on_serviceaccount)
    load_manifests(a.rbac)

    def stop(*_):
        if S.stopping:
            return
        S.stopping = True
        with S.store.lock:
            S.store.lock.notify_all()
        threading.Thread(target=S.httpd.shutdown, daemon=True).start()
        S.up.set()
        threading.Thread(target=ctl.shutdown, daemon=True).start()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:    # PR_SET_PDEATHSIG: SIGTERM when the parent dies; the poll below covers the rest
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
    threading.Thread(target=ctl.serve_forever, daemon=True).start()

    info = {"port": port, "control_port": cport, "pid": os.getpid(),
            "url": "https://127.0.0.1:%d" % port, "control": "http://127.0.0.1:%d" % cport}
    tmp = os.path.join(a.dir, "ports.json.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(info, f)
    os.rename(tmp, os.path.join(a.dir, "ports.json"))     # ready: the file exists
    while not S.stopping:
        S.httpd.serve_forever(poll_interval=0.2)
        S.httpd.server_close()
        S.up.wait()     # an outage (begin_outage) ends here
        with S.outage_lock:     # (not while another outage begins)
            if not S.stopping:
                S.httpd = TLSServer(("127.0.0.1", port), Handler, ctx)
    ctl.server_close()
    try:
        os.unlink(os.path.join(a.dir, "ports.json"))
    except OSError:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
