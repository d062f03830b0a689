#!/usr/bin/env python3
"""flamegraph_check.py - checks of `sym flamegraph` SVGs for t5100.

    flamegraph_check.py struct SVG FOLDED... [--base FOLDED] [--all]
        [--cap N] [--minwidth PX]
        the SVG against the folded input: every frame's path, count and
        width, titles (counts, shares, Wilson intervals), sibling order,
        layout, colours, escaping; --all: every stack of the input must
        be drawn; --cap: at most N frames, the widest; --minwidth: exactly
        the frames at least PX wide; --base: differential mode, BEFORE
    flamegraph_check.py browser SVG@FOLDED[,FOLDED...]... [--search RE]
        [--zoom PATH] [--slow SECONDS]
        each SVG (made from those folded files; for a differential one,
        the "after" file) in one headless Chromium: loads without errors,
        a real click zooms, hover shows details, Reset Zoom restores,
        search highlights and reports the matched share

Output: one line per check, "PASS what" or "FAIL what: why", for the
shell to turn into TAP points.  Exit status 0 unless the checker itself
could not run (3 when Chromium is missing).
"""
import math
import os
import re
import sys
import time
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
FG = "{http://github.com/jonhoo/inferno}"
HL = "rgb(230,0,230)"
Z = 1.959963984540054


def report(ok, what, why=""):
    if ok:
        print("PASS %s" % what)
    else:
        print("FAIL %s: %s" % (what, why))
    sys.stdout.flush()
    return ok


def read_folded(paths):
    """{path tuple: total}, grand total, [(stack tuple, count)]"""
    totals = {}
    stacks = []
    grand = 0
    for p in paths:
        with open(p, "rb") as f:
            for line in f.read().decode("utf-8", "surrogateescape") \
                    .splitlines():
                line = line.rstrip()
                if not line:
                    continue
                stack, count = line.rsplit(None, 1)
                count = int(count)
                frames = tuple(stack.strip().split(";"))
                stacks.append((frames, count))
                grand += count
                for i in range(1, len(frames) + 1):
                    totals[frames[:i]] = totals.get(frames[:i], 0) + count
    return totals, grand, stacks


def wilson(k, n):
    if n == 0:
        return 0.0, 1.0
    p = k / n
    den = 1 + Z * Z / n
    mid = (p + Z * Z / (2 * n)) / den
    half = Z / den * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    lo, hi = max(0.0, mid - half), min(1.0, mid + half)
    if k == 0:
        lo = 0.0
    if k == n:
        hi = 1.0
    return lo, hi


class Frame:
    pass


def parse_svg(path):
    tree = ET.parse(path)
    root = tree.getroot()
    info = {
        "width": float(root.get("width")),
        "xpad": float(root.get(FG + "xpad")),
        "fh": float(root.get(FG + "frameheight")),
        "mode": root.get(FG + "mode"),
    }
    group = None
    for g in root.iter(SVG + "g"):
        if g.get("id") == "frames":
            group = g
    frames = []
    for i, g in enumerate(group.findall(SVG + "g")):
        f = Frame()
        f.i = i
        f.title = g.find(SVG + "title").text
        r = g.find(SVG + "rect")
        t = g.find(SVG + "text")
        f.label = t.text or ""
        f.x = float(r.get("x"))
        f.w = float(r.get("width"))
        f.y = float(r.get("y"))
        f.fx = int(r.get(FG + "x"))
        f.fw = int(r.get(FG + "w"))
        f.fill = r.get("fill")
        f.name = f.title[:f.title.rindex(" (")]
        f.details = f.title[f.title.rindex(" (") + 2:-1]
        frames.append(f)
    y0 = frames[0].y
    stack = []
    for f in frames:
        f.d = round(abs(f.y - y0) / info["fh"])
        del stack[f.d:]
        f.parent = stack[-1] if stack else None
        f.path = (f.parent.path + (f.name,)) if f.parent else ()
        stack.append(f)
    return info, frames


