/*
 * s3.h - the daemon's S3 client: GET, HEAD, PUT (streamed, multipart for
 * large files) and DELETE of objects in one bucket of an S3-compatible
 * store (AWS S3, Ceph's radosgw, MinIO), signed with libcurl's built-in
 * AWS SigV4 (CURLOPT_AWS_SIGV4, libcurl 7.88 in Debian 12).
 *
 *	struct symd_s3_config cfg;
 *	char why[256];
 *	err = symd_s3_config_load("s3://bucket/prefix", NULL, &cfg, why,
 *				  sizeof(why));	  once, at start-up
 *	symd_s3_global_init();			  before any thread
 *	struct symd_s3 *s = symd_s3_new(&cfg, NULL);	per thread
 *	struct symd_s3_result r;
 *	err = symd_s3_get(s, "tables/<id>/6", fd, max, &r);
 *	if (err == -SYMD_S3_NOTFOUND) ...
 *	symd_s3_free(s);
 *	symd_s3_config_release(&cfg);
 *
 * Objects are addressed path-style: ENDPOINT/BUCKET/PREFIX/KEY.  Keys are
 * the daemon's own (build IDs, fixed words, digits) and checked against
 * [A-Za-z0-9._/-], so nothing needs escaping but the multipart upload ID,
 * which is percent-encoded.
 *
 * Two quirks of libcurl 7.88's SigV4, checked against radosgw:
 *  - it sends no x-amz-content-sha256 for a streamed body and signs only
 *    host;x-amz-date.  Every request here sets the header itself (the
 *    SHA-256 of the empty body, or UNSIGNED-PAYLOAD for a body), and curl
 *    then signs it;
 *  - it does not sort the query string before signing: query strings are
 *    written sorted ("partNumber=2&uploadId=X", "uploads=").
 *
 * Retries.  A transient failure (connection refused or reset, a timeout,
 * a body cut short, HTTP 500, 502, 503, 504, S3's SlowDown) is tried
 * again after a backoff (opts.backoff_ms, doubled each time, plus a
 * random part), at most opts.retries times; a Retry-After the server
 * sends is honoured up to opts.max_backoff_ms.  Every request here is
 * safe to repeat: GET, HEAD, DELETE and PUT are idempotent, a repeated
 * multipart start leaves an unfinished upload behind (the store's
 * lifecycle rules drop those) and a repeated completion answers
 * NoSuchUpload, which counts as done when the object is then there.
 * What still fails is -SYMD_S3_FAILED with r->retry_after_ms: when the
 * caller should try again.  403 and other 4xx are not retried.
 *
 * Bounds.  GET writes into the caller's descriptor, at most @max bytes;
 * an error body is kept to 4 KiB, an XML reply to 64 KiB, a header line
 * to what curl hands over (its own 100 KiB bound).  Each attempt is
 * bounded by opts.connect_ms, and a transfer slower than 1 KiB/s for
 * opts.stall_s seconds is aborted.
 *
 * Secrets.  The access key and secret go to curl only (CURLOPT_USERNAME,
 * _PASSWORD) and are never put into r->msg, logs or metrics; an endpoint
 * with user information in it ("http://k:s@host") is refused at load.
 * Error messages name the endpoint, the bucket, the key and S3's error
 * code, never the Authorization header or the error body as it came.
 *
 * Caveats:
 *  - a struct symd_s3 (one curl easy handle: its connection is reused)
 *    is used by one thread at a time (symd_s3_cancel() excepted);
 *  - symd_s3_global_init() calls curl_global_init(), which is not
 *    thread-safe in libcurl 7.88: call it before any thread starts.
 */
#ifndef SYMD_S3_H
#define SYMD_S3_H

#include <stddef.h>
#include <stdint.h>

/** Where the objects are, and the keys to them.  Strings are owned by
 *  the struct (symd_s3_config_release()). */
struct symd_s3_config {
	char *endpoint;		/* "http://127.0.0.1:7480", no trailing / */
	char *region;		/* "us-east-1" by default */
	char *bucket;
	char *prefix;		/* "" or "a/b/" (always ends in /) */
	char *access_key;	/* secret: never logged */
	char *secret_key;	/* secret: never logged */
	/* The config file's part_size and multipart_min (symd_s3_opts);
	 * 0: the defaults. */
	uint64_t part_size, multipart_min;
};

