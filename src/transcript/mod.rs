//! `Transcript`: a transcript file as mf reads it — the only module that knows file formats and
//! touches transcript files. Reading builds a compact index of entries (where each line is, who
//! spoke, how long, which tool calls it opens and answers, a hash of its bytes) without keeping
//! the text; the text of an entry is read back from the file when it is needed. Every original
//! line is kept byte for byte: mf only appends.

mod append;
mod build;
mod copy;
mod error;
pub mod format;
mod read;
pub mod wire;

use std::fs::File;
use std::io::{Read, Seek};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub use append::{Appended, Locked, open_for_append};
pub use build::{Note, NoteKind, PieceAt};
pub use copy::{OutputTarget, write_copy};
pub use error::TranscriptError;
pub use format::{Detected, Format};

use crate::entry::{Claim, Conversation, Draft, Entry, Link, NONE, Record};
use build::Build;
use format::chat::{self, ChatReader};

/// Where a transcript's bytes come from.
#[derive(Debug)]
pub struct Source {
    pub path: PathBuf,
    pub file: File,
    /// Device and inode, to notice a file replaced under mf.
    pub identity: (u64, u64),
}

/// What kind of file a path is, for refusing anything but a regular file before reading it.
fn kind_of(meta: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_file() {
        None
    } else if t.is_dir() {
        Some("a directory")
    } else if t.is_fifo() {
        Some("a FIFO (named pipe)")
    } else if t.is_socket() {
        Some("a socket")
    } else if t.is_char_device() {
        Some("a character device")
    } else if t.is_block_device() {
        Some("a block device")
    } else {
        Some("not a regular file")
    }
}

/// Check that `path` is an existing regular file (following links), before opening it: a FIFO
/// would block, a device would never end.
pub fn check_regular(path: &Path) -> Result<std::fs::Metadata, TranscriptError> {
    match std::fs::metadata(path) {
        Ok(meta) => match kind_of(&meta) {
            None => Ok(meta),
            Some("a directory") => Err(TranscriptError::IsDirectory {
                path: path.to_path_buf(),
            }),
            Some(kind) => Err(TranscriptError::NotRegular {
                path: path.to_path_buf(),
                kind,
            }),
        },
        Err(e) => {
            if e.kind() == std::io::ErrorKind::NotFound
                && let Ok(target) = std::fs::read_link(path)
            {
                return Err(TranscriptError::DanglingLink {
                    path: path.to_path_buf(),
                    target,
                });
            }
            Err(TranscriptError::Open {
                path: path.to_path_buf(),
                source: e,
            })
        }
    }
}

impl Source {
    /// Open a transcript file for reading.
    pub fn open(path: &Path) -> Result<Self, TranscriptError> {
        check_regular(path)?;
        let file = File::open(path).map_err(|source| TranscriptError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_file(path, file)
    }

    /// A source over an already open file (checked again: it must be a regular file).
    pub fn from_file(path: &Path, file: File) -> Result<Self, TranscriptError> {
        let meta = file.metadata().map_err(|source| TranscriptError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        if let Some(kind) = kind_of(&meta) {
            return Err(TranscriptError::NotRegular {
                path: path.to_path_buf(),
                kind,
            });
        }
        Ok(Source {
            path: path.to_path_buf(),
            file,
            identity: (meta.dev(), meta.ino()),
        })
    }

    /// Standard input, copied to an unnamed temporary file so it can be read back at random.
    pub fn stdin() -> Result<Self, TranscriptError> {
        let path = PathBuf::from("-");
        let io = |source| TranscriptError::Open {
            path: PathBuf::from("<stdin>"),
            source,
        };
        let mut file = tempfile::tempfile().map_err(io)?;
        std::io::copy(&mut std::io::stdin().lock(), &mut file).map_err(io)?;
        file.rewind().map_err(io)?;
        Ok(Source {
            path,
            file,
            identity: (0, 0),
        })
    }
}

/// How the file ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// Empty, or ends with a newline.
    Clean,
    /// The last line is complete (or blank) but has no newline: mf adds one before appending.
    Unterminated,
    /// The last line is incomplete (no newline, not valid JSON). `mf`: it is a line mf began
    /// (a crash during an append), which mf closes with a newline before appending; otherwise
    /// another program may be writing it, and nothing is appended onto it.
    Torn {
        line: usize,
        offset: u64,
        bytes: usize,
        mf: bool,
    },
}

/// Options for reading.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOptions {
    /// Read as this format instead of detecting it.
    pub format: Option<Format>,
}

/// A read transcript: its index, and the file to read entries back from.
#[derive(Debug)]
pub struct Transcript {
    pub path: PathBuf,
    pub format: Format,
    pub entries: Vec<Entry>,
    pub links: Vec<Link>,
    pub tool_ids: Vec<u64>,
    pub claims: Vec<Claim>,
    pub records: Vec<Record>,
    pub notes: Vec<Note>,
    /// Models that wrote the conversation (from assistant lines), in order of first appearance.
    pub agent_models: Vec<String>,
    pub tail: Tail,
    /// Bytes read.
    pub len: u64,
    /// Physical lines read.
    pub lines: u32,
    pub identity: (u64, u64),
    pieces: Vec<build::PieceRun>,
    file: File,
}

