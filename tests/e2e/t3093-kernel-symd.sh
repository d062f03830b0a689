#!/bin/sh
# t3093-kernel-symd.sh - kernel frames named by symd from an uploaded
# kallsyms snapshot (issue 18, the kernel; docs/http-api.md, "Kallsyms
# snapshots"): `sym record -a` while dd does syscalls, then
#  - the profile's kernel map says where the kernel's _text was (PGOFF);
#  - `sym upload --kallsyms PROFILE.kallsyms` puts the kernel's part on a
#    real symd under the kernel's build ID;
#  - `sym symbolize --server` of the profile away from its snapshot gets
#    the names the snapshot gives locally, on every kernel frame, and
#    perf's names on >= 99% of the distinct kernel addresses of a `perf
#    record` of the same run;
#  - another boot (the same symbols moved by another KASLR slide, made
#    from the real snapshot by kernel_check.py): its snapshot names this
#    boot's profile, and this boot's names its profile, identically;
#  - a module's part (a snapshot of a kernel with modules: this VM's has
#    none) is stored under the module's build ID and answers .text
#    offsets; a better file (an ELF with DWARF under the same build ID,
#    standing for the kernel's vmlinux debug file) replaces the
#    snapshot's table, and a snapshot after it is refused with 409;
#  - bad snapshots are refused with 422 and the reason.
# Skipped unless root (kallsyms hides its addresses otherwise) and perf
# events can be opened.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need perf dd python3 curl
need_kernel_record
plan 19
CHECK="python3 $SYM_ROOT/tests/e2e/lib/kernel_check.py"
cd "$T" || exit 1
echo secret > token
UP="$SYM upload --token-file $T/token"

# One workload, two recorders at once: sym record and perf record.
record_dd_kernel k.raw
is "sym record -a exits 0" "$REC_STATUS" 0

bid=$(awk '$1 == "map" && $3 == "kernel" { print $9; exit }' k.raw)
text=$(awk '$2 == "T" && $3 == "_text" { print $1; exit }' /proc/kallsyms)
is "the kernel map's PGOFF is this boot's _text" \
	"$(awk '$1 == "map" && $3 == "kernel" { print $7; exit }' k.raw)" \
	"$(echo "$text" | sed 's/^0*//')"

# Under a build ID this host's kernel does not have, so that its
# /proc/kallsyms cannot answer: only the snapshot given, or symd.
FAKE=00112233445566778899aabbccddeeff00112233
sed "s/^kernel $bid\$/kernel $FAKE/" k.raw.kallsyms > fake.kallsyms
mkdir moved && sed "s/ $bid / $FAKE /" k.raw > moved/k.raw
start_symd --upload-token-file "$T/token" || exit 1
$UP --server "$SYMD_URL" --kallsyms fake.kallsyms > up.out 2> up.err
is "sym upload --kallsyms sends the kernel's part" \
	"$? $(sed "s/ [0-9]* bytes\$/ N bytes/" up.out)" \
	"0 $FAKE  fake.kallsyms [kernel]  kallsyms  uploaded N bytes"

# Locally from the snapshot, then through symd.
symd_kernel_points fake.kallsyms moved/k.raw moved/k.raw "$text"

# Another boot: every address moved by a slide of 0x1e00000 (KASLR moves
# the kernel in 2 MiB steps).
$CHECK shift-snapshot fake.kallsyms boot2.kallsyms 1e00000
$CHECK shift-raw moved/k.raw moved/boot2.raw 1e00000
"$SYM" symbolize -q --server "$SYMD_URL" moved/boot2.raw -o b2.sym
$CHECK kernel-locs b2.sym 1e00000 > b2.k
run_compare "another boot's profile: the same names from this boot's snapshot on symd" \
	cat b2.k < local.k
"$SYM" symbolize -q --kallsyms fake.kallsyms moved/boot2.raw -o b2l.sym
$CHECK kernel-locs b2l.sym 1e00000 > b2l.k
run_compare "... and from this boot's snapshot given locally" \
	cat b2l.k < local.k
stop_symd
rm -rf "$T/symd-store"
start_symd --upload-token-file "$T/token" || exit 1
$UP --server "$SYMD_URL" --kallsyms boot2.kallsyms > up2.out 2>&1
is "the other boot's snapshot goes up" "$?" 0
"$SYM" symbolize -q --server "$SYMD_URL" moved/k.raw -o srv2.sym
$CHECK kernel-locs srv2.sym > srv2.k
run_compare "this boot's profile: the same names from the other boot's snapshot on symd" \
	cat srv2.k < local.k

