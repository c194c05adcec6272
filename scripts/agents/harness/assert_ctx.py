#!/usr/bin/env python3
"""assert_ctx.py CHECK.json [--has TEXT]... [--lacks TEXT]... [--first-has TEXT] [--calls-paired]
Asserts over check-agents.sh output (run it with --full for whole texts). Exit 0 if all hold, 1 otherwise.
  --has TEXT       some message text contains TEXT
  --lacks TEXT     no message text contains TEXT
  --first-has TEXT the first message that is not codex's injected base-instructions/claude's empty system
                   item contains TEXT (i.e. the summary comes first)
  --calls-paired   every tool call id has a result id and vice versa"""
import json, sys, argparse
ap = argparse.ArgumentParser()
ap.add_argument("file"); ap.add_argument("--has", action="append", default=[]); ap.add_argument("--lacks", action="append", default=[])
ap.add_argument("--first-has"); ap.add_argument("--calls-paired", action="store_true")
a = ap.parse_args()
d = json.load(open(a.file)) if a.file != "-" else json.load(sys.stdin)
ms = d.get("messages") or []
bad = []
if d.get("error"): bad.append("harness error: " + d["error"])
for t in a.has:
    if not any(t in m.get("text", "") for m in ms): bad.append(f"missing: {t[:60]!r}")
for t in a.lacks:
    hits = [m["i"] for m in ms if t in m.get("text", "")]
    if hits: bad.append(f"present (should be folded): {t[:60]!r} at {hits[:5]}")
if a.first_has:
    body = [m for m in ms if not (m.get("role") == "system" and m.get("len") == 0)]
    if d.get("agent") == "codex" and body and body[0].get("role") == "developer": body = body[1:]  # injected base instructions
    if not body or a.first_has not in body[0].get("text", ""): bad.append(f"first message lacks {a.first_has[:60]!r}")
if a.calls_paired:
    calls = [c for m in ms for c in m.get("tool_calls", [])]
    res = [r for m in ms for r in m.get("tool_results", [])] + [m["tool_result_for"] for m in ms if m.get("tool_result_for")]
    if sorted(calls) != sorted(res): bad.append(f"unpaired calls/results: {sorted(set(calls) ^ set(res))[:5]}")
print(json.dumps({"ok": not bad, "problems": bad}))
sys.exit(0 if not bad else 1)
