//! `Transcript`: a transcript file as mf reads it — the only module that knows file formats and
//! touches transcript files. Reading builds a compact index of entries (where each line is, who
//! spoke, how long, which tool calls it opens and answers, a hash of its bytes) without keeping
//! the text; the text of an entry is read back from the file when it is needed. Every original
//! line is kept byte for byte: mf only appends.

mod append;
mod build;
mod checkpoint;
mod copy;
mod error;
pub mod format;
pub mod json;
pub mod live;
mod read;
pub mod scan;
pub mod sessions;
mod spool;
pub mod wire;

use std::fs::File;
use std::io::{Read, Seek};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

pub use append::{Appended, Locked, open_for_append};
pub use build::{Note, NoteKind, PieceAt};
pub use checkpoint::CacheOptions;
pub use copy::{OutputTarget, stage, write_copy, write_prefix};
pub use error::TranscriptError;
pub use format::{Adapter, Detected, Format};
pub use live::{AgentDirs, Guard};
pub use spool::{DEFAULT_STDIN_LIMIT, RESERVE as STDIN_SPOOL_RESERVE, StdinOptions};

use crate::entry::{Claim, ClaimKind, Conversation, Draft, Entry, Link, NONE, Record};
use build::Build;
use format::{Reader, ReaderJob};

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

    /// Standard input, copied to an unnamed temporary file so it can be read back at random,
    /// within `opts`'s bounds (`spool`).
    pub fn stdin(opts: &StdinOptions) -> Result<Self, TranscriptError> {
        // A regular file on standard input says its size: over the bound, nothing is copied.
        if let (Ok(limit), Ok(st)) = (&opts.limit, rustix::fs::fstat(std::io::stdin()))
            && rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile
            && u64::try_from(st.st_size).is_ok_and(|size| size > *limit)
        {
            return Err(TranscriptError::StdinTooLarge { limit: *limit });
        }
        let file = spool::spool(&mut std::io::stdin().lock(), opts)?;
        Ok(Source {
            path: PathBuf::from("-"),
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

/// What mf writes to a transcript in one append: summaries and stubs, records, and — for an
/// agent's session — what the agent is to be shown afterwards (mf's recall after the write).
#[derive(Debug, Clone, Copy)]
pub struct Write<'a> {
    pub drafts: &'a [Draft],
    pub records: &'a [(crate::entry::RecordKind, u64)],
    /// In recall order; `None` when nothing changes what is shown.
    pub shown: Option<&'a [crate::entry::Shown]>,
    pub now_ms: u64,
    /// Estimated tokens of what was shown before (for the agent's own bookkeeping).
    pub tokens_before: u64,
}

/// Options for reading.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Read as this format instead of detecting it.
    pub format: Option<Format>,
    /// Where checkpoints are kept; `None` reads the whole file every time.
    pub cache: Option<CacheOptions>,
    /// The rule a claim's content must meet to be one mf could have written (the engine's
    /// write-time rule, `fold::frame::vet_claim`), applied on every read; a claim that fails
    /// it keeps its place as an ordinary entry, with the reason.
    pub vet: Option<ClaimVet>,
    /// How `-` (standard input) is copied: its bound and where.
    pub stdin: StdinOptions,
}

/// Judges a claim's content: `Err(why)` when mf could not have written it.
pub type ClaimVet = fn(ClaimKind, &str) -> Result<(), String>;

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
    /// Entries standing elsewhere in conversation order than in the file (see `Conversation`).
    pub placements: Vec<(u32, u32)>,
    pub notes: Vec<Note>,
    /// Models that wrote the conversation (from assistant lines), in order of first appearance.
    pub agent_models: Vec<String>,
    pub tail: Tail,
    /// Bytes read.
    pub len: u64,
    /// Physical lines read.
    pub lines: u32,
    pub identity: (u64, u64),
    /// The format's adapter: what it kept of the file for everything after reading.
    adapter: Box<dyn Adapter>,
    /// Bytes of the file that came from a checkpoint instead of being read (0: read in full).
    pub from_checkpoint: u64,
    pieces: Vec<build::PieceRun>,
    file: File,
}

