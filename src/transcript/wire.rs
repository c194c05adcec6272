//! The shapes of mf's own data in a line: the `mf` object every line mf writes begins with
//! (a summary's or stub's coverage, a decline, a retraction), and the mf 0.1.0 shapes
//! (`summarizes`, `mfRecord`) that are still read.
//!
//! Every line mf writes begins with the exact bytes of [`MF_PREFIX`], so a line cut short by a
//! crash can always be recognised as mf's own.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::entry::{
    ClaimKind, ClaimStrategy, Coverage, Covered, DeclineReason, DeclinedSpan, Draft, Record,
    RecordKind, SpanRef, Usage,
};

/// The first bytes of every line mf writes.
pub const MF_PREFIX: &[u8] = b"{\"mf\":{\"v\":";

/// The version of mf's line shapes written now.
pub const VERSION: u32 = 2;

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct UsageWire {
    input_tokens: u64,
    output_tokens: u64,
}

impl From<UsageWire> for Usage {
    fn from(u: UsageWire) -> Self {
        Usage {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            ..Usage::default()
        }
    }
}

impl From<Usage> for UsageWire {
    fn from(u: Usage) -> Self {
        UsageWire {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
        }
    }
}

/// mf 0.1.0's coverage record (`summarizes`).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CoverageV1 {
    from_turn: u64,
    to_turn: u64,
    entry_count: u64,
    covered_ids: Vec<String>,
    model: String,
    summarized_at_ms: u64,
    #[serde(default)]
    usage: Option<UsageWire>,
    fingerprint: String,
}

/// The coverage record written now (inside `mf`).
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct CoverageV2 {
    from_turn: u64,
    to_turn: u64,
    entry_count: u64,
    lines: Vec<[u32; 2]>,
    digest: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tail_line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    kept_results: Option<u32>,
    model: String,
    summarized_at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    usage: Option<UsageWire>,
    fingerprint: String,
}

/// Read mf 0.1.0's `summarizes` value.
pub fn coverage_v1(v: &Value) -> Result<Coverage, String> {
    let w: CoverageV1 = serde_json::from_value(v.clone())
        .map_err(|e| format!("its coverage record is not well formed ({e})"))?;
    Ok(Coverage {
        version: 1,
        from_turn: w.from_turn,
        to_turn: w.to_turn,
        entry_count: w.entry_count,
        covered: Covered::Ids(w.covered_ids),
        tail_line: None,
        kept_results: None,
        strategy: None,
        model: w.model,
        summarized_at_ms: w.summarized_at_ms,
        usage: w.usage.map(Usage::from),
        fingerprint: w.fingerprint,
    })
}

fn coverage_v2(v: &Value) -> Result<Coverage, String> {
    let w: CoverageV2 = serde_json::from_value(v.clone())
        .map_err(|e| format!("its coverage record is not well formed ({e})"))?;
    Ok(Coverage {
        version: 2,
        from_turn: w.from_turn,
        to_turn: w.to_turn,
        entry_count: w.entry_count,
        covered: Covered::Lines {
            ranges: w.lines,
            digest: w.digest,
        },
        tail_line: w.tail_line,
        kept_results: w.kept_results,
        strategy: None,
        model: w.model,
        summarized_at_ms: w.summarized_at_ms,
        usage: w.usage.map(Usage::from),
        fingerprint: w.fingerprint,
    })
}

fn coverage_wire(c: &Coverage) -> CoverageV2 {
    let (lines, digest) = match &c.covered {
        Covered::Lines { ranges, digest } => (ranges.clone(), digest.clone()),
        Covered::Ids(_) => unreachable!("mf writes only line coverage"),
    };
    CoverageV2 {
        from_turn: c.from_turn,
        to_turn: c.to_turn,
        entry_count: c.entry_count,
        lines,
        digest,
        tail_line: c.tail_line,
        kept_results: c.kept_results,
        model: c.model.clone(),
        summarized_at_ms: c.summarized_at_ms,
        usage: c.usage.map(UsageWire::from),
        fingerprint: c.fingerprint.clone(),
    }
}

/// What the `mf` object of a line says.
#[derive(Debug, Clone, PartialEq)]
pub enum MfObject {
    /// A summary or stub, with its coverage (or why it cannot be read).
    Claim {
        kind: ClaimKind,
        coverage: Result<Coverage, String>,
    },
    /// A decline or retraction record.
    Record(RecordKind, u64),
    /// A line mf wrote in an agent's own shape so the agent sees what mf's recall shows (its
    /// standing summaries and the entries they do not cover); it carries no claim of its own.
    View,
    /// A kind this mf does not know (a newer mf, or damage).
    Unknown(String),
}

