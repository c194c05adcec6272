//! `mf summarize`: a span (every entry of the input) → the same request, chunking, redaction
//! and audit as `compact` (through `crate::call`) → the audited summary on stdout. Nothing is
//! written anywhere: the building block for hooks and scripts.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;
use tokio::sync::Semaphore;

use crate::call::{self, AuditRules, Caller, Costing, Judged, Rules};
use crate::cli::{CompactArgs, PolicyArgs, SummarizeArgs};
use crate::decision::{
    ChunkOutcome, SummarizeChunk, SummarizeReason, SummarizeRecord, UsageRecord,
};
use crate::error::MfError;
use crate::exit_status::ExitStatus;
use crate::fold::{self, Ledger, Span, summary};
use crate::interrupt::Interrupt;
use crate::redact::Redactor;
use crate::render::{self, Ui};
use crate::settings::{CompactSettings, ModelChoice};
use crate::summarizer::Summarizer;
use crate::transcript;

/// The settings of a summarize run: `compact`'s, resolved the same way, for one input.
pub fn settings(
    args: SummarizeArgs,
    config: Option<&std::path::Path>,
) -> Result<(CompactSettings, bool)> {
    let SummarizeArgs {
        file,
        model,
        system_prompt,
        max_span_tokens,
        from,
        dry_run,
        json,
        audit,
        provider,
    } = args;
    let compact = CompactArgs {
        files: vec![file],
        files_from: None,
        null: false,
        latest: None,
        cwd: None,
        model,
        policy: PolicyArgs {
            max_span_tokens,
            from,
            ..PolicyArgs::default()
        },
        rollup: false,
        system_prompt,
        dry_run,
        // Nothing is written; naming stdout as the "copy" lets standard input be the span.
        output: Some(PathBuf::from("-")),
        force: false,
        json,
        record: None,
        jobs: 4,
        allow_degraded: false,
        audit,
        provider,
        tier: crate::cli::TierArgs::default(),
    };
    Ok((CompactSettings::resolve(compact, config)?, json))
}

/// The summarizer the settings name (warnings and `-v`'s log on stderr).
fn summarizer_for(settings: &CompactSettings, ui: Ui) -> Result<Arc<dyn Summarizer>> {
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
    let warn: crate::http::Log = Arc::new(move |line: &str| ui.warn(line));
    crate::summarizer::named(remote, settings.http.clone(), log, warn)
        .map_err(|e| anyhow::anyhow!(e).context("cannot set up the HTTP client"))
}

/// Summarize the input and print the result; the exit status says whether it was accepted.
pub async fn summarize(
    settings: &CompactSettings,
    json: bool,
    ui: Ui,
    interrupt: &Interrupt,
) -> Result<ExitStatus> {
    let summarizer = summarizer_for(settings, ui)?;
    let model = summarizer.model().to_string();
    let key = match &settings.model {
        ModelChoice::Remote(r) => r.secrets(),
        ModelChoice::Extractive => Vec::new(),
    };
    let redactor = Redactor::new(key);
    let path: &PathBuf = &settings.files[0];
    if path.as_os_str() == "-" && crate::settings::stdin_is_terminal() {
        // Not a silent wait: say what mf is waiting for, and how to end it.
        ui.note("reading the span from standard input, which is this terminal: paste chat JSONL (one message a line), then press Ctrl-D on an empty line to end it (Ctrl-C quits); or give a file: `mf summarize FILE`");
    }
    let t = transcript::read(path, &settings.read)?;
    t.check_tail()?;
    let ledger = Ledger::new(t.conversation());
    let items = ledger.recall_order(&ledger.view);
    if items.is_empty() {
        return Err(MfError::refused(
            format!("`{}` holds no entries to summarize", t.display()),
            Some("pass a chat JSONL span or a session file".into()),
        )
        .into());
    }
    let spans: Vec<Span> =
        fold::plan::rollup_groups(&ledger, &items, settings.policy.max_span_tokens)
            .into_iter()
            .map(|g| Span::of(&ledger, g))
            .collect();
    let costing = Costing {
        builtin: matches!(settings.model, ModelChoice::Extractive),
        pricing: settings.pricing.as_ref(),
        token_ratio: settings.token_ratio,
        tier: settings.tiers.tier,
    };
    let instruction = settings.instruction.as_deref();
    let estimates: Vec<(u64, u64)> = spans
        .iter()
        .map(|s| Costing::estimate(&settings.policy, s, instruction))
        .collect();
    let mut out = SummarizeRecord::new(&model);
    if check_cost(
        settings,
        &costing,
        &estimates,
        items.len(),
        &spans,
        &mut out,
    )? {
        render::summarize::write(&out, json)?;
        return Ok(ExitStatus::Success);
    }
    let calls = Semaphore::new(settings.jobs);
    let caller = Caller {
        summarizer: summarizer.as_ref(),
        interrupt,
        calls: &calls,
        redactor: &redactor,
    };
    let rules = Rules {
        policy: &settings.policy,
        instruction,
        audit: AuditRules {
            min_retention: settings.audit.min_retention,
            strict: settings.audit.strict,
            count_tool_results: settings.audit.count_tool_results,
            retry_lossy: settings.audit.retry_lossy,
            allow_inventions: settings.audit.allow_inventions,
            panic_on: crate::settings::debug_panic_on(),
        },
    };
    let scrub = settings.redact.then_some(&redactor);
    let none = Arc::new(Vec::new());
    let spinner = ui.spinner(format!(
        "{}: summarizing {} entries with {model}",
        t.display(),
        items.len()
    ));
    let (t_ref, ledger_ref, rules_ref, none_ref) = (&t, &ledger, &rules, &none);
    let asked = call::join_all(spans.iter().map(|span| async move {
        call::ask_span(t_ref, ledger_ref, span, scrub, rules_ref, caller, none_ref).await
    }))
    .await;
    spinner.finish_and_clear();
    let asked: Vec<call::Asked> = asked.into_iter().collect::<Result<_>>()?;
    if interrupt.received().is_some() {
        return Err(MfError::Interrupted.into());
    }
    judge(asked, &costing, &model, &mut out);
    let status = match &out.failure {
        Some(e) => {
            render::error(&anyhow::anyhow!(e.message.clone()), &[]);
            crate::error::classify(&anyhow::Error::new(e.clone()))
        }
        None if out.accepted => ExitStatus::Success,
        None => {
            render::summarize::declined(ui, &out);
            ExitStatus::Failure
        }
    };
    render::summarize::write(&out, json)?;
    Ok(status)
}

