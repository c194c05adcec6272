//! The chat format: one OpenAI-style chat message per line (`{"role", "content", "tool_calls",
//! "tool_call_id", "name", …}`), any other fields kept untouched. A line that is not a message is
//! an error naming its line; mf's own lines are summaries (`role: system`), stubs (`role: tool`)
//! and records.

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::mf::{self, ClaimFields};
use super::{Adapter, Reader, common, detect_line};
use crate::digest::{content_fingerprint, id_hash};
use crate::entry::{Claim, ClaimKind, Draft, LABEL_PREFIX, Role, flag};
use crate::transcript::build::{At, Build, NewEntry};
use crate::transcript::error::TranscriptError;
use crate::transcript::read::{LineError, LineReader};
use crate::transcript::wire::{self, MF_PREFIX, MfObject};
use crate::transcript::{Transcript, Write};

/// A chat line as parsed on any core.
pub enum Parsed {
    Message(Message),
    /// A line mf wrote (`{"mf":…}`), parsed whole.
    Mf(Value),
    /// mf 0.1.0's record line.
    LegacyRecord(Value),
    /// Valid JSON that is not a chat message, and why.
    NotMessage(String),
}

pub struct Message {
    pub role: Role,
    pub chars: u32,
    pub id: u64,
    pub has_id: bool,
    pub calls: Vec<u64>,
    pub answer: Option<u64>,
    pub model: Option<String>,
    /// The whole line, when it claims to be an mf 0.1.0 summary (a `summarizes` field, or content
    /// that starts with mf's label).
    pub claim: Option<Value>,
}

/// `content` counted without copying it: a string's characters, or "complex" (parts, objects).
#[derive(Default)]
struct ContentCount {
    chars: usize,
    complex: bool,
    label_like: bool,
}

impl<'de> Deserialize<'de> for ContentCount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // The value's JSON text, checked but not unescaped or copied: the characters of a string
        // are counted from its escaped form.
        let raw: &'de RawValue = Deserialize::deserialize(d)?;
        let text = raw.get();
        Ok(match text.as_bytes().first() {
            Some(b'"') => {
                let body = &text[1..text.len() - 1];
                let head = &body.as_bytes()[..body.len().min(LABEL_PREFIX.len() + 8)];
                let label_like = if head.contains(&b'\\') {
                    // Escapes near the start: decode the string to compare its opening.
                    serde_json::from_str::<Cow<'_, str>>(text)
                        .map_err(de::Error::custom)?
                        .starts_with(LABEL_PREFIX)
                } else {
                    body.starts_with(LABEL_PREFIX)
                };
                ContentCount {
                    chars: escaped_chars(body.as_bytes()),
                    complex: false,
                    label_like,
                }
            }
            Some(b'n') => ContentCount::default(),
            _ => ContentCount {
                complex: true,
                ..ContentCount::default()
            },
        })
    }
}

/// The characters of a JSON string's contents (between its quotes, escapes as written): every
/// character counts once, an escape (`\n`, `\u00e9`, a surrogate pair) as the one character it
/// stands for.
fn escaped_chars(body: &[u8]) -> usize {
    // UTF-8: every byte that does not continue a character starts one.
    let mut chars = body.iter().filter(|&&b| (b as i8) >= -0x40).count();
    let mut i = 0;
    while let Some(p) = memchr::memchr(b'\\', &body[i..]) {
        let at = i + p;
        match body.get(at + 1) {
            Some(b'u') => {
                let unit = |k: usize| {
                    body.get(k..k + 4)
                        .and_then(|h| std::str::from_utf8(h).ok())
                        .and_then(|h| u16::from_str_radix(h, 16).ok())
                };
                let pair = unit(at + 2).is_some_and(|u| (0xD800..0xDC00).contains(&u))
                    && body.get(at + 6..at + 8) == Some(b"\\u")
                    && unit(at + 8).is_some_and(|u| (0xDC00..0xE000).contains(&u));
                if pair {
                    chars -= 11;
                    i = at + 12;
                } else {
                    chars -= 5;
                    i = at + 6;
                }
            }
            Some(_) => {
                chars -= 1;
                i = at + 2;
            }
            None => break,
        }
    }
    chars
}

