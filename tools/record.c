/*
 * record.c - `sym record`: sample processes with perf events and write
 * unsymbolized raw stacks (docs/raw-format.md) or pprof.
 *
 *	sym record [-F HZ] [-d SECS] [-g fp|dwarf] [-o FILE]
 *		   (-p PID[,PID...] | -a | [--] CMD ARGS...)
 *
 * The design is in docs/record.md; in short:
 * - one cpu-clock event per CPU (and per thread for -p), with inherit for
 *   a command or PIDs, since the kernel refuses to mmap inherited events
 *   opened with cpu = -1; all events of a CPU share that CPU's ring;
 * - each round reads a snapshot of every ring twice: first the side-band
 *   records (MMAP2, COMM, FORK, EXIT), which are sorted by time and applied
 *   to the mapping table (procmaps.c), then the samples, which are turned
 *   into frames of (mapping, ELF virtual address) and aggregated into a
 *   struct sym_prof;
 * - dwarf mode (the default) copies 8 KiB of user stack and unwinds it
 *   here with CFI (unwind.c), which gives whole stacks through code with
 *   or without frame pointers; fp mode takes the kernel's frame-pointer
 *   callchain and repairs its first frame with the leaf's CFI from a
 *   small copy of the user stack;
 * - each stack that is likely wrong gets a flag, counted in the header.
 *
 * Invariants: the profile only ever holds maps that a frame refers to;
 * a map is added to the profile of the current window the first time a
 * frame of that window uses it (pm_map.user_gen == gen).  Memory is
 * bounded by the rings, the live mappings, and the unique stacks of one
 * window (--max-stacks).
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "grow.h"
#include "kallsyms.h"
#include "tools.h"
#include "agent/perf.h"
#include "agent/procmaps.h"
#include "agent/retcheck.h"
#include "agent/fpcheck.h"
#include "agent/jitmap.h"
#include "agent/offcpu.h"
#include "agent/stacklearn.h"
#include "agent/evmemo.h"

#include "agent/unwind.h"
#include "base.h"

#define DEFAULT_HZ 99
#define DEFAULT_HZ_ALL 19
#define MAX_HZ 100000
#define DEFAULT_STACK 8192
#define MAX_STACK 63488		/* a sample record is at most 64 KiB */
#define DEFAULT_LEAF_STACK 512
#define DEFAULT_MAX_STACKS 1000000
#define KERNEL_START 0xffff800000000000ULL
#define POLL_MS 200
/* The stack-extent histograms of dwarf mode: buckets of this many bytes
 * up to MAX_STACK. */
#define EXTENT_BUCKET 64
#define EXTENT_BUCKETS (MAX_STACK / EXTENT_BUCKET + 1)
/* Dead mappings are kept this long after the newest record seen. */
#define GC_SLACK_NS 1000000000ULL

enum cg_mode { CG_FP, CG_DWARF };
enum out_format { FMT_RAW, FMT_PPROF };

struct opts {
	uint64_t hz;
	double duration;
	enum cg_mode cg;
	uint32_t stack_size, leaf_stack;
	const char *output;
	enum out_format format;
	int32_t *pids;
	size_t npids;
	bool all, continuous, user_only, quiet;
	/* --symbolize: each file is written symbolized, through symd
	 * (--server) or the local store (--store, or the default one). */
	bool symbolize;
	struct tool_symbolize_opts sym;
	double rotate;
	unsigned max_depth;
	size_t mmap_pages, max_stacks;
	char **cmd;
	/* --off-cpu: blocked time from sched_switch (agent/offcpu.h). */
	bool off_cpu;
	/* --sched-delay: run-queue delay, through the same agent (off_cpu
	 * is set too once the options are checked). */
	bool sched_delay;
	/* --wall: CPU samples and the off-CPU agent's periods in one
	 * profile, both in ns (off_cpu stays false: the perf events
	 * sample the CPU). */
	bool wall;
	uint64_t min_block, max_block;	/* ns; max 0: no bound */
	double prob;
	/* --aggregate: AGG_* (docs/record.md "Aggregation"); bpf_cpu: CPU
	 * samples from the BPF sampler (--aggregate without --off-cpu or
	 * --sched-delay; with --wall, kernel only: its CPU part). */
	int aggregate;
	bool bpf_cpu;
	/* --upload URL: the run's kallsyms snapshot goes to symd there
	 * once written (--token-file, or $SYM_TOKEN_FILE, $SYM_TOKEN). */
	const char *upload, *token_file;
	/* --fixed-stack: the BPF agent copies the whole --stack-size for
	 * every process, no size learned (agent/stacklearn.h). */
	bool fixed_stack;
};

enum { AGG_NONE, AGG_USER, AGG_KERNEL };

/* One side-band record copied out of a ring for sorting. */
struct sb {
	uint64_t time;
	size_t off;		/* into rec.sb_buf */
	size_t seq;
};

/* A set of int32 ids, for "already added to this window's profile". */
struct idset {
	int32_t *v;		/* open addressing; 0 is empty, ids + 1 */
	size_t cap, n;
};

struct rec {
	struct opts o;
	struct perf_event_attr attr;
	/* attr.build_id is left off: this kernel's would corrupt other
	 * tools' MMAP2 records (perf_build_id_leaks()). */
	bool bid_leaks;
	unsigned nregs;
	int ncpus;
	int *cpus;
	struct perf_ring **rings;	/* one per CPU, fd owned by fds */
	int *fds;
	size_t nfds, capfds;
	pid_t child;
	int child_status;
	/* The soft RLIMIT_NOFILE before it was raised: the command gets it
	 * back. */
	struct rlimit nofile;
	bool nofile_raised;
	bool child_done;
	/* We ended the command (a signal to us, --duration): its status is
	 * not the one to pass on. */
	bool child_killed;

	struct pm *pm;
	struct unwinder *uw;
	struct retcheck *rc;
	/* fp mode: the callchain checks; NULL in dwarf mode. */
	struct fpcheck *fpc;

	/* The current window. */
	struct sym_prof *prof;
	uint64_t gen;
	uint32_t kmap_id;
	uint64_t kmap_gen;
	/* The window that last had a kernel frame (the kernel's map or a
	 * module's): it gets the kallsyms snapshot. */
	uint64_t kany_gen;
	/* The modules loaded at the start (ksnap_kmods_take()), each with
	 * its map in the window kmod_gen[i] (ksnap_kmod_map()); free(). */
	struct ksnap_kmod *kmods;
	size_t nkmods;
	uint32_t *kmod_id;
	uint64_t *kmod_gen;
	struct idset procs, threads;
	int64_t win_start_real;
	uint64_t win_start_mono;
	uint64_t samples, lost, throttled, dropped;
	uint64_t flagged[SYM_PROF_NFLAGS];
	unsigned seq;		/* file number of --continuous */

	/* Whole-run counters. */
	uint64_t total_flags[SYM_PROF_NFLAGS], total_throttled,
		 total_dropped;
	uint64_t total_samples, total_lost, total_flagged, unmapped_leaf,
		 repaired, bad_records, not_after_call;
	/* fp mode: chains that end short of an outermost frame, that go
	 * through a frame without a frame pointer, and frames dropped past
	 * an outermost frame. */
	uint64_t fp_incomplete, fp_unsound, fp_past_outermost;
	/* JIT frames (last window): unique anonymous frames, and those
	 * named from perf maps or jitdumps. */
	uint64_t jit_frames, jit_named;
	/* The processes of this window: start and owner, kept when first
	 * seen (a process may be gone, and forgotten, when the window
	 * ends: its perf map is checked against them). */
	struct jit_proc {
		int32_t pid;
		uint32_t uid;
		int64_t start_ns;
		char *jitdump;		/* its path, or NULL; free() */
		int32_t jitdump_pid;
	} *jprocs;
	size_t njprocs, capjprocs;
	/* dwarf mode, whole stacks: the stack copy they needed, in
	 * EXTENT_BUCKET-byte buckets (unwinder_last_extent()): to the
	 * outermost frame, and to the last frame without a frame pointer. */
	uint64_t extent_used[EXTENT_BUCKETS], extent_nofp[EXTENT_BUCKETS];
	uint64_t max_time;
	/* Thread CPU time spent in round_once(): the per-sample cost. */
	uint64_t round_ns;
	char kernel_bid[2 * PM_BUILD_ID_MAX + 1];
	/* The running kernel's _text (ksnap_text_here()), the kernel map's
	 * PGOFF; 0 when hidden. */
	uint64_t ktext;
	/* The kallsyms snapshot (kallsyms.h), taken by ksnap_thread from
	 * the start (reading /proc/kallsyms takes 0.2 s: not in the loop),
	 * joined at the first window with kernel frames; free(). */
	char *ksnap;
	size_t ksnap_len;
	int ksnap_err;
	pthread_t ksnap_thread;
	bool ksnap_started, ksnap_joined, ksnap_done;
	/* FILE.kallsyms paths still to write (free()), and the first one
	 * written, which the next ones link to (free()). */
	char *ksnap_owed[16];
	size_t ksnap_nowed;
	char *ksnap_first;
	/* --upload: tried (once), and how it went. */
	bool uploaded;
	int upload_err;
	char host[256];
	/* This kernel's release (uname -r), written in every profile's
	 * header: kernel debug files are looked up by name for it. */
	char release[65];
	uint64_t pidns;

	unsigned char *sb_buf;
	size_t sb_len, sb_cap;
	struct sb *sbs;
	size_t nsbs, capsbs;
	size_t ring_idx;

	/* Scratch for one sample. */
	struct sym_prof_frame frames[SYM_PROF_MAX_FRAMES];
	uint64_t pcs[SYM_PROF_MAX_FRAMES];
	unsigned char exact[SYM_PROF_MAX_FRAMES];

	/* --off-cpu: the BPF agent, and its counters at the window's start
	 * and at the last look. */
	struct offcpu *oc;
	uint64_t oc_base[OFFCPU_NCNT], oc_now[OFFCPU_NCNT];
	/* --aggregate kernel: events on unflagged (whole) stacks. */
	uint64_t agg_whole;
	/* Side-band re-reads in this drain (sb_catch_up()), and the
	 * CLOCK_MONOTONIC time the side-band was last read at (0 when perf's
	 * clock is not CLOCK_MONOTONIC, so that no event is older). */
	unsigned catchups;
	uint64_t sb_horizon;
	/* Events whose stack ran off a copy of its process's learned size
	 * (flagged unwind; offcpu_stack_seen()). */
	uint64_t stack_cut;
	/* CFI unwinds by how they stopped short (enum unwind_stop: NOMAP
	 * to BADCFI), and mappings the unwinder was refused, with the
	 * last error and path: what a stack flagged unwind says more. */
	uint64_t uw_stops[UNWIND_STOP_BADCFI + 1];
	uint64_t uw_map_failed;
	int uw_map_err;
	char uw_map_path[96];
	/* The off-CPU events' resolved frames (agent/evmemo.h): kernel
	 * stacks, user stacks; NULL when off.  SYM_EVMEMO=off turns them
	 * off, =check resolves every event the memos answer as well and
	 * counts the answers that differ (em_bad, of em_checked). */
	struct evmemo *em_k, *em_u;
	bool em_check;
	/* (pid, tid) pairs prof_task() found both in this window's procs
	 * and threads (window r->gen), a slot by tid: nothing to add. */
	struct named { int32_t pid, tid; uint64_t gen; } named[64];
	uint64_t em_checked, em_bad;
	uint64_t em_key[EVMEMO_KEY_MAX];
};

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t child_exited;

static void on_stop(int sig)
{
	stop_signal = sig;
}

static void on_chld(int sig)
{
	(void)sig;
	child_exited = 1;
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: sym record [options] (-p PID[,PID...] | -a | [--] CMD [ARGS...])\n"
"\n"
"Sample processes on the cpu-clock perf event and write unsymbolized raw\n"
"stacks: each frame is a GNU build ID and an ELF virtual address, nothing\n"
"is symbolized here (docs/raw-format.md, docs/record.md).\n"
"\n"
"What to sample:\n"
"  CMD [ARGS...]          run CMD and sample it, its threads and children\n"
"  -p, --pid PID,...      sample running processes (all their threads, and\n"
"                         what they start afterwards)\n"
"  -a, --all-cpus         sample the whole machine\n"
"\n"
"How:\n"
"  -F, --freq HZ          samples per second per CPU (99; 19 with -a)\n"
"  -g, --call-graph MODE  dwarf (default): copy the user stack and unwind\n"
"                         it here with the CFI of every frame, whole\n"
"                         stacks whether or not the code keeps frame\n"
"                         pointers; fp: the kernel's frame-pointer chains,\n"
"                         the leaf repaired and every frame checked with\n"
"                         CFI, cheaper, whole only for code built with\n"
"                         frame pointers (the others are flagged)\n"
"      --stack-size BYTES user stack copied per sample in dwarf mode (8192)\n"
"      --leaf-stack-size BYTES  stack copied in fp mode for the leaf\n"
"                         repair (512; 0 turns the repair off and flags\n"
"                         every stack 'leaf')\n"
"      --max-depth N      frames per stack (127)\n"
"      --user-only        no kernel frames (and no samples in the kernel)\n"
"      --mmap-pages N     ring buffer pages per CPU, a power of two\n"
"\n"
"Off-CPU (blocked time, eBPF; root or CAP_BPF + CAP_PERFMON):\n"
"      --off-cpu          instead of CPU samples, the time each thread\n"
"                         spends switched out (sleeping, blocked, or\n"
"                         preempted), with its whole user stack (copied\n"
"                         at switch-out, unwound with CFI) and kernel\n"
"                         stack; weights in ns, value types off-cpu and\n"
"                         off-cpu-S, -D, -R by state\n"
"      --min-block TIME   only blocks of at least TIME (1ns; 10us, 2ms, 1s;\n"
"      --max-block TIME   a plain number is microseconds), at most TIME\n"
"      --sample-prob P    record a switch-out with probability P (1)\n"
"      --sched-delay      instead, run-queue delay: the time each thread\n"
"                         is runnable but not running (from wake-up or\n"
"                         preemption to switch-in), with the stack it\n"
"                         resumes at; value types sched-delay and\n"
"                         sched-delay-woken, -preempted (the options above\n"
"                         apply to the delays)\n"
"      --wall             CPU samples (-F) and off-CPU periods in one\n"
"                         profile, both in ns: value types wall, cpu,\n"
"                         off-cpu; a thread's shares of its wall time add\n"
"                         up (--min-block, --max-block apply to off-CPU)\n"
"      --aggregate MODE   the eBPF agent's aggregation: user ships raw\n"
"                         events (stack copies, unwound here with CFI)\n"
"                         through the BPF ring buffer; kernel sums them in\n"
"                         BPF maps by a hash of a frame-pointer stack\n"
"                         (collisions counted, never merged); with\n"
"                         --off-cpu, --sched-delay or --wall too.  Without\n"
"                         them: CPU samples from a BPF perf_event program\n"
"                         at -F instead of the perf rings (--wall kernel:\n"
"                         its CPU part too)\n"
"      --fixed-stack      the eBPF agent copies the whole --stack-size at\n"
"                         every event, instead of each process's size\n"
"                         learned from its unwinds (stacks that run off a\n"
"                         learned size are flagged unwind and counted)\n"
"\n"
"Until when:\n"
"  -d, --duration SECS    stop after SECS (with CMD, CMD gets SIGTERM)\n"
"                         otherwise at SIGINT or SIGTERM, or when CMD ends\n"
"      --continuous       run until SIGINT/SIGTERM, writing a file every\n"
"      --rotate SECS      SECS (60); see -o for names\n"
"\n"
"Output:\n"
"  -o, --output FILE      where to write (sym.raw); written to a temporary\n"
"                         file and renamed, so FILE is always complete.\n"
"                         With --continuous, %%n in FILE is replaced by the\n"
"                         file number and %%t by the window's start time\n"
"                         (UTC, 20261130T172115Z); without them each file\n"
"                         replaces the previous one\n"
"      --format FMT       raw (default) or pprof (gzipped profile.proto)\n"
"      --symbolize        write it symbolized (functions, files, lines;\n"
"                         as sym symbolize does, once the window ends):\n"
"                         pprof -top then names the functions\n"
"      --server URL       ... through symd at URL\n"
"      --store DIR        ... or the local store DIR (default: SYM_STORE,\n"
"                         ~/.cache/sym)\n"
"      --wait-ms MS       how long symd may keep a build ID pending\n"
"      --kallsyms FILE    kernel frames from this kallsyms snapshot\n"
"      --debuginfo-path DIRS  debug directories searched before\n"
"                         /usr/lib/debug (sym symbolize's)\n"
"      --upload URL       send the kallsyms snapshot written beside the\n"
"                         profile to symd at URL once (as sym upload\n"
"                         --kallsyms), so that symd names its kernel and\n"
"                         module frames on any host\n"
"      --token-file FILE  --upload's token (default: $SYM_TOKEN_FILE's,\n"
"                         else $SYM_TOKEN)\n"
"      --max-stacks N     with --continuous, a window that reaches N\n"
"                         unique stacks (1000000) is written early\n"
"  -q, --quiet            no summary on stderr\n"
"\n"
"Stacks that are likely wrong are flagged and counted in the file's header:\n"
"truncated, badreturn, leaf, unwind, kernel.  Needs CAP_PERFMON (or root)\n"
"or a low kernel.perf_event_paranoid.\n"
"\n"
"Exit status: the command's when it ended by itself (128 + N for signal\n"
"N), so a script sees what it would see without the recorder; otherwise 0\n"
"(also at SIGINT, SIGTERM or --duration), 1 on failure, 2 on a usage\n"
"error.  See sym(1) and docs/record.md.\n");
}

