/*
 * api.c - the routes of docs/http-api.md, on the loop thread.
 *
 *   POST /v1/symbolize, /v1/symbolize/<id>   answer from ready tables;
 *        wait up to wait_ms for cold build IDs (work.c): answer "ok" from
 *        a lazy table that covers the module's addresses as soon as
 *        there is one, else at wait_ms "partial" from the symbols alone,
 *        else "pending" (the quick tables: symd_work_quick());
 *        the answer is encoded in slices with a loop turn between two
 *        (answer_slice()), each slice a chunk of its own that libevent
 *        sends and frees (no one buffer grows or is freed whole), under
 *        max_response and max_answers
 *   HEAD|PUT|DELETE /v1/debuginfo/<id>, /v1/executable/<id>,
 *        /v1/kallsyms/<id> (a kallsyms snapshot: libsym checks it)
 *        uploads stream to a temporary file inside the store, then a
 *        worker checks the build ID and takes the file in (work.c); one
 *        that would not improve the stored files is refused with 409
 *        (not_better()), and HEAD says their quality (X-Sym-Quality)
 *   GET|HEAD /buildid/<id>/debuginfo|executable|section/<name>|source/<path>
 *        the debuginfod protocol, from the store, else from upstream
 *   PUT /v1/source/<id>/<path>
 *        a source file, checked against the line tables of the build ID's
 *        debug file by libsym on the io thread (symd_work_source())
 *   GET /metrics, GET /healthz
 *   GET /, GET /v1/status   the status page and its JSON (status.c)
 *
 * Each request gets a struct call (its user pointer), freed in on_done().
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "sym.h"
#include "api.h"
#include "fetch.h"
#include "http.h"
#include "log.h"
#include "req.h"
#include "s3.h"
#include "status.h"
#include "symd.h"
#include "base.h"

/* Build IDs an access-log line lists at most (log_access()). */
#define LOG_IDS 8

enum call_kind { C_OTHER, C_SYMBOLIZE, C_UPLOAD, C_FILE };

struct call {
	struct symd_api *api;
	struct symd_http_req *req;
	enum call_kind kind;
	enum symd_route route;
	bool gone;		/* on_abort() came: @req is not ours */
	uint64_t frames;
	/* for the access log: the first distinct build IDs of a symbolize
	 * request (the body is released before the request ends), and
	 * how many of its modules are not among them */
	char log_ids[LOG_IDS][SYMD_BUILD_ID_MAX + 1];
	unsigned nlog_ids;
	size_t log_ids_omitted;
	/* symbolize */
	struct symd_req sr;
	struct symd_waiter **waiters;
	const char **wait_ids;	/* the build ID of each of @waiters */
	size_t nwaiters, npending;
	/* The module being encoded answers from this quick table (a
	 * reference on @quick), not from the store; NULL: the store. */
	struct symd_quick *quick;
	const struct sym_table *qtab;
	struct event *timer;
	/* the answer, built in slices (answer_slice()): each slice's bytes
	 * in @out, then moved to @sent as a chunk of its own, so no step
	 * grows, copies or frees more than about a slice */
	struct symi_buf out;
	struct evbuffer *sent;	/* the slices before, charged each */
	size_t moved;		/* their bytes */
	size_t mod_i, addr_i;	/* where the next slice starts */
	size_t mod_mark;	/* where the module's status starts, counted
				 * from the answer's start */
	size_t charged;		/* of answers_bytes, for out */
	size_t addr_bytes;	/* bytes an address took, lately (of the
				 * last lookup), to size the next one */
	bool slicing;		/* on the api's list of answers to slice */
	struct call *slice_next;
	/* upload */
	char build_id[SYMD_BUILD_ID_MAX + 1];
	int fkind;
	int fd;
	char tmp[4096];
	uint64_t bytes;
	uint64_t limit;		/* of the upload's bytes; 0: none */
	char *src;		/* a source upload's path; free() */
	struct symd_job *job;
};

struct symd_api {
	struct symd_api_opts o;
	struct symd_http *http;
	bool draining;		/* /healthz answers 503 (symd_api_drain()) */
	/* Answers with slices left, served one slice per loop turn in
	 * turn (slice_run()), so a turn encodes one slice however many
	 * big answers are under way. */
	struct call *slice_head, *slice_tail;
	struct event *slice_ev;
};

/* Bytes of symbolize answers built and not yet sent, of max_answers.  A
 * file-level count, not the api's: libevent may free the last sent
 * reference after symd_api_free() (its deferred callbacks run once more
 * at shutdown).  Loop thread only. */
static size_t answers_bytes;

/* An answer is encoded in slices of about this many bytes, with a turn
 * of the event loop between two (a few milliseconds at most). */
#define SLICE_BYTES ((size_t)64 << 10)
/* A slice's buffer is allocated this big at once: the slice and the
 * address that passes its end (3 KB for 14 frames; a bigger one grows
 * it).  Not much more: the charge to max_answers is the bytes allocated,
 * not only those used, so that the limit bounds the memory answers hold
 * (charging the bytes used let RSS pass it by SLICE_ROOM / SLICE_BYTES,
 * 12%: 583 MB under a 512 MiB limit in the attack bench). */
#define SLICE_ROOM (SLICE_BYTES + ((size_t)8 << 10))
/* The bytes an address takes in an answer, guessed before the first
 * lookup tells (a frame of a C++ function with its file is about 300). */
#define ADDR_BYTES_GUESS 256
/* Fewer addresses than this per lookup would not pay for its start (a
 * read transaction, the table's chunks opened). */
#define LOOKUP_MIN 16
/* A dropped answer's chunks are freed this many bytes per loop turn. */
#define DRAIN_BYTES ((size_t)4 << 20)
/* enc_frames(): the slice is full (a value no sym_store_lookup() error
 * takes: they are negative). */
#define SLICE_FULL 2

/* -------------------------------------------------------------- helpers */

static void reply_error(struct call *c, int status, const char *msg)
{
	if (!c->gone)
		symd_http_req_reply_json_error(c->req, status, msg);
}

static void free_detached(const void *data, size_t len, void *arg)
{
	(void)arg;
	free((void *)data);
}

/* The same for an answer's bytes, which give their charge back: @arg is
 * the bytes allocated for them, as answer_move() charged. */
static void free_answer(const void *data, size_t len, void *arg)
{
	answers_bytes -= (size_t)(uintptr_t)arg;
	free_detached(data, len, NULL);
}

/* Reply with @b's bytes, handed to libevent without a copy. */
static void reply_buf(struct call *c, int status, const char *type,
		      struct symi_buf *b)
{
	struct evbuffer *ev = evbuffer_new();
	size_t len = 0;
	char *p = NULL;

	if (ev && b->len) {
		p = symi_buf_detach(b, &len);
		if (evbuffer_add_reference(ev, p, len, free_detached,
					   NULL) != 0) {
			free(p);
			evbuffer_free(ev);
			ev = NULL;
		}
	}
	if (!ev)
		reply_error(c, 503, "out of memory");
	else if (!c->gone)
		symd_http_req_reply(c->req, status, type, ev);
	if (ev)
		evbuffer_free(ev);
}

/* GET and HEAD only: else 405 with Allow, and false. */
static bool get_or_head(struct call *c, const char *method)
{
	if (strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0)
		return true;
	symd_http_req_add_header(c->req, "Allow", "GET, HEAD");
	reply_error(c, 405, "method not allowed");
	return false;
}

/* Seconds a client waits before sending again an upload the object
 * store could not take (docs/object-store.md). */
#define OBJSTORE_RETRY_S 5

/* 503 with Retry-After: @s and a JSON error that says it too. */
static void reply_retry(struct call *c, const char *msg, unsigned s)
{
	struct symi_buf b;
	char num[16];

	snprintf(num, sizeof(num), "%u", s);
	symd_http_req_add_header(c->req, "Retry-After", num);
	symi_buf_init(&b, SYMD_REPLY_MAX);
	if (symi_buf_add(&b, "{\"error\":", 9) ||
	    symd_json_add_str(&b, msg, strlen(msg)) ||
	    symi_buf_add(&b, ",\"retry_after_ms\":", 18) ||
	    symi_buf_add_u64(&b, (uint64_t)s * 1000) ||
	    symi_buf_add(&b, "}\n", 2))
		reply_error(c, 503, msg);
	else
		reply_buf(c, 503, "application/json", &b);
	symi_buf_release(&b);
}

static void overloaded(struct call *c)
{
	symd_http_req_add_header(c->req, "Retry-After", "1");
	reply_error(c, 503, "overloaded: the work queues are full");
}

/* Does @path start with @prefix?  Then the rest. */
static const char *after(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	return strncmp(path, prefix, n) == 0 ? path + n : NULL;
}

/* The build ID at the start of @s, up to '/' or the end. */
static int take_id(struct call *c, const char *s, const char **rest)
{
	const char *end = strchr(s, '/'), *why = NULL;

	if (!end)
		end = s + strlen(s);
	if (symd_build_id_norm(s, (size_t)(end - s), c->build_id, &why)) {
		char msg[128];

		snprintf(msg, sizeof(msg), "bad build ID in the URL: %s",
			 why ? why : "invalid");
		reply_error(c, 400, msg);
		return -EINVAL;
	}
	*rest = end;
	return 0;
}

