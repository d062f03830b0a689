#!/bin/sh
# libsymprof's alloc mode against its peers, one per run, on t4020's
# known-truth fixture (fixtures/src/symprof_alloc.c; the allocations are
# the same in every run): heaptrack (exact: every allocation traced),
# gperftools' heap profiler (LD_PRELOAD=libtcmalloc.so.4, HEAPPROFILE;
# exact too: it records every allocation, its "@ heapprofile" header
# means no sampling) and jemalloc's (LD_PRELOAD=libjemalloc.so.2,
# MALLOC_CONF=prof:true,lg_prof_sample:19, read with jeprof; sampled at
# 512 KiB, as we are by default).  Site A makes 1 M allocations here, not
# 10 M: gperftools' heap profiler unwinds every allocation with libunwind
# (an rt_sigprocmask pair each), and took over 8 minutes of a loaded
# machine for the 10 M.  Every stack, whole (function names
# from main to the allocating call), has the same value (the fixture) or
# share of it (python3.11) in both profiles, within the interval of the
# sampling of both sides
# (tests/e2e/lib/alloc_peers.py says how stacks are named and the
# intervals computed).  The 13 points that hold a sampled profile to
# another share one 0.1 % of false failures (Bonferroni over points and
# stacks: alloc_peers.py --family 13); at 99.9 % a stack, as before,
# points 12 and 16 (alloc_space against gperftools and heaptrack, the
# same stacks of the same run of ours) failed together in a fresh
# clone's make check: with 3-5 stacks a point, 13 points, and variances
# plugged in from our own few-sample estimates, the six points against
# the exact peers alone missed in 2.6 % of exactly sampled runs with
# nothing wrong (tests/bench/symprof-alloc-peers-sim.py; docs/symprof.md,
# "Against peers").  The last point checks that the bound still rejects
# a wrong profile.  The two exact peers agree with each other
# exactly, which checks the naming.  Then a program nobody here wrote:
# Debian's /usr/bin/python3.11 with PYTHONMALLOC=malloc building and
# dropping a dict of 500,000 strings, ours against heaptrack, every
# stack from Py_BytesMain (python3.11's main() jumps to it).  heaptrack's
# figures come from its data file (tests/e2e/lib/heaptrack_fold.py says
# why not heaptrack_print).
#
# The exact peers are held to each other on the fixture's sites only:
# the stacks of glibc's stdio buffers differ in the inline frames each
# reports (heaptrack has __vfprintf_internal, google-pprof not); and
# gperftools reports an aligned allocation at its aligned size (site D's
# posix_memalign and aligned_alloc: 3,645 B an object where heaptrack,
# ours and the truth have 3,388 B), so its bytes are compared without
# site D's aligned stack.
#
# Objects are compared on sites A, B and C, the stacks of one size: on a
# stack whose sizes run from far below the rate to above it (site D's
# realloc chains, 1000 B to 1 MiB; python3.11's), the object count hangs
# on a few samples of small objects that weigh 1/P each (524 for 1000 B),
# so its error is far from normal, and alloc_peers.py's variance, from
# the stack's mean size, is far too small (site D's chains: 5,700
# objects, ours 8,200 in one run: z = 3.7 with the exact variance, sd
# 684 objects, 0.02 % of the time under a normal law; the skew of a few
# heavy samples makes it far likelier);
# their bytes are compared.
#
# jemalloc is compared on the stacks of one size that is a size class
# (sites A, B, C: 64 B, 1 MiB, 4 KiB) only, for two
# reasons of jemalloc's, not of the sampling: its bytes are usable sizes
# (site D's 3000-3776 B are 3072-4096 B to it), and jeprof unbiases a
# stack with the mean size of its samples (Go's rule), which undercounts
# a stack of mixed sizes (site D's realloc chains from 1000 B to 1 MiB:
# 2,280 objects of 5,700; docs/symprof.md, "The estimator").  Its
# profile is written with prof_unbias:false: jemalloc 5.3 otherwise
# writes counts it has unbiased already, and jeprof unbiases them again.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symprof-lib.sh"
need heaptrack heaptrack_print google-pprof jeprof
JEMALLOC=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
TCMALLOC=/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4
[ -r "$JEMALLOC" ] || plan_skip "no $JEMALLOC (libjemalloc2)"
[ -r "$TCMALLOC" ] || plan_skip "no $TCMALLOC (libgoogle-perftools4)"
plan 28
PEERS="python3 $SYM_ROOT/tests/e2e/lib/alloc_peers.py"
# The 13 points below that hold a sampled profile to another share the
# test's 0.1 % of false failures (alloc_peers.py --family).  On the
# fixture, whose allocations are the same in every run, a stack's bytes
# and objects are compared as they are, not as shares (--absolute): a
# share's delta-method interval misses its skew when one stack holds
# most of the variance (site A's 122 samples, 91 % of the objects: the
# object shares of A, B, C failed 4 times their bound).
FAM="--family 13"
ABC="main;site_a,main;site_b,main;site_c"

