/*
 * s3.c - the S3 client (s3.h): one libcurl easy handle per thread, every
 * request signed by curl's SigV4, retried with backoff where it is safe.
 *
 * One logical request (struct req) is one or more attempts of the same
 * HTTP request; attempt() sends one and classifies the answer as done,
 * final (404, 403, another 4xx) or transient (retried).  A download
 * writes into the caller's descriptor with pwrite() from offset 0, so a
 * retry starts it over without a copy; every reply body that is not a
 * download (errors, multipart XML) goes into a fixed buffer and is cut
 * at its size.
 */
#include <ctype.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "s3.h"
#include "base.h"

#define REPLY_MAX 65536		/* an XML or error body kept at most */
#define ETAG_MAX 130		/* an ETag kept at most (MD5s: 34) */
#define PARTS_MAX 10000		/* S3's bound on a multipart upload */
#define URL_MAX 2048
/* SHA-256 of the empty string: the payload hash of a body-less request. */
#define EMPTY_SHA256 \
	"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

struct symd_s3 {
	struct symd_s3_config cfg;	/* own copies */
	struct symd_s3_opts o;
	CURL *curl;
	char sigv4[96];		/* "aws:amz:REGION:s3" */
	unsigned seed;		/* the backoffs' random part */
	atomic_bool cancelled;	/* symd_s3_cancel(): sticky */
};

/* One logical request; attempt() fills the results. */
struct req {
	const char *method;	/* GET HEAD PUT POST DELETE */
	const char *key;
	const char *query;	/* sorted, encoded; NULL for none */
	/* PUT: the body, @in_len bytes of @in_fd from @in_off. */
	int in_fd;
	uint64_t in_off, in_len, in_pos;
	/* POST: the body, or NULL for an empty one. */
	const char *post;
	size_t post_len;
	/* GET: into @out_fd, at most @max bytes. */
	int out_fd;
	uint64_t max, got;
	bool over;		/* the download passed @max */
	/* Results of the attempt. */
	long status;
	uint64_t length;	/* Content-Length; UINT64_MAX: none */
	unsigned retry_after_s;	/* Retry-After; 0: none */
	char etag[ETAG_MAX];
	/* The request's x-amz-meta-* lines (symd_s3_put_meta()), sent on a
	 * single PUT and a multipart start only; the answer's, as
	 * "name=value\n" lines (on_header()). */
	const char *meta_out;
	char meta[SYMD_S3_META_MAX];
	char reply[REPLY_MAX];
	size_t reply_len;
	CURL *curl;		/* the attempt's, for on_body() */
	struct symd_s3 *s;	/* for on_progress() */
};

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* ------------------------------------------------------------ config */

static bool key_ok(const char *k)
{
	if (!k || !*k || *k == '/' || strlen(k) > 900 || strstr(k, ".."))
		return false;
	for (; *k; k++)
		if (!isalnum((unsigned char)*k) && !strchr("._/-", *k))
			return false;
	return true;
}

static bool bucket_ok(const char *b, size_t n)
{
	if (n < 3 || n > 63)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!islower((unsigned char)b[i]) &&
		    !isdigit((unsigned char)b[i]) && !strchr(".-", b[i]))
			return false;
	return true;
}

static int set_str(char **dst, const char *v, size_t n)
{
	char *c = strndup(v, n);

	if (!c)
		return -ENOMEM;
	free(*dst);
	*dst = c;
	return 0;
}

/* part_size and multipart_min: bytes, K, M or G, at least 5 MiB (S3's
 * smallest part).  0, or -EINVAL for any other key or value. */
static int size_key(const char *k, size_t kl, const char *v,
		    struct symd_s3_config *cfg)
{
	uint64_t *dst = NULL, n;
	char *end;

	if (kl == 9 && !strncmp(k, "part_size", kl))
		dst = &cfg->part_size;
	else if (kl == 13 && !strncmp(k, "multipart_min", kl))
		dst = &cfg->multipart_min;
	if (!dst || !isdigit((unsigned char)*v))
		return -EINVAL;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (*end == 'K' || *end == 'k')
		n <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		n <<= 20, end++;
	else if (*end == 'G' || *end == 'g')
		n <<= 30, end++;
	if (errno || *end || n < (5u << 20) || n > ((uint64_t)5 << 30))
		return -EINVAL;
	*dst = n;
	return 0;
}

