#!/usr/bin/env bash
# check-agents.sh - show what a REAL coding agent would send to its model for a session file.
#
# Usage:
#   ./check-agents.sh [options] <pi|claude|codex> <session-file>
# Options:
#   --full            print full message texts (default: first 120 chars)
#   --all-requests    (claude/codex) print every recorded model request, not just the main one
#   --keep-tmp        keep the temporary dir (copy of the session, recorded requests, agent output)
#   --prompt TEXT     the prompt used to resume (default: "continue"); claude/codex only
#   --session-id ID   (claude/codex) override the session id (default: taken from the file)
#   --model M         (codex) model name passed with -m (default: gpt-5.5)
#   --timeout S       max seconds for the agent run (default: 60)
#
# What it does (always on a COPY of <session-file>, never the file itself):
#   pi:     node harness/pi-context.mjs - opens the copy with pi's SessionManager.open(copy)
#           .buildSessionContext() and converts with pi's convertToLlm (what pi sends).
#   claude: a temp HOME with ~/.claude/projects/<encoded tmp cwd>/<sessionId>.jsonl, a loopback
#           fake Anthropic API (harness/fakeapi.py, 127.0.0.1, random port) that records every
#           request, then `claude -p --resume <sessionId> "continue"`; prints the main recorded
#           /v1/messages request.
#   codex:  a temp CODEX_HOME with sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl and config.toml
#           (openai_base_url -> loopback fake Responses API, which answers 426 to the websocket
#           GET and SSE to POST /v1/responses), then `codex exec --skip-git-repo-check -m MODEL
#           resume <id> "continue"`; prints the main recorded /v1/responses request.
# Output: one JSON object on stdout:
#   {"agent":..., "n":N, "messages":[{"i","role","text"(120 chars),"len", "tool_calls":[ids],
#     "tool_results":[ids] (claude/codex) | "tool_result_for":id (pi), ...}, ...]}
#   For claude the final user message(s) carry the resume prompt ("continue") and Claude Code's
#   own reminders; for codex the last item is the resume prompt.
# Exit code: 0 ok, 1 agent/recording failure (JSON has "error"), 2 usage.
# Environment: MF_AGENTS_DIR is where run.sh installed the agents (default ~/.cache/mf-agents);
#   CLAUDE_BIN / CODEX_BIN override the agent binaries (e.g. an older claude), PI_PKG_DIR the pi
#   package dir. Needs node >= 20, python3, coreutils timeout.
# Runs take ~0.3 s (pi), ~1-2 s (claude, codex); nothing leaves 127.0.0.1; the temp dir and the
#   fake server are removed/stopped on exit (use --keep-tmp to inspect the agent's rewritten copy).
# Assertions: harness/assert_ctx.py OUT.json --has TEXT --lacks TEXT --first-has TEXT --calls-paired
#   (use --full so whole texts are compared). run.sh shows the intended use (harness/judge.py).
# Agents are the npm packages pinned in package.json, installed by run.sh into $MF_AGENTS_DIR:
#   @anthropic-ai/claude-code, @openai/codex, @mariozechner/pi-coding-agent.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
H="$HERE/harness"
AGENTS="${MF_AGENTS_DIR:-$HOME/.cache/mf-agents}"
BIN="$AGENTS/node_modules/.bin"
export PI_PKG_DIR="${PI_PKG_DIR:-$AGENTS/node_modules/@mariozechner/pi-coding-agent}"
CLAUDE_BIN="${CLAUDE_BIN:-$BIN/claude}"; CODEX_BIN="${CODEX_BIN:-$BIN/codex}"
FULL=""; ALLREQ=""; KEEP=0; PROMPT="continue"; SID=""; MODEL="gpt-5.5"; TMO=60
while [ $# -gt 0 ]; do
  case "$1" in
    --full) FULL="--full"; shift;;
    --all-requests) ALLREQ="--all"; shift;;
    --keep-tmp) KEEP=1; shift;;
    --prompt) PROMPT="$2"; shift 2;;
    --session-id) SID="$2"; shift 2;;
    --model) MODEL="$2"; shift 2;;
    --timeout) TMO="$2"; shift 2;;
    -h|--help) sed -n '2,40p' "$0"; exit 0;;
    --) shift; break;;
    -*) echo "unknown option $1" >&2; exit 2;;
    *) break;;
  esac
