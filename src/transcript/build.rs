//! `Build`: a transcript's index while its lines are read — entries, tool links, claims, records,
//! and notes about lines that were skipped or repaired. Format builders add to it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::digest::pieces_hash;
use crate::entry::{Claim, Entry, Link, NONE, Record, Role};

/// Where a line (or a rejoined line) sits in the file.
#[derive(Debug, Clone, Copy)]
pub struct At<'a> {
    /// Physical line number (1-based) where it starts.
    pub line: u32,
    /// Byte offset of its first byte.
    pub pos: u64,
    /// Bytes of its first piece.
    pub len: u32,
    /// Hash of its bytes.
    pub hash: u64,
    /// For a line rejoined from two halves: both halves.
    pub pieces: Option<&'a [PieceAt]>,
}

/// One physical piece of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PieceAt {
    pub pos: u64,
    pub len: u32,
    pub line: u32,
    pub hash: u64,
    /// Joined to the previous piece as one JSON text (a line split by mf's append), rather than
    /// a line of its own.
    pub join: bool,
}

/// What was noticed about a line that is not simply a line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum NoteKind {
    /// A line mf began and did not finish (a crash during an append); skipped.
    TornMf,
    /// Another writer's line glued after mf's torn line; recovered.
    GluedAfterTornMf,
    /// Another writer's line was interrupted here by mf's append; mf's line was read.
    InterruptedByMf,
    /// The second half of a line interrupted by mf's append (the first half is on `first`);
    /// rejoined and read.
    Rejoined { first: u32 },
    /// A line that is not valid JSON, or not a line of the format, skipped as the agent itself
    /// skips it.
    Skipped(String),
    /// The first line of a write mf did not finish (`whole` of its `of` lines are here and
    /// whole): none of it counts, as the agent does not honour it either. `repaired`: a later
    /// write of mf's landed whole.
    UnfinishedWrite { whole: u32, of: u32, repaired: bool },
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Note {
    pub line: u32,
    pub kind: NoteKind,
}

/// The entry-to-be a builder hands over.
#[derive(Debug, Clone, Copy)]
pub struct NewEntry<'a> {
    pub role: Role,
    pub flags: u8,
    pub chars: u32,
    pub id: u64,
    pub calls: &'a [u64],
    pub answers: &'a [u64],
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Build {
    /// Not saved in a checkpoint: the reader sets it.
    #[serde(skip)]
    pub path: PathBuf,
    /// Saved by the checkpoint in a denser encoding of its own.
    #[serde(skip)]
    pub entries: Vec<Entry>,
    pub links: Vec<Link>,
    pub tool_ids: Vec<u64>,
    pub claims: Vec<Claim>,
    pub records: Vec<Record>,
    /// `(entry, before)`: entry stands just before entry `before` in conversation order.
    pub placements: Vec<(u32, u32)>,
    /// Further pieces of entries, by `Entry::more`: a run of pieces per entry.
    pub pieces: Vec<PieceRun>,
    pub notes: Vec<Note>,
    /// Models that wrote the conversation (assistant lines' model), in order of first appearance.
    pub agent_models: Vec<String>,
    pub lines_read: u64,
    pub physical_lines: u32,
    /// The lines of mf's multi-line writes seen (see `wire::SetTag`).
    pub sets: Vec<SetLine>,
}

/// One line of a multi-line write of mf's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SetLine {
    pub line: u32,
    pub tag: crate::transcript::wire::SetTag,
    /// Parsed whole (not cut short by a crash).
    pub whole: bool,
}

/// All pieces of one entry after its first.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PieceRun {
    pub first_hash: u64,
    pub more: Vec<PieceAt>,
}

impl Build {
    pub fn new(path: PathBuf) -> Self {
        Build {
            path,
            entries: Vec::new(),
            links: Vec::new(),
            tool_ids: Vec::new(),
            claims: Vec::new(),
            records: Vec::new(),
            placements: Vec::new(),
            pieces: Vec::new(),
            notes: Vec::new(),
            agent_models: Vec::new(),
            lines_read: 0,
            physical_lines: 0,
            sets: Vec::new(),
        }
    }

