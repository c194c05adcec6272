//! `Settings`: flags, environment and the config file resolved into what each command needs.
//! The only module that reads the environment. Precedence: flags beat env, env beats the file.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Duration;

use secrecy::SecretString;
use serde::Deserialize;

use crate::cli::{
    AuditArgs, CompactArgs, InputFormat, PolicyArgs, Protect, ProviderArgs, StrategyArg,
};
use crate::error::MfError;
use crate::fold::{FoldPolicy, Strategy};
use crate::http::HttpSettings;
use crate::model::{self, ModelRef, Pricing, Provider};
use crate::summarizer::{RemoteConfig, anthropic, openai};
use crate::transcript::{
    CacheOptions, DEFAULT_STDIN_LIMIT, Format, OutputTarget, ReadOptions, StdinOptions,
};

/// Environment variables mf reads.
pub mod env_vars {
    /// The summarizer model when `--model` is not given.
    pub const MF_MODEL: &str = "MF_MODEL";
    /// The base URL when `--base-url` is not given (any provider; required for openai-compatible).
    pub const MF_BASE_URL: &str = "MF_BASE_URL";
    /// The key for an openai-compatible server, if it needs one.
    pub const MF_API_KEY: &str = "MF_API_KEY";
    /// `--recent` and `--timeout` defaults.
    pub const MF_RECENT: &str = "MF_RECENT";
    pub const MF_TIMEOUT: &str = "MF_TIMEOUT";
    /// Set to anything but `0` to never draw progress bars.
    pub const MF_NO_PROGRESS: &str = "MF_NO_PROGRESS";
    /// The terminal's width, when the shell says it: tables and text on a terminal fit it.
    pub const COLUMNS: &str = "COLUMNS";
    pub const ANTHROPIC_API_KEY: &str = "ANTHROPIC_API_KEY";
    pub const ANTHROPIC_BASE_URL: &str = "ANTHROPIC_BASE_URL";
    pub const OPENAI_API_KEY: &str = "OPENAI_API_KEY";
    pub const OPENAI_BASE_URL: &str = "OPENAI_BASE_URL";
    pub const XDG_CONFIG_HOME: &str = "XDG_CONFIG_HOME";
    pub const XDG_CACHE_HOME: &str = "XDG_CACHE_HOME";
    /// A config file to use instead of the default one.
    pub const MF_CONFIG: &str = "MF_CONFIG";
    /// How long an append waits for another program to finish its line (milliseconds).
    pub const MF_TAIL_WAIT_MS: &str = "MF_TAIL_WAIT_MS";
    /// How long after its last write an agent session whose tail shows the agent in the middle
    /// of a step still counts as live (seconds).
    pub const MF_LIVE_SECONDS: &str = "MF_LIVE_SECONDS";
    /// Where Claude Code keeps its state (default `~/.claude`).
    pub const CLAUDE_CONFIG_DIR: &str = "CLAUDE_CONFIG_DIR";
    /// Where Codex keeps its state (default `~/.codex`).
    pub const CODEX_HOME: &str = "CODEX_HOME";
    pub const GEMINI_CLI_HOME: &str = "GEMINI_CLI_HOME";
    /// pi's agent directory (default `~/.pi/agent`) and its sessions directory.
    pub const PI_CODING_AGENT_DIR: &str = "PI_CODING_AGENT_DIR";
    pub const PI_CODING_AGENT_SESSION_DIR: &str = "PI_CODING_AGENT_SESSION_DIR";
    /// Where GitHub Copilot CLI keeps its state (default `~/.copilot`).
    pub const COPILOT_HOME: &str = "COPILOT_HOME";
    /// Qwen Code's home (default `~/.qwen`), and the runtime directory that holds its sessions
    /// when set (it wins over the home for them).
    pub const QWEN_HOME: &str = "QWEN_HOME";
    pub const QWEN_RUNTIME_DIR: &str = "QWEN_RUNTIME_DIR";
    pub const HOME: &str = "HOME";
    /// Set by Claude Code 2.1 in the environment of the MCP servers it starts: its session's id,
    /// the session `mf mcp` reads when a call names no file.
    pub const CLAUDE_CODE_SESSION_ID: &str = "CLAUDE_CODE_SESSION_ID";
    /// The cache directory; checkpoints go to `mf/checkpoints` in it (default `$XDG_CACHE_HOME`, else `~/.cache`).
    pub const MF_CACHE_DIR: &str = "MF_CACHE_DIR";
    /// Where mf keeps the provider batches it submitted and has not collected (default
    /// `$XDG_STATE_HOME/mf/batches`, else `~/.local/state/mf/batches`).
    pub const MF_STATE_DIR: &str = "MF_STATE_DIR";
    pub const XDG_STATE_HOME: &str = "XDG_STATE_HOME";
    /// How often a batch is polled, in milliseconds (default: every 10 s, slowing to 60 s).
    pub const MF_BATCH_POLL_MS: &str = "MF_BATCH_POLL_MS";
    /// The most bytes mf reads from standard input (`-`), a size such as `1000`, `500MiB` or
    /// `4GiB` (default 1 GiB).
    pub const MF_STDIN_LIMIT: &str = "MF_STDIN_LIMIT";
    /// Where standard input is copied to (an unnamed file; the system's default otherwise).
    pub const TMPDIR: &str = "TMPDIR";
    /// Set to anything but `0` to read every file in full (as `--no-cache`).
    pub const MF_NO_CACHE: &str = "MF_NO_CACHE";
    /// Files shorter than this many bytes are not checkpointed (default 4 MiB).
    pub const MF_CACHE_MIN_BYTES: &str = "MF_CACHE_MIN_BYTES";
    /// `--min-retention` when the flag is not given (a share, 0 to 1; 0 turns the check off).
    pub const MF_MIN_RETENTION: &str = "MF_MIN_RETENTION";
    /// Set to anything but `0` to write summaries that state invented figures, misstated claims
    /// or corrected values (as `--allow-inventions`).
    pub const MF_ALLOW_INVENTIONS: &str = "MF_ALLOW_INVENTIONS";
    /// Debug builds only (the test suite's fault injection): panic in the audit of any span
    /// whose text holds this string. A release build never reads it.
    #[cfg(debug_assertions)]
    pub const MF_DEBUG_PANIC_ON: &str = "MF_DEBUG_PANIC_ON";
}

