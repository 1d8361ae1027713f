#!/bin/bash
# tests/pkg/run.sh — the Debian packages (debian/, `make deb`) as a node's operator meets them, on
# the bare Debian 12 minbase machine of the fresh-machine test (tests/fresh/mkrootfs.sh: same
# recipe, same cache, this machine's apt sources).
#
# Built from the committed HEAD twice (scripts/build-deb.sh): as itself (VERSION, lintian must
# report no error and no warning) and as VERSION~prev, the "previous release" to upgrade from
# (same tree, lower version in a temporary copy). Then:
#   1. security   systemd-analyze security --offline=yes --root=<unpacked .deb> rates evictd's two
#                 units and preemptd's at or below 2.0 and exactly as README.md states ("rates
#                 both units X", "rates the unit X")
#   2. baseline   the machine gets systemd (a node runs it; its dpkg trigger builds the journal
#                 catalog) and a recording stand-in for a running systemd (see STUB below); the
#                 file list is taken
#   3. install    apt-get install ./*.deb of the previous version: apt pulls the runtime
#                 dependencies (from dh_shlibdeps) itself; --version, conffiles, evictd's units
#                 enabled and started, preemptd.service neither (it needs its kubeconfig), catalog
#                 entries, daemon-reload; then the operator's part: a kubeconfig, preemptd enabled
#   4. upgrade    evictd.conf and preemptd.conf edited, then apt-get install ./*.deb of VERSION:
#                 --version, the edits kept with no .dpkg-* file beside them, evictd and the
#                 enabled preemptd restarted
#   5. remove     apt-get remove: programs gone, units stopped, the conffiles kept
#   6. purge      apt-get purge + autoremove --purge: /etc/evictd, the enable links, debhelper's
#                 state and the catalog entries gone; the machine's file list (path, type, mode,
#                 owner, link target) equals the baseline's except for package-manager state
#                 (as piuparts compares)
#   7. piuparts   piuparts itself: install and purge of VERSION in its own chroot of the same tree
#   8. PKG_VM=1 only: the same install/upgrade/remove/purge under a real systemd (PID 1) in the
#                 e2e VM (tests/e2e/scenarios/07-package.sh): units started, restarted, stopped
# Each machine step runs in a chroot inside a private mount and pid namespace.
# Exit status: 0 all passed; 1 a step failed (its log is shown); 77 this machine cannot do it
# (not root, missing tools, no mirror) — the reason is printed. Logs stay in build/pkg/.
#
# Environment: FRESH_CACHE (root tree cache, as tests/fresh/run.sh), PKG_TIMEOUT (seconds per
# step, default 900), PKG_KEEP=1 keeps the machine's directory, PKG_REUSE=1 reuses the packages
# the last run built (build/pkg/new, build/pkg/old) instead of building them.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TIMEOUT=${PKG_TIMEOUT:-900}
SYS_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
PKGS="evictd libpreempt0 libpreempt-dev preemptctl preemptd"
# preemptd's first journal catalog entry: the catalog has preemptd's entries while this one is there.
PD_MSGID=$(sed -n 's/^-- \([0-9a-f]\{32\}\)$/\1/p' "$ROOT/systemd/preemptd.catalog" | head -n1)

