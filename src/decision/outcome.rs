//! Typed outcomes of a compaction: what became of each summary (`SummaryOutcome`), why a span
//! was declined (`Decline`), why the file came to what it did (`Reason`), and the record's
//! remarks (`Note`). Commands build these values; the words (and the flags they name) are
//! written only here, when a record is serialized or printed.

use std::fmt::{self, Display, Formatter};

use serde::{Serialize, Serializer};

use crate::entry::{DeclineReason, estimate_tokens};
use crate::fold::audit::{Fault, Faults};
use crate::fold::cite::{self, Rejection};
use crate::fold::plan::{KeptFor, MIN_CHUNK_CHARS, PlanNote, REQUEST_OVERHEAD_CHARS};
use crate::fold::{PolicyError, SkipReason};

/// Serialize a value as its words (the JSON keeps the strings the README documents).
macro_rules! serialize_as_words {
    ($($t:ty),*) => {$(
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
    )*};
}
serialize_as_words!(
    SummaryOutcome,
    Reason,
    Note,
    super::ChunkOutcome,
    super::SummarizeReason
);

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

/// The first `max` of `items` as `f` tells them, and how many more there are.
fn listed<T>(items: &[T], f: impl Fn(&T) -> String, max: usize) -> String {
    let mut s: Vec<String> = items.iter().take(max).map(f).collect();
    if items.len() > max {
        s.push(format!("and {} more", items.len() - max));
    }
    s.join(", ")
}

impl Display for Fault {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Fault::Forged(v) => write!(
                f,
                "it imitates mf's framing ({})",
                listed(v, |(kind, text)| format!("{kind} `{text}`"), 3)
            ),
            Fault::Echo(ratio) => write!(
                f,
                "it repeats the instruction ({:.0}% of its 5-word phrases)",
                ratio * 100.0
            ),
            Fault::Generic { own, floor } => write!(
                f,
                "the model's own words keep {:.0}% of the salient items, under {:.0}% (a generic text)",
                own * 100.0,
                floor * 100.0
            ),
            Fault::Lossy {
                kept,
                found,
                retention,
                min,
                missing,
            } => {
                write!(
                    f,
                    "it keeps {kept} of {found} items ({:.0}%), under the minimum of {:.0}%",
                    retention * 100.0,
                    min * 100.0
                )?;
                if !missing.is_empty() {
                    write!(f, "; missing: {}", listed(missing, String::clone, 5))?;
                }
                Ok(())
            }
            Fault::Invented(v) => write!(
                f,
                "it states what nothing it read says ({})",
                listed(v, String::clone, 5)
            ),
            Fault::Superseded(v) => write!(
                f,
                "it states corrected values as current ({})",
                listed(v, |(old, new)| format!("{old} (corrected to {new})"), 5)
            ),
            Fault::Misstated(v) => write!(
                f,
                "it misstates what the span says ({})",
                listed(
                    v,
                    |m| {
                        let at = match m.line {
                            Some(l) => format!("line {l}"),
                            None => format!("turn {}", m.turn),
                        };
                        format!("`{}`: the span says `{}`, {at}", m.claim, m.span_says)
                    },
                    5
                )
            ),
        }
    }
}

impl Display for Faults {
    /// Every fault, in order, `; `-separated: the audit's reason for a decline.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        for (k, fault) in self.0.iter().enumerate() {
            if k > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{fault}")?;
        }
        Ok(())
    }
}

impl Display for PlanNote {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            PlanNote::Squeezed {
                target,
                held_to,
                goal,
            } => write!(
                f,
                "to meet the target of {target} tokens, everything before the verbatim tail folds and its summary is held to ~{held_to} tokens (a fifth of it would be ~{goal})"
            ),
            PlanNote::TargetUnmet { target, fixed } => write!(
                f,
                "the target of {target} tokens cannot be met: the preamble and verbatim tail alone are ~{fixed} tokens; folding everything before them"
            ),
            PlanNote::NothingNew(n) => write!(
                f,
                "{n} item{} with nothing new (summaries, stubs, entries declined before) stay as they are",
                plural(*n, "", "s")
            ),
            PlanNote::SmallChunks(n) => write!(
                f,
                "{n} chunk{} under {MIN_CHUNK_CHARS} characters between units too large to fold stay verbatim (a summary would not be shorter)",
                plural(*n, "", "s")
            ),
            PlanNote::OneRun {
                turn,
                why,
                chunks,
                from_turn,
            } => write!(
                f,
                "{ONE_RUN}: at turn {turn} {why}, so the fold stops there and the {chunks} chunk{} planned from turn {from_turn} on stay{} verbatim",
                plural(*chunks, "", "s"),
                plural(*chunks, "s", ""),
            ),
            PlanNote::NotHonoured {
                why,
                chunks,
                from_turn,
            } => write!(
                f,
                "the chunk from turn {from_turn} would not stand on read ({why}), so the {chunks} chunk{} planned from there stay{} verbatim",
                plural(*chunks, "", "s"),
                plural(*chunks, "s", ""),
            ),
        }
    }
}