use env_vars as ev;

mod agents;
pub mod tier;
pub use agents::{
    HookPaths, agent_dirs, agent_of, calling_session_id, claude_global_config, cwd_spellings,
    find_sessions, hook_paths, hook_state_dir, latest_session, recall_tool_installed,
    scan_sessions, session_roots,
};

pub(crate) fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The test suite's fault injection: the text whose spans' audit panics (`MF_DEBUG_PANIC_ON`),
/// so a test can prove that a panic becomes one file's error record. Always `None` in a release
/// build.
pub fn debug_panic_on() -> Option<&'static str> {
    #[cfg(debug_assertions)]
    {
        static ON: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
        ON.get_or_init(|| var(ev::MF_DEBUG_PANIC_ON)).as_deref()
    }
    #[cfg(not(debug_assertions))]
    {
        None
    }
}

/// Whether standard input is a terminal (a person at the keyboard, not a pipe or a file).
pub fn stdin_is_terminal() -> bool {
    std::io::stdin().is_terminal()
}

/// How mf talks to the person at the terminal.
#[derive(Debug, Clone, Copy)]
pub struct UiSettings {
    pub quiet: bool,
    /// Progress bars: only on a terminal, never when asked not to.
    pub progress: bool,
    pub stdout_is_terminal: bool,
    /// How many `-v`: 1 request metadata on stderr, 2 also headers and timings in detail.
    pub verbose: u8,
    /// The width tables and text fit on a terminal: `COLUMNS` when it is set to one, else the
    /// width of the terminal stdout is (None when neither says).
    pub columns: Option<u16>,
}

impl UiSettings {
    pub fn resolve(quiet: bool, no_progress: bool, verbose: u8) -> Self {
        let env_off = var(ev::MF_NO_PROGRESS).is_some_and(|v| v != "0");
        let stdout_is_terminal = std::io::stdout().is_terminal();
        let terminal_width = || {
            rustix::termios::tcgetwinsize(std::io::stdout())
                .ok()
                .map(|size| size.ws_col)
        };
        Self {
            quiet,
            progress: !quiet
                && verbose == 0
                && !no_progress
                && !env_off
                && std::io::stderr().is_terminal(),
            stdout_is_terminal,
            verbose,
            columns: var(ev::COLUMNS)
                .and_then(|v| v.trim().parse::<u16>().ok())
                .or_else(|| stdout_is_terminal.then(terminal_width).flatten())
                .filter(|w| *w > 0),
        }
    }
}

/// `config.toml`: defaults below flags and env.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub model: Option<String>,
    pub base_url: Option<String>,
    pub recent: Option<usize>,
    pub timeout: Option<f64>,
    pub retries: Option<u32>,
    pub trigger: Option<usize>,
    pub min_fold: Option<usize>,
}

/// Read the config file: `--config PATH` (must exist), else `$XDG_CONFIG_HOME/mf/config.toml`
/// or `~/.config/mf/config.toml` (used when present).
pub fn load_config(explicit: Option<&Path>) -> Result<ConfigFile, MfError> {
    let from_env = var(ev::MF_CONFIG).map(PathBuf::from);
    let (path, required) = match explicit.map(Path::to_path_buf).or(from_env) {
        Some(p) => (p, true),
        None => {
            let base = var(ev::XDG_CONFIG_HOME)
                .map(PathBuf::from)
                .or_else(|| var(ev::HOME).map(|h| PathBuf::from(h).join(".config")));
            match base {
                Some(b) => (b.join("mf").join("config.toml"), false),
                None => return Ok(ConfigFile::default()),
            }
        }
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if !required && e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(ConfigFile::default());
        }
        Err(e) => {
            return Err(MfError::refused(
                format!("cannot read config file `{}`: {e}", path.display()),
                None,
            ));
        }
    };
    toml::from_str(&text).map_err(|e| {
        MfError::refused(
            format!(
                "config file `{}` is not valid: {}",
                path.display(),
                e.message()
            ),
            Some("known keys: model, base_url, recent, timeout, retries, trigger, min_fold".into()),
        )
    })
}

fn parse_env<T: std::str::FromStr>(name: &str) -> Result<Option<T>, MfError> {
    match var(name) {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| MfError::usage(format!("{name}={v} is not a valid value"), None)),
    }
}

/// What a model lends the policy: its span and output budgets.
#[derive(Debug, Clone, Copy)]
pub struct ModelBudgets {
    pub span_tokens: usize,
    pub output_tokens: usize,
}

/// Resolve the policy flags over env, the config file, the model's budgets and the defaults.
pub fn resolve_policy(
    args: &PolicyArgs,
    config: &ConfigFile,
    budgets: Option<ModelBudgets>,
    max_output_tokens: Option<u32>,
) -> Result<FoldPolicy, MfError> {
    let d = FoldPolicy::default();
    let recent = match args.recent {
        Some(r) => r,
        None => parse_env(ev::MF_RECENT)?
            .or(config.recent)
            .unwrap_or(d.recent),
    };
    let strategy = match args.strategy {
        None | Some(StrategyArg::Summary) => Strategy::Summary,
        Some(StrategyArg::Mask) => Strategy::Mask,
        Some(StrategyArg::MaskSummary) => Strategy::MaskThenSummary,
        Some(StrategyArg::Cited) => Strategy::Cited,
    };
    let protect_user = match args.protect {
        Some(Protect::User) => true,
        Some(Protect::None) => false,
        None => strategy == Strategy::Cited,
    };
    FoldPolicy {
        recent,
        recent_tokens: args.recent_tokens.unwrap_or(d.recent_tokens),
        // An explicit --recent-tokens is the tail's size; by default the recall goal sizes it.
        tail_goal: d.tail_goal.filter(|_| args.recent_tokens.is_none()),
        size: args.size,
        trigger: args.trigger.or(config.trigger).unwrap_or(d.trigger),
        min_fold: args.min_fold.or(config.min_fold).unwrap_or(d.min_fold),
        protect_user,
        max_span_tokens: args.max_span_tokens.or(budgets.map(|b| b.span_tokens)),
        target_tokens: args.target_tokens,
        compression: d.compression,
        max_output_tokens: max_output_tokens
            .map(|n| n as usize)
            .or(budgets.map(|b| b.output_tokens))
            .unwrap_or(d.max_output_tokens),
        strategy,
        keep_tool_results: args.keep_tool_results.unwrap_or(d.keep_tool_results),
    }
    .validate()
    .map_err(|e| MfError::usage(e.to_string(), None))
}

