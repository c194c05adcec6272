#!/usr/bin/env bash
# scripts/agents/mask.sh - by hand: do the real agents resume with mf's stubs? (issue 28, point 3)
#
# Usage:  [MF_BIN=target/debug/mf] [MF_CORPUS=../shared/corpus] scripts/agents/mask.sh [FILE...]
#
# For each session (the project's fixtures below, a few corpus sessions when MF_CORPUS is set, or
# the FILEs given), on copies only:
#   - records what the agent sends to its model for the original (check-agents.sh --full);
#   - runs `mf compact --strategy mask --force` (again with `--keep-tool-results 1 --recent 1`
#     when the defaults mask nothing) and records the agent's request again;
#   - runs `mf expand FILE STUB --restore --force` for every stub, and records it a third time;
#   - asserts: after the mask the agent sends as many messages as before, every message that
#     changed carries mf's stub text (`[tool result hidden by mf: …`), the stubs appear as many
#     times as mf wrote stubs and the request is shorter; after the restores it sends exactly
#     what it sent for the original.
# pi is run as pi 1.6 (`@earendil-works/pi-coding-agent`, which reads the `context_edit` entries
# mf shows a stub with); PI_PKG_DIR overrides it. The agents are those run.sh installs into
# ${MF_AGENTS_DIR:-$HOME/.cache/mf-agents}. Prints one PASS/FAIL/SKIP line per file.
# Exit status: 0 when every line is PASS or SKIP, 1 otherwise.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
export MF_AGENTS_DIR="${MF_AGENTS_DIR:-$HOME/.cache/mf-agents}"
export PI_PKG_DIR="${PI_PKG_DIR:-$MF_AGENTS_DIR/node_modules/@earendil-works/pi-coding-agent}"
MF_BIN="${MF_BIN:-$ROOT/target/debug/mf}"
[ -x "$MF_BIN" ] || { echo "no mf at $MF_BIN (cargo build, or set MF_BIN)" >&2; exit 1; }

cases=()
if [ $# -gt 0 ]; then
  cases=("$@")
else
  for f in claude-session claude-2.1.332-multiturn codex-0.171-exec-tools codex-0.171.0-ids \
           pi-1.6.0-ids pi-0.73.1-ids pi-session-v3; do
    cases+=("$ROOT/fixtures/$f.jsonl")
  done
  if [ -n "${MF_CORPUS:-}" ]; then
    for f in claude-code/cc-2.0.76-thinking-tools-233l.jsonl claude-code/cc-2.1.38-tool-heavy-queue-ops.jsonl \
             codex/codex-0.40.0-vscode-shell-base64-image.jsonl; do
      cases+=("$MF_CORPUS/$f")
    done
  fi
fi

W="$(mktemp -d /tmp/mf-agents-mask.XXXXXX)"
trap 'rm -rf "$W"' EXIT
pass=0; fail=0; skip=0
for src in "${cases[@]}"; do
  name="$(basename "$src")"
  d="$W/${name%.jsonl}"; mkdir -p "$d"
  cp "$src" "$d/orig.jsonl"; cp "$src" "$d/$name"; chmod u+w "$d/orig.jsonl" "$d/$name"
  agent="$("$MF_BIN" explain "$d/$name" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["format"])')"
  case "$agent" in claude|codex|pi) ;; *) echo "FAIL  ?      $name: not an agent session ($agent)"; fail=$((fail+1)); continue;; esac
  ctx() { "$HERE/check-agents.sh" --full "$agent" "$1" > "$2" 2> "$2.err"; }
  ctx "$d/orig.jsonl" "$d/base.json" || { echo "FAIL  $agent $name: the agent did not load the original"; fail=$((fail+1)); continue; }
  said() { python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); print(r["action"])' "$1" 2>/dev/null || echo "error: $(head -c 300 "$2")"; }
  "$MF_BIN" compact "$d/$name" --strategy mask --force --json > "$d/rec.json" 2> "$d/rec.err"
  if [ "$(said "$d/rec.json" "$d/rec.err")" = skipped ]; then
    "$MF_BIN" compact "$d/$name" --strategy mask --keep-tool-results 1 --recent 1 --force --json > "$d/rec.json" 2> "$d/rec.err"
  fi
  action="$(said "$d/rec.json" "$d/rec.err")"
  case "$action" in
    masked) ;;
    skipped) echo "SKIP  $agent $name: nothing to mask"; skip=$((skip+1)); continue;;
    *) echo "FAIL  $agent $name: mf compact: $action"; fail=$((fail+1)); continue;;
  esac
  ctx "$d/$name" "$d/masked.json" || { echo "FAIL  $agent $name: the agent did not load the masked session: $(head -c 300 "$d/masked.json.err")"; fail=$((fail+1)); continue; }
  ok=1
  for id in $(python3 -c 'import json,sys; print(" ".join(s["id"] for s in json.loads(open(sys.argv[1]).readline())["summaries"]))' "$d/rec.json"); do
    "$MF_BIN" expand "$d/$name" "$id" --restore --force > /dev/null 2> "$d/restore.err" || { ok=0; echo "FAIL  $agent $name: mf expand --restore: $(head -c 300 "$d/restore.err")"; }
  done
  [ "$ok" = 1 ] || { fail=$((fail+1)); continue; }
  ctx "$d/$name" "$d/restored.json" || { echo "FAIL  $agent $name: the agent did not load the restored session"; fail=$((fail+1)); continue; }
  if python3 - "$d/rec.json" "$d/base.json" "$d/masked.json" "$d/restored.json" > "$d/judge.out" <<'EOF'
import json, sys
rec, base, masked, restored = (json.loads(open(p).read().split("\n", 1)[0]) if i == 0 else json.load(open(p))
                               for i, p in enumerate(sys.argv[1:]))
STUB = "[tool result hidden by mf:"
stubs = len(rec["summaries"])
bm, mm, rm = base["messages"], masked["messages"], restored["messages"]
# The agent's own context, which names its temp home (Codex's developer messages), differs from
# run to run: compared by role only.
def own(m):
    return m.get("role") == "developer"
def body(ms):
    return [{"role": m.get("role")} if own(m) else m for m in ms]
def fail(why):
    print(why); sys.exit(1)
if len(mm) != len(bm):
    fail(f"after mask the agent sends {len(mm)} messages, {len(bm)} before")
seen = sum(m.get("text", "").count(STUB) for m in mm)
if sum(m.get("text", "").count(STUB) for m in bm):
    fail("the original already holds stub text")
if seen != stubs:
    fail(f"{stubs} stubs written, {seen} in what the agent sends")
for b, m in zip(bm, mm):
    if b != m and not own(m) and STUB not in m.get("text", ""):
        fail(f"message {m['i']} changed without a stub: {m.get('text', '')[:200]!r}")
def size(ms):
    return sum(m.get("len", 0) for m in ms if not own(m))
if size(mm) >= size(bm):
    fail("the request did not get shorter")
if body(rm) != body(bm):
    fail("after restore the agent does not send what it sent for the original")
print(f"{stubs} stubs sent in place of their results; {size(bm)} -> {size(mm)} characters "
      "(the agent's own context aside); restored exactly")
EOF
  then
    echo "PASS  $agent $name: $(cat "$d/judge.out")"; pass=$((pass+1))
  else
    echo "FAIL  $agent $name: $(cat "$d/judge.out")"; fail=$((fail+1))
  fi
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
