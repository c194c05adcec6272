#!/usr/bin/env bash
# Calibration case (d), by hand: a real small model as the summarizer, over spans that fit its
# context, and what mf's audit makes of its summaries (issue 14: every (d) declined).
#
#   ../shared/tools/local-llm.sh start 8093          # SmolLM2-135M behind an OpenAI-compatible API
#   bash scripts/calibration/small-model.sh http://127.0.0.1:8093/v1 [OUT_DIR]
#
# Cases: the committed agent sessions of the current agents (fixtures/*-multiturn.jsonl, the
# pi 1.6 and Codex 0.171 tool sessions) and `testgen facts` chats with planted facts, each folded
# with default flags except --max-span-tokens (SPAN, default 2500, so that every call fits the
# model's 8k context with mf's instruction and its reply). Every request goes through
# record-proxy.py, which keeps each reply: OUT_DIR/NAME.d<k>.txt (default fixtures/calibration),
# the replies tests/it replays (fidelity.rs: the small model's summaries are declined) and
# scripts/calibrate.sh serves. Prints per case and call: the verdict, the audit's retention and
# what it found invented.
# MF (default target/release/mf) is the binary; TESTGEN (default target/release/testgen).
# TIMEOUT (default 900 s) is each call's: a 3,500-token span takes SmolLM2 about 150 s on two
# shared cores. ONLY (a glob, e.g. 'pi-*') picks cases.
set -euo pipefail
cd "$(dirname "$0")/../.."
BASE=${1:?usage: small-model.sh BASE_URL [OUT_DIR]}
OUT=${2:-fixtures/calibration}
MF=${MF:-target/release/mf}
TESTGEN=${TESTGEN:-target/release/testgen}
SPAN=${SPAN:-2500}
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'kill "$(cat "$work/pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$work"' EXIT
python3 scripts/calibration/record-proxy.py "$BASE" "$work/port" "$work/rec" &
echo $! >"$work/pid"
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
PORT=$(cat "$work/port")

mkdir -p "$work/cases"
for f in fixtures/claude-2.1.332-multiturn.jsonl fixtures/codex-0.171.0-multiturn.jsonl \
         fixtures/pi-1.6.0-multiturn.jsonl fixtures/pi-0.73.1-multiturn.jsonl; do
  cp "$f" "$work/cases/"
done
for s in 1 2 3; do
  "$TESTGEN" facts --turns 24 --seed "$s" --out "$work/cases/facts-$s.jsonl" 2>/dev/null
done

printf '| case | call | verdict | model retention | items kept | invented | reason |\n|---|---|---|---|---|---|---|\n'
for f in "$work"/cases/${ONLY:-*}.jsonl; do
  name=$(basename "$f" .jsonl)
  rm -rf "$work/rec"
  "$MF" compact "$f" -o "$work/out.jsonl" --force --json --trigger 0 --max-span-tokens "$SPAN" --timeout "${TIMEOUT:-900}" \
    --model openai-compatible:smollm2 --base-url "http://127.0.0.1:$PORT/v1" >"$work/rec.json" 2>"$work/err" || true
  k=0
  for r in "$work"/rec/*.txt; do
    [ -f "$r" ] || continue
    k=$((k + 1))
    cp "$r" "$OUT/$name.d$k.txt"
  done
  python3 - "$name" "$work/rec.json" "$work/err" <<'PY'
import json, sys
name, path, err = sys.argv[1:4]
try:
    r = json.loads(open(path).readline())
except ValueError:
    print(f"| {name} | - | error | | | | {open(err).read().strip()[-200:]} |")
    sys.exit()
sums = r.get("summaries") or []
if not sums:
    print(f"| {name} | - | {r.get('action')} | | | | {r.get('reason', '')[:160]} |")
for k, s in enumerate(sums, 1):
    a = s.get("audit") or {}
    inv = "; ".join(i["text"] for i in (a.get("inventions") or [])[:4])
    ret = a.get("modelRetention", a.get("retention"))
    print(f"| {name} | {k} | {s.get('outcome', r.get('action'))} | {'' if ret is None else f'{ret * 100:.0f}%'} "
          f"| {a.get('kept', '')}/{a.get('found', '')} | {inv} | {(s.get('reason') or r.get('reason') or '')[:160]} |")
PY
done
