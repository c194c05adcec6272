//! `--strategy cited`: one summary per stretch of whole turns, each line citing the entry it was
//! copied from, checked with mf's own rules before it is sent.

use super::*;

/// The most summaries one cited reply holds.
pub const MAX_GROUPS: usize = 8;
/// About how many characters of the span one cited summary stands for.
pub(super) const GROUP_CHARS: usize = 4000;
/// A cited summary's length budget as a share (percent) of its stretch, at least (its share of
/// the target when that is more).
pub(super) const CITED_SHARE_PCT: usize = 25;

/// `--strategy cited`: one summary per stretch of whole turns, every line citing the entry it
/// was copied from, checked with mf's own rules before it is sent (see the module docs).
pub fn summarize_cited(pieces: &[Piece], c: &CiteRequest, target_chars: usize) -> String {
    let offer = &c.offer;
    if c.round > 1 || pieces.is_empty() || pieces.len() != offer.entries.len() {
        return cite::NONE_REPLY.to_string();
    }
    let total: usize = offer.entries.iter().map(|e| e.chars).sum::<usize>().max(1);
    let share = |g: &std::ops::Range<usize>| -> usize {
        let chars: usize = offer.entries[g.clone()].iter().map(|e| e.chars).sum();
        (target_chars * chars / total)
            .max(chars * CITED_SHARE_PCT / 100)
            .max(120)
    };
    let handles: Vec<String> = offer.entries.iter().map(|e| e.handle.clone()).collect();
    let units: Vec<u32> = offer.entries.iter().map(|e| e.unit).collect();
    let chars: Vec<usize> = offer.entries.iter().map(|e| e.chars).collect();
    let render = |g: &std::ops::Range<usize>, budget: usize| -> String {
        let ctx = CiteCtx {
            handles: &handles[g.clone()],
            units: &units[g.clone()],
            chars: &chars[g.clone()],
        };
        compose(&pieces[g.clone()], budget, Some(ctx))
    };
    let reply_of = |texts: &[String]| -> String {
        texts
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.is_empty())
            .map(|(k, t)| format!("=== #{}\n{t}", k + 1))
            .collect::<Vec<_>>()
            .join("\n\n")
    };
    let mut groups = stretches(pieces, offer);
    let mut budgets: Vec<usize> = groups.iter().map(share).collect();
    let mut texts: Vec<String> = groups
        .iter()
        .zip(&budgets)
        .map(|(g, &b)| render(g, b))
        .collect();
    // Check the reply as mf will; a summary over the length limit gets a smaller budget, and one
    // that breaks another rule (or cannot be shortened) is merged into its neighbour, or, alone,
    // left out.
    for _ in 0..4 * MAX_GROUPS {
        let reply = reply_of(&texts);
        let mut review = Review::new(offer);
        review.begin_call();
        review.review(&reply, &|_| None, &mut |_| Ok(()));
        let Some((k, reason)) = review
            .rejected
            .iter()
            .filter_map(|r| {
                let k = r
                    .name
                    .strip_prefix('#')?
                    .parse::<usize>()
                    .ok()?
                    .checked_sub(1)?;
                Some((k, &r.reason))
            })
            .max_by_key(|(k, _)| *k)
        else {
            return if reply.is_empty() {
                cite::NONE_REPLY.to_string()
            } else {
                reply
            };
        };
        if let Rejection::TooLong { tokens, limit, .. } = reason {
            let over = (tokens - limit) * 4 + 16;
            let now = texts[k].chars().count();
            if now > over + 120 {
                budgets[k] = now - over;
                texts[k] = render(&groups[k], budgets[k]);
                continue;
            }
        }
        if groups.len() == 1 {
            return cite::NONE_REPLY.to_string();
        }
        let into = if k > 0 { k - 1 } else { 1 };
        let (a, b) = (k.min(into), k.max(into));
        groups[a] = groups[a].start..groups[b].end;
        groups.remove(b);
        budgets.remove(b);
        texts.remove(b);
        budgets[a] = share(&groups[a]);
        texts[a] = render(&groups[a], budgets[a]);
    }
    cite::NONE_REPLY.to_string()
}

/// What a cited summary knows of the pieces it may cite (parallel to them).
#[derive(Debug, Clone, Copy)]
pub(super) struct CiteCtx<'p> {
    pub(super) handles: &'p [String],
    /// Pieces with the same unit are consumed together (a tool call and its results).
    pub(super) units: &'p [u32],
    /// Characters mf counts for each piece.
    pub(super) chars: &'p [usize],
}

/// The most a cited summary's lines for one tool unit (or message) may take, as a share
/// (percent) of the unit's characters: a line that costs more than what it lets mf fold is
/// not worth writing — an uncited entry stays verbatim, so nothing is lost by leaving it.
pub(super) const CITED_LINE_PCT: usize = 70;

/// Stretches of whole turns of similar size (tool units never split), each of at least two
/// pieces where the span has them.
pub(super) fn stretches(pieces: &[Piece], offer: &Offer) -> Vec<std::ops::Range<usize>> {
    let n = pieces.len();
    let total: usize = offer.entries.iter().map(|e| e.chars).sum();
    let k = total.div_ceil(GROUP_CHARS).clamp(1, MAX_GROUPS);
    let target = total / k;
    let mut out: Vec<std::ops::Range<usize>> = Vec::new();
    let (mut start, mut acc) = (0usize, 0usize);
    for p in 0..n {
        let seam = p > start
            && pieces[p].turn != pieces[p - 1].turn
            && offer.entries[p].unit != offer.entries[p - 1].unit;
        if seam && acc >= target && out.len() + 1 < k && p - start >= cite::MIN_SOURCES {
            out.push(start..p);
            start = p;
            acc = 0;
        }
        acc += offer.entries[p].chars;
    }
    if n - start < cite::MIN_SOURCES
        && let Some(last) = out.last_mut()
    {
        last.end = n;
    } else {
        out.push(start..n);
    }
    out
}
