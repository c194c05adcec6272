//! `Format`: the transcript formats mf reads, how a file's format is recognised from its first
//! conclusive lines, and the one interface every format's adapter implements: a [`Reader`] that
//! maps lines to entries (and is kept in a checkpoint between reads), and the [`Adapter`] it
//! leaves once the file is read — an entry's text, tool name and chat view, the lines mf writes,
//! and what the agent leaves beside a session it is running. The engine never sees a format.

pub mod chat;
pub mod claude;
pub mod codex;
pub mod common;
pub mod copilot;
pub mod gemini;
pub mod kind;
pub mod mf;
pub mod pi;
pub mod qwen;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::build::Build;
use super::live::AgentDirs;
use super::read::LineReader;
use super::wire::MF_PREFIX;
use super::{Transcript, TranscriptError, Write};

/// A format's reader: a line reader, kept in a checkpoint between reads, and what it leaves for
/// the transcript once the last line is read.
pub trait Reader: LineReader + Default + Serialize + DeserializeOwned {
    /// What the format keeps of the file for everything after reading.
    fn adapter(&self, b: &Build) -> Box<dyn Adapter>;
}

/// What a format knows of a file it has read, and does with it: the only way `Transcript`
/// reaches a format. `rows` are an entry's lines, parsed (one, or several for an entry made of
/// pieces).
pub trait Adapter: std::fmt::Debug + Send + Sync {
    /// The model-visible text of entry `entry`.
    fn text(&self, entry: usize, rows: &[Map<String, Value>]) -> String;

    /// [`Adapter::text`], with the byte ranges of it that are the model's reasoning (thinking
    /// blocks, reasoning items): what the model thought, not what it said. A format whose
    /// entries carry no reasoning keeps the default (none).
    fn marked(&self, entry: usize, rows: &[Map<String, Value>]) -> common::Marked {
        common::Marked::plain(self.text(entry, rows))
    }

    /// The tool name of a tool result, when the line says it.
    fn tool_name(&self, rows: &[Map<String, Value>]) -> Option<String>;

    /// Entry `entry` as the chat messages a model would be sent (one, or one per tool result
    /// of a row that answers several calls).
    fn chat_messages(&self, entry: usize, rows: &[Map<String, Value>]) -> Vec<Value>;

    /// The lines to append for `w`, in this format; an agent's session also gets what makes
    /// the agent show `w.shown`, and a view the agent cannot show is refused.
    fn lines(&self, t: &Transcript, w: &Write<'_>) -> Result<Vec<String>, TranscriptError>;

    /// What the agent leaves beside a session while it runs it (its process, its lock), found
    /// in `dirs`: why the session is live, or `None`.
    fn running(&self, _dirs: &AgentDirs) -> Option<String> {
        None
    }
}

/// Work to do with a format's reader type (see [`Format::with_reader`]).
pub trait ReaderJob {
    type Out;
    fn run<R: Reader>(self) -> Self::Out;
}

pub use kind::{Detected, Format};

impl Format {
    /// Run `job` with this format's reader.
    pub fn with_reader<J: ReaderJob>(self, job: J) -> J::Out {
        match self {
            Format::Chat => job.run::<chat::ChatReader>(),
            Format::Claude => job.run::<claude::ClaudeReader>(),
            Format::Codex => job.run::<codex::CodexReader>(),
            Format::Pi => job.run::<pi::PiReader>(),
            Format::Copilot => job.run::<copilot::CopilotReader>(),
            Format::Qwen => job.run::<qwen::QwenReader>(),
            Format::Gemini => job.run::<gemini::GeminiReader>(),
        }
    }
}

/// Lines looked at before giving up on finding a conclusive one.
const DETECT_LINES: usize = 50;

/// What one line says about the file's format.
enum Clue {
    /// The line is of this kind and of no other.
    Is(Detected),
    /// The line has the links of a Claude Code row (`uuid`, `parentUuid`, `sessionId`) and none
    /// of the keys that are only Claude Code's or only another uuid-linked agent's: a later
    /// conclusive line decides, and Claude Code when there is none.
    Maybe(Format),
}

/// What one line says about the file's format, if anything.
pub fn detect_line(v: &Value) -> Option<&'static str> {
    match detect_value(v)? {
        Detected::Format(f) => Some(f.describe()),
        Detected::Refused(what) => Some(what),
    }
}

fn detect_value(v: &Value) -> Option<Detected> {
    match clue(v)? {
        Clue::Is(d) => Some(d),
        Clue::Maybe(f) => Some(Detected::Format(f)),
    }
}

