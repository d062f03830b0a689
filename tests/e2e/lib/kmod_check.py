#!/usr/bin/env python3
"""kmod_check.py - helpers of t0163-kernel-modules.sh (tests/e2e).

  root VMLINUX ROOT SLIDE BASE KO...
      a machine's /proc and /sys as `sym kallsyms --root ROOT` reads them,
      made from Debian's real debug files: the kernel of VMLINUX moved
      by SLIDE (hex, as KASLR would), its build ID note
      (sys/kernel/notes: VMLINUX's .notes), its release
      (proc/sys/kernel/osrelease), and each KO loaded at its own place
      from BASE on (hex): proc/modules ("NAME SIZE 0 - Live 0xSTART"),
      sys/module/NAME/notes/.note.gnu.build-id (the .ko's own note),
      sys/module/NAME/sections/.text (START + 0x1000), and
      proc/kallsyms: nm's symbols of VMLINUX (all types: the reader keeps
      t T w W) at address + SLIDE, then each module's .text symbols
      (objdump -t, in symbol table order) at .text + value, tagged
      "\t[NAME]" as the kernel prints them.  ROOT/placed lists
      "NAME START SIZE TEXT BUILDID KO" a module.
  raw ROOT KADDRS KTEXT KBID OUT MADDRS...
      the raw profile (docs/raw-format.md) `sym record` writes for such a
      machine: map 0 the kernel's (PGOFF its runtime _text), map i the
      i-th placed module's (kind kernel, START..END, PGOFF its .text,
      its build ID, "[NAME]": ksnap_kmod_map()); one stack a frame, an
      exact PC: each link-time address of KADDRS (vmlinux, its _text
      KTEXT) at its runtime place, each .text offset of MADDRS[i] (in
      ROOT/placed's order) at TEXT + offset.
  names SYMBOLIZED ROOT KADDRS KTEXT TAGGED MAPS
      the snapshot's answers: every frame of maps MAPS (0,3: the kernel's
      and the third module's; "all") is named after
      the last symbol at or below it that ROOT/proc/kallsyms lists
      (of several at one address the last listed, perf's choice), a
      module's among its own; with TAGGED 1 module frames are "NAME
      [MODULE]" (sym symbolize's local snapshot), with 0 "NAME" (symd's
      module part).  Prints the count; exits 1 on any other answer.
  dwarf SYMBOLIZED MAP ADDRS REF [ROOT [TEXT]]
      the frames of map MAP (an exact PC each, at PGOFF + offset) against
      REF, `sym addr2line -a -f -i --output-style=elfutils` of the debug
      file at the offsets of ADDRS (checked against eu-addr2line here,
      and in t0161), plus TEXT (hex; the vmlinux's _text, whose
      link-time addresses sym addr2line takes, as every peer does): the
      same inline chain, function, file, line and column of every frame.  With ROOT (the kernel's map): where no
      DWARF function covers a frame (assembly: its name is the symbol
      table's, `s`), eu's choice among the symbols there may differ from
      libsym's, the last at or below (perf's and kallsyms's: nm's list
      in ROOT/proc/kallsyms): rule sym-symbol, the rest of the frame
      equal.  Prints the counts; exits 1 on any other difference.
"""
import os
import subprocess
import sys
import urllib.parse


def sh(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, check=True,
                          universal_newlines=True, errors='replace').stdout


def section_bytes(path, name):
    out = path + '.sec'
    subprocess.run(['objcopy', '-O', 'binary', '--only-section=' + name,
                    path, out], check=True)
    b = open(out, 'rb').read()
    os.unlink(out)
    return b


def write(path, data, mode='w'):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(data)


def text_syms(ko):
    """objdump -t's symbols of .text (sections' own left out), in symbol
    table order: (offset, type, name)."""
    out = []
    for line in sh(['objdump', '-t', ko]).splitlines():
        # "0000000000000010 l     F .text	0000000000000048 check_reqid"
        if '\t' not in line:
            continue
        head, tail = line.split('\t', 1)
        f = head.split()
        if len(f) < 3 or f[-1] != '.text' or f[-2] == 'd':
            continue
        name = tail.split()[-1]
        t = 'T' if f[1] == 'g' else 'W' if 'w' in f[1:-1] else 't'
        out.append((int(f[0], 16), t, name))
    return out


def size_of(ko, sec):
    for line in sh(['readelf', '-SW', ko]).splitlines():
        f = line.replace('[ ', '[').split()
        if len(f) > 6 and f[1] == sec:
            return int(f[5], 16)
    raise SystemExit('%s: no %s' % (ko, sec))


