#!/usr/bin/env python3
"""loop_e2e.py - mf in the agents' own compaction, with the real agents (issue 18, "Prove it").

  loop_e2e.py claude WORKDIR     Claude Code with `mf hook install claude-code`
  loop_e2e.py pi WORKDIR         pi 1.6 with integrations/pi loaded from its settings.json

Needs MF_BIN (the mf to test) and the agents agent.py runs. Prints one `PASS|FAIL agent step: why`
line per check; exit 0 when every check passed.

claude: the hooks go into HOME/.claude/settings.json by `mf hook install claude-code`; a session
with salient items is written; `claude -p --resume ID /compact` runs Claude Code's compaction:
the compaction request (the one that asks for the summary) must carry mf's keep-list (an item of
the session, verbatim); the next request Claude sends must carry mf's SessionStart
additionalContext naming what Claude's summary lost; the session file holds no line of mf's and
its bytes before the compaction are unchanged. Then the same with an automatic compaction
(CLAUDE_CODE_AUTO_COMPACT_WINDOW small), where Claude Code reaches it.

pi: settings.json's "extensions" names integrations/pi; an RPC `compact` must write a
`compaction` entry (fromHook) whose summary is mf's (label first), with mf's audit in details; pi
resumes from it (the next request carries mf's summary); when mf fails (an unknown model), declines
(its audit finds the summary lossy) or is not installed, pi's own compaction runs (the entry is not
fromHook, its summary is pi's) and the extension tells the user why (a notify in the RPC events).
"""
import glob, hashlib, json, os, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
AGENT = [sys.executable, os.path.join(HERE, "agent.py")]
MF = os.environ.get("MF_BIN") or os.path.join(ROOT, "target", "release", "mf")
fails = []


def check(agent, step, ok, why=""):
    print(f"{'PASS' if ok else 'FAIL'} {agent} {step}: {why}".rstrip(": "), flush=True)
    if not ok:
        fails.append(step)