/// An id: a string or a number, hashed.
#[derive(Clone, Copy)]
struct IdHash(u64);

impl<'de> Deserialize<'de> for IdHash {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<IdHash>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an id")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Self::Value, E> {
                Ok((!s.is_empty()).then(|| IdHash(id_hash(s))))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Self::Value, E> {
                Ok(Some(IdHash(id_hash(&n.to_string()))))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Self::Value, E> {
                Ok(Some(IdHash(id_hash(&n.to_string()))))
            }
            fn visit_f64<E: de::Error>(self, n: f64) -> Result<Self::Value, E> {
                Ok(Some(IdHash(id_hash(&Value::from(n).to_string()))))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_element::<IgnoredAny>()?.is_some() {}
                Ok(None)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut a: A) -> Result<Self::Value, A::Error> {
                while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(None)
            }
        }
        d.deserialize_any(V).map(|o| o.unwrap_or(IdHash(u64::MAX)))
    }
}

/// A tool call's arguments, counted: a string's characters, or "complex" (an object).
#[derive(Default)]
struct ArgsCount {
    chars: usize,
    complex: bool,
}

impl<'de> Deserialize<'de> for ArgsCount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let c = ContentCount::deserialize(d)?;
        Ok(ArgsCount {
            chars: c.chars,
            complex: c.complex,
        })
    }
}

#[derive(Deserialize)]
struct FunctionRef<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(default)]
    arguments: Option<ArgsCount>,
}

#[derive(Deserialize)]
struct CallRef<'a> {
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    function: Option<FunctionRef<'a>>,
}

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    #[serde(default)]
    id: Option<IdHash>,
    #[serde(default)]
    content: ContentCount,
    #[serde(borrow, default)]
    tool_calls: Option<Vec<CallRef<'a>>>,
    #[serde(default)]
    function_call: Option<IgnoredAny>,
    #[serde(borrow, default)]
    tool_call_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(default)]
    summarizes: Option<IgnoredAny>,
    #[serde(default, rename = "mfRecord")]
    mf_record: Option<IgnoredAny>,
}

fn role_of(s: &str) -> Option<Role> {
    Some(match s {
        "system" | "developer" => Role::System,
        "user" => Role::User,
        "assistant" => Role::Assistant,
        "tool" | "function" => Role::Tool,
        _ => return None,
    })
}

#[derive(Debug, Default, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct ChatReader;

impl LineReader for ChatReader {
    type Parsed<'a> = Parsed;
    const STRICT: bool = true;

    fn may_be_line(&self, parsed: &Parsed) -> bool {
        !matches!(parsed, Parsed::NotMessage(_))
    }

