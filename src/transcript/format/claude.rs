//! The Claude Code session format: one row per line, typed (`user`, `assistant`, `system`,
//! `progress`, `summary`, `file-history-snapshot`, …). Message rows carry `uuid`/`parentUuid`;
//! the conversation is the chain walked from the leaf. One API response is written as several
//! assistant rows sharing `message.id`, one after another (mf merges such a run into one entry;
//! the same id recurring after another message row is a new response); `tool_result` blocks
//! answer `tool_use` blocks by id. Claude Code's own `compact_boundary` (with its
//! `isCompactSummary` user row) is a floor: rows before it that it does not preserve are history.
//! Progress, snapshots, queue operations, titles and system rows are kept but are not turns.
//!
//! What mf writes (verified with the real `claude` resuming against a loopback server): its
//! summaries and records as rows of its own types, which Claude Code does not load; then a
//! trailer row on the kept tail, a `compact_boundary` whose `preservedMessages` lists mf's summary
//! row and every kept row (in recall order), and last the user row with `isCompactSummary`
//! holding mf's standing summaries — so Claude Code resumes from [mf's summaries, the kept turns],
//! and, until that last row is whole, relinks nothing. Undo re-preserves the whole chain. A stub
//! is shown by a copy of the tool result's row (the stub's text as its result), which the
//! boundary lists in the original row's place.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::common::{self, fresh_uuid, iso_timestamp, mf_first};
use super::mf::{self, ClaimFields};
use super::{Adapter, Reader};
use crate::digest::id_hash;
use crate::entry::{ClaimKind, NONE, Role, Shown, flag};
use crate::transcript::build::{At, Build, NewEntry};
use crate::transcript::error::TranscriptError;
use crate::transcript::live::AgentDirs;
use crate::transcript::read::{LineError, LineReader};
use crate::transcript::wire;
use crate::transcript::{Transcript, Write};

pub(crate) mod live;

/// Text that marks a user row as injected, not typed.
const NOT_PROMPT: &[&str] = &[
    "<local-command-stdout",
    "<local-command-stderr",
    "<local-command-caveat",
    "<bash-stdout",
    "<bash-stderr",
    "<task-notification>",
    "[Request interrupted by user",
    "<system-reminder>",
    "Caveat: The messages below were generated",
];

/// One row of the session with a uuid.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Row {
    uuid: String,
    parent: Option<String>,
    logical_parent: Option<String>,
    line: u32,
    /// The mf entry the row belongs to (a message row), or `NONE`.
    entry: u32,
    progress: bool,
    sidechain: bool,
    /// A row mf wrote.
    mf: bool,
    /// Claude Code's own compact boundary.
    boundary: bool,
    /// The user row carrying a compaction summary.
    compact_summary: bool,
    /// A message row (user or assistant).
    message: bool,
    /// `compactMetadata.preservedMessages.uuids`, or the segment's head/tail, on a boundary.
    preserved: Option<Preserved>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
enum Preserved {
    List(Vec<String>),
    Segment { head: String, tail: String },
}

/// What mf keeps of a Claude Code session for writing to it.
#[derive(Debug, Clone, Default)]
pub struct State {
    rows: Vec<Row>,
    /// Per row: on the chain from the leaf.
    on_path: Vec<bool>,
    /// The last message row of the chain: the tail mf keeps and the agent resumes from.
    tail: Option<usize>,
    /// Envelope fields copied onto the rows mf writes.
    envelope: Map<String, Value>,
    /// The newest timestamp in the file (ms); mf's rows are newer.
    newest_ms: u64,
    session_id: Option<String>,
    /// A sub-agent's own file: mf's rows are the sub-agent's too (`isSidechain`, its `agentId`).
    sidechain: bool,
}

/// The assistant message being read: its `message.id`, entry, `requestId`, the calls it opened,
/// and whether a result of one of them came in since its last piece.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct OpenMessage {
    id: String,
    entry: u32,
    request: Option<String>,
    /// The prompt size its usage reports (every piece of one response reports the same).
    input: Option<u64>,
    calls: Vec<u64>,
    answered: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct ClaudeReader {
    rows: Vec<Row>,
    /// The assistant message whose rows are being read, for the main conversation and for
    /// sub-agent rows: only the rows of one response that follow one another (progress, system
    /// and other rows may lie between) are one message. A user turn or another response closes
    /// it, so an id that recurs later (proxies and local servers that answer with one fixed id)
    /// starts a new one. Claude Code runs a tool as soon as its block has streamed and writes the
    /// result before the response's next block: a piece after results that answer the open
    /// message's own calls joins it only when both carry the same `requestId` (the same API
    /// response); without one, a tool result in between means a new response.
    open: [Option<OpenMessage>; 2],
    seen_uuids: HashSet<String>,
    newest_ms: u64,
    #[serde(with = "super::common::json_text")]
    envelope: Map<String, Value>,
    session_id: Option<String>,
    all_sidechain: Option<bool>,
    /// Entries of rows that are sidechain (hidden unless every message row is).
    sidechain_entries: Vec<u32>,
    /// Per row: on the chain from the leaf.
    on_path: Vec<bool>,
    /// Entries that echo a slash command (`<command-name>…`).
    echoes: Vec<u32>,
    /// A sub-agent's rows, apart from the main conversation's: what a sub-agent's own file (every
    /// message row `isSidechain`) is read and written by — its envelope (with its `agentId`),
    /// the session it ran in, its models, and its prompts (entry; a slash command's echo), which
    /// start turns there.
    #[serde(with = "super::common::json_text")]
    side_envelope: Map<String, Value>,
    side_session: Option<String>,
    side_models: Vec<String>,
    sidechain_prompts: Vec<(u32, bool)>,
}

