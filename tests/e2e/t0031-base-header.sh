#!/bin/sh
# t0031-base-header.sh - the ban list (libsym/banned.h) holds in every C
# file of the project, and the tree compiles with glibc's fortified
# headers.
#
# The ban list comes in through one project header, libsym/base.h, which
# includes banned.h last; every C file but libsymprof's (tools/symprof/,
# libc only) includes base.h after its last system header, as git's files
# include git-compat-util.h.  Not with -include: banned.h ahead of the
# system headers breaks their declarations, and the inline wrappers of
# _FORTIFY_SOURCE.  The test subjects are left out: fixtures/ and the
# fuzz seeds' sources (tests/fuzz/seeds/) are compiled by their own
# recipes, and their line numbers are in the expected answers.  So are
# BPF programs (*.bpf.c, tools/agent/bpf/): clang compiles them for the
# BPF target, where no libc exists and base.h cannot be included.
#
# Checked here: each C file's includes (so a new file cannot forget
# base.h), that nothing else includes banned.h, that a banned call fails
# to compile after the fortified headers, and that every source make
# check-build compiles passes the compiler's front end with
# CFLAGS='-O2 -D_FORTIFY_SOURCE=2' (the commands are make's own, from
# make -n -B; -fsyntax-only, so nothing is written).
. "$(dirname "$0")/lib/lib.sh"
need make cc awk
plan 6
cd "$SYM_ROOT" || exit 1

# The project's C files: libsym/, symd/, tools/, tests/ (new files too,
# committed or not), but libsymprof's, the seeds' and BPF programs.
find libsym symd tools tests -name '*.c' ! -path 'tools/symprof/*' \
	! -path 'tests/fuzz/seeds/*' ! -name '*.bpf.c' | sort > "$T/files"

# FILE: LINE for each file whose last system header comes after its
# #include "base.h", or that has none.
while read -r f; do
	awk -v f="$f" '
		/^[ \t]*#[ \t]*include[ \t]*</ { sys = NR }
		/^[ \t]*#[ \t]*include[ \t]*"base\.h"/ { if (!base) base = NR }
		END {
			if (!base)
				print f ": no #include \"base.h\""
			else if (sys > base)
				print f ":" sys ": a system header after " \
				      "base.h (line " base ")"
		}' "$f"
done < "$T/files" > "$T/bad"
is "every C file includes base.h after its system headers \
($(wc -l < "$T/files") files)" "$(cat "$T/bad")" ""

# banned.h only through base.h.
grep -rl --include='*.[ch]' '^[ \t]*#[ \t]*include[ \t]*"banned\.h"' \
	libsym symd tools tests | grep -v '^libsym/base\.h$' > "$T/direct"
is "nothing but base.h includes banned.h" "$(cat "$T/direct")" ""

# libsymprof links libc alone: none of the project's internals.
grep -l '^[ \t]*#[ \t]*include[ \t]*"\(base\|banned\|internal\)\.h"' \
	tools/symprof/*.c tools/symprof/*.h > "$T/sp" 2>/dev/null
is "tools/symprof/ includes neither base.h nor banned.h" "$(cat "$T/sp")" ""

# The ban is in force after the fortified headers, and does not get in
# their way.
cat > "$T/ban.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base.h"

int use(char *d, const char *s);
int use(char *d, const char *s)
{
#ifdef USE_BANNED
	strcpy(d, s);
#else
	snprintf(d, 8, "%s", s);
#endif
	return (int)strtol(s, NULL, 10);
}
EOF
fort="-std=gnu11 -D_GNU_SOURCE -O2 -D_FORTIFY_SOURCE=2 -Ilibsym"
ok "a file without banned calls compiles with -D_FORTIFY_SOURCE=2" \
	cc $fort -Wall -Werror -c -o "$T/ban.o" "$T/ban.c"
if cc $fort -DUSE_BANNED -c -o "$T/ban.o" "$T/ban.c" > "$T/ban.err" 2>&1; then
	is "strcpy() does not compile" "it compiled" "an error"
else
	is "strcpy() does not compile (sorry_strcpy_is_banned)" \
		"$(grep -c 'sorry_strcpy_is_banned' "$T/ban.err")" 1
fi

# Every source of the build (but libsymprof's, and the generated
# protobuf code), with make's flags and CFLAGS='-O2 -D_FORTIFY_SOURCE=2',
# through the front end only.  Needs build/gen/ (made by make).
if [ ! -f build/gen/profile.pb-c.h ]; then
	echo "ok 6 # skip no build/gen/profile.pb-c.h: run make first"
	_tap_n=6
else
	make --no-print-directory -n -B V=1 \
		CFLAGS='-O2 -D_FORTIFY_SOURCE=2' check-build 2> "$T/make.err" |
		sed -e ':a' -e '/\\$/N; s/\\\n[ \t]*/ /; ta' |
		grep -E '^[^ ]*cc .* -o build/' |
		grep -v -e 'build/gen/' -e ' -shared ' -e 'tools/symprof/' |
		sed -E -e 's/ -MMD -MP / /' \
			-e 's/ -c -o [^ ]+ / -fsyntax-only /' \
			-e 's/ -o build\/[^ ]+ / -fsyntax-only /' \
			-e 's/ [^ ]+\.a( |$)/ /g' -e 's/ -l[^ ]+//g' \
			-e 's/ -Wl,[^ ]+//g' > "$T/cmds"
	n=$(wc -l < "$T/cmds")
	: > "$T/fail"
	while read -r cmd; do
		sh -c "$cmd" > "$T/one" 2>&1 ||
			{ echo "# $cmd" | cut -c1-300; sed 's/^/#   /' "$T/one" |
			  head -10; } >> "$T/fail"
	done < "$T/cmds"
	if [ "$n" -lt 50 ]; then
		echo "# only $n compile commands from make -n:"
		sed 's/^/#   /' "$T/make.err" | head -5
	fi
	cat "$T/fail"
	is "the $n sources of make check-build compile with \
-O2 -D_FORTIFY_SOURCE=2" "$([ "$n" -ge 50 ] && [ ! -s "$T/fail" ] &&
	echo yes)" yes
fi
done_testing
