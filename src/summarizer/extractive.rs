//! `Extractive`: the built-in offline summarizer (`--model extractive`). Deterministic, no key.
//!
//! Fidelity first. It reads the span as the retention audit does (`fold::audit`): sentences,
//! each with the items it carries (paths, commands, figures, dates, identifiers, URLs, names,
//! error codes…). It then
//!
//! 1. keeps the user's requests and constraints in their own words (the best sentence of each
//!    user message, strongest first) within a fifth of the budget;
//! 2. covers every item the audit counts — said by the user or the assistant, or in a tool
//!    call's arguments — at least once, preferring the sentences that carry the most uncovered
//!    items per character (a greedy set cover); a deadline or owner the user repeats is kept
//!    once;
//!    then every tool call the agent made that the cover left out, as its tool and target
//!    (`Bash(grep -n port app.yaml)`, `Read(src/a.rs)`: the command's first line, the path, the
//!    URL, the pattern — never a file's content or an edit's text; a call's other values, like
//!    a `workdir`, once), a turn's calls on one line, calls of one shape as a pattern line, the
//!    same call made twice once;
//! 3. gives the remaining user messages a voice, then keeps the assistant's decisions;
//! 4. with what room is left (half the budget, and at most [`ASIDE_ROOM`] more), covers items
//!    found only in tool results;
//!
//! all within `target_chars`, which it never exceeds. A prompt that only acknowledges or says to
//! go on ("ok", "yes do it") is never a voice. The model's reasoning (`Piece::reasoning`:
//! thinking blocks, reasoning items) is blanked before anything is read: it is never copied,
//! counted or taken for a correction. Before it replies it checks the summary with the audit's
//! stale-value rule: a call that names a corrected value is listed as superseded, any other such
//! line left out. When the span corrects a value ("the
//! port is 9090, not 8080"), the correcting sentence carries the latest value and any sentence
//! that states the old value as current is dropped or listed under `Superseded:`. It copies
//! sentences (trimming long ones around their items, marked `…`) and never invents text; mf's
//! label and delimiter text inside copied sentences is defused.
//!
//! The layout follows the default instruction's sections: `Goal:`, `Decisions:`, `State:`,
//! `Facts:`, `Next:`, `Superseded:`, each a list of `- T{turn} {author}: sentence…` lines.
//!
//! `--strategy cited`: it cites by construction. It cuts the span at turn boundaries into a few
//! stretches of similar size (at most [`MAX_GROUPS`]), summarizes each as above (within a quarter
//! of the stretch, or its share of the target if that is more) and ends every line with the
//! handle of the entry its sentences were copied from (`- T3 assistant: … [m9]`), one summary
//! per stretch. An entry whose every item the summary carries is cited on the line that carries
//! one. A line that would cost more than 70 % of the entry (or tool unit) it lets mf fold is not
//! written: an entry no summary cites stays verbatim, so leaving it loses nothing. It checks its
//! reply with the same rules mf applies (`fold::cite`): a summary that would be too long gets a
//! smaller budget; one that still breaks a rule is merged into its neighbour's stretch, or,
//! alone, left out. Asked for a correction, it has nothing better to offer and replies `NONE`.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

use crate::fold::audit::{self, ItemClass, Source, Unit};
use crate::fold::cite::{self, Offer, Rejection, Review};
use crate::fold::prompt::{Piece, without_reasoning};
use crate::fold::{CiteRequest, SummaryRequest};
use crate::summarizer::{Summarizer, SummaryFuture, SummaryReply};

mod calls;
mod cited;
mod cut;
mod patterns;
mod select;

use calls::*;
use cited::*;
pub use cited::{MAX_GROUPS, summarize_cited};
use cut::*;
use patterns::*;
use select::*;

/// The name users pass to `--model`.
pub const NAME: &str = "extractive";

/// Longest piece of a sentence kept as one unit; longer sentences are cut around their items.
const MAX_CHUNK: usize = 240;
/// Context kept on each side of an item when a long sentence is cut.
const WINDOW: usize = 70;
/// Longest tool-call argument value kept whole.
const MAX_VALUE: usize = 200;
/// The share of the budget the user's requests and constraints may take before the items.
const VOICE_SHARE: f64 = 0.2;
/// The most a summary spends, in characters, on what the audit does not count (about 2,000
/// tokens): enough for a span's telling tool output, and a 2M-token span's summary stays a
/// fraction of its cap.
const ASIDE_ROOM: usize = 8_000;