def rgb(fill):
    m = re.fullmatch(r"rgb\((\d+),(\d+),(\d+)\)", fill)
    return tuple(int(v) for v in m.groups()) if m else None


def check_struct(svg, folded, base, want_all, cap=None, minwidth=None):
    raw = open(svg, "rb").read()
    try:
        info, frames = parse_svg(svg)
    except Exception as e:
        return report(False, "SVG parses as XML", repr(e))
    report(True, "SVG parses as XML")
    totals, grand, _ = read_folded(folded)
    btotals, bgrand = ({}, 0)
    if base:
        btotals, bgrand, _ = read_folded([base])
    W, xpad = info["width"], info["xpad"]
    scale = (W - 2 * xpad) / grand
    root = frames[0]
    report(root.fw == grand and root.name == "all",
           "root frame 'all' holds every sample",
           "fg:w %d, input %d" % (root.fw, grand))

    bad = []
    for f in frames[1:]:
        want = totals.get(f.path)
        if want is None:
            bad.append("%r not in the input" % (f.path,))
        elif f.fw != want:
            bad.append("%r: fg:w %d, input %d" % (f.path, f.fw, want))
    report(not bad, "every frame's count is its stack's count in the input",
           "; ".join(bad[:5]))

    bad = []
    for f in frames:
        if abs(f.w - f.fw * scale) > 0.0051:
            bad.append("%r: width %.2f for %d (%.4f)" % (
                f.path, f.w, f.fw, f.fw * scale))
        if abs(f.x - (xpad + f.fx * scale)) > 0.0051:
            bad.append("%r: x %.2f for %d" % (f.path, f.x, f.fx))
    report(not bad, "widths and x are proportional to counts (within "
           "rounding)", "; ".join(bad[:5]))

    maxd = 0
    if base:
        maxd = max(abs(totals[f.path] / grand - btotals.get(f.path, 0) / bgrand)
                   for f in frames[1:])
    bad = []
    for f in frames:
        if f is root:
            m = re.fullmatch(r"([\d,]+) samples(; before: [\d,]+ samples)?"
                             r", 100%", f.details)
            if not m or int(m.group(1).replace(",", "")) != f.fw:
                bad.append("root title %r" % f.title)
            continue
        if base:
            m = re.match(r"after: ([\d,]+) samples, ([\d.]+)%; 95% CI "
                         r"([\d.]+)-([\d.]+)%; before: ([\d,]+) samples, "
                         r"([\d.]+)%; 95% CI ([\d.]+)-([\d.]+)%; change "
                         r"([-+][\d.]+) pp, 95% CI ([-+][\d.]+) to "
                         r"([-+][\d.]+) pp", f.details)
        else:
            m = re.match(r"([\d,]+) samples, ([\d.]+)%; 95% CI "
                         r"([\d.]+)-([\d.]+)%", f.details)
        if not m:
            bad.append("title %r" % f.title)
            continue
        k = int(m.group(1).replace(",", ""))
        lo, hi = wilson(k, grand)
        if k != totals.get(f.path) or \
           abs(float(m.group(2)) - 100 * k / grand) > 0.0051 or \
           abs(float(m.group(3)) - 100 * lo) > 0.0051 or \
           abs(float(m.group(4)) - 100 * hi) > 0.0051:
            bad.append("title %r (want %d, %.2f%%, %.2f-%.2f)" % (
                f.title, totals.get(f.path, -1), 100 * k / grand,
                100 * lo, 100 * hi))
        if base:
            kb = int(m.group(5).replace(",", ""))
            want_b = btotals.get(f.path, 0)
            d = k / grand - kb / bgrand
            if kb != want_b or \
               abs(float(m.group(6)) - 100 * kb / bgrand) > 0.0051 or \
               abs(float(m.group(9)) - 100 * d) > 0.0051:
                bad.append("before in %r (want %d)" % (f.title, want_b))
            # Red grew, blue shrank, deeper the larger the change.
            c = rgb(f.fill)
            v = round(250 - 200 * abs(d) / maxd) if maxd else 250
            want = (255, v, v) if d > 0 else (v, v, 255) if d < 0 \
                else (250, 250, 250)
            if c != want:
                bad.append("%r changed by %+.4f but is %s, want %s" % (
                    f.path, d, f.fill, want))
            lo_d, hi_d = float(m.group(10)), float(m.group(11))
            if not lo_d <= 100 * d <= hi_d:
                bad.append("change CI of %r misses the change" % (f.path,))
    report(not bad, "titles: counts, shares and 95% Wilson intervals" +
           (", both profiles, colours by change" if base else ""),
           "; ".join(bad[:5]))

    # Children sorted by name, laid from the parent's left edge; frames
    # that are not drawn leave their gap.
    bad = []
    kids = {}
    for f in frames[1:]:
        kids.setdefault(f.parent.i, []).append(f)
    inkids = {}
    for q in totals:
        inkids.setdefault(q[:-1], []).append(q)
    for pi, ks in kids.items():
        p = frames[pi]
        names = [k.name.encode("utf-8", "surrogateescape") for k in ks]
        if names != sorted(names):
            bad.append("children of %r not sorted" % (p.path,))
        allkids = sorted(inkids.get(p.path, []),
                         key=lambda q: q[-1].encode("utf-8",
                                                    "surrogateescape"))
        x = p.fx
        pos = {}
        for q in allkids:
            pos[q] = x
            x += totals[q]
        for k in ks:
            if k.fx != pos.get(k.path):
                bad.append("%r at %d, want %s" % (k.path, k.fx,
                                                  pos.get(k.path)))
    report(not bad, "children sorted by name, each at its parent's x plus "
           "the siblings before it", "; ".join(bad[:5]))

    # Icicle: the root on top; flame: at the bottom.
    ys = [f.y for f in frames]
    if info["mode"] == "icicle":
        report(root.y == min(ys) and all(f.y > f.parent.y for f in frames[1:]),
               "icicle: root on top, children below their parents")
    else:
        report(root.y == max(ys) and all(f.y < f.parent.y for f in frames[1:]),
               "flame: root at the bottom, children above their parents")

    # FlameGraph's annotations get their own colours (not in diff mode,
    # where colour is the change).
    if not base:
        bad = []
        seen = set()
        for f in frames[1:]:
            c = rgb(f.fill)
            kind = f.name[-4:] if re.search(r"_\[[kji]\]$", f.name) else ""
            seen.add(kind)
            ok = {"_[k]": lambda c: 190 <= c[0] <= 255 and 90 <= c[1] <= 155
                  and c[2] == 0 and "; kernel" in f.details,
                  "_[j]": lambda c: 50 <= c[0] <= 110 and 200 <= c[1] <= 255
                  and c[0] == c[2] and "; JIT" in f.details,
                  "_[i]": lambda c: 50 <= c[0] <= 110 and 165 <= c[1] <= 220
                  and c[1] == c[2] and "; inlined" in f.details,
                  "": lambda c: c[0] >= 205 and c[2] <= 55}[kind](c)
            if not ok:
                bad.append("%r is %s" % (f.name, f.fill))
        report(not bad, "colours: kernel orange, JIT green, inlined aqua, "
               "others red-yellow (%d kinds seen)" % len(seen),
               "; ".join(bad[:5]))

    if want_all:
        drawn = set(f.path for f in frames[1:])
        want = set(p for p, c in totals.items() if c > 0)
        report(drawn == want, "every stack of the input is drawn",
               "missing %s, extra %s" % (sorted(want - drawn)[:3],
                                         sorted(drawn - want)[:3]))

    if cap is not None:
        # The widest are drawn; among equally wide, the shallower.
        drawn = set(f.path for f in frames[1:])
        dk = [(-totals[p], len(p)) for p in drawn]
        ok = [(-c, len(p)) for p, c in totals.items()
              if p not in drawn and c > 0]
        report(len(frames) <= cap and ok and max(dk) < min(ok),
               "at most %d frames drawn (%d), the widest: the narrowest "
               "drawn has %d samples, the widest left out %d" % (
                   cap, len(frames), -max(dk)[0], -min(ok or [(0, 0)])[0]))
    if minwidth is not None:
        drawn = set(f.path for f in frames[1:])
        narrow = [p for p in drawn if totals[p] * scale < minwidth]
        wide = [p for p, c in totals.items()
                if p not in drawn and c * scale >= minwidth]
        report(not narrow and not wide,
               "exactly the frames of at least %s px are drawn" % minwidth,
               "narrow drawn %r; wide left out %r" % (narrow[:3], wide[:3]))

    bad = []
    for f in frames:
        if f.label and not (f.label == f.name or f is root or
                            (f.label.endswith("..") and
                             f.name.startswith(f.label[:-2]))):
            bad.append("label %r of %r" % (f.label, f.name))
    report(not bad, "labels are the name or its head", "; ".join(bad[:5]))

    # Escaping: a name made of XML's special characters comes back
    # intact, and the file holds it only escaped.
    report(raw.count(b"<script") == 1 and raw.count(b"]]>") == 1,
           "one <script>, one CDATA end: names never become markup")
    special = [f for f in frames if f.name == "<&>\"'"]
    if any("<&>\"'" in q for q in totals):
        report(len(special) == 1 and
               b"&lt;&amp;&gt;&quot;&#39;" in raw and b"<&>" not in raw,
               "the name <&>\"' is escaped and round-trips")
    return True


