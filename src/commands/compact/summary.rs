//! `--strategy summary` (the default): one call per span of the plan, each reply judged by the
//! call (`call::Judged`) and taken into a `FoldOutcome` (the drafts to write, the declines to
//! remember, their records); what helps is written, the rest declined and remembered.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Result;

use super::cost::{cost_of, dry_run};
use super::write::{check_expressible, lines_for};
use super::{FileRun, cited, decline_records, ledger_for, rollup, short};
use crate::call::{self, Asked, Judged};
use crate::decision::{
    Action, DecisionRecord, Decline, DeclineCounts, Note, Reason, Size, SpanRecord, SummaryOutcome,
    SummaryRecord,
};
use crate::entry::{DeclineReason, DeclinedSpan, Draft, RecordKind, Usage, estimate_tokens};
use crate::error::MfError;
use crate::fold::summary::Verdict;
use crate::fold::{self, Decision, Item, Ledger, Plan, Span, summary};
use crate::summarizer::SummarizerError;
use crate::transcript::Transcript;

/// The least share (percent) of the view a fold must save to be written.
pub(super) const MIN_SAVING_PCT: usize = 10;

/// What the judged replies to a plan came to: nothing is written or printed yet; the record
/// takes it once (`record`).
#[derive(Default)]
struct FoldOutcome {
    drafts: Vec<Draft>,
    /// Per draft: the items it folds, and its index in `drafts`.
    folds: Vec<(Vec<Item>, usize)>,
    /// Per declined span: why, and the size of the summary that was declined.
    declines: Vec<(Decline, Span, Option<usize>)>,
    /// (span chars folded, summary chars written)
    written_chars: (usize, usize),
    written_spans: Vec<Span>,
    /// Ids given to the drafts so far.
    taken: Vec<String>,
    /// What each span's calls were billed, for its decline record if it is declined.
    spent: Vec<(String, Usage)>,
    /// Every span's summary record, in the order they were judged.
    summaries: Vec<SummaryRecord>,
    /// What the record notes of the replies and of the fold.
    notes: Vec<Note>,
}

/// Plan the file and fold it: skipped, a dry run, cited, or summaries written once.
pub(super) async fn summarize_file(t: Transcript, mut run: FileRun<'_>) -> Result<DecisionRecord> {
    let (settings, model) = (run.settings, run.model);
    let ledger = ledger_for(&t, settings);
    let policy = &settings.policy;
    if policy.strategy == fold::Strategy::Cited {
        t.check_gaps()?;
    }
    let id_of = |i: Item| t.id_string(i as usize);
    let plan = match fold::plan(&ledger, policy, model) {
        Decision::Skip(skip) => {
            let r = &mut run.r;
            if r.action != Action::Masked {
                r.action = Action::Skipped;
                r.reason = Reason::Skip(skip.reason);
                r.span = skip.span.as_ref().map(|s| SpanRecord::of(s, &id_of));
                r.verbatim = Some(crate::decision::VerbatimRecord::of(
                    &ledger,
                    &ledger.view,
                    0,
                ));
            }
            run.write(&t, &[], None)?;
            return Ok(run.r);
        }
        Decision::Fold(plan) => plan,
    };
    let masked = std::mem::take(&mut run.r.summaries);
    run.r.planned(&ledger, &plan, &id_of);
    run.r.summaries = masked;
    check_expressible(&t, &ledger, &plan)?;

    if settings.dry_run && policy.strategy == fold::Strategy::Cited {
        run.r.notes.push(Note::CitedDryRun);
    }
    if settings.dry_run {
        dry_run(&t, &ledger, &plan, settings, run.ctx, &mut run.r).await?;
        return Ok(run.r);
    }
    if policy.strategy == fold::Strategy::Cited {
        return cited::fold(&t, &ledger, plan, run).await;
    }

    let asked = ask_all(&mut run, &t, &ledger, &plan).await?;
    let now = (run.ctx.now_ms)();
    let mut outcome = FoldOutcome::default();
    let mut unasked: Vec<&Span> = Vec::new();
    for (span, a) in plan.spans.iter().zip(asked) {
        match a {
            Some(a) => outcome.take(&mut run, &t, &plan, now, a),
            None => unasked.push(span),
        }
    }
    if ledger.conv.one_run {
        outcome.keep_prefix(&plan, &unasked);
    }
    outcome.unless_honoured(&ledger);
    outcome.unless_worth_it(&plan);
    let records = decline_lines(&ledger, model, now, &outcome);
    let lines = lines_for(
        &t,
        &ledger,
        &outcome.drafts,
        &outcome.folds,
        &[],
        &records,
        now,
    )?;
    let ids: Vec<String> = outcome.drafts.iter().map(|d| d.id.clone()).collect();
    record(&mut run.r, outcome, &plan);
    run.write(&t, &lines, Some(&plan))?;
    if settings.rollup
        && ids.len() > 1
        && run.sink.handle.is_some()
        && run.ctx.interrupt.received().is_none()
    {
        rollup::rollup(&mut run, &t, ids).await?;
    }
    Ok(run.r)
}

