#!/usr/bin/env python3
"""workloads_check.py - checks of profiles of Debian's own programs
(tests/e2e/lib/workloads-lib.sh): whole stacks, and function shares against
perf's.  It reads the raw stack format itself (record_check.py's reader)
and judges frames against the files on this host: symbols from `nm` of the
file or of its build-ID debug file (libc6-dbg, python3.11-dbg), the ELF
entry point and PT_LOAD segments from `readelf`, instruction bytes from the
file.  Each check prints '# ' diagnostics and exits 0 when it passes, 1
when it fails.

  workloads_check.py inputs DIR
      write the workloads' fixed inputs into DIR (a seeded PRNG: the same
      bytes on every run and every machine)
  workloads_check.py complete FILE [--min SHARE] [--pid-of EXE]
      whole stacks: at least SHARE (0.99) of the samples of user threads
      reach an outermost frame: `_start` (the entry code of the program or
      of ld.so), `__libc_start_main`, `__libc_start_call_main` (fp mode
      ends there), or a thread's start (`start_thread`, `clone3`, `clone`);
      a stack that does not, or one with a return address that does not
      follow a call instruction, or frames beyond an outermost one, is
      wrong, and every wrong stack must carry a flag.  With --pid-of, only
      the processes whose map of EXE holds frames are judged.
  workloads_check.py whole FILE|PERFSCRIPT
      print "whole K N": K of the N samples (of user threads) are whole
      and unflagged by `complete`'s judgement; a perf script (-F
      comm,pid,tid,ip,dso) is judged the same way, its frames turned into
      ours as `shares` does (perf flags nothing), for the bench's
      comparison of the two (tests/bench/record-bench.sh)
  workloads_check.py shares FILE PERFSCRIPT [--top N] [--alpha A]
      the self and total shares of the top N (10) functions agree with
      perf's (PERFSCRIPT: `perf script -F comm,pid,tid,ip,dso` of a `perf
      record --call-graph dwarf` of the same workload): Fisher's exact
      test of the two proportions per function, each at A / (2N)
      (Bonferroni over the 2N comparisons; A is 0.001, a 99.9% family-wise
      interval; the z of the normal approximation is printed beside it:
      at a few samples it rejects far more often than its level says, and
      5 of 438 against 1 of 1,907 once gave z 4.06 at a 4.06 bound).  Like with
      like: perf's addresses are turned into the same (build ID, ELF
      address) frames as ours and both sides are symbolized by `sym fold
      --inline=none` (a frame is the function that holds the address, its
      inlined callees folded into it; perf script without --inline alike);
      kernel frames are dropped on both sides, so "self" is the innermost
      user frame.  Functions are ranked by their mean share of the two.
      Our shares are shares of the profile's weight (CPU time) when its
      weight unit is ns, as perf's cpu-clock samples are: libsymprof's
      CPU-time timers expire on the scheduler tick and are delivered on
      the way back to user mode, so one long system call (sort's 18 MB
      read()) is one sample whose weight holds its overruns; counted as
      one sample it would lose ~4 points of sort's share to perf.  The
      test then takes Kish's effective number of samples, (sum w)^2 /
      sum w^2, as our n, so the heavier samples widen the interval.
  workloads_check.py user-raw FILE OUT
      the user frames of FILE's program stacks into OUT, a raw profile
      for `sym symbolize` (shares' view of our side)
  workloads_check.py go SYMBOLIZED PPROFRAW [--top N] [--alpha A]
                     [--min SHARE] [--wrappers F,...]
      a Go program (tests/e2e/t0141-go-profile.sh): SYMBOLIZED is
      `user-raw`'s output symbolized, PPROFRAW `go tool pprof -raw` of
      the program's own runtime/pprof CPU profile of the same run.  At
      least SHARE (0.99) of the frame samples resolve; at least SHARE of
      the stacks that do not pass a system stack switch (GO_SWITCH) reach
      one of the runtime's outermost functions (GO_TOP); those that do
      are left out on both sides (at most 15% of either); the shares of
      the others agree with runtime/pprof's as in `shares`, which runtime/pprof
      reads its own way (the peer's reader, not ours).  runtime/pprof's
      samples with runtime.asyncPreempt as their leaf count for the frame
      below (preempt_leaf()); runtime.goexit and the wrapper functions F
      (funcID_wrapper, absent from every runtime/pprof stack) are not
      compared: runtime/pprof leaves them out.
"""
import bisect
import math
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from record_check import Profile, Symbols, build_id, die, loads  # noqa: E402

