//! `--rollup`: the chunk summaries just written, folded into one covering summary, in levels
//! when they do not fit one request.

use std::sync::Arc;

use anyhow::Result;

use super::FileRun;
use super::write::lines_for;
use crate::call::{self, Judged};
use crate::decision::{Note, Size, SummaryOutcome, SummaryRecord};
use crate::entry::Draft;
use crate::error::MfError;
use crate::fold::summary::Verdict;
use crate::fold::{self, Item, Ledger, Span, summary};
use crate::summarizer::Severity;
use crate::transcript::Transcript;

/// `--rollup`: fold the chunk summaries just written (their ids) into one covering summary. When
/// they do not fit one request within the span budget, they are rolled up in levels: groups that
/// fit become summaries, which are rolled up in turn, until one covers them all. Every level
/// stays expandable.
pub(super) async fn rollup(
    run: &mut FileRun<'_>,
    t: &Transcript,
    mut ids: Vec<String>,
) -> Result<()> {
    let (settings, ctx) = (run.settings, run.ctx);
    loop {
        let t2 = run.reread(t)?;
        let ledger = Ledger::new(t2.conversation());
        let mut items: Vec<Item> = ids
            .iter()
            .filter_map(|id| {
                t2.find(id).into_iter().map(|i| i as Item).find(|i| {
                    ledger
                        .summaries
                        .get(i)
                        .is_some_and(|s| s.standing() && s.covered_by.is_none())
                })
            })
            .collect();
        if items.len() < 2 {
            return Ok(());
        }
        // In conversation order.
        items.sort_by_key(|&i| ledger.summaries[&i].first_leaf);
        let groups = fold::plan::rollup_groups(&ledger, &items, settings.policy.max_span_tokens);
        if groups.iter().all(|g| g.len() < 2) {
            run.r.notes.push(Note::RollupTooLarge(items.len()));
            return Ok(());
        }
        let last_level = groups.len() == 1;
        let spans: Vec<Span> = groups
            .iter()
            .filter(|g| g.len() > 1)
            .map(|g| Span::of(&ledger, g.clone()))
            .collect();
        // The one rule of what a summary may cover: a rollup mf would not honour is not asked
        // about (nothing paid); the rollup stops before it.
        let mut spans = spans;
        let vetted: Vec<_> = spans.iter().map(|s| s.draft_to_vet(None)).collect();
        let mut stopped = false;
        if let Some((k, why)) = ledger
            .would_honour(&vetted)
            .into_iter()
            .enumerate()
            .find_map(|(k, v)| v.err().map(|why| (k, why)))
        {
            run.r.notes.push(Note::RollupNotHonoured(why));
            spans.truncate(k);
            stopped = true;
        }
        if spans.is_empty() {
            return Ok(());
        }
        let (t_ref, ledger_ref, rules) = (&t2, &ledger, &super::rules(settings));
        // A rollup is judged against what its summaries stand for, not only their words: a
        // name the originals say is no invention because a summary under it left it out.
        let originals: Vec<Arc<Vec<String>>> = spans
            .iter()
            .map(|span| {
                Arc::new(
                    span.items
                        .iter()
                        .flat_map(|&s| ledger.originals_under(s))
                        .filter_map(|i| t2.text(i as usize).ok())
                        .collect(),
                )
            })
            .collect();
        let asked: Vec<Result<call::Asked>> = call::join_all(spans.iter().zip(&originals).map(
            |(span, context)| async move {
                // What is rolled up is mf's own summaries: already scrubbed when they were written.
                call::ask_span(t_ref, ledger_ref, span, None, rules, ctx.caller(), context).await
            },
        ))
        .await;
        let asked: Vec<call::Asked> = asked.into_iter().collect::<Result<_>>()?;
        // `--batch`: a call of this level waits for a batch; the level is asked again, whole,
        // once it has answered (what has answered is not paid twice).
        if asked.iter().any(
            |a| matches!(&a.judged, call::Judged::Failed(e) if e.severity == Severity::Pending),
        ) {
            run.r.rollup_pending = Some(ids);
            return Ok(());
        }
        run.r.calls += asked.iter().map(|a| a.calls.len()).sum::<usize>();
        if ctx.interrupt.received().is_some() {
            return Err(MfError::Interrupted.into());
        }
        let now = (ctx.now_ms)();
        let mut drafts: Vec<Draft> = Vec::new();
        let mut folds: Vec<(Vec<Item>, usize)> = Vec::new();
        let mut recs: Vec<SummaryRecord> = Vec::new();
        let mut taken: Vec<String> = Vec::new();
        for a in asked {
            match take(run, t, &t2, a, now, &taken)? {
                None => stopped = true,
                Some((d, rec, id, items)) => {
                    recs.push(rec);
                    taken.push(id);
                    folds.push((items, drafts.len()));
                    drafts.push(d);
                }
            }
        }
        if drafts.is_empty() {
            return Ok(());
        }
        let lines = lines_for(&t2, &ledger, &drafts, &folds, &[], &[], now)?;
        let before = run.r.after.chars;
        run.write(&t2, &lines, None)?;
        let replaced: usize = folds
            .iter()
            .flat_map(|(items, _)| items.iter().map(|&i| ledger.item_chars(i)))
            .sum();
        run.r.after = Size::of(before - replaced + recs.iter().map(|c| c.chars).sum::<usize>());
        run.r.summaries.extend(recs);
        if last_level || stopped {
            return Ok(());
        }
        // The next level: what this one wrote, and the summaries no group took.
        let rolled: std::collections::HashSet<Item> = folds
            .iter()
            .flat_map(|(items, _)| items.iter().copied())
            .collect();
        ids = taken;
        ids.extend(
            items
                .iter()
                .filter(|i| !rolled.contains(i))
                .map(|&i| t2.id_string(i as usize)),
        );
    }
}