/// The policy `explain` plans with, and the model it plans for: when a model is named
/// (`--model`, else `MF_MODEL`, else the config file), its span and output budgets, so the plan is
/// the one `compact` with that model would make; with none named, no span budget.
pub fn explain_policy(
    args: &PolicyArgs,
    model: Option<&str>,
    config: &ConfigFile,
) -> Result<(FoldPolicy, Option<String>), MfError> {
    let named = model.is_some() || var(ev::MF_MODEL).is_some() || config.model.is_some();
    if !named {
        return Ok((resolve_policy(args, config, None, None)?, None));
    }
    let m = resolve_model_name(model, config)?;
    let (span, out) = m.budgets();
    let budgets = ModelBudgets {
        span_tokens: span as usize,
        output_tokens: out as usize,
    };
    Ok((
        resolve_policy(args, config, Some(budgets), None)?,
        Some(m.label()),
    ))
}

/// The read options the flags ask for (`cache`: where checkpoints are kept, if anywhere).
pub fn read_options(from: Option<InputFormat>, cache: Option<&CacheOptions>) -> ReadOptions {
    ReadOptions {
        format: from.map(|f| match f {
            InputFormat::Chat => Format::Chat,
            InputFormat::Claude => Format::Claude,
            InputFormat::Codex => Format::Codex,
            InputFormat::Pi => Format::Pi,
            InputFormat::Copilot => Format::Copilot,
            InputFormat::Qwen => Format::Qwen,
            InputFormat::Gemini => Format::Gemini,
        }),
        cache: cache.cloned(),
        vet: Some(crate::fold::frame::vet_claim),
        stdin: stdin_options(),
    }
}

/// How standard input is copied: the bound `MF_STDIN_LIMIT` sets (a value that is not a size is
/// an error when standard input is read, not before: a command that reads no `-` ignores it),
/// into `TMPDIR` when it is set.
pub fn stdin_options() -> StdinOptions {
    let limit = match var(ev::MF_STDIN_LIMIT) {
        None => Ok(DEFAULT_STDIN_LIMIT),
        Some(v) => parse_size(&v).ok_or_else(|| {
            format!(
                "{}={v} is not a size: give bytes, optionally with a unit (`1000`, `500MiB`, `4GiB`)",
                ev::MF_STDIN_LIMIT
            )
        }),
    };
    StdinOptions {
        limit,
        dir: var(ev::TMPDIR).map(PathBuf::from),
    }
}

/// A size in bytes: digits, then optionally a unit, 1024-based whichever way it is spelled
/// (`K`, `KB`, `KiB`, … to `T`), case and a space before it aside. At least 1 byte.
fn parse_size(v: &str) -> Option<u64> {
    let v = v.trim();
    let end = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let n: u64 = v[..end].parse().ok()?;
    let unit = v[end..].trim().to_ascii_lowercase();
    let shift = match unit.as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return None,
    };
    n.checked_mul(1u64 << shift).filter(|&b| b > 0)
}

/// Where checkpoints of large files are kept, unless `--no-cache` or `MF_NO_CACHE` says not to
/// (or there is no cache directory to be had).
pub fn cache_options(no_cache: bool) -> Option<CacheOptions> {
    if no_cache || var(ev::MF_NO_CACHE).is_some_and(|v| v.trim() != "0") {
        return None;
    }
    // The cache directory, and mf's own directory of checkpoints in it (whatever else the cache
    // directory holds, mf reads, writes and prunes only there).
    let dir = var(ev::MF_CACHE_DIR)
        .map(PathBuf::from)
        .or_else(|| {
            var(ev::XDG_CACHE_HOME)
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .or_else(|| var(ev::HOME).map(|h| PathBuf::from(h).join(".cache")))
        })?
        .join("mf")
        .join("checkpoints");
    let min_bytes = var(ev::MF_CACHE_MIN_BYTES)
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(4 << 20);
    // This build: its version and the executable's size and time, so that a rebuilt mf (whose
    // index layout may differ) never reads an older build's checkpoint.
    let exe = std::env::current_exe().and_then(std::fs::metadata).ok()?;
    let built = exe
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Some(CacheOptions {
        dir,
        min_bytes,
        stamp: format!("{} {} {built}", env!("CARGO_PKG_VERSION"), exe.len()),
    })
}

/// How long an append waits for another writer's line to end.
pub fn tail_wait() -> Duration {
    Duration::from_millis(
        var(ev::MF_TAIL_WAIT_MS)
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(2_000),
    )
}

/// How long after its last write an agent session whose tail shows the agent in the middle of
/// a step (a line being written, a tool call without its result, a prompt without its reply)
/// still counts as live: a model's reply or a tool often takes this long (default 60 s).
pub fn live_window() -> Duration {
    Duration::from_secs(
        var(ev::MF_LIVE_SECONDS)
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(60),
    )
}

/// The live-session guard: where the agents leave their traces, and the window.
pub fn live_guard() -> crate::transcript::Guard {
    crate::transcript::Guard {
        dirs: agent_dirs(),
        window: live_window(),
    }
}

