#!/usr/bin/env bash
# Run each fuzz target for SECONDS (default 600): `bash fuzz/run.sh [SECONDS] [TARGET...]`
# (default: every target, one after another; 0 seconds: only seed the corpora). By hand; needs
# nightly and cargo-fuzz.
#
# Seeds: fixtures/ for the file targets; for the text targets (audit, extractive, cite) the text
# of every corpus file under MF_CORPUS (each line's strings, in pieces of at most 4 kB) and the
# multi-byte sequences of fuzz/seeds/multibyte.txt. Prints each target's executions, peak RSS and
# any crash.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-600}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(read ledger plan audit extractive cite)
for t in read ledger plan audit extractive cite; do
  mkdir -p "fuzz/corpus/$t"
done
cp fixtures/*.jsonl fuzz/corpus/read/
for i in 1 2 3 4 5 6 7 8; do
  head -c $((i * 40)) /dev/urandom > "fuzz/corpus/ledger/seed$i"
  head -c $((i * 40)) /dev/urandom > "fuzz/corpus/plan/seed$i"
done
if [ -z "${MF_CORPUS:-}" ]; then
  echo "MF_CORPUS is not set: the text targets are seeded from fixtures/ only" >&2
fi
# A text input is pieces separated by U+001E, each opened by a character that picks its author
# (fuzz/src/lib.rs: pieces_of); an extractive input starts with a 2-byte budget; a cite input is
# a span (one entry per line) and replies, separated by U+001E.
python3 - "${MF_CORPUS:-}" <<'EOF'
import json, os, pathlib, struct, sys

corpus = sys.argv[1]
files = sorted(pathlib.Path("fixtures").glob("*.jsonl"))
if corpus:
    files += sorted(pathlib.Path(corpus).rglob("*.jsonl"))
RS, LIMIT = "\x1e", 4000
ROLE = {"user": "0", "human": "0", "assistant": "1", "model": "1", "tool": "2",
        "toolResult": "2", "function": "2", "system": "3", "developer": "3"}

def strings(v):
    if isinstance(v, str):
        if v.strip():
            yield v
    elif isinstance(v, dict):
        for x in v.values():
            yield from strings(x)
    elif isinstance(v, list):
        for x in v:
            yield from strings(x)

def role_of(o):
    for path in (("role",), ("message", "role"), ("payload", "role"), ("type",)):
        v = o
        for k in path:
            v = v.get(k) if isinstance(v, dict) else None
        if isinstance(v, str) and v in ROLE:
            return ROLE[v]
    return "1"

def write(target, n, text, prefix=b""):
    pathlib.Path(f"fuzz/corpus/{target}/seed-{n}").write_bytes(prefix + text.encode())

n = 0
for f in files:
    pieces = []
    for raw in f.read_text(errors="replace").splitlines():
        try:
            o = json.loads(raw)
        except ValueError:
            continue
        role = role_of(o) if isinstance(o, dict) else "1"
        pieces += [role + s[:LIMIT] for s in strings(o) if len(s) > 3]
    chunk = []
    def flush():
        global n
        if not chunk:
            return
        text = RS.join(chunk)
        write("audit", n, text)
        write("extractive", n, text, struct.pack("<H", 120 + (n * 97) % 2000))
        span = "\n".join(f"m{k} " + p[1:200].replace("\n", " ") for k, p in enumerate(chunk[:12]))
        reply = "=== #1\n" + "\n".join(
            p[1:120].replace("\n", " ").replace("[", "(").replace("]", ")") + f" [m{k}, @{k + 2}]"
            for k, p in enumerate(chunk[:4])) + "\n=== #2\nAnd so [#1, m5]."
        write("cite", n, span + RS + reply + RS + "NONE")
        n += 1
        chunk.clear()
    size = 0
    for p in pieces:
        if size + len(p) > LIMIT:
            flush()
            size = 0
        chunk.append(p)
        size += len(p) + 1
    flush()
mb = [l.rstrip("\n").replace("\\n", "\n")
      for l in open("fuzz/seeds/multibyte.txt", encoding="utf-8")]
for k, l in enumerate(mb):
    for role in "012345":
        write("audit", f"mb{k}{role}", RS.join([role + l, "0" + l, "1" + l, "2" + l]))
    write("extractive", f"mb{k}", RS.join(["0" + l] * 3 + ["1" + l] * 3), struct.pack("<H", 60 + k * 13))
    write("cite", f"mb{k}", "\n".join(f"{w} {l}" for w in l.split()[:6]) + RS
          + "=== #1\n" + l.replace("\n", " ") + " [" + ", ".join(l.split()[:2]) + "]")
print(f"seeded the text targets with {n} pieces of {len(files)} files and {len(mb)} multi-byte lines")
EOF
[ "$secs" != 0 ] || exit 0
for t in "${targets[@]}"; do
  case "$t" in
    audit | extractive | cite) extra=(-dict=fuzz/text.dict -max_len=8192) ;;
    *) extra=(-max_len=4096) ;;
  esac
  echo "== $t: ${secs} s"
  cargo +nightly fuzz run -O "$t" -- -max_total_time="$secs" "${extra[@]}" -print_final_stats=1 2>&1 \
    | grep -E "stat::number_of_executed_units|stat::peak_rss|ERROR|panicked|SUMMARY|Done" || true
done
