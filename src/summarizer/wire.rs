//! One trait per provider's wire format: what a summary call and a provider batch look like on
//! the wire, as pure functions (`anthropic::Anthropic`, `openai::OpenAi`). `remote` picks the
//! format for a provider by an exhaustive match, so a new provider does not compile until it
//! says how it speaks.

use serde_json::Value;

use crate::fold::SummaryRequest;
use crate::summarizer::{RemoteConfig, SummarizerError, SummaryReply};

/// A provider's synchronous call.
pub trait Wire: Send + Sync {
    /// The endpoint a summary call is POSTed to.
    fn url(&self, base: &str) -> String;
    /// The headers every request carries (`sensitive` marked), with the key when there is one.
    fn headers(
        &self,
        config: &RemoteConfig,
        key: Option<&str>,
    ) -> Vec<(&'static str, String, bool)>;
    /// The body of one call with this token cap.
    fn body(&self, config: &RemoteConfig, req: &SummaryRequest, max_tokens: u32) -> Value;
    /// A reply's text and usage, or why it cannot be used.
    fn parse(&self, bytes: &[u8]) -> Result<SummaryReply, SummarizerError>;
    /// The provider's batch API, where it has one.
    fn batch(&self) -> Option<&dyn BatchWire>;
}

/// How a batch is submitted.
pub enum Submit {
    /// One POST of a JSON body (Anthropic).
    Direct { url: String, body: Value },
    /// Upload a JSONL file (multipart, its `purpose` field), then POST the body `create` makes
    /// of the file's id (OpenAI).
    Upload {
        files_url: String,
        purpose: &'static str,
        jsonl: Vec<u8>,
        create_url: String,
        create: fn(&str) -> Value,
    },
}

/// A batch as the provider reports it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BatchStatus {
    pub id: String,
    /// The provider's own word for where the batch is (`in_progress`, `finalizing`, `ended`…).
    pub status: String,
    /// Whether the provider will do no more work on it (results, if any, can be read).
    pub ended: bool,
    /// Requests finished (in any way) and in all.
    pub done: u64,
    pub total: u64,
    /// Requests that failed, expired or were canceled, so far.
    pub failed: u64,
    /// Where results are read (a URL, or a file id to read through the files endpoint).
    pub results: Vec<String>,
    /// When the provider expires the batch's unfinished requests, as it says it (RFC 3339 or
    /// Unix seconds).
    pub expires_at: Option<String>,
    /// The reason a whole batch failed (OpenAI validation errors).
    pub failure: Option<String>,
}

/// What became of one request of a batch.
#[derive(Debug, Clone)]
pub enum ItemResult {
    /// The reply, parsed as a synchronous call's (a refusal or cut-off is an `Err`).
    Answered(Result<SummaryReply, SummarizerError>),
    Errored(String),
    Expired,
    Canceled,
}

/// A provider's batch API, as pure functions: bodies, URLs and parsers.
pub trait BatchWire: Send + Sync {
    /// The most requests and bytes one batch may hold.
    fn limits(&self) -> (usize, usize);
    /// The bytes one request adds to a batch (to split at the byte limit).
    fn request_line(&self, custom_id: &str, body: &Value) -> Value;
    /// How `lines` (made by `request_line`) are submitted.
    fn submit(&self, base: &str, lines: &[Value]) -> Submit;
    fn status_url(&self, base: &str, id: &str) -> String;
    fn cancel_url(&self, base: &str, id: &str) -> String;
    /// The batch, from a submit, status or cancel reply.
    fn parse_status(&self, bytes: &[u8]) -> Result<BatchStatus, String>;
    /// Where one of `status.results` is read.
    fn results_url(&self, base: &str, result: &str) -> String;
    /// One line of a results file: its `custom_id` and what became of it.
    fn parse_result(&self, line: &[u8]) -> Result<(String, ItemResult), String>;
}
