//! `--strategy cited`: for each span of the plan, ask for summaries that cite their sources,
//! check every candidate (`fold::cite`, then the retention audit), send the rejected ones back
//! with their reasons until none is rejected or the fold has made `cite::MAX_CALLS` calls, then
//! write what stands — the candidates that nest nothing first, then (on the file as that write
//! left it) those that fold them in. A span whose every candidate was rejected is declined, and
//! the verdict is remembered for that span and model.

use std::collections::HashMap;

use anyhow::Result;

use super::write::lines_for;
use super::{Compaction, FileRun, short};
use crate::call::{self, pieces_of};
use crate::decision::{
    Action, DecisionRecord, Decline, Note, Reason, RejectionRecord, Size, SummaryOutcome,
    SummaryRecord,
};
use crate::entry::{Draft, NONE, RecordKind, Usage, estimate_tokens};
use crate::error::MfError;
use crate::fold::cite::{self, Citable, Offer, Preview, Review};
use crate::fold::{Item, ItemKind, Ledger, Piece, Plan, Span, audit, frame, prompt, summary};
use crate::settings::CompactSettings;
use crate::summarizer::SummarizerError;
use crate::transcript::{self, Transcript};

/// The offer for one span: every item with the handle it is cited by, its size, its tool unit
/// (a call, its results and a stub in place of one travel together), its turns and originals.
fn offer_of(
    t: &Transcript,
    ledger: &Ledger<'_>,
    span: &Span,
    model: &str,
    reach: &frame::Reach,
) -> Offer {
    let n = span.items.len();
    let pos: HashMap<Item, usize> = span
        .items
        .iter()
        .enumerate()
        .map(|(k, &it)| (it, k))
        .collect();
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut k: usize) -> usize {
        while parent[k] != k {
            parent[k] = parent[parent[k]];
            k = parent[k];
        }
        k
    }
    for (k, &it) in span.items.iter().enumerate() {
        let answered = match ledger.kind(it) {
            ItemKind::Stub => ledger.summaries[&it]
                .children
                .first()
                .map_or(NONE, |&r| ledger.call_of[r as usize]),
            ItemKind::Message => ledger.call_of[it as usize],
            ItemKind::Summary => NONE,
        };
        if answered != NONE
            && let Some(&c) = pos.get(&answered)
        {
            let (a, b) = (root(&mut parent, k), root(&mut parent, c));
            parent[a] = b;
        }
    }
    // How many entries of the file carry each id (by hash), so uniqueness is one look-up.
    let mut carriers: HashMap<u64, u32> = HashMap::new();
    for e in &t.entries {
        *carriers.entry(e.id).or_insert(0) += 1;
    }
    let entries = span
        .items
        .iter()
        .enumerate()
        .map(|(k, &it)| {
            let id = t.id_string(it as usize);
            let e = &ledger.conv.entries[it as usize];
            let line = e.line;
            let unique = e.id == crate::digest::id_hash(&id) && carriers.get(&e.id) == Some(&1);
            let (from_turn, to_turn) = ledger.item_turns(it);
            Citable {
                handle: cite::handle(&id, unique, line),
                line,
                chars: ledger.item_chars(it),
                unit: root(&mut parent, k) as u32,
                from_turn,
                to_turn,
                leaves: ledger.item_leaves(it),
            }
        })
        .collect();
    Offer {
        entries,
        model: model.to_string(),
        reach: reach.clone(),
    }
}

/// The line of the entry an id or `@LINE` names anywhere in the file, if any.
fn line_of(t: &Transcript, handle: &str) -> Option<u32> {
    t.find(handle).first().map(|&i| t.entries[i].line)
}

/// One span's calls and what came of them.
struct Talk<'o> {
    review: Review<'o>,
    /// Audits of the candidates that reached the judge, by (round, name).
    audits: HashMap<(usize, String), serde_json::Value>,
    /// mf's section of the salient items a candidate left out (`audit::appendix`), by (round,
    /// name): added after its text when it is written.
    sections: HashMap<(usize, String), String>,
    /// Usage and estimate of each call, for the cost.
    calls: Vec<(Option<Usage>, (u64, u64))>,
    /// The call that failed, if one did (the conversation stopped there).
    failure: Option<SummarizerError>,
}

