#!/usr/bin/env python3
"""offcpu_check.py - checks of `sym record --off-cpu` on
fixtures/src/prof_offcpu.c, for tests/e2e/t3110 to t3113, and of
fixtures/src/prof_offcpu.py under python3.11 (t3131).

FOLDED is `sym fold --tid --value V` of the recording: lines
"comm-PID/TID;root;...;leaf VALUE".  FIXOUT is the fixture's own line,
"rounds N tid TID sleep_ns S pipe_ns P pipe_over5_ns L".  The main thread's two paths:
sleep (a stack with do_nanosleep) and pipe (a stack with
anon_pipe_read).  Each check prints '# ' diagnostics and exits 0 when it
passes, 1 when it fails.

  offcpu_check.py truth FOLDED FIXOUT
      (ns) the sleep path's share of the main thread's sleep + pipe time
      and the pipe path's lie within 3 points of the shares the fixture
      measured itself (nominally 60% / 40%, 59-60% / 40-41% on an idle
      machine; a loaded one lengthens the pipe waits, the wake-ups of
      the writer), and each path's total is within 5% of the fixture's
      own measure of its calls; >= 99% of
      each path's time is in whole stacks: _start ... main, run_rounds,
      sleep_6ms, __nanosleep, __clock_nanosleep (wait_pipe, __libc_read
      for the pipe)
  offcpu_check.py python FOLDED PYOUT
      (ns, t3131: Debian's python3.11 running fixtures/src/prof_offcpu.py,
      whose line is "rounds R tid TID sleep_ns S pipe_ns P compute_ns
      C") the main thread's time.sleep and pipe-read paths: >= 99% of
      each in whole stacks, _start ... Py_BytesMain ... time_sleep,
      pysleep, __clock_nanosleep (os_read_impl, _Py_read, read,
      __libc_read for the pipe); the sleep share of the two within 5
      points of the script's own; each path's total at most 2% over the
      script's measure and, with all the main thread's other off-CPU
      time (preemptions, which land in the stacks where they happen) at
      least 95% of it
  offcpu_check.py kshares FOLDED FIXOUT
      (ns, `--aggregate kernel`, folded --broken=plain) truth's shares
      and totals; the stacks, unwound by frame pointers in BPF, are not
      required whole: the share that is whole is printed (t3120)
  offcpu_check.py collide FOLDED FIXOUT
      (samples, `--aggregate kernel` with a few hash bits) no event was
      added to another stack: each of the main thread's paths holds at
      most one event a round (+2), and its stacks are its own (t3120)
  offcpu_check.py sampled FOLDED FIXOUT P
      (samples) the main thread's sleep blocks recorded with --sample-prob
      P lie in the 99.9% binomial interval of Binomial(rounds, P)
  offcpu_check.py minmax FOLDED FIXOUT min|max
      (ns) --min-block 5ms: the sleep path within 5% of the fixture's
      measure (no 6 ms sleep is shorter), the pipe path the fixture's
      waits of 5 ms or more; --max-block 5ms: at most 1% of the sleep
      time (preempted on the way in), the pipe path the shorter waits; the pipe within 5% of its whole time
  offcpu_check.py peer FOLDED OFFCPUTIME FIXOUT
      (ns) against libbpf-tools' offcputime output (microseconds) of the
      same run: per thread (main, writer) and kernel path (sleep, pipe)
      the totals agree within 5%; ours are whole (as truth says), and
      the stacks of both are printed; theirs is said to be whole or cut
  offcpu_check.py delay FOLDED SPINOUT TIMEHIST
      (ns, `sym record --sched-delay` of fixtures/src/prof_spin.c, whose
      lines are "thread TID wall_ns W cpu_ns C rq_ns R") per spinning
      thread: its run-queue delay's share of its wall time W is within 5
      points of the kernel's own count R / W (schedstat's run_delay; W -
      C is not the truth on a VM, see prof_spin.c); >= 90% of it in stacks through
      spinner, spin_until; and it agrees within 10% with `perf sched
      timehist --state` of the same run, over all the threads (perf's
      split among them is wrong, see cmd_delay()): the sum of its "sch delay"
      (wake-up to switch-in) and of the "wait time" that follows a
      switch-out in state R (perf 6.1 counts a preempted thread's wait
      for a CPU there, not in "sch delay")
  offcpu_check.py delayfp FOLDED SPINOUT TIMEHIST
      as delay, for `--aggregate kernel`'s frame-pointer stacks of a
      -fno-omit-frame-pointer build: "through spinner, spin_until" also
      counts stacks through spinner, __clock_gettime -- the walk skips
      spin_until there because libc's __clock_gettime (Debian's libc6,
      built without frame pointers) does not push one: its return
      address is read from spin_until's frame (docs/record.md)
  offcpu_check.py agree-delay KFOLDED KOUT UFOLDED UOUT
      --aggregate kernel and user, two runs of prof_spin.c: each run's
      delay summed over the threads, over the kernel's run_delay of that
      run, within 5% of the other's (nothing is sampled: both sum every
      wait, so the bound is t3112's per-thread one, not a statistical one)
  offcpu_check.py agree-wall KCPU KOFF KOUT UCPU UOFF UOUT PERIOD
      --wall in both modes, two runs of prof_spin.c: the cpu value over
      the time on a CPU (W - R) summed over the threads, kernel against
      user, within the 99.9% interval of two Poisson counts of samples
      (PERIOD ns each): |rk / ru - 1| <= 3.29 sqrt(1/Nk + 1/Nu); the
      off-cpu value over R within 5% of each other (not sampled)
  offcpu_check.py agree-shares KFOLDED KOUT UFOLDED UOUT
      prof_offcpu.c's sleep share of the main thread's off-CPU time (the
      pipe's is the rest), less the fixture's own share in that run:
      kernel's against user's, within 3 points (t3110's bound against the
      fixture, which both meet; the load moves the fixture's own share
      from run to run)
  offcpu_check.py nominal FOLDED SPINOUT
      each thread's delay is 50% +-5 points of its wall time (4 threads,
      2 CPUs); exits 77 when the kernel's own R / W is itself off
      by more than 5 points (other load on the machine)
  offcpu_check.py wallshares CPUFOLD OFFFOLD FIXOUT
      (ns, `sym record --wall` of prof_offcpu.c with "burn": 10 ms of CPU,
      6 ms of sleep, 4 ms of pipe a round) the main thread's burn (the
      cpu value and the off-cpu time in burn_10ms) between the burn's CPU
      time - 3% and its wall time + 3% (the samples count part of the
      vCPU's stolen time, see cmd_wallshares()), its sleep and pipe
      totals within 5% of the fixture's; when the burn lost no more than
      2% to steal, the three shares within 3 points of the fixture's
      (nominally 50% / 30% / 20%)
  offcpu_check.py wall CPUFOLD OFFFOLD SPINOUT
      (ns, `sym record --wall` of prof_spin.c, folded --value cpu and
      --value off-cpu) per spinning thread: its cpu between its CPU time C
      and the time it held a CPU, W - R (C and the vCPU's steal, which
      the samples count in part), +-10%; its off-cpu within 5% of R; and
      cpu + off-cpu between C + R and W, +-5%: the shares of its wall
      time add up, but for the part of the steal the samples miss
"""
import math
import re
import sys

