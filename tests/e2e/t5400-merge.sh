#!/bin/sh
# sym merge: raw profiles of two "hosts" written by hand (the same program,
# one build ID, at different load addresses and PIDs: different maps), so
# that every expected number is worked out here:
#   web-1: 1000 samples of 10 ms over 10 s: compute 700, parse 300
#   web-2:  100 samples of 10 ms over 5 s:  compute 10, parse 90
# --normalize none is the exact sum; per-host gives each host exactly
# 10^12 (host-ppt) although they differ 10x in samples; per-second is
# count x period / duration by hand; periods that differ rescale `samples`
# weights; --spread keeps the hosts apart (from lines) and a merge of
# merges renormalizes from them; locations are carried over and mixed
# input is symbolized; bad input is refused with nothing written.
. "$(dirname "$0")/lib/lib.sh"
plan 41

BID=4f1c9a0b3d2e11aa0e7c6b5d4f3e2d1c0b9a88e2
# The writer names itself with libsym's version (libsym/sym.h).
VERSION=$(sed -n 's/^#define SYM_VERSION "\(.*\)"/\1/p' "$SYM_ROOT/libsym/sym.h")
LIBC=a43b7e1d5c9f00112233445566778899aabbccc1

# host NAME START DURATION PERIOD UNIT PID BASE COMPUTE PARSE [EXTRA]
host() {
	cat <<EOF
sym-raw 1
host $1
tool sym-record 1.0.0
start $2
duration $3
event cpu-clock
frequency 100
period $4
weight-unit $5
samples $(($8 + $9))
lost 1
process $6 - $6 work
thread $6 $6 work
map 0 file $6 ${7}1000 ${7}2000 1000 1000 $BID /usr/local/bin/work
map 1 file $6 7f0a1c228000 7f0a1c3bd000 28000 28000 $LIBC /lib/libc.so.6
EOF
	[ -n "${10}" ] && printf '%s\n' "${10}"
	w1=$8 w2=$9
	[ "$5" = ns ] && w1=$(($8 * $4)) w2=$(($9 * $4))
	cat <<EOF
stack $8 $w1 $6 $6 - p0:1139 r0:1187 r1:29d8a
stack $9 $w2 $6 $6 - p0:1152 r0:1193 r1:29d8a
end
EOF
}

host web-1 2026-11-30T17:21:15Z 10 10000000 ns 4242 55d0c000 700 300 \
	> "$T/a.raw"
host web-2 2026-11-30T17:21:20Z 5 10000000 ns 977 5601a000 10 90 \
	> "$T/b.raw"

# sums FILE: "SOURCE COUNT WEIGHT" per source of the stacks (0: none),
# then "all COUNT WEIGHT"; weights need more than awk's doubles: bc.
sums() {
	awk 'BEGIN { s = 0 }
	     $1 == "from" { s = ($2 == "-") ? 0 : $2 }
	     $1 == "stack" { c[s] += $2; w[s] = w[s] "+" $3; seen[s] = 1;
			     C += $2; W = W "+" $3 }
	     END { for (k in seen) print k, c[k], w[k]; print "all", C, W }' \
		"$1" | sort | while read -r k c w; do
		echo "$k $c $(echo "0$w" | bc)"
	done
}

# stack FILE FRAMES: "COUNT WEIGHT" of the stack lines ending in FRAMES,
# added up over sources.
stack() {
	awk -v f="$2" '$1 == "stack" && index($0, f) == length($0) - length(f) + 1 {
		c += $2; w = w "+" $3 } END { print c, w }' "$1" |
		while read -r c w; do echo "$c $(echo "0$w" | bc)"; done
}

# --- none: the exact sum ---------------------------------------------------
ok "none: merges" $SYM merge "$T/a.raw" "$T/b.raw" -o "$T/none.raw"
is "none: totals are the sums of the inputs" "$(sums "$T/none.raw")" \
"0 1100 11000000000
all 1100 11000000000"
is "none: each stack as it was, on maps of its own (two per host)" \
	"$(grep -c '^map ' "$T/none.raw") $(stack "$T/none.raw" 'p2:1139 r2:1187 r3:29d8a')" \
	"4 10 100000000"
