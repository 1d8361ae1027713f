#!/bin/bash
# mkimage.sh CACHEROOT — build (or reuse) the Debian 12 image the end-to-end test boots.
#
# The image lives in CACHEROOT/<key>/, where <key> is a hash of this recipe (this script,
# packages, guest/*): editing any of them builds a new image, an unchanged recipe reuses the
# cached one in well under a second. On success the image directory is printed on stdout:
#   root.img (ext4, sparse)  vmlinux (PVH entry, when extractable)  vmlinuz  initrd.img
#   packages.txt  kernel-version  stamp
# Exit status: 0 ready; 77 the image cannot be built on this machine (not root, no Debian
# source in the apt configuration, mirror unreachable) — the reason is then printed on stdout;
# anything else is a real failure of the recipe.
#
# The root tree comes from mmdebstrap (root mode, minbase), the disk from `mke2fs -d` (no loop
# mounts). The package mirror is whatever this machine's apt configuration uses.
# Concurrent callers: CACHEROOT/<key>.lock, exclusive while building; run.sh holds it shared
# while a VM uses the image, so pruning old images never pulls one out from under a VM.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SUITE=bookworm
IMAGE_SIZE=3G   # sparse; the tree is ~700 MiB, the rest is room for the scenarios

log() { echo "mkimage: $*" >&2; }
die() { log "ERROR: $*"; exit 1; }
cannot() { echo "cannot build the VM image: $*"; exit 77; }

[ $# -eq 1 ] || { echo "usage: $0 CACHEROOT" >&2; exit 2; }
mkdir -p "$1"
CACHEROOT=$(cd "$1" && pwd)

mapfile -t PACKAGES < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$HERE/packages")

key=$( {
	cat "$HERE/mkimage.sh" "$HERE/packages"
	for f in "$HERE"/guest/*; do echo "== ${f##*/}"; cat "$f"; done
	echo "$SUITE $IMAGE_SIZE"
} | sha256sum | cut -c1-16)
OUT=$CACHEROOT/$key

is_current() {
	[ -s "$OUT/root.img" ] && [ -s "$OUT/initrd.img" ] && [ -s "$OUT/vmlinuz" ] &&
		[ "$(cat "$OUT/stamp" 2>/dev/null)" = "$key" ]
}

exec 9>"$CACHEROOT/$key.lock"
if flock -s -n 9 && is_current; then
	echo "$OUT"
	exit 0
fi
flock -u 9

[ "$(id -u)" = 0 ] || cannot "building the image needs root (mmdebstrap --mode=root, chroot)"
for t in mmdebstrap mke2fs apt-get sha256sum xz; do
	command -v "$t" >/dev/null || cannot "missing tool: $t"
done

flock -x 9
if is_current; then     # another caller built it while we waited
	echo "$OUT"
	exit 0
fi

# ---- sources and proxies: this machine's apt configuration ----------------------------------
# shellcheck source=../../../scripts/debian-mirror.sh
. "$HERE/../../../scripts/debian-mirror.sh"
sources=$(debian_sources "$SUITE")
[ -n "$sources" ] || cannot "no '$SUITE' Debian source in the local apt configuration"
debian_aptopts

