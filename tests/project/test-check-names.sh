#!/bin/bash
# scripts/check-names.py (run by `make lint`): the tree passes it, and each kind of breach planted
# in a copy of the tree fails it with the file and line: a static function or a goto label named
# as a function of another file, a public function without its module's prefix, and a public name
# defined in two files (each program linking one, no linker would object).
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip_all "python3 missing"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
check() { python3 scripts/check-names.py "$@"; }
ok "the tree passes" check .

fresh_copy() { rm -rf "$tmp/t"; mkdir "$tmp/t"; cp -r lib base kube cri agent controller "$tmp/t/"; }
fails_with() {	# fails_with WORDS: the check fails on the copy and names the breach
	check "$tmp/t" 2>"$tmp/err" && { echo "# passed"; return 1; }
	grep -q "$1" "$tmp/err" || { echo "# expected '$1' in:"; sed 's/^/#   /' "$tmp/err"; return 1; }
}
fresh_copy
printf '\nstatic int karena_reset(void)\n{\n\treturn 0;\n}\n' >> "$tmp/t/controller/shadow/shadow.c"
ok "a static function named as another file's public one fails" \
	fails_with "controller/shadow/shadow.c:[0-9]*: static function 'karena_reset' has the name of kube/karena.c"
fresh_copy
printf '\nvoid cycle_planted(void);\nvoid cycle_planted(void)\n{\n\tgoto clock_mono_ns;\nclock_mono_ns:\n\treturn;\n}\n' >> "$tmp/t/controller/cycle/cycle.c"
ok "a goto label named as a function fails" \
	fails_with "controller/cycle/cycle.c:[0-9]*: label 'clock_mono_ns' has the name of a function at base/clock.c"
fresh_copy
printf '\nint evaluate(void);\nint evaluate(void)\n{\n\treturn 0;\n}\n' >> "$tmp/t/agent/evictd/engine.c"
ok "a public function without its module's prefix fails" \
	fails_with "agent/evictd/engine.c:[0-9]*: public function 'evaluate' carries no prefix"
fresh_copy
printf '\nint preemptd_config_parse(void);\nint preemptd_config_parse(void)\n{\n\treturn 0;\n}\n' >> "$tmp/t/agent/evictd/engine.c"
ok "a public function defined in two files (one per program) fails" \
	fails_with "public function 'preemptd_config_parse' is also defined at"
done_testing
