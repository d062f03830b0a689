#!/usr/bin/env python3
"""oracle.py - compare `sym addr2line` inline chains against llvm-symbolizer:
whole paths, full names.

  tests/oracle.py [options] BINARY
  tests/oracle.py --manifest fixtures/build/MANIFEST [options] NAME

Addresses: instruction starts from `objdump -d` of the address source (the
binary itself, or its unstripped original), a seeded random sample of
--sample of them (all when there are fewer, or with --sample 0).

Runs: the oracle (`llvm-symbolizer --obj=F --inlining
--output-style=JSON`) and ours (`sym addr2line --output-style=JSON -f -i
-C --no-plt-names -e F`), each once, all addresses on stdin. For a
stripped binary, the addresses that disagree get one more oracle run on
its unstripped original (--symtab-obj, below).

Agreement: same number of frames, and for every frame the same function
name, the same whole file path and the same line, byte for byte. Nothing
is normalized but the spelling of "no name" and "no file" ("", "??", and
the GNU and eu formats of --ours-format): sym's LLVM styles demangle as LLVM 14 does (its
llvm::itaniumDemangle(), names it cannot demangle left mangled), and with
--no-plt-names name a PLT stub as llvm does (`_init`, `_fini`). An
oracle other than llvm-symbolizer 14 (llvm-symbolizer-19 for split DWARF
and zstd, docs/oracle.md) demangles with another LLVM's demangler, so
there both sides print linkage names raw (the oracle with --no-demangle,
ours with it instead of -C; {demangle} in --ours). One
relaxed rule is left, for a bug of the oracle (counted and printed as
"agreeing through relaxed rules", examples with --show-relaxed N;
docs/oracle.md has a reproducer):
  - --symtab-obj (A3): llvm-symbolizer 14 reads the symbol table of the
    file it is given only, not the separate debug file's, so for a
    stripped binary it has no name where the debug file has one. The
    oracle's answer on the unstripped original (or the debug file) counts
    too, name or chain.

The peers (GNU addr2line, eu-addr2line) are measured by tests/peers.py,
byte for byte in each one's style.

Exit status: 0 when agreement >= --threshold percent (default 99.5), 1
when below, 2 on usage or tool failure. Stdlib only.
"""

import argparse
import json
import math
import os
import random
import re
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OURS = (shlex.quote(os.environ.get("SYM") or
                            os.path.join(ROOT, "bin", "sym")) +
                " addr2line --output-style=JSON -f -i {demangle} --no-plt-names "
                "-e {obj} {opts}")
DEFAULT_ORACLE = "llvm-symbolizer"

# ------------------------------------------------------------- addresses

_INSN = re.compile(r"^\s*([0-9a-f]+):\t")


# objdump for an ELF machine (e_machine) the host's binutils cannot
# disassemble: the cross binutils (binutils-aarch64-linux-gnu).
CROSS_OBJDUMP = {183: "aarch64-linux-gnu-objdump"}


def elf_machine(path):
    """e_machine of an ELF file, or None."""
    try:
        with open(path, "rb") as f:
            h = f.read(20)
    except OSError:
        return None
    if len(h) < 20 or h[:4] != b"\x7fELF":
        return None
    return int.from_bytes(h[18:20], "little" if h[5] == 1 else "big")


