/*
 * client.c - the HTTP client of `sym upload` and `sym lookup --server`,
 * on libcurl (see client.h), and a small reader for symd's JSON replies.
 *
 * The reader knows only what the client needs: the members of an object,
 * strings (decoded in place inside the reply buffer, escapes and
 * surrogate pairs included), non-negative integers, booleans and null.
 * Anything else is skipped after a syntax check.  A symbolize reply is
 * read in two passes: the first finds the module's status and checks
 * that "frames" is a well-formed array with one entry per address; only
 * when the status is "ok" does the second build the frames and hand them
 * out.  Members may come in any order.
 */
/* The calls go through the pointers of load_curl(): no type-checking
 * macros over the real names. */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "client.h"
#include "base.h"

/*
 * libcurl is opened on first use (dlopen), not linked: linked, it and the
 * ~30 libraries it pulls in (TLS, Kerberos, LDAP, ...) cost every sym
 * process ~15 ms of start-up, which is most of the time of a warm
 * `sym lookup` from the store.  Only `sym upload` and `--server` need it.
 */
static struct {
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	void (*easy_cleanup)(CURL *);
	void (*easy_reset)(CURL *);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
} cu;

#define curl_global_init (*cu.global_init)
#define curl_easy_init (*cu.easy_init)
#define curl_easy_cleanup (*cu.easy_cleanup)
#define curl_easy_reset (*cu.easy_reset)
#define curl_easy_perform (*cu.easy_perform)
#undef curl_easy_setopt	/* curl.h's pass-through macros */
#undef curl_easy_getinfo
#define curl_easy_setopt (*cu.easy_setopt)
#define curl_easy_getinfo (*cu.easy_getinfo)
#define curl_easy_strerror (*cu.easy_strerror)
#define curl_slist_append (*cu.slist_append)
#define curl_slist_free_all (*cu.slist_free_all)

/* 0, or -ENOENT with a message on stderr. */
static int load_curl(void)
{
	static const char *const names[] = {
		"curl_global_init", "curl_easy_init", "curl_easy_cleanup",
		"curl_easy_reset", "curl_easy_perform", "curl_easy_setopt",
		"curl_easy_getinfo", "curl_easy_strerror", "curl_slist_append",
		"curl_slist_free_all",
	};
	void **slot = (void **)&cu;
	void *h;

	_Static_assert(sizeof(cu) == sizeof(names) / sizeof(names[0]) *
		       sizeof(void *), "one name per pointer");
	if (cu.global_init)
		return 0;
	h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "sym: cannot load libcurl (%s); install the "
			"libcurl4 package\n", dlerror());
		return -ENOENT;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		slot[i] = dlsym(h, names[i]);
		if (!slot[i]) {
			fprintf(stderr, "sym: libcurl has no %s\n", names[i]);
			memset(&cu, 0, sizeof(cu));
			return -ENOENT;
		}
	}
	return 0;
}

/* The largest reply read; symd's own response limit is 1 GiB. */
#define REPLY_MAX ((size_t)1 << 30)

/* How deep skip() follows nested arrays and objects. */
#define DEPTH_MAX 64

struct client {
	CURL *curl;
	char *base;			/* the URL without trailing '/' */
	const char *server;		/* as given */
	char *auth;			/* "Authorization: Bearer ..."; NULL */
	unsigned stall_s;
	char errbuf[CURL_ERROR_SIZE];
	char quality[16];		/* X-Sym-Quality of the reply; "" */
	char source[16];		/* the last ok module's "source"; "" */
	bool partial_ok;		/* client_accept_partial() */
	bool partial;			/* the last answer was "partial" */

	/* The reply body of the current request, capped at REPLY_MAX. */
	struct symi_buf body;
	bool too_big;

	/* The upload of the current request. */
	FILE *in;
	const char *in_name;
	int in_errno;
	uint64_t in_size;
	client_progress_fn progress;
	void *pctx;

	struct sym_frame frames[SYM_MAX_FRAMES];
};

/* ------------------------------------------------------------ JSON */

/* A cursor over a reply.  Once @bad is set, every step fails. */
struct jr {
	char *p, *end;
	bool bad;
};

static bool fail(struct jr *j)
{
	j->bad = true;
	return false;
}

