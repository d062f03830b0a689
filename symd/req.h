/*
 * req.h - the request parser of POST /v1/symbolize and the JSON output
 * helpers of the response writer.  This header is the manual; the HTTP
 * side is described in docs/http-api.md.
 *
 * Caveats
 * - Nothing here touches libevent, sockets or files: the parser takes the
 *   body as (const char *, size_t) and the writer fills a plain byte
 *   buffer (struct symi_buf), so both are unit-tested and fuzzed in
 *   memory (tests/unit/t-req.c, tests/fuzz/fuzz-req.c).
 * - Thread-safety: every function is reentrant; distinct structs may be
 *   used from distinct threads at the same time.  No global state.
 * - Errors are 0 or a negative errno, never -SYM_E_*: -EINVAL for a
 *   request that is not valid (HTTP 400), -E2BIG for a valid request over
 *   a count limit (HTTP 413), -ENOMEM when malloc() fails (HTTP 503).
 *
 * The request, in the two shapes of docs/http-api.md:
 *
 *   POST /v1/symbolize
 *     {"modules": [{"build_id": "<hex>", "addresses": ["0x1a2b", 6699]}],
 *      "wait_ms": 2000}
 *   POST /v1/symbolize/<build_id>
 *     {"addresses": ["0x1a2b", 6699], "wait_ms": 2000}
 *
 * The parser is a strict RFC 8259 parser specialised to these shapes:
 * - Whitespace (space, tab, CR, LF) anywhere JSON allows it, nowhere else.
 * - Strings: every escape (\" \\ \/ \b \f \n \r \t \uXXXX), surrogate
 *   pairs; a lone surrogate, a raw control byte (< 0x20) or invalid UTF-8
 *   (overlong forms, UTF-16 surrogates, beyond U+10FFFF, truncated
 *   sequences) inside a string is an error.  Escapes work in keys too:
 *   "addr\u0065sses" is the key addresses.
 * - An address is either a JSON integer (0 to 2^64-1: no sign, fraction,
 *   exponent or leading zero) or a string of "0x" or "0X" and 1 to 16 hex
 *   digits of either case.  Decimal strings ("6699") are rejected on
 *   purpose: "1a2b" and "6699" would otherwise read as different bases.
 * - A build ID is a string of 2 to SYMD_BUILD_ID_MAX hex digits, an even
 *   number of them, of either case; it is lowercased.  Anything else
 *   ("../x", "", 200 digits, "abc") is an error.
 * - wait_ms is a JSON integer >= 0.  Values above limits.max_wait_ms
 *   (even beyond 2^64) are clamped to it, not rejected: the caller then
 *   gets "pending" sooner than asked.  Without wait_ms the request gets
 *   limits.default_wait_ms.
 * - Keys: "modules" (multi-module form only), "addresses" (single-module
 *   form and inside modules[]), "build_id" (inside modules[]), "wait_ms"
 *   (top level).  A known key given twice in one object is an error.
 *   Unknown keys are allowed, and their values (any JSON) are checked and
 *   skipped, within the nesting limit.  "modules" in the single-module
 *   form and a top-level "addresses" in the multi-module form are errors
 *   (their meaning would be ambiguous).
 * - Nothing but whitespace may follow the request object: no second
 *   value, no NUL, no byte order mark in front.
 *
 * Error messages name the place and the byte offset (counted from 0 at
 * the first byte of the body), for example
 *   modules[0].addresses[3]: expected a hex string or a non-negative
 *   integer at byte 57
 * They are plain ASCII and hold no bytes of the request (no echo of
 * hostile input), so they can go into {"error": "..."} and into logs.
 */
#ifndef SYMD_REQ_H
#define SYMD_REQ_H

#include <stddef.h>
#include <stdint.h>

/** Most hex digits in a build ID (64 bytes, as libsym's store takes). */
#define SYMD_BUILD_ID_MAX 128

/** A caller's error buffer of this size never truncates a message. */
#define SYMD_REQ_ERRLEN 256

/** Hard cap on symd_req_limits.max_depth; larger values are lowered. */
#define SYMD_REQ_DEPTH_CAP 256

/* The defaults of symd_req_limits (SYMD_REQ_LIMITS_DEFAULT). */
#define SYMD_REQ_DEFAULT_MAX_MODULES 1024
#define SYMD_REQ_DEFAULT_MAX_ADDRESSES 100000
#define SYMD_REQ_DEFAULT_MAX_DEPTH 32
#define SYMD_REQ_DEFAULT_MAX_WAIT_MS 30000
#define SYMD_REQ_DEFAULT_WAIT_MS 1000

/**
 * struct symd_req_limits - what one request may ask for.  The caller's;
 * symd_req_parse() only reads it.  Every field is taken as given (0 is a
 * real limit), except max_depth above SYMD_REQ_DEPTH_CAP, which is
 * lowered to it, and default_wait_ms above max_wait_ms, which is lowered
 * to max_wait_ms.
 */
