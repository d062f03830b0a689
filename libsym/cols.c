/*
 * cols.c - a table's packed arrays stored as compressed columns (format 9:
 * docs/table-format.md "Compressed records").
 *
 * A packed array (format.h) is records of bit fields back to back: the
 * layout a lookup reads, one load a field, and one that zstd finds little
 * to take from (a field's bits fall anywhere in a byte).  Stored, the
 * same values compress three to five times better as columns: each
 * field's values one after another, as byte planes (the low bytes of all
 * values, then the next bytes), and a field whose values climb (addresses,
 * string offsets in first-use order) as differences from the value
 * before.  The reader builds the records back once (zstr.c keeps them for
 * the process), so lookups read the same records as before.
 *
 * An area is
 *
 *   byte 0      delta mask: bit f set when field f is stored as
 *               differences (modulo 2^(8 * bytes of the field))
 *   byte 1      chunk shift s: 0, or SYMI_COLS_SHIFT_MIN to _MAX
 *   bytes 2-7   zero
 *   s = 0:
 *   bytes 8-    one zstd frame: for each field f of width w[f] > 0, in
 *               order, ceil(w[f] / 8) planes of @count bytes, plane j
 *               byte j of every value (little-endian)
 *   s > 0 (format 10), n = ceil(count / 2^s) chunks of 2^s records:
 *   bytes 8-    u32 zoff[n + 1]: chunk c's frame is area bytes
 *               [zoff[c], zoff[c + 1]), zoff[0] just past first[],
 *               zoff[n] the area's end
 *               u32 first[n]: field 0's value in each chunk's first
 *               record (a sorted array's key: a search finds its chunk
 *               without inflating any)
 *               the frames: each the planes of its chunk's records, as
 *               above, differences starting again from 0
 *
 * A chunked area is built back a chunk at a time, on demand (zstr.c,
 * symi_zrec_fill()).  Decoded, a value must fit its width; a frame that
 * does not inflate to exactly the planes' bytes, or a value that does
 * not fit, makes the area (or the chunk) bad, never a record out of its
 * place.
 */
#include <stdlib.h>
#include <string.h>
#define ZSTD_STATIC_LINKING_ONLY	/* ZSTD_c_literalCompressionMode */
#include <zstd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "internal.h"
#include "format.h"
#include "base.h"

#define COLS_HEAD 8
/* The level each column is tried at, as is and as differences, to choose
 * (the whole area is then compressed at the caller's level). */
#define COLS_TRY_LEVEL 1

static unsigned field_bytes(unsigned w)
{
	return (w + 7) / 8;
}

/* Bytes of the planes of all fields. */
static uint64_t planes_bytes(uint32_t count, unsigned nf, const uint8_t *w)
{
	uint64_t n = 0;

	for (unsigned f = 0; f < nf; f++)
		n += (uint64_t)count * field_bytes(w[f]);
	return n;
}

size_t symi_cols_out_bytes(enum symi_cols_out kind, uint32_t count,
			   unsigned nf, const uint8_t *w)
{
	uint64_t bits = 0;

	if (kind == SYMI_COLS_U32)
		return (size_t)4 * nf * count + SYMT_PAD;
	for (unsigned f = 0; f < nf; f++)
		bits += w[f];
	return (size_t)((bits + 7) / 8) * count + SYMT_PAD;
}

/* A column's values @v[@count] into @to (its @B planes), as differences
 * when @delta. */
static void column_put(uint32_t count, unsigned B, const uint32_t *v,
		       bool delta, uint8_t *to)
{
	uint64_t m = B >= 4 ? UINT32_MAX : ((uint64_t)1 << (8 * B)) - 1;
	uint32_t prev = 0;

	for (uint32_t i = 0; i < count; i++) {
		uint32_t x = delta ? (uint32_t)((v[i] - prev) & m) : v[i];

		prev = v[i];
		for (unsigned j = 0; j < B; j++)
			to[(size_t)j * count + i] = (uint8_t)(x >> (8 * j));
	}
}

/* The compressed size of @n bytes at @p alone, to choose; SIZE_MAX on
 * error. */
static size_t try_size(ZSTD_CCtx *cc, uint8_t *tmp, size_t cap,
		       const uint8_t *p, size_t n)
{
	size_t c = ZSTD_compressCCtx(cc, tmp, cap, p, n, COLS_TRY_LEVEL);

	return ZSTD_isError(c) ? SIZE_MAX : c;
}

/* The planes of records [@from, @from + @n) of the values @vals (@count a
 * field, field after field) into @to, as differences where @mask says:
 * their bytes. */
