#!/bin/sh
# symd-attack-bench.sh - the figures of issue 24 in `make bench`: symd's
# warm latency and memory under each hostile client of the issue, as
# ratios to the same figures with no attack, and against the budgets
# symd's limits state (docs/symd.8).  One run, real services only: symd
# (and for the last part a real debuginfod and the stub upstream) on
# 127.0.0.1, port 0 read back (debuginfod has no port 0: the e2e
# helper's probed free port), stopped at the end.
#
# The attacks are the chaos tests' own (tests/e2e/lib/): store_race.py
# (t1050), symd_attack.py (t2020, t2021), elf-bomb.py (t0240) and the
# queue flood of t1052 behind the hanging upstream of t2022, started
# through the tests' helpers (lib.sh, symd-lib.sh, attack-lib.sh,
# debuginfod-lib.sh).  Default limits everywhere (no --max-* option).
#
#   warm probe   tests/bench/symd-load.c -i: SYMD_ATTACK_PROBE_CONNS (2)
#                keep-alive connections, each sending a 1-address
#                POST /v1/symbolize/<id> (the instruction addresses of
#                the fixture gcc-O2-d5-cxx, uploaded and warm, cycled)
#                every SYMD_ATTACK_PACE_US (2000) microseconds: about
#                1,000 requests a second that leave symd idle most of the
#                time.  Every answer is checked (200 and "ok").  Latency
#                is one request's (first byte sent to last received); a
#                stall counts once.  p50, p99 and max over every request
#                of a window (nearest rank).
#   no attack    the probe alone, SYMD_ATTACK_BASE_RUNS (3) windows of
#                SYMD_ATTACK_SECONDS (10) s before the attacks, and one
#                after them; the ratio's denominator is the median p99 of
#                the windows before.
#   attacks      in turn, each for SYMD_ATTACK_SECONDS while the probe
#                runs (symd_attack.py's own /healthz probe, every 0.2 s,
#                gives the /healthz column):
#                race    t1050: SYMD_ATTACK_RACE_ROUNDS (200) rounds of
#                        PUT, 0-4 ms, DELETE, symbolize (another build ID),
#                        then a quarter as many with PUT and DELETE at once
#                trickle t2020: 1,100 connections POST with
#                        Content-Length 8000000, then 1 byte a second
#                loris   t2020: 1,100 connections send their headers 1
#                        byte a second
#                fill    t2020: 150 connections send 8 MB bodies but the
#                        last byte (1.2 GB if held whole)
#                bigans  t2021: 4 connections ask 100,000 copies of the
#                        fixture's deepest address (14 frames) and read
#                        the answer 4 KiB a second
#                bombs   t0240: PUT of the zstd (512 MiB declared), three-
#                        section zstd and zlib bombs, each waited for
#                        (badconv), over and over (?force=1: an upload
#                        no better than the stored one is a 409 else)
#                flood   t1052 + t2022: a second symd whose upstreams are
#                        a debuginfod that hangs (the stub, delay=3600)
#                        and a real debuginfod of the fixtures'
#                        debugroot; 4 POSTs of 1,024 random cold build IDs
#                        from 127.0.0.1 fill its queue (--queue-max 4096),
#                        then another client (127.0.0.2) asks a cold ID
#                        the real debuginfod has
#   memory       for each attack, symd's VmRSS at its start and its peak:
#                VmHWM, reset first (echo 5 > /proc/PID/clear_refs; when
#                that is refused, symd_attack.py's 0.1 s samples), the
#                growth (peak - start) against the budget that bounds what
#                the attack makes symd hold: --max-buffered (128 MiB) for
#                bodies, --max-conns (1024) x 64 KiB of unparsed input a
#                connection (SYMD_HTTP_READ_MAX), --max-answers (512 MiB)
#                for answers; the decompression limits (--max-inflate:
#                1 GiB a section, 2 GiB a file, ratio 256) for the bombs.
#   bombs (CLI)  /usr/bin/time -f %M of `sym addr2line -e BOMB ADDR` with
#                the default limits: peak RSS against the declared size
#                and the per-section limit.
#   cold fetch   the time from the other client's first POST (wait_ms
#                30000, asked again while "pending") to "ok": with no
#                flood (one cold ID), and with the flood (another).
#
# Nothing here is a pass/fail check (the chaos tests in `make check` are);
# the exit status is 1 when symd cannot be started, a probe gets anything
# but 200 "ok" with no attack, or an attack fails to run.
#
# Knobs: SYMD_ATTACK_SECONDS SYMD_ATTACK_BASE_RUNS SYMD_ATTACK_PACE_US
#        SYMD_ATTACK_PROBE_CONNS SYMD_ATTACK_RACE_ROUNDS
#        SYMD_ATTACK_FLOOD (0 skips the flood) BENCH_DIR SYM SYMD.  The
#        section is printed, written to $BENCH_DIR/attack/report.md and
#        appended to $BENCH_DIR/report.md (replacing an earlier one).
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 1
SYM_ROOT=$ROOT
export SYM_ROOT
OUT=${BENCH_DIR:-$ROOT/build/bench}
W=$OUT/attack
SECS=${SYMD_ATTACK_SECONDS:-10}
BASE_RUNS=${SYMD_ATTACK_BASE_RUNS:-3}
PACE=${SYMD_ATTACK_PACE_US:-2000}
PCONNS=${SYMD_ATTACK_PROBE_CONNS:-2}
ROUNDS=${SYMD_ATTACK_RACE_ROUNDS:-200}
FLOOD=${SYMD_ATTACK_FLOOD:-1}
LOAD=$W/symd-load
HEADING='### symd under attack (tests/bench/symd-attack-bench.sh)'

