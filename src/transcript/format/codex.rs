//! The Codex CLI rollout format: every line is `{"timestamp", "type", "payload"}`. What the model
//! saw is the `response_item` lines (messages, reasoning, tool calls and their outputs paired by
//! `call_id`); `event_msg/user_message` (0.171: `event_msg/item_completed` with a `UserMessage`
//! item) marks a real prompt, so the `response_item` user message just before it starts a turn;
//! `turn_context`, `world_state`, `token_usage_record`, `token_count` and the other events are
//! not content. Codex's own `compacted` line is a floor: from there on the model sees its
//! `replacement_history` and what follows.
//!
//! What mf writes (verified with the real `codex` resuming against a loopback server): its
//! summaries and records as lines of its own types (Codex skips unknown types), then a
//! `compacted` line whose `replacement_history` is the preamble, mf's summaries as one user
//! message, and the kept items verbatim, and its `event_msg/context_compacted`. In a rollout whose
//! lines are numbered (0.171's `ordinal`), every line mf appends takes the next number.

use std::fs::File;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::common::{self, iso_timestamp, mf_first};
use super::mf::{self, ClaimFields};
use super::{Adapter, Reader};
use crate::digest::id_hash;
use crate::entry::{ClaimKind, NONE, Role, Shown, flag};
use crate::json_span;
use crate::transcript::build::{At, Build, NewEntry};
use crate::transcript::error::TranscriptError;
use crate::transcript::live::AgentDirs;
use crate::transcript::read::{LineError, LineReader};
use crate::transcript::wire;
use crate::transcript::{Transcript, Write};

/// What mf keeps of a rollout for writing to it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct State {
    /// The thread id (`session_meta.payload.id`), for the live-session check.
    thread: Option<String>,
    /// The last native compaction has no `replacement_history`: Codex rebuilds that history
    /// itself, and mf cannot write a view that reproduces it.
    local_compaction: bool,
    /// The highest `ordinal` of the rollout's lines (Codex 0.171 numbers every line it writes
    /// and refuses to resume a rollout whose last line has none); `None` on rollouts without.
    last_ordinal: Option<u64>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct CodexReader {
    state: State,
    /// The last `response_item` user message not yet claimed by a `user_message` event.
    pending_user: Option<u32>,
    /// A prompt event came before its message.
    pending_turn: bool,
    /// The text of the prompt event that last claimed a message, until the next user message:
    /// a second event for the same prompt (`user_message` and 0.171's `item_completed`) is the
    /// same turn.
    claimed: Option<String>,
    /// Entry of the last native compaction.
    native: Option<u32>,
}

impl CodexReader {
    /// A `response_item`: what the model saw (a message, reasoning, a tool call or its output);
    /// the user message a prompt event claims starts a turn.
    fn response_item(&mut self, b: &mut Build, at: &At<'_>, p: &Map<String, Value>, line_id: u64) {
        let kind = p.get("type").and_then(Value::as_str).unwrap_or_default();
        let role = match kind {
            "message" => match p.get("role").and_then(Value::as_str) {
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                _ => Role::System,
            },
            "function_call_output" | "custom_tool_call_output" | "local_shell_call_output" => {
                Role::Tool
            }
            _ => Role::Assistant,
        };
        let calls: Vec<u64> = match kind {
            "function_call" | "custom_tool_call" | "local_shell_call" => {
                call_id(p).into_iter().collect()
            }
            _ => Vec::new(),
        };
        let answers: Vec<u64> = if role == Role::Tool {
            call_id(p).into_iter().collect()
        } else {
            Vec::new()
        };
        let user = role == Role::User;
        let i = b.entry(
            at,
            NewEntry {
                role,
                flags: if user && self.pending_turn {
                    flag::TURN_START
                } else {
                    0
                },
                chars: item_text(p).chars().count() as u32,
                id: line_id,
                calls: &calls,
                answers: &answers,
            },
        );
        if !(user && self.pending_turn) {
            // Past the prompt the last event claimed: the next event is a new prompt.
            self.claimed = None;
        }
        if user {
            if self.pending_turn {
                self.pending_turn = false;
                self.pending_user = None;
            } else {
                self.pending_user = Some(i);
            }
        }
    }
}

impl Reader for CodexReader {
    fn adapter(&self, _: &Build) -> Box<dyn Adapter> {
        Box::new(self.state.clone())
    }
}

