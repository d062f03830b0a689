#!/bin/sh
# t0163-kernel-modules.sh - loadable kernel modules as modules of their
# own (issue 18, the kernel: "loadable modules are modules with their
# own build IDs, resolved from their .ko debug files when found, else
# from the snapshot"; docs/record.md, "Kernel modules in a profile"),
# offline, on Debian's real 6.1 cloud vmlinux and the debug .ko files of
# xfs, virtio_net and af_key (fixtures/build/kdbg, shared with t0161):
#  - a recorded machine: /proc/kallsyms, /proc/modules and the
#    /sys/module notes and .text of a kernel with those three modules
#    loaded (their real build IDs and symbols, at chosen places; the
#    kernel moved by a KASLR slide; kmod_check.py root), read by `sym
#    kallsyms --root` into a snapshot with each module's line;
#  - a profile with the maps `sym record` writes for that machine (a map
#    per module under its build ID, PGOFF its .text: ksnap_kmod_map(),
#    which t-record checks), one frame at each of 1,000 sampled vmlinux
#    addresses and 300 .text addresses of each module;
#  - locally, with the snapshot only: every frame named as the snapshot
#    names it (the last symbol at or below, "NAME [MODULE]");
#  - with the xfs and virtio_net .ko in the store: their frames get the
#    .ko's DWARF answers (inline chains, files, lines, columns), the
#    snapshot given notwithstanding; af_key (no .ko) keeps the
#    snapshot's; sym addr2line's answers used as reference are
#    eu-addr2line -j .text's (kdwarf_check.py eu, as t0161);
#  - with vmlinux in the store: the kernel's frames get its DWARF answers
#    rather than the snapshot's (a DWARF table first);
#  - through a real symd (127.0.0.1, port 0) that holds the snapshot's
#    parts and the two .ko (sym upload): the profile alone gets the .ko's
#    DWARF for xfs and virtio_net, the snapshot part's names for af_key
#    and the kernel; with the snapshot given too, symd's DWARF still
#    wins, and af_key is named by the local snapshot.
# Skipped, saying why, when the -dbg package cannot be fetched.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need apt-get apt-cache dpkg-deb objdump objcopy nm readelf eu-addr2line \
	python3 flock curl
. "$(dirname "$0")/lib/kdbg-lib.sh"
kdbg_setup
plan 17
kmod_files
cd "$T" || exit 1

# The recorded machine, its profile (1,000 vmlinux addresses, 300 of each
# module) and its snapshot.
kmod_profile || exit 1
"$SYM" kallsyms --root "$T/root" -o snap > kall.out 2>&1
is "sym kallsyms --root: status 0, nothing said" "$? $(cat kall.out)" "0 "
bid() { readelf -n "$1" | sed -n 's/.*Build ID: //p'; }
run_compare "its header: the kernel's build ID (sys/kernel/notes), release, \
each module's place, size, build ID (its notes) and .text" \
	head -6 snap <<EOT
sym-kallsyms 2
kernel $KBID
release ${KDBG_V##*/vmlinux-}
module xfs ffffffffc0400000 d3000 $(bid "$X") ffffffffc0401000
module virtio_net ffffffffc05d3000 1b000 $(bid "$N") ffffffffc05d4000
module af_key ffffffffc06ee000 17000 $(bid "$A") ffffffffc06ef000
EOT
is "... and every text symbol of its kallsyms, nothing else" \
	"$(sed -n '7,$p' snap | grep -vc '^end$')" \
	"$(awk '$2 ~ /^[tTwW]$/' root/proc/kallsyms | wc -l)"

# The snapshot alone.
"$SYM" symbolize -q --store "$T/st0" --kallsyms snap prof.raw -o s0.sym
ok "the snapshot alone: $($CHECK names s0.sym root k.addrs "$KT" 1 all |
	head -1)" $CHECK names s0.sym root k.addrs "$KT" 1 all

# The reference: sym addr2line on each .ko is eu-addr2line -j .text.
kmod_refs "$X" "$N"

# The .ko files in the store: DWARF before the snapshot.
"$SYM" store add --store "$T/st1" "$X" "$N" > /dev/null
"$SYM" symbolize -v --store "$T/st1" --kallsyms snap prof.raw -o s1.sym \
	2> s1.err