is "none: the header sums and spans" \
	"$(grep -E '^(host|tool|start|duration|period|weight-unit|samples|lost) ' "$T/none.raw" | tr '\n' ' ')" \
	"host - tool sym-merge $VERSION start 2026-11-30T17:21:15.000000000Z duration 10.000000000 period 10000000 weight-unit ns samples 1100 lost 2 "
# The kernel release is kept when every input says the same one.
sed '1a release 6.1.0-57-cloud-amd64' "$T/a.raw" > "$T/ra.raw"
sed '1a release 6.1.0-57-cloud-amd64' "$T/b.raw" > "$T/rb.raw"
sed '1a release 6.1.0-58-cloud-amd64' "$T/b.raw" > "$T/rc.raw"
$SYM merge "$T/ra.raw" "$T/rb.raw" -o "$T/rab.raw"
$SYM merge "$T/ra.raw" "$T/rc.raw" -o "$T/rac.raw"
is "the kernel release: kept when the inputs agree, else unknown" \
	"$(grep '^release' "$T/rab.raw") / $(grep '^release' "$T/rac.raw")" \
	"release 6.1.0-57-cloud-amd64 / release -"
is "none: one source line per recording, as recorded" "$(grep '^source' "$T/none.raw")" \
"source 1 web-1 2026-11-30T17:21:15.000000000Z 10.000000000 10000000 ns 1000 1
source 2 web-2 2026-11-30T17:21:20.000000000Z 5.000000000 10000000 ns 100 1"
# The same file twice: the maps match field for field and are shared.
$SYM merge "$T/a.raw" "$T/a.raw" -o "$T/aa.raw"
is "none: identical maps are shared, stacks add up exactly" \
	"$(grep -c '^map ' "$T/aa.raw") $(grep -c '^stack ' "$T/aa.raw") $(stack "$T/aa.raw" 'p0:1139 r0:1187 r1:29d8a')" \
	"2 2 1400 14000000000"
is "none: processes and threads of both hosts" \
	"$(grep -E '^(process|thread) ' "$T/none.raw" | tr '\n' ' ')" \
	"process 4242 - 4242 work process 977 - 977 work thread 4242 4242 work thread 977 977 work "

# --- per-host: each host weighs 10^12 --------------------------------------
ok "per-host --spread: merges" \
	$SYM merge -n per-host --spread "$T/a.raw" "$T/b.raw" -o "$T/ph.raw"
is "per-host: each host sums to exactly 10^12, counts stay samples" \
	"$(sums "$T/ph.raw")" \
"1 1000 1000000000000
2 100 1000000000000
all 1100 2000000000000"
is "per-host: weights are each host's shares (700/1000, 10/100 in ppt)" \
	"$(grep '^weight-unit' "$T/ph.raw") $(stack "$T/ph.raw" 'p0:1139 r0:1187 r1:29d8a') $(stack "$T/ph.raw" 'p2:1139 r2:1187 r3:29d8a')" \
	"weight-unit host-ppt 700 700000000000 10 100000000000"
# compute's pooled share by weight: (0.7 + 0.1) / 2 = 40%, where the
# plain sum says (700 + 10) / 1100.
is "per-host: compute weighs (0.7 + 0.1) / 2 of the whole" \
	"$(awk '$1 == "stack" { t += $3; if ($7 ~ /^p[0-9]+:1139$/) c += $3 }
		END { printf "%.6f", c / t }' "$T/ph.raw")" "0.400000"