note() { echo "symd-attack-bench: $*" >&2; }
die() { note "$*"; exit 1; }

rm -rf "$W"
mkdir -p "$W" || die "cannot create $W"

# The tests' helpers: $T (a temporary directory removed at exit), fixture,
# start_symd/stop_symd (symd killed at exit), the upstreams, the attacks.
. "$ROOT/tests/e2e/lib/lib.sh"
. "$ROOT/tests/e2e/lib/symd-lib.sh"
. "$ROOT/tests/e2e/lib/debuginfod-lib.sh"
. "$ROOT/tests/e2e/lib/attack-lib.sh"
# median, kv, proc_cpu, problems, publish
. "$ROOT/tests/bench/lib.sh"
unset DEBUGINFOD_URLS

[ -x "$SYM" ] || die "no $SYM; run make first"
[ -x "$SYMD" ] || die "no $SYMD; run make first"
for c in curl python3 objdump zstd gcc; do
	command -v "$c" > /dev/null || die "no $c"
done
[ -x /usr/bin/time ] || die "no /usr/bin/time (apt-get install time)"
# 1,100 attacking sockets plus as many in symd.
ulimit -n 4096 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null
[ "$(ulimit -n)" -ge 2300 ] || die "needs 2300 descriptors, have $(ulimit -n)"

${CC:-cc} -std=gnu11 -O2 -g -Wall -Wextra -Ilibsym -o "$LOAD" \
	tests/bench/symd-load.c -pthread || die "cannot build $LOAD"

PROBE_PID=
at_exit '[ -n "$PROBE_PID" ] && kill "$PROBE_PID" 2>/dev/null'
status=0
START=$(date +%s)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
ROWS=$W/rows.txt	# see report()
SAN=$W/problems.txt
: > "$ROWS"
: > "$SAN"

# --- inputs ---------------------------------------------------------------
# The race's build ID (not the probe's).
fixture_debug gcc-O3-d4-c || die "cannot build the fixtures"
rexe=$exe rid=$id rdbg=$dbg
[ -r "$rdbg" ] || die "no debug file for $rid"
raddr=0x$(objdump -d "$rexe" | awk '/<main>:/{print $1; exit}')
# The probe's.
fixture_debug gcc-O2-d5-cxx || die "cannot build the fixtures"
objdump -d "$exe" | awk '/^ +[0-9a-f]+:/{sub(":", "", $1); print "0x" $1}' \
	> "$W/addrs"
awk -v p="/v1/symbolize/$id" '{
	print p " 1 {\"addresses\":[\"" $1 "\"],\"wait_ms\":0}" }' \
	"$W/addrs" > "$W/warm.single"
