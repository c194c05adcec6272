//! The `mf` binary: parse the command line, run it, turn the outcome into an exit code.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = mf::cli::Cli::parse();
    match mf::run(cli) {
        Ok(status) => ExitCode::from(status.code()),
        Err(err) if mf::error::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            mf::render::error(&err, &mf::error::hints(&err));
            ExitCode::from(mf::error::classify(&err).code())
        }
    }
}
