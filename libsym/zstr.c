/*
 * zstr.c - a string blob stored as zstd frames (a table's strings and its
 * demangled names, format 8: docs/table-format.md "Compressed strings"),
 * inflated one frame at a time on first use.
 *
 * A table is opened for each lookup batch straight from LMDB, and symd
 * opens one for every request, so the inflated frames cannot belong to
 * the table: they are kept in a registry of the process, one entry per
 * distinct compressed area (compared byte for byte, so two tables share
 * an entry only when their areas are the same bytes).  Tables hold a
 * reference; an entry no table holds stays for the next open until more
 * than ZSTR_IDLE_MAX entries or ZSTR_IDLE_BYTES of blobs are idle, and
 * the oldest idle ones go first.
 *
 * Readers take a string with symi_zstr_at(): one load of the frame's
 * ready byte when it is ready.  The first reader of a frame inflates it
 * under the entry's lock, with the frames after it up to the first that
 * ends with NUL (a string longer than a frame goes on into the next), and
 * publishes them last to first, so a ready frame's strings are whole.
 * Once every frame is ready the blob is whole, and a table reads it as a
 * plain one (symi_blob_at(), symi_blob_fill()); once half the frames are
 * ready, the next slow read inflates the rest.
 * The blob is allocated, zeroed, by the first fill: a table whose
 * strings are never read costs no more than the registry entry.
 * A frame that does not inflate to its exact size is left zero (its
 * strings read as "") and counted in bad: lookups answer,
 * sym_table_verify() fails.  Out of memory (the blob, zstd's context), a
 * string reads as "" and its frame is tried again by the next reader:
 * nothing is counted bad, so a table is never condemned for it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "internal.h"
#include "format.h"
#include "base.h"

/* Most tables have a compressed blob (two for C++): a symd answering for
 * a few hundred build IDs in turn keeps them inflated, within the bytes. */
#define ZSTR_IDLE_MAX 256
#define ZSTR_IDLE_BYTES ((size_t)256 << 20)
/* What a compressed area may inflate to (symi_zstr_bounded()): anything
 * up to ZSTR_FREE_BYTES, beyond that ZSTR_MAX_RATIO times its bytes.
 * zstd turns a few bytes into a frame of zeros, so without a bound a
 * table from outside (sym store import) could make sym_table_verify()
 * fill gigabytes.  Real demangled names inflate 7 to 9 times (libjvm
 * 7.6x), real strings 4 to 7 times (libc 4.5x, libjvm 6.1x), repetitive
 * synthetic ones 90x (t-table). */
#define ZSTR_FREE_BYTES ((uint64_t)64 << 20)
#define ZSTR_MAX_RATIO 16

struct zentry {
	struct symi_zstr z;	/* first: symi_zstr_put() casts back */
	struct zentry *prev, *next;	/* most recently used first */
	uint32_t zbytes;
	uint8_t *area;		/* a copy of the compressed area */
	size_t maplen;		/* of z.blob, once mapped */
	size_t refs;
	pthread_mutex_t mu;	/* fills: done[], z.bad */
	uint8_t *done;
	/* Records built back from columns (symi_zrec_get()): the blob is
	 * whole from the start, and these are part of the key. */
	bool rec;
	uint8_t nf, kind;
	uint8_t w[SYMT_FIELDS];
	uint32_t count;
	/* Where it was last found under a caller's key (symi_zstr_get()'s
	 * @known): the same key and address find it again unread. */
	uint64_t known;
	const void *src;
};

/* What an entry is found by, besides its area's bytes. */
struct zkey {
	const uint8_t *area;
	uint32_t zbytes, size;
	unsigned shift;		/* blobs */
	bool rec;		/* records, and: */
	uint8_t nf, kind;
	const uint8_t *w;
	uint32_t count;
	uint64_t known;		/* 0, or the caller's key of the bytes */
};

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static struct zentry *reg_head;
/* The entries no table holds, and their bytes: reg_trim() walks the list
 * only when these pass the caps (a symd request drops its table's last
 * references, and the list may hold hundreds of entries). */
