#!/usr/bin/python3
"""stack-compare.py - frame-by-frame agreement of `sym stack -i` with
eu-stack -i -s and with gdb's `thread apply all bt` (docs/crash.md).

usage: stack-compare.py SYM_OUT PEER_OUT eu|gdb [ELF...]

gdb must run with `set filename-display absolute`.  ELF files given are
the modules' files (the executable of a core): a module's DWARF and
symbols are read, when a rule below needs them, from its debug file by
build ID under /usr/lib/debug, else from the ELF given with its build ID.

Each output is cut into threads (by TID/LWP) and each thread into PC
groups: the frames of one PC, its inlined functions first.  The groups of
both sides are aligned by PC (difflib over the PC lists), so a frame one
unwinder skipped does not shift the rest (those are counted only_sym and
only_peer).  In aligned groups the frames are compared pairwise.

Two frames agree when the whole function name, the whole file path, the
line and (eu-stack prints it) the column are the same strings.  Nothing
else is normalized; what the tools spell differently for one answer is
recognized by a named rule that proves it from the module's DWARF or
symbol table, and counted under the rule's name ("spelled" line):

  eu-comp-dir     eu-stack prints a relative file name as the line table
                  has it (directory entry joined, DW_AT_comp_dir not);
                  sym, eu-addr2line (its default -A), gdb and addr2line
                  put the unit's DW_AT_comp_dir before it.  Proof: sym's
                  path is exactly the comp_dir of the unit holding the
                  address, "/", eu-stack's path.
  eu-no-scopes    elfutils 0.188 finds no DWARF scope at some addresses
                  (all of python3.11's from python3.11-dbg: eu-addr2line
                  -f -i says the same): eu-stack then prints one frame,
                  named after the ELF symbol, with the innermost line.
                  Only in a module where eu-stack shows no inline chain
                  and one frame for some chain of sym's.  Proof: its name
                  is a function symbol whose extent holds the address;
                  its line is compared with sym's innermost frame's, and
                  the inlined frames it cannot show count as no_inline.
  gdb-params      gdb prints a C++ function without its parameter types
                  (stack.c find_frame_funname(): cp_remove_params()), its
                  arguments' values instead: sym's demangled name with
                  the trailing parameter list (and cv-qualifiers) cut off
                  is gdb's name.
  gdb-scope       a function with no linkage name (a static inline in a
                  namespace) is DW_AT_name to eu-stack and sym, and
                  qualified by its enclosing scopes in gdb
                  (`crash::line`): gdb's name ends in "::" + sym's.
  gdb-alias       an assembler function with several symbols at its
                  address (clone3.S: `__clone3`, `clone3`): gdb names
                  one, eu-stack and sym the other.  Proof: both
                  are function symbols starting at the same address
                  that holds the lookup address.

One answer differs, the peer's behaviour, and is counted apart under its
name (not in compared; "peer" line):

  gdb-is-stmt     several line-table rows share the address covering the
                  lookup: the DWARF line program's answer is the last row
                  there (sym, eu-stack, eu-addr2line, addr2line,
                  llvm-symbolizer); gdb's find_pc_sect_line() steps back
                  from a row that is not is_stmt to an is_stmt row at the
                  same address.  Proof: both rows are at that address in
                  the unit's line table, sym's is the last and not
                  is_stmt, gdb's is is_stmt.

Prints one summary line "agree=A compared=C only_sym=S only_peer=P
no_inline=N", a line "spelled RULE=N ..." and a line "peer RULE=N ...",
then the frames that disagree, one a line, prefixed "diff".  Exit status
0.
"""
import difflib
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", ".."))
from peers import Dwarf  # tests/peers.py's DWARF and symbol reader


# ----------------------------------------------------------- the modules

class Modules:
    """Build ID -> Dwarf (tests/peers.py's reader) of the module's debug
    file by build ID, else of an ELF named on the command line."""

    def __init__(self, elves):
        self.elves = {}
        for e in elves:
            p = subprocess.run(["readelf", "-n", e], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL,
                               universal_newlines=True)
            m = re.search(r"Build ID: ([0-9a-f]+)", p.stdout)
            if m:
                self.elves[m.group(1)] = e
        self.dw = {}

    def get(self, bid):
        if not bid or bid == "?":
            return None
        if bid not in self.dw:
            d = "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])
            path = d if os.path.exists(d) else self.elves.get(bid)
            self.dw[bid] = Rows(path) if path else None
        return self.dw[bid]