/// Ask, check, and ask again with the reasons, within the bound.
async fn talk<'o>(
    t: &Transcript,
    span: &Span,
    offer: &'o Offer,
    pieces: &[Piece],
    settings: &CompactSettings,
    ctx: &Compaction,
) -> Talk<'o> {
    let mut review = Review::new(offer);
    let mut audits = HashMap::new();
    let mut sections = HashMap::new();
    let mut calls = Vec::new();
    let mut failure = None;
    let builtin = ctx.caller().builtin();
    let policy = &settings.policy;
    let id = summary::summary_id(span.from_turn, span.to_turn, |_| false);
    let label = frame::label(&frame::LabelOf {
        from_turn: span.from_turn,
        to_turn: span.to_turn,
        originals: span.leaf_count,
        model: &offer.model,
        id: &id,
        reach: &offer.reach,
    });
    let label_words = label.split_whitespace().count();
    let label_chars = label.chars().count();
    while review.may_ask() {
        let round = review.begin_call();
        let feedback = review.feedback();
        let request = prompt::request(
            pieces.to_vec(),
            prompt::Ask {
                from_turn: span.from_turn,
                to_turn: span.to_turn,
                messages: span.leaf_count,
                span_chars: span.chars,
                target_tokens: policy.summary_target_tokens(span.tokens()),
                max_output_tokens: policy.max_output_tokens,
                instruction: settings.instruction.as_deref(),
                nonce: &call::nonce(),
                retry_note: None,
                cite: Some(prompt::CiteAsk {
                    offer,
                    round,
                    feedback: feedback.as_deref(),
                    label_words,
                }),
            },
        );
        let reply = match call::ask(ctx.caller(), &request).await {
            Ok(reply) => reply,
            Err(e) => {
                failure = Some(e);
                break;
            }
        };
        calls.push((reply.usage, request.estimate()));
        if frame::vet(&reply.text).is_err() {
            failure = Some(SummarizerError::degrade("the reply was empty"));
            break;
        }
        let rules = super::audit_rules(settings);
        let system = request.system.as_str();
        let mut judge = |p: &Preview<'_>| -> Result<(), audit::Faults> {
            let mut read: Vec<Piece> = p
                .nested
                .iter()
                .zip(p.nested_of)
                .map(|(text, &(r, name, from, to))| Piece {
                    turn: to,
                    author: format!("summary of turns {from}–{to}"),
                    role: None,
                    reasoning: Vec::new(),
                    // As it is written: its words, then mf's section of what they left out.
                    text: match sections.get(&(r, name.to_string())) {
                        Some(section) => format!("{}{section}", cite::strip(text).trim_end()),
                        None => cite::strip(text),
                    },
                })
                .collect();
            read.extend(p.entries.iter().map(|&k| pieces[k].clone()));
            let own = cite::strip(p.text);
            let judging = call::Judging {
                pieces: &read,
                context: &[],
                system,
                rules: &rules,
                builtin,
            };
            // A model's candidate gets mf's section of what it left out within its own length
            // or its share of the length mf asked for, whichever is more, and never past the
            // bound on a cited summary's length (`cite::MAX_SHARE` of what it consumes); it is
            // judged with it.
            let asked = (request.target_chars, span.chars);
            let (full, a, verdict) = judging.judge(&own, judging.audit(&own), |_| {
                section_budget(p, offer, &own, label_chars, asked)
            });
            if !builtin
                && let Some(section) = full.strip_prefix(own.trim_end())
                && !section.is_empty()
            {
                sections.insert((round, p.name.to_string()), section.to_string());
            }
            if let Some(v) = ctx.redactor.scrubbed_json(&a) {
                audits.insert((round, p.name.to_string()), v);
            }
            verdict.map_or(Ok(()), Err)
        };
        review.review(&reply.text, &|h| line_of(t, h), &mut judge);
    }
    Talk {
        review,
        audits,
        sections,
        calls,
        failure,
    }
}

