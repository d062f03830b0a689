#!/usr/bin/env python3
"""peers.py - is `sym addr2line` byte for byte a drop-in for the peers?

  tests/peers.py [options] INPUT...

INPUT is `libc` (libc.so.6, its libc6-dbg debug file found by build ID),
`python3.11d`, `libjvm` (openjdk-17's, its -dbg debug file by build ID), a
fixture name of fixtures/build/MANIFEST (`fixtures` for the plain C and C++
ones: every plain-kind entry), or a path to an ELF file.

Addresses: instruction starts from `objdump -d` of the file (of its address
source, for a fixture), a seeded random sample of --sample of them (all when
there are fewer). Each peer and `sym addr2line` in the style that copies it
get the same addresses on stdin, each tool once (sym with --no-plt-names:
the peers' own answer for a PLT stub, not NAME@plt):

  llvm  llvm-symbolizer 14 --obj=F                (its defaults)
        sym addr2line --output-style=LLVM -f -i -C -e F
  gnu   addr2line 2.40 -a -f -i -C -e F
        sym addr2line -a -f -i -C -e F            (GNU style)
  eu    eu-addr2line 0.188 -a -f -i -C -e F
        sym addr2line --output-style=elfutils -a -f -i -C -e F

An address agrees when its answer (llvm: up to the blank line; gnu and eu:
from its `0x...` line to the next) is the same bytes. Nothing is
normalized. The share identical is printed per input and peer, then each
differing address with both answers.

Against llvm-symbolizer every address counts. Against GNU addr2line and
eu-addr2line, an address whose difference is one of the peer bugs listed in
docs/oracle.md ("Peer bugs") is counted apart, under the bug's name: each
rule below recognizes one bug from the answers and the DWARF, and says why
(--show-bugs N prints examples). The goal (issue 15) is >= 99.5% identical
against llvm, and against gnu and eu on the addresses no listed bug
covers; --goal makes the exit status say whether it is met.

Each difference is also classified, for the reader only: `names` (the same
frames at the same file:line, other function names), `paths` (the same
lines and names, other file names), `frames` (another number of frames),
`other`.

Exit status: 0 (with --goal: all goals met), 1 (a goal missed), 2 (usage
or tool failure). Stdlib only.
"""

import argparse
import os
import random
import re
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYM = os.environ.get("SYM") or os.path.join(ROOT, "bin", "sym")
GOAL = 99.5

KNOWN = {
    "libc": "/lib/x86_64-linux-gnu/libc.so.6",
    "python3.11d": "/usr/bin/python3.11d",
    "libjvm": "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so",
}

PEERS = ("llvm", "gnu", "eu")


def die(msg):
    sys.stderr.write("peers.py: %s\n" % msg)
    sys.exit(2)

# ------------------------------------------------------------- inputs


def manifest():
    path = os.path.join(ROOT, "fixtures", "build", "MANIFEST")
    if not os.path.exists(path):
        r = subprocess.run([os.path.join(ROOT, "fixtures", "build.sh")])
        if r.returncode != 0:
            die("fixtures/build.sh failed")
    base = os.path.dirname(path)
    out = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            fld = line.rstrip("\n").split("\t")
            if len(fld) != 7:
                continue

            def p(x):
                return x if os.path.isabs(x) else os.path.join(base, x)
            out[fld[0]] = {"file": p(fld[0]), "kind": fld[1],
                           "opts": "" if fld[2] == "-" else fld[2],
                           "addr_source": p(fld[6])}
    return out


def inputs(names):
    mf = None
    out = []
    for n in names:
        if n in KNOWN:
            out.append((n, {"file": KNOWN[n], "opts": "",
                            "addr_source": KNOWN[n]}))
            continue
        if os.path.sep in n and os.path.exists(n):
            out.append((os.path.basename(n), {"file": n, "opts": "",
                                              "addr_source": n}))
            continue
        if mf is None:
            mf = manifest()
        if n == "fixtures":
            out.extend((k, v) for k, v in mf.items() if v["kind"] == "plain")
        elif n in mf:
            out.append((n, mf[n]))
        else:
            die("unknown input %r" % n)
    return out