impl Adapter for State {
    fn text(&self, _: usize, rows: &[Map<String, Value>]) -> String {
        text(&rows[0])
    }

    /// A `reasoning` item is the model's reasoning, all of it.
    fn marked(&self, _: usize, rows: &[Map<String, Value>]) -> common::Marked {
        let obj = &rows[0];
        let mut m = common::Marked::plain(text(obj));
        let reasoning = !obj.contains_key("mf")
            && obj.get("type").and_then(Value::as_str) == Some("response_item")
            && obj
                .get("payload")
                .and_then(|p| p.get("type"))
                .and_then(Value::as_str)
                == Some("reasoning");
        if reasoning && !m.text.is_empty() {
            m.reasoning.push(0..m.text.len());
        }
        m
    }

    /// Codex's tool outputs do not carry the tool's name.
    fn tool_name(&self, _rows: &[Map<String, Value>]) -> Option<String> {
        None
    }

    fn chat_messages(&self, _: usize, rows: &[Map<String, Value>]) -> Vec<Value> {
        vec![chat_message(&rows[0])]
    }

    fn lines(&self, t: &Transcript, w: &Write<'_>) -> Result<Vec<String>, TranscriptError> {
        lines(t, self, w).map_err(|why| t.unexpressible(why))
    }

    /// Codex's lock on `thread-writer-locks/<thread>.lock`, held while it runs the thread.
    fn running(&self, dirs: &AgentDirs) -> Option<String> {
        let thread = self.thread.as_deref()?;
        let lock = dirs
            .codex_home
            .as_ref()?
            .join("thread-writer-locks")
            .join(format!("{thread}.lock"));
        held(&lock).then(|| format!("Codex holds the lock {} for this thread", lock.display()))
    }
}

/// Whether another process holds a lock on `path` (an exclusive `flock`, as Codex takes).
/// Probed with a shared lock, released at once; a file that is not there is not held.
fn held(path: &Path) -> bool {
    let Ok(f) = File::open(path) else {
        return false;
    };
    match f.try_lock_shared() {
        Ok(()) => {
            let _ = f.unlock();
            false
        }
        Err(std::fs::TryLockError::WouldBlock) => true,
        // A filesystem without locks: the file's presence is all there is to go on.
        Err(std::fs::TryLockError::Error(_)) => true,
    }
}

fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::Array(items)) => {
            let mut t = String::new();
            for c in items {
                let piece = match c.get("type").and_then(Value::as_str) {
                    Some(
                        "input_text" | "output_text" | "text" | "reasoning_text" | "summary_text",
                    ) => c
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    Some("input_image") => c.get("image_url").and_then(Value::as_str).map_or_else(
                        || common::image_placeholder(None, None),
                        common::image_url_placeholder,
                    ),
                    Some(other) => format!("[{other}]"),
                    None => String::new(),
                };
                common::push_line(&mut t, &piece);
            }
            t
        }
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    }
}

/// The model-visible text of a response item (a `payload`).
pub fn item_text(p: &Map<String, Value>) -> String {
    let s = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or_default();
    match p.get("type").and_then(Value::as_str).unwrap_or_default() {
        "message" => content_text(p.get("content")),
        "reasoning" => {
            let mut t = content_text(p.get("summary"));
            common::push_line(&mut t, &content_text(p.get("content")));
            t
        }
        "function_call" => format!("[calls {}({})]", s("name"), s("arguments")),
        "custom_tool_call" => format!("[calls {}({})]", s("name"), s("input")),
        "local_shell_call" => format!(
            "[calls shell({})]",
            p.get("action").map(Value::to_string).unwrap_or_default()
        ),
        "function_call_output" | "custom_tool_call_output" | "local_shell_call_output" => {
            match p.get("output") {
                Some(Value::String(o)) => o.clone(),
                Some(v @ Value::Array(_)) => content_text(Some(v)),
                Some(v) => v.to_string(),
                None => String::new(),
            }
        }
        "web_search_call" => format!(
            "[web search: {}]",
            p.get("action")
                .and_then(|a| a.get("query"))
                .and_then(Value::as_str)
                .unwrap_or_default()
        ),
        "compaction" | "compaction_summary" | "context_compaction" => String::new(),
        other => format!("[{other}]"),
    }
}

