"""CRI v1 message classes for the tests, built from cri/api.proto (no generated Python file).

The descriptor set comes from the build (protoc-c --descriptor_set_out writes
$BUILD/cri/api.desc when evictd is built), else from $CRI_DESCRIPTOR, else protoc-c or protoc is
run on cri/api.proto into a temporary file. Message classes are then made by python3-protobuf's
message factory: `from criproto import pb; pb.ListImagesResponse(images=[...])`.

gRPC paths: RUNTIME + "/ListContainers", IMAGE + "/RemoveImage" (package runtime.v1).
"""
import os
import subprocess
import tempfile

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
PROTO_DIR = os.path.join(REPO, "cri")
RUNTIME = "runtime.v1.RuntimeService"
IMAGE = "runtime.v1.ImageService"


def _descriptor_set():
    env = os.environ.get("CRI_DESCRIPTOR")
    if env:
        with open(env, "rb") as f:
            return f.read()
    for build in (os.environ.get("BUILD", "build"), "build", "build-san"):
        path = os.path.join(REPO, build, "cri", "api.desc")
        if os.path.exists(path):
            with open(path, "rb") as f:
                return f.read()
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "api.desc")
        errors = []
        for tool in ("protoc-c", "protoc"):
            try:
                subprocess.run([tool, "--descriptor_set_out=" + out, "-I" + PROTO_DIR, "api.proto"],
                               check=True, capture_output=True)
                with open(out, "rb") as f:
                    return f.read()
            except (OSError, subprocess.CalledProcessError) as e:
                errors.append("%s: %s" % (tool, e))
        raise RuntimeError("no CRI descriptor set: build evictd first, set CRI_DESCRIPTOR, or install "
                           "protobuf-c-compiler (%s)" % "; ".join(errors))


class _Messages:
    """runtime.v1 message classes as attributes: pb.Image, pb.ContainerState.Value(...)."""

    def __init__(self):
        fds = descriptor_pb2.FileDescriptorSet.FromString(_descriptor_set())
        self.pool = descriptor_pool.DescriptorPool()
        for f in fds.file:
            self.pool.Add(f)
        factory = message_factory.MessageFactory(self.pool)
        self._classes = {}
        for f in fds.file:
            for name in self.pool.FindFileByName(f.name).message_types_by_name.values():
                self._add(factory, name)
        self.file = self.pool.FindFileByName(fds.file[-1].name)

    def _add(self, factory, desc):
        self._classes[desc.full_name] = factory.GetPrototype(desc)
        for nested in desc.nested_types:
            self._add(factory, nested)

    def __getattr__(self, name):
        full = "runtime.v1." + name
        if full in self._classes:
            return self._classes[full]
        if name in self.file.enum_types_by_name:
            return self.file.enum_types_by_name[name]
        raise AttributeError(name)

    def enum(self, enum_name, value_name):
        return self.file.enum_types_by_name[enum_name].values_by_name[value_name].number

    def method_types(self, service, method):
        """(request class, response class) of /service/method, from the proto's service table."""
        m = self.pool.FindServiceByName(service).methods_by_name[method]
        return self._classes[m.input_type.full_name], self._classes[m.output_type.full_name]


pb = _Messages()


def frame(message_bytes, compressed=0):
    """One gRPC Length-Prefixed-Message."""
    return bytes([compressed]) + len(message_bytes).to_bytes(4, "big") + message_bytes