def ag(*a, env=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run(AGENT + list(a), capture_output=True, text=True, env=e)
    if p.returncode != 0:
        raise RuntimeError(f"agent.py {a[0]}: {p.stderr.strip()[-1500:]}")
    return p.stdout.strip().splitlines()[-1] if p.stdout.strip() else ""


def requests(w):
    out = []
    for f in sorted(glob.glob(os.path.join(w, "rec", "*.json"))):
        try:
            r = json.load(open(f))
        except ValueError:
            continue
        if r.get("method") == "POST" and "/messages" in r.get("path", "") and "count_tokens" not in r["path"]:
            out.append((f, r))
    return out


def text_of(body):
    return json.dumps(body, ensure_ascii=False)


def is_compaction(body):
    t = text_of(body.get("messages", [])[-1:] if isinstance(body, dict) else body)
    return "summary" in t.lower() and ("compact" in t.lower() or "summarize" in t.lower() or "summary of the conversation" in t.lower())


def sha(path, upto=None):
    b = open(path, "rb").read()
    return hashlib.sha256(b[:upto] if upto is not None else b).hexdigest()


def mf_lines(path):
    return [ln for ln in open(path, encoding="utf-8", errors="replace") if ln.startswith('{"mf"')]


SALIENT = ("deploy-check: the deploy window is 16:00 UTC, the ticket is CR-2291, the config lives in "
           "config/deploy_prod.toml and the rollback command is `kubectl rollout undo deploy/checkout-api`. "
           "PLAN[bash:echo checkout-api > service.txt ;; read:service.txt]")


def claude(w):
    os.makedirs(w, exist_ok=True)
    ag("start", w)
    home = os.path.join(w, "home")
    try:
        p = subprocess.run([MF, "hook", "install", "claude-code"], env={**os.environ, "HOME": home},
                           capture_output=True, text=True)
        settings = os.path.join(home, ".claude", "settings.json")
        ok = p.returncode == 0 and os.path.exists(settings)
        check("claude", "install", ok, p.stderr.strip()[-300:])
        if not ok:
            return
        f = ag("new", w, "claude", SALIENT)
        f = ag("resume", w, "claude", f, "second: note that the p99 latency budget is 250ms. PLAN[bash:echo ok]")
        size = os.path.getsize(f)
        before = sha(f)
        n0 = len(requests(w))
        ag("compact", w, "claude", f)
        reqs = requests(w)[n0:]
        comp = [r for _, r in reqs if "mf keep-list" in text_of(r["body"])]
        check("claude", "keep-list-sent", bool(comp) and "CR-2291" in text_of(comp[0]["body"]),
              f"{len(reqs)} requests in /compact, {len(comp)} carry mf's keep-list")
        check("claude", "session-untouched-by-mf", sha(f, size) == before and not mf_lines(f),
              f"first {size} bytes {'unchanged' if sha(f, size) == before else 'CHANGED'}, {len(mf_lines(f))} mf lines")
        rows = [json.loads(l) for l in open(f, encoding="utf-8") if l.strip()]
        summ = [r for r in rows if r.get("isCompactSummary")]
        check("claude", "compaction-written", bool(summ), f"{len(summ)} isCompactSummary rows")
        # The loss report: in the compaction run's own next request, or carried into the next run.
        n1 = len(requests(w))
        ag("resume", w, "claude", f, "after: what is the ticket? PLAN[bash:echo done]")
        after = requests(w)[n1:]
        report = [r for _, r in (reqs + after) if "mf audit of the compaction summary" in text_of(r["body"])]
        first_after = after[0][1] if after else None
        carried = first_after is not None and "mf audit of the compaction summary" in text_of(first_after["body"])
        lost_named = bool(report) and any(x in text_of(report[0]["body"]) for x in ("CR-2291", "config/deploy_prod.toml", "kubectl rollout undo"))
        check("claude", "loss-report-sent", bool(report) and lost_named,
              f"{len(report)} requests carry mf's additionalContext; the first request after the compaction {'does' if carried else 'does not'}")
        check("claude", "session-untouched-after", not mf_lines(f) and sha(f, size) == before)
        # Automatic compaction with a small window.
        n2 = len(requests(w))
        try:
            env = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "20000", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "1"}
            subprocess.run(AGENT + ["resume", w, "claude", f, "auto: grow " + "lorem ipsum " * 400 + " PLAN[bash:echo a]"],
                           env={**os.environ, **env}, capture_output=True, text=True, timeout=600)
        except Exception as e:  # reported below
            print(f"note: auto run: {e}")
        auto = requests(w)[n2:]
        auto_keep = [r for _, r in auto if "mf keep-list" in text_of(r["body"])]
        rows2 = [json.loads(l) for l in open(f, encoding="utf-8") if l.strip()]
        autos = [r for r in rows2 if r.get("subtype") == "compact_boundary" and (r.get("compactMetadata") or {}).get("trigger") == "auto"]
        if autos:
            check("claude", "auto-keep-list-sent", bool(auto_keep), f"{len(autos)} auto compactions, {len(auto_keep)} requests with the keep-list")
        else:
            print("NOTE claude auto-compaction: Claude Code did not compact automatically in this run "
                  f"({len(auto)} requests); the manual /compact above is the proof")
        p = subprocess.run([MF, "hook", "uninstall", "claude-code"], env={**os.environ, "HOME": home},
                           capture_output=True, text=True)
        # mf created the settings file (there was none): uninstall leaves none, as before install.
        gone = not os.path.exists(settings)
        s = {} if gone else json.load(open(settings))
        check("claude", "uninstall", p.returncode == 0 and "hooks" not in s,
              ("settings.json removed (mf created it) " if gone else "") + p.stderr.strip()[-200:])
    finally:
        ag("stop", w)


def pi_settings(w, extra=None):
    d = {"extensions": [os.path.join(ROOT, "integrations", "pi")], "compaction": {"keepRecentTokens": 40}}
    d.update(extra or {})
    json.dump(d, open(os.path.join(w, "pi", "settings.json"), "w"))