/// One call per span, at most -j at once. Each span's request is built only when its turn
/// comes and dropped once its reply is audited, so that what is held at once is -j requests,
/// not the whole span; secrets are taken out of anything that leaves the machine. A setup
/// error (bad key, quota, nothing listening) stops the file. On an agent that shows one
/// unbroken run after its summaries (pi), only a prefix of the chunks can be written: once a
/// chunk is declined, no chunk after it is asked about (`None`; those in flight finish).
async fn ask_all(
    run: &mut FileRun<'_>,
    t: &Transcript,
    ledger: &Ledger<'_>,
    plan: &Plan,
) -> Result<Vec<Option<Asked>>> {
    let (settings, ctx, model) = (run.settings, run.ctx, run.model);
    let redactor = settings.redact.then_some(&ctx.redactor);
    let spinner = if settings.files.len() == 1 {
        ctx.ui.spinner(format!(
            "{}: summarizing {} with {model}{}",
            t.display(),
            crate::text::turn_span(plan.whole.from_turn, plan.whole.to_turn),
            if plan.spans.len() > 1 {
                format!(" ({} calls)", plan.spans.len())
            } else {
                String::new()
            }
        ))
    } else {
        indicatif::ProgressBar::hidden()
    };
    // What the summarizer's words may also come from besides the span: the entries that stay
    // verbatim (the preamble, the tail), as the agent reads them next to the summary.
    let context: Arc<Vec<String>> = Arc::new(
        plan.verbatim
            .iter()
            .filter_map(|&it| t.text(it as usize).ok())
            .collect(),
    );
    let rules = super::rules(settings);
    let (context_ref, rules) = (&context, &rules);
    let prefix_only = ledger.conv.one_run && plan.spans.len() > 1;
    // The first chunk declined so far (`usize::MAX`: none).
    let declined = AtomicUsize::new(usize::MAX);
    let declined = &declined;
    let asked: Vec<Result<Option<Asked>>> =
        call::join_all(plan.spans.iter().enumerate().map(|(k, span)| async move {
            if !prefix_only {
                return call::ask_span(t, ledger, span, redactor, rules, ctx.caller(), context_ref)
                    .await
                    .map(Some);
            }
            let _permit = ctx
                .calls
                .acquire()
                .await
                .expect("the semaphore is never closed");
            if declined.load(Ordering::SeqCst) < k {
                return Ok(None);
            }
            let a =
                call::ask_span_held(t, ledger, span, redactor, rules, ctx.caller(), context_ref)
                    .await?;
            if a.declined() {
                declined.fetch_min(k, Ordering::SeqCst);
            }
            Ok(Some(a))
        }))
        .await;
    spinner.finish_and_clear();
    let asked: Vec<Option<Asked>> = asked.into_iter().collect::<Result<_>>()?;
    let r = &mut run.r;
    for a in asked.iter().flatten() {
        r.calls += a.calls.len();
        for (k, n) in &a.redacted {
            *r.redacted.entry(k).or_default() += n;
        }
    }
    if ctx.interrupt.received().is_some() {
        return Err(MfError::Interrupted.into());
    }
    if let Some(e) = asked.iter().flatten().find_map(|a| a.stops().cloned()) {
        return Err(e.into());
    }
    Ok(asked)
}