/// "turn N" or "turns A–B".
fn turns(from: u64, to: u64) -> String {
    crate::text::turn_span(from, to)
}

/// What an agent that shows one unbroken run after its summaries (pi) allows.
const ONE_RUN: &str = "this agent shows its summaries, then one unbroken run of entries to the end";

impl Display for KeptFor {
    /// What keeps an entry verbatim, as "where …" goes on.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KeptFor::Protected => "a user message stays verbatim (--protect user)",
            KeptFor::Window => "entries older than the window stay verbatim (--size)",
            KeptFor::Fixed => "an entry the format pins stays verbatim",
            KeptFor::TooLarge => {
                "a tool unit too large for one call stays verbatim (raise --max-span-tokens)"
            }
            KeptFor::Declined => "a chunk declined before stays verbatim",
            KeptFor::NotAsked => {
                "a chunk with nothing new, or too small to come back shorter, stays verbatim"
            }
            KeptFor::Prompt => {
                "the prompt of a turn folded in parts stays verbatim (raise --max-span-tokens)"
            }
            KeptFor::Summary => "an earlier summary stands after entries kept verbatim",
        })
    }
}

/// Why a span was declined: the detail its decline record carries, and its stable reason.
#[derive(Debug, Clone, PartialEq)]
pub enum Decline {
    /// The retention audit declined the summary: its faults.
    Lossy(Faults),
    /// Label and summary would not be shorter than what they replace.
    NotSmaller {
        span_chars: usize,
        summary_chars: usize,
    },
    /// The fold as a whole would save under `min_pct` percent of the view.
    UnderSaving {
        saved: usize,
        view_chars: usize,
        min_pct: usize,
    },
    /// The summarizer failed on the span (its message).
    SummarizerFailed(String),
    /// `--strategy cited`: the summarizer cited nothing at all.
    NothingCited,
    /// `--strategy cited`: every candidate was rejected (the review's tally of why).
    Rejected(String),
    /// The summary would not stand on read (the re-vet's words): mf never writes a summary it
    /// would not honour. Not binding, and no record: the span is planned again next run.
    NotHonoured(String),
}

impl Decline {
    /// The stable reason a decline record is keyed by.
    pub fn reason(&self) -> DeclineReason {
        match self {
            Decline::Lossy(_) => DeclineReason::Lossy,
            Decline::NotSmaller { .. } | Decline::UnderSaving { .. } => DeclineReason::NotSmaller,
            Decline::SummarizerFailed(_) | Decline::NotHonoured(_) => {
                DeclineReason::SummarizerFailed
            }
            Decline::NothingCited | Decline::Rejected(_) => DeclineReason::Rejected,
        }
    }
}

impl Display for Decline {
    /// The detail, as the decline record and the reason carry it.
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Decline::Lossy(why) => write!(f, "{why}"),
            Decline::NotSmaller {
                span_chars,
                summary_chars,
            } => write!(
                f,
                "label and summary would be {summary_chars} chars, not shorter than the {span_chars} chars they replace"
            ),
            Decline::UnderSaving {
                saved,
                view_chars,
                min_pct,
            } => write!(
                f,
                "the fold would save {saved} of the view's {view_chars} chars, under {min_pct}%"
            ),
            Decline::SummarizerFailed(message) => f.write_str(message),
            Decline::NothingCited => write!(
                f,
                "the summarizer cited nothing (it replied {})",
                cite::NONE_REPLY
            ),
            Decline::Rejected(tally) => f.write_str(tally),
            Decline::NotHonoured(why) => write!(
                f,
                "mf would not honour it on read ({why}); not written, the span stays verbatim"
            ),
        }
    }
}

