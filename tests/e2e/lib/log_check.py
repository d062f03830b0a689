#!/usr/bin/env python3
"""log_check.py - check symd's log (docs/symd.8, symd/log.h) for t2030.

  log_check.py access FORMAT LOG EXPECT T0 T1
      FORMAT text or json.  Every line of LOG must be well formed in
      FORMAT.  EXPECT has one line per request the test made, each with
      one connection of its own:
          PORT METHOD PATH STATUS BYTES SECONDS IDS
      (PORT: curl's local port; SECONDS: curl's time_total; IDS the
      build IDs the line must list, comma separated, or "-").  Each must
      have exactly one access line with client 127.0.0.1:PORT and those
      fields, a duration in ms with three decimals shorter than T1 - T0,
      and a time between T0 and T1 (seconds since the epoch, the test's
      clock around the requests).
  log_check.py event FORMAT LOG EVENT KEY=VALUE...
      Some line of event EVENT has every KEY equal to VALUE (VALUE
      "*": the key is there, any value).
  log_check.py start FORMAT LOG
      The start line: one, first, with the version and the whole
      configuration (the keys every start line must have).

Prints "ok - WHAT" / "not ok - WHAT" lines (lib.sh's tap_points).
"""

import datetime
import json
import re
import sys

TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
LEVELS = ("error", "warn", "info")
# logfmt: key=value, value bare (no blank, '"', '=', '\') or quoted.
FIELD_RE = re.compile(r' ([a-z_]+)=("(?:[^"\\]|\\.)*"|[^ "=\\]+)')
ACCESS_KEYS = ("client", "method", "path", "status", "bytes",
               "duration_ms", "build_ids")
START_KEYS = ("version", "libsym", "pid", "listen", "store", "upstreams",
              "upload_token_file", "log_format", "access_log", "workers",
              "fetch_workers", "queue_max", "max_store_size", "ttl_absent",
              "ttl_failed", "fetch_timeout", "fetch_first_byte_ms",
              "fetch_deadline_ms", "fetch_wait_ms", "max_body",
              "max_addresses", "max_modules", "max_wait_ms", "max_upload",
              "max_response", "max_answers", "max_conns", "max_buffered",
              "header_timeout_ms", "body_timeout_ms", "body_deadline_ms",
              "idle_timeout_ms", "min_rate", "rate_window_ms",
              "max_inflate_section", "max_inflate_file",
              "max_inflate_ratio", "drain_ms")

points = []


def point(good, what):
    points.append(good)
    print(("ok - " if good else "not ok - ") + what)


def unquote(v):
    if v.startswith('"'):
        return re.sub(r"\\(.)", r"\1", v[1:-1])
    return v


def parse_text(line):
    """A dict of the line's fields, or a string saying what is wrong."""
    m = re.match(r"^(\S+) (\S+) ([a-z_]+)((?: [a-z_]+=\S.*)?)$", line)
    if not m:
        return "not TIME LEVEL EVENT fields"
    rest, d = m.group(4), {"time": m.group(1), "level": m.group(2),
                           "event": m.group(3)}
    pos = 0
    for f in FIELD_RE.finditer(rest):
        if f.start() != pos:
            return "junk at %d" % pos
        d[f.group(1)] = unquote(f.group(2))
        pos = f.end()
    if pos != len(rest):
        return "junk at %d" % pos
    if "build_ids" in d:
        ids = d["build_ids"]
        d["build_ids"] = [] if ids == "-" else ids.split(",")
    return d


def parse_json(line):
    try:
        d = json.loads(line)
    except ValueError as e:
        return "not JSON: %s" % e
    if not isinstance(d, dict):
        return "not an object"
    for k in ("status", "bytes", "pid"):
        if k in d and not isinstance(d[k], int):
            return "%s is not a number" % k
    if "build_ids" in d and not isinstance(d["build_ids"], list):
        return "build_ids is not a list"
    return d


