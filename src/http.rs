//! `HttpClient`: the only module that sends bytes over the network. One request (a JSON POST, a
//! GET, a multipart upload) with timeouts, no redirects, and retries the way the official SDKs do them: connection errors, timeouts, 408,
//! 409, 429 and 5xx (529 included) are retried with capped exponential backoff and jitter, or
//! after the server's `retry-after-ms` / `retry-after`; quota and spend-limit 429s, and other
//! 4xx, are not. Errors name the status, the provider's error type and the request id, and never
//! carry a key.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// Backoff: `min(INITIAL · 2ⁿ, MAX)` seconds, less up to 25 % jitter.
const INITIAL_RETRY_DELAY: f64 = 0.5;
const MAX_RETRY_DELAY: f64 = 8.0;
/// Longest error text kept from a response body.
const MAX_ERROR_TEXT: usize = 512;
/// The largest reply body read when the caller names no bound.
pub const DEFAULT_MAX_REPLY: usize = 16 << 20;

/// The most bytes a reply to a request for at most `max_tokens` output tokens can honestly take:
/// every token as several escaped characters (`\uXXXX` is six bytes a character), plus the
/// envelope (ids, usage, a reasoning summary) — a margin of many times what any real reply needs.
pub fn reply_bound(max_tokens: u32) -> usize {
    (1 << 20) + max_tokens as usize * 64
}

/// Sleeping, injectable so tests can record waits instead of taking them.
pub trait Sleeper: Send + Sync {
    fn sleep(&self, d: Duration) -> Pin<Box<dyn Future<Output = ()> + Send>>;
}

#[derive(Debug, Default)]
pub struct TokioSleeper;

impl Sleeper for TokioSleeper {
    fn sleep(&self, d: Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> {
        Box::pin(tokio::time::sleep(d))
    }
}

/// A line of `-v` output (request metadata, never a body unless asked for).
pub type Log = Arc<dyn Fn(&str) + Send + Sync>;

#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// Total time for one attempt (connect, send, wait, read).
    pub timeout: Duration,
    pub connect_timeout: Duration,
    /// Attempts after the first.
    pub retries: u32,
    /// Longest `retry-after` honoured; a server asking for more is not retried.
    pub max_retry_after: Duration,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(120),
            connect_timeout: Duration::from_secs(10),
            retries: 2,
            max_retry_after: Duration::from_secs(60),
        }
    }
}

/// How a request is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    #[default]
    Post,
    Get,
}

impl Method {
    fn name(self) -> &'static str {
        match self {
            Method::Post => "POST",
            Method::Get => "GET",
        }
    }
}