# ---- browser ----

FRAME_JS = """
(function () {
  var gs = document.getElementById('frames').children, out = [];
  for (var i = 0; i < gs.length; i++) {
    var r = gs[i].getElementsByTagName('rect')[0];
    out.push({w: +r.getAttribute('width'), x: +r.getAttribute('x'),
              fill: r.getAttribute('fill'),
              shown: !gs[i].classList.contains('hide'),
              anc: gs[i].classList.contains('anc'),
              label: gs[i].getElementsByTagName('text')[0].textContent});
  }
  return out;
})()
"""


def center_of(page, i):
    """Where frame @i is on the screen, scrolled into view; None when it
    is not displayed."""
    return page.eval("""(function () {
      var g = document.getElementById('frames').children[%d];
      if (getComputedStyle(g).display === 'none') return null;
      var r = g.getElementsByTagName('rect')[0];
      r.scrollIntoView({block: 'center', inline: 'center'});
      var b = r.getBoundingClientRect();
      return [b.x + b.width / 2, b.y + b.height / 2];
    })()""" % i)


def text_of(page, id_):
    return page.eval("document.getElementById(%r).textContent" % id_)


def box_of(page, id_):
    return page.eval("(function(){var e=document.getElementById(%r);"
                     "e.scrollIntoView({block:'center',inline:'center'});"
                     "var b=e.getBoundingClientRect();return [b.x+b.width/2,"
                     "b.y+b.height/2];})()" % id_)