Z999 = 3.2905
SLEEP = ["main", "run_rounds", "sleep_6ms", "__nanosleep",
         "__clock_nanosleep"]
PIPE = ["main", "run_rounds", "wait_pipe", "__libc_read"]


def die(msg):
    print("# " + msg)
    sys.exit(1)


def fixout(path):
    with open(path) as f:
        for line in f:
            t = line.split()
            if len(t) == 10 and t[0] == "rounds":
                return {"rounds": int(t[1]), "tid": int(t[3]),
                        "sleep": int(t[5]), "pipe": int(t[7]),
                        "pipe5": int(t[9])}
    die("no 'rounds' line in %s" % path)


def folded(path):
    """[(tid, frames root first, value)]"""
    out = []
    with open(path) as f:
        for line in f:
            stack, _, v = line.rstrip("\n").rpartition(" ")
            frames = stack.split(";")
            m = re.search(r"/(\d+)$", frames[0])
            if not m or not v.isdigit():
                continue
            out.append((int(m.group(1)), frames[1:], int(v)))
    return out


def kpath(frames):
    if "do_nanosleep" in frames:
        return "sleep"
    if "anon_pipe_read" in frames:
        return "pipe"
    if any(f.startswith(("futex_wait", "__futex_wait")) for f in frames):
        return "futex"
    return None


def in_order(frames, want):
    """Are @want consecutive in @frames?"""
    n = len(want)
    return any(frames[i:i + n] == want for i in range(len(frames)))


