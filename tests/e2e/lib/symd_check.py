#!/usr/bin/env python3
"""symd_check.py - client-side checks of a running symd for the e2e tests.

  symd_check.py compare URL BUILDID FILE [N]
      POST N instruction addresses of FILE (objdump -d) to URL/v1/symbolize
      (URL/v1/symbolize/BUILDID with SYMD_CHECK_ROUTE=id, as a proxy that
      hashes on the build ID needs) and compare every frame (function,
      whole file path, line, column, inline chain)
      with `sym addr2line --output-style=JSON -f -i --no-demangle
      --no-plt-names -e FILE` on the same addresses, its names demangled
      by c++filt (symd spells names as GNU does).  That style names the
      outermost frame as llvm-symbolizer does, after its symbol when it
      has one: symd's "llvm_symbol" (its "function" follows GNU's rule,
      which t2100 checks byte for byte through `sym lookup --server`);
      PLT stubs keep llvm's name (_init), since a debug file alone has no
      stubs.  Exit 0 when all agree.
  symd_check.py compare-many URL IDS-FILE CACHE-DIR [N]
      compare for each "BUILDID FILE" line of IDS-FILE, what sym addr2line
      says computed once and kept in CACHE-DIR; exit 0 when all agree.
  symd_check.py compare-multi URL IDS-FILE CACHE-DIR [N]
      the same in one POST /v1/symbolize of all the modules.
  symd_check.py status URL BUILDID ADDR WAIT_MS
      print the module's status (ok, missing, pending, error) and, for ok,
      the innermost function of ADDR.
  symd_check.py abort PORT BUILDID ADDR N CLIENTS
      CLIENTS clients at once each POST N copies of ADDR (a big answer)
      and reset the connection as soon as the answer starts to arrive.
  symd_check.py raw HOST PORT HEX-BYTES|@FILE [DELAY]
      send raw bytes (optionally in 1-byte steps DELAY seconds apart),
      print the status line of the answer, or "closed".

Only the standard library: urllib, socket, subprocess, json.
"""
import json
import os
import random
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

SYM = os.environ.get("SYM", "bin/sym")


def post(url, body, timeout=60):
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def text_addresses(path, n, seed=7):
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path],
                         capture_output=True, text=True, check=True).stdout
    addrs = []
    for line in out.splitlines():
        line = line.strip()
        if ":" in line and line.split(":", 1)[0] and \
                all(c in "0123456789abcdef" for c in line.split(":", 1)[0]) \
                and "\t" in line:
            addrs.append(int(line.split(":", 1)[0], 16))
    random.Random(seed).shuffle(addrs)
    return addrs[:n]


def gnu_demangle(names):
    """@names demangled by GNU's demangler (c++filt), which is the one
    symd's "function" follows (docs/http-api.md: main::{lambda(...)#2},
    [clone .cold]); LLVM's, which --output-style=JSON -C copies, spells
    those 'lambda'(...) and (.cold)."""
    mangled = sorted({n for n in names if n.startswith("_Z")})
    if not mangled:
        return {}
    p = subprocess.run(["c++filt"], input="".join(n + "\n" for n in mangled),
                       capture_output=True, text=True, check=True)
    return dict(zip(mangled, p.stdout.splitlines()))


def dm_sym(name):
    """@name demangled by c++filt (GNU's demangler, as symd's names)."""
    return gnu_demangle([name]).get(name, name)


def expected(path, addrs):
    p = subprocess.run([SYM, "addr2line", "--no-cache", "--output-style=JSON",
                        "-f", "-i", "--no-demangle", "--no-plt-names",
                        "-e", path],
                       input="".join("0x%x\n" % a for a in addrs),
                       capture_output=True, text=True, check=True)
    res = []
    for line in p.stdout.splitlines():
        line = line.strip().rstrip(",").lstrip("[").rstrip("]")
        if not line:
            continue
        res.append(json.loads(line))
    dm = gnu_demangle(s["FunctionName"] for r in res for s in r["Symbol"])
    for r in res:
        for s in r["Symbol"]:
            s["FunctionName"] = dm.get(s["FunctionName"], s["FunctionName"])
    return res


def symbolize(url, build_id, hexes):
    if os.environ.get("SYMD_CHECK_ROUTE") == "id":
        # the build ID in the URL, as a proxy hashing on it needs
        return post(url + "/v1/symbolize/" + build_id,
                    {"addresses": hexes, "wait_ms": 20000})
    return post(url + "/v1/symbolize",
                {"modules": [{"build_id": build_id, "addresses": hexes}],
                 "wait_ms": 20000})


def compare_frames(url, build_id, addrs, want):
    """Ask symd for @addrs and compare with @want (expected()); the
    number of differences, or -1 when symd did not answer in full."""
    st, got = symbolize(url, build_id, ["0x%x" % a for a in addrs])
    if st != 200:
        print("HTTP %d: %s" % (st, got))
        return -1
    return compare_module(got["modules"][0], addrs, want)


