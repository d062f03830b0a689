"""docs_links.py - every path the docs name is a file of the repository.

    docs_links.py ROOT          check docs/*.md, docs/*.1, docs/*.8 and
                                README.md; print one line per bad reference
                                ("FILE:LINE: why: REF"), exit 1 if any
    docs_links.py ROOT --cited  print the docs/*.md files the man pages
                                cite, one a line

What counts as a reference:
- a Markdown link's target, unless it is a URL ("scheme:...");
- a path that starts with one of the repository's directories (libsym/,
  symd/, tools/, tests/, fixtures/, docs/), anywhere, code blocks too;
- a NAME.md (a document is named by its file name alone);
- a path that starts with ../, outside code blocks;
and anything naming ../shared or /work/shared, the project's working
notes next to the checkout, which a reader of the repository does not
have.  A reference resolves if it names a tracked file or directory,
relative to the document's directory or to the root, or is the start of
a tracked path ("tests/e2e/t0100" for the t0100 test, "fixtures/src/
unwind_" for unwind_*.c).  Build outputs (build/, fixtures/build/, bin/,
lib/, __pycache__) are not files of the repository and are not checked,
nor are the few paths below that name no file of this repository.
"""
import os
import re
import subprocess
import sys

# Paths the docs name that are not this repository's, and why.
NOT_OURS = {
    "../sym": "bin/compat/'s links point to the sym next to them",
    "../lib/libsymprof.so": "relative to the installed sym binary",
    "../sysdeps/nptl/libc_start_call_main.h": "glibc's, in an example",
    "tools/perf/util/unwind-libdw.c": "a file of the Linux tree (perf)",
}
GENERATED = re.compile(r"^(?:build/|fixtures/build/|bin/|lib/)|__pycache__")

SEG = r"[\w+-][\w.+-]*"
BEFORE = r"(?<![\w/.@:~$-])"
REPO = re.compile(BEFORE + r"((?:libsym|symd|tools|tests|fixtures|docs)/"
                  r"(?:" + SEG + r"/)*(?:" + SEG + r")?)")
UP = re.compile(BEFORE + r"((?:\.\./)+(?:" + SEG + r"/?)*)")
MD = re.compile(BEFORE + r"(" + SEG + r"\.md)\b")
LINK = re.compile(r"\]\(([^)\s]+)\)")
OUTSIDE = re.compile(r"(?:\.\./|/work/)shared\b")
# A man page names a document as docs/NAME.md.
CITED = re.compile(r"docs/([\w.-]+\.md)")


def tracked(root):
    out = subprocess.run(["git", "-C", root, "ls-files"], check=True,
                         capture_output=True, text=True).stdout.split("\n")
    return [f for f in out if f]


def man_text(text):
    return text.replace("\\-", "-").replace("\\&", "")


def resolves(doc, ref, files, paths):
    ref = ref.split("#")[0].rstrip("/.,:;")
    if not ref or ref in NOT_OURS or GENERATED.search(ref):
        return True
    for cand in (os.path.normpath(os.path.join(os.path.dirname(doc), ref)),
                 os.path.normpath(ref)):
        if cand.startswith(".."):
            continue
        if cand in paths or any(f.startswith(cand) for f in files):
            return True
    return "/" not in ref and any(os.path.basename(f) == ref for f in files)


def refs_of(line, in_code):
    refs = {m.group(1) for m in LINK.finditer(line)
            if not re.match(r"[a-z][a-z0-9+.-]*:", m.group(1))}
    refs |= {m.group(1) for m in REPO.finditer(line)}
    refs |= {m.group(1) for m in MD.finditer(line)}
    if not in_code:
        refs |= {m.group(1) for m in UP.finditer(line)}
    return refs


def check(root):
    files = tracked(root)
    paths = set(files)
    for f in files:
        d = os.path.dirname(f)
        while d:
            paths.add(d)
            d = os.path.dirname(d)
    docs = sorted(f for f in files
                  if re.match(r"docs/[^/]+\.(md|1|8)$", f)) + ["README.md"]
    bad = []
    for doc in docs:
        with open(os.path.join(root, doc), encoding="utf-8") as fh:
            text = fh.read()
        if doc.endswith((".1", ".8")):
            text = man_text(text)
        code = False
        for n, line in enumerate(text.splitlines(), 1):
            if line.startswith("```"):
                code = not code
            if OUTSIDE.search(line):
                bad.append("%s:%d: points outside the repository: %s" %
                           (doc, n, OUTSIDE.search(line).group(0)))
            for ref in sorted(refs_of(line, code or line.startswith("    "))):
                if not resolves(doc, ref, files, paths):
                    bad.append("%s:%d: no such file in the repository: %s"
                               % (doc, n, ref))
    return bad


def cited(root):
    names = set()
    for page in ("docs/sym.1", "docs/symd.8"):
        with open(os.path.join(root, page), encoding="utf-8") as fh:
            names |= set(CITED.findall(man_text(fh.read())))
    return sorted(names)


def main():
    root = sys.argv[1]
    if sys.argv[2:] == ["--cited"]:
        print("\n".join(cited(root)))
        return 0
    bad = check(root)
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