OUTERMOST = {
    "_start", "__libc_start_main", "__libc_start_main_impl",
    "__libc_start_call_main", "start_thread", "clone3", "__clone3",
    "clone", "__clone",
}


# ---- inputs ----------------------------------------------------------------

def cmd_inputs(outdir):
    """The fixed inputs: text1500k and text3m (words of a 4096-word
    vocabulary, 80-column lines), lines2m (2,000,000 lines of 8 random
    letters), acgt3m (3 MB of a 4-letter alphabet, 80-column lines)."""
    r = random.Random(16)
    tab = bytes(97 + i % 26 for i in range(256))

    def letters(n):
        return bytearray(r.randbytes(n)).translate(tab)

    voc = [bytes(letters(2 + r.getrandbits(3))) for _ in range(4096)]
    idx = r.randbytes(2 * 600000)
    text = bytearray(b" ".join(voc[(idx[2 * i] << 4 | idx[2 * i + 1] >> 4)
                                   & 4095] for i in range(600000)))
    text[79::80] = b"\n" * len(text[79::80])
    n = 2000000
    lines = letters(9 * n)
    lines[8::9] = b"\n" * n
    acgt = bytearray(r.randbytes(3000000)).translate(
        bytes(b"acgt"[i & 3] for i in range(256)))
    acgt[79::80] = b"\n" * len(acgt[79::80])
    for name, data in (("text1500k", text[:1500000]),
                       ("text3m", text[:3000000]), ("lines2m", lines),
                       ("acgt3m", acgt)):
        if len(data) < 1000000:
            die("input %s is too short" % name)
        with open(os.path.join(outdir, name + ".tmp"), "wb") as f:
            f.write(data)
        os.rename(os.path.join(outdir, name + ".tmp"),
                  os.path.join(outdir, name))
    return True


# ---- what a frame is -------------------------------------------------------

class Module:
    """What this host's file of a map says: symbols, the entry code,
    instruction bytes."""

    def __init__(self, path):
        self.path = path
        self.syms = None
        self.entry = None
        self.data = b""
        try:
            self.syms = Symbols(path)
        except (subprocess.CalledProcessError, OSError):
            pass
        try:
            with open(path, "rb") as f:
                self.data = f.read()
            out = subprocess.run(["readelf", "-hW", path],
                                 stdout=subprocess.PIPE,
                                 universal_newlines=True).stdout
            m = re.search(r"Entry point address:\s+0x([0-9a-f]+)", out)
            e = int(m.group(1), 16) if m else 0
            self.entry = e or None
            self.loads = loads(path)
        except (subprocess.CalledProcessError, OSError):
            self.loads = []

    def name(self, addr):
        return self.syms.name(addr) if self.syms else None

    def offset(self, vaddr):
        for off, va, filesz, _ in self.loads:
            if va <= vaddr < va + filesz:
                return vaddr - va + off
        return None

    def is_entry(self, addr):
        """@addr in the program's entry code: the bytes from e_entry up to
        the first symbol after it (ld.so's _start and _dl_start_user have
        no symbol in the stripped file, nor any CFI; 64 bytes at most).
        ld.so's debug file (libc6-dbg) names the second half
        _dl_start_user: _start calls _dl_start, then falls through into
        it, which calls _dl_init on _start's own frame, so a stack under
        a library's constructor ends there, whole."""
        if self.entry is None or not self.entry <= addr < self.entry + 64:
            return False
        n = self.name(addr)
        return n is None or n in ("_start", "_dl_start_user")

    def after_call(self, ra):
        """Does return address @ra follow a call instruction: e8 rel32,
        or ff /2 (2 to 7 bytes, any addressing)?"""
        off = self.offset(ra)
        if off is None or off < 7:
            return False
        b = self.data[off - 7:off]
        if b[2] == 0xe8:
            return True
        for k in (2, 3, 4, 6, 7):
            i = 7 - k
            op, modrm = b[i], b[i + 1] if i + 1 < 7 else None
            if op == 0xff and modrm is not None and \
                    (modrm >> 3) & 7 == 2 and \
                    call_len(modrm, b[i + 2] if i + 2 < 7 else 0) == k:
                return True
        return False


