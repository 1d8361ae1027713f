#!/bin/bash
# libpreempt's symbol hygiene, as a consumer linking it sees it:
#  - the static archive defines only pp_ symbols: public ones (declared PP_EXPORT in preempt.h) and
#    internal ones under the reserved pp__ prefix, so that a program linking libpreempt.a with its
#    own helpers (a controller had its own arena_strdup) gets no "multiple definition" errors;
#  - the shared library exports exactly the PP_EXPORT API (no pp__ helper leaks into the ABI);
#  - SONAME libpreempt.so.0 and no dependency but libc (sanitizer runtimes in SANITIZE=1 builds).
. "$(dirname "$0")/../lib.sh"
A=$BUILD/libpreempt.a
SO=$BUILD/libpreempt.so.0
H=lib/include/preempt.h
[ -f "$A" ] && [ -e "$SO" ] || skip_all "$A or $SO not built"
for tool in nm objdump; do command -v $tool >/dev/null || skip_all "$tool not installed"; done

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
# Every function the header exports: "PP_EXPORT <type> name(", declarations may span lines (up to
# the first parenthesis: a parameter may be a function pointer).
tr '\n' ' ' <"$H" | grep -oE 'PP_EXPORT[^;{(]*\(' | grep -oE '\bpp_[A-Za-z0-9_]*[[:space:]]*\($' |
	tr -d '( ' | sort -u >"$tmp/declared"
nm -g --defined-only "$A" | awk 'NF == 3 { print $3 }' | sort -u >"$tmp/archive"
nm -D --defined-only "$SO" | awk 'NF == 3 && $2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u >"$tmp/exported"

report() {	# report TITLE FILE: prints the offending symbols as TAP comments, fails if any
	if [ -s "$2" ]; then echo "# $1:"; sed 's/^/#   /' "$2"; return 1; fi
}

ok "header declares the API (sanity of the extraction)" test "$(wc -l <"$tmp/declared")" -ge 20
grep -v '^pp_' "$tmp/archive" >"$tmp/bad-prefix"
ok "libpreempt.a defines only pp_ symbols" report "globals without the pp_ prefix" "$tmp/bad-prefix"
grep -v '^pp__' "$tmp/archive" | comm -23 - "$tmp/declared" >"$tmp/bad-internal"
ok "libpreempt.a internals use the pp__ prefix" report "neither in preempt.h nor pp__-prefixed" "$tmp/bad-internal"
comm -23 "$tmp/exported" "$tmp/declared" >"$tmp/undeclared"
ok "libpreempt.so exports only symbols declared in preempt.h" report "exported, not declared" "$tmp/undeclared"
grep '^pp__' "$tmp/exported" >"$tmp/leaked"
ok "libpreempt.so exports no pp__ internal" report "internal symbols exported" "$tmp/leaked"
comm -13 "$tmp/exported" "$tmp/declared" >"$tmp/missing"
ok "every PP_EXPORT function is exported" report "declared, not exported" "$tmp/missing"

objdump -p "$SO" >"$tmp/dyn"
soname_ok() { grep -qE '^[[:space:]]*SONAME[[:space:]]+libpreempt\.so\.0$' "$tmp/dyn" || { grep SONAME "$tmp/dyn" | sed 's/^/# /'; return 1; }; }
ok "SONAME is libpreempt.so.0" soname_ok
awk '$1 == "NEEDED" { print $2 }' "$tmp/dyn" >"$tmp/needed"
# SANITIZE=1 links the ASan/UBSan runtimes (and what they pull in) into every object.
allowed='^libc\.so\.6$'
grep -qE '^lib(a|ub)san\.so' "$tmp/needed" && allowed='^(libc\.so\.6|lib(a|ub)san\.so\.[0-9]+|libm\.so\.6|libgcc_s\.so\.1|libstdc\+\+\.so\.6)$'
grep -vE "$allowed" "$tmp/needed" >"$tmp/bad-needed"
ok "NEEDED libc only" report "unexpected dependencies" "$tmp/bad-needed"
ok "NEEDED libc" grep -qx 'libc.so.6' "$tmp/needed"
done_testing