def objdump_addresses(path):
    """Instruction-start addresses of every code section `objdump -d`
    disassembles (no symbols needed: a stripped file works too)."""
    tool = CROSS_OBJDUMP.get(elf_machine(path), "objdump")
    p = subprocess.run([tool, "-d", "--no-show-raw-insn", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0:
        die("objdump -d %s failed: %s" % (path, p.stderr.strip()))
    addrs = set()
    for line in p.stdout.splitlines():
        m = _INSN.match(line)
        if m:
            addrs.add(int(m.group(1), 16))
    return sorted(addrs)


def sample(addrs, n, seed):
    if n <= 0 or len(addrs) <= n:
        return list(addrs)
    return sorted(random.Random(seed).sample(addrs, n))

# ----------------------------------------------------------- tool runners


def run_tool(cmd, addrs, what, timeout, any_rc=False):
    """Run CMD (a shell-quoted string) with one 0x address per line on
    stdin; return (stdout, seconds)."""
    data = "".join("0x%x\n" % a for a in addrs)
    t0 = time.time()
    try:
        p = subprocess.run(cmd, shell=True, input=data,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, errors="replace",
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        die("%s timed out after %d s: %s" % (what, timeout, cmd))
    dt = time.time() - t0
    if p.returncode != 0 and not (any_rc and p.stdout):
        die("%s exited %d: %s\n%s" % (what, p.returncode, cmd,
                                      p.stderr.strip()[:2000]))
    return p.stdout, dt


def parse_json_stream(text, addrs, what):
    """llvm-symbolizer's JSON: one object per address. Returns a list of
    frame lists (dicts with FunctionName, FileName, Line)."""
    dec = json.JSONDecoder()
    out = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n:
            break
        try:
            obj, i = dec.raw_decode(text, i)
        except ValueError as e:
            die("%s: bad JSON after %d objects: %s: %r" %
                (what, len(out), e, text[i:i + 200]))
        if isinstance(obj, list):  # tolerate one big array
            out.extend(obj)
        else:
            out.append(obj)
    if len(out) != len(addrs):
        die("%s: %d JSON objects for %d addresses" %
            (what, len(out), len(addrs)))
    chains = []
    for a, obj in zip(addrs, out):
        got = obj.get("Address")
        if got is not None and parse_addr(got) != a:
            die("%s: answer for %s where 0x%x was expected" % (what, got, a))
        if "Error" in obj:
            chains.append([{"FunctionName": "??", "FileName": "??",
                            "Line": 0, "error": obj["Error"]}])
        else:
            chains.append(obj.get("Symbol") or [])
    return chains


def parse_addr(s):
    try:
        return int(str(s), 16)
    except ValueError:
        return None


_FILELINE = re.compile(r"^(.*?):(\d+|\?)(?::\d+)?(?: \(discriminator \d+\))?$")
_EU_INLINED = re.compile(r" inlined at .* in .*$")
_ADDRLINE = re.compile(r"^0x[0-9a-f]+$")


def parse_pairs(text, addrs, what, eu=False):
    """GNU addr2line / eu-addr2line `-a -f -i` output: an address line,
    then function and file:line[:col] lines per frame, innermost first."""
    groups = []
    cur = None
    for line in text.splitlines():
        if _ADDRLINE.match(line):
            cur = []
            groups.append(cur)
        elif cur is None:
            die("%s: output does not start with an address" % what)
        else:
            cur.append(line)
    if len(groups) != len(addrs):
        die("%s: %d answers for %d addresses" % (what, len(groups), len(addrs)))
    chains = []
    for g in groups:
        frames = []
        for j in range(0, len(g) - 1, 2):
            fn = g[j]
            if eu:
                fn = _EU_INLINED.sub("", fn)
            m = _FILELINE.match(g[j + 1])
            if m:
                f, ln = m.group(1), m.group(2)
            else:
                f, ln = g[j + 1], "0"
            frames.append({"FunctionName": fn, "FileName": f,
                           "Line": int(ln) if ln.isdigit() else 0})
        chains.append(frames)
    return chains

# ----------------------------------------------------------- normalising

def norm_name(s):
    if s is None or s in ("", "??", "<invalid>"):
        return "??"
    return s


def norm_file(s):
    if s is None or s in ("", "??", "<invalid>"):
        return "??"
    return s


def norm_frame(fr):
    return (norm_name(fr.get("FunctionName")), norm_file(fr.get("FileName")),
            int(fr.get("Line") or 0))


def norm_chain(ch):
    fr = [norm_frame(f) for f in ch]
    # An empty answer and a single all-unknown frame mean the same.
    if not fr:
        fr = [("??", "??", 0)]
    return fr


def compare(ours, oracle, outer_alt, why=None):
    """Return None when the chains agree, else a reason string.
    outer_alt: other accepted outermost names (the oracle's on
    --symtab-obj, A3), or None; why: a list that gets the names of the
    relaxed rules that were needed."""
    if len(ours) != len(oracle):
        return "frame count %d vs %d" % (len(ours), len(oracle))
    for k, (a, b) in enumerate(zip(ours, oracle)):
        if a[1] != b[1]:
            return "frame %d file" % k
        if a[2] != b[2]:
            return "frame %d line" % k
        if a[0] == b[0]:
            continue
        if k == len(ours) - 1 and outer_alt and a[0] in outer_alt:
            if why is not None:
                why.append("--symtab-obj name")
            continue
        return "frame %d function" % k
    return None

# ------------------------------------------------------------------ main


def die(msg):
    sys.stderr.write("oracle.py: %s\n" % msg)
    sys.exit(2)


def read_manifest(path, name):
    base = os.path.dirname(os.path.abspath(path))
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            fld = line.rstrip("\n").split("\t")
            if len(fld) != 7 or fld[0] != name:
                continue

            def p(x):
                return x if os.path.isabs(x) else os.path.join(base, x)

            def o(x):
                return "" if x == "-" else x
            return {"binary": p(fld[0]), "kind": fld[1], "ours_opts": o(fld[2]),
                    "oracle": fld[3], "oracle_obj": p(fld[4]),
                    "oracle_opts": o(fld[5]), "addr_source": p(fld[6])}
    die("%s: no entry named %r" % (path, name))


def fmt_chain(ch):
    return " <- ".join("%s %s:%d" % f for f in ch)


def main():
    ap = argparse.ArgumentParser(
        description="compare inline chains against llvm-symbolizer")
    ap.add_argument("binary", help="binary, or manifest entry with --manifest")
    ap.add_argument("--manifest", help="fixtures/build/MANIFEST")
    ap.add_argument("--ours", default=DEFAULT_OURS,
                    help="command under test; {obj} and {opts} are "
                    "substituted (default: %(default)s)")
    ap.add_argument("--ours-format", choices=("json", "gnu", "eu"),
                    default="json", help="output format of --ours")
    ap.add_argument("--ours-opts", default=None,
                    help="extra options for --ours (debug-info lookup)")
    ap.add_argument("--oracle", default=None,
                    help="oracle command (default llvm-symbolizer)")
    ap.add_argument("--oracle-obj", help="file the oracle reads (default: "
                    "the binary)")
    ap.add_argument("--oracle-opts", default=None,
                    help="extra oracle options, e.g. --debug-file-directory=D")
    ap.add_argument("--symtab-obj", help="a file whose symbol-table names "
                    "(read by the oracle) also count for the outermost frame "
                    "(default: --addr-source when it is not the binary)")
    ap.add_argument("--addr-source", help="file to objdump for addresses "
                    "(default: the binary)")
    ap.add_argument("--addresses", help="file of addresses (one hex per "
                    "line) instead of objdump")
    ap.add_argument("--sample", type=int, default=1000,
                    help="addresses to sample, 0 = all (default %(default)s)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threshold", type=float, default=99.5,
                    help="minimum agreement %% (default %(default)s)")
    ap.add_argument("--show", type=int, default=20,
                    help="disagreements to print (default %(default)s)")
    ap.add_argument("--show-relaxed", type=int, default=0, metavar="N",
                    help="print N agreements that needed a relaxed rule")
    ap.add_argument("--ours-bias", type=lambda x: int(x, 0), default=0,
                    metavar="ADDR", help="ours takes each address minus "
                    "ADDR: a Linux kernel's tables are relative to its "
                    "_text, the oracle takes link-time addresses")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("-q", "--quiet", action="store_true",
                    help="print only the summary line and disagreements")
    args = ap.parse_args()

    if args.manifest:
        e = read_manifest(args.manifest, args.binary)
    else:
        b = os.path.abspath(args.binary)
        e = {"binary": b, "kind": "-", "ours_opts": "",
             "oracle": DEFAULT_ORACLE, "oracle_obj": b, "oracle_opts": "",
             "addr_source": b}
    for k in ("oracle", "oracle_obj", "oracle_opts", "addr_source",
              "ours_opts", "symtab_obj"):
        v = getattr(args, k)
        if v is not None:
            e[k] = v
    label = args.binary

    if args.addresses:
        with open(args.addresses) as f:
            addrs = [int(x, 16) for x in f.read().split()]
        total = len(addrs)
        addrs = sample(sorted(set(addrs)), args.sample, args.seed)
    else:
        alla = objdump_addresses(e["addr_source"])
        total = len(alla)
        addrs = sample(alla, args.sample, args.seed)
    if not addrs:
        die("no addresses from %s" % e["addr_source"])

    # LLVM 14's demangler is the one sym's LLVM styles copy; another
    # version's spelling differs ("> >" or ">>"): raw names then.
    ver = subprocess.run([e["oracle"], "--version"], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, universal_newlines=True)
    raw_names = "LLVM version 14." not in ver.stdout
    nodem = " --no-demangle" if raw_names else ""
    oracle_base = "%s --obj=%s --inlining%s --output-style=JSON %s" % (
        e["oracle"], shlex.quote(e["oracle_obj"]), nodem, e["oracle_opts"])
    out, t_or = run_tool(oracle_base, addrs, "oracle", args.timeout)
    raw = parse_json_stream(out, addrs, "oracle")
    oracle = [norm_chain(c) for c in raw]
    with_line = sum(1 for c in oracle if c[0][1] != "??" and c[0][2] > 0)
    if with_line * 10 < len(addrs):
        die("the oracle has line info for only %d of %d addresses: is its "
            "debug info found? (%s)" % (with_line, len(addrs), oracle_base))

    ours_cmd = args.ours.format(obj=shlex.quote(e["binary"]),
                                opts=e["ours_opts"],
                                demangle="--no-demangle" if raw_names
                                else "-C")
    ours_addrs = [a - args.ours_bias for a in addrs]
    out, t_us = run_tool(ours_cmd, ours_addrs, "ours", args.timeout,
                         any_rc=args.ours_format == "eu")
    if args.ours_format == "json":
        ours = parse_json_stream(out, ours_addrs, "ours")
    else:
        ours = parse_pairs(out, ours_addrs, "ours",
                           eu=args.ours_format == "eu")
    ours = [norm_chain(c) for c in ours]

    # For the addresses that disagree, when the binary is stripped (or
    # --symtab-obj is given): llvm-symbolizer 14 names the outermost frame
    # from the symbol table of the file it was given only, so it has no
    # name where the debug file's .symtab has one (A3). The answer it
    # gives reading --symtab-obj (by default the unstripped original, the
    # address source, when it differs from the binary) counts too: its
    # outermost name, or its whole chain (the same code; llvm also takes
    # the file of a line-0 frame from an STT_FILE symbol there).
    def failing(chains):
        return {i for i in range(len(addrs))
                if compare(chains[i], oracle[i], None) is not None}
    need = sorted(failing(ours))
    outer_alt = [None] * len(addrs)
    alt_chain = [None] * len(addrs)
    symobj = e.get("symtab_obj")
    if symobj is None and e["addr_source"] != e["binary"]:
        symobj = e["addr_source"]
    if need and symobj and symobj != e["oracle_obj"]:
        sub = [addrs[i] for i in need]
        cmd = "%s --obj=%s --inlining%s --output-style=JSON" % (
            e["oracle"], shlex.quote(symobj), nodem)
        out, _ = run_tool(cmd, sub, "oracle (symbol table of %s)" % symobj,
                          args.timeout)
        raw = parse_json_stream(out, sub, "oracle")
        for i, c in zip(need, raw):
            alt_chain[i] = norm_chain(c)
            outer_alt[i] = [alt_chain[i][-1][0]]

    bad = []
    reasons = {}
    def judge(chains, i, rules=None):
        why = []
        r = compare(chains[i], oracle[i], outer_alt[i], why)
        if r and alt_chain[i] is not None:
            why = ["oracle on --symtab-obj"]
            if compare(chains[i], alt_chain[i], outer_alt[i], why) is None:
                r = None
        if r is None and rules is not None and why:
            for w in why:
                rules[w] = rules.get(w, 0) + 1
            if len(relaxed) < args.show_relaxed:
                relaxed.append((addrs[i], why, chains[i], oracle[i]))
        return r

    rules = {}
    relaxed = []
    for i, a in enumerate(addrs):
        r = judge(ours, i, rules)
        if r:
            bad.append((a, r, ours[i], oracle[i], outer_alt[i]))
            key = re.sub(r"frame \d+", "frame N", r) if "count" not in r \
                else "frame count"
            reasons[key] = reasons.get(key, 0) + 1
    n = len(addrs)
    pct = 100.0 * (n - len(bad)) / n
    # Floor, not round: 19,999 of 20,000 is 99.99%, not 100.00%.
    shown = math.floor(pct * 100) / 100
    inl = sum(1 for c in oracle if len(c) > 1)
    print("# %s [%s]: %.2f%% agree (%d/%d sampled of %d insns, %d with "
          "inline frames; oracle %.2fs, ours %.2fs)" %
          (label, e["kind"], shown, n - len(bad), n, total, inl, t_or, t_us))
    if rules:
        print("# agreeing through relaxed rules: " + ", ".join(
            "%s: %d" % kv for kv in sorted(rules.items(),
                                           key=lambda kv: -kv[1])))
    for a, why, o, g in relaxed:
        print("# 0x%x agrees by %s:" % (a, ", ".join(why)))
        print("#   ours:   " + fmt_chain(o))
        print("#   oracle: " + fmt_chain(g))
    if reasons:
        print("# disagreement kinds: " + ", ".join(
            "%s: %d" % kv for kv in sorted(reasons.items(),
                                           key=lambda kv: -kv[1])))
    for a, r, o, g, d in bad[:args.show]:
        print("# 0x%x: %s" % (a, r))
        print("#   ours:   " + fmt_chain(o))
        print("#   oracle: " + fmt_chain(g) +
              ("  (also accepted: %s)" % ", ".join(d) if d else ""))
    if not args.quiet:
        print("#   oracle: " + oracle_base)
        print("#   ours:   " + ours_cmd)

    sys.exit(0 if pct >= args.threshold else 1)


if __name__ == "__main__":
    main()
