/*
 * banned.h - functions libsym and the tools must not use, because each has
 * a safer replacement: unbounded copies (use snprintf or memcpy with a
 * checked length), non-reentrant parsing and time conversion, atoi-style
 * conversion without error reporting, and mktemp's race.
 */
#ifndef SYM_BANNED_H
#define SYM_BANNED_H

#define SYM_BANNED(func) sorry_##func##_is_banned

#undef strcpy
#define strcpy(x, y) SYM_BANNED(strcpy)
#undef strcat
#define strcat(x, y) SYM_BANNED(strcat)
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
#undef gmtime
#define gmtime(x) SYM_BANNED(gmtime)
#undef localtime
#define localtime(x) SYM_BANNED(localtime)
#undef mktemp
#define mktemp(x) SYM_BANNED(mktemp)

#endif /* SYM_BANNED_H */
