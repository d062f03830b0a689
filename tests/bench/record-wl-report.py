#!/usr/bin/env python3
"""record-wl-report.py - the part of tests/bench/record-bench.sh's report
on Debian's own programs: a markdown table from its results file, one line
per run:

    NAME CASE HZ WALL SCRIPT-WALL WORK AGENT SCRIPT SAMPLES WHOLE/TOTAL|-

CASE is none (the program alone), sym (the default sym record) or perf
(perf record --call-graph dwarf; SCRIPT-WALL and SCRIPT are perf script's
wall and CPU time, included in AGENT).  Medians over the runs; whole
stacks summed over the runs.
"""
import statistics
import sys

med = statistics.median


def share(ks):
    a = sum(int(x.split("/")[0]) for x in ks)
    b = sum(int(x.split("/")[1]) for x in ks)
    return (100.0 * a / b, a, b) if b else None


def fmt_share(s):
    return "-" if s is None else "%.2f%% (%d/%d)" % s


def main():
    rows, names = {}, []
    for line in open(sys.argv[1]):
        t = line.split()
        if len(t) != 10:
            continue
        rows.setdefault((t[0], t[1], int(t[2])), []).append(t[3:])
        if t[0] not in names:
            names.append(t[0])
    print("\n## Debian's own programs (tests/e2e/lib/workloads-lib.sh)\n")
    print("Medians of the runs.  Wall time of the whole command line (the "
          "profiler's start-up and final write included), against the "
          "program alone; perf's `perf script` afterwards in a column of "
          "its own.  Agent CPU: the profiler's CPU beside the program's "
          "(perf: record + script).  Whole: samples whole and unflagged by "
          "tests/e2e/lib/workloads_check.py's judgement (the same for both), "
          "summed over the runs at the highest rate.\n")
    print("CPU overhead: (the program's CPU + the agent's) / the program's "
          "CPU alone - 1; it holds the kernel's side of sampling (charged "
          "to the program), and unlike wall time it does not move with the "
          "machine's other load.\n")
    print("| program | Hz | alone s | wall: sym record | perf record | + "
          "perf script | CPU: sym | perf | agent CPU sym s | perf s | ratio "
          "| samples sym / perf | whole: sym | whole: perf |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
          "---|")
    notes = []
    for name in names:
        none = rows.get((name, "none", 0))
        if not none:
            continue
        w0 = med([float(x[0]) for x in none])
        c0 = med([float(x[2]) for x in none])
        for hz in sorted({k[2] for k in rows if k[0] == name and k[2]}):
            s, p = rows.get((name, "sym", hz)), rows.get((name, "perf", hz))
            if not s:
                continue
            sw = med([float(x[0]) for x in s])
            sa = med([float(x[3]) for x in s])
            sn = med([int(x[5]) for x in s])
            sk = share([x[6] for x in s if x[6] != "-"])
            sc = med([float(x[2]) + float(x[3]) for x in s])
            cols = ["-"] * 6
            pk = None
            if p:
                pw = med([float(x[0]) for x in p])
                pws = med([float(x[0]) + float(x[1]) for x in p])
                pa = med([float(x[3]) for x in p])
                pk = share([x[6] for x in p if x[6] != "-"])
                cols = ["%+.1f%%" % (100 * (pw / w0 - 1)),
                        "%+.1f%%" % (100 * (pws / w0 - 1)), "%.3f" % pa,
                        "%.2f" % (sa / pa) if pa > 0 else "-",
                        "%d" % med([int(x[5]) for x in p]),
                        "%+.1f%%" % (100 * (med([float(x[2]) + float(x[3])
                                                for x in p]) / c0 - 1))]
                notes.append("- %s at %d Hz: wall time with the profiler "
                             "%.2f s (sym record) against %.2f s (perf "
                             "record + perf script): %s wins; whole stacks "
                             "%s against %s: %s" % (
                                 name, hz, sw, pws,
                                 "sym" if sw < pws else "perf",
                                 fmt_share(sk), fmt_share(pk),
                                 "-" if not sk or not pk else
                                 "sym wins" if sk[0] > pk[0] else
                                 "perf wins" if pk[0] > sk[0] else "a tie"))
            print("| %s | %d | %.2f | %+.1f%% | %s | %s | %+.1f%% | %s | "
                  "%.3f | %s | %s | %d / %s | %s | %s |" % (
                      name, hz, w0, 100 * (sw / w0 - 1), cols[0], cols[1],
                      100 * (sc / c0 - 1), cols[5], sa, cols[2], cols[3],
                      sn, cols[4], fmt_share(sk), fmt_share(pk)))
    print()
    for n in notes:
        print(n)


if __name__ == "__main__":
    main()
