//! The Gemini CLI session format (`~/.gemini/tmp/<project>/chats/session-*.jsonl`): a change log,
//! not a plain transcript. A header `{sessionId, projectHash, startTime, …}` (one more at every
//! resume); message records `{id, timestamp, type: user|gemini|info|…, content, toolCalls?,
//! thoughts?}`, a later record with the same `id` replacing the earlier one in place;
//! `{"$set": {…}}` metadata updates, of which `{"$set": {"messages": […]}}` replaces the whole
//! message list; `{"$rewindTo": id}` drops that message and every later one.
//!
//! Gemini CLI 0.61 resumes (`loadConversationRecord`, then `convertSessionToClientHistory`, in
//! `packages/core/src/services/chatRecordingService.ts` and its helpers) from that list: user
//! messages whose text is empty or starts with `/`, `?`, `<session_context>` or `<hook_context>`
//! are skipped, `info`/`error`/`warning` messages too; a `gemini` message is sent with its
//! thoughts, text and tool calls, and the results of its `toolCalls` as a user message after it.
//!
//! Read here: a user message with text opens a turn (not the injected `<session_context>`, a
//! slash command or a tool's `functionResponse`), a `gemini` message is the model's reply (its
//! `thoughts` are its reasoning, its `toolCalls` the calls the following `functionResponse`
//! messages answer), a record that replaces an earlier one by id hides the earlier. Gemini's own
//! compression is a `$set messages` that brings messages of new ids in place of the ones before
//! (a new chat from the `<state_snapshot>`): a floor. A `$set messages` that only lists known
//! messages again (Gemini re-syncs the list at every resume) changes nothing.
//!
//! What mf writes: its summaries and records as lines Gemini skips (no `id`, no `$set`), then a
//! `{"mf":…,"$set":{"messages":[…]}}` whose list is the session context, mf's summaries as one
//! user message, and the kept messages, each its original record's bytes.

use std::collections::{HashMap, HashSet};

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
use crate::transcript::read::{LineError, LineReader};
use crate::transcript::wire;
use crate::transcript::{Transcript, Write};

/// Where mf keeps a summary's fields in the line it writes (a key Gemini does not read).
const SUMMARY_KEY: &str = "mfSummary";
/// Where mf keeps a record's fields.
const RECORD_KEY: &str = "mfRecord";

/// What mf keeps of a Gemini session for writing to it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct State {
    /// The session id (the header's `sessionId`).
    pub session: Option<String>,
    /// The session context message Gemini puts first in the list (its JSON text), carried first
    /// in what mf writes.
    preamble: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct GeminiReader {
    state: State,
    /// Message id -> the entry of its latest record.
    by_id: HashMap<String, u32>,
    /// Every message id seen (records, and the lists of `$set messages` lines).
    known: HashSet<String>,
    /// Entry of the last native compaction.
    native: Option<u32>,
}

/// Whether Gemini skips this user text on resume (`isIgnoredUserContent`).
fn ignored_user_text(t: &str) -> bool {
    let t = t.trim();
    t.is_empty()
        || t.starts_with('/')
        || t.starts_with('?')
        || t.starts_with("<session_context>")
        || t.starts_with("<hook_context>")
}

/// A message's content as a list of parts (a string is one text part).
fn parts(content: Option<&Value>) -> Vec<Value> {
    match content {
        Some(Value::Array(a)) => a
            .iter()
            .map(|p| match p {
                Value::String(s) => json!({ "text": s }),
                other => other.clone(),
            })
            .collect(),
        Some(Value::String(s)) => vec![json!({ "text": s })],
        Some(v @ Value::Object(_)) => vec![v.clone()],
        _ => Vec::new(),
    }
}

/// The plain text parts of a content (thought parts left out).
fn plain_text(content: Option<&Value>) -> String {
    let mut t = String::new();
    for p in parts(content) {
        if p.get("thought").and_then(Value::as_bool) == Some(true) {
            continue;
        }
        if let Some(s) = p.get("text").and_then(Value::as_str) {
            t.push_str(s);
        }
    }
    t
}