sed 's/^/# /' s1.err
ok "xfs from its .ko's DWARF: $($CHECK dwarf s1.sym 1 xfs.addrs xfs.ref |
	head -1)" $CHECK dwarf s1.sym 1 xfs.addrs xfs.ref
ok "virtio_net from its .ko's DWARF: $($CHECK dwarf s1.sym 2 \
virtio_net.addrs virtio_net.ref | head -1)" \
	$CHECK dwarf s1.sym 2 virtio_net.addrs virtio_net.ref
ok "af_key (no .ko) and the kernel from the snapshot: $($CHECK names \
s1.sym root k.addrs "$KT" 1 0,3 | head -1)" \
	$CHECK names s1.sym root k.addrs "$KT" 1 0,3

# vmlinux in the store: its DWARF before the snapshot for the kernel.
"$SYM" store add --store "$T/st1" "$KDBG_V" > /dev/null
python3 -c "
import sys
for l in open('k.addrs'): print(hex(int(l, 16) - 0x$KT))" > k.offs
# (sym addr2line takes the vmlinux's link-time addresses, _text + offset)
VT=$(nm "$KDBG_V" | sed -n 's/^\([0-9a-f]*\) T _text$/\1/p')
python3 -c "
for l in open('k.offs'): print(hex(int(l, 16) + 0x$VT))" > k.lnk
"$SYM" addr2line --store "$T/st1" -a -f -i --output-style=elfutils \
	-e "$KDBG_V" < k.lnk > k.ref
"$SYM" symbolize -v --store "$T/st1" --kallsyms snap prof.raw -o s2.sym \
	2> s2.err
ok "the kernel from vmlinux's DWARF: $($CHECK dwarf s2.sym 0 k.offs k.ref \
root $VT | head -1)" $CHECK dwarf s2.sym 0 k.offs k.ref root $VT
sed "s/^/# /" s2.err
ok "... its row says dwarf" \
	grep -Eq '^ +1000 .* dwarf +\[kernel\.kallsyms\]' s2.err

# symd: the snapshot's parts, then the two .ko.
echo secret > token
UP="$SYM upload --token-file $T/token"
start_symd --upload-token-file "$T/token" || exit 1
$UP --server "$SYMD_URL" --kallsyms snap > up.out 2> up.err
is "sym upload --kallsyms: the kernel's part and each module's" \
	"$? $(awk '{ print $3, $NF == "bytes" ? "up" : $0 }' up.out | tr '\n' ' ')" \
	"0 [kernel] up [xfs] up [virtio_net] up [af_key] up "
$UP --server "$SYMD_URL" "$X" "$N" > upk.out 2>> up.err
is "sym upload of the two .ko debug files" "$?" 0
sed 's/^/# /' up.err
mkdir alone && cp prof.raw alone/
"$SYM" symbolize -v --server "$SYMD_URL" alone/prof.raw -o d0.sym 2> d0.err
sed 's/^/# /' d0.err
ok "symd, the profile alone: xfs from the .ko's DWARF \
($($CHECK dwarf d0.sym 1 xfs.addrs xfs.ref | head -1))" \
	$CHECK dwarf d0.sym 1 xfs.addrs xfs.ref
ok "... virtio_net too ($($CHECK dwarf d0.sym 2 virtio_net.addrs \
virtio_net.ref | head -1))" \
	$CHECK dwarf d0.sym 2 virtio_net.addrs virtio_net.ref
ok "... af_key and the kernel from their parts: $($CHECK names d0.sym root \
k.addrs "$KT" 0 0,3 | head -1)" \
	$CHECK names d0.sym root k.addrs "$KT" 0 0,3
"$SYM" symbolize -q --server "$SYMD_URL" --kallsyms snap alone/prof.raw \
	-o d1.sym
ok "symd and the snapshot given: symd's DWARF for xfs, virtio_net, the \
snapshot for af_key: $($CHECK names d1.sym root k.addrs "$KT" 1 3 | head -1)" \
	sh -c "$CHECK dwarf d1.sym 1 xfs.addrs xfs.ref &&
	       $CHECK dwarf d1.sym 2 virtio_net.addrs virtio_net.ref &&
	       $CHECK names d1.sym root k.addrs $KT 1 3"
stop_symd
done_testing
