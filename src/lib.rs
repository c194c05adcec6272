//! mf folds the older turns of a JSONL conversation into summary entries appended to the same
//! file; nothing is deleted, and a summary's coverage record (the exact lines it stands for,
//! with a digest of their bytes) is what hides the originals from recall.
//!
//! Layers, lowest first (a module imports only from layers below it):
//! `text` (boundary-safe slicing), `entry`, `digest` (domain types and hashes) → `transcript` (the file: formats, reading,
//! appending) and `fold` (the pure engine) and `redact` → `summarizer`, `http`, `model` →
//! `decision` (the output contract) → `settings` (flags, env, config; the only env reader) →
//! `render` (the only printer) → `view` (what read-only commands share) → `commands` (glue, one
//! module per subcommand, none importing another) → this `run`, the command table. `main` is a
//! thin shell.

pub mod call;
pub mod cli;
pub mod clock;
pub mod commands;
pub mod decision;
pub mod digest;
pub mod entry;
pub mod error;
pub mod eval;
pub mod exit_status;
pub mod fold;
pub mod http;
pub mod interrupt;
pub mod json_span;
pub mod model;
pub mod own_file;
pub mod redact;
pub mod render;
pub mod search;
pub mod settings;
pub mod summarizer;
pub mod text;
pub mod transcript;
pub mod view;

use anyhow::Result;

use crate::cli::{Cli, Command};
use crate::exit_status::ExitStatus;
use crate::interrupt::Interrupt;
use crate::render::Ui;
use crate::settings::UiSettings;

/// Run one command line. Errors that end the whole run come back as `Err`; per-file errors of
/// `compact` are printed (and, with `--json`, recorded) and folded into the exit status.
pub fn run(cli: Cli) -> Result<ExitStatus> {
    let interrupt = Interrupt::install();
    let ui = Ui::new(UiSettings::resolve(cli.quiet, cli.no_progress, cli.verbose));
    let config = cli.config.as_deref();
    match cli.command {
        Command::Compact(args) => {
            commands::compact::command(*args, config, cli.no_cache, ui, &interrupt)
        }
        Command::Summarize(args) => {
            let (settings, json) = commands::summarize::settings(*args, config)?;
            interrupt.graceful();
            commands::block_on(commands::summarize::summarize(
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
        Command::Search(args) => {
            let cache = settings::cache_options(cli.no_cache);
            commands::search::search(&args, cache.as_ref(), &ui)
        }
        Command::Eval(args) => {
            interrupt.graceful();
            // The folds are compact's own, handed over here: commands never import each other.
            // (Without progress displays: they would name the private copies.)
            let compact = |s: &settings::CompactSettings| {
                commands::compact::records(s, ui.without_progress(), &interrupt)
            };
            commands::eval::eval(*args, config, ui, &interrupt, &compact)
        }
        Command::Mcp(args) => commands::mcp::serve(&args),
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
