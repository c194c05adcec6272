"""Summarise the recorded Claude Code /v1/messages request: cc_summarize.py RECDIR [--full] [--all]"""
import json, os, re, sys
import argparse
ap = argparse.ArgumentParser(); ap.add_argument("rec"); ap.add_argument("--full", action="store_true"); ap.add_argument("--all", action="store_true")
ap.add_argument("--rc", type=int, default=0); ap.add_argument("--errfile"); ap.add_argument("--outfile")
A = ap.parse_args(); rec = A.rec; full = A.full; allreq = A.all
def tail(p):
    try: return open(p, errors="replace").read()[-600:]
    except Exception: return ""
clip = (lambda s: s) if full else (lambda s: s[:120])
reqs = []
for fn in sorted(os.listdir(rec)):
    d = json.load(open(os.path.join(rec, fn)))
    if d["method"] == "POST" and d["path"].split("?")[0].endswith("/v1/messages") and isinstance(d.get("body"), dict):
        reqs.append((fn, d["body"]))
def summarize(body):
    out = []
    for m in body.get("messages", []):
        c = m.get("content")
        blocks = [{"type": "text", "text": c}] if isinstance(c, str) else (c or [])
        texts, calls, results = [], [], []
        r = {"i": len(out), "role": m.get("role")}
        for b in blocks:
            t = b.get("type")
            if t == "text": texts.append(b.get("text", ""))
            elif t == "tool_use": calls.append(b.get("id"))
            elif t == "tool_result":
                results.append(b.get("tool_use_id"))
                rc = b.get("content")
                if isinstance(rc, str): texts.append(rc)
                elif isinstance(rc, list): texts += [x.get("text", "") for x in rc if x.get("type") == "text"]
            elif t in ("thinking", "redacted_thinking"): r["thinking"] = True
            elif t in ("image", "document"): texts.append(f"[{t}]")
        text = re.sub(r"/tmp/check-agents\.[A-Za-z0-9]+", "/tmp/check-agents.X", "\n".join(texts))
        r["text"] = clip(text); r["len"] = len(text)
        if calls: r["tool_calls"] = calls
        if results: r["tool_results"] = results
        out.append(r)
    return out
if not reqs:
    print(json.dumps({"agent": "claude", "error": "no /v1/messages request recorded", "agent_rc": A.rc,
                      "agent_stderr": tail(A.errfile), "agent_stdout": tail(A.outfile)})); sys.exit(1)
# the conversation request = the one with the most messages (side requests such as titles are short)
pick = reqs if allreq else [max(reqs, key=lambda fb: len(fb[1].get("messages", [])))]
for fn, body in pick:
    msgs = summarize(body)
    head = json.dumps({"agent": "claude", "request": fn, "model": body.get("model"), "n_requests": len(reqs), "agent_rc": A.rc, "n": len(msgs)})
    sys.stdout.write(head[:-1] + ',"messages":[\n' + ",\n".join(json.dumps(m, ensure_ascii=False) for m in msgs) + "\n]}\n")
