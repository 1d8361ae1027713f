#!/bin/bash
# tests/image/run.sh — preemptd's OCI image (scripts/build-image.sh, `make image`) as a cluster
# gets it and runs it. TAP, like the other shell tests; not part of `make check` (it builds the
# image from the Debian mirror: about a minute), run by CI after tests/pkg/run.sh.
#
#   build        scripts/build-image.sh into build/image (the preemptd .deb of HEAD: the one
#                tests/pkg/run.sh built when it is of HEAD, else build/deb's), then again into a
#                second directory: the same manifest digest (reproducible)
#   layout       the tag is the Makefile's VERSION; the config's user, entrypoint, cmd, port and
#                OCI labels; every blob's digest; the oci-archive holds the same layout; skopeo
#                (containers/image, as podman and CRI-O read images) reads the archive and copies it
#   contents     `umoci unpack`: the only program is /usr/sbin/preemptd (no shell, no package
#                manager), nothing setuid, everything root's; dpkg-query reads the package list;
#                the CA bundle is byte for byte what Debian's update-ca-certificates makes from the
#                same certificates
#   runc         the bundle under runc (Debian's), as deploy/preemptd.yaml runs the container:
#                uid 65532, read-only root, no capability, no new privileges:
#                - `preemptd -V` prints the Makefile's VERSION;
#                - the Deployment's pod: the ServiceAccount's token and CA mounted at
#                  /var/run/secrets/kubernetes.io/serviceaccount, KUBERNETES_SERVICE_HOST/PORT, the
#                  Deployment's args, against the stand-in API server (tests/kube/apiserver.py, a
#                  test double) enforcing deploy/preemptd.yaml's RBAC: /healthz /livez, /readyz
#                  once synced and leading, a pending pod bound, no request refused, the process
#                  uid 65532 with no capability, SIGTERM ends it with status 0;
#                - a kubeconfig mounted (--kubeconfig): /healthz and /readyz.
#                The container shares the host's network (the stand-in listens on 127.0.0.1).
# Exit status: 0 all passed, 1 a check failed, 77 this machine cannot run it (not root, a tool
# missing, no mirror; the reason is printed). Environment: IMAGE_REUSE=1 tests build/image as the
# last run left it (no build, no reproducibility check).
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
. tests/lib.sh

[ "$(id -u)" = 0 ] || skip_all "it needs root (mmdebstrap, umoci unpack, runc)"
for t in mmdebstrap umoci runc jq python3 openssl curl dpkg-query; do
	command -v "$t" > /dev/null || skip_all "missing tool: $t (scripts/ensure-deps.sh image check)"
done
python3 -c 'import yaml' 2> /dev/null || skip_all "python3-yaml missing (scripts/ensure-deps.sh check)"

VERSION=$(sed -n 's/^VERSION *:= *//p' Makefile)
HEAD=$(git rev-parse HEAD)
OUT=$ROOT/build/image
T=$(mktemp -d "${TMPDIR:-/tmp}/evictd-image.XXXXXX")
IDS=()
CTRD_PID=
cleanup() {
	local id
	for id in "${IDS[@]}"; do
		runc kill "$id" KILL 2> /dev/null
		runc delete --force "$id" 2> /dev/null
	done
	kube_stop
	if [ -n "$CTRD_PID" ]; then kill "$CTRD_PID" 2> /dev/null; wait "$CTRD_PID" 2> /dev/null; fi
	# containerd's snapshots: nothing of this test stays mounted
	findmnt -rn -o TARGET | grep "^$T/" | sort -r | xargs -r umount -l
	rm -rf "$T" "$OUT-again"
}
# shellcheck disable=SC2034  # read by kube_start (lib-apiserver.sh)
KUBE_NO_TRAP=1
. tests/kube/lib-apiserver.sh
trap cleanup EXIT
since() { echo $(($(date +%s) - $1)); }
T_ALL=$(date +%s)
wait_for() { local end=$((SECONDS + $1)); shift; until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.1; done; }

# ---- build, twice --------------------------------------------------------------------------------
if [ -n "${IMAGE_REUSE:-}" ] && [ -f "$OUT/preemptd-oci/index.json" ]; then
	echo "# IMAGE_REUSE: build/image as the last run left it"