/* "key = value" lines of the config file into @cfg; env wins later. */
static int load_file(const char *file, struct symd_s3_config *cfg,
		     char *why, size_t whylen)
{
	static const char *const names[] = {
		"endpoint", "region", "access_key_id", "secret_access_key",
	};
	char *const *fields[] = {
		&cfg->endpoint, &cfg->region, &cfg->access_key,
		&cfg->secret_key,
	};
	char line[1024];
	unsigned ln = 0;
	FILE *f = fopen(file, "re");
	int err = 0;

	if (!f) {
		err = -errno;
		snprintf(why, whylen, "cannot open '%s': %s", file,
			 strerror(errno));
		return err;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		char *p = line, *eq, *v, *end;
		size_t i;

		ln++;
		p += strspn(p, " \t");
		if (*p == '#' || *p == '\n' || *p == '\0' || *p == '[')
			continue;
		eq = strchr(p, '=');
		if (!eq)
			goto bad;
		for (end = eq; end > p && isspace((unsigned char)end[-1]);)
			end--;
		v = eq + 1 + strspn(eq + 1, " \t");
		v[strcspn(v, "\r\n")] = '\0';
		for (i = 0; i < 4; i++)
			if (strlen(names[i]) == (size_t)(end - p) &&
			    !strncmp(p, names[i], (size_t)(end - p)))
				break;
		if (i == 4 && size_key(p, (size_t)(end - p), v, cfg) == 0)
			continue;
		if (i == 4)
			goto bad;
		err = set_str((char **)fields[i], v, strlen(v));
		continue;
bad:
		/* The line may hold a secret: name its number only. */
		snprintf(why, whylen, "%s:%u: not a known \"key = value\" "
			 "line", file, ln);
		err = -EINVAL;
	}
	fclose(f);
	return err;
}

static int from_env(char **dst, const char *name, const char *alt)
{
	const char *v = getenv(name);

	if ((!v || !*v) && alt)
		v = getenv(alt);
	return v && *v ? set_str(dst, v, strlen(v)) : 0;
}

/* s3://BUCKET[/PREFIX] into @cfg. */
static int parse_url(const char *url, struct symd_s3_config *cfg,
		     char *why, size_t whylen)
{
	const char *b, *slash;
	size_t n;
	int err;

	if (!url || strncmp(url, "s3://", 5) != 0) {
		snprintf(why, whylen, "the object store must be "
			 "s3://BUCKET[/PREFIX]");
		return -EINVAL;
	}
	b = url + 5;
	slash = strchr(b, '/');
	n = slash ? (size_t)(slash - b) : strlen(b);
	if (!bucket_ok(b, n)) {
		snprintf(why, whylen, "bad bucket name in '%s' (3 to 63 of "
			 "[a-z0-9.-])", url);
		return -EINVAL;
	}
	err = set_str(&cfg->bucket, b, n);
	if (!err && slash && slash[1]) {
		const char *p = slash + 1;
		size_t pl = strlen(p);
		char tmp[512];

		while (pl && p[pl - 1] == '/')
			pl--;
		if (pl >= sizeof(tmp) - 1 ||
		    !key_ok((snprintf(tmp, sizeof(tmp), "%.*s", (int)pl, p),
			     tmp))) {
			snprintf(why, whylen, "bad prefix in '%s' (of "
				 "[A-Za-z0-9._/-], no '..')", url);
			return -EINVAL;
		}
		tmp[pl] = '/';
		tmp[pl + 1] = '\0';
		err = set_str(&cfg->prefix, tmp, pl + 1);
	} else if (!err) {
		err = set_str(&cfg->prefix, "", 0);
	}
	return err;
}

int symd_s3_config_load(const char *url, const char *file,
			struct symd_s3_config *cfg, char *why, size_t whylen)
{
	size_t n;
	int err;

	memset(cfg, 0, sizeof(*cfg));
	why[0] = '\0';
	err = parse_url(url, cfg, why, whylen);
	if (!err && file)
		err = load_file(file, cfg, why, whylen);
	if (!err)
		err = from_env(&cfg->endpoint, "AWS_ENDPOINT_URL", NULL);
	if (!err)
		err = from_env(&cfg->region, "AWS_REGION", "AWS_DEFAULT_REGION");
	if (!err)
		err = from_env(&cfg->access_key, "AWS_ACCESS_KEY_ID", NULL);
	if (!err)
		err = from_env(&cfg->secret_key, "AWS_SECRET_ACCESS_KEY", NULL);
	if (!err && !cfg->region)
		err = set_str(&cfg->region, "us-east-1", 9);
	if (err == -ENOMEM)
		snprintf(why, whylen, "out of memory");
	if (err)
		goto fail;
	err = -EINVAL;
	if (!cfg->endpoint) {
		snprintf(why, whylen, "no endpoint: set AWS_ENDPOINT_URL "
			 "(e.g. http://127.0.0.1:7480) or 'endpoint' in the "
			 "config file");
		goto fail;
	}
	n = strlen(cfg->endpoint);
	while (n && cfg->endpoint[n - 1] == '/')
		cfg->endpoint[--n] = '\0';
	if ((strncmp(cfg->endpoint, "http://", 7) &&
	     strncmp(cfg->endpoint, "https://", 8)) ||
	    strchr(cfg->endpoint, '@') || strchr(cfg->endpoint, '?') ||
	    strpbrk(cfg->endpoint, " \t\r\n") || n > 512) {
		/* Not echoed: "http://key:secret@host" would leak. */
		snprintf(why, whylen, "the endpoint must be http(s)://HOST"
			 "[:PORT], without user information or a query");
		goto fail;
	}
	if (!cfg->access_key || !cfg->secret_key) {
		snprintf(why, whylen, "no credentials: set AWS_ACCESS_KEY_ID "
			 "and AWS_SECRET_ACCESS_KEY, or access_key_id and "
			 "secret_access_key in the config file");
		goto fail;
	}
	if (strlen(cfg->region) > 64 || strpbrk(cfg->region, ":/ ")) {
		snprintf(why, whylen, "bad region '%.64s'", cfg->region);
		goto fail;
	}
	return 0;
fail:
	symd_s3_config_release(cfg);
	return err;
}

