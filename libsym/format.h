/*
 * format.h - the on-disk (and in-memory) layout of a lookup table.
 *
 * Shared by build.c (the writer), table.c (the reader) and split.c.  The
 * layout is documented for humans in docs/table-format.md; keep the two in
 * step and bump SYM_TABLE_FORMAT for any change a reader of the old format
 * would misread.
 *
 * A table is one byte buffer: a header, then arrays at 8-byte aligned
 * offsets from the start of the buffer.  Every address is stored as a
 * 32-bit offset from hdr.base, so the buffer is position-independent and
 * can be used in place wherever it is mapped (LMDB pages, a file, memory).
 * Integers are in the byte order of the machine that built the table; the
 * header's byte-order mark rejects a foreign one.
 */
#ifndef SYM_FORMAT_H
#define SYM_FORMAT_H

#include <stdint.h>

#define SYMT_MAGIC "SYMTAB\r\n"
#define SYMT_BOM 0x01020304u
#define SYMT_NONE UINT32_MAX

struct symt_header {
	char magic[8];		/* SYMT_MAGIC */
	uint32_t format;	/* SYM_TABLE_FORMAT */
	uint32_t bom;		/* SYMT_BOM in the writer's byte order */
	uint32_t flags;		/* enum sym_table_flags */
	uint32_t size;		/* total bytes of the table */
	uint64_t base;		/* addresses are base + u32 offset */
	uint64_t start;		/* covered address range [start, end) */
	uint64_t end;
	/* Ranges: n_ranges ascending u32 offsets at off_addrs and as many
	 * struct symt_leaf at off_leaves.  Range i covers [addrs[i],
	 * addrs[i + 1]); the last range is a terminator with an empty leaf. */
	uint32_t n_ranges, off_addrs, off_leaves;
	/* struct symt_scope[n_scopes] */
	uint32_t n_scopes, off_scopes;
	/* struct symt_func[n_funcs] */
	uint32_t n_funcs, off_funcs;
	/* u32 string offsets, one per file */
	uint32_t n_files, off_files;
	/* struct symt_sym[n_syms], ascending by addr */
	uint32_t n_syms, off_syms;
	/* NUL-terminated strings; offset 0 is "", the last byte is NUL */
	uint32_t off_strings, strings_size;
	/* Symbol ranges: n_sranges ascending u32 offsets at off_saddrs and
	 * as many u32 symbol indices (SYMT_NONE: no symbol) at off_sidx.
	 * The chosen symbol of each range is precomputed (build.c). */
	uint32_t n_sranges, off_saddrs, off_sidx;
	/* CRC-32 (zlib's polynomial) of the whole table with this field
	 * taken as zero; checked by sym_table_verify(), not on open. */
	uint32_t crc;
	/* Who built it: SYMI_CONVERTER_VERSION and _ELFUTILS_VERSION. */
	uint32_t converter;
	uint32_t elfutils;
};

/* What is known at one address range: the innermost scope and the line
 * row.  scope and file are SYMT_NONE when unknown. */
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
};

/* A distinct function: strings are offsets into the string blob, 0 for
 * none; decl_file is a file index or SYMT_NONE. */
struct symt_func {
	uint32_t name;
	uint32_t linkage;
	uint32_t demangled;
	uint32_t decl_file;
	uint32_t decl_line;
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

/*
 * The view of a table buffer (table.c opens it; split.c reads it): the
 * header and the arrays, located once.
 */
struct sym_table {
	const char *buf;
	size_t len;
	const struct symt_header *h;
	const uint32_t *addrs;
	const struct symt_leaf *leaves;
	const struct symt_scope *scopes;
	const struct symt_func *funcs;
	const uint32_t *files;
	const struct symt_sym *syms;
	const uint32_t *saddrs, *sidx;
	const char *str;
	void *owned;		/* free() on close: see symi_table_adopt() */
};

/* The layout is the format: a change here needs a new SYM_TABLE_FORMAT. */
_Static_assert(sizeof(struct symt_header) == 128, "header layout");
_Static_assert(sizeof(struct symt_leaf) == 20, "leaf layout");
_Static_assert(sizeof(struct symt_scope) == 24, "scope layout");
_Static_assert(sizeof(struct symt_func) == 20, "func layout");
_Static_assert(sizeof(struct symt_sym) == 24, "sym layout");

#endif /* SYM_FORMAT_H */