/* ---- option parsing ---- */

static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s[0] || s[0] == '-' || s[0] == '+' || s[0] == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_secs(const char *s, double *out)
{
	char *end;
	double v;

	if (!s[0] || s[0] == ' ')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(v > 0) || v > 1e9 || isnan(v))
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_pids(struct opts *o, const char *arg)
{
	const char *p = arg;
	char buf[32];
	size_t len;
	uint64_t v;
	int32_t *a;

	while (*p) {
		len = strcspn(p, ",");
		if (len == 0 || len >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, p, len);
		buf[len] = '\0';
		if (parse_u64(buf, 1, INT32_MAX, &v))
			return -EINVAL;
		a = realloc(o->pids, (o->npids + 1) * sizeof(*a));
		if (!a)
			return -ENOMEM;
		o->pids = a;
		o->pids[o->npids++] = (int32_t)v;
		p += len;
		if (*p == ',') {
			p++;
			if (!*p)
				return -EINVAL;
		}
	}
	return 0;
}

enum {
	OPT_STACK_SIZE = 256, OPT_LEAF_STACK, OPT_MAX_DEPTH, OPT_USER_ONLY,
	OPT_MMAP_PAGES, OPT_CONTINUOUS, OPT_ROTATE, OPT_FORMAT,
	OPT_MAX_STACKS, OPT_SYMBOLIZE, OPT_OFF_CPU, OPT_MIN_BLOCK,
	OPT_MAX_BLOCK, OPT_SAMPLE_PROB, OPT_SCHED_DELAY, OPT_WALL,
	OPT_AGGREGATE, OPT_UPLOAD, OPT_TOKEN_FILE, OPT_FIXED_STACK,
};

/* Apply one of the short options (and -h, and what getopt rejected).
 * Returns 0, 1 after --help, or an error said on stderr. */
static int short_opt(struct opts *o, int c, const char *arg)
{
	int err;

	switch (c) {
	case 'F':
		if (parse_u64(arg, 1, MAX_HZ, &o->hz)) {
			tool_err("-F: '%s' is not a frequency from 1 to %d Hz",
				 arg, MAX_HZ);
			return -EINVAL;
		}
		return 0;
	case 'd':
		if (parse_secs(arg, &o->duration)) {
			tool_err("--duration: '%s' is not a positive number "
				 "of seconds", arg);
			return -EINVAL;
		}
		return 0;
	case 'g':
		if (strcmp(arg, "fp") == 0) {
			o->cg = CG_FP;
		} else if (strcmp(arg, "dwarf") == 0) {
			o->cg = CG_DWARF;
		} else {
			tool_err("--call-graph: '%s' is neither 'fp' nor "
				 "'dwarf'", arg);
			return -EINVAL;
		}
		return 0;
	case 'o':
		if (!arg[0]) {
			tool_err("--output: empty file name");
			return -EINVAL;
		}
		o->output = arg;
		return 0;
	case 'p':
		err = parse_pids(o, arg);
		if (err)
			tool_err("--pid: '%s' is not a list of PIDs", arg);
		return err;
	case 'a':
		o->all = true;
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	case 'h':
		usage(stdout);
		return 1;
	default:
		usage(stderr);
		return -EINVAL;
	}
}

/* A size in bytes from @lo to MAX_STACK, rounded up to 8. */
static int stack_opt(const char *name, const char *arg, uint64_t lo,
		     uint32_t *out)
{
	uint64_t v;

	if (parse_u64(arg, lo, MAX_STACK, &v)) {
		tool_err("--%s: '%s' is not from %d to %d bytes", name, arg,
			 (int)lo, MAX_STACK);
		return -EINVAL;
	}
	*out = (uint32_t)((v + 7) & ~7ULL);
	return 0;
}

/* A duration with a unit (ns, us, ms, s; none: us) in ns. */
static int parse_dur(const char *name, const char *s, uint64_t *out)
{
	static const struct { const char *u; double mul; } units[] = {
		{ "", 1e3 }, { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 },
		{ "s", 1e9 },
	};
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	for (size_t i = 0; end != s && !errno && v >= 0 && v < 1e12 &&
			   i < sizeof(units) / sizeof(*units); i++) {
		if (strcmp(end, units[i].u) == 0) {
			*out = (uint64_t)(v * units[i].mul + 0.5);
			return 0;
		}
	}
	tool_err("--%s: '%s' is not a time (10us, 2ms, 1s; a plain number "
		 "is microseconds)", name, s);
	return -EINVAL;
}

/* The off-CPU options of long_opt(). */
static int offcpu_opt(struct opts *o, int c, const char *arg)
{
	char *end;

	switch (c) {
	case OPT_OFF_CPU:
		o->off_cpu = true;
		return 0;
	case OPT_SCHED_DELAY:
		o->sched_delay = true;
		return 0;
	case OPT_WALL:
		o->wall = true;
		return 0;
	case OPT_FIXED_STACK:
		o->fixed_stack = true;
		return 0;
	case OPT_MIN_BLOCK:
		return parse_dur("min-block", arg, &o->min_block);
	case OPT_MAX_BLOCK:
		return parse_dur("max-block", arg, &o->max_block);
	case OPT_AGGREGATE:
		if (strcmp(arg, "kernel") == 0 || strcmp(arg, "user") == 0)
			o->aggregate = arg[0] == 'k' ? AGG_KERNEL : AGG_USER;
		else
			tool_err("--aggregate: '%s' is neither 'kernel' nor "
				 "'user'", arg);
		return o->aggregate ? 0 : -EINVAL;
	default:
		errno = 0;
		o->prob = strtod(arg, &end);
		if (errno || end == arg || *end || !(o->prob > 0) ||
		    o->prob > 1) {
			tool_err("--sample-prob: '%s' is not in (0, 1]", arg);
			return -EINVAL;
		}
		return 0;
	}
}

/* Apply one of the long-only options.  Returns 0 or an error said on
 * stderr. */
static int long_opt(struct opts *o, int c, const char *arg)
{
	uint64_t v;

	switch (c) {
	case OPT_STACK_SIZE:
		return stack_opt("stack-size", arg, 8, &o->stack_size);
	case OPT_LEAF_STACK:
		return stack_opt("leaf-stack-size", arg, 0, &o->leaf_stack);
	case OPT_MAX_DEPTH:
		if (parse_u64(arg, 1, SYM_PROF_MAX_FRAMES - 1, &v)) {
			tool_err("--max-depth: '%s' is not from 1 to %d", arg,
				 SYM_PROF_MAX_FRAMES - 1);
			return -EINVAL;
		}
		o->max_depth = (unsigned)v;
		return 0;
	case OPT_USER_ONLY:
		o->user_only = true;
		return 0;
	case OPT_MMAP_PAGES:
		if (parse_u64(arg, 1, 1 << 20, &v) || (v & (v - 1))) {
			tool_err("--mmap-pages: '%s' is not a power of two",
				 arg);
			return -EINVAL;
		}
		o->mmap_pages = v;
		return 0;
	case OPT_CONTINUOUS:
		o->continuous = true;
		return 0;
	case OPT_ROTATE:
		if (parse_secs(arg, &o->rotate)) {
			tool_err("--rotate: '%s' is not a positive number of "
				 "seconds", arg);
			return -EINVAL;
		}
		return 0;
	case OPT_FORMAT:
		if (strcmp(arg, "raw") == 0) {
			o->format = FMT_RAW;
		} else if (strcmp(arg, "pprof") == 0) {
			o->format = FMT_PPROF;
		} else {
			tool_err("--format: '%s' is neither 'raw' nor 'pprof'",
				 arg);
			return -EINVAL;
		}
		return 0;
	case OPT_SYMBOLIZE:
		o->symbolize = true;
		return 0;
	case OPT_UPLOAD:
		if (strncmp(arg, "http://", 7) && strncmp(arg, "https://", 8)) {
			tool_err("--upload: '%s' is not an http:// or https:// "
				 "URL", arg);
			return -EINVAL;
		}
		o->upload = arg;
		return 0;
	case OPT_TOKEN_FILE:
		o->token_file = arg;
		return 0;
	case OPT_OFF_CPU:
	case OPT_MIN_BLOCK:
	case OPT_MAX_BLOCK:
	case OPT_SAMPLE_PROB:
	case OPT_SCHED_DELAY:
	case OPT_WALL:
	case OPT_AGGREGATE:
	case OPT_FIXED_STACK:
		return offcpu_opt(o, c, arg);
	case OPT_MAX_STACKS:
		if (parse_u64(arg, 1, 1 << 24, &v)) {
			tool_err("--max-stacks: '%s' is not from 1 to %d", arg,
				 1 << 24);
			return -EINVAL;
		}
		o->max_stacks = v;
		return 0;
	default:
		if (tool_symbolize_getopt(c, arg, &o->sym) > 0)
			return 0;
		usage(stderr);
		return -EINVAL;
	}
}

/* --aggregate with the others (after --off-cpu and --sched-delay are
 * merged). */
static int check_aggregate(struct opts *o)
{
	if (!o->aggregate)
		return 0;
	/* (--wall user: its CPU part through the perf rings, as without
	 * --aggregate; --wall kernel: through the BPF sampler, into the
	 * maps its off-CPU part sums into) */
	o->bpf_cpu = !o->off_cpu && (!o->wall || o->aggregate == AGG_KERNEL);
	if (o->bpf_cpu && (o->cg == CG_FP ||
			   o->stack_size > OFFCPU_STACK_MAX)) {
		tool_err("--aggregate samples CPUs in BPF: no -g fp (user: the "
			 "stack is unwound with CFI, kernel: by frame pointers "
			 "in BPF), and --stack-size up to %d",
			 OFFCPU_STACK_MAX);
		return -EINVAL;
	}
	return 0;
}

/* The options together, and the defaults that depend on others. */
static int check_opts(struct opts *o)
{
	if ((o->cmd != NULL) + (o->npids > 0) + o->all != 1) {
		tool_err("say what to sample: a command, -p PID or -a (one "
			 "of them)");
		return -EINVAL;
	}
	if (o->rotate > 0 && !o->continuous) {
		tool_err("--rotate needs --continuous");
		return -EINVAL;
	}
	if (o->continuous && o->rotate == 0)
		o->rotate = 60;
	if (o->continuous && o->duration > 0) {
		tool_err("--continuous runs until stopped: no --duration");
		return -EINVAL;
	}
	if (o->token_file && !o->upload) {
		tool_err("--token-file is --upload's token: add --upload");
		return -EINVAL;
	}
	if (o->upload && o->user_only) {
		tool_err("--upload sends the kernel's symbols: not with "
			 "--user-only");
		return -EINVAL;
	}
	if ((o->sym.server || o->sym.store_dir) && !o->symbolize) {
		tool_err("--server and --store say how to symbolize: add "
			 "--symbolize");
		return -EINVAL;
	}
	if (o->off_cpu && o->sched_delay) {
		tool_err("--off-cpu and --sched-delay exclude each other");
		return -EINVAL;
	}
	if (o->wall && (o->off_cpu || o->sched_delay || o->prob ||
			o->stack_size > OFFCPU_STACK_MAX)) {
		tool_err("--wall excludes --off-cpu, --sched-delay and "
			 "--sample-prob (CPU samples are not drawn with it), "
			 "and takes a --stack-size up to %d", OFFCPU_STACK_MAX);
		return -EINVAL;
	}
	o->off_cpu = o->off_cpu || o->sched_delay;
	if (!o->off_cpu && !o->wall &&
	    (o->min_block || o->max_block || o->prob)) {
		tool_err("--min-block, --max-block and --sample-prob need "
			 "--off-cpu or --sched-delay");
		return -EINVAL;
	}
	if (o->max_block && o->max_block < o->min_block) {
		tool_err("--max-block is below --min-block");
		return -EINVAL;
	}
	if (o->off_cpu && (o->hz || o->cg == CG_FP ||
			   o->stack_size > OFFCPU_STACK_MAX)) {
		tool_err("--off-cpu and --sched-delay take no -F or -g fp (they "
			 "record every "
			 "switch and unwinds with CFI), and --stack-size up to "
			 "%d", OFFCPU_STACK_MAX);
		return -EINVAL;
	}
	if (check_aggregate(o))
		return -EINVAL;
	if (o->fixed_stack && (o->aggregate == AGG_KERNEL ||
			       (!o->off_cpu && !o->wall && !o->bpf_cpu))) {
		tool_err("--fixed-stack is for the eBPF agent's stack copies: "
			 "--off-cpu, --sched-delay, --wall or --aggregate user");
		return -EINVAL;
	}
	if (o->sym.server && o->sym.store_dir) {
		tool_err("--server and --store exclude each other");
		return -EINVAL;
	}
	o->sym.quiet = o->quiet;
	if (!o->hz)
		o->hz = o->all ? DEFAULT_HZ_ALL : DEFAULT_HZ;
	if (!o->output)
		o->output = o->format == FMT_PPROF ? "sym.pb.gz" : "sym.raw";
	if (o->cg == CG_FP && o->max_depth > 127)
		o->max_depth = 127;
	return 0;
}

/* Read the command line into @o (zeroed).  Returns 0, 1 after --help,
 * or an error said on stderr. */
static int parse_opts(struct opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "freq", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "call-graph", required_argument, NULL, 'g' },
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "stack-size", required_argument, NULL, OPT_STACK_SIZE },
		{ "leaf-stack-size", required_argument, NULL, OPT_LEAF_STACK },
		{ "max-depth", required_argument, NULL, OPT_MAX_DEPTH },
		{ "user-only", no_argument, NULL, OPT_USER_ONLY },
		{ "mmap-pages", required_argument, NULL, OPT_MMAP_PAGES },
		{ "continuous", no_argument, NULL, OPT_CONTINUOUS },
		{ "rotate", required_argument, NULL, OPT_ROTATE },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "max-stacks", required_argument, NULL, OPT_MAX_STACKS },
		{ "symbolize", no_argument, NULL, OPT_SYMBOLIZE },
		{ "off-cpu", no_argument, NULL, OPT_OFF_CPU },
		{ "min-block", required_argument, NULL, OPT_MIN_BLOCK },
		{ "max-block", required_argument, NULL, OPT_MAX_BLOCK },
		{ "sample-prob", required_argument, NULL, OPT_SAMPLE_PROB },
		{ "sched-delay", no_argument, NULL, OPT_SCHED_DELAY },
		{ "wall", no_argument, NULL, OPT_WALL },
		{ "aggregate", required_argument, NULL, OPT_AGGREGATE },
		{ "upload", required_argument, NULL, OPT_UPLOAD },
		{ "token-file", required_argument, NULL, OPT_TOKEN_FILE },
		{ "fixed-stack", no_argument, NULL, OPT_FIXED_STACK },
		TOOL_SYMBOLIZE_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	int c, err;

	/* o->hz and o->output stay 0 until set: check_opts() then picks
	 * the defaults. */
	o->cg = CG_DWARF;
	o->stack_size = DEFAULT_STACK;
	o->leaf_stack = DEFAULT_LEAF_STACK;
	o->max_depth = 127;
	o->max_stacks = DEFAULT_MAX_STACKS;
	o->sym.wait_ms = 30000;
	/* '+': the command's own options are not ours. */
	while ((c = getopt_long(argc, argv, "+F:d:g:o:p:aqh", longopts,
				NULL)) != -1) {
		err = c >= OPT_STACK_SIZE ? long_opt(o, c, optarg) :
					    short_opt(o, c, optarg);
		if (err)
			return err;
	}
	if (optind < argc)
		o->cmd = argv + optind;
	return check_opts(o);
}

/* ---- small containers ---- */

