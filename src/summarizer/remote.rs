//! `Remote`: a summarizer behind an HTTP API — Anthropic, OpenAI, or an OpenAI-compatible server.
//! It shapes the request (`anthropic` / `openai` modules), sends it through `http`, and maps
//! failures to what mf does about them: setup errors stop the run, the rest degrade to verbatim.

use secrecy::{ExposeSecret, SecretString};

use crate::fold::SummaryRequest;
use crate::http::{FailureKind, HttpClient, HttpError, Log, Request};
use crate::model::{ModelRef, Provider};
use crate::summarizer::{SummarizerError, SummaryFuture, SummaryReply, anthropic, openai};

/// Everything a remote call needs, resolved by `settings`.
#[derive(Debug, Clone)]
pub struct RemoteConfig {
    pub model: ModelRef,
    pub base_url: String,
    /// The key, if the provider takes one; never printed (`SecretString`'s Debug redacts it).
    pub key: Option<SecretString>,
    /// The variable the key came from, for messages.
    pub key_var: &'static str,
    pub temperature: Option<f64>,
    pub seed: Option<u64>,
    pub anthropic_version: String,
    pub max_output_tokens: Option<u32>,
}

impl RemoteConfig {
    /// The key's value, for scrubbing it from anything mf writes.
    pub fn key_value(&self) -> Option<String> {
        self.key.as_ref().map(|k| k.expose_secret().to_string())
    }
}

pub struct Remote {
    config: RemoteConfig,
    label: String,
    url: String,
    /// The URL as mf shows it: credentials in it redacted.
    shown_url: String,
    client: HttpClient,
    warn: Log,
}

impl Remote {
    pub fn new(config: RemoteConfig, client: HttpClient, warn: Log) -> Self {
        let url = match config.model.provider {
            Provider::Anthropic => anthropic::url(&config.base_url),
            _ => openai::url(&config.base_url),
        };
        let label = config.model.label();
        let shown_url = crate::redact::url_credentials(&url);
        Self {
            config,
            label,
            url,
            shown_url,
            client,
            warn,
        }
    }

    fn request(&self, req: &SummaryRequest) -> Request {
        let c = &self.config;
        let max_tokens = c.max_output_tokens.unwrap_or(req.max_output_tokens);
        let key = c.key.as_ref().map(|k| k.expose_secret().to_string());
        let (body, mut headers) = match c.model.provider {
            Provider::Anthropic => (
                anthropic::body(&c.model.id, req, max_tokens, c.temperature),
                vec![("anthropic-version", c.anthropic_version.clone(), false)],
            ),
            p => (
                openai::body(
                    &c.model.id,
                    req,
                    max_tokens,
                    p == Provider::OpenAiCompatible,
                    c.temperature,
                    c.seed,
                ),
                Vec::new(),
            ),
        };
        if let Some(k) = &key {
            match c.model.provider {
                Provider::Anthropic => headers.push(("x-api-key", k.clone(), true)),
                _ => headers.push(("authorization", format!("Bearer {k}"), true)),
            }
        }
        Request {
            url: self.url.clone(),
            headers,
            body: serde_json::to_vec(&body).expect("a request body serializes"),
            secrets: key
                .into_iter()
                .chain(crate::redact::url_secrets(&self.url))
                .collect(),
            label: self.label.clone(),
        }
    }

    fn failure(&self, e: HttpError) -> SummarizerError {
        let who = format!("{} at {}", self.label, self.shown_url);
        match e.kind {
            FailureKind::Auth => SummarizerError::fatal(format!(
                "{who} refused the key: {}; check {}",
                e.message, self.config.key_var
            )),
            FailureKind::Quota => SummarizerError::fatal(format!(
                "{who}: quota or spend limit reached: {}; not retried",
                e.message
            )),
            FailureKind::NotFound => SummarizerError::fatal(format!(
                "{who}: not found: {}; check `--model` (unknown or retired model id) and the base URL",
                e.message
            )),
            FailureKind::Rejected => {
                SummarizerError::fatal(format!("{who} rejected the request: {}", e.message))
            }
            FailureKind::Redirect => SummarizerError::fatal(format!(
                "{who} answered with a redirect ({}), which mf does not follow so a key never travels to another host; check the base URL",
                e.message
            )),
            FailureKind::TooLarge => SummarizerError::degrade(format!(
                "the span is too large for {}: {}",
                self.label, e.message
            )),
            FailureKind::Unreachable => SummarizerError::unreachable(format!(
                "setup error: nothing answered at {}: {}; check --base-url and that the server is running",
                self.shown_url, e.message
            )),
            FailureKind::ReplyTooLarge => {
                SummarizerError::degrade(format!("summarizer failure: {who}: {}", e.message))
            }
            FailureKind::Exhausted | FailureKind::WaitTooLong => {
                SummarizerError::degrade(format!("{who}: {}", e.message))
            }
        }
    }
}

impl Summarizer for Remote {
    fn model(&self) -> &str {
        &self.label
    }

    fn summarize<'a>(&'a self, req: &'a SummaryRequest) -> SummaryFuture<'a> {
        Box::pin(async move {
            let request = self.request(req);
            let max_tokens = self
                .config
                .max_output_tokens
                .unwrap_or(req.max_output_tokens);
            let response = self
                .client
                .post_bounded(&request, crate::http::reply_bound(max_tokens))
                .await
                .map_err(|e| self.failure(e))?;
            let reply = match self.config.model.provider {
                Provider::Anthropic => anthropic::parse(&response.body)?,
                _ => openai::parse(&response.body)?,
            };
            if self.config.model.provider == Provider::OpenAiCompatible {
                warn_if_truncated(&reply, req, &self.warn);
            }
            Ok(reply)
        })
    }
}

use crate::summarizer::Summarizer;

/// Local servers (Ollama by default) cut prompts that exceed their context silently; a prompt
/// count far below the request's size is the tell.
fn warn_if_truncated(reply: &SummaryReply, req: &SummaryRequest, warn: &Log) {
    let Some(usage) = reply.usage else { return };
    let estimate = (req.system.chars().count() + req.user.chars().count()) as u64 / 4;
    if estimate > 512 && usage.input_tokens * 2 < estimate {
        warn(&format!(
            "the server counted {} prompt tokens for a request of about {estimate}; it may have cut the transcript to fit its context (raise its context size, for Ollama `num_ctx`)",
            usage.input_tokens
        ));
    }
}