#[derive(Debug, Default, Clone, Copy)]
pub struct Extractive;

impl Summarizer for Extractive {
    fn model(&self) -> &str {
        NAME
    }

    fn summarize<'a>(&'a self, request: &'a SummaryRequest) -> SummaryFuture<'a> {
        let compose = |pieces: &[Piece], cite: Option<&CiteRequest>, target: usize| match cite {
            Some(c) => summarize_cited(pieces, c, target),
            None => summarize(pieces, target),
        };
        Box::pin(async move {
            // On a thread of its own, so that chunks are summarized side by side.
            let text = match tokio::runtime::Handle::try_current() {
                Ok(_) => {
                    let (pieces, cite) = (request.pieces.clone(), request.cite.clone());
                    let target = request.target_chars;
                    tokio::task::spawn_blocking(move || compose(&pieces, cite.as_ref(), target))
                        .await
                        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
                }
                Err(_) => compose(&request.pieces, request.cite.as_ref(), request.target_chars),
            };
            Ok(SummaryReply {
                text,
                ..SummaryReply::default()
            })
        })
    }

    fn parallelism(&self) -> Option<usize> {
        Some(std::thread::available_parallelism().map_or(1, |n| n.get()))
    }
}

/// The summary's sections, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Section {
    Goal,
    Decisions,
    State,
    Facts,
    Next,
    Superseded,
}

impl Section {
    fn heading(self) -> &'static str {
        match self {
            Section::Goal => "Goal:",
            Section::Decisions => "Decisions:",
            Section::State => "State:",
            Section::Facts => "Facts:",
            Section::Next => "Next:",
            Section::Superseded => "Superseded:",
        }
    }
}

/// A copyable piece of the span: a sentence, a cut of a long sentence, or a tool call.
#[derive(Debug)]
struct Chunk {
    piece: usize,
    /// The piece whose line it is written on: its own, or (a tool call, not citing) the first
    /// call of its turn's, so that a turn's calls share one line.
    line: usize,
    /// A tool call (its name and target) or a pattern line of calls.
    call: bool,
    /// Conversation order.
    order: usize,
    source: Source,
    /// What the summary would show (whitespace collapsed, cuts marked `…`, defused).
    text: String,
    chars: usize,
    /// Inventory ids of the items it carries.
    ids: Vec<usize>,
    /// Ids that must be in the summary before this chunk may be: the latest values of the
    /// corrected values it names.
    requires: Vec<usize>,
    section: Section,
    /// States a value the span later corrected, as if it were current.
    superseded: bool,
}

/// One item of the span, as the selection sees it.
#[derive(Debug, Clone, Copy)]
struct Need {
    weight: f64,
    tool_only: bool,
    /// Said by the user (what the audit weighs most).
    user: bool,
}

/// Pick sentences within `budget` characters and lay them out by section, turn and author.
pub fn summarize(pieces: &[Piece], budget: usize) -> String {
    compose(pieces, budget, None)
}

/// `summarize`, with each line ending in the citation of its piece when `cite` gives handles
/// (parallel to `pieces`).
fn compose(pieces: &[Piece], budget: usize, cite: Option<CiteCtx<'_>>) -> String {
    if budget == 0 || pieces.is_empty() {
        return String::new();
    }
    let all = pieces;
    // What the model thought is not what it said: its reasoning is never copied.
    let stripped = without_reasoning(pieces);
    let pieces: &[Piece] = &stripped;
    let units = audit::units(pieces);
    let corrections = audit::corrections(pieces, &units);

    let (ids, needs) = needs_of(&units, &corrections);
    let mut chunks = chunks_of(pieces, &units, &corrections, &ids, cite.is_some());
    let calls = chunks.len();
    let pattern_of = if cite.is_none() {
        add_patterns(&mut chunks)
    } else {
        HashMap::new()
    };
    // Checked as mf's audit will read it: when the summary states a corrected value as current
    // (chunks side by side on a line read as one sentence, a copy of the same words from another
    // entry, a correction the model's reasoning made), a call that names the old value without
    // the new one is listed as superseded (it was made with it), any other such chunk is left
    // out, and the chunks are chosen again.
    let mut banned = std::collections::HashSet::new();
    let mut rounds = 0;
    loop {
        let plan = Plan {
            pieces,
            budget,
            cite,
            chunks: &chunks,
            needs: &needs,
            calls,
            pattern_of: &pattern_of,
        };
        let sel = plan.choose(banned.clone());
        if sel.chosen.is_empty() {
            // Citing, a line that does not pay for itself is not written: nothing to say.
            if cite.is_some() {
                return String::new();
            }
            return fallback(pieces, &chunks, budget);
        }
        let out = sel.render(&chunks);
        debug_assert!(
            out.chars().count() <= budget,
            "{} > {budget}",
            out.chars().count()
        );
        if cite.is_some() || rounds == 3 {
            return out;
        }
        rounds += 1;
        let a = audit::audit(all, &out, "", &audit::AuditOptions::default());
        if a.superseded.is_empty() {
            return out;
        }
        let pairs: Vec<(String, String)> = a
            .superseded
            .iter()
            .map(|v| (v.old.to_lowercase(), v.new.to_lowercase()))
            .collect();
        let mut changed = false;
        for c in &mut chunks {
            let lower = c.text.to_lowercase();
            if c.section == Section::Superseded
                || !pairs
                    .iter()
                    .any(|(o, n)| lower.contains(o) && !lower.contains(n))
            {
                continue;
            }
            if c.call {
                c.section = Section::Superseded;
                c.superseded = true;
                c.line = c.piece;
                changed = true;
            } else {
                changed |= banned.insert(c.order);
            }
        }
        if !changed {
            return out;
        }
    }
}

