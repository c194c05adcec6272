//! `mf compact`: open the file for appending (so nothing is paid for that cannot be written) →
//! lock it → read → plan → one summarizer call per span, concurrently → vet, scrub, audit and
//! judge each summary → append under the lock, checked at that instant → record.

mod cited;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::sync::Semaphore;

use crate::decision::{
    Action, CostRecord, DecisionRecord, Size, SpanRecord, SummaryRecord, UsageRecord,
};
use crate::entry::{DeclineReason, DeclinedSpan, Draft, RecordKind, Role, Usage, estimate_tokens};
use crate::error::MfError;
use crate::fold::summary::{StubInfo, Verdict};
use crate::fold::{
    self, Decision, Item, ItemKind, Ledger, Piece, Plan, Span, audit, prompt, summary,
};
use crate::http::HttpClient;
use crate::interrupt::Interrupt;
use crate::model::{self, Billed};
use crate::redact::{Counts, Redactor};
use crate::render::Ui;
use crate::settings::{CompactSettings, ModelChoice};
use crate::summarizer::{Extractive, Remote, Severity, Summarizer, SummarizerError, SummaryReply};
use crate::transcript::{self, Locked, OutputTarget, Tail, Transcript, TranscriptError};

/// What one compact run needs besides the settings.
pub struct Compaction {
    pub summarizer: Arc<dyn Summarizer>,
    /// Milliseconds since the Unix epoch, for `summarizedAtMs` and record times.
    pub now_ms: fn() -> u64,
    pub ui: Ui,
    pub interrupt: Interrupt,
    /// Bounds the summarizer calls in flight across all files (`-j`).
    pub calls: Arc<Semaphore>,
    /// Finds secrets (with the key in use).
    pub redactor: Redactor,
}

impl Compaction {
    /// A context for driving the pipeline in-process: no signal handlers, one call at a time.
    pub fn in_process(summarizer: Arc<dyn Summarizer>, now_ms: fn() -> u64, ui: Ui) -> Self {
        Compaction {
            summarizer,
            now_ms,
            ui,
            interrupt: Interrupt::inert(),
            calls: Arc::new(Semaphore::new(4)),
            redactor: Redactor::default(),
        }
    }
}

pub fn system_now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A fresh nonce for one request's delimiters.
fn nonce() -> String {
    format!("{:08x}", fastrand::u32(..))
}

/// The summarizer the settings name.
pub fn summarizer_for(settings: &CompactSettings, ui: Ui) -> Result<Arc<dyn Summarizer>> {
    if let Some(w) = &settings.model_warning {
        ui.warn(w);
    }
    Ok(match &settings.model {
        ModelChoice::Extractive => Arc::new(Extractive),
        ModelChoice::Remote(config) => {
            let mut client =
                HttpClient::new(settings.http.clone()).context("cannot set up the HTTP client")?;
            if ui.verbose() {
                client = client
                    .with_log(
                        Arc::new(move |line: &str| ui.log(line)),
                        settings.debug_bodies,
                    )
                    .with_detail(ui.very_verbose());
            }
            Arc::new(Remote::new(
                (**config).clone(),
                client,
                Arc::new(move |line: &str| ui.warn(line)),
            ))
        }
    })
}

/// Read a transcript for a read-only look (`--dry-run`, `--max-cost`, `-o`).
fn read_only(path: &Path, settings: &CompactSettings) -> Result<Transcript, TranscriptError> {
    transcript::read(path, &settings.read)
}

/// `--max-cost`: plan every file first and refuse before the first call if the estimated total
/// is over the limit.
fn check_max_cost(settings: &CompactSettings, model: &str) -> Result<()> {
    let Some(max) = settings.max_cost else {
        return Ok(());
    };
    let Some(pricing) = &settings.pricing else {
        return Err(MfError::refused(
            format!("no price is known for `{model}`, so `--max-cost` cannot be checked"),
            Some("pass --price-in and --price-out (USD per million tokens)".into()),
        )
        .into());
    };
    let (mut total, mut calls) = (0.0, 0usize);
    for file in &settings.files {
        let Ok(t) = read_only(file, settings) else {
            continue;
        };
        let ledger = ledger_for(&t, settings);
        if let Decision::Fold(plan) = fold::plan(&ledger, &settings.policy, model) {
            for span in &plan.spans {
                let (i, o) = estimate_request(&ledger, &settings.policy, span, settings);
                total += pricing.usd(billed(settings, (i, o)));
                calls += 1;
            }
        }
    }
    if total > max {
        return Err(MfError::refused(
            format!(
                "the estimated cost of {calls} call{} is ${}, over `--max-cost {max}`; nothing was called",
                if calls == 1 { "" } else { "s" },
                crate::render::usd(total)
            ),
            Some("raise --max-cost, or use --dry-run to see the estimate per file".into()),
        )
        .into());
    }
    Ok(())
}

/// Estimated tokens in and out for one span's request, without reading its text.
fn estimate_request(
    ledger: &Ledger<'_>,
    policy: &fold::FoldPolicy,
    span: &Span,
    settings: &CompactSettings,
) -> (u64, u64) {
    let instruction = settings
        .instruction
        .as_deref()
        .unwrap_or(prompt::DEFAULT_INSTRUCTION)
        .chars()
        .count();
    let chars =
        span.chars + span.items.len() * fold::plan::PIECE_OVERHEAD_CHARS + instruction + 700;
    let _ = ledger;
    let out = span.summary_target_tokens(policy);
    (estimate_tokens(chars) as u64, out as u64)
}

