//! OpenAI Chat Completions (and the compatible servers: Ollama, llama.cpp, vLLM, LM Studio), as
//! pure functions. <https://platform.openai.com/docs/api-reference/chat> — `POST {base}/v1/chat/completions`.

use serde_json::{Value, json};

use crate::entry::Usage;
use crate::fold::SummaryRequest;
use crate::model::Profile;
use crate::summarizer::{SummarizerError, SummaryReply, reason};

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com";

/// `{base}/v1/chat/completions`, whether or not `base` already ends in `/v1` (a query in
/// `base` stays after the path).
pub fn url(base: &str) -> String {
    crate::summarizer::endpoint(base, "chat/completions")
}

/// The request body. OpenAI proper takes `max_completion_tokens` (reasoning tokens count
/// against it); compatible servers take `max_tokens` (Ollama ignores the other). A reasoning
/// model is asked for the lowest effort it takes.
pub fn body(
    model: &str,
    req: &SummaryRequest,
    max_tokens: u32,
    profile: Profile,
    temperature: Option<f64>,
    seed: Option<u64>,
) -> Value {
    let compatible = profile == Profile::Compatible;
    let mut b = json!({
        "model": model,
        "messages": [
            {"role": "system", "content": req.system},
            {"role": "user", "content": req.user},
        ],
    });
    let key = if compatible {
        "max_tokens"
    } else {
        "max_completion_tokens"
    };
    b[key] = json!(max_tokens);
    if let Profile::OpenAiReasoning { effort } = profile {
        b["reasoning_effort"] = json!(effort);
    }
    if let Some(t) = temperature {
        b["temperature"] = json!(t);
    }
    if let Some(s) = seed {
        b["seed"] = json!(s);
    }
    b
}

/// Read a reply: the first choice's content, and usage when the server reports it.
pub fn parse(bytes: &[u8]) -> Result<SummaryReply, SummarizerError> {
    let v: Value = serde_json::from_slice(bytes)
        .map_err(|_| SummarizerError::degrade("the reply was not JSON"))?;
    let usage = v.get("usage").and_then(|u| {
        Some(Usage {
            input_tokens: u.get("prompt_tokens")?.as_u64()?,
            output_tokens: u.get("completion_tokens")?.as_u64()?,
            ..Usage::default()
        })
    });
    let reasoning = v
        .pointer("/usage/completion_tokens_details/reasoning_tokens")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let fail = |e: SummarizerError| Err(e.paid(usage));
    let Some(choice) = v
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
    else {
        return fail(SummarizerError::degrade("the reply has no choices"));
    };
    let message = choice.get("message");
    let text = match message.and_then(|m| m.get("content")) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    };
    // A refusal is named whatever the finish reason says.
    if let Some(refusal) = message
        .and_then(|m| m.get("refusal"))
        .and_then(Value::as_str)
        .filter(|r| !r.trim().is_empty())
    {
        return fail(
            SummarizerError::degrade(format!(
                "the model refused to summarize this span (message `refusal`: {})",
                short(refusal)
            ))
            .named(reason::REFUSAL),
        );
    }
    match choice.get("finish_reason").and_then(Value::as_str) {
        None | Some("stop" | "eos" | "end_turn") => {}
        Some("length") if reasoning > 0 && text.trim().chars().count() < 200 => {
            return fail(
                SummarizerError::degrade(format!(
                    "the reply was cut off (finish_reason `length`) after {reasoning} reasoning tokens, with {} characters of text; nothing from it was written",
                    text.chars().count()
                ))
                .named(reason::CUT_OFF_BY_THINKING),
            );
        }
        Some("length") => {
            return fail(
                SummarizerError::degrade(
                    "the summary was cut off (finish_reason `length`); nothing from it was written",
                )
                .named(reason::CUT_OFF),
            );
        }
        Some("content_filter") => {
            return fail(
                SummarizerError::degrade(
                    "the reply was withheld by the provider's content filter (finish_reason `content_filter`)",
                )
                .named(reason::CONTENT_FILTER),
            );
        }
        Some(other) => {
            return fail(SummarizerError::degrade(format!(
                "the reply finished with `{other}`, not a summary"
            )));
        }
    }
    Ok(SummaryReply {
        text,
        usage,
        notes: Vec::new(),
    })
}

/// A refusal's words, bounded for a message.
fn short(s: &str) -> String {
    let mut t: String = s.chars().take(200).collect();
    if t.len() < s.len() {
        t.push('…');
    }
    t
}

