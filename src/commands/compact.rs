//! `mf compact`: read → plan → one summarizer call per span → judge → append under lock → record.

use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use tokio::sync::Semaphore;

use crate::decision::{Action, CostRecord, DecisionRecord, Size, SummaryRecord, UsageRecord};
use crate::entry::{DeclineReason, Record, RecordKind, estimate_tokens};
use crate::error::MfError;
use crate::fold::{self, Decision, FoldPlan, Ledger, Verdict, prompt, summary};
use crate::http::HttpClient;
use crate::model;
use crate::render::Ui;
use crate::settings::{CompactSettings, ModelChoice};
use crate::summarizer::{Extractive, Remote, Severity, Summarizer, SummaryReply};
use crate::transcript::{self, LockAttempt, Tail, Transcript, TranscriptError};

/// What one compact run needs besides the settings: the summarizer and a clock.
pub struct Compaction {
    pub summarizer: Arc<dyn Summarizer>,
    /// Milliseconds since the Unix epoch, for `summarizedAtMs` and record times.
    pub now_ms: fn() -> u64,
    pub ui: Ui,
}

pub fn system_now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The summarizer the settings name.
pub fn summarizer_for(settings: &CompactSettings, ui: Ui) -> Result<Arc<dyn Summarizer>> {
    Ok(match &settings.model {
        ModelChoice::Extractive => Arc::new(Extractive),
        ModelChoice::Remote(config) => {
            let mut client =
                HttpClient::new(settings.http.clone()).context("cannot set up the HTTP client")?;
            if ui.verbose() {
                client = client.with_log(
                    Arc::new(move |line: &str| ui.log(line)),
                    settings.debug_bodies,
                );
            }
            Arc::new(Remote::new(
                (**config).clone(),
                client,
                Arc::new(move |line: &str| ui.warn(line)),
            ))
        }
    })
}

/// Estimated tokens in and out for one request.
fn estimate(request: &fold::SummaryRequest) -> (u64, u64) {
    let input =
        estimate_tokens(request.system.chars().count() + request.user.chars().count()) as u64;
    let output = (request.target_chars / 4) as u64;
    (input, output)
}

/// `--max-cost`: plan every file first and refuse before the first call if the estimated total
/// is over the limit.
fn check_max_cost(settings: &CompactSettings, model: &str) -> Result<()> {
    let Some(max) = settings.max_cost else {
        return Ok(());
    };
    let Some(price) = settings.price else {
        return Err(MfError::refused(
            format!("no price is known for `{model}`, so `--max-cost` cannot be checked"),
            Some("pass --price-in and --price-out (USD per million tokens)".into()),
        )
        .into());
    };
    let (mut total, mut calls) = (0.0, 0usize);
    for file in &settings.files {
        let Ok(t) = transcript::read(file) else {
            continue;
        };
        let ledger = Ledger::new(&t.entries, &t.records);
        if let Decision::Fold(plan) = fold::plan(&ledger, &settings.policy) {
            let request = prompt::request(&ledger, &plan, settings.instruction.as_deref());
            let (i, o) = estimate(&request);
            total += CostRecord::of(price, i, o, true).usd;
            calls += 1;
        }
    }
    if total > max {
        return Err(MfError::refused(
            format!(
                "the estimated cost of {calls} call{} is ${total:.4}, over `--max-cost {max}`; nothing was called",
                if calls == 1 { "" } else { "s" }
            ),
            Some("raise --max-cost, or use --dry-run to see the estimate per file".into()),
        )
        .into());
    }
    Ok(())
}