warm=$(head -1 "$W/addrs")
# The address with the most frames (t2021).
deep=$("$SYM" addr2line -a -i -f -e "$exe" $(cat "$W/addrs") |
	awk '/^0x/{if (a) print n / 2, a; a = $1; n = 0; next} {n++}
	     END{print n / 2, a}' | sort -n | tail -1)
ndeep=${deep%% *}
deep=${deep#* }
# The bombs (t0240), from a small program.
cat > "$W/m.c" <<'C'
static int twice(int x) { return 2 * x; }
int main(int argc, char **argv) { (void)argv; return twice(argc); }
C
gcc -g -O1 -o "$W/m" "$W/m.c" || die "cannot build $W/m"
maddr=0x$(nm "$W/m" | awk '$3 == "main" { print $1 }')
BOMB="python3 $ROOT/tests/e2e/lib/elf-bomb.py"
$BOMB "$W/m" "$W/zstd.bomb" zstd 512M &&
$BOMB "$W/m" "$W/zstd3.bomb" zstd 256M .debug_info .debug_abbrev .debug_str &&
$BOMB "$W/m" "$W/zlib.bomb" zlib 256M || die "cannot write the bombs"

# --- helpers ----------------------------------------------------------------
# status_kb FIELD: a field of symd's /proc/PID/status, in kB.
status_kb() {
	awk -v f="$1:" '$1 == f { print $2 }' "/proc/$SYMD_PID/status"
}

# cpu: symd's CPU time so far (user + system, all threads), in clock ticks.
cpu() { proc_cpu "$SYMD_PID"; }
HZ=$(getconf CLK_TCK)

# peak_reset: symd's VmHWM starts again from its VmRSS now; false when the
# kernel refuses (then peaks come from symd_attack.py's samples).
HWM_RESET=1
peak_reset() {
	echo 5 2>/dev/null > "/proc/$SYMD_PID/clear_refs" && return 0
	HWM_RESET=
	return 1
}

# probe_start NAME: the warm probe, in the background, until probe_stop.
probe_start() {
	P_NAME=$1
	"$LOAD" -c "$PCONNS" -i "$PACE" -d 36000 -r "$W/$1.recs" \
		"127.0.0.1:$SYMD_PORT" "$W/warm.single" > "$W/$1.load" \
		2>> "$W/load.err" &
	PROBE_PID=$!
	sleep 0.5	# connected, first answers in
	P_T0=$(date +%s%N)
	P_RSS0=$(status_kb VmRSS)
	P_CPU0=$(cpu)
	peak_reset
}

# probe_stop [PEAK_KB]: end the probe; one row
#   probe NAME requests p50_us p99_us max_us errors rss0_kb peak_kb cpu_pct
# PEAK_KB: a sampled peak to use when VmHWM could not be reset.
probe_stop() {
	P_T1=$(date +%s%N)
	p_hwm=$(status_kb VmHWM)
	p_cpu=$(awk -v t=$(($(cpu) - P_CPU0)) -v hz="$HZ" -v a="$P_T0" -v b="$P_T1" \
		'BEGIN { printf "%.0f", t / hz * 1e11 / (b - a) }')
	[ -z "$HWM_RESET" ] && [ -n "${1:-}" ] && p_hwm=$1
	kill -TERM "$PROBE_PID" 2> /dev/null
	wait "$PROBE_PID"
	PROBE_PID=
	p_line=$("$LOAD" -s "$W/$P_NAME.recs" -a "$P_T0" -b "$P_T1")
	echo "$P_NAME $p_line" >> "$W/probes.txt"
	echo "probe $P_NAME $(kv requests "$p_line") $(kv p50_us "$p_line") $(kv p99_us "$p_line") $(kv max_us "$p_line") $(kv errors "$p_line") $P_RSS0 $p_hwm $p_cpu" >> "$ROWS"
	note "$P_NAME: $p_line"
}

# attack NAME MODE N [ARG]: symd_attack.py (symd_attack's modes) for SECS
# under the probe; also a row "healthz NAME max_ms fail n".
attack() {
	a_name=$1
	shift
	probe_start "$a_name"
	$ATTACK "$SYMD_PORT" "$SYMD_PID" "$id" "$warm" "$1" "$2" "$SECS" \
		${3:+"$3"} > "$W/$a_name.attack" 2>&1 ||
		{ echo "$a_name: symd_attack.py failed: $(tail -3 "$W/$a_name.attack")" >> "$SAN"; status=1; }
	cp "$W/$a_name.attack" "$T/att.out"
	probe_stop "$(field rss_peak_kb)"
	echo "healthz $a_name $(field healthz_max_ms) $(field healthz_fail) $(field healthz_n) $(field statuses)" >> "$ROWS"
	settle
}

# settle: the budgets given back before the next attack.
settle() {
	gauge_settles symd_http_buffered_bytes > /dev/null ||
		echo "symd_http_buffered_bytes did not return to 0" >> "$SAN"
	gauge_settles symd_answer_bytes > /dev/null ||
		echo "symd_answer_bytes did not return to 0" >> "$SAN"
}

# --- symd, warm -------------------------------------------------------------
note "symd with its default limits; probe: $PCONNS connections, a request every $PACE us each"
upload_warm "$warm" > "$W/upload.tap" || die "symd did not start"
grep -q '^ok' "$W/upload.tap" || die "upload failed: $(cat "$W/upload.tap")"
symd_curl -o "$W/warm.resp" -d "{\"addresses\":[\"$warm\"],\"wait_ms\":10000}" \
	"$SYMD_URL/v1/symbolize/$id"
grep -q '"status":"ok"' "$W/warm.resp" || die "not warm: $(head -c 300 "$W/warm.resp")"

r=0
while [ "$r" -lt "$BASE_RUNS" ]; do
	r=$((r + 1))
	probe_start "none-$r"
	sleep "$SECS"
	probe_stop
done
grep -q '^probe none-[0-9]* [0-9]* [0-9.]* [0-9.]* [0-9.]* 0 ' "$ROWS" ||
	{ echo "the probe got errors with no attack (see $W/load.err)" >> "$SAN"; status=1; }

# --- race (t1050) ---------------------------------------------------------------
RACE="python3 $ROOT/tests/e2e/lib/store_race.py"
probe_start race
$RACE seq 127.0.0.1 "$SYMD_PORT" secret-token "$rid" "$rdbg" "$raddr" \
	"$ROUNDS" > "$W/race.seq" 2>&1 ||
	{ echo "race: store_race.py seq failed: $(grep FAIL "$W/race.seq" | head -3)" >> "$SAN"; status=1; }
$RACE par 127.0.0.1 "$SYMD_PORT" secret-token "$rid" "$rdbg" "$raddr" \
	$((ROUNDS / 4)) > "$W/race.par" 2>&1 ||
	{ echo "race: store_race.py par failed: $(grep FAIL "$W/race.par" | head -3)" >> "$SAN"; status=1; }
probe_stop
echo "racesecs $(( (P_T1 - P_T0) / 1000000 ))" >> "$ROWS"
settle

# --- slow clients (t2020), amplification (t2021) ---------------------------
attack trickle trickle 1100 8000000
attack loris loris 1100
attack fill fill 150 8000000
attack bigans bigans 4 "100000:$deep"

# --- bombs uploaded (t0240) -------------------------------------------------
probe_start bombs
nb=0 bad=0
end=$(( $(date +%s) + SECS ))
while [ "$(date +%s)" -lt "$end" ]; do
	for b in zstd zstd3 zlib; do
		bid=$("$SYM" buildid "$W/$b.bomb" | cut -d' ' -f1)
		c=$(http_status -X PUT -H 'Authorization: Bearer secret-token' \
			--data-binary @"$W/$b.bomb" \
			"$SYMD_URL/v1/debuginfo/$bid?force=1")
		symd_curl -o "$W/bomb.resp" -X POST \
			-d "{\"addresses\":[\"$maddr\"],\"wait_ms\":10000}" \
			"$SYMD_URL/v1/symbolize/$bid"
		nb=$((nb + 1))
		[ "$c" = 201 ] && grep -q 'decompression limits' "$W/bomb.resp" &&
			bad=$((bad + 1))
	done
done
probe_stop
echo "bombsymd $nb $bad" >> "$ROWS"
[ "$bad" = "$nb" ] ||
	echo "bombs: $((nb - bad)) of $nb uploads not refused as badconv: $(head -c 200 "$W/bomb.resp")" >> "$SAN"
settle

probe_start none-after
sleep "$SECS"
probe_stop
stop_symd
[ "$SYMD_STATUS" = 0 ] ||
	{ echo "symd exited with status $SYMD_STATUS after SIGTERM" >> "$SAN"; status=1; }

# --- bombs, CLI (t0240) ---------------------------------------------------------
for b in zstd zstd3 zlib; do
	SYM_STORE="$T/st.$b" /usr/bin/time -o "$W/$b.time" -f '%M %e' \
		timeout 60 "$SYM" addr2line -e "$W/$b.bomb" "$maddr" \
		> "$W/$b.out" 2> "$W/$b.err"
	rc=$?
	echo "bombcli $b $(stat -c %s "$W/$b.bomb") $(tail -1 "$W/$b.time") $rc $(python3 "$ROOT/tests/bench/benchutil.py" debugsize "$W/$b.bomb" | cut -d' ' -f1)" >> "$ROWS"
done

# --- cold lookups behind a hanging upstream (t1052, t2022) ----------------------
FLOODNOTE=
if [ "$FLOOD" = 0 ]; then
	FLOODNOTE="skipped (SYMD_ATTACK_FLOOD=0)"
elif ! command -v debuginfod > /dev/null; then
	FLOODNOTE="skipped: no debuginfod (apt-get install debuginfod)"
else
	curl --interface 127.0.0.2 -s -o /dev/null "http://127.0.0.1:9/" 2>/dev/null
	[ $? = 45 ] && FLOODNOTE="skipped: cannot bind 127.0.0.2 (curl --interface)"
fi
if [ -z "$FLOODNOTE" ]; then
	cx=$(fixture clang-O3-d4-cxx) && cy=$(fixture clang-O2-d4-c) ||
		die "cannot build the fixtures"
	cidx=$("$SYM" buildid "$cx" | cut -d' ' -f1)
	cidy=$("$SYM" buildid "$cy" | cut -d' ' -f1)
	cax=0x$(objdump -d "$cx" | awk '/<main>:/{print $1; exit}')
	cay=0x$(objdump -d "$cy" | awk '/<main>:/{print $1; exit}')
	start_debuginfod "$SYM_ROOT/fixtures/build/debugroot" "$cidx" "$cidy" ||
		die "debuginfod did not start"
	start_stub_debuginfod --file "$dbg" || die "the stub did not start"
	start_symd --upload-token-file "$T/token" --quiet \
		--debuginfod-urls "$STUB_URL/delay=3600 $DEBUGINFOD_URL" ||
		die "symd did not start"

	# cold ID ADDR: seconds from the first ask of 127.0.0.2 to "ok".
	cold() {
		c_t0=$(date +%s%N)
		c_i=0
		while [ $c_i -lt 20 ]; do
			curl -sS --max-time 40 --interface 127.0.0.2 -X POST \
				-d "{\"modules\":[{\"build_id\":\"$1\",\"addresses\":[\"$2\"]}],\"wait_ms\":30000}" \
				"$SYMD_URL/v1/symbolize" > "$W/cold.resp" 2>&1
			grep -q '"status":"pending"' "$W/cold.resp" || break
			c_i=$((c_i + 1))
		done
		c_t1=$(date +%s%N)
		grep -q '"status":"ok"' "$W/cold.resp" ||
			echo "cold $1: not ok: $(head -c 200 "$W/cold.resp")" >> "$SAN"
		awk -v a="$c_t0" -v b="$c_t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'
	}
	cnone=$(cold "$cidx" "$cax")
	probe_start flood
	python3 -c "
import json, random
r = random.Random(24)
for _ in range(4):
    print(json.dumps({'modules': [{'build_id': '%040x' % r.getrandbits(160),
        'addresses': ['0x10']} for _ in range(1024)], 'wait_ms': 0}))" \
		> "$W/flood.json"
	fl=
	while read -r body; do
		fl="$fl $(curl -s -o /dev/null -w '%{http_code}' --max-time 30 \
			-X POST -d "$body" "$SYMD_URL/v1/symbolize")"
	done < "$W/flood.json"
	q=$(curl -s --max-time 5 "$SYMD_URL/healthz" |
		sed -n 's/.*"jobs_queued":\([0-9]*\).*/\1/p')
	cflood=$(cold "$cidy" "$cay")
	probe_stop
	echo "cold $cnone $cflood ${q:--}$fl" >> "$ROWS"
	stop_symd
fi
END=$(date +%s)
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
cp "$T/symd.err" "$W/symd.err" 2>/dev/null	# $T goes at exit

# --- report -------------------------------------------------------------------------
# $ROWS:
#   probe NAME requests p50_us p99_us max_us errors rss0_kb peak_kb cpu_pct
#   healthz NAME max_ms fail n statuses
#   racesecs MS
#   bombsymd UPLOADS BADCONV
#   bombcli NAME bytes peak_kb seconds status declared_bytes
#   cold NONE_S FLOOD_S QUEUED STATUS...
report() {
	base=$(awk '$1 == "probe" && $2 ~ /^none-[0-9]/ { printf "%s ", $5 }' "$ROWS")
	# shellcheck disable=SC2086
	base=$(median $base)
	echo "$HEADING"
	echo
	echo "bin/symd at $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u +%Y-%m-%d), $(nproc) cores."
	echo "Load average before: $LOAD0, after: $LOAD1; the run took $((END - START)) s."
	echo "symd with its default limits.  Warm probe: tests/bench/symd-load.c -i, $PCONNS connections each sending"
	echo "a 1-address POST /v1/symbolize/<id> (warm fixture) every $((PACE / 1000)) ms; every answer checked"
	echo "(200 and \"ok\").  Each window ${SECS} s; percentiles over every request of the window."
	echo
	echo "#### Warm p99 under each attack"
	echo
	echo "no attack = median p99 of the $BASE_RUNS windows before the attacks ($(awk -v b="$base" 'BEGIN { printf "%.3f", b / 1000 }') ms)."
	echo "/healthz max: symd_attack.py's own probe (every 0.2 s, 2 s timeout; fail = timed out or not 200),"
	echo "a Python thread of the attacking process, so its figure includes that process's own delays."
	echo "symd CPU: its CPU time (all threads, /proc/PID/stat) over the window's length; the attackers (Python,"
	echo "on the same $(nproc) cores) are not in it."
	echo
	echo "| window | attack | requests | p50 ms | p99 ms | p99 / no attack | max ms | errors | symd CPU % | /healthz max ms (fail) |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
	awk -v b="$base" -v rounds="$ROUNDS" -v ndeep="$ndeep" '
	$1 == "healthz" { H[$2] = sprintf("%.0f (%d of %d)", $3, $4, $4 + $5) }
	$1 == "probe" { P[++n] = $0 }
	END {
		d["race"] = sprintf("t1050: %d rounds PUT, 0-4 ms, DELETE, symbolize; %d with PUT and DELETE at once", rounds, rounds / 4)
		d["trickle"] = "t2020: 1,100 connections, Content-Length 8000000, 1 byte/s"
		d["loris"] = "t2020: 1,100 connections, headers at 1 byte/s"
		d["fill"] = "t2020: 150 connections, 8 MB bodies but the last byte"
		d["bigans"] = sprintf("t2021: 4 clients ask 100,000 copies of a %d-frame address, read 4 KiB/s", ndeep)
		d["bombs"] = "t0240: the three bombs uploaded, each waited for, over and over"
		d["flood"] = "t1052/t2022: 4 x 1,024 cold IDs, upstream hangs; another client fetches a cold ID"
		for (i = 1; i <= n; i++) {
			split(P[i], f, " ")
			nm = f[2]
			what = (nm in d) ? d[nm] : (nm ~ /^none/ ? "none" : "-")
			printf "| %s | %s | %s | %.3f | %.3f | %s | %.1f | %s | %s | %s |\n", nm, what, f[3], f[4] / 1000, f[5] / 1000, (b > 0 ? sprintf("%.2f", f[5] / b) : "-"), f[6] / 1000, f[7], f[10], ((nm in H) ? H[nm] : "-")
		}
	}' "$ROWS"
	echo
	awk '$1 == "racesecs" { printf "The race took %.1f s.  ", $2 / 1000 }
	     $1 == "bombsymd" { printf "Bombs uploaded: %d, refused as badconv: %d.  ", $2, $3 }' "$ROWS"
	echo
	echo
	echo "#### symd's peak RSS under each attack, against the budgets"
	echo
	if [ -n "$HWM_RESET" ]; then
		echo "peak = VmHWM over the window, reset at its start (/proc/PID/clear_refs); start = VmRSS then."
	else
		echo "peak = the highest of symd_attack.py's VmRSS samples (every 0.1 s; VmHWM could not be reset);"
		echo "for the windows without symd_attack.py, VmHWM since symd started.  start = VmRSS then."
	fi
	echo "budget = what symd's limits let the attack make it hold (docs/symd.8): --max-buffered 128 MiB"
	echo "(request bodies, all together), --max-conns 1024 x 64 KiB of unparsed input (SYMD_HTTP_READ_MAX),"
	echo "--max-answers 512 MiB (answers being built or unsent); the bombs: --max-inflate 1 GiB a section."
	echo
	echo "| window | start MB | peak MB | growth MB | budget MiB | growth / budget |"
	echo "|---|---:|---:|---:|---|---:|"
	awk '$1 == "probe" {
		nm = $2; r0 = $8; pk = $9
		bud = "-"; bb = 0
		if (nm == "trickle" || nm == "fill") { bb = 128 + 64; bud = "192 (bodies 128 + input 64)" }
		else if (nm == "loris") { bb = 64; bud = "64 (input)" }
		else if (nm == "bigans") { bb = 512; bud = "512 (answers)" }
		else if (nm == "bombs") { bb = 1024; bud = "1024 (a section; the file 2048)" }
		else if (nm == "race") bud = "none stated (uploads stream to disk)"
		else if (nm == "flood") bud = "none stated (--queue-max 4096 jobs)"
		g = (pk - r0) / 1024
		printf "| %s | %.1f | %.1f | %.1f | %s | %s |\n", nm, r0 / 1024, pk / 1024, g, bud, (bb > 0 ? sprintf("%.2f", g / bb) : "-")
	}' "$ROWS"
	echo
	echo "#### Decompression bombs, sym addr2line (t0240's bombs, default limits)"
	echo
	echo "\`/usr/bin/time -f %M sym addr2line -e BOMB ADDR\`; declared = the .debug_* sections' uncompressed"
	echo "sizes from their headers; limits: 1 GiB a section, 2 GiB a file, ratio 256 past the first MiB."
	echo
	echo "| bomb | file KB | declared MiB | peak RSS MB | peak / declared | peak / section limit | seconds | exit |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	awk '$1 == "bombcli" { printf "| %s | %.0f | %.0f | %.1f | %.4f | %.4f | %s | %s |\n", $2, $3 / 1000, $7 / 1048576, $4 / 1024, $4 * 1024 / $7, $4 / 1048576, $5, $6 }' "$ROWS"
	echo
	echo "#### A cold lookup of another client behind a flood and a hanging upstream"
	echo
	if [ -n "$FLOODNOTE" ]; then
		echo "$FLOODNOTE."
	else
		echo "A second symd, upstreams: the stub debuginfod with delay=3600 (accepts, never answers) and a real"
		echo "debuginfod of fixtures/build/debugroot; default --fetch-first-byte-ms (15 s), --fetch-workers (4),"
		echo "--queue-max (4096).  The flood: 4 POSTs of 1,024 random build IDs from 127.0.0.1, wait_ms 0."
		echo "Then 127.0.0.2 asks a cold ID (POST /v1/symbolize, wait_ms 30000, again while pending) until ok."
		echo
		echo "| case | seconds to ok | ratio |"
		echo "|---|---:|---:|"
		awk '$1 == "cold" {
			printf "| no flood | %.2f | 1 |\n", $2
			printf "| flood (queued after it: %s; its POSTs: %s %s %s %s) | %.2f | %.0fx |\n", $4, $5, $6, $7, $8, $3, ($2 > 0 ? $3 / $2 : 0)
		}' "$ROWS"
	fi
	echo
	problems "$SAN"
}
report > "$W/report.md"
publish "$HEADING" "$W/report.md" "$OUT/report.md"
exit $status