/// Read and index a transcript file (`-` reads standard input).
pub fn read(path: &Path, opts: ReadOptions) -> Result<Transcript, TranscriptError> {
    let src = if path.as_os_str() == "-" {
        Source::stdin()?
    } else {
        Source::open(path)?
    };
    read_source(src, opts)
}

/// Read and index from an open source.
pub fn read_source(mut src: Source, opts: ReadOptions) -> Result<Transcript, TranscriptError> {
    // From the start, whatever the handle has read before; the first block decides the format.
    src.file.rewind().map_err(|source| TranscriptError::Open {
        path: src.path.clone(),
        source,
    })?;
    let mut head = Vec::with_capacity(1 << 16);
    (&mut src.file)
        .take(read::HEAD as u64)
        .read_to_end(&mut head)
        .map_err(|source| TranscriptError::Open {
            path: src.path.clone(),
            source,
        })?;
    let format = match opts.format {
        Some(f) => f,
        None => match format::detect(&head) {
            Detected::Format(f) => f,
            Detected::Refused(what) => {
                return Err(TranscriptError::Refused {
                    path: src.path.clone(),
                    what,
                });
            }
        },
    };
    let (build, tail, len) = match format {
        Format::Chat => read::read_lines(&mut src, &mut ChatReader, head)?,
        other => {
            return Err(TranscriptError::Refused {
                path: src.path.clone(),
                what: other.describe(),
            });
        }
    };
    Ok(Transcript::new(src, format, build, tail, len))
}

impl Transcript {
    fn new(src: Source, format: Format, b: Build, tail: Tail, len: u64) -> Self {
        Transcript {
            path: src.path,
            format,
            entries: b.entries,
            links: b.links,
            tool_ids: b.tool_ids,
            claims: b.claims,
            records: b.records,
            notes: b.notes,
            agent_models: b.agent_models,
            tail,
            len,
            lines: b.physical_lines,
            identity: src.identity,
            pieces: b.pieces,
            file: src.file,
        }
    }

