/*
 * t-pprof.c - sym_prof_write_pprof(), sym_prof_read_pprof() and
 * sym_prof_read_file().
 *
 * - A profile with every kind of map (non-PIE vaddr, kernel, vDSO, anon,
 *   a guessed vaddr, no build ID), processes, threads, every stack flag,
 *   exact PCs above the leaf, a return address as a leaf, frames without
 *   a map and a stack without frames goes to pprof and back: the two
 *   profiles are equal field by field and write the same raw text.
 * - The encoded protobuf is what docs/pprof.md promises (decoded here
 *   with the generated code): runtime addresses, one location per (map,
 *   address, flag), mapping fields, sample types, labels, "#sym-" comments.
 * - Plain (not gzipped) protobuf reads the same.
 * - A foreign profile (no "#sym-" comments) gets guessed vaddrs, the
 *   leaf-exact rule, a header from pprof's fields; a renumbered one of
 *   ours keeps its vaddrs through the range check.
 * - Each malformed input fails with -SYM_E_BADPROFILE and a message that
 *   names the problem; deep stacks are cut and flagged.
 * - sym_prof_read_file() tells raw, gzipped raw, pprof and plain pprof
 *   apart.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "pprof.h"	/* the generated code and its Pb* aliases */
#include "prof-test.h"
#include "tap.h"
#include "base.h"

/* What @fn writes to a memfd. */
static int capture(const struct sym_prof *p, int pprof, uint8_t **buf,
		   size_t *len)
{
	int fd = memfd_create("t-pprof", 0), err;
	off_t end;

	if (fd < 0)
		return -errno;
	err = pprof ? sym_prof_write_pprof(p, fd) : sym_prof_write(p, fd);
	if (err)
		goto out;
	end = lseek(fd, 0, SEEK_END);
	*buf = malloc((size_t)end + 1);
	if (!*buf) {
		err = -ENOMEM;
		goto out;
	}
	*len = (size_t)pread(fd, *buf, (size_t)end, 0);
	(*buf)[*len] = '\0';
out:
	close(fd);
	return err;
}

static char *raw_text(const struct sym_prof *p)
{
	uint8_t *b = NULL;
	size_t n;

	return capture(p, 0, &b, &n) == 0 ? (char *)b : NULL;
}

static int same_header(const struct sym_prof_header *a,
		       const struct sym_prof_header *b)
{
	return same_str(a->host, b->host) && same_str(a->tool, b->tool) &&
	       same_str(a->tool_version, b->tool_version) &&
	       a->start_ns == b->start_ns && a->duration_ns == b->duration_ns &&
	       same_str(a->event, b->event) && same_str(a->mode, b->mode) &&
	       a->frequency == b->frequency && a->period == b->period &&
	       same_str(a->weight_unit, b->weight_unit) &&
	       a->samples == b->samples && a->lost == b->lost &&
	       a->throttled == b->throttled && a->dropped == b->dropped &&
	       memcmp(a->flagged, b->flagged, sizeof(a->flagged)) == 0 &&
	       a->pidns == b->pidns;
}

/* Field-by-field equality of two profiles; prints the first difference. */
static int same_prof(const struct sym_prof *a, const struct sym_prof *b)
{
	size_t i, j;

	if (!same_header(sym_prof_header(a), sym_prof_header(b)) ||
	    !same_str(sym_prof_release(a), sym_prof_release(b))) {
		printf("#   headers differ\n");
		return 0;
	}
	if (sym_prof_nmaps(a) != sym_prof_nmaps(b) ||
	    sym_prof_nstacks(a) != sym_prof_nstacks(b)) {
		printf("#   %zu/%zu maps, %zu/%zu stacks\n", sym_prof_nmaps(a),
		       sym_prof_nmaps(b), sym_prof_nstacks(a),
		       sym_prof_nstacks(b));
		return 0;
	}
	for (i = 0; i < sym_prof_nmaps(a); i++) {
		const struct sym_prof_map *x = sym_prof_map(a, (uint32_t)i);
		const struct sym_prof_map *y = sym_prof_map(b, (uint32_t)i);

		if (x->id != y->id || x->kind != y->kind || x->pid != y->pid ||
		    x->flags != y->flags || x->start != y->start ||
		    x->end != y->end || x->pgoff != y->pgoff ||
		    x->vaddr != y->vaddr || !same_str(x->build_id, y->build_id) ||
		    !same_str(x->path, y->path)) {
			printf("#   map %zu differs\n", i);
			return 0;
		}
	}
	for (i = 0; i < sym_prof_nstacks(a); i++) {
		const struct sym_prof_stack *x = sym_prof_stack(a, i);
		const struct sym_prof_stack *y = sym_prof_stack(b, i);

		if (x->count != y->count || x->weight != y->weight ||
		    x->pid != y->pid || x->tid != y->tid ||
		    x->flags != y->flags || x->nframes != y->nframes) {
			printf("#   stack %zu differs\n", i);
			return 0;
		}
		for (j = 0; j < x->nframes; j++)
			if (x->frames[j].addr != y->frames[j].addr ||
			    x->frames[j].map != y->frames[j].map ||
			    x->frames[j].flags != y->frames[j].flags) {
				printf("#   stack %zu frame %zu differs\n", i, j);
				return 0;
			}
	}
	return 1;
}

#define R SYM_PROF_FRAME_RETURN
#define NOMAP SYM_PROF_NOMAP

