//! The Anthropic Messages API, as pure functions: the request body and headers, and the reply.
//! <https://docs.claude.com/en/api/messages> — `POST {base}/v1/messages`.

use serde_json::{Value, json};

use crate::entry::Usage;
use crate::fold::SummaryRequest;
use crate::summarizer::{SummarizerError, SummaryReply};

pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
pub const DEFAULT_VERSION: &str = "2023-06-01";

/// `{base}/v1/messages`, whether or not `base` already ends in `/v1`.
pub fn url(base: &str) -> String {
    let base = base.trim_end_matches('/');
    if base.ends_with("/v1") {
        format!("{base}/messages")
    } else {
        format!("{base}/v1/messages")
    }
}

/// The request body: the instruction in `system`, the delimited transcript as the one user
/// message, no sampling parameters unless asked for.
pub fn body(model: &str, req: &SummaryRequest, max_tokens: u32, temperature: Option<f64>) -> Value {
    let mut b = json!({
        "model": model,
        "max_tokens": max_tokens,
        "system": req.system,
        "messages": [{"role": "user", "content": req.user}],
    });
    if let Some(t) = temperature {
        b["temperature"] = json!(t);
    }
    b
}

/// Read a reply: the text blocks joined, and usage. Anything but a complete answer is a failure.
pub fn parse(bytes: &[u8]) -> Result<SummaryReply, SummarizerError> {
    let v: Value = serde_json::from_slice(bytes)
        .map_err(|_| SummarizerError::degrade("the Anthropic reply was not JSON"))?;
    let stop = v.get("stop_reason").and_then(Value::as_str);
    match stop {
        Some("end_turn" | "stop_sequence") => {}
        Some("max_tokens" | "model_context_window_exceeded") => {
            return Err(SummarizerError::degrade(format!(
                "the summary was cut off (stop_reason `{}`); nothing from it was written",
                stop.unwrap_or_default()
            )));
        }
        Some("refusal") => {
            return Err(SummarizerError::degrade(
                "the model refused to summarize this span (stop_reason `refusal`)",
            ));
        }
        Some(other) => {
            return Err(SummarizerError::degrade(format!(
                "the reply stopped for `{other}`, not with a finished summary"
            )));
        }
        None => {
            return Err(SummarizerError::degrade(
                "the Anthropic reply has no stop_reason; not a finished message",
            ));
        }
    }
    let text: String = v
        .get("content")
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let usage = v.get("usage").and_then(|u| {
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
        })
    });
    Ok(SummaryReply { text, usage })
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
    fn only_text_blocks_count_and_unknown_fields_are_fine() {
        let r = parse(br#"{"id":"m","type":"message","content":[{"type":"thinking","thinking":"hmm","signature":"s"},{"type":"text","text":"A"},{"type":"foo"},{"type":"text","text":"B"}],"stop_reason":"end_turn","new_field":1,"usage":{"input_tokens":10,"output_tokens":3,"cache_read_input_tokens":5,"output_tokens_details":{}}}"#).unwrap();
        assert_eq!(r.text, "AB");
        assert_eq!(
            r.usage,
            Some(Usage {
                input_tokens: 15,
                output_tokens: 3
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
}
