//! `MfError`: errors that decide the exit code, and the classification of any error chain.

use thiserror::Error;

use crate::exit_status::ExitStatus;
use crate::fold::PolicyError;
use crate::summarizer::{Severity, SummarizerError};
use crate::transcript::TranscriptError;

#[derive(Debug, Error)]
pub enum MfError {
    /// The command line asks for something that cannot work (exit 2).
    #[error("{message}")]
    Usage {
        message: String,
        hint: Option<String>,
    },
    /// A refused operation (exit 1).
    #[error("{message}")]
    Refused {
        message: String,
        hint: Option<String>,
    },
    /// A signal stopped the work in flight (exit 128 + the signal).
    #[error("interrupted; nothing was written for the work in flight")]
    Interrupted,
    /// mf panicked: a bug (exit 2). `what` says what was being done (`compacting `f.jsonl``).
    #[error("internal error while {what}: {message}{}; this is a bug in mf, please report it", .at.as_ref().map(|a| format!(" (at {a})")).unwrap_or_default())]
    Internal {
        what: String,
        message: String,
        at: Option<String>,
        hint: Option<String>,
    },
}

impl MfError {
    pub fn usage(message: impl Into<String>, hint: Option<String>) -> Self {
        Self::Usage {
            message: message.into(),
            hint,
        }
    }

    pub fn refused(message: impl Into<String>, hint: Option<String>) -> Self {
        Self::Refused {
            message: message.into(),
            hint,
        }
    }
}

/// The exit status an error chain calls for.
pub fn classify(err: &anyhow::Error) -> ExitStatus {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<MfError>() {
            return match e {
                MfError::Usage { .. } => ExitStatus::Error,
                MfError::Refused { .. } => ExitStatus::Failure,
                MfError::Interrupted => ExitStatus::Interrupted(2),
                MfError::Internal { .. } => ExitStatus::Error,
            };
        }
        if let Some(e) = cause.downcast_ref::<TranscriptError>() {
            return match e {
                TranscriptError::Live { .. } => ExitStatus::Busy,
                TranscriptError::StdinSetting { .. } => ExitStatus::Error,
                TranscriptError::StdinInterrupted { signal } => ExitStatus::Interrupted(*signal),
                _ => ExitStatus::Failure,
            };
        }
        if cause.downcast_ref::<PolicyError>().is_some() {
            return ExitStatus::Error;
        }
        if let Some(e) = cause.downcast_ref::<SummarizerError>() {
            return match e.severity {
                Severity::Fatal => ExitStatus::Failure,
                Severity::Unreachable | Severity::Degrade => ExitStatus::NotCompacted,
                Severity::Interrupted => ExitStatus::Interrupted(2),
                Severity::Pending => ExitStatus::Busy,
            };
        }
        if let Some(io) = cause.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::BrokenPipe
        {
            return ExitStatus::Success;
        }
    }
    ExitStatus::Error
}

/// The stable name of what went wrong, for the record's `failure.kind` (what a CI script
/// matches on): see `decision::FileFailure`.
pub fn failure_kind(err: &anyhow::Error) -> &'static str {
    for cause in err.chain() {
        if let Some(e) = cause.downcast_ref::<MfError>() {
            return match e {
                MfError::Usage { .. } => "usage",
                MfError::Refused { .. } => "refused",
                MfError::Interrupted => "interrupted",
                MfError::Internal { .. } => "internal",
            };
        }
        if let Some(e) = cause.downcast_ref::<TranscriptError>() {
            return match e {
                TranscriptError::Live { .. } => "session-in-use",
                TranscriptError::StdinSetting { .. } => "usage",
                TranscriptError::StdinInterrupted { .. } => "interrupted",
                TranscriptError::StdinTooLarge { .. } | TranscriptError::StdinNoSpace { .. } => {
                    "refused"
                }
                _ => "bad-input",
            };
        }
        if cause.downcast_ref::<PolicyError>().is_some() {
            return "usage";
        }
        if let Some(e) = cause.downcast_ref::<SummarizerError>() {
            return summarizer_failure_kind(e);
        }
    }
    "error"
}

/// The stable name of a summarizer failure: `summarizer-unreachable` (nothing ever answered at
/// the base URL: a setup error), `summarizer-setup` (bad key, quota, unknown model),
/// `summarizer-outage` (retries ran out on 429/5xx/529/timeouts), `summarizer-error` (a
/// refused, cut-off or unusable reply), `interrupted`.
pub fn summarizer_failure_kind(e: &SummarizerError) -> &'static str {
    match e.severity {
        Severity::Unreachable => "summarizer-unreachable",
        Severity::Fatal => "summarizer-setup",
        Severity::Interrupted => "interrupted",
        Severity::Pending => "batch-pending",
        Severity::Degrade if e.outage => "summarizer-outage",
        Severity::Degrade => "summarizer-error",
    }
}

/// Whether the error is a closed output pipe (not an error for a CLI: `mf recall f | head`).
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Hints for the person reading the error.
pub fn hints(err: &anyhow::Error) -> Vec<String> {
    let mut out = Vec::new();
    for cause in err.chain() {
        if let Some(
            MfError::Usage { hint: Some(h), .. }
            | MfError::Refused { hint: Some(h), .. }
            | MfError::Internal { hint: Some(h), .. },
        ) = cause.downcast_ref::<MfError>()
        {
            out.push(h.clone());
        }
        if let Some(h) = cause
            .downcast_ref::<TranscriptError>()
            .and_then(TranscriptError::hint)
        {
            out.push(h);
        }
    }
    out
}

/// Where panics are recorded: the hook notes each one's message and location (and a backtrace
/// when `RUST_BACKTRACE` asks for one) instead of printing it, and whoever catches the panic
/// turns it into one [`MfError::Internal`] with [`internal`].
static PANICS: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());

/// Record panics instead of printing them (the caller catches them and reports each once, as
/// an error record). Call once, from `main`.
pub fn capture_panics() {
    std::panic::set_hook(Box::new(|info| {
        let message = panic_message(info.payload());
        let mut at = info
            .location()
            .map_or_else(|| "an unknown place".to_string(), ToString::to_string);
        let bt = std::backtrace::Backtrace::capture();
        if bt.status() == std::backtrace::BacktraceStatus::Captured {
            at.push_str(&format!("\n{bt}"));
        }
        let mut panics = PANICS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if panics.len() >= 64 {
            panics.remove(0);
        }
        panics.push((message, at));
    }));
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// The error for a caught panic (its payload), with the location the hook recorded for it.
/// `what`: what mf was doing; `hint`: what became of the work (e.g. whether the file changed).
pub fn internal(
    payload: &(dyn std::any::Any + Send),
    what: impl Into<String>,
    hint: Option<String>,
) -> MfError {
    let message = panic_message(payload);
    let mut panics = PANICS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let at = panics
        .iter()
        .rposition(|(m, _)| *m == message)
        .map(|k| panics.remove(k).1);
    MfError::Internal {
        what: what.into(),
        message,
        at,
        hint,
    }
}
