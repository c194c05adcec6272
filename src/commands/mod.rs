//! The subcommands: glue from settings to engine to renderer, one module per command.

pub mod compact;
pub mod completions;
pub mod eval;
pub mod expand;
pub mod explain;
pub mod hook;
pub mod man;
pub mod mcp;
pub mod models;
pub mod recall;
pub mod search;
pub mod sessions;
pub mod summarize;
pub mod verify;

/// Run async work to completion on a runtime of this thread.
pub fn block_on<T>(work: impl std::future::Future<Output = T>) -> anyhow::Result<T> {
    // The blocking pool runs the built-in summarizer and the audits: no more threads than
    // processors (each thread would keep its own heap of freed span text).
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(std::thread::available_parallelism().map_or(1, |n| n.get()))
        .build()?;
    Ok(rt.block_on(work))
}
