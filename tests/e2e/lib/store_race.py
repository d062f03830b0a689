#!/usr/bin/env python3
"""store_race.py - race PUT and DELETE of one build ID against a running
symd, and check that every outcome is one a linearizable store allows.

  store_race.py seq HOST PORT TOKEN BUILDID FILE ADDR ROUNDS
      ROUNDS times: PUT FILE (must be 201), sleep 0-4 ms, DELETE (must be
      204: the PUT's 201 came first, so there is an entry to delete),
      then symbolize ADDR with wait_ms 2000: the entry is gone and stays
      gone, so never "ok" (and never "ok" with no frames).
  store_race.py par HOST PORT TOKEN BUILDID FILE ADDR ROUNDS
      ROUNDS times: PUT and DELETE sent at once on two connections.  The
      PUT must be 201 (never "500 storing: ..."), the DELETE 204 or 404.
      Once both answered, the entry is in one of the two states: present
      (HEAD 200 and symbolize "ok" with frames) or gone (HEAD 404 and
      symbolize "missing"), never a mix.

Prints one "# key count" line per outcome, then "FAIL ..." lines for the
outcomes a linearizable store forbids; exits 1 if there was any.
Only the standard library.
"""
import http.client
import json
import random
import sys
import threading
import time
from collections import Counter


class Client:
    def __init__(self, host, port, token):
        self.host, self.port = host, port
        self.auth = {"Authorization": "Bearer " + token} if token else {}
        self.c = None

    def req(self, method, path, body=None, headers=None):
        h = dict(self.auth)
        h.update(headers or {})
        for attempt in (0, 1):
            if self.c is None:
                self.c = http.client.HTTPConnection(self.host, self.port,
                                                    timeout=60)
            try:
                self.c.request(method, path, body=body, headers=h)
                r = self.c.getresponse()
                data = r.read()
                return r.status, data
            except (http.client.HTTPException, OSError):
                self.c.close()
                self.c = None
                if attempt:
                    raise
        raise RuntimeError("unreachable")


def symbolize(cl, bid, addr):
    body = json.dumps({"modules": [{"build_id": bid,
                                    "addresses": [addr]}],
                       "wait_ms": 2000}).encode()
    st, data = cl.req("POST", "/v1/symbolize", body,
                      {"Content-Type": "application/json"})
    if st != 200:
        return "http%d" % st, None
    m = json.loads(data)["modules"][0]
    return m["status"], m.get("frames")


def main():
    mode, host, port, token, bid, path, addr, rounds = sys.argv[1:9]
    port, rounds, addr = int(port), int(rounds), int(addr, 0)
    blob = open(path, "rb").read()
    # ?force=1: a round's PUT may find the previous round's file still
    # there, which an unforced PUT of the same file answers with 409 (no
    # improvement, docs/http-api.md); the race is between storing and
    # deleting, so every PUT stores.
    url = "/v1/debuginfo/" + bid
    put_url = url + "?force=1"
    out = Counter()
    fails = []
    rnd = random.Random(24)
    a, b = Client(host, port, token), Client(host, port, token)

    for i in range(rounds):
        if mode == "seq":
            pst, pmsg = a.req("PUT", put_url, blob)
            time.sleep(rnd.uniform(0, 0.004))
            dst, dmsg = a.req("DELETE", url)
            s, frames = symbolize(a, bid, addr)
            out["put %d" % pst] += 1
            out["delete %d" % dst] += 1
            out["after %s" % s] += 1
            if pst != 201:
                fails.append("round %d: PUT %d %s" % (i, pst, pmsg[:200]))
            if dst != 204:
                fails.append("round %d: DELETE after a 201 answered %d"
                             % (i, dst))
            if s == "ok":
                fails.append("round %d: symbolize after a DELETE is ok "
                             "(frames %s)" % (i, json.dumps(frames)))
            elif s not in ("missing", "pending"):
                fails.append("round %d: symbolize after a DELETE is %s"
                             % (i, s))
            continue
        res = {}

        def put():
            res["put"] = b.req("PUT", put_url, blob)
        t = threading.Thread(target=put)
        t.start()
        time.sleep(rnd.uniform(0, 0.004))
        res["del"] = a.req("DELETE", url)
        t.join()
        pst, pmsg = res["put"]
        dst = res["del"][0]
        # Let the conversion the PUT queued settle.
        s, frames = symbolize(a, bid, addr)
        head = a.req("HEAD", url)[0]
        s2, frames2 = symbolize(a, bid, addr)
        out["put %d" % pst] += 1
        out["delete %d" % dst] += 1
        state = "present" if head == 200 and s2 == "ok" else \
                "gone" if head == 404 and s2 == "missing" else \
                "third (HEAD %d, symbolize %s)" % (head, s2)
        out["state %s" % state] += 1
        if pst != 201:
            fails.append("round %d: PUT %d %s" % (i, pst, pmsg[:200]))
        if dst not in (204, 404):
            fails.append("round %d: DELETE %d" % (i, dst))
        if state.startswith("third"):
            fails.append("round %d: %s" % (i, state))
        for st_, fr in ((s, frames), (s2, frames2)):
            if st_ == "ok" and (not fr or not fr[0]):
                fails.append("round %d: ok with no frames: %s"
                             % (i, json.dumps(fr)))
        # Next round from a known state half the time.
        if head == 200 and rnd.random() < 0.5:
            a.req("DELETE", url)
    for k in sorted(out):
        print("# %s %d" % (k, out[k]))
    for f in fails[:20]:
        print("FAIL " + f)
    if len(fails) > 20:
        print("FAIL ... and %d more" % (len(fails) - 20))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
