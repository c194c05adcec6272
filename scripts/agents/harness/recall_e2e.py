#!/usr/bin/env python3
"""recall_e2e.py - recall on demand (issue 23), with the real agents: a fact folded away by mf
comes back through mf's tools when the model asks for it.

  recall_e2e.py AGENT WORKDIR    AGENT: claude, codex or pi (1.6)
  recall_e2e.py mcp WORKDIR      `mf mcp` alone, with a plain JSON-RPC client: its errors

Needs MF_BIN (the mf with `search` and `mcp`) and the agents harness/agent.py runs. Prints one
`PASS|FAIL  agent  step: detail` line per check (NOTE lines say what was seen); exit 0 when every
check passed.

AGENT: the agent writes a session against the loopback scripted model (fakeapi.py): the first
prompt plants a fact (the Rotterdam office, ticket OPS-4471, courier Van Gend) that nothing later
repeats, three more prompts make tool calls. Then
  compact  `mf compact FILE --model extractive --trigger 0 --recent 1 --min-retention 0 --force`
           folds the planted turn; `mf verify FILE`
  search   `mf search FILE "Rotterdam office" --json`: the first hit is folded and quotes the
           ticket; its id is the one the model will expand
  recall   the agent resumes with mf's tools configured as a user would:
             claude  --mcp-config {"mcpServers":{"mf":{"command":MF,"args":["mcp","--agent","claude"]}}}
                     (and --allowedTools for mcp__mf__search, mcp__mf__expand)
             codex   [mcp_servers.mf] command = MF, args = ["mcp","--agent","codex"] in
                     CODEX_HOME/config.toml (env_vars = ["CODEX_HOME"]: Codex gives an MCP
                     server only HOME, LANG, PATH and TERM, and the harness's CODEX_HOME is not
                     ~/.codex)
             pi      settings.json "extensions": [integrations/pi] (mf_search, mf_expand; MF_BIN)
           and a prompt whose plan makes the model call the search tool ("Rotterdam office")
           and then expand with the hit's id. The request the agent sends after each call must
           carry that call's result, not an error: the search result naming the id and quoting
           OPS-4471, the expand result holding the planted prompt verbatim. Then a search that
           finds nothing (a plain answer, not an error) and an expand of an unknown id (an error
           result naming the id).
  verify   `mf verify FILE` after the agent's turn (the tool calls wrote nothing into it but the
           agent's own lines)
  install, installed-recall (claude, codex)  the same recall with what `mf hook install
           claude-code` / `mf hook install codex` registers (command `mf`, on PATH), the agent run
           as harness/agent.py runs it (Claude Code without --mcp-config, --allowedTools
           Bash,Read,Write; Codex with mf's block in place of the harness's)
The tool names each agent sent (Claude Code mcp__mf__search, Codex namespace mcp__mf + search
after its tool_search, pi mf_search) are printed as NOTE lines.

mcp: `mf mcp` started as an agent would start it, then initialize, notifications/initialized,
tools/list, tools/call; each case must answer a tool error (result.isError true, a message) and
leave the server running: no session for the directory; two live sessions of the directory;
--file a file that is not a session (and `file` naming one per call); a 10 kB query; expand of
an id that does not exist. The session files are unchanged afterwards (the server writes
nothing), and the server exits when its stdin closes.
"""
import glob, hashlib, json, os, queue, shutil, subprocess, sys, threading, time, uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
AGENT_PY = os.path.join(HERE, "agent.py")
MF = os.environ.get("MF_BIN") or sys.exit("MF_BIN is not set")
MF = os.path.abspath(MF)
FAILS = []

