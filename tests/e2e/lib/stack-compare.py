#!/usr/bin/python3
"""stack-compare.py - frame-by-frame agreement of `sym stack -i` with
eu-stack -i -s and with gdb's `thread apply all bt` (docs/crash.md).

usage: stack-compare.py SYM_OUT PEER_OUT eu|gdb

Each output is cut into threads (by TID/LWP) and each thread into PC
groups: the frames of one PC, its inlined functions first.  The groups of
both sides are aligned by PC (difflib over the PC lists), so a frame one
unwinder skipped does not shift the rest.  In aligned groups of equal
length the frames are compared pairwise; when the peer shows one frame
where sym shows an inline chain (eu-stack 0.188 does so for python3.11's
dwz'd debug file), the peer's frame is compared with the chain's outer
function and its innermost line, and the chain's other frames are counted
as "peer shows no inline chain".

Two frames agree when their functions and their lines (file base name and
line number) agree.  Names are compared after what the tools spell
differently for one function: the argument list, namespace qualifiers
(gdb's "crash::line" is DWARF's "line"), GCC's clone suffixes
(".lto_priv.0", ".cold", ".isra.0", ".constprop.0", ".part.0") and
glibc's alias prefixes ("__GI_", leading underscores: gdb names clone3.S
"clone3", eu-stack "__clone3").

Prints one summary line "agree=A compared=C only_sym=S only_peer=P
no_inline=N" and the frames that disagree, one a line, prefixed "diff".
Exit status 0.
"""
import difflib
import os
import re
import sys

FN_SUFFIX = re.compile(r"(\.(lto_priv|isra|constprop|part|cold)(\.\d+)?)+$")


def norm_name(n):
    if n is None:
        return "??"
    n = n.strip()
    depth = 0
    out = ""
    for ch in n:  # drop argument lists, also of templates' operators
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0:
            out += ch
    n = out.strip()
    n = n.split("::")[-1]
    n = FN_SUFFIX.sub("", n)
    if n.startswith("__GI_"):
        n = n[5:]
    return n.lstrip("_")


def norm_loc(f, line):
    if not f:
        return None
    return (os.path.basename(f), int(line))


def parse_sym(path):
    threads = {}
    cur = None
    for l in open(path, errors="replace"):
        m = re.match(r"TID (\d+):", l)
        if m:
            cur = threads.setdefault(int(m.group(1)), [])
            continue
        m = re.match(r"#\d+\s+0x([0-9a-f]+) (.*?)(?: (\S+?):(\d+)(?::\d+)?)?"
                     r"( \(inlined\))? - ", l)
        if m and cur is not None:
            cur.append((int(m.group(1), 16), m.group(2),
                        norm_loc(m.group(3), m.group(4) or 0),
                        bool(m.group(5))))
    return {t: groups_from_inline(fr) for t, fr in threads.items()}


def groups_from_inline(frames):
    groups = []
    g = []
    for pc, fn, loc, inl in frames:
        g.append((fn, loc))
        if not inl:
            groups.append((pc, g))
            g = []
    if g:
        groups.append((frames[-1][0], g))
    return groups


def parse_eu(path):
    threads = {}
    cur = None
    last = None
    for l in open(path, errors="replace"):
        m = re.match(r"TID (\d+):", l)
        if m:
            cur = threads.setdefault(int(m.group(1)), [])
            continue
        m = re.match(r"#\d+\s+0x([0-9a-f]+)(?: (.*))?$", l)
        if m and cur is not None:
            last = [int(m.group(1), 16), m.group(2), None]
            cur.append(last)
            continue
        m = re.match(r"\s+(\S+?):(\d+)(?::\d+)?$", l)
        if m and last is not None:
            last[2] = norm_loc(m.group(1), m.group(2))
    out = {}
    for t, fr in threads.items():
        groups = []
        for pc, fn, loc in fr:
            if groups and groups[-1][0] == pc:
                groups[-1][1].append((fn, loc))
            else:
                groups.append((pc, [(fn, loc)]))
        out[t] = groups
    return out


def parse_gdb(path):
    threads = {}
    cur = None
    for l in open(path, errors="replace"):
        m = re.match(r"Thread \d+ .*\(LWP (\d+)\)", l)
        if m:
            cur = threads.setdefault(int(m.group(1)), [])
            continue
        m = re.match(r"#(\d+)\s+(?:0x([0-9a-f]+) in )?(\S+) (.*)$", l)
        if not m or cur is None:
            continue
        loc = None
        lm = re.search(r" at (\S+):(\d+)$", m.group(4))
        if lm:
            loc = norm_loc(lm.group(1), lm.group(2))
        pc = int(m.group(2), 16) if m.group(2) else None
        if pc is not None or m.group(1) == "0" or not cur:
            cur.append([pc, [(m.group(3), loc)]])
        else:
            cur[-1][1].append((m.group(3), loc))
    return threads


def same(a, b):
    return norm_name(a[0]) == norm_name(b[0]) and a[1] == b[1]


def compare(sym, peer):
    st = dict(agree=0, compared=0, only_sym=0, only_peer=0, no_inline=0)
    diffs = []
    for tid, sg in sorted(sym.items()):
        pg = peer.get(tid, [])
        # A peer group without a PC (gdb's frame #0 at a line start) is
        # sym's group at that place.
        pcs_p = [g[0] if g[0] is not None else
                 (sg[i][0] if i < len(sg) else -1)
                 for i, g in enumerate(pg)]
        pcs_s = [g[0] for g in sg]
        sm = difflib.SequenceMatcher(None, pcs_s, pcs_p, autojunk=False)
        for tag, i1, i2, j1, j2 in sm.get_opcodes():
            if tag != "equal":
                st["only_sym"] += sum(len(g[1]) for g in sg[i1:i2])
                st["only_peer"] += sum(len(g[1]) for g in pg[j1:j2])
                for g in sg[i1:i2]:
                    diffs.append("diff tid %d only sym: %#x %s" %
                                 (tid, g[0], g[1][-1][0]))
                for g in pg[j1:j2]:
                    diffs.append("diff tid %d only peer: %s %s" %
                                 (tid, hex(g[0]) if g[0] else "-",
                                  g[1][-1][0]))
                continue
            for k in range(i2 - i1):
                a = sg[i1 + k][1]
                b = pg[j1 + k][1]
                if len(a) != len(b) and len(b) == 1:
                    a = [(a[-1][0], a[0][1])]
                    st["no_inline"] += len(sg[i1 + k][1]) - 1
                pairs = list(zip(a, b))
                st["only_sym"] += max(0, len(a) - len(b))
                st["only_peer"] += max(0, len(b) - len(a))
                for x, y in pairs:
                    st["compared"] += 1
                    if same(x, y):
                        st["agree"] += 1
                    else:
                        diffs.append("diff tid %d %#x: sym %s %s, peer %s %s"
                                     % (tid, sg[i1 + k][0], x[0], x[1],
                                        y[0], y[1]))
    for tid in peer:
        if tid not in sym:
            diffs.append("diff tid %d only in peer" % tid)
            st["only_peer"] += sum(len(g[1]) for g in peer[tid])
    return st, diffs


def main():
    sym = parse_sym(sys.argv[1])
    peer = (parse_eu if sys.argv[3] == "eu" else parse_gdb)(sys.argv[2])
    st, diffs = compare(sym, peer)
    print(" ".join("%s=%d" % (k, v) for k, v in st.items()))
    for d in diffs:
        print(d)


main()