/// The room for mf's section of what candidate `p` left out: its own length's share, or its
/// share of the length mf asked for (`asked`: the chars asked for the span, and the span's), whichever
/// is more, never past the bound on a cited summary's length (`cite::MAX_SHARE` of what it
/// consumes, with its label).
fn section_budget(
    p: &Preview<'_>,
    offer: &Offer,
    own: &str,
    label_chars: usize,
    asked: (usize, usize),
) -> usize {
    let own_chars = own.chars().count();
    let entries_chars: usize = p.entries.iter().map(|&k| offer.entries[k].chars).sum();
    let consumed = entries_chars
        + p.nested
            .iter()
            .map(|n| label_chars + 2 + n.chars().count())
            .sum::<usize>();
    let asked = asked.0 * entries_chars / asked.1.max(1);
    let (num, den) = cite::MAX_SHARE;
    let room = (consumed * num / den).saturating_sub(label_chars + 2 + p.text.chars().count());
    ((own_chars as f64 * audit::APPENDIX_SHARE) as usize)
        .max(asked.saturating_sub(own_chars))
        .min(room)
}

/// A summary written (or staged): which accepted candidate of which span, under which id.
struct Written {
    span_index: usize,
    accepted: usize,
    id: String,
}

/// What a cited fold's levels are written from: the file and its plan, every span's talk and
/// offer, the decline records (written with the first level), and the time.
struct Fold<'a, 'o> {
    t: &'a Transcript,
    ledger: &'a Ledger<'a>,
    plan: &'a Plan,
    talks: &'a [Talk<'o>],
    offers: &'a [Offer],
    records: &'a [(RecordKind, u64)],
    now: u64,
}

/// Fold the plan's spans with cited summaries.
pub(super) async fn fold(
    t: &Transcript,
    ledger: &Ledger<'_>,
    plan: Plan,
    mut run: FileRun<'_>,
) -> Result<DecisionRecord> {
    let (settings, ctx, model) = (run.settings, run.ctx, run.model);
    let redactor = settings.redact.then_some(&ctx.redactor);
    let mut offers = Vec::with_capacity(plan.spans.len());
    let mut pieces = Vec::with_capacity(plan.spans.len());
    let reach = settings.reach_for(t);
    for span in &plan.spans {
        offers.push(offer_of(t, ledger, span, model, &reach));
        pieces.push(pieces_of(t, ledger, span, redactor, &mut run.r.redacted)?);
    }
    let talks = converse(&mut run, t, &plan, &offers, &pieces).await?;
    let now = (ctx.now_ms)();
    let declines = declines_of(&mut run, t, &plan, &talks);
    let records = super::decline_records(
        ledger,
        model,
        now,
        declines
            .iter()
            .map(|(d, span)| (d.reason(), *span, None, short(&d.to_string(), 300))),
    );
    let f = Fold {
        t,
        ledger,
        plan: &plan,
        talks: &talks,
        offers: &offers,
        records: &records,
        now,
    };
    let (written, after) = write_levels(&mut run, &f)?;
    record(&mut run.r, &f, &written, &declines, after);
    Ok(run.r)
}

/// Every span's conversation with the summarizer, side by side; its calls and their cost in
/// the record. A setup error (bad key, quota, nothing listening) stops the file.
async fn converse<'o>(
    run: &mut FileRun<'_>,
    t: &Transcript,
    plan: &Plan,
    offers: &'o [Offer],
    pieces: &[Vec<Piece>],
) -> Result<Vec<Talk<'o>>> {
    let (settings, ctx, model) = (run.settings, run.ctx, run.model);
    let spinner = if settings.files.len() == 1 {
        ctx.ui.spinner(format!(
            "{}: writing cited summaries of {} with {model}",
            t.display(),
            crate::text::turn_span(plan.whole.from_turn, plan.whole.to_turn),
        ))
    } else {
        indicatif::ProgressBar::hidden()
    };
    let talks: Vec<Talk<'_>> = call::join_all(
        plan.spans
            .iter()
            .zip(offers)
            .zip(pieces)
            .map(|((span, offer), pieces)| talk(t, span, offer, pieces, settings, ctx)),
    )
    .await;
    spinner.finish_and_clear();
    if ctx.interrupt.received().is_some() {
        return Err(MfError::Interrupted.into());
    }
    // A setup error (bad key, quota, nothing listening) stops the file: nothing is written.
    if let Some(e) = talks.iter().find_map(|k| match &k.failure {
        Some(e) if e.stops() => Some(e.clone()),
        _ => None,
    }) {
        return Err(e.into());
    }
    for k in &talks {
        run.r.calls += k.review.calls;
        run.spend(&k.calls);
    }

    Ok(talks)
}

