//! `Cli`: the command line, as clap derive structs and the parsers of their values — no logic
//! beyond checking that a value is one, and no environment (settings reads it).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "mf",
    version,
    about = "Fold the older turns of a JSONL conversation into a summary — append-only, every original byte kept",
    long_about = "mf folds the older turns of a JSONL transcript (a chat log, or a Claude Code, Codex, pi, Copilot CLI, Gemini CLI or Qwen Code session) \
into a summary written by a model you name, appends it to the same file and deletes nothing: the summary's \
coverage record (the exact lines it stands for, with a digest of their bytes) is what hides the originals from \
recall. Retract the summary and recall is verbatim again.",
    after_help = concat!(
        "Exit codes: 0 success (also nothing to fold, a declined fold); 1 bad input or refused operation; 2 usage error; 3 not compacted: the summarizer failed (0 with --allow-degraded for an outage, not for a base URL that never answered); 75 an agent session in use: its agent is running it, nothing written, try again later (--force writes anyway); 130/143/129 interrupted by SIGINT/SIGTERM/SIGHUP.\n\n",
        "Environment (a flag beats its variable; a variable beats the config file):\n",
        "  MF_MODEL                 the summarizer when --model is not given\n",
        "  MF_BASE_URL              the API base URL when --base-url is not given\n",
        "  ANTHROPIC_API_KEY, OPENAI_API_KEY, MF_API_KEY (an openai-compatible server's)   keys\n",
        "  ANTHROPIC_BASE_URL, OPENAI_BASE_URL   each provider's base URL\n",
        "  MF_RECENT, MF_TIMEOUT, MF_MIN_RETENTION   --recent, --timeout, --min-retention\n",
        "  MF_LIVE_SECONDS          how long after its last write an agent session whose tail shows a step under way still counts as live [default: 60]\n",
        "  MF_TAIL_WAIT_MS          how long an append waits for another program to finish its last line [default: 2000]\n",
        "  MF_NO_PROGRESS, MF_NO_CACHE   set (not to 0): --no-progress, --no-cache\n",
        "  MF_ALLOW_INVENTIONS      set (not to 0): --allow-inventions\n",
        "  MF_CACHE_DIR, XDG_CACHE_HOME   where checkpoints go (mf/checkpoints) [default: ~/.cache]\n",
        "  MF_CACHE_MIN_BYTES       files smaller than this are not checkpointed [default: 4 MiB]\n",
        "  MF_STATE_DIR, XDG_STATE_HOME   where --batch keeps the batches it submitted (mf/batches) [default: ~/.local/state]\n",
        "  MF_BATCH_POLL_MS         how often a batch is polled at first, in ms (it slows to a minute) [default: 10000]\n",
        "  MF_STDIN_LIMIT           the most bytes read from standard input (`-`): a size such as 1000, 500MiB, 4GiB [default: 1GiB]\n",
        "  TMPDIR                   where standard input is copied (an unnamed file; at least 64 MiB is left free there)\n",
        "  MF_CONFIG, XDG_CONFIG_HOME   the config file [default: ~/.config/mf/config.toml]\n",
        "  CLAUDE_CONFIG_DIR, CODEX_HOME   where Claude Code and Codex keep their state\n",
        "  PI_CODING_AGENT_DIR, PI_CODING_AGENT_SESSION_DIR   where pi keeps its state and its sessions (mf sessions)\n",
        "  COPILOT_HOME, GEMINI_CLI_HOME, QWEN_HOME, QWEN_RUNTIME_DIR   where Copilot CLI, Gemini CLI and Qwen Code keep their sessions (mf sessions)\n",
        "  QWEN_HOME, QWEN_RUNTIME_DIR   where Qwen Code keeps its state and (the runtime directory, when set) its sessions\n",
        "  CLAUDE_CODE_SESSION_ID   set by Claude Code for its MCP servers: the session `mf mcp` reads\n",
        "  COLUMNS                  the width tables fit on a terminal [default: the terminal's]\n",
        "  MF_COMPLETE              set by the shell completion hooks (mf completions)\n\n",
        "Examples:\n  mf compact chat.jsonl --model extractive\n  mf recall chat.jsonl --format text\n  mf explain chat.jsonl"
    )
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// Print no warnings or notes on stderr (errors still print)
    #[arg(short, long, global = true, help_heading = "Global options")]
    pub quiet: bool,

    /// Never draw progress displays (they are drawn only on a terminal) [env: MF_NO_PROGRESS]
    #[arg(long, global = true, help_heading = "Global options")]
    pub no_progress: bool,

    /// Show request metadata on stderr: URL, model, sizes, status, timings, request id, retry waits; -vv adds the request and response headers (keys redacted) and when the reply's headers came (never bodies or keys)
    #[arg(short, long, global = true, action = clap::ArgAction::Count, help_heading = "Global options")]
    pub verbose: u8,

    /// Read every file in full: no checkpoint of a large file's prefix is used or kept (verify and expand always read in full) [env: MF_NO_CACHE]
    #[arg(long, global = true, help_heading = "Global options")]
    pub no_cache: bool,

    /// Config file [default: $XDG_CONFIG_HOME/mf/config.toml] [env: MF_CONFIG]
    #[arg(
        long,
        global = true,
        value_name = "PATH",
        help_heading = "Global options"
    )]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Fold older turns into a summary and append it, printing the decision record
    #[command(after_help = concat!(
        "Exit codes: 0 success (also nothing to fold, a declined fold); 1 bad input or refused operation; 2 usage error; 3 not compacted: the summarizer failed (0 with --allow-degraded for an outage, not for a base URL that never answered); 75 try again later, nothing written: an agent session in use (its agent is running it; --force writes anyway), or with --batch a provider batch still working when the wait ended (the same command collects it; retry on 75 in CI); 130/143/129 interrupted.\n\n",
        "Examples:\n  mf compact chat.jsonl --model extractive\n  mf compact ~/.claude/projects/-home-me-app/SESSION.jsonl --model haiku --dry-run\n  find logs -name '*.jsonl' -print0 | mf compact --files-from - -0 --model haiku --batch --json"
    ))]
    Compact(Box<CompactArgs>),
    /// Summarize a span read from stdin (or FILE) and print the audited summary; nothing is written
    #[command(after_help = concat!(
        "Every entry of the input is the span: a chat log (one message per line), or any session mf reads. ",
        "The summary is mf's: its label first, then the model's text, then (when the audit adds one) the \"Kept verbatim by mf\" section of salient items the model left out. ",
        "With --json, one object: {\"summary\": text or null, \"model\", \"strategy\", \"audit\", \"chunks\", \"usage\", \"costUsd\", \"accepted\", \"reason\"}.\n\n",
        "Exit codes: 0 accepted (or --dry-run); 1 declined by the audit (the summary is not printed; with --json, accepted is false and reason says why) or a refused operation (--max-cost); 2 usage error; 3 the summarizer failed or could not be reached.\n\n",
        "Examples:\n  mf summarize chat.jsonl --model extractive\n  cat span.jsonl | mf summarize --model haiku --json\n  mf summarize SESSION.jsonl --model haiku --min-retention 0.7 --dry-run"
    ))]
    Summarize(Box<SummarizeArgs>),
    /// Print what a model should see now: standing summaries and the turns they do not cover
    #[command(
        after_help = "Exit codes: 0 success; 1 a file mf cannot read or that is not a transcript; 2 usage error; 130/143/129 interrupted.\n\nExamples:\n  mf recall chat.jsonl\n  mf recall chat.jsonl --format text --budget 8000\n  mf recall SESSION.jsonl --format native"
    )]
    Recall(RecallArgs),
    /// Print the originals behind a summary or stub (or one entry); `--restore` retracts the summary
    #[command(
        after_help = "Exit codes: 0 success; 1 a file mf cannot read, an unknown id, or a summary that cannot be restored; 2 usage error (no id: the summaries there are listed); 75 --restore on an agent session in use (its agent is running it): nothing written, try again later, --force writes anyway; 130/143/129 interrupted.\n\nExamples:\n  mf expand chat.jsonl\n  mf expand chat.jsonl msg-summary-1-30 --deep --format text\n  mf expand chat.jsonl msg-summary-1-7 --restore"
    )]
    Expand(ExpandArgs),
    /// Search what the folds hide (or, with --all, every entry): ranked hits with their ids
    #[command(after_help = concat!(
        "Identifiers, paths, numbers and \"quoted phrases\" match as written; other words are ranked by BM25 (stemmed: \"shipped\" finds \"ship\"). \"the user\" in a question favours the user's own messages. A hit's id is what `mf expand FILE ID` takes.\n\n",
        "With --json, one object per hit: {\"rank\", \"id\", \"line\", \"turn\", \"role\", \"tool\", \"score\", \"folded\", \"coveredBy\", \"matches\": [{\"textLine\", \"text\", \"match\"}], \"text\", \"textChars\"}.\n\n",
        "Exit codes: 0 hits found; 1 no hit (as grep), or a file mf cannot read; 2 usage error.\n\n",
        "Examples:\n  mf search chat.jsonl Rotterdam\n  mf search SESSION.jsonl OPS-4471 --all --limit 10\n  mf search SESSION.jsonl src/main.rs --json | jq -r .id"
    ))]
    Search(SearchArgs),
    /// Measure what a fold keeps that the rest of the session goes on to use; writes nothing
    #[command(after_help = concat!(
        "Each FILE is cut at 70 % of its tokens (--split), at a turn's start (else between tool units); a private copy of the first part is folded in memory as `mf compact` would fold it, with the same flags. ",
        "futureUse: of the salient items (paths, commands, numbers, identifiers, … as the audit finds them) that the rest of the session says or calls and that the first part holds (found), how many the recall view of the folded part still carries (kept), and kept/found (share). ",
        "With --questions (JSONL, one {\"question\", \"answer\"} a line): whether the answer occurs in that recall view, and whether it is in the top 3 hits of `mf search` for the question over the folded copy. ",
        "With --runs N, the fold is made N times and each figure is given as min/median/max. FILE is only read.\n\n",
        "With --json, one object per file: {\"file\", \"format\", \"model\", \"strategy\", \"tokens\", \"cut\", \"runs\", \"folds\", \"futureUse\": {\"found\", \"kept\", \"share\", \"byClass\", \"lost\"}, \"view\", \"questions\", \"costUsd\", \"error\"}.\n\n",
        "Exit codes: 0 every file measured (also a fold that was declined or skipped: its view is the verbatim one); 1 a file or the questions cannot be read, or a file has no seam to cut at; 2 usage error; 3 the summarizer failed (a figure of a span left verbatim is no summary's); 130/143/129 interrupted.\n\n",
        "Examples:\n  mf eval SESSION.jsonl --model extractive\n  mf eval SESSION.jsonl --model extractive --strategy cited --json\n  mf eval chat.jsonl --model haiku --runs 3 --questions questions.jsonl"
    ))]
    Eval(Box<EvalArgs>),
    /// Serve search, expand and folds to an agent over MCP (stdio); never writes
    #[command(after_help = concat!(
        "Tools: search {query, file?, limit?, all?}; expand {id, file?, max_tokens?, cursor?}; folds {file?}. Without `file`, the session is --file, else the newest session of --agent run in --cwd (default: the directory the server starts in).\n\n",
        "Set up: `claude mcp add mf -- mf mcp --agent claude`, `codex mcp add mf -- mf mcp --agent codex`, or `mf hook install claude-code|codex`.\n\n",
        "Exit codes: 0 the client closed the connection; 2 usage error, or a client that closed before the MCP handshake. A tool call that fails (no session found, a file mf cannot read, an unknown id) is a tool error to the client, never an exit.\n\n",
        "Examples:\n  mf mcp --agent claude\n  mf mcp --agent codex --cwd .\n  mf mcp --file chat.jsonl"
    ))]
    Mcp(McpArgs),
    /// Show every decision recorded in the file, suspicious lines, and what `compact` would do now
    #[command(
        after_help = "Exit codes: 0 success; 1 a file mf cannot read or that is not a transcript, or an unknown id; 2 usage error; 130/143/129 interrupted.\n\nExamples:\n  mf explain chat.jsonl\n  mf explain chat.jsonl m42\n  mf explain chat.jsonl --model haiku --target-tokens 20000 --json"
    )]
    Explain(ExplainArgs),
    /// Check a file's integrity without calling anything: exit 0 when clean, 1 with the problems
    #[command(
        after_help = "Exit codes: 0 every file clean; 1 a problem found, or a file mf cannot read; 2 usage error; 130/143/129 interrupted.\n\nExamples:\n  mf verify chat.jsonl\n  mf verify logs/*.jsonl --json"
    )]
    Verify(VerifyArgs),
    /// List the summarizer models mf knows: aliases, providers, ids, budgets and prices
    #[command(
        after_help = "Exit codes: 0 success; 2 usage error.\n\nExamples:\n  mf models\n  mf models --json"
    )]
    Models(ModelsArgs),
    /// List the sessions of Claude Code, Codex, pi, Copilot CLI, Gemini CLI and Qwen Code on this machine, newest first
    #[command(after_help = concat!(
        "Where: Claude Code's $CLAUDE_CONFIG_DIR/projects (default ~/.claude/projects), Codex's $CODEX_HOME/sessions (default ~/.codex/sessions), pi's $PI_CODING_AGENT_SESSION_DIR or sessionDir setting or $PI_CODING_AGENT_DIR/sessions (default ~/.pi/agent/sessions), GitHub Copilot CLI's $COPILOT_HOME/session-state (default ~/.copilot/session-state), Qwen Code's $QWEN_RUNTIME_DIR/projects or $QWEN_HOME/projects (default ~/.qwen/projects), Gemini CLI's $GEMINI_CLI_HOME/.gemini/tmp (default ~/.gemini/tmp).\n\n",
        "Exit codes: 0 success; 1 a session directory mf cannot read (the sessions it could read are still listed); 2 usage error.\n\n",
        "Examples:\n  mf sessions\n  mf sessions --agent claude --cwd .\n  mf sessions -0 | mf compact --files-from - -0 --model haiku --json"
    ))]
    Sessions(SessionsArgs),
    /// Run as an agent's compaction hook, or install mf's hooks into an agent's settings
    #[command(after_help = concat!(
        "Exit codes: as a hook (`mf hook claude-code`, `mf hook codex`), always 0: it never blocks or fails a compaction. install / uninstall: 0 done (or nothing to change); 1 refused, nothing written (a file mf cannot write, a symlink where mf keeps its own file, a config it cannot edit without changing your bytes); 2 usage error.\n\n",
        "Examples:\n  mf hook install claude-code --project\n  mf hook install codex\n  mf hook uninstall claude-code"
    ))]
    Hook(HookArgs),
    /// Print a shell completion script to stdout
    #[command(
        after_help = "Exit codes: 0 success; 2 usage error.\n\nExamples:\n  mf completions bash > ~/.local/share/bash-completion/completions/mf\n  mf completions zsh > ~/.zfunc/_mf"
    )]
    Completions(CompletionsArgs),
    /// Print the man page of mf, or of one of its commands, in roff
    #[command(
        after_help = "Exit codes: 0 success; 2 usage error.\n\nExamples:\n  mf man | man -l -\n  mf man compact > /usr/local/share/man/man1/mf-compact.1"
    )]
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct ModelsArgs {
    /// Print as JSON
    #[arg(long)]
    pub json: bool,
}