def paths(stacks, tid):
    tot = {"sleep": 0, "pipe": 0}
    whole = {"sleep": 0, "pipe": 0}
    for t, fr, v in stacks:
        k = kpath(fr)
        if t != tid or k not in tot:
            continue
        tot[k] += v
        want = SLEEP if k == "sleep" else PIPE
        if in_order(fr, want) and fr and fr[0] == "_start":
            whole[k] += v
    return tot, whole


def share_check(k, got, total, fgot, ftotal, nominal, extra=""):
    """Path @k's share of @total against the fixture's @fgot of @ftotal:
    within 3 points; a fixture's own share off @nominal is printed (the
    machine's load moves it).  Returns 1 when not within."""
    share, fshare = got / total, fgot / ftotal
    print("# %s: %.3f s, share %.4f; the fixture measured %.3f s, share "
          "%.4f (nominal %.2f)%s" % (k, got / 1e9, share, fgot / 1e9,
                                     fshare, nominal, extra))
    if abs(fshare - nominal) > 0.03:
        print("# (the machine's load moved the fixture's own share off "
              "the nominal %.2f)" % nominal)
    if abs(share - fshare) > 0.03:
        print("# %s share not within 3 points of the fixture's" % k)
        return 1
    return 0


def cmd_truth(fpath, xpath, need_whole=True):
    fx = fixout(xpath)
    tot, whole = paths(folded(fpath), fx["tid"])
    s = tot["sleep"] + tot["pipe"]
    fs = fx["sleep"] + fx["pipe"]
    if s == 0:
        die("no sleep or pipe time for thread %d" % fx["tid"])
    bad = 0
    for k, nominal in (("sleep", 0.6), ("pipe", 0.4)):
        bad |= share_check(k, tot[k], s, fx[k], fs, nominal,
                           "; whole stacks %.2f%%" %
                           (100.0 * whole[k] / max(tot[k], 1)))
        if abs(tot[k] - fx[k]) > 0.05 * fx[k]:
            print("# %s total not within 5%% of the fixture's" % k)
            bad = 1
        if need_whole and whole[k] < 0.99 * tot[k]:
            print("# %s: under 99%% of the time in whole stacks" % k)
            bad = 1
    if bad:
        print_others(folded(fpath), fx["tid"])
    return bad


def print_others(stacks, tid):
    """A failed check's clue: the thread's off-CPU time in neither
    path's stacks (preempted, or a stack without its kernel frames), the
    heaviest five such stacks."""
    other = {}
    for t, fr, v in stacks:
        if t == tid and kpath(fr) not in ("sleep", "pipe"):
            key = ";".join(fr)
            other[key] = other.get(key, 0) + v
    print("# the thread's other off-CPU time: %.3f s in %d stacks" %
          (sum(other.values()) / 1e9, len(other)))
    for key, v in sorted(other.items(), key=lambda kv: -kv[1])[:5]:
        print("#   %.3f s %s" % (v / 1e9, key[-300:]))


PY_ROOT = ["_start", "__libc_start_main_impl", "__libc_start_call_main",
           "Py_BytesMain"]
PY_SLEEP = ["time_sleep", "pysleep_[i]", "__clock_nanosleep"]
PY_PIPE = ["os_read_impl_[i]", "_Py_read", "read_[i]", "__libc_read"]


def pyout(path):
    with open(path) as f:
        for line in f:
            t = line.split()
            if len(t) == 10 and t[0] == "rounds":
                return {"tid": int(t[3]), "sleep": int(t[5]),
                        "pipe": int(t[7]), "compute": int(t[9])}
    die("no 'rounds' line in %s" % path)