# ---- inside the namespaces: --inside MACHINE LOG SCRIPT ----------------------------------------
if [ "${1:-}" = --inside ]; then
	M=$2 log=$3 script=$4
	mount --bind "$M" "$M"
	mount -t proc proc "$M/proc"
	mount --rbind /sys "$M/sys"
	mount --rbind /dev "$M/dev"
	mount -t tmpfs -o mode=755,nosuid,nodev tmpfs "$M/run"
	mkdir -m 1777 "$M/run/lock"
	# Maintainer scripts act on units only where systemd runs (/run/systemd/system); the stand-in
	# systemctl records what they ask for. Not during the baseline, which installs systemd itself.
	[ -x "$M/usr/bin/systemctl.real" ] && mkdir -p "$M/run/systemd/system"
	set +e
	timeout -k 10 "$TIMEOUT" chroot "$M" env -i HOME=/root USER=root LOGNAME=root PATH="$SYS_PATH" \
		TERM=dumb DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 /bin/bash -euo pipefail -c "$script" \
		> "$log" 2>&1 < /dev/null
	rc=$?
	set -e
	left=
	for p in "$M"/proc/[0-9]*; do
		p=${p##*/}
		[ "$p" = 1 ] || [ "$p" = "$BASHPID" ] && continue
		c=$(tr '\0' ' ' < "$M/proc/$p/cmdline" 2> /dev/null) || continue
		[ -n "$c" ] && left="$left $p:$c"
	done
	[ -z "$left" ] || { echo "pkg: left running:$left" >> "$log"; [ "$rc" != 0 ] || rc=99; }
	exit "$rc"
fi

# ---- outside -------------------------------------------------------------------------------------
say() { echo "pkg: $*"; }
cannot() { echo "pkg: SKIP: $* — the package test cannot run here"; exit 77; }
since() { echo $(($(date +%s) - $1)); }

[ "$(id -u)" = 0 ] || cannot "it needs root (mmdebstrap, chroot, namespaces)"
for t in unshare chroot git tar dpkg-buildpackage dh lintian dpkg-deb; do
	command -v "$t" > /dev/null || cannot "missing tool: $t (scripts/ensure-deps.sh deb)"
done
command -v systemd-analyze > /dev/null || cannot "missing tool: systemd-analyze (package systemd)"

LOGS=$ROOT/build/pkg
if [ -n "${PKG_REUSE:-}" ] && [ -d "$LOGS/new" ] && [ -d "$LOGS/old" ]; then
	find "$LOGS" -mindepth 1 -maxdepth 1 ! -name new ! -name old -exec rm -rf {} +
else
	PKG_REUSE=
	rm -rf "$LOGS"
fi
mkdir -p "$LOGS"
T_ALL=$(date +%s)
failed=0
TIMES=()
record() {	# record NAME T0 [WHY]
	TIMES+=("$(printf '%5ss  %s' "$(since "$2")" "$1")")
	if [ -z "${3:-}" ]; then say "ok   $1 ($(since "$2")s)"; else say "FAIL $1 ($(since "$2")s): $3"; failed=1; fi
}

# ---- the packages ----------------------------------------------------------------------------
VERSION=$(sed -n 's/^VERSION *:= *//p' "$ROOT/Makefile")
PREV="$VERSION~prev"
if [ -z "$PKG_REUSE" ]; then
	t=$(date +%s)
	"$ROOT/scripts/build-deb.sh" "$LOGS/new" || { record "build $VERSION + lintian" "$t" "see above"; exit 1; }
	record "build $VERSION + lintian" "$t"
	t=$(date +%s)
	"$ROOT/scripts/build-deb.sh" "$LOGS/old" --version "$PREV" --no-lintian || { record "build $PREV" "$t" "see above"; exit 1; }
	record "build $PREV" "$t"
else
	say "PKG_REUSE: the packages of the last run in $LOGS/new and $LOGS/old"
fi

# ---- 1. exposure of the units as packaged ---------------------------------------------------
t=$(date +%s)
claim=$(sed -n 's/.*`systemd-analyze security` rates both units \([0-9.]*[0-9]\).*/\1/p' "$ROOT/README.md" "$ROOT"/docs/*.md | head -n1)
unpacked=$LOGS/unpacked
dpkg-deb -x "$LOGS/new/evictd_${VERSION}_"*.deb "$unpacked"
why=
[ -n "$claim" ] || why="README.md states no rating (\"systemd-analyze security\` rates both units X\")"
pd_claim=$(sed -n 's/.*`systemd-analyze security` rates the unit \([0-9.]*[0-9]\).*/\1/p' "$ROOT/README.md" "$ROOT"/docs/*.md | head -n1)
dpkg-deb -x "$LOGS/new/preemptd_${VERSION}_"*.deb "$unpacked"
[ -n "$pd_claim" ] || why="$why; README.md states no rating of preemptd's unit (\"systemd-analyze security\` rates the unit X\")"
for unit in evictd.service evictd-kube.service preemptd.service; do
	want=$claim
	[ $unit = preemptd.service ] && want=$pd_claim
	[ -f "$unpacked/lib/systemd/system/$unit" ] || { why="$why; $unit not in the package"; continue; }
	score=$(systemd-analyze security --offline=yes --root="$unpacked" "$unit" 2>&1 |
		sed -n "s/.*Overall exposure level for $unit: \([0-9.]*\).*/\1/p")
	say "  $unit: exposure ${score:-?} (README: ${want:-?})"
	if [ -z "$score" ] || ! awk -v s="$score" 'BEGIN { exit !(s <= 2.0) }'; then
		why="$why; $unit rated '${score}', not <= 2.0"
	elif [ "$score" != "$want" ]; then
		why="$why; $unit rated $score, README.md says $want"
	fi
done
record "systemd-analyze security of the packaged units" "$t" "${why#; }"

# ---- the machine -----------------------------------------------------------------------------
t=$(date +%s)
. "$ROOT/tests/fresh/machine.sh"
machine_unpack pkg "${PKG_KEEP:-}"
# Test material lives in /root/pkgtest, left out of the file lists.
mkdir -p "$M/root/pkgtest/old" "$M/root/pkgtest/new"
for v in old new; do
	for p in $PKGS; do cp "$LOGS/$v/${p}_"*.deb "$M/root/pkgtest/$v/"; done
done
record "machine ready ($(basename "$TARBALL"))" "$t"

# The file list piuparts compares: every path with its type, mode, owner and link target, outside
# the virtual file systems and this test's own directory.
snapshot() {
	(cd "$M" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./run \
		-o -path ./tmp -o -path ./root/pkgtest \) -prune -o -printf '%p %y %m %u:%g %l\n') | sort
}
# Package-manager state that changes with any install and is no trace of these packages (piuparts
# ignores the same): apt and dpkg databases, caches and logs, the linker cache, and the journal
# catalog database (systemd's trigger rebuilds it; that evictd's entries left it is checked).
VOLATILE='^\./(var/lib/(dpkg|apt)/|var/cache/(apt|debconf|ldconfig)/|var/log/|etc/ld\.so\.cache |var/lib/systemd/catalog/database )'

step() {	# step NAME SCRIPT: SCRIPT in the machine, as root; prints one line, and the log on failure
	local name=$1 script=$2 log rc t0 why=
	log=$LOGS/$(echo "$name" | tr -c 'a-z0-9\n' '-').log
	t0=$(date +%s)
	set +e
	unshare --mount --pid --fork --kill-child --propagation private -- \
		"$0" --inside "$M" "$log" "$script"
	rc=$?
	set -e
	case $rc in 0) ;; 99) why="something was left running" ;; *) why="exit status $rc" ;; esac
	record "$name" "$t0" "$why"
	if [ -n "$why" ]; then tail -n 50 "$log" | sed 's/^/    /'; return 1; fi
	grep '^pkg: ' "$log" | sed 's/^/    /' || true
}