/// The lines of `--files-from`: one path a line, or NUL-separated.
/// The list is read up to standard input's bound (`MF_STDIN_LIMIT`), from a pipe or a file alike.
fn files_from(source: &Path, nul: bool) -> Result<Vec<PathBuf>, MfError> {
    use std::io::Read;
    let limit = stdin_options()
        .limit
        .map_err(|message| MfError::usage(message, None))?;
    let mut bytes = Vec::new();
    let read = if source.as_os_str() == "-" {
        std::io::stdin()
            .lock()
            .take(limit.saturating_add(1))
            .read_to_end(&mut bytes)
    } else {
        std::fs::File::open(source)
            .and_then(|f| f.take(limit.saturating_add(1)).read_to_end(&mut bytes))
    };
    read.map_err(|e| {
        MfError::refused(
            format!("cannot read the file list `{}`: {e}", source.display()),
            None,
        )
    })?;
    if bytes.len() as u64 > limit {
        return Err(MfError::refused(
            format!(
                "the file list `{}` is longer than mf's bound of {} (MF_STDIN_LIMIT); mf stopped reading it there",
                source.display(),
                crate::text::bound(limit)
            ),
            Some(
                "raise the bound with the environment variable MF_STDIN_LIMIT (a size: `4GiB`, `500MiB`, bytes), or split the list".into(),
            ),
        ));
    }
    let sep = if nul { b'\0' } else { b'\n' };
    Ok(bytes
        .split(|&b| b == sep)
        .map(|p| p.strip_suffix(b"\r").filter(|_| !nul).unwrap_or(p))
        .filter(|p| !p.is_empty())
        .map(|p| {
            use std::os::unix::ffi::OsStrExt;
            PathBuf::from(std::ffi::OsStr::from_bytes(p))
        })
        .collect())
}

/// Where `compact` prints its decision records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordsTo {
    Stdout,
    /// `--output -`: standard output carries the transcript.
    Stderr,
    /// `--record PATH`: JSON records, written to PATH (created or truncated).
    File(PathBuf),
}