def cmd_python(fpath, xpath):
    """The shares are within 5 points, not t3110's 3: the script's own
    times include the interpreter's steps between its clock reads and
    the system calls, and the preemptions there, which are off-CPU time
    in other stacks; the preemptions are bounded by the totals' check."""
    fx = pyout(xpath)
    tot = {"sleep": 0, "pipe": 0}
    whole = {"sleep": 0, "pipe": 0}
    other = 0
    for t, fr, v in folded(fpath):
        if t != fx["tid"]:
            continue
        k = kpath(fr)
        if k not in tot:
            other += v
            continue
        tot[k] += v
        want = PY_SLEEP if k == "sleep" else PY_PIPE
        if fr[:4] == PY_ROOT and in_order(fr, want):
            whole[k] += v
    s, fs = tot["sleep"] + tot["pipe"], fx["sleep"] + fx["pipe"]
    if s == 0:
        die("no sleep or pipe time for thread %d" % fx["tid"])
    print("# main thread's other off-CPU time (preempted): %.3f s" %
          (other / 1e9))
    bad = 0
    for k in ("sleep", "pipe"):
        share, fshare = tot[k] / s, fx[k] / fs
        print("# %s: %.3f s, share %.4f; the script measured %.3f s, "
              "share %.4f; whole stacks %.2f%%" %
              (k, tot[k] / 1e9, share, fx[k] / 1e9, fshare,
               100.0 * whole[k] / max(tot[k], 1)))
        if abs(share - fshare) > 0.05:
            print("# %s share not within 5 points of the script's" % k)
            bad = 1
        if tot[k] > 1.02 * fx[k] or tot[k] + other < 0.95 * fx[k]:
            print("# %s total not within [95%% - other, 102%%] of the "
                  "script's" % k)
            bad = 1
        if whole[k] < 0.99 * tot[k]:
            print("# %s: under 99%% of the time in whole stacks" % k)
            bad = 1
    return bad


def cmd_collide(fpath, xpath):
    fx = fixout(xpath)
    n = {"sleep": 0, "pipe": 0}
    bad = 0
    for t, fr, v in folded(fpath):
        k = kpath(fr)
        if t == fx["tid"] and k in n:
            n[k] += v
        elif t != fx["tid"] and ("run_rounds" in fr or "sleep_6ms" in fr):
            print("# thread %d holds a stack of the main thread's: %s" %
                  (t, ";".join(fr)))
            bad = 1
    for k in n:
        print("# %s: %d events kept of %d rounds" % (k, n[k], fx["rounds"]))
        if n[k] > fx["rounds"] + 2:
            print("# %s holds more events than rounds: merged" % k)
            bad = 1
    return bad


def cmd_sampled(fpath, xpath, p):
    fx = fixout(xpath)
    tot, _ = paths(folded(fpath), fx["tid"])
    n, k = fx["rounds"], tot["sleep"]
    mu = n * p
    half = Z999 * math.sqrt(n * p * (1 - p))
    print("# %d of %d sleep blocks recorded at p %.2f; 99.9%% interval "
          "[%.1f, %.1f]" % (k, n, p, mu - half, mu + half))
    if abs(k - mu) <= half:
        return 0
    # (what was counted, to tell chance (1 run in 1000) from a block
    # counted twice: each stack of the main thread's sleep path)
    for t, fr, v in folded(fpath):
        if t == fx["tid"] and kpath(fr) == "sleep":
            print("#   %d %s" % (v, ";".join(fr)))
    return 1


def cmd_minmax(fpath, xpath, which):
    """--min-block 5ms keeps every sleep block (nanosleep never returns
    early) and the pipe waits of 5 ms or more (the fixture's pipe_over5);
    --max-block 5ms drops every sleep block and keeps the shorter pipe
    waits.  The pipe's tolerance, 5% of all its time, covers waits that
    the fixture and the scheduler see on either side of 5 ms."""
    fx = fixout(xpath)
    tot, _ = paths(folded(fpath), fx["tid"])
    want_sleep = fx["sleep"] if which == "min" else 0
    want_pipe = fx["pipe5"] if which == "min" else fx["pipe"] - fx["pipe5"]
    print("# --%s-block 5ms: sleep %.6f s (want %.4f), pipe %.4f s "
          "(want %.4f +- %.4f)" % (which, tot["sleep"] / 1e9,
                                   want_sleep / 1e9, tot["pipe"] / 1e9,
                                   want_pipe / 1e9, 0.05 * fx["pipe"] / 1e9))
    # (max: a preemption inside the nanosleep path, before the sleep,
    # is a short period with the same kernel path: rare, and short)
    ok_sleep = (tot["sleep"] <= 0.01 * fx["sleep"] if which == "max" else
                abs(tot["sleep"] - want_sleep) <= 0.05 * want_sleep)
    ok_pipe = abs(tot["pipe"] - want_pipe) <= 0.05 * fx["pipe"]
    return 0 if ok_sleep and ok_pipe else 1


def offcputime(path):
    """[(tid, frames root first, ns)] of offcputime's text output."""
    out, block = [], []
    with open(path) as f:
        lines = [l.rstrip("\n") for l in f]
    i = 0
    while i < len(lines):
        l = lines[i].strip()
        m = re.match(r"^-\s+(\S.*) \((\d+)\)$", l)
        if m and i + 1 < len(lines) and lines[i + 1].strip().isdigit():
            fr = [x for x in block if not x.startswith("bpf_")]
            out.append((int(m.group(2)), list(reversed(fr)),
                        int(lines[i + 1].strip()) * 1000))
            block = []
            i += 2
            continue
        if l:
            block.append(l)
        else:
            block = []
        i += 1
    return out


