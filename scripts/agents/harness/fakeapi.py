#!/usr/bin/env python3
"""Loopback fake LLM API server (127.0.0.1 only) that RECORDS every request.

  python3 fakeapi.py --record DIR [--port 0] [--portfile F] [--reply TEXT]

Anthropic Messages API:  POST /v1/messages[?beta=true]  -> SSE stream (or JSON if stream is false)
                         POST /v1/messages/count_tokens -> {"input_tokens": N}
OpenAI Responses API:    GET  /v1/responses (websocket upgrade) -> 426 Upgrade Required
                         POST /v1/responses -> SSE (response.created ... response.completed)
                         GET  /v1/models -> small model list
                         POST /v1/responses/compact -> {"output": [...]} (Codex's remote compaction)
OpenAI Chat Completions: POST /v1/chat/completions -> JSON
Anything else: 200 {} (GET/POST/PUT...).

The model is scripted by the prompt (stateless: everything is decided from the request, so it
works across resumes, compactions and restarts). The latest user prompt (the last text block of
a user message that is neither a tool result nor an injected context such as <system-reminder>
or <environment_context>) may hold a plan:

    PLAN[step ;; step ;; ...]  each step is one model reply; a reply may ask for several tool
                             calls at once, joined with ' ++ ' (parallel calls in one message)
    step = KIND[*N]:ARG      KIND is bash, read, write or tool; *N repeats it N times (N replies);
                             in ARG, {n} is replaced by the 1-based repetition number
      bash:CMD               the agent's shell tool (Claude Code Bash, Codex exec_command or
                             shell, pi bash)
      read:PATH              the agent's file read (Claude Code Read, pi read; Codex: `cat`)
      write:PATH=TEXT        the agent's file write (Claude Code Write, pi write; Codex: the
                             apply_patch custom tool, an Add File patch)
      tool:NAME=JSON         any tool the request offers, by name: NAME exactly, else the one
                             whose name ends with NAME after a separator (`mcp__mf__search`,
                             `mf_search`, `mf.search`), else the one containing NAME; JSON is
                             its arguments (an object). Codex's MCP tools, offered inside a
                             `namespace` tool, are called by their namespace and name; when
                             Codex defers them (a `tool_search` tool, no such tool yet), the
                             reply is a `tool_search_call` for NAME, and the next request (its
                             `tool_search_output` offers the tool) gets the call itself; when
                             Claude Code defers it (named in its deferred-tools list, a
                             ToolSearch tool offered), the reply is ToolSearch "select:NAME"
                             first (its result is not counted as the step's).
    PATH is relative to the agent's working directory (taken from the request: Claude Code's
    "Primary working directory:", Codex's and pi's <cwd>), or absolute.

The prompt may also hold the word THINK (before its PLAN): every reply to it then opens with
reasoning, as each API carries it (Anthropic a `thinking` block with a fake signature, OpenAI
Responses a `reasoning` item whose summary is the text). The reasoning of the k-th reply to a
prompt whose first word is LABEL names things said nowhere else — `scratch/hunch-LABEL-k.ini`,
`HUNCH_k_LIMIT` — so that a summary that copies reasoning can be told by them.

The model counts the tool results that follow that prompt in the request and asks for the next
step's calls; when every step has its result (or the prompt has no plan) it answers text:
"DONE <label>: <k> tool calls" where <label> is the prompt's first word, or --reply TEXT when
the prompt has no plan. A request whose prompt asks for a summary (the agents' own compaction:
"summary"/"summarize"/"compact" in the prompt, or Codex's /responses/compact) gets a summary
text naming the prompts it saw; Codex's compaction request (its input ends with a
`compaction_trigger` item) gets one `compaction` item. Tool calls get fresh ids (toolu_..., call_...); every message
id is fresh, as the real APIs do.
Each request is saved as DIR/NNNN-<method>-<path>.json = {"method","path","headers","body"}.
"""
import argparse, json, os, re, sys, threading, time, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.dont_write_bytecode = True
import fake_qwen  # noqa: E402  (Qwen Code's Chat Completions)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_gemini  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--record", required=True)
ap.add_argument("--port", type=int, default=0)
ap.add_argument("--portfile")
ap.add_argument("--reply", default="OK-from-fake-model")
ap.add_argument("--delay", type=float, default=0, help="sleep before answering model requests")
ap.add_argument("--max-seconds", type=float, default=600, help="exit by itself after this long")
ap.add_argument("--big-usage", default="", help="comma-separated 1-based numbers of the Anthropic "
                "replies (summaries not counted) that report 190000 input tokens: Claude Code "
                "auto-compacts before its next request")
