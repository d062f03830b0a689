#!/bin/bash
# t3122-record-wall-agg.sh - sym record --wall --aggregate kernel
# (docs/record.md "Aggregation in BPF"): CPU samples from the BPF
# perf_event sampler and off-CPU time from sched_switch, both summed in
# the same BPF maps per frame-pointer stack, in one profile with the ring
# path's value types (wall, cpu, off-cpu, ns).  Against t3113's truth,
# on fixtures built WITH frame pointers (the BPF walk needs them):
# prof_spin.c (4 threads spin 500 ms of CPU on 2 CPUs): per thread cpu
# within 10% of its time on a CPU, off-cpu within 5% of the kernel's
# run_delay, the two within 5% of its wall time; prof_offcpu.c: the
# off-cpu value's sleep/pipe shares within 3 points of the fixture's and
# totals within 5%.  The ring path (--aggregate user) on the same
# fixtures passes the same checks, and the two modes agree: the CPU part
# within the 99.9% interval of two sample counts, the rest within 5% /
# 3 points.  Header fields as the ring path's; nothing lost, in the file
# and the summary; SYM_AGG_HASH_BITS=1: collisions counted in both; with
# no BTF, the fallback to --wall's CPU part through perf events; SIGKILL
# leaves no program.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
need_bpf_record --wall --aggregate kernel
plan 19

prof_cc fix prof_spin.c -O2 -g -pthread -fno-omit-frame-pointer
prof_cc off prof_offcpu.c -O2 -g -pthread -fno-omit-frame-pointer
hdr() { awk -v k="$2" '$1 == k { $1 = ""; print substr($0, 2) }' "$1"; }
fold() { "$SYM" fold -q --broken=plain --tid "$@"; }
# the header fields the two modes share (mode differs: fp against dwarf)
hdrs() { for k in event weight-unit frequency period value-type; do hdr "$1" $k; done; }

# (user: a 2 KiB stack copy, as t3112: the spinners' whole stacks fit
# in 512 bytes, and the ring then holds a round of a loaded machine's
# preemptions; with 8 KiB, one run under ASan came 0.4 s short of one
# thread's run_delay, 7%: lost events, which the file counts, leave no
# truth to check against -- hence the point that none was lost)
# (-F 977: not in step with the tick, see t3113)
for m in kernel user; do
	"$SYM" record --wall --aggregate $m -F 977 --stack-size 2048 \
		-o "$T/$m.raw" -- "$T/fix" 4 500 > "$T/$m.out" 2> "$T/$m.err"
	is "spin, $m: exit 0" "$?" 0
	sed 's/^/# /' "$T/$m.err"
	fold --value cpu "$T/$m.raw" > "$T/$m.cpu"
	fold --value off-cpu "$T/$m.raw" > "$T/$m.off"
	check wall "$T/$m.cpu" "$T/$m.off" "$T/$m.out"
done
is "user: nothing lost (the truth above is whole)" "$(hdr "$T/user.raw" lost)" 0
ok "kernel: the sampler and sched_switch attached" \
	grep -q 'off-CPU (perf_event+tp_btf)' "$T/kernel.err"
is "kernel: nothing lost, in the file and the summary" \
	"$(hdr "$T/kernel.raw" lost) $(agglost "$T/kernel.err")" "0 0"
check agree-wall "$T/kernel.cpu" "$T/kernel.off" "$T/kernel.out" \
	"$T/user.cpu" "$T/user.off" "$T/user.out" \
	"$(hdr "$T/kernel.raw" period)"
is "header: event, unit, frequency, period, mode" \
	"$(hdr "$T/kernel.raw" event) $(hdr "$T/kernel.raw" weight-unit) $(hdr "$T/kernel.raw" frequency) $(hdr "$T/kernel.raw" period) $(hdr "$T/kernel.raw" mode)" \
	"wall ns 977 1023541 fp"
is "header: the same fields and value types as the ring path's" \
	"$(hdrs "$T/kernel.raw")" "$(hdrs "$T/user.raw")"
# every value split: wall = cpu + off-cpu, stack by stack
ok "wall = cpu + off-cpu on every stack" sh -c '
	"$1" fold -q --broken=plain --tid --value wall "$2" > "$3/w.f"
	cat "$3/kernel.cpu" "$3/kernel.off" | awk "
		FNR == NR { w[\$1] = \$NF; next }
		{ s[\$1] += \$NF }
		END { for (k in w) if (w[k] != s[k]) bad = 1
		      for (k in s) if (w[k] != s[k]) bad = 1
		      exit bad }" "$3/w.f" -' _ "$SYM" "$T/kernel.raw" "$T"

for m in kernel user; do
	"$SYM" record --wall --aggregate $m -o "$T/o$m.raw" -- "$T/off" 100 \
		> "$T/o$m.out" 2> "$T/o$m.err"
	is "sleep/pipe, $m: exit 0" "$?" 0
	fold --value off-cpu "$T/o$m.raw" > "$T/o$m.fold"
done
check kshares "$T/okernel.fold" "$T/okernel.out"
check truth "$T/ouser.fold" "$T/ouser.out"
check agree-shares "$T/okernel.fold" "$T/okernel.out" "$T/ouser.fold" "$T/ouser.out"

SYM_AGG_HASH_BITS=1 "$SYM" record --wall --aggregate kernel -F 999 \
	-o "$T/col.raw" -- "$T/off" 50 > "$T/col.out" 2> "$T/col.err"
grep 'aggregated in BPF' "$T/col.err" | sed 's/^/# /'
col=$(agglost "$T/col.err")
ok "collisions: counted ($col), the file's lost is the summary's" \
	test "${col:-0}" -gt 0 -a "$(hdr "$T/col.raw" lost)" = "$col"

# No BTF (a tmpfs over /sys/kernel/btf in a private mount namespace, as
# t3130): --wall --aggregate kernel falls back to --wall's CPU part
# through the perf events, a plain CPU profile unwound with CFI.
unshare -m sh -c 'mount -t tmpfs none /sys/kernel/btf && exec "$@"' sh \
	"$SYM" record --wall --aggregate kernel -F 999 -o "$T/fb.raw" -- \
	"$T/fix" 1 300 > "$T/fb.out" 2> "$T/fb.err"
rc=$?
sed 's/^/# /' "$T/fb.err" | head -2
"$SYM" fold -q "$T/fb.raw" > "$T/fb.fold"
ok "no BTF: falls back to a CPU profile (exit $rc), >= 90% in spinner;spin_until" \
	sh -c 'test "$1" = 0 &&
	grep -q -- "--wall: the kernel has no BTF.*recording the CPU part only" "$2" &&
	test "$(awk "\$1 == \"event\" || \$1 == \"mode\" { print \$2 }" "$3" | tr "\n" " ")" = "cpu-clock dwarf " &&
	awk "{ a += \$NF } /spinner;spin_until/ { s += \$NF } END { exit !(a > 0 && s >= 0.9 * a) }" "$4"' \
	_ "$rc" "$T/fb.err" "$T/fb.raw" "$T/fb.fold"

# SIGKILL: the programs go with the process (nothing pinned).
sigkill_agent --wall --aggregate kernel

done_testing