/// The text of an event that records a real prompt: `event_msg/user_message` (up to 0.135), or
/// 0.171's `event_msg/item_completed` whose item is a `UserMessage`. Every other event (the
/// other `item_completed` items, `token_count`, `task_started`/`task_complete`,
/// `thread_settings_applied`, …) repeats or describes what the `response_item` lines hold.
fn prompt_event(p: &Map<String, Value>) -> Option<String> {
    match p.get("type").and_then(Value::as_str)? {
        "user_message" => Some(
            p.get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        ),
        "item_completed" => {
            let item = p.get("item").and_then(Value::as_object)?;
            (item.get("type").and_then(Value::as_str) == Some("UserMessage"))
                .then(|| content_text(item.get("content")))
        }
        _ => None,
    }
}

fn call_id(p: &Map<String, Value>) -> Option<u64> {
    p.get("call_id").and_then(Value::as_str).map(id_hash)
}

/// The text of a line: a response item, a native compaction (the messages of its history), or
/// mf's own summary.
fn text(obj: &Map<String, Value>) -> String {
    let Some(p) = obj.get("payload").and_then(Value::as_object) else {
        return String::new();
    };
    if obj.contains_key("mf") {
        return p
            .get("content")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
    }
    match obj.get("type").and_then(Value::as_str) {
        Some("response_item") => item_text(p),
        Some("compacted") => {
            let mut t = String::new();
            if let Some(Value::Array(items)) = p.get("replacement_history") {
                for it in items.iter().filter_map(Value::as_object) {
                    common::push_line(&mut t, &item_text(it));
                }
            }
            common::push_line(
                &mut t,
                p.get("message").and_then(Value::as_str).unwrap_or(""),
            );
            t
        }
        _ => String::new(),
    }
}

/// A line as the chat message a model would be sent.
fn chat_message(obj: &Map<String, Value>) -> Value {
    let t = text(obj);
    let Some(p) = obj.get("payload").and_then(Value::as_object) else {
        return json!({"role": "system", "content": t});
    };
    if obj.contains_key("mf") && p.contains_key("call_id") {
        return json!({"role": "tool", "tool_call_id": p.get("call_id"), "content": t});
    }
    match p.get("type").and_then(Value::as_str).unwrap_or_default() {
        "message" => {
            let role = match p.get("role").and_then(Value::as_str) {
                Some("assistant") => "assistant",
                Some("user") => "user",
                _ => "system",
            };
            json!({"role": role, "content": t})
        }
        "function_call" | "custom_tool_call" | "local_shell_call" => json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{"id": p.get("call_id"), "type": "function", "function": {
                "name": p.get("name").cloned().unwrap_or(Value::from("shell")),
                "arguments": p.get("arguments").or(p.get("input")).map(common::arguments_text).unwrap_or_default()}}]
        }),
        "function_call_output" | "custom_tool_call_output" | "local_shell_call_output" => {
            json!({"role": "tool", "tool_call_id": p.get("call_id"), "content": t})
        }
        _ if obj.get("type").and_then(Value::as_str) == Some("compacted") => {
            json!({"role": "user", "content": t})
        }
        _ => json!({"role": "assistant", "content": t}),
    }
}

impl LineReader for CodexReader {
    type Parsed<'a> = Value;
    const STRICT: bool = false;

    /// A Codex rollout line has a `type` and a `payload` (items nested in one have no `payload`).
    fn may_be_line(&self, v: &Value) -> bool {
        super::common::is_typed_line(v, &["payload"])
    }

    fn parse(&self, line: &[u8]) -> Result<Value, LineError> {
        super::common::parse_object(line)
    }