/* Authorization: Bearer <token>, compared in constant time. */
static bool authorized(struct call *c)
{
	const char *h = symd_http_req_header(c->req, "Authorization");
	const char *tok = c->api->o.token;
	size_t n, m;
	unsigned diff = 0;

	if (!tok) {
		reply_error(c, 403, "uploads and deletions are disabled: "
			    "symd runs without --upload-token-file");
		return false;
	}
	if (!h || strncasecmp(h, "Bearer ", 7) != 0) {
		symd_http_req_add_header(c->req, "WWW-Authenticate",
					 "Bearer realm=\"symd\"");
		reply_error(c, 401, "missing bearer token");
		return false;
	}
	h += 7;
	while (*h == ' ')
		h++;
	n = strlen(h);
	m = strlen(tok);
	for (size_t i = 0; i < m; i++)
		diff |= (unsigned)(tok[i] ^ (i < n ? h[i] : 0));
	if (diff || n != m) {
		reply_error(c, 403, "wrong token");
		return false;
	}
	return true;
}

/* ------------------------------------------------------------ symbolize */

static const char *state_name(enum symd_state s)
{
	switch (s) {
	case SYMD_READY:
		return "ok";
	case SYMD_MISSING:
		return "missing";
	case SYMD_FAILED:
		return "error";
	default:
		return "pending";
	}
}

struct enc {
	struct symi_buf *b;
	/* The slice: addrs[0] is the module's address @base; @done of
	 * its addresses are encoded; it stops once b->len passes @stop_at. */
	const uint64_t *addrs;
	size_t base, done, stop_at;
	uint64_t frames;
	int err;
};

/* ,"KEY":"S" when @s is not NULL (@key has its quotes and colon). */
static int add_str(struct symi_buf *b, const char *key, const char *s)
{
	int err;

	if (!s)
		return 0;
	err = symi_buf_add(b, key, strlen(key));
	return err ? err : symd_json_add_cstr(b, s);
}

/* ,"KEY":N when @v is not 0. */
static int add_num(struct symi_buf *b, const char *key, uint64_t v)
{
	int err;

	if (!v)
		return 0;
	err = symi_buf_add(b, key, strlen(key));
	return err ? err : symi_buf_add_u64(b, v);
}

/*
 * What a client needs to print a peer's bytes (docs/http-api.md, "The
 * peers' names"): the frame's enum sym_frame_flags and entry, and on the
 * outermost frame the symbol each peer names it after.
 */
static int enc_peers(struct symi_buf *b, const struct sym_frame *f,
		     const char *fn, bool outermost)
{
	int err = add_num(b, ",\"flags\":",
			  f->flags & ~(uint32_t)SYM_FRAME_INLINED);

	/* GNU addr2line tells functions without a linkage name apart by
	 * their entry (the outermost frame's is in "offset"). */
	if (!err && !outermost && (f->flags & SYM_FRAME_NO_LINKAGE))
		err = add_num(b, ",\"entry\":", f->entry);
	if (!err && f->name && !(f->flags & SYM_FRAME_NAME_SYMTAB) &&
	    (!fn || strcmp(f->name, fn) != 0))
		err = add_str(b, ",\"name\":", f->name);
	if (err || !outermost)
		return err;
	/* The STT_FILE left out of "file" (enc_frames()). */
	if (!fn && (f->flags & SYM_FRAME_FILE_SYMTAB))
		err = add_str(b, ",\"symbol_file\":", f->file);
	if (!err)
		err = add_str(b, ",\"symbol\":", f->symbol);
	if (!err && f->symbol)
		err = add_num(b, ",\"symbol_addr\":", f->symbol_addr);
	if (!err)
		err = add_num(b, ",\"symbol_size\":", f->symbol_size);
	if (!err)
		err = add_str(b, ",\"gnu_symbol\":", f->gnu_symbol);
	if (!err)
		err = add_num(b, ",\"gnu_symbol_addr\":", f->gnu_symbol_addr);
	if (!err)
		err = add_str(b, ",\"llvm_symbol\":", f->llvm_symbol);
	if (!err)
		err = add_num(b, ",\"llvm_symbol_addr\":", f->llvm_symbol_addr);
	if (!err)
		err = add_str(b, ",\"llvm_symbol_file\":", f->llvm_symbol_file);
	return err;
}

/* One address's frames: [{...}, ...], innermost first. */
static int enc_frames(void *ctx, size_t idx, const struct sym_frame *fr,
		      size_t n)
{
	struct enc *e = ctx;
	struct symi_buf *b = e->b;
	int err;

	err = symi_buf_add(b, e->base + idx ? ",[" : "[",
			   e->base + idx ? 2 : 1);
	for (size_t i = 0; i < n && !err; i++) {
		const struct sym_frame *f = &fr[i];
		const char *fn = sym_frame_name(f);

		/* Keys of unknown values are left out, "function" too. */
		err = symi_buf_add(b, i ? ",{" : "{", i ? 2 : 1);
		if (!err && fn) {
			err = symi_buf_add(b, "\"function\":", 11);
			if (!err)
				err = symd_json_add_cstr(b, fn);
			if (!err)
				err = symi_buf_addc(b, ',');
		}
		if (!err && fn && f->linkage_name) {
			err = symi_buf_add(b, "\"linkage_name\":", 15);
			if (!err)
				err = symd_json_add_cstr(b, f->linkage_name);
			if (!err)
				err = symi_buf_addc(b, ',');
		}
		/* Named after the symbol table: DW_AT_name too. */
		if (!err && (f->flags & SYM_FRAME_NAME_SYMTAB) && f->name) {
			err = symi_buf_add(b, "\"dwarf_name\":", 13);
			if (!err)
				err = symd_json_add_cstr(b, f->name);
			if (!err)
				err = symi_buf_addc(b, ',');
		}
		/* A symbol's STT_FILE goes with its name. */
		if (!err && f->file &&
		    (fn || !(f->flags & SYM_FRAME_FILE_SYMTAB))) {
			err = symi_buf_add(b, "\"file\":", 7);
			if (!err)
				err = symd_json_add_cstr(b, f->file);
			if (!err)
				err = symi_buf_addc(b, ',');
		}
		if (!err)
			err = symi_buf_add(b, "\"line\":", 7);
		if (!err)
			err = symi_buf_add_u64(b, f->line);
		if (!err)
			err = symi_buf_add(b, ",\"column\":", 10);
		if (!err)
			err = symi_buf_add_u64(b, f->column);
		if (!err && f->discriminator) {
			err = symi_buf_add(b, ",\"discriminator\":", 17);
			if (!err)
				err = symi_buf_add_u64(b, f->discriminator);
		}
		if (!err)
			err = (f->flags & SYM_FRAME_INLINED) ?
			      symi_buf_add(b, ",\"inlined\":true", 15) :
			      symi_buf_add(b, ",\"inlined\":false", 16);
		/* The offset into the outermost function. */
		if (!err && i == n - 1 && f->entry &&
		    e->addrs[idx] >= f->entry) {
			err = symi_buf_add(b, ",\"offset\":", 10);
			if (!err)
				err = symi_buf_add_u64(b, e->addrs[idx] -
							  f->entry);
		}
		if (!err)
			err = enc_peers(b, f, fn, i == n - 1);
		if (!err)
			err = symi_buf_addc(b, '}');
	}
	if (!err)
		err = symi_buf_addc(b, ']');
	e->frames += n;
	e->err = err;
	e->done = idx + 1;
	if (err)
		return 1;
	return b->len >= e->stop_at ? SLICE_FULL : 0;
}

/* The status part of a module's object, and one empty list per address
 * (no answers). */
static int enc_status(struct symi_buf *b, const struct symd_status *st,
		      size_t naddrs)
{
	const char *name = state_name(st->state);
	int err = symi_buf_add(b, name, strlen(name));

	if (!err)
		err = symi_buf_addc(b, '"');
	if (!err && st->error[0]) {
		err = symi_buf_add(b, ",\"error\":", 9);
		if (!err)
			err = symd_json_add_cstr(b, st->error);
	}
	if (!err && st->retry_after_ms &&
	    (st->state == SYMD_PENDING || st->state == SYMD_FAILED)) {
		err = symi_buf_add(b, ",\"retry_after_ms\":", 18);
		if (!err)
			err = symi_buf_add_u64(b, st->retry_after_ms);
	}
	if (!err)
		err = symi_buf_add(b, ",\"frames\":[", 11);
	for (size_t i = 0; i < naddrs && !err; i++)
		err = symi_buf_add(b, i ? ",[]" : "[]", i ? 3 : 2);
	if (!err)
		err = symi_buf_add(b, "]}", 2);
	return err;
}

static void drain_later(struct event_base *base, struct evbuffer *ev);

/* The next slice's buffer, c->out, with the room a slice takes: grown
 * from nothing, its reallocs copied each slice about twice over, and
 * took a fresh mmap() and munmap() each (a fifth of the loop's time on
 * 50,000-address answers). */
