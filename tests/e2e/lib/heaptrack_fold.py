#!/usr/bin/env python3
"""heaptrack_fold.py - folded stacks of every value type from heaptrack's
own data file, for t4021.

    heaptrack_fold.py FILE.zst OUTPREFIX

writes OUTPREFIX.alloc_space, .alloc_objects, .inuse_space and
.inuse_objects ("frame;...;leaf VALUE", root first; in use = at the end),
exact: heaptrack records every allocation.

Why not heaptrack_print -F: heaptrack 1.4's flame-graph output has no
allocated-bytes cost type, and it prints the frames of Debian's
program shifted against their names when the command line has a newline
(python3.11 -c 'a\nb': "Py_RunMain (Py_BytesMain)", "../csu/libc-start.c
(__libc_start_call_main)"): the data file's X line keeps the newline,
and the next line ("s = ...") reads as a string, which shifts the
numbering of all later strings; here such lines are skipped.

The file (heaptrack 1.4's interpreted format, heaptrack's
accumulatedtracedata.cpp): 's LEN STRING' strings, numbered from 1;
'i IP MODULE [FUNCTION FILE LINE]...' instruction pointers, numbered
from 1, the innermost frame first and the ones it is inlined into after
it (a frame without FILE LINE has its FUNCTION only); 't IP PARENT'
traces, numbered from 1, 0 the root; 'a SIZE TRACE' allocation kinds,
numbered from 0; '+ KIND' an allocation, '- KIND' a free (a realloc is
both).  Numbers are hex.
"""
import subprocess
import sys


def main():
    path, prefix = sys.argv[1:3]
    data = subprocess.run(["zstd", "-dc", path], capture_output=True,
                          check=True).stdout.decode("utf-8", "replace")
    strings, ips, traces, kinds = [""], [None], [None], []
    plus, minus = [], []
    for line in data.split("\n"):
        if not line:
            continue
        tag = line[0]
        if tag == "s":
            w = line.split(" ", 2)
            try:
                int(w[1], 16)
            except (IndexError, ValueError):
                continue    # a line of the command line (X) that has a
                            # newline, as heaptrack writes it
            strings.append(w[2] if len(w) > 2 else "")
        elif tag == "i":
            w = line.split()[3:]
            names = [strings[int(w[j], 16)] for j in range(0, len(w), 3)]
            ips.append(list(reversed(names)))   # outermost first
        elif tag == "t":
            w = line.split()
            traces.append((int(w[1], 16), int(w[2], 16)))
        elif tag == "a":
            w = line.split()
            kinds.append((int(w[1], 16), int(w[2], 16)))
            plus.append(0)
            minus.append(0)
        elif tag == "+":
            plus[int(line[2:], 16)] += 1
        elif tag == "-":
            minus[int(line[2:], 16)] += 1
    stack_of = {}

    def stack(t):
        if t in stack_of:
            return stack_of[t]
        frames = []
        while t:
            ip, t = traces[t]
            frames = (ips[ip] or ["??"]) + frames
        return ";".join(frames) or "??"

    out = {k: {} for k in ("alloc_space", "alloc_objects", "inuse_space",
                           "inuse_objects")}
    for k, (size, t) in enumerate(kinds):
        s = stack_of.setdefault(t, stack(t))
        live = plus[k] - minus[k]
        for typ, v in (("alloc_space", plus[k] * size),
                       ("alloc_objects", plus[k]),
                       ("inuse_space", live * size),
                       ("inuse_objects", live)):
            out[typ][s] = out[typ].get(s, 0) + v
    for typ, d in out.items():
        with open(prefix + "." + typ, "w") as f:
            for s, v in d.items():
                if v:
                    f.write("%s %d\n" % (s, v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
