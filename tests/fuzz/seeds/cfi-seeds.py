#!/usr/bin/env python3
"""cfi-seeds.py - write the seed-* files of tests/fuzz/corpus/fuzz-symprof-cfi/
(run from the project root; other files there are kept).

Each seed is what fuzz-symprof-cfi.c reads: a little-endian u16, the length
of .eh_frame_hdr, then an object's bytes from .eh_frame_hdr to the end of
.eh_frame as the loader maps them.  Sources:

  - cfi-rules.S (written here): functions whose CFI uses every rule the
    reader knows: a signal frame ('S', the CFA and registers as
    expressions over the saved ucontext_t, like glibc's __restore_rt), the
    PLT's CFA expression, a realigned (DRAP) frame, the state stack,
    val_offset, same_value, register, undefined rip, GNU_args_size, the
    _sf forms, and an expression too long to keep;
  - a small C program built with gcc at -O0 and -O2 without frame
    pointers (the linker's PLT FDE with its expression), and with clang
    when it is installed;
  - seed-bad-*: deterministic corruptions of those (truncated, bytes
    flipped in the header, the table, CIEs and FDEs, lengths and CIE
    pointers zeroed or huge, an unsorted table, a header naming no
    table, an empty input).

Needs gcc (and optionally clang).
"""
import os
import random
import struct
import subprocess
import sys
import tempfile

OUT = "tests/fuzz/corpus/fuzz-symprof-cfi"

RULES_S = r"""
	.text
	nop
	.globl f_signal
	.type f_signal, @function
f_signal:
	.cfi_startproc simple
	.cfi_signal_frame
	/* CFA = [rsp + 160]; rbp at rsp + 120; rip at rsp + 168 */
	.cfi_escape 0x0f, 0x04, 0x77, 0xa0, 0x01, 0x06
	.cfi_escape 0x10, 0x06, 0x03, 0x77, 0xf8, 0x00
	.cfi_escape 0x10, 0x10, 0x03, 0x77, 0xa8, 0x01
	mov $15, %rax
	syscall
	.cfi_endproc
	.size f_signal, .-f_signal

	.globl f_plt
	.type f_plt, @function
f_plt:
	.cfi_startproc
	/* the PLT's: rsp + 8 + ((rip & 15) >= 11) << 3 */
	.cfi_escape 0x0f, 0x0b, 0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22
	jmp *0(%rip)
	push $0
	jmp f_plt
	.cfi_endproc

	.globl f_drap
	.type f_drap, @function
f_drap:
	.cfi_startproc
	lea 8(%rsp), %r10
	.cfi_def_cfa 10, 0
	and $-32, %rsp
	push -8(%r10)
	push %rbp
	/* rbp saved at rbp + 0, CFA = [rbp - 8] */
	.cfi_escape 0x10, 0x06, 0x02, 0x76, 0x00
	mov %rsp, %rbp
	push %r10
	.cfi_escape 0x0f, 0x03, 0x76, 0x78, 0x06
	nop
	pop %r10
	.cfi_def_cfa 10, 0
	pop %rbp
	lea -8(%r10), %rsp
	.cfi_def_cfa 7, 8
	ret
	.cfi_endproc

	.globl f_state
	.type f_state, @function
f_state:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset 6, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register 6
	test %rdi, %rdi
	je 1f
	.cfi_remember_state
	leave
	.cfi_def_cfa 7, 8
	.cfi_restore 6
	ret
1:
	.cfi_restore_state
	.cfi_val_offset 6, -16
	nop
	.cfi_same_value 6
	nop
	.cfi_register 6, 3
	nop
	.cfi_undefined 6
	nop
	.cfi_escape 0x2e, 0x10
	leave
	.cfi_def_cfa 7, 8
	ret
	.cfi_endproc

	.globl f_sf
	.type f_sf, @function
f_sf:
	.cfi_startproc
	push %rbp
	/* def_cfa_sf 7, -2 (x -8); offset_extended_sf 6, 2 (x -8) */
	.cfi_escape 0x12, 0x07, 0x7e
	.cfi_escape 0x11, 0x06, 0x02
	nop
	/* def_cfa_offset_sf -3; val_offset_sf 6, 1; negative offset 6, 2 */
	.cfi_escape 0x13, 0x7d
	.cfi_escape 0x15, 0x06, 0x01
	nop
	.cfi_escape 0x2f, 0x06, 0x02
	nop
	/* offset_extended 16, 1; restore_extended 6; val_expression 6 */
	.cfi_escape 0x05, 0x10, 0x01
	.cfi_escape 0x06, 0x06
	.cfi_escape 0x16, 0x06, 0x04, 0x77, 0x10, 0x23, 0x08
	nop
	/* an expression longer than the reader keeps */
	.cfi_escape 0x10, 0x06, 0x14, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x30, 0x22
	pop %rbp
	.cfi_def_cfa 7, 8
	ret
	.cfi_endproc

	.globl f_outer
	.type f_outer, @function
f_outer:
	.cfi_startproc
	.cfi_undefined 16
	xor %ebp, %ebp
	call f_state
	hlt
	.cfi_endproc
"""

PROG_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}
__attribute__((noinline)) static long work(int n, char **v)
{
	long s = 0;
	qsort(v, (size_t)n, sizeof(*v), cmp);
	for (int i = 0; i < n; i++)
		s += (long)strlen(v[i]) * (i + 1);
	return s;
}
int main(int argc, char **argv)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%ld", work(argc, argv));
	puts(buf);
	return 0;
}
"""


def sections(data):
    """name -> (addr, offset, size) of an ELF64 little-endian file."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    hdrs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
            for i in range(shnum)]
    stroff = hdrs[shstrndx][4]
    out = {}
    for h in hdrs:
        end = data.index(b"\0", stroff + h[0])
        out[data[stroff + h[0]:end].decode()] = (h[3], h[4], h[5])
    return out


