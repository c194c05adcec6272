//! `Remote`: a summarizer behind an HTTP API — Anthropic, OpenAI, or an OpenAI-compatible server.
//! It shapes the request (`anthropic` / `openai` modules), sends it through `http`, and maps
//! failures to what mf does about them: setup errors stop the run, the rest degrade to verbatim.

use secrecy::{ExposeSecret, SecretString};

use crate::entry::{Tier, Usage};
use crate::fold::SummaryRequest;
use crate::http::{Body, FailureKind, HttpClient, HttpError, Log, Method, Request};
use crate::model::{ModelRef, Provider};
use crate::summarizer::wire::{BatchStatus, BatchWire, ItemResult, Submit, Wire};
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
    /// The tier calls run at (`--service-tier flex`; a batch's calls are `Batch`).
    pub tier: Tier,
    /// `--flex-fallback`: a flex call that stays unavailable is sent at the default tier.
    pub flex_fallback: bool,
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
    wire: &'static dyn Wire,
    label: String,
    url: String,
    /// The URL as mf shows it: credentials in it redacted.
    shown_url: String,
    client: HttpClient,
    warn: Log,
}

/// The wire format a provider speaks: every provider named, none by default.
fn wire_of(provider: Provider) -> &'static dyn Wire {
    match provider {
        Provider::Anthropic => &anthropic::Anthropic,
        Provider::OpenAi => &openai::OpenAi { compatible: false },
        Provider::OpenAiCompatible => &openai::OpenAi { compatible: true },
        Provider::Builtin => panic!("the built-in summarizer is not reached over HTTP"),
    }
}

/// How long a flex-tier call may take (OpenAI: flex answers slowly; about 15 minutes).
const FLEX_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15 * 60);

impl Remote {
    pub fn new(config: RemoteConfig, client: HttpClient, warn: Log) -> Self {
        let wire = wire_of(config.model.provider);
        let url = wire.url(&config.base_url);
        let label = config.model.label();
        let shown_url = crate::redact::url_shown(&url);
        Self {
            config,
            wire,
            label,
            url,
            shown_url,
            client,
            warn,
        }
    }

    pub fn config(&self) -> &RemoteConfig {
        &self.config
    }