def by_path(stacks):
    tot = {}
    for t, fr, v in stacks:
        k = kpath(fr)
        if k:
            tot[(t, k)] = tot.get((t, k), 0) + v
    return tot


def top_stack(stacks, tid, k):
    best = max((s for s in stacks if s[0] == tid and kpath(s[1]) == k),
               key=lambda s: s[2], default=None)
    return best[1] if best else []


def user_part(fr):
    """The user frames of a root-first stack (before the syscall
    entry)."""
    out = []
    for f in fr:
        if f.startswith("entry_SYSCALL") or f == "[Missed User Stack]":
            break
        out.append(f)
    return out


def cmd_peer(fpath, opath, xpath):
    fx = fixout(xpath)
    ours, theirs = folded(fpath), offcputime(opath)
    a, b = by_path(ours), by_path(theirs)
    bad = 0
    keys = sorted(k for k in a if k in b or k[0] == fx["tid"])
    for key in keys:
        x, y = a.get(key, 0), b.get(key, 0)
        who = "main" if key[0] == fx["tid"] else "tid %d" % key[0]
        # (main's futex waits are its joins of the other threads after
        # the rounds, a few ms the fixture does not measure: printed)
        joins = key[0] == fx["tid"] and key[1] == "futex"
        print("# %s %s: ours %.3f s, offcputime %.3f s (%+.2f%%)%s" %
              (who, key[1], x / 1e9, y / 1e9,
               100.0 * (x - y) / max(y, 1), " (joins)" if joins else ""))
        if not joins and abs(x - y) > 0.05 * max(x, y):
            bad = 1
    missed = sum(v for _, fr, v in theirs
                 if any(f.startswith("[Missed") for f in fr))
    print("# offcputime's time in stacks it missed (stack map "
          "collisions): %.3f s" % (missed / 1e9))
    if not any(k[0] == fx["tid"] for k in keys):
        die("no main-thread paths")
    for k, want in (("sleep", SLEEP), ("pipe", PIPE)):
        o = user_part(top_stack(ours, fx["tid"], k))
        t = user_part(top_stack(theirs, fx["tid"], k))
        print("# %s, ours:       %s" % (k, ";".join(o)))
        print("# %s, offcputime: %s" % (k, ";".join(t)))
        print("# %s: ours %s, offcputime's %s" % (
            k, "whole" if in_order(o, want) else "CUT",
            "whole" if in_order(t, want) else "cut"))
        if not in_order(o, want):
            bad = 1
    return bad


def spinout(path):
    """{tid: (wall_ns, cpu_ns, rq_ns)}: rq_ns is the kernel's run_delay
    (/proc/thread-self/schedstat) when the fixture could read it, else
    W - C, which a VM's steal time makes too large (prof_spin.c)"""
    out = {}
    with open(path) as f:
        for line in f:
            t = line.split()
            if len(t) >= 8 and t[0] == "thread":
                w, c, r = int(t[3]), int(t[5]), int(t[7])
                out[int(t[1])] = (w, c, r if r >= 0 else w - c)
    if not out:
        die("no 'thread' lines in %s" % path)
    return out


def timehist(path):
    """{tid: run-queue ns} from `perf sched timehist --state` lines."""
    row = re.compile(r"\[(\d+)(?:/\d+)?\]\s+([\d.]+)\s+([\d.]+)\s+"
                     r"[\d.]+\s+(\S+)\s*$")
    tot, last = {}, {}
    with open(path) as f:
        for line in f:
            m = row.search(line)
            if not m:
                continue
            tid, wait, delay = int(m.group(1)), float(m.group(2)), \
                float(m.group(3))
            ns = delay * 1e6
            if last.get(tid) == "R":
                ns += wait * 1e6
            tot[tid] = tot.get(tid, 0) + ns
            last[tid] = m.group(4)
    return tot


def delays(fpath, fp=False):
    """{tid: (all ns, ns in stacks through spinner;spin_until)}; @fp:
    or spinner;__clock_gettime (the frame-pointer walk skips spin_until
    under libc's frameless __clock_gettime)"""
    out = {}
    for t, fr, v in folded(fpath):
        a, w = out.get(t, (0, 0))
        spin = in_order(fr, ["spinner", "spin_until"]) or \
            (fp and in_order(fr, ["spinner", "__clock_gettime"]))
        out[t] = (a + v, w + (v if spin else 0))
    return out