/// Chat Completions as a [`Wire`](crate::summarizer::wire::Wire): OpenAI itself (with the Batch
/// API and the flex tier), or a compatible server (`compatible`: neither).
pub struct OpenAi {
    pub compatible: bool,
}

/// The path a batch line names (the endpoint its requests go to).
const BATCH_ENDPOINT: &str = "/v1/chat/completions";

impl crate::summarizer::wire::Wire for OpenAi {
    fn url(&self, base: &str) -> String {
        url(base)
    }

    fn headers(
        &self,
        _config: &crate::summarizer::RemoteConfig,
        key: Option<&str>,
    ) -> Vec<(&'static str, String, bool)> {
        key.map(|k| ("authorization", format!("Bearer {k}"), true))
            .into_iter()
            .collect()
    }

    fn body(
        &self,
        config: &crate::summarizer::RemoteConfig,
        req: &SummaryRequest,
        max_tokens: u32,
    ) -> Value {
        let mut b = body(
            &config.model.id,
            req,
            max_tokens,
            config.model.profile(),
            config.temperature,
            config.seed,
        );
        if !self.compatible && config.tier == crate::entry::Tier::Flex {
            b["service_tier"] = json!("flex");
        }
        b
    }

    fn parse(&self, bytes: &[u8]) -> Result<SummaryReply, SummarizerError> {
        parse(bytes)
    }

    fn batch(&self) -> Option<&dyn crate::summarizer::wire::BatchWire> {
        (!self.compatible).then_some(self as &dyn crate::summarizer::wire::BatchWire)
    }
}

/// The Batch API: a JSONL file uploaded (`POST /v1/files`, `purpose=batch`), a batch made of it
/// (`POST /v1/batches`), polled (`GET /v1/batches/{id}`), its output and error files read
/// (`GET /v1/files/{id}/content`).
impl crate::summarizer::wire::BatchWire for OpenAi {
    fn limits(&self) -> (usize, usize) {
        (50_000, 200 << 20)
    }

    fn request_line(&self, custom_id: &str, body: &Value) -> Value {
        json!({"custom_id": custom_id, "method": "POST", "url": BATCH_ENDPOINT, "body": body})
    }

    fn submit(&self, base: &str, lines: &[Value]) -> crate::summarizer::wire::Submit {
        let mut jsonl = Vec::new();
        for l in lines {
            jsonl.extend(serde_json::to_vec(l).expect("a value serializes"));
            jsonl.push(b'\n');
        }
        crate::summarizer::wire::Submit::Upload {
            files_url: crate::summarizer::endpoint(base, "files"),
            purpose: "batch",
            jsonl,
            create_url: crate::summarizer::endpoint(base, "batches"),
            create: |file_id| json!({"input_file_id": file_id, "endpoint": BATCH_ENDPOINT, "completion_window": "24h"}),
        }
    }

    fn status_url(&self, base: &str, id: &str) -> String {
        crate::summarizer::endpoint(base, &format!("batches/{id}"))
    }

    fn cancel_url(&self, base: &str, id: &str) -> String {
        crate::summarizer::endpoint(base, &format!("batches/{id}/cancel"))
    }

