#!/bin/bash
# build-image.sh [OUTDIR] [--debs DIR] — `make image`: preemptd's OCI image, from Debian packages
# only (DESIGN §8, issue 28).
#
# What it does, and why each part is there:
#   1. The preemptd .deb of the committed HEAD: DIR/preemptd_VERSION_ARCH.deb as `make deb` leaves
#      it (DIR default build/deb); built there first (scripts/build-deb.sh) unless DIR/commit says
#      it was built from HEAD.
#   2. mmdebstrap --variant=extract: apt resolves preemptd's Depends (dh_shlibdeps': libc6,
#      libcurl4, libyajl2, libfyaml0, libinih1, libmicrohttpd12, libsystemd0, and theirs) from
#      this machine's Debian sources plus a one-package local repository; the packages are
#      unpacked, never configured: no maintainer script runs, so no shell, dpkg, apt, perl or
#      debconf is needed, and none is in the image. Merged /usr, as bookworm installs it.
#      Two packages come without their Depends (PKGS_ALONE): ca-certificates (openssl and debconf
#      only run its postinst) and base-files (awk only runs its postinst); what those postinsts
#      produce that preemptd uses is made here instead (step 3).
#   3. What maintainer scripts would have left behind, made without running them:
#      /etc/ssl/certs/ca-certificates.crt (update-ca-certificates' bundle of every certificate
#      ca-certificates ships, as its postinst selects them by default: libcurl's default CA file,
#      for an API server whose kubeconfig names no CA), /etc/passwd and /etc/group (root, and the
#      user preemptd runs as: preemptd, uid/gid 65532), /etc/nsswitch.conf (files, then dns), and
#      dpkg's database (/var/lib/dpkg/status and info/*.list) describing exactly what is unpacked,
#      so that image scanners and `dpkg-query --admindir` see the packages and versions.
#      Removed: documentation but copyright files, manual pages, locales (debuerreotype's slim
#      list, what debian:bookworm-slim drops), apt's and mmdebstrap's working files, the host's
#      resolv.conf and hostname, /dev's nodes (the runtime makes /dev).
#   4. One layer, as a reproducible tar: names sorted, numeric owners, no atime/ctime, every
#      mtime clamped to SOURCE_DATE_EPOCH (debian/changelog's date, as dpkg-buildpackage uses),
#      then umoci: an OCI image layout OUTDIR/preemptd-oci tagged VERSION, config with user
#      65532:65532, entrypoint /usr/sbin/preemptd, cmd --listen=0.0.0.0:10271 (a container's
#      probes come from outside it), port 10271, the OCI labels (version, revision, licenses,
#      source when known: IMAGE_SOURCE, else the git remote's URL), created = SOURCE_DATE_EPOCH.
#      The same commit and the same Debian packages give the same image digest.
#   5. OUTDIR/preemptd-VERSION.oci.tar (an oci-archive: podman load, skopeo, ctr import) and
#      OUTDIR/preemptd-image.txt: the generated listing — sizes, packages with versions and bytes,
#      every file.
# Needs root (mmdebstrap --mode=root), mmdebstrap, umoci, dpkg-dev and the Debian mirror
# (scripts/ensure-deps.sh image). Exit status: 0 built; 1 failed; 77 this machine cannot build it
# (the reason is printed).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/.." && pwd)
SUITE=bookworm
PKGS_ALONE="base-files ca-certificates"
IMAGE_UID=65532
PORT=10271

# ---- the extract hook (mmdebstrap runs it on this machine, $1 = the new root tree) --------------
# The packages of PKGS_ALONE, from the same sources and the same apt state, unpacked as mmdebstrap
# unpacked the others (merged /usr kept: tar --keep-directory-symlink).
if [ "${1:-}" = --extract-hook ]; then
	r=$2
	cd "$r/var/cache/apt/archives"
	# shellcheck disable=SC2086
	APT_CONFIG=$MMDEBSTRAP_APT_CONFIG apt-get download -q -o APT::Sandbox::User=root $PKGS_ALONE
	for p in $PKGS_ALONE; do
		dpkg-deb --fsys-tarfile "$p"_*.deb | tar -C "$r" --keep-directory-symlink -xf -
	done
	exit 0
fi

