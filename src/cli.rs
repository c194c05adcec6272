//! `Cli`: the command line, as clap derive structs only — no logic, no environment.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "mf",
    version,
    about = "Fold the older turns of a JSONL conversation into a summary — append-only, every original byte kept",
    long_about = "mf folds the older turns of a JSONL chat transcript into one summary written by a model you name, \
appends that summary to the same file and deletes nothing: the summary's coverage record (the exact ids it stands \
for) is what hides the originals from recall. Retract the summary and recall is verbatim again.",
    after_help = "Examples:\n  mf compact chat.jsonl --model extractive\n  mf recall chat.jsonl --format text\n  mf expand chat.jsonl msg-summary-1-7 --restore\n  mf explain chat.jsonl\n\nExit codes: 0 success (also when there is nothing to fold), 1 bad input or refused operation, 2 usage error or unexpected failure, 130 interrupted."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    /// Print no warnings or notes on stderr (errors still print)
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// Never draw progress bars (they are only drawn on a terminal anyway; also MF_NO_PROGRESS=1)
    #[arg(long, global = true)]
    pub no_progress: bool,

    /// Show request metadata on stderr: URL, model, sizes, status, request id, retry waits (never bodies or keys)
    #[arg(short, long, global = true)]
    pub verbose: bool,

    /// Config file [default: $XDG_CONFIG_HOME/mf/config.toml]
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Fold older turns into a summary and append it, printing the decision record
    Compact(Box<CompactArgs>),
    /// Print what a model should see now: standing summaries and the turns they do not cover
    Recall(RecallArgs),
    /// Print the originals behind a summary; `--restore` retracts the summary
    Expand(ExpandArgs),
    /// Show every decision recorded in the file, suspicious lines, and what `compact` would do now
    Explain(ExplainArgs),
    /// List the summarizer models mf knows: aliases, providers, ids, context sizes and prices
    Models(ModelsArgs),
    /// Print a shell completion script to stdout
    Completions(CompletionsArgs),
}

#[derive(Debug, Args)]
pub struct ModelsArgs {
    /// Print as JSON
    #[arg(long)]
    pub json: bool,
}

/// The fold policy flags, shared by `compact` and `explain`.
#[derive(Debug, Args, Clone)]
pub struct PolicyArgs {
    /// Entries at the end that stay verbatim; the seam is rounded out to a whole turn [default: 5]
    #[arg(long, value_name = "N")]
    pub recent: Option<usize>,

    /// Consider only the newest N uncovered entries (must be greater than --recent)
    #[arg(long, value_name = "N")]
    pub size: Option<usize>,

    /// Make no call unless at least N uncovered entries exist [default: 20]
    #[arg(long, value_name = "N")]
    pub trigger: Option<usize>,

    /// Make no call unless at least N entries would fold [default: 2]
    #[arg(long, value_name = "N")]
    pub min_fold: Option<usize>,
}

#[derive(Debug, Args)]
pub struct CompactArgs {
    /// Transcript files (JSONL, one chat message per line)
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Summarizer model (required; or MF_MODEL). `extractive` is the built-in offline summarizer
    #[arg(short, long, value_name = "MODEL")]
    pub model: Option<String>,

    #[command(flatten)]
    pub policy: PolicyArgs,

    /// Replace the summarizer instruction: TEXT, or @FILE to read it from a file
    #[arg(long, value_name = "TEXT|@FILE")]
    pub system_prompt: Option<String>,

    /// Print the plan without calling the summarizer or writing anything
    #[arg(long)]
    pub dry_run: bool,

    /// Leave the input untouched; write the input's bytes plus the new lines to PATH
    /// (a directory when several files are given)
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,

    /// Print decision records as JSON, one object per line
    #[arg(long)]
    pub json: bool,

    /// Files compacted at once
    #[arg(short = 'j', long, value_name = "N", default_value_t = 4)]
    pub jobs: usize,

    #[command(flatten)]
    pub provider: ProviderArgs,
}

/// How to reach and pay for a summarizer model.
#[derive(Debug, Args, Clone, Default)]
#[command(next_help_heading = "Summarizer model")]
pub struct ProviderArgs {
    /// API base URL (beats ANTHROPIC_BASE_URL / OPENAI_BASE_URL; required for openai-compatible:NAME; or MF_BASE_URL)
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,

    /// Seconds one request may take, connect to last byte [default: 120]
    #[arg(long, value_name = "SECS")]
    pub timeout: Option<f64>,

    /// Retries after a failed attempt (connection errors, timeouts, 408, 409, 429, 5xx) [default: 2]
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,

    /// Sampling temperature (sent only when given)
    #[arg(long, value_name = "T")]
    pub temperature: Option<f64>,

    /// Seed for OpenAI-style servers that honour it (with --temperature 0 for repeatable output)
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,

    /// Cap on the summary's output tokens [default: sized to the span]
    #[arg(long, value_name = "N")]
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

    /// Input price in USD per million tokens (overrides the table)
    #[arg(long, value_name = "USD")]
    pub price_in: Option<f64>,

    /// Output price in USD per million tokens (overrides the table)
    #[arg(long, value_name = "USD")]
    pub price_out: Option<f64>,

    /// Refuse to start calls whose estimated total cost exceeds USD
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,

    /// With -v, also print request and response bodies (they hold the transcript; keys stay redacted)
    #[arg(long)]
    pub debug_bodies: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RecallFormat {
    /// Chat-shaped JSON lines, ready to send to a model
    Jsonl,
    /// Readable text
    Text,
    /// `<memory source="turn:N">…</memory>` blocks
    Memory,
}

#[derive(Debug, Args)]
pub struct RecallArgs {
    /// Transcript file
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Output format
    #[arg(long, value_enum, default_value_t = RecallFormat::Jsonl)]
    pub format: RecallFormat,

    /// Keep summaries first, then the newest entries that fit in TOKENS (4 characters a token, 256 reserved)
    #[arg(long, value_name = "TOKENS")]
    pub budget: Option<usize>,
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

    /// Id of a summary (for example msg-summary-1-7)
    #[arg(value_name = "ID")]
    pub id: String,

    /// Go down through nested summaries to the original messages
    #[arg(long)]
    pub deep: bool,

    /// Retract the summary (append a retraction record): recall is verbatim again
    #[arg(long)]
    pub restore: bool,

    /// Output format
    #[arg(long, value_enum, default_value_t = ExpandFormat::Jsonl)]
    pub format: ExpandFormat,
}

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Transcript file
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// Only what concerns this id (a summary, or a message a summary covers)
    #[arg(value_name = "ID")]
    pub id: Option<String>,

    #[command(flatten)]
    pub policy: PolicyArgs,

    /// Print as one JSON object
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// Shell to generate for
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}