/// An input format, for `--from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    /// One chat message per line
    Chat,
    /// A Claude Code session
    Claude,
    /// A Codex CLI rollout
    Codex,
    /// A pi coding-agent session
    Pi,
    /// A GitHub Copilot CLI session (events.jsonl)
    Copilot,
    /// A Qwen Code session
    #[value(alias = "qwen-code")]
    Qwen,
    /// A Gemini CLI session
    #[value(alias = "gemini-cli")]
    Gemini,
}

/// The fold policy flags, shared by `compact` and `explain`.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "What to fold")]
pub struct PolicyArgs {
    /// Entries at the end that stay verbatim (at least the newest tool unit); the seam is rounded out to a whole turn when the tail then fits --recent-tokens, else the turn is folded inside [default: 5] [env: MF_RECENT]
    #[arg(long, value_name = "N")]
    pub recent: Option<usize>,

    /// Most estimated tokens the verbatim tail holds: a turn larger than this is folded inside (its prompt and newest tool units stay verbatim, its older tool units fold) [default: 3000, which keeps a 20k-token session within about a third of its size]
    #[arg(long, value_name = "TOKENS")]
    pub recent_tokens: Option<usize>,

    /// Consider only the newest N uncovered entries (must be greater than --recent)
    #[arg(long, value_name = "N")]
    pub size: Option<usize>,

