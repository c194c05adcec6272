//! The GitHub Copilot CLI session format (`~/.copilot/session-state/<session>/events.jsonl`):
//! one event a line, `{type, data, id, timestamp, parentId}`. What the model saw is the
//! `user.message` events (each a real prompt: it starts a turn), the `assistant.message` events
//! (text, reasoning, `toolRequests`) and the `tool.execution_complete` events (a result, paired
//! with its request by `toolCallId`); `system.message` is prompt state and every other event
//! (turn and tool starts, usage, `model.*`, `session.*`) is not content. Copilot's own
//! successful `session.compaction_complete` is a floor: from there on the model sees its
//! `summaryContent` (in a user message Copilot builds: "Some of the conversation history has
//! been summarized…", the earlier prompts, the summary) and the messages of the events after it.
//!
//! What mf writes (verified with the real `copilot` 1.0.102 resuming against a loopback server;
//! it accepts events of types it does not know and an `mf` member in an event): its summaries
//! and records as `mf.summary` / `mf.record` events, then `session.compaction_start` and a
//! `session.compaction_complete` whose `summaryContent` is mf's summaries, then marked copies of
//! the kept events (their own bytes, new `id` and `parentId`), which Copilot sends after the
//! summary. A restore is a `session.context_cleared` (Copilot sends nothing from before it)
//! followed by copies of every event mf shows. mf reads its copies as nothing: the originals
//! are the entries.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::common::{self, fresh_uuid, iso_timestamp, mf_first};
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

/// What mf keeps of a Copilot session for writing to it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct State {
    /// The session id (`session.start`'s `data.sessionId`).
    session: Option<String>,
    /// The `id` of the last event: the `parentId` of the first line mf appends.
    last_id: Option<String>,
    /// Tool names by call id (a result does not say its tool's name).
    #[serde(default)]
    tools: HashMap<String, String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct CopilotReader {
    state: State,
    /// Entry of the last native compaction.
    native: Option<u32>,
}

impl Reader for CopilotReader {
    fn adapter(&self, _: &Build) -> Box<dyn Adapter> {
        Box::new(self.state.clone())
    }
}

fn data(obj: &Map<String, Value>) -> Option<&Map<String, Value>> {
    obj.get("data").and_then(Value::as_object)
}

fn s<'a>(m: Option<&'a Map<String, Value>>, k: &str) -> &'a str {
    m.and_then(|m| m.get(k))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The tool calls an `assistant.message` asks for: `(toolCallId, name, arguments)`.