void symd_s3_config_release(struct symd_s3_config *cfg)
{
	if (!cfg)
		return;
	free(cfg->endpoint);
	free(cfg->region);
	free(cfg->bucket);
	free(cfg->prefix);
	if (cfg->secret_key)
		explicit_bzero(cfg->secret_key, strlen(cfg->secret_key));
	free(cfg->access_key);
	free(cfg->secret_key);
	memset(cfg, 0, sizeof(*cfg));
}

/* ------------------------------------------------------------ client */

int symd_s3_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -ENOMEM;
}

struct symd_s3 *symd_s3_new(const struct symd_s3_config *cfg,
			    const struct symd_s3_opts *opts)
{
	struct symd_s3 *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	if (opts)
		s->o = *opts;
	if (!s->o.retries)
		s->o.retries = 3;
	if (!s->o.backoff_ms)
		s->o.backoff_ms = 100;
	if (!s->o.max_backoff_ms)
		s->o.max_backoff_ms = 2000;
	if (!s->o.connect_ms)
		s->o.connect_ms = 2000;
	if (!s->o.stall_s)
		s->o.stall_s = 10;
	if (!s->o.part_size)
		s->o.part_size = cfg->part_size ? cfg->part_size : 16 << 20;
	if (!s->o.multipart_min)
		s->o.multipart_min = cfg->multipart_min ? cfg->multipart_min :
				     64 << 20;
	s->cfg.endpoint = strdup(cfg->endpoint);
	s->cfg.region = strdup(cfg->region);
	s->cfg.bucket = strdup(cfg->bucket);
	s->cfg.prefix = strdup(cfg->prefix ? cfg->prefix : "");
	s->cfg.access_key = strdup(cfg->access_key);
	s->cfg.secret_key = strdup(cfg->secret_key);
	s->curl = curl_easy_init();
	s->seed = (unsigned)now_us() ^ (unsigned)(uintptr_t)s;
	snprintf(s->sigv4, sizeof(s->sigv4), "aws:amz:%s:s3", cfg->region);
	if (!s->cfg.endpoint || !s->cfg.region || !s->cfg.bucket ||
	    !s->cfg.prefix || !s->cfg.access_key || !s->cfg.secret_key ||
	    !s->curl) {
		symd_s3_free(s);
		return NULL;
	}
	return s;
}

void symd_s3_cancel(struct symd_s3 *s)
{
	if (s)
		atomic_store(&s->cancelled, true);
}

void symd_s3_free(struct symd_s3 *s)
{
	if (!s)
		return;
	if (s->curl)
		curl_easy_cleanup(s->curl);
	symd_s3_config_release(&s->cfg);
	free(s);
}

/* ------------------------------------------------------- one attempt */

int symd_s3_meta_add_header(char *meta, const char *p, size_t n)
{
	const char *colon = memchr(p, ':', n), *v;
	size_t nl, vl, len = strnlen(meta, SYMD_S3_META_MAX);

	if (!colon || len >= SYMD_S3_META_MAX)
		return -EINVAL;
	nl = (size_t)(colon - p);
	v = colon + 1;
	vl = n - nl - 1;
	while (vl && (*v == ' ' || *v == '\t'))
		v++, vl--;
	while (vl && isspace((unsigned char)v[vl - 1]))
		vl--;
	if (!nl)
		return -EINVAL;
	if (len + nl + vl + 3 > SYMD_S3_META_MAX)
		return -ERANGE;
	for (size_t i = 0; i < nl; i++)
		if (!isalnum((unsigned char)p[i]) && p[i] != '-' && p[i] != '_')
			return -EINVAL;
	for (size_t i = 0; i < vl; i++)
		if (v[i] < 0x20 || v[i] > 0x7e)
			return -EINVAL;
	for (size_t i = 0; i < nl; i++)
		meta[len++] = (char)tolower((unsigned char)p[i]);
	meta[len++] = '=';
	memcpy(meta + len, v, vl);
	len += vl;
	meta[len++] = '\n';
	meta[len] = '\0';
	return 0;
}