/// What a selection is made from.
struct Plan<'a> {
    pieces: &'a [Piece],
    budget: usize,
    cite: Option<CiteCtx<'a>>,
    chunks: &'a [Chunk],
    needs: &'a [Need],
    /// Chunks before this index are the units' own (pattern lines follow).
    calls: usize,
    pattern_of: &'a HashMap<usize, usize>,
}

impl<'a> Plan<'a> {
    /// The chunks chosen within the budget, none of `banned`.
    fn choose(&self, banned: std::collections::HashSet<usize>) -> Selection<'a> {
        let Plan {
            pieces,
            budget,
            cite,
            chunks,
            needs,
            calls,
            pattern_of,
        } = *self;
        let mut sel = Selection::new(pieces, budget, needs.len(), cite);
        sel.banned = banned;
        // 0. The user's requests and constraints in their own words (the best sentence of each user
        // message), strongest first, within a share of the budget.
        let mut voices: Vec<(u32, usize)> = Vec::new();
        let mut best_of_piece: Vec<Option<(u32, usize)>> = vec![None; pieces.len()];
        for c in chunks {
            if c.source == Source::User && !c.superseded {
                let s = voice_score(&c.text);
                if s > 0 && best_of_piece[c.piece].is_none_or(|(b, _)| s > b) {
                    best_of_piece[c.piece] = Some((s, c.order));
                }
            }
        }
        voices.extend(best_of_piece.into_iter().flatten());
        voices.sort_by_key(|&(s, order)| (std::cmp::Reverse(s), order));
        // The same words said again add nothing.
        let mut said: std::collections::HashSet<&str> = std::collections::HashSet::new();
        voices.retain(|&(_, i)| said.insert(chunks[i].text.as_str()));
        let reserve = (budget as f64 * VOICE_SHARE) as usize;
        let in_reserve =
            |sel: &Selection<'_>, i: usize| sel.total + sel.cost(&chunks[i]) <= reserve + 1;
        for &(s, i) in &voices {
            if s >= 3 && in_reserve(&sel, i) {
                // A question is stated as the request it is: with the statement before it in the
                // same message ("Checkout latency has been bad since this morning. Can you find
                // out what changed?"), not bare.
                if let Some(ctx) = context_of(chunks, i)
                    && sel.total + sel.cost(&chunks[i]) + chunks[ctx].chars <= reserve
                {
                    sel.try_add(chunks, ctx);
                }
                if in_reserve(&sel, i) {
                    sel.try_add(chunks, i);
                }
            }
        }
        // The user's deadlines and named owners, in their own words, within a share of their own.
        // A deadline said again (every item of it already kept) adds nothing.
        for c in chunks {
            if c.source == Source::User
                && !c.superseded
                && !c.ids.iter().all(|&id| sel.covered[id])
                && binds(&c.text)
                && sel.total + sel.cost(c) <= 2 * reserve + 1
            {
                sel.try_add(chunks, c.order);
            }
        }
        // 1. Every item the user said (their deadlines, owners, constraints), then every counted
        // item once. (Twice: a sentence that names a corrected value waits until the correction
        // is in.)
        let user_needs: Vec<Need> = needs
            .iter()
            .map(|n| Need {
                weight: if n.user { n.weight } else { 0.0 },
                ..*n
            })
            .collect();
        sel.cover(chunks, &user_needs, false);
        sel.cover(chunks, needs, false);
        // Then every call the agent made that the cover left out (it carries no item the summary
        // lacks, or did not fit before): its tool and target, calls of one shape as their
        // pattern line, the same call made again once. (Citing, a line must pay for what it lets
        // mf fold: calls are chosen as any other.)
        let mut made: std::collections::HashSet<&str> = std::collections::HashSet::new();
        for c in chunks[..calls].iter().filter(|c| c.call && cite.is_none()) {
            let i = pattern_of.get(&c.order).copied().unwrap_or(c.order);
            if made.insert(chunks[i].text.as_str()) {
                sel.try_add(chunks, i);
            }
        }
        sel.cover(chunks, needs, false);
        // 2. The other user messages' voices, then the assistant's decisions.
        for &(_, i) in &voices {
            sel.try_add(chunks, i);
        }
        for c in chunks {
            if c.section == Section::Decisions && c.source != Source::User {
                sel.try_add(chunks, c.order);
            }
        }
        // 3. Items found only in tool results (not salient: the audit does not count them), within
        // half the budget and at most `ASIDE_ROOM` more: a long tool log must not make the summary
        // as long as it may be.
        let full = sel.budget;
        sel.budget = sel
            .budget
            .min(sel.total.max((full / 2).min(sel.total + ASIDE_ROOM)));
        sel.cover(chunks, needs, true);
        sel.cover(chunks, needs, true);
        sel.budget = full;
        if cite.is_some() {
            sel.represent(chunks, needs);
        }
        sel
    }
}