/// Compact every file (at most `jobs` at once). Returns one result per file, in order.
pub async fn run(
    settings: &CompactSettings,
    ctx: Arc<Compaction>,
) -> Result<Vec<Result<DecisionRecord>>> {
    if !settings.dry_run {
        check_max_cost(settings, ctx.summarizer.model())?;
    }
    let bar = ctx.ui.files_bar(settings.files.len());
    let gate = Arc::new(Semaphore::new(settings.jobs));
    let mut set = tokio::task::JoinSet::new();
    let mut tasks = std::collections::HashMap::new();
    for (i, file) in settings.files.iter().enumerate() {
        // What the file held before, to say after a panic whether it changed.
        let before = std::fs::metadata(file).ok().map(|m| m.len());
        let (ctx, gate, settings, file, bar) = (
            ctx.clone(),
            gate.clone(),
            settings.clone(),
            file.clone(),
            bar.clone(),
        );
        let handle = set.spawn(async move {
            let _permit = gate
                .acquire_owned()
                .await
                .expect("the semaphore is never closed");
            if ctx.interrupt.received().is_some() {
                return (i, Err(MfError::Interrupted.into()));
            }
            bar.set_message(file.display().to_string());
            let out = compact_file(&file, &settings, &ctx).await;
            bar.inc(1);
            (i, out)
        });
        tasks.insert(handle.id(), (i, before));
    }
    let mut results: Vec<Option<Result<DecisionRecord>>> =
        (0..settings.files.len()).map(|_| None).collect();
    while let Some(joined) = set.join_next_with_id().await {
        match joined {
            Ok((_, (i, out))) => results[i] = Some(out),
            // A bug in one file's work is that file's error record; the others go on.
            Err(e) if e.is_panic() => {
                let (i, before) = tasks[&e.id()];
                let file = &settings.files[i];
                let payload = e.into_panic();
                results[i] = Some(Err(panicked(file, before, payload.as_ref()).into()));
            }
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
    bar.finish_and_clear();
    Ok(results
        .into_iter()
        .map(|r| r.expect("every file reports"))
        .collect())
}

/// The error record of a file whose work panicked, saying whether the file changed.
fn panicked(file: &Path, before: Option<u64>, payload: &(dyn std::any::Any + Send)) -> MfError {
    let shown = file.display();
    let now = std::fs::metadata(file).ok().map(|m| m.len());
    let hint = match (before, now) {
        (Some(b), Some(n)) if n == b => format!(
            "`{shown}` is unchanged; include the command line (and the file, if you can share it) in the report"
        ),
        _ => format!("`{shown}` changed while mf worked on it: run `mf verify {shown}`"),
    };
    crate::error::internal(payload, format!("compacting `{shown}`"), Some(hint))
}

/// The billing law: the summarizer must not be the model that wrote the conversation, unless
/// the user says so.
fn check_same_model(t: &Transcript, settings: &CompactSettings) -> Result<()> {
    let ModelChoice::Remote(remote) = &settings.model else {
        return Ok(());
    };
    if settings.allow_same_model {
        return Ok(());
    }
    for agent in t.agent_models.iter().chain(settings.agent_model.iter()) {
        if model::same_model(agent, &remote.model.id) {
            return Err(MfError::refused(
                format!(
                    "`{}` is the model that wrote `{}` (`{agent}`): summarizing with it bills compression at the main model's price",
                    remote.model.label(),
                    t.display()
                ),
                Some("name a cheaper summarizer with --model, or pass --allow-same-model to do it anyway".into()),
            )
            .into());
        }
    }
    Ok(())
}

/// Wait for the file's lock without blocking the runtime, so a signal still lands.
async fn wait_lock(h: &Locked, ctx: &Compaction) -> Result<()> {
    let mut said = false;
    loop {
        if h.try_lock()? {
            return Ok(());
        }
        if !said {
            ctx.ui.note(&format!(
                "waiting for the lock on `{}` (another mf is working on it)",
                h.path().display()
            ));
            said = true;
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(25)) => {}
            _ = ctx.interrupt.cancelled() => return Err(MfError::Interrupted.into()),
        }
    }
}

/// Where the lines of a file go.
struct Sink<'a> {
    /// In place: the file, opened for appending and locked.
    handle: Option<Locked>,
    output: Option<&'a OutputTarget>,
}

/// Compact one file.
pub async fn compact_file(
    path: &Path,
    settings: &CompactSettings,
    ctx: &Compaction,
) -> Result<DecisionRecord> {
    let model = ctx.summarizer.model().to_string();
    let output = settings.output_for(path);
    let in_place = !settings.dry_run && output.is_none();
    // Open for appending first: a file mf could not write is refused before anything is paid.
    let handle = if in_place {
        let h = transcript::open_for_append(path)?;
        wait_lock(&h, ctx).await?;
        Some(h)
    } else {
        None
    };
    let t = match &handle {
        Some(h) => {
            // Another program may be writing its last line right now (agents write a line in
            // several `write()` calls): wait a moment for it to end before judging the tail.
            let mut t = h.read(&settings.read)?;
            let deadline = std::time::Instant::now() + settings.tail_wait;
            while matches!(t.tail, Tail::Torn { mf: false, .. })
                && std::time::Instant::now() < deadline
            {
                tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                if h.file().metadata().is_ok_and(|m| m.len() != t.len) {
                    t = h.read(&settings.read)?;
                }
            }
            t
        }
        None => read_only(path, settings)?,
    };
    super::recall::log_read(&ctx.ui, &t);
    // A mask calls no model: the record names none.
    let summarizes = settings.policy.strategy.summarizes();
    let mut r = DecisionRecord::new(&t.display(), summarizes.then_some(model.as_str()));
    r.format = Some(t.format.name().to_string());
    if let Some(h) = &handle
        && t.format.is_agent()
        && !settings.force
    {
        settings.live.check(&t, h.file())?;
    }
    t.check_tail()?;
    check_same_model(&t, settings)?;
    let mut sink = Sink {
        handle,
        output: output.as_ref(),
    };
    let ledger = Ledger::new(t.conversation());
    r.before = Size::of(ledger.view_chars());
    r.after = r.before;

    let policy = &settings.policy;
    if policy.strategy.masks() {
        let lines = mask(&t, &ledger, settings, ctx, &mut r)?;
        if !policy.strategy.summarizes() || settings.dry_run {
            if !policy.strategy.summarizes() {
                write(&t, &mut sink, &lines, settings, ctx, &mut r, None)?;
                return Ok(r);
            }
        } else if !lines.is_empty() {
            write(&t, &mut sink, &lines, settings, ctx, &mut r, None)?;
            // Plan the summary on the file as it now is.
            let t2 = reread(&t, &sink, settings)?;
            return summarize_file(t2, sink, settings, ctx, r, &model).await;
        }
    }
    summarize_file(t, sink, settings, ctx, r, &model).await
}

/// The file again, after mf's own append (in place), or as it was (a copy).
fn reread(t: &Transcript, sink: &Sink<'_>, settings: &CompactSettings) -> Result<Transcript> {
    match &sink.handle {
        Some(h) => Ok(h.read(&settings.read)?),
        None => Ok(read_only(&t.path, settings)?),
    }
}

