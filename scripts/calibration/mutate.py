"""One-claim mutations of a real summary, for the audit's calibration (cases.py).

mutations(summary, lines) -> [(suffix, text)], deterministic. `lines` are the JSONL lines of the
span the summary stands for (Claude Code or pi). Each mutation changes one claim so that the
summary says what the span does not, while every word it uses still occurs in the span:
  m-figure-K  a figure next to its noun (`397 tests`, `line 152`) gets another figure of the span,
              one no sentence of the span says next to that noun (up to eight per summary);
  m-verb      `Read X` -> `Created X`, where the agent never wrote or edited X;
  m-path      a path the summary says was created/modified/updated/added/edited gets a path the
              agent only read (a read tool's argument, never written, edited or named by a shell
              command);
  m-status-K  a `<subject> passed/failed/passing/failing/pass/fail` flipped (the first two);
  m-stale     where the span's user states a correction (`X instead of Y`, `changed from Y to X`,
              `X, not Y`) and the summary states X: X replaced by Y.
"""
import json
import re

NUM = re.compile(r"(?<![\w.$/#-])(\d{2,}(?:,\d{3})*)(?![\w.,/-]*\w)\s+([A-Za-z]{3,})")
# A noun, then its figure: `port 9090`, `timeout: 30`.
NUM_AFTER = re.compile(r"\b([A-Za-z]{3,}):?\s+(\d{2,}(?:,\d{3})*)(?![\w.,/-]*\w)")
FLIP = {
    "passed": "failed", "failed": "passed", "passing": "failing", "failing": "passing",
    "passes": "fails", "fails": "passes", "pass": "fail", "fail": "pass",
}
STATUS = re.compile(r"\b(tests?|suite|build|checks?|specs?)\s+(?:are\s+|is\s+|all\s+)?(" +
                    "|".join(sorted(FLIP, key=len, reverse=True)) + r")\b", re.I)
CHANGE = re.compile(r"\b(Created|Modified|Updated|Edited|Added|Wrote|Rewrote)\s+`?([\w./~-]+\.[A-Za-z]{1,5})`?"
                    r"|\b(?:created|modified|updated|edited|added)\s+\(`([\w./~-]+\.[A-Za-z]{1,5})`\)")


# Bookkeeping a model never reads: its figures are not the span's.
META = {"usage", "cost", "timestamp", "id", "parentId", "uuid", "parentUuid", "requestId",
        "signature", "cwd", "sessionId", "version", "model", "provider", "api", "stopReason",
        "leafUuid", "logicalParentUuid", "gitBranch", "userType", "tokensBefore", "details"}


def strings(o):
    if isinstance(o, str):
        yield o
    elif isinstance(o, dict):
        for k, v in o.items():
            if k not in META:
                yield from strings(v)
    elif isinstance(o, list):
        for v in o:
            yield from strings(v)


def span_of(lines):
    rows = []
    for l in lines:
        try:
            rows.append(json.loads(l))
        except ValueError:
            pass
    return rows


def calls(rows):
    """(tool name, arguments) of every tool call, Claude Code and pi."""
    for o in rows:
        msg = o.get("message") if isinstance(o.get("message"), dict) else None
        content = (msg or {}).get("content")
        if not isinstance(content, list):
            continue
        for c in content:
            if not isinstance(c, dict):
                continue
            if c.get("type") == "tool_use":
                yield c.get("name", ""), c.get("input") or {}
            elif c.get("type") == "toolCall":
                yield c.get("name", ""), c.get("arguments") or {}


def sentences(text):
    return [s for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]


def figure_swaps(summary, text, limit=8):
    span_numbers = {}
    for m in re.finditer(r"(?<![\w.$/#-])(\d{2,})(?![\w])", text):
        span_numbers[m.group(1)] = span_numbers.get(m.group(1), 0) + 1
    sents = [s.lower() for s in sentences(text)]
    out, used = [], set()
    found = [(m.start(1), m.end(1), m.group(1), m.group(2)) for m in NUM.finditer(summary)]
    found += [(m.start(2), m.end(2), m.group(2), m.group(1)) for m in NUM_AFTER.finditer(summary)]
    skip = {"the", "and", "with", "from", "for", "all", "are", "was", "were", "has", "have", "and", "see", "step"}
    for start, end, n, word in sorted(found):
        word = word.lower()
        if word in skip:
            continue
        if n in used or len(out) >= limit:
            continue
        stem = word[:4]
        near = [s for s in sents if stem in s]
        cands = sorted(
            (k for k in span_numbers
             if k != n.replace(",", "") and k not in summary
             and not (len(k) == 4 and 1990 <= int(k) <= 2100)
             and not any(re.search(r"(?<!\d)" + k + r"(?!\d)", s) for s in near)),
            key=lambda k: (abs(len(k) - len(n)), -span_numbers[k], k),
        )
        if not cands:
            continue
        used.add(n)
        mutated = summary[:start] + cands[0] + summary[end:]
        out.append((f"m-figure-{len(out) + 1}", mutated))
    return out