/// A request body: JSON (the default), none (a GET), or a multipart form with one file (a
/// provider's file upload).
#[derive(Debug, Clone, Default)]
pub enum Body {
    #[default]
    Empty,
    Json(Vec<u8>),
    /// Text fields, then one file part: (field name, file name, bytes).
    Form {
        fields: Vec<(&'static str, String)>,
        file: (&'static str, String, Vec<u8>),
    },
}

impl Body {
    fn len(&self) -> usize {
        match self {
            Body::Empty => 0,
            Body::Json(b) => b.len(),
            Body::Form { fields, file } => {
                fields.iter().map(|(_, v)| v.len()).sum::<usize>() + file.2.len()
            }
        }
    }

    fn shown(&self) -> String {
        match self {
            Body::Empty => String::new(),
            Body::Json(b) => String::from_utf8_lossy(b).into_owned(),
            Body::Form { fields, file } => format!(
                "multipart: {} and file {} ({} bytes)",
                fields
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                file.1,
                file.2.len()
            ),
        }
    }
}

/// One request: method, URL, headers (sensitive ones are marked and never logged), body.
#[derive(Clone, Default)]
pub struct Request {
    pub method: Method,
    pub url: String,
    pub headers: Vec<(&'static str, String, bool)>,
    pub body: Body,
    /// Secret strings that must never appear in errors or logs.
    pub secrets: Vec<String>,
    /// What the request is for, in `-v` lines (the model).
    pub label: String,
    /// A longer (or shorter) bound than the client's for this request's attempts (a flex-tier
    /// call may take minutes).
    pub timeout: Option<Duration>,
}

impl Request {
    /// A POST of a JSON body.
    pub fn json(url: String, body: Vec<u8>, label: String) -> Self {
        Request {
            url,
            body: Body::Json(body),
            label,
            ..Request::default()
        }
    }
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("body_bytes", &self.body.len())
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub body: Vec<u8>,
    pub request_id: Option<String>,
    pub attempts: u32,
}

/// What kind of failure a final HTTP error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// 401 / 403: the key is wrong or lacks access.
    Auth,
    /// Quota, billing or spend limit (429 with a quota code, 402).
    Quota,
    /// 404: wrong model or base URL.
    NotFound,
    /// The request is too large for the model or the server (context overflow, 413).
    TooLarge,
    /// Other 4xx: the request was refused as malformed.
    Rejected,
    /// Retries ran out on a transient condition (429, 5xx, 529, timeouts, connection errors,
    /// a refused connection to a server that answered earlier in the run).
    Exhausted,
    /// The server asked to wait longer than mf waits.
    WaitTooLong,
    /// A redirect, which mf does not follow (a key must not travel to another host).
    Redirect,
    /// Nothing answered: connection refused, or the host name did not resolve, and the server
    /// never answered in this run (a setup error).
    Unreachable,
    /// The reply was larger than any reply to this request can honestly be; reading stopped at
    /// the bound.
    ReplyTooLarge,
}

#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct HttpError {
    pub kind: FailureKind,
    pub status: Option<u16>,
    pub error_type: Option<String>,
    pub request_id: Option<String>,
    pub attempts: u32,
    /// A complete, redacted sentence for a person.
    pub message: String,
}

/// What one attempt came to, before the retry policy judges it.
#[derive(Debug)]
pub enum Attempt {
    /// The server answered with a status and a body (read within the bound).
    Answered {
        status: u16,
        headers: HeaderMap,
        body: Vec<u8>,
    },
    /// The body was larger than the bound; reading stopped.
    TooLarge {
        status: u16,
        headers: HeaderMap,
        bound: usize,
    },
    /// No complete answer: `what` happened; `connect` when nothing was there at all (refused,
    /// no such host) rather than a slow or dropped answer.
    Transport { what: String, connect: bool },
}

/// What to do after an attempt.
#[derive(Debug)]
pub enum Next {
    Done(Response),
    /// Wait this long, then try again; `why` is the `-v` line.
    Retry {
        wait: Duration,
        why: String,
    },
    Fail(HttpError),
}

/// When to try again: the SDKs' policy as a pure function of an attempt's outcome, so it is
/// tested without a network.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Attempts in all (the first included).
    pub max_attempts: u32,
    /// Longest `retry-after` honoured; a server asking for more is not retried.
    pub max_retry_after: Duration,
}

/// What the policy reads besides the attempt: its number (1-based), the jitter drawn for it,
/// the time now (for an HTTP-date `retry-after`), and whether the server has answered before in
/// this run (a refused connection after that is an outage, not a wrong URL).
#[derive(Debug, Clone, Copy)]
pub struct AttemptContext {
    pub number: u32,
    pub jitter: f64,
    pub now: SystemTime,
    pub answered_before: bool,
}

impl RetryPolicy {
    pub fn next(&self, attempt: Attempt, at: AttemptContext, secrets: &[String]) -> Next {
        let n = at.number;
        match attempt {
            Attempt::Transport { what, connect } => {
                if n < self.max_attempts {
                    let wait = backoff(n - 1, at.jitter);
                    return Next::Retry {
                        wait,
                        why: format!("retrying in {:.2}s", wait.as_secs_f64()),
                    };
                }
                Next::Fail(HttpError {
                    kind: if connect && !at.answered_before {
                        FailureKind::Unreachable
                    } else {
                        FailureKind::Exhausted
                    },
                    status: None,
                    error_type: None,
                    request_id: None,
                    attempts: n,
                    message: redact(&format!("{what} ({n} attempt{})", plural(n)), secrets),
                })
            }
            Attempt::TooLarge {
                status,
                headers,
                bound,
            } => Next::Fail(HttpError {
                kind: FailureKind::ReplyTooLarge,
                status: Some(status),
                error_type: None,
                request_id: request_id(&headers),
                attempts: n,
                message: format!(
                    "the reply (HTTP {status}) was larger than {bound} bytes, more than any reply to this request can be; mf stopped reading it"
                ),
            }),
            Attempt::Answered {
                status,
                headers,
                body,
            } => self.judge_status(status, &headers, body, at, secrets),
        }
    }

