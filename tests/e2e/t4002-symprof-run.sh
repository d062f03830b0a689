#!/bin/sh
# sym run and libsymprof's life cycle: usage errors, the environment the
# command gets (and only it), bad settings that leave the program
# unprofiled but running, an existing handler on the requested signal,
# and the profile written however the program ends: exit(), _exit(),
# abort(), a fault, SIGTERM from outside, and SIGKILL after a periodic
# write.  The exit status is always the program's own.  (That make
# install puts libsymprof.so where the installed sym run finds it is
# t0010-install's.)
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symprof-lib.sh"
plan 29
ulimit -c 0

ok "--help" "$SYM" run --help
"$SYM" run > /dev/null 2>&1
is "no command: usage error" "$?" 2
for bad in "-F 0" "-F 10001" "-F abc" "--mode fast" "-o x%d.raw" "--interval -1"; do
	"$SYM" run $bad -- true > /dev/null 2> "$T/err"
	is "'$bad' is a usage error" "$? $(grep -c 'sym run: ' "$T/err")" "2 1"
done
"$SYM" run -- "$T/nonexistent" 2> "$T/err"
is "a missing command: 127 and a message" \
	"$? $(grep -c "cannot run '$T/nonexistent'" "$T/err")" "127 1"
SYM_LIBSYMPROF=$T/nolib.so "$SYM" run -- true 2> "$T/err"
is "SYM_LIBSYMPROF naming nothing: 1 and a message" \
	"$? $(grep -c 'SYM_LIBSYMPROF' "$T/err")" "1 1"

# The command gets the preload and SYMPROF_PID = its own pid; its exit
# status comes back.
cd "$T" || exit 1
"$SYM" run -o env.raw -- sh -c 'echo "$$ $SYMPROF_PID $SYMPROF_OUT $SYMPROF_HZ"; echo "$LD_PRELOAD"; exit 3' > env.out
is "the command's exit status" "$?" 3
is "SYMPROF_PID is the command's pid, -o is made absolute" \
	"$(head -1 env.out | awk '{print ($1 == $2) " " $3 " " $4}')" "1 $T/env.raw 99"
is "LD_PRELOAD names libsymprof.so" \
	"$(tail -1 env.out)" "$(cd "$SYM_ROOT/lib" && pwd -P)/libsymprof.so"
sp_check "a shell's profile parses" env.raw
is "libsymprof's header says the kernel's release" \
	"$(awk '$1 == "release" { print $2 }' env.raw)" "$(uname -r)"

cat > "$T/ends.c" <<'EOC'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static volatile unsigned long sink;
int main(int argc, char **argv)
{
	unsigned long x = 1, n = argc > 2 ? strtoul(argv[2], 0, 10) : 100;
	for (unsigned long i = 0; i < n * 1000000ul; i++)
		x = x * 6364136223846793005ul + 1;
	sink = x;
	printf("done\n");
	fflush(stdout);
	switch (argv[1][0]) {
	case 'x': exit(5);
	case 'e': _exit(4);
	case 'a': abort();
	case 's': *(volatile int *)(long)sink = 1; break;
	}
	return 0;
}
EOC
ok "ends.c builds" cc $SP_CFLAGS -o "$T/ends" "$T/ends.c"
for e in "x 5" "e 4" "a 134" "s 139"; do
	set -- $e
	rm -f "end-$1.raw"
	sp_run -F 250 -o "end-$1.raw" -- "$T/ends" "$1" > /dev/null 2>&1
	st=$?
	"$RAWCHECK" "end-$1.raw" > "$T/rc" 2>&1
	is "end '$1': status $2, and the profile is written and parses" \
		"$st $? $(grep -c 'samples=0 ' "$T/rc")" "$2 0 0"
done

# SIGTERM from outside: written, then dead of SIGTERM.
"$SYM" run -F 250 -o term.raw -- "$T/ends" x 100000 > /dev/null 2>&1 &
pid=$!
sleep 1
kill -TERM "$pid"
wait "$pid"
st=$?
"$RAWCHECK" term.raw > "$T/rc" 2>&1
is "SIGTERM: status 143, and the profile is written and parses" "$st $?" "143 0"

# Periodic writes: a valid file appears while the program runs; after a
# SIGKILL the last one stays.
"$SYM" run -F 250 --interval 1 -o period.raw -- "$T/ends" x 100000 > /dev/null 2>&1 &
pid=$!
i=0
while [ ! -f period.raw ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
sp_check "--interval 1: a profile is written while the program runs" period.raw
kill -KILL "$pid"
wait "$pid"
sp_check "and after SIGKILL the last one is whole" period.raw
is "no temporary file is left" "$(ls | grep -c '\.tmp\.')" 0

# Bad settings given directly: a message, the program runs unprofiled.
LIB=$SYM_ROOT/lib/libsymprof.so
for v in "SYMPROF_HZ=abc" "SYMPROF_MODE=fast" "SYMPROF_SIGNAL=SIGSEGV" \
	 "SYMPROF_OUT=$T/none/x.raw"; do
	env LD_PRELOAD="$LIB" SYMPROF_OUT="$T/bad.raw" "$v" "$T/ends" r 1 \
		> "$T/out" 2> "$T/err"
	is "$v: the program runs, one message, no profile" \
		"$? $(cat "$T/out") $(grep -c '^libsymprof: .*not profiling' "$T/err") $(ls bad.raw 2>/dev/null)" \
		"0 done 1 "
done
# The signal asked for is taken: refuse rather than clobber.
sh -c 'trap "" PROF; exec env LD_PRELOAD="$0" SYMPROF_SIGNAL=SIGPROF SYMPROF_OUT="$1" "$2" r 1' \
	"$LIB" "$T/sig.raw" "$T/ends" > "$T/out" 2> "$T/err"
is "SYMPROF_SIGNAL=SIGPROF while SIGPROF is ignored: refused, program runs" \
	"$? $(cat "$T/out") $(grep -c 'already has a handler or is ignored' "$T/err") $(ls sig.raw 2>/dev/null)" \
	"0 done 1 "

done_testing