_INSN = re.compile(r"^\s*([0-9a-f]+):\t")


def addresses(path, n, seed):
    p = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0:
        die("objdump -d %s failed: %s" % (path, p.stderr.strip()[:500]))
    addrs = sorted({int(m.group(1), 16) for m in
                    map(_INSN.match, p.stdout.splitlines()) if m})
    if not addrs:
        die("no instructions in %s" % path)
    total = len(addrs)
    if 0 < n < len(addrs):
        addrs = sorted(random.Random(seed).sample(addrs, n))
    return addrs, total

# ------------------------------------------------------------- running


def run(cmd, addrs, what, timeout, env=None):
    data = "".join("0x%x\n" % a for a in addrs)
    t0 = time.time()
    try:
        p = subprocess.run(cmd, input=data, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True,
                           errors="surrogateescape", timeout=timeout,
                           env=env)
    except subprocess.TimeoutExpired:
        die("%s timed out after %d s: %s" % (what, timeout, " ".join(cmd)))
    # eu-addr2line exits 1 when an address has no answer; anything with
    # no output at all is a failure.
    if p.returncode != 0 and not p.stdout:
        die("%s exited %d: %s\n%s" % (what, p.returncode, " ".join(cmd),
                                      p.stderr.strip()[:2000]))
    return p.stdout, time.time() - t0


def split_llvm(text, n, what):
    """llvm-symbolizer's default output: each answer ends with a blank
    line. Returns the answers with their lines (no blank line)."""
    blocks = text.split("\n\n")
    if blocks and blocks[-1] == "":
        blocks.pop()
    if len(blocks) != n:
        die("%s: %d answers for %d addresses" % (what, len(blocks), n))
    return blocks


_ADDRLINE = re.compile(r"^0x[0-9a-f]+$")


def split_addr(text, addrs, what):
    """-a output: an address line, then the answer, up to the next."""
    blocks = []
    cur = None
    for line in text.split("\n"):
        if _ADDRLINE.match(line):
            if cur is not None:
                blocks.append("\n".join(cur))
            cur = [line]
        elif cur is not None:
            cur.append(line)
        elif line:
            die("%s: output does not start with an address" % what)
    if cur is not None:
        while cur and cur[-1] == "":
            cur.pop()
        blocks.append("\n".join(cur))
    if len(blocks) != len(addrs):
        die("%s: %d answers for %d addresses" % (what, len(blocks),
                                                 len(addrs)))
    for b, a in zip(blocks, addrs):
        if int(b.split("\n", 1)[0], 16) != a:
            die("%s: answer %s where 0x%x was expected" %
                (what, b.split("\n", 1)[0], a))
    return blocks


def commands(peer, f, opts, compat=False):
    """(the peer's command, ours) for @peer on file @f; @opts are the
    fixture's debug-info options. With @compat ours is bin/compat's
    program with the peer's own command line."""
    o = shlex.split(opts)
    if compat and peer in ("llvm", "gnu"):
        t, _ = commands(peer, f, opts)
        prog = os.path.join(os.path.dirname(SYM), "compat",
                            "llvm-symbolizer" if peer == "llvm" else
                            "addr2line")
        if not os.access(prog, os.X_OK):
            die("%s is not built" % prog)
        # The compat programs take the peers' options; the debug-info
        # search options of a fixture are sym's.
        return t, [prog] + t[1:] + (o if peer == "gnu" else [])
    if peer == "llvm":
        # llvm-symbolizer finds a debug file by build ID in /usr/lib/debug
        # by itself; a fixture's own debug directory is in opts.
        extra = ["--debug-file-directory=" + x.split("=", 1)[1]
                 for x in o if x.startswith("--debuginfo-path=")]
        return (["llvm-symbolizer", "--obj=" + f] + extra,
                [SYM, "addr2line", "--output-style=LLVM", "-f", "-i", "-C",
                 "--no-plt-names", "-e", f] + o)
    if peer == "gnu":
        return (["addr2line", "-a", "-f", "-i", "-C", "-e", f],
                [SYM, "addr2line", "-a", "-f", "-i", "-C", "--no-plt-names",
                 "-e", f] + o)
    return (["eu-addr2line", "-a", "-f", "-i", "-C", "-e", f] + o,
            [SYM, "addr2line", "--output-style=elfutils", "-a", "-f", "-i",
             "-C", "--no-plt-names", "-e", f] + o)