static size_t on_header(char *buf, size_t size, size_t n, void *arg)
{
	struct req *q = arg;
	size_t len = size * n, vl;
	const char *v;

	if (len > 15 && !strncasecmp(buf, "Content-Length:", 15)) {
		q->length = strtoull(buf + 15, NULL, 10);
	} else if (len > 12 && !strncasecmp(buf, "Retry-After:", 12)) {
		unsigned long s = strtoul(buf + 12, NULL, 10);

		q->retry_after_s = s > 3600 ? 3600 : (unsigned)s;
	} else if (len > 11 && !strncasecmp(buf, "x-amz-meta-", 11)) {
		symd_s3_meta_add_header(q->meta, buf + 11, len - 11);
	} else if (len > 5 && !strncasecmp(buf, "ETag:", 5)) {
		v = buf + 5;
		vl = len - 5;
		while (vl && (*v == ' ' || *v == '\t'))
			v++, vl--;
		while (vl && isspace((unsigned char)v[vl - 1]))
			vl--;
		if (vl < sizeof(q->etag)) {
			memcpy(q->etag, v, vl);
			q->etag[vl] = '\0';
		}
	}
	return len;
}

static size_t on_body(char *buf, size_t size, size_t n, void *arg)
{
	struct req *q = arg;
	size_t len = size * n;
	long st = 0;

	/* The headers are in: the status says download or error body. */
	curl_easy_getinfo(q->curl, CURLINFO_RESPONSE_CODE, &st);
	if (q->out_fd >= 0 && st / 100 == 2) {
		if (len > q->max - q->got) {
			q->over = true;
			return 0;	/* CURLE_WRITE_ERROR */
		}
		for (size_t off = 0; off < len;) {
			ssize_t w = pwrite(q->out_fd, buf + off, len - off,
					   (off_t)(q->got + off));

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return 0;
			off += (size_t)w;
		}
		q->got += len;
		return len;
	}
	/* Everything else is kept to its bound; the rest is dropped. */
	if (q->reply_len < sizeof(q->reply) - 1) {
		size_t room = sizeof(q->reply) - 1 - q->reply_len;
		size_t c = len < room ? len : room;

		memcpy(q->reply + q->reply_len, buf, c);
		q->reply_len += c;
		q->reply[q->reply_len] = '\0';
	}
	return len;
}

static size_t on_read(char *buf, size_t size, size_t n, void *arg)
{
	struct req *q = arg;
	size_t want = size * n;
	ssize_t r;

	if (want > q->in_len - q->in_pos)
		want = (size_t)(q->in_len - q->in_pos);
	if (!want)
		return 0;
	do
		r = pread(q->in_fd, buf, want, (off_t)(q->in_off + q->in_pos));
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return CURL_READFUNC_ABORT;	/* the file shrank */
	q->in_pos += (size_t)r;
	return (size_t)r;
}

