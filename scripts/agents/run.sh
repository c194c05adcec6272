#!/usr/bin/env bash
# scripts/agents/run.sh - by hand: do the real coding agents honour what mf writes? (issue 7, acceptance 4)
#
# Usage:  MF_CORPUS=../shared/corpus scripts/agents/run.sh [FILE...]
#
# 1. Installs the agents pinned in scripts/agents/package.json (package-lock.json) from npm into
#    ${MF_AGENTS_DIR:-$HOME/.cache/mf-agents} (once; again when the pins change).
# 2. Builds mf (cargo build --release), or uses $MF_BIN.
# 3. For each session (the corpus files listed below, from $MF_CORPUS, a v3 copy of a v1 pi
#    session made by pi's own migration, and the project's fixtures; or the FILEs given), on
#    copies only:
#      - records what the agent sends to its model for the original (check-agents.sh --full);
#      - runs `mf compact --model extractive --min-retention 0 --force` (again with `--trigger 0 --recent 1` when
#        the defaults fold nothing) and records the agent's context again;
#      - runs `mf expand FILE ID --restore --force` for every summary written, and records it
#        a third time;
#      - asserts (harness/judge.py): after compact the agent sees mf's summary first (after
#        only the never-folded preamble, for Codex, and the history of Codex's own compaction,
#        carried), then the original's last messages identical, none of the folded ones, every
#        tool call with its result; after restore exactly the original context.
#    and prints one PASS/FAIL (or SKIP, when mf finds nothing to fold) line per file and agent.
# Exit status: 0 when every line is PASS or SKIP, 1 otherwise.
#
# How each agent is run (check-agents.sh; nothing leaves 127.0.0.1):
#   pi:     pi's own SessionManager.open(copy).buildSessionContext() + convertToLlm, the code pi's
#           agent builds its request with (no network request is made).
#   claude: the real `claude` binary, `claude -p --resume <session id> PROMPT`, HOME in a temp
#           dir with the session under ~/.claude/projects/, ANTHROPIC_BASE_URL at a loopback fake
#           Messages API (harness/fakeapi.py) that records the request claude sends.
#   codex:  the real `codex` binary, `codex exec resume <thread id> PROMPT`, CODEX_HOME in a temp
#           dir with the rollout under sessions/YYYY/MM/DD/, openai_base_url at the same loopback
#           fake (Responses API over HTTP; its websocket upgrade is refused, and codex falls back).
#           What is verified for Codex is the `input` of the /v1/responses request the codex
#           binary sends after resuming the rollout from disk: its own base instructions, the
#           history it rebuilt from the file, the fresh context it appends, the prompt. Whether
#           OpenAI's servers accept a replayed encrypted `compaction` item in a new position is
#           not verified (the fake server does not look).
# Needs node >= 20 with npm, python3, cargo, coreutils timeout.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
export MF_AGENTS_DIR="${MF_AGENTS_DIR:-$HOME/.cache/mf-agents}"
MARK="MF-RESUME-$$-$RANDOM"

# The corpus files checked (those with something mf folds, and one without).
CORPUS_FILES=(
  claude-code/cc-2.0.14-streaming-split-unpaired-tail.jsonl
  claude-code/cc-2.0.64-parallel-writes-small.jsonl
  claude-code/cc-2.0.76-autocompact-222l.jsonl
  claude-code/cc-2.0.76-thinking-tools-233l.jsonl
  claude-code/cc-2.1.4-summary-entries-interrupt.jsonl
  claude-code/cc-2.1.38-tool-heavy-queue-ops.jsonl
  codex/codex-0.40.0-vscode-shell-base64-image.jsonl
  codex/codex-0.104-desktop-compacted-2722l-redacted.jsonl
  pi/pi-v1-large-session-1019l.jsonl
  pi/pi-v1-before-compaction-1003l.jsonl
)
FIXTURES=(claude-session claude-compacted codex-rollout codex-compacted pi-session-v3 pi-session-v1)

# 1. The agents.
mkdir -p "$MF_AGENTS_DIR"
if ! cmp -s "$HERE/package-lock.json" "$MF_AGENTS_DIR/package-lock.json" || [ ! -x "$MF_AGENTS_DIR/node_modules/.bin/claude" ]; then
  echo "installing the pinned agents into $MF_AGENTS_DIR ..." >&2
  cp "$HERE/package.json" "$HERE/package-lock.json" "$MF_AGENTS_DIR/"
  # `npm ci` refuses a lock without every platform's optional package (Qwen Code's clipboard
  # dependency names some that are not published); `npm install` then installs the same pins.
  (cd "$MF_AGENTS_DIR" && { npm ci --no-audit --no-fund --loglevel=error 2>/dev/null \
      || npm install --no-audit --no-fund --loglevel=error; } >&2) || { echo "npm install failed" >&2; exit 1; }
  cp "$HERE/package-lock.json" "$MF_AGENTS_DIR/"
fi
for b in claude codex; do
  [ -x "$MF_AGENTS_DIR/node_modules/.bin/$b" ] || { echo "no $b in $MF_AGENTS_DIR" >&2; exit 1; }
done
echo "agents: $(cd "$MF_AGENTS_DIR" && node -p 'const l=require("./package-lock.json").packages; ["@anthropic-ai/claude-code","@openai/codex","@mariozechner/pi-coding-agent"].map(p=>p+"@"+l["node_modules/"+p].version).join(", ")')" >&2

