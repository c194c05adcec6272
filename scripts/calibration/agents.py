#!/usr/bin/env python3
"""Compact real agent sessions with one model and the defaults; print a Markdown table.

Usage: agents.py MF MODEL [FILE|DIR]...
Without paths: the shared corpus (MF_CORPUS, default ../shared/corpus), every pre-compaction
cut of its sessions (the file up to an agent's own compaction), and FRESH_DIR (default
/work/wt/fresh). Works on copies; nothing given is modified.
"""
import json
import os
import subprocess
import sys
import tempfile

mf, model, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
corpus = os.environ.get("MF_CORPUS", "../shared/corpus")
fresh = os.environ.get("FRESH_DIR", "/work/wt/fresh")
if not paths:
    paths = [corpus, fresh]
files = []
for p in paths:
    if os.path.isdir(p):
        for root, _, names in sorted(os.walk(p)):
            files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".jsonl")]
    elif os.path.isfile(p):
        files.append(p)

work = tempfile.mkdtemp()
cases = []
for f in files:
    name = os.path.relpath(f, corpus) if f.startswith(corpus) else f
    cases.append((name, open(f, "rb").read()))
    lines = open(f, "rb").read().split(b"\n")
    for i, line in enumerate(lines):
        if b'"compact_boundary"' in line or b'"type":"compaction"' in line or b'"type": "compaction"' in line:
            cases.append((f"{name} cut@{i + 1}", b"\n".join(lines[:i]) + b"\n"))

print("| session | tokens before | after | after ÷ before | verdict | retention | salient (user / calls / prose) |")
print("|---|---|---|---|---|---|---|")
for name, data in cases:
    src = os.path.join(work, "in.jsonl")
    out = os.path.join(work, "out.jsonl")
    open(src, "wb").write(data)
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.run(
        [mf, "compact", src, "-o", out, "--force", "--json", "--model", model],
        capture_output=True,
        text=True,
    )
    try:
        r = json.loads(p.stdout.splitlines()[0])
    except (ValueError, IndexError):
        print(f"| {name} | | | | error: {p.stderr.strip()[:80]} | | |")
        continue
    before, after = r["before"]["tokens"], r["after"]["tokens"]
    sums = [s for s in r.get("summaries") or [] if s.get("audit")]
    ret = [s["audit"]["retention"] for s in sums]
    by = {}
    for s in sums:
        for t in s["audit"].get("bySource", []):
            f_, k = by.get(t["source"], (0, 0))
            by[t["source"]] = (f_ + t["found"], k + t["kept"])
    def fk(src):
        f_, k = by.get(src, (0, 0))
        return f"{k}/{f_}"
    verdict = r["action"]
    if verdict != "folded":
        verdict += ": " + r.get("reason", "")[:70]
    rets = f"{min(ret) * 100:.0f}–{max(ret) * 100:.0f} %" if ret else ""
    ratio = f"{after / before:.3f}" if before else ""
    print(f"| {name} | {before} | {after} | {ratio} | {verdict} | {rets} | {fk('user')} / {fk('tool-call')} / {fk('assistant')} |")