fn clue(v: &Value) -> Option<Clue> {
    let obj = v.as_object()?;
    if obj.contains_key("mf") {
        return None;
    }
    let ty = obj.get("type").and_then(Value::as_str);
    if ty == Some("session")
        && obj.get("id").is_some_and(Value::is_string)
        && obj.contains_key("cwd")
    {
        return Some(Clue::Is(Detected::Format(Format::Pi)));
    }
    if obj.contains_key("payload")
        && matches!(
            ty,
            Some("session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted")
        )
    {
        return Some(Clue::Is(Detected::Format(Format::Codex)));
    }
    if obj.contains_key("record_type")
        || (obj.contains_key("instructions")
            && obj.contains_key("id")
            && ty.is_none()
            && !obj.contains_key("role"))
    {
        return Some(Clue::Is(Detected::Refused(
            "a Codex rollout of the old, pre-envelope kind (before about September 2025), which mf does not read",
        )));
    }
    // GitHub Copilot CLI: one event a line, `{type: "session.start" | "user.message" | …, data,
    // id, parentId}`; no other agent mf reads has a dotted `type` beside a `data` object.
    if ty.is_some_and(|t| t.contains('.')) && obj.get("data").is_some_and(Value::is_object) {
        return Some(Clue::Is(Detected::Format(Format::Copilot)));
    }
    // Gemini CLI: a change log — a header `{sessionId, projectHash, startTime, …}` with no
    // `type`, `{"$set": …}` lines, and messages whose `type` is `user` or `gemini`.
    if obj.contains_key("$set")
        || ty == Some("gemini")
        || (ty.is_none() && obj.contains_key("projectHash") && obj.contains_key("sessionId"))
    {
        return Some(Clue::Is(Detected::Format(Format::Gemini)));
    }
    let linked = ["uuid", "parentUuid", "sessionId", "leafUuid", "messageId"]
        .iter()
        .any(|k| obj.contains_key(*k));
    if ty.is_some() && linked {
        let message = obj.get("message").and_then(Value::as_object);
        // Qwen Code links its records as Claude Code does, but its messages are Gemini
        // `Content` (`role` user or model, `parts`), its tool results a row of their own, and
        // its system rows carry a `systemPayload`.
        if ty == Some("tool_result")
            || message.is_some_and(|m| {
                m.get("parts").is_some_and(Value::is_array)
                    || m.get("role").and_then(Value::as_str) == Some("model")
            })
            || ["systemPayload", "toolCallResult", "usageMetadata"]
                .iter()
                .any(|k| obj.contains_key(*k))
        {
            return Some(Clue::Is(Detected::Format(Format::Qwen)));
        }
        // Only Claude Code's: a message with Anthropic `content`, its row types other than
        // user, assistant and system, and its own envelope keys.
        let claude = message.is_some_and(|m| m.contains_key("content"))
            || !matches!(ty, Some("user" | "assistant" | "system"))
            || [
                "userType",
                "leafUuid",
                "messageId",
                "logicalParentUuid",
                "toolUseResult",
                "requestId",
                "isCompactSummary",
                "compactMetadata",
            ]
            .iter()
            .any(|k| obj.contains_key(*k))
            || obj.get("content").is_some_and(Value::is_string);
        return Some(if claude {
            Clue::Is(Detected::Format(Format::Claude))
        } else {
            Clue::Maybe(Format::Claude)
        });
    }
    if obj.get("messages").is_some_and(Value::is_array) {
        return Some(Clue::Is(Detected::Refused(
            "a fine-tuning dataset: one whole conversation per line (`{\"messages\": […]}`), not one transcript; mf never folds across lines",
        )));
    }
    if obj.get("conversations").is_some_and(Value::is_array) {
        return Some(Clue::Is(Detected::Refused(
            "a ShareGPT dataset: one whole conversation per line (`{\"conversations\": […]}`), not one transcript; mf never folds across lines",
        )));
    }
    if obj.contains_key("role") && !obj.contains_key("type") {
        return Some(Clue::Is(Detected::Format(Format::Chat)));
    }
    None
}

/// What a file's first lines say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sniff {
    /// What the first conclusive line says (or a tentative Claude Code row, when no line is
    /// conclusive); `None` when no line says anything.
    pub detected: Option<Detected>,
    /// Whether the head holds any line other than blank lines and mf's own.
    pub lines: bool,
    /// Whether a line said it (a line of that kind and of no other), not only a row that could
    /// be Claude Code's.
    pub conclusive: bool,
}