# 2. mf.
if [ -z "${MF_BIN:-}" ]; then
  (cd "$ROOT" && cargo build --release --locked -q) || { echo "cargo build failed" >&2; exit 1; }
  MF_BIN="$ROOT/target/release/mf"
fi
echo "mf: $("$MF_BIN" --version)" >&2

W="$(mktemp -d /tmp/mf-agents-run.XXXXXX)"
trap 'rm -rf "$W"' EXIT

# 3. The sessions.
cases=()
if [ $# -gt 0 ]; then
  cases=("$@")
else
  if [ -n "${MF_CORPUS:-}" ]; then
    for f in "${CORPUS_FILES[@]}"; do
      [ -f "$MF_CORPUS/$f" ] || { echo "FAIL  -      $f: not in MF_CORPUS=$MF_CORPUS"; exit 1; }
      cases+=("$MF_CORPUS/$f")
    done
    # A v3 pi session: the large v1 one, migrated by pi itself (the corpus's own v3 file has
    # only one turn).
    cp "$MF_CORPUS/pi/pi-v1-large-session-1019l.jsonl" "$W/pi-v3-migrated-by-pi-from-v1-large.jsonl"
    chmod u+w "$W/pi-v3-migrated-by-pi-from-v1-large.jsonl"
    node --input-type=module -e "const {SessionManager}=await import(process.argv[1]); SessionManager.open(process.argv[2], process.argv[3]);" \
      "$MF_AGENTS_DIR/node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js" \
      "$W/pi-v3-migrated-by-pi-from-v1-large.jsonl" "$W" \
      && cases+=("$W/pi-v3-migrated-by-pi-from-v1-large.jsonl")
  else
    echo "note: MF_CORPUS is not set; checking the fixtures only" >&2
  fi
  for f in "${FIXTURES[@]}"; do cases+=("$ROOT/fixtures/$f.jsonl"); done
fi

pass=0; fail=0; skip=0
for src in "${cases[@]}"; do
  name="$(basename "$src")"
  d="$W/${name%.jsonl}"; mkdir -p "$d"
  cp "$src" "$d/orig.jsonl"; cp "$src" "$d/$name"; chmod u+w "$d/orig.jsonl" "$d/$name"
  format="$("$MF_BIN" explain "$d/$name" --json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["format"])')"
  agent="$format"
  case "$format" in claude|codex|pi) ;; *) echo "FAIL  ?      $name: not an agent session ($format)"; fail=$((fail+1)); continue;; esac
  ctx() { "$HERE/check-agents.sh" --full --prompt "$MARK" "$agent" "$1" > "$2" 2> "$2.err"; }
  ctx "$d/orig.jsonl" "$d/base.json" || { echo "FAIL  $agent $name: the agent did not load the original: $(head -c 300 "$d/base.json" "$d/base.json.err")"; fail=$((fail+1)); continue; }
  said() { python3 -c 'import json,sys; r=json.loads(open(sys.argv[1]).readline()); print(r["action"]+": "+r["reason"])' "$1" 2>/dev/null || echo "error: $(head -c 300 "$2")"; }
  "$MF_BIN" compact "$d/$name" --model extractive --min-retention 0 --force --json > "$d/rec.json" 2> "$d/rec.err"
  first="$(said "$d/rec.json" "$d/rec.err")"
  case "$first" in
    folded:*) ;;
    *) "$MF_BIN" compact "$d/$name" --model extractive --min-retention 0 --force --trigger 0 --recent 1 --json > "$d/rec.json" 2> "$d/rec.err";;
  esac
  action="$(said "$d/rec.json" "$d/rec.err")"
  case "$action" in
    folded:*) ;;
    skipped:*|declined:*) echo "SKIP  $agent $name: mf folds nothing here (${first%%;*})"; skip=$((skip+1)); continue;;
    *) echo "FAIL  $agent $name: mf compact: $action"; fail=$((fail+1)); continue;;
  esac
  cp "$d/$name" "$d/compacted.jsonl"
  ctx "$d/compacted.jsonl" "$d/folded.json" || { echo "FAIL  $agent $name: the agent did not load the compacted session: $(head -c 300 "$d/folded.json")"; fail=$((fail+1)); continue; }
  ok=1
  for id in $(python3 -c 'import json,sys; print(" ".join(s["id"] for s in json.loads(open(sys.argv[1]).readline())["summaries"] if s["outcome"].startswith("written")))' "$d/rec.json"); do
    "$MF_BIN" expand "$d/$name" "$id" --restore --force > /dev/null 2> "$d/restore.err" || { ok=0; echo "FAIL  $agent $name: mf expand --restore: $(head -c 300 "$d/restore.err")"; }
  done
  [ "$ok" = 1 ] || { fail=$((fail+1)); continue; }
  ctx "$d/$name" "$d/restored.json" || { echo "FAIL  $agent $name: the agent did not load the restored session: $(head -c 300 "$d/restored.json")"; fail=$((fail+1)); continue; }
  if python3 "$HERE/harness/judge.py" "$agent" "$d/orig.jsonl" "$d/compacted.jsonl" "$d/base.json" "$d/folded.json" "$d/restored.json" "$MARK" > "$d/judge.out"; then
    pass=$((pass+1))
  else
    fail=$((fail+1))
  fi
  sed "s|orig.jsonl|$name|" "$d/judge.out"
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