# ------------------------------------------------------------- judging


def frames(peer, block):
    """(function, file, line, column) per frame of one answer; the column
    is "" when the style prints none."""
    lines = block.split("\n")
    if peer != "llvm":
        lines = lines[1:]
    out = []
    for j in range(0, len(lines) - 1, 2):
        fn, loc = lines[j], lines[j + 1]
        if peer == "eu":
            fn = re.sub(r" inlined at .* in .*$", "", fn)
        m = re.match(r"^(.*?):(\d+|\?)(:\d+)?( \(discriminator \d+\))?$", loc)
        out.append((fn, m.group(1) if m else loc,
                    m.group(2) if m else "?",
                    (m.group(3) or "")[1:] if m else ""))
    return out


def locs(fr, col=False):
    """The (file, line) of each frame, a line of ? (GNU's 0) as 0, and
    with @col its column."""
    return [(f[1], "0" if f[2] == "?" else f[2]) + ((f[3],) if col else ())
            for f in fr]


def classify(peer, ours, theirs):
    a, b = frames(peer, ours), frames(peer, theirs)
    if len(a) != len(b):
        return "frames"
    if [x[1:] for x in a] == [x[1:] for x in b]:
        return "names"
    if [(x[0], x[2], x[3]) for x in a] == [(x[0], x[2], x[3]) for x in b]:
        return "paths"
    return "other"


