//! The call: a span → its request (the pieces, secrets redacted, between nonce delimiters) → the
//! summarizer's reply → the audit of it (with mf's section of the salient items a model left
//! out). Shared by `compact` and `summarize`; it neither writes nor prints.

use std::sync::Arc;

use anyhow::Result;
use tokio::sync::Semaphore;

use crate::entry::{Role, Usage};
use crate::fold::{self, FoldPolicy, ItemKind, Ledger, Piece, Span, audit, frame, prompt};
use crate::interrupt::Interrupt;
use crate::redact::{Counts, Redactor};
use crate::summarizer::{Summarizer, SummarizerError, SummaryReply};
use crate::transcript::Transcript;

/// What a call reaches: the summarizer, the interrupt that cancels it, the bound on calls in
/// flight (`-j`), and the redactor (with the key in use).
#[derive(Clone, Copy)]
pub struct Caller<'a> {
    pub summarizer: &'a dyn Summarizer,
    pub interrupt: &'a Interrupt,
    pub calls: &'a Semaphore,
    pub redactor: &'a Redactor,
}

impl Caller<'_> {
    /// Whether the summarizer is the built-in one (which keeps every salient item by itself).
    pub fn builtin(&self) -> bool {
        self.summarizer.model() == crate::summarizer::extractive::NAME
    }
}

/// How a reply is audited: the part of the settings the audit reads.
#[derive(Debug, Clone, Copy)]
pub struct AuditRules {
    pub min_retention: f64,
    pub strict: bool,
    pub count_tool_results: bool,
    /// `--retry-lossy`: ask once more, naming what a lossy summary left out.
    pub retry_lossy: bool,
    /// `--allow-inventions`: inventions, misstated claims and stale values do not decline.
    pub allow_inventions: bool,
    /// A debug build's injected fault (`MF_DEBUG_PANIC_ON`), as `settings` read it.
    pub panic_on: Option<&'static str>,
}

impl AuditRules {
    pub fn options(&self) -> audit::AuditOptions {
        audit::AuditOptions {
            count_tool_results: self.count_tool_results,
            max_listed: 20,
        }
    }
}

/// What a request is built from: the part of the settings the request reads.
#[derive(Debug, Clone, Copy)]
pub struct Rules<'a> {
    pub policy: &'a FoldPolicy,
    /// `--system-prompt`, when given.
    pub instruction: Option<&'a str>,
    pub audit: AuditRules,
}

/// A fresh nonce for one request's delimiters.
pub fn nonce() -> String {
    format!("{:08x}", fastrand::u32(..))
}

/// The pieces a summarizer reads for a span, secrets replaced when the span leaves the machine.
pub fn pieces_of(
    t: &Transcript,
    ledger: &Ledger<'_>,
    span: &Span,
    redactor: Option<&Redactor>,
    counts: &mut Counts,
) -> Result<Vec<Piece>> {
    Ok(pieces_and_originals(t, ledger, span, redactor, counts)?.0)
}

/// [`pieces_of`], with the original text of every entry the redactor changed (read once: what
/// the audit also judges a summary against).
fn pieces_and_originals(
    t: &Transcript,
    ledger: &Ledger<'_>,
    span: &Span,
    redactor: Option<&Redactor>,
    counts: &mut Counts,
) -> Result<(Vec<Piece>, Vec<String>)> {
    let mut out = Vec::with_capacity(span.items.len());
    let mut originals = Vec::new();
    for &it in &span.items {
        let marked = t.marked_text(it as usize)?;
        let (text, reasoning) = match redactor {
            Some(r) => {
                let (text, reasoning) = redact_marked(r, &marked, counts);
                if text != marked.text {
                    originals.push(marked.text);
                }
                (text, reasoning)
            }
            None => (marked.text, marked.reasoning),
        };
        let mut p = piece(t, ledger, it, text);
        if p.role.is_some() {
            p.reasoning = reasoning;
        }
        out.push(p);
    }
    Ok((out, originals))
}

