#!/bin/sh
# libsymprof's alloc mode (docs/symprof.md, "Allocation profiles")
# against known truth: a fixture whose call sites allocate known amounts
# (10 M x 64 B freed; 200 x 1 MiB kept; 100 k x 4 KiB, half freed;
# posix_memalign and aligned_alloc of odd sizes and realloc growth
# chains) gets, at the default rate, each site's alloc_space,
# inuse_space and object counts inside the 99.9% family-wise interval of the
# sampling process (alloc_check.py); the file is sym-raw 2, its views
# read --value TYPE, pprof picks -sample_index=inuse_space; the profile
# is written on SIGUSR2 and every --interval; and programs print the same
# and exit the same with and without it: fork and exec, threads, dlopen,
# C++ exceptions, and a SIGALRM handler that allocates; a program with
# a malloc of its own is reported, not sampled, and unchanged.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symprof-lib.sh"
plan 52

ALLOC_CFLAGS="$SP_CFLAGS -fno-optimize-sibling-calls -fno-ipa-icf"
cc $ALLOC_CFLAGS -o "$T/symprof_alloc" "$SYM_ROOT/fixtures/src/symprof_alloc.c" ||
	echo "# cannot build symprof_alloc"
for f in symprof_sigmalloc symprof_forkexec symprof_dlopen symprof_exc \
	 symprof_malloc; do
	sp_build "$f" || echo "# cannot build $f"
done

# Usage errors of the new options.
for bad in "--rate 4096" "--mode alloc --rate 0" "--mode alloc --rate x"; do
	"$SYM" run $bad -- true > /dev/null 2> "$T/err"
	is "'$bad' is a usage error" "$? $(grep -c 'sym run: ' "$T/err")" "2 1"
done

# The truth, at the default rate (512 KiB).
"$T/symprof_alloc" "$T/truth.plain" > "$T/alloc.plain"
sp_run --mode alloc -o "$T/alloc.raw" -- "$T/symprof_alloc" "$T/truth" \
	> "$T/alloc.out" 2> "$T/alloc.err"
is "the fixture: exit status 0 and the same output" \
	"$? $(cmp -s "$T/alloc.plain" "$T/alloc.out" && echo same)" "0 same"
is "and the same truth" "$(cmp -s "$T/truth" "$T/truth.plain" && echo same)" same
sed 's/^/# stderr: /' "$T/alloc.err"
sp_check "the profile parses and is coherent (alloc mode)" "$T/alloc.raw"
is "sym-raw 2" "$(head -1 "$T/alloc.raw")" "sym-raw 2"
ok "peak-rss and live-samples in the header" \
	sh -c "grep -q '^peak-rss [1-9][0-9]*\$' '$T/alloc.raw' && grep -q '^live-samples [1-9][0-9]*\$' '$T/alloc.raw'"
is "nothing dropped" "$(sp_hdr "$T/alloc.raw" dropped)" 0
python3 "$SYM_ROOT/tests/e2e/lib/alloc_check.py" "$T/alloc.raw" \
	"$T/symprof_alloc" "$T/truth" > "$T/check" 2>&1
echo "# alloc_check.py: PASS|FAIL SITE TYPE estimate truth sd z"
sed 's/^/# /' "$T/check"
for s in A B C D; do
	for v in alloc_space inuse_space alloc_objects inuse_objects; do
		is "site $s: $v within its 99.9% family-wise interval" \
			"$(awk -v s=$s -v v=$v '$2 == s && $3 == v {print $1}' "$T/check")" PASS
	done
done
is "site A's inuse is exactly 0 (every object freed)" \
	"$(awk '$2 == "A" && $3 ~ /^inuse/ {print $4}' "$T/check" | sort -u)" 0
for v in alloc_space inuse_space; do
	is "the total $v within its 99.9% family-wise interval" \
		"$(awk -v v=$v '$2 == "TOTAL" && $3 == v {print $1}' "$T/check")" PASS
done

# The views and pprof read the value types.
raw_inuse=$(awk '$1 == "stack" {split($7, v, ","); n += v[4]} END {print n}' "$T/alloc.raw")
fold_inuse=$("$SYM" fold -q --value inuse_space "$T/alloc.raw" 2> "$T/fold.err" |
	awk '{n += $NF} END {print n}')
is "sym fold --value inuse_space adds up to the file's inuse_space" \
	"$fold_inuse" "$raw_inuse"
