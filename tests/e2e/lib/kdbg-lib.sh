# kdbg-lib.sh - Debian's kernel debug files for the offline kernel tests
# (t0161, t0163, t0164), sourced after lib.sh:
#   fetch_dbg       vmlinux and the modules of KOS from the newest 6.1
#                   cloud-amd64 -dbg package, into $OUT (fixtures/build/kdbg,
#                   gitignored), once; 1 when they cannot be had
#   vmlinux_addrs   20,000 sampled .text addresses of vmlinux, once
#   sample FILE N SEED OUT   N instruction starts of FILE's .text
# KDBG_V and KDBG_MOD are set by kdbg_paths once fetched.
#   kdbg_setup      fetch_dbg and vmlinux_addrs (their output in
#                   $T/fetch.log), skipping the whole test, saying why,
#                   when the package cannot be had; then kdbg_paths
# For the module tests (t0163, t0164), after kdbg_paths:
#   kmod_files      X, N, A: the debug xfs, virtio_net and af_key .ko;
#                   CHECK (kmod_check.py), KD (kdwarf_check.py)
#   kmod_profile    in the current directory, a recorded machine with
#                   the three loaded (root/), their sampled addresses and
#                   a profile of them (prof.raw); sets KT and KBID
#   kmod_refs KO... M.ref (sym addr2line) and M.eu (eu-addr2line) of
#                   each module M, and a test point each: they agree
OUT=$SYM_ROOT/fixtures/build/kdbg
KOS="fs/xfs/xfs.ko drivers/net/virtio_net.ko net/key/af_key.ko"

# sample FILE N SEED OUT: N instruction starts of FILE's .text (objdump),
# drawn with random.Random(SEED), sorted; 1 when there are none.
sample() {
	objdump -d --no-show-raw-insn -j .text "$1" |
		sed -n 's/^ *\([0-9a-f]*\):	.*/0x\1/p' | python3 -c "
import random, sys
a = sorted(set(sys.stdin.read().split()), key=lambda x: int(x, 16))
a = random.Random($3).sample(a, min($2, len(a)))
print('\n'.join(sorted(a, key=lambda x: int(x, 16))))" > "$4" &&
	[ "$(wc -l < "$4")" -gt 1 ]
}

# fetch_dbg: vmlinux and the modules of KOS from the newest 6.1
# cloud-amd64 debug package, and vmlinux's sampled addresses, once; 1 when
# they cannot be had.
fetch_dbg() {
	mkdir -p "$OUT" && exec 9> "$OUT/.lock" && flock 9 || return 1
	[ -f "$OUT/done" ] && return 0
	pkg=$(apt-cache search --names-only \
		'^linux-image-6\.1\.0-[0-9]+-cloud-amd64-dbg$' | cut -d' ' -f1 |
		sort -V | tail -1)
	[ -n "$pkg" ] || { echo "no linux-image-6.1.0-*-cloud-amd64-dbg in apt"; return 1; }
	rm -rf "$OUT/deb" "$OUT/x" && mkdir -p "$OUT/deb" "$OUT/x" &&
	(cd "$OUT/deb" && apt-get download "$pkg") || return 1
	dpkg-deb --fsys-tarfile "$OUT"/deb/*.deb |
		tar x -C "$OUT/x" --wildcards './usr/lib/debug/boot/vmlinux-*' \
			'*/xfs.ko' '*/virtio_net.ko' '*/af_key.ko' || return 1
	rm -rf "$OUT/deb"
	echo "$pkg" > "$OUT/done"
}
# vmlinux_addrs: 20,000 sampled .text addresses of vmlinux, once.
vmlinux_addrs() {
	[ -s "$OUT/vmlinux.addrs" ] && return 0
	sample "$OUT"/x/usr/lib/debug/boot/vmlinux-* 20000 20261202 \
		"$OUT/vmlinux.addrs.tmp" &&
	mv "$OUT/vmlinux.addrs.tmp" "$OUT/vmlinux.addrs"
}
kdbg_setup() {
	{ fetch_dbg && vmlinux_addrs; } > "$T/fetch.log" 2>&1 ||
		plan_skip "no Debian linux-image -dbg package: $(tail -1 "$T/fetch.log")"
	kdbg_paths
}

kdbg_paths() {
	KDBG_V=$(echo "$OUT"/x/usr/lib/debug/boot/vmlinux-*)
	KDBG_MOD=$(echo "$OUT"/x/usr/lib/debug/lib/modules/*/kernel)
}

kmod_files() {
	CHECK="python3 $SYM_ROOT/tests/e2e/lib/kmod_check.py"
	KD="python3 $SYM_ROOT/tests/e2e/lib/kdwarf_check.py"
	X=$KDBG_MOD/fs/xfs/xfs.ko N=$KDBG_MOD/drivers/net/virtio_net.ko
	A=$KDBG_MOD/net/key/af_key.ko
}

# kmod_profile: root/ (kmod_check.py root: vmlinux moved by a KASLR slide,
# the three modules at chosen places with their real build IDs and .text
# symbols), M.addrs (300 sampled .text addresses of each module M),
# k.addrs (1,000 of vmlinux), KT (vmlinux's _text), KBID (its build ID)
# and prof.raw (the maps sym record writes for that machine, a frame at
# each address); 1 on failure.
kmod_profile() {
	$CHECK root "$KDBG_V" root 1e00000 ffffffffc0400000 "$X" "$N" "$A" ||
		return 1
	for k in "$X" "$N" "$A"; do
		sample "$k" 300 20261203 "$(basename "$k" .ko).addrs" ||
			return 1
	done
	head -1000 "$OUT/vmlinux.addrs" > k.addrs
	KT=$(nm "$KDBG_V" | sed -n 's/^\([0-9a-f]*\) T _text$/\1/p')
	KBID=$("$SYM" buildid "$KDBG_V" | cut -d' ' -f1)
	$CHECK raw root k.addrs "$KT" "$KBID" prof.raw xfs.addrs \
		virtio_net.addrs af_key.addrs
}

# kmod_refs KO...: the references of t0163 and t0164 (sym addr2line's
# answers, checked against eu-addr2line -j .text's as in t0161).
kmod_refs() {
	for k; do
		m=$(basename "$k" .ko)
		"$SYM" addr2line --no-cache -a -f -i --output-style=elfutils \
			-e "$k" < "$m.addrs" > "$m.ref"
		eu-addr2line -a -f -i -j .text -e "$k" < "$m.addrs" > "$m.eu"
		ok "$m: the reference is eu-addr2line's: $($KD eu "$SYM" "$k" \
"$m.addrs" "$m.ref" "$m.eu" | head -1)" \
			$KD eu "$SYM" "$k" "$m.addrs" "$m.ref" "$m.eu"
	done
}