/* The profile of the round trip. */
static struct sym_prof *make_prof(const char *weight_unit)
{
	static const struct sym_prof_map maps[] = {
		/* PIE: vaddr == pgoff. */
		{ .kind = SYM_PROF_MAP_FILE, .pid = 4242, .start = 0x55d0c0001000,
		  .end = 0x55d0c0002000, .pgoff = 0x1000, .vaddr = 0x1000,
		  .build_id = "4f1c0de2", .path = "/usr/local/bin/work" },
		/* Non-PIE: vaddr is not the offset (what pprof cannot say). */
		{ .kind = SYM_PROF_MAP_FILE, .pid = 4242, .start = 0x401000,
		  .end = 0x402000, .pgoff = 0x1000, .vaddr = 0x401000,
		  .build_id = "00112233445566778899aabbccddeeff00112233",
		  .path = "/opt/my app/bin" },
		{ .kind = SYM_PROF_MAP_VDSO, .pid = 4242, .start = 0x7ffd1000,
		  .end = 0x7ffd3000, .pgoff = 0, .vaddr = 0,
		  .build_id = "abcd", .path = "[vdso]" },
		{ .kind = SYM_PROF_MAP_KERNEL, .pid = -1,
		  .start = 0xffffffff81000000, .end = 0xffffffff82000000,
		  .pgoff = 0, .vaddr = 0xffffffff81000000,
		  .path = "[kernel.kallsyms]" },
		{ .kind = SYM_PROF_MAP_ANON, .pid = 4243, .start = 0x10000,
		  .end = 0x20000 },
		{ .kind = SYM_PROF_MAP_FILE, .pid = 4243,
		  .flags = SYM_PROF_MAP_VADDR_GUESSED, .start = 0x7f0000000000,
		  .end = 0x7f0000100000, .pgoff = 0x2000, .vaddr = 0x2000,
		  .path = "/lib/libx.so" },
		/* Same range in another process (fork), another id. */
		{ .kind = SYM_PROF_MAP_FILE, .pid = 4244, .start = 0x55d0c0001000,
		  .end = 0x55d0c0002000, .pgoff = 0x1000, .vaddr = 0x1000,
		  .build_id = "4f1c0de2", .path = "/usr/local/bin/work" },
	};
	static const struct sym_prof_frame f0[] = {
		{ 0x1139, 0, 0 }, { 0x1187, 0, R }, { 0x401234, 1, R },
		{ 0x1065, 0, R },
	};
	/* An exact PC above the leaf (a signal frame) and the same
	 * address as a return address. */
	static const struct sym_prof_frame f1[] = {
		{ 0x1139, 0, 0 }, { 0x401500, 1, 0 }, { 0x401500, 1, R },
		{ 0x1139, 0, R },
	};
	/* A return address as the leaf, frames without a map, kernel. */
	static const struct sym_prof_frame f2[] = {
		{ 0x1187, 0, R }, { 0xdeadbeef, NOMAP, R },
		{ 0xffffffff81234567, 3, 0 }, { 0x1500, 2, R },
	};
	static const struct sym_prof_frame f3[] = {
		{ 0x15000, 4, 0 }, { 0x2345, 5, R }, { 0x1139, 6, R },
		{ 0x42, NOMAP, 0 },
	};
	struct sym_prof_header h = {
		.host = "build 7", .tool = "sym-record", .tool_version = "0.1.0",
		.start_ns = 1796059275123456789LL, .duration_ns = 10000123456ULL,
		.event = "cpu-clock", .mode = "fp", .frequency = 99,
		.period = 10101010, .weight_unit = weight_unit, .samples = 1000,
		.lost = 1, .throttled = 2, .dropped = 3,
		.flagged = { 4, 5, 6, 7, 8 }, .pidns = 4026531836ULL,
	};
	struct sym_prof_stack st[] = {
		{ 693, 7000000000, 4242, 4242, 0, 4, f0 },
		{ 297, 3000000000, 4242, 4243, SYM_PROF_LEAF, 4, f1 },
		{ 3, 30303030, 4242, 0, SYM_PROF_TRUNCATED | SYM_PROF_BADRETURN |
		  SYM_PROF_UNWIND | SYM_PROF_KERNEL, 4, f2 },
		{ 5, 50000000, 4243, 4245, SYM_PROF_UNKNOWN_FLAG, 4, f3 },
		{ 2, 20000000, 0, 0, 0, 0, NULL },
	};
	struct sym_prof *p = NULL;
	size_t i;
	int err = sym_prof_new(&p);

	if (!weight_unit || strcmp(weight_unit, "samples") == 0)
		for (i = 0; i < sizeof(st) / sizeof(st[0]); i++)
			st[i].weight = st[i].count;
	err = err ? err : sym_prof_set_header(p, &h);
	err = err ? err : sym_prof_set_release(p, "6.18.44-fc-v1045");
	for (i = 0; !err && i < sizeof(maps) / sizeof(maps[0]); i++)
		err = sym_prof_add_map(p, &maps[i], NULL);
	err = err ? err : sym_prof_add_process(p, 4242, 4026531836ULL, 42,
					       "work");
	err = err ? err : sym_prof_add_process(p, 4243, 0, 0, "with space");
	err = err ? err : sym_prof_add_thread(p, 4242, 4243, "worker-%1");
	err = err ? err : sym_prof_add_thread(p, 4242, 4242, "-");
	for (i = 0; !err && i < sizeof(st) / sizeof(st[0]); i++)
		err = sym_prof_add_stack(p, &st[i]);
	if (err) {
		printf("#   make_prof: %d\n", err);
		sym_prof_free(p);
		return NULL;
	}
	return p;
}

static uint8_t *gunzip_all(const uint8_t *in, size_t len, size_t *out_len)
{
	size_t cap = 1 << 20;
	uint8_t *out = malloc(cap);
	z_stream zs = { 0 };

	if (!out || inflateInit2(&zs, 16 + MAX_WBITS) != Z_OK)
		return NULL;
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	if (inflate(&zs, Z_FINISH) != Z_STREAM_END) {
		free(out);
		out = NULL;
	}
	*out_len = zs.total_out;
	inflateEnd(&zs);
	return out;
}

