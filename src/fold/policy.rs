//! `FoldPolicy`: the knobs of one fold decision, already validated.

use thiserror::Error;

/// How the engine decides what to fold. Built by `settings` from flags, env and config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoldPolicy {
    /// Entries at the end of the view that stay verbatim (the seam is then rounded outward to a turn).
    pub recent: usize,
    /// Consider only the newest `size` entries of the view; `None` considers every uncovered entry.
    pub size: Option<usize>,
    /// No call when fewer than this many uncovered entries exist.
    pub trigger: usize,
    /// No call when fewer than this many entries would fold.
    pub min_fold: usize,
}

impl Default for FoldPolicy {
    fn default() -> Self {
        Self {
            recent: 5,
            size: None,
            trigger: 20,
            min_fold: 2,
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
}

impl FoldPolicy {
    pub fn new(
        recent: usize,
        size: Option<usize>,
        trigger: usize,
        min_fold: usize,
    ) -> Result<Self, PolicyError> {
        if let Some(size) = size
            && size <= recent
        {
            return Err(PolicyError::WindowNotLargerThanTail { size, recent });
        }
        if min_fold == 0 {
            return Err(PolicyError::MinFoldZero);
        }
        Ok(Self {
            recent,
            size,
            trigger,
            min_fold,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_must_exceed_recent() {
        assert_eq!(
            FoldPolicy::new(5, Some(5), 20, 2),
            Err(PolicyError::WindowNotLargerThanTail { size: 5, recent: 5 })
        );
        assert!(FoldPolicy::new(5, Some(4), 20, 2).is_err());
        assert!(FoldPolicy::new(5, Some(6), 20, 2).is_ok());
        assert!(FoldPolicy::new(5, None, 20, 2).is_ok());
    }
}
