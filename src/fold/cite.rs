//! `cite`: the citations of `--strategy cited` — the handles a summarizer cites entries by, a
//! reply read as candidate summaries, and each candidate checked against the span it was offered:
//! which entries it consumes, or why it is rejected. Pure: no I/O, clock, env or network.
//!
//! A reply holds one or more candidates, each opened by a line `=== #N` (a reply without such a
//! line is one candidate). Every line of a candidate that is not a heading (a line that ends in
//! `:` or starts with `#`) cites the entries it draws on — `[m4]` or `[m4, m7]` — by the handles
//! mf showed: an entry's id, or `@LINE` (its anchor line). A candidate may cite another candidate
//! of the same fold by its name (`[#1]`): that folds the other one in (nests it).
//!
//! A candidate consumes the entries it cites that no accepted candidate consumed before it, with
//! the rest of their tool unit (a call and its results travel together), and the candidates it
//! nests — exactly those: an entry no candidate cites stays verbatim, so coverage may have gaps.
//!
//! A candidate is rejected, with a reason the summarizer is shown on the next call (at most
//! [`MAX_CALLS`] calls per fold), when a citation does not parse, a line cites nothing, it cites
//! an id that does not exist or is not in the span, it draws on fewer than [`MIN_SOURCES`]
//! entries not already consumed, it is longer — with mf's label — than [`MAX_SHARE`] of the
//! tokens it consumes, it cites itself, forms a cycle with other candidates or cites a rejected
//! one, its name is taken, or the caller's judge (the retention audit) declines it.

use std::collections::{HashMap, HashSet};

use thiserror::Error;

use crate::entry::estimate_tokens;
use crate::fold::{fault, frame};

/// The most summarizer calls one cited fold makes (the first, and the corrections).
pub const MAX_CALLS: usize = 15;
/// The fewest entries a summary must newly consume (entries it cites that nothing consumed yet,
/// and candidates it nests).
pub const MIN_SOURCES: usize = 2;
/// A summary's estimated tokens, with mf's label, may be at most this share (numerator,
/// denominator) of the estimated tokens of what it consumes.
pub const MAX_SHARE: (usize, usize) = (4, 5);
/// The reply that asks for nothing more.
pub const NONE_REPLY: &str = "NONE";

/// One entry of the span that a summarizer may cite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Citable {
    /// What the summarizer is shown and cites: the entry's id, or `@LINE`.
    pub handle: String,
    /// Its anchor line (`@LINE` names it too).
    pub line: u32,
    /// Characters a model reads for it.
    pub chars: usize,
    /// Entries with the same unit (a tool call and its results) are consumed together.
    pub unit: u32,
    pub from_turn: u64,
    pub to_turn: u64,
    /// Original messages behind it (more than one for an earlier summary).
    pub leaves: usize,
}

/// What a cited fold offers the summarizer: the span's entries in conversation order, and the
/// model whose name mf's label will carry (the label counts toward a summary's length).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    pub entries: Vec<Citable>,
    pub model: String,
    /// How the summary's label will say the originals are reached (it counts toward its length).
    pub reach: frame::Reach,
}

/// Whether an id can be shown and cited as it is: no spaces, commas, brackets or quotes, not
/// starting like an `@LINE` handle or a candidate name, and not too long.
pub fn is_clean(id: &str) -> bool {
    !id.is_empty()
        && id.chars().count() <= 80
        && !id.starts_with(['@', '#'])
        && id
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | ':' | '/' | '+' | '~'))
}

/// The handle an entry is cited by: its id when that id is clean and names only this entry in
/// the file, else `@LINE`.
pub fn handle(id: &str, unique: bool, line: u32) -> String {
    if unique && is_clean(id) {
        id.to_string()
    } else {
        format!("@{line}")
    }
}

/// One candidate summary as the reply gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// `#N`; `None` when the reply did not name it.
    pub name: Option<String>,
    pub text: String,
}

