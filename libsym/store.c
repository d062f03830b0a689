/*
 * store.c - the store: tables per build ID in LMDB, read in place.
 *
 * This is the only file that sees LMDB.  Layout (docs/store.md):
 *
 *   DIR/data.mdb, DIR/lock.mdb   the LMDB environment, two databases:
 *     "meta"    key: len(id) u8 | id bytes
 *               value: struct meta_v (+ source or reason text)
 *     "chunks"  key: len(id) u8 | id bytes | generation be32 | start be64
 *               value: one self-contained table (sym_table_split())
 *
 *     "inflight" key: len(id) u8 | id bytes | generation be32
 *               value: started, int64 (a put under way: its ticket)
 *
 * Writes.  A put first takes a ticket: in one write transaction it picks
 * a generation no chunk, metadata or other put of the build ID uses and
 * records it in "inflight".  It then writes each chunk in its own write
 * transaction under that generation, and in a last transaction checks
 * that its ticket is still there, drops it, points the metadata at the
 * new generation and deletes the chunks of the generation the metadata
 * named until then.  A remove deletes the metadata, every chunk and every
 * ticket of the build ID in one transaction, so a put it overtook finds
 * its ticket gone (each chunk transaction and the last one check it) and
 * fails with -ECANCELED, writing nothing more: writes of one build ID are
 * linearizable, a removed entry stays removed, and no metadata ever
 * names chunks that are not all there.  A crash before the last commit
 * leaves the old entry intact, and a ticket with some chunks that gc
 * drops once the ticket is older than TICKET_MAX_AGE; readers never see
 * a half-written table.  No write transaction holds more than one chunk
 * (at most chunk_size bytes), so writers are never blocked for long.
 * MDB_WRITEMAP is not used: a full disk is then an error (MDB_MAP_FULL
 * or ENOSPC), not SIGBUS.
 *
 * The map grows: on MDB_MAP_FULL the write is retried after doubling the
 * map size (mdb_env_set_mapsize(), under an exclusive lock so that no
 * transaction of this process is open), up to map_max; beyond it the put
 * fails with -ENOSPC and the store is unchanged.
 *
 * Reads.  A lookup opens one read transaction, reads the metadata, and
 * finds each address's chunk with one cursor seek; the chunk is used in
 * place (copied only when LMDB gives it unaligned, which happens for
 * values small enough to sit inside a leaf page).  A chunk's checksum and
 * structure are verified the first time this process reads it; a bad one
 * removes the entry, so that the caller rebuilds it.  An entry verified
 * whole once is marked so in its metadata (STORE_VERIFIED), and later
 * processes check its CRC alone.
 *
 * Access times are kept in memory and written in one batch when 64 are
 * pending or 30 s have passed, and at close: a lookup never writes.
 *
 * Thread-safety: a store may be used by many threads.  Every call runs
 * its own transaction under a shared lock; map resizing takes it
 * exclusively.  The small in-memory sets (pending access times, verified
 * chunks) have their own mutex.
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <lmdb.h>

#include "internal.h"
#include "format.h"
#include "gnutext.h"
#include "base.h"

#define STORE_LAYOUT 1
#define META_MAGIC 0x53594d4du	/* "SYMM" */
#define ID_MAX 64
#define KEY_MAX (1 + ID_MAX + 4 + 8)
#define MAP_START ((size_t)64 << 20)
#define PENDING_MAX 64
#define PENDING_SECS 30
/* A read renews an entry's stored access time only when that time is
 * older than this (or is still its put time): LRU order to within ten
 * minutes, and most processes that read a table write nothing (a commit
 * is two fdatasync()s: 2 ms of a 9 ms `sym lookup` of one address). */
#define ACCESS_GRAIN 600
#define VERIFIED_MAX 65536
/* Chunks verified at once by distinct threads, beyond which threads
 * verify the same chunk side by side (correct, only slower). */
#define VERIFYING_MAX 16
/* Mixed into the verified set's entry for a chunk found corrupt. */
#define VERIFIED_BAD 0x6261642063726321ull
/* Tables this handle removed as corrupt, remembered (newest kept). */
#define GONE_BAD_MAX 16
/* A put's ticket older than this is taken for a crashed put's: gc drops
 * it and its chunks, and a put still holding it fails with -ECANCELED. */
#define TICKET_MAX_AGE (24 * 3600)
/* Free bytes below which a failed write is taken for a full disk. */
#define DISK_FULL_BELOW ((uint64_t)1 << 20)

struct meta_v {
	uint32_t magic;
	uint32_t kind;		/* 0: table; else enum sym_store_negative */
	uint64_t size;
	uint32_t chunks;
	uint32_t gen;
	uint32_t format;
	uint32_t converter;
	int64_t created;
	int64_t last_access;
	int64_t expires;	/* negative entries; 0: no expiry */
	uint32_t text_len;
	uint32_t verified;	/* STORE_VERIFIED, or 0: see chunk_check() */
	/* followed by text_len bytes of text, no NUL */
};

/*
 * meta_v.verified: every chunk of the entry's generation passed
 * sym_table_verify() of this table format and verifier in some process,
 * so a read checks the CRC alone (reads are memory-safe on any bytes:
 * fuzz-table; the CRC catches damage on disk).  The field was padding
 * before, 0 in older stores: verified again once.
 */
#define STORE_VERIFIED ((uint32_t)SYM_TABLE_FORMAT << 16 | SYMI_VERIFY_VERSION)

struct pending {
	uint8_t id[ID_MAX];
	uint8_t idlen;
	int64_t when;
	uint32_t verified_gen;	/* a generation verified whole; 0: none */
};

struct sym_store {
	MDB_env *env;
	MDB_dbi meta, chunks, inflight;	/* inflight: not when RDONLY */
	char *dir;
	struct sym_store_opts opts;
	size_t mapsize;
	pthread_rwlock_t rw;	/* shared: any txn; exclusive: resize */
	pthread_mutex_t mu;	/* pending[], verified[], verifying[], gone_bad */
	pthread_cond_t verify_cv;	/* a verifying[] slot was freed */
	struct pending pending[PENDING_MAX];
	size_t npending;
	int64_t last_flush;
	uint64_t *verified;	/* open-addressed set of chunk hashes */
	size_t nverified;
	/* Chunks some thread is verifying now; 0 is a free slot. */
	uint64_t verifying[VERIFYING_MAX];
	/* Build IDs whose table this handle removed as corrupt and nobody
	 * has put since (gone_bad()); a length of 0 is a free slot. */
	uint8_t gone_bad[GONE_BAD_MAX][ID_MAX];
	size_t gone_bad_len[GONE_BAD_MAX];
	unsigned gone_bad_next;
};

static int64_t now(void)
{
	return (int64_t)time(NULL);
}

/* Translate an LMDB result: MDB codes to -SYM_E_* or -errno. */
static int mdb_err(int rc, const char *what)
{
	if (rc == 0)
		return 0;
	if (rc == MDB_NOTFOUND)
		return -SYM_E_NOTFOUND;
	if (rc == MDB_MAP_FULL)
		return -ENOSPC;
	symi_warn("store: %s: %s", what, mdb_strerror(rc));
	if (rc > 0)
		return -rc;
	if (rc == MDB_CORRUPTED || rc == MDB_INVALID ||
	    rc == MDB_VERSION_MISMATCH || rc == MDB_PAGE_NOTFOUND)
		return -SYM_E_BADSTORE;
	return -EIO;
}

int symi_build_id_parse(const char *hex, uint8_t *id, size_t *len)
{
	size_t n = hex ? strlen(hex) : 0;

	if (n < 2 || n > 2 * ID_MAX || n % 2)
		return -EINVAL;
	for (size_t i = 0; i < n; i += 2) {
		int hi, lo;
		char a = hex[i], b = hex[i + 1];

		hi = a >= '0' && a <= '9' ? a - '0' : a >= 'a' && a <= 'f' ?
		     a - 'a' + 10 : -1;
		lo = b >= '0' && b <= '9' ? b - '0' : b >= 'a' && b <= 'f' ?
		     b - 'a' + 10 : -1;
		if (hi < 0 || lo < 0)
			return -EINVAL;
		id[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	*len = n / 2;
	return 0;
}

static size_t meta_key(uint8_t *k, const uint8_t *id, size_t idlen)
{
	k[0] = (uint8_t)idlen;
	memcpy(k + 1, id, idlen);
	return 1 + idlen;
}

static void be32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static void be64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static uint64_t rd_be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static uint32_t rd_be32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++)
		v = v << 8 | p[i];
	return v;
}

static size_t chunk_key(uint8_t *k, const uint8_t *id, size_t idlen,
			uint32_t gen, uint64_t start)
{
	size_t n = meta_key(k, id, idlen);

	be32(k + n, gen);
	be64(k + n + 4, start);
	return n + 12;
}

int sym_store_default_dir(char *buf, size_t len)
{
	const char *e = getenv("SYM_STORE"), *x = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (!buf)
		return -EINVAL;
	if (e && *e)
		n = snprintf(buf, len, "%s", e);
	else if (x && *x == '/')
		n = snprintf(buf, len, "%s/sym", x);
	else if (home && *home)
		n = snprintf(buf, len, "%s/.cache/sym", home);
	else
		return -SYM_E_NOTFOUND;
	return n < 0 || (size_t)n >= len ? -ERANGE : 0;
}

