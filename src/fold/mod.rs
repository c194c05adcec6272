//! The fold engine: pure functions over entries and records — no I/O, no clock, no env, no network.
//!
//! `Ledger` says what a transcript means now (which summaries stand, what they hide, the recall
//! view); `plan` decides what to fold under a `FoldPolicy`; `summary` builds the entries mf
//! appends and judges whether they are worth writing; `prompt` renders a span for a summarizer;
//! `audit` measures what a summary kept of its span and flags what it got wrong; `cite` reads and
//! checks the cited summaries of `--strategy cited`; `frame` holds the words all of them share
//! (mf's label, the delimiters, defusing) and imports nothing else from `fold`.

pub mod audit;
pub mod budget;
pub mod cite;
pub mod fault;
pub mod frame;
pub mod ledger;
pub mod plan;
pub mod policy;
pub mod prompt;
pub mod summary;

pub use budget::fit_budget;
pub use ledger::{Flag, FlagKind, Item, ItemKind, Ledger, Summary};
pub use plan::{Decision, Plan, Skip, SkipReason, Span, plan, plan_mask};
pub use policy::{FoldPolicy, PolicyError, Strategy};
pub use prompt::{CiteRequest, Piece, SummaryRequest};
pub use summary::Verdict;

#[cfg(test)]
pub(crate) mod tests;
