/*
 * logline.h - recognise the crash-log lines `sym symbolize-log` rewrites
 * (tools/logline.c; the command is tools/symbolize_log.c).
 *
 * logline_parse() takes one line without its newline, in memory, and
 * says which kind of frame it holds and where its parts are, as offsets
 * into the line: it allocates nothing and touches no file, so it is
 * fuzzed as it is (tests/fuzz/fuzz-log.c).  What the numbers mean, and
 * which file they belong to, is the command's business.
 */
#ifndef SYM_LOGLINE_H
#define SYM_LOGLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** What logline_parse() found. */
enum logline_kind {
	/** Nothing it knows: the line is passed through. */
	LOGLINE_NONE = 0,
	/** A sanitizer frame, `    #3 0xPC in F (MODULE+0xOFF)[ (BuildId:
	 *  HEX)]` or, unsymbolized, `    #3 0xPC  (MODULE+0xOFF)...`:
	 *  @addr is OFF, an address the runtime already moved back into
	 *  the call (what it would ask llvm-symbolizer for); @cut ends
	 *  `#3 0xPC`. */
	LOGLINE_SANITIZER,
	/** A sanitizer's unsymbolized summary, `SUMMARY: AddressSanitizer:
	 *  KIND (MODULE+0xOFF) (BuildId: HEX) `: @addr is OFF, @cut the
	 *  blank before `(`. */
	LOGLINE_SUMMARY,
	/** glibc's backtrace_symbols(), `MODULE(+0xOFF) [0xPC]` (the space
	 *  before `[` optional): @addr is OFF, a return address; or
	 *  `MODULE(NAME+0xOFF) [0xPC]`, OFF from the dynamic symbol NAME
	 *  (@symbol). */
	LOGLINE_BACKTRACE,
	/** The kernel's `NAME[PID]: segfault at ... ip HEX ... in
	 *  FILE[BASE+SIZE]` or `in FILE[OFF,BASE+SIZE]`: @addr is the ip,
	 *  @base and @size the mapping, @fileoff (when @has_fileoff) the
	 *  ip's offset in FILE. */
	LOGLINE_SEGFAULT,
	/** A runtime address alone on its line, `0xPC` between blanks:
	 *  @addr is PC (`sym symbolize-log --maps` places it). */
	LOGLINE_PC,
};

/** A part of the line: [off, off + len). */
struct logline_span {
	size_t off, len;
};

/** What logline_parse() fills. */
struct logline {
	enum logline_kind kind;
	/** The module's path (sanitizer, backtrace) or base name
	 *  (segfault). */
	struct logline_span module;
	/** The lowercase-or-not hex build ID; len 0 when the line has
	 *  none. */
	struct logline_span build_id;
	/** Backtrace: the symbol @addr is an offset from; len 0 when @addr
	 *  is the module's own address. */
	struct logline_span symbol;
	/** Sanitizer: the frame number N of `#N`, its digits, and the
	 *  end of `#N 0xPC`, where the symbolized text starts. */
	uint32_t frame;
	struct logline_span frame_no;
	size_t cut;
	uint64_t addr;
	uint64_t base, size, fileoff;
	bool has_fileoff;
};

/**
 * logline_parse() - which frame @s[0..@len) holds, if any.
 * @param s    one line, without its newline; a trailing '\r' is allowed;
 *             need not be NUL-terminated
 * @param[out] out  filled; kind LOGLINE_NONE (and zeros) when nothing
 *                  matched
 * @return out->kind
 */
enum logline_kind logline_parse(const char *s, size_t len,
				struct logline *out);

#endif /* SYM_LOGLINE_H */
