#!/bin/sh
# t0010-install.sh - `make install` honours prefix and DESTDIR, installs a
# versioned shared library with a soname, the header and a libsym.pc that
# a program can build and link against; the same for libsymprofile, the
# profile model (sym_prof.h, libsymprofile.pc), which libsym no longer
# carries; the llvm-symbolizer and addr2line drop-ins in libexec/sym/,
# not in bin/; and `make uninstall` removes it all again.
. "$(dirname "$0")/lib/lib.sh"
need readelf pkg-config cc
plan 19

D=$T/dest
ok "make install DESTDIR prefix=/opt/sym" \
	make -C "$SYM_ROOT" --no-print-directory install DESTDIR="$D" prefix=/opt/sym
ok "bin, header, static and shared library installed" \
	test -x "$D/opt/sym/bin/sym" -a -f "$D/opt/sym/include/sym.h" \
	     -a -f "$D/opt/sym/lib/libsym.a" -a -f "$D/opt/sym/lib/libsym.so.1" \
	     -a -L "$D/opt/sym/lib/libsym.so"
# soname LIB, and the first functions LIB exports whose names do not
# start with PREFIX.
soname() { readelf -d "$1" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p'; }
exports_but() {
	readelf --dyn-syms -W "$1" |
		awk '$7 != "UND" && $5 == "GLOBAL" && $4 == "FUNC" {print $8}' |
		sed 's/@.*//' | grep -v "^$2" | head -3
}
is "shared library has soname libsym.so.1" \
	"$(soname "$D/opt/sym/lib/libsym.so.1")" "libsym.so.1"
# Only the documented API is exported.
is "exports only sym_* functions" \
	"$(exports_but "$D/opt/sym/lib/libsym.so.1" sym_)" ""
pcfile=$D/opt/sym/lib/pkgconfig/libsym.pc
ok "libsym.pc names the prefix" grep -q '^prefix=/opt/sym' "$pcfile"

cat > "$T/use.c" <<'EOC'
#include <stdio.h>
#include <sym.h>
int main(int argc, char **argv)
{
	struct sym_module *m = NULL;
	struct sym_frame fr[SYM_MAX_FRAMES];
	size_t n = 0;
	int err = sym_module_open(argv[0], NULL, &m);

	if (!err)
		err = sym_module_lookup(m, (unsigned long)&main, fr,
					SYM_MAX_FRAMES, &n);
	printf("%d %zu\n", err, n);
	sym_module_close(m);
	return err != 0;
}
EOC
# Build against the staged tree: point pkg-config at it and rewrite paths.
sed "s|/opt/sym|$D/opt/sym|" "$pcfile" > "$T/libsym.pc"
# A library built by `make check SANITIZE=...` needs the same runtime.
san=
if nm -D "$D/opt/sym/lib/libsym.so.1" | grep -q '__asan_init'; then
	san="-fsanitize=address,undefined"
fi
ok "a program compiles and links with pkg-config --cflags --libs libsym" \
	sh -c "cc $san -no-pie -g -o '$T/use' '$T/use.c' \$(PKG_CONFIG_PATH='$T' pkg-config --cflags --libs libsym)"
ok "and runs against the shared library" \
	env LD_LIBRARY_PATH="$D/opt/sym/lib" "$T/use"
# libsymprof.so, the LD_PRELOAD sampler, goes to libdir, where the
# installed sym run finds it (../lib next to bin/sym).
ok "libsymprof.so installed in libdir" test -f "$D/opt/sym/lib/libsymprof.so"
is "the installed sym run preloads the installed libsymprof.so" \
	"$(cd "$T" && "$D/opt/sym/bin/sym" run -o "$T/run.raw" -- sh -c 'echo "$LD_PRELOAD"')" \
	"$(cd "$D/opt/sym/lib" && pwd -P)/libsymprof.so"
# The drop-ins: links to the installed sym, out of PATH.
is "llvm-symbolizer and addr2line link to bindir's sym in libexec/sym/" \
	"$(readlink "$D/opt/sym/libexec/sym/llvm-symbolizer") $(readlink \
	   "$D/opt/sym/libexec/sym/addr2line")" "/opt/sym/bin/sym /opt/sym/bin/sym"
is "no llvm-symbolizer or addr2line in bindir" \
	"$(ls "$D/opt/sym/bin")" "$(ls "$D/opt/sym/bin" |
	   grep -v -e '^llvm-symbolizer$' -e '^addr2line$')"

# libsymprofile: its own library, header and .pc; libsym needs neither
# zlib nor protobuf-c any more, libsymprofile nothing of libsym.
ok "libsymprofile: header, static and shared library installed" \
	test -f "$D/opt/sym/include/sym_prof.h" \
	     -a -f "$D/opt/sym/lib/libsymprofile.a" \
	     -a -f "$D/opt/sym/lib/libsymprofile.so.1" \
	     -a -L "$D/opt/sym/lib/libsymprofile.so"
is "libsymprofile has soname libsymprofile.so.1" \
	"$(soname "$D/opt/sym/lib/libsymprofile.so.1")" "libsymprofile.so.1"
is "libsymprofile exports only sym_prof_* functions" \
	"$(exports_but "$D/opt/sym/lib/libsymprofile.so.1" sym_prof_)" ""
is "libsym exports no sym_prof_* function" \
	"$(readelf --dyn-syms -W "$D/opt/sym/lib/libsym.so.1" | grep -c ' sym_prof_')" 0
sed "s|/opt/sym|$D/opt/sym|" "$D/opt/sym/lib/pkgconfig/libsymprofile.pc" \
	> "$T/libsymprofile.pc"
is "libsym.pc requires neither zlib nor protobuf-c" \
	"$(PKG_CONFIG_PATH=$T pkg-config --print-requires-private libsym |
	   grep -c -e zlib -e protobuf)" 0
cat > "$T/prof.c" <<'EOC'
#include <stdio.h>
#include <sym_prof.h>
int main(void)
{
	struct sym_prof *p = NULL;
	int err = sym_prof_new(&p);

	printf("%d %zu\n", err, err ? 0 : sym_prof_nstacks(p));
	sym_prof_free(p);
	return err != 0;
}
EOC
ok "a program builds with pkg-config libsymprofile alone and runs" \
	sh -c "cc $san -no-pie -g -o '$T/prof' '$T/prof.c' \$(PKG_CONFIG_PATH='$T' pkg-config --cflags --libs libsymprofile) &&
	       LD_LIBRARY_PATH='$D/opt/sym/lib' '$T/prof'"
make -C "$SYM_ROOT" --no-print-directory uninstall DESTDIR="$D" \
	prefix=/opt/sym > "$T/uninstall.out" 2>&1
is "make uninstall leaves no file behind" \
	"$(find "$D" -type f -o -type l | sed "s|^$D||")" ""
ok "nor the drop-ins' directory" test ! -e "$D/opt/sym/libexec/sym"
done_testing
