//! Reading a transcript file: blocks of bytes, split into lines, each line parsed by its format's
//! line parser on every core, then handed in order to the format's builder. Nothing here knows a
//! format; it knows lines, mf's own line prefix, and how a line can be torn or glued.
//!
//! Recovery of mf's own damaged lines (the only damage mf repairs, and only on read):
//! - a line cut short by a crash during mf's append starts with [`MF_PREFIX`] and is skipped with
//!   a note; if a later writer's line was glued onto it, that line is recovered;
//! - a line of another writer interrupted by mf's append (`{"role":…{"mf":…}`) is split: mf's
//!   line is read, and the other writer's two halves are joined again when they parse.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use memchr::{memchr, memchr_iter, memmem, memrchr};

use super::build::{At, Build, NoteKind, PieceAt, SetLine};
use super::error::TranscriptError;
use super::json;
use super::wire::{self, MF_PREFIX};
use super::{Source, Tail};
use crate::digest::line_hash;

/// Bytes read at a time.
const BLOCK: usize = 4 << 20;
/// Bytes the format is detected from, read before the blocks (`read_source`).
pub const HEAD: usize = 1 << 20;
/// Below this many bytes in a block, parse on one thread.
const PARALLEL_MIN: usize = 1 << 20;

/// Why a line did not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    pub message: String,
    pub column: usize,
}

impl LineError {
    pub fn from_json(e: &serde_json::Error) -> Self {
        let message = e.to_string();
        let message = message.split(" at line ").next().unwrap_or_default();
        LineError {
            message: json_words(message),
            column: e.column(),
        }
    }
}

/// What the JSON parser's complaint means, in words a person can act on (the parser's own
/// words when it has no plainer ones).
fn json_words(parser: &str) -> String {
    let said = match parser {
        "expected ident" => {
            "a bare word where a value belongs (JSON's only bare words are true, false and null; text goes in double quotes)"
        }
        "expected value" => "a value is missing or is not JSON here (text goes in double quotes)",
        "key must be a string" => "a key is not in double quotes (JSON writes a key as `\"key\"`)",
        "trailing characters" => {
            "something follows the end of the JSON value (two values on one line?)"
        }
        "expected `:`" => "a key without `:` and a value",
        "expected `,` or `}`" => "a `,` between members or the closing `}` is missing",
        "expected `,` or `]`" => "a `,` between items or the closing `]` is missing",
        "invalid escape" => "a backslash escape JSON does not have (a backslash is written `\\\\`)",
        "invalid number" | "number out of range" => "a number JSON cannot read",
        p if p.starts_with("EOF while parsing") => {
            "the line ends before the JSON does (an unclosed `{`, `[` or `\"`): was it cut short?"
        }
        p if p.starts_with("control character") => {
            "a raw control character (a tab or a line break) inside a string, where JSON writes `\\t` or `\\n`"
        }
        other => return other.to_string(),
    };
    said.to_string()
}

/// A format's reader: a stateless line parser (run on every core) and a stateful builder (run in
/// file order).
pub trait LineReader: Send + Sync {
    type Parsed<'a>: Send;
    /// Whether a line that does not parse is an error (the chat format) or skipped with a note
    /// (agent formats, whose own readers skip such lines).
    const STRICT: bool;

    fn parse<'a>(&self, line: &'a [u8]) -> Result<Self::Parsed<'a>, LineError>;

    /// Whether a value found inside a torn mf line could be a whole line another writer glued
    /// after it (not just an object nested inside mf's own line, cut right after its end).
    fn may_be_line(&self, parsed: &Self::Parsed<'_>) -> bool;

    fn push(
        &mut self,
        b: &mut Build,
        at: &At<'_>,
        parsed: Self::Parsed<'_>,
    ) -> Result<(), TranscriptError>;

    /// After the last line.
    fn finish(&mut self, b: &mut Build) -> Result<(), TranscriptError>;
}

struct Parsed<'a, P> {
    /// Blank lines right before this one (not kept: a blank line costs nothing but its count).
    blanks: u32,
    start: usize,
    end: usize,
    hash: u64,
    result: Result<P, LineError>,
    _bytes: std::marker::PhantomData<&'a [u8]>,
}

