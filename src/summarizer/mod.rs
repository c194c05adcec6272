//! `Summarizer`: something that turns a `SummaryRequest` into summary text — the built-in
//! extractive one, or a model behind an HTTP API.

pub mod anthropic;
pub mod batched;
pub mod extractive;
pub mod openai;
pub mod remote;
pub mod wire;

use std::future::Future;
use std::pin::Pin;

use thiserror::Error;

use crate::entry::Usage;
use crate::fold::SummaryRequest;

pub use extractive::Extractive;
pub use remote::{Remote, RemoteConfig};

/// A summarizer's answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SummaryReply {
    pub text: String,
    /// Every call's usage added up (a retry's included: both were paid).
    pub usage: Option<Usage>,
    /// What happened on the way that the decision record should say (a retry with a larger
    /// budget after a reply cut off by thinking).
    pub notes: Vec<String>,
}

/// Stable names of the ways a reply can fail, for the record and tests.
/// The endpoint `under` (`messages`, `chat/completions`) of the API at `base`, at
/// `{base}/v1/{under}` whether or not `base`'s path already ends in `/v1`: joined to the path,
/// so a query in `base` stays after it (`…/v1?k=1` → `…/v1/messages?k=1`). A fragment is never
/// part of a request (settings refuses a base URL with one); a `base` that does not parse is
/// joined as text.
pub fn endpoint(base: &str, under: &str) -> String {
    let Ok(mut url) = url::Url::parse(base) else {
        let base = base.trim_end_matches('/');
        return if base.ends_with("/v1") {
            format!("{base}/{under}")
        } else {
            format!("{base}/v1/{under}")
        };
    };
    url.set_fragment(None);
    let path = url.path().trim_end_matches('/');
    let path = if path.ends_with("/v1") {
        format!("{path}/{under}")
    } else {
        format!("{path}/v1/{under}")
    };
    url.set_path(&path);
    url.into()
}

pub mod reason {
    /// Anthropic `stop_reason: "refusal"`, or OpenAI's message `refusal` field.
    pub const REFUSAL: &str = "refusal";
    /// OpenAI `finish_reason: "content_filter"` (or Responses' `incomplete_details.reason`).
    pub const CONTENT_FILTER: &str = "content-filter";
    /// Stopped at the token cap with the summary unfinished.
    pub const CUT_OFF: &str = "cut-off";
    /// Stopped at the token cap after spending it thinking or reasoning: little or no text.
    pub const CUT_OFF_BY_THINKING: &str = "cut-off-by-thinking";
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
    /// The call went into a provider batch that has not answered yet: nothing is written for
    /// the file in this run; the next run collects the answer (exit 75).
    Pending,
}

#[derive(Debug, Clone, Error)]
#[error("{message}")]
pub struct SummarizerError {
    pub severity: Severity,
    pub message: String,
    /// A stable name for the failure (`reason::REFUSAL`, …), when it has one.
    pub reason: Option<&'static str>,
    /// What the provider reported using for the failed call(s): paid for, though nothing came
    /// of it.
    pub usage: Option<Usage>,
    /// An outage: retries ran out on a transient condition (429, 5xx, 529, a timeout, a dropped
    /// connection to a server that had answered), as opposed to a bad reply.
    pub outage: bool,
}

impl SummarizerError {
    fn new(severity: Severity, message: String) -> Self {
        Self {
            severity,
            message,
            reason: None,
            usage: None,
            outage: false,
        }
    }

    pub fn degrade(message: impl Into<String>) -> Self {
        Self::new(Severity::Degrade, message.into())
    }

    /// An outage after retries: the span stays verbatim (`--allow-degraded` accepts it).
    pub fn outage(message: impl Into<String>) -> Self {
        Self {
            outage: true,
            ..Self::degrade(message)
        }
    }

    pub fn fatal(message: impl Into<String>) -> Self {
        Self::new(Severity::Fatal, message.into())
    }

    pub fn unreachable(message: impl Into<String>) -> Self {
        Self::new(Severity::Unreachable, message.into())
    }

    /// A call queued for a provider batch, not answered yet.
    pub fn pending() -> Self {
        Self::new(
            Severity::Pending,
            "the call is in a provider batch that has not answered yet".into(),
        )
    }

    pub fn interrupted() -> Self {
        Self::new(
            Severity::Interrupted,
            "interrupted while the summarizer was working".into(),
        )
    }

    /// The same failure, with its stable name.
    pub fn named(mut self, reason: &'static str) -> Self {
        self.reason = Some(reason);
        self
    }

    /// The same failure, with what the provider reported using for it.
    pub fn paid(mut self, usage: Option<Usage>) -> Self {
        self.usage = usage;
        self
    }

    /// Whether the whole file stops (nothing written) rather than degrading to verbatim.
    pub fn stops(&self) -> bool {
        !matches!(self.severity, Severity::Degrade)
    }
}

pub type SummaryFuture<'a> =
    Pin<Box<dyn Future<Output = Result<SummaryReply, SummarizerError>> + Send + 'a>>;

/// A provider's count of a request's input tokens.
pub type CountFuture<'a> = Pin<Box<dyn Future<Output = Result<u64, SummarizerError>> + Send + 'a>>;

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

    /// The provider's exact count of a request's input tokens, where it offers one for free
    /// (Anthropic's `count_tokens`); `None` where it does not.
    fn count_tokens<'a>(&'a self, _request: &'a SummaryRequest) -> Option<CountFuture<'a>> {
        None
    }
}

/// The summarizer a resolved model names: the built-in one (`remote` is `None`), or a remote
/// model reached through a client with these HTTP settings. `log` (with bodies, or not) is
/// `-v`'s request log (`detail`: `-vv`'s sizes and timings too); `warn` hears what the provider
/// says.
pub fn named(
    remote: Option<&RemoteConfig>,
    http: crate::http::HttpSettings,
    log: Option<(crate::http::Log, bool, bool)>,
    warn: crate::http::Log,
) -> Result<std::sync::Arc<dyn Summarizer>, reqwest::Error> {
    Ok(match remote {
        None => std::sync::Arc::new(Extractive),
        Some(config) => std::sync::Arc::new(remote_model(config, http, log, warn)?),
    })
}

/// A remote model reached through a client with these HTTP settings (see [`named`]).
pub fn remote_model(
    config: &RemoteConfig,
    http: crate::http::HttpSettings,
    log: Option<(crate::http::Log, bool, bool)>,
    warn: crate::http::Log,
) -> Result<Remote, reqwest::Error> {
    let mut client = crate::http::HttpClient::new(http)?;
    if let Some((log, bodies, detail)) = log {
        client = client.with_log(log, bodies).with_detail(detail);
    }
    Ok(Remote::new(config.clone(), client, warn))
}