/// The rejected candidates, in the record; the spans that came to nothing, declined.
fn declines_of<'p>(
    run: &mut FileRun<'_>,
    t: &Transcript,
    plan: &'p Plan,
    talks: &[Talk<'_>],
) -> Vec<(Decline, &'p Span)> {
    let (ctx, r) = (run.ctx, &mut run.r);
    // The rejected candidates, in the record; the spans that came to nothing, declined.
    let mut declines: Vec<(Decline, &Span)> = Vec::new();
    for (s, k) in talks.iter().enumerate() {
        let span = &plan.spans[s];
        for rej in &k.review.rejected {
            let chars = rej.text.chars().count();
            r.summaries.push(SummaryRecord {
                from_turn: span.from_turn,
                to_turn: span.to_turn,
                chars,
                tokens: estimate_tokens(chars),
                audit: k.audits.get(&(rej.round, rej.name.clone())).cloned(),
                outcome: SummaryOutcome::Rejected(rej.reason.clone()),
                candidate: Some(rej.name.clone()),
                round: Some(rej.round),
                rejection: Some(RejectionRecord {
                    reason: rej.reason.code().to_string(),
                    detail: rej.reason.to_string(),
                }),
                ..SummaryRecord::default()
            });
        }
        if !k.review.accepted.is_empty() {
            if let Some(e) = &k.failure {
                r.degrade(e);
                r.notes.push(Note::CorrectionFailed {
                    from_turn: span.from_turn,
                    to_turn: span.to_turn,
                    message: e.message.clone(),
                });
            }
            continue;
        }
        match &k.failure {
            Some(e) => {
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
                r.degrade(e);
                declines.push((Decline::SummarizerFailed(e.message.clone()), span));
            }
            None => {
                let decline = if k.review.rejected.is_empty() {
                    Decline::NothingCited
                } else {
                    Decline::Rejected(k.review.rejection_summary())
                };
                declines.push((decline, span));
            }
        }
    }
    declines
}

/// Write level by level; returns the summaries written and the view's size after them.
fn write_levels(run: &mut FileRun<'_>, f: &Fold<'_, '_>) -> Result<(Vec<Written>, i64)> {
    let (t, ledger, plan, talks) = (f.t, f.ledger, f.plan, f.talks);
    // Write level by level: a summary that nests others goes after them, on the file as it
    // then is (re-read in place; staged for a copy).
    let levels = levels_of(talks);
    let copy = run.sink.output.is_some();
    let mut written: Vec<Written> = Vec::new();
    let mut after = run.r.before.chars as i64;
    let mut staged: Option<Transcript> = None;
    let mut staged_lines = 0usize;
    let mut first_of_span = vec![true; plan.spans.len()];
    let mut taken: Vec<String> = Vec::new();
    let last_level = levels.len().saturating_sub(1);
    if levels.is_empty() {
        run.write(
            t,
            &lines_for(t, ledger, &[], &[], &[], f.records, f.now)?,
            None,
        )?;
    }
    for (l, level) in levels.iter().enumerate() {
        // The file this level is written over.
        let reread_t;
        let cur: &Transcript = if l == 0 {
            t
        } else if let Some(s) = &staged {
            s
        } else {
            reread_t = run.reread(t)?;
            &reread_t
        };
        let cur_ledger;
        let lg: &Ledger<'_> = if l == 0 {
            ledger
        } else {
            cur_ledger = super::ledger_for(cur, run.settings);
            &cur_ledger
        };
        let names: HashMap<(usize, String), String> = written
            .iter()
            .map(|w| {
                (
                    (
                        w.span_index,
                        talks[w.span_index].review.accepted[w.accepted].name.clone(),
                    ),
                    w.id.clone(),
                )
            })
            .collect();
        let mut drafts: Vec<Draft> = Vec::new();
        let mut folds: Vec<(Vec<Item>, usize)> = Vec::new();
        let st = Stage {
            ledger,
            cur,
            lg,
            names: &names,
            plan,
            talks,
            offers: f.offers,
            model: run.model,
            now: f.now,
            redactor: &run.ctx.redactor,
        };
        for &(s, a) in level {
            let first = std::mem::take(&mut first_of_span[s]);
            let (d, fold_span, id) = draft_one(&st, s, a, first, &mut taken, &mut run.r)?;
            after += d.chars() as i64 - fold_span.chars as i64;
            folds.push((fold_span.items.clone(), drafts.len()));
            drafts.push(d);
            written.push(Written {
                span_index: s,
                accepted: a,
                id,
            });
        }
        let level_records: &[(RecordKind, u64)] = if l == 0 { f.records } else { &[] };
        let lines = lines_for(cur, lg, &drafts, &folds, &[], level_records, f.now)?;
        if copy && l < last_level {
            staged_lines += lines.len();
            let next = transcript::stage(cur, &lines, &run.settings.read)?;
            staged = Some(next);
        } else {
            run.write(cur, &lines, (l == 0).then_some(plan))?;
        }
    }
    run.r.lines_appended += staged_lines;
    if staged_lines > 0 {
        run.r.written = true;
    }

    Ok((written, after))
}