ap.add_argument("--too-long", default="", help="comma-separated 1-based numbers of the Anthropic "
                "requests offering tools that are answered 400 `prompt is too long` (Claude Code "
                "then compacts and asks again)")
ap.add_argument("--summary-keeps-plan", action="store_true", help="a summary quotes the plan of "
                "the prompt it summarizes (as a real summary keeps the pending work), so the "
                "turn goes on after the agent compacts in the middle of it")
A = ap.parse_args()
os.makedirs(A.record, exist_ok=True)
lock = threading.Lock()
counter = [0]
BIG = {int(x) for x in A.big_usage.split(",") if x.strip()}
replies = [0]
TOO_LONG = {int(x) for x in A.too_long.split(",") if x.strip()}
asked = [0]

def record(h, body_bytes):
    with lock:
        counter[0] += 1
        n = counter[0]
    try:
        body = json.loads(body_bytes) if body_bytes else None
    except Exception:
        body = {"_raw": body_bytes.decode("utf-8", "replace")[:100000]}
    safe = h.path.split("?")[0].strip("/").replace("/", "_") or "root"
    with open(os.path.join(A.record, f"{n:04d}-{h.command}-{safe}.json"), "w") as f:
        json.dump({"method": h.command, "path": h.path, "headers": dict(h.headers), "body": body}, f)
    return body

# ---- the scripted model ------------------------------------------------------------------

INJECTED = ("<system-reminder>", "<environment_context>", "<user_instructions>", "# AGENTS.md", "<INSTRUCTIONS>",
            "<permissions instructions>", "<skills_instructions>", "<local-command", "<command-name>", "<turn_aborted>")
SUMMARY_CUES = ("summary", "summarize", "summarise", "compact", "checkpoint")


def parse_plan(text):
    """PLAN[...] -> list of replies, each a list of (kind, arg)."""
    m = re.search(r"PLAN\[(.*)\]", text, re.S)
    if not m:
        return None
    replies = []
    for step in m.group(1).split(";;"):
        step = step.strip()
        if not step:
            continue
        calls = []
        reps = 1
        for part in step.split(" ++ "):
            kind, _, arg = part.strip().partition(":")
            k, _, n = kind.partition("*")
            if n:
                reps = int(n)
            calls.append((k.strip(), arg))
        for i in range(1, reps + 1):
            replies.append([(k, a.replace("{n}", str(i))) for k, a in calls])
    return replies


def block_texts(content):
    if isinstance(content, str):
        return [content]
    out = []
    for b in content or []:
        if isinstance(b, dict) and b.get("type") in ("text", "input_text", "output_text"):
            out.append(b.get("text", ""))
    return out