impl FoldOutcome {
    /// Take one span's judged reply: a failure (the span stays verbatim), a lossy summary or
    /// one not smaller (declined and remembered), or a draft to write.
    fn take(&mut self, run: &mut FileRun<'_>, t: &Transcript, plan: &Plan, now: u64, a: Asked) {
        run.spend(&a.calls);
        self.spent.push((a.span.digest.clone(), a.billed()));
        self.notes.extend(a.notes.iter().map(|n| Note::Reply {
            from_turn: a.span.from_turn,
            to_turn: a.span.to_turn,
            note: n.clone(),
        }));
        run.scrubbed(&a.scrubbed);
        let audit_json = a.audit_json;
        let (text, usage) = match a.judged {
            Judged::Failed(e) => return self.failed(run, t, a.span, e),
            Judged::Declined { faults, chars } => {
                self.summaries.push(SummaryRecord {
                    id: String::new(),
                    from_turn: a.span.from_turn,
                    to_turn: a.span.to_turn,
                    entry_count: a.span.items.len(),
                    chars,
                    tokens: estimate_tokens(chars),
                    audit: audit_json,
                    outcome: SummaryOutcome::Declined(Decline::Lossy(faults.clone())),
                    ..SummaryRecord::default()
                });
                self.declines
                    .push((Decline::Lossy(faults), a.span, Some(chars)));
                return;
            }
            Judged::Kept { text, usage } => (text, usage),
        };
        let id = summary::summary_id(a.span.from_turn, a.span.to_turn, |id| {
            t.has_id(id) || self.taken.iter().any(|x| x == id)
        });
        let extra = audit_json
            .as_ref()
            .map(|j| vec![("audit", j.to_string())])
            .unwrap_or_default();
        let reach = run.settings.reach_for(t);
        let d = summary::draft(
            &a.span,
            id.clone(),
            summary::Signed {
                model: run.model,
                reach: Some(&reach),
                now_ms: now,
                tail_line: plan.tail_line,
            },
            &text,
            usage,
            extra,
        );
        let mut rec = SummaryRecord::of(&a.span, &d, &id, audit_json, SummaryOutcome::Written);
        match summary::judge(&a.span, &d) {
            Verdict::NotSmaller {
                span_chars,
                summary_chars,
            } => {
                let decline = Decline::NotSmaller {
                    span_chars,
                    summary_chars,
                };
                rec.outcome = SummaryOutcome::Declined(decline.clone());
                self.declines.push((decline, a.span, Some(summary_chars)));
            }
            Verdict::Smaller {
                span_chars,
                summary_chars,
            } => {
                self.taken.push(id);
                self.written_chars.0 += span_chars;
                self.written_chars.1 += summary_chars;
                self.folds.push((a.span.items.clone(), self.drafts.len()));
                self.drafts.push(d);
                self.written_spans.push(a.span);
            }
        }
        self.summaries.push(rec);
    }

    /// A span whose summarizer failed stays verbatim: the failure in the record, declined.
    fn failed(&mut self, run: &mut FileRun<'_>, t: &Transcript, span: Span, e: SummarizerError) {
        let usage = e.usage.unwrap_or_default();
        run.r.failures.push(crate::decision::FailureRecord {
            from_turn: span.from_turn,
            to_turn: span.to_turn,
            reason: e.reason,
            message: e.message.clone(),
            usage: e.usage.map(Into::into),
            cost: cost_of(run.settings, (0, 0), Some(usage)),
        });
        run.ctx.ui.warn(&format!(
            "{}: the summarizer failed, {} stay{} verbatim: {}",
            t.display(),
            crate::text::turn_span(span.from_turn, span.to_turn),
            if span.from_turn == span.to_turn {
                "s"
            } else {
                ""
            },
            e.message
        ));
        run.r.degrade(&e);
        self.declines
            .push((Decline::SummarizerFailed(e.message), span, None));
    }

    /// On an agent that shows one unbroken run after its summaries (pi): only the chunks before
    /// the first one not written can be shown folded (the planner keeps every prompt of a turn
    /// that spreads over chunks verbatim, so any prefix of them can be shown). The drafts after it
    /// are not written (their records say why), the chunks never asked about are recorded as
    /// such, and a note names the chunk that was declined.
    fn keep_prefix(&mut self, plan: &Plan, unasked: &[&Span]) {
        let written = |s: &Span| self.written_spans.iter().any(|w| w.digest == s.digest);
        let Some(first) = plan.spans.iter().position(|s| !written(s)) else {
            return;
        };
        let (from_turn, to_turn) = (plan.spans[first].from_turn, plan.spans[first].to_turn);
        let after: Vec<&Span> = plan.spans[first + 1..].iter().collect();
        if after.is_empty() {
            return;
        }
        let cut = |s: &Span| after.iter().any(|a| a.digest == s.digest);
        let mut kept_spans = Vec::new();
        let mut kept_drafts = Vec::new();
        self.written_chars = (0, 0);
        for (span, d) in self.written_spans.drain(..).zip(self.drafts.drain(..)) {
            if cut(&span) {
                self.taken.retain(|id| *id != d.id);
                if let Some(rec) = self.summaries.iter_mut().find(|s| s.id == d.id) {
                    rec.id.clear();
                    rec.outcome = SummaryOutcome::AfterDeclined {
                        from_turn,
                        to_turn,
                        asked: true,
                    };
                }
            } else {
                self.written_chars.0 += span.chars;
                self.written_chars.1 += d.chars();
                kept_spans.push(span);
                kept_drafts.push(d);
            }
        }
        self.folds = kept_spans
            .iter()
            .enumerate()
            .map(|(k, s)| (s.items.clone(), k))
            .collect();
        self.written_spans = kept_spans;
        self.drafts = kept_drafts;
        for span in unasked {
            self.summaries.push(SummaryRecord {
                from_turn: span.from_turn,
                to_turn: span.to_turn,
                entry_count: span.items.len(),
                outcome: SummaryOutcome::AfterDeclined {
                    from_turn,
                    to_turn,
                    asked: false,
                },
                ..SummaryRecord::default()
            });
        }
        self.notes.push(Note::AfterDeclined {
            from_turn,
            to_turn,
            chunks: after.len(),
            unasked: unasked.len(),
        });
    }