/// The inventory: one id per (class, key) of the items the units carry, and what covering
/// each is worth (the user's words and corrected values most, tool-output noise least).
fn needs_of<'u>(
    units: &'u [Unit],
    corrections: &[audit::Correction],
) -> (HashMap<(ItemClass, &'u str), usize>, Vec<Need>) {
    let mut ids: HashMap<(ItemClass, &str), usize> = HashMap::new();
    let mut needs: Vec<Need> = Vec::new();
    for u in units {
        for it in &u.items {
            let next = needs.len();
            let id = *ids.entry((it.class, it.key.as_str())).or_insert(next);
            if id == next {
                needs.push(Need {
                    weight: 1.0,
                    tool_only: true,
                    user: false,
                });
            }
            let n = &mut needs[id];
            if u.source != Source::ToolResult {
                n.tool_only = false;
            }
            if u.source == Source::User {
                n.weight = n.weight.max(1.5);
                n.user = true;
            }
        }
    }
    let mut old_ids = Vec::new();
    let mut new_ids = Vec::new();
    for c in corrections {
        if let Some(&i) = ids.get(&(c.class, c.old_key.as_str())) {
            old_ids.push(i);
        }
        if let Some(&i) = ids.get(&(c.class, c.new_key.as_str())) {
            new_ids.push(i);
        }
    }
    for &i in &old_ids {
        if !new_ids.contains(&i) {
            needs[i].weight = 0.0;
        }
    }
    for &i in &new_ids {
        needs[i].weight += 3.0;
    }
    // In tool output, numbers, timestamps and ids are mostly log noise; paths, commands, URLs,
    // names and errors are rarer and more often what the conversation is about.
    for (&(class, _), &i) in &ids {
        if needs[i].tool_only
            && matches!(
                class,
                ItemClass::Number | ItemClass::Date | ItemClass::Identifier
            )
        {
            needs[i].weight = needs[i].weight.min(0.3);
        }
    }
    (ids, needs)
}

/// The chunks of the units (sentences, cuts of long ones, tool calls), each with the items it
/// carries, the corrected values it needs first and the section it goes in.
fn chunks_of(
    pieces: &[Piece],
    units: &[Unit],
    corrections: &[audit::Correction],
    ids: &HashMap<(ItemClass, &str), usize>,
    citing: bool,
) -> Vec<Chunk> {
    // Per correction: the old value's id, the new value's id, the correcting unit. A sentence
    // that states the old value as current is superseded; and no sentence that names an old
    // value is kept unless the summary also carries the value that replaced it.
    let pairs: Vec<(usize, Option<usize>, &audit::Correction)> = corrections
        .iter()
        .filter_map(|c| {
            let o = *ids.get(&(c.class, c.old_key.as_str()))?;
            Some((o, ids.get(&(c.class, c.new_key.as_str())).copied(), c))
        })
        .filter(|(o, n, _)| Some(*o) != *n)
        .collect();

    let mut chunks = Vec::new();
    let mut shown = std::collections::HashSet::new();
    for (ui, u) in units.iter().enumerate() {
        let unit_ids = |items: &[&audit::Item]| -> Vec<usize> {
            let mut v: Vec<usize> = items
                .iter()
                .map(|it| ids[&(it.class, it.key.as_str())])
                .collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        for (text, items, call) in cut(pieces, u, &mut shown) {
            if text.trim().is_empty() {
                // Blanked reasoning: nothing to copy.
                continue;
            }
            let ids = unit_ids(&items);
            let names_old = |&&(o, n, c): &&(usize, Option<usize>, &audit::Correction)| {
                (ids.contains(&o) || text.contains(c.old.as_str()))
                    && n.is_none_or(|n| !ids.contains(&n))
            };
            // A call that names a value the span later corrected was made with it: kept, as
            // superseded.
            let superseded = pairs
                .iter()
                .filter(names_old)
                .any(|&(_, _, c)| ui != c.unit && (call || c.stale_in(&text)));
            let mut requires: Vec<usize> = pairs
                .iter()
                .filter(names_old)
                .filter_map(|&(_, n, _)| n)
                .collect();
            requires.sort_unstable();
            requires.dedup();
            let mut text = defuse(&text);
            // Chunks share a line: end each like a sentence, so that two of them never read
            // as one ("…Sessions" + "Full Windows…" is not a name).
            if text.ends_with(char::is_alphanumeric) {
                text.push('.');
            }
            let section = if superseded {
                Section::Superseded
            } else {
                section_of(u.source, &text)
            };
            chunks.push(Chunk {
                piece: u.piece,
                line: u.piece,
                call,
                order: chunks.len(),
                source: u.source,
                chars: text.chars().count(),
                text,
                ids,
                requires,
                section,
                superseded,
            });
        }
    }

    if !citing {
        // A turn's calls on one line, under the first call's heading.
        let mut first: HashMap<u64, usize> = HashMap::new();
        for c in &mut chunks {
            if c.source == Source::ToolCall && !c.superseded {
                c.line = *first.entry(pieces[c.piece].turn).or_insert(c.piece);
            }
        }
    }
    if citing {
        // Square brackets are citations in a cited reply: copied ones become parentheses.
        for c in &mut chunks {
            if c.text.contains(['[', ']']) {
                c.text = c.text.replace('[', "(").replace(']', ")");
            }
        }
    }
    chunks
}

/// How much a user sentence says what the user wants (0: filler, not worth a line).
fn voice_score(text: &str) -> u32 {
    let lower = text.to_lowercase();
    let bare = lower.trim_matches(|c: char| !c.is_alphanumeric() && c != ' ' && c != '\'');
    if FILLER.contains(&bare) || text.split_whitespace().count() < 4 || is_filler(text) {
        return 0;
    }
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .collect();
    let mut s = 1;
    if text.ends_with('?') || REQUEST_STARTS.iter().any(|p| lower.starts_with(p)) {
        s += 2;
    }
    if words.iter().any(|w| CONSTRAINT_WORDS.contains(w)) {
        s += 2;
    }
    s
}

/// A prompt that only acknowledges or says to go on ("ok", "yes do it", "thanks, go on",
/// "Please continue where we left off."): every word of it is one of [`FILLER_WORDS`], and it
/// carries no item. It states no request, decision or constraint of its own.
pub(super) fn is_filler(text: &str) -> bool {
    let lower = text.to_lowercase();
    let mut words = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .peekable();
    words.peek().is_some()
        && words.all(|w| FILLER_WORDS.contains(&w))
        && audit::extract(text).is_empty()
}

/// The statement just before question `i` in the same user message, if there is one.
fn context_of(chunks: &[Chunk], i: usize) -> Option<usize> {
    let q = &chunks[i];
    if !q.text.ends_with('?') || i == 0 {
        return None;
    }
    let c = &chunks[i - 1];
    (c.piece == q.piece
        && c.source == Source::User
        && !c.superseded
        && c.section == q.section
        && !c.text.ends_with('?')
        && voice_score(&c.text) > 0)
        .then_some(i - 1)
}

/// A user sentence that binds the work to a time or a person: a deadline (`before 16:00 UTC`,
/// `due Friday`) or a named owner (`assign to Dana Kim`).
fn binds(text: &str) -> bool {
    let items = audit::extract(text);
    let dated = items.iter().any(|it| it.class == ItemClass::Date);
    let named = items.iter().any(|it| it.class == ItemClass::Name);
    (dated && has_marker(text, DEADLINE_WORDS)) || (named && has_marker(text, OWNER_WORDS))
}

const DEADLINE_WORDS: &[&str] = &[
    "before",
    "by",
    "until",
    "due",
    "deadline",
    "no later than",
    "at the latest",
    "after",
];
const OWNER_WORDS: &[&str] = &[
    "assign",
    "assigned",
    "assign it to",
    "owner",
    "owns",
    "owned by",
    "responsible",
];

fn has_marker(text: &str, markers: &[&str]) -> bool {
    let lower = format!(" {} ", text.to_lowercase());
    markers.iter().any(|m| {
        lower.match_indices(m).any(|(i, _)| {
            let before = lower[..i]
                .chars()
                .last()
                .is_none_or(|c| !c.is_alphanumeric());
            let after = lower[i + m.len()..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric());
            before && after
        })
    })
}

fn section_of(source: Source, text: &str) -> Section {
    match source {
        Source::ToolCall | Source::ToolResult => Section::Facts,
        Source::User => {
            if has_marker(text, USER_DECISIONS) && !text.ends_with('?') {
                Section::Decisions
            } else {
                Section::Goal
            }
        }
        Source::Assistant | Source::Other => {
            if has_marker(text, DECISIONS) {
                Section::Decisions
            } else if has_marker(text, NEXT) || text.ends_with('?') {
                Section::Next
            } else {
                Section::State
            }
        }
    }
}

#[rustfmt::skip]
const FILLER: &[&str] = &[
    "ok", "okay", "sure", "thanks", "thank you", "great", "cool", "nice", "yes", "no", "hello",
    "hi", "got it", "sounds good", "you're welcome", "no problem", "perfect", "awesome",
    "makes sense", "yes please",
];
/// The words of prompts that only acknowledge or say to go on.
#[rustfmt::skip]
const FILLER_WORDS: &[&str] = &[
    "ok", "okay", "k", "kk", "yes", "yeah", "yep", "yup", "sure", "please", "pls", "thanks",
    "thank", "thx", "ty", "you", "go", "ahead", "on", "continue", "proceed", "carry", "keep",
    "going", "do", "it", "that", "this", "now", "then", "so", "just", "and", "great", "good",
    "cool", "nice", "fine", "perfect", "awesome", "excellent", "lgtm", "sounds", "looks",
    "right", "alright", "all", "got", "makes", "sense", "agreed", "correct", "exactly", "where",
    "we", "left", "off", "with", "the", "same", "again", "next", "one", "step", "let's", "lets",
    "hi", "hello", "hey", "no", "problem", "done", "work", "working", "finish", "it's", "is",
];
#[rustfmt::skip]
const REQUEST_STARTS: &[&str] = &[
    "please", "can ", "could ", "would ", "i want", "i need", "i'd like", "help", "make ", "add ",
    "fix ", "write ", "create ", "remove ", "change ", "update ", "show ", "tell ", "find ",
    "give ", "explain ", "book ", "send ", "set ", "let's ", "don't ", "do not ", "open ",
    "check ", "schedule ",
];
const CONSTRAINT_WORDS: &[&str] = &[
    "must", "never", "always", "don't", "only", "need", "needs", "want", "deadline", "budget",
    "prefer", "before", "until", "require", "required", "without", "avoid", "limit",
];
const USER_DECISIONS: &[&str] = &[
    "decided",
    "we'll",
    "let's",
    "go with",
    "going with",
    "agreed",
    "approved",
    "approve",
    "chose",
    "settled on",
];
#[rustfmt::skip]
const DECISIONS: &[&str] = &[
    "decided", "decide", "decision", "agreed", "agree", "chose", "chosen", "approved", "let's",
    "we'll", "settled on", "opted", "going with", "go with", "confirmed", "because", "so that",
    "the plan is",
];
#[rustfmt::skip]
const NEXT: &[&str] = &[
    "next", "todo", "to do", "i'll", "i will", "we will", "going to", "plan to", "pending",
    "remaining", "follow up", "follow-up", "open question", "tomorrow", "later", "still need",
    "need to", "blocked", "waiting", "scheduled",
];

#[cfg(test)]
mod tests;
