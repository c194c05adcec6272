#!/usr/bin/env python3
"""Retrieval benchmark for `mf search` (issue 23, recall on demand), and the probe-QA figures.

For every question file (bench/recall/questions/*.jsonl for the real sessions of the corpus,
bench/recall/gen/questions/*.jsonl for generated chats):
  1. copy the session to a temp dir and fold it with the flags recorded in sessions.tsv
     (real) or gen/sessions.tsv (generated), always with the extractive model (no network);
  2. for each question run `$MF_BIN search COPY "<question>" --json --limit 3`; the question is
     *found* when one of the top-3 hits is the answering entry (its `line`, or one of the
     question's `alt_lines`, is the hit's `line` or one of its `matches[].line`);
  3. probe QA: does `answer` occur (case-insensitive) in (a) the recall view after the fold
     (`mf recall COPY --format text`), (b) that view plus the text of the top-3 hits?

usage: python3 bench/recall/run.py [--mf PATH] [--corpus DIR] [--json] [--only real|gen]
                                   [--limit N] [--check] [--misses]
  MF_BIN (or --mf) names the mf binary (default: mf on PATH); the corpus defaults to
  ../shared/corpus relative to the repository root, or $MF_CORPUS.
  --check   also verify each question: its answering entry is folded (shown by `mf expand` of a
            standing summary) and contains `answer`; problems are printed and exit status is 1.
  --check-only  only that verification (works with an mf without `search`).
  --misses  print every miss (question, expected line, what ranked instead).
Python 3 standard library only.
"""

import argparse
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
KINDS = ["identifier", "path", "number", "decision"]


def run(cmd, check=True):
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, MF_NO_PROGRESS="1"))
    if check and p.returncode != 0:
        raise RuntimeError(f"{' '.join(shlex.quote(c) for c in cmd)} exited {p.returncode}: {p.stderr.strip()[:500]}")
    return p


def read_tsv(path):
    flags = {}
    if not os.path.exists(path):
        return flags
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f):
            line = line.rstrip("\n")
            if i == 0 or not line.strip():
                continue
            name, fl = line.split("\t", 1)
            flags[name] = shlex.split(fl)
    return flags


def load_questions(path):
    qs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                qs.append(json.loads(line))
    return qs


HDR = re.compile(r"^── turn (\d+) · (\S+) · (\S+) ──$")


def id_lines(path):
    """{entry id: 1-based line} for files whose entries carry their own `id` (chat format)."""
    out = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if isinstance(d, dict) and isinstance(d.get("id"), str):
                out.setdefault(d["id"], n)
    return out


def folded_entries(mf, copy):
    """{line: text} of the entries hidden by the standing summaries (via `mf expand --format text`).

    Entry ids are `line-N` for agent sessions (N = the entry's first physical line) and the
    message's own `id` for chat files (mapped to its line here)."""
    ex = json.loads(run([mf, "explain", copy, "--json"]).stdout)
    out, ids = {}, None
    for s in ex.get("summaries", []):
        if s.get("state") != "standing":
            continue
        txt = run([mf, "expand", copy, s["id"], "--format", "text"]).stdout
        cur = None
        for ln in txt.splitlines(keepends=True):
            m = HDR.match(ln.rstrip("\n"))
            if m:
                eid = m[3]
                if re.fullmatch(r"line-\d+", eid):
                    cur = int(eid[5:])
                else:
                    ids = ids if ids is not None else id_lines(copy)
                    cur = ids.get(eid)
                if cur is not None:
                    out.setdefault(cur, "")
            elif cur is not None:
                out[cur] += ln
    return out


def search(mf, copy, question, limit):
    p = run([mf, "search", copy, question, "--json", "--limit", str(limit)], check=False)
    if p.returncode not in (0, 1):
        raise RuntimeError(f"mf search exited {p.returncode}: {p.stderr.strip()[:500]}")
    hits = []
    for line in p.stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            hits.append(json.loads(line))
    return hits


def hit_lines(h):
    ls = {h.get("line")}
    for m in h.get("matches") or []:
        if isinstance(m, dict) and m.get("line") is not None:
            ls.add(m["line"])
    return ls


def hit_text(h):
    parts = [h.get("text") or ""]
    for m in h.get("matches") or []:
        if isinstance(m, dict):
            parts.append(m.get("text") or "")
    return "\n".join(parts)