FACT = "ship the replacement to the Rotterdam office, ticket OPS-4471, courier Van Gend"
PROMPTS = [
    f"plant: {FACT}. PLAN[bash:mkdir -p orders && echo replacement-unit > orders/item.txt ;; read:orders/item.txt]",
    "setup: make a small project. PLAN[bash:mkdir -p src && printf 'fn main() {}\\n' > src/main.rs ;; write:notes.md=first notes about the project ;; read:notes.md]",
    "inspect: look at what is there. PLAN[bash:ls -la src ++ bash:wc -c notes.md ;; read:src/main.rs]",
    "change: add a todo list. PLAN[write:todo.txt=step three: write the todo list ;; bash:cat todo.txt notes.md]",
]
QUERY = "Rotterdam office"


def say(status, who, step, detail=""):
    if status == "FAIL":
        FAILS.append(f"{who} {step}")
    print(f"{status:<5} {who:<6} {step}: {detail}".rstrip(": "), flush=True)


def sh(argv, env=None, timeout=600, cwd=None):
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout, cwd=cwd)
    return p.returncode, p.stdout, p.stderr


def ag(*args):
    rc, out, err = sh([sys.executable, AGENT_PY, *args])
    return rc, out.strip(), err.strip()


# ---- what the agents sent -------------------------------------------------------------------

def requests(w):
    """The model requests recorded so far, in order: [(path, body)]."""
    out = []
    for f in sorted(glob.glob(os.path.join(w, "rec", "*-POST-*.json"))):
        r = json.load(open(f))
        if r["path"].split("?")[0].endswith(("/v1/messages", "/responses")) and isinstance(r.get("body"), dict):
            out.append((f, r["body"]))
    return out


def text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(c.get("text", c.get("content", ""))) if isinstance(c, dict) else str(c) for c in content)
    if isinstance(content, dict):
        return text_of(content.get("text", content.get("content", "")))
    return "" if content is None else str(content)


def tool_exchanges(body, ids=False):
    """[(call name as the agent sent it, args, result text or None, is_error)] of one request:
    Anthropic Messages (tool_use / tool_result) or OpenAI Responses (function_call /
    function_call_output; a namespaced call is named `namespace/name`)."""
    calls, results = {}, {}
    if "messages" in body:
        for m in body.get("messages") or []:
            for b in m.get("content") if isinstance(m.get("content"), list) else []:
                if not isinstance(b, dict):
                    continue
                if b.get("type") == "tool_use":
                    calls[b.get("id")] = (b.get("name"), b.get("input"))
                elif b.get("type") == "tool_result":
                    results[b.get("tool_use_id")] = (text_of(b.get("content")), bool(b.get("is_error")))
    else:
        for it in body.get("input") or []:
            if not isinstance(it, dict):
                continue
            if it.get("type") == "function_call":
                name = (it.get("namespace") + "/" if it.get("namespace") else "") + it.get("name", "")
                try:
                    args = json.loads(it.get("arguments") or "{}")
                except ValueError:
                    args = it.get("arguments")
                calls[it.get("call_id")] = (name, args)
            elif it.get("type") == "function_call_output":
                out = it.get("output")
                err = False
                if isinstance(out, dict):
                    err = bool(out.get("success") is False)
                    out = out.get("content", out)
                results[it.get("call_id")] = (text_of(out), err)
    if ids:
        return {cid: (n, a, *results.get(cid, (None, False))) for cid, (n, a) in calls.items()}
    return [(n, a, *results.get(cid, (None, False))) for cid, (n, a) in calls.items()]


def first_result(reqs, pred, before=(), want=None):
    """The first request carrying a result of a call `pred` accepts, made in this turn (not one of
    the earlier requests `before`, whose history every later request repeats):
    (file, name, args, text, is_error)."""
    old = {cid for _, body in before for cid in tool_exchanges(body, ids=True)}
    for f, body in reqs:
        for cid, (name, args, res, err) in tool_exchanges(body, ids=True).items():
            if cid not in old and res is not None and pred(name or "") and (want is None or want(args or {})):
                return f, name, args, res, err
    return None


# ---- an agent: plant, fold, recall ------------------------------------------------------------