static size_t idle_n, idle_bytes;
/* This thread holds reg_mu across several finds (symi_zreg_hold()). */
static __thread bool reg_held;

/*
 * One zstd decompression context a thread, made at its first use and
 * freed when the thread ends (the main thread's at exit, by the system):
 * ZSTD_createDCtx() asks the CPU for its features (cpuid), which a virtual
 * machine's hypervisor answers slowly.  A context for each area and each
 * string blob took 0.7 to 0.8% of a warm `sym lookup` of 100,000
 * addresses here (libc, python3.11d: 8 to 10 contexts a process).
 */
static __thread ZSTD_DCtx *thread_dctx;
static pthread_key_t dctx_key;
static pthread_once_t dctx_once = PTHREAD_ONCE_INIT;
static bool dctx_key_ok;

static void dctx_free(void *d)
{
	ZSTD_freeDCtx(d);
	thread_dctx = NULL;
}

static void dctx_key_make(void)
{
	dctx_key_ok = pthread_key_create(&dctx_key, dctx_free) == 0;
}

ZSTD_DCtx *symi_zstd_dctx(void)
{
	ZSTD_DCtx *d = thread_dctx;

	if (d)
		return d;
	pthread_once(&dctx_once, dctx_key_make);
	if (!dctx_key_ok)
		return NULL;
	d = ZSTD_createDCtx();
	if (d && pthread_setspecific(dctx_key, d)) {
		ZSTD_freeDCtx(d);
		return NULL;
	}
	thread_dctx = d;
	return d;
}

static void entry_free(struct zentry *e)
{
	if (!e)
		return;
	pthread_mutex_destroy(&e->mu);
	free(e->done);
	free(e->z.ready);
	symi_unmap(e->z.blob, e->maplen);
	symi_free_slab(e->area, e->zbytes);
	free(e);
}

/* The frame index of @area: n + 1 ascending offsets inside it, the first
 * just past the index. */
static bool index_ok(const uint8_t *area, uint32_t zbytes, uint32_t n)
{
	uint64_t head = 4 * ((uint64_t)n + 1);
	uint32_t prev;

	if (zbytes < head || symt_rd32(area) != head)
		return false;
	prev = (uint32_t)head;
	for (uint32_t i = 1; i <= n; i++) {
		uint32_t o = symt_rd32(area + 4 * (size_t)i);

		if (o < prev || o > zbytes)
			return false;
		prev = o;
	}
	return true;
}

static int entry_new(const uint8_t *area, uint32_t zbytes, uint32_t size,
		     unsigned shift, struct zentry **out)
{
	uint32_t n = (uint32_t)(((uint64_t)size + (1u << shift) - 1) >> shift);
	struct zentry *e;

	*out = NULL;
	if (!index_ok(area, zbytes, n))
		return -SYM_E_BADTABLE;
	e = symi_calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	/* Copied whole at once: in the slab, or in huge pages from 512
	 * KiB (libjvm's strings, 0.9 MB compressed, took 231 faults of 4
	 * KiB). */
	e->area = symi_malloc_slab(zbytes);
	e->z.ready = symi_calloc(n, 1);
	e->done = symi_calloc(n, 1);
	if (!e->area || !e->z.ready || !e->done ||
	    pthread_mutex_init(&e->mu, NULL)) {
		free(e->done);
		free(e->z.ready);
		symi_free_slab(e->area, zbytes);
		free(e);
		return -ENOMEM;
	}
	memcpy(e->area, area, zbytes);
	e->z.size = size;
	e->z.nframes = n;
	e->z.shift = shift;
	e->zbytes = zbytes;
	*out = e;
	return 0;
}

static void reg_unlink(struct zentry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		reg_head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	e->prev = e->next = NULL;
}

static void reg_push(struct zentry *e)
{
	e->prev = NULL;
	e->next = reg_head;
	if (reg_head)
		reg_head->prev = e;
	reg_head = e;
}