/// A part of a block, parsed: its lines that are not blank, and the blank lines after the last.
struct Part<'a, P> {
    lines: Vec<Parsed<'a, P>>,
    trailing_blanks: u32,
}

/// The line's content for parsing: without a trailing `\r`, and without a UTF-8 byte-order mark
/// on the first line.
fn content(line: &[u8], first: bool) -> &[u8] {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if first {
        line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
    } else {
        line
    }
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}

/// Parse the lines of `block[start..end]`. A blank line is counted, not kept: the walker only
/// counts it too, and 100 MB of newlines would otherwise hold a parsed slot per byte.
fn parse_part<'a, R: LineReader>(
    reader: &R,
    block: &'a [u8],
    start: usize,
    end: usize,
    first_line_of_file: bool,
) -> Part<'a, R::Parsed<'a>> {
    let mut lines = Vec::new();
    let mut blanks = 0u32;
    let mut s = start;
    let mut first = first_line_of_file;
    for nl in memchr_iter(b'\n', &block[start..end]) {
        let e = start + nl;
        let line = &block[s..e];
        let c = content(line, first);
        if is_blank(c) {
            blanks += 1;
        } else {
            lines.push(Parsed {
                blanks,
                start: s,
                end: e,
                hash: line_hash(line),
                result: reader.parse(c),
                _bytes: std::marker::PhantomData,
            });
            blanks = 0;
        }
        s = e + 1;
        first = false;
    }
    Part {
        lines,
        trailing_blanks: blanks,
    }
}

/// A line of another writer that mf's own line interrupted, waiting for its second half.
struct Fragment {
    bytes: Vec<u8>,
    line: u32,
    pos: u64,
}

struct Walker<'r, R: LineReader> {
    reader: &'r mut R,
    build: Build,
    line: u32,
    fragment: Option<Fragment>,
}

/// Remember where a line of mf's multi-line write stands (`body` begins at mf's prefix).
fn note_set(b: &mut Build, line: u32, body: &[u8], whole: bool) {
    if let Some(tag) = wire::set_tag(body) {
        b.sets.push(SetLine { line, tag, whole });
    }
}

