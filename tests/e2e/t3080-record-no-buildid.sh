#!/bin/sh
# t3080-record-no-buildid.sh - binaries without a GNU build ID, profiled
# and symbolized remotely (issue 18): a default Go build (fixtures/src/
# goprof, no -B: only Go's .note.go.buildid) and a C program linked with
# -Wl,--build-id=none.  Each gets its module ID (docs/store.md, "Module
# IDs"), and the recorder, libsymprof, sym upload, the store and symd all
# name it the same way:
#  - `sym buildid -k` prints the ID the rule gives, computed here with
#    Python's hashlib and `go tool buildid` (not with the code under test);
#  - `sym record` maps each binary under that ID, and so does `sym run`
#    (libsymprof) for the C program (a default Go build is static:
#    LD_PRELOAD never loads into it, so libsymprof cannot profile it);
#  - `sym upload` stores each under it at a real symd on 127.0.0.1, whose
#    debuginfod route serves it back under that ID;
#  - `sym symbolize --server` resolves every distinct frame of each
#    binary, with the same functions, files and lines as `sym symbolize
#    --store` gives from a local store the binaries were added to.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/record-lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need go python3 flock curl readelf
need_perf
plan 18
bail() { echo "Bail out! $*"; exit 1; }

if ! "$SYM_ROOT/fixtures/build-go.sh" goprof > "$T/build.log" 2>&1; then
	sed 's/^/#   /' "$T/build.log"
	bail "cannot build fixtures/src/goprof"
fi
GO=$SYM_ROOT/fixtures/build/go/goprof/goprof-default
cd "$T" || exit 1
cat > spin.c <<'EOF'
#include <stdlib.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void leaf(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i * i;
}
__attribute__((noinline)) static void mid(unsigned long n)
{
	leaf(n);
	leaf(n / 2);
}
int main(int argc, char **argv)
{
	unsigned long r = argc > 1 ? strtoul(argv[1], 0, 10) : 200;

	for (unsigned long i = 0; i < r; i++)
		mid(1000000);
	return 0;
}
EOF
${CC:-cc} -O1 -g -fno-omit-frame-pointer -Wl,--build-id=none -o spin \
	spin.c || bail "cannot build spin.c"
C=$T/spin

# --- the IDs, from outside the code under test --------------------------
readelf -n "$C" > c.notes 2>&1
readelf -n "$GO" > go.notes 2>&1
ok "neither binary has a GNU build ID" \
	eval '! grep -q "Build ID:" c.notes go.notes'
