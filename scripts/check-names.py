#!/usr/bin/env python3
"""check-names.py [ROOT] — `make lint`'s naming rules over the C sources (exit 1 on a breach).

1. A public (non-static) function outside lib/ carries its module's prefix: the first one or two
   words of its name (separators dropped) begin its file's or its folder's name, are begun by
   it, or abbreviate it (same first letter, letters in order: yv_ for yamlval, kb_ for kbuild),
   or are a short form the folder has long used (SHORT_FORMS). lib/'s public names are pp_ or pp__.
2. No static function, and no goto label, has the name of a function defined in another file,
   and no public name is defined twice (once in each program): a reader (or a tool) that meets
   `decide(` or `goto fail` must not have two places to look.

Functions are read from the source, not from objects, so that a static function the compiler
inlined is still seen. The reader knows this tree's style: a definition starts at column 0 and
its body's brace follows its closing parenthesis.
"""
import os
import re
import sys

DIRS = ("lib", "base", "kube", "cri", "agent", "controller")
# Short forms a folder has used since before the rule, each the name of its central type.
SHORT_FORMS = {
    "kube": ("kube", "k8s"),
    "base/jsonw": ("jb",),  # the writer's type is jsonbuf
}
IDENT = re.compile(r"[A-Za-z_]\w*")
ATTRIBUTE = re.compile(r"__attribute__\s*\(\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)\)")
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "do", "else", "case", "default",
            "_Static_assert", "static_assert", "__attribute__", "_Alignof", "_Generic", "typeof"}


def strip(text):
    """Comments, strings and character constants blanked out; lines and columns kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + c)
            i = j + 1
        elif c == "#" and (i == 0 or text[i - 1] == "\n"):
            j = i
            while True:  # a preprocessor line, with its continuations
                k = text.find("\n", j)
                if k < 0:
                    k = n
                if k > 0 and text[k - 1] == "\\":
                    j = k + 1
                    continue
                break
            out.append(re.sub(r"[^\n]", " ", text[i:k]))
            i = k
        else:
            out.append(c)
            i += 1
    return "".join(out)


def read_file(path):
    """(functions [(name, static, line)], labels [(name, line)]) of one C file."""
    src = strip(open(path, encoding="utf-8", errors="replace").read())
    funcs, labels = [], []
    depth, i, n = 0, 0, len(src)
    decl_start = 0  # where the current file-scope declaration began
    while i < n:
        c = src[i]
        if c == "{":
            if depth == 0:
                # attributes blanked (same length, so that positions hold): format(...) is no name
                head = ATTRIBUTE.sub(lambda a: " " * len(a.group(0)), src[decl_start:i])
                m = next((m for m in re.finditer(r"\b([A-Za-z_]\w*)\s*\(", head) if m.group(1) not in KEYWORDS), None)
                if m and head.rstrip().endswith(")") and "=" not in head[:m.start()] \
                        and not re.match(r"\s*typedef\b", head):
                    funcs.append((m.group(1), bool(re.search(r"\bstatic\b", head[:m.start()])),
                                  src.count("\n", 0, decl_start + m.start(1)) + 1))
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                decl_start = i + 1
        elif c == ";" and depth == 0:
            decl_start = i + 1
        elif depth > 0 and (c.isalpha() or c == "_") and (i == 0 or not (src[i - 1].isalnum() or src[i - 1] == "_")):
            m = IDENT.match(src, i)
            word = m.group(0)
            rest = src[m.end():]
            if re.match(r"[ \t]*:(?!:)", rest) and word != "default":
                before = src[:i].rstrip()
                if before and before[-1] in ";{}:" and not re.search(r"\b(case)\b[^;{}]*$", before[-40:]) \
                        and not (before[-1] == ":" and "?" in before[-80:].split(";")[-1]):
                    labels.append((word, src.count("\n", 0, i) + 1))
            i = m.end()
            continue
        i += 1
    return funcs, labels


def abbreviates(word, name):
    if not word or not name or word[0] != name[0]:
        return False
    it = iter(name)
    return all(ch in it for ch in word)


def module_names(rel):
    d, b = os.path.split(os.path.splitext(rel)[0])
    return [re.sub(r"[-_]", "", x) for x in (b, os.path.basename(d)) + tuple(re.split(r"[-_]", b)) if x]


def prefixed(name, rel):
    if name == "main":
        return True
    if rel.startswith("lib/"):
        return name.startswith("pp_")
    stem = os.path.splitext(rel)[0]
    for key, forms in SHORT_FORMS.items():
        if stem == key or stem.startswith(key + "/"):
            if any(name.startswith(f + "_") for f in forms):
                return True
    words = name.split("_")
    if len(words) < 2:
        return False
    candidates = {words[0], words[0] + words[1]} if len(words) > 2 else {words[0]}
    for mod in module_names(rel):
        for w in candidates:
            if len(w) >= 2 and (mod.startswith(w) or w.startswith(mod) or abbreviates(w, mod)):
                return True
    return False


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    files = []
    for d in DIRS:
        for dirpath, _, names in os.walk(os.path.join(root, d)):
            for f in sorted(names):
                if f.endswith((".c", ".h")) and ".pb-c." not in f:
                    files.append(os.path.relpath(os.path.join(dirpath, f), root))
    defined = {}  # function name -> [(file, static, line)]
    labels = []
    for rel in sorted(files):
        funcs, labs = read_file(os.path.join(root, rel))
        for name, static, line in funcs:
            defined.setdefault(name, []).append((rel, static, line))
        labels += [(rel, name, line) for name, line in labs]
    problems = []
    for name, where in sorted(defined.items()):
        public = [f"{r}:{ln}" for r, st, ln in where if not st and r.endswith(".c")]
        if len(public) > 1 and name != "main":  # two programs may each link one: no linker stops it
            problems.append(f"{public[1]}: public function '{name}' is also defined at {public[0]}")
        for rel, static, line in where:
            if not static and rel.endswith(".c") and not prefixed(name, rel):
                problems.append(f"{rel}:{line}: public function '{name}' carries no prefix of its module")
            if static:
                others = [f"{r}:{ln}" for r, s, ln in where if r != rel and (not s or r.endswith(".h"))]
                if others:
                    problems.append(f"{rel}:{line}: static function '{name}' has the name of {', '.join(others)}")
    for rel, name, line in labels:
        if name in defined:
            problems.append(f"{rel}:{line}: label '{name}' has the name of a function at "
                            + ", ".join(f"{r}:{ln}" for r, _, ln in defined[name]))
    for p in problems:
        print(p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
