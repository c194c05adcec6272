#!/usr/bin/env python3
"""kept.py - fold agent sessions with the built-in summarizer and say what the summary kept.

  kept.py [--mf BIN] [--markdown] FILE...

For each session FILE (Claude Code, Codex or pi), on a copy in a temp dir: `mf explain` (what it
would do), then `mf compact --model extractive --json` with the default flags. Prints per file:
the session's tokens, the verdict, the audit's retention, the tool calls of the folded span whose
target the summary carries (a shell command's first line, the path read / written / edited, the
URL, the pattern; a pattern line `… for {n} = 1–100` counts for every call it stands for) out of
the calls made, the user's identifiers it carries out of those the user stated (the ids the
sessions of fresh-ids.sh plant, when the span states them; else the audit's user items), and
whether any reasoning (fakeapi.py's THINK text: `scratch/hunch-…`, `HUNCH_…`) was copied.
"""
import argparse, json, os, re, shutil, subprocess, sys, tempfile

# What fresh-ids.sh's prompts state (each kept verbatim or it counts as lost).
PLANTED = ["PROJ-4821", "https://api.example.com/v2/orders", "config/checkout.yaml", "key_live_7Hq2Lx9Qe",
           "45s", "v2.3.1", "https://staging.example.com/v2/orders",
           "OPS-1193", "https://payments.internal.example.com/api/v1/refunds", "deploy/payments.toml",
           "key_test_4Rt8Zm1", "1.14.2"]
REASONING = re.compile(r"scratch/hunch-|HUNCH_\d+_LIMIT")
TARGET_KEYS = ["cmd", "command", "file_path", "path", "notebook_path", "url", "pattern", "query"]


def collapse(s):
    return " ".join(s.split())


def calls_of(obj):
    """The tool calls a session line makes: [(name, args dict or raw str)]."""
    out = []
    if obj.get("type") == "assistant":  # Claude Code
        for b in (obj.get("message") or {}).get("content") or []:
            if isinstance(b, dict) and b.get("type") == "tool_use":
                out.append((b.get("name"), b.get("input") or {}))
    elif obj.get("type") == "response_item":  # Codex
        p = obj.get("payload") or {}
        if p.get("type") == "function_call":
            try:
                a = json.loads(p.get("arguments") or "{}")
            except ValueError:
                a = p.get("arguments")
            out.append((p.get("name"), a))
        elif p.get("type") == "custom_tool_call":
            out.append((p.get("name"), p.get("input") or ""))
        elif p.get("type") == "local_shell_call":
            out.append(("shell", (p.get("action") or {})))
    elif obj.get("type") == "message":  # pi
        m = obj.get("message") or {}
        if m.get("role") == "assistant":
            for b in m.get("content") or []:
                if isinstance(b, dict) and b.get("type") == "toolCall":
                    out.append((b.get("name"), b.get("arguments") or {}))
    return out


def targets(args):
    """What a call acts on, as the summary should carry it."""
    if isinstance(args, str):
        heads = [l.strip()[4:] for l in args.splitlines() if re.match(r"\s*\*\*\* (Add|Update|Delete) File: ", l)]
        return heads or [collapse(args)[:80]]
    out = []
    for k in TARGET_KEYS:
        v = args.get(k)
        if isinstance(v, list):
            v = " ".join(map(str, v))
        if isinstance(v, str) and v.strip():
            out.append(collapse(v.strip().splitlines()[0]) if k in ("cmd", "command") else collapse(v))
    for k in ("input", "patch"):
        if isinstance(args.get(k), str):
            out += targets(args[k]) if "*** Begin Patch" in args[k] else []
    return out


def carried(summary, t):
    if t in summary:
        return True
    for v in sorted(set(re.findall(r"\d+", t))):
        tmpl = re.sub(r"(?<!\d)" + v + r"(?!\d)", "{n}", t)
        for line in summary.splitlines():
            at = line.find(tmpl)
            sep = line.find(" for {n} = ", at + len(tmpl)) if at >= 0 else -1
            if sep < 0:
                continue
            rest = line[sep + len(" for {n} = "):]
            m = re.match(r"[0-9–, ]+", rest)
            for part in (m.group(0) if m else "").split(","):
                part = part.strip()
                if "–" in part:
                    a, b = part.split("–")[:2]
                    if a.isdigit() and b.isdigit() and int(a) <= int(v) <= int(b):
                        return True
                elif part == v:
                    return True
    return False