say() { echo "build-image: $*"; }
cannot() { echo "build-image: cannot build the image here: $*"; exit 77; }
usage() { echo "usage: $0 [OUTDIR] [--debs DIR] [--compare-slim]" >&2; exit 2; }
OUT=$ROOT/build/image
DEBS=$ROOT/build/deb
COMPARE=no
while [ $# -gt 0 ]; do
	case $1 in
	--debs) [ $# -ge 2 ] || usage; DEBS=$2; shift 2 ;;
	--compare-slim) COMPARE=yes; shift ;;
	-*) usage ;;
	*) OUT=$1; shift ;;
	esac
done

[ "$(id -u)" = 0 ] || cannot "it needs root (mmdebstrap --mode=root keeps the packages' owners)"
for t in mmdebstrap umoci dpkg-scanpackages dpkg-deb tar git; do
	command -v "$t" > /dev/null || cannot "missing tool: $t (scripts/ensure-deps.sh image)"
done
# shellcheck source=debian-mirror.sh
. "$HERE/debian-mirror.sh"
sources=$(debian_sources "$SUITE")
[ -n "$sources" ] || cannot "no '$SUITE' Debian source in the local apt configuration"

VERSION=$(sed -n 's/^VERSION *:= *//p' "$ROOT/Makefile")
ARCH=$(dpkg --print-architecture)
HEAD=$(git -C "$ROOT" rev-parse HEAD)
t_all=$(date +%s)

# ---- 1. the package ----------------------------------------------------------------------------
mkdir -p "$DEBS"
DEBS=$(cd "$DEBS" && pwd)
deb=$DEBS/preemptd_${VERSION}_$ARCH.deb
if [ ! -s "$deb" ] || [ "$(cat "$DEBS/commit" 2> /dev/null)" != "$HEAD" ]; then
	say "no preemptd $VERSION package of HEAD in $DEBS: building it (make deb)"
	"$HERE/build-deb.sh" "$DEBS" || exit 1
fi
[ -s "$deb" ] || { say "FAIL: $deb not built"; exit 1; }
changelog=$DEBS/src/debian/changelog
[ -f "$changelog" ] || changelog=$ROOT/debian/changelog
SOURCE_DATE_EPOCH=$(dpkg-parsechangelog -l "$changelog" -S Timestamp)
export SOURCE_DATE_EPOCH
CREATED=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)

rm -rf "$OUT"
mkdir -p "$OUT/work/repo"
OUT=$(cd "$OUT" && pwd)
W=$OUT/work
R=$W/rootfs
trap 'rm -rf "$W"' EXIT
cp "$deb" "$W/repo/"
(cd "$W/repo" && dpkg-scanpackages . > Packages 2> /dev/null)
{ echo "$sources"; echo "deb [trusted=yes] copy://$W/repo ./"; } > "$W/sources.list"

# ---- 2. the packages, unpacked -----------------------------------------------------------------
debian_mirror_reachable "$sources" "$SUITE" "$W" || cannot "package mirror not reachable"
debian_aptopts
# Merged /usr as bookworm's debootstrap lays it out (the top-level directories are links into /usr).
MERGED_USR='for d in bin sbin lib; do mkdir -p "$1/usr/$d"; ln -s "usr/$d" "$1/$d"; done'
case $ARCH in amd64 | ppc64el) MERGED_USR="$MERGED_USR; mkdir -p \"\$1/usr/lib64\"; ln -s usr/lib64 \"\$1/lib64\"" ;; esac
t=$(date +%s)
PKGS_ALONE=$PKGS_ALONE mmdebstrap --mode=root --variant=extract --quiet --include=preemptd \
	--setup-hook="$MERGED_USR" --skip=cleanup/apt/cache \
	--extract-hook="\"$HERE/build-image.sh\" --extract-hook \"\$1\"" \
	"${APTOPTS[@]}" "$SUITE" "$R" "$W/sources.list"
say "packages unpacked in $(($(date +%s) - t))s"