/// `--max-cost` (refused before any call when the estimate is over it) and `--dry-run` (the
/// estimate in `out`; `true`: nothing is to be called).
fn check_cost(
    settings: &CompactSettings,
    costing: &Costing<'_>,
    estimates: &[(u64, u64)],
    entries: usize,
    spans: &[Span],
    out: &mut SummarizeRecord,
) -> Result<bool> {
    if !(settings.dry_run || settings.max_cost.is_some()) {
        return Ok(false);
    }
    let model = out.model.clone();
    let total: Option<f64> = if costing.builtin {
        Some(0.0)
    } else {
        settings
            .pricing
            .as_ref()
            .map(|p| estimates.iter().map(|&e| p.usd(costing.billed(e))).sum())
    };
    if let Some(max) = settings.max_cost.filter(|_| !settings.dry_run) {
        let Some(total) = total else {
            return Err(MfError::refused(
                format!("no price is known for `{model}`, so `--max-cost` cannot be checked"),
                Some("pass --price-in and --price-out (USD per million tokens)".into()),
            )
            .into());
        };
        if total > max {
            return Err(MfError::refused(
                format!(
                    "the estimated cost of {} call{} is ${}, over `--max-cost {max}`; nothing was called",
                    spans.len(),
                    if spans.len() == 1 { "" } else { "s" },
                    render::usd(total)
                ),
                Some("raise --max-cost, or use --dry-run to see the estimate".into()),
            )
            .into());
        }
    }
    if settings.dry_run {
        let (tin, tout) = estimates
            .iter()
            .fold((0, 0), |(a, b), &(i, o)| (a + i, b + o));
        let tin = costing.billed((tin, 0)).input;
        let tout = costing.billed((0, tout)).output;
        out.cost_usd = total;
        out.reason = SummarizeReason::DryRun {
            entries,
            from_turn: spans.first().map_or(0, |s| s.from_turn),
            to_turn: spans.last().map_or(0, |s| s.to_turn),
            calls: spans.len(),
            model,
            tokens_in: tin,
            tokens_out: tout,
            cost: total,
        };
        return Ok(true);
    }
    Ok(false)
}

/// What the replies come to: every chunk's audit, the joined text when every chunk was
/// accepted, the usage and cost of all the calls.
fn judge(asked: Vec<call::Asked>, costing: &Costing<'_>, model: &str, out: &mut SummarizeRecord) {
    let mut texts: Vec<String> = Vec::new();
    let mut usage: Option<UsageRecord> = None;
    for a in asked {
        out.calls += a.calls.len();
        for &(u, est) in &a.calls {
            if let Some(u) = u {
                let prev = usage.unwrap_or(UsageRecord {
                    input_tokens: 0,
                    output_tokens: 0,
                });
                usage = Some(UsageRecord {
                    input_tokens: prev.input_tokens + u.input_tokens,
                    output_tokens: prev.output_tokens + u.output_tokens,
                });
            }
            if let Some(c) = costing.cost_of(est, u) {
                out.cost_usd = Some(out.cost_usd.unwrap_or(0.0) + c.usd);
            }
        }
        let mut chunk = SummarizeChunk {
            from_turn: a.span.from_turn,
            to_turn: a.span.to_turn,
            entry_count: a.span.items.len(),
            accepted: false,
            reason: ChunkOutcome::Pending,
            audit: None,
        };
        chunk.audit = a.audit_json;
        let (text, usage) = match a.judged {
            Judged::Failed(e) => {
                chunk.reason = ChunkOutcome::Failed(e.message.clone());
                out.chunks.push(chunk);
                out.failure.get_or_insert(e);
                continue;
            }
            Judged::Declined { faults, .. } => {
                chunk.reason = ChunkOutcome::Lossy(faults);
                out.chunks.push(chunk);
                continue;
            }
            Judged::Kept { text, usage } => (text, usage),
        };
        let d = summary::draft(
            &a.span,
            String::new(),
            summary::Signed {
                model,
                reach: None,
                now_ms: 0,
                tail_line: None,
            },
            &text,
            usage,
            Vec::new(),
        );
        chunk.accepted = true;
        chunk.reason = ChunkOutcome::Accepted {
            entries: a.span.items.len(),
            from_turn: a.span.from_turn,
            to_turn: a.span.to_turn,
            chars: d.chars(),
        };
        out.chunks.push(chunk);
        texts.push(d.content);
    }
    out.usage = usage;
    if out.chunks.len() == 1 {
        out.audit = out.chunks[0].audit.clone();
    }
    out.reason = SummarizeReason::Chunks(out.chunks.iter().map(|c| c.reason.clone()).collect());
    if !out.chunks.iter().any(|c| c.reason.declined()) {
        out.accepted = true;
        out.summary = Some(texts.join("\n\n"));
    }
}
