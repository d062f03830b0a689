/*
 * req.c - the POST /v1/symbolize body parser and the JSON output helpers
 * (the manual is req.h; the HTTP side is docs/http-api.md).
 *
 * The parser is one forward pass over the body with a cursor, no
 * tokenizer and no tree: the known structure (the request object, the
 * modules array, a module object, an addresses array) is walked by its
 * own functions, and the value of an unknown key is checked and skipped
 * by skip_value(), which keeps its nesting in a byte array instead of
 * recursing.  So the stack use is constant and the time linear.
 *
 * Invariants:
 * - p->pos never exceeds p->len, and every byte is read through peek()
 *   or after a bounds check.
 * - Output memory is allocated once, before parsing, from bounds that
 *   hold for any input: an address takes at least 2 bytes of the body
 *   (a digit and ',' or ']'), a module at least 33
 *   ({"build_id":"00","addresses":[]} and ',' or ']'); both are also
 *   capped by the limits.  So there is no realloc() and the slices in
 *   struct symd_req_module stay valid.
 * - Every failure goes through fail(), which writes the message once; the
 *   first error wins.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym.h"
#include "req.h"
#include "base.h"

/* ---- character classes and UTF-8 ------------------------------------- */

/* Bytes a JSON string cannot hold as they are (decoder: the end, an
 * escape, an error or a multi-byte sequence to check; encoder: bytes to
 * escape or to check).  Everything else is copied in runs. */
static const uint8_t str_special[256] = {
	[0 ... 0x1f] = 1, ['"'] = 1, ['\\'] = 1, [0x80 ... 0xff] = 1,
};