/// What became of one summary or stub (`summaries[].outcome`).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum SummaryOutcome {
    /// `written`
    #[default]
    Written,
    /// `written (rollup)`: a rollup of the chunk summaries just written.
    WrittenRollup,
    /// `written (nested in a later summary of this fold)` (`--strategy cited`).
    WrittenNested,
    /// `planned`: a stub a dry run would write.
    Planned,
    /// `declined as lossy: …` or `declined: …`.
    Declined(Decline),
    /// `rejected (code): …` (`--strategy cited`).
    Rejected(Rejection),
    /// `not written: …` / `not asked: …`: a chunk after the one of turns `from_turn`–`to_turn`,
    /// which was declined, on an agent that shows one unbroken run after its summaries.
    AfterDeclined {
        from_turn: u64,
        to_turn: u64,
        asked: bool,
    },
}

impl Display for SummaryOutcome {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            SummaryOutcome::Written => f.write_str("written"),
            SummaryOutcome::WrittenRollup => f.write_str("written (rollup)"),
            SummaryOutcome::WrittenNested => {
                f.write_str("written (nested in a later summary of this fold)")
            }
            SummaryOutcome::Planned => f.write_str("planned"),
            SummaryOutcome::Declined(d @ Decline::Lossy(_)) => write!(f, "declined as lossy: {d}"),
            SummaryOutcome::Declined(d) => write!(f, "declined: {d}"),
            SummaryOutcome::Rejected(rej) => write!(f, "rejected ({}): {rej}", rej.code()),
            SummaryOutcome::AfterDeclined {
                from_turn,
                to_turn,
                asked,
            } => write!(
                f,
                "{}: the chunk of {} before it was declined, and {ONE_RUN}",
                if *asked { "not written" } else { "not asked" },
                turns(*from_turn, *to_turn)
            ),
        }
    }
}

impl SummaryOutcome {
    /// A summary the run wrote (or, for a stub, would write).
    pub fn is_written(&self) -> bool {
        matches!(
            self,
            SummaryOutcome::Written | SummaryOutcome::WrittenRollup | SummaryOutcome::WrittenNested
        )
    }
}

/// How many chunks were declined, by why (in a fold that wrote others).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeclineCounts {
    pub lossy: usize,
    pub not_smaller: usize,
    pub failed: usize,
}

impl DeclineCounts {
    pub fn total(&self) -> usize {
        self.lossy + self.not_smaller + self.failed
    }
}

/// Why the file came to what it did (the record's `reason`).
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Reason {
    /// Nothing said (a record not yet judged).
    #[default]
    Unsaid,
    /// The planner (or the mask) found nothing worth a call.
    Skip(SkipReason),
    /// What a plan would fold, before any call.
    Planned {
        entries: usize,
        from_turn: u64,
        to_turn: u64,
        calls: usize,
        verbatim: usize,
    },
    /// `--dry-run`: the plan (or the mask) and what its requests would be and cost.
    DryRun {
        plan: Box<Reason>,
        requests: usize,
        model: String,
        tokens_in: u64,
        tokens_out: u64,
        /// Every request was counted by the provider (`--count-tokens`).
        counted: bool,
        /// US dollars, when a price is known.
        cost_usd: Option<f64>,
    },
    /// `--strategy mask`: stubs in place of old tool results.
    Masked {
        dry_run: bool,
        stubs: usize,
        keep: usize,
    },
    /// Summaries written (and chunks declined beside them).
    Folded {
        entries: u64,
        from_turn: u64,
        to_turn: u64,
        summaries: usize,
        declined: DeclineCounts,
        verbatim: usize,
    },
    /// `--strategy cited`: cited summaries written.
    FoldedCited {
        consumed: usize,
        from_turn: u64,
        to_turn: u64,
        summaries: usize,
        calls: usize,
        rejected: usize,
        uncited: usize,
        verbatim: usize,
    },
    /// Nothing written: the first span's decline (`--strategy summary`).
    Declined(Decline),
    /// Nothing written: the first span's decline (`--strategy cited`).
    DeclinedCited(Decline),
    /// Nothing written, and nothing declined.
    NothingWritten,
    /// The file ended in an error (its message).
    Error(String),
}

