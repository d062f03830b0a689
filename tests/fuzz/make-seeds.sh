#!/bin/sh
# make-seeds.sh - regenerate the seed corpora of the fuzz targets.
#
#   tests/fuzz/make-seeds.sh            (from the project root)
#   tests/fuzz/make-seeds.sh --tables   (the table seeds only)
#
# Writes tests/fuzz/corpus/fuzz-elf/seed-* and
# tests/fuzz/corpus/fuzz-table/seed-*.  With --tables the ELF seeds are
# built in a temporary directory (the table seeds are made from them) and
# the ELF corpus is left alone: for a change of the table format.  Files not named seed-* (crash-*
# regressions, inputs a fuzzer run found and someone copied in) are kept.
# Needs gcc, g++, clang, binutils, dwz, xz, python3, and lib/libsym.a for
# the table seeds (built with `make lib/libsym.a` when missing).
#
# The ELF seeds are the freestanding programs of tests/fuzz/seeds/ (no
# libc: -nostdlib -static, a few KB each) built with both compilers, at
# several -O levels and DWARF versions, then post-processed the ways the
# library must handle: compressed debug sections, stripped, debug-only,
# shared object, MiniDebugInfo, dwz, split DWARF skeleton, i386.  Broken
# variants are derived from them with corrupt.py (truncations, flipped
# bytes in chosen sections, bad section and ELF headers).  The table seeds
# are the tables libsym builds for some of those (gen-table-seeds.c),
# plus targeted corruptions of the documented table format: parent-link
# cycles, out-of-range indexes and string offsets, unsorted addresses,
# bad counts and offsets.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
SEEDS=tests/fuzz/seeds
ELF_OUT=tests/fuzz/corpus/fuzz-elf
TAB_OUT=tests/fuzz/corpus/fuzz-table
CORRUPT="python3 tests/fuzz/corrupt.py"
T=$(mktemp -d "${TMPDIR:-/tmp}/sym-seeds.XXXXXX")
trap 'rm -rf "$T"' EXIT
if [ "${1:-}" = --tables ]; then
	ELF_OUT=$T/elf-out
fi

mkdir -p "$ELF_OUT" "$TAB_OUT"
rm -f "$ELF_OUT"/seed-* "$TAB_OUT"/seed-*

# Small freestanding links: no separate code pages, no RELRO padding.
LDSMALL="-nostdlib -static -Wl,-z,noseparate-code -Wl,-z,norelro
-Wl,--build-id=sha1 -Wl,--no-warn-rwx-segments"
CXXSMALL="-fno-exceptions -fno-rtti -fno-asynchronous-unwind-tables"

e() { echo "  $*" >&2; "$@"; }

# elf NAME COMPILER SOURCE FLAGS...: build one ELF seed.
elf() {
	name=$1 cc=$2 src=$3
	shift 3
	# shellcheck disable=SC2086
	e $cc "$@" $LDSMALL -o "$T/$name" "$SEEDS/$src"
	cp "$T/$name" "$ELF_OUT/seed-$name"
}