def summary_texts(path, before_lines):
    out = []
    with open(path) as f:
        for i, l in enumerate(f):
            if i < before_lines or '"mf"' not in l:
                continue
            o = json.loads(l)
            if (o.get("mf") or {}).get("kind") != "summary":
                continue
            s = json.dumps(o, ensure_ascii=False)
            for m in re.finditer(r'"(\[summary of earlier turns(?:[^"\\]|\\.)*)"', s):
                out.append(json.loads('"' + m.group(1) + '"'))
                break
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mf", default=os.environ.get("MF", "target/debug/mf"))
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    rows = []
    for f in a.files:
        tmp = tempfile.mkdtemp()
        try:
            cp = os.path.join(tmp, os.path.basename(f))
            shutil.copy(f, cp)
            n_lines = sum(1 for _ in open(cp))
            ex = subprocess.run([a.mf, "explain", cp], capture_output=True, text=True)
            plan = next((l.strip().split(":", 1)[1].strip() for l in ex.stdout.splitlines() if l.strip().startswith("action:")), "")
            r = subprocess.run([a.mf, "compact", cp, "--model", "extractive", "--json"], capture_output=True, text=True)
            rec = json.loads(r.stdout) if r.stdout.strip().startswith("{") else {}
            action = rec.get("action", "error: " + r.stderr.strip()[:80])
            tokens = (rec.get("before") or {}).get("tokens", "")
            summ = summary_texts(cp, n_lines)
            text = collapse("\n".join(summ)) if summ else ""
            lines_text = "\n".join(summ)
            ret = ""
            user = ""
            if rec.get("summaries"):
                au = rec["summaries"][0].get("audit") or {}
                ret = f"{au.get('retention', 0) * 100:.0f} %"
                us = [s for s in au.get("bySource", []) if s["source"] == "user"]
                user = f"{us[0]['kept']}/{us[0]['found']}" if us else "0/0"
            # Calls and planted ids in the folded span.
            span_lines = set()
            for a_, b_ in (rec.get("span") or {}).get("lines") or []:
                span_lines.update(range(a_, b_ + 1))
            calls, kept_calls, lost = 0, 0, []
            planted_stated, planted_kept = set(), set()
            with open(f) as src:
                for no, l in enumerate(src, 1):
                    if no not in span_lines:
                        continue
                    try:
                        o = json.loads(l)
                    except ValueError:
                        continue
                    for name, args in calls_of(o):
                        ts = targets(args)
                        if not ts:
                            continue
                        calls += 1
                        if all(carried(lines_text, t) or collapse(t) in text for t in ts):
                            kept_calls += 1
                        else:
                            lost.append(f"{name}({ts[0][:60]})")
                    user_text = ""
                    if o.get("type") == "user" or (o.get("type") == "message" and (o.get("message") or {}).get("role") == "user") \
                            or (o.get("type") == "response_item" and (o.get("payload") or {}).get("role") == "user"):
                        user_text = json.dumps(o)
                    for p in PLANTED:
                        if p in user_text:
                            planted_stated.add(p)
                            if p in text:
                                planted_kept.add(p)
            reasoning = "yes" if REASONING.search(text) else "no"
            ids = f"{len(planted_kept)}/{len(planted_stated)}" if planted_stated else "–"
            rows.append([os.path.basename(f), str(tokens), action, ret, f"{kept_calls}/{calls}", ids, user, reasoning,
                         plan[:40], "; ".join(lost[:3])])
        finally:
            shutil.rmtree(tmp)
    head = ["file", "tokens", "verdict", "retention", "calls kept/made", "user ids kept/stated", "audit user items",
            "reasoning copied", "explain", "calls lost"]
    if a.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(x.replace("|", "\\|") for x in r) + " |")
    else:
        for r in [head] + rows:
            print("\t".join(r))


if __name__ == "__main__":
    main()