/// The name in a header line (`=== #2`, `=== #2 ===`), or `None` for a header without one.
fn header(line: &str) -> Option<Option<String>> {
    let t = line.trim();
    if !t.starts_with("===") {
        return None;
    }
    let rest = t.trim_matches(|c: char| c == '=' || c.is_whitespace());
    let name = rest.find('#').and_then(|p| {
        let digits: String = rest[p + 1..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        (!digits.is_empty()).then(|| format!("#{}", digits.trim_start_matches('0').max("0")))
    });
    Some(name)
}

/// Read a reply as candidates: one per `=== #N` header (text before the first header is not
/// part of any); a reply without headers is one candidate; `NONE` (or nothing) is none.
pub fn split_reply(reply: &str) -> Vec<Candidate> {
    let trimmed = reply.trim();
    if trimmed.is_empty()
        || trimmed
            .trim_end_matches('.')
            .eq_ignore_ascii_case(NONE_REPLY)
    {
        return Vec::new();
    }
    let mut out: Vec<Candidate> = Vec::new();
    let mut current: Option<Candidate> = None;
    let mut any_header = false;
    let mut before = String::new();
    for line in reply.lines() {
        if let Some(name) = header(line) {
            any_header = true;
            out.extend(current.take());
            current = Some(Candidate {
                name,
                text: String::new(),
            });
            continue;
        }
        let buf = match current.as_mut() {
            Some(c) => &mut c.text,
            None => &mut before,
        };
        buf.push_str(line);
        buf.push('\n');
    }
    out.extend(current);
    if !any_header {
        return vec![Candidate {
            name: None,
            text: before.trim().to_string(),
        }];
    }
    for c in &mut out {
        c.text = c.text.trim().to_string();
    }
    out
}

/// A citation that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CiteError {
    #[error("`{at}` opens a citation that is not closed on its line")]
    Unclosed { at: String },
    #[error("`{at}` opens a citation inside a citation")]
    Nested { at: String },
    #[error("`{at}` has an empty place where an id should be")]
    Empty { at: String },
    #[error("`{at}` closes a citation that was never opened")]
    StrayClose { at: String },
}

/// A little context around byte `p` of `text`, for a message.
fn around(text: &str, p: usize) -> String {
    let start = text[..p].char_indices().rev().nth(11).map_or(0, |(i, _)| i);
    let end = text[p..]
        .char_indices()
        .nth(24)
        .map_or(text.len(), |(i, _)| p + i);
    text[start..end].replace('\n', " ")
}

