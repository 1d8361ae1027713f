# Helpers of the CRI scenarios (10-14), sourced after lib.sh: a real container runtime
# (containerd and runc from Debian, /etc/containerd/config.toml from image/guest/containerd.toml)
# started for the scenario and stopped after it, the images made with the VM image
# (image/guest/mkcriimages) imported with ctr, and the kubelet stand-in ../cri/kubelet.py that
# creates pods through the CRI as the kubelet does and, as `kubelet serve`, tears them down on the
# kubelet's schedule. A scenario calls cri_setup first; its EXIT trap must call cri_cleanup.
# shellcheck shell=bash

CRI_SRC=$(cd ../cri 2>/dev/null && pwd)
CRI_IMAGES=/usr/local/share/evictd-e2e/cri-images
CRI_SOCK=/run/containerd/containerd.sock
KUBELET_LOG=$STATE/kubelet.log
KUBELET_CONFIG=/var/lib/kubelet/config.yaml
# shellcheck disable=SC2034   # the scenarios' image
BUSYBOX=localhost/e2e/busybox:latest
# shellcheck disable=SC2034   # containerd's sandbox_image (image/guest/containerd.toml)
PAUSE=localhost/e2e/pause:latest
KUBELET_PID=
CRI_VERSION=        # what Version answered (cri_setup)

# Each kubelet.py call costs 3-5 s under emulation (python3, grpc, the message classes): waits
# and plain look-ups use containerd's own ctr (its k8s.io namespace is the CRI's) or the cgroups.
kubelet() { python3 "$CRI_SRC/kubelet.py" "$@"; }
runtime_up() { [ -S "$CRI_SOCK" ] && ctr version >/dev/null 2>&1; }
ctr_images() { ctr -n k8s.io images ls -q 2>/dev/null | grep -v '^sha256:'; }   # the tags

# cri_setup: containerd running and answering the CRI, the busybox (containers) and pause
# (sandboxes) images imported, nothing left of an earlier scenario. Skips when the image lacks the runtime.
cri_setup() {
	[ -n "$CRI_SRC" ] && [ -f "$CRI_SRC/kubelet.py" ] || skip_all "tests/e2e/cri not shipped to the guest"
	command -v containerd >/dev/null && command -v ctr >/dev/null && [ -f "$CRI_IMAGES/busybox.tar" ] &&
		[ -f "$CRI_IMAGES/pause.tar" ] ||
		skip_all "containerd, ctr and the local images are needed (image/packages, image/guest/mkcriimages)"
	systemctl start containerd.service || bail "containerd did not start"
	wait_until 60 runtime_up || bail "containerd does not answer on $CRI_SOCK"
	CRI_VERSION=$(kubelet version 2>&1) || bail "containerd does not answer the CRI on $CRI_SOCK: $CRI_VERSION"
	if [ -n "$(ctr -n k8s.io containers ls -q)" ]; then
		kubelet teardown || bail "cannot clear the runtime of earlier pods"
	fi
	cri_import busybox pause || bail "cannot import the busybox and pause images"
}

# cri_import NAME...: the image localhost/e2e/NAME:latest from CRI_IMAGES/NAME.tar, unless present.
cri_import() {
	local n
	for n in "$@"; do
		cri_has_image "localhost/e2e/$n:latest" && continue
		ctr -n k8s.io images import --base-name "localhost/e2e/$n" "$CRI_IMAGES/$n.tar" >/dev/null ||
			return 1
	done
}
cri_has_image() { ctr_images | grep -qxF -- "$1"; }
# jqt FILTER [ARGS]: like lib.sh's jqe on standard input, but empty input is a failure (jq 1.6
# -e exits 0 when it read nothing)
jqt() {
	local in
	in=$(cat)
	[ -n "$in" ] && jq -e "$@" >/dev/null 2>&1 <<< "$in"
}

