#!/bin/bash
# t3020-record-multi.sh - sym record -- prof_multi, which dlopen()s a
# library during the run, starts threads, forks a child that execs another
# program, and forks short-lived children (fixtures/src/prof_multi.c):
# every file mapping used by a frame carries the build ID readelf -n
# gives for that file, in fp and in dwarf mode; the dlopen()ed library,
# the exec()ed program and the parent all have frames; threads and the
# children are named; frame addresses in the library and the programs
# fall inside functions (nm).
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
need_perf
plan 10

prof_cc libprof_dl.so prof_dl.c -O2 -g -shared -fPIC -fno-omit-frame-pointer
prof_cc burn prof_burn.c -O2 -g -fno-omit-frame-pointer
prof_cc multi prof_multi.c -O2 -g -fno-omit-frame-pointer -pthread -ldl
libc=$(readlink -f "$(gcc -print-file-name=libc.so.6)")

for mode in fp dwarf; do
	"$SYM" record -q -F 999 -g $mode -o "$T/$mode.raw" -- "$T/multi" \
		"$T/libprof_dl.so" "$T/burn" 1.2
	is "$mode: record exits 0 (and so did the workload)" "$?" 0
	check buildids "$T/$mode.raw" --expect "$T/multi" \
		--expect "$T/libprof_dl.so" --expect "$T/burn" --expect "$libc"
done
check addrs "$T/fp.raw" "$T/libprof_dl.so" --leaves dl_burn
check addrs "$T/fp.raw" "$T/multi" "$T/burn" "$libc"

# Processes and threads: the parent's two threads, the exec()ed children.
parent=$(awk '$1 == "process" && $5 == "multi" { print $2; exit }' "$T/fp.raw")
ok "the parent process is named" test -n "$parent"
nthr=$(awk -v p="$parent" '$1 == "thread" && $2 == p && $3 != p' "$T/fp.raw" | wc -l)
ok "its threads have stacks ($nthr threads)" test "$nthr" -ge 2
nkid=$(awk '$1 == "process" && $5 == "burn"' "$T/fp.raw" | wc -l)
ok "exec()ed children are named by their new program ($nkid)" test "$nkid" -ge 1
ok "stacks of a thread carry its tid" awk -v p="$parent" '
	$1 == "thread" && $2 == p && $3 != p { t[$3] = 1 }
	$1 == "stack" && ($5 in t) { n++ }
	END { exit !(n > 0) }' "$T/fp.raw"

done_testing
