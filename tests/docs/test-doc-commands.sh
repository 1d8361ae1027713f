#!/bin/bash
# The doc test (issue 22): every command shown in README.md and in the manual pages' EXAMPLES
# runs as written from a fresh clone after `make`, and prints what the documentation shows where
# it shows output. The rules (which blocks are commands, the "# needs: WHAT" marker for a command
# that cannot run on a development machine) are in tests/docs/doc_commands.py and README.md.
. "$(dirname "$0")/../lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$BUILD" 2>/dev/null && pwd) || skip_all "$BUILD not built"
for p in evictd preemptctl evictd-kube libpreempt.so.0 libpreempt-uninstalled.pc; do
	[ -e "$build/$p" ] || skip_all "$BUILD/$p not built"
done
command -v python3 >/dev/null || skip_all "python3 missing"
scratch=$(mktemp -d); trap 'rm -rf "$scratch"' EXIT
python3 "$top/tests/docs/doc_commands.py" "$top" "$build" "$scratch"