static size_t planes_put(const uint32_t *vals, uint32_t count, unsigned nf,
			 const uint8_t *w, uint8_t mask, uint32_t from,
			 uint32_t n, uint8_t *to)
{
	size_t at = 0;

	for (unsigned f = 0; f < nf; f++) {
		unsigned B = field_bytes(w[f]);

		if (!B)
			continue;
		column_put(n, B, vals + (size_t)f * count + from,
			   mask >> f & 1, to + at);
		at += (size_t)n * B;
	}
	return at;
}

/* @n bytes at @p as one frame at @level with raw literals, at @to (room
 * @cap); its size, or 0 on error. */
static size_t frame_put(ZSTD_CCtx *cc, int level, uint8_t *to, size_t cap,
			const uint8_t *p, size_t n)
{
	size_t c = ZSTD_CCtx_reset(cc, ZSTD_reset_session_and_parameters);

	if (!ZSTD_isError(c))
		c = ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, level);
	if (!ZSTD_isError(c))
		c = ZSTD_CCtx_setParameter(cc, ZSTD_c_literalCompressionMode,
					   ZSTD_ps_disable);
	if (!ZSTD_isError(c))
		c = ZSTD_compress2(cc, to, cap, p, n);
	return ZSTD_isError(c) ? 0 : c;
}

int symi_cols_pack(uint32_t count, unsigned nf, const uint8_t *w,
		   symi_cols_get_fn get, const void *src, int level,
		   unsigned shift, uint8_t **out, size_t *outlen)
{
	uint64_t total = planes_bytes(count, nf, w), cap;
	uint32_t n = 1, per = count;	/* chunks, and records in each */
	uint8_t *planes = NULL, *alt = NULL, *tmp = NULL, *buf = NULL;
	uint32_t *vals = NULL;
	ZSTD_CCtx *cc = NULL;
	uint8_t mask = 0;
	size_t at = 0, tcap, head = COLS_HEAD, c;
	int err = -ENOMEM;

	*out = NULL;
	*outlen = 0;
	if (nf > SYMT_FIELDS || total >= UINT32_MAX ||
	    (shift && (shift < SYMI_COLS_SHIFT_MIN ||
		       shift > SYMI_COLS_SHIFT_MAX)))
		return -SYM_E_TOOBIG;
	if (shift && count > (1u << shift)) {
		per = 1u << shift;
		n = (count + per - 1) >> shift;
		head += 8 * (size_t)n + 4;
	} else {
		shift = 0;
	}
	/* Each frame's bound, the index and the head. */
	cap = head + (uint64_t)n *
		     ZSTD_compressBound((size_t)planes_bytes(per, nf, w));
	tcap = ZSTD_compressBound((size_t)count * 4);
	cc = ZSTD_createCCtx();
	planes = symi_malloc(total ? (size_t)total : 1);
	alt = symi_malloc((size_t)count * 4 + 1);
	tmp = symi_malloc(tcap);
	buf = cap < UINT32_MAX ? symi_calloc(1, (size_t)cap) : NULL;
	vals = symi_malloc((size_t)count * nf * sizeof(*vals) + 1);
	if (!cc || !planes || !alt || !tmp || !buf || !vals)
		goto out;
	for (unsigned f = 0; f < nf; f++) {
		uint32_t *v = vals + (size_t)f * count;
		unsigned B = field_bytes(w[f]);
		size_t nb = (size_t)count * B;

		if (!B)
			continue;
		for (uint32_t i = 0; i < count; i++)
			v[i] = get(src, i, f);
		/* As is, and as differences: whichever compresses better. */
		column_put(count, B, v, false, planes);
		column_put(count, B, v, true, alt);
		if (try_size(cc, tmp, tcap, alt, nb) <
		    try_size(cc, tmp, tcap, planes, nb))
			mask |= (uint8_t)(1u << f);
	}
	buf[0] = mask;
	buf[1] = (uint8_t)shift;
	at = head;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t from = k * per;
		uint32_t m = count - from < per ? count - from : per;
		size_t pb = planes_put(vals, count, nf, w, mask, from, m,
				       planes);

		c = frame_put(cc, level, buf + at, (size_t)cap - at, planes,
			      pb);
		if (!c) {
			err = -SYM_E_TOOBIG;
			goto out;
		}
		if (shift) {
			symt_wr32(buf + COLS_HEAD + 4 * (size_t)k,
				  (uint32_t)at);
			symt_wr32(buf + COLS_HEAD + 4 * ((size_t)n + 1 + k),
				  w[0] ? vals[from] : 0);
		}
		at += c;
	}
	if (shift)
		symt_wr32(buf + COLS_HEAD + 4 * (size_t)n, (uint32_t)at);
	*out = buf;
	*outlen = at;
	buf = NULL;
	err = 0;
