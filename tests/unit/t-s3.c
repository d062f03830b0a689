/*
 * t-s3.c - the S3 client (symd/s3.h) against a fault-injecting stub S3 on
 * 127.0.0.1 (port 0, read back), run by a thread of this test: 500s, 503
 * with Retry-After, slow answers, bodies cut short, 404, 403, a
 * multipart upload (with a failing part), and what every request carries
 * (x-amz-content-sha256 signed, sorted queries, the secret nowhere).
 *
 * The stub answers each connection's one request with the next scripted
 * action, then closes it; it records every request's head and body.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tap.h"
#include "s3.h"
#include "base.h"

#define SECRET "Zm9vYmFyU2VjcmV0S2V5MDEyMzQ1Njc4OQ"
#define NREQ 64

enum act {
	A_OK,		/* 200 with the object body */
	A_OK_ETAG,	/* 200, ETag: "e<n>" */
	A_500,
	A_503,		/* 503 SlowDown, Retry-After: 0 */
	A_SLOW,		/* headers, then silence until the client leaves */
	A_TRUNC,	/* Content-Length 1000, 10 bytes, close */
	A_404,
	A_403,
	A_INIT,		/* 200 with an UploadId */
	A_DONE_XML,	/* 200 with a CompleteMultipartUploadResult */
	A_204,
	A_META,		/* 200, user metadata headers, no body */
};

struct stub {
	int lfd;
	unsigned port;
	enum act script[NREQ];
	unsigned nscript, next;
	char head[NREQ][4096];
	size_t body_len[NREQ];
	char body_start[NREQ][32];
	unsigned nreq;
	const char *object;	/* A_OK's body */
	pthread_mutex_t mu;
};

static struct stub S;

static void script(int n, ...)
{
	va_list ap;

	pthread_mutex_lock(&S.mu);
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		S.script[i] = (enum act)va_arg(ap, int);
	va_end(ap);
	S.nscript = (unsigned)n;
	S.next = 0;
	S.nreq = 0;
	pthread_mutex_unlock(&S.mu);
}