struct symd_req_limits {
	/** Most entries of "modules"; over it: -E2BIG. */
	size_t max_modules;
	/** Most addresses in the whole request, all modules together;
	 *  over it: -E2BIG. */
	size_t max_addresses;
	/** Deepest nesting of arrays and objects, the request object being
	 *  depth 1: the multi-module form needs 4 ({ [ { [), the
	 *  single-module form 2.  Deeper (in unknown keys' values too):
	 *  -EINVAL. */
	unsigned int max_depth;
	/** wait_ms values above this are clamped to it. */
	uint32_t max_wait_ms;
	/** wait_ms of a request that gives none. */
	uint32_t default_wait_ms;
};

/** An initializer with the defaults above. */
#define SYMD_REQ_LIMITS_DEFAULT                                              \
	{                                                                    \
		.max_modules = SYMD_REQ_DEFAULT_MAX_MODULES,                 \
		.max_addresses = SYMD_REQ_DEFAULT_MAX_ADDRESSES,             \
		.max_depth = SYMD_REQ_DEFAULT_MAX_DEPTH,                     \
		.max_wait_ms = SYMD_REQ_DEFAULT_MAX_WAIT_MS,                 \
		.default_wait_ms = SYMD_REQ_DEFAULT_WAIT_MS,                 \
	}

/**
 * struct symd_req_module - one module of a parsed request, in request
 * order.  The same build ID may appear in several modules; each is
 * answered on its own.
 */
struct symd_req_module {
	/** Lowercase hex, NUL-terminated, an even number of 2 to
	 *  SYMD_BUILD_ID_MAX digits. */
	char build_id[SYMD_BUILD_ID_MAX + 1];
	/** The module's addresses in request order: a slice of
	 *  symd_req.addrs, borrowed, valid until symd_req_release(); NULL
	 *  when naddrs is 0. */
	const uint64_t *addrs;
	/** May be 0 ("addresses": []). */
	size_t naddrs;
};

/**
 * struct symd_req - a parsed request.  Filled by symd_req_parse(); the
 * caller owns it and frees it with symd_req_release().  Two allocations
 * at most (modules, addrs), each bounded by the limits and by the body's
 * length, whatever the input.
 */
struct symd_req {
	/** nmodules entries; owned.  The single-module form gives exactly
	 *  one, named by the URL's build ID. */
	struct symd_req_module *modules;
	size_t nmodules;
	/** Every address of every module, module after module; owned.
	 *  NULL when naddrs is 0. */
	uint64_t *addrs;
	size_t naddrs;
	/** From the request, clamped to max_wait_ms, or default_wait_ms. */
	uint32_t wait_ms;
};

/**
 * symd_req_parse() - parse and check the body of POST /v1/symbolize.
 * @param body       the request body, not NUL-terminated; may be NULL
 *                   when @len is 0; borrowed, only read during the call
 * @param len        its length in bytes
 * @param url_build_id  NULL for the multi-module form; for the
 *                   single-module form (POST /v1/symbolize/<build_id>)
 *                   the build ID from the URL, NUL-terminated, checked
 *                   and lowercased like one in the body
 * @param lim        the limits; NULL means SYMD_REQ_LIMITS_DEFAULT
 * @param[out] req   filled on success; zeroed on failure (nothing to
 *                   free then, though symd_req_release() is harmless)
 * @param[out] err   the reason of a failure, NUL-terminated, truncated
 *                   to @errlen (SYMD_REQ_ERRLEN is always enough); ""
 *                   on success; may be NULL when @errlen is 0
 * @param errlen     size of @err
 * @return 0;
 *         -EINVAL (answer 400): not a valid request - malformed JSON, a
 *         wrong type, a bad address or build ID, a duplicate or missing
 *         key, nesting deeper than lim->max_depth, trailing data, an
 *         empty body, a bad @url_build_id - or a NULL @req, or a NULL
 *         @body with @len > 0;
 *         -E2BIG (answer 413): more than lim->max_modules modules or
 *         more than lim->max_addresses addresses;
 *         -ENOMEM (answer 503).
 * The first error found is reported; parsing stops there.  The time
 * taken is linear in @len, and the stack used is constant (nesting is
 * tracked in a SYMD_REQ_DEPTH_CAP-byte array, not by recursion).
 */
int symd_req_parse(const char *body, size_t len, const char *url_build_id,
		   const struct symd_req_limits *lim, struct symd_req *req,
		   char *err, size_t errlen);

/**
 * symd_req_release() - free what symd_req_parse() allocated.
 * @param req  NULL is a no-op; left zeroed, so releasing twice is fine
 */
void symd_req_release(struct symd_req *req);