# cri_serve [--eviction-hard SIGNAL=Q]...: the kubelet's loops in the background (KUBELET_PID).
cri_serve() {
	: > "$KUBELET_LOG"
	# python3 itself in the background (not the kubelet function: $! would be a subshell whose
	# death leaves python running)
	python3 "$CRI_SRC/kubelet.py" serve --log "$KUBELET_LOG" "$@" 2>> "$STATE/kubelet.stderr" &
	KUBELET_PID=$!
	wait_until 30 grep -q 'serving' "$KUBELET_LOG"
}
# kubelet_said ERE: a line of the serving kubelet's log matches; kubelet_when ERE: its monotonic
# seconds (first match)
kubelet_said() { grep -Eq -- "$1" "$KUBELET_LOG" 2>/dev/null; }
kubelet_when() { grep -Em1 -- "$1" "$KUBELET_LOG" 2>/dev/null | cut -d' ' -f1; }
kubelet_show() { sed 's/^/#   kubelet: /' "$KUBELET_LOG" 2>/dev/null | tail -n "${1:-30}"; }

# kubelet_config YAML-BODY: /var/lib/kubelet/config.yaml as kubeadm writes it (evictd reads its
# thresholds, cgroup driver and runtime endpoint there).
kubelet_config() {
	mkdir -p /var/lib/kubelet
	{
		echo "apiVersion: kubelet.config.k8s.io/v1beta1"
		echo "kind: KubeletConfiguration"
		echo "cgroupDriver: systemd"
		echo "containerRuntimeEndpoint: unix://$CRI_SOCK"
		cat
	} > "$KUBELET_CONFIG"
}

# cri_cleanup: the kubelet stopped, every pod and container removed, containerd stopped. From the
# scenario's EXIT trap.
cri_cleanup() {
	[ -n "$KUBELET_PID" ] && kill "$KUBELET_PID" 2>/dev/null && wait "$KUBELET_PID" 2>/dev/null
	if runtime_up; then
		kubelet teardown 2>/dev/null
	fi
	systemctl stop containerd.service 2>/dev/null
	rm -f "$KUBELET_CONFIG"
}

# fs_avail PATH / fs_size PATH: statvfs f_bavail * f_frsize and f_blocks * f_frsize, in bytes
# (what the kubelet and evictd call available and capacity).
fs_avail() { stat -f -c '%a %S' "$1" | awk '{ printf "%d\n", $1 * $2 }'; }
fs_size() { stat -f -c '%b %S' "$1" | awk '{ printf "%d\n", $1 * $2 }'; }
fs_above() { [ "$(fs_avail "$1")" -gt "$2" ]; }   # fs_above PATH BYTES (for wait_until)
# uuid N: a pod UID in the API's form (dashes; the kubelet escapes them to '_' in slice names)
pod_uid() { printf 'e2e%05d-0000-4000-8000-%012d\n' "$1" "$2"; }

# ctl_dir NAME: a hostPath directory shared by the test and a pod's containers (mounted at /ctl)
ctl_dir() { rm -rf "$STATE/ctl/$1" && mkdir -p "$STATE/ctl/$1" && echo "$STATE/ctl/$1"; }
# cri_pod NAMESPACE/NAME UID [kubelet.py run-pod options]: the pod made through the CRI; what
# run-pod printed (sandbox and container ids, cgroup) is kept in $STATE/pod-UID.json
cri_pod() { kubelet run-pod "$@" > "$STATE/pod-$2.json"; }
# writer_script DIR FIRST REST: a container that writes FIRST MiB into DIR at once (its root
# filesystem's writable layer, or a volume), says so (/ctl/wrote), waits for /ctl/go, writes REST
# MiB more, says so (/ctl/done) and sleeps. Two steps: a fill that crosses a threshold can then
# come after the runtime's statistics show the first part.
writer_script() {
	printf '%s' "dd if=/dev/zero of=$1/first bs=1M count=$2 conv=fsync 2>/dev/null; touch /ctl/wrote;" \
		" until [ -e /ctl/go ]; do sleep 0.1; done;" \
		" dd if=/dev/zero of=$1/rest bs=1M count=$3 conv=fsync 2>/dev/null; touch /ctl/done;" \
		" exec sleep 2147483647"
}
# ctr_running UID CONTAINER: the container cri_pod made has processes in its scope (what a kill
# ends). From the cgroup, not the CRI: each kubelet.py call costs seconds under emulation.
ctr_running() {
	local f=$STATE/pod-$1.json id cg
	id=$(jq -r --arg n "$2" '.containers[$n] // empty' "$f" 2>/dev/null)
	cg=$(jq -r '.cgroup // empty' "$f" 2>/dev/null)
	[ -n "$id" ] && [ -n "$cg" ] && grep -q . "$cg/cri-containerd-$id.scope/cgroup.procs" 2>/dev/null
}
# blob_images: the unused images of the VM image still present (tags)
blob_images() { ctr_images | grep '^localhost/e2e/blob' | sort; }
mib() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1048576 }'; }

