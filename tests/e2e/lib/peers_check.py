#!/usr/bin/env python3
"""peers_check.py - `sym addr2line` against a real peer, whole outputs.

    peers_check.py PEER BINARY ADDRFILE [SYM-OPTION...]

PEER is gnu (addr2line -a -f -i -C vs the GNU style), llvm
(llvm-symbolizer --no-demangle vs --output-style=LLVM -f -i: LLVM 14
demangles with its own demangler, sym with libiberty, so raw names are
compared) or eu (eu-addr2line -a -f -i -C vs --output-style=elfutils).
Both read ADDRFILE on stdin in one run (GNU's names depend on the order).
Prints "ok - " / "not ok - " points for tests/e2e/lib/lib.sh's tap_points:
the whole answers, and the function names alone (the paths differ while
source paths are being reworked, issue 15).  Each differing address is
listed, up to 10.
"""
import os
import re
import subprocess
import sys

peer, binf, addrf = sys.argv[1:4]
extra = sys.argv[4:]
sym = os.environ.get("SYM", "sym")
addrs = [l.strip() for l in open(addrf) if l.strip()]
inp = "\n".join(addrs) + "\n"
if peer == "gnu":
    pc = ["addr2line", "-a", "-f", "-i", "-C", "-e", binf]
    sc = [sym, "addr2line", "-a", "-f", "-i", "-C", "-e", binf]
elif peer == "llvm":
    pc = ["llvm-symbolizer", "--no-demangle", "--obj=" + binf]
    sc = [sym, "addr2line", "--output-style=LLVM", "-f", "-i", "-e", binf]
else:
    pc = ["eu-addr2line", "-a", "-f", "-i", "-C", "-e", binf]
    sc = [sym, "addr2line", "--output-style=elfutils", "-a", "-f", "-i",
          "-C", "-e", binf]
sc += extra


def run(cmd):
    return subprocess.run(cmd, input=inp, capture_output=True, text=True,
                          timeout=600).stdout


def split(out):
    if peer == "llvm":
        return [r for r in out.split("\n\n") if r.strip()]
    recs, cur = [], None
    for line in out.split("\n"):
        if re.match(r"^0x[0-9a-f]+$", line):
            if cur is not None:
                recs.append("\n".join(cur))
            cur = [line]
        elif cur is not None and line:
            cur.append(line)
    if cur is not None:
        recs.append("\n".join(cur))
    return recs


LOC = re.compile(r":(\d+|\?)(:\d+)?( \(discriminator \d+\))?$|^\?\?:0$")


def names(rec):
    lines = rec.split("\n")
    if peer == "llvm":
        return lines[0::2]
    if peer == "gnu":
        return lines[1::2]
    return [re.sub(r" inlined (at|from) \S+ in ", " inlined in ", l)
            for l in lines[1:] if not LOC.search(l)]


pr, sr = split(run(pc)), split(run(sc))
what = "%s %s (%d addresses)" % (peer, os.path.basename(binf), len(addrs))
if len(pr) != len(addrs) or len(sr) != len(addrs):
    print("not ok - %s: %d peer and %d sym answers" % (what, len(pr), len(sr)))
    sys.exit(0)
for label, key in (("names", names), ("whole answers", lambda r: r)):
    bad = [i for i in range(len(addrs)) if key(pr[i]) != key(sr[i])]
    same = len(addrs) - len(bad)
    print("# %s, %s: %d of %d identical (%.2f%%)" %
          (what, label, same, len(addrs), 100.0 * same / len(addrs)))
    for i in bad[:10]:
        print("#   %s peer: %s" % (addrs[i], pr[i].replace("\n", " | ")[:300]))
        print("#   %s sym:  %s" % (addrs[i], sr[i].replace("\n", " | ")[:300]))
    print("%s - %s: %s identical" % ("ok" if not bad else "not ok", what, label))