class Rows(Dwarf):
    """Dwarf with the rows of a unit's line table: (address, file index,
    line, is_stmt), in the order of the line program."""

    def __init__(self, path):
        Dwarf.__init__(self, path)
        self.rows = {}

    def rows_at(self, addr):
        u = self.unit_at(addr)
        if u is None or u["stmt"] is None:
            return None, None
        t = self.table_at(addr)
        if u["stmt"] not in self.rows:
            p = subprocess.run(["llvm-dwarfdump",
                                "--debug-line=%#x" % u["stmt"],
                                self._debug_file()], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL,
                               universal_newlines=True, errors="replace")
            rows = []
            for line in p.stdout.splitlines():
                f = line.split()
                if len(f) >= 6 and f[0].startswith("0x0"):
                    rows.append((int(f[0], 16), int(f[3]), int(f[1]),
                                 "is_stmt" in f[6:],
                                 "end_sequence" in f[6:]))
            self.rows[u["stmt"]] = rows
        return self.rows[u["stmt"]], t


def sym_start(dw, name, addr):
    """Start of the function symbol @name whose extent holds @addr."""
    if dw.syms is None:
        dw._load_syms()
    for a, e, n in dw.syms:
        if n == name and a <= addr < e:
            return a
    return None


# ----------------------------------------------------------- parsing

SYM_FRAME = re.compile(r"#\d+\s+0x([0-9a-f]+) (.*?)"
                       r"(?: - (\S+) ([0-9a-f]+|\?)\+0x([0-9a-f]+))?"
                       r"( \[fp\])?$")
LOC = re.compile(r" (\S+?):(\d+)(?::(\d+))?$")


def parse_sym(path):
    """TID -> [(pc, lookup address, build ID, [(name, loc)...])], a loc
    being (file, line, column) or None."""
    threads = {}
    cur = None
    for l in open(path, errors="replace"):
        l = l.rstrip("\n")
        m = re.match(r"TID (\d+):", l)
        if m:
            cur = threads.setdefault(int(m.group(1)), [])
            continue
        m = SYM_FRAME.match(l)
        if not m or cur is None:
            continue
        body = m.group(2)
        inl = body.endswith(" (inlined)")
        if inl:
            body = body[:-len(" (inlined)")]
        loc = None
        lm = LOC.search(body)
        if lm:
            loc = (lm.group(1), int(lm.group(2)), int(lm.group(3) or 0))
            body = body[:lm.start()]
        name = None if body == "??" else body
        look = int(m.group(5), 16) if m.group(5) else None
        cur.append((int(m.group(1), 16), look, m.group(4), name, loc, inl))
    out = {}
    for t, frames in threads.items():
        groups = []
        g = []
        for pc, look, bid, name, loc, inl in frames:
            g.append((name, loc))
            if not inl:
                groups.append((pc, look, bid, g))
                g = []
        if g:
            groups.append((frames[-1][0], frames[-1][1], frames[-1][2], g))
        out[t] = groups
    return out


def parse_eu(path):
    """TID -> [(pc, [(name, loc)...])]: eu-stack -i -s."""
    threads = {}
    cur = None
    last = None
    for l in open(path, errors="replace"):
        l = l.rstrip("\n")
        m = re.match(r"TID (\d+):", l)
        if m:
            cur = threads.setdefault(int(m.group(1)), [])
            continue
        m = re.match(r"#\d+\s+0x([0-9a-f]+)(?: (.*))?$", l)
        if m and cur is not None:
            last = [int(m.group(1), 16), m.group(2) or None, None]
            cur.append(last)
            continue
        m = re.match(r"    (.+?)(?::(\d+)(?::(\d+))?)?$", l)
        if m and last is not None and last[2] is None:
            last[2] = (m.group(1), int(m.group(2) or 0), int(m.group(3) or 0))
    # Frames of one PC are one group (an inline chain), but for a frame
    # without a name or the same frame again: a function that calls
    # itself from one place (a JIT's frames) repeats its return address.
    out = {}
    for t, fr in threads.items():
        groups = []
        for pc, fn, loc in fr:
            if (groups and groups[-1][0] == pc and fn is not None and
                    groups[-1][1][-1] != (fn, loc)):
                groups[-1][1].append((fn, loc))
            else:
                groups.append((pc, [(fn, loc)]))
        out[t] = groups
    return out


