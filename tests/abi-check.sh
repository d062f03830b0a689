#!/bin/sh
# abi-check.sh HEADER MAP - fail when the SYM_API functions declared in
# HEADER and the global symbols of the version script MAP differ.
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