done
[ $# -eq 2 ] || { sed -n '2,40p' "$0" >&2; exit 2; }
AGENT="$1"; SRC="$(readlink -f "$2")"
[ -f "$SRC" ] || { echo "no such file: $2" >&2; exit 2; }

TMP="$(mktemp -d /tmp/check-agents.XXXXXX)"
SRV_PID=""
cleanup() {
  if [ -n "$SRV_PID" ]; then kill "$SRV_PID" 2>/dev/null || true; wait "$SRV_PID" 2>/dev/null || true; fi
  if [ "$KEEP" = 1 ]; then echo "kept: $TMP" >&2; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

start_server() {
  python3 "$H/fakeapi.py" --record "$TMP/rec" --portfile "$TMP/port" --max-seconds $((TMO + 60)) &
  SRV_PID=$!
  for _ in $(seq 1 100); do [ -s "$TMP/port" ] && break; sleep 0.05; done
  [ -s "$TMP/port" ] || { echo '{"error":"fake server did not start"}'; exit 1; }
  PORT="$(cat "$TMP/port")"
}

case "$AGENT" in
  pi)
    node "$H/pi-context.mjs" "$SRC" $FULL
    ;;
  claude)
    eval "$(python3 "$H/session_info.py" claude "$SRC")"   # sets FILE_SID FILE_CWD
    SID="${SID:-$FILE_SID}"
    [ -n "$SID" ] || { echo '{"error":"no sessionId in file; use --session-id"}'; exit 1; }
    mkdir -p "$TMP/home" "$TMP/cwd" "$TMP/rec"
    ENC="$(python3 -c 'import re,sys;print(re.sub("[^A-Za-z0-9]","-",sys.argv[1]))' "$TMP/cwd")"
    mkdir -p "$TMP/home/.claude/projects/$ENC"
    cp "$SRC" "$TMP/home/.claude/projects/$ENC/$SID.jsonl"; chmod u+w "$TMP/home/.claude/projects/$ENC/$SID.jsonl"
    start_server
    set +e
    (cd "$TMP/cwd" && env -i PATH="$PATH" HOME="$TMP/home" TERM=dumb \
        ANTHROPIC_API_KEY=sk-ant-dummy-key ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT" \
        DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 DISABLE_AUTOUPDATER=1 \
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 \
        timeout "$TMO" "$CLAUDE_BIN" -p --resume "$SID" "$PROMPT" >"$TMP/agent.out" 2>"$TMP/agent.err" </dev/null)
    RC=$?
    set -e
    python3 "$H/cc_summarize.py" "$TMP/rec" $FULL $ALLREQ --rc "$RC" --errfile "$TMP/agent.err" --outfile "$TMP/agent.out"
    ;;
  codex)
    eval "$(python3 "$H/session_info.py" codex "$SRC")"   # sets FILE_SID FILE_CWD FILE_TS
    SID="${SID:-$FILE_SID}"
    [ -n "$SID" ] || { echo '{"error":"no session_meta id in file; use --session-id"}'; exit 1; }
    mkdir -p "$TMP/codex" "$TMP/cwd" "$TMP/rec"
    read -r DAYDIR STAMP < <(python3 -c 'import sys,datetime
ts=sys.argv[1] or "2026-01-01T00:00:00Z"
try: d=datetime.datetime.fromisoformat(ts.replace("Z","+00:00"))
except Exception: d=datetime.datetime(2026,1,1)
print(d.strftime("%Y/%m/%d"), d.strftime("%Y-%m-%dT%H-%M-%S"))' "$FILE_TS")
    mkdir -p "$TMP/codex/sessions/$DAYDIR"
    ROLL="$TMP/codex/sessions/$DAYDIR/rollout-$STAMP-$SID.jsonl"
    cp "$SRC" "$ROLL"; chmod u+w "$ROLL"
    start_server
    printf 'openai_base_url = "http://127.0.0.1:%s/v1"\n' "$PORT" > "$TMP/codex/config.toml"
    set +e
    (cd "$TMP/cwd" && env -i PATH="$PATH" HOME="$TMP" TERM=dumb CODEX_HOME="$TMP/codex" OPENAI_API_KEY=sk-dummy-key \
        timeout "$TMO" "$CODEX_BIN" exec --skip-git-repo-check -m "$MODEL" resume "$SID" "$PROMPT" \
        >"$TMP/agent.out" 2>"$TMP/agent.err" </dev/null)
    RC=$?
    set -e
    python3 "$H/codex_summarize.py" "$TMP/rec" $FULL $ALLREQ --rc "$RC" --errfile "$TMP/agent.err" --outfile "$TMP/agent.out"
    ;;
  *) echo "agent must be pi, claude or codex" >&2; exit 2;;
esac
