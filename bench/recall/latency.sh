#!/usr/bin/env bash
# Latency of `mf search` on a ~20 MB session and on the 300 MB benchmark file of bench/run.sh
# (`testgen bulk`, 1,000,000 lines, 300 MB, seed 1), cold and warm. The small one is `testgen bulk`
# with the same line density (70,000 lines, 20 MB, seed 2).
#   cold: `--no-cache` (no checkpoint of the file's prefix is used; the file itself may sit in the
#         OS page cache: this measures mf's parse + index + rank, not the disk);
#   warm: the same search again with mf's cache (the checkpoint written by the fold before it).
# Each file is folded once first (extractive, no network) so that search has a folded scope.
# The 300 MB file is searched exactly twice (one cold, one warm): 2-core machines.
#
# usage: bash bench/recall/latency.sh [--dir DIR] [--small-size 20M] [--no-big]
# Environment: MF_BIN (default: mf on PATH), TESTGEN_BIN (default: testgen on PATH).
# Needs GNU time (/usr/bin/time).
set -euo pipefail
mf=${MF_BIN:-mf}
testgen=${TESTGEN_BIN:-testgen}
dir= small=20M big=1
while [ $# -gt 0 ]; do
  case $1 in
    --dir) dir=$2; shift 2 ;;
    --small-size) small=$2; shift 2 ;;
    --no-big) big=0; shift ;;
    *) echo "usage: bash bench/recall/latency.sh [--dir DIR] [--small-size 20M] [--no-big]" >&2; exit 2 ;;
  esac
done
[ -x /usr/bin/time ] || { echo "latency: GNU time is needed (apt-get install time)" >&2; exit 2; }
if [ -z "$dir" ]; then dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT; else mkdir -p "$dir"; fi
export MF_CACHE_DIR=$dir/cache MF_NO_PROGRESS=1
unset MF_NO_CACHE
echo "mf: $mf ($("$mf" --version)); load average: $(cut -d' ' -f1-3 /proc/loadavg)"

query='which port did we settle on for the billing service, and the "connection refused" error'

# timed LABEL CMD...: prints "LABEL: S s, M MB, exit E, H hits".
timed() {
  local label=$1; shift
  local rc=0
  /usr/bin/time -f "%e %M" -o "$dir/time" "$@" >"$dir/out" 2>"$dir/err" || rc=$?
  if [ "$rc" -gt 1 ]; then echo "latency: $label failed ($rc):" >&2; cat "$dir/err" >&2; exit 1; fi
  read -r secs kb <"$dir/time"
  printf '%-34s %7.2f s  %6d MB  exit %d  %d hits\n' "$label:" "$secs" $((kb / 1024)) "$rc" "$(grep -c '^{' "$dir/out" || true)"
}

bench_file() { # bench_file NAME FILE
  local name=$1 file=$2
  echo "$name: $(wc -l <"$file") lines, $(($(stat -c %s "$file") / 1000000)) MB"
  timed "$name compact (extractive)" "$mf" compact "$file" --model extractive --min-retention 0 --force
  timed "$name search cold (--no-cache)" "$mf" search "$file" "$query" --json --limit 5 --no-cache
  timed "$name search warm" "$mf" search "$file" "$query" --json --limit 5
}

small_file=$dir/small.jsonl
"$testgen" bulk --lines 70000 --size "$small" --seed 2 --out "$small_file" 2>/dev/null
bench_file "${small} session" "$small_file"
rm -f "$small_file"

if [ "$big" = 1 ]; then
  big_file=$dir/big.jsonl
  "$testgen" bulk --lines 1000000 --size 300M --seed 1 --out "$big_file" 2>/dev/null
  bench_file "300 MB bench file" "$big_file"
  rm -f "$big_file"
fi
