/*
 * vmlinux.h - the few kernel types offcpu.bpf.c reads, for CO-RE
 * (x86-64).  A trimmed copy of what
 *
 *	bpftool btf dump file /sys/kernel/btf/vmlinux format c
 *
 * printed on Debian 12's build machine (kernel 6.18, 2.8 MB in full):
 * only the structs and the fields the program uses, each struct marked
 * preserve_access_index, so that libbpf relocates every field access
 * against the running kernel's BTF at load time.  A field's offset here
 * does not matter; its name and type do.  To add a field, copy its
 * declaration from that dump.  The BPF UAPI (map types, helper flags)
 * comes from linux-libc-dev's <linux/bpf.h>, not from here.
 */
#ifndef SYM_VMLINUX_H
#define SYM_VMLINUX_H

#include <linux/types.h>

typedef __u8 u8;
typedef __u16 u16;
typedef __u32 u32;
typedef __u64 u64;
typedef __s32 s32;
typedef __s64 s64;
typedef _Bool bool;
typedef int pid_t;

#pragma clang attribute push (__attribute__((preserve_access_index)), \
			      apply_to = record)

struct pt_regs {
	long unsigned int r15;
	long unsigned int r14;
	long unsigned int r13;
	long unsigned int r12;
	long unsigned int bp;
	long unsigned int bx;
	long unsigned int r11;
	long unsigned int r10;
	long unsigned int r9;
	long unsigned int r8;
	long unsigned int ax;
	long unsigned int cx;
	long unsigned int dx;
	long unsigned int si;
	long unsigned int di;
	long unsigned int orig_ax;
	long unsigned int ip;
	unsigned short cs;
	long unsigned int flags;
	long unsigned int sp;
	long unsigned int ss;
};

struct mm_struct;

/* (CONFIG_SCHED_INFO: set at every switch-in, traced or not, in the
 * run queue's clock) */
struct sched_info {
	long long unsigned int last_arrival;
};

/* A CPU's run queue, reached from a task through its CFS run queue
 * (CONFIG_FAIR_GROUP_SCHED: cfs_rq.rq). */
struct rq {
	u64 clock;
};

struct cfs_rq {
	struct rq *rq;
};

struct sched_entity {
	struct cfs_rq *cfs_rq;
};

typedef struct {
	int counter;
} atomic_t;

struct signal_struct {
	atomic_t live;		/* threads of the group not yet exiting */
};

struct task_struct {
	unsigned int __state;
	unsigned int flags;
	struct mm_struct *mm;
	pid_t pid;
	pid_t tgid;
	struct sched_entity se;
	struct sched_info sched_info;
	u64 start_time;		/* ktime_get_ns() at fork */
	struct signal_struct *signal;
};

/* Kernels before 5.14 named the state field "state". */
struct task_struct___old {
	long int state;
};

#pragma clang attribute pop

/* PF_KTHREAD of include/linux/sched.h */
#define PF_KTHREAD 0x00200000

#endif