/// `marked`'s text redacted, its reasoning ranges moved with it: each reasoning range and each
/// stretch between them (whole lines) redacted on its own.
fn redact_marked(
    r: &Redactor,
    marked: &crate::transcript::format::common::Marked,
    counts: &mut Counts,
) -> (String, Vec<std::ops::Range<usize>>) {
    if marked.reasoning.is_empty() {
        return (r.redact(&marked.text, counts), Vec::new());
    }
    let (mut text, mut ranges, mut at) = (String::new(), Vec::new(), 0);
    for range in &marked.reasoning {
        text.push_str(&r.redact(&marked.text[at..range.start], counts));
        let start = text.len();
        text.push_str(&r.redact(&marked.text[range.clone()], counts));
        ranges.push(start..text.len());
        at = range.end;
    }
    text.push_str(&r.redact(&marked.text[at..], counts));
    (text, ranges)
}

/// The piece a summarizer (or the audit) reads for entry `it`, whose text is `text`: an mf
/// summary as its body under "summary of turns a–b", anything else under its role (a tool result
/// under its tool's name).
pub fn piece(t: &Transcript, ledger: &Ledger<'_>, it: crate::fold::Item, text: String) -> Piece {
    match ledger.kind(it) {
        ItemKind::Summary => {
            let s = &ledger.summaries[&it];
            Piece {
                turn: s.to_turn,
                author: format!("summary of turns {}–{}", s.from_turn, s.to_turn),
                role: None,
                reasoning: Vec::new(),
                text: frame::body(&text).to_string(),
            }
        }
        _ => {
            let e = &ledger.conv.entries[it as usize];
            Piece {
                turn: u64::from(ledger.turns[it as usize]),
                author: match (e.role, t.tool_name(it as usize)) {
                    (Role::Tool, Some(name)) => format!("tool:{name}"),
                    (role, _) => role.as_str().to_string(),
                },
                role: Some(e.role),
                reasoning: Vec::new(),
                text,
            }
        }
    }
}

/// The request for one span (with a note naming what a first summary left out, on a retry).
pub fn make_request(
    span: &Span,
    pieces: Vec<Piece>,
    rules: &Rules<'_>,
    retry_note: Option<&str>,
) -> fold::SummaryRequest {
    let policy = rules.policy;
    prompt::request(
        pieces,
        prompt::Ask {
            from_turn: span.from_turn,
            to_turn: span.to_turn,
            messages: span.leaf_count,
            span_chars: span.chars,
            target_tokens: span.summary_target_tokens(policy),
            max_output_tokens: policy.max_output_tokens,
            instruction: rules.instruction,
            nonce: &nonce(),
            retry_note,
            cite: None,
        },
    )
}

/// What an audit reads besides the span's pieces: the rest of what the summarizer could have
/// read or what the summary stands on (the verbatim preamble and tail; for a rollup, the
/// originals under the summaries it rolls up), and the transcript line of each piece (to cite
/// where the span says what a claim misstates).
#[derive(Debug, Clone, Default)]
pub struct AuditContext {
    pub verbatim: Arc<Vec<String>>,
    /// The original text of the span's entries a redactor changed.
    pub originals: Vec<String>,
    pub lines: Vec<u64>,
}

/// A reply's audit and, when it is to be declined, why.
pub type Audited = (audit::Audit, Option<audit::Faults>);

/// Audit a summary against its span; `Some(why)` when it is to be declined. A model's summary
/// (not the built-in one, which keeps every salient item by itself) gets mf's section of the
/// salient items it left out (`audit::appendix`), within a bounded share of its length: the
/// text to write is returned with the audit of it, which also reports the model's own
/// retention. What decides besides retention — inventions, superseded values, echoes,
/// forgeries — is the model's own text.
pub fn audit_reply(
    request: &fold::SummaryRequest,
    text: &str,
    rules: &AuditRules,
    builtin: bool,
    context: &AuditContext,
) -> (String, audit::Audit, Option<audit::Faults>) {
    if let Some(on) = rules.panic_on
        && request.pieces.iter().any(|p| p.text.contains(on))
    {
        panic!("fault injected by MF_DEBUG_PANIC_ON");
    }
    let lines = &context.lines;
    let context: Vec<&str> = context
        .verbatim
        .iter()
        .chain(&context.originals)
        .map(String::as_str)
        .collect();
    let judging = Judging {
        pieces: &request.pieces,
        context: &context,
        system: &request.system,
        rules,
        builtin,
    };
    let mut a = judging.audit(text);
    a.cite_lines(lines);
    // Within the summary's own length, or the length mf asked for when it wrote less.
    judging.judge(text, a, |own| {
        ((own as f64 * audit::APPENDIX_SHARE) as usize)
            .max(request.target_chars.saturating_sub(own))
    })
}

