//! OpenAI Chat Completions (and the compatible servers: Ollama, llama.cpp, vLLM, LM Studio), as
//! pure functions. <https://platform.openai.com/docs/api-reference/chat> — `POST {base}/v1/chat/completions`.

use serde_json::{Value, json};

use crate::entry::Usage;
use crate::fold::SummaryRequest;
use crate::summarizer::{SummarizerError, SummaryReply};

pub const DEFAULT_BASE_URL: &str = "https://api.openai.com";

/// `{base}/v1/chat/completions`, whether or not `base` already ends in `/v1`.
pub fn url(base: &str) -> String {
    let base = base.trim_end_matches('/');
    if base.ends_with("/v1") {
        format!("{base}/chat/completions")
    } else {
        format!("{base}/v1/chat/completions")
    }
}

/// The request body. OpenAI proper takes `max_completion_tokens`; compatible servers take
/// `max_tokens` (Ollama ignores the other).
pub fn body(
    model: &str,
    req: &SummaryRequest,
    max_tokens: u32,
    compatible: bool,
    temperature: Option<f64>,
    seed: Option<u64>,
) -> Value {
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
    let choice = v
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| SummarizerError::degrade("the reply has no choices"))?;
    match choice.get("finish_reason").and_then(Value::as_str) {
        None | Some("stop" | "eos" | "end_turn") => {}
        Some("length") => {
            return Err(SummarizerError::degrade(
                "the summary was cut off (finish_reason `length`); nothing from it was written",
            ));
        }
        Some("content_filter") => {
            return Err(SummarizerError::degrade(
                "the reply was withheld by a content filter",
            ));
        }
        Some(other) => {
            return Err(SummarizerError::degrade(format!(
                "the reply finished with `{other}`, not a summary"
            )));
        }
    }
    let message = choice.get("message");
    if let Some(refusal) = message
        .and_then(|m| m.get("refusal"))
        .and_then(Value::as_str)
    {
        return Err(SummarizerError::degrade(format!(
            "the model refused: {refusal}"
        )));
    }
    let text = match message.and_then(|m| m.get("content")) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    };
    let usage = v.get("usage").and_then(|u| {
        Some(Usage {
            input_tokens: u.get("prompt_tokens")?.as_u64()?,
            output_tokens: u.get("completion_tokens")?.as_u64()?,
        })
    });
    Ok(SummaryReply { text, usage })
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
                    output_tokens: 2
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
}
