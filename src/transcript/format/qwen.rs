//! The Qwen Code session format (`~/.qwen/projects/<cwd>/chats/<sessionId>.jsonl`): one record a
//! line, `{uuid, parentUuid, sessionId, timestamp, type, subtype?, cwd, version, message?,
//! systemPayload?}`, `type` one of `user`, `assistant`, `tool_result` and `system`; `message` is a
//! Gemini `Content` (`role` user or model, `parts` of text, thought text, `functionCall`,
//! `functionResponse`). Records link as Claude Code's do, by `uuid`/`parentUuid`, but the format is
//! Qwen's own (detection keeps the two apart by its keys).
//!
//! What Qwen Code sends on resume (0.24.4, `SessionApiHistoryAccumulator` in
//! `packages/core/src/services/session-api-history.ts` over the chain `prepareTranscriptRecords`
//! walks in `packages/core/src/utils/transcript-records.ts`): the leaf is the last record with a
//! valid identity (`uuid`, `parentUuid` string or null, `sessionId`) of a known type; the chain
//! is walked back from it by `parentUuid` (the first record with a uuid wins; later records with
//! the same uuid are fragments whose parts are appended); along the chain, every record with a
//! `message` (but `realtime_message`) is appended, and a `system/chat_compression` record whose
//! `systemPayload.compressedHistory` is an array replaces everything before it by that history.
//! A line without a valid identity is skipped. So Qwen's own compaction is a floor here.
//!
//! What mf writes: its summaries and records as lines without a uuid (Qwen skips them), then a
//! `system/chat_compression` record chained on the leaf whose `compressedHistory` is what mf's
//! recall shows — mf's summaries as one user message and Qwen's acknowledgement (as Qwen's own
//! compaction writes it), then the kept messages, each the original's own JSON text. A restore
//! writes the same record holding every message again.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::common::{self, fresh_uuid, iso_timestamp, mf_first};
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

/// What Qwen Code answers its own compaction summary with (its `chat_compression` history
/// holds it right after the summary); mf's history does the same.
pub const ACK: &str = "Got it. Thanks for the additional context!";

/// Record types Qwen Code reads; a record of another type is skipped.
const TYPES: [&str; 4] = ["user", "assistant", "tool_result", "system"];

/// System subtypes that are no part of the conversation chain (Qwen's artifact and managed
/// session records): never the leaf, never looked up by uuid.
const NOT_CONVERSATION: [&str; 6] = [
    "session_artifact_event",
    "session_artifact_snapshot",
    "session_sources_snapshot",
    "managed_session_header_v1",
    "managed_session_event_v1",
    "managed_session_commit_v1",
];

/// User record subtypes that are not a person's prompt.
const NOT_PROMPT: [&str; 5] = [
    "notification",
    "cron",
    "mid_turn_user_message",
    "realtime_message",
    "goal_runtime",
];

/// One record with a valid identity.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Node {
    uuid: String,
    parent: Option<String>,
    /// Its entry (`NONE`: none, e.g. a system record), the first record of its uuid's.
    entry: u32,
    /// Qwen's own `chat_compression` (with a history): a floor.
    native: bool,
    /// A line mf wrote (its view): never an entry, but on the chain.
    mf: bool,
    /// Whether Qwen takes it for a conversation record (it may be the leaf).
    conversation: bool,
}

/// What mf keeps of a Qwen session for writing to it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct State {
    session_id: Option<String>,
    cwd: Option<String>,
    version: Option<String>,
    /// The uuid of the record Qwen resumes from (the last conversation record).
    leaf: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct QwenReader {
    state: State,
    nodes: Vec<Node>,
    /// The entry of the first record of each uuid (a later record with it is a fragment).
    #[serde(default)]
    seen: std::collections::HashMap<String, u32>,
}

impl LineReader for QwenReader {
    type Parsed<'a> = Value;
    const STRICT: bool = false;

    /// A Qwen record has a `type` and a `uuid` or `sessionId` (the parts nested in one have
    /// neither).
    fn may_be_line(&self, v: &Value) -> bool {
        common::is_typed_line(v, &["uuid", "sessionId"])
    }

    fn parse(&self, line: &[u8]) -> Result<Value, LineError> {
        common::parse_object(line)
    }