static void ws(struct jr *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' ||
				 *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

/* Take @ch after blanks, if it is there. */
static bool eat(struct jr *j, char ch)
{
	ws(j);
	if (j->bad || j->p == j->end || *j->p != ch)
		return false;
	j->p++;
	return true;
}

/* Take the literal @lit after blanks, if it is there. */
static bool eat_lit(struct jr *j, const char *lit)
{
	size_t n = strlen(lit);

	ws(j);
	if (j->bad || (size_t)(j->end - j->p) < n || memcmp(j->p, lit, n))
		return false;
	j->p += n;
	return true;
}

/*
 * more() - step through an array or object after its '[' or '{': true
 * when another element follows (its ',' taken), false at @close (taken)
 * or on a syntax error (j->bad).  @i counts the elements; start it at 0.
 */
static bool more(struct jr *j, char close, size_t *i)
{
	if (eat(j, close))
		return false;
	if (*i && !eat(j, ','))
		return fail(j);
	(*i)++;
	return !j->bad;
}

static bool hex4(struct jr *j, uint32_t *out)
{
	uint32_t v = 0;

	if (j->end - j->p < 4)
		return false;
	for (int k = 0; k < 4; k++) {
		char ch = *j->p++;

		v <<= 4;
		if (ch >= '0' && ch <= '9')
			v |= (uint32_t)(ch - '0');
		else if ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f')
			v |= (uint32_t)((ch | 0x20) - 'a' + 10);
		else
			return false;
	}
	*out = v;
	return true;
}

static char *put_utf8(char *w, uint32_t cp)
{
	if (cp < 0x80) {
		*w++ = (char)cp;
	} else if (cp < 0x800) {
		*w++ = (char)(0xc0 | cp >> 6);
		*w++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*w++ = (char)(0xe0 | cp >> 12);
		*w++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*w++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*w++ = (char)(0xf0 | cp >> 18);
		*w++ = (char)(0x80 | ((cp >> 12) & 0x3f));
		*w++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*w++ = (char)(0x80 | (cp & 0x3f));
	}
	return w;
}

/* The code point of a \u escape whose 4 digits are next, with the low
 * half of a surrogate pair when one follows.  A lone surrogate and U+0000
 * (which would end the C string) become U+FFFD. */
static bool unicode(struct jr *j, uint32_t *cp)
{
	uint32_t lo;
	char *save;

	if (!hex4(j, cp))
		return false;
	if (*cp >= 0xd800 && *cp < 0xdc00 && j->end - j->p >= 6 &&
	    j->p[0] == '\\' && j->p[1] == 'u') {
		save = j->p;
		j->p += 2;
		if (hex4(j, &lo) && lo >= 0xdc00 && lo < 0xe000) {
			*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
			return true;
		}
		j->p = save;
	}
	if ((*cp >= 0xd800 && *cp < 0xe000) || *cp == 0)
		*cp = 0xfffd;
	return true;
}

/*
 * str() - the string next, decoded in place: every escape is at least as
 * long as what it stands for, so the text only moves left, and the NUL
 * lands at or before the closing quote.
 * @return the NUL-terminated string inside the reply, or NULL (j->bad)
 */
static char *str(struct jr *j)
{
	char *s, *w;
	uint32_t cp;

	if (!eat(j, '"')) {
		fail(j);
		return NULL;
	}
	s = w = j->p;
	while (j->p < j->end) {
		char ch = *j->p++;

		if (ch == '"') {
			*w = '\0';
			return s;
		}
		if (ch != '\\') {
			*w++ = ch;
			continue;
		}
		if (j->p == j->end)
			break;
		switch ((ch = *j->p++)) {
		case '"':
		case '\\':
		case '/':
			*w++ = ch;
			break;
		case 'b':
			*w++ = '\b';
			break;
		case 'f':
			*w++ = '\f';
			break;
		case 'n':
			*w++ = '\n';
			break;
		case 'r':
			*w++ = '\r';
			break;
		case 't':
			*w++ = '\t';
			break;
		case 'u':
			if (!unicode(j, &cp))
				goto bad;
			w = put_utf8(w, cp);
			break;
		default:
			goto bad;
		}
	}
bad:
	fail(j);
	return NULL;
}

/* A member's name and its ':'. */
static char *key(struct jr *j)
{
	char *k = str(j);

	if (k && !eat(j, ':')) {
		fail(j);
		return NULL;
	}
	return k;
}

/* In an object after its '{': the next member's name, or NULL at the
 * '}' (taken) or on an error (j->bad).  @i counts; start it at 0. */
static char *next_key(struct jr *j, size_t *i)
{
	return more(j, '}', i) ? key(j) : NULL;
}

/* A non-negative JSON integer that fits in 64 bits. */
static bool u64(struct jr *j, uint64_t *out)
{
	uint64_t v = 0;
	bool any = false;

	ws(j);
	while (j->p < j->end && *j->p >= '0' && *j->p <= '9') {
		unsigned d = (unsigned)(*j->p++ - '0');

		if (v > (UINT64_MAX - d) / 10)
			return fail(j);
		v = v * 10 + d;
		any = true;
	}
	if (!any || (j->p < j->end && (*j->p == '.' || *j->p == 'e' ||
				       *j->p == 'E')))
		return fail(j);
	*out = v;
	return true;
}

static bool u32(struct jr *j, uint32_t *out)
{
	uint64_t v;

	if (!u64(j, &v) || v > UINT32_MAX)
		return fail(j);
	*out = (uint32_t)v;
	return true;
}

static bool boolean(struct jr *j, bool *out)
{
	if (eat_lit(j, "true"))
		*out = true;
	else if (eat_lit(j, "false"))
		*out = false;
	else
		return fail(j);
	return true;
}

/* skip() - step over any value, checking its syntax but not its text. */
static bool skip(struct jr *j, int depth)
{
	char close;
	size_t i = 0;

	ws(j);
	if (j->bad || j->p == j->end || depth > DEPTH_MAX)
		return fail(j);
	switch (*j->p) {
	case '"':
		for (j->p++; j->p < j->end && *j->p != '"'; j->p++)
			if (*j->p == '\\' && j->end - j->p > 1)
				j->p++;
		if (j->p == j->end)
			return fail(j);
		j->p++;
		return true;
	case '[':
	case '{':
		close = *j->p == '[' ? ']' : '}';
		j->p++;
		while (more(j, close, &i)) {
			/* A member: its name must be a string. */
			if (close == '}') {
				ws(j);
				if (j->p == j->end || *j->p != '"' ||
				    !skip(j, depth + 1) || !eat(j, ':'))
					return fail(j);
			}
			if (!skip(j, depth + 1))
				return false;
		}
		return !j->bad;
	default:
		/* true, false, null or a number. */
		if (!*j->p || !strchr("tfn-0123456789", *j->p))
			return fail(j);
		while (j->p < j->end && *j->p &&
		       strchr("truefalsn0123456789+-.eE", *j->p))
			j->p++;
		return true;
	}
}

/* Move to the value of member @name of the object next; false if none. */
static bool member(struct jr *j, const char *name)
{
	size_t i = 0;
	char *k;

	if (!eat(j, '{'))
		return fail(j);
	while ((k = next_key(j, &i)))
		if (strcmp(k, name) == 0 || !skip(j, 0))
			return !j->bad;
	return false;
}

/* Step over the array next, counting its elements. */
static size_t count(struct jr *j)
{
	size_t i = 0;

	if (!eat(j, '['))
		fail(j);
	while (more(j, ']', &i))
		skip(j, 1);
	return i;
}

/* A string member that may be null; "" is unknown too (NULL). */
static const char *opt_str(struct jr *j)
{
	const char *s;

	if (eat_lit(j, "null"))
		return NULL;
	s = str(j);
	return s && *s ? s : NULL;
}

/* *@s becomes @t when they are equal strings. */
static void same_str(const char **s, const char *t)
{
	if (*s && t && strcmp(*s, t) == 0)
		*s = t;
}

/* A string member into *@s; false on a syntax error. */
static bool opt_str_to(struct jr *j, const char **s)
{
	*s = opt_str(j);
	return !j->bad;
}

/*
 * read_peers() - @k, if it is one of the members that carry the peers'
 * names (docs/http-api.md, "The peers' names"), into @f.
 * @return false when @k is none of them (nothing read)
 */
static bool read_peers(struct jr *j, const char *k, struct sym_frame *f)
{
	uint64_t v = 0;

	if (strcmp(k, "flags") == 0 && u64(j, &v))
		f->flags |= (uint32_t)v & ~(uint32_t)SYM_FRAME_INLINED;
	else if (strcmp(k, "entry") == 0)
		u64(j, &f->entry);
	else if (strcmp(k, "name") == 0 || strcmp(k, "dwarf_name") == 0)
		opt_str_to(j, &f->name);	/* DW_AT_name, read_frame() */
	else if (strcmp(k, "symbol") == 0)
		opt_str_to(j, &f->symbol);
	else if (strcmp(k, "symbol_file") == 0)
		opt_str_to(j, &f->file);	/* with SYM_FRAME_FILE_SYMTAB */
	else if (strcmp(k, "symbol_addr") == 0)
		u64(j, &f->symbol_addr);
	else if (strcmp(k, "symbol_size") == 0)
		u64(j, &f->symbol_size);
	else if (strcmp(k, "gnu_symbol") == 0)
		opt_str_to(j, &f->gnu_symbol);
	else if (strcmp(k, "gnu_symbol_addr") == 0)
		u64(j, &f->gnu_symbol_addr);
	else if (strcmp(k, "llvm_symbol") == 0)
		opt_str_to(j, &f->llvm_symbol);
	else if (strcmp(k, "llvm_symbol_addr") == 0)
		u64(j, &f->llvm_symbol_addr);
	else if (strcmp(k, "llvm_symbol_file") == 0)
		opt_str_to(j, &f->llvm_symbol_file);
	else
		return false;
	return true;
}

/*
 * read_frame() - one frame object of the API into @f, with the peers'
 * names (read_peers()), so that every output style prints what it prints
 * from a local table.  decl_file and decl_line are not carried (the JSON
 * style's StartFileName and StartLine); "discriminator" is read when a
 * server sends it.
 */
static bool read_frame(struct jr *j, uint64_t addr, struct sym_frame *f)
{
	const char *fn = NULL;
	size_t i = 0;
	uint64_t off;
	bool inl;
	char *k;

	memset(f, 0, sizeof(*f));
	if (!eat(j, '{'))
		return fail(j);
	while ((k = next_key(j, &i))) {
		if (eat_lit(j, "null"))
			continue;	/* unknown, as when left out */
		if (strcmp(k, "function") == 0) {
			fn = opt_str(j);
			/* The API's word for an unknown name. */
			if (fn && strcmp(fn, "??") == 0)
				fn = NULL;
		} else if (strcmp(k, "linkage_name") == 0) {
			f->linkage_name = opt_str(j);
		} else if (strcmp(k, "file") == 0) {
			f->file = opt_str(j);
		} else if (strcmp(k, "line") == 0) {
			u32(j, &f->line);
		} else if (strcmp(k, "column") == 0) {
			u32(j, &f->column);
		} else if (strcmp(k, "discriminator") == 0) {
			u32(j, &f->discriminator);
		} else if (strcmp(k, "inlined") == 0) {
			if (boolean(j, &inl) && inl)
				f->flags |= SYM_FRAME_INLINED;
		} else if (strcmp(k, "offset") == 0) {
			if (u64(j, &off) && off <= addr)
				f->entry = addr - off;
		} else if (!read_peers(j, k, f)) {
			skip(j, 0);
		}
	}
	/* "function" is DW_AT_name unless "name" or "dwarf_name" said
	 * otherwise, and the demangled linkage name where it differs. */
	if (!f->name)
		f->name = fn;
	if (fn && f->linkage_name && strcmp(fn, f->linkage_name) != 0)
		f->demangled = fn;
	/* The outputs know a symbol to be the linkage name (and its
	 * demangled form) by its address, as a local table lends them. */
	same_str(&f->symbol, f->linkage_name);
	same_str(&f->gnu_symbol, f->linkage_name);
	same_str(&f->llvm_symbol, f->linkage_name);
	return !j->bad;
}

/*
 * read_answers() - the second pass over "frames" (at @j): one call of
 * @fn per address.  The first pass checked the syntax and the count.
 */
static int read_answers(struct sym_frame *frames, struct jr *j,
			const uint64_t *addrs, size_t n, sym_frames_fn fn,
			void *ctx)
{
	size_t i = 0, k, nf;
	int rc;

	if (!eat(j, '['))
		return -EPROTO;
	while (more(j, ']', &i) && i <= n) {
		if (!eat(j, '['))
			return -EPROTO;
		k = 0;
		nf = 0;
		while (more(j, ']', &k)) {
			/* A deeper chain than libsym returns: cut it. */
			if (nf == SYM_MAX_FRAMES)
				skip(j, 0);
			else if (read_frame(j, addrs[i - 1], &frames[nf]))
				nf++;
		}
		if (j->bad)
			return -EPROTO;
		rc = fn(ctx, i - 1, frames, nf);
		if (rc)
			return rc;
	}
	return j->bad ? -EPROTO : 0;
}

/* --------------------------------------------------------------- HTTP */

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
	struct client *c = ud;
	size_t n = size * nmemb;

	int err = symi_buf_add(&c->body, data, n);

	if (err == -E2BIG)
		c->too_big = true;
	return err ? 0 : n;
}

