/*
 * error.c - error strings, logging, the version, the options check and
 * the clock of libsym.  The allocation helpers are in alloc.c (shared
 * with libsymprofile).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "base.h"

static const char *const sym_errstr[] = {
	[SYM_E_NOTELF - SYM_E_BASE] = "not an ELF file",
	[SYM_E_BADELF - SYM_E_BASE] = "truncated or corrupt ELF file",
	[SYM_E_BADDWARF - SYM_E_BASE] = "corrupt or unreadable DWARF",
	[SYM_E_BADTABLE - SYM_E_BASE] = "not a valid lookup table",
	[SYM_E_TOOBIG - SYM_E_BASE] = "module spans 4 GiB or more",
	[SYM_E_NOTFOUND - SYM_E_BASE] = "not found",
	[SYM_E_UNSUPPORTED - SYM_E_BASE] = "unsupported kind of file",
	[SYM_E_DECOMPRESS - SYM_E_BASE] =
		"cannot decompress a section or the file (corrupt or truncated)",
	[SYM_E_BADSTORE - SYM_E_BASE] = "not a symd store, or of a newer layout",
	[SYM_E_STALE - SYM_E_BASE] = "table built by another format or converter",
	[SYM_E_BADPROFILE - SYM_E_BASE] = "malformed profile",
	[SYM_E_NOTREG - SYM_E_BASE] = "not a regular file",
	[SYM_E_INFLATE_LIMIT - SYM_E_BASE] =
		"compressed section over the decompression limits",
	[SYM_E_BADGOPCLNTAB - SYM_E_BASE] =
		"truncated or unknown Go function table (.gopclntab)",
};

const char *sym_strerror(int err, char *buf, size_t len)
{
	const char *s = NULL;

	if (!buf || !len)
		return buf;
	if (err < 0)
		err = -err;
	if (err == 0)
		s = "success";
	else if (err > SYM_E_BASE && err < SYM_E_MAX)
		s = sym_errstr[err - SYM_E_BASE];
	if (s) {
		snprintf(buf, len, "%s", s);
		return buf;
	}
	if (err < SYM_E_BASE) {
		/* GNU strerror_r returns a pointer, maybe not to buf. */
		const char *m = strerror_r(err, buf, len);

		if (m != buf)
			snprintf(buf, len, "%s", m);
		return buf;
	}
	snprintf(buf, len, "unknown error %d", err);
	return buf;
}

const char *sym_version(int *major, int *minor, int *patch)
{
	if (major)
		*major = SYM_VERSION_MAJOR;
	if (minor)
		*minor = SYM_VERSION_MINOR;
	if (patch)
		*patch = SYM_VERSION_PATCH;
	return SYM_VERSION;
}

/*
 * The options check, after libbpf's OPTS_VALID(): bytes past the fields
 * this library knows are accepted only when zero, so that an option a
 * newer caller sets is never silently ignored.  SYM_OPTS() zeroes the
 * caller's whole struct, padding included, so the tail is clean.
 */
int symi_opts_check(const void *opts, size_t known, const char *type,
		    uint64_t flags, uint64_t known_flags)
{
	const unsigned char *b = opts;
	size_t sz;

	if (!opts)
		return 0;
	memcpy(&sz, opts, sizeof(sz));
	if (sz < sizeof(sz)) {
		symi_warn("%s: sz is %zu: declare it with SYM_OPTS()", type,
			  sz);
		return -EINVAL;
	}
	for (size_t i = known; i < sz; i++) {
		if (b[i]) {
			symi_warn("%s: byte %zu of %zu is set, but this libsym "
				  "%s knows only the first %zu", type, i, sz,
				  SYM_VERSION, known);
			return -EINVAL;
		}
	}
	if (flags & ~known_flags) {
		symi_warn("%s: flags 0x%llx are unknown to this libsym %s",
			  type, (unsigned long long)(flags & ~known_flags),
			  SYM_VERSION);
		return -EINVAL;
	}
	return 0;
}

/*
 * Logging.  The level is read from SYM_LOG_LEVEL the first time anything
 * is logged or set.
 */
int symi_log_level = SYM_LOG_WARN;
static sym_log_fn log_fn;
static void *log_ctx;

__attribute__((constructor)) static void log_init(void)
{
	const char *e = getenv("SYM_LOG_LEVEL");

	if (e && e[0] >= '0' && e[0] <= '3' && !e[1])
		symi_log_level = e[0] - '0';
}

void sym_set_log(sym_log_fn fn, void *ctx, int level)
{
	log_fn = fn;
	log_ctx = ctx;
	if (level > 0)
		symi_log_level = level;
}

void symi_log_(int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log_fn)
		log_fn(log_ctx, level, msg);
	else
		fprintf(stderr, "libsym: %s\n", msg);
}

double symi_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
