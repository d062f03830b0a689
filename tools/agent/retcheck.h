/*
 * retcheck.h - is this return address right after a call instruction?
 *
 * A frame-pointer walk through code that keeps no frame pointer reads
 * data as frames, and some of that data is code addresses (function
 * pointers, stale return addresses): they fall inside an executable
 * mapping and would pass for callers.  A true return address follows a
 * call (x86-64: E8 rel32, or FF /2 with any ModRM form), or is the
 * sigreturn trampoline the kernel pushes for a signal frame.  sym record
 * flags a stack 'badreturn' when one of its return addresses fails this
 * test (docs/record.md, "Flags").  One fake return address passes:
 * Go's goexit + 1, after a NOP and before the CALL of goexit1, which the
 * Go runtime gives every goroutine as its outermost return address.
 *
 * The bytes come from the mapped file (through the path procmaps.c found
 * for it), and the verdicts are cached by (module, address), so a
 * recording reads each distinct return address once.
 *
 * Thread-safety: none.
 */
#ifndef SYM_TOOLS_RETCHECK_H
#define SYM_TOOLS_RETCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "procmaps.h"

/** Bytes retcheck_decode() looks at before and at the address. */
#define RETCHECK_BEFORE 8
#define RETCHECK_AT 9

/**
 * retcheck_decode() - the test itself, on bytes.
 * @param before  the RETCHECK_BEFORE bytes that end at the address
 * @param at      the RETCHECK_AT bytes from the address on
 * @return true when they end with a call instruction, or @at is the
 *         rt_sigreturn trampoline (mov $15,%rax; syscall), or they are
 *         Go's goexit + 1 (90 | e8 rel32 90)
 */
bool retcheck_decode(const unsigned char *before, const unsigned char *at);

struct retcheck;

/** retcheck_new() - an empty cache.  @return 0 or -ENOMEM */
int retcheck_new(struct retcheck **out);

/** retcheck_free() - NULL is fine. */
void retcheck_free(struct retcheck *rc);

/**
 * retcheck_ok() - whether runtime return address @pc in mapping @m
 * follows a call.
 * @return 1 yes, 0 no, -1 unknown (no readable file: not judged)
 */
int retcheck_ok(struct retcheck *rc, const struct pm_map *m, uint64_t pc);

/**
 * retcheck_epoch() - changed each time the verdicts cached are
 * forgotten (the cache full): while it is the same, retcheck_ok() gives
 * a verdict it gave before again, without reading the file.
 */
uint64_t retcheck_epoch(const struct retcheck *rc);

/** Counters: verdicts read from files, answered from the cache. */
void retcheck_stats(const struct retcheck *rc, uint64_t *reads,
		    uint64_t *hits);

#endif /* SYM_TOOLS_RETCHECK_H */
