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
#    time and peak RSS of fixtures/src/symprof_alloc.c (t4020's fixture,
#    10.3 M allocations) and of Debian's python3.11 with
#    PYTHONMALLOC=malloc building and dropping a dict of 2 M strings,
#    BENCH_RUNS_WHOLE (9) rounds, each round every variant once in turn:
#    no profiler; alloc mode (512 KiB); and the peers that are installed
#    (heaptrack; jemalloc without and with its profiler, prof:true,
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
cc -O2 -shared -fPIC -I"$ROOT/libsym" -o "$W/idle.so" \
	"$ROOT/tests/bench/symprof-idle-thread.c" \
	-lpthread
HEAPTRACK=$(command -v heaptrack || true)
# Debian's python3.11 itself, not a shim on PATH
PY=$(ls /usr/bin/python3.11 2> /dev/null || command -v python3.11 || true)
JE=$(ls /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 2> /dev/null || true)

[ "${BENCH_PEERS:-1}" = 0 ] && HEAPTRACK= JE=
BASE=${BENCH_SYMPROF_BASE:-}
W="$W" SYM="$SYM" LIB="$LIB" HEAPTRACK="$HEAPTRACK" PY="$PY" JE="$JE" \
BASE="$BASE" \
RUNS=${BENCH_RUNS:-7} RUNS_WHOLE=${BENCH_RUNS_WHOLE:-9} python3 - <<'PYEOF'
import os, statistics, subprocess, time

W, SYM, LIB = os.environ["W"], os.environ["SYM"], os.environ["LIB"]
HT, PY = os.environ["HEAPTRACK"], os.environ["PY"]
JE, BASE = os.environ["JE"], os.environ["BASE"]
RUNS, RUNS_WHOLE = int(os.environ["RUNS"]), int(os.environ["RUNS_WHOLE"])
med = statistics.median

def load():
    return open("/proc/loadavg").read().split()[0]

def env(mode):
    e = dict(os.environ)
    if mode in ("cpu", "alloc", "alloc-base"):
        e["LD_PRELOAD"] = BASE if mode == "alloc-base" else LIB
        e["SYMPROF_MODE"] = "cpu" if mode == "cpu" else "alloc"
        e["SYMPROF_OUT"] = W + "/bench.raw"
        e["SYMPROF_INTERVAL"] = "0"
    if mode == "thread":
        e["LD_PRELOAD"] = W + "/idle.so"
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

print("load before: %s" % load())
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
print("\n## Start-up and exit (/bin/true, CPU, min of %d): %+.2f ms"
      % (RUNS, startup * 1e3))

peers = (["heaptrack"] if HT else []) + \
    (["jemalloc", "jeprof"] if JE else [])
work = [("fixture (symprof_alloc)", [W + "/fixture", W + "/truth"], None,
         ["plain", "alloc"] + peers, "tcache")]
if PY:
    work.append(("python3.11 dict of 2 M strings", [PY, "-c",
        "d = {str(i) * 3: str(i) for i in range(2000000)}\n"
        "s = sum(len(k) for k in d)\ndel d\nprint(s)"],
        {"PYTHONMALLOC": "malloc"},
        ["plain", "alloc"] + peers, "bulk"))
own = {"jeprof": "jemalloc", "alloc-base": "alloc"}
if BASE:
    for w in work:
        w[3].insert(2, "alloc-base")
print("\n## Whole programs: %d rounds, the variants in turn in each; "
      "CPU (user+sys) and wall s: median (min); paired: the median of "
      "the rounds' differences to no profiler" % RUNS_WHOLE)
for name, argv, extra, modes, pat in work:
    pair_ns = best[(pat, "alloc")] - best[(pat, "plain")]
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
    pred = nobj * pair_ns * 1e-9 + drain_s + startup
    print("    model: %.2f M allocations x %.2f ns (%s pattern) + drains %.1f ms "
          "(%d samples, %.1f us each) + start-up %.2f ms = %.1f ms, "
          "%+.2f %% of %.3f s"
          % (nobj / 1e6, pair_ns, pat, drain_s * 1e3, nsamp,
             drain_s * 1e6 / nsamp if nsamp else 0, startup * 1e3,
             pred * 1e3, 100 * pred / bc, bc))
print("load after: %s" % load())
PYEOF