static int slice_start(struct call *c)
{
	size_t max = c->api->o.max_response - c->moved;

	symi_buf_init(&c->out, max);
	return symi_buf_grow(&c->out, max < SLICE_ROOM ? max : SLICE_ROOM);
}

/* Take the answer back to c->mod_mark: in @b (c->out), or in the chunks
 * moved before.  (The bytes of the chunk cut in two are copied, and no
 * longer counted in answers_bytes: under a slice.) */
static int answer_rewind(struct call *c, struct symi_buf *b)
{
	struct evbuffer *keep;

	if (c->mod_mark >= c->moved) {
		symi_buf_setlen(b, c->mod_mark - c->moved);
		return 0;
	}
	answers_bytes -= c->charged;
	c->charged = 0;
	symi_buf_release(b);
	keep = evbuffer_new();
	if (!keep || evbuffer_remove_buffer(c->sent, keep, c->mod_mark) !=
		     (int)c->mod_mark) {
		if (keep)
			evbuffer_free(keep);
		return -ENOMEM;
	}
	drain_later(c->api->o.base, c->sent);
	c->sent = keep;
	c->moved = c->mod_mark;
	return slice_start(c);
}

/*
 * How many of the @left addresses to look up for the rest of a slice:
 * about what fills it at the bytes an address took lately, a quarter
 * more, so that one lookup usually fills it.  Not all of them: a lookup
 * searches every address it is given (sorted windows, batch.c) before
 * the first answer, so a lookup of all 50,000 addresses of a request
 * for each slice of a few hundred did a hundred times the work
 * (quadratic in the request's size: under ASan, 16 such answers took
 * 62-67 s to their first byte, and 5.5-6.9 s this way).
 */
static size_t lookup_count(const struct call *c, const struct symi_buf *b,
			   size_t stop_at, size_t left)
{
	size_t per = c->addr_bytes ? c->addr_bytes : ADDR_BYTES_GUESS;
	size_t room = stop_at > b->len ? stop_at - b->len : 0;
	size_t n = room / per + room / per / 4 + LOOKUP_MIN;

	return n < left ? n : left;
}

#define PARTIAL "partial\",\"retry_after_ms\":500"

/* A PENDING module's answer from its quick tables, when it has one:
 * c->quick and c->qtab set, and "ok" (lazy: every address covered) or
 * "partial" (the symbols alone) with its source encoded; false: none. */
static bool enc_quick(struct call *c, struct symi_buf *b,
		      const struct symd_req_module *m, int *err)
{
	struct symd_quick *q = symd_work_quick(c->api->o.work, m->build_id);
	struct sym_table_stat ts;
	bool lazy;

	if (!q || (!q->symtab && !symd_quick_covers(q, m->addrs, m->naddrs))) {
		symd_work_quick_put(q);
		return false;
	}
	lazy = symd_quick_covers(q, m->addrs, m->naddrs);
	c->quick = q;
	c->qtab = lazy ? q->lazy : q->symtab;
	sym_table_stat(c->qtab, &ts);
	symd_metrics_quick_answer(lazy);
	/* partial: ask again for the full frames in a moment. */
	*err = symi_buf_add(b, lazy ? "ok\"" : PARTIAL, lazy ? 3 :
			    strlen(PARTIAL));
	if (!*err)
		*err = add_str(b, ",\"source\":",
			       sym_table_source_name(ts.flags));
	return true;
}

/* The module's quick table is no longer needed. */
static void quick_release(struct call *c)
{
	symd_work_quick_put(c->quick);
	c->quick = NULL;
	c->qtab = NULL;
}

/* ok","source":"S" of a ready module: which source built its table
 * (sym_table_source_name()); left out when the table is gone already,
 * which the lookup then finds too. */
static int enc_source(struct call *c, struct symi_buf *b,
		      const char *build_id)
{
	uint32_t flags;
	int err = symi_buf_add(b, "ok\"", 3);

	if (!err && sym_store_table_flags(c->api->o.store, build_id,
					  &flags) == 0)
		err = add_str(b, ",\"source\":",
			      sym_table_source_name(flags));
	return err;
}

/*
 * Encode the next part of module @c->mod_i into @b, stopping once @b is
 * @stop_at bytes long (after a whole address).  Opens the module's
 * object first (at c->addr_i 0) and closes it after its last address,
 * then moves c->mod_i on.  A table gone from the store midway (evicted,
 * deleted, corrupt) turns the whole module into "pending".
 */
static int enc_module(struct call *c, struct symi_buf *b, size_t stop_at)
{
	const struct symd_req_module *m = &c->sr.modules[c->mod_i];
	struct symd_status st;
	struct enc e = { .b = b, .addrs = m->addrs + c->addr_i,
			 .base = c->addr_i, .stop_at = stop_at };
	size_t n, before;
	int err = 0, rc;

	if (c->addr_i == 0) {
		rc = symd_work_status(c->api->o.work, m->build_id, &st);
		if (rc == -EBUSY) {
			st.state = SYMD_PENDING;
			st.retry_after_ms = 1000;
		}
		err = symi_buf_add(b, c->mod_i ? ",{\"build_id\":\"" :
				   "{\"build_id\":\"", c->mod_i ? 14 : 13);
		if (!err)
			err = symi_buf_add(b, m->build_id,
					   strlen(m->build_id));
		if (!err)
			err = symi_buf_add(b, "\",\"status\":\"", 12);
		c->mod_mark = c->moved + b->len;
		if (!err && st.state == SYMD_PENDING &&
		    enc_quick(c, b, m, &err)) {
			;	/* answered from a quick table */
		} else if (!err && st.state != SYMD_READY) {
			c->mod_i++;
			return enc_status(b, &st, m->naddrs);
		} else if (!err) {
			err = enc_source(c, b, m->build_id);
		}
		if (!err)
			err = symi_buf_add(b, ",\"frames\":[", 11);
		if (err)
			return err;
	}
	n = lookup_count(c, b, stop_at, m->naddrs - c->addr_i);
	before = b->len;
	rc = !n ? 0 : c->qtab ? sym_table_lookup_batch(c->qtab, e.addrs, n,
						      enc_frames, &e) :
	     sym_store_lookup(c->api->o.store, m->build_id, e.addrs, n,
			      enc_frames, &e);
	if (e.err)
		return e.err;
	c->frames += e.frames;
	if (e.done && b->len > before)
		c->addr_bytes = (b->len - before) / e.done + 1;
	if (rc == SLICE_FULL || (!rc && n < m->naddrs - c->addr_i)) {
		c->addr_i += rc ? e.done : n;
		if (c->addr_i < m->naddrs)
			return 0;
		rc = 0;
	}
	c->addr_i = 0;
	c->mod_i++;
	quick_release(c);
	if (!rc)
		return symi_buf_add(b, "]}", 2);
	/* Gone from the store: start over, and say pending this time. */
	err = answer_rewind(c, b);
	if (err)
		return err;
	symd_work_forget(c->api->o.work, m->build_id);
	symd_work_status(c->api->o.work, m->build_id, &st);
	if (st.state == SYMD_READY)
		st.state = SYMD_PENDING;
	if (!st.retry_after_ms)
		st.retry_after_ms = 500;
	return enc_status(b, &st, m->naddrs);
}

static void drop_waits(struct call *c)
{
	for (size_t i = 0; i < c->nwaiters; i++)
		symd_work_unwait(c->api->o.work, c->waiters[i]);
	free(c->waiters);
	free(c->wait_ids);
	c->waiters = NULL;
	c->wait_ids = NULL;
	c->nwaiters = c->npending = 0;
	if (c->timer) {
		event_free(c->timer);
		c->timer = NULL;
	}
}

struct drain {
	struct evbuffer *ev;
	struct event *step;		/* the next turn's drain_step() */
	struct drain *next, **pprev;	/* on the drains list */
};

/* Drains under way, freed whole at shutdown (drains_free()), so that
 * nothing is left to the exit for a leak checker to find.  Loop thread
 * only. */
static struct drain *drains;

static void drain_free(struct drain *d)
{
	*d->pprev = d->next;
	if (d->next)
		d->next->pprev = d->pprev;
	event_free(d->step);
	evbuffer_free(d->ev);
	free(d);
}

/* Free a dropped answer's chunks DRAIN_BYTES per loop turn, so one of
 * hundreds of MB never stalls the loop in a run of munmap()s. */
static void drain_step(evutil_socket_t fd, short what, void *arg)
{
	static const struct timeval now = { 0, 0 };
	struct drain *d = arg;

	(void)fd;
	(void)what;
	evbuffer_drain(d->ev, DRAIN_BYTES);
	if (evbuffer_get_length(d->ev) && evtimer_add(d->step, &now) == 0)
		return;
	drain_free(d);
}

