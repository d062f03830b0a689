#!/bin/sh
# sym diff: two symbolized raw profiles whose stacks are seeded multinomial
# draws (python's random, seeds 5410 and 5411) from known shares:
#   A: 4000 samples, f 30%, g 30%, h 40%    (leaves under main, f and g
#   B: 3000 samples, f 30%, g 15%, h 55%     also under helper)
# g and h truly changed, and so did helper's total (half of f and g:
# 30% -> 22.5%); f did not, nor main's total (100%).  With these seeds f's
# share moves by well under one standard error and g's and h's by more
# than eight, so the verdicts are not a matter of luck.  Every printed share, change and
# interval is recomputed here from the counts (Wilson, Newcombe), the
# rows come most significant first, --all lists the rest, --value weight
# on weights that are count x period agrees with samples, unsymbolized
# input is symbolized on the fly, and bad usage is refused.
. "$(dirname "$0")/lib/lib.sh"
need python3
plan 15

# gen DIR: DIR/a.raw and DIR/b.raw (symbolized), DIR/ua.raw and
# DIR/ub.raw (the same stacks, unsymbolized), each of N seeded draws; one
# python run, since python starts slowly on a loaded machine.
gen() {
	python3 - "$@" <<'EOF'
import random, sys

def gen(path, seed, n, shares, sym):
    rng = random.Random(seed)
    # leaf f/g/h at 1000/1100/1200, called from main (r0:2000) or, for f
    # and g, half of the time through helper (r0:2100, called from main).
    counts = {}
    for _ in range(n):
        leaf = rng.choices([0, 1, 2], weights=shares)[0]
        via = leaf < 2 and rng.random() < 0.5
        frames = ("p0:%x" % (0x1000 + 0x100 * leaf),) + \
            (("r0:2100",) if via else ()) + ("r0:2000",)
        counts[frames] = counts.get(frames, 0) + 1
    out = ["sym-raw 1", "host h", "period 10000000", "weight-unit ns",
           "samples %d" % n]
    if sym:
        out.append("symbolized 1")
    out.append("map 0 file 1 1000 3000 0 1000 "
               "4f1c9a0b3d2e11aa0e7c6b5d4f3e2d1c0b9a88e2 /bin/work")
    if sym:
        out += ["fn 1 f", "fn 2 g", "fn 3 h", "fn 4 helper", "fn 5 main",
                "loc p0:1000 ok 1:-:0:0", "loc p0:1100 ok 2:-:0:0",
                "loc p0:1200 ok 3:-:0:0", "loc r0:2100 ok 4:-:0:0",
                "loc r0:2000 ok 5:-:0:0"]
    for frames, c in sorted(counts.items()):
        out.append("stack %d %d 1 1 - %s" % (c, c * 10000000,
                                             " ".join(frames)))
    out.append("end")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")

d = sys.argv[1]
for sym, pre in ((True, ""), (False, "u")):
    gen(d + "/" + pre + "a.raw", 5410, 4000, [0.30, 0.30, 0.40], sym)
    gen(d + "/" + pre + "b.raw", 5411, 3000, [0.30, 0.15, 0.55], sym)
EOF
}
gen "$T"

# expect A B CONF OUT...: into OUT, the rows sym diff must print at CONF,
# from the counts: per function and kind, the shares, B - A, Newcombe's
# interval and z, sorted as documented, changed ones first; then
# "changed N".
expect() {
	python3 - "$@" <<'EOF'
import math, sys
from statistics import NormalDist
names = {0x1000: "f", 0x1100: "g", 0x1200: "h", 0x2100: "helper",
         0x2000: "main"}
def load(path):
    self, total, n = {}, {}, 0
    for line in open(path):
        w = line.split()
        if w[0] != "stack":
            continue
        c = int(w[1]); n += c
        fr = [names[int(x.split(":")[1], 16)] for x in w[6:]]
        self[fr[0]] = self.get(fr[0], 0) + c
        for f in set(fr):
            total[f] = total.get(f, 0) + c
    return self, total, n
def wilson(k, n, z):
    c = (k + z * z / 2) / (n + z * z)
    h = z / (n + z * z) * math.sqrt(k * (n - k) / n + z * z / 4)
    return max(0, c - h), min(1, c + h)
def expect(A, B, z, out):
  rows = []
  for kind, i in (("self", 0), ("total", 1)):
      for f in sorted(set(A[i]) | set(B[i])):
          ka, kb = A[i].get(f, 0), B[i].get(f, 0)
          pa, pb = ka / A[2], kb / B[2]
          la, ua = wilson(ka, A[2], z); lb, ub = wilson(kb, B[2], z)
          d = pb - pa
          lo = d - math.sqrt((pb - lb) ** 2 + (ua - pa) ** 2)
          hi = d + math.sqrt((ub - pb) ** 2 + (pa - la) ** 2)
          se = (d - lo) / z if d > 0 else (hi - d) / z if d < 0 else 0
          zz = d / se if se else 0.0
          rows.append((not (lo > 0 or hi < 0), -abs(zz), -abs(d), f,
                       kind, pa, pb, d, lo, hi, zz))
  rows.sort(key=lambda r: (r[0], r[1], r[2], r[3], r[4] != "self"))
  for r in rows:
      iv = "[%+.2f, %+.2f]" % (100 * r[8], 100 * r[9])
      print("%-5s %7.2f%% %7.2f%% %+8.2f  %-19s %7.1f  %s" %
            (r[4], 100 * r[5], 100 * r[6], 100 * r[7], iv, r[10], r[3]),
            file=out)
  print("changed %d" % sum(1 for r in rows if not r[0]), file=out)
A, B = load(sys.argv[1]), load(sys.argv[2])
for conf, path in zip(sys.argv[3::2], sys.argv[4::2]):
    with open(path, "w") as out:
        expect(A, B, NormalDist().inv_cdf((1 + float(conf)) / 2), out)
EOF
}

