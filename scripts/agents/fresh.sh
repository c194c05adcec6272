#!/usr/bin/env bash
# scripts/agents/fresh.sh - by hand: have the real agents write fresh sessions, tool calls included.
#
# Usage:  scripts/agents/fresh.sh OUTDIR [AGENT...]      (AGENT: claude codex pi pi073; default all)
#
# For each agent (installed in ${MF_AGENTS_DIR:-~/.cache/mf-agents}; see harness/agent.py) this
# runs the real agent against the loopback scripted model (harness/fakeapi.py: it asks for the
# tool calls the prompt's PLAN[...] names, one model reply per step, then answers text) and
# copies the session file the agent wrote to OUTDIR:
#   <agent>-<version>-multiturn.jsonl  4 prompts (one new session, then 3 resumes), 11 tool calls:
#                                      shell commands, file writes and reads, one reply with 2
#                                      parallel calls;
#   <agent>-<version>-long.jsonl       1 prompt (`claude -p`, `codex exec`, `pi -p`) of 160 tool
#                                      calls: 100 shell commands, 30 reads, 30 writes.
# Each agent's working directory is a temp dir; nothing leaves 127.0.0.1. Needs python3, node.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
A="$HERE/harness/agent.py"
OUT="${1:?usage: fresh.sh OUTDIR [AGENT...]}"; shift
mkdir -p "$OUT"
AGENTS=("$@"); [ ${#AGENTS[@]} -gt 0 ] || AGENTS=(claude codex pi pi073)

# The multi-turn session's prompts, in order.
P1='setup: make a small project. PLAN[bash:mkdir -p src && printf "fn main() {}\n" > src/main.rs ;; write:notes.md=first notes about the project ;; read:notes.md]'
P2='inspect: look at what is there. PLAN[bash:ls -la src ++ bash:wc -c notes.md ;; read:src/main.rs]'
P3='change: add a todo list. PLAN[write:todo.txt=step three: write the todo list ;; bash:cat todo.txt notes.md ;; bash:echo turn three done]'
P4='wrap: what did we do? PLAN[bash:ls -1 ;; read:todo.txt]'
# The single-prompt run.
PL='long: a long single-prompt run. PLAN[bash*100:echo line {n} of the long run | tee out-{n}.txt ;; read*30:out-{n}.txt ;; write*30:w-{n}.txt=written by call {n} of the long run]'

for agent in "${AGENTS[@]}"; do
  v="$(python3 "$A" versions | awk -v a="$agent" '$1==a{print $2}')"
  name="$agent"; [ "$agent" = pi073 ] && name=pi
  W="$(mktemp -d "/tmp/mf-fresh-$agent.XXXXXX")"
  python3 "$A" start "$W" > /dev/null
  trap 'python3 "$A" stop "$W"' EXIT
  f="$(python3 "$A" new "$W" "$agent" "$P1")"
  python3 "$A" resume "$W" "$agent" "$f" "$P2" > /dev/null
  python3 "$A" resume "$W" "$agent" "$f" "$P3" > /dev/null
  python3 "$A" resume "$W" "$agent" "$f" "$P4" > /dev/null
  cp "$f" "$OUT/$name-$v-multiturn.jsonl"
  echo "$OUT/$name-$v-multiturn.jsonl ($(wc -l < "$f") lines)"
  rm -rf "$W/cwd"/*
  f="$(python3 "$A" new "$W" "$agent" "$PL")"
  cp "$f" "$OUT/$name-$v-long.jsonl"
  echo "$OUT/$name-$v-long.jsonl ($(wc -l < "$f") lines)"
  python3 "$A" stop "$W"; trap - EXIT
  rm -rf "$W"
done
