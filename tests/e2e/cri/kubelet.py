#!/usr/bin/env python3
"""A kubelet stand-in for evictd's CRI scenarios in the e2e VM (tests/e2e/scenarios/10-14).

Not the kubelet: a test double that does to a real container runtime (containerd from Debian)
what the kubelet does, over the runtime's own API (the CRI, runtime.v1 over gRPC on its unix
socket), so that evictd meets on the test node what it meets on a Kubernetes node:

  run-pod   a pod as the kubelet's SyncPod makes it: the pod's systemd slice
            (kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid>.slice, a transient unit
            as the kubelet's systemd cgroup driver starts it), the log directory
            /var/log/pods/<ns>_<name>_<uid>/, RunPodSandbox (host network, no CNI), then per
            container CreateContainer (image by id, log path <container>/<restartCount>.log, the
            kubelet's labels and annotations, its resources and termination-log mount) and
            StartContainer; and the descriptor /run/evictd/pods/<uid>.conf that evictd-kube
            would write for it (its priority and requests come from the API there).
  delete    the API deletes the pod; the serving kubelet tears it down.
  serve     the kubelet's loops, on its schedule:
              relist every 1 s (PLEG): a pod whose sandbox died (only an eviction kills a whole
                pod here; the kubelet would learn of it from the API server, where evictd-kube
                deletes the pod), a deleted pod, or a restartPolicy Never pod whose containers
                all exited is terminated: StopContainer, StopPodSandbox, its emptyDir volumes
                torn down, its pod slice stopped (SyncTerminatedPod: the pod cgroup goes away);
                a deleted pod's descriptor and /var/lib/kubelet/pods/<uid> go too;
              container GC every 60 s (the kubelet's ContainerGCPeriod, first one 60 s after
                start): dead containers of pods whose content may be removed (deleted, evicted
                or unknown) all go, other pods keep their newest dead instance per container
                (MaxPerPodContainer 1); each removed container's log file goes first (the kubelet
                removes it, the runtime does not); then sandboxes that are not ready and unused
                (all for removable pods, all but the newest otherwise), then the log directories
                of removable pods;
              the eviction manager's check every 10 s against the kubelet's own hard thresholds
                (--eviction-hard): when one is met it runs the node-level reclaim's container
                part (DeleteAllUnusedContainers: dead containers of terminated pods too) and logs
                that the kubelet would go on to unused images and a pod eviction (not modelled:
                the scenarios keep the node above the kubelet's thresholds and check that line
                never appears).
            Every action is one line in --log: "<CLOCK_MONOTONIC seconds> <what>".
  others    reading what the kubelet and evictd read (ls, stats, images, imagefs-info), waiting
            for a state, removing images, and teardown (every sandbox and container removed, for
            the end of a scenario).

The message classes come from the project's CRI subset, cri/api.proto, through tests/cri/criproto.py
(in the VM: the descriptor set the host's build wrote, api.desc beside this file, as run.sh ships
them). Output is one JSON object per line where the scenarios read it with jq.
Exit status: 0 done, 1 the runtime or the node refused (the message says what), 2 usage.
"""

import argparse
import glob
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
# criproto.py beside this file (the VM's share) or in tests/cri/ (the source tree)
sys.path[:0] = [HERE, os.path.join(os.path.dirname(os.path.dirname(HERE)), "cri")]
if os.path.exists(os.path.join(HERE, "api.desc")):
    os.environ.setdefault("CRI_DESCRIPTOR", os.path.join(HERE, "api.desc"))
STATE_DIR = "/run/e2e-cri/pods"
ENDPOINT = "unix:///run/containerd/containerd.sock"
POD_LOGS_DIR = "/var/log/pods"
KUBELET_ROOT = "/var/lib/kubelet"
DESCRIPTOR_DIR = "/run/evictd/pods"
DEFAULT_IMAGE = "localhost/e2e/busybox:latest"
CGROUP_ROOT = "/sys/fs/cgroup"

# kubelet constants (pkg/kubelet/kubelet.go, pkg/kubelet/qos/policy.go, pkg/kubelet/cm/helpers_linux.go)
RELIST_PERIOD = 1.0
CONTAINER_GC_PERIOD = 60.0
EVICTION_MONITORING_PERIOD = 10.0
MAX_PER_POD_CONTAINER = 1
GUARANTEED_OOM_SCORE_ADJ = -997
BESTEFFORT_OOM_SCORE_ADJ = 1000
MIN_SHARES = 2

LABEL_POD_NAME = "io.kubernetes.pod.name"
LABEL_POD_NAMESPACE = "io.kubernetes.pod.namespace"
LABEL_POD_UID = "io.kubernetes.pod.uid"
LABEL_CONTAINER_NAME = "io.kubernetes.container.name"


class Failure(Exception):
    pass


pb = None          # criproto's runtime.v1 classes and service names, loaded in main()
RUNTIME = IMAGE = None


def enum(name, value):
    return pb.enum(name, value)


def enum_name(name, number):
    return pb.file.enum_types_by_name[name].values_by_number[number].name


