#!/bin/sh
# t0164-kernel-ko-search.sh - a kernel module's .ko debug file is found
# the way every other debug file is (issue 18, the kernel: "loadable
# modules ... resolved from their .ko debug files when those are found";
# docs/design.md, "Kernel modules"), offline, on the recorded machine and
# profile of t0163 (Debian's 6.1 cloud vmlinux, the debug .ko files of
# xfs, virtio_net and af_key, fixtures/build/kdbg), with an empty store
# every time:
#  - (a) by build ID from a real debuginfod (127.0.0.1) indexing a
#    directory that holds xfs.ko and virtio_net.ko, through
#    $DEBUGINFOD_URLS: their frames get the .ko's DWARF answers, af_key
#    and the kernel the snapshot's; (a') the same server as a real
#    symd's upstream (--debuginfod-urls): symd, its store empty, fetches
#    the two .ko by build ID and `sym symbolize --server` gets their DWARF;
#  - (b) from a /usr/lib/debug-style directory given by --debuginfo-path:
#    xfs by name under lib/modules/REL/ (REL the snapshot's release, said
#    on stderr), virtio_net by build ID under .build-id/; sym fold, given
#    the same options, folds the same stacks;
#  - (b') the three compressed whole as distributions install them,
#    xfs.ko.xz, virtio_net.ko.zst and af_key.ko.gz, found by name: the
#    same answers, and af_key's DWARF;
#  - (c) a wrong-build af_key.ko under the name (xfs.ko's bytes): a
#    warning naming it and both build IDs, and af_key's frames keep the
#    snapshot's names; with the real af_key.ko in a later directory of
#    --debuginfo-path, the search goes on to it and af_key gets its DWARF;
#  - (d) no snapshot: the release searched is uname -r's (said so), xfs
#    found under lib/modules/$(uname -r)/ and the kernel's DWARF from
#    boot/vmlinux-$(uname -r); the other two modules are missing;
#  - (e) no snapshot, but a `release` line in the profile's header (as
#    sym record writes): that release is searched, and said so.
# Every DWARF answer is compared whole (functions, inline chains, files,
# lines) against sym addr2line's on the same .ko, itself checked against
# eu-addr2line -f -i -j .text (kdwarf_check.py eu, as t0161 and t0163).
# Skipped, saying why, when the -dbg package cannot be fetched.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/debuginfod-lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need apt-get apt-cache dpkg-deb objdump objcopy nm readelf eu-addr2line \
	python3 flock curl debuginfod xz zstd
. "$(dirname "$0")/lib/kdbg-lib.sh"
kdbg_setup
plan 30
kmod_files
cd "$T" || exit 1
REL=${KDBG_V##*/vmlinux-}
bid() { readelf -n "$1" | sed -n 's/.*Build ID: //p'; }
XB=$(bid "$X") NB=$(bid "$N") AB=$(bid "$A")
unset DEBUGINFOD_URLS
export DEBUGINFOD_CACHE_PATH="$T/dcache"

# t0163's recorded machine, profile and snapshot; the references.
kmod_profile || exit 1
"$SYM" kallsyms --root "$T/root" -o snap > kall.out 2>&1
is "sym kallsyms --root: status 0, its release $REL" \
	"$? $(sed -n 3p snap)" "0 release $REL"
kmod_refs "$X" "$N" "$A"

# (a) debuginfod, by build ID.
mkdir served && cp "$X" "$N" served/
start_debuginfod "$T/served" "$XB" "$NB" || exit 1
DEBUGINFOD_URLS=$DEBUGINFOD_URL "$SYM" symbolize -v --store "$T/sta" \
	--kallsyms snap prof.raw -o a.sym 2> a.err
sed 's/^/# /' a.err
ok "(a) debuginfod: xfs from its .ko's DWARF: $($CHECK dwarf a.sym 1 \
xfs.addrs xfs.ref | head -1)" $CHECK dwarf a.sym 1 xfs.addrs xfs.ref
ok "... virtio_net too: $($CHECK dwarf a.sym 2 virtio_net.addrs \
virtio_net.ref | head -1)" \
	$CHECK dwarf a.sym 2 virtio_net.addrs virtio_net.ref
ok "... af_key (not served) and the kernel from the snapshot: $($CHECK \
names a.sym root k.addrs "$KT" 1 0,3 | head -1)" \
	$CHECK names a.sym root k.addrs "$KT" 1 0,3
ok "... the summary says dwarf for xfs and virtio_net, kallsyms for af_key" \
	sh -c "grep -Eq ' dwarf +\[xfs\]' a.err &&
	       grep -Eq ' dwarf +\[virtio_net\]' a.err &&
	       grep -Eq ' kallsyms +\[af_key\]' a.err"
# (a') the same server as symd's upstream: symd, with an empty store,
# fetches the two .ko by their build IDs and answers their frames with
# their DWARF; the CLI keeps the snapshot for af_key and the kernel.
start_symd --debuginfod-urls "$DEBUGINFOD_URL" || exit 1
"$SYM" symbolize -v --server "$SYMD_URL" --kallsyms snap prof.raw \
	-o s.sym 2> s.err
sed 's/^/# /' s.err
ok "(a') symd fetches xfs from its upstream debuginfod: $($CHECK dwarf \
s.sym 1 xfs.addrs xfs.ref | head -1)" $CHECK dwarf s.sym 1 xfs.addrs xfs.ref
ok "... and virtio_net: $($CHECK dwarf s.sym 2 virtio_net.addrs \
virtio_net.ref | head -1)" \
	$CHECK dwarf s.sym 2 virtio_net.addrs virtio_net.ref
ok "... af_key and the kernel from the snapshot: $($CHECK names s.sym root \
k.addrs "$KT" 1 0,3 | head -1)" $CHECK names s.sym root k.addrs "$KT" 1 0,3
is "... symd's store now holds the two .ko (HEAD /v1/debuginfo), not af_key" \
	"$(for b in $XB $NB $AB; do symd_curl -o /dev/null -w '%{http_code} ' \
		-I "$SYMD_URL/v1/debuginfo/$b"; done)" "200 200 404 "
stop_symd
stop_server "$DEBUGINFOD_PID"

# (b) a debug directory: xfs by name, virtio_net by build ID.
mkdir -p dbg/lib/modules/$REL/kernel/fs/xfs dbg/.build-id/$(echo "$NB" |
	cut -c1-2)
cp "$X" dbg/lib/modules/$REL/kernel/fs/xfs/
ln -s "$N" "dbg/.build-id/$(echo "$NB" | cut -c1-2)/$(echo "$NB" |
	cut -c3-).debug"