static void say(int fd, const char *s, size_t n)
{
	if (n == 0)
		n = strlen(s);
	while (n) {
		ssize_t w = write(fd, s, n);

		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* A whole answer: status line, one extra header or "", the body. */
static void reply(int fd, const char *status, const char *hdr,
		  const char *body)
{
	char buf[1024];
	int l = snprintf(buf, sizeof(buf), "HTTP/1.1 %s\r\n%sContent-Length: "
			 "%zu\r\nConnection: close\r\n\r\n%s", status, hdr,
			 strlen(body), body);

	say(fd, buf, (size_t)l);
}

static void answer(int fd, enum act a, unsigned n)
{
	char buf[256], b[64];

	switch (a) {
	case A_OK:
		reply(fd, "200 OK", "", S.object);
		break;
	case A_OK_ETAG:
		snprintf(buf, sizeof(buf), "ETag: \"e%u\"\r\n", n);
		reply(fd, "200 OK", buf, "");
		break;
	case A_500:
		reply(fd, "500 Oops", "", "<Error><Code>InternalError</Code>"
		      "</Error>");
		break;
	case A_503:
		reply(fd, "503 Busy", "Retry-After: 0\r\n",
		      "<Error><Code>SlowDown</Code></Error>");
		break;
	case A_SLOW:
		say(fd, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n",
		    0);
		/* Until the client gives up and closes. */
		while (read(fd, b, sizeof(b)) > 0)
			;
		break;
	case A_TRUNC:
		say(fd, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n"
		    "0123456789", 0);
		break;
	case A_404:
		reply(fd, "404 Not Found", "", "<Error><Code>NoSuchKey</Code>"
		      "<Message>gone &amp; away</Message></Error>");
		break;
	case A_403:
		reply(fd, "403 Forbidden", "", "<Error><Code>"
		      "SignatureDoesNotMatch</Code></Error>");
		break;
	case A_INIT:
		reply(fd, "200 OK", "", "<?xml version=\"1.0\"?>"
		      "<InitiateMultipartUploadResult><Bucket>bkt</Bucket>"
		      "<UploadId>2~a+b/c&amp;d</UploadId>"
		      "</InitiateMultipartUploadResult>");
		break;
	case A_DONE_XML:
		reply(fd, "200 OK", "", "<CompleteMultipartUploadResult><ETag>"
		      "&quot;x-3&quot;</ETag></CompleteMultipartUploadResult>");
		break;
	case A_204:
		say(fd, "HTTP/1.1 204 No Content\r\nConnection: close\r\n"
		    "\r\n", 0);
		break;
	case A_META:
		reply(fd, "200 OK", "x-amz-meta-sym-quality: dwarf\r\n"
		      "X-Amz-Meta-Sym-Gen:   g1  \r\n"
		      "x-amz-meta-bad: caf\xc3\xa9\r\n", "");
		break;
	}
}

/* One request: its head (kept), its body (counted, start kept). */
static void serve(int fd)
{
	char req[8192];
	size_t n = 0, want = 0, have;
	unsigned i;
	char *end = NULL, *cl;
	enum act a = A_404;

	while (n < sizeof(req) - 1 && !end) {
		ssize_t r = read(fd, req + n, sizeof(req) - 1 - n);

		if (r <= 0)
			return;
		n += (size_t)r;
		req[n] = '\0';
		end = strstr(req, "\r\n\r\n");
	}
	if (!end)
		return;
	cl = strcasestr(req, "\r\nContent-Length:");
	if (cl && cl < end)
		want = strtoul(cl + 17, NULL, 10);
	pthread_mutex_lock(&S.mu);
	i = S.nreq < NREQ ? S.nreq++ : NREQ - 1;
	snprintf(S.head[i], sizeof(S.head[i]), "%.*s", (int)(end - req), req);
	if (S.next < S.nscript)
		a = S.script[S.next++];
	pthread_mutex_unlock(&S.mu);
	have = n - (size_t)(end + 4 - req);
	/* curl 7.88 asks before each PUT's body, as S3 servers answer. */
	if (strcasestr(req, "\r\nExpect: 100-continue") && have < want)
		say(fd, "HTTP/1.1 100 Continue\r\n\r\n", 0);
	snprintf(S.body_start[i], sizeof(S.body_start[i]), "%.*s",
		 (int)(have < 31 ? have : 31), end + 4);
	while (have < want) {
		ssize_t r = read(fd, req, sizeof(req));

		if (r <= 0)
			break;
		if (have < 31)
			snprintf(S.body_start[i] + have, 32 - have, "%.*s",
				 (int)r, req);
		have += (size_t)r;
	}
	S.body_len[i] = have;
	answer(fd, a, i);
}

static void *stub_main(void *arg)
{
	for (;;) {
		int fd = accept(S.lfd, NULL, NULL);

		if (fd < 0)
			return NULL;
		serve(fd);
		close(fd);
	}
}

static void stub_start(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	pthread_t t;

	pthread_mutex_init(&S.mu, NULL);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	S.lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (S.lfd < 0 || bind(S.lfd, (void *)&a, sizeof(a)) ||
	    listen(S.lfd, 16) || getsockname(S.lfd, (void *)&a, &al)) {
		perror("stub");
		exit(1);
	}
	S.port = ntohs(a.sin_port);
	pthread_create(&t, NULL, stub_main, NULL);
	pthread_detach(t);
}

static int memfd_with(const char *s, size_t n)
{
	int fd = memfd_create("t-s3", 0);

	if (fd >= 0 && n && pwrite(fd, s, n, 0) != (ssize_t)n) {
		close(fd);
		return -1;
	}
	return fd;
}

static size_t fd_read(int fd, char *buf, size_t len)
{
	ssize_t r = pread(fd, buf, len - 1, 0);

	buf[r > 0 ? r : 0] = '\0';
	return r > 0 ? (size_t)r : 0;
}

static bool no_secret_anywhere(const struct symd_s3_result *r)
{
	bool ok = !strstr(r->msg, SECRET) && !strstr(r->code, SECRET);

	for (unsigned i = 0; i < S.nreq && i < NREQ; i++)
		ok = ok && !strstr(S.head[i], SECRET);
	return ok;
}

static void t_config(void)
{
	struct symd_s3_config c;
	char why[256], path[] = "/tmp/t-s3-conf.XXXXXX";
	int fd;

	unsetenv("AWS_ENDPOINT_URL");
	unsetenv("AWS_REGION");
	unsetenv("AWS_DEFAULT_REGION");
	unsetenv("AWS_ACCESS_KEY_ID");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	CHECK_ERR(symd_s3_config_load("http://b/p", NULL, &c, why,
				      sizeof(why)), -EINVAL);
	CHECK_ERR(symd_s3_config_load("s3://Bad_Bucket", NULL, &c, why,
				      sizeof(why)), -EINVAL);
	CHECK_ERR(symd_s3_config_load("s3://bkt/../x", NULL, &c, why,
				      sizeof(why)), -EINVAL);
	CHECK_ERR(symd_s3_config_load("s3://bkt/p", NULL, &c, why,
				      sizeof(why)), -EINVAL);
	CHECK(strstr(why, "AWS_ENDPOINT_URL") != NULL);
	setenv("AWS_ENDPOINT_URL", "http://AK:" SECRET "@127.0.0.1:1", 1);
	CHECK_ERR(symd_s3_config_load("s3://bkt/p", NULL, &c, why,
				      sizeof(why)), -EINVAL);
	CHECK(!strstr(why, SECRET));
	/* The file first, the environment over it. */
	fd = mkstemp(path);
	CHECK(fd >= 0);
	dprintf(fd, "# symd\n[default]\nendpoint = http://127.0.0.1:9/\n"
		"region = eu-west-9\naccess_key_id = FILEKEY\n"
		"secret_access_key = %s\npart_size = 6M\n", SECRET);
	close(fd);
	unsetenv("AWS_ENDPOINT_URL");
	setenv("AWS_ACCESS_KEY_ID", "ENVKEY", 1);
	CHECK_ERR(symd_s3_config_load("s3://bkt/a/b//", path, &c, why,
				      sizeof(why)), 0);
	CHECK(!strcmp(c.endpoint, "http://127.0.0.1:9") &&
	      !strcmp(c.region, "eu-west-9") && !strcmp(c.bucket, "bkt") &&
	      !strcmp(c.prefix, "a/b/") && !strcmp(c.access_key, "ENVKEY") &&
	      !strcmp(c.secret_key, SECRET) && c.part_size == 6 << 20 &&
	      c.multipart_min == 0);
	symd_s3_config_release(&c);
	CHECK(c.endpoint == NULL && c.secret_key == NULL);
	/* A bad line is named by number, never echoed (it may be a key). */
	fd = open(path, O_WRONLY | O_APPEND);
	dprintf(fd, "%s\n", SECRET);
	close(fd);
	CHECK_ERR(symd_s3_config_load("s3://bkt", path, &c, why, sizeof(why)),
		  -EINVAL);
	CHECK(strstr(why, ":8:") && !strstr(why, SECRET));
	unlink(path);
	unsetenv("AWS_ACCESS_KEY_ID");
}

static struct symd_s3 *client(void)
{
	struct symd_s3_config c = { 0 };
	struct symd_s3_opts o = {
		.retries = 2, .backoff_ms = 1, .max_backoff_ms = 5,
		.stall_s = 1, .part_size = 4, .multipart_min = 10,
	};
	char ep[64];

	snprintf(ep, sizeof(ep), "http://127.0.0.1:%u", S.port);
	c.endpoint = ep;
	c.region = "us-east-1";
	c.bucket = "bkt";
	c.prefix = "pre/";
	c.access_key = "AKTEST";
	c.secret_key = SECRET;
	return symd_s3_new(&c, &o);
}

static void t_get(struct symd_s3 *s)
{
	struct symd_s3_result r;
	char buf[2048];
	int fd = memfd_with("", 0);

	S.object = "hello, object";
	/* A 500, a body cut short, then the object: retried to success. */
	script(3, A_500, A_TRUNC, A_OK);
	CHECK_ERR(symd_s3_get(s, "tables/ab/6", fd, 0, &r), 0);
	CHECK(r.attempts == 3 && r.size == 13);
	fd_read(fd, buf, sizeof(buf));
	CHECK(!strcmp(buf, "hello, object"));
	CHECK(!strncmp(S.head[0], "GET /bkt/pre/tables/ab/6 HTTP/1.1", 33));
	/* Every request carries the payload hash, and curl signs it. */
	CHECK(strcasestr(S.head[0], "x-amz-content-sha256: e3b0c442") &&
	      strstr(S.head[0], "SignedHeaders=host;x-amz-content-sha256;"
			      "x-amz-date") &&
	      strstr(S.head[0], "Credential=AKTEST/") &&
	      strstr(S.head[0], "/us-east-1/s3/aws4_request"));
	CHECK(no_secret_anywhere(&r));

	/* Always 503: out of retries, FAILED with retry_after_ms. */
	script(3, A_503, A_503, A_503);
	CHECK_ERR(symd_s3_get(s, "k", fd, 0, &r), -SYMD_S3_FAILED);
	CHECK(r.attempts == 3 && r.http_status == 503 &&
	      !strcmp(r.code, "SlowDown"));
	CHECK(r.retry_after_ms == 5);	/* Retry-After 0: the bound */
	CHECK(strstr(r.msg, "HTTP 503 SlowDown") != NULL);
	CHECK(fd_read(fd, buf, sizeof(buf)) == 0);	/* nothing kept */

	/* Slow: the stall bound (1 s) ends each attempt. */
	script(2, A_SLOW, A_OK);
	CHECK_ERR(symd_s3_get(s, "k", fd, 0, &r), 0);
	CHECK(r.attempts == 2 && r.size == 13);

	/* Truncated every time: FAILED, never a short file. */
	script(3, A_TRUNC, A_TRUNC, A_TRUNC);
	CHECK_ERR(symd_s3_get(s, "k", fd, 0, &r), -SYMD_S3_FAILED);
	CHECK(fd_read(fd, buf, sizeof(buf)) == 0);

	/* 404 and 403 are final: one attempt. */
	script(2, A_404, A_404);
	CHECK_ERR(symd_s3_get(s, "k", fd, 0, &r), -SYMD_S3_NOTFOUND);
	CHECK(r.attempts == 1 && !strcmp(r.code, "NoSuchKey"));
	script(1, A_403);
	CHECK_ERR(symd_s3_get(s, "k", fd, 0, &r), -SYMD_S3_DENIED);
	CHECK(r.attempts == 1 && no_secret_anywhere(&r));

	/* Over the caller's bound: REFUSED, not retried. */
	script(2, A_OK, A_OK);
	CHECK_ERR(symd_s3_get(s, "k", fd, 5, &r), -SYMD_S3_REFUSED);
	CHECK(r.attempts == 1 && fd_read(fd, buf, sizeof(buf)) == 0);

	/* Bad keys never reach the network. */
	script(0);
	CHECK_ERR(symd_s3_get(s, "../etc", fd, 0, &r), -SYMD_S3_INVAL);
	CHECK_ERR(symd_s3_get(s, "a b", fd, 0, &r), -SYMD_S3_INVAL);
	CHECK(S.nreq == 0);
	close(fd);
}

static void t_head_delete_put(struct symd_s3 *s)
{
	struct symd_s3_result r;
	int fd = memfd_with("12345678", 8);

	script(1, A_OK);
	CHECK_ERR(symd_s3_head(s, "debuginfo/ab", &r), 0);
	CHECK(r.size == 13 && !strncmp(S.head[0], "HEAD ", 5));
	script(1, A_204);
	CHECK_ERR(symd_s3_delete(s, "debuginfo/ab", &r), 0);
	CHECK(!strncmp(S.head[0], "DELETE /bkt/pre/debuginfo/ab ", 29));

	/* Below multipart_min (10): one streamed PUT, UNSIGNED-PAYLOAD
	 * signed, retried after a 500. */
	script(2, A_500, A_OK_ETAG);
	CHECK_ERR(symd_s3_put(s, "debuginfo/ab", fd, &r), 0);
	CHECK(r.attempts == 2 && r.size == 8);
	CHECK(!strncmp(S.head[1], "PUT /bkt/pre/debuginfo/ab HTTP", 30) &&
	      strcasestr(S.head[1], "x-amz-content-sha256: UNSIGNED-PAYLOAD")
	      && strstr(S.head[1], "SignedHeaders=content-length;host;"
			"x-amz-content-sha256;x-amz-date") ? 1 :
	      strstr(S.head[1], "SignedHeaders=host;x-amz-content-sha256;"
		     "x-amz-date") != NULL);
	CHECK(S.body_len[1] == 8 && !strcmp(S.body_start[1], "12345678"));
	close(fd);
	fd = open("/dev/null", O_RDONLY);
	CHECK_ERR(symd_s3_put(s, "x", fd, &r), -SYMD_S3_INVAL);
	close(fd);
}

static void t_multipart(struct symd_s3 *s)
{
	struct symd_s3_result r;
	int fd = memfd_with("abcdefghijk", 11);	/* 3 parts of 4 */

	script(6, A_INIT, A_OK_ETAG, A_500, A_OK_ETAG, A_OK_ETAG,
	       A_DONE_XML);
	CHECK_ERR(symd_s3_put(s, "tables/cd/6", fd, &r), 0);
	CHECK(S.nreq == 6);
	/* Query strings as written: sorted, the upload ID encoded. */
	CHECK(!strncmp(S.head[0], "POST /bkt/pre/tables/cd/6?uploads= ", 35));
	CHECK(!strncmp(S.head[1], "PUT /bkt/pre/tables/cd/6?partNumber=1&"
		       "uploadId=2~a%2Bb%2Fc%26d ", 61));
	CHECK(!strcmp(S.body_start[1], "abcd") &&
	      !strcmp(S.body_start[3], "efgh") &&
	      !strcmp(S.body_start[4], "ijk"));
	CHECK(!strncmp(S.head[4], "PUT /bkt/pre/tables/cd/6?partNumber=3&",
		       38));
	CHECK(!strncmp(S.head[5], "POST /bkt/pre/tables/cd/6?uploadId=2~a"
		       "%2Bb%2Fc%26d ", 50));
	/* The completion names each part's ETag, from the part's answer:
	 * part 2 was answered by request 3 (after the 500). */
	CHECK(strstr(S.body_start[5], "<CompleteMultipartUpload>") != NULL);

	/* A part that keeps failing: FAILED, and the upload is aborted. */
	script(5, A_INIT, A_500, A_500, A_500, A_204);
	CHECK_ERR(symd_s3_put(s, "tables/cd/6", fd, &r), -SYMD_S3_FAILED);
	CHECK(S.nreq == 5 && !strncmp(S.head[4], "DELETE /bkt/pre/tables/cd/"
				      "6?uploadId=2~a%2Bb%2Fc%26d ", 52));
	/* An initiation without an UploadId: REFUSED. */
	script(1, A_OK);
	CHECK_ERR(symd_s3_put(s, "tables/cd/6", fd, &r), -SYMD_S3_REFUSED);
	close(fd);
}

/* User metadata: sent (and signed) on a PUT and a multipart start only;
 * read back from a HEAD's answer; malformed metadata never sent. */
static void t_meta(struct symd_s3 *s)
{
	struct symd_s3_result r;
	char v[16];
	int fd = memfd_with("12345678", 8), big = memfd_with("abcdefghijk", 11);

	script(1, A_OK_ETAG);
	CHECK_ERR(symd_s3_put_meta(s, "debuginfo/ab", fd, "sym-quality=dwarf\n"
				   "sym-uploader=127.0.0.1:5\n", &r), 0);
	CHECK(strstr(S.head[0], "\r\nx-amz-meta-sym-quality: dwarf\r\n") &&
	      strstr(S.head[0], "\r\nx-amz-meta-sym-uploader: 127.0.0.1:5\r\n"));
	CHECK(strstr(S.head[0], ";x-amz-meta-sym-quality;"
		     "x-amz-meta-sym-uploader,") != NULL);
	script(5, A_INIT, A_OK_ETAG, A_OK_ETAG, A_OK_ETAG, A_DONE_XML);
	CHECK_ERR(symd_s3_put_meta(s, "tables/cd/6", big, "sym-gen=g2\n", &r),
		  0);
	CHECK(S.nreq == 5 && strstr(S.head[0], "x-amz-meta-sym-gen: g2"));
	CHECK(!strstr(S.head[1], "x-amz-meta") &&
	      !strstr(S.head[4], "x-amz-meta"));
	script(1, A_OK);
	CHECK_ERR(symd_s3_put_meta(s, "debuginfo/ab", fd, "Sym=x\n", &r),
		  -SYMD_S3_INVAL);
	CHECK_ERR(symd_s3_put_meta(s, "debuginfo/ab", fd, "a=b\r\n", &r),
		  -SYMD_S3_INVAL);
	CHECK(S.nreq == 0);

	script(1, A_META);
	CHECK_ERR(symd_s3_head(s, "debuginfo/ab", &r), 0);
	CHECK_ERR(symd_s3_meta_get(&r, "sym-quality", v, sizeof(v)), 0);
	CHECK(!strcmp(v, "dwarf"));
	CHECK_ERR(symd_s3_meta_get(&r, "sym-gen", v, sizeof(v)), 0);
	CHECK(!strcmp(v, "g1"));
	CHECK_ERR(symd_s3_meta_get(&r, "bad", v, sizeof(v)), -ENOENT);
	CHECK_ERR(symd_s3_meta_get(&r, "sym-quality", v, 5), -ERANGE);
	CHECK(v[0] == '\0');
	close(fd);
	close(big);
}

static void t_xml(void)
{
	static const char x[] = "<a><Code>No&amp;&lt;&gt;&quot;&apos;</Code>"
				"<Bad>&nbsp;</Bad><Open>zz";
	char out[16];

	CHECK_ERR(symd_s3_xml_get(x, sizeof(x) - 1, "Code", out, sizeof(out)),
		  0);
	CHECK(!strcmp(out, "No&<>\"'"));
	CHECK_ERR(symd_s3_xml_get(x, sizeof(x) - 1, "Code", out, 4), -ERANGE);
	CHECK_ERR(symd_s3_xml_get(x, sizeof(x) - 1, "Bad", out, sizeof(out)),
		  -EINVAL);
	CHECK_ERR(symd_s3_xml_get(x, sizeof(x) - 1, "Open", out, sizeof(out)),
		  -ENOENT);
	CHECK_ERR(symd_s3_xml_get(x, 10, "Code", out, sizeof(out)), -ENOENT);
}

static void *cancel_main(void *arg)
{
	usleep(100 * 1000);
	symd_s3_cancel(arg);
	return NULL;
}

/* A cancel from another thread ends a stalled transfer, without retries,
 * and every later call. */
static void t_cancel(void)
{
	struct symd_s3 *s = client();
	struct symd_s3_result r;
	pthread_t t;
	int fd = memfd_with("", 0);

	script(3, A_SLOW, A_SLOW, A_SLOW);
	pthread_create(&t, NULL, cancel_main, s);
	CHECK_ERR(symd_s3_get(s, "k", fd, 0, &r), -SYMD_S3_FAILED);
	pthread_join(t, NULL);
	CHECK(strstr(r.msg, "cancelled") != NULL);
	script(1, A_OK);
	CHECK_ERR(symd_s3_get(s, "k", fd, 0, &r), -SYMD_S3_FAILED);
	CHECK(r.attempts == 1 && strstr(r.msg, "cancelled") != NULL);
	symd_s3_cancel(NULL);
	symd_s3_free(s);
	close(fd);
}

int main(void)
{
	struct symd_s3 *s;

	signal(SIGPIPE, SIG_IGN);
	symd_s3_global_init();
	stub_start();
	t_config();
	t_xml();
	s = client();
	CHECK(s != NULL);
	t_get(s);
	t_head_delete_put(s);
	t_multipart(s);
	t_meta(s);
	symd_s3_free(s);
	t_cancel();
	symd_s3_free(NULL);
	return tap_done();
}
