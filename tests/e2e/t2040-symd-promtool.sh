#!/bin/sh
# symd's /metrics in Prometheus' conventions: after some traffic of every
# route, `promtool check metrics` (Debian's prometheus package) finds
# nothing to say; the process_* figures agree with what /proc says of
# the daemon; symd_build_info names the version; the request-latency
# histograms are per route, with a bounded set of route labels whatever
# paths clients ask for, and count the requests made.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need curl python3 promtool

exe=$(fixture gcc-O2-d5-cxx) || plan_skip "cannot build the fixtures"
A=$("$SYM" buildid "$exe" | cut -d' ' -f1)
dbg="$SYM_ROOT/fixtures/build/debugroot/.build-id/$(echo "$A" | cut -c1-2)/$(echo "$A" | cut -c3-).debug"
echo secret > "$T/token"

plan 14

t_before=$(date +%s.%N)
start_symd --upload-token-file "$T/token" || exit 1
t_after=$(date +%s.%N)
U=$SYMD_URL

# Traffic: every route, good and bad, and 100 distinct unknown paths.
curl -s -o /dev/null "$U/healthz"
curl -s -o /dev/null -X PUT -H "Authorization: Bearer secret" \
	--data-binary @"$dbg" "$U/v1/debuginfo/$A"
for i in 1 2 3; do
	curl -s -o /dev/null -d '{"addresses":["0x1000"],"wait_ms":20000}' \
		"$U/v1/symbolize/$A"
done
curl -s -o /dev/null -d '{"modules":' "$U/v1/symbolize"
curl -s -o /dev/null "$U/buildid/$A/debuginfo"
curl -s -o /dev/null -I "$U/v1/debuginfo/$A"
i=0
while [ $i -lt 100 ]; do
	echo "url = \"$U/random/$i/$(date +%N)\""
	echo "output = /dev/null"
	i=$((i + 1))
done > "$T/urls"
curl -s -K "$T/urls"

curl -sS "$U/metrics" > "$T/m1"
python3 - "$SYMD_PID" > "$T/proc" <<'EOF'
import os, sys
pid = sys.argv[1]
st = {l.split(":")[0]: l.split()[1] for l in open("/proc/%s/status" % pid)
      if l.startswith(("VmRSS", "VmSize"))}
stat = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
btime = [int(l.split()[1]) for l in open("/proc/stat")
         if l.startswith("btime")][0]
tick = os.sysconf("SC_CLK_TCK")
lim = [l for l in open("/proc/%s/limits" % pid)
       if l.startswith("Max open files")][0].split()[3]
print("rss", int(st["VmRSS"]) * 1024)
print("vsize", int(st["VmSize"]) * 1024)
print("start", btime + int(stat[19]) / tick)
print("cpu", (int(stat[11]) + int(stat[12])) / tick)
print("fds", len(os.listdir("/proc/%s/fd" % pid)))
print("maxfds", lim)
EOF
curl -sS "$U/metrics" > "$T/m2"

ok "promtool check metrics: no problem" sh -c "promtool check metrics < '$T/m1'"
ok "the second scrape too" sh -c "promtool check metrics < '$T/m2'"

# val FILE NAME: the value of the sample NAME (with its labels, if any).
val() { awk -v n="$2" '$1 == n { print $2 }' "$1"; }
proc() { awk -v n="$1" '$1 == n { print $2 }' "$T/proc"; }
# within A B LO HI: LO <= A/B <= HI
within() { python3 -c "import sys; a, b = float('$1'), float('$2'); sys.exit(not (b > 0 and $3 <= a / b <= $4))"; }

for n in process_cpu_seconds_total process_resident_memory_bytes \
	process_virtual_memory_bytes process_open_fds process_max_fds \
	process_start_time_seconds; do
	[ -n "$(val "$T/m1" $n)" ] || echo "$n" >> "$T/missing"
done
is "every process_* metric is there" "$(cat "$T/missing" 2>/dev/null)" ""
ok "RSS near /proc's VmRSS ($(val "$T/m1" process_resident_memory_bytes) vs $(proc rss))" \
	within "$(val "$T/m1" process_resident_memory_bytes)" "$(proc rss)" 0.8 1.25
ok "virtual memory near /proc's VmSize" \
	within "$(val "$T/m1" process_virtual_memory_bytes)" "$(proc vsize)" 0.8 1.25
# The kernel's start time is in clock ticks since boot (10 ms), and boot
# time is in whole seconds: a second of slack either way.
ok "start time $(val "$T/m1" process_start_time_seconds) between the launch ($t_before) and its port ($t_after)" \
	python3 -c "import sys; s = float('$(val "$T/m1" process_start_time_seconds)'); sys.exit(not ($t_before - 1 <= s <= $t_after + 1 and abs(s - $(proc start)) < 0.02))"
# symd's figure is the CPU clock's, in microseconds, and a daemon that
# served 110 requests has used some; /proc's utime and stime are the
# same total split in two, each truncated to clock ticks (10 ms): the
# later /proc figure may be up to two ticks below it.
ok "CPU seconds ($(val "$T/m1" process_cpu_seconds_total)): above 0, at most /proc's later figure ($(proc cpu)), and never back" \
	python3 -c "import sys; a, b, c = float('$(val "$T/m1" process_cpu_seconds_total)'), float('$(proc cpu)'), float('$(val "$T/m2" process_cpu_seconds_total)'); sys.exit(not (0 < a <= b + 0.02 and a <= c))"
# The scrape's own connection is open during it; libevent and the
# workers open none between: a few either way.
ok "open fds near /proc's count ($(val "$T/m1" process_open_fds) vs $(proc fds))" \
	python3 -c "import sys; sys.exit(not abs($(val "$T/m1" process_open_fds) - $(proc fds)) <= 3)"
is "max fds: the soft limit of /proc/PID/limits" \
	"$(val "$T/m1" process_max_fds)" "$(proc maxfds)"

version=$("$SYMD" --version | sed -n 's/^symd \([^ ]*\).*/\1/p')
ok "symd_build_info names version $version" \
	grep -q "^symd_build_info{version=\"$version\",libsym=\"[0-9.]*\",libevent=\"[^\"]*\"} 1\$" "$T/m1"
is "symd_log_dropped_lines_total: none lost (stderr is a file)" \
	"$(val "$T/m1" symd_log_dropped_lines_total)" 0
is "route labels: a bounded set, whatever the paths" \
	"$(sed -n 's/^symd_request_duration_seconds_count{route="\([^"]*\)"}.*/\1/p' "$T/m1" | sort | tr '\n' ' ')" \
	"buildid debuginfo healthz other symbolize "
is "the symbolize histogram counts the 4 symbolize requests" \
	"$(val "$T/m1" 'symd_request_duration_seconds_count{route="symbolize"}')" 4
is "the other histogram counts the 100 unknown paths" \
	"$(val "$T/m1" 'symd_request_duration_seconds_count{route="other"}')" 100
stop_symd
done_testing