    fn parse(&self, bytes: &[u8]) -> Result<Parsed, LineError> {
        if bytes.starts_with(MF_PREFIX) {
            let v = serde_json::from_slice::<Value>(bytes).map_err(|e| LineError::from_json(&e))?;
            // mf's record lines hold nothing but the mf object (its summaries and stubs carry a
            // role and content): a line with more is someone's message that starts like mf's,
            // read as a message — unless its mf object is of a version this mf does not know (a
            // newer mf's summary: kept and ignored, never shown beside the originals it covers).
            let own = v.as_object().is_some_and(|o| {
                o.len() == 1
                    || matches!(wire::parse_mf(&o["mf"]), MfObject::Claim { .. })
                    || o["mf"]["v"].as_u64().is_some_and(|n| n > 2)
            });
            if own {
                return Ok(Parsed::Mf(v));
            }
        }
        let line: Line<'_> = match serde_json::from_slice(bytes) {
            Ok(l) => l,
            Err(e) => {
                // Valid JSON of the wrong shape is "not a message"; anything else is malformed.
                return match serde_json::from_slice::<Value>(bytes) {
                    Ok(v) => Ok(Parsed::NotMessage(not_message(&v, &e))),
                    Err(_) => Err(LineError::from_json(&e)),
                };
            }
        };
        // mf 0.1.0's record lines have no role: a message carrying an `mfRecord` field is a
        // message.
        if line.mf_record.is_some() && line.role.is_none() {
            return serde_json::from_slice::<Value>(bytes)
                .map(Parsed::LegacyRecord)
                .map_err(|e| LineError::from_json(&e));
        }
        let Some(role_str) = line.role else {
            let v: Value = serde_json::from_slice(bytes).map_err(|e| LineError::from_json(&e))?;
            return Ok(Parsed::NotMessage(match detect_line(&v) {
                Some(what) => format!(
                    "this looks like {what}, not a chat message (one `{{\"role\": …, \"content\": …}}` per line)"
                ),
                None => "not a chat message: no `role` field".into(),
            }));
        };
        let Some(role) = role_of(&role_str) else {
            return Ok(Parsed::NotMessage(format!(
                "unknown role `{role_str}` (expected system, developer, user, assistant, tool or function)"
            )));
        };
        let complex_args = line.tool_calls.as_ref().is_some_and(|calls| {
            calls.iter().any(|c| {
                c.function
                    .as_ref()
                    .and_then(|f| f.arguments.as_ref())
                    .is_some_and(|a| a.complex)
            })
        });
        let needs_value = line.content.complex
            || complex_args
            || line.function_call.is_some()
            || line.summarizes.is_some()
            || line.content.label_like;
        // The text's length without building it: content, then one `[calls name(args)]` line
        // per call (the layout of `text`).
        let mut chars = line.content.chars;
        let mut calls = Vec::new();
        for c in line.tool_calls.iter().flatten() {
            let f = c.function.as_ref();
            let name = f
                .and_then(|f| f.name.as_deref())
                .map_or(1, |n| n.chars().count());
            let args = f.and_then(|f| f.arguments.as_ref()).map_or(0, |a| a.chars);
            if chars > 0 {
                chars += 1;
            }
            chars += name + args + 10;
            if let Some(id) = c.id.as_deref().filter(|id| !id.is_empty()) {
                calls.push(id_hash(id));
            }
        }
        let mut msg = Message {
            role,
            chars: chars as u32,
            id: line.id.map_or(u64::MAX, |i| i.0),
            has_id: line.id.is_some_and(|i| i.0 != u64::MAX),
            calls,
            answer: line.tool_call_id.as_deref().map(id_hash),
            model: line.model.map(Cow::into_owned),
            claim: None,
        };
        if needs_value {
            let v: Value = serde_json::from_slice(bytes).map_err(|e| LineError::from_json(&e))?;
            let obj = v.as_object().expect("a message line is an object");
            msg.chars = text(obj).chars().count() as u32;
            msg.calls = call_ids(obj);
            if line.summarizes.is_some() || line.content.label_like {
                msg.claim = Some(v);
            }
        }
        Ok(Parsed::Message(msg))
    }

    fn push(&mut self, b: &mut Build, at: &At<'_>, parsed: Parsed) -> Result<(), TranscriptError> {
        let path = || b.path.clone();
        match parsed {
            Parsed::NotMessage(why) => Err(TranscriptError::NotMessage {
                path: path(),
                line: at.line as usize,
                why,
            }),
            Parsed::LegacyRecord(v) => {
                b.record(wire::parse_record_v1(at.line, &v));
                Ok(())
            }
            Parsed::Mf(v) => mf_line(b, at, v),
            Parsed::Message(m) => {
                let id = if m.has_id {
                    m.id
                } else {
                    id_hash(&format!("line-{}", at.line))
                };
                if m.role == Role::Assistant
                    && let Some(model) = &m.model
                {
                    b.agent_model(model);
                }
                let i = b.entry(
                    at,
                    NewEntry {
                        role: m.role,
                        flags: if m.role == Role::User {
                            flag::TURN_START
                        } else {
                            0
                        },
                        chars: m.chars,
                        id,
                        calls: &m.calls,
                        answers: if m.role == Role::Tool {
                            m.answer.as_slice()
                        } else {
                            &[]
                        },
                    },
                );
                if let Some(v) = m.claim {
                    let claim = legacy_claim(&v, m.role);
                    b.claim(i, claim);
                }
                Ok(())
            }
        }
    }

    fn finish(&mut self, _b: &mut Build) -> Result<(), TranscriptError> {
        Ok(())
    }
}

