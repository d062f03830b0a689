#!/bin/bash
# t3120-record-aggregate.sh - sym record --aggregate kernel|user against
# known truth (docs/record.md "Aggregation"):
# - the BPF on-CPU sampler on the 70/30 burner (fixtures/src/prof_burn.c):
#   user (raw events through the ring buffer, stacks unwound with CFI
#   here): burn70's share in the 99.9% binomial interval, >= 99% of
#   stacks whole (record_check.py shares); kernel (stacks by frame
#   pointers in BPF, summed in maps): the leaves' shares in the 99.9%
#   interval, and how many stacks are whole printed (frameless leaves
#   make the walk skip main: flagged, never shown as right);
# - the off-CPU path on fixtures/src/prof_offcpu.c: user gives truth's
#   60/40 in whole stacks; kernel the same shares and totals, on the
#   -fomit-frame-pointer build and on the frame-pointer one, with the
#   share of whole stacks printed, and with one switch-in of two not
#   traced (injected: each such block ended by sched_info);
# - losses: hash collisions (SYM_AGG_HASH_BITS=1) dropped and counted,
#   never added to another stack; a rows map too small, a stacks map too
#   small (cleared, orphans), a ring buffer too small: counted in the
#   file's "lost" and the summary, and events in = events out + lost;
# - the command's child spinning before its execve() (injected): not
#   sampled, in either mode;
# - usage errors, and a SIGKILLed agent leaves no program.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
need_bpf_record --aggregate user
plan 29

prof_cc burn prof_burn.c -O2 -g -fno-omit-frame-pointer
prof_cc burnofp prof_burn.c -O2 -g -fomit-frame-pointer
prof_cc off prof_offcpu.c -O2 -g -pthread -fomit-frame-pointer
prof_cc offfp prof_offcpu.c -O2 -g -pthread -fno-omit-frame-pointer
hdr() { awk -v k="$2" '$1 == k { $1 = ""; print substr($0, 2) }' "$1"; }
# the number after WORD on the summary line matching RE
sumnum() { awk -v re="$2" -v w="$3" '$0 ~ re { for (i = 1; i < NF; i++)
	if ($i == w) { gsub(/[^0-9]/, "", $(i + 1)); print $(i + 1); exit } }' "$1"; }

# ---- on-CPU ----
"$SYM" record -F 999 --aggregate user -o "$T/u.raw" -- "$T/burn" 1.5 2> "$T/u.err"
is "on-CPU, user: exit 0" "$?" 0
check shares "$T/u.raw" "$T/burn" --mode dwarf
is "on-CPU, user: header event, mode, frequency, period" \
	"$(hdr "$T/u.raw" event) $(hdr "$T/u.raw" mode) $(hdr "$T/u.raw" frequency) $(hdr "$T/u.raw" period)" \
	"cpu-clock dwarf 999 1001001"
ok "on-CPU, user: the summary names the sampler" grep -q 'on-CPU (perf_event)' "$T/u.err"

"$SYM" record -F 999 --aggregate kernel -o "$T/k.raw" -- "$T/burn" 1.5 2> "$T/k.err"
is "on-CPU, kernel: exit 0" "$?" 0
grep 'aggregated in BPF' "$T/k.err" | sed 's/^/# /'
check leafshares "$T/k.raw" "$T/burn" --mode "kernel,fp-build"
is "on-CPU, kernel: header mode fp, frequency" \
	"$(hdr "$T/k.raw" mode) $(hdr "$T/k.raw" frequency)" "fp 999"
"$SYM" record -F 999 --aggregate kernel -o "$T/ko.raw" -- "$T/burnofp" 1.5 2> "$T/ko.err"
grep 'aggregated in BPF' "$T/ko.err" | sed 's/^/# /'
check leafshares "$T/ko.raw" "$T/burnofp" --mode "kernel,omit-fp-build"
ok "on-CPU, kernel: every sample's stack is flagged or whole (the summary)" \
	awk '/aggregated in BPF/ { w = $0; sub(/.*unflagged\): /, "", w); split(w, a, " ") }
	/unique stacks/ { f = $0; sub(/.*flagged /, "", f); split(f, b, " ") }
	END { exit !(a[1] + b[1] == a[3] && a[3] > 0) }' "$T/ko.err"

# the command's child spends 300 ms of CPU in the recorder's code before
# its execve() (injected): none of it is the program's (the BPF samplers
# start at sched_process_exec, as perf's enable_on_exec); burn does a
# fixed amount of work (~0.5 s of CPU here), so the samples do not
# depend on the machine's load
SYM_RECORD_PREEXEC_SPIN_MS=300 "$SYM" record -F 999 --aggregate user \
	-o "$T/ux.raw" -- "$T/burn" -n 50000 2> "$T/ux.err"
check shares "$T/ux.raw" "$T/burn" --mode dwarf
SYM_RECORD_PREEXEC_SPIN_MS=300 "$SYM" record -F 999 --aggregate kernel \
	-o "$T/kx.raw" -- "$T/burn" -n 50000 2> "$T/kx.err"
read -r n u <<< "$(awk '/unique stacks/ { n = $4; sub(/.*unwind /, "");
	print n, $1 + 0 }' "$T/kx.err")"
ok "on-CPU, kernel: 300 ms before the command's execve() not sampled: unwind-flagged $u of $n <= 1%" \
	test "${n:-0}" -ge 100 -a "$((${u:-1000000} * 100))" -le "${n:-0}"