impl Display for Reason {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Reason::Unsaid => Ok(()),
            Reason::Skip(skip) => f.write_str(&skip.describe()),
            Reason::Planned {
                entries,
                from_turn,
                to_turn,
                calls,
                verbatim,
            } => {
                write!(
                    f,
                    "would fold {entries} entries ({}) in ",
                    turns(*from_turn, *to_turn)
                )?;
                if *calls == 1 {
                    f.write_str("one call")?;
                } else {
                    write!(
                        f,
                        "{calls} calls (the span is over the model's budget for one call)"
                    )?;
                }
                write!(f, "; {verbatim} entries stay verbatim")
            }
            Reason::DryRun {
                plan,
                requests,
                model,
                tokens_in,
                tokens_out,
                counted,
                cost_usd,
            } => {
                let cost = match cost_usd {
                    Some(usd) => format!("estimated cost ${}", super::usd(*usd)),
                    None => "cost unknown (no price for this model; see --price-in/--price-out)"
                        .to_string(),
                };
                write!(
                    f,
                    "dry run: {plan}; the request{} to {model} would be ~{tokens_in} tokens in{}, ~{tokens_out} out; {cost}; nothing called or written",
                    plural(*requests, "", "s"),
                    if *counted {
                        " (counted by the provider)"
                    } else {
                        ""
                    },
                )
            }
            Reason::Masked {
                dry_run,
                stubs,
                keep,
            } => write!(
                f,
                "{} {stubs} old tool result{} with stubs (no model call); those in the verbatim tail and the {keep} most recent stay verbatim",
                if *dry_run {
                    "would replace"
                } else {
                    "replaced"
                },
                plural(*stubs, "", "s"),
            ),
            Reason::Folded {
                entries,
                from_turn,
                to_turn,
                summaries,
                declined,
                verbatim,
            } => {
                write!(
                    f,
                    "folded {entries} entries ({}) into ",
                    turns(*from_turn, *to_turn)
                )?;
                if *summaries == 1 {
                    f.write_str("one summary")?;
                } else {
                    write!(f, "{summaries} summaries")?;
                }
                let n = declined.total();
                if n > 0 {
                    let kinds: Vec<String> = [
                        (declined.lossy, "lossy"),
                        (declined.not_smaller, "not smaller"),
                        (declined.failed, "summarizer failed"),
                    ]
                    .into_iter()
                    .filter(|(k, _)| *k > 0)
                    .map(|(k, name)| format!("{k} {name}"))
                    .collect();
                    write!(
                        f,
                        "; {n} other chunk{} declined ({}), {} turns stay verbatim",
                        plural(n, "", "s"),
                        kinds.join(", "),
                        plural(n, "its", "their"),
                    )?;
                }
                write!(f, "; {verbatim} entries stay verbatim")
            }
            Reason::FoldedCited {
                consumed,
                from_turn,
                to_turn,
                summaries,
                calls,
                rejected,
                uncited,
                verbatim,
            } => {
                write!(
                    f,
                    "folded {consumed} entries ({}) into {summaries} cited summar{} in {calls} call{}",
                    turns(*from_turn, *to_turn),
                    plural(*summaries, "y", "ies"),
                    plural(*calls, "", "s"),
                )?;
                if *rejected > 0 {
                    write!(
                        f,
                        " ({rejected} candidate{} rejected)",
                        plural(*rejected, "", "s")
                    )?;
                }
                write!(
                    f,
                    "; {uncited} entr{} of the span no summary cited stay verbatim, {verbatim} entries stay verbatim in all",
                    plural(*uncited, "y", "ies"),
                )
            }
            Reason::Declined(d) => match d.reason() {
                DeclineReason::SummarizerFailed => write!(f, "summarizer failed: {d}"),
                DeclineReason::NotSmaller => write!(
                    f,
                    "replacement not smaller: {d}; verdict remembered for this exact span"
                ),
                DeclineReason::Lossy => write!(
                    f,
                    "summary declined as lossy: {d}; verdict remembered for this span, model, instruction, strategy and threshold (--retry asks again)"
                ),
                _ => write!(
                    f,
                    "every candidate summary was rejected: {d}; verdict remembered for this span, model, instruction, strategy and threshold (--retry asks again)"
                ),
            },
            Reason::DeclinedCited(d) => match d.reason() {
                DeclineReason::SummarizerFailed => write!(f, "summarizer failed: {d}"),
                _ => write!(
                    f,
                    "every candidate summary was rejected: {d}; verdict remembered for this span and model"
                ),
            },
            Reason::NothingWritten => f.write_str("nothing was written"),
            Reason::Error(message) => f.write_str(message),
        }
    }
}

