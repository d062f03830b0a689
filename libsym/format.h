/*
 * format.h - the on-disk (and in-memory) layout of a lookup table.
 *
 * Shared by pack.c (the writer), table.c (the reader), build.c and split.c.
 * The layout is documented for humans in docs/table-format.md; keep the two
 * in step and bump SYM_TABLE_FORMAT for any change a reader of the old
 * format would misread.
 *
 * A table is one byte buffer: a header, then areas at 8-byte aligned
 * offsets from the start of the buffer.  Every address is stored as an
 * offset from hdr.base, so the buffer is position-independent and can be
 * used in place wherever it is mapped (LMDB pages, a file, memory).
 *
 * Format 3 packs its records.  A packed array is `count` records of the
 * same fields, each field `w` bits wide (0 to 32: as many as the largest
 * value of that field in the table needs), back to back in a record of
 * whole bytes, records back to back: record i, field f starts at bit
 * 8 * i * ceil((sum of widths) / 8) + (sum of the widths before f), so a
 * field is one unaligned 64-bit load, a shift and a mask (format 6;
 * formats 3 to 5 rounded each width up to whole bytes).  The address
 * ranges, most of a table, are packed tighter: cut into blocks of
 * 2^block_shift ranges that each choose their own field widths in bits
 * and bases (frame of reference), see "Blocks" below.  A bit area is
 * little-endian too: bit i is bit i % 8 of byte i / 8, and a field of up
 * to SYMT_WMAX bits is read with one unaligned 64-bit load.  Every area
 * is followed by at least SYMT_PAD bytes of padding so that such loads
 * never leave it.  The header itself is plain integers in the byte order
 * of the machine that built the table; its byte-order mark rejects a
 * foreign one.
 */
#ifndef SYM_FORMAT_H
#define SYM_FORMAT_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

struct symi_zstr;

#define SYMT_MAGIC "SYMTAB\r\n"
#define SYMT_BOM 0x01020304u
#define SYMT_NONE UINT32_MAX
/* Widest bit field (range blocks) a reader accepts: a field is read with
 * one 64-bit load from the byte holding its first bit, so shift (< 8) +
 * width <= 64. */
#define SYMT_WMAX 40
/* Widest field of a packed array, in bits. */
#define SYMT_BMAX 32
/* Most fields a packed record has. */
#define SYMT_FIELDS 8
/* Padding after every bit area, in bytes. */
#define SYMT_PAD 8
/* Largest block shift a reader accepts (256 ranges per block). */
#define SYMT_SHIFT_MAX 8
/* Frames of a compressed string blob: 2^12 to 2^20 bytes. */
#define SYMT_ZSHIFT_MIN 12
#define SYMT_ZSHIFT_MAX 20

/*
 * One packed record array: @count records at byte @off, @bytes long
 * (>= count * record bytes + SYMT_PAD), field f @w[f] bits wide (unused
 * fields 0).  Which fields an array has, in order, is fixed per array;
 * see the enums below.
 */
struct symt_packed {
	uint32_t count;
	uint32_t off;
	uint32_t bytes;
	uint8_t w[SYMT_FIELDS];
};

/* Fields of the packed arrays.  "code" fields hold 0 for none, else the
 * value + 1. */
enum symt_scope_field {
	SYMT_SC_PARENT,		/* 0: none, else this index - parent index */
	SYMT_SC_FUNC,		/* code of the function index */
	SYMT_SC_CALL_FILE,	/* code of the file index */
	SYMT_SC_CALL_LINE,
	SYMT_SC_CALL_COLUMN,
	SYMT_SC_ENTRY,		/* code of the entry address - base */
	SYMT_SC_FLAGS,		/* enum symt_scope_flags */
	SYMT_SC_N
};
enum symt_func_field {
	SYMT_FN_NAME,		/* string offsets, 0 for none */
	SYMT_FN_LINKAGE,
	SYMT_FN_DEMANGLED,
	SYMT_FN_DECL_FILE,	/* code of the file index */
	SYMT_FN_DECL_LINE,
	SYMT_FN_OUTER,		/* string: the enclosing subprogram's name */
	SYMT_FN_FLAGS,		/* enum symt_func_flags */
	SYMT_FN_EU,		/* string: eu-addr2line's name, 0 for its own */
	SYMT_FN_N
};
enum symt_file_field {
	SYMT_FI_NAME,		/* string: the whole path */
	SYMT_FI_REL,		/* bytes of it before the relative path */
	SYMT_FI_N
};
enum symt_sym_field {
	SYMT_SY_ADDR,		/* offset from base; ascending */
	SYMT_SY_SIZE,		/* 0 when unknown (sizeless symbol) */
	SYMT_SY_NAME,
	SYMT_SY_DEMANGLED,
	SYMT_SY_KIND,		/* index of its kind (format 8) */
	SYMT_SY_N
};
/* A symbol's kind: what symbols share besides their address, size and
 * names, stored once (format 8: a libc has 668 kinds for 8,912 symbols,
 * python3.11d 346 for 24,495). */