def check_browser(specs, search, zoom_path, slow):
    from cdp import Browser, find_chromium
    if not find_chromium():
        print("SKIP chromium not installed")
        return 3
    t0 = time.monotonic()
    with Browser(timeout=60) as b:
        page = b.new_page(width=1400, height=1000)
        for spec in specs:
            try:
                check_page(page, spec, search, zoom_path, slow)
            except Exception as e:
                report(False, "%s: the checks ran" % spec, repr(e))
    print("# browser checks took %.1f s" % (time.monotonic() - t0))
    return 0


def check_page(page, spec, search, zoom_path, slow):
    if True:
        if True:
            svg, folded = spec.split("@", 1)
            totals, grand, stacks = read_folded(folded.split(","))
            info, frames = parse_svg(svg)
            tag = "%s (%s)" % (os.path.basename(svg), info["mode"])
            W, xpad = info["width"], info["xpad"]
            full = W - 2 * xpad
            t1 = time.monotonic()
            page.errors.clear()
            page.dialogs.clear()
            page.navigate("file://" + os.path.abspath(svg))
            ready = page.eval("document.documentElement"
                              ".getAttribute('data-ready')")
            load_s = time.monotonic() - t1
            report(ready == "1" and not page.errors,
                   "%s: loads, script ready, no JS errors" % tag,
                   "ready=%r errors=%r" % (ready, page.errors))
            if slow:
                report(load_s < slow, "%s: loads in %.1f s (< %s s)" % (
                    tag, load_s, slow), "took %.1f s" % load_s)

            # Zoom: a real click on the frame at zoom_path (or the
            # widest frame two levels down).
            target = None
            if zoom_path:
                want = tuple(zoom_path.split(";"))
                target = next((f for f in frames if f.path == want), None)
            if target is None:
                cands = [f for f in frames if f.d == 2] or frames[1:]
                target = max(cands, key=lambda f: (f.fw, -f.i))
            dom = page.eval(FRAME_JS)
            orig = [(d["x"], d["w"]) for d in dom]
            page.click(*center_of(page, target.i))
            dom = page.eval(FRAME_JS)
            bad = []
            z = target
            for f, d in zip(frames, dom):
                inside = z.fx <= f.fx and f.fx + f.fw <= z.fx + z.fw
                if f.d < z.d:
                    anc = f.fx <= z.fx and f.fx + f.fw >= z.fx + z.fw
                    if anc and not (d["shown"] and d["anc"] and
                                    abs(d["w"] - full) < 0.011):
                        bad.append("ancestor %r: %r" % (f.path, d))
                    if not anc and d["shown"]:
                        bad.append("%r beside the zoom is shown" %
                                   (f.path,))
                elif inside:
                    want_w = f.fw * full / z.fw
                    want_x = xpad + (f.fx - z.fx) * full / z.fw
                    if not d["shown"] or abs(d["w"] - want_w) > 0.011 or \
                       abs(d["x"] - want_x) > 0.011:
                        bad.append("%r in the zoom: w %.2f x %.2f, want "
                                   "%.2f %.2f" % (f.path, d["w"], d["x"],
                                                  want_w, want_x))
                elif d["shown"]:
                    bad.append("%r outside the zoom is shown" % (f.path,))
            sibs = [f for f in frames if f.d == z.d and f is not z]
            # The "hide" class really hides (one sibling, if any).
            if sibs and center_of(page, sibs[0].i) is not None:
                bad.append("a sibling is hidden by class, not on screen")
            report(abs(dom[z.i]["w"] - full) < 0.011 and not bad and
                   not any(dom[s.i]["shown"] for s in sibs),
                   "%s: clicking %r zooms it to the full width (%d "
                   "siblings hidden)" % (tag, ";".join(z.path), len(sibs)),
                   "width %.2f, want %.2f; %s" % (dom[z.i]["w"], full,
                                                 "; ".join(bad[:4])))
            report(dom[z.i]["label"] == z.name or
                   (dom[z.i]["label"].endswith("..") and
                    z.name.startswith(dom[z.i]["label"][:-2])),
                   "%s: the zoomed frame is labelled" % tag,
                   repr(dom[z.i]["label"]))
            unzoom_shown = page.eval("getComputedStyle(document."
                                     "getElementById('unzoom')).display")
            # Hover: the details line shows the frame's title.
            leaf = max((f for f in frames
                        if z.fx <= f.fx < z.fx + z.fw and f.d > z.d),
                       key=lambda f: (f.fw, f.d), default=z)
            page.mouse("mouseMoved", *center_of(page, leaf.i))
            det = text_of(page, "details")
            report(det == leaf.title and "95% CI" in det,
                   "%s: hovering %r shows its samples, share and 95%% CI"
                   % (tag, leaf.name), "details %r, want %r" %
                   (det, leaf.title))
            # Reset Zoom restores the first picture.
            ux, uy = box_of(page, "unzoom")
            page.click(ux, uy)
            dom = page.eval(FRAME_JS)
            bad = [f.path for f, d, o in zip(frames, dom, orig)
                   if not d["shown"] or d["anc"] or
                   abs(d["x"] - o[0]) > 0.011 or abs(d["w"] - o[1]) > 0.011]
            report(unzoom_shown != "none" and not bad,
                   "%s: Reset Zoom restores every frame" % tag,
                   "unzoom %r; differ: %r" % (unzoom_shown, bad[:4]))

            if search:
                check_search(page, tag, frames, stacks, grand, search)
            report(not page.errors and
                   page.dialogs == (["prompt"] if search else []),
                   "%s: no JS errors or unexpected dialogs after the "
                   "interactions" % tag, "errors %r, dialogs %r" % (
                       page.errors, page.dialogs))


