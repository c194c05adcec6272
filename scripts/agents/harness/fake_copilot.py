"""GitHub Copilot CLI's side of the fake model (imported by fakeapi.py).

Copilot CLI in its custom-provider mode (COPILOT_PROVIDER_TYPE=openai) speaks streaming OpenAI
Chat Completions: POST /v1/chat/completions with "stream": true, tool results as role "tool"
messages, and every user prompt prefixed with "<current_datetime>…</current_datetime>\n\n".
This module turns such a request into the Anthropic-shaped one fakeapi's `decide` reads (tool
results as tool_result blocks, the datetime prefix dropped) and answers `decide`'s reply as a
Chat Completions SSE stream (text, or tool calls with fresh call_ ids).
"""
import json, re, time, uuid

DATETIME = re.compile(r"^\s*<current_datetime>.*?</current_datetime>\s*", re.S)


def as_messages(body):
    """The Chat Completions request as fakeapi's Anthropic-shaped body."""
    msgs = []
    for m in body.get("messages") or []:
        role = m.get("role")
        c = m.get("content")
        texts = c if isinstance(c, str) else "".join(
            p.get("text", "") for p in c or [] if isinstance(p, dict) and p.get("type") == "text")
        if role == "system":
            continue
        if role == "tool":
            msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": m.get("tool_call_id"), "content": texts}]})
        elif role == "user":
            msgs.append({"role": "user", "content": [{"type": "text", "text": DATETIME.sub("", texts or "")}]})
        else:
            blocks = [{"type": "text", "text": texts or ""}]
            for tc in m.get("tool_calls") or []:
                f = tc.get("function") or {}
                blocks.append({"type": "tool_use", "id": tc.get("id"), "name": f.get("name"), "input": {}})
            msgs.append({"role": "assistant", "content": blocks})
    tools = []
    for t in body.get("tools") or []:
        f = t.get("function") or t.get("custom") or {}
        if f.get("name"):
            tools.append({"name": f["name"], "type": t.get("type", "function")})
    system = "".join(m.get("content") if isinstance(m.get("content"), str) else "" for m in body.get("messages") or []
                     if m.get("role") == "system")
    return {"messages": msgs, "tools": tools, "system": system}


def answer(h, body, decide):
    """Answer a Chat Completions request (streamed or not) as the scripted model."""
    kind, what = decide(as_messages(body))
    model = body.get("model", "gpt-5.4")
    cid = "chatcmpl-" + uuid.uuid4().hex[:20]
    created = int(time.time())
    calls = []
    if kind == "calls":
        for n, a, _ in what:
            if n == "bash":
                a = dict(a, description=a.get("description", "run a command"))
            calls.append({"id": "call_" + uuid.uuid4().hex[:24], "type": "function",
                          "function": {"name": n, "arguments": json.dumps(a)}})
        text, finish = f"Running {len(calls)} tool call(s).", "tool_calls"
    else:
        text, finish = what, "stop"
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    if not body.get("stream"):
        msg = {"role": "assistant", "content": text}
        if calls:
            msg["tool_calls"] = calls
        return h._json(200, {"id": cid, "object": "chat.completion", "created": created, "model": model,
                             "choices": [{"index": 0, "finish_reason": finish, "message": msg}], "usage": usage})
    chunk = lambda delta, fin=None: {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model,
                                     "choices": [{"index": 0, "delta": delta, "finish_reason": fin}]}
    ev = [chunk({"role": "assistant", "content": ""}), chunk({"content": text})]
    for i, c in enumerate(calls):
        ev.append(chunk({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                         "function": {"name": c["function"]["name"], "arguments": ""}}]}))
        ev.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": c["function"]["arguments"]}}]}))
    ev.append(chunk({}, finish))
    last = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model, "choices": [], "usage": usage}
    h.send_response(200)
    h.send_header("Content-Type", "text/event-stream")
    h.send_header("Cache-Control", "no-cache")
    h.send_header("Connection", "close")
    h.end_headers()
    for d in ev + [last]:
        h.wfile.write(f"data: {json.dumps(d)}\n\n".encode())
    h.wfile.write(b"data: [DONE]\n\n")
    h.wfile.flush()
    h.close_connection = True