/* mkdir -p */
static int make_dirs(const char *dir)
{
	char path[PATH_MAX];
	size_t n = strlen(dir);

	if (n == 0 || n >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, n + 1);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int env_open(struct sym_store *st)
{
	unsigned flags = MDB_NOTLS;
	MDB_txn *txn = NULL;
	int rc, dead = 0;

	rc = mdb_env_create(&st->env);
	if (rc)
		return mdb_err(rc, "cannot create environment");
	mdb_env_set_maxdbs(st->env, 4);
	mdb_env_set_maxreaders(st->env, 254);
	rc = mdb_env_set_mapsize(st->env, st->mapsize);
	if (rc)
		return mdb_err(rc, "cannot set map size");
	if (st->opts.flags & SYM_STORE_RDONLY)
		flags |= MDB_RDONLY;
	rc = mdb_env_open(st->env, st->dir, flags, 0644);
	if (rc) {
		/* Read-only, a missing store is the caller's answer to
		 * give (sym store ls: "there is no store"), not a fault. */
		if (!(rc == ENOENT && (flags & MDB_RDONLY)))
			symi_warn("store: cannot open '%s': %s", st->dir,
				  mdb_strerror(rc));
		return rc > 0 ? -rc : -SYM_E_BADSTORE;
	}
	/* Readers killed by SIGKILL pin pages until cleared. */
	mdb_reader_check(st->env, &dead);
	if (dead)
		symi_info("store: cleared %d stale readers in '%s'", dead,
			  st->dir);
	{
		MDB_envinfo info;

		if (mdb_env_info(st->env, &info) == 0 &&
		    info.me_mapsize > st->mapsize)
			st->mapsize = info.me_mapsize;
	}
	rc = mdb_txn_begin(st->env, NULL,
			   (flags & MDB_RDONLY) ? MDB_RDONLY : 0, &txn);
	if (rc)
		return mdb_err(rc, "cannot begin transaction");
	rc = mdb_dbi_open(txn, "meta",
			  (flags & MDB_RDONLY) ? 0 : MDB_CREATE, &st->meta);
	if (!rc)
		rc = mdb_dbi_open(txn, "chunks",
				  (flags & MDB_RDONLY) ? 0 : MDB_CREATE,
				  &st->chunks);
	/* Only writers use tickets; a store of an older layout gets the
	 * database on its first open for writing. */
	if (!rc && !(flags & MDB_RDONLY))
		rc = mdb_dbi_open(txn, "inflight", MDB_CREATE, &st->inflight);
	if (rc) {
		mdb_txn_abort(txn);
		if (rc == MDB_NOTFOUND)	/* read-only and never written */
			return -SYM_E_NOTFOUND;
		return mdb_err(rc, "cannot open databases");
	}
	rc = mdb_txn_commit(txn);
	return mdb_err(rc, "cannot commit");
}

/* The flags sym_store_open() knows; any other bit is -EINVAL. */
#define STORE_FLAGS (SYM_STORE_RDONLY | SYM_STORE_NO_READER_WRITES)

int sym_store_open(const char *dir, const struct sym_store_opts *o,
		   struct sym_store **out)
{
	struct sym_store *st;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!dir || !*dir)
		return -EINVAL;
	err = SYMI_OPTS_CHECK(o, sym_store_opts, flags, STORE_FLAGS);
	if (err)
		return err;
	st = symi_calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	/* Only the fields the caller's struct has (o->sz) are read. */
	st->opts.sz = sizeof(st->opts);
	st->opts.max_size = SYMI_OPT(o, max_size);
	st->opts.map_max = SYMI_OPT(o, map_max);
	st->opts.chunk_size = SYMI_OPT(o, chunk_size);
	st->opts.ttl_absent = SYMI_OPT(o, ttl_absent);
	st->opts.ttl_failed = SYMI_OPT(o, ttl_failed);
	st->opts.flags = SYMI_OPT(o, flags);
	if (!st->opts.map_max)
		st->opts.map_max = (uint64_t)64 << 30;
	if (!st->opts.chunk_size)
		st->opts.chunk_size = (uint64_t)64 << 20;
	if (!st->opts.ttl_absent)
		st->opts.ttl_absent = 7 * 24 * 3600;
	if (!st->opts.ttl_failed)
		st->opts.ttl_failed = 60;
	st->mapsize = MAP_START;
	pthread_rwlock_init(&st->rw, NULL);
	pthread_mutex_init(&st->mu, NULL);
	pthread_cond_init(&st->verify_cv, NULL);
	st->last_flush = now();
	st->dir = symi_strdup(dir);
	if (!st->dir) {
		err = -ENOMEM;
		goto fail;
	}
	if (!(st->opts.flags & SYM_STORE_RDONLY)) {
		err = make_dirs(dir);
		if (err) {
			symi_warn("store: cannot create '%s': %s", dir,
				  strerror(-err));
			goto fail;
		}
	}
	err = env_open(st);
	if (err)
		goto fail;
	*out = st;
	return 0;
fail:
	if (st->env)
		mdb_env_close(st->env);
	st->env = NULL;
	sym_store_close(st);
	return err;
}

const char *symi_store_dir(const struct sym_store *st)
{
	return st->dir;
}

bool symi_store_rdonly(const struct sym_store *st)
{
	return st->opts.flags & SYM_STORE_RDONLY;
}

static void flush_pending(struct sym_store *st);

void sym_store_close(struct sym_store *st)
{
	if (!st)
		return;
	if (st->env) {
		flush_pending(st);
		mdb_env_close(st->env);
	}
	pthread_rwlock_destroy(&st->rw);
	pthread_mutex_destroy(&st->mu);
	pthread_cond_destroy(&st->verify_cv);
	free(st->verified);
	free(st->dir);
	free(st);
}

/* Grow the map (exclusive lock: no transaction of ours is open). */
static int grow_map(struct sym_store *st)
{
	size_t want;
	int rc;

	pthread_rwlock_wrlock(&st->rw);
	want = st->mapsize * 2;
	if (want > st->opts.map_max)
		want = st->opts.map_max;
	if (want <= st->mapsize) {
		pthread_rwlock_unlock(&st->rw);
		symi_warn("store: '%s' reached its size bound of %llu bytes",
			  st->dir, (unsigned long long)st->opts.map_max);
		return -ENOSPC;
	}
	rc = mdb_env_set_mapsize(st->env, want);
	if (!rc)
		st->mapsize = want;
	pthread_rwlock_unlock(&st->rw);
	return mdb_err(rc, "cannot grow the map");
}

/*
 * LMDB reports a short write as EIO (mdb_page_flush(): "short write,
 * filesystem full?"), and a write that fills the disk is short.  Is the
 * store's file system full?  Then that EIO is -ENOSPC, as documented.
 */
static bool disk_full(const struct sym_store *st)
{
	struct statvfs sv;

	return statvfs(st->dir, &sv) == 0 &&
	       (uint64_t)sv.f_bavail * sv.f_frsize < DISK_FULL_BELOW;
}

/*
 * Run @fn in a write transaction, growing the map and retrying when it
 * is full.  @fn returns an MDB code.
 */
typedef int (*write_fn)(struct sym_store *st, MDB_txn *txn, void *ctx);

static int write_txn(struct sym_store *st, write_fn fn, void *ctx)
{
	if (st->opts.flags & SYM_STORE_RDONLY)
		return -EROFS;
	for (;;) {
		MDB_txn *txn = NULL;
		int rc, err;

		pthread_rwlock_rdlock(&st->rw);
		rc = mdb_txn_begin(st->env, NULL, 0, &txn);
		if (!rc) {
			rc = fn(st, txn, ctx);
			if (rc)
				mdb_txn_abort(txn);
			else
				rc = mdb_txn_commit(txn);
		}
		pthread_rwlock_unlock(&st->rw);
		if (rc == MDB_MAP_FULL) {
			err = grow_map(st);
			if (err)
				return err;
			continue;
		}
		if (rc > 0 && rc < SYM_E_BASE && rc != EIO)
			return -rc;	/* errno from @fn or LMDB (ENOSPC) */
		if (rc == EIO && disk_full(st)) {
			symi_warn("store: cannot write to '%s': its file "
				  "system is full", st->dir);
			return -ENOSPC;
		}
		return mdb_err(rc, "write failed");
	}
}

static int get_meta(MDB_txn *txn, MDB_dbi dbi, const uint8_t *id,
		    size_t idlen, struct meta_v *m, const char **text)
{
	uint8_t k[KEY_MAX];
	MDB_val key = { meta_key(k, id, idlen), k }, val;
	int rc = mdb_get(txn, dbi, &key, &val);

	if (rc)
		return rc;
	if (val.mv_size < sizeof(*m))
		return MDB_CORRUPTED;
	memcpy(m, val.mv_data, sizeof(*m));
	if (m->magic != META_MAGIC ||
	    m->text_len > val.mv_size - sizeof(*m))
		return MDB_CORRUPTED;
	if (text)
		*text = (const char *)val.mv_data + sizeof(*m);
	return 0;
}

static int put_meta(MDB_txn *txn, MDB_dbi dbi, const uint8_t *id,
		    size_t idlen, const struct meta_v *m, const char *text)
{
	uint8_t k[KEY_MAX], buf[sizeof(*m) + 511];
	size_t tl = text ? strlen(text) : 0;
	MDB_val key = { meta_key(k, id, idlen), k }, val;
	struct meta_v mm = *m;

	if (tl > sizeof(buf) - sizeof(mm))
		tl = sizeof(buf) - sizeof(mm);
	mm.text_len = (uint32_t)tl;
	memcpy(buf, &mm, sizeof(mm));
	if (tl)
		memcpy(buf + sizeof(mm), text, tl);
	val.mv_size = sizeof(mm) + tl;
	val.mv_data = buf;
	return mdb_put(txn, dbi, &key, &val, 0);
}

