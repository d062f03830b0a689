# views-lib.sh - the program and the profile of known shape that the
# views' tests (t5300-views.sh, t5310-views-pprof.sh) read.  Source it
# after lib.sh; it needs gcc, objdump, nm and addr2line.
#
#   views_build     build fixtures/src/views_prog.c (gcc -O2 -g) into
#                   $T/prog, find its addresses; returns non-zero when
#                   something is missing
#   views_profile   write $T/in.raw: 1,045 samples of known stacks at
#                   those addresses (see t5300-views.sh)

# ret_after() of symb-lib.sh finds return addresses in $dis.
. "$SYM_ROOT/tests/e2e/lib/symb-lib.sh"

views_build() {
	cp "$SYM_ROOT/fixtures/src/views_prog.c" "$T/views_prog.c" &&
	(cd "$T" && gcc -O2 -g -o prog views_prog.c) > "$T/build.log" 2>&1 ||
		return 1
	BID=$("$SYM" buildid "$T/prog" | cut -d' ' -f1)
	dis=$(objdump -d --no-show-raw-insn "$T/prog")
	hot=$(_views_sym hot)
	warm=$(_views_sym warm)
	# A PC of hot() inside the inlined mix(): addr2line -i says mix,
	# then hot.
	hot_inl=
	for _pc in $(echo "$dis" | awk '/^[0-9a-f]+ <hot>:/ { on = 1; next }
		on && /^$/ { exit } on { sub(":", "", $1); print $1 }'); do
		if [ "$(addr2line -i -f -e "$T/prog" "0x$_pc" | awk 'NR % 2' | tr '\n' ' ')" = "mix hot " ]; then
			hot_inl=$_pc
			break
		fi
	done
	r_ph=$(ret_after parse hot)
	r_pw=$(ret_after parse warm)
	r_ch=$(ret_after compute hot)
	r_mp=$(ret_after main parse)
	r_mc=$(ret_after main compute)
	r_mw=$(ret_after main warm)
	test -n "$hot_inl" -a -n "$hot" -a -n "$warm" -a -n "$r_ph" \
		-a -n "$r_pw" -a -n "$r_ch" -a -n "$r_mp" -a -n "$r_mc" \
		-a -n "$r_mw" -a \
		"$(addr2line -f -e "$T/prog" "0x$hot" | head -1)" = hot
}

# _views_sym NAME: the address of symbol NAME, hex without 0x.
_views_sym() {
	nm "$T/prog" | awk -v s="$1" '$3 == s { print $1 }' | sed 's/^0*//'
}

# Weights are 1,000,000 ns a sample (the period), so --value weight gives
# the same shares.
views_profile() {
	cat > "$T/in.raw" <<EOF
sym-raw 1
host testhost
event cpu-clock
period 1000000
weight-unit ns
samples 1045
process 100 0 100 views%20prog
thread 100 100 views%20prog
thread 100 101 worker
map 0 file 100 555555554000 555555556000 0 0 $BID $T/prog
map 1 anon 100 7f2000000000 7f2000010000 0 0 - [anon:jit]
map 2 file 100 7f1000000000 7f1000010000 0 0 deadbeef00112233445566778899aabbccddeeff /opt/gone/libgone.so
map 3 kernel -1 ffff800000000000 ffffffffffffffff 0 ffff800000000000 0011223344556677 [kernel.kallsyms]
stack 400 400000000 100 100 - p0:$hot_inl r0:$r_ph r0:$r_mp
stack 300 300000000 100 101 - p0:$hot r0:$r_ch r0:$r_mc
stack 170 170000000 100 100 - p0:$warm r0:$r_pw r0:$r_mp
stack 110 110000000 100 101 - p0:$warm r0:$r_mw
stack 30 30000000 100 100 - p0:$hot_inl r0:$r_ch r0:$r_mc
stack 20 20000000 100 100 - p3:ffffffff81000100 r3:ffffffff81000200 p0:$warm r0:$r_mw
stack 5 5000000 100 100 - p1:100 r0:$r_mp
stack 7 7000000 100 100 - p2:4321 r0:$r_mw
stack 3 3000000 100 100 -
end
EOF
}