/** Options of symd_s3_new(); zero fields mean the defaults. */
struct symd_s3_opts {
	unsigned retries;	/* extra attempts; 0 = 3 */
	unsigned backoff_ms;	/* first backoff; 0 = 100 */
	unsigned max_backoff_ms;	/* bound of one backoff; 0 = 2000 */
	unsigned connect_ms;	/* connect timeout; 0 = 2000 */
	unsigned stall_s;	/* below 1 KiB/s this long aborts; 0 = 10 */
	uint64_t part_size;	/* multipart part; 0 = 16 MiB */
	uint64_t multipart_min;	/* PUTs of this size or more are multipart;
				 * 0 = 64 MiB */
};

/** Errors, returned negated. */
enum symd_s3_error {
	/** 404: no such object. */
	SYMD_S3_NOTFOUND = 1,
	/** Transient, after the retries: see r->retry_after_ms. */
	SYMD_S3_FAILED,
	/** 403 or 401: the keys or the bucket's policy. */
	SYMD_S3_DENIED,
	/** Another 4xx, a malformed reply, an object over the bound. */
	SYMD_S3_REFUSED,
	/** A bad argument (key, descriptor); nothing was sent. */
	SYMD_S3_INVAL,
};

/** The bound of an object's user metadata, as "name=value\n" lines. */
#define SYMD_S3_META_MAX 1024

/** What a call did, on success and on error. */
struct symd_s3_result {
	int http_status;	/* the last answer's; 0 when none came */
	unsigned attempts;	/* requests sent, retries included */
	unsigned retry_after_ms;	/* FAILED: when to try again */
	uint64_t size;		/* GET: bytes written; HEAD: the length */
	uint64_t usec;		/* wall time of the whole call */
	char code[64];		/* S3's error code ("NoSuchKey"), or "" */
	char msg[256];		/* why it failed, for logs and JSON errors;
				 * never a secret */
	/* GET, HEAD: the object's user metadata (x-amz-meta-NAME headers)
	 * as "name=value\n" lines, names lowercased; a header with a byte
	 * outside printable ASCII or past the bound is left out.  Read it
	 * with symd_s3_meta_get(). */
	char meta[SYMD_S3_META_MAX];
};

/**
 * symd_s3_config_load() - read the object store's settings.
 * @param url   "s3://BUCKET" or "s3://BUCKET/PREFIX"
 * @param file  NULL, or a file of "key = value" lines (endpoint, region,
 *              access_key_id, secret_access_key, part_size and
 *              multipart_min in bytes with an optional K, M or G, at
 *              least 5M as S3 wants; '#' comments), read
 *              first; AWS_ENDPOINT_URL, AWS_REGION (or
 *              AWS_DEFAULT_REGION), AWS_ACCESS_KEY_ID and
 *              AWS_SECRET_ACCESS_KEY override it
 * @param[out] cfg  filled; release with symd_s3_config_release()
 * @param[out] why  on error, one line (never a secret)
 * @return 0, -EINVAL (a bad URL, bucket, prefix or endpoint, a missing
 *         endpoint or key), -ENOMEM, -errno (reading @file)
 */
int symd_s3_config_load(const char *url, const char *file,
			struct symd_s3_config *cfg, char *why, size_t whylen);

/** symd_s3_config_release() - free the strings; @cfg is zeroed. */
void symd_s3_config_release(struct symd_s3_config *cfg);

/** symd_s3_global_init() - curl_global_init(); 0 or -ENOMEM. */
int symd_s3_global_init(void);

/**
 * symd_s3_new() - a client for one thread.
 * @param cfg   copied
 * @param opts  NULL for the defaults
 * @return caller owns, free with symd_s3_free(); NULL on ENOMEM
 */
struct symd_s3 *symd_s3_new(const struct symd_s3_config *cfg,
			    const struct symd_s3_opts *opts);

/**
 * symd_s3_cancel() - make the transfer of @s under way, and every later
 * one, fail (-SYMD_S3_FAILED, "cancelled") within about a second (curl's
 * progress callback), with no retry: for shutdown.  Sticky.  NULL-safe.
 * Thread-safety: any thread, until symd_s3_free(s).
 */
void symd_s3_cancel(struct symd_s3 *s);

/** symd_s3_free() - NULL-safe. */
void symd_s3_free(struct symd_s3 *s);

