#!/bin/sh
# t0162-kernel-dwarf-local.sh - the kernel conventions of t0161 on files
# built here, offline (docs/design.md, "The kernel" and "Kernel modules"):
#  - a kernel-shaped executable (_text and linux_banner in its .symtab,
#    linked at 0xffffffff81000000 with -mcmodel=kernel): its table is
#    _text-relative and flagged kernel; every instruction start of its
#    .text, at its link-time address (which sym addr2line takes, as every
#    peer does), agrees with llvm-symbolizer on every frame, and the lazy
#    path (no store) answers them as the stored table;
#  - the same program without linux_banner is no kernel: link-time
#    addresses, as any executable;
#  - a kernel whose code starts below its _text is refused, with a message;
#  - module-shaped objects (ET_REL with a .modinfo) with DWARF, from the
#    fuzz seeds' tiny.c (inline chains three deep, a .cold part in
#    .text.unlikely, a function in its own section): x86-64 with DWARF 5
#    and 4, zlib-compressed DWARF, and aarch64 (gcc-aarch64-linux-gnu:
#    R_AARCH64_ABS64/ABS32): every instruction start of .text, as an
#    offset into .text, gets eu-addr2line -f -i -j .text's answer byte for
#    byte (lib/kdwarf_check.py).
. "$(dirname "$0")/lib/lib.sh"
need gcc objcopy objdump nm llvm-symbolizer eu-addr2line python3
CHECK="python3 $SYM_ROOT/tests/e2e/lib/kdwarf_check.py"
TINY=$SYM_ROOT/tests/fuzz/seeds/tiny.c
plan 10
cd "$T" || exit 1

cat > k.c <<'EOF'
__asm__(".text\n.globl _text\n_text:\n");
const char linux_banner[] = "Linux version 0.0.0-t0162 (test)\n";
static volatile int sink;
static inline __attribute__((always_inline)) int leaf(int x)
{
	return x * 7 + linux_banner[x & 15];
}
static inline __attribute__((always_inline)) int middle(int x)
{
	int r = leaf(x + 1);

	if (r & 1)
		r += leaf(r);
	return r;
}
__attribute__((noinline)) int hot(int x)
{
	int l = middle(x) + middle(x * 3);

	sink = l;
	return l;
}
void _start(void)
{
	for (int i = 0; i < 10; i++)
		hot(i);
	for (;;)
		;
}
EOF
KFLAGS="-O2 -g -nostdlib -static -no-pie -fno-pie -mcmodel=kernel \
-fno-asynchronous-unwind-tables -Wl,--build-id=sha1"
# shellcheck disable=SC2086
gcc $KFLAGS -Wl,-Ttext=0xffffffff81000000 -o vmlinux k.c || exit 1
TEXT=$(nm vmlinux | sed -n 's/^\([0-9a-f]*\) T _text$/\1/p')
"$SYM" store add --store st vmlinux > add.out 2>&1
"$SYM" store info --store st "$(cut -d' ' -f1 add.out)" > info.out
is "a kernel's table is flagged (_text at $TEXT)" \
	"$(sed -n 's/^table: *//p' info.out)" "dwarf, kernel (_text offsets)"
oracle_point "kernel-shaped executable: every .text instruction, at its \
link-time address, agrees with llvm-symbolizer" \
	--sample 0 "--ours-opts=--store=st" \
	--threshold 100 -q vmlinux

# The lazy path takes the same link-time addresses.
objdump -d --no-show-raw-insn -j .text vmlinux |
	sed -n 's/^ *\([0-9a-f]*\):\t.*/0x\1/p' > offsets
"$SYM" addr2line --no-cache --lazy=always -f -i -e vmlinux < offsets > lazy.out
"$SYM" addr2line --store st -f -i -e vmlinux < offsets > stored.out
ok "the lazy path answers $(wc -l < offsets) addresses as the stored \
table ($(grep -c ':[1-9]' lazy.out) lines with a line number)" \
	sh -c "cmp -s stored.out lazy.out && grep -q ':[1-9]' lazy.out"

sed 's/linux_banner/not_a_banner/g' k.c > u.c
# shellcheck disable=SC2086
gcc $KFLAGS -Wl,-Ttext=0xffffffff81000000 -o notkernel u.c || exit 1
"$SYM" store add --store st notkernel > add2.out 2>&1
"$SYM" store info --store st "$(cut -d' ' -f1 add2.out)" > info2.out
is "without linux_banner it is no kernel" \
	"$(sed -n 's/^table: *//p' info2.out)" "dwarf"
oracle_point "... and takes link-time addresses, as any executable" \
	--sample 0 "--ours-opts=--no-cache" --threshold 100 -q notkernel

sed 's/^__asm__.*$//' k.c > b.c
# shellcheck disable=SC2086
gcc $KFLAGS -Wl,-Ttext=0xffffffff81000000 \
	-Wl,--defsym=_text=0xffffffff81000010 -o below b.c || exit 1
"$SYM" addr2line --no-cache -f -e below 0x0 > below.out 2> below.err
rc=$?
ok "a kernel with code below its _text is refused (status $rc: \
$(head -1 below.err))" sh -c "[ $rc -ne 0 ] && grep -q 'below its _text' below.err"

# ko NAME BINUTILS_PREFIX OBJ: one point, OBJ with a .modinfo added, its
# .text against eu-addr2line.
ko() {
	printf 'license=GPL\0name=tiny\0' > modinfo
	"${2}objcopy" --add-section .modinfo=modinfo "$3" "$1.ko" || return 1
	"${2}objdump" -d --no-show-raw-insn -j .text "$1.ko" |
		sed -n 's/^ *\([0-9a-f]*\):\t.*/0x\1/p' > "$1.addrs"
	"$SYM" addr2line --no-cache -a -f -i --output-style=elfutils \
		-e "$1.ko" < "$1.addrs" > "$1.sym"
	eu-addr2line -a -f -i -j .text -e "$1.ko" < "$1.addrs" > "$1.eu"
	$CHECK eu "$SYM" "$1.ko" "$1.addrs" "$1.sym" "$1.eu" > "$1.cmp"
	ok "$1: module DWARF at .text offsets is eu-addr2line -j .text's: \
$(head -1 "$1.cmp") ($(grep -c -v '^0x' "$1.sym") frame lines)" \
		$CHECK eu "$SYM" "$1.ko" "$1.addrs" "$1.sym" "$1.eu"
	sed -n '2,$s/^/# /p' "$1.cmp"
}
for v in 5 4; do
	gcc -c -O2 -g -gdwarf-$v -o "t$v.o" "$TINY" && ko "x86-64-dwarf$v" "" "t$v.o"
done
objcopy --compress-debug-sections=zlib t5.o t5z.o && ko x86-64-zlib "" t5z.o
if command -v aarch64-linux-gnu-gcc > /dev/null &&
   command -v aarch64-linux-gnu-objdump > /dev/null &&
   command -v aarch64-linux-gnu-objcopy > /dev/null; then
	# tiny.c without its x86-64 _start (a module has none).
	sed '/noreturn/,$d' "$TINY" > a.c
	aarch64-linux-gnu-gcc -c -O2 -g -o a.o a.c &&
		ko aarch64 aarch64-linux-gnu- a.o
else
	skip "no gcc-aarch64-linux-gnu"
fi
done_testing
