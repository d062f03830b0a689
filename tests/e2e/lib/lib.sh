# lib.sh - shared helpers for the end-to-end tests (sourced, not run).
#
#   . "$(dirname "$0")/lib/lib.sh"
#   plan 3                     (or: plan_skip "why")
#   ok "description" cmd...    one TAP point from a command's status
#   is "desc" "$got" "$want"   one TAP point from a string comparison
#   run_compare "desc" cmd...  <<'EOF'  diff stdout+stderr against stdin
#   same_file "desc" WANT GOT  one TAP point: two files equal (a peer's
#                              output and ours), the diff if not
#   fixture NAME               path of a fixture binary (built on demand)
#   need CMD...                skip the whole test when a command is missing
#   $T                         a private temporary directory, removed at exit
#                              (kept, and its path printed on stderr, when
#                              SYM_TEST_KEEP=1: to look at a failure's files)
#   at_exit CMD                run CMD at exit (servers to stop)
#   tap_points LABEL CMD...    a checker's "ok - "/"not ok - " lines as TAP
#   $SYM                       the sym binary under test
#   $SYM_STORE                 exported: the test's own store, $T/.store
#
# Tests print TAP and run under prove; they never need a network.

SYM_ROOT=${SYM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
SYM=${SYM:-$SYM_ROOT/bin/sym}
SHARED=${SHARED:-$SYM_ROOT/../shared}
T=$(mktemp -d "${TMPDIR:-/tmp}/sym-test.XXXXXX")
# at_exit CMD: run CMD at exit (last added first), before $T goes.
_exit_hooks=
at_exit() { _exit_hooks="$1; $_exit_hooks"; }
if [ "${SYM_TEST_KEEP:-0}" = 1 ]; then
	trap 'eval "$_exit_hooks"; echo "kept: $T" >&2' EXIT
else
	trap 'eval "$_exit_hooks"; rm -rf "$T"' EXIT
fi
trap 'exit 130' INT TERM
# sym addr2line caches tables in a store: every test gets its own, so no
# test reads or writes ~/.cache/sym, and repeated runs exercise the cache.
export SYM_STORE="$T/.store"
_tap_n=0
_tap_fail=0
export LC_ALL=C
# Python: Debian's /usr/bin/python3 when a shim comes first on PATH.
# This machine's kind has pyenv's, which costs 0.34 s a start against
# Debian's 0.03 s, and the suite starts python3 thousands of times (t0203
# alone: 4 per fixture, 84 fixtures); the tests need only the standard
# library, which Debian's has.
if [ -x /usr/bin/python3 ] &&
   [ "$(command -v python3)" != /usr/bin/python3 ] &&
   mkdir "$T/.bin" && ln -s /usr/bin/python3 "$T/.bin/python3"; then
	PATH=$T/.bin:$PATH
fi

plan() { echo "1..$1"; }
plan_skip() { echo "1..0 # SKIP $*"; exit 0; }

_tap() {
	_tap_n=$((_tap_n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $_tap_n - $2"
	else
		_tap_fail=$((_tap_fail + 1))
		echo "not ok $_tap_n - $2"
		# (and on stderr, which prove shows when not verbose: a
		# failure in CI's log then says which point and why)
		echo "not ok $_tap_n - $2" >&2
	fi
}

# _tap_todo FAILED DESC CAUSE: a point kept strict whose failure is open
# work (CAUSE says which); TAP's TODO keeps it from failing the file.
_tap_todo() {
	_tap_n=$((_tap_n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $_tap_n - $2 # TODO $3"
	else
		echo "not ok $_tap_n - $2 # TODO $3"
	fi
}

ok() {
	_d=$1; shift
	if "$@" > "$T/.ok.out" 2>&1; then
		_tap 0 "$_d"
	else
		_tap 1 "$_d"
		{ echo "#   command: $*"
		  sed 's/^/#   /' "$T/.ok.out" | head -20; } | tee -a /dev/stderr
	fi
}

is() {
	if [ "$2" = "$3" ]; then
		_tap 0 "$1"
	else
		_tap 1 "$1"
		printf '#   got:  %s\n#   want: %s\n' "$2" "$3" | tee -a /dev/stderr
	fi
}

skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n # skip $*"; }

run_compare() {
	_d=$1; shift
	cat > "$T/.expected"
	"$@" > "$T/.actual" 2>&1
	if diff -u "$T/.expected" "$T/.actual" > "$T/.diff"; then
		_tap 0 "$_d"
	else
		_tap 1 "$_d"
		sed 's/^/#   /' "$T/.diff" | head -40
	fi
}

same_file() {
	if [ ! -s "$2" ]; then
		_tap 1 "$1 (the expected output is empty)"
	elif cmp -s "$2" "$3"; then
		_tap 0 "$1"
	else
		_tap 1 "$1"
		diff -u "$2" "$3" | head -40 | sed 's/^/#   /' | tee -a /dev/stderr
	fi
}

need() {
	for _c; do
		command -v "$_c" >/dev/null 2>&1 || plan_skip "$_c not installed"
	done
}

# fixture NAME: path of fixtures/build/NAME, building the fixtures first
# when needed (fixtures/build.sh is idempotent and locks).
fixture() {
	"$SYM_ROOT/fixtures/build.sh" >&2 || return 1
	echo "$SYM_ROOT/fixtures/build/$1"
}

# tap_points LABEL CMD...: run a checker that prints "ok - WHAT" and
# "not ok - WHAT" lines; each becomes a TAP point "LABEL: WHAT", other
# lines diagnostics.  A checker that prints no point is one failed point.
tap_points() {
	_lb=$1; shift
	"$@" > "$T/.points" 2>&1
	_n=$_tap_n
	while IFS= read -r _l; do
		case $_l in
		"ok - "*) _tap 0 "$_lb: ${_l#ok - }" ;;
		"not ok - "*) _tap 1 "$_lb: ${_l#not ok - }" ;;
		*) echo "# $_l" ;;
		esac
	done < "$T/.points"
	[ "$_tap_n" -gt "$_n" ] || _tap 1 "$_lb: the checker ran: $*"
}

done_testing() {
	[ "$_tap_fail" = 0 ]
}

# oracle_point DESC ARGS...: one TAP point from tests/oracle.py ARGS (its
# exit status); its summary and any disagreements become TAP diagnostics.
oracle_point() {
	_d=$1; shift
	SYM="$SYM" python3 "$SYM_ROOT/tests/oracle.py" "$@" > "$T/.oracle.out" 2>&1
	_rc=$?
	_tap "$_rc" "$_d"
	sed 's/^\([^#]\)/# \1/' "$T/.oracle.out"
}

# store_flip DIR: flip one byte in the middle of every copy of a stored
# table in DIR/data.mdb (LMDB may hold an old copy too); prints how many.
store_flip() {
	python3 - "$1/data.mdb" <<'EOF'
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
n, i = 0, b.find(b"SYMTAB\r\n")
while i >= 0:
    size = struct.unpack_from("<I", b, i + 20)[0]
    if 128 < size <= len(b) - i:
        j = i + 128 + (size - 128) // 2
        b[j] ^= 0x55
        n += 1
    i = b.find(b"SYMTAB\r\n", i + 8)
open(p, "r+b").write(b)
print(n)
EOF
}
