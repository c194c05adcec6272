#!/usr/bin/env bash
# Regenerate what is generated from the CLI definitions and committed: the shell completions in
# completions/ and the man pages in man/. tests/it/fresh.rs fails when they are stale.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q --bin mf
mf="${CARGO_TARGET_DIR:-target}/debug/mf"
for s in bash:mf.bash zsh:_mf fish:mf.fish powershell:_mf.ps1 elvish:mf.elv; do
  "$mf" completions "${s%%:*}" > "completions/${s##*:}"
done
mkdir -p man
rm -f man/*.1
"$mf" man > man/mf.1
for c in compact summarize recall expand search eval mcp explain verify models sessions hook completions man; do  # cli::MAN_PAGES
  "$mf" man "$c" > "man/mf-$c.1"
done
