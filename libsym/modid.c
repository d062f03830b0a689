/*
 * modid.c - module IDs for files without a GNU build ID (modid.h has the
 * rule), and the note walker behind them and behind the GNU build ID.
 *
 * Compiled into libsym and into libsymprof, the LD_PRELOAD sampler, which
 * links libc alone and runs inside other programs: so no allocation, no
 * logging and no libsym call here, and SHA-256 is our own (FIPS 180-4,
 * checked against its test vectors in tests/unit/t-modid.c) rather than
 * a crypto library's.  Every function is pure but symi_modid_fd(), which
 * only preads.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "modid.h"
#include "base.h"

static const uint32_t K[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b,
	0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01,
	0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7,
	0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
	0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152,
	0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
	0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
	0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08,
	0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
	0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static inline uint32_t ror(uint32_t x, unsigned n)
{
	return (x >> n) | (x << (32 - n));
}

static void sha256_block(uint32_t h[8], const uint8_t *p)
{
	uint32_t w[64], s[8], t1, t2;
	int i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (; i < 64; i++)
		w[i] = w[i - 16] + w[i - 7] +
		       (ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^
			(w[i - 15] >> 3)) +
		       (ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^
			(w[i - 2] >> 10));
	memcpy(s, h, sizeof(s));
	for (i = 0; i < 64; i++) {
		t1 = s[7] + (ror(s[4], 6) ^ ror(s[4], 11) ^ ror(s[4], 25)) +
		     ((s[4] & s[5]) ^ (~s[4] & s[6])) + K[i] + w[i];
		t2 = (ror(s[0], 2) ^ ror(s[0], 13) ^ ror(s[0], 22)) +
		     ((s[0] & s[1]) ^ (s[0] & s[2]) ^ (s[1] & s[2]));
		memmove(s + 1, s, 7 * sizeof(s[0]));
		s[4] += t1;
		s[0] = t1 + t2;
	}
	for (i = 0; i < 8; i++)
		h[i] += s[i];
}

void symi_sha256_init(struct symi_sha256 *c)
{
	static const uint32_t h0[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};

	memset(c, 0, sizeof(*c));
	memcpy(c->h, h0, sizeof(h0));
}

void symi_sha256_update(struct symi_sha256 *c, const void *data, size_t n)
{
	const uint8_t *p = data;
	size_t take;

	c->bytes += n;
	while (n > 0) {
		if (c->fill == 0 && n >= 64) {
			sha256_block(c->h, p);
			p += 64;
			n -= 64;
			continue;
		}
		take = 64 - c->fill < n ? 64 - c->fill : n;
		memcpy(c->buf + c->fill, p, take);
		c->fill += take;
		p += take;
		n -= take;
		if (c->fill == 64) {
			sha256_block(c->h, c->buf);
			c->fill = 0;
		}
	}
}

void symi_sha256_final(struct symi_sha256 *c, uint8_t out[32])
{
	uint64_t bits = c->bytes * 8;
	uint8_t pad[72] = { 0x80 };
	size_t padlen = (c->fill < 56 ? 56 : 120) - c->fill;
	int i;

	for (i = 0; i < 8; i++)
		pad[padlen + i] = (uint8_t)(bits >> (56 - 8 * i));
	symi_sha256_update(c, pad, padlen + 8);
	for (i = 0; i < 8; i++) {
		out[4 * i] = (uint8_t)(c->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)c->h[i];
	}
}

/* The size of a note block's alignment padding: @off rounded up. */
static size_t note_align(size_t off, size_t align)
{
	return (off + align - 1) & ~(align - 1);
}

/*
 * The layout is the gABI's, with the 8-byte variant as glibc's
 * ELF_NOTE_NEXT_OFFSET and libelf's gelf_getnote() read it: a 12-byte
 * header (namesz, descsz, type), the name at +12, the descriptor at +12
 * + namesz rounded up to @align, the next note after the descriptor
 * rounded up to @align.  Each size is compared with what is left before
 * it is added.
 */
int symi_notes_find(const void *notes, size_t len, size_t align,
		    const char *name, size_t namesz, uint32_t type,
		    size_t maxdesc, const uint8_t **desc, size_t *desclen)
{
	const uint8_t *p = notes;
	size_t pos = 0, name_off, desc_off;
	uint32_t hdr[3];	/* namesz, descsz, type */

	align = align == 8 ? 8 : 4;
	while (len - pos >= sizeof(hdr)) {
		memcpy(hdr, p + pos, sizeof(hdr));
		name_off = pos + sizeof(hdr);
		if (hdr[0] > len - name_off)
			break;
		desc_off = note_align(name_off + hdr[0], align);
		if (desc_off > len || hdr[1] > len - desc_off)
			break;
		if (hdr[2] == type && hdr[0] == namesz &&
		    memcmp(p + name_off, name, namesz) == 0 && hdr[1] > 0 &&
		    hdr[1] <= maxdesc) {
			*desc = p + desc_off;
			*desclen = hdr[1];
			return 0;
		}
		/* The last note's padding may be cut off: then it is the
		 * end. */
		pos = note_align(desc_off + hdr[1], align);
		if (pos >= len)
			break;
	}
	return -1;
}

void symi_modid_go(const void *desc, size_t len, uint8_t out[SYMI_MODID_LEN])
{
	struct symi_sha256 c;
	uint8_t sum[32];

	symi_sha256_init(&c);
	symi_sha256_update(&c, SYMI_MODID_GO_PREFIX,
			   sizeof(SYMI_MODID_GO_PREFIX));	/* with NUL */
	symi_sha256_update(&c, desc, len);
	symi_sha256_final(&c, sum);
	memcpy(out, sum, SYMI_MODID_LEN);
}

void symi_modid_file(const void *head, size_t headlen, const void *tail,
		     size_t taillen, uint64_t size,
		     uint8_t out[SYMI_MODID_LEN])
{
	struct symi_sha256 c;
	uint8_t be[8], sum[32];

	for (int i = 0; i < 8; i++)
		be[i] = (uint8_t)(size >> (56 - 8 * i));
	symi_sha256_init(&c);
	symi_sha256_update(&c, head, headlen);
	symi_sha256_update(&c, tail, taillen);
	symi_sha256_update(&c, be, sizeof(be));
	symi_sha256_final(&c, sum);
	memcpy(out, sum, SYMI_MODID_LEN);
}

/* Read exactly @n bytes at @off. */
static int pread_all(int fd, uint8_t *buf, size_t n, uint64_t off)
{
	size_t done = 0;
	ssize_t got;

	while (done < n) {
		got = pread(fd, buf + done, n - done, (off_t)(off + done));
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -errno;
		if (got == 0)
			return -EIO;
		done += (size_t)got;
	}
	return 0;
}

int symi_modid_fd(int fd, uint64_t size, uint8_t out[SYMI_MODID_LEN])
{
	uint8_t head[SYMI_MODID_PART], tail[SYMI_MODID_PART];
	size_t n = size < SYMI_MODID_PART ? (size_t)size : SYMI_MODID_PART;
	int err;

	err = pread_all(fd, head, n, 0);
	if (!err)
		err = pread_all(fd, tail, n, size - n);
	if (!err)
		symi_modid_file(head, n, tail, n, size, out);
	return err;
}
