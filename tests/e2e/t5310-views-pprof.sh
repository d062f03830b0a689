#!/bin/sh
# sym pprof against sym report and sym fold: the profile of known shape of
# t5300-views.sh (tests/e2e/lib/views-lib.sh), symbolized on the fly through a
# local store, written by `sym pprof` and read by Google's pprof.  `pprof
# -top` must give every function's flat and cum counts as `sym report`
# gives its self and total samples (an inlined function, `mix (inline)`,
# is our `mix_[i]`; an unresolved frame, `[libgone.so]`, our
# `libgone.so+0x4321`), and `pprof -traces` every stack and count of `sym
# fold` (tests/e2e/lib/views_check.py pprof).
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/pprof-lib.sh"
. "$(dirname "$0")/lib/views-lib.sh"
need gcc objdump nm addr2line python3
need_pprof
plan 5

ok "build the program (gcc -O2 -g) and find its addresses" views_build
views_profile
"$SYM" pprof --store "$T/store" -q -o "$T/out.pb.gz" "$T/in.raw"
is "sym pprof: exit 0" "$?" 0
"$SYM" report --granularity=addresses --store "$T/store" -q --top 1000 "$T/in.raw" > "$T/report.txt"
"$SYM" fold --granularity=addresses --store "$T/store" -q "$T/in.raw" > "$T/f.folded"
pprof_run -symbolize=none -top -nodecount=100000 -sample_index=samples \
	"$T/out.pb.gz" > "$T/top" 2>&1
pprof_run -symbolize=none -traces -sample_index=samples "$T/out.pb.gz" \
	> "$T/traces" 2>&1
sed 's/^/# /' "$T/top"
tap_points "sym pprof" python3 "$SYM_ROOT/tests/e2e/lib/views_check.py" pprof \
	"$T/f.folded" "$T/report.txt" "$T/top" "$T/traces"
done_testing
