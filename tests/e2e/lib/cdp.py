"""cdp.py - drive a headless Chromium through the DevTools protocol, with
the Python standard library only.

Chromium runs with --remote-debugging-pipe: protocol messages are JSON
texts ended by a NUL byte, read by the browser from fd 3 and written to
fd 4.  No port is opened and nothing touches the network.

    with Browser() as b:
        page = b.new_page(width=1300, height=900)
        page.navigate("file:///tmp/x.svg")
        page.eval("1 + 1")            # -> 2
        page.errors                   # exceptions and console errors seen

Every wait has a timeout (TimeoutError), so a hung browser fails a test
instead of hanging it.
"""
import json
import os
import select
import shutil
import subprocess
import tempfile
import time


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, exe=None, timeout=30.0):
        self.exe = exe or find_chromium()
        if not self.exe:
            raise RuntimeError("chromium not found")
        self.timeout = timeout
        self.proc = None
        self.next_id = 0
        self.buf = b""
        self.pending = []          # messages read but not yet consumed
        self.profile = tempfile.mkdtemp(prefix="sym-chromium.")

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    def start(self):
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # Move the child's ends to high numbers first, so that the
        # dup2() to 3 and 4 cannot overwrite one with the other.  All
        # these are close-on-exec (Python's default); only the dup2()
        # copies, 3 and 4, reach chromium.  close_fds=False, since
        # Popen would close 3 and 4 after preexec_fn otherwise.
        hi_r = os.dup(to_browser_r)
        hi_w = os.dup(from_browser_w)
        hi_r2 = fcntl_dupfd(hi_r, 100)
        hi_w2 = fcntl_dupfd(hi_w, 101)
        os.close(hi_r)
        os.close(hi_w)

        def child_fds():
            os.dup2(hi_r2, 3)
            os.dup2(hi_w2, 4)

        args = [self.exe, "--headless", "--no-sandbox", "--disable-gpu",
                "--remote-debugging-pipe", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-sync",
                "--disable-component-update", "--mute-audio",
                "--user-data-dir=" + self.profile, "about:blank"]
        # Chromium's own files (crash reports, caches) go to the profile
        # too, never to ~/.config or ~/.cache.
        env = dict(os.environ, XDG_CONFIG_HOME=self.profile,
                   XDG_CACHE_HOME=self.profile)
        self.proc = subprocess.Popen(
            args, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, preexec_fn=child_fds,
            close_fds=False)
        for fd in (to_browser_r, from_browser_w, hi_r2, hi_w2):
            os.close(fd)
        self.wfd = to_browser_w
        self.rfd = from_browser_r

    def close(self):
        if self.proc and self.proc.poll() is None:
            try:
                self.send("Browser.close")
            except Exception:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for fd in ("wfd", "rfd"):
            if hasattr(self, fd):
                try:
                    os.close(getattr(self, fd))
                except OSError:
                    pass
                delattr(self, fd)
        shutil.rmtree(self.profile, ignore_errors=True)

    def send(self, method, params=None, session=None):
        """Send a command; return its id (the answer comes later)."""
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            n = os.write(self.wfd, data)
            data = data[n:]
        return self.next_id

    def _read_one(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no message from chromium")
            r, _, _ = select.select([self.rfd], [], [], left)
            if not r:
                continue
            chunk = os.read(self.rfd, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def wait(self, pred, timeout=None):
        """The first message, pending or new, for which pred() is true."""
        deadline = time.monotonic() + (timeout or self.timeout)
        for i, m in enumerate(self.pending):
            if pred(m):
                del self.pending[i]
                return m
        while True:
            m = self._read_one(deadline)
            self.on_message(m)
            if pred(m):
                return m
            self.pending.append(m)

    def on_message(self, m):
        pass

    def result(self, cmd_id, timeout=None):
        m = self.wait(lambda m: m.get("id") == cmd_id, timeout)
        if "error" in m:
            raise RuntimeError("devtools: %s" % m["error"])
        return m.get("result", {})

    def call(self, method, params=None, session=None, timeout=None):
        return self.result(self.send(method, params, session), timeout)

    def new_page(self, width=1300, height=1000):
        return Page(self, width, height)


def fcntl_dupfd(fd, lowest):
    import fcntl
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, lowest)


class Page:
    """One tab, attached in flat mode; collects errors as they come."""

    def __init__(self, browser, width, height):
        self.b = browser
        self.errors = []
        self.dialogs = []          # types of the dialogs that opened
        t = browser.call("Target.createTarget", {"url": "about:blank"})
        s = browser.call("Target.attachToTarget",
                         {"targetId": t["targetId"], "flatten": True})
        self.session = s["sessionId"]
        prev = browser.on_message

        def watch(m, prev=prev):
            prev(m)
            if m.get("sessionId") == self.session:
                self._watch(m)
        browser.on_message = watch
        for domain in ("Runtime", "Page", "Log"):
            self.call(domain + ".enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height,
                   "deviceScaleFactor": 1, "mobile": False})

    def _watch(self, m):
        method = m.get("method")
        p = m.get("params", {})
        if method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            ex = d.get("exception", {})
            self.errors.append("exception: %s %s" % (
                d.get("text", ""), ex.get("description", "")))
        elif method == "Runtime.consoleAPICalled" and \
                p.get("type") in ("error", "assert"):
            self.errors.append("console.%s: %s" % (p["type"], " ".join(
                str(a.get("value", a.get("description", "")))
                for a in p.get("args", []))))
        elif method == "Page.javascriptDialogOpening":
            self.dialogs.append(p.get("type"))
        elif method == "Log.entryAdded" and \
                p.get("entry", {}).get("level") == "error":
            e = p["entry"]
            self.errors.append("log: %s %s" % (e.get("text"), e.get("url", "")))

    def send(self, method, params=None):
        return self.b.send(method, params, self.session)

    def call(self, method, params=None, timeout=None):
        return self.b.call(method, params, self.session, timeout)

    def event(self, method, timeout=None):
        return self.b.wait(lambda m: m.get("sessionId") == self.session and
                           m.get("method") == method, timeout)

    def navigate(self, url, timeout=None):
        self.b.pending = [m for m in self.b.pending
                          if m.get("method") != "Page.loadEventFired"]
        r = self.call("Page.navigate", {"url": url})
        if r.get("errorText"):
            raise RuntimeError("navigate %s: %s" % (url, r["errorText"]))
        self.event("Page.loadEventFired", timeout)

    def eval(self, expr, timeout=None):
        r = self.call("Runtime.evaluate",
                      {"expression": expr, "returnByValue": True,
                       "awaitPromise": True}, timeout)
        if "exceptionDetails" in r:
            raise RuntimeError("evaluate: %s" %
                               r["exceptionDetails"].get("exception", {})
                               .get("description", r["exceptionDetails"]))
        return r.get("result", {}).get("value")

    def mouse(self, kind, x, y, clicks=0, wait=True):
        ids = []
        ids.append(self.send("Input.dispatchMouseEvent",
                             {"type": kind, "x": x, "y": y,
                              "button": "left" if clicks else "none",
                              "clickCount": clicks}))
        if wait:
            for i in ids:
                self.b.result(i)
        return ids

    def click(self, x, y, wait=True):
        """A real left click at (x, y); with wait=False the release is
        sent and not waited for (a dialog it opens would block it)."""
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y, 1)
        return self.mouse("mouseReleased", x, y, 1, wait)

    def key(self, key, code, keycode, modifiers=0, wait=True):
        ids = [self.send("Input.dispatchKeyEvent",
                         {"type": "rawKeyDown", "key": key, "code": code,
                          "windowsVirtualKeyCode": keycode,
                          "modifiers": modifiers}),
               self.send("Input.dispatchKeyEvent",
                         {"type": "keyUp", "key": key, "code": code,
                          "windowsVirtualKeyCode": keycode,
                          "modifiers": modifiers})]
        if wait:
            for i in ids:
                self.b.result(i)
        return ids