    /// Make no call unless at least N uncovered entries exist [default: 20]
    #[arg(long, value_name = "N")]
    pub trigger: Option<usize>,

    /// Make no call unless at least N entries would fold [default: 2]
    #[arg(long, value_name = "N", value_parser = positive_usize)]
    pub min_fold: Option<usize>,

    /// Fold the oldest turns until the recall view is at most T estimated tokens
    #[arg(long, value_name = "T", value_parser = positive_usize)]
    pub target_tokens: Option<usize>,

    /// Most tokens one summarizer call may carry; larger spans are split into chunks [default: the model's budget]
    #[arg(long, value_name = "TOKENS", value_parser = positive_usize)]
    pub max_span_tokens: Option<usize>,

    /// Keep real user messages out of every fold (they stay verbatim)
    #[arg(long, value_name = "WHO", value_enum)]
    pub protect: Option<Protect>,

    /// What to fold with: summary, mask (stub old tool results, no call), mask,summary, cited
    #[arg(long, value_name = "STRATEGY", value_parser = StrategyParser, hide_possible_values = true)]
    pub strategy: Option<StrategyArg>,

    /// With --strategy mask: the most recent tool results that stay verbatim [default: 3]
    #[arg(long, value_name = "N", value_parser = positive_usize)]
    pub keep_tool_results: Option<usize>,