static uint8_t *gzip_all(const uint8_t *in, size_t len, size_t *out_len)
{
	size_t cap = len + 1024;
	uint8_t *out = malloc(cap);
	z_stream zs = { 0 };

	if (!out || deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8,
				 Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	deflate(&zs, Z_FINISH);
	*out_len = zs.total_out;
	deflateEnd(&zs);
	return out;
}

static const char *pb_str(const PbProfile *pb, int64_t i)
{
	return i >= 0 && (size_t)i < pb->n_string_table ?
	       pb->string_table[i] : "<bad index>";
}

static int64_t label_num(const PbProfile *pb, const PbSample *s,
			 const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (strcmp(pb_str(pb, s->label[i]->key), key) == 0)
			return s->label[i]->num;
	return -1;
}

static const char *label_str(const PbProfile *pb, const PbSample *s,
			     const char *key)
{
	for (size_t i = 0; i < s->n_label; i++)
		if (strcmp(pb_str(pb, s->label[i]->key), key) == 0)
			return pb_str(pb, s->label[i]->str);
	return NULL;
}

static const PbLocation *loc_by_id(const PbProfile *pb, uint64_t id)
{
	for (size_t i = 0; i < pb->n_location; i++)
		if (pb->location[i]->id == id)
			return pb->location[i];
	return NULL;
}

static int has_comment(const PbProfile *pb, const char *prefix)
{
	for (size_t i = 0; i < pb->n_comment; i++)
		if (strncmp(pb_str(pb, pb->comment[i]), prefix,
			    strlen(prefix)) == 0)
			return 1;
	return 0;
}

/* The encoded protobuf, checked against docs/pprof.md. */
static void check_encoding(const struct sym_prof *p, const uint8_t *plain,
			   size_t len)
{
	PbProfile *pb = perftools__profiles__profile__unpack(NULL, len, plain);
	const PbSample *s;
	const PbLocation *l;
	size_t i, nret_leaf = 0;

	CHECK(pb != NULL);
	if (!pb)
		return;
	CHECK(pb->n_string_table > 0 && pb->string_table[0][0] == '\0');
	CHECK(pb->n_sample_type == 2);
	CHECK(strcmp(pb_str(pb, pb->sample_type[0]->type), "samples") == 0 &&
	      strcmp(pb_str(pb, pb->sample_type[0]->unit), "count") == 0);
	CHECK(strcmp(pb_str(pb, pb->sample_type[1]->type), "cpu") == 0 &&
	      strcmp(pb_str(pb, pb->sample_type[1]->unit), "nanoseconds") == 0);
	CHECK(pb->period_type &&
	      strcmp(pb_str(pb, pb->period_type->type), "cpu") == 0 &&
	      strcmp(pb_str(pb, pb->period_type->unit), "nanoseconds") == 0);
	CHECK(pb->period == 10101010);
	CHECK(pb->time_nanos == 1796059275123456789LL);
	CHECK(pb->duration_nanos == 10000123456LL);

	/* Mappings: id i + 1 is map i. */
	CHECK(pb->n_mapping == sym_prof_nmaps(p));
	for (i = 0; i < pb->n_mapping && i < sym_prof_nmaps(p); i++) {
		const struct sym_prof_map *m = sym_prof_map(p, (uint32_t)i);
		const PbMapping *pm = pb->mapping[i];

		if (pm->id != i + 1 || pm->memory_start != m->start ||
		    pm->memory_limit != m->end || pm->file_offset != m->pgoff ||
		    strcmp(pb_str(pb, pm->filename), m->path ? m->path : "") ||
		    strcmp(pb_str(pb, pm->build_id),
			   m->build_id ? m->build_id : ""))
			break;
	}
	CHECK(i == pb->n_mapping);

	/* Sample 0: runtime addresses of the leaf and of the non-PIE frame;
	 * pid and tid labels; values. */
	CHECK(pb->n_sample == sym_prof_nstacks(p));
	s = pb->sample[0];
	CHECK(s->n_value == 2 && s->value[0] == 693 &&
	      s->value[1] == 7000000000LL);
	CHECK(s->n_location_id == 4);
	l = loc_by_id(pb, s->location_id[0]);
	CHECK(l && l->mapping_id == 1 && l->address == 0x55d0c0001139 &&
	      l->n_line == 0);
	l = loc_by_id(pb, s->location_id[2]);
	CHECK(l && l->mapping_id == 2 && l->address == 0x401234);
	CHECK(label_num(pb, s, "pid") == 4242 && label_num(pb, s, "tid") == 4242);
	CHECK(label_str(pb, s, "sym_flags") == NULL);

	/* Sample 1: the exact PC and the return address at 0x401500 are two
	 * locations; the leaf location of sample 0 is reused (same map,
	 * address and flag) but 0x1139 as a return address is another. */
	s = pb->sample[1];
	CHECK(s->location_id[1] != s->location_id[2]);
	CHECK(s->location_id[0] == pb->sample[0]->location_id[0]);
	CHECK(s->location_id[3] != s->location_id[0]);
	CHECK(same_str(label_str(pb, s, "sym_flags"), "leaf"));
	CHECK(label_num(pb, s, "tid") == 4243);

	/* Sample 2: NOMAP frame has mapping 0 and its own address; kernel
	 * addresses are runtime ones. */
	s = pb->sample[2];
	l = loc_by_id(pb, s->location_id[1]);
	CHECK(l && l->mapping_id == 0 && l->address == 0xdeadbeef);
	l = loc_by_id(pb, s->location_id[2]);
	CHECK(l && l->mapping_id == 4 && l->address == 0xffffffff81234567);
	l = loc_by_id(pb, s->location_id[3]);
	CHECK(l && l->mapping_id == 3 && l->address == 0x7ffd1000 + 0x1500);
	CHECK(same_str(label_str(pb, s, "sym_flags"),
		       "truncated,badreturn,unwind,kernel"));
	CHECK(label_num(pb, s, "tid") == -1);	/* 0: no label */
	CHECK(same_str(label_str(pb, pb->sample[3], "sym_flags"), "unknown"));
	CHECK(pb->sample[4]->n_location_id == 0 && pb->sample[4]->n_label == 0);

	/* Unique locations: 4 + 3 + 3 + 4 (sample 1 reuses the leaf of
	 * sample 0, sample 2 its return address 0x1187 as its own leaf). */
	CHECK(pb->n_location == 14);
	for (i = 0; i < pb->n_location; i++)
		nret_leaf += pb->location[i]->id != i + 1;
	CHECK(nret_leaf == 0);

	CHECK(pb->n_comment > 0 &&
	      strncmp(pb_str(pb, pb->comment[0]), "#sym-pprof 1 ", 13) == 0);
	CHECK(has_comment(pb, "#sym-map 2 start=401000 limit=402000 "
			      "offset=1000 vaddr=401000 kind=file pid=4242"));
	CHECK(has_comment(pb, "#sym-map 6 start=7f0000000000 limit=7f0000100000"
			      " offset=2000 vaddr=2000 kind=file pid=4243 "
			      "vaddr-guessed"));
	CHECK(has_comment(pb, "#sym-header host build%207"));
	CHECK(has_comment(pb, "#sym-process 4243 0 0 with%20space"));
	CHECK(has_comment(pb, "#sym-thread 4242 4242 %2D"));
	/* Exceptions to pprof's rule: the PC above the leaf (sample 1) and
	 * the NOMAP PC outermost (sample 3); the return-address leaf of
	 * sample 2. */
	CHECK(has_comment(pb, "#sym-pc "));
	CHECK(has_comment(pb, "#sym-ret "));
	for (i = 0; i < pb->n_comment; i++)
		CHECK(pb_str(pb, pb->comment[i])[0] == '#');
	perftools__profiles__profile__free_unpacked(pb, NULL);
}

static void check_roundtrip(void)
{
	struct sym_prof *p = make_prof("ns"), *q = NULL, *r = NULL;
	uint8_t *gz = NULL, *plain = NULL;
	size_t gzlen = 0, plen = 0;
	char msg[256] = "", *t1 = NULL, *t2 = NULL;

	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_ERR(capture(p, 1, &gz, &gzlen), 0);
	CHECK(gzlen > 2 && gz[0] == 0x1f && gz[1] == 0x8b);
	CHECK_ERR(sym_prof_read_pprof(gz, gzlen, &q, msg, sizeof(msg)), 0);
	if (msg[0])
		printf("#   %s\n", msg);
	CHECK(q && same_prof(p, q));
	t1 = raw_text(p);
	t2 = q ? raw_text(q) : NULL;
	CHECK(t1 && t2 && strcmp(t1, t2) == 0);
	/* Processes and threads came back. */
	if (q) {
		uint64_t pidns = 0;
		int32_t nspid = 0;

		CHECK(same_str(sym_prof_process(q, 4242, &pidns, &nspid),
			       "work") && pidns == 4026531836ULL && nspid == 42);
		CHECK(same_str(sym_prof_process(q, 4243, NULL, NULL),
			       "with space"));
		CHECK(same_str(sym_prof_thread(q, 4243), "worker-%1"));
		CHECK(same_str(sym_prof_thread(q, 4242), "-"));
	}

	plain = gunzip_all(gz, gzlen, &plen);
	CHECK(plain != NULL);
	if (plain) {
		check_encoding(p, plain, plen);
		CHECK_ERR(sym_prof_read_pprof(plain, plen, &r, msg,
					      sizeof(msg)), 0);
		CHECK(r && same_prof(p, r));
	}
	free(t1);
	free(t2);
	free(gz);
	free(plain);
	sym_prof_free(p);
	sym_prof_free(q);
	sym_prof_free(r);
}

/* Weights in samples: one value per sample when they equal the counts. */
static void check_samples_unit(void)
{
	struct sym_prof *p = make_prof("samples"), *q = NULL;
	uint8_t *gz = NULL, *plain = NULL;
	size_t gzlen = 0, plen = 0;
	PbProfile *pb;

	CHECK(p != NULL);
	if (!p)
		return;
	CHECK_ERR(capture(p, 1, &gz, &gzlen), 0);
	plain = gunzip_all(gz, gzlen, &plen);
	pb = plain ? perftools__profiles__profile__unpack(NULL, plen, plain) :
		     NULL;
	CHECK(pb && pb->n_sample_type == 1 && pb->sample[0]->n_value == 1);
	if (pb)
		perftools__profiles__profile__free_unpacked(pb, NULL);
	CHECK_ERR(sym_prof_read_pprof(gz, gzlen, &q, NULL, 0), 0);
	CHECK(q && same_prof(p, q));
	free(gz);
	free(plain);
	sym_prof_free(p);
	sym_prof_free(q);
}

/*
 * A small foreign profile built with the generated code: two mappings
 * (a file, the kernel), three locations, samples with labels, no
 * "#sym-" comments.
 */
struct foreign {
	PbProfile pb;
	PbValueType vt[2], *vtp[2], period;
	PbMapping m[3], *mp[3];
	PbLocation l[4], *lp[4];
	PbLine line, *linep;
	PbFunction fn, *fnp;
	PbSample s[2], *sp[2];
	uint64_t ids0[3], ids1[2];
	int64_t v0[2], v1[2];
	PbLabel lab[3], *labp[3];
	int64_t comment;
	char *strs[16];
};

static void foreign_init(struct foreign *f)
{
	static const char *const strs[] = {
		"", "samples", "count", "cpu", "nanoseconds", "/bin/app",
		"ABCDEF01", "[kernel.kallsyms]", "pid", "tid", "main",
		"app.c", "a comment", "sym_flags", "leaf,bogus",
	};
	size_t i;

	memset(f, 0, sizeof(*f));
	f->pb = (PbProfile)PERFTOOLS__PROFILES__PROFILE__INIT;
	for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		f->strs[i] = (char *)strs[i];
	f->pb.string_table = f->strs;
	f->pb.n_string_table = sizeof(strs) / sizeof(strs[0]);
	for (i = 0; i < 2; i++) {
		f->vt[i] = (PbValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
		f->vtp[i] = &f->vt[i];
	}
	f->vt[0].type = 1, f->vt[0].unit = 2;
	f->vt[1].type = 3, f->vt[1].unit = 4;
	f->pb.sample_type = f->vtp;
	f->pb.n_sample_type = 2;
	f->period = f->vt[1];
	f->pb.period_type = &f->period;
	f->pb.period = 10000000;
	f->pb.time_nanos = 1000;
	f->pb.duration_nanos = 2000000000;

	for (i = 0; i < 3; i++) {
		f->m[i] = (PbMapping)PERFTOOLS__PROFILES__MAPPING__INIT;
		f->mp[i] = &f->m[i];
	}
	/* Ids need not be 1..n. */
	f->m[0].id = 7, f->m[0].memory_start = 0x400000;
	f->m[0].memory_limit = 0x500000, f->m[0].file_offset = 0;
	f->m[0].filename = 5, f->m[0].build_id = 6;
	f->m[1].id = 3, f->m[1].memory_start = 0xffffffff81000000;
	f->m[1].memory_limit = 0xffffffff82000000, f->m[1].filename = 7;
	f->m[2].id = 9, f->m[2].memory_start = 0x7f0000001000;
	f->m[2].memory_limit = 0x7f0000002000, f->m[2].file_offset = 0x1000;
	f->pb.mapping = f->mp;
	f->pb.n_mapping = 3;

	f->fn = (PbFunction)PERFTOOLS__PROFILES__FUNCTION__INIT;
	f->fn.id = 1, f->fn.name = 10, f->fn.filename = 11;
	f->fnp = &f->fn;
	f->pb.function = &f->fnp;
	f->pb.n_function = 1;
	f->line = (PbLine)PERFTOOLS__PROFILES__LINE__INIT;
	f->line.function_id = 1, f->line.line = 12;
	f->linep = &f->line;
	for (i = 0; i < 4; i++) {
		f->l[i] = (PbLocation)PERFTOOLS__PROFILES__LOCATION__INIT;
		f->lp[i] = &f->l[i];
	}
	f->l[0].id = 100, f->l[0].mapping_id = 7, f->l[0].address = 0x401000;
	f->l[0].line = &f->linep, f->l[0].n_line = 1;
	f->l[1].id = 200, f->l[1].mapping_id = 7, f->l[1].address = 0x402000;
	f->l[2].id = 300, f->l[2].mapping_id = 3;
	f->l[2].address = 0xffffffff81000010;
	f->l[3].id = 400, f->l[3].mapping_id = 9;
	f->l[3].address = 0x7f0000001100;
	f->pb.location = f->lp;
	f->pb.n_location = 4;

	for (i = 0; i < 2; i++) {
		f->s[i] = (PbSample)PERFTOOLS__PROFILES__SAMPLE__INIT;
		f->sp[i] = &f->s[i];
	}
	for (i = 0; i < 3; i++) {
		f->lab[i] = (PbLabel)PERFTOOLS__PROFILES__LABEL__INIT;
		f->labp[i] = &f->lab[i];
	}
	f->ids0[0] = 300, f->ids0[1] = 100, f->ids0[2] = 200;
	f->s[0].location_id = f->ids0, f->s[0].n_location_id = 3;
	f->v0[0] = 5, f->v0[1] = 50000000;
	f->s[0].value = f->v0, f->s[0].n_value = 2;
	f->lab[0].key = 8, f->lab[0].num = 77;
	f->lab[1].key = 9, f->lab[1].num = 78;
	f->lab[2].key = 13, f->lab[2].str = 14;
	f->s[0].label = f->labp, f->s[0].n_label = 3;
	f->ids1[0] = 400, f->ids1[1] = 100;
	f->s[1].location_id = f->ids1, f->s[1].n_location_id = 2;
	f->v1[0] = 1, f->v1[1] = 10000000;
	f->s[1].value = f->v1, f->s[1].n_value = 2;
	f->pb.sample = f->sp;
	f->pb.n_sample = 2;
	f->comment = 12;
	f->pb.comment = &f->comment;
	f->pb.n_comment = 1;
}

/* Pack @pb and read it back; @msg gets the reader's message. */
static int read_pb(const PbProfile *pb, struct sym_prof **out, char *msg,
		   size_t msglen)
{
	size_t n = perftools__profiles__profile__get_packed_size(pb);
	uint8_t *buf = malloc(n ? n : 1);
	int err;

	perftools__profiles__profile__pack(pb, buf);
	msg[0] = '\0';
	err = sym_prof_read_pprof(buf, n, out, msg, msglen);
	free(buf);
	return err;
}

static void check_foreign(void)
{
	struct foreign f;
	struct sym_prof *p = NULL;
	const struct sym_prof_map *m;
	const struct sym_prof_stack *s;
	const struct sym_prof_header *h;
	char msg[256];

	foreign_init(&f);
	CHECK_ERR(read_pb(&f.pb, &p, msg, sizeof(msg)), 0);
	if (msg[0])
		printf("#   %s\n", msg);
	if (!p)
		return;
	CHECK(sym_prof_nmaps(p) == 3 && sym_prof_nstacks(p) == 2);
	m = sym_prof_map(p, 0);
	CHECK(m->kind == SYM_PROF_MAP_FILE && m->pid == 0 &&
	      (m->flags & SYM_PROF_MAP_VADDR_GUESSED) && m->vaddr == 0 &&
	      same_str(m->build_id, "abcdef01") && same_str(m->path, "/bin/app"));
	m = sym_prof_map(p, 1);
	CHECK(m->kind == SYM_PROF_MAP_KERNEL && m->pid == -1 && m->flags == 0 &&
	      m->vaddr == 0xffffffff81000000 && m->build_id == NULL);
	m = sym_prof_map(p, 2);
	/* No name, no build ID: anonymous memory. */
	CHECK(m->kind == SYM_PROF_MAP_ANON && m->vaddr == 0x1000 &&
	      (m->flags & SYM_PROF_MAP_VADDR_GUESSED));
	s = sym_prof_stack(p, 0);
	CHECK(s->count == 5 && s->weight == 50000000 && s->pid == 77 &&
	      s->tid == 78 && s->nframes == 3);
	CHECK(s->flags == (SYM_PROF_LEAF | (uint32_t)SYM_PROF_UNKNOWN_FLAG));
	CHECK(s->frames[0].map == 1 && s->frames[0].addr == 0xffffffff81000010 &&
	      s->frames[0].flags == 0);
	CHECK(s->frames[1].map == 0 && s->frames[1].addr == 0x1000 &&
	      s->frames[1].flags == SYM_PROF_FRAME_RETURN);
	CHECK(s->frames[2].addr == 0x2000 &&
	      s->frames[2].flags == SYM_PROF_FRAME_RETURN);
	s = sym_prof_stack(p, 1);
	CHECK(s->frames[0].map == 2 && s->frames[0].addr == 0x1100 &&
	      s->pid == 0 && s->tid == 0);
	h = sym_prof_header(p);
	CHECK(same_str(h->weight_unit, "ns") && same_str(h->event, "cpu-clock") &&
	      h->period == 10000000 && h->frequency == 100 &&
	      h->samples == 6 && h->flagged[2] == 5 && h->start_ns == 1000 &&
	      h->duration_ns == 2000000000);
	sym_prof_free(p);

	/* Columns: a default_sample_type picks the weight; no count column
	 * means one sample per pprof sample. */
	foreign_init(&f);
	f.vt[0].type = 3, f.vt[0].unit = 4;	/* cpu/nanoseconds */
	f.vt[1].type = 10, f.vt[1].unit = 4;	/* main/nanoseconds */
	f.pb.default_sample_type = 3;
	CHECK_ERR(read_pb(&f.pb, &p, msg, sizeof(msg)), 0);
	if (p) {
		s = sym_prof_stack(p, 0);
		CHECK(s->count == 1 && s->weight == 5);
		sym_prof_free(p);
	}
}

/* One of ours that pprof renumbered: vaddrs survive by range, the exact
 * PC list does not (its checksum no longer matches). */
static void check_renumbered(void)
{
	struct sym_prof *p = make_prof("ns"), *q = NULL;
	uint8_t *gz = NULL, *plain = NULL, *buf = NULL;
	size_t gzlen = 0, plen = 0, n, i;
	PbProfile *pb = NULL;
	char msg[256] = "";

	CHECK_ERR(capture(p, 1, &gz, &gzlen), 0);
	plain = gunzip_all(gz, gzlen, &plen);
	pb = plain ? perftools__profiles__profile__unpack(NULL, plen, plain) :
		     NULL;
	CHECK(pb != NULL);
	if (!pb)
		goto out;
	/* Mapping ids 1 <-> 2 swapped, as pprof's main-binary heuristic
	 * would. */
	pb->mapping[0]->id = 2;
	pb->mapping[1]->id = 1;
	for (i = 0; i < pb->n_location; i++)
		if (pb->location[i]->mapping_id == 1 ||
		    pb->location[i]->mapping_id == 2)
			pb->location[i]->mapping_id ^= 3;
	n = perftools__profiles__profile__get_packed_size(pb);
	buf = malloc(n);
	perftools__profiles__profile__pack(pb, buf);
	CHECK_ERR(sym_prof_read_pprof(buf, n, &q, msg, sizeof(msg)), 0);
	if (q) {
		const struct sym_prof_map *m = sym_prof_map(q, 1);
		const struct sym_prof_stack *s = sym_prof_stack(q, 1);

		/* Map 1 of the file is now the non-PIE one, found by range. */
		CHECK(m->start == 0x401000 && m->vaddr == 0x401000 &&
		      m->flags == 0 && m->pid == 4242);
		/* The forked copies (maps 0 and 6) share a range and a vaddr:
		 * kept, but the pid is no longer known for the renumbered. */
		CHECK(sym_prof_map(q, 0)->vaddr == 0x1000);
		/* The PC above the leaf is now read as a return address. */
		CHECK(s->frames[1].flags == SYM_PROF_FRAME_RETURN);
		/* The raw text of the leaf frames still agrees. */
		CHECK(s->frames[0].addr == 0x1139 && s->frames[0].map == 0);
	}
out:
	if (pb)
		perftools__profiles__profile__free_unpacked(pb, NULL);
	free(buf);
	free(gz);
	free(plain);
	sym_prof_free(p);
	sym_prof_free(q);
}

/* @what breaks the foreign profile; it must fail with @want in msg. */
static void expect_bad(const char *what, void (*breakit)(struct foreign *),
		       const char *want)
{
	struct foreign f;
	struct sym_prof *p = (struct sym_prof *)&f;
	char msg[256];
	int err;

	foreign_init(&f);
	breakit(&f);
	err = read_pb(&f.pb, &p, msg, sizeof(msg));
	tap_ok(err == -SYM_E_BADPROFILE && p == NULL && strstr(msg, want),
	       __FILE__, __LINE__, what);
	if (err != -SYM_E_BADPROFILE || !strstr(msg, want))
		printf("#   got %d '%s', want '%s'\n", err, msg, want);
	if (!err)
		sym_prof_free(p);
}

static void b_map_id0(struct foreign *f) { f->m[1].id = 0; }
static void b_map_dup(struct foreign *f) { f->m[1].id = 7; }
static void b_loc_dup(struct foreign *f) { f->l[2].id = 100; }
static void b_loc_id0(struct foreign *f) { f->l[3].id = 0; }
static void b_loc_map(struct foreign *f) { f->l[1].mapping_id = 8; }
static void b_sample_loc(struct foreign *f) { f->ids0[1] = 101; }
static void b_fn(struct foreign *f) { f->line.function_id = 2; }
static void b_fn_name(struct foreign *f) { f->fn.name = 99; }
static void b_filename(struct foreign *f) { f->m[0].filename = 15; }
static void b_buildid(struct foreign *f) { f->m[0].build_id = -1; }
static void b_str0(struct foreign *f) { f->strs[0] = "x"; }
static void b_nostr(struct foreign *f) { f->pb.n_string_table = 0; }
static void b_nvalues(struct foreign *f) { f->s[1].n_value = 1; }
static void b_negvalue(struct foreign *f) { f->v1[1] = -5; }
static void b_range(struct foreign *f) { f->m[0].memory_limit = 0x3fffff; }
static void b_pid_big(struct foreign *f) { f->lab[0].num = 1LL << 40; }
static void b_pid_neg(struct foreign *f) { f->lab[1].num = -3; }
static void b_label_key(struct foreign *f) { f->lab[2].key = 0; }
static void b_label_str(struct foreign *f) { f->lab[2].str = 1000; }
static void b_two_pids(struct foreign *f) { f->lab[1].key = 8; }
static void b_comment(struct foreign *f) { f->comment = 16; }
static void b_period(struct foreign *f) { f->pb.period = -1; }
static void b_sample_type(struct foreign *f) { f->vt[1].unit = 44; }
static void b_notypes(struct foreign *f)
{
	f->pb.n_sample_type = 0;
	f->s[0].n_value = f->s[1].n_value = 0;
}
static void b_default(struct foreign *f) { f->pb.default_sample_type = 20; }
static void b_our_map(struct foreign *f)
{
	static char c[] = "#sym-map 7 start=400000 limit=500000 kind=odd";

	f->strs[12] = c;
	f->strs[0] = "";
	f->pb.n_comment = 1;
	/* Marks it ours, so its comments are read strictly. */
	static int64_t comments[] = { 11, 12 };

	f->strs[11] = "#sym-pprof 1";
	f->pb.comment = comments;
	f->pb.n_comment = 2;
}

static void check_bad_profiles(void)
{
	expect_bad("mapping id 0", b_map_id0, "mapping 1: id 0");
	expect_bad("duplicate mapping id", b_map_dup, "duplicate id 7");
	expect_bad("duplicate location id", b_loc_dup, "duplicate id 100");
	expect_bad("location id 0", b_loc_id0, "location 3: id 0");
	expect_bad("location of no mapping", b_loc_map,
		   "location 1 (id 200): mapping_id 8 does not exist");
	expect_bad("sample of no location", b_sample_loc,
		   "sample 0: location_id 101 does not exist");
	expect_bad("line of no function", b_fn, "function_id 2 does not exist");
	expect_bad("function name index", b_fn_name,
		   "function 0 (id 1): bad string index");
	expect_bad("filename index past the table", b_filename,
		   "mapping 0 (id 7): bad string index");
	expect_bad("negative build_id index", b_buildid,
		   "mapping 0 (id 7): bad string index");
	expect_bad("string_table[0] not empty", b_str0, "string_table[0]");
	expect_bad("no string table", b_nostr, "empty string table");
	expect_bad("value count", b_nvalues, "sample 1: 1 values for 2");
	expect_bad("negative value", b_negvalue, "sample 1: negative value");
	expect_bad("start above limit", b_range, "above memory_limit");
	expect_bad("pid over 32 bits", b_pid_big, "label pid is not a 32-bit");
	expect_bad("negative tid", b_pid_neg, "negative pid or tid");
	expect_bad("label key 0", b_label_key, "label 2: empty key");
	expect_bad("label str index", b_label_str, "label 2: bad string");
	expect_bad("two pid labels", b_two_pids, "two pid labels");
	expect_bad("comment index", b_comment, "comment 0: string index 16");
	expect_bad("negative period", b_period, "negative period");
	expect_bad("sample type index", b_sample_type, "sample_type 1");
	expect_bad("samples without types", b_notypes, "no sample_type");
	expect_bad("default_sample_type", b_default, "default_sample_type");
	expect_bad("our own comment, malformed", b_our_map, "unknown kind");
}

static void expect_bytes(const char *what, const void *buf, size_t len,
			 int want_err, const char *want)
{
	struct sym_prof *p = NULL;
	char msg[256] = "";
	int err = sym_prof_read_pprof(buf, len, &p, msg, sizeof(msg));

	tap_ok(err == want_err && !p && strstr(msg, want), __FILE__, __LINE__,
	       what);
	if (err != want_err || !strstr(msg, want))
		printf("#   got %d '%s', want '%s'\n", err, msg, want);
	sym_prof_free(p);
}

/* One profile gzipped in two members reads as the whole. */
static void check_members(const struct sym_prof *p, const uint8_t *gz,
			  size_t gzlen)
{
	struct sym_prof *q = NULL;
	uint8_t *plain, *a, *b, *both;
	size_t plen = 0, alen = 0, blen = 0;

	plain = gunzip_all(gz, gzlen, &plen);
	a = plain ? gzip_all(plain, plen / 2, &alen) : NULL;
	b = plain ? gzip_all(plain + plen / 2, plen - plen / 2, &blen) : NULL;
	both = malloc(alen + blen + 1);
	CHECK(a && b && both);
	if (a && b && both) {
		memcpy(both, a, alen);
		memcpy(both + alen, b, blen);
		CHECK_ERR(sym_prof_read_pprof(both, alen + blen, &q, NULL, 0),
			  0);
		CHECK(q && same_prof(p, q));
	}
	sym_prof_free(q);
	free(plain);
	free(a);
	free(b);
	free(both);
}

static void check_bad_bytes(void)
{
	struct sym_prof *p = make_prof("ns");
	uint8_t *gz = NULL, *junk;
	size_t gzlen = 0;
	static const uint8_t garbage[] = { 0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f };
	static const uint8_t wire7[] = { 0x0f, 0x01 };

	expect_bytes("empty input", "", 0, -SYM_E_BADPROFILE, "empty input");
	expect_bytes("garbage", garbage, sizeof(garbage), -SYM_E_BADPROFILE,
		     "protobuf decoding failed");
	expect_bytes("bad wire type", wire7, sizeof(wire7), -SYM_E_BADPROFILE,
		     "protobuf decoding failed");
	expect_bytes("text", "hello, world\n", 13, -SYM_E_BADPROFILE, "");
	if (p && capture(p, 1, &gz, &gzlen) == 0) {
		expect_bytes("gzip cut short", gz, gzlen / 2, -SYM_E_BADPROFILE,
			     "gzip: data cut short");
		expect_bytes("gzip header only", gz, 10, -SYM_E_BADPROFILE,
			     "gzip");
		junk = malloc(gzlen + 3);
		memcpy(junk, gz, gzlen);
		memcpy(junk + gzlen, "abc", 3);
		expect_bytes("junk after gzip", junk, gzlen + 3,
			     -SYM_E_BADPROFILE, "3 bytes of junk");
		junk[gzlen / 2] ^= 0x55;
		expect_bytes("corrupt deflate", junk, gzlen, -SYM_E_BADPROFILE,
			     "gzip");
		/* Two whole profiles in two members (cat a.gz b.gz): protobuf
		 * concatenation repeats every id. */
		junk = realloc(junk, 2 * gzlen);
		memcpy(junk, gz, gzlen);
		memcpy(junk + gzlen, gz, gzlen);
		expect_bytes("two profiles concatenated", junk, 2 * gzlen,
			     -SYM_E_BADPROFILE, "duplicate id");
		free(junk);
		check_members(p, gz, gzlen);
	}
	free(gz);
	sym_prof_free(p);
}

/* A 2000-frame pprof stack keeps its 1024 innermost frames. */
static void check_deep(void)
{
	struct foreign f;
	struct sym_prof *p = NULL;
	uint64_t ids[2000];
	char msg[256];
	size_t i;

	foreign_init(&f);
	for (i = 0; i < 2000; i++)
		ids[i] = i ? 200 : 100;
	f.s[1].location_id = ids;
	f.s[1].n_location_id = 2000;
	CHECK_ERR(read_pb(&f.pb, &p, msg, sizeof(msg)), 0);
	if (p) {
		const struct sym_prof_stack *s = sym_prof_stack(p, 1);

		CHECK(s->nframes == SYM_PROF_MAX_FRAMES &&
		      (s->flags & SYM_PROF_TRUNCATED) &&
		      s->frames[0].addr == 0x1000 &&
		      s->frames[1].addr == 0x2000);
		sym_prof_free(p);
	}
}

static int write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int ok = fd >= 0 && write(fd, buf, len) == (ssize_t)len;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

static void check_read_file(void)
{
	struct sym_prof *p = make_prof("ns"), *q;
	char dir[] = "/tmp/t-pprof.XXXXXX", path[64], msg[256];
	uint8_t *gz = NULL, *plain = NULL, *rawgz = NULL;
	size_t gzlen = 0, plen = 0, rawgzlen = 0;
	char *raw = p ? raw_text(p) : NULL;
	const char *names[] = { "a.raw", "a.raw.gz", "a.pb.gz", "a.pb" };
	size_t i;

	CHECK(raw && mkdtemp(dir));
	if (!raw || capture(p, 1, &gz, &gzlen))
		goto out;
	plain = gunzip_all(gz, gzlen, &plen);
	rawgz = gzip_all((uint8_t *)raw, strlen(raw), &rawgzlen);
	for (i = 0; i < 4; i++) {
		const void *b[] = { raw, rawgz, gz, plain };
		size_t l[] = { strlen(raw), rawgzlen, gzlen, plen };

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		q = NULL;
		CHECK(write_file(path, b[i], l[i]) == 0);
		CHECK_ERR(sym_prof_read_file(path, &q, msg, sizeof(msg)), 0);
		tap_ok(q && same_prof(p, q), __FILE__, __LINE__, names[i]);
		sym_prof_free(q);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/missing", dir);
	q = (struct sym_prof *)path;
	CHECK_ERR(sym_prof_read_file(path, &q, msg, sizeof(msg)), -ENOENT);
	CHECK(q == NULL && strstr(msg, "missing"));
	/* A raw file with a broken line: the raw reader's message. */
	snprintf(path, sizeof(path), "%s/bad.raw", dir);
	write_file(path, "sym-raw 1\nperiod x\n", 19);
	CHECK_ERR(sym_prof_read_file(path, &q, msg, sizeof(msg)),
		  -SYM_E_BADPROFILE);
	CHECK(strstr(msg, "line 2") != NULL);
	unlink(path);
	rmdir(dir);
out:
	free(raw);
	free(gz);
	free(plain);
	free(rawgz);
	sym_prof_free(p);
}

/* Other weight units: "samples" with weights that are not the counts,
 * "bytes", none at all: two value columns, the same profile back. */
static void check_other_units(void)
{
	static const char *const units[] = { "samples", "bytes", NULL };
	static const char *const want[] = { "weight/count", "weight/bytes",
					     "cpu/nanoseconds" };
	size_t i;

	for (i = 0; i < 3; i++) {
		struct sym_prof *p = make_prof("ns"), *q = NULL;
		struct sym_prof_header h = *sym_prof_header(p);
		struct sym_prof_stack s = { 1, 7, 1, 1, 0, 0, NULL };
		uint8_t *gz = NULL, *plain = NULL;
		size_t gzlen = 0, plen = 0;
		PbProfile *pb = NULL;
		char type[64] = "";

		h.weight_unit = units[i];
		CHECK_ERR(sym_prof_set_header(p, &h), 0);
		CHECK_ERR(sym_prof_add_stack(p, &s), 0);
		CHECK_ERR(capture(p, 1, &gz, &gzlen), 0);
		plain = gz ? gunzip_all(gz, gzlen, &plen) : NULL;
		pb = plain ? perftools__profiles__profile__unpack(NULL, plen,
								 plain) : NULL;
		if (pb && pb->n_sample_type == 2)
			snprintf(type, sizeof(type), "%s/%s",
				 pb_str(pb, pb->sample_type[1]->type),
				 pb_str(pb, pb->sample_type[1]->unit));
		tap_ok(strcmp(type, want[i]) == 0, __FILE__, __LINE__, want[i]);
		CHECK_ERR(sym_prof_read_pprof(gz, gzlen, &q, NULL, 0), 0);
		CHECK(q && same_prof(p, q));
		if (pb)
			perftools__profiles__profile__free_unpacked(pb, NULL);
		free(gz);
		free(plain);
		sym_prof_free(p);
		sym_prof_free(q);
	}
}

/* The symbolization of every frame of @a's stacks is the same in @b. */
static int same_frame_locations(const struct sym_prof *a,
				const struct sym_prof *b)
{
	for (size_t i = 0; i < sym_prof_nstacks(a); i++) {
		const struct sym_prof_stack *s = sym_prof_stack(a, i);

		for (uint32_t k = 0; k < s->nframes; k++) {
			const struct sym_prof_line *la = NULL, *lb = NULL;
			uint32_t sa = 0, sb = 0;
			size_t na = 0, nb = 0;
			int ea, eb;

			ea = sym_prof_location(a, &s->frames[k], &sa, &la, &na);
			eb = sym_prof_location(b, &s->frames[k], &sb, &lb, &nb);
			if (ea != eb || sa != sb || na != nb ||
			    !same_lines(la, lb, na))
				return 0;
		}
	}
	return 1;
}

/*
 * A symbolized profile: ok locations become Lines (innermost first) of
 * Functions, one per (name, file), with the mapping's has_* flags; the
 * other statuses and the symbol-table names go into "#sym-loc" and
 * "#sym-symtab" comments; frames without a location stay without one.
 * Read back, every frame has the same location.
 */
static void check_symbolized(void)
{
	static const struct sym_prof_line chain[] = {
		{ "inl", "/src/a.h", 12, 5, SYM_PROF_LINE_INLINED },
		{ "compute", "/src/w.c", 31, 9, 0 },
	};
	static const struct sym_prof_line start = { "_start", NULL, 0, 0,
						    SYM_PROF_LINE_SYMTAB };
	static const struct sym_prof_line nofn = { NULL, "/src/w.c", 3, 0, 0 };
	static const struct sym_prof_line mainl = { "main", "/src/w.c", 77, 0,
						    0 };
	static const struct {
		struct sym_prof_frame f;
		uint32_t status;
		const struct sym_prof_line *lines;
		size_t n;
	} set[] = {
		{ { 0x1139, 0, 0 }, SYM_PROF_LOC_OK, chain, 2 },
		{ { 0x1187, 0, R }, SYM_PROF_LOC_OK, &start, 1 },
		{ { 0x401234, 1, R }, SYM_PROF_LOC_MISSING, NULL, 0 },
		{ { 0x1065, 0, R }, SYM_PROF_LOC_OK, &nofn, 1 },
		{ { 0x401500, 1, 0 }, SYM_PROF_LOC_NOSYMBOL, NULL, 0 },
		{ { 0x401500, 1, R }, SYM_PROF_LOC_OK, &mainl, 1 },
		{ { 0xdeadbeef, NOMAP, R }, SYM_PROF_LOC_UNMAPPED, NULL, 0 },
		{ { 0x1139, 6, R }, SYM_PROF_LOC_OK, chain, 2 },
		{ { 0x15000, 4, 0 }, SYM_PROF_LOC_UNMAPPED, NULL, 0 },
	};
	struct sym_prof *p = make_prof("ns"), *q = NULL;
	uint8_t *gz = NULL, *plain = NULL;
	size_t gzlen = 0, plen = 0;
	PbProfile *pb = NULL;
	char msg[256] = "";
	int err = 0;

	CHECK(p != NULL);
	if (!p)
		return;
	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]) && !err; i++)
		err = sym_prof_set_location(p, &set[i].f, set[i].status,
					    set[i].lines, set[i].n);
	CHECK_ERR(err, 0);
	CHECK_ERR(capture(p, 1, &gz, &gzlen), 0);
	plain = gz ? gunzip_all(gz, gzlen, &plen) : NULL;
	pb = plain ? perftools__profiles__profile__unpack(NULL, plen, plain) :
		     NULL;
	CHECK(pb != NULL);
	if (pb) {
		const PbLocation *l = NULL;
		size_t nl = 0;

		/* (inl, a.h), (compute, w.c), (_start, -), (-, w.c),
		 * (main, w.c): map 6's chain shares map 0's Functions. */
		CHECK(pb->n_function == 5);
		for (size_t i = 0; i < pb->n_location; i++) {
			nl += pb->location[i]->n_line;
			/* The exact PC (the return address at the same
			 * address has no location). */
			if (pb->location[i]->address == 0x55d0c0001139 &&
			    pb->location[i]->mapping_id == 1 && !l)
				l = pb->location[i];
		}
		CHECK(nl == 2 + 1 + 1 + 1 + 2);
		CHECK(l && l->n_line == 2);
		if (l && l->n_line == 2) {
			const PbFunction *f0 = NULL, *f1 = NULL;

			for (size_t i = 0; i < pb->n_function; i++) {
				if (pb->function[i]->id ==
				    l->line[0]->function_id)
					f0 = pb->function[i];
				if (pb->function[i]->id ==
				    l->line[1]->function_id)
					f1 = pb->function[i];
			}
			/* Innermost first, as profile.proto orders them. */
			CHECK(f0 && !strcmp(pb_str(pb, f0->name), "inl") &&
			      !strcmp(pb_str(pb, f0->filename), "/src/a.h") &&
			      !strcmp(pb_str(pb, f0->system_name), "inl"));
			CHECK(f1 && !strcmp(pb_str(pb, f1->name), "compute"));
			CHECK(l->line[0]->line == 12 &&
			      l->line[0]->column == 5 &&
			      l->line[1]->line == 31 &&
			      l->line[1]->column == 9);
		}
		CHECK(pb->mapping[0]->has_functions &&
		      pb->mapping[0]->has_filenames &&
		      pb->mapping[0]->has_line_numbers &&
		      pb->mapping[0]->has_inline_frames);
		CHECK(pb->mapping[1]->has_functions &&
		      !pb->mapping[1]->has_inline_frames);
		CHECK(!pb->mapping[2]->has_functions);
		CHECK(has_comment(pb, "#sym-symbolized 1"));
		CHECK(has_comment(pb, "#sym-loc missing "));
		CHECK(has_comment(pb, "#sym-loc nosymbol "));
		CHECK(has_comment(pb, "#sym-loc unmapped "));
		CHECK(has_comment(pb, "#sym-symtab "));
		CHECK(!has_comment(pb, "#sym-loc error"));
		perftools__profiles__profile__free_unpacked(pb, NULL);
	}
	CHECK_ERR(sym_prof_read_pprof(gz, gzlen, &q, msg, sizeof(msg)), 0);
	if (msg[0])
		printf("#   %s\n", msg);
	CHECK(q && same_prof(p, q));
	CHECK(q && sym_prof_symbolized(q));
	CHECK(q && same_frame_locations(p, q) && same_frame_locations(q, p));
	/* {0x1139, 0, R} has none, in both. */
	if (q) {
		struct sym_prof_frame f = { 0x1139, 0, R };

		CHECK_ERR(sym_prof_location(q, &f, NULL, NULL, NULL),
			  -SYM_E_NOTFOUND);
	}
	free(gz);
	free(plain);
	sym_prof_free(p);
	sym_prof_free(q);
}

