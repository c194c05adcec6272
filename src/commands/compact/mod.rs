//! `mf compact`: open the file for appending (so nothing is paid for that cannot be written) →
//! lock it → read → plan → one summarizer call per span, concurrently → vet, scrub, audit and
//! judge each summary → append under the lock, checked at that instant → record.
//!
//! The rooms: `guards` (same model, live session, lock), `cost` (estimates, `--max-cost`, the
//! dry run), the call (`crate::call`: span → request → reply → audit), `write` (append, copy,
//! stream), and one room per strategy (`summary`, `cited`, `rollup`, `mask`).

mod batch;
mod batch_store;
mod cited;
mod cost;
mod guards;
mod mask;
mod report;
mod rollup;
mod summary;
mod write;

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use tokio::sync::Semaphore;

use crate::call::{AuditRules, Caller, Rules};
use crate::cli::CompactArgs;
use crate::decision::{DecisionRecord, Size};
use crate::entry::{DeclineReason, DeclinedSpan, RecordKind};
use crate::error::MfError;
use crate::exit_status::ExitStatus;
use crate::fold::{self, Ledger, Span, prompt};
use crate::interrupt::Interrupt;
use crate::redact::Redactor;
use crate::render::Ui;
use crate::settings::{CompactSettings, ModelChoice};
use crate::summarizer::Summarizer;
use crate::transcript::{self, Tail, Transcript};

use self::write::{Sink, read_only};

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

    /// What a summarizer call reaches.
    pub(crate) fn caller(&self) -> Caller<'_> {
        Caller {
            summarizer: self.summarizer.as_ref(),
            interrupt: &self.interrupt,
            calls: &self.calls,
            redactor: &self.redactor,
        }
    }
}

/// One file's run, as every room of `compact` reads and writes it: the settings, the run's
/// context and the model (read), where its lines go and its decision record (written).
struct FileRun<'a> {
    settings: &'a CompactSettings,
    ctx: &'a Compaction,
    model: &'a str,
    sink: Sink<'a>,
    r: DecisionRecord,
}

impl FileRun<'_> {
    /// Count the secrets taken out of a kept reply's text in the record.
    fn scrubbed(&mut self, counts: &crate::redact::Counts) {
        for (k, n) in counts {
            *self.r.scrubbed.entry(k).or_default() += n;
        }
    }
}

/// The part of the settings a summarizer call reads.
pub(super) fn rules(settings: &CompactSettings) -> Rules<'_> {
    Rules {
        policy: &settings.policy,
        instruction: settings.instruction.as_deref(),
        audit: audit_rules(settings),
    }
}

/// The part of the settings the audit reads.
pub(super) fn audit_rules(settings: &CompactSettings) -> AuditRules {
    let a = &settings.audit;
    AuditRules {
        min_retention: a.min_retention,
        strict: a.strict,
        count_tool_results: a.count_tool_results,
        retry_lossy: a.retry_lossy,
        allow_inventions: a.allow_inventions,
        panic_on: crate::settings::debug_panic_on(),
    }
}

/// `mf compact`: resolve the settings, set up the summarizer and the run's context, compact
/// every file, and report (`report`): the exit status the files add up to.
pub fn command(
    args: CompactArgs,
    config: Option<&Path>,
    no_cache: bool,
    ui: Ui,
    interrupt: &Interrupt,
) -> Result<ExitStatus> {
    if args.tier.batch_status || args.tier.batch_cancel {
        return batch::admin(&args.tier, &args.files, ui);
    }
    let mut settings = CompactSettings::resolve(args, config)?;
    settings.read.cache = crate::settings::cache_options(no_cache);
    interrupt.graceful();
    let results = records(&settings, ui, interrupt)?;
    report::finish(&settings, &ui, interrupt, results)
}

