//! `Remote`: a summarizer behind an HTTP API — Anthropic, OpenAI, or an OpenAI-compatible server.
//! It shapes the request (`anthropic` / `openai` modules), sends it through `http`, and maps
//! failures to what mf does about them: setup errors stop the run, the rest degrade to verbatim.

use secrecy::{ExposeSecret, SecretString};

use crate::entry::Usage;
use crate::fold::SummaryRequest;
use crate::http::{FailureKind, HttpClient, HttpError, Log, Request};
use crate::model::{ModelRef, Provider};
use crate::summarizer::{
    CountFuture, SummarizerError, SummaryFuture, SummaryReply, anthropic, openai, reason,
};

/// Everything a remote call needs, resolved by `settings`.
#[derive(Debug, Clone)]
pub struct RemoteConfig {
    pub model: ModelRef,
    pub base_url: String,
    /// The key, if the provider takes one; never printed (`SecretString`'s Debug redacts it).
    pub key: Option<SecretString>,
    /// The variable the key came from, for messages.
    pub key_var: &'static str,
    /// Where the base URL came from (`--base-url`, the variable, the config file's `base_url`,
    /// the provider's default), for messages.
    pub base_url_from: &'static str,
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

    /// What to scrub from anything mf prints or writes: the key, and what may be secret in the
    /// base URL (its userinfo, query values, fragment).
    pub fn secrets(&self) -> Vec<String> {
        self.key_value()
            .into_iter()
            .chain(crate::redact::url_secrets(&self.base_url))
            .collect()
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
        let shown_url = crate::redact::url_shown(&url);
        Self {
            config,
            label,
            url,
            shown_url,
            client,
            warn,
        }
    }

    /// The first call's token cap: the summary's budget (or `--max-output-tokens`, which is
    /// the whole cap), plus the room the profile gives thinking, within what the model writes.
    fn max_tokens(&self, req: &SummaryRequest) -> u32 {
        let c = &self.config;
        let cap = match c.max_output_tokens {
            Some(n) => u64::from(n),
            None => {
                let summary = u64::from(req.max_output_tokens);
                summary + c.model.profile().thinking_room(summary)
            }
        };
        self.within_model(cap)
    }

    fn within_model(&self, cap: u64) -> u32 {
        let cap = self.config.model.max_output().map_or(cap, |m| cap.min(m));
        u32::try_from(cap).unwrap_or(u32::MAX)
    }

    fn headers(&self) -> (Vec<(&'static str, String, bool)>, Option<String>) {
        let c = &self.config;
        let key = c.key.as_ref().map(|k| k.expose_secret().to_string());
        let mut headers = match c.model.provider {
            Provider::Anthropic => vec![("anthropic-version", c.anthropic_version.clone(), false)],
            _ => Vec::new(),
        };
        if let Some(k) = &key {
            match c.model.provider {
                Provider::Anthropic => headers.push(("x-api-key", k.clone(), true)),
                _ => headers.push(("authorization", format!("Bearer {k}"), true)),
            }
        }
        (headers, key)
    }

    fn request(&self, req: &SummaryRequest, max_tokens: u32) -> Request {
        let c = &self.config;
        let profile = c.model.profile();
        let body = match c.model.provider {
            Provider::Anthropic => {
                anthropic::body(&c.model.id, req, max_tokens, c.temperature, profile)
            }
            _ => openai::body(&c.model.id, req, max_tokens, profile, c.temperature, c.seed),
        };
        let (headers, key) = self.headers();
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

    /// One call with this token cap.
    async fn send(
        &self,
        req: &SummaryRequest,
        max_tokens: u32,
    ) -> Result<SummaryReply, SummarizerError> {
        let request = self.request(req, max_tokens);
        let response = self
            .client
            .post_bounded(&request, crate::http::reply_bound(max_tokens))
            .await
            .map_err(|e| self.failure(e))?;
        match self.config.model.provider {
            Provider::Anthropic => anthropic::parse(&response.body),
            _ => openai::parse(&response.body),
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
                "{who}: not found: {}; check `--model` (unknown or retired model id) and the base URL (from {})",
                e.message, self.config.base_url_from
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
                "setup error: nothing answered at {}: {}; check {} and that the server is running",
                self.shown_url, e.message, self.config.base_url_from
            )),
            FailureKind::ReplyTooLarge => {
                SummarizerError::degrade(format!("summarizer failure: {who}: {}", e.message))
            }
            FailureKind::Exhausted | FailureKind::WaitTooLong => {
                SummarizerError::outage(format!("{who}: {}", e.message))
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
            let first = self.max_tokens(req);
            let reply = match self.send(req, first).await {
                // A reply that spent its budget thinking is asked once more with a larger
                // one before it counts as failed; both calls were paid.
                Err(e) if e.reason == Some(reason::CUT_OFF_BY_THINKING) => {
                    let second =
                        self.within_model((u64::from(first) * 2).max(u64::from(first) + 4_096));
                    if second <= first {
                        return Err(e);
                    }
                    let why = format!(
                        "the first reply was cut off at max_tokens {first} after thinking ({} tokens out); asked once more with max_tokens {second}",
                        e.usage.map_or(0, |u| u.output_tokens)
                    );
                    match self.send(req, second).await {
                        Ok(mut r) => {
                            r.usage = add(e.usage, r.usage);
                            r.notes.push(why);
                            r
                        }
                        Err(mut e2) => {
                            e2.usage = add(e.usage, e2.usage);
                            e2.message = format!("{why}, and that too failed: {}", e2.message);
                            return Err(e2);
                        }
                    }
                }
                other => other?,
            };
            if self.config.model.provider == Provider::OpenAiCompatible {
                warn_if_truncated(&reply, req, &self.warn);
            }
            Ok(reply)
        })
    }

    fn count_tokens<'a>(&'a self, req: &'a SummaryRequest) -> Option<CountFuture<'a>> {
        let c = &self.config;
        if c.model.provider != Provider::Anthropic || c.key.is_none() {
            return None;
        }
        Some(Box::pin(async move {
            let body = anthropic::count_body(&c.model.id, req, c.model.profile());
            let (headers, key) = self.headers();
            let request = Request {
                url: anthropic::count_url(&c.base_url),
                headers,
                body: serde_json::to_vec(&body).expect("a request body serializes"),
                secrets: key
                    .into_iter()
                    .chain(crate::redact::url_secrets(&c.base_url))
                    .collect(),
                label: self.label.clone(),
            };
            let response = self
                .client
                .post(&request)
                .await
                .map_err(|e| self.failure(e))?;
            anthropic::parse_count(&response.body)
        }))
    }
}

/// Two calls' usage, added.
fn add(a: Option<Usage>, b: Option<Usage>) -> Option<Usage> {
    match (a, b) {
        (Some(a), Some(b)) => Some(Usage {
            input_tokens: a.input_tokens + b.input_tokens,
            output_tokens: a.output_tokens + b.output_tokens,
        }),
        (a, b) => a.or(b),
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
