#!/usr/bin/env python3
"""mf with the real GitHub Copilot CLI (custom-provider mode, offline, against fakeapi.py).

  copilot_e2e.py MF_BIN COPILOT_BIN WORKDIR

Steps (each prints PASS/FAIL; exit 1 on any FAIL):
  fresh      copilot writes a fresh session: 6 prompts with bash calls (one reply with 2 calls)
  compact1   mf compact (default flags, --model extractive); verify; originals byte-exact
  ctx1       copilot --continue: the request carries Copilot's summary message holding mf's
             summary first, then the kept tail exactly (mf's copies), every call with its result,
             no folded call
  compact2   3 more turns, mf compact again (default flags); verify; ctx2 judged as ctx1
  restore    mf expand --restore of the standing summary; verify; copilot sends every prompt and
             every tool call again, no summary
  native     Copilot's own /compact after mf's fold; verify; it resumes from its summary
  mf-after-native  3 more turns, then mf compact after Copilot's compaction; verify; ctx judged
  long       a new session: one prompt of 61 tool calls; mf compact (default flags); ctx judged
"""
import json, os, shutil, subprocess, sys, time

MF, COP, W = sys.argv[1], sys.argv[2], sys.argv[3]
HERE = os.path.dirname(os.path.abspath(__file__))
FAILS = []
SUMMARIZED = "Some of the conversation history has been summarized"


def say(status, step, detail):
    print(f"{status:4}  copilot {step}: {detail}", flush=True)
    if status == "FAIL":
        FAILS.append(step)


shutil.rmtree(W, ignore_errors=True)
HOME, WORK, REC = (os.path.join(W, d) for d in ("home", "work", "rec"))
for d in (HOME, WORK, REC):
    os.makedirs(d)
cache = os.path.expanduser("~/.cache/copilot")  # the agent unpacks itself here once; reuse it
if os.path.isdir(cache):
    os.makedirs(os.path.join(HOME, ".cache"))
    os.symlink(cache, os.path.join(HOME, ".cache", "copilot"))
with open(os.path.join(WORK, "notes.md"), "w") as f:
    f.write("notes line\n" * 40)
portfile = os.path.join(W, "port")
fake = subprocess.Popen([sys.executable, os.path.join(HERE, "fakeapi.py"), "--record", REC, "--portfile", portfile,
                         "--max-seconds", "1500"], stdout=subprocess.DEVNULL, stderr=open(os.path.join(W, "fake.log"), "w"))
while not os.path.exists(portfile):
    time.sleep(0.1)
PORT = open(portfile).read().strip()
ENV = {k: v for k, v in os.environ.items() if k not in ("GITHUB_TOKEN", "GH_TOKEN", "COPILOT_GITHUB_TOKEN")}
ENV.update(HOME=HOME, COPILOT_PROVIDER_BASE_URL=f"http://127.0.0.1:{PORT}/v1", COPILOT_PROVIDER_TYPE="openai",
           COPILOT_PROVIDER_API_KEY="x", COPILOT_MODEL="gpt-5.4", COPILOT_OFFLINE="true", COPILOT_AUTO_UPDATE="false")


def requests():
    return sorted(f for f in os.listdir(REC) if "chat_completions" in f)


def cop(*args):
    """Run copilot; -> the bodies of the chat requests it made."""
    before = set(requests())
    r = subprocess.run([COP, "--allow-all", *args], cwd=WORK, env=ENV, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"copilot {' '.join(args)}: exit {r.returncode}: {(r.stderr or r.stdout)[-400:]}")
    return [json.load(open(os.path.join(REC, f)))["body"] for f in requests() if f not in before]


def mf(*args):
    return subprocess.run([MF, *args], capture_output=True, text=True)


def session_file():
    root = os.path.join(HOME, ".copilot", "session-state")
    files = [os.path.join(root, d, "events.jsonl") for d in os.listdir(root) if not d.startswith(".")]
    return max(files, key=os.path.getmtime)  # the newest session


def events(path):
    return [json.loads(l) for l in open(path) if l.strip()]


def turn(prompt):
    return cop("--continue", "-p", prompt)