/* The upload streams from the file, a buffer at a time. */
static size_t on_read(char *buf, size_t size, size_t nitems, void *ud)
{
	struct client *c = ud;
	size_t got = fread(buf, 1, size * nitems, c->in);

	if (got == 0 && ferror(c->in)) {
		c->in_errno = errno ? errno : EIO;
		return CURL_READFUNC_ABORT;
	}
	return got;
}

static int on_xfer(void *ud, curl_off_t dltotal, curl_off_t dlnow,
		   curl_off_t ultotal, curl_off_t ulnow)
{
	struct client *c = ud;

	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	c->progress(c->pctx, ulnow > 0 ? (uint64_t)ulnow : 0, c->in_size);
	return 0;
}

int client_new(const char *server, unsigned stall_s, struct client **out)
{
	static bool global;
	struct client *c;
	size_t n = strlen(server), skip_scheme;

	*out = NULL;
	if (strncasecmp(server, "http://", 7) == 0)
		skip_scheme = 7;
	else if (strncasecmp(server, "https://", 8) == 0)
		skip_scheme = 8;
	else
		return -EINVAL;
	while (n > skip_scheme && server[n - 1] == '/')
		n--;
	if (n == skip_scheme || strpbrk(server, " \t\r\n"))
		return -EINVAL;
	if (load_curl() != 0)
		return -ENOENT;
	if (!global) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return -ENOMEM;
		global = true;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->server = server;
	symi_buf_init(&c->body, REPLY_MAX);
	c->stall_s = stall_s ? stall_s : CLIENT_STALL_TIMEOUT;
	c->base = strndup(server, n);
	c->curl = curl_easy_init();
	if (!c->base || !c->curl) {
		client_free(c);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

void client_free(struct client *c)
{
	if (!c)
		return;
	if (c->curl)
		curl_easy_cleanup(c->curl);
	free(c->base);
	free(c->auth);
	symi_buf_release(&c->body);
	free(c);
}

const char *client_env_server(const char *flag, const char *exclusive)
{
	const char *env = getenv("SYM_SERVER");

	if (flag || exclusive)
		return flag;
	return env && *env ? env : NULL;
}

/* The first line of @path, trimmed, into @buf; 0 or -EINVAL after a
 * message naming it as @what. */
static int token_from_file(const char *path, const char *what, char *buf,
			   size_t len)
{
	FILE *f = fopen(path, "re");
	char *tok;

	if (!f) {
		tool_err("cannot read the token file '%s'%s: %s", path, what,
			 strerror(errno));
		return -EINVAL;
	}
	if (!fgets(buf, (int)len, f))
		buf[0] = '\0';
	fclose(f);
	tok = tool_trim(buf);
	if (!*tok) {
		tool_err("the token file '%s'%s is empty", path, what);
		return -EINVAL;
	}
	memmove(buf, tok, strlen(tok) + 1);
	return 0;
}

int client_read_token(const char *token_file, char *buf, size_t len,
		      const char **from)
{
	const char *file = getenv("SYM_TOKEN_FILE");
	const char *tok = getenv("SYM_TOKEN");
	char *t;

	if (token_file) {
		*from = token_file;
		return token_from_file(token_file, "", buf, len);
	}
	if (file && *file) {
		*from = file;
		return token_from_file(file, " ($SYM_TOKEN_FILE)", buf, len);
	}
	if (!tok)
		return -ENOENT;
	*from = "$SYM_TOKEN";
	if ((size_t)snprintf(buf, len, "%s", tok) >= len) {
		tool_err("$SYM_TOKEN is longer than %zu bytes", len - 1);
		return -EINVAL;
	}
	t = tool_trim(buf);
	if (!*t) {
		tool_err("$SYM_TOKEN is empty");
		return -EINVAL;
	}
	memmove(buf, t, strlen(t) + 1);
	return 0;
}

const char *client_server(const struct client *c)
{
	return c->server;
}

int client_set_token(struct client *c, const char *token)
{
	static const char pre[] = "Authorization: Bearer ";
	size_t n = strlen(token);
	char *h;

	/* RFC 6750's token68 is narrower; anything visible is let through
	 * for the server to judge, but nothing that could end the header. */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)token[i] <= 0x20 ||
		    (unsigned char)token[i] >= 0x7f)
			return -EINVAL;
	if (n == 0)
		return -EINVAL;
	h = malloc(sizeof(pre) + n);
	if (!h)
		return -ENOMEM;
	memcpy(h, pre, sizeof(pre) - 1);
	memcpy(h + sizeof(pre) - 1, token, n + 1);
	free(c->auth);
	c->auth = h;
	return 0;
}