/* What an idle entry counts for in idle_bytes. */
static size_t entry_bytes(const struct zentry *e)
{
	return symi_huge_size(e->z.size) + symi_huge_size(e->zbytes);
}

/* Free the oldest idle entries beyond the caps.  reg_mu held. */
static void reg_trim(void)
{
	size_t idle = 0, bytes = 0;
	struct zentry *e, *prev;

	if (idle_n <= ZSTR_IDLE_MAX && idle_bytes <= ZSTR_IDLE_BYTES)
		return;
	for (e = reg_head; e; e = prev) {
		prev = e->next;
		if (e->refs)
			continue;
		idle++;
		bytes += entry_bytes(e);
		if (idle > ZSTR_IDLE_MAX || bytes > ZSTR_IDLE_BYTES) {
			idle_n--;
			idle_bytes -= entry_bytes(e);
			reg_unlink(e);
			entry_free(e);
		}
	}
}

/* Drop a reference to @e.  reg_mu held. */
static void reg_unref(struct zentry *e)
{
	if (--e->refs)
		return;
	idle_n++;
	idle_bytes += entry_bytes(e);
}

/* Is @e the entry of @k?  The sizes and the frame index (the frames'
 * compressed sizes), or the records' layout, tell most areas apart; a
 * candidate is then compared whole, one pass over the area per open. */
static bool key_is(const struct zentry *e, const struct zkey *k)
{
	if (e->rec != k->rec || e->zbytes != k->zbytes || e->z.size != k->size)
		return false;
	if (k->rec ? e->nf != k->nf || e->kind != k->kind ||
			     e->count != k->count ||
			     memcmp(e->w, k->w, k->nf) != 0 :
		     e->z.shift != k->shift)
		return false;
	/* Met again where the caller's key last found it: the caller
	 * vouches for the bytes (symi_table_open_known()). */
	if (k->known && e->known == k->known && e->src == k->area)
		return true;
	return (k->rec ||
		memcmp(e->area, k->area, 4 * ((size_t)e->z.nframes + 1)) == 0) &&
	       memcmp(e->area, k->area, k->zbytes) == 0;
}

/* The registered entry of @k, a reference taken, or NULL.  reg_mu
 * held. */
static struct zentry *reg_find(const struct zkey *k)
{
	for (struct zentry *e = reg_head; e; e = e->next) {
		if (key_is(e, k)) {
			if (k->known) {
				e->known = k->known;
				e->src = k->area;
			}
			if (!e->refs++) {
				idle_n--;
				idle_bytes -= entry_bytes(e);
			}
			reg_unlink(e);
			reg_push(e);
			return e;
		}
	}
	return NULL;
}

bool symi_zstr_bounded(uint64_t size, uint64_t zbytes)
{
	return size <= ZSTR_FREE_BYTES || size / ZSTR_MAX_RATIO <= zbytes;
}

/* The entry of key @k when registered, else @mine registered: made by
 * the caller outside the lock, with @err (NULL to look only: then
 * -ENOENT when there is none).  Another thread may register the same
 * bytes meanwhile: theirs is kept, and @mine freed. */
static int reg_get(const struct zkey *k, int err, struct zentry *mine,
		   struct symi_zstr **out)
{
	struct zentry *e;

	if (!reg_held)
		pthread_mutex_lock(&reg_mu);
	e = reg_find(k);
	if (!e && mine) {
		e = mine;
		mine = NULL;
		e->known = k->known;
		e->src = k->known ? k->area : NULL;
		e->refs = 1;
		reg_push(e);
	}
	if (!reg_held)
		pthread_mutex_unlock(&reg_mu);
	entry_free(mine);
	if (!e)
		return err ? err : -ENOENT;
	*out = &e->z;
	return 0;
}

