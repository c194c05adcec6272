#!/usr/bin/env python3
"""long_turn_check.py BASE.json AFTER.json AGENT PROMPT_FILE

What a real agent sends after mf folded inside a long single-prompt turn (check-agents.sh --full
output for the original and for the compacted session): after the never-folded preamble, the first
message is a user message with mf's summary; the prompt is there verbatim (its own message, or for
pi at the end of the summary pi sends); every tool call has its result; the calls kept are exactly
the original's last ones, in messages identical to the original's end; no folded call is sent; the
first message is a user message and (Claude Code, pi) no two user or assistant messages follow each
other. Prints one JSON line; exit 0 when it all holds."""
import json,sys
base=json.load(open(sys.argv[1])); after=json.load(open(sys.argv[2])); agent=sys.argv[3]
# what the agent adds on resume (its reminders, environment and the resume prompt) is left out
drop={"claude":2,"codex":3,"pi":0}[agent]
PROMPT=open(sys.argv[4]).read()
B=base["messages"]; A=after["messages"]; bad=[]
if drop: B=B[:-drop]; A=A[:-drop]
if base.get("error") or after.get("error"): bad.append("harness error %s %s"%(base.get("error"),after.get("error")))
# the never-folded preamble (identical leading messages: Codex's developer and environment items)
def sig0(m): return (m["role"], m["text"])
p=0
while p<len(A) and p<len(B) and sig0(A[p])==sig0(B[p]) and PROMPT not in A[p]["text"]: p+=1
body=[m for m in A[p:] if not (m["role"] in ("system","developer") and m["len"]==0)]
# the first message: a user message carrying mf's summary
if not body or body[0]["role"]!="user" or "[summary of earlier turns" not in body[0]["text"]: bad.append("first message is not mf's summary: %r"%(body[0]["text"][:80] if body else None))
# the prompt verbatim: its own user message (claude/codex) or at the end of the summary (pi)
has_prompt=[m["i"] for m in A if PROMPT in m["text"]]
if not has_prompt: bad.append("prompt missing")
# calls paired
calls=[c for m in A for c in m.get("tool_calls",[])]
res=[r for m in A for r in m.get("tool_results",[])]+[m["tool_result_for"] for m in A if m.get("tool_result_for")]
if sorted(calls)!=sorted(res): bad.append("unpaired %s"%(set(calls)^set(res)))
# the kept part is identical to the original's end (before the resume prompt)
def sig(m): return (m["role"], m["text"], tuple(m.get("tool_calls",[])), tuple(m.get("tool_results",[])), m.get("tool_result_for"))
kept_calls=set(calls)
bcalls=[c for m in B for c in m.get("tool_calls",[])]
folded=[c for c in bcalls if c not in kept_calls]
# every original message carrying a kept call is present, in order, and nothing of a folded call
for m in A:
    for c in m.get("tool_calls",[]):
        if c not in bcalls: bad.append("a call not in the original: %s"%c)
# the tail: the last k messages of AFTER equal the last k of BASE, where k covers the kept calls
k=0
while k<min(len(A),len(B)) and sig(A[-1-k])==sig(B[-1-k]): k+=1
tail_calls=[c for m in A[len(A)-k:] for c in m.get("tool_calls",[])]
if set(tail_calls)!=kept_calls: bad.append("kept calls not an identical tail of the original (%d identical at the end; %d kept calls, %d in it)"%(k,len(kept_calls),len(tail_calls)))
# consecutive same role
roles=[m["role"] for m in A]
dups=[i for i in range(1,len(roles)) if roles[i]==roles[i-1] and roles[i] in ("user","assistant")]
# The Messages API (Claude Code, and pi speaking it) wants alternating roles; the Responses API
# (Codex) takes a list of items, consecutive user items included.
if agent!="codex" and dups: bad.append("consecutive same-role messages at %s"%dups[:5])
if A and A[0]["role"] not in ("user","developer","system"): bad.append("the first message is %s"%A[0]["role"])
print(json.dumps({"agent":agent,"ok":not bad,"problems":bad,"n_before":len(B),"n_after":len(A),"calls_before":len(bcalls),"calls_after":len(calls),"folded_calls":len(folded),"prompt_at":has_prompt,"identical_tail":k,"consecutive_same_role_at":dups[:10],"roles_head":roles[:6]}))
sys.exit(0 if not bad else 1)