    /// Read the file as this format instead of detecting it
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub from: Option<InputFormat>,
}

/// Whose messages `--protect` keeps out of folds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Protect {
    /// Real user messages
    User,
    /// Nothing (the default, except for --strategy cited)
    None,
}

/// A `--strategy` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrategyArg {
    Summary,
    Mask,
    MaskSummary,
    Cited,
}

fn parse_strategy(s: &str) -> Result<StrategyArg, String> {
    Ok(match s.replace(' ', "").as_str() {
        "summary" => StrategyArg::Summary,
        "mask" => StrategyArg::Mask,
        "mask,summary" | "summary,mask" => StrategyArg::MaskSummary,
        "cited" => StrategyArg::Cited,
        other => {
            return Err(format!(
                "`{other}` is not a strategy (summary, mask, mask,summary, cited)"
            ));
        }
    })
}

/// A `--strategy` value, with its names offered to shell completion.
#[derive(Debug, Clone, Copy)]
struct StrategyParser;

impl clap::builder::TypedValueParser for StrategyParser {
    type Value = StrategyArg;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<StrategyArg, clap::Error> {
        parse_strategy(&value.to_string_lossy()).map_err(|e| {
            let mut err = clap::Error::raw(
                clap::error::ErrorKind::InvalidValue,
                format!(
                    "invalid value for {}: {e}\n",
                    arg.map_or("--strategy".to_string(), |a| a.to_string())
                ),
            );
            err = err.with_cmd(cmd);
            err
        })
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        use clap::builder::PossibleValue;
        Some(Box::new(
            [
                PossibleValue::new("summary")
                    .help("fold old turns into a summary (one call a span)"),
                PossibleValue::new("mask").help("stub old tool results; no model call"),
                PossibleValue::new("mask,summary").help("stubs, then a summary fold"),
                PossibleValue::new("cited").help("summaries that cite their sources"),
            ]
            .into_iter(),
        ))
    }
}

fn positive_usize(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{s}` is not a whole number")),
    }
}

/// A finite number in `lo..=hi`.
fn number_in(s: &str, lo: f64, hi: f64, what: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}` is not a number"))?;
    if !v.is_finite() {
        return Err(format!("{what} must be a finite number, not `{s}`"));
    }
    if v < lo || v > hi {
        return Err(format!("{what} must be between {lo} and {hi}, not {v}"));
    }
    Ok(v)
}

fn parse_temperature(s: &str) -> Result<f64, String> {
    number_in(s, 0.0, 2.0, "the temperature")
}

fn parse_price(s: &str) -> Result<f64, String> {
    number_in(s, 0.0, 10_000.0, "a price per million tokens (USD)")
}

fn parse_usd(s: &str) -> Result<f64, String> {
    number_in(s, 0.0, 1_000_000.0, "a cost in USD")
}

