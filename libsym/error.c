/*
 * error.c - error strings, logging, the version, the options check and
 * allocation helpers of libsym.
 *
 * Allocation goes through symi_malloc() and friends so that tests can fail
 * the Nth allocation (SYM_TEST_FAIL_ALLOC=N) and check that every error
 * path unwinds cleanly.  The counter is process-wide and read once.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

static const char *const sym_errstr[] = {
	[SYM_E_NOTELF - SYM_E_BASE] = "not an ELF file",
	[SYM_E_BADELF - SYM_E_BASE] = "truncated or corrupt ELF file",
	[SYM_E_BADDWARF - SYM_E_BASE] = "corrupt or unreadable DWARF",
	[SYM_E_BADTABLE - SYM_E_BASE] = "not a valid lookup table",
	[SYM_E_TOOBIG - SYM_E_BASE] = "module spans 4 GiB or more",
	[SYM_E_NOTFOUND - SYM_E_BASE] = "not found",
	[SYM_E_UNSUPPORTED - SYM_E_BASE] = "unsupported kind of file",
	[SYM_E_DECOMPRESS - SYM_E_BASE] = "cannot decompress section",
	[SYM_E_BADSTORE - SYM_E_BASE] = "not a symd store, or of a newer layout",
	[SYM_E_STALE - SYM_E_BASE] = "table built by another format or converter",
	[SYM_E_BADPROFILE - SYM_E_BASE] = "malformed profile",
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

/*
 * Fault injection.  fail_at < 0 means "not read yet", 0 means "off";
 * allocations are counted only when it is on.
 */
static long fail_at = -1;
static long alloc_count;

static bool alloc_fails(void)
{
	if (fail_at < 0) {
		const char *e = getenv("SYM_TEST_FAIL_ALLOC");

		fail_at = e ? strtol(e, NULL, 10) : 0;
		if (fail_at < 0)
			fail_at = 0;
	}
	if (!fail_at)
		return false;
	return __atomic_add_fetch(&alloc_count, 1, __ATOMIC_RELAXED) == fail_at;
}

void symi_test_fail_alloc(long n)
{
	__atomic_store_n(&alloc_count, 0, __ATOMIC_RELAXED);
	fail_at = n > 0 ? n : 0;
}

long symi_test_alloc_count(void)
{
	return __atomic_load_n(&alloc_count, __ATOMIC_RELAXED);
}

void *symi_malloc(size_t n)
{
	return alloc_fails() ? NULL : malloc(n);
}

void *symi_calloc(size_t n, size_t m)
{
	return alloc_fails() ? NULL : calloc(n, m);
}

void *symi_realloc(void *p, size_t n)
{
	return alloc_fails() ? NULL : realloc(p, n);
}

char *symi_strdup(const char *s)
{
	return alloc_fails() ? NULL : strdup(s);
}

int symi_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 16, bytes;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (!symi_mul(ncap, 2, &ncap))
			return -ENOMEM;
	}
	if (!symi_mul(ncap, elem, &bytes))
		return -ENOMEM;
	p = symi_realloc(*arr, bytes);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = ncap;
	return 0;
}

double symi_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}