/// The citations of a text, in order: each the handles inside one pair of brackets.
pub fn citations(text: &str) -> Result<Vec<Vec<String>>, CiteError> {
    let mut out = Vec::new();
    let mut rest = text.char_indices().peekable();
    while let Some((p, c)) = rest.next() {
        match c {
            ']' => {
                return Err(CiteError::StrayClose {
                    at: around(text, p),
                });
            }
            '[' => {
                let mut end = None;
                for (q, d) in rest.by_ref() {
                    match d {
                        ']' => {
                            end = Some(q);
                            break;
                        }
                        '[' => {
                            return Err(CiteError::Nested {
                                at: around(text, p),
                            });
                        }
                        '\n' => break,
                        _ => {}
                    }
                }
                let Some(q) = end else {
                    return Err(CiteError::Unclosed {
                        at: around(text, p),
                    });
                };
                let inner = &text[p + 1..q];
                let handles: Vec<String> = inner.split(',').map(|h| h.trim().to_string()).collect();
                if handles.iter().any(String::is_empty) {
                    return Err(CiteError::Empty {
                        at: text[p..=q].to_string(),
                    });
                }
                out.push(handles);
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Whether a line is a heading (it needs no citation): it ends in `:` or starts with `#`.
fn is_heading(line: &str) -> bool {
    let t = line.trim();
    t.ends_with(':') || t.starts_with('#')
}

/// The first line that is neither empty, a heading, nor carries a citation.
pub fn uncited_line(text: &str) -> Option<&str> {
    text.lines()
        .map(str::trim)
        .find(|l| !(l.is_empty() || is_heading(l) || (l.contains('[') && l.contains(']'))))
}

/// The text without its citations (what the retention audit reads).
pub fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut depth = false;
    for c in text.chars() {
        match c {
            '[' => depth = true,
            ']' if depth => depth = false,
            _ if depth => {}
            _ => out.push(c),
        }
    }
    // "sentence [m4]." leaves "sentence ." — close the gap.
    out.lines()
        .map(|l| {
            l.replace(" .", ".")
                .replace(" ,", ",")
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Rewrite the handles inside a text's citations (`[#1]` → `[msg-summary-2-5]`), nothing else.
pub fn rename(text: &str, names: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(p) = rest.find('[') {
        let Some(q) = rest[p..].find(']').map(|q| p + q) else {
            break;
        };
        out.push_str(&rest[..=p]);
        let inner: Vec<String> = rest[p + 1..q]
            .split(',')
            .map(|h| {
                let h = h.trim();
                names.get(h).cloned().unwrap_or_else(|| h.to_string())
            })
            .collect();
        out.push_str(&inner.join(", "));
        out.push(']');
        rest = &rest[q + 1..];
    }
    out.push_str(rest);
    out
}

/// Why a candidate was rejected.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Rejection {
    #[error("it is empty")]
    Empty,
    #[error("a citation does not parse: {0}")]
    Malformed(#[from] CiteError),
    #[error("it cites no source: every line must end with the ids it draws on, like [m4, m7]")]
    NoCitation,
    #[error("the line {line:?} cites no source")]
    UncitedLine { line: String },
    #[error("it cites `{id}`, which is not an entry of this conversation")]
    UnknownId { id: String },
    #[error("it cites `{id}` (line {line}), which is not in this excerpt")]
    NotInSpan { id: String, line: u32 },
    #[error("it cites itself ([{name}])")]
    SelfCitation { name: String },
    #[error("it forms a cycle of summaries citing each other: {}", path.join(" → "))]
    Cycle { path: Vec<String> },
    #[error("it cites {name}, which was rejected")]
    CitesRejected { name: String },
    #[error("its name {name} is taken by another summary")]
    NameTaken { name: String },
    #[error(
        "it draws on {} not already summarized ({}); a summary needs at least {MIN_SOURCES} (cite more entries, or merge it into another summary)",
        plural(new.len(), "entry", "entries"),
        if new.is_empty() { "none".to_string() } else { new.join(", ") }
    )]
    TooFewSources { new: Vec<String> },
    #[error(
        "it is ~{tokens} tokens with mf's label, over {}/{} of the ~{consumed} tokens of the entries it consumes (at most {limit}): shorten it, or cite more entries",
        MAX_SHARE.0, MAX_SHARE.1
    )]
    TooLong {
        tokens: usize,
        consumed: usize,
        limit: usize,
    },
    #[error("its retention audit declined it: {0}")]
    Lossy(fault::Faults),
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl Rejection {
    /// A short stable name for the reason (in `--json` and counts).
    pub fn code(&self) -> &'static str {
        match self {
            Rejection::Empty => "empty",
            Rejection::Malformed(_) => "malformed-citation",
            Rejection::NoCitation | Rejection::UncitedLine { .. } => "uncited",
            Rejection::UnknownId { .. } => "unknown-id",
            Rejection::NotInSpan { .. } => "not-in-span",
            Rejection::SelfCitation { .. } => "self-citation",
            Rejection::Cycle { .. } => "cycle",
            Rejection::CitesRejected { .. } => "cites-rejected",
            Rejection::NameTaken { .. } => "name-taken",
            Rejection::TooFewSources { .. } => "single-source",
            Rejection::TooLong { .. } => "too-long",
            Rejection::Lossy(_) => "lossy",
        }
    }
}

/// A candidate that stands: what it consumes and what its entry will measure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Accepted {
    pub name: String,
    /// Vetted text, citations as the summarizer wrote them.
    pub text: String,
    /// The call that brought it (1-based).
    pub round: usize,
    /// Offer entries it consumes, in conversation order: what it cites that was not consumed
    /// before, and the rest of their tool units.
    pub entries: Vec<usize>,
    /// Of those, the ones it cites.
    pub sources: Vec<usize>,
    /// Accepted candidates it folds in (indices into `Review::accepted`).
    pub nested: Vec<usize>,
    /// The accepted candidate that folds this one in.
    pub nested_in: Option<usize>,
    pub from_turn: u64,
    pub to_turn: u64,
    pub leaves: usize,
    /// Characters of its entry's content: mf's label, a blank line, the text.
    pub chars: usize,
    /// Characters of what it consumes.
    pub consumed_chars: usize,
    /// 0 when it nests nothing, else one more than the deepest candidate it nests.
    pub level: usize,
}

/// A candidate that was turned down, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejected {
    pub name: String,
    pub text: String,
    pub round: usize,
    pub reason: Rejection,
}

