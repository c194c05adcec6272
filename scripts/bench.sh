#!/usr/bin/env bash
# Benchmarks for mf, run by hand (not part of `cargo test`): wall time and peak memory of each
# command on generated transcripts of growing size. Usage: bash scripts/bench.sh [ENTRIES…]
# Default sizes: 10000 100000 400000 entries (about 3, 30 and 120 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q
mf=$PWD/target/release/mf
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sizes=("${@:-10000 100000 400000}")
# shellcheck disable=SC2206
sizes=(${sizes[*]})

gen() { # gen N FILE: a chat transcript of N entries with tool calls every fifth turn
  python3 - "$1" "$2" <<'PY'
import json, sys
n, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w") as f:
    f.write(json.dumps({"id": "sys", "role": "system", "content": "You are a helpful assistant."}) + "\n")
    i, turn = 1, 0
    while i < n:
        turn += 1
        f.write(json.dumps({"id": f"u{i}", "role": "user", "content": f"Turn {turn}: please check order #{turn*7} for customer C-{turn%997}; it was due on 2026-11-{turn%28+1:02d} and cost ${turn%500}.{turn%100:02d}.", "ts": 1764400000000 + i}) + "\n"); i += 1
        if turn % 5 == 0:
            f.write(json.dumps({"id": f"a{i}", "role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": "lookup_order", "arguments": json.dumps({"order": turn*7})}}]}) + "\n"); i += 1
            f.write(json.dumps({"id": f"t{i}", "role": "tool", "tool_call_id": f"c{i-1}", "name": "lookup_order", "content": json.dumps({"order": turn*7, "status": "shipped", "carrier": "DHL", "eta": "2026-12-03"})}) + "\n"); i += 1
        f.write(json.dumps({"id": f"a{i}", "role": "assistant", "content": f"Order #{turn*7} for C-{turn%997} shipped with DHL; it should arrive on 2026-12-03. I noted that you prefer e-mail updates.", "ts": 1764400000000 + i}) + "\n"); i += 1
PY
}

measure() { # measure LABEL CMD…: prints wall seconds and peak RSS
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$dir/time" "$@" >/dev/null 2>"$dir/err" || { cat "$dir/err"; exit 1; }
  read -r secs kb <"$dir/time"
  printf '  %-44s %7.2f s  %8.1f MB peak\n' "$label" "$secs" "$(echo "$kb/1024" | bc -l)"
}

for n in "${sizes[@]}"; do
  f=$dir/t$n.jsonl
  gen "$n" "$f"
  mb=$(du -m "$f" | cut -f1)
  echo "== $n entries, ${mb} MB"
  measure "explain --json" "$mf" explain "$f" --json
  measure "recall (jsonl)" "$mf" recall "$f"
  measure "compact --dry-run" "$mf" compact "$f" --model extractive --dry-run
  measure "compact --output (extractive, one fold)" "$mf" compact "$f" --model extractive --output "$dir/out.jsonl"
  cp "$f" "$dir/inplace.jsonl"
  measure "compact in place (append under lock)" "$mf" compact "$dir/inplace.jsonl" --model extractive
  measure "recall after the fold" "$mf" recall "$dir/inplace.jsonl"
done