else
	DEBS=build/deb   # made there by the first build unless they are of HEAD
	if [ "$(cat build/pkg/new/commit 2> /dev/null)" = "$HEAD" ] && [ -s "build/pkg/new/preemptd_${VERSION}_$(dpkg --print-architecture).deb" ]; then
		DEBS=build/pkg/new   # tests/pkg/run.sh's packages of this HEAD
	fi
	echo "# the preemptd package from $DEBS"
	t=$(date +%s)
	scripts/build-image.sh "$OUT" --debs "$DEBS" > "$T/build.log" 2>&1
	rc=$?
	[ $rc = 77 ] && skip_all "$(tail -n1 "$T/build.log")"
	[ $rc = 0 ] || { sed 's/^/# /' "$T/build.log" | tail -n 40; bail "scripts/build-image.sh builds the image"; }
	echo "# built in $(since "$t")s:"
	sed -n '/^build-image: built in/,/^$/p' "$T/build.log" | sed '1d; /^ *$/d; s/^ *//; s/^/#   /'
	t=$(date +%s)
	scripts/build-image.sh "$OUT-again" --debs "$DEBS" > "$T/build-again.log" 2>&1 ||
		{ sed 's/^/# /' "$T/build-again.log" | tail -n 20; bail "the second build"; }
	d1=$(jq -r '.manifests[0].digest' "$OUT/preemptd-oci/index.json")
	d2=$(jq -r '.manifests[0].digest' "$OUT-again/preemptd-oci/index.json")
	echo "# second build in $(since "$t")s: $d2"
	ok "reproducible: two builds of the same commit and packages give the same image ($d1)" test "$d1" = "$d2"
	ok "... and the same oci-archive" cmp -s "$OUT/preemptd-$VERSION.oci.tar" "$OUT-again/preemptd-$VERSION.oci.tar"
	rm -rf "$OUT-again"
fi

# ---- the layout, the config, the archive ---------------------------------------------------------
L=$OUT/preemptd-oci
ARCHIVE=$OUT/preemptd-$VERSION.oci.tar
blob() { echo "$L/blobs/${1%%:*}/${1#*:}"; }
manifest=$(blob "$(jq -r '.manifests[0].digest' "$L/index.json")")
config=$(blob "$(jq -r .config.digest "$manifest")")
jqc() { jq -e "$@" "$config" > /dev/null; }
created=$(date -u -d "@$(dpkg-parsechangelog -S Timestamp)" +%Y-%m-%dT%H:%M:%SZ)

jqe() { jq -e "$@" > /dev/null; }
ok "one image in the layout, tagged $VERSION (the Makefile's VERSION)" \
	jqe --arg v "$VERSION" '(.manifests | length) == 1 and .manifests[0].annotations["org.opencontainers.image.ref.name"] == $v' "$L/index.json"
ok "runs as 65532:65532, entrypoint /usr/sbin/preemptd, cmd --listen=0.0.0.0:10271, port 10271" \
	jqc '.config.User == "65532:65532" and .config.Entrypoint == ["/usr/sbin/preemptd"] and
		.config.Cmd == ["--listen=0.0.0.0:10271"] and (.config.ExposedPorts | keys) == ["10271/tcp"]'
ok "labels: version $VERSION, revision HEAD, licenses MIT, created = debian/changelog's date" \
	jqc --arg v "$VERSION" --arg h "$HEAD" --arg c "$created" '.config.Labels as $l |
		$l["org.opencontainers.image.version"] == $v and $l["org.opencontainers.image.revision"] == $h and
		$l["org.opencontainers.image.licenses"] == "MIT" and $l["org.opencontainers.image.created"] == $c and .created == $c'
ok "linux/$(dpkg --print-architecture), one gzip layer" \
	bash -c "jq -e --arg a '$(dpkg --print-architecture)' '.os == \"linux\" and .architecture == \$a' '$config' > /dev/null &&
		jq -e '(.layers | length) == 1 and .layers[0].mediaType == \"application/vnd.oci.image.layer.v1.tar+gzip\"' '$manifest' > /dev/null"
