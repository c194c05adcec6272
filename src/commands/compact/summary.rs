//! `--strategy summary` (the default): one call per span of the plan, each reply vetted,
//! audited and judged into an `Outcome` (the drafts to write, the declines to remember); what
//! helps is written, the rest declined and remembered.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Result;

use super::cost::{add_usage_est, cost_of, dry_run};
use super::write::{Sink, check_expressible, lines_for, write};
use super::{Compaction, cited, decline_records, ledger_for, rollup, short};
use crate::call::{self, Asked};
use crate::decision::{
    Action, DecisionRecord, Decline, DeclineCounts, Note, Reason, Size, SpanRecord, SummaryOutcome,
    SummaryRecord,
};
use crate::entry::{DeclineReason, DeclinedSpan, Draft, RecordKind, Usage, estimate_tokens};
use crate::error::MfError;
use crate::fold::summary::Verdict;
use crate::fold::{self, Decision, Item, Ledger, Plan, Span, frame, summary};
use crate::redact::Counts;
use crate::settings::CompactSettings;
use crate::summarizer::SummarizerError;
use crate::transcript::Transcript;

/// The least share (percent) of the view a fold must save to be written.
pub(super) const MIN_SAVING_PCT: usize = 10;

/// What the replies to a plan came to: nothing is written or printed yet.
#[derive(Default)]
struct Outcome {
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
}

/// Plan the file and fold it: skipped, a dry run, cited, or summaries written once.
pub(super) async fn summarize_file(
    t: Transcript,
    mut sink: Sink<'_>,
    settings: &CompactSettings,
    ctx: &Compaction,
    mut r: DecisionRecord,
    model: &str,
) -> Result<DecisionRecord> {
    let ledger = ledger_for(&t, settings);
    let policy = &settings.policy;
    if policy.strategy == fold::Strategy::Cited {
        t.check_gaps()?;
    }
    let id_of = |i: Item| t.id_string(i as usize);
    let plan = match fold::plan(&ledger, policy, model) {
        Decision::Skip(skip) => {
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
            write(&t, &mut sink, &[], settings, ctx, &mut r, None)?;
            return Ok(r);
        }
        Decision::Fold(plan) => plan,
    };
    let masked = std::mem::take(&mut r.summaries);
    r.planned(&ledger, &plan, &id_of);
    r.summaries = masked;
    check_expressible(&t, &ledger, &plan)?;

    if settings.dry_run && policy.strategy == fold::Strategy::Cited {
        r.notes.push(Note::CitedDryRun);
    }
    if settings.dry_run {
        dry_run(&t, &ledger, &plan, settings, ctx, &mut r).await?;
        return Ok(r);
    }
    if policy.strategy == fold::Strategy::Cited {
        return cited::fold(&t, &ledger, plan, sink, settings, ctx, r, model).await;
    }

    let asked = ask_all(&t, &ledger, &plan, settings, ctx, &mut r, model).await?;
    let now = (ctx.now_ms)();
    let mut outcome = Outcome::default();
    let mut unasked: Vec<&Span> = Vec::new();
    for (span, a) in plan.spans.iter().zip(asked) {
        match a {
            Some(a) => judge(
                &t,
                a,
                &plan,
                settings,
                ctx,
                &mut r,
                model,
                now,
                &mut outcome,
            ),
            None => unasked.push(span),
        }
    }
    if ledger.conv.one_run {
        outcome.keep_prefix(&plan, &unasked, &mut r);
    }
    outcome.unless_honoured(&ledger, &mut r);
    outcome.unless_worth_it(&plan, &mut r);
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
    record(&mut r, &outcome, &plan);
    write(&t, &mut sink, &lines, settings, ctx, &mut r, Some(&plan))?;
    let folded = outcome.drafts.len();
    if settings.rollup && folded > 1 && sink.handle.is_some() && ctx.interrupt.received().is_none()
    {
        let ids = outcome.drafts.iter().map(|d| d.id.clone()).collect();
        rollup::rollup(&t, &mut sink, settings, ctx, &mut r, model, ids).await?;
    }
    Ok(r)
}

