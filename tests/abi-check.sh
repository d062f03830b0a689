#!/bin/sh
# abi-check.sh HEADER MAP - fail when the SYM_API functions declared in
# HEADER and the global symbols of the version script MAP differ, or when
# a SYM_API declaration has no /** */ comment of its own.
set -e
hdr=$1 map=$2
tmp=${TMPDIR:-/tmp}/abi-check.$$
trap 'rm -f "$tmp".*' EXIT
# SYM_API <type> [*]name(  -- the name is the word before the first '('.
perl -0777 -ne 's{/\*.*?\*/}{}gs; s/^#.*$//mg;
	print "$1\n" while /SYM_API[^;(]*?(\w+)\s*\(/g' "$hdr" |
	sort -u > "$tmp.h"
sed -n 's/^[[:space:]]*\(sym_[a-z0-9_]*\);.*/\1/p' "$map" | sort -u > "$tmp.m"
if ! cmp -s "$tmp.h" "$tmp.m"; then
	echo "abi-check: $hdr and $map disagree (< header, > map):" >&2
	diff "$tmp.h" "$tmp.m" | grep '^[<>]' >&2
	exit 1
fi
# Every SYM_API declaration has its own /** */ block right before it.
undoc=$(perl -0777 -ne 's/^#.*$//mg;
	while (/(\/\*\*(?:(?!\*\/).)*\*\/\s*)?SYM_API[^;(]*?(\w+)\s*\(/gs) {
		print "$2\n" unless defined $1;
	}' "$hdr")
if [ -n "$undoc" ]; then
	echo "abi-check: SYM_API without a /** */ comment in $hdr:" $undoc >&2
	exit 1
fi
