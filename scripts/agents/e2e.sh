#!/usr/bin/env bash
# scripts/agents/e2e.sh - by hand: the real agents and mf end to end, on sessions the agents write
# now against the loopback scripted model (issue 13, "Prove it").
#
# Usage:  [MF_BIN=/path/to/mf] scripts/agents/e2e.sh [AGENT...]    (claude codex pi pi073; default all)
#
# 1. Says which agent versions are installed (${MF_AGENTS_DIR:-~/.cache/mf-agents}, pinned by
#    package.json; run.sh installs them) and, when the registry answers, the latest on npm
#    (`npm view PKG version`): a newer one is named, so it can be pinned and checked.
# 2. Builds mf (cargo build --release), or uses $MF_BIN (e.g. the merged build).
# 3. For each agent, harness/e2e.py: the agent writes a 4-prompt session with tool calls; mf
#    compact -> the agent's context judged -> the agent continues 3 turns -> mf compact again ->
#    judged -> resume -> restore every summary -> the whole conversation judged -> resume; the
#    agent's own compaction after mf's (Claude Code `claude -p --resume ID /compact`, pi's RPC
#    `compact`, Codex's auto-compaction with model_auto_compact_token_limit = 1) -> mf verify ->
#    4 turns -> mf after the agent's own compaction -> judged; a single-prompt run of 160 tool
#    calls -> mf compact -> judged -> resume; and one of 151 calls with tool outputs of realistic
#    size (over 20k tokens: the fold must reach 0.35 of the recall tokens) -> the same. `mf verify` after every write of mf's or the agent's.
# Prints one PASS/FAIL line per agent and step, then a table; exit 0 when every step passed.
# Nothing leaves 127.0.0.1; every run is in a temp dir (kept with KEEP=1).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
export MF_AGENTS_DIR="${MF_AGENTS_DIR:-$HOME/.cache/mf-agents}"
AGENTS=("$@"); [ ${#AGENTS[@]} -gt 0 ] || AGENTS=(claude codex pi pi073)

echo "installed: $(python3 "$HERE/harness/agent.py" versions | tr '\n' ' ')" >&2
for pkg in @anthropic-ai/claude-code @openai/codex @earendil-works/pi-coding-agent; do
  latest="$(timeout 20 npm view "$pkg" version 2>/dev/null)"
  have="$(node -p "require('$MF_AGENTS_DIR/node_modules/$pkg/package.json').version" 2>/dev/null)"
  if [ -z "$latest" ]; then echo "npm: $pkg: the registry did not answer; checking the installed $have" >&2
  elif [ "$latest" = "$have" ]; then echo "npm: $pkg $have is the latest" >&2
  else echo "npm: $pkg: $latest is on npm, $have is installed: pin $latest in package.json to check it" >&2; fi
done

if [ -z "${MF_BIN:-}" ]; then
  (cd "$ROOT" && cargo build --release --locked -q) || { echo "cargo build failed" >&2; exit 1; }
  MF_BIN="$ROOT/target/release/mf"
fi
export MF_BIN
echo "mf: $MF_BIN ($("$MF_BIN" --version))" >&2

W="$(mktemp -d /tmp/mf-e2e.XXXXXX)"
[ "${KEEP:-0}" = 1 ] && echo "kept: $W" >&2 || trap 'rm -rf "$W"' EXIT
rc=0
for a in "${AGENTS[@]}"; do
  python3 "$HERE/harness/e2e.py" "$a" "$W/$a" | tee "$W/$a.txt" || rc=1
done
echo
printf '%-18s' step; for a in "${AGENTS[@]}"; do printf '%-8s' "$a"; done; echo
steps=$(cat "$W"/*.txt | awk '{print $3}' | sed 's/:$//' | awk '!seen[$0]++')
for s in $steps; do
  printf '%-18s' "$s"
  for a in "${AGENTS[@]}"; do
    st=$(awk -v s="$s:" '$3==s{print $1}' "$W/$a.txt" | sort -u | tr '\n' '/' | sed 's#/$##')
    printf '%-8s' "${st:--}"
  done
  echo
done
exit $rc