# Checks run in the machine; each failure says what is wrong and stops the step.
CHECKS='
fail() { echo "pkg: FAILED: $*"; exit 1; }
note() { echo "pkg: $*"; }
calls() { cat /root/pkgtest/systemctl.log 2>/dev/null; }
want_call() { grep -qx -- "$1" /root/pkgtest/systemctl.log 2>/dev/null || fail "maintainer scripts did not run: systemctl $1 (they ran: $(calls | tr "\n" ";"))"; }
clear_calls() { rm -f /root/pkgtest/systemctl.log; }
versions() { dpkg-query -W -f="\${Package}=\${Version} " '"$PKGS"'; }
in_catalog() { local c; c=$(journalctl --list-catalog 2>/dev/null); [[ $c == *evictd* ]]; }
pd_in_catalog() { local c; c=$(journalctl --list-catalog 2>/dev/null); [[ $c == *'"$PD_MSGID"'* ]]; }
no_call() { ! grep -qx -- "$1" /root/pkgtest/systemctl.log 2>/dev/null || fail "maintainer scripts ran systemctl $1"; }
WANTS=/etc/systemd/system/multi-user.target.wants
'

# STUB: systemctl for maintainer scripts as if systemd ran, in place of /usr/bin/systemctl (apt
# runs dpkg with its own PATH, so it must be that path; the real one is diverted to
# systemctl.real): what works on files alone (preset, enable, is-enabled, ...) is the real
# systemctl's; is-active says inactive; what needs the running manager (daemon-reload, start,
# restart, stop, ...) is recorded, one line per unit, and succeeds.
STUB='#!/bin/sh
case " $* " in
*" is-active "*) exit 3 ;;
*" daemon-reload "* | *" daemon-reexec "* | *" start "* | *" stop "* | *" restart "* | *" try-restart "* | *" reload "*) ;;
*) exec /usr/bin/systemctl.real "$@" ;;
esac
action= units=
for a in "$@"; do
	case $a in
	-*) ;;
	*) if [ -z "$action" ]; then action=$a; else units=1; echo "$action $a" >> /root/pkgtest/systemctl.log; fi ;;
	esac
