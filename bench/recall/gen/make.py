#!/usr/bin/env python3
"""Make the generated chats of the recall benchmark and their questions (deterministic).

For each seed: `testgen facts --turns 120 --seed S` writes a work chat with planted facts (and the
list of them). This script then plants user decisions (constraints stated once, in one user
message, e.g. "ship the replacement laptop to the Lisbon office, not the Porto one"): it appends
one sentence to a chosen user message, changing nothing else. It folds a copy with the flags of
gen/sessions.tsv and writes questions only for planted entries that the fold hides:
  - planted facts of class identifier, number and path, never corrected later, whose value is
    unique in the chat and whose entry also names the subject: "What is the <subject>?"
    (kind = class);
  - the decisions, asked in words that avoid the decision's own terms (kind decision).

usage: python3 bench/recall/gen/make.py [--testgen PATH] [--mf PATH] [--seeds 1,2,3]
  TESTGEN_BIN / MF_BIN name the binaries (defaults: testgen / mf on PATH).
Writes gen/chat-120-seedS.jsonl, gen/facts-120-seedS.json, gen/questions/chat-120-seedS.jsonl.
"""

import argparse
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from run import folded_entries, read_tsv  # noqa: E402

TURNS = 120
PER_KIND = 4  # identifier, number, path facts asked per chat
KIND_OF_CLASS = {"identifier": "identifier", "number": "number", "path": "path"}

# (sentence template, question, answer template); {a}/{b}/... are filled from the choices.
DECISIONS = [
    ("Please ship the replacement laptop to the {a} office, not the {b} one.",
     "Which location did the user want the new computer sent to?", "{a} office",
     dict(a=["Lisbon", "Porto", "Gdansk", "Tallinn", "Leeds"], b=["Madrid", "Lyon", "Graz"])),
    ("For the locking we will not use Redis; stick with {a} advisory locks.",
     "Which mechanism did the user choose for mutual exclusion instead of the in-memory store?",
     "{a} advisory locks", dict(a=["Postgres", "MySQL"])),
    ("Freeze the release branch until {a}; no merges to main before then.",
     "Until which day are merges blocked?", "until {a}",
     dict(a=["Thursday", "Tuesday", "Friday"])),
    ("All user-facing copy must use {a} spelling.",
     "What spelling convention should the interface text follow?", "{a} spelling",
     dict(a=["British", "American"])),
    ("Keep the cloud bill under {a} EUR a month, that is a hard cap.",
     "What is the monthly spending ceiling for hosting?", "{a} EUR",
     dict(a=["4,000", "2,500", "7,200"])),
    ("Do not write to the customer directly; all contact goes through {a} in support.",
     "Who should handle communication with the client?", "{a} in support",
     dict(a=["Dana", "Ravi", "Ines", "Tomasz"])),
    ("We are dropping {a} in this release, so do not add workarounds for it.",
     "Which interpreter version is the team ceasing to support?", "dropping {a}",
     dict(a=["Python 3.8", "Python 3.9"])),
    ("The on-call rotation should start with {a} next week.",
     "Who takes the first pager shift?", "start with {a}",
     dict(a=["Priya", "Jonas", "Mele", "Oskar"])),
    ("Keep the public API backwards compatible: no breaking renames before {a}.",
     "Until which major version are incompatible renames off the table?", "before {a}",
     dict(a=["v3", "v4", "v5"])),
    ("Name the new feature flag after the {a} team, they own it.",
     "Whose group should the toggle for the new feature be named after?", "{a} team",
     dict(a=["Atlas", "Harbor", "Juniper"])),
]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, MF_NO_PROGRESS="1"))
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(shlex.quote(c) for c in cmd)} exited {p.returncode}: {p.stderr.strip()}")
    return p