/// The accepted candidates by level, as (span, candidate): a summary that nests others is on
/// a level after theirs.
fn levels_of(talks: &[Talk<'_>]) -> Vec<Vec<(usize, usize)>> {
    let mut v: Vec<Vec<(usize, usize)>> = Vec::new();
    for (s, k) in talks.iter().enumerate() {
        for (l, ids) in k.review.by_level().into_iter().enumerate() {
            if v.len() <= l {
                v.resize(l + 1, Vec::new());
            }
            v[l].extend(ids.into_iter().map(|a| (s, a)));
        }
    }
    v
}

/// What a level is written over and with.
struct Stage<'a, 'o> {
    /// The file and ledger the plan was made on.
    ledger: &'a Ledger<'a>,
    /// The file and ledger this level is written over.
    cur: &'a Transcript,
    lg: &'a Ledger<'a>,
    /// The ids of the summaries written so far, by (span, candidate name).
    names: &'a HashMap<(usize, String), String>,
    plan: &'a Plan,
    talks: &'a [Talk<'o>],
    offers: &'a [Offer],
    model: &'a str,
    now: u64,
    redactor: &'a crate::redact::Redactor,
}

/// The draft of one accepted candidate (`a` of span `s`) over the level's file, its record in
/// `r`; `first`: the span's first draft, which carries its rejected candidates.
fn draft_one(
    st: &Stage<'_, '_>,
    s: usize,
    a: usize,
    first: bool,
    taken: &mut Vec<String>,
    r: &mut DecisionRecord,
) -> Result<(Draft, Span, String)> {
    let span = &st.plan.spans[s];
    let k = &st.talks[s];
    let acc = &k.review.accepted[a];
    let mut items: Vec<Item> = Vec::new();
    for &e in &acc.entries {
        let line = st.ledger.conv.entries[span.items[e] as usize].line;
        let at = st
            .lg
            .conv
            .entries
            .binary_search_by_key(&line, |x| x.line)
            .map_err(|_| anyhow::anyhow!("an entry of the fold is gone from the file"))?;
        items.push(at as Item);
    }
    for &j in &acc.nested {
        let name = &k.review.accepted[j].name;
        let id = &st.names[&(s, name.clone())];
        let [at] = st.cur.find(id)[..] else {
            anyhow::bail!("the summary `{id}` just written is not in the file once");
        };
        items.push(at as Item);
    }
    items.sort_by_key(|&it| st.lg.position(it));
    let fold_span = Span::of(st.lg, items).cited();
    let own: HashMap<String, String> = st
        .names
        .iter()
        .filter(|((si, _), _)| *si == s)
        .map(|((_, n), id)| (n.clone(), id.clone()))
        .collect();
    // The candidate's cited lines, then mf's section of what they left out (its lines quote the
    // span and cite nothing; the audit in the record was made with it).
    let mut text = cite::rename(&acc.text, &own);
    if let Some(section) = k.sections.get(&(acc.round, acc.name.clone())) {
        text = format!("{}{section}", text.trim_end());
    }
    let text = st.redactor.redact(&text, &mut r.scrubbed);
    let id = summary::summary_id(fold_span.from_turn, fold_span.to_turn, |id| {
        st.cur.has_id(id) || taken.iter().any(|x| x == id)
    });
    taken.push(id.clone());
    let handles: Vec<String> = acc
        .sources
        .iter()
        .map(|&e| st.offers[s].entries[e].handle.clone())
        .collect();
    let mut cited = serde_json::json!({
        "candidate": acc.name,
        "round": acc.round,
        "calls": k.review.calls,
        "cites": handles,
    });
    if first && !k.review.rejected.is_empty() {
        cited["rejected"] = serde_json::Value::Array(
            k.review
                .rejected
                .iter()
                .map(|rej| {
                    serde_json::json!({
                        "candidate": rej.name,
                        "round": rej.round,
                        "reason": rej.reason.code(),
                        "detail": short(&rej.reason.to_string(), 300),
                    })
                })
                .collect(),
        );
    }
    let audit_json = k.audits.get(&(acc.round, acc.name.clone())).cloned();
    let mut extra = Vec::new();
    if let Some(j) = &audit_json {
        extra.push(("audit", j.to_string()));
    }
    extra.push(("cited", cited.to_string()));
    let d = summary::draft(
        &fold_span,
        id.clone(),
        summary::Signed {
            model: st.model,
            reach: Some(&st.offers[s].reach),
            now_ms: st.now,
            tail_line: st.plan.tail_line,
        },
        &text,
        None,
        extra,
    );
    let outcome = if acc.nested_in.is_some() {
        SummaryOutcome::WrittenNested
    } else {
        SummaryOutcome::Written
    };
    r.summaries.push(SummaryRecord {
        candidate: Some(acc.name.clone()),
        round: Some(acc.round),
        covered_ids: fold_span
            .items
            .iter()
            .map(|&it| st.cur.id_string(it as usize))
            .collect(),
        rejection: None,
        ..SummaryRecord::of(&fold_span, &d, &id, audit_json, outcome)
    });
    Ok((d, fold_span, id))
}