/// Set up the summarizer and the run's context, and compact every file of `settings`: each
/// file's record, or its error. Printing nothing. `mf eval` folds its private copies through
/// this (the command table hands it over: commands never import each other).
pub fn records(
    settings: &CompactSettings,
    ui: Ui,
    interrupt: &Interrupt,
) -> Result<Vec<Result<DecisionRecord>>> {
    let key = match &settings.model {
        ModelChoice::Remote(r) => r.secrets(),
        ModelChoice::Extractive => Vec::new(),
    };
    if settings.tiers.batch()
        && !settings.dry_run
        && matches!(settings.model, ModelChoice::Remote(_))
    {
        return super::block_on(batch::run_batched(settings, ui, interrupt))?;
    }
    let summarizer = summarizer_for(settings, ui)?;
    let in_flight = summarizer
        .parallelism()
        .map_or(settings.jobs, |p| p.min(settings.jobs));
    let ctx = Arc::new(Compaction {
        summarizer,
        now_ms: crate::clock::now_ms,
        ui,
        interrupt: interrupt.clone(),
        calls: Arc::new(Semaphore::new(in_flight)),
        redactor: Redactor::new(key),
    });
    super::block_on(run(settings, ctx))?
}

/// The summarizer the settings name.
pub fn summarizer_for(settings: &CompactSettings, ui: Ui) -> Result<Arc<dyn Summarizer>> {
    if let Some(w) = &settings.model_warning {
        ui.warn(w);
    }
    let remote = match &settings.model {
        ModelChoice::Extractive => None,
        ModelChoice::Remote(config) => Some(config.as_ref()),
    };
    let log = ui.verbose().then(|| {
        let log: crate::http::Log = Arc::new(move |line: &str| ui.log(line));
        (log, settings.debug_bodies, ui.very_verbose())
    });
    crate::summarizer::named(
        remote,
        settings.http.clone(),
        log,
        Arc::new(move |line: &str| ui.warn(line)),
    )
    .context("cannot set up the HTTP client")
}

/// Compact every file (at most `jobs` at once). Returns one result per file, in order.
pub async fn run(
    settings: &CompactSettings,
    ctx: Arc<Compaction>,
) -> Result<Vec<Result<DecisionRecord>>> {
    if !settings.dry_run {
        cost::check_max_cost(settings, ctx.summarizer.model())?;
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
        guards::wait_lock(&h, ctx).await?;
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
    crate::view::log_read(&ctx.ui, &t);
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
    guards::check_same_model(&t, settings)?;
    let sink = Sink {
        handle,
        output: output.as_ref(),
    };
    let ledger = Ledger::new(t.conversation());
    r.before = Size::of(ledger.view_chars());
    r.after = r.before;
    let mut run = FileRun {
        settings,
        ctx,
        model: &model,
        sink,
        r,
    };

    let policy = &settings.policy;
    if policy.strategy.masks() {
        let lines = mask::mask(&t, &ledger, settings, ctx, &mut run.r)?;
        if !policy.strategy.summarizes() || settings.dry_run {
            if !policy.strategy.summarizes() {
                run.write(&t, &lines, None)?;
                return Ok(run.r);
            }
        } else if !lines.is_empty() {
            run.write(&t, &lines, None)?;
            // Plan the summary on the file as it now is.
            let t2 = run.reread(&t)?;
            return summary::summarize_file(t2, run).await;
        }
    }
    summary::summarize_file(t, run).await
}

/// `--batch --rollup`: roll up the summaries `ids` of a file whose chunk summaries an earlier
/// pass wrote (its record `r` goes on), under the lock, on the file as it now is.
pub(super) async fn rollup_file(
    path: &Path,
    settings: &CompactSettings,
    ctx: &Compaction,
    mut r: DecisionRecord,
    ids: Vec<String>,
) -> Result<DecisionRecord> {
    let model = ctx.summarizer.model().to_string();
    let h = transcript::open_for_append(path)?;
    guards::wait_lock(&h, ctx).await?;
    let t = h.read(&settings.read)?;
    if t.format.is_agent() && !settings.force {
        settings.live.check(&t, h.file())?;
    }
    t.check_tail()?;
    // A record begun by this run goes on; one for a rollup an earlier run left starts at the
    // file as it is.
    if r.before.chars == 0 {
        r.format = Some(t.format.name().to_string());
        r.before = Size::of(Ledger::new(t.conversation()).view_chars());
        r.after = r.before;
    }
    let sink = Sink {
        handle: Some(h),
        output: None,
    };
    r.rollup_pending = None;
    let mut run = FileRun {
        settings,
        ctx,
        model: &model,
        sink,
        r,
    };
    rollup::rollup(&mut run, &t, ids).await?;
    Ok(run.r)
}

pub(super) fn short(s: &str, max: usize) -> String {
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
pub(super) fn decline_records<'s>(
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
pub(super) fn ledger_for<'a>(t: &'a Transcript, settings: &CompactSettings) -> Ledger<'a> {
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