def make(seed, testgen, mf, flags):
    name = f"chat-{TURNS}-seed{seed}.jsonl"
    chat = os.path.join(HERE, name)
    facts_path = os.path.join(HERE, f"facts-{TURNS}-seed{seed}.json")
    run([testgen, "facts", "--turns", str(TURNS), "--seed", str(seed), "--out", chat, "--facts", facts_path])
    lines = open(chat, encoding="utf-8").read().splitlines()
    msgs = [json.loads(l) for l in lines]
    user_idx = [i for i, m in enumerate(msgs) if m.get("role") == "user"]

    # Plant the decisions in user messages of turns 5..70 (the part a fold hides), spread out.
    rng = random.Random(seed * 7919)
    decisions = []
    turns = sorted(rng.sample(range(5, 71), len(DECISIONS)))
    order = list(range(len(DECISIONS)))
    rng.shuffle(order)
    for turn, di in zip(turns, order):
        tmpl, q, ans, choices = DECISIONS[di]
        fill = {k: rng.choice(v) for k, v in choices.items()}
        i = user_idx[turn - 1]
        sentence = tmpl.format(**fill)
        msgs[i]["content"] = msgs[i]["content"].rstrip() + " " + sentence
        decisions.append({"question": q, "kind": "decision", "answer": ans.format(**fill), "line": i + 1})
    with open(chat, "w", encoding="utf-8") as f:
        for m in msgs:
            f.write(json.dumps(m, ensure_ascii=False, separators=(",", ":")) + "\n")
    raw = open(chat, encoding="utf-8").read().splitlines()

    # Fold a copy and keep only questions whose answering entry is hidden.
    tmp = tempfile.mkdtemp(prefix="mf-recall-gen-")
    try:
        copy = os.path.join(tmp, name)
        shutil.copyfile(chat, copy)
        run([mf, "compact", copy] + flags)
        folded = folded_entries(mf, copy)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    qs = []
    facts = json.load(open(facts_path, encoding="utf-8"))
    by_kind = {k: [] for k in KIND_OF_CLASS.values()}
    for fct in facts:
        kind = KIND_OF_CLASS.get(fct["class"])
        if not kind or fct.get("correctedTurn") or not fct.get("subject"):
            continue
        needle = json.dumps(fct["value"], ensure_ascii=False)[1:-1]
        where = [i + 1 for i, l in enumerate(raw) if needle in l]
        if len(where) != 1:  # unique in the chat: one answering entry
            continue
        line = where[0]
        if line not in folded or fct["value"].lower() not in folded[line].lower():
            continue
        # The entry must say what the value is of: a path planted as bare `read_file` arguments
        # names no subject, so no question about the subject can be answered from it.
        if not all(w.lower() in folded[line].lower() for w in fct["subject"].split()):
            continue
        subj = fct["subject"]
        by_kind[kind].append({"question": f"What is the {subj}?", "kind": kind,
                              "answer": fct["value"], "line": line})
    for kind, cands in by_kind.items():
        rng.shuffle(cands)
        qs += sorted(cands[:PER_KIND], key=lambda q: q["line"])
    qs += [d for d in decisions if d["line"] in folded and d["answer"].lower() in folded[d["line"]].lower()]
    os.makedirs(os.path.join(HERE, "questions"), exist_ok=True)
    with open(os.path.join(HERE, "questions", name), "w", encoding="utf-8") as f:
        for q in qs:
            f.write(json.dumps(dict(file=name, **q), ensure_ascii=False) + "\n")
    dropped = len(decisions) - sum(q["kind"] == "decision" for q in qs)
    counts = ", ".join("%s %d" % (k, sum(q["kind"] == k for q in qs)) for k in ["identifier", "number", "path", "decision"])
    note = "; %d decisions not folded, left out" % dropped if dropped else ""
    print("%s: %d lines, %d bytes, %d questions (%s)%s" % (name, len(raw), os.path.getsize(chat), len(qs), counts, note),
          file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--testgen", default=os.environ.get("TESTGEN_BIN", "testgen"))
    ap.add_argument("--mf", default=os.environ.get("MF_BIN", "mf"))
    ap.add_argument("--seeds", default="1,2,3")
    a = ap.parse_args()
    tsv = read_tsv(os.path.join(HERE, "sessions.tsv"))
    for s in a.seeds.split(","):
        name = f"chat-{TURNS}-seed{s}.jsonl"
        make(int(s), a.testgen, a.mf, tsv[name])


if __name__ == "__main__":
    main()