enum symt_kind_field {
	SYMT_SK_FILE,		/* STT_FILE name of a local symbol, or 0 */
	SYMT_SK_FLAGS,		/* enum symi_sym_flags */
	SYMT_SK_N
};
/* A symbol range names a symbol per peer's rules (docs/table-format.md,
 * "Symbol ranges"): the first is eu-addr2line's, the one sym_frame.symbol
 * gives. */
enum symt_srange_field {
	SYMT_SR_ADDR,		/* offset from base; strictly ascending */
	SYMT_SR_SYM,		/* code of the symbol index: eu-addr2line's */
	SYMT_SR_GNU,		/* the same: GNU addr2line's (bfd's) */
	SYMT_SR_LLVM,		/* the same: llvm-symbolizer 14's */
	SYMT_SR_N
};
/* Which peer's choice: index into struct symi_tab's sidx[]. */
enum symt_choice { SYMT_CH_EU, SYMT_CH_GNU, SYMT_CH_LLVM, SYMT_CH_N };

/* Flags of a function. */
enum symt_func_flags {
	/* The CU's language does not mangle names (C, Fortran, asm...):
	 * its DW_AT_name is its linkage name, as bfd takes it. */
	SYMT_FUNC_PLAIN = (1 << 0),
	/* DW_AT_decl_file is a DW_FORM_implicit_const, which
	 * llvm-symbolizer 14 does not read as a file index: its JSON
	 * "StartFileName" is "". */
	SYMT_FUNC_DECL_CONST = (1 << 1),
	/* The builder's spelling callback accepted the demangled name
	 * (SYM_FRAME_SPELLING); not part of what deduplicates functions. */
	SYMT_FUNC_SPELLING = (1 << 2),
};

/* Flags of a scope. */
enum symt_scope_flags {
	/* The DIE has no DW_AT_low_pc (DW_AT_ranges only): entry is its
	 * first range's start, and llvm-symbolizer 14's JSON
	 * "StartAddress" is "". */
	SYMT_SCOPE_NO_LOW_PC = (1 << 0),
};

/*
 * Blocks.  Range i is entry i % 2^shift of block i >> shift; the last
 * block may be short.  bstart[b] is the offset from base where block b's
 * first range starts (ascending), boff[b] the byte offset of its bits in
 * the block area.  A block's bits are:
 *   - 6 widths of 6 bits: addr, scope, file, line, column, discriminator;
 *   - SYMT_BK_BASES (7) bases, their widths global (header bw[]):
 *     scope, file, line (zigzag-encoded signed), column, discriminator,
 *     then the address slope S and the address base R (zigzag-encoded
 *     signed; format 6);
 *   - k - 1 address fields: range j >= 1 starts at bstart[b] + field +
 *     ((j * S) >> SYMT_BK_SLOPE_SHIFT) + R (range 0 at bstart[b]),
 *     ascending: the fields are what is left of a straight line from
 *     the block's first range to its last;
 *   - k leaf records of the 5 code fields scope, file, line, column,
 *     discriminator (docs/table-format.md says how each decodes).
 */
enum symt_block_field {
	SYMT_BK_ADDR,
	SYMT_BK_SCOPE,
	SYMT_BK_FILE,
	SYMT_BK_LINE,
	SYMT_BK_COLUMN,
	SYMT_BK_DISC,
	SYMT_BK_N
};
#define SYMT_BK_WBITS 6		/* bits of each width in a block header */
#define SYMT_BK_BASES 7		/* bases in a block header */
#define SYMT_BK_SLOPE_SHIFT 4	/* fraction bits of the address slope */