    fn parse_status(&self, bytes: &[u8]) -> Result<crate::summarizer::wire::BatchStatus, String> {
        let v: Value = serde_json::from_slice(bytes)
            .map_err(|e| format!("the batch reply is not JSON ({e})"))?;
        let id = v
            .get("id")
            .and_then(Value::as_str)
            .ok_or("the batch reply has no `id`")?;
        let status = v
            .get("status")
            .and_then(Value::as_str)
            .ok_or("the batch reply has no `status`")?;
        let count = |k: &str| {
            v.pointer(&format!("/request_counts/{k}"))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        let file = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let failure = v
            .pointer("/errors/data")
            .and_then(Value::as_array)
            .map(|errs| {
                errs.iter()
                    .filter_map(|e| e.get("message").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("; ")
            })
            .filter(|m| !m.is_empty());
        Ok(crate::summarizer::wire::BatchStatus {
            id: id.to_string(),
            status: status.to_string(),
            ended: matches!(status, "completed" | "failed" | "expired" | "cancelled"),
            done: count("completed") + count("failed"),
            total: count("total"),
            failed: count("failed"),
            results: [file("output_file_id"), file("error_file_id")]
                .into_iter()
                .flatten()
                .collect(),
            expires_at: v.get("expires_at").map(|e| match e {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
            failure,
        })
    }

    fn results_url(&self, base: &str, result: &str) -> String {
        crate::summarizer::endpoint(base, &format!("files/{result}/content"))
    }

    fn parse_result(
        &self,
        line: &[u8],
    ) -> Result<(String, crate::summarizer::wire::ItemResult), String> {
        use crate::summarizer::wire::ItemResult;
        let v: Value =
            serde_json::from_slice(line).map_err(|e| format!("a result line is not JSON ({e})"))?;
        let id = v
            .get("custom_id")
            .and_then(Value::as_str)
            .ok_or("a result line has no `custom_id`")?
            .to_string();
        if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
            let code = e.get("code").and_then(Value::as_str).unwrap_or("error");
            let message = e
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("no message");
            return Ok((
                id,
                match code {
                    "batch_expired" => ItemResult::Expired,
                    "batch_cancelled" => ItemResult::Canceled,
                    _ => ItemResult::Errored(format!("{code}: {message}")),
                },
            ));
        }
        let response = v.get("response").ok_or("a result line has no `response`")?;
        let status = response
            .get("status_code")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let body = response.get("body").cloned().unwrap_or(Value::Null);
        if status != 200 {
            let message = body
                .pointer("/error/message")
                .and_then(Value::as_str)
                .unwrap_or("no message");
            return Ok((id, ItemResult::Errored(format!("HTTP {status}: {message}"))));
        }
        Ok((
            id,
            ItemResult::Answered(parse(
                &serde_json::to_vec(&body).expect("a value serializes"),
            )),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_handles_v1_suffix() {
        assert_eq!(
            url("https://api.openai.com"),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(
            url("http://127.0.0.1:8081/v1"),
            "http://127.0.0.1:8081/v1/chat/completions"
        );
        assert_eq!(
            url("https://example.com/openai/v1/?api-version=2024-10-21"),
            "https://example.com/openai/v1/chat/completions?api-version=2024-10-21"
        );
    }

    #[test]
    fn parses_content_and_optional_usage() {
        let r = parse(br#"{"choices":[{"index":0,"message":{"role":"assistant","content":"sum","refusal":null},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}"#).unwrap();
        assert_eq!(
            (r.text.as_str(), r.usage),
            (
                "sum",
                Some(Usage {
                    input_tokens: 9,
                    output_tokens: 2,
                    ..Usage::default()
                })
            )
        );
        let r =
            parse(br#"{"choices":[{"message":{"content":"no usage"},"finish_reason":"stop"}]}"#)
                .unwrap();
        assert_eq!(r.usage, None);
    }

    #[test]
    fn length_and_empty_choices_fail() {
        assert!(
            parse(br#"{"choices":[{"message":{"content":""},"finish_reason":"length"}]}"#).is_err()
        );
        assert!(parse(br#"{"choices":[]}"#).is_err());
        assert!(parse(b"not json").is_err());
    }

    #[test]
    fn refusal_content_filter_and_reasoning_cut_off_are_named() {
        let e = parse(br#"{"choices":[{"message":{"content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}],"usage":{"prompt_tokens":50,"completion_tokens":7}}"#).unwrap_err();
        assert_eq!(e.reason, Some(reason::REFUSAL));
        assert!(e.message.contains("can't help"), "{}", e.message);
        assert_eq!(e.usage.unwrap().input_tokens, 50);
        let e =
            parse(br#"{"choices":[{"message":{"content":""},"finish_reason":"content_filter"}]}"#)
                .unwrap_err();
        assert_eq!(e.reason, Some(reason::CONTENT_FILTER));
        let e = parse(br#"{"choices":[{"message":{"content":""},"finish_reason":"length"}],"usage":{"prompt_tokens":9,"completion_tokens":900,"completion_tokens_details":{"reasoning_tokens":900}}}"#).unwrap_err();
        assert_eq!(e.reason, Some(reason::CUT_OFF_BY_THINKING));
    }

    #[test]
    fn a_reasoning_model_gets_its_lowest_effort() {
        let req = crate::fold::SummaryRequest {
            system: "s".into(),
            user: "u".into(),
            pieces: vec![],
            span_chars: 1,
            target_chars: 1,
            max_output_tokens: 10,
            nonce: "n".into(),
            cite: None,
        };
        let b = body(
            "gpt-6-luna",
            &req,
            10,
            Profile::OpenAiReasoning { effort: "none" },
            None,
            None,
        );
        assert_eq!(b["reasoning_effort"], "none");
        assert_eq!(b["max_completion_tokens"], 10);
        assert!(b.get("max_tokens").is_none());
        let b = body("x", &req, 10, Profile::Compatible, Some(0.0), Some(1));
        assert!(b.get("reasoning_effort").is_none() && b.get("max_tokens").is_some());
    }
}