def cmd_delay(fpath, xpath, tpath, fp=False):
    fx, ours, perf = spinout(xpath), delays(fpath, fp), timehist(tpath)
    bad = 0
    for tid, (wall, cpu, rq) in sorted(fx.items()):
        d, inspin = ours.get(tid, (0, 0))
        p = perf.get(tid, 0)
        share, own = d / wall, rq / wall
        print("# thread %d: wall %.3f s, cpu %.3f s, steal and the like "
              "%.3f s; sched-delay %.3f s (%.1f%% of wall; the kernel's "
              "run_delay %.1f%%), %.1f%% in spin_until; perf timehist "
              "%.3f s (ours/perf %.3f)" %
              (tid, wall / 1e9, cpu / 1e9, (wall - cpu - rq) / 1e9, d / 1e9,
               100 * share, 100 * own, 100.0 * inspin / max(d, 1), p / 1e9,
               d / max(p, 1)))
        if abs(share - own) > 0.05:
            print("# thread %d: not within 5 points of its own" % tid)
            bad = 1
        if inspin < 0.9 * d:
            print("# thread %d: under 90%% in spin_until" % tid)
            bad = 1
    # perf against ours on the threads' sum, and only when perf's own sum
    # agrees with the fixture's (its threads' wall - cpu) within 5%: perf
    # 6.1's timehist splits the spinners' run-queue time among them wrongly
    # (one thread 0.37 s against the 0.52 s its own wall - cpu says, in the
    # same run as a neighbour's 0.59 against 0.50), and in 1 run of 4 its
    # sum too (1.75 s against 2.04; ours 2.04) -- runs of 2026-12-02.
    # Where perf is off the truth it is no oracle: said, not counted.
    dsum = sum(ours.get(t, (0, 0))[0] for t in fx)
    psum = sum(perf.get(t, 0) for t in fx)
    own = sum(r for _, _, r in fx.values())
    print("# all threads: sched-delay %.3f s, perf timehist %.3f s "
          "(ours/perf %.3f), the kernel's run_delay %.3f s" %
          (dsum / 1e9, psum / 1e9, dsum / max(psum, 1), own / 1e9))
    if psum <= 0 or abs(psum - own) > 0.05 * own:
        print("# all threads: perf's sum is off the kernel's run_delay by more "
              "than 5%: not compared")
    elif abs(dsum - psum) > 0.1 * psum:
        print("# all threads: not within 10% of perf's")
        bad = 1
    return bad


def cmd_nominal(fpath, xpath):
    fx, ours = spinout(xpath), delays(fpath)
    loaded = bad = 0
    for tid, (wall, cpu, rq) in sorted(fx.items()):
        share, own = ours.get(tid, (0, 0))[0] / wall, rq / wall
        print("# thread %d: sched-delay %.1f%% of wall (nominal 50%%), "
              "the kernel's run_delay %.1f%%" % (tid, 100 * share, 100 * own))
        loaded |= abs(own - 0.5) > 0.05
        bad |= abs(share - 0.5) > 0.05
    if loaded:
        print("# other load moved the kernel's run_delay off 50%")
        return 77
    return bad


def cmd_agree_delay(kf, kx, uf, ux):
    r = []
    for f, x in ((kf, kx), (uf, ux)):
        fx, ours = spinout(x), delays(f)
        d = sum(ours.get(t, (0, 0))[0] for t in fx)
        rq = sum(q for _, _, q in fx.values())
        r.append(d / max(rq, 1))
        print("# %s: sched-delay %.3f s over the kernel's run_delay %.3f s: "
              "%.4f" % ("kernel" if f == kf else "user", d / 1e9, rq / 1e9,
                        r[-1]))
    if abs(r[0] - r[1]) > 0.05 * r[1]:
        print("# kernel and user not within 5% of each other")
        return 1
    return 0


def wall_sums(cpath, opath, xpath):
    fx, cpu, off = spinout(xpath), per_tid(cpath), per_tid(opath)
    c = sum(cpu.get(t, 0) for t in fx)
    o = sum(off.get(t, 0) for t in fx)
    on = sum(w - q for w, _, q in fx.values())
    rq = sum(q for _, _, q in fx.values())
    return c, c / max(on, 1), o / max(rq, 1)