fn parse_timeout(s: &str) -> Result<f64, String> {
    let v = number_in(s, 0.0, 86_400.0, "the timeout (seconds)")?;
    if v <= 0.0 {
        return Err("the timeout must be more than 0 seconds".into());
    }
    Ok(v)
}

fn parse_output_tokens(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(n) if (16..=1_000_000).contains(&n) => Ok(n),
        Ok(n) => Err(format!("must be between 16 and 1000000, not {n}")),
        Err(_) => Err(format!("`{s}` is not a whole number")),
    }
}

fn parse_share(s: &str) -> Result<f64, String> {
    number_in(s, 0.0, 1.0, "a share")
}

#[derive(Debug, Args)]
pub struct CompactArgs {
    /// Transcript files (`-` reads one from standard input)
    #[arg(value_name = "FILE", required_unless_present_any = ["files_from", "latest", "batch_status", "batch_cancel"])]
    pub files: Vec<PathBuf>,

    /// Compact the agent's newest session (see `mf sessions`), with --cwd: the newest one run there
    #[arg(long, value_enum, value_name = "AGENT")]
    pub latest: Option<AgentArg>,

    /// With --latest: only sessions run in this directory
    #[arg(long, value_name = "DIR", requires = "latest")]
    pub cwd: Option<PathBuf>,

    /// Read file paths from FILE (`-` for standard input), one per line
    #[arg(long, value_name = "FILE")]
    pub files_from: Option<PathBuf>,

    /// With --files-from: paths are separated by NUL bytes (as `find -print0` writes them)
    #[arg(short = '0', long = "null", requires = "files_from")]
    pub null: bool,

    /// Summarizer model (required; never defaulted); `extractive` is the built-in offline one [env: MF_MODEL]
    #[arg(short, long, value_name = "MODEL", value_parser = ModelName, hide_possible_values = true)]
    pub model: Option<String>,

    #[command(flatten)]
    pub policy: PolicyArgs,

    /// After chunk summaries, fold them into one covering summary (every level stays expandable)
    #[arg(long, help_heading = "What to fold")]
    pub rollup: bool,

    /// Replace the summarizer instruction: TEXT, or @FILE to read it from a file
    #[arg(long, value_name = "TEXT|@FILE", help_heading = "Summarizer model")]
    pub system_prompt: Option<String>,

    /// Print the plan and its estimated cost without calling or writing anything
    #[arg(long)]
    pub dry_run: bool,

    /// Leave the input untouched; write its bytes plus the new lines to PATH (a directory for several files; `-` for stdout)
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,

    /// Let --output replace an existing file, and write to an agent session that looks live
    #[arg(long)]
    pub force: bool,

    /// Print one JSON decision record per file (errors included), one per line
    #[arg(long)]
    pub json: bool,

    /// Write the JSON decision records to PATH instead of stdout (`-`: stdout; `/dev/fd/N`: a descriptor the shell opened)
    #[arg(long, value_name = "PATH")]
    pub record: Option<PathBuf>,

    /// Files compacted and summarizer calls in flight at once
    #[arg(short = 'j', long, value_name = "N", default_value_t = 4, value_parser = positive_usize)]
    pub jobs: usize,

    /// Exit 0 even when a summarizer failed and the span stayed verbatim (an outage or a bad
    /// reply; never a setup error such as a base URL that never answered)
    #[arg(long)]
    pub allow_degraded: bool,

    #[command(flatten)]
    pub audit: AuditArgs,

    #[command(flatten)]
    pub provider: ProviderArgs,

    #[command(flatten)]
    pub tier: TierArgs,
}

/// The provider's half-price tiers (Anthropic and OpenAI models).
#[derive(Debug, Args, Default, Clone)]
pub struct TierArgs {
    /// Send every call of the run as one provider batch (half price; answered within 24 h), then write each fold
    #[arg(
        long,
        help_heading = "Half-price tiers",
        conflicts_with = "service_tier"
    )]
    pub batch: bool,

    /// With --batch: stop waiting after DURATION (`90s`, `30m`, `2h`; `0`: submit and exit), exit 75, collect on the next run [default: until done]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "batch", help_heading = "Half-price tiers")]
    pub batch_wait: Option<std::time::Duration>,

    /// List the batches mf submitted and has not collected, with the provider's status
    #[arg(long, help_heading = "Half-price tiers", conflicts_with_all = ["batch_cancel", "batch"])]
    pub batch_status: bool,

    /// Cancel the batches mf submitted for these files (all pending batches with no FILE)
    #[arg(long, help_heading = "Half-price tiers", conflicts_with = "batch")]
    pub batch_cancel: bool,

    /// OpenAI's tier for each call: `flex` (batch price, synchronous, may be unavailable) or `default`
    #[arg(
        long,
        value_enum,
        value_name = "TIER",
        help_heading = "Half-price tiers"
    )]
    pub service_tier: Option<ServiceTier>,

    /// With --service-tier flex: when flex stays unavailable after the retries, send the call at the default tier (full price)
    #[arg(long, requires = "service_tier", help_heading = "Half-price tiers")]
    pub flex_fallback: bool,
}

/// `--service-tier`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ServiceTier {
    /// Batch price, synchronous; may answer 429 "resource unavailable"
    Flex,
    /// The provider's default tier, at list price
    Default,
}

