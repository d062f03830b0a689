#!/usr/bin/env python3
"""record_check.py - checks of `sym record` output for tests/e2e/t30*.sh.

It reads the raw stack format (docs/raw-format.md) itself, independently
of libsym's reader, and judges the frames against binutils: `nm -S` for
function ranges, `objdump -d` for the PLT stubs (F@plt), `readelf -n` for
build IDs and `readelf -lW` for the PT_LOAD segments.  Each check prints
'# ' diagnostics and exits 0 when it passes, 1 when it fails.

  record_check.py shares FILE BIN [--mode fp|dwarf]
      70/30 burner: the burn70 share among burn70+burn30 leaves lies in
      the 99.9% binomial interval around 0.7; >= 99% of the process's
      samples reach main and leaves in burn* have main as their caller
      (samples before main runs, in ld.so or in the program's _start, are
      counted apart); at most
      1% of them are flagged
  record_check.py leafshares FILE BIN [--mode M]
      70/30 burner, `--aggregate kernel` (t3120): the burn70 share among
      burn70+burn30 leaves in the 99.9% interval; reach main printed only
  record_check.py omitfp FILE BIN --mode fp|dwarf
      -fomit-frame-pointer build: dwarf: >= 99% reach main; fp: every
      stack that does not reach main correctly carries a flag
  record_check.py fpchain FILE BIN --mode fp|dwarf
      prof_clock (main -> spin -> clock_gettime@plt -> clock_gettime ->
      vDSO), with more than half of its samples in that clock path (the
      PLT stub, libc, the vDSO, the kernel under them): dwarf: >= 99% of
      the stacks are right (the clock path's frames, spin and main, then
      main's callers); fp: every stack that is not right carries a flag
  record_check.py fpchain-cases BIN TMPDIR
      fpchain's judgement of stacks written by hand at the addresses of
      prof_clock BIN, as "ok - " / "not ok - " lines (t3014)
  record_check.py buildids FILE [--expect PATH...]
      every file mapping used by a frame has the build ID readelf -n
      gives for its path; each --expect path has frames in the file
  record_check.py vdso FILE TMPDIR
      frames in the vDSO exist and their map has the build ID that
      readelf -n finds in a copy of the vDSO image (TMPDIR: scratch)
  record_check.py addrs FILE BIN... [--leaves F,F...]
      every frame in each BIN lies inside a function symbol of BIN (leaf:
      addr, callers: addr - 1, or addr itself when it is a function's
      first byte in a stack flagged badreturn; a stripped BIN is judged by
      its debug file under /usr/lib/debug/.build-id), every map's vaddr
      agrees with BIN's PT_LOAD segments and its build ID with readelf
      -n; with --leaves, the leaves in the first BIN are in one of the
      functions F, or in what ld.so runs at load and unload (_init,
      _fini, crtstuff's constructors and destructors)
  record_check.py faults MODE FILE BIN [--max-depth N]
      prof_faults (fixtures/src/prof_faults.c) in dwarf mode, stacks that
      must be flagged rather than guessed: nocfi: every stack through
      libnocfi.so (a module without CFI) is flagged and ends at its frame
      there, the frames before it right (cb_burn, or now() and libc);
      deep and wide: a stack in deep() or wide() is whole and unflagged
      (deep/wide... main, libc, _start) or flagged and right as far as it
      goes, and most are flagged: deep's truncated ones hold N frames
      (127, kernel frames too), wide's run past the 8 KiB copy; no stack
      has more than N frames; signal: >= 99% of the
      stacks in the signal handler go through the signal frame (its
      interrupted frame exact) down to main and _start, unflagged, and
      none is wrong without a flag
"""
import bisect
import math
import os
import re
import subprocess
import sys


def print_unflagged(s):
    """A wrong stack the recorder did not flag, as the raw file has it."""
    print("# unflagged wrong stack: %s" %
          " ".join("%s%s:%x" % ("r" if f.ret else "p",
                                "?" if f.map is None else f.map,
                                f.addr) for f in s["frames"]))


class Judged:
    """A program's samples counted by stack: right or not, flagged or
    not; the first few wrong and unflagged stacks are printed."""

    def __init__(self):
        self.total = self.right = self.flagged = self.bad = 0

    def add(self, s, c, right):
        """Stack @s, sampled @c times, is @right or not."""
        self.total += c
        if right:
            self.right += c
        if s["flags"]:
            self.flagged += c
        elif not right:
            self.bad += c
            if self.bad <= 5 * c:
                print_unflagged(s)

    def enough(self):
        if self.total < 50:
            die("too few samples (%d) to judge" % self.total)

    def verdict(self, mode):
        """dwarf mode: at least 99% right; fp mode: every wrong stack
        flagged."""
        self.enough()
        if mode == "dwarf":
            return self.right >= 0.99 * self.total
        return self.bad == 0


def die(msg):
    print("# " + msg)
    sys.exit(1)


