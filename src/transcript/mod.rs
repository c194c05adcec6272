//! `Transcript`: the on-disk JSONL file. The only module that knows the file format: it reads
//! lines into entries and records, keeps every original line's bytes, and appends mf's lines.
//!
//! Format: one chat message per line (`{"role", "content", "tool_calls", "tool_call_id", …}`),
//! any other fields kept untouched; mf's own record lines carry `"mfRecord"`; blank lines are
//! tolerated. Lines are never rewritten: mf only appends.

mod append;
mod error;
mod wire;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub use append::{LockAttempt, Locked, lock, try_lock, write_copy};
pub use error::TranscriptError;
pub use wire::{record_line, summary_line};

use crate::entry::{Coverage, Entry, Record, Role, SummaryClaim};
use crate::fingerprint::fnv1a64;
use crate::fold::ledger::LABEL_PREFIX;

/// Length and hash of the bytes a transcript was read from: how mf notices a file changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Snapshot {
    pub len: u64,
    pub hash: u64,
}

impl Snapshot {
    /// Whether `bytes` are exactly the bytes this snapshot was taken of.
    pub fn matches(&self, bytes: &[u8]) -> bool {
        bytes.len() as u64 == self.len && fnv1a64(bytes) == self.hash
    }

    /// Whether `bytes` begin with those bytes (the file has only grown since).
    pub fn is_prefix_of(&self, bytes: &[u8]) -> bool {
        usize::try_from(self.len).is_ok_and(|n| n <= bytes.len() && self.matches(&bytes[..n]))
    }
}

/// How the file ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// Empty, or ends with a newline.
    Clean,
    /// The last line is a complete JSON object without a newline: mf adds the newline before appending.
    Unterminated,
    /// The last line is incomplete (no newline and not valid JSON): never appended onto.
    Torn {
        line: usize,
        offset: u64,
        bytes: usize,
    },
}

/// A parsed transcript file.
#[derive(Debug, Clone)]
pub struct Transcript {
    pub path: PathBuf,
    pub entries: Vec<Entry>,
    pub records: Vec<Record>,
    /// The exact original text of each entry's line, by entry index.
    raw: Vec<String>,
    pub snapshot: Snapshot,
    pub tail: Tail,
    /// The models that wrote the conversation, from assistant lines' `model` field, in order of
    /// first appearance.
    pub agent_models: Vec<String>,
}