/// A remark in the record (`notes[]`).
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// A turn larger than the verbatim tail holds is folded inside.
    SplitTurn(u64),
    /// A turn larger than one call's budget is folded at tool-unit boundaries.
    InTurn,
    /// Tool units too large for one call, left verbatim (how many).
    Oversized(usize),
    /// The planner's remarks (a target that cannot be met, …).
    Plan(Vec<PlanNote>),
    /// A remark of the summarizer about its reply to a span.
    Reply {
        from_turn: u64,
        to_turn: u64,
        note: String,
    },
    /// `--dry-run --strategy cited`: what the estimate covers.
    CitedDryRun,
    /// `--count-tokens` with the built-in summarizer.
    CountedBuiltin { model: String },
    /// `--count-tokens`: the provider's count failed for one call.
    CountFailed { call: usize, message: String },
    /// A planned request is over the model's context.
    OverContext {
        tokens: u64,
        from_turn: u64,
        to_turn: u64,
        model: String,
        context: u64,
    },
    /// `--dry-run`: one call's tokens (and, with a price, its band and cost).
    CallEstimate {
        call: usize,
        from_turn: u64,
        to_turn: u64,
        tokens_in: u64,
        tokens_out: u64,
        counted: bool,
        /// The price band (the model table's words), over the cheaper band, and the cost.
        price: Option<(String, bool, f64)>,
    },
    /// A line an earlier run began and did not finish was closed.
    ClosedTornLine,
    /// Another writer wrote at the same instant.
    Interleaved,
    /// `--rollup`: the summaries do not fit one request (how many).
    RollupTooLarge(usize),
    /// `--rollup`: the rollup call failed (its message).
    RollupFailed(String),
    /// `--batch --rollup`: the chunk summaries are written; their rollup is in a batch still
    /// working (what to do).
    RollupWaiting(String),
    /// `--rollup`: the rollup was declined as lossy (why).
    RollupLossy(Faults),
    /// `--rollup`: the rollup was not shorter.
    RollupNotShorter,
    /// `--rollup`: a rollup would not stand on read (the re-vet's words); not asked about.
    RollupNotHonoured(String),
    /// On an agent that shows one unbroken run after its summaries: the chunk of turns
    /// `from_turn`–`to_turn` was declined, so the `chunks` after it stay verbatim (`unasked` of
    /// them were never asked about).
    AfterDeclined {
        from_turn: u64,
        to_turn: u64,
        chunks: usize,
        unasked: usize,
    },
    /// `explain` without `--model`: the span it would fold was declined by `model` (as lossy,
    /// or uncitable), which binds that model only.
    DeclinedByModel {
        from_turn: u64,
        to_turn: u64,
        model: String,
        line: u32,
        reason: DeclineReason,
    },
    /// `--strategy mask` on a pi session: pi shows the stubs through `context_edit` entries,
    /// which a pi before 1.6 does not read.
    StubsByContextEdit,
    /// `--strategy cited`: a correction call failed after some summaries were accepted.
    CorrectionFailed {
        from_turn: u64,
        to_turn: u64,
        message: String,
    },
}