/// What a reply is judged against, alike for every strategy (a span's summary, a rollup, a
/// cited candidate): the pieces the model read, the rest of what its words may come from, the
/// request's instruction, the audit's rules, and whether the summarizer is the built-in one.
pub struct Judging<'a> {
    pub pieces: &'a [Piece],
    pub context: &'a [&'a str],
    pub system: &'a str,
    pub rules: &'a AuditRules,
    pub builtin: bool,
}

impl Judging<'_> {
    /// The audit of `text` against what it was judged against.
    pub fn audit(&self, text: &str) -> audit::Audit {
        audit::audit_with(
            self.pieces,
            self.context,
            text,
            self.system,
            &self.rules.options(),
        )
    }

    /// The judge, once for every strategy: a model's `text` (with `a`, the audit of it) gets
    /// mf's section of the salient items it left out, within `budget(its own length)`
    /// characters (the built-in summary keeps every salient item by itself); the text to
    /// write, the audit of it, and the verdict: `Some(faults)` when it is to be declined.
    pub fn judge(
        &self,
        text: &str,
        a: audit::Audit,
        budget: impl FnOnce(usize) -> usize,
    ) -> (String, audit::Audit, Option<audit::Faults>) {
        let (text, a) = if self.builtin {
            (text.to_string(), a)
        } else {
            let budget = budget(text.chars().count());
            with_appendix(
                self.pieces,
                self.context,
                text,
                self.system,
                &self.rules.options(),
                budget,
                a,
            )
        };
        let rules = self.rules;
        let verdict = a.verdict_allowing(rules.min_retention, rules.strict, rules.allow_inventions);
        (text, a, verdict)
    }
}

/// A model's `text` with mf's section of the salient items it left out (`audit::appendix`),
/// within `budget` characters, and the audit of what is written: `a` (the audit of the model's
/// own words) when nothing is added, else the audit of the whole, which reports the model's own
/// retention beside the final one. What decides besides retention — inventions, superseded
/// values, echoes, forgeries, instructions — stays the model's own text's. Shared by the
/// summary strategy, rollups and cited summaries.
fn with_appendix(
    pieces: &[Piece],
    context: &[&str],
    text: &str,
    system: &str,
    opts: &audit::AuditOptions,
    budget: usize,
    mut a: audit::Audit,
) -> (String, audit::Audit) {
    if a.missing_count == 0 {
        return (text.to_string(), a);
    }
    let (section, n) = audit::appendix(pieces, text, opts, budget);
    if n == 0 {
        return (text.to_string(), a);
    }
    let full = format!("{}\n\n{section}", text.trim_end());
    let mut f = audit::audit_with(pieces, context, &full, system, opts);
    f.model_retention = Some(a.retention);
    f.appended = n;
    f.inventions = std::mem::take(&mut a.inventions);
    f.superseded = std::mem::take(&mut a.superseded);
    f.misstated = std::mem::take(&mut a.misstated);
    f.echo = a.echo;
    f.echo_ratio = a.echo_ratio;
    f.forgeries = std::mem::take(&mut a.forgeries);
    f.instructions = std::mem::take(&mut a.instructions);
    (full, f)
}