/*
 * start() - set the handle up for a request to @path (which starts with
 * '/'): timeouts, the reply buffer, http(s) only.  The connection of the
 * last request is kept for this one.
 * @param stall_s  seconds without a byte moving before giving up
 */
/* A header line of the reply: symd's X-Sym-Quality is kept. */
static size_t on_header(char *buf, size_t size, size_t n, void *ctx)
{
	static const char name[] = "x-sym-quality:";
	struct client *c = ctx;
	size_t len = size * n, i = sizeof(name) - 1, k = 0;

	if (len < i || strncasecmp(buf, name, i) != 0)
		return len;
	while (i < len && buf[i] == ' ')
		i++;
	while (i < len && k + 1 < sizeof(c->quality) &&
	       buf[i] >= 'a' && buf[i] <= 'z')
		c->quality[k++] = buf[i++];
	c->quality[k] = '\0';
	return len;
}

static int start(struct client *c, const char *path, unsigned stall_s)
{
	size_t n = strlen(c->base) + strlen(path) + 1;
	char *url = malloc(n);
	CURL *h = c->curl;

	if (!url)
		return -ENOMEM;
	snprintf(url, n, "%s%s", c->base, path);
	curl_easy_reset(h);
	symi_buf_reset(&c->body);
	c->too_big = false;
	c->errbuf[0] = '\0';
	c->in = NULL;
	c->in_errno = 0;
	curl_easy_setopt(h, CURLOPT_URL, url);
	free(url);			/* libcurl keeps a copy */
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, (long)CLIENT_CONNECT_TIMEOUT);
	/* Less than 1 byte/s for stall_s seconds: the server is gone. */
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (long)stall_s);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "sym/" SYM_VERSION);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, c);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, c);
	c->quality[0] = '\0';
	return 0;
}