# --- ELF seeds -------------------------------------------------------------
elf gcc-O2-dw5 gcc tiny.c -g -gdwarf-5 -O2
elf gcc-O0-dw4 gcc tiny.c -g -gdwarf-4 -O0
elf gcc-O2-dw2 gcc tiny.c -g -gdwarf-2 -O2
elf gcc-O2-gc gcc tiny.c -g -O2 -ffunction-sections -Wl,--gc-sections
elf clang-O2-dw5 clang tiny.c -g -gdwarf-5 -O2
elf clang-O1-dw4 clang tiny.c -g -gdwarf-4 -O1
# shellcheck disable=SC2086
elf gxx-O2-dw5 g++ tiny.cc -g -gdwarf-5 -O2 $CXXSMALL
# shellcheck disable=SC2086
elf clangxx-O2-dw4 clang++ tiny.cc -g -gdwarf-4 -O2 $CXXSMALL
# shellcheck disable=SC2086
elf gxx-O0-dw4 g++ tiny.cc -g -gdwarf-4 -O0 $CXXSMALL
# Enough C++ names that the table stores its demangled names compressed
# (zstd frames, docs/table-format.md "Compressed strings").
{
	echo 'namespace a_namespace_with_a_long_name { namespace inner {'
	for i in $(seq 100 199); do
		echo "template <typename T> int function_number_$i(T x, T *p);"
		echo "template <> int function_number_$i<long>(long x, long *p)"
		echo "{ return (int)(x + *p) * $i; }"
	done
	echo '} }'
} > "$T/names.cc"
e g++ -g -O1 $CXXSMALL $LDSMALL -o "$T/gxx-names" "$T/names.cc"
cp "$T/gxx-names" "$ELF_OUT/seed-gxx-names"
elf gcc-O2-split gcc tiny.c -g -O2 -gsplit-dwarf
rm -f ./*.dwo "$T"/*.dwo
elf gcc-O2-i386 gcc tiny.c -m32 -g -O2
# A shared object: .dynsym, relative addresses, ET_DYN.
e gcc -shared -fPIC -g -O2 -nostdlib -Wl,-z,noseparate-code -Wl,-z,norelro \
	-Wl,--build-id=sha1 -o "$T/gcc-O2-shared.so" "$SEEDS/tiny.c"
cp "$T/gcc-O2-shared.so" "$ELF_OUT/seed-gcc-O2-shared"

# A kernel module's shape (ET_REL with .modinfo: symbols at .text offsets,
# docs/design.md "Kernel modules") and a plain object file (refused).
e gcc -c -O2 -fno-asynchronous-unwind-tables -o "$T/tiny.o" "$SEEDS/tiny.c"
printf 'license=GPL\0name=tiny\0' > "$T/modinfo"
e objcopy --remove-section .comment --add-section .modinfo="$T/modinfo" \
	"$T/tiny.o" "$ELF_OUT/seed-ko-rel"
cp "$T/tiny.o" "$ELF_OUT/seed-bad-rel-object"
# A module with DWARF: its .rela.debug_* applied by libsym/reloc.c
# (DWARF 5 and 4, and zlib-compressed debug sections, which are inflated
# before they are relocated).
for v in 4 5; do
	e gcc -c -O2 -g -gdwarf-$v -fno-asynchronous-unwind-tables \
		-o "$T/tiny-g$v.o" "$SEEDS/tiny.c"
	e objcopy --remove-section .comment \
		--add-section .modinfo="$T/modinfo" "$T/tiny-g$v.o" \
		"$ELF_OUT/seed-ko-dwarf$v"
done
e objcopy --compress-debug-sections=zlib "$ELF_OUT/seed-ko-dwarf5" \
	"$ELF_OUT/seed-ko-dwarf5-zlib"
# Modules compressed whole (.ko.xz, .ko.zst, .ko.gz), and truncated ones.
e sh -c 'xz -c "$1" > "$2"' xz "$ELF_OUT/seed-ko-dwarf5" \
	"$ELF_OUT/seed-ko-dwarf5-xz"
e sh -c 'head -c 200 "$1" > "$2"' head "$ELF_OUT/seed-ko-dwarf5-xz" \
	"$ELF_OUT/seed-bad-ko-xz-truncated"
e sh -c 'gzip -n -c "$1" > "$2"' gzip "$ELF_OUT/seed-ko-dwarf5" \
	"$ELF_OUT/seed-ko-dwarf5-gz"
e sh -c 'head -c 200 "$1" > "$2"' head "$ELF_OUT/seed-ko-dwarf5-gz" \
	"$ELF_OUT/seed-bad-ko-gz-truncated"
if command -v zstd > /dev/null; then
	e sh -c 'zstd -q -c "$1" > "$2"' zstd "$ELF_OUT/seed-ko-dwarf5" \
		"$ELF_OUT/seed-ko-dwarf5-zst"
fi

g="$T/gcc-O2-dw5"
e objcopy --compress-debug-sections=zlib "$g" "$ELF_OUT/seed-gcc-O2-zlib"
if objcopy --compress-debug-sections=zstd "$g" "$T/zstd" 2>/dev/null; then
	cp "$T/zstd" "$ELF_OUT/seed-gcc-O2-zstd"
fi
e objcopy --compress-debug-sections=zlib "$T/gxx-O2-dw5" \
	"$ELF_OUT/seed-gxx-O2-zlib"
e strip --strip-debug -o "$ELF_OUT/seed-gcc-O2-nodebug" "$g"
e strip --strip-all -o "$T/stripped" "$g"
cp "$T/stripped" "$ELF_OUT/seed-gcc-O2-stripped"
e objcopy --only-keep-debug "$g" "$ELF_OUT/seed-gcc-O2-debugonly"
e objcopy --only-keep-debug "$T/clang-O2-dw5" \
	"$ELF_OUT/seed-clang-O2-debugonly"

# MiniDebugInfo as Fedora makes it (gdb manual, "MiniDebugInfo"): the
# function symbols of .symtab, xz-compressed into .gnu_debugdata of the
# stripped file.
nm "$g" --format=posix --defined-only | awk '{ print $1 }' | sort \
	> "$T/funcsyms"
e objcopy --only-keep-debug "$g" "$T/mini.debug"
e objcopy -S --remove-section .gdb_index --remove-section .comment \
	--keep-symbols="$T/funcsyms" "$T/mini.debug"
xz -k "$T/mini.debug"
e objcopy --add-section .gnu_debugdata="$T/mini.debug.xz" "$T/stripped" \
	"$ELF_OUT/seed-gcc-O2-minidebug"

# dwz on one file (no alt file): partial units, DW_TAG_imported_unit.
cp "$T/gxx-O0-dw4" "$T/dwz"
if e dwz "$T/dwz" 2>/dev/null; then
	cp "$T/dwz" "$ELF_OUT/seed-gxx-O0-dwz"
fi

# --- broken ELF seeds -------------------------------------------------------
b() { name=$1 src=$2; shift 2; $CORRUPT "$src" "$ELF_OUT/seed-bad-$name" "$@"; }
b trunc-ehdr "$g" truncbytes 64
b trunc-half "$g" trunc 0.5
b trunc-90 "$T/clang-O2-dw5" trunc 0.9
b trunc-zlib "$ELF_OUT/seed-gcc-O2-zlib" trunc 0.8
b info-flip "$g" flip .debug_info 1 12
b info-flip2 "$T/gxx-O2-dw5" flip .debug_info 2 24
b info-zero "$T/clang-O2-dw5" zero .debug_info
b abbrev-flip "$g" flip .debug_abbrev 3 6
b line-flip "$g" flip .debug_line 4 10
b line-flip-clang "$T/clang-O2-dw5" flip .debug_line 5 10
b str-offsets-flip "$T/clang-O2-dw5" flip .debug_str_offsets 6 4
b rnglists-flip "$g" flip .debug_rnglists 7 4
b loclists-zero "$g" zero .debug_loclists
b aranges-flip "$T/gcc-O0-dw4" flip .debug_aranges 8 6
b zlib-flip "$ELF_OUT/seed-gcc-O2-zlib" flip .debug_info 9 8
# Corrupt relocations of a module's DWARF: entries, sizes, links.
b ko-rela-flip "$ELF_OUT/seed-ko-dwarf5" flip .rela.debug_info 3 24
b ko-rela-line-flip "$ELF_OUT/seed-ko-dwarf5" flip .rela.debug_line 5 8
b ko-rela-size "$ELF_OUT/seed-ko-dwarf5" shdr size 0x7fffffff .rela.debug_info
b ko-rela-info "$ELF_OUT/seed-ko-dwarf5" shdr info 0x7fff .rela.debug_info
b ko-rela-link "$ELF_OUT/seed-ko-dwarf5" shdr link 1 .rela.debug_info
b ko-rela-entsize "$ELF_OUT/seed-ko-dwarf4" shdr entsize 7 .rela.debug_info
b ko-debug-size "$ELF_OUT/seed-ko-dwarf5" shdr size 8 .debug_info
b zlib-size "$ELF_OUT/seed-gcc-O2-zlib" shdr size 0x7fffffff .debug_info
b symtab-flip "$g" flip .symtab 10 16
b strtab-zero "$g" zero .strtab
b symtab-entsize "$g" shdr entsize 0 .symtab
b symtab-link "$g" shdr link 9999 .symtab
b note-flip "$g" flip .note.gnu.build-id 11 4
b shoff "$g" ehdr shoff 0xfffffffffff0
b shnum "$g" ehdr shnum 0xffff
b shstrndx "$g" ehdr shstrndx 0xfff0
b shentsize "$g" ehdr shentsize 7
b phoff "$g" ehdr phoff 0xfffffff0
b sh-offsets "$g" shdr offset 0x7ffffffffff0 .debug_info
b sh-sizes "$g" shdr size 0xffffffffffff .debug_line
b text-addr "$g" shdr addr 0xffffffffffff0000 .text
b minidebug-flip "$ELF_OUT/seed-gcc-O2-minidebug" flip .gnu_debugdata 12 8
b bytes "$T/gxx-O2-dw5" bytes 13 40
b bytes-hdr "$g" bytes 14 8 0
if [ -f "$ELF_OUT/seed-gcc-O2-zstd" ]; then
	b zstd-flip "$ELF_OUT/seed-gcc-O2-zstd" flip .debug_info 15 8
	b zstd-size "$ELF_OUT/seed-gcc-O2-zstd" shdr size 0x7fffffff .debug_line
fi
# Decompression bombs (as t0240 makes them: real streams of zeros that
# decompress to what they declare), refused by the limits before any
# allocation; and line programs lines.c cannot follow to their end (as
# t0242 damages them), read again by libdw.
BOMB="python3 tests/e2e/lib/elf-bomb.py"
if command -v zstd > /dev/null; then
	e $BOMB "$g" "$ELF_OUT/seed-bad-bomb-zstd" zstd 64M
	e $BOMB "$g" "$ELF_OUT/seed-bad-bomb-zstd3" zstd 16M .debug_info \
		.debug_abbrev .debug_str
fi
e $BOMB "$g" "$ELF_OUT/seed-bad-bomb-zlib" zlib 16M
for w in first-len-0 first-len-ff first-op-undef last-len-7f; do
	e python3 tests/e2e/lib/mutate-lines.py "$g" \
		"$ELF_OUT/seed-bad-lines-$w" 0 "$w" > /dev/null
done
printf 'not an ELF file\n' > "$ELF_OUT/seed-bad-notelf"
: > "$ELF_OUT/seed-bad-empty"

# --- table seeds ------------------------------------------------------------
make --no-print-directory lib/libsym.a lib/libsym.pc
# The static library's dependencies, as its .pc file lists them.
deps=$(sed -n 's/^Requires.private: *//p' lib/libsym.pc | tr , ' ')
# shellcheck disable=SC2046,SC2086
e cc -std=gnu11 -O1 -Ilibsym -o "$T/gen-table-seeds" \
	tests/fuzz/gen-table-seeds.c lib/libsym.a $(pkg-config --libs $deps) \
	$(sed -n 's/^Libs.private: *//p' lib/libsym.pc)