static void drain_later(struct event_base *base, struct evbuffer *ev)
{
	struct drain *d;

	if (!ev)
		return;
	if (evbuffer_get_length(ev) <= DRAIN_BYTES ||
	    !(d = calloc(1, sizeof(*d)))) {
		evbuffer_free(ev);
		return;
	}
	d->step = evtimer_new(base, drain_step, d);
	if (!d->step) {
		free(d);
		evbuffer_free(ev);
		return;
	}
	d->ev = ev;
	d->next = drains;
	if (drains)
		drains->pprev = &d->next;
	d->pprev = &drains;
	drains = d;
	drain_step(-1, 0, d);
}

/* Free the drains still under way (shutdown). */
static void drains_free(void)
{
	while (drains)
		drain_free(drains);
}

/* Take @c off the api's list of answers to slice. */
static void slice_unqueue(struct call *c)
{
	struct symd_api *api = c->api;
	struct call *prev = NULL;

	if (!c->slicing)
		return;
	for (struct call *o = api->slice_head; o; prev = o, o = o->slice_next) {
		if (o != c)
			continue;
		if (prev)
			prev->slice_next = c->slice_next;
		else
			api->slice_head = c->slice_next;
		if (api->slice_tail == c)
			api->slice_tail = prev;
		break;
	}
	c->slicing = false;
	c->slice_next = NULL;
}

/* The call's answer and its slices are over: let go of both. */
static void answer_release(struct call *c)
{
	slice_unqueue(c);
	quick_release(c);
	answers_bytes -= c->charged;
	c->charged = 0;
	symi_buf_release(&c->out);
	drain_later(c->api->o.base, c->sent);
	c->sent = NULL;
	c->moved = 0;
}

/* Move the slice in c->out to the chunks in c->sent, its charge with
 * it, and start the next slice's buffer. */
static int answer_move(struct call *c)
{
	size_t len, room = c->out.alloc;
	char *p;

	if (!c->out.len)
		return 0;
	if (!c->sent && !(c->sent = evbuffer_new()))
		return -ENOMEM;
	p = symi_buf_detach(&c->out, &len);
	c->charged = 0;
	if (evbuffer_add_reference(c->sent, p, len, free_answer,
				   (void *)(uintptr_t)room) != 0) {
		answers_bytes -= room;
		free(p);
		return -ENOMEM;
	}
	c->moved += len;
	return c->mod_i < c->sr.nmodules ? slice_start(c) : 0;
}

static void answer_send(struct call *c, int err)
{
	struct symd_api_opts *o = &c->api->o;
	char msg[192];

	if (err == -E2BIG) {
		snprintf(msg, sizeof(msg), "the answer would be larger than "
			 "the limit of %zu bytes (--max-response): send fewer "
			 "addresses per request", o->max_response);
		reply_error(c, 413, msg);
	} else if (err == -EBUSY) {
		symd_http_req_add_header(c->req, "Retry-After", "1");
		snprintf(msg, sizeof(msg), "answers being built and sent "
			 "hold the limit of %zu bytes (--max-answers): retry "
			 "later", o->max_answers);
		reply_error(c, 503, msg);
	} else if (err || answer_move(c) != 0 || !c->sent) {
		reply_error(c, 503, "out of memory");
	} else if (!c->gone) {
		/* The charge goes with the chunks: free_answer() gives it
		 * back as libevent sends them. */
		symd_http_req_reply(c->req, 200, "application/json", c->sent);
	}
	symd_metrics_frames(c->sr.naddrs, c->frames);
	answer_release(c);
	symd_req_release(&c->sr);
}

static void answer_slice(struct call *c);

/* The next slice of the answer first on the list; the others wait for
 * the next turns.  A timer of 0 s runs after the next poll, where
 * event_active() would run before it. */
static void slice_run(evutil_socket_t fd, short what, void *arg)
{
	struct symd_api *api = arg;
	struct call *c = api->slice_head;
	struct timeval now = { 0, 0 };

	(void)fd;
	(void)what;
	if (c) {
		slice_unqueue(c);
		answer_slice(c);
	}
	if (api->slice_head)
		evtimer_add(api->slice_ev, &now);
}

/* Queue @c's next slice; false on ENOMEM. */
static bool slice_queue(struct call *c)
{
	struct symd_api *api = c->api;
	struct timeval now = { 0, 0 };

	if (!api->slice_ev &&
	    !(api->slice_ev = evtimer_new(api->o.base, slice_run, api)))
		return false;
	c->slice_next = NULL;
	if (api->slice_tail)
		api->slice_tail->slice_next = c;
	else
		api->slice_head = c;
	api->slice_tail = c;
	c->slicing = true;
	if (!evtimer_pending(api->slice_ev, NULL))
		evtimer_add(api->slice_ev, &now);
	return true;
}

/*
 * Encode one slice of the answer (about SLICE_BYTES), then let the loop
 * serve others before the next (slice_run()).  The answer is charged to
 * answers_bytes as it grows: past max_answers it is 503, past
 * max_response 413.
 */
static void answer_slice(struct call *c)
{
	struct symd_api_opts *o = &c->api->o;
	size_t stop_at = SLICE_BYTES;	/* c->out holds one slice */
	int err = 0;

	if (c->gone) {
		answer_release(c);
		return;
	}
	while (!err && c->mod_i < c->sr.nmodules && c->out.len < stop_at)
		err = enc_module(c, &c->out, stop_at);
	if (!err && c->mod_i == c->sr.nmodules)
		err = symi_buf_add(&c->out, "]}\n", 3);
	answers_bytes += c->out.alloc - c->charged;
	c->charged = c->out.alloc;
	if (!err && answers_bytes > o->max_answers)
		err = -EBUSY;
	if (!err && c->mod_i < c->sr.nmodules)
		err = answer_move(c);
	if (!err && c->mod_i < c->sr.nmodules && !slice_queue(c))
		err = -ENOMEM;
	if (err || c->mod_i == c->sr.nmodules)
		answer_send(c, err);
}

static void symbolize_reply(struct call *c)
{
	drop_waits(c);
	c->mod_i = c->addr_i = 0;
	if (slice_start(c) || symi_buf_add(&c->out, "{\"modules\":[", 12))
		answer_send(c, -ENOMEM);
	else
		answer_slice(c);
}

/* Can @c answer its modules of @build_id now: settled, or a lazy table
 * covers all their addresses? */
static bool answerable(struct call *c, const char *build_id)
{
	struct symd_quick *q = symd_work_quick(c->api->o.work, build_id);
	bool ok = true;

	/* No quick table after a wake-up: settled (or started over). */
	for (size_t i = 0; q && ok && i < c->sr.nmodules; i++) {
		const struct symd_req_module *m = &c->sr.modules[i];

		if (strcmp(m->build_id, build_id) == 0)
			ok = symd_quick_covers(q, m->addrs, m->naddrs);
	}
	symd_work_quick_put(q);
	return ok;
}

/* @build_id settled, or a quick table of it came: answer once every
 * build ID waited on can be; else wait on. */
static void waited(void *arg, const char *build_id)
{
	struct call *c = arg;
	struct symd_work *w = c->api->o.work;
	size_t k = 0;

	while (k < c->nwaiters && strcmp(c->wait_ids[k], build_id) != 0)
		k++;
	if (k < c->nwaiters && !answerable(c, build_id)) {
		struct symd_waiter *wt = symd_work_wait(w, build_id, waited,
							 c);

		if (wt) {
			symd_work_unwait(w, c->waiters[k]);
			c->waiters[k] = wt;
			return;
		}
	}
	if (--c->npending == 0)
		symbolize_reply(c);
}

static void wait_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	symbolize_reply(arg);
}

/* Keep the request's first LOG_IDS distinct build IDs for the log. */
static void note_ids(struct call *c)
{
	for (size_t i = 0; i < c->sr.nmodules; i++) {
		const char *id = c->sr.modules[i].build_id;
		unsigned k = 0;

		while (k < c->nlog_ids && strcmp(c->log_ids[k], id) != 0)
			k++;
		if (k < c->nlog_ids)
			continue;
		if (c->nlog_ids == LOG_IDS) {
			c->log_ids_omitted++;
			continue;
		}
		memcpy(c->log_ids[c->nlog_ids++], id, strlen(id) + 1);
	}
}

