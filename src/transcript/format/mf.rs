//! The lines mf wrote into a transcript, read back the same way in every format: a summary or
//! stub becomes an entry carrying its claim, a record a record, a line of a newer mf's kind an
//! unknown record. Where a format keeps a claim's fields (its text, id, tool call, and the shape
//! mf writes there) is the format's to say, in [`ClaimFields`].

use serde_json::{Map, Value};

use crate::digest::{content_fingerprint, id_hash};
use crate::entry::{Claim, ClaimKind, RecordKind, Role};
use crate::transcript::build::{At, Build, NewEntry};
use crate::transcript::wire::{self, MfObject};

/// A summary's or stub's fields, as the format keeps them in mf's line.
pub struct ClaimFields<'a> {
    /// The role of the entry.
    pub role: Role,
    /// The claim's text (`None`: the line has no text string).
    pub content: Option<&'a str>,
    /// Characters of the entry's text.
    pub chars: u32,
    /// The claim's id as written (empty when the line has none).
    pub id: &'a str,
    /// The entry's id hash.
    pub id_hash: u64,
    /// Tool calls the entry opens.
    pub calls: Vec<u64>,
    /// Tool calls it answers (a stub's).
    pub answers: Vec<u64>,
    /// Whether the line has the shape mf writes in this format; why not.
    pub shape_ok: Result<(), String>,
}

impl<'a> ClaimFields<'a> {
    /// The fields of an agent format's line, whose `content` and `id` strings lie in `holder`:
    /// a summary is a system entry, a stub (`stub_role`) answers the call it stands in for.
    pub fn in_object(
        holder: Option<&'a Map<String, Value>>,
        stub_role: Role,
        kind: ClaimKind,
        answers: Vec<u64>,
        shape_ok: Result<(), String>,
    ) -> Self {
        let field = |k: &str| {
            holder
                .and_then(|h| h.get(k))
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let (content, id) = (field("content"), field("id"));
        ClaimFields {
            role: if kind == ClaimKind::Stub {
                stub_role
            } else {
                Role::System
            },
            content: Some(content),
            chars: content.chars().count() as u32,
            id,
            id_hash: id_hash(id),
            calls: Vec::new(),
            answers,
            shape_ok,
        }
    }
}

/// What a line mf wrote turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// A summary or stub: the entry it became.
    Claim(u32),
    /// A record (kept in the build).
    Record,
    /// A view line (what mf wrote for the agent to show).
    View,
    /// A kind this mf does not know (kept as an unknown record).
    Unknown,
}

/// Read the `mf` object of a line mf wrote at `at` into `b`; `fields` says where the format
/// keeps a claim's fields.
pub fn read<'a>(
    b: &mut Build,
    at: &At<'_>,
    mf: &Value,
    fields: impl FnOnce(ClaimKind) -> ClaimFields<'a>,
) -> Seen {
    match wire::parse_mf(mf) {
        MfObject::Claim { kind, coverage } => {
            let f = fields(kind);
            let i = b.entry(
                at,
                NewEntry {
                    role: f.role,
                    flags: 0,
                    chars: f.chars,
                    id: f.id_hash,
                    calls: &f.calls,
                    answers: &f.answers,
                },
            );
            b.claim(
                i,
                Claim {
                    entry: 0,
                    kind,
                    id: f.id.to_string(),
                    coverage,
                    content_fingerprint: f.content.map(content_fingerprint),
                    label: f.content.map(super::common::first_line).unwrap_or_default(),
                    shape_ok: f.shape_ok,
                },
            );
            Seen::Claim(i)
        }
        MfObject::Record(kind, at_ms) => {
            b.record(wire::record(at.line, kind, at_ms));
            Seen::Record
        }
        MfObject::View => Seen::View,
        MfObject::Unknown(kind) => {
            b.record(wire::record(at.line, RecordKind::Unknown { kind }, 0));
            Seen::Unknown
        }
    }
}

/// mf's `mf` object for a summary or stub, as a value to put first in the line a format writes.
pub fn claim_value(d: &crate::entry::Draft) -> Value {
    serde_json::from_str(&wire::claim_object(d)).expect("an mf object")
}

/// mf's `mf` object for a record, as a value to put first in the line a format writes.
pub fn record_value(kind: &RecordKind, at_ms: u64) -> Value {
    let rec: Value = serde_json::from_str(&wire::record_line(kind, at_ms)).expect("a record");
    rec["mf"].clone()
}
