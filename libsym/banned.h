/*
 * banned.h - functions the project's C code must not use, because each
 * has a safer replacement: unbounded copies and strncpy()/strncat()'s
 * truncation without a NUL (use snprintf(), a symi_buf, or memcpy() with
 * a checked length), gets(), non-reentrant parsing and time conversion,
 * atoi-style conversion without error reporting (use strtol() and check
 * end and errno), and mktemp()/tmpnam()'s race (use mkstemp()).
 *
 * It is included at the end of base.h, the project header that every C
 * file but libsymprof's includes after its system headers (see base.h
 * for why not earlier, and not with -include).  A banned call then fails
 * to compile: 'sorry_strcpy_is_banned' undeclared.
 */
#ifndef SYM_BANNED_H
#define SYM_BANNED_H

#define SYM_BANNED(func) sorry_##func##_is_banned

#undef strcpy
#define strcpy(x, y) SYM_BANNED(strcpy)
#undef strcat
#define strcat(x, y) SYM_BANNED(strcat)
#undef strncpy
#define strncpy(x, y, n) SYM_BANNED(strncpy)
#undef strncat
#define strncat(x, y, n) SYM_BANNED(strncat)
#undef gets
#define gets(x) SYM_BANNED(gets)
#undef sprintf
#define sprintf(...) SYM_BANNED(sprintf)
#undef vsprintf
#define vsprintf(...) SYM_BANNED(vsprintf)
#undef strtok
#define strtok(x, y) SYM_BANNED(strtok)
#undef atoi
#define atoi(x) SYM_BANNED(atoi)
#undef atol
#define atol(x) SYM_BANNED(atol)
#undef atoll
#define atoll(x) SYM_BANNED(atoll)
#undef gmtime
#define gmtime(x) SYM_BANNED(gmtime)
#undef localtime
#define localtime(x) SYM_BANNED(localtime)
#undef ctime
#define ctime(x) SYM_BANNED(ctime)
#undef ctime_r
#define ctime_r(x, y) SYM_BANNED(ctime_r)
#undef asctime
#define asctime(x) SYM_BANNED(asctime)
#undef asctime_r
#define asctime_r(x, y) SYM_BANNED(asctime_r)
#undef mktemp
#define mktemp(x) SYM_BANNED(mktemp)
#undef tmpnam
#define tmpnam(x) SYM_BANNED(tmpnam)

#endif /* SYM_BANNED_H */