def call_len(modrm, sib):
    """Length of ff /2 with this ModRM (and SIB) byte."""
    mod, rm = modrm >> 6, modrm & 7
    n = 2
    if mod != 3 and rm == 4:
        n += 1
        if mod == 0 and (sib & 7) == 5:
            n += 4
    if mod == 0 and rm == 5:
        n += 4
    elif mod == 1:
        n += 1
    elif mod == 2:
        n += 4
    return n


class Modules:
    def __init__(self, prof):
        self.prof = prof
        self.cache = {}

    def get(self, mapid):
        m = self.prof.maps.get(mapid)
        if m is None or m["kind"] not in ("file", "vdso"):
            return None
        if m["kind"] == "vdso" or not os.path.exists(m["path"]):
            return None
        key = m["path"]
        if key not in self.cache:
            mod = Module(m["path"])
            if m["bid"] and build_id(m["path"]) != m["bid"]:
                mod = None
            self.cache[key] = mod
        return self.cache[key]


def user_frames(prof, s):
    return [f for f in s["frames"]
            if f.map is None or prof.maps[f.map]["kind"] != "kernel"]


def judge(prof, mods, s):
    """(right, why): is stack @s whole and sound?"""
    fr = user_frames(prof, s)
    if not fr:
        return False, "no user frame"
    end = None
    for i, f in enumerate(fr):
        mod = mods.get(f.map) if f.map is not None else None
        look = f.addr - 1 if f.ret else f.addr
        if f.ret and (mod is None or not mod.after_call(f.addr)):
            if mod is not None or f.map is None:
                return False, "frame %d: %x not after a call" % (i, f.addr)
        if mod is None:
            continue
        n = mod.name(look)
        if n in OUTERMOST or mod.is_entry(look):
            end = i
            break
    if end is None:
        return False, "no outermost frame"
    # fp mode ends at __libc_start_call_main or start_thread; beyond an
    # entry or clone3 nothing may follow.
    if end + 1 < len(fr):
        mod = mods.get(fr[end].map)
        n = mod.name(fr[end].addr - 1 if fr[end].ret else fr[end].addr)
        if n in ("_start", "clone3", "__clone3", "clone", "__clone") or \
                mod.is_entry(fr[end].addr - 1):
            return False, "%d frames past %s" % (len(fr) - end - 1, n)
    return True, ""


def count_whole(prof, pids=None):
    """(whole and unflagged, total) samples of user threads of @prof."""
    mods = Modules(prof)
    total = whole = 0
    for s in prof.stacks:
        if s["pid"] <= 0 or (pids is not None and s["pid"] not in pids):
            continue
        total += s["count"]
        if not s["flags"] and judge(prof, mods, s)[0]:
            whole += s["count"]
    return whole, total


def cmd_whole(path):
    with open(path, errors="replace") as f:
        raw = f.readline().rstrip("\n") == "sym-raw 1"
    if raw:
        k, n = count_whole(program_only(Profile(path)))
    else:
        with tempfile.TemporaryDirectory() as tmp:
            conv = os.path.join(tmp, "perf.raw")
            perf_raw(path, conv)
            k, n = count_whole(Profile(conv))
    print("whole %d %d" % (k, n))
    return True