# ---- off-CPU ----
fold() { "$SYM" fold -q --broken=plain --tid "$@"; }
"$SYM" record --off-cpu --aggregate user -o "$T/ou.raw" -- "$T/off" 100 \
	> "$T/ou.out" 2> "$T/ou.err"
is "off-CPU, user: exit 0" "$?" 0
fold --value off-cpu "$T/ou.raw" > "$T/ou.fold"
check truth "$T/ou.fold" "$T/ou.out"
for b in off offfp; do
	"$SYM" record --off-cpu --aggregate kernel -o "$T/ok$b.raw" -- \
		"$T/$b" 100 > "$T/ok$b.out" 2> "$T/ok$b.err"
	is "off-CPU, kernel, $b: exit 0" "$?" 0
	grep 'aggregated in BPF' "$T/ok$b.err" | sed 's/^/# /'
	fold --value off-cpu "$T/ok$b.raw" > "$T/ok$b.fold"
	check kshares "$T/ok$b.fold" "$T/ok$b.out"
done
# one switch-in of two not traced (injected, as t3110): the blocks are
# ended by sched_info in BPF too, the same shares and totals
SYM_OFFCPU_MISS_IN=2 "$SYM" record --off-cpu --aggregate kernel \
	-o "$T/okmiss.raw" -- "$T/off" 100 > "$T/okmiss.out" 2> "$T/okmiss.err"
fold --value off-cpu "$T/okmiss.raw" > "$T/okmiss.fold"
check kshares "$T/okmiss.fold" "$T/okmiss.out"
read -r n k l <<< "$(unseen "$T/okmiss.err")"
ok "off-CPU, kernel: the untraced switch-ins counted ($n >= 100), all ended by sched_info ($k), none lost ($l)" \
	test "$n" -ge 100 -a "$k" = "$n" -a "$l" = 0
is "off-CPU, kernel: value types as --off-cpu's" \
	"$(hdr "$T/okoff.raw" value-type | tr '\n' ' ')" \
	"off-cpu nanoseconds off-cpu-S nanoseconds off-cpu-D nanoseconds off-cpu-R nanoseconds "

# ---- losses ----
SYM_AGG_HASH_BITS=1 "$SYM" record --off-cpu --aggregate kernel \
	-o "$T/col.raw" -- "$T/offfp" 100 > "$T/col.out" 2> "$T/col.err"
col=$(sumnum "$T/col.err" 'aggregated in BPF' lost)
ok "collisions: counted ($col), in the file's lost too" \
	test "${col:-0}" -gt 0 -a "$(hdr "$T/col.raw" lost)" = "$(agglost "$T/col.err")"
fold "$T/col.raw" > "$T/col.fold"
check collide "$T/col.fold" "$T/col.out"

# events in = events in the file + lost (+ dropped), whatever overflowed
conserved() {
	awk '/aggregated in BPF/ { a = $6 }
	/unique stacks/ { for (i = 1; i < NF; i++) {
		if ($(i + 1) == "samples") k = $i
		if ($i == "dropped") d = $(i + 1) } }
	/aggregated in BPF/ { o = $0; sub(/.*\+ /, "", o); split(o, x, " "); orph = x[1] }
	END { exit !(k + orph + d == a) }' "$1"
}
SYM_AGG_ROWS=2 "$SYM" record -F 999 --aggregate kernel -o "$T/rows.raw" -- \
	"$T/burnofp" 1 2> "$T/rows.err"
full=$(awk '/aggregated in BPF/ { s = $0; sub(/ \(rows map full\).*/, "", s); n = split(s, a, " "); print a[n] }' "$T/rows.err")
ok "rows map full: counted ($full), in the file's lost" \
	test "${full:-0}" -gt 0 -a "$(hdr "$T/rows.raw" lost)" = "$(agglost "$T/rows.err")"
SYM_AGG_STACKS=8 "$SYM" record --off-cpu --aggregate kernel \
	-o "$T/st.raw" -- "$T/off" 100 > /dev/null 2> "$T/st.err"
grep 'aggregated in BPF' "$T/st.err" | sed 's/^/# /'
ok "stacks map small: cleared when 3/4 full, lost in the file" \
	grep -q "[1-9][0-9]* cleared in [1-9]" "$T/st.err"
ok "stacks map small: events aggregated = kept + orphans + dropped" \
	conserved "$T/st.err"
is "stacks map small: the file's lost is the summary's" \
	"$(hdr "$T/st.raw" lost)" "$(agglost "$T/st.err")"
SYM_OFFCPU_RING=8192 SYM_RECORD_DRAIN_DELAY_MS=300 \
	"$SYM" record -F 999 --aggregate user --stack-size 4096 \
	-o "$T/ring.raw" -- "$T/burn" 1 2> "$T/ring.err"
rl=$(sumnum "$T/ring.err" 'on-CPU .perf_event' lost)
ok "ring buffer full: counted ($rl), in the file's lost" \
	test "${rl:-0}" -gt 0 -a "$(hdr "$T/ring.raw" lost)" = "$rl"

# ---- usage ----
usage() { "$SYM" record "$@" -o "$T/x.raw" -- true 2> "$T/x.err"; echo $?; }
is "usage: --aggregate bogus, kernel with --fixed-stack, user with -g fp" \
	"$(usage --aggregate bogus) $(usage --aggregate kernel --fixed-stack) $(usage --aggregate user -g fp)" \
	"2 2 2"

# ---- SIGKILL ----
sigkill_agent --aggregate kernel

done_testing
