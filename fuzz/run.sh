#!/usr/bin/env bash
# Run each fuzz target for SECONDS (default 600), seeded from fixtures/. By hand; needs nightly
# and cargo-fuzz. Prints each target's executions and any crash.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-600}"
for t in read ledger plan; do
  mkdir -p "fuzz/corpus/$t"
done
cp fixtures/*.jsonl fuzz/corpus/read/
for i in 1 2 3 4 5 6 7 8; do
  head -c $((i * 40)) /dev/urandom > "fuzz/corpus/ledger/seed$i"
  head -c $((i * 40)) /dev/urandom > "fuzz/corpus/plan/seed$i"
done
for t in read ledger plan; do
  echo "== $t: ${secs} s"
  cargo +nightly fuzz run -O "$t" -- -max_total_time="$secs" -max_len=4096 -print_final_stats=1 2>&1 \
    | grep -E "stat::number_of_executed_units|stat::peak_rss|ERROR|panicked|SUMMARY|Done" || true
done
