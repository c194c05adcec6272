//! The retention audit: what a summary kept of the items a later turn is most likely to need
//! verbatim, and what it got wrong.
//!
//! From the span it extracts items by class ([`ItemClass`]: paths, commands, numbers, dates,
//! identifiers, URLs, e-mail addresses, issue numbers, error codes, quoted errors, names), notes
//! where each came from ([`Source`]), and checks which of them the summary still carries, after
//! normalising trivial formatting (thousands separators, quotes and backticks, trailing
//! punctuation, case). It also flags what a summary must not do: state items that are nowhere in
//! the span (inventions), state a value the span later corrected as if it were current
//! (superseded), repeat the instruction (echo), imitate mf's framing (forgeries), or address the
//! reader with instructions.
//!
//! Pure: no I/O, no clock, no environment. It reads only [`Piece`]s and text.

use std::collections::{HashMap, HashSet};
use std::ops::Range;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::entry::Role;
use crate::fold::frame::{defuse, instruction_ranges};
use crate::fold::prompt::Piece;

mod appendix;
mod claims;
mod corrections;
mod extract;
mod flags;
mod matching;
pub mod pattern;
mod verdict;
pub use crate::fold::fault::{Fault, Faults};

pub use appendix::{APPENDIX_HEADING, APPENDIX_SHARE, MIN_OWN_SHARE, appendix};
pub use claims::{BindingKind, Misstatement};
use corrections::*;
pub use corrections::{Correction, corrections};
use extract::*;
pub use extract::{
    CallUnit, INJECTED_TAGS, Leaf, Unit, action_of, call_leaves, extract, injected_ranges,
    parse_call, sentence_ranges, source_of, typed_ranges, units,
};
use flags::*;
use matching::*;
pub use matching::{mentions, norm_text};

/// mf's label text: what makes a line an mf summary. A summary must not carry it.
const LABEL: &str = "[summary of earlier turns";

/// The kinds of item the audit looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ItemClass {
    /// A file path: absolute (`/etc/nginx/nginx.conf`), home-relative (`~/.ssh/config`),
    /// dot-relative (`./run.sh`), relative with a slash and an extension (`src/main.rs`), or a
    /// bare file name with a well-known extension (`Cargo.toml`). A `:LINE` suffix is dropped.
    Path,
    /// A shell command: the `cmd` / `command` argument of a tool call, a `$ ` line, a line of a
    /// shell code block, or a backticked command whose first word is a known program
    /// (`` `cargo test --lib` ``).
    Command,
    /// A number that carries information: an amount (`$4,200`), a quantity with a unit
    /// (`3.5 GB`, `250ms`, `12%`, `500 rps`, `3 days`) or a bare number of two or more digits
    /// (`9090`). Single-digit counts, list numbering and turn numbers are not items.
    Number,
    /// A date or time: ISO dates and timestamps (`2026-12-01`, `2026-11-28T07:42:10Z`),
    /// `March 14`, `14 March 2026`, times with an optional zone (`14:05 UTC`, `10am`), weekday
    /// names, and bare years (`2026`).
    Date,
    /// An identifier or hash: hex of seven or more characters with a digit (`9f3c2ab`), UUIDs,
    /// ticket-style keys (`C-123`, `CR-2291`), versions (`v4.18.0`), IPv4 addresses, and code
    /// identifiers with a digit, an underscore or a camelCase hump (`p99_latency_ms`,
    /// `us-east-1`, `POOL_SIZE`, `checkoutApi`).
    Identifier,
    /// A URL with a scheme (`https://…`, `s3://…`, `postgres://…`) or starting `www.`.
    Url,
    /// An e-mail address (`dana.kim@example.com`) or an `@handle`.
    Email,
    /// An issue or pull-request number: `#123`, `PR 45`, `PR #45`, `issue 12`, `GH-12`,
    /// `owner/repo#7`. All forms of the same number match each other.
    Issue,
    /// An error code: `E0502`, `ERR_…`, errno names (`ECONNREFUSED`), exception types
    /// (`KeyError`), signals (`SIGKILL`), HTTP statuses with context (`HTTP 503`,
    /// `returned a 404`, `502 Bad Gateway`), and exit codes (`exit code 2`, `exited with 137`).
    ErrorCode,
    /// Quoted text (double quotes, single quotes or backticks, 4 to 160 characters) next to an
    /// error word (error, failed, exception, refused, …) or containing one:
    /// `"connection reset by peer"`. Not when the quote is a single item of another class.
    QuotedError,
    /// A proper name: a capitalised word that does not start a sentence (`Dana`, `Contoso`), or
    /// a run of capitalised words anywhere (`Marcus Webb`), less common capitalised words.
    Name,
}