digests_hold() {
	local f bad=0
	for f in "$L"/blobs/sha256/*; do
		[ "$(sha256sum < "$f" | cut -d' ' -f1)" = "${f##*/}" ] || { echo "# $f: content does not match its name"; bad=1; }
	done
	return $bad
}
ok "every blob's content matches its digest" digests_hold
mkdir "$T/archive"
ok "the oci-archive holds exactly the layout" bash -c "tar -xf '$ARCHIVE' -C '$T/archive' && diff -r '$T/archive' '$L'"
# As the README loads it: skopeo into a containers-storage store (CRI-O's and podman's; a private
# one here), and containerd's `ctr images import` (a private containerd), each named
# localhost/preemptd:VERSION as deploy/preemptd.yaml names it.
IMAGE_NAME=$(python3 -c 'import sys, yaml
for d in yaml.safe_load_all(open("deploy/preemptd.yaml")):
    if d and d["kind"] == "Deployment":
        print(d["spec"]["template"]["spec"]["containers"][0]["image"])')
ok "deploy/preemptd.yaml names the image localhost/preemptd:$VERSION ($IMAGE_NAME)" test "$IMAGE_NAME" = "localhost/preemptd:$VERSION"
if command -v skopeo > /dev/null; then
	store="containers-storage:[vfs@$T/storage+$T/storage-run]$IMAGE_NAME"
	ok "skopeo reads the oci-archive (version label, linux)" bash -c "skopeo inspect 'oci-archive:$ARCHIVE:$VERSION' > '$T/skopeo.json' &&
		jq -e --arg v '$VERSION' '.Labels[\"org.opencontainers.image.version\"] == \$v and .Os == \"linux\"' '$T/skopeo.json' > /dev/null"
	ok "skopeo copies it into a containers-storage store as $IMAGE_NAME, the same manifest" bash -c "
		skopeo copy -q 'oci-archive:$ARCHIVE:$VERSION' '$store' &&
		[ \"\$(skopeo inspect '$store' | jq -r .Digest)\" = '$(jq -r '.manifests[0].digest' "$L/index.json")' ]"
else
	skip "skopeo reads the oci-archive" "skopeo is not installed (scripts/ensure-deps.sh image)"
fi
CTRD_PID=
if command -v containerd > /dev/null && command -v ctr > /dev/null; then
	mkdir -p "$T/containerd"
	printf 'version = 2\nroot = "%s/root"\nstate = "%s/state"\n[grpc]\n  address = "%s/sock"\n' \
		"$T/containerd" "$T/containerd" "$T/containerd" > "$T/containerd/config.toml"
	containerd --config "$T/containerd/config.toml" > "$T/containerd/log" 2>&1 &
	CTRD_PID=$!
	ctr_() { ctr --address "$T/containerd/sock" -n k8s.io "$@"; }
	wait_for 30 ctr_ version > /dev/null 2>&1 || { sed 's/^/# /' "$T/containerd/log" | tail -n 20; bail "a private containerd starts"; }
	ctr_imported() {
		ctr_ images import --base-name localhost/preemptd "$ARCHIVE" > "$T/containerd/import" 2>&1 &&
			ctr_ images ls -q | grep -qx "$IMAGE_NAME"
	}
	ok "ctr -n k8s.io images import --base-name localhost/preemptd: named $IMAGE_NAME" ctr_imported
	out=$(ctr_ run --rm "$IMAGE_NAME" "evictd-image-$$" /usr/sbin/preemptd -V 2>&1)
	echo "# ctr run: $out"
	ok "... and containerd runs it: preemptd -V prints preemptd $VERSION" test "${out%% (*}" = "preemptd $VERSION"
	kill "$CTRD_PID"; wait "$CTRD_PID" 2> /dev/null; CTRD_PID=
else
	skip "ctr images import" "containerd is not installed (scripts/ensure-deps.sh image)"
fi

# ---- the contents --------------------------------------------------------------------------------
B=$T/bundle
umoci unpack --image "$L:$VERSION" "$B" > "$T/unpack.log" 2>&1 || bail "umoci unpack"
RF=$B/rootfs
programs=$(cd "$RF" && find . -type f -perm /111 ! -name '*.so' ! -name '*.so.*' | sed 's|^\./|/|')
ok "the only program is /usr/sbin/preemptd (no shell, no package manager)${programs:+: $(echo $programs)}" \
	test "$programs" = /usr/sbin/preemptd
ok "... no sh, bash, dash, busybox, dpkg, apt, perl anywhere" \
	test -z "$(find "$RF" \( -name sh -o -name bash -o -name dash -o -name busybox -o -name 'dpkg*' -o -name 'apt*' -o -name perl \) ! -type d ! -path '*/var/lib/dpkg/*')"
ok "no setuid or setgid file" test -z "$(find "$RF" -type f -perm /6000)"
ok "everything owned by root (but /var/local: group staff, setgid, as base-files ships it on every Debian)" \
	test -z "$(find "$RF" \( ! -uid 0 -o ! -gid 0 \) ! -path "$RF/var/local")"
ok "preemptd's user: uid and gid 65532 in /etc/passwd and /etc/group" \
	bash -c "grep -qx 'preemptd:x:65532:65532:preemptd:/nonexistent:/usr/sbin/nologin' '$RF/etc/passwd' && grep -qx 'preemptd:x:65532:' '$RF/etc/group'"
pkgs=$(dpkg-query --admindir="$RF/var/lib/dpkg" -W -f '${Package} ${Version} ${db:Status-Abbrev}\n' 2> "$T/dpkg-query.err")
listed=$(sed -n 's/^Packages (\([0-9]*\)).*/\1/p' "$OUT/preemptd-image.txt")
ok "dpkg-query reads the image's package list: $(wc -l <<< "$pkgs") packages, as the listing says ($listed), preemptd $VERSION" \
	bash -c "[ '$(wc -l <<< "$pkgs")' = '$listed' ] && grep -qx 'preemptd $VERSION ii ' <<< '$pkgs' && [ ! -s '$T/dpkg-query.err' ]"
has_packages() {
	local p
	for p in "$@"; do grep -q "^$p " <<< "$pkgs" || { echo "# $p missing"; return 1; }; done
}
ok "... among them preemptd's runtime libraries, ca-certificates and base-files" has_packages \
	libc6 libcurl4 libyajl2 libfyaml0 libinih1 libmicrohttpd12 libsystemd0 ca-certificates base-files
ca_bundle_is_debians() {
	command -v update-ca-certificates > /dev/null || { echo "# update-ca-certificates missing (package ca-certificates)"; return 1; }
	mkdir -p "$T/ca/certs" "$T/ca/local" "$T/ca/hooks"
	update-ca-certificates --certsconf "$RF/etc/ca-certificates.conf" --certsdir "$RF/usr/share/ca-certificates" \
		--localcertsdir "$T/ca/local" --etccertsdir "$T/ca/certs" --hooksdir "$T/ca/hooks" > "$T/ca/log" 2>&1 ||
		{ sed 's/^/# /' "$T/ca/log"; return 1; }
	echo "# $(grep -c 'BEGIN CERTIFICATE' "$RF/etc/ssl/certs/ca-certificates.crt") certificates"
	cmp "$T/ca/certs/ca-certificates.crt" "$RF/etc/ssl/certs/ca-certificates.crt"
}
ok "/etc/ssl/certs/ca-certificates.crt is what update-ca-certificates makes of the same certificates" ca_bundle_is_debians

# ---- under runc ----------------------------------------------------------------------------------
# bundle NAME JQ [JQ-ARGS...]: a runtime bundle sharing the unpacked root (read-only), umoci's
# config.json with the Deployment's securityContext (no capability, no new privileges, read-only
# root, the image's user) and JQ applied.
bundle() {
	local name=$1 filter=$2; shift 2
	mkdir -p "$T/$name"
	jq --arg root "$RF" "$@" '.root = {path: $root, readonly: true} | .process.terminal = false |
		.process.capabilities = {} | .process.noNewPrivileges = true | '"$filter" "$B/config.json" > "$T/$name/config.json"
}
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
RUNC_ID=evictd-image-$$

bundle version '.process.args = ["/usr/sbin/preemptd", "-V"]'
IDS+=("$RUNC_ID-v")
out=$(timeout 60 runc run -b "$T/version" "$RUNC_ID-v" 2>&1)
echo "# runc run: $out"
ok "runc: preemptd -V in the image prints preemptd $VERSION" test "${out%% (*}" = "preemptd $VERSION"

kube_start --rbac deploy/preemptd.yaml --bookmark-interval 0.5 --grace-scale 0.02 --kubelet-start-delay 0.02 ||
	bail "the stand-in API server starts with deploy/preemptd.yaml"
kube_apply "$(kube_node_json node-1)" > /dev/null
kube_apply "$(kube_pending_pod_json default from-the-image 100 100m)" > /dev/null
SA=$KUBE_DIR/serviceaccount-kube-system-preemptd
[ -s "$SA/token" ] || bail "the stand-in made the ServiceAccount's token"
# the Deployment's args, its --listen moved to a free loopback port (the host's network)
PORT=$(free_port)
args=$(python3 -c 'import json, sys, yaml
for d in yaml.safe_load_all(open("deploy/preemptd.yaml")):
    if d and d["kind"] == "Deployment":
        print(json.dumps(d["spec"]["template"]["spec"]["containers"][0]["args"]))' |
	jq -c --arg l "--listen=127.0.0.1:$PORT" 'map(if startswith("--listen") then $l else . end)')
echo "# the Deployment's args here: $args"
bundle deployment '.process.args = ["/usr/sbin/preemptd"] + $args |
	.process.env += ["KUBERNETES_SERVICE_HOST=127.0.0.1", "KUBERNETES_SERVICE_PORT=" + $kport] |
	.linux.namespaces |= map(select(.type != "network")) |
	.mounts += [{destination: "/var/run/secrets/kubernetes.io/serviceaccount", type: "bind", source: $sa,
		options: ["rbind", "ro", "nosuid", "nodev", "noexec"]}]' \
	--argjson args "$args" --arg kport "$KUBE_PORT" --arg sa "$SA"
IDS+=("$RUNC_ID-d")
runc run -b "$T/deployment" "$RUNC_ID-d" > "$T/deployment.log" 2>&1 &
RUNPID=$!
code() { curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1$2"; }
answers() { [ "$(code "$1" "$2")" = 200 ]; }
ok "the Deployment's container under runc: /healthz answers 200" wait_for 30 answers "$PORT" /healthz
ok "... /livez 200" answers "$PORT" /livez
ok "... /readyz 200 once its caches are synced and it holds the Lease" wait_for 30 answers "$PORT" /readyz
bound() { [ "$(kube_ctl GET /objects/pods/default/from-the-image | jq -r '.spec.nodeName // ""')" = node-1 ]; }
bindings() { kube_requests | jq -s '[.[] | select(.subresource == "binding" and .status == 201)] | map(.identity)'; }
ok "... binds the pending pod" wait_for 30 bound
ok "... with one binding, as system:serviceaccount:kube-system:preemptd" \
	test "$(bindings | jq -c .)" = '["system:serviceaccount:kube-system:preemptd"]'

pid=$(runc state "$RUNC_ID-d" 2> /dev/null | jq -r .pid)
st=/proc/${pid:-0}/status
echo "# container process $pid: $(grep -E '^(Uid|Gid|CapEff|NoNewPrivs)' "$st" 2> /dev/null | tr -s '\t\n' '  ')"
ok "... its process: uid and gid 65532, no capability, no new privileges" bash -c "
	grep -q '^Uid:[[:space:]]*65532[[:space:]]65532[[:space:]]65532[[:space:]]65532\$' $st &&
	grep -q '^Gid:[[:space:]]*65532[[:space:]]' $st && grep -q '^CapEff:[[:space:]]*0*\$' $st && grep -q '^NoNewPrivs:[[:space:]]*1' $st"
no_denial() { kube_ctl GET /rbac | jq -e '.denied == []' > /dev/null; }
ok "... no request refused by deploy/preemptd.yaml's RBAC" no_denial
runc kill "$RUNC_ID-d" TERM
wait "$RUNPID"
rc=$?
ok "... SIGTERM ends it with status 0" test "$rc" = 0
runc delete "$RUNC_ID-d" 2> /dev/null
if [ "$rc" != 0 ]; then sed 's/^/# /' "$T/deployment.log" | tail -n 20; fi

PORT=$(free_port)
# preemptd reads a kubeconfig only when no one else can: the container user's (or root's), 0600
install -m 0600 -o 65532 -g 65532 "$KUBE_DIR/kubeconfig-sa-kube-system-preemptd" "$T/kubeconfig"
bundle kc '.process.args = ["/usr/sbin/preemptd", "--kubeconfig", "/etc/evictd/preemptd.kubeconfig",
		"--leader-elect=no", "--listen=127.0.0.1:" + $port] |
	.linux.namespaces |= map(select(.type != "network")) |
	.mounts += [{destination: "/etc/evictd/preemptd.kubeconfig", type: "bind", source: $kc, options: ["bind", "ro"]}]' \
	--arg port "$PORT" --arg kc "$T/kubeconfig"
IDS+=("$RUNC_ID-k")
runc run -b "$T/kc" "$RUNC_ID-k" > "$T/kc.log" 2>&1 &
RUNPID=$!
ok "with a kubeconfig mounted (--kubeconfig): /healthz answers 200" wait_for 30 answers "$PORT" /healthz
ok "... /readyz 200 (the API server listed over TLS with the kubeconfig's CA and token)" wait_for 30 answers "$PORT" /readyz
runc kill "$RUNC_ID-k" TERM
wait "$RUNPID"
ok "... SIGTERM ends it with status 0" test "$?" = 0
runc delete "$RUNC_ID-k" 2> /dev/null
echo "# tests/image/run.sh: $(since "$T_ALL")s in all"
done_testing