out:
	free(vals);
	free(buf);
	free(tmp);
	free(alt);
	free(planes);
	ZSTD_freeCCtx(cc);
	return err;
}

/* Value @i of a column of @B-byte planes of @n values at @p. */
static inline __attribute__((always_inline)) uint64_t
plane_val(const uint8_t *p, size_t n, size_t i, unsigned B)
{
	uint64_t x = p[i];

	if (B > 1)
		x |= (uint64_t)p[n + i] << 8;
	if (B > 2)
		x |= (uint64_t)p[2 * n + i] << 16;
	if (B > 3)
		x |= (uint64_t)p[3 * n + i] << 24;
	return x;
}

/* Values are built back a chunk at a time, into 32-bit values in L1,
 * then ORed into their records (or, for the block index, straight into
 * its arrays).  SSE2 turns 16 values' planes into 32-bit values at a
 * time, differences summed up within the vector: per value, what was a
 * load per plane, a shift and an or per plane, an add and a test took
 * python3.11d's records 8.2 M instructions, 0.5 ms of a one-address
 * lookup. */
#define CHUNK 1024

#ifdef __SSE2__
/* Values [@i, @i + 16) of a column of @B planes of @n bytes at @p, as 4
 * vectors of 4 32-bit values, in order. */
static inline __attribute__((always_inline)) void
planes16(const uint8_t *p, size_t n, size_t i, unsigned B, __m128i v[4])
{
	const __m128i z = _mm_setzero_si128();
#define LD(k) _mm_loadu_si128((const __m128i *)(const void *)(p + (k) * n + i))
	__m128i b0 = LD(0), b1 = B > 1 ? LD(1) : z, b2 = B > 2 ? LD(2) : z;
	__m128i b3 = B > 3 ? LD(3) : z;
#undef LD
	__m128i lo01 = _mm_unpacklo_epi8(b0, b1), hi01 = _mm_unpackhi_epi8(b0, b1);
	__m128i lo23 = _mm_unpacklo_epi8(b2, b3), hi23 = _mm_unpackhi_epi8(b2, b3);

	v[0] = _mm_unpacklo_epi16(lo01, lo23);
	v[1] = _mm_unpackhi_epi16(lo01, lo23);
	v[2] = _mm_unpacklo_epi16(hi01, hi23);
	v[3] = _mm_unpackhi_epi16(hi01, hi23);
}
#endif

/*
 * Values [@from, @from + @n) of a column of @B planes of @count bytes at
 * @p into @out, as differences from *@prev when @delta (*@prev updated).
 * @B and @delta are constants where it is inlined.  Returns the OR of the
 * values.
 */
static inline __attribute__((always_inline)) uint64_t
chunk_get(const uint8_t *p, uint32_t count, uint32_t from, uint32_t n,
	  unsigned B, bool delta, uint32_t *prev, uint32_t *out)
{
	uint32_t m = B >= 4 ? UINT32_MAX : ((uint32_t)1 << (8 * B)) - 1;
	uint32_t v = *prev, i = 0;
	uint64_t all = 0;
#ifdef __SSE2__
	__m128i vm = _mm_set1_epi32((int)m), carry = _mm_set1_epi32((int)v);
	__m128i o = _mm_setzero_si128();

	for (; i + 16 <= n; i += 16) {
		__m128i q[4];

		planes16(p, count, (size_t)from + i, B, q);
		for (int k = 0; k < 4; k++) {
			__m128i x = q[k];

			if (delta) {
				/* A running sum of 4 lanes, modulo 2^(8B):
				 * the low bits of a sum mod 2^32 are. */
				x = _mm_add_epi32(x, _mm_slli_si128(x, 4));
				x = _mm_add_epi32(x, _mm_slli_si128(x, 8));
				x = _mm_and_si128(_mm_add_epi32(x, carry), vm);
				carry = _mm_shuffle_epi32(x, 0xff);
			}
			o = _mm_or_si128(o, x);
			_mm_storeu_si128((__m128i *)(void *)(out + i + 4 * k),
					 x);
		}
	}
	o = _mm_or_si128(o, _mm_srli_si128(o, 8));
	o = _mm_or_si128(o, _mm_srli_si128(o, 4));
	all = (uint32_t)_mm_cvtsi128_si32(o);
	if (delta)
		v = (uint32_t)_mm_cvtsi128_si32(carry);
#endif
	for (; i < n; i++) {
		uint32_t x = (uint32_t)plane_val(p, count, (size_t)from + i, B);

		v = delta ? (v + x) & m : x;
		all |= v;
		out[i] = v;
	}
	*prev = v;
	return all;
}