def conversation(body):
    """The request as a list of (kind, text): kind 'prompt' (a user text), 'result' (a tool
    result), 'other'. Anthropic Messages (messages) or OpenAI Responses (input)."""
    seq = []
    if "messages" in body:
        # A tool search (Claude Code's ToolSearch: it loads deferred tools) is not a step's call.
        searches = {b.get("id") for m in body.get("messages") or [] if isinstance(m.get("content"), list)
                    for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == "ToolSearch"}
        for m in body.get("messages") or []:
            c = m.get("content")
            blocks = c if isinstance(c, list) else [{"type": "text", "text": c or ""}]
            # ... nor is the text Claude Code adds to its result ("Tool loaded.") a prompt.
            loaded = any(isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") in searches
                         for b in blocks)
            for b in blocks:
                if not isinstance(b, dict):
                    continue
                if loaded and b.get("type") in ("tool_result", "text"):
                    seq.append(("other", ""))
                elif b.get("type") == "tool_result":
                    seq.append(("result", ""))
                elif m.get("role") == "user" and b.get("type") == "text":
                    t = b.get("text", "")
                    seq.append(("prompt", t) if t.strip() and not t.lstrip().startswith(INJECTED) else ("other", t))
                else:
                    seq.append(("other", ""))
    else:
        inp = body.get("input")
        if isinstance(inp, str):
            inp = [{"type": "message", "role": "user", "content": inp}]
        for it in inp or []:
            t = it.get("type", "message" if "role" in it else "?")
            if t.endswith("_call_output") or t == "function_call_output":
                seq.append(("result", ""))
            elif t == "message" and it.get("role") == "user":
                for x in block_texts(it.get("content")):
                    seq.append(("prompt", x) if x.strip() and not x.lstrip().startswith(INJECTED) else ("other", x))
            else:
                seq.append(("other", ""))
    return seq


def find_cwd(body):
    s = json.dumps(body.get("system", "")) + json.dumps(body.get("instructions", "")) + json.dumps(body.get("messages") or body.get("input") or "")
    for pat in (r"Primary working directory: ([^\s\\]+)", r"<cwd>(?:\\n|\s)*([^<\\]+?)(?:\\n|\s)*</cwd>",
                r"Current working directory: ([^\s\\]+)"):
        m = re.search(pat, s)
        if m:
            return m.group(1)
    return None


def tools_of(body):
    names = {}
    for t in body.get("tools") or []:
        n = t.get("name") or (t.get("function") or {}).get("name")
        if n:
            names[n] = t.get("type", "function")
    return names


def thinking(body):
    """The reasoning of this reply when the latest prompt holds THINK, or None."""
    seq = conversation(body)
    pi = max((i for i, (k, _) in enumerate(seq) if k == "prompt"), default=None)
    if pi is None or not re.search(r"\bTHINK\b", seq[pi][1]):
        return None
    label = re.sub(r"[^a-z0-9]", "", (seq[pi][1].split() or ["x"])[0].lower()) or "x"
    k = sum(1 for kind, _ in seq[pi + 1:] if kind == "result") + 1
    return (f"Thinking before reply {k}: my hunch is that scratch/hunch-{label}-{k}.ini holds the answer "
            f"and that HUNCH_{k}_LIMIT matters; I will check before acting.")


def decide(body):
    """-> ("calls", [(name, args, is_custom)]) or ("text", TEXT)."""
    seq = conversation(body)
    pi = max((i for i, (k, _) in enumerate(seq) if k == "prompt"), default=None)
    prompt = seq[pi][1] if pi is not None else ""
    label = (prompt.split() or ["?"])[0]
    plan = parse_plan(prompt) if prompt else None
    if plan is not None and not tools_of(body):
        # A request without tools (an agent's own summarization, whose prompt quotes the
        # conversation, plans included) is answered with text.
        plan = None
    if plan is None:
        if any(c in prompt.lower() for c in SUMMARY_CUES):
            prompts = [t for k, t in seq if k == "prompt"]
            firsts = ", ".join((t.split() or ["?"])[0] for t in prompts[:-1]) or "none"
            kept = ""
            if A.summary_keeps_plan:
                plans = [m.group(0) for t in prompts[:-1] for m in [re.search(r"PLAN\[.*\]", t, re.S)] if m]
                kept = (" Pending: " + plans[-1]) if plans else ""
            return ("text", f"<summary>Fake summary of {len(prompts) - 1} earlier prompts ({firsts}); "
                            f"{sum(1 for k, _ in seq if k == 'result')} tool results.{kept}</summary>")
        return ("text", A.reply)
    done = sum(1 for k, _ in seq[pi + 1:] if k == "result")
    total = 0
    for reply in plan:
        if done < total + len(reply):
            return ("calls", [tool_call(body, k, a) for k, a in reply])
        total += len(reply)
    return ("text", f"DONE {label}: {total} tool calls")


