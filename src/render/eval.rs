//! What `mf eval` prints: a table on a terminal (tab-separated lines on a pipe), one line per
//! file, with what became of each fold below it; `--json`, one object per file, one per line.

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde::Serialize;

use super::table::Plain;
use super::{Ui, thousands, usd};
use crate::decision::{Action, Reason};
use crate::eval::Spread;

/// One file's measures, as `mf eval` reports them.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvalView {
    pub file: String,
    /// The transcript's format (`chat`, `claude`, `codex`, `pi`).
    pub format: Option<String>,
    /// The summarizer (none with `--strategy mask`, which calls none).
    pub model: Option<String>,
    pub strategy: &'static str,
    /// Estimated tokens of what the agent sees of the whole session.
    pub tokens: Option<usize>,
    pub cut: Option<CutView>,
    pub runs: usize,
    /// What became of the fold in each run.
    pub folds: Vec<FoldView>,
    pub future_use: Option<FutureUseView>,
    /// Estimated tokens of the folded part's recall view, before and after the fold.
    pub view: Option<ViewSize>,
    pub questions: Option<QuestionsView>,
    /// What the summarizer calls cost over every run (when a model was called).
    pub cost_usd: Option<f64>,
    /// Some call's cost is mf's estimate (the provider reported no usage).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cost_estimated: bool,
    pub error: Option<String>,
}

/// Where the file was cut.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CutView {
    /// The anchor line of the first entry after the cut.
    pub line: u32,
    /// The turn it is in.
    pub turn: u64,
    /// `turn` (at a turn's start) or `tool-unit` (between tool units inside a turn).
    pub at: &'static str,
    /// The share of the tokens before the cut.
    pub share: f64,
    pub past_tokens: usize,
    pub future_tokens: usize,
}

/// What became of one run's fold.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FoldView {
    pub action: Action,
    pub reason: Reason,
    pub calls: usize,
    /// Why the run failed, when it did (its figures are then missing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// futureUse: of the salient items the rest of the session uses that the folded part held
/// (`found`), those its recall view still carries (`kept`), and `kept / found` (`share`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FutureUseView {
    pub found: usize,
    pub kept: Spread,
    pub share: Spread,
    /// By item class (`path`, `command`, `number`, …): found and kept.
    pub by_class: BTreeMap<&'static str, ClassView>,
    /// The first found items the first run lost: what to look at.
    pub lost: Vec<LostView>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClassView {
    pub found: usize,
    pub kept: Spread,
}

#[derive(Debug, Clone, Serialize)]
pub struct LostView {
    pub class: &'static str,
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ViewSize {
    pub before: usize,
    pub after: Spread,
}

/// Questions asked of the folded part: answered by its recall view alone, by `mf search` (the
/// answer in the top 3 hits for the question), by either.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuestionsView {
    pub asked: usize,
    pub recall: Spread,
    pub search: Spread,
    pub either: Spread,
    pub each: Vec<QuestionView>,
}

/// One question: in how many runs each way answered it.
#[derive(Debug, Clone, Serialize)]
pub struct QuestionView {
    pub question: String,
    pub answer: String,
    pub recall: usize,
    pub search: usize,
}

/// `--json`: one object per file, one per line.
pub fn json_lines(rows: &[EvalView]) -> io::Result<()> {
    let mut out = io::stdout().lock();
    for r in rows {
        serde_json::to_writer(&mut out, r)?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

/// A figure over runs: `0.82`, or `0.82 (0.75–0.90)` when the runs differ.
fn spread(s: &Spread, f: impl Fn(f64) -> String) -> String {
    if s.is_single() {
        f(s.median)
    } else {
        format!("{} ({}–{})", f(s.median), f(s.min), f(s.max))
    }
}

fn share(v: f64) -> String {
    format!("{v:.2}")
}

fn count(v: f64) -> String {
    if v.fract() == 0.0 {
        thousands(v as usize)
    } else {
        format!("{v:.1}")
    }
}

/// The fold's outcome in a word or two: the same in every run, or each outcome with its count.
fn fold_words(folds: &[FoldView]) -> String {
    let mut by: Vec<(&'static str, usize)> = Vec::new();
    for f in folds {
        let w = if f.error.is_some() {
            "failed"
        } else {
            f.action.as_str()
        };
        match by.iter_mut().find(|(a, _)| *a == w) {
            Some((_, n)) => *n += 1,
            None => by.push((w, 1)),
        }
    }
    match by.as_slice() {
        [] => "—".into(),
        [(w, _)] => (*w).to_string(),
        many => many
            .iter()
            .map(|(w, n)| format!("{w} ×{n}"))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// The table: one row per file (a figure over runs as `median (min–max)` when they differ).
pub fn table(ui: &Ui, rows: &[EvalView]) -> String {
    let questions = rows.iter().any(|r| r.questions.is_some());
    let cost = rows.iter().any(|r| r.cost_usd.is_some_and(|c| c > 0.0));
    let mut grid = ui.grid(Plain::Tsv);
    let mut header = vec![
        "file",
        "fold",
        "cut",
        "found",
        "kept",
        "share",
        "view tokens",
    ];
    if questions {
        header.extend(["recall", "search"]);
    }
    if cost {
        header.push("cost");
    }
    grid.set_header(header);
    for r in rows {
        let mut cells = vec![r.file.clone(), fold_words(&r.folds)];
        cells.push(match &r.cut {
            Some(c) => format!("{:.0} % (turn {})", c.share * 100.0, c.turn),
            None => "—".into(),
        });
        match &r.future_use {
            Some(f) => {
                cells.push(thousands(f.found));
                cells.push(spread(&f.kept, count));
                cells.push(spread(&f.share, share));
            }
            None => cells.extend(["—".to_string(), "—".into(), "—".into()]),
        }
        cells.push(match &r.view {
            Some(v) => format!("{} → {}", thousands(v.before), spread(&v.after, count)),
            None => "—".into(),
        });
        if questions {
            match &r.questions {
                Some(q) => {
                    let of = |s: &Spread| format!("{}/{}", spread(s, count), q.asked);
                    cells.push(of(&q.recall));
                    cells.push(of(&q.search));
                }
                None => cells.extend(["—".to_string(), "—".into()]),
            }
        }
        if cost {
            cells.push(r.cost_usd.map_or("—".into(), |c| {
                format!("{}{}", if r.cost_estimated { "~" } else { "" }, usd(c))
            }));
        }
        grid.add_row(cells);
    }
    grid.render(ui, "")
}

/// Why each fold that was not written came to what it did: notes for stderr.
pub fn notes(rows: &[EvalView]) -> Vec<String> {
    let mut notes = Vec::new();
    for r in rows {
        for f in &r.folds {
            if f.error.is_none() && !matches!(f.action, Action::Folded | Action::Masked) {
                let n = format!(
                    "{}: {}: {} (as `mf compact` would decide; nothing was written, and the folded part's view is the verbatim one)",
                    r.file,
                    f.action.as_str(),
                    f.reason
                );
                if !notes.contains(&n) {
                    notes.push(n);
                }
            }
        }
    }
    notes
}

/// A strategy as `--strategy` names it.
pub fn strategy_name(s: crate::fold::Strategy) -> &'static str {
    use crate::fold::Strategy;
    match s {
        Strategy::Summary => "summary",
        Strategy::Mask => "mask",
        Strategy::MaskThenSummary => "mask,summary",
        Strategy::Cited => "cited",
    }
}
