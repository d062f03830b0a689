/*
 * fuzz-s3xml.c - libFuzzer target over symd_s3_xml_get() (symd/s3.c), the
 * reader of S3's XML replies: the UploadId of a multipart start, the ETag
 * of a completion, the Code and Message of an error.
 *
 * One input is one reply body, copied to a heap buffer of exactly its
 * size (no NUL after it), so a read past it is caught.  For each tag the
 * client asks for, and with output buffers of 1, 8 and 1024 bytes: a
 * documented code; on success a NUL-terminated string shorter than the
 * buffer and than the input (entities decode to one byte each); the same
 * answer from the larger buffers when a small one
 * sufficed; on failure an empty string.
 */
#include "fuzz.h"

#include <errno.h>
#include <string.h>

#include "s3.h"
#include "base.h"

static const char *const tags[] = {
	"UploadId", "ETag", "Code", "Message", "Key",
};

static void one(const char *xml, size_t len, const char *tag)
{
	static const size_t sizes[] = { 1, 8, 1024 };
	char out[3][1024], first[1024] = "";
	int rc[3];

	for (int i = 0; i < 3; i++) {
		memset(out[i], 'x', sizeof(out[i]));
		rc[i] = symd_s3_xml_get(xml, len, tag, out[i], sizes[i]);
		FUZZ_CHECK(rc[i] == 0 || rc[i] == -ENOENT || rc[i] == -ERANGE ||
			   rc[i] == -EINVAL);
		if (rc[i]) {
			FUZZ_CHECK(out[i][0] == '\0');
			continue;
		}
		FUZZ_CHECK(memchr(out[i], '\0', sizes[i]) != NULL);
		FUZZ_CHECK(strlen(out[i]) < sizes[i] && strlen(out[i]) <= len);
		if (!first[0])
			memcpy(first, out[i], strlen(out[i]) + 1);
		else
			FUZZ_CHECK(!strcmp(first, out[i]));
	}
	/* -ENOENT and -EINVAL do not depend on the buffer's size. */
	FUZZ_CHECK((rc[0] == -ENOENT) == (rc[2] == -ENOENT));
	FUZZ_CHECK(rc[2] != -ERANGE || len >= 1024);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *xml = malloc(size ? size : 1);

	if (!xml)
		return 0;
	memcpy(xml, data, size);
	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++)
		one(xml, size, tags[i]);
	free(xml);
	return 0;
}
