#!/usr/bin/env bash
# The fidelity measurement of issue 9, run by hand (not part of `cargo test`): generated
# planted-fact conversations of 12, 40 and 120 turns (seeds 1–3), each compacted with
# `--model extractive` and each strategy given, then scored in the recall view: per-class
# retention of the planted facts, recall tokens after ÷ before, corrections kept at their latest
# value, and the audit's verdicts. Prints the Markdown tables docs/fidelity.md holds.
#
#   bash scripts/fidelity.sh                          # summary, mask, mask,summary
#   bash scripts/fidelity.sh summary cited            # any list of strategies
#   MODEL=openai-compatible:smollm2 TURNS=12,40 SEEDS=1 \
#     bash scripts/fidelity.sh summary -- --base-url http://127.0.0.1:8081/v1 -j 1 --timeout 600
#
# MODEL, TURNS and SEEDS override the defaults; DIR keeps the compacted files there; arguments
# after `--` go to every `mf compact`.
#
#   bash scripts/fidelity.sh agents [FILE|DIR]...     # real agent sessions (issue 14)
#
# compacts copies of agent sessions (default: the shared corpus, every pre-compaction cut of
# it, and the fresh sessions in FRESH_DIR) with MODEL (default extractive) and the defaults,
# and prints per session: recall tokens before and after, their ratio, the verdict, the audit's
# retention and its salient items per source.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p mf -p testgen
if [ "${1:-}" = "agents" ]; then
  shift
  exec python3 scripts/calibration/agents.py target/release/mf "${MODEL:-extractive}" "$@"
fi
strategies=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  strategies+=(--strategy "$1")
  shift
done
exec target/release/testgen fidelity --mf "$PWD/target/release/mf" \
  --model "${MODEL:-extractive}" --turns "${TURNS:-12,40,120}" --seeds "${SEEDS:-1,2,3}" \
  ${DIR:+--dir "$DIR"} "${strategies[@]}" "$@"