static bool idset_add(struct idset *s, int32_t id)
{
	size_t i, cap, j;
	int32_t *v, key = id + 1;

	if (key == 0)
		key = INT32_MIN;	/* id -1 never occurs; keep 0 = empty */
	if ((s->n + 1) * 2 > s->cap) {
		cap = s->cap ? s->cap * 2 : 64;
		v = calloc(cap, sizeof(*v));
		if (!v)
			return false;
		for (i = 0; i < s->cap; i++) {
			if (!s->v[i])
				continue;
			j = ((uint32_t)s->v[i] * 2654435761u) & (cap - 1);
			while (v[j])
				j = (j + 1) & (cap - 1);
			v[j] = s->v[i];
		}
		free(s->v);
		s->v = v;
		s->cap = cap;
	}
	j = ((uint32_t)key * 2654435761u) & (s->cap - 1);
	while (s->v[j]) {
		if (s->v[j] == key)
			return false;
		j = (j + 1) & (s->cap - 1);
	}
	s->v[j] = key;
	s->n++;
	return true;
}

static bool idset_has(const struct idset *s, int32_t id)
{
	int32_t key = id + 1;
	size_t j;

	if (!s->cap)
		return false;
	if (key == 0)
		key = INT32_MIN;
	j = ((uint32_t)key * 2654435761u) & (s->cap - 1);
	while (s->v[j]) {
		if (s->v[j] == key)
			return true;
		j = (j + 1) & (s->cap - 1);
	}
	return false;
}