impl<R: LineReader> Walker<'_, R> {
    /// One complete physical line (without its `\n`) at byte `pos` of the file.
    fn line(
        &mut self,
        raw: &[u8],
        pos: u64,
        hash: u64,
        result: Result<R::Parsed<'_>, LineError>,
    ) -> Result<(), TranscriptError> {
        self.line += 1;
        let first = pos == 0;
        if is_blank(content(raw, first)) {
            return Ok(());
        }
        let at = At {
            line: self.line,
            pos,
            len: raw.len() as u32,
            hash,
            pieces: None,
        };
        match result {
            Ok(p) => {
                // The rest of a line mf's append interrupted follows mf's lines at once; after
                // any other line it never will.
                if !content(raw, first).starts_with(MF_PREFIX) {
                    self.drop_fragment();
                }
                self.build.lines_read += 1;
                note_set(&mut self.build, self.line, content(raw, first), true);
                self.reader.push(&mut self.build, &at, p)
            }
            Err(e) => {
                if let Some(done) = self.push_repaired(content(raw, first), &at) {
                    return done;
                }
                self.damaged(raw, pos, e)
            }
        }
    }

    /// A line that does not parse only for a lone surrogate escape: parsed from a copy with
    /// U+FFFD in its place (`json`), and pushed. `None` when it has none or still fails.
    fn push_repaired(&mut self, body: &[u8], at: &At<'_>) -> Option<Result<(), TranscriptError>> {
        let fixed = json::lone_surrogates_replaced(body)?;
        let parsed = self.reader.parse(&fixed).ok()?;
        if !body.starts_with(MF_PREFIX) {
            self.drop_fragment();
        }
        self.build.lines_read += 1;
        note_set(&mut self.build, self.line, body, true);
        Some(self.reader.push(&mut self.build, at, parsed))
    }

    /// A first half whose rest did not follow mf's lines: not rejoined, and said so.
    fn drop_fragment(&mut self) {
        if let Some(f) = self.fragment.take() {
            self.build.note(
                f.line,
                NoteKind::Skipped(
                    "the first half of a line before mf's line, whose rest did not follow mf's lines; not read".into(),
                ),
            );
        }
    }

    /// A line that does not parse: mf's own torn line, a line glued to mf's, the second half of
    /// a line mf's append interrupted — or plain bad input.
    fn damaged(&mut self, raw: &[u8], pos: u64, e: LineError) -> Result<(), TranscriptError> {
        let line = self.line;
        let body = content(raw, pos == 0);
        // 1. mf's own line, cut short; another writer's line may have been glued after it.
        if body.starts_with(MF_PREFIX) {
            self.build.note(line, NoteKind::TornMf);
            note_set(&mut self.build, line, body, false);
            for p in memchr_iter(b'{', &body[MF_PREFIX.len()..]).map(|p| p + MF_PREFIX.len()) {
                if let Ok(parsed) = self.reader.parse(&body[p..])
                    && self.reader.may_be_line(&parsed)
                {
                    let sub = &body[p..];
                    let at = At {
                        line,
                        pos: pos + p as u64,
                        len: sub.len() as u32,
                        hash: line_hash(sub),
                        pieces: None,
                    };
                    self.build.note(line, NoteKind::GluedAfterTornMf);
                    return self.reader.push(&mut self.build, &at, parsed);
                }
            }
            return Ok(());
        }
        // 2. Another writer's half line, then mf's complete line. Only what mf's append could
        //    have interrupted: the half begins a JSON object and is not one by itself, and what
        //    follows is one whole line of mf's (anything else before mf's bytes is garbage).
        let half_line = |half: &[u8]| {
            half.first() == Some(&b'{')
                && serde_json::from_slice::<serde::de::IgnoredAny>(half).is_err()
        };
        if let Some(p) = memmem::find(body, MF_PREFIX)
            && half_line(&body[..p])
            && let Ok(parsed) = self.reader.parse(&body[p..])
        {
            self.drop_fragment();
            let sub = &body[p..];
            let at = At {
                line,
                pos: pos + p as u64,
                len: sub.len() as u32,
                hash: line_hash(sub),
                pieces: None,
            };
            self.fragment = Some(Fragment {
                bytes: body[..p].to_vec(),
                line,
                pos,
            });
            self.build.note(line, NoteKind::InterruptedByMf);
            note_set(&mut self.build, line, sub, true);
            return self.reader.push(&mut self.build, &at, parsed);
        }
        // 3. The second half of a line mf's append interrupted: right after mf's lines.
        if let Some(f) = self.fragment.take() {
            let mut joined = f.bytes.clone();
            joined.extend_from_slice(body);
            if let Ok(parsed) = self.reader.parse(&joined) {
                let hash = line_hash(&joined);
                let pieces = [
                    PieceAt {
                        pos: f.pos,
                        len: f.bytes.len() as u32,
                        line: f.line,
                        hash: line_hash(&f.bytes),
                        join: false,
                    },
                    PieceAt {
                        pos,
                        len: body.len() as u32,
                        line,
                        hash: line_hash(body),
                        join: true,
                    },
                ];
                // Anchored at the line that holds its rest: the line it began on is mf's line's
                // anchor too, and coverage ranges name entries by their anchor lines.
                let at = At {
                    line,
                    pos: f.pos,
                    len: f.bytes.len() as u32,
                    hash,
                    pieces: Some(&pieces),
                };
                self.build.note(line, NoteKind::Rejoined { first: f.line });
                return self.reader.push(&mut self.build, &at, parsed);
            }
            self.fragment = Some(f);
            self.drop_fragment();
        }
        if R::STRICT {
            Err(TranscriptError::Malformed {
                path: self.build.path.clone(),
                line: line as usize,
                column: e.column,
                message: e.message,
            })
        } else {
            self.build.note(line, NoteKind::Skipped(e.message));
            Ok(())
        }
    }
}

/// Where a read begins.
pub enum Start {
    /// At the start of the file, whose first bytes have been read already.
    Head(Vec<u8>),
    /// After a prefix whose index and reader state a checkpoint kept.
    After {
        build: Box<Build>,
        line: u32,
        offset: u64,
    },
}