def cmd_complete(prof, min_share, pid_of):
    mods = Modules(prof)
    pids = None
    if pid_of:
        real = os.path.realpath(pid_of)
        pids = {m["pid"] for m in prof.maps.values()
                if m["kind"] == "file" and
                os.path.realpath(m["path"]) == real}
    total = right = flagged = bad = 0
    whys = {}
    for s in prof.stacks:
        if s["pid"] <= 0 or (pids is not None and s["pid"] not in pids):
            continue
        c = s["count"]
        total += c
        ok, why = judge(prof, mods, s)
        if ok and not s["flags"]:
            right += c
        if s["flags"]:
            flagged += c
        elif not ok:
            bad += c
            whys[why] = whys.get(why, 0) + c
            if bad <= 5 * c:
                print("# unflagged wrong stack (%s): %s" % (why, " ".join(
                    "%s%s:%x" % ("r" if f.ret else "p",
                                 "?" if f.map is None else f.map, f.addr)
                    for f in s["frames"])))
    if total < 50:
        die("too few samples (%d) to judge" % total)
    print("# %d samples: %d whole and unflagged (%.2f%%), %d flagged "
          "(%.2f%%), %d wrong without a flag" %
          (total, right, 100.0 * right / total, flagged,
           100.0 * flagged / total, bad))
    print("# flags in the header: %s" % ", ".join(
        "%s %d" % kv for kv in sorted(prof.flagged.items())))
    for why, c in sorted(whys.items(), key=lambda kv: -kv[1]):
        print("# wrong, unflagged: %d x %s" % (c, why))
    ok = right >= min_share * total and bad == 0
    if right < min_share * total:
        print("# fewer than %.1f%% whole" % (100 * min_share))
    return ok


# ---- shares against perf ---------------------------------------------------

def esc(s):
    return "".join(c if 0x21 <= ord(c) <= 0x7e and c != "%" else
                   "%%%02X" % ord(c) for c in s) or "-"


def write_raw(path, maps, stacks):
    """A minimal raw profile: maps {id: (bid, path)} and stacks [(count,
    pid, tid, [(mapid or None, addr, ret)])], no kernel frames."""
    with open(path, "w") as f:
        f.write("sym-raw 1\nperiod 1\nweight-unit samples\nsamples %d\n" %
                sum(s[0] for s in stacks))
        for i, (bid, p) in maps.items():
            f.write("map %d file 1 0 0 0 0 %s %s\n" % (i, bid or "-", esc(p)))
        for st in stacks:
            count, pid, tid, frames = st[:4]
            weight = st[4] if len(st) > 4 else count
            f.write("stack %d %d %d %d -%s\n" % (count, weight, pid, tid, "".join(
                " %s%s:%x" % ("r" if r else "p",
                              "?" if m is None else m, a)
                for m, a, r in frames)))
        f.write("end\n")


# The profilers' own processes, which sym record samples when it runs
# them with the program under them (record-lib.sh: sym record -- perf
# record -- PROGRAM, so that both sample one execution): not the program.
PROFILER_COMMS = {"perf"}


def program_only(prof):
    """@prof without the stacks of processes named in PROFILER_COMMS."""
    skip = {pid for pid, p in prof.procs.items()
            if p[-1] in PROFILER_COMMS}
    if skip:
        prof.stacks = [s for s in prof.stacks if s["pid"] not in skip]
    return prof


def ours_raw(prof, out):
    maps, ids, stacks = {}, {}, []
    for s in prof.stacks:
        frames = []
        for f in user_frames(prof, s):
            m = prof.maps[f.map] if f.map is not None else None
            if m is None or m["kind"] != "file":
                frames.append((None, f.addr, f.ret))
                continue
            key = (m["bid"], m["path"])
            if key not in ids:
                ids[key] = len(ids)
                maps[ids[key]] = key
            frames.append((ids[key], f.addr, f.ret))
        if frames:
            stacks.append((s["count"], s["pid"], s["tid"], frames,
                           s["weight"]))
    write_raw(out, maps, stacks)


def time_weighted(prof):
    """Kish's effective sample size of @prof's user stacks when its
    weights are CPU time (weight-unit ns), else None (shares of samples).
    A stack line holds count samples of total weight w; taken as equal
    within the line, they add w^2 / count to the sum of squares."""
    if prof.header.get("weight-unit", ["samples"])[0] != "ns":
        return None
    sw = sw2 = 0.0
    for s in prof.stacks:
        if s["count"] <= 0 or s["weight"] <= 0 or not user_frames(prof, s):
            continue
        sw += s["weight"]
        sw2 += s["weight"] ** 2 / s["count"]
    return sw * sw / sw2 if sw2 else None


