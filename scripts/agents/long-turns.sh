#!/usr/bin/env bash
# scripts/agents/long-turns.sh - by hand: do the real agents resume a long turn mf folded inside?
#
# Usage:  scripts/agents/long-turns.sh [SESSION:AGENT...]
#
# Without arguments: single-prompt sessions of 45 tool calls that `testgen long` writes in Claude
# Code's, Codex's and pi's own formats. With arguments: those session files (e.g. ones the real
# agents wrote), each with its agent (claude, codex or pi). On a copy of each, the agent's context
# is recorded (check-agents.sh --full) for the original, after `mf compact --model extractive
# --min-retention 0 --force` (which folds inside the one long turn) and after `mf expand --restore`;
# harness/long_turn_check.py then asserts that the agent sends mf's summary first, the prompt
# verbatim, the newest tool units identical to the original's end, every call with its result and
# no folded call, and after restore exactly the original. One PASS/FAIL line per session.
# Needs what check-agents.sh needs, and cargo (to build mf and testgen) unless MF_BIN/TESTGEN_BIN.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
export MF_AGENTS_DIR="${MF_AGENTS_DIR:-$HOME/.cache/mf-agents}"
if [ -z "${MF_BIN:-}" ] || [ -z "${TESTGEN_BIN:-}" ]; then
  (cd "$ROOT" && cargo build -q --bin mf -p testgen) || { echo "cargo build failed" >&2; exit 1; }
fi
MF_BIN="${MF_BIN:-$ROOT/target/debug/mf}"; TESTGEN_BIN="${TESTGEN_BIN:-$ROOT/target/debug/testgen}"
W="$(mktemp -d /tmp/mf-long-turns.XXXXXX)"; trap 'rm -rf "$W"' EXIT
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
  for a in claude codex pi; do
    "$TESTGEN_BIN" long --format "$a" --calls 45 --seed 3 --out "$W/long-$a.jsonl" 2>/dev/null
    cases+=("$W/long-$a.jsonl:$a")
  done
fi
fail=0
for c in "${cases[@]}"; do
  src="${c%:*}"; agent="${c##*:}"; name="$(basename "$src" .jsonl)"; d="$W/$name"; mkdir -p "$d"
  cp "$src" "$d/s.jsonl"; chmod u+w "$d/s.jsonl"
  # The prompt: the first typed user message of the session.
  python3 - "$d/s.jsonl" "$agent" > "$d/prompt" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    v = json.loads(l)
    if sys.argv[2] == "codex":
        if v.get("type") == "event_msg" and v["payload"].get("type") == "user_message":
            sys.stdout.write(v["payload"]["message"]); break
        continue
    m = v.get("message") or (v if "role" in v else {})
    if m.get("role") == "user" and not (isinstance(m.get("content"), list) and any(b.get("type") == "tool_result" for b in m["content"])):
        c = m["content"]; sys.stdout.write(c if isinstance(c, str) else "".join(b.get("text", "") for b in c)); break
PY
  ctx() { "$HERE/check-agents.sh" --full "$agent" "$1" > "$2" 2>/dev/null; }
  ctx "$d/s.jsonl" "$d/base.json" || { echo "FAIL  $agent $name: the agent did not load the original"; fail=1; continue; }
  "$MF_BIN" compact "$d/s.jsonl" --model extractive --min-retention 0 --force --json > "$d/rec.json" 2> "$d/rec.err"
  ctx "$d/s.jsonl" "$d/after.json" || { echo "FAIL  $agent $name: the agent did not load the compacted session"; fail=1; continue; }
  if ! python3 "$HERE/harness/long_turn_check.py" "$d/base.json" "$d/after.json" "$agent" "$d/prompt" > "$d/check.json"; then
    echo "FAIL  $agent $name: $(cat "$d/check.json") $(head -c 300 "$d/rec.err")"; fail=1; continue
  fi
  for id in $(python3 -c 'import json,sys; print(" ".join(s["id"] for s in json.loads(open(sys.argv[1]).readline())["summaries"] if s["outcome"].startswith("written")))' "$d/rec.json"); do
    "$MF_BIN" expand "$d/s.jsonl" "$id" --restore --force > /dev/null 2>&1 || { echo "FAIL  $agent $name: restore $id"; fail=1; }
  done
  ctx "$d/s.jsonl" "$d/restored.json"
  if python3 - "$d/base.json" "$d/restored.json" <<'PY'
import json, sys
a, b = (json.load(open(p))["messages"] for p in sys.argv[1:3])
sig = lambda m: (m["role"], m["text"], tuple(m.get("tool_calls", [])), tuple(m.get("tool_results", [])), m.get("tool_result_for"))
# The agent's own resume additions at the end (reminders, environment, the prompt) may differ.
cut = lambda ms: [sig(m) for m in ms if m["role"] not in ("system", "developer")][:-2]
sys.exit(0 if cut(a) == cut(b) else 1)
PY
  then echo "PASS  $agent $name: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%d messages -> %d, %d of %d calls folded; restored" % (d["n_before"], d["n_after"], d["folded_calls"], d["calls_before"]))' "$d/check.json")"
  else echo "FAIL  $agent $name: after restore the agent does not send the original"; fail=1; fi
done
exit $fail
