//! A loopback HTTP/1.1 server for provider tests: it records every request and answers from a
//! script (status, headers, body, delay, or a hang) or from a function of the request (to route
//! faults per file, check a request's size, or answer at the length asked), counting requests in
//! flight. It binds 127.0.0.1:0 only and stops when dropped.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub delay: Duration,
    /// Accept, read the request, never answer (until the server stops).
    pub hang: bool,
}

impl Reply {
    pub fn json(status: u16, body: &str) -> Self {
        Self {
            status,
            headers: vec![],
            body: body.to_string(),
            delay: Duration::ZERO,
            hang: false,
        }
    }
    pub fn header(mut self, k: &str, v: &str) -> Self {
        self.headers.push((k.to_string(), v.to_string()));
        self
    }
    pub fn delay(mut self, d: Duration) -> Self {
        self.delay = d;
        self
    }
    pub fn hang() -> Self {
        Self {
            status: 200,
            headers: vec![],
            body: String::new(),
            delay: Duration::ZERO,
            hang: true,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Lower-cased names.
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub at: Instant,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("request body is JSON")
    }
}

/// Answers a request (and its number, from 0) with a reply.
pub type Responder = Arc<dyn Fn(&Recorded, usize) -> Reply + Send + Sync>;

pub struct TestServer {
    pub addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    pub max_in_flight: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl TestServer {
    /// Answer request n with `script[n]`, and the last entry after the script runs out.
    pub fn start(script: Vec<Reply>) -> Self {
        Self::respond(move |_, n| script.get(n).or(script.last()).cloned().expect("a script"))
    }

    /// Answer every request with `f(request, n)`.
    pub fn respond(f: impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static) -> Self {
        let script: Responder = Arc::new(f);
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let in_flight = Arc::new(AtomicUsize::new(0));
        let max_in_flight = Arc::new(AtomicUsize::new(0));
        let counter = Arc::new(AtomicUsize::new(0));
        {
            let (requests, stop, in_flight, max_in_flight) = (
                requests.clone(),
                stop.clone(),
                in_flight.clone(),
                max_in_flight.clone(),
            );
            std::thread::spawn(move || {
                let started = Instant::now();
                while !stop.load(Ordering::SeqCst) && started.elapsed() < Duration::from_secs(120) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let (requests, stop, in_flight, max_in_flight, counter, script) = (
                                requests.clone(),
                                stop.clone(),
                                in_flight.clone(),
                                max_in_flight.clone(),
                                counter.clone(),
                                script.clone(),
                            );
                            std::thread::spawn(move || {
                                handle(
                                    stream,
                                    &requests,
                                    &stop,
                                    &in_flight,
                                    &max_in_flight,
                                    &counter,
                                    &script,
                                )
                            });
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            });
        }
        Self {
            addr,
            requests,
            max_in_flight,
            stop,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// Wait until at least `n` requests arrived (or `limit` passes).
    pub fn wait_for(&self, n: usize, limit: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            if self.requests().len() >= n {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

type Parsed = (String, String, Vec<(String, String)>, String);

fn read_request(stream: &mut TcpStream) -> Option<Parsed> {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let header_end = loop {
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_string();
    let mut lines = head.split("\r\n");
    let first = lines.next()?.to_string();
    let mut parts = first.split(' ');
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .filter_map(|l| {
            l.split_once(':')
                .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_string()))
        })
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[header_end..].to_vec();
    while body.len() < len {
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some((
        method,
        path,
        headers,
        String::from_utf8_lossy(&body).to_string(),
    ))
}

fn handle(
    mut stream: TcpStream,
    requests: &Mutex<Vec<Recorded>>,
    stop: &AtomicBool,
    in_flight: &AtomicUsize,
    max_in_flight: &AtomicUsize,
    counter: &AtomicUsize,
    script: &Responder,
) {
    let Some((method, path, headers, body)) = read_request(&mut stream) else {
        return;
    };
    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    max_in_flight.fetch_max(now, Ordering::SeqCst);
    let recorded = Recorded {
        method,
        path,
        headers,
        body,
        at: Instant::now(),
    };
    requests.lock().unwrap().push(recorded.clone());
    let n = counter.fetch_add(1, Ordering::SeqCst);
    let reply = script(&recorded, n);
    if reply.hang {
        let start = Instant::now();
        while !stop.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(20));
        }
        in_flight.fetch_sub(1, Ordering::SeqCst);
        return;
    }
    std::thread::sleep(reply.delay);
    let reason = match reply.status {
        200 => "OK",
        307 => "Temporary Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    };
    let mut out = format!(
        "HTTP/1.1 {} {reason}\r\ncontent-length: {}\r\nconnection: close\r\n",
        reply.status,
        reply.body.len()
    );
    if !reply
        .headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
    {
        out.push_str("content-type: application/json\r\n");
    }
    for (k, v) in &reply.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&reply.body);
    let _ = stream.write_all(out.as_bytes());
    let _ = stream.flush();
    in_flight.fetch_sub(1, Ordering::SeqCst);
}

/// A complete Anthropic Messages reply.
pub fn anthropic_ok(text: &str) -> Reply {
    Reply::json(
        200,
        &serde_json::json!({
            "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-haiku-5-5",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 1800, "output_tokens": 60}
        })
        .to_string(),
    )
    .header("request-id", "req_ok_1")
}

/// A complete Chat Completions reply.
pub fn openai_ok(text: &str) -> Reply {
    Reply::json(
        200,
        &serde_json::json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4.1-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": null}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1700, "completion_tokens": 55, "total_tokens": 1755}
        })
        .to_string(),
    )
    .header("x-request-id", "req_oa_1")
}

/// Tokens the way a provider's tokenizer counts `chars` characters: mf's 4 characters a
/// token, times the tokenizer's ratio (1.3 for Anthropic's 5.x tokenizer, 1.0 for OpenAI's
/// o200k), rounded up.
pub fn provider_tokens(chars: usize, ratio: f64) -> u64 {
    (chars as f64 / 4.0 * ratio).ceil() as u64
}

/// How the "Haiku 5.5" mode behaves.
#[derive(Clone, Debug)]
pub struct Haiku55 {
    /// The summary it writes.
    pub text: String,
    /// Tokens it spends thinking before the text when thinking is not disabled (adaptive,
    /// effort `medium` by default; a quarter of it at `low`).
    pub thinking_tokens: u64,
}

impl Haiku55 {
    pub fn new(text: &str) -> Self {
        Self {
            text: text.to_string(),
            thinking_tokens: 3_000,
        }
    }
}

fn anthropic_error(message: &str) -> Reply {
    Reply::json(
        400,
        &serde_json::json!({
            "type": "error",
            "error": {"type": "invalid_request_error", "message": message},
            "request_id": "req_011CX5ZQ8AAAAAAAAAAAAAAA"
        })
        .to_string(),
    )
    .header("request-id", "req_011CX5ZQ8AAAAAAAAAAAAAAA")
}

/// The characters a Messages body carries as prompt: the system prompt and every message's text.
fn anthropic_prompt_chars(body: &serde_json::Value) -> usize {
    let text = |v: &serde_json::Value| -> usize {
        match v {
            serde_json::Value::String(s) => s.chars().count(),
            serde_json::Value::Array(blocks) => blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(|t| t.as_str()))
                .map(|t| t.chars().count())
                .sum(),
            _ => 0,
        }
    };
    text(&body["system"])
        + body["messages"]
            .as_array()
            .map(|m| m.iter().map(|m| text(&m["content"])).sum())
            .unwrap_or(0)
}

/// Answer as `claude-haiku-5-5` does (platform.claude.com haiku-5-5 overview and migration
/// guide): a non-default `temperature`, `top_p` or `top_k`, an assistant prefill, or a manual
/// thinking budget is a 400 with the API's error shape; `thinking: {"type": "disabled"}` is
/// accepted only at effort high or below; otherwise it thinks adaptively (effort `medium` by
/// default) and the thinking counts toward `max_tokens`, so a small cap stops at `max_tokens`
/// with little or no text; a transcript holding `REFUSE-ME` gets `stop_reason: "refusal"`;
/// usage is counted with the 5.x tokenizer (1.3 of mf's estimate). `count_tokens` answers
/// the exact count of the same body.
pub fn haiku_5_5(mode: Haiku55) -> impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static {
    move |req, _| {
        let Ok(body) = serde_json::from_str::<serde_json::Value>(&req.body) else {
            return anthropic_error(
                "There was an issue with the format of your request: the body is not JSON",
            );
        };
        for p in ["temperature", "top_p", "top_k"] {
            if let Some(v) = body.get(p)
                && !(p == "temperature" && v.as_f64() == Some(1.0))
            {
                return anthropic_error(&format!(
                    "`{p}` is not supported for this model; only the default value is accepted. Remove `{p}` from the request."
                ));
            }
        }
        let messages = body["messages"].as_array().cloned().unwrap_or_default();
        if messages.last().is_some_and(|m| m["role"] == "assistant") {
            return anthropic_error(
                "Prefilling assistant messages is not supported for this model. The conversation must end with a user message.",
            );
        }
        let effort = body
            .pointer("/output_config/effort")
            .and_then(|e| e.as_str())
            .unwrap_or("medium");
        if !["low", "medium", "high", "xhigh", "max"].contains(&effort) {
            return anthropic_error(&format!("output_config.effort: unknown value `{effort}`"));
        }
        let thinking = body
            .pointer("/thinking/type")
            .and_then(|t| t.as_str())
            .unwrap_or("adaptive");
        match thinking {
            "enabled" => {
                return anthropic_error(
                    "thinking.type.enabled is not supported for this model. Use thinking.type.adaptive and output_config.effort to control thinking.",
                );
            }
            "disabled" if matches!(effort, "xhigh" | "max") => {
                return anthropic_error(&format!(
                    "thinking.type.disabled is only supported at effort high or below (effort is `{effort}`)."
                ));
            }
            "disabled" | "adaptive" => {}
            other => return anthropic_error(&format!("thinking.type: unknown value `{other}`")),
        }
        let input = provider_tokens(anthropic_prompt_chars(&body), 1.3);
        if req.path.ends_with("/count_tokens") {
            if body.get("max_tokens").is_some() {
                return anthropic_error("max_tokens: Extra inputs are not permitted");
            }
            return Reply::json(200, &serde_json::json!({"input_tokens": input}).to_string());
        }
        let Some(max_tokens) = body.get("max_tokens").and_then(|m| m.as_u64()) else {
            return anthropic_error("max_tokens: Field required");
        };
        let user = messages
            .iter()
            .map(|m| m["content"].to_string())
            .collect::<String>();
        let usage = |out: u64| serde_json::json!({"input_tokens": input, "output_tokens": out, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "service_tier": "standard"});
        if user.contains("REFUSE-ME") {
            return Reply::json(
                200,
                &serde_json::json!({
                    "id": "msg_refusal", "type": "message", "role": "assistant", "model": "claude-haiku-5-5",
                    "content": [], "stop_reason": "refusal", "stop_sequence": null,
                    "stop_details": {"type": "refusal", "category": "cyber"},
                    "usage": usage(2)
                })
                .to_string(),
            );
        }
        let think = match (thinking, effort) {
            ("disabled", _) => 0,
            (_, "low") => mode.thinking_tokens / 4,
            (_, "high") => mode.thinking_tokens * 2,
            (_, "xhigh" | "max") => mode.thinking_tokens * 4,
            _ => mode.thinking_tokens,
        };
        let text_tokens = provider_tokens(mode.text.chars().count(), 1.3);
        let mut content = Vec::new();
        if think > 0 {
            content.push(serde_json::json!({"type": "thinking", "thinking": "Let me look at the turns…", "signature": "sig"}));
        }
        let (text, stop, out) = if think + text_tokens <= max_tokens {
            (mode.text.clone(), "end_turn", think + text_tokens)
        } else {
            // Cut at max_tokens: what is left after thinking, in the tokenizer's characters.
            let left = max_tokens.saturating_sub(think);
            let chars = (left as f64 * 4.0 / 1.3) as usize;
            (
                mode.text.chars().take(chars).collect(),
                "max_tokens",
                max_tokens,
            )
        };
        if !text.is_empty() {
            content.push(serde_json::json!({"type": "text", "text": text}));
        }
        Reply::json(
            200,
            &serde_json::json!({
                "id": "msg_h55", "type": "message", "role": "assistant", "model": "claude-haiku-5-5",
                "content": content, "stop_reason": stop, "stop_sequence": null, "usage": usage(out)
            })
            .to_string(),
        )
        .header("request-id", "req_h55")
    }
}

fn openai_error(message: &str, param: &str, code: &str) -> Reply {
    Reply::json(
        400,
        &serde_json::json!({"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}})
            .to_string(),
    )
}

/// How the OpenAI "luna" mode behaves.
#[derive(Clone, Debug)]
pub struct Luna {
    pub model: String,
    pub text: String,
    /// Reasoning tokens spent at the default effort (`medium`); none at `none`, a fifth at `low`.
    pub reasoning_tokens: u64,
}

impl Luna {
    pub fn new(model: &str, text: &str) -> Self {
        Self {
            model: model.to_string(),
            text: text.to_string(),
            reasoning_tokens: 2_500,
        }
    }
}

/// Answer as `gpt-6-luna` / `gpt-5.6-luna` do on Chat Completions (developers.openai.com model
/// pages): `max_tokens` is a 400 (`max_completion_tokens` only), a temperature other than the
/// default 1 is a 400; reasoning is on by default (effort `medium`) and its tokens count
/// against `max_completion_tokens`, so a small cap finishes with `length` and no content; a
/// transcript holding `REFUSE-ME` gets the message's `refusal`, one holding `FILTER-ME`
/// `finish_reason: "content_filter"`; usage is counted at 1.0 of mf's estimate (o200k).
pub fn luna(mode: Luna) -> impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static {
    move |req, _| {
        let Ok(body) = serde_json::from_str::<serde_json::Value>(&req.body) else {
            return openai_error(
                "We could not parse the JSON body of your request.",
                "",
                "invalid_json",
            );
        };
        if body.get("max_tokens").is_some() {
            return openai_error(
                "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
                "max_tokens",
                "unsupported_parameter",
            );
        }
        if let Some(t) = body.get("temperature").and_then(|t| t.as_f64())
            && t != 1.0
        {
            return openai_error(
                &format!(
                    "Unsupported value: 'temperature' does not support {t} with this model. Only the default (1) value is supported."
                ),
                "temperature",
                "unsupported_value",
            );
        }
        let effort = body
            .get("reasoning_effort")
            .and_then(|e| e.as_str())
            .unwrap_or("medium");
        let reasoning = match effort {
            "none" => 0,
            "low" => mode.reasoning_tokens / 5,
            "medium" => mode.reasoning_tokens,
            "high" | "xhigh" | "max" => mode.reasoning_tokens * 3,
            other => {
                return openai_error(
                    &format!(
                        "Unsupported value: 'reasoning_effort' does not support '{other}' with this model."
                    ),
                    "reasoning_effort",
                    "unsupported_value",
                );
            }
        };
        let chars: usize = body["messages"]
            .as_array()
            .map(|m| {
                m.iter()
                    .filter_map(|m| m["content"].as_str())
                    .map(|c| c.chars().count())
                    .sum()
            })
            .unwrap_or(0);
        let prompt = provider_tokens(chars, 1.0);
        let cap = body
            .get("max_completion_tokens")
            .and_then(|m| m.as_u64())
            .unwrap_or(u64::MAX);
        let all = body["messages"].to_string();
        let text_tokens = provider_tokens(mode.text.chars().count(), 1.0);
        let (content, refusal, finish, out) = if all.contains("REFUSE-ME") {
            (
                None,
                Some("I'm sorry, but I can't help with that."),
                "stop",
                12,
            )
        } else if all.contains("FILTER-ME") {
            (
                Some(String::new()),
                None,
                "content_filter",
                reasoning.min(cap),
            )
        } else if reasoning + text_tokens <= cap {
            (
                Some(mode.text.clone()),
                None,
                "stop",
                reasoning + text_tokens,
            )
        } else {
            (Some(String::new()), None, "length", cap)
        };
        Reply::json(
            200,
            &serde_json::json!({
                "id": "chatcmpl-luna", "object": "chat.completion", "created": 1, "model": mode.model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content, "refusal": refusal}, "finish_reason": finish}],
                "usage": {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out,
                          "prompt_tokens_details": {"cached_tokens": 0},
                          "completion_tokens_details": {"reasoning_tokens": reasoning.min(out)}},
                "service_tier": "default"
            })
            .to_string(),
        )
        .header("x-request-id", "req_luna")
    }
}
