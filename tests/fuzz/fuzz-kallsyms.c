/*
 * fuzz-kallsyms.c - libFuzzer target over symi_ksnap_parse() and
 * symi_ksnap_table() (libsym/ksnap.c), the reader of the kallsyms
 * snapshots `sym record` writes beside a profile, `sym symbolize
 * --kallsyms` reads back from anywhere and symd's store takes from
 * uploads (SYM_STORE_KALLSYMS), and the tables made from them.
 *
 * Input: one snapshot, in a buffer of exactly its size.  Checked against
 * kallsyms.h: the answer is 0, -EINVAL (with a "line N" message) or
 * -ENOMEM; on 0 the symbols are sorted by address, names are non-empty
 * printable ASCII without spaces, module indices name a module, build
 * IDs are lowercase hex; symi_ksnap_lookup() at each symbol's address, one
 * byte before and after, and at addresses read from the input answers
 * what a linear scan of the sorted symbols does (the last at or below
 * the address, the offset between them, a module symbol only inside its
 * module's range), through the bucket index it keeps.  Then the table
 * of the kernel and of each module with a build ID and .text: built or
 * refused as ksnap.h says, sym_table_verify() passes, and at each of its
 * symbols (first 256) the table names what symi_ksnap_lookup() does.
 */
#include "fuzz.h"

#include <errno.h>
#include <stdlib.h>
#include "ksnap.h"
#include "internal.h"
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

/* symi_ksnap_lookup() against a linear scan: the last symbol at or below
 * @addr (the sorted order puts perf's choice last at its address), and
 * a module symbol only inside its module. */
static void check_lookup(const struct symi_ksnap *ks, uint64_t addr)
{
	const struct symi_ksnap_sym *want = NULL;
	const struct symi_ksnap_module *m = NULL;
	struct symi_ksnap_hit h;
	bool got;

	for (size_t i = 0; i < ks->nsyms && ks->syms[i].addr <= addr; i++)
		want = &ks->syms[i];
	if (want && want->module) {
		m = &ks->mods[want->module - 1];
		if (m->size && addr - m->start >= m->size)
			want = NULL;
	}
	got = symi_ksnap_lookup(ks, addr, &h);
	FUZZ_CHECK(got == (want != NULL));
	if (!got)
		return;
	check_name(h.name);
	FUZZ_CHECK(h.name == want->name);
	FUZZ_CHECK(h.offset == addr - want->addr);
	FUZZ_CHECK(h.module == (m ? m->name : NULL));
}

/* The table of @id (module @mod + 1, 0: the kernel, at @base) against
 * symi_ksnap_lookup() at its symbols' addresses. */
static void check_table(const struct symi_ksnap *ks, const char *id,
			uint32_t mod, bool can)
{
	struct sym_frame fr[SYM_MAX_FRAMES];
	struct sym_table *t = NULL;
	struct symi_ksnap_hit h;
	void *buf = NULL;
	size_t len = 0, n, done = 0;
	uint64_t base = mod ? ks->mods[mod - 1].text : 0;
	int err = symi_ksnap_table(ks, id, &buf, &len);

	FUZZ_CHECK(err == 0 || err == -ENOMEM || err == -SYM_E_TOOBIG ||
		   (err == -SYM_E_NOTFOUND && !can));
	if (err)
		return;
	FUZZ_CHECK(sym_table_open(buf, len, &t) == 0);
	FUZZ_CHECK(sym_table_verify(t) == 0);
	if (!mod)
		FUZZ_CHECK(symi_ksnap_text(ks, &base));
	for (size_t i = 0; i < ks->nsyms && done < 256; i++) {
		const struct symi_ksnap_sym *s = &ks->syms[i];

		if (s->module != mod || s->addr < base ||
		    !symi_ksnap_lookup(ks, s->addr, &h) ||
		    h.mod != (mod ? &ks->mods[mod - 1] : NULL))
			continue;
		done++;
		FUZZ_CHECK(sym_table_lookup(t, s->addr - base, fr,
					    SYM_MAX_FRAMES, &n) == 0);
		FUZZ_CHECK(n == 1 && fr[0].name && !strcmp(fr[0].name, h.name));
	}
	sym_table_close(t);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symi_ksnap *ks = NULL;
	char why[256];
	int err;

	err = symi_ksnap_parse((const char *)data, size, &ks, why, sizeof(why));
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
		const struct symi_ksnap_sym *s = &ks->syms[i];

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
	if (ks->build_id[0]) {
		uint64_t text;

		check_table(ks, ks->build_id, 0, symi_ksnap_text(ks, &text));
	}
	for (size_t i = 0; i < ks->nmods && i < 16; i++) {
		const char *id = ks->mods[i].build_id;
		bool first = id[0] && strcmp(id, ks->build_id);

		/* (the table of an ID is the kernel's, else the first
		 * module's with a .text) */
		for (size_t k = 0; first && k < i; k++)
			first = !ks->mods[k].text ||
				strcmp(ks->mods[k].build_id, id);
		if (first)
			check_table(ks, id, (uint32_t)i + 1,
				    ks->mods[i].text != 0);
	}
	symi_ksnap_free(ks);
	return 0;
}
