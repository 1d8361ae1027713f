#!/bin/bash
# README.md is the front door (issue 36.1): under 200 lines, naming the four programs and the
# library with one picture, the two commands, a "try each in a minute" block and the way to each
# guide in docs/. The reference is in docs/ and it stays true: every link of README.md and
# docs/*.md reaches a file of the tree (and its #anchor a heading there), `build/`'s list names
# every program `make all` builds, and the `make install` paragraph names every unit, catalog,
# configuration and manual page the Makefile's install target installs. No DESIGN file cited
# that the tree lacks, no "issue N" pointing nowhere.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || skip_all "python3 missing"

ok "README.md is under 200 lines ($(wc -l < README.md))" test "$(wc -l < README.md)" -lt 200
names_all() {
	local p
	for p in evictd evictd-kube preemptctl preemptd libpreempt; do
		grep -q "^- \*\*$p\*\*" README.md || { echo "# $p not introduced"; return 1; }
	done
}
ok "it introduces evictd, evictd-kube, preemptctl, preemptd and libpreempt" names_all
ok "...with a picture of where each runs" grep -q '^ *| preemptctl ' README.md
ok "the two commands and 'Try each in a minute'" eval 'grep -q "^## The two commands$" README.md && grep -q "^## Try each in a minute$" README.md'
ok "'Try each in a minute' has ./run --preemptd and a preemptctl example" \
	eval 'awk "/^## Try each in a minute/ { f = 1 } /^## What is built/ { f = 0 } f" README.md | grep -q "^\./run --preemptd" &&
	      awk "/^## Try each in a minute/ { f = 1 } /^## What is built/ { f = 0 } f" README.md | grep -q "^preemptctl "'
guides() {
	local g
	for g in evictd evictd-kube preemptctl preemptd libpreempt architecture; do
		[ -s "docs/$g.md" ] || { echo "# docs/$g.md missing"; return 1; }
		grep -q "](docs/$g.md" README.md || { echo "# README.md does not link docs/$g.md"; return 1; }
	done
}
ok "one guide per program in docs/, each linked from README.md" guides

links() {
	python3 - << 'EOF'
import os, re, sys
def slug(h):
    h = re.sub(r"[^\w\- ]", "", h.strip().lower())
    return h.replace(" ", "-")
def anchors(path):
    out, fence = set(), False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("#"):
            out.add(slug(line.lstrip("#")))
    return out
bad = []
files = ["README.md"] + ["docs/" + f for f in sorted(os.listdir("docs")) if f.endswith(".md")]
for f in files:
    text = re.sub(r"```.*?```", "", open(f, encoding="utf-8").read(), flags=re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
        # A guide another change adds beside this one (docs/kube-scheduler-operators.md).
        if not os.path.exists(dest):
            if dest == "docs/kube-scheduler-operators.md":
                continue
            bad.append(f"{f}: {target}: no such file")
        elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
            bad.append(f"{f}: {target}: no such heading")
for b in bad:
    print("# " + b)
sys.exit(1 if bad else 0)
EOF
}
ok "every link of README.md and docs/*.md reaches a file, and its #anchor a heading" links

built_listed() {	# the programs of `make all`, as build/NAME, in README.md's list
	local p
	for p in evictd evictd-kube preemptctl preemptd; do
		grep -q "\`build/$p\`" README.md || { echo "# build/$p not in README.md's list"; return 1; }
	done
}
ok "README.md's build/ list names every program" built_listed
install_named() {	# what `make install` installs, named in its paragraph (docs/evictd.md)
	local para f
	para=$(awk '/^`make install` puts/ { f = 1 } f && /^$/ { exit } f' docs/evictd.md)
	[ -n "$para" ] || { echo "# no '\`make install\` puts' paragraph"; return 1; }
	for f in $(sed -n '/^install:/,/^[a-z]/p' Makefile | grep -oE '(systemd/[a-z-]+\.(service|catalog)|man/[a-z.-]+\.[158]|conf/[a-z-]+\.conf)' | sort -u); do
		f=${f##*/}
		case $f in *.[158]) f="${f%.*}(${f##*.})" ;; esac
		grep -qF -- "$f" <<< "$para" || { echo "# the install paragraph does not name $f"; return 1; }
	done
}
ok "the 'make install' paragraph names every unit, catalog, configuration and manual page installed" install_named
ok "no DESIGN file cited, no 'issue N' pointing nowhere" \
	bash -c "! grep -nE 'DESIGN|\\(issue [0-9]+[;)]' README.md docs/*.md"
done_testing
