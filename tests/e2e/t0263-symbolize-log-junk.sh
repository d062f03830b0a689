#!/bin/bash
# t0263-symbolize-log-junk.sh - what `sym symbolize-log` does not
# understand passes through byte for byte, in bounded memory:
#
#  - binary junk (8 MiB of random bytes) from a pipe, and a 256 MiB line
#    without a newline from a file, both given back unchanged, the huge
#    line with a peak RSS under 32 MiB (lines over 4 KiB are copied in
#    pieces, never parsed);
#  - frame lines amid the junk are still rewritten: a backtrace_symbols()
#    line of bin/sym's own main(), with a CRLF ending kept;
#  - a frame line whose module is not here is left as it was and
#    counted on stderr.
. "$(dirname "$0")/lib/lib.sh"
need nm /usr/bin/time cmp
[ -x "$SYM" ] || plan_skip "$SYM not built"
plan 6

cd "$T" || exit 1
main=$(nm "$SYM" | awk '$2 == "T" && $3 == "main" { print $1; exit }')
[ -n "$main" ] || { echo "Bail out! no main in $SYM"; exit 1; }
frame=$(printf '%s(+0x%x)[0x7f0000000001]' "$SYM" $((0x$main + 1)))

head -c 8388608 /dev/urandom > junk.bin
"$SYM" symbolize-log < junk.bin > junk.out 2> junk.err
ok "8 MiB of random bytes from a pipe come back unchanged" cmp junk.bin junk.out

head -c 268435456 /dev/zero | tr '\0' x > huge.txt
/usr/bin/time -f '%M' -o huge.rss "$SYM" symbolize-log huge.txt |
	cmp -s - huge.txt
is "a 256 MiB line without a newline comes back unchanged" "$?" 0
rss=$(tail -1 huge.rss)
ok "... with a peak RSS under 32 MiB (${rss} KiB)" test "$rss" -lt 32768
rm -f huge.txt

{
	head -c 100000 /dev/urandom
	printf '\n%s\r\nafter\n' "$frame"
} > mixed.bin
"$SYM" symbolize-log mixed.bin > mixed.out 2> mixed.err
cr=$(printf '\r')
ok "a frame after junk is placed, its CRLF kept" \
	sh -c "grep -aF '$frame at main ' mixed.out |
		grep -q '/tools/sym\.c:[0-9]*:[0-9]*$cr\$'"
is "... and the junk before it is untouched" \
	"$(head -c 100000 mixed.out | cksum)" "$(head -c 100000 mixed.bin | cksum)"

printf 'x\n    #0 0x1234  (%s/gone+0x1234)\nlast\n' "$T" > gone.txt
"$SYM" symbolize-log gone.txt > gone.out 2> gone.err
is "a frame of a file not here: as it was, counted on stderr" \
	"$(cmp gone.txt gone.out && cat gone.err)" \
	"sym symbolize-log: 0 of 1 frame lines placed, 1 left as they were"
done_testing