/* Delete every chunk of @id (any generation, or only @gen if >= 0). */
static int del_chunks(MDB_txn *txn, MDB_dbi dbi, const uint8_t *id,
		      size_t idlen, int64_t gen)
{
	uint8_t k[KEY_MAX];
	size_t pl = meta_key(k, id, idlen);
	MDB_cursor *c = NULL;
	MDB_val key = { pl, k }, val;
	int rc;

	rc = mdb_cursor_open(txn, dbi, &c);
	if (rc)
		return rc;
	rc = mdb_cursor_get(c, &key, &val, MDB_SET_RANGE);
	while (!rc) {
		if (key.mv_size != pl + 12 || memcmp(key.mv_data, k, pl))
			break;
		if (gen < 0 ||
		    rd_be32((const uint8_t *)key.mv_data + pl) ==
			    (uint32_t)gen) {
			rc = mdb_cursor_del(c, 0);
			if (rc)
				break;
			/* After deleting the last key, LMDB answers EINVAL. */
			rc = mdb_cursor_get(c, &key, &val, MDB_GET_CURRENT);
			if (rc == EINVAL)
				rc = MDB_NOTFOUND;
			if (rc)
				break;
			continue;
		}
		rc = mdb_cursor_get(c, &key, &val, MDB_NEXT);
	}
	mdb_cursor_close(c);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

struct put_ctx {
	const uint8_t *id;
	size_t idlen;
	uint32_t gen;		/* the ticket's generation */
	bool ticket;		/* a ticket is to be checked and dropped */
	const void *data;
	size_t len;
	uint64_t start;
	struct meta_v meta;
	const char *text;
	int kind;
};

static size_t ticket_key(uint8_t *k, const uint8_t *id, size_t idlen,
			 uint32_t gen)
{
	size_t n = meta_key(k, id, idlen);

	be32(k + n, gen);
	return n + 4;
}

/*
 * Is the ticket of @p still there?  Then 0 (and, with @drop, it is
 * deleted in @txn); a remove or gc took it: ECANCELED; else MDB codes.
 */
static int ticket_check(struct sym_store *st, MDB_txn *txn,
			const struct put_ctx *p, bool drop)
{
	uint8_t k[KEY_MAX];
	MDB_val key = { ticket_key(k, p->id, p->idlen, p->gen), k }, val;
	int64_t started;
	int rc = mdb_get(txn, st->inflight, &key, &val);

	if (rc == MDB_NOTFOUND)
		return ECANCELED;
	if (rc)
		return rc;
	if (val.mv_size != sizeof(started))
		return MDB_CORRUPTED;
	memcpy(&started, val.mv_data, sizeof(started));
	/* gc may take it from now on: do not race it. */
	if (now() - started > TICKET_MAX_AGE)
		return ECANCELED;
	return drop ? mdb_del(txn, st->inflight, &key, NULL) : 0;
}

/* The highest generation of @id in @dbi, whose keys are the id prefix
 * then a be32 generation (chunks, inflight).  Raises *@max. */
static int max_gen(MDB_txn *txn, MDB_dbi dbi, const uint8_t *id,
		   size_t idlen, uint32_t *max)
{
	uint8_t k[KEY_MAX];
	size_t pl = meta_key(k, id, idlen);
	MDB_cursor *c = NULL;
	MDB_val key = { pl, k }, val;
	int rc = mdb_cursor_open(txn, dbi, &c);

	if (rc)
		return rc;
	for (rc = mdb_cursor_get(c, &key, &val, MDB_SET_RANGE); !rc;
	     rc = mdb_cursor_get(c, &key, &val, MDB_NEXT)) {
		uint32_t g;

		if (key.mv_size < pl + 4 || memcmp(key.mv_data, k, pl))
			break;
		g = rd_be32((const uint8_t *)key.mv_data + pl);
		if (g > *max)
			*max = g;
	}
	mdb_cursor_close(c);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

/* Take a ticket: a generation nothing of @id uses, recorded. */
static int ticket_take_fn(struct sym_store *st, MDB_txn *txn, void *ctx)
{
	struct put_ctx *p = ctx;
	uint8_t k[KEY_MAX];
	uint32_t max = 0;
	int64_t t = now();
	MDB_val key, val = { sizeof(t), &t };
	struct meta_v m;
	int rc = get_meta(txn, st->meta, p->id, p->idlen, &m, NULL);

	if (!rc && m.kind == 0)
		max = m.gen;
	else if (rc && rc != MDB_NOTFOUND)
		return rc;
	rc = max_gen(txn, st->chunks, p->id, p->idlen, &max);
	if (!rc)
		rc = max_gen(txn, st->inflight, p->id, p->idlen, &max);
	if (rc)
		return rc;
	/* Above every generation in use; the clock's bits make a table put
	 * again after a remove get another key than the removed one (the
	 * verdict "corrupt" of a chunk names its key). */
	p->gen = max + 1 + (uint32_t)(t & 0xffff);
	if (p->gen <= max)
		return EOVERFLOW;	/* 4 billion puts of one build ID */
	key.mv_size = ticket_key(k, p->id, p->idlen, p->gen);
	key.mv_data = k;
	return mdb_put(txn, st->inflight, &key, &val, MDB_NOOVERWRITE);
}

static int put_chunk_fn(struct sym_store *st, MDB_txn *txn, void *ctx)
{
	struct put_ctx *p = ctx;
	uint8_t k[KEY_MAX];
	MDB_val key = { chunk_key(k, p->id, p->idlen, p->gen, p->start), k };
	MDB_val val = { p->len, (void *)p->data };
	int rc = ticket_check(st, txn, p, false);

	return rc ? rc : mdb_put(txn, st->chunks, &key, &val, 0);
}

/* The last step of a put: the ticket checked and dropped, the metadata
 * switched to its generation, the chunks it named until now deleted,
 * all in one transaction. */
static int put_meta_fn(struct sym_store *st, MDB_txn *txn, void *ctx)
{
	struct put_ctx *p = ctx;
	struct meta_v old;
	int rc;

	rc = ticket_check(st, txn, p, true);
	if (rc)
		return rc;
	rc = get_meta(txn, st->meta, p->id, p->idlen, &old, NULL);
	if (rc && rc != MDB_NOTFOUND)
		return rc;
	if (!rc && old.kind == 0 && old.gen != p->gen)
		rc = del_chunks(txn, st->chunks, p->id, p->idlen, old.gen);
	else
		rc = 0;
	return rc ? rc : put_meta(txn, st->meta, p->id, p->idlen, &p->meta,
				  p->text);
}

/* A put that will not finish: its ticket and chunks go now rather than
 * at gc.  Best effort. */
static int ticket_drop_fn(struct sym_store *st, MDB_txn *txn, void *ctx)
{
	struct put_ctx *p = ctx;
	uint8_t k[KEY_MAX];
	MDB_val key = { ticket_key(k, p->id, p->idlen, p->gen), k };
	int rc = mdb_del(txn, st->inflight, &key, NULL);

	if (rc == MDB_NOTFOUND)
		return 0;	/* a remove or gc took it, and the chunks */
	return rc ? rc : del_chunks(txn, st->chunks, p->id, p->idlen, p->gen);
}

int symi_store_ticket(struct sym_store *st, const char *build_id,
		      uint32_t *ticket)
{
	struct put_ctx p = { 0 };
	uint8_t id[ID_MAX];
	size_t idlen;
	int err;

	if (!st || !ticket || symi_build_id_parse(build_id, id, &idlen))
		return -EINVAL;
	p.id = id;
	p.idlen = idlen;
	err = write_txn(st, ticket_take_fn, &p);
	*ticket = err ? 0 : p.gen;
	return err;
}

void symi_store_ticket_drop(struct sym_store *st, const char *build_id,
			    uint32_t ticket)
{
	struct put_ctx p = { 0 };
	uint8_t id[ID_MAX];
	size_t idlen;

	if (!st || !ticket || symi_build_id_parse(build_id, id, &idlen))
		return;
	p.id = id;
	p.idlen = idlen;
	p.gen = ticket;
	write_txn(st, ticket_drop_fn, &p);
}

static int enforce_bound(struct sym_store *st, const uint8_t *keep,
			 size_t keep_len);

/*
 * gone_bad() - what this handle knows of a table removed as corrupt.
 * SET marks @id before the removal, so that a thread whose read begins
 * after it finds the mark; CLEAR forgets it (a put); TEST asks.  A
 * lookup that misses the table because another thread of this handle
 * just removed it then gets that thread's verdict, -SYM_E_BADTABLE, not
 * -SYM_E_NOTFOUND: the workers of `sym lookup --threads` report what one
 * thread would.
 * @return TEST: whether @id is marked; otherwise false
 */
enum gone_op { GONE_TEST, GONE_SET, GONE_CLEAR };

static bool gone_bad(struct sym_store *st, const uint8_t *id, size_t idlen,
		     enum gone_op op)
{
	bool hit = false;
	size_t i;

	pthread_mutex_lock(&st->mu);
	for (i = 0; i < GONE_BAD_MAX && !hit; i++) {
		if (st->gone_bad_len[i] != idlen ||
		    memcmp(st->gone_bad[i], id, idlen) != 0)
			continue;
		hit = true;
		if (op == GONE_CLEAR)
			st->gone_bad_len[i] = 0;
	}
	if (op == GONE_SET && !hit) {
		memcpy(st->gone_bad[st->gone_bad_next], id, idlen);
		st->gone_bad_len[st->gone_bad_next] = idlen;
		st->gone_bad_next = (st->gone_bad_next + 1) % GONE_BAD_MAX;
	}
	pthread_mutex_unlock(&st->mu);
	return op == GONE_TEST && hit;
}

/*
 * The steps of a put once its ticket is taken: each of the @n tables of
 * @list as one chunk, each in its own write transaction, then the
 * metadata (of @size bytes, by @converter, @verified or 0), which makes
 * the new generation the entry; on failure the ticket and its chunks go.
 */
static int put_parts(struct sym_store *st, struct put_ctx *p,
		     const struct sym_table *const *list, size_t n,
		     uint64_t size, uint32_t converter, uint32_t verified,
		     const char *source)
{
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		struct sym_table_stat ps;

		sym_table_stat(list[i], &ps);
		sym_table_data(list[i], &p->data, &p->len);
		p->start = i == 0 ? 0 : ps.start;
		err = write_txn(st, put_chunk_fn, p);
	}
	if (!err) {
		p->meta.magic = META_MAGIC;
		p->meta.kind = 0;
		p->meta.size = size;
		p->meta.chunks = (uint32_t)n;
		p->meta.gen = p->gen;
		p->meta.format = SYM_TABLE_FORMAT;
		p->meta.converter = converter;
		p->meta.verified = verified;
		p->meta.created = now();
		p->meta.last_access = p->meta.created;
		p->text = source;
		err = write_txn(st, put_meta_fn, p);
	}
	if (err && err != -ECANCELED)
		write_txn(st, ticket_drop_fn, p);
	if (!err)
		gone_bad(st, p->id, p->idlen, GONE_CLEAR);
	if (!err && st->opts.max_size)
		enforce_bound(st, p->id, p->idlen);
	return err;
}

int symi_store_put_ticket(struct sym_store *st, const char *build_id,
			  const struct sym_table *t, const char *source,
			  uint32_t ticket)
{
	struct sym_table **parts = NULL;
	const struct sym_table *const *list = &t;
	struct sym_table_stat ts;
	struct put_ctx p = { 0 };
	uint8_t id[ID_MAX];
	size_t idlen, n = 0;
	int err;

	if (!st || !t || !ticket || symi_build_id_parse(build_id, id, &idlen))
		return -EINVAL;
	if (st->opts.flags & SYM_STORE_RDONLY)
		return -EROFS;
	p.id = id;
	p.idlen = idlen;
	p.gen = ticket;
	p.ticket = true;
	/* A table that fits one chunk is written as it is: splitting would
	 * copy it whole (2.6 MB for python3.11d). */
	sym_table_stat(t, &ts);
	n = 1;
	err = 0;
	if (ts.size > st->opts.chunk_size) {
		err = sym_table_split(t, st->opts.chunk_size, &parts, &n);
		if (!err)
			list = (const struct sym_table *const *)parts;
	}
	if (!err)
		err = put_parts(st, &p, list, n, ts.size, ts.converter, 0,
				source);
	for (size_t i = 0; parts && i < n; i++)
		sym_table_close(parts[i]);
	free(parts);
	return err;
}

int sym_store_put(struct sym_store *st, const char *build_id,
		  const struct sym_table *t, const char *source)
{
	uint32_t ticket;
	int err;

	if (!st || !t)
		return -EINVAL;
	if (st->opts.flags & SYM_STORE_RDONLY)
		return -EROFS;
	err = symi_store_ticket(st, build_id, &ticket);
	return err ? err : symi_store_put_ticket(st, build_id, t, source,
						 ticket);
}

static int put_neg_fn(struct sym_store *st, MDB_txn *txn, void *ctx)
{
	struct put_ctx *p = ctx;
	struct meta_v old;
	int rc;

	if (p->ticket) {
		rc = ticket_check(st, txn, p, true);
		if (rc)
			return rc;
	}
	rc = get_meta(txn, st->meta, p->id, p->idlen, &old, NULL);
	if (!rc && old.kind == 0)
		return EEXIST;
	if (rc && rc != MDB_NOTFOUND)
		return rc;
	return put_meta(txn, st->meta, p->id, p->idlen, &p->meta, p->text);
}

int symi_store_put_negative_ticket(struct sym_store *st,
				   const char *build_id, int kind,
				   const char *reason, uint32_t ticket)
{
	struct put_ctx p = { 0 };
	uint8_t id[ID_MAX];
	size_t idlen;
	int rc;

	if (!st || symi_build_id_parse(build_id, id, &idlen) ||
	    kind < SYM_STORE_ABSENT || kind > SYM_STORE_BADCONV)
		return -EINVAL;
	p.id = id;
	p.idlen = idlen;
	p.gen = ticket;
	p.ticket = ticket != 0;
	p.text = reason;
	p.meta.magic = META_MAGIC;
	p.meta.kind = (uint32_t)kind;
	p.meta.converter = SYMI_CONVERTER_VERSION;
	p.meta.format = SYM_TABLE_FORMAT;
	p.meta.created = now();
	p.meta.last_access = p.meta.created;
	p.meta.expires = kind == SYM_STORE_ABSENT ?
			 p.meta.created + st->opts.ttl_absent :
			 kind == SYM_STORE_FAILED ?
			 p.meta.created + st->opts.ttl_failed : 0;
	rc = write_txn(st, put_neg_fn, &p);
	if (rc && rc != -ECANCELED && p.ticket)
		write_txn(st, ticket_drop_fn, &p);
	if (!rc)
		gone_bad(st, id, idlen, GONE_CLEAR);
	return rc;
}

int sym_store_put_negative(struct sym_store *st, const char *build_id,
			   int kind, const char *reason)
{
	return symi_store_put_negative_ticket(st, build_id, kind, reason, 0);
}

/* Is a negative entry still in force? */
static bool neg_live(const struct meta_v *m, int64_t t)
{
	if (m->kind == SYM_STORE_BADCONV)
		return m->converter == SYMI_CONVERTER_VERSION;
	return !m->expires || t < m->expires;
}

static void fill_entry(const struct meta_v *m, const char *text,
		       struct sym_store_entry *e)
{
	size_t tl = m->text_len < sizeof(e->text) - 1 ? m->text_len :
		    sizeof(e->text) - 1;

	memset(e, 0, sizeof(*e));
	e->negative = (int)m->kind;
	e->size = m->kind ? 0 : m->size;
	e->chunks = m->chunks;
	e->format = m->format;
	e->converter = m->converter;
	e->created = m->created;
	e->last_access = m->last_access;
	e->expires = m->expires;
	memcpy(e->text, text, tl);
	e->text[tl] = '\0';
}

int sym_store_has_table(struct sym_store *st, const char *build_id)
{
	struct sym_store_entry e;

	return sym_store_stat_entry(st, build_id, &e) == 0 &&
	       e.negative == 0 && e.format == SYM_TABLE_FORMAT &&
	       e.converter == SYMI_CONVERTER_VERSION;
}

int sym_store_stat_entry(struct sym_store *st, const char *build_id,
			 struct sym_store_entry *e)
{
	uint8_t id[ID_MAX];
	size_t idlen;
	MDB_txn *txn = NULL;
	struct meta_v m;
	const char *text;
	int rc;

	if (!st || !e || symi_build_id_parse(build_id, id, &idlen))
		return -EINVAL;
	pthread_rwlock_rdlock(&st->rw);
	rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn);
	if (!rc) {
		rc = get_meta(txn, st->meta, id, idlen, &m, &text);
		if (!rc) {
			if (m.kind && !neg_live(&m, now()))
				rc = MDB_NOTFOUND;
			else
				fill_entry(&m, text, e);
		}
		mdb_txn_abort(txn);
	}
	pthread_rwlock_unlock(&st->rw);
	return mdb_err(rc, "cannot read metadata");
}

