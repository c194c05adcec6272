//! `mf explain`: the decisions recorded in a file, suspicious lines, and what `compact` would do
//! now — without calling a summarizer or writing anything.

use anyhow::Result;
use serde::Serialize;

use crate::cli::ExplainArgs;
use crate::commands::recall::read_for_view;
use crate::decision::DecisionRecord;
use crate::entry::RecordKind;
use crate::error::MfError;
use crate::fold::{self, Ledger};
use crate::render::{self, Ui};
use crate::settings::{ConfigFile, resolve_policy};

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    pub file: String,
    /// Message entries in the file (summaries included).
    pub entries: usize,
    pub turns: u64,
    pub summaries: Vec<SummaryView>,
    pub history: Vec<HistoryEvent>,
    pub flags: Vec<FlagView>,
    /// What `compact` would do now with the given policy.
    pub now: DecisionRecord,
    /// With an ID: what that id is and what hides it.
    pub focus: Option<Focus>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryView {
    pub id: String,
    pub line: usize,
    pub from_turn: u64,
    pub to_turn: u64,
    pub entry_count: usize,
    pub original_count: usize,
    pub model: String,
    pub summarized_at_ms: u64,
    /// `standing`, `nested` (inside a standing summary) or `retracted`.
    pub state: &'static str,
    pub nested_in: Option<String>,
    pub chars: usize,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEvent {
    pub line: usize,
    pub at_ms: u64,
    /// `fold`, `decline`, `retract` or `unknown`.
    pub kind: &'static str,
    pub summary_id: Option<String>,
    pub reason: Option<String>,
    pub model: Option<String>,
    pub from_turn: Option<u64>,
    pub to_turn: Option<u64>,
    pub entry_count: Option<usize>,
    pub detail: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FlagView {
    pub line: usize,
    pub id: String,
    pub why: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Focus {
    pub id: String,
    pub line: usize,
    /// `summary`, `message` or `look-alike`.
    pub kind: &'static str,
    /// The top-level standing summary that hides it from recall, if any.
    pub hidden_by: Option<String>,
}

pub fn explain(args: &ExplainArgs, config: &ConfigFile, ui: &Ui) -> Result<()> {
    let policy = resolve_policy(&args.policy, config)?;
    let t = read_for_view(&args.file, ui)?;
    let ledger = Ledger::new(&t.entries, &t.records);
    let id_of = |i: usize| t.entries[i].id.clone();

    let summaries: Vec<SummaryView> = ledger
        .summaries_in_order()
        .into_iter()
        .map(|s| SummaryView {
            id: id_of(s.entry),
            line: t.entries[s.entry].line,
            from_turn: s.from_turn,
            to_turn: s.to_turn,
            entry_count: s.coverage.covered_ids.len(),
            original_count: s.leaf_count,
            model: s.coverage.model.clone(),
            summarized_at_ms: s.coverage.summarized_at_ms,
            state: s.state(),
            nested_in: s.covered_by.map(id_of),
            chars: t.entries[s.entry].chars(),
        })
        .collect();

    let history: Vec<HistoryEvent> = t
        .records
        .iter()
        .map(|r| {
            let mut ev = HistoryEvent {
                line: r.line,
                at_ms: r.at_ms,
                kind: "unknown",
                summary_id: None,
                reason: None,
                model: None,
                from_turn: None,
                to_turn: None,
                entry_count: None,
                detail: String::new(),
            };
            match &r.kind {
                RecordKind::Fold {
                    summary_id,
                    model,
                    from_turn,
                    to_turn,
                    entry_count,
                    span_chars,
                    summary_chars,
                } => {
                    ev.kind = "fold";
                    ev.summary_id = Some(summary_id.clone());
                    ev.model = Some(model.clone());
                    ev.from_turn = Some(*from_turn);
                    ev.to_turn = Some(*to_turn);
                    ev.entry_count = Some(usize::try_from(*entry_count).unwrap_or(usize::MAX));
                    ev.detail = format!("{span_chars} chars folded into {summary_chars}");
                }
                RecordKind::Decline {
                    reason,
                    model,
                    from_turn,
                    to_turn,
                    span_ids,
                    detail,
                    ..
                } => {
                    ev.kind = "decline";
                    ev.reason = Some(reason.as_str().to_string());
                    ev.model = Some(model.clone());
                    ev.from_turn = Some(*from_turn);
                    ev.to_turn = Some(*to_turn);
                    ev.entry_count = Some(span_ids.len());
                    ev.detail = detail.clone();
                }
                RecordKind::Retract { summary_id, .. } => {
                    ev.kind = "retract";
                    ev.summary_id = Some(summary_id.clone());
                    ev.detail =
                        "summary withdrawn; its originals are verbatim in recall again".into();
                }
                RecordKind::Unknown { kind } => {
                    ev.detail = format!("record kind `{kind}` not known to this mf; ignored");
                }
            }
            ev
        })
        .collect();

    let flags: Vec<FlagView> = ledger
        .flags
        .iter()
        .map(|f| FlagView {
            line: t.entries[f.entry].line,
            id: id_of(f.entry),
            why: f.why.clone(),
        })
        .collect();

    let decision = fold::plan(&ledger, &policy);
    let now =
        DecisionRecord::from_decision(&args.file.display().to_string(), &ledger, &decision, None);

    let mut ex = Explanation {
        file: args.file.display().to_string(),
        entries: t.entries.len(),
        turns: ledger.turns.iter().copied().max().unwrap_or(0),
        summaries,
        history,
        flags,
        now,
        focus: None,
    };

    if let Some(id) = &args.id {
        let Some(i) = ledger.find(id) else {
            return Err(MfError::refused(
                format!("no entry `{id}` in `{}`", args.file.display()),
                None,
            )
            .into());
        };
        let covered_here = |ids: &[String]| ids.iter().any(|x| x == id);
        let kind = if ledger.summaries.contains_key(&i) {
            "summary"
        } else if ledger.flags.iter().any(|f| f.entry == i) {
            "look-alike"
        } else {
            "message"
        };
        ex.focus = Some(Focus {
            id: id.clone(),
            line: t.entries[i].line,
            kind,
            hidden_by: ledger.hidden_by.get(&i).map(|&s| id_of(s)),
        });
        ex.summaries.retain(|s| {
            &s.id == id
                || ledger
                    .find(&s.id)
                    .is_some_and(|j| covered_here(&ledger.summaries[&j].coverage.covered_ids))
        });
        // Events were built from the records in order: filter them side by side.
        let summaries = &ex.summaries;
        ex.history = t
            .records
            .iter()
            .zip(std::mem::take(&mut ex.history))
            .filter(|(r, h)| {
                h.summary_id.as_deref() == Some(id.as_str())
                    || matches!(&r.kind, RecordKind::Decline { span_ids, .. } if covered_here(span_ids))
                    || summaries.iter().any(|s| h.summary_id.as_deref() == Some(s.id.as_str()))
            })
            .map(|(_, h)| h)
            .collect();
        ex.flags.retain(|f| &f.id == id);
    }

    if args.json {
        render::stdout(&format!(
            "{}\n",
            serde_json::to_string(&ex).expect("an explanation serializes")
        ))?;
    } else {
        render::stdout(&render::explain::tables(ui, &ex))?;
    }
    Ok(())
}