/// Read and parse a transcript file.
pub fn read(path: &Path) -> Result<Transcript, TranscriptError> {
    if path.is_dir() {
        return Err(TranscriptError::IsDirectory {
            path: path.to_path_buf(),
        });
    }
    let bytes = std::fs::read(path).map_err(|source| TranscriptError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    parse(path, &bytes)
}

/// Parse transcript bytes. A malformed complete line is an error; an incomplete last line is
/// reported in `tail` and left out.
pub fn parse(path: &Path, bytes: &[u8]) -> Result<Transcript, TranscriptError> {
    let mut t = Transcript {
        path: path.to_path_buf(),
        entries: Vec::new(),
        records: Vec::new(),
        raw: Vec::new(),
        snapshot: Snapshot {
            len: bytes.len() as u64,
            hash: fnv1a64(bytes),
        },
        tail: Tail::Clean,
        agent_models: Vec::new(),
    };
    let mut ids: HashSet<String> = HashSet::new();
    let mut offset = 0usize;
    let mut number = 0usize;
    while offset < bytes.len() {
        number += 1;
        let (line_bytes, terminated, next) = match bytes[offset..].iter().position(|&b| b == b'\n')
        {
            Some(p) => (&bytes[offset..offset + p], true, offset + p + 1),
            None => (&bytes[offset..], false, bytes.len()),
        };
        // The raw text keeps a CRLF file's `\r` so originals print back byte for byte.
        let raw_bytes = line_bytes;
        let line_bytes = line_bytes.strip_suffix(b"\r").unwrap_or(line_bytes);
        let start = offset;
        offset = next;
        if line_bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let parsed = std::str::from_utf8(line_bytes)
            .map_err(|_| TranscriptError::NotUtf8 {
                path: path.to_path_buf(),
                line: number,
            })
            .and_then(|text| {
                serde_json::from_str::<Value>(text)
                    .map(|v| (text, v))
                    .map_err(|e| TranscriptError::Malformed {
                        path: path.to_path_buf(),
                        line: number,
                        column: e.column(),
                        message: e
                            .to_string()
                            .split(" at line")
                            .next()
                            .unwrap_or_default()
                            .to_string(),
                    })
            });
        let (_, value) = match parsed {
            Ok(ok) => ok,
            Err(_) if !terminated => {
                t.tail = Tail::Torn {
                    line: number,
                    offset: start as u64,
                    bytes: line_bytes.len(),
                };
                break;
            }
            Err(e) => return Err(e),
        };
        if !terminated {
            t.tail = Tail::Unterminated;
        }
        let Value::Object(obj) = value else {
            return Err(TranscriptError::NotMessage {
                path: path.to_path_buf(),
                line: number,
                why: "line is JSON but not an object; each line must be one chat message".into(),
            });
        };
        if obj.contains_key("mfRecord") {
            t.records
                .push(wire::parse_record(number, Value::Object(obj)));
            continue;
        }
        if !obj.contains_key("role") {
            return Err(match detect_foreign(&obj) {
                Some(format) => TranscriptError::Unsupported {
                    path: path.to_path_buf(),
                    line: number,
                    format,
                },
                None => TranscriptError::NotMessage {
                    path: path.to_path_buf(),
                    line: number,
                    why: "not a chat message: no `role` field".into(),
                },
            });
        }
        let entry = message(number, &obj, &mut ids).map_err(|why| TranscriptError::NotMessage {
            path: path.to_path_buf(),
            line: number,
            why,
        })?;
        if entry.role == Role::Assistant
            && let Some(m) = obj.get("model").and_then(Value::as_str)
            && !m.is_empty()
            && !t.agent_models.iter().any(|x| x == m)
        {
            t.agent_models.push(m.to_string());
        }
        t.entries.push(entry);
        t.raw.push(String::from_utf8_lossy(raw_bytes).into_owned());
    }
    Ok(t)
}

impl Transcript {
    /// Refuse a torn last line: nothing may be appended onto it.
    pub fn check_tail(&self) -> Result<(), TranscriptError> {
        match self.tail {
            Tail::Torn {
                line,
                offset,
                bytes,
            } => Err(TranscriptError::Torn {
                path: self.path.clone(),
                line,
                offset,
                bytes,
            }),
            Tail::Clean | Tail::Unterminated => Ok(()),
        }
    }

    /// The exact original text of an entry's line.
    pub fn raw_line(&self, entry: usize) -> &str {
        &self.raw[entry]
    }

    /// An entry as a chat message ready to send to a model: `role`, `content` and the tool fields
    /// only; mf's summaries become plain system messages.
    pub fn chat_message(&self, entry: usize) -> Value {
        let e = &self.entries[entry];
        let obj: Map<String, Value> = serde_json::from_str(&self.raw[entry]).unwrap_or_default();
        let mut out = Map::new();
        out.insert(
            "role".into(),
            obj.get("role")
                .cloned()
                .unwrap_or_else(|| Value::from(e.role.as_str())),
        );
        out.insert(
            "content".into(),
            obj.get("content").cloned().unwrap_or(Value::Null),
        );
        for key in ["name", "tool_calls", "tool_call_id", "function_call"] {
            if let Some(v) = obj.get(key)
                && !v.is_null()
            {
                out.insert(key.into(), v.clone());
            }
        }
        Value::Object(out)
    }

    /// Every line mf counts as an id, for choosing a fresh summary id.
    pub fn has_id(&self, id: &str) -> bool {
        self.entries.iter().any(|e| e.id == id)
    }
}

fn detect_foreign(obj: &Map<String, Value>) -> Option<&'static str> {
    let ty = obj.get("type").and_then(Value::as_str);
    if ty == Some("session") && obj.contains_key("cwd") {
        return Some("a pi coding-agent session");
    }
    if obj.contains_key("payload")
        && matches!(
            ty,
            Some("session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted")
        )
    {
        return Some("a Codex CLI rollout");
    }
    if ty.is_some()
        && ["uuid", "parentUuid", "sessionId", "leafUuid", "messageId"]
            .iter()
            .any(|k| obj.contains_key(*k))
    {
        return Some("a Claude Code session");
    }
    if obj.get("messages").is_some_and(Value::is_array) {
        return Some("a fine-tuning dataset (one whole conversation per line)");
    }
    if obj.get("conversations").is_some_and(Value::is_array) {
        return Some("a ShareGPT dataset (one whole conversation per line)");
    }
    None
}

