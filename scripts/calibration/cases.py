#!/usr/bin/env python3
"""Build the retention audit's calibration cases from the shared corpus.

Usage: cases.py CORPUS_DIR OUT_DIR

For each agent compaction in the corpus (Claude Code's `isCompactSummary` rows, pi's
`compaction` entries) it writes the session cut just before the compaction (NAME.jsonl), the
number of entries the agent kept verbatim (NAME.recent), and these replies to serve:
  NAME.a.txt   the agent's own summary (capable model: to be accepted)
  NAME.c1.txt  (a) with four sentences in five removed and its figures changed (declined)
  NAME.c2.txt  (a) with every figure changed                  (to be declined)
  NAME.c3.txt  one fluent generic paragraph                   (to be declined)
  NAME.m-*.txt (a) with one claim changed (to be declined: misstated), from mutate.py:
               m-figure-K  a figure swapped for another figure of the same span, one the span
                           never says next to the figure's noun;
               m-path      a path the summary says was created or changed swapped for one the
                           agent only read;
               m-status    a status flipped (tests passed -> failed);
               m-stale     a corrected value put back (only where the span states a correction).
Case (b), the extractive summary, is made by mf itself; (d), the small model's, by hand.
Deterministic: the same corpus gives the same files.
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutate  # noqa: E402

corpus, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)

GENERIC = (
    "The user and the assistant worked through the task together over many turns. The assistant "
    "read the relevant parts of the project, made a series of careful changes, and ran the checks "
    "to confirm that everything behaved as expected. Several issues came up along the way and were "
    "resolved, and the work is now in a good state, with a few follow-up items left for later."
)


def drop_sentences(text):
    """Keep one sentence (or list line) in five."""
    parts = re.split(r"(?<=[.!?])\s+|\n+", text)
    parts = [p for p in parts if p.strip()]
    return "\n".join(p for k, p in enumerate(parts) if k % 5 == 0)


def change_figures(text):
    """Every run of digits changed (7 → 8, 2024 → 3135): same shape, wrong value."""
    return re.sub(r"\d+", lambda m: "".join(str((int(c) + 1) % 10) for c in m.group(0)), text)


def write_case(name, lines, recent, summary):
    for suffix, text in mutate.mutations(summary, lines):
        with open(os.path.join(out, f"{name}.{suffix}.txt"), "w", encoding="utf-8") as f:
            f.write(text.strip() + "\n")
    with open(os.path.join(out, name + ".jsonl"), "w", encoding="utf-8") as f:
        f.writelines(lines)
    with open(os.path.join(out, name + ".recent"), "w") as f:
        f.write(str(recent))
    for suffix, text in [
        ("a", summary),
        ("c1", change_figures(drop_sentences(summary))),
        ("c2", change_figures(summary)),
        ("c3", GENERIC),
    ]:
        with open(os.path.join(out, f"{name}.{suffix}.txt"), "w", encoding="utf-8") as f:
            f.write(text.strip() + "\n")


def text_of(content):
    if isinstance(content, str):
        return content
    return "\n".join(c.get("text", "") for c in content if isinstance(c, dict))


for fname, short in [
    ("claude-code/cc-2.1.39-autocompact-hooks-progress-1512l.jsonl", "cc-2.1.39"),
    ("claude-code/cc-2.0.76-autocompact-222l.jsonl", "cc-2.0.76"),
]:
    path = os.path.join(corpus, fname)
    lines = open(path, encoding="utf-8").readlines()
    for i, line in enumerate(lines):
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if o.get("isCompactSummary"):
            # The cut: everything before the compaction boundary row that precedes it.
            cut = i
            while cut > 0 and '"compact_boundary"' not in lines[cut]:
                cut -= 1
            summary = text_of(o["message"]["content"])
            write_case(short, lines[:cut], 1, summary)

path = os.path.join(corpus, "pi/pi-v1-before-compaction-1003l.jsonl")
lines = open(path, encoding="utf-8").readlines()
n = 0
for i, line in enumerate(lines):
    o = json.loads(line)
    if o.get("type") == "compaction":
        n += 1
        kept = o.get("firstKeptEntryIndex", i)
        # Entries the agent kept: the messages from the first kept one to the cut.
        recent = sum(
            1 for l in lines[kept:i] if json.loads(l).get("type") == "message"
        )
        write_case(f"pi-v1-compaction-{n}", lines[:i], max(recent, 1), o["summary"])