fn requests(d: Option<&Map<String, Value>>) -> Vec<(String, String, Value)> {
    d.and_then(|d| d.get("toolRequests"))
        .and_then(Value::as_array)
        .map(|rs| {
            rs.iter()
                .filter_map(|r| {
                    Some((
                        r.get("toolCallId")?.as_str()?.to_string(),
                        r.get("name")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        r.get("arguments").cloned().unwrap_or(Value::Null),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A tool result's text: its `result.content`, or its error's message.
fn result_text(d: Option<&Map<String, Value>>) -> String {
    let Some(d) = d else { return String::new() };
    if let Some(c) = d.get("result").and_then(|r| r.get("content")) {
        return match c {
            Value::String(t) => t.clone(),
            other => common::content_text(Some(other)),
        };
    }
    match d.get("error") {
        Some(Value::String(e)) => e.clone(),
        Some(e) => e
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| e.to_string(), str::to_string),
        None => String::new(),
    }
}

/// An event's model-visible text, with its reasoning marked.
fn marked(obj: &Map<String, Value>) -> common::Marked {
    let d = data(obj);
    if obj.contains_key("mf") {
        return common::Marked::plain(s(d, "content").to_string());
    }
    match obj.get("type").and_then(Value::as_str).unwrap_or_default() {
        "user.message" => common::Marked::plain(s(d, "content").to_string()),
        "assistant.message" => {
            let mut m = common::Marked::default();
            let reasoning = s(d, "reasoningText");
            if !reasoning.is_empty() {
                m.push(reasoning, true);
            }
            let content = s(d, "content");
            if !content.is_empty() {
                m.push(content, false);
            }
            for (_, name, args) in requests(d) {
                m.push(
                    &format!("[calls {name}({})]", common::arguments_text(&args)),
                    false,
                );
            }
            m
        }
        "tool.execution_complete" => common::Marked::plain(result_text(d)),
        "session.compaction_complete" => common::Marked::plain(s(d, "summaryContent").to_string()),
        _ => common::Marked::default(),
    }
}

fn text(obj: &Map<String, Value>) -> String {
    marked(obj).text
}

impl Adapter for State {
    fn text(&self, _: usize, rows: &[Map<String, Value>]) -> String {
        text(&rows[0])
    }

    fn marked(&self, _: usize, rows: &[Map<String, Value>]) -> common::Marked {
        marked(&rows[0])
    }

    fn tool_name(&self, rows: &[Map<String, Value>]) -> Option<String> {
        let id = s(data(&rows[0]), "toolCallId");
        self.tools.get(id).cloned()
    }

    fn chat_messages(&self, _: usize, rows: &[Map<String, Value>]) -> Vec<Value> {
        let obj = &rows[0];
        let d = data(obj);
        let t = text(obj);
        if obj.contains_key("mf") {
            return vec![json!({"role": "system", "content": t})];
        }
        vec![
            match obj.get("type").and_then(Value::as_str).unwrap_or_default() {
                "assistant.message" => {
                    let calls: Vec<Value> = requests(d)
                        .into_iter()
                        .map(|(id, name, args)| {
                            json!({"id": id, "type": "function", "function": {
                                "name": name, "arguments": common::arguments_text(&args)}})
                        })
                        .collect();
                    let content = s(d, "content");
                    let mut out = json!({"role": "assistant", "content": if content.is_empty() { Value::Null } else { Value::from(content) }});
                    if !calls.is_empty() {
                        out["tool_calls"] = Value::Array(calls);
                    }
                    out
                }
                "tool.execution_complete" => json!({
                    "role": "tool",
                    "tool_call_id": s(d, "toolCallId"),
                    "content": t,
                }),
                _ => json!({"role": "user", "content": t}),
            },
        ]
    }

    fn lines(&self, t: &Transcript, w: &Write<'_>) -> Result<Vec<String>, TranscriptError> {
        lines(t, self, w).map_err(|why| t.unexpressible(why))
    }
}

impl LineReader for CopilotReader {
    type Parsed<'a> = Value;
    const STRICT: bool = false;

    /// A Copilot event has a `type` and a `data` object.
    fn may_be_line(&self, v: &Value) -> bool {
        common::is_typed_line(v, &["data"])
    }

    fn parse(&self, line: &[u8]) -> Result<Value, LineError> {
        common::parse_object(line)
    }

    fn push(&mut self, b: &mut Build, at: &At<'_>, v: Value) -> Result<(), TranscriptError> {
        let obj = v.as_object().expect("parsed as an object");
        let ty = obj.get("type").and_then(Value::as_str).unwrap_or_default();
        let d = data(obj);
        let ev_id = obj.get("id").and_then(Value::as_str);
        if let Some(id) = ev_id {
            self.state.last_id = Some(id.to_string());
        }
        let id = id_hash(ev_id.unwrap_or(&format!("line-{}", at.line)));
        if let Some(mfv) = obj.get("mf") {
            // A summary, a record, or a view line (mf's compaction events and its copies of
            // Copilot's events, which stand for the originals and are no entries of their own).
            mf::read(b, at, mfv, |kind| {
                let shape_ok = if ty == "mf.summary" {
                    Ok(())
                } else {
                    Err(
                        "in a Copilot CLI session mf writes its summaries as `mf.summary` events"
                            .into(),
                    )
                };
                ClaimFields::in_object(d, Role::Tool, kind, Vec::new(), shape_ok)
            });
            return Ok(());
        }
        // A sub-agent's events (the `task` tool's: `agentId` on the event, `parentToolCallId` in
        // its data) are not the main conversation: its model sees only the task's result.
        let sub = obj
            .get("agentId")
            .and_then(Value::as_str)
            .is_some_and(|a| !a.is_empty())
            || d.and_then(|d| d.get("parentToolCallId"))
                .and_then(Value::as_str)
                .is_some();
        if sub {
            return Ok(());
        }
        let entry = |b: &mut Build, role: Role, flags: u8, calls: &[u64], answers: &[u64]| {
            b.entry(
                at,
                NewEntry {
                    role,
                    flags,
                    chars: text(obj).chars().count() as u32,
                    id,
                    calls,
                    answers,
                },
            )
        };
        match ty {
            "session.start" | "session.resume" => {
                if ty == "session.start" && self.state.session.is_none() {
                    self.state.session = Some(s(d, "sessionId").to_string());
                }
                if let Some(m) = d
                    .and_then(|d| d.get("selectedModel"))
                    .and_then(Value::as_str)
                {
                    b.agent_model(m);
                }
            }
            "user.message" => {
                entry(b, Role::User, flag::TURN_START, &[], &[]);
            }
            "assistant.message" => {
                let reqs = requests(d);
                let calls: Vec<u64> = reqs.iter().map(|(id, _, _)| id_hash(id)).collect();
                for (id, name, _) in reqs {
                    self.state.tools.insert(id, name);
                }
                entry(b, Role::Assistant, 0, &calls, &[]);
            }
            "tool.execution_complete" => {
                let call = s(d, "toolCallId");
                let answers = if call.is_empty() {
                    Vec::new()
                } else {
                    vec![id_hash(call)]
                };
                entry(b, Role::Tool, 0, &[], &answers);
            }
            "session.compaction_complete"
                if d.and_then(|d| d.get("success")).and_then(Value::as_bool) == Some(true) =>
            {
                // Copilot's own compaction: from here on, its summary replaces what came before.
                for e in &mut b.entries {
                    e.flags |= flag::UNSEEN | flag::HISTORY;
                }
                let i = entry(b, Role::User, flag::NATIVE_SUMMARY | flag::PINNED, &[], &[]);
                self.native = Some(i);
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

/// A marked copy of entry `i`'s event: its own bytes, member by member, with a new `id` and
/// `parentId` and mf's `view`/`copy` object first.
fn copy_of(t: &Transcript, i: u32, id: &str, parent: &str) -> Result<String, String> {
    let line = t.entries[i as usize].line;
    let texts = t.json_texts(i as usize).map_err(|e| e.to_string())?;
    let text = texts
        .into_iter()
        .next()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(|| format!("line {line} is not UTF-8 JSON"))?;
    let obj = json_span::top_object(&text).map_err(|e| format!("line {line}: {e}"))?;
    let old = obj
        .get("id")
        .map(|(_, m)| json_span::decode_string(&text[m.value.clone()]))
        .unwrap_or_default();
    let mfo = serde_json::to_string(
        &json!({"v": wire::VERSION, "kind": "view", "op": "copy", "of": old}),
    )
    .expect("an mf object serializes");
    let mut out = format!("{{\"mf\":{mfo}");
    let mut set = [("id", id, false), ("parentId", parent, false)];
    for m in &obj.members {
        if m.key == "mf" {
            continue;
        }
        out.push(',');
        match set.iter_mut().find(|(k, _, _)| *k == m.key) {
            Some((_, v, done)) => {
                out.push_str(&text[m.start..m.value.start]);
                out.push_str(&Value::from(*v).to_string());
                *done = true;
            }
            None => out.push_str(&text[m.start..m.value.end]),
        }
    }
    for (k, v, done) in set {
        if !done {
            out.push_str(&format!(",{}:{}", Value::from(k), Value::from(v)));
        }
    }
    out.push('}');
    Ok(out)
}

/// The lines that write a `Write` to a Copilot session.
fn lines(t: &Transcript, st: &State, w: &Write<'_>) -> Result<Vec<String>, String> {
    let mut stamp = w.now_ms;
    let mut parent = st.last_id.clone();
    let mut event = |mfv: Value, ty: &str, data: Value| {
        let id = fresh_uuid();
        let mut m = Map::new();
        m.insert("type".into(), Value::from(ty));
        m.insert("data".into(), data);
        m.insert("id".into(), Value::from(id.clone()));
        m.insert("timestamp".into(), Value::from(iso_timestamp(stamp)));
        m.insert(
            "parentId".into(),
            parent.clone().map_or(Value::Null, Value::from),
        );
        stamp += 1;
        parent = Some(id);
        mf_first(mfv, m)
    };
    let mut out = Vec::new();
    for d in w.drafts {
        if d.kind == ClaimKind::Stub {
            return Err("a Copilot CLI session cannot show a stub in place of a tool result, so --strategy mask does not apply to it".into());
        }
        out.push(event(
            mf::claim_value(d),
            "mf.summary",
            json!({"id": d.id, "content": d.content}),
        ));
    }
    for (kind, at_ms) in w.records {
        out.push(event(
            mf::record_value(kind, *at_ms),
            "mf.record",
            json!({}),
        ));
    }
    let Some(shown) = w.shown else {
        return Ok(out);
    };
    let mut summaries: Vec<String> = Vec::new();
    // Copilot's own summary (what lies before the floor) goes first, as recall shows it.
    let mut native: Vec<String> = Vec::new();
    let mut kept: Vec<u32> = Vec::new();
    for sh in shown {
        let summary = match sh {
            Shown::New(d) => Some(w.drafts[*d].content.clone()),
            Shown::Existing(i) => {
                let e = &t.entries[*i as usize];
                if e.claim != NONE {
                    if t.claims[e.claim as usize].kind == ClaimKind::Stub {
                        return Err(
                            "a Copilot CLI session cannot show a stub in place of a tool result"
                                .into(),
                        );
                    }
                    Some(t.text(*i as usize).map_err(|e| e.to_string())?)
                } else if e.has(flag::NATIVE_SUMMARY) && kept.is_empty() {
                    native.push(t.text(*i as usize).map_err(|e| e.to_string())?);
                    continue;
                } else if e.has(flag::NATIVE_SUMMARY) {
                    Some(t.text(*i as usize).map_err(|e| e.to_string())?)
                } else {
                    None
                }
            }
        };
        match (summary, sh) {
            (Some(text), _) if kept.is_empty() => summaries.push(text),
            (Some(_), _) => {
                return Err("Copilot CLI shows its summary before the messages it keeps, and this would leave a summary after kept messages".into());
            }
            (None, Shown::Existing(i)) => kept.push(*i),
            (None, Shown::New(_)) => unreachable!(),
        }
    }
    native.append(&mut summaries);
    let summaries = native;
    if summaries.is_empty() {
        // Nothing stands: Copilot sends nothing from before a cleared context, then the copies.
        out.push(event(
            wire::view_object("restore"),
            "session.context_cleared",
            json!({"messagesCleared": 0}),
        ));
    } else {
        let text = summaries.join("\n\n");
        out.push(event(
            wire::view_object("show"),
            "session.compaction_start",
            json!({"trigger": "manual", "currentTokens": w.tokens_before}),
        ));
        out.push(event(
            wire::view_object("show"),
            "session.compaction_complete",
            json!({"success": true, "outcome": "applied", "preCompactionTokens": w.tokens_before,
                   "summaryContent": text, "trigger": "manual"}),
        ));
    }
    for i in kept {
        let id = fresh_uuid();
        out.push(copy_of(
            t,
            i,
            &id,
            parent.as_deref().expect("a line was written before"),
        )?);
        parent = Some(id);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(s: &str) -> Map<String, Value> {
        serde_json::from_str(s).unwrap()
    }

    #[test]
    fn an_assistant_message_shows_its_reasoning_text_and_calls() {
        let o = obj(
            r#"{"type":"assistant.message","data":{"messageId":"m","content":"Running.","reasoningText":"think","toolRequests":[{"toolCallId":"c1","name":"bash","arguments":{"command":"ls"}}]},"id":"e","timestamp":"t","parentId":null}"#,
        );
        let m = marked(&o);
        assert!(m.text.starts_with("think"));
        assert!(m.text.contains("Running."));
        assert!(m.text.contains("[calls bash("));
        assert_eq!(m.reasoning.len(), 1);
        assert_eq!(&m.text[m.reasoning[0].clone()], "think");
        assert_eq!(requests(data(&o))[0].0, "c1");
    }

    #[test]
    fn a_tool_result_is_its_content_or_its_error() {
        let ok = obj(
            r#"{"type":"tool.execution_complete","data":{"toolCallId":"c1","success":true,"result":{"content":"hi\n"}},"id":"e","timestamp":"t","parentId":null}"#,
        );
        assert_eq!(text(&ok), "hi\n");
        let err = obj(
            r#"{"type":"tool.execution_complete","data":{"toolCallId":"c1","success":false,"error":{"message":"denied"}},"id":"e","timestamp":"t","parentId":null}"#,
        );
        assert_eq!(text(&err), "denied");
    }
}