/// Look at a file's first lines (blank, unparseable, non-object and mf's own lines are passed
/// over) for the first conclusive one.
pub fn sniff(head: &[u8]) -> Sniff {
    let mut seen = 0;
    let mut lines = false;
    let mut maybe = None;
    for line in head.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) || line.starts_with(MF_PREFIX) {
            continue;
        }
        lines = true;
        let Ok(v) = super::json::from_slice(line) else {
            continue;
        };
        if !v.is_object() {
            continue;
        }
        match clue(&v) {
            Some(Clue::Is(d)) => {
                return Sniff {
                    detected: Some(d),
                    lines,
                    conclusive: true,
                };
            }
            Some(Clue::Maybe(f)) => {
                maybe.get_or_insert(Detected::Format(f));
            }
            None => {}
        }
        seen += 1;
        if seen >= DETECT_LINES {
            break;
        }
    }
    Sniff {
        detected: maybe,
        lines,
        conclusive: false,
    }
}

/// Recognise a file's format from its first conclusive lines (see [`sniff`]). A file with no
/// conclusive line is read as chat, which then names the first line that is not a chat message.
pub fn detect(head: &[u8]) -> Detected {
    sniff(head)
        .detected
        .unwrap_or(Detected::Format(Format::Chat))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_conclusive_line_decides() {
        let d = |s: &str| detect(s.as_bytes());
        assert_eq!(
            d("{\"role\":\"user\",\"content\":\"x\"}\n"),
            Detected::Format(Format::Chat)
        );
        assert_eq!(
            d("\n[1]\nnot json\n{\"type\":\"session\",\"version\":3,\"id\":\"a\",\"cwd\":\"/\"}\n"),
            Detected::Format(Format::Pi)
        );
        assert_eq!(
            d("{\"timestamp\":\"t\",\"type\":\"session_meta\",\"payload\":{}}\n"),
            Detected::Format(Format::Codex)
        );
        assert_eq!(
            d("{\"type\":\"file-history-snapshot\",\"messageId\":\"m\",\"snapshot\":{}}\n"),
            Detected::Format(Format::Claude)
        );
        assert!(matches!(
            d("{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}\n"),
            Detected::Refused(w) if w.contains("fine-tuning")
        ));
        assert!(matches!(
            d("{\"conversations\":[]}\n"),
            Detected::Refused(w) if w.contains("ShareGPT")
        ));
        assert_eq!(d(""), Detected::Format(Format::Chat));
    }

    #[test]
    fn uuid_linked_agents_are_told_apart_by_their_own_keys() {
        let d = |s: &str| detect(s.as_bytes());
        let qwen = concat!(
            r#"{"uuid":"a","parentUuid":null,"sessionId":"s","timestamp":"t","type":"user","cwd":"/","version":"0.24.4","message":{"role":"user","parts":[{"text":"hi"}]}}"#,
            "\n"
        );
        assert_eq!(d(qwen), Detected::Format(Format::Qwen));
        let qwen_system = r#"{"uuid":"a","parentUuid":null,"sessionId":"s","type":"system","subtype":"chat_compression","systemPayload":{"info":{}}}"#;
        assert_eq!(d(qwen_system), Detected::Format(Format::Qwen));
        let gemini = r#"{"sessionId":"s","projectHash":"p","startTime":"t","lastUpdated":"t","kind":"main"}"#;
        assert_eq!(d(gemini), Detected::Format(Format::Gemini));
        let copilot = r#"{"type":"session.start","data":{"sessionId":"s"},"id":"e1","timestamp":"t","parentId":null}"#;
        assert_eq!(d(copilot), Detected::Format(Format::Copilot));
        // A row with only Claude Code's links waits for a conclusive one, and is Claude Code's
        // when none comes.
        let weak = r#"{"type":"user","uuid":"a","parentUuid":null,"sessionId":"s"}"#;
        assert_eq!(d(weak), Detected::Format(Format::Claude));
        assert_eq!(
            d(&format!("{weak}\n{qwen}")),
            Detected::Format(Format::Qwen)
        );
        let claude = r#"{"type":"user","uuid":"b","parentUuid":"a","sessionId":"s","message":{"role":"user","content":"hi"}}"#;
        assert_eq!(
            d(&format!("{weak}\n{claude}\n{qwen}")),
            Detected::Format(Format::Claude)
        );
    }

    #[test]
    fn sniff_says_whether_a_file_has_lines_of_its_own() {
        let s = sniff(b"\n  \n{\"mf\":{\"v\":1}}\n");
        assert_eq!((s.detected, s.lines), (None, false));
        let s = sniff(b"not json\n");
        assert_eq!((s.detected, s.lines), (None, true));
    }
}
