/*
 * fuzz-kmods.c - libFuzzer target over the loaded-module reader of `sym
 * record` and `sym kallsyms` (tools/kallsyms.c): ksnap_kmod_line() on
 * each line of the input as /proc/modules would have it,
 * ksnap_kmod_text() on the whole input as a sections/.text file, then
 * ksnap_kmods_sort(), ksnap_kmod_find() and ksnap_kmod_map() on the
 * modules read.  With --root, /proc and /sys are whatever a directory
 * holds: outside bytes.
 *
 * Checked against kallsyms.h: a line is taken or refused, a module taken
 * has a name of 1 to 55 bytes without blanks or '/', a start that is
 * not 0 and a range within 2^64; ksnap_kmod_find() at each module's
 * first and last byte and one past each end answers what a linear scan
 * of the sorted modules does (the last starting at or below, while
 * inside it); a map is made only with a build ID and a .text inside the
 * module, and then says the module's range, .text, build ID and
 * "[NAME]".
 */
#include "fuzz.h"

#include <string.h>
#include "kallsyms.h"
#include "base.h"

#define MAX_MODS 256

static const struct ksnap_kmod *scan(const struct ksnap_kmod *m, size_t n,
				     uint64_t a)
{
	const struct ksnap_kmod *last = NULL;

	for (size_t i = 0; i < n && m[i].start <= a; i++)
		last = &m[i];
	return last && a - last->start < last->size ? last : NULL;
}

static void check_find(const struct ksnap_kmod *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t at[4] = { m[i].start, m[i].start + m[i].size - 1,
				   m[i].start + m[i].size, m[i].start - 1 };

		for (size_t k = 0; k < 4; k++)
			FUZZ_CHECK(ksnap_kmod_find(m, n, at[k]) ==
				   scan(m, n, at[k]));
	}
}

static void check_map(struct ksnap_kmod *m, uint64_t text)
{
	struct sym_prof_map pm;
	char path[64];

	m->text = text;
	memcpy(m->build_id, "0123abcd", 9);
	if (!ksnap_kmod_map(m, &pm, path, sizeof(path))) {
		FUZZ_CHECK(text < m->start || text - m->start >= m->size);
		return;
	}
	FUZZ_CHECK(pm.start == m->start && pm.end == m->start + m->size &&
		   pm.pgoff == text && pm.vaddr == pm.start && pm.pid == -1 &&
		   pm.kind == SYM_PROF_MAP_KERNEL &&
		   !strcmp(pm.build_id, "0123abcd"));
	FUZZ_CHECK(path[0] == '[' && !strncmp(path + 1, m->name,
					      strlen(m->name)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ksnap_kmod mods[MAX_MODS];
	char line[4096];
	size_t n = 0, pos = 0;
	uint64_t text;

	if (ksnap_kmod_text((const char *)data, size, &text))
		FUZZ_CHECK(size >= 3 && data[0] == '0' && data[1] == 'x');
	else
		FUZZ_CHECK(text == 0);
	while (pos < size && n < MAX_MODS) {
		const uint8_t *nl = memchr(data + pos, '\n', size - pos);
		size_t len = (nl ? (size_t)(nl - data) : size) - pos;

		if (len > sizeof(line) - 1)
			len = sizeof(line) - 1;
		memcpy(line, data + pos, len);
		line[len] = '\0';
		pos = nl ? (size_t)(nl - data) + 1 : size;
		if (ksnap_kmod_line(line, &mods[n]))
			continue;
		FUZZ_CHECK(mods[n].name[0] && strlen(mods[n].name) <= 55 &&
			   !strpbrk(mods[n].name, " \t\n/"));
		FUZZ_CHECK(mods[n].start &&
			   mods[n].start + mods[n].size >= mods[n].start);
		FUZZ_CHECK(!mods[n].text && !mods[n].build_id[0]);
		n++;
	}
	ksnap_kmods_sort(mods, n);
	for (size_t i = 1; i < n; i++)
		FUZZ_CHECK(mods[i - 1].start <= mods[i].start);
	check_find(mods, n);
	for (size_t i = 0; i < n; i++)
		check_map(&mods[i], text ? text : mods[i].start + i);
	return 0;
}