def path_swap(summary, rows):
    read, changed, named = [], set(), ""
    cwd = next((o.get("cwd") for o in rows if isinstance(o.get("cwd"), str)), "") or ""
    for name, args in calls(rows):
        n = name.lower()
        path = args.get("file_path") or args.get("path") or ""
        cmd = args.get("command") or ""
        if isinstance(cmd, str):
            cmd = re.sub(r"\d?>&\d|\d?>\s*/dev/null", "", cmd)
        if isinstance(cmd, str) and re.search(r">|\bsed -i|\bmv\b|\bcp\b|\brm\b|\btee\b|\btouch\b|\bgit (checkout|restore|apply)", cmd):
            named += cmd + "\n"
        if not isinstance(path, str) or not path:
            continue
        if n in ("read", "view", "cat"):
            read.append(path)
        elif any(w in n for w in ("write", "edit", "create", "patch")):
            changed.add(path)
    only_read = []
    for p in read:
        rel = p[len(cwd) + 1:] if cwd and p.startswith(cwd + "/") else p
        base = rel.rsplit("/", 1)[-1]
        if p in changed or any(c.endswith(base) for c in changed) or base in named:
            continue
        if rel not in only_read:
            only_read.append(rel)
    out = []
    for m in CHANGE.finditer(summary):
        g = 2 if m.group(2) else 3
        target = m.group(g)
        for rel in only_read:
            if rel.rsplit("/", 1)[-1] != target.rsplit("/", 1)[-1] and rel not in summary:
                out.append((f"m-path-{len(out) + 1}", summary[: m.start(g)] + rel + summary[m.end(g):]))
                only_read.remove(rel)
                break
        if len(out) == 2:
            break
    return out


READ_VERB = re.compile(r"\b(Read|Reviewed|Inspected|Examined|Viewed)\s+(?:the\s+)?`?([\w./~-]+\.[A-Za-z]{1,5})`?")


def verb_swap(summary, rows):
    """`Read X` -> `Created X`, where the agent only read X."""
    changed = set()
    for name, args in calls(rows):
        path = args.get("file_path") or args.get("path") or ""
        if isinstance(path, str) and any(w in name.lower() for w in ("write", "edit", "create", "patch")):
            changed.add(path.rsplit("/", 1)[-1])
    for m in READ_VERB.finditer(summary):
        if m.group(2).rsplit("/", 1)[-1] not in changed:
            return [("m-verb", summary[: m.start(1)] + "Created" + summary[m.end(1):])]
    return []


def status_flip(summary, limit=2):
    out = []
    for m in list(STATUS.finditer(summary))[:limit]:
        w = m.group(2)
        flipped = FLIP[w.lower()]
        if w[0].isupper():
            flipped = flipped.capitalize()
        out.append((f"m-status-{len(out) + 1}", summary[: m.start(2)] + flipped + summary[m.end(2):]))
    return out


CORRECTION = [
    re.compile(r"\b(\S+) instead of (\S+)", re.I),
    re.compile(r"changed from (\S+) to (\S+)", re.I),
    re.compile(r"\b(\S+), not (\S+)", re.I),
]


def stale(summary, rows):
    for o in rows:
        msg = o.get("message") if isinstance(o.get("message"), dict) else o
        if (msg or {}).get("role") != "user":
            continue
        for t in strings((msg or {}).get("content")):
            for k, rx in enumerate(CORRECTION):
                for m in rx.finditer(t):
                    a, b = (m.group(2), m.group(1)) if k == 1 else (m.group(1), m.group(2))
                    new, old = a.strip("`'\".,;:()"), b.strip("`'\".,;:()")
                    if (re.search(r"\d", new) and re.search(r"\d", old) and new != old
                            and re.search(r"(?<![\w.])" + re.escape(new) + r"(?![\w])", summary)
                            and old not in summary):
                        return [("m-stale", re.sub(r"(?<![\w.])" + re.escape(new) + r"(?![\w])", old, summary, count=1))]
    return []


def mutations(summary, lines):
    rows = span_of(lines)
    text = "\n".join(s for o in rows for s in strings(o))
    return figure_swaps(summary, text) + path_swap(summary, rows) + verb_swap(summary, rows) + status_flip(summary) + stale(summary, rows)