impl Display for Note {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Note::SplitTurn(turn) => write!(
                f,
                "turn {turn} is larger than the verbatim tail holds (--recent-tokens): it is folded inside, and its prompt and newest tool units stay verbatim"
            ),
            Note::InTurn => f.write_str(
                "a turn larger than one call's budget is folded inside the turn, at tool-unit boundaries",
            ),
            Note::Oversized(n) => write!(
                f,
                "{n} tool unit{} too large for one call stay{} verbatim",
                plural(*n, "", "s"),
                plural(*n, "s", ""),
            ),
            Note::Plan(notes) => {
                for (k, n) in notes.iter().enumerate() {
                    if k > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{n}")?;
                }
                Ok(())
            }
            Note::Reply {
                from_turn,
                to_turn,
                note,
            } => write!(f, "{}: {note}", turns(*from_turn, *to_turn)),
            Note::CitedDryRun => write!(
                f,
                "--strategy cited: the span is offered; only what the summaries cite folds, and rejected summaries are sent back for correction (at most {} calls per fold; the estimate is for the first)",
                cite::MAX_CALLS
            ),
            Note::CountedBuiltin { model } => write!(
                f,
                "--count-tokens: {model} is built in; its count is mf's estimate"
            ),
            Note::CountFailed { call, message } => write!(
                f,
                "call {call}: count_tokens failed, the estimate stands: {message}"
            ),
            Note::OverContext {
                tokens,
                from_turn,
                to_turn,
                model,
                context,
            } => write!(
                f,
                "a planned request of ~{tokens} tokens ({}) is over {model}'s context of {context} tokens; lower --max-span-tokens",
                turns(*from_turn, *to_turn)
            ),
            Note::CallEstimate {
                call,
                from_turn,
                to_turn,
                tokens_in,
                tokens_out,
                counted,
                price,
            } => {
                let how = if *counted {
                    "counted by the provider"
                } else {
                    "estimated"
                };
                write!(
                    f,
                    "call {call} ({}): ~{tokens_in} tokens in ({how}), ~{tokens_out} out",
                    turns(*from_turn, *to_turn)
                )?;
                if let Some((band, over, usd)) = price {
                    write!(
                        f,
                        "; price band {band}{}: ${}",
                        if *over {
                            " — over the cheaper band; lower --max-span-tokens to stay under it"
                        } else {
                            ""
                        },
                        super::usd(*usd)
                    )?;
                }
                Ok(())
            }
            Note::ClosedTornLine => f.write_str(
                "closed a line an earlier mf run began and did not finish (it is skipped on read)",
            ),
            Note::Interleaved => {
                f.write_str("another writer wrote at the same instant; both lines are kept")
            }
            Note::RollupTooLarge(n) => write!(
                f,
                "the {n} summaries are too large to roll up within the span budget; they stand"
            ),
            Note::RollupFailed(message) => write!(f, "rollup failed: {message}"),
            Note::RollupWaiting(message) => write!(f, "rollup waiting: {message}"),
            Note::RollupLossy(why) => write!(
                f,
                "a rollup summary was declined as lossy ({why}); the summaries under it stand"
            ),
            Note::RollupNotShorter => f.write_str(
                "a rollup summary was not shorter than the summaries under it; they stand",
            ),
            Note::RollupNotHonoured(why) => write!(
                f,
                "a rollup of these summaries would not stand on read ({why}); not asked about, the summaries under it stand"
            ),
            Note::AfterDeclined {
                from_turn,
                to_turn,
                chunks,
                unasked,
            } => {
                write!(
                    f,
                    "the chunk of {} was declined, and {ONE_RUN}: the {chunks} chunk{} after it stay{} verbatim",
                    turns(*from_turn, *to_turn),
                    plural(*chunks, "", "s"),
                    plural(*chunks, "s", ""),
                )?;
                if *unasked > 0 {
                    write!(
                        f,
                        " ({unasked} of them not asked about: nothing was paid for {})",
                        plural(*unasked, "it", "them")
                    )?;
                }
                Ok(())
            }
            Note::DeclinedByModel {
                from_turn,
                to_turn,
                model,
                line,
                reason,
            } => write!(
                f,
                "this span ({}) was already declined as {} by {model} (record on line {line}): `mf compact --model {model}` skips it until it grows (`--retry` asks again); another model is asked",
                turns(*from_turn, *to_turn),
                match reason {
                    DeclineReason::Rejected => "uncitable",
                    _ => "lossy",
                }
            ),
            Note::StubsByContextEdit => f.write_str(
                "pi shows these stubs through `context_edit` entries, which pi reads from version 1.6 on; an older pi still sends the original tool results (mf's recall shows the stubs either way)",
            ),
            Note::CorrectionFailed {
                from_turn,
                to_turn,
                message,
            } => write!(
                f,
                "{}: a correction call failed ({message}); the summaries accepted before it stand",
                turns(*from_turn, *to_turn)
            ),
        }
    }
}

