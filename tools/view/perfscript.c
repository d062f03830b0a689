/*
 * perfscript.c - read `perf script` text into stacks (perfscript.h).
 *
 * The folding rules are FlameGraph's stackcollapse-perf.pl's, because
 * folded stacks are compared across tools and FlameGraph's regression
 * data is the test (../shared/conformance/flamegraph-stackcollapse).  The
 * Perl script is a loop of regular expressions; this file matches the
 * same lines and captures the same parts without a regex engine, with
 * each expression's backtracking worked out by hand next to the function
 * that replaces it, and in linear time (a hostile line cannot make us
 * quadratic).  "Whitespace" is Perl's \s on bytes: space, \t, \n, \v, \f,
 * \r; "word" is \w: [A-Za-z0-9_]; "digit" is [0-9].
 *
 * State, as in the script: the current process name (set by a header
 * line, dropped by a blank line), the frames read since the last blank
 * line, the period of the last kept header.  A header does not start a
 * new stack: only a blank line ends one.  So frames of a sample without
 * its blank line join the next sample, as upstream does; perf script
 * always prints the blank line, so only cut or edited files show it.
 *
 * Invariants: every buffer has a cap (opts.max_*); a line is handled
 * whole, from the caller's buffer when it is in one piece, else from
 * ps->part; ps->err, once set, is returned by every later call.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "perfscript.h"
#include "banned.h"

/* A growable byte buffer with a cap given at each reservation. */
struct pbuf {
	char *p;
	size_t len, cap;
};

/* A piece of the current line: [off, off + len). */
struct span {
	size_t off, len;
};

struct perfscript {
	struct perfscript_opts o;
	perfscript_sample_fn fn;
	void *ctx;
	int err;
	char msg[160];
	struct perfscript_stats st;

	/* The start of a line that a feed ended in the middle of. */
	struct pbuf part;

	/* The event kept, and the first other one seen (for the stats). */
	struct pbuf event;
	bool have_event;
	struct pbuf other;

	/* The current sample: process name, period, frames leaf first
	 * (NUL-terminated strings in names at offsets offs[]). */
	struct pbuf pname;
	bool have_pname;
	bool java;	/* pname starts with "java" */
	uint64_t period;
	struct pbuf names;
	size_t *offs;
	size_t nframes, offs_cap;
	/* Root-first pointers handed to the callback. */
	const char **ptrs;
	size_t ptrs_cap;
	/* Scratch for one frame name. */
	struct pbuf tmp;
};

static bool is_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool is_word(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z') || c == '_';
}