def cmd_agree_wall(kc, ko, kx, uc, uo, ux, period):
    (ck, rk, ok), (cu, ru, ou) = wall_sums(kc, ko, kx), wall_sums(uc, uo, ux)
    nk, nu = ck / period, cu / period
    bound = Z999 * math.sqrt(1 / max(nk, 1) + 1 / max(nu, 1))
    print("# cpu over time on a CPU: kernel %.4f (%d samples), user %.4f "
          "(%d samples): ratio %.4f, bound +-%.4f" %
          (rk, nk, ru, nu, rk / max(ru, 1e-9), bound))
    print("# off-cpu over run_delay: kernel %.4f, user %.4f" % (ok, ou))
    bad = 0
    if abs(rk / max(ru, 1e-9) - 1) > bound:
        print("# cpu: outside the 99.9% interval")
        bad = 1
    if abs(ok - ou) > 0.05 * ou:
        print("# off-cpu: not within 5% of each other")
        bad = 1
    return bad


def cmd_agree_shares(kf, kx, uf, ux):
    sh = []
    for f, x in ((kf, kx), (uf, ux)):
        fx = fixout(x)
        tot, _ = paths(folded(f), fx["tid"])
        s = max(tot["sleep"] + tot["pipe"], 1)
        own = fx["sleep"] / max(fx["sleep"] + fx["pipe"], 1)
        sh.append(tot["sleep"] / s - own)
    print("# sleep share less the fixture's own: kernel %+.4f, user %+.4f "
          "(pipe the rest)" % (sh[0], sh[1]))
    if abs(sh[0] - sh[1]) > 0.03:
        print("# not within 3 points of each other")
        return 1
    return 0


def per_tid(fpath):
    out = {}
    for t, _, v in folded(fpath):
        out[t] = out.get(t, 0) + v
    return out


def cmd_wall(cpath, opath, xpath):
    """The cpu value's truth is a bracket: cpu-clock samples count the
    thread's CPU time C and part of the time the hypervisor stole from
    the vCPU while the thread held it (the timer runs on wall-clock time:
    a steal between two expiries is sampled, the periods a longer one
    spans are lost), so the cpu value lies
    between C and the time it held a CPU, W - R; the sum likewise between
    C + R and W.  Without steal both brackets close."""
    fx, cpu, off = spinout(xpath), per_tid(cpath), per_tid(opath)
    bad = 0
    for tid, (wall, c, rq) in sorted(fx.items()):
        oc, oo = cpu.get(tid, 0), off.get(tid, 0)
        print("# thread %d: wall %.3f s = on a CPU %.3f (cpu time %.3f, "
              "the rest steal) + on a run queue %.3f (the kernel's); "
              "--wall: cpu %.3f s (%.1f%%), off-cpu %.3f s (%.1f%%), sum "
              "%.3f s (%.1f%% of wall)" %
              (tid, wall / 1e9, (wall - rq) / 1e9, c / 1e9, rq / 1e9,
               oc / 1e9, 100.0 * oc / wall, oo / 1e9, 100.0 * oo / wall,
               (oc + oo) / 1e9, 100.0 * (oc + oo) / wall))
        for name, got, lo, hi, tol in (
                ("cpu", oc, c, wall - rq, 0.10),
                ("off-cpu", oo, rq, rq, 0.05),
                ("sum", oc + oo, c + rq, wall, 0.05)):
            if not (1 - tol) * lo <= got <= (1 + tol) * hi:
                print("# thread %d: %s not within [%.3f, %.3f] s +-%d%%" %
                      (tid, name, lo / 1e9, hi / 1e9, 100 * tol))
                bad = 1
    return bad


def wallout(path):
    """prof_offcpu's "wall" line (with "burn"): {tid, wall, burn, cpu,
    rq}."""
    with open(path) as f:
        for line in f:
            t = line.split()
            if len(t) == 11 and t[0] == "wall":
                return {"tid": int(t[2]), "wall": int(t[4]),
                        "burn": int(t[6]), "cpu": int(t[8]),
                        "rq": int(t[10])}
    die("no 'wall' line in %s" % path)