/// Where each input's copy goes with `--output`: checked before any work. Two inputs mapping to
/// one output, or an existing output without `--force`, is a usage error.
fn output_targets(
    out: &Path,
    files: &[PathBuf],
    force: bool,
) -> Result<Vec<OutputTarget>, MfError> {
    if out.as_os_str() == "-" {
        if files.len() != 1 {
            return Err(MfError::usage(
                "`--output -` streams one transcript to standard output; give one file",
                None,
            ));
        }
        return Ok(vec![OutputTarget::Stdout]);
    }
    let targets: Vec<PathBuf> = if out.is_dir() {
        files
            .iter()
            .map(|f| {
                let name = if f.as_os_str() == "-" {
                    std::ffi::OsString::from("stdin.jsonl")
                } else {
                    f.file_name().unwrap_or_default().to_os_string()
                };
                out.join(name)
            })
            .collect()
    } else if files.len() > 1 {
        return Err(MfError::usage(
            format!(
                "with several files, `--output` must be an existing directory (`{}` is not)",
                out.display()
            ),
            None,
        ));
    } else {
        vec![out.to_path_buf()]
    };
    let mut seen = std::collections::HashMap::new();
    for (f, t) in files.iter().zip(&targets) {
        if let Some(other) = seen.insert(t.clone(), f.clone()) {
            return Err(MfError::usage(
                format!(
                    "`{}` and `{}` would both be written to `{}`",
                    other.display(),
                    f.display(),
                    t.display()
                ),
                Some("give them separate output directories, or rename one".into()),
            ));
        }
        if same_file(f, t) {
            return Err(MfError::usage(
                format!("`--output {}` is the input file", t.display()),
                Some("drop `--output` to compact the file in place (append-only)".into()),
            ));
        }
        // A device or FIFO is written into, never replaced (`-o /dev/null` needs no --force).
        let stream = std::fs::metadata(t).is_ok_and(|m| {
            use std::os::unix::fs::FileTypeExt;
            m.file_type().is_char_device() || m.file_type().is_fifo()
        });
        if !force && !stream && std::fs::symlink_metadata(t).is_ok() {
            return Err(MfError::usage(
                format!("`{}` already exists; mf does not overwrite it", t.display()),
                Some("choose another path, or pass --force to replace it".into()),
            ));
        }
    }
    Ok(targets.into_iter().map(OutputTarget::File).collect())
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// The summarizer a command will use.
#[derive(Debug, Clone)]
pub enum ModelChoice {
    Extractive,
    Remote(Box<RemoteConfig>),
}

impl ModelChoice {
    pub fn label(&self) -> String {
        match self {
            ModelChoice::Extractive => crate::summarizer::extractive::NAME.to_string(),
            ModelChoice::Remote(r) => r.model.label(),
        }
    }
}

/// Resolve the model name: `--model`, else `MF_MODEL`, else the config file; never a default.
pub fn resolve_model_name(flag: Option<&str>, config: &ConfigFile) -> Result<ModelRef, MfError> {
    let name = flag
        .map(str::to_string)
        .or_else(|| var(ev::MF_MODEL))
        .or_else(|| config.model.clone());
    let Some(name) = name else {
        return Err(MfError::usage(
            "no summarizer model named: pass `--model MODEL` or set MF_MODEL (mf never picks one for you)",
            Some(format!("choices: {}", model::choices())),
        ));
    };
    let resolved = model::resolve(&name);
    if let Ok(m) = &resolved
        && m.row.is_none()
        && !name.contains(':')
        && let Some(meant) = mistyped_model(&name)
    {
        return Err(MfError::usage(
            format!(
                "`{}` is not a model mf knows; did you mean `{meant}`?",
                name.trim()
            ),
            Some(format!(
                "to use an id mf does not list, name its provider: `--model {}:{}`",
                m.provider.as_str(),
                name.trim()
            )),
        ));
    }
    resolved.map_err(|e| {
        let near = closest_models(&name);
        let message = if near.is_empty() {
            e.to_string()
        } else {
            format!(
                "{e}; did you mean {}?",
                near.iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            )
        };
        MfError::usage(message, Some(format!("choices: {}", model::choices())))
    })
}

/// The known model names nearest to a mistyped one (at most three, best first): each alias
/// and id is compared whole and without its `claude-` prefix, so `haiku-5.6` finds
/// `claude-haiku-5-5`.
fn closest_models(name: &str) -> Vec<&'static str> {
    let typed = name.trim().to_ascii_lowercase();
    let typed = typed.split_once(':').map_or(typed.as_str(), |(_, id)| id);
    let mut scored: Vec<(f64, &'static str)> = Vec::new();
    for r in model::MODELS {
        for known in r.alias.into_iter().chain([r.id]) {
            let bare = known.strip_prefix("claude-").unwrap_or(known);
            let score = strsim::normalized_damerau_levenshtein(typed, known)
                .max(strsim::normalized_damerau_levenshtein(typed, bare));
            if score >= 0.6 && !scored.iter().any(|(_, k)| *k == known) {
                scored.push((score, known));
            }
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().take(3).map(|(_, k)| k).collect()
}

/// The known model an unlisted bare id was meant to be, if it looks mistyped: cut short (a
/// proper prefix of a known id or alias: `claude-haik`), or a near miss with the same version
/// digits (`claude-hiaku-5-5`). An unlisted id with other digits is a model newer than mf's
/// table (`claude-haiku-5-6`) and passes.
fn mistyped_model(name: &str) -> Option<&'static str> {
    let typed = name.trim().to_ascii_lowercase();
    let digits = |s: &str| s.chars().filter(char::is_ascii_digit).collect::<String>();
    let known = || {
        model::MODELS
            .iter()
            .filter(|r| r.provider != model::Provider::Builtin)
            .flat_map(|r| r.alias.into_iter().chain([r.id]).map(move |k| (k, r.id)))
    };
    if typed.len() >= 4
        && let Some((_, id)) = known().find(|(k, _)| {
            // Cut inside a word (`claude-haik|u`), not at a boundary: `gpt-5` is a model of its
            // own beside `gpt-5.4`, `o3` beside `o3-mini`.
            k.starts_with(&typed)
                && k[typed.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphanumeric())
                && typed
                    .chars()
                    .last()
                    .is_some_and(|c| c.is_ascii_alphabetic())
        })
    {
        return Some(id);
    }
    known()
        .filter(|(k, _)| digits(k) == digits(&typed))
        .map(|(k, id)| (strsim::damerau_levenshtein(&typed, k), id))
        .filter(|&(d, _)| d > 0 && d <= 2)
        .min_by_key(|&(d, _)| d)
        .map(|(_, id)| id)
}

fn is_loopback(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h.eq_ignore_ascii_case("localhost")
        || h.parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// How summaries are audited.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AuditSettings {
    pub min_retention: f64,
    pub retry_lossy: bool,
    /// `--retry`: declines recorded before do not bind.
    pub retry: bool,
    pub strict: bool,
    /// `--allow-inventions`: inventions, misstated claims and stale values do not decline.
    pub allow_inventions: bool,
    pub count_tool_results: bool,
}

/// Everything `compact` needs.
#[derive(Debug, Clone)]
pub struct CompactSettings {
    pub files: Vec<PathBuf>,
    pub model: ModelChoice,
    pub policy: FoldPolicy,
    /// Replacement instruction, if given.
    pub instruction: Option<String>,
    pub dry_run: bool,
    /// `--output`: one target per file, in order.
    pub outputs: Option<Vec<OutputTarget>>,
    pub force: bool,
    pub json: bool,
    /// Where the decision records go.
    pub records_to: RecordsTo,
    pub jobs: usize,
    pub http: HttpSettings,
    /// USD per million input and output tokens, when known.
    /// The model's price bands (or the one price `--price-in` / `--price-out` give).
    pub pricing: Option<Pricing>,
    /// The model's tokens per mf estimate token (4 characters).
    pub token_ratio: f64,
    /// `--dry-run --count-tokens`: ask the provider for each request's exact input tokens.
    pub count_tokens: bool,
    /// Said once on stderr before anything runs (a model that is shutting down).
    pub model_warning: Option<String>,
    pub max_cost: Option<f64>,
    pub agent_model: Option<String>,
    pub allow_same_model: bool,
    pub debug_bodies: bool,
    pub read: ReadOptions,
    /// Replace secrets in spans before they leave the machine.
    pub redact: bool,
    pub rollup: bool,
    /// The model's context window, for `--dry-run` warnings.
    pub context_tokens: Option<u64>,
    pub tail_wait: Duration,
    pub live: crate::transcript::Guard,
    pub allow_degraded: bool,
    /// `--batch`, `--service-tier`: the tier calls run at, and how a batch is waited for.
    pub tiers: tier::TierSettings,
    pub audit: AuditSettings,
}

impl CompactSettings {
    /// The settings of a compact run, by concern: the files (flags), the model and what it
    /// refuses (flags, env, config), the policy, where outputs and records go, the HTTP client
    /// (flags, env, config), pricing, the provider and its key (env), and the audit (flags,
    /// env). Each concern is refused in this order, before anything is read or paid.
    pub fn resolve(args: CompactArgs, config_path: Option<&Path>) -> Result<Self, MfError> {
        let config = load_config(config_path)?;
        let files = input_files(&args)?;
        let CompactArgs {
            model,
            policy,
            rollup,
            system_prompt,
            dry_run,
            output,
            force,
            json,
            record,
            jobs,
            allow_degraded,
            audit,
            provider,
            tier: tier_args,
            ..
        } = args;
        // `--strategy mask` calls no model: none need be named, and a named one (MF_MODEL in a
        // CI job, say) is checked but never set up, so it needs no key.
        let masks_only = matches!(policy.strategy, Some(StrategyArg::Mask));
        let model_ref = model_of(model.as_deref(), masks_only, &config)?;
        let (span, out) = model_ref.budgets();
        let budgets = ModelBudgets {
            span_tokens: span as usize,
            output_tokens: out as usize,
        };
        let read = read_options(policy.from, None);
        let policy = resolve_policy(&policy, &config, Some(budgets), provider.max_output_tokens)?;
        let instruction = instruction_of(system_prompt)?;
        let outputs = match &output {
            Some(out) => Some(output_targets(out, &files, force)?),
            None => None,
        };
        let streams = matches!(outputs.as_deref(), Some([OutputTarget::Stdout]));
        let records_to = records_to(record, streams)?;
        let http = http_of(provider.timeout, provider.retries, &config)?;
        if provider.count_tokens && !dry_run {
            return Err(MfError::usage(
                "`--count-tokens` goes with `--dry-run` (a real run reports the provider's counts anyway)",
                None,
            ));
        }
        let pricing = pricing_of(&model_ref, &provider, masks_only);
        let model_warning = (!masks_only).then(|| model_ref.warning()).flatten();
        let (token_ratio, context_tokens) = (model_ref.token_ratio(), model_ref.context());
        let tiers = tier::resolve(&tier_args, &model_ref, masks_only, rollup)?;
        let model = if masks_only || model_ref.provider == Provider::Builtin {
            ModelChoice::Extractive
        } else {
            ModelChoice::Remote(Box::new(tier::apply(
                remote(model_ref, &provider, &config, dry_run)?,
                &tiers,
            )))
        };
        let audit = audit_of(audit)?;
        Ok(Self {
            files,
            redact: model.leaves_machine() && !provider.no_redact,
            model,
            read,
            policy,
            instruction,
            dry_run,
            outputs,
            force,
            json,
            records_to,
            jobs,
            http,
            pricing,
            token_ratio,
            count_tokens: provider.count_tokens,
            model_warning,
            max_cost: provider.max_cost,
            agent_model: provider.agent_model,
            allow_same_model: provider.allow_same_model,
            debug_bodies: provider.debug_bodies,
            rollup,
            context_tokens,
            tail_wait: tail_wait(),
            live: live_guard(),
            allow_degraded,
            tiers,
            audit,
        })
    }

    /// Settings for compacting `files` with `model` and everything else at its default (for
    /// callers that drive the pipeline in-process).
    pub fn with_defaults(files: Vec<PathBuf>, model: ModelChoice) -> Self {
        Self {
            files,
            model,
            policy: FoldPolicy::default(),
            instruction: None,
            dry_run: false,
            outputs: None,
            records_to: RecordsTo::Stdout,
            force: false,
            json: true,
            jobs: 1,
            http: HttpSettings::default(),
            pricing: None,
            token_ratio: 1.0,
            count_tokens: false,
            model_warning: None,
            max_cost: None,
            agent_model: None,
            allow_same_model: false,
            debug_bodies: false,
            read: ReadOptions::default(),
            redact: false,
            rollup: false,
            context_tokens: None,
            tail_wait: Duration::from_millis(200),
            live: crate::transcript::Guard {
                dirs: crate::transcript::AgentDirs::default(),
                window: Duration::from_secs(60),
            },
            allow_degraded: false,
            tiers: tier::TierSettings::default(),
            audit: AuditSettings {
                min_retention: 0.5,
                retry_lossy: false,
                retry: false,
                strict: false,
                allow_inventions: false,
                count_tool_results: false,
            },
        }
    }

    /// How the labels of summaries written for transcript `t` say their originals are reached:
    /// the recall tool, when it is installed for the agent whose session this is; else the
    /// `mf expand` command on the file the summary lands in (absolute).
    pub fn reach_for(&self, t: &crate::transcript::Transcript) -> crate::fold::frame::Reach {
        use crate::fold::frame::Reach;
        if let Some(agent) = agents::agent_of_format(t.format)
            && agents::recall_tool_installed(
                agent,
                crate::transcript::sessions::head_cwd(&t.path, agent)
                    .as_deref()
                    .map(Path::new),
            )
        {
            return Reach::Tool;
        }
        let target = match self.output_for(&t.path) {
            Some(OutputTarget::Stdout) => return Reach::Command(None),
            Some(OutputTarget::File(p)) => p,
            None => t.path.clone(),
        };
        match std::path::absolute(&target)
            .ok()
            .and_then(|p| p.to_str().map(String::from))
        {
            Some(p) => Reach::command(&p),
            None => Reach::Command(None),
        }
    }

    /// Where the compacted copy of `file` goes, when `--output` is given.
    pub fn output_for(&self, file: &Path) -> Option<OutputTarget> {
        let i = self.files.iter().position(|f| f == file)?;
        self.outputs.as_ref().map(|o| o[i].clone())
    }
}

/// The files of a compact run (flags): those named, those `--files-from` lists, the latest
/// session `--latest` finds; standard input at most once, and never in place.
fn input_files(args: &CompactArgs) -> Result<Vec<PathBuf>, MfError> {
    let mut files = args.files.clone();
    let list = &args.files_from;
    if let Some(list) = list {
        files.extend(files_from(list, args.null)?);
    }
    if let Some(agent) = args.latest {
        files.push(latest_session(agent, args.cwd.as_deref())?);
    }
    if files.is_empty() {
        return Err(MfError::usage("no transcript files given", None));
    }
    if files.iter().filter(|f| f.as_os_str() == "-").count() > 1
        || (list.as_deref().is_some_and(|l| l.as_os_str() == "-")
            && files.iter().any(|f| f.as_os_str() == "-"))
    {
        return Err(MfError::usage(
            "standard input can be read once: give `-` as one file, or as the file list",
            None,
        ));
    }
    if !args.dry_run && args.output.is_none() && files.iter().any(|f| f.as_os_str() == "-") {
        return Err(MfError::usage(
            "a transcript read from standard input cannot be compacted in place",
            Some("add `--output -` to stream it with the new lines to standard output, or `--output PATH`".into()),
        ));
    }
    Ok(files)
}

/// The model (`--model`, else MF_MODEL, else the config's); with `--strategy mask` and none
/// named, the built-in one.
fn model_of(
    model: Option<&str>,
    masks_only: bool,
    config: &ConfigFile,
) -> Result<ModelRef, MfError> {
    let named = model.is_some() || var(ev::MF_MODEL).is_some() || config.model.is_some();
    if masks_only && !named {
        model::resolve(crate::summarizer::extractive::NAME)
            .map_err(|e| MfError::usage(e.to_string(), None))
    } else {
        resolve_model_name(model, config)
    }
}

/// `--system-prompt`: the text, or `@FILE`'s; never empty.
fn instruction_of(system_prompt: Option<String>) -> Result<Option<String>, MfError> {
    let Some(p) = system_prompt else {
        return Ok(None);
    };
    let text = match p.strip_prefix('@') {
        Some(path) => std::fs::read_to_string(path).map_err(|e| {
            MfError::refused(
                format!("cannot read the system prompt file `{path}`: {e}"),
                None,
            )
        })?,
        None => p,
    };
    if text.trim().is_empty() {
        return Err(MfError::usage("`--system-prompt` is empty", None));
    }
    Ok(Some(text))
}

/// Where the decision records go (`--record`): never standard output when it carries the
/// transcript (`streams`).
fn records_to(record: Option<PathBuf>, streams: bool) -> Result<RecordsTo, MfError> {
    Ok(match record {
        Some(p) if p.as_os_str() == "-" && streams => {
            return Err(MfError::usage(
                "`--record -` and `--output -` both want standard output, which carries the transcript",
                Some("name a file or a descriptor for the records: `--record records.jsonl`, or `--record /dev/fd/3 3>records.jsonl`".into()),
            ));
        }
        Some(p) if p.as_os_str() == "-" => RecordsTo::Stdout,
        Some(p) => {
            if let Some(why) = crate::own_file::output_refusal(&p) {
                return Err(MfError::refused(
                    format!("`--record {}`: {why}", p.display()),
                    None,
                ));
            }
            RecordsTo::File(p)
        }
        // Standard output carries the transcript: the records go to stderr.
        None if streams => RecordsTo::Stderr,
        None => RecordsTo::Stdout,
    })
}

/// The HTTP client's settings: `--timeout` (else MF_TIMEOUT, else the config's, else 120 s)
/// and `--retries` (else the config's, else 2).
fn http_of(
    timeout: Option<f64>,
    retries: Option<u32>,
    config: &ConfigFile,
) -> Result<HttpSettings, MfError> {
    let timeout = match timeout {
        Some(t) => t,
        None => parse_env(ev::MF_TIMEOUT)?
            .or(config.timeout)
            .unwrap_or(120.0),
    };
    if !(timeout.is_finite() && timeout > 0.0 && timeout <= 86_400.0) {
        return Err(MfError::usage(
            "`--timeout` must be a positive number of seconds (at most a day)",
            None,
        ));
    }
    Ok(HttpSettings {
        timeout: Duration::from_secs_f64(timeout),
        retries: retries.or(config.retries).unwrap_or(2),
        ..HttpSettings::default()
    })
}

/// The model's price bands. `--price-in` / `--price-out` replace the table's bands with one
/// price; one of them alone keeps the other from the table's base band. A mask calls nothing,
/// so it costs nothing (and `--max-cost` holds).
fn pricing_of(model_ref: &ModelRef, provider: &ProviderArgs, masks_only: bool) -> Option<Pricing> {
    if masks_only {
        return Some(Pricing::flat(0.0, 0.0));
    }
    let base = model_ref.pricing().map(|p| p.bands[0]);
    match (provider.price_in, provider.price_out, base) {
        (None, None, _) => model_ref.pricing(),
        (Some(i), Some(o), _) => Some(Pricing::flat(i, o)),
        (Some(i), None, Some(b)) => Some(Pricing::flat(i, b.output)),
        (None, Some(o), Some(b)) => Some(Pricing::flat(b.input, o)),
        (Some(i), None, None) => Some(Pricing::flat(i, 0.0)),
        (None, Some(o), None) => Some(Pricing::flat(0.0, o)),
    }
}

/// The audit's settings: its flags, MF_MIN_RETENTION and MF_ALLOW_INVENTIONS.
fn audit_of(audit: AuditArgs) -> Result<AuditSettings, MfError> {
    let AuditArgs {
        min_retention,
        retry_lossy,
        retry,
        strict_audit,
        allow_inventions,
        audit_tool_results,
    } = audit;
    let min_retention = match min_retention {
        Some(share) => share,
        None => match parse_env::<f64>(ev::MF_MIN_RETENTION)? {
            Some(share) if (0.0..=1.0).contains(&share) => share,
            Some(share) => {
                return Err(MfError::usage(
                    format!(
                        "{}={share} is not a share: give a number from 0 to 1 (0 turns the check off)",
                        ev::MF_MIN_RETENTION
                    ),
                    None,
                ));
            }
            None => 0.5,
        },
    };
    Ok(AuditSettings {
        min_retention,
        retry_lossy,
        retry,
        strict: strict_audit,
        allow_inventions: allow_inventions
            || var(ev::MF_ALLOW_INVENTIONS).is_some_and(|v| v.trim() != "0"),
        count_tool_results: audit_tool_results,
    })
}

impl ModelChoice {
    /// Whether spans leave the machine: for a cloud provider, or a compatible server elsewhere.
    pub fn leaves_machine(&self) -> bool {
        match self {
            ModelChoice::Extractive => false,
            ModelChoice::Remote(r) => {
                r.model.provider != Provider::OpenAiCompatible
                    || reqwest::Url::parse(&r.base_url)
                        .ok()
                        .and_then(|u| u.host_str().map(|h| !is_loopback(h)))
                        .unwrap_or(true)
            }
        }
    }
}

/// The provider's settings (flags, env, config, the key from env): what the model refuses is
/// refused here, before a key is looked at or a call is made.
fn remote(
    model: ModelRef,
    provider: &ProviderArgs,
    config: &ConfigFile,
    dry_run: bool,
) -> Result<RemoteConfig, MfError> {
    let ProviderArgs {
        base_url: base_url_flag,
        temperature,
        seed,
        max_output_tokens,
        anthropic_version,
        allow_insecure_http,
        ..
    } = provider;
    let (base_url_flag, temperature, seed, max_output_tokens) = (
        base_url_flag.clone(),
        *temperature,
        *seed,
        *max_output_tokens,
    );
    let (anthropic_version, allow_insecure_http) =
        (anthropic_version.clone(), *allow_insecure_http);
    // What the model refuses is refused here, before a key is looked at or a call is made.
    let profile = model.profile();
    if let (Some(t), Some(rule)) = (temperature, profile.sampling_rule()) {
        return Err(MfError::usage(
            format!(
                "`{}` does not take --temperature {t}: {rule}",
                model.label()
            ),
            Some("drop --temperature (the summary is steadied by mf's instruction, not by sampling); a model that takes it: an Anthropic 4.x id (claude-haiku-4-5), an OpenAI chat model, or an openai-compatible server".into()),
        ));
    }
    if let (Some(_), Some(rule)) = (seed, profile.seed_rule()) {
        return Err(MfError::usage(
            format!("`{}` does not take --seed: {rule}", model.label()),
            Some("drop --seed".into()),
        ));
    }
    let (provider_url_var, key_var, default_url) = match model.provider {
        Provider::Anthropic => (
            Some(ev::ANTHROPIC_BASE_URL),
            ev::ANTHROPIC_API_KEY,
            Some(anthropic::DEFAULT_BASE_URL),
        ),
        Provider::OpenAi => (
            Some(ev::OPENAI_BASE_URL),
            ev::OPENAI_API_KEY,
            Some(openai::DEFAULT_BASE_URL),
        ),
        Provider::OpenAiCompatible | Provider::Builtin => (None, ev::MF_API_KEY, None),
    };
    // The base URL, and where it came from (named in messages about it).
    let base_url = base_url_flag
        .map(|u| (u, "--base-url"))
        .or_else(|| var(ev::MF_BASE_URL).map(|u| (u, ev::MF_BASE_URL)))
        .or_else(|| provider_url_var.and_then(|v| var(v).map(|u| (u, v))))
        .or_else(|| {
            config
                .base_url
                .clone()
                .map(|u| (u, "`base_url` in the config file"))
        })
        .or_else(|| default_url.map(|u| (u.to_string(), "the provider's default base URL")));
    let Some((base_url, base_url_from)) = base_url else {
        return Err(MfError::usage(
            format!("`{}` needs a server: pass `--base-url URL` or set MF_BASE_URL", model.label()),
            Some("for example --base-url http://127.0.0.1:11434/v1 (Ollama) or http://127.0.0.1:8080/v1 (llama.cpp)".into()),
        ));
    };
    // As mf shows it: credentials redacted, and never what follows a `#`.
    let shown = crate::redact::url_shown(match base_url.split_once('#') {
        Some((before, _)) => before,
        None => &base_url,
    });
    let url = url::Url::parse(&base_url)
        .map_err(|e| MfError::usage(format!("base URL `{shown}` is not a URL: {e}"), None))?;
    if url.fragment().is_some() {
        return Err(MfError::usage(
            format!(
                "base URL `{shown}#…` has a fragment (a `#` and what follows it), which is never sent to a server; mf refuses it rather than drop it (it is not shown here)"
            ),
            Some(format!(
                "remove the `#` and everything after it; a key goes in {key_var}, and anything the server needs in the URL goes in its path or query (`?name=value`)"
            )),
        ));
    }
    if !matches!(url.scheme(), "http" | "https") {
        return Err(MfError::usage(
            format!("base URL `{shown}` must be http:// or https://"),
            None,
        ));
    }

    let key = var(key_var);
    if key.is_none() && model.provider != Provider::OpenAiCompatible && !dry_run {
        return Err(MfError::refused(
            format!(
                "{key_var} is not set; mf needs it to call {}",
                model.label()
            ),
            Some(format!(
                "export {key_var}=… (or use --dry-run to see the plan and its estimated cost without a key)"
            )),
        ));
    }
    if let Some(k) = &key {
        if k.chars().any(char::is_control) || k.trim() != k {
            return Err(MfError::refused(
                format!(
                    "{key_var} holds a control character or surrounding whitespace; fix the variable (its value is not shown)"
                ),
                None,
            ));
        }
        let host = url.host_str().unwrap_or_default();
        if url.scheme() == "http" && !is_loopback(host) && !allow_insecure_http {
            return Err(MfError::refused(
                format!("refusing to send {key_var} over plain http:// to `{host}`, which is not this machine"),
                Some("use https://, a loopback address, or pass --allow-insecure-http if you accept the risk".into()),
            ));
        }
    }
    if temperature.is_some()
        && model.provider == Provider::Anthropic
        && anthropic_version.as_str() >= "2026-10-21"
    {
        return Err(MfError::usage(
            format!(
                "anthropic-version {anthropic_version} does not accept `temperature`; drop --temperature or use {}",
                anthropic::DEFAULT_VERSION
            ),
            None,
        ));
    }
    Ok(RemoteConfig {
        model,
        base_url,
        key: key.map(SecretString::from),
        key_var,
        base_url_from,
        temperature,
        seed,
        anthropic_version,
        max_output_tokens,
        tier: crate::entry::Tier::Standard,
        flex_fallback: false,
    })
}

#[cfg(test)]
mod tests {
    use super::is_loopback;

    #[test]
    fn loopback_hosts() {
        for h in ["127.0.0.1", "127.9.9.9", "localhost", "[::1]", "::1"] {
            assert!(is_loopback(h), "{h}");
        }
        for h in ["example.com", "10.0.0.1", "192.168.1.2"] {
            assert!(!is_loopback(h), "{h}");
        }
    }
}

#[cfg(test)]
mod redaction_tests {
    use secrecy::SecretString;

    use crate::model;
    use crate::summarizer::RemoteConfig;

    #[test]
    fn debug_output_never_shows_the_key() {
        let c = RemoteConfig {
            model: model::resolve("haiku").unwrap(),
            base_url: "https://api.anthropic.com".into(),
            key: Some(SecretString::from("sk-ant-TEST-SENTINEL-0000")),
            key_var: "ANTHROPIC_API_KEY",
            base_url_from: "--base-url",
            temperature: None,
            seed: None,
            anthropic_version: "2023-06-01".into(),
            max_output_tokens: None,
            tier: crate::entry::Tier::Standard,
            flex_fallback: false,
        };
        let shown = format!("{c:?}");
        assert!(!shown.contains("SENTINEL"), "{shown}");
        assert!(shown.contains("REDACTED"), "{shown}");
    }
}

#[cfg(test)]
mod size_tests {
    use super::parse_size;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1000"), Some(1000));
        assert_eq!(parse_size(" 4GiB "), Some(4 << 30));
        assert_eq!(parse_size("500 MiB"), Some(500 << 20));
        assert_eq!(parse_size("64k"), Some(64 << 10));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("2TB"), Some(2 << 40));
        for bad in [
            "",
            "0",
            "-1",
            "1.5G",
            "G",
            "12 parsecs",
            "99999999999999999999",
        ] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
        assert_eq!(parse_size("20000000T"), None);
    }
}