/// What a skip reason says to a person (the engine returns it as data; the words and the flags
/// they name live here).
impl SkipReason {
    pub fn describe(&self) -> String {
        match self {
            SkipReason::BelowTrigger { uncovered, trigger } => format!(
                "not worth a call: {uncovered} uncovered entr{} (below the trigger of {trigger})",
                if *uncovered == 1 { "y" } else { "ies" }
            ),
            SkipReason::NothingBeforeTail { considered } => format!(
                "not worth a call: all {considered} entries considered are in the verbatim tail once it is rounded out to whole turns (the last turn always stays verbatim)"
            ),
            SkipReason::TooFew {
                would_fold,
                min_fold,
            } => format!(
                "not worth a call: only {would_fold} entr{} would fold (minimum {min_fold})",
                if *would_fold == 1 { "y" } else { "ies" }
            ),
            SkipReason::DeclinedBefore { line, reason, .. } => format!(
                "already asked: this exact span was declined as {} (record on line {line}); it is asked again once it grows",
                match reason {
                    DeclineReason::Lossy => "lossy by this model",
                    DeclineReason::Rejected =>
                        "uncitable by this model (every candidate summary was rejected)",
                    _ => "not smaller",
                }
            ),
            SkipReason::UnderTarget { tokens, target } => format!(
                "nothing to do: the recall view is ~{tokens} tokens, within the target of {target}"
            ),
            SkipReason::NothingNew { stale, small: 0 } => format!(
                "nothing new to fold: the {stale} item{} before the verbatim tail are summaries, stubs, or entries already declined (run again once the conversation grows; --rollup folds the summaries)",
                if *stale == 1 { "" } else { "s" }
            ),
            SkipReason::NothingNew { stale, small } => format!(
                "not worth a call: {small} chunk{} between tool units too large for one call {} each under {MIN_CHUNK_CHARS} characters, which a summary would not shorten{}",
                if *small == 1 { "" } else { "s" },
                if *small == 1 { "is" } else { "are" },
                if *stale > 0 {
                    format!(
                        "; {stale} other items are summaries, stubs, or entries already declined"
                    )
                } else {
                    String::new()
                }
            ),
            SkipReason::TooLargeForACall {
                units,
                budget,
                room,
            } => format!(
                "not worth a call: each of the {units} unit{} that would fold is larger than one call may carry (--max-span-tokens {budget} leaves ~{} tokens for the transcript after the request's own ~{} tokens of framing); {} verbatim",
                if *units == 1 { "" } else { "s" },
                estimate_tokens(*room),
                estimate_tokens(REQUEST_OVERHEAD_CHARS),
                if *units == 1 { "it stays" } else { "they stay" }
            ),
            SkipReason::NotHonoured { why } => format!(
                "nothing mf would honour: the fold it would plan would not stand on read ({why}); it stays verbatim"
            ),
            SkipReason::OneRun { turn, why } => format!(
                "nothing this agent can show: {ONE_RUN}, and at turn {turn}, before anything that would fold, {why}"
            ),
            SkipReason::NothingToMask {
                results,
                keep,
                tail,
                kept,
                small,
            } => format!(
                "nothing to mask: of the {results} tool result{} in view, {tail} {} in the verbatim tail (`--recent`), {kept} more {} among the {keep} most recent (`--keep-tool-results`), and {small} {} too short for a stub to shorten ({} characters or fewer)",
                if *results == 1 { "" } else { "s" },
                if *tail == 1 { "is" } else { "are" },
                if *kept == 1 { "is" } else { "are" },
                if *small == 1 { "is" } else { "are" },
                crate::fold::plan::STUB_WORTH_CHARS,
            ),
        }
    }
}

/// What a policy refused up front says to a person.
impl Display for PolicyError {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            PolicyError::WindowNotLargerThanTail { size, recent } => write!(
                f,
                "`--size {size}` must be greater than `--recent {recent}`: a window no larger than the verbatim tail never has anything to fold"
            ),
            PolicyError::MinFoldZero => f.write_str("`--min-fold` must be at least 1"),
            PolicyError::SpanBudgetTooSmall => f.write_str(
                "`--max-span-tokens` must be at least 256 (a span needs room for at least a turn)",
            ),
            PolicyError::KeepNoResults => f.write_str(
                "`--keep-tool-results` must be at least 1: the most recent tool result always stays verbatim",
            ),
        }
    }
}

impl std::error::Error for PolicyError {}

impl Display for super::ChunkOutcome {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        use super::ChunkOutcome::*;
        match self {
            Pending => Ok(()),
            Failed(message) => write!(f, "summarizer failed: {message}"),
            Lossy(why) => write!(f, "summary declined as lossy: {why}"),
            Accepted {
                entries,
                from_turn,
                to_turn,
                chars,
            } => write!(
                f,
                "accepted: {entries} entries ({}) in {chars} chars",
                turns(*from_turn, *to_turn)
            ),
        }
    }
}