/*
 * Field @f's values from its planes at @p into the records at @out
 * (zeroed, @stride bytes each, the field at bit @pos of a record) or,
 * when @out32 is not NULL, into that array.  False when a value does not
 * fit @w bits.
 */
static bool column_get(const uint8_t *p, uint32_t count, unsigned w,
		       bool delta, uint8_t *out, uint32_t stride, uint64_t pos,
		       uint32_t *out32)
{
	uint8_t *row = out + (pos >> 3);
	unsigned sh = (unsigned)(pos & 7);
	uint32_t tmp[CHUNK], prev = 0;
	uint64_t all = 0;

	for (uint32_t from = 0; from < count; from += CHUNK) {
		uint32_t n = count - from < CHUNK ? count - from : CHUNK;
		uint32_t *to = out32 ? out32 + from : tmp;

		/* Each case a loop of its own: the bytes and the
		 * differences known when it is compiled. */
#define RUN(B, D) chunk_get(p, count, from, n, B, D, &prev, to)
		switch (field_bytes(w) * 2 + delta) {
		case 2: all |= RUN(1, false); break;
		case 3: all |= RUN(1, true); break;
		case 4: all |= RUN(2, false); break;
		case 5: all |= RUN(2, true); break;
		case 6: all |= RUN(3, false); break;
		case 7: all |= RUN(3, true); break;
		case 8: all |= RUN(4, false); break;
		default: all |= RUN(4, true); break;
		}
#undef RUN
		if (all >> w)
			return false;
		if (out32)
			continue;	/* the values are their array */
		for (uint32_t i = 0; i < n; i++) {
			uint64_t y;

			memcpy(&y, row, sizeof(y));
			y = htole64(le64toh(y) | (uint64_t)tmp[i] << sh);
			memcpy(row, &y, sizeof(y));
			row += stride;
		}
	}
	return true;
}

/* The head of @area[@zbytes] for @nf fields of @w[]: its delta mask
 * checked, its chunk shift returned (-1: bad). */
static int head_check(const uint8_t *area, uint32_t zbytes, unsigned nf,
		      const uint8_t *w)
{
	unsigned shift;

	if (nf > SYMT_FIELDS || zbytes < COLS_HEAD)
		return -1;
	for (unsigned f = 0; f < nf; f++) {
		if (w[f] > SYMT_BMAX || (!w[f] && (area[0] >> f & 1)))
			return -1;
	}
	for (unsigned i = nf; i < 8; i++) {
		if (area[0] >> i & 1)
			return -1;
	}
	for (unsigned i = 2; i < COLS_HEAD; i++) {
		if (area[i])
			return -1;
	}
	shift = area[1];
	if (shift && (shift < SYMI_COLS_SHIFT_MIN || shift > SYMI_COLS_SHIFT_MAX))
		return -1;
	return (int)shift;
}

int symi_cols_chunks(const uint8_t *area, uint32_t zbytes, uint32_t count,
		     unsigned nf, const uint8_t *w, unsigned *shift,
		     uint32_t *nchunks)
{
	uint64_t head, per;
	uint32_t n, prev;
	int s = head_check(area, zbytes, nf, w);

	*shift = 0;
	*nchunks = 0;
	if (s < 0)
		return -SYM_E_BADTABLE;
	if (!s)
		return 0;
	per = (uint64_t)1 << s;
	n = (uint32_t)((count + per - 1) >> s);
	head = COLS_HEAD + 8 * (uint64_t)n + 4;
	if (n < 2 || zbytes < head || symt_rd32(area + COLS_HEAD) != head ||
	    symt_rd32(area + COLS_HEAD + 4 * (size_t)n) != zbytes)
		return -SYM_E_BADTABLE;
	prev = (uint32_t)head;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t a = symt_rd32(area + COLS_HEAD + 4 * (size_t)k);
		uint32_t b = symt_rd32(area + COLS_HEAD + 4 * ((size_t)k + 1));
		uint64_t m = k + 1 < n ? per : count - (uint64_t)k * per;

		/* The frame says what it holds: checked before anything
		 * is allocated for it. */
		if (a != prev || b < a ||
		    ZSTD_getFrameContentSize(area + a, b - a) !=
			    planes_bytes((uint32_t)m, nf, w))
			return -SYM_E_BADTABLE;
		prev = b;
	}
	*shift = (unsigned)s;
	*nchunks = n;
	return 0;
}

uint32_t symi_cols_first(const uint8_t *area, uint32_t nchunks, uint32_t k)
{
	return symt_rd32(area + COLS_HEAD + 4 * ((size_t)nchunks + 1 + k));
}

