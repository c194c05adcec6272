#!/usr/bin/env bash
# mf's benchmark, run by hand (not part of `cargo test`). It generates a chat transcript of at least
# 1,000,000 lines and 300 MB (turns with tool calls and tool outputs), and two files of other shapes
# of the same size (long tool outputs of 64 kB; many short turns), and measures, interleaved, over
# several rounds, with medians and ratios (CPU time: user + system, and wall time):
#   1. `mf explain FILE --json` on each shape against `jq -c . FILE`, a Python orjson line loop
#      (bench/orjson_loop.py) and `wc -l FILE`;
#   2. peak resident memory of `mf explain` and `mf compact`;
#   3. bytes appended by `mf compact FILE --model extractive`, and its time against the read alone;
#   4. a rerun after appending 1 MB, against the cold explain;
#   5. 64 chunks against a loopback provider answering in 200 ms at -j 8, against 8 x 0.2 s;
#   6. a second `mf compact` of the same file: provider calls (must be 0).
#
# usage: bash bench/run.sh [--rounds N] [--lines N] [--size SIZE] [--dir DIR]
# Environment: MF_BIN and TESTGEN_BIN (both) use those binaries instead of building.
# Needs: cargo, GNU time (/usr/bin/time), python3 (the loopback provider), jq and python3's orjson
# (for 1; each skipped with a note when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

rounds=3 lines=1000000 size=300M dir=
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --lines) lines=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    *) echo "usage: bash bench/run.sh [--rounds N] [--lines N] [--size SIZE] [--dir DIR]" >&2; exit 2 ;;
  esac
done

[ -x /usr/bin/time ] || { echo "bench: GNU time is needed (apt-get install time)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "bench: python3 is needed for the loopback provider" >&2; exit 2; }
have_jq=1
command -v jq >/dev/null || { have_jq=0; echo "bench: jq not found; the jq comparison is skipped (apt-get install jq)" >&2; }
have_orjson=1
python3 -c 'import orjson' 2>/dev/null || { have_orjson=0; echo "bench: python3's orjson not found; the orjson comparison is skipped (pip install orjson)" >&2; }

# MF_BIN and TESTGEN_BIN name prebuilt binaries (e.g. a release build in another target dir);
# otherwise both are built here (honouring CARGO_TARGET_DIR).
if [ -n "${MF_BIN:-}" ] && [ -n "${TESTGEN_BIN:-}" ]; then
  mf=$MF_BIN testgen=$TESTGEN_BIN
else
  cargo build --release -q -p mf -p testgen
  mf=${CARGO_TARGET_DIR:-$root/target}/release/mf
  testgen=${CARGO_TARGET_DIR:-$root/target}/release/testgen
fi
echo "mf: $mf ($("$mf" --version)); load average: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
if [ -z "$dir" ]; then
  dir=$(mktemp -d)
  trap 'kill "${server:-0}" 2>/dev/null || true; rm -rf "$dir"' EXIT
else
  mkdir -p "$dir"
  trap 'kill "${server:-0}" 2>/dev/null || true' EXIT
fi
# Checkpoints of this run only, and none of the user's.
export MF_CACHE_DIR=$dir/cache
export MF_NO_PROGRESS=1
unset MF_NO_CACHE

big=$dir/big.jsonl
"$testgen" bulk --lines "$lines" --size "$size" --seed 1 --out "$big"
file_bytes=$(stat -c %s "$big")
file_lines=$(wc -l <"$big")
# The other shapes, as big: long tool outputs (64 kB each, few lines), many short turns.
"$testgen" bulk --lines 1 --size "$size" --seed 1 --out "$dir/tools.jsonl" 2>/dev/null
"$testgen" bulk --lines $((lines * 3 / 2)) --size "$size" --seed 1 --out "$dir/turns.jsonl" 2>/dev/null

# run LABEL CMD...: one timed run; appends "wall-seconds kilobytes cpu-seconds" to $dir/LABEL.
run() {
  local label=$1; shift
  /usr/bin/time -f "%e %M %U %S" -o "$dir/time" "$@" >/dev/null 2>"$dir/err" || {
    echo "bench: $label failed:" >&2; cat "$dir/err" >&2; exit 1; }
  awk '{printf "%s %s %.2f\n", $1, $2, $3 + $4}' "$dir/time" >>"$dir/$label"
}
median() { # median COLUMN LABEL
  awk -v c="$1" '{print $c}' "$dir/$2" | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", (b > 0 ? a / b : 0)}'; }
mb() { awk -v k="$1" 'BEGIN {printf "%.0f", k / 1024}'; }

echo "file: $file_lines lines, $((file_bytes / 1000000)) MB; $rounds rounds, interleaved" >&2

# 1 and 2 (explain): cold reads of each shape, interleaved with jq, the orjson loop and wc.
shapes="chat tools turns"
file_of() { case $1 in chat) echo "$big" ;; *) echo "$dir/$1.jsonl" ;; esac; }
for r in $(seq "$rounds"); do
  for shape in $shapes; do
    echo "round $r: explain, jq, orjson, wc ($shape)" >&2
    f=$(file_of "$shape")
    run "explain-$shape" "$mf" --no-cache explain "$f" --json
    [ $have_jq = 1 ] && run "jq-$shape" jq -c . "$f"
    [ $have_orjson = 1 ] && run "orjson-$shape" python3 "$root/bench/orjson_loop.py" "$f"
    run "wc-$shape" wc -l "$f"
  done
