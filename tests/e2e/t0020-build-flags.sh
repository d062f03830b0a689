#!/bin/sh
# t0020-build-flags.sh - the Makefile gives each part its dependencies'
# compile flags: symd/ sources libevent's, tools/ sources libcurl's, and
# libsym neither.  Debian's own libevent.pc and libcurl.pc have empty
# Cflags, so stub .pc files with a marker define stand in for them; the
# build is a dry run (make -n), which writes nothing.
. "$(dirname "$0")/lib.sh"
need make pkg-config
plan 4

for p in libevent libcurl; do
	pc=$(pkg-config --variable=pcfiledir "$p" 2>/dev/null)/$p.pc
	[ -f "$pc" ] || plan_skip "no $p.pc"
	mark=SYM_MARKER_$(echo "$p" | tr a-z A-Z)
	sed "s|^Cflags:.*|Cflags: -D$mark|" "$pc" > "$T/$p.pc"
done

# -B: print the commands even when the objects are up to date.
PKG_CONFIG_PATH=$T${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} \
	make -C "$SYM_ROOT" --no-print-directory -n -B V=1 \
	build/symd/api.o build/tools/client.o build/tools/agent/perf.o \
	build/libsym/elf.o > "$T/cmds" 2>&1
# The marker count on the compile line of object $1.
marks() { grep -e " -o build/$1 " "$T/cmds" | grep -o "SYM_MARKER_$2" | wc -l; }
is "symd/api.c is compiled with libevent's Cflags" \
	"$(marks symd/api.o LIBEVENT)" 1
is "tools/client.c is compiled with libcurl's Cflags" \
	"$(marks tools/client.o LIBCURL)" 1
is "so is tools/agent/perf.c (tools/ and its folders)" \
	"$(marks tools/agent/perf.o LIBCURL)" 1
is "libsym/elf.c sees neither" "$(marks libsym/elf.o '[A-Z]*')" 0
done_testing
