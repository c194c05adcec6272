//! `mf eval`'s measures, pure (no I/O, clock or environment): where a session is cut (its first
//! share of tokens, at a seam the engine allows a fold to end at), which salient items the rest
//! of the session goes on to use that its first part holds (`futureUse.found`), which of them a
//! view still carries (`kept`), whether an answer occurs in a text, and the spread of a figure
//! over runs.
//!
//! Items are the retention audit's (`fold::audit::extract`: paths, commands, numbers, dates,
//! identifiers, URLs, addresses, issue numbers, error codes, quoted errors, names), matched as the
//! audit matches them: by normalised value (`$4,200` is `4200`; a qualified value is kept by the
//! same value written bare), or by their text up to trivial formatting, pattern lines read as the
//! instances they stand for.

use std::collections::{BTreeMap, HashSet};

use serde::Serialize;

use crate::entry::{Role, estimate_tokens, flag};
use crate::fold::Ledger;
use crate::fold::audit::{self, Item as Salient, ItemClass, pattern};

/// The share of a session's tokens that is folded by default; the rest is the future the fold
/// is measured against (supercompact's `evaluate` split).
pub const DEFAULT_SPLIT: f64 = 0.7;

/// How far (in share of the tokens) a turn's start may lie from the split and still be the cut;
/// farther, the nearest seam between tool units inside a turn is taken.
pub const TURN_SLACK: f64 = 0.2;

/// Where a session is cut: the entries before `at` are the past that is folded, those from `at`
/// on the future it is measured against.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cut {
    /// The first entry of the future.
    pub at: usize,
    /// Estimated tokens (4 characters a token) of what the agent sees before and from the cut.
    pub past_tokens: usize,
    pub future_tokens: usize,
    /// The cut is at a turn's start (else between tool units inside one).
    pub turn_seam: bool,
}

impl Cut {
    /// The share of the tokens before the cut.
    pub fn share(&self) -> f64 {
        let total = self.past_tokens + self.future_tokens;
        if total == 0 {
            0.0
        } else {
            self.past_tokens as f64 / total as f64
        }
    }
}

/// Whether entry `i` is part of what the agent sees of the conversation: not one of mf's own
/// lines, not history the agent's own compaction took away.
pub fn counted(ledger: &Ledger<'_>, i: usize) -> bool {
    !ledger.is_claim_entry(i as u32) && !ledger.conv.entries[i].has(flag::UNSEEN)
}

/// Whether entry `i` is a use of what came before: what the user says and what the agent says
/// or calls. What a tool prints back is not (a listing naming forty files seen earlier is not
/// the session relying on them).
pub fn is_use(ledger: &Ledger<'_>, i: usize) -> bool {
    counted(ledger, i) && matches!(ledger.conv.entries[i].role, Role::User | Role::Assistant)
}

/// The cut nearest to `share` of the session's tokens at a seam the engine allows a fold to end
/// at (`Ledger::seam_before`): a turn's start when one lies within `TURN_SLACK` of the split,
/// else the nearest seam between tool units inside a turn (a single-prompt agent run). `None`
/// when no seam leaves something on both sides.
pub fn cut(ledger: &Ledger<'_>, share: f64) -> Option<Cut> {
    let n = ledger.entries_len();
    let tokens: Vec<usize> = (0..n)
        .map(|i| {
            if counted(ledger, i) {
                estimate_tokens(ledger.conv.entries[i].chars as usize)
            } else {
                0
            }
        })
        .collect();
    let total: usize = tokens.iter().sum();
    let mut before = Vec::with_capacity(n);
    let mut sum = 0;
    for t in &tokens {
        before.push(sum);
        sum += t;
    }
    let target = total as f64 * share;
    let seams: Vec<usize> = (1..n)
        .filter(|&i| counted(ledger, i) && before[i] > 0 && before[i] < total)
        .filter(|&i| ledger.seam_before(i))
        .collect();
    let distance = |i: usize| (before[i] as f64 - target).abs();
    let nearest = |pool: &mut dyn Iterator<Item = usize>| {
        pool.min_by(|&a, &b| distance(a).total_cmp(&distance(b)))
    };
    let slack = total as f64 * TURN_SLACK;
    let turn = nearest(
        &mut seams
            .iter()
            .copied()
            .filter(|&i| ledger.starts_turn(i) && distance(i) <= slack),
    );
    let at = turn.or_else(|| nearest(&mut seams.iter().copied()))?;
    Some(Cut {
        at,
        past_tokens: before[at],
        future_tokens: total - before[at],
        turn_seam: ledger.starts_turn(at),
    })
}