def unesc(s):
    if s == "-":
        return ""
    return re.sub(r"%([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), s)


class Frame:
    __slots__ = ("ret", "map", "addr")

    def __init__(self, tok):
        k = tok[0]
        if k not in "pr":
            raise ValueError("bad frame kind: " + tok)
        self.ret = k == "r"
        m, a = tok[1:].split(":")
        self.map = None if m == "?" else int(m)
        self.addr = int(a, 16)


class Profile:
    def __init__(self, path):
        self.header = {}
        self.flagged = {}
        self.maps = {}
        self.procs = {}
        self.threads = {}
        self.stacks = []
        try:
            with open(path) as f:
                lines = f.read().split("\n")
        except OSError as e:
            die("cannot read %s: %s" % (path, e))
        if lines[0] != "sym-raw 1":
            die("%s: first line is %r" % (path, lines[0]))
        if lines[-1] == "":
            lines.pop()
        if lines[-1] != "end":
            die("%s: no end line" % path)
        for ln, line in enumerate(lines[1:-1], 2):
            if not line or line.startswith("#"):
                continue
            t = line.split(" ")
            kw = t[0]
            try:
                if kw == "flagged":
                    self.flagged[t[1]] = int(t[2])
                elif kw == "map":
                    self.maps[int(t[1])] = {
                        "kind": t[2], "pid": int(t[3]),
                        "start": int(t[4], 16), "end": int(t[5], 16),
                        "pgoff": int(t[6], 16), "vaddr": int(t[7], 16),
                        "bid": "" if t[8] == "-" else t[8],
                        "path": unesc(t[9])}
                elif kw == "process":
                    self.procs[int(t[1])] = (t[2], int(t[3]), unesc(t[4]))
                elif kw == "thread":
                    self.threads[int(t[2])] = (int(t[1]), unesc(t[3]))
                elif kw == "stack":
                    flags = set() if t[5] == "-" else set(t[5].split(","))
                    frames = [Frame(x) for x in t[6:]]
                    for fr in frames:
                        if fr.map is not None and fr.map not in self.maps:
                            raise ValueError("unknown map %d" % fr.map)
                    self.stacks.append({
                        "count": int(t[1]), "weight": int(t[2]),
                        "pid": int(t[3]), "tid": int(t[4]),
                        "flags": flags, "frames": frames})
                else:
                    self.header[kw] = t[1:]
            except (ValueError, IndexError) as e:
                die("%s:%d: %s: %s" % (path, ln, e, line))
        n = sum(s["count"] for s in self.stacks)
        if int(self.header["samples"][0]) != n:
            die("header says %s samples, stacks hold %d" %
                (self.header["samples"][0], n))


def run(cmd):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE,
                          universal_newlines=True).stdout


class Symbols:
    """Function symbols of one ELF file: name of the function at vaddr."""

    def __init__(self, path):
        syms = []
        src = path
        if not self.has_symtab(path):
            # a stripped system library: its libc6-dbg style debug file
            bid = build_id(path)
            dbg = "/usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:])
            if bid and os.path.exists(dbg):
                src = dbg
        out = subprocess.run(["nm", "-S", "--defined-only", src],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             universal_newlines=True).stdout
        if not out:
            out = run(["nm", "-D", "-S", "--defined-only", path])
        unsized = []
        for line in out.splitlines():
            t = line.split()
            if len(t) == 4 and t[2] in "tTwWi":
                start, size = int(t[0], 16), int(t[1], 16)
                if size:
                    syms.append((start, size, t[3]))
            elif len(t) == 3 and t[1] in "tTwWi":
                unsized.append((int(t[0], 16), t[2]))
        # crtstuff's helpers (frame_dummy, __do_global_dtors_aux...) have
        # no size: they run to the next symbol, as addr2line reads them
        starts = sorted(x[0] for x in syms) + [x[0] for x in unsized]
        starts.sort()
        for a, name in unsized:
            i = bisect.bisect_right(starts, a)
            nxt = starts[i] if i < len(starts) else a + 16
            syms.append((a, min(max(nxt - a, 1), 4096), name))
        # PLT stubs have no symbols but are code a leaf can be in
        syms.extend(plt_stubs(path))
        syms.sort()
        self.starts = [s[0] for s in syms]
        self.syms = syms

    def name(self, addr):
        i = bisect.bisect_right(self.starts, addr) - 1
        # symbols may nest or alias: look back a few
        for j in range(i, max(i - 8, -1), -1):
            st, size, name = self.syms[j]
            if st <= addr < st + size:
                return name
        return None

    def is_start(self, addr):
        """Is addr the first byte of a function symbol?"""
        i = bisect.bisect_left(self.starts, addr)
        return i < len(self.starts) and self.starts[i] == addr

    @staticmethod
    def has_symtab(path):
        return ".symtab" in run(["readelf", "-SW", path])

    def range_of(self, name):
        return [(s, s + z) for s, z, n in self.syms if n == name]


PLT_SECTIONS = (".plt", ".plt.sec", ".plt.got")


def plt_stubs(path):
    """(start, size, name) of the PLT code of ELF file @path.  nm lists no
    PLT stub; objdump -d labels each one '<F@plt>' (from the PLT
    relocations, so in a stripped file too), and that is its name.  What
    a PLT section holds before its first such label, .plt's header (PLT0,
    the lazy binding's way into ld.so, labelled '<F@plt-0x10>' or
    '<.plt>'), and any stub objdump names no function, is named after the
    section: ".plt" for PLT0."""
    secs = {}
    for line in run(["readelf", "-SW", path]).splitlines():
        t = line.replace("[ ", "[").split()
        if len(t) > 5 and t[1] in PLT_SECTIONS and int(t[5], 16):
            secs[t[1]] = (int(t[3], 16), int(t[5], 16))
    if not secs:
        return []
    cmd = ["objdump", "-d", "--no-show-raw-insn"]
    for name in secs:
        cmd += ["-j", name]
    labels = {name: [] for name in secs}
    sec = None
    for line in run(cmd + [path]).splitlines():
        m = re.match(r"Disassembly of section (\S+):$", line)
        if m:
            sec = m.group(1)
            continue
        m = re.match(r"([0-9a-f]+) <(.+)>:$", line)
        if m and sec in labels:
            name = m.group(2)
            labels[sec].append((int(m.group(1), 16),
                                name if name.endswith("@plt") else sec))
    out = []
    for sec, (start, size) in secs.items():
        lab = sorted(labels[sec])
        if not lab or lab[0][0] > start:
            lab.insert(0, (start, sec))
        ends = [a for a, _ in lab[1:]] + [start + size]
        out.extend((a, e - a, name) for (a, name), e in zip(lab, ends))
    return out


def build_id(path):
    m = re.search(r"Build ID: ([0-9a-f]+)", run(["readelf", "-n", path]))
    return m.group(1) if m else ""


def loads(path):
    out = []
    for line in run(["readelf", "-lW", path]).splitlines():
        t = line.split()
        if t and t[0] == "LOAD":
            out.append((int(t[1], 16), int(t[2], 16), int(t[4], 16),
                        "E" in "".join(t[6:-1])))
    return out


