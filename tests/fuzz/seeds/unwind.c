/*
 * unwind.c - the program behind the fuzz-unwind seeds
 * (tests/fuzz/seeds/unwind-seeds.py): freestanding (-nostdlib -static,
 * its own _start, raw syscalls) so that the binary is a few KB.  It
 * calls a chain whose frames have every shape of CFI the unwinder knows:
 * a frame-pointer frame, a frameless one, a realigned stack (gcc's DRAP:
 * a CFA expression), a variable-sized frame (rbp-based CFA), a signal
 * trampoline (CIE augmentation "S"), and _start (return address
 * undefined); at the bottom it writes its registers (UNWIND_REGS_MASK's
 * order) and its stack up to _start's SP to stdout, and exits.  The seed
 * script puts that together with the binary: a stack that unwinds to
 * _start.
 */
typedef unsigned long u64;

u64 stack_top;
volatile u64 sink;

#include "../../unit/uwcapture.h"

static long sys3(long nr, long a, long b, long c)
{
	long r;

	__asm__ volatile("syscall" : "=a"(r) : "a"(nr), "D"(a), "S"(b),
			 "d"(c) : "rcx", "r11", "memory");
	return r;
}

__attribute__((noinline)) void leaf(void)
{
	u64 regs[17];

	uw_capture(regs);
	sys3(1, 1, (long)regs, sizeof(regs));
	sys3(1, 1, (long)regs[7], (long)(stack_top - regs[7]));
	sys3(60, 0, 0, 0);
}

/* A hand-written signal trampoline's CFI: what libc's __restore_rt has. */
void tramp(void);
__asm__(".text\n"
	".globl tramp\n"
	".type tramp, @function\n"
	".cfi_startproc\n"
	".cfi_signal_frame\n"
	"nop\n"
	"tramp:\n"
	"call leaf\n"
	"ret\n"
	".cfi_endproc\n"
	".size tramp, .-tramp\n");

__attribute__((noinline)) void sized(int n)
{
	volatile char *p = __builtin_alloca((unsigned)n);

	p[0] = 1;
	tramp();
	sink += p[0];
}

__attribute__((noinline)) void realigned(int n)
{
	volatile char buf[64] __attribute__((aligned(64)));

	buf[0] = (char)n;
	sized(n + 40);
	sink += buf[0];
}

__attribute__((noinline, optimize("no-omit-frame-pointer")))
void framed(int n)
{
	realigned(n + 1);
	sink++;
}

__attribute__((noinline, optimize("omit-frame-pointer")))
void frameless(int n)
{
	framed(n + 1);
	sink++;
}

void start_c(u64 *sp)
{
	stack_top = (u64)sp;
	frameless(1);
	sys3(60, 1, 0, 0);
}

__asm__(".text\n"
	".globl _start\n"
	".type _start, @function\n"
	"_start:\n"
	".cfi_startproc\n"
	".cfi_undefined rip\n"
	"xor %ebp, %ebp\n"
	"mov %rsp, %rdi\n"
	"and $-16, %rsp\n"
	"call start_c\n"
	"hlt\n"
	".cfi_endproc\n"
	".size _start, .-_start\n");
