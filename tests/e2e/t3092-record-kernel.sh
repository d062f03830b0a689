#!/bin/sh
# t3092-record-kernel.sh - kernel frames named away from the host that
# recorded them (issue 18, the kernel): `sym record -a` while dd does
# syscalls writes PROFILE.kallsyms beside the profile (docs/record.md,
# "The kallsyms snapshot"), and sym symbolize and sym report name kernel
# frames from it as perf names them from /proc/kallsyms:
#  - the snapshot carries the kernel's build ID (the profile's kernel
#    map's) and every text symbol of /proc/kallsyms outside modules
#    (tagged ones, such as BPF programs, come and go meanwhile);
#  - every kernel frame of the recording resolves;
#  - the distinct kernel addresses of `perf script` on a perf recording
#    of the same workload, symbolized from the snapshot under another
#    build ID (so that this host's /proc/kallsyms cannot answer), get
#    perf's names on >= 99% of them;
#  - perf report's hottest kernel functions are among sym report's;
#  - module frames come out as perf's `func [module]` and a frame past a
#    module's end is not named (a snapshot of a kernel with modules:
#    this VM's has none);
#  - a snapshot of another kernel is not used, and a damaged one is
#    refused with a message.
# Skipped unless root (kallsyms hides its addresses otherwise) and perf
# events can be opened.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
need perf dd python3
need_kernel_record
plan 11
CHECK="python3 $SYM_ROOT/tests/e2e/lib/kernel_check.py"
FAKE=00112233445566778899aabbccddeeff00112233
cd "$T" || exit 1

# One workload, two recorders at once: sym record and perf record.
record_dd_kernel k.raw
is "sym record -a exits 0" "$REC_STATUS" 0
is "perf record exits 0" "$PERF_STATUS" 0

bid=$(awk '$1 == "map" && $3 == "kernel" { print $9; exit }' k.raw)
is "the snapshot is beside the profile, with its kernel's build ID" \
	"$(sed -n '1p;2p' k.raw.kallsyms | tr '\n' ' ')" \
	"sym-kallsyms 2 kernel $bid "
# (the kernel's own: [bpf] programs and the like come and go)
want=$(awk '$2 ~ /^[tTwW]$/ && NF == 3' /proc/kallsyms | wc -l)
got=$(awk 'NF == 3 && $2 ~ /^[tTwW]$/' k.raw.kallsyms | wc -l)
ok "it has every text symbol of the kernel's in /proc/kallsyms ($got of $want)" \
	test "$got" -eq "$want"

"$SYM" symbolize -v k.raw -o k.sym 2> k.err
ok "every kernel frame of the recording resolves" \
	grep -Eq '^ +[0-9]+ +100\.0% .* kallsyms +\[kernel\.kallsyms\]' k.err
grep kallsyms k.err | sed 's/^/# /'

# perf's names of the addresses perf recorded, against the snapshot's.
perf script -i perf.data -F ip,sym,dso > perf.txt 2> /dev/null
$CHECK perf-addrs perf.txt p.raw $FAKE
sed "s/^kernel $bid\$/kernel $FAKE/" k.raw.kallsyms > other.kallsyms
"$SYM" symbolize -q --kallsyms other.kallsyms p.raw -o p.sym
ok "perf's kernel addresses get perf's names from the snapshot" \
	$CHECK compare-names p.sym p.raw.perf

# perf report's hottest kernel functions of dd, in sym's.
perf report -i perf.data --comm dd --stdio --no-children --sort sym \
	2> /dev/null |
	awk '$2 == "[k]" { print $3 }' | head -3 > perf-top
$CHECK report-kernel k.sym > sym-kernel
missing=$(grep -vxFf sym-kernel perf-top | tr '\n' ' ')
is "perf report's top 3 kernel functions ($(tr '\n' ' ' < perf-top)) are in sym's" \
	"$missing" ""

# Without this host's kernel: the snapshot beside the profile answers;
# one of another kernel does not.
sed "s/ $bid / $FAKE /" k.raw > moved.raw
cp other.kallsyms moved.raw.kallsyms
"$SYM" symbolize -v moved.raw -o /dev/null 2> moved.err
ok "PROFILE.kallsyms names another host's kernel frames" \
	grep -Eq '^ +[0-9]+ +100\.0% .* kallsyms +\[kernel\.kallsyms\] \(00112233\)$' moved.err
"$SYM" symbolize -v --kallsyms k.raw.kallsyms moved.raw -o /dev/null \
	2> moved2.err
ok "a snapshot of another kernel is not used" \
	grep -Eq '\[kernel\.kallsyms\] \(00112233\): missing' moved2.err

# Modules: a snapshot of a kernel that has them.
cat > mod.kallsyms <<EOT
sym-kallsyms 1
kernel $FAKE
release 6.1.0-test
module e1000 ffffffffc0400000 3000 0123456789abcdef0123456789abcdef01234567
ffffffff81000000 T _stext
ffffffff81000100 t do_syscall_64
ffffffffc0400010 t e1000_clean [e1000]
ffffffffc0400200 T e1000_xmit_frame [e1000]
ffffffffc0800000 t nf_hook_slow [nf_tables]
end
EOT
cat > mod.raw <<EOT
sym-raw 1
period 1
weight-unit samples
map 0 kernel -1 ffff800000000000 ffffffffffffffff 0 ffff800000000000 $FAKE [kernel.kallsyms]
stack 1 1 1 1 - p0:ffffffffc0400020 r0:ffffffffc0400234 r0:ffffffff81000150
stack 1 1 1 1 - p0:ffffffffc0403000 r0:ffffffffc0800004
end
EOT
"$SYM" symbolize -q --kallsyms mod.kallsyms mod.raw -o mod.sym
run_compare "module frames are 'func [module]', past a module's end none" \
	sh -c "grep '^fn\|^loc' mod.sym" <<'EOT'
fn 1 do_syscall_64
fn 2 e1000_clean%20[e1000]
fn 3 e1000_xmit_frame%20[e1000]
fn 4 nf_hook_slow%20[nf_tables]
loc r0:ffffffff81000150 ok s1:-:0:0
loc p0:ffffffffc0400020 ok s2:-:0:0
loc r0:ffffffffc0400234 ok s3:-:0:0
loc p0:ffffffffc0403000 nosymbol
loc r0:ffffffffc0800004 ok s4:-:0:0
EOT

printf 'sym-kallsyms 1\nffffffff81000000 T _stext\n' > cut.kallsyms
run_compare "a snapshot cut short is refused with its reason" \
	sh -c '"$0" symbolize -q --kallsyms cut.kallsyms mod.raw -o x.sym; echo "status $?"' "$SYM" <<'EOT'
sym symbolize: 'cut.kallsyms': kallsyms snapshot: line 2: cut short: no end line
status 1
EOT
done_testing