def same(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def frame_names(prof, stack, binpath, syms):
    """Function name (or None when not in BIN) for each frame."""
    out = []
    for fr in stack["frames"]:
        m = prof.maps.get(fr.map) if fr.map is not None else None
        if m is None or m["kind"] != "file" or not same(m["path"], binpath):
            out.append(None)
            continue
        out.append(syms.name(fr.addr - 1 if fr.ret else fr.addr))
    return out


def binomial_ok(k, n, p, z=3.2905):
    """k of n inside the 99.9% interval of Binomial(n, p)?"""
    sd = math.sqrt(n * p * (1 - p))
    return abs(k - n * p) <= z * sd + 0.5, n * p - z * sd, n * p + z * sd


def in_loader(prof, stack, names):
    """The program has not reached main yet, so main cannot be on the
    stack: a frame is in ld.so (the workloads dlopen() nothing), or the
    only user frame is the program's _start (names: frame_names()), as in
    a page fault on its first instruction, whose stack is complete."""
    user = []
    for fr, name in zip(stack["frames"], names):
        m = prof.maps.get(fr.map) if fr.map is not None else None
        if m is not None and "/ld-linux" in m["path"]:
            return True
        if m is None or m["kind"] != "kernel":
            user.append(name)
    return user == ["_start"]


def main_pid(prof, binpath):
    for m in prof.maps.values():
        if m["kind"] == "file" and same(m["path"], binpath):
            return m["pid"]
    die("no mapping of %s in the profile" % binpath)


def program_stacks(prof, binpath, loader):
    """(stack, frame names, count) of each stack of BIN's process
    once it is past the loader; the samples before go to loader[0]."""
    syms = Symbols(binpath)
    pid = main_pid(prof, binpath)
    for s in prof.stacks:
        if s["pid"] != pid:
            continue
        names = frame_names(prof, s, binpath, syms)
        if in_loader(prof, s, names):
            loader[0] += s["count"]
            continue
        yield s, names, s["count"]


def cmd_shares(prof, binpath, mode):
    n70 = n30 = total = reach = chain_ok = in_burn = flagged = 0
    loader = [0]
    pid = main_pid(prof, binpath)
    for s, names, c in program_stacks(prof, binpath, loader):
        total += c
        if s["flags"]:
            flagged += c
        if "main" in names:
            reach += c
        user = [x for x, fr in zip(names, s["frames"])
                if fr.map is None or prof.maps[fr.map]["kind"] != "kernel"]
        if user and user[0] in ("burn70", "burn30"):
            in_burn += c
            if user[0] == "burn70":
                n70 += c
            else:
                n30 += c
            if len(user) > 1 and user[1] == "main":
                chain_ok += c
    print("# %d samples of pid %d (and %d before main, in ld.so or "
          "_start): burn70 %d, burn30 %d, reach main %d, burn* -> main %d of "
          "%d, flagged %d" % (total, pid, loader[0], n70, n30, reach, chain_ok,
                              in_burn, flagged))
    ok = True
    n = n70 + n30
    if n < 100:
        die("too few samples in burn70/burn30 (%d) to judge" % n)
    good, lo, hi = binomial_ok(n70, n, 0.7)
    print("# burn70 share %.4f, 99.9%% interval [%.4f, %.4f]" %
          (n70 / n, lo / n, hi / n))
    if not good:
        print("# burn70 share outside the interval")
        ok = False
    if reach < 0.99 * total:
        print("# only %.2f%% of samples reach main" % (100.0 * reach / total))
        ok = False
    if chain_ok < 0.99 * in_burn:
        print("# only %.2f%% of burn* leaves have main as caller" %
              (100.0 * chain_ok / in_burn))
        ok = False
    if flagged > 0.01 * total:
        print("# %.2f%% of the stacks are flagged: right stacks must not "
              "be" % (100.0 * flagged / total))
        ok = False
    return ok


def cmd_leafshares(prof, binpath, mode):
    """burn70's share of the samples whose leaf is burn70 or burn30 in
    the 99.9% interval around 70%; how many reach main is printed, not
    judged (`--aggregate kernel`: frame-pointer stacks from BPF, whose
    walk skips a frameless leaf's caller)."""
    n70 = n30 = total = reach = flagged = 0
    for s, names, c in program_stacks(prof, binpath, [0]):
        total += c
        flagged += c if s["flags"] else 0
        reach += c if "main" in names else 0
        user = [x for x, fr in zip(names, s["frames"])
                if fr.map is None or prof.maps[fr.map]["kind"] != "kernel"]
        if user and user[0] == "burn70":
            n70 += c
        elif user and user[0] == "burn30":
            n30 += c
    n = n70 + n30
    print("# %s: %d samples, burn70 %d, burn30 %d; reach main %.2f%%, "
          "flagged %.2f%%" % (mode, total, n70, n30,
                              100.0 * reach / max(total, 1),
                              100.0 * flagged / max(total, 1)))
    if n < 100:
        die("too few samples in burn70/burn30 (%d) to judge" % n)
    good, lo, hi = binomial_ok(n70, n, 0.7)
    print("# burn70 share %.4f, 99.9%% interval [%.4f, %.4f]" %
          (n70 / n, lo / n, hi / n))
    return good


def cmd_omitfp(prof, binpath, mode):
    j = Judged()
    loader = [0]
    for s, names, c in program_stacks(prof, binpath, loader):
        user = [x for x, fr in zip(names, s["frames"])
                if fr.map is None or prof.maps[fr.map]["kind"] != "kernel"]
        right = "main" in names
        if user and user[0] in ("burn70", "burn30"):
            right = right and len(user) > 1 and user[1] == "main"
        j.add(s, c, right)
    print("# %s mode: %d samples (and %d before main), %d reach "
          "main correctly, %d flagged, %d wrong and unflagged" %
          (mode, j.total, loader[0], j.right, j.flagged, j.bad))
    return j.verdict(mode)


# prof_clock's clock path as BIN names it: spin() calls clock_gettime()
# through its PLT stub, whose first call goes through .plt's header (PLT0,
# or with IBT the stub's lazy entry in .plt) into ld.so.
CLOCK_PLT = ("clock_gettime@plt", ".plt")

# A sample in BIN's PLT stub.  Issue 14: t3015 failed 3 runs in 3 on
# another machine, 12 to 27 stacks a run called wrong and unflagged (fp),
# 14 to 21 (dwarf), e.g. p2:1030 r2:1277 r2:1066 r1:2724a r1:27305
# r2:1131.  The frames, in prof_clock -O2 -g as t3015 builds it (gcc 12;
# objdump -d, readelf --debug-dump=frames): 1030 <clock_gettime@plt> is
# jmp *GOT; spin's call 1030 at 1272 returns to 1277; main's call
# <spin> at 1061 returns to 1066; libc's 2724a is in
# __libc_start_call_main (after its call to main), 27305 in
# __libc_start_main_impl; 1131 is _start's.  .plt's CFI at 1030: CFA =
# rsp + 8, return address at [rsp], no rule for rbp: the stub has no
# frame and keeps the caller's rbp.  Seen here (2-CPU VM, kernel 6.18,
# kvm-clock; at 10 kHz for 20 s, where t3015 samples at 999 Hz for 1 s):
# - the kernel's frame-pointer walk reads [rbp + 8] from spin's rbp and
#   skips spin: perf record --call-graph fp gave 1030 1066 2724a for all
#   8 samples at 1030; sym record --leaf-stack-size 0 (no leaf repair)
#   gave p:1030 r:1066 r:2724a 5 times, each flagged 'leaf';
# - sym record fp mode repairs the leaf by its CFI (unwinder_leaf_fp():
#   return address [rsp] = 1277; rbp kept, so the walk from it gives
#   spin's callers): p:1030 r:1277 r:1066 r:2724a, unflagged, 6 times,
#   and the one failure of t3015 in 5 runs before this fix;
# - dwarf mode unwinds through .plt's CFI: p:1030 r:1277 r:1066 r:2724a
#   r:27305 r:1131, unflagged, 6 times (2 under kernel frames).
# Both are right (PLT stub -> spin -> main -> its callers), so the
# recorder was right and this checker wrong: it took the stub for a leaf
# in BIN other than spin, and wanted main next.  A PLT stub leaf is right
# when spin, main and main's callers follow it; one whose chain skips
# spin (the walk without the repair) is wrong.
FPCHAIN_LEAVES = ("plt", "libc", "vdso")

# A sample in libc's start-up code before main runs, or in its exit code
# after main returns, has neither main nor spin on its stack and is right
# when it ends at BIN's _start.  t3015 failed 1 run in 8 here on
# p2:272e9 r3:1131 (fp mode, -fomit-frame-pointer build): 272e9 is
# __libc_start_main_impl's call to _dl_audit_preinit@plt, which it runs
# after the program's init functions and before __libc_start_call_main
# calls main (Debian 12's glibc 2.36); the leaf repair found _start's
# 1131 by CFI, and _start is outermost.  dwarf mode had 2 such stacks in
# 82,000 samples: p2:2724a r2:27305 r3:1131 (in __libc_start_call_main
# right after main returned) and one in exit(), through 27251 (the
# return from its call to exit).  A leaf in libc's clock_gettime is never
# that: a chain from there that reaches _start without spin and main
# skipped them.


def frame_kind(prof, fr, binpath):
    """Where frame @fr is: "bin", "libc", "vdso", "kernel", "other" or
    "?" (no map)."""
    m = prof.maps.get(fr.map) if fr.map is not None else None
    if m is None:
        return "?"
    if m["kind"] in ("vdso", "kernel"):
        return m["kind"]
    if m["kind"] == "file" and same(m["path"], binpath):
        return "bin"
    if m["kind"] == "file" and "/libc.so" in m["path"]:
        return "libc"
    return "other"


def in_libc_clock(prof, fr, cache):
    """Is frame @fr, in libc, in libc's clock_gettime?  By address: any
    function symbol whose name holds "clock_gettime" (nm -D gives
    clock_gettime and __clock_gettime, the debug symbols more aliases).
    None when libc cannot be read.  @cache: dict, path -> ranges."""
    path = prof.maps[fr.map]["path"]
    if path not in cache:
        try:
            cache[path] = [(a, a + z) for a, z, n in Symbols(path).syms
                           if "clock_gettime" in n]
        except (OSError, subprocess.CalledProcessError):
            cache[path] = None
    if cache[path] is None:
        return None
    a = fr.addr - 1 if fr.ret else fr.addr
    return any(lo <= a < hi for lo, hi in cache[path])


def outside_main(prof, fr, cache):
    """Are user frames @fr ((frame, kind, name) each) a stack of libc's
    start-up or exit code: libc frames outside clock_gettime and BIN's
    code that libc runs there (LOADER_RUN), then BIN's _start?"""
    if len(fr) < 2 or fr[-1][1:] != ("bin", "_start"):
        return False
    for f, k, n in fr[:-1]:
        if k == "bin" and n in LOADER_RUN:
            continue
        if k != "libc" or in_libc_clock(prof, f, cache) is not False:
            return False
    return True


def fpchain_judge(prof, s, names, binpath, cache):
    """Is stack @s of prof_clock right?  Its kernel frames do not count:
    a sample in the kernel is judged by its user frames.  Right is: a leaf
    in the clock path (BIN's clock_gettime PLT stub, or libc's
    clock_gettime with the vDSO's frames before it), then spin and main
    from BIN, then one or more frames of main's callers (libc, BIN's
    _start); or a leaf in spin, then main and its callers; or a leaf in
    main, then its callers; or a stack of libc's start-up or exit code
    (outside_main()).  Returns (right, where): where is the part of the
    clock path the leaf is in (FPCHAIN_LEAVES), "outside" for start-up or
    exit code, None for a leaf in BIN's own code.  @cache: for
    in_libc_clock()."""
    fr = [(f, k, n) for f, k, n in
          ((f, frame_kind(prof, f, binpath), n)
           for f, n in zip(s["frames"], names)) if k != "kernel"]
    i = 0
    where = None
    if outside_main(prof, fr, cache):
        return True, "outside"
    if fr and fr[0][1] == "bin" and fr[0][2] in CLOCK_PLT and \
       not fr[0][0].ret:
        i, where = 1, "plt"
    else:
        while i < len(fr) and fr[i][1] in ("vdso", "libc"):
            i += 1
        if i:
            where = fr[0][1]
            if fr[i - 1][1] != "libc":
                return False, where     # the vDSO is called from libc
    if where or (fr and fr[0][1:] == ("bin", "spin")):
        want = ["spin", "main"]
    else:
        want = ["main"]
    prog = fr[i:i + len(want)]
    if [n for _, _, n in prog] != want or any(k != "bin" for _, k, _ in prog):
        return False, where
    tail = fr[i + len(want):]
    right = bool(tail) and all(k == "libc" or n == "_start"
                               for _, k, n in tail)
    return right, where


def cmd_fpchain(prof, binpath, mode):
    """prof_clock: main -> spin -> clock_gettime (PLT stub, libc) -> the
    vDSO, and maybe the kernel: fpchain_judge() says which stacks are
    right.  More than half the samples must have their leaf in the clock
    path, wherever in it they land."""
    j = Judged()
    loader = [0]
    where = dict.fromkeys(FPCHAIN_LEAVES + ("outside",), 0)
    in_kernel = 0
    cache = {}
    for s, names, c in program_stacks(prof, binpath, loader):
        right, w = fpchain_judge(prof, s, names, binpath, cache)
        if w:
            where[w] += c
        if w in FPCHAIN_LEAVES:
            f = s["frames"][0]
            if f.map is not None and prof.maps[f.map]["kind"] == "kernel":
                in_kernel += c
        j.add(s, c, right)
    in_path = sum(where[w] for w in FPCHAIN_LEAVES)
    print("# %s mode: %d samples (and %d before main), %d with a leaf in "
          "the clock path (PLT stub %d, libc %d, vDSO %d; in the kernel "
          "under them %d), %d in libc's start-up or exit code, %d right, "
          "%d flagged, %d wrong and unflagged" %
          (mode, j.total, loader[0], in_path, where["plt"], where["libc"],
           where["vdso"], in_kernel, where["outside"], j.right, j.flagged,
           j.bad))
    j.enough()
    if in_path < 0.5 * j.total:
        print("# fewer than half the samples are in the clock path: the "
              "workload does not test what it should")
        return False
    return j.verdict(mode)


def call_returns(path, func, callee):
    """Return addresses of @func's calls to @callee in ELF file @path (the
    instructions after objdump -d's 'call ... <callee...>')."""
    out = run(["objdump", "-d", "--no-show-raw-insn",
               "--disassemble=" + func, path])
    addrs = []
    after_call = False
    for line in out.splitlines():
        m = re.match(r"\s+([0-9a-f]+):\s+(\S+)(.*)$", line)
        if not m:
            continue
        if after_call:
            addrs.append(int(m.group(1), 16))
        after_call = m.group(2).startswith("call") and \
            "<" + callee in m.group(3)
    if not addrs:
        die("%s: no call from %s to %s" % (path, func, callee))
    return addrs


def own_libc():
    """Path of the libc this process runs on: the system's, which
    prof_clock links too."""
    with open("/proc/self/maps") as f:
        for line in f:
            t = line.split()
            if len(t) > 5 and "/libc.so" in t[5]:
                return t[5]
    die("no libc in /proc/self/maps")


def cmd_fpchain_cases(binpath, tmpdir):
    """fpchain's own cases: stacks written by hand at the addresses of
    prof_clock @binpath (built as t3015 builds it) and of the system's
    libc, each judged by fpchain_judge(), then whole profiles by
    cmd_fpchain()'s verdict.  Prints 'ok - ' and 'not ok - ' lines
    (tests/e2e/t3014)."""
    syms = Symbols(binpath)
    libc = own_libc()
    lsyms = Symbols(libc)
    plt = syms.range_of("clock_gettime@plt")
    plt0 = syms.range_of(".plt")
    init = syms.range_of("frame_dummy")
    # the largest of each: clock_gettime itself, not a syscall helper
    cg = sorted(((lo, lo + z) for lo, z, n in lsyms.syms
                 if "clock_gettime" in n), key=lambda r: r[0] - r[1])
    lsm = sorted(((lo, lo + z) for lo, z, n in lsyms.syms
                  if n.startswith("__libc_start_main")),
                 key=lambda r: r[0] - r[1])
    if not plt or not plt0 or not init:
        die("%s: no clock_gettime@plt stub, .plt header or frame_dummy" %
            binpath)
    if not cg or not lsm:
        die("%s: no clock_gettime or __libc_start_main" % libc)
    a = {"plt": plt[0][0], "plt0": plt0[0][0], "init": init[0][0],
         "spin": call_returns(binpath, "spin", "clock_gettime@plt")[-1],
         "main": call_returns(binpath, "main", "spin")[0],
         "start": call_returns(binpath, "_start", "__libc_start_main")[0],
         # libc: a leaf in clock_gettime and its return from the vDSO,
         # two points in __libc_start_main, a return address into it;
         # main's caller is any libc frame for fpchain
         "cg": cg[0][0] + 4, "cgret": cg[0][0] + 9,
         "lsm": lsm[0][0] + (lsm[0][1] - lsm[0][0]) // 2,
         "lsm2": lsm[0][0] + (lsm[0][1] - lsm[0][0]) // 3,
         "lsmret": lsm[0][1] - 1}
    # Maps: 0 kernel, 1 libc, 2 BIN, 3 the vDSO.
    k = "p0:ffffffff81bb6998 r0:ffffffff81000130"
    plt_fp = "p2:%(plt)x r2:%(spin)x r2:%(main)x r1:%(lsmret)x" % a
    skip_spin = "p2:%(plt)x r2:%(main)x r1:%(lsmret)x" % a
    tail = "r2:%(spin)x r2:%(main)x r1:%(lsmret)x" % a
    cases = [
        ("PLT stub leaf, fp chain with its leaf repaired: "
         "clock_gettime@plt spin main libc", plt_fp, True),
        ("PLT stub leaf, dwarf chain: clock_gettime@plt spin main libc "
         "libc _start", plt_fp + " r1:%(lsmret)x r2:%(start)x" % a, True),
        ("PLT stub leaf under kernel frames", k + " " + plt_fp, True),
        ("PLT stub leaf whose chain skips spin (the kernel's own walk): "
         "clock_gettime@plt main libc", skip_spin, False),
        ("PLT stub leaf, then spin, and nothing of main",
         "p2:%(plt)x r2:%(spin)x" % a, False),
        ("leaf in .plt's header (lazy binding): .plt spin main libc",
         "p2:%(plt0)x " % a + tail, True),
        ("a return address in the PLT (stubs jump, they do not call)",
         "p1:%(cg)x r2:%(plt)x " % a + tail, False),
        ("libc leaf: clock_gettime spin main libc",
         "p1:%(cg)x " % a + tail, True),
        ("vDSO leaf: vdso vdso libc spin main libc",
         "p3:c7a r3:e1f r1:%(cgret)x " % a + tail, True),
        ("vDSO leaf under kernel frames",
         k + " p3:c7a r1:%(cgret)x " % a + tail, True),
        ("vDSO leaf with no libc frame: vdso spin main libc",
         "p3:c7a " + tail, False),
        ("vDSO leaf whose chain skips spin: vdso libc main libc",
         "p3:c7a r1:%(cgret)x r2:%(main)x r1:%(lsmret)x" % a, False),
        ("spin leaf: spin main libc",
         "p2:%(spin)x r2:%(main)x r1:%(lsmret)x" % a, True),
        ("main leaf: main libc", "p2:%(main)x r1:%(lsmret)x" % a, True),
        ("spin leaf, chain ends at main", "p2:%(spin)x r2:%(main)x" % a,
         False),
        ("libc start-up code before main: __libc_start_main _start",
         "p1:%(lsm)x r2:%(start)x" % a, True),
        ("libc exit code under kernel frames: libc libc _start",
         k + " p1:%(lsm2)x r1:%(lsmret)x r2:%(start)x" % a, True),
        ("BIN's init code run by libc: frame_dummy libc _start",
         "p2:%(init)x r1:%(lsmret)x r2:%(start)x" % a, True),
        ("libc start-up leaf, chain ends short of _start",
         "p1:%(lsm)x r1:%(lsmret)x" % a, False),
        ("libc clock_gettime leaf whose chain reaches _start without spin "
         "and main", "p1:%(cg)x r1:%(lsmret)x r2:%(start)x" % a, False),
    ]
    right = [c for c in cases if c[2]]

    def profile(name, stacks):
        """A raw file of @stacks, (count, flags, frames) each; parsed."""
        path = os.path.join(tmpdir, name + ".raw")
        esc = [re.sub(r"[%\s]", lambda m: "%%%02X" % ord(m.group(0)), x)
               for x in (libc, binpath)]
        with open(path, "w") as f:
            f.write("sym-raw 1\nsamples %d\n" %
                    sum(c for c, _, _ in stacks))
            f.write("map 0 kernel -1 ffff800000000000 ffffffffffffffff 0 "
                    "ffff800000000000 - [kernel.kallsyms]\n"
                    "map 1 file 100 7f0000026000 7f000017c000 26000 26000 "
                    "- %s\n"
                    "map 2 file 100 555555555000 555555556000 1000 1000 "
                    "- %s\n"
                    "map 3 vdso 100 7fff0000000 7fff0002000 0 0 - [vdso]\n"
                    % tuple(esc))
            for c, flags, frames in stacks:
                f.write("stack %d %d 100 100 %s %s\n" %
                        (c, c * 1001001, flags, frames))
            f.write("end\n")
        return Profile(path)

    ok = True
    cache = {}
    prof = profile("cases", [(1, "-", fr) for _, fr, _ in cases])
    for (what, _, want), s in zip(cases, prof.stacks):
        names = frame_names(prof, s, binpath, syms)
        got = fpchain_judge(prof, s, names, binpath, cache)[0]
        print("%s - %s: %s" % ("ok" if got == want else "not ok", what,
                               "right" if want else "wrong"))
        ok = ok and got == want
    # Whole profiles: 100 samples of each right stack, and the PLT stub
    # leaf whose chain skips spin.
    bulk = [(100, "-", fr) for _, fr, _ in right]
    for what, mode, extra, want in [
            ("fp: right stacks only pass", "fp", [], True),
            ("fp: a PLT stub leaf that skips spin, unflagged, fails", "fp",
             [(1, "-", skip_spin)], False),
            ("fp: the same flagged 'leaf' passes", "fp",
             [(1, "leaf", skip_spin)], True),
            ("dwarf: right stacks only pass", "dwarf", [], True)]:
        name = re.sub(r"[^a-z]+", "-", what)
        got = cmd_fpchain(profile(name, bulk + extra), binpath, mode)
        print("%s - verdict, %s" % ("ok" if got == want else "not ok",
                                    what))
        ok = ok and got == want
    return ok


def cmd_buildids(prof, expect):
    used = set()
    for s in prof.stacks:
        for fr in s["frames"]:
            if fr.map is not None:
                used.add(fr.map)
    ok = True
    checked = {}
    nfile = 0
    for mid in sorted(used):
        m = prof.maps[mid]
        if m["kind"] != "file":
            continue
        nfile += 1
        path = m["path"]
        if path not in checked:
            checked[path] = build_id(path) if os.path.exists(path) else None
        want = checked[path]
        if want is None:
            print("# map %d: %s does not exist" % (mid, path))
            ok = False
        elif m["bid"] != want:
            print("# map %d (pid %d) %s: build ID %s, readelf says %s" %
                  (mid, m["pid"], path, m["bid"] or "-", want))
            ok = False
    print("# %d file mappings used by frames, %d distinct files checked "
          "against readelf -n" % (nfile, len(checked)))
    for e in expect:
        if not any(same(p, e) for p in checked):
            print("# no frame in %s" % e)
            ok = False
    return ok


def own_vdso_build_id(tmpdir):
    """Build ID of this process's vDSO (the same kernel's image), by
    readelf -n of a copy taken from /proc/self/mem."""
    with open("/proc/self/maps") as f:
        for line in f:
            if line.rstrip().endswith("[vdso]"):
                lo, hi = [int(x, 16) for x in line.split()[0].split("-")]
                break
        else:
            return None
    with open("/proc/self/mem", "rb") as f:
        f.seek(lo)
        img = f.read(hi - lo)
    path = os.path.join(tmpdir, "vdso.so")
    with open(path, "wb") as f:
        f.write(img)
    return build_id(path)


def cmd_vdso(prof, tmpdir):
    want = own_vdso_build_id(tmpdir)
    n = 0
    ok = True
    for s in prof.stacks:
        for fr in s["frames"]:
            m = prof.maps.get(fr.map) if fr.map is not None else None
            if m is None or m["kind"] != "vdso":
                continue
            n += s["count"]
            if m["bid"] != want:
                print("# vdso map: build ID %s, readelf -n of the vDSO "
                      "image says %s" % (m["bid"] or "-", want))
                ok = False
    print("# %d frames in the vDSO, build ID %s" % (n, want))
    return ok and n > 0


# What runs in a program or library besides what it calls: its entry
# point _start (the kernel and ld.so jump there before main), DT_INIT and
# DT_FINI (crti's _init, _fini) and crtstuff's init_array/fini_array
# entries.  A sample can land there, typically the page fault on the
# first instruction of _start or of _init (t3030 saw a leaf at the
# program's _start once in a CI run; t3020 one at a dlopen()ed
# library's _init).
LOADER_RUN = ("_start", "_init", "_fini", "frame_dummy",
              "register_tm_clones", "__do_global_dtors_aux",
              "deregister_tm_clones")


def cmd_addrs(prof, bins, leaves):
    ok = True
    for b in bins:
        syms = Symbols(b)
        segs = loads(b)
        bid = build_id(b)
        nfr = bad = nmaps = 0
        for mid, m in prof.maps.items():
            if m["kind"] != "file" or not same(m["path"], b):
                continue
            nmaps += 1
            if m["bid"] != bid:
                print("# map %d: build ID %s, readelf says %s" %
                      (mid, m["bid"], bid))
                ok = False
            want = None
            for off, va, fsz, ex in segs:
                if (off & ~0xfff) <= m["pgoff"] < off + fsz:
                    if want is None or ex:
                        want = m["pgoff"] - off + va
            if want != m["vaddr"]:
                print("# map %d: vaddr %x, PT_LOAD says %s" %
                      (mid, m["vaddr"], "none" if want is None else
                       "%x" % want))
                ok = False
        for s in prof.stacks:
            for fr in s["frames"]:
                m = prof.maps.get(fr.map) if fr.map is not None else None
                if m is None or m["kind"] != "file" or \
                   not same(m["path"], b):
                    continue
                nfr += s["count"]
                a = fr.addr - 1 if fr.ret else fr.addr
                nm = syms.name(a)
                if nm is None and fr.ret and "badreturn" in s["flags"] \
                   and syms.is_start(fr.addr):
                    # a code pointer (a function's address, say the one
                    # ld.so's lazy binding just looked up) that the
                    # frame-pointer walk read as a return address: not
                    # after a call, which is what 'badreturn' flags.
                    # Its address still has to be a function of BIN.
                    nm = syms.name(fr.addr)
                if leaves and not fr.ret and nm not in leaves and \
                   nm not in LOADER_RUN and not bins.index(b):
                    bad += s["count"]
                    print("# %s: leaf %x is in %s, not in %s" %
                          (b, fr.addr, nm, ",".join(leaves)))
                elif nm is None:
                    bad += s["count"]
                    if bad <= 5:
                        print("# %s: %s frame %x is in no function, in "
                              "stack [%s] %s" %
                              (b, "return" if fr.ret else "leaf", fr.addr,
                               ",".join(sorted(s["flags"])) or "-",
                               " ".join("%s%s:%x" % (
                                   "r" if f.ret else "p",
                                   "?" if f.map is None else f.map, f.addr)
                                   for f in s["frames"])))
        print("# %s: %d maps, %d frames, %d outside every function" %
              (os.path.basename(b), nmaps, nfr, bad))
        if nmaps == 0 or nfr == 0 or bad:
            ok = False
    return ok


def user_names(prof, s, binpath, syms):
    """(frame, name) of the user frames of @s: name in BIN, else None;
    "@LIB" for a frame in a file named libnocfi.so, "@libc" for libc,
    "@vdso" for the vDSO."""
    out = []
    for fr, name in zip(s["frames"], frame_names(prof, s, binpath, syms)):
        m = prof.maps.get(fr.map) if fr.map is not None else None
        if m is not None and m["kind"] == "kernel":
            continue
        if name is None and m is not None:
            base = os.path.basename(m["path"])
            if m["kind"] == "vdso":
                name = "@vdso"
            elif base == "libnocfi.so":
                name = "@LIB"
            elif base.startswith("libc.so"):
                name = "@libc"
        out.append((fr, name))
    return out


# prof_faults' now() reaches clock_gettime() through this stub: a sample
# that lands in it has it as the leaf, named as objdump names it.
PLT_CLOCK = "clock_gettime@plt"


def fault_right(mode, names, flags, depth):
    """Is the stack of user frame names @names (leaf first) of prof_faults
    in @mode whole and right, or flagged and right as far as it goes?
    @depth: the stack's frames, kernel ones too, may not be fewer when it
    is flagged truncated.  Returns (right_so_far, whole)."""
    if mode == "nocfi":
        # cb_burn, or now() -> clock_gettime in libc -> the vDSO, or
        # now()'s PLT stub as the leaf, then the frame in LIB, last.
        inner = names[1:-1] if names[:1] == [PLT_CLOCK] else names[:-1]
        return (names.count("@LIB") == 1 and names[-1] == "@LIB" and
                set(inner) <= {"cb_burn", "now", "@libc", "@vdso"}), False
    if mode in ("deep", "wide"):
        k = 1 if names[:1] == ["cb_burn"] else 0
        while k < len(names) and names[k] == mode:
            k += 1
        rest = names[k:]
        tail = ["main", "@libc", "@libc", "_start"]
        so_far = k > 0 and names[k - 1] == mode and \
            rest == tail[:len(rest)]
        if mode == "deep" and "truncated" in flags:
            so_far = so_far and depth
        return so_far, rest == tail
    # signal: sig_burn's chain (the leaf cb_burn, or sig_burn itself on
    # its way in or out of the call), the trampoline in libc, then the
    # interrupted frame and main's chain.
    want = ["cb_burn", "sig_burn", "on_prof", "@libc"]
    if names[:1] == ["sig_burn"]:
        want = want[1:]
    if names[:len(want)] != want:
        return False, False
    tail = [x for x in names[len(want):] if x != "@libc"]
    # The vDSO's clock_gettime may call a function of its own (do_hres):
    # one or two frames there, either way the vDSO.
    while tail[:2] == ["@vdso", "@vdso"]:
        del tail[0]
    # The signal interrupts main's chain: cb_burn or spin, or now() or its
    # clock_gettime() in libc (dropped here), the vDSO, or the PLT stub
    # on the way there.
    whole = tail in (["cb_burn", "spin", "main", "_start"],
                     ["spin", "main", "_start"], ["now", "main", "_start"],
                     ["@vdso", "now", "main", "_start"],
                     [PLT_CLOCK, "now", "main", "_start"], ["main", "_start"])
    return whole, whole


def cmd_faults(prof, mode, binpath, depth):
    syms = Symbols(binpath)
    pid = main_pid(prof, binpath)
    key = {"nocfi": "@LIB", "deep": "deep", "wide": "wide",
           "signal": "sig_burn"}[mode]
    total = whole = flagged = bad = 0
    for s in prof.stacks:
        if s["pid"] != pid:
            continue
        un = user_names(prof, s, binpath, syms)
        names = [n for _, n in un]
        if key not in names:
            continue
        c = s["count"]
        total += c
        so_far, full = fault_right(mode, names, s["flags"],
                                   len(s["frames"]) == depth)
        if s["flags"]:
            flagged += c
        if mode == "signal":
            k = names.index("@libc") + 1 if "@libc" in names else 0
            # The trampoline and the frame it interrupted are exact
            # (eu-stack's __restore_rt has no "- 1" either).
            if full and (k >= len(un) or un[k][0].ret or
                         un[k - 1][0].ret):
                full = so_far = False
            if full and not s["flags"]:
                whole += c
            elif not s["flags"]:
                bad += c
                print_unflagged(s)
        elif (s["flags"] and not so_far) or (not s["flags"] and not full):
            bad += c
            print("# %s stack: %s" % (
                "unflagged wrong" if not s["flags"] else "flagged but wrong",
                " ".join(str(n) for n in names)))
        elif not s["flags"]:
            whole += c
        if len(s["frames"]) > depth:
            bad += c
            print("# %d frames, over the limit %d" % (len(s["frames"]),
                                                      depth))
    print("# %s: %d samples with %s, %d flagged, %d whole and unflagged, "
          "%d wrong" % (mode, total, key, flagged, whole, bad))
    if total < 30:
        die("too few samples (%d) to judge" % total)
    if mode == "signal":
        return bad == 0 and whole >= 0.99 * total
    # Every stack through LIB, most of the recursion's (the burn is at
    # its bottom).
    return bad == 0 and flagged >= (1 if mode == "nocfi" else 0.5) * total


def main():
    args = sys.argv[1:]
    mode = "fp"
    if "--mode" in args:
        i = args.index("--mode")
        mode = args[i + 1]
        del args[i:i + 2]
    leaves = []
    if "--leaves" in args:
        i = args.index("--leaves")
        leaves = args[i + 1].split(",")
        del args[i:i + 2]
    expect = []
    while "--expect" in args:
        i = args.index("--expect")
        expect.append(args[i + 1])
        del args[i:i + 2]
    if len(args) < 2:
        die(__doc__)
    if args[0] == "fpchain-cases":
        sys.exit(0 if cmd_fpchain_cases(args[1], args[2]) else 1)
    if args[0] == "faults":
        depth = 127
        if "--max-depth" in args:
            i = args.index("--max-depth")
            depth = int(args[i + 1])
            del args[i:i + 2]
        ok = cmd_faults(Profile(args[2]), args[1], args[3], depth)
        sys.exit(0 if ok else 1)
    cmd, prof = args[0], Profile(args[1])
    if cmd == "shares":
        ok = cmd_shares(prof, args[2], mode)
    elif cmd == "leafshares":
        ok = cmd_leafshares(prof, args[2], mode)
    elif cmd == "omitfp":
        ok = cmd_omitfp(prof, args[2], mode)
    elif cmd == "fpchain":
        ok = cmd_fpchain(prof, args[2], mode)
    elif cmd == "buildids":
        ok = cmd_buildids(prof, expect)
    elif cmd == "addrs":
        ok = cmd_addrs(prof, args[2:], leaves)
    elif cmd == "vdso":
        ok = cmd_vdso(prof, args[2])
    elif cmd == "parse":
        ok = True
    else:
        die("unknown check " + cmd)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
