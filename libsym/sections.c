/*
 * sections.c - getting the debug sections ready for libdw, cheaply.
 *
 * libdw's dwarf_begin_elf() decompresses every compressed .debug_*
 * section it knows, with zlib, whether or not it will be read.  In
 * Debian's debug files that is most of the cold-start time: libc's
 * location lists alone are larger than its line tables.  Before libdw
 * sees the file, symi_elf_prepare_dwarf():
 *
 *  - empties the compressed sections the table builder never reads
 *    (location lists, macros, call frames, name indexes), so they are
 *    never decompressed;
 *  - decompresses the zlib sections it does read with libdeflate, which
 *    is two to three times faster than zlib's inflate.
 *
 * Both leave the section looking uncompressed to libelf, the same way
 * elf.c handles zstd sections: the cached Elf_Data points at our buffer
 * (owned by e->bufs) and the header loses SHF_COMPRESSED.  Nothing is
 * written to the file.  Any failure here is not an error: the section
 * is left as it was, for libdw to handle or to report.
 *
 * Threads.  When the sections to inflate hold more than INFLATE_MT_MIN
 * compressed bytes (libjvm's debug file: 140 MB), they are inflated on
 * INFLATE_THREADS threads: the caller's and INFLATE_THREADS - 1 short-
 * lived pthreads, joined before this function returns.  The work is cut
 * in three steps, so that only the middle one runs in parallel:
 *
 *  1. (caller's thread) every libelf call: headers, Elf_Data, and one
 *     symi_malloc()ed output buffer per section, so allocation failures
 *     and the fault-injection counter stay on one thread, in section
 *     order.  The jobs are sorted largest first.
 *  2. (all threads) each thread owns a libdeflate decompressor and takes
 *     the next job with an atomic fetch-and-add on a shared index; that
 *     index is the only shared mutable state.  A job is written by the
 *     one thread that took it: its result.  The input is the read-only
 *     mapped (or copied) file image.  Worker threads block every signal,
 *     so the caller's handlers keep running where they did.
 *  3. (caller's thread, after the join) results are read: a section that
 *     inflated becomes plain data as above; one that did not is left to
 *     libdw, as before; a job no thread could run (no decompressor)
 *     makes the call fail with -ENOMEM.
 *
 * One zlib stream cannot be split, so the time is bounded below by the
 * largest section (.debug_info, about four fifths of libjvm's bytes).
 * Output buffers of 4 MiB or more are madvise()d MADV_HUGEPAGE before
 * they are written (symi_advise_huge()).
 * A thread that cannot be created is not an error: the caller's thread
 * does the work alone.
 *
 * Limits: a section may expand to at most 4 GiB and at most 1032 times
 * its compressed size (deflate's maximum ratio), so a forged ch_size
 * cannot make us allocate more than the input could produce.  Above
 * that, the decompression limits of the process (sym_set_inflate_limits(),
 * kept here) bound what an honest but hostile file makes us write: a
 * section whose header declares more than they allow fails the whole
 * file with -SYM_E_INFLATE_LIMIT before a byte is allocated for it (it
 * is not left to libdw, which would decompress it), and the zstd
 * sections of elf.c are checked the same way, all of them before the
 * first is decompressed.  Declared sizes are what count: a section that
 * declares less than it holds fails to decompress at its declared size.
 * A file libdw opens and decompresses itself (a split-DWARF .dwo) has
 * every compressed section header checked by symi_inflate_check_file()
 * before libdw gets to it.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>

#include "internal.h"
#include "base.h"

#define SECTION_CAP ((uint64_t)4 << 30)
#define DEFLATE_MAX_RATIO 1032

/* Threads (the caller's included), and the input that pays for them. */
#define INFLATE_THREADS 2
#define INFLATE_MT_MIN ((size_t)4 << 20)


/* Decompression limits: the defaults of struct sym_inflate_limits. */
#define LIMIT_SECTION ((uint64_t)1 << 30)
#define LIMIT_FILE ((uint64_t)2 << 30)
#define LIMIT_RATIO 256
/* Every section may decompress to this much whatever its ratio. */
#define RATIO_FREE ((uint64_t)1 << 20)

/* Set by sym_set_inflate_limits(), 0 for the default; atomic. */
static uint64_t set_section, set_file;
static uint32_t set_ratio;

/* The defaults, after the environment; read once. */
static struct sym_inflate_limits env_lim;
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

/* A size from the environment: digits and an optional K, M or G (powers
 * of 1024).  0 when unset or malformed (then the default stays). */