/*
 * perform() - run the request set up by start() with the headers @hdrs
 * (freed here) and fill @r.  The "error" of a non-2xx reply goes into
 * r->msg; a 2xx reply is left unread for the caller, since reading
 * decodes strings in place and a reply can be read only once.
 * @return 0 when an answer came, -EIO when none did (r->msg says why)
 */
static int perform(struct client *c, struct curl_slist *hdrs,
		   struct client_result *r)
{
	curl_off_t connected = 0;
	const char *why, *err;
	CURLcode rc;
	struct jr j;

	memset(r, 0, sizeof(*r));
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, hdrs);
	rc = curl_easy_perform(c->curl);
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hdrs);
	if (rc != CURLE_OK) {
		curl_easy_getinfo(c->curl, CURLINFO_CONNECT_TIME_T, &connected);
		why = c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc);
		r->unreachable = rc == CURLE_COULDNT_CONNECT ||
				 rc == CURLE_COULDNT_RESOLVE_HOST ||
				 rc == CURLE_COULDNT_RESOLVE_PROXY ||
				 (rc == CURLE_OPERATION_TIMEDOUT && !connected);
		if (c->in_errno)
			snprintf(r->msg, sizeof(r->msg), "reading '%s': %s",
				 c->in_name, strerror(c->in_errno));
		else if (c->too_big)
			snprintf(r->msg, sizeof(r->msg), "the server's reply "
				 "is larger than 1 GiB");
		else if (r->unreachable)
			snprintf(r->msg, sizeof(r->msg), "cannot reach the "
				 "server '%s': %s", c->server, why);
		else if (rc == CURLE_OPERATION_TIMEDOUT)
			snprintf(r->msg, sizeof(r->msg), "the server '%s' "
				 "stopped answering (%s)", c->server, why);
		else
			snprintf(r->msg, sizeof(r->msg), "server '%s': %s",
				 c->server, why);
		return -EIO;
	}
	curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &r->status);
	memcpy(r->quality, c->quality, sizeof(r->quality));
	j = (struct jr){ .p = c->body.p, .end = c->body.p + c->body.len };
	if (r->status >= 200 && r->status < 300)
		return 0;
	/* Every error of the API is {"error": "..."}; a proxy's is not. */
	err = member(&j, "error") ? str(&j) : NULL;
	if (err && *err)
		snprintf(r->msg, sizeof(r->msg), "%s (HTTP %ld)", err,
			 r->status);
	else
		snprintf(r->msg, sizeof(r->msg), "HTTP %ld", r->status);
	return 0;
}

