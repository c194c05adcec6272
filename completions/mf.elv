
use builtin;
use str;

set edit:completion:arg-completer[mf] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'mf'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'mf'= {
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --no-cache 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand compact 'Fold older turns into a summary and append it, printing the decision record'
            cand recall 'Print what a model should see now: standing summaries and the turns they do not cover'
            cand expand 'Print the originals behind a summary; `--restore` retracts the summary'
            cand explain 'Show every decision recorded in the file, suspicious lines, and what `compact` would do now'
            cand verify 'Check a file''s integrity without calling anything: exit 0 when clean, 1 with the problems'
            cand models 'List the summarizer models mf knows: aliases, providers, ids, budgets and prices'
            cand sessions 'List the sessions of Claude Code, Codex and pi on this machine, newest first'
            cand hook 'Run as an agent''s compaction hook, or install mf''s hooks into an agent''s settings'
            cand completions 'Print a shell completion script to stdout'
            cand man 'Print the man page of mf, or of one of its commands, in roff'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'mf;compact'= {
            cand --latest 'Compact the agent''s newest session (see `mf sessions`), with --cwd: the newest one run there'
            cand --cwd 'With --latest: only sessions run in this directory'
            cand --files-from 'Read file paths from FILE (`-` for standard input), one per line'
            cand -m 'Summarizer model (required; never defaulted); `extractive` is the built-in offline one [env: MF_MODEL]'
            cand --model 'Summarizer model (required; never defaulted); `extractive` is the built-in offline one [env: MF_MODEL]'
            cand --recent 'Entries at the end that stay verbatim (at least the newest tool unit); the seam is rounded out to a whole turn when the tail then fits --recent-tokens, else the turn is folded inside [default: 5] [env: MF_RECENT]'
            cand --recent-tokens 'Most estimated tokens the verbatim tail holds: a turn larger than this is folded inside (its prompt and newest tool units stay verbatim, its older tool units fold) [default: 3000, which keeps a 20k-token session within about a third of its size]'
            cand --size 'Consider only the newest N uncovered entries (must be greater than --recent)'
            cand --trigger 'Make no call unless at least N uncovered entries exist [default: 20]'
            cand --min-fold 'Make no call unless at least N entries would fold [default: 2]'
            cand --target-tokens 'Fold the oldest turns until the recall view is at most T estimated tokens'
            cand --max-span-tokens 'Most tokens one summarizer call may carry; larger spans are split into chunks [default: the model''s budget]'
            cand --protect 'Keep real user messages out of every fold (they stay verbatim)'
            cand --strategy 'What to fold with: summary, mask (stub old tool results, no call), mask,summary, cited'
            cand --keep-tool-results 'With --strategy mask: the most recent tool results that stay verbatim [default: 3]'
            cand --from 'Read the file as this format instead of detecting it'
            cand --system-prompt 'Replace the summarizer instruction: TEXT, or @FILE to read it from a file'
            cand -o 'Leave the input untouched; write its bytes plus the new lines to PATH (a directory for several files; `-` for stdout)'
            cand --output 'Leave the input untouched; write its bytes plus the new lines to PATH (a directory for several files; `-` for stdout)'
            cand --record 'Write the JSON decision records to PATH instead of stdout (`-`: stdout; `/dev/fd/N`: a descriptor the shell opened)'
            cand -j 'Files compacted and summarizer calls in flight at once'
            cand --jobs 'Files compacted and summarizer calls in flight at once'
            cand --min-retention 'Decline a summary that keeps less than this share of the span''s items (0 turns it off) [default: 0.5] [env: MF_MIN_RETENTION]'
            cand --base-url 'API base URL (beats ANTHROPIC_BASE_URL / OPENAI_BASE_URL; required for openai-compatible:NAME) [env: MF_BASE_URL]'
            cand --timeout 'Seconds one request may take, connect to last byte [default: 120] [env: MF_TIMEOUT]'
            cand --retries 'Retries after a failed attempt (connection errors, timeouts, 408, 409, 429, 5xx) [default: 2]'
            cand --temperature 'Sampling temperature, 0 to 2, for models that take one (not Anthropic 5.x, not OpenAI reasoning models)'
            cand --seed 'Seed for OpenAI-style servers that honour it (not Anthropic, which has none)'
            cand --max-output-tokens 'Cap on one summary''s output tokens [default: the model''s output budget]'
            cand --anthropic-version '`anthropic-version` header'
            cand --agent-model 'The model that wrote the conversation, when the file does not record it'
            cand --price-in 'Input price in USD per million tokens (overrides the table)'
            cand --price-out 'Output price in USD per million tokens (overrides the table)'
            cand --max-cost 'Refuse to start calls whose estimated total cost exceeds USD'
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]'
            cand -0 'With --files-from: paths are separated by NUL bytes (as `find -print0` writes them)'
            cand --null 'With --files-from: paths are separated by NUL bytes (as `find -print0` writes them)'
            cand --rollup 'After chunk summaries, fold them into one covering summary (every level stays expandable)'
            cand --dry-run 'Print the plan and its estimated cost without calling or writing anything'
            cand --force 'Let --output replace an existing file, and write to an agent session that looks live'
            cand --json 'Print one JSON decision record per file (errors included), one per line'
            cand --allow-degraded 'Exit 0 even when a summarizer failed and the span stayed verbatim'
            cand --retry-lossy 'Ask once more, naming the missing items, when a summary is lossy'
            cand --retry 'Ask again for spans declined before, whatever decided it (the record keeps why)'
            cand --strict-audit 'Also decline summaries with inventions or superseded values'
            cand --audit-tool-results 'Count items found only in tool results toward the retention threshold'
            cand --count-tokens 'With --dry-run, ask Anthropic''s free count_tokens endpoint for each request''s exact input tokens'
            cand --allow-same-model 'Allow the summarizer to be the conversation''s own model (billed at its price)'
            cand --allow-insecure-http 'Allow sending a key over plain http:// to a host that is not loopback'
            cand --no-redact 'Send spans as they are, without replacing keys, tokens and passwords by placeholders'
            cand --debug-bodies 'With -v, also print request and response bodies (they hold the transcript; keys stay redacted)'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --no-cache 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'mf;recall'= {
            cand --format 'Output format'
            cand --budget 'Keep summaries first, then the newest entries that fit in TOKENS (4 characters a token, 256 reserved)'
            cand --from 'Read the file as this format instead of detecting it'
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --no-cache 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'mf;expand'= {
            cand --format 'Output format'
            cand --from 'Read the file as this format instead of detecting it'
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]'
            cand --deep 'Go down through nested summaries to the original messages'
            cand --restore 'Retract the summary (append a retraction record): recall is verbatim again'
            cand --force 'With --restore: write to an agent session that looks live'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --no-cache 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'mf;explain'= {
            cand -m 'Plan as `compact --model MODEL` would, with that model''s span and output budgets [env: MF_MODEL]'
            cand --model 'Plan as `compact --model MODEL` would, with that model''s span and output budgets [env: MF_MODEL]'
            cand --recent 'Entries at the end that stay verbatim (at least the newest tool unit); the seam is rounded out to a whole turn when the tail then fits --recent-tokens, else the turn is folded inside [default: 5] [env: MF_RECENT]'
            cand --recent-tokens 'Most estimated tokens the verbatim tail holds: a turn larger than this is folded inside (its prompt and newest tool units stay verbatim, its older tool units fold) [default: 3000, which keeps a 20k-token session within about a third of its size]'
            cand --size 'Consider only the newest N uncovered entries (must be greater than --recent)'
            cand --trigger 'Make no call unless at least N uncovered entries exist [default: 20]'
            cand --min-fold 'Make no call unless at least N entries would fold [default: 2]'
            cand --target-tokens 'Fold the oldest turns until the recall view is at most T estimated tokens'
            cand --max-span-tokens 'Most tokens one summarizer call may carry; larger spans are split into chunks [default: the model''s budget]'
            cand --protect 'Keep real user messages out of every fold (they stay verbatim)'
            cand --strategy 'What to fold with: summary, mask (stub old tool results, no call), mask,summary, cited'
            cand --keep-tool-results 'With --strategy mask: the most recent tool results that stay verbatim [default: 3]'
            cand --from 'Read the file as this format instead of detecting it'
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]'
            cand --json 'Print as one JSON object'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --no-cache 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'mf;verify'= {
            cand --from 'Read the files as this format instead of detecting it'
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]'
            cand --json 'Print one JSON object per file'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --no-cache 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'mf;models'= {
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]'
            cand --json 'Print as JSON'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --no-cache 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mf;sessions'= {
            cand --agent 'Only this agent''s sessions'
            cand --cwd 'Only sessions run in this directory'
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]'
            cand --latest 'Only the newest session (after --agent and --cwd)'
            cand --json 'Print one JSON object per session, one per line'
            cand -0 'Print only the paths, each ended by a NUL byte (for `mf compact --files-from - -0`)'
            cand --null 'Print only the paths, each ended by a NUL byte (for `mf compact --files-from - -0`)'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --no-cache 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'mf;hook'= {
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --no-cache 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
            cand -h 'Print help'
            cand --help 'Print help'
            cand claude-code 'Claude Code''s hook: reads the hook''s JSON on stdin (PreCompact: print a keep-list; SessionStart after a compaction: report what the summary lost); never blocks, never writes the session'
            cand install 'Add mf''s hooks to an agent''s settings (merging, idempotent, with a backup)'
            cand uninstall 'Remove mf''s hooks from an agent''s settings (with a backup)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'mf;hook;claude-code'= {
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --no-cache 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mf;hook;install'= {
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]'
            cand --project 'Claude Code: the project''s `.claude/settings.json` (in the current directory)'
            cand --user 'Claude Code: the user''s `~/.claude/settings.json` (the default)'
            cand --dry-run 'Print what would change without writing'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --no-cache 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'mf;hook;uninstall'= {
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]'
            cand --project 'Claude Code: the project''s `.claude/settings.json` (in the current directory)'
            cand --user 'Claude Code: the user''s `~/.claude/settings.json` (the default)'
            cand --dry-run 'Print what would change without writing'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --no-cache 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'mf;hook;help'= {
            cand claude-code 'Claude Code''s hook: reads the hook''s JSON on stdin (PreCompact: print a keep-list; SessionStart after a compaction: report what the summary lost); never blocks, never writes the session'
            cand install 'Add mf''s hooks to an agent''s settings (merging, idempotent, with a backup)'
            cand uninstall 'Remove mf''s hooks from an agent''s settings (with a backup)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'mf;hook;help;claude-code'= {
        }
        &'mf;hook;help;install'= {
        }
        &'mf;hook;help;uninstall'= {
        }
        &'mf;hook;help;help'= {
        }
        &'mf;completions'= {
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --no-cache 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mf;man'= {
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --no-cache 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mf;help'= {
            cand compact 'Fold older turns into a summary and append it, printing the decision record'
            cand recall 'Print what a model should see now: standing summaries and the turns they do not cover'
            cand expand 'Print the originals behind a summary; `--restore` retracts the summary'
            cand explain 'Show every decision recorded in the file, suspicious lines, and what `compact` would do now'
            cand verify 'Check a file''s integrity without calling anything: exit 0 when clean, 1 with the problems'
            cand models 'List the summarizer models mf knows: aliases, providers, ids, budgets and prices'
            cand sessions 'List the sessions of Claude Code, Codex and pi on this machine, newest first'
            cand hook 'Run as an agent''s compaction hook, or install mf''s hooks into an agent''s settings'
            cand completions 'Print a shell completion script to stdout'
            cand man 'Print the man page of mf, or of one of its commands, in roff'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'mf;help;compact'= {
        }
        &'mf;help;recall'= {
        }
        &'mf;help;expand'= {
        }
        &'mf;help;explain'= {
        }
        &'mf;help;verify'= {
        }
        &'mf;help;models'= {
        }
        &'mf;help;sessions'= {
        }
        &'mf;help;hook'= {
            cand claude-code 'Claude Code''s hook: reads the hook''s JSON on stdin (PreCompact: print a keep-list; SessionStart after a compaction: report what the summary lost); never blocks, never writes the session'
            cand install 'Add mf''s hooks to an agent''s settings (merging, idempotent, with a backup)'
            cand uninstall 'Remove mf''s hooks from an agent''s settings (with a backup)'
        }
        &'mf;help;hook;claude-code'= {
        }
        &'mf;help;hook;install'= {
        }
        &'mf;help;hook;uninstall'= {
        }
        &'mf;help;completions'= {
        }
        &'mf;help;man'= {
        }
        &'mf;help;help'= {
        }
    ]
    $completions[$command]
}