static uint64_t env_size(const char *var)
{
	const char *v = getenv(var);
	char *end;
	unsigned long long n;
	unsigned shift = 0;

	if (!v || !*v)
		return 0;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (*end == 'K' || *end == 'k')
		shift = 10;
	else if (*end == 'M' || *end == 'm')
		shift = 20;
	else if (*end == 'G' || *end == 'g')
		shift = 30;
	if (shift)
		end++;
	if (errno || end == v || *end || v[0] == '-' ||
	    n > (UINT64_MAX >> shift)) {
		symi_warn("elf: ignoring %s='%s': not a size", var, v);
		return 0;
	}
	return (uint64_t)n << shift;
}

static void env_init(void)
{
	uint64_t r = env_size("SYM_MAX_INFLATE_RATIO");

	env_lim.section = env_size("SYM_MAX_INFLATE_SECTION") ?: LIMIT_SECTION;
	env_lim.file = env_size("SYM_MAX_INFLATE_FILE") ?: LIMIT_FILE;
	env_lim.ratio = r && r <= UINT32_MAX ? (uint32_t)r : LIMIT_RATIO;
}

int sym_set_inflate_limits(const struct sym_inflate_limits *lim)
{
	__atomic_store_n(&set_section, lim ? lim->section : 0,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&set_file, lim ? lim->file : 0, __ATOMIC_RELAXED);
	__atomic_store_n(&set_ratio, lim ? lim->ratio : 0, __ATOMIC_RELAXED);
	return 0;
}

void sym_get_inflate_limits(struct sym_inflate_limits *lim)
{
	if (!lim)
		return;
	pthread_once(&env_once, env_init);
	lim->section = __atomic_load_n(&set_section, __ATOMIC_RELAXED) ?:
		       env_lim.section;
	lim->file = __atomic_load_n(&set_file, __ATOMIC_RELAXED) ?:
		    env_lim.file;
	lim->ratio = __atomic_load_n(&set_ratio, __ATOMIC_RELAXED) ?:
		     env_lim.ratio;
}

int symi_inflate_check(struct symi_elf *e, const char *name, size_t ndx,
		       uint64_t in, uint64_t out)
{
	struct sym_inflate_limits lim;
	const char *what = NULL, *var = NULL;
	unsigned long long max = 0;

	sym_get_inflate_limits(&lim);
	if (out > lim.section) {
		what = "per-section";
		var = "SYM_MAX_INFLATE_SECTION";
		max = lim.section;
	} else if (out > RATIO_FREE &&
		   (out - RATIO_FREE - 1) / lim.ratio >= in) {
		what = "ratio";
		var = "SYM_MAX_INFLATE_RATIO";
		max = (unsigned long long)lim.ratio * in + RATIO_FREE;
	} else if (out > lim.file || e->inflated > lim.file - out) {
		what = "per-file";
		var = "SYM_MAX_INFLATE_FILE";
		max = lim.file;
	}
	if (what) {
		symi_warn("elf: section %zu (%s) of '%s' declares %llu bytes from %llu compressed, over the %s decompression limit (%llu bytes; %s)",
			  ndx, name ? name : "?", e->path ? e->path : "<memory>",
			  (unsigned long long)out, (unsigned long long)in, what,
			  max, var);
		return -SYM_E_INFLATE_LIMIT;
	}
	e->inflated += out;
	return 0;
}

/* Sections the table builder never reads.  .debug_aranges is read, by
 * the lazy path's unit index (dwarf.c): libjvm's is 80 KB compressed. */
static const char *const unused[] = {
	".debug_loc", ".debug_loclists", ".debug_macro", ".debug_macinfo",
	".debug_frame", ".debug_pubnames", ".debug_pubtypes",
	".debug_gnu_pubnames", ".debug_gnu_pubtypes", ".debug_names",
	".debug_cu_index", ".debug_tu_index",
	NULL,
};

bool symi_debug_section_unused(const char *name)
{
	for (size_t i = 0; unused[i]; i++) {
		if (strcmp(name, unused[i]) == 0)
			return true;
	}
	return false;
}

enum job_state { JOB_PENDING, JOB_DONE, JOB_BAD };

/* One zlib section.  Set up and consumed by the caller's thread; between
 * the two, state and result are written by the one thread that ran it. */
struct job {
	Elf_Scn *scn;
	Elf_Data *data;		/* still the compressed data until step 3 */
	const void *src;	/* borrowed: the file image */
	size_t in, out;		/* compressed bytes, ch_size */
	uint64_t align;		/* ch_addralign */
	void *buf;		/* free() unless handed to e->bufs */
	enum job_state state;
	enum libdeflate_result result;	/* when JOB_BAD */
};