# Shares that do not divide 10^12: 3 stacks of 1 sample each; the largest
# remainders get the missing units, so the host still sums exactly.
printf 'sym-raw 1\nhost odd\nperiod 1\nweight-unit samples\nmap 0 file 1 1000 2000 0 1000 ab /x\nstack 1 1 1 1 - p0:1000\nstack 1 1 1 1 - p0:1001\nstack 1 1 1 1 - p0:1002\nend\n' > "$T/odd.raw"
$SYM merge -n per-host "$T/odd.raw" "$T/b.raw" -o "$T/odd-ph.raw"
is "per-host: thirds are rounded so that the host still sums to 10^12" \
	"$(awk '$1 == "stack" && $7 ~ /^p0:/ { print $3 }' "$T/odd-ph.raw" | tr '\n' ' ')$(sums "$T/odd-ph.raw" | tail -1)" \
	"333333333334 333333333333 333333333333 all 103 2000000000000"

# --- per-second: count x period / duration ---------------------------------
ok "per-second: merges" \
	$SYM merge --normalize=per-second "$T/a.raw" "$T/b.raw" -o "$T/ps.raw"
# web-1 compute: 700 x 10 ms / 10 s = 0.7 cores = 7e8 ns/s; web-2 compute:
# 10 x 10 ms / 5 s = 0.02 cores.
is "per-second: by hand (700 x 1e7 / 10, 10 x 1e7 / 5, ...)" \
	"$(grep '^weight-unit' "$T/ps.raw") $(stack "$T/ps.raw" 'p0:1139 r0:1187 r1:29d8a') $(stack "$T/ps.raw" 'p2:1139 r2:1187 r3:29d8a') $(stack "$T/ps.raw" 'p2:1152 r2:1193 r3:29d8a')" \
	"weight-unit ns/s 700 700000000 10 20000000 90 180000000"
is "per-second: the fleet keeps 1.2 cores busy" "$(sums "$T/ps.raw" | tail -1)" \
	"all 1100 1200000000"
# Weights in `samples` (pprof's CPU profiles): count x period, period in ns.
host web-3 2026-11-30T17:21:20Z 4 20000000 samples 5 55 30 10 > "$T/c.raw"
$SYM merge -n per-second "$T/c.raw" -o "$T/ps-c.raw"
is "per-second: 'samples' weights are count x period (30 x 2e7 / 4 s)" \
	"$(stack "$T/ps-c.raw" 'p0:1139 r0:1187 r1:29d8a')" "30 150000000"
printf 'sym-raw 1\nperiod 1\nweight-unit ns\nstack 1 1 0 0 -\nend\n' > "$T/nodur.raw"
$SYM merge -n per-second "$T/a.raw" "$T/nodur.raw" -o "$T/x.raw" 2> "$T/err"
is "per-second: a recording without a duration is refused" \
	"$? $(cat "$T/err")$(test -e "$T/x.raw" && echo ' written')" \
	"1 sym merge: '$T/nodur.raw': no duration: per-second needs it"

# --- periods that differ ----------------------------------------------------
host web-4 2026-11-30T17:21:20Z 5 30000000 samples 9 55 4 6 > "$T/d.raw"
$SYM merge "$T/c.raw" "$T/d.raw" -o "$T/cd.raw"
# d's samples weigh 3e7 / 2e7 = 1.5 of c's: 4 -> 6, 6 -> 9.
is "none: 'samples' of another period are rescaled to the first's" \
	"$(grep '^period' "$T/cd.raw") $(awk '$1 == "stack" { printf "%s/%s ", $2, $3 }' "$T/cd.raw")" \
	"period 20000000 30/30 10/10 4/6 6/9 "
host web-5 2026-11-30T17:21:20Z 5 1000000 ns 9 55 100 100 > "$T/e.raw"
$SYM merge "$T/a.raw" "$T/e.raw" -o "$T/ae.raw"
# ns weights add as they are; the period is the mean: 1.02e10 / 1200.
is "none: 'ns' weights add as they are; the period is the mean sample" \
	"$(grep '^period' "$T/ae.raw") $(sums "$T/ae.raw" | tail -1)" \
	"period 8500000 all 1200 10200000000"