/// Milliseconds of an ISO-8601 UTC timestamp (`2026-11-30T11:29:48.037Z`), when it is one.
fn parse_iso(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() < 19 {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> { s.get(r)?.parse().ok() };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    let ms = if b.get(19) == Some(&b'.') {
        let frac: String = s[20..]
            .chars()
            .take_while(char::is_ascii_digit)
            .take(3)
            .collect();
        format!("{frac:0<3}").parse::<i64>().ok()?
    } else {
        0
    };
    // Days from civil (Howard Hinnant).
    let y2 = if mo <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let t = ((days * 86_400 + h * 3600 + mi * 60 + se) * 1000) + ms;
    u64::try_from(t).ok()
}

fn blocks(content: Option<&Value>) -> Vec<&Map<String, Value>> {
    match content {
        Some(Value::Array(v)) => v.iter().filter_map(Value::as_object).collect(),
        _ => Vec::new(),
    }
}

fn block_text(b: &Map<String, Value>) -> String {
    match b.get("type").and_then(Value::as_str) {
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
        Some("redacted_thinking") => String::new(),
        Some("tool_use") => format!(
            "[calls {}({})]",
            b.get("name").and_then(Value::as_str).unwrap_or("?"),
            b.get("input").map(Value::to_string).unwrap_or_default()
        ),
        Some("tool_result") => match b.get("content") {
            Some(Value::String(s)) => s.clone(),
            Some(v @ Value::Array(_)) => {
                let mut t = String::new();
                for x in blocks(Some(v)) {
                    common::push_line(&mut t, &block_text(x));
                }
                t
            }
            _ => String::new(),
        },
        Some("image") => common::image_placeholder(
            b.get("source")
                .and_then(|s| s.get("media_type"))
                .and_then(Value::as_str),
            b.get("source")
                .and_then(|s| s.get("data"))
                .and_then(Value::as_str)
                .map(common::base64_size),
        ),
        Some("document") => "[document]".into(),
        Some(other) => format!("[{other}]"),
        None => String::new(),
    }
}

/// The model-visible text of one row's message.
fn row_text(obj: &Map<String, Value>) -> String {
    row_marked(obj).text
}

/// [`row_text`], its thinking blocks marked as reasoning.
fn row_marked(obj: &Map<String, Value>) -> common::Marked {
    if obj.contains_key("mf") && obj.get("type").and_then(Value::as_str) == Some("mf-summary") {
        return common::Marked::plain(
            obj.get("content")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        );
    }
    let m = obj.get("message");
    match m.and_then(|m| m.get("content")) {
        Some(Value::String(s)) => common::Marked::plain(s.clone()),
        c @ Some(Value::Array(_)) => {
            let mut t = common::Marked::default();
            for b in blocks(c) {
                let thinking = b.get("type").and_then(Value::as_str) == Some("thinking");
                t.push(&block_text(b), thinking);
            }
            t
        }
        _ => common::Marked::default(),
    }
}

/// The text of an entry made of one or several rows.
pub fn text(rows: &[Map<String, Value>]) -> String {
    marked(rows).text
}

/// [`text`], its thinking blocks marked as reasoning.
pub fn marked(rows: &[Map<String, Value>]) -> common::Marked {
    let mut t = common::Marked::default();
    for r in rows {
        t.append(row_marked(r));
    }
    t
}

/// The calls a stub row of mf's answers (`toolUseIds`: those of the row it stands in for).
fn stub_calls(obj: &Map<String, Value>) -> Vec<&str> {
    obj.get("toolUseIds")
        .and_then(Value::as_array)
        .map(|ids| ids.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// An entry as the chat messages a model would be sent.
pub fn chat_messages(rows: &[Map<String, Value>]) -> Vec<Value> {
    let Some(first) = rows.first() else {
        return Vec::new();
    };
    let calls = stub_calls(first);
    if first.contains_key("mf") && !calls.is_empty() {
        // mf's stub: the results of the calls it answers, each the stub's text.
        let text = text(rows);
        return calls
            .into_iter()
            .map(|c| json!({"role": "tool", "tool_call_id": c, "content": text}))
            .collect();
    }
    if first.get("type").and_then(Value::as_str) == Some("assistant") {
        let mut prose = String::new();
        let mut calls = Vec::new();
        for r in rows {
            for b in blocks(r.get("message").and_then(|m| m.get("content"))) {
                match b.get("type").and_then(Value::as_str) {
                    Some("tool_use") => calls.push(json!({"id": b.get("id"), "type": "function", "function": {
                        "name": b.get("name"), "arguments": b.get("input").map(Value::to_string).unwrap_or_default()}})),
                    Some("text") => common::push_line(&mut prose, &block_text(b)),
                    _ => {}
                }
            }
        }
        let mut m = json!({"role": "assistant", "content": if prose.is_empty() { Value::Null } else { Value::from(prose) }});
        if !calls.is_empty() {
            m["tool_calls"] = Value::Array(calls);
        }
        return vec![m];
    }
    let content = first.get("message").and_then(|m| m.get("content"));
    let results: Vec<&Map<String, Value>> = blocks(content)
        .into_iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        .collect();
    if !results.is_empty() {
        return results
            .into_iter()
            .map(|b| json!({"role": "tool", "tool_call_id": b.get("tool_use_id"), "content": block_text(b)}))
            .collect();
    }
    vec![json!({"role": "user", "content": text(rows)})]
}

fn is_prompt(obj: &Map<String, Value>) -> bool {
    let truthy = |k: &str| obj.get(k).and_then(Value::as_bool).unwrap_or(false);
    if truthy("isMeta") || truthy("isCompactSummary") {
        return false;
    }
    let content = obj.get("message").and_then(|m| m.get("content"));
    let bs = blocks(content);
    if bs
        .iter()
        .any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
    {
        return false;
    }
    let t = row_text(obj);
    let t = t.trim_start();
    let image = bs
        .iter()
        .any(|b| b.get("type").and_then(Value::as_str) == Some("image"));
    if t.is_empty() && !image {
        return false;
    }
    !NOT_PROMPT.iter().any(|p| t.starts_with(p))
}

impl LineReader for ClaudeReader {
    type Parsed<'a> = Value;
    const STRICT: bool = false;

    /// A Claude Code line has a `type` and one of its ids (content blocks and messages nested in a line have neither).
    fn may_be_line(&self, v: &Value) -> bool {
        super::common::is_typed_line(v, &["uuid", "leafUuid", "messageId", "sessionId"])
    }

    fn parse(&self, line: &[u8]) -> Result<Value, LineError> {
        super::common::parse_object(line)
    }

    fn push(&mut self, b: &mut Build, at: &At<'_>, v: Value) -> Result<(), TranscriptError> {
        let obj = v.as_object().expect("parsed as an object");
        let s = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
        let ty = obj.get("type").and_then(Value::as_str).unwrap_or_default();
        if let Some(ts) = obj
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(parse_iso)
        {
            self.newest_ms = self.newest_ms.max(ts);
        }
        let mut row = s("uuid").map(|uuid| Row {
            uuid,
            parent: s("parentUuid"),
            logical_parent: s("logicalParentUuid"),
            line: at.line,
            entry: NONE,
            progress: ty == "progress",
            sidechain: truthy(obj, "isSidechain"),
            mf: obj.contains_key("mf"),
            boundary: false,
            compact_summary: false,
            message: false,
            preserved: None,
        });
        if let Some(mf) = obj.get("mf") {
            mf::read(b, at, mf, |kind| {
                let shape_ok = if ty == "mf-summary" {
                    Ok(())
                } else {
                    Err("in a Claude Code session mf writes summaries and stubs as `mf-summary` rows".into())
                };
                // A stub answers the calls of the tool-result row it stands in for.
                let answers = match kind {
                    ClaimKind::Stub => stub_calls(obj).iter().map(|c| id_hash(c)).collect(),
                    ClaimKind::Summary => Vec::new(),
                };
                ClaimFields::in_object(Some(obj), Role::Tool, kind, answers, shape_ok)
            });
        } else if matches!(ty, "user" | "assistant")
            && let Some(m) = obj.get("message").and_then(Value::as_object)
        {
            self.message(b, at, obj, m, &mut row);
        } else if ty == "system"
            && s("subtype").as_deref() == Some("compact_boundary")
            && let Some(r) = row.as_mut()
        {
            r.boundary = true;
            r.preserved = preserved(obj);
        }
        if let Some(r) = row {
            self.rows.push(r);
        }
        Ok(())
    }

    fn finish(&mut self, b: &mut Build) -> Result<(), TranscriptError> {
        let standalone = self.all_sidechain == Some(true);
        self.mark_turns(b, standalone);
        // A sub-agent's rows in a main session are not part of its conversation.
        if !standalone {
            for &e in &self.sidechain_entries {
                b.entries[e as usize].flags |= flag::UNSEEN;
            }
        }
        let side = |r: &Row| r.sidechain && !standalone;
        let by_uuid: HashMap<&str, usize> = self
            .rows
            .iter()
            .enumerate()
            .map(|(k, r)| (r.uuid.as_str(), k))
            .collect();
        // The leaf: the last row with a uuid that is not a sub-agent's.
        let leaf = self.rows.iter().rposition(|r| !side(r));
        let on_path = self.chain(leaf, &by_uuid, &side);
        // The agent's own last boundary is a floor.
        let floor = self
            .rows
            .iter()
            .rposition(|r| r.boundary && !r.mf && !side(r));
        let preserved = self.preserved_rows(floor, &by_uuid);
        let floor_line = floor.map_or(0, |f| self.rows[f].line);
        let summary_row = floor.and_then(|_| {
            self.rows
                .iter()
                .position(|r| r.compact_summary && !r.mf && r.line > floor_line)
        });
        // Which message rows the agent sees.
        let mut visible: HashSet<usize> = HashSet::new();
        for (k, r) in self.rows.iter().enumerate() {
            if side(r) || r.entry == NONE {
                continue;
            }
            let seen = match floor {
                None => on_path[k],
                Some(_) => {
                    (r.line > floor_line && (on_path[k] || Some(k) == summary_row))
                        || preserved.contains(r.uuid.as_str())
                }
            };
            if seen {
                visible.insert(k);
            }
        }
        mark_seen(b, &self.rows, &visible, &on_path, floor.map(|_| floor_line));
        // The agent's summary stands before the first row it kept.
        if let Some(sr) = summary_row {
            let s_entry = self.rows[sr].entry;
            let first = b
                .entries
                .iter()
                .enumerate()
                .filter(|(i, e)| {
                    *i as u32 != s_entry
                        && !e.has(flag::UNSEEN)
                        && e.claim == NONE
                        && e.line < self.rows[sr].line
                })
                .map(|(i, _)| i as u32)
                .next();
            if let Some(f) = first {
                b.placements.push((s_entry, f));
            }
        }
        self.mark_leading_commands(b);
        b.placements.sort_by_key(|&(_, before)| before);
        self.on_path = on_path;
        Ok(())
    }
}

impl ClaudeReader {
    /// A built-in command nothing answered before the first prompt (a session that opens with
    /// `/clear`: its caveat, command and output rows) leads the first turn instead of standing
    /// as preamble: Claude Code shows what a fold keeps after its summary, so kept as preamble it
    /// would read as the user clearing mf's summary.
    fn mark_leading_commands(&self, b: &mut Build) {
        let Some(p) = b
            .entries
            .iter()
            .position(|e| e.has(flag::TURN_START) && !e.has(flag::UNSEEN))
        else {
            return;
        };
        let plain_user = |e: &crate::entry::Entry| {
            e.role == Role::User
                && e.claim == NONE
                && e.flags & (flag::UNSEEN | flag::NATIVE_SUMMARY | flag::PINNED | flag::TURN_START)
                    == 0
        };
        let start = b.entries[..p]
            .iter()
            .rposition(|e| !plain_user(e))
            .map_or(0, |k| k + 1);
        let unanswered = self
            .echoes
            .iter()
            .any(|&e| (start..p).contains(&(e as usize)));
        if unanswered {
            for e in &mut b.entries[start..p] {
                e.flags |= flag::LEADS_TURN;
            }
        }
    }

    /// Which prompts start turns: a sub-agent's own in its own file, and a slash command only
    /// when the assistant answers it (a custom command; a built-in one, `/clear` or `/mcp`, joins
    /// the next turn).
    fn mark_turns(&self, b: &mut Build, standalone: bool) {
        let mut echoes = self.echoes.clone();
        if standalone {
            // A sub-agent's own file: its prompts (the first is the task its parent gave it)
            // start its turns, and its models wrote it.
            for &(e, echo) in &self.sidechain_prompts {
                b.entries[e as usize].flags |= flag::TURN_START;
                if echo {
                    echoes.push(e);
                }
            }
            echoes.sort_unstable();
            for m in &self.side_models {
                b.agent_model(m);
            }
        }
        for &e in &echoes {
            let answered = b.entries[e as usize + 1..]
                .iter()
                .find(|x| x.has(flag::TURN_START) || x.role == Role::Assistant)
                .is_some_and(|x| x.role == Role::Assistant);
            if !answered {
                b.entries[e as usize].flags &= !flag::TURN_START;
            }
        }
    }

    /// Per row: on the chain from `leaf`, through the agent's own boundaries by their logical
    /// parent (`side`: a sub-agent's row, never on the main chain).
    fn chain(
        &self,
        leaf: Option<usize>,
        by_uuid: &HashMap<&str, usize>,
        side: &impl Fn(&Row) -> bool,
    ) -> Vec<bool> {
        let mut on_path = vec![false; self.rows.len()];
        let mut cur = leaf;
        let mut steps = 0;
        while let Some(k) = cur {
            if on_path[k] || steps > self.rows.len() {
                break;
            }
            on_path[k] = true;
            steps += 1;
            let r = &self.rows[k];
            let next = match (&r.parent, r.boundary && !r.mf) {
                (Some(p), _) => Some(p.as_str()),
                (None, true) => r.logical_parent.as_deref(),
                (None, false) => None,
            };
            cur = next.and_then(|p| by_uuid.get(p).copied());
            // A chain that breaks (no parent, or one not in the file) goes on with the row
            // written before it: hand-made files and sanitised ones lose their links.
            if cur.is_none() {
                cur = (0..k)
                    .rev()
                    .find(|&j| !side(&self.rows[j]) && !self.rows[j].mf);
            }
        }
        on_path
    }

    /// The uuids the agent's own boundary at `floor` preserves.
    fn preserved_rows(
        &self,
        floor: Option<usize>,
        by_uuid: &HashMap<&str, usize>,
    ) -> HashSet<&str> {
        let mut preserved: HashSet<&str> = HashSet::new();
        if let Some(f) = floor {
            match &self.rows[f].preserved {
                Some(Preserved::List(u)) => preserved.extend(u.iter().map(String::as_str)),
                Some(Preserved::Segment { head, tail }) => {
                    let mut c = by_uuid.get(tail.as_str()).copied();
                    let mut n = 0;
                    while let Some(k) = c {
                        preserved.insert(self.rows[k].uuid.as_str());
                        if self.rows[k].uuid == *head || n > self.rows.len() {
                            break;
                        }
                        n += 1;
                        c = self.rows[k]
                            .parent
                            .as_deref()
                            .and_then(|p| by_uuid.get(p).copied());
                    }
                }
                None => {}
            }
        }
        preserved
    }
}

/// Mark what the agent does not see (`visible`: the message rows it sees; `floor_line`: the
/// line of its own last boundary): an entry is seen if any of its rows is, and a tool result
/// answering a seen call is seen; the rows of the chain before the floor that it does not
/// preserve are history, and so are mf's claims before it.
fn mark_seen(
    b: &mut Build,
    rows: &[Row],
    visible: &HashSet<usize>,
    on_path: &[bool],
    floor_line: Option<u32>,
) {
    let mut seen_entries: HashSet<u32> = visible.iter().map(|&k| rows[k].entry).collect();
    let conv_calls = |i: u32| -> Vec<u64> {
        match b.entries[i as usize].link {
            NONE => Vec::new(),
            l => {
                let r = &b.links[l as usize].calls;
                b.tool_ids[r.start as usize..r.end as usize].to_vec()
            }
        }
    };
    let seen_calls: HashSet<u64> = seen_entries.iter().flat_map(|&i| conv_calls(i)).collect();
    for (i, e) in b.entries.iter().enumerate() {
        if e.claim != NONE || e.link == NONE {
            continue;
        }
        let l = &b.links[e.link as usize];
        let answers = &b.tool_ids[l.answers.start as usize..l.answers.end as usize];
        if !answers.is_empty() && answers.iter().all(|a| seen_calls.contains(a)) {
            seen_entries.insert(i as u32);
        }
    }
    // History: rows of the chain before the floor, not preserved.
    let history: HashSet<u32> = rows
        .iter()
        .enumerate()
        .filter(|(k, r)| {
            r.entry != NONE && on_path[*k] && floor_line.is_some() && !visible.contains(k)
        })
        .map(|(_, r)| r.entry)
        .collect();
    let row_entries: HashSet<u32> = rows.iter().map(|r| r.entry).collect();
    for (i, e) in b.entries.iter_mut().enumerate() {
        let i = i as u32;
        if e.claim != NONE {
            // mf's claims before the agent's own floor are history too.
            if e.line < floor_line.unwrap_or(0) {
                e.flags |= flag::UNSEEN | flag::HISTORY;
            }
            continue;
        }
        if !row_entries.contains(&i) && seen_entries.contains(&i) {
            continue;
        }
        if !seen_entries.contains(&i) {
            e.flags |= flag::UNSEEN;
            if history.contains(&i) {
                e.flags |= flag::HISTORY;
            }
        }
    }
}

impl ClaudeReader {
    /// A user or assistant row (`m`: its message), and the entry it becomes or joins.
    fn message(
        &mut self,
        b: &mut Build,
        at: &At<'_>,
        obj: &Map<String, Value>,
        m: &Map<String, Value>,
        row: &mut Option<Row>,
    ) {
        // A row written again with a uuid already seen (a replay on resume) is not a new entry.
        if let Some(r) = row.as_ref()
            && !self.seen_uuids.insert(r.uuid.clone())
        {
            b.note(
                at.line,
                crate::transcript::build::NoteKind::Skipped(
                    "a row repeated with the uuid of an earlier row (replayed on resume)".into(),
                ),
            );
            return;
        }
        let sidechain = truthy(obj, "isSidechain");
        match self.all_sidechain {
            None => self.all_sidechain = Some(sidechain),
            Some(true) if !sidechain => self.all_sidechain = Some(false),
            _ => {}
        }
        self.keep_envelope(obj, sidechain);
        let bs = blocks(m.get("content"));
        let ids = |ty: &str, key: &str| -> Vec<u64> {
            bs.iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some(ty))
                .filter_map(|b| b.get(key).and_then(Value::as_str))
                .map(id_hash)
                .collect()
        };
        let (calls, answers) = (ids("tool_use", "id"), ids("tool_result", "tool_use_id"));
        let piece = Piece {
            chars: row_text(obj).chars().count() as u32,
            id: row.as_ref().map_or_else(
                || id_hash(&format!("line-{}", at.line)),
                |r| id_hash(&r.uuid),
            ),
            sidechain,
        };
        let entry = if obj.get("type").and_then(Value::as_str) == Some("assistant") {
            self.assistant(b, at, obj, m, &piece, &calls)
        } else {
            self.user(b, at, obj, &bs, &piece, &answers)
        };
        if sidechain {
            self.sidechain_entries.push(entry);
        }
        if let Some(r) = row.as_mut() {
            r.entry = entry;
            r.message = true;
            r.compact_summary = truthy(obj, "isCompactSummary");
        }
    }

    /// The envelope fields copied onto the rows mf writes, and the session id: from the main
    /// conversation's rows, and apart from them from a sub-agent's (with its `agentId`), for a
    /// sub-agent's own file.
    fn keep_envelope(&mut self, obj: &Map<String, Value>, sidechain: bool) {
        let (envelope, session) = if sidechain {
            (&mut self.side_envelope, &mut self.side_session)
        } else {
            (&mut self.envelope, &mut self.session_id)
        };
        let keys: &[&str] = if sidechain {
            &ENVELOPE_KEYS_SIDECHAIN
        } else {
            &ENVELOPE_KEYS
        };
        for k in keys {
            if let Some(v) = obj.get(*k) {
                envelope.insert((*k).into(), v.clone());
            }
        }
        if session.is_none() {
            *session = obj
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
    }

    /// An assistant row: a new message, or a further piece of the open one (see `open`).
    fn assistant(
        &mut self,
        b: &mut Build,
        at: &At<'_>,
        obj: &Map<String, Value>,
        m: &Map<String, Value>,
        piece: &Piece,
        calls: &[u64],
    ) -> u32 {
        if let Some(model) = m.get("model").and_then(Value::as_str)
            && model != "<synthetic>"
        {
            if piece.sidechain {
                if !self.side_models.iter().any(|x| x == model) {
                    self.side_models.push(model.to_string());
                }
            } else {
                b.agent_model(model);
            }
        }
        let mid = m.get("id").and_then(Value::as_str).map(str::to_string);
        let request = obj
            .get("requestId")
            .and_then(Value::as_str)
            .map(str::to_string);
        let input = m.get("usage").and_then(Value::as_object).map(|u| {
            [
                "input_tokens",
                "cache_creation_input_tokens",
                "cache_read_input_tokens",
            ]
            .iter()
            .filter_map(|k| u.get(*k).and_then(Value::as_u64))
            .sum::<u64>()
        });
        let slot = &mut self.open[usize::from(piece.sidechain)];
        let joins = slot.as_ref().is_some_and(|o| {
            mid.as_ref() == Some(&o.id)
                && (!o.answered
                    || (request.is_some()
                        && request == o.request
                        && (input.is_none() || o.input.is_none() || input == o.input)))
        });
        if let Some(o) = slot.as_mut().filter(|_| joins) {
            let i = o.entry;
            o.calls.extend_from_slice(calls);
            o.answered = false;
            b.extend(i, at, piece.chars, calls, &[]);
            return i;
        }
        let i = b.entry(
            at,
            NewEntry {
                role: Role::Assistant,
                flags: 0,
                chars: piece.chars,
                id: piece.id,
                calls,
                answers: &[],
            },
        );
        *slot = mid.map(|id| OpenMessage {
            id,
            entry: i,
            request,
            input,
            calls: calls.to_vec(),
            answered: false,
        });
        i
    }

    /// A user row: a prompt, a tool result, the agent's compaction summary, or injected text.
    fn user(
        &mut self,
        b: &mut Build,
        at: &At<'_>,
        obj: &Map<String, Value>,
        bs: &[&Map<String, Value>],
        piece: &Piece,
        answers: &[u64],
    ) -> u32 {
        let slot = &mut self.open[usize::from(piece.sidechain)];
        // Results of the open message's own calls keep it open (for a later piece of the same
        // API response); any other user row closes it.
        match slot.as_mut() {
            Some(o)
                if !answers.is_empty()
                    && bs
                        .iter()
                        .all(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
                    && answers.iter().all(|a| o.calls.contains(a)) =>
            {
                o.answered = true;
            }
            _ => *slot = None,
        }
        let next = b.entries.len() as u32;
        let (role, flags) = if truthy(obj, "isCompactSummary") {
            (Role::User, flag::NATIVE_SUMMARY)
        } else if !answers.is_empty() {
            (Role::Tool, 0)
        } else if is_prompt(obj) {
            let echo = row_text(obj).trim_start().starts_with("<command-name>");
            if piece.sidechain {
                // A sub-agent's prompt starts a turn only in the sub-agent's own file (`finish`).
                self.sidechain_prompts.push((next, echo));
                (Role::User, 0)
            } else {
                if echo {
                    self.echoes.push(next);
                }
                (Role::User, flag::TURN_START)
            }
        } else {
            (Role::User, 0)
        };
        b.entry(
            at,
            NewEntry {
                role,
                flags,
                chars: piece.chars,
                id: piece.id,
                calls: &[],
                answers,
            },
        )
    }
}

/// What every message row gives its entry.
struct Piece {
    chars: u32,
    id: u64,
    sidechain: bool,
}

/// The envelope fields mf copies from the agent's rows onto its own.
const ENVELOPE_KEYS: [&str; 6] = [
    "userType",
    "cwd",
    "sessionId",
    "version",
    "gitBranch",
    "slug",
];

/// The same, in a sub-agent's own file: with the sub-agent's id, by which Claude Code loads its
/// rows.
const ENVELOPE_KEYS_SIDECHAIN: [&str; 7] = [
    "userType",
    "cwd",
    "sessionId",
    "version",
    "gitBranch",
    "slug",
    "agentId",
];

fn truthy(obj: &Map<String, Value>, k: &str) -> bool {
    obj.get(k).and_then(Value::as_bool).unwrap_or(false)
}

/// What a compact boundary preserves: `compactMetadata.preservedMessages.uuids`, or the
/// segment's head and tail.
fn preserved(obj: &Map<String, Value>) -> Option<Preserved> {
    let meta = obj.get("compactMetadata");
    meta.and_then(|m| m.get("preservedMessages"))
        .and_then(|p| p.get("uuids"))
        .and_then(Value::as_array)
        .map(|u| {
            Preserved::List(
                u.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
            )
        })
        .or_else(|| {
            let seg = meta.and_then(|m| m.get("preservedSegment"))?;
            Some(Preserved::Segment {
                head: seg.get("headUuid")?.as_str()?.to_string(),
                tail: seg.get("tailUuid")?.as_str()?.to_string(),
            })
        })
}

impl Reader for ClaudeReader {
    fn adapter(&self, b: &Build) -> Box<dyn Adapter> {
        Box::new(self.state(&b.entries))
    }
}

impl Adapter for State {
    fn text(&self, _: usize, rows: &[Map<String, Value>]) -> String {
        text(rows)
    }

    fn marked(&self, _: usize, rows: &[Map<String, Value>]) -> common::Marked {
        marked(rows)
    }

    /// Not on the row: Claude Code keeps the tool's name on the call.
    fn tool_name(&self, _rows: &[Map<String, Value>]) -> Option<String> {
        None
    }

    fn chat_messages(&self, _: usize, rows: &[Map<String, Value>]) -> Vec<Value> {
        chat_messages(rows)
    }

    fn lines(&self, t: &Transcript, w: &Write<'_>) -> Result<Vec<String>, TranscriptError> {
        lines(t, self, w).map_err(|why| t.unexpressible(why))
    }

    /// Claude Code's `sessions/<pid>.json` naming this session, with a running pid.
    fn running(&self, dirs: &AgentDirs) -> Option<String> {
        let sid = self.session_id.as_deref()?;
        live::claude_process(dirs.claude_sessions.as_deref()?, sid)
    }
}

impl ClaudeReader {
    fn state(&self, b_entries: &[crate::entry::Entry]) -> State {
        let visible: HashSet<usize> = self
            .rows
            .iter()
            .enumerate()
            .filter(|(_, r)| {
                r.entry != NONE && !b_entries[r.entry as usize].has(flag::UNSEEN) && !r.mf
            })
            .map(|(k, _)| k)
            .collect();
        let tail = self
            .rows
            .iter()
            .enumerate()
            .rev()
            .find(|(k, r)| r.message && !r.compact_summary && visible.contains(k))
            .map(|(k, _)| k);
        let sidechain = self.all_sidechain == Some(true);
        let (envelope, session_id) = if sidechain {
            (&self.side_envelope, &self.side_session)
        } else {
            (&self.envelope, &self.session_id)
        };
        State {
            rows: self.rows.clone(),
            on_path: self.on_path.clone(),
            tail,
            envelope: envelope.clone(),
            newest_ms: self.newest_ms,
            session_id: session_id.clone(),
            sidechain,
        }
    }
}

/// mf's own rows for a write: its summaries, stubs and records, of types Claude Code does not
/// load (a stub's row names the calls it answers, `toolUseIds`).
fn own_rows(
    t: &Transcript,
    w: &Write<'_>,
    next_stamp: &mut impl FnMut() -> String,
) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    for d in w.drafts {
        let mf = mf::claim_value(d);
        let mut m = Map::new();
        m.insert("type".into(), Value::from("mf-summary"));
        m.insert("id".into(), Value::from(d.id.clone()));
        m.insert("timestamp".into(), Value::from(next_stamp()));
        m.insert("content".into(), Value::from(d.content.clone()));
        if let Some(orig) = d.stub_of {
            m.insert("toolUseIds".into(), Value::from(result_ids(t, orig)?));
        }
        out.push(mf_first(mf, m));
    }
    for (kind, at_ms) in w.records {
        let mut m = Map::new();
        m.insert("type".into(), Value::from("mf-record"));
        m.insert("timestamp".into(), Value::from(next_stamp()));
        out.push(mf_first(mf::record_value(kind, *at_ms), m));
    }
    Ok(out)
}

/// The `tool_use_id`s of the results in entry `orig`'s row.
fn result_ids(t: &Transcript, orig: u32) -> Result<Vec<String>, String> {
    let rows = t.values(orig as usize).map_err(|e| e.to_string())?;
    let ids: Vec<String> = rows
        .iter()
        .flat_map(|r| blocks(r.get("message").and_then(|m| m.get("content"))))
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        .filter_map(|b| b.get("tool_use_id").and_then(Value::as_str))
        .map(str::to_string)
        .collect();
    if ids.is_empty() {
        return Err(format!(
            "the entry on line {} a stub would stand in for holds no tool result",
            t.entries[orig as usize].line
        ));
    }
    Ok(ids)
}

/// The row that shows a stub: a copy of the tool-result row of entry `orig` (its envelope, its
/// original timestamp) under a new uuid, each `tool_result` block's content the stub's text
/// (the first; the others name it), with no `toolUseResult` (the tool's output as Claude Code
/// displays it) and no other blocks. Hung on the boundary; the boundary relinks it in the
/// original's place.
fn stub_row(
    t: &Transcript,
    orig: u32,
    content: &str,
    uuid: &str,
    boundary: &str,
) -> Result<String, String> {
    if orig == NONE {
        return Err("a stub names no tool result".into());
    }
    let rows = t.values(orig as usize).map_err(|e| e.to_string())?;
    let [row] = rows.as_slice() else {
        return Err(format!(
            "the tool result on line {} is made of several rows",
            t.entries[orig as usize].line
        ));
    };
    let mut m = row.clone();
    m.remove("toolUseResult");
    m.insert("uuid".into(), Value::from(uuid));
    m.insert("parentUuid".into(), Value::from(boundary));
    let results: Vec<Value> = blocks(row.get("message").and_then(|m| m.get("content")))
        .into_iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        .enumerate()
        .map(|(k, b)| {
            let mut nb = Map::new();
            nb.insert("type".into(), Value::from("tool_result"));
            nb.insert(
                "tool_use_id".into(),
                b.get("tool_use_id").cloned().unwrap_or(Value::Null),
            );
            let text = if k == 0 {
                content.to_string()
            } else {
                "[mf: this result is stubbed with the one before it]".to_string()
            };
            nb.insert("content".into(), Value::from(text));
            if let Some(e) = b.get("is_error") {
                nb.insert("is_error".into(), e.clone());
            }
            Value::Object(nb)
        })
        .collect();
    let mut message = row
        .get("message")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    message.insert("content".into(), Value::Array(results));
    m.insert("message".into(), Value::Object(message));
    Ok(mf_first(wire::view_object("show"), m))
}

/// The uuids of the rows a view keeps before its tail, and the first kept entry's line: every
/// row of a kept entry (pieces on side branches included), and the other rows of the visible
/// chain among them (system rows, attachments); progress rows are not needed. In recall order —
/// the agent's own summary before the rows its compaction preserved, though it lies after them
/// in the file — each other row after the entry row it follows in the file.
fn kept_rows<'a>(
    t: &Transcript,
    st: &'a State,
    kept_entries: &[u32],
    kept_set: &HashSet<u32>,
    tail: usize,
) -> (Vec<&'a str>, u32) {
    let recall_pos: HashMap<u32, usize> = kept_entries
        .iter()
        .enumerate()
        .map(|(p, &i)| (i, p))
        .collect();
    let first_line = kept_entries
        .iter()
        .map(|&i| t.entries[i as usize].line)
        .min()
        .unwrap_or(u32::MAX);
    let mut picked: Vec<(usize, u32, &str)> = Vec::new();
    let mut after = 0usize;
    for (k, r) in st.rows.iter().enumerate() {
        if r.entry != NONE
            && let Some(&p) = recall_pos.get(&r.entry)
        {
            after = p;
        }
        if r.mf || r.progress || k == tail {
            continue;
        }
        let keep = if r.entry != NONE {
            kept_set.contains(&r.entry)
        } else {
            // A row of the chain that is no entry: kept when it lies among the kept rows.
            r.line >= first_line && !r.boundary && st.on_path.get(k).copied().unwrap_or(false)
        };
        if keep {
            let p = recall_pos.get(&r.entry).copied().unwrap_or(after);
            picked.push((p, r.line, r.uuid.as_str()));
        }
    }
    picked.sort_by_key(|&(p, line, _)| (p, line));
    (picked.into_iter().map(|(_, _, u)| u).collect(), first_line)
}

/// The uuid of the last row before the kept ones that the view leaves out: what the boundary
/// logically follows.
fn last_folded(
    t: &Transcript,
    st: &State,
    kept_set: &HashSet<u32>,
    first_line: u32,
) -> Option<String> {
    t.entries
        .iter()
        .enumerate()
        .filter(|(i, e)| {
            e.line < first_line && !kept_set.contains(&(*i as u32)) && !e.has(flag::UNSEEN)
        })
        .filter_map(|(i, _)| {
            st.rows
                .iter()
                .find(|r| r.entry == i as u32)
                .map(|r| r.uuid.clone())
        })
        .next_back()
}

/// The lines that write a `Write` to a Claude Code session.
fn lines(t: &Transcript, st: &State, w: &Write<'_>) -> Result<Vec<String>, String> {
    let mut stamp = w.now_ms.max(st.newest_ms + 1);
    let mut next_stamp = || {
        let s = iso_timestamp(stamp);
        stamp += 1;
        s
    };
    let mut out = own_rows(t, w, &mut next_stamp)?;
    let Some(shown) = w.shown else {
        return Ok(out);
    };
    let Some(tail) = st.tail else {
        return Err("it has no message on its active chain to resume from".into());
    };
    // What is shown: summaries first (mf's, and the agent's own if it stands), then kept entries;
    // a stub is kept in the place of the entry it stands in for, shown by a copy of that row.
    let mut texts: Vec<String> = Vec::new();
    let mut kept_entries: Vec<u32> = Vec::new();
    let mut stubs: HashMap<u32, String> = HashMap::new();
    for s in shown {
        let (orig, content) = match s {
            Shown::New(d) => {
                let d = &w.drafts[*d];
                match d.kind {
                    ClaimKind::Summary => {
                        texts.push(d.content.clone());
                        continue;
                    }
                    ClaimKind::Stub => (d.stub_of.unwrap_or(NONE), d.content.clone()),
                }
            }
            Shown::Existing(i) => {
                let e = &t.entries[*i as usize];
                if e.claim == NONE {
                    kept_entries.push(*i);
                    continue;
                }
                let c = &t.claims[e.claim as usize];
                let content = t.text(*i as usize).map_err(|e| e.to_string())?;
                match c.kind {
                    ClaimKind::Summary => {
                        texts.push(content);
                        continue;
                    }
                    ClaimKind::Stub => (common::stubbed(t, c), content),
                }
            }
        };
        if orig == NONE || st.rows.get(tail).is_some_and(|r| r.entry == orig) {
            return Err("a stub stands in for no tool result before the tail".into());
        }
        kept_entries.push(orig);
        stubs.insert(orig, content);
    }
    let kept_set: HashSet<u32> = kept_entries.iter().copied().collect();
    let (mut picked, first_line) = kept_rows(t, st, &kept_entries, &kept_set, tail);
    // Each stubbed row's uuid gives way to its copy's.
    let boundary_uuid = fresh_uuid();
    let mut copies: Vec<String> = Vec::new();
    let mut copy_uuids: HashMap<&str, String> = HashMap::new();
    for r in st.rows.iter().filter(|r| !r.mf) {
        if let Some(content) = stubs.get(&r.entry) {
            let uuid = fresh_uuid();
            copies.push(stub_row(t, r.entry, content, &uuid, &boundary_uuid)?);
            copy_uuids.insert(r.uuid.as_str(), uuid);
        }
    }
    for u in &mut picked {
        if let Some(c) = copy_uuids.get(*u) {
            *u = c.as_str();
        }
    }
    let envelope = &st.envelope;
    let with_envelope = |m: &mut Map<String, Value>| {
        for (k, v) in envelope {
            m.insert(k.clone(), v.clone());
        }
        m.insert("isSidechain".into(), Value::from(st.sidechain));
    };
    let summary_uuid = fresh_uuid();
    // mf's summary row, hung on the boundary, is the first row the boundary preserves.
    let mut uuids: Vec<&str> = Vec::new();
    if !texts.is_empty() {
        uuids.push(summary_uuid.as_str());
    }
    uuids.extend(picked);
    uuids.push(st.rows[tail].uuid.as_str());
    let last_folded =
        last_folded(t, st, &kept_set, first_line).unwrap_or_else(|| st.rows[tail].uuid.clone());
    let shows = !texts.is_empty() || !stubs.is_empty();
    let op = if shows { "show" } else { "restore" };
    let mut tr = Map::new();
    tr.insert("parentUuid".into(), Value::from(st.rows[tail].uuid.clone()));
    with_envelope(&mut tr);
    tr.insert("type".into(), Value::from("system"));
    tr.insert("subtype".into(), Value::from("informational"));
    tr.insert(
        "content".into(),
        Value::from(if shows {
            "mf: compacted"
        } else {
            "mf: summary withdrawn"
        }),
    );
    tr.insert("isMeta".into(), Value::from(true));
    tr.insert("level".into(), Value::from("info"));
    tr.insert("timestamp".into(), Value::from(next_stamp()));
    tr.insert("uuid".into(), Value::from(fresh_uuid()));
    out.push(mf_first(wire::view_object(op), tr));
    let mut bnd = Map::new();
    bnd.insert("parentUuid".into(), Value::Null);
    bnd.insert("logicalParentUuid".into(), Value::from(last_folded));
    with_envelope(&mut bnd);
    bnd.insert("type".into(), Value::from("system"));
    bnd.insert("subtype".into(), Value::from("compact_boundary"));
    bnd.insert("content".into(), Value::from("Conversation compacted"));
    bnd.insert("isMeta".into(), Value::from(false));
    bnd.insert("timestamp".into(), Value::from(next_stamp()));
    bnd.insert("uuid".into(), Value::from(boundary_uuid.clone()));
    bnd.insert("level".into(), Value::from("info"));
    bnd.insert(
        "compactMetadata".into(),
        json!({
            "trigger": "manual",
            "preTokens": w.tokens_before,
            "preservedSegment": {"headUuid": uuids[0], "anchorUuid": boundary_uuid, "tailUuid": uuids[uuids.len() - 1]},
            "preservedMessages": {"anchorUuid": boundary_uuid, "uuids": uuids},
        }),
    );
    out.push(mf_first(wire::view_object(op), bnd));
    // The stubs' rows after the boundary, which lists them: until the last is there and whole,
    // Claude Code relinks nothing.
    out.extend(copies);
    // The summary row comes last, and the boundary lists it first among the rows it preserves:
    // Claude Code relinks nothing while a preserved row is missing, so until this last line is
    // there and whole it shows what it showed before (and mf's reader counts none of the
    // write). Before the boundary, the trailer makes the kept tail the newest leaf again.
    if !texts.is_empty() {
        let mut sm = Map::new();
        sm.insert("parentUuid".into(), Value::from(boundary_uuid.clone()));
        with_envelope(&mut sm);
        sm.insert("type".into(), Value::from("user"));
        sm.insert(
            "message".into(),
            json!({"role": "user", "content": format!("{}\n\n[end of mf's summaries; the conversation continues below]", texts.join("\n\n"))}),
        );
        sm.insert("isVisibleInTranscriptOnly".into(), Value::from(true));
        sm.insert("isCompactSummary".into(), Value::from(true));
        sm.insert("uuid".into(), Value::from(summary_uuid.clone()));
        sm.insert("timestamp".into(), Value::from(next_stamp()));
        out.push(mf_first(wire::view_object(op), sm));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::parse_iso;

    #[test]
    fn iso_timestamps_read_back() {
        let ms = 1_764_502_188_037;
        assert_eq!(parse_iso(&super::iso_timestamp(ms)), Some(ms));
        assert_eq!(parse_iso("2025-12-08T22:41:05Z"), Some(1_765_233_665_000));
        assert_eq!(parse_iso("nope"), None);
    }
}
