/*
 * fuzz-req.c - libFuzzer target over symd/req.c: the POST /v1/symbolize
 * body parser and the JSON output helpers.
 *
 * One input is one request body.  It is parsed in both shapes (the
 * multi-module form, and the single-module form with a build ID from the
 * URL) under small limits (4 modules, 16 addresses, depth 8), so that
 * the limit paths are reached by small inputs, and once more under the
 * default limits.  On success the documented contract of req.h must hold:
 * counts within the limits, module slices consecutive inside the one
 * address array, build IDs lowercase hex of an even length from 2 to 128,
 * wait_ms clamped; a request valid under the small limits is valid, with
 * the same content, under the larger defaults.  On failure: -EINVAL or
 * -E2BIG, a zeroed request, and a printable ASCII message naming a byte
 * offset (the message never echoes input bytes).
 *
 * The same bytes then go through the output side: the JSON string
 * escaper must give a string that symd_json_str_decode() accepts in full,
 * which decodes to the input when the input is valid UTF-8 (checked
 * against a separate, naive validator here) and is a fixed point of
 * escape-decode otherwise; the escaped string works as an unknown key in
 * a request; and numbers written with symi_buf_add_u64()/_hex() parse
 * back to the same values.  Last, the bytes as a source route's path
 * (symd_source_path_parse(), fuzz_source_path()).
 */
#include "fuzz.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "sym.h"
#include "req.h"
#include "base.h"

static const struct symd_req_limits small_lim = {
	.max_modules = 4,
	.max_addresses = 16,
	.max_depth = 8,
	.max_wait_ms = 1000,
	.default_wait_ms = 250,
};

static const struct symd_req_limits default_lim = SYMD_REQ_LIMITS_DEFAULT;

static bool is_zero(const struct symd_req *req)
{
	static const struct symd_req zero;

	return !memcmp(req, &zero, sizeof(zero));
}

/* The contract of a successful parse. */
static void check_req(const struct symd_req *req,
		      const struct symd_req_limits *lim, const char *url)
{
	size_t first = 0;

	FUZZ_CHECK(req->nmodules <= lim->max_modules);
	FUZZ_CHECK(req->naddrs <= lim->max_addresses);
	FUZZ_CHECK(req->wait_ms <= lim->max_wait_ms);
	FUZZ_CHECK((req->nmodules == 0) == (req->modules == NULL));
	FUZZ_CHECK((req->naddrs == 0) == (req->addrs == NULL));
	if (url)
		FUZZ_CHECK(req->nmodules == 1 &&
			   !strcmp(req->modules[0].build_id, url));
	for (size_t i = 0; i < req->nmodules; i++) {
		const struct symd_req_module *m = &req->modules[i];
		size_t n = strlen(m->build_id);

		FUZZ_CHECK(n >= 2 && n <= SYMD_BUILD_ID_MAX && n % 2 == 0);
		for (size_t k = 0; k < n; k++)
			FUZZ_CHECK((m->build_id[k] >= '0' &&
				    m->build_id[k] <= '9') ||
				   (m->build_id[k] >= 'a' &&
				    m->build_id[k] <= 'f'));
		FUZZ_CHECK(m->naddrs <= req->naddrs - first);
		FUZZ_CHECK(m->addrs ==
			   (m->naddrs ? req->addrs + first : NULL));
		first += m->naddrs;
	}
	FUZZ_CHECK(first == req->naddrs);
	for (size_t i = 0; i < req->naddrs; i++)
		fuzz_sink += req->addrs[i];
}

/* The contract of a failed parse. */
static void check_fail(int rc, const struct symd_req *req, const char *err,
		       size_t errlen)
{
	FUZZ_CHECK(rc == -EINVAL || rc == -E2BIG);
	FUZZ_CHECK(is_zero(req));
	FUZZ_CHECK(err[0] != '\0' && strlen(err) < errlen);
	for (const char *c = err; *c; c++)
		FUZZ_CHECK(*c >= 0x20 && *c < 0x7f);
	if (errlen == SYMD_REQ_ERRLEN)
		FUZZ_CHECK(strstr(err, " at byte ") != NULL);
}

/* Parse @data under @lim; the result stays in @req (release it). */
static int parse(const uint8_t *data, size_t size, const char *url,
		 const struct symd_req_limits *lim, struct symd_req *req,
		 size_t errlen)
{
	char err[SYMD_REQ_ERRLEN];
	int rc;

	rc = symd_req_parse((const char *)data, size, url, lim, req, err,
			    errlen);
	if (rc) {
		check_fail(rc, req, err, errlen);
		return rc;
	}
	FUZZ_CHECK(err[0] == '\0');
	check_req(req, lim, url);
	return 0;
}

