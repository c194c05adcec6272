//! `Summarizer`: something that turns a `SummaryRequest` into summary text — the built-in
//! extractive one, or a model behind an HTTP API.

pub mod anthropic;
pub mod extractive;
pub mod openai;
pub mod remote;

use std::future::Future;
use std::pin::Pin;

use thiserror::Error;

use crate::entry::Usage;
use crate::fold::SummaryRequest;

pub use extractive::Extractive;
pub use remote::{Remote, RemoteConfig};

/// A summarizer's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryReply {
    pub text: String,
    pub usage: Option<Usage>,
}

/// How bad a summarizer failure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// This span could not be summarized (a bad reply, an outage after retries): the span stays
    /// verbatim, a warning is printed, the run goes on and succeeds.
    Degrade,
    /// The setup is wrong (bad key, quota spent, unknown model): every call would fail the same
    /// way, so mf stops with exit 1 and writes nothing.
    Fatal,
    /// Nothing answered (connection refused, unknown host): a setup error; the file is not
    /// compacted (exit 3) and nothing is written.
    Unreachable,
    /// The run was interrupted while the call was in flight; nothing is written for it.
    Interrupted,
}

#[derive(Debug, Clone, Error)]
#[error("{message}")]
pub struct SummarizerError {
    pub severity: Severity,
    pub message: String,
}

impl SummarizerError {
    pub fn degrade(message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Degrade,
            message: message.into(),
        }
    }

    pub fn fatal(message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Fatal,
            message: message.into(),
        }
    }

    pub fn unreachable(message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Unreachable,
            message: message.into(),
        }
    }

    pub fn interrupted() -> Self {
        Self {
            severity: Severity::Interrupted,
            message: "interrupted while the summarizer was working".into(),
        }
    }

    /// Whether the whole file stops (nothing written) rather than degrading to verbatim.
    pub fn stops(&self) -> bool {
        !matches!(self.severity, Severity::Degrade)
    }
}

pub type SummaryFuture<'a> =
    Pin<Box<dyn Future<Output = Result<SummaryReply, SummarizerError>> + Send + 'a>>;

pub trait Summarizer: Send + Sync {
    /// The model name written into the label and the coverage record.
    fn model(&self) -> &str;

    /// One call for one span.
    fn summarize<'a>(&'a self, request: &'a SummaryRequest) -> SummaryFuture<'a>;

    /// How many calls are worth having in flight at once, at most: a summarizer that works on
    /// this machine's processors gains nothing from more calls than processors, and holds a
    /// span's text for each.
    fn parallelism(&self) -> Option<usize> {
        None
    }
}
