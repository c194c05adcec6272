//! The serde shapes of the lines mf writes: the summary entry with its coverage, and record lines.

use serde::{Deserialize, Serialize};

use crate::entry::{Coverage, DeclineReason, Record, RecordKind, Usage};
use crate::fold::SummaryDraft;

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageWire {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CoverageWire {
    pub from_turn: u64,
    pub to_turn: u64,
    pub entry_count: u64,
    pub covered_ids: Vec<String>,
    pub model: String,
    pub summarized_at_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageWire>,
    pub fingerprint: String,
}

impl From<CoverageWire> for Coverage {
    fn from(w: CoverageWire) -> Self {
        Coverage {
            from_turn: w.from_turn,
            to_turn: w.to_turn,
            entry_count: w.entry_count,
            covered_ids: w.covered_ids,
            model: w.model,
            summarized_at_ms: w.summarized_at_ms,
            usage: w.usage.map(|u| Usage {
                input_tokens: u.input_tokens,
                output_tokens: u.output_tokens,
            }),
            fingerprint: w.fingerprint,
        }
    }
}

impl From<&Coverage> for CoverageWire {
    fn from(c: &Coverage) -> Self {
        CoverageWire {
            from_turn: c.from_turn,
            to_turn: c.to_turn,
            entry_count: c.entry_count,
            covered_ids: c.covered_ids.clone(),
            model: c.model.clone(),
            summarized_at_ms: c.summarized_at_ms,
            usage: c.usage.map(|u| UsageWire {
                input_tokens: u.input_tokens,
                output_tokens: u.output_tokens,
            }),
            fingerprint: c.fingerprint.clone(),
        }
    }
}

#[derive(Serialize)]
struct SummaryLine<'a> {
    id: &'a str,
    role: &'static str,
    turn: u64,
    content: &'a str,
    summarizes: CoverageWire,
}

/// The JSON line for a summary entry (no trailing newline; serde escapes every newline inside).
pub fn summary_line(d: &SummaryDraft) -> String {
    serde_json::to_string(&SummaryLine {
        id: &d.id,
        role: "system",
        turn: d.turn,
        content: &d.content,
        summarizes: CoverageWire::from(&d.coverage),
    })
    .expect("a summary line serializes")
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "mfRecord", rename_all = "camelCase")]
enum RecordWire {
    #[serde(rename_all = "camelCase")]
    Fold {
        at_ms: u64,
        summary_id: String,
        model: String,
        from_turn: u64,
        to_turn: u64,
        entry_count: u64,
        span_chars: u64,
        summary_chars: u64,
    },
    #[serde(rename_all = "camelCase")]
    Decline {
        at_ms: u64,
        reason: String,
        model: String,
        from_turn: u64,
        to_turn: u64,
        span_ids: Vec<String>,
        span_chars: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary_chars: Option<u64>,
        detail: String,
    },
    #[serde(rename_all = "camelCase")]
    Retract {
        at_ms: u64,
        summary_id: String,
        fingerprint: String,
    },
}

/// The JSON line for a record.
pub fn record_line(r: &Record) -> String {
    let at_ms = r.at_ms;
    let wire = match &r.kind {
        RecordKind::Fold {
            summary_id,
            model,
            from_turn,
            to_turn,
            entry_count,
            span_chars,
            summary_chars,
        } => RecordWire::Fold {
            at_ms,
            summary_id: summary_id.clone(),
            model: model.clone(),
            from_turn: *from_turn,
            to_turn: *to_turn,
            entry_count: *entry_count,
            span_chars: *span_chars,
            summary_chars: *summary_chars,
        },
        RecordKind::Decline {
            reason,
            model,
            from_turn,
            to_turn,
            span_ids,
            span_chars,
            summary_chars,
            detail,
        } => RecordWire::Decline {
            at_ms,
            reason: reason.as_str().to_string(),
            model: model.clone(),
            from_turn: *from_turn,
            to_turn: *to_turn,
            span_ids: span_ids.clone(),
            span_chars: *span_chars,
            summary_chars: *summary_chars,
            detail: detail.clone(),
        },
        RecordKind::Retract {
            summary_id,
            fingerprint,
        } => RecordWire::Retract {
            at_ms,
            summary_id: summary_id.clone(),
            fingerprint: fingerprint.clone(),
        },
        RecordKind::Unknown { kind } => {
            unreachable!("mf never writes an unknown record kind ({kind})")
        }
    };
    serde_json::to_string(&wire).expect("a record line serializes")
}

/// Read a record line. A record mf cannot read (a newer kind, or damaged) is kept as `Unknown`.
pub fn parse_record(line: usize, value: serde_json::Value) -> Record {
    let kind_name = value
        .get("mfRecord")
        .and_then(|v| v.as_str())
        .unwrap_or("?")
        .to_string();
    let at = value
        .get("atMs")
        .and_then(serde_json::Value::as_u64)
        .unwrap_or(0);
    let kind = match serde_json::from_value::<RecordWire>(value) {
        Ok(RecordWire::Fold {
            summary_id,
            model,
            from_turn,
            to_turn,
            entry_count,
            span_chars,
            summary_chars,
            ..
        }) => RecordKind::Fold {
            summary_id,
            model,
            from_turn,
            to_turn,
            entry_count,
            span_chars,
            summary_chars,
        },
        Ok(RecordWire::Decline {
            reason,
            model,
            from_turn,
            to_turn,
            span_ids,
            span_chars,
            summary_chars,
            detail,
            ..
        }) => match DeclineReason::parse(&reason) {
            Some(reason) => RecordKind::Decline {
                reason,
                model,
                from_turn,
                to_turn,
                span_ids,
                span_chars,
                summary_chars,
                detail,
            },
            None => RecordKind::Unknown {
                kind: format!("decline ({reason})"),
            },
        },
        Ok(RecordWire::Retract {
            summary_id,
            fingerprint,
            ..
        }) => RecordKind::Retract {
            summary_id,
            fingerprint,
        },
        Err(_) => RecordKind::Unknown { kind: kind_name },
    };
    Record {
        line,
        at_ms: at,
        kind,
    }
}