/* Value types become sample types after [samples, weight] and come
 * back as value types, in order, with their values. */
static void check_value_types(void)
{
	static const char *const names[] = { "alloc_objects", "alloc_space",
					     "inuse_objects", "inuse_space" };
	static const char *const units[] = { "count", "bytes", "count",
					     "bytes" };
	struct sym_prof_header h = { .period = 524288, .weight_unit = "bytes",
				     .event = "alloc", .mode = "alloc" };
	struct sym_prof_map m = { .kind = SYM_PROF_MAP_FILE, .pid = 1,
				  .start = 0x1000, .end = 0x2000,
				  .path = "/bin/x" };
	struct sym_prof_frame fr[2] = { { .addr = 0x1100, .map = 0 },
					{ .addr = 0x1200, .map = 0,
					  .flags = SYM_PROF_FRAME_RETURN } };
	struct sym_prof_stack st = { .count = 3, .weight = 3000, .pid = 1,
				     .tid = 1, .nframes = 2, .frames = fr };
	uint64_t v[4] = { 7, 3000, 2, 1000 };
	struct sym_prof *p = NULL, *q = NULL;
	uint8_t *gz = NULL;
	size_t gzlen = 0;
	char msg[256];
	const char *unit = NULL;

	CHECK_ERR(sym_prof_new(&p), 0);
	CHECK_ERR(sym_prof_set_header(p, &h), 0);
	CHECK_ERR(sym_prof_add_map(p, &m, NULL), 0);
	CHECK_ERR(sym_prof_set_value_types(p, names, units, 4), 0);
	CHECK_ERR(sym_prof_add_stack_values(p, &st, 0, v), 0);
	CHECK_ERR(capture(p, 1, &gz, &gzlen), 0);
	CHECK_ERR(sym_prof_read_pprof(gz, gzlen, &q, msg, sizeof(msg)), 0);
	CHECK(q && sym_prof_nvalue_types(q) == 4 && sym_prof_nstacks(q) == 1);
	CHECK(q && !strcmp(sym_prof_value_type(q, 3, &unit), "inuse_space") &&
	      !strcmp(unit, "bytes"));
	CHECK(q && sym_prof_stack_values(q, 0) &&
	      !memcmp(sym_prof_stack_values(q, 0), v, sizeof(v)));
	CHECK(q && sym_prof_stack(q, 0)->count == 3 &&
	      sym_prof_stack(q, 0)->weight == 3000);
	sym_prof_free(q);
	sym_prof_free(p);
	free(gz);
}

int main(void)
{
	check_roundtrip();
	check_symbolized();
	check_samples_unit();
	check_other_units();
	check_foreign();
	check_renumbered();
	check_bad_profiles();
	check_bad_bytes();
	check_deep();
	check_read_file();
	check_value_types();
	return tap_done();
}
