#!/usr/bin/env bash
# Record what a given mf binary prints (and appends) over every fixture, for every command that
# prints a decision record or JSON, so that two builds can be compared byte for byte:
#
#   scripts/record-identity.sh /path/to/old/mf /tmp/before
#   scripts/record-identity.sh target/release/mf /tmp/after
#   diff -r /tmp/before /tmp/after        # empty: the same bytes
#
# Each fixture is copied into a fresh temp dir per case (the originals are never touched). Per
# case one file holds the command lines, their exit codes, stdout and stderr, and the lines the
# run appended to the copy. Normalized (the only things that vary from run to run):
#   - the temp dir's path            → <DIR>
#   - the loopback server's port     → <PORT>
#   - epoch-millisecond times (13 digits starting 1 or 2, as mf writes summarizedAtMs and the
#     agents' timestamps) → <MS>, and ISO-8601 times of today → <ISO>
#   - request ids the fake server makes up (msg_…, resp_…, chatcmpl-…) → <RID>
#   - what mf makes up at random: a write set's id ("set":"xxxxxxxx:) → <SET>, and new Claude
#     Code uuids, pi entry ids and 32-hex digests (of spans that hold such lines) that the
#     fixture does not hold → <UUIDn>, <IDn>, <DIGESTn>, numbered per case file in order of
#     first appearance (equal values stay equal)
# Nothing else is touched: ids, digests, sizes, costs, reasons and audits are compared as they are.
#
# Remote cases talk to scripts/agents/harness/fakeapi.py on 127.0.0.1 (Anthropic Messages API).
set -euo pipefail

