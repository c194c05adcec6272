//! The entries mf writes: a summary (mf's label, the text, the coverage record) or a stub, and
//! the "is it smaller?" verdict. Pure.

use crate::digest::content_fingerprint;
use crate::entry::{ClaimKind, Coverage, Covered, Draft, STUB_PREFIX, Usage};
use crate::fold::frame::{LabelOf, Reach, label, plain_label, sanitize};
use crate::fold::plan::Span;

/// The id for a new summary: `msg-summary-{from}-{to}`, with `.2`, `.3`… when that id is taken.
pub fn summary_id(from_turn: u64, to_turn: u64, taken: impl Fn(&str) -> bool) -> String {
    fresh_id(&format!("msg-summary-{from_turn}-{to_turn}"), taken)
}

/// `base`, or `base.2`, `base.3`… — the first id not taken.
pub fn fresh_id(base: &str, taken: impl Fn(&str) -> bool) -> String {
    if !taken(base) {
        return base.to_string();
    }
    (2u32..)
        .map(|n| format!("{base}.{n}"))
        .find(|id| !taken(id))
        .expect("an unused id exists")
}

/// Who wrote a summary and when: the model, the reach its label names (none: the plain
/// label), the time (ms since the epoch) and the file's last line it was planned on.
#[derive(Debug, Clone, Copy)]
pub struct Signed<'a> {
    pub model: &'a str,
    pub reach: Option<&'a Reach>,
    pub now_ms: u64,
    pub tail_line: Option<u32>,
}

/// Build the summary entry for a span from the summarizer's (vetted) text, under mf's label
/// naming its id and `reach` (the plain label without one: `summarize`, whose summary has no id
/// in a file).
pub fn draft(
    span: &Span,
    id: String,
    by: Signed<'_>,
    text: &str,
    usage: Option<Usage>,
    extra: Vec<(&'static str, String)>,
) -> Draft {
    let Signed {
        model,
        reach,
        now_ms,
        tail_line,
    } = by;
    let content = format!(
        "{}\n\n{}",
        match reach {
            Some(reach) => label(&LabelOf {
                from_turn: span.from_turn,
                to_turn: span.to_turn,
                originals: span.leaf_count,
                model,
                id: &id,
                reach,
            }),
            None => plain_label(span.from_turn, span.to_turn, span.leaf_count, model),
        },
        text.trim()
    );
    Draft {
        kind: ClaimKind::Summary,
        turn: span.to_turn,
        coverage: span.coverage(
            model,
            usage,
            now_ms,
            tail_line,
            content_fingerprint(&content),
        ),
        content,
        id,
        stub_of: None,
        extra,
    }
}

/// What a stub says about the tool result it hides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StubInfo {
    pub tool: Option<String>,
    pub chars: usize,
    pub first_line: String,
}

/// The stub for one tool result: what it was, and how to get it back (`how_back`, in the
/// words of `decision::stub_how_back`).
pub fn stub(
    span: &Span,
    id: String,
    info: &StubInfo,
    how_back: &str,
    kept_results: usize,
    now_ms: u64,
) -> Draft {
    let first: String = sanitize(&info.first_line).chars().take(120).collect();
    let first = sanitize(&first);
    let content = format!(
        "{STUB_PREFIX}: {} returned {} characters; first line: {first:?}. The full result is kept in this file: {how_back}.]",
        sanitize(info.tool.as_deref().unwrap_or("the tool")),
        info.chars,
    );
    Draft {
        kind: ClaimKind::Stub,
        turn: span.to_turn,
        coverage: Coverage {
            version: 2,
            from_turn: span.from_turn,
            to_turn: span.to_turn,
            entry_count: 1,
            covered: Covered::Lines {
                ranges: span.ranges.clone(),
                digest: span.digest.clone(),
            },
            tail_line: None,
            kept_results: Some(kept_results as u32),
            strategy: None,
            model: "mask".into(),
            summarized_at_ms: now_ms,
            usage: None,
            fingerprint: content_fingerprint(&content),
        },
        content,
        id,
        stub_of: span.items.first().copied(),
        extra: Vec::new(),
    }
}

/// Would writing this summary make the context smaller?
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Smaller {
        span_chars: usize,
        summary_chars: usize,
    },
    NotSmaller {
        span_chars: usize,
        summary_chars: usize,
    },
}

pub fn judge(span: &Span, draft: &Draft) -> Verdict {
    let (span_chars, summary_chars) = (span.chars, draft.chars());
    if summary_chars < span_chars {
        Verdict::Smaller {
            span_chars,
            summary_chars,
        }
    } else {
        Verdict::NotSmaller {
            span_chars,
            summary_chars,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_stay_unique() {
        assert_eq!(summary_id(1, 7, |_| false), "msg-summary-1-7");
        assert_eq!(
            summary_id(1, 7, |id| id == "msg-summary-1-7"),
            "msg-summary-1-7.2"
        );
    }
}
