/*
 * asan.h - SYMI_ASAN: whether this file is built with AddressSanitizer.
 * gcc says so with __SANITIZE_ADDRESS__; clang 14 (the fuzz targets'
 * compiler, tests/fuzz/fuzz.mk) only through __has_feature().  Code that
 * reads past an object on purpose (put.h's put_str(), within a page) or
 * hands out memory ASan does not track (alloc.c's slab) is left out
 * under it.  No system header: put.h and base.h both include it.
 */
#ifndef SYM_ASAN_H
#define SYM_ASAN_H

#if defined(__SANITIZE_ADDRESS__)
#define SYMI_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SYMI_ASAN 1
#endif
#endif

#endif /* SYM_ASAN_H */