def perf_raw(txt, out):
    """perf script (-F comm,pid,tid,ip,dso) into a raw profile: a user
    frame's address is perf's map-relative one (the file offset; callers
    already at return address - 1), turned into an ELF address with the
    file's PT_LOAD segments, and written as an exact ('p') frame."""
    maps, ids, files, stacks = {}, {}, {}, []
    cur = None

    def flush():
        if cur and cur[2]:
            stacks.append((1, cur[0], cur[1], cur[2]))

    for line in open(txt, errors="replace"):
        line = line.rstrip("\n")
        if not line.strip():
            flush()
            cur = None
            continue
        if not line[0].isspace():
            flush()
            m = re.search(r"(\d+)/(\d+)", line)
            cur = (int(m.group(1)), int(m.group(2)), []) if m else (0, 0, [])
            continue
        m = re.match(r"\s+([0-9a-f]+)\s+\((.*)\)$", line)
        if not m or cur is None:
            continue
        addr, dso = int(m.group(1), 16), m.group(2)
        if addr >= 0xffff800000000000 or dso.startswith("[kernel"):
            continue
        if not dso.startswith("/") or not os.path.exists(dso):
            cur[2].append((None, addr, False))
            continue
        if dso not in files:
            files[dso] = (build_id(dso), loads(dso))
        bid, segs = files[dso]
        va = None
        for off, vaddr, filesz, _ in segs:
            if off <= addr < off + filesz:
                va = addr - off + vaddr
                break
        if va is None:
            cur[2].append((None, addr, False))
            continue
        key = (bid, dso)
        if key not in ids:
            ids[key] = len(ids)
            maps[ids[key]] = key
        cur[2].append((ids[key], va, False))
    flush()
    write_raw(out, maps, stacks)
    return len(stacks)


NAME_JUNK = re.compile(r"(\.(cold|part\.\d+|isra\.\d+|constprop\.\d+|"
                       r"lto_priv\.\d+))+$")


def fold(raw, value="samples"):
    """{stack (root first, tuple of names): samples (or weight)} of sym
    fold's view."""
    sym = os.environ.get("SYM", "sym")
    out = subprocess.run([sym, "fold", "-q", "--inline=none",
                          "--granularity=addresses",
                          "--value=" + value, raw],
                         stdout=subprocess.PIPE, universal_newlines=True,
                         check=True).stdout
    st = {}
    for line in out.splitlines():
        stack, _, n = line.rpartition(" ")
        names = tuple(NAME_JUNK.sub("", x) if "+0x" not in x else
                      "[unknown]" for x in stack.split(";"))
        st[names] = st.get(names, 0) + int(n)
    return st


def shares(st):
    total = sum(st.values())
    self_, tot = {}, {}
    for names, n in st.items():
        self_[names[-1]] = self_.get(names[-1], 0) + n
        for x in set(names):
            tot[x] = tot.get(x, 0) + n
    return total, self_, tot


def two_prop(k1, n1, k2, n2):
    # (clamped: a function in every stack has k1 = n1 up to the rounding
    # of the effective samples, k1 * neff / w1, which can pass n1)
    p = min(1.0, max(0.0, (k1 + k2) / (n1 + n2)))
    sd = math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    return 0.0 if sd == 0 else (k1 / n1 - k2 / n2) / sd