    fn push(&mut self, b: &mut Build, at: &At<'_>, v: Value) -> Result<(), TranscriptError> {
        let obj = v.as_object().expect("parsed as an object");
        let ty = obj.get("type").and_then(Value::as_str).unwrap_or_default();
        let empty = Map::new();
        let p = obj
            .get("payload")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let line_id = id_hash(&format!("line-{}", at.line));
        if let Some(n) = obj.get("ordinal").and_then(Value::as_u64) {
            self.state.last_ordinal = Some(self.state.last_ordinal.map_or(n, |m| m.max(n)));
        }
        if let Some(mf) = obj.get("mf") {
            mf::read(b, at, mf, |kind| {
                let shape_ok = if ty == "mf_summary" {
                    Ok(())
                } else {
                    Err("in a Codex rollout mf writes its summaries as `mf_summary` lines".into())
                };
                let answers = call_id(p).into_iter().collect();
                ClaimFields::in_object(Some(p), Role::Tool, kind, answers, shape_ok)
            });
            return Ok(());
        }
        match ty {
            "session_meta" if self.state.thread.is_none() => {
                self.state.thread = p.get("id").and_then(Value::as_str).map(str::to_string);
            }
            "turn_context" => {
                if let Some(m) = p.get("model").and_then(Value::as_str) {
                    b.agent_model(m);
                }
            }
            "event_msg" if let Some(prompt) = prompt_event(p) => match self.pending_user.take() {
                Some(i) => {
                    b.entries[i as usize].flags |= flag::TURN_START;
                    self.claimed = Some(prompt);
                }
                None if self.claimed.as_deref() == Some(prompt.as_str()) => {}
                None => {
                    self.pending_turn = true;
                    self.claimed = Some(prompt);
                }
            },
            "response_item" => self.response_item(b, at, p, line_id),
            "compacted" => {
                // Codex's own compaction: from here on, its history replaces what came before.
                for e in &mut b.entries {
                    e.flags |= flag::UNSEEN | flag::HISTORY;
                }
                let i = b.entry(
                    at,
                    NewEntry {
                        role: Role::User,
                        flags: flag::NATIVE_SUMMARY | flag::PINNED,
                        chars: text(obj).chars().count() as u32,
                        id: line_id,
                        calls: &[],
                        answers: &[],
                    },
                );
                self.native = Some(i);
                self.state.local_compaction =
                    !p.get("replacement_history").is_some_and(Value::is_array);
                self.pending_user = None;
            }
            _ => {}
        }
        Ok(())
    }

    fn finish(&mut self, b: &mut Build) -> Result<(), TranscriptError> {
        // Claims before the floor are history too.
        if let Some(n) = self.native {
            for e in &mut b.entries[..n as usize] {
                e.flags |= flag::UNSEEN | flag::HISTORY;
            }
        }
        Ok(())
    }
}

/// The lines that write a `Write` to a rollout.
fn lines(t: &Transcript, st: &State, w: &Write<'_>) -> Result<Vec<String>, String> {
    let mut stamp = w.now_ms;
    // A rollout whose lines are numbered (0.171 on) gets every line numbered on from its highest.
    let mut ordinal = st.last_ordinal;
    let mut line = |mf: Value, ty: &str, payload: Value| {
        let mut m = Map::new();
        m.insert("timestamp".into(), Value::from(iso_timestamp(stamp)));
        stamp += 1;
        if let Some(n) = ordinal.as_mut() {
            *n += 1;
            m.insert("ordinal".into(), Value::from(*n));
        }
        m.insert("type".into(), Value::from(ty));
        m.insert("payload".into(), payload);
        mf_first(mf, m)
    };
    let mut out = Vec::new();
    for d in w.drafts {
        let mut payload = json!({"id": d.id, "content": d.content});
        if let Some(orig) = d.stub_of {
            let v = t.values(orig as usize).map_err(|e| e.to_string())?;
            let p = v
                .first()
                .and_then(|o| o.get("payload"))
                .cloned()
                .unwrap_or(Value::Null);
            payload["call_id"] = p.get("call_id").cloned().unwrap_or(Value::Null);
            payload["outputType"] = p.get("type").cloned().unwrap_or(Value::Null);
        }
        out.push(line(mf::claim_value(d), "mf_summary", payload));
    }
    for (kind, at_ms) in w.records {
        out.push(line(mf::record_value(kind, *at_ms), "mf_record", json!({})));
    }
    let Some(shown) = w.shown else {
        return Ok(out);
    };
    if st.local_compaction {
        return Err("its last compaction by Codex has no replacement history (Codex rebuilds that history itself), so mf cannot write a history that Codex would show as mf's recall".into());
    }
    let payload_of = |i: u32| payload_of(t, i);
    let mut summaries: Vec<String> = Vec::new();
    let mut entries: Vec<String> = Vec::new();
    let mut early: Vec<String> = Vec::new();
    let first_turn = t
        .entries
        .iter()
        .position(|e| e.has(flag::TURN_START) && !e.has(flag::UNSEEN))
        .unwrap_or(usize::MAX) as u32;
    for s in shown {
        match s {
            Shown::New(d) => {
                let d = &w.drafts[*d];
                match d.kind {
                    ClaimKind::Summary => summaries.push(d.content.clone()),
                    ClaimKind::Stub => entries
                        .push(stub_item(t, d.stub_of.unwrap_or(NONE), &d.content)?.to_string()),
                }
            }
            Shown::Existing(i) => {
                let e = &t.entries[*i as usize];
                if e.claim != NONE {
                    let c = &t.claims[e.claim as usize];
                    let content = t.text(*i as usize).map_err(|e| e.to_string())?;
                    match c.kind {
                        ClaimKind::Summary => summaries.push(content),
                        ClaimKind::Stub => {
                            entries.push(stub_item(t, common::stubbed(t, c), &content)?.to_string())
                        }
                    }
                } else if entries.is_empty() && (e.has(flag::PINNED) || *i < first_turn) {
                    early.extend(payload_of(*i)?);
                } else {
                    entries.extend(payload_of(*i)?);
                }
            }
        }
    }
    let text = summaries.join("\n\n");
    let mut history = early;
    if !text.is_empty() {
        history.push(json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}).to_string());
    }
    history.extend(entries);
    // The `compacted` line last: Codex honours the write only once it is there and whole (mf's
    // reader counts a write only when all of it is).
    out.push(line(
        wire::view_object("show"),
        "event_msg",
        json!({"type": "context_compacted"}),
    ));
    // The history's items go in as the JSON text they are (an original's own bytes).
    let payload = format!(
        "{{\"message\":{},\"replacement_history\":[{}]}}",
        Value::from(text.as_str()),
        history.join(",")
    );
    let mut compacted = line(
        wire::view_object(if text.is_empty() { "restore" } else { "show" }),
        "compacted",
        Value::Null,
    );
    let Some(head) = compacted.strip_suffix("null}") else {
        unreachable!("a line ends with its payload")
    };
    compacted = format!("{head}{payload}}}");
    out.push(compacted);
    Ok(out)
}

