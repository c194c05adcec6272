//! The `mf` binary: parse the command line, run it, turn the outcome into an exit code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // A panic is a bug: reported once, as an error (exit 2), never as a bare abort.
    mf::error::capture_panics();
    // A shell asking for completions (`MF_COMPLETE=bash mf -- …`) is answered here, and mf exits.
    mf::commands::completions::answer_if_asked();
    let cli = mf::cli::Cli::parse();
    let err = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| mf::run(cli))) {
        Ok(Ok(status)) => return ExitCode::from(status.code()),
        Ok(Err(err)) if mf::error::is_broken_pipe(&err) => return ExitCode::SUCCESS,
        Ok(Err(err)) => err,
        Err(payload) => mf::error::internal(payload.as_ref(), "running mf", None).into(),
    };
    mf::render::error(&err, &mf::error::hints(&err));
    ExitCode::from(mf::error::classify(&err).code())
}
