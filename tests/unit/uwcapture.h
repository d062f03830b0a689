/*
 * uwcapture.h - uw_capture(), shared by tests/unit/t-unwind.c and the
 * fuzz-unwind seed program (tests/fuzz/seeds/unwind.c, freestanding): both
 * unwind a stack they captured themselves.  Defines the function (a
 * top-level asm block): include it in one translation unit.
 */
#ifndef SYM_TESTS_UWCAPTURE_H
#define SYM_TESTS_UWCAPTURE_H

#include <stdint.h>

/*
 * uw_capture(regs) - store the registers as UNWIND_REGS_MASK packs them,
 * as they are in the caller right after the call returns: IP is the return
 * address, SP the caller's.
 */
void uw_capture(uint64_t *regs);
__asm__(".text\n"
	".globl uw_capture\n"
	".type uw_capture, @function\n"
	"uw_capture:\n"
	".cfi_startproc\n"
	"mov %rax, 0(%rdi)\n"
	"mov %rbx, 8(%rdi)\n"
	"mov %rcx, 16(%rdi)\n"
	"mov %rdx, 24(%rdi)\n"
	"mov %rsi, 32(%rdi)\n"
	"mov %rdi, 40(%rdi)\n"
	"mov %rbp, 48(%rdi)\n"
	"lea 8(%rsp), %rax\n"
	"mov %rax, 56(%rdi)\n"
	"mov (%rsp), %rax\n"
	"mov %rax, 64(%rdi)\n"
	"mov %r8, 72(%rdi)\n"
	"mov %r9, 80(%rdi)\n"
	"mov %r10, 88(%rdi)\n"
	"mov %r11, 96(%rdi)\n"
	"mov %r12, 104(%rdi)\n"
	"mov %r13, 112(%rdi)\n"
	"mov %r14, 120(%rdi)\n"
	"mov %r15, 128(%rdi)\n"
	"mov 0(%rdi), %rax\n"
	"ret\n"
	".cfi_endproc\n"
	".size uw_capture, .-uw_capture\n");

#endif /* SYM_TESTS_UWCAPTURE_H */