static void symbolize_body(struct symd_http_req *req)
{
	struct call *c = symd_http_req_user(req);
	struct evbuffer *body = symd_http_req_body(req);
	size_t len = evbuffer_get_length(body);
	const char *p = (const char *)evbuffer_pullup(body, -1);
	char why[SYMD_REQ_ERRLEN];
	bool cold = false;
	int err;

	err = symd_req_parse(p, len, c->build_id[0] ? c->build_id : NULL,
			     &c->api->o.limits, &c->sr, why, sizeof(why));
	if (err) {
		reply_error(c, err == -E2BIG ? 413 : err == -ENOMEM ? 503 : 400,
			    why[0] ? why : "bad request");
		return;
	}
	note_ids(c);
	/* Start every cold build ID now; wait for them together. */
	c->waiters = calloc(c->sr.nmodules, sizeof(*c->waiters));
	c->wait_ids = calloc(c->sr.nmodules, sizeof(*c->wait_ids));
	if ((!c->waiters || !c->wait_ids) && c->sr.nmodules) {
		reply_error(c, 503, "out of memory");
		return;
	}
	for (size_t i = 0; i < c->sr.nmodules; i++) {
		const char *id = c->sr.modules[i].build_id;
		struct symd_status st;
		bool seen = false;

		if (symd_work_status_from(c->api->o.work, id,
					  symd_http_req_peer(c->req),
					  &st) == -EBUSY) {
			drop_waits(c);
			symd_req_release(&c->sr);
			overloaded(c);
			return;
		}
		symd_metrics_cache(st.state == SYMD_READY);
		if (st.state != SYMD_PENDING)
			continue;
		cold = true;
		/* The conversion's lazy table answers these, if in time. */
		symd_work_want(c->api->o.work, id, c->sr.modules[i].addrs,
			       c->sr.modules[i].naddrs);
		for (size_t k = 0; k < i; k++)
			seen |= strcmp(c->sr.modules[k].build_id, id) == 0;
		if (seen || c->sr.wait_ms == 0)
			continue;
		c->waiters[c->nwaiters] = symd_work_wait(c->api->o.work, id,
							 waited, c);
		if (c->waiters[c->nwaiters]) {
			c->wait_ids[c->nwaiters] = id;
			c->nwaiters++;
			c->npending++;
		}
	}
	if (!cold || c->npending == 0) {
		symbolize_reply(c);
		return;
	}
	c->timer = evtimer_new(c->api->o.base, wait_timeout, c);
	if (!c->timer) {
		symbolize_reply(c);
		return;
	}
	{
		struct timeval tv = {
			.tv_sec = c->sr.wait_ms / 1000,
			.tv_usec = (c->sr.wait_ms % 1000) * 1000,
		};

		evtimer_add(c->timer, &tv);
	}
}

/* --------------------------------------------------------------- files */

/*
 * Answer with @len bytes of the open file @fd from @off (the whole file
 * when @len is UINT64_MAX), as debuginfod does: octet-stream with
 * X-DEBUGINFOD-SIZE.  Takes @fd.  False (and @fd closed) when it cannot
 * be read.
 */
static bool send_file(struct call *c, int fd, uint64_t off, uint64_t len)
{
	struct stat sb;
	char size[32];

	if (len == UINT64_MAX) {
		if (fstat(fd, &sb) != 0) {
			close(fd);
			return false;
		}
		len = (uint64_t)sb.st_size;
	}
	snprintf(size, sizeof(size), "%llu", (unsigned long long)len);
	symd_http_req_add_header(c->req, "X-DEBUGINFOD-SIZE", size);
	symd_http_req_reply_file(c->req, 200, "application/octet-stream", fd,
				 off, len);
	return true;
}

/* Open @path and send_file() it; false if it cannot be opened. */
static bool send_path(struct call *c, const char *path, uint64_t off,
		      uint64_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	return fd >= 0 && send_file(c, fd, off, len);
}

/*
 * What symd uses, it serves: the store holds the executable of the
 * call's build ID and no debug file, so sym_store_convert() built its
 * table from the debug file libsym's search finds on this host
 * (/usr/lib/debug/.build-id/xx/rest.debug, or by .gnu_debuglink).  The
 * same search, by sym_module_open() (ELF headers and notes only: no
 * DWARF is read here), names that file into @buf.  False when the
 * executable carries its own DWARF or has no debug file on this host.
 */
static bool host_debug_file(struct call *c, char *buf, size_t len)
{
	char exe[4096];
	struct sym_module *mod = NULL;
	const char *dbg;
	bool found = false;

	if (sym_store_file_path(c->api->o.store, c->build_id,
				SYM_STORE_EXECUTABLE, exe, sizeof(exe)) != 0 ||
	    sym_module_open(exe, NULL, &mod) != 0)
		return false;
	dbg = sym_module_debug_file(mod);
	if (dbg && strcmp(dbg, exe) != 0 && strlen(dbg) < len) {
		memcpy(buf, dbg, strlen(dbg) + 1);
		found = true;
	}
	sym_module_close(mod);
	return found;
}

/* Serve the stored @kind file of the call's build ID; false if none. */
static bool serve_stored(struct call *c, int kind)
{
	char path[4096];

	if (sym_store_file_path(c->api->o.store, c->build_id, kind, path,
				sizeof(path)) != 0) {
		uint64_t off, len;

		if (kind != SYM_STORE_DEBUGINFO)
			return false;
		/* As debuginfod does: an executable that carries its own
		 * DWARF is its debuginfo too.  Else the host's debug file
		 * the table was built from. */
		if ((sym_store_file_path(c->api->o.store, c->build_id,
					 SYM_STORE_EXECUTABLE, path,
					 sizeof(path)) != 0 ||
		     sym_file_section(path, ".debug_info", &off, &len) != 0) &&
		    !host_debug_file(c, path, sizeof(path)))
			return false;
	}
	return send_path(c, path, 0, UINT64_MAX);
}

/* A section of a stored file: debuginfo first, then the executable, then
 * the host's debug file of the executable (host_debug_file()). */
static bool serve_section(struct call *c, const char *name)
{
	static const int kinds[] = { SYM_STORE_DEBUGINFO,
				     SYM_STORE_EXECUTABLE, 0 };
	char path[4096];

	for (size_t i = 0; i < 3; i++) {
		uint64_t off, len;

		if ((kinds[i] ? sym_store_file_path(c->api->o.store,
						    c->build_id, kinds[i], path,
						    sizeof(path)) == 0 :
				host_debug_file(c, path, sizeof(path))) &&
		    sym_file_section(path, name, &off, &len) == 0 &&
		    send_path(c, path, off, len))
			return true;
	}
	return false;
}

/* The source path of a /source/ route into c->src (400 when bad). */
static bool take_source(struct call *c, const char *enc)
{
	char src[SYMD_SOURCE_PATH_MAX], msg[128];
	const char *why = NULL;

	if (symd_source_path_parse(enc, strlen(enc), src, &why) != 0) {
		snprintf(msg, sizeof(msg), "bad source path in the URL: %s",
			 why ? why : "invalid");
		reply_error(c, 400, msg);
		return false;
	}
	c->src = strdup(src);
	if (!c->src)
		reply_error(c, 503, "out of memory");
	return c->src != NULL;
}

/* The store's copy of the source c->src (sym_store_put_source()). */
static bool serve_source(struct call *c)
{
	char path[4096];
	struct stat sb;
	uint64_t off;
	int fd;

	if (sym_store_source_path(c->api->o.store, c->build_id, c->src, path,
				  sizeof(path), &off) != 0)
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &sb) != 0 || (uint64_t)sb.st_size < off) {
		close(fd);
		return false;
	}
	return send_file(c, fd, off, (uint64_t)sb.st_size - off);
}

