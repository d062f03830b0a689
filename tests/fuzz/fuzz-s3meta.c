/*
 * fuzz-s3meta.c - libFuzzer target over symd_s3_meta_add_header() and
 * symd_s3_meta_get() (symd/s3.c): the reader of the object store's
 * x-amz-meta-* answer headers (upload metadata: quality, uploader, time,
 * generation; docs/object-store.md) and its lookup.
 *
 * One input is the headers after "x-amz-meta-", one a line ('\n'
 * separated), each copied to a heap buffer of exactly its size (no NUL
 * after it), so a read past it is caught.  After each line: a documented
 * code; the metadata NUL-terminated within SYMD_S3_META_MAX, unchanged on
 * an error, and made of "name=value\n" lines of printable ASCII with
 * lowercase names.  Then every name found answers symd_s3_meta_get()
 * with the first line's value, and buffers too small say -ERANGE.
 */
#include "fuzz.h"

#include <errno.h>
#include <string.h>

#include "s3.h"
#include "base.h"

static void check_meta(const char *meta)
{
	size_t len = strnlen(meta, SYMD_S3_META_MAX);

	FUZZ_CHECK(len < SYMD_S3_META_MAX);
	for (const char *p = meta; *p;) {
		const char *nl = strchr(p, '\n'), *eq = strchr(p, '=');

		FUZZ_CHECK(nl && eq && eq < nl && eq > p);
		for (const char *c = p; c < nl; c++)
			FUZZ_CHECK(*c >= 0x20 && *c <= 0x7e &&
				   (c >= eq || !(*c >= 'A' && *c <= 'Z')));
		p = nl + 1;
	}
}

/* Is @name (@nl bytes) the name of a line of [@meta, @end)? */
static bool named_before(const char *meta, const char *end, const char *name,
			 size_t nl)
{
	for (const char *p = meta; p < end;) {
		const char *eq = strchr(p, '=');

		if ((size_t)(eq - p) == nl && !memcmp(p, name, nl))
			return true;
		p = strchr(p, '\n') + 1;
	}
	return false;
}

/* Every name: symd_s3_meta_get() gives its first line's value, and
 * -ERANGE (with "") in a buffer too small for it. */
static void check_get(const struct symd_s3_result *r)
{
	for (const char *p = r->meta; *p;) {
		const char *nl = strchr(p, '\n'), *eq = strchr(p, '=');
		char name[SYMD_S3_META_MAX], v[SYMD_S3_META_MAX], small[4];
		size_t vl = (size_t)(nl - eq - 1);
		int rc;

		memcpy(name, p, (size_t)(eq - p));
		name[eq - p] = '\0';
		rc = symd_s3_meta_get(r, name, v, sizeof(v));
		FUZZ_CHECK(rc == 0);
		if (!named_before(r->meta, p, p, (size_t)(eq - p)))
			FUZZ_CHECK(strlen(v) == vl && !memcmp(v, eq + 1, vl));
		rc = symd_s3_meta_get(r, name, small, sizeof(small));
		FUZZ_CHECK(rc == (strlen(v) < sizeof(small) ? 0 : -ERANGE));
		FUZZ_CHECK(rc == 0 ? !strcmp(small, v) : small[0] == '\0');
		p = nl + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symd_s3_result r;
	char before[SYMD_S3_META_MAX];
	size_t off = 0;

	memset(&r, 0, sizeof(r));
	while (off < size) {
		const uint8_t *end = memchr(data + off, '\n', size - off);
		size_t n = end ? (size_t)(end - data - off) : size - off;
		char *line = malloc(n ? n : 1);
		int rc;

		if (!line)
			return 0;
		memcpy(line, data + off, n);
		memcpy(before, r.meta, sizeof(before));
		rc = symd_s3_meta_add_header(r.meta, line, n);
		FUZZ_CHECK(rc == 0 || rc == -EINVAL || rc == -ERANGE);
		if (rc)
			FUZZ_CHECK(!memcmp(before, r.meta, sizeof(before)));
		check_meta(r.meta);
		free(line);
		off += n + 1;
	}
	check_get(&r);
	return 0;
}