fn message(
    number: usize,
    obj: &Map<String, Value>,
    ids: &mut HashSet<String>,
) -> Result<Entry, String> {
    let role = match obj.get("role") {
        Some(Value::String(r)) => match r.as_str() {
            "system" | "developer" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" | "function" => Role::Tool,
            other => {
                return Err(format!(
                    "unknown role `{other}` (expected system, user, assistant or tool)"
                ));
            }
        },
        _ => return Err("`role` must be a string".into()),
    };

    // Stable id: the line's own, else its line number; a repeated id gets its line appended so
    // every entry stays addressable (earlier lines keep theirs, so ids never change on append).
    let own = match obj.get("id") {
        Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let mut id = own.unwrap_or_else(|| format!("line-{number}"));
    if ids.contains(&id) {
        id = format!("{id}@line-{number}");
    }
    ids.insert(id.clone());

    let mut text = content_text(obj.get("content"));
    let mut tool_calls = Vec::new();
    if let Some(Value::Array(calls)) = obj.get("tool_calls") {
        for call in calls {
            let call_id = call.get("id").and_then(Value::as_str).unwrap_or_default();
            let f = call.get("function");
            let name = f
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("?");
            let args = f
                .and_then(|f| f.get("arguments"))
                .map(arguments_text)
                .unwrap_or_default();
            push_line(&mut text, &format!("[calls {name}({args})]"));
            if !call_id.is_empty() {
                tool_calls.push(call_id.to_string());
            }
        }
    }
    if let Some(f @ Value::Object(_)) = obj.get("function_call") {
        let name = f.get("name").and_then(Value::as_str).unwrap_or("?");
        let args = f.get("arguments").map(arguments_text).unwrap_or_default();
        push_line(&mut text, &format!("[calls {name}({args})]"));
    }
    let tool_call_id = obj
        .get("tool_call_id")
        .and_then(Value::as_str)
        .map(str::to_string);
    let tool_name = obj.get("name").and_then(Value::as_str).map(str::to_string);

    let content_string = obj
        .get("content")
        .and_then(Value::as_str)
        .map(str::to_string);
    let summary = if let Some(cov) = obj.get("summarizes") {
        Some(SummaryClaim {
            content: content_string,
            coverage: serde_json::from_value::<wire::CoverageWire>(cov.clone())
                .map(Coverage::from)
                .map_err(|e| format!("its coverage record is not well formed ({e})")),
        })
    } else if content_string
        .as_deref()
        .is_some_and(|c| c.starts_with(LABEL_PREFIX))
    {
        Some(SummaryClaim {
            content: content_string,
            coverage: Err("it has mf's label but no coverage record".into()),
        })
    } else {
        None
    };

    Ok(Entry {
        id,
        line: number,
        role,
        text,
        tool_calls,
        tool_call_id,
        tool_name,
        summary,
    })
}

fn push_line(text: &mut String, line: &str) {
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(line);
}

fn arguments_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Model-visible text of a `content` value: a string, null, or an array of parts.
fn content_text(content: Option<&Value>) -> String {
    match content {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            let mut text = String::new();
            for part in parts {
                let piece = match part {
                    Value::String(s) => s.clone(),
                    Value::Object(p) => match p.get("type").and_then(Value::as_str) {
                        Some("text" | "input_text" | "output_text") | None => p
                            .get("text")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        Some("image_url" | "image" | "input_image") => "[image]".to_string(),
                        Some("input_audio" | "audio") => "[audio]".to_string(),
                        Some("file" | "input_file") => "[file]".to_string(),
                        Some(other) => format!("[{other}]"),
                    },
                    other => other.to_string(),
                };
                if !piece.is_empty() {
                    push_line(&mut text, &piece);
                }
            }
            text
        }
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Result<Transcript, TranscriptError> {
        parse(Path::new("t.jsonl"), s.as_bytes())
    }

    #[test]
    fn ids_from_field_or_line_and_unique() {
        let t = p("{\"role\":\"user\",\"content\":\"a\",\"id\":\"m1\"}\n\n{\"role\":\"assistant\",\"content\":\"b\"}\n{\"role\":\"user\",\"content\":\"c\",\"id\":\"m1\"}\n").unwrap();
        let ids: Vec<_> = t.entries.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, ["m1", "line-3", "m1@line-4"]);
        assert_eq!(t.entries[1].line, 3);
        assert_eq!(t.tail, Tail::Clean);
    }

    #[test]
    fn malformed_line_names_its_number() {
        let e = p("{\"role\":\"user\",\"content\":\"a\"}\n{\"role\": \"user\", oops}\n{\"role\":\"user\",\"content\":\"c\"}\n").unwrap_err();
        assert!(
            matches!(e, TranscriptError::Malformed { line: 2, .. }),
            "{e}"
        );
        assert!(e.to_string().starts_with("t.jsonl:2:"), "{e}");
    }

    #[test]
    fn torn_and_unterminated_tails() {
        let t = p("{\"role\":\"user\",\"content\":\"a\"}\n{\"role\":\"us").unwrap();
        assert_eq!(
            t.tail,
            Tail::Torn {
                line: 2,
                offset: 30,
                bytes: 11
            }
        );
        assert_eq!(t.entries.len(), 1);
        let t = p("{\"role\":\"user\",\"content\":\"a\"}").unwrap();
        assert_eq!(t.tail, Tail::Unterminated);
        assert_eq!(t.entries.len(), 1);
    }

    #[test]
    fn partial_utf8_at_the_end_is_a_torn_tail_and_crlf_lines_keep_their_bytes() {
        let mut b = b"{\"role\":\"user\",\"content\":\"a\"}\r\n".to_vec();
        b.extend_from_slice(b"{\"role\":\"user\",\"content\":\"\xE2\x82");
        let t = parse(Path::new("t.jsonl"), &b).unwrap();
        assert!(matches!(t.tail, Tail::Torn { line: 2, .. }), "{:?}", t.tail);
        assert_eq!(t.raw_line(0), "{\"role\":\"user\",\"content\":\"a\"}\r");
        assert_eq!(t.entries[0].text, "a");
    }

    #[test]
    fn snapshot_knows_its_bytes_and_their_growth() {
        let t = p("{\"role\":\"user\",\"content\":\"a\"}\n").unwrap();
        let same = b"{\"role\":\"user\",\"content\":\"a\"}\n".to_vec();
        assert!(t.snapshot.matches(&same) && t.snapshot.is_prefix_of(&same));
        let mut grown = same.clone();
        grown.extend_from_slice(b"{\"role\":\"user\",\"content\":\"b\"}\n");
        assert!(!t.snapshot.matches(&grown) && t.snapshot.is_prefix_of(&grown));
        let edited = b"{\"role\":\"user\",\"content\":\"A\"}\n{}\n".to_vec();
        assert!(!t.snapshot.is_prefix_of(&edited));
        assert!(!t.snapshot.is_prefix_of(b"{"));
    }

    #[test]
    fn content_parts_and_tool_calls_become_text() {
        let t = p(r#"{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get","arguments":"{\"q\":1}"}}]}
{"role":"tool","tool_call_id":"c1","name":"get","content":[{"type":"text","text":"72F"},{"type":"image_url","image_url":{"url":"data:x"}}]}
"#).unwrap();
        assert_eq!(t.entries[0].text, "[calls get({\"q\":1})]");
        assert_eq!(t.entries[0].tool_calls, ["c1"]);
        assert_eq!(t.entries[1].text, "72F\n[image]");
        assert_eq!(t.entries[1].tool_call_id.as_deref(), Some("c1"));
    }

    #[test]
    fn foreign_formats_are_named() {
        let e = p(r#"{"type":"user","uuid":"u","sessionId":"s","message":{}}"#).unwrap_err();
        assert!(e.to_string().contains("Claude Code"), "{e}");
        let e = p(r#"{"messages":[{"role":"user","content":"x"}]}"#).unwrap_err();
        assert!(e.to_string().contains("dataset"), "{e}");
        let e = p(r#"{"role":"wizard","content":"x"}"#).unwrap_err();
        assert!(e.to_string().contains("unknown role `wizard`"), "{e}");
    }
}
