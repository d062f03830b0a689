#!/usr/bin/env python3
"""kdwarf_check.py - helpers of t0161-kernel-dwarf.sh (tests/e2e).

  eu SYM KO ADDRS OURS EU
      OURS is `sym addr2line -a -f -i --output-style=elfutils -e KO` on
      ADDRS (offsets into .text, one 0x... a line), EU is `eu-addr2line -a
      -f -i -j .text -e KO` on the same: eu prints each address plus the
      place it laid .text at (the first answer's address minus the first
      input), which is taken off.  Every address must get the same frames,
      byte for byte, but for eu-addr2line's callers of the innermost
      frame (eu-chain), which are not always right:
        - at the padding after a function (no scope covers it), eu prints
          the row's line as a nameless frame and then callers taken from
          some inlined instance (af_key 0x277b: pfkey_sendmsg);
        - an inlined frame whose caller eu leaves out (xfs 0x133d4:
          do_trace_event_raw_event_xfs_imap_class, with no
          trace_event_raw_event_xfs_imap_class after it);
        - docs/oracle.md's eu-inline-chain (callers from another instance
          of the same inlined function).
      llvm-symbolizer prints what sym prints in each.  Counted only where
      eu's first frame is sym's and llvm-symbolizer's whole answer
      (--inlining, its default style) is byte for byte sym's in the LLVM
      style.
      Prints "N/M agree (K by eu-chain)" and the disagreements; exits 1
      on any.
  corrupt KO OUT KIND
      OUT is KO with the first relocation of its .rela.debug_info made
      bad (ELF64 little-endian): KIND offset (r_offset past the
      section), symbol (a symbol index past the symbol table) or type (a
      relocation type DWARF does not use, 0x7f).
"""
import re
import struct
import subprocess
import sys

SYM = None


def groups(path):
    """-a output: {address: [lines]}, in order."""
    out, order, cur = {}, [], None
    for line in open(path, errors='replace'):
        line = line.rstrip('\n')
        if re.fullmatch(r'0x[0-9a-f]+', line):
            cur = int(line, 16)
            out[cur] = []
            order.append(cur)
        elif cur is None:
            raise SystemExit('%s: text before the first address' % path)
        else:
            out[cur].append(line)
    return out, order


def run(cmd, addrs):
    p = subprocess.run(cmd, input=''.join('0x%x\n' % a for a in addrs),
                       stdout=subprocess.PIPE, universal_newlines=True,
                       errors='replace', check=True)
    return p.stdout.split('\n\n')


def eu(ko, addrs_file, ours_file, eu_file):
    want = [int(x, 16) for x in open(addrs_file).read().split()]
    ours, oorder = groups(ours_file)
    theirs, eorder = groups(eu_file)
    if oorder != want or len(eorder) != len(want):
        print('answers for %d and %d of %d addresses' %
              (len(oorder), len(eorder), len(want)))
        return 1
    base = eorder[0] - want[0]
    theirs = {a - base: v for a, v in theirs.items()}
    bad = [a for a in want if ours[a] != theirs.get(a)]
    # The eu-chain rule, judged by llvm-symbolizer.
    cand = [a for a in bad if theirs.get(a, [])[:2] == ours[a][:2]]
    relaxed = set()
    if cand:
        sym = run([SYM, 'addr2line', '--no-cache', '-f', '-i',
                   '--output-style=LLVM', '-e', ko], cand)
        llvm = run(['llvm-symbolizer', '--inlining', '--obj=' + ko], cand)
        relaxed = {a for a, s, l in zip(cand, sym, llvm) if s == l}
    bad = [a for a in bad if a not in relaxed]
    print('%d/%d agree (%d by eu-chain)' %
          (len(want) - len(bad), len(want), len(relaxed)))
    for a in bad[:10]:
        print('0x%x\n ours: %r\n eu:   %r' % (a, ours[a], theirs.get(a)))
    return 1 if bad else 0


def corrupt(ko, out, kind):
    b = bytearray(open(ko, 'rb').read())
    shoff, = struct.unpack_from('<Q', b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', b, 0x3a)
    def sh(i):
        return struct.unpack_from('<IIQQQQIIQQ', b, shoff + i * shentsize)
    stroff = sh(shstrndx)[4]
    for i in range(shnum):
        name, off = sh(i)[0], sh(i)[4]
        end = b.index(b'\0', stroff + name)
        if b[stroff + name:end] == b'.rela.debug_info':
            r_off, r_info, _ = struct.unpack_from('<QQq', b, off)
            if kind == 'offset':
                r_off = 0xfffffff0
            elif kind == 'symbol':
                r_info = (0xfffff << 32) | (r_info & 0xffffffff)
            else:
                r_info = (r_info >> 32 << 32) | 0x7f
            struct.pack_into('<QQ', b, off, r_off, r_info)
            open(out, 'wb').write(b)
            return 0
    print('no .rela.debug_info in %s' % ko)
    return 1


def main():
    if len(sys.argv) == 5 and sys.argv[1] == 'corrupt':
        return corrupt(*sys.argv[2:])
    global SYM
    if len(sys.argv) == 7 and sys.argv[1] == 'eu':
        SYM = sys.argv[2]
        return eu(*sys.argv[3:])
    sys.stderr.write(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main())