static bool same_req(const struct symd_req *a, const struct symd_req *b)
{
	if (a->nmodules != b->nmodules || a->naddrs != b->naddrs)
		return false;
	for (size_t i = 0; i < a->nmodules; i++)
		if (strcmp(a->modules[i].build_id, b->modules[i].build_id) ||
		    a->modules[i].naddrs != b->modules[i].naddrs)
			return false;
	return !a->naddrs ||
	       !memcmp(a->addrs, b->addrs, a->naddrs * sizeof(*a->addrs));
}

static void fuzz_parser(const uint8_t *data, size_t size)
{
	static const char *const urls[] = { NULL, "abcd" };

	for (size_t u = 0; u < 2; u++) {
		struct symd_req a, b;
		int rc;

		rc = parse(data, size, urls[u], &small_lim, &a,
			   SYMD_REQ_ERRLEN);
		if (rc == 0) {
			FUZZ_CHECK(parse(data, size, urls[u], &default_lim, &b,
					 SYMD_REQ_ERRLEN) == 0);
			FUZZ_CHECK(same_req(&a, &b));
			symd_req_release(&b);
		}
		symd_req_release(&a);
		/* A short error buffer: truncated, still terminated. */
		if (parse(data, size, urls[u], &small_lim, &a, 9) == 0)
			FUZZ_CHECK(rc == 0);
		symd_req_release(&a);
	}
}