fn not_message(v: &Value, e: &serde_json::Error) -> String {
    if !v.is_object() {
        return "line is JSON but not an object; each line must be one chat message".into();
    }
    let e = e.to_string();
    let e = e.split(" at line ").next().unwrap_or_default();
    format!("not a chat message: {e}")
}

/// A line mf wrote: a summary, a stub, or a record.
fn mf_line(b: &mut Build, at: &At<'_>, v: Value) -> Result<(), TranscriptError> {
    let obj = v.as_object().expect("an mf line is an object");
    let seen = mf::read(b, at, &obj["mf"], |kind| {
        let role = obj
            .get("role")
            .and_then(Value::as_str)
            .and_then(role_of)
            .unwrap_or(Role::System);
        let want = match kind {
            ClaimKind::Summary => Role::System,
            ClaimKind::Stub => Role::Tool,
        };
        let id = obj.get("id").and_then(Value::as_str).unwrap_or_default();
        let answers: Vec<u64> = obj
            .get("tool_call_id")
            .and_then(Value::as_str)
            .map(id_hash)
            .into_iter()
            .collect();
        let shape_ok = if role != want {
            Err(format!(
                "it has role `{}`; mf writes a {} with role `{}`",
                role.as_str(),
                kind_name(kind),
                want.as_str()
            ))
        } else if kind == ClaimKind::Stub && answers.is_empty() {
            Err("a stub must answer the tool call it stands in for".into())
        } else if id.is_empty() {
            Err("it has no id".into())
        } else {
            Ok(())
        };
        ClaimFields {
            role,
            content: obj.get("content").and_then(Value::as_str),
            chars: text(obj).chars().count() as u32,
            id,
            id_hash: if id.is_empty() {
                id_hash(&format!("line-{}", at.line))
            } else {
                id_hash(id)
            },
            calls: call_ids(obj),
            answers: if role == Role::Tool {
                answers
            } else {
                Vec::new()
            },
            shape_ok,
        }
    });
    // A view line means nothing in a chat transcript: kept as a record of a kind not known.
    if seen == mf::Seen::View {
        b.record(wire::record(
            at.line,
            crate::entry::RecordKind::Unknown {
                kind: "view".into(),
            },
            0,
        ));
    }
    Ok(())
}

fn kind_name(k: ClaimKind) -> &'static str {
    match k {
        ClaimKind::Summary => "summary",
        ClaimKind::Stub => "stub",
    }
}

/// A message line of mf 0.1.0's shape that claims to be a summary.
fn legacy_claim(v: &Value, role: Role) -> Claim {
    let content = v.get("content").and_then(Value::as_str);
    let coverage = match v.get("summarizes") {
        Some(c) => wire::coverage_v1(c),
        None => Err("it has mf's label but no coverage record".into()),
    };
    Claim {
        entry: 0,
        kind: ClaimKind::Summary,
        id: v
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        coverage,
        content_fingerprint: content.map(content_fingerprint),
        label: content.map(common::first_line).unwrap_or_default(),
        shape_ok: if role == Role::System {
            Ok(())
        } else {
            Err(format!(
                "it has role `{}`; mf writes summaries with role `system`",
                role.as_str()
            ))
        },
    }
}