/// What a text says, for finding items in it: the keys of its own items and its normalised
/// tokens (as the audit reads a summary).
pub struct Said {
    keys: HashSet<String>,
    /// The normalised tokens, space-separated, with a space at each end.
    norm: String,
}

impl Said {
    pub fn new(text: &str) -> Self {
        let text = pattern::expand(text);
        let keys = audit::extract(&text)
            .iter()
            .flat_map(|it| {
                let other = match &it.base {
                    Some(b) => b.clone(),
                    None => format!("{}\u{0}bare", it.key),
                };
                [it.key.clone(), other]
            })
            .collect();
        Said {
            keys,
            norm: format!(" {} ", audit::norm_text(&text)),
        }
    }

    /// Whether the text carries `item`: by its value, by the same value without its qualifier,
    /// or by its text up to trivial formatting.
    pub fn has(&self, item: &Salient) -> bool {
        self.keys.contains(&item.key)
            || item
                .base
                .as_ref()
                .is_some_and(|b| self.keys.contains(&format!("{b}\u{0}bare")))
            || self.contains(&item.text)
    }

    /// Whether `words` occur in the text, normalised (lower case, quotes dropped, whitespace
    /// collapsed), at token boundaries.
    pub fn contains(&self, words: &str) -> bool {
        let n = audit::norm_text(words);
        !n.is_empty() && self.norm.contains(&format!(" {n} "))
    }
}

/// The salient items the future goes on to use that occur in the past: each value once (by
/// class and normalised value), in the order the future first uses them.
pub fn found<'a>(past: &Said, future_uses: impl IntoIterator<Item = &'a str>) -> Vec<Salient> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for text in future_uses {
        for it in audit::extract(text) {
            if seen.insert((it.class, it.key.clone())) && past.has(&it) {
                out.push(it);
            }
        }
    }
    out
}

/// Found items by class: how many.
pub fn by_class(items: &[Salient]) -> BTreeMap<ItemClass, usize> {
    let mut m = BTreeMap::new();
    for it in items {
        *m.entry(it.class).or_insert(0) += 1;
    }
    m
}

/// What a view kept of the found items.
#[derive(Debug, Clone, PartialEq)]
pub struct Kept {
    pub kept: usize,
    /// Kept items by class.
    pub by_class: BTreeMap<ItemClass, usize>,
    /// The found items the view lost, in the order the future uses them.
    pub lost: Vec<Salient>,
}

impl Kept {
    /// `kept / found`; 1 when nothing was found (nothing was lost).
    pub fn share(&self, found: usize) -> f64 {
        if found == 0 {
            1.0
        } else {
            self.kept as f64 / found as f64
        }
    }
}

/// Which of `found` the view still carries.
pub fn kept(found: &[Salient], view: &Said) -> Kept {
    let mut k = Kept {
        kept: 0,
        by_class: BTreeMap::new(),
        lost: Vec::new(),
    };
    for it in found {
        if view.has(it) {
            k.kept += 1;
            *k.by_class.entry(it.class).or_insert(0) += 1;
        } else {
            k.lost.push(it.clone());
        }
    }
    k
}

/// The least, middle and greatest of a figure over runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

impl Spread {
    /// The spread of `values` (the median of an even count is the mean of the middle two);
    /// zeros when there are none.
    pub fn of(values: &[f64]) -> Spread {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return Spread {
                min: 0.0,
                median: 0.0,
                max: 0.0,
            };
        }
        v.sort_by(f64::total_cmp);
        let m = v.len() / 2;
        let median = if v.len().is_multiple_of(2) {
            (v[m - 1] + v[m]) / 2.0
        } else {
            v[m]
        };
        Spread {
            min: v[0],
            median,
            max: v[v.len() - 1],
        }
    }

    /// Whether every run gave the same figure.
    pub fn is_single(&self) -> bool {
        self.min == self.max
    }
}

/// A whole figure as an integer (`12`, not `12.0`), any other as it is.
impl Serialize for Spread {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Spread", 3)?;
        for (k, v) in [
            ("min", self.min),
            ("median", self.median),
            ("max", self.max),
        ] {
            if v.fract() == 0.0 && v.abs() < 1e15 {
                st.serialize_field(k, &(v as i64))?;
            } else {
                st.serialize_field(k, &v)?;
            }
        }
        st.end()
    }
}

#[cfg(test)]
mod tests;