impl ItemClass {
    pub const ALL: [ItemClass; 11] = [
        ItemClass::Path,
        ItemClass::Command,
        ItemClass::Number,
        ItemClass::Date,
        ItemClass::Identifier,
        ItemClass::Url,
        ItemClass::Email,
        ItemClass::Issue,
        ItemClass::ErrorCode,
        ItemClass::QuotedError,
        ItemClass::Name,
    ];

    /// The kebab-case name (as serialized).
    pub fn as_str(self) -> &'static str {
        match self {
            ItemClass::Path => "path",
            ItemClass::Command => "command",
            ItemClass::Number => "number",
            ItemClass::Date => "date",
            ItemClass::Identifier => "identifier",
            ItemClass::Url => "url",
            ItemClass::Email => "email",
            ItemClass::Issue => "issue",
            ItemClass::ErrorCode => "error-code",
            ItemClass::QuotedError => "quoted-error",
            ItemClass::Name => "name",
        }
    }

    /// A figure: a number, date, identifier, URL, address or issue number — what a summary
    /// must never make up (an invented one declines it whatever the threshold).
    pub fn is_figure(self) -> bool {
        matches!(
            self,
            ItemClass::Number
                | ItemClass::Date
                | ItemClass::Identifier
                | ItemClass::Url
                | ItemClass::Email
                | ItemClass::Issue
        )
    }

    /// How much a later turn tends to need this class verbatim (orders the missing list).
    fn weight(self) -> u32 {
        match self {
            ItemClass::Path | ItemClass::Command | ItemClass::ErrorCode => 3,
            ItemClass::Identifier
            | ItemClass::Issue
            | ItemClass::Url
            | ItemClass::Number
            | ItemClass::Date
            | ItemClass::Email
            | ItemClass::QuotedError => 2,
            ItemClass::Name => 1,
        }
    }
}

/// Where an item was said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// A user message.
    User,
    /// An assistant message's own text.
    Assistant,
    /// The arguments of a tool call (`[calls name(args)]` in an assistant message).
    ToolCall,
    /// A tool's result.
    ToolResult,
    /// An earlier summary or a system message.
    Other,
}

