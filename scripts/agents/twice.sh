#!/usr/bin/env bash
# scripts/agents/twice.sh - by hand: Claude Code compacting twice in one turn, with mf's hooks.
#
# Usage:  [MF_BIN=/path/to/mf] scripts/agents/twice.sh
#
# The real `claude` (pinned in package.json) runs one `-p` turn against the loopback scripted
# model (harness/fakeapi.py), which answers two of the turn's requests "prompt is too long":
# Claude Code compacts reactively twice in that turn (its hooks run SessionStart(compact), then
# PostCompact, then it writes the compaction's rows). The fake's summaries keep the plan, so the
# turn goes on, and drop the user's words. The session is then resumed with a new prompt.
# Checks: the session holds two compact_boundary rows in one turn; no request of the turn
# carries an mf loss report that names the wrong span; the resumed request carries one report,
# "Claude compacted 2 times", naming the path the user gave (lost by the first compaction).
# Exit 0 when every check passed. Nothing leaves 127.0.0.1; the run is in a temp dir (KEEP=1).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
export MF_AGENTS_DIR="${MF_AGENTS_DIR:-$HOME/.cache/mf-agents}"
if [ -z "${MF_BIN:-}" ]; then
  (cd "$ROOT" && cargo build --release --locked -q) || { echo "cargo build failed" >&2; exit 1; }
  MF_BIN="$ROOT/target/release/mf"
fi
W="$(mktemp -d /tmp/mf-twice.XXXXXX)"
[ "${KEEP:-0}" = 1 ] && echo "kept: $W" >&2 || trap 'python3 "$HERE/harness/agent.py" stop "$W" >/dev/null 2>&1; rm -rf "$W"' EXIT
A="$HERE/harness/agent.py"
python3 "$A" start "$W" --too-long 3,7 --summary-keeps-plan >/dev/null || exit 1
HOME="$W/home" "$MF_BIN" hook install claude-code >/dev/null 2>&1 || { echo "FAIL mf hook install"; exit 1; }
F=$(python3 "$A" new "$W" claude 'TWICE deploy the billing worker from /srv/billing/releases/v2.14 on port 9091 before Friday. PLAN[bash:echo one ;; bash:echo two ;; bash:echo three ;; bash:echo four]') || { echo "FAIL claude run"; exit 1; }
n0=$(ls "$W/rec" | wc -l)
python3 "$A" resume "$W" claude "$F" "NEXT what now" >/dev/null || { echo "FAIL claude resume"; exit 1; }
python3 - "$F" "$W/rec" "$n0" <<'PY'
import json, os, sys
f, rec, n0 = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows = [json.loads(l) for l in open(f)]
bounds = [r for r in rows if r.get("subtype") == "compact_boundary"]
prompts = [r for r in rows if r.get("type") == "user" and isinstance(r.get("message", {}).get("content"), str)
           and not r.get("isCompactSummary")]
files = sorted(os.listdir(rec))
def body(n): return json.dumps(json.load(open(os.path.join(rec, n)))["body"])
ok = True
def check(what, cond):
    global ok
    print(("PASS " if cond else "FAIL ") + what)
    ok = ok and cond
check(f"claude compacted twice in the first turn ({len(bounds)} boundaries before the second prompt)",
      len(bounds) >= 2 and all(rows.index(b) < rows.index(prompts[-1]) for b in bounds[:2]))
turn = [body(n) for n in files[:n0]]
check("no request of the compacting turn carries a report on the wrong span",
      not any("Claude compacted" in b or "salient items" in b for b in turn[:-1] if "NEXT what now" not in b))
last = body(files[-1])
check("the resumed request carries one report on both compactions",
      last.count("Claude compacted 2 times") == 1)
check("the report names what the first compaction lost (the user's path)",
      "/srv/billing/releases/v2.14" in last.split("Claude compacted 2 times", 1)[-1])
sys.exit(0 if ok else 1)
PY