class Dwarf:
    """What the peer-bug rules need to know about a file's DWARF, read with
    llvm-dwarfdump (from the debug file llvm-symbolizer would use) the
    first time a rule asks: each compile unit's version, producer, address
    ranges and line table (version and file names)."""

    def __init__(self, path):
        self.path = path
        self.units = None
        self.tables = None
        self.syms = None
        self.sections = None

    def _debug_file(self):
        """The file holding the DWARF: @path, or its debug file by build
        ID under /usr/lib/debug (as llvm-symbolizer finds it)."""
        p = subprocess.run(["readelf", "-n", self.path],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           universal_newlines=True)
        m = re.search(r"Build ID: ([0-9a-f]+)", p.stdout)
        if m:
            d = "/usr/lib/debug/.build-id/%s/%s.debug" % (m.group(1)[:2],
                                                          m.group(1)[2:])
            if os.path.exists(d):
                return d
        return self.path

    def _load_units(self):
        self.units = []
        p = subprocess.run(["llvm-dwarfdump", "--debug-info", "-r", "0",
                            self._debug_file()], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL,
                           universal_newlines=True, errors="replace")
        cur = None
        for line in p.stdout.splitlines():
            m = re.search(r"Compile Unit: .*version = 0x000(\d)", line)
            if m:
                cur = {"version": int(m.group(1)), "producer": "",
                       "ranges": [], "stmt": None, "low": None,
                       "comp_dir": ""}
                self.units.append(cur)
                continue
            if cur is None:
                continue
            m = re.search(r'DW_AT_producer\s+\("(.*)"\)', line)
            if m:
                cur["producer"] = m.group(1)
            m = re.search(r'DW_AT_comp_dir\s+\("(.*)"\)', line)
            if m:
                cur["comp_dir"] = m.group(1)
            m = re.search(r"DW_AT_stmt_list\s+\((0x[0-9a-f]+)\)", line)
            if m:
                cur["stmt"] = int(m.group(1), 16)
            m = re.search(r"DW_AT_low_pc\s+\((0x[0-9a-f]+)\)", line)
            if m:
                cur["low"] = int(m.group(1), 16)
            m = re.search(r"DW_AT_high_pc\s+\((0x[0-9a-f]+)\)", line)
            if m and cur["low"] is not None:
                cur["ranges"].append((cur["low"], int(m.group(1), 16)))
            for lo, hi in re.findall(r"\[(0x[0-9a-f]+), (0x[0-9a-f]+)\)",
                                     line):
                cur["ranges"].append((int(lo, 16), int(hi, 16)))

    def _load_tables(self):
        """Line table prologues by offset: version, include directories,
        and file names with their directory index."""
        self.tables = {}
        p = subprocess.Popen(["llvm-dwarfdump", "--debug-line",
                              self._debug_file()], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL,
                             universal_newlines=True, errors="replace")
        cur = None
        for line in p.stdout:
            if line.startswith("0x0"):
                continue
            if line.startswith("debug_line["):
                cur = {"version": 0, "files": [], "dirs": [], "fdir": []}
                self.tables[int(line[11:line.index("]")], 16)] = cur
            elif cur is None:
                continue
            elif line.startswith("         version:"):
                cur["version"] = int(line.split()[1])
            elif line.startswith("include_directories["):
                cur["dirs"].append(line.split('"')[1])
            elif line.startswith("           name:"):
                cur["files"].append(line.split('"')[1])
                cur["fdir"].append(0)
            elif line.startswith("      dir_index:"):
                cur["fdir"][-1] = int(line.split()[1])
        p.wait()

    def unit_at(self, addr):
        if self.units is None:
            self._load_units()
        for u in self.units:
            if any(lo <= addr < hi for lo, hi in u["ranges"]):
                return u
        return None

    def table_at(self, addr):
        """The line table of the unit holding @addr, with "paths": each
        file's whole path (comp_dir, directory, name joined as sym and the
        peers join them)."""
        u = self.unit_at(addr)
        if u is None or u["stmt"] is None:
            return None
        if self.tables is None:
            self._load_tables()
        t = self.tables.get(u["stmt"])
        if t is not None and "paths" not in t:
            t["paths"] = []
            for name, d in zip(t["files"], t["fdir"]):
                if t["version"] >= 5:
                    dr = t["dirs"][d] if d < len(t["dirs"]) else ""
                else:
                    dr = t["dirs"][d - 1] if 0 < d <= len(t["dirs"]) else ""
                path = name
                if not name.startswith("/"):
                    path = os.path.join(dr, name) if dr else name
                    if not dr.startswith("/") and u["comp_dir"]:
                        path = os.path.join(u["comp_dir"], path)
                t["paths"].append(path)
        return t

    def _load_syms(self):
        """Sized function symbols of the file and its debug file, as
        (start, end, demangled name)."""
        self.syms = []
        for path in sorted({self.path, self._debug_file()}):
            for extra in ([], ["-D"]):
                p = subprocess.run(["nm", "-C", "-S", "--defined-only"] +
                                   extra + [path], stdout=subprocess.PIPE,
                                   stderr=subprocess.DEVNULL,
                                   universal_newlines=True, errors="replace")
                for line in p.stdout.splitlines():
                    f = line.split(" ", 3)
                    if len(f) == 4 and f[2] in "TtWwi":
                        a, n = int(f[0], 16), int(f[1], 16)
                        self.syms.append((a, a + n, f[3]))

    def covering(self, addr):
        """Names of the function symbols whose extent holds @addr."""
        if self.syms is None:
            self._load_syms()
        return {n for a, e, n in self.syms if a <= addr < e}

    def has_section(self, name):
        """The file holding the DWARF has section @name."""
        if self.sections is None:
            p = subprocess.run(["readelf", "-SW", self._debug_file()],
                               stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL,
                               universal_newlines=True)
            self.sections = set(re.findall(r"\]\s+(\S+)", p.stdout))
        return name in self.sections

    def producer(self, addr):
        u = self.unit_at(addr)
        return u["producer"] if u else ""

    def clang5(self):
        """Every unit is clang's DWARF 5."""
        if self.units is None:
            self._load_units()
        return bool(self.units) and all(
            u["version"] == 5 and "clang" in u["producer"]
            for u in self.units)


