//! The pi coding-agent session format. Line 1 is the `session` header; v1 is a linear list of
//! entries, v2 and v3 a tree of `id`/`parentId` whose leaf is the last entry. `message` entries
//! with role `user` or `bashExecution` start turns; `toolCall` blocks pair with `toolResult`
//! messages by id; pi's own `compaction` is a floor (what lies before its first kept entry is
//! already summarized by pi). pi 1.6's `system` messages are prompt state, not entries; its
//! `context_edit`s hide or replace their targets as pi applies them; `usage` is not content.
//!
//! What mf writes (verified against pi's own session loader): its summaries as `custom` entries
//! (never sent to the model), then a `compaction` entry parented on the leaf whose summary is
//! mf's standing summaries and whose first kept entry starts what mf's recall shows verbatim —
//! so pi builds [mf's summaries, the kept entries, …]; the compaction carries pi's replayed
//! prompt and tools (`systemMessage`). Undo writes what pi needs to show the originals again: a
//! branch back to before mf's first compaction, with marked copies of what pi wrote after it.
//! A stub is shown by a `context_edit` (pi 1.6 on) replacing its result's content, and the result
//! again by one putting the original content back; a write that changes only stubs writes no
//! compaction.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::common::{self, fresh_hex8, iso_timestamp, mf_first};
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

/// What a pi node is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Kind {
    Header,
    /// Has an mf entry (a message, a summary node, or mf's claim).
    Entry,
    /// pi's own compaction, and the system checkpoint it carries (pi 1.6's `systemMessage`).
    Native {
        first_kept_id: Option<String>,
        first_kept_index: Option<u32>,
        system: Option<String>,
    },
    /// A line mf wrote for pi to show: a compaction (what it keeps, its system checkpoint) or an
    /// undo marker.
    MfView {
        compaction: bool,
        first_kept_id: Option<String>,
        system: Option<String>,
    },
    /// pi 1.6's prompt state: a message of role `system` (as JSON text). pi replays every one into
    /// the request's system prompt and tools; it is not conversation (pi's own compaction leaves
    /// it out of what it summarizes and carries its replay in the compaction entry).
    System(String),
    /// mf's `context_edit` (a view line): shows a stub in place of the tool result `target`
    /// (`stub`), or that result again.
    MfEdit {
        target: String,
        stub: bool,
    },
    /// pi 1.6's `context_edit`: hides (`None`) or replaces (the new content, as JSON text) an
    /// earlier entry in what pi sends.
    Edit {
        target: String,
        replacement: Option<String>,
    },
    Other,
}

