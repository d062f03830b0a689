#!/usr/bin/env python3
"""func-length.py [ROOT] - no C function of the product is over 150 lines.

Measures every function definition in the C files (.c and .h) under
libsym/, symd/ and tools/ of ROOT (default: this script's tree) and prints
TAP: one point per file, failing when a function of that file spans more
than LIMIT lines, counted from the first line of its head (return type and
name) to its closing brace, both included.  tests/ and fixtures/ are not
product code and are not measured.

An exception is an entry of ALLOW, "path:function", with a one-line
reason; only signal-handler code may be one (it cannot call out to
helpers that are not async-signal-safe, and splitting it costs a frame
on every sample).  An entry that no longer matches a function over the
limit fails too, so the list cannot go stale.

The scanner is small on purpose: comments, string and character literals
and preprocessor lines are blanked, then braces are counted.  A brace at
file scope opens a function when the text before it (since the last ';'
or '}' at file scope) ends in ')'.
"""
import os
import re
import sys

LIMIT = 150
DIRS = ("libsym", "symd", "tools")
# "path:function": "why it may be longer".  Signal-handler code only.
ALLOW = {
}


def blank(text):
    """text with comments, literals and preprocessor lines as spaces
    (newlines kept, so offsets and line numbers do not move)."""
    out = []
    i, n = 0, len(text)
    bol = True          # only spaces since the start of the line
    while i < n:
        c = text[i]
        if c == "\n":
            out.append(c)
            bol = True
            i += 1
            continue
        if bol and c == "#":
            # A directive, with its backslash-continued lines.
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out.append(" \n")
                    i += 2
                    continue
                out.append(" ")
                i += 1
            continue
        if c in " \t":
            out.append(c)
            i += 1
            continue
        bol = False
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
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


ATTR = re.compile(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)")


def functions(text):
    """(name, first line, last line) of each function definition."""
    code = blank(text)
    found = []
    depth = 0
    head = 0            # where the text before the next file-scope '{' starts
    start = None
    name = None
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                h = ATTR.sub("", code[head:i]).strip()
                m = re.search(r"(\w+)\s*\(", h)
                if h.endswith(")") and m:
                    name = m.group(1)
                    first = head + len(code[head:i]) - \
                        len(code[head:i].lstrip())
                    start = code.count("\n", 0, first) + 1
                else:
                    name = None
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                if name:
                    found.append((name, start,
                                  code.count("\n", 0, i) + 1))
                    name = None
                head = i + 1
        elif c == ";" and depth == 0:
            head = i + 1
    return found


def sources(root):
    for d in DIRS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, d)):
            dirnames.sort()
            for f in sorted(filenames):
                if f.endswith((".c", ".h")):
                    p = os.path.join(dirpath, f)
                    yield os.path.relpath(p, root)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = list(sources(root))
    if not files:
        print("1..0 # SKIP no C files under %s" % root)
        return 0
    print("1..%d" % (len(files) + 1))
    failed = 0
    used = set()
    for k, path in enumerate(files, 1):
        with open(os.path.join(root, path), encoding="utf-8",
                  errors="replace") as fh:
            fns = functions(fh.read())
        long_ = []
        for name, a, b in fns:
            n = b - a + 1
            key = "%s:%s" % (path, name)
            if n <= LIMIT:
                continue
            if key in ALLOW:
                used.add(key)
                continue
            long_.append("%s() is %d lines (%s:%d-%d)" %
                         (name, n, path, a, b))
        top = max((b - a + 1 for _, a, b in fns), default=0)
        if long_:
            failed += 1
            print("not ok %d - %s: functions over %d lines" %
                  (k, path, LIMIT))
            for m in long_:
                print("#   " + m)
        else:
            print("ok %d - %s (%d functions, the longest %d lines)" %
                  (k, path, len(fns), top))
    stale = sorted(set(ALLOW) - used)
    if stale:
        failed += 1
        print("not ok %d - every allowed exception is still needed" %
              (len(files) + 1))
        for key in stale:
            print("#   %s: not over %d lines, or gone" % (key, LIMIT))
    else:
        print("ok %d - every allowed exception is still needed (%d)" %
              (len(files) + 1, len(ALLOW)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