    fn push(&mut self, b: &mut Build, at: &At<'_>, v: Value) -> Result<(), TranscriptError> {
        let obj = v.as_object().expect("parsed as an object");
        let ty = obj.get("type").and_then(Value::as_str).unwrap_or_default();
        let subtype = obj.get("subtype").and_then(Value::as_str);
        let identity = identity(obj);
        if let Some(m) = obj.get("mf") {
            let seen = mf::read(b, at, m, |kind| {
                let shape_ok = if ty == "mf_summary" && identity.is_none() {
                    Ok(())
                } else {
                    Err("in a Qwen Code session mf writes its summaries as `mf_summary` lines without a uuid".into())
                };
                let data = obj.get("data").and_then(Value::as_object);
                let answers = data
                    .and_then(|d| d.get("callId"))
                    .and_then(Value::as_str)
                    .map(id_hash)
                    .into_iter()
                    .collect();
                ClaimFields::in_object(data, Role::Tool, kind, answers, shape_ok)
            });
            if let (mf::Seen::View, Some((uuid, parent))) = (seen, identity) {
                self.nodes.push(Node {
                    uuid,
                    parent,
                    entry: NONE,
                    native: false,
                    mf: true,
                    conversation: true,
                });
            }
            return Ok(());
        }
        let Some((uuid, parent)) = identity else {
            return Ok(()); // Qwen skips a record without a valid identity
        };
        if !TYPES.contains(&ty) {
            return Ok(());
        }
        if self.state.session_id.is_none() {
            self.state.session_id = obj
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        for (k, slot) in [
            ("cwd", &mut self.state.cwd),
            ("version", &mut self.state.version),
        ] {
            if let Some(s) = obj.get(k).and_then(Value::as_str) {
                *slot = Some(s.to_string());
            }
        }
        if ty == "assistant"
            && let Some(model) = obj.get("model").and_then(Value::as_str)
        {
            b.agent_model(model);
        }
        let conversation =
            !(ty == "system" && subtype.is_some_and(|s| NOT_CONVERSATION.contains(&s)));
        let native = ty == "system"
            && subtype == Some("chat_compression")
            && obj
                .get("systemPayload")
                .and_then(|p| p.get("compressedHistory"))
                .is_some_and(|h| !h.is_null() && h != &Value::Bool(false));
        // A later fragment of a record (the same uuid): its parts go with the first one's.
        if conversation && let Some(&first) = self.seen.get(&uuid) {
            if first != NONE && obj.get("message").is_some_and(Value::is_object) {
                let (calls, answers) = tool_ids(obj);
                b.extend(
                    first,
                    at,
                    marked(obj).text.chars().count() as u32,
                    &calls,
                    &answers,
                );
            }
            return Ok(());
        }
        let mut entry = NONE;
        let has_message = obj.get("message").is_some_and(Value::is_object);
        if native {
            entry = b.entry(
                at,
                NewEntry {
                    role: Role::User,
                    flags: flag::NATIVE_SUMMARY | flag::PINNED,
                    chars: marked(obj).text.chars().count() as u32,
                    id: id_hash(&uuid),
                    calls: &[],
                    answers: &[],
                },
            );
        } else if has_message && ty != "system" && subtype != Some("realtime_message") {
            let (calls, answers) = tool_ids(obj);
            let role = match ty {
                "assistant" => Role::Assistant,
                _ if !answers.is_empty() => Role::Tool,
                "tool_result" => Role::Tool,
                _ => Role::User,
            };
            let prompt = ty == "user"
                && answers.is_empty()
                && !subtype.is_some_and(|s| NOT_PROMPT.contains(&s))
                && parts(obj).iter().any(|p| {
                    p.get("thought") != Some(&Value::Bool(true))
                        && p.get("text")
                            .and_then(Value::as_str)
                            .is_some_and(|t| !t.trim().is_empty())
                });
            entry = b.entry(
                at,
                NewEntry {
                    role,
                    flags: if prompt { flag::TURN_START } else { 0 },
                    chars: marked(obj).text.chars().count() as u32,
                    id: id_hash(&uuid),
                    calls: &calls,
                    answers: &answers,
                },
            );
        }
        if conversation {
            self.seen.insert(uuid.clone(), entry);
        }
        self.nodes.push(Node {
            uuid,
            parent,
            entry,
            native,
            mf: false,
            conversation,
        });
        Ok(())
    }

    fn finish(&mut self, b: &mut Build) -> Result<(), TranscriptError> {
        // The chain Qwen resumes: from the last conversation record back by parentUuid (the
        // first record of a uuid decides).
        let mut first: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (k, n) in self.nodes.iter().enumerate() {
            if n.conversation {
                first.entry(n.uuid.as_str()).or_insert(k);
            }
        }
        let leaf = self.nodes.iter().rposition(|n| n.conversation);
        self.state.leaf = leaf.map(|k| self.nodes[k].uuid.clone());
        let mut on = vec![false; self.nodes.len()];
        let mut chain = Vec::new();
        let mut cur = leaf.and_then(|k| first.get(self.nodes[k].uuid.as_str()).copied());
        while let Some(k) = cur {
            if on[k] {
                break; // a cycle: Qwen stops there too
            }
            on[k] = true;
            chain.push(k);
            cur = self.nodes[k]
                .parent
                .as_deref()
                .and_then(|p| first.get(p).copied());
        }
        chain.reverse();
        for (k, n) in self.nodes.iter().enumerate() {
            if !on[k] && n.entry != NONE {
                b.entries[n.entry as usize].flags |= flag::UNSEEN;
            }
        }
        // Qwen's own last compaction on the chain is a floor: what came before it (mf's claims
        // included) is history the model no longer sees.
        if let Some(&k) = chain.iter().rev().find(|&&k| self.nodes[k].native) {
            let floor = self.nodes[k].entry;
            for e in &mut b.entries[..floor as usize] {
                e.flags |= flag::UNSEEN | flag::HISTORY;
            }
        }
        Ok(())
    }
}

/// A record's identity as Qwen validates it: a non-empty `uuid`, a `parentUuid` string or
/// null, a non-empty `sessionId`.
fn identity(obj: &Map<String, Value>) -> Option<(String, Option<String>)> {
    let uuid = obj
        .get("uuid")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())?;
    let parent = match obj.get("parentUuid")? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        _ => return None,
    };
    obj.get("sessionId")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())?;
    Some((uuid.to_string(), parent))
}