/* Batched access times. */
static int flush_fn(struct sym_store *st, MDB_txn *txn, void *ctx)
{
	struct pending *pv = ctx;

	for (size_t i = 0; pv[i].idlen; i++) {
		struct meta_v m;
		const char *text;
		char tbuf[512];
		bool mark;
		int rc = get_meta(txn, st->meta, pv[i].id, pv[i].idlen, &m,
				  &text);

		if (rc == MDB_NOTFOUND || rc == MDB_CORRUPTED)
			continue;
		if (rc)
			return rc;
		mark = pv[i].verified_gen && pv[i].verified_gen == m.gen &&
		       !m.kind && m.verified != STORE_VERIFIED;
		if (m.last_access >= pv[i].when && !mark)
			continue;
		if (m.last_access < pv[i].when)
			m.last_access = pv[i].when;
		if (mark)
			m.verified = STORE_VERIFIED;
		if (m.text_len >= sizeof(tbuf))
			m.text_len = sizeof(tbuf) - 1;
		memcpy(tbuf, text, m.text_len);
		tbuf[m.text_len] = '\0';
		rc = put_meta(txn, st->meta, pv[i].id, pv[i].idlen, &m, tbuf);
		if (rc)
			return rc;
	}
	return 0;
}

static void flush_pending(struct sym_store *st)
{
	struct pending pv[PENDING_MAX + 1];
	size_t n;

	pthread_mutex_lock(&st->mu);
	n = st->npending;
	memcpy(pv, st->pending, n * sizeof(pv[0]));
	st->npending = 0;
	st->last_flush = now();
	pthread_mutex_unlock(&st->mu);
	if (!n || (st->opts.flags & SYM_STORE_RDONLY))
		return;
	pv[n].idlen = 0;
	write_txn(st, flush_fn, pv);	/* best effort */
}

/* A read of @id's table now, whose metadata said @m; @verified_gen (0:
 * none) is a generation of it this process verified whole
 * (STORE_VERIFIED).  Nothing is noted when there is nothing to write:
 * the stored access time is recent enough (ACCESS_GRAIN) and nothing
 * was verified. */
static void note_access(struct sym_store *st, const uint8_t *id,
			size_t idlen, const struct meta_v *m,
			uint32_t verified_gen)
{
	bool flush = false;
	int64_t t = now();
	size_t i;

	if (!verified_gen && m->last_access > m->created &&
	    t - m->last_access < ACCESS_GRAIN)
		return;
	pthread_mutex_lock(&st->mu);
	for (i = 0; i < st->npending; i++) {
		if (st->pending[i].idlen == idlen &&
		    !memcmp(st->pending[i].id, id, idlen))
			break;
	}
	if (i == st->npending && st->npending < PENDING_MAX) {
		memcpy(st->pending[i].id, id, idlen);
		st->pending[i].idlen = (uint8_t)idlen;
		st->pending[i].verified_gen = 0;
		st->npending++;
	}
	if (i < PENDING_MAX) {
		st->pending[i].when = t;
		if (verified_gen)
			st->pending[i].verified_gen = verified_gen;
	}
	flush = (st->npending >= PENDING_MAX ||
		 t - st->last_flush >= PENDING_SECS) &&
		!(st->opts.flags & SYM_STORE_NO_READER_WRITES);
	pthread_mutex_unlock(&st->mu);
	if (flush)
		flush_pending(st);
}

int sym_store_maintain(struct sym_store *st)
{
	int dead = 0;

	if (!st)
		return -EINVAL;
	flush_pending(st);
	mdb_reader_check(st->env, &dead);
	if (dead)
		symi_info("store: cleared %d stale readers in '%s'", dead,
			  st->dir);
	return dead;
}

/* Has this process verified the chunk with this (crc, start, size)? */
static bool verified_test_set(struct sym_store *st, uint64_t h, bool set)
{
	bool hit = false;
	size_t j;

	if (!h)
		h = 1;
	pthread_mutex_lock(&st->mu);
	if (!st->verified)
		st->verified = calloc(VERIFIED_MAX, sizeof(*st->verified));
	if (st->verified) {
		j = (size_t)(h % VERIFIED_MAX);
		for (size_t k = 0; k < VERIFIED_MAX; k++) {
			size_t s = (j + k) % VERIFIED_MAX;

			if (st->verified[s] == h) {
				hit = true;
				break;
			}
			if (!st->verified[s]) {
				if (set && st->nverified < VERIFIED_MAX / 2) {
					st->verified[s] = h;
					st->nverified++;
				}
				break;
			}
		}
	}
	pthread_mutex_unlock(&st->mu);
	return hit;
}

/*
 * verifying_begin() - become the thread that verifies chunk @h, or wait
 * for the one that is: threads that read one table at once (the workers
 * of `sym lookup --threads`, symd's) check it once between them, and a
 * corrupt one is reported once.
 * @return true: verify it, then call verifying_end(); false: another
 *         thread has, and verified_test_set(st, h, false) is its verdict
 */
static bool verifying_begin(struct sym_store *st, uint64_t h)
{
	bool waited = false;
	size_t i, free_slot;

	if (!h)
		h = 1;
	pthread_mutex_lock(&st->mu);
	for (;;) {
		free_slot = VERIFYING_MAX;
		for (i = 0; i < VERIFYING_MAX; i++) {
			if (st->verifying[i] == h)
				break;
			if (!st->verifying[i] && free_slot == VERIFYING_MAX)
				free_slot = i;
		}
		if (i == VERIFYING_MAX)
			break;
		waited = true;
		pthread_cond_wait(&st->verify_cv, &st->mu);
	}
	if (!waited && free_slot < VERIFYING_MAX)
		st->verifying[free_slot] = h;
	pthread_mutex_unlock(&st->mu);
	return !waited;
}