impl Source {
    fn weight(self) -> u32 {
        match self {
            Source::User => 4,
            Source::ToolCall => 3,
            Source::Assistant | Source::Other => 2,
            Source::ToolResult => 1,
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// One item found in text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub class: ItemClass,
    /// As written, less surrounding quotes, brackets and trailing punctuation.
    pub text: String,
    /// The normalised value items are matched by (`num:4200:$`, `#45`, `march 14`, …).
    pub key: String,
    /// The value without its qualifier — unit, time zone, time of day — when it has one
    /// (`3.5 GB` → `num:3.5`). An unqualified value matches a qualified one with the same base.
    pub base: Option<String>,
    /// Byte range in the text it was extracted from.
    pub at: Range<usize>,
}

impl Item {
    fn new(class: ItemClass, text: &str, key: String, at: Range<usize>) -> Item {
        Item {
            class,
            text: text.to_string(),
            key,
            base: None,
            at,
        }
    }

    fn with_base(mut self, base: Option<String>) -> Item {
        self.base = base;
        self
    }

    /// Keys under which this item can be found by another item's lookup.
    fn registered(&self) -> Vec<String> {
        let mut k = vec![self.key.clone()];
        match &self.base {
            Some(b) => k.push(b.clone()),
            None => k.push(format!("{}\u{0}bare", self.key)),
        }
        k
    }

    /// Keys to look this item up by: its own, and for a qualified value the same value written
    /// without a qualifier (`$4,200` is kept by a summary that says `4200`).
    fn lookups(&self) -> Vec<String> {
        let mut k = vec![self.key.clone()];
        if let Some(b) = &self.base {
            k.push(format!("{b}\u{0}bare"));
        }
        k
    }
}

// ---------------------------------------------------------------------------------------------
// The audit

/// What the audit counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AuditOptions {
    /// Count items found only in tool results toward retention (`--audit-tool-results`).
    pub count_tool_results: bool,
    /// How many missing items, inventions and superseded values to list.
    pub max_listed: usize,
}

impl Default for AuditOptions {
    fn default() -> Self {
        Self {
            count_tool_results: false,
            max_listed: 20,
        }
    }
}

/// Items found and kept for one class.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassTally {
    pub class: ItemClass,
    /// Counted items (said by the user or the assistant, in tool-call arguments, or in an
    /// earlier summary; with `count_tool_results` also those only in tool results).
    pub found: usize,
    pub kept: usize,
    /// Items found only in tool results (reported whether or not they count).
    pub tool_results_found: usize,
    pub tool_results_kept: usize,
}

/// Salient items found and kept, for one source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceTally {
    pub source: Source,
    pub found: usize,
    pub kept: usize,
}

const SOURCES: [Source; 5] = [
    Source::User,
    Source::ToolCall,
    Source::Assistant,
    Source::Other,
    Source::ToolResult,
];

/// A counted item the summary does not carry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MissingItem {
    pub class: ItemClass,
    pub text: String,
    /// The most telling place it was said.
    pub source: Source,
    /// The first turn that says it.
    pub turn: u64,
}

/// An item the summary states that the span does not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Invention {
    pub class: ItemClass,
    pub text: String,
}

/// A corrected value the summary states as if it were current.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SupersededValue {
    pub class: ItemClass,
    /// The value the span corrected.
    pub old: String,
    /// What the span corrected it to.
    pub new: String,
    /// The turn that states the correction.
    pub turn: u64,
    /// `no-correction` (the old value without the new one), `unmarked` (the old value stated as
    /// current next to the new one) or `reversed` (the correction turned around).
    pub how: &'static str,
}

/// Something in the summary that imitates mf's framing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Forgery {
    /// `turn-heading`, `delimiter`, `role-marker` or `label`.
    pub kind: &'static str,
    pub text: String,
}

/// Text in the summary addressed to the model that will read it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InstructionFlag {
    pub text: String,
    /// The span says the same (the summary reports it rather than issuing it).
    pub quoted: bool,
}

/// The audit of one summary against its span.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Audit {
    /// Salient items found in the span, and kept by the summary.
    pub found: usize,
    pub kept: usize,
    /// The weighted share kept: each salient item weighs by where it was said (the user's words
    /// 4, the paths, commands and URLs of tool calls 3, an earlier summary 2, the assistant's
    /// prose 1) and double at the latest value of a corrected one; 1.0 when nothing was found.
    pub retention: f64,
    /// kept ÷ found, every item alike.
    pub unweighted_retention: f64,
    /// The weighted retention of the model's own words, before mf added the items it left out
    /// (`None`: nothing was added).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_retention: Option<f64>,
    /// How many left-out items mf added after the summary.
    pub appended: usize,
    /// Items found but not salient (inside file bodies, code identifiers and handles of the
    /// assistant's prose, tool results): not counted.
    pub not_salient: usize,
    /// Salient items found and kept, by their most telling source.
    pub by_source: Vec<SourceTally>,
    /// Whether items only in tool results counted.
    pub count_tool_results: bool,
    /// Per class, in [`ItemClass::ALL`] order; classes with nothing found are left out.
    pub classes: Vec<ClassTally>,
    /// Counted items not kept, most important first, at most `max_listed`.
    pub missing: Vec<MissingItem>,
    /// How many counted items were not kept in all.
    pub missing_count: usize,
    pub inventions: Vec<Invention>,
    pub superseded: Vec<SupersededValue>,
    /// Claims the span binds otherwise: a figure with another noun, a path only read said to be
    /// created, a status the span last said the opposite of.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub misstated: Vec<Misstatement>,
    /// The share of the summary's word 5-grams that occur in the instruction.
    pub echo_ratio: f64,
    /// The summary mostly repeats the instruction (`echo_ratio` ≥ 0.5).
    pub echo: bool,
    pub forgeries: Vec<Forgery>,
    pub instructions: Vec<InstructionFlag>,
}