fn parts(obj: &Map<String, Value>) -> Vec<&Map<String, Value>> {
    obj.get("message")
        .and_then(|m| m.get("parts"))
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_object).collect())
        .unwrap_or_default()
}

/// The tool calls a record opens and the ones it answers (by id hash).
fn tool_ids(obj: &Map<String, Value>) -> (Vec<u64>, Vec<u64>) {
    let id = |p: &Map<String, Value>, k: &str| {
        p.get(k)
            .and_then(|c| c.get("id"))
            .and_then(Value::as_str)
            .map(id_hash)
    };
    let ps = parts(obj);
    (
        ps.iter().filter_map(|p| id(p, "functionCall")).collect(),
        ps.iter()
            .filter_map(|p| id(p, "functionResponse"))
            .collect(),
    )
}

/// The text of a `functionResponse`'s response: its `output` (or `error`) when a string, else
/// the JSON.
fn response_text(r: Option<&Value>) -> String {
    match r {
        Some(Value::Object(o)) => match o.get("output").or(o.get("error")) {
            Some(Value::String(s)) if o.len() == 1 => s.clone(),
            _ => Value::Object(o.clone()).to_string(),
        },
        Some(Value::String(s)) => s.clone(),
        Some(v) => v.to_string(),
        None => String::new(),
    }
}

/// The model-visible text of `Content` parts, thought parts marked as reasoning.
fn parts_marked(parts: &[Value], t: &mut common::Marked) {
    for p in parts.iter().filter_map(Value::as_object) {
        if let Some(s) = p.get("text").and_then(Value::as_str) {
            t.push(s, p.get("thought") == Some(&Value::Bool(true)));
        } else if let Some(c) = p.get("functionCall") {
            t.push(
                &format!(
                    "[calls {}({})]",
                    c.get("name").and_then(Value::as_str).unwrap_or("?"),
                    c.get("args")
                        .map(common::arguments_text)
                        .unwrap_or_default()
                ),
                false,
            );
        } else if let Some(r) = p.get("functionResponse") {
            t.push(&response_text(r.get("response")), false);
        } else if let Some(d) = p.get("inlineData") {
            t.push(
                &common::image_placeholder(
                    d.get("mimeType").and_then(Value::as_str),
                    d.get("data")
                        .and_then(Value::as_str)
                        .map(common::base64_size),
                ),
                false,
            );
        } else if p.contains_key("fileData") {
            t.push("[file]", false);
        }
    }
}