def bench_set(label, qdir, tsv, src_dir, mf, limit, check, tmp, check_only=False):
    flags = read_tsv(tsv)
    results, problems = [], []
    for qf in sorted(glob.glob(os.path.join(qdir, "*.jsonl"))):
        qs = load_questions(qf)
        if not qs:
            continue
        rel = qs[0]["file"]
        src = os.path.join(src_dir, rel)
        if rel not in flags:
            problems.append(f"{rel}: no compact flags in {tsv}")
            continue
        copy = os.path.join(tmp, label + "__" + rel.replace("/", "__"))
        shutil.copyfile(src, copy)
        os.chmod(copy, 0o644)
        run([mf, "compact", copy] + flags[rel])
        view = run([mf, "recall", copy, "--format", "text"]).stdout
        folded = folded_entries(mf, copy) if check else None
        for q in qs:
            want = {q["line"]} | set(q.get("alt_lines") or [])
            if check:
                for ln in sorted(want):
                    if ln not in folded:
                        problems.append(f"{rel}:{ln}: not folded ({q['question']})")
                    elif q["answer"].lower() not in folded[ln].lower():
                        problems.append(f"{rel}:{ln}: answer {q['answer']!r} not in the entry")
            if check_only:
                continue
            hits = search(mf, copy, q["question"], limit)
            rank = next((i + 1 for i, h in enumerate(hits) if hit_lines(h) & want), None)
            ans = q["answer"].lower()
            in_view = ans in view.lower()
            in_hits = any(ans in hit_text(h).lower() for h in hits)
            # The same entry looked for by its exact term (the answer as written: an identifier, a
            # path, a number; a phrase with spaces quoted), as an agent that read a summary
            # naming it would search.
            exact_rank = None
            if q["kind"] != "decision":
                term = q["answer"] if not any(c.isspace() for c in q["answer"]) else f'"{q["answer"]}"'
                ehits = search(mf, copy, term, limit)
                exact_rank = next((i + 1 for i, h in enumerate(ehits) if hit_lines(h) & want), 0)
            results.append({
                "exact_rank": exact_rank,
                "set": label, "file": rel, "kind": q["kind"], "question": q["question"],
                "answer": q["answer"], "line": q["line"], "alt_lines": q.get("alt_lines") or [],
                "found": rank is not None, "rank": rank,
                "answer_in_hits": in_hits, "in_recall": in_view, "in_recall_or_hits": in_view or in_hits,
                "top": [{"line": h.get("line"), "id": h.get("id"), "role": h.get("role"),
                         "turn": h.get("turn"), "score": h.get("score"),
                         "snippet": " ".join((h.get("text") or "").split())[:160]} for h in hits],
            })
    return results, problems


def share(rs):
    return (sum(r["found"] for r in rs), len(rs))


def fmt(c):
    n, d = c
    return f"{n}/{d} {100 * n / d:3.0f}%" if d else "-"


def table(results, label):
    lines = [f"## {label}: answering entry found in the top 3, by kind"
             " (ans-in-top3: the answer string occurs in any top-3 hit, whatever the entry)"]
    head = f"{'session':62} " + " ".join(f"{k:>12}" for k in KINDS) + f" {'all':>12}" + f" {'ans-in-top3':>12}"
    lines.append(head)
    files = sorted({r["file"] for r in results})
    for f in files + ["OVERALL"]:
        rs = results if f == "OVERALL" else [r for r in results if r["file"] == f]
        row = f"{f[-62:]:62} " + " ".join(f"{fmt(share([r for r in rs if r['kind'] == k])):>12}" for k in KINDS)
        lenient = (sum(r["answer_in_hits"] for r in rs), len(rs))
        lines.append(row + f" {fmt(share(rs)):>12} {fmt(lenient):>12}")
    ex = [r for r in results if r.get("exact_rank") is not None]
    if ex:
        cells = []
        for k in [k for k in KINDS if k != "decision"] + ["all"]:
            rs = [r for r in ex if k == "all" or r["kind"] == k]
            cells.append(f"{k} {fmt((sum(1 for r in rs if r['exact_rank']), len(rs)))}")
        lines.append("exact-term queries (the answer as written), found in the top 3: " + "; ".join(cells))
    n = len(results)
    a = sum(r["in_recall"] for r in results)
    b = sum(r["in_recall_or_hits"] for r in results)
    lines.append(f"probe QA ({n} questions): answered by recall {a}/{n}; recall + one search {b}/{n}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mf", default=os.environ.get("MF_BIN", "mf"))
    ap.add_argument("--corpus", default=os.environ.get("MF_CORPUS", os.path.join(ROOT, "..", "shared", "corpus")))
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--only", choices=["real", "gen"])
    ap.add_argument("--limit", type=int, default=3)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--check-only", action="store_true")
    ap.add_argument("--misses", action="store_true")
    a = ap.parse_args()
    mf = shutil.which(a.mf) or a.mf
    tmp = tempfile.mkdtemp(prefix="mf-recall-bench-")
    os.environ.setdefault("MF_CACHE_DIR", os.path.join(tmp, "cache"))
    all_results, problems = [], []
    try:
        sets = []
        if a.only in (None, "real"):
            sets.append(("real", os.path.join(HERE, "questions"), os.path.join(HERE, "sessions.tsv"), a.corpus))
        if a.only in (None, "gen"):
            gen = os.path.join(HERE, "gen")
            sets.append(("gen", os.path.join(gen, "questions"), os.path.join(gen, "sessions.tsv"), gen))
        for label, qdir, tsv, src in sets:
            rs, ps = bench_set(label, qdir, tsv, src, mf, a.limit, a.check or a.check_only, tmp, a.check_only)
            all_results += rs
            problems += ps
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if a.check_only:
        pass
    elif a.json:
        for r in all_results:
            print(json.dumps(r, ensure_ascii=False))
    else:
        ver = run([mf, "--version"], check=False).stdout.strip()
        print(f"mf: {mf} ({ver}); top {a.limit}")
        for label, name in (("real", "real sessions"), ("gen", "generated chats")):
            rs = [r for r in all_results if r["set"] == label]
            if rs:
                print()
                print(table(rs, name))
        if a.misses:
            print("\n## misses")
            for r in all_results:
                if r["found"]:
                    continue
                print(f"- [{r['set']}] {r['file']} line {r['line']} ({r['kind']}): {r['question']}  [answer {r['answer']!r}]")
                for i, t in enumerate(r["top"], 1):
                    print(f"    {i}. line {t['line']} {t['role']} turn {t['turn']} score {t['score']}: {t['snippet']}")
                if not r["top"]:
                    print("    (no hits)")
    for p in problems:
        print(f"problem: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
