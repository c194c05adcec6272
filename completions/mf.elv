
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
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand compact 'Fold older turns into a summary and append it, printing the decision record'
            cand recall 'Print what a model should see now: standing summaries and the turns they do not cover'
            cand expand 'Print the originals behind a summary; `--restore` retracts the summary'
            cand explain 'Show every decision recorded in the file, suspicious lines, and what `compact` would do now'
            cand models 'List the summarizer models mf knows: aliases, providers, ids, context sizes and prices'
            cand completions 'Print a shell completion script to stdout'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'mf;compact'= {
            cand -m 'Summarizer model (required; or MF_MODEL). `extractive` is the built-in offline summarizer'
            cand --model 'Summarizer model (required; or MF_MODEL). `extractive` is the built-in offline summarizer'
            cand --recent 'Entries at the end that stay verbatim; the seam is rounded out to a whole turn [default: 5]'
            cand --size 'Consider only the newest N uncovered entries (must be greater than --recent)'
            cand --trigger 'Make no call unless at least N uncovered entries exist [default: 20]'
            cand --min-fold 'Make no call unless at least N entries would fold [default: 2]'
            cand --system-prompt 'Replace the summarizer instruction: TEXT, or @FILE to read it from a file'
            cand -o 'Leave the input untouched; write the input''s bytes plus the new lines to PATH (a directory when several files are given)'
            cand --output 'Leave the input untouched; write the input''s bytes plus the new lines to PATH (a directory when several files are given)'
            cand -j 'Files compacted at once'
            cand --jobs 'Files compacted at once'
            cand --base-url 'API base URL (beats ANTHROPIC_BASE_URL / OPENAI_BASE_URL; required for openai-compatible:NAME; or MF_BASE_URL)'
            cand --timeout 'Seconds one request may take, connect to last byte [default: 120]'
            cand --retries 'Retries after a failed attempt (connection errors, timeouts, 408, 409, 429, 5xx) [default: 2]'
            cand --temperature 'Sampling temperature (sent only when given)'
            cand --seed 'Seed for OpenAI-style servers that honour it (with --temperature 0 for repeatable output)'
            cand --max-output-tokens 'Cap on the summary''s output tokens [default: sized to the span]'
            cand --anthropic-version '`anthropic-version` header'
            cand --agent-model 'The model that wrote the conversation, when the file does not record it'
            cand --price-in 'Input price in USD per million tokens (overrides the table)'
            cand --price-out 'Output price in USD per million tokens (overrides the table)'
            cand --max-cost 'Refuse to start calls whose estimated total cost exceeds USD'
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]'
            cand --dry-run 'Print the plan without calling the summarizer or writing anything'
            cand --json 'Print decision records as JSON, one object per line'
            cand --allow-same-model 'Allow the summarizer to be the conversation''s own model (billed at its price)'
            cand --allow-insecure-http 'Allow sending a key over plain http:// to a host that is not loopback'
            cand --debug-bodies 'With -v, also print request and response bodies (they hold the transcript; keys stay redacted)'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mf;recall'= {
            cand --format 'Output format'
            cand --budget 'Keep summaries first, then the newest entries that fit in TOKENS (4 characters a token, 256 reserved)'
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'mf;expand'= {
            cand --format 'Output format'
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]'
            cand --deep 'Go down through nested summaries to the original messages'
            cand --restore 'Retract the summary (append a retraction record): recall is verbatim again'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'mf;explain'= {
            cand --recent 'Entries at the end that stay verbatim; the seam is rounded out to a whole turn [default: 5]'
            cand --size 'Consider only the newest N uncovered entries (must be greater than --recent)'
            cand --trigger 'Make no call unless at least N uncovered entries exist [default: 20]'
            cand --min-fold 'Make no call unless at least N entries would fold [default: 2]'
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]'
            cand --json 'Print as one JSON object'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mf;models'= {
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]'
            cand --json 'Print as JSON'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mf;completions'= {
            cand --config 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)'
            cand -v 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand --verbose 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mf;help'= {
            cand compact 'Fold older turns into a summary and append it, printing the decision record'
            cand recall 'Print what a model should see now: standing summaries and the turns they do not cover'
            cand expand 'Print the originals behind a summary; `--restore` retracts the summary'
            cand explain 'Show every decision recorded in the file, suspicious lines, and what `compact` would do now'
            cand models 'List the summarizer models mf knows: aliases, providers, ids, context sizes and prices'
            cand completions 'Print a shell completion script to stdout'
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
        &'mf;help;models'= {
        }
        &'mf;help;completions'= {
        }
        &'mf;help;help'= {
        }
    ]
    $completions[$command]
}
