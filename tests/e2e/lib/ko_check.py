#!/usr/bin/env python3
"""ko_check.py - helpers of t0160-kernel-ko.sh (tests/e2e).

  addrs OBJDUMP_T OUT
      from `objdump -t X.ko` (binutils, not our code): the first, middle
      and last byte of every sized function symbol of .text, one
      "0xADDR NAME1,NAME2..." line each (every function covering it)
  compare ADDRS NAMES
      NAMES is one answer a line, in ADDRS's order (`sym addr2line -f`'s
      or `eu-addr2line -f`'s function lines): prints the share that is
      one of the covering functions' whole names; exits 1 below 100%
  raw ADDRS TEXT OUT
      appends to OUT one raw stack (docs/raw-format.md) per address of
      ADDRS, as the exact PC TEXT + address of a kernel map
  symbolized SYMBOLIZED ADDRS TEXT MODULE
      `sym symbolize`'s fn and loc lines: each address of ADDRS, at
      TEXT + address, is named "NAME [MODULE]" with NAME one of its
      covering functions; exits 1 unless all are
"""
import sys
import urllib.parse


def addrs(objdump, out):
    funcs = []
    for line in open(objdump, errors='replace'):
        # "000000000000b180 l     F .text	0000000000000135 name"
        f = line.split()
        if len(f) < 6 or f[-4] != 'F' or f[-3] != '.text':
            continue
        try:
            start, size = int(f[0], 16), int(f[-2], 16)
        except ValueError:
            continue
        if size:
            funcs.append((start, size, f[-1]))
    want = set()
    for start, size, _ in funcs:
        want.update((start, start + size // 2, start + size - 1))
    with open(out, 'w') as o:
        for a in sorted(want):
            names = sorted(n for s, z, n in funcs if s <= a < s + z)
            o.write('0x%x %s\n' % (a, ','.join(names)))


def compare(addrs_file, names_file):
    want = [l.split() for l in open(addrs_file)]
    got = [l.rstrip('\n') for l in open(names_file)]
    if len(got) != len(want):
        print('# %d answers for %d addresses' % (len(got), len(want)))
        return 1
    good = 0
    bad = []
    for (a, names), g in zip(want, got):
        if g in names.split(','):
            good += 1
        else:
            bad.append('%s: %s, want %s' % (a, g, names))
    print('%d of %d addresses (%.2f%%) get a covering function\'s name'
          % (good, len(want), 100.0 * good / max(len(want), 1)))
    for b in bad[:10]:
        print('#   ' + b)
    return 0 if good == len(want) and want else 1


def raw(addrs_file, text, out):
    base = int(text, 16)
    with open(out, 'a') as o:
        for l in open(addrs_file):
            o.write('stack 1 1 1 1 - p0:%x\n' % (base + int(l.split()[0], 16)))


def symbolized(sym_file, addrs_file, text, module):
    base = int(text, 16)
    fns, locs = {}, {}
    for l in open(sym_file):
        f = l.split()
        if len(f) >= 3 and f[0] == 'fn':
            fns[f[1]] = urllib.parse.unquote(f[2])
        elif len(f) >= 4 and f[0] == 'loc' and f[1].startswith('p0:'):
            locs[int(f[1][3:], 16)] = f[3].split(':')[0][1:] \
                if f[2] == 'ok' else None
    want = [l.split() for l in open(addrs_file)]
    good, bad = 0, []
    for a, names in want:
        got = fns.get(locs.get(base + int(a, 16)))
        if got in ['%s [%s]' % (n, module) for n in names.split(',')]:
            good += 1
        else:
            bad.append('%s: %s, want %s [%s]' % (a, got, names, module))
    print('%d of %d frames of %s named from its .ko'
          % (good, len(want), module))
    for b in bad[:10]:
        print('#   ' + b)
    return 0 if good == len(want) and want else 1


def main():
    if len(sys.argv) == 5 and sys.argv[1] == 'raw':
        raw(sys.argv[2], sys.argv[3], sys.argv[4])
        return 0
    if len(sys.argv) == 6 and sys.argv[1] == 'symbolized':
        return symbolized(*sys.argv[2:])
    if len(sys.argv) == 4 and sys.argv[1] == 'addrs':
        addrs(sys.argv[2], sys.argv[3])
        return 0
    if len(sys.argv) == 4 and sys.argv[1] == 'compare':
        return compare(sys.argv[2], sys.argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main())