# Peer bugs (docs/oracle.md, "Peer bugs"): (name, peer, rule). A rule gets
# the input's Dwarf, our answer, the peer's, and llvm-symbolizer's answer
# turned into frames (the arbiter: the bug is the peer's when llvm agrees
# with us on what the peer got wrong).
def bug_eu_no_aranges(dw, addr, ours, theirs, llvm):
    """eu-addr2line 0.188 finds no line for any address of a file without
    .debug_aranges (clang 14 writes none, gcc does): libdwfl finds a CU
    by the aranges only. It prints the symbol and ??:0."""
    t = frames("eu", theirs)
    return all(f[1] == "??" for f in t) and \
        any(f[1] != "??" for f in frames("eu", ours)) and \
        not dw.has_section(".debug_aranges")


def bug_eu_chain(dw, addr, ours, theirs, llvm):
    """eu-addr2line 0.188 -i prints callers that are not the address's:
    where gcc 12 shares code between inlined instances (C++ -O2), the
    frames after the innermost come from another instance or are
    missing or extra. llvm-symbolizer's chain (files and lines) is sym's."""
    a, t = frames("eu", ours), frames("eu", theirs)
    return llvm is not None and len(a) + len(t) > 2 and a[0] == t[0] and \
        a != t and locs(a, True) == locs(llvm, True)


def bug_gnu_rnglistx(dw, addr, ours, theirs, llvm):
    """GNU addr2line 2.40 drops an inlined call whose DW_AT_ranges has
    the form DW_FORM_rnglistx (clang 14's DWARF 5): fewer frames, the
    innermost named after the function it was inlined into."""
    a, t = frames("gnu", ours), frames("gnu", theirs)
    u = dw.unit_at(addr)
    return llvm is not None and len(t) < len(a) and \
        u is not None and u["version"] == 5 and "clang" in u["producer"] \
        and locs(a) == locs(llvm)


def bug_gnu_inline_name(dw, addr, ours, theirs, llvm):
    """GNU addr2line 2.40 names an inlined innermost frame after the
    symbol that covers the address (`main.cold` for a call inlined into
    main's cold part) when the inlined function has no linkage name or
    its DIE is reached through the symbol's range first; the rest of the
    answer is the same."""
    a, t = frames("gnu", ours), frames("gnu", theirs)
    return len(a) > 1 and len(a) == len(t) and a[1:] == t[1:] and \
        a[0][1:] == t[0][1:] and t[0][0] in dw.covering(addr)


def bug_gnu_file0(dw, addr, ours, theirs, llvm):
    """GNU addr2line 2.40 names the rows and call sites of file 1 of a
    DWARF 5 line table after file 0 (the primary source file), which gcc
    usually makes the same file but not always (a header first)."""
    a, t = frames("gnu", ours), frames("gnu", theirs)
    if len(a) != len(t) or any((x[0], x[2]) != (y[0], y[2])
                               for x, y in zip(a, t)):
        return False
    tab = dw.table_at(addr)
    if not tab or tab["version"] != 5 or len(tab["paths"]) < 2 or \
            tab["paths"][0] == tab["paths"][1]:
        return False
    f0, f1 = tab["paths"][0], tab["paths"][1]
    return all(x[1] == y[1] or (x[1] == f1 and y[1] == f0)
               for x, y in zip(a, t))