/// The result a `functionResponse` part carries, as text.
fn response_text(r: &Value) -> String {
    let resp = r.get("response");
    match resp {
        Some(v) => match v.get("output").or_else(|| v.get("error")) {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => v.to_string(),
        },
        None => String::new(),
    }
}

/// The ids of the `functionResponse` parts of a content.
fn response_ids(content: Option<&Value>) -> Vec<String> {
    parts(content)
        .iter()
        .filter_map(|p| p.get("functionResponse"))
        .filter_map(|r| r.get("id").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// The ids of the tool calls of a `gemini` message (its `toolCalls`, and `functionCall` parts).
fn call_ids(obj: &Map<String, Value>) -> Vec<String> {
    let mut out: Vec<String> = obj
        .get("toolCalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("id").and_then(Value::as_str))
        .map(str::to_string)
        .collect();
    for p in parts(obj.get("content")) {
        if let Some(id) = p
            .get("functionCall")
            .and_then(|c| c.get("id"))
            .and_then(Value::as_str)
            && !out.iter().any(|x| x == id)
        {
            out.push(id.to_string());
        }
    }
    out
}

/// The text of one message record, its thoughts marked as reasoning.
fn message_marked(m: &Map<String, Value>) -> common::Marked {
    let mut t = common::Marked::default();
    if m.get("type").and_then(Value::as_str) == Some("gemini") {
        for th in m
            .get("thoughts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let subject = th.get("subject").and_then(Value::as_str).unwrap_or("");
            let desc = th.get("description").and_then(Value::as_str).unwrap_or("");
            let s = if subject.is_empty() {
                desc.to_string()
            } else {
                format!("**{subject}** {desc}")
            };
            t.push(&s, true);
        }
    }
    for p in parts(m.get("content")) {
        if let Some(s) = p.get("text").and_then(Value::as_str) {
            t.push(s, p.get("thought").and_then(Value::as_bool) == Some(true));
        } else if let Some(c) = p.get("functionCall") {
            t.push(&call_text(c), false);
        } else if let Some(r) = p.get("functionResponse") {
            t.push(&response_text(r), false);
        } else if p.get("inlineData").is_some() {
            t.push(
                &common::image_placeholder(
                    p.pointer("/inlineData/mimeType").and_then(Value::as_str),
                    p.pointer("/inlineData/data")
                        .and_then(Value::as_str)
                        .map(common::base64_size),
                ),
                false,
            );
        }
    }
    let in_content = call_ids_in_content(m);
    for c in m
        .get("toolCalls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let id = c.get("id").and_then(Value::as_str).unwrap_or_default();
        if !in_content.contains(id) {
            t.push(&call_text(c), false);
        }
    }
    t
}

fn call_ids_in_content(m: &Map<String, Value>) -> HashSet<String> {
    parts(m.get("content"))
        .iter()
        .filter_map(|p| p.pointer("/functionCall/id").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

fn call_text(c: &Value) -> String {
    format!(
        "[calls {}({})]",
        c.get("name").and_then(Value::as_str).unwrap_or("?"),
        c.get("args")
            .map(common::arguments_text)
            .unwrap_or_default()
    )
}

/// The messages of a `$set messages` line.
fn set_messages(obj: &Map<String, Value>) -> Option<&Vec<Value>> {
    obj.get("$set")?.get("messages")?.as_array()
}

/// The text of a line: a message, a native compaction (its messages), or mf's summary.
fn marked(obj: &Map<String, Value>) -> common::Marked {
    if obj.contains_key("mf") {
        return common::Marked::plain(
            obj.get(SUMMARY_KEY)
                .and_then(|s| s.get("content"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        );
    }
    if let Some(msgs) = set_messages(obj) {
        let mut t = common::Marked::default();
        for m in msgs.iter().filter_map(Value::as_object) {
            t.append(message_marked(m));
        }
        return t;
    }
    message_marked(obj)
}

fn text(obj: &Map<String, Value>) -> String {
    marked(obj).text
}

/// A line as the chat message a model would be sent.
fn chat_message(obj: &Map<String, Value>) -> Value {
    let t = text(obj);
    if obj.contains_key("mf") || set_messages(obj).is_some() {
        return json!({"role": "user", "content": t});
    }
    match obj.get("type").and_then(Value::as_str) {
        Some("gemini") => {
            let calls: Vec<Value> = obj
                .get("toolCalls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|c| {
                    json!({"id": c.get("id"), "type": "function", "function": {
                        "name": c.get("name"),
                        "arguments": c.get("args").map(common::arguments_text).unwrap_or_default()}})
                })
                .collect();
            let prose = plain_text(obj.get("content"));
            let mut out = json!({"role": "assistant", "content": if prose.is_empty() { Value::Null } else { Value::from(prose) }});
            if !calls.is_empty() {
                out["tool_calls"] = Value::Array(calls);
            }
            out
        }
        Some("user") => {
            let ids = response_ids(obj.get("content"));
            match ids.first() {
                Some(id) => json!({"role": "tool", "tool_call_id": id, "content": t}),
                None => json!({"role": "user", "content": t}),
            }
        }
        _ => json!({"role": "system", "content": t}),
    }
}

impl GeminiReader {
    /// A message record (a line with a string `id`).
    fn message(&mut self, b: &mut Build, at: &At<'_>, obj: &Map<String, Value>, id: &str) {
        let ty = obj.get("type").and_then(Value::as_str).unwrap_or_default();
        let mut calls: Vec<u64> = Vec::new();
        let mut answers: Vec<u64> = Vec::new();
        let (role, flags) = match ty {
            "user" => {
                let responses = response_ids(obj.get("content"));
                if !responses.is_empty() {
                    answers = responses.iter().map(|s| id_hash(s)).collect();
                    (Role::Tool, 0)
                } else if ignored_user_text(&plain_text(obj.get("content"))) {
                    (Role::User, flag::UNSEEN)
                } else {
                    (Role::User, flag::TURN_START)
                }
            }
            "gemini" => {
                calls = call_ids(obj).iter().map(|s| id_hash(s)).collect();
                if let Some(m) = obj.get("model").and_then(Value::as_str) {
                    b.agent_model(m);
                }
                (Role::Assistant, 0)
            }
            _ => (Role::System, flag::UNSEEN),
        };
        // A later record of the same message replaces the earlier one: the earlier is not sent.
        if let Some(&prev) = self.by_id.get(id) {
            b.entries[prev as usize].flags |= flag::UNSEEN;
        }
        let i = b.entry(
            at,
            NewEntry {
                role,
                flags,
                chars: text(obj).chars().count() as u32,
                id: id_hash(id),
                calls: &calls,
                answers: &answers,
            },
        );
        self.by_id.insert(id.to_string(), i);
        self.known.insert(id.to_string());
    }

    /// A `$set messages` line of Gemini's: its own compression when it brings messages of new
    /// ids and drops some that were sent; a re-sync of the list otherwise.
    fn set_list(&mut self, b: &mut Build, at: &At<'_>, obj: &Map<String, Value>, msgs: &[Value]) {
        let ids: Vec<&str> = msgs
            .iter()
            .filter_map(|m| m.get("id").and_then(Value::as_str))
            .collect();
        if let Some(first) = msgs.first()
            && first.get("type").and_then(Value::as_str) == Some("user")
            && plain_text(first.get("content"))
                .trim_start()
                .starts_with("<session_context>")
        {
            self.state.preamble = Some(first.to_string());
        }
        let listed: HashSet<&str> = ids.iter().copied().collect();
        let fresh = ids.iter().any(|id| {
            !self.known.contains(*id)
                && !id
                    .strip_suffix("_response")
                    .is_some_and(|base| self.known.contains(base))
        });
        let dropped = self.by_id.iter().any(|(id, &e)| {
            !listed.contains(id.as_str()) && !b.entries[e as usize].has(flag::UNSEEN)
        });
        for id in &ids {
            self.known.insert(id.to_string());
        }
        if !(fresh && dropped) {
            return;
        }
        // Gemini's own compression: from here on, this list replaces what came before.
        for e in &mut b.entries {
            e.flags |= flag::UNSEEN | flag::HISTORY;
        }
        // The calls in the list whose results come after it (Gemini compresses in the middle of
        // a turn): the entry opens them, so that their results stay with it.
        let answered: HashSet<String> = msgs
            .iter()
            .flat_map(|m| response_ids(m.get("content")))
            .collect();
        let calls: Vec<u64> = msgs
            .iter()
            .filter_map(Value::as_object)
            .filter(|m| m.get("type").and_then(Value::as_str) == Some("gemini"))
            .flat_map(call_ids)
            .filter(|c| !answered.contains(c))
            .map(|c| id_hash(&c))
            .collect();
        let i = b.entry(
            at,
            NewEntry {
                role: Role::User,
                flags: flag::NATIVE_SUMMARY | flag::PINNED,
                chars: text(obj).chars().count() as u32,
                id: id_hash(&format!("line-{}", at.line)),
                calls: &calls,
                answers: &[],
            },
        );
        self.native = Some(i);
        self.by_id.clear();
        for id in ids {
            self.by_id.insert(id.to_string(), i);
        }
    }

    /// `$rewindTo`: the message and every later one are dropped (all of them when it is unknown).
    fn rewind(&mut self, b: &mut Build, to: &str) {
        let from = self.by_id.get(to).copied().unwrap_or(0);
        for e in &mut b.entries[from as usize..] {
            if e.claim == NONE && !e.has(flag::HISTORY) {
                e.flags |= flag::UNSEEN;
            }
        }
        self.by_id.retain(|_, e| *e < from);
    }
}

impl LineReader for GeminiReader {
    type Parsed<'a> = Value;
    const STRICT: bool = false;

    /// A Gemini line is a message record (`id`, `type`, `timestamp`), a `$set`, a `$rewindTo`, or
    /// a header (`sessionId`, `projectHash`).
    fn may_be_line(&self, v: &Value) -> bool {
        common::is_typed_line(v, &["timestamp"])
            || v.get("$set").is_some()
            || v.get("$rewindTo").is_some()
            || (v.get("sessionId").is_some() && v.get("projectHash").is_some())
    }

    fn parse(&self, line: &[u8]) -> Result<Value, LineError> {
        common::parse_object(line)
    }

    fn push(&mut self, b: &mut Build, at: &At<'_>, v: Value) -> Result<(), TranscriptError> {
        let obj = v.as_object().expect("parsed as an object");
        if let Some(mfv) = obj.get("mf") {
            let seen = mf::read(b, at, mfv, |kind| {
                let holder = obj.get(SUMMARY_KEY).and_then(Value::as_object);
                let shape_ok = if holder.is_some() && !obj.contains_key("id") {
                    Ok(())
                } else {
                    Err(format!(
                        "in a Gemini CLI session mf writes its summaries as `{SUMMARY_KEY}` lines with no `id`"
                    ))
                };
                ClaimFields::in_object(holder, Role::Tool, kind, Vec::new(), shape_ok)
            });
            if seen == mf::Seen::View
                && let Some(msgs) = set_messages(obj)
            {
                for id in msgs
                    .iter()
                    .filter_map(|m| m.get("id").and_then(Value::as_str))
                {
                    self.known.insert(id.to_string());
                }
            }
            return Ok(());
        }
        if let Some(to) = obj.get("$rewindTo").and_then(Value::as_str) {
            self.rewind(b, to);
            return Ok(());
        }
        if let Some(id) = obj.get("id").and_then(Value::as_str) {
            self.message(b, at, obj, id);
            return Ok(());
        }
        if let Some(msgs) = set_messages(obj) {
            self.set_list(b, at, obj, msgs);
            return Ok(());
        }
        if obj.contains_key("projectHash")
            && self.state.session.is_none()
            && let Some(s) = obj.get("sessionId").and_then(Value::as_str)
        {
            self.state.session = Some(s.to_string());
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

impl Reader for GeminiReader {
    fn adapter(&self, _: &Build) -> Box<dyn Adapter> {
        Box::new(self.state.clone())
    }
}

impl Adapter for State {
    fn text(&self, _: usize, rows: &[Map<String, Value>]) -> String {
        text(&rows[0])
    }

    fn marked(&self, _: usize, rows: &[Map<String, Value>]) -> common::Marked {
        marked(&rows[0])
    }

    fn tool_name(&self, rows: &[Map<String, Value>]) -> Option<String> {
        parts(rows[0].get("content"))
            .iter()
            .find_map(|p| p.pointer("/functionResponse/name").and_then(Value::as_str))
            .map(str::to_string)
    }

    /// One message, or one per tool result of a record that answers several calls.
    fn chat_messages(&self, _: usize, rows: &[Map<String, Value>]) -> Vec<Value> {
        let obj = &rows[0];
        let responses: Vec<Value> = if obj.contains_key("mf") {
            Vec::new()
        } else {
            parts(obj.get("content"))
                .into_iter()
                .filter_map(|p| p.get("functionResponse").cloned())
                .collect()
        };
        if responses.len() < 2 {
            return vec![chat_message(obj)];
        }
        responses
            .iter()
            .map(|r| json!({"role": "tool", "tool_call_id": r.get("id"), "content": response_text(r)}))
            .collect()
    }

    fn lines(&self, t: &Transcript, w: &Write<'_>) -> Result<Vec<String>, TranscriptError> {
        lines(t, self, w).map_err(|why| t.unexpressible(why))
    }
}

/// The messages an entry stands for in the list Gemini loads, as JSON text: its record's own
/// bytes, or the messages of Gemini's own compaction (each as the file has it).
fn messages_of(t: &Transcript, i: u32) -> Result<Vec<String>, String> {
    let texts = t.json_texts(i as usize).map_err(|e| e.to_string())?;
    let text = texts
        .into_iter()
        .next()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(|| format!("line {} is not UTF-8 JSON", t.entries[i as usize].line))?;
    let unreadable = |e: String| format!("line {}: {e}", t.entries[i as usize].line);
    let top = json_span::top_object(&text).map_err(unreadable)?;
    let Some((_, set)) = top.get("$set") else {
        return Ok(vec![text]);
    };
    let Ok(s) = json_span::object_at(&text, set.value.start) else {
        return Ok(Vec::new());
    };
    let Some((_, list)) = s.get("messages") else {
        return Ok(Vec::new());
    };
    Ok(
        serde_json::from_str::<Vec<&RawValue>>(&text[list.value.clone()])
            .map(|items| items.iter().map(|r| r.get().to_string()).collect())
            .unwrap_or_default(),
    )
}

/// The lines that write a `Write` to a Gemini session.
fn lines(t: &Transcript, st: &State, w: &Write<'_>) -> Result<Vec<String>, String> {
    let mut stamp = w.now_ms;
    let mut out = Vec::new();
    for d in w.drafts {
        if d.kind == ClaimKind::Stub {
            return Err("Gemini CLI resends a tool's result from the model's own message record, so a stub cannot stand in for it (--strategy mask does not apply to a Gemini CLI session)".into());
        }
        let mut m = Map::new();
        m.insert(
            SUMMARY_KEY.into(),
            json!({"id": d.id, "content": d.content, "timestamp": iso_timestamp(stamp)}),
        );
        stamp += 1;
        out.push(mf_first(mf::claim_value(d), m));
    }
    for (kind, at_ms) in w.records {
        let mut m = Map::new();
        m.insert(RECORD_KEY.into(), json!({}));
        out.push(mf_first(mf::record_value(kind, *at_ms), m));
    }
    let Some(shown) = w.shown else {
        return Ok(out);
    };
    let mut list: Vec<String> = Vec::new();
    // What Gemini's own compression left (pinned), before any kept message: first, as it was.
    let mut early: Vec<String> = Vec::new();
    let mut pending: Vec<String> = Vec::new();
    let mut summaries = 0;
    let flush = |pending: &mut Vec<String>, list: &mut Vec<String>, stamp: &mut u64| {
        if pending.is_empty() {
            return;
        }
        let text = pending.join("\n\n");
        pending.clear();
        let m = json!({
            "id": common::fresh_uuid(),
            "timestamp": iso_timestamp(*stamp),
            "type": "user",
            "content": [{"text": text}],
        });
        *stamp += 1;
        list.push(m.to_string());
    };
    for s in shown {
        match s {
            Shown::New(d) => {
                pending.push(w.drafts[*d].content.clone());
                summaries += 1;
            }
            Shown::Existing(i) => {
                let e = &t.entries[*i as usize];
                if e.claim != NONE {
                    if t.claims[e.claim as usize].kind == ClaimKind::Stub {
                        return Err("a stub cannot stand in a Gemini CLI session".into());
                    }
                    pending.push(t.text(*i as usize).map_err(|e| e.to_string())?);
                    summaries += 1;
                } else if list.is_empty()
                    && (e.has(flag::PINNED) || (!early.is_empty() && !e.has(flag::TURN_START)))
                {
                    // Gemini's own compression, and the rest of the turn it cut into (the
                    // results of its calls), first.
                    early.extend(messages_of(t, *i)?);
                } else {
                    flush(&mut pending, &mut list, &mut stamp);
                    list.extend(messages_of(t, *i)?);
                }
            }
        }
    }
    flush(&mut pending, &mut list, &mut stamp);
    early.append(&mut list);
    let mut list = early;
    // Gemini's session context first, as Gemini keeps it (unless a native compaction's list,
    // which has its own, comes first).
    if let Some(pre) = &st.preamble
        && !list
            .first()
            .is_some_and(|f| f.contains("<session_context>"))
    {
        list.insert(0, pre.clone());
    }
    let op = if summaries == 0 { "restore" } else { "show" };
    let line = mf_first(
        wire::view_object(op),
        Map::from_iter([("$set".to_string(), Value::Null)]),
    );
    let Some(head) = line.strip_suffix("null}") else {
        unreachable!("a line ends with its last value")
    };
    out.push(format!("{head}{{\"messages\":[{}]}}}}", list.join(",")));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignored_user_texts_are_gemini_s() {
        assert!(ignored_user_text("  /compress"));
        assert!(ignored_user_text(
            "<session_context>\nThis is the Gemini CLI."
        ));
        assert!(ignored_user_text(""));
        assert!(!ignored_user_text("fix the bug"));
    }

    #[test]
    fn a_gemini_message_reads_with_its_thoughts_and_calls() {
        let v: Value = serde_json::from_str(
            r#"{"id":"g1","type":"gemini","content":"Running.","thoughts":[{"subject":"","description":"hmm"}],"toolCalls":[{"id":"c1","name":"run_shell_command","args":{"command":"ls"},"result":[]}]}"#,
        )
        .unwrap();
        let m = marked(v.as_object().unwrap());
        assert!(m.text.starts_with("hmm"));
        assert!(m.text.contains("Running."));
        assert!(m.text.contains("[calls run_shell_command("));
        assert_eq!(m.reasoning.len(), 1);
        assert_eq!(call_ids(v.as_object().unwrap()), vec!["c1".to_string()]);
    }

    #[test]
    fn a_function_response_is_a_tool_result() {
        let v: Value = serde_json::from_str(
            r#"{"id":"u2","type":"user","content":[{"functionResponse":{"id":"c1","name":"read_file","response":{"output":"hello\n"}}}]}"#,
        )
        .unwrap();
        let o = v.as_object().unwrap();
        assert_eq!(response_ids(o.get("content")), vec!["c1".to_string()]);
        assert_eq!(text(o), "hello\n");
        assert_eq!(chat_message(o)["role"], "tool");
    }
}
