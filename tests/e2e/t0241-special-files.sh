#!/bin/bash
# t0241-special-files.sh - a FIFO (with no writer), a character device
# (/dev/null) and a directory, named where an ELF or debug file is
# expected (issue 24, item 6): sym addr2line -e and --debug-file, sym
# buildid, sym store add, and the compat addr2line and llvm-symbolizer
# front ends.  Each must answer at once (under `timeout 10`: a FIFO
# opened without O_NONBLOCK waits for a writer for ever) with a message
# naming the file and why, and the status its peer gives: 1, or 0 with
# "??" answers for llvm-symbolizer, which goes on to the next input.
. "$(dirname "$0")/lib/lib.sh"
need gcc mkfifo timeout
[ -x "$SYM" ] || plan_skip "$SYM not built"
A2L=$SYM_ROOT/bin/compat/addr2line
LS=$SYM_ROOT/bin/compat/llvm-symbolizer
[ -x "$A2L" ] && [ -x "$LS" ] || plan_skip "bin/compat not built"
[ -c /dev/null ] || plan_skip "/dev/null is not a character device"
plan 21

cd "$T" || exit 1
echo 'int main(void) { return 0; }' > m.c
gcc -g -o m m.c || { echo "Bail out! cannot build m"; exit 1; }
mkfifo fifo || { echo "Bail out! cannot make a FIFO"; exit 1; }
mkdir dir

# refuse DESC RC PATTERN CMD...: CMD ends within 10 s with status RC and
# a line of stderr matching PATTERN (grep -E).
refuse() {
	_d=$1 _rc=$2 _p=$3
	shift 3
	timeout 10 "$@" > "$T/.out" 2> "$T/.err" < /dev/null
	_got=$?
	if [ "$_got" = 124 ]; then
		_tap 1 "$_d: still blocked after 10 s"
	elif [ "$_got" != "$_rc" ] || ! grep -Eq "$_p" "$T/.err"; then
		_tap 1 "$_d: status $_rc and /$_p/"
		echo "#   status $_got, stderr:"
		sed 's/^/#   /' "$T/.err" | head -5
	else
		_tap 0 "$_d: status $_rc, $(head -1 "$T/.err")"
	fi
}

for f in fifo /dev/null dir; do
	case $f in
	dir) why='Is a directory' gnu="'$f' is a directory" ;;
	*) why='not a regular file' gnu="'$f' is not an ordinary file" ;;
	esac
	refuse "sym addr2line -e $f" 1 "^sym addr2line: '$f': $why\$" \
		"$SYM" addr2line -e "$f" 0x10
	refuse "sym addr2line --debug-file=$f" 1 \
		"cannot open debug file '$f': $why" \
		"$SYM" addr2line -e m --debug-file="$f" 0x10
	refuse "sym buildid $f" 1 "^sym buildid: '$f': $why\$" \
		"$SYM" buildid "$f"
	refuse "sym store add $f" 1 "^sym store add: '$f': $why\$" \
		"$SYM" store add "$f"
	refuse "compat addr2line -e $f" 1 "Warning: $gnu\$" \
		"$A2L" -e "$f" 0x10
	refuse "compat llvm-symbolizer --obj=$f" 0 \
		"^LLVMSymbolizer: error reading file: " \
		"$LS" --obj="$f" 0x10
done
# llvm-symbolizer goes on after such a file: the next line is answered.
printf '%s 0x10\nm 0x%s\n' fifo "$(nm m | awk '$3 == "main" { print $1 }')" \
	> in.txt
timeout 10 "$LS" --functions=linkage < in.txt > ls.out 2> ls.err
is "llvm-symbolizer: a FIFO on stdin, then a good line" \
	"$?:$(sed -n 4p ls.out)" "0:main"
is "llvm-symbolizer: one error line for the FIFO" "$(wc -l < ls.err)" 1
is "no process is left reading the FIFO (a writer still waits)" \
	"$(timeout 1 sh -c 'echo x > fifo'; echo $?)" 124

done_testing
