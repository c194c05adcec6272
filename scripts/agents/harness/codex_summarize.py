"""Summarise the recorded Codex POST /v1/responses request(s): codex_summarize.py RECDIR [--full] [--all] [--rc N --errfile F --outfile F]"""
import argparse, json, os, re, sys
ap = argparse.ArgumentParser(); ap.add_argument("rec"); ap.add_argument("--full", action="store_true"); ap.add_argument("--all", action="store_true")
ap.add_argument("--rc", type=int, default=0); ap.add_argument("--errfile"); ap.add_argument("--outfile")
A = ap.parse_args()
clip = (lambda s: s) if A.full else (lambda s: s[:120])
def tail(p):
    try: return open(p, errors="replace").read()[-800:]
    except Exception: return ""
reqs = []
for fn in sorted(os.listdir(A.rec)):
    d = json.load(open(os.path.join(A.rec, fn)))
    if d["method"] == "POST" and d["path"].split("?")[0].endswith("/responses") and isinstance(d.get("body"), dict):
        reqs.append((fn, d["body"]))
def norm(t): return re.sub(r"/tmp/check-agents\.[A-Za-z0-9]+", "/tmp/check-agents.X", t)
def text_of(content):
    if isinstance(content, str): return content
    out = []
    for c in content or []:
        if not isinstance(c, dict): continue
        if c.get("type") in ("input_text", "output_text", "text", "summary_text", "reasoning_text"): out.append(c.get("text", ""))
        elif c.get("type") == "input_image": out.append("[image]")
    return "\n".join(out)
def summarize(body):
    out = []
    for it in body.get("input", []):
        t = it.get("type", "message" if "role" in it else "?")
        r = {"i": len(out), "type": t}
        if t == "message":
            r["role"] = it.get("role"); text = text_of(it.get("content"))
        elif t in ("function_call", "custom_tool_call", "local_shell_call", "tool_search_call"):
            r["role"] = "assistant"; r["tool_calls"] = [it.get("call_id") or it.get("id")]
            text = f'{it.get("name", "")} {it.get("arguments", it.get("input", ""))}' if t != "local_shell_call" else json.dumps(it.get("action"))
        elif t.endswith("_output"):
            r["role"] = "tool"; r["tool_results"] = [it.get("call_id")]
            o = it.get("output"); text = o if isinstance(o, str) else text_of(o)
        elif t == "reasoning":
            r["role"] = "assistant"; text = text_of(it.get("summary"))
        elif t in ("compaction", "compaction_summary", "context_compaction"):
            r["role"] = "opaque"; text = "[encrypted_content %d chars]" % len(it.get("encrypted_content") or "")
        else:
            r["role"] = it.get("role", "?"); text = json.dumps(it)[:200]
        text = norm(text or "")
        r["text"] = clip(text); r["len"] = len(text)
        out.append(r)
    return out
if not reqs:
    print(json.dumps({"agent": "codex", "error": "no POST /v1/responses request recorded", "agent_rc": A.rc,
                      "agent_stderr": tail(A.errfile), "agent_stdout": tail(A.outfile)})); sys.exit(1)
pick = reqs if A.all else [max(reqs, key=lambda fb: len(fb[1].get("input", [])))]
for fn, body in pick:
    msgs = summarize(body)
    head = json.dumps({"agent": "codex", "request": fn, "model": body.get("model"), "n_requests": len(reqs), "agent_rc": A.rc, "n": len(msgs)})
    sys.stdout.write(head[:-1] + ',"messages":[\n' + ",\n".join(json.dumps(m, ensure_ascii=False) for m in msgs) + "\n]}\n")
