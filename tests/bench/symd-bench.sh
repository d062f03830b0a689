#!/bin/sh
# symd-bench.sh - the daemon's part of `make bench` (issue 4): bin/symd
# under load from tests/bench/symd-load.c, against llvm-symbolizer used as
# a co-process, in one run.
#
# Inputs: python3.11d (DWARF inside) and libc.so.6 (libc6-dbg's debug file
# found by build ID), the same BENCH_ADDRS (100,000) instruction addresses
# per input as bench.sh (objdump -d, seed BENCH_SEED; its address files are
# reused when they match).  A fresh store is filled with `sym store add`,
# then one symd (--listen 127.0.0.1:0 --quiet, no upstream, an upload
# token) serves it; one request per build ID warms it (status ok) before
# anything is timed.
#
#   llvm-symbolizer  one `llvm-symbolizer --obj=F --inlining -C` process,
#                    the addresses streamed on its stdin SYMD_BENCH_PASSES
#                    (4) times while its answers are read (symd-load -x);
#                    its rate is the median of passes 2.. (warm: the same
#                    addresses again), start-up not counted.
#   throughput       1,000-address POST /v1/symbolize/<id> bodies (the
#                    100,000 addresses cut in 100), 16, 32 and 64
#                    keep-alive connections, closed loop; addresses
#                    answered "ok" per second; median of SYMD_BENCH_RUNS
#                    (3) runs of SYMD_BENCH_SECONDS (4) s after
#                    SYMD_BENCH_WARMUP (0.5) s.  Ratio = ours / llvm's.
#   latency          1-address requests (the first 20,000 addresses,
#                    cycled), SYMD_BENCH_LAT_CONNS (4) connections, closed
#                    loop; p50 and p99 over every request of a run,
#                    medians of the runs.
#   cold libjvm      (when openjdk-17-dbg's debug file of libjvm.so is
#                    installed) the latency client on both inputs' 1-address
#                    requests, while libjvm's debug file is uploaded
#                    (PUT /v1/debuginfo/<id>, curl -T) and symd converts it
#                    in the background; a POST with wait_ms=30000 says when
#                    it is ready.  Percentiles per window: before, upload,
#                    conversion (from the upload's 201 to status ok), after.
#   memory           VmRSS and VmHWM of symd (/proc/PID/status) after each
#                    phase.
#
# Goals (issue 4): throughput >= 5x llvm-symbolizer; warm p99 <= 2 ms;
# p99 during the cold conversion <= 5 ms.  A goal not met is reported, not
# a failure; the exit status is 1 when symd cannot be started or answers
# anything but 200 "ok", or a peer fails.
#
# Knobs: SYMD_BENCH_SECONDS SYMD_BENCH_WARMUP SYMD_BENCH_RUNS
#        SYMD_BENCH_CONNS ("16 32 64") SYMD_BENCH_LAT_CONNS SYMD_BENCH_PASSES
#        SYMD_BENCH_COLD (0 skips libjvm) BENCH_ADDRS BENCH_SEED BENCH_DIR
#        SYM SYMD.  Everything stays in $BENCH_DIR/symd/; the section is
#        printed, written to $BENCH_DIR/symd/report.md and appended to
#        $BENCH_DIR/report.md (replacing an earlier one of this script).
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
SYM=${SYM:-$ROOT/bin/sym}
SYMD=${SYMD:-$ROOT/bin/symd}
OUT=${BENCH_DIR:-$ROOT/build/bench}
W=$OUT/symd
NADDR=${BENCH_ADDRS:-100000}
SEED=${BENCH_SEED:-20240601}
SECS=${SYMD_BENCH_SECONDS:-4}
WARMUP=${SYMD_BENCH_WARMUP:-0.5}
RUNS=${SYMD_BENCH_RUNS:-3}
CONNS=${SYMD_BENCH_CONNS:-16 32 64}
LCONNS=${SYMD_BENCH_LAT_CONNS:-4}
PASSES=${SYMD_BENCH_PASSES:-4}
COLD=${SYMD_BENCH_COLD:-1}
BATCH=1000
NSINGLE=20000
JVM=/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so
UTIL="python3 $ROOT/tests/bench/benchutil.py"
LOAD=$W/symd-load
HEADING='### symd daemon (tests/bench/symd-bench.sh)'
export LC_ALL=C
# Nothing here may read or fill the user's store or ask real upstreams.
SYM_STORE=$W/store-default
export SYM_STORE
unset DEBUGINFOD_URLS