def cmd_wallshares(cpath, opath, xpath):
    """The burn's truth is a bracket: the cpu-clock samples count the
    thread's CPU time and part of what the hypervisor stole from the
    vCPU while it ran (the timer runs on wall-clock time: a steal between
    two expiries is sampled, the periods a longer one spans are lost), so the burn's cpu value lies between its CPU
    time C and its wall time B; on this VM the host steals up to a third
    of it at times.  Without steal the bracket closes to the 50/30/20
    shares."""
    fx, wx = fixout(xpath), wallout(xpath)
    tid = fx["tid"]
    cpu = per_tid(cpath).get(tid, 0)
    off = [(fr, v) for t, fr, v in folded(opath) if t == tid]
    got = {"sleep": 0, "pipe": 0, "burn": cpu, "other": 0}
    for fr, v in off:
        k = kpath(fr)
        if k not in got:
            k = "burn" if "burn_10ms" in fr else "other"
        got[k] += v
    total = cpu + sum(v for _, v in off)
    if total == 0:
        die("no cpu or off-cpu time for thread %d" % tid)
    lo, hi = wx["cpu"], wx["burn"]
    print("# main: the rounds' wall %.3f s: burn_10ms %.3f s of wall, "
          "%.3f s of it the thread's CPU time (the rest stolen from the "
          "vCPU, or waits for a CPU: run-queue delay %.3f s over the "
          "rounds), sleep %.3f s, pipe %.3f s" %
          (wx["wall"] / 1e9, hi / 1e9, lo / 1e9, wx["rq"] / 1e9,
           fx["sleep"] / 1e9, fx["pipe"] / 1e9))
    print("# --wall: %.3f s; burn (cpu %.3f s and off-cpu in burn_10ms) "
          "%.3f s (share %.4f), sleep %.3f s (%.4f), pipe %.3f s (%.4f), "
          "off-cpu elsewhere %.3f s; the nominal shares 0.50 / 0.30 / "
          "0.20" % (total / 1e9, cpu / 1e9, got["burn"] / 1e9,
                    got["burn"] / total, got["sleep"] / 1e9,
                    got["sleep"] / total, got["pipe"] / 1e9,
                    got["pipe"] / total, got["other"] / 1e9))
    bad = 0
    if not 0.97 * lo <= got["burn"] <= 1.03 * hi:
        print("# burn not within [CPU time - 3%, wall time + 3%]")
        bad = 1
    for k in ("sleep", "pipe"):
        if abs(got[k] - fx[k]) > 0.05 * fx[k]:
            print("# %s total not within 5%% of the fixture's" % k)
            bad = 1
    if hi - lo <= 0.02 * lo:	# (no steal to speak of)
        for k, w, nominal in (("burn", lo, 0.5), ("sleep", fx["sleep"], 0.3),
                              ("pipe", fx["pipe"], 0.2)):
            bad |= share_check(k, got[k], total, w,
                               lo + fx["sleep"] + fx["pipe"], nominal)
    return bad


def main(argv):
    if len(argv) == 4 and argv[1] == "truth":
        return cmd_truth(argv[2], argv[3])
    if len(argv) == 4 and argv[1] == "python":
        return cmd_python(argv[2], argv[3])
    if len(argv) == 4 and argv[1] == "kshares":
        return cmd_truth(argv[2], argv[3], False)
    if len(argv) == 4 and argv[1] == "collide":
        return cmd_collide(argv[2], argv[3])
    if len(argv) == 5 and argv[1] == "sampled":
        return cmd_sampled(argv[2], argv[3], float(argv[4]))
    if len(argv) == 5 and argv[1] == "minmax":
        return cmd_minmax(argv[2], argv[3], argv[4])
    if len(argv) == 5 and argv[1] == "delay":
        return cmd_delay(argv[2], argv[3], argv[4])
    if len(argv) == 5 and argv[1] == "delayfp":
        return cmd_delay(argv[2], argv[3], argv[4], True)
    if len(argv) == 6 and argv[1] == "agree-delay":
        return cmd_agree_delay(*argv[2:6])
    if len(argv) == 9 and argv[1] == "agree-wall":
        return cmd_agree_wall(*argv[2:8], float(argv[8]))
    if len(argv) == 6 and argv[1] == "agree-shares":
        return cmd_agree_shares(*argv[2:6])
    if len(argv) == 5 and argv[1] == "wall":
        return cmd_wall(argv[2], argv[3], argv[4])
    if len(argv) == 5 and argv[1] == "wallshares":
        return cmd_wallshares(argv[2], argv[3], argv[4])
    if len(argv) == 4 and argv[1] == "nominal":
        return cmd_nominal(argv[2], argv[3])
    if len(argv) == 5 and argv[1] == "peer":
        return cmd_peer(argv[2], argv[3], argv[4])
    die("usage: see the docstring")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