def root(vmlinux, rootdir, slide, base, *kos):
    slide, start = int(slide, 16), int(base, 16)
    write(rootdir + '/sys/kernel/notes', section_bytes(vmlinux, '.notes'),
          'wb')
    write(rootdir + '/proc/sys/kernel/osrelease',
          os.path.basename(vmlinux)[len('vmlinux-'):] + '\n')
    lines = []
    for line in sh(['nm', vmlinux]).splitlines():
        f = line.split()
        if len(f) == 3:
            lines.append((int(f[0], 16) + slide, f[1], f[2], ''))
    # /proc/kallsyms lists the kernel's by address
    lines.sort(key=lambda x: x[0])
    modules, placed = [], []
    for ko in kos:
        name = os.path.basename(ko)[:-3]
        text = start + 0x1000
        size = (0x1000 + size_of(ko, '.text') + 0x10fff) & ~0xfff
        bid = sh(['readelf', '-n', ko]).split('Build ID: ')[1].split()[0]
        d = '%s/sys/module/%s' % (rootdir, name)
        write(d + '/notes/.note.gnu.build-id',
              section_bytes(ko, '.note.gnu.build-id'), 'wb')
        write(d + '/sections/.text', '0x%x\n' % text)
        modules.append('%s %d 0 - Live 0x%x\n' % (name, size, start))
        placed.append('%s %x %x %x %s %s\n' % (name, start, size, text,
                                               bid, ko))
        for off, t, sym in text_syms(ko):
            lines.append((text + off, t, sym, '\t[%s]' % name))
        start += size + 0x100000
    write(rootdir + '/proc/modules', ''.join(modules))
    write(rootdir + '/placed', ''.join(placed))
    write(rootdir + '/proc/kallsyms', ''.join(
        '%016x %s %s%s\n' % l for l in lines))
    return 0


def placed(rootdir):
    out = []
    for line in open(rootdir + '/placed'):
        n, s, z, t, b, ko = line.split()
        out.append((n, int(s, 16), int(z, 16), int(t, 16), b, ko))
    return out


def runtime_text(rootdir):
    for line in open(rootdir + '/proc/kallsyms'):
        f = line.split()
        if f[2] == '_text' and len(f) == 3:
            return int(f[0], 16)
    raise SystemExit('no _text')


def raw(rootdir, kaddrs, ktext, kbid, out, *maddrs):
    mods = placed(rootdir)
    rt = runtime_text(rootdir)
    with open(out, 'w') as o:
        o.write('sym-raw 1\nperiod 1\nweight-unit samples\n')
        o.write('map 0 kernel -1 ffff800000000000 ffffffffffffffff %x '
                'ffff800000000000 %s [kernel.kallsyms]\n' % (rt, kbid))
        for i, (n, s, z, t, b, _) in enumerate(mods):
            o.write('map %d kernel -1 %x %x %x %x %s [%s]\n' %
                    (i + 1, s, s + z, t, s, b, n))
        for line in open(kaddrs):
            a = int(line, 16) - int(ktext, 16) + rt
            o.write('stack 1 1 1 1 - p0:%x\n' % a)
        for i, path in enumerate(maddrs):
            for line in open(path):
                o.write('stack 1 1 1 1 - p%d:%x\n' %
                        (i + 1, mods[i][3] + int(line, 16)))
        o.write('end\n')
    return 0


# The frames whose outermost name is from the symbol table (`s`).
SYMTAB = set()


def locs(path):
    """{(map, addr): [(function, file, line, column)...]} of an exact PC
    each; None for a status other than ok."""
    fns, srcs, out = {}, {}, {}
    for line in open(path):
        f = line.rstrip('\n').split(' ')
        if f[0] == 'fn':
            fns[f[1]] = urllib.parse.unquote(f[2])
        elif f[0] == 'src':
            srcs[f[1]] = urllib.parse.unquote(f[2])
        elif f[0] == 'loc' and f[1].startswith('p'):
            m, a = f[1][1:].split(':')
            chain = None
            if f[2] == 'ok':
                chain = []
                for l in f[3:]:
                    fn, src, ln, col = l.lstrip('is').split(':')
                    chain.append((fns.get(fn, ''), srcs.get(src, ''),
                                  int(ln), int(col)))
                if f[-1].startswith('s'):
                    SYMTAB.add((int(m), int(a, 16)))
            out[(int(m), int(a, 16))] = chain
    return out


