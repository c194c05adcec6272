//! `TranscriptError`: everything that can be wrong with a transcript file, with file and line.

use std::path::PathBuf;

use thiserror::Error;

use super::format::kind::{Detected, Format};

#[derive(Debug, Error)]
pub enum TranscriptError {
    #[error("cannot read `{path}`: {source}")]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("`{path}` is a directory, not a transcript file")]
    IsDirectory { path: PathBuf },
    #[error("`{path}` is {kind}, not a regular file; mf reads and appends to regular files only")]
    NotRegular { path: PathBuf, kind: &'static str },
    #[error("`{path}` is a symbolic link to `{target}`, which does not exist")]
    DanglingLink { path: PathBuf, target: PathBuf },
    #[error("{path}:{line}:{column}: not valid JSON: {message}")]
    Malformed {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{path}:{line}: {why}")]
    NotMessage {
        path: PathBuf,
        line: usize,
        why: String,
    },
    #[error("{path}: this is {what}")]
    Refused { path: PathBuf, what: &'static str },
    /// A file read as `told` (`--from`) whose lines say it is something else (`found`, or
    /// nothing mf knows); `empty`: the reader found no entry of `told` in it.
    #[error("{}", wrong_format(path, *told, *found, *empty))]
    WrongFormat {
        path: PathBuf,
        told: Format,
        found: Option<Detected>,
        empty: bool,
    },
    #[error(
        "{path}:{line}: the last line is incomplete ({bytes} bytes at byte offset {offset} with no newline, not valid JSON); another program may still be writing it. Nothing was appended onto it"
    )]
    Torn {
        path: PathBuf,
        line: usize,
        offset: u64,
        bytes: usize,
    },
    #[error(
        "`{path}` ends in the middle of a line ({bytes} bytes since the last newline) and stayed so for {waited_ms} ms: another program is writing it. Nothing was written"
    )]
    MidLine {
        path: PathBuf,
        bytes: u64,
        waited_ms: u64,
    },
    #[error(
        "`{path}` changed while mf was working ({what}); nothing was written. Run the command again"
    )]
    Changed { path: PathBuf, what: String },
    #[error(
        "`{path}` is {format} in use: {why}. mf does not write to a live session; nothing was written"
    )]
    Live {
        path: PathBuf,
        format: &'static str,
        why: String,
    },
    #[error("cannot lock `{path}`: {source}")]
    Lock {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write `{path}`: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("`{path}` is {format}, which cannot show what this would leave: {why}")]
    Unexpressible {
        path: PathBuf,
        format: &'static str,
        why: String,
    },
    #[error(
        "standard input is longer than mf's bound of {} (MF_STDIN_LIMIT); mf stopped reading it there, and nothing of it was kept", crate::text::bound(*.limit)
    )]
    StdinTooLarge { limit: u64 },
    #[error(
        "standard input does not fit in {dir}: after {read} bytes of it, {free} bytes are free there, and mf leaves at least {} free for other programs; nothing of it was kept", crate::text::human_bytes(*.reserve)
    )]
    StdinNoSpace {
        dir: String,
        read: u64,
        free: u64,
        reserve: u64,
    },
    #[error("{message}")]
    StdinSetting { message: String },
    #[error(
        "interrupted ({}) while copying standard input; nothing of it was kept", crate::interrupt::name(*.signal)
    )]
    StdinInterrupted { signal: i32 },
    #[error("cannot copy standard input to {dir}: {source}")]
    Spool { dir: String, source: std::io::Error },
    #[error("cannot open `{path}` for appending: {source}")]
    NotWritable {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl TranscriptError {
    /// A hint for the person reading the error, when there is a useful one.
    pub fn hint(&self) -> Option<String> {
        match self {
            TranscriptError::Open { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                Some("check the path; mf works on an existing JSONL transcript".into())
            }
            TranscriptError::Malformed { line, .. } | TranscriptError::NotMessage { line, .. } => Some(format!(
                "fix line {line} by hand (mf never rewrites lines it did not write); deleting a line is safe: summaries whose lines change are no longer honoured, they never hide the wrong message"
            )),
            TranscriptError::Torn { .. } | TranscriptError::MidLine { .. } => Some(
                "if no program is still writing the file, complete or remove the last line by hand, then run mf again"
                    .into(),
            ),
            TranscriptError::Live { .. } => Some(
                "let the agent finish (or quit it), then run mf again: this exit status (75) means \"try again later\"; pass --force to write anyway"
                    .into(),
            ),
            TranscriptError::NotWritable { .. } => Some(
                "compact in place needs write access; use `--output PATH` to write a compacted copy instead"
                    .into(),
            ),
            TranscriptError::Refused { .. }
            | TranscriptError::WrongFormat {
                found: None | Some(Detected::Refused(_)),
                ..
            } => Some(
                "mf compacts one conversation per file: Claude Code, Codex and pi sessions, or chat JSONL with one message per line"
                    .into(),
            ),
            TranscriptError::StdinTooLarge { .. } => Some(
                "raise the bound with the environment variable MF_STDIN_LIMIT (a size: `4GiB`, `500MiB`, bytes), or give the transcript's path instead of `-` (a file is read where it is, never copied)"
                    .into(),
            ),
            TranscriptError::StdinNoSpace { .. } | TranscriptError::Spool { .. } => Some(
                "point TMPDIR at a directory with room, or give the transcript's path instead of `-` (a file is read where it is, never copied)"
                    .into(),
            ),
            TranscriptError::StdinSetting { .. } => Some(
                "MF_STDIN_LIMIT is a size in bytes, optionally with a unit: `1000`, `64KiB`, `500MiB`, `4GiB` (K, M, G, T and KB, MB… are read as 1024-based too)".into(),
            ),
            _ => None,
        }
    }
}

fn wrong_format(
    path: &std::path::Path,
    told: Format,
    found: Option<Detected>,
    empty: bool,
) -> String {
    let shown = if path.as_os_str() == "-" {
        "<stdin>".to_string()
    } else {
        path.display().to_string()
    };
    let read = format!("{shown}: read as {} (--from {})", told.label(), told.name());
    let head = if empty {
        format!("{read}, it holds no {} entries", told.label())
    } else {
        format!("{read}, it is misread")
    };
    match found {
        Some(Detected::Format(f)) => format!(
            "{head}; it looks like {}: drop --from or use --from {}",
            f.describe(),
            f.name()
        ),
        Some(Detected::Refused(what)) => format!("{head}; it looks like {what}"),
        None => format!(
            "{head}, and no line of it looks like a format mf reads (chat, Claude Code, Codex, pi)"
        ),
    }
}