def fisher_p(k1, n1, k2, n2):
    """Fisher's exact two-sided p of k1 of n1 against k2 of n2 (counts
    rounded: effective samples are not whole): the probability, given
    k1 + k2 in all, of a split at most as likely as the one seen."""
    k1, n1, k2, n2 = (int(round(v)) for v in (k1, n1, k2, n2))
    n, k = n1 + n2, k1 + k2
    if k == 0 or k == n:
        return 1.0

    # the hypergeometric pmf relative to its mode, outwards by the ratio
    # of neighbours, until it is nothing beside the mode; then p is the
    # mass at most as likely as k1's over the whole mass
    lo, hi = max(0, k - n2), min(k, n1)
    mode = min(hi, max(lo, (k + 1) * (n1 + 1) // (n + 2)))

    def up(x):
        return (n1 - x) * (k - x) / ((x + 1) * (n2 - k + x + 1))

    pmf, q, x = {mode: 1.0}, 1.0, mode
    while x < hi and q > 1e-300:
        q *= up(x)
        x += 1
        pmf[x] = q
    q, x = 1.0, mode
    while x > lo and q > 1e-300:
        q /= up(x - 1)
        x -= 1
        pmf[x] = q
    seen = pmf.get(k1, 0.0) * (1 + 1e-7)
    return min(1.0, sum(v for v in pmf.values() if v <= seen) /
               sum(pmf.values()))


def z_crit(alpha):
    """The two-sided normal quantile: |Z| > z with probability alpha."""
    return statistics.NormalDist().inv_cdf(1 - alpha / 2)


def cmd_shares(rawfile, perftxt, top, alpha):
    prof = program_only(Profile(rawfile))
    with tempfile.TemporaryDirectory() as tmp:
        a, b = os.path.join(tmp, "ours.raw"), os.path.join(tmp, "perf.raw")
        ours_raw(prof, a)
        if perf_raw(perftxt, b) < 50:
            die("too few perf samples in %s" % perftxt)
        n1, self1, tot1 = shares(fold(a))
        n2, self2, tot2 = shares(fold(b))
        neff = time_weighted(prof)
        if neff is not None:
            w1, self1, tot1 = shares(fold(a, "weight"))
            self1 = {x: v * neff / w1 for x, v in self1.items()}
            tot1 = {x: v * neff / w1 for x, v in tot1.items()}
            print("# sym: %d samples, shares of their CPU time (weight), "
                  "%.0f effective samples" % (n1, neff))
            n1 = neff
    if n1 < 50:
        die("too few samples (%d)" % n1)
    return compare(n1, self1, tot1, n2, self2, tot2, top, alpha, "perf")


def compare(n1, self1, tot1, n2, self2, tot2, top, alpha, peer,
            skip=()):
    """The tests of `shares`: the self and total shares of the top
    functions (by mean share, those in @skip left out) of ours (n1
    samples) against @peer's (n2), by Fisher's exact p (z for reading)."""
    a = alpha / (2 * top)
    print("# %d samples (sym), %d (%s); Fisher's p >= %.1e for each of %d "
          "comparisons (family-wise %.1f%%; |z| <= %.2f where the normal "
          "approximation holds)" %
          (n1, n2, peer, a, 2 * top, 100 * (1 - alpha), z_crit(a)))
    ok = True
    for kind, s1, s2 in (("self", self1, self2), ("total", tot1, tot2)):
        names = (set(s1) | set(s2)) - set(skip)
        rank = sorted(names, key=lambda x: -(s1.get(x, 0) / n1 +
                                             s2.get(x, 0) / n2))[:top]
        for x in rank:
            k1, k2 = s1.get(x, 0), s2.get(x, 0)
            zz, pp = two_prop(k1, n1, k2, n2), fisher_p(k1, n1, k2, n2)
            bad = pp < a
            ok = ok and not bad
            print("# %-5s %-40s sym %6.2f%%  %s %6.2f%%  z %+6.2f  p %.1e%s"
                  % (kind, x[:40], 100.0 * k1 / n1, peer, 100.0 * k2 / n2,
                     zz, pp, "  OUTSIDE" if bad else ""))
    return ok


# ---- Go: sym against runtime/pprof ---------------------------------------

# The Go runtime's outermost functions (the TOPFRAME flag of Go 1.19's
# runtime/asm_amd64.s and sys_linux_amd64.s, and the entry code of
# rt0_linux_amd64.s, which the kernel jumps to): a whole stack ends there.
GO_TOP = {"runtime.goexit", "runtime.mstart", "runtime.rt0_go",
          "runtime.sigtramp", "_rt0_amd64_linux", "_rt0_amd64"}
# Where a thread switches to its system stack (g0): the frames of the
# goroutine that switched are on another stack, which the recorder's copy
# of the stack it sampled does not hold, and which the runtime's own
# profiler reaches through the g (traceback.go, _TraceJumpStack).
GO_SWITCH = {"runtime.systemstack", "runtime.mcall", "runtime.morestack",
             "runtime.newstack"}
MAX_SWITCH = 0.15


def cmd_user_raw(rawfile, out):
    """The user frames of the program's stacks, for symbolization."""
    ours_raw(program_only(Profile(rawfile)), out)
    return True


def pprof_raw(txt):
    """{stack (root first, tuple of names): samples} of `go tool pprof
    -raw`: a location's lines are its inline chain, innermost first, and
    the last is the function that holds the address (as fold's
    --inline=none)."""
    locs, samples, cur, part = {}, [], None, None
    for line in open(txt, errors="replace"):
        if re.match(r"(Samples|Locations|Mappings):?$", line.strip()):
            part = line.strip().rstrip(":")
            continue
        if part == "Samples":
            m = re.match(r"\s+(\d+)\s+\d+:((?:\s+\d+)+)\s*$", line)
            if m:
                samples.append((int(m.group(1)),
                                [int(x) for x in m.group(2).split()]))
        elif part == "Locations":
            m = re.match(r"\s+(\d+): 0x[0-9a-f]+ M=\d+ (\S+) ", line)
            if m:
                cur = int(m.group(1))
                locs[cur] = m.group(2)
            elif cur is not None and line.strip():
                locs[cur] = line.split()[0]
    st = {}
    for n, ids in samples:
        names = tuple(locs.get(i, "[unknown]") for i in reversed(ids))
        st[names] = st.get(names, 0) + n
    return st


def preempt_leaf(st):
    """@st with runtime.asyncPreempt taken off the leaf of its stacks, and
    how many samples had it.  runtime/pprof puts far more of its samples
    there than the program spends in it (its profiling signal and the
    preemption signal meet there; sym record's cpu-clock samples,
    independent of the runtime's signals, find it ~0%): the frame below is
    the interrupted one, whose exact PC the runtime injected the call
    from."""
    out, moved = {}, 0
    for names, n in st.items():
        if len(names) > 1 and names[-1] == "runtime.asyncPreempt":
            names = names[:-1]
            moved += n
        out[names] = out.get(names, 0) + n
    return out, moved


def split_switch(st):
    """@st without its stacks through a system stack switch, and their
    count."""
    rest, nsw = {}, 0
    for names, n in st.items():
        if GO_SWITCH & set(names):
            nsw += n
        else:
            rest[names] = n
    return rest, nsw


def cmd_go(symraw, pproftxt, top, alpha, min_share, wrappers):
    """Frames resolved, whole stacks, and shares against runtime/pprof."""
    ours = fold(symraw)
    peer = pprof_raw(pproftxt)
    n2 = sum(peer.values())
    peer, moved = preempt_leaf(peer)
    o_pre = sum(n for k, n in ours.items() if k[-1] == "runtime.asyncPreempt")
    print("# runtime.asyncPreempt as the leaf: runtime/pprof %d of %d "
          "(%.2f%%), moved to the interrupted frame below; sym %d of %d "
          "(%.2f%%)" % (moved, n2, 100.0 * moved / max(n2, 1), o_pre,
                        sum(ours.values()),
                        100.0 * o_pre / max(sum(ours.values()), 1)))
    # The wrappers runtime/pprof elides must be absent from its stacks.
    for w in wrappers:
        if any(w in k for k in peer):
            print("# %s is in runtime/pprof's stacks: not an elided wrapper"
                  % w)
            return False
    nfr = sum(n * len(k) for k, n in ours.items())
    nun = sum(n * k.count("[unknown]") for k, n in ours.items())
    ok = nfr > 0 and nun <= (1 - min_share) * nfr
    print("# frames: %d of %d frame samples resolved (%.2f%%)" %
          (nfr - nun, nfr, 100.0 * (nfr - nun) / max(nfr, 1)))
    o_rest, o_sw = split_switch(ours)
    p_rest, p_sw = split_switch(peer)
    n1, n2 = sum(ours.values()), sum(peer.values())
    if n1 < 50 or n2 < 50:
        die("too few samples: %d (sym), %d (runtime/pprof)" % (n1, n2))
    whole = sum(n for k, n in o_rest.items() if k[0] in GO_TOP)
    nrest = sum(o_rest.values())
    print("# whole: %d of the %d stacks not through a stack switch reach "
          "%s (%.2f%%)" % (whole, nrest, "/".join(sorted(GO_TOP)),
                           100.0 * whole / max(nrest, 1)))
    ok = ok and whole >= min_share * nrest
    for k, n in sorted(o_rest.items(), key=lambda x: -x[1])[:5]:
        if k[0] not in GO_TOP:
            print("#   not whole: %d %s" % (n, ";".join(k)[:150]))
    # The stacks through a switch: ours end there, runtime/pprof's go on
    # into the goroutine, so they are not compared.  Their shares are not
    # tested against each other either: sym's is higher (9.5% against
    # 6.5% in one run), in system calls made on the system stack (the
    # scavenger's madvise, futex in stopTheWorld), which sym record's
    # cpu-clock samples as the thread's CPU time and runtime/pprof's
    # per-thread timers reach less often.  At most MAX_SWITCH of either
    # side is left out.
    print("# through a system stack switch (%s), not compared: sym %d "
          "(%.2f%%), runtime/pprof %d (%.2f%%)" %
          ("/".join(sorted(GO_SWITCH)), o_sw, 100.0 * o_sw / n1, p_sw,
           100.0 * p_sw / n2))
    if o_sw > MAX_SWITCH * n1 or p_sw > MAX_SWITCH * n2:
        print("# more than %.0f%% through a switch" % (100 * MAX_SWITCH))
        ok = False
    # Where runtime/pprof cannot sample: the runtime's signal handler,
    # where its SIGPROF is blocked (sym's samples there are the profiler's
    # and the preemption's own cost), and sysmon's thread, which never
    # runs execute(), where each thread starts its profiling timer
    # (runtime/proc.go, setThreadCPUProfiler).
    for fn in ("runtime.sigtramp", "runtime.sysmon"):
        o_n = sum(n for k, n in o_rest.items() if fn in k)
        p_n = sum(n for k, n in p_rest.items() if fn in k)
        print("# stacks through %s, which runtime/pprof cannot sample: "
              "sym %d (%.2f%%), runtime/pprof %d: not compared" %
              (fn, o_n, 100.0 * o_n / n1, p_n))
        o_rest = {k: n for k, n in o_rest.items() if fn not in k}
    n1, s1, t1 = shares(o_rest)
    n2, s2, t2 = shares(p_rest)
    # runtime/pprof leaves runtime.goexit out of every stack
    # (runtime/pprof/proto.go, appendLocsForStack); the other outermost
    # functions are compared.
    # The compiler's wrapper functions (funcID_wrapper: the closure that a
    # go statement with arguments gets) are left out of its stacks too
    # (runtime/traceback.go, gentraceback: "Ignore wrapper functions").
    for w in wrappers:
        print("# %s: a wrapper runtime/pprof elides, in %.2f%% of sym's "
              "stacks, 0 of runtime/pprof's" %
              (w, 100.0 * t1.get(w, 0) / n1))
    return compare(n1, s1, t1, n2, s2, t2, top, alpha, "pprof",
                   skip={"runtime.goexit"} | set(wrappers)) and ok


def main():
    args = sys.argv[1:]
    opts = {"--min": "0.99", "--pid-of": None, "--top": "10",
            "--alpha": "0.001", "--wrappers": ""}
    for k in list(opts):
        if k in args:
            i = args.index(k)
            opts[k] = args[i + 1]
            del args[i:i + 2]
    if len(args) < 2:
        die(__doc__)
    cmd = args[0]
    if cmd == "inputs":
        ok = cmd_inputs(args[1])
    elif cmd == "complete":
        ok = cmd_complete(program_only(Profile(args[1])), float(opts["--min"]),
                          opts["--pid-of"])
    elif cmd == "whole":
        ok = cmd_whole(args[1])
    elif cmd == "user-raw" and len(args) == 3:
        ok = cmd_user_raw(args[1], args[2])
    elif cmd == "go" and len(args) == 3:
        ok = cmd_go(args[1], args[2], int(opts["--top"]),
                    float(opts["--alpha"]), float(opts["--min"]),
                    [w for w in opts["--wrappers"].split(",") if w])
    elif cmd == "shares" and len(args) == 3:
        ok = cmd_shares(args[1], args[2], int(opts["--top"]),
                        float(opts["--alpha"]))
    else:
        die("unknown check, or wrong arguments: %s" % " ".join(args))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