/// What a judge sees of a candidate that passed every structural check.
#[derive(Debug, Clone, Copy)]
pub struct Preview<'a> {
    pub name: &'a str,
    pub text: &'a str,
    pub entries: &'a [usize],
    /// Texts of the candidates it nests.
    pub nested: &'a [&'a str],
    /// Each nested candidate's round, name and the turns (first, last) it stands for, in
    /// `nested`'s order.
    pub nested_of: &'a [(usize, &'a str, u64, u64)],
}

/// What one reply came to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Round {
    pub candidates: usize,
    /// Indices into `Review::accepted`.
    pub accepted: Vec<usize>,
    /// Indices into `Review::rejected`.
    pub rejected: Vec<usize>,
}

/// The state of one cited fold across its calls.
#[derive(Debug, Clone)]
pub struct Review<'o> {
    pub offer: &'o Offer,
    by_handle: HashMap<String, usize>,
    /// For each offer entry: the accepted candidate that consumes it.
    pub consumed_by: Vec<Option<usize>>,
    pub accepted: Vec<Accepted>,
    pub rejected: Vec<Rejected>,
    /// Calls made so far.
    pub calls: usize,
    /// What the last reply came to.
    pub last: Option<Round>,
}

/// A candidate's citations, resolved.
struct Refs {
    entries: Vec<usize>,
    names: Vec<String>,
}

impl<'o> Review<'o> {
    pub fn new(offer: &'o Offer) -> Self {
        let mut by_handle = HashMap::with_capacity(offer.entries.len() * 2);
        for (k, e) in offer.entries.iter().enumerate() {
            by_handle.insert(format!("@{}", e.line), k);
            by_handle.insert(e.handle.clone(), k);
        }
        Review {
            offer,
            by_handle,
            consumed_by: vec![None; offer.entries.len()],
            accepted: Vec::new(),
            rejected: Vec::new(),
            calls: 0,
            last: None,
        }
    }

    /// Whether another call is due: the first, or a correction after a reply with rejected
    /// candidates, within `MAX_CALLS`.
    pub fn may_ask(&self) -> bool {
        if self.calls >= MAX_CALLS {
            return false;
        }
        match &self.last {
            None => self.calls == 0,
            Some(r) => r.candidates > 0 && !r.rejected.is_empty(),
        }
    }

    /// Count a call about to be made; returns its round (1-based).
    pub fn begin_call(&mut self) -> usize {
        self.calls += 1;
        self.calls
    }

    /// Offer entries no accepted candidate consumes, in conversation order.
    pub fn unconsumed(&self) -> Vec<usize> {
        (0..self.offer.entries.len())
            .filter(|&k| self.consumed_by[k].is_none())
            .collect()
    }

    fn taken(&self, name: &str) -> bool {
        self.accepted.iter().any(|a| a.name == name)
    }

    /// The candidates' names: as given, else the first free `#N`.
    fn names(&self, cands: &[Candidate]) -> Vec<String> {
        let mut names: Vec<String> = Vec::with_capacity(cands.len());
        let given: HashSet<String> = cands.iter().filter_map(|c| c.name.clone()).collect();
        let mut next = 1usize;
        for c in cands {
            let name = match &c.name {
                Some(n) => n.clone(),
                None => loop {
                    let n = format!("#{next}");
                    next += 1;
                    if !self.taken(&n) && !given.contains(&n) && !names.contains(&n) {
                        break n;
                    }
                },
            };
            names.push(name);
        }
        names
    }

