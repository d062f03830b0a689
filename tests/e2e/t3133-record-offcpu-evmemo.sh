#!/bin/bash
# t3133-record-offcpu-evmemo.sh - the off-CPU event memo (tools/agent/
# evmemo.h, docs/record.md "The event memo") answers like the resolution
# it saves, on real events: with SYM_EVMEMO=check every event the memos
# answer is resolved as well and compared, frame by frame, with its
# flags and counts, and the summary says how many differed (none).
#
# - fixtures/src/prof_remap.c dlopen()s two libraries in turn, the same
#   code under two names and build IDs, which the loader maps at the same
#   address (the fixture counts it), and blocks in each 50 times (1 ms
#   each): the same return addresses, in another mapping each round,
#   which the memo must tell apart (the process's map generation in its
#   key; without it 950 of 1,000 answers differed).  Its answers are
#   the blocks of the library mapped when the drain came (the older
#   rounds' are in mappings dead by then, whose answer depends on the
#   time: not kept), and none differs.  With SYM_EVMEMO=off the summary
#   shows no memo.  With one block a round, each library's function
#   holds exactly its 100 blocks of the 200, and each library its own
#   build ID (until procmaps.c checked map_files against the kernel's
#   inode, a mapping read after the next library took its range got
#   that one's build ID: 30/70 shares).
# - fixtures/src/prof_offcpu.c (sleep, pipe and a contended mutex, the
#   truth of t3110): no answer differs, most events are answered, and the
#   shares are the truth's.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
need_bpf_record --off-cpu
plan 13

prof_cc remap prof_remap.c -O2 -g -ldl
prof_cc liba.so prof_remap_lib.c -O2 -g -shared -fPIC -DREMAP_NAME=remap_a
prof_cc libb.so prof_remap_lib.c -O2 -g -shared -fPIC -DREMAP_NAME=remap_b
prof_cc fix prof_offcpu.c -O2 -g -pthread -fomit-frame-pointer

# memo ERR: "CHECKED DIFFERED KHITS KALL UHITS UALL" of the summary.
memo() {
	sed -n 's/.*event memo: kernel \([0-9]*\) of \([0-9]*\), user \([0-9]*\) of \([0-9]*\)\( (checked \([0-9]*\), differed \([0-9]*\))\)\{0,1\}.*/\6 \7 \1 \2 \3 \4/p' "$1"
}

for m in check off; do
	SYM_EVMEMO=$m "$SYM" record --off-cpu -o "$T/remap$m.raw" -- \
		"$T/remap" 20 50 "$T/liba.so" "$T/libb.so" \
		> "$T/remap$m.out" 2> "$T/remap$m.err"
	is "remap, memo $m: record exits 0" "$?" 0
done
sed 's/^/# /' "$T/remapcheck.out"
grep 'event memo' "$T/remapcheck.err" | sed 's/.*; off-CPU/# off-CPU/'
read -r n same <<< "$(awk '{ print $2, $4 }' "$T/remapcheck.out")"
ok "the libraries came at one address ($same of $n rounds)" \
	test "${same:-0}" -ge $((n / 2)) -a "$n" = 20
read -r chk bad kh ka uh ua <<< "$(memo "$T/remapcheck.err")"
ok "remap: the memo answered (user $uh of $ua, kernel $kh of $ka) and each answer was checked ($chk)" \
	test "${uh:-0}" -ge "$n" -a "${chk:-0}" -ge $((uh + kh))
is "remap: no answer differed from the resolution" "${bad:-x}" 0
ok "memo off: no memo in the summary" \
	sh -c "! grep -q 'event memo' '$T/remapoff.err'"

"$SYM" record --off-cpu -o "$T/one.raw" -- \
	"$T/remap" 200 1 "$T/liba.so" "$T/libb.so" > "$T/one.out" 2> "$T/one.err"
is "remap, one block a round: record exits 0" "$?" 0
# (blocks counted, not their time: a block's time includes its wait for
# a CPU after the wake-up, which on a loaded machine moved the shares by
# several points; and only the sleeps, the frame under each library's
# function a nanosleep: --off-cpu also charges a preemption, and under a
# loaded `make check` one at a page fault's return in remap_b's own code,
# "remap_b;asm_exc_page_fault;irqentry_exit_to_user_mode;schedule", made
# its count 101)
"$SYM" fold -q --value samples "$T/one.raw" > "$T/one.fold"
"$SYM" fold -q --value off-cpu "$T/one.raw" > "$T/one.time"
read -r a b <<< "$(awk '/;remap_a;[^;]*nanosleep;/ { a += $NF }
	/;remap_b;[^;]*nanosleep;/ { b += $NF }
	END { printf "%d %d\n", a, b }' "$T/one.fold")"
awk '{ t += $NF } /;remap_a;/ { a += $NF } /;remap_b;/ { b += $NF }
	END { printf "# blocked time: remap_a %.1f%%, remap_b %.1f%%\n",
	100 * a / t, 100 * b / t }' "$T/one.time"
is "remap: each library holds its own 100 blocks of the 200" "$a $b" "100 100"
bids() { readelf -n "$1" | sed -n 's/.*Build ID: *//p'; }
ok "remap: each library's mappings carry its own build ID" \
	awk -v a="$(bids "$T/liba.so")" -v b="$(bids "$T/libb.so")" '
	$1 == "map" && /liba\.so$/ { n++; if ($(NF - 1) != a) bad++ }
	$1 == "map" && /libb\.so$/ { n++; if ($(NF - 1) != b) bad++ }
	END { exit !(n >= 2 && !bad) }' "$T/one.raw"

SYM_EVMEMO=check "$SYM" record --off-cpu -o "$T/fix.raw" -- "$T/fix" 100 \
	> "$T/fix.out" 2> "$T/fix.err"
is "prof_offcpu: record exits 0" "$?" 0
read -r chk bad kh ka uh ua <<< "$(memo "$T/fix.err")"
ok "prof_offcpu: most events answered (user $uh of $ua, kernel $kh of $ka), each checked ($chk)" \
	test "${uh:-0}" -gt $((ua / 2)) -a "${chk:-0}" -ge $((uh + kh))
is "prof_offcpu: no answer differed from the resolution" "${bad:-x}" 0
"$SYM" fold -q --tid --value off-cpu "$T/fix.raw" > "$T/fix.fold"
check truth "$T/fix.fold" "$T/fix.out"