static void fetched(void *arg, int status, const char *path, bool temporary,
		    const char *msg)
{
	struct call *c = arg;
	int fd;

	c->job = NULL;
	drop_waits(c);		/* the fetch_overdue() timer */
	if (c->gone) {
		if (temporary && path)
			symd_fetch_discard(path);
		return;
	}
	if (status != 200) {
		reply_error(c, status, msg);
		return;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	/* A temporary file (a section) is unlinked at once: the open
	 * descriptor keeps it readable until the reply is sent. */
	if (temporary)
		symd_fetch_discard(path);
	if (fd < 0 || !send_file(c, fd, 0, UINT64_MAX))
		reply_error(c, 500, "the fetched file went away");
}

/*
 * A federation GET waited fetch_wait_ms for its fetch (queued behind
 * others, or an upstream that is slow to answer): 503 with Retry-After.
 * The job goes on without us; a file it fetches lands in the store for
 * the retry.
 */
static void fetch_overdue(evutil_socket_t fd, short what, void *arg)
{
	struct call *c = arg;
	char msg[160];

	(void)fd;
	(void)what;
	symd_work_detach(c->job);
	c->job = NULL;
	symd_http_req_add_header(c->req, "Retry-After", "5");
	snprintf(msg, sizeof(msg), "the upstreams did not deliver within "
		 "%u ms (--fetch-wait-ms): retry later",
		 c->api->o.fetch_wait_ms);
	reply_error(c, 503, msg);
}

/* A file the store lacks: from the object store, then the upstreams
 * (federation), in a worker; 404 when there is neither. */
static void fetch_through(struct call *c, int fkind, const char *section)
{
	c->kind = C_FILE;
	c->job = symd_work_fetch_file(c->api->o.work, c->build_id, fkind,
				      section, fetched, c);
	if (!c->job) {
		if (errno == EBUSY)
			overloaded(c);
		else
			reply_error(c, 404, "not found");
		return;
	}
	c->timer = evtimer_new(c->api->o.base, fetch_overdue, c);
	if (c->timer) {
		struct timeval tv = {
			.tv_sec = c->api->o.fetch_wait_ms / 1000,
			.tv_usec = (c->api->o.fetch_wait_ms % 1000) * 1000,
		};

		evtimer_add(c->timer, &tv);
	}
}

/* GET|HEAD /buildid/<id>/debuginfo|executable|section/<name> */
static void route_buildid(struct call *c, const char *rest)
{
	const char *what, *section = NULL;
	int kind, fkind;

	c->route = SYMD_R_BUILDID;
	if (take_id(c, rest, &what))
		return;
	if (strcmp(what, "/debuginfo") == 0) {
		kind = SYM_STORE_DEBUGINFO;
		fkind = SYMD_FETCH_DEBUGINFO;
	} else if (strcmp(what, "/executable") == 0) {
		kind = SYM_STORE_EXECUTABLE;
		fkind = SYMD_FETCH_EXECUTABLE;
	} else if (after(what, "/source/")) {
		/* From the '/' after "source": debuginfod-find sends the
		 * path %-escaped whole (/source/%2Fusr%2F...), curl users
		 * plain (/source/usr/...); both decode to an absolute path. */
		if (!take_source(c, what + 7))
			return;
		if (serve_source(c))
			return;
		kind = 0;
		fkind = SYMD_FETCH_SOURCE;
		section = c->src;
		goto upstream;
	} else if ((section = after(what, "/section/")) && *section &&
		   strlen(section) <= 128 &&
		   strspn(section, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
			  "QRSTUVWXYZ0123456789._-") == strlen(section)) {
		kind = 0;
		fkind = SYMD_FETCH_SECTION;
	} else {
		reply_error(c, 404, "no such debuginfod route");
		return;
	}
	if (kind ? serve_stored(c, kind) : serve_section(c, section))
		return;
upstream:
	fetch_through(c, fkind, section);
}

/* ------------------------------------------------------------- uploads */

static int upload_piece(struct symd_http_req *req, const void *data,
			size_t len)
{
	struct call *c = symd_http_req_user(req);
	const char *p = data;

	if (c->limit && c->bytes + len > c->limit) {
		reply_error(c, 413, c->src ? "the source file is larger than "
			    "the limit (--max-source-size)" :
			    "the upload is larger than the limit");
		return -EFBIG;
	}
	while (len) {
		ssize_t n = write(c->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			reply_error(c, errno == ENOSPC || errno == EDQUOT ?
				    507 : 500, errno == ENOSPC ?
				    "the store's disk is full" :
				    "cannot write the upload");
			return -errno;
		}
		p += n;
		len -= (size_t)n;
		c->bytes += (uint64_t)n;
	}
	return 0;
}

static void ingested(void *arg, int status, const char *msg)
{
	struct call *c = arg;
	struct symi_buf b;

	const char *have = symd_work_refused_quality(c->job);

	c->job = NULL;
	c->tmp[0] = '\0';	/* the job moved or removed it */
	if (c->gone)
		return;
	if (have)	/* 409 on the object store's metadata (work.c) */
		symd_http_req_add_header(c->req, "X-Sym-Quality", have);
	if (status == 503) {
		/* The object store cannot take it now (work.c). */
		reply_retry(c, msg, OBJSTORE_RETRY_S);
		return;
	}
	if (status) {
		reply_error(c, status, msg);
		return;
	}
	symd_metrics_upload(c->bytes);
	symi_buf_init(&b, SYMD_REPLY_MAX);
	if (symi_buf_add(&b, "{\"build_id\":\"", 13) ||
	    symi_buf_add(&b, c->build_id, strlen(c->build_id)) ||
	    symi_buf_add(&b, "\"", 1) ||
	    (c->src && (symi_buf_add(&b, ",\"source\":", 10) ||
			symd_json_add_str(&b, c->src, strlen(c->src)))) ||
	    symi_buf_add(&b, ",\"stored\":true,\"bytes\":", 23) ||
	    symi_buf_add_u64(&b, c->bytes) || symi_buf_add(&b, "}\n", 2))
		reply_error(c, 503, "out of memory");
	else
		reply_buf(c, 201, "application/json", &b);
	symi_buf_release(&b);
}

/*
 * The best enum sym_quality of the files the store holds for the call's
 * build ID (its debug file, its executable), -1 when it holds none.
 * Only section headers are read (sym_file_quality()): symd knows no
 * DWARF.
 */
static int stored_quality(struct call *c)
{
	static const int kinds[] = { SYM_STORE_DEBUGINFO,
				     SYM_STORE_EXECUTABLE };
	char path[4096];
	int best = -1, q;

	for (size_t i = 0; i < 2; i++)
		if (sym_store_file_path(c->api->o.store, c->build_id, kinds[i],
					path, sizeof(path)) == 0 &&
		    sym_file_quality(path, &q) == 0 && q > best)
			best = q;
	return best;
}

/* "X-Sym-Quality: <name>" when the store holds a file of the build ID. */
static void quality_header(struct call *c)
{
	int q = stored_quality(c);

	if (q >= 0)
		symd_http_req_add_header(c->req, "X-Sym-Quality",
					 sym_quality_name(q));
}

/*
 * not_better() - refuse with 409 an upload that would not improve what
 * the store has (docs/http-api.md, "Uploads"): a debug file whose quality
 * is not above the best of the build ID's files, or an executable when
 * the store has one and its quality is not above, or a kallsyms snapshot
 * when the store has any file of the build ID (a snapshot stored gives
 * way to any ELF file, which needs no ?force).  "?force=1" takes it
 * anyway.  A file that is not the build ID's is left to the worker's
 * check (422).
 * @return true when refused (the reply is sent)
 */
static bool force_asked(struct call *c)
{
	const char *q = symd_http_req_query(c->req);

	return q && (strcmp(q, "force=1") == 0 || strstr(q, "&force=1") ||
		     strncmp(q, "force=1&", 8) == 0);
}

/* A kallsyms snapshot improves nothing the store has a file of: an ELF
 * file (its symbols at least), or a snapshot (the same names). */
static bool kallsyms_not_better(struct call *c)
{
	char path[4096], msg[400];
	int have = stored_quality(c);

	if (force_asked(c) ||
	    (have < 0 && sym_store_file_path(c->api->o.store, c->build_id,
					     SYM_STORE_KALLSYMS, path,
					     sizeof(path)) != 0))
		return false;
	snprintf(msg, sizeof(msg), "the server has %s for build ID %s and "
		 "this kallsyms snapshot would not improve it (?force=1, or "
		 "sym upload --force, stores it anyway)",
		 have >= 0 ? sym_quality_name(have) : "a kallsyms snapshot",
		 c->build_id);
	if (have >= 0)
		symd_http_req_add_header(c->req, "X-Sym-Quality",
					 sym_quality_name(have));
	reply_error(c, 409, msg);
	return true;
}

static bool not_better(struct call *c)
{
	char path[4096], hex[SYMD_BUILD_ID_MAX + 1], msg[400];
	int have = stored_quality(c), up;

	if (c->fkind == SYM_STORE_KALLSYMS)
		return kallsyms_not_better(c);
	if (force_asked(c) || have < 0 ||
	    (c->fkind == SYM_STORE_EXECUTABLE &&
	     sym_store_file_path(c->api->o.store, c->build_id,
				 SYM_STORE_EXECUTABLE, path,
				 sizeof(path)) != 0) ||
	    sym_file_module_id(c->tmp, hex, sizeof(hex), NULL) != 0 ||
	    strcmp(hex, c->build_id) != 0 ||
	    sym_file_quality(c->tmp, &up) != 0 || up > have)
		return false;
	snprintf(msg, sizeof(msg), "the server has %s for build ID %s and "
		 "this %s has %s: it would not improve it (?force=1, or "
		 "sym upload --force, stores it anyway)",
		 sym_quality_name(have), c->build_id,
		 c->fkind == SYM_STORE_EXECUTABLE ? "executable" : "debug file",
		 sym_quality_name(up));
	symd_http_req_add_header(c->req, "X-Sym-Quality",
				 sym_quality_name(have));
	reply_error(c, 409, msg);
	return true;
}

/* Append "@name=VALUE\n" to @out, VALUE @v cut to 200 bytes with
 * anything outside printable ASCII as '?'. */
static void meta_line(char *out, size_t len, const char *name, const char *v)
{
	size_t o = strlen(out), n = strlen(name);

	if (!v || !*v || o + n + 4 >= len)
		return;
	memcpy(out + o, name, n);
	o += n;
	out[o++] = '=';
	for (size_t i = 0; v[i] && i < 200 && o + 2 < len; i++)
		out[o++] = v[i] >= 0x20 && v[i] <= 0x7e ? v[i] : '?';
	out[o++] = '\n';
	out[o] = '\0';
}

/*
 * Who sent the upload, for the object store's metadata
 * (docs/object-store.md, "Upload metadata"): the peer address the access
 * log names, the X-Forwarded-For a proxy adds, the User-Agent.  Never
 * the token: one token is shared by every uploader.
 */
static void uploader_meta(struct call *c, char *out, size_t len)
{
	out[0] = '\0';
	meta_line(out, len, "sym-uploader", symd_http_req_peer(c->req));
	meta_line(out, len, "sym-forwarded-for",
		  symd_http_req_header(c->req, "X-Forwarded-For"));
	meta_line(out, len, "sym-user-agent",
		  symd_http_req_header(c->req, "User-Agent"));
}

static void upload_done(struct symd_http_req *req)
{
	struct call *c = symd_http_req_user(req);
	char meta[SYMD_S3_META_MAX];

	if (close(c->fd) != 0) {
		c->fd = -1;
		reply_error(c, 500, "cannot write the upload");
		return;
	}
	c->fd = -1;
	if (c->src) {
		/* A source may be empty; its checks are the io thread's. */
		c->job = symd_work_source(c->api->o.work, c->build_id, c->src,
					  c->tmp, ingested, c);
		if (!c->job && errno == EBUSY)
			overloaded(c);
		else if (!c->job)
			reply_error(c, 503, "cannot queue the upload");
		return;
	}
	if (c->bytes == 0) {
		reply_error(c, 400, "empty body");
		return;
	}
	if (not_better(c))
		return;
	uploader_meta(c, meta, sizeof(meta));
	c->job = symd_work_ingest_meta(c->api->o.work, c->build_id, c->fkind,
				       c->tmp, meta, force_asked(c), ingested,
				       c);
	if (!c->job) {
		if (errno == EBUSY)
			overloaded(c);
		else
			reply_error(c, 503, "cannot queue the upload");
	}
}

static void removed(void *arg, int status, const char *msg)
{
	struct call *c = arg;

	c->job = NULL;
	if (c->gone)
		return;
	if (status == 503)
		reply_retry(c, msg, OBJSTORE_RETRY_S);
	else if (status)
		reply_error(c, status, msg);
	else
		symd_http_req_reply(c->req, 204, NULL, NULL);
}

/*
 * A new temporary file in STORE/incoming/, its path in @path: the
 * descriptor, or -1 with errno.  A store directory whose contents were
 * removed while symd runs (rm -rf STORE/ *: docs/object-store.md, "A
 * wiped store") gets its incoming/ back here.
 */
static int incoming_file(const char *store_dir, char *path, size_t len)
{
	int fd;

	snprintf(path, len, "%s/incoming/upload.XXXXXX", store_dir);
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		char dir[4200];

		snprintf(dir, sizeof(dir), "%s/incoming", store_dir);
		if ((mkdir(store_dir, 0755) == 0 || errno == EEXIST) &&
		    (mkdir(dir, 0700) == 0 || errno == EEXIST)) {
			snprintf(path, len, "%s/incoming/upload.XXXXXX",
				 store_dir);
			fd = mkostemp(path, O_CLOEXEC);
		}
	}
	return fd;
}

