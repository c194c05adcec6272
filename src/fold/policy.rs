//! `FoldPolicy`: the knobs of one fold decision, already validated.

use thiserror::Error;

/// Which folds a run makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    /// One summary per span (chunked when the span is over the model's budget).
    Summary,
    /// Stubs in place of old tool results; no model call.
    Mask,
    /// Stubs first, then a summary fold of what remains.
    MaskThenSummary,
    /// Summaries that cite their sources; coverage is what they cite.
    Cited,
}

impl Strategy {
    pub fn masks(self) -> bool {
        matches!(self, Strategy::Mask | Strategy::MaskThenSummary)
    }

    pub fn summarizes(self) -> bool {
        !matches!(self, Strategy::Mask)
    }
}

/// `--recent-tokens` by default: a verbatim tail of at most ~3,000 tokens. mf's goal is a recall
/// view of at most about a third of the original once a session passes 20k tokens; a summary
/// takes about a fifth of what it folds, so a kept tail of more than ~15% of 20k (3,000 tokens)
/// would miss it on its own. (pi keeps 20k tokens because it compacts only near a full context
/// window; mf compacts long before that.)
pub const DEFAULT_RECENT_TOKENS: usize = 3_000;

/// How the engine decides what to fold. Built by `settings` from flags, env and config.
#[derive(Debug, Clone, PartialEq)]
pub struct FoldPolicy {
    /// Entries at the end of the view that stay verbatim (the seam is then rounded outward to a
    /// turn; the last turn always stays verbatim).
    pub recent: usize,
    /// The most estimated tokens the verbatim tail holds when it is rounded outward to a whole
    /// turn: a turn whose tail is larger is folded inside (its prompt and newest tool units stay
    /// verbatim, its older tool units fold); inside such a turn, the newest tool units that fit
    /// in it stay (at least the `recent` entries).
    pub recent_tokens: usize,
    /// Consider only the newest `size` entries of the view; `None` considers every uncovered entry.
    pub size: Option<usize>,
    /// No call when fewer than this many uncovered entries exist.
    pub trigger: usize,
    /// No call when fewer than this many entries would fold.
    pub min_fold: usize,
    /// Keep real user messages out of every fold (they stay verbatim; coverage skips them).
    pub protect_user: bool,
    /// The most a span may hold for one summarizer call, in estimated tokens; larger spans are
    /// split into chunks at safe cut points. `None`: no limit.
    pub max_span_tokens: Option<usize>,
    /// Fold the oldest turns until the recall view is at most this many estimated tokens.
    pub target_tokens: Option<usize>,
    /// A summary's length as a share of its span's (the compression goal), before the model's
    /// output budget caps it.
    pub compression: f64,
    /// The model's output budget for one summary, in tokens.
    pub max_output_tokens: usize,
    pub strategy: Strategy,
    /// `--strategy mask`: the most recent tool results that stay verbatim.
    pub keep_tool_results: usize,
}

impl Default for FoldPolicy {
    fn default() -> Self {
        Self {
            recent: 5,
            recent_tokens: DEFAULT_RECENT_TOKENS,
            size: None,
            trigger: 20,
            min_fold: 2,
            protect_user: false,
            max_span_tokens: None,
            target_tokens: None,
            compression: 0.2,
            max_output_tokens: 4096,
            strategy: Strategy::Summary,
            keep_tool_results: 3,
        }
    }
}

/// A policy that can never fold anything, refused up front.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PolicyError {
    #[error(
        "`--size {size}` must be greater than `--recent {recent}`: a window no larger than the verbatim tail never has anything to fold"
    )]
    WindowNotLargerThanTail { size: usize, recent: usize },
    #[error("`--min-fold` must be at least 1")]
    MinFoldZero,
    #[error("`--max-span-tokens` must be at least 256 (a span needs room for at least a turn)")]
    SpanBudgetTooSmall,
    #[error(
        "`--keep-tool-results` must be at least 1: the most recent tool result always stays verbatim"
    )]
    KeepNoResults,
}

impl FoldPolicy {
    /// Check the combination.
    pub fn validate(self) -> Result<Self, PolicyError> {
        if let Some(size) = self.size
            && size <= self.recent
        {
            return Err(PolicyError::WindowNotLargerThanTail {
                size,
                recent: self.recent,
            });
        }
        if self.min_fold == 0 {
            return Err(PolicyError::MinFoldZero);
        }
        if self.max_span_tokens.is_some_and(|b| b < 256) {
            return Err(PolicyError::SpanBudgetTooSmall);
        }
        if self.keep_tool_results == 0 {
            return Err(PolicyError::KeepNoResults);
        }
        Ok(self)
    }

    /// The length a summary of `span_tokens` should aim for, in tokens: the compression goal,
    /// capped by the model's output budget, never below a useful minimum.
    pub fn summary_target_tokens(&self, span_tokens: usize) -> usize {
        let goal = (span_tokens as f64 * self.compression).ceil() as usize;
        goal.clamp(64, self.max_output_tokens.max(64))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(recent: usize, size: Option<usize>) -> FoldPolicy {
        FoldPolicy {
            recent,
            size,
            ..FoldPolicy::default()
        }
    }

    #[test]
    fn size_must_exceed_recent() {
        assert_eq!(
            p(5, Some(5)).validate(),
            Err(PolicyError::WindowNotLargerThanTail { size: 5, recent: 5 })
        );
        assert!(p(5, Some(4)).validate().is_err());
        assert!(p(5, Some(6)).validate().is_ok());
        assert!(p(5, None).validate().is_ok());
    }

    #[test]
    fn summary_target_follows_the_goal_and_the_output_budget() {
        let pol = FoldPolicy::default();
        assert_eq!(pol.summary_target_tokens(1000), 200);
        assert_eq!(pol.summary_target_tokens(10), 64);
        assert_eq!(pol.summary_target_tokens(10_000_000), 4096);
    }
}