/**
 * symd_build_id_norm() - check a build ID and lowercase it, for the
 * routes that carry one in the URL (/v1/debuginfo/<id>,
 * /buildid/<id>/...), with the rules of the request body.
 * @param s        the digits, not NUL-terminated; NULL only with @len 0
 * @param len      their number
 * @param[out] out SYMD_BUILD_ID_MAX + 1 bytes: lowercase hex, NUL-ended;
 *                 "" on failure
 * @param[out] why on failure, a static message ("not hex", ...); may be
 *                 NULL
 * @return 0, -EINVAL (empty, too long, an odd number of digits, not hex)
 */
int symd_build_id_norm(const char *s, size_t len,
		       char out[SYMD_BUILD_ID_MAX + 1], const char **why);

/** Bytes of a decoded source path at most, its NUL included (PATH_MAX). */
#define SYMD_SOURCE_PATH_MAX 4096

/**
 * symd_source_path_parse() - the <path> of /buildid/<id>/source/<path>
 * and PUT /v1/source/<id>/<path>: %-decoded (as debuginfod-find escapes
 * it; '/' may come plain or as %2F), then checked.  The result is the
 * path as the line tables' list spells it (sym_path_normalize() applies
 * the same rules: no "." or empty components).
 * @param s        the raw URL part after "source"; its first byte is the
 *                 path's leading '/'; NULL only with @len 0
 * @param len      its bytes
 * @param[out] out SYMD_SOURCE_PATH_MAX bytes: the path, NUL-ended; ""
 *                 on failure
 * @param[out] why on failure, a static message; may be NULL
 * @return 0, -EINVAL (not absolute, a bad or NUL escape, a control byte,
 *         a ".." component: a client must not climb out of a directory,
 *         and the names the line tables give are normalized, so none
 *         has one), -ENAMETOOLONG (over SYMD_SOURCE_PATH_MAX - 1 bytes, or
 *         a component over 255)
 */
int symd_source_path_parse(const char *s, size_t len,
			   char out[SYMD_SOURCE_PATH_MAX], const char **why);

/**
 * symd_json_str_decode() - read one JSON string token, the way the
 * request parser reads every string (exported for tests, the fuzz
 * target, and any other JSON the daemon reads).
 * @param s          the input; s[0] must be '"'
 * @param len        bytes available at @s; the token may end before
 * @param out        where the decoded UTF-8 goes, at most @cap bytes
 *                   (not NUL-terminated); may be NULL when @cap is 0 -
 *                   the string is then only checked
 * @param cap        size of @out
 * @param[out] outlen the full decoded length, also when it exceeds @cap
 *                   (only the first @cap bytes are written then)
 * @param[out] end    on success the offset just past the closing quote;
 *                   on failure the offset of the offending byte
 * @param[out] why    on failure a static message; may be NULL
 * @return 0, -EINVAL (no opening quote, no closing quote before @len, a
 *         raw control byte, a bad escape, a lone surrogate, invalid UTF-8)
 */
int symd_json_str_decode(const char *s, size_t len, char *out, size_t cap,
			 size_t *outlen, size_t *end, const char **why);

/*
 * The output side: appenders of JSON strings to a struct symi_buf
 * (libsym/base.h: the project's capped buffer).  The response writer
 * builds a body in one buffer, capped at what one response may hold, and
 * then hands it to libevent in one piece:
 * evbuffer_add(out, b.p, b.len), or without a copy
 *   p = symi_buf_detach(&b, &n);
 *   evbuffer_add_reference(out, p, n, free_cb, NULL);  (free_cb frees p)
 * Numbers go in with symi_buf_add_u64(), symi_buf_add_i64() and
 * symi_buf_add_hex().
 *
 * Every appender is all-or-nothing: on failure the buffer is as it was.
 * They return 0, -E2BIG (the result would exceed b->max: a response too
 * large to send, not worth retrying as is) or -ENOMEM (malloc() failed).
 */
struct symi_buf;

/** The cap of the replies the daemon writes itself (errors, health,
 * uploads, metrics), whatever the request; that of an answer to
 * POST /v1/symbolize is symd_api_opts.max_response. */
#define SYMD_REPLY_MAX ((size_t)256 << 20)

/**
 * symd_json_add_str() - append @s as a JSON string, quotes included.
 * Always valid JSON, whatever the bytes: '"' and '\' are escaped, control
 * bytes become \b \f \n \r \t or \u00XX, valid UTF-8 (DEL, U+2028 too)
 * passes through, and each ill-formed UTF-8 subsequence (a stray
 * continuation byte, a truncated or overlong sequence, a UTF-16
 * surrogate, beyond U+10FFFF) becomes one U+FFFD, as the Unicode
 * standard's "maximal subpart" practice says.  Runs of plain bytes are
 * found 8 bytes at a time and copied with memcpy().
 * @param s  @n bytes, NUL allowed (it becomes \u0000); NULL only with @n 0
 */
int symd_json_add_str(struct symi_buf *b, const char *s, size_t n);

/** symd_json_add_cstr() - the same for a NUL-terminated string; NULL
 * appends the JSON literal null. */
int symd_json_add_cstr(struct symi_buf *b, const char *s);

#endif /* SYMD_REQ_H */
