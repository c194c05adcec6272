//! The fold engine: pure functions over entries and records — no I/O, no clock, no env, no network.
//!
//! `Ledger` says what a transcript means now (standing summaries, what they hide, the recall
//! view); `plan` decides what to fold under a `FoldPolicy`; `summary` builds the entry mf appends
//! and judges whether it is worth writing; `prompt` renders a span for a summarizer; `audit`
//! measures what a summary kept of the span and flags what it got wrong.

pub mod audit;
pub mod budget;
pub mod ledger;
pub mod plan;
pub mod policy;
pub mod prompt;
pub mod summary;

pub use budget::fit_budget;
pub use ledger::{Item, Ledger, Summary};
pub use plan::{Decision, FoldPlan, Skip, SkipReason, Span, plan};
pub use policy::{FoldPolicy, PolicyError};
pub use prompt::SummaryRequest;
pub use summary::{SummaryDraft, Verdict};

#[cfg(test)]
mod tests;
