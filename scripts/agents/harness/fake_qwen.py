"""OpenAI Chat Completions for fakeapi.py as Qwen Code speaks it (streaming, tool calls).

Hooked into fakeapi.py: a POST /chat/completions whose body is in Chat Completions form is
answered here. The scripted model is fakeapi's `decide`: this module only gives it the
conversation of a Chat Completions request (system/user/assistant/tool messages, Qwen's
`<system-reminder>` texts injected) and the tools Qwen offers (read_file, write_file,
run_shell_command), then answers as SSE chunks (`stream: true`, which Qwen always asks for) or one
JSON completion.
"""
import json, os, re, time, uuid

INJECTED = ("<system-reminder>", "<qwen:", "<environment_context>")


def texts(content):
    if isinstance(content, str):
        return [content]
    return [b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]


def is_qwen(headers, body):
    """A Chat Completions request Qwen Code sent (its user agent is QwenCode/<version>)."""
    return "QwenCode/" in (headers.get("User-Agent") or "") and isinstance(body, dict)


def conversation(body):
    """[(kind, text)]: 'prompt' (a user text not injected), 'result' (a tool message), 'other'."""
    seq = []
    for m in body.get("messages") or []:
        role = m.get("role")
        if role == "tool":
            seq.append(("result", ""))
        elif role == "user":
            for t in texts(m.get("content")):
                seq.append(("prompt", t) if t.strip() and not t.lstrip().startswith(INJECTED) else ("other", t))
        else:
            seq.append(("other", ""))
    return seq


def cwd_of(body):
    s = json.dumps(body.get("messages") or [])
    m = re.search(r"I'm currently working in the directory: ([^\s\\]+)", s)
    return m.group(1) if m else "."


def tool_call(body, kind, arg):
    """A Qwen tool call for one plan step -> (name, args)."""
    tools = {(t.get("function") or {}).get("name") for t in body.get("tools") or []}
    cwd = cwd_of(body)
    path = lambda p: p if p.startswith("/") else os.path.join(cwd, p)
    if kind == "read" and "read_file" in tools:
        return ("read_file", {"file_path": path(arg)})
    if kind == "write" and "write_file" in tools:
        p, _, text = arg.partition("=")
        return ("write_file", {"file_path": path(p), "content": text + "\n"})
    if kind == "bash" and "run_shell_command" in tools:
        return ("run_shell_command", {"command": arg, "description": "run a command", "is_background": False})
    if kind == "read":
        return ("run_shell_command", {"command": f"cat {arg}", "description": "read a file", "is_background": False})
    if kind == "write":
        p, _, text = arg.partition("=")
        return ("run_shell_command", {"command": f"printf '%s\\n' {json.dumps(text)} > {p}", "description": "write", "is_background": False})
    if kind == "tool":
        want, _, js = arg.partition("=")
        names = [n for n in tools if n == want.strip()] or [n for n in tools if n.endswith(want.strip())] or [n for n in tools if want.strip() in n]
        if names:
            return (names[0], json.loads(js) if js.strip() else {})
    raise ValueError(f"no Qwen tool for {kind!r} among {sorted(tools)}")


def decide(body, parse_plan, reply):
    """fakeapi's scripted model over a Chat Completions conversation -> ("calls", [(kind, arg)])
    or ("text", TEXT); and the reasoning text when the prompt holds THINK (else None)."""
    seq = conversation(body)
    pi = max((i for i, (k, _) in enumerate(seq) if k == "prompt"), default=None)
    prompt = seq[pi][1] if pi is not None else ""
    label = (prompt.split() or ["?"])[0]
    plan = parse_plan(prompt) if prompt and body.get("tools") else None
    done = sum(1 for k, _ in seq[pi + 1:] if k == "result") if pi is not None else 0
    think = None
    if re.search(r"\bTHINK\b", prompt):
        lab = re.sub(r"[^a-z0-9]", "", label.lower()) or "x"
        think = (f"Thinking before reply {done + 1}: my hunch is that scratch/hunch-{lab}-{done + 1}.ini holds the answer "
                 f"and that HUNCH_{done + 1}_LIMIT matters; I will check before acting.")
    if plan is None:
        low = prompt.lower()
        if any(c in low for c in ("summary", "summarize", "summarise", "compact", "checkpoint", "state_snapshot")):
            prompts = [t for k, t in seq if k == "prompt"]
            firsts = ", ".join((t.split() or ["?"])[0] for t in prompts[:-1]) or "none"
            return ("text", f"<state_snapshot>Fake summary of {len(prompts) - 1} earlier prompts ({firsts}); "
                            f"{sum(1 for k, _ in seq if k == 'result')} tool results.</state_snapshot>"), think
        return ("text", reply), think
    total = 0
    for step in plan:
        if done < total + len(step):
            return ("calls", step), think
        total += len(step)
    return ("text", f"DONE {label}: {total} tool calls"), think


def answer(handler, body, parse_plan, reply):
    """Answer one Chat Completions request through handler (fakeapi's H)."""
    (kind, what), think = decide(body, parse_plan, reply)
    calls = [] if kind == "text" else [tool_call(body, k, a) for k, a in what]
    cid = "chatcmpl-" + uuid.uuid4().hex[:20]
    model = body.get("model", "m")
    created = int(time.time())
    # Large enough prompt counts that Qwen finds its own compression beneficial (it compares them).
    usage = {"prompt_tokens": 20000, "completion_tokens": 5, "total_tokens": 20005}
    tcs = [{"id": "call_" + uuid.uuid4().hex[:24], "type": "function",
            "function": {"name": n, "arguments": json.dumps(a)}} for n, a in calls]
    text = what if kind == "text" else f"Running {len(calls)} tool call(s)."
    finish = "tool_calls" if calls else "stop"
    if not body.get("stream"):
        msg = {"role": "assistant", "content": text}
        if think:
            msg["reasoning_content"] = think
        if tcs:
            msg["tool_calls"] = tcs
        return handler._json(200, {"id": cid, "object": "chat.completion", "created": created, "model": model,
                                   "choices": [{"index": 0, "finish_reason": finish, "message": msg}], "usage": usage})
    base = {"id": cid, "object": "chat.completion.chunk", "created": created, "model": model}
    chunks = []
    if think:
        chunks.append(dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "reasoning_content": think}, "finish_reason": None}]))
    chunks.append(dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}]))
    for i, tc in enumerate(tcs):
        chunks.append(dict(base, choices=[{"index": 0, "delta": {"tool_calls": [
            {"index": i, "id": tc["id"], "type": "function", "function": {"name": tc["function"]["name"], "arguments": ""}}]},
            "finish_reason": None}]))
        chunks.append(dict(base, choices=[{"index": 0, "delta": {"tool_calls": [
            {"index": i, "function": {"arguments": tc["function"]["arguments"]}}]}, "finish_reason": None}]))
    chunks.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}]))
    chunks.append(dict(base, choices=[], usage=usage))
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Connection", "close")
    handler.end_headers()
    for c in chunks:
        handler.wfile.write(f"data: {json.dumps(c)}\n\n".encode())
    handler.wfile.write(b"data: [DONE]\n\n")
    handler.wfile.flush()
    handler.close_connection = True