done
[ -n "$units" ] || echo "$action" >> /root/pkgtest/systemctl.log
'

T=0
step "baseline: systemd and the stand-in systemctl" "
apt-get update -q
apt-get install -y -q --no-install-recommends systemd
dpkg-divert --quiet --local --rename --divert /usr/bin/systemctl.real --add /usr/bin/systemctl
cat > /usr/bin/systemctl <<'EOF'
$STUB
EOF
chmod 755 /usr/bin/systemctl
" || T=1
if [ $T = 0 ]; then
	snapshot > "$LOGS/files-before"

	step "install $PREV: apt-get install ./*.deb" "$CHECKS
cd /root/pkgtest/old
apt-get install -y -q ./*.deb
out=\$(evictd --version)
[ \"\$out\" = 'evictd $PREV' ] || fail \"evictd --version says '\$out', not 'evictd $PREV'\"
note \"evictd --version: \$out; preemptctl --version: \$(preemptctl --version)\"
out=\$(preemptd -V)
[ \"\${out%% (*}\" = 'preemptd $PREV' ] || fail \"preemptd -V says '\$out', not 'preemptd $PREV (...)'\"
note \"preemptd -V: \$out\"
# Every package dh_shlibdeps put into Depends was installed by apt along with them.
deps=\$(dpkg-query -W -f='\${Depends}, ' evictd preemptctl preemptd | tr ',' '\\n' | sed 's/(.*//; s/ //g' | grep . | sort -u)
for p in \$deps; do
	dpkg-query -W -f='\${Status}' \$p 2>/dev/null | grep -q 'install ok installed' || fail \"dependency \$p not installed\"
done
for p in libcgroup2 libinih1 libyajl2 libfyaml0 libcurl4 libmicrohttpd12; do
	grep -qx \$p <<< \"\$deps\" || fail \"\$p missing from the computed Depends: \$deps\"
