#!/usr/bin/env bash
# scripts/agents/fresh-ids.sh - by hand: have the real agents write short fresh sessions whose
# prompts carry what a user states and expects kept: a ticket id, a config path, API URLs, a key
# id, a version, a limit — between filler prompts ("ok", "yes do it", "thanks, go on") — and
# whose model replies carry reasoning (fakeapi.py's THINK: a thinking block, a reasoning
# item) that must never be copied into a summary as if the assistant had said it.
#
# Usage:  scripts/agents/fresh-ids.sh OUTDIR [AGENT...]   (AGENT: claude codex pi pi073; default all)
#
# Writes, per agent:
#   <agent>-<version>-ids.jsonl         6 prompts (one new session, then 5 resumes), 10 tool calls
#                                       (shell commands, a file write, file reads), one tool output
#                                       of 120 log lines, so that the session is over 2k tokens;
#   <agent>-<version>-filler-first.jsonl 4 prompts, the first a filler ("go on"), the second the
#                                       request with its ids; 6 tool calls, 150 lines of output;
#   <agent>-<version>-varied.jsonl      3 prompts, 14 distinct tool calls (no two of one shape):
#                                       what a budget of a fifth of a small span must still hold. Each agent's working directory is a temp dir; nothing leaves
# 127.0.0.1. Needs python3, node (see fresh.sh and harness/agent.py).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
A="$HERE/harness/agent.py"
OUT="${1:?usage: fresh-ids.sh OUTDIR [AGENT...]}"; shift
mkdir -p "$OUT"
AGENTS=("$@"); [ ${#AGENTS[@]} -gt 0 ] || AGENTS=(claude codex pi pi073)

P1='Ticket PROJ-4821: checkout calls to https://api.example.com/v2/orders time out after 30s. The config is config/checkout.yaml and the client authenticates with key id key_live_7Hq2Lx9Qe. Keep the timeout under 45s and never touch prod. THINK PLAN[bash:mkdir -p config && printf "timeout_s: 30\nretries: 5\nendpoint: https://api.example.com/v2/orders\n" > config/checkout.yaml ;; read:config/checkout.yaml ;; bash:seq 1 120 | sed "s/^/2026-12-03T07:00:00Z WARN checkout timeout after 30s on order ORD-/" > timeouts.log && tail -n 120 timeouts.log ;; bash:grep -c timeout timeouts.log]'
P2='ok'
P3='Set the timeout to 40s and retries to 3 in config/checkout.yaml, and pin the client to version v2.3.1; the staging endpoint is https://staging.example.com/v2/orders. THINK PLAN[write:config/checkout.yaml=timeout_s: 40 ;; bash:sed -n 1,5p config/checkout.yaml ++ bash:echo "client==v2.3.1" > requirements.txt]'
P4='yes do it'
P5='Now check the requirements file and list the work dir. THINK PLAN[read:requirements.txt ;; bash:ls -la ;; bash:grep -n timeout_s config/checkout.yaml]'
P6='thanks, go on'
# The varied session.
V1='For SEC-77, audit the service in svc/ before the 2026-12-10 release: the manifest is svc/manifest.json and alerts go to https://hooks.example.com/T0/sec77. Do not change anything yet. THINK PLAN[bash:mkdir -p svc/lib svc/conf && printf "{\"name\": \"svc\", \"version\": \"0.9.4\"}\n" > svc/manifest.json ;; bash:seq 1 60 | sed "s/^/def handler_/; s/$/(): pass/" > svc/lib/handlers.py ;; bash:printf "port=8443\ntls=on\n" > svc/conf/server.ini ;; read:svc/manifest.json ;; bash:wc -l svc/lib/handlers.py ;; bash:grep -c def svc/lib/handlers.py ;; bash:head -n 40 svc/lib/handlers.py ;; bash:find svc -type f | sort ;; bash:du -sh svc ;; read:svc/conf/server.ini ;; bash:grep -n port svc/conf/server.ini ;; bash:stat -c %s svc/manifest.json ;; bash:ls -la svc/lib ;; bash:cut -c1-12 svc/lib/handlers.py | sort | uniq | tail -n 30]'
V2='ok thanks'
V3='sounds good, go ahead'
# The filler-first session.
F1='go on'
F2='Refunds for OPS-1193 fail with HTTP 502 from https://payments.internal.example.com/api/v1/refunds; the settings are in deploy/payments.toml and the service uses key id key_test_4Rt8Zm1. We must stay on library version 1.14.2 and only touch staging. THINK PLAN[bash:mkdir -p deploy && printf "[refunds]\nurl = \"https://payments.internal.example.com/api/v1/refunds\"\nretries = 2\n" > deploy/payments.toml ;; read:deploy/payments.toml ;; bash:seq 1 150 | sed "s/^/refund attempt failed: HTTP 502 Bad Gateway, request id REQ-/" > refunds.log && tail -n 150 refunds.log ;; bash:grep -c 502 refunds.log]'
F3='yes do it'
F4='Set retries to 4 in deploy/payments.toml. THINK PLAN[write:deploy/payments.toml=retries = 4 ;; bash:cat deploy/payments.toml]'

for agent in "${AGENTS[@]}"; do
  v="$(python3 "$A" versions | awk -v a="$agent" '$1==a{print $2}')"
  name="$agent"; [ "$agent" = pi073 ] && name=pi
  W="$(mktemp -d "/tmp/mf-fresh-ids-$agent.XXXXXX")"
  python3 "$A" start "$W" > /dev/null
  trap 'python3 "$A" stop "$W"' EXIT
  f="$(python3 "$A" new "$W" "$agent" "$P1")"
  for p in "$P2" "$P3" "$P4" "$P5" "$P6"; do
    python3 "$A" resume "$W" "$agent" "$f" "$p" > /dev/null
  done
  cp "$f" "$OUT/$name-$v-ids.jsonl"
  echo "$OUT/$name-$v-ids.jsonl ($(wc -l < "$f") lines)"
  rm -rf "$W/cwd"/*
  f="$(python3 "$A" new "$W" "$agent" "$F1")"
  for p in "$F2" "$F3" "$F4"; do
    python3 "$A" resume "$W" "$agent" "$f" "$p" > /dev/null
  done
  cp "$f" "$OUT/$name-$v-filler-first.jsonl"
  echo "$OUT/$name-$v-filler-first.jsonl ($(wc -l < "$f") lines)"
  rm -rf "$W/cwd"/*
  f="$(python3 "$A" new "$W" "$agent" "$V1")"
  for p in "$V2" "$V3"; do
    python3 "$A" resume "$W" "$agent" "$f" "$p" > /dev/null
  done
  cp "$f" "$OUT/$name-$v-varied.jsonl"
  echo "$OUT/$name-$v-varied.jsonl ($(wc -l < "$f") lines)"
  python3 "$A" stop "$W"; trap - EXIT
  rm -rf "$W"
done
