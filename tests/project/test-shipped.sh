#!/bin/bash
# The shipped files: conf/evictd.conf and conf/preemptd.conf document every key (uncommented, they
# must load), and every MESSAGE_ID in agent/ and controller/ has a catalog entry that journalctl
# accepts.
. "$(dirname "$0")/../lib.sh"
EVICTD=$BUILD/evictd
[ -x "$EVICTD" ] || skip_all "$EVICTD not built"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
FX=$PWD/tests/fixtures/cgroup/systemd

shipped_conf_loads() {
	"$EVICTD" --once --config conf/evictd.conf --cgroup-root "$FX/root" --proc-root "$FX/proc" >/dev/null
}

uncommented_conf_loads() {
	# "#key = value", "#  continuation" and "#[priority-class ...]" lines become live
	sed -E 's/^#([a-z[]|  )/\1/' conf/evictd.conf >"$tmp/all.conf"
	# Every key the parser accepts (its own table); a signal at least named in the file.
	local line k
	"$EVICTD" --dump-config-keys >"$tmp/keys" || return 1
	while read -r line; do
		k=${line##* }
		case "$line" in
		eviction-hard\ *|eviction-soft*|eviction-minimum-reclaim\ *)
			grep -qF "$k" "$tmp/all.conf" || { echo "# signal $k not documented"; return 1; } ;;
		# aliases of [eviction-hard] memory.some/full: named, never set beside them (an error)
		eviction\ psi-memory-*)
			grep -qF "$k" "$tmp/all.conf" || { echo "# alias $k not documented"; return 1; } ;;
		*) grep -q "^$k = " "$tmp/all.conf" || { echo "# key $k not documented"; return 1; } ;;
		esac
	done <"$tmp/keys"
	sed -i 's|^cgroup-root = auto|cgroup-root = '"$FX/root"'|; s|^proc-root = /proc|proc-root = '"$FX/proc"'|' "$tmp/all.conf"
	"$EVICTD" --once --json --config "$tmp/all.conf" >"$tmp/out.json" 2>"$tmp/err" || { cat "$tmp/err"; return 1; }
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = {x["signal"]: x for x in d["signals"]}
assert s["memory.available"]["threshold"] == 100 << 20 and s["memory.available"]["soft_threshold"] == 500 << 20
assert s["memory.some"]["threshold"] == 4000 and s["memory.full"]["threshold"] == 1000
assert s["pid.available"]["threshold"] == 1000 and d["dry_run"] is False' "$tmp/out.json"
}

catalog_covers_ids() {	# catalog_covers_ids CATALOG HEADERS...
	local ids cat_ids catalog=$1; shift
	ids=$(grep -o '"[0-9a-f]\{32\}"' "$@" | grep -o '[0-9a-f]\{32\}' | sort -u)
	cat_ids=$(grep -o '^-- [0-9a-f]\{32\}' "$catalog" | cut -c4- | sort -u)
	[ -n "$ids" ] && [ "$ids" = "$cat_ids" ] || { diff <(echo "$ids") <(echo "$cat_ids"); return 1; }
}

catalog_parses() {	# catalog_parses NAME: systemd/NAME.catalog, Defined-By: NAME
	rm -rf "$tmp/root"
	mkdir -p "$tmp/root/usr/lib/systemd/catalog" "$tmp/root/var/lib/systemd/catalog"
	cp "systemd/$1.catalog" "$tmp/root/usr/lib/systemd/catalog/"
	journalctl --root="$tmp/root" --update-catalog >/dev/null 2>&1
	[ "$(journalctl --root="$tmp/root" --list-catalog 2>/dev/null | grep -c " $1: ")" -eq \
	  "$(grep -c '^-- [0-9a-f]\{32\}' "systemd/$1.catalog")" ]
}

# conf/preemptd.conf: every key preemptd --help lists is there (commented), and uncommented the
# file loads (preemptd gets as far as looking for its credentials)
preemptd_conf_complete() {
	local PD=$BUILD/preemptd k
	[ -x "$PD" ] || return 1
	for k in $("$PD" --help | sed -n 's/^  --\([a-z-]*\) .*/\1/p' | grep -vx config); do
		grep -q "^#$k = " conf/preemptd.conf || { echo "# key $k not in conf/preemptd.conf"; return 1; }
	done
	sed -E 's/^#([a-z[])/\1/' conf/preemptd.conf | grep -v '^kubeconfig = ' >"$tmp/preemptd.conf"
	env -u KUBERNETES_SERVICE_HOST "$PD" --config "$tmp/preemptd.conf" --log-target stderr 2>"$tmp/pd.err"
	grep -q 'not in a cluster' "$tmp/pd.err" || { cat "$tmp/pd.err"; return 1; }
}

ok "conf/evictd.conf as shipped loads" shipped_conf_loads
ok "conf/evictd.conf documents every key, and loads with all of them set" uncommented_conf_loads
ok "conf/preemptd.conf documents every key, and loads with all of them set" preemptd_conf_complete
ok "every MESSAGE_ID in agent/*.h has a catalog entry (and no stale ones)" catalog_covers_ids systemd/evictd.catalog agent/*/*.h
ok "every MESSAGE_ID in controller/*.h has a catalog entry (and no stale ones)" catalog_covers_ids systemd/preemptd.catalog controller/*/*.h
if command -v journalctl >/dev/null; then
	ok "journalctl accepts systemd/evictd.catalog" catalog_parses evictd
	ok "journalctl accepts systemd/preemptd.catalog" catalog_parses preemptd
else
	skip "journalctl accepts systemd/evictd.catalog" "journalctl missing (package systemd)"
	skip "journalctl accepts systemd/preemptd.catalog" "journalctl missing (package systemd)"
fi
done_testing