# ---- 3. what maintainer scripts would have made; what a container does not need ----------------
archives=$R/var/cache/apt/archives
mkdir -p "$W/debs"
mv "$archives"/*.deb "$W/debs/"
rm -rf "$R/etc/apt" "$R/etc/dpkg" "$R/var/lib/apt" "$R/var/cache/apt" "$R/var/log/apt" \
	"$R/etc/hostname" "$R/etc/resolv.conf" "$R/etc/fstab" "$R/var/lib/dpkg"
find "$R/dev" -mindepth 1 -delete
# debuerreotype's slimify list (debian:*-slim): documentation but copyright files, manual and info
# pages, translations but locale.alias, lintian overrides, groff's and linda's files.
find "$R/usr/share/doc" -mindepth 1 ! -type d ! -name copyright -delete
find "$R/usr/share/doc" -mindepth 1 -type d -empty -delete
for d in man info groff linda lintian/overrides; do rm -rf "${R:?}/usr/share/$d"; done
find "$R/usr/share/locale" -mindepth 1 ! -name locale.alias -delete 2> /dev/null || true
find "$R/usr/share/lintian" -depth -type d -empty -delete 2> /dev/null || true
# glibc's iconv modules for legacy character sets (8 MB): preemptd and its libraries convert only
# between ASCII and UTF-8, which glibc has built in.
rm -rf "$R/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/gconv"
# Scripts whose interpreter is not in the image (update-ca-certificates, motd and clean-up scripts
# for /bin/sh) could never run here.
find "$R" -type f -perm /111 -print0 | while IFS= read -r -d '' f; do
	interp=$(head -c 128 "$f" | sed -n '1s/^#![[:space:]]*\([^[:space:]]*\).*/\1/p')
	if [ -n "$interp" ] && [ ! -e "$R$interp" ]; then rm -f "$f"; fi
done
find "$R/etc" -mindepth 1 -type d -empty -delete
# base-files' postinst: /var/run is a link to /run.
rm -rf "$R/var/run"
ln -s /run "$R/var/run"

printf 'root:x:0:0:root:/root:/usr/sbin/nologin\npreemptd:x:%s:%s:preemptd:/nonexistent:/usr/sbin/nologin\n' \
	"$IMAGE_UID" "$IMAGE_UID" > "$R/etc/passwd"
printf 'root:x:0:\npreemptd:x:%s:\n' "$IMAGE_UID" > "$R/etc/group"
printf 'passwd: files\ngroup: files\nshadow: files\nhosts: files dns\nnetworks: files\n' > "$R/etc/nsswitch.conf"
chmod 0644 "$R/etc/passwd" "$R/etc/group" "$R/etc/nsswitch.conf"

# ca-certificates' postinst: /etc/ca-certificates.conf names every certificate the package ships
# (debconf's default), update-ca-certificates concatenates them in that order, each ending in a
# newline (its `sed -e '$a\'`).
(cd "$R/usr/share/ca-certificates" && find . -type f -name '*.crt' -printf '%P\n' | LC_ALL=C sort) \
	> "$W/certs"
{
	echo "# Made by scripts/build-image.sh as ca-certificates' postinst makes it: every certificate."
	cat "$W/certs"
} > "$R/etc/ca-certificates.conf"
mkdir -p "$R/etc/ssl/certs"
while IFS= read -r c; do sed -e '$a\' "$R/usr/share/ca-certificates/$c"; done < "$W/certs" \
	> "$R/etc/ssl/certs/ca-certificates.crt"
chmod 0644 "$R/etc/ca-certificates.conf" "$R/etc/ssl/certs/ca-certificates.crt"