/// A duration: `90s`, `30m`, `2h`, `1h30m`, `1d`, or a number of seconds.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let t = s.trim();
    if let Ok(n) = t.parse::<u64>() {
        return Ok(std::time::Duration::from_secs(n));
    }
    let (mut total, mut num) = (0u64, String::new());
    for c in t.chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3_600,
            'd' => 86_400,
            _ => {
                return Err(format!(
                    "`{s}` is not a duration (say `90s`, `30m`, `2h` or `1h30m`)"
                ));
            }
        };
        let n: u64 = num
            .parse()
            .map_err(|_| format!("`{s}` is not a duration (say `90s`, `30m`, `2h` or `1h30m`)"))?;
        total = total.saturating_add(n.saturating_mul(unit));
        num.clear();
    }
    if !num.is_empty() || t.is_empty() {
        return Err(format!(
            "`{s}` is not a duration (say `90s`, `30m`, `2h` or `1h30m`)"
        ));
    }
    Ok(std::time::Duration::from_secs(total))
}

#[derive(Debug, Args)]
pub struct SummarizeArgs {
    /// The span to summarize (`-` or nothing: standard input)
    #[arg(value_name = "FILE", default_value = "-")]
    pub file: PathBuf,

    /// Summarizer model (required; never defaulted); `extractive` is the built-in offline one [env: MF_MODEL]
    #[arg(short, long, value_name = "MODEL", value_parser = ModelName, hide_possible_values = true)]
    pub model: Option<String>,

    /// Replace the summarizer instruction: TEXT, or @FILE to read it from a file
    #[arg(long, value_name = "TEXT|@FILE", help_heading = "Summarizer model")]
    pub system_prompt: Option<String>,

    /// Most tokens one summarizer call may carry; a larger span is summarized in chunks [default: the model's budget]
    #[arg(long, value_name = "TOKENS", value_parser = positive_usize)]
    pub max_span_tokens: Option<usize>,

    /// Read the input as this format instead of detecting it
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub from: Option<InputFormat>,

    /// Print the calls it would make and their estimated cost without calling anything
    #[arg(long)]
    pub dry_run: bool,

    /// Print one JSON object (summary, audit, usage, cost, accepted, reason)
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub audit: AuditArgs,

    #[command(flatten)]
    pub provider: ProviderArgs,
}

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Transcript files (only read; `-` reads one from standard input)
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    /// Summarizer model (required, except with --strategy mask); `extractive` is the built-in offline one [env: MF_MODEL]
    #[arg(short, long, value_name = "MODEL", value_parser = ModelName, hide_possible_values = true)]
    pub model: Option<String>,

    /// Questions to ask of the folded part: JSONL, one {"question", "answer"} a line
    #[arg(long, value_name = "FILE")]
    pub questions: Option<PathBuf>,

    /// Fold each file N times (a model's summary varies) and give each figure as min/median/max
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = positive_usize)]
    pub runs: usize,

    /// The share of a session's tokens that is folded; the rest is what it is measured against
    #[arg(long, value_name = "SHARE", default_value_t = crate::eval::DEFAULT_SPLIT, value_parser = parse_split)]
    pub split: f64,

    /// Print one JSON object per file, one per line
    #[arg(long)]
    pub json: bool,

    /// Folds, and summarizer calls in flight, at once
    #[arg(short = 'j', long, value_name = "N", default_value_t = 4, value_parser = positive_usize)]
    pub jobs: usize,

    #[command(flatten)]
    pub policy: PolicyArgs,

    /// Replace the summarizer instruction: TEXT, or @FILE to read it from a file
    #[arg(long, value_name = "TEXT|@FILE", help_heading = "Summarizer model")]
    pub system_prompt: Option<String>,

    #[command(flatten)]
    pub audit: AuditArgs,

    #[command(flatten)]
    pub provider: ProviderArgs,
}

fn parse_split(s: &str) -> Result<f64, String> {
    number_in(s, 0.1, 0.95, "the split")
}

/// How summaries are audited before they are written.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Fidelity audit")]
pub struct AuditArgs {
    /// Decline a summary that keeps less than this share of the span's items (0 turns it off) [default: 0.5] [env: MF_MIN_RETENTION]
    #[arg(long, value_name = "SHARE", value_parser = parse_share)]
    pub min_retention: Option<f64>,

    /// Ask once more, naming the missing items, when a summary is lossy
    #[arg(long)]
    pub retry_lossy: bool,

    /// Ask again for spans declined before, whatever decided it (the record keeps why)
    #[arg(long)]
    pub retry: bool,

    /// Also decline summaries with any invented word or a renamed path stated as current
    #[arg(long, conflicts_with = "allow_inventions")]
    pub strict_audit: bool,

    /// Write summaries that state invented figures, misstated claims or corrected values (declined by default at every threshold)
    #[arg(long)]
    pub allow_inventions: bool,

    /// Count items found only in tool results toward the retention threshold
    #[arg(long)]
    pub audit_tool_results: bool,
}

/// How to reach and pay for a summarizer model.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Summarizer model")]
pub struct ProviderArgs {
    /// API base URL (beats ANTHROPIC_BASE_URL / OPENAI_BASE_URL; required for openai-compatible:NAME) [env: MF_BASE_URL]
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,

    /// Seconds one request may take, connect to last byte [default: 120] [env: MF_TIMEOUT]
    #[arg(long, value_name = "SECS", value_parser = parse_timeout)]
    pub timeout: Option<f64>,

