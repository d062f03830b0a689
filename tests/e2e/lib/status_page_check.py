"""status_page_check.py - symd's status page (GET /) in headless Chromium,
over the DevTools protocol (cdp.py).  Prints "ok - WHAT" / "not ok - WHAT"
lines (tests/e2e/lib/lib.sh tap_points).

    status_page_check.py URL BUILD_ID ADDR EXPECTED BAD_PATH UPSTREAM

EXPECTED: a file of the frames `sym addr2line -f -i` gives for ADDR, one
"FUNCTION FILE:LINE:COLUMN" line each, innermost first.  BAD_PATH: a
request path with markup in it that the test sent before; the page must
show it as text.  UPSTREAM: the upstream that answers 500, whose failure
the test caused for build ID 0011223344.
"""
import json
import sys
import time
import urllib.request

sys.path.insert(0, __import__("os").path.dirname(__file__))
from cdp import Browser  # noqa: E402


def point(cond, what, detail=None):
    print("%s - %s" % ("ok" if cond else "not ok", what))
    if not cond and detail is not None:
        print("# " + str(detail).replace("\n", "\n# "))
    return cond


def until(page, expr, timeout=20.0):
    """Wait for a JS expression to be true; its last value."""
    deadline = time.monotonic() + timeout
    while True:
        v = page.eval(expr)
        if v or time.monotonic() > deadline:
            return v
        time.sleep(0.05)


def js(s):
    return json.dumps(s)


def main():
    url, bid, addr, expected_file, bad_path, up500 = sys.argv[1:7]
    with open(expected_file) as f:
        expected = [line.rstrip("\n") for line in f if line.strip()]
    with urllib.request.urlopen(url + "/v1/status") as r:
        status = json.load(r)

    with Browser() as b:
        page = b.new_page(width=1300, height=1000)
        failed, posts = [], []
        prev = b.on_message

        def net(m, prev=prev):
            prev(m)
            if m.get("sessionId") != page.session:
                return
            meth, p = m.get("method"), m.get("params", {})
            if meth == "Network.loadingFailed":
                failed.append("failed: %s" % p.get("errorText"))
            elif meth == "Network.responseReceived" and \
                    p["response"]["status"] >= 400:
                failed.append("HTTP %d %s" % (p["response"]["status"],
                                              p["response"]["url"]))
            elif meth == "Network.requestWillBeSent" and \
                    p["request"]["method"] == "POST":
                posts.append(p["request"].get("postData", ""))
        b.on_message = net
        page.call("Network.enable")
        page.navigate(url + "/")

        # --- what the page shows ------------------------------------
        shown = until(page, "document.getElementById('store-tables')"
                      ".textContent")
        point(shown == str(status["store"]["tables"]),
              "the page shows the store's tables (%s)" % shown)
        size = page.eval("document.getElementById('store-bytes')"
                         ".textContent")
        point(str(status["store"]["bytes"]) in size and
              status["store"]["bytes"] > 0,
              "the page shows the store's size (%s)" % size)
        rows = page.eval("""[...document.querySelectorAll('#stored tr')]
            .map(tr => [...tr.cells].map(c => c.textContent))""")
        point([bid, "ok"] in [r[:2] for r in rows],
              "the stored build ID is listed as ok", rows)
        point(page.eval("document.getElementById('q-max').textContent") ==
              str(status["queues"]["max"]), "the queues are shown")
        fails = page.eval("""[...document.querySelectorAll('#failures tr')]
            .map(tr => [...tr.cells].map(c => c.textContent))""")
        point(any(r[1:3] == [up500, "0011223344"] and "HTTP 500" in r[3]
                  for r in fails),
              "the upstream's failure is shown, with its build ID", fails)
        paths = page.eval("""[...document.querySelectorAll(
            '#requests td.path')].map(td => td.textContent)""")
        point(bad_path in paths,
              "a request path with markup is shown as its text", paths)
        point(page.eval("document.scripts.length") == 1 and
              not page.dialogs and
              "&lt;script&gt;" in page.eval(
                  "document.getElementById('requests').innerHTML"),
              "... escaped: no script ran, no element was made of it",
              page.dialogs)

        # --- the form -----------------------------------------------
        lines = "\n".join(["%s %s" % (bid, addr), "nothex 0x10",
                           "%s zz" % bid, "", "00112233 0x1",
                           "%s" % bid])
        page.eval("document.getElementById('lines').value = %s" % js(lines))
        page.eval("document.getElementById('symbolize').click()")
        done = until(page, "document.querySelectorAll('#results li.good, "
                     "#results li.bad').length == 5")
        point(done, "the form answers every line", page.eval(
            "document.getElementById('results').innerText"))
        frames = page.eval("""[...document.querySelectorAll(
            '#results li.good .frame')].map(f =>
            f.querySelector('.fn').textContent + ' ' +
            f.querySelector('.loc').textContent)""")
        point(frames == expected, "the form's frames are those of "
              "sym addr2line (%d, inlines included)" % len(expected),
              "page: %s\nsym:  %s" % (frames, expected))
        inl = page.eval("""[...document.querySelectorAll(
            '#results li.good .frame')].map(f =>
            f.classList.contains('inl'))""")
        point(inl == [True] * (len(expected) - 1) + [False],
              "the inline chain is marked", inl)
        msgs = page.eval("""Object.fromEntries([...document.querySelectorAll(
            '#results li.bad')].map(li => [li.value,
            li.querySelector('.message').textContent]))""")
        point(msgs.get("2", "").startswith("line 2: the build ID is not "
                                           "hexadecimal"),
              "a bad build ID gets an error next to its line", msgs)
        point(msgs.get("3", "").startswith("line 3: the address must be"),
              "a bad address gets an error next to its line", msgs)
        point(msgs.get("6", "").startswith("line 6: expected two fields"),
              "a line without an address gets an error", msgs)
        point(msgs.get("5", "").startswith("error: " + up500) and
              "HTTP 500" in msgs.get("5", ""),
              "a build ID the upstreams fail on shows the server's "
              "answer", msgs)
        sent = json.loads(posts[-1]) if posts else {}
        point(len(posts) == 1 and
              [m["build_id"] for m in sent.get("modules", [])] ==
              [bid, "00112233"] and
              sent["modules"][0]["addresses"] == [addr],
              "one request, with the good lines only", posts)

        # --- after the form: the build ID is ok in the daemon's map --
        ok_ids = until(page, """[...document.querySelectorAll(
            'table[data-state=ok] td.buildid')].map(td => td.textContent)
            .join(' ')""")
        point(bid in (ok_ids or ""),
              "after the form, the build ID is listed under ok", ok_ids)
        point(not page.errors, "no console error or exception",
              page.errors)
        point(not failed, "no failed request", failed)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as e:   # a crash is a failed point, not fewer points
        point(False, "the checker ran to its end", repr(e))
        sys.exit(1)