def compact(step, path, extra=()):
    before = open(path, "rb").read()
    r = mf("compact", path, "--model", "extractive", "--json", *extra)
    if r.returncode != 0:
        say("FAIL", step, f"mf compact exit {r.returncode}: {r.stderr[-300:]}")
        return False
    rec = json.loads(r.stdout.splitlines()[0])
    if rec.get("action") != "folded":
        say("FAIL", step, f"mf compact did not fold: {rec.get('action')}: {rec.get('reason')}")
        return False
    v = mf("verify", path)
    exact = open(path, "rb").read().startswith(before)
    ok = v.returncode == 0 and exact
    say("PASS" if ok else "FAIL", step, f"{rec['reason']}{'' if not extra else ' (flags: ' + ' '.join(extra) + ')'}; "
        f"verify: {v.stdout.strip().splitlines()[0] if v.stdout.strip() else v.stderr.strip()[-200:]}; originals byte-exact: {exact}")
    return ok


def msg_key(m):
    c = m.get("content")
    c = c if isinstance(c, str) else json.dumps(c)
    return (m.get("role"), c or "", tuple(t["id"] for t in m.get("tool_calls") or []), m.get("tool_call_id"))


def judge(step, path, body):
    """The request after mf's fold: [system, Copilot's summary message holding mf's summary, the
    kept tail (mf's copies, in order), …]; every call answered; no folded call."""
    evs = events(path)
    last = max(i for i, e in enumerate(evs) if e.get("type") == "session.compaction_complete")
    comp = evs[last]
    if "mf" not in comp:
        return say("FAIL", step, "the last compaction in the file is not mf's")
    msgs = body["messages"]
    if msgs[0].get("role") != "system" or msgs[1].get("role") != "user" or SUMMARIZED not in msgs[1]["content"]:
        return say("FAIL", step, f"the request does not open with Copilot's summary message: {[m.get('role') for m in msgs[:3]]}")
    if comp["data"]["summaryContent"] not in msgs[1]["content"]:
        return say("FAIL", step, "Copilot's summary message does not carry mf's summary")
    # The kept tail: mf's copies after its compaction, as Copilot sends them.
    copies = [e for e in evs[last + 1:] if e.get("mf", {}).get("op") == "copy"]
    want = []
    for e in copies:
        d = e["data"]
        if e["type"] == "user.message":
            want.append(("user", d.get("transformedContent") or d["content"], (), None))
        elif e["type"] == "assistant.message":
            want.append(("assistant", d.get("content") or "", tuple(r["toolCallId"] for r in d.get("toolRequests") or []), None))
    got = [msg_key(m) for m in msgs[2:]]
    got_shape = [(r, c, t) for r, c, t, _ in got if r in ("user", "assistant")][:len(want)]
    want_shape = [(r, c, t) for r, c, t, _ in want]
    if got_shape != want_shape:
        return say("FAIL", step, f"the kept tail differs from mf's copies: want {want_shape[:3]}… got {got_shape[:3]}…")
    calls = [t for _, _, ts, _ in got for t in ts]
    results = [r for _, _, _, r in got if r]
    if sorted(calls) != sorted(results):
        return say("FAIL", step, f"unpaired tool calls: {set(calls) ^ set(results)}")
    kept_ids = {e["id"] for e in copies} | {e["mf"]["of"] for e in copies}
    folded_calls = {r["toolCallId"] for e in evs[:last] if e.get("type") == "assistant.message" and "mf" not in e
                    and e["id"] not in kept_ids for r in e["data"].get("toolRequests") or []}
    leaked = folded_calls & set(calls)
    if leaked:
        return say("FAIL", step, f"folded calls sent again: {sorted(leaked)[:3]}")
    say("PASS", step, f"summary first ({len(comp['data']['summaryContent'])} chars of mf's summary in Copilot's message), "
        f"kept tail exact ({len(want)} messages, {len(copies)} copied events), {len(calls)} calls paired, no folded call")


