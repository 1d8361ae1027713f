#!/bin/bash
# `make help` lists every target the Makefile declares (.PHONY), one line each, and runs without
# build dependencies or a build.
. "$(dirname "$0")/../lib.sh"
command -v make >/dev/null || skip_all "make missing"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# A make started from `make check` must not join its parent's jobserver or inherit its goals.
help() { env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s --no-print-directory help; }
ok "make help succeeds" bash -c "$(declare -f help); help >'$tmp/help' 2>'$tmp/err'"
every_target_once() {
	local missing="" n t
	for t in $(sed -n 's/^\.PHONY: *//p' Makefile); do
		[ "$t" = all ] && continue # plain `make`
		n=$(grep -cE "^make $t( |$)" "$tmp/help")
		[ "$n" -eq 1 ] || missing="$missing $t($n)"
	done
	grep -qE '^make +[a-z]' "$tmp/help" && [ -z "$missing" ] || { echo "# not listed exactly once:$missing"; return 1; }
}
ok "every .PHONY target is listed exactly once" every_target_once
ok "plain make (the default target) is listed" grep -qE '^make +build' "$tmp/help"
ok "nothing was built for it" test ! -s "$tmp/err"
done_testing