struct symt_header {
	char magic[8];		/* SYMT_MAGIC */
	uint32_t format;	/* SYM_TABLE_FORMAT */
	uint32_t bom;		/* SYMT_BOM in the writer's byte order */
	uint32_t flags;		/* enum sym_table_flags */
	uint32_t size;		/* total bytes of the table */
	uint64_t base;		/* addresses are base + offset */
	uint64_t start;		/* covered address range [start, end) */
	uint64_t end;
	/* CRC-32 (zlib's polynomial) of the whole table with this field
	 * taken as zero; checked by sym_table_verify(), not on open. */
	uint32_t crc;
	/* Who built it: SYMI_CONVERTER_VERSION and _ELFUTILS_VERSION. */
	uint32_t converter;
	uint32_t elfutils;
	/* Ranges: n_ranges, the last a terminator with an empty leaf, in
	 * n_blocks = ceil(n_ranges / 2^block_shift) blocks.  u32
	 * bstart[n_blocks] at off_bstart, u32 boff[n_blocks] at off_boff,
	 * the block bits in [off_blocks, off_blocks + blocks_size). */
	uint32_t n_ranges;
	uint32_t n_blocks;
	uint32_t off_bstart;
	uint32_t off_boff;
	uint32_t off_blocks;
	uint32_t blocks_size;
	uint8_t block_shift;
	uint8_t bw[SYMT_BK_BASES];	/* widths of the block bases */
	struct symt_packed scopes;	/* enum symt_scope_field */
	struct symt_packed funcs;	/* enum symt_func_field */
	struct symt_packed files;	/* enum symt_file_field */
	struct symt_packed syms;	/* enum symt_sym_field */
	struct symt_packed sranges;	/* enum symt_srange_field */
	/* NUL-terminated strings; offset 0 is "", the last byte is NUL.
	 * A string may start inside another (a shared tail).  strings_size
	 * bytes, stored plain or compressed as the demangled names are
	 * (format 8): see below. */
	uint32_t off_strings, strings_size;
	/* Demangled names (format 7): a blob of their own, laid out as the
	 * strings are, that the `demangled` fields of functions and
	 * symbols point into; dstrings_size bytes. */
	uint32_t off_dstrings, dstrings_size;
	/* How each blob is stored: plain (zbytes 0), or as zbytes bytes of
	 * zstd frames: u32 zoff[n + 1], then the frames, frame i the
	 * compressed bytes [zoff[i], zoff[i + 1]) of the area (zoff[0] =
	 * 4 * (n + 1)) and bytes [i << shift, (i + 1) << shift) of the
	 * blob, n = ceil(size / 2^shift).  No string crosses into the next
	 * frame unless it is longer than a frame. */
	uint32_t dstrings_zbytes, dstrings_shift;
	uint32_t strings_zbytes, strings_shift;	/* format 8 */
	struct symt_packed skinds;	/* format 8: enum symt_kind_field */
	/* Format 9: the block index stored as compressed columns (cols.c):
	 * 0 when bstart[] and boff[] are plain, else the bytes of the
	 * column area at off_bstart (bstart then boff, 32 bits each; then
	 * off_boff is 0). */
	uint32_t zindex;
	/* Format 9: each packed array, in enum symt_rec order, stored plain
	 * (0) or as zrec[r] bytes of compressed columns at its off, which
	 * build back into its bytes (= count * record bytes + SYMT_PAD). */
	uint32_t zrec[6];
};

/* The packed arrays, in the order of the header and of zrec[]. */
enum symt_rec {
	SYMT_R_SCOPES,
	SYMT_R_FUNCS,
	SYMT_R_FILES,
	SYMT_R_SYMS,
	SYMT_R_SRANGES,
	SYMT_R_SKINDS,
	SYMT_R_N
};

/*
 * Decoded records: what the reader decodes one entry into, what the
 * builder collects and what symi_table_pack() encodes.  Indices are
 * SYMT_NONE for none.
 */

/* What is known at one address range: the innermost scope and the line
 * row.  scope and file are SYMT_NONE when unknown; both unknown is a hole
 * (then line, column and discriminator mean nothing). */
struct symt_leaf {
	uint32_t scope;
	uint32_t file;
	uint32_t line;
	uint32_t column;
	uint32_t discriminator;
};

/* A function instance: a subprogram (parent SYMT_NONE) or an inlined
 * call (parent is the scope it was inlined into; call_* say where). */
struct symt_scope {
	uint32_t parent;
	uint32_t func;
	uint32_t call_file;
	uint32_t call_line;
	uint32_t call_column;
	uint32_t entry;		/* offset of the entry address from base */
	uint32_t flags;		/* enum symt_scope_flags */
};

/* A distinct function: strings are offsets into the string blob, 0 for
 * none; decl_file is a file index or SYMT_NONE. */
struct symt_func {
	uint32_t name;
	uint32_t linkage;
	uint32_t demangled;
	uint32_t decl_file;
	uint32_t decl_line;
	/* The linkage name (else the name) of the innermost
	 * DW_TAG_subprogram that holds the function's definition, as a
	 * lambda's operator() is held in the function that defines the
	 * lambda; 0 when none (a function at namespace scope).
	 * eu-addr2line prints it after an inlined innermost frame. */
	uint32_t outer;
	uint32_t flags;		/* enum symt_func_flags */
	/* The name eu-addr2line 0.188 prints for this subprogram, 0 when
	 * it is the function's own (linkage name, else name): gas 2.40
	 * writes one DW_TAG_subprogram per alias of an assembler function,
	 * all with the same range, and libdw's dwarf_getscopes() takes the
	 * first in DIE order where the other peers take the last (libc's
	 * dup: __dup, __GI___dup, dup, __GI_dup).  This is the first's. */
	uint32_t eu;
};

