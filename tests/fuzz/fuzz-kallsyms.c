/*
 * fuzz-kallsyms.c - libFuzzer target over ksnap_parse() (tools/kallsyms.c),
 * the reader of the kallsyms snapshots `sym record` writes beside a
 * profile and `sym symbolize --kallsyms` reads back from anywhere.
 *
 * Input: one snapshot, in a buffer of exactly its size.  Checked against
 * kallsyms.h: the answer is 0, -EINVAL (with a "line N" message) or
 * -ENOMEM; on 0 the symbols are sorted by address, names are non-empty
 * printable ASCII without spaces, module indices name a module, build
 * IDs are lowercase hex; ksnap_lookup() at each symbol's address, one
 * byte before and after, and at addresses read from the input answers
 * what a linear scan of the sorted symbols does (the last at or below
 * the address, the offset between them, a module symbol only inside its
 * module's range), through the bucket index it keeps.
 */
#include "fuzz.h"

#include <errno.h>
#include "kallsyms.h"
#include "base.h"

static void check_name(const char *s)
{
	FUZZ_CHECK(s && *s);
	for (; *s; s++)
		FUZZ_CHECK(*s > 0x20 && *s <= 0x7e);
}

static void check_hex(const char *s)
{
	for (; *s; s++)
		FUZZ_CHECK((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f'));
}

/* ksnap_lookup() against a linear scan: the last symbol at or below
 * @addr (the sorted order puts perf's choice last at its address), and
 * a module symbol only inside its module. */
static void check_lookup(const struct ksnap *ks, uint64_t addr)
{
	const struct ksnap_sym *want = NULL;
	const struct ksnap_module *m = NULL;
	struct ksnap_hit h;
	bool got;

	for (size_t i = 0; i < ks->nsyms && ks->syms[i].addr <= addr; i++)
		want = &ks->syms[i];
	if (want && want->module) {
		m = &ks->mods[want->module - 1];
		if (m->size && addr - m->start >= m->size)
			want = NULL;
	}
	got = ksnap_lookup(ks, addr, &h);
	FUZZ_CHECK(got == (want != NULL));
	if (!got)
		return;
	check_name(h.name);
	FUZZ_CHECK(h.name == want->name);
	FUZZ_CHECK(h.offset == addr - want->addr);
	FUZZ_CHECK(h.module == (m ? m->name : NULL));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ksnap *ks = NULL;
	char why[256];
	int err;

	err = ksnap_parse((const char *)data, size, &ks, why, sizeof(why));
	FUZZ_CHECK(err == 0 || err == -EINVAL || err == -ENOMEM);
	if (err) {
		FUZZ_CHECK(!ks && why[0]);
		FUZZ_CHECK(err != -EINVAL || strstr(why, "kallsyms snapshot"));
		return 0;
	}
	FUZZ_CHECK(ks && ks->release);
	check_hex(ks->build_id);
	for (size_t i = 0; i < ks->nmods; i++) {
		check_name(ks->mods[i].name);
		check_hex(ks->mods[i].build_id);
	}
	for (size_t i = 0; i < ks->nsyms; i++) {
		const struct ksnap_sym *s = &ks->syms[i];

		check_name(s->name);
		FUZZ_CHECK(s->module <= ks->nmods);
		FUZZ_CHECK(!i || s[-1].addr <= s->addr);
		if (i < 256) {
			check_lookup(ks, s->addr);
			check_lookup(ks, s->addr - 1);
			check_lookup(ks, s->addr + 1);
		}
	}
	for (size_t i = 0; i + 8 <= size && i < 512; i += 8) {
		uint64_t a;

		memcpy(&a, data + i, 8);
		check_lookup(ks, a);
	}
	ksnap_free(ks);
	return 0;
}