int client_head(struct client *c, const char *path, struct client_result *r)
{
	int err = start(c, path, c->stall_s);

	if (err) {
		memset(r, 0, sizeof(*r));
		snprintf(r->msg, sizeof(r->msg), "out of memory");
		return err;
	}
	curl_easy_setopt(c->curl, CURLOPT_NOBODY, 1L);
	return perform(c, NULL, r);
}

int client_put_file(struct client *c, const char *path, FILE *f,
		    const char *name, uint64_t size,
		    client_progress_fn progress, void *ctx,
		    struct client_result *r)
{
	struct curl_slist *h = NULL, *t;
	int err = start(c, path, c->stall_s);

	memset(r, 0, sizeof(*r));
	if (!err && c->auth) {
		t = curl_slist_append(h, c->auth);
		err = t ? 0 : -ENOMEM;
		h = t ? t : h;
	}
	if (!err) {
		t = curl_slist_append(h, "Content-Type: application/octet-stream");
		err = t ? 0 : -ENOMEM;
		h = t ? t : h;
	}
	if (err) {
		curl_slist_free_all(h);
		snprintf(r->msg, sizeof(r->msg), "out of memory");
		return err;
	}
	c->in = f;
	c->in_name = name;
	c->in_size = size;
	c->progress = progress;
	c->pctx = ctx;
	curl_easy_setopt(c->curl, CURLOPT_UPLOAD, 1L);
	curl_easy_setopt(c->curl, CURLOPT_READFUNCTION, on_read);
	curl_easy_setopt(c->curl, CURLOPT_READDATA, c);
	curl_easy_setopt(c->curl, CURLOPT_INFILESIZE_LARGE, (curl_off_t)size);
	if (progress) {
		curl_easy_setopt(c->curl, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(c->curl, CURLOPT_XFERINFOFUNCTION, on_xfer);
		curl_easy_setopt(c->curl, CURLOPT_XFERINFODATA, c);
	}
	err = perform(c, h, r);
	c->in = NULL;
	if (!err && r->status >= 200 && r->status < 300) {
		struct jr j = { .p = c->body.p,
				.end = c->body.p + c->body.len };

		if (member(&j, "bytes"))
			u64(&j, &r->bytes);
	}
	return err;
}

/* {"addresses":["0x...",...],"wait_ms":N} */
static char *symbolize_body(const uint64_t *addrs, size_t n, unsigned wait_ms,
			    size_t *len)
{
	size_t cap = 64 + n * 22, pos;
	char *b = malloc(cap);

	if (!b)
		return NULL;
	pos = (size_t)snprintf(b, cap, "{\"addresses\":[");
	for (size_t i = 0; i < n; i++)
		pos += (size_t)snprintf(b + pos, cap - pos, "%s\"0x%" PRIx64
					"\"", i ? "," : "", addrs[i]);
	pos += (size_t)snprintf(b + pos, cap - pos, "],\"wait_ms\":%u}",
				wait_ms);
	*len = pos;
	return b;
}

/* What a module that is not "ok" means, in one line on stderr. */
static int not_ok(const char *build_id, const char *status,
		  const char *error, uint64_t retry_ms, unsigned wait_ms)
{
	if (strcmp(status, "pending") == 0) {
		tool_err("build ID %s is still being fetched or converted by "
			 "the server (pending after %u ms); ask again %s, or "
			 "wait longer with --wait-ms", build_id, wait_ms,
			 retry_ms ? "in a moment" : "later");
		return -EAGAIN;
	}
	if (strcmp(status, "partial") == 0) {
		tool_err("build ID %s is still being converted by the server "
			 "(partial after %u ms: function names alone); ask "
			 "again in a moment, wait longer with --wait-ms, or "
			 "take partial answers with --partial", build_id,
			 wait_ms);
		return -EAGAIN;
	}
	if (strcmp(status, "missing") == 0) {
		tool_err("the server has no debug information for build ID "
			 "%s (missing%s%s); upload it with 'sym upload'",
			 build_id, error ? ": " : "", error ? error : "");
		return -ENOENT;
	}
	if (strcmp(status, "error") == 0) {
		tool_err("the server cannot symbolize build ID %s: %s",
			 build_id, error ? error : "unknown error");
		return -EIO;
	}
	tool_err("the server answered an unknown status '%s' for build ID %s",
		 status, build_id);
	return -EPROTO;
}

int client_symbolize(struct client *c, const char *build_id,
		     const uint64_t *addrs, size_t n, unsigned wait_ms,
		     sym_frames_fn fn, void *ctx)
{
	struct curl_slist *h;
	struct client_result r;
	size_t len;
	char path[160], *body;
	int err;

	snprintf(path, sizeof(path), "/v1/symbolize/%s", build_id);
	body = symbolize_body(addrs, n, wait_ms, &len);
	h = curl_slist_append(NULL, "Content-Type: application/json");
	err = body && h ? start(c, path, c->stall_s + wait_ms / 1000) : -ENOMEM;
	if (err) {
		free(body);
		curl_slist_free_all(h);
		tool_err("out of memory");
		return err;
	}
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	err = perform(c, h, &r);
	free(body);
	if (err) {
		/* No answer: the next build ID would fare no better. */
		tool_err("%s", r.msg);
		return -ECOMM;
	}
	if (r.status != 200) {
		tool_err("server '%s': %s", c->server, r.msg);
		return -EPROTO;
	}
	c->partial = false;
	return client_read_symbolize(c->body.p, c->body.len, build_id, addrs, n,
				     wait_ms, c->frames, c->source,
				     c->partial_ok ? &c->partial : NULL, fn,
				     ctx);
}

void client_accept_partial(struct client *c, bool on)
{
	c->partial_ok = on;
}

bool client_partial(const struct client *c)
{
	return c->partial;
}

const char *client_source(const struct client *c)
{
	return c->source;
}

/* Keep @s in @out[16] when it is one of the words symd sends. */
static void keep_source(const char *s, char *out)
{
	static const char *const words[] = { "dwarf", "gopclntab", "kallsyms",
					     "symtab", "none" };

	for (size_t i = 0; s && out && i < sizeof(words) / sizeof(*words);
	     i++)
		if (strcmp(s, words[i]) == 0)
			snprintf(out, 16, "%s", words[i]);
}

int client_read_symbolize(char *body, size_t len, const char *build_id,
			  const uint64_t *addrs, size_t n, unsigned wait_ms,
			  struct sym_frame *frames_buf, char *source,
			  bool *partial, sym_frames_fn fn, void *ctx)
{
	struct jr j, frames = { 0 };
	const char *status = NULL, *error = NULL, *src = NULL;
	uint64_t retry = 0;
	size_t nmod = 0, k, nframes = 0;
	bool have_frames = false;
	char *name;
	int err;

	/* Pass 1: the module's status; where "frames" is, and its size. */
	j = (struct jr){ .p = body, .end = body + len };
	if (member(&j, "modules") && eat(&j, '[')) {
		while (more(&j, ']', &nmod)) {
			if (nmod > 1 || !eat(&j, '{')) {
				fail(&j);
				break;
			}
			k = 0;
			while ((name = next_key(&j, &k))) {
				if (strcmp(name, "status") == 0) {
					status = str(&j);
				} else if (strcmp(name, "error") == 0) {
					error = opt_str(&j);
				} else if (strcmp(name, "source") == 0) {
					src = opt_str(&j);
				} else if (strcmp(name, "retry_after_ms") == 0) {
					u64(&j, &retry);
				} else if (strcmp(name, "frames") == 0) {
					frames = j;
					have_frames = true;
					nframes = count(&j);
				} else {
					skip(&j, 0);
				}
			}
		}
	}
	if (j.bad || nmod != 1 || !status) {
		tool_err("the server's reply is not a symbolize answer");
		return -EPROTO;
	}
	if (partial && strcmp(status, "partial") == 0)
		*partial = true;	/* read as "ok": the symbols' frames */
	else if (strcmp(status, "ok") != 0)
		return not_ok(build_id, status, error, retry, wait_ms);
	if (source)
		source[0] = '\0';
	keep_source(src, source);
	if (!have_frames || nframes != n) {
		tool_err("the server answered %zu of %zu addresses", nframes, n);
		return -EPROTO;
	}
	/* Pass 2: the answers. */
	err = read_answers(frames_buf, &frames, addrs, n, fn, ctx);
	if (err == -EPROTO)
		tool_err("the server's reply has a bad frame");
	return err;
}