# --- spread and merges of merges --------------------------------------------
is "--spread: one from line per host, in order" \
	"$(grep -c '^from ' "$T/ph.raw") $(grep '^from ' "$T/ph.raw" | tr '\n' ' ')" \
	"2 from 1 from 2 "
$SYM merge --spread "$T/a.raw" "$T/b.raw" -o "$T/ab-spread.raw"
$SYM merge --spread "$T/c.raw" -o "$T/c-spread.raw"
$SYM merge -n per-host --spread "$T/ab-spread.raw" "$T/c-spread.raw" -o "$T/nested.raw"
$SYM merge -n per-host --spread "$T/a.raw" "$T/b.raw" "$T/c.raw" -o "$T/flat.raw"
is "a merge of --spread merges normalizes per host like one of the inputs" \
	"$(sums "$T/nested.raw")" "$(sums "$T/flat.raw")"
is "... with the three recordings as its sources" \
	"$(grep '^source' "$T/nested.raw" | cut -d' ' -f1-3 | tr '\n' ' ')" \
	"source 1 web-1 source 2 web-2 source 3 web-3 "
$SYM merge -n per-host "$T/none.raw" "$T/c.raw" -o "$T/x.raw" 2> "$T/err"
is "a merge without --spread cannot be normalized again" \
	"$? $(grep -c 'is a merge without --spread' "$T/err")$(test -e "$T/x.raw" && echo ' written')" \
	"1 1"
$SYM merge "$T/none.raw" "$T/none.raw" -o "$T/x.raw"
is "... but it adds up with --normalize none" "$(sums "$T/x.raw" | tail -1)" \
	"all 2200 22000000000"

# --- the merged profile in the views ------------------------------------------
# A third host in ns: web-6, compute 50 of 200 samples (25%).
host web-6 2026-11-30T17:21:30Z 20 10000000 ns 31 55aa0000 50 150 > "$T/f.raw"
$SYM merge --spread "$T/a.raw" "$T/b.raw" "$T/f.raw" -o "$T/abf.raw"
$SYM fold -q --granularity=addresses "$T/abf.raw" > "$T/abf.folded"
is "fold of the merge: the totals are the merged sample counts" \
	"$(awk '{ t += $NF; if ($0 ~ /work\+0x1139 [0-9]+$/) c += $NF } END { print t, c }' "$T/abf.folded")" \
	"1300 760"
$SYM report -q --granularity=addresses --top 2 "$T/abf.raw" > "$T/report"
is "report of the merge: compute's pooled share is 760 / 1300" \
	"$(awk '$NF == "work+0x1139" && $1 == 1 { print $2, $3; exit }' "$T/report")" \
	"760 58.46%"
# The spread, by hand: compute 70%, 10%, 25% on web-1, web-2, web-6; parse
# 30%, 90%, 75%.
is "report --spread: compute's min, median, max over the hosts" \
	"$(sed -n '/^Spread over/,$p' "$T/report" | awk '$NF == "work+0x1139" { print; exit }')" \
	"  58.46%   10.00%   25.00%   70.00%  web-1            3  work+0x1139"
is "report --spread: parse's" \
	"$(sed -n '/^Spread over/,$p' "$T/report" | awk '$NF == "work+0x1152" { print; exit }')" \
	"  41.54%   30.00%   75.00%   90.00%  web-2            3  work+0x1152"
# Per-host: the pooled share becomes the mean of the hosts' shares, the
# spread stays.
$SYM merge -n per-host --spread "$T/a.raw" "$T/b.raw" "$T/f.raw" -o "$T/abf-ph.raw"
$SYM report -q --granularity=addresses --top 2 --value weight "$T/abf-ph.raw" > "$T/report-ph"
is "per-host report: compute's pooled share is (70 + 10 + 25) / 3 %, same spread" \
	"$(sed -n '/^Spread over/,$p' "$T/report-ph" | awk '$NF == "work+0x1139" { print; exit }')" \
	"  35.00%   10.00%   25.00%   70.00%  web-1            3  work+0x1139"