/* Bytes of one record of @nf fields @w[] (packed, format.h). */
static uint64_t rec_bytes(unsigned nf, const uint8_t *w)
{
	return symi_cols_out_bytes(SYMI_COLS_ROWS, 1, nf, w) - SYMT_PAD;
}

/*
 * Frame @frame[@fbytes], the planes of @m records, into the zeroed records
 * at @out (@stride bytes each, or the block index's arrays), through the
 * scratch @planes.  0 or -SYM_E_BADTABLE.
 */
static int frame_get(const uint8_t *frame, size_t fbytes, uint32_t m,
		     unsigned nf, const uint8_t *w, uint8_t mask,
		     enum symi_cols_out kind, uint64_t stride, uint8_t *out,
		     uint8_t *planes)
{
	uint64_t total = planes_bytes(m, nf, w), pos = 0;
	ZSTD_DCtx *dctx = symi_zstd_dctx();
	size_t got, at = 0;

	if (!dctx)
		return -ENOMEM;
	got = ZSTD_decompressDCtx(dctx, planes, (size_t)total, frame, fbytes);
	if (ZSTD_isError(got) || got != total)
		return -SYM_E_BADTABLE;
	for (unsigned f = 0; f < nf; f++) {
		if (w[f] && !column_get(planes + at, m, w[f], mask >> f & 1,
					out, (uint32_t)stride, pos,
					kind == SYMI_COLS_U32 ?
						(uint32_t *)(void *)out +
							(size_t)f * m :
						NULL))
			return -SYM_E_BADTABLE;
		at += (size_t)m * field_bytes(w[f]);
		pos += w[f];
	}
	return 0;
}

int symi_cols_unpack_chunk(const uint8_t *area, uint32_t count,
			   unsigned nf, const uint8_t *w, unsigned shift,
			   uint32_t nchunks, uint32_t k, uint8_t *out)
{
	uint64_t stride = rec_bytes(nf, w);
	uint32_t from = k << shift;
	uint32_t m = count - from < (1u << shift) ? count - from : 1u << shift;
	uint32_t a = symt_rd32(area + COLS_HEAD + 4 * (size_t)k);
	uint32_t b = symt_rd32(area + COLS_HEAD + 4 * ((size_t)k + 1));
	size_t rbytes = (size_t)m * stride;
	uint8_t *planes, *recs;
	int err;

	if (k >= nchunks)
		return -EINVAL;
	planes = symi_malloc((size_t)planes_bytes(m, nf, w) + 1);
	recs = symi_calloc(1, rbytes + SYMT_PAD);
	err = planes && recs ? frame_get(area + a, b - a, m, nf, w, area[0],
					 SYMI_COLS_ROWS, stride, recs, planes) :
			       -ENOMEM;
	/* Built apart, then copied: the last record's 8-byte stores
	 * would touch the next chunk's first one, which a reader may be
	 * reading. */
	if (!err)
		memcpy(out + (size_t)from * stride, recs, rbytes);
	free(recs);
	free(planes);
	return err;
}

int symi_cols_unpack(const uint8_t *area, uint32_t zbytes, uint32_t count,
		     unsigned nf, const uint8_t *w, enum symi_cols_out kind,
		     uint8_t *out)
{
	uint64_t total = planes_bytes(count, nf, w);
	uint8_t *planes = NULL;
	unsigned shift;
	uint32_t n;
	int err;

	if (total >= UINT32_MAX ||
	    symi_cols_chunks(area, zbytes, count, nf, w, &shift, &n))
		return -SYM_E_BADTABLE;
	if (shift) {
		if (kind != SYMI_COLS_ROWS)
			return -SYM_E_BADTABLE;
		for (uint32_t k = 0; k < n; k++) {
			err = symi_cols_unpack_chunk(area, count, nf, w, shift,
						     n, k, out);
			if (err)
				return err;
		}
		return 0;
	}
	/* The frame says what it holds: checked before anything is
	 * allocated for it. */
	if (ZSTD_getFrameContentSize(area + COLS_HEAD, zbytes - COLS_HEAD) !=
	    total)
		return -SYM_E_BADTABLE;
	/* Scratch: the slab's top, taken back at the end. */
	planes = symi_malloc_slab((size_t)total);
	if (!planes)
		return -ENOMEM;
	err = frame_get(area + COLS_HEAD, zbytes - COLS_HEAD, count, nf, w,
			area[0], kind, rec_bytes(nf, w), out, planes);
	symi_free_slab(planes, (size_t)total);
	return err;
}