def check_search(page, tag, frames, stacks, grand, term):
    # Click "Search": a prompt opens; answer it like a user.
    sx, sy = box_of(page, "search")
    ids = page.click(sx, sy, wait=False)
    try:
        dlg = page.event("Page.javascriptDialogOpening", timeout=10)
    except TimeoutError:
        for i in ids:
            page.b.result(i)
        return report(False, "%s: Search opens a prompt" % tag, "none came")
    page.call("Page.handleJavaScriptDialog",
              {"accept": True, "promptText": term})
    for i in ids:
        page.b.result(i)
    dom = page.eval(FRAME_JS)
    rx = re.compile(term)
    want = set(f.i for f in frames[1:] if rx.search(f.name))
    got = set(i for i, d in enumerate(dom) if d["fill"] == HL)
    # The share under the drawn matches, each outermost one counted once.
    under = 0
    for f in frames[1:]:
        if f.i in want:
            p = f.parent
            while p is not None and p.i not in want:
                p = p.parent
            if p is None:
                under += f.fw
    share = 100.0 * under / grand
    # With every stack drawn, that is the share of samples with a match
    # anywhere in their stack.
    drawn = set(f.path for f in frames[1:])
    if all(st[:i] in drawn for st, c in stacks
           for i in range(1, len(st) + 1) if c):
        in_stacks = 100.0 * sum(c for st, c in stacks
                                if any(rx.search(fr) for fr in st)) / grand
        if abs(in_stacks - share) > 1e-9:
            share = -1
    matched = text_of(page, "matched")
    report(dlg["params"].get("type") == "prompt" and want and got == want,
           "%s: search %r highlights the %d matching frames" % (
               tag, term, len(want)),
           "highlighted %s, want %s" % (sorted(got)[:8], sorted(want)[:8]))
    report(matched == "Matched: %.2f%%" % share,
           "%s: matched share is %.2f%% (samples under a drawn match)" % (
               tag, share), "got %r" % matched)
    # Escape clears the search.
    page.key("Escape", "Escape", 27)
    dom = page.eval(FRAME_JS)
    left = [i for i, d in enumerate(dom) if d["fill"] == HL]
    report(not left and text_of(page, "matched").strip() == "" and
           [d["fill"] for d in dom] == [f.fill for f in frames],
           "%s: Escape clears the search, colours restored" % tag,
           "still highlighted: %r" % left[:5])


def main(argv):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    mode = argv[1]
    args = argv[2:]
    opts = {"--base": None, "--search": None, "--zoom": None,
            "--slow": None, "--cap": None, "--minwidth": None}
    flags = {"--all": False}
    pos = []
    i = 0
    while i < len(args):
        if args[i] in opts:
            opts[args[i]] = args[i + 1]
            i += 2
        elif args[i] in flags:
            flags[args[i]] = True
            i += 1
        else:
            pos.append(args[i])
            i += 1
    if mode == "struct":
        check_struct(pos[0], pos[1:], opts["--base"], flags["--all"],
                     int(opts["--cap"]) if opts["--cap"] else None,
                     float(opts["--minwidth"]) if opts["--minwidth"]
                     else None)
        return 0
    if mode == "browser":
        return check_browser(pos, opts["--search"], opts["--zoom"],
                             float(opts["--slow"]) if opts["--slow"]
                             else None)
    print("usage: see the docstring", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
