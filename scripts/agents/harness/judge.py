#!/usr/bin/env python3
"""judge.py AGENT ORIG COMPACTED BASE.json FOLDED.json RESTORED.json MARKER

Compares what a real agent sent to its model (check-agents.sh --full output) for the original
session (BASE), after `mf compact` (FOLDED) and after `mf expand --restore` (RESTORED), and
prints one line: `PASS|FAIL agent file counts [problems]`. Exit 0 on PASS, 1 on FAIL.

What it asserts, after cutting each context at the resume prompt MARKER (and, for Codex, the
fresh context Codex appends on resume; Claude Code's empty system items are ignored):
  * FOLDED = HEAD + [mf's summary] + TAIL, where HEAD is a prefix and TAIL a suffix of BASE:
    - the one message between them holds mf's summary (its label line, from the lines mf
      appended to COMPACTED); for Claude Code it is mf's summary merged with the first kept
      prompt (Claude Code joins consecutive user messages), so it must end with that prompt;
    - HEAD is empty for Claude Code and pi (the summary comes first); for Codex it holds only
      what is never folded: Codex's base instructions, the developer/context preamble, and the
      history of Codex's own earlier compaction, carried as it was;
    - TAIL is the original's last messages, identical, and something was folded: BASE has
      messages between HEAD and TAIL, and so (by this structure) FOLDED holds none of them;
    - every tool call in FOLDED has its result and every result its call.
  * RESTORED == BASE exactly. The one exception, named in the output: a pi v1 session without a
    compaction of its own, where no append-only undo is exact and pi shows one leading note.
"""
import json
import sys

agent, orig_path, comp_path, base_p, fold_p, rest_p, marker = sys.argv[1:8]

CONTEXT = ("<environment_context>", "# AGENTS.md instructions", "<user_instructions>", "<INSTRUCTIONS>",
           "<permissions instructions>", "<skills_instructions>")


def load(p):
    d = json.load(open(p))
    if d.get("error"):
        raise SystemExit(f"FAIL {agent} {name}: the agent run failed: {d.get('error')} {d.get('agent_stderr', '')[-300:]}")
    return d["messages"]


def is_context(m):
    return m.get("role") in ("developer", "system") or (m.get("role") == "user" and m.get("text", "").startswith(CONTEXT))


def prepare(msgs):
    # Claude Code 2.1.332 sends its environment as a system message inside the messages, after
    # the session's first user message: the agent's own, not the session's; left out for Claude.
    out = [{k: v for k, v in m.items() if k != "i"} for m in msgs
           if not (m.get("role") == "system" and (m.get("len") == 0 or agent == "claude"))]
    cut = next((k for k, m in enumerate(out) if marker in m.get("text", "")), len(out))
    out = out[:cut]
    if agent == "codex":
        # Codex appends fresh context items before the prompt on resume: drop the trailing run.
        while out and is_context(out[-1]):
            out.pop()
    return out


def paired(msgs):
    calls = [c for m in msgs for c in m.get("tool_calls", [])]
    res = [r for m in msgs for r in m.get("tool_results", [])] + [m["tool_result_for"] for m in msgs if m.get("tool_result_for")]
    return sorted(calls) == sorted(res), sorted(set(calls) ^ set(res))


name = orig_path.rsplit("/", 1)[-1]
orig_bytes = open(orig_path, "rb").read()
comp_bytes = open(comp_path, "rb").read()
problems = []
if not comp_bytes.startswith(orig_bytes):
    problems.append("the original bytes changed")
label, tail_line = None, None
for line in comp_bytes[len(orig_bytes):].decode().splitlines():
    o = json.loads(line)
    if o.get("mf", {}).get("kind") == "summary":
        content = o.get("content") or (o.get("payload") or {}).get("content") or (o.get("data") or {}).get("content")
        label = content.split("\n")[0]
        tail_line = o["mf"]["coverage"].get("tailLine")
        break
if label is None:
    problems.append("no mf summary was appended")
raw_lines = orig_bytes.decode().split("\n")
orig_lines = [json.loads(l) for l in raw_lines if l.strip().startswith("{")]
# Codex's own last compaction: the texts of the history it carries (parts joined as the
# harness joins them).
native = [o for o in orig_lines if o.get("type") == "compacted" and "mf" not in o]
carried = set()
for o in native[-1:]:
    for it in (o.get("payload") or {}).get("replacement_history") or []:
        parts = [c.get("text", "") if c.get("type") != "input_image" else "[image]"
                 for c in (it.get("content") or []) if isinstance(c, dict)] if isinstance(it, dict) else []
        carried.add("\n".join(parts))
        if isinstance(it, dict) and it.get("type") in ("compaction", "compaction_summary", "context_compaction"):
            carried.add("[encrypted_content %d chars]" % len(it.get("encrypted_content") or ""))  # as codex_summarize shows it
    carried.add((o.get("payload") or {}).get("message", ""))
