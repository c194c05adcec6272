//! `plan`: given a ledger and a policy, decide what (if anything) to fold. Pure.

use crate::entry::{Record, Role};
use crate::fold::ledger::{Item, Ledger};
use crate::fold::policy::FoldPolicy;

/// What the engine decided for one transcript.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Fold this span with one summarizer call.
    Fold(FoldPlan),
    /// Nothing to fold now, and why.
    Skip(Skip),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Skip {
    pub reason: SkipReason,
    /// The span that would have folded, when there was one (for "too few" and "declined before").
    pub span: Option<Span>,
}

/// A run of view items considered for one fold, and what it amounts to.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub items: Vec<Item>,
    /// Their ids: the coverage a summary of the span carries.
    pub ids: Vec<String>,
    pub from_turn: u64,
    pub to_turn: u64,
    /// Original messages behind the span, all levels down.
    pub leaf_count: usize,
    /// Characters of the span as a model would read it.
    pub chars: usize,
}

impl Span {
    pub fn of(ledger: &Ledger<'_>, items: Vec<Item>) -> Self {
        let ids = items
            .iter()
            .map(|&it| ledger.item_entry(it).id.clone())
            .collect();
        let (from_turn, to_turn) = items.iter().fold((u64::MAX, 0), |(lo, hi), &it| {
            let (a, b) = ledger.item_turns(it);
            (lo.min(a), hi.max(b))
        });
        let leaf_count = items
            .iter()
            .map(|it| match it {
                Item::Summary(i) => ledger.summaries[i].leaf_count,
                Item::Message(_) => 1,
            })
            .sum();
        let chars = items.iter().map(|&it| ledger.item_chars(it)).sum();
        Self {
            items,
            ids,
            from_turn,
            to_turn,
            leaf_count,
            chars,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum SkipReason {
    /// Fewer uncovered entries than `--trigger`.
    BelowTrigger { uncovered: usize, trigger: usize },
    /// Everything considered is inside the verbatim tail (after rounding to whole turns).
    NothingBeforeTail { considered: usize },
    /// Fewer entries would fold than `--min-fold`.
    TooFew { would_fold: usize, min_fold: usize },
    /// This exact span was already judged "not smaller".
    DeclinedBefore { line: usize, at_ms: u64 },
}

impl SkipReason {
    pub fn describe(&self) -> String {
        match self {
            SkipReason::BelowTrigger { uncovered, trigger } => format!(
                "not worth a call: {uncovered} uncovered entr{} (below the trigger of {trigger})",
                if *uncovered == 1 { "y" } else { "ies" }
            ),
            SkipReason::NothingBeforeTail { considered } => format!(
                "not worth a call: all {considered} entries considered are in the verbatim tail once it is rounded out to whole turns"
            ),
            SkipReason::TooFew {
                would_fold,
                min_fold,
            } => format!(
                "not worth a call: only {would_fold} entr{} would fold (minimum {min_fold})",
                if *would_fold == 1 { "y" } else { "ies" }
            ),
            SkipReason::DeclinedBefore { line, .. } => format!(
                "already asked: this exact span was declined as not smaller (record on line {line}); it is asked again once it grows"
            ),
        }
    }
}

/// A span to fold.
#[derive(Debug, Clone, PartialEq)]
pub struct FoldPlan {
    pub span: Span,
    /// View items that stay verbatim (preamble, anything before the window, the tail).
    pub verbatim: Vec<Item>,
    /// Characters of the whole recall view before the fold.
    pub view_chars: usize,
}

/// The view after the preamble (which is never folded), and where it starts in the view.
fn candidates<'v>(ledger: &'v Ledger<'_>) -> (usize, &'v [Item]) {
    let first = ledger
        .view
        .iter()
        .position(|&it| !ledger.is_preamble(it))
        .unwrap_or(ledger.view.len());
    (first, &ledger.view[first..])
}

/// Decide what to fold.
pub fn plan(ledger: &Ledger<'_>, policy: &FoldPolicy) -> Decision {
    let skip = |reason, span| Decision::Skip(Skip { reason, span });
    let uncovered = ledger.uncovered_count();
    if uncovered < policy.trigger {
        return skip(
            SkipReason::BelowTrigger {
                uncovered,
                trigger: policy.trigger,
            },
            None,
        );
    }

    let (first, cands) = candidates(ledger);
    let seams = Seams::new(ledger, cands);

    // Window: the newest `size` candidates, its start rounded forward to a whole turn so that
    // no turn is half folded.
    let mut start = policy
        .size
        .map_or(0, |size| cands.len().saturating_sub(size));
    while start < cands.len() && !seams.allowed(start) {
        start += 1;
    }
    let considered = cands.len() - start;

    // Tail: the last `recent` entries, the seam rounded outward (earlier) to a whole turn and
    // never between a tool call and its results.
    let mut end = cands.len().saturating_sub(policy.recent);
    while end > start && !seams.allowed(end) {
        end -= 1;
    }
    if end <= start {
        return skip(SkipReason::NothingBeforeTail { considered }, None);
    }

    let span = Span::of(ledger, cands[start..end].to_vec());
    if span.items.len() < policy.min_fold {
        let reason = SkipReason::TooFew {
            would_fold: span.items.len(),
            min_fold: policy.min_fold,
        };
        return skip(reason, Some(span));
    }
    if let Some(Record { line, at_ms, .. }) = ledger.declined_before(&span.ids) {
        return skip(
            SkipReason::DeclinedBefore {
                line: *line,
                at_ms: *at_ms,
            },
            Some(span),
        );
    }

    let mut verbatim: Vec<Item> = ledger.view[..first + start].to_vec();
    verbatim.extend_from_slice(&cands[end..]);
    Decision::Fold(FoldPlan {
        span,
        verbatim,
        view_chars: ledger.view_chars(),
    })
}

impl FoldPlan {
    /// Whether this plan is still a lawful fold of `ledger` (used when the file grew while the
    /// summarizer was working): the span is still a run of view items that starts and ends on
    /// a whole-turn seam that no tool call straddles.
    pub fn holds_in(&self, ledger: &Ledger<'_>) -> bool {
        let (_, cands) = candidates(ledger);
        let ids = &self.span.ids;
        let Some(start) = cands
            .iter()
            .position(|&it| ledger.item_entry(it).id == ids[0])
        else {
            return false;
        };
        let end = start + ids.len();
        if end > cands.len()
            || cands[start..end]
                .iter()
                .zip(ids)
                .any(|(&it, id)| ledger.item_entry(it).id != *id)
        {
            return false;
        }
        let seams = Seams::new(ledger, cands);
        seams.allowed(start) && seams.allowed(end)
    }
}

/// Where a fold boundary may go among the candidates: before a turn start or a summary, and never
/// between a tool call and one of its results.
struct Seams {
    ok: Vec<bool>,
}

impl Seams {
    fn new(ledger: &Ledger<'_>, cands: &[Item]) -> Self {
        let n = cands.len();
        // Boundary p sits before cands[p]; p == n is the end.
        let mut ok: Vec<bool> = (0..=n)
            .map(|p| {
                p == 0
                    || p == n
                    || match cands[p] {
                        Item::Summary(_) => true,
                        Item::Message(i) => ledger.entries[i].role == Role::User,
                    }
            })
            .collect();

        // Tool pairs: a boundary strictly after a call and at or before one of its results is
        // forbidden. A call with no result keeps its own turn whole; in the last turn (a live
        // tail) it also keeps the end of the transcript from being a boundary.
        let mut result_pos: std::collections::HashMap<&str, usize> =
            std::collections::HashMap::new();
        for (p, &it) in cands.iter().enumerate() {
            if let Item::Message(i) = it
                && let Some(call) = &ledger.entries[i].tool_call_id
            {
                result_pos.insert(call.as_str(), p);
            }
        }
        let next_turn_start = |from: usize| {
            (from + 1..n).find(|&q| {
                matches!(cands[q], Item::Message(i) if ledger.entries[i].role == Role::User)
                    || matches!(cands[q], Item::Summary(_))
            })
        };
        let mut diff = vec![0i64; n + 2];
        for (c, &it) in cands.iter().enumerate() {
            let Item::Message(i) = it else { continue };
            for call in &ledger.entries[i].tool_calls {
                let last = match result_pos.get(call.as_str()) {
                    Some(&r) if r > c => r,
                    Some(_) => continue,
                    None => next_turn_start(c).map_or(n, |q| q - 1),
                };
                // forbid boundaries c+1 ..= last
                diff[c + 1] += 1;
                diff[last + 1] -= 1;
            }
        }
        let mut acc = 0i64;
        for (p, slot) in ok.iter_mut().enumerate() {
            acc += diff[p];
            if acc > 0 {
                *slot = false;
            }
        }
        Self { ok }
    }

    fn allowed(&self, p: usize) -> bool {
        self.ok.get(p).copied().unwrap_or(true)
    }
}