static void idset_release(struct idset *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* ---- unwinder hooks (procmaps.c calls them) ---- */

static void hook_map(void *ctx, const struct pm_map *m)
{
	struct rec *r = ctx;
	struct unwind_map um;
	int err;

	if (!r->uw || (m->kind != PM_FILE && m->kind != PM_VDSO))
		return;
	um.start = m->start;
	um.end = m->end;
	um.pgoff = m->pgoff;
	um.path = m->open_path ? m->open_path : m->path;
	um.build_id = m->build_id[0] ? m->build_id : NULL;
	err = unwinder_map(r->uw, m->pid, &um);
	if (err) {
		r->uw_map_failed++;
		r->uw_map_err = err;
		snprintf(r->uw_map_path, sizeof(r->uw_map_path), "%s",
			 um.path);
	}
}

/* Count how a CFI unwind stopped short of the outermost frame. */
static void count_stop(struct rec *r, int stopped)
{
	if (stopped > UNWIND_STOP_NONE && stopped <= UNWIND_STOP_BADCFI)
		r->uw_stops[stopped]++;
}

static void hook_unmap(void *ctx, int32_t pid, uint64_t start, uint64_t end)
{
	struct rec *r = ctx;

	if (r->uw)
		unwinder_unmap(r->uw, pid, start, end);
}

static void hook_forget(void *ctx, int32_t pid)
{
	struct rec *r = ctx;

	if (r->uw)
		unwinder_forget(r->uw, pid);
	offcpu_forget_pid(r->oc, pid);
}

/* ---- the profile of the current window ---- */

/* --off-cpu's value types: all the blocked time, then by state at
 * switch-out (OFFCPU_STATE_S, _D, _R; "other" counts in the first only). */
static const char *const offcpu_types[] = {
	"off-cpu", "off-cpu-S", "off-cpu-D", "off-cpu-R",
};
static const char *const offcpu_units[] = {
	"nanoseconds", "nanoseconds", "nanoseconds", "nanoseconds",
};
/* --sched-delay's: all the delay, then after a wake-up, after a
 * preemption. */
static const char *const delay_types[] = {
	"sched-delay", "sched-delay-woken", "sched-delay-preempted",
};

/* --wall's: the sum, then the CPU samples' periods, the off-CPU time. */
static const char *const wall_types[] = { "wall", "cpu", "off-cpu" };

static int set_value_types(struct rec *r)
{
	if (r->o.wall)
		return sym_prof_set_value_types(r->prof, wall_types,
						offcpu_units, 3);
	if (r->o.sched_delay)
		return sym_prof_set_value_types(r->prof, delay_types,
						offcpu_units, 3);
	if (r->o.off_cpu)
		return sym_prof_set_value_types(r->prof, offcpu_types,
						offcpu_units, 4);
	return 0;
}

static void jit_procs_clear(struct rec *r);

static int new_window(struct rec *r)
{
	int err;

	sym_prof_free(r->prof);
	r->prof = NULL;
	err = sym_prof_new(&r->prof);
	if (err)
		return err;
	r->gen++;
	idset_release(&r->procs);
	idset_release(&r->threads);
	jit_procs_clear(r);
	r->samples = r->lost = r->throttled = r->dropped = 0;
	memset(r->flagged, 0, sizeof(r->flagged));
	r->win_start_real = (int64_t)now_ns(CLOCK_REALTIME);
	r->win_start_mono = now_ns(CLOCK_MONOTONIC);
	memcpy(r->oc_base, r->oc_now, sizeof(r->oc_base));
	return set_value_types(r);
}

/* The profile's id of mapping @m, adding it to this window first. */
static int prof_map(struct rec *r, struct pm_map *m, uint32_t *id)
{
	struct sym_prof_map pm;
	int err;

	if (m->user_gen == r->gen) {
		*id = m->user_id;
		return 0;
	}
	memset(&pm, 0, sizeof(pm));
	pm.kind = m->kind;
	pm.pid = m->pid;
	pm.start = m->start;
	pm.end = m->end;
	pm.pgoff = m->pgoff;
	pm.vaddr = m->vaddr;
	if (!m->vaddr_known && m->kind == PM_FILE)
		pm.flags = SYM_PROF_MAP_VADDR_GUESSED;
	pm.build_id = m->build_id[0] ? m->build_id : NULL;
	pm.path = m->path;
	if (m->kind == PM_ANON)
		pm.path = NULL;
	err = sym_prof_add_map(r->prof, &pm, id);
	if (err == -EINVAL && pm.build_id) {
		/* An odd build ID (odd length, too long): drop it. */
		pm.build_id = NULL;
		err = sym_prof_add_map(r->prof, &pm, id);
	}
	if (err)
		return err;
	m->user_id = *id;
	m->user_gen = r->gen;
	return 0;
}

/* The map of loaded module @i, added at its first frame of the window;
 * -ENOENT when it has none (no build ID: its frames go in the kernel's,
 * named by the snapshot). */
static int prof_kmod_map(struct rec *r, size_t i, uint32_t *id)
{
	struct sym_prof_map pm;
	char path[64];
	int err;

	if (r->kmod_gen[i] == r->gen) {
		*id = r->kmod_id[i];
		return 0;
	}
	if (!ksnap_kmod_map(&r->kmods[i], &pm, path, sizeof(path)))
		return -ENOENT;
	err = sym_prof_add_map(r->prof, &pm, id);
	if (err)
		return err;
	r->kmod_id[i] = *id;
	r->kmod_gen[i] = r->gen;
	return 0;
}

/*
 * prof_kernel_map() - the map of kernel address @addr: its module's
 * when it lies in a module loaded at the start that has a build ID and
 * a .text address (docs/raw-format.md: a map per module, under the
 * module's build ID, so that symd names it from the module's .ko or
 * snapshot part), else the kernel's.  Each is added once a window.
 */
static int prof_kernel_map(struct rec *r, uint64_t addr, uint32_t *id)
{
	const struct ksnap_kmod *km;
	struct sym_prof_map pm;
	int err;

	r->kany_gen = r->gen;
	km = r->nkmods ? ksnap_kmod_find(r->kmods, r->nkmods, addr) : NULL;
	if (km) {
		err = prof_kmod_map(r, (size_t)(km - r->kmods), id);
		if (err != -ENOENT)
			return err;
	}
	if (r->kmap_gen == r->gen) {
		*id = r->kmap_id;
		return 0;
	}
	memset(&pm, 0, sizeof(pm));
	pm.kind = SYM_PROF_MAP_KERNEL;
	pm.pid = -1;
	pm.start = KERNEL_START;
	pm.end = UINT64_MAX;
	pm.vaddr = KERNEL_START;
	pm.pgoff = r->ktext;
	pm.build_id = r->kernel_bid[0] ? r->kernel_bid : NULL;
	pm.path = "[kernel.kallsyms]";
	err = sym_prof_add_map(r->prof, &pm, id);
	if (err)
		return err;
	r->kmap_id = *id;
	r->kmap_gen = r->gen;
	return 0;
}

/* Keep @pid's start and owner for its perf map (jit_start()), and its
 * jitdump's path as known now (jit_dump()). */
static void jit_proc_add(struct rec *r, int32_t pid)
{
	struct jit_proc j = { .pid = pid };
	const char *dump;

	if (pm_process_start(r->pm, pid, &j.start_ns, &j.uid) ||
	    tool_grow(&r->jprocs, &r->capjprocs, r->njprocs + 1,
		      sizeof(*r->jprocs), 16))
		return;	/* unknown: the map is reported unchecked */
	dump = pm_jitdump(r->pm, pid, &j.jitdump_pid);
	if (dump)
		j.jitdump = strdup(dump);	/* NULL: asked again at the end */
	r->jprocs[r->njprocs++] = j;
}

/* @pid mapped what may be its jitdump: keep the path with the process
 * when it was seen this window already (jit_proc_add() takes it
 * otherwise), since the process may be gone when the window ends. */
static void jit_dump_seen(struct rec *r, int32_t pid)
{
	int32_t dpid;
	const char *d = pm_jitdump(r->pm, pid, &dpid);
	char *copy;

	for (size_t i = r->njprocs; d && i-- > 0;) {
		if (r->jprocs[i].pid != pid)
			continue;
		if (r->jprocs[i].jitdump && !strcmp(r->jprocs[i].jitdump, d))
			return;
		copy = strdup(d);
		if (!copy)
			return;
		free(r->jprocs[i].jitdump);
		r->jprocs[i].jitdump = copy;
		r->jprocs[i].jitdump_pid = dpid;
		return;
	}
}

static void jit_procs_clear(struct rec *r)
{
	for (size_t i = 0; i < r->njprocs; i++)
		free(r->jprocs[i].jitdump);
	r->njprocs = 0;
}

/* jitmap_dump_fn: @pid's jitdump, as mapped now, else as kept when it
 * was first seen this window (it may be gone by now). */
static const char *jit_dump(void *ctx, int32_t pid, int32_t *dump_pid)
{
	struct rec *r = ctx;
	const char *d = pm_jitdump(r->pm, pid, dump_pid);

	for (size_t i = r->njprocs; !d && i-- > 0;) {
		if (r->jprocs[i].pid != pid || !r->jprocs[i].jitdump)
			continue;
		*dump_pid = r->jprocs[i].jitdump_pid;
		d = r->jprocs[i].jitdump;
	}
	return d;
}

/* jitmap_start_fn: the latest start kept for @pid this window. */
static int jit_start(void *ctx, int32_t pid, int64_t *start_ns,
		     uint32_t *uid)
{
	struct rec *r = ctx;

	for (size_t i = r->njprocs; i-- > 0;) {
		if (r->jprocs[i].pid != pid)
			continue;
		*start_ns = r->jprocs[i].start_ns;
		*uid = r->jprocs[i].uid;
		return 0;
	}
	return -ENOENT;
}

/* Name process @pid and thread @tid in this window's profile. */
static void prof_task(struct rec *r, int32_t pid, int32_t tid, bool force)
{
	struct named *nm = NULL;
	uint64_t pidns;
	int32_t nspid;
	const char *comm;

	if (pid <= 0)
		return;
	if (!force && tid > 0) {
		nm = &r->named[(uint32_t)tid * 2654435761u >> 26];
		if (nm->tid == tid && nm->pid == pid && nm->gen == r->gen)
			return;	/* both named already */
	}
	if (idset_add(&r->procs, pid) || (force && pid == tid)) {
		jit_proc_add(r, pid);
		comm = pm_process(r->pm, pid, &pidns, &nspid);
		sym_prof_add_process(r->prof, pid, pidns, nspid, comm);
	}
	if (tid > 0 && (idset_add(&r->threads, tid) || force))
		sym_prof_add_thread(r->prof, pid, tid, pm_thread(r->pm, tid));
	/* (an idset_add() without memory added nothing) */
	if (nm && idset_has(&r->procs, pid) && idset_has(&r->threads, tid))
		*nm = (struct named){ .pid = pid, .tid = tid, .gen = r->gen };
}

/* ---- samples ---- */

/* Frame @i of user PC @pc at time @t: mapping and ELF address.  *@from
 * is raised to the time from which the mapping found holds
 * (pm_find_from()). */
static int user_frame_from(struct rec *r, int32_t pid, uint64_t pc,
			   uint64_t t, bool ret, struct sym_prof_frame *f,
			   uint32_t *flags, struct pm_map **mp, uint64_t *from)
{
	struct pm_map *m;
	uint64_t mf = 0;
	int err;

	f->flags = ret ? SYM_PROF_FRAME_RETURN : 0;
	m = pid > 0 ? pm_find_from(r->pm, pid, pc, t, &mf) : NULL;
	if (mf > *from)
		*from = mf;
	*mp = m;
	if (!m) {
		f->map = SYM_PROF_NOMAP;
		f->addr = pc;
		if (ret)
			*flags |= SYM_PROF_BADRETURN;
		else
			r->unmapped_leaf++;
		return 0;
	}
	err = prof_map(r, m, &f->map);
	if (err)
		return err;
	f->addr = pc - m->start + m->vaddr;
	if (ret && retcheck_ok(r->rc, m, pc) == 0) {
		*flags |= SYM_PROF_BADRETURN;
		r->not_after_call++;
	}
	return 0;
}

static int user_frame(struct rec *r, int32_t pid, uint64_t pc, uint64_t t,
		      bool ret, struct sym_prof_frame *f, uint32_t *flags,
		      struct pm_map **mp)
{
	uint64_t from = 0;

	return user_frame_from(r, pid, pc, t, ret, f, flags, mp, &from);
}

/* dwarf mode: what the whole stack just unwound needed of its copy. */
static void count_extent(struct rec *r)
{
	uint64_t used, nofp;

	unwinder_last_extent(r->uw, &used, &nofp);
	used = (used + EXTENT_BUCKET - 1) / EXTENT_BUCKET;
	nofp = (nofp + EXTENT_BUCKET - 1) / EXTENT_BUCKET;
	r->extent_used[used < EXTENT_BUCKETS ? used : EXTENT_BUCKETS - 1]++;
	r->extent_nofp[nofp < EXTENT_BUCKETS ? nofp : EXTENT_BUCKETS - 1]++;
}

/* The bytes under which a share @q of histogram @h lies. */
static unsigned extent_quantile(const uint64_t *h, double q)
{
	uint64_t n = 0, k = 0;
	unsigned i;

	for (i = 0; i < EXTENT_BUCKETS; i++)
		n += h[i];
	for (i = 0; i < EXTENT_BUCKETS; i++) {
		k += h[i];
		if (n && (double)k >= q * (double)n)
			return i * EXTENT_BUCKET;
	}
	return 0;
}

/* Count @n samples (or events) whose stack has @flags. */
static void add_flags_n(struct rec *r, uint32_t flags, uint64_t n)
{
	unsigned i;

	if (!flags)
		return;
	for (i = 0; i < SYM_PROF_NFLAGS; i++) {
		if (flags & (1u << i)) {
			r->flagged[i] += n;
			r->total_flags[i] += n;
		}
	}
	r->total_flagged += n;
}

static void add_flags(struct rec *r, uint32_t flags)
{
	add_flags_n(r, flags, 1);
}

/*
 * fp mode: the user part of the callchain, its first frame repaired.
 * *leaf_kind: enum unwind_fp of the leaf, UNWIND_FP_UNKNOWN when the
 * repair could not run.
 */
static size_t fp_user(struct rec *r, const struct perf_sample *s,
		      const uint64_t *chain, size_t n, uint64_t *pcs,
		      size_t max, uint32_t *flags, int *leaf_kind)
{
	size_t k;

	*leaf_kind = UNWIND_FP_UNKNOWN;
	/* The walk reads one frame past the outermost: a zero "return
	 * address" there ends the chain, it is not a frame. */
	while (n > 1 && chain[n - 1] == 0)
		n--;
	k = n < max ? n : max;
	memcpy(pcs, chain, k * sizeof(*pcs));
	if (k == 0)
		return 0;
	/* The frame-pointer register did not lead to any frame: whatever
	 * the leaf repair finds, the callers beyond it are missing.  With
	 * the checks of fp_check() this is one case of a chain that ends
	 * short of an outermost frame. */
	if (n == 1 && !r->fpc)
		*flags |= SYM_PROF_UNWIND;
	if (r->uw && r->o.leaf_stack > 0 && s->regs && max >= 2) {
		uint64_t ra;
		bool kept;
		int err;

		err = unwinder_leaf_fp(r->uw, (pid_t)s->pid, s->regs, s->stack,
				       (size_t)s->stack_size, &ra, leaf_kind,
				       &kept);
		if (err == 0) {
			/* The kernel walked on from an rbp that the leaf
			 * has overwritten: what it found beyond the leaf's
			 * caller is not the caller's callers. */
			if (n > 1 && !kept && r->fpc) {
				*flags |= SYM_PROF_UNWIND;
				r->fp_unsound++;
			}
			if (k < 2 || pcs[1] != ra) {
				if (k == max) {
					k--;
					*flags |= SYM_PROF_TRUNCATED;
				}
				memmove(&pcs[2], &pcs[1],
					(k - 1) * sizeof(*pcs));
				pcs[1] = ra;
				k++;
				r->repaired++;
			}
			return k;
		}
		if (*leaf_kind == UNWIND_FP_OUTERMOST && r->fpc) {
			/* A sample in _start: it has no caller to repair,
			 * and anything the walk found beyond it is not a
			 * frame. */
			if (k > 1)
				r->fp_past_outermost += k - 1;
			return 1;
		}
	}
	*flags |= SYM_PROF_LEAF;
	return k;
}

/*
 * fp mode: judge the resolved user frame @i (of @nu) of a chain, a return
 * address in mapping @m (NULL: none), with fpcheck.h's classes.  A frame
 * in the middle must keep rbp as its frame pointer, the last one must be
 * an outermost frame.  Returns true when the chain ends at this frame
 * (an outermost frame: the rest, if any, is the walk reading past it).
 */
static bool fp_check(struct rec *r, const struct pm_map *m, int32_t pid,
		     uint64_t pc, size_t i, size_t nu, bool *outermost,
		     uint32_t *flags)
{
	int cls = fpcheck_ret(r->fpc, m, (pid_t)pid, pc);

	if (cls == FPCHECK_OUTERMOST) {
		*outermost = true;
		if (i + 1 < nu)
			r->fp_past_outermost += nu - i - 1;
		return true;
	}
	if (i + 1 < nu && cls == FPCHECK_NOFRAME &&
	    !(*flags & SYM_PROF_UNWIND)) {
		*flags |= SYM_PROF_UNWIND;
		r->fp_unsound++;
	}
	return false;
}

static int handle_sample(struct rec *r, const struct perf_event_header *h)
{
	struct perf_sample s;
	struct sym_prof_stack st;
	const uint64_t *user = NULL;
	size_t nuser = 0, nf = 0, nu = 0, i, nchain_real = 0;
	uint64_t ctx = 0, e;
	uint32_t flags = 0, kid;
	const unsigned char *exact = NULL;
	bool first_k = true, fp_checks, outermost = false;
	struct pm_map *m;
	int32_t pid, tid;
	int err, leaf_kind = UNWIND_FP_UNKNOWN;

	if (perf_parse_sample(h, r->attr.sample_type, r->nregs, &s) != 0) {
		r->bad_records++;
		goto drop;
	}
	pid = (int32_t)s.pid;
	tid = (int32_t)s.tid;
	if (s.time > r->max_time)
		r->max_time = s.time;
	if (pid > 0 && !pm_known(r->pm, pid))
		pm_scan(r->pm, pid);

	/* Kernel frames first (they are innermost), then find the user
	 * part of the chain in fp mode. */
	for (i = 0; i < s.nchain; i++) {
		e = s.chain[i];
		if (e >= (uint64_t)PERF_CONTEXT_MAX) {
			ctx = e;
			continue;
		}
		nchain_real++;
		if (ctx == PERF_CONTEXT_KERNEL) {
			if (nf >= r->o.max_depth)
				continue;
			err = prof_kernel_map(r, e, &kid);
			if (err)
				goto drop;
			r->frames[nf].map = kid;
			r->frames[nf].addr = e;
			r->frames[nf].flags = first_k ? 0 :
					      SYM_PROF_FRAME_RETURN;
			first_k = false;
			nf++;
		} else if (ctx == PERF_CONTEXT_USER && !user) {
			user = &s.chain[i];
			nuser = s.nchain - i;
		}
	}
	if (r->o.cg == CG_FP && nchain_real >= r->attr.sample_max_stack)
		flags |= SYM_PROF_TRUNCATED;

	/* User frames. */
	if (r->o.cg == CG_FP) {
		if (user)
			nu = fp_user(r, &s, user, nuser, r->pcs,
				     r->o.max_depth - nf, &flags, &leaf_kind);
	} else if (s.regs && s.regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
		int stopped = 0;
		size_t n = 0;

		if (r->uw && s.regs_abi == PERF_SAMPLE_REGS_ABI_64 &&
		    r->o.max_depth > nf &&
		    unwinder_unwind_exact(r->uw, (pid_t)pid, s.regs, s.stack,
					  (size_t)s.stack_size, r->pcs,
					  r->exact, r->o.max_depth - nf, &n,
					  &stopped) == 0) {
			nu = n;
			count_stop(r, stopped);
			if (stopped == UNWIND_STOP_DEPTH)
				flags |= SYM_PROF_TRUNCATED;
			else if (stopped != UNWIND_STOP_NONE)
				flags |= SYM_PROF_UNWIND;
			else
				count_extent(r);
		} else {
			/* A 32-bit process, or no room: the exact PC. */
			r->pcs[0] = s.regs[UNWIND_REG_IP];
			r->exact[0] = 1;
			nu = 1;
			flags |= SYM_PROF_UNWIND;
		}
		exact = r->exact;
	}
	fp_checks = r->o.cg == CG_FP && r->fpc && nu > 0;
	if (fp_checks && nu == 1 && leaf_kind == UNWIND_FP_OUTERMOST)
		outermost = true;
	for (i = 0; i < nu; i++) {
		err = user_frame(r, pid, r->pcs[i], s.time,
				 exact ? !exact[i] : i > 0, &r->frames[nf],
				 &flags, &m);
		if (err)
			goto drop;
		nf++;
		if (fp_checks && i > 0 &&
		    fp_check(r, m, pid, r->pcs[i], i, nu, &outermost, &flags))
			break;
	}
	/* A chain that ends short of an outermost frame is incomplete,
	 * unless it is already flagged for reaching the depth limit. */
	if (fp_checks && !outermost && !(flags & SYM_PROF_TRUNCATED)) {
		if (!(flags & SYM_PROF_UNWIND))
			r->fp_incomplete++;
		flags |= SYM_PROF_UNWIND;
	}
	if (nu == 0 && s.regs_abi != PERF_SAMPLE_REGS_ABI_NONE && pid > 0)
		flags |= SYM_PROF_KERNEL;
	memset(&st, 0, sizeof(st));
	st.count = 1;
	st.weight = s.period ? s.period : r->attr.sample_period;
	st.pid = pid > 0 ? pid : 0;
	st.tid = tid > 0 ? tid : 0;
	st.flags = flags;
	st.nframes = (uint32_t)nf;
	st.frames = r->frames;
	err = sym_prof_add_stack_values(r->prof, &st, 0, r->o.wall ?
		(const uint64_t[3]){ st.weight, st.weight, 0 } : NULL);
	if (err)
		goto drop;
	prof_task(r, st.pid, st.tid, false);
	r->samples++;
	r->total_samples++;
	add_flags(r, flags);
	return 0;
drop:
	r->dropped++;
	r->total_dropped++;
	return 0;
}

/* ---- off-CPU events (agent/offcpu.h) ---- */

/* Kernel return addresses @pcs[0, @k) into r->frames; @cpu: the on-CPU
 * sampler's (the first is where the sample was taken, no BPF frame leads
 * them).  Returns how many; *@sure false when a frame was left out for
 * an error (another call may keep it). */
static size_t kernel_frames(struct rec *r, const uint64_t *pcs, size_t k,
			    bool cpu, bool *sure)
{
	size_t n = 0, i = cpu ? 0 : offcpu_kernel_skip(r->oc, pcs, k);
	uint32_t kid;

	*sure = true;
	for (; i < k && n < r->o.max_depth; i++) {
		if (pcs[i] < KERNEL_START)
			continue;
		if (prof_kernel_map(r, pcs[i], &kid) != 0) {
			*sure = false;
			continue;
		}
		r->frames[n].map = kid;
		r->frames[n].addr = pcs[i];
		r->frames[n].flags = cpu && n == 0 ? 0 : SYM_PROF_FRAME_RETURN;
		n++;
	}
	return n;
}

/*
 * The event memo (agent/evmemo.h): a result it found is taken as is,
 * except with SYM_EVMEMO=check, where the frames are resolved all the
 * same and compared (em_bad counts those that differ).  @f: the frames
 * resolved, @n of them, with @flags and @aux.
 */
static void em_compare(struct rec *r, const struct evmemo_res *got,
		       const struct sym_prof_frame *f, size_t n,
		       uint32_t flags, const uint32_t *aux)
{
	r->em_checked++;
	if (got->nframes != n || got->flags != flags ||
	    memcmp(got->aux, aux, sizeof(got->aux)) != 0 ||
	    memcmp(got->frames, f, n * sizeof(*f)) != 0)
		r->em_bad++;
}

/* The kernel frames of @e into r->frames; returns how many.  They are a
 * function of its addresses, its kind and the window (the maps added to
 * this window's profile; the kernel's text and tracing ranges, the
 * modules and --max-depth are fixed for the run): the memo's key. */
static size_t offcpu_kernel(struct rec *r, const struct offcpu_event *e)
{
	const uint64_t *pcs = (const uint64_t *)e->kstack;
	struct evmemo_res got, res = { .frames = r->frames };
	bool cpu = e->state == OFFCPU_STATE_CPU, hit = false, sure;
	struct evmemo_key key;
	uint64_t *w = r->em_key;
	size_t k, n;

	if (r->o.user_only || e->kstack_len <= 0)
		return 0;
	k = (size_t)e->kstack_len / sizeof(uint64_t);
	if (k > OFFCPU_KSTACK_MAX)
		k = OFFCPU_KSTACK_MAX;
	if (r->em_k) {
		w[0] = r->gen;
		w[1] = (uint64_t)cpu << 32 | k;
		memcpy(w + 2, pcs, k * sizeof(*pcs));
		evmemo_key(&key, w, k + 2, e->tid);
		hit = evmemo_find(r->em_k, &key, 0, &got);
		if (hit && !r->em_check) {
			memcpy(r->frames, got.frames,
			       got.nframes * sizeof(*got.frames));
			return got.nframes;
		}
	}
	n = kernel_frames(r, pcs, k, cpu, &sure);
	res.nframes = (uint32_t)n;
	if (hit)
		em_compare(r, &got, r->frames, n, 0, res.aux);
	else if (r->em_k && sure)
		evmemo_put(r->em_k, &key, 0, &res);
	return n;
}

/* Tell the agent how the unwind of @e went (enum unwind_stop @stopped),
 * for its process's learned stack size (stacklearn.h); a stack cut by
 * that size is already flagged unwind (UNWIND_STOP_READ). */
static void learn_stack(struct rec *r, const struct offcpu_event *e,
			int stopped)
{
	uint64_t used = 0, nofp;

	if (stopped == UNWIND_STOP_NONE)
		unwinder_last_extent(r->uw, &used, &nofp);
	if (offcpu_stack_seen(r->oc, e, stopped == UNWIND_STOP_NONE, used,
			      stopped == UNWIND_STOP_READ))
		r->stack_cut++;
}

/* The user memo's key of the @n PCs of r->pcs and r->exact of process
 * @pid into r->em_key: what user_frame_from() answers depends on, besides
 * the time (pm_find_from()): the process's mappings, the window, the
 * return-address checks' cache.  Returns its words, 0 when too many. */
static size_t user_key(struct rec *r, int32_t pid, size_t n)
{
	uint64_t *w = r->em_key;
	size_t nw = 4 + n + (n + 7) / 8;

	if (nw > EVMEMO_KEY_MAX)
		return 0;
	w[0] = (uint64_t)(uint32_t)pid << 32 | n;
	w[1] = pm_gen(r->pm, pid);
	w[2] = r->gen;
	w[3] = retcheck_epoch(r->rc);
	memcpy(w + 4, r->pcs, n * sizeof(*w));
	w[nw - 1] = 0;
	memcpy(w + 4 + n, r->exact, n);
	return nw;
}

/* The @n user frames of r->pcs (@e's) into r->frames after @nf kernel
 * ones, through the user memo; returns the total, 0 on an error. */
static size_t user_frames(struct rec *r, const struct offcpu_event *e,
			  size_t n, size_t nf, uint32_t *flags)
{
	int32_t pid = (int32_t)e->pid;
	uint64_t from = 0, leaf0 = r->unmapped_leaf, call0 = r->not_after_call;
	struct evmemo_res got, res = { .frames = r->frames + nf };
	struct evmemo_key key;
	size_t nw = r->em_u ? user_key(r, pid, n) : 0, i;
	bool hit = false;
	struct pm_map *m;

	if (nw) {
		evmemo_key(&key, r->em_key, nw, e->tid);
		hit = evmemo_find(r->em_u, &key, e->start_ns, &got);
		if (hit && !r->em_check) {
			memcpy(r->frames + nf, got.frames,
			       got.nframes * sizeof(*got.frames));
			*flags |= got.flags;
			r->unmapped_leaf += got.aux[0];
			r->not_after_call += got.aux[1];
			return nf + got.nframes;
		}
	}
	for (i = 0; i < n; i++)
		if (user_frame_from(r, pid, r->pcs[i], e->start_ns,
				    !r->exact[i], &r->frames[nf + i],
				    &res.flags, &m, &from))
			return 0;
	*flags |= res.flags;
	res.nframes = (uint32_t)n;
	res.aux[0] = (uint32_t)(r->unmapped_leaf - leaf0);
	res.aux[1] = (uint32_t)(r->not_after_call - call0);
	if (hit)
		em_compare(r, &got, res.frames, n, res.flags, res.aux);
	else if (nw && retcheck_epoch(r->rc) == r->em_key[3])
		evmemo_put(r->em_u, &key, from, &res);
	return nf + n;
}

/* The user frames of @e after @nf kernel ones; returns the total. */
static size_t offcpu_user(struct rec *r, const struct offcpu_event *e,
			  size_t nf, uint32_t *flags)
{
	int stopped = 0;
	size_t n = 0;

	if (!e->user) {
		*flags |= nf ? SYM_PROF_KERNEL : 0;
		return nf;
	}
	if (r->o.max_depth <= nf ||
	    unwinder_unwind_exact(r->uw, (pid_t)e->pid,
				  (const uint64_t *)e->regs, e->stack,
				  e->stack_len, r->pcs, r->exact,
				  r->o.max_depth - nf, &n, &stopped) != 0) {
		r->pcs[0] = e->regs[UNWIND_REG_IP];
		r->exact[0] = 1;
		n = 1;
		stopped = UNWIND_STOP_READ;
	}
	count_stop(r, stopped);
	if (stopped == UNWIND_STOP_DEPTH)
		*flags |= SYM_PROF_TRUNCATED;
	else if (stopped != UNWIND_STOP_NONE)
		*flags |= SYM_PROF_UNWIND;
	else
		count_extent(r);
	learn_stack(r, e, stopped);
	return user_frames(r, e, n, nf, flags);
}

/* The values of event @e, in the order of set_value_types(). */
static void event_values(const struct rec *r, const struct offcpu_event *e,
			 uint64_t v[4])
{
	v[0] = e->weight_ns;
	if (r->o.wall)
		v[2] = e->weight_ns;
	else if (r->o.sched_delay)
		v[e->state == OFFCPU_STATE_R ? 2 : 1] = e->weight_ns;
	else if (e->state == OFFCPU_STATE_S)
		v[1] = e->weight_ns;
	else if (e->state == OFFCPU_STATE_D)
		v[2] = e->weight_ns;
	else if (e->state == OFFCPU_STATE_R)
		v[3] = e->weight_ns;
}

static int round_body(struct rec *r);

/*
 * The BPF agent's drain comes after the side-band's read (round_once()),
 * so it can hold events newer than that read: a process that exec'd or
 * mapped a library in between (t3112 and t3121 under ASan, where the
 * first round took 500 ms).  Their mappings are in the perf rings by
 * now: read them again, at most 4 times a drain.
 */
static void sb_catch_up(struct rec *r)
{
	if (r->catchups >= 4)
		return;
	r->catchups++;
	round_body(r);
}

/* One blocked period (--sched-delay: one wait for a CPU): its stack,
 * weighted by its ns. */
static void on_offcpu(void *ctx, const struct offcpu_event *e, size_t size)
{
	struct rec *r = ctx;
	struct sym_prof_stack st;
	uint64_t v[4] = { 0 };
	uint32_t flags = 0;
	size_t nf;

	event_values(r, e, v);

	/* (its stack is as of start_ns: whatever it maps was in the perf
	 * rings by then) */
	if (e->start_ns >= r->sb_horizon)
		sb_catch_up(r);
	if (e->start_ns > r->max_time)
		r->max_time = e->start_ns;
	if (!pm_known(r->pm, (int32_t)e->pid))
		pm_scan(r->pm, (int32_t)e->pid);
	nf = offcpu_user(r, e, offcpu_kernel(r, e), &flags);
	memset(&st, 0, sizeof(st));
	st.count = 1;
	st.weight = e->weight_ns;
	st.pid = (int32_t)e->pid;
	st.tid = (int32_t)e->tid;
	st.flags = flags;
	st.nframes = (uint32_t)nf;
	st.frames = r->frames;
	if (nf == 0 || sym_prof_add_stack_values(r->prof, &st, 0,
			e->state == OFFCPU_STATE_CPU ? NULL : v) != 0) {
		r->dropped++;
		r->total_dropped++;
		return;
	}
	prof_task(r, st.pid, st.tid, false);
	r->samples++;
	r->total_samples++;
	add_flags(r, flags);
}

/* Drain the BPF ring buffer.  Its counters are read when a window is
 * written (offcpu_sync()), not at every drain: the batch read of 15
 * per-CPU counters was about 30 % of a drain's CPU when nothing came,
 * and only the window's header and the summary, which follows the last
 * window's write and so shows the same counts, use them. */
static int offcpu_round(struct rec *r)
{
	int n;

	if (!r->oc)
		return 0;
	r->catchups = 0;
	n = offcpu_drain(r->oc);
	return n < 0 ? n : 0;
}

/* The BPF counters now (they only grow), into r->oc_now. */
static void offcpu_sync(struct rec *r)
{
	if (r->oc)
		offcpu_counters(r->oc, r->oc_now);
}

/* Events lost in this window: ring buffer full, or no room for a
 * switched-out thread's event, or a switch-in not traced whose time
 * sched_info could not give; --aggregate kernel: a hash
 * collision, a map full, a stack cleared before its row was read. */
static uint64_t offcpu_lost(const struct rec *r, const uint64_t *base)
{
	static const int lost[] = {
		OFFCPU_CNT_LOST, OFFCPU_CNT_MAPFULL, OFFCPU_CNT_UNSEEN_LOST,
		OFFCPU_CNT_COLLISION, OFFCPU_CNT_STACKSFULL,
		OFFCPU_CNT_COUNTSFULL, OFFCPU_CNT_ORPHAN,
	};
	uint64_t n = 0;

	for (size_t i = 0; i < sizeof(lost) / sizeof(*lost); i++)
		n += r->oc_now[lost[i]] - base[lost[i]];
	return n;
}

/* --aggregate kernel: the user frames @pcs[0, @nu) of process @pid (a
 * frame-pointer chain, the leaf's pc first) after @nf kernel ones;
 * returns the total. */
static size_t agg_user(struct rec *r, int32_t pid, const uint64_t *pcs,
		       size_t nu, size_t nf, uint32_t *flags)
{
	bool outermost = false;
	struct pm_map *m;
	size_t i;

	while (nu > 1 && pcs[nu - 1] == 0)
		nu--;	/* (as fp_user()) */
	if (nu == 0) {
		*flags |= nf ? SYM_PROF_KERNEL : 0;
		return nf;
	}
	for (i = 0; i < nu && nf < r->o.max_depth; i++, nf++) {
		/* (the row's events are of the last 200 ms: the mappings
		 * as of the newest record seen) */
		if (user_frame(r, pid, pcs[i], r->max_time, i > 0,
			       &r->frames[nf], flags, &m))
			return 0;
		if (i == 0 && r->fpc &&
		    fpcheck_ret(r->fpc, m, pid, pcs[0] + 1) == FPCHECK_NOFRAME)
			*flags |= SYM_PROF_LEAF;
		if (i > 0 && r->fpc &&
		    fp_check(r, m, pid, pcs[i], i, nu, &outermost, flags)) {
			nf++;
			break;
		}
	}
	if (!outermost)
		*flags |= i < nu || nu == AGG_USER_MAX ? SYM_PROF_TRUNCATED :
			  SYM_PROF_UNWIND;
	return nf;
}

/* --aggregate kernel: a row has no time; catch up when its first user pc
 * is in no mapping known. */
static void agg_catch_up(struct rec *r, int32_t pid, const struct agg_stack *s)
{
	if (s->nuser && !pm_find(r->pm, pid, s->pc[AGG_KERN_MAX], r->max_time))
		sb_catch_up(r);
}

/* --aggregate kernel: one row drained from the maps, @count events of
 * @weight ns in all on frame-pointer stack @s.  Its user frames are
 * checked as -g fp's chains are (fp_check()), and a leaf without a frame
 * pointer, whose caller the walk skipped, is flagged 'leaf'. */
static void on_agg(void *ctx, const struct agg_stack *s,
		   const struct agg_key *k, uint64_t count, uint64_t weight)
{
	struct rec *r = ctx;
	struct sym_prof_stack st;
	uint64_t v[4] = { 0 }, wcpu[3] = { weight, weight, 0 };
	struct offcpu_event e = { .weight_ns = weight, .state = k->state };
	uint32_t flags = 0;
	size_t nf = 0, nu = s->nuser < AGG_USER_MAX ? s->nuser : AGG_USER_MAX;
	bool cpu = k->state == OFFCPU_STATE_CPU, sure;

	if (!pm_known(r->pm, (int32_t)k->tgid))
		pm_scan(r->pm, (int32_t)k->tgid);
	agg_catch_up(r, (int32_t)k->tgid, s);
	if (!r->o.user_only)
		nf = kernel_frames(r, (const uint64_t *)s->pc, s->nkern < AGG_KERN_MAX ?
				   s->nkern : AGG_KERN_MAX, cpu, &sure);
	nf = agg_user(r, (int32_t)k->tgid,
		      (const uint64_t *)&s->pc[AGG_KERN_MAX], nu, nf,
		      &flags);
	memset(&st, 0, sizeof(st));
	st.count = count;
	st.weight = weight;
	st.pid = (int32_t)k->tgid;
	st.tid = (int32_t)k->tid;
	st.flags = flags;
	st.nframes = (uint32_t)nf;
	st.frames = r->frames;
	event_values(r, &e, v);
	/* (--wall: a CPU row's values as a perf sample's, on_sample()) */
	if (nf == 0 || sym_prof_add_stack_values(r->prof, &st, 0,
			!cpu ? v : r->o.wall ? wcpu : NULL) != 0) {
		r->dropped += count;
		r->total_dropped += count;
		return;
	}
	prof_task(r, st.pid, st.tid, false);
	r->samples += count;
	r->total_samples += count;
	add_flags_n(r, flags, count);
	r->agg_whole += flags ? 0 : count;
}

/* Fill the aggregation options of @oo from the command line and the
 * knobs of the bench and the tests: SYM_AGG_STACKS, SYM_AGG_ROWS (map
 * sizes), SYM_AGG_HASH_BITS (bits of the stack hash kept). */
static void agg_opts(struct rec *r, struct offcpu_opts *oo)
{
	const char *v;

	oo->cpu_hz = r->o.bpf_cpu ? (uint32_t)r->o.hz : 0;
	if (r->o.aggregate != AGG_KERNEL)
		return;
	oo->agg = on_agg;
	oo->wall = r->o.wall;
	if ((v = getenv("SYM_AGG_STACKS")))
		oo->agg_stacks = (uint32_t)strtoul(v, NULL, 0);
	if ((v = getenv("SYM_AGG_ROWS")))
		oo->agg_rows = (uint32_t)strtoul(v, NULL, 0);
	if ((v = getenv("SYM_AGG_HASH_BITS")))
		oo->hash_bits = (uint32_t)strtoul(v, NULL, 0);
}

static void make_attr(struct rec *r);

/* --wall without the BPF agent (@why names what is missing: BTF, root,
 * lockdown...): its CPU part alone, through the perf events, as a plain
 * CPU profile (event cpu-clock, no wall/cpu/off-cpu value types: a
 * "wall" with no off-CPU time in it would be a lie). */
static int wall_fallback(struct rec *r, const char *why)
{
	tool_err("--wall: %s; recording the CPU part only, through perf "
		 "events: a CPU profile (event cpu-clock), no off-CPU time",
		 why);
	r->o.wall = false;
	/* (--aggregate kernel: its CPU part was to be the BPF sampler's) */
	r->o.bpf_cpu = false;
	r->o.aggregate = 0;
	make_attr(r);
	return new_window(r);
}

/* SYM_OFFCPU_COST_OMIT=kstack,ustack,ring (any of them): parts of each
 * off-CPU event the BPF program leaves out, for tests/bench/
 * offcpu-bench.sh's measure of what each part costs (OFFCPU_OMIT_*; the
 * profile is then wrong) into @bits.  An unknown name: an error printed,
 * -1. */
static int cost_omit_env(uint32_t *bits)
{
	static const struct { const char *name; uint32_t bit; } parts[] = {
		{ "kstack", OFFCPU_OMIT_KSTACK },
		{ "ustack", OFFCPU_OMIT_USTACK },
		{ "ring", OFFCPU_OMIT_RING },
	};
	const char *v = getenv("SYM_OFFCPU_COST_OMIT"), *p;
	size_t i, n;

	*bits = 0;
	for (p = v; p && *p; p += n + (p[n] == ',')) {
		n = strcspn(p, ",");
		for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
			if (strlen(parts[i].name) == n &&
			    !strncmp(p, parts[i].name, n))
				break;
		if (i == sizeof(parts) / sizeof(parts[0])) {
			tool_err("SYM_OFFCPU_COST_OMIT: unknown part '%.*s' "
				 "(kstack, ustack, ring)", (int)n, p);
			return -1;
		}
		*bits |= parts[i].bit;
	}
	return 0;
}

/* The event memos (r->em_k, r->em_u), unless SYM_EVMEMO=off; without
 * memory, none. */
static void em_open(struct rec *r)
{
	const char *v = getenv("SYM_EVMEMO");

	if (v && strcmp(v, "off") == 0)
		return;
	r->em_check = v && strcmp(v, "check") == 0;
	if (evmemo_new(&r->em_k) || evmemo_new(&r->em_u)) {
		evmemo_free(r->em_k);
		r->em_k = NULL;
	}
}

/* Load and attach the BPF agent; before the perf events, so that a
 * kernel that refuses BPF is what the error names (--off-cpu and
 * --sched-delay fail; --wall falls back to its CPU part). */
static int offcpu_start(struct rec *r)
{
	struct offcpu_opts oo = {
		.min_ns = r->o.min_block, .max_ns = r->o.max_block,
		.stack_size = r->o.stack_size, .prob = r->o.prob,
		.all = r->o.all, .pids = r->o.pids, .npids = r->o.npids,
		.sched_delay = r->o.sched_delay,
		.fixed_stack = r->o.fixed_stack,
	};
	const char *ring = getenv("SYM_OFFCPU_RING");
	const char *miss = getenv("SYM_OFFCPU_MISS_IN");
	char why[256];
	int err;

	/* SYM_OFFCPU_RING=BYTES: another ring buffer size (a power of two,
	 * at least a page), for the test of lost events;
	 * SYM_OFFCPU_MISS_IN=N: one switch-in of N ignored, for the test of
	 * those the kernel does not trace. */
	if (ring)
		oo.ring_bytes = (uint32_t)strtoul(ring, NULL, 0);
	if (miss)
		oo.miss_in = (uint32_t)strtoul(miss, NULL, 0);
	if (cost_omit_env(&oo.cost_omit))
		return -EINVAL;
	agg_opts(r, &oo);
	em_open(r);
	err = offcpu_open(&oo, on_offcpu, r, &r->oc, why, sizeof(why));
	if (!err && !r->o.quiet && offcpu_fallback_why(r->oc))
		fprintf(stderr, "%s: off-CPU: the tp_btf programs could not "
			"be loaded (%s; SYM_BPF_DEBUG=1 shows libbpf's log): "
			"raw_tp instead, which costs more a switch\n",
			tool_prog(), offcpu_fallback_why(r->oc));
	if (err && r->o.wall)
		return wall_fallback(r, why);
	if (err)
		tool_err("--%s: %s", r->o.sched_delay ? "sched-delay" :
			 r->o.wall ? "wall" : r->o.bpf_cpu ? "aggregate" :
			 "off-cpu", why);
	return err;
}

/* Tell the BPF agent the command's process (-p's are set before it
 * attaches, -a follows all). */
static int offcpu_targets(struct rec *r)
{
	int err = 0;

	if (!r->oc)
		return 0;
	/* The child runs our code until its execve(): the command's
	 * profile starts there, as the perf-event path's enable_on_exec. */
	if (r->child > 0)
		err = offcpu_add_exec(r->oc, r->child);
	if (err)
		tool_err("--off-cpu: cannot set the processes: %s",
			 strerror(-err));
	return err;
}

/* ---- side-band ---- */

static int collect_sb(void *ctx, const struct perf_event_header *h)
{
	struct rec *r = ctx;
	uint32_t pid = 0, tid = 0;
	uint64_t t = 0, lost;
	size_t need;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		return 0;
	case PERF_RECORD_LOST:
		if (h->size >= sizeof(*h) + 16) {
			memcpy(&lost, (const char *)(h + 1) + 8, 8);
			r->lost += lost;
			r->total_lost += lost;
		}
		return 0;
	case PERF_RECORD_LOST_SAMPLES:
		if (h->size >= sizeof(*h) + 8) {
			memcpy(&lost, h + 1, 8);
			r->lost += lost;
			r->total_lost += lost;
		}
		return 0;
	case PERF_RECORD_THROTTLE:
		r->throttled++;
		r->total_throttled++;
		return 0;
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		break;
	default:
		return 0;
	}
	perf_parse_id(h, r->attr.sample_type, &pid, &tid, &t);
	if (t > r->max_time)
		r->max_time = t;
	need = r->sb_len + h->size;
	if (tool_grow(&r->sb_buf, &r->sb_cap, need, 1, 65536) ||
	    tool_grow(&r->sbs, &r->capsbs, r->nsbs + 1, sizeof(*r->sbs), 256))
		return -ENOMEM;
	memcpy(r->sb_buf + r->sb_len, h, h->size);
	r->sbs[r->nsbs].time = t;
	r->sbs[r->nsbs].off = r->sb_len;
	r->sbs[r->nsbs].seq = r->nsbs;
	r->nsbs++;
	r->sb_len += h->size;
	return 0;
}