/*
 * Stream the body of an authorized PUT into a temporary file of the
 * store's incoming/ (upload_piece(), then upload_done()), at most @limit
 * bytes (0: no bound); one announced bigger is 413 @too_big at once.
 */
static void start_upload(struct call *c, uint64_t limit, const char *too_big)
{
	uint64_t len;

	if (limit && symd_http_req_content_length(c->req, &len) == 0 &&
	    len > limit) {
		reply_error(c, 413, too_big);
		return;
	}
	c->fd = incoming_file(c->api->o.store_dir, c->tmp, sizeof(c->tmp));
	if (c->fd < 0) {
		c->tmp[0] = '\0';
		reply_error(c, 500, "cannot create a temporary file");
		return;
	}
	c->kind = C_UPLOAD;
	c->limit = limit;
	symd_http_req_stream_body(c->req, upload_piece, upload_done);
}

/* The bucket's metadata came (symd_work_objstore_head()): answer the
 * HEAD of a file this node's store lacks as if it had it. */
static void bucket_meta(void *arg, int status,
			const struct symd_objstore_files *fs, const char *msg)
{
	struct call *c = arg;
	const struct symd_objstore_file *f;
	char num[24];

	c->job = NULL;
	if (c->gone)
		return;
	if (status != 200) {
		reply_retry(c, msg, OBJSTORE_RETRY_S);
		return;
	}
	f = c->fkind == SYM_STORE_EXECUTABLE ? &fs->exe : &fs->dbg;
	if (fs->quality >= 0)
		symd_http_req_add_header(c->req, "X-Sym-Quality",
					 sym_quality_name(fs->quality));
	if (!f->present) {
		reply_error(c, 404, "not in the store or the object store");
		return;
	}
	snprintf(num, sizeof(num), "%llu", (unsigned long long)f->size);
	symd_http_req_add_header(c->req, "X-DEBUGINFOD-SIZE", num);
	if (f->uploader[0])
		symd_http_req_add_header(c->req, "X-Sym-Uploader",
					 f->uploader);
	if (f->forwarded_for[0])
		symd_http_req_add_header(c->req, "X-Sym-Uploader-Forwarded-For",
					 f->forwarded_for);
	if (f->uploaded[0])
		symd_http_req_add_header(c->req, "X-Sym-Uploaded",
					 f->uploaded);
	symd_http_req_add_header(c->req, "X-Sym-Source", "object-store");
	symd_http_req_reply(c->req, 200, NULL, NULL);
}

/* With an object store, HEAD the bucket's objects of a build ID this
 * node has no file of, on a worker.  True when the job is out. */
static bool head_bucket(struct call *c, int kind)
{
	c->fkind = kind;
	c->job = symd_work_objstore_head(c->api->o.work, c->build_id,
					 bucket_meta, c);
	if (!c->job && errno == EBUSY) {
		overloaded(c);
		return true;
	}
	return c->job != NULL;
}

/* HEAD|PUT|DELETE /v1/debuginfo/<id>, /v1/executable/<id> */
static void route_files(struct call *c, const char *rest, int kind)
{
	const char *m = symd_http_req_method(c->req), *end;

	c->route = SYMD_R_DEBUGINFO;
	if (take_id(c, rest, &end))
		return;
	if (*end) {
		reply_error(c, 404, "no such route");
		return;
	}
	if (strcmp(m, "HEAD") == 0 || strcmp(m, "GET") == 0) {
		quality_header(c);
		if (serve_stored(c, kind))
			return;
		/* No file of the build ID here (so no X-Sym-Quality yet):
		 * with an object store, HEAD says what the bucket has, and
		 * GET reads it through as /buildid/<id>/... does. */
		if (strcmp(m, "HEAD") == 0 && stored_quality(c) < 0 &&
		    head_bucket(c, kind))
			return;
		if (strcmp(m, "GET") == 0 &&
		    symd_work_options(c->api->o.work)->s3) {
			fetch_through(c, kind == SYM_STORE_EXECUTABLE ?
				      SYMD_FETCH_EXECUTABLE :
				      SYMD_FETCH_DEBUGINFO, NULL);
			return;
		}
		reply_error(c, 404, "not in the store");
		return;
	}
	if (strcmp(m, "DELETE") == 0) {
		if (!authorized(c))
			return;
		c->job = symd_work_remove(c->api->o.work, c->build_id,
					  removed, c);
		if (!c->job && errno == EBUSY)
			overloaded(c);
		else if (!c->job)
			reply_error(c, 503, "cannot queue the removal");
		return;
	}
	if (strcmp(m, "PUT") != 0) {
		symd_http_req_add_header(c->req, "Allow",
					 "GET, HEAD, PUT, DELETE");
		reply_error(c, 405, "method not allowed");
		return;
	}
	if (!authorized(c))
		return;
	c->fkind = kind;
	start_upload(c, c->api->o.max_upload,
		     "the upload is larger than the limit");
}

/* PUT /v1/source/<id>/<path>: one source file (docs/http-api.md). */
static void route_source_put(struct call *c, const char *rest)
{
	const char *m = symd_http_req_method(c->req), *enc;

	c->route = SYMD_R_DEBUGINFO;
	if (take_id(c, rest, &enc))
		return;
	if (strcmp(m, "PUT") != 0) {
		symd_http_req_add_header(c->req, "Allow", "PUT");
		reply_error(c, 405, "method not allowed");
		return;
	}
	if (!take_source(c, enc) || !authorized(c))
		return;
	start_upload(c, c->api->o.max_source, "the source file is larger "
		     "than the limit (--max-source-size)");
}

/* --------------------------------------------------------------- routes */

/* GET / (the page) or GET /v1/status (its data). */
static void route_status(struct call *c, bool page)
{
	struct symi_buf b;
	size_t len;
	const char *html = symd_status_page(&len);
	int err;

	symi_buf_init(&b, SYMD_REPLY_MAX);
	err = page ? symi_buf_add(&b, html, len) :
		     symd_status_json(&b, c->api->o.work,
					      c->api->o.store);
	if (err) {
		reply_error(c, 503, "out of memory");
	} else {
		symd_http_req_add_header(c->req, "Cache-Control", "no-store");
		/* Inline script and style only; fetch() to this server. */
		if (page)
			symd_http_req_add_header(c->req,
				"Content-Security-Policy", "default-src 'none'; "
				"img-src data:; script-src 'unsafe-inline'; style-src "
				"'unsafe-inline'; connect-src 'self'");
		reply_buf(c, 200, page ? "text/html; charset=utf-8" :
			  "application/json", &b);
	}
	symi_buf_release(&b);
}