/* Make room for @more bytes; -E2BIG past @max, -ENOMEM. */
static int pbuf_reserve(struct pbuf *b, size_t more, size_t max)
{
	size_t want, cap;
	char *p;

	if (more > max || b->len > max - more)
		return -E2BIG;
	want = b->len + more;
	/* Allocated even for 0 bytes: mem*() calls get no NULL. */
	if (want <= b->cap && b->p)
		return 0;
	cap = b->cap ? b->cap : 64;
	while (cap < want)
		cap = cap > max / 2 ? max : cap * 2;
	p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

static int pbuf_add(struct pbuf *b, const char *s, size_t n, size_t max)
{
	int err = pbuf_reserve(b, n, max);

	if (err)
		return err;
	if (n)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	return 0;
}

/* Set @b to the string @s, NUL-terminated. */
static int pbuf_set(struct pbuf *b, const char *s, size_t n, size_t max)
{
	int err;

	b->len = 0;
	err = pbuf_add(b, s, n, max);
	if (!err)
		err = pbuf_add(b, "", 1, max);
	if (!err)
		b->len--;
	return err;
}

static void pbuf_release(struct pbuf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static bool has(const char *s, size_t n, const char *what)
{
	return memmem(s, n, what, strlen(what)) != NULL;
}

/* Perl's truth of a string: false when empty or exactly "0". */
static bool perl_false(const char *s, size_t n)
{
	return n == 0 || (n == 1 && s[0] == '0');
}

static int fail(struct perfscript *ps, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(struct perfscript *ps, int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(ps->msg, sizeof(ps->msg), "line %llu: ",
		     (unsigned long long)ps->st.lines);
	if (n < 0 || (size_t)n >= sizeof(ps->msg))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(ps->msg + n, sizeof(ps->msg) - n, fmt, ap);
	va_end(ap);
	ps->err = err;
	return err;
}

/* The message of a limit error (-E2BIG from a pbuf of the sample). */
static int fail_stack(struct perfscript *ps, int err)
{
	if (err == -E2BIG)
		return fail(ps, err, "stack longer than %zu bytes",
			    ps->o.max_stack);
	return fail(ps, err, "out of memory");
}

/*
 * The header regex, /^(\S.+?)\s+(\d+)\/[*](\d+)*\s+/ ([*] for a
 * star that would end this comment).  The comm is the
 * shortest prefix of at least two bytes, starting with a non-space, that
 * the rest matches after.  After the comm, \s+ takes the whole run of
 * whitespace (fewer would leave a space for \d+), \d+ the whole run of
 * digits (a shorter one fails: `(\d+)*` then takes the rest and meets the
 * same byte), then slashes and a second run of digits, and whitespace
 * must follow.  So at a given end of comm the match is decided by one
 * left-to-right scan, and it is the same at every position of one run of
 * whitespace: only the first of a run is tried (or position 2, the first
 * allowed).  @tid gets length 0 when there is no second number.
 */
static bool match_header(const char *l, size_t n, struct span *comm,
			 struct span *pid, struct span *tid)
{
	size_t e, j, d0, d1, t0;

	if (n == 0 || is_space(l[0]))
		return false;
	for (e = 2; e < n; e++) {
		if (!is_space(l[e]) || (e > 2 && is_space(l[e - 1])))
			continue;
		for (j = e; j < n && is_space(l[j]); j++)
			;
		for (d0 = j; j < n && is_digit(l[j]); j++)
			;
		if (j == d0)
			continue;
		d1 = j;
		while (j < n && l[j] == '/')
			j++;
		for (t0 = j; j < n && is_digit(l[j]); j++)
			;
		if (j >= n || !is_space(l[j]))
			continue;
		*comm = (struct span){ 0, e };
		*pid = (struct span){ d0, d1 - d0 };
		*tid = (struct span){ t0, j - t0 };
		return true;
	}
	return false;
}

/*
 * The event regex, /:\s*(\d+)*\s+(\S+):\s*$/.  (\S+): followed by only
 * whitespace is the line's last word, which must end in ':' and have a
 * byte before it (the event is the word without its ':'), and \s+ puts
 * whitespace before that word.  Between it and the ':' that starts the
 * match there can only be whitespace and digits, in the shape
 * \s* \d* \s+, so that ':' is the last byte before the word that is
 * neither: the match, if any, is unique.  @period gets length 0 when
 * there are no digits.
 */
static bool match_event(const char *l, size_t n, struct span *event,
			struct span *period)
{
	size_t t = n, s, j, k;

	while (t > 0 && is_space(l[t - 1]))
		t--;
	if (t < 2 || l[t - 1] != ':')
		return false;
	for (s = t; s > 0 && !is_space(l[s - 1]); s--)
		;
	if (s == 0 || t - s < 2)
		return false;
	for (j = s; j > 0 && is_space(l[j - 1]); j--)
		;
	for (k = j; j > 0 && is_digit(l[j - 1]); j--)
		;
	*period = (struct span){ j, k - j };
	while (j > 0 && is_space(l[j - 1]))
		j--;
	if (j == 0 || l[j - 1] != ':')
		return false;
	*event = (struct span){ s, t - 1 - s };
	return true;
}

/*
 * The frame regex, /^\s*(\w+)\s*(.+) \((.*)\)/.  (.*)\) ends at the last
 * ')' of the line, and the greedy (.+) ends at P, the last " (" that
 * leaves room for that ')' after it.  (.+) needs a byte: it starts after
 * the word and the whitespace after it when P allows, else the engine
 * backtracks: fewer spaces (the name is the one space before P), or a
 * shorter word (the name is the word's byte before P).  Worked through
 * in that order here.
 */
static bool match_frame(const char *l, size_t n, struct span *pc,
			struct span *func, struct span *mod)
{
	size_t i0, wend, q, lp, p;
	bool found = false;

	for (i0 = 0; i0 < n && is_space(l[i0]); i0++)
		;
	for (wend = i0; wend < n && is_word(l[wend]); wend++)
		;
	if (wend == i0)
		return false;
	for (lp = n; lp > 0 && l[lp - 1] != ')'; lp--)
		;
	if (lp < 3)
		return false;
	lp--;			/* index of the last ')' */
	for (p = lp - 2;; p--) {
		if (l[p] == ' ' && l[p + 1] == '(') {
			found = true;
			break;
		}
		if (p == 0)
			break;
	}
	if (!found)
		return false;
	for (q = wend; q < n && is_space(l[q]); q++)
		;
	if (p >= q + 1) {
		*pc = (struct span){ i0, wend - i0 };
		*func = (struct span){ q, p - q };
	} else if (p >= wend + 1) {
		*pc = (struct span){ i0, wend - i0 };
		*func = (struct span){ p - 1, 1 };
	} else if (p >= i0 + 2) {
		*pc = (struct span){ i0, p - 1 - i0 };
		*func = (struct span){ p - 1, 1 };
	} else {
		return false;
	}
	*mod = (struct span){ p + 2, lp - (p + 2) };
	return true;
}

/* Keep the first other event seen, for the summary. */
static int note_other_event(struct perfscript *ps, const char *s, size_t n)
{
	ps->st.filtered++;
	if (ps->other.len)
		return 0;
	if (pbuf_set(&ps->other, s, n, ps->o.max_line) < 0)
		return fail(ps, -ENOMEM, "out of memory");
	return 0;
}

static int on_header(struct perfscript *ps, const char *l, size_t n,
		     struct span comm, struct span pid, struct span tid)
{
	struct span ev, per;
	const char *ps_pid = l + pid.off, *ps_tid = l + tid.off;
	size_t pid_len = pid.len, tid_len = tid.len;
	uint64_t period = 1;
	size_t max = ps->o.max_line + 64;
	int err = 0;

	/* Default perf script output has the TID alone: "comm TID ...". */
	if (perl_false(ps_tid, tid_len)) {
		ps_tid = ps_pid;
		tid_len = pid_len;
		ps_pid = "?";
		pid_len = 1;
	}
	if (match_event(l, n, &ev, &per)) {
		/* By default only the first event is kept: adding up cycles
		 * and instructions, say, would mean nothing. */
		if (!ps->have_event) {
			if (pbuf_set(&ps->event, l + ev.off, ev.len,
				     ps->o.max_line) < 0)
				return fail(ps, -ENOMEM, "out of memory");
			ps->have_event = true;
		} else if (ev.len != ps->event.len ||
			   memcmp(l + ev.off, ps->event.p, ev.len) != 0) {
			return note_other_event(ps, l + ev.off, ev.len);
		}
		/* Perl: a period of "" or "0" counts 1; "00" counts 0. */
		if (!perl_false(l + per.off, per.len)) {
			period = 0;
			for (size_t i = 0; i < per.len; i++) {
				unsigned d = (unsigned char)l[per.off + i] - '0';

				if (period > (UINT64_MAX - d) / 10)
					return fail(ps, -ERANGE,
						    "period '%.*s' does not fit 64 bits",
						    (int)(per.len > 40 ? 40 : per.len),
						    l + per.off);
				period = period * 10 + d;
			}
		}
	}
	ps->period = period;

	ps->pname.len = 0;
	err = pbuf_add(&ps->pname, l + comm.off, comm.len, max);
	if (!err && (ps->o.flags & (PERFSCRIPT_PID | PERFSCRIPT_TID))) {
		err = pbuf_add(&ps->pname, "-", 1, max);
		if (!err)
			err = pbuf_add(&ps->pname, ps_pid, pid_len, max);
		if (!err && (ps->o.flags & PERFSCRIPT_TID)) {
			err = pbuf_add(&ps->pname, "/", 1, max);
			if (!err)
				err = pbuf_add(&ps->pname, ps_tid, tid_len, max);
		}
	}
	if (!err)
		err = pbuf_add(&ps->pname, "", 1, max);
	if (err)
		return fail(ps, -ENOMEM, "out of memory");
	ps->pname.len--;
	/* A space would end the stack in the folded line. */
	for (size_t i = 0; i < ps->pname.len; i++)
		if (ps->pname.p[i] == ' ')
			ps->pname.p[i] = '_';
	ps->have_pname = true;
	ps->java = ps->pname.len >= 4 && memcmp(ps->pname.p, "java", 4) == 0;
	return 0;
}

/* Is there "/tmp/perf-<digits>.map" in @s (a JIT symbol file)? */
static bool is_jit_map(const char *s, size_t n)
{
	static const char pre[] = "/tmp/perf-";
	const char *p = s, *end = s + n;

	while ((p = memmem(p, end - p, pre, sizeof(pre) - 1)) != NULL) {
		const char *d = p + sizeof(pre) - 1, *q = d;

		while (q < end && is_digit(*q))
			q++;
		if (q > d && end - q >= 4 && memcmp(q, ".map", 4) == 0)
			return true;
		p++;
	}
	return false;
}

/*
 * stackcollapse-perf.pl's tidy-up of one name in ps->tmp: ';' (the frame
 * separator) becomes ':'; everything from the first '(' on goes, unless
 * the name looks like a Go method ("net/http.(*Client).Do": a ".(" with
 * a ")." after it) or the '(' opens "(anonymous namespace)"; quotes go
 * (JS regexp names); and in a process named java*, "Lpkg/Class;" loses
 * its 'L' (the JVM's type descriptor).
 */
static void tidy_name(struct perfscript *ps)
{
	char *s = ps->tmp.p;
	size_t n = ps->tmp.len, i, o;
	const char *open, *close = NULL, *c;

	for (i = 0; i < n; i++)
		if (s[i] == ';')
			s[i] = ':';
	open = memmem(s, n, ".(", 2);
	for (c = s; open && (c = memmem(c, s + n - c, ").", 2)) != NULL; c++)
		close = c;
	if (!open || !close || close < open + 2) {
		static const char anon[] = "anonymous namespace)";

		for (i = 0; i < n; i++) {
			if (s[i] != '(')
				continue;
			if (n - i - 1 >= sizeof(anon) - 1 &&
			    memcmp(s + i + 1, anon, sizeof(anon) - 1) == 0)
				continue;
			n = i;
			break;
		}
	}
	for (i = o = 0; i < n; i++)
		if (s[i] != '"' && s[i] != '\'')
			s[o++] = s[i];
	n = o;
	if (ps->java && n > 0 && s[0] == 'L' && memchr(s, '/', n)) {
		memmove(s, s + 1, n - 1);
		n--;
	}
	ps->tmp.len = n;
}

/*
 * Append the name of piece @idx of a frame line (the pieces of "a->b" are
 * a and b) to ps->names, NUL-terminated, at slot @slot of offs.
 */
static int add_piece(struct perfscript *ps, const char *l, struct span piece,
		     size_t idx, struct span pc, struct span mod, size_t slot)
{
	const char *m = l + mod.off;
	size_t max = ps->o.max_line + 64;
	int err = 0;

	ps->tmp.len = 0;
	if (piece.len == 9 && memcmp(l + piece.off, "[unknown]", 9) == 0) {
		/* Name an unknown symbol after its DSO, if that is known. */
		const char *base = "unknown";
		size_t blen = 7;

		if (!(mod.len == 9 && memcmp(m, "[unknown]", 9) == 0)) {
			const char *slash = memrchr(m, '/', mod.len);

			base = slash ? slash + 1 : m;
			blen = mod.len - (size_t)(base - m);
		}
		err = pbuf_add(&ps->tmp, "[", 1, max);
		if (!err)
			err = pbuf_add(&ps->tmp, base, blen, max);
		if (!err && (ps->o.flags & PERFSCRIPT_ADDRS)) {
			err = pbuf_add(&ps->tmp, " <", 2, max);
			if (!err)
				err = pbuf_add(&ps->tmp, l + pc.off, pc.len,
					       max);
			if (!err)
				err = pbuf_add(&ps->tmp, ">", 1, max);
		}
		if (!err)
			err = pbuf_add(&ps->tmp, "]", 1, max);
	} else {
		err = pbuf_add(&ps->tmp, l + piece.off, piece.len, max);
	}
	if (err)
		return fail(ps, -ENOMEM, "out of memory");
	tidy_name(ps);

	/* Annotations, for FlameGraph's colours: the inlined pieces of a
	 * line (all but its first), kernel frames, JIT frames. */
	if (idx > 0) {
		if (!has(ps->tmp.p, ps->tmp.len, "_[i]"))
			err = pbuf_add(&ps->tmp, "_[i]", 4, max);
	} else if ((ps->o.flags & PERFSCRIPT_KERNEL) && mod.len &&
		   (m[0] == '[' ||
		    (mod.len >= 7 && memcmp(m + mod.len - 7, "vmlinux", 7) == 0)) &&
		   !has(m, mod.len, "unknown")) {
		err = pbuf_add(&ps->tmp, "_[k]", 4, max);
	} else if ((ps->o.flags & PERFSCRIPT_JIT) && is_jit_map(m, mod.len) &&
		   !has(ps->tmp.p, ps->tmp.len, "_[j]")) {
		err = pbuf_add(&ps->tmp, "_[j]", 4, max);
	}
	if (err)
		return fail(ps, -ENOMEM, "out of memory");

	ps->offs[slot] = ps->names.len;
	err = pbuf_add(&ps->names, ps->tmp.p, ps->tmp.len, ps->o.max_stack);
	if (!err)
		err = pbuf_add(&ps->names, "", 1, ps->o.max_stack);
	return err ? fail_stack(ps, err) : 0;
}

static int on_frame(struct perfscript *ps, const char *l, struct span pc,
		    struct span func, struct span mod)
{
	const char *f = l + func.off, *sep;
	size_t flen = func.len, k, idx, slot, start;
	int err;

	if (!ps->have_pname)	/* before any header, or a filtered one */
		return 0;

	/* Linux 4.8+ prints symbol offsets ("read+0x10"): cut them. */
	k = flen;
	while (k > 0 && (is_digit(f[k - 1]) || (f[k - 1] >= 'a' && f[k - 1] <= 'f')))
		k--;
	if (k < flen && k >= 3 && memcmp(f + k - 3, "+0x", 3) == 0)
		flen = k - 3;
	if (flen > 0 && f[0] == '(')	/* a process name, not a frame */
		return 0;

	/* Perl's split /->/: empty fields at the end are dropped. */
	while (flen >= 2 && f[flen - 2] == '-' && f[flen - 1] == '>')
		flen -= 2;
	if (flen == 0)
		return 0;
	k = 1;
	for (sep = f; (sep = memmem(sep, f + flen - sep, "->", 2)) != NULL;
	     sep += 2)
		k++;

	if (k > ps->o.max_depth || ps->nframes + 1 > ps->o.max_depth - k)
		return fail(ps, -E2BIG, "stack deeper than %zu frames",
			    ps->o.max_depth);
	if (tool_grow(&ps->offs, &ps->offs_cap, ps->nframes + k,
		      sizeof(*ps->offs), 64))
		return fail(ps, -ENOMEM, "out of memory");

	/* Frames are kept leaf first; the pieces of one line root first,
	 * so piece idx goes to slot nframes + k - 1 - idx. */
	start = 0;
	for (idx = 0; idx < k; idx++) {
		const char *e = memmem(f + start, flen - start, "->", 2);
		size_t end = e ? (size_t)(e - f) : flen;
		struct span piece = { func.off + start, end - start };

		slot = ps->nframes + k - 1 - idx;
		err = add_piece(ps, l, piece, idx, pc, mod, slot);
		if (err)
			return err;
		start = end + 2;
	}
	ps->nframes += k;
	return 0;
}

/* A blank line: hand over the sample, if a header started one. */
static int end_sample(struct perfscript *ps)
{
	size_t i, n;
	int rc;

	if (!ps->have_pname)
		return 0;
	n = ps->nframes + 1;
	if (tool_grow(&ps->ptrs, &ps->ptrs_cap, n, sizeof(*ps->ptrs), 64))
		return fail(ps, -ENOMEM, "out of memory");
	ps->ptrs[0] = ps->pname.p;
	for (i = 0; i < ps->nframes; i++)
		ps->ptrs[1 + i] = ps->names.p + ps->offs[ps->nframes - 1 - i];
	rc = ps->fn(ps->ctx, ps->ptrs, n, ps->period);
	if (rc)
		return fail(ps, rc, "stopped by the caller (code %d)", rc);
	ps->st.samples++;
	ps->st.total = ps->st.total > UINT64_MAX - ps->period ?
			       UINT64_MAX : ps->st.total + ps->period;
	ps->nframes = 0;
	ps->names.len = 0;
	ps->have_pname = false;
	return 0;
}

static int do_line(struct perfscript *ps, const char *l, size_t n)
{
	struct span a, b, c;

	ps->st.lines++;
	if (memchr(l, '\0', n))
		return fail(ps, -EINVAL, "NUL byte: this is not perf script "
					 "text");
	if (n > 0 && l[0] == '#')
		return 0;
	if (n > 0 && l[n - 1] == '\r')
		n--;
	if (n == 0)
		return end_sample(ps);
	if (match_header(l, n, &a, &b, &c))
		return on_header(ps, l, n, a, b, c);
	if (match_frame(l, n, &a, &b, &c))
		return on_frame(ps, l, a, b, c);
	ps->st.unrecognized++;
	if (ps->o.warn)
		ps->o.warn(ps->ctx, ps->st.lines, l, n);
	return 0;
}

int perfscript_new(const struct perfscript_opts *opts,
		   perfscript_sample_fn fn, void *ctx, struct perfscript **out)
{
	struct perfscript *ps;

	if (!fn || !out || (opts && opts->event && !opts->event[0]))
		return -EINVAL;
	*out = NULL;
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return -ENOMEM;
	if (opts)
		ps->o = *opts;
	if (!ps->o.max_line)
		ps->o.max_line = PERFSCRIPT_LINE_MAX;
	if (!ps->o.max_depth)
		ps->o.max_depth = PERFSCRIPT_DEPTH_MAX;
	if (!ps->o.max_stack)
		ps->o.max_stack = PERFSCRIPT_STACK_MAX;
	ps->fn = fn;
	ps->ctx = ctx;
	if (ps->o.event) {
		size_t n = strlen(ps->o.event);

		if (pbuf_set(&ps->event, ps->o.event, n, n + 1) < 0) {
			free(ps);
			return -ENOMEM;
		}
		ps->have_event = true;
		ps->o.event = NULL;	/* not kept: the caller's */
	}
	*out = ps;
	return 0;
}

int perfscript_feed(struct perfscript *ps, const char *buf, size_t len)
{
	const char *nl;
	size_t seg;
	int err;

	if (ps->err)
		return ps->err;
	while (len > 0) {
		nl = memchr(buf, '\n', len);
		seg = nl ? (size_t)(nl - buf) : len;
		if (ps->part.len + seg > ps->o.max_line) {
			ps->st.lines++;
			return fail(ps, -E2BIG, "longer than %zu bytes",
				    ps->o.max_line);
		}
		if (!nl) {
			if (pbuf_add(&ps->part, buf, seg, ps->o.max_line) < 0)
				return fail(ps, -ENOMEM, "out of memory");
			return 0;
		}
		if (ps->part.len) {
			if (pbuf_add(&ps->part, buf, seg, ps->o.max_line) < 0)
				return fail(ps, -ENOMEM, "out of memory");
			err = do_line(ps, ps->part.p, ps->part.len);
			ps->part.len = 0;
		} else {
			err = do_line(ps, buf, seg);
		}
		if (err)
			return err;
		buf = nl + 1;
		len -= seg + 1;
	}
	return 0;
}

int perfscript_finish(struct perfscript *ps)
{
	int err;

	if (ps->err)
		return ps->err;
	if (ps->part.len) {
		err = do_line(ps, ps->part.p, ps->part.len);
		ps->part.len = 0;
		if (err)
			return err;
	}
	/* Only a blank line ends a sample (see the top of the file). */
	if (ps->have_pname) {
		ps->st.unterminated = 1;
		ps->have_pname = false;
		ps->nframes = 0;
		ps->names.len = 0;
	}
	return 0;
}

const char *perfscript_errmsg(const struct perfscript *ps)
{
	return ps->err ? ps->msg : "";
}

void perfscript_stats(const struct perfscript *ps, struct perfscript_stats *st)
{
	*st = ps->st;
	st->event = ps->have_event ? ps->event.p : "";
	st->other_event = ps->other.len ? ps->other.p : "";
}

void perfscript_free(struct perfscript *ps)
{
	if (!ps)
		return;
	pbuf_release(&ps->part);
	pbuf_release(&ps->event);
	pbuf_release(&ps->other);
	pbuf_release(&ps->pname);
	pbuf_release(&ps->names);
	pbuf_release(&ps->tmp);
	free(ps->offs);
	free(ps->ptrs);
	free(ps);
}
