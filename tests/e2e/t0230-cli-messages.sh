#!/bin/sh
# t0230-cli-messages.sh - every `sym` command's --help and usage errors
# (issue 23, "Messages"):
#
#  - `sym X --help` exits 0 with "usage: sym X" on stdout, for every
#    command `sym help` lists and every `sym store` command;
#  - a bad option exits 2, and the message says "sym X:", never the bare
#    command name (getopt_long() prefixes argv[0]);
#  - every long option on an option line of a help text (a line that
#    starts with -) is one the command accepts: it is run before a bad
#    option, and getopt must not call it unrecognized or ambiguous;
#  - a view whose help offers folded stacks as input reads them, one whose
#    help does not (sym report, sym diff) refuses them with a reason.
. "$(dirname "$0")/lib/lib.sh"
[ -x "$SYM" ] || plan_skip "sym not built"
cd "$T" || exit 1

cmds=$("$SYM" help | awk '/^commands:/ { f = 1; next } f && /^   / { print $1 }')
stores="add rm ls info stats gc verify"
n=0
for c in $cmds; do n=$((n + 1)); done
for s in $stores; do n=$((n + 1)); done
plan $((n * 4 + 7))

# options CMD...: the long options on the option lines of CMD's help.
options() {
	"$SYM" "$@" --help | grep '^ *-' | grep -o -- '--[a-z][a-z0-9-]*' |
		sort -u
}

# walk NAME CMD...: the four points of one command.
walk() {
	_name=$1; shift
	"$SYM" "$@" --help > help.out 2> help.err
	_rc=$?
	is "$_name --help: exit 0, nothing on stderr" "$_rc:$(cat help.err)" "0:"
	ok "$_name --help: starts with 'usage: $_name'" \
		grep -q "^usage: $_name[ ]" help.out
	"$SYM" "$@" --zz-bad < /dev/null > bad.out 2> bad.err
	_rc=$?
	is "$_name --zz-bad: exit 2, '$_name:' first" \
		"$_rc:$(head -1 bad.err | cut -c1-$((${#_name} + 1)))" "2:$_name:"
	# Each option, then a bad one: an option that takes an argument
	# takes "--zz-bad", and the command goes on and fails somehow; only
	# getopt's verdict on the option itself matters here.
	_refused=
	for o in $(options "$@"); do
		timeout 10 "$SYM" "$@" "$o" --zz-bad < /dev/null > /dev/null \
			2> opt.err
		if grep -q -e "unrecognized option '$o'" \
			-e "option '$o' is ambiguous" \
			-e "unknown option '$o'" opt.err; then
			_refused="$_refused $o"
		fi
	done
	is "$_name: every option its help offers is accepted" "$_refused" ""
}

for c in $cmds; do
	walk "sym $c" "$c"
done
for s in $stores; do
	walk "sym store $s" store "$s"
done

# Folded input: offered in the help of the views that take it, and
# refused with a reason by the others.
printf 'main;work 3\nmain;idle 1\n' > st.folded
for c in fold tree flamegraph; do
	"$SYM" $c --help | grep -q '^Input (IN: [^;]*folded' &&
		"$SYM" $c st.folded > out.$c 2> err.$c || echo "$c" >> folded.bad
done
ok "fold, tree and flamegraph offer folded input and read it" \
	test ! -e folded.bad
"$SYM" report --help > rep.help
ok "sym report's help does not offer folded input (nor --from folded)" \
	sh -c "! grep -q -e '^Input (IN: [^;]*folded' -e 'profile or folded' rep.help"
"$SYM" report st.folded > rep.out 2> rep.err
is "sym report refuses it: exit 1" "$?" 1
ok "... saying why" grep -q "folded stacks are not read here" rep.err
"$SYM" report --from profile st.folded > rep.out 2> rep.err
is "sym report takes no --from (its help lists none): exit 2" "$?" 2
ok "... saying so" grep -q "sym report: unrecognized option '--from'" rep.err
ok "sym diff's help says it reads profiles only" \
	sh -c "'$SYM' diff --help | grep -q 'A and B are raw, symbolized raw or pprof profiles' &&
	       ! '$SYM' diff st.folded st.folded 2>/dev/null"
done_testing
