#!/bin/bash
# Guest side of `make e2e` (copied to /e2e/entry; run as root by the image's evictd-e2e.service
# once the VM has booted). Installs the tree `make install` produced, then runs every
# /e2e/scenarios/NN-*.sh in order, each with a time limit and its output in
# /e2e/out/scenarios/NAME.log, and writes one TAP line per scenario to /e2e/out/results:
#   ok N - NAME # 12.3s          not ok N - NAME # 12.3s, exit 1          ok N - NAME # SKIP why
# A scenario passes when it exits 0 and printed no "not ok" line; exit 77 means skipped, unless a
# check failed before it (then it is a failure). The host (run.sh) decides whether a skip was
# expected.
set -u
E2E=/e2e
OUT=$E2E/out
SCENARIO_TIMEOUT=${SCENARIO_TIMEOUT:-480}
E2E_ONLY=
# shellcheck source=/dev/null
[ -f "$E2E/env" ] && . "$E2E/env"
mkdir -p "$OUT/scenarios"
: > "$OUT/results"

say() { echo "runner: $*"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

say "kernel $(uname -r), $(systemctl --version | head -n1), Debian $(cat /etc/debian_version)"

# ---- install exactly what `make install DESTDIR=stage PREFIX=/usr` produced ---------------------
T_INSTALL=$(now)
# tar, not cp: /lib, /sbin are symlinks into /usr on this merged-/usr system and must stay so.
if ! tar -C "$E2E/stage" -cf - . | tar -C / -xf - --keep-directory-symlink --no-same-owner; then
	say "ERROR: installing the staged tree failed"
	exit 1
fi
ldconfig
systemctl daemon-reload
journalctl --update-catalog 2>/dev/null || true   # as a package's postinst would: journalctl -x
install -m 755 "$E2E"/helpers/* /usr/local/bin/
say "installed in $(since "$T_INSTALL")s"
say "installed: $(cd "$E2E/stage" && find . -type f -o -type l | sed 's#^\.##' | sort | tr '\n' ' ')"

# Between scenarios: no pods, no descriptors, no test drop-ins, evictd stopped — each scenario
# starts from the node as `make install` left it.
reset_node() {
	systemctl stop evictd.service 2>/dev/null
	systemctl reset-failed evictd.service 2>/dev/null
	rm -rf /etc/evictd/evictd.conf.d/e2e-*.conf /run/evictd/pods/e2e*.conf
	# node-level reclaim's ages belong to the previous scenario's node (evictd keeps them across
	# its restarts, and RuntimeDirectoryPreserve keeps /run/evictd across stops)
	rm -f /run/evictd/node-reclaim.json
	# A daemon-reload costs seconds under TCG: only when a scenario changed the unit.
	if compgen -G '/etc/systemd/system/evictd.service.d/e2e-*.conf' >/dev/null; then
		rm -f /etc/systemd/system/evictd.service.d/e2e-*.conf
		systemctl daemon-reload
	fi
	[ -d /sys/fs/cgroup/kubepods.slice ] && echo 1 > /sys/fs/cgroup/kubepods.slice/cgroup.kill 2>/dev/null
	systemctl stop kubepods.slice 2>/dev/null
	systemctl reset-failed 2>/dev/null
	rm -rf /run/e2e
}

n=0
failed=0
for s in "$E2E"/scenarios/[0-9][0-9]-*.sh; do
	[ -e "$s" ] || continue
	name=$(basename "$s" .sh)
	if [ -n "$E2E_ONLY" ]; then
		want=0
		for w in $E2E_ONLY; do case "$name" in *"$w"*) want=1 ;; esac; done
		[ "$want" = 1 ] || continue
	fi
	n=$((n + 1))
	reset_node
	log=$OUT/scenarios/$name.log
	say "--- $name"
	t=$(now)
	since=$(date +%s)
	(cd "$E2E/scenarios" && exec timeout --kill-after=10 "$SCENARIO_TIMEOUT" bash "$s") > "$log" 2>&1 < /dev/null
	rc=$?
	d=$(since "$t")
	# What evictd and systemd said about it during the scenario, for a post-mortem on the host.
	journalctl --sync 2>/dev/null
	journalctl -u evictd.service -o json --no-pager --since="@$since" \
		> "$OUT/scenarios/$name.evictd.json" 2>/dev/null
	sed 's/^/    /' "$log"
	if [ "$rc" = 77 ] && ! grep -q '^not ok' "$log"; then   # a skip after a failed check is a failure
		echo "ok $n - $name # SKIP $(grep -m1 -i '^skip' "$log" | sed 's/^[Ss][Kk][Ii][Pp][: ]*//')" >> "$OUT/results"
	elif [ "$rc" = 0 ] && ! grep -q '^not ok' "$log"; then
		echo "ok $n - $name # ${d}s" >> "$OUT/results"
	else
		[ "$rc" = 124 ] && echo "not ok - scenario killed after ${SCENARIO_TIMEOUT}s" >> "$log"
		echo "not ok $n - $name # ${d}s, exit $rc" >> "$OUT/results"
		failed=$((failed + 1))
	fi
	say "$(tail -n1 "$OUT/results")"
done
reset_node
echo "1..$n" >> "$OUT/results"
exit $((failed > 0))