    fn judge_status(
        &self,
        status: u16,
        headers: &HeaderMap,
        body: Vec<u8>,
        at: AttemptContext,
        secrets: &[String],
    ) -> Next {
        let n = at.number;
        let request_id = request_id(headers);
        if (200..300).contains(&status) {
            return Next::Done(Response {
                status,
                body,
                request_id,
                attempts: n,
            });
        }
        let info = ErrorInfo::parse(&body);
        let fail = |kind: FailureKind, extra: String| {
            Next::Fail(HttpError {
                kind,
                status: Some(status),
                error_type: info.error_type.clone(),
                request_id: request_id.clone(),
                attempts: n,
                message: redact(
                    &format!(
                        "HTTP {status}{}{}{}{extra}",
                        info.error_type
                            .as_ref()
                            .map_or(String::new(), |t| format!(" {t}")),
                        if info.message.is_empty() {
                            String::new()
                        } else {
                            format!(": {}", info.message)
                        },
                        request_id
                            .as_ref()
                            .map_or(String::new(), |id| format!(" (request id {id})")),
                    ),
                    secrets,
                ),
            })
        };
        match classify(status, headers, &info) {
            Verdict::Fail(kind) => fail(kind, String::new()),
            Verdict::Retry if n >= self.max_attempts => fail(
                FailureKind::Exhausted,
                format!("; gave up after {n} attempt{}", plural(n)),
            ),
            Verdict::Retry => {
                let wait = match retry_after(headers, at.now) {
                    Some(d) if d > self.max_retry_after => {
                        return fail(
                            FailureKind::WaitTooLong,
                            format!(
                                "; the server asked to wait {:.0}s, longer than mf waits ({}s); try again later",
                                d.as_secs_f64(),
                                self.max_retry_after.as_secs()
                            ),
                        );
                    }
                    Some(d) if d > Duration::ZERO => d,
                    _ => backoff(n - 1, at.jitter),
                };
                Next::Retry {
                    wait,
                    why: format!("retrying in {:.2}s after HTTP {status}", wait.as_secs_f64()),
                }
            }
        }
    }
}

/// The reqwest-backed client.
#[derive(Clone)]
pub struct HttpClient {
    client: reqwest::Client,
    settings: HttpSettings,
    sleeper: Arc<dyn Sleeper>,
    jitter: fn() -> f64,
    log: Option<Log>,
    debug_bodies: bool,
    /// `-vv`: also log headers (sensitive values redacted) and when the reply's headers came.
    detail: bool,
    /// Whether the server has answered (any HTTP status) in this run: a refused connection
    /// after that is an outage, not a wrong URL.
    answered: Arc<std::sync::atomic::AtomicBool>,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl HttpClient {
    pub fn new(settings: HttpSettings) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(settings.connect_timeout)
            .timeout(settings.timeout)
            .user_agent(concat!("mf/", env!("CARGO_PKG_VERSION")))
            .build()?;
        Ok(Self {
            client,
            settings,
            sleeper: Arc::new(TokioSleeper),
            jitter: fastrand::f64,
            log: None,
            debug_bodies: false,
            detail: false,
            answered: Arc::default(),
        })
    }

    pub fn with_sleeper(mut self, sleeper: Arc<dyn Sleeper>, jitter: fn() -> f64) -> Self {
        self.sleeper = sleeper;
        self.jitter = jitter;
        self
    }

    /// Log request metadata (`-v`); with `bodies`, also request and response bodies (`--debug-bodies`).
    pub fn with_log(mut self, log: Log, bodies: bool) -> Self {
        self.log = Some(log);
        self.debug_bodies = bodies;
        self
    }

    /// With a log (`-v`), also log headers and the time to the reply's headers (`-vv`).
    pub fn with_detail(mut self, detail: bool) -> Self {
        self.detail = detail;
        self
    }

    fn log(&self, req: &Request, line: &str) {
        if let Some(log) = &self.log {
            log(&redact(line, &req.secrets));
        }
    }

    /// How long one attempt may take, unless a request says otherwise.
    pub fn timeout(&self) -> Duration {
        self.settings.timeout
    }

    /// The retry policy this client's settings make.
    pub fn policy(&self) -> RetryPolicy {
        RetryPolicy {
            max_attempts: self.settings.retries + 1,
            max_retry_after: self.settings.max_retry_after,
        }
    }

    /// Send with retries. Returns the first 2xx response, or the final failure. A body is read
    /// up to [`DEFAULT_MAX_REPLY`] bytes.
    pub async fn send(&self, req: &Request) -> Result<Response, HttpError> {
        self.send_bounded(req, DEFAULT_MAX_REPLY).await
    }