struct pool {
	struct job *jobs;	/* borrowed */
	size_t n;
	size_t next;		/* next job to take: atomic */
};

/* Take jobs until none is left.  Runs on every thread; touches only the
 * pool's index and the jobs it takes.  No decompressor, no jobs: they
 * stay pending for the other threads or for the caller to report. */
static void *work(void *arg)
{
	struct pool *p = arg;
	struct libdeflate_decompressor *dec;
	size_t i;

	dec = libdeflate_alloc_decompressor();
	if (!dec)
		return NULL;
	while ((i = __atomic_fetch_add(&p->next, 1, __ATOMIC_RELAXED)) <
	       p->n) {
		struct job *j = &p->jobs[i];
		size_t got = 0;

		j->result = libdeflate_zlib_decompress(dec, j->src, j->in,
						       j->buf, j->out, &got);
		j->state = j->result == LIBDEFLATE_SUCCESS && got == j->out ?
			   JOB_DONE : JOB_BAD;
	}
	libdeflate_free_decompressor(dec);
	return NULL;
}

/* Largest input first, then section order, so the schedule (and the
 * order of allocations after it) is the same on every run. */
static int job_cmp(const void *a, const void *b)
{
	const struct job *x = a, *y = b;

	if (x->in != y->in)
		return x->in > y->in ? -1 : 1;
	return elf_ndxscn(x->scn) < elf_ndxscn(y->scn) ? -1 : 1;
}

/* Run the pool on this thread and, when it pays, on helpers too. */
static void run(struct pool *p, size_t total_in)
{
	pthread_t tid[INFLATE_THREADS - 1];
	size_t nt = 0;

	if (p->n > 1 && total_in > INFLATE_MT_MIN) {
		sigset_t all, old;

		/* Helpers inherit a full mask: no signal of the caller's
		 * (profiling timers, SIGINT) is delivered to them. */
		sigfillset(&all);
		if (pthread_sigmask(SIG_SETMASK, &all, &old) == 0) {
			while (nt < INFLATE_THREADS - 1 && nt + 1 < p->n &&
			       pthread_create(&tid[nt], NULL, work, p) == 0)
				nt++;
			pthread_sigmask(SIG_SETMASK, &old, NULL);
		}
	}
	work(p);
	for (size_t t = 0; t < nt; t++)
		pthread_join(tid[t], NULL);
}

/*
 * Output buffers ask for transparent huge pages (symi_advise_huge()).
 * libdw then walks .debug_info with far fewer TLB misses and page
 * faults: on libjvm (257 MB of .debug_info) this saves 0.5 to 1 s of a
 * 6 s cold start, with the same peak RSS, since the buffer is written in
 * full anyway.
 */

/* Step 1 for one section: a job, or nothing when it is implausible. */
static int add_job(struct job **jobs, size_t *n, size_t *cap, Elf_Scn *scn,
		   Elf_Data *data, const GElf_Chdr *ch, size_t chsz)
{
	size_t in = data->d_size - chsz;
	struct job *j;
	void *arr = *jobs;

	if (ch->ch_size > SECTION_CAP ||
	    ch->ch_size / DEFLATE_MAX_RATIO > in)
		return 0;	/* implausible: leave it to libdw */
	if (symi_grow(&arr, cap, *n + 1, sizeof(**jobs)))
		return -ENOMEM;
	*jobs = arr;
	j = &(*jobs)[*n];
	memset(j, 0, sizeof(*j));
	j->buf = symi_malloc(ch->ch_size ? ch->ch_size : 1);
	if (!j->buf)
		return -ENOMEM;
	symi_advise_huge(j->buf, ch->ch_size);
	j->scn = scn;
	j->data = data;
	j->src = (const char *)data->d_buf + chsz;
	j->in = in;
	j->out = ch->ch_size;
	j->align = ch->ch_addralign;
	(*n)++;
	return 0;
}

/*
 * A .zdebug_* section (GNU's older compression: "ZLIB", the size as 8
 * bytes big-endian, a zlib stream), which libdw decompresses itself:
 * check the size it declares.  One it cannot read is libdw's to report.
 */
static int check_zdebug(struct symi_elf *e, Elf_Scn *scn, const char *name)
{
	Elf_Data *data = elf_rawdata(scn, NULL);
	const unsigned char *p;
	uint64_t out = 0;

	if (!data || !data->d_buf || data->d_size < 12 ||
	    memcmp(data->d_buf, "ZLIB", 4) != 0)
		return 0;
	p = (const unsigned char *)data->d_buf + 4;
	for (int i = 0; i < 8; i++)
		out = out << 8 | p[i];
	return symi_inflate_check(e, name, elf_ndxscn(scn), data->d_size - 12,
				  out);
}