/**
 * symd_s3_get() - download the object @key into @fd (from its start:
 * a retry truncates it).
 * @param max  larger objects fail (-SYMD_S3_REFUSED, nothing kept)
 * @return 0, -SYMD_S3_NOTFOUND, -SYMD_S3_FAILED, -SYMD_S3_DENIED,
 *         -SYMD_S3_REFUSED, -SYMD_S3_INVAL
 * A body shorter than its Content-Length is a failure (retried).
 */
int symd_s3_get(struct symd_s3 *s, const char *key, int fd, uint64_t max,
		struct symd_s3_result *r);

/** symd_s3_head() - does @key exist?  r->size is its length.
 *  @return as symd_s3_get() */
int symd_s3_head(struct symd_s3 *s, const char *key,
		 struct symd_s3_result *r);

/**
 * symd_s3_put() - upload the whole file @fd (from offset 0) as @key,
 * streamed: a single PUT below opts.multipart_min bytes, else a
 * multipart upload of opts.part_size parts (aborted on failure).
 * @return 0, -SYMD_S3_FAILED, -SYMD_S3_DENIED, -SYMD_S3_REFUSED,
 *         -SYMD_S3_INVAL (a bad key, @fd not a regular file)
 */
int symd_s3_put(struct symd_s3 *s, const char *key, int fd,
		struct symd_s3_result *r);

/**
 * symd_s3_put_meta() - symd_s3_put() with user metadata: @meta (NULL:
 * none) is "name=value\n" lines, names of [a-z0-9-], values of
 * printable ASCII, under SYMD_S3_META_MAX bytes, each sent (and signed)
 * as "x-amz-meta-name: value" on the single PUT or the multipart start.
 * S3 stores them with the object, whole: a reader sees the new object's
 * metadata with its bytes, never the old one's.
 * @return as symd_s3_put(); -SYMD_S3_INVAL for malformed @meta
 */
int symd_s3_put_meta(struct symd_s3 *s, const char *key, int fd,
		     const char *meta, struct symd_s3_result *r);

/**
 * symd_s3_meta_get() - the value of metadata @name (lowercase, without
 * "x-amz-meta-") in @r, as a GET or HEAD answered it.
 * @return 0, -ENOENT (not there; @out ""), -ERANGE (longer than
 *         @outlen - 1; @out "")
 */
int symd_s3_meta_get(const struct symd_s3_result *r, const char *name,
		     char *out, size_t outlen);

/**
 * symd_s3_meta_add_header() - the reader of one answer header
 * "x-amz-meta-NAME: VALUE": @p, @n are what follows the prefix (no NUL
 * needed, CRLF allowed).  Appends "name=value\n" (name lowercased, value
 * trimmed) to the NUL-terminated @meta of SYMD_S3_META_MAX bytes.
 * @return 0; -EINVAL (no colon, an empty name, a name byte outside
 *         [A-Za-z0-9_-], a value byte outside printable ASCII) or -ERANGE
 *         (it would not fit): @meta unchanged.  Fuzzed
 *         (tests/fuzz/fuzz-s3meta.c).
 */
int symd_s3_meta_add_header(char *meta, const char *p, size_t n);

/** symd_s3_delete() - remove @key; a missing key is success (S3's 204).
 *  @return 0, -SYMD_S3_FAILED, -SYMD_S3_DENIED, -SYMD_S3_REFUSED,
 *  -SYMD_S3_INVAL */
int symd_s3_delete(struct symd_s3 *s, const char *key,
		   struct symd_s3_result *r);

/**
 * symd_s3_xml_get() - the text of the first element <@tag> of an S3 XML
 * reply, its five predefined entities decoded (&quot; &amp; &lt; &gt;
 * &apos;), into @out.  For UploadId, ETag, Code and Message.
 * @return 0, -ENOENT (no such element, or it is not closed), -ERANGE
 *         (longer than @outlen - 1), -EINVAL (a NULL argument, an
 *         unknown or unterminated entity)
 * @out is "" on every error.  An element's text is taken up to the first
 * closing tag of its name (S3's replies do not nest a tag in itself).
 * Parses (@xml, @len) only, never past it; no NUL needed.  Fuzzed
 * (tests/fuzz/fuzz-s3xml.c).
 */
int symd_s3_xml_get(const char *xml, size_t len, const char *tag, char *out,
		    size_t outlen);

/** symd_s3_strerror() - a constant description of an error (either
 *  sign). */
const char *symd_s3_strerror(int err);

#endif /* SYMD_S3_H */