cd "$T" || exit 1
ok "the fixture builds" cc $SP_CFLAGS -fno-optimize-sibling-calls -fno-ipa-icf \
	-o fx "$SYM_ROOT/fixtures/src/symprof_alloc.c"
NA=1000000
./fx truth $NA > plain.out

# One run each; the output and the status are the program's.
sp_run --mode alloc -o ours.raw -- ./fx truth.ours $NA > ours.out 2> ours.err
is "ours: status 0, the same output" "$? $(cmp -s plain.out ours.out && echo same)" "0 same"
# The intervals below are those of the sampling process (checked by
# simulation, tests/bench/symprof-alloc-peers-sim.py); a sample lost on
# the way would bias them, so a
# loss is named here rather than seen as a statistical miss.
is "ours: no sample dropped, none left out of the in-use figures" \
	"$(sp_hdr ours.raw dropped) $(sed -n 's/.*(live table full) \([0-9]*\),.*/\1/p' ours.raw)" "0 0"
heaptrack -o ht ./fx truth.ht $NA > ht.out 2> ht.err
is "heaptrack: status 0" "$?" 0
HEAPPROFILE=$T/gp LD_PRELOAD=$TCMALLOC ./fx truth.gp $NA > gp.out 2> gp.err
is "gperftools: status 0, the same output" "$? $(cmp -s plain.out gp.out && echo same)" "0 same"
MALLOC_CONF=prof:true,lg_prof_sample:19,prof_accum:true,prof_final:true,prof_unbias:false,prof_prefix:$T/je \
	LD_PRELOAD=$JEMALLOC ./fx truth.je $NA > je.out 2> je.err
is "jemalloc: status 0, the same output" "$? $(cmp -s plain.out je.out && echo same)" "0 same"
GP=$(ls gp.*.heap 2> /dev/null | tail -1)
JE=$(ls je.*.heap 2> /dev/null | tail -1)
is "each peer wrote its profile (jemalloc: prof:true is built in)" \
	"$(ls ht.zst) $(head -c 13 "$GP") $(head -c 14 "$JE")" \
	"ht.zst heap profile: heap_v2/524288"

# The folded stacks of each.
for v in alloc_space alloc_objects inuse_space inuse_objects; do
	"$SYM" fold -q --value $v ours.raw > ours.$v
	google-pprof --collapsed --$v ./fx "$GP" > gp.$v 2> /dev/null
	jeprof --collapsed --$v ./fx "$JE" > je.$v 2> /dev/null
done
python3 "$SYM_ROOT/tests/e2e/lib/heaptrack_fold.py" ht.zst ht
RATE=$(sp_hdr ours.raw period)

# check DESC ARGS...: one point, alloc_peers.py's lines as diagnostics
check() {
	_d=$1; shift
	$PEERS "$@" > cmp.out 2>&1
	_tap $? "$_d"
	echo "#   ${_d%%:*}: PASS|FAIL ours peer sd z STACK (shares, or values with --absolute)"
	sed 's/^/#   /' cmp.out
}

for v in alloc inuse; do
	check "exact peers: heaptrack's ${v}_objects = gperftools', per site" \
		--objects --only "$ABC,main;site_d,main;site_d_grow" \
		ht.${v}_space ht.${v}_objects 0 gp.${v}_space gp.${v}_objects 0
	check "exact peers: heaptrack's ${v}_space = gperftools', per site but D's aligned" \
		--only "$ABC,main;site_d_grow" ht.${v}_space - 0 gp.${v}_space - 0