/// One call per span, at most -j at once. Each span's request is built only when its turn
/// comes and dropped once its reply is audited, so that what is held at once is -j requests,
/// not the whole span; secrets are taken out of anything that leaves the machine. A setup
/// error (bad key, quota, nothing listening) stops the file. On an agent that shows one
/// unbroken run after its summaries (pi), only a prefix of the chunks can be written: once a
/// chunk is declined, no chunk after it is asked about (`None`; those in flight finish).
async fn ask_all(
    t: &Transcript,
    ledger: &Ledger<'_>,
    plan: &Plan,
    settings: &CompactSettings,
    ctx: &Compaction,
    r: &mut DecisionRecord,
    model: &str,
) -> Result<Vec<Option<Asked>>> {
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

/// Judge one span's reply into the outcome: a failure (the span stays verbatim), a lossy
/// summary or one not smaller (declined and remembered), or a draft to write.
#[allow(clippy::too_many_arguments)]
fn judge(
    t: &Transcript,
    a: Asked,
    plan: &Plan,
    settings: &CompactSettings,
    ctx: &Compaction,
    r: &mut DecisionRecord,
    model: &str,
    now: u64,
    out: &mut Outcome,
) {
    for &(usage, estimate) in &a.calls {
        add_usage_est(r, usage, settings, estimate);
    }
    out.spent.push((a.span.digest.clone(), a.billed()));
    if let Ok(reply) = &a.reply {
        r.notes.extend(reply.notes.iter().map(|n| Note::Reply {
            from_turn: a.span.from_turn,
            to_turn: a.span.to_turn,
            note: n.clone(),
        }));
    }
    let reply = match a.reply.and_then(|rep| {
        frame::vet(&rep.text)
            .map(|_| rep)
            .map_err(SummarizerError::degrade)
    }) {
        Ok(reply) => reply,
        Err(e) => {
            failed(t, a.span, e, settings, ctx, r, out);
            return;
        }
    };
    let (_, lossy) = a.audit.expect("a vetted reply was audited");
    let audit_json = a.audit_json;
    let lossy = lossy.map(|why| why.map_texts(|s| ctx.redactor.redact(s, &mut Counts::new())));
    if let Some(why) = lossy {
        r.summaries.push(SummaryRecord {
            id: String::new(),
            from_turn: a.span.from_turn,
            to_turn: a.span.to_turn,
            entry_count: a.span.items.len(),
            chars: reply.text.chars().count(),
            tokens: estimate_tokens(reply.text.chars().count()),
            audit: audit_json,
            outcome: SummaryOutcome::Declined(Decline::Lossy(why.clone())),
            ..SummaryRecord::default()
        });
        out.declines.push((
            Decline::Lossy(why),
            a.span,
            Some(reply.text.chars().count()),
        ));
        return;
    }
    let vetted = frame::vet(&reply.text).expect("vetted above");
    // Secrets never reach the file: the key in use, and anything shaped like one.
    let text = ctx.redactor.redact(&vetted, &mut r.scrubbed);
    let id = summary::summary_id(a.span.from_turn, a.span.to_turn, |id| {
        t.has_id(id) || out.taken.iter().any(|x| x == id)
    });
    let extra = audit_json
        .as_ref()
        .map(|j| vec![("audit", j.to_string())])
        .unwrap_or_default();
    let reach = settings.reach_for(t);
    let d = summary::draft(
        &a.span,
        id.clone(),
        (model, Some(&reach)),
        &text,
        reply.usage,
        now,
        plan.tail_line,
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
            out.declines.push((decline, a.span, Some(summary_chars)));
        }
        Verdict::Smaller {
            span_chars,
            summary_chars,
        } => {
            out.taken.push(id);
            out.written_chars.0 += span_chars;
            out.written_chars.1 += summary_chars;
            out.folds.push((a.span.items.clone(), out.drafts.len()));
            out.drafts.push(d);
            out.written_spans.push(a.span);
        }
    }
    r.summaries.push(rec);
}

/// A span whose summarizer failed stays verbatim: the failure in the record, declined.
fn failed(
    t: &Transcript,
    span: Span,
    e: SummarizerError,
    settings: &CompactSettings,
    ctx: &Compaction,
    r: &mut DecisionRecord,
    out: &mut Outcome,
) {
    let usage = e.usage.unwrap_or_default();
    r.failures.push(crate::decision::FailureRecord {
        from_turn: span.from_turn,
        to_turn: span.to_turn,
        reason: e.reason,
        message: e.message.clone(),
        usage: e.usage.map(Into::into),
        cost: cost_of(settings, (0, 0), Some(usage)),
    });
    ctx.ui.warn(&format!(
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
    r.degrade(&e);
    out.declines
        .push((Decline::SummarizerFailed(e.message), span, None));
}

impl Outcome {
    /// On an agent that shows one unbroken run after its summaries (pi): only the chunks before
    /// the first one not written can be shown folded (the planner keeps every prompt of a turn
    /// that spreads over chunks verbatim, so any prefix of them can be shown). The drafts after it
    /// are not written (their records say why), the chunks never asked about are recorded as
    /// such, and a note names the chunk that was declined.
    fn keep_prefix(&mut self, plan: &Plan, unasked: &[&Span], r: &mut DecisionRecord) {
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
                if let Some(rec) = r.summaries.iter_mut().find(|s| s.id == d.id) {
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
            r.summaries.push(SummaryRecord {
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
        r.notes.push(Note::AfterDeclined {
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
    fn unless_honoured(&mut self, ledger: &Ledger<'_>, r: &mut DecisionRecord) {
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
            if let Some(rec) = r.summaries.iter_mut().find(|s| s.id == d.id) {
                rec.id.clear();
                rec.outcome = SummaryOutcome::Declined(decline.clone());
            }
        }
        self.folds.truncate(k);
    }

    /// A fold that would save under a tenth of the view is not worth its lines: the view stays.
    fn unless_worth_it(&mut self, plan: &Plan, r: &mut DecisionRecord) {
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
            if let Some(rec) = r.summaries.iter_mut().find(|s| s.id == d.id) {
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
    out: &Outcome,
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

/// What the outcome says in the record: folded (and what else was declined), or declined.
fn record(r: &mut DecisionRecord, out: &Outcome, plan: &Plan) {
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