    /// The one rule of what a summary may cover (`Ledger::would_honour`, the re-vet on read):
    /// from the first draft that would not stand, no draft is written (each after it was judged
    /// with it standing); each is declined with the re-vet's words, and no decline record binds
    /// (the span is planned again).
    fn unless_honoured(&mut self, ledger: &Ledger<'_>) {
        let Some((k, why)) = ledger
            .would_honour(&self.drafts)
            .into_iter()
            .enumerate()
            .find_map(|(k, v)| v.err().map(|why| (k, why)))
        else {
            return;
        };
        let decline = Decline::NotHonoured(why);
        for (span, d) in self.written_spans.drain(k..).zip(self.drafts.drain(k..)) {
            self.written_chars.0 -= span.chars;
            self.written_chars.1 -= d.chars();
            self.taken.retain(|id| *id != d.id);
            if let Some(rec) = self.summaries.iter_mut().find(|s| s.id == d.id) {
                rec.id.clear();
                rec.outcome = SummaryOutcome::Declined(decline.clone());
            }
        }
        self.folds.truncate(k);
    }

    /// A fold that would save under a tenth of the view is not worth its lines: the view stays.
    fn unless_worth_it(&mut self, plan: &Plan) {
        let saved = self.written_chars.0.saturating_sub(self.written_chars.1);
        if self.drafts.is_empty() || saved * 100 >= plan.view_chars * MIN_SAVING_PCT {
            return;
        }
        let decline = Decline::UnderSaving {
            saved,
            view_chars: plan.view_chars,
            min_pct: MIN_SAVING_PCT,
        };
        for (span, d) in self.written_spans.drain(..).zip(self.drafts.drain(..)) {
            if let Some(rec) = self.summaries.iter_mut().find(|s| s.id == d.id) {
                rec.outcome = SummaryOutcome::Declined(decline.clone());
            }
            self.declines.push((decline.clone(), span, Some(d.chars())));
        }
        self.folds.clear();
        self.written_chars = (0, 0);
    }
}

/// The decline records to append (none the file already holds), each with what its span's
/// calls were billed.
fn decline_lines(
    ledger: &Ledger<'_>,
    model: &str,
    now: u64,
    out: &FoldOutcome,
) -> Vec<(RecordKind, u64)> {
    let records = decline_records(
        ledger,
        model,
        now,
        out.declines
            .iter()
            .map(|(d, span, chars)| (d.reason(), span, *chars, short(&d.to_string(), 200))),
    );
    records
        .into_iter()
        .map(|(mut k, at)| {
            if let RecordKind::Decline {
                span: DeclinedSpan::Ref(s),
                usage,
                ..
            } = &mut k
            {
                *usage = out
                    .spent
                    .iter()
                    .find(|(d, _)| *d == s.digest)
                    .map(|(_, u)| *u)
                    .filter(|u| u.input_tokens + u.output_tokens > 0);
            }
            (k, at)
        })
        .collect()
}

/// What the outcome says in the record, taken once: its summaries and notes, then folded (and
/// what else was declined), or declined.
fn record(r: &mut DecisionRecord, mut out: FoldOutcome, plan: &Plan) {
    r.summaries.append(&mut out.summaries);
    r.notes.append(&mut out.notes);
    let folded = out.drafts.len();
    if folded > 0 {
        r.action = Action::Folded;
        let from = out
            .drafts
            .iter()
            .map(|d| d.coverage.from_turn)
            .min()
            .unwrap_or(0);
        let to = out
            .drafts
            .iter()
            .map(|d| d.coverage.to_turn)
            .max()
            .unwrap_or(0);
        let count =
            |want: DeclineReason| out.declines.iter().filter(|d| d.0.reason() == want).count();
        r.reason = Reason::Folded {
            entries: out.drafts.iter().map(|d| d.coverage.entry_count).sum(),
            from_turn: from,
            to_turn: to,
            summaries: folded,
            declined: DeclineCounts {
                lossy: count(DeclineReason::Lossy),
                not_smaller: count(DeclineReason::NotSmaller),
                failed: count(DeclineReason::SummarizerFailed),
            },
            verbatim: plan.verbatim.len(),
        };
        r.after = Size::of(r.after.chars - out.written_chars.0 + out.written_chars.1);
    } else if r.action != Action::Masked {
        r.action = Action::Declined;
        r.reason = match out.declines.first() {
            Some((d, ..)) => Reason::Declined(d.clone()),
            None => Reason::NothingWritten,
        };
    }
}