    /// The first call's token cap: the summary's budget (or `--max-output-tokens`, which is
    /// the whole cap), plus the room the profile gives thinking, within what the model writes.
    pub fn max_tokens(&self, req: &SummaryRequest) -> u32 {
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

    /// A request to `url` with the provider's headers and the secrets to keep out of logs.
    fn request_to(&self, url: String, body: Body) -> Request {
        let key = self.config.key_value();
        Request {
            headers: self.wire.headers(&self.config, key.as_deref()),
            secrets: key
                .into_iter()
                .chain(crate::redact::url_secrets(&url))
                .chain(crate::redact::url_secrets(&self.config.base_url))
                .collect(),
            url,
            body,
            label: self.label.clone(),
            ..Request::default()
        }
    }

    /// The body of one call for `req` at the first token cap: what a batch line carries.
    pub fn body(&self, req: &SummaryRequest) -> serde_json::Value {
        self.wire.body(&self.config, req, self.max_tokens(req))
    }

    /// One call with this token cap, at `tier`.
    async fn send(
        &self,
        req: &SummaryRequest,
        max_tokens: u32,
        tier: Tier,
    ) -> Result<SummaryReply, SummarizerError> {
        let mut config = self.config.clone();
        config.tier = tier;
        let body = self.wire.body(&config, req, max_tokens);
        let mut request = self.request_to(
            self.url.clone(),
            Body::Json(serde_json::to_vec(&body).expect("a request body serializes")),
        );
        if tier == Tier::Flex {
            request.timeout = Some(FLEX_TIMEOUT.max(self.client.timeout()));
        }
        let response = self
            .client
            .send_bounded(&request, crate::http::reply_bound(max_tokens))
            .await
            .map_err(|e| self.failure(e))?;
        let mut reply = self.wire.parse(&response.body);
        let at_tier = |u: &mut Option<Usage>| {
            if let Some(u) = u {
                u.tier = tier;
            }
        };
        match &mut reply {
            Ok(r) => at_tier(&mut r.usage),
            Err(e) => at_tier(&mut e.usage),
        }
        reply
    }

    /// One call at the configured tier; a flex call OpenAI keeps refusing for want of capacity
    /// (429 after the retries) is sent once more at the default tier when `--flex-fallback`
    /// allows it, and the reply says so.
    async fn send_at_tier(
        &self,
        req: &SummaryRequest,
        max_tokens: u32,
    ) -> Result<SummaryReply, SummarizerError> {
        let tier = self.config.tier;
        match self.send(req, max_tokens, tier).await {
            Err(e) if tier == Tier::Flex && self.config.flex_fallback && e.outage => {
                let mut r = self.send(req, max_tokens, Tier::Standard).await?;
                r.notes.push(format!(
                    "the flex tier stayed unavailable ({}); sent at the default tier (full price), as --flex-fallback allows",
                    e.message
                ));
                Ok(r)
            }
            other => other,
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

    /// The provider's batch API, or why there is none.
    fn batch_wire(&self) -> Result<&'static dyn BatchWire, SummarizerError> {
        self.wire.batch().ok_or_else(|| {
            SummarizerError::fatal(format!(
                "{} has no batch API mf can use (batches are Anthropic's and OpenAI's)",
                self.label
            ))
        })
    }

    /// The most requests and bytes one batch may hold.
    pub fn batch_limits(&self) -> Result<(usize, usize), SummarizerError> {
        Ok(self.batch_wire()?.limits())
    }

    /// The line a batch carries for one call (`custom_id` and its body).
    pub fn batch_line(
        &self,
        custom_id: &str,
        body: &serde_json::Value,
    ) -> Result<serde_json::Value, SummarizerError> {
        Ok(self.batch_wire()?.request_line(custom_id, body))
    }

    /// Submit `lines` (from [`batch_line`](Self::batch_line)) as one batch: its status.
    pub async fn submit_batch(
        &self,
        lines: &[serde_json::Value],
    ) -> Result<BatchStatus, SummarizerError> {
        let bw = self.batch_wire()?;
        let reply = match bw.submit(&self.config.base_url, lines) {
            Submit::Direct { url, body } => {
                let request = self.request_to(
                    url,
                    Body::Json(serde_json::to_vec(&body).expect("a body serializes")),
                );
                self.client.send(&request).await
            }
            Submit::Upload {
                files_url,
                purpose,
                jsonl,
                create_url,
                create,
            } => {
                let upload = self.request_to(
                    files_url,
                    Body::Form {
                        fields: vec![("purpose", purpose.to_string())],
                        file: ("file", "mf-batch.jsonl".to_string(), jsonl),
                    },
                );
                let file = self
                    .client
                    .send(&upload)
                    .await
                    .map_err(|e| self.failure(e))?;
                let id = serde_json::from_slice::<serde_json::Value>(&file.body)
                    .ok()
                    .and_then(|v| v.get("id").and_then(|i| i.as_str()).map(str::to_string))
                    .ok_or_else(|| {
                        SummarizerError::fatal(format!(
                            "{}: the file upload's reply has no `id`",
                            self.label
                        ))
                    })?;
                let request = self.request_to(
                    create_url,
                    Body::Json(serde_json::to_vec(&create(&id)).expect("a body serializes")),
                );
                self.client.send(&request).await
            }
        }
        .map_err(|e| self.failure(e))?;
        self.status_of(bw, &reply.body)
    }

    fn status_of(&self, bw: &dyn BatchWire, body: &[u8]) -> Result<BatchStatus, SummarizerError> {
        bw.parse_status(body).map_err(|why| {
            SummarizerError::fatal(format!("{} at {}: {why}", self.label, self.shown_url))
        })
    }

    /// The batch `id` as the provider reports it now.
    pub async fn batch_status(&self, id: &str) -> Result<BatchStatus, SummarizerError> {
        let bw = self.batch_wire()?;
        let request = Request {
            method: Method::Get,
            ..self.request_to(bw.status_url(&self.config.base_url, id), Body::Empty)
        };
        let reply = self
            .client
            .send(&request)
            .await
            .map_err(|e| self.failure(e))?;
        self.status_of(bw, &reply.body)
    }

    /// Ask the provider to cancel batch `id`: its status after the request.
    pub async fn cancel_batch(&self, id: &str) -> Result<BatchStatus, SummarizerError> {
        let bw = self.batch_wire()?;
        let request = self.request_to(
            bw.cancel_url(&self.config.base_url, id),
            Body::Json(b"{}".to_vec()),
        );
        let reply = self
            .client
            .send(&request)
            .await
            .map_err(|e| self.failure(e))?;
        self.status_of(bw, &reply.body)
    }

    /// The results of an ended batch: each request's `custom_id` and what became of it. A
    /// results URL on another host than the base URL's is refused (the key never travels to
    /// another host).
    pub async fn batch_results(
        &self,
        status: &BatchStatus,
    ) -> Result<Vec<(String, ItemResult)>, SummarizerError> {
        let bw = self.batch_wire()?;
        let mut out = Vec::new();
        for r in &status.results {
            let url = bw.results_url(&self.config.base_url, r);
            if !same_origin(&url, &self.config.base_url) {
                return Err(SummarizerError::fatal(format!(
                    "{}: the batch's results are at `{}`, another host than the base URL's; mf does not send the key there",
                    self.label,
                    crate::redact::url_shown(&url)
                )));
            }
            let request = Request {
                method: Method::Get,
                ..self.request_to(url, Body::Empty)
            };
            let reply = self
                .client
                .send_bounded(&request, 1 << 30)
                .await
                .map_err(|e| self.failure(e))?;
            for line in reply.body.split(|&b| b == b'\n') {
                if line.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                let (id, mut item) = bw.parse_result(line).map_err(|why| {
                    SummarizerError::fatal(format!("{}: batch {}: {why}", self.label, status.id))
                })?;
                if let ItemResult::Answered(reply) = &mut item {
                    let usage = match reply {
                        Ok(r) => &mut r.usage,
                        Err(e) => &mut e.usage,
                    };
                    if let Some(u) = usage {
                        u.tier = Tier::Batch;
                    }
                }
                out.push((id, item));
            }
        }
        Ok(out)
    }
}

/// Whether two URLs have the same scheme, host and port.
fn same_origin(a: &str, b: &str) -> bool {
    match (url::Url::parse(a), url::Url::parse(b)) {
        (Ok(a), Ok(b)) => a.origin() == b.origin(),
        _ => false,
    }
}

impl Summarizer for Remote {
    fn model(&self) -> &str {
        &self.label
    }

    fn summarize<'a>(&'a self, req: &'a SummaryRequest) -> SummaryFuture<'a> {
        Box::pin(async move {
            let first = self.max_tokens(req);
            let reply = match self.send_at_tier(req, first).await {
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
                    match self.send_at_tier(req, second).await {
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
            let request = self.request_to(
                anthropic::count_url(&c.base_url),
                Body::Json(serde_json::to_vec(&body).expect("a request body serializes")),
            );
            let response = self
                .client
                .send(&request)
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
            tier: b.tier,
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