/// The audit of a reply, on a thread of its own (audits of several chunks run side by side).
/// The request is handed over and back rather than copied: it holds the span's text.
async fn audit_apart(
    request: fold::SummaryRequest,
    text: &str,
    rules: AuditRules,
    builtin: bool,
    context: &Arc<AuditContext>,
) -> (
    fold::SummaryRequest,
    (String, audit::Audit, Option<audit::Faults>),
) {
    let (text, context) = (text.to_string(), Arc::clone(context));
    tokio::task::spawn_blocking(move || {
        let verdict = audit_reply(&request, &text, &rules, builtin, &context);
        (request, verdict)
    })
    .await
    .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

/// What a span's reply came to, judged once (vet → audit → verdict), for every strategy alike.
pub enum Judged {
    /// The call failed, or its reply was unusable (empty once cleaned): the span stays verbatim.
    Failed(SummarizerError),
    /// The audit declined the reply: its faults (secrets redacted), and the length of the text
    /// that was declined.
    Declined { faults: audit::Faults, chars: usize },
    /// The reply stands: its text vetted and scrubbed (the key in use, anything shaped like a
    /// secret; what was scrubbed is in [`Asked::scrubbed`]), and its usage.
    Kept { text: String, usage: Option<Usage> },
}

/// One span's call and what came of it: the reply judged (the retry's, when a lossy first reply
/// was asked again), its audit when it was usable, and every call made for it.
pub struct Asked {
    pub span: Span,
    pub judged: Judged,
    /// What the reply noted (a provider's own words about it), when there was a reply.
    pub notes: Vec<String>,
    /// The audit as the record carries it (secrets redacted), when there is one.
    pub audit_json: Option<serde_json::Value>,
    /// Per call: the usage reported and the request's estimated tokens (in, out).
    pub calls: Vec<(Option<Usage>, (u64, u64))>,
    /// Secrets taken out of the request.
    pub redacted: Counts,
    /// Secrets taken out of the kept text.
    pub scrubbed: Counts,
    /// An error that stops the file (from a retry; a first call's is in `judged`).
    pub stop: Option<SummarizerError>,
}

impl Asked {
    /// What the span's calls were billed in all.
    pub fn billed(&self) -> Usage {
        self.calls
            .iter()
            .filter_map(|c| c.0)
            .fold(Usage::default(), |s, u| Usage {
                input_tokens: s.input_tokens + u.input_tokens,
                output_tokens: s.output_tokens + u.output_tokens,
                tier: u.tier,
            })
    }

    /// Whether what came back cannot be written: the call failed, the reply is unusable, or the
    /// audit declined it.
    pub fn declined(&self) -> bool {
        match &self.judged {
            // A call waiting in a provider batch is not declined: the next pass answers it.
            Judged::Failed(e) => e.severity != crate::summarizer::Severity::Pending,
            Judged::Declined { .. } => true,
            Judged::Kept { .. } => false,
        }
    }

    /// The error that stops the whole file (a setup error: bad key, quota, nothing listening).
    pub fn stops(&self) -> Option<&SummarizerError> {
        match (&self.judged, &self.stop) {
            (Judged::Failed(e), _) | (_, Some(e)) if e.stops() => Some(e),
            _ => None,
        }
    }
}

/// The judge chain, once: a failed call or an unusable reply fails; a reply the audit declined
/// is declined with its faults (secrets redacted); else the vetted text, scrubbed, is kept.
fn judged(
    reply: Result<SummaryReply, SummarizerError>,
    audited: Option<Audited>,
    redactor: &Redactor,
    scrubbed: &mut Counts,
) -> Judged {
    let reply = match reply {
        Ok(r) => r,
        Err(e) => return Judged::Failed(e),
    };
    let vetted = match frame::vet(&reply.text) {
        Ok(v) => v,
        Err(e) => return Judged::Failed(SummarizerError::degrade(e)),
    };
    let (_, lossy) = audited.expect("a vetted reply is audited");
    match lossy {
        Some(why) => Judged::Declined {
            faults: why.map_texts(|s| redactor.redact(s, &mut Counts::new())),
            chars: reply.text.chars().count(),
        },
        // Secrets never reach the file: the key in use, and anything shaped like one.
        None => Judged::Kept {
            text: redactor.redact(&vetted, scrubbed),
            usage: reply.usage,
        },
    }
}

/// Build one span's request, ask, audit the reply, and ask once more naming what it left out
/// when it is lossy and `--retry-lossy` says so. Holds one of the -j permits throughout.
pub async fn ask_span(
    t: &Transcript,
    ledger: &Ledger<'_>,
    span: &Span,
    redactor: Option<&Redactor>,
    rules: &Rules<'_>,
    caller: Caller<'_>,
    context: &Arc<Vec<String>>,
) -> Result<Asked> {
    let _permit = caller
        .calls
        .acquire()
        .await
        .expect("the semaphore is never closed");
    ask_span_held(t, ledger, span, redactor, rules, caller, context).await
}

/// [`ask_span`] for a caller that already holds one of the -j permits (to decide, once its turn
/// has come, whether to ask at all).
pub async fn ask_span_held(
    t: &Transcript,
    ledger: &Ledger<'_>,
    span: &Span,
    redactor: Option<&Redactor>,
    rules: &Rules<'_>,
    caller: Caller<'_>,
    context: &Arc<Vec<String>>,
) -> Result<Asked> {
    let mut redacted = Counts::default();
    let (pieces, originals) = pieces_and_originals(t, ledger, span, redactor, &mut redacted)?;
    // What the request left out of the originals (secrets replaced) is still no invention.
    let context = &Arc::new(AuditContext {
        verbatim: Arc::clone(context),
        originals,
        lines: span
            .items
            .iter()
            .map(|&i| u64::from(t.entries[i as usize].line))
            .collect(),
    });
    let request = make_request(span, pieces, rules, None);
    let reply = call(caller, &request).await;
    let mut calls = vec![(paid(&reply), request.estimate())];
    let (reply, audited, stop) = match reply {
        Ok(first) if frame::vet(&first.text).is_ok() => {
            audit_and_retry(first, request, span, rules, caller, context, &mut calls).await
        }
        other => (other, None, None),
    };
    let notes = reply.as_ref().map(|r| r.notes.clone()).unwrap_or_default();
    let audit_json = audited
        .as_ref()
        .and_then(|(a, _)| caller.redactor.scrubbed_json(a));
    let mut scrubbed = Counts::default();
    let judged = judged(reply, audited, caller.redactor, &mut scrubbed);
    Ok(Asked {
        span: span.clone(),
        judged,
        notes,
        audit_json,
        calls,
        redacted,
        scrubbed,
        stop,
    })
}

/// A usable first reply audited (the reply as the model wrote it, before any defusing) and,
/// when it is lossy and `--retry-lossy` says so, asked once more naming what it left out: the
/// reply that stands (its text with mf's section of what it left out), its audit, and an error
/// from the retry that stops the file.
async fn audit_and_retry(
    mut first: SummaryReply,
    request: fold::SummaryRequest,
    span: &Span,
    rules: &Rules<'_>,
    caller: Caller<'_>,
    context: &Arc<AuditContext>,
    calls: &mut Vec<(Option<Usage>, (u64, u64))>,
) -> (
    Result<SummaryReply, SummarizerError>,
    Option<Audited>,
    Option<SummarizerError>,
) {
    let builtin = caller.builtin();
    let (request, (full, verdict, lossy)) =
        audit_apart(request, &first.text, rules.audit, builtin, context).await;
    let mut stop = None;
    if lossy.is_some() && rules.audit.retry_lossy {
        let note = verdict.retry_note();
        let retry = make_request(span, request.pieces, rules, Some(&note));
        let second = call(caller, &retry).await;
        calls.push((paid(&second), retry.estimate()));
        match second {
            Ok(mut second) if frame::vet(&second.text).is_ok() => {
                let (_, (full, a, why)) =
                    audit_apart(retry, &second.text, rules.audit, builtin, context).await;
                second.text = full;
                return (Ok(second), Some((a, why)), None);
            }
            Ok(_) => {}
            Err(e) if e.stops() => stop = Some(e),
            Err(_) => {}
        }
    }
    first.text = full;
    (Ok(first), Some((verdict, lossy)), stop)
}

/// What a call was paid for: the reply's usage, or a failed call's when the provider reported
/// one; a failure with no reply (refused, unreachable, interrupted) as nothing.
pub fn paid(reply: &Result<SummaryReply, SummarizerError>) -> Option<Usage> {
    match reply {
        Ok(r) => r.usage,
        Err(e) => Some(e.usage.unwrap_or_default()),
    }
}

/// One call to the summarizer, interruptible (the caller holds a permit).
async fn call(
    caller: Caller<'_>,
    request: &fold::SummaryRequest,
) -> Result<SummaryReply, SummarizerError> {
    tokio::select! {
        reply = caller.summarizer.summarize(request) => reply,
        _ = caller.interrupt.cancelled() => Err(SummarizerError::interrupted()),
    }
}

/// One call under a -j permit.
pub async fn ask(
    caller: Caller<'_>,
    request: &fold::SummaryRequest,
) -> Result<SummaryReply, SummarizerError> {
    let _permit = caller
        .calls
        .acquire()
        .await
        .expect("the semaphore is never closed");
    call(caller, request).await
}

/// Run futures concurrently, collecting their outputs in order.
pub async fn join_all<F: std::future::Future>(futs: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    let futs: Vec<_> = futs.into_iter().map(Box::pin).collect();
    let mut outs: Vec<Option<F::Output>> = futs.iter().map(|_| None).collect();
    let mut pending: Vec<(usize, std::pin::Pin<Box<F>>)> = futs.into_iter().enumerate().collect();
    std::future::poll_fn(|cx| {
        pending.retain_mut(|(i, f)| match f.as_mut().poll(cx) {
            std::task::Poll::Ready(v) => {
                outs[*i] = Some(v);
                false
            }
            std::task::Poll::Pending => true,
        });
        if pending.is_empty() {
            std::task::Poll::Ready(())
        } else {
            std::task::Poll::Pending
        }
    })
    .await;
    outs.into_iter()
        .map(|o| o.expect("every future finished"))
        .collect()
}

/// What calls cost: the part of the settings pricing reads.
#[derive(Debug, Clone, Copy)]
pub struct Costing<'a> {
    /// The built-in summarizer costs nothing.
    pub builtin: bool,
    /// The model's price bands, when known.
    pub pricing: Option<&'a crate::model::Pricing>,
    /// The model's tokens per mf estimate token (4 characters).
    pub token_ratio: f64,
    /// The tier calls are billed at when a call's usage does not say (an estimate).
    pub tier: crate::entry::Tier,
}