impl Display for super::SummarizeReason {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        use super::SummarizeReason::*;
        match self {
            Pending => Ok(()),
            DryRun {
                entries,
                from_turn,
                to_turn,
                calls,
                model,
                tokens_in,
                tokens_out,
                cost,
            } => {
                write!(
                    f,
                    "dry run: {entries} entr{} ({}) in {calls} call{} to {model}, ~{tokens_in} tokens in, ~{tokens_out} out; ",
                    plural(*entries, "y", "ies"),
                    turns(*from_turn, *to_turn),
                    plural(*calls, "", "s"),
                )?;
                match cost {
                    Some(c) => write!(f, "estimated cost ${}", super::usd(*c))?,
                    None => f.write_str(
                        "cost unknown (no price for this model; see --price-in/--price-out)",
                    )?,
                }
                f.write_str("; nothing called")
            }
            Chunks(chunks) if chunks.len() == 1 => write!(f, "{}", chunks[0]),
            Chunks(chunks) => {
                let declined: Vec<String> = chunks
                    .iter()
                    .filter(|c| c.declined())
                    .map(ToString::to_string)
                    .collect();
                if declined.is_empty() {
                    write!(f, "accepted: {} chunks, each audited", chunks.len())
                } else {
                    write!(
                        f,
                        "{} of {} chunks declined: {}",
                        declined.len(),
                        chunks.len(),
                        declined.join("; ")
                    )
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decision::{ChunkOutcome, SummarizeReason};

    #[test]
    fn faults_read_in_the_words_records_have_always_carried() {
        let faults = Faults(vec![
            Fault::Forged(vec![
                ("turn-heading".into(), "[turn 3 · user]".into()),
                ("delimiter".into(), "<<<END".into()),
                ("label".into(), "[summary of earlier turns".into()),
                ("role-marker".into(), "user:".into()),
            ]),
            Fault::Echo(0.916),
            Fault::Generic {
                own: 0.04,
                floor: 0.1,
            },
            Fault::Lossy {
                kept: 2732,
                found: 6737,
                retention: 0.4855,
                min: 0.5,
                missing: (1..=7).map(|n| n.to_string()).collect(),
            },
            Fault::Invented(vec!["5.2".into()]),
            Fault::Superseded(vec![("8080".into(), "9090".into())]),
        ]);
        assert_eq!(
            faults.to_string(),
            "it imitates mf's framing (turn-heading `[turn 3 · user]`, delimiter `<<<END`, label `[summary of earlier turns`, and 1 more); \
             it repeats the instruction (92% of its 5-word phrases); \
             the model's own words keep 4% of the salient items, under 10% (a generic text); \
             it keeps 2732 of 6737 items (49%), under the minimum of 50%; missing: 1, 2, 3, 4, 5, and 2 more; \
             it states what nothing it read says (5.2); \
             it states corrected values as current (8080 (corrected to 9090))"
        );
        assert!(
            faults.names("<<<END") && !faults.names("turn-heading"),
            "a kind is no text"
        );
        let redacted = faults.map_texts(|t| t.replace("9090", "[redacted]"));
        assert!(redacted.names("[redacted]") && !redacted.names("9090"));
        assert!(redacted.names("8080") && redacted.names("5.2"));
    }

    #[test]
    fn a_summarize_reason_tells_its_chunks() {
        let lossy = ChunkOutcome::Lossy(Faults(vec![Fault::Invented(vec!["42 GB".into()])]));
        let ok = ChunkOutcome::Accepted {
            entries: 12,
            from_turn: 1,
            to_turn: 4,
            chars: 900,
        };
        assert_eq!(
            SummarizeReason::Chunks(vec![ok.clone()]).to_string(),
            "accepted: 12 entries (turns 1–4) in 900 chars"
        );
        assert_eq!(
            SummarizeReason::Chunks(vec![ok.clone(), ok.clone()]).to_string(),
            "accepted: 2 chunks, each audited"
        );
        assert_eq!(
            SummarizeReason::Chunks(vec![ok, lossy, ChunkOutcome::Failed("timed out".into())])
                .to_string(),
            "2 of 3 chunks declined: summary declined as lossy: it states what nothing it read says (42 GB); summarizer failed: timed out"
        );
    }
}
