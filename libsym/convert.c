/*
 * convert.c - build a stored table from the store's own files.
 *
 * The daemon receives debug files (uploads, debuginfod fetches) into the
 * store's file area and converts them later, in a worker.  This is that
 * conversion, on the public API only: open the module from the files the
 * store holds, build the table, store it, or remember why it failed.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "internal.h"
#include "ksnap.h"
#include "base.h"

/* Failures that say something about the file, not the system: a retry
 * with the same converter would fail the same way. */
static bool is_bad_input(int err)
{
	switch (-err) {
	case SYM_E_NOTELF:
	case SYM_E_BADELF:
	case SYM_E_BADDWARF:
	case SYM_E_TOOBIG:
	case SYM_E_DECOMPRESS:
	case SYM_E_UNSUPPORTED:
	/* Over the decompression limits: the same again until the limits
	 * are raised (then a new upload, or a DELETE, clears the entry). */
	case SYM_E_INFLATE_LIMIT:
	case SYM_E_NOTREG:
		return true;
	}
	return false;
}

/* How long a converter waits for another process converting the same
 * build ID before it converts anyway. */
#define LOCK_WAIT_MS (10 * 60 * 1000)

static int convert_kallsyms(struct sym_store *st, const char *build_id,
			    const char *source, uint32_t ticket);

struct sym_conversion {
	struct sym_store *st;
	struct sym_store_lock *lock;	/* sym_store_unlock() */
	uint32_t ticket;		/* 0: none (dropped or used) */
	char id[(2 * SYMI_BUILD_ID_MAX) + 1];
	char exe[PATH_MAX], dbg[PATH_MAX];
	bool have_exe, have_dbg;
	char *source;			/* free(); NULL: the debug file's path */
	struct sym_module *mod;		/* sym_module_close() */
};

/* A file that cannot be converted: a BADCONV entry says why (a remove
 * since the ticket: -ECANCELED, and nothing stored). */
static int refuse(struct sym_conversion *c, int err)
{
	char why[256];

	if (!is_bad_input(err)) {
		symi_store_ticket_drop(c->st, c->id, c->ticket);
	} else if (symi_store_put_negative_ticket(c->st, c->id,
						  SYM_STORE_BADCONV,
						  sym_strerror(err, why,
							       sizeof(why)),
						  c->ticket) == -ECANCELED) {
		err = -ECANCELED;
	}
	c->ticket = 0;
	return err;
}

/* A module of c's files (found by open_files()) into *mod. */
static int open_module(const struct sym_conversion *c, struct sym_module **mod)
{
	/* The debug file the store has wins over any search. */
	SYM_OPTS(sym_module_opts, mo,
		 .debug_file = c->have_exe && c->have_dbg ? c->dbg : NULL,
		 .flags = c->have_exe ? 0 : SYM_MODULE_NO_SEARCH);

	const char *bid;
	int err = sym_module_open(c->have_exe ? c->exe : c->dbg, &mo, mod);

	if (!err) {
		bid = sym_module_id(*mod, NULL);
		if (!bid || strcmp(bid, c->id) != 0)
			err = -SYM_E_BADELF;	/* replaced under our feet */
	}
	return err;
}

/* The store's files of c->id, opened as a module into c->mod. */
static int open_files(struct sym_conversion *c)
{
	int err;

	err = sym_store_file_path(c->st, c->id, SYM_STORE_EXECUTABLE, c->exe,
				  sizeof(c->exe));
	if (err && err != -SYM_E_NOTFOUND)
		return err;
	c->have_exe = !err;
	err = sym_store_file_path(c->st, c->id, SYM_STORE_DEBUGINFO, c->dbg,
				  sizeof(c->dbg));
	if (err && err != -SYM_E_NOTFOUND)
		return err;
	c->have_dbg = !err;
	if (!c->have_exe && !c->have_dbg)
		return -SYM_E_NOTFOUND;
	return open_module(c, &c->mod);
}

int sym_conversion_open(struct sym_store *st, const char *build_id,
			const char *source, struct sym_conversion **out)
{
	struct sym_conversion *c;
	int waited = 0, err;

	if (out)
		*out = NULL;
	if (!st || !build_id || !out || strlen(build_id) > (2 * SYMI_BUILD_ID_MAX))
		return -EINVAL;
	c = symi_calloc(1, sizeof(*c));
	if (!c || (source && !(c->source = symi_strdup(source)))) {
		free(c);
		return -ENOMEM;
	}
	c->st = st;
	memcpy(c->id, build_id, strlen(build_id) + 1);
	/* Another process converting it: wait, then take its work. */
	err = sym_store_lock(st, build_id, LOCK_WAIT_MS, &c->lock, &waited);
	if (err && err != -ETIMEDOUT)
		goto fail;
	if (waited && sym_store_has_table(st, build_id)) {
		err = -EEXIST;
		goto fail;
	}
	/* The ticket comes before the files are opened: a remove after
	 * this point cancels the put (-ECANCELED), one before it took the
	 * files (-SYM_E_NOTFOUND). */
	err = symi_store_ticket(st, build_id, &c->ticket);
	if (!err)
		err = open_files(c);
	if (err == -SYM_E_NOTFOUND && c->ticket) {
		/* No ELF file: a kallsyms snapshot's table, stored now (the
		 * caller finds it stored, as after another process's). */
		err = convert_kallsyms(st, build_id, source, c->ticket);
		c->ticket = 0;
		if (!err)
			err = -EEXIST;
	}
	if (err && c->ticket)
		err = refuse(c, err);
	if (err)
		goto fail;
	*out = c;
	return 0;
fail:
	sym_conversion_close(c);
	return err;
}