def cut_args(s):
    """@s is `NAME (ARGS)` as gdb prints a frame: NAME, cut at the first
    " (" outside parentheses (`(anonymous namespace)::f (a=1)`); the
    values after it may hold anything, unbalanced parentheses included
    (python's pretty-printers truncate with "...(truncated)")."""
    depth = 0
    for i, ch in enumerate(s):
        if ch == "(":
            if depth == 0 and i > 0 and s[i - 1] == " ":
                return s[:i - 1]
            depth += 1
        elif ch == ")":
            depth -= 1
    return s


def parse_gdb(path):
    """TID -> [(pc or None, [(name, loc)...])]: `thread apply all bt` with
    filename-display absolute.  A frame without an address continues the
    inline chain of the one before, but frame #0."""
    threads = {}
    cur = None
    for l in open(path, errors="replace"):
        l = l.rstrip("\n")
        m = re.match(r"Thread \d+ .*\(LWP (\d+)\)", l)
        if m:
            cur = threads.setdefault(int(m.group(1)), [])
            continue
        m = re.match(r"#(\d+)\s+(?:0x([0-9a-f]+) in )?(.*)$", l)
        if not m or cur is None:
            continue
        rest = m.group(3)
        loc = None
        lm = re.search(r" at (\S+):(\d+)$", rest)
        if lm:
            loc = (lm.group(1), int(lm.group(2)), 0)
            rest = rest[:lm.start()]
        else:
            rest = re.sub(r" from \S+$", "", rest)
        name = cut_args(rest)
        name = None if name == "??" else name
        pc = int(m.group(2), 16) if m.group(2) else None
        if pc is not None or m.group(1) == "0" or not cur:
            cur.append([pc, [(name, loc)]])
        else:
            cur[-1][1].append((name, loc))
    return threads


# ----------------------------------------------------------- the rules

def cut_params(name):
    """gdb's cp_remove_params(): a demangled name without its trailing
    parameter list and cv-qualifiers."""
    n = re.sub(r"(\s+(const|volatile|&&|&))+$", "", name)
    if not n.endswith(")"):
        return name
    depth = 0
    for i in range(len(n) - 1, -1, -1):
        if n[i] == ")":
            depth += 1
        elif n[i] == "(":
            depth -= 1
            if depth == 0:
                return n[:i] if i > 0 else name
    return name


