#!/usr/bin/env python3
"""A stand-in CRI runtime for evictd's tests: NOT containerd, NOT CRI-O.

It speaks the real protocol (gRPC over HTTP/2 on a unix socket, python3-grpcio from Debian) with
real CRI v1 messages (cri/api.proto, the field numbers of kubernetes/cri-api) and answers from a
JSON state file that the test writes and may rewrite at any moment (re-read when its mtime
changes). It runs nothing: containers, images and their disk usage are what the file says.
Where evictd's effect must be real, an image may name a file ("file"): RemoveImage unlinks it, so
the space comes back on the filesystem the test measures.

State file (every key optional):
  {"version": {"runtime_name": "standin", "runtime_version": "1", "runtime_api_version": "v1"},
   "image_filesystems": [{"mountpoint": "/x", "used_bytes": 1, "inodes_used": 1}],
   "container_filesystems": [...],
   "images": [{"id": "sha256:..", "tags": ["localhost/a:1"], "size": 123, "pinned": false,
               "file": "/path/unlinked/on/remove"}],
   "sandboxes": [{"id": "s1", "uid": "...", "name": "web", "namespace": "default",
                  "state": "READY|NOTREADY", "created_at": NS, "labels": {...}}],
   "containers": [{"id": "c1", "sandbox": "s1", "name": "app", "image": "localhost/a:1",
                   "image_ref": "sha256:..", "image_id": "", "state": "RUNNING|EXITED|CREATED|UNKNOWN",
                   "created_at": NS, "finished_at": NS, "log_path": "/var/log/pods/...",
                   "writable_bytes": 1, "writable_inodes": 1, "mountpoint": "/x", "labels": {...}}],
   "faults": {"METHOD or *": {"delay": SECONDS, "status": GRPC-CODE, "message": "...",
                              "garbage": N, "oversize": BYTES, "huge": BYTES, "huge_nested": BYTES}}}
Image safety (node-level reclaim), kept apart from the other faults:
  "sandbox_image": "registry.k8s.io/pause:3.6"   Status with verbose answers containerd 1.6's way:
                                                  info["config"] = JSON {"sandboxImage": ...}
  "status_info": {"key": "value"}                 Status's info map as given (wins over sandbox_image)
  "remove_refused": {"ID or *": {"status": GRPC-CODE, "message": "..."}}
                                                  RemoveImage of that image (any: "*") fails, the image stays
Without either, Status answers with an empty info map.
Sandbox and container labels default to the kubelet's (io.kubernetes.pod.uid/name/namespace,
io.kubernetes.container.name) from the sandbox's fields.

Faults per method ("*" = every method): delay (seconds before answering), status (a non-OK
grpc-status with message), garbage (N bytes that are not a valid protobuf message as the answer),
oversize (an answer of that many bytes: a valid message padded with an unknown field), huge (an
answer of that many bytes of empty repeated items, 2 bytes each: ListContainers, ListImages,
ListContainerStats, ListPodSandbox), huge_nested (one item holding that many bytes of empty
nested repeated items: a container's or a stat's labels, an image's tags) — valid messages that
take a hundred times their size once unpacked.
A test makes a socket that refuses with --refuse (bound, never listening), and a runtime that
ignores grpc-timeout with --hang (connections accepted, read, never answered: a stuck handler;
grpcio itself would end a call at its grpc-timeout).

Every call is appended to --log as one JSON line {"method": ..., "request": {...}}.
"""
import argparse
import json
import os
import signal
import socket
import sys
import threading
import time
from concurrent import futures

import grpc
from google.protobuf import json_format

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from criproto import IMAGE, RUNTIME, pb  # noqa: E402

SANDBOX_STATES = {"READY": 0, "NOTREADY": 1}
CONTAINER_STATES = {"CREATED": 0, "RUNNING": 1, "EXITED": 2, "UNKNOWN": 3}