def pi_rpc_compact(w, f, env):
    """agent.py's RPC compaction with our settings (it writes its own; ours go back after)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("agent", os.path.join(HERE, "agent.py"))
    a = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(a)
    old = os.environ.copy()
    os.environ.update(env)
    try:
        a._rpc_compact(w, "pi", f)
    finally:
        os.environ.clear()
        os.environ.update(old)


def compactions(f):
    return [json.loads(l) for l in open(f, encoding="utf-8") if l.strip() and '"type":"compaction"' in l]


def notices(w):
    """The (level, message) of every notify the extension sent in the last RPC run."""
    out = []
    for line in open(os.path.join(w, "pi-rpc.out"), encoding="utf-8", errors="replace"):
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if o.get("type") == "extension_ui_request" and o.get("method") == "notify":
            out.append((o.get("notifyType", "info"), o.get("message", "")))
    return out


def pi(w):
    os.makedirs(w, exist_ok=True)
    ag("start", w)
    try:
        pi_settings(w)
        env = {"MF_BIN": MF, "MF_MODEL": "extractive", "MF_MIN_RETENTION": "0"}
        f = ag("new", w, "pi", SALIENT, env=env)
        f = ag("resume", w, "pi", f, "second: note that the p99 latency budget is 250ms. PLAN[bash:echo ok]", env=env)
        f = ag("resume", w, "pi", f, "third: and the owner is Dana Kim. PLAN[bash:echo three]", env=env)
        pi_settings(w)
        pi_rpc_compact(w, f, env)
        c = compactions(f)
        last = c[-1] if c else {}
        summary = last.get("summary", "")
        check("pi", "mf-compaction-written", bool(c) and last.get("fromHook") is True and summary.startswith("[summary of earlier turns"),
              f"{len(c)} compaction entries; fromHook={last.get('fromHook')}; summary starts {summary[:60]!r}")
        check("pi", "audit-in-details", isinstance((last.get("details") or {}).get("mf", {}).get("audit"), dict),
              f"details keys {list((last.get('details') or {}).keys())}")
        n1 = len(requests(w))
        ag("resume", w, "pi", f, "after: what is the ticket? PLAN[bash:echo done]", env=env)
        after = requests(w)[n1:]
        check("pi", "resumes-from-mf-summary", bool(after) and "[summary of earlier turns" in text_of(after[0][1]["body"]),
              f"{len(after)} requests after the compaction")
        told = notices(w)
        check("pi", "no-notice-when-mf-used", not told, f"notices: {told}")
        # mf fails, declines, or is not there: pi's own compaction, and the user is told why.
        port = open(os.path.join(w, "port")).read().strip()
        cases = [
            ("fails", {"MF_BIN": MF, "MF_MODEL": "no-such-model-xyz"}, "mf could not summarize", "no-such-model-xyz"),
            # A real model call (haiku, at the loopback API) whose summary loses the span's items.
            ("declines", {"MF_BIN": MF, "MF_MODEL": "haiku", "MF_BASE_URL": f"http://127.0.0.1:{port}"},
             "mf declined this compaction", "lossy"),
            ("missing", {"MF_BIN": os.path.join(w, "no-mf-here"), "MF_MODEL": "extractive"}, "mf did not run", "no-mf-here"),
        ]
        for k, (name, bad, said, names) in enumerate(cases):
            ag("resume", w, "pi", f, f"more {k}: the build id is BX-{k}417 in dist/build_{k}.json. PLAN[bash:echo more{k}]", env=env)
            n_before = len(compactions(f))
            pi_settings(w)
            pi_rpc_compact(w, f, bad)
            c2 = compactions(f)
            newer = c2[n_before:] if len(c2) > n_before else []
            own = newer[-1] if newer else {}
            check("pi", f"own-compaction-when-mf-{name}", bool(newer) and not own.get("fromHook") and not own.get("summary", "").startswith("[summary of earlier turns"),
                  f"{len(newer)} new compaction entries; fromHook={own.get('fromHook')}; summary starts {own.get('summary', '')[:60]!r}")
            told = notices(w)
            check("pi", f"user-told-when-mf-{name}", any(said in m and names in m for _, m in told),
                  f"notices: {told}")
    finally:
        ag("stop", w)


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("claude", "pi"):
        sys.exit(__doc__)
    w = os.path.abspath(sys.argv[2])
    try:
        {"claude": claude, "pi": pi}[sys.argv[1]](w)
    except RuntimeError as e:
        check(sys.argv[1], "run", False, str(e))
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