$SYM report -q --granularity=addresses "$T/none.raw" > "$T/report-none"
is "no spread without --spread (one source per stack unknown)" \
	"$(grep -c '^Spread' "$T/report-none")" 0

# --- symbolized input -------------------------------------------------------
host web-1 2026-11-30T17:21:15Z 10 10000000 ns 4242 55d0c000 700 300 \
	"symbolized 1
fn 1 compute
fn 2 main
src 1 /src/work.c
loc p0:1139 ok i1:1:12:5 2:1:40:3
loc r0:1187 nosymbol
loc p0:1152 missing" > "$T/a-sym.raw"
host web-2 2026-11-30T17:21:20Z 5 10000000 ns 977 5601a000 10 90 \
	"symbolized 1
fn 1 parse
loc p0:1152 ok s1:-:0:0" > "$T/b-sym.raw"
ok "symbolized inputs: merges" $SYM merge "$T/a-sym.raw" "$T/b-sym.raw" -o "$T/sym.raw"
is "locations carried over to the renumbered maps" \
	"$(grep -E '^(symbolized|fn|src|loc) ' "$T/sym.raw" | tr '\n' ' ')" \
	"symbolized 1 fn 1 compute fn 2 main fn 3 parse src 1 /src/work.c loc p0:1139 ok i1:1:12:5 2:1:40:3 loc r0:1187 nosymbol loc p0:1152 missing loc p2:1152 ok s3:-:0:0 "
# One symbolized input and one not: the output is symbolized through the
# store (no table for these build IDs: missing), not left half done.
$SYM merge -q --store "$T/store" "$T/a-sym.raw" "$T/b.raw" -o "$T/mixed.raw"
is "mixed input: every frame of the output has a location" \
	"$(grep -c '^loc ' "$T/mixed.raw") $(grep '^loc p0:1139' "$T/mixed.raw")" \
	"10 loc p0:1139 ok i1:1:12:5 2:1:40:3"

# --- refusals ------------------------------------------------------------
$SYM merge "$T/a.raw" "$T/c.raw" -o "$T/x.raw" 2> "$T/err"
is "none: weights in ns and in samples are not added" \
	"$? $(cat "$T/err")" \
	"1 sym merge: '$T/a.raw' weighs its stacks in 'ns' and '$T/c.raw' in 'samples': a plain sum cannot add them (try --normalize per-host)"
ok "per-host: ns and samples of two hosts merge" \
	$SYM merge -n per-host "$T/a.raw" "$T/c.raw" -o "$T/x.raw"
rm -f "$T/x.raw"
printf 'sym-raw 1\nperiod 1\nweight-unit ns\nstack 1 1 0 0 - p9:1\nend\n' > "$T/bad.raw"
$SYM merge "$T/a.raw" "$T/bad.raw" -o "$T/x.raw" 2> "$T/err"
is "a malformed input: its reader's message, exit 1, nothing written" \
	"$? $(cat "$T/err")$(test -e "$T/x.raw" && echo ' written')" \
	"1 sym merge: '$T/bad.raw': malformed profile: line 4: frame names map 9, which no map line before defines"
$SYM merge --normalize per-core "$T/a.raw" 2> "$T/err"
is "an unknown mode is a usage error" "$? $(cat "$T/err")" \
	"2 sym merge: unknown --normalize 'per-core' (none, per-host or per-second)"
$SYM merge - - < "$T/a.raw" 2> "$T/err"
is "stdin only once" "$? $(cat "$T/err")" \
	"2 sym merge: stdin ('-') can be read only once"
is "from stdin" "$($SYM merge - "$T/b.raw" < "$T/a.raw" | sums /dev/stdin | tail -1)" \
	"all 1100 11000000000"
$SYM merge --help | grep -q 'per-second' && $SYM help 2>&1 | grep -q '^ *merge'
is "--help and sym help" "$?" 0

done_testing