int symi_zstr_get(const void *area, uint32_t zbytes, uint32_t size,
		  unsigned shift, uint64_t known, struct symi_zstr **out)
{
	struct zkey k = { .area = area, .zbytes = zbytes, .size = size,
			  .shift = shift, .known = known };
	struct zentry *mine = NULL;
	int err;

	*out = NULL;
	if (!size || shift < SYMT_ZSHIFT_MIN || shift > SYMT_ZSHIFT_MAX ||
	    !symi_zstr_bounded(size, zbytes))
		return -SYM_E_BADTABLE;
	if (!reg_get(&k, 0, NULL, out))
		return 0;
	symi_zreg_release();	/* nothing is built under the lock */
	/* Built outside the lock: the index check and the copy. */
	err = entry_new(area, zbytes, size, shift, &mine);
	return reg_get(&k, err, mine, out);
}

/* Frame (or chunk) @k of @z published as @r; the blob whole once every
 * one is.  The entry's lock held. */
static void ready_set(struct symi_zstr *z, uint32_t k, uint8_t r)
{
	__atomic_store_n(&z->ready[k], r, __ATOMIC_RELEASE);
	__atomic_store_n(&z->nready, z->nready + 1, __ATOMIC_RELAXED);
	if (z->nready == z->nframes)
		__atomic_store_n(&z->whole, z->blob, __ATOMIC_RELEASE);
}

/* A new entry of records (symi_zrec_get()): built whole, or for a
 * chunked area with every chunk to build (symi_zrec_fill()). */
static int rec_new(const struct zkey *k, struct zentry **out)
{
	struct zentry *e;
	unsigned shift;
	uint32_t n;
	int err;

	*out = NULL;
	err = symi_cols_chunks(k->area, k->zbytes, k->count, k->nf, k->w,
			       &shift, &n);
	if (err || (n && k->kind != SYMI_COLS_ROWS))
		return -SYM_E_BADTABLE;
	e = symi_calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->zbytes = k->zbytes;
	e->area = symi_malloc_slab(k->zbytes);
	e->maplen = k->size;
	e->z.blob = symi_map_zeroed(e->maplen);
	e->z.ready = n ? symi_calloc(n, 1) : NULL;
	if (!e->area || !e->z.blob || (n && !e->z.ready) ||
	    pthread_mutex_init(&e->mu, NULL)) {
		free(e->z.ready);
		symi_unmap(e->z.blob, e->maplen);
		symi_free_slab(e->area, e->zbytes);
		free(e);
		return -ENOMEM;
	}
	memcpy(e->area, k->area, k->zbytes);
	if (!n)
		err = symi_cols_unpack(k->area, k->zbytes, k->count, k->nf,
				       k->w, (enum symi_cols_out)k->kind,
				       (uint8_t *)e->z.blob);
	if (err) {
		entry_free(e);
		return err;
	}
	e->rec = true;
	e->nf = k->nf;
	e->kind = k->kind;
	memcpy(e->w, k->w, k->nf);
	e->count = k->count;
	e->z.size = k->size;
	if (n) {
		e->z.nframes = n;
		e->z.shift = shift;
		e->z.area = e->area;
	} else {
		e->z.whole = e->z.blob;
	}
	*out = e;
	return 0;
}

unsigned symi_zrec_fill(struct symi_zstr *z, uint32_t k)
{
	struct zentry *e = (struct zentry *)z;
	unsigned r;
	int err;

	if (k >= z->nframes)
		return 2;
	pthread_mutex_lock(&e->mu);
	r = z->ready[k];
	if (r)
		goto out;
	err = symi_cols_unpack_chunk(e->area, e->count, e->nf, e->w,
				     z->shift, z->nframes, k,
				     (uint8_t *)z->blob);
	if (err == -ENOMEM)
		goto out;
	r = err ? 2 : 1;
	z->bad += err != 0;
	ready_set(z, k, (uint8_t)r);
out:
	pthread_mutex_unlock(&e->mu);
	return r;
}

