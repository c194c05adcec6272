# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_mf_global_optspecs
    string join \n q/quiet no-progress v/verbose config= h/help V/version
end

function __fish_mf_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_mf_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_mf_using_subcommand
    set -l cmd (__fish_mf_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c mf -n "__fish_mf_needs_command" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]' -r -F
complete -c mf -n "__fish_mf_needs_command" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_needs_command" -l no-progress -d 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)'
complete -c mf -n "__fish_mf_needs_command" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mf -n "__fish_mf_needs_command" -s V -l version -d 'Print version'
complete -c mf -n "__fish_mf_needs_command" -f -a "compact" -d 'Fold older turns into a summary and append it, printing the decision record'
complete -c mf -n "__fish_mf_needs_command" -f -a "recall" -d 'Print what a model should see now: standing summaries and the turns they do not cover'
complete -c mf -n "__fish_mf_needs_command" -f -a "expand" -d 'Print the originals behind a summary; `--restore` retracts the summary'
complete -c mf -n "__fish_mf_needs_command" -f -a "explain" -d 'Show every decision recorded in the file, suspicious lines, and what `compact` would do now'
complete -c mf -n "__fish_mf_needs_command" -f -a "models" -d 'List the summarizer models mf knows: aliases, providers, ids, context sizes and prices'
complete -c mf -n "__fish_mf_needs_command" -f -a "completions" -d 'Print a shell completion script to stdout'
complete -c mf -n "__fish_mf_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mf -n "__fish_mf_using_subcommand compact" -s m -l model -d 'Summarizer model (required; or MF_MODEL). `extractive` is the built-in offline summarizer' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l recent -d 'Entries at the end that stay verbatim; the seam is rounded out to a whole turn [default: 5]' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l size -d 'Consider only the newest N uncovered entries (must be greater than --recent)' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l trigger -d 'Make no call unless at least N uncovered entries exist [default: 20]' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l min-fold -d 'Make no call unless at least N entries would fold [default: 2]' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l system-prompt -d 'Replace the summarizer instruction: TEXT, or @FILE to read it from a file' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -s o -l output -d 'Leave the input untouched; write the input\'s bytes plus the new lines to PATH (a directory when several files are given)' -r -F
complete -c mf -n "__fish_mf_using_subcommand compact" -s j -l jobs -d 'Files compacted at once' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l base-url -d 'API base URL (beats ANTHROPIC_BASE_URL / OPENAI_BASE_URL; required for openai-compatible:NAME; or MF_BASE_URL)' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l timeout -d 'Seconds one request may take, connect to last byte [default: 120]' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l retries -d 'Retries after a failed attempt (connection errors, timeouts, 408, 409, 429, 5xx) [default: 2]' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l temperature -d 'Sampling temperature (sent only when given)' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l seed -d 'Seed for OpenAI-style servers that honour it (with --temperature 0 for repeatable output)' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l max-output-tokens -d 'Cap on the summary\'s output tokens [default: sized to the span]' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l anthropic-version -d '`anthropic-version` header' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l agent-model -d 'The model that wrote the conversation, when the file does not record it' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l price-in -d 'Input price in USD per million tokens (overrides the table)' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l price-out -d 'Output price in USD per million tokens (overrides the table)' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l max-cost -d 'Refuse to start calls whose estimated total cost exceeds USD' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]' -r -F
complete -c mf -n "__fish_mf_using_subcommand compact" -l dry-run -d 'Print the plan without calling the summarizer or writing anything'
complete -c mf -n "__fish_mf_using_subcommand compact" -l json -d 'Print decision records as JSON, one object per line'
complete -c mf -n "__fish_mf_using_subcommand compact" -l allow-same-model -d 'Allow the summarizer to be the conversation\'s own model (billed at its price)'
complete -c mf -n "__fish_mf_using_subcommand compact" -l allow-insecure-http -d 'Allow sending a key over plain http:// to a host that is not loopback'
complete -c mf -n "__fish_mf_using_subcommand compact" -l debug-bodies -d 'With -v, also print request and response bodies (they hold the transcript; keys stay redacted)'
complete -c mf -n "__fish_mf_using_subcommand compact" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_using_subcommand compact" -l no-progress -d 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)'
complete -c mf -n "__fish_mf_using_subcommand compact" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_using_subcommand compact" -s h -l help -d 'Print help'
complete -c mf -n "__fish_mf_using_subcommand recall" -l format -d 'Output format' -r -f -a "jsonl\t'Chat-shaped JSON lines, ready to send to a model'
text\t'Readable text'
memory\t'`<memory source="turn:N">…</memory>` blocks'"
complete -c mf -n "__fish_mf_using_subcommand recall" -l budget -d 'Keep summaries first, then the newest entries that fit in TOKENS (4 characters a token, 256 reserved)' -r
complete -c mf -n "__fish_mf_using_subcommand recall" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]' -r -F
complete -c mf -n "__fish_mf_using_subcommand recall" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_using_subcommand recall" -l no-progress -d 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)'
complete -c mf -n "__fish_mf_using_subcommand recall" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_using_subcommand recall" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mf -n "__fish_mf_using_subcommand expand" -l format -d 'Output format' -r -f -a "jsonl\t'The original lines, byte for byte'
text\t'Readable text'"
complete -c mf -n "__fish_mf_using_subcommand expand" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]' -r -F
complete -c mf -n "__fish_mf_using_subcommand expand" -l deep -d 'Go down through nested summaries to the original messages'
complete -c mf -n "__fish_mf_using_subcommand expand" -l restore -d 'Retract the summary (append a retraction record): recall is verbatim again'
complete -c mf -n "__fish_mf_using_subcommand expand" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_using_subcommand expand" -l no-progress -d 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)'
complete -c mf -n "__fish_mf_using_subcommand expand" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_using_subcommand expand" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mf -n "__fish_mf_using_subcommand explain" -l recent -d 'Entries at the end that stay verbatim; the seam is rounded out to a whole turn [default: 5]' -r
complete -c mf -n "__fish_mf_using_subcommand explain" -l size -d 'Consider only the newest N uncovered entries (must be greater than --recent)' -r
complete -c mf -n "__fish_mf_using_subcommand explain" -l trigger -d 'Make no call unless at least N uncovered entries exist [default: 20]' -r
complete -c mf -n "__fish_mf_using_subcommand explain" -l min-fold -d 'Make no call unless at least N entries would fold [default: 2]' -r
complete -c mf -n "__fish_mf_using_subcommand explain" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]' -r -F
complete -c mf -n "__fish_mf_using_subcommand explain" -l json -d 'Print as one JSON object'
complete -c mf -n "__fish_mf_using_subcommand explain" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_using_subcommand explain" -l no-progress -d 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)'
complete -c mf -n "__fish_mf_using_subcommand explain" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_using_subcommand explain" -s h -l help -d 'Print help'
complete -c mf -n "__fish_mf_using_subcommand models" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]' -r -F
complete -c mf -n "__fish_mf_using_subcommand models" -l json -d 'Print as JSON'
complete -c mf -n "__fish_mf_using_subcommand models" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_using_subcommand models" -l no-progress -d 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)'
complete -c mf -n "__fish_mf_using_subcommand models" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_using_subcommand models" -s h -l help -d 'Print help'
complete -c mf -n "__fish_mf_using_subcommand completions" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml]' -r -F
complete -c mf -n "__fish_mf_using_subcommand completions" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_using_subcommand completions" -l no-progress -d 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)'
complete -c mf -n "__fish_mf_using_subcommand completions" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_using_subcommand completions" -s h -l help -d 'Print help'
complete -c mf -n "__fish_mf_using_subcommand help; and not __fish_seen_subcommand_from compact recall expand explain models completions help" -f -a "compact" -d 'Fold older turns into a summary and append it, printing the decision record'
complete -c mf -n "__fish_mf_using_subcommand help; and not __fish_seen_subcommand_from compact recall expand explain models completions help" -f -a "recall" -d 'Print what a model should see now: standing summaries and the turns they do not cover'
complete -c mf -n "__fish_mf_using_subcommand help; and not __fish_seen_subcommand_from compact recall expand explain models completions help" -f -a "expand" -d 'Print the originals behind a summary; `--restore` retracts the summary'
complete -c mf -n "__fish_mf_using_subcommand help; and not __fish_seen_subcommand_from compact recall expand explain models completions help" -f -a "explain" -d 'Show every decision recorded in the file, suspicious lines, and what `compact` would do now'
complete -c mf -n "__fish_mf_using_subcommand help; and not __fish_seen_subcommand_from compact recall expand explain models completions help" -f -a "models" -d 'List the summarizer models mf knows: aliases, providers, ids, context sizes and prices'
complete -c mf -n "__fish_mf_using_subcommand help; and not __fish_seen_subcommand_from compact recall expand explain models completions help" -f -a "completions" -d 'Print a shell completion script to stdout'
complete -c mf -n "__fish_mf_using_subcommand help; and not __fish_seen_subcommand_from compact recall expand explain models completions help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