def blob(path):
    """The seed bytes of one object: u16 hdr length + hdr .. eh_frame."""
    with open(path, "rb") as f:
        data = f.read()
    s = sections(data)
    ha, ho, hs = s[".eh_frame_hdr"]
    ea, eo, es = s[".eh_frame"]
    if ea < ha or ea - ha != eo - ho or hs > 0xffff:
        raise SystemExit("%s: .eh_frame does not follow .eh_frame_hdr" % path)
    return struct.pack("<H", hs) + data[ho:eo + es]


def build(tmp, name, cmd):
    out = os.path.join(tmp, name)
    subprocess.run(cmd + ["-o", out], check=True)
    return blob(out)


def corrupt(name, good, rng, seeds):
    hlen, = struct.unpack_from("<H", good, 0)
    body = bytearray(good[2:])
    eh = 2 + hlen

    def put(tag, b):
        seeds["bad-%s-%s" % (name, tag)] = bytes(b)

    for frac in (8, 2, 4 / 3):
        put("cut%d" % int(100 / frac), good[:int(len(good) / frac)])
    put("cut-hdr", good[:2 + hlen // 2])
    for region, lo, hi in (("hdr", 2, 2 + min(12, hlen)),
                           ("table", 2 + 12, eh),
                           ("frame", eh, len(good))):
        if hi <= lo:
            continue
        for k in range(3):
            b = bytearray(good)
            for _ in range(1 + k * 4):
                i = rng.randrange(lo, hi)
                b[i] ^= 1 << rng.randrange(8)
            put("flip-%s%d" % (region, k), b)
    # CIE/FDE lengths and CIE pointers: zero, huge, off by a few
    b = bytearray(good)
    struct.pack_into("<I", b, eh, 0xffffffff)
    put("cie-len64", b)
    b = bytearray(good)
    struct.pack_into("<I", b, eh, 0x7fffffff)
    put("cie-len-huge", b)
    off = eh + 4 + struct.unpack_from("<I", good, eh)[0]
    if off + 8 <= len(good):
        for tag, v in (("zero", 0), ("huge", 0x7ffffff0), ("near", 3)):
            b = bytearray(good)
            struct.pack_into("<I", b, off + 4, v)
            put("fde-cieptr-" + tag, b)
        b = bytearray(good)
        struct.pack_into("<I", b, off, 0)
        put("fde-len-zero", b)
    # the table: unsorted, a count past the end, no table
    if hlen >= 28:
        b = bytearray(good)
        b[2 + 12:2 + 20], b[2 + 20:2 + 28] = good[2 + 20:2 + 28], good[2 + 12:2 + 20]
        put("table-unsorted", b)
        b = bytearray(good)
        struct.pack_into("<I", b, 2 + 8, 0x10000000)
        put("table-count-huge", b)
        b = bytearray(good)
        b[2 + 3] = 0xff
        put("table-none", b)
        b = bytearray(good)
        for i in range(2 + 12, eh, 8):
            struct.pack_into("<i", b, i + 4, rng.randrange(-4096, 4096))
        put("table-fde-random", b)
    # the CIE's augmentation, code and data alignment
    b = bytearray(good)
    b[eh + 9:eh + 12] = b"zQ\0"
    put("cie-aug-unknown", b)
    b = bytearray(good)
    b[eh + 8] = 2
    put("cie-version", b)
    del body


def main():
    if not os.path.isdir(OUT):
        raise SystemExit("run from the project root (no %s)" % OUT)
    seeds = {}
    rng = random.Random(16)
    with tempfile.TemporaryDirectory() as tmp:
        s = os.path.join(tmp, "rules.S")
        with open(s, "w") as f:
            f.write(RULES_S)
        c = os.path.join(tmp, "prog.c")
        with open(c, "w") as f:
            f.write(PROG_C)
        seeds["rules"] = build(tmp, "rules.so", ["gcc", "-nostdlib", "-shared",
                                                 "-Wl,--eh-frame-hdr", s])
        for opt in ("-O0", "-O2"):
            seeds["gcc" + opt] = build(tmp, "prog" + opt, [
                "gcc", opt, "-fomit-frame-pointer", c])
        seeds["gcc-O2-fp"] = build(tmp, "progfp", [
            "gcc", "-O2", "-fno-omit-frame-pointer", c])
        try:
            seeds["clang-O2"] = build(tmp, "progclang", [
                "clang", "-O2", "-fomit-frame-pointer", c])
        except (OSError, subprocess.CalledProcessError):
            print("cfi-seeds: no clang, no clang seed", file=sys.stderr)
    for name in ("rules", "gcc-O2"):
        corrupt(name, seeds[name], rng, seeds)
    seeds["bad-empty"] = b""
    seeds["bad-hdr-only"] = seeds["rules"][:2 + 12]
    for f in os.listdir(OUT):
        if f.startswith("seed-"):
            os.unlink(os.path.join(OUT, f))
    for name, data in sorted(seeds.items()):
        with open(os.path.join(OUT, "seed-" + name), "wb") as f:
            f.write(data)
    print("cfi-seeds: %d seeds, %d bytes" % (len(seeds),
                                              sum(map(len, seeds.values()))))


if __name__ == "__main__":
    main()
