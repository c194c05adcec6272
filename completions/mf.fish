# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_mf_global_optspecs
    string join \n q/quiet no-progress v/verbose no-cache config= h/help V/version
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

complete -c mf -n "__fish_mf_needs_command" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]' -r -F
complete -c mf -n "__fish_mf_needs_command" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_needs_command" -l no-progress -d 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
complete -c mf -n "__fish_mf_needs_command" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_needs_command" -l no-cache -d 'Read every file in full: no checkpoint of a large file\'s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
complete -c mf -n "__fish_mf_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mf -n "__fish_mf_needs_command" -s V -l version -d 'Print version'
complete -c mf -n "__fish_mf_needs_command" -f -a "compact" -d 'Fold older turns into a summary and append it, printing the decision record'
complete -c mf -n "__fish_mf_needs_command" -f -a "recall" -d 'Print what a model should see now: standing summaries and the turns they do not cover'
complete -c mf -n "__fish_mf_needs_command" -f -a "expand" -d 'Print the originals behind a summary; `--restore` retracts the summary'
complete -c mf -n "__fish_mf_needs_command" -f -a "explain" -d 'Show every decision recorded in the file, suspicious lines, and what `compact` would do now'
complete -c mf -n "__fish_mf_needs_command" -f -a "verify" -d 'Check a file\'s integrity without calling anything: exit 0 when clean, 1 with the problems'
complete -c mf -n "__fish_mf_needs_command" -f -a "models" -d 'List the summarizer models mf knows: aliases, providers, ids, budgets and prices'
complete -c mf -n "__fish_mf_needs_command" -f -a "sessions" -d 'List the sessions of Claude Code, Codex and pi on this machine, newest first'
complete -c mf -n "__fish_mf_needs_command" -f -a "hook" -d 'Run as an agent\'s compaction hook, or install mf\'s hooks into an agent\'s settings'
complete -c mf -n "__fish_mf_needs_command" -f -a "completions" -d 'Print a shell completion script to stdout'
complete -c mf -n "__fish_mf_needs_command" -f -a "man" -d 'Print the man page of mf, or of one of its commands, in roff'
complete -c mf -n "__fish_mf_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mf -n "__fish_mf_using_subcommand compact" -l latest -d 'Compact the agent\'s newest session (see `mf sessions`), with --cwd: the newest one run there' -r -f -a "claude\t'Claude Code'
codex\t'Codex CLI'
pi\t'pi coding agent'"
complete -c mf -n "__fish_mf_using_subcommand compact" -l cwd -d 'With --latest: only sessions run in this directory' -r -F
complete -c mf -n "__fish_mf_using_subcommand compact" -l files-from -d 'Read file paths from FILE (`-` for standard input), one per line' -r -F
complete -c mf -n "__fish_mf_using_subcommand compact" -s m -l model -d 'Summarizer model (required; never defaulted); `extractive` is the built-in offline one [env: MF_MODEL]' -r -f -a "extractive\t''
haiku\t''
sonnet\t''
opus\t''
fable\t''
gpt-6-luna\t''
gpt-5.6-luna\t''
gpt-5.6-terra\t''
claude-haiku-4-5\t''
claude-sonnet-4-6\t''
claude-opus-4-6\t''
gpt-5-mini\t''
gpt-4o-mini\t''
gpt-4o\t''
gpt-4.1-mini\t''
gpt-4.1\t''
openai-compatible:\t''"
complete -c mf -n "__fish_mf_using_subcommand compact" -l recent -d 'Entries at the end that stay verbatim (at least the newest tool unit); the seam is rounded out to a whole turn when the tail then fits --recent-tokens, else the turn is folded inside [default: 5] [env: MF_RECENT]' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l recent-tokens -d 'Most estimated tokens the verbatim tail holds: a turn larger than this is folded inside (its prompt and newest tool units stay verbatim, its older tool units fold) [default: 3000, which keeps a 20k-token session within about a third of its size]' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l size -d 'Consider only the newest N uncovered entries (must be greater than --recent)' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l trigger -d 'Make no call unless at least N uncovered entries exist [default: 20]' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l min-fold -d 'Make no call unless at least N entries would fold [default: 2]' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l target-tokens -d 'Fold the oldest turns until the recall view is at most T estimated tokens' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l max-span-tokens -d 'Most tokens one summarizer call may carry; larger spans are split into chunks [default: the model\'s budget]' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l protect -d 'Keep real user messages out of every fold (they stay verbatim)' -r -f -a "user\t'Real user messages'
none\t'Nothing (the default, except for --strategy cited)'"
complete -c mf -n "__fish_mf_using_subcommand compact" -l strategy -d 'What to fold with: summary, mask (stub old tool results, no call), mask,summary, cited' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l keep-tool-results -d 'With --strategy mask: the most recent tool results that stay verbatim [default: 3]' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l from -d 'Read the file as this format instead of detecting it' -r -f -a "chat\t'One chat message per line'
claude\t'A Claude Code session'
codex\t'A Codex CLI rollout'
pi\t'A pi coding-agent session'"
complete -c mf -n "__fish_mf_using_subcommand compact" -l system-prompt -d 'Replace the summarizer instruction: TEXT, or @FILE to read it from a file' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -s o -l output -d 'Leave the input untouched; write its bytes plus the new lines to PATH (a directory for several files; `-` for stdout)' -r -F
complete -c mf -n "__fish_mf_using_subcommand compact" -l record -d 'Write the JSON decision records to PATH instead of stdout (`-`: stdout; `/dev/fd/N`: a descriptor the shell opened)' -r -F
complete -c mf -n "__fish_mf_using_subcommand compact" -s j -l jobs -d 'Files compacted and summarizer calls in flight at once' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l min-retention -d 'Decline a summary that keeps less than this share of the span\'s items (0 turns it off) [default: 0.5] [env: MF_MIN_RETENTION]' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l base-url -d 'API base URL (beats ANTHROPIC_BASE_URL / OPENAI_BASE_URL; required for openai-compatible:NAME) [env: MF_BASE_URL]' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l timeout -d 'Seconds one request may take, connect to last byte [default: 120] [env: MF_TIMEOUT]' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l retries -d 'Retries after a failed attempt (connection errors, timeouts, 408, 409, 429, 5xx) [default: 2]' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l temperature -d 'Sampling temperature, 0 to 2, for models that take one (not Anthropic 5.x, not OpenAI reasoning models)' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l seed -d 'Seed for OpenAI-style servers that honour it (not Anthropic, which has none)' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l max-output-tokens -d 'Cap on one summary\'s output tokens [default: the model\'s output budget]' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l anthropic-version -d '`anthropic-version` header' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l agent-model -d 'The model that wrote the conversation, when the file does not record it' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l price-in -d 'Input price in USD per million tokens (overrides the table)' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l price-out -d 'Output price in USD per million tokens (overrides the table)' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l max-cost -d 'Refuse to start calls whose estimated total cost exceeds USD' -r
complete -c mf -n "__fish_mf_using_subcommand compact" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]' -r -F
complete -c mf -n "__fish_mf_using_subcommand compact" -s 0 -l null -d 'With --files-from: paths are separated by NUL bytes (as `find -print0` writes them)'
complete -c mf -n "__fish_mf_using_subcommand compact" -l rollup -d 'After chunk summaries, fold them into one covering summary (every level stays expandable)'
complete -c mf -n "__fish_mf_using_subcommand compact" -l dry-run -d 'Print the plan and its estimated cost without calling or writing anything'
complete -c mf -n "__fish_mf_using_subcommand compact" -l force -d 'Let --output replace an existing file, and write to an agent session that looks live'
complete -c mf -n "__fish_mf_using_subcommand compact" -l json -d 'Print one JSON decision record per file (errors included), one per line'
complete -c mf -n "__fish_mf_using_subcommand compact" -l allow-degraded -d 'Exit 0 even when a summarizer failed and the span stayed verbatim'
complete -c mf -n "__fish_mf_using_subcommand compact" -l retry-lossy -d 'Ask once more, naming the missing items, when a summary is lossy'
complete -c mf -n "__fish_mf_using_subcommand compact" -l retry -d 'Ask again for spans declined before, whatever decided it (the record keeps why)'
complete -c mf -n "__fish_mf_using_subcommand compact" -l strict-audit -d 'Also decline summaries with inventions or superseded values'
complete -c mf -n "__fish_mf_using_subcommand compact" -l audit-tool-results -d 'Count items found only in tool results toward the retention threshold'
complete -c mf -n "__fish_mf_using_subcommand compact" -l count-tokens -d 'With --dry-run, ask Anthropic\'s free count_tokens endpoint for each request\'s exact input tokens'
complete -c mf -n "__fish_mf_using_subcommand compact" -l allow-same-model -d 'Allow the summarizer to be the conversation\'s own model (billed at its price)'
complete -c mf -n "__fish_mf_using_subcommand compact" -l allow-insecure-http -d 'Allow sending a key over plain http:// to a host that is not loopback'
complete -c mf -n "__fish_mf_using_subcommand compact" -l no-redact -d 'Send spans as they are, without replacing keys, tokens and passwords by placeholders'
complete -c mf -n "__fish_mf_using_subcommand compact" -l debug-bodies -d 'With -v, also print request and response bodies (they hold the transcript; keys stay redacted)'
complete -c mf -n "__fish_mf_using_subcommand compact" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_using_subcommand compact" -l no-progress -d 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
complete -c mf -n "__fish_mf_using_subcommand compact" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_using_subcommand compact" -l no-cache -d 'Read every file in full: no checkpoint of a large file\'s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
complete -c mf -n "__fish_mf_using_subcommand compact" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mf -n "__fish_mf_using_subcommand recall" -l format -d 'Output format' -r -f -a "chat\t'Chat-shaped JSON lines (`role`, `content`, tool fields), ready to send to a model'
native\t'The source\'s own line shape (what the agent reads back)'
text\t'Readable text'
memory\t'`<memory source="turn:N">…</memory>` blocks'"
complete -c mf -n "__fish_mf_using_subcommand recall" -l budget -d 'Keep summaries first, then the newest entries that fit in TOKENS (4 characters a token, 256 reserved)' -r
complete -c mf -n "__fish_mf_using_subcommand recall" -l from -d 'Read the file as this format instead of detecting it' -r -f -a "chat\t'One chat message per line'
claude\t'A Claude Code session'
codex\t'A Codex CLI rollout'
pi\t'A pi coding-agent session'"
complete -c mf -n "__fish_mf_using_subcommand recall" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]' -r -F
complete -c mf -n "__fish_mf_using_subcommand recall" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_using_subcommand recall" -l no-progress -d 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
complete -c mf -n "__fish_mf_using_subcommand recall" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_using_subcommand recall" -l no-cache -d 'Read every file in full: no checkpoint of a large file\'s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
complete -c mf -n "__fish_mf_using_subcommand recall" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mf -n "__fish_mf_using_subcommand expand" -l format -d 'Output format' -r -f -a "jsonl\t'The original lines, byte for byte'
text\t'Readable text'"
complete -c mf -n "__fish_mf_using_subcommand expand" -l from -d 'Read the file as this format instead of detecting it' -r -f -a "chat\t'One chat message per line'
claude\t'A Claude Code session'
codex\t'A Codex CLI rollout'
pi\t'A pi coding-agent session'"
complete -c mf -n "__fish_mf_using_subcommand expand" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]' -r -F
complete -c mf -n "__fish_mf_using_subcommand expand" -l deep -d 'Go down through nested summaries to the original messages'
complete -c mf -n "__fish_mf_using_subcommand expand" -l restore -d 'Retract the summary (append a retraction record): recall is verbatim again'
complete -c mf -n "__fish_mf_using_subcommand expand" -l force -d 'With --restore: write to an agent session that looks live'
complete -c mf -n "__fish_mf_using_subcommand expand" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_using_subcommand expand" -l no-progress -d 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
complete -c mf -n "__fish_mf_using_subcommand expand" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_using_subcommand expand" -l no-cache -d 'Read every file in full: no checkpoint of a large file\'s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
complete -c mf -n "__fish_mf_using_subcommand expand" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mf -n "__fish_mf_using_subcommand explain" -s m -l model -d 'Plan as `compact --model MODEL` would, with that model\'s span and output budgets [env: MF_MODEL]' -r -f -a "extractive\t''
haiku\t''
sonnet\t''
opus\t''
fable\t''
gpt-6-luna\t''
gpt-5.6-luna\t''
gpt-5.6-terra\t''
claude-haiku-4-5\t''
claude-sonnet-4-6\t''
claude-opus-4-6\t''
gpt-5-mini\t''
gpt-4o-mini\t''
gpt-4o\t''
gpt-4.1-mini\t''
gpt-4.1\t''
openai-compatible:\t''"
complete -c mf -n "__fish_mf_using_subcommand explain" -l recent -d 'Entries at the end that stay verbatim (at least the newest tool unit); the seam is rounded out to a whole turn when the tail then fits --recent-tokens, else the turn is folded inside [default: 5] [env: MF_RECENT]' -r
complete -c mf -n "__fish_mf_using_subcommand explain" -l recent-tokens -d 'Most estimated tokens the verbatim tail holds: a turn larger than this is folded inside (its prompt and newest tool units stay verbatim, its older tool units fold) [default: 3000, which keeps a 20k-token session within about a third of its size]' -r
complete -c mf -n "__fish_mf_using_subcommand explain" -l size -d 'Consider only the newest N uncovered entries (must be greater than --recent)' -r
complete -c mf -n "__fish_mf_using_subcommand explain" -l trigger -d 'Make no call unless at least N uncovered entries exist [default: 20]' -r
complete -c mf -n "__fish_mf_using_subcommand explain" -l min-fold -d 'Make no call unless at least N entries would fold [default: 2]' -r
complete -c mf -n "__fish_mf_using_subcommand explain" -l target-tokens -d 'Fold the oldest turns until the recall view is at most T estimated tokens' -r
complete -c mf -n "__fish_mf_using_subcommand explain" -l max-span-tokens -d 'Most tokens one summarizer call may carry; larger spans are split into chunks [default: the model\'s budget]' -r
complete -c mf -n "__fish_mf_using_subcommand explain" -l protect -d 'Keep real user messages out of every fold (they stay verbatim)' -r -f -a "user\t'Real user messages'
none\t'Nothing (the default, except for --strategy cited)'"
complete -c mf -n "__fish_mf_using_subcommand explain" -l strategy -d 'What to fold with: summary, mask (stub old tool results, no call), mask,summary, cited' -r
complete -c mf -n "__fish_mf_using_subcommand explain" -l keep-tool-results -d 'With --strategy mask: the most recent tool results that stay verbatim [default: 3]' -r
complete -c mf -n "__fish_mf_using_subcommand explain" -l from -d 'Read the file as this format instead of detecting it' -r -f -a "chat\t'One chat message per line'
claude\t'A Claude Code session'
codex\t'A Codex CLI rollout'
pi\t'A pi coding-agent session'"
complete -c mf -n "__fish_mf_using_subcommand explain" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]' -r -F
complete -c mf -n "__fish_mf_using_subcommand explain" -l json -d 'Print as one JSON object'
complete -c mf -n "__fish_mf_using_subcommand explain" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_using_subcommand explain" -l no-progress -d 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
complete -c mf -n "__fish_mf_using_subcommand explain" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_using_subcommand explain" -l no-cache -d 'Read every file in full: no checkpoint of a large file\'s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
complete -c mf -n "__fish_mf_using_subcommand explain" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mf -n "__fish_mf_using_subcommand verify" -l from -d 'Read the files as this format instead of detecting it' -r -f -a "chat\t'One chat message per line'
claude\t'A Claude Code session'
codex\t'A Codex CLI rollout'
pi\t'A pi coding-agent session'"
complete -c mf -n "__fish_mf_using_subcommand verify" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]' -r -F
complete -c mf -n "__fish_mf_using_subcommand verify" -l json -d 'Print one JSON object per file'
complete -c mf -n "__fish_mf_using_subcommand verify" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_using_subcommand verify" -l no-progress -d 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
complete -c mf -n "__fish_mf_using_subcommand verify" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_using_subcommand verify" -l no-cache -d 'Read every file in full: no checkpoint of a large file\'s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
complete -c mf -n "__fish_mf_using_subcommand verify" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mf -n "__fish_mf_using_subcommand models" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]' -r -F
complete -c mf -n "__fish_mf_using_subcommand models" -l json -d 'Print as JSON'
complete -c mf -n "__fish_mf_using_subcommand models" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_using_subcommand models" -l no-progress -d 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
complete -c mf -n "__fish_mf_using_subcommand models" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_using_subcommand models" -l no-cache -d 'Read every file in full: no checkpoint of a large file\'s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
complete -c mf -n "__fish_mf_using_subcommand models" -s h -l help -d 'Print help'
complete -c mf -n "__fish_mf_using_subcommand sessions" -l agent -d 'Only this agent\'s sessions' -r -f -a "claude\t'Claude Code'
codex\t'Codex CLI'
pi\t'pi coding agent'"
complete -c mf -n "__fish_mf_using_subcommand sessions" -l cwd -d 'Only sessions run in this directory' -r -F
complete -c mf -n "__fish_mf_using_subcommand sessions" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]' -r -F
complete -c mf -n "__fish_mf_using_subcommand sessions" -l latest -d 'Only the newest session (after --agent and --cwd)'
complete -c mf -n "__fish_mf_using_subcommand sessions" -l json -d 'Print one JSON object per session, one per line'
complete -c mf -n "__fish_mf_using_subcommand sessions" -s 0 -l null -d 'Print only the paths, each ended by a NUL byte (for `mf compact --files-from - -0`)'
complete -c mf -n "__fish_mf_using_subcommand sessions" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_using_subcommand sessions" -l no-progress -d 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
complete -c mf -n "__fish_mf_using_subcommand sessions" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_using_subcommand sessions" -l no-cache -d 'Read every file in full: no checkpoint of a large file\'s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
complete -c mf -n "__fish_mf_using_subcommand sessions" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mf -n "__fish_mf_using_subcommand hook; and not __fish_seen_subcommand_from claude-code install uninstall help" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]' -r -F
complete -c mf -n "__fish_mf_using_subcommand hook; and not __fish_seen_subcommand_from claude-code install uninstall help" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_using_subcommand hook; and not __fish_seen_subcommand_from claude-code install uninstall help" -l no-progress -d 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
complete -c mf -n "__fish_mf_using_subcommand hook; and not __fish_seen_subcommand_from claude-code install uninstall help" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_using_subcommand hook; and not __fish_seen_subcommand_from claude-code install uninstall help" -l no-cache -d 'Read every file in full: no checkpoint of a large file\'s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
complete -c mf -n "__fish_mf_using_subcommand hook; and not __fish_seen_subcommand_from claude-code install uninstall help" -s h -l help -d 'Print help'
complete -c mf -n "__fish_mf_using_subcommand hook; and not __fish_seen_subcommand_from claude-code install uninstall help" -f -a "claude-code" -d 'Claude Code\'s hook: reads the hook\'s JSON on stdin (PreCompact: print a keep-list; SessionStart after a compaction: report what the summary lost); never blocks, never writes the session'
complete -c mf -n "__fish_mf_using_subcommand hook; and not __fish_seen_subcommand_from claude-code install uninstall help" -f -a "install" -d 'Add mf\'s hooks to an agent\'s settings (merging, idempotent, with a backup)'
complete -c mf -n "__fish_mf_using_subcommand hook; and not __fish_seen_subcommand_from claude-code install uninstall help" -f -a "uninstall" -d 'Remove mf\'s hooks from an agent\'s settings (with a backup)'
complete -c mf -n "__fish_mf_using_subcommand hook; and not __fish_seen_subcommand_from claude-code install uninstall help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]' -r -F
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -l no-progress -d 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -l no-cache -d 'Read every file in full: no checkpoint of a large file\'s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from claude-code" -s h -l help -d 'Print help'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from install" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]' -r -F
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from install" -l project -d 'Claude Code: the project\'s `.claude/settings.json` (in the current directory)'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from install" -l user -d 'Claude Code: the user\'s `~/.claude/settings.json` (the default)'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from install" -l dry-run -d 'Print what would change without writing'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from install" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from install" -l no-progress -d 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from install" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from install" -l no-cache -d 'Read every file in full: no checkpoint of a large file\'s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from install" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from uninstall" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]' -r -F
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from uninstall" -l project -d 'Claude Code: the project\'s `.claude/settings.json` (in the current directory)'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from uninstall" -l user -d 'Claude Code: the user\'s `~/.claude/settings.json` (the default)'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from uninstall" -l dry-run -d 'Print what would change without writing'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from uninstall" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from uninstall" -l no-progress -d 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from uninstall" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from uninstall" -l no-cache -d 'Read every file in full: no checkpoint of a large file\'s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from uninstall" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "claude-code" -d 'Claude Code\'s hook: reads the hook\'s JSON on stdin (PreCompact: print a keep-list; SessionStart after a compaction: report what the summary lost); never blocks, never writes the session'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "install" -d 'Add mf\'s hooks to an agent\'s settings (merging, idempotent, with a backup)'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "uninstall" -d 'Remove mf\'s hooks from an agent\'s settings (with a backup)'
complete -c mf -n "__fish_mf_using_subcommand hook; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mf -n "__fish_mf_using_subcommand completions" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]' -r -F
complete -c mf -n "__fish_mf_using_subcommand completions" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_using_subcommand completions" -l no-progress -d 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
complete -c mf -n "__fish_mf_using_subcommand completions" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_using_subcommand completions" -l no-cache -d 'Read every file in full: no checkpoint of a large file\'s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
complete -c mf -n "__fish_mf_using_subcommand completions" -s h -l help -d 'Print help'
complete -c mf -n "__fish_mf_using_subcommand man" -l config -d 'Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]' -r -F
complete -c mf -n "__fish_mf_using_subcommand man" -s q -l quiet -d 'Print no warnings or notes on stderr (errors still print)'
complete -c mf -n "__fish_mf_using_subcommand man" -l no-progress -d 'Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]'
complete -c mf -n "__fish_mf_using_subcommand man" -s v -l verbose -d 'Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)'
complete -c mf -n "__fish_mf_using_subcommand man" -l no-cache -d 'Read every file in full: no checkpoint of a large file\'s prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]'
complete -c mf -n "__fish_mf_using_subcommand man" -s h -l help -d 'Print help'
complete -c mf -n "__fish_mf_using_subcommand help; and not __fish_seen_subcommand_from compact recall expand explain verify models sessions hook completions man help" -f -a "compact" -d 'Fold older turns into a summary and append it, printing the decision record'
complete -c mf -n "__fish_mf_using_subcommand help; and not __fish_seen_subcommand_from compact recall expand explain verify models sessions hook completions man help" -f -a "recall" -d 'Print what a model should see now: standing summaries and the turns they do not cover'
complete -c mf -n "__fish_mf_using_subcommand help; and not __fish_seen_subcommand_from compact recall expand explain verify models sessions hook completions man help" -f -a "expand" -d 'Print the originals behind a summary; `--restore` retracts the summary'
complete -c mf -n "__fish_mf_using_subcommand help; and not __fish_seen_subcommand_from compact recall expand explain verify models sessions hook completions man help" -f -a "explain" -d 'Show every decision recorded in the file, suspicious lines, and what `compact` would do now'
complete -c mf -n "__fish_mf_using_subcommand help; and not __fish_seen_subcommand_from compact recall expand explain verify models sessions hook completions man help" -f -a "verify" -d 'Check a file\'s integrity without calling anything: exit 0 when clean, 1 with the problems'
complete -c mf -n "__fish_mf_using_subcommand help; and not __fish_seen_subcommand_from compact recall expand explain verify models sessions hook completions man help" -f -a "models" -d 'List the summarizer models mf knows: aliases, providers, ids, budgets and prices'
complete -c mf -n "__fish_mf_using_subcommand help; and not __fish_seen_subcommand_from compact recall expand explain verify models sessions hook completions man help" -f -a "sessions" -d 'List the sessions of Claude Code, Codex and pi on this machine, newest first'
complete -c mf -n "__fish_mf_using_subcommand help; and not __fish_seen_subcommand_from compact recall expand explain verify models sessions hook completions man help" -f -a "hook" -d 'Run as an agent\'s compaction hook, or install mf\'s hooks into an agent\'s settings'
complete -c mf -n "__fish_mf_using_subcommand help; and not __fish_seen_subcommand_from compact recall expand explain verify models sessions hook completions man help" -f -a "completions" -d 'Print a shell completion script to stdout'
complete -c mf -n "__fish_mf_using_subcommand help; and not __fish_seen_subcommand_from compact recall expand explain verify models sessions hook completions man help" -f -a "man" -d 'Print the man page of mf, or of one of its commands, in roff'
complete -c mf -n "__fish_mf_using_subcommand help; and not __fish_seen_subcommand_from compact recall expand explain verify models sessions hook completions man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c mf -n "__fish_mf_using_subcommand help; and __fish_seen_subcommand_from hook" -f -a "claude-code" -d 'Claude Code\'s hook: reads the hook\'s JSON on stdin (PreCompact: print a keep-list; SessionStart after a compaction: report what the summary lost); never blocks, never writes the session'
complete -c mf -n "__fish_mf_using_subcommand help; and __fish_seen_subcommand_from hook" -f -a "install" -d 'Add mf\'s hooks to an agent\'s settings (merging, idempotent, with a backup)'
complete -c mf -n "__fish_mf_using_subcommand help; and __fish_seen_subcommand_from hook" -f -a "uninstall" -d 'Remove mf\'s hooks from an agent\'s settings (with a backup)'