def snapshot_syms(rootdir):
    """Text symbols by owner ('' the kernel, else the module), each list
    by address then listed order."""
    by = {}
    for i, line in enumerate(open(rootdir + '/proc/kallsyms')):
        f = line.split()
        if f[1] not in 'tTwW':
            continue
        owner = f[3][1:-1] if len(f) > 3 else ''
        by.setdefault(owner, []).append((int(f[0], 16), i, f[2]))
    for v in by.values():
        v.sort()
    return by


def covering(syms, a):
    lo, hi = 0, len(syms)
    while lo < hi:
        mid = (lo + hi) // 2
        if syms[mid][0] <= a:
            lo = mid + 1
        else:
            hi = mid
    return syms[lo - 1][2] if lo else None


def names(sym_file, rootdir, kaddrs, ktext, tagged, maps):
    got = locs(sym_file)
    if maps != 'all':
        keep = set(int(x) for x in maps.split(','))
        got = {k: v for k, v in got.items() if k[0] in keep}
    by = snapshot_syms(rootdir)
    mods = placed(rootdir)
    rt = runtime_text(rootdir)
    want = {}
    for line in open(kaddrs):
        a = int(line, 16) - int(ktext, 16) + rt
        if maps == 'all' or 0 in keep:
            want[(0, a)] = covering(by[''], a)
    for (m, a) in got:
        if m:
            n = mods[m - 1][0]
            s = covering(by[n], a)
            want[(m, a)] = '%s [%s]' % (s, n) if tagged == '1' else s
    bad = []
    for k, w in sorted(want.items()):
        g = got.get(k)
        g = g[-1][0] if g else None
        if g != w:
            bad.append('p%d:%x: %s, want %s' % (k[0], k[1], g, w))
    print('%d/%d frames named as the snapshot names them (%d of modules)'
          % (len(want) - len(bad), len(want),
             sum(1 for k in want if k[0])))
    for b in bad[:10]:
        print('#   ' + b)
    return 1 if bad or len(got) != len(want) else 0


def elfutils(path):
    """`addr2line -a -f -i` in elfutils' style: [(address, chain)], the
    chain as locs() gives it."""
    out = []
    lines = [l.rstrip('\n') for l in open(path, errors='replace')]
    i = 0
    while i < len(lines):
        addr, chain = int(lines[i], 16), []
        i += 1
        while i + 1 < len(lines) and not lines[i].startswith('0x'):
            fn = lines[i].split(' inlined at ')[0]
            f = lines[i + 1].rsplit(':', 2)
            if len(f) == 2 or not f[-1].isdigit() or not f[-2].isdigit():
                f = lines[i + 1].rsplit(':', 1) + ['0']
            chain.append(('' if fn == '??' else fn,
                          '' if f[0] == '??' else f[0],
                          int(f[1]) if f[1].isdigit() else 0, int(f[2])))
            i += 2
        if chain == [('', '', 0, 0)]:
            chain = None
        out.append((addr, chain))
    return out


def dwarf(sym_file, mapid, addrs, ref_file, rootdir=None, text='0'):
    got = locs(sym_file)
    syms = snapshot_syms(rootdir)[''] if rootdir else None
    nsym = 0
    m = int(mapid)
    pgoff = None
    for line in open(sym_file):
        f = line.split()
        if f[0] == 'map' and f[1] == mapid:
            pgoff = int(f[6], 16)
    offs = [int(l, 16) for l in open(addrs)]
    ref = elfutils(ref_file)
    bad, inl = [], 0
    for off, (a, w) in zip(offs, ref):
        g = got.get((m, pgoff + off))
        inl += bool(g and len(g) > 1)
        k = (m, pgoff + off)
        if (g and w and syms and k in SYMTAB and len(g) == len(w) and
                g[:-1] == w[:-1] and g[-1][1:] == w[-1][1:] and
                g[-1][0] == covering(syms, k[1])):
            nsym += 1
            continue
        if g != w or a != off + int(text, 16):
            bad.append('0x%x: %r, want %r' % (off, g, w))
    print('%d/%d frames of map %s are the debug file\'s DWARF answers '
          '(%d inline chains%s)' % (len(offs) - len(bad), len(offs), mapid,
                                    inl, ', %d by sym-symbol' % nsym
                                    if syms else ''))
    for b in bad[:10]:
        print('#   ' + b)
    return 1 if bad or len(ref) != len(offs) or not offs else 0


def main():
    cmds = {'root': root, 'raw': raw, 'names': names, 'dwarf': dwarf}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.stderr.write(__doc__)
        return 2
    return cmds[sys.argv[1]](*sys.argv[2:])


if __name__ == '__main__':
    sys.exit(main())