MF=$(realpath "${1:?usage: record-identity.sh MF_BINARY OUT_DIR}")
OUT=${2:?usage: record-identity.sh MF_BINARY OUT_DIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# MF_IDENTITY_FIXTURES: another directory of .jsonl files to record over (e.g. a corpus).
FIXTURES=${MF_IDENTITY_FIXTURES:-$ROOT/fixtures}
mkdir -p "$OUT"
OUT=$(realpath "$OUT")

WORK=$(mktemp -d /tmp/mf-identity.XXXXXX)
SERVER_PID=
cleanup() {
    [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# A private cache, config and clean environment: nothing of the user's leaks in.
: >"$WORK/config.toml"
export MF_CACHE_DIR=$WORK/cache MF_CONFIG=$WORK/config.toml MF_NO_PROGRESS=1 MF_LIVE_SECONDS=0
unset MF_MODEL MF_BASE_URL MF_API_KEY MF_MIN_RETENTION MF_RECENT MF_TIMEOUT MF_NO_CACHE \
    ANTHROPIC_API_KEY ANTHROPIC_BASE_URL OPENAI_API_KEY OPENAI_BASE_URL MF_TAIL_WAIT_MS || true

python3 "$ROOT/scripts/agents/harness/fakeapi.py" --record "$WORK/requests" --port 0 \
    --portfile "$WORK/port" --reply "The user asked for help; the assistant answered." \
    >/dev/null 2>&1 &
SERVER_PID=$!
for _ in $(seq 100); do [ -s "$WORK/port" ] && break; sleep 0.05; done
PORT=$(cat "$WORK/port")
REMOTE=(--model haiku --base-url "http://127.0.0.1:$PORT" --retries 0)
export MF_API_KEY=sk-identity-test

normalize() {
    sed -E \
        -e "s#$CASE_DIR#<DIR>#g" \
        -e "s#127\.0\.0\.1:$PORT#127.0.0.1:<PORT>#g" \
        -e 's/\b(1|2)[0-9]{12}\b/<MS>/g' \
        -e 's/\b20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z?\b/<ISO>/g' \
        -e 's/\b(msg_|resp_|chatcmpl-)[A-Za-z0-9]{8,}\b/<RID>/g'
}

# run LABEL ARGS...: one command over the copy, into the case's file.
run() {
    local label=$1
    shift
    local rc=0
    local before
    before=$(stat -c %s "$CASE_DIR/$FIX" 2>/dev/null || echo 0)
    (cd "$CASE_DIR" && "$MF" "$@" >"$WORK/stdout" 2>"$WORK/stderr") || rc=$?
    {
        echo "=== $label: mf $*"
        echo "--- exit $rc"
        echo "--- stdout"
        cat "$WORK/stdout"
        echo "--- stderr"
        cat "$WORK/stderr"
        echo "--- appended"
        tail -c +"$((before + 1))" "$CASE_DIR/$FIX" 2>/dev/null || true
        if [ -f "$CASE_DIR/copy.jsonl" ]; then
            echo "--- copy.jsonl"
            cat "$CASE_DIR/copy.jsonl"
        fi
        echo
    } | normalize >>"$CASE_OUT"
}

# The id of the first summary a compact record names as written (for expand).
first_written_id() {
    python3 -c '
import json, sys
for line in sys.stdin:
    try: r = json.loads(line)
    except Exception: continue
    for s in r.get("summaries", []):
        if s.get("id") and str(s.get("outcome", "")).startswith("written"):
            print(s["id"]); sys.exit(0)
' <"$WORK/stdout"
}

# case NAME COMPACT_ARGS...: a fresh copy, compact twice, then what every reader says of it.
case_() {
    local name=$1
    shift
    CASE_DIR=$WORK/case
    rm -rf "$CASE_DIR"
    mkdir -p "$CASE_DIR"
    cp "$FIXTURES/$FIX" "$CASE_DIR/$FIX"
    CASE_OUT=$OUT/${FIX%.jsonl}.$name.txt
    : >"$CASE_OUT"
    run compact compact --json "$@" "$FIX"
    local id
    id=$(first_written_id || true)
    case " $* " in *" --dry-run "*) return ;; esac
    run compact-again compact --json "$@" "$FIX"
    run explain explain --json "$FIX"
    run verify verify --json "$FIX"
    run recall recall "$FIX"
    if [ -n "$id" ]; then
        run expand expand "$id" "$FIX"
        run expand-restore expand --restore "$id" "$FIX"
        run recall-after-restore recall "$FIX"
        run verify-after-restore verify --json "$FIX"
    fi
}

# summarize_ NAME ARGS...: `mf summarize` of a fresh copy, as JSON and as text (nothing written).
summarize_() {
    local name=$1
    shift
    CASE_DIR=$WORK/case
    rm -rf "$CASE_DIR"
    mkdir -p "$CASE_DIR"
    cp "$FIXTURES/$FIX" "$CASE_DIR/$FIX"
    CASE_OUT=$OUT/${FIX%.jsonl}.$name.txt
    : >"$CASE_OUT"
    run summarize-json summarize --json "$@" "$FIX"
    run summarize summarize "$@" "$FIX"
}

SMALL=(--trigger 2 --recent 4)
for path in "$FIXTURES"/*.jsonl; do
    FIX=$(basename "$path")
    case_ dry-default --model extractive --dry-run
    case_ dry-small --model extractive --dry-run "${SMALL[@]}"
    case_ summary --model extractive "${SMALL[@]}" --strategy summary
    case_ summary-chunks-rollup --model extractive "${SMALL[@]}" --max-span-tokens 300 --rollup
    case_ cited --model extractive "${SMALL[@]}" --strategy cited
    case_ mask --model extractive "${SMALL[@]}" --strategy mask --keep-tool-results 1
    case_ mask-summary --model extractive "${SMALL[@]}" --strategy mask,summary --keep-tool-results 1
    case_ dry-mask-summary --model extractive "${SMALL[@]}" --strategy mask,summary --dry-run
    case_ output-copy --model extractive "${SMALL[@]}" --output copy.jsonl
    case_ remote-summary "${REMOTE[@]}" "${SMALL[@]}" --allow-same-model
    case_ remote-keep-all "${REMOTE[@]}" "${SMALL[@]}" --allow-same-model --min-retention 0 --max-span-tokens 300
    case_ remote-cited "${REMOTE[@]}" "${SMALL[@]}" --allow-same-model --strategy cited
    case_ remote-dry "${REMOTE[@]}" "${SMALL[@]}" --allow-same-model --dry-run --max-span-tokens 300
    case_ remote-max-cost "${REMOTE[@]}" "${SMALL[@]}" --allow-same-model --max-cost 0.0000001
    case_ target-unmet --model extractive "${SMALL[@]}" --target-tokens 50
    case_ target-squeezed --model extractive --trigger 2 --recent 1 --target-tokens 400
    summarize_ summarize --model extractive
    summarize_ summarize-chunks --model extractive --max-span-tokens 300
    summarize_ summarize-dry --model extractive --dry-run --max-span-tokens 300
    summarize_ summarize-remote "${REMOTE[@]}" --allow-same-model
    summarize_ summarize-remote-chunks "${REMOTE[@]}" --allow-same-model --max-span-tokens 300
done
# Values mf makes up at random (set ids, Claude Code uuids, pi entry ids) and the digests of
# spans that hold them: each new one becomes a numbered placeholder, per case file, so equal
# values stay equal; a value the fixture holds is kept as it is.
python3 - "$OUT" "$FIXTURES" <<'PY'
import re,sys,os
UUID=re.compile(r'\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b')
SET=re.compile(r'"set":"[0-9a-f]{8}:')
HEX32=re.compile(r'\b[0-9a-f]{32}\b')
HEX8=re.compile(r'(?<="id":")[0-9a-f]{8}(?=")|(?<="parentId":")[0-9a-f]{8}(?=")')
def norm(text, fixture):
    known=set(UUID.findall(fixture))|set(HEX32.findall(fixture))|set(re.findall(r'\b[0-9a-f]{8}\b',fixture))
    seen={}
    def ph(kind):
        def f(m):
            v=m.group(0)
            if v in known: return v
            if v not in seen: seen[v]=f"<{kind}{len(seen)+1}>"
            return seen[v]
        return f
    text=SET.sub('"set":"<SET>:',text)
    text=UUID.sub(ph('UUID'),text)
    text=HEX32.sub(ph('DIGEST'),text)
    text=HEX8.sub(ph('ID'),text)
    return text
out,fixdir=sys.argv[1],sys.argv[2]
for name in os.listdir(out):
    fix=name.split('.')[0]
    # fixture name is everything before the case name: find the longest prefix that exists
    cands=[f for f in os.listdir(fixdir) if name.startswith(f[:-len('.jsonl')]+'.')]
    fx=max(cands,key=len)
    p=os.path.join(out,name)
    s=open(p).read()
    open(p,'w').write(norm(s,open(os.path.join(fixdir,fx)).read()))
PY
echo "recorded $(ls "$OUT" | wc -l) cases into $OUT"