def bug_gnu_nearest_symbol(dw, addr, ours, theirs, llvm):
    """Where no DWARF function and no function symbol covers an address
    (the padding after a function, code outside every DIE's ranges), GNU
    addr2line 2.40 names it after the function symbol before it, however
    far that symbol's st_size ends before (`NAME\n:?` where no line row
    covers it either); llvm-symbolizer and eu-addr2line say ??."""
    a, t = frames("gnu", ours), frames("gnu", theirs)
    if len(a) != 1 or len(t) != 1 or a[0][0] != "??" or t[0][0] == "??":
        return False
    if llvm is None or llvm[-1][0] != "??" or dw.covering(addr):
        return False
    return locs(a) == locs(t) or (locs(a) == [("??", "0")] and
                                  t[0][2] == "?")


def bug_gnu_empty_file(dw, addr, ours, theirs, llvm):
    """A function named from the symbol table after the empty STT_FILE
    symbol (the one ld writes before the locals it makes): GNU addr2line
    2.40 prints that empty name as the file (`NAME\n:?`); sym, like
    llvm-symbolizer and eu-addr2line, has no file there (`??:?`)."""
    a, t = frames("gnu", ours), frames("gnu", theirs)
    return len(a) == 1 and len(t) == 1 and a[0][0] == t[0][0] and \
        a[0][1] == "??" and t[0][1] == "" and a[0][2] == t[0][2] == "?"


def _files_differ_by(ours, theirs, peer, same):
    """Same frames but for file names, each pair equal or same(o, t)."""
    a, t = frames(peer, ours), frames(peer, theirs)
    return len(a) == len(t) and a != t and all(
        (x[0], x[2], x[3]) == (y[0], y[2], y[3]) and
        (x[1] == y[1] or same(x[1], y[1])) for x, y in zip(a, t))


def bug_eu_comp_dir_twice(dw, addr, ours, theirs, llvm):
    """DWARF 4, a relative DW_AT_comp_dir (-fdebug-prefix-map=DIR=.) and a
    file in directory 0: eu-addr2line 0.188 joins the compilation
    directory twice (libdw's name already starts with it, and -A adds it
    again): ././c_tree.c where llvm-symbolizer and GNU addr2line print
    ./c_tree.c."""
    u = dw.unit_at(addr)
    cd = u["comp_dir"] if u else ""
    return bool(cd) and not cd.startswith("/") and u["version"] < 5 and \
        _files_differ_by(ours, theirs, "eu",
                         lambda o, t: t == cd + "/" + o and
                         o.startswith(cd + "/"))


def bug_double_slash(dw, addr, ours, theirs, llvm, peer):
    u = dw.unit_at(addr)
    cd = u["comp_dir"] if u else ""
    return cd.endswith("/") and _files_differ_by(
        ours, theirs, peer,
        lambda o, t: o.startswith(cd) and t == cd + "/" + o[len(cd):])


def bug_gnu_double_slash(dw, addr, ours, theirs, llvm):
    """A DW_AT_comp_dir that ends in '/' (-fdebug-prefix-map=DIR=/x/):
    GNU addr2line 2.40 joins it with another '/', /x//c_tree.c where
    llvm-symbolizer (sys::path::append()) prints /x/c_tree.c."""
    return bug_double_slash(dw, addr, ours, theirs, llvm, "gnu")


def bug_eu_double_slash(dw, addr, ours, theirs, llvm):
    """The same in eu-addr2line 0.188 (libdw's DIR/NAME)."""
    return bug_double_slash(dw, addr, ours, theirs, llvm, "eu")


def bug_eu_past_sequence(dw, addr, ours, theirs, llvm):
    """eu-addr2line 0.188 gives an address that no line row covers the
    line of the last row before it, across the end of that row's sequence
    (crt1.o's _start after main's sequence); llvm-symbolizer has no line
    there, as sym."""
    a, t = frames("eu", ours), frames("eu", theirs)
    return llvm is not None and len(a) == 1 and len(t) == 1 and \
        a[0][0] == t[0][0] and a[0][1] == "??" and t[0][1] != "??" and \
        all(f[2] == "0" for f in llvm)