    /// [`send`](Self::send), reading no more than `max_reply` bytes of any response body: a
    /// bigger one (by its `content-length`, or as it streams in) is a `ReplyTooLarge` failure,
    /// not retried, and never held in memory beyond the bound. Attempts (`attempt`) are judged
    /// by the client's [`RetryPolicy`].
    pub async fn send_bounded(
        &self,
        req: &Request,
        max_reply: usize,
    ) -> Result<Response, HttpError> {
        let headers = header_map(req)?;
        let policy = self.policy();
        let mut number = 0u32;
        loop {
            number += 1;
            let answered_before = self.answered.load(std::sync::atomic::Ordering::Relaxed);
            let outcome = self
                .attempt(req, &headers, max_reply, number, policy.max_attempts)
                .await;
            let at = AttemptContext {
                number,
                jitter: (self.jitter)(),
                now: SystemTime::now(),
                answered_before,
            };
            match policy.next(outcome, at, &req.secrets) {
                Next::Done(response) => return Ok(response),
                Next::Fail(e) => {
                    if e.kind == FailureKind::ReplyTooLarge {
                        self.log(req, &e.message);
                    }
                    return Err(e);
                }
                Next::Retry { wait, why } => {
                    self.log(req, &why);
                    self.sleeper.sleep(wait).await;
                }
            }
        }
    }

    /// One attempt: send, read the answer within `max_reply` bytes, log it.
    async fn attempt(
        &self,
        req: &Request,
        headers: &HeaderMap,
        max_reply: usize,
        number: u32,
        max_attempts: u32,
    ) -> Attempt {
        self.log(
            req,
            &format!(
                "{} {} model {} ({} bytes) attempt {number}/{max_attempts}",
                req.method.name(),
                req.url,
                req.label,
                req.body.len()
            ),
        );
        if self.debug_bodies && !matches!(req.body, Body::Empty) {
            self.log(req, &format!("request body: {}", req.body.shown()));
        }
        if self.detail {
            let shown: Vec<String> = req
                .headers
                .iter()
                .map(|(name, value, sensitive)| {
                    format!("{name}: {}", if *sensitive { "[redacted]" } else { value })
                })
                .collect();
            self.log(req, &format!("request headers: {}", shown.join("; ")));
        }
        let started = Instant::now();
        let sent = self.builder(req, headers).send().await;
        let resp = match sent {
            Ok(resp) => resp,
            Err(e) => {
                // Nothing there (refused, no such host), not a slow or dropped answer.
                let connect = e.is_connect() && !e.is_timeout();
                let what = transport_message(e, &self.settings, req.timeout);
                self.log(
                    req,
                    &format!("{what} after {:.1}s", started.elapsed().as_secs_f64()),
                );
                return Attempt::Transport { what, connect };
            }
        };
        self.answered
            .store(true, std::sync::atomic::Ordering::Relaxed);
        let status = resp.status().as_u16();
        let resp_headers = resp.headers().clone();
        if self.detail {
            self.log(
                req,
                &format!(
                    "HTTP {status} headers after {:.2}s: {}",
                    started.elapsed().as_secs_f64(),
                    shown_headers(&resp_headers)
                ),
            );
        }
        let body = match read_bounded(resp, max_reply).await {
            Ok(Some(body)) => body,
            Ok(None) => {
                return Attempt::TooLarge {
                    status,
                    headers: resp_headers,
                    bound: max_reply,
                };
            }
            Err(e) => {
                let what = transport_message(e, &self.settings, req.timeout);
                self.log(
                    req,
                    &format!("{what} after {:.1}s", started.elapsed().as_secs_f64()),
                );
                return Attempt::Transport {
                    what,
                    connect: false,
                };
            }
        };
        let id = request_id(&resp_headers);
        self.log(
            req,
            &format!(
                "→ {status} in {:.2}s, {} bytes{}",
                started.elapsed().as_secs_f64(),
                body.len(),
                id.as_ref()
                    .map_or(String::new(), |id| format!(", request id {id}"))
            ),
        );
        if self.debug_bodies {
            self.log(
                req,
                &format!("response body: {}", String::from_utf8_lossy(&body)),
            );
        }
        Attempt::Answered {
            status,
            headers: resp_headers,
            body,
        }
    }

