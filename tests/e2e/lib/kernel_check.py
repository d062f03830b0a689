#!/usr/bin/env python3
"""kernel_check.py - helpers of t3092-record-kernel.sh and
t3093-kernel-symd.sh (tests/e2e).

  perf-addrs PERF_SCRIPT OUT_RAW BUILD_ID [TEXT]
      the kernel frames of `perf script -F ip,sym,dso` (callchains too):
      one raw profile (docs/raw-format.md) with a stack of each distinct
      kernel address, as exact PCs of one kernel map with BUILD_ID (and
      PGOFF TEXT, hex: where the kernel's _text was); the address -> name
      perf gave goes to OUT_RAW.perf
  shift-snapshot IN OUT SLIDE
      the kallsyms snapshot IN as another boot of the same kernel would
      give it: every address (symbols, module start and .text) plus
      SLIDE (hex), as KASLR moves them
  shift-raw IN OUT SLIDE
      the raw profile IN as recorded on that boot: its kernel map's PGOFF
      and the addresses of its kernel frames plus SLIDE
  kernel-locs SYMBOLIZED [SLIDE]
      the kernel frames of sym's symbolized profile, one "p|r ADDR
      STATUS NAME" a line, by address (minus SLIDE, hex)
  compare-names SYMBOLIZED OUT_RAW.perf
      every address of the .perf list looked up in sym symbolize's output
      (its fn and loc lines): prints the share whose function is perf's
      name, and exits 1 below 99%
  report-kernel SYMBOLIZED
      the kernel functions of sym's symbolized profile, one a line
"""
import sys
import urllib.parse


def perf_addrs(script, out, bid, text='0'):
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
        o.write('map 0 kernel -1 ffff800000000000 ffffffffffffffff %s '
                'ffff800000000000 %s [kernel.kallsyms]\n' % (text, bid))
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


def shift_snapshot(src, out, slide):
    d = int(slide, 16)
    with open(out, 'w') as o:
        for line in open(src):
            f = line.rstrip('\n').split(' ')
            if f[0] == 'module':
                f[2] = '%x' % (int(f[2], 16) + d)
                if len(f) > 5 and f[5] != '-':
                    f[5] = '%x' % (int(f[5], 16) + d)
            elif len(f) >= 3 and len(f[1]) == 1 and f[1] in 'tTwW':
                f[0] = '%016x' % (int(f[0], 16) + d)
            o.write(' '.join(f) + '\n')
    return 0


def shift_raw(src, out, slide):
    d = int(slide, 16)
    kmaps = set()
    with open(out, 'w') as o:
        for line in open(src):
            f = line.rstrip('\n').split(' ')
            if f[0] == 'map' and f[2] == 'kernel':
                kmaps.add(f[1])
                f[6] = '%x' % (int(f[6], 16) + d)
            elif f[0] == 'stack':
                for i in range(6, len(f)):
                    k, a = f[i].split(':')
                    if k[1:] in kmaps:
                        f[i] = '%s:%x' % (k, int(a, 16) + d)
            o.write(' '.join(f) + '\n')
    return 0


def kernel_locs(sym, slide='0'):
    kmaps, fns, out = set(), {}, []
    for line in open(sym):
        f = line.rstrip('\n').split(' ')
        if f[0] == 'map' and f[2] == 'kernel':
            kmaps.add(f[1])
        elif f[0] == 'fn':
            fns[f[1]] = urllib.parse.unquote(f[2])
        elif f[0] == 'loc' and f[1].split(':')[0][1:] in kmaps:
            k, a = f[1].split(':')
            name = fns.get(f[3].split(':')[0][1:], '?') if f[2] == 'ok' \
                else '-'
            out.append((int(a, 16) - int(slide, 16), k[0], f[2], name))
    for a, k, st, name in sorted(out):
        print('%s %x %s %s' % (k, a, st, name))
    return 0


def main():
    cmd = sys.argv[1]
    if cmd == 'perf-addrs':
        perf_addrs(*sys.argv[2:6])
        return 0
    if cmd == 'shift-snapshot':
        return shift_snapshot(*sys.argv[2:5])
    if cmd == 'shift-raw':
        return shift_raw(*sys.argv[2:5])
    if cmd == 'kernel-locs':
        return kernel_locs(*sys.argv[2:4])
    if cmd == 'compare-names':
        return compare_names(sys.argv[2], sys.argv[3])
    if cmd == 'report-kernel':
        return report_kernel(sys.argv[2])
    return 2


if __name__ == '__main__':
    sys.exit(main())
