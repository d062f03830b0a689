/*
 * tap.h - the smallest TAP producer for unit tests.
 *
 * Each CHECK() is one TAP test point; a failure prints the file, the line
 * and the expression.  CHECK_ERR() also prints sym_strerror() of an error
 * code.  Call tap_done() at the end: it prints the plan and returns the exit
 * status for main().
 */
#ifndef SYM_TAP_H
#define SYM_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include "sym.h"

static int tap_n, tap_failed;

static inline void tap_ok(int ok, const char *file, int line,
			  const char *what)
{
	tap_n++;
	if (!ok)
		tap_failed++;
	printf("%sok %d - %s\n", ok ? "" : "not ", tap_n, what);
	if (!ok)
		printf("#   failed at %s:%d\n", file, line);
	fflush(stdout);
}

#define CHECK(expr) tap_ok(!!(expr), __FILE__, __LINE__, #expr)

/* CHECK_ERR(call, want): the int that call returns equals want. */
#define CHECK_ERR(call, want)                                               \
	do {                                                                 \
		int tap_rc_ = (call);                                        \
		tap_ok(tap_rc_ == (want), __FILE__, __LINE__, #call);        \
		if (tap_rc_ != (want)) {                                     \
			char tap_b_[128];                                    \
			printf("#   got %d (%s), want %d\n", tap_rc_,         \
			       sym_strerror(tap_rc_, tap_b_,                  \
					    sizeof(tap_b_)), (want));         \
		}                                                            \
	} while (0)

static inline void tap_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	exit(0);
}

/* One test point skipped: "ok N - WHAT # skip WHY". */
static inline void tap_skip(const char *what, const char *why)
{
	tap_n++;
	printf("ok %d - %s # skip %s\n", tap_n, what, why);
}

/* Run a shell command (printf-style); true when it exits 0. */
static inline bool tap_sh(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static inline bool tap_sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd) == 0;
}

/* The whole file at @path in a malloc()ed buffer (caller frees), its size
 * in *@len; NULL when it cannot be read or is empty. */
static inline void *tap_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n)) &&
	    fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf)
		*len = (size_t)n;
	return buf;
}

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif /* SYM_TAP_H */