"$SYM" symbolize -v --store "$T/stb" --kallsyms snap \
	--debuginfo-path "$T/dbg" prof.raw -o b.sym 2> b.err
sed 's/^/# /' b.err
is "(b) --debuginfo-path: the release searched and whence, said once" \
	"$(grep -c 'searched by name' b.err) $(grep 'searched by name' b.err)" \
	"1 sym symbolize: kernel debug files searched by name for release $REL (the \
kallsyms snapshot's)"
ok "... xfs from lib/modules/$REL/.../xfs.ko: $($CHECK dwarf b.sym 1 \
xfs.addrs xfs.ref | head -1)" $CHECK dwarf b.sym 1 xfs.addrs xfs.ref
ok "... virtio_net from .build-id/: $($CHECK dwarf b.sym 2 \
virtio_net.addrs virtio_net.ref | head -1)" \
	$CHECK dwarf b.sym 2 virtio_net.addrs virtio_net.ref
ok "... af_key and the kernel from the snapshot: $($CHECK names b.sym \
root k.addrs "$KT" 1 0,3 | head -1)" \
	$CHECK names b.sym root k.addrs "$KT" 1 0,3
"$SYM" fold --all b.sym > b.fold
"$SYM" fold --all -q --store "$T/stb2" --kallsyms snap \
	--debuginfo-path "$T/dbg" prof.raw > b2.fold
run_compare "... sym fold symbolizes as sym symbolize does: the same \
$(wc -l < b.fold) folded stacks" cat b2.fold < b.fold

# (b') the same modules compressed whole, as distributions install them
# (xfs.ko.xz, virtio_net.ko.zst, af_key.ko.gz), all by name: libsym
# reads them.
mkdir -p dbgz/lib/modules/$REL/kernel/fs/xfs \
	dbgz/lib/modules/$REL/kernel/drivers/net \
	dbgz/lib/modules/$REL/kernel/net/key
xz -1 -T1 -c "$X" > dbgz/lib/modules/$REL/kernel/fs/xfs/xfs.ko.xz
zstd -q -c "$N" > dbgz/lib/modules/$REL/kernel/drivers/net/virtio_net.ko.zst
gzip -n -c "$A" > dbgz/lib/modules/$REL/kernel/net/key/af_key.ko.gz
"$SYM" symbolize -v --store "$T/stz" --kallsyms snap \
	--debuginfo-path "$T/dbgz" prof.raw -o z.sym 2> z.err
sed 's/^/# /' z.err
ok "(b') xfs from its .ko.xz: $($CHECK dwarf z.sym 1 xfs.addrs xfs.ref |
head -1)" $CHECK dwarf z.sym 1 xfs.addrs xfs.ref
ok "... virtio_net from its .ko.zst: $($CHECK dwarf z.sym 2 \
virtio_net.addrs virtio_net.ref | head -1)" \
	$CHECK dwarf z.sym 2 virtio_net.addrs virtio_net.ref
ok "... af_key from its .ko.gz: $($CHECK dwarf z.sym 3 af_key.addrs \
af_key.ref | head -1)" $CHECK dwarf z.sym 3 af_key.addrs af_key.ref