# cri_dropin NAME < BODY: dropin NAME with BODY after an [agent] section every CRI scenario needs:
# containerd under software emulation (and a loaded host) was seen taking over 2 s (evictd's
# default runtime-request-timeout) for ListContainerStats; evictd would then treat the runtime as
# gone for 10 s, which is not what these scenarios are about.
cri_dropin() {
	{
		echo "[agent]"
		echo "runtime-request-timeout = 15s"
		cat
	} | dropin "$1"
}

# cri_node_config [IMAGEFS_HARD]: the kubelet's configuration of these scenarios: evictd takes
# imageMinimumGCAge from it (images must be known that long before they go; 2s, not 2m, to keep
# the scenarios short) and the kubelet's own hard thresholds, far below evictd's (imagefs.available
# IMAGEFS_HARD, default 100Mi). KUBELET_HARD gets them for cri_serve.
# shellcheck disable=SC2034   # the scenarios pass it to cri_serve
KUBELET_HARD=()
cri_node_config() {
	local imagefs=${1:-100Mi}
	kubelet_config <<EOF
imageMinimumGCAge: 2s
evictionHard:
  memory.available: 100Mi
  nodefs.available: 100Mi
  nodefs.inodesFree: 5%
  imagefs.available: $imagefs
  imagefs.inodesFree: 5%
EOF
	# shellcheck disable=SC2034   # the scenarios pass it to cri_serve
	KUBELET_HARD=(--eviction-hard nodefs.available=100Mi --eviction-hard "imagefs.available=$imagefs")
}
# cri_no_unused_images: the blob images removed through the CRI first (as an earlier image GC
# would have), so that node-level reclaim has no image to take
cri_no_unused_images() {
	local blobs
	mapfile -t blobs < <(blob_images)
	[ ${#blobs[@]} = 0 ] || kubelet rmi "${blobs[@]}"
	ok "no unused image left (the blob images removed beforehand)" test -z "$(blob_images)"
}
# cri_evictd NAME SIGNAL THRESHOLD WHY: evictd (re)started with a drop-in setting the hard
# threshold of SIGNAL (pressure-transition-period 10s), the journal marked first; bails unless it
# runs and found the runtime
cri_evictd() {
	cri_dropin "$1" <<EOF
# e2e: $4
[eviction-hard]
$2 = $3
[eviction]
pressure-transition-period = 10s
EOF
	j_mark
	ok "evictd (re)started with the drop-in" evictd_restart || bail "evictd is not running"
	ok "journal: evictd found the runtime" j_wait 30 "$(j_id "$MSGID_RUNTIME_STATUS")" ||
		bail "evictd did not find the runtime"
}
# cri_done: the checks every CRI scenario ends with, its journal and the kubelet's log, the count
cri_done() {
	ok "the kubelet's own eviction manager never had to act" not kubelet_said 'eviction manager: threshold met'
	ok "evictd still active (running)" evictd_running
	j_show 14
	kubelet_show 12
	done_testing
}
# cri_first_chosen SIGNAL NAME UID MIB: the first pod evictd chose (waited for) is NAME (UID), for
# SIGNAL, with at least MIB MiB of disk usage attributed to it (EVICTD_DISK_BYTES); CHOSEN is its
# journal entry
CHOSEN=
chosen_field() { jq -r --arg f "$1" '.[$f] // empty' <<< "$CHOSEN"; }
cri_first_chosen() {
	ok "journal: a pod was chosen for $1" j_wait 60 "$(j_id "$MSGID_POD_CHOSEN")"
	CHOSEN=$(j_select "$(j_id "$MSGID_POD_CHOSEN")" | head -n1)
	note "chosen: $(jq -r .MESSAGE <<< "$CHOSEN")"
	ok "the pod chosen first is $2" test "$(chosen_field EVICTD_POD_UID)" = "$3"
	ok "for $1" test "$(chosen_field EVICTD_SIGNAL)" = "$1"
	ok "by its disk usage (writable layer): EVICTD_DISK_BYTES $(chosen_field EVICTD_DISK_BYTES) ≥ $4 MiB" \
		test "$(chosen_field EVICTD_DISK_BYTES)" -ge $(($4 * MIB))
}
