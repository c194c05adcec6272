
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
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
            cand -V 'Print version'
            cand --version 'Print version'
            cand compact 'Fold older turns into a summary and append it, printing the decision record'
            cand recall 'Print what a model should see now: standing summaries and the turns they do not cover'
            cand expand 'Print the originals behind a summary; `--restore` retracts the summary'
            cand explain 'Show every decision recorded in the file, suspicious lines, and what `compact` would do now'
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
            cand --dry-run 'Print the plan without calling the summarizer or writing anything'
            cand --json 'Print decision records as JSON, one object per line'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mf;recall'= {
            cand --format 'Output format'
            cand --budget 'Keep summaries first, then the newest entries that fit in TOKENS (4 characters a token, 256 reserved)'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'mf;expand'= {
            cand --format 'Output format'
            cand --deep 'Go down through nested summaries to the original messages'
            cand --restore 'Retract the summary (append a retraction record): recall is verbatim again'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)'
            cand -h 'Print help (see more with ''--help'')'
            cand --help 'Print help (see more with ''--help'')'
        }
        &'mf;explain'= {
            cand --recent 'Entries at the end that stay verbatim; the seam is rounded out to a whole turn [default: 5]'
            cand --size 'Consider only the newest N uncovered entries (must be greater than --recent)'
            cand --trigger 'Make no call unless at least N uncovered entries exist [default: 20]'
            cand --min-fold 'Make no call unless at least N entries would fold [default: 2]'
            cand --json 'Print as one JSON object'
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mf;completions'= {
            cand -q 'Print no warnings or notes on stderr (errors still print)'
            cand --quiet 'Print no warnings or notes on stderr (errors still print)'
            cand --no-progress 'Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'mf;help'= {
            cand compact 'Fold older turns into a summary and append it, printing the decision record'
            cand recall 'Print what a model should see now: standing summaries and the turns they do not cover'
            cand expand 'Print the originals behind a summary; `--restore` retracts the summary'
            cand explain 'Show every decision recorded in the file, suspicious lines, and what `compact` would do now'
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
        &'mf;help;completions'= {
        }
        &'mf;help;help'= {
        }
    ]
    $completions[$command]
}