die() { echo "symd-bench: $*" >&2; exit 1; }
note() { echo "symd-bench: $*" >&2; }

[ -x "$SYM" ] || die "no $SYM; run make first"
[ -x "$SYMD" ] || die "no $SYMD; run make first"
command -v llvm-symbolizer > /dev/null || die "no llvm-symbolizer (apt-get install llvm)"
command -v curl > /dev/null || die "no curl"
rm -rf "$W"
mkdir -p "$W" || die "cannot create $W"

SYMD_PID=
LOAD_PID=
# shellcheck disable=SC2317
cleanup() {
	[ -n "$LOAD_PID" ] && kill "$LOAD_PID" 2> /dev/null
	[ -n "$SYMD_PID" ] && kill -9 "$SYMD_PID" 2> /dev/null
	return 0
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# --- the load generator ------------------------------------------------
${CC:-cc} -std=gnu11 -O2 -g -Wall -Wextra -Ilibsym -o "$LOAD" \
	tests/bench/symd-load.c -pthread || die "cannot build $LOAD"

# debug_file, usable_input, median, kv, proc_cpu, problems, publish
. "$ROOT/tests/bench/lib.sh"

# cpu: symd's CPU time so far (user + system, all threads), in clock ticks.
cpu() { proc_cpu "$SYMD_PID"; }
HZ=$(getconf CLK_TCK)

# mem PHASE: symd's VmRSS, RssAnon, RssFile and VmHWM now, in kB, to
# $W/mem.txt.
mem() {
	awk -v p="$1" '/^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 }
		/^RssFile:/ { f = $2 } /^VmHWM:/ { h = $2 }
		END { print p, r, a, f, h }' "/proc/$SYMD_PID/status" >> "$W/mem.txt"
}

status=0
START=$(date +%s)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
ROWS=$W/rows.txt	# see report()
SAN=$W/sanity.txt
: > "$ROWS"
: > "$SAN"
: > "$W/mem.txt"

# --- inputs, addresses, bodies, the store ------------------------------
NAMES=
for spec in python3.11d=/usr/bin/python3.11d libc=/lib/x86_64-linux-gnu/libc.so.6; do
	name=${spec%%=*}
	f=${spec#*=}
	usable_input "$name" "$f" || continue
	addrs=$W/$name.addrs
	# bench.sh's address file when it is the same draw, else the same way.
	# shellcheck disable=SC3013
	if [ -s "$OUT/$name.addrs" ] && [ ! "$f" -nt "$OUT/$name.addrs" ] &&
	   [ "$(wc -l < "$OUT/$name.addrs")" -eq "$NADDR" ] &&
	   [ "$(cat "$OUT/$name.addrs.seed" 2>/dev/null)" = "$SEED" ]; then
		cp "$OUT/$name.addrs" "$addrs"
	else
		objdump -d --no-show-raw-insn "$f" |
			$UTIL sample "$SEED" "$NADDR" > "$addrs" ||
			die "cannot draw addresses from $f"
	fi
	bid=$("$SYM" buildid "$f" | awk '{ print $1 }')
	[ -n "$bid" ] || die "no build ID for $f"
	cat "$f" ${dbg:+"$dbg"} > /dev/null
	"$SYM" store add --store "$W/store" "$f" > "$W/$name.store-add" 2>&1 ||
		die "sym store add $f failed: $(head -3 "$W/$name.store-add")"
	# PATH NADDR JSON, one request a line (symd-load's format).
	awk -v p="/v1/symbolize/$bid" -v n="$BATCH" '
	{ a[NR - 1] = $1 }
	END {
		for (i = 0; i + n <= NR; i += n) {
			s = p " " n " {\"addresses\":["
			for (j = i; j < i + n; j++)
				s = s (j > i ? "," : "") "\"" a[j] "\""
			print s "],\"wait_ms\":0}"
		}
	}' "$addrs" > "$W/$name.batch"
	awk -v p="/v1/symbolize/$bid" -v n="$NSINGLE" 'NR <= n {
		print p " 1 {\"addresses\":[\"" $1 "\"],\"wait_ms\":0}" }' \
		"$addrs" > "$W/$name.single"
	[ -s "$W/$name.batch" ] || die "fewer than $BATCH addresses for $name"
	echo "$bid" > "$W/$name.bid"
	echo "$f" > "$W/$name.file"
	NAMES="$NAMES $name"
done
[ -n "$NAMES" ] || die "no input"
note "inputs:$NAMES; store $W/store"

# --- llvm-symbolizer as a co-process --------------------------------------
for name in $NAMES; do
	f=$(cat "$W/$name.file")
	note "$name: llvm-symbolizer co-process, $PASSES passes of $NADDR addresses"
	if "$LOAD" -x "$W/$name.addrs" -p "$PASSES" -- \
	       llvm-symbolizer --obj="$f" --inlining -C \
	       > "$W/$name.llvm" 2> "$W/$name.llvm.err"; then
		line=$(tail -1 "$W/$name.llvm")
		sed 's/^/symd-bench:   /' "$W/$name.llvm" >&2
		echo "llvm $name $(kv warm_addr_per_s "$line") $(kv cold_s "$line") $(kv rss_kb "$line") $(kv warm_cpu_us_per_addr "$line")" >> "$ROWS"
	else
		note "llvm-symbolizer failed on $name: $(head -3 "$W/$name.llvm.err")"
		status=1
	fi
done

# --- the daemon -------------------------------------------------------------
echo "symd-bench-$$-token" > "$W/token"
"$SYMD" --store "$W/store" --listen 127.0.0.1:0 --quiet \
	--upload-token-file "$W/token" > "$W/symd.out" 2> "$W/symd.err" &
SYMD_PID=$!
PORT=
i=0
while [ $i -lt 200 ]; do
	PORT=$(sed -n 's/^symd: listening on 127.0.0.1:\([0-9]*\),.*/\1/p' \
		"$W/symd.out" 2>/dev/null)
	[ -n "$PORT" ] && break
	kill -0 "$SYMD_PID" 2>/dev/null || break
	sleep 0.05
	i=$((i + 1))
done
[ -n "$PORT" ] || die "symd did not start: $(cat "$W/symd.err")"
URL=http://127.0.0.1:$PORT
note "symd pid $SYMD_PID on $URL"

# ready BID ADDR: ask until status is ok (wait_ms=30000 each time; at most
# about 5 minutes); false on any other answer.
ready() {
	r_i=0
	while [ $r_i -lt 10 ]; do
		curl -sS --max-time 40 -X POST -H 'Content-Type: application/json' \
			-d "{\"addresses\":[\"$2\"],\"wait_ms\":30000}" \
			"$URL/v1/symbolize/$1" > "$W/ready.resp" 2>&1
		grep -q '"status":"ok"' "$W/ready.resp" && return 0
		grep -q '"status":"pending"' "$W/ready.resp" || return 1
		r_i=$((r_i + 1))
	done
	return 1
}

for name in $NAMES; do
	if ! ready "$(cat "$W/$name.bid")" "$(head -1 "$W/$name.addrs")"; then
		die "symd does not answer $name from the store: $(head -c 300 "$W/ready.resp")"
	fi
done
mem warm-up

# load BODIES OPTION...: one symd-load run against symd; its key=value
# line.
load() {
	l_bodies=$1
	shift
	"$LOAD" "$@" "127.0.0.1:$PORT" "$l_bodies" 2>> "$W/load.err"
}

# errors LINE WHAT: note and fail when a run saw errors.
errors() {
	e=$(kv errors "$1")
	if [ -z "$e" ]; then
		echo "$2: symd-load failed: $(tail -3 "$W/load.err" | tr '\n' ' ')" >> "$SAN"
		status=1
	elif [ "$e" != 0 ]; then
		echo "$2: $e requests not answered 200 \"ok\" (see $W/load.err)" >> "$SAN"
		status=1
	fi
}

# --- warm throughput ---------------------------------------------------------
for name in $NAMES; do
	for c in $CONNS; do
		rates='' p50s='' p99s='' cpus='' r=0
		while [ $r -lt "$RUNS" ]; do
			r=$((r + 1))
			c0=$(cpu)
			line=$(load "$W/$name.batch" -c "$c" -w "$WARMUP" -d "$SECS")
			c1=$(cpu)
			echo "$name c=$c run=$r $line symd_cpu_ticks=$((c1 - c0))" >> "$W/throughput.txt"
			errors "$line" "throughput $name, $c connections"
			rates="$rates $(kv addr_per_s "$line")"
			p50s="$p50s $(kv p50_us "$line")"
			p99s="$p99s $(kv p99_us "$line")"
			# symd's CPU us per address answered in the run.
			cpus="$cpus $(awk -v t=$((c1 - c0)) -v hz="$HZ" -v n="$(kv all_addresses "$line")" \
				'BEGIN { if (n > 0) printf "%.3f", t / hz * 1e6 / n }')"
		done
		# shellcheck disable=SC2086
		echo "tput $name $c $(median $rates) $(median $p50s) $(median $p99s) $(median $cpus)" >> "$ROWS"
		note "$name, $c connections: addresses/s [$rates ]"
	done
done
mem throughput

# --- 1-address latency ----------------------------------------------------------
for name in $NAMES; do
	rps='' p50s='' p99s='' p999s='' maxs='' r=0
	while [ $r -lt "$RUNS" ]; do
		r=$((r + 1))
		line=$(load "$W/$name.single" -c "$LCONNS" -w "$WARMUP" -d "$SECS")
		echo "$name run=$r $line" >> "$W/latency.txt"
		errors "$line" "latency $name"
		rps="$rps $(kv req_per_s "$line")"
		p50s="$p50s $(kv p50_us "$line")"
		p99s="$p99s $(kv p99_us "$line")"
		p999s="$p999s $(kv p999_us "$line")"
		maxs="$maxs $(kv max_us "$line")"
	done
	# shellcheck disable=SC2086
	echo "lat $name $(median $rps) $(median $p50s) $(median $p99s) $(median $p999s) $(median $maxs)" >> "$ROWS"
	note "$name, 1-address requests over $LCONNS connections: p99 us [$p99s ]"
done
mem latency

# --- warm p99 while libjvm converts ---------------------------------------------
COLDNOTE=
jdbg=
if [ "$COLD" = 0 ]; then
	COLDNOTE="skipped (SYMD_BENCH_COLD=0)"
elif [ ! -r "$JVM" ]; then
	COLDNOTE="skipped: no $JVM (apt-get install openjdk-17-jre-headless openjdk-17-dbg)"
else
	jdbg=$(debug_file "$JVM")
	[ -n "$jdbg" ] || COLDNOTE="skipped: no debug file for $JVM (apt-get install openjdk-17-dbg)"
fi
if [ -z "$COLDNOTE" ]; then
	jbid=$("$SYM" buildid "$JVM" | awk '{ print $1 }')
	# An address in libjvm's .text, for the readiness probe.
	jaddr=$(nm -D --defined-only "$JVM" | awk '$2 == "T" { print "0x" $1; exit }')
	cat "$jdbg" > /dev/null	# the page cache, as for the others
	# Both inputs' 1-address requests, interleaved.
	# shellcheck disable=SC2086
	set -- $NAMES
	if [ $# -ge 2 ]; then
		paste -d '\n' "$W/$1.single" "$W/$2.single" > "$W/mixed.single"
	else
		cp "$W/$1.single" "$W/mixed.single"
	fi
	note "libjvm: uploading $jdbg ($(stat -c %s "$jdbg") bytes) while $LCONNS connections send 1-address requests"
	"$LOAD" -c "$LCONNS" -d 900 -r "$W/cold.recs" "127.0.0.1:$PORT" \
		"$W/mixed.single" > "$W/cold.load" 2>> "$W/load.err" &
	LOAD_PID=$!
	sleep "$WARMUP"
	tb=$(date +%s%N)
	sleep 2
	t0=$(date +%s%N)
	code=$(curl -sS -o "$W/upload.resp" -w '%{http_code}' --max-time 600 \
		-T "$jdbg" -H "Authorization: Bearer $(cat "$W/token")" \
		"$URL/v1/debuginfo/$jbid" 2> "$W/upload.err")
	t1=$(date +%s%N)
	if [ "$code" != 201 ]; then
		echo "libjvm upload: HTTP $code: $(head -c 300 "$W/upload.resp" "$W/upload.err")" >> "$SAN"
		status=1
		t2=$t1
		COLDNOTE="the upload failed (HTTP $code)"
	elif ready "$jbid" "$jaddr"; then
		t2=$(date +%s%N)
		grep -q '"function"' "$W/ready.resp" ||
			echo "libjvm: no frame for $jaddr after the conversion: $(head -c 300 "$W/ready.resp")" >> "$SAN"
	else
		t2=$(date +%s%N)
		echo "libjvm: not ready after the upload: $(head -c 300 "$W/ready.resp")" >> "$SAN"
		status=1
		COLDNOTE="the conversion did not finish: $(head -c 200 "$W/ready.resp")"
	fi
	sleep 2
	t3=$(date +%s%N)
	kill -TERM "$LOAD_PID" 2> /dev/null
	wait "$LOAD_PID"
	LOAD_PID=
	errors "$(cat "$W/cold.load")" "latency during the libjvm upload and conversion"
	mem "libjvm conversion"
	csum=$(curl -sS --max-time 10 "$URL/metrics" |
		awk '/^symd_conversion_duration_seconds_sum/ { print $2 }')
	echo "coldtimes $(( (t1 - t0) / 1000000 )) $(( (t2 - t1) / 1000000 )) ${csum:--} $(stat -c %s "$jdbg")" >> "$ROWS"
	for win in "before $tb $t0" "upload $t0 $t1" "conversion $t1 $t2" \
		   "upload+conversion $t0 $t2" "after $t2 $t3"; do
		# shellcheck disable=SC2086
		set -- $win
		line=$("$LOAD" -s "$W/cold.recs" -a "$2" -b "$3")
		echo "cold $1 $(kv seconds "$line") $(kv requests "$line") $(kv p50_us "$line") $(kv p99_us "$line") $(kv max_us "$line") $(kv errors "$line")" >> "$ROWS"
	done
	# The slowest requests of the upload and the conversion, and when.
	awk -v a="$t0" -v b="$t2" -v t1="$t1" '$1 >= a && $1 < b {
		printf "%.1f %.2f\n", $2 / 1e6, ($1 - t1) / 1e9 }' "$W/cold.recs" |
		sort -k1,1 -n -r | head -5 > "$W/cold.slowest"
	note "libjvm: upload $(( (t1 - t0) / 1000000 )) ms, conversion $(( (t2 - t1) / 1000000 )) ms"
fi

# --- stop symd -------------------------------------------------------------------
kill -TERM "$SYMD_PID"
i=0
while kill -0 "$SYMD_PID" 2> /dev/null && [ $i -lt 200 ]; do
	sleep 0.05
	i=$((i + 1))
done
if kill -0 "$SYMD_PID" 2> /dev/null; then
	# Where it hangs, for whoever reads the report.
	{
		for t in /proc/"$SYMD_PID"/task/*; do
			echo "thread ${t##*/}: $(cat "$t/comm" 2>/dev/null) state $(awk '{ print $3 }' "$t/stat" 2>/dev/null) wchan $(cat "$t/wchan" 2>/dev/null)"
		done
		echo "sockets:"
		ss -tanp 2>/dev/null | grep "pid=$SYMD_PID,"
		echo "descriptors:"
		ls -l "/proc/$SYMD_PID/fd"
		if command -v gdb > /dev/null; then
			timeout 30 gdb "$SYMD" -p "$SYMD_PID" -batch \
				-ex 'thread apply all bt' 2>&1 |
				grep -v '^\[New LWP\|^$'
		fi
	} > "$W/symd-stuck.txt" 2>&1
	echo "symd did not stop within 10 s of SIGTERM (killed; threads in $W/symd-stuck.txt)" >> "$SAN"
	kill -9 "$SYMD_PID"
	status=1