e "$T/gen-table-seeds" "$T" "$g" "$T/clang-O2-dw5" "$T/gxx-O2-dw5" \
	"$T/clangxx-O2-dw4" "$ELF_OUT/seed-gcc-O2-nodebug" \
	"$ELF_OUT/seed-gcc-O2-minidebug" "$T/gcc-O2-shared.so" \
	"$T/gcc-O2-i386" "$T/gxx-names" >&2
for f in "$T"/table-*; do
	cp "$f" "$TAB_OUT/seed-${f##*/}"
done

# Records are corrupted in place in tables whose packed arrays are plain
# (-plainrec); tgz and txz have them as compressed columns (format 9).
tg="$T/table-gcc-O2-dw5-plainrec"
tx="$T/table-gxx-O2-dw5-plainrec"
tn="$T/table-gxx-names-plainrec"
tgz="$T/table-gcc-O2-dw5"
txz="$T/table-gxx-O2-dw5"
t() { name=$1 src=$2; shift 2; $CORRUPT "$src" "$TAB_OUT/seed-bad-$name" "$@"; }
# The header: sizes, offsets, counts, widths (format 9, libsym/format.h).
t trunc-hdr "$tg" truncbytes 64
t trunc-half "$tg" trunc 0.5
t trunc-last "$tg" truncbytes "$(($(wc -c < "$tg") - 8))"
t magic "$tg" thdr format 99
t bom "$tg" thdr bom 0x04030201
t size "$tg" thdr size 0xffffffff
t range "$tg" thdr end 0
t base "$tg" thdr base 0xffffffffffffff00
t n-ranges "$tg" thdr n_ranges 0xffffffff
t n-blocks "$tg" thdr n_blocks 0x7fffffff
t block-shift "$tg" thdr block_shift 9
t block-shift-0 "$tg" thdr block_shift 0
t n-scopes "$tg" thdr scopes_count 0x7fffffff
t n-syms "$tg" thdr syms_count 0x10000000
t n-sranges "$tg" thdr sranges_count 0x7fffffff
t off-blocks "$tg" thdr off_blocks 0xfffffff8
t off-boff "$tg" thdr off_boff 0xfffffff8
t off-misaligned "$tg" thdr scopes_off 4
t off-sranges "$tg" thdr sranges_off 0xfffffff8
t blocks-size "$tg" thdr blocks_size 0xffffffff
t blocks-size-small "$tx" thdr blocks_size 8
t base-width "$tg" thdr bw2 41
t field-bits "$tx" thdr funcs_w0 33
t field-unused "$tx" thdr files_w3 1
t scopes-bytes "$tx" thdr scopes_bytes 8
t off-strings "$tg" thdr off_strings 0xfffffff0
t strings-size "$tg" thdr strings_size 0xffffffff
# hfield TABLE FIELD: a header field of TABLE (corrupt.py's names).
hfield() {
	python3 -c "import sys; sys.path.insert(0, 'tests/fuzz'); import corrupt; print(corrupt.thdr(open('$1', 'rb').read())['$2'])"
}
# zblob NAME TABLE BLOB SEED: corruptions of TABLE's compressed BLOB
# (strings, dstrings): its size, compressed size and frame size out of
# range, bytes flipped in its frame index and in its frames.
zblob() {
	_off=$(hfield "$2" "off_$3")
	t "$1-zsize" "$2" thdr "$3_size" 0x7fffffff
	t "$1-zsize-small" "$2" thdr "$3_size" 3
	t "$1-zbytes" "$2" thdr "$3_zbytes" 0xffffffff
	t "$1-zbytes-small" "$2" thdr "$3_zbytes" 4
	t "$1-shift" "$2" thdr "$3_shift" 31
	t "$1-shift-small" "$2" thdr "$3_shift" 11
	t "$1-index" "$2" bytes "$4" 2 "$_off"
	t "$1-frame" "$2" bytes "$(($4 + 1))" 8 "$((_off + 8))"
}
# The strings: stored plain (tp, as a table of a lazy build has them) and
# compressed (tg, and tx's frame bytes).
tp="$T/table-gcc-O2-dw5-plain"
$CORRUPT "$tg" "$tp" tstrplain
cp "$tp" "$TAB_OUT/seed-table-gcc-O2-dw5-plain"
t strings-nonul "$tp" tstrnonul
t strings-plain-size "$tp" thdr strings_size 0xffffffff
zblob str "$tg" strings 27
t str-frame-x "$tx" bytes 29 16 "$(($(hfield "$tx" off_strings) + 40))"
# The demangled names: plain (tx) and compressed (tn).
t dstr-size "$tx" thdr dstrings_size 0xffffffff
t dstr-size-0 "$tx" thdr dstrings_size 0
t dstr-off "$tx" thdr off_dstrings 0xfffffff0
t dstr-shift-12 "$tn" thdr dstrings_shift 12
zblob dstr "$tn" dstrings 25
# The symbol kinds (format 8): an index past them, another kind, a file
# string out of range, a count and an offset past the table.
t sym-kind-oob "$tx" tarr syms kind max
t sym-kind-one "$tx" tarr syms kind 1
t skind-file-oob "$tx" tarr skinds file max
t n-skinds "$tg" thdr skinds_count 0x7fffffff
t skinds-off "$tg" thdr skinds_off 0xfffffff8
t func-dem-oob "$tn" tarr funcs demangled max
t sym-dem-oob "$tn" tarr syms demangled max
# The packed arrays and the block index as compressed columns (format 9):
# their compressed sizes out of range, a delta bit past the fields, a
# reserved byte, bytes flipped in the frames, records that are not what
# the header says, the index beside off_boff.
t zrec-scopes-big "$txz" thdr zrec0 0xffffffff
t zrec-syms-small "$tgz" thdr zrec3 4
t zrec-sranges-cut "$txz" thdr zrec4 "$(($(hfield "$txz" zrec4) - 3))"
t zrec-funcs-bytes "$txz" thdr funcs_bytes "$(($(hfield "$txz" funcs_bytes) + 8))"
t zrec-syms-count "$tgz" thdr syms_count "$(($(hfield "$tgz" syms_count) + 1))"
t zrec-scopes-delta "$txz" bytes 41 1 "$(hfield "$txz" scopes_off)"
t zrec-funcs-frame "$txz" bytes 43 6 "$(($(hfield "$txz" funcs_off) + 8))"
t zrec-sranges-frame "$tgz" bytes 47 4 "$(($(hfield "$tgz" sranges_off) + 12))"
t zindex-big "$tgz" thdr zindex 0x7ffffff8
t zindex-small "$tgz" thdr zindex 9
t zindex-boff "$tgz" thdr off_boff "$(hfield "$tgz" off_blocks)"
# The symbols and their ranges in chunks (format 10, tgc: chunks of 4
# records): a chunk shift out of range, the chunk index and first keys
# flipped, bytes flipped in the chunks' frames (found when a chunk is
# built), one record more than the chunks hold.
tgc="$T/table-gcc-O2-dw5-chunks"
_sr=$(hfield "$tgc" sranges_off)
_sy=$(hfield "$tgc" syms_off)
t zchunk-shift-low "$tgc" setbyte "$((_sr + 1))" 1
t zchunk-shift-high "$tgc" setbyte "$((_sr + 1))" 17
t zchunk-shift-syms "$tgc" setbyte "$((_sy + 1))" 3
t zchunk-index "$tgc" setbyte "$((_sr + 12))" 0xff
t zchunk-first "$tgc" setbyte "$((_sr + 8 + 4 * 3))" 0x7f
t zchunk-frames "$tgc" bytes 53 3 "$((_sr + 64))"
t zchunk-syms-frames "$tgc" bytes 59 3 "$((_sy + 64))"
t zchunk-count "$tgc" thdr sranges_count "$(($(hfield "$tgc" sranges_count) + 1))"
t zindex-frame "$txz" bytes 53 4 "$(($(hfield "$txz" off_bstart) + 10))"
# The records: indexes and string offsets out of range, parent distances
# past the first scope or of one, broken range blocks, unsorted arrays.
t parent-max "$tx" tarr scopes parent max
t parent-one "$tx" tarr scopes parent 1
t func-oob "$tx" tarr scopes func max
t callfile-oob "$tx" tarr scopes call_file max
t entry-max "$tx" tarr scopes entry max
t leaf-scope-oob "$tx" tleaf scope max
t leaf-file-oob "$tx" tleaf file max 2
t leaf-line-max "$tx" tleaf line max 3
t block-width-huge "$tx" tblock scope 63
t block-width-addr "$tx" tblock addr 40
t block-width-zero "$tx" tblock addr 0
t func-name-oob "$tx" tarr funcs name max
t func-linkage-oob "$tx" tarr funcs linkage max
t func-declfile-oob "$tx" tarr funcs decl_file max
t file-name-oob "$tx" tarr files name max
t sym-name-oob "$tg" tarr syms name max
t sym-size-huge "$tg" tarr syms size max
t sym-addr-self "$tg" tarr syms addr self
t srange-sym-oob "$tg" tarr sranges sym max 2
t sranges-same "$tg" tarr sranges addr 0
t sranges-unsorted "$tg" treverse sranges
t bstart-unsorted "$tg" treverse
t bytes "$tx" bytes 21 32 200
t bytes-hdr "$tg" bytes 22 6 0
t bytes-blocks "$tx" bytes 23 16 "$(python3 -c "import sys; sys.path.insert(0, 'tests/fuzz'); import corrupt; print(corrupt.thdr(open('$tx', 'rb').read())['off_blocks'])")"

chmod 644 "$ELF_OUT"/seed-* "$TAB_OUT"/seed-*
du -sh tests/fuzz/corpus
echo "$(find "$ELF_OUT" -type f | wc -l) ELF inputs, $(find "$TAB_OUT" -type f | wc -l) table inputs"