static void verifying_end(struct sym_store *st, uint64_t h)
{
	if (!h)
		h = 1;
	pthread_mutex_lock(&st->mu);
	for (size_t i = 0; i < VERIFYING_MAX; i++) {
		if (st->verifying[i] == h)
			st->verifying[i] = 0;
	}
	pthread_cond_broadcast(&st->verify_cv);
	pthread_mutex_unlock(&st->mu);
}

struct chunk {
	struct sym_table *t;
	void *copy;		/* free(): aligned copy, when needed */
	uint64_t start, end;
};

static void chunk_drop(struct chunk *c)
{
	sym_table_close(c->t);
	free(c->copy);
	memset(c, 0, sizeof(*c));
}

/*
 * View a chunk value as a table, in place when LMDB gives it 8-byte
 * aligned (values on overflow pages), else from a copy (small values
 * inside a leaf page).  Returns 0, ENOMEM or -SYM_E_BADTABLE.
 */
static int chunk_open(const MDB_val *val, uint64_t known, struct chunk *c)
{
	const void *data = val->mv_data;

	if ((uintptr_t)data & 7) {
		c->copy = malloc(val->mv_size ? val->mv_size : 1);
		if (!c->copy)
			return ENOMEM;
		memcpy(c->copy, data, val->mv_size);
		data = c->copy;
	}
	if (symi_table_open_known(data, val->mv_size, known, &c->t) != 0) {
		chunk_drop(c);
		return -SYM_E_BADTABLE;
	}
	return 0;
}

/* A chunk's identity for the verdicts: its CRC (the header's), start and
 * size; 0 when @val is too short to hold a header. */
static uint64_t chunk_vh(const MDB_val *key, const MDB_val *val)
{
	uint32_t crc;

	if (val->mv_size < sizeof(struct symt_header) || key->mv_size < 8)
		return 0;
	memcpy(&crc, (const char *)val->mv_data +
			     offsetof(struct symt_header, crc), sizeof(crc));
	return ((uint64_t)crc << 32) ^
	       rd_be64((const uint8_t *)key->mv_data + key->mv_size - 8) ^
	       val->mv_size;
}

/* Open the chunk at @key/@val into @c, verifying it if this process has
 * not yet: its CRC alone when @trusted (the entry is STORE_VERIFIED).
 * 0, ENOMEM, or -SYM_E_BADTABLE. */
static int chunk_check(struct sym_store *st, const MDB_val *key,
		       const MDB_val *val, bool trusted, struct chunk *c)
{
	struct sym_table_stat ts;
	uint64_t vh = chunk_vh(key, val);
	/* A chunk verified before in this process is opened under that
	 * verdict's key: its compressed areas are found again unread. */
	bool known = vh && verified_test_set(st, vh, false);
	int rc = chunk_open(val, known ? vh : 0, c);

	if (rc)
		return rc;
	c->start = rd_be64((const uint8_t *)key->mv_data + key->mv_size - 8);
	if (!known && !verified_test_set(st, vh, false)) {
		/* A verdict "corrupt" names the key too (its generation): a
		 * table stored again with the same bytes is checked anew. */
		uint64_t bad = vh ^ VERIFIED_BAD;
		bool mine;

		for (size_t i = 0; i < key->mv_size; i++)
			bad = (bad ^ ((const uint8_t *)key->mv_data)[i]) *
			      0x100000001b3ull;
		/* A verdict is looked for after verifying_begin(): the
		 * one waited for, or a whole check another thread did
		 * between the test above and now (checked twice, it would
		 * be logged twice). */
		mine = verifying_begin(st, vh);
		if (verified_test_set(st, bad, false)) {
			rc = -SYM_E_BADTABLE;	/* found corrupt by another */
		} else if (!verified_test_set(st, vh, false)) {
			/* Ours, or the set was too full to keep a verdict.
			 * An entry verified whole before (STORE_VERIFIED):
			 * its CRC alone. */
			int v = trusted ? symi_table_check_crc(c->t) :
					  sym_table_verify(c->t);

			/* Out of memory is no verdict on the table. */
			rc = v == -ENOMEM ? ENOMEM : v ? -SYM_E_BADTABLE : 0;
			if (rc != ENOMEM)
				verified_test_set(st, rc ? bad : vh, true);
		}
		if (mine)
			verifying_end(st, vh);
		if (rc) {
			chunk_drop(c);
			return rc;
		}
	}
	sym_table_stat(c->t, &ts);
	c->end = ts.end;
	return 0;
}

/* Open the chunk holding @addr.  MDB codes, or -SYM_E_BADTABLE. */
static int chunk_find(struct sym_store *st, MDB_cursor *cur,
		      const uint8_t *id, size_t idlen, uint32_t gen,
		      bool trusted, uint64_t addr, struct chunk *c)
{
	uint8_t k[KEY_MAX];
	size_t kl = chunk_key(k, id, idlen, gen, addr), pl = kl - 8;
	MDB_val key = { kl, k }, val;
	int rc;

	chunk_drop(c);
	/* The last key <= (id, gen, addr): seek past, step back. */
	rc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE);
	if (rc == 0 && key.mv_size == kl && memcmp(key.mv_data, k, kl) == 0)
		;	/* exact hit */
	else if (rc == 0 || rc == MDB_NOTFOUND)
		rc = mdb_cursor_get(cur, &key, &val,
				    rc == 0 ? MDB_PREV : MDB_LAST);
	if (rc)
		return rc;
	if (key.mv_size != kl || memcmp(key.mv_data, k, pl) != 0)
		return MDB_NOTFOUND;
	return chunk_check(st, &key, &val, trusted, c);
}

/*
 * A read of one table: the read lock, a read transaction, the metadata
 * checked (a table, of this format and converter), a cursor on the
 * chunks.  end_table_read() undoes it, whatever begin_table_read()
 * managed to do.
 */
struct table_read {
	MDB_txn *txn;
	MDB_cursor *cur;
	struct meta_v m;
	bool locked;
};

static int begin_table_read(struct sym_store *st, const uint8_t *id,
			    size_t idlen, struct table_read *r)
{
	int rc;

	memset(r, 0, sizeof(*r));
	pthread_rwlock_rdlock(&st->rw);
	r->locked = true;
	rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &r->txn);
	if (rc) {
		r->txn = NULL;
		return mdb_err(rc, "cannot begin read transaction");
	}
	rc = get_meta(r->txn, st->meta, id, idlen, &r->m, NULL);
	if (rc == MDB_NOTFOUND || (!rc && r->m.kind))
		return -SYM_E_NOTFOUND;
	if (rc)
		return mdb_err(rc, "cannot read metadata");
	if (r->m.format != SYM_TABLE_FORMAT ||
	    r->m.converter != SYMI_CONVERTER_VERSION)
		return -SYM_E_STALE;
	rc = mdb_cursor_open(r->txn, st->chunks, &r->cur);
	if (rc) {
		r->cur = NULL;
		return mdb_err(rc, "cannot open cursor");
	}
	return 0;
}

static void end_table_read(struct sym_store *st, struct table_read *r)
{
	if (r->cur)
		mdb_cursor_close(r->cur);
	if (r->txn)
		mdb_txn_abort(r->txn);
	if (r->locked)
		pthread_rwlock_unlock(&st->rw);
	r->locked = false;
}

/* The flags in the header of the first chunk of the table @r reads (every
 * chunk's header carries the whole table's), without opening it.  0,
 * -SYM_E_NOTFOUND, -SYM_E_BADTABLE or -errno. */
static int first_chunk_flags(struct table_read *r, const uint8_t *id,
			     size_t idlen, uint32_t *flags)
{
	uint8_t k[KEY_MAX];
	size_t kl = chunk_key(k, id, idlen, r->m.gen, 0);
	MDB_val key = { kl, k }, val;
	int rc = mdb_cursor_get(r->cur, &key, &val, MDB_SET_RANGE);

	if (!rc && (key.mv_size != kl || memcmp(key.mv_data, k, kl - 8)))
		rc = MDB_NOTFOUND;
	if (rc == MDB_NOTFOUND)
		return -SYM_E_NOTFOUND;
	if (rc)
		return mdb_err(rc, "cannot read table");
	return symi_table_header_flags(val.mv_data, val.mv_size, flags);
}

int sym_store_table_flags(struct sym_store *st, const char *build_id,
			  uint32_t *flags)
{
	uint8_t id[ID_MAX];
	size_t idlen;
	struct table_read r;
	int err;

	if (!st || !flags || symi_build_id_parse(build_id, id, &idlen))
		return -EINVAL;
	*flags = 0;
	err = begin_table_read(st, id, idlen, &r);
	if (!err)
		err = first_chunk_flags(&r, id, idlen, flags);
	end_table_read(st, &r);
	return err;
}

/*
 * symi_batch_lookup()'s view of a stored table: the chunk at an address.
 * Every chunk opened stays open until the lookup ends (the batch answers
 * from several at once), in @open, ascending by start.
 */
struct chunk_at {
	struct sym_store *st;
	MDB_cursor *cur;
	const uint8_t *id;
	size_t idlen;
	uint32_t gen;
	bool trusted;		/* the entry is STORE_VERIFIED */
	struct chunk *open;
	size_t nopen, cap;
	bool bad;
};