# A kernel with a module (synthetic: this VM's kernel has none).  The
# kernel is a fixture with DWARF standing for vmlinux: its build ID.
exe=$(fixture gcc-O2-d5-c)
kid=$("$SYM" buildid "$exe" | awk '{ print $1 }')
MID=0123456789abcdef0123456789abcdef01234567
cat > mod.kallsyms <<EOT
sym-kallsyms 2
kernel $kid
module e1000 ffffffffc0400000 3000 $MID ffffffffc0400010
ffffffff81000000 T _text
ffffffff81000100 t do_syscall_64
ffffffff81000180 T ksys_read
ffffffffc0400010 t e1000_clean [e1000]
ffffffffc0400200 T e1000_xmit_frame [e1000]
ffffffffc0800000 t nf_hook_slow [nf_tables]
end
EOT
$UP --server "$SYMD_URL" --kallsyms mod.kallsyms > upm.out 2> upm.err
run_compare "the kernel's and the module's parts go up; a [tag] without a module line does not" \
	sh -c 'sed "s/ [0-9]* bytes\$/ N bytes/" upm.out; cat upm.err' <<EOT
$kid  mod.kallsyms [kernel]  kallsyms  uploaded N bytes
$MID  mod.kallsyms [e1000]  kallsyms  uploaded N bytes
sym upload: 'mod.kallsyms': module nf_tables has no build ID: its part is not uploaded
EOT
q() {
	symd_curl -d "{\"modules\":[{\"build_id\":\"$1\",\"addresses\":[$2]}],\"wait_ms\":5000}" \
		"$SYMD_URL/v1/symbolize" |
		python3 -c 'import json,sys
for m in json.load(sys.stdin)["modules"]:
    print(m["status"], m.get("source"), [[f.get("function") for f in fr] for fr in m.get("frames", [])])'
}
run_compare "the module's .text offsets are named by its part" \
	q $MID '"0x0","0x1ef","0x1f0","0x2fef","0x2ff0"' <<'EOT'
ok kallsyms [['e1000_clean'], ['e1000_clean'], ['e1000_xmit_frame'], ['e1000_xmit_frame'], []]
EOT
run_compare "the kernel's _text offsets are named by its part" \
	q "$kid" '"0x0","0x100","0x17f","0x180"' <<'EOT'
ok kallsyms [['_text'], ['do_syscall_64'], ['do_syscall_64'], ['ksys_read']]
EOT
$UP --server "$SYMD_URL" "$exe" > upe.out 2>&1
is "the ELF file with DWARF goes up over the snapshot" "$?" 0
src=$(q "$kid" '"0x0"' | awk '{ print $2 }')
is "its table replaces the snapshot's" "$src" dwarf
"$SYM" upload --token-file "$T/token" --server "$SYMD_URL" --kallsyms mod.kallsyms > upm2.out 2>&1
ok "sym upload --kallsyms again: the kernel's part is there, skipped" \
	grep -qx "$kid  mod.kallsyms \[kernel\]  kallsyms  already there, skipped" upm2.out
is "a snapshot PUT over the DWARF: 409" \
	"$(symd_curl -X PUT -H 'Authorization: Bearer secret' --data-binary @mod.kallsyms "$SYMD_URL/v1/kallsyms/$kid" -w ' %{http_code}')" \
	"{\"error\":\"the server has dwarf for build ID $kid and this kallsyms snapshot would not improve it (?force=1, or sym upload --force, stores it anyway)\"} 409"

# Bad snapshots.
printf 'sym-kallsyms 2\nkernel %s\nffffffff81000000 T _text\n' 00cc00cc > cut.kallsyms
is "a snapshot cut short: 422 and the line" \
	"$(symd_curl -X PUT -H 'Authorization: Bearer secret' --data-binary @cut.kallsyms "$SYMD_URL/v1/kallsyms/00cc00cc" -w ' %{http_code}')" \
	'{"error":"kallsyms snapshot: line 3: cut short: no end line"} 422'
is "a snapshot without the build ID: 422" \
	"$(symd_curl -X PUT -H 'Authorization: Bearer secret' --data-binary @mod.kallsyms "$SYMD_URL/v1/kallsyms/00aa" -w ' %{http_code}')" \
	'{"error":"the kallsyms snapshot has no table of 00aa: no module of that build ID with its .text address"} 422'
done_testing