    /// What the engine reads.
    pub fn conversation(&self) -> Conversation<'_> {
        Conversation {
            entries: &self.entries,
            links: &self.links,
            tool_ids: &self.tool_ids,
            claims: &self.claims,
            records: &self.records,
        }
    }

    /// The path as people should read it.
    pub fn display(&self) -> String {
        if self.path.as_os_str() == "-" {
            "<stdin>".into()
        } else {
            self.path.display().to_string()
        }
    }

    /// Refuse a torn last line that is not mf's own: nothing may be appended onto it.
    pub fn check_tail(&self) -> Result<(), TranscriptError> {
        match self.tail {
            Tail::Torn {
                line,
                offset,
                bytes,
                mf: false,
            } => Err(TranscriptError::Torn {
                path: self.path.clone(),
                line,
                offset,
                bytes,
            }),
            _ => Ok(()),
        }
    }

    /// Where an entry's bytes are: `(offset, length, joined to the previous piece)`.
    pub fn pieces(&self, i: usize) -> Vec<(u64, u32, bool)> {
        let e = &self.entries[i];
        let mut out = vec![(e.pos, e.len, false)];
        if e.more != NONE {
            let run = &self.pieces[e.more as usize];
            out.extend(run.more.iter().map(|p| (p.pos, p.len, p.join)));
        }
        out
    }

    /// Physical lines an entry's bytes lie on.
    pub fn physical_lines(&self, i: usize) -> Vec<u32> {
        let e = &self.entries[i];
        let mut out = vec![e.line];
        if e.more != NONE {
            out.extend(self.pieces[e.more as usize].more.iter().map(|p| p.line));
        }
        out
    }

    fn read_at(&self, pos: u64, len: u32) -> std::io::Result<Vec<u8>> {
        let mut buf = vec![0u8; len as usize];
        self.file.read_exact_at(&mut buf, pos)?;
        Ok(buf)
    }

    /// The exact original lines of an entry, each without its line end (a line rejoined from two
    /// halves is one line).
    pub fn raw_lines(&self, i: usize) -> std::io::Result<Vec<Vec<u8>>> {
        let mut out: Vec<Vec<u8>> = Vec::new();
        for (pos, len, join) in self.pieces(i) {
            let bytes = self.read_at(pos, len)?;
            match out.last_mut() {
                Some(last) if join => last.extend_from_slice(&bytes),
                _ => out.push(bytes),
            }
        }
        Ok(out)
    }

    /// An entry's lines parsed as JSON objects.
    pub fn values(&self, i: usize) -> std::io::Result<Vec<Map<String, Value>>> {
        let first_of_file = self.entries[i].pos == 0;
        let lines = self.raw_lines(i)?;
        Ok(lines
            .iter()
            .enumerate()
            .map(|(k, raw)| {
                let mut b: &[u8] = raw;
                b = b.strip_suffix(b"\r").unwrap_or(b);
                if k == 0 && first_of_file {
                    b = b.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(b);
                }
                match serde_json::from_slice::<Value>(b) {
                    Ok(Value::Object(m)) => m,
                    _ => Map::new(),
                }
            })
            .collect())
    }

    /// The model-visible text of an entry.
    pub fn text(&self, i: usize) -> std::io::Result<String> {
        let values = self.values(i)?;
        Ok(match self.format {
            Format::Chat => chat::text(&values[0]),
            _ => unreachable!("only chat is read"),
        })
    }

    /// The tool name of a tool result, when the line says it.
    pub fn tool_name(&self, i: usize) -> Option<String> {
        let values = self.values(i).ok()?;
        match self.format {
            Format::Chat => chat::tool_name(&values[0]),
            _ => None,
        }
    }

    /// The entry's id string: its own id, or `line-N`.
    pub fn id_string(&self, i: usize) -> String {
        let e = &self.entries[i];
        if e.claim != NONE {
            let id = &self.claims[e.claim as usize].id;
            if !id.is_empty() {
                return id.clone();
            }
        }
        let own = self.values(i).ok().and_then(|v| {
            v.first().and_then(|m| match m.get("id") {
                Some(Value::String(s)) if !s.is_empty() => Some(s.clone()),
                Some(Value::Number(n)) => Some(n.to_string()),
                _ => None,
            })
        });
        own.unwrap_or_else(|| format!("line-{}", e.line))
    }

    /// The entry as a chat message a model would be sent.
    pub fn chat_message(&self, i: usize) -> std::io::Result<Value> {
        let values = self.values(i)?;
        Ok(match self.format {
            Format::Chat => chat::chat_message(&values[0]),
            _ => unreachable!("only chat is read"),
        })
    }

    /// The lines to append for these drafts, in this file's format.
    pub fn draft_lines(&self, drafts: &[Draft]) -> std::io::Result<Vec<String>> {
        let mut out = Vec::new();
        for d in drafts {
            let stub_of = match d.stub_of {
                Some(i) => Some(self.values(i as usize)?.remove(0)),
                None => None,
            };
            out.push(match self.format {
                Format::Chat => chat::draft_line(d, stub_of.as_ref()),
                _ => unreachable!("only chat is written"),
            });
        }
        Ok(out)
    }

    /// The lines that retract a summary, in this file's format.
    pub fn retract_lines(
        &self,
        _summary: usize,
        kind: &crate::entry::RecordKind,
        at_ms: u64,
    ) -> std::io::Result<Vec<String>> {
        Ok(match self.format {
            Format::Chat => vec![wire::record_line(kind, at_ms)],
            _ => unreachable!("only chat is written"),
        })
    }

    /// Entries whose id hashes to `hash`.
    pub fn with_id_hash(&self, hash: u64) -> impl Iterator<Item = usize> + '_ {
        self.entries
            .iter()
            .enumerate()
            .filter(move |(_, e)| e.id == hash)
            .map(|(i, _)| i)
    }

    /// Find entries by a user's address: an id, or `@N` / `line:N` for the entry on line N.
    pub fn find(&self, address: &str) -> Vec<usize> {
        let line = address
            .strip_prefix('@')
            .or_else(|| address.strip_prefix("line:"))
            .and_then(|n| n.parse::<u32>().ok());
        if let Some(n) = line {
            return self
                .entries
                .iter()
                .position(|e| e.line == n)
                .into_iter()
                .collect();
        }
        let h = crate::digest::id_hash(address);
        self.with_id_hash(h)
            .filter(|&i| self.id_string(i) == address)
            .collect()
    }

    /// Whether any entry has this id.
    pub fn has_id(&self, id: &str) -> bool {
        !self.find(id).is_empty()
    }

    /// Re-read the file from where this read ended: the lines appended since (only what is new).
    pub fn read_grown(&self, file: &File) -> std::io::Result<Vec<u8>> {
        let size = file.metadata()?.len();
        if size <= self.len {
            return Ok(Vec::new());
        }
        let mut buf = vec![0u8; (size - self.len) as usize];
        file.read_exact_at(&mut buf, self.len)?;
        Ok(buf)
    }

    /// Check, against the file as it is now, that the entries' bytes are still the bytes read.
    pub fn still_holds(&self, file: &File, entries: &[usize]) -> std::io::Result<bool> {
        for &i in entries {
            let mut hashes = Vec::new();
            let mut joined: Option<Vec<u8>> = None;
            for (pos, len, join) in self.pieces(i) {
                let mut buf = vec![0u8; len as usize];
                file.read_exact_at(&mut buf, pos)?;
                if join {
                    joined.get_or_insert_with(Vec::new).extend_from_slice(&buf);
                } else {
                    hashes.push(crate::digest::line_hash(&buf));
                    joined = Some(buf);
                }
            }
            let e = &self.entries[i];
            let h = if e.more != NONE && self.pieces[e.more as usize].more.iter().any(|p| p.join) {
                crate::digest::line_hash(joined.as_deref().unwrap_or_default())
            } else {
                crate::digest::pieces_hash(&hashes)
            };
            if h != e.hash {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests;
