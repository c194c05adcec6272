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
            };
        }
        if let Some(e) = cause.downcast_ref::<TranscriptError>() {
            return match e {
                TranscriptError::Live { .. } => ExitStatus::Busy,
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
        if let Some(MfError::Usage { hint: Some(h), .. } | MfError::Refused { hint: Some(h), .. }) =
            cause.downcast_ref::<MfError>()
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