class Runtime:
    """Unary calls of runtime.v1.RuntimeService and ImageService on the runtime's socket."""

    def __init__(self, endpoint, timeout):
        import grpc  # python3-grpcio: only where a runtime is spoken to
        self.grpc = grpc
        self.channel = grpc.insecure_channel(endpoint)
        self.timeout = timeout

    def call(self, service, method, request, timeout=None):
        _, reply = pb.method_types(service, method)
        stub = self.channel.unary_unary("/%s/%s" % (service, method),
                                        request_serializer=type(request).SerializeToString,
                                        response_deserializer=reply.FromString)
        try:
            return stub(request, timeout=timeout or self.timeout)
        except self.grpc.RpcError as e:
            raise Failure("%s/%s: %s: %s" % (service.split(".")[-1], method, e.code().name, e.details()))

    def rs(self, method, request, timeout=None):
        return self.call(RUNTIME, method, request, timeout)

    def images(self, method, request):
        return self.call(IMAGE, method, request)

    def sandboxes(self, **labels):
        f = pb.PodSandboxFilter(label_selector=labels) if labels else None
        return list(self.rs("ListPodSandbox", pb.ListPodSandboxRequest(filter=f)).items)

    def containers(self, **labels):
        f = pb.ContainerFilter(label_selector=labels) if labels else None
        return list(self.rs("ListContainers", pb.ListContainersRequest(filter=f)).containers)

    def container_status(self, cid):
        return self.rs("ContainerStatus", pb.ContainerStatusRequest(container_id=cid)).status

    def image_list(self):
        return list(self.images("ListImages", pb.ListImagesRequest()).images)


# ---- small helpers -------------------------------------------------------------------------------

UNITS = {"": 1, "k": 1000, "M": 1000 ** 2, "G": 1000 ** 3, "T": 1000 ** 4,
         "Ki": 1024, "Mi": 1024 ** 2, "Gi": 1024 ** 3, "Ti": 1024 ** 4}


def quantity(text):
    """A Kubernetes quantity ("64Mi", "500M", "1048576") in bytes (or millis for "100m" CPU)."""
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi|Ti|k|M|G|T|)", text)
    if not m:
        raise argparse.ArgumentTypeError("not a quantity: %r" % text)
    return int(m.group(1)) * UNITS[m.group(2)]


def milli_cpu(text):
    m = re.fullmatch(r"(\d+)(m?)", text)
    if not m:
        raise argparse.ArgumentTypeError("not a CPU quantity: %r" % text)
    return int(m.group(1)) * (1 if m.group(2) else 1000)


def now_mono():
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def write_atomic(path, text, mode=0o644):
    tmp = "%s.%d.tmp" % (path, os.getpid())
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def emit(obj):
    print(json.dumps(obj, sort_keys=True), flush=True)


def slice_escape(uid):
    """The kubelet writes a pod UID's '-' as '_' in systemd unit names."""
    return uid.replace("-", "_")


def qos_slice(qos):
    return "kubepods.slice" if qos == "guaranteed" else "kubepods-%s.slice" % qos


def pod_slice(uid, qos):
    if qos == "guaranteed":
        return "kubepods-pod%s.slice" % slice_escape(uid)
    return "kubepods-%s-pod%s.slice" % (qos, slice_escape(uid))


def pod_log_dir(ns, name, uid):
    return os.path.join(POD_LOGS_DIR, "%s_%s_%s" % (ns, name, uid))


def pod_dir(uid):
    return os.path.join(KUBELET_ROOT, "pods", uid)


def empty_dir(uid, volume):
    return os.path.join(pod_dir(uid), "volumes", "kubernetes.io~empty-dir", volume)


# ---- systemd: the kubelet's systemd cgroup driver ---------------------------------------------------

def unit_active(unit):
    r = subprocess.run(["systemctl", "is-active", "--quiet", unit])
    return r.returncode == 0


def start_slice(unit, parent, cpu_weight=None, memory_max=None):
    """A transient slice, as libcontainer's systemd manager starts the kubelet's cgroups."""
    if unit_active(unit):
        return
    props = [("Description", "s", "libcontainer container " + unit),
             ("Wants", "as", "1", parent), ("DefaultDependencies", "b", "false"),
             ("MemoryAccounting", "b", "true"), ("CPUAccounting", "b", "true"),
             ("IOAccounting", "b", "true"), ("TasksAccounting", "b", "true")]
    if cpu_weight is not None:
        props.append(("CPUWeight", "t", str(cpu_weight)))
    if memory_max is not None:
        props.append(("MemoryMax", "t", str(memory_max)))
    argv = ["busctl", "call", "--quiet", "--", "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
            "org.freedesktop.systemd1.Manager", "StartTransientUnit", "ssa(sv)a(sa(sv))",
            unit, "fail", str(len(props))]
    for p in props:
        argv.extend(p)
    argv.append("0")
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0 and not unit_active(unit):
        raise Failure("cannot start %s: %s" % (unit, r.stderr.strip()))
    deadline = time.monotonic() + 15
    while not unit_active(unit):
        if time.monotonic() > deadline:
            raise Failure("%s did not become active" % unit)
        time.sleep(0.05)


