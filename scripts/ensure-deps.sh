#!/bin/sh
# Makes sure the Debian packages a make target needs are present.  As root it installs what is
# missing with apt-get; otherwise it stops and prints the exact command to run as root.
# POSIX sh and nothing beyond a minimal Debian 12 (dpkg-query, grep, id, apt-get): ./run and
# ./check call it before make itself is installed.
set -eu

usage() {
	cat <<USAGE
Usage: scripts/ensure-deps.sh SET...
Makes sure the Debian packages of each SET are installed: as root, installs the missing ones with
apt-get; as another user, prints the apt-get command to run as root and exits 1.
Sets:
  build   compile evictd, preemptctl, preemptd and libpreempt (make, gcc, libc6-dev, pkg-config, -dev libraries)
  preemptd-demo  ./run --preemptd: the stand-in API server and its certificates (python3, python3-yaml, openssl)
  check   run the tests (cmocka, systemd, python3, jq, kubectl, man-db, ...)
  fuzz    libFuzzer targets (clang)
  e2e     the end-to-end VM test (optional: missing packages only make it skip)
  deb     build the Debian packages and test them on a bare Debian 12 (make deb, tests/pkg/run.sh)
  image   build preemptd's OCI image from Debian packages and run it (make image, tests/image/run.sh)
  bench   the benchmarks and soaks (make bench; python3, and gnuplot-nox for the soaks' plots)
Exit status: 0 present (or installed), 1 missing and not installable here, 2 usage error.
USAGE
}

pkgs_for() {
	case "$1" in
	# gcc alone does not pull libc6-dev with --no-install-recommends.
	build) echo "make gcc libc6-dev pkg-config libsystemd-dev libcgroup-dev libinih-dev libfyaml-dev libyajl-dev libcurl4-openssl-dev libmicrohttpd-dev libprotobuf-c-dev protobuf-c-compiler" ;;
	preemptd-demo) echo "python3 python3-yaml openssl" ;;
	# Everything a test uses, so that none skips on a Debian 12 root machine for a missing package:
	# python3-grpcio and python3-protobuf: the stand-in CRI runtime (tests/cri/cri-standin.py).
	# kubectl for test-apiserver's client checks (any kubectl will do: A|B is satisfied by either
	# and installs A), man for test-manpages' `man -l`, nm/objdump (binutils) for test-symbols,
	# python3-yaml for the stand-in API server's --rbac manifests and tests/deploy/; prometheus
	# for promtool (tests/deploy/test-prometheus-rules.sh tests deploy/prometheus/'s alerts).
	check) echo "libcmocka-dev systemd cppcheck util-linux iproute2 procps python3 python3-prometheus-client python3-yaml python3-grpcio python3-protobuf jq curl openssl mandoc groff-base man-db binutils prometheus kubernetes-client|kubectl" ;;
	fuzz)  echo "clang libclang-rt-14-dev" ;;
	# e2e is optional: without these, tests/e2e/run.sh says why and skips (exit 0).
	e2e)   echo "qemu-system-x86 mmdebstrap e2fsprogs xz-utils" ;;
	# dpkg-dev: dpkg-buildpackage; git: `make deb` packages HEAD; mmdebstrap, piuparts: the test's chroots.
	deb)   echo "debhelper dpkg-dev lintian git mmdebstrap piuparts" ;;
	# umoci: the OCI layout; runc: runs the bundle; skopeo and containerd (ctr): load the archive
	# as the README does; ca-certificates: update-ca-certificates, the bundle's reference.
	image) echo "debhelper dpkg-dev lintian git mmdebstrap umoci runc skopeo containerd ca-certificates" ;;
	# gnuplot-nox: tests/bench/plot-soak.sh draws the soaks' RSS over time
	bench) echo "python3 gnuplot-nox" ;;
	*) return 1 ;;
	esac
}

case "${1:-}" in
-h | --help) usage; exit 0 ;;
"") usage >&2; exit 2 ;;
esac
for set in "$@"; do
	pkgs_for "$set" > /dev/null || { echo "ensure-deps: unknown set '$set'" >&2; usage >&2; exit 2; }
done

if ! command -v dpkg-query > /dev/null 2>&1; then
	echo "ensure-deps: not a Debian system; install the equivalents of: $(for s in "$@"; do pkgs_for "$s"; done | tr '\n' ' ')" >&2
	exit 1
fi

missing=""
optional=""
for set in "$@"; do
	for p in $(pkgs_for "$set"); do
		case " $missing $optional " in *" ${p%%|*} "*) continue ;; esac
		# dpkg-query is the cheap, exact test; "install ok installed" only for real installs.
		have=no
		for alt in $(echo "$p" | tr '|' ' '); do
			if dpkg-query -W -f='${Status}' "$alt" 2> /dev/null | grep -q "install ok installed"; then have=yes; fi
		done
		p=${p%%|*}
		if [ $have = no ]; then
			if [ "$set" = e2e ]; then optional="$optional $p"; else missing="$missing $p"; fi
		fi
	done
done
root=no
[ "$(id -u)" -eq 0 ] && root=yes

if [ -n "$optional" ]; then
	# Never a reason to fail the build: `make e2e` then skips with the reason.
	if [ $root = yes ]; then
		echo "ensure-deps: installing (e2e):$optional" >&2
		# shellcheck disable=SC2086
		{ DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $optional >&2 ||
		  { apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive \
		    apt-get install -y -q --no-install-recommends $optional >&2; }; } ||
			echo "ensure-deps: could not install$optional; the end-to-end test will be skipped" >&2
	else
		echo "ensure-deps: missing for the end-to-end test (it will be skipped):$optional" >&2
	fi
fi
[ -z "$missing" ] && exit 0

if [ $root = no ]; then
	echo "ensure-deps: missing Debian packages:$missing" >&2
	echo "ensure-deps: as root, run:" >&2
	echo "apt-get update && apt-get install -y --no-install-recommends$missing" >&2
	exit 1
fi
echo "ensure-deps: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >&2
