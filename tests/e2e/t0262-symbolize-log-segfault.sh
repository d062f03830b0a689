#!/bin/bash
# t0262-symbolize-log-segfault.sh - `sym symbolize-log` on the kernel's
# user-space segfault line, captured from dmesg on this machine.
#
# fixtures/src/segv_null.c, built with cc -O1 -g, writes through a null
# pointer; the kernel (with debug.exception-trace on) logs
#   [T] symlog_segv[PID]: segfault at 0 ip IP sp SP error 6 in
#   symlog_segv[OFF,BASE+SIZE] likely on CPU ...
# (6.x kernels; older ones print symlog_segv[BASE+SIZE]).  The line must
# come back with " at FUNC FILE:LINE:COL" appended, what llvm-symbolizer
# says of OFF's ELF address; the older form, made from the same line by
# dropping "OFF,", must give the same answer.  The kernel names the file
# by its base name only, so the log is read in the program's directory.
# Skipped when dmesg cannot be read, the trace is off, or no line shows
# up (the kernel rate-limits them).
. "$(dirname "$0")/lib/lib.sh"
need cc dmesg llvm-symbolizer readelf
[ -x "$SYM" ] || plan_skip "$SYM not built"
dmesg > /dev/null 2>&1 || plan_skip "dmesg is not readable here"
[ "$(cat /proc/sys/debug/exception-trace 2> /dev/null)" = 1 ] ||
	plan_skip "debug.exception-trace is off: the kernel logs no segfault"

cd "$T" || exit 1
cc -O1 -g -o symlog_segv "$SYM_ROOT/fixtures/src/segv_null.c" || {
	echo "Bail out! cannot build segv_null.c"
	exit 1
}
./symlog_segv 2> /dev/null &
pid=$!
wait "$pid" 2> /dev/null
for _ in 1 2 3 4 5 6 7 8 9 10; do
	dmesg | grep "symlog_segv\[$pid\]: segfault at " | tail -1 > seg.txt
	[ -s seg.txt ] && break
	sleep 0.2
done
[ -s seg.txt ] || plan_skip "no segfault line in dmesg (rate-limited?)"
plan 3

# want LINE: LINE with llvm-symbolizer's answer for the file offset OFF
# (OFF's ELF address: the PT_LOAD that maps it).
off=$(sed -n 's/.* in symlog_segv\[\([0-9a-f]*\),.*/\1/p' seg.txt)
if [ -z "$off" ]; then
	# An older kernel: the mapping's start; its offset is the ip's
	# distance from it plus the executable segment's page.
	skip "this kernel writes the older form; its line is checked below"
	ip=$(sed -n 's/.* ip \([0-9a-f]*\) .*/\1/p' seg.txt)
	base=$(sed -n 's/.* in symlog_segv\[\([0-9a-f]*\)+.*/\1/p' seg.txt)
	xva=$(readelf -lW symlog_segv | awk '$1 == "LOAD" && $7 ~ /E/ {
		print $3; exit }')
	addr=$(printf '0x%x' $((0x$ip - 0x$base + (xva & ~0xfff))))
	cp seg.txt old.txt
else
	addr=
	while read -r _ o va _ fsz _; do
		if [ $((0x$off)) -ge $((o)) ] &&
		   [ $((0x$off)) -lt $((o + fsz)) ]; then
			addr=$(printf '0x%x' $((0x$off - o + va)))
			break
		fi
	done < <(readelf -lW symlog_segv | grep '^ *LOAD')
	sed 's/ in symlog_segv\[[0-9a-f]*,/ in symlog_segv[/' seg.txt > old.txt
fi
ans=$(llvm-symbolizer -e symlog_segv "$addr" | head -2 | paste -sd' ')
echo "# $(cat seg.txt)"
echo "# $addr: $ans"
printf '%s at %s\n' "$(cat seg.txt)" "$ans" > want.txt
printf '%s at %s\n' "$(cat old.txt)" "$ans" > want-old.txt

if [ -n "$off" ]; then
	"$SYM" symbolize-log seg.txt > got.txt 2>&1
	same_file "dmesg's line: the function and line of the ip appended" \
		want.txt got.txt
fi
"$SYM" symbolize-log old.txt > got-old.txt 2>&1
same_file "the older form (in NAME[BASE+SIZE]): the same answer" \
	want-old.txt got-old.txt
mkdir elsewhere && cd elsewhere || exit 1
"$SYM" symbolize-log ../seg.txt > got-away.txt 2> err-away.txt
same_file "read away from the program: left as it was" ../seg.txt got-away.txt
done_testing