int symi_inflate_check_file(struct symi_elf *e)
{
	size_t shstrndx, chsz;
	Elf_Scn *scn = NULL;
	int err = 0;

	if (!e->elf || elf_getshdrstrndx(e->elf, &shstrndx) != 0)
		return 0;
	chsz = e->ehdr.e_ident[EI_CLASS] == ELFCLASS32 ? sizeof(Elf32_Chdr) :
							 sizeof(Elf64_Chdr);
	while (!err && (scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		GElf_Chdr ch;
		Elf_Data *data;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(e->elf, shstrndx, sh.sh_name)))
			continue;
		if (!(sh.sh_flags & SHF_COMPRESSED)) {
			if (strncmp(name, ".zdebug_", 8) == 0)
				err = check_zdebug(e, scn, name);
			continue;
		}
		/* Whatever the compression: a libdw that knows it would
		 * decompress the section whole. */
		if (strncmp(name, ".debug_", 7) != 0 ||
		    !gelf_getchdr(scn, &ch) ||
		    !(data = elf_rawdata(scn, NULL)) || data->d_size < chsz)
			continue;
		err = symi_inflate_check(e, name, elf_ndxscn(scn),
					 data->d_size - chsz, ch.ch_size);
	}
	return err;
}

int symi_elf_prepare_dwarf(struct symi_elf *e)
{
	struct job *jobs = NULL;
	struct pool p = { 0 };
	size_t shstrndx, chsz, n = 0, cap = 0, total_in = 0, i;
	const char *path = e->path ? e->path : "<memory>";
	Elf_Scn *scn = NULL;
	int err = 0;

	if (!e->elf || elf_getshdrstrndx(e->elf, &shstrndx) != 0)
		return 0;
	chsz = e->ehdr.e_ident[EI_CLASS] == ELFCLASS32 ? sizeof(Elf32_Chdr) :
							 sizeof(Elf64_Chdr);
	/* Step 1: find the work, allocate its output. */
	while (!err && (scn = elf_nextscn(e->elf, scn))) {
		GElf_Shdr sh;
		GElf_Chdr ch;
		Elf_Data *data;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(e->elf, shstrndx, sh.sh_name);
		if (name && !(sh.sh_flags & SHF_COMPRESSED) &&
		    strncmp(name, ".zdebug_", 8) == 0) {
			err = check_zdebug(e, scn, name);
			continue;
		}
		if (!name || !(sh.sh_flags & SHF_COMPRESSED) ||
		    strncmp(name, ".debug_", 7) != 0 ||
		    !gelf_getchdr(scn, &ch) || ch.ch_type != ELFCOMPRESS_ZLIB)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || data->d_size < chsz)
			continue;
		if (symi_debug_section_unused(name)) {
			static char empty[1];

			symi_elf_set_plain(scn, data, empty, 0, 1);
			continue;
		}
		err = symi_inflate_check(e, name, elf_ndxscn(scn),
					 data->d_size - chsz, ch.ch_size);
		if (!err)
			err = add_job(&jobs, &n, &cap, scn, data, &ch, chsz);
		if (!err)
			total_in += data->d_size - chsz;
	}
	if (err)
		goto out;

	/* Step 2: inflate. */
	if (n > 1)
		qsort(jobs, n, sizeof(*jobs), job_cmp);
	p.jobs = jobs;
	p.n = n;
	run(&p, total_in);

	/* Step 3: adopt what inflated, report the rest. */
	for (i = 0; i < n; i++) {
		struct job *j = &jobs[i];

		if (j->state == JOB_PENDING) {
			err = -ENOMEM;	/* no thread had a decompressor */
			continue;
		}
		if (j->state == JOB_BAD) {
			/* libdw will say what is wrong with it */
			symi_debug("elf: cannot inflate section %zu of '%s' (libdeflate %d), leaving it to libdw",
				   elf_ndxscn(j->scn), path, (int)j->result);
			continue;
		}
		if (err)
			continue;
		err = symi_elf_keep_buf(e, j->buf); /* frees it on failure */
		j->buf = NULL;
		if (err)
			continue;
		if (!symi_elf_set_plain(j->scn, j->data, e->bufs[e->nbufs - 1],
					j->out, j->align))
			symi_debug("elf: cannot update section %zu of '%s': %s",
				   elf_ndxscn(j->scn), path, elf_errmsg(-1));
	}
out:
	for (i = 0; i < n; i++)
		free(jobs[i].buf);
	free(jobs);
	/* A kernel module's DWARF is read relocated (reloc.c). */
	return err ? err : symi_elf_relocate_debug(e);
}