static int sb_cmp(const void *a, const void *b)
{
	const struct sb *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A NUL-terminated string at @off of record @h, or NULL. */
static const char *rec_str(const struct perf_event_header *h, size_t off)
{
	const char *s = (const char *)h + off;

	if (off >= h->size || !memchr(s, '\0', h->size - off))
		return NULL;
	return s;
}

struct task_body {
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

static void apply_sb(struct rec *r, const struct perf_event_header *h,
		     uint64_t t)
{
	struct perf_mmap2 mb;
	struct pm_inode ino;
	struct task_body tb;
	uint32_t ids[2];
	const char *s;

	switch (h->type) {
	case PERF_RECORD_MMAP2:
		if (perf_parse_mmap2(h, r->attr.build_id, &mb) ||
		    !(mb.prot & PROT_EXEC))
			return;
		s = mb.filename;
		ino.dev = makedev(mb.maj, mb.min);
		ino.ino = mb.ino;
		ino.gen = mb.ino_generation;
		pm_mmap(r->pm, (int32_t)mb.pid, t, mb.addr, mb.len, mb.pgoff,
			mb.build_id_size ? mb.build_id : NULL,
			mb.build_id_size, mb.ino ? &ino : NULL, s);
		if (strstr(s, "/jit-"))	/* maybe a jitdump: keep it */
			jit_dump_seen(r, (int32_t)mb.pid);
		return;
	case PERF_RECORD_COMM:
		if (h->size < sizeof(*h) + sizeof(ids))
			return;
		memcpy(ids, h + 1, sizeof(ids));
		s = rec_str(h, sizeof(*h) + sizeof(ids));
		if (!s)
			return;
		if (h->misc & PERF_RECORD_MISC_COMM_EXEC)
			pm_exec(r->pm, (int32_t)ids[0], t);
		pm_comm(r->pm, (int32_t)ids[0], (int32_t)ids[1], s);
		/* Rename what this window already named. */
		if (idset_has(&r->threads, (int32_t)ids[1]))
			prof_task(r, (int32_t)ids[0], (int32_t)ids[1], true);
		return;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (h->size < sizeof(*h) + sizeof(tb))
			return;
		memcpy(&tb, h + 1, sizeof(tb));
		/* (a new process of a target's: the BPF agent follows it
		 * itself, from its birth, sched_process_fork) */
		if (h->type == PERF_RECORD_FORK)
			pm_fork(r->pm, (int32_t)tb.pid, (int32_t)tb.ppid,
				(int32_t)tb.tid, tb.time);
		else
			pm_exit(r->pm, (int32_t)tb.pid, (int32_t)tb.tid,
				tb.time);
		return;
	}
}

static int walk_samples(void *ctx, const struct perf_event_header *h)
{
	if (h->type == PERF_RECORD_SAMPLE)
		return handle_sample(ctx, h);
	return 0;
}

/* One round: round_body() (snapshot every ring, apply side-band in time
 * order, then resolve the samples, then give the space back), then the
 * BPF agent's drain. */
static int round_once(struct rec *r)
{
	uint64_t t0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	int err = round_body(r);
	const char *d = getenv("SYM_RECORD_DRAIN_DELAY_MS");
	long ms = d ? strtol(d, NULL, 10) : 0;

	/* Fault injection (tests): a wait between the side-band and the
	 * BPF drain, where ASan's slow side-band reads once left rows
	 * whose mappings came after (sb_catch_up()). */
	if (!err && ms > 0 && ms <= 1000)
		usleep((useconds_t)ms * 1000);
	if (!err)
		err = offcpu_round(r);

	r->round_ns += now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	return err;
}

static int round_body(struct rec *r)
{
	int i, err;
	size_t k;
	uint64_t total = 0;

	/* (a record written before this time is in the snapshot) */
	r->sb_horizon = r->attr.use_clockid ? now_ns(CLOCK_MONOTONIC) : 0;
	for (i = 0; i < r->ncpus; i++) {
		uint64_t n = perf_ring_snapshot(r->rings[i]);

		/* Only what was written before the horizon: a record written
		 * after it to a ring read early would come a round after
		 * later records of rings read after (an exec after the new
		 * program's mappings, a sample before its mapping). */
		if (n && r->sb_horizon)
			n = perf_ring_cut(r->rings[i], r->attr.sample_type,
					  r->sb_horizon);
		total += n;
	}
	if (total == 0)
		return 0;
	r->nsbs = 0;
	r->sb_len = 0;
	for (i = 0; i < r->ncpus; i++) {
		err = perf_ring_walk(r->rings[i], collect_sb, r);
		if (err)
			return err;
	}
	if (r->nsbs > 1)
		qsort(r->sbs, r->nsbs, sizeof(*r->sbs), sb_cmp);
	for (k = 0; k < r->nsbs; k++)
		apply_sb(r, (const void *)(r->sb_buf + r->sbs[k].off),
			 r->sbs[k].time);
	for (i = 0; i < r->ncpus; i++) {
		err = perf_ring_walk(r->rings[i], walk_samples, r);
		if (err)
			return err;
		r->bad_records += r->rings[i]->bad;
		r->rings[i]->bad = 0;
		perf_ring_consume(r->rings[i]);
	}
	if (r->max_time > GC_SLACK_NS)
		pm_gc(r->pm, r->max_time - GC_SLACK_NS);
	return 0;
}

/* ---- setting up ---- */

static int online_cpus(struct rec *r)
{
	char buf[4096], *p, *end;
	long a, b, i;
	ssize_t n;
	int fd, *cpus;

	fd = open("/sys/devices/system/cpu/online", O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		/* No sysfs: the CPUs the system says are online. */
		n = snprintf(buf, sizeof(buf), "0-%ld",
			     sysconf(_SC_NPROCESSORS_ONLN) - 1);
	}
	buf[n] = '\0';
	for (p = buf; *p && *p != '\n';) {
		a = strtol(p, &end, 10);
		if (end == p || a < 0)
			return -EINVAL;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtol(p + 1, &end, 10);
			if (end == p + 1 || b < a || b - a > 65536)
				return -EINVAL;
			p = end;
		}
		for (i = a; i <= b; i++) {
			cpus = realloc(r->cpus, (r->ncpus + 1) * sizeof(*cpus));
			if (!cpus)
				return -ENOMEM;
			r->cpus = cpus;
			r->cpus[r->ncpus++] = (int)i;
		}
		if (*p == ',')
			p++;
	}
	return r->ncpus > 0 ? 0 : -EINVAL;
}

static size_t next_pow2(size_t v)
{
	size_t p = 1;

	while (p < v && p < ((size_t)1 << 30))
		p <<= 1;
	return p;
}

static void make_attr(struct rec *r)
{
	struct perf_event_attr *a = &r->attr;
	const struct opts *o = &r->o;
	uint64_t period = 1000000000ULL / o->hz;

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	/* --off-cpu: the events only bring the side-band (mappings,
	 * threads); the samples come from BPF. */
	a->config = o->off_cpu || o->bpf_cpu ? PERF_COUNT_SW_DUMMY :
					       PERF_COUNT_SW_CPU_CLOCK;
	a->sample_period = period ? period : 1;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			 PERF_SAMPLE_CALLCHAIN;
	/* The user registers always: they tell a user thread's sample taken
	 * in the kernel (flag 'kernel' when no user frame came) from a
	 * kernel thread's; the stack copy for dwarf mode and the leaf
	 * repair. */
	a->sample_type |= PERF_SAMPLE_REGS_USER;
	a->sample_regs_user = UNWIND_REGS_MASK;
	if (o->cg == CG_DWARF || o->leaf_stack > 0) {
		a->sample_type |= PERF_SAMPLE_STACK_USER;
		a->sample_stack_user = o->cg == CG_DWARF ? o->stack_size :
				       o->leaf_stack;
	}
	r->nregs = (unsigned)__builtin_popcountll(a->sample_regs_user);
	a->exclude_callchain_user = o->cg == CG_DWARF;
	a->sample_max_stack = (uint16_t)(o->max_depth < 127 ? o->max_depth :
					 127);
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->sample_id_all = 1;
	a->build_id = !r->bid_leaks;
	a->exclude_kernel = o->user_only;
	a->exclude_callchain_kernel = o->user_only;
	a->exclude_hv = 1;
	a->exclude_idle = o->all;
	a->inherit = !o->all;
	a->disabled = o->cmd != NULL;
	a->enable_on_exec = o->cmd != NULL;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
}

/* Say what failed and why: "<prog>: <what>: <reason>".  Returns @err. */
static int fail(int err, const char *what)
{
	char msg[128];

	tool_err("%s: %s", what, sym_strerror(err, msg, sizeof(msg)));
	return err;
}

static void perm_hint(int err)
{
	if (err == -EACCES || err == -EPERM)
		tool_err("perf_event_open: %s: sampling needs CAP_PERFMON "
			 "(or root), or kernel.perf_event_paranoid <= 1 for "
			 "one's own processes", strerror(-err));
	else if (err == -ENOENT || err == -EOPNOTSUPP)
		tool_err("perf_event_open: the cpu-clock event is not "
			 "available: %s", strerror(-err));
	else
		tool_err("perf_event_open: %s", strerror(-err));
}

/* Open one event, relaxing the attr as the kernel demands: without the
 * kernel (not allowed), without build IDs or clockid (older kernels).
 * The first event that opens fixes the attr for the others. */
static int open_event(struct rec *r, pid_t pid, int cpu, bool probe)
{
	int fd;

	for (;;) {
		fd = perf_open(&r->attr, pid, cpu);
		if (fd >= 0 || !probe)
			return fd;
		if ((fd == -EACCES || fd == -EPERM) &&
		    !r->attr.exclude_kernel) {
			r->attr.exclude_kernel = 1;
			r->attr.exclude_callchain_kernel = 1;
			if (!r->o.quiet)
				tool_err("kernel frames are not allowed "
					 "here: sampling user space only");
			continue;
		}
		if (fd == -EINVAL && r->attr.build_id) {
			r->attr.build_id = 0;
			continue;
		}
		if (fd == -EINVAL && r->attr.use_clockid) {
			r->attr.use_clockid = 0;
			continue;
		}
		return fd;
	}
}

static int add_fd(struct rec *r, int fd)
{
	if (tool_grow(&r->fds, &r->capfds, r->nfds + 1, sizeof(*r->fds), 16))
		return -ENOMEM;
	r->fds[r->nfds++] = fd;
	return 0;
}

/* Open the event of task @pid (-1: all) on every CPU; the first event of
 * a CPU gets the ring, the others write into it.  Every failure but
 * -ESRCH (the task is gone) is said on stderr. */
static int open_task(struct rec *r, pid_t pid, bool probe)
{
	struct perf_ring *ring;
	size_t pages = r->o.mmap_pages;
	int i, fd, err;

	for (i = 0; i < r->ncpus; i++) {
		fd = open_event(r, pid, r->cpus[i], probe && i == 0);
		if (fd < 0) {
			if (fd != -ESRCH)
				perm_hint(fd);
			return fd;
		}
		err = add_fd(r, fd);
		if (err) {
			close(fd);
			return fail(err, "cannot keep the events open");
		}
		ring = r->rings[i];
		if (ring->base) {
			err = perf_set_output(fd, ring->fd);
			if (err)
				return fail(err, "cannot send an event to its "
					    "CPU's ring");
			continue;
		}
		for (;;) {
			err = perf_ring_map(ring, fd, pages);
			if (err != -EPERM || pages <= 8)
				break;
			pages /= 2;	/* over the mlock limit */
		}
		if (err)
			return fail(err, "cannot map a ring");
	}
	return 0;
}

/* Wake up when a ring is a quarter full (or at the poll timeout). */
static void set_watermark(struct rec *r, size_t pages)
{
	size_t bytes = pages * (size_t)sysconf(_SC_PAGESIZE);

	r->attr.watermark = 1;
	r->attr.wakeup_watermark = (uint32_t)(bytes / 4);
}

static size_t default_pages(const struct rec *r)
{
	const struct opts *o = &r->o;
	size_t per_sample, bytes;

	per_sample = 256 + 8 * (size_t)(o->max_depth < 127 ? o->max_depth :
				       127) / 2;
	if (o->cg == CG_DWARF)
		per_sample += o->stack_size + 8 * r->nregs;
	else if (o->leaf_stack)
		per_sample += o->leaf_stack + 8 * r->nregs;
	/* Half a second of samples, since a round runs every POLL_MS. */
	bytes = per_sample * (size_t)o->hz / 2;
	bytes = next_pow2(bytes / (size_t)sysconf(_SC_PAGESIZE) + 1);
	if (bytes < 64)
		bytes = 64;
	if (bytes > 4096)
		bytes = 4096;
	return bytes;
}

/* -p: every thread of every PID, again until no new thread shows up
 * (threads started before their creator's event was open are not
 * inherited). */
static int open_pids(struct rec *r)
{
	struct idset seen = { 0 };
	char path[64];
	struct dirent *de;
	bool fresh, probe = true;
	size_t k;
	int pass, err = 0;
	long tid;
	DIR *d;

	for (pass = 0; pass < 16; pass++) {
		fresh = false;
		for (k = 0; k < r->o.npids; k++) {
			snprintf(path, sizeof(path), "/proc/%d/task",
				 (int)r->o.pids[k]);
			d = opendir(path);
			if (!d) {
				if (pass == 0) {
					tool_err("no process %d",
						 (int)r->o.pids[k]);
					err = -ESRCH;
					goto out;
				}
				continue;
			}
			while ((de = readdir(d))) {
				tid = strtol(de->d_name, NULL, 10);
				if (tid <= 0 || !idset_add(&seen, (int32_t)tid))
					continue;
				fresh = true;
				err = open_task(r, (pid_t)tid, probe);
				probe = false;
				if (err == -ESRCH) {
					err = 0;	/* exited meanwhile */
					continue;
				}
				if (err) {
					closedir(d);
					goto out;
				}
			}
			closedir(d);
		}
		if (!fresh)
			break;
	}
out:
	idset_release(&seen);
	return err;
}

/* Fault injection (tests): SYM_RECORD_PREEXEC_SPIN_MS=N makes the
 * command's child spend N ms (at most 10 s) of CPU in its own code before
 * its * execve(), none of which may show in the command's profile. */
static void preexec_spin(void)
{
	const char *v = getenv("SYM_RECORD_PREEXEC_SPIN_MS");
	long ms = v ? strtol(v, NULL, 10) : 0;
	uint64_t end;

	if (ms <= 0 || ms > 10000)
		return;
	end = now_ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)ms * 1000000ULL;
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		;
}