    /// The request as reqwest sends it (a multipart form is built anew for every attempt).
    fn builder(&self, req: &Request, headers: &HeaderMap) -> reqwest::RequestBuilder {
        let b = match req.method {
            Method::Post => self.client.post(&req.url),
            Method::Get => self.client.get(&req.url),
        };
        let b = b.headers(headers.clone());
        let b = match req.timeout {
            Some(t) => b.timeout(t),
            None => b,
        };
        match &req.body {
            Body::Empty => b,
            Body::Json(bytes) => b
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(bytes.clone()),
            Body::Form { fields, file } => {
                let mut form = reqwest::multipart::Form::new();
                for (k, v) in fields {
                    form = form.text(*k, v.clone());
                }
                let part =
                    reqwest::multipart::Part::bytes(file.2.clone()).file_name(file.1.clone());
                b.multipart(form.part(file.0, part))
            }
        }
    }
}

/// A request's headers as reqwest takes them, sensitive ones marked.
fn header_map(req: &Request) -> Result<HeaderMap, HttpError> {
    let mut headers = HeaderMap::new();
    for (name, value, sensitive) in &req.headers {
        let mut v = HeaderValue::from_str(value).map_err(|_| HttpError {
            kind: FailureKind::Rejected,
            status: None,
            error_type: None,
            request_id: None,
            attempts: 0,
            message: format!(
                "the `{name}` header value is not valid (a key with a newline or control character?)"
            ),
        })?;
        v.set_sensitive(*sensitive);
        headers.insert(HeaderName::from_static(name), v);
    }
    Ok(headers)
}