/// Read and index a transcript file (`-` reads standard input).
pub fn read(path: &Path, opts: &ReadOptions) -> Result<Transcript, TranscriptError> {
    let src = if path.as_os_str() == "-" {
        Source::stdin(&opts.stdin)?
    } else {
        Source::open(path)?
    };
    read_source(src, opts)
}

impl Transcript {
    /// Re-vet every claim's content on read by `vet`: one that fails is not mf's, whatever its
    /// checksums say (a local file has no secret to sign with, so the checksums prove nothing
    /// about who wrote a line).
    fn vet_claims(&mut self, vet: ClaimVet) {
        for k in 0..self.claims.len() {
            if self.claims[k].shape_ok.is_err() || self.claims[k].coverage.is_err() {
                continue;
            }
            let entry = self.claims[k].entry as usize;
            let verdict = match self.text(entry) {
                Ok(text) => vet(self.claims[k].kind, &text),
                Err(e) => Err(format!("its content cannot be read back: {e}")),
            };
            if let Err(why) = verdict {
                self.claims[k].shape_ok = Err(why);
            }
        }
    }
}

/// Bytes a file must grow by before a used checkpoint is replaced by a newer one.
const CHECKPOINT_STEP: u64 = 8 << 20;

/// Read with `R` from `start` (and save a checkpoint at the end when one is worth it).
fn read_with<R: Reader>(
    mut src: Source,
    format: Format,
    cache: Option<&CacheOptions>,
    mut reader: R,
    start: read::Start,
) -> Result<Transcript, TranscriptError> {
    let resumed_at = match &start {
        read::Start::After { offset, .. } => *offset,
        read::Start::Head(_) => 0,
    };
    let cache = cache.filter(|_| src.path.as_os_str() != "-");
    let handle = cache.and_then(|_| src.file.try_clone().ok());
    let path = src.path.clone();
    let (build, tail, len) = read::read_lines(&mut src, &mut reader, start, |end| {
        let (Some(c), Some(file)) = (cache, handle.as_ref()) else {
            return;
        };
        let worth = end.offset >= c.min_bytes
            && (resumed_at == 0 || end.offset - resumed_at >= CHECKPOINT_STEP.max(c.min_bytes));
        if worth {
            // A checkpoint that cannot be written is simply not there next time.
            let _ = checkpoint::save(
                c,
                &path,
                file,
                checkpoint::Prefix {
                    format,
                    build: end.build,
                    reader: end.reader,
                    line: end.line,
                    offset: end.offset,
                },
            );
        }
    })?;
    let adapter = reader.adapter(&build);
    let mut t = Transcript::new(src, format, build, tail, len, adapter);
    t.from_checkpoint = resumed_at;
    Ok(t)
}

/// Go on from a checkpoint; gives the source back when the checkpoint does not decode or check.
struct Resume<'a> {
    src: Source,
    found: checkpoint::Found,
    cache: &'a CacheOptions,
}

impl ReaderJob for Resume<'_> {
    type Out = Result<Result<Transcript, Source>, TranscriptError>;

    fn run<R: Reader>(self) -> Self::Out {
        let Resume { src, found, cache } = self;
        let format = found.format;
        match found.decode::<R>(&src.file) {
            Some(r) => {
                let start = read::Start::After {
                    build: Box::new(r.build),
                    line: r.line,
                    offset: r.offset,
                };
                read_with(src, format, Some(cache), r.reader, start).map(Ok)
            }
            None => Ok(Err(src)),
        }
    }
}

/// Read from the first block on, with the format's reader as it starts.
struct Fresh<'a> {
    src: Source,
    format: Format,
    cache: Option<&'a CacheOptions>,
    head: Vec<u8>,
}

impl ReaderJob for Fresh<'_> {
    type Out = Result<Transcript, TranscriptError>;

    fn run<R: Reader>(self) -> Self::Out {
        let start = read::Start::Head(self.head);
        read_with(self.src, self.format, self.cache, R::default(), start)
    }
}