static int start_child(struct rec *r, int *go)
{
	int p[2];
	char c;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (pid == 0) {
		close(p[1]);
		/* Wait for the events to be open; EOF means give up. */
		if (read(p[0], &c, 1) != 1)
			_exit(127);
		preexec_spin();
		if (r->nofile_raised)
			setrlimit(RLIMIT_NOFILE, &r->nofile);
		execvp(r->o.cmd[0], r->o.cmd);
		tool_err("cannot run '%s': %s", r->o.cmd[0], strerror(errno));
		_exit(127);
	}
	close(p[0]);
	*go = p[1];
	r->child = pid;
	return 0;
}

/* ---- output ---- */

/* FILE with %n and %t of --continuous expanded. */
static int out_path(const struct rec *r, char *buf, size_t len)
{
	const char *s = r->o.output;
	char stamp[32];
	struct tm tm;
	time_t secs = (time_t)(r->win_start_real / 1000000000LL);
	size_t n = 0;
	int w;

	gmtime_r(&secs, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
	for (; *s; s++) {
		if (r->o.continuous && s[0] == '%' && (s[1] == 'n' ||
						       s[1] == 't')) {
			if (s[1] == 'n')
				w = snprintf(buf + n, len - n, "%u", r->seq);
			else
				w = snprintf(buf + n, len - n, "%s", stamp);
			if (w < 0 || (size_t)w >= len - n)
				return -ENAMETOOLONG;
			n += (size_t)w;
			s++;
			continue;
		}
		if (n + 1 >= len)
			return -ENAMETOOLONG;
		buf[n++] = *s;
	}
	buf[n] = '\0';
	return 0;
}

/* Say what a process's jitdump or perf map gave, and what was wrong
 * with it. */
static void jit_report(void *ctx, const struct jitmap_report *j)
{
	struct rec *r = ctx;
	const char *k = j->dump ? "jitdump" : "perf map";

	r->jit_frames += j->frames;
	r->jit_named += j->named;
	if (j->dump_err)
		tool_err("warning: jitdump '%s' of process %d not used: %s%s%s",
			 j->dump_path, (int)j->pid, j->dump_bad[0] ?
			 j->dump_bad : strerror(-j->dump_err),
			 j->err ? "" : "; its perf map is", j->err ? "" :
			 " used instead");
	if (j->err == -ENOENT)
		return;
	if (j->err) {
		tool_err("warning: cannot read %s '%s': %s", k, j->path,
			 strerror(-j->err));
		return;
	}
	if (j->nbad)
		tool_err("warning: %s '%s': %u %s skipped (first: %s)", k,
			 j->path, j->nbad, j->dump ? "records" : "lines",
			 j->first_bad);
	if (j->cut)
		tool_err("warning: %s '%s': read up to %zu entries or "
			 "%u MiB; the rest is left out", k, j->path,
			 (size_t)SYMI_PERFMAP_MAX_ENTRIES, JITMAP_BYTES_MAX >> 20);
	if (j->trust == JITMAP_STALE)
		tool_err("warning: %s '%s' was last written %.3f s "
			 "before process %d started: another process's, whose "
			 "PID was reused; its names are not used (maps flagged "
			 "perf-map-stale)", k, j->path,
			 (double)(j->start_ns - j->mtime_ns) / 1e9, (int)j->pid);
	else if (j->trust == JITMAP_FOREIGN)
		tool_err("warning: %s '%s' is owned by neither root nor "
			 "the owner of process %d; its names are not used (maps "
			 "flagged perf-map-stale)", k, j->path, (int)j->pid);
	else if (j->trust == JITMAP_UNCHECKED)
		tool_err("warning: %s '%s': the start of process %d is "
			 "unknown, so the map's age could not be checked; used",
			 k, j->path, (int)j->pid);
}

static int write_prof(struct rec *r, int fd)
{
	int err;

	/* (a failure to reach the server is said and fails the run: the
	 * window is not written half-symbolized) */
	if (r->o.symbolize) {
		err = tool_prof_symbolize(r->prof, &r->o.sym);
		if (err)
			return err;
	}
	if (r->o.format == FMT_PPROF)
		return sym_prof_write_pprof(r->prof, fd);
	return sym_prof_write(r->prof, fd);
}

static void *take_kallsyms(void *arg)
{
	struct rec *r = arg;

	r->ksnap_err = ksnap_take(NULL, &r->ksnap, &r->ksnap_len);
	__atomic_store_n(&r->ksnap_done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* Start taking the snapshot, unless kernel frames are off. */
static void start_kallsyms(struct rec *r)
{
	if (!r->o.user_only &&
	    pthread_create(&r->ksnap_thread, NULL, take_kallsyms, r) == 0)
		r->ksnap_started = true;
}

/* The snapshot taken, once: NULL when there is none (said once). */
static const char *join_kallsyms(struct rec *r)
{
	if (!r->ksnap_started || r->ksnap_joined)
		return r->ksnap;
	pthread_join(r->ksnap_thread, NULL);
	r->ksnap_joined = true;
	if (r->ksnap_err == -EPERM)
		tool_err("warning: no kallsyms snapshot: the kernel hides its "
			 "addresses (not root, or kernel.kptr_restrict)");
	else if (r->ksnap_err)
		tool_err_code("kallsyms snapshot", r->ksnap_err);
	return r->ksnap;
}

/* The snapshot at @kpath, atomically: a hard link to the first one
 * written, else its bytes. */
static int put_kallsyms(struct rec *r, const char *kpath)
{
	char tmp[PATH_MAX + 48];
	int fd, err = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%d", kpath,
			     (int)getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	if (r->ksnap_first && link(r->ksnap_first, tmp) == 0)
		goto done;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	for (size_t off = 0; !err && off < r->ksnap_len;) {
		ssize_t n = write(fd, r->ksnap + off, r->ksnap_len - off);

		if (n < 0 && errno != EINTR)
			err = -errno;
		else if (n > 0)
			off += (size_t)n;
	}
	if (close(fd) < 0 && !err)
		err = -errno;
done:
	if (!err && rename(tmp, kpath) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
	else if (!r->ksnap_first)
		r->ksnap_first = strdup(kpath);
	return err;
}

/* --upload: the first snapshot written, to symd, once; its lines on
 * stderr (said unless -q), a failure said and counted in r->upload_err
 * (the run then exits 1). */
static void upload_kallsyms(struct rec *r)
{
	FILE *out;

	if (!r->o.upload || r->uploaded || !r->ksnap_first)
		return;
	r->uploaded = true;
	out = r->o.quiet ? fopen("/dev/null", "we") : stderr;
	if (!out) {
		r->upload_err = -errno;
		return;
	}
	r->upload_err = tool_upload_kallsyms(r->o.upload, r->o.token_file,
					     r->ksnap_first, out);
	if (out != stderr)
		fclose(out);
}

/*
 * write_kallsyms() - PATH.kallsyms beside the profile at @path when its
 * window has kernel frames: the kernel's symbols, so that they can be
 * named on another host (docs/record.md, "The kallsyms snapshot").  The
 * snapshot's thread may not be done at a --rotate window: its files are
 * owed, written at a later window's once it is, or at the @last.  A
 * failure is a warning: the profile is written.
 */
static void write_kallsyms(struct rec *r, const char *path, bool last)
{
	size_t cap = sizeof(r->ksnap_owed) / sizeof(r->ksnap_owed[0]);
	bool ready = !r->ksnap_started || r->ksnap_joined ||
		     __atomic_load_n(&r->ksnap_done, __ATOMIC_ACQUIRE);
	char *kpath = NULL;
	int err;

	if (r->kany_gen == r->gen && r->ksnap_nowed < cap &&
	    asprintf(&kpath, "%s.kallsyms", path) >= 0)
		r->ksnap_owed[r->ksnap_nowed++] = kpath;
	if (!r->ksnap_nowed ||
	    (!ready && !last && r->ksnap_nowed < cap))
		return;
	for (size_t i = 0; i < r->ksnap_nowed; i++) {
		if (join_kallsyms(r)) {
			err = put_kallsyms(r, r->ksnap_owed[i]);
			if (err)
				tool_err_code(r->ksnap_owed[i], err);
		}
		free(r->ksnap_owed[i]);
	}
	r->ksnap_nowed = 0;
	upload_kallsyms(r);
}

/* Write this window's profile to the output, atomically. */
static int write_window(struct rec *r, char *path, size_t pathlen,
			bool last)
{
	struct sym_prof_header h;
	char tmp[PATH_MAX + 32];
	int fd = -1, err, e2;
	unsigned i;

	memset(&h, 0, sizeof(h));
	h.host = r->host;
	h.tool = "sym-record";
	h.tool_version = SYM_VERSION;
	h.start_ns = r->win_start_real;
	h.duration_ns = now_ns(CLOCK_MONOTONIC) - r->win_start_mono;
	h.event = r->o.wall ? "wall" : r->o.sched_delay ? "sched-delay" :
		  r->o.off_cpu ? "off-cpu" : "cpu-clock";
	h.mode = r->o.cg == CG_DWARF && r->o.aggregate != AGG_KERNEL ?
		 "dwarf" : "fp";
	h.frequency = r->o.off_cpu ? 0 : r->o.hz;
	h.period = r->o.off_cpu ? 0 : r->attr.sample_period;
	h.weight_unit = "ns";
	h.samples = r->samples;
	offcpu_sync(r);
	h.lost = r->lost + offcpu_lost(r, r->oc_base);
	h.throttled = r->throttled;
	h.dropped = r->dropped;
	for (i = 0; i < SYM_PROF_NFLAGS; i++)
		h.flagged[i] = r->flagged[i];
	h.pidns = r->pidns;
	err = sym_prof_set_header(r->prof, &h);
	if (!err)
		err = sym_prof_set_release(r->prof, r->release);
	if (err)
		return err;
	/* JIT frames: the perf maps as they are now, at the window's end
	 * (the runtimes append while they run) */
	r->jit_frames = r->jit_named = 0;
	err = jitmap_name_profile(r->prof, "/tmp", jit_start, jit_dump,
				  jit_report, r);
	if (err)
		return err;
	err = out_path(r, path, pathlen);
	if (err)
		return err;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path,
			     (int)getpid()) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	err = write_prof(r, fd);
	if (!err && fsync(fd) < 0 && errno != EINVAL)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err) {
		e2 = errno;
		unlink(tmp);
		errno = e2;
		return err;
	}
	write_kallsyms(r, path, last);
	r->seq++;
	return 0;
}

/* Fail before sampling, not after, when the output cannot be written. */
static int check_output(struct rec *r)
{
	char path[PATH_MAX], tmp[PATH_MAX + 32];
	int fd, err;

	r->win_start_real = (int64_t)now_ns(CLOCK_REALTIME);
	err = out_path(r, path, sizeof(path));
	if (!err && (size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path,
				     (int)getpid()) >= sizeof(tmp))
		err = -ENAMETOOLONG;
	if (!err) {
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0) {
			err = -errno;
		} else {
			close(fd);
			unlink(tmp);
		}
	}
	if (err)
		tool_err_code(r->o.output, err);
	return err;
}

/* ---- the loop ---- */

static void disable_all(struct rec *r)
{
	size_t i;

	for (i = 0; i < r->nfds; i++)
		ioctl(r->fds[i], PERF_EVENT_IOC_DISABLE, 0);
}

static bool reap_child(struct rec *r, int flags)
{
	int status;
	pid_t p;

	if (r->child <= 0 || r->child_done)
		return r->child_done;
	do
		p = waitpid(r->child, &status, flags);
	while (p < 0 && errno == EINTR);
	if (p == r->child) {
		r->child_done = true;
		r->child_status = status;
	}
	return r->child_done;
}

/* --aggregate's lines of the summary: what was lost, and what it cost
 * in kernel memory. */
static void agg_summary(struct rec *r)
{
	const uint64_t *c = r->oc_now;
	struct offcpu_agg_stats as;

	uint64_t runs, ns = offcpu_prog_ns(r->oc, &runs);

	fprintf(stderr, "%s: --aggregate %s: BPF maps and buffers %.2f MB of "
		"kernel memory (memlock); BPF programs ran %.3f s in %" PRIu64
		" runs%s\n", tool_prog(),
		r->o.aggregate == AGG_KERNEL ? "kernel" : "user",
		(double)offcpu_map_bytes(r->oc) / 1e6, (double)ns / 1e9, runs,
		runs ? "" : " (kernel.bpf_stats_enabled is 0)");
	if (r->o.aggregate != AGG_KERNEL)
		return;
	offcpu_agg_stats(r->oc, &as);
	fprintf(stderr,
		"%s: aggregated in BPF: %" PRIu64 " events in %" PRIu64
		" rows over %" PRIu64 " drains (%.2f events a row), %" PRIu64
		" stacks read, %" PRIu64 " cleared in %" PRIu64 " clears "
		"(at most %" PRIu64 " held); lost %" PRIu64 " (hash "
		"collisions) + %" PRIu64 " (stacks map full) + %" PRIu64
		" (rows map full) + %" PRIu64 " (stack cleared before its "
		"row was read); frame-pointer stacks whole (unflagged): %"
		PRIu64 " of %" PRIu64 " events\n", tool_prog(),
		c[OFFCPU_CNT_AGGREGATED], as.rows, as.drains,
		as.rows ? (double)as.events / (double)as.rows : 0.0,
		as.stacks_read, as.stacks_cleared, as.clears, as.max_stacks,
		c[OFFCPU_CNT_COLLISION], c[OFFCPU_CNT_STACKSFULL],
		c[OFFCPU_CNT_COUNTSFULL], c[OFFCPU_CNT_ORPHAN], r->agg_whole,
		r->total_samples);
}

/* The on-CPU sampler's line (--aggregate user). */
static void oncpu_summary(struct rec *r)
{
	const uint64_t *c = r->oc_now;

	fprintf(stderr, "%s: on-CPU (perf_event): %" PRIu64 " samples "
		"written by BPF, lost %" PRIu64 " (ring buffer full), %" PRIu64
		" without a readable user stack\n", tool_prog(),
		c[OFFCPU_CNT_EVENTS], c[OFFCPU_CNT_LOST],
		c[OFFCPU_CNT_NOSTACK]);
}

/* The eBPF agent's stack copies (agent/stacklearn.h). */
static void learn_summary(struct rec *r)
{
	struct stacklearn_stats ls;
	uint64_t failed;

	if (r->o.fixed_stack) {
		fprintf(stderr, "%s: stack copies: the whole %u bytes at every "
			"event (--fixed-stack)\n", tool_prog(),
			r->o.stack_size);
		return;
	}
	offcpu_learn_stats(r->oc, &ls, &failed);
	fprintf(stderr,
		"%s: stack copies learned per process: %" PRIu64 " processes, %"
		PRIu64 " at a learned size (%u to %u bytes; floor %u, "
		"ceiling --stack-size %u); %.0f bytes copied per event; cut "
		"by a learned size: %" PRIu64 " events (flagged unwind), "
		"sizes grown %" PRIu64 " times, raised %" PRIu64 " times; %"
		PRIu64 " processes not tracked, %" PRIu64 " map updates "
		"failed\n", tool_prog(), ls.procs, ls.learned, ls.min_size,
		ls.max_size, r->o.stack_size < OFFCPU_STACK_FLOOR ?
		r->o.stack_size : OFFCPU_STACK_FLOOR, r->o.stack_size,
		ls.events ? (double)ls.bytes / (double)ls.events : 0.0,
		ls.cut, ls.grown, ls.raised, ls.untracked, failed);
}

/* --off-cpu's line of the summary: the BPF side's counters. */
static void offcpu_summary(struct rec *r)
{
	const uint64_t *c = r->oc_now;
	enum offcpu_kmemo km;

	if (r->o.aggregate)
		agg_summary(r);
	if (r->o.aggregate != AGG_KERNEL)
		learn_summary(r);
	if (r->o.bpf_cpu && !r->o.wall) {
		if (r->o.aggregate == AGG_USER)
			oncpu_summary(r);
		return;
	}

	fprintf(stderr,
		"%s: off-CPU (%s): %" PRIu64 " blocks written by BPF, %"
		PRIu64 " outside --min-block/--max-block, lost %" PRIu64
		" (ring buffer full) + %" PRIu64 " (no room for a "
		"switched-out thread), %" PRIu64 " without a readable user "
		"stack; sample probability %g\n",
		tool_prog(), offcpu_attach_kind(r->oc),
		c[OFFCPU_CNT_EVENTS], c[OFFCPU_CNT_FILTERED],
		c[OFFCPU_CNT_LOST], c[OFFCPU_CNT_MAPFULL],
		c[OFFCPU_CNT_NOSTACK], r->o.prob > 0 ? r->o.prob : 1.0);
	km = offcpu_kmemo_mode(r->oc);
	if (km == OFFCPU_KMEMO_OFF)
		fprintf(stderr, "%s: off-CPU: the kernel stack memo is off "
			"(SYM_KMEMO=off)\n", tool_prog());
	else if (km == OFFCPU_KMEMO_CHECK || km == OFFCPU_KMEMO_FAULT)
		fprintf(stderr, "%s: off-CPU: %" PRIu64 " kernel stacks "
			"from the kernel stack memo, each walked again: %" PRIu64
			" differed (SYM_KMEMO=%s)\n", tool_prog(),
			c[OFFCPU_CNT_KMEMO_HIT], c[OFFCPU_CNT_KMEMO_BAD],
			km == OFFCPU_KMEMO_CHECK ? "check" : "fault");
	else if (c[OFFCPU_CNT_KMEMO_HIT])
		fprintf(stderr, "%s: off-CPU: %" PRIu64 " kernel stacks "
			"from the kernel stack memo, not walked again\n",
			tool_prog(), c[OFFCPU_CNT_KMEMO_HIT]);
	if (c[OFFCPU_CNT_UNSEEN])
		fprintf(stderr, "%s: off-CPU: %" PRIu64 " switch-ins the "
			"kernel did not trace (a thread switched out again "
			"with no switch-in seen): %" PRIu64 " ended at the "
			"thread's last arrival (sched_info), %" PRIu64
			" counted lost\n", tool_prog(), c[OFFCPU_CNT_UNSEEN],
			c[OFFCPU_CNT_UNSEEN] - c[OFFCPU_CNT_UNSEEN_LOST],
			c[OFFCPU_CNT_UNSEEN_LOST]);
	if (c[OFFCPU_CNT_TGIDSFULL])
		fprintf(stderr, "%s: off-CPU: %" PRIu64 " processes forked "
			"by recorded ones not recorded: the filter map is full "
			"(1024 live processes)\n", tool_prog(),
			c[OFFCPU_CNT_TGIDSFULL]);
	if (r->o.sched_delay)
		fprintf(stderr, "%s: sched-delay: the blocks above are waits "
			"for a CPU; %" PRIu64 " switch-ins without a wake-up "
			"seen (blocked before the agent started)\n",
			tool_prog(), c[OFFCPU_CNT_NOWAKE]);
}

/* The event memos' part of the unwind summary. */
static void em_summary(const struct rec *r)
{
	struct evmemo_stats k, u;

	if (!r->em_k)
		return;
	evmemo_stats(r->em_k, &k);
	evmemo_stats(r->em_u, &u);
	fprintf(stderr, "; off-CPU frames answered by the event memo: kernel "
		"%" PRIu64 " of %" PRIu64 ", user %" PRIu64 " of %" PRIu64,
		k.hits, k.hits + k.misses, u.hits, u.hits + u.misses);
	if (r->em_check)
		fprintf(stderr, " (checked %" PRIu64 ", differed %" PRIu64
			")", r->em_checked, r->em_bad);
}

/* How the CFI unwinds stopped short, and the mappings the unwinder was
 * refused (a file gone, another build ID): why stacks are flagged unwind. */
static void unwind_summary(const struct rec *r)
{
	struct unwind_stats st;

	fprintf(stderr,
		"%s: CFI unwinds stopped short: no mapping %" PRIu64
		", no CFI %" PRIu64 ", stack copy short %" PRIu64
		", CFI not evaluable %" PRIu64 "; mappings the unwinder "
		"could not take %" PRIu64, tool_prog(),
		r->uw_stops[UNWIND_STOP_NOMAP], r->uw_stops[UNWIND_STOP_NOCFI],
		r->uw_stops[UNWIND_STOP_READ], r->uw_stops[UNWIND_STOP_BADCFI],
		r->uw_map_failed);
	if (r->uw_map_failed)
		fprintf(stderr, " (the last: %s: %s)", r->uw_map_path,
			strerror(-r->uw_map_err));
	unwinder_stats(r->uw, &st);
	fprintf(stderr, "; unwinds answered by the memo %" PRIu64 " of %"
		PRIu64, st.memo_hits, st.memo_hits + st.memo_misses);
	em_summary(r);
	fputc('\n', stderr);
}

static void summary(struct rec *r, const char *path, uint64_t run_ns)
{
	struct rusage ru;
	struct pm_stats ps;
	double cpu;

	getrusage(RUSAGE_SELF, &ru);
	cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	      (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	pm_get_stats(r->pm, &ps);
	fprintf(stderr,
		"%s: %s: %" PRIu64 " samples in %.3f s, %zu unique stacks "
		"(last file); flagged %" PRIu64 " (truncated %" PRIu64
		", badreturn %" PRIu64 ", leaf %" PRIu64 ", unwind %" PRIu64
		", kernel %" PRIu64 "), lost %" PRIu64 ", throttled %" PRIu64
		", dropped %" PRIu64 "\n",
		tool_prog(), path, r->total_samples, (double)run_ns / 1e9,
		sym_prof_nstacks(r->prof), r->total_flagged, r->total_flags[0],
		r->total_flags[1], r->total_flags[2], r->total_flags[3],
		r->total_flags[4], r->total_lost + offcpu_lost(r,
		(const uint64_t[OFFCPU_NCNT]){ 0 }), r->total_throttled,
		r->total_dropped);
	if (r->oc)
		offcpu_summary(r);
	else
		fprintf(stderr, "%s: perf rings %.2f MB of kernel memory (%d "
			"CPUs x %zu + 1 pages)\n", tool_prog(),
			(double)r->ncpus * (double)(r->o.mmap_pages + 1) *
			(double)sysconf(_SC_PAGESIZE) / 1e6, r->ncpus,
			r->o.mmap_pages);
	fprintf(stderr,
		"%s: agent CPU %.3f s (%.1f us per sample; reading and "
		"unwinding %.1f us per sample); %s; leaf repairs "
		"%" PRIu64 ", unmapped leaves %" PRIu64 ", return addresses "
		"not after a call %" PRIu64 "; ELF files read %" PRIu64
		", build-ID cache hits %" PRIu64 ", unreadable %" PRIu64 "\n",
		tool_prog(), cpu,
		r->total_samples ? cpu * 1e6 / (double)r->total_samples : 0.0,
		r->total_samples ? (double)r->round_ns / 1e3 /
				   (double)r->total_samples : 0.0,
		r->attr.exclude_kernel ? "user frames only" :
					 "kernel frames kept",
		r->repaired, r->unmapped_leaf, r->not_after_call, ps.elf_reads,
		ps.elf_cache_hits + ps.bid_hits, ps.no_file);
	if (r->jit_frames)
		fprintf(stderr,
			"%s: JIT frames (last file): %" PRIu64 " of %" PRIu64
			" unique frames in anonymous code named from perf "
			"maps or jitdumps\n", tool_prog(), r->jit_named,
			r->jit_frames);
	if (r->uw)
		unwind_summary(r);
	if (r->o.cg == CG_DWARF)
		fprintf(stderr,
			"%s: stack copy of %u bytes; whole stacks needed, 50%% / "
			"99%% / all of them: %u / %u / %u bytes; up to their "
			"last frame without a frame pointer: %u / %u / %u "
			"bytes\n", tool_prog(), r->o.stack_size,
			extent_quantile(r->extent_used, 0.5),
			extent_quantile(r->extent_used, 0.99),
			extent_quantile(r->extent_used, 1.0),
			extent_quantile(r->extent_nofp, 0.5),
			extent_quantile(r->extent_nofp, 0.99),
			extent_quantile(r->extent_nofp, 1.0));
	if (r->fpc) {
		struct fpcheck_stats fs;

		fpcheck_stats(r->fpc, &fs);
		fprintf(stderr,
			"%s: fp chains: %" PRIu64 " end short of an outermost "
			"frame, %" PRIu64 " go through a frame without a frame "
			"pointer (both flagged unwind), %" PRIu64 " frames "
			"past an outermost one dropped; %" PRIu64 " libc start "
			"sites known%s; %" PRIu64 " CFI lookups, %" PRIu64
			" cached\n",
			tool_prog(), r->fp_incomplete, r->fp_unsound,
			r->fp_past_outermost, fs.sites,
			fs.sites ? "" : " (chains ending in main's or a "
					"thread's caller are flagged)",
			fs.lookups, fs.hits);
	}
}

/* The modules loaded now, for their maps (prof_kernel_map()); none
 * with --user-only.  Modules loaded later go in the kernel's map. */
static int rec_kmods(struct rec *r)
{
	int err;

	if (r->o.user_only)
		return 0;
	err = ksnap_kmods_take(NULL, &r->kmods, &r->nkmods);
	if (err == -ENOMEM)
		return err;
	if (err)
		r->nkmods = 0;
	if (!r->nkmods)
		return 0;
	r->kmod_id = calloc(r->nkmods, sizeof(*r->kmod_id));
	r->kmod_gen = calloc(r->nkmods, sizeof(*r->kmod_gen));
	if (!r->kmod_id || !r->kmod_gen)
		return -ENOMEM;
	/* (windows count from 1: no module has a map yet) */
	return 0;
}

/* Everything sampling needs before any event or child exists. */
static int setup(struct rec *r)
{
	struct pm_hooks hooks = { r, hook_map, hook_unmap, hook_forget };
	struct rlimit rl;
	struct utsname u;
	int err;

	if (gethostname(r->host, sizeof(r->host) - 1) != 0)
		r->host[0] = '\0';
	if (uname(&u) == 0)
		snprintf(r->release, sizeof(r->release), "%s", u.release);
	/* -p opens one event per thread and CPU: allow what the hard limit
	 * allows. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		r->nofile = rl;
		r->nofile_raised = true;
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	r->pidns = pm_pidns(0);
	pm_kernel_build_id(r->kernel_bid, sizeof(r->kernel_bid));
	if (ksnap_text_here(&r->ktext) != 0)
		r->ktext = 0;
	err = rec_kmods(r);
	if (err)
		return fail(err, "cannot read the loaded modules");
	err = check_output(r);
	if (err)
		return err;
	err = online_cpus(r);
	if (err) {
		tool_err("cannot read the online CPUs");
		return err;
	}
	r->bid_leaks = perf_build_id_leaks() != 0;
	make_attr(r);
	if (!r->o.mmap_pages)
		r->o.mmap_pages = default_pages(r);
	set_watermark(r, r->o.mmap_pages);
	/* Both modes: dwarf mode unwinds with it, fp mode repairs the leaf
	 * and checks its chains with the CFI it reads. */
	err = unwinder_new(&r->uw);
	if (err) {
		tool_err("cannot set up the CFI unwinder: %s", strerror(-err));
		return err;
	}
	/* Before any child or event exists: a thread. */
	start_kallsyms(r);
	if (r->o.cg == CG_FP || r->o.aggregate == AGG_KERNEL) {
		/* Before any child or event exists: it starts a thread. */
		err = fpcheck_new(r->uw, &r->fpc);
		if (err)
			return fail(err, "cannot set up the fp chain checks");
		fpcheck_learn(r->fpc);
	}
	err = pm_new(&hooks, &r->pm);
	if (err)
		return fail(err, "cannot set up the process maps");
	err = retcheck_new(&r->rc);
	if (err)
		return fail(err, "cannot set up the return address checks");
	err = new_window(r);
	if (err)
		return fail(err, "cannot start a profile");
	return 0;
}

/* One ring per CPU (mapped when its first event opens), and *pfdp to
 * poll them with (caller frees). */
static int alloc_rings(struct rec *r, struct pollfd **pfdp)
{
	int i;

	r->rings = calloc((size_t)r->ncpus, sizeof(*r->rings));
	/* (and one more: the BPF agent's wake-up, offcpu_poll_fd()) */
	*pfdp = calloc((size_t)r->ncpus + 1, sizeof(**pfdp));
	if (!r->rings || !*pfdp)
		return fail(-ENOMEM, "cannot allocate the rings");
	for (i = 0; i < r->ncpus; i++) {
		r->rings[i] = calloc(1, sizeof(**r->rings));
		if (!r->rings[i])
			return fail(-ENOMEM, "cannot allocate the rings");
		r->rings[i]->fd = -1;
	}
	return 0;
}

/* Start the command (stopped before its exec, until *go is written) or
 * open the events of -p or -a.  Failures are said by open_task() and
 * open_pids(). */
static int open_events(struct rec *r, int *go)
{
	int err;

	if (r->o.cmd) {
		err = start_child(r, go);
		if (err) {
			tool_err("cannot fork: %s", strerror(-err));
			return err;
		}
		err = open_task(r, r->child, true);
		if (err == -ESRCH)
			tool_err("'%s' ended before its events opened",
				 r->o.cmd[0]);
	} else if (r->o.all) {
		err = open_task(r, -1, true);
	} else {
		err = open_pids(r);
	}
	return err;
}

static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_chld;
	sigaction(SIGCHLD, &sa, NULL);
}

/* The sampling loop's state. */
struct loop {
	struct pollfd *pfd;	/* free() */
	int go;			/* the child's go pipe; close if >= 0 */
	uint64_t start, deadline, rotate_at;	/* CLOCK_MONOTONIC ns */
	char path[PATH_MAX];	/* the last file written */
};

/* Start the clock and the sampling: the command's exec, or the maps of
 * -p's processes. */
static int begin(struct rec *r, struct loop *L)
{
	int err;

	L->start = now_ns(CLOCK_MONOTONIC);
	r->win_start_mono = L->start;
	r->win_start_real = (int64_t)now_ns(CLOCK_REALTIME);
	if (r->o.duration > 0)
		L->deadline = L->start + (uint64_t)(r->o.duration * 1e9);
	if (r->o.continuous)
		L->rotate_at = L->start + (uint64_t)(r->o.rotate * 1e9);
	if (r->o.cmd) {
		/* Go: the events start at its exec. */
		if (write(L->go, "g", 1) != 1) {
			err = -errno;
			tool_err("cannot start '%s': %s", r->o.cmd[0],
				 strerror(-err));
			return err;
		}
		close(L->go);
		L->go = -1;
	} else {
		for (size_t k = 0; k < r->o.npids; k++) {
			pm_scan(r->pm, r->o.pids[k]);
			pm_scan_threads(r->pm, r->o.pids[k]);
		}
	}
	for (int i = 0; i < r->ncpus; i++) {
		L->pfd[i].fd = r->rings[i]->fd;
		L->pfd[i].events = POLLIN;
	}
	L->pfd[r->ncpus].fd = r->oc ? offcpu_poll_fd(r->oc) : -1;
	L->pfd[r->ncpus].events = POLLIN;
	return 0;
}

/* -p without --continuous: is any target still there? */
static bool targets_alive(const struct rec *r)
{
	for (size_t k = 0; k < r->o.npids; k++) {
		if (kill(r->o.pids[k], 0) == 0 || errno == EPERM)
			return true;
	}
	return false;
}

/* --continuous: write this window's file and start the next window. */
static int rotate(struct rec *r, struct loop *L)
{
	int err = write_window(r, L->path, sizeof(L->path), false);

	if (err) {
		tool_err_code(r->o.output, err);
		return err;
	}
	err = new_window(r);
	if (err)
		return fail(err, "cannot start a profile");
	L->rotate_at = now_ns(CLOCK_MONOTONIC) + (uint64_t)(r->o.rotate * 1e9);
	return 0;
}

/* Sample until a signal, the deadline, or the end of the targets. */
static int sample(struct rec *r, struct loop *L)
{
	uint64_t now, wait;
	int i, n, err;

	while (!stop_signal) {
		now = now_ns(CLOCK_MONOTONIC);
		wait = POLL_MS * 1000000ULL;
		if (L->deadline && L->deadline - now < wait)
			wait = L->deadline > now ? L->deadline - now : 0;
		if (L->rotate_at && L->rotate_at - now < wait)
			wait = L->rotate_at > now ? L->rotate_at - now : 0;
		if (r->oc)	/* sooner when the BPF ring fills fast */
			wait = offcpu_wait_ns(r->oc, wait);
		n = poll(L->pfd, (nfds_t)r->ncpus + 1,
			 (int)(wait / 1000000ULL));
		/* A ring whose events all ended (their tasks exited) reports
		 * POLLHUP for good: stop polling it, or poll would spin. */
		for (i = 0; n > 0 && i < r->ncpus; i++)
			if (L->pfd[i].revents & (POLLHUP | POLLERR))
				L->pfd[i].fd = -1;
		if (n < 0 && errno != EINTR)
			return fail(-errno, "cannot poll the rings");
		err = round_once(r);
		if (err)
			return fail(err, "cannot process the samples");
		if (child_exited && reap_child(r, WNOHANG))
			break;
		/* -p: stop when every target is gone. */
		if (r->o.npids && !r->o.continuous && !targets_alive(r))
			break;
		now = now_ns(CLOCK_MONOTONIC);
		if (L->deadline && now >= L->deadline)
			break;
		if (L->rotate_at && (now >= L->rotate_at ||
				     sym_prof_nstacks(r->prof) >=
					     r->o.max_stacks)) {
			err = rotate(r, L);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Stop the events and the command, write the last window. */
static int finish(struct rec *r, struct loop *L)
{
	int err;

	disable_all(r);
	if (r->child > 0 && !reap_child(r, WNOHANG)) {
		kill(r->child, SIGTERM);
		r->child_killed = true;
		reap_child(r, 0);
	}
	err = round_once(r);
	if (err)
		return fail(err, "cannot process the samples");
	/* A command that could not run (the child's exec failed: 127, and
	 * not one sample) made no profile: no file, not an empty one. */
	if (r->child > 0 && WIFEXITED(r->child_status) &&
	    WEXITSTATUS(r->child_status) == 127 && r->total_samples == 0) {
		tool_err("'%s' did not run; nothing written", r->o.cmd[0]);
		return -ENOEXEC;
	}
	err = write_window(r, L->path, sizeof(L->path), true);
	if (err) {
		tool_err_code(r->o.output, err);
		return err;
	}
	if (!r->o.quiet)
		summary(r, L->path, now_ns(CLOCK_MONOTONIC) - L->start);
	return 0;
}

/* Every failure says what failed on stderr. */
static int run(struct rec *r)
{
	struct loop L = { .go = -1 };
	int err;

	err = setup(r);
	if (!err)
		err = alloc_rings(r, &L.pfd);
	if (!err && (r->o.off_cpu || r->o.wall || r->o.bpf_cpu))
		err = offcpu_start(r);
	if (!err)
		err = open_events(r, &L.go);
	if (!err)
		err = offcpu_targets(r);
	if (!err) {
		catch_signals();
		err = begin(r, &L);
	}
	if (!err)
		err = sample(r, &L);
	if (!err)
		err = finish(r, &L);
	if (L.go >= 0)
		close(L.go);	/* the child exits without running CMD */
	if (r->child > 0 && !r->child_done) {
		kill(r->child, SIGTERM);
		r->child_killed = true;
		reap_child(r, 0);
	}
	free(L.pfd);
	return err;
}

/* The exit status to pass on: the command's, when it ended by itself
 * (128 + N for a signal N, as a shell says it), so that a script sees the
 * same status with and without the recorder; otherwise 0.  A SIGINT or
 * SIGTERM to the recorder asks it to stop, and it did: 0 (Ctrl-C at a
 * terminal reaches the command too, which may die of it first). */
static int child_exit(const struct rec *r)
{
	if (r->child <= 0 || !r->child_done || r->child_killed || stop_signal)
		return TOOL_EXIT_OK;
	if (WIFEXITED(r->child_status))
		return WEXITSTATUS(r->child_status);
	if (WIFSIGNALED(r->child_status))
		return 128 + WTERMSIG(r->child_status);
	return TOOL_EXIT_OK;
}

static void release(struct rec *r)
{
	size_t i;

	if (r->rings) {
		for (i = 0; i < (size_t)r->ncpus; i++) {
			if (r->rings[i])
				perf_ring_unmap(r->rings[i]);
			free(r->rings[i]);
		}
	}
	for (i = 0; i < r->nfds; i++)
		close(r->fds[i]);
	free(r->fds);
	free(r->rings);
	free(r->cpus);
	pm_free(r->pm);
	retcheck_free(r->rc);
	fpcheck_free(r->fpc);
	offcpu_close(r->oc);
	evmemo_free(r->em_k);
	evmemo_free(r->em_u);
	unwinder_free(r->uw);
	sym_prof_free(r->prof);
	if (r->ksnap_started && !r->ksnap_joined)
		pthread_join(r->ksnap_thread, NULL);
	free(r->ksnap);
	free(r->ksnap_first);
	while (r->ksnap_nowed)
		free(r->ksnap_owed[--r->ksnap_nowed]);
	idset_release(&r->procs);
	idset_release(&r->threads);
	jit_procs_clear(r);
	free(r->jprocs);
	free(r->kmods);
	free(r->kmod_id);
	free(r->kmod_gen);
	free(r->sb_buf);
	free(r->sbs);
	free(r->o.pids);
}

int cmd_record(int argc, char **argv)
{
	struct rec *r;
	int err, status;

	r = calloc(1, sizeof(*r));
	if (!r) {
		tool_err("out of memory");
		return TOOL_EXIT_FAIL;
	}
	err = parse_opts(&r->o, argc, argv);
	if (err) {
		release(r);
		free(r);
		return err > 0 ? TOOL_EXIT_OK : TOOL_EXIT_USAGE;
	}
	err = run(r);
	status = err ? TOOL_EXIT_FAIL : child_exit(r);
	if (!err && r->o.upload && !r->uploaded)
		tool_err("warning: --upload: no kallsyms snapshot was written "
			 "(no kernel frames, or the kernel hides its "
			 "addresses): nothing sent");
	if (!err && r->upload_err && status == TOOL_EXIT_OK)
		status = TOOL_EXIT_FAIL;
	release(r);
	free(r);
	return status;
}
