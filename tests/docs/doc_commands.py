#!/usr/bin/env python3
"""The doc test: every command README.md, docs/*.md and the manual pages' EXAMPLES show, run as written.

What counts as a command (the convention README.md states under "Commands in this documentation"):

  README.md, docs/*.md (the same rules)
              fenced ```sh blocks: every line is a command (a line ending in "\\" continues on
              the next); its exit status must be 0.
              fenced ```console blocks: "$ " lines are commands; the lines after one, up to the
              next "$ " line, are what it prints (standard output and error, as a terminal shows
              them), compared exactly. A command without output lines must exit 0.
              the ```c block is examples/consumer.c, byte for byte.
  man/*.1 *.8 EXAMPLES: ".Dl" lines and ".Bd -literal" blocks are commands (exit status 0).
  man/*.5     EXAMPLES: the ".Bd -literal" block is a configuration file; evictd must accept it.

A command that cannot run on a development machine says so where it is shown: a line ending in
"# needs: WHAT" (or a block whose first line is "# needs: WHAT") is skipped, with WHAT as the
reason. Each block runs in one shell (so "export" carries to the next line), in a scratch
directory that looks like the top of a fresh clone after `make` (the build directory as build/),
with build/ first on PATH: the programs by their installed names, as the README says.

Usage: doc_commands.py TOP BUILD SCRATCH; prints TAP, exits 0, 1 (a failure) or 77.
"""
import os
import re
import subprocess
import sys

NEEDS = re.compile(r"(?:^|\s)#\s*needs:\s*(.+?)\s*$")

# Blocks of the README's "two commands" section run the whole build or the test suite itself;
# they are exercised by `make fresh` (tests/fresh/run.sh), not here. Keyed by the command.
NOT_HERE = {
    "./run": "runs evictd until Ctrl-C (make fresh runs it; tests/project/test-run-words.sh checks its first line and its --help)",
    "./run --preemptd": "runs preemptd until Ctrl-C (tests/project/test-run-preemptd.sh runs it as written)",
    "./check": "runs the test suite this test is part of (make fresh runs it)",
}


# Commands that change the machine they run on. Shown unmarked, they would be run here (as root
# even, in CI): the test refuses them instead and asks for a "# needs:" marker.
CHANGES_MACHINE = re.compile(
    r"^\s*(sudo\s+)?(systemctl\s+(?!(status|cat|show|is-\w+)\b)|make\s+(?!.*DESTDIR=)install\b|"
    r"journalctl\s+--update-catalog|apt(-get)?\s+(install|remove|purge)|dpkg\s+-i|ln\s|install\s|rm\s+-\w*r)")


class Case:
    def __init__(self, where, kind, text, expect=None, skip=None, block=None):
        self.where, self.kind, self.text = where, kind, text
        self.expect, self.skip, self.block = expect, skip, block


def split_needs(line):
    """("command", reason or None): a trailing "# needs: ..." comment marks the line."""
    m = NEEDS.search(line)
    if not m:
        return line, None
    return line[: m.start()].rstrip(), "needs " + m.group(1)


def commands_of(lines, first_lineno, where_file, block, console):
    """Cases from the lines of one block (list of str), numbered from first_lineno."""
    cases = []
    block_skip = None
    i = 0
    if lines and lines[0].lstrip().startswith("#"):
        _, block_skip = split_needs(lines[0])
    while i < len(lines):
        line, lineno = lines[i], first_lineno + i
        i += 1
        if console:
            if not line.startswith("$ "):
                continue
            cmd = line[2:]
        else:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            cmd = line
        while cmd.endswith("\\") and i < len(lines):
            cmd = cmd[:-1] + "\n" + (lines[i][2:] if console and lines[i].startswith("> ") else lines[i])
            i += 1
        expect = None
        if console:
            out = []
            while i < len(lines) and not lines[i].startswith("$ "):
                out.append(lines[i])
                i += 1
            while out and not out[-1].strip():
                out.pop()
            expect = "".join(o + "\n" for o in out) if out else None
        cmd, skip = split_needs(cmd)
        skip = skip or block_skip or NOT_HERE.get(cmd.split("#")[0].strip())
        cases.append(Case(f"{where_file}:{lineno}", "cmd", cmd, expect, skip, block))
    return cases