expect "$T/a.raw" "$T/b.raw" 0.95 "$T/want" 0.999 "$T/want999"
ok "diff: runs" $SYM diff --all "$T/a.raw" "$T/b.raw" -o "$T/out"
# The rows of the output, without the headings.
rows() { grep -E '^(self|total) ' "$1"; }
is "every row as computed by hand from the counts, in order" \
	"$(rows "$T/out")" "$(grep -v '^changed' "$T/want")"
is "g and h changed (self and total), helper's total too; f and main did not" \
	"$(grep '^Changed' "$T/out") $(sed -n '/^Changed/,/^$/p' "$T/out" | awk '/^(self|total) / { printf "%s:%s ", $1, $NF }')" \
	"Changed: 5 of 8 entries (self and total): self:g total:g self:h total:h total:helper "
is "the changed count matches the hand computation" \
	"$(grep -c . "$T/want") $(tail -1 "$T/want")" "9 changed 5"
# f: the unchanged one, and by a wide margin.
is "f moved by well under one standard error (|z| < 1), in both kinds" \
	"$(awk '$NF == "f" && ($1 == "self" || $1 == "total") { z = $(NF-1); if (z < 0) z = -z; if (z < 1) n++ } END { print n }' "$T/out")" 2
is "g and h moved by more than 8 standard errors" \
	"$(awk '($NF == "g" || $NF == "h") && $1 != "A:" { z = $(NF-1); if (z < 0) z = -z; if (z > 8) n++ } END { print n }' "$T/out")" 4
is "f is listed under 'cannot tell apart' with --all" \
	"$(sed -n '/^Cannot tell apart/,$p' "$T/out" | awk '$NF == "f" { printf "%s ", $1 }')" "self total "
$SYM diff "$T/a.raw" "$T/b.raw" > "$T/short"
is "without --all: only the changed ones, and how many are left out" \
	"$(rows "$T/short" | wc -l) $(tail -1 "$T/short")" \
	"5 Cannot tell apart at these sample counts: 3 entries (--all lists them)."
is "the header names both sides and their samples" \
	"$(head -2 "$T/short")" "A: $T/a.raw, 4000 samples
B: $T/b.raw, 3000 samples"

# A stricter level: the same verdicts here, wider intervals.
$SYM diff --all --conf 99.9 "$T/a.raw" "$T/b.raw" > "$T/out999"
is "--conf 99.9: as computed by hand" "$(rows "$T/out999")" \
	"$(grep -v '^changed' "$T/want999")"

# Weights that are count x period: the same shares and verdicts.
$SYM diff --all --value weight "$T/a.raw" "$T/b.raw" > "$T/outw"
is "--value weight with equal weights agrees with samples" \
	"$(rows "$T/outw")" "$(rows "$T/out")"

# Unsymbolized input: symbolized on the fly (the store has nothing for
# this build ID), names module+offset.
$SYM diff -q --granularity=addresses --store "$T/store" "$T/ua.raw" "$T/ub.raw" > "$T/uout"
is "unsymbolized input: the same verdicts on module+offset names" \
	"$(sed -n '/^Changed/,/^$/p' "$T/uout" | awk '/^(self|total) / { printf "%s:%s ", $1, $NF }')" \
	"self:work+0x1100 total:work+0x1100 self:work+0x1200 total:work+0x1200 total:work+0x2100 "

# Refusals.
$SYM diff --conf 0.95 "$T/a.raw" "$T/b.raw" 2> "$T/err"
is "a bad --conf is a usage error" "$? $(cat "$T/err")" \
	"2 sym diff: --conf: '0.95' is not a percentage from 50 to 99.9999"
$SYM diff "$T/a.raw" "$T/missing.raw" > "$T/x" 2> "$T/err"
is "a missing input: exit 1, nothing on stdout" \
	"$? $(wc -c < "$T/x") $(grep -c missing.raw "$T/err")" "1 0 1"
$SYM diff "$T/a.raw" 2> /dev/null
is "one input is a usage error" "$?" 2

done_testing