    /// Retries after a failed attempt (connection errors, timeouts, 408, 409, 429, 5xx) [default: 2]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=10))]
    pub retries: Option<u32>,

    /// Sampling temperature, 0 to 2, for models that take one (not Anthropic 5.x, not OpenAI reasoning models)
    #[arg(long, value_name = "T", value_parser = parse_temperature)]
    pub temperature: Option<f64>,

    /// Seed for OpenAI-style servers that honour it (not Anthropic, which has none)
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// With --dry-run, ask Anthropic's free count_tokens endpoint for each request's exact input tokens
    #[arg(long)]
    pub count_tokens: bool,

    /// Cap on one summary's output tokens [default: the model's output budget]
    #[arg(long, value_name = "N", value_parser = parse_output_tokens)]
    pub max_output_tokens: Option<u32>,

    /// `anthropic-version` header
    #[arg(long, value_name = "DATE", default_value = crate::summarizer::anthropic::DEFAULT_VERSION)]
    pub anthropic_version: String,

    /// The model that wrote the conversation, when the file does not record it
    #[arg(long, value_name = "MODEL")]
    pub agent_model: Option<String>,

    /// Allow the summarizer to be the conversation's own model (billed at its price)
    #[arg(long)]
    pub allow_same_model: bool,

    /// Allow sending a key over plain http:// to a host that is not loopback
    #[arg(long)]
    pub allow_insecure_http: bool,

    /// Send spans as they are, without replacing keys, tokens and passwords by placeholders
    #[arg(long)]
    pub no_redact: bool,

    /// Input price in USD per million tokens (overrides the table)
    #[arg(long, value_name = "USD", value_parser = parse_price)]
    pub price_in: Option<f64>,

    /// Output price in USD per million tokens (overrides the table)
    #[arg(long, value_name = "USD", value_parser = parse_price)]
    pub price_out: Option<f64>,

    /// Refuse to start calls whose estimated total cost exceeds USD
    #[arg(long, value_name = "USD", value_parser = parse_usd)]
    pub max_cost: Option<f64>,

    /// With -v, also print request and response bodies (they hold the transcript; keys stay redacted)
    #[arg(long)]
    pub debug_bodies: bool,
}

/// A `--model` value: any name (it is resolved later), with the known names offered to shell
/// completion.
#[derive(Debug, Clone, Copy)]
struct ModelName;

impl clap::builder::TypedValueParser for ModelName {
    type Value = String;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        Ok(value.to_string_lossy().into_owned())
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            crate::model::completion_names()
                .into_iter()
                .map(clap::builder::PossibleValue::new),
        ))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RecallFormat {
    /// Chat-shaped JSON lines (`role`, `content`, tool fields), ready to send to a model
    #[value(alias = "jsonl")]
    Chat,
    /// The source's own line shape (what the agent reads back)
    Native,
    /// Readable text
    Text,
    /// `<memory source="turn:N">…</memory>` blocks
    Memory,
}

#[derive(Debug, Args)]
pub struct RecallArgs {
    /// Transcript file (`-` for standard input)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Output format
    #[arg(long, value_enum, default_value_t = RecallFormat::Chat)]
    pub format: RecallFormat,

    /// Keep summaries first, then the newest entries that fit in TOKENS (4 characters a token, 256 reserved)
    #[arg(long, value_name = "TOKENS")]
    pub budget: Option<usize>,

    /// Read the file as this format instead of detecting it
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub from: Option<InputFormat>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExpandFormat {
    /// The original lines, byte for byte
    Jsonl,
    /// Readable text
    Text,
}

#[derive(Debug, Args)]
pub struct ExpandArgs {
    /// Transcript file
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Id of a summary or stub (for example msg-summary-1-7), of one entry (as `mf search` shows it), or @LINE; without it, the summaries standing in FILE are listed
    #[arg(value_name = "ID")]
    pub id: Option<String>,

    /// Go down through nested summaries to the original messages
    #[arg(long)]
    pub deep: bool,

    /// Retract the summary (append a retraction record): recall is verbatim again
    #[arg(long)]
    pub restore: bool,

    /// With --restore: write to an agent session that looks live
    #[arg(long)]
    pub force: bool,

    /// Output format
    #[arg(long, value_enum, default_value_t = ExpandFormat::Jsonl)]
    pub format: ExpandFormat,

    /// Read the file as this format instead of detecting it
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub from: Option<InputFormat>,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// Transcript file
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// What to look for: words, identifiers, paths, numbers, "quoted phrases"
    #[arg(value_name = "QUERY")]
    pub query: String,

    /// Search every entry, not only what the folds hide
    #[arg(long)]
    pub all: bool,

    /// Hits to show
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub limit: u32,

    /// One JSON object per hit
    #[arg(long)]
    pub json: bool,

    /// Read the file as this format instead of detecting it
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub from: Option<InputFormat>,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// The session the tools read when a call names none
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,

    /// Without --file: the newest session of this agent (default: any of them)
    #[arg(long, value_enum, value_name = "AGENT")]
    pub agent: Option<AgentArg>,

    /// Without --file: sessions run in this directory (default: the current one)
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Transcript file (`-` for standard input)
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Only what concerns this entry (an id, or @LINE)
    #[arg(value_name = "ID")]
    pub id: Option<String>,