/// `--strategy mask`: stubs for old tool results, no call.
fn mask(
    t: &Transcript,
    ledger: &Ledger<'_>,
    settings: &CompactSettings,
    ctx: &Compaction,
    r: &mut DecisionRecord,
) -> Result<Vec<String>> {
    let results = match fold::plan_mask(ledger, &settings.policy) {
        Ok(v) => v,
        Err(reason) => {
            r.reason = reason.describe();
            return Ok(Vec::new());
        }
    };
    let now = (ctx.now_ms)();
    let mut drafts: Vec<Draft> = Vec::new();
    let mut saved = 0usize;
    let mut taken: Vec<String> = Vec::new();
    for it in results {
        let span = Span::of(ledger, vec![it]);
        let text = t.text(it as usize)?;
        let info = StubInfo {
            tool: t.tool_name(it as usize),
            chars: text.chars().count(),
            first_line: text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .to_string(),
        };
        let base = format!("msg-stub-{}", ledger.conv.entries[it as usize].line);
        let id = summary::fresh_id(&base, |id| t.has_id(id) || taken.iter().any(|x| x == id));
        taken.push(id.clone());
        let d = summary::stub(
            &span,
            id.clone(),
            &info,
            &t.display(),
            settings.policy.keep_tool_results,
            now,
        );
        saved += info.chars.saturating_sub(d.chars());
        r.summaries.push(SummaryRecord {
            id,
            from_turn: span.from_turn,
            to_turn: span.to_turn,
            entry_count: 1,
            chars: d.chars(),
            tokens: estimate_tokens(d.chars()),
            audit: None,
            outcome: if settings.dry_run {
                "planned"
            } else {
                "written"
            }
            .into(),
            ..SummaryRecord::default()
        });
        drafts.push(d);
    }
    r.action = if settings.dry_run {
        Action::Planned
    } else {
        Action::Masked
    };
    r.reason = format!(
        "{} {} old tool result{} with stubs (no model call); those in the verbatim tail and the {} most recent stay verbatim",
        if settings.dry_run {
            "would replace"
        } else {
            "replaced"
        },
        drafts.len(),
        if drafts.len() == 1 { "" } else { "s" },
        settings.policy.keep_tool_results
    );
    r.after = Size::of(r.after.chars.saturating_sub(saved));
    let stubs: Vec<(Item, usize)> = drafts
        .iter()
        .enumerate()
        .map(|(k, d)| (d.stub_of.expect("a stub stands for one entry"), k))
        .collect();
    let lines = lines_for(t, ledger, &drafts, &[], &stubs, &[], now)?;
    if settings.dry_run {
        return Ok(Vec::new());
    }
    Ok(lines)
}

/// The lines for a write, and for an agent's session what makes it show mf's recall after the
/// write. A view the agent cannot show is refused here, before anything is appended.
fn lines_for(
    t: &Transcript,
    ledger: &Ledger<'_>,
    drafts: &[Draft],
    folds: &[(Vec<Item>, usize)],
    stubs: &[(Item, usize)],
    records: &[(RecordKind, u64)],
    now: u64,
) -> Result<Vec<String>> {
    let changes_view = !drafts.is_empty();
    let shown = (t.format.is_agent() && changes_view).then(|| ledger.next_view(folds, stubs, None));
    Ok(t.lines_for(&transcript::Write {
        drafts,
        records,
        shown: shown.as_deref(),
        now_ms: now,
        tokens_before: estimate_tokens(ledger.view_chars()) as u64,
    })?)
}

/// Refuse, before anything is paid, a plan whose result the agent could not be shown.
fn check_expressible(t: &Transcript, ledger: &Ledger<'_>, plan: &Plan) -> Result<()> {
    if !t.format.is_agent() {
        return Ok(());
    }
    let drafts: Vec<Draft> = plan
        .spans
        .iter()
        .map(|span| summary::draft(span, String::new(), "", "", None, 0, None, Vec::new()))
        .collect();
    let folds: Vec<(Vec<Item>, usize)> = plan
        .spans
        .iter()
        .enumerate()
        .map(|(k, s)| (s.items.clone(), k))
        .collect();
    lines_for(t, ledger, &drafts, &folds, &[], &[], 0).map(|_| ())
}

/// The pieces a summarizer reads for a span, secrets replaced when the span leaves the machine.
fn pieces_of(
    t: &Transcript,
    ledger: &Ledger<'_>,
    span: &Span,
    redactor: Option<&Redactor>,
    counts: &mut Counts,
) -> Result<Vec<Piece>> {
    let mut out = Vec::with_capacity(span.items.len());
    for &it in &span.items {
        let e = &ledger.conv.entries[it as usize];
        let mut text = t.text(it as usize)?;
        if let Some(r) = redactor {
            text = r.redact(&text, counts);
        }
        out.push(match ledger.kind(it) {
            ItemKind::Summary => {
                let s = &ledger.summaries[&it];
                Piece {
                    turn: s.to_turn,
                    author: format!("summary of turns {}–{}", s.from_turn, s.to_turn),
                    role: None,
                    text: summary::body(&text).to_string(),
                }
            }
            _ => Piece {
                turn: u64::from(ledger.turns[it as usize]),
                author: match (e.role, t.tool_name(it as usize)) {
                    (Role::Tool, Some(name)) => format!("tool:{name}"),
                    (role, _) => role.as_str().to_string(),
                },
                role: Some(e.role),
                text,
            },
        });
    }
    Ok(out)
}

/// The request for one span (with a note naming what a first summary left out, on a retry).
fn make_request(
    span: &Span,
    pieces: Vec<Piece>,
    settings: &CompactSettings,
    retry_note: Option<&str>,
) -> fold::SummaryRequest {
    let policy = &settings.policy;
    prompt::request(
        pieces,
        prompt::Ask {
            from_turn: span.from_turn,
            to_turn: span.to_turn,
            messages: span.leaf_count,
            span_chars: span.chars,
            target_tokens: span.summary_target_tokens(policy),
            max_output_tokens: policy.max_output_tokens,
            instruction: settings.instruction.as_deref(),
            nonce: &nonce(),
            retry_note,
            cite: None,
        },
    )
}

/// Audit a summary against its span; `Some(why)` when it is to be declined. A model's summary
/// (not the built-in one, which keeps every salient item by itself) gets mf's section of the
/// salient items it left out (`audit::appendix`), within a bounded share of its length: the
/// text to write is returned with the audit of it, which also reports the model's own
/// retention. What decides besides retention — inventions, superseded values, echoes,
/// forgeries — is the model's own text.
fn audit_reply(
    request: &fold::SummaryRequest,
    text: &str,
    settings: &CompactSettings,
    builtin: bool,
    context: &[String],
) -> (String, audit::Audit, Option<String>) {
    if let Some(on) = crate::settings::debug_panic_on()
        && request.pieces.iter().any(|p| p.text.contains(on))
    {
        panic!("fault injected by MF_DEBUG_PANIC_ON");
    }
    let opts = audit::AuditOptions {
        count_tool_results: settings.audit.count_tool_results,
        max_listed: 20,
    };
    let context: Vec<&str> = context.iter().map(String::as_str).collect();
    let mut a = audit::audit_with(&request.pieces, &context, text, &request.system, &opts);
    let mut text = text.to_string();
    if !builtin && a.missing_count > 0 {
        // Within the summary's own length, or the length mf asked for when it wrote less.
        let own = text.chars().count();
        let budget = ((own as f64 * audit::APPENDIX_SHARE) as usize)
            .max(request.target_chars.saturating_sub(own));
        let (section, n) = audit::appendix(&request.pieces, &text, &opts, budget);
        if n > 0 {
            let full = format!("{}\n\n{section}", text.trim_end());
            let mut f = audit::audit_with(&request.pieces, &context, &full, &request.system, &opts);
            f.model_retention = Some(a.retention);
            f.appended = n;
            f.inventions = std::mem::take(&mut a.inventions);
            f.superseded = std::mem::take(&mut a.superseded);
            f.echo = a.echo;
            f.echo_ratio = a.echo_ratio;
            f.forgeries = std::mem::take(&mut a.forgeries);
            f.instructions = std::mem::take(&mut a.instructions);
            a = f;
            text = full;
        }
    }
    let verdict = a.verdict(settings.audit.min_retention, settings.audit.strict);
    (text, a, verdict)
}

