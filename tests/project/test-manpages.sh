#!/bin/bash
# The manual pages: evictd(8), evictd-kube(8), evictd.conf(5), preemptctl(1) and preemptd(8) render without a single warning
# (mandoc -Tlint, groff -ww, man -l), evictd.conf(5) documents every section and key the parser
# accepts (`evictd --dump-config-keys`, the parser's own table), and each program's page documents
# every option of its getopt tables and of its --help.
. "$(dirname "$0")/../lib.sh"
EVICTD=$BUILD/evictd
PREEMPTCTL=$BUILD/preemptctl
[ -x "$EVICTD" ] && [ -x "$PREEMPTCTL" ] || skip_all "evictd and preemptctl not built"
command -v groff >/dev/null || command -v mandoc >/dev/null || skip_all "neither groff nor mandoc (groff-base, mandoc)"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
PAGES="man/evictd.8 man/evictd.conf.5 man/preemptctl.1 man/evictd-kube.8 man/preemptd.8"

# Plain text, one paragraph per line (no hyphenation or wrapping to split a key).
render() {
	# bold and underline are overstrikes ("x\bx"): keep the last character of each
	{ if command -v mandoc >/dev/null; then mandoc -Tascii -O width=500 "$1"
	  else groff -mandoc -Tascii -rLL=500n -P-cbou "$1" 2>/dev/null; fi; } | sed 's/.\x08//g'
}

for p in $PAGES; do
	[ -f "$p" ] || { ok "$p exists" false; continue; }
	clean_groff() { [ -z "$(groff -mandoc -Tutf8 -ww -z "$1" 2>&1)" ] || { groff -mandoc -Tutf8 -ww -z "$1" 2>&1 | sed 's/^/# /'; return 1; }; }
	if command -v groff >/dev/null; then ok "$p: groff -ww gives no warning" clean_groff "$p"
	else skip "$p: groff -ww gives no warning" "groff missing (groff-base)"; fi
	clean_mandoc() { mandoc -Tlint -W warning "$1" >"$tmp/lint" 2>&1 || { sed 's/^/# /' "$tmp/lint"; return 1; }; }
	if command -v mandoc >/dev/null; then ok "$p: mandoc -Tlint gives no warning" clean_mandoc "$p"
	else skip "$p: mandoc -Tlint gives no warning" "mandoc missing"; fi
	man_renders() { MANWIDTH=80 man -l "$1" 2>"$tmp/merr" | grep -q . && [ ! -s "$tmp/merr" ] || { sed 's/^/# /' "$tmp/merr"; return 1; }; }
	if command -v man >/dev/null; then ok "$p: man -l renders it, nothing on stderr" man_renders "$p"
	else skip "$p: man -l renders it" "man missing (man-db)"; fi
	render "$p" >"$tmp/$(basename "$p").txt"
done

keys_documented() {
	local missing="" line section key
	"$EVICTD" --dump-config-keys >"$tmp/keys" || return 1
	[ "$(wc -l <"$tmp/keys")" -gt 20 ] || { echo "# too few keys"; return 1; }
	while read -r line; do
		key=${line##* } section=${line% *}	# "priority-class NAME value": the key is the last word
		grep -qF "[$section]" "$tmp/evictd.conf.5.txt" || missing="$missing [$section]"
		grep -qE "(^|[^A-Za-z0-9.-])${key//./\\.}([^A-Za-z0-9-]|$)" "$tmp/evictd.conf.5.txt" ||
			missing="$missing [$section]$key"
	done <"$tmp/keys"
	[ -z "$missing" ] || { echo "# not in evictd.conf(5):$missing"; return 1; }
}
ok "evictd.conf(5) documents every section and key of evictd --dump-config-keys" keys_documented

# Long options from the getopt tables in the sources, and every option --help shows.
options_of() {	# options_of HELP-OUTPUT SOURCE...; a missing source is an error, not an empty list
	local f; for f in "${@:2}"; do [ -f "$f" ] || { echo "--MISSING-SOURCE-$f"; return; }; done
	{ grep -ho '{ "[a-z][a-z-]*", *\(no\|required\|optional\)_argument' "${@:2}" | sed 's/{ "\([^"]*\)".*/--\1/'
	  # the option column of --help: indented lines starting with "-", up to the description
	  grep -E '^ +-' "$1" | sed -E 's/^ +//; s/  .*//' | grep -oE -- '(^|[ ,])--?[A-Za-z][a-z-]*' | sed 's/^[ ,]*//'; } | sort -u
}
documented() {	# documented PAGE-TEXT OPTION...: each option appears as itself in the page
	local page=$1 missing=""; shift
	for o in "$@"; do grep -qE -- "(^|[^a-z-])$o([^a-z-]|$)" "$page" || missing="$missing $o"; done
	[ -z "$missing" ] || { echo "# missing:$missing"; return 1; }
}
"$EVICTD" --help >"$tmp/evictd.help"
mapfile -t eopts < <(options_of "$tmp/evictd.help" agent/evictd/evictd.c)
ok "evictd(8) documents every evictd option (${#eopts[@]})" documented "$tmp/evictd.8.txt" "${eopts[@]}"
{ "$PREEMPTCTL" --help; "$PREEMPTCTL" schedule --help; } >"$tmp/preemptctl.help" 2>&1
mapfile -t popts < <(options_of "$tmp/preemptctl.help" controller/preemptctl/*.c)
ok "preemptctl(1) documents every preemptctl option (${#popts[@]})" documented "$tmp/preemptctl.1.txt" "${popts[@]}"
EKUBE=$BUILD/evictd-kube
if [ -x "$EKUBE" ]; then
	"$EKUBE" --help >"$tmp/evictd-kube.help" 2>&1
	mapfile -t kopts < <(options_of "$tmp/evictd-kube.help" agent/evictd-kube/evictd-kube.c)
	ok "evictd-kube(8) documents every evictd-kube option (${#kopts[@]})" documented "$tmp/evictd-kube.8.txt" "${kopts[@]}"
else
	skip "evictd-kube(8) documents every evictd-kube option" "evictd-kube not built"
fi
PD=$BUILD/preemptd
if [ -x "$PD" ]; then
	"$PD" --help >"$tmp/preemptd.help" 2>&1
	# its long options come from a key table, not getopt literals: --help lists every one
	mapfile -t dopts < <(options_of "$tmp/preemptd.help" controller/preemptd/preemptd.c)
	ok "preemptd(8) documents every preemptd option (${#dopts[@]})" documented "$tmp/preemptd.8.txt" "${dopts[@]}"
else
	skip "preemptd(8) documents every preemptd option" "preemptd not built"
fi
ok "preemptctl(1) documents every command" documented "$tmp/preemptctl.1.txt" preempt schedule check
done_testing