/* A hex digit's value plus one; 0 for anything else. */
static const uint8_t hex1[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
	['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* The value of hex digit @c, or -1. */
static inline int hexval(char c)
{
	return (int)hex1[(uint8_t)c] - 1;
}

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* The first index >= i of a byte of @s that is str_special[], or @n.
 * Eight bytes at a time: a word has one when a byte is < 0x20, is '"',
 * is '\' or has its high bit set (the usual has-zero-byte tricks; they
 * may flag too much within a word, never too little, and the byte loop
 * then finds the exact place). */
static size_t scan_plain(const char *s, size_t i, size_t n)
{
	while (n - i >= 8) {
		uint64_t w, q, bs, lt, eq, eb;

		memcpy(&w, s + i, 8);
		q = w ^ (ONES * '"');
		bs = w ^ (ONES * '\\');
		lt = (w - ONES * 0x20) & ~w;	/* a byte < 0x20 */
		eq = (q - ONES) & ~q;		/* a byte == '"' */
		eb = (bs - ONES) & ~bs;		/* a byte == '\\' */
		if ((lt | eq | eb | w) & HIGHS)
			break;
		i += 8;
	}
	while (i < n && !str_special[(uint8_t)s[i]])
		i++;
	return i;
}

/*
 * The well-formed UTF-8 sequence at p[0..n) (Unicode table 3-7: no
 * overlong forms, no surrogates, nothing past U+10FFFF): its length as a
 * positive number, or minus the length of the maximal subpart of an
 * ill-formed one (at least 1 byte), which the encoder replaces by one
 * U+FFFD.  p[0] >= 0x80.
 */
static int utf8_seq(const uint8_t *p, size_t n)
{
	uint8_t c = p[0], lo = 0x80, hi = 0xbf;
	int need;

	if (c < 0xc2 || c > 0xf4)
		return -1;
	if (c < 0xe0) {
		need = 2;
	} else if (c < 0xf0) {
		need = 3;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else {
		need = 4;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	}
	if (n < 2 || p[1] < lo || p[1] > hi)
		return -1;
	for (int k = 2; k < need; k++)
		if ((size_t)k >= n || (p[k] & 0xc0) != 0x80)
			return -k;
	return need;
}

/* ---- the string decoder ----------------------------------------------- */

/* Append @k bytes to a bounded output; the count goes on past @cap. */
static inline void put(char *out, size_t cap, size_t *n, const char *src,
		       size_t k)
{
	if (*n < cap)
		memcpy(out + *n, src, k < cap - *n ? k : cap - *n);
	*n += k;
}

static int hex4(const char *s, size_t len, size_t i, unsigned int *v)
{
	unsigned int r = 0;

	if (len - i < 4)
		return -1;
	for (int k = 0; k < 4; k++) {
		int h = hexval(s[i + k]);

		if (h < 0)
			return -1;
		r = r << 4 | (unsigned int)h;
	}
	*v = r;
	return 0;
}

/* One backslash escape at s[i] == '\\': decoded into @out, *i moved
 * past it.  On failure *i is left at the backslash. */
static int unescape(const char *s, size_t len, size_t *i, char *out,
		    size_t cap, size_t *n, const char **why)
{
	static const char simple[256] = {
		['"'] = '"', ['\\'] = '\\', ['/'] = '/', ['b'] = '\b',
		['f'] = '\f', ['n'] = '\n', ['r'] = '\r', ['t'] = '\t',
	};
	unsigned int cp, lo;
	char u[4];
	size_t k;

	if (len - *i < 2) {
		*why = "unterminated string";
		return -EINVAL;
	}
	if (simple[(uint8_t)s[*i + 1]]) {
		put(out, cap, n, &simple[(uint8_t)s[*i + 1]], 1);
		*i += 2;
		return 0;
	}
	if (s[*i + 1] != 'u') {
		*why = "invalid escape in a string";
		return -EINVAL;
	}
	if (hex4(s, len, *i + 2, &cp)) {
		*why = "\\u must be followed by 4 hex digits";
		return -EINVAL;
	}
	k = 6;
	if (cp >= 0xdc00 && cp <= 0xdfff) {
		*why = "lone low surrogate in a \\u escape";
		return -EINVAL;
	}
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (len - *i < 12 || s[*i + 6] != '\\' || s[*i + 7] != 'u' ||
		    hex4(s, len, *i + 8, &lo) || lo < 0xdc00 || lo > 0xdfff) {
			*why = "high surrogate not followed by a \\u low "
			       "surrogate";
			return -EINVAL;
		}
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		k = 12;
	}
	if (cp < 0x80) {
		u[0] = (char)cp;
		put(out, cap, n, u, 1);
	} else if (cp < 0x800) {
		u[0] = (char)(0xc0 | cp >> 6);
		u[1] = (char)(0x80 | (cp & 0x3f));
		put(out, cap, n, u, 2);
	} else if (cp < 0x10000) {
		u[0] = (char)(0xe0 | cp >> 12);
		u[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[2] = (char)(0x80 | (cp & 0x3f));
		put(out, cap, n, u, 3);
	} else {
		u[0] = (char)(0xf0 | cp >> 18);
		u[1] = (char)(0x80 | (cp >> 12 & 0x3f));
		u[2] = (char)(0x80 | (cp >> 6 & 0x3f));
		u[3] = (char)(0x80 | (cp & 0x3f));
		put(out, cap, n, u, 4);
	}
	*i += k;
	return 0;
}

int symd_json_str_decode(const char *s, size_t len, char *out, size_t cap,
			 size_t *outlen, size_t *end, const char **why)
{
	const char *dummy;
	size_t i = 1, n = 0, run;
	int err;

	if (!why)
		why = &dummy;
	if (!out)
		cap = 0;
	*outlen = 0;
	if (!s || len == 0 || s[0] != '"') {
		*end = 0;
		*why = "expected a string";
		return -EINVAL;
	}
	for (;;) {
		uint8_t c;
		int k;

		run = i;
		i = scan_plain(s, i, len);
		put(out, cap, &n, s + run, i - run);
		if (i >= len) {
			*why = "unterminated string";
			err = -EINVAL;
			goto out;
		}
		c = (uint8_t)s[i];
		if (c == '"') {
			i++;
			break;
		}
		if (c == '\\') {
			err = unescape(s, len, &i, out, cap, &n, why);
			if (err)
				goto out;
			continue;
		}
		if (c < 0x20) {
			*why = "raw control character in a string";
			err = -EINVAL;
			goto out;
		}
		k = utf8_seq((const uint8_t *)s + i, len - i);
		if (k < 0) {
			*why = "invalid UTF-8 in a string";
			err = -EINVAL;
			goto out;
		}
		put(out, cap, &n, s + i, (size_t)k);
		i += (size_t)k;
	}
	err = 0;
out:
	*outlen = n;
	*end = i;
	return err;
}

/* ---- build IDs -------------------------------------------------------- */

/* %-decode @s into @out (cap bytes, NUL-ended): 0 or -EINVAL,
 * -ENAMETOOLONG. */
static int pct_decode(const char *s, size_t len, char *out, size_t cap,
		      const char **why)
{
	size_t o = 0;

	for (size_t i = 0; i < len; i++) {
		int c = (unsigned char)s[i];

		if (c == '%') {
			int h = i + 2 < len ? hexval(s[i + 1]) : -1;
			int l = h >= 0 ? hexval(s[i + 2]) : -1;

			if (h < 0 || l < 0) {
				*why = "a bad %-escape";
				return -EINVAL;
			}
			c = h * 16 + l;
			i += 2;
		}
		if (c < 0x20 || c == 0x7f) {
			*why = "a control byte";
			return -EINVAL;
		}
		if (o + 1 >= cap) {
			*why = "too long";
			return -ENAMETOOLONG;
		}
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return 0;
}

/* Has @p a ".." component? */
static bool has_dotdot(const char *p)
{
	for (const char *d = strstr(p, "/.."); d; d = strstr(d + 1, "/.."))
		if (d[3] == '/' || d[3] == '\0')
			return true;
	return false;
}

int symd_source_path_parse(const char *s, size_t len,
			   char out[SYMD_SOURCE_PATH_MAX], const char **why)
{
	const char *w = NULL;
	char tmp[SYMD_SOURCE_PATH_MAX];
	int err;

	out[0] = '\0';
	if (!why)
		why = &w;
	err = pct_decode(s ? s : "", s ? len : 0, tmp, sizeof(tmp), why);
	if (err)
		return err;
	if (tmp[0] != '/') {
		*why = "not an absolute path";
		return -EINVAL;
	}
	if (has_dotdot(tmp)) {
		*why = "a '..' component";
		return -EINVAL;
	}
	/* Then "." and empty components go as libsym drops them; the
	 * result is never longer than @tmp, which fit. */
	err = sym_path_normalize(tmp, out, SYMD_SOURCE_PATH_MAX);
	if (err) {
		out[0] = '\0';
		*why = "a component over 255 bytes";
		return -ENAMETOOLONG;
	}
	return 0;
}

int symd_build_id_norm(const char *s, size_t len,
		       char out[SYMD_BUILD_ID_MAX + 1], const char **why)
{
	const char *dummy;

	if (!why)
		why = &dummy;
	out[0] = '\0';
	if (len < 2) {
		*why = "shorter than 2 hex digits";
		return -EINVAL;
	}
	if (len > SYMD_BUILD_ID_MAX) {
		*why = "longer than 128 hex digits";
		return -EINVAL;
	}
	for (size_t i = 0; i < len; i++) {
		int h = hexval(s[i]);

		if (h < 0) {
			out[0] = '\0';
			*why = "not hex (0-9, a-f)";
			return -EINVAL;
		}
		out[i] = "0123456789abcdef"[h];
	}
	if (len % 2) {
		out[0] = '\0';
		*why = "an odd number of hex digits";
		return -EINVAL;
	}
	out[len] = '\0';
	return 0;
}

/* ---- the request parser ----------------------------------------------- */

struct parser {
	const char *s;
	size_t len, pos;
	const struct symd_req_limits *lim;
	struct symd_req *req;
	size_t addr_cap, mod_cap;
	char *err;
	size_t errlen;
	/* Where we are, for messages: "modules[mod].field[idx]", each part
	 * present when set (mod, idx >= 0; field non-NULL). */
	long mod, idx;
	const char *field;
};

/* Room for the longest known key; longer keys are unknown ones. */
#define KEY_MAX 16

static int fail(struct parser *p, int code, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Write "<where>: <message> at byte <at>" to the caller's buffer and
 * return @code. */
static int fail(struct parser *p, int code, size_t at, const char *fmt, ...)
{
	char where[64], msg[160];
	size_t w = 0;
	va_list ap;

	if (!p->err || !p->errlen)
		return code;
	where[0] = '\0';
	if (p->mod >= 0)
		w += (size_t)snprintf(where, sizeof(where), "modules[%ld]",
				      p->mod);
	if (p->field && w < sizeof(where))
		w += (size_t)snprintf(where + w, sizeof(where) - w, "%s%s",
				      w ? "." : "", p->field);
	if (p->idx >= 0 && w < sizeof(where))
		w += (size_t)snprintf(where + w, sizeof(where) - w, "[%ld]",
				      p->idx);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "%s: %s at byte %zu",
		 w ? where : "request", msg, at);
	return code;
}

static inline int peek(const struct parser *p)
{
	return p->pos < p->len ? (uint8_t)p->s[p->pos] : -1;
}

static inline void ws(struct parser *p)
{
	while (p->pos < p->len) {
		char c = p->s[p->pos];

		if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
			break;
		p->pos++;
	}
}

/* What is at the cursor, for "expected X, got Y" (never its bytes). */
static const char *got(const struct parser *p)
{
	switch (peek(p)) {
	case -1:
		return "end of input";
	case '"':
		return "a string";
	case '{':
		return "an object";
	case '[':
		return "an array";
	case 't':
	case 'f':
		return "a boolean";
	case 'n':
		return "null";
	case '-':
	case '0' ... '9':
		return "a number";
	case ',':
		return "','";
	case ':':
		return "':'";
	case ']':
		return "']'";
	case '}':
		return "'}'";
	default:
		return "an unexpected byte";
	}
}

/* A string at the cursor: decoded into out[0..cap), *n its full
 * length; the cursor moves past it. */
static int read_str(struct parser *p, char *out, size_t cap, size_t *n)
{
	const char *why = NULL;
	size_t end;

	if (symd_json_str_decode(p->s + p->pos, p->len - p->pos, out, cap, n,
				 &end, &why))
		return fail(p, -EINVAL, p->pos + end, "%s", why);
	p->pos += end;
	return 0;
}

/* A number's integer part in v (saturated at UINT64_MAX, ovf set), and
 * what else it had. */
struct num {
	uint64_t v;
	bool neg, frac, exp, ovf;
};

/* A JSON number at the cursor, checked against the grammar; the cursor
 * moves past it. */
static int read_num(struct parser *p, struct num *nm)
{
	const char *s = p->s;
	size_t i = p->pos, len = p->len;

	memset(nm, 0, sizeof(*nm));
	if (i < len && s[i] == '-') {
		nm->neg = true;
		i++;
	}
	if (i >= len || s[i] < '0' || s[i] > '9')
		return fail(p, -EINVAL, i, "expected a digit in a number");
	if (s[i] == '0') {
		i++;
		if (i < len && s[i] >= '0' && s[i] <= '9')
			return fail(p, -EINVAL, i - 1,
				    "leading zero in a number");
	} else {
		while (i < len && s[i] >= '0' && s[i] <= '9') {
			unsigned int d = (unsigned int)(s[i] - '0');

			if (nm->ovf || nm->v > (UINT64_MAX - d) / 10) {
				nm->ovf = true;
				nm->v = UINT64_MAX;
			} else {
				nm->v = nm->v * 10 + d;
			}
			i++;
		}
	}
	if (i < len && s[i] == '.') {
		nm->frac = true;
		i++;
		if (i >= len || s[i] < '0' || s[i] > '9')
			return fail(p, -EINVAL, i,
				    "expected a digit after '.' in a number");
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		nm->exp = true;
		i++;
		if (i < len && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= len || s[i] < '0' || s[i] > '9')
			return fail(p, -EINVAL, i,
				    "expected a digit in an exponent");
		while (i < len && s[i] >= '0' && s[i] <= '9')
			i++;
	}
	p->pos = i;
	return 0;
}

/* true, false or null at the cursor. */
static int read_literal(struct parser *p)
{
	static const char *const lits[] = { "true", "false", "null" };

	for (size_t k = 0; k < sizeof(lits) / sizeof(lits[0]); k++) {
		size_t n = strlen(lits[k]);

		if (p->len - p->pos >= n &&
		    !memcmp(p->s + p->pos, lits[k], n)) {
			p->pos += n;
			return 0;
		}
	}
	return fail(p, -EINVAL, p->pos, "invalid literal");
}

/* An object key and its ':'; the key decoded into key[0..cap), *n its
 * full length (a longer one matches no known key). */
static int read_key(struct parser *p, char *key, size_t cap, size_t *n)
{
	int err;

	ws(p);
	if (peek(p) != '"')
		return fail(p, -EINVAL, p->pos, "expected a key, got %s",
			    got(p));
	err = read_str(p, key, cap, n);
	if (err)
		return err;
	ws(p);
	if (peek(p) != ':')
		return fail(p, -EINVAL, p->pos,
			    "expected ':' after a key, got %s", got(p));
	p->pos++;
	return 0;
}

static bool key_is(const char *key, size_t n, const char *name)
{
	return n == strlen(name) && !memcmp(key, name, n);
}

/* After a member or an element: ',' (another follows: 1) or @closer
 * (the end: 0). */
static int next_or_close(struct parser *p, char closer)
{
	ws(p);
	if (peek(p) == ',') {
		p->pos++;
		return 1;
	}
	if (peek(p) == (uint8_t)closer) {
		p->pos++;
		return 0;
	}
	return fail(p, -EINVAL, p->pos, "expected ',' or '%c', got %s",
		    closer, got(p));
}

/* Enter the array or object @c at nesting @depth. */
static int open_at(struct parser *p, char c, unsigned int depth,
		   const char *what)
{
	ws(p);
	if (peek(p) != (uint8_t)c)
		return fail(p, -EINVAL, p->pos, "expected %s, got %s", what,
			    got(p));
	if (depth > p->lim->max_depth)
		return fail(p, -EINVAL, p->pos, "nesting deeper than %u",
			    p->lim->max_depth);
	p->pos++;
	return 0;
}

/*
 * Check and skip any JSON value at the cursor: the value of an unknown
 * key in an object at nesting @depth.  Iterative: the open containers
 * are in stack[] ('[' or '{'), at most SYMD_REQ_DEPTH_CAP of them since
 * lim->max_depth was capped.
 */
static int skip_value(struct parser *p, unsigned int depth)
{
	char stack[SYMD_REQ_DEPTH_CAP];
	unsigned int sp = 0;
	struct num nm;
	size_t n;
	int c, err;

	for (;;) {
		/* A value. */
		ws(p);
		c = peek(p);
		if (c == '{' || c == '[') {
			err = open_at(p, (char)c, depth + sp + 1, "a value");
			if (err)
				return err;
			stack[sp++] = (char)c;
			ws(p);
			if (peek(p) != (c == '{' ? '}' : ']')) {
				if (c == '{') {
					err = read_key(p, NULL, 0, &n);
					if (err)
						return err;
				}
				continue;
			}
			p->pos++;
			sp--;
		} else if (c == '"') {
			err = read_str(p, NULL, 0, &n);
		} else if (c == '-' || (c >= '0' && c <= '9')) {
			err = read_num(p, &nm);
		} else if (c == 't' || c == 'f' || c == 'n') {
			err = read_literal(p);
		} else {
			err = fail(p, -EINVAL, p->pos,
				   "expected a JSON value, got %s", got(p));
		}
		if (err)
			return err;
		/* After a value: close containers until one has more. */
		for (;;) {
			if (!sp)
				return 0;
			err = next_or_close(p, stack[sp - 1] == '{' ? '}' :
							       ']');
			if (err < 0)
				return err;
			if (err == 0) {
				sp--;
				continue;
			}
			if (stack[sp - 1] == '{') {
				err = read_key(p, NULL, 0, &n);
				if (err)
					return err;
			}
			break;
		}
	}
}

/* One address at the cursor, appended to req->addrs. */
static int read_addr(struct parser *p)
{
	struct symd_req *req = p->req;
	uint64_t v = 0;
	size_t at, n;
	char buf[20];
	int c, err;

	ws(p);
	at = p->pos;
	c = peek(p);
	if (c == '"') {
		err = read_str(p, buf, sizeof(buf), &n);
		if (err)
			return err;
		if (n < 3 || n > 18 || buf[0] != '0' ||
		    (buf[1] != 'x' && buf[1] != 'X'))
			return fail(p, -EINVAL, at,
				    "expected \"0x\" and 1 to 16 hex digits");
		for (size_t i = 2; i < n; i++) {
			int h = hexval(buf[i]);

			if (h < 0)
				return fail(p, -EINVAL, at,
					    "expected \"0x\" and 1 to 16 hex "
					    "digits");
			v = v << 4 | (uint64_t)h;
		}
	} else if (c == '-' || (c >= '0' && c <= '9')) {
		struct num nm;

		err = read_num(p, &nm);
		if (err)
			return err;
		if (nm.neg)
			return fail(p, -EINVAL, at, "negative address");
		if (nm.frac || nm.exp)
			return fail(p, -EINVAL, at,
				    "address with a fraction or an exponent");
		if (nm.ovf)
			return fail(p, -EINVAL, at,
				    "address does not fit in 64 bits");
		v = nm.v;
	} else {
		return fail(p, -EINVAL, at,
			    "expected a hex string or a non-negative "
			    "integer, got %s", got(p));
	}
	if (req->naddrs >= p->lim->max_addresses)
		return fail(p, -E2BIG, at,
			    "more than %zu addresses in the request",
			    p->lim->max_addresses);
	/* Cannot happen (see the bound in symd_req_parse()); checked so
	 * that a wrong bound would be an error, not an overflow. */
	if (req->naddrs >= p->addr_cap)
		return fail(p, -EINVAL, at, "internal error: address bound");
	req->addrs[req->naddrs++] = v;
	return 0;
}

/* An array at nesting @depth ("@what" in the message when it is not
 * one), each element read by @elem with its index in *@i for messages;
 * *@i is -1 again at the end. */
static int read_array(struct parser *p, unsigned int depth, const char *what,
		      long *i, int (*elem)(struct parser *p))
{
	int err;

	err = open_at(p, '[', depth, what);
	if (err)
		return err;
	ws(p);
	if (peek(p) == ']') {
		p->pos++;
		return 0;
	}
	for (*i = 0;; (*i)++) {
		err = elem(p);
		if (err)
			return err;
		err = next_or_close(p, ']');
		if (err <= 0)
			break;
	}
	if (err == 0)
		*i = -1;
	return err;
}

/* An array of addresses at nesting @depth, appended to req->addrs. */
static int read_addrs(struct parser *p, unsigned int depth)
{
	return read_array(p, depth, "an array of addresses", &p->idx,
			  read_addr);
}

static int read_build_id(struct parser *p, char out[SYMD_BUILD_ID_MAX + 1])
{
	char buf[SYMD_BUILD_ID_MAX + 1];
	const char *why;
	size_t at, n;
	int err;

	ws(p);
	at = p->pos;
	if (peek(p) != '"')
		return fail(p, -EINVAL, at, "expected a hex string, got %s",
			    got(p));
	err = read_str(p, buf, sizeof(buf), &n);
	if (err)
		return err;
	if (n > SYMD_BUILD_ID_MAX)
		n = SYMD_BUILD_ID_MAX + 1; /* "too long", whatever it holds */
	if (symd_build_id_norm(buf, n, out, &why))
		return fail(p, -EINVAL, at, "%s", why);
	return 0;
}

/*
 * Step through the members of the object just entered with open_at():
 * each call reads the next key and its ':' (1: the key in key[0..cap),
 * *n its full length, *at where it starts) or the closing '}' (0).
 * *started is false before the first call.
 */
static int next_member(struct parser *p, bool *started, char *key,
		       size_t cap, size_t *n, size_t *at)
{
	int err;

	if (!*started) {
		*started = true;
		ws(p);
		if (peek(p) == '}') {
			p->pos++;
			return 0;
		}
	} else {
		p->field = NULL;
		err = next_or_close(p, '}');
		if (err <= 0)
			return err;
	}
	*at = p->pos;
	err = read_key(p, key, cap, n);
	return err ? err : 1;
}

/* The known key @field (at @at) of an object: a second one is an
 * error. */
static int take_key(struct parser *p, size_t at, const char *field,
		    bool *seen)
{
	p->field = field;
	if (*seen)
		return fail(p, -EINVAL, at, "duplicate key");
	*seen = true;
	return 0;
}

/* One element of "modules", at nesting 3: {"build_id": ...,
 * "addresses": [...]} and unknown keys, in any order. */
static int read_module(struct parser *p)
{
	struct symd_req *req = p->req;
	struct symd_req_module *m;
	bool have_id = false, have_addrs = false, started = false;
	size_t first = req->naddrs, n, at;
	char key[KEY_MAX];
	int err;

	p->field = NULL;	/* "modules[i]: ...", not "modules: ..." */
	err = open_at(p, '{', 3, "a module object");
	if (err)
		return err;
	if (req->nmodules >= p->lim->max_modules)
		return fail(p, -E2BIG, p->pos - 1, "more than %zu modules",
			    p->lim->max_modules);
	/* Cannot happen: see the bound in symd_req_parse(). */
	if (req->nmodules >= p->mod_cap)
		return fail(p, -EINVAL, p->pos - 1,
			    "internal error: module bound");
	m = &req->modules[req->nmodules];
	while ((err = next_member(p, &started, key, sizeof(key), &n,
				  &at)) > 0) {
		if (key_is(key, n, "build_id")) {
			err = take_key(p, at, "build_id", &have_id);
			if (!err)
				err = read_build_id(p, m->build_id);
		} else if (key_is(key, n, "addresses")) {
			err = take_key(p, at, "addresses", &have_addrs);
			if (!err)
				err = read_addrs(p, 4);
		} else {
			err = skip_value(p, 3);
		}
		if (err)
			return err;
	}
	if (err)
		return err;
	if (!have_id || !have_addrs)
		return fail(p, -EINVAL, p->pos - 1, "missing \"%s\"",
			    have_id ? "addresses" : "build_id");
	/* m->addrs is set when the array can no longer move; see
	 * symd_req_parse(). */
	m->addrs = NULL;
	m->naddrs = req->naddrs - first;
	req->nmodules++;
	return 0;
}

/* "modules": [...] at nesting 2. */
static int read_modules(struct parser *p)
{
	return read_array(p, 2, "an array of modules", &p->mod, read_module);
}

static int read_wait(struct parser *p)
{
	uint32_t max = p->lim->max_wait_ms;
	struct num nm;
	size_t at;
	int c, err;

	ws(p);
	at = p->pos;
	c = peek(p);
	if (c != '-' && (c < '0' || c > '9'))
		return fail(p, -EINVAL, at,
			    "expected a non-negative integer, got %s", got(p));
	err = read_num(p, &nm);
	if (err)
		return err;
	if (nm.neg || nm.frac || nm.exp)
		return fail(p, -EINVAL, at, "expected a non-negative integer");
	p->req->wait_ms = nm.v > max ? max : (uint32_t)nm.v;
	return 0;
}

/* The request object, at nesting 1, and nothing after it. */
static int read_request(struct parser *p, bool single)
{
	bool have_modules = false, have_addrs = false, have_wait = false;
	bool started = false;
	char key[KEY_MAX];
	size_t n, at;
	int err;

	ws(p);
	if (p->pos == p->len)
		return fail(p, -EINVAL, p->pos, "empty request body");
	err = open_at(p, '{', 1, "a JSON object");
	if (err)
		return err;
	while ((err = next_member(p, &started, key, sizeof(key), &n,
				  &at)) > 0) {
		if (key_is(key, n, "modules")) {
			p->field = "modules";
			if (single)
				return fail(p, -EINVAL, at,
					    "not allowed with a build ID in "
					    "the URL");
			err = take_key(p, at, "modules", &have_modules);
			if (!err)
				err = read_modules(p);
		} else if (key_is(key, n, "addresses")) {
			p->field = "addresses";
			if (!single)
				return fail(p, -EINVAL, at,
					    "belongs inside modules[] (or POST "
					    "to /v1/symbolize/<build_id>)");
			err = take_key(p, at, "addresses", &have_addrs);
			if (!err)
				err = read_addrs(p, 2);
		} else if (key_is(key, n, "wait_ms")) {
			err = take_key(p, at, "wait_ms", &have_wait);
			if (!err)
				err = read_wait(p);
		} else {
			err = skip_value(p, 1);
		}
		if (err)
			return err;
	}
	if (err)
		return err;
	if (single ? !have_addrs : !have_modules)
		return fail(p, -EINVAL, p->pos - 1, "missing \"%s\"",
			    single ? "addresses" : "modules");
	ws(p);
	if (p->pos != p->len)
		return fail(p, -EINVAL, p->pos,
			    "unexpected data after the request object");
	return 0;
}

void symd_req_release(struct symd_req *req)
{
	if (!req)
		return;
	free(req->modules);
	free(req->addrs);
	memset(req, 0, sizeof(*req));
}

int symd_req_parse(const char *body, size_t len, const char *url_build_id,
		   const struct symd_req_limits *lim, struct symd_req *req,
		   char *err, size_t errlen)
{
	static const struct symd_req_limits defaults = SYMD_REQ_LIMITS_DEFAULT;
	struct symd_req_limits l = lim ? *lim : defaults;
	struct parser p = { .mod = -1, .idx = -1 };
	const char *why;
	size_t first;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (req)
		memset(req, 0, sizeof(*req));
	if (!req || (!body && len)) {
		if (err && errlen)
			snprintf(err, errlen, "request: invalid arguments");
		return -EINVAL;
	}
	if (l.max_depth > SYMD_REQ_DEPTH_CAP)
		l.max_depth = SYMD_REQ_DEPTH_CAP;
	if (l.default_wait_ms > l.max_wait_ms)
		l.default_wait_ms = l.max_wait_ms;
	p.s = body;
	p.len = len;
	p.lim = &l;
	p.req = req;
	p.err = err;
	p.errlen = errlen;
	req->wait_ms = l.default_wait_ms;

	/* The bounds of the invariant at the top of this file: each array
	 * is allocated once, at its final capacity. */
	p.addr_cap = len / 2 < l.max_addresses ? len / 2 : l.max_addresses;
	if (url_build_id)
		p.mod_cap = l.max_modules ? 1 : 0;
	else if (len / 32 + 1 < l.max_modules)
		p.mod_cap = len / 32 + 1;
	else
		p.mod_cap = l.max_modules;
	if (p.addr_cap > SIZE_MAX / sizeof(*req->addrs) ||
	    p.mod_cap > SIZE_MAX / sizeof(*req->modules)) {
		rc = fail(&p, -ENOMEM, 0, "out of memory");
		goto out;
	}
	if (p.addr_cap) {
		req->addrs = malloc(p.addr_cap * sizeof(*req->addrs));
		if (!req->addrs) {
			rc = fail(&p, -ENOMEM, 0, "out of memory");
			goto out;
		}
	}
	if (p.mod_cap) {
		req->modules = malloc(p.mod_cap * sizeof(*req->modules));
		if (!req->modules) {
			rc = fail(&p, -ENOMEM, 0, "out of memory");
			goto out;
		}
	}

	if (url_build_id) {
		if (!p.mod_cap) {
			rc = fail(&p, -E2BIG, 0, "more than %zu modules",
				  l.max_modules);
			goto out;
		}
		rc = symd_build_id_norm(url_build_id, strlen(url_build_id),
					req->modules[0].build_id, &why);
		if (rc) {
			if (err && errlen)
				snprintf(err, errlen,
					 "build ID in the URL: %s", why);
			goto out;
		}
	}
	rc = read_request(&p, url_build_id != NULL);
	if (rc)
		goto out;
	if (url_build_id) {
		req->modules[0].naddrs = req->naddrs;
		req->nmodules = 1;
	}
	if (!req->naddrs) {
		free(req->addrs);
		req->addrs = NULL;
	}
	if (!req->nmodules) {
		free(req->modules);
		req->modules = NULL;
	}
	/* The modules' slices are consecutive, in order. */
	first = 0;
	for (size_t i = 0; i < req->nmodules; i++) {
		struct symd_req_module *m = &req->modules[i];

		m->addrs = m->naddrs ? req->addrs + first : NULL;
		first += m->naddrs;
	}
	return 0;
out:
	symd_req_release(req);
	return rc;
}

/* ---- the output: JSON strings ------------------------------------------ */

int symd_json_add_str(struct symi_buf *b, const char *s, size_t n)
{
	static const char short_esc[0x20] = {
		['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r',
		['\t'] = 't',
	};
	size_t start = b->len, i = 0, run;
	char e[6];
	int err;

	/* Room for the common case (nothing to escape) in one go. */
	err = symi_buf_grow(b, n < SIZE_MAX - 2 ? n + 2 : SIZE_MAX);
	if (err)
		return err;
	symi_buf_addc(b, '"');	/* within the room just made */
	while (i < n) {
		uint8_t c;
		int k = 0;

		/* A run of plain bytes and well-formed UTF-8, copied at
		 * once. */
		run = i;
		for (;;) {
			i = scan_plain(s, i, n);
			if (i == n || (uint8_t)s[i] < 0x80)
				break;
			k = utf8_seq((const uint8_t *)s + i, n - i);
			if (k < 0)
				break;
			i += (size_t)k;
		}
		err = symi_buf_add(b, s + run, i - run);
		if (err)
			goto fail;
		if (i == n)
			break;
		c = (uint8_t)s[i];
		if (c >= 0x80) {
			/* An ill-formed subsequence (k < 0): one U+FFFD. */
			err = symi_buf_add(b, "\xef\xbf\xbd", 3);
			i += (size_t)-k;
		} else if (c == '"' || c == '\\') {
			e[0] = '\\';
			e[1] = (char)c;
			err = symi_buf_add(b, e, 2);
			i++;
		} else if (c < 0x20 && short_esc[c]) {
			e[0] = '\\';
			e[1] = short_esc[c];
			err = symi_buf_add(b, e, 2);
			i++;
		} else {
			memcpy(e, "\\u00", 4);
			e[4] = "0123456789abcdef"[c >> 4];
			e[5] = "0123456789abcdef"[c & 15];
			err = symi_buf_add(b, e, 6);
			i++;
		}
		if (err)
			goto fail;
	}
	err = symi_buf_addc(b, '"');
	if (err)
		goto fail;
	return 0;
fail:
	symi_buf_setlen(b, start);
	return err;
}

int symd_json_add_cstr(struct symi_buf *b, const char *s)
{
	if (!s)
		return symi_buf_add_lit(b, "null");
	return symd_json_add_str(b, s, strlen(s));
}