/// The audit of a reply, on a thread of its own (audits of several chunks run side by side).
/// The request is handed over and back rather than copied: it holds the span's text.
async fn audit_apart(
    request: fold::SummaryRequest,
    text: &str,
    settings: &CompactSettings,
    builtin: bool,
    context: &Arc<Vec<String>>,
) -> (fold::SummaryRequest, (String, audit::Audit, Option<String>)) {
    let (text, settings, context) = (text.to_string(), settings.clone(), Arc::clone(context));
    tokio::task::spawn_blocking(move || {
        let verdict = audit_reply(&request, &text, &settings, builtin, &context);
        (request, verdict)
    })
    .await
    .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

/// One span's call and what came of it: the reply (the retry's, when a lossy first reply was
/// asked again), its audit when it was usable, and every call made for it.
struct Asked {
    span: Span,
    reply: Result<SummaryReply, SummarizerError>,
    audit: Option<(audit::Audit, Option<String>)>,
    /// Per call: the usage reported and the request's estimated tokens (in, out).
    calls: Vec<(Option<Usage>, (u64, u64))>,
    redacted: Counts,
    /// An error that stops the file (from a retry; a first call's is in `reply`).
    stop: Option<SummarizerError>,
}

/// Build one span's request, ask, audit the reply, and ask once more naming what it left out
/// when it is lossy and `--retry-lossy` says so. Holds one of the -j permits throughout.
async fn ask_span(
    t: &Transcript,
    ledger: &Ledger<'_>,
    span: &Span,
    redactor: Option<&Redactor>,
    settings: &CompactSettings,
    ctx: &Compaction,
    context: &Arc<Vec<String>>,
) -> Result<Asked> {
    let _permit = ctx
        .calls
        .acquire()
        .await
        .expect("the semaphore is never closed");
    let mut redacted = Counts::default();
    let pieces = pieces_of(t, ledger, span, redactor, &mut redacted)?;
    let request = make_request(span, pieces, settings, None);
    let reply = call(ctx, &request).await;
    let mut asked = Asked {
        span: span.clone(),
        calls: vec![(paid(&reply), request.estimate())],
        audit: None,
        reply,
        redacted,
        stop: None,
    };
    let Ok(first) = &asked.reply else {
        return Ok(asked);
    };
    if summary::vet(&first.text).is_err() {
        return Ok(asked);
    }
    // The audit reads the reply as the model wrote it (before any defusing).
    let builtin = ctx.summarizer.model() == crate::summarizer::extractive::NAME;
    let (request, (full, verdict, lossy)) =
        audit_apart(request, &first.text, settings, builtin, context).await;
    if lossy.is_some() && settings.audit.retry_lossy {
        let note = verdict.retry_note();
        let retry = make_request(span, request.pieces, settings, Some(&note));
        let second = call(ctx, &retry).await;
        asked.calls.push((paid(&second), retry.estimate()));
        match second {
            Ok(mut second) if summary::vet(&second.text).is_ok() => {
                let (_, (full, a, why)) =
                    audit_apart(retry, &second.text, settings, builtin, context).await;
                second.text = full;
                asked.audit = Some((a, why));
                asked.reply = Ok(second);
                return Ok(asked);
            }
            Ok(_) => {}
            Err(e) if e.stops() => asked.stop = Some(e),
            Err(_) => {}
        }
    }
    if let Ok(r) = &mut asked.reply {
        r.text = full;
    }
    asked.audit = Some((verdict, lossy));
    Ok(asked)
}

/// What a call was paid for: the reply's usage, or a failed call's when the provider reported
/// one; a failure with no reply (refused, unreachable, interrupted) as nothing.
pub(crate) fn paid(reply: &Result<SummaryReply, SummarizerError>) -> Option<Usage> {
    match reply {
        Ok(r) => r.usage,
        Err(e) => Some(e.usage.unwrap_or_default()),
    }
}

/// One call to the summarizer, interruptible (the caller holds a permit).
async fn call(
    ctx: &Compaction,
    request: &fold::SummaryRequest,
) -> Result<SummaryReply, SummarizerError> {
    tokio::select! {
        reply = ctx.summarizer.summarize(request) => reply,
        _ = ctx.interrupt.cancelled() => Err(SummarizerError::interrupted()),
    }
}

async fn ask(
    ctx: &Compaction,
    request: &fold::SummaryRequest,
) -> Result<SummaryReply, SummarizerError> {
    let _permit = ctx
        .calls
        .acquire()
        .await
        .expect("the semaphore is never closed");
    call(ctx, request).await
}

async fn summarize_file(
    t: Transcript,
    mut sink: Sink<'_>,
    settings: &CompactSettings,
    ctx: &Compaction,
    mut r: DecisionRecord,
    model: &str,
) -> Result<DecisionRecord> {
    let ledger = ledger_for(&t, settings);
    let policy = &settings.policy;
    let id_of = |i: Item| t.id_string(i as usize);
    let plan = match fold::plan(&ledger, policy, model) {
        Decision::Skip(skip) => {
            if r.action != Action::Masked {
                r.action = Action::Skipped;
                r.reason = skip.reason.describe();
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
        r.notes.push(format!(
            "--strategy cited: the span is offered; only what the summaries cite folds, and rejected summaries are sent back for correction (at most {} calls per fold; the estimate is for the first)",
            fold::cite::MAX_CALLS
        ));
    }
    if settings.dry_run {
        dry_run(&t, &ledger, &plan, settings, ctx, &mut r).await?;
        return Ok(r);
    }
    if policy.strategy == fold::Strategy::Cited {
        return cited::fold(&t, &ledger, plan, sink, settings, ctx, r, model).await;
    }

    // One call per span, at most -j at once. Each span's request is built only when its turn
    // comes and dropped once its reply is audited, so that what is held at once is -j requests,
    // not the whole span; secrets are taken out of anything that leaves the machine.
    let redactor = settings.redact.then_some(&ctx.redactor);
    let spinner = if settings.files.len() == 1 {
        ctx.ui.spinner(format!(
            "{}: summarizing turns {}–{} with {model}{}",
            t.display(),
            plan.whole.from_turn,
            plan.whole.to_turn,
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
    let (t_ref, ledger_ref, context_ref) = (&t, &ledger, &context);
    let asked: Vec<Result<Asked>> = futures_join(plan.spans.iter().map(|span| async move {
        ask_span(
            t_ref,
            ledger_ref,
            span,
            redactor,
            settings,
            ctx,
            context_ref,
        )
        .await
    }))
    .await;
    spinner.finish_and_clear();
    let asked: Vec<Asked> = asked.into_iter().collect::<Result<_>>()?;
    for a in &asked {
        r.calls += a.calls.len();
        for (k, n) in &a.redacted {
            *r.redacted.entry(k).or_default() += n;
        }
    }
    if ctx.interrupt.received().is_some() {
        return Err(MfError::Interrupted.into());
    }
    // A setup error (bad key, quota, nothing listening) stops the file: nothing is written.
    if let Some(e) = asked.iter().find_map(|a| match (&a.reply, &a.stop) {
        (Err(e), _) | (_, Some(e)) if e.stops() => Some(e.clone()),
        _ => None,
    }) {
        return Err(e.into());
    }
    let now = (ctx.now_ms)();
    let mut lines: Vec<String> = Vec::new();
    let mut drafts: Vec<Draft> = Vec::new();
    let mut folds: Vec<(Vec<Item>, usize)> = Vec::new();
    let mut declines: Vec<(DeclineReason, Span, Option<usize>, String)> = Vec::new();
    let mut written_chars = (0usize, 0usize); // (span chars folded, summary chars written)
    let mut written_spans: Vec<Span> = Vec::new();
    let mut taken: Vec<String> = Vec::new();
    // What each span's calls were billed, for its decline record if it is declined.
    let mut spent: Vec<(String, Usage)> = Vec::new();
    for a in asked {
        for &(usage, estimate) in &a.calls {
            add_usage_est(&mut r, usage, settings, estimate);
        }
        let billed = a
            .calls
            .iter()
            .filter_map(|c| c.0)
            .fold(Usage::default(), |s, u| Usage {
                input_tokens: s.input_tokens + u.input_tokens,
                output_tokens: s.output_tokens + u.output_tokens,
            });
        spent.push((a.span.digest.clone(), billed));
        if let Ok(reply) = &a.reply {
            r.notes.extend(
                reply
                    .notes
                    .iter()
                    .map(|n| format!("turns {}–{}: {n}", a.span.from_turn, a.span.to_turn)),
            );
        }
        let reply = match a.reply.and_then(|rep| {
            summary::vet(&rep.text)
                .map(|_| rep)
                .map_err(SummarizerError::degrade)
        }) {
            Ok(reply) => reply,
            Err(e) => {
                let usage = e.usage.unwrap_or_default();
                r.failures.push(crate::decision::FailureRecord {
                    from_turn: a.span.from_turn,
                    to_turn: a.span.to_turn,
                    reason: e.reason,
                    message: e.message.clone(),
                    usage: e.usage.map(Into::into),
                    cost: cost_of(settings, (0, 0), Some(usage)),
                });
                ctx.ui.warn(&format!(
                    "{}: the summarizer failed, turns {}–{} stay verbatim: {}",
                    t.display(),
                    a.span.from_turn,
                    a.span.to_turn,
                    e.message
                ));
                r.degraded = true;
                declines.push((DeclineReason::SummarizerFailed, a.span, None, e.message));
                continue;
            }
        };
        let (verdict_audit, lossy) = a.audit.expect("a vetted reply was audited");
        let audit_json = scrubbed_json(&verdict_audit, &ctx.redactor);
        let lossy = lossy.map(|why| ctx.redactor.redact(&why, &mut Counts::new()));
        if let Some(why) = lossy {
            r.summaries.push(SummaryRecord {
                id: String::new(),
                from_turn: a.span.from_turn,
                to_turn: a.span.to_turn,
                entry_count: a.span.items.len(),
                chars: reply.text.chars().count(),
                tokens: estimate_tokens(reply.text.chars().count()),
                audit: audit_json,
                outcome: format!("declined as lossy: {why}"),
                ..SummaryRecord::default()
            });
            declines.push((
                DeclineReason::Lossy,
                a.span,
                Some(reply.text.chars().count()),
                why,
            ));
            continue;
        }
        let vetted = summary::vet(&reply.text).expect("vetted above");
        // Secrets never reach the file: the key in use, and anything shaped like one.
        let text = ctx.redactor.redact(&vetted, &mut r.scrubbed);
        let id = summary::summary_id(a.span.from_turn, a.span.to_turn, |id| {
            t.has_id(id) || taken.iter().any(|x| x == id)
        });
        let extra = audit_json
            .as_ref()
            .map(|j| vec![("audit", j.to_string())])
            .unwrap_or_default();
        let d = summary::draft(
            &a.span,
            id.clone(),
            model,
            &text,
            reply.usage,
            now,
            plan.tail_line,
            extra,
        );
        let mut rec = SummaryRecord {
            id: id.clone(),
            from_turn: a.span.from_turn,
            to_turn: a.span.to_turn,
            entry_count: a.span.items.len(),
            chars: d.chars(),
            tokens: estimate_tokens(d.chars()),
            audit: audit_json,
            outcome: "written".into(),
            ..SummaryRecord::default()
        };
        match summary::judge(&a.span, &d) {
            Verdict::NotSmaller {
                span_chars,
                summary_chars,
            } => {
                let detail = format!(
                    "label and summary would be {summary_chars} chars, not shorter than the {span_chars} chars they replace"
                );
                rec.outcome = format!("declined: {detail}");
                declines.push((
                    DeclineReason::NotSmaller,
                    a.span,
                    Some(summary_chars),
                    detail,
                ));
            }
            Verdict::Smaller {
                span_chars,
                summary_chars,
            } => {
                taken.push(id);
                written_chars.0 += span_chars;
                written_chars.1 += summary_chars;
                folds.push((a.span.items.clone(), drafts.len()));
                drafts.push(d);
                written_spans.push(a.span);
            }
        }
        r.summaries.push(rec);
    }
    // A fold that would save under a tenth of the view is not worth its lines: the view stays.
    let saved = written_chars.0.saturating_sub(written_chars.1);
    if !drafts.is_empty() && saved * 100 < plan.view_chars * MIN_SAVING_PCT {
        let detail = format!(
            "the fold would save {saved} of the view's {} chars, under {MIN_SAVING_PCT}%",
            plan.view_chars
        );
        for (span, d) in written_spans.drain(..).zip(drafts.drain(..)) {
            if let Some(rec) = r.summaries.iter_mut().find(|s| s.id == d.id) {
                rec.outcome = format!("declined: {detail}");
            }
            declines.push((
                DeclineReason::NotSmaller,
                span,
                Some(d.chars()),
                detail.clone(),
            ));
        }
        folds.clear();
        written_chars = (0, 0);
    }
    let records = decline_records(
        &ledger,
        model,
        now,
        declines
            .iter()
            .map(|(reason, span, chars, detail)| (*reason, span, *chars, short(detail, 200))),
    );
    let records: Vec<(RecordKind, u64)> = records
        .into_iter()
        .map(|(mut k, at)| {
            if let RecordKind::Decline {
                span: DeclinedSpan::Ref(s),
                usage,
                ..
            } = &mut k
            {
                *usage = spent
                    .iter()
                    .find(|(d, _)| *d == s.digest)
                    .map(|(_, u)| *u)
                    .filter(|u| u.input_tokens + u.output_tokens > 0);
            }
            (k, at)
        })
        .collect();
    lines.extend(lines_for(&t, &ledger, &drafts, &folds, &[], &records, now)?);
    let folded = drafts.len();
    if folded > 0 {
        r.action = Action::Folded;
        let from = drafts
            .iter()
            .map(|d| d.coverage.from_turn)
            .min()
            .unwrap_or(0);
        let to = drafts.iter().map(|d| d.coverage.to_turn).max().unwrap_or(0);
        let mut declined = String::new();
        if !declines.is_empty() {
            let count = |want: DeclineReason| declines.iter().filter(|d| d.0 == want).count();
            let kinds: Vec<String> = [
                (DeclineReason::Lossy, "lossy"),
                (DeclineReason::NotSmaller, "not smaller"),
                (DeclineReason::SummarizerFailed, "summarizer failed"),
            ]
            .into_iter()
            .filter(|(k, _)| count(*k) > 0)
            .map(|(k, name)| format!("{} {name}", count(k)))
            .collect();
            declined = format!(
                "; {} other chunk{} declined ({}), {} turns stay verbatim",
                declines.len(),
                if declines.len() == 1 { "" } else { "s" },
                kinds.join(", "),
                if declines.len() == 1 { "its" } else { "their" },
            );
        }
        r.reason = format!(
            "folded {} entries (turns {from}–{to}) into {}{declined}; {} entries stay verbatim",
            drafts.iter().map(|d| d.coverage.entry_count).sum::<u64>(),
            if folded == 1 {
                "one summary".to_string()
            } else {
                format!("{folded} summaries")
            },
            plan.verbatim.len()
        );
        r.after = Size::of(r.after.chars - written_chars.0 + written_chars.1);
    } else if r.action != Action::Masked {
        r.action = Action::Declined;
        r.reason = match declines.first() {
            Some((DeclineReason::SummarizerFailed, _, _, m)) => format!("summarizer failed: {m}"),
            Some((DeclineReason::NotSmaller, _, _, d)) => {
                format!("replacement not smaller: {d}; verdict remembered for this exact span")
            }
            Some((DeclineReason::Lossy, _, _, d)) => {
                format!(
                    "summary declined as lossy: {d}; verdict remembered for this span, model, instruction, strategy and threshold (--retry asks again)"
                )
            }
            Some((DeclineReason::Rejected, _, _, d)) => format!(
                "every candidate summary was rejected: {d}; verdict remembered for this span, model, instruction, strategy and threshold (--retry asks again)"
            ),
            None => "nothing was written".into(),
        };
    }
    write(&t, &mut sink, &lines, settings, ctx, &mut r, Some(&plan))?;
    if settings.rollup && folded > 1 && sink.handle.is_some() && ctx.interrupt.received().is_none()
    {
        let ids = drafts.iter().map(|d| d.id.clone()).collect();
        rollup(&t, &mut sink, settings, ctx, &mut r, model, ids).await?;
    }
    Ok(r)
}

/// Run futures concurrently, collecting their outputs in order.
async fn futures_join<F: std::future::Future>(futs: impl IntoIterator<Item = F>) -> Vec<F::Output> {
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

/// `--rollup`: fold the chunk summaries just written (their ids) into one covering summary. When
/// they do not fit one request within the span budget, they are rolled up in levels: groups that
/// fit become summaries, which are rolled up in turn, until one covers them all. Every level
/// stays expandable.
async fn rollup(
    t: &Transcript,
    sink: &mut Sink<'_>,
    settings: &CompactSettings,
    ctx: &Compaction,
    r: &mut DecisionRecord,
    model: &str,
    mut ids: Vec<String>,
) -> Result<()> {
    loop {
        let t2 = reread(t, sink, settings)?;
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
            r.notes.push(format!(
                "the {} summaries are too large to roll up within the span budget; they stand",
                items.len()
            ));
            return Ok(());
        }
        let last_level = groups.len() == 1;
        let spans: Vec<Span> = groups
            .iter()
            .filter(|g| g.len() > 1)
            .map(|g| Span::of(&ledger, g.clone()))
            .collect();
        let (t_ref, ledger_ref) = (&t2, &ledger);
        let none = Arc::new(Vec::new());
        let none_ref = &none;
        let asked: Vec<Result<Asked>> = futures_join(spans.iter().map(|span| async move {
            // What is rolled up is mf's own summaries: already scrubbed when they were written.
            ask_span(t_ref, ledger_ref, span, None, settings, ctx, none_ref).await
        }))
        .await;
        let asked: Vec<Asked> = asked.into_iter().collect::<Result<_>>()?;
        r.calls += asked.iter().map(|a| a.calls.len()).sum::<usize>();
        if ctx.interrupt.received().is_some() {
            return Err(MfError::Interrupted.into());
        }
        let now = (ctx.now_ms)();
        let mut drafts: Vec<Draft> = Vec::new();
        let mut folds: Vec<(Vec<Item>, usize)> = Vec::new();
        let mut recs: Vec<SummaryRecord> = Vec::new();
        let mut taken: Vec<String> = Vec::new();
        let mut stopped = false;
        for a in asked {
            for &(usage, estimate) in &a.calls {
                add_usage_est(r, usage, settings, estimate);
            }
            let reply = match a.reply.and_then(|rep| {
                summary::vet(&rep.text)
                    .map(|_| rep)
                    .map_err(SummarizerError::degrade)
            }) {
                Ok(rep) => rep,
                Err(e) if e.severity == Severity::Interrupted => return Err(e.into()),
                // The summaries under it are written and stand, whatever the failure.
                Err(e) => {
                    ctx.ui.warn(&format!(
                        "{}: a rollup summary failed; the {} summaries under it stand: {}",
                        t.display(),
                        a.span.items.len(),
                        e.message
                    ));
                    r.notes.push(format!("rollup failed: {}", e.message));
                    stopped = true;
                    continue;
                }
            };
            let (rollup_audit, lossy) = a.audit.expect("a vetted reply was audited");
            if let Some(why) = lossy.map(|why| ctx.redactor.redact(&why, &mut Counts::new())) {
                r.notes.push(format!(
                    "a rollup summary was declined as lossy ({why}); the summaries under it stand"
                ));
                stopped = true;
                continue;
            }
            let vetted = summary::vet(&reply.text).expect("vetted above");
            let text = ctx.redactor.redact(&vetted, &mut r.scrubbed);
            let audit_json = scrubbed_json(&rollup_audit, &ctx.redactor);
            let id = summary::summary_id(a.span.from_turn, a.span.to_turn, |id| {
                t2.has_id(id) || taken.iter().any(|x| x == id)
            });
            let d = summary::draft(
                &a.span,
                id.clone(),
                model,
                &text,
                reply.usage,
                now,
                None,
                audit_json
                    .as_ref()
                    .map(|j| vec![("audit", j.to_string())])
                    .unwrap_or_default(),
            );
            if let Verdict::NotSmaller { .. } = summary::judge(&a.span, &d) {
                r.notes.push(
                    "a rollup summary was not shorter than the summaries under it; they stand"
                        .into(),
                );
                stopped = true;
                continue;
            }
            recs.push(SummaryRecord {
                id: id.clone(),
                from_turn: a.span.from_turn,
                to_turn: a.span.to_turn,
                entry_count: a.span.items.len(),
                chars: d.chars(),
                tokens: estimate_tokens(d.chars()),
                audit: audit_json,
                outcome: "written (rollup)".into(),
                ..SummaryRecord::default()
            });
            taken.push(id);
            folds.push((a.span.items.clone(), drafts.len()));
            drafts.push(d);
        }
        if drafts.is_empty() {
            return Ok(());
        }
        let lines = lines_for(&t2, &ledger, &drafts, &folds, &[], &[], now)?;
        let before = r.after.chars;
        write(&t2, sink, &lines, settings, ctx, r, None)?;
        let replaced: usize = folds
            .iter()
            .flat_map(|(items, _)| items.iter().map(|&i| ledger.item_chars(i)))
            .sum();
        r.after = Size::of(before - replaced + recs.iter().map(|c| c.chars).sum::<usize>());
        r.summaries.extend(recs);
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

fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max - 1).collect();
        t.push('…');
        t
    }
}

/// Whether the same verdict for the same span and model is already in the file.
/// The decline records to append for these verdicts: none the file already holds.
fn decline_records<'s>(
    ledger: &Ledger<'_>,
    model: &str,
    now: u64,
    declines: impl IntoIterator<Item = (DeclineReason, &'s Span, Option<usize>, String)>,
) -> Vec<(RecordKind, u64)> {
    declines
        .into_iter()
        .filter(|(reason, span, ..)| !already_declined(ledger, *reason, model, &span.digest))
        .map(|(reason, span, chars, detail)| {
            let mut kind = span.decline(reason, model, chars, detail);
            if let RecordKind::Decline { key, .. } = &mut kind {
                key.clone_from(&ledger.decline_key);
            }
            (kind, now)
        })
        .collect()
}

/// The least share (percent) of the view a fold must save to be written.
const MIN_SAVING_PCT: usize = 10;

/// What a decline is keyed by besides the span and the model: the instruction the summarizer
/// is given, the strategy, and the audit's settings. Another of any of them asks again.
pub(crate) fn decline_key(settings: &CompactSettings) -> String {
    let policy = &settings.policy;
    let instruction = match (&settings.instruction, policy.strategy) {
        (Some(i), _) => i.trim().to_string(),
        (None, fold::Strategy::Cited) => prompt::CITED_INSTRUCTION.to_string(),
        (None, _) => prompt::DEFAULT_INSTRUCTION.to_string(),
    };
    let a = &settings.audit;
    let text = format!(
        "audit-v2\u{0}{instruction}\u{0}{:?}\u{0}{:.4}\u{0}{}\u{0}{}",
        policy.strategy, a.min_retention, a.strict, a.count_tool_results
    );
    format!("{:016x}", crate::digest::fnv1a64(text.as_bytes()))
}

/// The ledger of a file as this run judges it: its declines bind only under this run's key, and
/// not at all with `--retry`.
fn ledger_for<'a>(t: &'a Transcript, settings: &CompactSettings) -> Ledger<'a> {
    let mut ledger = Ledger::new(t.conversation());
    ledger.decline_key = Some(decline_key(settings));
    ledger.retry = settings.audit.retry;
    ledger
}

fn already_declined(ledger: &Ledger<'_>, reason: DeclineReason, model: &str, digest: &str) -> bool {
    ledger.conv.records.iter().any(|rec| {
        matches!(&rec.kind, RecordKind::Decline { reason: r, model: m, span: DeclinedSpan::Ref(s), key, .. }
            if *r == reason && m == model && s.digest == digest && *key == ledger.decline_key)
    })
}

/// Add one call's usage and cost (from its usage, else the request's estimated tokens in and
/// out) to the record.
fn add_usage_est(
    r: &mut DecisionRecord,
    usage: Option<Usage>,
    settings: &CompactSettings,
    estimate: (u64, u64),
) {
    if let Some(u) = usage {
        let prev = r.usage.unwrap_or(UsageRecord {
            input_tokens: 0,
            output_tokens: 0,
        });
        r.usage = Some(UsageRecord {
            input_tokens: prev.input_tokens + u.input_tokens,
            output_tokens: prev.output_tokens + u.output_tokens,
        });
    }
    let cost = cost_of(settings, estimate, usage);
    r.cost = match (r.cost, cost) {
        (Some(a), Some(b)) => Some(a.plus(b)),
        (a, b) => a.or(b),
    };
}

/// The cost of one call: from reported usage, else from mf's estimate; nothing for the built-in.
fn cost_of(
    settings: &CompactSettings,
    estimate: (u64, u64),
    usage: Option<Usage>,
) -> Option<CostRecord> {
    if matches!(settings.model, ModelChoice::Extractive) {
        return Some(CostRecord {
            usd: 0.0,
            estimated: false,
        });
    }
    let pricing = settings.pricing.as_ref()?;
    Some(match usage {
        // The provider's counts, in the band of the request's real size.
        Some(u) => CostRecord {
            usd: pricing.usd(Billed {
                input: u.input_tokens,
                output: u.output_tokens,
                ..Billed::default()
            }),
            estimated: false,
        },
        None => CostRecord {
            usd: pricing.usd(billed(settings, estimate)),
            estimated: true,
        },
    })
}

/// mf's estimate of a request (in 4-character tokens, in and out) in the model's own tokens.
fn billed(settings: &CompactSettings, estimate: (u64, u64)) -> Billed {
    let scale = |n: u64| (n as f64 * settings.token_ratio).ceil() as u64;
    Billed {
        input: scale(estimate.0),
        output: scale(estimate.1),
        ..Billed::default()
    }
}

/// `--dry-run`: the plan, what the calls would cost (each in the price band of its size), and
/// whether any request is over the model's context — before anything is paid. With
/// `--count-tokens`, each request is built and the provider counts its input exactly (free).
async fn dry_run(
    t: &Transcript,
    ledger: &Ledger<'_>,
    plan: &Plan,
    settings: &CompactSettings,
    ctx: &Compaction,
    r: &mut DecisionRecord,
) -> Result<()> {
    let model = ctx.summarizer.model().to_string();
    let (mut tin, mut tout) = (0u64, 0u64);
    let context = settings.context_tokens;
    let counting = settings.count_tokens;
    if counting && !matches!(settings.model, ModelChoice::Remote(_)) {
        r.notes.push(format!(
            "--count-tokens: {model} is built in; its count is mf's estimate"
        ));
    }
    let redactor = settings.redact.then_some(&ctx.redactor);
    let several = plan.spans.len() > 1;
    let mut counted_all = counting;
    for (k, span) in plan.spans.iter().enumerate() {
        let est = estimate_request(ledger, &settings.policy, span, settings);
        let mut b = billed(settings, est);
        let mut how = "estimated";
        if counting {
            let mut redacted = Counts::default();
            let pieces = pieces_of(t, ledger, span, redactor, &mut redacted)?;
            let request = make_request(span, pieces, settings, None);
            match ctx.summarizer.count_tokens(&request) {
                Some(fut) => match fut.await {
                    Ok(n) => {
                        b.input = n;
                        how = "counted by the provider";
                    }
                    Err(e) if e.stops() => return Err(e.into()),
                    Err(e) => {
                        counted_all = false;
                        r.notes.push(format!(
                            "call {}: count_tokens failed, the estimate stands: {}",
                            k + 1,
                            e.message
                        ));
                    }
                },
                None => counted_all = false,
            }
        }
        let (i, o) = (b.input, b.output);
        if let Some(ctx_tokens) = context
            && i + o > ctx_tokens
        {
            let w = format!(
                "a planned request of ~{} tokens (turns {}–{}) is over {model}'s context of {ctx_tokens} tokens; lower --max-span-tokens",
                i + o,
                span.from_turn,
                span.to_turn
            );
            ctx.ui.warn(&format!("{}: {w}", r.file));
            r.notes.push(w);
        }
        tin += i;
        tout += o;
        let remote = matches!(settings.model, ModelChoice::Remote(_));
        if let Some(pricing) = &settings.pricing {
            let c = CostRecord {
                usd: pricing.usd(b),
                estimated: true,
            };
            r.cost = Some(r.cost.map_or(c, |p| p.plus(c)));
            if !remote {
                continue;
            }
            let over = pricing.cheap_limit().is_some_and(|limit| i > limit);
            r.notes.push(format!(
                "call {} (turns {}–{}): ~{i} tokens in ({how}), ~{o} out; price band {}{}: ${}",
                k + 1,
                span.from_turn,
                span.to_turn,
                pricing.describe(i),
                if over {
                    " — over the cheaper band; lower --max-span-tokens to stay under it"
                } else {
                    ""
                },
                crate::render::usd(c.usd)
            ));
        } else if remote && (several || counting) {
            r.notes.push(format!(
                "call {} (turns {}–{}): ~{i} tokens in ({how}), ~{o} out",
                k + 1,
                span.from_turn,
                span.to_turn
            ));
        }
    }
    if matches!(settings.model, ModelChoice::Extractive) {
        r.cost = Some(CostRecord {
            usd: 0.0,
            estimated: false,
        });
    }
    let cost = match r.cost {
        Some(c) => format!("estimated cost ${}", crate::render::usd(c.usd)),
        None => "cost unknown (no price for this model; see --price-in/--price-out)".to_string(),
    };
    r.reason = format!(
        "dry run: {}; the request{} to {model} would be ~{tin} tokens in{}, ~{tout} out; {cost}; nothing called or written",
        r.reason,
        if plan.spans.len() == 1 { "" } else { "s" },
        if counting && counted_all {
            " (counted by the provider)"
        } else {
            ""
        },
    );
    Ok(())
}

/// Append `lines` to the transcript under its lock (checked at that instant), or write the copy
/// for `--output`. A signal during the append takes effect after it.
fn write(
    t: &Transcript,
    sink: &mut Sink<'_>,
    lines: &[String],
    settings: &CompactSettings,
    ctx: &Compaction,
    r: &mut DecisionRecord,
    plan: Option<&Plan>,
) -> Result<()> {
    if settings.dry_run {
        return Ok(());
    }
    if let Some(target) = sink.output {
        let _critical = ctx.interrupt.critical();
        transcript::write_copy(target, t, lines, settings.force)?;
        r.written = !lines.is_empty();
        r.lines_appended += lines.len();
        r.output = Some(match target {
            OutputTarget::Stdout => "-".to_string(),
            OutputTarget::File(p) => p.display().to_string(),
        });
        return Ok(());
    }
    if lines.is_empty() {
        return Ok(());
    }
    let h = sink.handle.as_mut().expect("in place, the file is open");
    let _critical = ctx.interrupt.critical();
    let size = h.check_same(t)?;
    if t.format.is_agent() && !settings.force {
        // Again, under the lock, right before the write: an agent that wrote while mf was
        // working (or started meanwhile) is running, and mf's lines would land among its own.
        settings.live.check_before_write(t, h.file())?;
    }
    if let Some(plan) = plan {
        if size > t.len {
            // An agent appended meanwhile: the fold must still be lawful with its lines.
            let now = h.read(&settings.read)?;
            let ledger = Ledger::new(now.conversation());
            if !plan.holds_in(&ledger) {
                return Err(TranscriptError::Changed {
                    path: t.path.clone(),
                    what: "lines appended meanwhile change what may be folded".into(),
                }
                .into());
            }
        } else {
            let items: Vec<usize> = plan
                .spans
                .iter()
                .flat_map(|s| s.items.iter().map(|&i| i as usize))
                .collect();
            if !t
                .still_holds(h.file(), &items)
                .map_err(|source| TranscriptError::Open {
                    path: t.path.clone(),
                    source,
                })?
            {
                return Err(TranscriptError::Changed {
                    path: t.path.clone(),
                    what: "the lines being folded were edited".into(),
                }
                .into());
            }
        }
    }
    let a = h.append(t, lines, settings.tail_wait)?;
    r.written = true;
    r.lines_appended += lines.len();
    if a.closed_torn_mf {
        r.notes.push(
            "closed a line an earlier mf run began and did not finish (it is skipped on read)"
                .into(),
        );
    }
    if a.interleaved {
        ctx.ui.warn(&format!(
            "{}: another program wrote to the file at the same instant as mf; mf's lines and its are both kept (`mf verify` shows where)",
            t.display()
        ));
        r.notes
            .push("another writer wrote at the same instant; both lines are kept".into());
    }
    Ok(())
}

/// A record for the file and stdout built from a summary's text, secrets redacted.
pub(crate) fn scrubbed_json(
    v: &impl serde::Serialize,
    redactor: &Redactor,
) -> Option<serde_json::Value> {
    let mut j = serde_json::to_value(v).ok()?;
    redactor.redact_value(&mut j);
    Some(j)
}
