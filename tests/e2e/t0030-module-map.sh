#!/bin/sh
# t0030-module-map.sh - the maps of the source tree cannot drift: every
# .c file of libsym/ is in the module map of libsym/internal.h and in
# docs/design.md; every .c file of libsym/prof/ in libsym/prof/internal.h
# and docs/design.md; every .c and .h file of tools/agent/ and tools/view/
# in that folder's README.md.  One point per map, naming what is missing.
. "$(dirname "$0")/lib.sh"
plan 6

cd "$SYM_ROOT" || exit 1

# entries MAP: the names a map lists.  In a C header, the first word of
# each line of the comment block that starts at "Module map"; in
# Markdown, the `names` in the first cell of each table row.
entries() {
	case $1 in
	*.h)	sed -n '/Module map/,/\*\//p' "$1" |
			sed -n 's|^ \*   *\([^ ]*\).*|\1|p' | tr ',' '\n' ;;
	*)	sed -n 's/^| *\([^|]*\)|.*/\1/p' "$1" |
			grep -o '`[^`]*`' | tr -d '`' ;;
	esac | sed 's|.*/||' | sort -u
}

# missing MAP FILE...: the files MAP does not list.
missing() {
	map=$1
	shift
	entries "$map" > "$T/entries"
	for f in "$@"; do
		grep -qxF "$(basename "$f")" "$T/entries" ||
			printf '%s ' "$(basename "$f")"
	done
}

check() {
	desc=$1
	shift
	got=$(missing "$@" | sed 's/ $//')
	[ -z "$got" ] || echo "# not in $1: $got"
	is "$desc" "$got" ""
}

check "libsym/internal.h maps every libsym/*.c" \
	libsym/internal.h libsym/*.c
check "docs/design.md maps every libsym/*.c" docs/design.md libsym/*.c
check "libsym/prof/internal.h maps every libsym/prof/*.c" \
	libsym/prof/internal.h libsym/prof/*.c
check "docs/design.md maps every libsym/prof/*.c" \
	docs/design.md libsym/prof/*.c
check "tools/agent/README.md maps its files" tools/agent/README.md \
	tools/agent/*.c tools/agent/*.h
check "tools/view/README.md maps its files" tools/view/README.md \
	tools/view/*.c tools/view/*.h