struct sym_module *sym_conversion_module(struct sym_conversion *c)
{
	return c ? c->mod : NULL;
}

int sym_conversion_table_symbols(struct sym_conversion *c,
				 struct sym_table **out)
{
	struct sym_module *mod = NULL;
	int err;

	if (out)
		*out = NULL;
	if (!c || !out)
		return -EINVAL;
	err = open_module(c, &mod);
	if (!err)
		err = sym_module_table_symbols(mod, out);
	sym_module_close(mod);
	return err;
}

int sym_conversion_finish(struct sym_conversion *c,
			  struct sym_module_stats *stats)
{
	const struct sym_table *tab;
	const char *src;
	int err;

	if (stats)
		memset(stats, 0, sizeof(*stats));
	if (!c)
		return -EINVAL;
	err = sym_module_table(c->mod, &tab);
	if (stats)
		sym_module_stats(c->mod, stats);
	if (!err) {
		src = c->source ? c->source : sym_module_debug_file(c->mod);
		err = symi_store_put_ticket(c->st, c->id, tab,
					    src ? src : c->have_exe ? c->exe :
					    c->dbg, c->ticket);
		c->ticket = 0;
	} else {
		err = refuse(c, err);
	}
	sym_conversion_close(c);
	return err;
}

void sym_conversion_close(struct sym_conversion *c)
{
	if (!c)
		return;
	if (c->ticket)
		symi_store_ticket_drop(c->st, c->id, c->ticket);
	sym_module_close(c->mod);
	sym_store_unlock(c->lock);
	free(c->source);
	free(c);
}

int sym_store_convert(struct sym_store *st, const char *build_id,
		      const char *source, struct sym_module_stats *stats)
{
	struct sym_conversion *c;
	int err;

	if (stats)
		memset(stats, 0, sizeof(*stats));
	err = sym_conversion_open(st, build_id, source, &c);
	if (err == -EEXIST)
		return 0;	/* another process stored it meanwhile */
	return err ? err : sym_conversion_finish(c, stats);
}

/* Put the table @buf (@len bytes, free()d here) of @build_id. */
static int put_buf(struct sym_store *st, const char *build_id, void *buf,
		   size_t len, const char *source, uint32_t ticket)
{
	struct sym_table *t = NULL;
	int err = sym_table_open(buf, len, &t);

	if (err)
		symi_store_ticket_drop(st, build_id, ticket);
	else
		err = symi_store_put_ticket(st, build_id, t, source, ticket);
	sym_table_close(t);
	free(buf);
	return err;
}

/*
 * No ELF file: the table of names from the stored kallsyms snapshot
 * (ksnap.h), or -SYM_E_NOTFOUND.  A snapshot that cannot be read was
 * checked when it was stored: one damaged since is a BADCONV entry.
 */
static int convert_kallsyms(struct sym_store *st, const char *build_id,
			    const char *source, uint32_t ticket)
{
	char path[PATH_MAX], why[256];
	struct symi_ksnap *ks = NULL;
	bool parsed = false;
	void *buf = NULL;
	size_t len = 0;
	int err;

	err = sym_store_file_path(st, build_id, SYM_STORE_KALLSYMS, path,
				  sizeof(path));
	if (!err)
		err = symi_ksnap_load(path, &ks, why, sizeof(why));
	if (!err) {
		parsed = true;
		err = symi_ksnap_table(ks, build_id, &buf, &len);
	}
	symi_ksnap_free(ks);
	if (!err)
		return put_buf(st, build_id, buf, len,
			       source ? source : path, ticket);
	if (err == -EINVAL || err == -SYM_E_TOOBIG ||
	    (err == -SYM_E_NOTFOUND && parsed)) {
		if (err == -EINVAL)
			symi_warn("store: '%s': %s", path, why);
		if (symi_store_put_negative_ticket(
			    st, build_id, SYM_STORE_BADCONV,
			    err == -EINVAL ? why : "the kallsyms snapshot has "
			    "no table of this build ID", ticket) == -ECANCELED)
			return -ECANCELED;
		return err == -EINVAL ? -SYM_E_BADTABLE : err;
	}
	symi_store_ticket_drop(st, build_id, ticket);
	return err;
}