def stop_slice(unit):
    subprocess.run(["systemctl", "stop", unit], capture_output=True)


# ---- the pods this kubelet was given (what the API server would list for the node) ----------------

def record_path(uid, what="json"):
    return os.path.join(STATE_DIR, "%s.%s" % (uid, what))


def records():
    pods = {}
    for p in glob.glob(os.path.join(STATE_DIR, "*.json")):
        try:
            with open(p) as f:
                r = json.load(f)
        except (OSError, ValueError):
            continue
        r["deleted"] = os.path.exists(record_path(r["uid"], "deleted"))
        pods[r["uid"]] = r
    return pods


def forget(uid):
    for what in ("json", "deleted"):
        try:
            os.unlink(record_path(uid, what))
        except FileNotFoundError:
            pass


def write_descriptor(rec, container_ids):
    """What evictd-kube writes for a pod bound to this node (agent/evictd-kube/kpod.c)."""
    lines = ["# Written by the e2e kubelet stand-in as evictd-kube would from the API server.",
             "[pod]", "uid = %s" % rec["uid"], "namespace = %s" % rec["namespace"],
             "name = %s" % rec["name"], "priority = %d" % rec["priority"],
             "qos-class = %s" % {"guaranteed": "Guaranteed", "burstable": "Burstable",
                                 "besteffort": "BestEffort"}[rec["qos"]],
             "critical = no"]
    if rec.get("memory_request") is not None:
        lines.append("memory-request = %d" % rec["memory_request"])
    if rec.get("cpu_request") is not None:
        lines.append("cpu-request = %dm" % rec["cpu_request"])
    if rec.get("storage_request") is not None:
        lines.append("ephemeral-storage-request = %d" % rec["storage_request"])
    lines.append("termination-grace-period = %ds" % rec["grace"])
    for c in rec["containers"]:
        lines.append("container = %s %s" % (c["name"], container_ids.get(c["name"], "-")))
    os.makedirs(DESCRIPTOR_DIR, exist_ok=True)
    write_atomic(os.path.join(DESCRIPTOR_DIR, rec["uid"] + ".conf"), "\n".join(lines) + "\n")


def remove_descriptor(uid):
    try:
        os.unlink(os.path.join(DESCRIPTOR_DIR, uid + ".conf"))
    except FileNotFoundError:
        pass


# ---- SyncPod --------------------------------------------------------------------------------------

def oom_score_adj(qos, memory_request):
    """pkg/kubelet/qos/policy.go GetContainerOOMScoreAdjust."""
    if qos == "guaranteed":
        return GUARANTEED_OOM_SCORE_ADJ
    if qos == "besteffort" or not memory_request:
        return BESTEFFORT_OOM_SCORE_ADJ
    with open("/proc/meminfo") as f:
        capacity = int(f.readline().split()[1]) * 1024
    adj = 1000 - (1000 * memory_request) // capacity
    if adj < 1000 + GUARANTEED_OOM_SCORE_ADJ:
        return 1000 + GUARANTEED_OOM_SCORE_ADJ
    return adj - 1 if adj == BESTEFFORT_OOM_SCORE_ADJ else adj