    /// Check the candidates of one reply (call `begin_call` first). `outside` says where an id
    /// that is not in the span lives in the file (its line), if anywhere; `judge` has the last
    /// word on a candidate that passed every other check (`Err(why)`: declined).
    pub fn review(
        &mut self,
        reply: &str,
        outside: &dyn Fn(&str) -> Option<u32>,
        judge: &mut dyn FnMut(&Preview<'_>) -> Result<(), fault::Faults>,
    ) -> Round {
        let round = self.calls.max(1);
        let cands = split_reply(reply);
        let mut result = Round {
            candidates: cands.len(),
            ..Round::default()
        };
        let names = self.names(&cands);
        let n = cands.len();
        let mut verdict: Vec<Option<Rejection>> = vec![None; n];
        let mut texts: Vec<String> = vec![String::new(); n];
        let mut refs: Vec<Option<Refs>> = (0..n).map(|_| None).collect();
        for k in 0..n {
            let name = &names[k];
            if self.taken(name) || names[..k].contains(name) {
                verdict[k] = Some(Rejection::NameTaken { name: name.clone() });
                texts[k] = cands[k].text.clone();
                continue;
            }
            match frame::vet(&cands[k].text) {
                Ok(t) => texts[k] = t,
                Err(_) => {
                    verdict[k] = Some(Rejection::Empty);
                    continue;
                }
            }
            match self.resolve(&texts[k], name, &names, outside) {
                Ok(r) => refs[k] = Some(r),
                Err(why) => verdict[k] = Some(why),
            }
        }
        // Cycles among this reply's candidates.
        let index: HashMap<&str, usize> = names
            .iter()
            .enumerate()
            .map(|(k, s)| (s.as_str(), k))
            .collect();
        let edges: Vec<Vec<usize>> = (0..n)
            .map(|k| {
                refs[k].as_ref().map_or_else(Vec::new, |r| {
                    r.names
                        .iter()
                        .filter_map(|s| index.get(s.as_str()).copied())
                        .filter(|&j| j != k)
                        .collect()
                })
            })
            .collect();
        for (k, v) in verdict.iter_mut().enumerate() {
            if v.is_none()
                && let Some(path) = cycle_through(k, &edges)
            {
                *v = Some(Rejection::Cycle {
                    path: path.iter().map(|&j| names[j].clone()).collect(),
                });
            }
        }
        // The rest in dependency order (a candidate after those it nests), else reply order.
        let mut done = vec![false; n];
        let mut order = Vec::with_capacity(n);
        while order.len() < n {
            let pick = (0..n)
                .find(|&k| !done[k] && (verdict[k].is_some() || edges[k].iter().all(|&j| done[j])));
            // Only members of cycles remain otherwise, and those are rejected already.
            let k = pick.unwrap_or_else(|| (0..n).find(|&k| !done[k]).expect("one remains"));
            done[k] = true;
            order.push(k);
        }
        let mut accepted_as: Vec<Option<usize>> = vec![None; n];
        for k in order {
            let name = names[k].clone();
            let outcome = match (verdict[k].take(), refs[k].take()) {
                (Some(why), _) => Err(why),
                (None, Some(r)) => {
                    let accepted_in_reply =
                        |s: &str| index.get(s).copied().and_then(|k| accepted_as[k]);
                    self.weigh(&texts[k], &name, round, r, &accepted_in_reply, judge)
                }
                (None, None) => Err(Rejection::Empty),
            };
            match outcome {
                Ok(a) => {
                    let id = self.accepted.len();
                    for &e in &a.entries {
                        self.consumed_by[e] = Some(id);
                    }
                    for &j in &a.nested {
                        self.accepted[j].nested_in = Some(id);
                    }
                    self.accepted.push(a);
                    accepted_as[k] = Some(id);
                    result.accepted.push(id);
                }
                Err(reason) => {
                    result.rejected.push(self.rejected.len());
                    self.rejected.push(Rejected {
                        name,
                        text: if texts[k].is_empty() {
                            cands[k].text.clone()
                        } else {
                            texts[k].clone()
                        },
                        round,
                        reason,
                    });
                }
            }
        }
        self.last = Some(result.clone());
        result
    }

    /// Resolve a candidate's citations: entries of the span, and names of candidates.
    fn resolve(
        &self,
        text: &str,
        name: &str,
        names: &[String],
        outside: &dyn Fn(&str) -> Option<u32>,
    ) -> Result<Refs, Rejection> {
        let groups = citations(text)?;
        if groups.is_empty() {
            return Err(Rejection::NoCitation);
        }
        if let Some(line) = uncited_line(text) {
            return Err(Rejection::UncitedLine {
                line: line.chars().take(120).collect(),
            });
        }
        let mut entries = Vec::new();
        let mut cited_names = Vec::new();
        for h in groups.iter().flatten() {
            if h.starts_with('#') {
                if h == name {
                    return Err(Rejection::SelfCitation {
                        name: name.to_string(),
                    });
                }
                if names.iter().any(|s| s == h) || self.taken(h) {
                    if !cited_names.contains(h) {
                        cited_names.push(h.clone());
                    }
                    continue;
                }
                if self.rejected.iter().any(|r| &r.name == h) {
                    return Err(Rejection::CitesRejected { name: h.clone() });
                }
                return Err(Rejection::UnknownId { id: h.clone() });
            }
            match self.by_handle.get(h.as_str()) {
                Some(&k) => {
                    if !entries.contains(&k) {
                        entries.push(k);
                    }
                }
                None => {
                    return Err(match outside(h) {
                        Some(line) => Rejection::NotInSpan {
                            id: h.clone(),
                            line,
                        },
                        None => Rejection::UnknownId { id: h.clone() },
                    });
                }
            }
        }
        Ok(Refs {
            entries,
            names: cited_names,
        })
    }

    /// The measures of a candidate whose citations resolved: what it newly consumes, whether
    /// that is enough, whether it is short enough, and what the judge says.
    /// `accepted_in_reply`: the accepted id of a candidate of this reply checked before it.
    fn weigh(
        &self,
        text: &str,
        name: &str,
        round: usize,
        refs: Refs,
        accepted_in_reply: &dyn Fn(&str) -> Option<usize>,
        judge: &mut dyn FnMut(&Preview<'_>) -> Result<(), fault::Faults>,
    ) -> Result<Accepted, Rejection> {
        let offer = &self.offer.entries;
        // Candidates it nests: accepted ones (in an earlier reply or this one) not nested yet.
        let mut nested = Vec::new();
        for s in &refs.names {
            // An accepted candidate (of an earlier reply, or checked before this one), else a
            // candidate of this reply that was rejected.
            let id = match self.accepted.iter().position(|a| &a.name == s) {
                Some(id) => id,
                None => match accepted_in_reply(s) {
                    Some(id) => id,
                    None => return Err(Rejection::CitesRejected { name: s.clone() }),
                },
            };
            if self.accepted[id].nested_in.is_none() && !nested.contains(&id) {
                nested.push(id);
            }
        }
        let sources: Vec<usize> = refs
            .entries
            .iter()
            .copied()
            .filter(|&k| self.consumed_by[k].is_none())
            .collect();
        if sources.len() + nested.len() < MIN_SOURCES {
            let mut new: Vec<String> = sources.iter().map(|&k| offer[k].handle.clone()).collect();
            new.extend(nested.iter().map(|&j| self.accepted[j].name.clone()));
            return Err(Rejection::TooFewSources { new });
        }
        let units: HashSet<u32> = sources.iter().map(|&k| offer[k].unit).collect();
        let entries: Vec<usize> = (0..offer.len())
            .filter(|&k| self.consumed_by[k].is_none() && units.contains(&offer[k].unit))
            .collect();
        let (mut from, mut to, mut leaves, mut consumed) = (u64::MAX, 0u64, 0usize, 0usize);
        for &k in &entries {
            from = from.min(offer[k].from_turn);
            to = to.max(offer[k].to_turn);
            leaves += offer[k].leaves;
            consumed += offer[k].chars;
        }
        for &j in &nested {
            let a = &self.accepted[j];
            from = from.min(a.from_turn);
            to = to.max(a.to_turn);
            leaves += a.leaves;
            consumed += a.chars;
        }
        // What the summary says, with the label that says what it stands for; the words after
        // it that say how to reach the originals (the same for every summary) do not count.
        let label = frame::plain_label(from, to, leaves, &self.offer.model);
        let chars = label.chars().count() + 2 + text.chars().count();
        let tokens = estimate_tokens(chars);
        let consumed_tokens = estimate_tokens(consumed);
        let limit = consumed_tokens * MAX_SHARE.0 / MAX_SHARE.1;
        if tokens > limit {
            return Err(Rejection::TooLong {
                tokens,
                consumed: consumed_tokens,
                limit,
            });
        }
        let nested_texts: Vec<&str> = nested
            .iter()
            .map(|&j| self.accepted[j].text.as_str())
            .collect();
        let nested_of: Vec<(usize, &str, u64, u64)> = nested
            .iter()
            .map(|&j| {
                let a = &self.accepted[j];
                (a.round, a.name.as_str(), a.from_turn, a.to_turn)
            })
            .collect();
        judge(&Preview {
            name,
            text,
            entries: &entries,
            nested: &nested_texts,
            nested_of: &nested_of,
        })
        .map_err(Rejection::Lossy)?;
        let level = nested
            .iter()
            .map(|&j| self.accepted[j].level + 1)
            .max()
            .unwrap_or(0);
        Ok(Accepted {
            name: name.to_string(),
            text: text.to_string(),
            round,
            sources,
            entries,
            nested,
            nested_in: None,
            from_turn: from,
            to_turn: to,
            leaves,
            chars,
            consumed_chars: consumed,
            level,
        })
    }

    /// What the next request tells the summarizer about its last reply: what stands, what was
    /// rejected and why, and what it may still cite.
    pub fn feedback(&self) -> Option<String> {
        let last = self.last.as_ref()?;
        if last.rejected.is_empty() {
            return None;
        }
        let handles = |ks: &[usize]| -> String {
            ks.iter()
                .map(|&k| self.offer.entries[k].handle.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut s = String::from("mf checked the summaries of your last reply.\n");
        if !self.accepted.is_empty() {
            s.push_str("Accepted (they stand; their entries are taken):\n");
            for a in &self.accepted {
                s.push_str(&format!("- {} covers {}\n", a.name, handles(&a.entries)));
            }
        }
        s.push_str("Rejected:\n");
        for &r in &last.rejected {
            let r = &self.rejected[r];
            let excerpt: String = r.text.chars().take(400).collect();
            let more = if r.text.chars().count() > 400 {
                "…"
            } else {
                ""
            };
            s.push_str(&format!(
                "- {}: {}\n  It read: {:?}{more}\n",
                r.name, r.reason, excerpt
            ));
        }
        let free = self.unconsumed();
        if free.is_empty() {
            s.push_str("Every entry of the excerpt is taken.\n");
        } else {
            let shown: Vec<usize> = free.iter().copied().take(80).collect();
            s.push_str(&format!(
                "Entries no summary covers yet: {}{}\n",
                handles(&shown),
                if free.len() > shown.len() {
                    ", …"
                } else {
                    ""
                }
            ));
        }
        let taken: Vec<&str> = self.accepted.iter().map(|a| a.name.as_str()).collect();
        s.push_str(&format!(
            "Send corrected versions of the rejected summaries{} under the same rules, or reply {NONE_REPLY}.",
            if taken.is_empty() {
                String::new()
            } else {
                format!(" (names {} are taken)", taken.join(", "))
            }
        ));
        Some(s)
    }

    /// Accepted candidates grouped by level: those that nest nothing first.
    pub fn by_level(&self) -> Vec<Vec<usize>> {
        let top = self.accepted.iter().map(|a| a.level).max();
        let Some(top) = top else {
            return Vec::new();
        };
        (0..=top)
            .map(|l| {
                (0..self.accepted.len())
                    .filter(|&j| self.accepted[j].level == l)
                    .collect()
            })
            .collect()
    }

    /// A short account of what was rejected, for a decline record.
    pub fn rejection_summary(&self) -> String {
        let mut counts: Vec<(&'static str, usize)> = Vec::new();
        for r in &self.rejected {
            match counts.iter_mut().find(|(c, _)| *c == r.reason.code()) {
                Some((_, n)) => *n += 1,
                None => counts.push((r.reason.code(), 1)),
            }
        }
        let tally: Vec<String> = counts.iter().map(|(c, n)| format!("{c} {n}")).collect();
        let mut s = format!(
            "{} in {}, {} rejected",
            plural(
                self.accepted.len() + self.rejected.len(),
                "candidate",
                "candidates"
            ),
            plural(self.calls, "call", "calls"),
            self.rejected.len()
        );
        if !tally.is_empty() {
            s.push_str(&format!(" ({})", tally.join(", ")));
        }
        if let Some(r) = self.rejected.last() {
            s.push_str(&format!("; last: {}: {}", r.name, r.reason));
        }
        s
    }
}

/// A cycle through `k` in the citation graph (`[k, …, k]`), if `k` lies on one.
fn cycle_through(k: usize, edges: &[Vec<usize>]) -> Option<Vec<usize>> {
    // Breadth-first from k's successors back to k, remembering the way.
    let n = edges.len();
    let mut prev = vec![usize::MAX; n];
    let mut queue = std::collections::VecDeque::new();
    for &j in &edges[k] {
        if prev[j] == usize::MAX {
            prev[j] = k;
            queue.push_back(j);
        }
    }
    while let Some(u) = queue.pop_front() {
        if u == k {
            let mut path = vec![k];
            let mut v = prev[k];
            while v != k {
                path.push(v);
                v = prev[v];
            }
            path.push(k);
            let last = path.len() - 1;
            path[1..last].reverse();
            return Some(path);
        }
        for &j in &edges[u] {
            if prev[j] == usize::MAX {
                prev[j] = u;
                queue.push_back(j);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests;