/// Read and index from an open source.
pub fn read_source(mut src: Source, opts: &ReadOptions) -> Result<Transcript, TranscriptError> {
    if let Some(cache) = opts.cache.as_ref().filter(|_| src.path.as_os_str() != "-")
        && let Some(found) = checkpoint::find(cache, &src.path, &src.file)
        && opts.format.is_none_or(|f| f == found.format)
    {
        let resumed = found.format.with_reader(Resume { src, found, cache })?;
        match resumed {
            Ok(mut t) => {
                if let Some(told) = opts.format {
                    let head =
                        t.read_at(0, t.len.min(read::HEAD as u64) as u32)
                            .map_err(|source| TranscriptError::Open {
                                path: t.path.clone(),
                                source,
                            })?;
                    check_told(&t.path, told, format::sniff(&head), t.has_own_entries())?;
                }
                if let Some(vet) = opts.vet {
                    t.vet_claims(vet);
                }
                return Ok(t);
            }
            Err(back) => src = back,
        }
    }
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
    let sniff = format::sniff(&head);
    let format = match opts.format {
        Some(f) => f,
        None => match sniff.detected.unwrap_or(Detected::Format(Format::Chat)) {
            Detected::Format(f) => f,
            Detected::Refused(what) => {
                return Err(TranscriptError::Refused {
                    path: src.path.clone(),
                    what,
                });
            }
        },
    };
    let path = src.path.clone();
    let cache = opts.cache.as_ref();
    let read = format.with_reader(Fresh {
        src,
        format,
        cache,
        head,
    });
    let mut t = match (read, opts.format) {
        // A line the chat reader cannot take, in a file whose lines say it is something else.
        (Err(e @ TranscriptError::NotMessage { .. }), Some(told)) if sniff.detected.is_some() => {
            check_told(&path, told, sniff, false)?;
            return Err(e);
        }
        (read, _) => read?,
    };
    if let Some(told) = opts.format {
        check_told(&path, told, sniff, t.has_own_entries())?;
    }
    if let Some(vet) = opts.vet {
        t.vet_claims(vet);
    }
    Ok(t)
}

/// A file read as `told` (`--from`): refused when its lines say it is a kind mf does not read,
/// when a line says for certain it is another format (a Qwen Code session read `--from claude`
/// finds rows with Claude Code's links and nothing in them: a misread, not a transcript), and
/// when the reader found no entry of its own (`own`) while its lines say it is something else or
/// say nothing mf knows. A file of that format with no entries yet, or one with no lines, is
/// simply empty.
fn check_told(
    path: &Path,
    told: Format,
    sniff: format::Sniff,
    own: bool,
) -> Result<(), TranscriptError> {
    let refused = matches!(sniff.detected, Some(Detected::Refused(_)))
        || (sniff.conclusive && sniff.detected != Some(Detected::Format(told)));
    if !refused && (own || !sniff.lines || sniff.detected == Some(Detected::Format(told))) {
        return Ok(());
    }
    Err(TranscriptError::WrongFormat {
        path: path.to_path_buf(),
        told,
        found: sniff.detected,
        empty: !own,
    })
}

impl Transcript {
    fn new(
        src: Source,
        format: Format,
        b: Build,
        tail: Tail,
        len: u64,
        adapter: Box<dyn Adapter>,
    ) -> Self {
        Transcript {
            path: src.path,
            format,
            entries: b.entries,
            links: b.links,
            tool_ids: b.tool_ids,
            claims: b.claims,
            records: b.records,
            placements: b.placements,
            notes: b.notes,
            agent_models: b.agent_models,
            tail,
            len,
            lines: b.physical_lines,
            identity: src.identity,
            adapter,
            from_checkpoint: 0,
            pieces: b.pieces,
            file: src.file,
        }
    }

    /// Whether the format's reader found an entry of its own (one that is not a line claiming to
    /// be mf's, which every format reads alike).
    fn has_own_entries(&self) -> bool {
        self.entries.iter().any(|e| e.claim == NONE)
    }

