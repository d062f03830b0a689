/*
 * fuzz-core.c - libFuzzer target over core_parse() (tools/core.c), the
 * reader of ELF core files behind `sym stack --core`: program headers,
 * PT_LOAD segments, and the NT_PRSTATUS, NT_PRPSINFO, NT_FILE and NT_AUXV
 * notes of every PT_NOTE segment.
 *
 * Input: one core file, in a buffer of exactly its size.  Checked against
 * core.h: the answer is 0, -ENOEXEC or -ENOMEM; on 0 every segment's file
 * bytes lie inside the input, every NT_FILE path is a NUL-terminated
 * string inside it with start <= end, and core_mem() at the start, the
 * middle and the last byte of every segment, and at each thread's SP,
 * answers a pointer inside the input with as many bytes as it says.
 * core_elf_bias() is then run over each segment's bytes (a dumped ELF
 * header of a mapped file is read that way) and must answer 0 or -ENOEXEC
 * with a NUL-terminated build ID of lowercase hex.
 */
#include "fuzz.h"

#include <errno.h>
#include "core.h"
#include "base.h"

static void check_mem(const struct core *c, const uint8_t *data, size_t size,
		      uint64_t addr)
{
	const uint8_t *p;
	size_t avail;

	p = core_mem(c, addr, &avail);
	if (!p) {
		FUZZ_CHECK(avail == 0);
		return;
	}
	FUZZ_CHECK(p >= data && p <= data + size);
	FUZZ_CHECK(avail > 0 && avail <= (size_t)(data + size - p));
}

static void check_bias(const struct core_seg *s, const uint8_t *data)
{
	char hex[129];
	uint64_t bias = 0;
	size_t i;
	int err;

	err = core_elf_bias(data + s->offset, (size_t)s->filesz, s->vaddr,
			    &bias, hex, sizeof(hex));
	FUZZ_CHECK(err == 0 || err == -ENOEXEC);
	FUZZ_CHECK(strlen(hex) < sizeof(hex));
	for (i = 0; hex[i]; i++)
		FUZZ_CHECK((hex[i] >= '0' && hex[i] <= '9') ||
			   (hex[i] >= 'a' && hex[i] <= 'f'));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct core c;
	size_t i;
	int err;

	err = core_parse(data, size, &c);
	FUZZ_CHECK(err == 0 || err == -ENOEXEC || err == -ENOMEM);
	if (err) {
		core_release(&c);
		return 0;
	}
	for (i = 0; i < c.nsegs; i++) {
		const struct core_seg *s = &c.segs[i];

		FUZZ_CHECK(s->filesz <= s->memsz);
		FUZZ_CHECK(s->filesz == 0 || (s->offset <= size &&
					      s->filesz <= size - s->offset));
		check_mem(&c, data, size, s->vaddr);
		check_mem(&c, data, size, s->vaddr + s->filesz / 2);
		if (s->filesz)
			check_mem(&c, data, size, s->vaddr + s->filesz - 1);
		/* A segment past the file's end keeps its offset with
		 * filesz 0 (core.h): no bytes to point at. */
		if (i < 64 && s->filesz)
			check_bias(s, data);
	}
	for (i = 0; i < c.nfiles; i++) {
		const char *p = c.files[i].path;

		FUZZ_CHECK(c.files[i].start <= c.files[i].end);
		FUZZ_CHECK((const uint8_t *)p >= data &&
			   (const uint8_t *)p < data + size);
		FUZZ_CHECK(memchr(p, '\0', (size_t)(data + size -
						    (const uint8_t *)p)));
	}
	for (i = 0; i < c.nthreads; i++)
		check_mem(&c, data, size, c.threads[i].regs[UNWIND_REG_SP]);
	FUZZ_CHECK(strlen(c.comm) < sizeof(c.comm));
	core_release(&c);
	FUZZ_CHECK(c.segs == NULL && c.nsegs == 0);
	return 0;
}
