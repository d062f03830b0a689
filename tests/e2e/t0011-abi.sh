#!/bin/sh
# t0011-abi.sh - the ABI contract of sym.h and sym_prof.h:
# tests/abi-check.sh accepts libsym's and libsymprofile's header and map
# and refuses each kind of drift on any header/map pair (a function
# missing from the map, one without its comment or @return, one global in
# two version nodes); the shared libraries, libsym.so.1 and
# libsymprofile.so.1, version each symbol in its node (every function of
# 1.0.0, sym_version included, in LIBSYM_1.0 or LIBSYMPROFILE_1.0), and a
# program linked against libsym reads the running version with
# sym_version().
. "$(dirname "$0")/lib/lib.sh"
need readelf cc perl
plan 12

CHECK=$SYM_ROOT/tests/abi-check.sh
ok "libsym/sym.h and libsym/libsym.map agree" \
	sh "$CHECK" "$SYM_ROOT/libsym/sym.h" "$SYM_ROOT/libsym/libsym.map"
ok "libsym/prof/sym_prof.h and libsym/prof/libsymprofile.map agree" \
	sh "$CHECK" "$SYM_ROOT/libsym/prof/sym_prof.h" \
		"$SYM_ROOT/libsym/prof/libsymprofile.map"

# Another library's pair: its own export macro, two version nodes.
cat > "$T/x.h" <<'EOF'
#define X_API __attribute__((visibility("default")))
/**
 * x_open() - open.
 * @return 0, -EINVAL
 */
X_API int x_open(const char *path);
/** x_close() - close; NULL is a no-op. */
X_API void x_close(void *x);
/**
 * x_name() - the name.
 * @return borrowed; NULL for NULL
 */
X_API const char *x_name(const void *x);
EOF
cat > "$T/x.map" <<'EOF'
/* The first release. */
LIBX_1.0 {
	global:
		x_open;
		x_close;
	local:
		*;
};
# The second.
LIBX_1.1 {
	global:
		x_name;
} LIBX_1.0;
EOF
ok "another header/map pair with two version nodes" \
	sh "$CHECK" "$T/x.h" "$T/x.map"

# fails DESC WANT HEADER MAP: abi-check refuses, saying WANT.
fails() {
	if sh "$CHECK" "$3" "$4" > "$T/out" 2>&1; then
		_tap 1 "$1"
		echo "#   abi-check passed"
	elif grep -q -- "$2" "$T/out"; then
		_tap 0 "$1"
	else
		_tap 1 "$1"
		sed 's/^/#   /' "$T/out"
	fi
}
sed '/x_name;/d' "$T/x.map" > "$T/x-missing.map"
fails "a function missing from the map" "< x_name" "$T/x.h" "$T/x-missing.map"
sed 's/x_name;/x_name; x_open;/' "$T/x.map" > "$T/x-twice.map"
fails "a symbol global in two nodes" "more than one node.*x_open" \
	"$T/x.h" "$T/x-twice.map"
sed 's/ \* @return borrowed; NULL for NULL//' "$T/x.h" > "$T/x-noreturn.h"
fails "a value-returning function without @return" "no @return.*x_name" \
	"$T/x-noreturn.h" "$T/x.map"
sed 's|^/\*\* x_close() - close; NULL is a no-op. \*/$||' "$T/x.h" \
	> "$T/x-undoc.h"
fails "a declaration without its /** */ comment" "comment.*x_close" \
	"$T/x-undoc.h" "$T/x.map"

# The shared libraries as built.
so=$SYM_ROOT/lib/libsym.so.1
syms=$(readelf --dyn-syms -W "$so" | awk '$7 != "UND" {print $8}')
is "sym_version is versioned LIBSYM_1.0" \
	"$(echo "$syms" | grep '^sym_version@')" "sym_version@@LIBSYM_1.0"
is "the functions of the first release are at LIBSYM_1.0" \
	"$(echo "$syms" | grep -E '^sym_(strerror|module_open|store_open)@' | sort)" \
	"sym_module_open@@LIBSYM_1.0
sym_store_open@@LIBSYM_1.0
sym_strerror@@LIBSYM_1.0"
# "name@@NODE" of every exported function of libsymprofile.so.1: the 29
# of 1.0.0 in LIBSYMPROFILE_1.0, the 6 value-type functions of 1.3.0 in
# LIBSYMPROFILE_1.3, sym_prof_set_map_flags of 1.4.0 in LIBSYMPROFILE_1.4,
# sym_prof_set_release and sym_prof_release of 1.6.0 in
# LIBSYMPROFILE_1.6, nothing else.
psyms=$(readelf --dyn-syms -W "$SYM_ROOT/lib/libsymprofile.so.1" |
	awk '$7 != "UND" && $4 == "FUNC" {print $8}')
is "libsymprofile.so.1: 29 functions at LIBSYMPROFILE_1.0, 6 at 1.3, 1 at 1.4, 2 at 1.6" \
	"$(echo "$psyms" | grep -c '^sym_prof_[a-z_]*@@LIBSYMPROFILE_1\.0$') $(echo "$psyms" | grep -c '^sym_prof_[a-z_]*@@LIBSYMPROFILE_1\.3$') $(echo "$psyms" | grep -c '^sym_prof_set_map_flags@@LIBSYMPROFILE_1\.4$') $(echo "$psyms" | grep -Ec '^sym_prof_(set_)?release@@LIBSYMPROFILE_1\.6$') $(echo "$psyms" | grep -Evc '@@LIBSYMPROFILE_1\.[0346]$')" \
	"29 6 1 2 0"

cat > "$T/v.c" <<'EOF'
#include <stdio.h>
#include <sym.h>
int main(void)
{
	int ma = -1, mi = -1, pa = -1;
	const char *v = sym_version(&ma, &mi, &pa);

	printf("%s %d.%d.%d %s\n", v, ma, mi, pa, SYM_VERSION);
	return 0;
}
EOF
# A library built by `make check SANITIZE=...` needs the same runtime.
san=
if nm -D "$so" | grep -q '__asan_init'; then
	san="-fsanitize=address,undefined"
fi
ok "a program links against libsym.so and calls sym_version()" \
	sh -c "cc $san -o '$T/v' '$T/v.c' -I'$SYM_ROOT/libsym' -L'$SYM_ROOT/lib' -lsym"
v=$(LD_LIBRARY_PATH=$SYM_ROOT/lib "$T/v")
set -- $v
is "sym_version() at run time: the string, its numbers, the header's" \
	"$1 $2" "$3 $3"
done_testing