/// The items an entry stands for in the history Codex sends, as JSON text: its payload, or the
/// items of the replacement history of Codex's own compaction. Each is the original's bytes
/// (see [`Transcript::json_texts`]), never a value read and written again: a float, a big
/// integer, an escape or a duplicate key comes back exactly as Codex wrote it.
fn payload_of(t: &Transcript, i: u32) -> Result<Vec<String>, String> {
    let texts = t.json_texts(i as usize).map_err(|e| e.to_string())?;
    let text = texts
        .into_iter()
        .next()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(|| format!("line {} is not UTF-8 JSON", t.entries[i as usize].line))?;
    let unreadable = |e: String| format!("line {}: {e}", t.entries[i as usize].line);
    let top = json_span::top_object(&text).map_err(unreadable)?;
    let Some((_, payload)) = top.get("payload") else {
        return Ok(Vec::new());
    };
    let is_compacted = top
        .get("type")
        .is_some_and(|(_, m)| json_span::decode_string(&text[m.value.clone()]) == "compacted");
    if !is_compacted {
        return Ok(vec![text[payload.value.clone()].to_string()]);
    }
    let Ok(p) = json_span::object_at(&text, payload.value.start) else {
        return Ok(Vec::new());
    };
    let Some((_, history)) = p.get("replacement_history") else {
        return Ok(Vec::new());
    };
    // The array's items as they are in the file (serde_json's `RawValue` keeps their bytes).
    Ok(
        serde_json::from_str::<Vec<&RawValue>>(&text[history.value.clone()])
            .map(|items| items.iter().map(|r| r.get().to_string()).collect())
            .unwrap_or_default(),
    )
}

/// The output item a stub stands for: the original's shape, with the stub's text.
fn stub_item(t: &Transcript, orig: u32, content: &str) -> Result<Value, String> {
    if orig == NONE {
        return Err("a stub names no tool output".into());
    }
    let v = t.values(orig as usize).map_err(|e| e.to_string())?;
    let mut p = v
        .into_iter()
        .next()
        .and_then(|o| o.get("payload").cloned())
        .unwrap_or_else(|| json!({}));
    p["output"] = Value::from(content);
    Ok(p)
}