def configure_mcp(w, agent):
    """mf's tools for the agent, as a user configures them; -> extra argv for the resume."""
    if agent == "claude":
        cfg = {"mcpServers": {"mf": {"command": MF, "args": ["mcp", "--agent", "claude"]}}}
        return ["--mcp-config", json.dumps(cfg)]
    if agent == "codex":
        with open(os.path.join(w, "codex", "config.toml"), "a") as f:
            f.write(f'\n[mcp_servers.mf]\ncommand = {json.dumps(MF)}\nargs = ["mcp", "--agent", "codex"]\n'
                    'env_vars = ["CODEX_HOME"]\n')
        return []
    json.dump({"extensions": [os.path.join(ROOT, "integrations", "pi")]}, open(os.path.join(w, "pi", "settings.json"), "w"))
    return []


def resume_with_tools(w, agent, f, prompt, extra):
    """agent.py's resume, with mf's tools (claude: --mcp-config and the tools allowed)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("agent_harness", AGENT_PY)
    a = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(a)
    try:
        if agent == "claude":
            a.run(w, agent, [a.CLAUDE, "-p", "--resume", a.session_id(agent, f), *extra, "--allowedTools",
                             "Bash,Read,Write,mcp__mf__search,mcp__mf__expand,mcp__mf__folds", "--", prompt])
        else:
            import contextlib, io
            with contextlib.redirect_stdout(io.StringIO()):  # agent.py prints the file's path
                a.resume(w, agent, f, prompt)
    except SystemExit as e:
        return False, str(e.code) if e.code not in (0, None) else ""
    return True, ""


def agent_run(agent, w):
    os.makedirs(w, exist_ok=True)
    rc, out, err = ag("start", w)
    if rc != 0:
        return say("FAIL", agent, "start", err)
    try:
        recall(agent, w)
    finally:
        ag("stop", w)


def recall(agent, w):
    # The session, written by the agent now.
    rc, f, err = ag("new", w, agent, PROMPTS[0])
    if rc != 0:
        return say("FAIL", agent, "session", f"the agent failed: {err[-600:]}")
    for p in PROMPTS[1:]:
        rc, _, err = ag("resume", w, agent, f, p)
        if rc != 0:
            return say("FAIL", agent, "session", f"the agent failed to resume: {err[-600:]}")
    shutil.copy(f, os.path.join(w, "written.jsonl"))
    planted = sum(1 for ln in open(f, encoding="utf-8") if "OPS-4471" in ln)
    say("PASS", agent, "session", f"{os.path.basename(f)}: {len(PROMPTS)} prompts, {sum(1 for _ in open(f))} lines, the fact on {planted} of them")

    # mf folds the planted turn.
    rc, out, err = sh([MF, "compact", f, "--model", "extractive", "--trigger", "0", "--recent", "1",
                       "--min-retention", "0", "--force", "--json"])
    try:
        rec = json.loads(out.splitlines()[0])
    except Exception:
        return say("FAIL", agent, "compact", f"mf compact exit {rc}: {err.strip()[-400:]}")
    if rec.get("action") != "folded":
        return say("FAIL", agent, "compact", f"mf compact: {rec.get('action')}: {rec.get('reason', '')[:300]}")
    ids = [s["id"] for s in rec.get("summaries", []) if str(s.get("outcome", "")).startswith("written")]
    shutil.copy(f, os.path.join(w, "compacted.jsonl"))
    vrc, vout, verr = sh([MF, "verify", f])
    say("PASS" if vrc == 0 else "FAIL", agent, "compact",
        f"summaries {ids}; mf verify: {(vout + verr).strip().splitlines()[-1][:200] if (vout + verr).strip() else vrc}")
    if vrc != 0:
        return

    # mf search finds it folded.
    rc, out, err = sh([MF, "search", f, QUERY, "--json"])
    hits = []
    for ln in out.splitlines():
        try:
            hits.append(json.loads(ln))
        except ValueError:
            pass
    top = hits[0] if hits else None
    ok = rc == 0 and top is not None and top.get("folded") is True and "OPS-4471" in json.dumps(top)
    say("PASS" if ok else "FAIL", agent, "search",
        f"mf search {QUERY!r} exit {rc}: {len(hits)} hits; first: " +
        (json.dumps({k: top.get(k) for k in ("id", "line", "turn", "role", "folded", "coveredBy")}) if top else err.strip()[-300:]))
    if not ok:
        return
    hit = top["id"]

    # The agent recalls it through mf.
    extra = configure_mcp(w, agent)
    n0 = len(requests(w))
    prompt = ("recall: where does the replacement ship, and which ticket? "
              f'PLAN[tool:search={{"query": "{QUERY}"}} ;; tool:expand={{"id": "{hit}"}}'
              ' ;; tool:search={"query": "zebra quokka"} ;; tool:expand={"id": "no-such-id"}]')
    ok, why = resume_with_tools(w, agent, f, prompt, extra)
    allreqs = requests(w)
    reqs, before = allreqs[n0:], allreqs[:n0]
    first = reqs[0][1] if reqs else {}
    in_ctx = "OPS-4471" in json.dumps(first)
    say("NOTE", agent, "context", f"the first request after the fold {'carries' if in_ctx else 'does not carry'} OPS-4471 "
        f"(mf's summary {'kept it' if in_ctx else 'left it out'}); {len(reqs)} requests in the recall turn")
    if not ok:
        say("FAIL", agent, "recall", f"the agent failed: {why[-800:]}")
    fake_log = os.path.join(w, "fakeapi.log")
    if os.path.exists(fake_log) and open(fake_log).read().strip():
        say("NOTE", agent, "fakeapi", open(fake_log).read().strip()[-400:])

    is_search = lambda n: n.endswith("search") and "tool_search" not in n and n != "ToolSearch"
    s = first_result(reqs, is_search, before, lambda a: a.get("query") == QUERY)
    if not s:
        say("FAIL", agent, "recall-search", f"no request carries a result of a search call ({len(reqs)} requests)")
    else:
        rf, name, args, res, err = s
        ok = not err and "OPS-4471" in res and hit in res and "error" not in res.lower()[:80]
        say("NOTE", agent, "tool-name", f"search was called as {name!r} with {json.dumps(args)}")
        say("PASS" if ok else "FAIL", agent, "recall-search",
            f"{os.path.basename(rf)} carries the result ({len(res)} chars, is_error {err}): {res[:300]!r}")
    e = first_result(reqs, lambda n: n.endswith("expand"), before, lambda a: a.get("id") == hit)
    if not e:
        say("FAIL", agent, "recall-expand", f"no request carries a result of an expand call ({len(reqs)} requests)")
    else:
        rf, name, args, res, err = e
        ok = not err and FACT in res
        say("NOTE", agent, "tool-name", f"expand was called as {name!r} with {json.dumps(args)}")
        say("PASS" if ok else "FAIL", agent, "recall-expand",
            f"{os.path.basename(rf)} carries the result ({len(res)} chars, is_error {err}); the planted prompt verbatim: "
            f"{'yes' if FACT in res else 'NO'}: {res[:300]!r}")
    # Nothing found is a plain answer; an unknown id is an error (Codex does not pass MCP's
    # isError on to the model, so for Codex the text alone is judged).
    n = first_result(reqs, is_search, before, lambda a: a.get("query") == "zebra quokka")
    ok = bool(n) and not n[4] and "OPS-4471" not in n[3] and ("no " in n[3].lower() or "no hit" in n[3].lower())
    say("PASS" if ok else "FAIL", agent, "recall-no-hits",
        f"is_error {n[4]}: {n[3][:240]!r}" if n else "no result of the search for 'zebra quokka'")
    b = first_result(reqs, lambda n: n.endswith("expand"), before, lambda a: a.get("id") == "no-such-id")
    ok = bool(b) and (b[4] or agent == "codex") and "no-such-id" in b[3] and FACT not in b[3]
    say("PASS" if ok else "FAIL", agent, "recall-bad-id",
        f"is_error {b[4]}: {b[3][:240]!r}" if b else "no result of expand 'no-such-id'")
    vrc, vout, verr = sh([MF, "verify", f])
    say("PASS" if vrc == 0 else "FAIL", agent, "verify",
        (vout + verr).strip().splitlines()[-1][:300] if (vout + verr).strip() else f"exit {vrc}")
    if agent in ("claude", "codex"):
        installed(agent, w, f, hit)


def installed(agent, w, f, hit):
    """The same recall with the MCP server `mf hook install` registers (command `mf` on PATH),
    the agent run as agent.py runs it (Claude Code: no --mcp-config, --allowedTools Bash,Read,Write)."""
    if agent == "codex":  # the harness's own [mcp_servers.mf] out, mf's in
        cfg = os.path.join(w, "codex", "config.toml")
        keep = open(cfg).read().split("\n[mcp_servers.mf]")[0]
        open(cfg, "w").write(keep)
    home = os.path.join(w, "home")
    env = dict(os.environ, HOME=home, CODEX_HOME=os.path.join(w, "codex"))
    rc, out, err = sh([MF, "hook", "install", "claude-code" if agent == "claude" else "codex"], env=env)
    where = [p for p in (os.path.join(home, ".claude.json"), os.path.join(home, ".claude", "settings.json"),
                         os.path.join(w, "codex", "config.toml"))
             if os.path.exists(p) and any(k in open(p).read() for k in ('"mf"', "mcp_servers.mf", "mcp__mf"))]
    say("PASS" if rc == 0 else "FAIL", agent, "install", f"mf hook install exit {rc}; mf named in {[os.path.relpath(p, w) for p in where]}: "
        f"{(out + err).strip()[:240]}")
    if rc != 0:
        return
    n0 = len(requests(w))
    prompt = ("recall2: again, where does the replacement ship? "
              f'PLAN[tool:search={{"query": "{QUERY}"}} ;; tool:expand={{"id": "{hit}"}}]')
    rc, _, err = ag("resume", w, agent, f, prompt)
    allreqs = requests(w)
    reqs, before = allreqs[n0:], allreqs[:n0]
    if rc != 0:
        return say("FAIL", agent, "installed-recall", f"the agent failed: {err[-600:]}")
    s = first_result(reqs, lambda n: n.endswith("search") and "tool_search" not in n and n != "ToolSearch", before)
    e = first_result(reqs, lambda n: n.endswith("expand"), before)
    ok = bool(s and e and "OPS-4471" in s[3] and FACT in e[3] and not s[4] and not e[4])
    say("PASS" if ok else "FAIL", agent, "installed-recall",
        ("search " + (f"as {s[1]!r}: {s[3][:200]!r}" if s else "never called (the tool was not offered)")) + "; " +
        ("expand " + (f"as {e[1]!r}: {e[3][:200]!r}" if e else "never called")))


# ---- mf mcp alone -----------------------------------------------------------------------------

class Mcp:
    """A plain MCP client on stdio (newline-delimited JSON-RPC)."""

    def __init__(self, argv, env, cwd, log):
        self.log = open(log, "w")
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                  env=env, cwd=cwd, text=True, bufsize=1)
        self.q = queue.Queue()
        self.n = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.q.put(line)
        self.q.put(None)

    def send(self, obj):
        self.p.stdin.write(json.dumps(obj) + "\n")
        self.p.stdin.flush()

    def request(self, method, params=None, timeout=60):
        self.n += 1
        rid = self.n
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, **({"params": params} if params is not None else {})})
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                line = self.q.get(timeout=max(0.1, deadline - time.time()))
            except queue.Empty:
                break
            if line is None:
                raise RuntimeError(f"the server closed its stdout (exit {self.p.poll()})")
            try:
                m = json.loads(line)
            except ValueError:
                raise RuntimeError(f"not JSON on stdout: {line[:200]!r}")
            if m.get("id") == rid:
                return m
        raise RuntimeError(f"no answer to {method} in {timeout} s")

    def call(self, name, args, timeout=60):
        return self.request("tools/call", {"name": name, "arguments": args}, timeout)

    def start(self):
        r = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "clientInfo": {"name": "recall_e2e", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

    def alive(self):
        if self.p.poll() is not None:
            return False
        try:
            return "tools" in self.request("tools/list", {}, 20).get("result", {})
        except RuntimeError:
            return False

    def close(self):
        try:
            self.p.stdin.close()
            return self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return "did not exit when its stdin closed"


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def claude_copy(src, home, cwd, sid, future=False):
    """A copy of a Claude Code session under HOME/.claude/projects/<cwd>/, recorded at CWD."""
    proj = os.path.join(home, ".claude", "projects", cwd.replace("/", "-").replace(".", "-"))
    os.makedirs(proj, exist_ok=True)
    dst = os.path.join(proj, sid + ".jsonl")
    with open(dst, "w", encoding="utf-8") as out:
        for ln in open(src, encoding="utf-8"):
            try:
                o = json.loads(ln)
            except ValueError:
                out.write(ln)
                continue
            if "cwd" in o:
                o["cwd"] = cwd
            if "sessionId" in o:
                o["sessionId"] = sid
            out.write(json.dumps(o) + "\n")
    if future:  # a modification time in the future: mf takes the session as live
        t = time.time() + 3600
        os.utime(dst, (t, t))
    return dst


def tool_error(who, step, r, server, want_error=True):
    """A tools/call answer that must be a tool error (isError, a message), the server alive."""
    res = r.get("result") or {}
    text = text_of(res.get("content"))
    alive = server.alive()
    if want_error:
        ok = res.get("isError") is True and bool(text.strip()) and alive
    else:
        ok = "result" in r and alive
    detail = (f"isError {res.get('isError')}, server {'running' if alive else 'GONE'}: "
              + (repr(text[:300]) if "result" in r else f"JSON-RPC error {json.dumps(r.get('error'))[:300]}"))
    say("PASS" if ok else "FAIL", who, step, detail)
    return ok


def mcp_run(w):
    who = "mcp"
    os.makedirs(w, exist_ok=True)
    src = os.path.join(ROOT, "fixtures", "claude-2.1.332-multiturn.jsonl")
    env0 = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}

    def server(name, home, cwd, *args):
        os.makedirs(home, exist_ok=True)
        os.makedirs(cwd, exist_ok=True)
        s = Mcp([MF, "mcp", *args], dict(env0, HOME=home), cwd, os.path.join(w, name + ".err"))
        return s

    # 1. No session for the directory.
    s = server("nosession", os.path.join(w, "h1"), os.path.join(w, "c1"), "--agent", "claude")
    try:
        init = s.start()
        info = (init.get("result") or {}).get("serverInfo", {})
        tools = sorted(t["name"] for t in (s.request("tools/list", {}).get("result") or {}).get("tools", []))
        ok = info.get("name") == "mf" and {"search", "expand", "folds"} <= set(tools)
        say("PASS" if ok else "FAIL", who, "initialize", f"serverInfo {json.dumps(info)}; tools {tools}")
        tool_error(who, "no-session-search", s.call("search", {"query": "Rotterdam"}), s)
        tool_error(who, "no-session-expand", s.call("expand", {"id": "m1"}), s)
        tool_error(who, "no-session-folds", s.call("folds", {}), s)
    except RuntimeError as e:
        say("FAIL", who, "no-session", str(e))
    finally:
        rc = s.close()
        say("PASS" if rc == 0 else "FAIL", who, "exit-on-eof", f"exit {rc} when its stdin closed")

    # 2. Two live sessions of the directory.
    home, cwd = os.path.join(w, "h2"), os.path.join(w, "c2")
    os.makedirs(cwd, exist_ok=True)
    a = claude_copy(src, home, cwd, str(uuid.uuid4()), future=True)
    b = claude_copy(src, home, cwd, str(uuid.uuid4()), future=True)
    before = {p: sha(p) for p in (a, b)}
    s = server("twolive", home, cwd, "--agent", "claude")
    try:
        s.start()
        tool_error(who, "two-live-search", s.call("search", {"query": "notes.md"}), s)
        tool_error(who, "two-live-folds", s.call("folds", {}), s)
    except RuntimeError as e:
        say("FAIL", who, "two-live", str(e))
    finally:
        s.close()

    # 3. A file that is not a session (--file, and `file` per call).
    notes = os.path.join(w, "notes.txt")
    open(notes, "w").write("Rotterdam office\nnot a session, just notes\n")
    s = server("notsession", os.path.join(w, "h3"), os.path.join(w, "c3"), "--file", notes)
    try:
        s.start()
        tool_error(who, "not-a-session---file", s.call("search", {"query": "Rotterdam"}), s)
        tool_error(who, "not-a-session-expand", s.call("expand", {"id": "m1"}), s)
    except RuntimeError as e:
        say("FAIL", who, "not-a-session", str(e))
    finally:
        s.close()

    # 4-5. A good session: a 10 kB query, an id that does not exist, a `file` that is not one.
    good = claude_copy(src, os.path.join(w, "h4"), os.path.join(w, "c4"), str(uuid.uuid4()))
    before[good] = sha(good)
    s = server("good", os.path.join(w, "h4"), os.path.join(w, "c4"), "--file", good)
    try:
        s.start()
        r = s.call("search", {"query": "notes.md", "all": True})
        res = r.get("result") or {}
        say("PASS" if "result" in r and not res.get("isError") else "FAIL", who, "good-search",
            f"isError {res.get('isError')}: {text_of(res.get('content'))[:200]!r}")
        r = s.call("search", {"query": "zebra-quokka-nowhere-77", "all": True})
        res = r.get("result") or {}
        say("NOTE", who, "no-hits", f"isError {res.get('isError')}: {text_of(res.get('content'))[:200]!r}")
        big = " ".join(f"word{k % 997} OPS-{k}" for k in range(1000))[:10240]
        t0 = time.time()
        r = s.call("search", {"query": big}, timeout=120)
        tool_error(who, "10kB-query", r, s)
        say("NOTE", who, "10kB-query", f"{len(big)} bytes answered in {time.time() - t0:.2f} s")
        tool_error(who, "nonexistent-id", s.call("expand", {"id": "no-such-id-4471"}), s)
        tool_error(who, "file-not-a-session", s.call("search", {"query": "Rotterdam", "file": notes}), s)
        tool_error(who, "file-missing", s.call("search", {"query": "x", "file": os.path.join(w, "nope.jsonl")}), s)
        r = s.call("no_such_tool", {})
        say("NOTE", who, "unknown-tool", json.dumps(r.get("error") or r.get("result"))[:200])
        r = s.call("search", {"limit": 3})
        say("NOTE", who, "missing-query", json.dumps(r.get("error") or r.get("result"))[:200])
        say("PASS" if s.alive() else "FAIL", who, "still-running", "after every bad call")
    except RuntimeError as e:
        say("FAIL", who, "good-session", str(e))
    finally:
        s.close()
    changed = [os.path.basename(p) for p, h in before.items() if sha(p) != h]
    say("PASS" if not changed else "FAIL", who, "writes-nothing", f"changed: {changed}" if changed else f"{len(before)} session files unchanged")


def main():
    # `mf` on PATH, as `mf hook install` registers it (command "mf").
    bindir = os.path.join(os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else "."), "bin")
    os.makedirs(bindir, exist_ok=True)
    if not os.path.exists(os.path.join(bindir, "mf")):
        os.symlink(MF, os.path.join(bindir, "mf"))
    os.environ["PATH"] = bindir + ":" + os.environ.get("PATH", "/usr/bin:/bin")
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    what, w = sys.argv[1], os.path.abspath(sys.argv[2])
    if what == "mcp":
        mcp_run(w)
    elif what in ("claude", "codex", "pi"):
        agent_run(what, w)
    else:
        sys.exit(__doc__)
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
