/*
 * logline.c - the line parser of `sym symbolize-log` (logline.h).
 *
 * Each form is matched from its fixed marks inward, never with a regular
 * expression: a sanitizer frame by its `#N 0xPC` head and its
 * `(MODULE+0xOFF)` tail, a backtrace_symbols() line by its `(+0xOFF)
 * [0xPC]` tail, a segfault line by ` segfault at `, ` ip ` and ` in
 * NAME[...]`.  Whatever surrounds the marks (a timestamp, a syslog
 * prefix) is left alone.  Numbers are at most 16 hex digits; anything
 * longer, or a mark out of place, makes the line LOGLINE_NONE.  Every
 * scan is bounded by @len, so a line of any bytes is safe.
 */
#include <string.h>

#include "logline.h"
#include "base.h"

/* Hex digits at *i (1 to 16 of them), moving *i past them. */
static bool hexnum(const char *s, size_t len, size_t *i, uint64_t *v)
{
	size_t n = 0;

	*v = 0;
	while (*i < len && symi_hexval(s[*i]) >= 0) {
		if (++n > 16)
			return false;
		*v = (*v << 4) | (uint64_t)symi_hexval(s[*i]);
		(*i)++;
	}
	return n > 0;
}

/* "0x" and hex digits at *i. */
static bool hex0x(const char *s, size_t len, size_t *i, uint64_t *v)
{
	if (*i + 2 > len || s[*i] != '0' || (s[*i + 1] != 'x' &&
					      s[*i + 1] != 'X'))
		return false;
	*i += 2;
	return hexnum(s, len, i, v);
}

static bool lit(const char *s, size_t len, size_t i, const char *w)
{
	size_t n = strlen(w);

	return i + n <= len && memcmp(s + i, w, n) == 0;
}

/* The last occurrence of @w in s[from, to), or SIZE_MAX. */
static size_t rfind(const char *s, size_t from, size_t to, const char *w)
{
	size_t n = strlen(w);

	for (size_t i = to >= n ? to - n + 1 : 0; i-- > from;)
		if (memcmp(s + i, w, n) == 0)
			return i;
	return SIZE_MAX;
}

/* The first occurrence of @w in s[from, len), or SIZE_MAX. */
static size_t find(const char *s, size_t from, size_t len, const char *w)
{
	const char *p;

	if (from > len)
		return SIZE_MAX;
	p = memmem(s + from, len - from, w, strlen(w));
	return p ? (size_t)(p - s) : SIZE_MAX;
}

/*
 * `(MODULE+0xOFF)` ending exactly at @end, opened by a '(' after
 * position @from that follows a blank: the module and OFF.
 */
static bool module_off(const char *s, size_t from, size_t end,
		       struct logline *l)
{
	size_t plus, open, i;

	if (end <= from + 4 || s[end - 1] != ')')
		return false;
	plus = rfind(s, from, end, "+0x");
	if (plus == SIZE_MAX)
		return false;
	i = plus + 1;
	if (!hex0x(s, end, &i, &l->addr) || i != end - 1)
		return false;
	open = plus;
	while (open > from && !(s[open - 1] == ' ' && s[open] == '('))
		open--;
	if (open <= from || s[open] != '(' || plus <= open + 1)
		return false;
	l->module.off = open + 1;
	l->module.len = plus - open - 1;
	return true;
}

/* "(MODULE+0xOFF)" and an optional " (BuildId: HEX)" ending at @len,
 * the '(' after @from. */
static bool san_tail(const char *s, size_t from, size_t len,
		     struct logline *l)
{
	size_t end = len, b = rfind(s, from, len, " (BuildId: ");

	if (b != SIZE_MAX && s[len - 1] == ')') {
		size_t h = b + strlen(" (BuildId: ");

		while (h < len - 1 && symi_hexval(s[h]) >= 0)
			h++;
		if (h == len - 1 && h > b + strlen(" (BuildId: ")) {
			l->build_id.off = b + strlen(" (BuildId: ");
			l->build_id.len = h - l->build_id.off;
			end = b;
		}
	}
	return module_off(s, from, end, l);
}

static bool sanitizer(const char *s, size_t len, struct logline *l)
{
	size_t i = 0;
	uint64_t pc;

	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i >= len || s[i++] != '#' || i >= len || s[i] < '0' || s[i] > '9')
		return false;
	l->frame_no.off = i;
	while (i < len && s[i] >= '0' && s[i] <= '9') {
		if (l->frame > 99999999)
			return false;
		l->frame = l->frame * 10 + (uint32_t)(s[i++] - '0');
	}
	l->frame_no.len = i - l->frame_no.off;
	if (!lit(s, len, i, " 0x"))
		return false;
	i++;
	if (!hex0x(s, len, &i, &pc) || i >= len || s[i] != ' ')
		return false;
	l->cut = i;
	return san_tail(s, i, len, l);
}

