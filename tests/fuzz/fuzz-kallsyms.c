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
 * byte before and after, and at addresses read from the input answers a
 * symbol at or below the address, with the offset between them, and a
 * module symbol only inside its module's range.
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

static void check_lookup(const struct ksnap *ks, uint64_t addr)
{
	struct ksnap_hit h;
	bool found = false;

	if (!ksnap_lookup(ks, addr, &h))
		return;
	check_name(h.name);
	FUZZ_CHECK(h.offset <= addr);
	for (size_t i = 0; i < ks->nsyms; i++) {
		const struct ksnap_sym *s = &ks->syms[i];
		const struct ksnap_module *m;

		if (s->name != h.name)
			continue;
		FUZZ_CHECK(s->addr == addr - h.offset);
		if (s->module) {
			m = &ks->mods[s->module - 1];
			FUZZ_CHECK(h.module == m->name);
			FUZZ_CHECK(!m->size || addr - m->start < m->size);
		} else {
			FUZZ_CHECK(!h.module);
		}
		found = true;
	}
	FUZZ_CHECK(found);
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