/// The state after the last complete line, before the reader's `finish`: what a checkpoint
/// keeps. Offered only when no line is waiting for its second half.
pub struct AtEnd<'a, R> {
    pub build: &'a Build,
    pub reader: &'a R,
    pub line: u32,
    pub offset: u64,
}

/// Read every line of `src` with `reader`, from `start`; `at_end` sees the state after the last
/// complete line.
pub fn read_lines<R: LineReader>(
    src: &mut Source,
    reader: &mut R,
    start: Start,
    at_end: impl FnOnce(AtEnd<'_, R>),
) -> Result<(Build, Tail, u64), TranscriptError> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4);
    // A file that ended inside its head needs no big block to find its end (zeroing a big
    // buffer costs more than reading a small file).
    let block_len = match &start {
        Start::Head(head) if head.len() < HEAD => 64 << 10,
        _ => BLOCK,
    };
    let (build, line, head, base) = begin(src, start)?;
    let mut walker = Walker {
        reader,
        build,
        line,
        fragment: None,
    };
    // buf[..filled] holds unprocessed bytes; they start at file offset `base`. While the
    // parsers work on a block, the next one is read into `spare`.
    let io = |source| TranscriptError::Open {
        path: src.path.clone(),
        source,
    };
    let mut buf = head;
    let mut filled = buf.len();
    let mut spare: Vec<u8> = Vec::new();
    let mut base: u64 = base;
    let mut eof = false;
    let more = |buf: &mut Vec<u8>, filled: &mut usize, file: &mut File| {
        if buf.len() < *filled + block_len {
            buf.resize(*filled + block_len, 0);
        }
        let n = read_full(file, &mut buf[*filled..*filled + block_len])?;
        *filled += n;
        Ok::<bool, std::io::Error>(n == 0)
    };
    eof = more(&mut buf, &mut filled, &mut src.file).map_err(io)? || eof;
    let file_len = src.file.metadata().map_or(0, |m| m.len());
    let mut sized = false;
    loop {
        let cut = match memrchr(b'\n', &buf[..filled]) {
            Some(p) => p + 1,
            None if eof => break,
            None => {
                // A line longer than a block: read on.
                eof = more(&mut buf, &mut filled, &mut src.file).map_err(io)?;
                continue;
            }
        };
        let rem = filled - cut;
        if spare.len() < rem + block_len {
            spare.resize(rem + block_len, 0);
        }
        let block = &buf[..cut];
        let parts = split(block, if cut >= PARALLEL_MIN { threads } else { 1 });
        let first = base == 0;
        let r = &*walker.reader;
        let file = &mut src.file;
        let ahead = &mut spare[rem..rem + block_len];
        let (parsed, read): (Vec<Part<'_, R::Parsed<'_>>>, _) = std::thread::scope(|s| {
            let handles: Vec<_> = parts
                .iter()
                .skip(1)
                .map(|&(a, b)| s.spawn(move || parse_part(r, block, a, b, first && a == 0)))
                .collect();
            let read = if eof { Ok(0) } else { read_full(file, ahead) };
            let (a, b) = parts[0];
            let mut parsed = vec![parse_part(r, block, a, b, first)];
            parsed.extend(
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))),
            );
            (parsed, read)
        });
        for part in parsed {
            for p in part.lines {
                walker.line += p.blanks;
                walker.line(
                    &block[p.start..p.end],
                    base + p.start as u64,
                    p.hash,
                    p.result,
                )?;
            }
            walker.line += part.trailing_blanks;
        }
        if !sized && !eof {
            sized = true;
            reserve(&mut walker.build, base + cut as u64, file_len);
        }
        let n = read.map_err(io)?;
        eof = eof || n == 0;
        spare[..rem].copy_from_slice(&buf[cut..filled]);
        std::mem::swap(&mut buf, &mut spare);
        filled = rem + n;
        base += cut as u64;
    }
    if walker.fragment.is_none() {
        at_end(AtEnd {
            build: &walker.build,
            reader: &*walker.reader,
            line: walker.line,
            offset: base,
        });
    }
    // The last line, without a newline.
    let tail = walker.last_line(&buf[..filled], base)?;
    walker.reader.finish(&mut walker.build)?;
    walker.build.settle_sets();
    // An unterminated last line was counted when it was read; a torn one was not.
    walker.build.physical_lines = walker.line + u32::from(matches!(tail, Tail::Torn { .. }));
    Ok((walker.build, tail, base + filled as u64))
}

