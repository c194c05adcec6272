
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'mf' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'mf'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'mf' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--no-cache', '--no-cache', [CompletionResultType]::ParameterName, 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('compact', 'compact', [CompletionResultType]::ParameterValue, 'Fold older turns into a summary and append it, printing the decision record')
            [CompletionResult]::new('recall', 'recall', [CompletionResultType]::ParameterValue, 'Print what a model should see now: standing summaries and the turns they do not cover')
            [CompletionResult]::new('expand', 'expand', [CompletionResultType]::ParameterValue, 'Print the originals behind a summary; `--restore` retracts the summary')
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'Show every decision recorded in the file, suspicious lines, and what `compact` would do now')
            [CompletionResult]::new('verify', 'verify', [CompletionResultType]::ParameterValue, 'Check a file''s integrity without calling anything: exit 0 when clean, 1 with the problems')
            [CompletionResult]::new('models', 'models', [CompletionResultType]::ParameterValue, 'List the summarizer models mf knows: aliases, providers, ids, budgets and prices')
            [CompletionResult]::new('sessions', 'sessions', [CompletionResultType]::ParameterValue, 'List the sessions of Claude Code, Codex and pi on this machine, newest first')
            [CompletionResult]::new('hook', 'hook', [CompletionResultType]::ParameterValue, 'Run as an agent''s compaction hook, or install mf''s hooks into an agent''s settings')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script to stdout')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the man page of mf, or of one of its commands, in roff')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'mf;compact' {
            [CompletionResult]::new('--latest', '--latest', [CompletionResultType]::ParameterName, 'Compact the agent''s newest session (see `mf sessions`), with --cwd: the newest one run there')
            [CompletionResult]::new('--cwd', '--cwd', [CompletionResultType]::ParameterName, 'With --latest: only sessions run in this directory')
            [CompletionResult]::new('--files-from', '--files-from', [CompletionResultType]::ParameterName, 'Read file paths from FILE (`-` for standard input), one per line')
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'Summarizer model (required; never defaulted); `extractive` is the built-in offline one [env: MF_MODEL]')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'Summarizer model (required; never defaulted); `extractive` is the built-in offline one [env: MF_MODEL]')
            [CompletionResult]::new('--recent', '--recent', [CompletionResultType]::ParameterName, 'Entries at the end that stay verbatim (at least the newest tool unit); the seam is rounded out to a whole turn when the tail then fits --recent-tokens, else the turn is folded inside [default: 5] [env: MF_RECENT]')
            [CompletionResult]::new('--recent-tokens', '--recent-tokens', [CompletionResultType]::ParameterName, 'Most estimated tokens the verbatim tail holds: a turn larger than this is folded inside (its prompt and newest tool units stay verbatim, its older tool units fold) [default: 3000, which keeps a 20k-token session within about a third of its size]')
            [CompletionResult]::new('--size', '--size', [CompletionResultType]::ParameterName, 'Consider only the newest N uncovered entries (must be greater than --recent)')
            [CompletionResult]::new('--trigger', '--trigger', [CompletionResultType]::ParameterName, 'Make no call unless at least N uncovered entries exist [default: 20]')
            [CompletionResult]::new('--min-fold', '--min-fold', [CompletionResultType]::ParameterName, 'Make no call unless at least N entries would fold [default: 2]')
            [CompletionResult]::new('--target-tokens', '--target-tokens', [CompletionResultType]::ParameterName, 'Fold the oldest turns until the recall view is at most T estimated tokens')
            [CompletionResult]::new('--max-span-tokens', '--max-span-tokens', [CompletionResultType]::ParameterName, 'Most tokens one summarizer call may carry; larger spans are split into chunks [default: the model''s budget]')
            [CompletionResult]::new('--protect', '--protect', [CompletionResultType]::ParameterName, 'Keep real user messages out of every fold (they stay verbatim)')
            [CompletionResult]::new('--strategy', '--strategy', [CompletionResultType]::ParameterName, 'What to fold with: summary, mask (stub old tool results, no call), mask,summary, cited')
            [CompletionResult]::new('--keep-tool-results', '--keep-tool-results', [CompletionResultType]::ParameterName, 'With --strategy mask: the most recent tool results that stay verbatim [default: 3]')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read the file as this format instead of detecting it')
            [CompletionResult]::new('--system-prompt', '--system-prompt', [CompletionResultType]::ParameterName, 'Replace the summarizer instruction: TEXT, or @FILE to read it from a file')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Leave the input untouched; write its bytes plus the new lines to PATH (a directory for several files; `-` for stdout)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Leave the input untouched; write its bytes plus the new lines to PATH (a directory for several files; `-` for stdout)')
            [CompletionResult]::new('--record', '--record', [CompletionResultType]::ParameterName, 'Write the JSON decision records to PATH instead of stdout (`-`: stdout; `/dev/fd/N`: a descriptor the shell opened)')
            [CompletionResult]::new('-j', '-j', [CompletionResultType]::ParameterName, 'Files compacted and summarizer calls in flight at once')
            [CompletionResult]::new('--jobs', '--jobs', [CompletionResultType]::ParameterName, 'Files compacted and summarizer calls in flight at once')
            [CompletionResult]::new('--min-retention', '--min-retention', [CompletionResultType]::ParameterName, 'Decline a summary that keeps less than this share of the span''s items (0 turns it off) [default: 0.5] [env: MF_MIN_RETENTION]')
            [CompletionResult]::new('--base-url', '--base-url', [CompletionResultType]::ParameterName, 'API base URL (beats ANTHROPIC_BASE_URL / OPENAI_BASE_URL; required for openai-compatible:NAME) [env: MF_BASE_URL]')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Seconds one request may take, connect to last byte [default: 120] [env: MF_TIMEOUT]')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries after a failed attempt (connection errors, timeouts, 408, 409, 429, 5xx) [default: 2]')
            [CompletionResult]::new('--temperature', '--temperature', [CompletionResultType]::ParameterName, 'Sampling temperature, 0 to 2, for models that take one (not Anthropic 5.x, not OpenAI reasoning models)')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed for OpenAI-style servers that honour it (not Anthropic, which has none)')
            [CompletionResult]::new('--max-output-tokens', '--max-output-tokens', [CompletionResultType]::ParameterName, 'Cap on one summary''s output tokens [default: the model''s output budget]')
            [CompletionResult]::new('--anthropic-version', '--anthropic-version', [CompletionResultType]::ParameterName, '`anthropic-version` header')
            [CompletionResult]::new('--agent-model', '--agent-model', [CompletionResultType]::ParameterName, 'The model that wrote the conversation, when the file does not record it')
            [CompletionResult]::new('--price-in', '--price-in', [CompletionResultType]::ParameterName, 'Input price in USD per million tokens (overrides the table)')
            [CompletionResult]::new('--price-out', '--price-out', [CompletionResultType]::ParameterName, 'Output price in USD per million tokens (overrides the table)')
            [CompletionResult]::new('--max-cost', '--max-cost', [CompletionResultType]::ParameterName, 'Refuse to start calls whose estimated total cost exceeds USD')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]')
            [CompletionResult]::new('-0', '-0', [CompletionResultType]::ParameterName, 'With --files-from: paths are separated by NUL bytes (as `find -print0` writes them)')
            [CompletionResult]::new('--null', '--null', [CompletionResultType]::ParameterName, 'With --files-from: paths are separated by NUL bytes (as `find -print0` writes them)')
            [CompletionResult]::new('--rollup', '--rollup', [CompletionResultType]::ParameterName, 'After chunk summaries, fold them into one covering summary (every level stays expandable)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print the plan and its estimated cost without calling or writing anything')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Let --output replace an existing file, and write to an agent session that looks live')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON decision record per file (errors included), one per line')
            [CompletionResult]::new('--allow-degraded', '--allow-degraded', [CompletionResultType]::ParameterName, 'Exit 0 even when a summarizer failed and the span stayed verbatim')
            [CompletionResult]::new('--retry-lossy', '--retry-lossy', [CompletionResultType]::ParameterName, 'Ask once more, naming the missing items, when a summary is lossy')
            [CompletionResult]::new('--retry', '--retry', [CompletionResultType]::ParameterName, 'Ask again for spans declined before, whatever decided it (the record keeps why)')
            [CompletionResult]::new('--strict-audit', '--strict-audit', [CompletionResultType]::ParameterName, 'Also decline summaries with inventions or superseded values')
            [CompletionResult]::new('--audit-tool-results', '--audit-tool-results', [CompletionResultType]::ParameterName, 'Count items found only in tool results toward the retention threshold')
            [CompletionResult]::new('--count-tokens', '--count-tokens', [CompletionResultType]::ParameterName, 'With --dry-run, ask Anthropic''s free count_tokens endpoint for each request''s exact input tokens')
            [CompletionResult]::new('--allow-same-model', '--allow-same-model', [CompletionResultType]::ParameterName, 'Allow the summarizer to be the conversation''s own model (billed at its price)')
            [CompletionResult]::new('--allow-insecure-http', '--allow-insecure-http', [CompletionResultType]::ParameterName, 'Allow sending a key over plain http:// to a host that is not loopback')
            [CompletionResult]::new('--no-redact', '--no-redact', [CompletionResultType]::ParameterName, 'Send spans as they are, without replacing keys, tokens and passwords by placeholders')
            [CompletionResult]::new('--debug-bodies', '--debug-bodies', [CompletionResultType]::ParameterName, 'With -v, also print request and response bodies (they hold the transcript; keys stay redacted)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--no-cache', '--no-cache', [CompletionResultType]::ParameterName, 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'mf;recall' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--budget', '--budget', [CompletionResultType]::ParameterName, 'Keep summaries first, then the newest entries that fit in TOKENS (4 characters a token, 256 reserved)')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read the file as this format instead of detecting it')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--no-cache', '--no-cache', [CompletionResultType]::ParameterName, 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'mf;expand' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read the file as this format instead of detecting it')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]')
            [CompletionResult]::new('--deep', '--deep', [CompletionResultType]::ParameterName, 'Go down through nested summaries to the original messages')
            [CompletionResult]::new('--restore', '--restore', [CompletionResultType]::ParameterName, 'Retract the summary (append a retraction record): recall is verbatim again')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'With --restore: write to an agent session that looks live')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--no-cache', '--no-cache', [CompletionResultType]::ParameterName, 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'mf;explain' {
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'Plan as `compact --model MODEL` would, with that model''s span and output budgets [env: MF_MODEL]')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'Plan as `compact --model MODEL` would, with that model''s span and output budgets [env: MF_MODEL]')
            [CompletionResult]::new('--recent', '--recent', [CompletionResultType]::ParameterName, 'Entries at the end that stay verbatim (at least the newest tool unit); the seam is rounded out to a whole turn when the tail then fits --recent-tokens, else the turn is folded inside [default: 5] [env: MF_RECENT]')
            [CompletionResult]::new('--recent-tokens', '--recent-tokens', [CompletionResultType]::ParameterName, 'Most estimated tokens the verbatim tail holds: a turn larger than this is folded inside (its prompt and newest tool units stay verbatim, its older tool units fold) [default: 3000, which keeps a 20k-token session within about a third of its size]')
            [CompletionResult]::new('--size', '--size', [CompletionResultType]::ParameterName, 'Consider only the newest N uncovered entries (must be greater than --recent)')
            [CompletionResult]::new('--trigger', '--trigger', [CompletionResultType]::ParameterName, 'Make no call unless at least N uncovered entries exist [default: 20]')
            [CompletionResult]::new('--min-fold', '--min-fold', [CompletionResultType]::ParameterName, 'Make no call unless at least N entries would fold [default: 2]')
            [CompletionResult]::new('--target-tokens', '--target-tokens', [CompletionResultType]::ParameterName, 'Fold the oldest turns until the recall view is at most T estimated tokens')
            [CompletionResult]::new('--max-span-tokens', '--max-span-tokens', [CompletionResultType]::ParameterName, 'Most tokens one summarizer call may carry; larger spans are split into chunks [default: the model''s budget]')
            [CompletionResult]::new('--protect', '--protect', [CompletionResultType]::ParameterName, 'Keep real user messages out of every fold (they stay verbatim)')
            [CompletionResult]::new('--strategy', '--strategy', [CompletionResultType]::ParameterName, 'What to fold with: summary, mask (stub old tool results, no call), mask,summary, cited')
            [CompletionResult]::new('--keep-tool-results', '--keep-tool-results', [CompletionResultType]::ParameterName, 'With --strategy mask: the most recent tool results that stay verbatim [default: 3]')
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read the file as this format instead of detecting it')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print as one JSON object')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--no-cache', '--no-cache', [CompletionResultType]::ParameterName, 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'mf;verify' {
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'Read the files as this format instead of detecting it')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object per file')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--no-cache', '--no-cache', [CompletionResultType]::ParameterName, 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'mf;models' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print as JSON')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--no-cache', '--no-cache', [CompletionResultType]::ParameterName, 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mf;sessions' {
            [CompletionResult]::new('--agent', '--agent', [CompletionResultType]::ParameterName, 'Only this agent''s sessions')
            [CompletionResult]::new('--cwd', '--cwd', [CompletionResultType]::ParameterName, 'Only sessions run in this directory')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]')
            [CompletionResult]::new('--latest', '--latest', [CompletionResultType]::ParameterName, 'Only the newest session (after --agent and --cwd)')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print one JSON object per session, one per line')
            [CompletionResult]::new('-0', '-0', [CompletionResultType]::ParameterName, 'Print only the paths, each ended by a NUL byte (for `mf compact --files-from - -0`)')
            [CompletionResult]::new('--null', '--null', [CompletionResultType]::ParameterName, 'Print only the paths, each ended by a NUL byte (for `mf compact --files-from - -0`)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--no-cache', '--no-cache', [CompletionResultType]::ParameterName, 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'mf;hook' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--no-cache', '--no-cache', [CompletionResultType]::ParameterName, 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('claude-code', 'claude-code', [CompletionResultType]::ParameterValue, 'Claude Code''s hook: reads the hook''s JSON on stdin (PreCompact: print a keep-list; SessionStart after a compaction: report what the summary lost); never blocks, never writes the session')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Add mf''s hooks to an agent''s settings (merging, idempotent, with a backup)')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove mf''s hooks from an agent''s settings (with a backup)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'mf;hook;claude-code' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--no-cache', '--no-cache', [CompletionResultType]::ParameterName, 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mf;hook;install' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]')
            [CompletionResult]::new('--project', '--project', [CompletionResultType]::ParameterName, 'Claude Code: the project''s `.claude/settings.json` (in the current directory)')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'Claude Code: the user''s `~/.claude/settings.json` (the default)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print what would change without writing')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--no-cache', '--no-cache', [CompletionResultType]::ParameterName, 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'mf;hook;uninstall' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]')
            [CompletionResult]::new('--project', '--project', [CompletionResultType]::ParameterName, 'Claude Code: the project''s `.claude/settings.json` (in the current directory)')
            [CompletionResult]::new('--user', '--user', [CompletionResultType]::ParameterName, 'Claude Code: the user''s `~/.claude/settings.json` (the default)')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print what would change without writing')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--no-cache', '--no-cache', [CompletionResultType]::ParameterName, 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'mf;hook;help' {
            [CompletionResult]::new('claude-code', 'claude-code', [CompletionResultType]::ParameterValue, 'Claude Code''s hook: reads the hook''s JSON on stdin (PreCompact: print a keep-list; SessionStart after a compaction: report what the summary lost); never blocks, never writes the session')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Add mf''s hooks to an agent''s settings (merging, idempotent, with a backup)')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove mf''s hooks from an agent''s settings (with a backup)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'mf;hook;help;claude-code' {
            break
        }
        'mf;hook;help;install' {
            break
        }
        'mf;hook;help;uninstall' {
            break
        }
        'mf;hook;help;help' {
            break
        }
        'mf;completions' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--no-cache', '--no-cache', [CompletionResultType]::ParameterName, 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mf;man' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--no-cache', '--no-cache', [CompletionResultType]::ParameterName, 'Read every file in full: no checkpoint of a large file''s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mf;help' {
            [CompletionResult]::new('compact', 'compact', [CompletionResultType]::ParameterValue, 'Fold older turns into a summary and append it, printing the decision record')
            [CompletionResult]::new('recall', 'recall', [CompletionResultType]::ParameterValue, 'Print what a model should see now: standing summaries and the turns they do not cover')
            [CompletionResult]::new('expand', 'expand', [CompletionResultType]::ParameterValue, 'Print the originals behind a summary; `--restore` retracts the summary')
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'Show every decision recorded in the file, suspicious lines, and what `compact` would do now')
            [CompletionResult]::new('verify', 'verify', [CompletionResultType]::ParameterValue, 'Check a file''s integrity without calling anything: exit 0 when clean, 1 with the problems')
            [CompletionResult]::new('models', 'models', [CompletionResultType]::ParameterValue, 'List the summarizer models mf knows: aliases, providers, ids, budgets and prices')
            [CompletionResult]::new('sessions', 'sessions', [CompletionResultType]::ParameterValue, 'List the sessions of Claude Code, Codex and pi on this machine, newest first')
            [CompletionResult]::new('hook', 'hook', [CompletionResultType]::ParameterValue, 'Run as an agent''s compaction hook, or install mf''s hooks into an agent''s settings')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script to stdout')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the man page of mf, or of one of its commands, in roff')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'mf;help;compact' {
            break
        }
        'mf;help;recall' {
            break
        }
        'mf;help;expand' {
            break
        }
        'mf;help;explain' {
            break
        }
        'mf;help;verify' {
            break
        }
        'mf;help;models' {
            break
        }
        'mf;help;sessions' {
            break
        }
        'mf;help;hook' {
            [CompletionResult]::new('claude-code', 'claude-code', [CompletionResultType]::ParameterValue, 'Claude Code''s hook: reads the hook''s JSON on stdin (PreCompact: print a keep-list; SessionStart after a compaction: report what the summary lost); never blocks, never writes the session')
            [CompletionResult]::new('install', 'install', [CompletionResultType]::ParameterValue, 'Add mf''s hooks to an agent''s settings (merging, idempotent, with a backup)')
            [CompletionResult]::new('uninstall', 'uninstall', [CompletionResultType]::ParameterValue, 'Remove mf''s hooks from an agent''s settings (with a backup)')
            break
        }
        'mf;help;hook;claude-code' {
            break
        }
        'mf;help;hook;install' {
            break
        }
        'mf;help;hook;uninstall' {
            break
        }
        'mf;help;completions' {
            break
        }
        'mf;help;man' {
            break
        }
        'mf;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
