//! The Anthropic Messages API, as pure functions: the request body and headers, and the reply.
//! <https://docs.claude.com/en/api/messages> — `POST {base}/v1/messages`.

use serde_json::{Value, json};

use crate::entry::Usage;
use crate::fold::SummaryRequest;
use crate::model::Profile;
use crate::summarizer::{SummarizerError, SummaryReply, reason};

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
pub const DEFAULT_VERSION: &str = "2023-06-01";

/// `{base}/v1/messages`, whether or not `base` already ends in `/v1` (a query in `base` stays
/// after the path).
pub fn url(base: &str) -> String {
    crate::summarizer::endpoint(base, "messages")
}

/// `{base}/v1/messages/count_tokens`.
pub fn count_url(base: &str) -> String {
    crate::summarizer::endpoint(base, "messages/count_tokens")
}

/// The request body: the instruction in `system`, the delimited transcript as the one user
/// message (never an assistant prefill), thinking as the model's profile says, no sampling
/// parameters unless asked for (and settings refuses them for a model that rejects them).
pub fn body(
    model: &str,
    req: &SummaryRequest,
    max_tokens: u32,
    temperature: Option<f64>,
    profile: Profile,
) -> Value {
    let mut b = count_body(model, req, profile);
    b["max_tokens"] = json!(max_tokens);
    if let Some(t) = temperature {
        b["temperature"] = json!(t);
    }
    b
}

/// The body `count_tokens` takes: the create body without `max_tokens` (and sampling).
pub fn count_body(model: &str, req: &SummaryRequest, profile: Profile) -> Value {
    let mut b = json!({
        "model": model,
        "system": req.system,
        "messages": [{"role": "user", "content": req.user}],
    });
    match profile {
        Profile::AnthropicThinkingOff => b["thinking"] = json!({"type": "disabled"}),
        Profile::AnthropicAdaptive => {
            b["thinking"] = json!({"type": "adaptive"});
            b["output_config"] = json!({"effort": "low"});
        }
        _ => {}
    }
    b
}

/// Read a `count_tokens` reply: `{"input_tokens": N}`.
pub fn parse_count(bytes: &[u8]) -> Result<u64, SummarizerError> {
    serde_json::from_slice::<Value>(bytes)
        .ok()
        .and_then(|v| v.get("input_tokens").and_then(Value::as_u64))
        .ok_or_else(|| {
            SummarizerError::degrade("the count_tokens reply has no `input_tokens` number")
        })
}