static int build_url(const struct symd_s3 *s, const struct req *q,
		     char *url, size_t len)
{
	int n = snprintf(url, len, "%s/%s/%s%s%s%s", s->cfg.endpoint,
			 s->cfg.bucket, s->cfg.prefix, q->key,
			 q->query ? "?" : "", q->query ? q->query : "");

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* Non-zero aborts the transfer (CURLE_ABORTED_BY_CALLBACK). */
static int on_progress(void *arg, curl_off_t dt, curl_off_t dn,
		       curl_off_t ut, curl_off_t un)
{
	const struct req *q = arg;

	return atomic_load(&q->s->cancelled);
}

/* Append "x-amz-meta-NAME: VALUE" for each "NAME=VALUE\n" of @meta. */
static CURLcode add_meta(struct curl_slist **h, const char *meta)
{
	char line[SYMD_S3_META_MAX + 16];

	while (*meta) {
		const char *nl = strchr(meta, '\n'), *eq = strchr(meta, '=');
		size_t n = nl ? (size_t)(nl - meta) : strlen(meta);
		struct curl_slist *h2;

		if (eq && eq < meta + n &&
		    (size_t)snprintf(line, sizeof(line), "x-amz-meta-%.*s: %.*s",
				     (int)(eq - meta), meta,
				     (int)(meta + n - eq - 1), eq + 1) <
		    sizeof(line)) {
			h2 = curl_slist_append(*h, line);
			if (!h2)
				return CURLE_OUT_OF_MEMORY;
			*h = h2;
		}
		meta += n + (nl != NULL);
	}
	return CURLE_OK;
}

/* Send @q once.  The curl code; q->status and the rest are filled. */
static CURLcode attempt(struct symd_s3 *s, struct req *q, const char *url)
{
	struct curl_slist *h = NULL, *h2;
	CURL *c = s->curl;
	CURLcode rc;
	bool body = !strcmp(q->method, "PUT") || q->post;

	q->status = 0;
	q->length = UINT64_MAX;
	q->retry_after_s = 0;
	q->etag[0] = '\0';
	q->meta[0] = '\0';
	q->reply_len = 0;
	q->reply[0] = '\0';
	q->got = 0;
	q->over = false;
	q->in_pos = 0;
	if (q->out_fd >= 0 && ftruncate(q->out_fd, 0) != 0)
		return CURLE_WRITE_ERROR;
	curl_easy_reset(c);
	/* No "Expect:" to switch off 100-continue: curl 7.88 would sign
	 * the empty header it then leaves out, and S3 refuse the
	 * signature.  Bodies below 1 MiB go without it anyway. */
	h2 = curl_slist_append(h, body ? "x-amz-content-sha256: "
				   "UNSIGNED-PAYLOAD" :
				   "x-amz-content-sha256: " EMPTY_SHA256);
	if (!h2)
		return CURLE_OUT_OF_MEMORY;
	h = h2;
	if (q->meta_out && ((!strcmp(q->method, "PUT") && !q->query) ||
			    (q->post == NULL && q->query &&
			     !strcmp(q->query, "uploads=")))) {
		rc = add_meta(&h, q->meta_out);
		if (rc != CURLE_OK) {
			curl_slist_free_all(h);
			return rc;
		}
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_AWS_SIGV4, s->sigv4);
	curl_easy_setopt(c, CURLOPT_USERNAME, s->cfg.access_key);
	curl_easy_setopt(c, CURLOPT_PASSWORD, s->cfg.secret_key);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)s->o.connect_ms);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1024L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)s->o.stall_s);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, q);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, q);
	q->s = s;
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, q);
	if (!strcmp(q->method, "HEAD")) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else if (!strcmp(q->method, "PUT")) {
		curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(c, CURLOPT_READDATA, q);
		curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE,
				 (curl_off_t)q->in_len);
	} else if (!strcmp(q->method, "POST")) {
		curl_easy_setopt(c, CURLOPT_POST, 1L);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, q->post ? q->post : "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)(q->post ? q->post_len : 0));
	} else if (strcmp(q->method, "GET")) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, q->method);
	}
	q->curl = c;
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &q->status);
	curl_slist_free_all(h);
	return rc;
}

/* ------------------------------------------------- retries and verdicts */

enum verdict { V_DONE, V_FINAL, V_RETRY };

static bool curl_transient(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_PARTIAL_FILE:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return true;
	default:
		return false;
	}
}

/* Classify an attempt; fill r->code, r->msg and the error in @err. */
static enum verdict judge(const struct symd_s3 *s, const struct req *q,
			  CURLcode rc, struct symd_s3_result *r, int *err)
{
	const char *what = q->method;

	r->http_status = (int)q->status;
	r->code[0] = '\0';
	if (q->reply_len)
		symd_s3_xml_get(q->reply, q->reply_len, "Code", r->code,
				sizeof(r->code));
	if (q->over) {
		*err = -SYMD_S3_REFUSED;
		snprintf(r->msg, sizeof(r->msg), "s3 %s %s: over the bound of "
			 "%llu bytes", what, q->key,
			 (unsigned long long)q->max);
		return V_FINAL;
	}
	if (rc == CURLE_ABORTED_BY_CALLBACK) {
		*err = -SYMD_S3_FAILED;
		snprintf(r->msg, sizeof(r->msg), "s3 %s %s: cancelled", what,
			 q->key);
		return V_FINAL;
	}
	if (rc != CURLE_OK) {
		*err = -SYMD_S3_FAILED;
		snprintf(r->msg, sizeof(r->msg), "s3 %s %s at %s: %s", what,
			 q->key, s->cfg.endpoint, curl_easy_strerror(rc));
		if (curl_transient(rc))
			return V_RETRY;
		*err = rc == CURLE_OUT_OF_MEMORY ? -SYMD_S3_FAILED :
		       -SYMD_S3_REFUSED;
		return V_FINAL;
	}
	/* A multipart completion may say 200 and carry an <Error>. */
	if (q->status / 100 == 2 && !(r->code[0] && q->post)) {
		*err = 0;
		r->msg[0] = '\0';
		return V_DONE;
	}
	snprintf(r->msg, sizeof(r->msg), "s3 %s %s at %s: HTTP %ld%s%s", what,
		 q->key, s->cfg.endpoint, q->status, r->code[0] ? " " : "",
		 r->code);
	if (q->status == 404 && strcmp(r->code, "NoSuchBucket") &&
	    strcmp(r->code, "NoSuchUpload")) {
		*err = -SYMD_S3_NOTFOUND;
		return V_FINAL;
	}
	if (q->status == 401 || q->status == 403) {
		*err = -SYMD_S3_DENIED;
		return V_FINAL;
	}
	*err = -SYMD_S3_FAILED;
	if (q->status >= 500 || q->status == 429 || q->status == 408 ||
	    !strcmp(r->code, "SlowDown") || !strcmp(r->code, "InternalError"))
		return V_RETRY;
	*err = -SYMD_S3_REFUSED;
	return V_FINAL;
}

