#!/bin/bash
# tests/e2e/run.sh — `make e2e`: evictd end to end on a real node.
#
# Boots a Debian 12 VM (systemd as PID 1, pure cgroup v2), installs exactly what
# `make install DESTDIR=<stage> PREFIX=/usr` produces, runs tests/e2e/scenarios/NN-*.sh inside
# it (one boot for all of them), prints one line per scenario and "N passed, N failed, N skipped"
# (a scenario's skip not listed in EXPECTED_SKIPS below is a failure).
# Exit status: 0 all passed, or skipped because no VM can be booted here (one "SKIP" line says
# why); 1 a scenario failed or the VM produced no result.
#
# Environment:
#   B               build directory of the calling make (default: build)
#   E2E_CACHE       image cache (default: ${XDG_CACHE_HOME:-$HOME/.cache}/evictd-e2e)
#   E2E_ONLY        run only scenarios whose file name contains one of these words (space list)
#   E2E_DEBS        a directory with old/*.deb and new/*.deb: scenario 07 installs, upgrades and
#                   purges them under systemd (tests/pkg/run.sh); without it 07 is skipped
#   E2E_ACCEL       auto (default) | kvm | tcg
#   E2E_TIMEOUT     seconds for boot + all scenarios (default 2400)
#   E2E_MEM/E2E_CPUS  VM size (default 2048 MiB, 2 vCPUs)
#   E2E_VERBOSE=1   print every scenario's log, not only the failed ones
# Results stay in $B/e2e/: results, log, scenarios/*.log, scenarios/*.evictd.json, journal.txt,
# console.log, boot-time.txt, latency.txt, build.log, install.log.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
B=${B:-build}
case "$B" in /*) BDIR=$B ;; *) BDIR=$ROOT/$B ;; esac
CACHE=${E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/evictd-e2e}
TIMEOUT=${E2E_TIMEOUT:-2400}
MEM=${E2E_MEM:-2048}
CPUS=${E2E_CPUS:-2}
T0=$(date +%s.%N)

say() { echo "e2e: $*"; }
skip() { echo "e2e: SKIP: $* — no VM can be booted here, end-to-end tests not run"; exit 0; }
die() { echo "e2e: ERROR: $*" >&2; exit 1; }
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed (Debian: qemu-system-x86)"

# ---- image (cached; built when the recipe changed) --------------------------------------------
set +e
IMAGE=$("$HERE/image/mkimage.sh" "$CACHE")
rc=$?
set -e
case $rc in
0) ;;
77) skip "$IMAGE" ;;
*) die "building the VM image failed (exit $rc); see the messages above" ;;
esac
say "image $IMAGE (kernel $(cat "$IMAGE/kernel-version"))"

# ---- what goes into the VM: the installed tree, the scenarios, the helpers ----------------------
# The share lives outside the tree: the staged /etc/evictd/evictd.conf.d must never sit under
# $(B), where the Makefile includes every *.d it finds. Only the results are copied to $B/e2e.
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/evictd-e2e.XXXXXX")
SHARE=$WORK/share
QTMP=$WORK/qemu                    # qemu's snapshot overlay (snapshot=on writes to $TMPDIR)
# A second, blank disk (sparse): the dedicated image filesystem of scenario 13, formatted there.
# The guest finds it as /dev/disk/by-id/virtio-e2e-imagefs; the root disk stays /dev/vda.
DISK2=$WORK/imagefs.img
QPID=
cleanup() {
	[ -n "$QPID" ] && kill "$QPID" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
RESULTS=$BDIR/e2e
rm -rf "$RESULTS"
mkdir -p "$RESULTS" "$SHARE/out" "$SHARE/helpers" "$QTMP"
make_q=(make --no-print-directory -C "$ROOT" B="$B")
helpers=$(cd "$ROOT" && find tests/helpers -maxdepth 1 -name '*.c' 2>/dev/null | sort |
	sed "s#^tests/#$B/tests/#; s#\.c\$##")
# shellcheck disable=SC2086
if ! "${make_q[@]}" $helpers > "$RESULTS/build.log" 2>&1; then
	tail -n 30 "$RESULTS/build.log" >&2
	die "building the test helpers failed"
fi
for h in $helpers; do
	case "$h" in /*) install -m 755 "$h" "$SHARE/helpers/" ;; *) install -m 755 "$ROOT/$h" "$SHARE/helpers/" ;; esac
done
if ! "${make_q[@]}" install DESTDIR="$SHARE/stage" PREFIX=/usr > "$RESULTS/install.log" 2>&1; then
	tail -n 30 "$RESULTS/install.log" >&2
	die "make install DESTDIR=<stage> PREFIX=/usr failed"
fi
cp "$HERE/runner.sh" "$SHARE/entry"
cp -r "$HERE/scenarios" "$SHARE/scenarios"
# the stand-in API server for the Kubernetes scenario (a test double; tests/kube/README.md)
mkdir -p "$SHARE/kube"
cp "$ROOT"/tests/kube/*.py "$ROOT/tests/kube/mkcerts.sh" "$ROOT/tests/kube/lib-apiserver.sh" "$SHARE/kube/"
# deploy/preemptd.yaml: scenario 09 starts the stand-in with its ServiceAccount and RBAC
mkdir -p "$SHARE/deploy"
cp "$ROOT"/deploy/*.yaml "$SHARE/deploy/"
# the kubelet stand-in of the CRI scenarios (tests/e2e/cri/), with the CRI subset's message classes:
# tests/cri/criproto.py and the descriptor set `make all` wrote from cri/api.proto
mkdir -p "$SHARE/cri"
cp "$HERE/cri/kubelet.py" "$ROOT/tests/cri/criproto.py" "$BDIR/cri/api.desc" "$SHARE/cri/"
# Debian packages for scenario 07 (tests/pkg/run.sh sets E2E_DEBS to a directory with old/ and new/).
[ -n "${E2E_DEBS:-}" ] && cp -r "$E2E_DEBS" "$SHARE/debs"
printf 'E2E_ONLY=%q\n' "${E2E_ONLY:-}" > "$SHARE/env"

# ---- accelerator --------------------------------------------------------------------------------
# KVM only where it can run a stock kernel: a PVM /dev/kvm (module kvm_pvm, used by nested
# sandboxes) accepts the VM and then dies in early boot. Even "auto" KVM gets a boot probe below
# and falls back to TCG if the guest never comes up.
accel=${E2E_ACCEL:-auto}
if [ "$accel" = auto ]; then
	accel=tcg
	[ -r /dev/kvm ] && [ -w /dev/kvm ] && [ ! -d /sys/module/kvm_pvm ] && accel=kvm
	auto=1
else
	auto=0
fi

kernel=$IMAGE/vmlinux
[ -s "$kernel" ] || kernel=$IMAGE/vmlinuz
qesc() { printf '%s' "${1//,/,,}"; }

# boot ACCEL: runs the VM until it powers off or TIMEOUT; returns 3 when a KVM boot never reached
# userspace (the caller then tries TCG).
boot() {
	local mode=$1 a deadline
	case $mode in
	kvm) a=(-accel kvm -cpu "host,-arch-capabilities") ;;   # some nested hosts refuse MSR 0x10a
	tcg) a=(-accel "tcg,thread=multi" -cpu max) ;;
	*) die "E2E_ACCEL must be auto, kvm or tcg" ;;
	esac
	rm -rf "$SHARE/out"
	mkdir -p "$SHARE/out"
	rm -f "$DISK2"
	truncate -s 1G "$DISK2"
	deadline=$((TIMEOUT - 30))   # the guest stops the scenarios here, so results still come back
	say "booting (accel=$mode, $CPUS vCPUs, $MEM MiB, time limit ${TIMEOUT}s)"
	TMPDIR=$QTMP qemu-system-x86_64 -name evictd-e2e "${a[@]}" -machine q35 \
		-smp "$CPUS" -m "$MEM" -nodefaults -no-user-config -display none -no-reboot \
		-kernel "$kernel" -initrd "$IMAGE/initrd.img" \
		-append "root=/dev/vda rw console=ttyS0,115200 loglevel=4 panic=1 mitigations=off systemd.unified_cgroup_hierarchy=1 cgroup_no_v1=all net.ifnames=0 e2e.deadline=$deadline" \
		-drive "file=$(qesc "$IMAGE/root.img"),if=none,id=root,format=raw,snapshot=on,cache=unsafe" \
		-device virtio-blk-pci,drive=root \
		-drive "file=$(qesc "$DISK2"),if=none,id=imagefs,format=raw,cache=unsafe" \
		-device virtio-blk-pci,drive=imagefs,serial=e2e-imagefs \
		-fsdev "local,id=e2e,path=$(qesc "$SHARE"),security_model=none,multidevs=remap" \
		-device virtio-9p-pci,fsdev=e2e,mount_tag=e2e \
		-device virtio-rng-pci \
		-serial "file:$(qesc "$SHARE/out/console.log")" -monitor none </dev/null &
	QPID=$!
	local start=$SECONDS
	while kill -0 "$QPID" 2>/dev/null; do
		if [ $((SECONDS - start)) -ge "$TIMEOUT" ]; then
			say "time limit of ${TIMEOUT}s reached: stopping the VM"
			kill "$QPID" 2>/dev/null
			break
		fi
		# boot-time.txt is written once systemd finished booting: the guest is alive.
		if [ "$mode" = kvm ] && [ "$auto" = 1 ] && [ ! -e "$SHARE/out/boot-time.txt" ] &&
			[ $((SECONDS - start)) -ge 90 ]; then
			say "KVM guest did not come up within 90s: falling back to TCG"
			kill "$QPID" 2>/dev/null
			wait "$QPID" 2>/dev/null || true
			QPID=
			return 3
		fi
		sleep 1
	done
	wait "$QPID" 2>/dev/null || true
	QPID=
	if [ "$mode" = kvm ] && [ "$auto" = 1 ] && [ ! -e "$SHARE/out/boot-time.txt" ]; then
		say "KVM guest stopped before userspace: falling back to TCG"
		return 3
	fi
	return 0
}

# Images are shared between concurrent runs; a shared lock keeps a newer recipe's build from
# pruning this one while it is in use.
exec 8<"$CACHE/$(cat "$IMAGE/stamp").lock"
flock -s 8
TB=$(date +%s.%N)
boot "$accel" || { [ $? = 3 ] && boot tcg; }
cp -r "$SHARE/out/." "$RESULTS/"
OUT=$RESULTS
say "VM ran $(since "$TB")s; $(grep -m1 '^Startup finished' "$OUT/boot-time.txt" 2>/dev/null || echo 'boot time unknown')"

# ---- results --------------------------------------------------------------------------------
if [ ! -s "$OUT/rc" ]; then
	echo "e2e: the VM produced no result; last lines of $OUT/console.log:"
	tail -n 40 "$OUT/console.log" 2>/dev/null | sed 's/^/    /'
	[ -s "$OUT/log" ] && { echo "e2e: guest log:"; tail -n 40 "$OUT/log" | sed 's/^/    /'; }
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
# Scenarios allowed to skip in the VM, "NAME|reason" each. The image ships everything every
# scenario needs (image/packages), so none is: a skip there means a scenario lost its coverage and
# is counted as a failure. Add a line here only for what the VM cannot give, with the reason.
EXPECTED_SKIPS=(
)
# Scenario 07 installs the Debian packages it is handed; a plain `make e2e` hands it none (it costs
# two package builds), tests/pkg/run.sh with PKG_VM=1 does, and there a skip is a failure again.
[ -n "${E2E_DEBS:-}" ] ||
	EXPECTED_SKIPS+=("07-package|no packages handed in: tests/pkg/run.sh PKG_VM=1 builds them and runs it")
expected_skip() {	# expected_skip NAME: prints the reason when NAME may skip
	local e
	for e in "${EXPECTED_SKIPS[@]}"; do
		[ "${e%%|*}" = "$1" ] && { echo "${e#*|}"; return 0; }
	done
	return 1
}
pass=0 fail=0 skipped=0
while IFS= read -r line; do
	case "$line" in
	"ok "*) name=${line#ok * - } ;;
	"not ok "*) name=${line#not ok * - } ;;
	*) continue ;;
	esac
	name=${name%% #*}
	info=${line#* # }
	[ "$info" = "$line" ] && info=
	log=$OUT/scenarios/$name.log
	case "$line" in
	"ok "*"# SKIP"*)
		if why=$(expected_skip "$name"); then
			skipped=$((skipped + 1))
			printf 'SKIP  %-26s %s (expected: %s)\n' "$name" "${info#SKIP }" "$why"
		else
			fail=$((fail + 1))
			printf 'FAIL  %-26s unexpected skip: %s\n' "$name" "${info#SKIP }"
			[ -f "$log" ] && tail -n 15 "$log" | sed 's/^/      /'
		fi
		;;
	"ok "*)
		pass=$((pass + 1))
		printf 'PASS  %-26s %s\n' "$name" "$info"
		[ "${E2E_VERBOSE:-0}" = 1 ] && [ -f "$log" ] && sed 's/^/      /' "$log"
		;;
	*)
		fail=$((fail + 1))
		printf 'FAIL  %-26s %s\n' "$name" "$info"
		if [ -f "$log" ]; then
			if [ "${E2E_VERBOSE:-0}" = 1 ]; then
				sed 's/^/      /' "$log"
			elif grep -q '^not ok' "$log"; then   # the failed checks with the facts noted
				grep -E '^not ok|^# ' "$log" | head -n 25 | sed 's/^/      /'
			else                                   # died without saying why: its last words
				tail -n 15 "$log" | sed 's/^/      /'
			fi
		fi
		;;
	esac
done < "$OUT/results"
guest_rc=$(tr -dc '0-9' < "$OUT/rc")
if [ "$guest_rc" = 124 ]; then   # the time limit stopped the runner inside a scenario
	name=$(sed -n 's/^runner: --- //p' "$OUT/log" | tail -n1)
	printf 'FAIL  %-26s stopped by the time limit (E2E_TIMEOUT=%s)\n' "${name:-?}" "$TIMEOUT"
	[ -f "$OUT/scenarios/$name.log" ] && tail -n 15 "$OUT/scenarios/$name.log" | sed 's/^/      /'
	fail=$((fail + 1))
elif [ "$guest_rc" != 0 ] && [ "$fail" = 0 ]; then
	echo "e2e: the guest runner exited with $guest_rc; see $OUT/log"
	fail=$((fail + 1))
fi
[ -s "$OUT/latency.txt" ] && sed 's/^/e2e: /' "$OUT/latency.txt"
say "results and logs in $OUT (make e2e took $(since "$T0")s)"
echo "$pass passed, $fail failed, $skipped skipped"
[ "$fail" = 0 ]
