#!/bin/sh
# t0160-kernel-ko.sh - kernel module frames named from the module's own
# .ko (issue 18, the kernel; docs/design.md, "Kernel modules"), offline,
# on real modules of a Debian linux-image package:
#  - an address of a .ko is an offset into its .text section; every
#    first, middle and last byte of each sized .text function of
#    objdump -t (binutils reads the symtab, not our code) gets, from
#    `sym addr2line -f`, the whole name of a function covering it, and
#    the same name as `eu-addr2line -f -j .text` (elfutils' own reading
#    of a relocatable file, offsets relative to a section);
#  - `sym symbolize --kallsyms SNAP --ko-dir DIR` names the module frames
#    of a profile from the .ko with the module's build ID, placed at the
#    .text base of a made-up snapshot (format 2), with the same names;
#    without --ko-dir they keep the snapshot's names;
#  - the table comes from symbols only (the packaged .ko has no DWARF;
#    t0161 reads the -dbg package's);
#  - `sym buildid` gives readelf's build ID of the .ko;
#  - a relocatable file that is not a kernel module (a plain .o) is still
#    refused with a message, and a cut .ko is refused, not read.
# The package (about 26 MB) is fetched once with apt-get download into
# fixtures/build/ko (gitignored) and only a few .ko are kept; the test is
# skipped, saying why, when it cannot be fetched.
. "$(dirname "$0")/lib/lib.sh"
need apt-get apt-cache dpkg-deb objdump readelf eu-addr2line python3 gcc flock
CHECK="python3 $SYM_ROOT/tests/e2e/lib/ko_check.py"
OUT=$SYM_ROOT/fixtures/build/ko
KOS="fs/xfs/xfs.ko drivers/net/virtio_net.ko net/key/af_key.ko"

# fetch_ko: the modules of KOS, from the newest 6.1 cloud-amd64 image
# package, once; 1 when it cannot be had.
fetch_ko() {
	mkdir -p "$OUT" && exec 9> "$OUT/.lock" && flock 9 || return 1
	[ -f "$OUT/done" ] && return 0
	pkg=$(apt-cache search --names-only \
		'^linux-image-6\.1\.0-[0-9]+-cloud-amd64$' | cut -d' ' -f1 |
		sort -V | tail -1)
	[ -n "$pkg" ] || { echo "no linux-image-6.1.0-*-cloud-amd64 in apt"; return 1; }
	rm -rf "$OUT/deb" && mkdir -p "$OUT/deb" &&
	(cd "$OUT/deb" && apt-get download "$pkg") || return 1
	rm -rf "$OUT/x" && mkdir -p "$OUT/x" &&
	dpkg-deb --fsys-tarfile "$OUT"/deb/*.deb |
		tar x -C "$OUT/x" --wildcards '*/xfs.ko' '*/virtio_net.ko' \
			'*/af_key.ko' || return 1
	rm -rf "$OUT/deb"
	echo "$pkg" > "$OUT/done"
}
fetch_ko > "$T/fetch.log" 2>&1 ||
	plan_skip "no Debian linux-image package: $(tail -1 "$T/fetch.log")"
MOD=$(echo "$OUT"/x/lib/modules/*/kernel)
plan 14
cd "$T" || exit 1

n=0
for k in $KOS; do
	K=$MOD/$k
	objdump -t "$K" > od
	$CHECK addrs od addrs
	cut -d' ' -f1 addrs | "$SYM" addr2line --no-cache -f -e "$K" |
		awk 'NR % 2 == 1' > sym.names
	cut -d' ' -f1 addrs | eu-addr2line -f -j .text -e "$K" |
		awk 'NR % 2 == 1' > eu.names
	ok "$(basename "$k") ($(cat "$OUT/done")): every .text function's \
first, middle and last byte named after it: $($CHECK compare addrs sym.names |
		head -1)" $CHECK compare addrs sym.names
	same_file "$(basename "$k"): the names are eu-addr2line -j .text's" \
		eu.names sym.names
	n=$((n + $(wc -l < addrs)))
done
echo "# $n addresses in all"

# sym symbolize --ko-dir: a made-up snapshot (format 2) places each
# module at a chosen address, its .text 0x1000 past its start, with one
# symbol of its own, so that only the .ko can give the right names.
FAKE=00112233445566778899aabbccddeeff00112233
printf 'sym-kallsyms 2\nkernel %s\nffffffff81000000 T _stext\n' $FAKE \
	> k.kallsyms
printf 'sym-raw 1\nperiod 1\nweight-unit samples\nmap 0 kernel -1 %s %s\n' \
	'ffff800000000000 ffffffffffffffff 0 ffff800000000000' \
	"$FAKE [kernel.kallsyms]" > k.raw
start=$((0xffffffffc0400000))
for k in $KOS; do
	K=$MOD/$k m=$(basename "$k" .ko)
	objdump -t "$K" > od && $CHECK addrs od "$m.addrs"
	text=$(printf %x $((start + 0x1000)))
	bid=$("$SYM" buildid "$K" | cut -d' ' -f1)
	printf 'module %s %x 1000000 %s %s\n%x t from_snapshot_%s [%s]\n' \
		"$m" $start "$bid" "$text" $start "$m" "$m" >> k.kallsyms
	$CHECK raw "$m.addrs" "$text" k.raw
	echo "$m $text" >> placed
	start=$((start + 0x1000000))
done
echo end >> k.kallsyms && echo end >> k.raw
"$SYM" symbolize -q --kallsyms k.kallsyms --ko-dir "$MOD" k.raw -o k.sym
while read -r m text; do
	ok "sym symbolize --ko-dir: $($CHECK symbolized k.sym "$m.addrs" \
		"$text" "$m" | head -1)" \
		$CHECK symbolized k.sym "$m.addrs" "$text" "$m"
done < placed
"$SYM" symbolize -q --kallsyms k.kallsyms k.raw -o k0.sym
ok "without --ko-dir, module frames are the snapshot's" \
	sh -c "! $CHECK symbolized k0.sym af_key.addrs \
		$(sed -n 's/^af_key //p' placed) af_key > /dev/null &&
	       grep -q '^fn [0-9]* from_snapshot_af_key%20\[af_key\]' k0.sym"

K=$MOD/fs/xfs/xfs.ko
echo 0x10 | "$SYM" addr2line --stats -f -e "$K" > /dev/null 2> st.err
is "a stripped .ko gives a table from its symbols only" \
	"$(sed -n 's/.*stats: table source: //p' st.err)" symbols

is "sym buildid of a .ko is readelf's" "$("$SYM" buildid "$K" |
	cut -d' ' -f1)" "$(readelf -n "$K" | sed -n 's/.*Build ID: //p')"

# A plain object file is relocatable too, but not a module.
printf 'int f(int x) { return x + 1; }\n' > o.c && gcc -c -o o.o o.c
"$SYM" addr2line -f -e o.o 0x0 > o.out 2> o.err
rc=$?
ok "a plain .o is refused with a message (status $rc: $(head -1 o.err))" \
	sh -c "[ $rc -ne 0 ] && grep -q 'unsupported kind of file' o.err"

head -c 4096 "$K" > cut.ko
"$SYM" addr2line -f -e cut.ko 0x10 > cut.out 2> cut.err
rc=$?
ok "a cut .ko is refused with a message (status $rc: $(head -1 cut.err))" \
	sh -c "[ $rc -ne 0 ] && [ -s cut.err ]"
done_testing