/* The wait before attempt @n (1, 2, ...): the server's Retry-After when
 * it sent one, else the doubled backoff with a random half on top. */
static unsigned backoff_ms(struct symd_s3 *s, const struct req *q, unsigned n)
{
	uint64_t ms = (uint64_t)s->o.backoff_ms << (n > 16 ? 16 : n - 1);

	if (q->retry_after_s)
		ms = (uint64_t)q->retry_after_s * 1000;
	else
		ms += (unsigned)rand_r(&s->seed) % (ms / 2 + 1);
	return ms > s->o.max_backoff_ms ? s->o.max_backoff_ms : (unsigned)ms;
}

static int run(struct symd_s3 *s, struct req *q, struct symd_s3_result *r)
{
	char url[URL_MAX];
	unsigned tries = 0;
	enum verdict v;
	int err = 0;

	if (!key_ok(q->key)) {
		snprintf(r->msg, sizeof(r->msg), "s3: bad key");
		return -SYMD_S3_INVAL;
	}
	if (build_url(s, q, url, sizeof(url))) {
		snprintf(r->msg, sizeof(r->msg), "s3: key too long");
		return -SYMD_S3_INVAL;
	}
	for (;;) {
		CURLcode rc = attempt(s, q, url);

		r->attempts++;	/* all of a multipart upload's */
		tries++;
		v = judge(s, q, rc, r, &err);
		if (v != V_RETRY || tries > s->o.retries ||
		    atomic_load(&s->cancelled))
			break;
		usleep(backoff_ms(s, q, tries) * 1000u);
	}
	if (v == V_RETRY) {
		/* Out of retries: the caller's client tries again later. */
		r->retry_after_ms = q->retry_after_s ?
				    q->retry_after_s * 1000u :
				    s->o.max_backoff_ms;
	}
	return err;
}

static void result_begin(struct symd_s3_result *r)
{
	memset(r, 0, sizeof(*r));
	r->usec = now_us();
}

static int result_end(struct symd_s3_result *r, int err)
{
	r->usec = now_us() - r->usec;
	return err;
}

/* ------------------------------------------------------------ requests */

/* A request of @method on @key, without a body either way; the caller
 * sets the rest.  NULL on ENOMEM.  (A struct req holds its 64 KiB reply
 * buffer: on the heap, not a worker's stack.) */
static struct req *req_new(const char *method, const char *key)
{
	struct req *q = calloc(1, sizeof(*q));

	if (q) {
		q->method = method;
		q->key = key;
		q->out_fd = q->in_fd = -1;
	}
	return q;
}

int symd_s3_get(struct symd_s3 *s, const char *key, int fd, uint64_t max,
		struct symd_s3_result *r)
{
	struct req *q;
	int err;

	result_begin(r);
	if (!s || fd < 0)
		return result_end(r, -SYMD_S3_INVAL);
	q = req_new("GET", key);
	if (!q)
		return result_end(r, -SYMD_S3_FAILED);
	q->out_fd = fd;
	q->max = max ? max : UINT64_MAX;
	err = run(s, q, r);
	r->size = q->got;
	if (err)
		(void)!ftruncate(fd, 0);
	else
		memcpy(r->meta, q->meta, sizeof(r->meta));
	free(q);
	return result_end(r, err);
}

/* HEAD or DELETE: no body either way. */
static int bodiless(struct symd_s3 *s, const char *method, const char *key,
		    struct symd_s3_result *r)
{
	struct req *q;
	int err;

	result_begin(r);
	if (!s)
		return result_end(r, -SYMD_S3_INVAL);
	q = req_new(method, key);
	if (!q)
		return result_end(r, -SYMD_S3_FAILED);
	err = run(s, q, r);
	if (!err && q->length != UINT64_MAX && !strcmp(method, "HEAD"))
		r->size = q->length;
	if (!err)
		memcpy(r->meta, q->meta, sizeof(r->meta));
	free(q);
	return result_end(r, err);
}

int symd_s3_head(struct symd_s3 *s, const char *key,
		 struct symd_s3_result *r)
{
	return bodiless(s, "HEAD", key, r);
}

int symd_s3_delete(struct symd_s3 *s, const char *key,
		   struct symd_s3_result *r)
{
	int err = bodiless(s, "DELETE", key, r);

	return err == -SYMD_S3_NOTFOUND ? 0 : err;
}

/* Percent-encode @in (an upload ID) into @out; -ERANGE when it does not
 * fit. */