# (c) a wrong-build af_key.ko under the name.
mkdir -p bad/lib/modules/$REL/kernel/net/key good/lib/modules/$REL/extra
cp "$X" bad/lib/modules/$REL/kernel/net/key/af_key.ko
cp "$A" good/lib/modules/$REL/extra/af-key.ko
"$SYM" symbolize -v --store "$T/stc" --kallsyms snap \
	--debuginfo-path "$T/bad:$T/dbg" prof.raw -o c.sym 2> c.err
sed 's/^/# /' c.err
is "(c) a wrong-build af_key.ko: a warning naming it and both build IDs" \
	"$(grep 'warning' c.err)" \
	"sym symbolize: warning: '$T/bad/lib/modules/$REL/kernel/net/key/af_key.ko' has \
build ID $XB, not the profile's $AB for [af_key]: not used"
ok "... af_key and the kernel from the snapshot: $($CHECK names c.sym \
root k.addrs "$KT" 1 0,3 | head -1)" \
	$CHECK names c.sym root k.addrs "$KT" 1 0,3
ok "... xfs and virtio_net from the next directory's files" \
	sh -c "$CHECK dwarf c.sym 1 xfs.addrs xfs.ref &&
	       $CHECK dwarf c.sym 2 virtio_net.addrs virtio_net.ref"
"$SYM" symbolize -v --store "$T/std" --kallsyms snap \
	--debuginfo-path "$T/bad:$T/good" prof.raw -o d.sym 2> d.err
sed 's/^/# /' d.err
ok "... the right af-key.ko in a later directory: af_key from its DWARF \
($($CHECK dwarf d.sym 3 af_key.addrs af_key.ref | head -1)), the warning \
said too" sh -c "$CHECK dwarf d.sym 3 af_key.addrs af_key.ref &&
	grep -q 'warning: .*/bad/.*/af_key.ko. has build ID $XB' d.err"

# (d) no snapshot: the release is this host's uname -r; the kernel by
# name too (boot/vmlinux-REL).
UR=$(uname -r)
mkdir -p "dbg2/lib/modules/$UR/kernel/fs/xfs" dbg2/boot
cp "$X" "dbg2/lib/modules/$UR/kernel/fs/xfs/"
ln -s "$KDBG_V" "dbg2/boot/vmlinux-$UR"
"$SYM" symbolize -v --store "$T/ste" --debuginfo-path "$T/dbg2" prof.raw \
	-o e.sym 2> e.err
sed 's/^/# /' e.err
is "(d) no snapshot: the release is uname -r's, and said so" \
	"$(grep 'searched by name' e.err)" \
	"sym symbolize: kernel debug files searched by name for release $UR \
(this host's uname -r: neither a snapshot nor the profile says it)"
ok "... xfs from lib/modules/$UR/.../xfs.ko: $($CHECK dwarf e.sym 1 \
xfs.addrs xfs.ref | head -1)" $CHECK dwarf e.sym 1 xfs.addrs xfs.ref
python3 -c "
for l in open('k.addrs'): print(hex(int(l, 16) - 0x$KT))" > k.offs
# (sym addr2line takes the vmlinux's link-time addresses, _text + offset)
VT=$(nm "$KDBG_V" | sed -n 's/^\([0-9a-f]*\) T _text$/\1/p')
python3 -c "
for l in open('k.offs'): print(hex(int(l, 16) + 0x$VT))" > k.lnk
"$SYM" addr2line --store "$T/ste" -a -f -i --output-style=elfutils \
	-e "$KDBG_V" < k.lnk > k.ref
ok "... the kernel from boot/vmlinux-$UR's DWARF (sym addr2line's \
answers, checked against eu-addr2line's by t0161): $($CHECK dwarf e.sym 0 \
k.offs k.ref root $VT | head -1)" $CHECK dwarf e.sym 0 k.offs k.ref root $VT
ok "... virtio_net and af_key, with no file and no snapshot: missing" \
	sh -c "grep -Eq ' none +\[virtio_net\] .*: missing 300 ' e.err &&
	       grep -Eq ' none +\[af_key\] .*: missing 300 ' e.err"

# (e) no snapshot, but the profile's header says the release it was
# recorded on (sym record writes it): that release is searched, and xfs
# is found under (b)'s lib/modules/$REL/.
sed "1a release $REL" prof.raw > prof-rel.raw
"$SYM" symbolize -v --store "$T/stf" --debuginfo-path "$T/dbg" \
	prof-rel.raw -o f.sym 2> f.err
sed 's/^/# /' f.err
is "(e) no snapshot, the release in the profile: that one, and said so" \
	"$(grep 'searched by name' f.err)" \
	"sym symbolize: kernel debug files searched by name for release $REL \
(the profile's)"
ok "... xfs from lib/modules/$REL/.../xfs.ko: $($CHECK dwarf f.sym 1 \
xfs.addrs xfs.ref | head -1)" $CHECK dwarf f.sym 1 xfs.addrs xfs.ref
done_testing