fn call_ids(obj: &Map<String, Value>) -> Vec<u64> {
    obj.get("tool_calls")
        .and_then(Value::as_array)
        .map(|calls| {
            calls
                .iter()
                .filter_map(|c| c.get("id").and_then(Value::as_str))
                .filter(|id| !id.is_empty())
                .map(id_hash)
                .collect()
        })
        .unwrap_or_default()
}

/// The model-visible text of a chat message: its content (parts joined by newlines, media as
/// placeholders), then one `[calls name(args)]` line per tool call.
pub fn text(obj: &Map<String, Value>) -> String {
    let mut text = common::content_text(obj.get("content"));
    if let Some(Value::Array(calls)) = obj.get("tool_calls") {
        for call in calls {
            let f = call.get("function");
            let name = f
                .and_then(|f| f.get("name"))
                .and_then(Value::as_str)
                .unwrap_or("?");
            let args = f
                .and_then(|f| f.get("arguments"))
                .map(common::arguments_text)
                .unwrap_or_default();
            common::push_line(&mut text, &format!("[calls {name}({args})]"));
        }
    }
    if let Some(f @ Value::Object(_)) = obj.get("function_call") {
        let name = f.get("name").and_then(Value::as_str).unwrap_or("?");
        let args = f
            .get("arguments")
            .map(common::arguments_text)
            .unwrap_or_default();
        common::push_line(&mut text, &format!("[calls {name}({args})]"));
    }
    text
}

/// The tool's name, for a tool result.
pub fn tool_name(obj: &Map<String, Value>) -> Option<String> {
    obj.get("name").and_then(Value::as_str).map(str::to_string)
}

