#!/bin/sh
# symprof-alloc-bench.sh - `make bench`: what libsymprof's alloc mode
# costs (issue 21; docs/symprof.md, "Cost of alloc mode"), as ratios in
# one run, the variants interleaved run by run, with the machine's load
# (uptime) before and after:
#
# 1. Fast path: CPU ns per malloc/free pair of tests/bench/
#    symprof-alloc-work.c, the loop's own thread CPU time, the minimum of
#    BENCH_RUNS (7) runs each (on a shared machine the minimum is the
#    figure: the other tenants only add).  Two patterns: pairs served by
#    glibc's tcache (20 M pairs of 64-127 B), and "bulk" (100 k objects
#    of 40-71 B allocated, then freed: most calls miss the tcache, as in
#    python3.11's dict of strings).  Variants: no preload; preloaded in
#    cpu mode (interposed, off); alloc mode at the default rate; and,
#    for the bulk pattern, a preload that only starts an idle thread
#    (symprof-idle-thread.c): what glibc's multi-threaded malloc paths
#    cost, the reason alloc mode has no drain thread in a program with
#    one thread.  Goal: at most 5 ns more a pair.
# 2. Whole programs: CPU time (user + system of the process tree), wall
#    time and peak RSS of tests/bench/symprof-alloc-mix.c (the issue's
#    "malloc-heavy fixture at 20 M ops/s": a live pool, a mix of sizes
#    and calls, BENCH_MIX_STEPS (10 M) steps of a free and an
#    allocation), of the same at the issue's 20 M operations a second
#    (the mix's WORK rounds of computing a step, chosen by measuring a
#    step without a profiler at WORK 0 and 256: a faster machine runs
#    the plain mix at 64 M), of fixtures/src/symprof_alloc.c (t4020's truth
#    fixture, 10.3 M allocations) and of Debian's python3.11 with
#    PYTHONMALLOC=malloc building and dropping a dict of 2 M strings,
#    BENCH_RUNS_WHOLE (9) rounds, each round every variant once in turn:
#    no profiler; a bare interposer (tests/bench/symprof-bare.c: every
#    entry point one jump to glibc's, the floor of any LD_PRELOAD
#    profiler); alloc mode (512 KiB); and the peers that are installed
#    (heaptrack, not on the mix fixture: 20 M calls traced would take
#    minutes a run; jemalloc without and with its profiler, prof:true,
#    lg_prof_sample:19 as our rate).  Printed: the median and minimum of
#    each, and the median of the per-round differences to no profiler
#    (paired: a round's variants ran under about the same load).
#    gperftools' heap profiler is left out (it unwinds every allocation:
#    over 8 minutes for the fixture; t4021 runs it on 1 M of site A's).
#    Goals: overhead <= 3 %; the profiler's memory (peak RSS with it
#    minus without) <= max(1 % of the peak RSS, 8 MB).
# 3. A cost model of alloc mode's CPU, from factors measured above, each
#    robust to the load (minimums, or counts): allocations (the profile's
#    alloc_objects estimate) x the extra ns a pair of the pattern like
#    the program's (the fixture: tcache; python3.11: bulk), plus
#    the drains' CPU (the file's comment: each sample unwound on the
#    sampling thread), plus start-up and exit (a program that allocates
#    nothing, /bin/true, min of BENCH_RUNS); set beside the direct
#    paired figure of 2, which on a loaded 2-core machine cannot resolve
#    1 to 3 %.
# 4. The factors of the model for the mix fixture, each from counts or
#    from the profile's own timing (when valgrind is installed and
#    BENCH_CALLGRIND is not 0): callgrind instructions of 1 M steps with
#    no profiler, in alloc mode with sampling off (SYMPROF_RATE=2^40) and
#    on: the extra instructions an operation (the fast paths) and a
#    sample (capture, live table, unwind, aggregate); cachegrind's L1
#    data misses with no profiler and sampling off (the free filter's);
#    the CPU time of a drain from the file's comment at the default rate
#    (cold caches: a drain every 250 us of the program's work) and at
#    SYMPROF_RATE=4096 (hot: drains back to back), min of BENCH_RUNS.
#    The model: the calls, as a range: high, operations x extra
#    instructions x the program's own ns an instruction (its CPU time
#    over its instructions, cache misses included); low, half a tcache
#    pair's measured extra ns (1) an operation; plus samples x the cold
#    drain (and the capture's instructions at the program's ns), plus
#    start-up; set beside the direct figures.
# Every run is pinned to CPU BENCH_CPU (0; empty: not pinned): the
# workloads have one thread, and this VM's two vCPUs differ in speed by
# up to 60 %, more than the effects measured.
# Knobs besides the run counts: BENCH_SYMPROF_BASE=PATH adds to 2 a
# variant "alloc-base", alloc mode with another build of libsymprof.so
# (say main's, to measure a change: its line also gives the median CPU
# against this one's alloc); BENCH_PEERS=0 leaves the peers out of 2.
set -e
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SYM=$ROOT/bin/sym
LIB=$ROOT/lib/libsymprof.so
W=$(mktemp -d /tmp/symprof-alloc-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
note() { echo "symprof-alloc-bench: $*" >&2; }

${CC:-cc} -D_GNU_SOURCE -std=gnu11 -O2 -I"$ROOT/libsym" -o "$W/work" \
	"$ROOT/tests/bench/symprof-alloc-work.c"
cc -O2 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-ipa-icf \
	-o "$W/fixture" "$ROOT/fixtures/src/symprof_alloc.c"
# -O2 alone: no frame pointers, as a distribution's programs (CFI unwinds)
cc -O2 -g -I"$ROOT/libsym" -o "$W/mix" "$ROOT/tests/bench/symprof-alloc-mix.c"
cc -O2 -shared -fPIC -fno-plt -I"$ROOT/libsym" -o "$W/bare.so" \
	"$ROOT/tests/bench/symprof-bare.c"
cc -O2 -shared -fPIC -I"$ROOT/libsym" -o "$W/idle.so" \
	"$ROOT/tests/bench/symprof-idle-thread.c" \
	-lpthread
HEAPTRACK=$(command -v heaptrack || true)
# Debian's python3.11 itself, not a shim on PATH
PY=$(ls /usr/bin/python3.11 2> /dev/null || command -v python3.11 || true)
JE=$(ls /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 2> /dev/null || true)
VG=$(command -v valgrind || true)
[ "${BENCH_CALLGRIND:-1}" = 0 ] && VG=

[ "${BENCH_PEERS:-1}" = 0 ] && HEAPTRACK= JE=
BASE=${BENCH_SYMPROF_BASE:-}
W="$W" SYM="$SYM" LIB="$LIB" HEAPTRACK="$HEAPTRACK" PY="$PY" JE="$JE" \
BASE="$BASE" VG="$VG" PIN=${BENCH_CPU-0} MIX_STEPS=${BENCH_MIX_STEPS:-10000000} \
RUNS=${BENCH_RUNS:-7} RUNS_WHOLE=${BENCH_RUNS_WHOLE:-9} python3 - <<'PYEOF'
import os, statistics, subprocess, time

W, SYM, LIB = os.environ["W"], os.environ["SYM"], os.environ["LIB"]
HT, PY = os.environ["HEAPTRACK"], os.environ["PY"]
JE, BASE = os.environ["JE"], os.environ["BASE"]
VG, MIX_STEPS = os.environ["VG"], int(os.environ["MIX_STEPS"])
RUNS, RUNS_WHOLE = int(os.environ["RUNS"]), int(os.environ["RUNS_WHOLE"])
PIN = int(os.environ["PIN"]) if os.environ["PIN"] != "" else None
med = statistics.median

def load():
    return open("/proc/loadavg").read().split()[0]

def env(mode):
    e = dict(os.environ)
    if mode in ("cpu", "alloc", "alloc-base", "alloc-off", "alloc-hot"):
        e["LD_PRELOAD"] = BASE if mode == "alloc-base" else LIB
        e["SYMPROF_MODE"] = "cpu" if mode == "cpu" else "alloc"
        e["SYMPROF_OUT"] = W + "/bench.raw"
        e["SYMPROF_INTERVAL"] = "0"
    if mode == "alloc-off":
        e["SYMPROF_RATE"] = str(1 << 40)
    if mode == "alloc-hot":
        e["SYMPROF_RATE"] = "4096"
    if mode == "thread":
        e["LD_PRELOAD"] = W + "/idle.so"
    if mode == "bare":
        e["LD_PRELOAD"] = W + "/bare.so"
    if mode in ("jemalloc", "jeprof"):
        e["LD_PRELOAD"] = JE
    if mode == "jeprof":
        e["MALLOC_CONF"] = ("prof:true,lg_prof_sample:19,prof_accum:true,"
                            "prof_final:true,prof_prefix:" + W + "/je")
    return e

def run(argv, mode, extra_env=None):
    """CPU s of the process tree, wall s, peak RSS (KiB), stdout."""
    e = env(mode)
    if extra_env:
        e.update(extra_env)
    if mode == "heaptrack":
        argv = [HT, "-o", W + "/ht"] + argv
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        if PIN is not None:
            os.sched_setaffinity(0, {PIN})
        fd = os.open(W + "/out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 1)
        err = os.open("/dev/null", os.O_WRONLY)
        os.dup2(err, 2)
        os.execvpe(argv[0], argv, e)
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    out = open(W + "/out").read()
    if status:
        raise SystemExit("%s failed (%d)" % (argv, status))
    return ru.ru_utime + ru.ru_stime, wall, ru.ru_maxrss, out

def raw_comment(key):
    """The number after KEY in the last profile's comment lines."""
    for line in open(W + "/bench.raw"):
        if line.startswith("# libsymprof:") and key in line:
            return [int(w) for w in line.split(key, 1)[1].split()
                    if w.isdigit()]
    return []

def alloc_objects():
    out = subprocess.run([SYM, "fold", "-q", "--value", "alloc_objects",
                          W + "/bench.raw"], capture_output=True,
                         text=True, check=True).stdout
    return sum(float(l.rsplit(" ", 1)[1]) for l in out.splitlines() if l)

def mix_model(bc, drain_s, nsamp, dmed, dpaired):
    """The mix fixture's model from its factors (4), beside the direct."""
    if "ir_op" not in mf or not nsamp:
        print("    model: no callgrind factors (valgrind or samples "
              "missing)")
        return
    ns_ir = bc * 1e9 / mf["ir_plain"]
    # The calls, high: the fast paths' instructions at the program's own
    # ns an instruction (its cache misses included: too dear for a few
    # ALU instructions); low: the tcache pattern's measured ns a pair
    # (hop and fast paths, minimum of RUNS), half a pair an operation.
    hi = MIX_OPS * mf["ir_op"] * ns_ir * 1e-9
    lo = MIX_OPS / 2 * max(tcache_pair_ns, 0.0) * 1e-9
    cold_us = drain_s * 1e6 / nsamp
    capture = nsamp * (mf["ir_sample"] - mf["ir_drain"]) * ns_ir * 1e-9
    rest = drain_s + capture + startup
    print("    model, calls: %d ops; high: x %.2f instructions x %.3f ns "
          "(the program's own ns an instruction) = %.1f ms; low: / 2 x "
          "%.2f ns (a tcache pair) = %.1f ms"
          % (MIX_OPS, mf["ir_op"], ns_ir, hi * 1e3, tcache_pair_ns,
             lo * 1e3))
    print("    model, samples: %d x %.2f us (a drain, cold; hot %.2f us) "
          "= %.1f ms (%+.2f %%); + captures %.1f ms; + start-up %.2f ms"
          % (nsamp, cold_us, mf["hot_us"], drain_s * 1e3,
             100 * drain_s / bc, capture * 1e3, startup * 1e3))
    print("    model: %+.2f %% to %+.2f %% of %.3f s (the samples and "
          "start-up alone %+.2f %%); direct: median %+.2f %%, paired "
          "%+.2f %%"
          % (100 * (lo + rest) / bc, 100 * (hi + rest) / bc, bc,
             100 * rest / bc, 100 * dmed / bc, 100 * dpaired / bc))

print("load before: %s; every run on CPU %s" % (load(), PIN if PIN is not None else "any"))
NAMES = {"plain": "no profiler", "cpu": "preloaded, cpu mode",
         "alloc": "alloc mode, rate 512 KiB",
         "thread": "an idle thread only (no profiler)"}
best = {}
print("## Fast path: CPU ns per malloc/free pair (min of %d)" % RUNS)
pats = [("tcache", [W + "/work"], ("plain", "cpu", "alloc")),
        ("bulk", [W + "/work", "bulk"], ("plain", "thread", "cpu", "alloc"))]
for r in range(RUNS):
    for pat, argv, modes in pats:
        for mode in modes:
            v = float(run(argv, mode)[3])
            k = (pat, mode)
            best[k] = min(best.get(k, v), v)
for pat, argv, modes in pats:
    print("  %s pattern" % pat)
    for mode in modes:
        print("    %-36s %6.2f ns  (%+.2f ns)" % (
            NAMES[mode], best[(pat, mode)],
            best[(pat, mode)] - best[(pat, "plain")]))

# start-up and exit, once per process
su = {"plain": [], "alloc": []}
for r in range(RUNS):
    for m in su:
        su[m].append(run(["/bin/true"], m)[0])
startup = min(su["alloc"]) - min(su["plain"])
tcache_pair_ns = best[("tcache", "alloc")] - best[("tcache", "plain")]
print("\n## Start-up and exit (/bin/true, CPU, min of %d): %+.2f ms"
      % (RUNS, startup * 1e3))

def vg_total(tool, argv, mode, extra=()):
    """valgrind TOOL's totals for ARGV in MODE: {event: count}."""
    out = W + "/vg.out"
    subprocess.run([VG, "--tool=" + tool, "--%s-out-file=%s" % (tool, out)]
                   + list(extra) + argv, env=env(mode), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ev = tot = None
    for line in open(out):
        if line.startswith("events:"):
            ev = line.split()[1:]
        if line.startswith("summary:"):
            tot = [int(x) for x in line.split()[1:]]
    return dict(zip(ev, tot))

# The mix fixture's factors (4): counts first, they do not need quiet.
MIX_OPS = 2 * MIX_STEPS + 4096
mf = {}
if VG:
    cg_steps = 1000000
    cg = [W + "/mix", str(cg_steps)]
    ops = 2 * cg_steps + 4096
    ir = {m: vg_total("callgrind", cg, m)["Ir"]
          for m in ("plain", "alloc-off", "alloc")}
    nsmp = raw_comment("sampling thread cpu_ns")[1]
    ir_drain = vg_total("callgrind", cg, "alloc",
                        ["--toggle-collect=sp_drain_inline"])["Ir"]
    st = {m: vg_total("callgrind", ["/bin/true"], m)["Ir"]
          for m in ("plain", "alloc-off")}
    d1 = {m: vg_total("cachegrind", cg, m, ["--cache-sim=yes"])["D1mr"]
          for m in ("plain", "alloc-off")}
    mf["ir_op"] = (ir["alloc-off"] - ir["plain"] -
                   (st["alloc-off"] - st["plain"])) / ops
    mf["ir_sample"] = (ir["alloc"] - ir["alloc-off"]) / nsmp
    mf["ir_drain"] = ir_drain / nsmp
    mf["ir_plain"] = ir["plain"] * MIX_STEPS / cg_steps
    print("\n## The mix fixture's factors (callgrind and cachegrind, %d "
          "steps, %d operations)" % (cg_steps, ops))
    print("  instructions: no profiler %d; alloc mode, sampling off %d "
          "(%+.2f an operation, start-up's %d taken out); sampling on %d "
          "(%d samples, %+.0f a sample, of which the drain %.0f)"
          % (ir["plain"], ir["alloc-off"], mf["ir_op"],
             st["alloc-off"] - st["plain"], ir["alloc"], nsmp,
             mf["ir_sample"], mf["ir_drain"]))
    print("  L1 data read misses: no profiler %d; sampling off %d (%+.3f "
          "an operation)" % (d1["plain"], d1["alloc-off"],
                             (d1["alloc-off"] - d1["plain"]) / ops))
hot = []
for r in range(RUNS):
    run([W + "/mix", "1000000"], "alloc-hot")
    c = raw_comment("sampling thread cpu_ns")
    if len(c) > 1 and c[1]:
        hot.append(c[0] / c[1])
mf["hot_us"] = min(hot) / 1e3 if hot else 0.0
print("  a drain, hot (SYMPROF_RATE=4096, min of %d): %.2f us"
      % (RUNS, mf["hot_us"]))

# The mix at the issue's rate (2): the step's CPU without a profiler at
# two values of WORK (min of RUNS each, 2 M steps), a line through them,
# and the WORK that makes a step 2 / 20 M s.
def mix_step_ns(work, steps=2000000):
    return min(run([W + "/mix", str(steps), str(work)], "plain")[0]
               for r in range(RUNS)) * 1e9 / steps
# The chain overlaps the allocator's stalls, so a step's cost is not
# linear in WORK: secant steps, from WORK 0 and 256, three at most.
GOAL_NS = 2e9 / 20e6
pts = [(0, mix_step_ns(0)), (256, mix_step_ns(256))]
for i in range(3):
    (w0, t0), (w1, t1) = pts[-2], pts[-1]
    if t1 == t0 or abs(t1 - GOAL_NS) < 0.02 * GOAL_NS:
        break
    w = max(1, int(round(w1 + (GOAL_NS - t1) * (w1 - w0) / (t1 - t0))))
    pts.append((w, mix_step_ns(w)))
MIX20_WORK = min(pts, key=lambda p: abs(p[1] - GOAL_NS))[0]
print("\n## The mix at 20 M operations a second: WORK %d (a step's ns by "
      "WORK, min of %d runs of 2 M steps, no profiler: %s)"
      % (MIX20_WORK, RUNS, ", ".join("%d: %.1f" % p for p in pts)))

peers = (["heaptrack"] if HT else []) + \
    (["jemalloc", "jeprof"] if JE else [])
work = [("mix fixture (symprof-alloc-mix, %d operations)" % MIX_OPS,
         [W + "/mix", str(MIX_STEPS)], None, ["plain", "bare", "alloc"] +
         [p for p in peers if p != "heaptrack"], "mix"),
        ("mix fixture at 20 M operations a second (WORK %d)" % MIX20_WORK,
         [W + "/mix", str(MIX_STEPS), str(MIX20_WORK)], None,
         ["plain", "bare", "alloc"], "mix20"),
        ("fixture (symprof_alloc)", [W + "/fixture", W + "/truth"], None,
         ["plain", "bare", "alloc"] + peers, "tcache")]
if PY:
    work.append(("python3.11 dict of 2 M strings", [PY, "-c",
        "d = {str(i) * 3: str(i) for i in range(2000000)}\n"
        "s = sum(len(k) for k in d)\ndel d\nprint(s)"],
        {"PYTHONMALLOC": "malloc"},
        ["plain", "bare", "alloc"] + peers, "bulk"))
own = {"jeprof": "jemalloc", "alloc-base": "alloc", "alloc": "bare"}
if BASE:
    for w in work:
        w[3].insert(2, "alloc-base")
print("\n## Whole programs: %d rounds, the variants in turn in each; "
      "CPU (user+sys) and wall s: median (min); paired: the median of "
      "the rounds' differences to no profiler" % RUNS_WHOLE)
for name, argv, extra, modes, pat in work:
    pair_ns = (best[(pat, "alloc")] - best[(pat, "plain")]
               if (pat, "plain") in best else 0.0)
    cpu = {m: [] for m in modes}
    wall = {m: [] for m in modes}
    rss = {m: [] for m in modes}
    model = []
    for r in range(RUNS_WHOLE):
        for m in modes:
            c, w, k, _ = run(argv, m, extra)
            cpu[m].append(c)
            wall[m].append(w)
            rss[m].append(k)
            if m == "alloc":
                drains = raw_comment("sampling thread cpu_ns")
                nobj = alloc_objects()
                model.append((nobj, drains[0] / 1e9 if drains else 0.0,
                              drains[1] if len(drains) > 1 else 0))
    bc, bw, br = med(cpu["plain"]), med(wall["plain"]), med(rss["plain"])
    print("  %s" % name)
    for m in modes:
        dc = [c - p for c, p in zip(cpu[m], cpu["plain"])]
        dw = [c - p for c, p in zip(wall[m], wall["plain"])]
        k = med(rss[m])
        budget = max(0.01 * br / 1024, 8)
        line = ("    %-10s CPU %7.3f (%7.3f) s %+6.1f %%, paired %+6.1f %%;"
                " wall %7.3f s, paired %+6.1f %%; peak RSS %7.1f MB"
                % (m, med(cpu[m]), min(cpu[m]),
                   100 * (med(cpu[m]) / bc - 1), 100 * med(dc) / bc,
                   med(wall[m]), 100 * med(dw) / bw, k / 1024))
        if m != "plain":
            line += " (%+.1f MB, budget %.1f MB)" % ((k - br) / 1024, budget)
        if m in own:
            line += "; vs %s: %+.1f %%" % (own[m], 100 * (
                med(cpu[m]) / med(cpu[own[m]]) - 1))
        print(line)
    nobj = med([x[0] for x in model])
    drain_s = med([x[1] for x in model])
    nsamp = med([x[2] for x in model])
    if pat == "mix20":
        print("    rate without a profiler: %.1f M operations a second of "
              "CPU (median)" % (MIX_OPS / bc / 1e6))
        continue
    if pat == "mix":
        mix_model(bc, drain_s, nsamp, med(cpu["alloc"]) - bc,
                  med([c - p for c, p in zip(cpu["alloc"], cpu["plain"])]))
        continue
    pred = nobj * pair_ns * 1e-9 + drain_s + startup
    print("    model: %.2f M allocations x %.2f ns (%s pattern) + drains %.1f ms "
          "(%d samples, %.1f us each) + start-up %.2f ms = %.1f ms, "
          "%+.2f %% of %.3f s"
          % (nobj / 1e6, pair_ns, pat, drain_s * 1e3, nsamp,
             drain_s * 1e6 / nsamp if nsamp else 0, startup * 1e3,
             pred * 1e3, 100 * pred / bc, bc))
print("load after: %s" % load())
PYEOF