BUGS = [
    ("eu-no-aranges", "eu", bug_eu_no_aranges),
    ("eu-inline-chain", "eu", bug_eu_chain),
    ("gnu-rnglistx", "gnu", bug_gnu_rnglistx),
    ("gnu-inline-symbol-name", "gnu", bug_gnu_inline_name),
    ("gnu-dwarf5-file1", "gnu", bug_gnu_file0),
    ("gnu-nearest-symbol", "gnu", bug_gnu_nearest_symbol),
    ("gnu-empty-file-symbol", "gnu", bug_gnu_empty_file),
    ("eu-row-past-sequence", "eu", bug_eu_past_sequence),
    ("eu-comp-dir-twice", "eu", bug_eu_comp_dir_twice),
    ("gnu-double-slash", "gnu", bug_gnu_double_slash),
    ("eu-double-slash", "eu", bug_eu_double_slash),
]

# ------------------------------------------------------------------ main


def measure(peer, name, e, addrs, dw, llvm_frames, env, args):
    """Compare one input with one peer; returns a dict: the answers (ob,
    tb), the differing indices (diff), the covered ones per bug (bugs),
    the kinds of the differences, the tools' seconds."""
    tcmd, ocmd = commands(peer, e["file"], e["opts"], args.compat)
    tout, tt = run(tcmd, addrs, peer, args.timeout)
    oout, ot = run(ocmd, addrs, "sym (%s)" % peer, args.timeout, env)
    if peer == "llvm":
        tb = split_llvm(tout, len(addrs), peer)
        ob = split_llvm(oout, len(addrs), "sym")
    else:
        tb = split_addr(tout, addrs, peer)
        ob = split_addr(oout, addrs, "sym")
    r = {"ob": ob, "tb": tb, "diff": [], "bugs": {}, "kinds": {},
         "t_peer": tt, "t_sym": ot}
    for i, a in enumerate(addrs):
        if ob[i] == tb[i]:
            continue
        for bname, bpeer, rule in BUGS:
            if bpeer == peer and rule(dw, a, ob[i], tb[i],
                                      llvm_frames[i] if llvm_frames
                                      else None):
                r["bugs"].setdefault(bname, []).append(i)
                break
        else:
            k = classify(peer, ob[i], tb[i])
            r["kinds"][k] = r["kinds"].get(k, 0) + 1
            r["diff"].append(i)
    n = len(addrs)
    r["covered"] = sum(len(v) for v in r["bugs"].values())
    r["judged"] = n - r["covered"]
    r["same"] = r["judged"] - len(r["diff"])
    r["pct"] = 100.0 * r["same"] / r["judged"] if r["judged"] else 100.0
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--peer", action="append", choices=PEERS,
                    help="only these peers (default all three; llvm is "
                    "the arbiter of the peer-bug rules, so leave it in)")
    ap.add_argument("--sample", type=int, default=2000,
                    help="addresses per input, 0 = all (default %(default)s)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=10,
                    help="differing addresses printed per input and peer "
                    "(default %(default)s; -1 all)")
    ap.add_argument("--show-bugs", type=int, default=0, metavar="N",
                    help="also print N addresses per peer bug")
    ap.add_argument("--compat", action="store_true",
                    help="run bin/compat/llvm-symbolizer and "
                    "bin/compat/addr2line with the peers' own command "
                    "lines instead of sym addr2line's styles")
    ap.add_argument("--goal", action="store_true",
                    help="exit 1 unless every goal is met")
    ap.add_argument("--tap", action="store_true",
                    help="print TAP: a point per input and peer (the goal), "
                    "and one that no difference is in the file names")
    ap.add_argument("--points", action="store_true",
                    help="as --tap, but the points unnumbered and without "
                    "a plan (\"ok - \" lines for tests/e2e/lib/lib.sh's "
                    "tap_points)")
    ap.add_argument("--min", type=float, default=GOAL, metavar="PCT",
                    help="the goal: share identical per input and peer "
                    "(default %(default)s, the issue's)")
    ap.add_argument("--timeout", type=int, default=1800)
    args = ap.parse_args()
    if args.points:
        args.tap = True
    peers = args.peer or list(PEERS)
    out = sys.stdout
    note = (lambda s: out.write("# " + s.replace("\n", "\n# ") + "\n")) \
        if args.tap else (lambda s: out.write(s + "\n"))
    store = tempfile.mkdtemp(prefix="peers-store.")
    env = dict(os.environ, SYM_STORE=store)
    missed, npoint, paths = [], 0, []
    totals = {}
    try:
        for name, e in inputs(args.inputs):
            addrs, total = addresses(e["addr_source"], args.sample,
                                     args.seed)
            dw = Dwarf(e["file"])
            llvm_frames = None
            note("%s: %d of %d instruction addresses (%s)" %
                 (name, len(addrs), total, e["file"]))
            for peer in peers:
                r = measure(peer, name, e, addrs, dw, llvm_frames, env, args)
                if peer == "llvm":
                    llvm_frames = [frames("llvm", b) for b in r["tb"]]
                t = totals.setdefault(peer, [0, 0, 0])
                t[0] += r["same"]
                t[1] += r["judged"]
                t[2] += r["covered"]
                line = "%s %s: %d/%d identical (%.2f%%)%s; %d differ%s; " \
                    "%s %.2fs, sym %.2fs" % (
                        name, peer, r["same"], r["judged"], r["pct"],
                        " of the addresses no listed peer bug covers, "
                        "%d covered: %s" % (r["covered"], ", ".join(
                            "%s %d" % (k, len(v)) for k, v in
                            sorted(r["bugs"].items())))
                        if r["covered"] else "",
                        len(r["diff"]), " (%s)" % ", ".join(
                            "%s %d" % kv for kv in sorted(r["kinds"].items()))
                        if r["kinds"] else "", peer, r["t_peer"], r["t_sym"])
                if args.tap:
                    npoint += 1
                    out.write("%sok%s - %s\n" % (
                        "" if r["pct"] >= args.min else "not ",
                        "" if args.points else " %d" % npoint, line))
                else:
                    note(line)
                if r["pct"] < args.min:
                    missed.append("%s %s %.2f%%" % (name, peer, r["pct"]))
                paths += ["%s %s 0x%x" % (name, peer, addrs[i])
                          for i in r["diff"]
                          if classify(peer, r["ob"][i], r["tb"][i]) ==
                          "paths"]
                shown = r["diff"] if args.show < 0 else r["diff"][:args.show]
                for i in shown:
                    note("  0x%x %s:\n    sym:  %s\n    %-5s %s" % (
                        addrs[i], classify(peer, r["ob"][i], r["tb"][i]),
                        r["ob"][i].replace("\n", "\n          "),
                        peer + ":", r["tb"][i].replace("\n", "\n          ")))
                for bname, idx in sorted(r["bugs"].items()):
                    for i in idx[:args.show_bugs]:
                        note("  0x%x peer bug %s:\n    sym:  %s\n    %-5s %s"
                             % (addrs[i], bname,
                                r["ob"][i].replace("\n", "\n          "),
                                peer + ":",
                                r["tb"][i].replace("\n", "\n          ")))
                out.flush()
    finally:
        subprocess.run(["rm", "-rf", store])
    for peer in peers:
        t = totals.get(peer)
        if t:
            note("all inputs, %s: %d/%d identical (%.2f%%)%s" % (
                peer, t[0], t[1], 100.0 * t[0] / t[1] if t[1] else 100.0,
                ", %d covered by listed peer bugs" % t[2] if t[2] else ""))
    if missed:
        note("below %.2f%%: %s" % (args.min, ", ".join(missed)))
    if args.tap:
        npoint += 1
        out.write("%sok%s - no difference is in the file names (paths)\n"
                  % ("not " if paths else "",
                     "" if args.points else " %d" % npoint))
        for x in paths[:20]:
            note("  path difference: " + x)
        if not args.points:
            out.write("1..%d\n" % npoint)
        sys.exit(1 if missed or paths else 0)
    sys.exit(1 if args.goal and missed else 0)


if __name__ == "__main__":
    main()
