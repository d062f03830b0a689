#!/usr/bin/env python3
"""kernel_check.py - helpers of t3092-record-kernel.sh (tests/e2e).

  perf-addrs PERF_SCRIPT OUT_RAW BUILD_ID
      the kernel frames of `perf script -F ip,sym,dso` (callchains too):
      one raw profile (docs/raw-format.md) with a stack of each distinct
      kernel address, as exact PCs of one kernel map with BUILD_ID; the
      address -> name perf gave goes to OUT_RAW.perf
  compare-names SYMBOLIZED OUT_RAW.perf
      every address of the .perf list looked up in sym symbolize's output
      (its fn and loc lines): prints the share whose function is perf's
      name, and exits 1 below 99%
  report-kernel SYMBOLIZED
      the kernel functions of sym's symbolized profile, one a line
"""
import sys
import urllib.parse


def perf_addrs(script, out, bid):
    names = {}
    for line in open(script, errors='replace'):
        f = line.split()
        # "ffffffff8124a2b1 read_zero+0x21 ([kernel.kallsyms])"
        if len(f) < 3 or not f[-1].startswith('([kernel.'):
            continue
        try:
            a = int(f[0], 16)
        except ValueError:
            continue
        name = ' '.join(f[1:-1])
        if name == '[unknown]':
            continue
        names[a] = name.rsplit('+0x', 1)[0]
    with open(out, 'w') as o:
        o.write('sym-raw 1\nperiod 1\nweight-unit samples\n')
        o.write('map 0 kernel -1 ffff800000000000 ffffffffffffffff 0 '
                'ffff800000000000 %s [kernel.kallsyms]\n' % bid)
        for a in sorted(names):
            o.write('stack 1 1 1 1 - p0:%x\n' % a)
        o.write('end\n')
    with open(out + '.perf', 'w') as o:
        for a in sorted(names):
            o.write('%x %s\n' % (a, names[a]))
    print('# %d distinct kernel addresses from perf script' % len(names))


def symbolized(path):
    fns, locs = {}, {}
    for line in open(path):
        f = line.split(' ')
        if f[0] == 'fn':
            fns[f[1]] = urllib.parse.unquote(f[2].rstrip('\n'))
        elif f[0] == 'loc':
            addr = int(f[1].split(':')[1], 16)
            if f[2].rstrip('\n') == 'ok':
                locs[addr] = fns.get(f[3].split(':')[0][1:], '?')
            else:
                locs[addr] = None
    return locs


def compare_names(sym, perf):
    locs = symbolized(sym)
    n = same = 0
    for line in open(perf):
        a, name = line.rstrip('\n').split(' ', 1)
        n += 1
        got = locs.get(int(a, 16))
        if got == name:
            same += 1
        elif n - same <= 5:
            print('# %s: perf %s, sym %s' % (a, name, got))
    share = 100.0 * same / n if n else 0
    print('# %d of %d kernel addresses named as perf names them (%.2f%%)'
          % (same, n, share))
    return 0 if n and share >= 99 else 1


def report_kernel(sym):
    for name in sorted(set(v for v in symbolized(sym).values() if v)):
        print(name)
    return 0


def main():
    cmd = sys.argv[1]
    if cmd == 'perf-addrs':
        perf_addrs(*sys.argv[2:5])
        return 0
    if cmd == 'compare-names':
        return compare_names(sys.argv[2], sys.argv[3])
    if cmd == 'report-kernel':
        return report_kernel(sys.argv[2])
    return 2


if __name__ == '__main__':
    sys.exit(main())