/// What the fold came to, in the record.
fn record(
    r: &mut DecisionRecord,
    f: &Fold<'_, '_>,
    written: &[Written],
    declines: &[(Decline, &Span)],
    after: i64,
) {
    let (ledger, plan, talks) = (f.ledger, f.plan, f.talks);
    // What the fold came to.
    let consumed: usize = talks
        .iter()
        .map(|k| k.review.consumed_by.iter().filter(|c| c.is_some()).count())
        .sum();
    let mut uncited: Vec<Item> = Vec::new();
    for (s, k) in talks.iter().enumerate() {
        if k.review.accepted.is_empty() {
            continue;
        }
        uncited.extend(
            k.review
                .unconsumed()
                .into_iter()
                .map(|e| plan.spans[s].items[e]),
        );
    }
    let rejected: usize = talks.iter().map(|k| k.review.rejected.len()).sum();
    if !written.is_empty() {
        r.action = Action::Folded;
        let mut verbatim = plan.verbatim.clone();
        verbatim.extend(uncited.iter().copied());
        r.verbatim = Some(crate::decision::VerbatimRecord::of(
            ledger,
            &verbatim,
            plan.protected.len(),
        ));
        r.reason = Reason::FoldedCited {
            consumed,
            from_turn: plan.whole.from_turn,
            to_turn: plan.whole.to_turn,
            summaries: written.len(),
            calls: r.calls,
            rejected,
            uncited: uncited.len(),
            verbatim: verbatim.len(),
        };
        r.after = Size::of(after.max(0) as usize);
    } else {
        r.action = Action::Declined;
        r.reason = match declines.first() {
            Some((d, _)) => Reason::DeclinedCited(d.clone()),
            None => Reason::NothingWritten,
        };
    }
}