/// The chat message a model would be sent: `role`, `content` and the tool fields; nothing else.
pub fn chat_message(obj: &Map<String, Value>) -> Value {
    let mut out = Map::new();
    out.insert(
        "role".into(),
        obj.get("role").cloned().unwrap_or(Value::from("system")),
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

/// What mf keeps of a chat transcript for writing to it: nothing but its entries.
#[derive(Debug, Clone, Copy, Default)]
pub struct State;

impl Reader for ChatReader {
    fn adapter(&self, _: &Build) -> Box<dyn Adapter> {
        Box::new(State)
    }
}

impl Adapter for State {
    fn text(&self, _: usize, rows: &[Map<String, Value>]) -> String {
        text(&rows[0])
    }

    fn tool_name(&self, rows: &[Map<String, Value>]) -> Option<String> {
        tool_name(&rows[0])
    }

    fn chat_messages(&self, _: usize, rows: &[Map<String, Value>]) -> Vec<Value> {
        vec![chat_message(&rows[0])]
    }

    /// One line per summary or stub, then the records; a chat transcript has no view to show.
    fn lines(&self, t: &Transcript, w: &Write<'_>) -> Result<Vec<String>, TranscriptError> {
        let mut out = Vec::new();
        for d in w.drafts {
            let stub_of = match d.stub_of {
                Some(i) => Some(
                    t.values(i as usize)
                        .map_err(|source| TranscriptError::Open {
                            path: t.path.clone(),
                            source,
                        })?
                        .remove(0),
                ),
                None => None,
            };
            out.push(draft_line(d, stub_of.as_ref()));
        }
        for (kind, at) in w.records {
            out.push(wire::record_line(kind, *at));
        }
        Ok(out)
    }
}

/// The line for a summary or stub in this format.
pub fn draft_line(d: &Draft, stub_of: Option<&Map<String, Value>>) -> String {
    let mut line = String::from("{\"mf\":");
    line.push_str(&wire::claim_object(d));
    let mut rest = Map::new();
    rest.insert("id".into(), Value::from(d.id.clone()));
    match d.kind {
        ClaimKind::Summary => {
            rest.insert("role".into(), Value::from("system"));
            rest.insert("turn".into(), Value::from(d.turn));
        }
        ClaimKind::Stub => {
            rest.insert("role".into(), Value::from("tool"));
            if let Some(orig) = stub_of {
                for key in ["tool_call_id", "name"] {
                    if let Some(v) = orig.get(key) {
                        rest.insert(key.into(), v.clone());
                    }
                }
            }
        }
    }
    rest.insert("content".into(), Value::from(d.content.clone()));
    let rest = serde_json::to_string(&Value::Object(rest)).expect("a line serializes");
    line.push(',');
    line.push_str(&rest[1..]);
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(line: &str) -> u32 {
        match ChatReader.parse(line.as_bytes()).unwrap() {
            Parsed::Message(m) => m.chars,
            _ => panic!("not a message: {line}"),
        }
    }

    fn full(line: &str) -> usize {
        let v: Value = serde_json::from_str(line).unwrap();
        text(v.as_object().unwrap()).chars().count()
    }

    #[test]
    fn escaped_strings_count_the_characters_they_stand_for() {
        let mut rng = fastrand::Rng::with_seed(5);
        let alphabet: Vec<char> = "ab \"\\\n\t/é€😀\u{1}\u{7f}\u{2028}[summary of earlier turns"
            .chars()
            .collect();
        for _ in 0..2_000 {
            let n = rng.usize(0..40);
            let text: String = (0..n)
                .map(|_| alphabet[rng.usize(..alphabet.len())])
                .collect();
            // serde's escaping, and an escaping of every character as \uXXXX (pairs for astral).
            let plain = serde_json::to_string(&text).unwrap();
            let mut all = String::from("\"");
            for c in text.chars() {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    all.push_str(&format!("\\u{u:04x}"));
                }
            }
            all.push('"');
            for quoted in [plain, all] {
                let line = format!("{{\"role\":\"user\",\"content\":{quoted}}}");
                assert_eq!(count(&line) as usize, text.chars().count(), "{line}");
                let claims = match ChatReader.parse(line.as_bytes()).unwrap() {
                    Parsed::Message(m) => m.claim.is_some(),
                    _ => unreachable!(),
                };
                assert_eq!(claims, text.starts_with(LABEL_PREFIX), "{line}");
            }
        }
    }

    #[test]
    fn the_fast_count_is_the_text_length() {
        for line in [
            r#"{"role":"user","content":"héllo\nwörld"}"#,
            r#"{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"get","arguments":"{\"q\":1}"}}]}"#,
            r#"{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"72F"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}"#,
            r#"{"role":"assistant","content":"x","function_call":{"name":"f","arguments":{"a":[1,2]}}}"#,
            r#"{"role":"user","content":{"weird":true}}"#,
            r#"{"role":"user","content":42}"#,
            r#"{"role":"user"}"#,
        ] {
            assert_eq!(count(line) as usize, full(line), "{line}");
        }
    }

    #[test]
    fn ids_and_tool_links() {
        let Parsed::Message(m) = ChatReader
            .parse(br#"{"id":7,"role":"assistant","content":null,"tool_calls":[{"id":"c1","function":{"name":"a","arguments":"{}"}},{"id":"c2","function":{"name":"b","arguments":"{}"}}]}"#)
            .unwrap()
        else {
            panic!()
        };
        assert_eq!(m.id, id_hash("7"));
        assert_eq!(m.calls, [id_hash("c1"), id_hash("c2")]);
    }

    #[test]
    fn lines_that_are_not_messages_say_why() {
        for (line, why) in [
            ("42", "not an object"),
            (
                r#"{"role":"wizard","content":"x"}"#,
                "unknown role `wizard`",
            ),
            (r#"{"content":"x"}"#, "no `role`"),
            (r#"{"messages":[{"role":"user","content":"x"}]}"#, "dataset"),
            (r#"{"role":5}"#, "not a chat message"),
        ] {
            match ChatReader.parse(line.as_bytes()) {
                Ok(Parsed::NotMessage(w)) => assert!(w.contains(why), "{line}: {w}"),
                _ => panic!("{line} should not be a message"),
            }
        }
        assert!(ChatReader.parse(br#"{"role": "user", oops}"#).is_err());
    }
}
