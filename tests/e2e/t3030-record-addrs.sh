#!/bin/bash
# t3030-record-addrs.sh - the ELF address of every recorded frame, against
# binutils: for a PIE, a non-PIE executable (p_vaddr = 0x400000 + offset)
# and a PIE linked at 0x10000000 (p_vaddr != p_offset), each map's vaddr
# agrees with readelf -l, its build ID with readelf -n, each leaf in the
# program falls inside burn70, burn30 or main ([st_value, st_value + size)
# from nm -S), and each caller frame (addr - 1) inside some function of
# the program or of libc (judged by libc6-dbg's symbols when installed).
# Frames in the vDSO carry the vDSO's build ID, read from memory.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
need_perf
plan 8

libc=$(readlink -f "$(gcc -print-file-name=libc.so.6)")
prof_cc pie prof_burn.c -O2 -g -fno-omit-frame-pointer -pie -fPIE
prof_cc nopie prof_burn.c -O2 -g -fno-omit-frame-pointer -no-pie
prof_cc high prof_burn.c -O2 -g -fno-omit-frame-pointer -pie -fPIE \
	-Wl,-Ttext-segment=0x10000000
prof_cc vdso prof_vdso.c -O2 -g

for b in pie nopie high; do
	"$SYM" record -q -F 999 -o "$T/$b.raw" -- "$T/$b" 0.5
	is "$b: record exits 0" "$?" 0
	check addrs "$T/$b.raw" "$T/$b" "$libc" --leaves burn70,burn30,main
done
"$SYM" record -q -F 999 -o "$T/vdso.raw" -- "$T/vdso" 0.5
check vdso "$T/vdso.raw" "$T"
check addrs "$T/vdso.raw" "$T/vdso"

done_testing
