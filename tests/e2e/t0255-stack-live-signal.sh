#!/bin/sh
# sym stack -p on a live program stopped inside a signal handler (pause()
# in a SIGUSR1 handler that interrupted a busy loop): the frames agree
# with eu-stack -i -s -p (whole names and paths, stack-compare.py), the
# signal trampoline's frame is __restore_rt at its exact PC, as eu-stack
# prints it (no "- 1"), and the interrupted loop follows it.  Until
# 3a19003 sym looked the trampoline up at PC - 1, on the NOP glibc puts
# before __restore_rt, and printed ?? there.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/core-lib.sh"
need eu-stack cc
[ -x "$SYM" ] || plan_skip "$SYM not built"
[ "$(id -u)" = 0 ] || plan_skip "not root: ptrace of another process"
plan 5

cat > "$T/sig.c" <<'EOT'
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
static void handler(int s) { (void)s; for (;;) pause(); }
__attribute__((noinline)) static void work(void)
{
	for (;;) { volatile int x = 0; x++; }
}
int main(int argc, char **argv)
{
	(void)argc;
	signal(SIGUSR1, handler);
	fclose(fopen(argv[1], "w"));
	work();
}
EOT
cc -O1 -g -o "$T/sig" "$T/sig.c" || bail "cannot build the fixture"
"$T/sig" "$T/ready" &
p=$!
at_exit "kill -9 $p 2>/dev/null"
while [ ! -e "$T/ready" ]; do sleep 0.05; done
kill -USR1 "$p"
# The handler is running once the thread sleeps in pause().
n=0
while [ "$(sed -n 's/^State:\t\([A-Z]\).*/\1/p' /proc/$p/status)" != S ] &&
      [ $n -lt 100 ]; do
	sleep 0.05
	n=$((n + 1))
done
kill -STOP "$p"
"$SYM" stack -i -p "$p" > "$T/live.sym" 2> "$T/live.err"
is "sym stack -p exits 0" "$?" 0
sed 's/^/# /' "$T/live.sym"
eu-stack -i -s -p "$p" > "$T/live.eu" 2>&1
python3 "$SYM_ROOT/tests/e2e/lib/stack-compare.py" "$T/live.sym" \
	"$T/live.eu" eu > "$T/cmp"
agree_point "agrees with eu-stack -i -s -p" "$T/cmp"
# frame N of FILE (sym stack's "#N PC NAME ..."): "PC NAME".
frame() { awk -v n="#$2" '$1 == n { print $2, $3; exit }' "$1"; }
pc=$(awk '$1 == "#2" { print $2; exit }' "$T/live.eu")
is "the frame above handler is __restore_rt" "$(frame "$T/live.sym" 2)" \
	"$pc __restore_rt"
is "eu-stack prints it at its exact PC too" \
	"$(awk '$1 == "#2" { print $3 }' "$T/live.eu")" __restore_rt
is "then the interrupted work()" "$(frame "$T/live.sym" 3 | cut -d' ' -f2)" work
kill -9 "$p"
