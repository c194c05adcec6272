//! `FoldPolicy`: the knobs of one fold decision, already validated.

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

/// `--recent-tokens` by default: a verbatim tail of at most ~3,000 tokens, and no more than the
/// recall goal leaves room for (see [`DEFAULT_TAIL_GOAL`]). mf's goal is a recall view of at most
/// about a third of the original; a summary takes about a fifth of what it folds, so the view
/// after a fold is about `kept + 0.2 × folded`: a tail over ~15% of the view misses the goal on
/// its own. 3,000 tokens is 15% of a 20k-token session (the least the goal is promised for),
/// and stays the cap above it: some 30–100 of an agent's newest tool units, what it needs to
/// carry on. (pi keeps 20k tokens because it compacts only near a full context window; mf
/// compacts long before that.)
pub const DEFAULT_RECENT_TOKENS: usize = 3_000;

/// Unless `--recent-tokens` is given, the verbatim tail is sized so that the recall view after
/// a fold at the compression goal comes to about this share of the view before it (with what
/// never folds — the preamble, what the format pins — counted first), between
/// [`MIN_RECENT_TOKENS`] and `recent_tokens`. Measured on fresh single-prompt agent runs of
/// 5k–11k tokens: a fixed 3,000-token tail of small tool units kept half of each verbatim (0.53–0.73
/// of the view after the fold); sized for 0.3, they come to 0.29–0.35 (the extractive
/// summarizer's summaries run a little over a fifth).
pub const DEFAULT_TAIL_GOAL: f64 = 0.3;
/// The least a goal-sized tail holds, in estimated tokens (it always holds the `recent` entries
/// too).
pub const MIN_RECENT_TOKENS: usize = 400;
/// Tokens mf's label adds to a summary, as the tail's sizing counts them.
const SUMMARY_LABEL_TOKENS: usize = 100;

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
    /// The recall view, as a share of the one before, that the verbatim tail is sized for
    /// (within [`MIN_RECENT_TOKENS`]..=`recent_tokens`); `None` (an explicit `--recent-tokens`):
    /// `recent_tokens` alone.
    pub tail_goal: Option<f64>,
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
            tail_goal: Some(DEFAULT_TAIL_GOAL),
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

/// A policy that can never fold anything, refused up front (`decision` says it in words).
#[derive(Debug, PartialEq, Eq)]
pub enum PolicyError {
    WindowNotLargerThanTail { size: usize, recent: usize },
    MinFoldZero,
    SpanBudgetTooSmall,
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

    /// The most estimated tokens the verbatim tail holds in a recall view of `view_tokens`, of
    /// which `fixed_tokens` never fold: what a fold at the compression goal leaves room for
    /// under the tail goal (`kept + c × (view − kept) + label ≤ goal × view`, solved for the
    /// tail), within [`MIN_RECENT_TOKENS`]..=`recent_tokens`.
    pub fn tail_tokens(&self, view_tokens: usize, fixed_tokens: usize) -> usize {
        let Some(goal) = self.tail_goal else {
            return self.recent_tokens;
        };
        let (v, f, c) = (view_tokens as f64, fixed_tokens as f64, self.compression);
        let label = (SUMMARY_LABEL_TOKENS) as f64;
        let room = (goal * v - f - c * (v - f).max(0.0) - label) / (1.0 - c).max(0.05);
        (room.max(0.0) as usize)
            .max(MIN_RECENT_TOKENS)
            .min(self.recent_tokens.max(MIN_RECENT_TOKENS))
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
    fn the_default_tail_is_what_the_recall_goal_leaves_room_for() {
        let pol = FoldPolicy::default();
        // 0.3 × 20k − 500 fixed − 0.2 × 19.5k − 100 label = 1,500, over 0.8.
        assert_eq!(pol.tail_tokens(20_000, 500), 1_875);
        assert_eq!(pol.tail_tokens(5_000, 1_000), MIN_RECENT_TOKENS);
        assert_eq!(pol.tail_tokens(200_000, 500), DEFAULT_RECENT_TOKENS);
        // The goal holds at the compression goal.
        let (v, f) = (30_000.0, 800.0);
        let t = pol.tail_tokens(30_000, 800) as f64;
        assert!(f + t + 0.2 * (v - f - t) + 100.0 <= 0.3 * v + 1.0);
        let explicit = FoldPolicy {
            recent_tokens: 5_000,
            tail_goal: None,
            ..pol
        };
        assert_eq!(explicit.tail_tokens(7_000, 0), 5_000);
    }

    #[test]
    fn summary_target_follows_the_goal_and_the_output_budget() {
        let pol = FoldPolicy::default();
        assert_eq!(pol.summary_target_tokens(1000), 200);
        assert_eq!(pol.summary_target_tokens(10), 64);
        assert_eq!(pol.summary_target_tokens(10_000_000), 4096);
    }
}