    /// Plan as `compact --model MODEL` would, with that model's span and output budgets [env: MF_MODEL]
    #[arg(short, long, value_name = "MODEL", value_parser = ModelName, hide_possible_values = true)]
    pub model: Option<String>,

    #[command(flatten)]
    pub policy: PolicyArgs,

    /// Print as one JSON object
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Transcript files
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,

    /// Print one JSON object per file
    #[arg(long)]
    pub json: bool,

    /// Read the files as this format instead of detecting it
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub from: Option<InputFormat>,
}

/// The commands with a man page of their own (every visible one; a test keeps the list whole).
pub const MAN_PAGES: [&str; 14] = [
    "compact",
    "summarize",
    "recall",
    "expand",
    "search",
    "eval",
    "mcp",
    "explain",
    "verify",
    "models",
    "sessions",
    "hook",
    "completions",
    "man",
];

#[derive(Debug, Args)]
pub struct ManArgs {
    /// A command whose page to print (mf-COMMAND.1); without one, the page of mf itself
    #[arg(value_name = "COMMAND", value_parser = MAN_PAGES)]
    pub command: Option<String>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// Shell to generate for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

// --- mf in the agents' loop: `sessions`, `hook`, `compact --latest` ---

/// An agent whose sessions mf lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AgentArg {
    /// Claude Code
    #[value(alias = "claude-code")]
    Claude,
    /// Codex CLI
    Codex,
    /// pi coding agent
    Pi,
    /// GitHub Copilot CLI
    Copilot,
    /// Qwen Code
    #[value(alias = "qwen-code")]
    Qwen,
    /// Gemini CLI
    #[value(alias = "gemini-cli")]
    Gemini,
}

#[derive(Debug, Args)]
pub struct SessionsArgs {
    /// Only this agent's sessions
    #[arg(long, value_enum, value_name = "AGENT")]
    pub agent: Option<AgentArg>,

    /// Only sessions run in this directory
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Only the newest session (after --agent and --cwd)
    #[arg(long)]
    pub latest: bool,

    /// Print one JSON object per session, one per line
    #[arg(long, conflicts_with = "null")]
    pub json: bool,

    /// Print only the paths, each ended by a NUL byte (for `mf compact --files-from - -0`)
    #[arg(short = '0', long = "null")]
    pub null: bool,
}

/// An agent whose hooks mf installs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HookAgent {
    /// Claude Code: PreCompact and SessionStart(compact) hooks in settings.json
    #[value(name = "claude-code", alias = "claude")]
    ClaudeCode,
    /// Codex CLI: a compact prompt file and the config key that uses it
    Codex,
    /// Qwen Code: a PreCompact hook in settings.json (`mf hook qwen`: a keep-list for its summary)
    #[value(name = "qwen", alias = "qwen-code")]
    Qwen,
}

/// Where `mf hook install claude-code` (or `qwen`) writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HookScope {
    /// `~/.claude/settings.json`
    #[default]
    User,
    /// `.claude/settings.json` in the current directory
    Project,
}

#[derive(Debug, Args)]
pub struct HookArgs {
    #[command(subcommand)]
    pub action: HookAction,
}

#[derive(Debug, Subcommand)]
pub enum HookAction {
    /// Claude Code's hook: reads the hook's JSON on stdin (PreCompact: print a keep-list; SessionStart after a compaction: report what the summary lost); never blocks, never writes the session
    ClaudeCode,
    /// Qwen Code's hook: reads the hook's JSON on stdin (PreCompact: answer a keep-list as additional instructions for Qwen's summary); never blocks, never writes the session
    Qwen,
    /// Add mf's hooks to an agent's settings (merging, idempotent, with a backup)
    Install(HookInstallArgs),
    /// Remove mf's hooks from an agent's settings (the file back byte for byte when unchanged since install)
    Uninstall(HookInstallArgs),
}

#[derive(Debug, Args)]
pub struct HookInstallArgs {
    /// The agent
    #[arg(value_enum)]
    pub agent: HookAgent,

    /// Claude Code: the project's `.claude/settings.json` (in the current directory)
    #[arg(long, conflicts_with = "user")]
    pub project: bool,

    /// Claude Code: the user's `~/.claude/settings.json` (the default)
    #[arg(long)]
    pub user: bool,

    /// Print what would change without writing
    #[arg(long)]
    pub dry_run: bool,
}

impl HookInstallArgs {
    pub fn scope(&self) -> HookScope {
        if self.project {
            HookScope::Project
        } else {
            HookScope::User
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_must_be_finite_and_in_range() {
        assert!(parse_temperature("NaN").is_err());
        assert!(parse_temperature("inf").is_err());
        assert!(parse_temperature("3").is_err());
        assert_eq!(parse_temperature("0.2"), Ok(0.2));
        assert!(parse_usd("NaN").is_err());
        assert!(parse_usd("-1").is_err());
        assert!(parse_price("1e308").is_err());
        assert!(parse_output_tokens("0").is_err());
        assert!(parse_timeout("0").is_err());
        assert!(parse_timeout("nan").is_err());
        assert!(positive_usize("0").is_err());
        assert!(parse_share("1.5").is_err());
    }

    #[test]
    fn every_visible_command_has_a_man_page() {
        assert_eq!(crate::commands::man::commands(), MAN_PAGES);
    }

    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