/* A source file: its whole path as the peers spell it (comp_dir, the
 * include directory, the name) and how many bytes of it come before the
 * path relative to the compilation directory (llvm-symbolizer
 * --relativenames prints name + rel). */
struct symt_file {
	uint32_t name;		/* string offset */
	uint32_t rel;		/* <= the string's length */
};

/* A symbol-table entry; one per address (the preferred one). */
struct symt_sym {
	uint32_t addr;		/* offset from base */
	uint32_t size;		/* 0 when unknown (sizeless symbol) */
	uint32_t name;
	uint32_t demangled;
	uint32_t file;		/* STT_FILE name of a local symbol, or 0 */
	uint32_t flags;		/* enum symi_sym_flags */
};

/* A packed array located and checked by sym_table_open(). */
struct symt_view {
	const uint8_t *p;
	/* Records built a chunk at a time (zstr.c), or NULL: those of a
	 * chunk not yet built read as zeros (table.c's rec_ready()). */
	struct symi_zstr *lz;
	uint32_t n;		/* records */
	uint32_t stride;	/* bytes per record */
	uint32_t mask[SYMT_FIELDS];	/* of each field's bits */
	uint8_t at[SYMT_FIELDS];	/* byte of each field's first bit */
	uint8_t sh[SYMT_FIELDS];	/* and the bit in that byte */
};

/*
 * A string blob of a table: in the buffer when plain, else the process's
 * shared inflated copy (zstr.c).
 */
struct symt_blob {
	const char *plain;	/* NULL when compressed */
	uint32_t n;		/* its bytes, >= 1 */
	struct symi_zstr *z;	/* NULL: plain; else a reference */
};

/*
 * The view of a table buffer (table.c opens it; split.c reads it): the
 * header and the areas, located once.
 */
struct sym_table {
	const char *buf;
	size_t len;
	const struct symt_header *h;
	const uint32_t *bstart, *boff;
	const uint8_t *blocks;
	uint32_t blocks_size;
	uint32_t bhdr_bits;	/* bits of a block header */
	struct symt_view scopes, funcs, files, syms, sranges, skinds;
	/* References on records built back from columns (format 9), the
	 * last the block index's; NULL for a plain area. */
	struct symi_zstr *zrec[SYMT_R_N + 1];
	uint64_t known;		/* symi_table_open_known()'s key, or 0 */
	/* The two string blobs (symi_blob_at()). */
	struct symt_blob str;	/* the strings */
	struct symt_blob dstr;	/* the demangled names */
	void *owned;		/* free() on close: see symi_table_adopt() */
};

/* Bits [pos, pos + w) of the area @p, w <= SYMT_WMAX. */
static inline uint64_t symt_bits(const uint8_t *p, uint64_t pos, unsigned w)
{
	uint64_t v;

	memcpy(&v, p + (pos >> 3), sizeof(v));
	v = le64toh(v);
	return (v >> (pos & 7)) & (((uint64_t)1 << w) - 1);
}

/* OR @v (< 2^w) into bits [pos, pos + w) of the zeroed area @p. */
static inline void symt_put(uint8_t *p, uint64_t pos, unsigned w, uint64_t v)
{
	uint64_t x;

	if (!w)
		return;
	memcpy(&x, p + (pos >> 3), sizeof(x));
	x = le64toh(x) | v << (pos & 7);
	x = htole64(x);
	memcpy(p + (pos >> 3), &x, sizeof(x));
}

/* The little-endian u32 at @p, and @v stored so: the offsets and keys of
 * the compressed areas' indexes (zstr.c, cols.c). */
static inline uint32_t symt_rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline void symt_wr32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

/* Field @f of record @i of @v; @i < v->n is the caller's check. */
static inline uint32_t symt_get(const struct symt_view *v, uint32_t i,
				unsigned f)
{
	uint64_t x;

	memcpy(&x, v->p + (size_t)i * v->stride + v->at[f], sizeof(x));
	return (uint32_t)(le64toh(x) >> v->sh[f]) & v->mask[f];
}

/* The layout is the format: a change here needs a new SYM_TABLE_FORMAT. */
_Static_assert(sizeof(struct symt_packed) == 20, "packed layout");
_Static_assert(sizeof(struct symt_header) == 272, "header layout");

#endif /* SYM_FORMAT_H */