/* Index of the last open chunk starting at or below @addr, or nopen. */
static size_t chunk_open_at(const struct chunk_at *ca, uint64_t addr)
{
	size_t lo = 0, hi = ca->nopen;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ca->open[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : ca->nopen;
}

static int chunk_at(void *ctx, uint64_t addr, const struct sym_table **t,
		    uint64_t *start, uint64_t *end)
{
	struct chunk_at *ca = ctx;
	struct chunk c = { 0 }, *hit;
	size_t i = chunk_open_at(ca, addr);
	int rc;

	*t = NULL;
	if (i < ca->nopen && addr < ca->open[i].end) {
		hit = &ca->open[i];
		goto found;
	}
	rc = chunk_find(ca->st, ca->cur, ca->id, ca->idlen, ca->gen,
			ca->trusted, addr, &c);
	if (rc == -SYM_E_BADTABLE) {
		ca->bad = true;
		return rc;
	}
	if (rc == MDB_NOTFOUND)
		return 0;
	if (rc)
		return rc == ENOMEM ? -ENOMEM : mdb_err(rc, "cannot read chunk");
	i = chunk_open_at(ca, c.start);
	if (i < ca->nopen && ca->open[i].start == c.start) {
		chunk_drop(&c);		/* open already: @addr is past its end */
		hit = &ca->open[i];
	} else {
		i = i < ca->nopen ? i + 1 : 0;
		if (ca->nopen == ca->cap &&
		    symi_grow((void **)&ca->open, &ca->cap, ca->nopen + 1,
			      sizeof(*ca->open))) {
			chunk_drop(&c);
			return -ENOMEM;
		}
		memmove(&ca->open[i + 1], &ca->open[i],
			(ca->nopen - i) * sizeof(*ca->open));
		ca->open[i] = c;
		ca->nopen++;
		hit = &ca->open[i];
	}
found:
	if (addr >= hit->start && addr < hit->end) {
		*t = hit->t;
		*start = hit->start;
		*end = hit->end;
	}
	return 0;
}

static int verify_table(struct sym_store *st, struct table_read *r,
			const uint8_t *id, size_t idlen, bool trusted);

/* Batches from this size on verify a whole table up front (libjvm,
 * 100,000 addresses: 220 -> 209 ms; one address: 29 ms lazily, 38 ms up
 * front). */
#define VERIFY_ALL_MIN 1024

int sym_store_lookup(struct sym_store *st, const char *build_id,
		     const uint64_t *addrs, size_t count, sym_frames_fn fn,
		     void *ctx)
{
	return sym_store_lookup_omit(st, build_id, addrs, count, 0, fn, ctx);
}

int sym_store_lookup_omit(struct sym_store *st, const char *build_id,
			  const uint64_t *addrs, size_t count, unsigned omit,
			  sym_frames_fn fn, void *ctx)
{
	return symi_store_lookup_gnu(st, build_id, addrs, count, omit, NULL,
				     fn, ctx);
}

int symi_store_lookup_gnu(struct sym_store *st, const char *build_id,
			  const uint64_t *addrs, size_t count, unsigned omit,
			  struct symi_gnu_text *text, sym_frames_fn fn,
			  void *ctx)
{
	struct chunk_at ca = { .st = st };
	struct table_read r;
	uint8_t id[ID_MAX];
	size_t idlen;
	uint32_t whole = 0;	/* a generation now verified whole */
	int err;

	if (!st || !fn || (!addrs && count) || (omit & ~SYMI_OMIT_ALL) ||
	    symi_build_id_parse(build_id, id, &idlen))
		return -EINVAL;
	err = begin_table_read(st, id, idlen, &r);
	if (err == -SYM_E_NOTFOUND && gone_bad(st, id, idlen, GONE_TEST))
		err = -SYM_E_BADTABLE;	/* already removed: not ca.bad */
	ca.trusted = !err && r.m.verified == STORE_VERIFIED;
	/* Many addresses will touch every chunk: check them all at once,
	 * in parallel.  A few are checked chunk by chunk as they are hit. */
	if (!err && count >= VERIFY_ALL_MIN) {
		err = verify_table(st, &r, id, idlen, ca.trusted);
		ca.bad = err == -SYM_E_BADTABLE;
		if (!err && r.m.chunks >= 2)
			whole = r.m.gen;
	}
	if (!err) {
		ca.cur = r.cur;
		ca.id = id;
		ca.idlen = idlen;
		ca.gen = r.m.gen;
		err = symi_batch_lookup(addrs, count, chunk_at, &ca, omit,
					text, fn, ctx);
		/* One chunk, opened: checked. */
		if (r.m.chunks == 1 && ca.nopen == 1 && !ca.bad)
			whole = r.m.gen;
	}
	if (ca.trusted)
		whole = 0;	/* recorded already */
	for (size_t i = 0; i < ca.nopen; i++)
		chunk_drop(&ca.open[i]);
	free(ca.open);
	end_table_read(st, &r);
	if (ca.bad) {
		/* Threads that found it corrupt together: one says so.
		 * Marked first: see gone_bad(). */
		gone_bad(st, id, idlen, GONE_SET);
		if (sym_store_remove(st, build_id) == 0)
			symi_warn("store: table of %s is corrupt; removed",
				  build_id);
	} else if (!err || err > 0) {
		note_access(st, id, idlen, &r.m, whole);
	}
	return err;
}

/*
 * Check the chunks of the table (@id, @gen) whose index is @part modulo
 * @nparts, through @cur (each chunk once per process; the CRC alone when
 * @trusted).
 */
static int verify_chunks(struct sym_store *st, MDB_cursor *cur,
			 const uint8_t *id, size_t idlen, uint32_t gen,
			 bool trusted, unsigned part, unsigned nparts)
{
	struct chunk c = { 0 };
	uint8_t k[KEY_MAX];
	size_t kl = chunk_key(k, id, idlen, gen, 0), pl = kl - 8;
	MDB_val key = { kl, k }, val;
	unsigned i = 0;
	int rc, err = 0;

	for (rc = mdb_cursor_get(cur, &key, &val, MDB_SET_RANGE);
	     rc == 0 && key.mv_size == kl && memcmp(key.mv_data, k, pl) == 0;
	     rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT), i++) {
		if (i % nparts != part)
			continue;
		err = chunk_check(st, &key, &val, trusted, &c);
		chunk_drop(&c);
		if (err)
			break;
	}
	if (!err && rc && rc != MDB_NOTFOUND)
		err = mdb_err(rc, "cannot read chunk");
	else if (err == ENOMEM)
		err = -ENOMEM;
	return err;
}

struct verify_half {
	struct sym_store *st;
	uint8_t id[ID_MAX];
	size_t idlen;
	uint32_t gen;
	bool trusted;
	int err;
};

static void *verify_half_main(void *arg)
{
	struct verify_half *v = arg;
	struct table_read r;

	v->err = begin_table_read(v->st, v->id, v->idlen, &r);
	if (!v->err)
		v->err = verify_chunks(v->st, r.cur, v->id, v->idlen, v->gen,
				       v->trusted, 1, 2);
	end_table_read(v->st, &r);
	return NULL;
}

/*
 * The first use of a table of several chunks in a process checks every
 * chunk's CRC (about 25 ms per 44 MB chunk of libjvm): on two threads,
 * each in a read transaction of its own, that takes half the wall time.
 * Each process does this once per table (an entry of the verified set
 * stands for the whole table).
 */
static int verify_table(struct sym_store *st, struct table_read *r,
			const uint8_t *id, size_t idlen, bool trusted)
{
	struct verify_half v = { .st = st, .idlen = idlen, .gen = r->m.gen,
				 .trusted = trusted };
	uint64_t vh = ((uint64_t)r->m.gen << 32) ^ 0x7461626c65ull;
	bool helper;
	pthread_t tid;
	int err;

	for (size_t i = 0; i < idlen; i++)
		vh = (vh ^ id[i]) * 0x100000001b3ull;
	if (r->m.chunks < 2 || verified_test_set(st, vh, false))
		return 0;
	memcpy(v.id, id, idlen);
	helper = pthread_create(&tid, NULL, verify_half_main, &v) == 0;
	err = verify_chunks(st, r->cur, id, idlen, r->m.gen, trusted, 0,
			    helper ? 2 : 1);
	if (helper) {
		pthread_join(tid, NULL);
		if (!err)
			err = v.err;
	}
	if (!err)
		verified_test_set(st, vh, true);
	return err;
}

int symi_store_verified(struct sym_store *st, const char *build_id)
{
	struct table_read r;
	uint8_t id[ID_MAX];
	size_t idlen;
	int err;

	if (!st || symi_build_id_parse(build_id, id, &idlen))
		return -EINVAL;
	err = begin_table_read(st, id, idlen, &r);
	if (!err)
		err = r.m.verified == STORE_VERIFIED;
	end_table_read(st, &r);
	return err;
}

int sym_store_warm(struct sym_store *st, const char *build_id)
{
	struct table_read r;
	uint8_t id[ID_MAX];
	size_t idlen;
	uint32_t whole = 0;
	bool trusted;
	int err;

	if (!st || symi_build_id_parse(build_id, id, &idlen))
		return -EINVAL;
	/* On this thread only: servers warm tables from worker pools sized
	 * to leave a core to their event loop (symd: cores - 1). */
	err = begin_table_read(st, id, idlen, &r);
	trusted = !err && r.m.verified == STORE_VERIFIED;
	if (!err)
		err = verify_chunks(st, r.cur, id, idlen, r.m.gen, trusted, 0,
				    1);
	if (!err && !trusted)
		whole = r.m.gen;
	end_table_read(st, &r);
	if (whole)
		note_access(st, id, idlen, &r.m, whole);
	if (err == -SYM_E_BADTABLE) {
		gone_bad(st, id, idlen, GONE_SET);
		if (sym_store_remove(st, build_id) == 0)
			symi_warn("store: table of %s is corrupt; removed",
				  build_id);
	}
	return err;
}

/* Delete @id's tickets (puts under way, which then fail); sets
 * p->kind to 1 when there was one. */
static int del_tickets(struct sym_store *st, MDB_txn *txn,
		       struct put_ctx *p)
{
	uint8_t k[KEY_MAX];
	size_t pl = meta_key(k, p->id, p->idlen);
	MDB_cursor *c = NULL;
	MDB_val key = { pl, k }, val;
	int rc = mdb_cursor_open(txn, st->inflight, &c);