def run():
    f = None
    try:
        cop("-p", "first: start. PLAN[bash:echo one > one.txt ;; read:one.txt ;; bash:ls ++ bash:pwd]")
        for k in range(2, 7):
            turn(f"turn{k}: more work. PLAN[bash:seq 1 150 ;; read:notes.md]")
        f = session_file()
        n = sum(1 for e in events(f) if e["type"] == "user.message")
        calls = sum(len(e["data"].get("toolRequests") or []) for e in events(f) if e["type"] == "assistant.message")
        say("PASS", "fresh", f"{f}: {n} prompts, {calls} tool calls")
    except Exception as e:
        return say("FAIL", "fresh", str(e))
    shutil.copy(f, os.path.join(W, "fresh.jsonl"))
    if compact("compact1", f):
        judge("ctx1", f, turn("after1: resumed after mf's fold. PLAN[bash:echo after1]")[0])
    for k in range(2, 4):
        turn(f"more{k}: turn after the fold. PLAN[bash:seq 1 150 ;; read:notes.md]")
    if compact("compact2", f):
        judge("ctx2", f, turn("after2: resumed after the second fold. PLAN[bash:echo after2]")[0])
    # restore
    # A summary that folded an earlier one brings it back when restored: restore newest first.
    for sid in reversed([e["data"]["id"] for e in events(f) if e["type"] == "mf.summary"]):
        r = mf("expand", f, sid, "--restore", "--force")
        if r.returncode != 0:
            break
    v = mf("verify", f)
    body = turn("restored: everything again.")[0]
    originals = [e for e in events(f) if "mf" not in e]
    prompts = [e["data"].get("transformedContent") or e["data"]["content"] for e in originals if e["type"] == "user.message"][:-1]
    all_calls = {q["toolCallId"] for e in originals if e["type"] == "assistant.message" for q in e["data"].get("toolRequests") or []}
    sent = [m.get("content") for m in body["messages"] if m.get("role") == "user"]
    sent_calls = {t["id"] for m in body["messages"] for t in m.get("tool_calls") or []}
    ok = (r.returncode == 0 and v.returncode == 0 and not any(SUMMARIZED in (c or "") for c in sent)
          and all(p in sent for p in prompts) and all_calls <= sent_calls)
    say("PASS" if ok else "FAIL", "restore", f"expand exit {r.returncode}, verify exit {v.returncode}; "
        f"{sum(p in sent for p in prompts)}/{len(prompts)} prompts and {len(all_calls & sent_calls)}/{len(all_calls)} calls sent again, "
        f"summary message: {any(SUMMARIZED in (c or '') for c in sent)}")
    # native after mf: fold again, then Copilot's own /compact
    for k in range(4, 6):
        turn(f"more{k}: turn before the agents compact. PLAN[bash:seq 1 150 ;; read:notes.md]")
    compact("compact3", f)
    try:
        cop("--continue", "-p", "/compact")
        evs = events(f)
        native = [e for e in evs if e["type"] == "session.compaction_complete" and "mf" not in e]
        v = mf("verify", f)
        body = turn("postnative: after Copilot's compaction. PLAN[bash:echo pn]")[0]
        ok = bool(native) and v.returncode == 0 and native[-1]["data"].get("summaryContent", "") in body["messages"][1]["content"]
        say("PASS" if ok else "FAIL", "native", f"Copilot compacted after mf ({len(native)} native compaction); verify exit {v.returncode}; "
            f"it resumes from its own summary: {ok}")
    except Exception as e:
        say("FAIL", "native", str(e))
    # mf after native
    for k in range(1, 4):
        turn(f"native{k}: turn after Copilot's compaction. PLAN[bash:seq 1 150 ;; read:notes.md]")
    if compact("mf-after-native", f):
        judge("ctx-after-native", f, turn("after3: resumed after mf's fold over Copilot's. PLAN[bash:echo a3]")[0])
    # long: one prompt of many tool calls, in a new session; mf folds inside the turn
    try:
        cop("-p", "long: one long run. PLAN[bash*60:seq 1 120 ;; read:notes.md]")
        g = session_file()
        n = sum(len(e["data"].get("toolRequests") or []) for e in events(g) if e["type"] == "assistant.message")
        say("PASS", "long-fresh", f"{g}: 1 prompt, {n} tool calls")
    except Exception as e:
        return say("FAIL", "long-fresh", str(e))
    if compact("long", g):
        judge("ctx-long", g, turn("afterlong: resumed after the long fold. PLAN[bash:echo al]")[0])


try:
    run()
finally:
    fake.terminate()
print(f"{'FAIL' if FAILS else 'PASS'}  copilot: {len(FAILS)} failed step(s){': ' + ', '.join(FAILS) if FAILS else ''}")
sys.exit(1 if FAILS else 0)