struct Found {
    item: Item,
    sources: u8,
    turn: u64,
    mentions: usize,
    order: usize,
    /// The unit that says it from its most telling source (for the appendix's line).
    unit: usize,
    /// The strongest action of the tool calls that name it (`wrote`, `edited`, `ran`, `read`,
    /// `searched`; `None`: no call, or another tool).
    action: Option<&'static str>,
}

impl Found {
    fn tool_only(&self) -> bool {
        self.sources == Source::ToolResult.bit()
    }

    fn best_source(&self) -> Source {
        [
            Source::User,
            Source::ToolCall,
            Source::Assistant,
            Source::Other,
            Source::ToolResult,
        ]
        .into_iter()
        .find(|s| self.sources & s.bit() != 0)
        .unwrap_or(Source::Other)
    }

    fn importance(&self) -> u32 {
        self.best_source().weight() + self.item.class.weight() + (self.mentions.min(4) as u32 - 1)
    }

    /// How much a later turn needs this item verbatim, or `None` when it is not salient: the
    /// user's words weigh most, then the targets of the agent's actions (the paths and commands
    /// of its tool calls); the assistant's prose counts for its paths, commands, URLs, figures,
    /// dates, issue numbers, error codes and non-code identifiers (not the code identifiers,
    /// handles or capitalised words of its prose); tool results count only with
    /// `count_tool_results`. The last state of a corrected value weighs double.
    fn salience(&self, opts: &AuditOptions, latest: bool) -> Option<u32> {
        let class = self.item.class;
        let prose_class = || match class {
            ItemClass::Name => false,
            ItemClass::Email => self.item.text.contains('.') && !self.item.text.starts_with('@'),
            ItemClass::Identifier => !is_code_identifier(&self.item.text),
            _ => true,
        };
        let target = matches!(class, ItemClass::Path | ItemClass::Command | ItemClass::Url);
        let base = if self.sources & Source::User.bit() != 0 {
            4
        } else if self.sources & Source::ToolCall.bit() != 0 && target {
            // What the agent changed weighs most, then what it ran, then what it looked at.
            match (self.action, class) {
                (Some("wrote" | "edited"), ItemClass::Path) => 3,
                (Some("ran"), ItemClass::Command) => 2,
                _ => 1,
            }
        } else if self.sources & Source::Other.bit() != 0 && prose_class() {
            2
        } else if (self.sources & (Source::Assistant.bit() | Source::ToolCall.bit()) != 0
            && prose_class())
            || (self.tool_only() && opts.count_tool_results)
        {
            1
        } else {
            return None;
        };
        Some(if latest { base * 2 } else { base })
    }
}

/// The parts of a hyphenated compound, each as normalised tokens (`WP14-WP20` → `wp14`,
/// `wp20`; `spotter-dov.4` → `spotter`, `dov . 4`); none for a word without a hyphen.
fn compound_parts(text: &str) -> Vec<Vec<String>> {
    if !text.contains(['-', '–']) {
        return Vec::new();
    }
    text.split(['-', '–'])
        .map(norm_tokens)
        .filter(|p| !p.is_empty())
        .collect()
}