done
note \"Depends (dh_shlibdeps), all installed by apt: \$(echo \$deps)\"
dpkg-query -W -f='\${Conffiles}\n' evictd | grep -q '^ /etc/evictd/evictd.conf ' || fail 'evictd.conf is not a conffile'
[ -L \$WANTS/evictd.service ] && [ -L \$WANTS/evictd-kube.service ] || fail 'units not enabled'
want_call daemon-reload
want_call 'start evictd.service'
want_call 'start evictd-kube.service'
in_catalog || fail 'journalctl --list-catalog has no evictd entry (the systemd trigger did not run)'
note \"catalog: \$(journalctl --list-catalog | grep -c evictd) evictd entries; systemctl: \$(calls | tr '\n' ';')\"
[ ! -e /etc/evictd/evictd.conf.dist ] || fail 'evictd.conf.dist installed'
# preemptd: its files, a conffile, a unit the package neither enables nor starts
dpkg-query -W -f='\${Conffiles}\n' preemptd | grep -q '^ /etc/evictd/preemptd.conf ' || fail 'preemptd.conf is not a conffile'
[ -f /lib/systemd/system/preemptd.service ] && [ -f /usr/share/man/man8/preemptd.8.gz ] || fail 'preemptd.service or preemptd(8) missing'
[ ! -e \$WANTS/preemptd.service ] || fail 'preemptd.service enabled by the package (it needs its kubeconfig first)'
no_call 'start preemptd.service'
pd_in_catalog || fail 'journalctl --list-catalog has no preemptd entry ($PD_MSGID)'
# The operator's part (README): the kubeconfig, then the unit enabled.
install -m 600 /dev/null /etc/evictd/preemptd.kubeconfig
systemctl enable preemptd.service
[ -L \$WANTS/preemptd.service ] || fail 'systemctl enable preemptd.service made no link'
pcv=\$(sed -n 's/^Version: //p' /usr/lib/*/pkgconfig/libpreempt.pc)
[ \"\$pcv\" = '$PREV' ] || fail \"libpreempt.pc says Version: \$pcv, not $PREV\"
ls /usr/lib/*/libpreempt.so.0 /usr/lib/*/libpreempt.so /usr/lib/*/libpreempt.a /usr/include/preempt.h > /dev/null || fail 'library files missing'
" || T=1
fi
if [ $T = 0 ]; then
	step "upgrade to $VERSION with an edited conffile" "$CHECKS
sed -i 's/^#interval = 1s\$/interval = 2s/' /etc/evictd/evictd.conf
grep -qx 'interval = 2s' /etc/evictd/evictd.conf || fail 'could not edit evictd.conf'
sed -i 's/^#log-level = info\$/log-level = debug/' /etc/evictd/preemptd.conf
grep -qx 'log-level = debug' /etc/evictd/preemptd.conf || fail 'could not edit preemptd.conf'
clear_calls
cd /root/pkgtest/new
apt-get install -y -q ./*.deb
out=\$(evictd --version)
[ \"\$out\" = 'evictd $VERSION' ] || fail \"evictd --version says '\$out', not 'evictd $VERSION'\"
note \"evictd --version: \$out; packages: \$(versions)\"
[[ \$(versions) == *'evictd=$VERSION '* ]] || fail \"not upgraded: \$(versions)\"
grep -qx 'interval = 2s' /etc/evictd/evictd.conf || fail 'the edit of evictd.conf was lost'
grep -qx 'log-level = debug' /etc/evictd/preemptd.conf || fail 'the edit of preemptd.conf was lost'
out=\$(preemptd -V)
[ \"\${out%% (*}\" = 'preemptd $VERSION' ] || fail \"preemptd -V says '\$out', not 'preemptd $VERSION (...)'\"
left=\$(find /etc/evictd -name '*.dpkg-*' -o -name '*.dist' -o -name '*.ucf-*')
[ -z \"\$left\" ] || fail \"files beside the conffile: \$left\"
[ -L \$WANTS/evictd.service ] && [ -L \$WANTS/evictd-kube.service ] || fail 'units no longer enabled'
want_call 'restart evictd.service'
want_call 'restart evictd-kube.service'
[ -L \$WANTS/preemptd.service ] || fail 'preemptd.service no longer enabled'
want_call 'restart preemptd.service'
no_call 'stop preemptd.service'
note \"systemctl: \$(calls | tr '\n' ';')\"
" || T=1
fi
if [ $T = 0 ]; then
	step "remove" "$CHECKS
clear_calls
apt-get remove -y -q $PKGS
for f in /usr/sbin/evictd /usr/sbin/evictd-kube /usr/bin/preemptctl /lib/systemd/system/evictd.service /usr/sbin/preemptd /lib/systemd/system/preemptd.service; do
	[ ! -e \$f ] || fail \"\$f still there after remove\"
done
grep -qx 'interval = 2s' /etc/evictd/evictd.conf || fail '/etc/evictd/evictd.conf not kept on remove'
dpkg-query -W -f='\${Status}' evictd | grep -q 'config-files' || fail \"evictd is not in config-files state: \$(dpkg-query -W -f='\${Status}' evictd)\"
want_call 'stop evictd.service'
want_call 'stop evictd-kube.service'
want_call 'stop preemptd.service'
grep -qx 'log-level = debug' /etc/evictd/preemptd.conf || fail '/etc/evictd/preemptd.conf not kept on remove'
want_call daemon-reload
note \"kept: \$(find /etc/evictd | tr '\n' ' '); systemctl: \$(calls | tr '\n' ';')\"
" || T=1
fi
if [ $T = 0 ]; then
	step "purge" "$CHECKS
# Packages with nothing left but configuration (rc); the others dpkg forgot on remove.
rc=\$(dpkg-query -W -f='\${db:Status-Abbrev} \${Package}\\n' $PKGS 2>/dev/null | awk '\$1 == \"rc\" { print \$2 }' || true)
note \"purging: \$(echo \$rc)\"
# The kubeconfig is the operator's, not a package's: dpkg would leave it (and /etc/evictd for it).
rm /etc/evictd/preemptd.kubeconfig
[ -n \"\$rc\" ] || fail 'nothing in config-files state to purge'
apt-get purge -y -q \$rc
apt-get autoremove --purge -y -q
[ ! -e /etc/evictd ] || fail \"/etc/evictd left after purge: \$(find /etc/evictd | tr '\n' ' ')\"
[ ! -e \$WANTS/evictd.service ] && [ ! -e \$WANTS/evictd-kube.service ] && [ ! -e \$WANTS/preemptd.service ] || fail 'enable links left after purge'
! find /var/lib/systemd/deb-systemd-helper-enabled -name '*evictd*' -o -name '*preemptd*' | grep -q . || fail 'deb-systemd-helper state left'
! in_catalog || fail 'evictd entries left in the journal catalog'
! pd_in_catalog || fail 'preemptd entries left in the journal catalog'
for p in $PKGS; do
	st=\$(dpkg-query -W -f='\${db:Status-Abbrev}' \$p 2>/dev/null || true)
	[ -z \"\$st\" ] || fail \"dpkg still knows \$p: \$st\"
done
" || T=1
fi
if [ $T = 0 ]; then
	t=$(date +%s)
	snapshot > "$LOGS/files-after"
	diff <(grep -vE "$VOLATILE" "$LOGS/files-before") <(grep -vE "$VOLATILE" "$LOGS/files-after") > "$LOGS/files.diff" || true
	if [ -s "$LOGS/files.diff" ]; then
		record "purge leaves nothing behind (file lists)" "$t" "the file list differs from the baseline ($LOGS/files.diff):"
		head -n 40 "$LOGS/files.diff" | sed 's/^/    /'
	else
		record "purge leaves nothing behind ($(wc -l < "$LOGS/files-before") paths, same as the baseline)" "$t"
	fi
fi

# ---- 7. piuparts itself: install and purge of the four packages in its own chroot -----------
# From the same root tree, the packages served as a local repository (its dependency resolution
# needs one); the mirror is this machine's (scripts/debian-mirror.sh). No upgrade test: piuparts
# upgrades from the version in the archive, and there is none.
t=$(date +%s)
if ! command -v piuparts > /dev/null || ! command -v dpkg-scanpackages > /dev/null; then
	record "piuparts: install and purge" "$t" "piuparts or dpkg-scanpackages missing (scripts/ensure-deps.sh deb)"
else
	# shellcheck source=../../scripts/debian-mirror.sh
	. "$ROOT/scripts/debian-mirror.sh"
	mirror=$(debian_sources bookworm | awk '$3 == "bookworm" { print $2; exit }')
	repo=$WORK/repo
	mkdir -p "$repo"
	for p in $PKGS; do cp "$LOGS/new/${p}_"*.deb "$repo/"; done
	(cd "$repo" && dpkg-scanpackages . > Packages 2> /dev/null)
	gzip -1 -c "$TARBALL" > "$WORK/base.tgz"
	if timeout -k 10 "$TIMEOUT" piuparts --basetgz="$WORK/base.tgz" -d bookworm -m "$mirror" \
		--no-upgrade-test --warn-on-others --tmpdir="$WORK" --bindmount="$repo" \
		--extra-repo="deb [trusted=yes] file://$repo ./" --apt $PKGS > "$LOGS/piuparts.log" 2>&1 &&
		grep -q 'PASS: All tests' "$LOGS/piuparts.log"; then
		record "piuparts: install and purge ($(grep -c 'PASS:' "$LOGS/piuparts.log") PASS lines)" "$t"
	else
		record "piuparts: install and purge" "$t" "see $LOGS/piuparts.log"
		grep -v DEBUG "$LOGS/piuparts.log" | tail -n 30 | sed 's/^/    /'
	fi
fi

# ---- 8. under a real systemd (opt-in): e2e scenario 07 in the Debian 12 VM ------------------
if [ -n "${PKG_VM:-}" ]; then
	t=$(date +%s)
	mkdir -p "$WORK/vmdebs/old" "$WORK/vmdebs/new"
	for v in old new; do for p in $PKGS; do cp "$LOGS/$v/${p}_"*.deb "$WORK/vmdebs/$v/"; done; done
	if E2E_DEBS=$WORK/vmdebs E2E_ONLY=package "$ROOT/tests/e2e/run.sh" > "$LOGS/vm.log" 2>&1 &&
		grep -q '^PASS  07-package' "$LOGS/vm.log"; then
		record "under systemd in the e2e VM (scenario 07)" "$t"
	else
		record "under systemd in the e2e VM (scenario 07)" "$t" "see $LOGS/vm.log and build/e2e/scenarios/07-package.log"
		grep -vE '^(ok|PASS) ' "$LOGS/vm.log" | tail -n 30 | sed 's/^/    /'
	fi
fi

say "step times:"
printf '    %s\n' "${TIMES[@]}"
say "total $(since "$T_ALL")s"
[ $failed = 0 ] && say "the packages install, upgrade, remove and purge cleanly on a bare Debian 12"
exit $failed