def offered(body):
    """Every function tool the request offers: [(name, namespace or None)], namespaced ones
    (Codex's MCP tools: {"type":"namespace","name":"mcp__mf__","tools":[...]}) included, and
    those an earlier tool_search found (Codex's `tool_search_output` items in the input)."""
    out = []
    found = [u for it in (body.get("input") if isinstance(body.get("input"), list) else [])
             if isinstance(it, dict) and it.get("type") == "tool_search_output" for u in it.get("tools") or []]
    for t in list(body.get("tools") or []) + found:
        if t.get("type") == "namespace":
            for u in t.get("tools") or []:
                n = u.get("name") or (u.get("function") or {}).get("name")
                if n:
                    out.append((n, t.get("name")))
            continue
        n = t.get("name") or (t.get("function") or {}).get("name")
        if n:
            out.append((n, None))
    return out


def deferred_names(body):
    """Claude Code's deferred tools: the names it lists (one a line) after "Use ToolSearch with
    query ... to load tool schemas before calling them:" in a system reminder."""
    blobs = [json.dumps(body.get("system", "")), json.dumps(body.get("messages") or [])]
    names = []
    for b in blobs:
        for m in re.finditer(r"before calling them:((?:\\n[A-Za-z0-9_.:-]+)+)", b):
            names += [n for n in m.group(1).split("\\n") if n]
    return names


