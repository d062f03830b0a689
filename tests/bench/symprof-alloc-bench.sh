#!/bin/sh
# symprof-alloc-bench.sh - `make bench`: what libsymprof's alloc mode
# costs (issue 21; docs/symprof.md, "Allocation profiles"), as ratios in
# one run, the variants interleaved run by run:
#
# 1. Fast path: CPU ns per malloc/free pair of tests/bench/
#    symprof-alloc-work.c (20 M pairs of 64-127 B, the loop's own thread
#    CPU time), without the preload, with it in cpu mode (the malloc
#    family interposed but off), and in alloc mode at the default rate;
#    the minimum of BENCH_RUNS (7) runs each.  Goal: at most 5 ns more.
# 2. Whole programs: CPU time (user + system of the process tree) and
#    peak RSS of fixtures/src/symprof_alloc.c (t4020's known-truth
#    fixture, 10.3 M allocations) and of Debian's python3.11 with
#    PYTHONMALLOC=malloc building and dropping a dict of 2 M strings,
#    without a profiler, under sym run --mode alloc, and under the peers
#    that are installed: heaptrack; jemalloc (libjemalloc2) without and
#    with its profiler (prof:true, lg_prof_sample:19, as our rate), its
#    profiler also as a ratio to jemalloc alone.  gperftools' heap
#    profiler (HEAPPROFILE) is left out: it records every allocation with
#    a libunwind backtrace (an rt_sigprocmask pair each), over 8 minutes
#    for the fixture on a loaded machine (t4021 runs it on 1 M of site
#    A's allocations).  The minimum and the median of BENCH_RUNS_WHOLE
#    (5): on a shared machine the minimum is the figure (the load of the
#    other tenants only adds), the median says how noisy it was.  Goals:
#    overhead <= 3 %; the profiler's memory (peak RSS with it minus
#    without) <= max(1 % of the peak RSS, 8 MB).
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
HEAPTRACK=$(command -v heaptrack || true)
# Debian's python3.11 itself, not a shim on PATH
PY=$(ls /usr/bin/python3.11 2> /dev/null || command -v python3.11 || true)
JE=$(ls /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 2> /dev/null || true)

W="$W" SYM="$SYM" LIB="$LIB" HEAPTRACK="$HEAPTRACK" PY="$PY" JE="$JE" \
RUNS=${BENCH_RUNS:-7} RUNS_WHOLE=${BENCH_RUNS_WHOLE:-5} python3 - <<'PYEOF'
import os, resource, statistics, subprocess

W, SYM, LIB = os.environ["W"], os.environ["SYM"], os.environ["LIB"]
HT, PY = os.environ["HEAPTRACK"], os.environ["PY"]
JE = os.environ["JE"]
RUNS, RUNS_WHOLE = int(os.environ["RUNS"]), int(os.environ["RUNS_WHOLE"])

def env(mode):
    e = dict(os.environ)
    if mode in ("cpu", "alloc"):
        e["LD_PRELOAD"] = LIB
        e["SYMPROF_MODE"] = mode
        e["SYMPROF_OUT"] = W + "/bench.%p.raw"
        e["SYMPROF_INTERVAL"] = "0"
    if mode in ("jemalloc", "jeprof"):
        e["LD_PRELOAD"] = JE
    if mode == "jeprof":
        e["MALLOC_CONF"] = ("prof:true,lg_prof_sample:19,prof_accum:true,"
                            "prof_final:true,prof_prefix:" + W + "/je")
    return e

def run(argv, mode, extra_env=None):
    """CPU seconds of the process tree, peak RSS (KiB), stdout."""
    e = env(mode)
    if extra_env:
        e.update(extra_env)
    if mode == "heaptrack":
        argv = [HT, "-o", W + "/ht"] + argv
    pid = os.fork()
    if pid == 0:
        fd = os.open(W + "/out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 1)
        err = os.open("/dev/null", os.O_WRONLY)
        os.dup2(err, 2)
        os.execvpe(argv[0], argv, e)
    _, status, ru = os.wait4(pid, 0)
    out = open(W + "/out").read()
    if status:
        raise SystemExit("%s failed (%d)" % (argv, status))
    return ru.ru_utime + ru.ru_stime, ru.ru_maxrss, out

print("## Fast path: ns of CPU per malloc/free pair (min of %d)" % RUNS)
best = {}
for r in range(RUNS):
    for mode in ("plain", "cpu", "alloc"):
        v = float(run([W + "/work"], mode)[2])
        best[mode] = min(best.get(mode, v), v)
for mode in ("plain", "cpu", "alloc"):
    print("  %-28s %6.2f ns  (+%.2f ns)" % (
        {"plain": "no profiler", "cpu": "preloaded, cpu mode",
         "alloc": "alloc mode, rate 512 KiB"}[mode], best[mode],
        best[mode] - best["plain"]))

peers = (["heaptrack"] if HT else []) + \
    (["jemalloc", "jeprof"] if JE else [])
work = [("fixture (symprof_alloc)", [W + "/fixture", W + "/truth"], None,
         ["plain", "alloc"] + peers)]
if PY:
    work.append(("python3.11 dict of 2 M strings", [PY, "-c",
        "d = {str(i) * 3: str(i) for i in range(2000000)}\n"
        "s = sum(len(k) for k in d)\ndel d\nprint(s)"],
        {"PYTHONMALLOC": "malloc"},
        ["plain", "alloc"] + peers))
own = {"jeprof": "jemalloc"}
print("\n## Whole programs: CPU s, min (median) of %d, and peak RSS"
      % RUNS_WHOLE)
for name, argv, extra, modes in work:
    cpu, rss = {m: [] for m in modes}, {m: [] for m in modes}
    for r in range(RUNS_WHOLE):
        for m in modes:
            c, k, _ = run(argv, m, extra)
            cpu[m].append(c)
            rss[m].append(k)
    base_c, base_m = min(cpu["plain"]), statistics.median(cpu["plain"])
    base_r = statistics.median(rss["plain"])
    print("  %s" % name)
    for m in modes:
        c, cm = min(cpu[m]), statistics.median(cpu[m])
        k = statistics.median(rss[m])
        extra_mb = (k - base_r) / 1024
        budget = max(0.01 * base_r / 1024, 8)
        print("    %-10s %7.3f s %+6.1f %% (median %.3f s %+6.1f %%)   "
              "peak RSS %7.1f MB (%+.1f MB%s)%s"
              % (m, c, 100 * (c / base_c - 1), cm, 100 * (cm / base_m - 1),
                 k / 1024, extra_mb, "" if m == "plain" else
                 ", budget %.1f MB" % budget,
                 "" if m not in own else
                 "   vs %s: %+.1f %% (median %+.1f %%)" % (own[m],
                     100 * (c / min(cpu[own[m]]) - 1),
                     100 * (cm / statistics.median(cpu[own[m]]) - 1))))
PYEOF
