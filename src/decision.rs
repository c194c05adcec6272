//! `DecisionRecord`: the output contract of `compact` (and the "now" part of `explain`), as
//! printed by `--json`.
//!
//! # Format
//!
//! One JSON object per file, camelCase keys:
//!
//! | key | type | meaning |
//! |---|---|---|
//! | `file` | string | the transcript |
//! | `action` | `"folded"` \| `"declined"` \| `"skipped"` \| `"planned"` | what happened |
//! | `reason` | string | why, in words |
//! | `model` | string \| null | the summarizer (null when no call was considered) |
//! | `span` | object \| null | what folded or would fold: `fromTurn`, `toTurn`, `entryCount`, `originalCount`, `coveredIds`, `chars`, `tokens` |
//! | `verbatim` | object | what stays verbatim: `entryCount`, `preambleCount` (system lines before the first user message, never folded), `fromTurn`, `toTurn` (of the rest; null when none), `ids` |
//! | `summary` | object \| null | the summary written or judged: `id`, `chars`, `tokens` |
//! | `usage` | object \| null | tokens the summarizer reported: `inputTokens`, `outputTokens` |
//! | `before`, `after` | object | the recall view before and after: `chars`, `tokens` (estimated, 4 chars a token) |
//! | `cost` | object \| null | `usd` and `estimated` (true when from mf's token estimate, false when from reported usage); null when no price is known or nothing was called |
//! | `written` | bool | whether anything was appended (a summary, or a decline record) |
//! | `linesAppended` | number | lines appended to the file (or to `output`) |
//! | `output` | string \| null | the `--output` path written, if any |

use serde::Serialize;

use crate::entry::{Usage, estimate_tokens};
use crate::fold::{Decision, Item, Ledger, Span};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Folded,
    Declined,
    Skipped,
    Planned,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Folded => "folded",
            Action::Declined => "declined",
            Action::Skipped => "skipped",
            Action::Planned => "planned",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Size {
    pub chars: usize,
    pub tokens: usize,
}

impl Size {
    pub fn of(chars: usize) -> Self {
        Self {
            chars,
            tokens: estimate_tokens(chars),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpanRecord {
    pub from_turn: u64,
    pub to_turn: u64,
    pub entry_count: usize,
    pub original_count: usize,
    pub covered_ids: Vec<String>,
    pub chars: usize,
    pub tokens: usize,
}

impl SpanRecord {
    pub fn of(span: &Span) -> Self {
        Self {
            from_turn: span.from_turn,
            to_turn: span.to_turn,
            entry_count: span.ids.len(),
            original_count: span.leaf_count,
            covered_ids: span.ids.clone(),
            chars: span.chars,
            tokens: estimate_tokens(span.chars),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerbatimRecord {
    pub entry_count: usize,
    /// Of those, entries of the preamble (system messages before the first user message).
    pub preamble_count: usize,
    pub from_turn: Option<u64>,
    pub to_turn: Option<u64>,
    pub ids: Vec<String>,
}

impl VerbatimRecord {
    pub fn of(ledger: &Ledger<'_>, items: &[Item]) -> Self {
        let preamble_count = items.iter().filter(|&&it| ledger.is_preamble(it)).count();
        let turns = items
            .iter()
            .filter(|&&it| !ledger.is_preamble(it))
            .map(|&it| ledger.item_turns(it));
        let from = turns.clone().map(|t| t.0).min();
        let to = turns.map(|t| t.1).max();
        Self {
            entry_count: items.len(),
            preamble_count,
            from_turn: from,
            to_turn: to,
            ids: items
                .iter()
                .map(|&it| ledger.item_entry(it).id.clone())
                .collect(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SummaryRecord {
    pub id: String,
    pub chars: usize,
    pub tokens: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageRecord {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl From<Usage> for UsageRecord {
    fn from(u: Usage) -> Self {
        Self {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionRecord {
    pub file: String,
    pub action: Action,
    pub reason: String,
    pub model: Option<String>,
    pub span: Option<SpanRecord>,
    pub verbatim: VerbatimRecord,
    pub summary: Option<SummaryRecord>,
    pub usage: Option<UsageRecord>,
    pub before: Size,
    pub after: Size,
    pub cost: Option<CostRecord>,
    pub written: bool,
    pub lines_appended: usize,
    pub output: Option<String>,
}

/// What a call cost (or would cost), from the price table or `--price-in` / `--price-out`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CostRecord {
    pub usd: f64,
    /// True when computed from mf's estimate of the tokens rather than the provider's usage.
    pub estimated: bool,
}

impl CostRecord {
    pub fn of(price: (f64, f64), input_tokens: u64, output_tokens: u64, estimated: bool) -> Self {
        let usd = (input_tokens as f64 * price.0 + output_tokens as f64 * price.1) / 1_000_000.0;
        Self { usd, estimated }
    }
}

impl DecisionRecord {
    /// The record of a decision before any call: `planned` for a fold, `skipped` otherwise.
    pub fn from_decision(
        file: &str,
        ledger: &Ledger<'_>,
        decision: &Decision,
        model: Option<&str>,
    ) -> Self {
        let view = Size::of(ledger.view_chars());
        let mut r = DecisionRecord {
            file: file.to_string(),
            action: Action::Skipped,
            reason: String::new(),
            model: model.map(str::to_string),
            span: None,
            verbatim: VerbatimRecord::of(ledger, &ledger.view),
            summary: None,
            usage: None,
            before: view,
            after: view,
            cost: None,
            written: false,
            lines_appended: 0,
            output: None,
        };
        match decision {
            Decision::Skip(skip) => {
                r.reason = skip.reason.describe();
                r.span = skip.span.as_ref().map(SpanRecord::of);
            }
            Decision::Fold(plan) => {
                r.action = Action::Planned;
                r.reason = format!(
                    "would fold {} entries (turns {}–{}) in one call; {} entries stay verbatim",
                    plan.span.ids.len(),
                    plan.span.from_turn,
                    plan.span.to_turn,
                    plan.verbatim.len()
                );
                r.span = Some(SpanRecord::of(&plan.span));
                r.verbatim = VerbatimRecord::of(ledger, &plan.verbatim);
            }
        }
        r
    }
}