    /// What the engine reads.
    pub fn conversation(&self) -> Conversation<'_> {
        Conversation {
            entries: &self.entries,
            links: &self.links,
            tool_ids: &self.tool_ids,
            claims: &self.claims,
            records: &self.records,
            placements: &self.placements,
            one_run: self.format.shows_one_run(),
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
        Ok(self
            .json_texts(i)?
            .iter()
            .map(|b| match json::from_slice(b) {
                Ok(Value::Object(m)) => m,
                _ => Map::new(),
            })
            .collect())
    }

    /// An entry's lines as the JSON text [`Transcript::values`] parses: without a line end's
    /// `\r` or the file's byte order mark, and a lone surrogate escape as `\ufffd` (the same
    /// six bytes; see [`json`]). A writer that copies an original item into a line of its own
    /// copies these bytes, so that no number, escape or key order is ever re-serialized.
    pub fn json_texts(&self, i: usize) -> std::io::Result<Vec<Vec<u8>>> {
        let first_of_file = self.entries[i].pos == 0;
        let lines = self.raw_lines(i)?;
        Ok(lines
            .into_iter()
            .enumerate()
            .map(|(k, mut raw)| {
                if raw.last() == Some(&b'\r') {
                    raw.pop();
                }
                if k == 0 && first_of_file && raw.starts_with(b"\xEF\xBB\xBF") {
                    raw.drain(..3);
                }
                json::lone_surrogates_replaced(&raw).unwrap_or(raw)
            })
            .collect())
    }

    /// The model-visible text of an entry.
    pub fn text(&self, i: usize) -> std::io::Result<String> {
        Ok(self.adapter.text(i, &self.values(i)?))
    }

    /// The model-visible text of an entry, with the byte ranges of it that are the model's
    /// reasoning (thinking blocks, reasoning items).
    pub fn marked_text(&self, i: usize) -> std::io::Result<format::common::Marked> {
        Ok(self.adapter.marked(i, &self.values(i)?))
    }

    /// The tool name of a tool result, when the line says it.
    pub fn tool_name(&self, i: usize) -> Option<String> {
        self.adapter.tool_name(&self.values(i).ok()?)
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

    /// The entry as the chat messages a model would be sent (one, or one per tool result of a
    /// row that answers several calls).
    pub fn chat_messages(&self, i: usize) -> std::io::Result<Vec<Value>> {
        Ok(self.adapter.chat_messages(i, &self.values(i)?))
    }

    /// The lines to append for a write, in this file's format. An agent's session also gets
    /// what makes the agent show `w.shown`; a view the agent cannot show is refused.
    pub fn lines_for(&self, w: &Write<'_>) -> Result<Vec<String>, TranscriptError> {
        self.adapter.lines(self, w)
    }

    /// A write the agent could not show, and why.
    pub(crate) fn unexpressible(&self, why: String) -> TranscriptError {
        TranscriptError::Unexpressible {
            path: self.path.clone(),
            format: self.format.describe(),
            why,
        }
    }

    /// Refuse, before anything is paid, a fold with gaps (`--strategy cited`: a summary covers
    /// only what it cites) on a session whose agent shows one unbroken run after its summaries.
    pub fn check_gaps(&self) -> Result<(), TranscriptError> {
        if self.format.shows_one_run() {
            return Err(self.unexpressible(
                "pi shows its summaries, then one unbroken run of entries, and a cited summary covers only what it cites: the entries it leaves between them cannot be shown (--strategy cited does not apply to a pi session)".into(),
            ));
        }
        Ok(())
    }

    /// What the agent leaves beside this session while it runs it (see `Adapter::running`).
    pub(crate) fn agent_running(&self, dirs: &AgentDirs) -> Option<String> {
        self.adapter.running(dirs)
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
        let found: Vec<usize> = self
            .with_id_hash(h)
            .filter(|&i| self.id_string(i) == address)
            .collect();
        if !found.is_empty() {
            return found;
        }
        // `line-N`, the id mf shows for an entry without one of its own (a Claude Code row is
        // named by its uuid): the entry anchored at line N, when that is the id it shows.
        address
            .strip_prefix("line-")
            .and_then(|n| n.parse::<u32>().ok())
            .and_then(|n| self.entries.iter().position(|e| e.line == n))
            .filter(|&i| self.id_string(i) == address)
            .into_iter()
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