done
for v in alloc inuse; do
	check "gperftools: ${v}_space within 99.9% of the family (but site D's aligned)" \
		$FAM --absolute --only "$ABC,main;site_d_grow" \
		ours.${v}_space ours.${v}_objects "$RATE" gp.${v}_space gp.${v}_objects 0
	check "gperftools: ${v}_objects of sites A, B, C within 99.9% of the family" \
		$FAM --absolute --objects --only "$ABC" \
		ours.${v}_space ours.${v}_objects "$RATE" gp.${v}_space gp.${v}_objects 0
done
for v in alloc inuse; do
	check "heaptrack: ${v}_space within 99.9% of the family" \
		$FAM --absolute ours.${v}_space ours.${v}_objects "$RATE" ht.${v}_space ht.${v}_objects 0
	check "heaptrack: ${v}_objects of sites A, B, C within 99.9% of the family" \
		$FAM --absolute --objects --only "$ABC" \
		ours.${v}_space ours.${v}_objects "$RATE" ht.${v}_space ht.${v}_objects 0
done
for v in alloc inuse; do
	check "jemalloc: ${v}_space of sites A, B, C within 99.9% of the family (both sampled)" \
		$FAM --absolute --only "$ABC" ours.${v}_space ours.${v}_objects "$RATE" \
		je.${v}_space je.${v}_objects 524288
	check "jemalloc: ${v}_objects of sites A, B, C within 99.9% of the family (both sampled)" \
		$FAM --absolute --objects --only "$ABC" ours.${v}_space ours.${v}_objects "$RATE" \
		je.${v}_space je.${v}_objects 524288
done
# python3.11, the same run type for both: the script from a file (a
# newline in heaptrack's command line corrupts its file), a fixed hash
# seed.
PY=/usr/bin/python3.11
cat > dict.py <<'EOP'
d = {str(i) * 3: str(i) for i in range(500000)}
s = sum(len(k) for k in d)
del d
print(s)
EOP
export PYTHONHASHSEED=0 PYTHONMALLOC=malloc
"$PY" dict.py > py.plain
sp_run --mode alloc -o py.raw -- "$PY" dict.py > py.out 2> py.err
is "python3.11: ours: status 0, the same output, sampled (no 'malloc is replaced')" \
	"$? $(cmp -s py.plain py.out && echo same) $(grep -c replaced py.err) $(test "$(sp_hdr py.raw samples)" -gt 100 && echo sampled)" \
	"0 same 0 sampled"
heaptrack -o pyht "$PY" dict.py > pyht.out 2> pyht.err
is "python3.11: heaptrack: status 0, the program's output among heaptrack's" \
	"$? $(grep -cxF "$(cat py.plain)" pyht.out)" "0 1"
python3 "$SYM_ROOT/tests/e2e/lib/heaptrack_fold.py" pyht.zst pyht
for v in alloc_space alloc_objects; do
	"$SYM" fold -q --value $v py.raw > py.$v
done
check "python3.11: heaptrack: alloc_space shares within 99.9% of the family (stacks of 1% shown)" \
	$FAM --root Py_BytesMain --show 0.01 \
	py.alloc_space py.alloc_objects "$RATE" pyht.alloc_space pyht.alloc_objects 0
top=$(awk '$1 == "PASS" {n++} END {print n + 0}' cmp.out)
is "python3.11: the stacks of 1% or more agree (at least 4: the dict's strings, keys, ints, tables)" \
	"$(test "$top" -ge 4 && echo yes)" yes
# The bound is not so wide that a wrong profile passes: ours with site
# B's bytes half again (+50 %: some 15 sd of B's bytes) is rejected.
awk '$0 ~ /;site_b [0-9.]*$/ {$NF = sprintf("%.0f", $NF * 1.5)} 1' ours.alloc_space > bias.alloc_space
$PEERS $FAM --absolute --only "$ABC,main;site_d_grow" bias.alloc_space ours.alloc_objects \
	"$RATE" gp.alloc_space gp.alloc_objects 0 > bias.out 2>&1
is "gperftools: our alloc_space with site B's bytes +50 % is rejected, on B" \
	"$? $(grep -c '^FAIL .* main;site_b$' bias.out)" "1 1"
done_testing
