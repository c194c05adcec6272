//! mf folds the older turns of a JSONL conversation into one summary entry, appended to the same
//! file; nothing is deleted, and the summary's coverage record (the exact ids it stands for) is
//! what hides the originals from recall.
//!
//! Code map: `cli` (flags) → `settings` (flags + env resolved; the only env reader) →
//! `commands` (glue) → `transcript` (the file format; the only module that reads and appends
//! lines) → `fold` (the pure engine: ledger, plan, summary, prompt, budget) → `summarizer`
//! (extractive and, later, HTTP models) → `decision` (the output contract) → `render` (the only
//! module that prints). `main` is a thin shell around [`run`].

pub mod cli;
pub mod commands;
pub mod decision;
pub mod entry;
pub mod error;
pub mod exit_status;
pub mod fingerprint;
pub mod fold;
pub mod http;
pub mod model;
pub mod render;
pub mod settings;
pub mod summarizer;
pub mod transcript;

use std::sync::Arc;

use anyhow::Result;

use crate::cli::{Cli, Command};
use crate::commands::compact::{self, Compaction, system_now_ms};
use crate::error::{MfError, classify, hints};
use crate::exit_status::ExitStatus;
use crate::render::Ui;
use crate::settings::{CompactSettings, UiSettings};

/// Run one command line. Errors that end the whole run come back as `Err`; per-file errors of a
/// multi-file `compact` are printed here and folded into the exit status.
pub fn run(cli: Cli) -> Result<ExitStatus> {
    let ui = Ui::new(UiSettings::resolve(cli.quiet, cli.no_progress, cli.verbose));
    let config = cli.config.as_deref();
    match cli.command {
        Command::Compact(args) => {
            let settings = CompactSettings::resolve(*args, config)?;
            let summarizer = compact::summarizer_for(&settings, ui)?;
            let ctx = Arc::new(Compaction {
                summarizer,
                now_ms: system_now_ms,
                ui,
            });
            let results = block_on_interruptible(compact::run(&settings, ctx))??;
            let mut status = ExitStatus::Success;
            let mut records = Vec::new();
            let single = results.len() == 1;
            for result in results {
                match result {
                    Ok(r) => records.push(r),
                    Err(e) if single => return Err(e),
                    Err(e) => {
                        render::error(&e, &hints(&e));
                        status = worst(status, classify(&e));
                    }
                }
            }
            render::decisions(&ui, &records, settings.json)?;
            Ok(status)
        }
        Command::Recall(args) => commands::recall::recall(&args, &ui).map(|()| ExitStatus::Success),
        Command::Expand(args) => commands::expand::expand(&args, &ui).map(|()| ExitStatus::Success),
        Command::Explain(args) => {
            let config = settings::load_config(config)?;
            commands::explain::explain(&args, &config, &ui).map(|()| ExitStatus::Success)
        }
        Command::Models(args) => {
            commands::models::models(args.json, &ui)?;
            Ok(ExitStatus::Success)
        }
        Command::Completions(args) => {
            commands::completions::completions(&args)?;
            Ok(ExitStatus::Success)
        }
    }
}

fn worst(a: ExitStatus, b: ExitStatus) -> ExitStatus {
    let rank = |s| match s {
        ExitStatus::Success => 0,
        ExitStatus::Failure => 1,
        ExitStatus::Error => 2,
        ExitStatus::Interrupted => 3,
    };
    if rank(b) > rank(a) { b } else { a }
}

/// Run async work to completion, or stop at Ctrl-C: the work is dropped where it stands (an
/// in-flight request is abandoned; appends have no await inside them, so none is cut short).
fn block_on_interruptible<T>(work: impl std::future::Future<Output = T>) -> Result<T> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        tokio::select! {
            out = work => Ok(out),
            _ = tokio::signal::ctrl_c() => Err(MfError::Interrupted.into()),
        }
    })
}
