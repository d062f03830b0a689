# kdbg-lib.sh - Debian's kernel debug files for the offline kernel tests
# (t0161, t0163), sourced after lib.sh:
#   fetch_dbg       vmlinux and the modules of KOS from the newest 6.1
#                   cloud-amd64 -dbg package, into $OUT (fixtures/build/kdbg,
#                   gitignored), once; 1 when they cannot be had
#   vmlinux_addrs   20,000 sampled .text addresses of vmlinux, once
#   sample FILE N SEED OUT   N instruction starts of FILE's .text
# KDBG_V and KDBG_MOD are set by kdbg_paths once fetched.
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
kdbg_paths() {
	KDBG_V=$(echo "$OUT"/x/usr/lib/debug/boot/vmlinux-*)
	KDBG_MOD=$(echo "$OUT"/x/usr/lib/debug/lib/modules/*/kernel)
}