/// The model-visible text of a record (mf's summary line: its content).
fn marked(obj: &Map<String, Value>) -> common::Marked {
    if obj.contains_key("mf") {
        return common::Marked::plain(
            obj.get("data")
                .and_then(|d| d.get("content"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        );
    }
    let mut t = common::Marked::default();
    if obj.get("type").and_then(Value::as_str) == Some("system") {
        if let Some(Value::Array(h)) = obj
            .get("systemPayload")
            .and_then(|p| p.get("compressedHistory"))
        {
            for c in h {
                if let Some(Value::Array(ps)) = c.get("parts") {
                    parts_marked(ps, &mut t);
                }
            }
        }
        return t;
    }
    if let Some(Value::Array(ps)) = obj.get("message").and_then(|m| m.get("parts")) {
        parts_marked(ps, &mut t);
    }
    t
}

/// A record (its rows: the first and its fragments) as the chat messages a model is sent.
fn chat_messages(rows: &[Map<String, Value>]) -> Vec<Value> {
    let obj = &rows[0];
    if obj.contains_key("mf") || obj.get("type").and_then(Value::as_str) == Some("system") {
        return vec![json!({"role": "user", "content": marked(obj).text})];
    }
    let all: Vec<Value> = rows
        .iter()
        .flat_map(|r| {
            r.get("message")
                .and_then(|m| m.get("parts"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .collect();
    let model = obj.get("type").and_then(Value::as_str) == Some("assistant")
        || obj
            .get("message")
            .and_then(|m| m.get("role"))
            .and_then(Value::as_str)
            == Some("model");
    if model {
        let calls: Vec<Value> = all
            .iter()
            .filter_map(|p| p.get("functionCall"))
            .map(|c| {
                json!({"id": c.get("id"), "type": "function", "function": {
                    "name": c.get("name"),
                    "arguments": c.get("args").map(common::arguments_text).unwrap_or_default()}})
            })
            .collect();
        let prose: Vec<Value> = all
            .iter()
            .filter(|p| p.get("functionCall").is_none())
            .cloned()
            .collect();
        let mut t = common::Marked::default();
        parts_marked(&prose, &mut t);
        let mut out = json!({"role": "assistant", "content": if t.text.is_empty() { Value::Null } else { Value::from(t.text) }});
        if !calls.is_empty() {
            out["tool_calls"] = Value::Array(calls);
        }
        return vec![out];
    }
    let mut out: Vec<Value> = all
        .iter()
        .filter_map(|p| p.get("functionResponse"))
        .map(|r| json!({"role": "tool", "tool_call_id": r.get("id"), "content": response_text(r.get("response"))}))
        .collect();
    let prose: Vec<Value> = all
        .iter()
        .filter(|p| p.get("functionResponse").is_none())
        .cloned()
        .collect();
    if !prose.is_empty() || out.is_empty() {
        let mut t = common::Marked::default();
        parts_marked(&prose, &mut t);
        out.push(json!({"role": "user", "content": t.text}));
    }
    out
}

impl Reader for QwenReader {
    fn adapter(&self, _: &Build) -> Box<dyn Adapter> {
        Box::new(self.state.clone())
    }
}

impl Adapter for State {
    fn text(&self, _: usize, rows: &[Map<String, Value>]) -> String {
        self.marked(0, rows).text
    }

    /// Thought parts are the model's reasoning.
    fn marked(&self, _: usize, rows: &[Map<String, Value>]) -> common::Marked {
        let mut t = marked(&rows[0]);
        for r in &rows[1..] {
            t.append(marked(r));
        }
        t
    }

    fn tool_name(&self, rows: &[Map<String, Value>]) -> Option<String> {
        parts(&rows[0])
            .iter()
            .find_map(|p| p.get("functionResponse"))
            .and_then(|r| r.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    fn chat_messages(&self, _: usize, rows: &[Map<String, Value>]) -> Vec<Value> {
        chat_messages(rows)
    }

    fn lines(&self, t: &Transcript, w: &Write<'_>) -> Result<Vec<String>, TranscriptError> {
        lines(t, self, w).map_err(|why| t.unexpressible(why))
    }

    /// Qwen's session writer lock (`tmp/session-writer-locks/<session>.lock` in its runtime
    /// directory, taken by its daemon and ACP writers): active, and its process still running.
    fn running(&self, dirs: &AgentDirs) -> Option<String> {
        let sid = self.session_id.as_deref()?;
        let lock = dirs
            .qwen_runtime
            .as_ref()?
            .join("tmp")
            .join("session-writer-locks")
            .join(format!("{}.lock", uri_component(sid)));
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&lock).ok()?).ok()?;
        if v.get("state").and_then(Value::as_str) != Some("active") {
            return None;
        }
        let pid = v.get("pid").and_then(Value::as_i64)?;
        super::claude::live::running(pid, None).then(|| {
            format!(
                "Qwen Code process {pid} holds the writer lock {} for this session",
                lock.display()
            )
        })
    }
}

/// JavaScript's `encodeURIComponent`: every byte but the unreserved characters as `%XX`.
fn uri_component(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The `Content`s an entry stands for in the history Qwen sends, as JSON text: a record's
/// `message` (its own bytes; a record in fragments, its parts joined), or the history of
/// Qwen's own compaction (each item's own bytes).
fn contents_of(t: &Transcript, i: u32) -> Result<Vec<String>, String> {
    let texts = t.json_texts(i as usize).map_err(|e| e.to_string())?;
    let line = t.entries[i as usize].line;
    let unreadable = |e: String| format!("line {line}: {e}");
    let as_text = |b: Vec<u8>| String::from_utf8(b).map_err(|_| unreadable("not UTF-8".into()));
    let mut texts = texts
        .into_iter()
        .map(as_text)
        .collect::<Result<Vec<_>, _>>()?;
    if texts.len() > 1 {
        // Fragments: one message, the first one's role, every fragment's parts in order.
        let values = t.values(i as usize).map_err(|e| e.to_string())?;
        let mut message = values[0].get("message").cloned().unwrap_or(json!({}));
        let all: Vec<Value> = values
            .iter()
            .flat_map(|r| {
                r.get("message")
                    .and_then(|m| m.get("parts"))
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            })
            .collect();
        message["parts"] = Value::Array(all);
        return Ok(vec![message.to_string()]);
    }
    let text = texts.pop().unwrap_or_default();
    let top = json_span::top_object(&text).map_err(unreadable)?;
    if let Some((_, m)) = top.get("message") {
        return Ok(vec![text[m.value.clone()].to_string()]);
    }
    let Some((_, p)) = top.get("systemPayload") else {
        return Ok(Vec::new());
    };
    let p = json_span::object_at(&text, p.value.start).map_err(unreadable)?;
    let Some((_, h)) = p.get("compressedHistory") else {
        return Ok(Vec::new());
    };
    Ok(
        serde_json::from_str::<Vec<&RawValue>>(&text[h.value.clone()])
            .map(|items| items.iter().map(|r| r.get().to_string()).collect())
            .unwrap_or_default(),
    )
}

/// Whether entry `i` is a `mid_turn_user_message` record (a message the user sent while the
/// model worked), which Qwen joins to the user message before it.
fn mid_turn(t: &Transcript, i: u32) -> bool {
    t.values(i as usize).ok().is_some_and(|v| {
        v.first()
            .and_then(|o| o.get("subtype"))
            .and_then(Value::as_str)
            == Some("mid_turn_user_message")
    })
}

/// Qwen's `appendApiHistoryRecord` for a mid-turn message: its parts join the last item when
/// that is a user message; otherwise it is an item of its own.
fn merge_into_user(history: &mut Vec<String>, items: Vec<String>) {
    let last = history
        .last()
        .and_then(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v.get("role").and_then(Value::as_str) == Some("user"));
    let (Some(mut last), 1) = (last, items.len()) else {
        history.extend(items);
        return;
    };
    let more = serde_json::from_str::<Value>(&items[0])
        .ok()
        .and_then(|v| v.get("parts").and_then(Value::as_array).cloned())
        .unwrap_or_default();
    if let Some(Value::Array(parts)) = last.get_mut("parts") {
        parts.extend(more);
        *history.last_mut().expect("checked") = last.to_string();
    } else {
        history.extend(items);
    }
}

/// The tool result a stub stands for: the original's message, each response's text the stub's.
fn stub_content(t: &Transcript, orig: u32, content: &str) -> Result<String, String> {
    if orig == NONE {
        return Err("a stub names no tool result".into());
    }
    let v = t.values(orig as usize).map_err(|e| e.to_string())?;
    let mut m = v
        .into_iter()
        .next()
        .and_then(|o| o.get("message").cloned())
        .ok_or("a stub's tool result has no message")?;
    if let Some(Value::Array(ps)) = m.get_mut("parts") {
        for p in ps {
            if let Some(r) = p.get_mut("functionResponse").and_then(Value::as_object_mut) {
                r.insert("response".into(), json!({"output": content}));
            }
        }
    }
    Ok(m.to_string())
}

/// The lines that write a `Write` to a Qwen session.
fn lines(t: &Transcript, st: &State, w: &Write<'_>) -> Result<Vec<String>, String> {
    let mut stamp = w.now_ms;
    let mut line = |mf: Value, ty: &str, data: Value| {
        let mut m = Map::new();
        m.insert("type".into(), Value::from(ty));
        m.insert("timestamp".into(), Value::from(iso_timestamp(stamp)));
        stamp += 1;
        m.insert("data".into(), data);
        mf_first(mf, m)
    };
    let mut out = Vec::new();
    for d in w.drafts {
        let mut data = json!({"id": d.id, "content": d.content});
        if let Some(orig) = d.stub_of {
            let v = t.values(orig as usize).map_err(|e| e.to_string())?;
            let call = v.first().and_then(|o| {
                parts(o)
                    .iter()
                    .find_map(|p| p.get("functionResponse").and_then(|r| r.get("id")).cloned())
            });
            data["callId"] = call.unwrap_or(Value::Null);
        }
        out.push(line(mf::claim_value(d), "mf_summary", data));
    }
    for (kind, at_ms) in w.records {
        out.push(line(mf::record_value(kind, *at_ms), "mf_record", json!({})));
    }
    let Some(shown) = w.shown else {
        return Ok(out);
    };
    let (Some(session), Some(leaf)) = (&st.session_id, &st.leaf) else {
        return Err("it has no record of Qwen Code's own to resume from".into());
    };
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
                    ClaimKind::Stub => {
                        entries.push(stub_content(t, d.stub_of.unwrap_or(NONE), &d.content)?)
                    }
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
                            entries.push(stub_content(t, common::stubbed(t, c), &content)?)
                        }
                    }
                } else if entries.is_empty() && (e.has(flag::PINNED) || *i < first_turn) {
                    early.extend(contents_of(t, *i)?);
                } else {
                    let items = contents_of(t, *i)?;
                    if mid_turn(t, *i) {
                        merge_into_user(&mut entries, items);
                    } else {
                        entries.extend(items);
                    }
                }
            }
        }
    }
    let text = summaries.join("\n\n");
    let mut history = early;
    if !text.is_empty() {
        history.push(json!({"role": "user", "parts": [{"text": text}]}).to_string());
        // Qwen's own compaction answers its summary before the next user message; a kept run
        // that opens with the model's message follows the summary directly.
        let model_next = entries.first().is_some_and(|c| {
            serde_json::from_str::<Value>(c)
                .ok()
                .and_then(|v| v.get("role").and_then(Value::as_str).map(str::to_string))
                .as_deref()
                == Some("model")
        });
        if !model_next {
            history.push(json!({"role": "model", "parts": [{"text": ACK}]}).to_string());
        }
    }
    history.extend(entries);
    let chars: usize = history.iter().map(String::len).sum();
    let mut m = Map::new();
    m.insert("uuid".into(), Value::from(fresh_uuid()));
    m.insert("parentUuid".into(), Value::from(leaf.as_str()));
    m.insert("sessionId".into(), Value::from(session.as_str()));
    m.insert("timestamp".into(), Value::from(iso_timestamp(stamp)));
    m.insert("type".into(), Value::from("system"));
    m.insert("provenance".into(), Value::from("system"));
    if let Some(cwd) = &st.cwd {
        m.insert("cwd".into(), Value::from(cwd.as_str()));
    }
    if let Some(v) = &st.version {
        m.insert("version".into(), Value::from(v.as_str()));
    }
    m.insert("subtype".into(), Value::from("chat_compression"));
    m.insert("systemPayload".into(), Value::Null);
    let view = mf_first(
        wire::view_object(if text.is_empty() { "restore" } else { "show" }),
        m,
    );
    let Some(head) = view.strip_suffix("null}") else {
        unreachable!("a line ends with its payload")
    };
    // The history's items go in as the JSON text they are (an original's own bytes).
    let info = json!({
        "originalTokenCount": w.tokens_before,
        "newTokenCount": chars / 4,
        "newTokenCountIsEstimated": true,
        "compressionStatus": 1,
        "triggerReason": "manual",
        "originalTokenCountIsEstimated": true,
    });
    out.push(format!(
        "{head}{{\"info\":{info},\"compressedHistory\":[{}]}}}}",
        history.join(",")
    ));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(s: &str) -> Map<String, Value> {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn text_marks_thoughts_and_shows_calls_and_results() {
        let a = obj(
            r#"{"uuid":"a","parentUuid":null,"sessionId":"s","type":"assistant","message":{"role":"model","parts":[{"text":"hmm","thought":true},{"text":"Reading."},{"functionCall":{"id":"c1","name":"read_file","args":{"file_path":"/x"}}}]}}"#,
        );
        let m = marked(&a);
        assert_eq!(
            m.text,
            "hmm\nReading.\n[calls read_file({\"file_path\":\"/x\"})]"
        );
        assert_eq!(m.reasoning, vec![0..3]);
        let r = obj(
            r#"{"uuid":"b","parentUuid":"a","sessionId":"s","type":"tool_result","message":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"read_file","response":{"output":"hello\n"}}}]}}"#,
        );
        assert_eq!(marked(&r).text, "hello\n");
        assert_eq!(tool_ids(&r).1, vec![id_hash("c1")]);
        assert_eq!(tool_ids(&a).0, vec![id_hash("c1")]);
        let chat = chat_messages(&[r]);
        assert_eq!(
            chat,
            vec![json!({"role": "tool", "tool_call_id": "c1", "content": "hello\n"})]
        );
        let chat = chat_messages(&[a]);
        assert_eq!(chat[0]["tool_calls"][0]["function"]["name"], "read_file");
    }

    #[test]
    fn identity_is_what_qwen_validates() {
        assert!(identity(&obj(r#"{"uuid":"a","parentUuid":null,"sessionId":"s"}"#)).is_some());
        assert!(identity(&obj(r#"{"uuid":"a","sessionId":"s"}"#)).is_none());
        assert!(identity(&obj(r#"{"uuid":"","parentUuid":null,"sessionId":"s"}"#)).is_none());
        assert!(identity(&obj(r#"{"uuid":"a","parentUuid":1,"sessionId":"s"}"#)).is_none());
        assert!(identity(&obj(r#"{"uuid":"a","parentUuid":"p","sessionId":""}"#)).is_none());
    }

    #[test]
    fn a_mid_turn_message_joins_the_user_message_before_it() {
        let mut h = vec![r#"{"role":"user","parts":[{"text":"a"}]}"#.to_string()];
        merge_into_user(
            &mut h,
            vec![r#"{"role":"user","parts":[{"text":"b"}]}"#.to_string()],
        );
        assert_eq!(
            h,
            vec![r#"{"role":"user","parts":[{"text":"a"},{"text":"b"}]}"#.to_string()]
        );
        let mut h = vec![r#"{"role":"model","parts":[{"text":"a"}]}"#.to_string()];
        merge_into_user(
            &mut h,
            vec![r#"{"role":"user","parts":[{"text":"b"}]}"#.to_string()],
        );
        assert_eq!(h.len(), 2);
    }

    #[test]
    fn a_compression_reads_as_its_history() {
        let c = obj(
            r#"{"uuid":"c","parentUuid":"b","sessionId":"s","type":"system","subtype":"chat_compression","systemPayload":{"info":{},"compressedHistory":[{"role":"user","parts":[{"text":"<state_snapshot>x</state_snapshot>"}]},{"role":"model","parts":[{"text":"Got it."}]}]}}"#,
        );
        assert_eq!(
            marked(&c).text,
            "<state_snapshot>x</state_snapshot>\nGot it."
        );
    }
}
