"""The Gemini API (generativelanguage v1beta) for fakeapi.py: Gemini CLI's requests.

  POST .../models/M:generateContent        -> one GenerateContentResponse (JSON)
  POST .../models/M:streamGenerateContent  -> SSE (`?alt=sse`: `data: {...}` chunks) or a JSON array
  POST .../models/M:countTokens            -> {"totalTokens": N}

The request (`contents` of `{role: user|model, parts}`) is turned into the Anthropic Messages
shape that fakeapi's `decide` reads: a user text part is a prompt (Gemini CLI's injected
`<session_context>` / `<hook_context>` texts are not), a `functionResponse` part a tool result, a
`functionCall` a call. The plan's kinds map to Gemini CLI's own tools: bash -> run_shell_command,
read -> read_file, write -> write_file; `tool:NAME` calls any declared function.
"""
import json
import re
import uuid

INJECTED = ("<session_context>", "<hook_context>", "<system-reminder>")


def handles(path):
    return path.endswith((":generateContent", ":streamGenerateContent", ":countTokens"))


def declared(body):
    out = []
    for t in body.get("tools") or []:
        for f in t.get("functionDeclarations") or []:
            if f.get("name"):
                out.append(f["name"])
    return out


def as_messages(body):
    """The Gemini request as fakeapi's Anthropic-shaped body."""
    msgs = []
    for c in body.get("contents") or []:
        role = "assistant" if c.get("role") == "model" else "user"
        blocks = []
        for p in c.get("parts") or []:
            if "functionResponse" in p:
                blocks.append({"type": "tool_result", "tool_use_id": (p["functionResponse"] or {}).get("id", "")})
            elif "functionCall" in p:
                blocks.append({"type": "tool_use", "id": (p["functionCall"] or {}).get("id", ""), "name": "x", "input": {}})
            elif isinstance(p.get("text"), str) and not p.get("thought"):
                t = p["text"]
                if role == "user" and t.lstrip().startswith(INJECTED):
                    t = "<system-reminder>" + t  # fakeapi passes over injected context
                blocks.append({"type": "text", "text": t})
        msgs.append({"role": role, "content": blocks})
    # fakeapi's generic kinds, named as it knows them; tool:NAME reaches the declared names.
    tools = [{"name": n} for n in declared(body)] + [{"name": "bash"}, {"name": "read"}, {"name": "write"}]
    sysi = json.dumps(body.get("systemInstruction") or "") + json.dumps(body.get("contents") or [])
    m = re.search(r"Workspace Directories:\*\*(?:\\n|\s)*- (/[^\s\\\"]+)", sysi)
    return {"messages": msgs, "tools": tools, "cwd": m.group(1) if m else "."}


def gemini_call(name, args, cwd):
    if name == "bash":
        return "run_shell_command", {"command": args["command"], "description": "run a command"}
    if name == "read":
        p = args["path"]
        return "read_file", {"file_path": p if p.startswith("/") else f"{cwd}/{p}"}
    if name == "write":
        p = args["path"]
        return "write_file", {"file_path": p if p.startswith("/") else f"{cwd}/{p}", "content": args["content"]}
    return name, args


def answer(h, path, body, fake):
    """Answer one Gemini request; `fake` is the fakeapi module (decide, thinking, find_cwd)."""
    body = body or {}
    if path.endswith(":countTokens"):
        n = len(json.dumps(body)) // 4
        return h._json(200, {"totalTokens": n})
    cfg = body.get("generationConfig") or {}
    if cfg.get("responseMimeType") == "application/json":
        # Gemini CLI's side requests that want JSON (its loop check, its next-speaker check):
        # an answer that lets the run go on.
        props = (cfg.get("responseJsonSchema") or cfg.get("responseSchema") or {}).get("properties") or {}
        out = {}
        for k, v in props.items():
            t = v.get("type", "string").lower()
            out[k] = 0.0 if t == "number" else (0 if t == "integer" else (False if t == "boolean" else
                     ("user" if k == "next_speaker" else "fake: no loop, go on")))
        resp = {"candidates": [{"content": {"role": "model", "parts": [{"text": json.dumps(out)}]},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}}
        return h._json(200, resp) if path.endswith(":generateContent") else h._json(200, [resp])
    conv = as_messages(body)
    kind, what = fake.decide(conv)
    cwd = conv["cwd"]
    parts = []
    think = fake.thinking(conv)
    if think:
        parts.append({"text": think, "thought": True})
    if kind == "text":
        parts.append({"text": what})
    else:
        parts.append({"text": f"Running {len(what)} tool call(s)."})
        for n, a, _ in what:
            gn, ga = gemini_call(n, a, cwd)
            parts.append({"functionCall": {"id": "call_" + uuid.uuid4().hex[:16], "name": gn, "args": ga}})
    resp = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": len(json.dumps(body)) // 4, "candidatesTokenCount": 5,
                              "totalTokenCount": len(json.dumps(body)) // 4 + 5},
            "modelVersion": body.get("model") or "gemini-2.5-pro", "responseId": uuid.uuid4().hex}
    if path.endswith(":generateContent"):
        return h._json(200, resp)
    if "alt=sse" not in h.path:
        return h._json(200, [resp])
    h.send_response(200)
    h.send_header("Content-Type", "text/event-stream")
    h.send_header("Cache-Control", "no-cache")
    h.send_header("Connection", "close")
    h.end_headers()
    h.wfile.write(f"data: {json.dumps(resp)}\r\n\r\n".encode())
    h.wfile.flush()
    h.close_connection = True
