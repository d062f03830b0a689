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

static int convert(struct sym_store *st, const char *build_id,
		   const char *source, uint32_t ticket,
		   struct sym_module_stats *stats);
static int convert_kallsyms(struct sym_store *st, const char *build_id,
			    const char *source, uint32_t ticket);

int sym_store_convert(struct sym_store *st, const char *build_id,
		      const char *source, struct sym_module_stats *stats)
{
	struct sym_store_lock *lock = NULL;
	uint32_t ticket = 0;
	int waited = 0, err;

	if (stats)
		memset(stats, 0, sizeof(*stats));
	if (!st)
		return -EINVAL;
	/* Another process converting it: wait, then take its work. */
	err = sym_store_lock(st, build_id, LOCK_WAIT_MS, &lock, &waited);
	if (err && err != -ETIMEDOUT)
		return err;
	if (waited && sym_store_has_table(st, build_id)) {
		sym_store_unlock(lock);
		return 0;
	}
	/* The ticket comes before the files are opened: a remove after
	 * this point cancels the put (-ECANCELED), one before it took the
	 * files (-SYM_E_NOTFOUND). */
	err = symi_store_ticket(st, build_id, &ticket);
	if (!err)
		err = convert(st, build_id, source, ticket, stats);
	sym_store_unlock(lock);
	return err;
}

static int convert(struct sym_store *st, const char *build_id,
		   const char *source, uint32_t ticket,
		   struct sym_module_stats *stats)
{
	char exe[PATH_MAX], dbg[PATH_MAX], why[256];
	bool have_exe, have_dbg;
	struct sym_module *mod = NULL;
	const struct sym_table *tab;
	const char *bid;
	int err;

	err = sym_store_file_path(st, build_id, SYM_STORE_EXECUTABLE, exe,
				  sizeof(exe));
	if (err && err != -SYM_E_NOTFOUND)
		goto drop;
	have_exe = !err;
	err = sym_store_file_path(st, build_id, SYM_STORE_DEBUGINFO, dbg,
				  sizeof(dbg));
	if (err && err != -SYM_E_NOTFOUND)
		goto drop;
	have_dbg = !err;
	if (!have_exe && !have_dbg)
		return convert_kallsyms(st, build_id, source, ticket);
	{
		/* The debug file the store has wins over any search. */
		SYM_OPTS(sym_module_opts, mo,
			 .debug_file = have_exe && have_dbg ? dbg : NULL,
			 .flags = have_exe ? 0 : SYM_MODULE_NO_SEARCH);

		err = sym_module_open(have_exe ? exe : dbg, &mo, &mod);
	}
	if (!err) {
		bid = sym_module_id(mod, NULL);
		if (!bid || strcmp(bid, build_id) != 0)
			err = -SYM_E_BADELF;	/* replaced under our feet */
	}
	if (!err)
		err = sym_module_table(mod, &tab);
	if (stats && mod)
		sym_module_stats(mod, stats);
	if (!err) {
		const char *src = source;

		if (!src)
			src = sym_module_debug_file(mod);
		err = symi_store_put_ticket(st, build_id, tab,
					    src ? src : have_exe ? exe : dbg,
					    ticket);
	} else if (is_bad_input(err)) {
		/* A remove since the ticket: say so, and store nothing. */
		if (symi_store_put_negative_ticket(st, build_id,
						   SYM_STORE_BADCONV,
						   sym_strerror(err, why,
								sizeof(why)),
						   ticket) == -ECANCELED)
			err = -ECANCELED;
	} else {
		symi_store_ticket_drop(st, build_id, ticket);
	}
	sym_module_close(mod);
	return err;
drop:
	symi_store_ticket_drop(st, build_id, ticket);
	return err;
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