def read_log(fmt, path):
    """Every line parsed; a point for their being well formed."""
    with open(path, "rb") as f:
        raw = f.read()
    lines, bad = [], []
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        point(False, "the log is ASCII")
        return []
    for n, line in enumerate(text.split("\n")[:-1], 1):
        d = parse_text(line) if fmt == "text" else parse_json(line)
        if isinstance(d, dict) and not TIME_RE.match(str(d.get("time"))):
            d = "time %r is not RFC 3339 UTC ms" % d.get("time")
        if isinstance(d, dict) and d.get("level") not in LEVELS:
            d = "level %r" % d.get("level")
        if isinstance(d, str):
            bad.append("line %d: %s: %s" % (n, d, line[:200]))
        else:
            lines.append(d)
    for b in bad[:5]:
        print(b)
    point(not bad and text.endswith("\n") and lines,
          "%d lines, every one well formed %s" % (len(lines), fmt))
    return lines


def epoch(ts):
    t = datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ")
    return t.replace(tzinfo=datetime.timezone.utc).timestamp()


def check_one(line, want, t0, t1):
    """What differs between an access line and the request made."""
    port, method, path, status, nbytes, _, ids = want
    diffs = []
    for k in ACCESS_KEYS:
        if k not in line:
            diffs.append("no " + k)
    if diffs:
        return diffs
    got = {"method": line["method"], "path": line["path"],
           "status": str(line["status"]), "bytes": str(line["bytes"]),
           "build_ids": ",".join(line["build_ids"]) or "-"}
    exp = {"method": method, "path": path, "status": status,
           "bytes": nbytes, "build_ids": ids}
    for k in exp:
        if got[k] != exp[k]:
            diffs.append("%s %r, not %r" % (k, got[k], exp[k]))
    # Milliseconds with three decimals, within the test's window.  Not
    # bounded by curl's time: symd's clock stops when its loop thread
    # sees the reply drained, which on a busy machine can come after
    # curl has read it.
    dur = line["duration_ms"]
    if isinstance(dur, str):
        good = re.match(r"^\d+\.\d{3}$", dur)
    else:
        good = isinstance(dur, (int, float)) and dur >= 0
    if not good or float(dur) > (t1 - t0) * 1000:
        diffs.append("duration_ms %s (the test took %.3f s)" % (dur, t1 - t0))
    if not t0 - 0.001 <= epoch(line["time"]) <= t1 + 0.001:
        diffs.append("time %s outside the test's" % line["time"])
    return diffs


def cmd_access(fmt, log, expect, t0, t1):
    lines = read_log(fmt, log)
    access = [d for d in lines if d.get("event") == "access"]
    with open(expect) as f:
        wants = [ln.split(" ") for ln in f.read().splitlines() if ln]
    for want in wants:
        client = "127.0.0.1:" + want[0]
        mine = [d for d in access if d.get("client") == client]
        what = "%s %s %s" % (want[1], want[2], want[3])
        if len(mine) != 1:
            point(False, "%s: %d access lines, not one" % (what, len(mine)))
            continue
        diffs = check_one(mine[0], want, float(t0), float(t1))
        for d in diffs:
            print("  " + d)
        point(not diffs, "%s: one line, every field right" % what)
    point(len(access) == len(wants),
          "%d access lines for %d requests" % (len(access), len(wants)))


def cmd_event(fmt, log, event, pairs):
    lines = read_log(fmt, log)
    want = dict(p.split("=", 1) for p in pairs)
    for d in lines:
        if d.get("event") == event and all(
                k in d and (v == "*" or str(d[k]) == v)
                for k, v in want.items()):
            point(True, "a %s line with %s" % (event, " ".join(pairs)))
            return
    for d in lines:
        if d.get("event") == event:
            print("  seen: %s" % d)
    point(False, "a %s line with %s" % (event, " ".join(pairs)))


def cmd_start(fmt, log):
    lines = read_log(fmt, log)
    starts = [d for d in lines if d.get("event") == "start"]
    point(len(starts) == 1 and lines and lines[0] is starts[0],
          "one start line, the first")
    missing = [k for k in START_KEYS if not starts or k not in starts[0]]
    print("  missing: %s" % " ".join(missing) if missing else "  all keys")
    point(not missing, "the start line has the version and every option")


def main(argv):
    if len(argv) >= 6 and argv[1] == "access":
        cmd_access(*argv[2:7])
    elif len(argv) >= 5 and argv[1] == "event":
        cmd_event(argv[2], argv[3], argv[4], argv[5:])
    elif len(argv) == 4 and argv[1] == "start":
        cmd_start(argv[2], argv[3])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0 if all(points) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
