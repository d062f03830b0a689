# lib.sh - what bench.sh, symd-bench.sh, symd-attack-bench.sh and
# views-bench.sh, offcpu-bench.sh and offcpu-callgrind.sh share (sourced,
# not run).
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

# median V...: the median (the mean of the middle two for an even count);
# 0 for none.
median() {
	printf '%s\n' "$@" | awk 'NF { v[n++] = $1 } END {
		if (!n) { print 0; exit }
		for (i = 1; i < n; i++)	# insertion sort: a handful of values
			for (j = i; j > 0 && v[j - 1] + 0 > v[j] + 0; j--) {
				t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
			}
		print (n % 2) ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2
	}'
}

# append_report HEADING SECTION REPORT: append the file SECTION, which
# starts with the line HEADING, to REPORT, replacing the section an
# earlier run of the same script left there (it is the file's last).
# Blank lines are held back, so that none pile up at the end.
append_report() {
	if [ -f "$3" ]; then
		awk -v h="$1" '$0 == h { exit }
			/^$/ { nb++; next }
			{ while (nb > 0) { print ""; nb-- } print }' \
			"$3" > "$3.prev"
		cat "$3.prev" > "$3"
		rm -f "$3.prev"
		echo >> "$3"
	fi
	cat "$2" >> "$3"
}

# kv KEY LINE: the value of KEY=... in a symd-load line.
kv() {
	echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -1
}

# proc_cpu PID: the CPU time of PID so far (user + system, all threads),
# in clock ticks (getconf CLK_TCK a second).
proc_cpu() {
	sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# problems FILE: a "#### Problems" section of FILE's lines, one item each;
# nothing when FILE is empty.
problems() {
	[ -s "$1" ] || return 0
	echo "#### Problems"
	echo
	sed 's/^/- /' "$1"
	echo
}

# publish HEADING SECTION REPORT: append_report, then print SECTION and
# where it went.
publish() {
	append_report "$1" "$2" "$3"
	echo
	cat "$2"
	echo "report: $3 ($2)"
}

# text_addrs FILE N: N seeded addresses, uniform over FILE's executable
# sections (lazy-bench.sh, gsym-bench.sh).
text_addrs() {
	python3 - "$1" "$2" <<'EOF'
import random, subprocess, sys
rng = random.Random(19)
secs = []
for l in subprocess.run(["readelf", "-SW", sys.argv[1]], capture_output=True,
                        text=True).stdout.splitlines():
    f = l.replace("[ ", "[").split()
    if len(f) > 7 and f[0].startswith("[") and "X" in f[7] and int(f[5], 16):
        secs.append((int(f[3], 16), int(f[5], 16)))
tot = sum(s for _, s in secs)
for _ in range(int(sys.argv[2])):
    x = rng.randrange(tot)
    for a, s in secs:
        if x < s:
            print("%#x" % (a + x))
            break
        x -= s
EOF
}

# wait_for CMD...: up to 30 s for CMD to succeed (offcpu-bench.sh,
# offcpu-callgrind.sh).
wait_for() {
	for _i in $(seq 600); do
		"$@" && return 0
		sleep 0.05
	done
	note "timed out: $*"
	return 1
}
# stopped PID: PID is stopped; attached PID: PID holds a BPF link.
stopped() { grep -q '^State:.*T' /proc/"$1"/status; }
attached() { grep -qs '^link_type:' /proc/"$1"/fdinfo/*; }