/// A rollup summary to write: its draft, record, id, and the items it folds.
type Rolled = (Draft, SummaryRecord, String, Vec<Item>);

/// Take one judged rollup reply: its draft, record and id, or `None` when it failed, was
/// lossy or is not shorter (the summaries under it stand, and the rollup stops after this
/// level).
fn take(
    run: &mut FileRun<'_>,
    t: &Transcript,
    t2: &Transcript,
    a: call::Asked,
    now: u64,
    taken: &[String],
) -> Result<Option<Rolled>> {
    run.spend(&a.calls);
    run.scrubbed(&a.scrubbed);
    let (text, usage) = match a.judged {
        Judged::Failed(e) if e.severity == Severity::Interrupted => return Err(e.into()),
        // The summaries under it are written and stand, whatever the failure.
        Judged::Failed(e) => {
            run.ctx.ui.warn(&format!(
                "{}: a rollup summary failed; the {} summaries under it stand: {}",
                t.display(),
                a.span.items.len(),
                e.message
            ));
            run.r.notes.push(Note::RollupFailed(e.message));
            return Ok(None);
        }
        Judged::Declined { faults, .. } => {
            run.r.notes.push(Note::RollupLossy(faults));
            return Ok(None);
        }
        Judged::Kept { text, usage } => (text, usage),
    };
    let audit_json = a.audit_json;
    let id = summary::summary_id(a.span.from_turn, a.span.to_turn, |id| {
        t2.has_id(id) || taken.iter().any(|x| x == id)
    });
    let reach = run.settings.reach_for(t);
    let d = summary::draft(
        &a.span,
        id.clone(),
        summary::Signed {
            model: run.model,
            reach: Some(&reach),
            now_ms: now,
            tail_line: None,
        },
        &text,
        usage,
        audit_json
            .as_ref()
            .map(|j| vec![("audit", j.to_string())])
            .unwrap_or_default(),
    );
    if let Verdict::NotSmaller { .. } = summary::judge(&a.span, &d) {
        run.r.notes.push(Note::RollupNotShorter);
        return Ok(None);
    }
    let rec = SummaryRecord::of(&a.span, &d, &id, audit_json, SummaryOutcome::WrittenRollup);
    Ok(Some((d, rec, id, a.span.items)))
}
