//! The subcommands: glue from settings to engine to renderer, one module per command.

pub mod compact;
pub mod completions;
pub mod expand;
pub mod explain;
pub mod hook;
pub mod man;
pub mod models;
pub mod recall;
pub mod sessions;
pub mod summarize;
pub mod verify;
