#!/usr/bin/env bash
# scripts/agents/loop.sh - by hand: mf inside the agents' own compaction, with the real agents
# against the loopback scripted model (issue 18, "Prove it").
#
# Usage:  [MF_BIN=/path/to/mf] scripts/agents/loop.sh [claude] [pi]     (default both)
#
# claude: Claude Code 2.1.332 with `mf hook install claude-code`: `/compact` sends a compaction
#         request carrying mf's keep-list; the next request carries mf's SessionStart
#         additionalContext naming what Claude's summary lost; mf writes nothing to the session;
#         an auto-compaction with a small window, where Claude Code reaches one.
# pi:     pi 1.6.0 with integrations/pi in its settings.json: an RPC compaction writes a
#         compaction entry whose summary is mf's (label first, audit in details), pi resumes from
#         it, and with a failing mf pi's own compaction runs. Needs `mf summarize`.
# Agents: pinned in package.json, installed in ${MF_AGENTS_DIR:-~/.cache/mf-agents}. Nothing leaves
# 127.0.0.1; every run is in a temp dir (kept with KEEP=1). Exit 0 when every check passed.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
export MF_AGENTS_DIR="${MF_AGENTS_DIR:-$HOME/.cache/mf-agents}"
AGENTS=("$@"); [ ${#AGENTS[@]} -gt 0 ] || AGENTS=(claude pi)
echo "installed: $(python3 "$HERE/harness/agent.py" versions | tr '\n' ' ')" >&2
if [ -z "${MF_BIN:-}" ]; then
  (cd "$ROOT" && cargo build --release --locked -q) || { echo "cargo build failed" >&2; exit 1; }
  MF_BIN="$ROOT/target/release/mf"
fi
export MF_BIN
echo "mf: $MF_BIN ($("$MF_BIN" --version))" >&2
W="$(mktemp -d /tmp/mf-loop.XXXXXX)"
[ "${KEEP:-0}" = 1 ] && echo "kept: $W" >&2 || trap 'rm -rf "$W"' EXIT
rc=0
for a in "${AGENTS[@]}"; do
  python3 "$HERE/harness/loop_e2e.py" "$a" "$W/$a" || rc=1
done
exit $rc