/// A compound whose every part the span says on its own (a range `WP14-WP20`, a modifier
/// `10-scenario`) is a way of writing what the span says, not an invention.
fn compound_of_known(text: &str, known: &HashSet<Vec<String>>) -> bool {
    let parts = compound_parts(text);
    parts.len() >= 2 && parts.iter().all(|p| known.contains(p))
}

fn action_rank(a: Option<&str>) -> u8 {
    match a {
        Some("wrote" | "edited") => 4,
        Some("ran") => 3,
        Some("read") => 2,
        Some(_) => 1,
        None => 0,
    }
}

/// The span's items, one entry per (class, key), in order of first mention.
fn inventory(pieces: &[Piece], units: &[Unit]) -> Vec<Found> {
    let mut at: HashMap<(ItemClass, String), usize> = HashMap::new();
    let mut out: Vec<Found> = Vec::new();
    for (ui, u) in units.iter().enumerate() {
        for it in &u.items {
            let k = (it.class, it.key.clone());
            match at.get(&k) {
                Some(&i) => {
                    let better = u.source.weight() > out[i].best_source().weight();
                    out[i].sources |= u.source.bit();
                    out[i].mentions += 1;
                    if better {
                        out[i].unit = ui;
                    }
                    let act = u.call.as_ref().and_then(|c| action_of(&c.name));
                    if action_rank(act) > action_rank(out[i].action) {
                        out[i].action = act;
                        if u.source == out[i].best_source() {
                            out[i].unit = ui;
                        }
                    }
                }
                None => {
                    at.insert(k, out.len());
                    out.push(Found {
                        item: it.clone(),
                        sources: u.source.bit(),
                        turn: pieces[u.piece].turn,
                        mentions: 1,
                        order: out.len(),
                        unit: ui,
                        action: u.call.as_ref().and_then(|c| action_of(&c.name)),
                    });
                }
            }
        }
    }
    out
}