/* A naive reading of RFC 3629, apart from req.c's table-driven one. */
static bool ref_utf8_valid(const uint8_t *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		uint32_t cp;
		size_t k;

		if (s[i] < 0x80) {
			i++;
			continue;
		} else if ((s[i] & 0xe0) == 0xc0) {
			k = 2;
			cp = s[i] & 0x1f;
		} else if ((s[i] & 0xf0) == 0xe0) {
			k = 3;
			cp = s[i] & 0x0f;
		} else if ((s[i] & 0xf8) == 0xf0) {
			k = 4;
			cp = s[i] & 0x07;
		} else {
			return false;
		}
		if (n - i < k)
			return false;
		for (size_t j = 1; j < k; j++) {
			if ((s[i + j] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + j] & 0x3f);
		}
		if ((k == 2 && cp < 0x80) || (k == 3 && cp < 0x800) ||
		    (k == 4 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += k;
	}
	return true;
}

static void fuzz_escape(const uint8_t *data, size_t size)
{
	struct symi_buf b, b2, r;
	struct symd_req req;
	char err[SYMD_REQ_ERRLEN], *dec;
	size_t n, end;
	const char *why;
	int rc;

	symi_buf_init(&b, SYMD_REPLY_MAX);
	symi_buf_init(&b2, SYMD_REPLY_MAX);
	symi_buf_init(&r, SYMD_REPLY_MAX);
	/* Decoded, the escaped form is at most 3 bytes per input byte (one
	 * U+FFFD for each ill-formed byte). */
	dec = malloc(3 * size + 1);
	if (!dec)
		goto out;
	FUZZ_CHECK(symd_json_add_str(&b, (const char *)data, size) == 0);
	FUZZ_CHECK(b.len >= size + 2 && b.p[0] == '"');
	rc = symd_json_str_decode(b.p, b.len, dec, 3 * size + 1, &n, &end,
				  &why);
	FUZZ_CHECK(rc == 0 && end == b.len && n <= 3 * size);
	FUZZ_CHECK(ref_utf8_valid((const uint8_t *)dec, n));
	if (ref_utf8_valid(data, size))
		FUZZ_CHECK(n == size && (!size || !memcmp(dec, data, size)));
	/* Escaping what came back gives the same bytes again. */
	FUZZ_CHECK(symd_json_add_str(&b2, dec, n) == 0);
	FUZZ_CHECK(b2.len == b.len && !memcmp(b2.p, b.p, b.len));

	/* The escaped string as an unknown key of a module. */
	symi_buf_add_lit(&r, "{\"modules\":[{\"build_id\":\"ab\","
			     "\"addresses\":[],");
	symi_buf_add(&r, b.p, b.len);
	symi_buf_add_lit(&r, ":0}]}");
	rc = symd_req_parse(r.p, r.len, NULL, NULL, &req, err, sizeof(err));
	if (!(size == 8 && !memcmp(data, "build_id", 8)) &&
	    !(size == 9 && !memcmp(data, "addresses", 9)))
		FUZZ_CHECK(rc == 0 && req.nmodules == 1 && req.naddrs == 0);
	symd_req_release(&req);

	/* Numbers: written, then read back. */
	if (size >= 16) {
		uint64_t v = fuzz_u64(data, 8), w = fuzz_u64(data + 8, 8);

		symi_buf_reset(&r);
		symi_buf_add_lit(&r, "{\"addresses\":[");
		symi_buf_add_u64(&r, v);
		symi_buf_add_lit(&r, ",\"");
		symi_buf_add_lit(&r, "0x");
		symi_buf_add_hex(&r, v, 0);
		symi_buf_add_lit(&r, "\"],\"wait_ms\":");
		symi_buf_add_u64(&r, w);
		symi_buf_addc(&r, '}');
		FUZZ_CHECK(symd_req_parse(r.p, r.len, "ab", &default_lim, &req,
					  err, sizeof(err)) == 0);
		FUZZ_CHECK(req.naddrs == 2 && req.addrs[0] == v &&
			   req.addrs[1] == v);
		FUZZ_CHECK(req.wait_ms == (w > default_lim.max_wait_ms ?
					   default_lim.max_wait_ms : w));
		symd_req_release(&req);
		/* Signed: the parser rejects a negative, reads the rest. */
		symi_buf_reset(&r);
		symi_buf_add_lit(&r, "{\"addresses\":[");
		symi_buf_add_i64(&r, (int64_t)v);
		symi_buf_add_lit(&r, "]}");
		rc = symd_req_parse(r.p, r.len, "ab", NULL, &req, err,
				    sizeof(err));
		FUZZ_CHECK((int64_t)v < 0 ? rc == -EINVAL :
			   rc == 0 && req.addrs[0] == v);
		symd_req_release(&req);
	}
out:
	free(dec);
	symi_buf_release(&b);
	symi_buf_release(&b2);
	symi_buf_release(&r);
}

/*
 * The same bytes as the <path> of a /source/ route
 * (symd_source_path_parse()): on success an absolute path of printable
 * bytes with no empty, "." or ".." component, that libsym's
 * sym_path_normalize() leaves as it is and that, %-escaped as clients
 * escape it (sym upload --sources, debuginfod-find: all but
 * [A-Za-z0-9/._~-]), parses again to itself.  Not the path as it is: a
 * '%' it holds (from %25) would be read as an escape again (the first
 * campaign's find, "/%25\377", was that wrong check's).  On failure
 * -EINVAL or -ENAMETOOLONG, an empty result and a message.
 */
static size_t escape_path(const char *s, char *out)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || strchr("/._~-", c)) {
			out[n++] = (char)c;
		} else {
			out[n++] = '%';
			out[n++] = hex[c >> 4];
			out[n++] = hex[c & 15];
		}
	}
	return n;
}

static void fuzz_source_path(const uint8_t *data, size_t size)
{
	char out[SYMD_SOURCE_PATH_MAX], again[SYMD_SOURCE_PATH_MAX];
	char norm[SYMD_SOURCE_PATH_MAX], esc[3 * SYMD_SOURCE_PATH_MAX];
	const char *why = NULL;
	int err = symd_source_path_parse((const char *)data, size, out, &why);

	if (err) {
		FUZZ_CHECK(err == -EINVAL || err == -ENAMETOOLONG);
		FUZZ_CHECK(out[0] == '\0' && why && *why);
		return;
	}
	FUZZ_CHECK(out[0] == '/' && strlen(out) < sizeof(out));
	for (const char *p = out; *p; p++)
		FUZZ_CHECK((unsigned char)*p >= 0x20 && *p != 0x7f);
	FUZZ_CHECK(!strstr(out, "//") && !strstr(out, "/./") &&
		   !strstr(out, "/../"));
	FUZZ_CHECK(sym_path_normalize(out, norm, sizeof(norm)) == 0 &&
		   strcmp(norm, out) == 0);
	FUZZ_CHECK(symd_source_path_parse(esc, escape_path(out, esc), again,
					  NULL) == 0 && strcmp(again, out) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_parser(data, size);
	fuzz_escape(data, size);
	fuzz_source_path(data, size);
	return 0;
}