static int encode(const char *in, char *out, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *in; in++) {
		unsigned char ch = (unsigned char)*in;

		if (o + 4 > len)
			return -ERANGE;
		if (isalnum(ch) || strchr("-._~", ch)) {
			out[o++] = (char)ch;
		} else {
			out[o++] = '%';
			out[o++] = hex[ch >> 4];
			out[o++] = hex[ch & 15];
		}
	}
	out[o] = '\0';
	return 0;
}

/* The body of a multipart completion: each part's number and ETag. */
static char *complete_body(char (*etags)[ETAG_MAX], unsigned n, size_t *len)
{
	size_t cap = 128 + (size_t)n * (ETAG_MAX + 64), o;
	char *b = malloc(cap);

	if (!b)
		return NULL;
	o = (size_t)snprintf(b, cap, "<CompleteMultipartUpload>");
	for (unsigned i = 0; i < n; i++)
		o += (size_t)snprintf(b + o, cap - o, "<Part><PartNumber>%u"
				      "</PartNumber><ETag>%s</ETag></Part>",
				      i + 1, etags[i]);
	o += (size_t)snprintf(b + o, cap - o, "</CompleteMultipartUpload>");
	*len = o;
	return b;
}

/* Parts of @size bytes each, at most PARTS_MAX of them. */
static int put_parts(struct symd_s3 *s, struct req *q, uint64_t size,
		     const char *enc_id, char (*etags)[ETAG_MAX], unsigned n,
		     uint64_t part, struct symd_s3_result *r)
{
	char query[1200];
	int err = 0;

	for (unsigned i = 0; i < n && !err; i++) {
		snprintf(query, sizeof(query), "partNumber=%u&uploadId=%s",
			 i + 1, enc_id);
		q->method = "PUT";
		q->query = query;
		q->post = NULL;
		q->in_off = (uint64_t)i * part;
		q->in_len = size - q->in_off < part ? size - q->in_off : part;
		err = run(s, q, r);
		if (!err && !q->etag[0]) {
			snprintf(r->msg, sizeof(r->msg), "s3 PUT %s part %u: "
				 "no ETag in the answer", q->key, i + 1);
			err = -SYMD_S3_REFUSED;
		}
		if (!err)
			memcpy(etags[i], q->etag, ETAG_MAX);
	}
	return err;
}

static int put_multipart(struct symd_s3 *s, struct req *q, uint64_t size,
			 struct symd_s3_result *r)
{
	char id[1024], enc_id[1100], query[1200];
	char (*etags)[ETAG_MAX] = NULL;
	uint64_t part = s->o.part_size;
	unsigned n;
	char *body = NULL;
	int err;

	if ((size + part - 1) / part > PARTS_MAX)
		part = (size + PARTS_MAX - 1) / PARTS_MAX;
	n = (unsigned)((size + part - 1) / part);
	q->method = "POST";
	q->query = "uploads=";
	err = run(s, q, r);
	if (!err && (symd_s3_xml_get(q->reply, q->reply_len, "UploadId", id,
				     sizeof(id)) ||
		     !id[0] || encode(id, enc_id, sizeof(enc_id)))) {
		snprintf(r->msg, sizeof(r->msg), "s3 POST %s?uploads: no "
			 "usable UploadId in the answer", q->key);
		return -SYMD_S3_REFUSED;
	}
	if (err)
		return err;
	etags = calloc(n, sizeof(*etags));
	err = etags ? put_parts(s, q, size, enc_id, etags, n, part, r) :
		      -SYMD_S3_FAILED;
	if (!err) {
		body = complete_body(etags, n, &q->post_len);
		err = body ? 0 : -SYMD_S3_FAILED;
	}
	if (!err) {
		snprintf(query, sizeof(query), "uploadId=%s", enc_id);
		q->method = "POST";
		q->query = query;
		q->post = body;
		err = run(s, q, r);
	}
	if (err) {
		/* Abort, best effort: the store would keep the parts. */
		struct symd_s3_result ar = { 0 };
		unsigned saved = s->o.retries;

		snprintf(query, sizeof(query), "uploadId=%s", enc_id);
		q->method = "DELETE";
		q->query = query;
		q->post = NULL;
		s->o.retries = 0;
		run(s, q, &ar);
		s->o.retries = saved;
	}
	free(body);
	free(etags);
	return err;
}

int symd_s3_put(struct symd_s3 *s, const char *key, int fd,
		struct symd_s3_result *r)
{
	return symd_s3_put_meta(s, key, fd, NULL, r);
}

/* Is @meta "name=value\n" lines of [a-z0-9-] names and printable
 * values, within SYMD_S3_META_MAX? */