def readme_cases(path):
    cases = []
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    block = 0
    while i < len(lines):
        m = re.match(r"^```(\w*)$", lines[i])
        if not m:
            i += 1
            continue
        lang, start = m.group(1), i + 1
        j = start
        while j < len(lines) and lines[j] != "```":
            j += 1
        body = lines[start:j]
        block += 1
        if lang in ("sh", "console"):
            cases += commands_of(body, start + 1, os.path.basename(path), f"{path}#{block}", lang == "console")
        elif lang == "c":
            cases.append(Case(f"{os.path.basename(path)}:{start + 1}", "file", "\n".join(body) + "\n",
                              expect="examples/consumer.c"))
        i = j + 1
    return cases


def roff_text(s):
    """The text mandoc shows for a line of an EXAMPLES block (the escapes used in this project)."""
    for a, b in (("\\-", "-"), ("\\(aq", "'"), ("\\(dq", '"'), ("\\&", ""), ("\\e", "\\")):
        s = s.replace(a, b)
    return s


def manpage_cases(path):
    cases = []
    lines = open(path, encoding="utf-8").read().split("\n")
    section = path.rsplit(".", 1)[-1]
    name = os.path.relpath(path, os.path.dirname(os.path.dirname(path)))
    in_examples = False
    i = 0
    block = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith(".Sh "):
            in_examples = line.strip() == ".Sh EXAMPLES"
            continue
        if not in_examples:
            continue
        if line.startswith(".Dl "):
            block += 1
            if section == "5":
                continue
            cases += commands_of([roff_text(line[4:])], i, name, f"{path}#{block}", False)
        elif line.startswith(".Bd -literal"):
            start = i
            while i < len(lines) and not lines[i].startswith(".Ed"):
                i += 1
            body = [roff_text(b) for b in lines[start:i] if not b.startswith(".")]
            block += 1
            if section == "5":
                cases.append(Case(f"{name}:{start + 1}", "config", "\n".join(body) + "\n"))
            else:
                cases += commands_of(body, start + 1, name, f"{path}#{block}", False)
    return cases