cid=$(python3 -c 'import hashlib, struct, sys
d = open(sys.argv[1], "rb").read()
h = hashlib.sha256(d[:4096] + d[-4096:] + struct.pack(">Q", len(d)))
print(h.hexdigest()[:32])' "$C")
gid=$(go tool buildid "$GO" | python3 -c 'import hashlib, sys
g = sys.stdin.buffer.read().rstrip(b"\n")
print(hashlib.sha256(b"symd-go-build-id\0" + g).hexdigest()[:32])')
is "sym buildid -k: the C program's file ID (OTel's rule)" \
	"$("$SYM" buildid -k "$C")" "$cid  file  $C"
is "sym buildid -k: the Go program's go ID" \
	"$("$SYM" buildid -k "$GO")" "$gid  go  $GO"
"$SYM" buildid "$C" > plain.out 2>&1
is "sym buildid without -k: 'none', as before" "$?:$(cat plain.out)" \
	"1:$C: none"

# --- recorded: sym record, sym run ---------------------------------------
"$SYM" record -q -F 499 -o c.raw -- "$C" 300 > /dev/null 2> c.err ||
	bail "sym record of spin failed: $(cat c.err)"
"$SYM" record -q -F 499 -o go.raw -- "$GO" 20 "$T/cpu.pprof" \
	> /dev/null 2> go.err || bail "sym record of goprof failed: $(cat go.err)"
"$SYM" run -o run.raw -- "$C" 300 > /dev/null 2> run.err ||
	bail "sym run of spin failed: $(cat run.err)"
ok "sym record maps the C program under its file ID" \
	grep -aq "^map [0-9]* file [0-9]* .* $cid $C\$" c.raw
ok "sym record maps the Go program under its go ID" \
	grep -aq "^map [0-9]* file [0-9]* .* $gid $GO\$" go.raw
ok "sym run (libsymprof) maps the C program under its file ID" \
	grep -aq "^map [0-9]* file [0-9]* .* $cid $C\$" run.raw

# --- uploaded to symd, symbolized through it and locally ------------------
echo token > token
start_symd --upload-token-file "$T/token" || bail "symd did not start"
"$SYM" upload --server "$SYMD_URL" --token-file token "$C" "$GO" \
	> up.out 2>&1
is "sym upload: exit 0" "$?" 0
sed 's/^/# /' up.out
ok "sym upload stores the C program under its file ID" \
	grep -q "^$cid  $C  executable  uploaded" up.out
ok "sym upload stores the Go program under its go ID" \
	grep -q "^$gid  $GO  executable  uploaded" up.out
is "symd has both" \
	"$(http_status -I "$SYMD_URL/v1/executable/$cid") $(http_status -I "$SYMD_URL/v1/executable/$gid")" \
	"200 200"
curl -s -o c.dl "$SYMD_URL/buildid/$cid/executable"
curl -s -o go.dl "$SYMD_URL/buildid/$gid/executable"
ok "the debuginfod route serves each under its module ID, byte for byte" \
	eval 'cmp -s c.dl "$C" && cmp -s go.dl "$GO"'

"$SYM" store --store "$T/local" add "$C" "$GO" > add.out 2>&1 ||
	bail "sym store add failed: $(cat add.out)"
# the module line of sym symbolize -v: frames, resolved%, ..., path (id)
all_resolved() {
	awk -v b="$2" '$6 == b && $2 == "100.0%" { f = 1 } END { exit !f }' "$1"
}
# names SYM ID: each frame of the maps of module ID in the symbolized
# form SYM, with its status and its lines, function and file ids
# replaced by the names (the ids are numbered by first use, which other
# modules' frames shift), sorted.
names() {
	awk -v id="$2" '
	$1 == "map" && $9 == id { m["p" $2] = 1; m["r" $2] = 1 }
	$1 == "fn" { fn[$2] = $3 }
	$1 == "src" { src[$2] = $3 }
	$1 == "loc" {
		split($2, a, ":")
		if (!(a[1] in m))
			next
		out = $2 " " $3
		for (i = 4; i <= NF; i++) {
			n = split($i, l, ":")
			out = out " " fn[l[1]] ":" src[l[2]]
			for (j = 3; j <= n; j++)
				out = out ":" l[j]
		}
		print out
	}' "$1" | sort
}
for r in c go run; do
	# a hot function each profile must name
	case $r in go) b=$GO id=$gid hot=main. ;; *) b=$C id=$cid hot=leaf ;; esac
	"$SYM" symbolize -v --server "$SYMD_URL" --wait-ms 20000 \
		-o "$r.server.sym" "$r.raw" 2> "$r.server.err"
	"$SYM" symbolize -v --store "$T/local" -o "$r.local.sym" "$r.raw" \
		2> "$r.local.err"
	sed 's/^/# /' "$r.server.err"
	ok "$r.raw: symd resolves every distinct frame of $(basename "$b")" \
		all_resolved "$r.server.err" "$b"
	names "$r.server.sym" "$id" > "$r.server.names"
	names "$r.local.sym" "$id" > "$r.local.names"
	ok "$r.raw: the names symd gives are those of the local store" \
		eval "grep -q ' $hot' $r.server.names &&
		      cmp -s $r.server.names $r.local.names"
done
stop_symd
done_testing