	if (rc)
		return rc;
	rc = mdb_cursor_get(c, &key, &val, MDB_SET_RANGE);
	while (!rc && key.mv_size == pl + 4 && !memcmp(key.mv_data, k, pl)) {
		rc = mdb_cursor_del(c, 0);
		if (!rc)
			rc = mdb_cursor_get(c, &key, &val, MDB_GET_CURRENT);
		if (rc == EINVAL)	/* deleted the last key */
			rc = MDB_NOTFOUND;
		p->kind = 1;
	}
	mdb_cursor_close(c);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

/* Metadata, every chunk and every ticket of the build ID, at once:
 * p->kind is 1 when there was anything. */
static int remove_fn(struct sym_store *st, MDB_txn *txn, void *ctx)
{
	struct put_ctx *p = ctx;
	uint8_t k[KEY_MAX];
	MDB_val key = { meta_key(k, p->id, p->idlen), k };
	int rc = mdb_del(txn, st->meta, &key, NULL);

	p->kind = rc == 0;
	if (rc && rc != MDB_NOTFOUND)
		return rc;
	rc = del_tickets(st, txn, p);
	return rc ? rc : del_chunks(txn, st->chunks, p->id, p->idlen, -1);
}

int sym_store_remove(struct sym_store *st, const char *build_id)
{
	struct put_ctx p = { 0 };
	uint8_t id[ID_MAX];
	size_t idlen;
	bool files;
	int err;

	if (!st || symi_build_id_parse(build_id, id, &idlen))
		return -EINVAL;
	if (st->opts.flags & SYM_STORE_RDONLY)
		return -EROFS;
	p.id = id;
	p.idlen = idlen;
	/* Files first: a conversion that opens them after this finds none,
	 * and one that opened them before holds a ticket taken before,
	 * which the transaction below deletes. */
	files = symi_files_remove(st, build_id);
	err = write_txn(st, remove_fn, &p);
	if (!err && p.kind == 0 && !files)
		return -SYM_E_NOTFOUND;
	return err;
}

int sym_store_list(struct sym_store *st, sym_store_list_fn fn, void *ctx)
{
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL;
	MDB_val key, val;
	int rc, err = 0;
	int64_t t = now();

	if (!st || !fn)
		return -EINVAL;
	pthread_rwlock_rdlock(&st->rw);
	rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn);
	if (!rc)
		rc = mdb_cursor_open(txn, st->meta, &cur);
	if (rc) {
		if (txn)
			mdb_txn_abort(txn);
		pthread_rwlock_unlock(&st->rw);
		return mdb_err(rc, "cannot list");
	}
	for (rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST); !rc;
	     rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
		const uint8_t *k = key.mv_data;
		struct sym_store_entry e;
		struct meta_v m;
		char hex[2 * ID_MAX + 1];

		if (key.mv_size < 2 || k[0] != key.mv_size - 1 ||
		    k[0] > ID_MAX || val.mv_size < sizeof(m))
			continue;
		memcpy(&m, val.mv_data, sizeof(m));
		if (m.magic != META_MAGIC ||
		    m.text_len > val.mv_size - sizeof(m) ||
		    (m.kind && !neg_live(&m, t)))
			continue;
		fill_entry(&m, (const char *)val.mv_data + sizeof(m), &e);
		symi_hex(k + 1, k[0], hex);
		err = fn(ctx, hex, &e);
		if (err)
			break;
	}
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	pthread_rwlock_unlock(&st->rw);
	return err;
}

/*
 * Garbage collection.
 */
struct lru {
	uint8_t id[ID_MAX];
	uint8_t idlen;
	int64_t last;
	uint64_t size;
};

static int lru_cmp(const void *a, const void *b)
{
	const struct lru *x = a, *y = b;

	return x->last < y->last ? -1 : x->last > y->last;
}

struct gc_ctx {
	struct lru *v;
	size_t n, cap, nsorted;
	uint64_t live;
	uint32_t expired, orphans;
	int64_t now;
};

/* Is there a ticket whose key is the first @n bytes of the chunk key
 * @k (id prefix and generation)? */
static bool has_ticket(struct sym_store *st, MDB_txn *txn, const uint8_t *k,
		       size_t n)
{
	MDB_val key = { n, (void *)k }, val;

	return mdb_get(txn, st->inflight, &key, &val) == 0;
}

/* Tickets of puts that crashed (or outlived TICKET_MAX_AGE, after which
 * they fail) go, and their chunks with them below. */
static int drop_stale_tickets(struct sym_store *st, MDB_txn *txn,
			      struct gc_ctx *g)
{
	MDB_cursor *cur = NULL;
	MDB_val key, val;
	int rc = mdb_cursor_open(txn, st->inflight, &cur);

	if (rc)
		return rc;
	rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST);
	while (!rc) {
		int64_t started = 0;

		if (val.mv_size == sizeof(started))
			memcpy(&started, val.mv_data, sizeof(started));
		if (g->now - started <= TICKET_MAX_AGE) {
			rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT);
			continue;
		}
		rc = mdb_cursor_del(cur, 0);
		if (!rc)
			rc = mdb_cursor_get(cur, &key, &val, MDB_GET_CURRENT);
		if (rc == EINVAL)
			rc = MDB_NOTFOUND;
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

/* One write txn: drop expired negatives, stale tickets and orphan
 * chunks, and collect the tables for the LRU pass. */
static int gc_scan_fn(struct sym_store *st, MDB_txn *txn, void *ctx)
{
	struct gc_ctx *g = ctx;
	MDB_cursor *cur = NULL;
	MDB_val key, val;
	int rc;

	g->n = 0;
	g->live = 0;
	g->expired = g->orphans = 0;
	rc = mdb_cursor_open(txn, st->meta, &cur);
	if (rc)
		return rc;
	for (rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST); !rc;
	     rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
		const uint8_t *k = key.mv_data;
		struct meta_v m;

		if (key.mv_size < 2 || k[0] != key.mv_size - 1 ||
		    k[0] > ID_MAX || val.mv_size < sizeof(m))
			continue;
		memcpy(&m, val.mv_data, sizeof(m));
		if (m.kind) {
			if (!neg_live(&m, g->now)) {
				rc = mdb_cursor_del(cur, 0);
				if (rc)
					break;
				g->expired++;
			}
			continue;
		}
		if (symi_grow((void **)&g->v, &g->cap, g->n + 1,
			      sizeof(*g->v))) {
			rc = ENOMEM;
			break;
		}
		memcpy(g->v[g->n].id, k + 1, k[0]);
		g->v[g->n].idlen = k[0];
		g->v[g->n].last = m.last_access;
		g->v[g->n].size = m.size;
		g->live += m.size;
		g->n++;
	}
	mdb_cursor_close(cur);
	if (rc && rc != MDB_NOTFOUND)
		return rc;
	rc = drop_stale_tickets(st, txn, g);
	if (rc)
		return rc;
	/* Orphan chunks: no metadata, or another generation, and no put
	 * under way with that generation. */
	rc = mdb_cursor_open(txn, st->chunks, &cur);
	if (rc)
		return rc;
	for (rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST); !rc;) {
		const uint8_t *k = key.mv_data;
		struct meta_v m;
		bool orphan = true;

		if (key.mv_size >= 13 && k[0] <= ID_MAX &&
		    key.mv_size == (size_t)k[0] + 13u &&
		    ((get_meta(txn, st->meta, k + 1, k[0], &m, NULL) == 0 &&
		      m.kind == 0 && m.gen == rd_be32(k + 1 + k[0])) ||
		     has_ticket(st, txn, k, (size_t)k[0] + 5)))
			orphan = false;
		if (orphan) {
			rc = mdb_cursor_del(cur, 0);
			if (rc)
				break;
			g->orphans++;
			rc = mdb_cursor_get(cur, &key, &val, MDB_GET_CURRENT);
			if (rc == EINVAL)
				rc = MDB_NOTFOUND;
			continue;
		}
		rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT);
	}
	mdb_cursor_close(cur);
	return rc == MDB_NOTFOUND ? 0 : rc;
}

static int id_cmp(const void *a, const void *b)
{
	const struct lru *x = a, *y = b;

	if (x->idlen != y->idlen)
		return x->idlen < y->idlen ? -1 : 1;
	return memcmp(x->id, y->id, x->idlen);
}

/* The file area counts too: a build ID's files are added to its entry,
 * and files no entry owns (an upload whose conversion never ran) become
 * entries of their own, as old as the files. */
static int gc_file_fn(void *ctx, const char *hex, uint64_t bytes,
		      int64_t mtime)
{
	struct gc_ctx *g = ctx;
	struct lru key, *hit;
	size_t len;

	if (symi_build_id_parse(hex, key.id, &len))
		return 0;
	key.idlen = (uint8_t)len;
	hit = bsearch(&key, g->v, g->nsorted, sizeof(*g->v), id_cmp);
	if (!hit) {
		if (symi_grow((void **)&g->v, &g->cap, g->n + 1,
			      sizeof(*g->v)))
			return -ENOMEM;
		hit = &g->v[g->n++];
		*hit = key;
		hit->last = mtime;
		hit->size = 0;
	}
	hit->size += bytes;
	g->live += bytes;
	return 0;
}

static int count_files(struct sym_store *st, struct gc_ctx *g)
{
	qsort(g->v, g->n, sizeof(*g->v), id_cmp);
	g->nsorted = g->n;
	return symi_files_scan(st, gc_file_fn, g);
}

/* Evict least recently used entries until the live bytes fit, never
 * @keep (the table a put just stored: access times are in seconds, so
 * it may tie with older ones, and the caller is about to read it). */
static int evict(struct sym_store *st, struct gc_ctx *g, uint32_t *evicted,
		 const uint8_t *keep, size_t keep_len)
{
	*evicted = 0;
	if (!st->opts.max_size || g->live <= st->opts.max_size)
		return 0;
	qsort(g->v, g->n, sizeof(*g->v), lru_cmp);
	for (size_t i = 0; i < g->n && g->live > st->opts.max_size; i++) {
		char hex[2 * ID_MAX + 1];
		int err;

		if (keep && g->v[i].idlen == keep_len &&
		    memcmp(g->v[i].id, keep, keep_len) == 0)
			continue;
		symi_hex(g->v[i].id, g->v[i].idlen, hex);
		err = sym_store_remove(st, hex);
		if (err && err != -SYM_E_NOTFOUND)
			return err;
		g->live -= g->v[i].size;
		(*evicted)++;
	}
	return 0;
}

static int enforce_bound(struct sym_store *st, const uint8_t *keep,
			 size_t keep_len)
{
	struct gc_ctx g = { .now = now() };
	uint32_t ev;
	int err;

	flush_pending(st);
	err = write_txn(st, gc_scan_fn, &g);
	if (!err)
		err = count_files(st, &g);
	if (!err)
		err = evict(st, &g, &ev, keep, keep_len);
	free(g.v);
	return err;
}

static uint64_t file_size(const char *dir)
{
	char path[PATH_MAX];
	struct stat sb;

	if (snprintf(path, sizeof(path), "%s/data.mdb", dir) >=
	    (int)sizeof(path) || stat(path, &sb) != 0)
		return 0;
	return (uint64_t)sb.st_size;
}