/// The usage a reply reports: input (with cache reads and writes) and output.
fn usage_of(v: &Value) -> Option<Usage> {
    let u = v.get("usage")?;
    let input = u.get("input_tokens")?.as_u64()?
        + u.get("cache_creation_input_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0)
        + u.get("cache_read_input_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0);
    Some(Usage {
        input_tokens: input,
        output_tokens: u.get("output_tokens")?.as_u64()?,
        ..Usage::default()
    })
}

/// The text blocks of a reply, joined.
fn text_of(v: &Value) -> String {
    v.get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a reply spent its budget thinking: it has a thinking block (or redacted thinking)
/// and little or no text.
fn thought(v: &Value, text: &str) -> bool {
    let thinking = v
        .get("content")
        .and_then(Value::as_array)
        .is_some_and(|blocks| {
            blocks.iter().any(|b| {
                matches!(
                    b.get("type").and_then(Value::as_str),
                    Some("thinking" | "redacted_thinking")
                )
            })
        });
    thinking && text.trim().chars().count() < 200
}

/// Read a reply: the text blocks joined, and usage. Anything but a complete answer is a failure.
pub fn parse(bytes: &[u8]) -> Result<SummaryReply, SummarizerError> {
    let v: Value = serde_json::from_slice(bytes)
        .map_err(|_| SummarizerError::degrade("the Anthropic reply was not JSON"))?;
    let usage = usage_of(&v);
    let text = text_of(&v);
    let stop = v.get("stop_reason").and_then(Value::as_str);
    let fail = |e: SummarizerError| Err(e.paid(usage));
    match stop {
        Some("end_turn" | "stop_sequence") => {}
        Some("max_tokens") if thought(&v, &text) => {
            return fail(
                SummarizerError::degrade(format!(
                    "the reply was cut off at max_tokens after thinking ({} tokens out, {} characters of text); nothing from it was written",
                    usage.map_or(0, |u| u.output_tokens),
                    text.chars().count()
                ))
                .named(reason::CUT_OFF_BY_THINKING),
            );
        }
        Some("max_tokens" | "model_context_window_exceeded") => {
            return fail(
                SummarizerError::degrade(format!(
                    "the summary was cut off (stop_reason `{}`); nothing from it was written",
                    stop.unwrap_or_default()
                ))
                .named(reason::CUT_OFF),
            );
        }
        Some("refusal") => {
            return fail(
                SummarizerError::degrade(
                    "the model refused to summarize this span (stop_reason `refusal`)",
                )
                .named(reason::REFUSAL),
            );
        }
        Some(other) => {
            return fail(SummarizerError::degrade(format!(
                "the reply stopped for `{other}`, not with a finished summary"
            )));
        }
        None => {
            return fail(SummarizerError::degrade(
                "the Anthropic reply has no stop_reason; not a finished message",
            ));
        }
    }
    Ok(SummaryReply {
        text,
        usage,
        notes: Vec::new(),
    })
}

/// The Messages API as a [`Wire`](crate::summarizer::wire::Wire), with Message Batches.
pub struct Anthropic;

impl crate::summarizer::wire::Wire for Anthropic {
    fn url(&self, base: &str) -> String {
        url(base)
    }

    fn headers(
        &self,
        config: &crate::summarizer::RemoteConfig,
        key: Option<&str>,
    ) -> Vec<(&'static str, String, bool)> {
        let mut h = vec![("anthropic-version", config.anthropic_version.clone(), false)];
        if let Some(k) = key {
            h.push(("x-api-key", k.to_string(), true));
        }
        h
    }

    fn body(
        &self,
        config: &crate::summarizer::RemoteConfig,
        req: &SummaryRequest,
        max_tokens: u32,
    ) -> Value {
        body(
            &config.model.id,
            req,
            max_tokens,
            config.temperature,
            config.model.profile(),
        )
    }

    fn parse(&self, bytes: &[u8]) -> Result<SummaryReply, SummarizerError> {
        parse(bytes)
    }

    fn batch(&self) -> Option<&dyn crate::summarizer::wire::BatchWire> {
        Some(self)
    }
}

/// Message Batches: `POST /v1/messages/batches`, `GET …/{id}`, `POST …/{id}/cancel`, the results
/// at the batch's `results_url` (JSONL, any order, matched by `custom_id`).
impl crate::summarizer::wire::BatchWire for Anthropic {
    fn limits(&self) -> (usize, usize) {
        (100_000, 256 << 20)
    }

    fn request_line(&self, custom_id: &str, body: &Value) -> Value {
        json!({"custom_id": custom_id, "params": body})
    }

    fn submit(&self, base: &str, lines: &[Value]) -> crate::summarizer::wire::Submit {
        crate::summarizer::wire::Submit::Direct {
            url: crate::summarizer::endpoint(base, "messages/batches"),
            body: json!({ "requests": lines }),
        }
    }

    fn status_url(&self, base: &str, id: &str) -> String {
        crate::summarizer::endpoint(base, &format!("messages/batches/{id}"))
    }

    fn cancel_url(&self, base: &str, id: &str) -> String {
        crate::summarizer::endpoint(base, &format!("messages/batches/{id}/cancel"))
    }

    fn parse_status(&self, bytes: &[u8]) -> Result<crate::summarizer::wire::BatchStatus, String> {
        let v: Value = serde_json::from_slice(bytes)
            .map_err(|e| format!("the batch reply is not JSON ({e})"))?;
        let id = v
            .get("id")
            .and_then(Value::as_str)
            .ok_or("the batch reply has no `id`")?;
        let status = v
            .get("processing_status")
            .and_then(Value::as_str)
            .ok_or("the batch reply has no `processing_status`")?;
        let count = |k: &str| {
            v.pointer(&format!("/request_counts/{k}"))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        let failed = count("errored") + count("canceled") + count("expired");
        let done = count("succeeded") + failed;
        Ok(crate::summarizer::wire::BatchStatus {
            id: id.to_string(),
            status: status.to_string(),
            ended: status == "ended",
            done,
            total: done + count("processing"),
            failed,
            results: v
                .get("results_url")
                .and_then(Value::as_str)
                .map(str::to_string)
                .into_iter()
                .collect(),
            expires_at: v
                .get("expires_at")
                .and_then(Value::as_str)
                .map(str::to_string),
            failure: None,
        })
    }

    fn results_url(&self, _base: &str, result: &str) -> String {
        result.to_string()
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
        let result = v.get("result").ok_or("a result line has no `result`")?;
        let item = match result.get("type").and_then(Value::as_str) {
            Some("succeeded") => {
                let message = result
                    .get("message")
                    .ok_or("a succeeded result has no `message`")?;
                ItemResult::Answered(parse(
                    &serde_json::to_vec(message).expect("a value serializes"),
                ))
            }
            Some("errored") => {
                let e = result.get("error");
                let message = e
                    .and_then(|e| {
                        e.pointer("/error/message")
                            .or_else(|| e.get("message"))
                            .and_then(Value::as_str)
                    })
                    .unwrap_or("no message");
                let kind = e
                    .and_then(|e| e.pointer("/error/type").or_else(|| e.get("type")))
                    .and_then(Value::as_str)
                    .unwrap_or("error");
                ItemResult::Errored(format!("{kind}: {message}"))
            }
            Some("expired") => ItemResult::Expired,
            Some("canceled") => ItemResult::Canceled,
            other => return Err(format!("a result of unknown type {other:?}")),
        };
        Ok((id, item))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_with_or_without_v1() {
        assert_eq!(
            url("https://api.anthropic.com"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(
            url("http://127.0.0.1:9/v1/"),
            "http://127.0.0.1:9/v1/messages"
        );
    }

    #[test]
    fn a_query_stays_after_the_joined_path() {
        assert_eq!(
            url("http://127.0.0.1:9/v1?key=k"),
            "http://127.0.0.1:9/v1/messages?key=k"
        );
        assert_eq!(
            count_url("http://127.0.0.1:9/proxy/?a=1&b=2"),
            "http://127.0.0.1:9/proxy/v1/messages/count_tokens?a=1&b=2"
        );
        assert_eq!(
            url("http://127.0.0.1:9/v1#frag"),
            "http://127.0.0.1:9/v1/messages"
        );
    }

    #[test]
    fn only_text_blocks_count_and_unknown_fields_are_fine() {
        let r = parse(br#"{"id":"m","type":"message","content":[{"type":"thinking","thinking":"hmm","signature":"s"},{"type":"text","text":"A"},{"type":"foo"},{"type":"text","text":"B"}],"stop_reason":"end_turn","new_field":1,"usage":{"input_tokens":10,"output_tokens":3,"cache_read_input_tokens":5,"output_tokens_details":{}}}"#).unwrap();
        assert_eq!(r.text, "AB");
        assert_eq!(
            r.usage,
            Some(Usage {
                input_tokens: 15,
                output_tokens: 3,
                ..Usage::default()
            })
        );
    }

    #[test]
    fn truncation_refusal_and_garbage_are_failures() {
        for body in [
            r#"{"content":[{"type":"text","text":"half"}],"stop_reason":"max_tokens"}"#,
            r#"{"content":[],"stop_reason":"model_context_window_exceeded"}"#,
            r#"{"content":[{"type":"text","text":"no"}],"stop_reason":"refusal"}"#,
            r#"<html>oops</html>"#,
        ] {
            assert!(parse(body.as_bytes()).is_err(), "{body}");
        }
    }

    #[test]
    fn a_reply_spent_thinking_is_named_and_its_usage_kept() {
        let e = parse(br#"{"content":[{"type":"thinking","thinking":"...","signature":"s"},{"type":"text","text":"Pri"}],"stop_reason":"max_tokens","usage":{"input_tokens":900,"output_tokens":2018}}"#).unwrap_err();
        assert_eq!(e.reason, Some(reason::CUT_OFF_BY_THINKING));
        assert_eq!(e.usage.unwrap().output_tokens, 2018);
        let e = parse(br#"{"content":[{"type":"text","text":"half"}],"stop_reason":"max_tokens"}"#)
            .unwrap_err();
        assert_eq!(e.reason, Some(reason::CUT_OFF));
        let e = parse(br#"{"content":[],"stop_reason":"refusal","usage":{"input_tokens":5,"output_tokens":1}}"#).unwrap_err();
        assert_eq!(e.reason, Some(reason::REFUSAL));
        assert_eq!(e.usage.unwrap().input_tokens, 5);
    }

    #[test]
    fn the_profile_shapes_thinking() {
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
        let b = body("m", &req, 100, None, Profile::AnthropicThinkingOff);
        assert_eq!(b["thinking"]["type"], "disabled");
        assert!(b.get("output_config").is_none() && b.get("temperature").is_none());
        let b = body("m", &req, 100, None, Profile::AnthropicAdaptive);
        assert_eq!(
            (
                b["thinking"]["type"].as_str(),
                b["output_config"]["effort"].as_str()
            ),
            (Some("adaptive"), Some("low"))
        );
        let b = body("m", &req, 100, Some(0.0), Profile::AnthropicLegacy);
        assert!(b.get("thinking").is_none());
        assert_eq!(b["temperature"], 0.0);
        assert!(
            count_body("m", &req, Profile::AnthropicThinkingOff)
                .get("max_tokens")
                .is_none()
        );
    }
}
