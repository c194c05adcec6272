#!/usr/bin/env bash
# kill-loop.sh - the kill loop of issue 6 on the three agent formats, checked against the real
# agents (by hand; CI runs the small part without Node: tests/it/agent_kills.rs).
#
# Usage: ./kill-loop.sh [--kills N] [--mb MB] [--mf PATH] [--out DIR] [claude codex pi pi073]
#   Runs harness/kill_loop.py for each agent named (default: claude codex pi; pi is pi 1.6 on a
#   session pi 1.6.0 wrote, pi073 pi 0.73 on a v3 session), one after another,
#   each writing DIR/kill-<agent>.jsonl (one line per kill, then the tally). Needs the agents
#   check-agents.sh uses (claude, codex, pi with node), python3, and a release mf
#   (cargo build --release). Run it niced: nice -n 10 ./kill-loop.sh --kills 100
# Exit code: 0 when every check of every kill held, 1 otherwise.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
KILLS=100; MB=3; MF="$HERE/../../target/release/mf"; OUT="${TMPDIR:-/tmp}/mf-kill-loop"
while [ $# -gt 0 ]; do
  case "$1" in
    --kills) KILLS="$2"; shift 2;;
    --mb) MB="$2"; shift 2;;
    --mf) MF="$2"; shift 2;;
    --out) OUT="$2"; shift 2;;
    -h|--help) sed -n '2,13p' "$0"; exit 0;;
    *) break;;
  esac
done
AGENTS=("$@"); [ ${#AGENTS[@]} -gt 0 ] || AGENTS=(claude codex pi)
mkdir -p "$OUT"
RC=0
for a in "${AGENTS[@]}"; do
  rm -f "$OUT/kill-$a.jsonl"
  python3 "$HERE/harness/kill_loop.py" --agent "$a" --kills "$KILLS" --mb "$MB" --mf "$MF" \
    --out "$OUT/kill-$a.jsonl" --repair-agent-every "${REPAIR_EVERY:-1}" >/dev/null || RC=1
  tail -n 1 "$OUT/kill-$a.jsonl"
done
exit $RC