# dpkg's database: each package's control fields as installed (sorted by name, as dpkg writes
# them), and the files it has here (info/NAME.list, NAME:ARCH for Multi-Arch: same).
mkdir -p "$R/var/lib/dpkg/info"
echo "$ARCH" > "$R/var/lib/dpkg/arch"
for f in "$W"/debs/*.deb; do printf '%s\t%s\n' "$(dpkg-deb -f "$f" Package)" "$f"; done |
	LC_ALL=C sort > "$W/debs.list"
: > "$R/var/lib/dpkg/status"
while IFS=$'\t' read -r p f; do
	name=$p
	[ "$(dpkg-deb -f "$f" Multi-Arch)" = same ] && name="$p:$(dpkg-deb -f "$f" Architecture)"
	{
		dpkg-deb -f "$f" | awk 'NR == 1 { print; print "Status: install ok installed"; next } { print }'
		echo
	} >> "$R/var/lib/dpkg/status"
	dpkg-deb --fsys-tarfile "$f" | tar -t | sed 's|^\./|/|; s|/$||; s|^$|/.|' |
		while IFS= read -r path; do
			if [ "$path" = /. ] || [ -e "$R$path" ] || [ -L "$R$path" ]; then echo "$path"; fi
		done > "$R/var/lib/dpkg/info/$name.list"
done < "$W/debs.list"
chmod -R u=rwX,go=rX "$R/var/lib/dpkg"

# ---- 4. one reproducible layer, and the image --------------------------------------------------
find "$R" -newermt "@$SOURCE_DATE_EPOCH" -print0 | xargs -0r touch --no-dereference --date="@$SOURCE_DATE_EPOCH"
tar -C "$R" --sort=name --format=posix --numeric-owner \
	--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
	--mtime="@$SOURCE_DATE_EPOCH" --clamp-mtime -cf "$W/layer.tar" .

source_url=${IMAGE_SOURCE:-$(git -C "$ROOT" remote get-url origin 2> /dev/null || true)}
case $source_url in
https://* | http://* | git://* | ssh://* | git@*) ;;
*) [ -z "${IMAGE_SOURCE:-}" ] || { say "FAIL: IMAGE_SOURCE is not a URL: $IMAGE_SOURCE"; exit 1; }
   say "note: no org.opencontainers.image.source label (the git remote is no URL; set IMAGE_SOURCE=URL)"
   source_url= ;;
esac
labels=(
	"org.opencontainers.image.title=preemptd"
	"org.opencontainers.image.description=A second Kubernetes scheduler with kube-scheduler's queue, filters and preemption (libpreempt)"
	"org.opencontainers.image.version=$VERSION"
	"org.opencontainers.image.revision=$HEAD"
	"org.opencontainers.image.created=$CREATED"
	"org.opencontainers.image.licenses=MIT"
)
[ -z "$source_url" ] || labels+=("org.opencontainers.image.source=$source_url")
label_args=()
for l in "${labels[@]}"; do label_args+=(--config.label "$l"); done

L=$OUT/preemptd-oci
umoci init --layout "$L"
umoci new --image "$L:$VERSION"
umoci raw add-layer --image "$L:$VERSION" --history.created "$CREATED" \
	--history.created_by "scripts/build-image.sh: mmdebstrap --variant=extract --include=preemptd (+ $PKGS_ALONE)" \
	"$W/layer.tar"
umoci config --image "$L:$VERSION" --created "$CREATED" --os linux --architecture "$ARCH" \
	--config.user "$IMAGE_UID:$IMAGE_UID" --config.workingdir / \
	--config.env PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	--config.entrypoint /usr/sbin/preemptd --config.cmd="--listen=0.0.0.0:$PORT" \
	--config.exposedports "$PORT/tcp" "${label_args[@]}" \
	--history.created "$CREATED" --history.created_by "scripts/build-image.sh: umoci config (user, entrypoint, labels)"
umoci gc --layout "$L"

# The generated listing: what is in the image, and how big it is.
digest_of() { sed -n 's/.*"digest":"\(sha256:[0-9a-f]*\)".*/\1/p' | head -n1; }
blob() { cat "$L/blobs/${1%%:*}/${1#*:}"; }
listing() {
	local manifest config layer_size files bytes
	manifest=$(digest_of < "$L/index.json")
	config=$(blob "$manifest" | sed 's/"layers".*//' | digest_of)
	layer_size=$(blob "$manifest" | sed 's/.*"layers":\[//' | sed -n 's/.*"size":\([0-9]*\).*/\1/p')
	files=$(find "$R" -mindepth 1 | wc -l)
	bytes=$(find "$R" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
	echo "preemptd $VERSION OCI image, git $HEAD, built from Debian packages only"
	echo "  layout       $L (tag $VERSION)"
	echo "  manifest     $manifest"
	echo "  config       $config"
	echo "  files        $bytes bytes in $(find "$R" -type f | wc -l) files ($files entries with directories and links)"
	echo "  layer        $layer_size bytes (gzip)"
	echo "  oci-archive  $(stat -c %s "$ARCHIVE") bytes ($(basename "$ARCHIVE"))"
	echo "  runs as      $IMAGE_UID:$IMAGE_UID (preemptd), entrypoint /usr/sbin/preemptd, cmd --listen=0.0.0.0:$PORT"
	local present=
	for b in sh bash dash busybox dpkg apt perl; do
		if [ -e "$R/usr/bin/$b" ] || [ -e "$R/usr/sbin/$b" ]; then present="$present $b"; fi
	done
	echo "  programs     /usr/sbin/preemptd only (no ${present:+PRESENT:$present, }sh, bash, dash, busybox, dpkg, apt, perl)"
	echo
	echo "Packages ($(wc -l < "$W/debs.list")): version, bytes of their files in the image"
	while IFS=$'\t' read -r p f; do
		local name=$p list n
		[ "$(dpkg-deb -f "$f" Multi-Arch)" = same ] && name="$p:$(dpkg-deb -f "$f" Architecture)"
		list=$R/var/lib/dpkg/info/$name.list
		n=$(while IFS= read -r x; do if [ -f "$R$x" ] && [ ! -L "$R$x" ]; then stat -c %s "$R$x"; fi; done < "$list" |
			awk '{ s += $1 } END { print s + 0 }')
		printf '  %-22s %-32s %9s\n' "$p" "$(dpkg-deb -f "$f" Version)" "$n"
	done < "$W/debs.list"
	echo
	echo "Files no package ships (made by this build)"
	# the packages' paths as they are on merged /usr
	sed 's#^/\(bin\|sbin\|lib\|lib64\)/#/usr/\1/#' "$R"/var/lib/dpkg/info/*.list | LC_ALL=C sort -u > "$W/owned"
	(cd "$R" && find . -mindepth 1 ! -type d | sed 's|^\.||' | LC_ALL=C sort) |
		LC_ALL=C comm -23 - "$W/owned" | grep -v '^/var/lib/dpkg/' | sed 's/^/  /'
	echo "  /var/lib/dpkg/ (status, arch, info/*.list)"
	echo
	echo "Every entry: mode owner bytes path"
	(cd "$R" && { find . -mindepth 1 ! -type l -printf '  %M %U:%G %8s %P\n'
		find . -type l -printf '  %M %U:%G %8s %P -> %l\n'; } | LC_ALL=C sort -k4,4)
}

# ---- 5. the oci-archive and the listing --------------------------------------------------------
ARCHIVE=$OUT/preemptd-$VERSION.oci.tar
find "$L" -print0 | xargs -0r touch --no-dereference --date="@$SOURCE_DATE_EPOCH"
tar -C "$L" --sort=name --format=posix --numeric-owner --owner=0 --group=0 \
	--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
	--mtime="@$SOURCE_DATE_EPOCH" -cf "$ARCHIVE" .

listing > "$OUT/preemptd-image.txt"
say "built in $(($(date +%s) - t_all))s:"
sed -n '1,/^$/p' "$OUT/preemptd-image.txt" | sed 's/^/    /'
say "layout $L (tag $VERSION), archive $ARCHIVE, listing $OUT/preemptd-image.txt"

# ---- --compare-slim: the same program on debian:bookworm-slim's recipe ---------------------------
# What `FROM debian:bookworm-slim` + `apt-get install ./preemptd.deb ca-certificates` would give,
# built here from the same mirror: mmdebstrap --variant=minbase with merged /usr as debootstrap
# makes it (debuerreotype builds the Debian images from debootstrap's minbase; without the hook
# apt would pull usrmerge and a whole perl) and debuerreotype's slimify excludes as dpkg filters,
# the same two packages installed with their dependencies and maintainer scripts. Not the
# published image (no registry is reachable): its recipe, with today's packages.
[ $COMPARE = yes ] || exit 0
t=$(date +%s)
S=$W/slim.tar
slim=()
for x in /usr/share/doc/'*' /usr/share/groff/'*' /usr/share/info/'*' /usr/share/linda/'*' \
	/usr/share/lintian/overrides/'*' /usr/share/locale/'*' /usr/share/man/'*'; do
	slim+=(--dpkgopt="path-exclude=$x")
done
slim+=(--dpkgopt='path-include=/usr/share/doc/*/copyright' --dpkgopt='path-include=/usr/share/locale/locale.alias')
mmdebstrap --mode=root --variant=minbase --quiet --format=tar --include=preemptd,ca-certificates \
	--hook-dir=/usr/share/mmdebstrap/hooks/merged-usr "${slim[@]}" "${APTOPTS[@]}" "$SUITE" "$S" "$W/sources.list"
slim_files=$(tar -tvf "$S" | awk '$1 ~ /^-/ { s += $3; n++ } END { print s " bytes in " n " files" }')
slim_pkgs=$(tar -xOf "$S" ./var/lib/dpkg/status | grep -c '^Package: ')
slim_gz=$(gzip -n -6 < "$S" | wc -c)
ours_gz=$(gzip -n -6 < "$W/layer.tar" | wc -c)
{
	echo
	echo "Compared with debian:bookworm-slim's recipe + preemptd (scripts/build-image.sh --compare-slim)"
	echo "  this image   $(sed -n 's/^  files *//p' "$OUT/preemptd-image.txt" | head -n1), $(wc -l < "$W/debs.list") packages, layer gzip -6: $ours_gz bytes"
	echo "  slim-based   $slim_files, $slim_pkgs packages, layer gzip -6: $slim_gz bytes"
} | tee -a "$OUT/preemptd-image.txt"
say "compared in $(($(date +%s) - t))s"