    /// After the last line: a write of mf's that is not all there and whole counts for nothing.
    /// Its summaries do not stand and its records do not apply — the agent, which honours the
    /// write only through its last line (each format writes the line that makes the agent show
    /// it last), shows what it showed before — and a note says so.
    pub fn settle_sets(&mut self) {
        let mut i = 0;
        let mut unfinished: Vec<(u32, u32, u32, Vec<u32>)> = Vec::new();
        let mut complete_after: Vec<u32> = Vec::new();
        while i < self.sets.len() {
            let first = &self.sets[i];
            let mut j = i + 1;
            while j < self.sets.len() && self.sets[j].tag.id == first.tag.id {
                j += 1;
            }
            let run = &self.sets[i..j];
            let n = first.tag.n;
            let whole = run
                .iter()
                .enumerate()
                .filter(|(k, l)| l.whole && l.tag.k == *k as u32 && l.tag.n == n)
                .count() as u32;
            if whole == n && run.len() as u32 == n {
                complete_after.push(first.line);
            } else {
                let lines = run.iter().filter(|l| l.whole).map(|l| l.line).collect();
                unfinished.push((first.line, whole, n, lines));
            }
            i = j;
        }
        for (line, whole, of, lines) in unfinished {
            for c in &mut self.claims {
                if lines.contains(&self.entries[c.entry as usize].line) {
                    // Not shown either: the agent never sends mf's own lines.
                    self.entries[c.entry as usize].flags |= crate::entry::flag::UNSEEN;
                    c.shape_ok = Err(format!(
                        "{} (line {line}: {whole} of its {of} lines are whole); the agent does not show it, so it does not stand",
                        crate::entry::UNFINISHED_WRITE
                    ));
                }
            }
            self.records.retain(|r| !lines.contains(&r.line));
            let repaired = complete_after.iter().any(|&l| l > line);
            self.note(
                line,
                NoteKind::UnfinishedWrite {
                    whole,
                    of,
                    repaired,
                },
            );
        }
    }

    pub fn note(&mut self, line: u32, kind: NoteKind) {
        self.notes.push(Note { line, kind });
    }

    fn link(&mut self, calls: &[u64], answers: &[u64]) -> u32 {
        if calls.is_empty() && answers.is_empty() {
            return NONE;
        }
        let c0 = self.tool_ids.len() as u32;
        self.tool_ids.extend_from_slice(calls);
        let c1 = self.tool_ids.len() as u32;
        self.tool_ids.extend_from_slice(answers);
        let a1 = self.tool_ids.len() as u32;
        self.links.push(Link {
            calls: c0..c1,
            answers: c1..a1,
        });
        (self.links.len() - 1) as u32
    }

    /// Add an entry for the line at `at`; returns its index.
    pub fn entry(&mut self, at: &At<'_>, e: NewEntry<'_>) -> u32 {
        let link = self.link(e.calls, e.answers);
        let mut entry = Entry {
            line: at.line,
            role: e.role,
            flags: e.flags,
            chars: e.chars,
            hash: at.hash,
            id: e.id,
            pos: at.pos,
            len: at.len,
            more: NONE,
            link,
            claim: NONE,
        };
        if let Some(pieces) = at.pieces {
            // A rejoined line: its first piece is the entry's own; the rest follow.
            entry.more = self.pieces.len() as u32;
            self.pieces.push(PieceRun {
                first_hash: pieces[0].hash,
                more: pieces[1..].to_vec(),
            });
        }
        self.entries.push(entry);
        (self.entries.len() - 1) as u32
    }

    /// Add a further line to entry `i` (a streamed response written over several lines), with
    /// the model-visible characters and the tool calls it adds.
    pub fn extend(&mut self, i: u32, at: &At<'_>, chars: u32, calls: &[u64], answers: &[u64]) {
        let idx = i as usize;
        let first_hash = self.entries[idx].hash;
        if self.entries[idx].more == NONE {
            self.entries[idx].more = self.pieces.len() as u32;
            self.pieces.push(PieceRun {
                first_hash,
                more: Vec::new(),
            });
        }
        let run = &mut self.pieces[self.entries[idx].more as usize];
        run.more.push(PieceAt {
            pos: at.pos,
            len: at.len,
            line: at.line,
            hash: at.hash,
            join: false,
        });
        let mut hashes = vec![run.first_hash];
        hashes.extend(run.more.iter().map(|p| p.hash));
        let e = &mut self.entries[idx];
        e.hash = pieces_hash(&hashes);
        e.chars = e.chars.saturating_add(chars);
        if !calls.is_empty() || !answers.is_empty() {
            let (old_calls, old_answers) = match e.link {
                NONE => (Vec::new(), Vec::new()),
                l => {
                    let lk = &self.links[l as usize];
                    (
                        self.tool_ids[lk.calls.start as usize..lk.calls.end as usize].to_vec(),
                        self.tool_ids[lk.answers.start as usize..lk.answers.end as usize].to_vec(),
                    )
                }
            };
            let mut c = old_calls;
            c.extend_from_slice(calls);
            let mut a = old_answers;
            a.extend_from_slice(answers);
            let link = self.link(&c, &a);
            self.entries[idx].link = link;
        }
    }

    /// Attach a claim (mf summary or stub) to entry `i`.
    pub fn claim(&mut self, i: u32, mut claim: Claim) {
        claim.entry = i;
        self.entries[i as usize].claim = self.claims.len() as u32;
        self.claims.push(claim);
    }

    pub fn record(&mut self, r: Record) {
        self.records.push(r);
    }

    pub fn agent_model(&mut self, m: &str) {
        if !m.is_empty() && !self.agent_models.iter().any(|x| x == m) {
            self.agent_models.push(m.to_string());
        }
    }
}