def cpu_shares(milli):
    """pkg/kubelet/cm/helpers_linux.go MilliCPUToShares."""
    if not milli:
        return MIN_SHARES
    return max(MIN_SHARES, milli * 1024 // 1000)


def shares_to_weight(shares):
    """cgroup v2: the kubelet's (and runc's) shares -> cpu.weight conversion."""
    return 1 + ((shares - 2) * 9999) // 262142


def image_id(rt, ref):
    """The kubelet creates containers by image id (EnsureImageExists returns it); no pulls here."""
    for im in rt.image_list():
        if ref in im.repo_tags or ref == im.id:
            return im.id
    raise Failure("image %s is not on the node (no registry here: import it first)" % ref)


def sandbox_config(rec):
    labels = dict(rec["labels"])
    labels.update({LABEL_POD_NAME: rec["name"], LABEL_POD_NAMESPACE: rec["namespace"],
                   LABEL_POD_UID: rec["uid"]})
    ns_opts = pb.NamespaceOption(network=enum("NamespaceMode", "NODE"), pid=enum("NamespaceMode", "CONTAINER"),
                                 ipc=enum("NamespaceMode", "POD"))
    return pb.PodSandboxConfig(
        metadata=pb.PodSandboxMetadata(name=rec["name"], uid=rec["uid"], namespace=rec["namespace"],
                                       attempt=0),
        # host network: no hostname (the node's), no DNS config (the node's resolv.conf)
        log_directory=pod_log_dir(rec["namespace"], rec["name"], rec["uid"]),
        labels=labels,
        annotations={"kubernetes.io/config.source": "api",
                     "kubernetes.io/config.seen": time.strftime("%Y-%m-%dT%H:%M:%S.000000000Z",
                                                                time.gmtime())},
        linux=pb.LinuxPodSandboxConfig(
            cgroup_parent=pod_slice(rec["uid"], rec["qos"]),
            security_context=pb.LinuxSandboxSecurityContext(namespace_options=ns_opts)))


def container_config(rt, rec, c, attempt):
    uid, name = rec["uid"], c["name"]
    # the termination-message file the kubelet mounts at /dev/termination-log
    cdir = os.path.join(pod_dir(uid), "containers", name)
    os.makedirs(cdir, exist_ok=True)
    term = os.path.join(cdir, secrets.token_hex(4))
    open(term, "a").close()
    mounts = [pb.Mount(container_path=path, host_path=empty_dir(uid, vol))
              for vol, path in rec["empty_dirs"]]
    mounts += [pb.Mount(container_path=path, host_path=host) for host, path in rec["host_dirs"]]
    mounts.append(pb.Mount(container_path="/dev/termination-log", host_path=term))
    ns_opts = pb.NamespaceOption(network=enum("NamespaceMode", "NODE"), pid=enum("NamespaceMode", "CONTAINER"),
                                 ipc=enum("NamespaceMode", "POD"))
    return pb.ContainerConfig(
        metadata=pb.ContainerMetadata(name=name, attempt=attempt),
        image=pb.ImageSpec(image=image_id(rt, c["image"])),
        command=["/bin/sh", "-c", c["script"]],
        working_dir="/",
        envs=[pb.KeyValue(key="PATH", value="/bin")],
        mounts=mounts,
        labels={LABEL_POD_NAME: rec["name"], LABEL_POD_NAMESPACE: rec["namespace"],
                LABEL_POD_UID: uid, LABEL_CONTAINER_NAME: name},
        annotations={"io.kubernetes.container.hash": "%08x" % zlib.crc32(c["script"].encode()),
                     "io.kubernetes.container.restartCount": str(attempt),
                     "io.kubernetes.container.terminationMessagePath": "/dev/termination-log",
                     "io.kubernetes.container.terminationMessagePolicy": "File",
                     "io.kubernetes.pod.terminationGracePeriod": str(rec["grace"])},
        log_path="%s/%d.log" % (name, attempt),
        linux=pb.LinuxContainerConfig(
            resources=pb.LinuxContainerResources(
                cpu_shares=cpu_shares(rec.get("cpu_request")),
                oom_score_adj=oom_score_adj(rec["qos"], rec.get("memory_request"))),
            security_context=pb.LinuxContainerSecurityContext(namespace_options=ns_opts)))


def run_pod(rt, rec):
    uid = rec["uid"]
    if os.path.exists(record_path(uid)):
        raise Failure("pod %s already exists" % uid)
    os.makedirs(STATE_DIR, exist_ok=True)
    write_atomic(record_path(uid), json.dumps(rec, indent=1))
    write_descriptor(rec, {})
    # the pod's cgroups (kubelet's QOS container manager and pod container manager)
    start_slice("kubepods.slice", "-.slice")
    if rec["qos"] != "guaranteed":
        start_slice(qos_slice(rec["qos"]), "kubepods.slice")
    start_slice(pod_slice(uid, rec["qos"]), qos_slice(rec["qos"]),
                cpu_weight=shares_to_weight(cpu_shares(rec.get("cpu_request"))))
    for vol, _ in rec["empty_dirs"]:
        os.makedirs(empty_dir(uid, vol), exist_ok=True)
    sconf = sandbox_config(rec)
    os.makedirs(sconf.log_directory, mode=0o755, exist_ok=True)
    sandbox = rt.rs("RunPodSandbox", pb.RunPodSandboxRequest(config=sconf), timeout=120).pod_sandbox_id
    ids = {}
    for c in rec["containers"]:
        os.makedirs(os.path.join(sconf.log_directory, c["name"]), mode=0o755, exist_ok=True)
        cid = rt.rs("CreateContainer", pb.CreateContainerRequest(
            pod_sandbox_id=sandbox, config=container_config(rt, rec, c, 0), sandbox_config=sconf),
            timeout=120).container_id
        rt.rs("StartContainer", pb.StartContainerRequest(container_id=cid), timeout=120)
        ids[c["name"]] = cid
    write_descriptor(rec, ids)
    emit({"uid": uid, "pod": "%s/%s" % (rec["namespace"], rec["name"]), "sandbox": sandbox,
          "containers": ids, "cgroup": pod_cgroup(uid, rec["qos"])})


def pod_cgroup(uid, qos):
    if qos == "guaranteed":
        return os.path.join(CGROUP_ROOT, "kubepods.slice", pod_slice(uid, qos))
    return os.path.join(CGROUP_ROOT, "kubepods.slice", qos_slice(qos), pod_slice(uid, qos))


# ---- the serving kubelet ------------------------------------------------------------------------------

class Kubelet:
    def __init__(self, rt, log, thresholds):
        self.rt = rt
        self.log_file = log
        self.thresholds = thresholds        # [(signal, bytes or None, percent or None)]
        self.terminated = {}                # uid -> reason
        self.start = now_mono()
        self.stopping = False

    def log(self, fmt, *args):
        line = "%.3f %s\n" % (now_mono(), fmt % args)
        self.log_file.write(line)
        self.log_file.flush()

    # -- PLEG + pod workers: terminate what must stop --
    def relist(self):
        pods = records()
        if not pods:
            return
        sandboxes = {s.id: s for s in self.rt.sandboxes()}
        containers = self.rt.containers()
        for uid, rec in pods.items():
            if uid in self.terminated:
                if rec["deleted"] and self.terminated[uid] == "completed":
                    self.deleted(rec)       # a finished pod deleted later (a Job's TTL, a user)
                continue
            if not rec.get("sandbox"):
                continue                    # run-pod is still creating it
            sb = sandboxes.get(rec["sandbox"])
            mine = [c for c in containers if c.labels.get(LABEL_POD_UID) == uid]
            reason = None
            if rec["deleted"]:
                reason = "deleted"
            elif sb is None or sb.state == enum("PodSandboxState", "SANDBOX_NOTREADY"):
                reason = "evicted"
            elif rec["restart"] == "Never" and mine and all(c.state == enum("ContainerState", "CONTAINER_EXITED") for c in mine):
                reason = "completed"
            if reason:
                self.terminate(rec, reason, [s for s in sandboxes.values()
                                             if s.metadata.uid == uid], mine)

    def terminate(self, rec, reason, sandboxes, containers):
        uid, who = rec["uid"], "%s/%s" % (rec["namespace"], rec["name"])
        self.log("pod %s (%s): terminating (%s)", who, uid, reason)
        for c in containers:
            if c.state in (enum("ContainerState", "CONTAINER_RUNNING"), enum("ContainerState", "CONTAINER_CREATED")):
                self.rt.rs("StopContainer", pb.StopContainerRequest(container_id=c.id, timeout=rec["grace"]),
                           timeout=rec["grace"] + 30)
                self.log("pod %s: StopContainer %s (%s)", who, c.metadata.name, c.id[:13])
        for s in sandboxes:
            self.rt.rs("StopPodSandbox", pb.StopPodSandboxRequest(pod_sandbox_id=s.id), timeout=60)
            self.log("pod %s: StopPodSandbox %s", who, s.id[:13])
        # SyncTerminatedPod: volumes torn down, then the pod cgroup destroyed
        for vol, _ in rec["empty_dirs"]:
            shutil.rmtree(empty_dir(uid, vol), ignore_errors=True)
            self.log("pod %s: emptyDir %s torn down", who, vol)
        stop_slice(pod_slice(uid, rec["qos"]))
        self.log("pod %s: pod cgroup %s removed", who, pod_slice(uid, rec["qos"]))
        self.terminated[uid] = reason
        if reason in ("deleted", "evicted"):
            self.deleted(rec)

    def deleted(self, rec):
        """The pod's API object is gone once the kubelet has terminated it (evictd-kube deletes an
        evicted pod): its descriptor and pod directory go, its content may be collected."""
        uid = rec["uid"]
        remove_descriptor(uid)
        shutil.rmtree(pod_dir(uid), ignore_errors=True)
        if self.terminated[uid] == "completed":
            self.terminated[uid] = "deleted"
        self.log("pod %s/%s: deleted from the API: descriptor and %s removed", rec["namespace"],
                 rec["name"], pod_dir(uid))

    def content_removable(self, uid, pods):
        """ShouldPodContentBeRemoved: evicted, or deleted and terminated, or unknown."""
        if uid not in pods:
            return True
        return self.terminated.get(uid) in ("deleted", "evicted")

    # -- container GC (kuberuntime_gc.go) --
    def gc(self, evict_non_deleted, why):
        pods = records()
        self.log("container GC (%s)", why)
        containers = self.rt.containers()
        units = {}
        for c in containers:
            if c.state == enum("ContainerState", "CONTAINER_RUNNING"):
                continue
            key = (c.labels.get(LABEL_POD_UID, ""), c.labels.get(LABEL_CONTAINER_NAME, c.metadata.name))
            units.setdefault(key, []).append(c)
        removed = set()
        for (uid, name), dead in sorted(units.items()):
            dead.sort(key=lambda c: c.created_at, reverse=True)
            keep = 0 if (self.content_removable(uid, pods) or
                         (evict_non_deleted and uid in self.terminated)) else MAX_PER_POD_CONTAINER
            for c in dead[keep:]:
                self.remove_container(c)
                removed.add(c.id)
        remaining = [c for c in containers if c.id not in removed]
        by_pod = {}
        for s in self.rt.sandboxes():
            by_pod.setdefault(s.metadata.uid, []).append(s)
        for uid, sbs in sorted(by_pod.items()):
            sbs.sort(key=lambda s: s.created_at, reverse=True)
            inactive = [s for s in sbs if s.state != enum("PodSandboxState", "SANDBOX_READY") and
                        not any(c.pod_sandbox_id == s.id for c in remaining)]
            if not self.content_removable(uid, pods):
                inactive = [s for s in inactive if s.id != sbs[0].id]
            for s in inactive:
                self.rt.rs("StopPodSandbox", pb.StopPodSandboxRequest(pod_sandbox_id=s.id), timeout=60)
                self.rt.rs("RemovePodSandbox", pb.RemovePodSandboxRequest(pod_sandbox_id=s.id), timeout=60)
                self.log("gc: RemovePodSandbox %s (pod %s/%s)", s.id[:13], s.metadata.namespace,
                         s.metadata.name)
        for d in sorted(glob.glob(os.path.join(POD_LOGS_DIR, "*_*_*"))):
            uid = os.path.basename(d).rsplit("_", 1)[1]
            if self.content_removable(uid, pods):
                size = du(d)
                shutil.rmtree(d, ignore_errors=True)
                self.log("gc: pod log directory %s removed (%d bytes)", d, size)
        # pods whose runtime objects are all gone are forgotten (the API no longer lists them)
        left = {c.labels.get(LABEL_POD_UID) for c in self.rt.containers()} | \
               {s.metadata.uid for s in self.rt.sandboxes()}
        for uid, rec in pods.items():
            if self.terminated.get(uid) in ("deleted", "evicted") and uid not in left:
                forget(uid)
                self.log("pod %s/%s (%s): forgotten", rec["namespace"], rec["name"], uid)

    def remove_container(self, c):
        """kuberuntime_container.go removeContainer: the log first, then the runtime's record."""
        st = self.rt.container_status(c.id)
        freed = 0
        if st.log_path:
            for p in [st.log_path] + glob.glob(glob.escape(st.log_path) + ".*"):
                try:
                    freed += os.lstat(p).st_blocks * 512
                    os.unlink(p)
                except FileNotFoundError:
                    pass
        self.rt.rs("RemoveContainer", pb.RemoveContainerRequest(container_id=c.id), timeout=60)
        self.log("gc: RemoveContainer %s %s (pod %s/%s, %s), log %s (%d bytes)", c.id[:13],
                 c.metadata.name, c.labels.get(LABEL_POD_NAMESPACE, "?"),
                 c.labels.get(LABEL_POD_NAME, "?"), enum_name("ContainerState", c.state),
                 st.log_path or "-", freed)

    # -- eviction manager (its node-level reclaim's container part only) --
    def eviction_check(self):
        met = []
        for signal_, path in (("nodefs.available", KUBELET_ROOT), ("imagefs.available", "/var/lib/containerd")):
            for sig, value, percent in self.thresholds:
                if sig != signal_:
                    continue
                st = os.statvfs(path)
                avail, cap = st.f_bavail * st.f_frsize, st.f_blocks * st.f_frsize
                limit = value if value is not None else cap * percent // 100
                if avail < limit:
                    met.append("%s %d < %d" % (sig, avail, limit))
        if met:
            self.log("eviction manager: threshold met (%s): node-level reclaim", ", ".join(met))
            self.gc(True, "eviction manager: DeleteAllUnusedContainers")
            self.log("eviction manager: the kubelet would now delete unused images and, if a "
                     "threshold is still met, evict a pod (not modelled)")

    def serve(self):
        next_gc = self.start + CONTAINER_GC_PERIOD
        next_evict = self.start + EVICTION_MONITORING_PERIOD
        self.log("kubelet stand-in serving (relist %.0fs, container GC every %.0fs, eviction "
                 "check every %.0fs)", RELIST_PERIOD, CONTAINER_GC_PERIOD, EVICTION_MONITORING_PERIOD)
        while not self.stopping:
            t = now_mono()
            try:
                self.relist()
                if t >= next_evict:
                    next_evict += EVICTION_MONITORING_PERIOD
                    self.eviction_check()
                if t >= next_gc:
                    next_gc += CONTAINER_GC_PERIOD
                    self.gc(False, "periodic")
            except Failure as e:
                self.log("error: %s", e)
            time.sleep(max(0.0, RELIST_PERIOD - (now_mono() - t)))
        self.log("kubelet stand-in stopped")


def du(path):
    total = 0
    for root, dirs, files in os.walk(path):
        for n in dirs + files:
            try:
                total += os.lstat(os.path.join(root, n)).st_blocks * 512
            except OSError:
                pass
    return total


# ---- commands -----------------------------------------------------------------------------------------

def cmd_version(rt, a):
    v = rt.rs("Version", pb.VersionRequest(version="v1"))
    emit({"runtime_name": v.runtime_name, "runtime_version": v.runtime_version,
          "runtime_api_version": v.runtime_api_version})


def cmd_run_pod(rt, a):
    ns, _, name = a.pod.partition("/")
    if not ns or not name:
        raise Failure("pod must be NAMESPACE/NAME: %r" % a.pod)
    containers = []
    for spec in a.container:
        cname, eq, script = spec.partition("=")
        if not eq or not cname:
            raise Failure("--container wants NAME=SCRIPT: %r" % spec)
        containers.append({"name": cname, "script": script, "image": a.image.get(cname, DEFAULT_IMAGE)})
    if not containers:
        raise Failure("a pod needs at least one --container")
    rec = {"uid": a.uid, "namespace": ns, "name": name, "qos": a.qos, "priority": a.priority,
           "restart": a.restart, "grace": a.grace, "memory_request": a.memory_request,
           "cpu_request": a.cpu_request, "storage_request": a.storage_request,
           "labels": dict(kv.split("=", 1) for kv in a.label),
           "empty_dirs": [v.split(":", 1) for v in a.empty_dir],
           "host_dirs": [v.split(":", 1) for v in a.host_dir],
           "containers": containers}
    run_pod(rt, rec)
    # the sandbox id, for the kubelet's relist
    sb = rt.sandboxes(**{LABEL_POD_UID: a.uid})
    rec["sandbox"] = sb[0].id if sb else ""
    write_atomic(record_path(a.uid), json.dumps(rec, indent=1))


def cmd_delete(rt, a):
    if not os.path.exists(record_path(a.uid)):
        raise Failure("no pod %s" % a.uid)
    open(record_path(a.uid, "deleted"), "w").close()


def container_line(rt, c):
    out = {"id": c.id, "pod_uid": c.labels.get(LABEL_POD_UID, ""), "name": c.metadata.name,
           "attempt": c.metadata.attempt, "state": enum_name("ContainerState", c.state),
           "image_ref": c.image_ref, "sandbox": c.pod_sandbox_id}
    try:
        st = rt.container_status(c.id)
        out.update(log_path=st.log_path, exit_code=st.exit_code)
    except Failure:
        pass
    return out


def cmd_ls(rt, a):
    for s in rt.sandboxes():
        emit({"kind": "sandbox", "id": s.id, "pod_uid": s.metadata.uid,
              "pod": "%s/%s" % (s.metadata.namespace, s.metadata.name),
              "state": enum_name("PodSandboxState", s.state), "labels": dict(s.labels)})
    for c in rt.containers():
        emit(dict(container_line(rt, c), kind="container"))


def stats(rt, uid):
    f = pb.ContainerStatsFilter(label_selector={LABEL_POD_UID: uid})
    out = {}
    for s in rt.rs("ListContainerStats", pb.ListContainerStatsRequest(filter=f)).stats:
        wl = s.writable_layer
        out[s.attributes.metadata.name] = {
            "id": s.attributes.id, "used_bytes": wl.used_bytes.value if wl.HasField("used_bytes") else None,
            "inodes_used": wl.inodes_used.value if wl.HasField("inodes_used") else None,
            "mountpoint": wl.fs_id.mountpoint}
    return out


def cmd_stats(rt, a):
    for name, s in sorted(stats(rt, a.uid).items()):
        emit(dict(s, container=name))


def cmd_wait_stats(rt, a):
    """Until the runtime reports at least MIN bytes in the container's writable layer."""
    deadline = time.monotonic() + a.within
    while True:
        s = stats(rt, a.uid).get(a.container, {})
        if (s.get("used_bytes") or 0) >= a.min_bytes:
            emit(dict(s, container=a.container))
            return
        if time.monotonic() > deadline:
            raise Failure("writable layer of %s in pod %s: %s bytes after %ss, wanted %d" %
                          (a.container, a.uid, s.get("used_bytes"), a.within, a.min_bytes))
        time.sleep(0.2)


def cmd_wait(rt, a):
    """Until the pod's container is in STATE (running, exited)."""
    want = "CONTAINER_" + a.state.upper()
    deadline = time.monotonic() + a.within
    while True:
        cs = [c for c in rt.containers(**{LABEL_POD_UID: a.uid}) if c.metadata.name == a.container]
        if cs and enum_name("ContainerState", max(cs, key=lambda c: c.created_at).state) == want:
            emit(container_line(rt, max(cs, key=lambda c: c.created_at)))
            return
        if time.monotonic() > deadline:
            raise Failure("container %s of pod %s not %s after %ss" % (a.container, a.uid, a.state, a.within))
        time.sleep(0.2)


def cmd_images(rt, a):
    for im in rt.image_list():
        emit({"id": im.id, "tags": list(im.repo_tags), "size": im.size, "pinned": im.pinned})


def cmd_rmi(rt, a):
    for ref in a.ref:
        rt.images("RemoveImage", pb.RemoveImageRequest(image=pb.ImageSpec(image=ref)))


def cmd_imagefs_info(rt, a):
    r = rt.images("ImageFsInfo", pb.ImageFsInfoRequest())
    for kind, lst in (("image", r.image_filesystems), ("container", r.container_filesystems)):
        for fs in lst:
            emit({"kind": kind, "mountpoint": fs.fs_id.mountpoint, "used_bytes": fs.used_bytes.value,
                  "inodes_used": fs.inodes_used.value})


def cmd_serve(rt, a):
    thresholds = []
    for t in a.eviction_hard:
        sig, _, val = t.partition("=")
        if sig not in ("nodefs.available", "imagefs.available") or not val:
            raise Failure("--eviction-hard wants nodefs.available=Q or imagefs.available=Q: %r" % t)
        if val.endswith("%"):
            thresholds.append((sig, None, int(val[:-1])))
        else:
            thresholds.append((sig, quantity(val), None))
    with open(a.log, "a") as log:
        k = Kubelet(rt, log, thresholds)

        def stop(*_):
            k.stopping = True
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        k.serve()


def cmd_teardown(rt, a):
    """Every sandbox (with its containers) removed, the pods' traces gone: the end of a scenario."""
    for s in rt.sandboxes():
        rt.rs("StopPodSandbox", pb.StopPodSandboxRequest(pod_sandbox_id=s.id), timeout=60)
        rt.rs("RemovePodSandbox", pb.RemovePodSandboxRequest(pod_sandbox_id=s.id), timeout=60)
    for c in rt.containers():
        rt.rs("RemoveContainer", pb.RemoveContainerRequest(container_id=c.id), timeout=60)
    for uid, rec in records().items():
        stop_slice(pod_slice(uid, rec["qos"]))
        remove_descriptor(uid)
        shutil.rmtree(pod_dir(uid), ignore_errors=True)
        forget(uid)
    for d in glob.glob(os.path.join(POD_LOGS_DIR, "*")):
        shutil.rmtree(d, ignore_errors=True)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--endpoint", default=ENDPOINT, help="the runtime's gRPC endpoint (default %(default)s)")
    p.add_argument("--timeout", type=float, default=30, help="seconds per call (default %(default)s)")
    sub = p.add_subparsers(dest="cmd", required=True)

    sub.add_parser("version", help="the runtime's Version")
    r = sub.add_parser("run-pod", help="create and start a pod as the kubelet's SyncPod does")
    r.add_argument("pod", metavar="NAMESPACE/NAME")
    r.add_argument("uid")
    r.add_argument("--qos", choices=("guaranteed", "burstable", "besteffort"), default="burstable")
    r.add_argument("--priority", type=int, default=0)
    r.add_argument("--restart", choices=("Always", "OnFailure", "Never"), default="Always")
    r.add_argument("--grace", type=int, default=30, help="terminationGracePeriodSeconds")
    r.add_argument("--memory-request", type=quantity)
    r.add_argument("--cpu-request", type=milli_cpu)
    r.add_argument("--storage-request", type=quantity, help="ephemeral-storage request")
    r.add_argument("--label", action="append", default=[], metavar="KEY=VALUE")
    r.add_argument("--empty-dir", action="append", default=[], metavar="VOLUME:PATH",
                   help="an emptyDir volume mounted at PATH in every container")
    r.add_argument("--host-dir", action="append", default=[], metavar="HOSTPATH:PATH",
                   help="a hostPath volume mounted at PATH in every container")
    r.add_argument("--container", action="append", default=[], metavar="NAME=SCRIPT",
                   help="a container running /bin/sh -c SCRIPT (repeatable)")
    r.add_argument("--image", action="append", default=[], metavar="CONTAINER=REF",
                   type=lambda s: tuple(s.split("=", 1)), help="default " + DEFAULT_IMAGE)
    d = sub.add_parser("delete", help="the API deletes the pod: the serving kubelet tears it down")
    d.add_argument("uid")
    sub.add_parser("ls", help="sandboxes and containers as the runtime lists them")
    s = sub.add_parser("stats", help="writable-layer usage of a pod's containers (ListContainerStats)")
    s.add_argument("uid")
    w = sub.add_parser("wait-stats", help="until a container's writable layer reports MIN_BYTES")
    w.add_argument("uid")
    w.add_argument("container")
    w.add_argument("min_bytes", type=quantity)
    w.add_argument("--within", type=float, default=60, metavar="SECONDS")
    w = sub.add_parser("wait", help="until a pod's container is running or exited")
    w.add_argument("uid")
    w.add_argument("container")
    w.add_argument("state", choices=("running", "exited"))
    w.add_argument("--within", type=float, default=60, metavar="SECONDS")
    sub.add_parser("images", help="ListImages")
    i = sub.add_parser("rmi", help="RemoveImage")
    i.add_argument("ref", nargs="+")
    sub.add_parser("imagefs-info", help="ImageFsInfo")
    v = sub.add_parser("serve", help="the kubelet's relist, container GC and eviction check loops")
    v.add_argument("--log", required=True)
    v.add_argument("--eviction-hard", action="append", default=[], metavar="SIGNAL=QUANTITY",
                   help="the kubelet's own evictionHard (nodefs.available, imagefs.available)")
    sub.add_parser("teardown", help="remove every sandbox and container and the pods' traces")
    a = p.parse_args(argv)
    if a.cmd == "run-pod":
        a.image = dict(a.image)
    global pb, RUNTIME, IMAGE
    try:
        try:
            import criproto
        except RuntimeError as e:       # no descriptor set and no protoc
            raise Failure(str(e))
        pb, RUNTIME, IMAGE = criproto.pb, criproto.RUNTIME, criproto.IMAGE
        rt = Runtime(a.endpoint, a.timeout)
        globals()["cmd_" + a.cmd.replace("-", "_")](rt, a)
    except Failure as e:
        print("kubelet.py %s: %s" % (a.cmd, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