fn contains_seq(hay: &[String], needle: &[String]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// The summary's sentences, each with the heading of its line (`- T3 user (superseded):`).
fn summary_sentences(summary: &str) -> Vec<(String, &str)> {
    let mut out = Vec::new();
    for line in summary.lines() {
        let head = match line.find(": ") {
            Some(p) if p <= 80 => &line[..p],
            _ => "",
        };
        for r in sentence_ranges(line) {
            out.push((head.to_string(), &line[r]));
        }
    }
    out
}

/// A span's items as the audit counts them: its units, its corrections and what it says, with
/// the corrected values apart. What the audit and the appendix both start from.
struct Counted {
    units: Vec<Unit>,
    corrections: Vec<Correction>,
    found: Vec<Found>,
    old_values: HashSet<(ItemClass, String)>,
    new_values: HashSet<(ItemClass, String)>,
}

impl Counted {
    fn new(pieces: &[Piece]) -> Self {
        let units = units(pieces);
        let corrections = corrections(pieces, &units);
        let found = inventory(pieces, &units);
        let old_values = corrections
            .iter()
            .map(|c| (c.class, c.old_key.clone()))
            .collect();
        let new_values = corrections
            .iter()
            .map(|c| (c.class, c.new_key.clone()))
            .collect();
        Self {
            units,
            corrections,
            found,
            old_values,
            new_values,
        }
    }

    /// A value the span later corrected (and never restated): keeping it is not required.
    fn superseded(&self, f: &Found) -> bool {
        let k = (f.item.class, f.item.key.clone());
        self.old_values.contains(&k) && !self.new_values.contains(&k)
    }

    /// How much keeping `f` weighs, or `None` when it is not salient.
    fn weight(&self, f: &Found, opts: &AuditOptions) -> Option<u32> {
        let k = (f.item.class, f.item.key.clone());
        f.salience(opts, self.new_values.contains(&k))
    }
}

/// Audit `summary` against the span it stands for.
///
/// `instruction` is what the summarizer was told (mf's framing and the instruction, e.g.
/// `SummaryRequest::system`): the summary's echo of it is measured, and words it contains are
/// not inventions.
pub fn audit(pieces: &[Piece], summary: &str, instruction: &str, opts: &AuditOptions) -> Audit {
    audit_with(pieces, &[], summary, instruction, opts)
}

/// [`audit`], where `context` is the rest of what the summarizer could have read besides the
/// span (the preamble, the verbatim tail): an item found there is no invention.
pub fn audit_with(
    pieces: &[Piece],
    context: &[&str],
    summary: &str,
    instruction: &str,
    opts: &AuditOptions,
) -> Audit {
    // What the model thought is not what it said: reasoning is neither counted, nor a
    // correction, nor a claim's evidence (it is still read, so a summary's word from it is no
    // invention).
    let spoken = crate::fold::prompt::without_reasoning(pieces);
    let span = Counted::new(&spoken);
    let (corrections, found_items) = (&span.corrections, &span.found);
    let said = Said::new(summary);

    let mut tallies: Vec<ClassTally> = ItemClass::ALL
        .iter()
        .map(|&class| ClassTally {
            class,
            found: 0,
            kept: 0,
            tool_results_found: 0,
            tool_results_kept: 0,
        })
        .collect();
    let mut by_source: Vec<SourceTally> = SOURCES
        .iter()
        .map(|&source| SourceTally {
            source,
            found: 0,
            kept: 0,
        })
        .collect();
    let mut missing: Vec<&Found> = Vec::new();
    let (mut found, mut kept) = (0, 0);
    let (mut weight_found, mut weight_kept) = (0u64, 0u64);
    let mut not_salient = 0;
    for f in found_items {
        if span.superseded(f) {
            // A corrected value: keeping it is not required (stating it as current is flagged).
            continue;
        }
        let has = said.has(&f.item);
        let tally = &mut tallies[ItemClass::ALL
            .iter()
            .position(|c| *c == f.item.class)
            .expect("every class is listed")];
        if f.tool_only() {
            tally.tool_results_found += 1;
            tally.tool_results_kept += usize::from(has);
        }
        let Some(weight) = span.weight(f, opts) else {
            not_salient += 1;
            continue;
        };
        tally.found += 1;
        found += 1;
        weight_found += u64::from(weight);
        let src = &mut by_source[SOURCES
            .iter()
            .position(|s| *s == f.best_source())
            .expect("every source is listed")];
        src.found += 1;
        if has {
            tally.kept += 1;
            kept += 1;
            src.kept += 1;
            weight_kept += u64::from(weight);
        } else {
            missing.push(f);
        }
    }
    tallies.retain(|t| t.found > 0 || t.tool_results_found > 0);
    by_source.retain(|t| t.found > 0);
    let missing_count = missing.len();
    let missing = listed(missing, opts.max_listed);

    let inventions = inventions(pieces, context, found_items, summary, instruction, opts);

    let superseded = superseded_in(summary, corrections, opts.max_listed);
    let misstated = claims::misstated(&spoken, &span.units, context, summary, opts.max_listed);
    let (echo_ratio, grams) = echo_ratio(summary, instruction);
    let echo = grams >= 3 && echo_ratio >= 0.5;

    let forgeries = forgeries_unquoted(pieces, summary);
    let instructions = instruction_flags(pieces, summary);

    Audit {
        found,
        kept,
        retention: if weight_found == 0 {
            1.0
        } else {
            weight_kept as f64 / weight_found as f64
        },
        unweighted_retention: if found == 0 {
            1.0
        } else {
            kept as f64 / found as f64
        },
        model_retention: None,
        appended: 0,
        not_salient,
        by_source,
        count_tool_results: opts.count_tool_results,
        classes: tallies,
        missing,
        missing_count,
        inventions,
        superseded,
        misstated,
        echo_ratio,
        echo,
        forgeries,
        instructions,
    }
}

impl Audit {
    /// Fill in the transcript line of each misstated claim's source: `lines[k]` is the line of
    /// the span's piece `k`.
    pub fn cite_lines(&mut self, lines: &[u64]) {
        for m in &mut self.misstated {
            m.line = lines.get(m.piece).copied();
        }
    }
}

/// The missing items to list: most important first, at most `max`.
fn listed(mut missing: Vec<&Found>, max: usize) -> Vec<MissingItem> {
    missing.sort_by(|a, b| {
        b.importance()
            .cmp(&a.importance())
            .then(a.order.cmp(&b.order))
    });
    missing
        .into_iter()
        .take(max)
        .map(|f| MissingItem {
            class: f.item.class,
            text: capped(&f.item.text, 160),
            source: f.best_source(),
            turn: f.turn,
        })
        .collect()
}

/// Inventions: the summary's items that neither the span, the instruction nor anything else the
/// summarizer could read (`context`) says.
fn inventions(
    pieces: &[Piece],
    context: &[&str],
    found_items: &[Found],
    summary: &str,
    instruction: &str,
    opts: &AuditOptions,
) -> Vec<Invention> {
    let span_keys: HashSet<String> = found_items
        .iter()
        .flat_map(|f| f.item.registered())
        .collect();
    let instruction_said = Said::new(instruction);
    let mut candidates: Vec<Item> = Vec::new();
    let mut seen = HashSet::new();
    // A pattern line claims each of its instances.
    for it in extract(&pattern::expand(summary)) {
        // Claims of fact only: a command or a quoted error is not a claim of its own, and a
        // capitalised word (a section heading, a sentence's subject) is ordinary language.
        if matches!(
            it.class,
            ItemClass::Command | ItemClass::QuotedError | ItemClass::Name
        ) {
            continue;
        }
        if it.lookups().iter().any(|k| span_keys.contains(k)) || instruction_said.has(&it) {
            continue;
        }
        if seen.insert((it.class, it.key.clone())) {
            candidates.push(it);
        }
    }
    if candidates.is_empty() {
        Vec::new()
    } else {
        let needles: Vec<Vec<String>> = candidates.iter().map(|c| norm_tokens(&c.text)).collect();
        let present = occur_in(
            &mut pieces
                .iter()
                .map(|p| p.text.as_str())
                .chain(context.iter().copied()),
            &needles,
        );
        // The parts of hyphenated compounds (`WP14-WP20`, `10-scenario`), to see whether each
        // occurs on its own.
        let parts: Vec<Vec<String>> = candidates
            .iter()
            .zip(&present)
            .filter(|(_, p)| !**p)
            .flat_map(|(c, _)| compound_parts(&c.text))
            .collect();
        let parts_found = occur_in(
            &mut pieces
                .iter()
                .map(|p| p.text.as_str())
                .chain(context.iter().copied()),
            &parts,
        );
        let known_parts: HashSet<Vec<String>> = parts
            .into_iter()
            .zip(parts_found)
            .filter(|(_, f)| *f)
            .map(|(p, _)| p)
            .collect();
        let lower_span: Vec<String> = if present.iter().all(|p| *p) {
            Vec::new()
        } else {
            pieces
                .iter()
                .map(|p| p.text.as_str())
                .chain(context.iter().copied())
                .map(str::to_lowercase)
                .collect()
        };
        candidates
            .into_iter()
            .zip(present)
            .filter(|(it, p)| {
                // Written the same way anywhere the summarizer could read, even inside a longer
                // token (`charge.rs` of `src/billing/charge.rs`), it has a source.
                !p && !compound_of_known(&it.text, &known_parts) && {
                    let t = it.text.to_lowercase();
                    let wordlike = !matches!(it.class, ItemClass::Number | ItemClass::Date);
                    !(wordlike && t.len() >= 6 && lower_span.iter().any(|s| s.contains(&t)))
                }
            })
            .map(|(it, _)| Invention {
                class: it.class,
                text: capped(&it.text, 160),
            })
            .take(opts.max_listed)
            .collect()
    }
}

#[cfg(test)]
mod tests;