impl Costing<'_> {
    /// Estimated tokens in and out for one span's request, without reading its text.
    pub fn estimate(policy: &FoldPolicy, span: &Span, instruction: Option<&str>) -> (u64, u64) {
        let instruction = instruction
            .unwrap_or(prompt::DEFAULT_INSTRUCTION)
            .chars()
            .count();
        let chars =
            span.chars + span.items.len() * fold::plan::PIECE_OVERHEAD_CHARS + instruction + 700;
        let out = span.summary_target_tokens(policy);
        (crate::entry::estimate_tokens(chars) as u64, out as u64)
    }

    /// mf's estimate of a request (in 4-character tokens, in and out) in the model's own tokens.
    pub fn billed(&self, estimate: (u64, u64)) -> crate::model::Billed {
        let scale = |n: u64| (n as f64 * self.token_ratio).ceil() as u64;
        crate::model::Billed {
            input: scale(estimate.0),
            output: scale(estimate.1),
            ..crate::model::Billed::default()
        }
    }

    /// The cost of one call: from reported usage, else from mf's estimate; nothing for the
    /// built-in.
    pub fn cost_of(
        &self,
        estimate: (u64, u64),
        usage: Option<Usage>,
    ) -> Option<crate::decision::CostRecord> {
        use crate::decision::CostRecord;
        if self.builtin {
            return Some(CostRecord {
                usd: 0.0,
                estimated: false,
            });
        }
        let pricing = self.pricing?;
        Some(match usage {
            // The provider's counts, in the band of the request's real size.
            // The provider's counts, at the tier the call ran at.
            Some(u) => CostRecord {
                usd: pricing.usd(crate::model::Billed {
                    input: u.input_tokens,
                    output: u.output_tokens,
                    ..crate::model::Billed::default()
                }) * u.tier.price_factor(),
                estimated: false,
            },
            None => CostRecord {
                usd: pricing.usd(self.billed(estimate)) * self.tier.price_factor(),
                estimated: true,
            },
        })
    }
}