static bool meta_ok(const char *meta)
{
	bool name = true;

	if (strlen(meta) >= SYMD_S3_META_MAX)
		return false;
	for (const char *p = meta; *p; p++) {
		if (*p == '\n')
			name = true;
		else if (name && *p == '=')
			name = false;
		else if (name ? !(islower((unsigned char)*p) ||
				  isdigit((unsigned char)*p) || *p == '-') :
			 (*p < 0x20 || *p > 0x7e))
			return false;
	}
	return true;
}

int symd_s3_put_meta(struct symd_s3 *s, const char *key, int fd,
		     const char *meta, struct symd_s3_result *r)
{
	struct stat sb;
	struct req *q;
	int err;

	result_begin(r);
	if (!s || fd < 0 || fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		snprintf(r->msg, sizeof(r->msg), "s3: not a regular file");
		return result_end(r, -SYMD_S3_INVAL);
	}
	if (meta && !meta_ok(meta)) {
		snprintf(r->msg, sizeof(r->msg), "s3: bad metadata");
		return result_end(r, -SYMD_S3_INVAL);
	}
	q = req_new("PUT", key);
	if (!q)
		return result_end(r, -SYMD_S3_FAILED);
	q->in_fd = fd;
	q->meta_out = meta;
	if ((uint64_t)sb.st_size >= s->o.multipart_min &&
	    (uint64_t)sb.st_size > s->o.part_size) {
		err = put_multipart(s, q, (uint64_t)sb.st_size, r);
	} else {
		q->in_len = (uint64_t)sb.st_size;
		err = run(s, q, r);
	}
	r->size = err ? 0 : (uint64_t)sb.st_size;
	free(q);
	return result_end(r, err);
}

/* ------------------------------------------------------------- the XML */

static const char *mem_find(const char *h, size_t hl, const char *n,
			    size_t nl)
{
	if (nl == 0 || hl < nl)
		return NULL;
	for (size_t i = 0; i + nl <= hl; i++)
		if (h[i] == n[0] && !memcmp(h + i, n, nl))
			return h + i;
	return NULL;
}

/* Decode the entities of [p, p + n) into @out.  0, -ERANGE, -EINVAL. */
static int unescape(const char *p, size_t n, char *out, size_t outlen)
{
	static const struct { const char *e; char c; } ents[] = {
		{ "&quot;", '"' }, { "&amp;", '&' }, { "&lt;", '<' },
		{ "&gt;", '>' }, { "&apos;", '\'' },
	};
	size_t o = 0;

	for (size_t i = 0; i < n;) {
		char c = p[i];

		if (c == '&') {
			size_t k;

			for (k = 0; k < 5; k++) {
				size_t el = strlen(ents[k].e);

				if (n - i >= el && !memcmp(p + i, ents[k].e,
							   el)) {
					c = ents[k].c;
					i += el;
					break;
				}
			}
			if (k == 5)
				return -EINVAL;
		} else {
			i++;
		}
		if (o + 1 >= outlen)
			return -ERANGE;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

int symd_s3_xml_get(const char *xml, size_t len, const char *tag, char *out,
		    size_t outlen)
{
	char open_t[72], close_t[72];
	const char *a, *b;
	size_t ol, cl;
	int err;

	if (!xml || !tag || !out || !outlen || strlen(tag) > 64)
		return -EINVAL;
	out[0] = '\0';
	ol = (size_t)snprintf(open_t, sizeof(open_t), "<%s>", tag);
	cl = (size_t)snprintf(close_t, sizeof(close_t), "</%s>", tag);
	a = mem_find(xml, len, open_t, ol);
	if (!a)
		return -ENOENT;
	a += ol;
	b = mem_find(a, len - (size_t)(a - xml), close_t, cl);
	if (!b)
		return -ENOENT;
	err = unescape(a, (size_t)(b - a), out, outlen);
	if (err)
		out[0] = '\0';	/* never half a value */
	return err;
}

const char *symd_s3_strerror(int err)
{
	switch (err < 0 ? -err : err) {
	case 0:
		return "success";
	case SYMD_S3_NOTFOUND:
		return "no such object";
	case SYMD_S3_FAILED:
		return "the object store failed (transient)";
	case SYMD_S3_DENIED:
		return "the object store denied access";
	case SYMD_S3_REFUSED:
		return "the object store refused the request";
	case SYMD_S3_INVAL:
		return "bad object key or argument";
	default:
		return "unknown object store error";
	}
}

int symd_s3_meta_get(const struct symd_s3_result *r, const char *name,
		     char *out, size_t outlen)
{
	size_t nl = strlen(name);

	if (outlen)
		out[0] = '\0';
	for (const char *p = r->meta; *p;) {
		const char *end = strchr(p, '\n');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n > nl && !strncmp(p, name, nl) && p[nl] == '=') {
			if (n - nl - 1 >= outlen)
				return -ERANGE;
			memcpy(out, p + nl + 1, n - nl - 1);
			out[n - nl - 1] = '\0';
			return 0;
		}
		p += n + (end != NULL);
	}
	return -ENOENT;
}