impl<R: LineReader> Walker<'_, R> {
    /// The file's last line, which has no newline (`raw`, at byte `base`): none, blank, whole
    /// (read), or torn (another writer is still writing it, or mf's own append was cut short).
    fn last_line(&mut self, raw: &[u8], base: u64) -> Result<Tail, TranscriptError> {
        Ok(if raw.is_empty() {
            Tail::Clean
        } else {
            let body = content(raw, base == 0);
            if is_blank(body) {
                // A blank last line without a newline: complete, and ended before mf appends.
                self.line += 1;
                Tail::Unterminated
            } else {
                // A lone surrogate escape reads as U+FFFD (`json`).
                let fixed: Vec<u8>;
                let mut parsed = self.reader.parse(body);
                if parsed.is_err()
                    && let Some(f) = json::lone_surrogates_replaced(body)
                {
                    fixed = f;
                    parsed = self.reader.parse(&fixed);
                }
                match parsed {
                    Ok(parsed) => {
                        self.line += 1;
                        let at = At {
                            line: self.line,
                            pos: base,
                            len: raw.len() as u32,
                            hash: line_hash(raw),
                            pieces: None,
                        };
                        self.build.lines_read += 1;
                        note_set(&mut self.build, self.line, body, true);
                        self.reader.push(&mut self.build, &at, parsed)?;
                        Tail::Unterminated
                    }
                    Err(_) => {
                        note_set(&mut self.build, self.line + 1, body, false);
                        Tail::Torn {
                            line: self.line as usize + 1,
                            offset: base,
                            bytes: raw.len(),
                            mf: body.starts_with(MF_PREFIX),
                        }
                    }
                }
            }
        })
    }
}

/// After the first block (`read` bytes of a file of `file_len`), room for the whole file's entries
/// at the rate seen so far: the index never grows by doubling (copying itself, and holding twice
/// its size meanwhile).
fn reserve(b: &mut Build, read: u64, file_len: u64) {
    let per_byte = b.entries.len() as f64 / read.max(1) as f64;
    let want = (per_byte * file_len as f64 * 1.03) as usize + 1024;
    b.entries.reserve(want.saturating_sub(b.entries.len()));
}

/// Where a read starts: an empty index and the head already read, or a checkpoint's index and
/// its offset (the file positioned there).
fn begin(src: &mut Source, start: Start) -> Result<(Build, u32, Vec<u8>, u64), TranscriptError> {
    Ok(match start {
        Start::Head(head) => (Build::new(src.path.clone()), 0, head, 0),
        Start::After {
            build,
            line,
            offset,
        } => {
            let mut build = *build;
            build.path = src.path.clone();
            src.file
                .seek(SeekFrom::Start(offset))
                .map_err(|source| TranscriptError::Open {
                    path: src.path.clone(),
                    source,
                })?;
            (build, line, Vec::new(), offset)
        }
    })
}

/// Split a block of whole lines into up to `n` parts at line ends.
fn split(block: &[u8], n: usize) -> Vec<(usize, usize)> {
    let mut parts = Vec::with_capacity(n);
    let mut s = 0;
    for k in 1..=n {
        let mut e = if k == n {
            block.len()
        } else {
            block.len() * k / n
        };
        if e < s {
            e = s;
        }
        if k < n {
            e = memchr(b'\n', &block[e..]).map_or(block.len(), |p| e + p + 1);
        }
        if e > s {
            parts.push((s, e));
        }
        s = e;
    }
    if parts.is_empty() {
        parts.push((0, 0));
    }
    parts
}

/// Read until `buf` is full or the end of the file.
fn read_full(f: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn split_keeps_lines_whole() {
        let b = b"aa\nbbbb\nc\ndddddd\n";
        for n in 1..6 {
            let parts = split(b, n);
            assert_eq!(parts.first().unwrap().0, 0);
            assert_eq!(parts.last().unwrap().1, b.len());
            for w in parts.windows(2) {
                assert_eq!(w[0].1, w[1].0);
            }
            for (_, e) in &parts {
                assert_eq!(b[e - 1], b'\n');
            }
        }
    }
}