def run_block(cases, cwd, env, scratch):
    """Runs the commands of one block in one shell; fills case.out and case.rc."""
    script = ["set +e"]
    for n, c in enumerate(cases):
        if c.skip:
            continue
        if CHANGES_MACHINE.search(c.text):
            continue
        script.append(f'{{ {c.text}\n}} </dev/null >"{scratch}/{n}.out" 2>&1; echo $? >"{scratch}/{n}.rc"')
    try:
        subprocess.run(["bash", "-c", "\n".join(script)], cwd=cwd, env=env, timeout=300,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        pass
    for n, c in enumerate(cases):
        if c.skip:
            continue
        try:
            c.out = open(f"{scratch}/{n}.out", encoding="utf-8", errors="replace").read()
            c.rc = int(open(f"{scratch}/{n}.rc").read())
        except (OSError, ValueError):
            c.out, c.rc = "", None  # the block timed out before it


def diag(text):
    for line in text.rstrip("\n").split("\n"):
        print(f"#   {line}")


def main():
    top, build, scratch = (os.path.abspath(a) for a in sys.argv[1:4])
    pages = sorted(os.path.join(top, "man", f) for f in os.listdir(os.path.join(top, "man"))
                   if re.search(r"\.[158]$", f))
    cases = readme_cases(os.path.join(top, "README.md"))
    docs = os.path.join(top, "docs")
    for f in sorted(os.listdir(docs)) if os.path.isdir(docs) else []:
        if f.endswith(".md"):
            cases += readme_cases(os.path.join(docs, f))
    for p in pages:
        cases += manpage_cases(p)
    if not cases:
        print("not ok 1 - the README, docs/ and manual pages show commands")
        print("1..1")
        return 1

    # A fresh clone after `make`: the tree's files, the build directory as build/.
    clone = os.path.join(scratch, "clone")
    os.makedirs(clone)
    for e in os.listdir(top):
        if e == ".git" or e.startswith("build"):
            continue
        os.symlink(os.path.join(top, e), os.path.join(clone, e))
    os.symlink(build, os.path.join(clone, "build"))
    home = os.path.join(scratch, "home")
    os.makedirs(home)
    env = dict(os.environ, PATH=os.path.join(clone, "build") + os.pathsep + os.environ["PATH"], HOME=home)
    env.pop("PKG_CONFIG_PATH", None)
    env.pop("LD_LIBRARY_PATH", None)

    # An ASan-instrumented library cannot be linked by a plain `cc` (the README's command).
    sanitized = b"__asan_init" in open(os.path.join(build, "libpreempt.so.0"), "rb").read()
    for c in cases:
        if c.kind == "cmd" and not c.skip and sanitized and re.search(r"\bcc\b|\./myctl", c.text):
            c.skip = f"here {os.path.basename(build)} holds an ASan build of the library; a plain cc cannot link it"

    blocks = {}
    for c in cases:
        if c.kind == "cmd":
            blocks.setdefault(c.block, []).append(c)
    for b, bc in blocks.items():
        d = os.path.join(scratch, f"block{len(os.listdir(scratch))}")
        os.makedirs(d)
        run_block(bc, clone, env, d)

    n = failed = 0
    counts = {"run": 0, "skipped": 0}
    for c in cases:
        n += 1
        title = f"{c.where}: {c.text.splitlines()[0] if c.kind == 'cmd' else c.kind}"
        if c.kind == "file":
            want = open(os.path.join(top, c.expect), encoding="utf-8").read()
            good = c.text == want
            print(f"{'ok' if good else 'not ok'} {n} - {c.where}: the C example is {c.expect}, byte for byte")
            if not good:
                failed += 1
            continue
        if c.kind == "config":
            f = os.path.join(scratch, f"example{n}.conf")
            open(f, "w").write(c.text)
            fx = os.path.join(top, "tests/fixtures/cgroup/systemd")
            p = subprocess.run([os.path.join(build, "evictd"), "--once", "--config", f,
                                "--cgroup-root", f"{fx}/root", "--proc-root", f"{fx}/proc",
                                "--metadata-dir", f"{fx}/pods"], capture_output=True, text=True)
            good = p.returncode == 0
            print(f"{'ok' if good else 'not ok'} {n} - {c.where}: evictd accepts the example configuration")
            if not good:
                failed += 1
                diag(p.stderr)
            continue
        if c.skip:
            counts["skipped"] += 1
            print(f"ok {n} - {title} # SKIP {c.skip}")
            continue
        if CHANGES_MACHINE.search(c.text):
            failed += 1
            print(f"not ok {n} - {title}")
            print("# not run: it would change this machine; mark it with \"# needs: WHAT\" where it is shown")
            continue
        counts["run"] += 1
        if c.expect is not None:
            good = c.out == c.expect
        else:
            good = c.rc == 0
        print(f"{'ok' if good else 'not ok'} {n} - {title}")
        if not good:
            failed += 1
            print(f"# exit status {c.rc}")
            if c.expect is not None:
                import difflib
                diag("".join(difflib.unified_diff(c.expect.splitlines(True), c.out.splitlines(True),
                                                  "shown", "printed")) or "(same text)")
            else:
                diag(c.out or "(no output)")
    print(f"# {counts['run']} commands run, {counts['skipped']} skipped")
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