static int compact(struct sym_store *st)
{
	char tmp[PATH_MAX], from[PATH_MAX], to[PATH_MAX];
	int rc, err;

	if (snprintf(tmp, sizeof(tmp), "%s/.compact", st->dir) >=
		    (int)sizeof(tmp) ||
	    snprintf(from, sizeof(from), "%s/data.mdb", tmp) >=
		    (int)sizeof(from) ||
	    snprintf(to, sizeof(to), "%s/data.mdb", st->dir) >=
		    (int)sizeof(to))
		return -ENAMETOOLONG;
	unlink(from);
	if (mkdir(tmp, 0755) != 0 && errno != EEXIST)
		return -errno;
	pthread_rwlock_wrlock(&st->rw);
	rc = mdb_env_copy2(st->env, tmp, MDB_CP_COMPACT);
	if (rc) {
		pthread_rwlock_unlock(&st->rw);
		unlink(from);
		rmdir(tmp);
		return mdb_err(rc, "cannot compact");
	}
	/* Swap the files: the copy is complete and synced by LMDB. */
	mdb_env_close(st->env);
	st->env = NULL;
	if (rename(from, to) != 0) {
		err = -errno;
		symi_warn("store: cannot replace '%s': %s", to,
			  strerror(-err));
	} else {
		err = 0;
	}
	rmdir(tmp);
	st->mapsize = MAP_START;
	rc = env_open(st);
	pthread_rwlock_unlock(&st->rw);
	return err ? err : rc;
}

int sym_store_gc(struct sym_store *st, int do_compact,
		 struct sym_store_gc_stats *stats)
{
	struct gc_ctx g = { .now = now() };
	struct sym_store_gc_stats s = { 0 };
	int err;

	if (!st)
		return -EINVAL;
	s.file_before = file_size(st->dir);
	flush_pending(st);
	err = write_txn(st, gc_scan_fn, &g);
	if (!err)
		err = count_files(st, &g);
	if (!err)
		err = evict(st, &g, &s.evicted, NULL, 0);
	s.live_bytes = g.live;
	s.expired = g.expired;
	s.orphans = g.orphans;
	free(g.v);
	if (!err && do_compact)
		err = compact(st);
	s.file_after = file_size(st->dir);
	if (stats)
		*stats = s;
	return err;
}

int sym_store_verify(struct sym_store *st, sym_store_problem_fn fn,
		     void *ctx)
{
	MDB_txn *txn = NULL;
	MDB_cursor *cur = NULL, *cc = NULL;
	MDB_val key, val;
	int rc, problems = 0;
	char hex[2 * ID_MAX + 1];

	if (!st)
		return -EINVAL;
	pthread_rwlock_rdlock(&st->rw);
	rc = mdb_txn_begin(st->env, NULL, MDB_RDONLY, &txn);
	if (!rc)
		rc = mdb_cursor_open(txn, st->meta, &cur);
	if (!rc)
		rc = mdb_cursor_open(txn, st->chunks, &cc);
	if (rc) {
		if (txn)
			mdb_txn_abort(txn);
		pthread_rwlock_unlock(&st->rw);
		return mdb_err(rc, "cannot verify");
	}
#define PROBLEM(what)                                                        \
	do {                                                                 \
		problems++;                                                  \
		if (fn)                                                      \
			fn(ctx, hex, (what));                                \
	} while (0)
	for (rc = mdb_cursor_get(cur, &key, &val, MDB_FIRST); !rc;
	     rc = mdb_cursor_get(cur, &key, &val, MDB_NEXT)) {
		const uint8_t *k = key.mv_data;
		uint8_t ck[KEY_MAX];
		struct meta_v m;
		uint64_t expect = 0;
		uint32_t nch = 0;
		size_t kl, pl;
		MDB_val ckey, cval;
		int r;

		if (key.mv_size < 2 || k[0] != key.mv_size - 1 ||
		    k[0] > ID_MAX) {
			snprintf(hex, sizeof(hex), "?");
			PROBLEM("bad metadata key");
			continue;
		}
		symi_hex(k + 1, k[0], hex);
		if (val.mv_size < sizeof(m)) {
			PROBLEM("truncated metadata");
			continue;
		}
		memcpy(&m, val.mv_data, sizeof(m));
		if (m.magic != META_MAGIC ||
		    m.text_len > val.mv_size - sizeof(m)) {
			PROBLEM("corrupt metadata");
			continue;
		}
		if (m.kind)
			continue;
		kl = chunk_key(ck, k + 1, k[0], m.gen, 0);
		pl = kl - 8;
		ckey.mv_size = kl;
		ckey.mv_data = ck;
		for (r = mdb_cursor_get(cc, &ckey, &cval, MDB_SET_RANGE);
		     !r && ckey.mv_size == kl &&
		     !memcmp(ckey.mv_data, ck, pl);
		     r = mdb_cursor_get(cc, &ckey, &cval, MDB_NEXT)) {
			uint64_t start = rd_be64((const uint8_t *)ckey.mv_data +
						 pl);
			struct chunk ch = { 0 };
			struct sym_table_stat ts;
			int o = chunk_open(&cval, 0, &ch);

			if (o == ENOMEM) {
				problems = -ENOMEM;
				goto done;
			}
			if (!o)
				o = sym_table_verify(ch.t);
			if (o == -ENOMEM) {
				chunk_drop(&ch);
				problems = -ENOMEM;
				goto done;
			}
			if (o) {
				PROBLEM("chunk fails its checksum or checks");
			} else {
				sym_table_stat(ch.t, &ts);
				if (nch && start != expect)
					PROBLEM("chunks do not tile the range");
				expect = ts.end;
			}
			chunk_drop(&ch);
			nch++;
		}
		if (nch != m.chunks)
			PROBLEM("chunk count differs from metadata");
	}
done:
#undef PROBLEM
	mdb_cursor_close(cc);
	mdb_cursor_close(cur);
	mdb_txn_abort(txn);
	pthread_rwlock_unlock(&st->rw);
	return problems;
}

/* ------------------------------------------------ export and import */

/*
 * The stored chunks of @build_id, each a whole table, in address order:
 * each is checked (as a lookup would) before it is written, so a corrupt
 * chunk is never handed on.  The read transaction stays open while @fd
 * is written: the caller writes to a local file, not to a socket.
 */
int sym_store_export(struct sym_store *st, const char *build_id, int fd,
		     uint64_t *size)
{
	struct table_read r;
	struct chunk c = { 0 };
	uint8_t id[ID_MAX], k[KEY_MAX];
	size_t idlen, kl, pl;
	MDB_val key, val;
	uint64_t total = 0;
	int rc, err;

	if (size)
		*size = 0;
	if (!st || fd < 0 || symi_build_id_parse(build_id, id, &idlen))
		return -EINVAL;
	err = begin_table_read(st, id, idlen, &r);
	if (err)
		goto out;
	kl = chunk_key(k, id, idlen, r.m.gen, 0);
	pl = kl - 8;
	key.mv_size = kl;
	key.mv_data = k;
	for (rc = mdb_cursor_get(r.cur, &key, &val, MDB_SET_RANGE);
	     rc == 0 && key.mv_size == kl && memcmp(key.mv_data, k, pl) == 0;
	     rc = mdb_cursor_get(r.cur, &key, &val, MDB_NEXT)) {
		err = chunk_check(st, &key, &val, false, &c);
		chunk_drop(&c);
		if (err == ENOMEM)
			err = -ENOMEM;
		if (!err)
			err = symi_write_all(fd, val.mv_data, val.mv_size);
		if (err)
			goto out;
		total += val.mv_size;
	}
	if (rc && rc != MDB_NOTFOUND)
		err = mdb_err(rc, "cannot read chunk");
	else if (total == 0)
		err = -SYM_E_NOTFOUND;
out:
	end_table_read(st, &r);
	if (!err && size)
		*size = total;
	return err;
}

/* Cut @buf into the whole tables it holds, each checked completely.
 * @parts gets views into @buf.  0, -SYM_E_BADTABLE, -SYM_E_STALE,
 * -ENOMEM. */
static int import_parts(const uint8_t *buf, size_t len,
			struct sym_table ***parts, size_t *n)
{
	struct sym_table **v = NULL;
	size_t off = 0, cnt = 0, cap = 0;
	int err = 0;

	while (!err && off < len) {
		const struct symt_header *h = (const void *)(buf + off);
		struct sym_table_stat ts;
		struct sym_table *t;

		if (len - off < sizeof(*h) || h->size < sizeof(*h) ||
		    h->size > len - off) {
			err = -SYM_E_BADTABLE;
			break;
		}
		if (cnt == cap) {
			struct sym_table **nv;

			cap = cap ? cap * 2 : 4;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				err = -ENOMEM;
				break;
			}
			v = nv;
		}
		err = sym_table_open(buf + off, h->size, &t);
		if (err) {
			/* A part of a size that leaves the next one
			 * misaligned is no exporter's either. */
			if (err != -ENOMEM)
				err = -SYM_E_BADTABLE;
			break;
		}
		v[cnt++] = t;
		err = sym_table_verify(t);
		if (err && err != -ENOMEM)
			err = -SYM_E_BADTABLE;
		sym_table_stat(t, &ts);
		if (!err && ts.converter != SYMI_CONVERTER_VERSION)
			err = -SYM_E_STALE;
		off += h->size;
	}
	if (!err && cnt == 0)
		err = -SYM_E_BADTABLE;
	if (err) {
		for (size_t i = 0; i < cnt; i++)
			sym_table_close(v[i]);
		free(v);
		return err;
	}
	*parts = v;
	*n = cnt;
	return 0;
}

/*
 * Each part is stored as one chunk, under a ticket, the metadata last:
 * the same steps as symi_store_put_ticket(), with the cut already made
 * by the exporter.
 */
int sym_store_import(struct sym_store *st, const char *build_id,
		     const void *buf, size_t len, const char *source)
{
	struct sym_table **parts = NULL;
	struct sym_table_stat ts;
	struct put_ctx p = { 0 };
	uint8_t id[ID_MAX];
	uint64_t total = 0;
	size_t idlen, n = 0;
	uint32_t ticket;
	int err;

	if (!st || !buf || symi_build_id_parse(build_id, id, &idlen))
		return -EINVAL;
	if ((uintptr_t)buf & 7)
		return -EINVAL;
	if (st->opts.flags & SYM_STORE_RDONLY)
		return -EROFS;
	err = import_parts(buf, len, &parts, &n);
	if (err)
		return err;
	err = symi_store_ticket(st, build_id, &ticket);
	if (err)
		goto out;
	p.id = id;
	p.idlen = idlen;
	p.gen = ticket;
	p.ticket = true;
	for (size_t i = 0; i < n; i++) {
		sym_table_stat(parts[i], &ts);
		total += ts.size;
	}
	/* Every part was just checked whole (import_parts()). */
	err = put_parts(st, &p, (const struct sym_table *const *)parts, n,
			total, SYMI_CONVERTER_VERSION, STORE_VERIFIED, source);
out:
	for (size_t i = 0; i < n; i++)
		sym_table_close(parts[i]);
	free(parts);
	return err;
}
