#!/usr/bin/env bash
# The retention audit's calibration: serve known summaries as the summarizer's reply over the
# spans they stand for, and print what mf's audit makes of each, with the confusion table.
#
#   bash scripts/calibrate.sh [CORPUS_DIR] [-- extra mf compact flags]
#
# Cases (scripts/calibration/cases.py): for every agent compaction in the corpus, the session cut
# just before it, --recent set to what the agent kept, and
#   (a) the agent's own summary                         expected: accepted
#   (b) mf's extractive summary of the same span         expected: accepted
#   (c1) (a) with four sentences in five removed, figures changed   expected: declined
#   (c2) (a) with every figure changed                   expected: declined
#   (c3) one fluent generic paragraph                    expected: declined
#   (m-*) (a) with one claim changed: a figure swapped for another of the span, a created path
#       swapped for one only read, `Read X` made `Created X`, a status flipped, a corrected value
#       put back (scripts/calibration/mutate.py)                       expected: declined
#   (d) saved small-model replies, CALIBRATION_REPLIES/NAME.d*.txt (by hand)   expected: declined
#       (over a corpus case NAME, or the committed session fixtures/NAME.jsonl)
# Fresh agent sessions (FRESH_DIR, default /work/wt/fresh) add (b) cases.
# MF (default target/release/mf) is the binary measured.
set -euo pipefail
cd "$(dirname "$0")/.."
CORPUS=${1:-${MF_CORPUS:-../shared/corpus}}
shift || true
[ "${1:-}" = "--" ] && shift
EXTRA=("$@")
MF=${MF:-target/release/mf}
FRESH=${FRESH_DIR:-/work/wt/fresh}
REPLIES=${CALIBRATION_REPLIES:-fixtures/calibration}
work=$(mktemp -d)
trap 'kill "$(cat "$work/pid" 2>/dev/null)" 2>/dev/null || true; rm -rf "$work"' EXIT
python3 scripts/calibration/cases.py "$CORPUS" "$work/cases"

serve() { # REPLY_FILE: start the reply server, set PORT
    [ -f "$work/pid" ] && kill "$(cat "$work/pid")" 2>/dev/null || true
    rm -f "$work/port"
    python3 scripts/calibration/reply-server.py "$1" "$work/port" &
    echo $! >"$work/pid"
    for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.1; done
    PORT=$(cat "$work/port")
}

run() { # NAME KIND EXPECT FILE RECENT [REPLY [FLAGS...]]: RECENT "" keeps the default tail
    local name=$1 kind=$2 expect=$3 file=$4 recent=$5 reply=${6:-}
    shift 6 2>/dev/null || shift $#
    local args=(--model extractive)
    if [ -n "$reply" ]; then
        serve "$reply"
        args=(--model openai-compatible:calibration --base-url "http://127.0.0.1:$PORT/v1")
    fi
    local flags=(--max-span-tokens 1000000)
    [ $# -gt 0 ] && flags=("$@")
    [ -n "$recent" ] && flags+=(--recent "$recent")
    "$MF" compact "$file" -o "$work/out.jsonl" --force --json "${flags[@]}" \
        "${args[@]}" ${EXTRA[@]+"${EXTRA[@]}"} >"$work/rec.json" 2>"$work/err.txt" || true
    python3 - "$name" "$kind" "$expect" "$work/rec.json" >>"$work/rows" <<'PY'
import json, sys
name, kind, expect, path = sys.argv[1:5]
try:
    r = json.loads(open(path).readline())
except ValueError:
    r = {"action": "error", "reason": "no record"}
sums = r.get("summaries") or []
a = (sums[0].get("audit") if sums else None) or {}
verdict = "accepted" if r.get("action") == "folded" else "declined"
if r.get("action") not in ("folded", "declined"):
    verdict = r.get("action", "?")
def pct(x):
    return "" if x is None else f"{x * 100:.0f}%"
inv = a.get("inventions") or []
figures = [i for i in inv if i["class"] in ("number", "date", "identifier", "url", "email", "issue") and not i["text"].startswith("@")]
print("\t".join([
    name, kind, expect, verdict,
    pct(a.get("modelRetention", a.get("retention"))), pct(a.get("retention")),
    f"{a.get('kept', '')}/{a.get('found', '')}",
    str(len(figures)), str(len(a.get("superseded") or [])), str(len(a.get("misstated") or [])),
    ";".join(i["text"] for i in figures[:3])
    or "; ".join(f'{m["claim"]} ≠ {m["spanSays"]}' for m in (a.get("misstated") or [])[:2])
    or (r.get("reason", "")[:90] if verdict != expect else ""),
]))
PY
}

for f in "$work"/cases/*.jsonl; do
    n=$(basename "$f" .jsonl)
    rec=$(cat "$work/cases/$n.recent")
    run "$n" a accepted "$f" "$rec" "$work/cases/$n.a.txt"
    run "$n" b accepted "$f" "$rec" ""
    for c in c1 c2 c3; do run "$n" "$c" declined "$f" "$rec" "$work/cases/$n.$c.txt"; done
    for m in "$work/cases/$n".m-*.txt; do
        [ -f "$m" ] && run "$n" "$(basename "$m" .txt | sed 's/^[^.]*\.//; s/^[^m]*\(m-\)/\1/')" declined "$f" "$rec" "$m"
    done
    for d in "$REPLIES/$n".d*.txt; do
        [ -f "$d" ] && run "$n" "$(basename "$d" .txt | sed 's/.*\.//')" declined "$f" "$rec" "$d"
    done
done
if [ -d "$FRESH" ]; then
    for f in $(find "$FRESH" -name '*.jsonl' | sort); do
        run "fresh:$(basename "$f" .jsonl)" b accepted "$f" 5 ""
    done
fi
# (d) on the sessions the small model summarized (fixtures/NAME.jsonl, committed copies of fresh
# agent sessions), with the flags it was asked under (its context holds ~2,500 tokens).
for d in "$REPLIES"/*.d1.txt; do
    [ -f "$d" ] || continue
    n=$(basename "$d" .d1.txt)
    [ -f "fixtures/$n.jsonl" ] || continue
    run "fixture:$n" d1 declined "fixtures/$n.jsonl" "" "$d" --trigger 0 --max-span-tokens 2500
done

printf '| case | kind | expected | verdict | model retention | final retention | items kept | invented figures | superseded | misstated | notes |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|\n'
awk -F'\t' '{printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11}' "$work/rows"
echo
awk -F'\t' '
    { n[$3 "," $4]++ }
    END {
        printf "| expected \\ verdict | accepted | declined |\n|---|---|---|\n"
        printf "| accepted | %d | %d |\n", n["accepted,accepted"], n["accepted,declined"]
        printf "| declined | %d | %d |\n", n["declined,accepted"], n["declined,declined"]
    }' "$work/rows"