int symi_zrec_get(const void *area, uint32_t zbytes, uint32_t count,
		  unsigned nf, const uint8_t *w, enum symi_cols_out kind,
		  uint64_t known, struct symi_zstr **out)
{
	size_t size = symi_cols_out_bytes(kind, count, nf, w);
	struct zkey k = { .area = area, .zbytes = zbytes,
			  .size = (uint32_t)size, .rec = true,
			  .nf = (uint8_t)nf, .kind = (uint8_t)kind, .w = w,
			  .count = count, .known = known };
	struct zentry *mine = NULL;
	int err;

	*out = NULL;
	if (nf > SYMT_FIELDS || size >= UINT32_MAX ||
	    !symi_zstr_bounded(size, zbytes))
		return -SYM_E_BADTABLE;
	if (!reg_get(&k, 0, NULL, out))
		return 0;
	symi_zreg_release();	/* nothing is built under the lock */
	err = rec_new(&k, &mine);
	return reg_get(&k, err, mine, out);
}


void symi_zreg_hold(void)
{
	if (!reg_held) {
		pthread_mutex_lock(&reg_mu);
		reg_held = true;
	}
}

void symi_zreg_release(void)
{
	if (reg_held) {
		reg_held = false;
		pthread_mutex_unlock(&reg_mu);
	}
}

void symi_zstr_put(struct symi_zstr *z)
{
	symi_zstr_put_many(&z, 1);
}

void symi_zstr_put_many(struct symi_zstr *const *z, size_t n)
{
	size_t i;

	for (i = 0; i < n && !z[i]; i++)
		;
	if (i == n)
		return;
	pthread_mutex_lock(&reg_mu);
	for (; i < n; i++) {
		if (z[i])
			reg_unref((struct zentry *)z[i]);
	}
	reg_trim();
	pthread_mutex_unlock(&reg_mu);
}

/* Inflate frame @i into the blob, or leave it zero and count it bad.
 * False when there was no memory to try (the frame stays to do).
 * e->mu held, the blob allocated. */
static bool frame_inflate(struct zentry *e, uint32_t i)
{
	struct symi_zstr *z = &e->z;
	uint64_t from = (uint64_t)i << z->shift;
	size_t want = z->size - from < (1u << z->shift) ?
		      (size_t)(z->size - from) : (size_t)1 << z->shift;
	uint32_t a = symt_rd32(e->area + 4 * (size_t)i);
	uint32_t b = symt_rd32(e->area + 4 * ((size_t)i + 1));
	ZSTD_DCtx *dctx = symi_zstd_dctx();
	size_t got;

	if (!dctx)
		return false;
	got = ZSTD_decompressDCtx(dctx, z->blob + from, want, e->area + a,
				  b - a);
	if (ZSTD_isError(got) || got != want) {
		memset(z->blob + from, 0, want);
		z->bad++;
	}
	e->done[i] = 1;
	return true;
}

/* Make frame @i ready (and the frames its last string runs on into).
 * False when out of memory. */
static bool zstr_fill(struct zentry *e, uint32_t i)
{
	struct symi_zstr *z = &e->z;
	uint32_t j = i;
	bool ok = true;

	pthread_mutex_lock(&e->mu);
	/* Zeroed pages made as frames are written (huge ones where they
	 * fit: a fault per 4 KiB of a libjvm-sized blob costs more than
	 * its inflation on this project's VMs).  Frames not yet inflated
	 * read as NULs whoever looks. */
	if (!z->blob) {
		e->maplen = (size_t)z->size + 1;
		z->blob = symi_map_zeroed(e->maplen);
	}
	if (!z->blob) {
		ok = false;
		goto out;
	}
	for (;;) {
		if (!e->done[j] && !frame_inflate(e, j)) {
			ok = false;
			goto out;
		}
		if (j + 1 == z->nframes) {
			z->blob[z->size - 1] = '\0';	/* whatever it held */
			break;
		}
		if (z->blob[((uint64_t)(j + 1) << z->shift) - 1] == '\0')
			break;
		j++;
	}
	/* Last to first: a ready frame's strings are whole. */
	for (uint32_t k = j + 1; k-- > i;) {
		if (!z->ready[k])
			ready_set(z, k, 1);
	}
out:
	pthread_mutex_unlock(&e->mu);
	return ok;
}