done
cp "$dir/explain-chat" "$dir/explain"
cp "$dir/wc-chat" "$dir/wc"

# 2 and 3 (compact): each round on a fresh copy; bytes appended and peak memory.
for r in $(seq "$rounds"); do
  echo "round $r: compact" >&2
  cp "$big" "$dir/compact.jsonl"
  run compact "$mf" --no-cache compact "$dir/compact.jsonl" --model extractive
  appended=$(($(stat -c %s "$dir/compact.jsonl") - file_bytes))
  echo "$appended" >>"$dir/appended"
done
# What the compaction wrote: summaries standing, and remembered verdicts by kind.
action_first=$("$mf" explain "$dir/compact.jsonl" --json | python3 -c '
import json, sys, collections
d = json.load(sys.stdin)
kinds = collections.Counter(h.get("kind", "?") + (":" + h["reason"] if h.get("reason") else "") for h in d.get("history", []))
n = len(d.get("summaries", []))
print(", ".join([f"{n} summaries"] + [f"{c} {k}" for k, c in sorted(kinds.items())]))')

# 4: rerun after a 1 MB append, on a fresh copy each round (its first read saves the checkpoint).
"$testgen" bulk --lines 1 --size 1M --seed 2 --out "$dir/more.jsonl" 2>/dev/null
tail -n +2 "$dir/more.jsonl" >"$dir/more-body.jsonl" # without its system line
for r in $(seq "$rounds"); do
  echo "round $r: rerun after 1 MB" >&2
  rm -rf "$MF_CACHE_DIR" "$dir/grow.jsonl" # a cold read: no checkpoint of an earlier round
  cp "$big" "$dir/grow.jsonl"
  run cold "$mf" explain "$dir/grow.jsonl" --json
  cat "$dir/more-body.jsonl" >>"$dir/grow.jsonl"
  run rerun "$mf" explain "$dir/grow.jsonl" --json
done
grown=$(stat -c %s "$dir/more-body.jsonl")

# 5 and 6: 64 chunks against a loopback provider answering in 200 ms, at -j 8.
python3 "$root/bench/provider.py" "$dir/port" "$dir/calls" 0.2 &
server=$!
for _ in $(seq 100); do [ -s "$dir/port" ] && break; sleep 0.05; done
port=$(cat "$dir/port")
"$testgen" facts --turns 400 --seed 3 --out "$dir/chunks.jsonl" 2>/dev/null
model=(--model openai-compatible:bench --base-url "http://127.0.0.1:$port/v1" --min-retention 0)
calls_of() { "$mf" compact "$dir/chunks.jsonl" "${model[@]}" --dry-run --max-span-tokens "$1" --json |
  grep -o 'in [0-9]* calls' | grep -o '[0-9]*' || echo 1; }
lo=700 hi=200000 # the span budget that plans exactly 64 calls
while [ $((hi - lo)) -gt 1 ]; do
  mid=$(((lo + hi) / 2))
  if [ "$(calls_of $mid)" -gt 64 ]; then lo=$mid; else hi=$mid; fi
done
budget=$hi planned=$(calls_of $hi)
for r in $(seq "$rounds"); do
  echo "round $r: $planned chunks at -j 8" >&2
  cp "$dir/chunks.jsonl" "$dir/chunks-$r.jsonl"
  : >"$dir/calls"
  run chunks "$mf" --no-cache compact "$dir/chunks-$r.jsonl" "${model[@]}" --max-span-tokens "$budget" -j 8
  wc -l <"$dir/calls" >>"$dir/first-calls"
  : >"$dir/calls"
  "$mf" compact "$dir/chunks-$r.jsonl" "${model[@]}" --max-span-tokens "$budget" -j 8 >/dev/null
  wc -l <"$dir/calls" >>"$dir/second-calls"
done

explain_s=$(median 1 explain) explain_kb=$(median 2 explain)
wc_s=$(median 1 wc)
compact_s=$(median 1 compact) compact_kb=$(median 2 compact)
cold_s=$(median 1 cold) rerun_s=$(median 1 rerun)
cold_cpu=$(median 3 cold) rerun_cpu=$(median 3 rerun)
chunks_s=$(median 1 chunks)
appended=$(sort -n "$dir/appended" | tail -1)
first_calls=$(sort -n "$dir/first-calls" | tail -1)
second_calls=$(sort -n "$dir/second-calls" | tail -1)
ideal=$(awk -v n="$planned" 'BEGIN {printf "%.2f", (int((n + 7) / 8)) * 0.2}')
quarter_kb=$((file_bytes / 4 / 1024))

echo
echo "mf benchmark: $file_lines lines, $((file_bytes / 1000000)) MB, $rounds rounds, medians"
echo "explain --json (cold), CPU seconds (user + system) and wall seconds; ratios are the other's"
echo "time over mf's (jq, orjson: how many times faster mf is; wc: how many times slower)"
printf '%-6s %7s %11s %9s %9s %11s %11s %9s\n' "shape" "MB" "mf cpu/wall" "mf MB" "lines" "jq x" "orjson x" "wc x"
for shape in $shapes; do
  f=$(file_of "$shape")
  m_cpu=$(median 3 "explain-$shape") m_wall=$(median 1 "explain-$shape")
  pair() { # pair TOOL: cpu ratio / wall ratio against mf
    if [ -s "$dir/$1-$shape" ]; then
      echo "$(ratio "$(median 3 "$1-$shape")" "$m_cpu")/$(ratio "$(median 1 "$1-$shape")" "$m_wall")"
    else echo "-"; fi
  }
  wcr="$(ratio "$m_cpu" "$(median 3 "wc-$shape")")/$(ratio "$m_wall" "$(median 1 "wc-$shape")")"
  printf '%-6s %7s %11s %9s %9s %11s %11s %9s\n' "$shape" "$(($(stat -c %s "$f") / 1000000))" \
    "$m_cpu/$m_wall" "$(mb "$(median 2 "explain-$shape")")" "$(wc -l <"$f")" "$(pair jq)" "$(pair orjson)" "$wcr"
done
echo "targets: >= 20x jq, >= 3x the orjson loop (CPU)"
echo
printf '%-46s %12s %12s  %s\n' "measure" "value" "ratio" "target"
printf '%-46s %10sMB %11s   %s\n' "peak memory, explain" "$(mb "$explain_kb")" "$(ratio "$explain_kb" "$quarter_kb")" "<= 1/4 of the file ($(mb $quarter_kb) MB)"
printf '%-46s %10sMB %11s   %s\n' "peak memory, compact" "$(mb "$compact_kb")" "$(ratio "$compact_kb" "$quarter_kb")" "<= 1/4 of the file"
printf '%-46s %12s %12s  %s\n' "bytes appended by compact --model extractive" "$appended" "" "< 1 MB (history now: $action_first)"
printf '%-46s %11ss %11sx  %s\n' "compact (extractive) vs explain (the read)" "$compact_s" "$(ratio "$compact_s" "$explain_s")" ""
printf '%-46s %11ss %11s   %s\n' "rerun after a $((grown / 1000)) kB append vs cold explain" "$rerun_s" "$(awk -v a="$rerun_s" -v b="$cold_s" 'BEGIN {printf "%.1f%%", 100 * a / b}')" "< 5% (cold ${cold_s}s)"
printf '%-46s %11ss %11s   %s\n' "  the same in CPU time" "$rerun_cpu" "$(awk -v a="$rerun_cpu" -v b="$cold_cpu" 'BEGIN {printf "%.1f%%", 100 * a / b}')" "(cold ${cold_cpu}s)"
printf '%-46s %11ss %11sx  %s\n' "$planned chunks, 200 ms each, -j 8, vs ideal ${ideal}s" "$chunks_s" "$(ratio "$chunks_s" "$ideal")" "<= 1.3x ($first_calls calls)"
printf '%-46s %12s %12s  %s\n' "second compact: provider calls" "$second_calls" "" "0"
echo "load average at the end: $(cut -d" " -f1-3 /proc/loadavg)"
