#!/usr/bin/env bash
# scripts/agents/gemini.sh - Gemini CLI end to end with mf (issue 26), against the loopback
# scripted model (harness/fakeapi.py + harness/fake_gemini.py); nothing leaves 127.0.0.1.
#
# Usage:  [MF_BIN=/path/to/mf] [KEEP=1] scripts/agents/gemini.sh
#
# Needs @google/gemini-cli (pinned in package.json) in ${MF_AGENTS_DIR:-~/.cache/mf-agents}
# (cd there && npm i --no-audit --no-fund @google/gemini-cli@0.61.0). Builds mf unless MF_BIN
# is set. Steps and what each checks: harness/gemini_e2e.py. Prints PASS/FAIL lines; exit 1 on
# any FAIL.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
export MF_AGENTS_DIR="${MF_AGENTS_DIR:-$HOME/.cache/mf-agents}"
if [ ! -x "$MF_AGENTS_DIR/node_modules/.bin/gemini" ]; then
  echo "gemini is not installed in $MF_AGENTS_DIR (npm i @google/gemini-cli@0.61.0 there)" >&2; exit 1
fi
if [ -z "${MF_BIN:-}" ]; then
  (cd "$ROOT" && cargo build --locked -q) || { echo "cargo build failed" >&2; exit 1; }
  MF_BIN="$ROOT/target/debug/mf"
fi
export MF_BIN
W="$(mktemp -d /tmp/mf-gemini.XXXXXX)"
[ "${KEEP:-0}" = 1 ] && echo "kept: $W" >&2 || trap 'rm -rf "$W"' EXIT
python3 "$HERE/harness/gemini_e2e.py" "$W"
