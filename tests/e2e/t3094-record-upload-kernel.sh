#!/bin/sh
# t3094-record-upload-kernel.sh - a recorded profile's kallsyms snapshot
# sent to symd with the profile (issue 18, the kernel: "the recorder
# uploads the snapshot with the profile"; docs/record.md, "Through
# symd"): `sym record -a` while dd does syscalls, then
#  - `sym upload PROFILE` sends PROFILE.kallsyms's parts to a real symd
#    (127.0.0.1, port 0) whose store never saw this host's kernel;
#  - `sym symbolize --server` of the profile without its snapshot (moved
#    away, under a build ID this host's kernel does not have, so that
#    neither the snapshot nor /proc/kallsyms can answer) names every
#    kernel frame as the snapshot does locally, and >= 99% of the
#    distinct kernel addresses of a `perf record -a` of the same run get
#    perf's kallsyms names;
#  - a second `sym upload PROFILE` skips what symd has; a profile without
#    a snapshot (no kernel frames) has nothing to upload, status 0;
#  - `sym record -a --upload URL` sends its snapshot itself, and symd
#    names that profile's kernel frames as the snapshot does, the
#    profile moved to another boot's KASLR slide so that this host's
#    /proc/kallsyms cannot answer.
# Skipped unless root (kallsyms hides its addresses otherwise) and perf
# events can be opened.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need perf dd python3 curl
need_kernel_record
plan 10
CHECK="python3 $SYM_ROOT/tests/e2e/lib/kernel_check.py"
cd "$T" || exit 1
echo secret > token
UP="$SYM upload --token-file $T/token"

record_dd_kernel k.raw
is "sym record -a exits 0, with a snapshot beside the profile" \
	"$REC_STATUS $(head -1 k.raw.kallsyms)" "0 sym-kallsyms 2"
bid=$(awk '$1 == "map" && $3 == "kernel" { print $9; exit }' k.raw)
text=$(awk '$2 == "T" && $3 == "_text" { print $1; exit }' /proc/kallsyms)

# The recorded pair, under a build ID this host's kernel does not have:
# only symd can name it once the snapshot is gone.
FAKE=00112233445566778899aabbccddeeff00112233
mkdir rec
sed "s/ $bid / $FAKE /" k.raw > rec/k.raw
sed "s/^kernel $bid\$/kernel $FAKE/" k.raw.kallsyms > rec/k.raw.kallsyms
start_symd --upload-token-file "$T/token" || exit 1
$UP --server "$SYMD_URL" rec/k.raw > up.out 2> up.err
is "sym upload PROFILE sends the snapshot beside it" \
	"$? $(sed "s/ [0-9]* bytes\$/ N bytes/" up.out)" \
	"0 $FAKE  rec/k.raw.kallsyms [kernel]  kallsyms  uploaded N bytes"
$UP --server "$SYMD_URL" rec/k.raw > up2.out 2> up2.err
is "... and skips it when symd has it" "$? $(cat up2.out)" \
	"0 $FAKE  rec/k.raw.kallsyms [kernel]  kallsyms  already there, skipped"

# The local answers, then symd's for the profile alone.
mkdir alone && cp rec/k.raw alone/k.raw
symd_kernel_points rec/k.raw.kallsyms rec/k.raw alone/k.raw "$text"

# sym record --upload: the recorder sends it itself.  Symbolized as if
# recorded on another boot (KASLR moved by 0x1e00000: this host's
# /proc/kallsyms cannot answer), only symd's copy names it.
dd if=/dev/zero of=/dev/null bs=512 count=100000000 2> /dev/null &
dd=$!
at_exit "kill $dd 2> /dev/null"
"$SYM" record -a -F 999 -g fp -d 2 --upload "$SYMD_URL" \
	--token-file "$T/token" -o r2.raw 2> r2.err
rc=$?
kill $dd 2> /dev/null
wait $dd 2> /dev/null
bid2=$(awk '$1 == "map" && $3 == "kernel" { print $9; exit }' r2.raw)
ok "sym record --upload: status $rc, the kernel's part sent" \
	sh -c "[ $rc = 0 ] && grep -Eq '^$bid2  r2.raw.kallsyms \[kernel\]  kallsyms  (uploaded [0-9]+ bytes|already there, skipped)\$' r2.err"
mkdir b2
$CHECK shift-raw r2.raw b2/r2.raw 1e00000
"$SYM" symbolize -q --server "$SYMD_URL" b2/r2.raw -o b2.sym
$CHECK kernel-locs b2.sym 1e00000 > b2.k
"$SYM" symbolize -q --kallsyms r2.raw.kallsyms r2.raw -o l2.sym
$CHECK kernel-locs l2.sym > l2.k
run_compare "... and symd names its frames ($(wc -l < l2.k)) as the \
snapshot does" cat b2.k < l2.k

# A profile without kernel frames has no snapshot.
printf 'sym-raw 1\nend\n' > user.raw
$UP --server "$SYMD_URL" user.raw > up3.out 2> up3.err
is "a profile without a snapshot: nothing to upload, status 0" \
	"$? $(cat up3.out up3.err)" \
	"0 sym upload: 'user.raw': a profile without a kallsyms snapshot beside it (no kernel frames): nothing to upload"
stop_symd
is "symd ends cleanly" "$SYMD_STATUS" 0
done_testing