class Cmp:
    def __init__(self, peer, mods):
        self.peer = peer
        self.mods = mods
        self.st = dict(agree=0, compared=0, only_sym=0, only_peer=0,
                       no_inline=0)
        self.spelled = {}
        self.apart = {}
        self.diffs = []
        self.pairs = []
        self.noscope = set()

    def count(self, tally, rule):
        tally[rule] = tally.get(rule, 0) + 1

    def name_rule(self, a, b, dw, look, bid):
        """The rule under which sym's name @a and the peer's @b name one
        function, "" when they are the same string, None when none."""
        if a == b:
            return ""
        if a is None or b is None:
            return None
        if self.peer == "eu":
            if (bid in self.noscope and dw and
                    sym_start(dw, b, look) is not None):
                return "eu-no-scopes"
            return None
        c = cut_params(a)
        if c == b:
            return "gdb-params"
        if "::" not in a and "(" not in a and b.endswith("::" + a):
            return "gdb-scope"
        if dw:
            s1 = sym_start(dw, a, look)
            if s1 is not None and s1 == sym_start(dw, b, look):
                return "gdb-alias"
        return None

    def loc_rule(self, a, b, dw, look):
        if a == b:
            return ""
        if a is None or b is None:
            return None
        if self.peer == "gdb":
            a = (a[0], a[1], 0)  # gdb prints no column
            if a == b:
                return ""
        if (self.peer == "eu" and dw and a[1:] == b[1:] and
                not b[0].startswith("/")):
            u = dw.unit_at(look)
            if u and u["comp_dir"] and a[0] == u["comp_dir"] + "/" + b[0]:
                return "eu-comp-dir"
        return None

    def is_stmt(self, a, b, dw, look):
        """gdb-is-stmt: see the header."""
        if self.peer != "gdb" or not dw or a is None or b is None:
            return False
        rows, t = dw.rows_at(look)
        if not rows or not t:
            return False
        at = None
        for r in rows:
            if r[0] <= look and not r[4]:
                if at is None or r[0] >= at:
                    at = r[0]
        if at is None:
            return False
        same = [r for r in rows if r[0] == at and not r[4]]

        def where(r):
            p = t["paths"][r[1]] if r[1] < len(t["paths"]) else None
            return (p, r[2])
        last = same[-1]
        return (where(last) == (a[0], a[1]) and not last[3] and
                any(r[3] and where(r) == (b[0], b[1]) for r in same))

    def frame(self, tid, pc, bid, dw, look, x, y):
        nr = self.name_rule(x[0], y[0], dw, look, bid)
        lr = self.loc_rule(x[1], y[1], dw, look)
        if nr is not None and lr is not None:
            self.st["compared"] += 1
            self.st["agree"] += 1
            for r in (nr, lr):
                if r:
                    self.count(self.spelled, r)
            return
        if nr is not None and self.is_stmt(x[1], y[1], dw, look):
            self.count(self.apart, "gdb-is-stmt")
            return
        self.st["compared"] += 1
        self.diffs.append("diff tid %d %#x: sym %s %s, peer %s %s" %
                          (tid, pc, x[0], x[1], y[0], y[1]))

    def group(self, tid, sg, pg):
        pc, look, bid, a = sg
        b = pg[1]
        dw = self.mods.get(bid)
        if look is None:
            look = pc
        if bid in self.noscope and len(a) > 1 and len(b) == 1:
            # eu-no-scopes: one frame for an inline chain, with the
            # innermost line; its name is checked by name_rule.
            self.st["no_inline"] += len(a) - 1
            self.count(self.spelled, "eu-no-scopes")
            a = [(a[-1][0], a[0][1])]
        self.st["only_sym"] += max(0, len(a) - len(b))
        self.st["only_peer"] += max(0, len(b) - len(a))
        for x, y in zip(a, b):
            self.frame(tid, pc, bid, dw, look, x, y)

    def groups(self):
        """Compares the aligned groups.  eu-no-scopes holds in a module
        where eu-stack shows one frame for some inline chain of sym's and
        no inline chain at all."""
        if self.peer == "eu":
            one = {s[2] for t, s, p in self.pairs
                   if len(s[3]) > 1 and len(p[1]) == 1}
            chain = {s[2] for t, s, p in self.pairs if len(p[1]) > 1}
            self.noscope = one - chain
        for tid, sg, pg in self.pairs:
            self.group(tid, sg, pg)

    def thread(self, tid, sg, pg):
        # A peer group without a PC (gdb's frame #0 at a line start) is
        # sym's group at that place.
        pcs_p = [g[0] if g[0] is not None else
                 (sg[i][0] if i < len(sg) else -1)
                 for i, g in enumerate(pg)]
        pcs_s = [g[0] for g in sg]
        sm = difflib.SequenceMatcher(None, pcs_s, pcs_p, autojunk=False)
        for tag, i1, i2, j1, j2 in sm.get_opcodes():
            if tag == "equal":
                for k in range(i2 - i1):
                    self.pairs.append((tid, sg[i1 + k], pg[j1 + k]))
                continue
            self.st["only_sym"] += sum(len(g[3]) for g in sg[i1:i2])
            self.st["only_peer"] += sum(len(g[1]) for g in pg[j1:j2])
            for g in sg[i1:i2]:
                self.diffs.append("diff tid %d only sym: %#x %s" %
                                  (tid, g[0], g[3][-1][0]))
            for g in pg[j1:j2]:
                self.diffs.append("diff tid %d only peer: %s %s" %
                                  (tid, hex(g[0]) if g[0] else "-",
                                   g[1][-1][0]))


def main():
    if len(sys.argv) < 4 or sys.argv[3] not in ("eu", "gdb"):
        sys.exit(__doc__.split("\n\n")[1])
    sym = parse_sym(sys.argv[1])
    peer = (parse_eu if sys.argv[3] == "eu" else parse_gdb)(sys.argv[2])
    c = Cmp(sys.argv[3], Modules(sys.argv[4:]))
    for tid, sg in sorted(sym.items()):
        c.thread(tid, sg, peer.get(tid, []))
    c.groups()
    for tid in peer:
        if tid not in sym:
            c.diffs.append("diff tid %d only in peer" % tid)
            c.st["only_peer"] += sum(len(g[1]) for g in peer[tid])
    print(" ".join("%s=%d" % (k, v) for k, v in c.st.items()))
    for what, tally in (("spelled", c.spelled), ("peer", c.apart)):
        print(what, " ".join("%s=%d" % kv for kv in sorted(tally.items()))
              or "-")
    for d in c.diffs:
        print(d)


main()
