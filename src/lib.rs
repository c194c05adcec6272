//! mf folds the older turns of a JSONL conversation into summary entries appended to the same
//! file; nothing is deleted, and a summary's coverage record (the exact lines it stands for,
//! with a digest of their bytes) is what hides the originals from recall.
//!
//! Layers, lowest first (a module imports only from layers below it):
//! `text` (boundary-safe slicing), `entry`, `digest` (domain types and hashes) → `transcript` (the file: formats, reading,
//! appending) and `fold` (the pure engine) and `redact` → `summarizer`, `http`, `model` →
//! `decision` (the output contract) → `settings` (flags, env, config; the only env reader) →
//! `render` (the only printer) → `commands` (glue) → this `run`. `main` is a thin shell.

pub mod call;
pub mod cli;
pub mod commands;
pub mod decision;
pub mod digest;
pub mod entry;
pub mod error;
pub mod exit_status;
pub mod fold;
pub mod http;
pub mod interrupt;
pub mod model;
pub mod redact;
pub mod render;
pub mod settings;
pub mod summarizer;
pub mod text;
pub mod transcript;

use std::sync::Arc;

use anyhow::Result;
use tokio::sync::Semaphore;

use crate::cli::{Cli, Command};
use crate::commands::compact::{self, Compaction, system_now_ms};
use crate::decision::DecisionRecord;
use crate::error::{classify, failure_kind, hints};
use crate::exit_status::ExitStatus;
use crate::interrupt::Interrupt;
use crate::redact::Redactor;
use crate::render::Ui;
use crate::settings::{CompactSettings, ModelChoice, UiSettings};

/// Run one command line. Errors that end the whole run come back as `Err`; per-file errors of
/// `compact` are printed (and, with `--json`, recorded) and folded into the exit status.
pub fn run(cli: Cli) -> Result<ExitStatus> {
    let interrupt = Interrupt::install();
    let ui = Ui::new(UiSettings::resolve(cli.quiet, cli.no_progress, cli.verbose));
    let config = cli.config.as_deref();
    match cli.command {
        Command::Compact(args) => {
            let mut settings = CompactSettings::resolve(*args, config)?;
            settings.read.cache = settings::cache_options(cli.no_cache);
            interrupt.graceful();
            let key = match &settings.model {
                ModelChoice::Remote(r) => r.key_value(),
                ModelChoice::Extractive => None,
            };
            let summarizer = compact::summarizer_for(&settings, ui)?;
            let in_flight = summarizer
                .parallelism()
                .map_or(settings.jobs, |p| p.min(settings.jobs));
            let ctx = Arc::new(Compaction {
                summarizer,
                now_ms: system_now_ms,
                ui,
                interrupt: interrupt.clone(),
                calls: Arc::new(Semaphore::new(in_flight)),
                redactor: Redactor::new(key),
            });
            let results = block_on(compact::run(&settings, ctx))??;
            finish_compact(&settings, &ui, &interrupt, results)
        }
        Command::Summarize(args) => {
            let (settings, json) = commands::summarize::settings(*args, config)?;
            interrupt.graceful();
            block_on(commands::summarize::summarize(
                &settings, json, ui, &interrupt,
            ))?
        }
        Command::Recall(args) => {
            let cache = settings::cache_options(cli.no_cache);
            commands::recall::recall(&args, cache.as_ref(), &ui).map(|()| ExitStatus::Success)
        }
        Command::Expand(args) => {
            if args.restore {
                interrupt.graceful();
            }
            commands::expand::expand(&args, &ui, &interrupt).map(|()| ExitStatus::Success)
        }
        Command::Explain(args) => {
            let config = settings::load_config(config)?;
            let cache = settings::cache_options(cli.no_cache);
            commands::explain::explain(&args, &config, cache.as_ref(), &ui)
                .map(|()| ExitStatus::Success)
        }
        Command::Verify(args) => commands::verify::verify(&args, &ui),
        Command::Models(args) => {
            commands::models::models(args.json, &ui)?;
            Ok(ExitStatus::Success)
        }
        Command::Sessions(args) => {
            let cache = settings::cache_options(cli.no_cache);
            commands::sessions::sessions(&args, cache.as_ref(), &ui)
        }
        Command::Hook(args) => {
            let cache = settings::cache_options(cli.no_cache);
            commands::hook::hook(&args, cache.as_ref(), &ui)
        }
        Command::Completions(args) => {
            commands::completions::completions(&args)?;
            Ok(ExitStatus::Success)
        }
        Command::Man(args) => {
            commands::man::man(&args)?;
            Ok(ExitStatus::Success)
        }
    }
}

/// Print every file's record (errors included) and say what the run amounts to.
fn finish_compact(
    settings: &CompactSettings,
    ui: &Ui,
    interrupt: &Interrupt,
    results: Vec<Result<DecisionRecord>>,
) -> Result<ExitStatus> {
    let mut status = ExitStatus::Success;
    let mut records = Vec::with_capacity(results.len());
    let single = results.len() == 1;
    for (file, result) in settings.files.iter().zip(results) {
        match result {
            Ok(r) => {
                if r.degraded && !settings.allow_degraded {
                    status = status.worst(ExitStatus::NotCompacted);
                }
                records.push(r);
            }
            Err(e) => {
                let code = match classify(&e) {
                    ExitStatus::Interrupted(_) => {
                        ExitStatus::Interrupted(interrupt.received().unwrap_or(2))
                    }
                    other => other,
                };
                // --allow-degraded accepts an outage, never a setup error: a base URL that never
                // answered (wrong port or host) keeps its 3.
                let kind = failure_kind(&e);
                let degraded = matches!(kind, "summarizer-outage" | "summarizer-error");
                if !(code == ExitStatus::NotCompacted && settings.allow_degraded && degraded) {
                    status = status.worst(code);
                }
                if !matches!(code, ExitStatus::Interrupted(_)) {
                    render::error(&e, &hints(&e));
                }
                if settings.json || !single {
                    records.push(DecisionRecord::error(
                        &file.display().to_string(),
                        e.to_string(),
                        code.code(),
                        hints(&e),
                        kind,
                    ));
                }
            }
        }
    }
    if let Some(sig) = interrupt.received() {
        status = ExitStatus::Interrupted(sig);
        let written: Vec<String> = records
            .iter()
            .filter(|r| r.written)
            .map(|r| {
                format!(
                    "{} line{} to {}",
                    r.lines_appended,
                    if r.lines_appended == 1 { "" } else { "s" },
                    r.output.as_deref().unwrap_or(&r.file)
                )
            })
            .collect();
        ui.note(&format!(
            "interrupted by {}: {}",
            interrupt::name(sig),
            if written.is_empty() {
                "nothing was written".to_string()
            } else {
                format!(
                    "wrote {} (complete); nothing else was written",
                    written.join(", ")
                )
            }
        ));
    }
    // What was written stands even if stdout is closed: printing comes last.
    if let Err(e) = render::decisions(ui, &records, settings.json, &settings.records_to)
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(e.into());
    }
    Ok(status)
}

/// Run async work to completion on a runtime of this thread.
fn block_on<T>(work: impl std::future::Future<Output = T>) -> Result<T> {
    // The blocking pool runs the built-in summarizer and the audits: no more threads than
    // processors (each thread would keep its own heap of freed span text).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(std::thread::available_parallelism().map_or(1, |n| n.get()))
        .build()?;
    Ok(rt.block_on(work))
}
