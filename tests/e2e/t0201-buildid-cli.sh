#!/bin/bash
# t0201-buildid-cli.sh - `sym buildid FILE...` against readelf -n and
# eu-readelf -n, and its answers for files without a build ID or not ELF.
. "$(dirname "$0")/lib/lib.sh"
need gcc readelf eu-readelf
[ -x "$SYM" ] || plan_skip "$SYM not built"
plan 8

cd "$T" || exit 1
echo 'int main(void) { return 0; }' > m.c
gcc -o with-id -Wl,--build-id=sha1 m.c &&
gcc -o with-md5 -Wl,--build-id=md5 m.c &&
gcc -o no-id -Wl,--build-id=none m.c || {
	echo "Bail out! cannot build the test programs"
	exit 1
}
printf 'text\n' > text

id_readelf() { readelf -n "$1" | awk '/Build ID:/ { print $3 }'; }
id_eu() { eu-readelf -n "$1" | awk '/Build ID:/ { print $3 }'; }

is "sha1 build ID matches readelf -n" "$("$SYM" buildid with-id)" \
	"$(id_readelf with-id)  with-id"
is "md5 build ID matches eu-readelf -n" "$("$SYM" buildid with-md5)" \
	"$(id_eu with-md5)  with-md5"
libc=$(gcc -print-file-name=libc.so.6)
libc=$(readlink -f "$libc")
if [ -f "$libc" ]; then
	is "libc.so.6 matches readelf -n" "$("$SYM" buildid "$libc")" \
		"$(id_readelf "$libc")  $libc"
else
	skip "no libc.so.6 found"
fi
"$SYM" buildid with-id with-md5 > two.out
is "two files, two lines, exit 0" "$?:$(wc -l < two.out)" "0:2"

out=$("$SYM" buildid no-id with-id 2>&1)
is "no build ID: 'FILE: none', exit 1" "$?:$out" \
	"1:no-id: none
$(id_readelf with-id)  with-id"
out=$("$SYM" buildid text 2>&1)
is "not ELF: one error line, exit 1" "$?:$out" \
	"1:sym buildid: 'text': not an ELF file"
out=$("$SYM" buildid missing 2>&1)
is "missing file: one error line, exit 1" "$?:$out" \
	"1:sym buildid: 'missing': No such file or directory"
"$SYM" buildid > /dev/null 2>&1
is "no argument is a usage error" "$?" 2

done_testing