def compare_module(mod, addrs, want):
    """compare_frames() for one module of an answer."""
    if mod["status"] != "ok":
        print("status %s: %s" % (mod["status"], mod.get("error")))
        return -1
    bad = 0
    for a, fr, w in zip(addrs, mod["frames"], want):
        wf = w["Symbol"]
        if len(wf) == 1 and not wf[0]["FunctionName"] and \
                not wf[0]["FileName"] and not wf[0]["Line"]:
            wf = []     # llvm's way of saying "nothing known"
        # The JSON style names the outermost frame as llvm-symbolizer
        # does, after its symbol when it has one: symd's "llvm_symbol".
        if fr and "llvm_symbol" in fr[-1]:
            fr[-1]["function"] = dm_sym(fr[-1]["llvm_symbol"])
        g = [(f.get("function", ""), f.get("file", ""),
              f["line"], f["column"]) for f in fr]
        if len(g) == 1 and g[0] == ("", "", 0, 0):
            g = []      # only the peers' fields: nothing known (as above)
        e = [(s["FunctionName"], s["FileName"],
              s["Line"], s["Column"]) for s in wf]
        if g != e:
            bad += 1
            if bad <= 5:
                print("0x%x: symd %s\n       sym  %s" % (a, g, e))
    if len(mod["frames"]) != len(addrs):
        return -1
    return bad


def compare(url, build_id, path, n):
    addrs = text_addresses(path, n)
    bad = compare_frames(url, build_id, addrs, expected(path, addrs))
    if bad < 0:
        return 1
    print("%d addresses, %d differ" % (len(addrs), bad))
    return 1 if bad else 0


def wanted(build_id, path, cache, n):
    """The addresses of @path compare-many asks for and what sym addr2line
    says of them, computed once and kept in the directory @cache."""
    cf = os.path.join(cache, build_id + ".json")
    if os.path.exists(cf):
        return json.load(open(cf))
    addrs = text_addresses(path, n)
    want = expected(path, addrs)
    with open(cf, "w") as f:
        json.dump([addrs, want], f)
    return addrs, want


def compare_many(url, ids_file, cache, n, multi=False):
    """compare for each "BUILDID PATH" line of @ids_file, one request
    each, or all in one request of many modules when @multi."""
    ids = [line.split() for line in open(ids_file)]
    w = {bid: wanted(bid, path, cache, n) for bid, path in ids}
    if multi:
        st, got = post(url + "/v1/symbolize", {"wait_ms": 20000, "modules": [
            {"build_id": bid, "addresses": ["0x%x" % a for a in w[bid][0]]}
            for bid, _ in ids]})
        if st != 200 or len(got.get("modules", [])) != len(ids):
            print("HTTP %d: %s" % (st, got))
            return 1
    fails = 0
    for i, (bid, path) in enumerate(ids):
        addrs, want = w[bid]
        bad = compare_module(got["modules"][i], addrs, want) if multi else \
            compare_frames(url, bid, addrs, want)
        if bad:
            print("%s (%s): %s" % (bid, os.path.basename(path),
                  "no full answer" if bad < 0 else "%d differ" % bad))
            fails += 1
    print("%d build IDs, %d wrong" % (len(ids), fails))
    return 1 if fails else 0


def status(url, build_id, addr, wait_ms):
    st, got = post(url + "/v1/symbolize/" + build_id,
                   {"addresses": [addr], "wait_ms": int(wait_ms)})
    if st != 200:
        print("http %d %s" % (st, got.get("error", "")))
        return 0
    mod = got["modules"][0]
    fn = mod["frames"][0][0]["function"] if mod["frames"] and \
        mod["frames"][0] else "-"
    print(mod["status"], fn, mod.get("error", ""))
    return 0


def raw(host, port, data, delay=0.0):
    if data.startswith("@"):
        with open(data[1:], "rb") as f:
            payload = f.read()
    else:
        payload = bytes.fromhex(data)
    s = socket.create_connection((host, int(port)), timeout=10)
    try:
        if delay:
            for i in range(len(payload)):
                s.sendall(payload[i:i + 1])
                time.sleep(delay)
        else:
            s.sendall(payload)
        ans = s.recv(4096)
    except (BrokenPipeError, ConnectionResetError):
        ans = b""
    s.close()
    if not ans:
        print("closed")
    else:
        print(ans.split(b"\r\n", 1)[0].decode(errors="replace"))
    return 0


def abort(port, build_id, addr, n, clients):
    import struct
    import threading
    body = json.dumps({"addresses": [addr] * int(n),
                       "wait_ms": 0}).encode()
    req = b"POST /v1/symbolize/%s HTTP/1.1\r\nHost: x\r\n" \
          b"Content-Length: %d\r\n\r\n" % (build_id.encode(), len(body)) \
          + body

    def one():
        s = socket.create_connection(("127.0.0.1", int(port)), timeout=30)
        s.sendall(req)
        s.recv(1)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                     struct.pack("ii", 1, 0))
        s.close()
    ts = [threading.Thread(target=one) for _ in range(int(clients))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return 0


def main():
    cmd = sys.argv[1]
    if cmd == "compare":
        n = int(sys.argv[5]) if len(sys.argv) > 5 else 300
        return compare(sys.argv[2], sys.argv[3], sys.argv[4], n)
    if cmd in ("compare-many", "compare-multi"):
        n = int(sys.argv[5]) if len(sys.argv) > 5 else 100
        return compare_many(sys.argv[2], sys.argv[3], sys.argv[4], n,
                            cmd == "compare-multi")
    if cmd == "status":
        return status(*sys.argv[2:6])
    if cmd == "abort":
        return abort(*sys.argv[2:7])
    if cmd == "raw":
        return raw(sys.argv[2], sys.argv[3], sys.argv[4],
                   float(sys.argv[5]) if len(sys.argv) > 5 else 0.0)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
