
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
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('compact', 'compact', [CompletionResultType]::ParameterValue, 'Fold older turns into a summary and append it, printing the decision record')
            [CompletionResult]::new('recall', 'recall', [CompletionResultType]::ParameterValue, 'Print what a model should see now: standing summaries and the turns they do not cover')
            [CompletionResult]::new('expand', 'expand', [CompletionResultType]::ParameterValue, 'Print the originals behind a summary; `--restore` retracts the summary')
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'Show every decision recorded in the file, suspicious lines, and what `compact` would do now')
            [CompletionResult]::new('models', 'models', [CompletionResultType]::ParameterValue, 'List the summarizer models mf knows: aliases, providers, ids, context sizes and prices')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script to stdout')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'mf;compact' {
            [CompletionResult]::new('-m', '-m', [CompletionResultType]::ParameterName, 'Summarizer model (required; or MF_MODEL). `extractive` is the built-in offline summarizer')
            [CompletionResult]::new('--model', '--model', [CompletionResultType]::ParameterName, 'Summarizer model (required; or MF_MODEL). `extractive` is the built-in offline summarizer')
            [CompletionResult]::new('--recent', '--recent', [CompletionResultType]::ParameterName, 'Entries at the end that stay verbatim; the seam is rounded out to a whole turn [default: 5]')
            [CompletionResult]::new('--size', '--size', [CompletionResultType]::ParameterName, 'Consider only the newest N uncovered entries (must be greater than --recent)')
            [CompletionResult]::new('--trigger', '--trigger', [CompletionResultType]::ParameterName, 'Make no call unless at least N uncovered entries exist [default: 20]')
            [CompletionResult]::new('--min-fold', '--min-fold', [CompletionResultType]::ParameterName, 'Make no call unless at least N entries would fold [default: 2]')
            [CompletionResult]::new('--system-prompt', '--system-prompt', [CompletionResultType]::ParameterName, 'Replace the summarizer instruction: TEXT, or @FILE to read it from a file')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Leave the input untouched; write the input''s bytes plus the new lines to PATH (a directory when several files are given)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Leave the input untouched; write the input''s bytes plus the new lines to PATH (a directory when several files are given)')
            [CompletionResult]::new('-j', '-j', [CompletionResultType]::ParameterName, 'Files compacted at once')
            [CompletionResult]::new('--jobs', '--jobs', [CompletionResultType]::ParameterName, 'Files compacted at once')
            [CompletionResult]::new('--base-url', '--base-url', [CompletionResultType]::ParameterName, 'API base URL (beats ANTHROPIC_BASE_URL / OPENAI_BASE_URL; required for openai-compatible:NAME; or MF_BASE_URL)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Seconds one request may take, connect to last byte [default: 120]')
            [CompletionResult]::new('--retries', '--retries', [CompletionResultType]::ParameterName, 'Retries after a failed attempt (connection errors, timeouts, 408, 409, 429, 5xx) [default: 2]')
            [CompletionResult]::new('--temperature', '--temperature', [CompletionResultType]::ParameterName, 'Sampling temperature (sent only when given)')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed for OpenAI-style servers that honour it (with --temperature 0 for repeatable output)')
            [CompletionResult]::new('--max-output-tokens', '--max-output-tokens', [CompletionResultType]::ParameterName, 'Cap on the summary''s output tokens [default: sized to the span]')
            [CompletionResult]::new('--anthropic-version', '--anthropic-version', [CompletionResultType]::ParameterName, '`anthropic-version` header')
            [CompletionResult]::new('--agent-model', '--agent-model', [CompletionResultType]::ParameterName, 'The model that wrote the conversation, when the file does not record it')
            [CompletionResult]::new('--price-in', '--price-in', [CompletionResultType]::ParameterName, 'Input price in USD per million tokens (overrides the table)')
            [CompletionResult]::new('--price-out', '--price-out', [CompletionResultType]::ParameterName, 'Output price in USD per million tokens (overrides the table)')
            [CompletionResult]::new('--max-cost', '--max-cost', [CompletionResultType]::ParameterName, 'Refuse to start calls whose estimated total cost exceeds USD')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Print the plan without calling the summarizer or writing anything')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print decision records as JSON, one object per line')
            [CompletionResult]::new('--allow-same-model', '--allow-same-model', [CompletionResultType]::ParameterName, 'Allow the summarizer to be the conversation''s own model (billed at its price)')
            [CompletionResult]::new('--allow-insecure-http', '--allow-insecure-http', [CompletionResultType]::ParameterName, 'Allow sending a key over plain http:// to a host that is not loopback')
            [CompletionResult]::new('--debug-bodies', '--debug-bodies', [CompletionResultType]::ParameterName, 'With -v, also print request and response bodies (they hold the transcript; keys stay redacted)')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mf;recall' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--budget', '--budget', [CompletionResultType]::ParameterName, 'Keep summaries first, then the newest entries that fit in TOKENS (4 characters a token, 256 reserved)')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'mf;expand' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Output format')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]')
            [CompletionResult]::new('--deep', '--deep', [CompletionResultType]::ParameterName, 'Go down through nested summaries to the original messages')
            [CompletionResult]::new('--restore', '--restore', [CompletionResultType]::ParameterName, 'Retract the summary (append a retraction record): recall is verbatim again')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help (see more with ''--help'')')
            break
        }
        'mf;explain' {
            [CompletionResult]::new('--recent', '--recent', [CompletionResultType]::ParameterName, 'Entries at the end that stay verbatim; the seam is rounded out to a whole turn [default: 5]')
            [CompletionResult]::new('--size', '--size', [CompletionResultType]::ParameterName, 'Consider only the newest N uncovered entries (must be greater than --recent)')
            [CompletionResult]::new('--trigger', '--trigger', [CompletionResultType]::ParameterName, 'Make no call unless at least N uncovered entries exist [default: 20]')
            [CompletionResult]::new('--min-fold', '--min-fold', [CompletionResultType]::ParameterName, 'Make no call unless at least N entries would fold [default: 2]')
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print as one JSON object')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mf;models' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]')
            [CompletionResult]::new('--json', '--json', [CompletionResultType]::ParameterName, 'Print as JSON')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mf;completions' {
            [CompletionResult]::new('--config', '--config', [CompletionResultType]::ParameterName, 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]')
            [CompletionResult]::new('-q', '-q', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--quiet', '--quiet', [CompletionResultType]::ParameterName, 'Print no warnings or notes on stderr (errors still print)')
            [CompletionResult]::new('--no-progress', '--no-progress', [CompletionResultType]::ParameterName, 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)')
            [CompletionResult]::new('-v', '-v', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('--verbose', '--verbose', [CompletionResultType]::ParameterName, 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'mf;help' {
            [CompletionResult]::new('compact', 'compact', [CompletionResultType]::ParameterValue, 'Fold older turns into a summary and append it, printing the decision record')
            [CompletionResult]::new('recall', 'recall', [CompletionResultType]::ParameterValue, 'Print what a model should see now: standing summaries and the turns they do not cover')
            [CompletionResult]::new('expand', 'expand', [CompletionResultType]::ParameterValue, 'Print the originals behind a summary; `--restore` retracts the summary')
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'Show every decision recorded in the file, suspicious lines, and what `compact` would do now')
            [CompletionResult]::new('models', 'models', [CompletionResultType]::ParameterValue, 'List the summarizer models mf knows: aliases, providers, ids, context sizes and prices')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a shell completion script to stdout')
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
        'mf;help;models' {
            break
        }
        'mf;help;completions' {
            break
        }
        'mf;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
