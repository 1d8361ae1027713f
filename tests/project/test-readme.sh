#!/bin/bash
# The documentation's examples (docs/evictd.md) are what operators copy: its evictd.conf and pod descriptor must be
# accepted by evictd as written, and the descriptor must name the pod in the ranking.
. "$(dirname "$0")/../lib.sh"
EVICTD=$BUILD/evictd
[ -x "$EVICTD" ] || skip_all "$EVICTD not built"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
FX=$PWD/tests/fixtures/cgroup/systemd

# The n-th ```ini block of the README.
ini_block() { awk -v want="$1" '/^```ini$/ { n++; if (n == want) { f = 1; next } } /^```$/ { f = 0 } f' docs/evictd.md; }

ini_block 1 >"$tmp/evictd.conf"
ini_block 2 >"$tmp/pod.conf"
ok "the README has a configuration example" grep -q '^\[eviction-hard\]' "$tmp/evictd.conf"
ok "the README has a pod descriptor example" grep -q '^\[pod\]' "$tmp/pod.conf"

config_loads() {
	"$EVICTD" --once --config "$tmp/evictd.conf" --cgroup-root "$FX/root" --proc-root "$FX/proc" \
		--metadata-dir "$FX/pods" >/dev/null 2>"$tmp/err" || { sed 's/^/# /' "$tmp/err"; return 1; }
}
ok "evictd accepts the README's configuration as written" config_loads

descriptor_names_pod() {
	# Put the example descriptor in place of a fixture pod's own (root-owned, 0644, root-only dir).
	local meta=$tmp/meta uid
	mkdir -m 0755 "$meta" && cp -p "$FX/pods/"*.conf "$meta/" || return 1
	uid=$(basename "$(ls "$meta"/*.conf | head -1)" .conf)
	cp "$tmp/pod.conf" "$meta/$uid.conf" && chmod 0644 "$meta/$uid.conf"
	"$EVICTD" --once --json --config "$tmp/evictd.conf" --cgroup-root "$FX/root" --proc-root "$FX/proc" \
		--metadata-dir "$meta" >"$tmp/out.json" 2>"$tmp/err" || { sed 's/^/# /' "$tmp/err"; return 1; }
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
pods = {p["uid"]: p for p in d["ranking"]["memory"]}
p = pods[sys.argv[2]]
assert p["pod"] == "default/web-1" and p["priority"] == 1000000 and p["request_bytes"] == 512 << 20, p
' "$tmp/out.json" "$uid"
}
if [ "$(id -u)" -eq 0 ]; then
	ok "the README's descriptor is trusted and names the pod (priority from its class)" descriptor_names_pod
else
	skip "the README's descriptor is trusted and names the pod" "descriptors must be root-owned"
fi
done_testing
