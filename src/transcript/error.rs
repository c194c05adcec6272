//! `TranscriptError`: everything that can be wrong with a transcript file, with file and line.

use std::path::PathBuf;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum TranscriptError {
    #[error("cannot read `{path}`: {source}")]
    Open {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("`{path}` is a directory, not a transcript file")]
    IsDirectory { path: PathBuf },
    #[error("{path}:{line}: line is not valid UTF-8")]
    NotUtf8 { path: PathBuf, line: usize },
    #[error("{path}:{line}:{column}: malformed JSON: {message}")]
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
    #[error(
        "{path}:{line}: this looks like {format}, which mf does not read yet; mf reads one chat message per line (`{{\"role\": …, \"content\": …}}`)"
    )]
    Unsupported {
        path: PathBuf,
        line: usize,
        format: &'static str,
    },
    #[error(
        "{path}:{line}: the last line is incomplete ({bytes} bytes at byte offset {offset} with no newline, not valid JSON); it may still be being written. Nothing was appended onto it"
    )]
    Torn {
        path: PathBuf,
        line: usize,
        offset: u64,
        bytes: usize,
    },
    #[error(
        "`{path}` changed while mf was working ({what}); nothing was written. Run the command again"
    )]
    Changed { path: PathBuf, what: String },
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
}

impl TranscriptError {
    /// A hint for the person reading the error, when there is a useful one.
    pub fn hint(&self) -> Option<String> {
        match self {
            TranscriptError::Open { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                Some("check the path; mf works on an existing JSONL transcript".into())
            }
            TranscriptError::Malformed { line, .. } | TranscriptError::NotUtf8 { line, .. } => Some(format!(
                "fix or remove line {line}; mf never rewrites lines it did not write, so it will not repair it"
            )),
            TranscriptError::Torn { .. } => Some(
                "if no program is still writing the file, complete or remove the last line by hand, then run mf again"
                    .into(),
            ),
            _ => None,
        }
    }
}