# Claude Code: the first kept prompt (the row on the summary's tail line), as the harness shows it.
first_kept = None
if agent == "claude" and tail_line:
    row = json.loads(raw_lines[tail_line - 1])
    c = row["message"]["content"]
    first_kept = c if isinstance(c, str) else "\n".join(b.get("text", "") for b in c if b.get("type") == "text")

B, C, R = prepare(load(base_p)), prepare(load(fold_p)), prepare(load(rest_p))
h = 0
while h < min(len(B), len(C)) and B[h] == C[h]:
    h += 1
t = 0
while t < min(len(B), len(C)) - h and B[len(B) - 1 - t] == C[len(C) - 1 - t]:
    t += 1
mid_c, mid_b = C[h:len(C) - t], B[h:len(B) - t]
merged = 0
in_turn = 0  # a fold inside one long turn: its prompt stays verbatim, right after the summary


def prompt_part(t):
    """A user message's text without the reminders Claude Code puts before the prompt."""
    return t.rsplit("</system-reminder>\n\n", 1)[-1] if "</system-reminder>" in t else t


if len(mid_c) == 2 and mid_b and mid_c[1] == mid_b[0] and mid_b[0].get("role") == "user" \
        and label and label in mid_c[0].get("text", ""):
    # Codex: [summary] then the turn's prompt, as the original has it; what follows it was folded.
    in_turn = 1
    mid_c = mid_c[:1]
if len(mid_c) != 1:
    problems.append(f"expected one summary message between the carried head and the kept tail, found {len(mid_c)}")
elif label and label not in mid_c[0].get("text", ""):
    problems.append(f"the message before the kept tail lacks mf's summary ({label[:50]!r})")
elif in_turn:
    pass
elif agent == "claude" and mid_b and mid_b[0].get("role") == "user" and len(mid_b) > 1 \
        and mid_b[0]["text"] != mid_c[0]["text"] and mid_c[0]["text"].endswith(prompt_part(mid_b[0]["text"])) \
        and not (first_kept and mid_b[-1].get("role") == "user" and mid_b[-1].get("text", "").endswith(first_kept)):
    # Claude Code joins consecutive user messages: in a fold inside the turn, mf's summary and
    # the turn's prompt (kept verbatim) are sent as one message; what followed the prompt was folded.
    in_turn = 1
elif agent == "claude":
    # Claude Code joins consecutive user messages: mf's summary and the first kept prompt are
    # sent as one, and so are the prompt and what precedes it in the original.
    if not (first_kept and mid_b and mid_b[-1].get("role") == "user"
            and mid_c[0]["text"].endswith(first_kept) and mid_b[-1].get("text", "").endswith(first_kept)):
        problems.append("the summary message does not end with the first kept prompt")
    else:
        merged = 1
# What was folded: the original's messages between the carried head and the kept tail. By the
# structure above none of them is sent any more.
folded = mid_b[in_turn:len(mid_b) - merged]
if not folded:
    problems.append("nothing was folded")
if agent in ("claude", "pi") and h:
    problems.append(f"{h} messages come before mf's summary")
for m in B[:h]:
    if not (is_context(m) or m.get("text") in carried):
        problems.append(f"a message before mf's summary is neither preamble nor the agent's own compaction: {m.get('text', '')[:60]!r}")
        break
ok, diff = paired(C)
if not ok:
    problems.append(f"unpaired calls/results after compaction: {diff[:3]}")

note = ""
if R != B:
    v1 = '"version"' not in orig_bytes.decode().split("\n", 1)[0]
    if agent == "pi" and v1 and not any(o.get("type") == "compaction" and "mf" not in o for o in orig_lines) \
            and len(R) == len(B) + 1 and R[1:] == B and "withdrawn" in R[0].get("text", ""):
        note = " (+1 leading note: a pi v1 session without a compaction of its own has no exact append-only undo)"
    else:
        k = next((i for i, (x, y) in enumerate(zip(B, R)) if x != y), min(len(B), len(R)))
        problems.append(f"after restore the context differs from the original at message {k} ({len(R)} vs {len(B)} messages)")

summary = "[mf summary + first kept prompt]" if merged else "mf summary"
if in_turn:
    summary = "[mf summary + the turn's prompt, verbatim]" if agent == "claude" else "mf summary + the turn's prompt, verbatim"
head = f"{h} preamble/carried + " if h else ""
counts = (f"original {len(B)} msgs; compacted {len(C)} = {head}{summary} + {t} identical to the original's last; "
          f"{len(folded)} folded, not sent; restored {len(R)}{' = original' if R == B else ''}{note}")
print(f"{'PASS' if not problems else 'FAIL'}  {agent:<6} {name}: {counts}" + ("" if not problems else "\n      " + "\n      ".join(problems)))
sys.exit(0 if not problems else 1)
