#!/bin/bash
# The README's journal reference cannot drift from the code (issue 22): its MESSAGE_ID table lists
# exactly the catalog's entries (systemd/evictd.catalog), and its field list names exactly the
# EVICTD_* fields the C sources (agent/, kube/) send ("EVICTD_..." string literals: the FIELD_* definitions).
. "$(dirname "$0")/../lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# The docs/evictd.md section "Reading decisions from the journal", up to the next "## ".
awk '/^## Reading decisions from the journal/ { f = 1; next } /^## / { f = 0 } f' docs/evictd.md >"$tmp/section"
ok "docs/evictd.md has the journal section" test -s "$tmp/section"

same() {	# same WHAT DOCUMENTED ACTUAL: the two sorted lists are equal; says what differs
	local extra missing
	missing=$(comm -13 "$2" "$3" | tr '\n' ' ') extra=$(comm -23 "$2" "$3" | tr '\n' ' ')
	[ -z "$missing$extra" ] && return 0
	[ -z "$missing" ] || echo "# $1 missing from docs/evictd.md: $missing"
	[ -z "$extra" ] || echo "# $1 in docs/evictd.md but not in the code: $extra"
	return 1
}

grep -oE '^\| `[0-9a-f]{32}`' "$tmp/section" | grep -oE '[0-9a-f]{32}' | sort -u >"$tmp/readme-ids"
grep -oE '^-- [0-9a-f]{32}' systemd/evictd.catalog | cut -c4- | sort -u >"$tmp/catalog-ids"
ok "the catalog has entries" test -s "$tmp/catalog-ids"
ok "the MESSAGE_ID table lists every catalog entry, and only those ($(wc -l <"$tmp/catalog-ids"))" \
	same "MESSAGE_IDs" "$tmp/readme-ids" "$tmp/catalog-ids"

# The paragraph that starts with "Fields:".
awk '/^Fields:/ { f = 1 } f && /^$/ { exit } f' "$tmp/section" | grep -oE 'EVICTD_[A-Z_]+' | sort -u >"$tmp/readme-fields"
grep -rhoE '"EVICTD_[A-Z0-9_]+"' --include='*.c' --include='*.h' agent kube | tr -d '"' | sort -u >"$tmp/code-fields"
ok "the sources define fields" test -s "$tmp/code-fields"
ok "the field list names every EVICTD_* field of the sources, and only those ($(wc -l <"$tmp/code-fields"))" \
	same "fields" "$tmp/readme-fields" "$tmp/code-fields"
done_testing