impl Kind {
    /// A compaction entry (pi's or mf's): the newest on the path decides what pi sends.
    fn compaction(&self) -> Option<(Option<&str>, Option<&str>)> {
        match self {
            Kind::Native {
                first_kept_id,
                system,
                ..
            }
            | Kind::MfView {
                compaction: true,
                first_kept_id,
                system,
            } => Some((first_kept_id.as_deref(), system.as_deref())),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Node {
    id: Option<String>,
    parent: Option<String>,
    kind: Kind,
    /// The mf entry, for `Kind::Entry` and `Kind::Native`.
    entry: u32,
    /// Index among the file's parsed entries (header = 0): pi's v1 `firstKeptEntryIndex`.
    parsed: u32,
    /// The message role pi gives an entry (`custom` for a `custom_message`): what a
    /// `context_edit` may replace.
    #[serde(default)]
    role: Option<String>,
    /// Written by mf for itself (a claim, a record, a view): not the agent's.
    #[serde(default)]
    mf: bool,
    /// Where the line's bytes are (`None` for a line rejoined from pieces).
    #[serde(default)]
    at: Option<(u64, u32)>,
}

/// The `op` of mf's copy of one of pi's entries (a restore after pi went on from mf's compaction).
const COPY: &str = "copy";

/// Whether a line is mf's copy of one of pi's entries (read as that entry).
fn is_copy(obj: &Map<String, Value>) -> bool {
    obj.get("mf").is_some_and(|mf| {
        mf.get("kind") == Some(&json!("view")) && mf.get("op") == Some(&json!(COPY))
    })
}

/// One of pi's lines after mf's first compaction on the path: its id and where its bytes are.
#[derive(Debug, Clone)]
struct Later {
    id: Option<String>,
    at: Option<(u64, u32)>,
}

/// What mf keeps of a pi session for writing to it.
#[derive(Debug, Clone, Default)]
pub struct State {
    /// pi's current prompt and tools, replayed as pi does from the system messages it sends now
    /// (pi 1.6); written as the `systemMessage` of mf's compaction so that pi keeps its prompt
    /// and appends no new system entry.
    system: Option<Value>,
    /// Entries a `context_edit` replaces in what pi sends: the content pi sends instead.
    replaced: HashMap<u32, Value>,
    pub version: u64,
    /// pi's leaf: the id of the last entry (v2+).
    leaf: Option<String>,
    ids: HashSet<String>,
    /// Per mf entry: its pi id and parsed index.
    entry_ids: Vec<(Option<String>, u32)>,
    /// Parsed entries in the file (the next one's index).
    parsed: u32,
    /// The entries whose result pi sends as a stub of mf's now: mf's latest `context_edit` of
    /// each in what pi sends shows a stub.
    stubbed: HashSet<u32>,
    /// The first mf view compaction on the active path, and whether only mf's own lines follow it.
    /// With the parent of that compaction, pi's own lines after it on the path.
    first_view: Option<(Option<String>, Vec<Later>)>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct PiReader {
    nodes: Vec<Node>,
    version: u64,
    /// The active path (node indices, root first), as `finish` found it.
    #[serde(skip)]
    path: Vec<usize>,
    /// What `finish` found the `context_edit`s replace: entry, content pi sends.
    #[serde(skip)]
    replaced: HashMap<u32, Value>,
}

impl LineReader for PiReader {
    type Parsed<'a> = Value;
    const STRICT: bool = false;

    /// A pi line has a `type` and a `timestamp` (content blocks nested in one have no `timestamp`).
    fn may_be_line(&self, v: &Value) -> bool {
        super::common::is_typed_line(v, &["timestamp"])
    }

    fn parse(&self, line: &[u8]) -> Result<Value, LineError> {
        super::common::parse_object(line)
    }

    fn push(&mut self, b: &mut Build, at: &At<'_>, v: Value) -> Result<(), TranscriptError> {
        let obj = v.as_object().expect("parsed as an object");
        let parsed = self.nodes.len() as u32;
        let s = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
        let mut node = Node {
            id: s("id"),
            parent: s("parentId"),
            kind: Kind::Other,
            entry: NONE,
            parsed,
            role: None,
            mf: false,
            at: at.pieces.is_none().then_some((at.pos, at.len)),
        };
        let ty = obj.get("type").and_then(Value::as_str).unwrap_or_default();
        // A copy mf wrote of one of pi's entries (see `lines`) is read as that entry.
        if let Some(mf) = obj.get("mf").filter(|_| !is_copy(obj)) {
            node.mf = true;
            let seen = mf::read(b, at, mf, |kind| {
                let shape_ok = if ty == "custom" {
                    Ok(())
                } else {
                    Err("in a pi session mf writes its summaries as `custom` entries".into())
                };
                let data = obj.get("data").and_then(Value::as_object);
                let answers = data
                    .and_then(|d| d.get("toolCallId"))
                    .and_then(Value::as_str)
                    .map(id_hash)
                    .into_iter()
                    .collect();
                ClaimFields::in_object(data, Role::Tool, kind, answers, shape_ok)
            });
            match seen {
                mf::Seen::Claim(i) => {
                    node.kind = Kind::Entry;
                    node.entry = i;
                }
                mf::Seen::View if ty == "context_edit" => {
                    node.kind = Kind::MfEdit {
                        target: s("targetId").unwrap_or_default(),
                        stub: mf.get("op") == Some(&json!("show")),
                    }
                }
                mf::Seen::View => {
                    node.kind = Kind::MfView {
                        compaction: ty == "compaction",
                        first_kept_id: s("firstKeptEntryId"),
                        system: obj.get("systemMessage").map(Value::to_string),
                    }
                }
                mf::Seen::Record | mf::Seen::Unknown => {}
            }
            self.nodes.push(node);
            return Ok(());
        }
        match ty {
            "session" => {
                self.version = obj.get("version").and_then(Value::as_u64).unwrap_or(1);
                node.kind = Kind::Header;
            }
            "message"
                if obj
                    .get("message")
                    .and_then(|m| m.get("role"))
                    .and_then(Value::as_str)
                    == Some("system") =>
            {
                node.kind = Kind::System(obj["message"].to_string());
            }
            "context_edit" => node.kind = edit(obj).unwrap_or(Kind::Other),
            "message" => message(b, at, obj, &mut node),
            "compaction" => {
                let i = b.entry(
                    at,
                    NewEntry {
                        role: Role::System,
                        flags: flag::NATIVE_SUMMARY,
                        chars: text(obj).chars().count() as u32,
                        id: node_id_hash(&node, at.line),
                        calls: &[],
                        answers: &[],
                    },
                );
                node.kind = Kind::Native {
                    first_kept_id: s("firstKeptEntryId"),
                    first_kept_index: obj
                        .get("firstKeptEntryIndex")
                        .and_then(Value::as_u64)
                        .map(|n| n as u32),
                    system: obj.get("systemMessage").map(Value::to_string),
                };
                node.entry = i;
            }
            "branch_summary" | "custom_message" => {
                if ty == "custom_message" {
                    node.role = Some("custom".into());
                }
                let i = b.entry(
                    at,
                    NewEntry {
                        role: Role::User,
                        flags: 0,
                        chars: text(obj).chars().count() as u32,
                        id: node_id_hash(&node, at.line),
                        calls: &[],
                        answers: &[],
                    },
                );
                node.kind = Kind::Entry;
                node.entry = i;
            }
            _ => {}
        }
        self.nodes.push(node);
        Ok(())
    }

    fn finish(&mut self, b: &mut Build) -> Result<(), TranscriptError> {
        let version = self.version.max(1);
        // The active path: v1 is linear; v2+ walks parentId from the leaf (the last entry).
        let on_path: Vec<bool> = if version < 2 {
            vec![true; self.nodes.len()]
        } else {
            let by_id: HashMap<&str, usize> = self
                .nodes
                .iter()
                .enumerate()
                .filter_map(|(k, n)| n.id.as_deref().map(|id| (id, k)))
                .collect();
            let mut on = vec![false; self.nodes.len()];
            if let Some(header) = self.nodes.iter().position(|n| n.kind == Kind::Header) {
                on[header] = true;
            }
            let mut cur = self
                .nodes
                .iter()
                .rposition(|n| n.id.is_some() && n.kind != Kind::Header);
            let mut guard = 0;
            while let Some(k) = cur {
                if on[k] || guard > self.nodes.len() {
                    break; // a cycle: stop
                }
                on[k] = true;
                guard += 1;
                cur = self.nodes[k]
                    .parent
                    .as_deref()
                    .and_then(|p| by_id.get(p).copied());
            }
            on
        };
        for (k, n) in self.nodes.iter().enumerate() {
            if !on_path[k] && n.entry != NONE {
                b.entries[n.entry as usize].flags |= flag::UNSEEN;
            }
        }
        // pi's own last compaction on the path is a floor.
        let path: Vec<usize> = (0..self.nodes.len()).filter(|&k| on_path[k]).collect();
        self.path = path.clone();
        self.apply_edits(b);
        let last_native = path
            .iter()
            .rposition(|&k| matches!(self.nodes[k].kind, Kind::Native { .. }));
        if let Some(pn) = last_native {
            let native = &self.nodes[path[pn]];
            let Kind::Native {
                first_kept_id,
                first_kept_index,
                ..
            } = &native.kind
            else {
                unreachable!()
            };
            let kept_at = path[..pn].iter().position(|&k| {
                let n = &self.nodes[k];
                match (first_kept_id, first_kept_index) {
                    (Some(id), _) => n.id.as_deref() == Some(id.as_str()),
                    (None, Some(ix)) => n.parsed == *ix,
                    _ => false,
                }
            });
            let kept_at = kept_at.unwrap_or(pn);
            for &k in &path[..kept_at] {
                let n = &self.nodes[k];
                if n.entry != NONE {
                    b.entries[n.entry as usize].flags |= flag::UNSEEN | flag::HISTORY;
                }
            }
            // Earlier compactions between the kept point and this one are superseded.
            for &k in &path[kept_at..pn] {
                if matches!(self.nodes[k].kind, Kind::Native { .. }) {
                    b.entries[self.nodes[k].entry as usize].flags |= flag::UNSEEN | flag::HISTORY;
                }
            }
            // The summary stands before the first entry it kept.
            if let Some(&first) = path[kept_at..pn].iter().find(|&&k| {
                self.nodes[k].entry != NONE && matches!(self.nodes[k].kind, Kind::Entry)
            }) {
                b.placements.push((native.entry, self.nodes[first].entry));
            }
        }
        // Earlier native compactions before the floor are history too.
        for (idx, &k) in path.iter().enumerate() {
            if last_native.is_some_and(|pn| idx < pn)
                && matches!(self.nodes[k].kind, Kind::Native { .. })
            {
                b.entries[self.nodes[k].entry as usize].flags |= flag::UNSEEN | flag::HISTORY;
            }
        }
        b.placements.sort_by_key(|&(_, before)| before);
        Ok(())
    }
}

/// A `context_edit` that names its target and what becomes of it.
fn edit(obj: &Map<String, Value>) -> Option<Kind> {
    // `replacement: null` hides the target; `{content}` replaces its content.
    let replacement = match obj.get("replacement") {
        Some(Value::Null) => Some(None),
        Some(r) => r
            .get("content")
            .filter(|c| c.is_string() || c.is_array())
            .map(|c| Some(c.to_string())),
        None => None,
    };
    let target = obj.get("targetId").and_then(Value::as_str)?.to_string();
    Some(Kind::Edit {
        target,
        replacement: replacement?,
    })
}

/// A `message` entry (not a system message): a prompt, a reply, a tool result.
fn message(b: &mut Build, at: &At<'_>, obj: &Map<String, Value>, node: &mut Node) {
    let m = obj.get("message").and_then(Value::as_object);
    let role = m
        .and_then(|m| m.get("role"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let (mrole, turn) = match role {
        "user" | "bashExecution" => (Role::User, true),
        "assistant" => (Role::Assistant, false),
        "toolResult" => (Role::Tool, false),
        _ => (Role::User, false),
    };
    let excluded = m
        .and_then(|m| m.get("excludeFromContext"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let calls: Vec<u64> = m
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .map(|blocks| {
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
                .filter_map(|b| b.get("id").and_then(Value::as_str))
                .map(id_hash)
                .collect()
        })
        .unwrap_or_default();
    let answers: Vec<u64> = if role == "toolResult" {
        m.and_then(|m| m.get("toolCallId"))
            .and_then(Value::as_str)
            .map(id_hash)
            .into_iter()
            .collect()
    } else {
        Vec::new()
    };
    if role == "assistant"
        && let Some(model) = m.and_then(|m| m.get("model")).and_then(Value::as_str)
    {
        b.agent_model(model);
    }
    let i = b.entry(
        at,
        NewEntry {
            role: mrole,
            flags: if excluded {
                flag::UNSEEN
            } else if turn {
                flag::TURN_START
            } else {
                0
            },
            chars: text(obj).chars().count() as u32,
            id: node_id_hash(node, at.line),
            calls: &calls,
            answers: &answers,
        },
    );
    node.kind = Kind::Entry;
    node.entry = i;
    node.role = Some(role.to_string());
}

fn node_id_hash(node: &Node, line: u32) -> u64 {
    match &node.id {
        Some(id) => id_hash(id),
        None => id_hash(&format!("line-{line}")),
    }
}

impl PiReader {
    /// The newest compaction (pi's or mf's) on `self.path[..upto]`: its place on the path, and
    /// where what it keeps begins (its own place when it keeps nothing).
    fn context_at(&self, upto: usize) -> Option<(usize, usize)> {
        let path = &self.path;
        let c = path[..upto]
            .iter()
            .rposition(|&k| self.nodes[k].kind.compaction().is_some())?;
        let first = self.nodes[path[c]].kind.compaction().and_then(|(f, _)| f);
        let k = first
            .and_then(|id| {
                path[..c]
                    .iter()
                    .position(|&j| self.nodes[j].id.as_deref() == Some(id))
            })
            .unwrap_or(c);
        Some((c, k))
    }

    /// `context_edit`s, as pi applies them: an edit counts when it and its target are both in
    /// what pi sends (the newest compaction's kept run and what follows it), the latest one
    /// for a target winning. An edit that hid or replaced its target when it was written keeps
    /// doing so once a later compaction leaves the target out (mf's fold could not cover what
    /// was hidden). A hidden entry is not seen; a replaced one is read with the new content.
    fn apply_edits(&mut self, b: &mut Build) {
        self.replaced.clear();
        let path = &self.path;
        let at: HashMap<&str, usize> = path
            .iter()
            .enumerate()
            .filter_map(|(p, &k)| self.nodes[k].id.as_deref().map(|id| (id, p)))
            .collect();
        let in_context = |ctx: Option<(usize, usize)>, t: usize| match ctx {
            None => true,
            Some((c, k)) => t > c || (k <= t && t < c),
        };
        let now = self.context_at(path.len());
        let mut effect: Vec<(usize, Option<&str>)> = Vec::new();
        for (e, &k) in path.iter().enumerate() {
            let Kind::Edit {
                target,
                replacement,
            } = &self.nodes[k].kind
            else {
                continue;
            };
            let Some(&t) = at.get(target.as_str()).filter(|&&t| t < e) else {
                continue;
            };
            let then = self.context_at(e);
            if (in_context(now, e) && in_context(now, t))
                || (!in_context(now, t) && in_context(then, t))
            {
                effect.retain(|&(x, _)| x != t);
                effect.push((t, replacement.as_deref()));
            }
        }
        for (t, replacement) in effect {
            let n = &self.nodes[path[t]];
            if n.kind != Kind::Entry || n.entry == NONE {
                continue;
            }
            let e = &mut b.entries[n.entry as usize];
            let Some(json) = replacement else {
                e.flags |= flag::UNSEEN;
                continue;
            };
            // pi replaces the content of user, assistant, tool-result and custom messages only;
            // a string becomes one text block for the roles whose content is a block array.
            let role = n.role.as_deref().unwrap_or_default();
            if !matches!(role, "user" | "assistant" | "toolResult" | "custom") {
                continue;
            }
            let Ok(mut content) = serde_json::from_str::<Value>(json) else {
                continue;
            };
            if let (true, Value::String(text)) =
                (matches!(role, "assistant" | "toolResult"), &content)
            {
                content = json!([{"type": "text", "text": text}]);
            }
            e.chars = blocks_text(Some(&content)).chars().count() as u32;
            self.replaced.insert(n.entry, content);
        }
    }

    /// pi's current prompt and tools: the replay of the system messages pi sends now (the
    /// newest compaction's checkpoint, then the system entries after it; without a compaction,
    /// every one on the path).
    fn current_system(&self) -> Option<Value> {
        let parse = |j: &str| serde_json::from_str::<Value>(j).ok();
        let mut msgs: Vec<Value> = Vec::new();
        let from = match self.context_at(self.path.len()) {
            Some((c, _)) => {
                if let Some(sys) = self.nodes[self.path[c]]
                    .kind
                    .compaction()
                    .and_then(|(_, s)| s)
                {
                    msgs.extend(parse(sys));
                }
                c + 1
            }
            None => 0,
        };
        for &k in &self.path[from..] {
            if let Kind::System(m) = &self.nodes[k].kind {
                msgs.extend(parse(m));
            }
        }
        replay_system(&msgs)
    }

    /// The entries mf's own `context_edit`s show as stubs, as pi applies edits: the latest edit
    /// of a target among what pi sends (the newest compaction's kept run and what follows it).
    fn mf_stubbed(&self) -> HashSet<u32> {
        let path = &self.path;
        let entry_of: HashMap<&str, u32> = path
            .iter()
            .filter_map(|&k| {
                let n = &self.nodes[k];
                (n.entry != NONE).then_some(())?;
                Some((n.id.as_deref()?, n.entry))
            })
            .collect();
        let ctx = self.context_at(path.len());
        let mut stubbed = HashSet::new();
        for (p, &k) in path.iter().enumerate() {
            let Kind::MfEdit { target, stub } = &self.nodes[k].kind else {
                continue;
            };
            let in_context = match ctx {
                None => true,
                Some((c, first)) => p > c || (first <= p && p < c),
            };
            let Some(&e) = entry_of.get(target.as_str()).filter(|_| in_context) else {
                continue;
            };
            if *stub {
                stubbed.insert(e);
            } else {
                stubbed.remove(&e);
            }
        }
        stubbed
    }

    /// What mf keeps for writing.
    fn state(&self, entries: usize) -> State {
        let version = self.version.max(1);
        let mut entry_ids = vec![(None, 0); entries];
        let mut ids = HashSet::new();
        for n in &self.nodes {
            if let Some(id) = &n.id {
                ids.insert(id.clone());
            }
            if n.entry != NONE {
                entry_ids[n.entry as usize] = (n.id.clone(), n.parsed);
            }
        }
        let leaf = self
            .nodes
            .iter()
            .rev()
            .find(|n| n.id.is_some() && n.kind != Kind::Header)
            .and_then(|n| n.id.clone());
        // The first of mf's view compactions on the path from the leaf, and pi's lines after it.
        let first_view = self
            .path
            .iter()
            .position(|&k| {
                matches!(
                    self.nodes[k].kind,
                    Kind::MfView {
                        compaction: true,
                        ..
                    }
                )
            })
            .map(|p| {
                let later = self.path[p + 1..]
                    .iter()
                    .map(|&j| &self.nodes[j])
                    .filter(|n| !n.mf)
                    .map(|n| Later {
                        id: n.id.clone(),
                        at: n.at,
                    })
                    .collect();
                (self.nodes[self.path[p]].parent.clone(), later)
            });
        State {
            stubbed: self.mf_stubbed(),
            system: self.current_system(),
            replaced: self.replaced.clone(),
            version,
            leaf,
            ids,
            entry_ids,
            parsed: self.nodes.len() as u32,
            first_view,
        }
    }
}

/// pi's `getCurrentSystemMessage`: every system message replayed into one — non-empty contents
/// joined by blank lines, `sections` patched by name (`null` removes one), tools removed and
/// added in order — with the first message's timestamp; none when there is neither a timestamp
/// nor a tool.
fn replay_system(msgs: &[Value]) -> Option<Value> {
    let mut content: Vec<String> = Vec::new();
    let mut sections = Map::new();
    let mut tools = Map::new();
    let mut timestamp: Option<Value> = None;
    for m in msgs {
        if timestamp.is_none() {
            timestamp = m.get("timestamp").filter(|t| !t.is_null()).cloned();
        }
        let text = match m.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Array(blocks)) => blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        };
        if !text.is_empty() {
            content.push(text);
        }
        if let Some(Value::Object(patch)) = m.get("sections") {
            for (name, v) in patch {
                if v.is_null() {
                    sections.shift_remove(name);
                } else {
                    sections.insert(name.clone(), v.clone());
                }
            }
        }
        let name = |t: &Value| t.get("name").and_then(Value::as_str).map(str::to_string);
        for t in m
            .get("toolsRemoved")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(n) = name(t) {
                tools.shift_remove(&n);
            }
        }
        for t in m
            .get("toolsAdded")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(n) = name(t) {
                tools.insert(n, t.clone());
            }
        }
    }
    if timestamp.is_none() && tools.is_empty() {
        return None;
    }
    let mut out = Map::new();
    out.insert("role".into(), Value::from("system"));
    out.insert("content".into(), Value::from(content.join("\n\n")));
    if !sections.is_empty() {
        out.insert("sections".into(), Value::Object(sections));
    }
    if !tools.is_empty() {
        out.insert(
            "toolsAdded".into(),
            Value::Array(tools.into_iter().map(|(_, t)| t).collect()),
        );
    }
    out.insert("timestamp".into(), timestamp.unwrap_or(Value::from(0)));
    Some(Value::Object(out))
}

impl Reader for PiReader {
    fn adapter(&self, b: &Build) -> Box<dyn Adapter> {
        Box::new(self.state(b.entries.len()))
    }
}

impl Adapter for State {
    /// As pi sends it (a `context_edit` may replace its content).
    fn text(&self, entry: usize, rows: &[Map<String, Value>]) -> String {
        text(&as_sent(self, entry, &rows[0]))
    }

    fn marked(&self, entry: usize, rows: &[Map<String, Value>]) -> common::Marked {
        marked(&as_sent(self, entry, &rows[0]))
    }

    fn tool_name(&self, rows: &[Map<String, Value>]) -> Option<String> {
        tool_name(&rows[0])
    }

    fn chat_messages(&self, entry: usize, rows: &[Map<String, Value>]) -> Vec<Value> {
        vec![chat_message(&as_sent(self, entry, &rows[0]))]
    }

    fn lines(&self, t: &Transcript, w: &Write<'_>) -> Result<Vec<String>, TranscriptError> {
        lines(t, self, w).map_err(|why| t.unexpressible(why))
    }
}

/// A line as pi sends it: with the content a `context_edit` put in place of its own.
fn as_sent<'a>(
    st: &State,
    entry: usize,
    obj: &'a Map<String, Value>,
) -> Cow<'a, Map<String, Value>> {
    let Some(content) = st.replaced.get(&(entry as u32)) else {
        return Cow::Borrowed(obj);
    };
    let mut o = obj.clone();
    if o.get("type").and_then(Value::as_str) == Some("custom_message") {
        o.insert("content".into(), content.clone());
    } else if let Some(Value::Object(m)) = o.get_mut("message") {
        m.insert("content".into(), content.clone());
    }
    Cow::Owned(o)
}

fn blocks_text(content: Option<&Value>) -> String {
    blocks_marked(content).text
}

/// [`blocks_text`], its thinking blocks marked as reasoning.
fn blocks_marked(content: Option<&Value>) -> common::Marked {
    match content {
        Some(Value::Array(blocks)) => {
            let mut t = common::Marked::default();
            for b in blocks {
                let piece = match b.get("type").and_then(Value::as_str) {
                    Some("text") => b
                        .get("text")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    Some("thinking") => b
                        .get("thinking")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    Some("toolCall") => format!(
                        "[calls {}({})]",
                        b.get("name").and_then(Value::as_str).unwrap_or("?"),
                        b.get("arguments")
                            .map(common::arguments_text)
                            .unwrap_or_default()
                    ),
                    Some("image") => common::image_placeholder(
                        b.get("mimeType").and_then(Value::as_str),
                        b.get("data")
                            .and_then(Value::as_str)
                            .map(common::base64_size),
                    ),
                    _ => common::content_text(Some(&Value::Array(vec![b.clone()]))),
                };
                let thinking = b.get("type").and_then(Value::as_str) == Some("thinking");
                t.push(&piece, thinking);
            }
            t
        }
        other => common::Marked::plain(common::content_text(other)),
    }
}

/// The model-visible text of a pi line.
fn text(obj: &Map<String, Value>) -> String {
    marked(obj).text
}

/// [`text`], its thinking blocks marked as reasoning.
fn marked(obj: &Map<String, Value>) -> common::Marked {
    if obj.contains_key("mf") && !is_copy(obj) {
        return common::Marked::plain(
            obj.get("data")
                .and_then(|d| d.get("content"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        );
    }
    match obj.get("type").and_then(Value::as_str) {
        Some("message") => {
            let Some(m) = obj.get("message").and_then(Value::as_object) else {
                return common::Marked::default();
            };
            match m.get("role").and_then(Value::as_str) {
                Some("bashExecution") => {
                    let mut t = format!(
                        "$ {}",
                        m.get("command").and_then(Value::as_str).unwrap_or_default()
                    );
                    common::push_line(
                        &mut t,
                        m.get("output").and_then(Value::as_str).unwrap_or_default(),
                    );
                    common::Marked::plain(t)
                }
                Some("branchSummary" | "compactionSummary") => common::Marked::plain(
                    m.get("summary")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                ),
                _ => blocks_marked(m.get("content")),
            }
        }
        Some("compaction" | "branch_summary") => common::Marked::plain(
            obj.get("summary")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        ),
        Some("custom_message") => blocks_marked(obj.get("content")),
        _ => common::Marked::default(),
    }
}

/// The tool name of a tool result.
fn tool_name(obj: &Map<String, Value>) -> Option<String> {
    obj.get("message")
        .and_then(|m| m.get("toolName"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// A pi line as the chat message a model would be sent.
fn chat_message(obj: &Map<String, Value>) -> Value {
    let t = text(obj);
    if obj.contains_key("mf")
        && !is_copy(obj)
        && let Some(call) = obj.get("data").and_then(|d| d.get("toolCallId"))
    {
        // mf's stub: the result of the call it answers.
        return json!({"role": "tool", "tool_call_id": call, "content": t});
    }
    let m = obj.get("message");
    let role = m.and_then(|m| m.get("role")).and_then(Value::as_str);
    match role {
        Some("assistant") => {
            let blocks = m
                .and_then(|m| m.get("content"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let calls: Vec<Value> = blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("toolCall"))
                .map(|b| {
                    json!({"id": b.get("id"), "type": "function", "function": {
                        "name": b.get("name"),
                        "arguments": b.get("arguments").map(common::arguments_text).unwrap_or_default()}})
                })
                .collect();
            let prose: Vec<Value> = blocks
                .into_iter()
                .filter(|b| b.get("type").and_then(Value::as_str) != Some("toolCall"))
                .collect();
            let content = blocks_text(Some(&Value::Array(prose)));
            let mut out = json!({"role": "assistant", "content": if content.is_empty() { Value::Null } else { Value::from(content) }});
            if !calls.is_empty() {
                out["tool_calls"] = Value::Array(calls);
            }
            out
        }
        Some("toolResult") => json!({
            "role": "tool",
            "tool_call_id": m.and_then(|m| m.get("toolCallId")),
            "content": t,
        }),
        _ => json!({"role": "user", "content": t}),
    }
}

/// What introduces, in the summary pi sends, the prompt of a turn mf folded inside.
pub const SPLIT_TURN_PROMPT: &str = "[the request that opened the current turn, verbatim; the turn's older tool calls are summarized above and its newest follow]";

/// What a view shows, as pi can show it: its summaries (one text; the prompt of a turn folded
/// inside goes at its end, verbatim), then the kept entries, which must be the path's entries
/// from the first of them on.
fn shown_parts(
    t: &Transcript,
    w: &Write<'_>,
    shown: &[Shown],
    stubs: &mut Vec<(u32, String)>,
) -> Result<(Vec<String>, Vec<u32>), String> {
    // What pi can show: one summary, then the path from one kept entry to the leaf; a stub is
    // kept as the entry it stands in for (`stubs`: which, with the stub's text).
    let mut texts: Vec<String> = Vec::new();
    let mut kept: Vec<u32> = Vec::new();
    for s in shown {
        let stub = match s {
            Shown::New(d) => {
                let d = &w.drafts[*d];
                (d.kind == ClaimKind::Stub).then(|| (d.stub_of.unwrap_or(NONE), d.content.clone()))
            }
            Shown::Existing(i) => {
                let e = &t.entries[*i as usize];
                match (e.claim != NONE).then(|| &t.claims[e.claim as usize]) {
                    Some(c) if c.kind == ClaimKind::Stub => Some((
                        common::stubbed(t, c),
                        t.text(*i as usize).map_err(|e| e.to_string())?,
                    )),
                    _ => None,
                }
            }
        };
        if let Some((orig, content)) = stub {
            if orig == NONE {
                return Err("a stub stands in for no tool result".into());
            }
            kept.push(orig);
            stubs.push((orig, content));
            continue;
        }
        let summary = match s {
            Shown::New(d) => Some(w.drafts[*d].content.clone()),
            Shown::Existing(i) => {
                let e = &t.entries[*i as usize];
                if e.claim != NONE || e.has(flag::NATIVE_SUMMARY) {
                    Some(t.text(*i as usize).map_err(|e| e.to_string())?)
                } else {
                    None
                }
            }
        };
        match (summary, s) {
            (Some(text), _) if kept.is_empty() => texts.push(text),
            (Some(_), _) => {
                return Err("pi shows one summary before the entries it keeps, and this would leave a summary after kept entries".into());
            }
            (None, Shown::Existing(i)) => kept.push(*i),
            (None, Shown::New(_)) => unreachable!(),
        }
    }
    // The kept entries must be exactly the path's entries from the first of them on.
    let on_path = |from: u32| -> Vec<u32> {
        (from..t.entries.len() as u32)
            .filter(|&j| {
                let e = &t.entries[j as usize];
                !e.has(flag::UNSEEN) && e.claim == NONE && !e.has(flag::NATIVE_SUMMARY)
            })
            .collect()
    };
    // A fold inside a turn keeps the prompt that opened it, then the turn's newest entries: pi
    // can show only one run after its summary, so the prompt goes, verbatim, at the end of the
    // summary it sends (as pi's own split-turn compaction puts the turn's start there).
    if kept.len() > 1 && on_path(kept[0]) != kept && on_path(kept[1]) == kept[1..] {
        let (prompt, run) = (kept[0], kept[1]);
        let opens = t.entries[prompt as usize].has(flag::TURN_START)
            && !texts.is_empty()
            && on_path(prompt)
                .iter()
                .take_while(|&&j| j < run)
                .skip(1)
                .all(|&j| !t.entries[j as usize].has(flag::TURN_START));
        if opens {
            let text = t.text(prompt as usize).map_err(|e| e.to_string())?;
            texts.push(format!("{SPLIT_TURN_PROMPT}\n\n{text}"));
            kept.remove(0);
        }
    }
    if let Some(&first) = kept.first() {
        let path = on_path(first);
        if path != kept {
            return Err("pi keeps one unbroken run of entries after its summary; this fold would leave some entries out of the middle of it (--protect user, --size and oversized tool units cannot be expressed in a pi session)".into());
        }
    }
    Ok((texts, kept))
}

/// The call a tool result answers (`toolCallId`), for the stub that stands in for it.
fn result_call(t: &Transcript, orig: u32) -> Result<Value, String> {
    let rows = t.values(orig as usize).map_err(|e| e.to_string())?;
    rows.first()
        .and_then(|r| r.get("message"))
        .and_then(|m| m.get("toolCallId"))
        .cloned()
        .ok_or_else(|| {
            format!(
                "the entry on line {} a stub would stand in for is no tool result",
                t.entries[orig as usize].line
            )
        })
}

/// The content pi sends for entry `e` without mf's stub: its own, or what a `context_edit` of
/// pi's put in its place.
fn sent_content(t: &Transcript, st: &State, e: u32) -> Result<Value, String> {
    if let Some(c) = st.replaced.get(&e) {
        return Ok(c.clone());
    }
    let rows = t.values(e as usize).map_err(|e| e.to_string())?;
    Ok(rows
        .first()
        .and_then(|r| r.get("message"))
        .and_then(|m| m.get("content"))
        .cloned()
        .unwrap_or_else(|| json!([])))
}

/// A restore after pi went on from mf's compaction: a branch off `parent` (just before mf's
/// first compaction on the path) and marked copies of what pi wrote after it (`later`).
fn restore_copies(
    t: &Transcript,
    parent: &Option<String>,
    later: &[Later],
    taken: &mut HashSet<String>,
    now_ms: u64,
) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut m = Map::new();
    m.insert("type".into(), Value::from("custom"));
    m.insert("customType".into(), Value::from("mf"));
    let id = fresh_hex8(&|x: &str| taken.contains(x));
    taken.insert(id.clone());
    m.insert("id".into(), Value::from(id.clone()));
    m.insert(
        "parentId".into(),
        parent.clone().map_or(Value::Null, Value::from),
    );
    m.insert("timestamp".into(), Value::from(iso_timestamp(now_ms)));
    m.insert("data".into(), json!({"op": "restore"}));
    out.push(mf_first(wire::view_object("restore"), m));
    let mut prev = id;
    let mut renamed: HashMap<String, String> = HashMap::new();
    for l in later {
        let (Some(old), Some((pos, len))) = (&l.id, l.at) else {
            unreachable!("checked above")
        };
        let raw = t.read_at(pos, len).map_err(|e| e.to_string())?;
        let raw = raw.strip_suffix(b"\r").unwrap_or(&raw);
        let raw =
            crate::transcript::json::lone_surrogates_replaced(raw).unwrap_or_else(|| raw.to_vec());
        let unreadable =
            || format!("the entry {old} after mf's compaction no longer reads as JSON");
        let text = String::from_utf8(raw).map_err(|_| unreadable())?;
        let obj = json_span::top_object(&text).map_err(|_| unreadable())?;
        let id = fresh_hex8(&|x: &str| taken.contains(x));
        taken.insert(id.clone());
        renamed.insert(old.clone(), id.clone());
        // The copy is the entry's own bytes, member by member (no number, escape or key order
        // read and written again), with new `id` and `parentId`, references to entries that are
        // copied too naming the copies, and no `mf` member.
        let mut set: Vec<(&str, String)> = vec![("id", id.clone()), ("parentId", prev)];
        for key in ["targetId", "firstKeptEntryId"] {
            let named = obj
                .get(key)
                .map(|(_, m)| json_span::decode_string(&text[m.value.clone()]))
                .and_then(|r| renamed.get(&r).cloned());
            if let Some(new) = named {
                set.push((key, new));
            }
        }
        let mf = serde_json::to_string(&json!({"v": 2, "kind": "view", "op": COPY, "of": old}))
            .expect("an mf object serializes");
        let mut line = format!("{{\"mf\":{mf}");
        let mut done: HashSet<&str> = HashSet::new();
        for m in &obj.members {
            if m.key == "mf" {
                continue;
            }
            line.push(',');
            match set.iter().find(|(k, _)| *k == m.key) {
                Some((k, v)) => {
                    line.push_str(&text[m.start..m.value.start]);
                    line.push_str(&Value::from(v.as_str()).to_string());
                    done.insert(k);
                }
                None => line.push_str(&text[m.start..m.value.end]),
            }
        }
        for (k, v) in &set {
            if !done.contains(k) {
                line.push_str(&format!(",{}:{}", Value::from(*k), Value::from(v.as_str())));
            }
        }
        line.push('}');
        out.push(line);
        prev = id;
    }
    Ok(out)
}

/// The lines that write a `Write` to a pi session: mf's summaries and records as `custom`
/// entries chained on the leaf, then (when there is a view to show) the entry that makes pi
/// show exactly it.
fn lines(t: &Transcript, st: &State, w: &Write<'_>) -> Result<Vec<String>, String> {
    let v1 = st.version < 2;
    let mut taken: HashSet<String> = st.ids.clone();
    let mut leaf = st.leaf.clone();
    let mut out = Vec::new();
    let stamp = std::cell::Cell::new(w.now_ms);
    let node =
        |rest: Map<String, Value>, taken: &mut HashSet<String>, leaf: &mut Option<String>| {
            let mut m = Map::new();
            m.insert("type".into(), rest["type"].clone());
            if !v1 {
                let id = fresh_hex8(&|x: &str| taken.contains(x));
                taken.insert(id.clone());
                m.insert("id".into(), Value::from(id.clone()));
                m.insert(
                    "parentId".into(),
                    leaf.clone().map_or(Value::Null, Value::from),
                );
                *leaf = Some(id);
            }
            m.insert("timestamp".into(), Value::from(iso_timestamp(stamp.get())));
            stamp.set(stamp.get() + 1);
            for (k, v) in rest {
                if k != "type" {
                    m.insert(k, v);
                }
            }
            m
        };
    for d in w.drafts {
        let mut rest = Map::new();
        rest.insert("type".into(), Value::from("custom"));
        rest.insert("customType".into(), Value::from("mf"));
        let mut data = json!({"id": d.id, "content": d.content});
        if let Some(orig) = d.stub_of {
            data["toolCallId"] = result_call(t, orig)?;
        }
        rest.insert("data".into(), data);
        let m = node(rest, &mut taken, &mut leaf);
        out.push(mf_first(mf::claim_value(d), m));
    }
    for (kind, at_ms) in w.records {
        let mut rest = Map::new();
        rest.insert("type".into(), Value::from("custom"));
        rest.insert("customType".into(), Value::from("mf"));
        rest.insert("data".into(), json!({}));
        let m = node(rest, &mut taken, &mut leaf);
        out.push(mf_first(mf::record_value(kind, *at_ms), m));
    }
    let Some(shown) = w.shown else {
        return Ok(out);
    };
    let mut stubs: Vec<(u32, String)> = Vec::new();
    let (mut texts, kept) = shown_parts(t, w, shown, &mut stubs)?;
    // The stubs, as `context_edit`s (pi 1.6 on) replacing their results in what pi sends; and
    // a result mf showed as a stub and shows again, as one putting it back.
    let edit = |orig: u32, replacement: Value| -> Result<Map<String, Value>, String> {
        let Some(target) = st.entry_ids[orig as usize].0.clone() else {
            return Err(format!(
                "a pi v1 session's entries have no ids, and a stub is shown by a `context_edit` naming the result it replaces (line {}); pi migrates the file to v3 when it opens it: resume it once, then run mf again",
                t.entries[orig as usize].line
            ));
        };
        let mut rest = Map::new();
        rest.insert("type".into(), Value::from("context_edit"));
        rest.insert("targetId".into(), Value::from(target));
        rest.insert("replacement".into(), json!({ "content": replacement }));
        Ok(rest)
    };
    let mut edits: Vec<(bool, Map<String, Value>)> = Vec::new();
    for (orig, content) in &stubs {
        if !st.stubbed.contains(orig) {
            let r = edit(*orig, json!([{"type": "text", "text": content}]))?;
            edits.push((true, r));
        }
    }
    for &e in &kept {
        if st.stubbed.contains(&e) && !stubs.iter().any(|(o, _)| *o == e) {
            let r = edit(e, sent_content(t, st, e)?)?;
            edits.push((false, r));
        }
    }
    for (stub, rest) in edits {
        let m = node(rest, &mut taken, &mut leaf);
        out.push(mf_first(
            wire::view_object(if stub { "show" } else { "restore" }),
            m,
        ));
    }
    if texts.is_empty() && st.first_view.is_none() {
        // Nothing is folded, and mf has shown no summary on this path: no compaction to write.
        return Ok(out);
    }
    let (first_id, first_index) = match kept.first() {
        Some(&e) => st.entry_ids[e as usize].clone(),
        None => (None, st.parsed),
    };
    let mut rest = Map::new();
    rest.insert("type".into(), Value::from("compaction"));
    if texts.is_empty() {
        // Nothing stands: show the originals. In a tree (v2+), branch off just before mf's
        // first compaction on the path, and go on with copies of what pi wrote after it, so
        // that pi's path holds no compaction of mf's and every one of pi's entries.
        if let (false, Some((parent, later))) = (v1, &st.first_view)
            && later.iter().all(|l| l.at.is_some() && l.id.is_some())
        {
            out.extend(restore_copies(t, parent, later, &mut taken, stamp.get())?);
            return Ok(out);
        }
        texts.push(
            "(mf: the earlier summary was withdrawn; the conversation follows in full)".into(),
        );
    }
    rest.insert("summary".into(), Value::from(texts.join("\n\n")));
    if v1 {
        rest.insert(
            "firstKeptEntryIndex".into(),
            Value::from(first_index.max(1)),
        );
    } else {
        rest.insert(
            "firstKeptEntryId".into(),
            first_id.map_or(Value::Null, Value::from),
        );
    }
    rest.insert("tokensBefore".into(), Value::from(w.tokens_before));
    rest.insert("fromHook".into(), Value::from(true));
    // pi 1.6 stores its prompt and tools at the compaction (and drops the system entries of
    // what it keeps in its favour); without them it appends a new system entry on its next run.
    if let Some(Value::Object(sys)) = &st.system {
        let mut sys = sys.clone();
        sys.insert("timestamp".into(), Value::from(stamp.get()));
        rest.insert("systemMessage".into(), Value::Object(sys));
    }
    let mut m = node(rest, &mut taken, &mut leaf);
    if !v1 && m.get("firstKeptEntryId").is_some_and(Value::is_null) {
        // A compaction that keeps nothing names itself (pi's own convention).
        let own = m["id"].clone();
        m.insert("firstKeptEntryId".into(), own);
    }
    out.push(mf_first(wire::view_object("show"), m));
    Ok(out)
}