/* "SUMMARY: ...: KIND (MODULE+0xOFF) (BuildId: HEX) ", the form
 * ReportErrorSummary() gives an unsymbolized frame ("%L %F" with no
 * function: the trailing blank). */
static bool summary(const char *s, size_t len, struct logline *l)
{
	if (!lit(s, len, 0, "SUMMARY: ") || len < 2 || s[len - 1] != ' ')
		return false;
	if (!san_tail(s, 0, len - 1, l))
		return false;
	l->cut = l->module.off - 2;
	return true;
}

static bool backtrace(const char *s, size_t len, struct logline *l)
{
	size_t i, open, close, start, plus;
	uint64_t pc;

	if (len < 8 || s[len - 1] != ']')
		return false;
	open = rfind(s, 0, len, "[0x");
	if (open == SIZE_MAX || open == 0)
		return false;
	i = open + 1;
	if (!hex0x(s, len, &i, &pc) || i != len - 1)
		return false;
	close = s[open - 1] == ' ' ? open - 1 : open;
	if (close == 0 || s[close - 1] != ')')
		return false;
	/* "(+0xOFF)" or "(NAME+0xOFF)". */
	plus = rfind(s, 0, close, "+0x");
	if (plus == SIZE_MAX)
		return false;
	i = plus + 1;
	if (!hex0x(s, close, &i, &l->addr) || i != close - 1)
		return false;
	open = plus;
	while (open > 0 && s[open - 1] != '(')
		open--;
	if (open == 0)
		return false;
	l->symbol.off = open;
	l->symbol.len = plus - open;
	open--;
	start = open;
	while (start > 0 && s[start - 1] != ' ' && s[start - 1] != '\t')
		start--;
	if (start == open)
		return false;
	l->module.off = start;
	l->module.len = open - start;
	return true;
}

/* "in NAME[BASE+SIZE]" or "in NAME[OFF,BASE+SIZE]" at @i. */
static bool segv_vma(const char *s, size_t len, size_t i, struct logline *l)
{
	size_t br = i;
	uint64_t v;

	while (br < len && s[br] != '[')
		br++;
	if (br >= len || br == i)
		return false;
	l->module.off = i;
	l->module.len = br - i;
	i = br + 1;
	if (!hexnum(s, len, &i, &v) || i >= len)
		return false;
	if (s[i] == ',') {
		l->fileoff = v;
		l->has_fileoff = true;
		i++;
		if (!hexnum(s, len, &i, &v) || i >= len)
			return false;
	}
	l->base = v;
	if (s[i++] != '+' || !hexnum(s, len, &i, &l->size))
		return false;
	return i < len && s[i] == ']';
}

static bool segfault(const char *s, size_t len, struct logline *l)
{
	size_t at = find(s, 0, len, " segfault at ");
	size_t ip, in;

	if (at == SIZE_MAX)
		return false;
	ip = find(s, at, len, " ip ");
	if (ip == SIZE_MAX)
		return false;
	ip += 4;
	if (!hexnum(s, len, &ip, &l->addr))
		return false;
	in = find(s, ip, len, " in ");
	if (in == SIZE_MAX)
		return false;
	return segv_vma(s, len, in + 4, l);
}

static bool pc_alone(const char *s, size_t len, struct logline *l)
{
	size_t i = 0;

	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (!hex0x(s, len, &i, &l->addr))
		return false;
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return i == len;
}

enum logline_kind logline_parse(const char *s, size_t len,
				struct logline *out)
{
	struct logline l;

	if (len && s[len - 1] == '\r')
		len--;
	memset(&l, 0, sizeof(l));
	if (sanitizer(s, len, &l))
		l.kind = LOGLINE_SANITIZER;
	else if (memset(&l, 0, sizeof(l)), summary(s, len, &l))
		l.kind = LOGLINE_SUMMARY;
	else if (memset(&l, 0, sizeof(l)), backtrace(s, len, &l))
		l.kind = LOGLINE_BACKTRACE;
	else if (memset(&l, 0, sizeof(l)), segfault(s, len, &l))
		l.kind = LOGLINE_SEGFAULT;
	else if (memset(&l, 0, sizeof(l)), pc_alone(s, len, &l))
		l.kind = LOGLINE_PC;
	else
		memset(&l, 0, sizeof(l));
	*out = l;
	return out->kind;
}
