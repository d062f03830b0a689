# symb-lib.sh - the program of the symbolization tests (sourced after
# lib.sh): fixtures/src/symb_prog.c built here with gcc -O2 -g, its debug
# file kept beside a stripped copy, and the ELF vaddrs of its frames.
# It is built as Debian builds its packages: from a build directory, with
# a relative source path and -fdebug-prefix-map, so DW_AT_comp_dir is
# ./build and the source is ./build/../symb_prog.c, a whole path that
# must reach every output as the peers spell it.
#
#   symb_build     builds $T/prog.full (unstripped), $T/prog.debug and
#                  $T/prog (stripped, with a .gnu_debuglink); sets
#                  BID              the build ID
#                  leaf_pcs         every instruction of leaf(), hex
#                  r_middle r_main  the return addresses after middle()'s
#                                   call of leaf() and main()'s of middle()
#                  returns non-zero when the build failed ($T/build.log)

# ret_after FUNC CALLEE: the address after FUNC's call of CALLEE in $dis.
ret_after() {
	echo "$dis" | awk -v f="<$1>:" -v c="<$2>" '$2 == f { on = 1; next }
		on && /^$/ { exit }
		on && want { sub(":", "", $1); print $1; exit }
		on && $2 == "call" && $4 == c { want = 1 }'
}

symb_build() {
	cp "$SYM_ROOT/fixtures/src/symb_prog.c" "$T/symb_prog.c" &&
	mkdir -p "$T/build" &&
	(cd "$T/build" && gcc -O2 -g -fdebug-prefix-map="$T=." \
		-o ../prog.full ../symb_prog.c) > "$T/build.log" 2>&1 &&
	(cd "$T" && objcopy --only-keep-debug prog.full prog.debug &&
		objcopy --strip-all --add-gnu-debuglink=prog.debug prog.full \
			prog) >> "$T/build.log" 2>&1 || return 1
	BID=$("$SYM" buildid "$T/prog" | cut -d' ' -f1)
	dis=$(objdump -d --no-show-raw-insn "$T/prog.full")
	leaf_pcs=$(echo "$dis" | awk '/^[0-9a-f]+ <leaf>:/ { on = 1; next }
		on && /^$/ { exit } on { sub(":", "", $1); print $1 }')
	r_middle=$(ret_after middle leaf)
	r_main=$(ret_after main middle)
	[ -n "$BID" ] && [ -n "$leaf_pcs" ] && [ -n "$r_middle" ] &&
		[ -n "$r_main" ]
}
