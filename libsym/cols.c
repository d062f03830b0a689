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
 *   bytes 1-7   zero
 *   bytes 8-    one zstd frame: for each field f of width w[f] > 0, in
 *               order, ceil(w[f] / 8) planes of @count bytes, plane j
 *               byte j of every value (little-endian)
 *
 * Decoded, a value must fit its width; a frame that does not inflate to
 * exactly the planes' bytes, or a value that does not fit, makes the area
 * bad (-SYM_E_BADTABLE), never a record out of its place.
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

int symi_cols_pack(uint32_t count, unsigned nf, const uint8_t *w,
		   symi_cols_get_fn get, const void *src, int level,
		   uint8_t **out, size_t *outlen)
{
	uint64_t total = planes_bytes(count, nf, w), cap;
	uint8_t *planes = NULL, *alt = NULL, *tmp = NULL, *buf = NULL;
	uint32_t *vals = NULL;
	ZSTD_CCtx *cc = NULL;
	uint8_t mask = 0;
	size_t at = 0, tcap, c;
	int err = -ENOMEM;

	*out = NULL;
	*outlen = 0;
	if (nf > SYMT_FIELDS || total >= UINT32_MAX)
		return -SYM_E_TOOBIG;
	cap = COLS_HEAD + ZSTD_compressBound((size_t)total);
	tcap = ZSTD_compressBound((size_t)count * 4);
	cc = ZSTD_createCCtx();
	planes = symi_malloc(total ? (size_t)total : 1);
	alt = symi_malloc((size_t)count * 4 + 1);
	tmp = symi_malloc(tcap);
	buf = symi_calloc(1, (size_t)cap);
	vals = symi_malloc((size_t)count * sizeof(*vals) + 1);
	if (!cc || !planes || !alt || !tmp || !buf || !vals)
		goto out;
	for (unsigned f = 0; f < nf; f++) {
		unsigned B = field_bytes(w[f]);
		size_t n = (size_t)count * B;

		if (!B)
			continue;
		for (uint32_t i = 0; i < count; i++)
			vals[i] = get(src, i, f);
		/* As is, and as differences: whichever compresses better. */
		column_put(count, B, vals, false, planes + at);
		column_put(count, B, vals, true, alt);
		if (try_size(cc, tmp, tcap, alt, n) <
		    try_size(cc, tmp, tcap, planes + at, n)) {
			memcpy(planes + at, alt, n);
			mask |= (uint8_t)(1u << f);
		}
		at += n;
	}
	buf[0] = mask;
	c = ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, level);
	if (!ZSTD_isError(c))
		c = ZSTD_CCtx_setParameter(cc, ZSTD_c_literalCompressionMode,
					   ZSTD_ps_disable);
	if (!ZSTD_isError(c))
		c = ZSTD_compress2(cc, buf + COLS_HEAD,
				   (size_t)cap - COLS_HEAD, planes,
				   (size_t)total);
	if (ZSTD_isError(c)) {
		err = -SYM_E_TOOBIG;
		goto out;
	}
	*out = buf;
	*outlen = COLS_HEAD + c;
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

int symi_cols_unpack(const uint8_t *area, uint32_t zbytes, uint32_t count,
		     unsigned nf, const uint8_t *w, enum symi_cols_out kind,
		     uint8_t *out)
{
	uint64_t total = planes_bytes(count, nf, w), pos = 0, stride = 0;
	unsigned long long declared;
	uint8_t *planes = NULL;
	ZSTD_DCtx *dctx;
	size_t got, at = 0;
	int err = -SYM_E_BADTABLE;

	if (nf > SYMT_FIELDS || zbytes < COLS_HEAD || total >= UINT32_MAX)
		return -SYM_E_BADTABLE;
	for (unsigned f = 0; f < nf; f++) {
		if (w[f] > SYMT_BMAX || (!w[f] && (area[0] >> f & 1)))
			return -SYM_E_BADTABLE;
		stride += w[f];
	}
	stride = (stride + 7) / 8;
	for (unsigned i = nf; i < 8; i++) {
		if (area[0] >> i & 1)
			return -SYM_E_BADTABLE;
	}
	for (unsigned i = 1; i < COLS_HEAD; i++) {
		if (area[i])
			return -SYM_E_BADTABLE;
	}
	/* The frame says what it holds: checked before anything is
	 * allocated for it. */
	declared = ZSTD_getFrameContentSize(area + COLS_HEAD,
					    zbytes - COLS_HEAD);
	if (declared != total)
		return -SYM_E_BADTABLE;
	/* Scratch: the slab's top, taken back at the end. */
	planes = symi_malloc_slab((size_t)total);
	if (!planes)
		return -ENOMEM;
	dctx = symi_zstd_dctx();
	if (!dctx) {
		err = -ENOMEM;
		goto out;
	}
	got = ZSTD_decompressDCtx(dctx, planes, (size_t)total,
				  area + COLS_HEAD, zbytes - COLS_HEAD);
	if (ZSTD_isError(got) || got != total)
		goto out;
	for (unsigned f = 0; f < nf; f++) {
		if (w[f] && !column_get(planes + at, count, w[f],
					area[0] >> f & 1, out,
					(uint32_t)stride, pos,
					kind == SYMI_COLS_U32 ?
						(uint32_t *)(void *)out +
							(size_t)f * count :
						NULL))
			goto out;
		at += (size_t)count * field_bytes(w[f]);
		pos += w[f];
	}
	err = 0;
out:
	symi_free_slab(planes, (size_t)total);
	return err;
}