tmp=$(mktemp -d "$CACHEROOT/.build-$key.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# A mirror that cannot be reached means "no VM on this machine", not a broken recipe.
debian_mirror_reachable "$sources" "$SUITE" "$tmp" || cannot "package mirror not reachable"

t0=$(date +%s)
echo "$sources" > "$tmp/sources.list"
log "building image $key from:"
sed 's/^/    /' "$tmp/sources.list" >&2
rootfs=$tmp/rootfs
# The initramfs configuration must be in place before linux-image-amd64's postinst builds it.
mmdebstrap --mode=root --variant=minbase --format=directory --quiet \
	--include="$(IFS=,; echo "${PACKAGES[*]}")" "${APTOPTS[@]}" \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--essential-hook="mkdir -p \"\$1/etc/initramfs-tools/hooks\" \"\$1/etc/initramfs-tools/conf.d\" &&
		install -m 755 '$HERE/guest/initramfs-hook' \"\$1/etc/initramfs-tools/hooks/evictd-e2e\" &&
		install -m 644 '$HERE/guest/initramfs.conf' \"\$1/etc/initramfs-tools/conf.d/evictd-e2e\"" \
	"$SUITE" "$rootfs" "$tmp/sources.list"

# ---- guest configuration -------------------------------------------------------------------
install -m 755 "$HERE/guest/evictd-e2e-guest" "$rootfs/usr/local/sbin/evictd-e2e-guest"
install -m 644 "$HERE/guest/evictd-e2e.service" "$rootfs/etc/systemd/system/evictd-e2e.service"
install -m 644 "$HERE/guest/modprobe.conf" "$rootfs/etc/modprobe.d/evictd-e2e.conf"
printf '9pnet_virtio\n9p\n' > "$rootfs/etc/modules-load.d/evictd-e2e.conf"
echo e2e-node > "$rootfs/etc/hostname"
printf '127.0.0.1\tlocalhost\n127.0.1.1\te2e-node\n' > "$rootfs/etc/hosts"
printf '/dev/vda / ext4 rw,errors=remount-ro 0 1\n' > "$rootfs/etc/fstab"
# Fixed machine id: no first-boot work, and the journal of every run has the same path.
echo "$key$key" | cut -c1-32 > "$rootfs/etc/machine-id"

mkdir -p "$rootfs/etc/systemd/system.conf.d" "$rootfs/etc/systemd/journald.conf.d"
# A node as the kubelet expects it: memory, cpu and pids accounting on everywhere.
cat > "$rootfs/etc/systemd/system.conf.d/50-evictd-e2e.conf" <<'EOF'
[Manager]
DefaultCPUAccounting=yes
DefaultMemoryAccounting=yes
DefaultTasksAccounting=yes
EOF
# On cgroup v2, CPU accounting alone leaves the cpu controller off (cpu.stat exists without it);
# an explicit weight on every unit turns it on down the whole tree, so pods get cpu.weight.
for t in service scope slice; do
	mkdir -p "$rootfs/etc/systemd/system/$t.d"
	printf '[%s]\nCPUWeight=100\n' "${t^}" > "$rootfs/etc/systemd/system/$t.d/50-evictd-e2e-cpu.conf"
done
# Journal in RAM and never rate limited: a dropped entry would be a false failure.
cat > "$rootfs/etc/systemd/journald.conf.d/50-evictd-e2e.conf" <<'EOF'
[Journal]
Storage=volatile
RateLimitIntervalSec=0
RateLimitBurst=0
EOF
# Each generator and unit below is work at every boot (seconds under TCG) with no use here.
mkdir -p "$rootfs/etc/systemd/system-generators"
for g in cryptsetup getty gpt-auto hibernate-resume integritysetup rc-local system-update \
		sysv veritysetup; do
	ln -sf /dev/null "$rootfs/etc/systemd/system-generators/systemd-$g-generator"
done
chroot "$rootfs" systemctl enable evictd-e2e.service >/dev/null 2>&1
# The container runtime of the CRI scenarios: configured for the kubelet (guest/containerd.toml),
# started by the scenarios that use it (the others, and boot, run without it), and its images made
# here, once per recipe (guest/mkcriimages).
install -m 644 "$HERE/guest/containerd.toml" "$rootfs/etc/containerd/config.toml"
chroot "$rootfs" systemctl disable containerd.service >/dev/null 2>&1
"$HERE/guest/mkcriimages" "$rootfs" /usr/local/share/evictd-e2e/cri-images >&2 ||
	die "building the container images failed"
awk -v r="$rootfs/" 'index($2, r) == 1 { bad = 1 } END { exit !bad }' /proc/mounts &&
	die "something is still mounted inside the image tree: $(grep -F " $rootfs/" /proc/mounts)"
chroot "$rootfs" systemctl mask \
	serial-getty@ttyS0.service getty@tty1.service \
	systemd-logind.service systemd-user-sessions.service \
	systemd-update-utmp.service systemd-update-utmp-runlevel.service \
	apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer \
	e2scrub_all.timer e2scrub_reap.service fstrim.timer \
	modprobe@drm.service modprobe@fuse.service modprobe@loop.service \
	modprobe@efi_pstore.service modprobe@dm_mod.service modprobe@configfs.service \
	sys-kernel-config.mount sys-kernel-debug.mount sys-kernel-tracing.mount \
	sys-fs-fuse-connections.mount dev-hugepages.mount \
	proc-sys-fs-binfmt_misc.automount systemd-binfmt.service systemd-pstore.service \
	>/dev/null 2>&1

# ---- kernel, initrd, disk ------------------------------------------------------------------
kver=$(ls "$rootfs/lib/modules" | sort -V | tail -n1)
[ -n "$kver" ] || die "no kernel in the root tree"
[ -s "$rootfs/boot/initrd.img-$kver" ] || die "no initramfs generated for $kver"
for m in 9p 9pnet_virtio virtio_blk ext4; do
	chroot "$rootfs" modinfo -k "$kver" -n "$m" >/dev/null 2>&1 || die "kernel module $m missing"
done
cp "$rootfs/boot/vmlinuz-$kver" "$tmp/vmlinuz"
cp "$rootfs/boot/initrd.img-$kver" "$tmp/initrd.img"
# The uncompressed ELF kernel has a PVH entry: qemu starts it directly, skipping the real-mode
# setup and the in-guest decompression (seconds under TCG). run.sh falls back to vmlinuz.
off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$tmp/vmlinuz" | head -n1 | cut -d: -f1 || true)
if [ -n "$off" ]; then
	tail -c "+$((off + 1))" "$tmp/vmlinuz" | xz -dc --single-stream > "$tmp/vmlinux" 2>/dev/null || true
fi
if [ "$(head -c4 "$tmp/vmlinux" 2>/dev/null | od -An -c | tr -d ' ')" != '177ELF' ]; then
	log "note: no vmlinux extracted; the VM will boot the compressed kernel"
	rm -f "$tmp/vmlinux"
fi
chroot "$rootfs" dpkg-query -W -f '${Package} ${Version}\n' > "$tmp/packages.txt"
echo "$kver" > "$tmp/kernel-version"

truncate -s "$IMAGE_SIZE" "$tmp/root.img"
mke2fs -q -F -t ext4 -L e2e-root -E root_owner=0:0 -d "$rootfs" "$tmp/root.img"
rm -rf "$rootfs"

rm -rf "$OUT"
mkdir -p "$OUT"
for f in root.img vmlinuz vmlinux initrd.img packages.txt kernel-version; do
	[ -e "$tmp/$f" ] && mv "$tmp/$f" "$OUT/$f"
done
echo "$key" > "$OUT/stamp"   # last: a half-built directory is never taken for current
log "image $key built in $(($(date +%s) - t0))s (kernel $kver)"

# Images of older recipes: removed unless a VM is using one right now.
for d in "$CACHEROOT"/*/; do
	d=${d%/}
	old=${d##*/}
	[ "$old" = "$key" ] && continue
	( flock -x -n 8 && rm -rf "$d" "$CACHEROOT/$old.lock" ) 8>"$CACHEROOT/$old.lock" 2>/dev/null || true
done
echo "$OUT"