static void on_abort(struct symd_http_req *req)
{
	struct call *c = symd_http_req_user(req);

	c->gone = true;
	/* Nobody else waiting: queued jobs of its build IDs go too. */
	for (size_t i = 0; i < c->nwaiters; i++) {
		symd_work_abandon(c->api->o.work, c->waiters[i]);
		c->waiters[i] = NULL;
	}
	drop_waits(c);
	symd_work_detach(c->job);
}

/*
 * GET /healthz: 200 and {"status":"ok",...}, or, while the node drains
 * (symd_api_drain()), 503 and {"status":"draining",...}, so that a proxy's
 * health check takes it out of rotation while it still answers what it is
 * sent.
 */
static void route_healthz(struct call *c)
{
	struct symd_api *api = c->api;
	struct symi_buf b;
	unsigned q, r;

	symd_work_counts(api->o.work, &q, &r);
	symi_buf_init(&b, SYMD_REPLY_MAX);
	if (symi_buf_addstr(&b, api->draining ? "{\"status\":\"draining\"" :
			     "{\"status\":\"ok\"") ||
	    symi_buf_addstr(&b, ",\"version\":\"" SYMD_VERSION
			     "\",\"jobs_queued\":") ||
	    symi_buf_add_u64(&b, q) ||
	    symi_buf_addstr(&b, ",\"jobs_running\":") ||
	    symi_buf_add_u64(&b, r) || symi_buf_addstr(&b, "}\n")) {
		reply_error(c, 503, "out of memory");
	} else {
		if (api->draining)
			symd_http_req_add_header(c->req, "Retry-After", "5");
		reply_buf(c, api->draining ? 503 : 200, "application/json",
			  &b);
	}
	symi_buf_release(&b);
}

static void route(struct symd_http_req *req, void *ctx)
{
	struct symd_api *api = ctx;
	const char *path = symd_http_req_path(req);
	const char *m = symd_http_req_method(req), *rest;
	struct call *c = calloc(1, sizeof(*c));
	int err;

	if (!c) {
		symd_http_req_reply_json_error(req, 503, "out of memory");
		return;
	}
	c->api = api;
	c->req = req;
	c->fd = -1;
	c->route = SYMD_R_OTHER;
	symd_http_req_set_user(req, c);
	symd_http_req_on_abort(req, on_abort);
	if ((rest = after(path, "/v1/symbolize")) &&
	    (*rest == '\0' || *rest == '/')) {
		c->route = SYMD_R_SYMBOLIZE;
		if (strcmp(m, "POST") != 0) {
			symd_http_req_add_header(req, "Allow", "POST");
			reply_error(c, 405, "use POST");
			return;
		}
		if (*rest == '/' && take_id(c, rest + 1, &rest))
			return;
		if (*rest) {
			reply_error(c, 404, "no such route");
			return;
		}
		c->kind = C_SYMBOLIZE;
		err = symd_http_req_buffer_body(req, api->o.max_body,
						symbolize_body);
		if (err == -EFBIG) {
			reply_error(c, 413, "request body over the limit");
		} else if (err == -EBUSY) {
			symd_http_req_add_header(req, "Retry-After", "1");
			reply_error(c, 503, "the server's budget for request "
				    "bodies is used up (--max-buffered): retry "
				    "later");
		}
	} else if ((rest = after(path, "/v1/debuginfo/"))) {
		route_files(c, rest, SYM_STORE_DEBUGINFO);
	} else if ((rest = after(path, "/v1/executable/"))) {
		route_files(c, rest, SYM_STORE_EXECUTABLE);
	} else if ((rest = after(path, "/v1/kallsyms/"))) {
		route_files(c, rest, SYM_STORE_KALLSYMS);
	} else if ((rest = after(path, "/v1/source/"))) {
		route_source_put(c, rest);
	} else if ((rest = after(path, "/buildid/"))) {
		c->route = SYMD_R_BUILDID;
		if (get_or_head(c, m))
			route_buildid(c, rest);
	} else if (strcmp(path, "/metrics") == 0) {
		struct symi_buf b;

		c->route = SYMD_R_METRICS;
		if (!get_or_head(c, m))
			return;
		symi_buf_init(&b, SYMD_REPLY_MAX);
		symd_metrics_http(symd_http_conns(api->http),
				  symd_http_buffered(api->http), answers_bytes);
		if (symd_metrics_render(&b, api->o.work))
			reply_error(c, 503, "out of memory");
		else
			reply_buf(c, 200, "text/plain; version=0.0.4", &b);
		symi_buf_release(&b);
	} else if (strcmp(path, "/") == 0 || strcmp(path, "/v1/status") == 0) {
		if (get_or_head(c, m))
			route_status(c, path[1] == '\0');
	} else if (strcmp(path, "/healthz") == 0) {
		c->route = SYMD_R_HEALTHZ;
		if (get_or_head(c, m))
			route_healthz(c);
	} else {
		reply_error(c, 404, "no such route");
	}
}

/*
 * The access-log line of a request (log.h; docs/symd.8 has the fields):
 * the path without its query (cut at 256 bytes), the build IDs it named
 * (of its URL or its symbolize body; the first LOG_IDS distinct ones,
 * and how many modules more).
 */
static void log_access(struct symd_http_req *req, const struct call *c,
		       int status, uint64_t latency_us)
{
	struct symd_log_line l;
	char path[256];

	snprintf(path, sizeof(path), "%s", symd_http_req_path(req));
	symd_log_begin(&l, SYMD_LOG_INFO, "access");
	symd_log_str(&l, "client", symd_http_req_peer(req));
	symd_log_str(&l, "method", symd_http_req_method(req));
	symd_log_str(&l, "path", path);
	symd_log_u64(&l, "status", (uint64_t)status);
	symd_log_u64(&l, "bytes", symd_http_req_bytes_sent(req));
	symd_log_ms(&l, "duration_ms", latency_us);
	symd_log_list_begin(&l, "build_ids");
	if (c && c->nlog_ids)
		for (unsigned i = 0; i < c->nlog_ids; i++)
			symd_log_list_add(&l, c->log_ids[i]);
	else if (c && c->build_id[0])
		symd_log_list_add(&l, c->build_id);
	symd_log_list_end(&l);
	if (c && c->log_ids_omitted)
		symd_log_u64(&l, "build_ids_omitted", c->log_ids_omitted);
	if (c && c->kind == C_SYMBOLIZE)
		symd_log_u64(&l, "frames", c->frames);
	symd_log_end(&l);
}

static void on_done(struct symd_http_req *req, int status,
		    uint64_t latency_us, void *ctx)
{
	struct symd_api *api = ctx;
	struct call *c = symd_http_req_user(req);

	symd_metrics_request(c ? c->route : SYMD_R_OTHER, status, latency_us);
	symd_status_request(symd_http_req_method(req), symd_http_req_path(req),
			    symd_http_req_peer(req), status, latency_us);
	if (api->o.log)
		log_access(req, c, status, latency_us);
	if (!c)
		return;
	drop_waits(c);
	answer_release(c);
	symd_work_detach(c->job);
	symd_req_release(&c->sr);
	if (c->fd >= 0)
		close(c->fd);
	/* An upload that never reached a worker. */
	if (c->kind == C_UPLOAD && c->tmp[0] && !c->job)
		unlink(c->tmp);
	free(c->src);
	free(c);
}

/* Uploads a crash cut short: nothing refers to them any more. */
static void sweep_incoming(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "upload.", 7) == 0)
			unlinkat(dirfd(d), de->d_name, 0);
	}
	closedir(d);
}

int symd_api_new(const struct symd_api_opts *o, struct symd_api **out)
{
	struct symd_api *api = calloc(1, sizeof(*api));
	struct symd_http_opts ho = { 0 };
	char dir[4096];
	int err;

	*out = NULL;
	if (!api)
		return -ENOMEM;
	api->o = *o;
	if (!api->o.max_response)
		api->o.max_response = SYMD_API_DEFAULT_MAX_RESPONSE;
	if (!api->o.max_answers)
		api->o.max_answers = SYMD_API_DEFAULT_MAX_ANSWERS;
	if (!api->o.fetch_wait_ms)
		api->o.fetch_wait_ms = SYMD_API_DEFAULT_FETCH_WAIT_MS;
	snprintf(dir, sizeof(dir), "%s/incoming", o->store_dir);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		err = -errno;
		free(api);
		return err;
	}
	sweep_incoming(dir);
	ho = o->http;
	ho.on_request = route;
	ho.on_done = on_done;
	ho.ctx = api;
	err = symd_http_new(o->base, &ho, &api->http);
	if (err) {
		free(api);
		return err;
	}
	*out = api;
	return 0;
}

struct symd_http *symd_api_http(struct symd_api *api)
{
	return api->http;
}

void symd_api_free(struct symd_api *api)
{
	if (!api)
		return;
	symd_http_free(api->http);
	drains_free();
	if (api->slice_ev)
		event_free(api->slice_ev);
	free(api);
}

void symd_api_drain(struct symd_api *api, bool on)
{
	api->draining = on;
}

bool symd_api_draining(const struct symd_api *api)
{
	return api->draining;
}