class State:
    def __init__(self, path):
        self.path = path
        self.mtime = None
        self.data = {}
        self.lock = threading.Lock()

    def get(self):
        with self.lock:
            try:
                st = os.stat(self.path)
                key = (st.st_mtime_ns, st.st_size, st.st_ino)
            except FileNotFoundError:
                key = None
            if key != self.mtime:
                self.mtime = key
                if key is None:
                    self.data = {}
                else:
                    with open(self.path) as f:
                        self.data = json.load(f)
            return self.data

    def remove_image(self, ref):
        """Drops the image whose id or tag is ref; returns it (or None). Rewrites the file."""
        with self.lock:
            images = self.data.get("images", [])
            for i, im in enumerate(images):
                if im.get("id") == ref or ref in im.get("tags", []):
                    del images[i]
                    tmp = self.path + ".tmp"
                    with open(tmp, "w") as f:
                        json.dump(self.data, f)
                    os.rename(tmp, self.path)
                    st = os.stat(self.path)
                    self.mtime = (st.st_mtime_ns, st.st_size, st.st_ino)
                    return im
            return None


def status_info(state):
    """Status's verbose info: as given, else containerd 1.6's config JSON naming the sandbox image."""
    if "status_info" in state:
        return state["status_info"]
    if "sandbox_image" in state:
        return {"config": json.dumps({"containerd": {"snapshotter": "overlayfs"},
                                      "sandboxImage": state["sandbox_image"]})}
    return {}


def removal_refused(state, ref):
    """The refusal configured for an image (by id or tag, or "*"), or None."""
    refused = state.get("remove_refused", {})
    if ref in refused:
        return refused[ref]
    for im in state.get("images", []):
        if ref in im.get("tags", []) and im.get("id") in refused:
            return refused[im["id"]]
    return refused.get("*")


def sandbox_of(state, sid):
    for s in state.get("sandboxes", []):
        if s.get("id") == sid:
            return s
    return None


def sandbox_labels(s):
    if "labels" in s:
        return s["labels"]
    return {"io.kubernetes.pod.uid": s.get("uid", ""), "io.kubernetes.pod.name": s.get("name", ""),
            "io.kubernetes.pod.namespace": s.get("namespace", "")}


def container_labels(state, c):
    if "labels" in c:
        return c["labels"]
    s = sandbox_of(state, c.get("sandbox")) or {}
    labels = {k: v for k, v in sandbox_labels(s).items() if k.startswith("io.kubernetes.pod.")}
    labels["io.kubernetes.container.name"] = c.get("name", "")
    return labels


def selected(labels, selector):
    return all(labels.get(k) == v for k, v in selector.items())


def fs_usage(d):
    u = pb.FilesystemUsage(timestamp=time.time_ns(), fs_id=pb.FilesystemIdentifier(mountpoint=d.get("mountpoint", "")))
    if "used_bytes" in d:
        u.used_bytes.value = d["used_bytes"]
    if "inodes_used" in d:
        u.inodes_used.value = d["inodes_used"]
    return u