fi
wait "$SYMD_PID"
rc=$?
SYMD_PID=
[ $rc = 0 ] || { echo "symd exited with status $rc after SIGTERM" >> "$SAN"; status=1; }
# Lines other than the log's start, stopping and stopped (docs/symd.8).
QUIET_RE=' info \(start\|stopping\|stopped\) '
if grep -v "$QUIET_RE" "$W/symd.err" | grep -q .; then
	echo "symd said on stderr: $(grep -v "$QUIET_RE" "$W/symd.err" | head -3 | tr '\n' ' ')" >> "$SAN"
fi
END=$(date +%s)
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

# --- report -------------------------------------------------------------------------
# $ROWS:
#   llvm NAME warm_addr_per_s cold_s rss_kb warm_cpu_us_per_addr
#   tput NAME CONNS addr_per_s p50_us p99_us symd_cpu_us_per_addr
#   lat NAME req_per_s p50_us p99_us p999_us max_us
#   coldtimes upload_ms conversion_ms symd_conversion_sum_s bytes
#   cold WINDOW seconds requests p50_us p99_us max_us errors
report() {
	echo "$HEADING"
	echo
	echo "bin/symd at $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%Y-%m-%d), $(nproc) cores."
	echo "Load average before: $LOAD0, after: $LOAD1; the run took $((END - START)) s."
	echo "Load: tests/bench/symd-load.c (keep-alive HTTP/1.1, closed loop, every answer checked for 200 and \"status\":\"ok\")."
	echo
	echo "#### Warm throughput: $BATCH-address batches"
	echo
	echo "symd: addresses answered per second, median of $RUNS runs of $SECS s (POST /v1/symbolize/<id>,"
	echo "the $NADDR addresses of the input in batches of $BATCH, cycled).  llvm-symbolizer: one co-process"
	echo "\`llvm-symbolizer --obj=F --inlining -C\` fed the same $NADDR addresses on stdin $PASSES times; the median"
	echo "rate of passes 2-$PASSES (warm; start-up and first pass left out).  ratio = symd / llvm-symbolizer."
	echo
	echo "| input | connections | symd addr/s | llvm-symbolizer addr/s | ratio | goal | met | batch p50 ms | batch p99 ms | CPU us/addr symd / llvm |"
	echo "|---|---:|---:|---:|---:|---|---|---:|---:|---:|"
	awk '
	$1 == "llvm" { L[$2] = $3; LC[$2] = $6 }
	$1 == "tput" {
		l = ($2 in L) ? L[$2] : 0
		if (l > 0) { ratio = sprintf("%.1fx", $4 / l); met = ($4 / l >= 5 ? "yes" : "NO") }
		else { ratio = "-"; met = "-" }
		printf "| %s | %s | %.0f | %s | %s | >= 5x | %s | %.1f | %.1f | %.2f / %s |\n", $2, $3, $4, (l > 0 ? sprintf("%.0f", l) : "failed"), ratio, met, $5 / 1000, $6 / 1000, $7, (($2 in LC) ? sprintf("%.2f", LC[$2]) : "-")
	}' "$ROWS"
	echo
	echo "CPU us/addr: symd's CPU time (user + system, all threads, /proc/PID/stat) over a whole run divided by"
	echo "the addresses it answered (median of the runs); llvm-symbolizer's over a warm pass (median of the"
	echo "passes).  Less noisy than wall time on a shared machine; the load generator's own CPU is not in it."
	echo
	echo "llvm-symbolizer co-process, per input:"
	echo
	awk '$1 == "llvm" { printf "- %s: %.2f us/address warm (%.0f addr/s), %.2f us of CPU; first pass (with start-up) %.2f s; peak RSS %.0f MB\n", $2, 1e6 / $3, $3, $6, $4, $5 / 1024 }' "$ROWS"
	echo
	echo "#### Latency of 1-address requests (warm)"
	echo
	echo "$LCONNS connections, closed loop, the first $NSINGLE addresses of the input one per request, cycled;"
	echo "percentiles over every request of a run ($SECS s), medians of $RUNS runs."
	echo
	echo "| input | requests/s | p50 ms | p99 ms | p99.9 ms | max ms | goal | met |"
	echo "|---|---:|---:|---:|---:|---:|---|---|"
	awk '$1 == "lat" { printf "| %s | %.0f | %.3f | %.3f | %.3f | %.3f | p99 <= 2 ms | %s |\n", $2, $3, $4 / 1000, $5 / 1000, $6 / 1000, $7 / 1000, ($5 <= 2000 ? "yes" : "NO") }' "$ROWS"
	echo
	echo "#### Warm p99 while libjvm converts"
	echo
	if [ -n "$COLDNOTE" ]; then
		echo "$COLDNOTE."
		echo
	fi
	if grep -q '^cold ' "$ROWS"; then
		echo "$LCONNS connections send 1-address requests of the warm inputs (interleaved) while libjvm's debug"
		echo "file is uploaded (PUT /v1/debuginfo/<id>, curl -T, token) and symd converts it with its default"
		echo "workers.  Windows by request start: before = 2 s before the upload; conversion = from the"
		echo "upload's 201 to the first \"ok\" for libjvm (a POST with wait_ms=30000); after = 2 s after."
		echo
		awk '$1 == "coldtimes" { printf "Upload of %.0f MB: %.2f s; conversion (201 to ok): %.2f s; symd_conversion_duration_seconds_sum: %s s.\n", $5 / 1e6, $2 / 1000, $3 / 1000, $4 }' "$ROWS"
		echo
		echo "| window | seconds | requests | p50 ms | p99 ms | max ms | goal | met |"
		echo "|---|---:|---:|---:|---:|---:|---|---|"
		awk '$1 == "cold" {
			g = "-"; m = "-"
			if ($2 == "conversion" || $2 == "upload+conversion") { g = "p99 <= 5 ms"; m = ($6 <= 5000 ? "yes" : "NO") }
			if ($4 == 0) m = "no requests"
			printf "| %s | %.2f | %s | %.3f | %.3f | %.3f | %s | %s |\n", $2, $3, $4, $5 / 1000, $6 / 1000, $7 / 1000, g, m
		}' "$ROWS"
		echo
		if [ -s "$W/cold.slowest" ]; then
			printf 'Slowest requests of the upload and conversion (ms, at s after the 201; negative: during the upload): %s.\n' \
				"$(awk '{ printf "%s%s at %+.2f", (NR > 1 ? ", " : ""), $1, $2 }' "$W/cold.slowest")"
			echo
		fi
	fi
	echo "#### symd memory (/proc/PID/status)"
	echo
	echo "VmRSS now (anonymous + file-backed, the latter mostly the store's LMDB map) and VmHWM, the peak so far."
	echo
	echo "| after | VmRSS MB | RssAnon MB | RssFile MB | VmHWM MB |"
	echo "|---|---:|---:|---:|---:|"
	awk '{
		h = $NF; f = $(NF - 1); a = $(NF - 2); r = $(NF - 3)
		$NF = ""; $(NF - 1) = ""; $(NF - 2) = ""; $(NF - 3) = ""; sub(/ +$/, "")
		printf "| %s | %.1f | %.1f | %.1f | %.1f |\n", $0, r / 1024, a / 1024, f / 1024, h / 1024
	}' "$W/mem.txt"
	echo
	problems "$SAN"
}
report > "$W/report.md"
publish "$HEADING" "$W/report.md" "$OUT/report.md"
exit $status