def searched_for(body):
    """The queries of the tool searches already made (Codex tool_search_call, Claude Code
    ToolSearch): a search that found nothing is not repeated."""
    out = set()
    for it in body.get("input") if isinstance(body.get("input"), list) else []:
        if isinstance(it, dict) and it.get("type") == "tool_search_call":
            out.add(str((it.get("arguments") or {}).get("query")))
    for m in body.get("messages") or []:
        for b in m.get("content") if isinstance(m.get("content"), list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_use" and b.get("name") == "ToolSearch":
                out.add(str((b.get("input") or {}).get("query")))
    return out


def named_tool(body, want):
    """The offered tool NAME names: exact, else a suffix after a separator, else a substring;
    a namespaced tool is matched by namespace+name too. -> (name, namespace)."""
    tools = offered(body)
    full = lambda n, ns: (ns or "") + n
    for test in (lambda n, ns: n == want or full(n, ns) == want,
                 lambda n, ns: any(full(n, ns).endswith(sep + want) for sep in ("__", "_", ".", "/", "-", ":")),
                 lambda n, ns: want in full(n, ns)):
        hits = [(n, ns) for n, ns in tools if test(n, ns)]
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise ValueError(f"tool {want!r} is ambiguous: {[full(n, ns) for n, ns in hits]}")
    searched = searched_for(body)
    if any(t.get("type") == "tool_search" for t in body.get("tools") or []) and want not in searched:
        return None  # not offered yet: the model searches the deferred tools first (Codex)
    if "ToolSearch" in tools_of(body):
        deferred = [n for n in deferred_names(body) if n == want or n.endswith("__" + want) or n.endswith("_" + want)]
        if len(deferred) == 1 and "select:" + deferred[0] not in searched:
            return ("ToolSearch", deferred[0])  # Claude Code's deferred tools: load it first
    if searched:
        raise ValueError(f"no tool {want!r} even after searching the deferred tools ({sorted(searched)}) among "
                         f"{sorted(full(n, ns) for n, ns in tools)}")
    raise ValueError(f"no tool {want!r} among {sorted(full(n, ns) for n, ns in tools)}")


def tool_call(body, kind, arg):
    if kind == "tool":
        want, _, js = arg.partition("=")
        args = json.loads(js) if js.strip() else {}
        hit = named_tool(body, want.strip())
        if isinstance(hit, tuple) and hit[0] == "ToolSearch":
            # Claude Code defers MCP tools: ToolSearch "select:NAME" loads its schema; that
            # result is not counted as the step's (conversation() skips ToolSearch results).
            return ("ToolSearch", {"query": "select:" + hit[1], "max_results": 5}, False)
        if hit is None:
            # Codex defers MCP tools behind its client-executed `tool_search`: ask it for the
            # tool; its tool_search_output (not a tool result: the step is not done) offers it.
            return ("tool_search", {"query": want.strip(), "limit": 8}, "tool_search")
        name, ns = hit
        return (name, args, ("namespace", ns) if ns else False)
    tools = tools_of(body)
    cwd = find_cwd(body) or "."
    path = lambda p: p if p.startswith("/") else os.path.join(cwd, p)
    if kind == "read":
        if "Read" in tools:
            return ("Read", {"file_path": path(arg)}, False)
        if "read" in tools:
            return ("read", {"path": arg}, False)
        kind, arg = "bash", f"cat {arg}"
    if kind == "write":
        p, _, text = arg.partition("=")
        if "Write" in tools:
            return ("Write", {"file_path": path(p), "content": text + "\n"}, False)
        if "write" in tools:
            return ("write", {"path": p, "content": text + "\n"}, False)
        if "apply_patch" in tools:
            patch = f"*** Begin Patch\n*** Add File: {p}\n+{text}\n*** End Patch\n"
            if tools["apply_patch"] == "custom":
                return ("apply_patch", patch, True)
            return ("apply_patch", {"input": patch}, False)
        kind, arg = "bash", f"printf '%s\\n' {json.dumps(text)} > {p}"
    if kind == "bash":
        if "Bash" in tools:
            return ("Bash", {"command": arg, "description": "run a command"}, False)
        if "bash" in tools:
            return ("bash", {"command": arg}, False)
        if "exec_command" in tools:
            return ("exec_command", {"cmd": arg, "workdir": cwd}, False)
        if "shell_command" in tools:
            return ("shell_command", {"command": arg, "workdir": cwd}, False)
        if "shell" in tools:
            return ("shell", {"command": ["bash", "-lc", arg], "workdir": cwd}, False)
    raise ValueError(f"no tool for {kind!r} among {sorted(tools)}")


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            return self.rfile.read(n)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline(); break
                out += self.rfile.read(size); self.rfile.readline()
            return out
        return b""
    def _json(self, code, obj):
        b = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(b)))
        self.end_headers(); self.wfile.write(b)
    def _sse(self, events):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        for ev, data in events:
            self.wfile.write(f"event: {ev}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        self.close_connection = True

    def do_GET(self):
        p = self.path.split("?")[0]
        record(self, b"")
        if p.endswith("/responses"):
            return self._json(426, {"error": "websocket not supported here"})
        if p.endswith("/models"):
            return self._json(200, {"object": "list", "data": [
                {"id": "gpt-5.5", "object": "model"}, {"id": "claude-sonnet-4-5", "type": "model", "display_name": "x"}],
                "models": []})
        return self._json(200, {})
    def do_PUT(self): self.do_POST()
    def do_PATCH(self): self.do_POST()
    def do_DELETE(self): self.do_POST()
    def do_HEAD(self):
        self.send_response(200); self.send_header("Content-Length", "0"); self.end_headers()

    def do_POST(self):
        raw = self._body()
        p = self.path.split("?")[0]
        body = record(self, raw)
        try:
            return self.answer(p, body)
        except Exception as e:  # a broken plan: say so, loudly, in the log and to the agent
            sys.stderr.write(f"fakeapi: {p}: {e!r}\n"); sys.stderr.flush()
            return self._json(400, {"type": "error", "error": {"type": "invalid_request_error", "message": f"fakeapi: {e}"}})

    def answer(self, p, body):
        if fake_gemini.handles(p):  # Gemini CLI (harness/fake_gemini.py)
            return fake_gemini.answer(self, p, body, sys.modules[__name__])
        if p.endswith("/messages/count_tokens"):
            return self._json(200, {"input_tokens": 1000})
        if A.delay and (p.endswith("/v1/messages") or p.endswith("/responses") or p.endswith("/compact")):
            time.sleep(A.delay)
        if p.endswith("/v1/messages"):
            return self.anthropic(body or {})
        if p.endswith("/responses"):
            return self.openai(body or {})
        if p.endswith("/responses/compact"):
            return self.openai_compact(body or {})
        if p.endswith("/chat/completions") and self.headers.get("x-initiator"):
            import fake_copilot  # GitHub Copilot CLI: streamed Chat Completions with tool calls
            return fake_copilot.answer(self, body or {}, decide)
        if p.endswith("/chat/completions") and fake_qwen.is_qwen(self.headers, body):
            return fake_qwen.answer(self, body, parse_plan, A.reply)  # Qwen Code (harness/fake_qwen.py)
        if p.endswith("/chat/completions"):
            kind, what = decide(body or {})
            text = what if kind == "text" else A.reply
            return self._json(200, {"id": "chatcmpl-1", "object": "chat.completion", "created": int(time.time()),
                "model": (body or {}).get("model", "x"), "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": text}}], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
        return self._json(200, {})

    def anthropic(self, body):
        model = body.get("model", "claude-sonnet-4-5")
        mid = "msg_fake" + uuid.uuid4().hex[:20]
        usage = {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        msg = {"id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": usage}
        if tools_of(body) and TOO_LONG:
            with lock:
                asked[0] += 1
                n = asked[0]
            if n in TOO_LONG:
                return self._json(400, {"type": "error", "error": {"type": "invalid_request_error",
                                  "message": "prompt is too long: 210000 tokens > 200000 maximum"}})
        kind, what = decide(body)
        if tools_of(body):
            with lock:
                replies[0] += 1
                if replies[0] in BIG:
                    usage["input_tokens"] = 190000
        if kind == "text":
            blocks, stop = [{"type": "text", "text": what}], "end_turn"
        else:
            blocks = [{"type": "text", "text": f"Running {len(what)} tool call(s)."}]
            blocks += [{"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:24], "name": n, "input": a} for n, a, _ in what]
            stop = "tool_use"
        think = thinking(body)
        if think:
            blocks.insert(0, {"type": "thinking", "thinking": think, "signature": "fakesig" + uuid.uuid4().hex})
        if not body.get("stream"):
            return self._json(200, dict(msg, content=blocks, stop_reason=stop))
        ev = [("message_start", {"type": "message_start", "message": msg}), ("ping", {"type": "ping"})]
        for i, b in enumerate(blocks):
            if b["type"] == "thinking":
                ev.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}))
                ev.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "thinking_delta", "thinking": b["thinking"]}}))
                ev.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "signature_delta", "signature": b["signature"]}}))
            elif b["type"] == "text":
                ev.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}))
                ev.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": b["text"]}}))
            else:
                ev.append(("content_block_start", {"type": "content_block_start", "index": i,
                           "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}}))
                js = json.dumps(b["input"])
                for k in range(0, len(js), 40):
                    ev.append(("content_block_delta", {"type": "content_block_delta", "index": i,
                               "delta": {"type": "input_json_delta", "partial_json": js[k:k + 40]}}))
            ev.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        ev.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}}))
        ev.append(("message_stop", {"type": "message_stop"}))
        self._sse(ev)

    def openai(self, body):
        rid = "resp_" + uuid.uuid4().hex
        model = body.get("model", "gpt-5.5")
        base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model, "status": "in_progress", "output": []}
        kind, what = decide(body)
        items = []
        think = thinking(body)
        if think and kind in ("text", "calls"):
            items.append({"type": "reasoning", "id": "rs_" + uuid.uuid4().hex, "summary": [{"type": "summary_text", "text": think}]})
        inp = body.get("input")
        if isinstance(inp, list) and inp and isinstance(inp[-1], dict) and inp[-1].get("type") == "compaction_trigger":
            # Codex's compaction (responses_compaction_v2): one opaque compaction item replaces
            # the history. The fake's "encryption" is plain text, which Codex only carries.
            prompts = [t for k, t in conversation(body) if k == "prompt"]
            items.append({"type": "compaction", "id": "cmp_" + uuid.uuid4().hex,
                          "encrypted_content": f"FAKE-COMPACTION of {len(prompts)} prompts"})
            kind = "compaction"
        elif kind == "text":
            items.append({"type": "message", "id": "msg_" + uuid.uuid4().hex, "role": "assistant", "status": "completed",
                          "content": [{"type": "output_text", "text": what, "annotations": []}]})
        else:
            for n, a, custom in what:
                cid = "call_" + uuid.uuid4().hex[:24]
                if custom == "tool_search":
                    items.append({"type": "tool_search_call", "id": "tsc_" + uuid.uuid4().hex, "status": "completed",
                                  "call_id": cid, "execution": "client", "arguments": a})
                elif custom is True:
                    items.append({"type": "custom_tool_call", "id": "ctc_" + uuid.uuid4().hex, "status": "completed",
                                  "call_id": cid, "name": n, "input": a})
                else:
                    items.append({"type": "function_call", "id": "fc_" + uuid.uuid4().hex, "status": "completed",
                                  "call_id": cid, "name": n, "arguments": json.dumps(a)})
                    if isinstance(custom, tuple):  # a namespaced tool (Codex's MCP tools)
                        items[-1]["namespace"] = custom[1]
        done = dict(base, status="completed", output=items,
                    usage={"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                           "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15})
        ev = [("response.created", {"type": "response.created", "response": base})]
        for i, it in enumerate(items):
            if it["type"] == "message":
                ev.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i, "item": dict(it, status="in_progress", content=[])}))
                ev.append(("response.content_part.added", {"type": "response.content_part.added", "item_id": it["id"], "output_index": i, "content_index": 0,
                           "part": {"type": "output_text", "text": "", "annotations": []}}))
                ev.append(("response.output_text.delta", {"type": "response.output_text.delta", "item_id": it["id"], "output_index": i, "content_index": 0,
                           "delta": it["content"][0]["text"]}))
                ev.append(("response.output_text.done", {"type": "response.output_text.done", "item_id": it["id"], "output_index": i, "content_index": 0,
                           "text": it["content"][0]["text"]}))
            elif it["type"] in ("compaction", "tool_search_call", "reasoning"):
                ev.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i, "item": it}))
            elif it["type"] == "function_call":
                ev.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i, "item": dict(it, status="in_progress", arguments="")}))
                ev.append(("response.function_call_arguments.delta", {"type": "response.function_call_arguments.delta", "item_id": it["id"], "output_index": i, "delta": it["arguments"]}))
                ev.append(("response.function_call_arguments.done", {"type": "response.function_call_arguments.done", "item_id": it["id"], "output_index": i, "arguments": it["arguments"]}))
            else:
                ev.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i, "item": dict(it, status="in_progress", input="")}))
                ev.append(("response.custom_tool_call_input.delta", {"type": "response.custom_tool_call_input.delta", "item_id": it["id"], "output_index": i, "delta": it["input"]}))
                ev.append(("response.custom_tool_call_input.done", {"type": "response.custom_tool_call_input.done", "item_id": it["id"], "output_index": i, "input": it["input"]}))
            ev.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": i, "item": it}))
        ev.append(("response.completed", {"type": "response.completed", "response": done}))
        for k, (_, d) in enumerate(ev):
            d["sequence_number"] = k
        self._sse(ev)

    def openai_compact(self, body):
        """Codex's remote compaction: the history is replaced by what this returns."""
        seq = conversation(body)
        prompts = [t for k, t in seq if k == "prompt"]
        text = f"Fake remote compaction of {len(prompts)} prompts."
        return self._json(200, {"output": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": t}]} for t in prompts[-1:]] + [
            {"type": "compaction", "encrypted_content": "FAKE-" + uuid.uuid4().hex + "-" + text}]})

class Srv(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # clients closing keep-alive sockets is normal here

srv = Srv(("127.0.0.1", A.port), H)
srv.daemon_threads = True
if A.portfile:
    tmp = A.portfile + ".tmp"
    open(tmp, "w").write(str(srv.server_address[1])); os.replace(tmp, A.portfile)
_t = threading.Timer(A.max_seconds, lambda: os._exit(0)); _t.daemon = True; _t.start()
try:
    srv.serve_forever()
except KeyboardInterrupt:
    pass