const char *symi_zstr_fill(struct symi_zstr *z, uint32_t off)
{
	uint32_t i = off >> z->shift;

	if (off >= z->size || !zstr_fill((struct zentry *)z, i))
		return "";
	return z->blob + off;
}

const char *symi_blob_fill(const struct symt_blob *b, uint32_t off)
{
	struct symi_zstr *z = b->z;
	const char *s = symi_zstr_at(z, off);
	char *w = __atomic_load_n(&z->whole, __ATOMIC_ACQUIRE);
	uint32_t ready = __atomic_load_n(&z->nready, __ATOMIC_RELAXED);

	/* Half the frames read: the rest will be, most likely (a batch
	 * of many addresses), and until every frame is ready each string
	 * takes this call.  At most twice the inflation a reader needed. */
	if (!w && 2 * (uint64_t)ready >= z->nframes &&
	    symi_zstr_fill_all(z) >= 0)
		w = __atomic_load_n(&z->whole, __ATOMIC_ACQUIRE);
	if (w)
		__atomic_store_n(&((struct symt_blob *)b)->plain, w,
				 __ATOMIC_RELEASE);
	return s;
}

/* Every frame (or chunk) of @z made ready by @fill: the bad ones' count,
 * or -ENOMEM. */
static int fill_all(struct symi_zstr *z, bool (*fill)(struct zentry *,
						      uint32_t))
{
	struct zentry *e = (struct zentry *)z;
	int bad;

	for (uint32_t i = 0; i < z->nframes; i++) {
		if (!__atomic_load_n(&z->ready[i], __ATOMIC_ACQUIRE) &&
		    !fill(e, i))
			return -ENOMEM;
	}
	pthread_mutex_lock(&e->mu);
	bad = z->bad > INT32_MAX ? INT32_MAX : (int)z->bad;
	pthread_mutex_unlock(&e->mu);
	return bad;
}

int symi_zstr_fill_all(struct symi_zstr *z)
{
	return fill_all(z, zstr_fill);
}

/* symi_zrec_fill() as fill_all() takes it. */
static bool rec_fill(struct zentry *e, uint32_t k)
{
	return symi_zrec_fill(&e->z, k) != 0;
}

int symi_zrec_fill_all(struct symi_zstr *z)
{
	return fill_all(z, rec_fill);
}

int symi_zstr_pack(const char *blob, size_t len, unsigned shift, int level,
		   uint8_t **out, size_t *outlen)
{
	size_t n = (len + ((size_t)1 << shift) - 1) >> shift;
	size_t head = 4 * (n + 1), cap = head, o;
	ZSTD_CCtx *cc = NULL;
	uint8_t *buf = NULL;
	int err = -ENOMEM;

	*out = NULL;
	*outlen = 0;
	for (size_t i = 0; i < n; i++)
		cap += ZSTD_compressBound((size_t)1 << shift);
	if (cap >= UINT32_MAX)
		return -SYM_E_TOOBIG;
	cc = ZSTD_createCCtx();
	buf = symi_malloc(cap);
	if (!cc || !buf)
		goto out;
	o = head;
	for (size_t i = 0; i < n; i++) {
		size_t from = i << shift;
		size_t k = len - from < ((size_t)1 << shift) ?
			   len - from : (size_t)1 << shift;
		size_t c = ZSTD_compressCCtx(cc, buf + o, cap - o, blob + from,
					     k, level);

		if (ZSTD_isError(c))
			goto out;
		symt_wr32(buf + 4 * i, (uint32_t)o);
		o += c;
	}
	symt_wr32(buf + 4 * n, (uint32_t)o);
	*out = buf;
	*outlen = o;
	buf = NULL;
	err = 0;
out:
	free(buf);
	ZSTD_freeCCtx(cc);
	return err;
}
