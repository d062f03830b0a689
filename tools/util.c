/*
 * util.c - helpers shared by the sym subcommands: error messages and the
 * parsing of addresses and offsets.
 *
 * Error messages go to stderr as "<prog>: <what>", where <prog> is
 * "sym <command>" once the dispatcher has chosen a command.  The parsers
 * take the whole string or fail: a trailing character is an error, never
 * silently ignored.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools.h"

static const char *prog = "sym";

void tool_set_prog(const char *p)
{
	prog = p;
}

const char *tool_prog(void)
{
	return prog;
}

void tool_err(const char *fmt, ...)
{
	va_list ap;

	/* stdout may hold answers for earlier addresses: keep the order. */
	fflush(stdout);
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void tool_err_code(const char *subject, int err)
{
	char buf[256];

	tool_err("'%s': %s", subject, sym_strerror(err, buf, sizeof(buf)));
}

int tool_parse_hex(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	/* strtoull() would accept blanks and a sign: refuse them first. */
	if (!isxdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 16);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end != '\0')
		return -EINVAL;
	*out = v;
	return 0;
}

int tool_parse_offset(const char *s, int64_t *out)
{
	long long v;
	char *end;

	if (s[0] != '+' && s[0] != '-' && !isdigit((unsigned char)s[0]))
		return -EINVAL;
	if (!isdigit((unsigned char)s[s[0] == '+' || s[0] == '-']))
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end != '\0')
		return -EINVAL;
	*out = v;
	return 0;
}

char *tool_trim(char *s)
{
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' ||
			 s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	return s;
}

int tool_elf_ident(const char *path, struct tool_elf_ident *id)
{
	unsigned char h[18];
	ssize_t got;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	got = pread(fd, h, sizeof(h), 0);
	err = got < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	if (got < (ssize_t)sizeof(h) || memcmp(h, "\177ELF", 4) != 0)
		return -SYM_E_NOTELF;
	id->elf_class = h[4];
	/* e_type follows e_ident; EI_DATA (h[5]) says its byte order. */
	if (h[5] == 2)
		id->elf_type = h[16] << 8 | h[17];
	else
		id->elf_type = h[17] << 8 | h[16];
	return 0;
}
