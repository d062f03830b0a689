#!/bin/sh
# t1040-parallel.sh - `sym addr2line` and `sym lookup` answer stdin on
# worker threads (--threads, tools/pool.c): the output must be byte for
# byte the one-thread output in every style, from the store and from a
# table in memory; a stored table found corrupt halfway is rebuilt
# (addr2line) or refused (lookup) exactly as on one thread; and a
# co-process still gets each answer before it sends the next address.
. "$(dirname "$0")/lib/lib.sh"
need python3 readelf

libc=/lib/x86_64-linux-gnu/libc.so.6
[ -f "$libc" ] || plan_skip "no $libc"
id=$(readelf -n "$libc" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p')
[ -f "/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug" ] ||
	plan_skip "no debug file for $libc (install libc6-dbg)"
plan 14

# 20,000 addresses in .text, unsorted, some repeated: five batches.
python3 - "$libc" > "$T/addrs" <<'EOF'
import random, subprocess, sys
out = subprocess.run(["readelf", "-SW", sys.argv[1]], capture_output=True,
                     text=True, check=True).stdout
for line in out.splitlines():
    f = line.replace("[ ", "[").split()
    if len(f) > 5 and f[1] == ".text":
        start, size = int(f[3], 16), int(f[5], 16)
r = random.Random(20261130)
v = [r.randrange(start, start + size) for _ in range(18000)]
v += r.sample(v, 2000)
r.shuffle(v)
print("\n".join("%x" % a for a in v))
EOF
is "20,000 addresses" "$(wc -l < "$T/addrs")" 20000

S=$T/store
"$SYM" store add --store "$S" "$libc" > /dev/null 2>&1
fail=""
for style in GNU LLVM JSON elfutils; do
	"$SYM" lookup --threads 1 --output-style=$style --store "$S" -a -f -i -C \
		"$id" < "$T/addrs" > "$T/one.$style" || fail="$fail $style:1"
	for n in 2 3; do
		"$SYM" lookup --threads $n --output-style=$style --store "$S" \
			-a -f -i -C "$id" < "$T/addrs" > "$T/par" ||
			fail="$fail $style:$n"
		cmp -s "$T/one.$style" "$T/par" || fail="$fail $style:$n"
	done
done
is "sym lookup: 2 and 3 threads print what 1 prints, in all 4 styles" "$fail" ""
is "and answer every address (GNU -a: one address line each)" \
	"$(grep -c '^0x' "$T/one.GNU")" 20000

"$SYM" addr2line --threads 2 --store "$S" --stats -a -f -i -C -e "$libc" \
	< "$T/addrs" > "$T/a2l" 2> "$T/a2l.err"
ok "sym addr2line from the store, 2 threads (table from cache)" \
	grep -q 'table from cache' "$T/a2l.err"
ok "prints what sym lookup prints" cmp -s "$T/a2l" "$T/one.GNU"
"$SYM" addr2line --threads 2 --no-cache -a -f -i -C -e "$libc" \
	< "$T/addrs" > "$T/nc"
ok "sym addr2line --no-cache (the table in memory), 2 threads: the same" \
	cmp -s "$T/nc" "$T/one.GNU"

# A corrupt stored table is found by the first lookup of every worker:
# addr2line rebuilds it once and answers everything right; lookup refuses.
SC=$T/corrupt
"$SYM" store add --store "$SC" "$libc" > /dev/null 2>&1
ok "flipped a byte of the stored table" test "$(store_flip "$SC")" -ge 1
"$SYM" lookup --threads 2 --store "$SC" -a -f -i -C "$id" < "$T/addrs" \
	> "$T/clk" 2> "$T/clk.err"
is "sym lookup, 2 threads, corrupt table: exit 1, no answers" \
	"$?:$(wc -c < "$T/clk")" "1:0"
"$SYM" store add --store "$SC" "$libc" > /dev/null 2>&1
store_flip "$SC" > /dev/null
"$SYM" lookup --threads 1 --store "$SC" -a -f -i -C "$id" < "$T/addrs" \
	> /dev/null 2> "$T/clk1.err"
# (A worker's message may come after the main thread's.)
is "with the messages of one thread (one report, not one per worker)" \
	"$(sort "$T/clk.err")" "$(sort "$T/clk1.err")"
"$SYM" store add --store "$SC" "$libc" > /dev/null 2>&1
store_flip "$SC" > /dev/null
"$SYM" addr2line --threads 2 --store "$SC" --stats -a -f -i -C -e "$libc" \
	< "$T/addrs" > "$T/ca" 2> "$T/ca.err"
is "sym addr2line, 2 threads, corrupt table: exit 0" "$?" 0
ok "it says the table was corrupt and rebuilt it" \
	grep -q 'corrupt.*rebuilding' "$T/ca.err"
ok "and every answer is right" cmp -s "$T/ca" "$T/one.GNU"

# Co-process: one address at a time through pipes.
ok "a co-process gets each answer before it sends the next address" \
	python3 - "$SYM" "$S" "$id" "$T/addrs" <<'EOF'
import subprocess, sys
sym, store, bid, addrs = sys.argv[1:]
p = subprocess.Popen([sym, "lookup", "--threads", "2", "--store", store,
                      "-a", bid], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True, bufsize=1)
for a in open(addrs).read().split()[:50]:
    p.stdin.write(a + "\n")
    p.stdin.flush()
    if int(p.stdout.readline(), 16) != int(a, 16):
        sys.exit("answer out of step at " + a)
    p.stdout.readline()		# file:line
p.stdin.close()
sys.exit(p.wait())
EOF

bad=""
for n in 0 17 x; do
	"$SYM" lookup --threads $n --store "$S" "$id" 0x1 > /dev/null 2>&1
	[ $? -eq 2 ] || bad="$bad $n"
done
is "--threads 0, 17, x: usage errors (exit 2)" "$bad" ""