"$SYM" report -q --value nosuch "$T/alloc.raw" > /dev/null 2> "$T/rep.err"
is "an unknown --value type is an error naming the types" \
	"$? $(grep -c 'alloc_objects, alloc_space, inuse_objects, inuse_space' "$T/rep.err")" "1 1"
ok "sym convert --to pprof" "$SYM" convert --to pprof -o "$T/alloc.pb.gz" "$T/alloc.raw"
if command -v go > /dev/null 2>&1; then
	go tool pprof -sample_index=inuse_space -top "$T/alloc.pb.gz" \
		> "$T/pprof.top" 2> "$T/pprof.err"
	is "go tool pprof -sample_index=inuse_space -top: the inuse total" \
		"$(sed -n 's/^Type: //p' "$T/pprof.top") $(grep -c 'of [0-9.]*MB total' "$T/pprof.top")" \
		"inuse_space 1"
	sed -n '1,8s/^/# pprof: /p' "$T/pprof.top"
else
	skip "go tool pprof -sample_index=inuse_space" "no go"
fi

# Written on SIGUSR2, and every --interval seconds, while the program
# runs (sleep: coreutils, never built here; sym run without timeout(1),
# which would take the signal for itself).
"$SYM" run --mode alloc --interval 0 -o "$T/usr2.raw" -- sleep 3 &
pid=$!
sleep 1
kill -USR2 $pid
n=0
while [ ! -s "$T/usr2.raw" ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
ok "SIGUSR2 writes the profile while the program runs" \
	sh -c "kill -0 $pid && test -s '$T/usr2.raw'"
wait $pid
is "and the program exits as it would (0)" "$?" 0
"$SYM" run --mode alloc --interval 1 -o "$T/intv.raw" -- sleep 3 &
pid=$!
sleep 2
ok "--interval 1 writes the profile while the program runs" \
	sh -c "kill -0 $pid && test -s '$T/intv.raw'"
wait $pid

# Programs unchanged: same stdout, stderr (the profiler's own notices
# aside) and status, with a small rate so that many samples are taken.
same() {
	sp_same alloc "--mode alloc --rate 4096" "$@"
}
same symprof_sigmalloc 100000
ok "sigmalloc: samples taken inside the signal handler (a signal frame on the stack)" \
	grep -q '^stack .* p[0-9]*:' "$T/symprof_sigmalloc.alloc.raw"
same symprof_forkexec
# A program with its own malloc: reported, nothing sampled, unchanged.
cc $SP_CFLAGS -o "$T/symprof_ownmalloc" "$SYM_ROOT/fixtures/src/symprof_ownmalloc.c" ||
	echo "# cannot build symprof_ownmalloc"
same symprof_ownmalloc
ok "own malloc: libsymprof says malloc is replaced, on stderr and in the file" \
	sh -c "grep -q \"^libsymprof: malloc is replaced by '$T/symprof_ownmalloc'\" '$T/symprof_ownmalloc.alloc.err' &&
	       grep -q '^# libsymprof: malloc is replaced by' '$T/symprof_ownmalloc.alloc.raw'"
is "own malloc: no sample" "$(sp_hdr "$T/symprof_ownmalloc.alloc.raw" samples)" 0
same symprof_dlopen 60
same symprof_exc
same symprof_malloc 16 100000
# sym merge keeps the value types of inputs that share them, summed.
"$SYM" merge -o "$T/merged.raw" "$T/alloc.raw" "$T/symprof_sigmalloc.alloc.raw"
is "sym merge of two alloc profiles: sym-raw 2 with the four types" \
	"$? $(head -1 "$T/merged.raw") $(grep -c '^value-type' "$T/merged.raw")" \
	"0 sym-raw 2 4"
sum_inuse() { awk '$1 == "stack" {split($7, v, ","); n += v[4]} END {print n}' "$@"; }
is "and its inuse_space is the inputs' sum" "$(sum_inuse "$T/merged.raw")" \
	"$(($(sum_inuse "$T/alloc.raw") + $(sum_inuse "$T/symprof_sigmalloc.alloc.raw")))"
echo "# malloc: $(sp_hdr "$T/symprof_malloc.alloc.raw" samples) samples, $(sp_hdr "$T/symprof_malloc.alloc.raw" dropped) dropped"
done_testing