/// Read the `mf` object of a line.
pub fn parse_mf(v: &Value) -> MfObject {
    let Some(obj) = v.as_object() else {
        return MfObject::Unknown("mf object is not an object".into());
    };
    let kind = obj.get("kind").and_then(Value::as_str).unwrap_or("?");
    match obj.get("v").and_then(Value::as_u64) {
        Some(2) => {}
        Some(n) => return MfObject::Unknown(format!("{kind} (line version {n})")),
        None => return MfObject::Unknown(format!("{kind} (no version)")),
    }
    let at_ms = obj.get("atMs").and_then(Value::as_u64).unwrap_or(0);
    match kind {
        "summary" | "stub" => MfObject::Claim {
            kind: if kind == "stub" {
                ClaimKind::Stub
            } else {
                ClaimKind::Summary
            },
            coverage: match obj.get("coverage") {
                // The strategy stands beside the coverage, so that an mf that does not know it
                // still reads the coverage; one this mf does not know is read as none.
                Some(c) => coverage_v2(c).map(|mut cov| {
                    cov.strategy = obj
                        .get("strategy")
                        .and_then(Value::as_str)
                        .and_then(ClaimStrategy::parse);
                    cov
                }),
                None => Err("its mf record has no coverage".into()),
            },
        },
        "view" => MfObject::View,
        "decline" | "retract" => match record_v2(kind, obj) {
            Some(r) => MfObject::Record(r, at_ms),
            None => MfObject::Unknown(format!("{kind} (not well formed)")),
        },
        other => MfObject::Unknown(other.to_string()),
    }
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpanRefWire {
    from_line: u32,
    to_line: u32,
    count: u64,
    digest: String,
    from_turn: u64,
    to_turn: u64,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DeclineWire {
    reason: String,
    model: String,
    span: SpanRefWire,
    span_chars: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    summary_chars: Option<u64>,
    detail: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    usage: Option<UsageWire>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    key: Option<String>,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RetractWire {
    summary_id: String,
    fingerprint: String,
}

fn record_v2(kind: &str, obj: &Map<String, Value>) -> Option<RecordKind> {
    let v = Value::Object(obj.clone());
    match kind {
        "decline" => {
            let w: DeclineWire = serde_json::from_value(v).ok()?;
            Some(RecordKind::Decline {
                reason: DeclineReason::parse(&w.reason)?,
                model: w.model,
                span: DeclinedSpan::Ref(SpanRef {
                    from_line: w.span.from_line,
                    to_line: w.span.to_line,
                    count: w.span.count,
                    digest: w.span.digest,
                    from_turn: w.span.from_turn,
                    to_turn: w.span.to_turn,
                }),
                span_chars: w.span_chars,
                summary_chars: w.summary_chars,
                detail: w.detail,
                usage: w.usage.map(Usage::from),
                key: w.key,
            })
        }
        "retract" => {
            let w: RetractWire = serde_json::from_value(v).ok()?;
            Some(RecordKind::Retract {
                summary_id: w.summary_id,
                fingerprint: w.fingerprint,
            })
        }
        _ => None,
    }
}

/// Read an mf 0.1.0 record line (`{"mfRecord": …}`). One this mf cannot read is `Unknown`.
pub fn parse_record_v1(line: u32, v: &Value) -> Record {
    let kind_name = v.get("mfRecord").and_then(Value::as_str).unwrap_or("?");
    let at_ms = v.get("atMs").and_then(Value::as_u64).unwrap_or(0);
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let n = |k: &str| v.get(k).and_then(Value::as_u64);
    let kind = (|| {
        Some(match kind_name {
            "fold" => RecordKind::Fold {
                summary_id: s("summaryId")?,
                model: s("model")?,
                from_turn: n("fromTurn")?,
                to_turn: n("toTurn")?,
                entry_count: n("entryCount")?,
                span_chars: n("spanChars")?,
                summary_chars: n("summaryChars")?,
            },
            "decline" => RecordKind::Decline {
                reason: DeclineReason::parse(&s("reason")?)?,
                model: s("model")?,
                span: DeclinedSpan::Ids {
                    ids: serde_json::from_value(v.get("spanIds")?.clone()).ok()?,
                    from_turn: n("fromTurn")?,
                    to_turn: n("toTurn")?,
                },
                span_chars: n("spanChars")?,
                summary_chars: n("summaryChars"),
                detail: s("detail").unwrap_or_default(),
                usage: None,
                key: None,
            },
            "retract" => RecordKind::Retract {
                summary_id: s("summaryId")?,
                fingerprint: s("fingerprint")?,
            },
            _ => return None,
        })
    })()
    .unwrap_or_else(|| RecordKind::Unknown {
        kind: kind_name.to_string(),
    });
    Record { line, at_ms, kind }
}

/// A record line from the `mf` object (for records carried inside an mf line).
pub fn record(line: u32, kind: RecordKind, at_ms: u64) -> Record {
    Record { line, at_ms, kind }
}

/// The `mf` object of a summary or stub mf writes now, as JSON text.
pub fn claim_object(d: &Draft) -> String {
    let mut obj = Map::new();
    obj.insert("v".into(), Value::from(VERSION));
    obj.insert(
        "kind".into(),
        Value::from(match d.kind {
            ClaimKind::Summary => "summary",
            ClaimKind::Stub => "stub",
        }),
    );
    obj.insert(
        "coverage".into(),
        serde_json::to_value(coverage_wire(&d.coverage)).expect("coverage serializes"),
    );
    if let Some(st) = d.coverage.strategy {
        obj.insert("strategy".into(), Value::from(st.as_str()));
    }
    for (k, json) in &d.extra {
        let raw: Box<RawValue> =
            RawValue::from_string(json.clone()).expect("extra fields are JSON");
        obj.insert(
            (*k).to_string(),
            serde_json::to_value(raw).expect("raw JSON converts"),
        );
    }
    serde_json::to_string(&Value::Object(obj)).expect("an mf object serializes")
}

/// The `mf` object of a view line (what the agent is shown; no claim of its own).
pub fn view_object(op: &str) -> Value {
    serde_json::json!({"v": VERSION, "kind": "view", "op": op})
}

/// Where a line of a multi-line write stands in it: every line of one append to an agent's
/// session carries `"set":"<id>:<k>/<n>"` right after its version (`{"mf":{"v":2,"set":…`), so a
/// reader can tell a write that landed whole from one a crash cut short.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetTag {
    pub id: String,
    /// 0-based position in the set.
    pub k: u32,
    /// Lines in the set.
    pub n: u32,
}

/// The bytes every line mf writes now begins with, up to where the set tag goes.
fn versioned_prefix() -> String {
    format!(
        "{}{VERSION},",
        std::str::from_utf8(MF_PREFIX).expect("ASCII")
    )
}

/// Tag `lines` (each beginning with mf's prefix) as one set. One line, or lines of another
/// shape, are left as they are: a single line is whole or torn on its own.
pub fn tag_set(lines: &mut [String], id: &str) {
    let prefix = versioned_prefix();
    if lines.len() < 2 || !lines.iter().all(|l| l.starts_with(&prefix)) {
        return;
    }
    let n = lines.len();
    for (k, l) in lines.iter_mut().enumerate() {
        l.insert_str(prefix.len(), &format!("\"set\":\"{id}:{k}/{n}\","));
    }
}

/// The set tag of a line (whole or cut short), if it carries one.
pub fn set_tag(line: &[u8]) -> Option<SetTag> {
    // Every line passes here: one that is not mf's costs a comparison, not the prefix's String.
    if !line.starts_with(MF_PREFIX) {
        return None;
    }
    let prefix = versioned_prefix();
    let rest = line.strip_prefix(prefix.as_bytes())?;
    let rest = rest.strip_prefix(b"\"set\":\"")?;
    let end = memchr::memchr(b'"', &rest[..rest.len().min(64)])?;
    let tag = std::str::from_utf8(&rest[..end]).ok()?;
    let (id, pos) = tag.split_once(':')?;
    let (k, n) = pos.split_once('/')?;
    let (k, n) = (k.parse().ok()?, n.parse().ok()?);
    (k < n && !id.is_empty()).then(|| SetTag {
        id: id.to_string(),
        k,
        n,
    })
}

/// A complete record line (decline or retraction), beginning with [`MF_PREFIX`].
pub fn record_line(kind: &RecordKind, at_ms: u64) -> String {
    let (name, fields) = match kind {
        RecordKind::Decline {
            reason,
            model,
            span,
            span_chars,
            summary_chars,
            detail,
            usage,
            key,
        } => {
            let DeclinedSpan::Ref(r) = span else {
                unreachable!("mf writes declines by span reference")
            };
            let w = DeclineWire {
                reason: reason.as_str().to_string(),
                model: model.clone(),
                span: SpanRefWire {
                    from_line: r.from_line,
                    to_line: r.to_line,
                    count: r.count,
                    digest: r.digest.clone(),
                    from_turn: r.from_turn,
                    to_turn: r.to_turn,
                },
                span_chars: *span_chars,
                summary_chars: *summary_chars,
                detail: detail.clone(),
                usage: usage.map(UsageWire::from),
                key: key.clone(),
            };
            ("decline", serde_json::to_value(w))
        }
        RecordKind::Retract {
            summary_id,
            fingerprint,
        } => (
            "retract",
            serde_json::to_value(RetractWire {
                summary_id: summary_id.clone(),
                fingerprint: fingerprint.clone(),
            }),
        ),
        RecordKind::Fold { .. } | RecordKind::Unknown { .. } => {
            unreachable!("mf writes only declines and retractions as records")
        }
    };
    let mut obj = Map::new();
    obj.insert("v".into(), Value::from(VERSION));
    obj.insert("kind".into(), Value::from(name));
    obj.insert("atMs".into(), Value::from(at_ms));
    if let Ok(Value::Object(f)) = fields {
        obj.extend(f);
    }
    let mut line = Map::new();
    line.insert("mf".into(), Value::Object(obj));
    serde_json::to_string(&Value::Object(line)).expect("a record serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span() -> SpanRef {
        SpanRef {
            from_line: 2,
            to_line: 40,
            count: 30,
            digest: "0".repeat(32),
            from_turn: 1,
            to_turn: 7,
        }
    }

    #[test]
    fn record_lines_begin_with_the_prefix_and_read_back() {
        let kind = RecordKind::Decline {
            reason: DeclineReason::NotSmaller,
            model: "m".into(),
            span: DeclinedSpan::Ref(span()),
            span_chars: 100,
            summary_chars: Some(120),
            detail: "d \"quoted\"\nnewline".into(),
            usage: None,
            key: Some("k1".into()),
        };
        let line = record_line(&kind, 42);
        assert!(line.as_bytes().starts_with(MF_PREFIX), "{line}");
        assert!(!line.contains('\n'));
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(parse_mf(&v["mf"]), MfObject::Record(kind, 42));
        let r = RecordKind::Retract {
            summary_id: "msg-summary-1-2".into(),
            fingerprint: "ab".into(),
        };
        let line = record_line(&r, 7);
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(parse_mf(&v["mf"]), MfObject::Record(r, 7));
    }

    #[test]
    fn decline_records_stay_small_however_big_the_span() {
        let kind = RecordKind::Decline {
            reason: DeclineReason::SummarizerFailed,
            model: "anthropic:claude-haiku-5-5".into(),
            span: DeclinedSpan::Ref(SpanRef {
                count: 1_200_000,
                ..span()
            }),
            span_chars: 300_000_000,
            summary_chars: None,
            detail: "x".repeat(200),
            usage: None,
            key: None,
        };
        assert!(record_line(&kind, u64::MAX).len() < 1024);
    }

    #[test]
    fn set_tags_go_after_the_version_and_read_back_from_a_cut_line() {
        let mut lines = vec![
            record_line(
                &RecordKind::Retract {
                    summary_id: "a".into(),
                    fingerprint: "f".into(),
                },
                1,
            ),
            format!("{{\"mf\":{},\"x\":1}}", view_object("show")),
        ];
        tag_set(&mut lines, "0a1b2c3d");
        for (k, l) in lines.iter().enumerate() {
            assert!(l.as_bytes().starts_with(MF_PREFIX), "{l}");
            let v: Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["mf"]["set"], format!("0a1b2c3d:{k}/2").as_str());
            assert_eq!(
                set_tag(l.as_bytes()),
                Some(SetTag {
                    id: "0a1b2c3d".into(),
                    k: k as u32,
                    n: 2
                })
            );
            assert_eq!(
                set_tag(&l.as_bytes()[..40]),
                Some(SetTag {
                    id: "0a1b2c3d".into(),
                    k: k as u32,
                    n: 2
                })
            );
        }
        assert_eq!(
            parse_mf(&serde_json::from_str::<Value>(&lines[0]).unwrap()["mf"]),
            MfObject::Record(
                RecordKind::Retract {
                    summary_id: "a".into(),
                    fingerprint: "f".into()
                },
                1
            )
        );
        assert_eq!(set_tag(&lines[0].as_bytes()[..20]), None);
        let mut one = vec![lines[0].clone()];
        tag_set(&mut one, "ffffffff");
        assert_eq!(one[0], lines[0]);
    }

    #[test]
    fn unknown_versions_and_kinds_are_kept_apart() {
        let v: Value = serde_json::json!({"v": 3, "kind": "summary"});
        assert!(matches!(parse_mf(&v), MfObject::Unknown(_)));
        let v: Value = serde_json::json!({"v": 2, "kind": "teleport"});
        assert_eq!(parse_mf(&v), MfObject::Unknown("teleport".into()));
    }
}