/// Compact every file (at most `jobs` at once). Returns one record per file that could be
/// handled, in the order given, and the errors of those that could not.
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
    for (i, file) in settings.files.iter().enumerate() {
        let (ctx, gate, settings, file, bar) = (
            ctx.clone(),
            gate.clone(),
            settings.clone(),
            file.clone(),
            bar.clone(),
        );
        set.spawn(async move {
            let _permit = gate
                .acquire_owned()
                .await
                .expect("the semaphore is never closed");
            let out = compact_file(&file, &settings, &ctx).await;
            bar.inc(1);
            (i, out)
        });
    }
    let mut results: Vec<Option<Result<DecisionRecord>>> =
        (0..settings.files.len()).map(|_| None).collect();
    while let Some(joined) = set.join_next().await {
        match joined {
            Ok((i, out)) => results[i] = Some(out),
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
    bar.finish_and_clear();
    Ok(results
        .into_iter()
        .map(|r| r.expect("every file reports"))
        .collect())
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
    let agents = t.agent_models.iter().chain(settings.agent_model.iter());
    for agent in agents {
        if model::same_model(agent, &remote.model.id) {
            return Err(MfError::refused(
                format!(
                    "`{}` is the model that wrote `{}` (`{agent}`): summarizing with it bills compression at the main model's price",
                    remote.model.label(),
                    t.path.display()
                ),
                Some("name a cheaper summarizer with --model, or pass --allow-same-model to do it anyway".into()),
            )
            .into());
        }
    }
    Ok(())
}

/// Compact one file.
pub async fn compact_file(
    path: &Path,
    settings: &CompactSettings,
    ctx: &Compaction,
) -> Result<DecisionRecord> {
    let t = transcript::read(path)?;
    // Refuse a torn file before paying for a call; the append would refuse it anyway.
    t.check_tail()?;
    let output = settings.output_for(path);
    if let Some(out) = &output
        && same_file(path, out)
    {
        return Err(MfError::usage(
            format!("`--output {}` is the input file", out.display()),
            Some("drop `--output` to compact the file in place (append-only)".into()),
        )
        .into());
    }
    check_same_model(&t, settings)?;
    let ledger = Ledger::new(&t.entries, &t.records);
    let model = ctx.summarizer.model().to_string();
    let decision = fold::plan(&ledger, &settings.policy);
    let mut r = DecisionRecord::from_decision(
        &path.display().to_string(),
        &ledger,
        &decision,
        Some(&model),
    );
    let plan = match decision {
        Decision::Skip(_) => {
            finish_copy(&t, output.as_deref(), &[], &mut r, settings.dry_run)?;
            return Ok(r);
        }
        Decision::Fold(plan) => plan,
    };

    let request = prompt::request(&ledger, &plan, settings.instruction.as_deref());
    if settings.dry_run {
        let (tokens_in, tokens_out) = estimate(&request);
        r.cost = cost_of(settings, &request, None);
        let cost = match r.cost {
            Some(c) => format!("estimated cost ${:.4}", c.usd),
            None => {
                "cost unknown (no price for this model; see --price-in/--price-out)".to_string()
            }
        };
        r.reason = format!(
            "dry run: {}; the request to {model} would be ~{tokens_in} tokens in, ~{tokens_out} out; {cost}; nothing called or written",
            r.reason,
        );
        return Ok(r);
    }

    // One file: a spinner while the summarizer works; several: the files bar says it all.
    let spinner = if settings.files.len() == 1 {
        ctx.ui.spinner(format!(
            "{}: summarizing turns {}–{} with {model}",
            path.display(),
            plan.span.from_turn,
            plan.span.to_turn
        ))
    } else {
        indicatif::ProgressBar::hidden()
    };
    let reply = ctx.summarizer.summarize(&request).await;
    spinner.finish_and_clear();
    let now = (ctx.now_ms)();

    let reply = match reply.and_then(validate_reply) {
        Ok(reply) => reply,
        Err(e) if e.severity == Severity::Fatal => return Err(e.into()),
        Err(e) => {
            ctx.ui.warn(&format!(
                "{}: the summarizer failed, turns {}–{} stay verbatim: {}",
                path.display(),
                plan.span.from_turn,
                plan.span.to_turn,
                e.message
            ));
            let record = decline(
                &plan,
                DeclineReason::SummarizerFailed,
                &model,
                None,
                e.message.clone(),
                now,
            );
            r.action = Action::Declined;
            r.reason = format!("summarizer failed: {}", e.message);
            write(
                &t,
                &plan,
                output.as_deref(),
                &[transcript::record_line(&record)],
                None,
                ctx,
                &mut r,
            )
            .await?;
            return Ok(r);
        }
    };

    let id = summary::summary_id(plan.span.from_turn, plan.span.to_turn, |id| t.has_id(id));
    let draft = summary::draft(&plan, id, &model, &reply.text, reply.usage, now);
    r.usage = reply.usage.map(UsageRecord::from);
    r.cost = cost_of(settings, &request, reply.usage);
    r.summary = Some(SummaryRecord {
        id: draft.id.clone(),
        chars: draft.chars(),
        tokens: estimate_tokens(draft.chars()),
    });
    match summary::judge(&plan, &draft) {
        Verdict::NotSmaller {
            span_chars,
            summary_chars,
        } => {
            let detail = format!(
                "label and summary would be {summary_chars} chars, not shorter than the {span_chars} chars they replace"
            );
            let record = decline(
                &plan,
                DeclineReason::NotSmaller,
                &model,
                Some(summary_chars as u64),
                detail.clone(),
                now,
            );
            r.action = Action::Declined;
            r.reason = format!(
                "replacement not smaller: {detail}; verdict remembered for this exact span"
            );
            write(
                &t,
                &plan,
                output.as_deref(),
                &[transcript::record_line(&record)],
                None,
                ctx,
                &mut r,
            )
            .await?;
            Ok(r)
        }
        Verdict::Smaller {
            span_chars,
            summary_chars,
        } => {
            let record = Record {
                line: 0,
                at_ms: now,
                kind: RecordKind::Fold {
                    summary_id: draft.id.clone(),
                    model: model.clone(),
                    from_turn: plan.span.from_turn,
                    to_turn: plan.span.to_turn,
                    entry_count: plan.span.ids.len() as u64,
                    span_chars: span_chars as u64,
                    summary_chars: summary_chars as u64,
                },
            };
            let lines = [
                transcript::summary_line(&draft),
                transcript::record_line(&record),
            ];
            r.action = Action::Folded;
            r.reason = format!(
                "folded {} entries (turns {}–{}) into one summary; {} entries stay verbatim",
                plan.span.ids.len(),
                plan.span.from_turn,
                plan.span.to_turn,
                plan.verbatim.len()
            );
            r.after = Size::of(plan.view_chars - span_chars + summary_chars);
            write(
                &t,
                &plan,
                output.as_deref(),
                &lines,
                Some(&draft.id),
                ctx,
                &mut r,
            )
            .await?;
            Ok(r)
        }
    }
}

/// The cost of one call: from reported usage, else from mf's estimate; nothing for the built-in.
fn cost_of(
    settings: &CompactSettings,
    request: &fold::SummaryRequest,
    usage: Option<crate::entry::Usage>,
) -> Option<CostRecord> {
    if matches!(settings.model, ModelChoice::Extractive) {
        return Some(CostRecord {
            usd: 0.0,
            estimated: false,
        });
    }
    let price = settings.price?;
    Some(match usage {
        Some(u) => CostRecord::of(price, u.input_tokens, u.output_tokens, false),
        None => {
            let (i, o) = estimate(request);
            CostRecord::of(price, i, o, true)
        }
    })
}

/// A reply is a summary only if its text passes the engine's checks.
fn validate_reply(reply: SummaryReply) -> Result<SummaryReply, crate::summarizer::SummarizerError> {
    let text = summary::vet(&reply.text).map_err(crate::summarizer::SummarizerError::degrade)?;
    Ok(SummaryReply { text, ..reply })
}

fn decline(
    plan: &FoldPlan,
    reason: DeclineReason,
    model: &str,
    summary_chars: Option<u64>,
    detail: String,
    now: u64,
) -> Record {
    Record {
        line: 0,
        at_ms: now,
        kind: RecordKind::Decline {
            reason,
            model: model.to_string(),
            from_turn: plan.span.from_turn,
            to_turn: plan.span.to_turn,
            span_ids: plan.span.ids.clone(),
            span_chars: plan.span.chars as u64,
            summary_chars,
            detail,
        },
    }
}

/// Append `lines` to the transcript under its lock, or write the copy for `--output`.
async fn write(
    t: &Transcript,
    plan: &FoldPlan,
    output: Option<&Path>,
    lines: &[String],
    new_id: Option<&str>,
    ctx: &Compaction,
    r: &mut DecisionRecord,
) -> Result<()> {
    if output.is_some() {
        return finish_copy(t, output, lines, r, false);
    }
    // Wait for the lock without blocking the runtime, so Ctrl-C still lands while another
    // process holds it (nothing is held or written yet at these awaits).
    let mut said = false;
    let mut locked = loop {
        match transcript::try_lock(&t.path)? {
            LockAttempt::Locked(l) => break l,
            LockAttempt::Busy => {
                if !said {
                    ctx.ui.note(&format!(
                        "waiting for the lock on `{}` (another process is writing it)",
                        t.path.display()
                    ));
                    said = true;
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        }
    };
    let bytes = locked.read_bytes()?;
    let reparsed;
    let now = if t.snapshot.matches(&bytes) {
        t
    } else {
        reparsed = transcript::parse(&t.path, &bytes)?;
        check_only_grew(t, &bytes, &reparsed, plan, new_id)?;
        &reparsed
    };
    locked.append(now, lines)?;
    r.written = true;
    r.lines_appended = lines.len();
    Ok(())
}

/// The file changed between reading and writing. Go on only if lines were appended after the
/// bytes mf read (an agent still writing), and the fold is still lawful with them.
fn check_only_grew(
    t: &Transcript,
    bytes: &[u8],
    now: &Transcript,
    plan: &FoldPlan,
    new_id: Option<&str>,
) -> Result<()> {
    let changed = |what: &str| TranscriptError::Changed {
        path: t.path.clone(),
        what: what.into(),
    };
    if !t.snapshot.is_prefix_of(bytes) {
        return Err(changed("its earlier lines were rewritten or removed").into());
    }
    if t.tail == Tail::Unterminated
        && usize::try_from(t.snapshot.len)
            .ok()
            .and_then(|n| bytes.get(n))
            != Some(&b'\n')
    {
        return Err(changed("its unterminated last line was extended").into());
    }
    let ledger = Ledger::new(&now.entries, &now.records);
    if !plan.holds_in(&ledger) {
        return Err(changed("lines appended meanwhile change what may be folded").into());
    }
    if new_id.is_some_and(|id| now.has_id(id)) {
        return Err(changed("a line with the new summary's id appeared").into());
    }
    Ok(())
}

/// For `--output`: write the input's bytes plus `lines` to the output path.
fn finish_copy(
    t: &Transcript,
    output: Option<&Path>,
    lines: &[String],
    r: &mut DecisionRecord,
    dry_run: bool,
) -> Result<()> {
    let Some(out) = output else { return Ok(()) };
    if dry_run {
        return Ok(());
    }
    let bytes = std::fs::read(&t.path)
        .with_context(|| format!("cannot read `{}` again", t.path.display()))?;
    // The copy must be of the bytes that were planned on: compare, no need to parse again.
    if !t.snapshot.matches(&bytes) {
        return Err(TranscriptError::Changed {
            path: t.path.clone(),
            what: "it changed while mf was working".into(),
        }
        .into());
    }
    transcript::write_copy(out, t, &bytes, lines)?;
    r.written = !lines.is_empty();
    r.lines_appended = lines.len();
    r.output = Some(out.display().to_string());
    Ok(())
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}