/// Response headers for `-vv`: every one by name, a value that could be a credential redacted.
fn shown_headers(headers: &HeaderMap) -> String {
    headers
        .iter()
        .map(|(name, value)| {
            let n = name.as_str();
            let secret = value.is_sensitive()
                || ["cookie", "authorization", "key", "token", "secret"]
                    .iter()
                    .any(|s| n.contains(s) && !n.contains("ratelimit"));
            if secret {
                format!("{n}: [redacted]")
            } else {
                format!("{n}: {}", String::from_utf8_lossy(value.as_bytes()))
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A response body, chunk by chunk, or `None` once it is more than `max` bytes (announced or
/// streamed): memory stays within the bound whatever the server sends.
async fn read_bounded(
    mut resp: reqwest::Response,
    max: usize,
) -> Result<Option<Vec<u8>>, reqwest::Error> {
    if resp.content_length().is_some_and(|n| n > max as u64) {
        return Ok(None);
    }
    let mut body = Vec::with_capacity(resp.content_length().map_or(8 << 10, |n| n as usize));
    while let Some(chunk) = resp.chunk().await? {
        if body.len() + chunk.len() > max {
            return Ok(None);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Some(body))
}

fn transport_message(e: reqwest::Error, s: &HttpSettings, timeout: Option<Duration>) -> String {
    let e = e.without_url();
    if e.is_timeout() {
        return format!(
            "timed out (no complete answer within {}s)",
            timeout.unwrap_or(s.timeout).as_secs()
        );
    }
    // The innermost cause says what actually happened (refused, reset, DNS…).
    let mut cause = e.to_string();
    let mut src = std::error::Error::source(&e);
    while let Some(inner) = src {
        cause = inner.to_string();
        src = inner.source();
    }
    if e.is_connect() {
        format!("could not connect: {cause}")
    } else {
        format!("the connection failed: {cause}")
    }
}

/// What to do with a non-2xx status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Retry,
    Fail(FailureKind),
}

const QUOTA_CODES: &[&str] = &[
    "insufficient_quota",
    "enforced_spend_limit_reached",
    "credit_balance_exhausted",
    "spend_limit_exceeded",
    "organization_usage_limit_exceeded",
    "billing_error",
];

/// Classify a non-2xx response the way the SDKs do.
pub fn classify(status: u16, headers: &HeaderMap, info: &ErrorInfo) -> Verdict {
    let quota = QUOTA_CODES
        .iter()
        .any(|c| info.raw_codes.iter().any(|r| r.contains(c)));
    if (300..400).contains(&status) {
        return Verdict::Fail(FailureKind::Redirect);
    }
    if quota || status == 402 {
        return Verdict::Fail(FailureKind::Quota);
    }
    match headers.get("x-should-retry").and_then(|v| v.to_str().ok()) {
        Some("true") => return Verdict::Retry,
        Some("false") => return Verdict::Fail(fail_kind(status, info)),
        _ => {}
    }
    match status {
        408 | 409 | 429 | 500..=599 => Verdict::Retry,
        _ => Verdict::Fail(fail_kind(status, info)),
    }
}

fn fail_kind(status: u16, info: &ErrorInfo) -> FailureKind {
    let overflow = [
        "context_length_exceeded",
        "exceed_context_size",
        "prompt is too long",
        "context window",
        "maximum context",
    ]
    .iter()
    .any(|p| {
        info.message.to_lowercase().contains(p) || info.raw_codes.iter().any(|c| c.contains(p))
    });
    match status {
        401 | 403 => FailureKind::Auth,
        404 => FailureKind::NotFound,
        413 => FailureKind::TooLarge,
        _ if overflow => FailureKind::TooLarge,
        _ => FailureKind::Rejected,
    }
}

/// The wait for retry `n` (0-based) without a server hint: `min(0.5·2ⁿ, 8) · (1 − 0.25·jitter)`.
pub fn backoff(n: u32, jitter: f64) -> Duration {
    let base =
        (INITIAL_RETRY_DELAY * 2f64.powi(i32::try_from(n).unwrap_or(30))).min(MAX_RETRY_DELAY);
    Duration::from_secs_f64(base * (1.0 - 0.25 * jitter.clamp(0.0, 1.0)))
}

/// The server's requested wait: `retry-after-ms` first, then `retry-after` in seconds or as an HTTP date.
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|s| s.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let v = headers.get("retry-after")?.to_str().ok()?.trim();
    if let Ok(secs) = v.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = httpdate::parse_http_date(v).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

fn request_id(headers: &HeaderMap) -> Option<String> {
    ["request-id", "x-request-id"].iter().find_map(|h| {
        headers
            .get(*h)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    })
}

/// The parts of an error body a person needs, from any of the dialects servers speak:
/// Anthropic `{"type":"error","error":{…},"request_id"}`, OpenAI `{"error":{…}}`, Ollama
/// `{"error":"…"}`, vLLM `{"object":"error",…}`, an HTML page, or nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorInfo {
    pub error_type: Option<String>,
    pub message: String,
    /// Every `type` / `code` / `error_code` string found, for quota detection.
    pub raw_codes: Vec<String>,
}

impl ErrorInfo {
    pub fn parse(body: &[u8]) -> Self {
        let text = String::from_utf8_lossy(&body[..body.len().min(64 * 1024)]).into_owned();
        let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
            let flat: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let message = if flat.is_empty() {
                "(empty response body)".to_string()
            } else if flat.starts_with('<') {
                format!("(not JSON: {})", truncate(&flat, 120))
            } else {
                truncate(&flat, MAX_ERROR_TEXT)
            };
            return Self {
                error_type: None,
                message,
                raw_codes: Vec::new(),
            };
        };
        let mut raw_codes = Vec::new();
        collect_codes(&v, &mut raw_codes, 0);
        let err = v.get("error");
        let (error_type, message) = match err {
            Some(serde_json::Value::String(s)) => (None, s.clone()),
            Some(e @ serde_json::Value::Object(_)) => (
                e.get("type").and_then(|t| t.as_str()).map(str::to_string),
                e.get("message")
                    .and_then(|m| m.as_str())
                    .unwrap_or_default()
                    .to_string(),
            ),
            _ => (
                v.get("type")
                    .and_then(|t| t.as_str())
                    .filter(|t| *t != "error")
                    .map(str::to_string),
                v.get("message")
                    .and_then(|m| m.as_str())
                    .unwrap_or_default()
                    .to_string(),
            ),
        };
        Self {
            error_type,
            message: truncate(&message, MAX_ERROR_TEXT),
            raw_codes,
        }
    }
}

fn collect_codes(v: &serde_json::Value, out: &mut Vec<String>, depth: usize) {
    if depth > 4 {
        return;
    }
    if let serde_json::Value::Object(map) = v {
        for (k, val) in map {
            if matches!(k.as_str(), "type" | "code" | "error_code")
                && let Some(s) = val.as_str()
            {
                out.push(s.to_string());
            }
            collect_codes(val, out, depth + 1);
        }
    }
}

fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    format!("{}…", crate::text::prefix(s, max))
}

/// Remove secrets from text: each literal secret, and anything that looks like an API key
/// (`sk-…`, `sk-ant-…`).
pub fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for s in secrets {
        if s.len() >= 4 {
            out = out.replace(s.as_str(), "[REDACTED]");
        }
    }
    let mut result = String::with_capacity(out.len());
    let mut rest = out.as_str();
    while let Some(pos) = rest.find("sk-") {
        let (before, from) = rest.split_at(pos);
        let boundary = before.chars().last().is_none_or(|c| !c.is_alphanumeric());
        let len = from
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
            .count();
        result.push_str(before);
        if boundary && len >= 12 {
            result.push_str("sk-[REDACTED]");
        } else {
            result.push_str(&from[..len.max(3)]);
        }
        rest = &from[len.max(3)..];
    }
    result.push_str(rest);
    crate::redact::url_credentials(&result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut m = HeaderMap::new();
        for (k, v) in pairs {
            m.insert(
                HeaderName::from_static(k),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        m
    }

    fn at(number: u32, answered_before: bool) -> AttemptContext {
        AttemptContext {
            number,
            jitter: 0.0,
            now: SystemTime::UNIX_EPOCH,
            answered_before,
        }
    }

    const POLICY: RetryPolicy = RetryPolicy {
        max_attempts: 3,
        max_retry_after: Duration::from_secs(60),
    };

    fn answered(status: u16, headers: HeaderMap, body: &str) -> Attempt {
        Attempt::Answered {
            status,
            headers,
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn the_policy_retries_a_dropped_connection_then_says_whether_anything_ever_answered() {
        let refused = || Attempt::Transport {
            what: "could not connect: refused".into(),
            connect: true,
        };
        match POLICY.next(refused(), at(1, false), &[]) {
            Next::Retry { wait, .. } => assert_eq!(wait, Duration::from_millis(500)),
            other => panic!("{other:?}"),
        }
        match POLICY.next(refused(), at(3, false), &[]) {
            Next::Fail(e) => {
                assert_eq!(e.kind, FailureKind::Unreachable);
                assert!(e.message.contains("3 attempts"), "{}", e.message);
            }
            other => panic!("{other:?}"),
        }
        match POLICY.next(refused(), at(3, true), &[]) {
            Next::Fail(e) => assert_eq!(e.kind, FailureKind::Exhausted),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_policy_honours_retry_after_within_its_bound_and_gives_up_beyond_it() {
        match POLICY.next(
            answered(429, h(&[("retry-after", "7")]), "{}"),
            at(1, true),
            &[],
        ) {
            Next::Retry { wait, why } => {
                assert_eq!(wait, Duration::from_secs(7));
                assert!(why.contains("HTTP 429"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        match POLICY.next(
            answered(429, h(&[("retry-after", "600")]), "{}"),
            at(1, true),
            &[],
        ) {
            Next::Fail(e) => assert_eq!(e.kind, FailureKind::WaitTooLong),
            other => panic!("{other:?}"),
        }
        match POLICY.next(answered(503, HeaderMap::new(), "{}"), at(3, true), &[]) {
            Next::Fail(e) => {
                assert_eq!(e.kind, FailureKind::Exhausted);
                assert!(
                    e.message.contains("gave up after 3 attempts"),
                    "{}",
                    e.message
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_policy_returns_a_2xx_and_fails_a_4xx_at_once_without_the_key() {
        match POLICY.next(
            answered(200, h(&[("request-id", "req_1")]), "ok"),
            at(2, true),
            &[],
        ) {
            Next::Done(r) => {
                assert_eq!(
                    (r.status, r.attempts, r.body.as_slice()),
                    (200, 2, &b"ok"[..])
                );
                assert_eq!(r.request_id.as_deref(), Some("req_1"));
            }
            other => panic!("{other:?}"),
        }
        let body = r#"{"error":{"type":"authentication_error","message":"bad key sk-secret-1"}}"#;
        match POLICY.next(
            answered(401, HeaderMap::new(), body),
            at(1, true),
            &["sk-secret-1".into()],
        ) {
            Next::Fail(e) => {
                assert_eq!(e.kind, FailureKind::Auth);
                assert!(!e.message.contains("sk-secret-1"), "{}", e.message);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn retry_set_matches_the_sdks() {
        let none = ErrorInfo::default();
        for s in [408, 409, 429, 500, 502, 503, 504, 529] {
            assert_eq!(classify(s, &HeaderMap::new(), &none), Verdict::Retry, "{s}");
        }
        for s in [400, 401, 402, 403, 404, 413, 422] {
            assert!(
                matches!(classify(s, &HeaderMap::new(), &none), Verdict::Fail(_)),
                "{s}"
            );
        }
        assert_eq!(
            classify(401, &HeaderMap::new(), &none),
            Verdict::Fail(FailureKind::Auth)
        );
        assert_eq!(
            classify(307, &HeaderMap::new(), &none),
            Verdict::Fail(FailureKind::Redirect)
        );
    }

    #[test]
    fn quota_429s_are_not_retried() {
        let anthropic = ErrorInfo::parse(br#"{"type":"error","error":{"type":"rate_limit_error","message":"spend cap","details":{"error_code":"enforced_spend_limit_reached"}}}"#);
        assert_eq!(
            classify(429, &HeaderMap::new(), &anthropic),
            Verdict::Fail(FailureKind::Quota)
        );
        let openai = ErrorInfo::parse(br#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#);
        assert_eq!(
            classify(429, &HeaderMap::new(), &openai),
            Verdict::Fail(FailureKind::Quota)
        );
    }

    #[test]
    fn x_should_retry_wins() {
        let none = ErrorInfo::default();
        assert!(matches!(
            classify(500, &h(&[("x-should-retry", "false")]), &none),
            Verdict::Fail(_)
        ));
        assert_eq!(
            classify(400, &h(&[("x-should-retry", "true")]), &none),
            Verdict::Retry
        );
    }

    #[test]
    fn backoff_is_capped_exponential_with_jitter_below() {
        assert_eq!(backoff(0, 0.0), Duration::from_millis(500));
        assert_eq!(backoff(0, 1.0), Duration::from_millis(375));
        assert_eq!(backoff(1, 0.0), Duration::from_secs(1));
        assert_eq!(backoff(2, 0.0), Duration::from_secs(2));
        assert_eq!(backoff(10, 0.0), Duration::from_secs(8));
        for n in 0..3 {
            let d = backoff(n, 0.5).as_secs_f64();
            let top = (0.5 * 2f64.powi(n as i32)).min(8.0);
            assert!(d >= top * 0.75 && d <= top, "{n}: {d}");
        }
    }

    #[test]
    fn retry_after_forms() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        assert_eq!(
            retry_after(&h(&[("retry-after", "2")]), now),
            Some(Duration::from_secs(2))
        );
        assert_eq!(
            retry_after(
                &h(&[("retry-after-ms", "1500"), ("retry-after", "30")]),
                now
            ),
            Some(Duration::from_millis(1500))
        );
        let date = httpdate::fmt_http_date(now + Duration::from_secs(3));
        assert_eq!(
            retry_after(&h(&[("retry-after", &date)]), now),
            Some(Duration::from_secs(3))
        );
        let past = httpdate::fmt_http_date(now - Duration::from_secs(30));
        assert_eq!(
            retry_after(&h(&[("retry-after", &past)]), now),
            Some(Duration::ZERO)
        );
        assert_eq!(retry_after(&h(&[("retry-after", "soon")]), now), None);
        assert_eq!(retry_after(&HeaderMap::new(), now), None);
    }

    #[test]
    fn error_bodies_of_every_dialect() {
        let a = ErrorInfo::parse(br#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_1"}"#);
        assert_eq!(
            (a.error_type.as_deref(), a.message.as_str()),
            (Some("overloaded_error"), "Overloaded")
        );
        let o = ErrorInfo::parse(br#"{"error":{"message":"bad","type":"invalid_request_error","param":null,"code":null}}"#);
        assert_eq!(o.error_type.as_deref(), Some("invalid_request_error"));
        let ollama = ErrorInfo::parse(br#"{"error":"model 'x' not found"}"#);
        assert_eq!(ollama.message, "model 'x' not found");
        let vllm = ErrorInfo::parse(br#"{"object":"error","message":"too long","type":"BadRequestError","param":null,"code":400}"#);
        assert_eq!(
            (vllm.error_type.as_deref(), vllm.message.as_str()),
            (Some("BadRequestError"), "too long")
        );
        let html = ErrorInfo::parse(b"<html><body><h1>502 Bad Gateway</h1></body></html>");
        assert!(
            html.message.starts_with("(not JSON: <html>"),
            "{}",
            html.message
        );
        assert_eq!(ErrorInfo::parse(b"").message, "(empty response body)");
        let big = vec![b'x'; 2 * 1024 * 1024];
        assert!(ErrorInfo::parse(&big).message.len() <= MAX_ERROR_TEXT + 4);
        let overflow = ErrorInfo::parse(br#"{"error":{"code":400,"message":"request (9000 tokens) exceeds the available context size (4096 tokens)","type":"exceed_context_size_error"}}"#);
        assert_eq!(fail_kind(400, &overflow), FailureKind::TooLarge);
    }

    #[test]
    fn redaction_removes_keys() {
        let s = redact(
            "key sk-ant-TEST-SENTINEL-0000 and abcdsecret and sk-short",
            &["abcdsecret".into()],
        );
        assert_eq!(s, "key sk-[REDACTED] and [REDACTED] and sk-short");
        assert_eq!(redact("task-list is fine", &[]), "task-list is fine");
    }
}