class Standin:
    def __init__(self, state, log):
        self.state = state
        self.log = log
        self.log_lock = threading.Lock()

    # --- the methods --------------------------------------------------------------------
    def Version(self, st, req):
        v = st.get("version", {})
        return pb.VersionResponse(version="0.1.0", runtime_name=v.get("runtime_name", "standin"),
                                  runtime_version=v.get("runtime_version", "0"),
                                  runtime_api_version=v.get("runtime_api_version", "v1"))

    def Status(self, st, req):
        out = pb.StatusResponse()
        for t in ("RuntimeReady", "NetworkReady"):
            out.status.conditions.add(type=t, status=True)
        if req.verbose:
            for k, v in status_info(st).items():
                out.info[k] = v
        return out

    def ImageFsInfo(self, st, req):
        return pb.ImageFsInfoResponse(image_filesystems=[fs_usage(d) for d in st.get("image_filesystems", [])],
                                      container_filesystems=[fs_usage(d) for d in st.get("container_filesystems", [])])

    def ListImages(self, st, req):
        out = pb.ListImagesResponse()
        for im in st.get("images", []):
            out.images.add(id=im["id"], repo_tags=im.get("tags", []), repo_digests=im.get("digests", []),
                           size=im.get("size", 0), pinned=im.get("pinned", False))
        return out

    def RemoveImage(self, st, req):
        refused = removal_refused(st, req.image.image)
        if refused:
            raise Abort(grpc.StatusCode(next(c for c in grpc.StatusCode if c.value[0] == refused.get("status", 9))),
                        refused.get("message", "stand-in refuses to remove %s" % req.image.image))
        im = self.state.remove_image(req.image.image)
        if im and im.get("file"):
            try:
                os.unlink(im["file"])
            except FileNotFoundError:
                pass
        return pb.RemoveImageResponse()

    def ListPodSandbox(self, st, req):
        out = pb.ListPodSandboxResponse()
        f = req.filter
        for s in st.get("sandboxes", []):
            state = SANDBOX_STATES[s.get("state", "READY")]
            labels = sandbox_labels(s)
            if (f.id and f.id != s["id"]) or (f.HasField("state") and f.state.state != state) or \
                    not selected(labels, f.label_selector):
                continue
            out.items.add(id=s["id"], metadata=pb.PodSandboxMetadata(name=s.get("name", ""), uid=s.get("uid", ""),
                                                                     namespace=s.get("namespace", "")),
                          state=state, created_at=s.get("created_at", 1), labels=labels)
        return out

    def _containers(self, st, f_id, f_state, f_sandbox, selector):
        for c in st.get("containers", []):
            state = CONTAINER_STATES[c.get("state", "RUNNING")]
            labels = container_labels(st, c)
            if (f_id and f_id != c["id"]) or (f_state is not None and f_state != state) or \
                    (f_sandbox and f_sandbox != c.get("sandbox")) or not selected(labels, selector):
                continue
            yield c, state, labels

    def ListContainers(self, st, req):
        out = pb.ListContainersResponse()
        f = req.filter
        for c, state, labels in self._containers(st, f.id, f.state.state if f.HasField("state") else None,
                                                 f.pod_sandbox_id, f.label_selector):
            out.containers.add(id=c["id"], pod_sandbox_id=c.get("sandbox", ""),
                               metadata=pb.ContainerMetadata(name=c.get("name", ""), attempt=c.get("attempt", 0)),
                               image=pb.ImageSpec(image=c.get("image", "")), image_ref=c.get("image_ref", ""),
                               image_id=c.get("image_id", ""), state=state, created_at=c.get("created_at", 1),
                               labels=labels)
        return out

    def ContainerStatus(self, st, req):
        for c, state, labels in self._containers(st, req.container_id, None, "", {}):
            if c["id"] != req.container_id:
                continue
            return pb.ContainerStatusResponse(status=pb.ContainerStatus(
                id=c["id"], metadata=pb.ContainerMetadata(name=c.get("name", ""), attempt=c.get("attempt", 0)),
                state=state, created_at=c.get("created_at", 1), finished_at=c.get("finished_at", 0),
                image=pb.ImageSpec(image=c.get("image", "")), image_ref=c.get("image_ref", ""), labels=labels,
                log_path=c.get("log_path", "")))
        raise Abort(grpc.StatusCode.NOT_FOUND, "an error occurred when try to find container %r: not found"
                    % req.container_id)

    def ListContainerStats(self, st, req):
        out = pb.ListContainerStatsResponse()
        f = req.filter
        for c, state, labels in self._containers(st, f.id, None, f.pod_sandbox_id, f.label_selector):
            s = out.stats.add(attributes=pb.ContainerAttributes(
                id=c["id"], metadata=pb.ContainerMetadata(name=c.get("name", ""), attempt=c.get("attempt", 0)),
                labels=labels))
            if "writable_bytes" in c or "writable_inodes" in c:
                s.writable_layer.CopyFrom(fs_usage({"mountpoint": c.get("mountpoint", ""),
                                                    "used_bytes": c.get("writable_bytes", 0),
                                                    "inodes_used": c.get("writable_inodes", 0)}))
        return out

    # --- the wire -----------------------------------------------------------------------
    def handler(self, service, method):
        req_class, _ = pb.method_types(service, method)
        impl = getattr(self, method)

        def call(request, context):
            st = self.state.get()
            with self.log_lock, open(self.log, "a") as f:
                f.write(json.dumps({"method": method, "time": time.time(),
                                    "request": json_format.MessageToDict(request)}) + "\n")
            fault = dict(st.get("faults", {}).get("*", {}))
            fault.update(st.get("faults", {}).get(method, {}))
            if fault.get("delay"):
                time.sleep(fault["delay"])
            if fault.get("status"):
                context.abort(grpc.StatusCode(next(c for c in grpc.StatusCode if c.value[0] == fault["status"])),
                              fault.get("message", "stand-in fault"))
            if fault.get("garbage"):
                # a field tag announcing a length far past the end: no protobuf parser accepts it
                return b"\x0a\xff\xff\xff\x0f" + b"\xee" * max(0, fault["garbage"] - 5)
            try:
                answer = impl(st, request).SerializeToString()
            except Abort as a:
                context.abort(a.code, a.text)
            if fault.get("huge"):
                answer = b"\x0a\x00" * (fault["huge"] // 2)
            elif fault.get("huge_nested"):
                answer = _nested(method, fault["huge_nested"])
            if fault.get("oversize"):
                pad = max(0, fault["oversize"] - len(answer) - 8)
                answer += b"\xfa\x3f" + _varint(pad) + b"\0" * pad  # unknown field 1023, skipped by parsers
            return answer

        return grpc.unary_unary_rpc_method_handler(call, request_deserializer=req_class.FromString)


class Abort(Exception):
    def __init__(self, code, text):
        super().__init__(text)
        self.code = code
        self.text = text


def _field(tag, payload):
    return bytes([tag]) + _varint(len(payload)) + payload


def _nested(method, size):
    """One item of the answer, its nested repeated field (tag) filled with empty entries."""
    inner = {"ListContainers": (b"\x0a\x01c", b"\x42\x00"),      # Container.id, labels (8)
             "ListContainerStats": (b"\x0a\x01c", b"\x1a\x00"),  # ContainerAttributes.id, labels (3)
             "ListImages": (b"\x0a\x01i", b"\x12\x00"),          # Image.id, repo_tags (2)
             "ListPodSandbox": (b"\x0a\x01s", b"\x2a\x00")}      # PodSandbox.id, labels (5)
    head, entry = inner[method]
    item = head + entry * max(0, (size - 16) // 2)
    if method == "ListContainerStats":
        item = _field(0x0a, item)  # ContainerStats.attributes (1)
    return _field(0x0a, item)


def hang(path):
    """Accepts every connection and reads it; never writes a byte back."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(64)
    conns = []

    def serve():
        while True:
            c, _ = s.accept()
            conns.append(c)
            threading.Thread(target=lambda: [None for _ in iter(lambda: c.recv(65536), b"")], daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    signal.sigwait({signal.SIGTERM, signal.SIGINT})


def _varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--socket", required=True)
    ap.add_argument("--state", required=True)
    ap.add_argument("--log", default=os.devnull)
    ap.add_argument("--refuse", action="store_true", help="bind the socket but never listen (ECONNREFUSED)")
    ap.add_argument("--hang", action="store_true", help="accept and read connections, never answer")
    a = ap.parse_args()
    if os.path.exists(a.socket):
        os.unlink(a.socket)
    if a.hang:
        hang(a.socket)
        return
    if a.refuse:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(a.socket)
        signal.sigwait({signal.SIGTERM, signal.SIGINT})
        return
    standin = Standin(State(a.state), a.log)
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=16),
                         options=[("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)])
    services = {RUNTIME: ["Version", "Status", "ListPodSandbox", "ListContainers", "ContainerStatus", "ListContainerStats"],
                IMAGE: ["ListImages", "RemoveImage", "ImageFsInfo"]}
    for service, methods in services.items():
        server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler(
            service, {m: standin.handler(service, m) for m in methods})])
    server.add_insecure_port("unix:" + a.socket)
    server.start()
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    server.stop(0).wait(5)
    # Not a normal interpreter exit: a call that arrives while the server stops makes grpc's
    # serving thread die on the shut executor ("cannot schedule new futures after shutdown"), and
    # the finalisation then waits for it forever (test-client hung 10 minutes on waitpid under
    # load). Every call's log line is already written and closed, so nothing is lost.
    os._exit(0)


if __name__ == "__main__":
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    main()
