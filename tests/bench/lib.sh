# lib.sh - what bench.sh and symd-bench.sh share (sourced, not run).
# The caller defines note() (one line on stderr).

# debug_file F: the separate debug file of F found by build ID, or nothing.
debug_file() {
	b=$(readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: *//p' | head -1)
	[ -n "$b" ] || return 0
	d=/usr/lib/debug/.build-id/$(echo "$b" | cut -c1-2)/$(echo "$b" | cut -c3-).debug
	[ -r "$d" ] && echo "$d"
	return 0
}

# usable_input NAME F: F is readable and has DWARF (inside, or in a debug
# file found by build ID); else say why it is skipped and return 1.  Sets
# dbg to the debug file, or empty.
usable_input() {
	if [ ! -r "$2" ]; then
		note "skipping $1: no $2"
		return 1
	fi
	dbg=$(debug_file "$2")
	if [ -z "$dbg" ] && ! readelf -S "$2" | grep -q '\.debug_info'; then
		note "skipping $1: no debug info for $2"
		return 1
	fi
	return 0
}
