//! The re-vet of one claim on read: could mf have written it here? Its line, its bytes, what it
//! covers, its tool units, its turns, the run it folds and its tail, its label.

use crate::digest::Digest;
use crate::entry::{Claim, ClaimKind, ClaimStrategy, Coverage, Covered, NONE, STUB_PREFIX, flag};
use crate::fold::frame::is_label;

use super::{Ledger, Refusal, Summary, refuse};

impl<'a> Ledger<'a> {
    /// Could mf have written claim `s` here? Returns its children.
    pub(super) fn check(&self, s: u32, parent: &[u32]) -> Result<Vec<u32>, Refusal> {
        let conv = self.conv;
        let claim = conv.claim(s as usize).expect("a claim");
        let here = conv.entries[s as usize].line;
        let cov = self.check_line(s)?;
        let children = match &cov.covered {
            Covered::Ids(ids) => self.resolve_ids(ids).map_err(refuse)?,
            Covered::Lines { ranges, .. } => self.resolve_lines(ranges, here).map_err(refuse)?,
        };
        if children.is_empty() {
            return Err(refuse("its coverage names no entries"));
        }
        self.check_bytes(cov, &children)?;
        self.check_children(claim, &children, parent, here)?;
        match claim.kind {
            ClaimKind::Stub => self.check_stub(s, cov, &children)?,
            ClaimKind::Summary => {
                self.check_tools(&children, parent)?;
                self.check_answered(s, cov, &children, parent)?;
                self.check_run(s, cov, &children, parent)?;
                self.check_tail(s, cov, &children, parent)?;
                // mf's label, for exactly these originals.
                let (from, to, leaves) = self.span_of(&children);
                if !is_label(&claim.label, from, to, leaves, &cov.model, &claim.id) {
                    return Err(refuse(format!(
                        "its content does not start with mf's label for turns {from}–{to} ({leaves} messages)"
                    )));
                }
            }
        }
        Ok(children)
    }

    /// The line itself: mf's shape, seen by the agent, its content matching its fingerprint.
    fn check_line(&self, s: u32) -> Result<&'a Coverage, Refusal> {
        let conv = self.conv;
        let claim = conv.claim(s as usize).expect("a claim");
        let cov: &Coverage = match &claim.coverage {
            Ok(c) => c,
            Err(why) => {
                return Err(refuse(format!(
                    "looks like an mf summary but is not one: {why}"
                )));
            }
        };
        if let Err(why) = &claim.shape_ok {
            return Err(refuse(why.clone()));
        }
        if conv.entries[s as usize].has(flag::HISTORY) {
            return Err(Refusal {
                superseded: true,
                ..refuse(
                    "the agent compacted the session itself after this summary: the agent's own summary now stands for what it folded (and mf folds only after the agent's compaction)",
                )
            });
        }
        // Its own bytes first: an edited line is a problem wherever it stands.
        match &claim.content_fingerprint {
            None => return Err(refuse("its content is not a string")),
            Some(f) if *f != cov.fingerprint => {
                return Err(refuse(format!(
                    "its content does not match its fingerprint {} (edited after it was written)",
                    cov.fingerprint
                )));
            }
            _ => {}
        }
        if conv.entries[s as usize].has(flag::UNSEEN) {
            if self.withdrawn_later(s, &claim.id, &cov.fingerprint) {
                // `expand --restore` withdrew it, and restoring an older summary then left the
                // branch it sits on (pi): history, not a problem.
                return Err(Refusal {
                    superseded: true,
                    ..refuse(
                        "withdrawn by mf (its originals restored), on a branch the agent has since left",
                    )
                });
            }
            // The agent moved off its branch (pi's `/tree` back past the fold, a Claude Code
            // rewind): the agent does not send it, mf shows what the agent sends, and the next
            // compact folds the branch the agent follows. History, not a problem.
            return Err(Refusal {
                off_branch: true,
                ..refuse(
                    "on a branch the agent no longer follows (it moved back past this summary): the agent does not send it, and recall shows the branch it does send",
                )
            });
        }
        Ok(cov)
    }

    /// The covered lines are the lines it was written over: their count and their digest.
    fn check_bytes(&self, cov: &Coverage, children: &[u32]) -> Result<(), Refusal> {
        let stale = |why: String| Refusal {
            stale: true,
            ..refuse(why)
        };
        if cov.entry_count != children.len() as u64 {
            return Err(stale(format!(
                "its coverage says {} entries but its lines now hold {}: lines were added or removed inside it since it was written",
                cov.entry_count,
                children.len()
            )));
        }
        if let Covered::Lines { digest, .. } = &cov.covered {
            let mut d = Digest::new();
            for &c in children {
                d.push(self.conv.entries[c as usize].hash);
            }
            if d.finish() != *digest {
                return Err(stale("the lines it covers are not the lines it was written over (edited, removed or shifted since); it is not honoured and its originals are shown".into()));
            }
        }
        Ok(())
    }

    /// Every covered entry: earlier, seen by the agent, visible now, foldable.
    fn check_children(
        &self,
        claim: &Claim,
        children: &[u32],
        parent: &[u32],
        here: u32,
    ) -> Result<(), Refusal> {
        let conv = self.conv;
        for &c in children {
            let e = &conv.entries[c as usize];
            let at = e.line;
            if e.line >= here {
                return Err(refuse(format!(
                    "it covers line {at}, which is not before it"
                )));
            }
            if e.has(flag::UNSEEN) {
                return Err(refuse(format!(
                    "it covers line {at}, which the agent does not see (another branch, or before the agent's own compaction)"
                )));
            }
            if e.has(flag::PINNED) {
                return Err(refuse(format!(
                    "it covers line {at}, which is never folded"
                )));
            }
            if self.turns[c as usize] == 0 && !self.summaries.contains_key(&c) {
                return Err(refuse(format!(
                    "it covers line {at}, part of the preamble before the first user message, which is never folded"
                )));
            }
            if parent[c as usize] != NONE {
                return Err(refuse(format!(
                    "it covers line {at}, which another standing summary already stands for"
                )));
            }
            if self
                .summaries
                .get(&c)
                .is_some_and(|inner| !inner.standing())
            {
                return Err(refuse(format!(
                    "it covers line {at}, a summary retracted before it (its originals are verbatim again)"
                )));
            }
            if let Some(inner) = conv.claim(c as usize)
                && self.summaries.get(&c).is_some_and(Summary::standing)
                && inner.kind == ClaimKind::Stub
                && claim.kind == ClaimKind::Stub
            {
                return Err(refuse("a stub cannot stand for another stub"));
            }
        }
        Ok(())
    }

    /// A stub stands for one tool result older than the newest ones kept.
    fn check_stub(&self, s: u32, cov: &Coverage, children: &[u32]) -> Result<(), Refusal> {
        let conv = self.conv;
        let claim = conv.claim(s as usize).expect("a claim");
        let [r] = children[..] else {
            return Err(refuse("a stub stands for exactly one tool result"));
        };
        if conv.answers(r as usize).is_empty() || self.is_claim_entry(r) {
            return Err(refuse("a stub stands only for a tool result"));
        }
        if conv.answers(s as usize) != conv.answers(r as usize) {
            return Err(refuse(
                "a stub must answer the same tool call as the result it hides",
            ));
        }
        if !claim.label.starts_with(STUB_PREFIX) {
            return Err(refuse("its content does not start with mf's stub label"));
        }
        let kept = cov.kept_results.unwrap_or(0);
        let newer = (r as usize + 1..s as usize)
            .filter(|&j| {
                !conv.answers(j).is_empty()
                    && !conv.entries[j].has(flag::UNSEEN)
                    && !self.is_claim_entry(j as u32)
            })
            .count() as u32;
        if kept == 0 || newer < kept {
            return Err(refuse(format!(
                "it hides one of the {} most recent tool results, which stay verbatim",
                kept.max(1)
            )));
        }
        Ok(())
    }

    /// Tool calls and results travel together.
    fn check_tools(&self, children: &[u32], parent: &[u32]) -> Result<(), Refusal> {
        let conv = self.conv;
        for &c in children {
            if self.summaries.contains_key(&c) {
                continue;
            }
            let call = self.call_of[c as usize];
            if call != NONE && !covers(children, parent, call) {
                return Err(refuse(format!(
                    "it covers the tool result on line {} but not its call on line {}",
                    conv.entries[c as usize].line, conv.entries[call as usize].line
                )));
            }
            let last = self.last_result[c as usize];
            if last != NONE {
                for j in c + 1..=last {
                    if self.call_of[j as usize] == c && !covers(children, parent, j) {
                        return Err(refuse(format!(
                            "it covers the tool call on line {} but not its result on line {}",
                            conv.entries[c as usize].line, conv.entries[j as usize].line
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether entry `k` is shown raw when claim-time `parent` stands: seen by the agent, not a
    /// line that claims to be mf's, and hidden by no standing summary.
    fn raw(&self, k: usize, parent: &[u32]) -> bool {
        !self.conv.entries[k].has(flag::UNSEEN)
            && !self.is_claim_entry(k as u32)
            && parent[k] == NONE
    }

    /// Whether entry `k` is never folded: the preamble, what the format pins, and a tool result
    /// whose call is one of those.
    fn never_folds(&self, k: usize) -> bool {
        let fixed = |j: usize| {
            self.turns[j] == 0
                || self.conv.entries[j].has(flag::PINNED)
                || self.conv.entries[j].has(flag::LEADS_TURN)
        };
        let call = self.call_of[k];
        fixed(k) || (call != NONE && fixed(call as usize))
    }

    /// The first and last original (entry index) behind a set of children.
    fn leaf_bounds(&self, children: &[u32]) -> (usize, usize) {
        let conv = self.conv;
        let (mut first, mut last) = (usize::MAX, 0usize);
        for &c in children {
            let (a, b) = match self.summaries.get(&c) {
                Some(inner) => (
                    inner.first_leaf as usize,
                    conv.entries
                        .partition_point(|e| e.line <= inner.last_leaf_line)
                        .saturating_sub(1),
                ),
                None => (c as usize, c as usize),
            };
            first = first.min(a);
            last = last.max(b);
        }
        (first, last)
    }

    /// A question is never summarized while its answer stays raw: every turn whose prompt the
    /// claim covers is covered whole, but for what never folds. A claim written before mf
    /// recorded its strategy may leave the rest of the turn to the claims written after it (mf's
    /// chunked folds then put a long turn's prompt and its rest in consecutive summaries).
    fn check_answered(
        &self,
        s: u32,
        cov: &Coverage,
        children: &[u32],
        parent: &[u32],
    ) -> Result<(), Refusal> {
        let conv = self.conv;
        let here = conv.entries[s as usize].line;
        let n = conv.entries.len();
        let before = |k: usize| k < n && conv.entries[k].line < here;
        let (first, _) = self.leaf_bounds(children);
        let mut later: Option<Vec<[u32; 2]>> = None;
        let mut j = first;
        while before(j) {
            if !(self.starts_turn(j) && covers(children, parent, j as u32)) {
                j += 1;
                continue;
            }
            let turn = self.turns[j];
            let mut k = j + 1;
            while before(k) && self.turns[k] == turn {
                let covered_later = cov.strategy.is_none()
                    && self.later_claims_cover(s, conv.entries[k].line, &mut later);
                if self.raw(k, parent)
                    && !covers(children, parent, k as u32)
                    && !self.never_folds(k)
                    && !covered_later
                {
                    return Err(refuse(format!(
                        "it covers the prompt that opened turn {turn} (line {}) but not the rest of that turn (line {} stays raw); a question is never summarized while its answer stays raw",
                        conv.entries[j].line, conv.entries[k].line
                    )));
                }
                k += 1;
            }
            j = k;
        }
        Ok(())
    }

    /// Whether a claim after `s` in the file names `line` in its coverage.
    fn later_claims_cover(&self, s: u32, line: u32, later: &mut Option<Vec<[u32; 2]>>) -> bool {
        let ranges = later.get_or_insert_with(|| {
            (s as usize + 1..self.conv.entries.len())
                .filter_map(|i| self.conv.claim(i))
                .filter_map(|c| match c.coverage.as_ref().map(|c| &c.covered) {
                    Ok(Covered::Lines { ranges, .. }) => Some(ranges.clone()),
                    _ => None,
                })
                .flatten()
                .collect()
        });
        ranges.iter().any(|&[a, b]| (a..=b).contains(&line))
    }

    /// The entry that opened the turn entry `k` is in (`k` itself when it starts one).
    fn opener(&self, k: usize) -> Option<usize> {
        (0..=k)
            .rev()
            .take_while(|&i| self.turns[i] == self.turns[k])
            .find(|&i| self.starts_turn(i))
    }

    /// A summary fold (as recorded beside it) is one run of the view between seams mf chooses:
    /// it begins where a fold may begin, and leaves nothing raw inside it or between it and its
    /// recorded tail but what a fold keeps out (a user message, the prompt of a turn folded
    /// inside, what never folds). A rollup of summaries, a cited fold and a claim written before
    /// mf recorded its strategy may have gaps.
    fn check_run(
        &self,
        s: u32,
        cov: &Coverage,
        children: &[u32],
        parent: &[u32],
    ) -> Result<(), Refusal> {
        if cov.strategy != Some(ClaimStrategy::Summary)
            || children.iter().all(|c| self.summaries.contains_key(c))
        {
            return Ok(());
        }
        let conv = self.conv;
        let here = conv.entries[s as usize].line;
        let (first, last) = self.leaf_bounds(children);
        let opener = |k: usize| self.opener(k);
        // Where it begins: a turn, a tool-unit seam, or the first thing of its turn a fold may
        // hold (after the agent's own compaction).
        let turn_start = opener(first).unwrap_or(first);
        let nothing_before = (turn_start..first)
            .all(|k| !self.raw(k, parent) || self.never_folds(k) || opener(k) == Some(k));
        if !self.seam_before(first) && !nothing_before {
            return Err(refuse(format!(
                "it begins on line {} inside a tool unit or after raw entries of its turn, where mf's summary folds never begin",
                conv.entries[first].line
            )));
        }
        // A kept-out entry: a real user message, what never folds, or the head of a turn whose
        // prompt stays verbatim (the prompt and what travels with it, before the turn's first
        // tool-unit seam).
        let kept_out = |k: usize| {
            self.starts_turn(k)
                || self.never_folds(k)
                || opener(k).is_some_and(|o| {
                    !covers(children, parent, o as u32) && (o + 1..=k).all(|m| !self.seam_before(m))
                })
        };
        let end = cov
            .tail_line
            .map_or(last + 1, |t| conv.entries.partition_point(|e| e.line < t))
            .max(last + 1);
        for k in first..end.min(conv.entries.len()) {
            if conv.entries[k].line >= here {
                break;
            }
            if self.raw(k, parent) && !covers(children, parent, k as u32) && !kept_out(k) {
                return Err(refuse(format!(
                    "it leaves line {} raw {} what it covers, a gap mf's summary folds never leave",
                    conv.entries[k].line,
                    if k > last {
                        "between its tail and"
                    } else {
                        "inside"
                    }
                )));
            }
        }
        Ok(())
    }

    /// The verbatim tail: a whole turn the agent sees follows what it covers, or (a fold inside a
    /// turn) the newest part of that turn stays verbatim after it, with the prompt that opened
    /// it; and its recorded tail, when it has one, is such a place.
    fn check_tail(
        &self,
        s: u32,
        cov: &Coverage,
        children: &[u32],
        parent: &[u32],
    ) -> Result<(), Refusal> {
        let conv = self.conv;
        let here = conv.entries[s as usize].line;
        let covers = |j: u32| covers(children, parent, j);
        let last_leaf = children
            .iter()
            .map(|c| match self.summaries.get(c) {
                Some(inner) => inner.last_leaf_line,
                None => conv.entries[*c as usize].line,
            })
            .max()
            .unwrap_or(0);
        let from = conv.entries.partition_point(|e| e.line <= last_leaf);
        let tail_turn = conv.entries[from..]
            .iter()
            .enumerate()
            .take_while(|(_, e)| e.line < here)
            .any(|(k, _)| self.starts_turn(from + k) && parent[from + k] == NONE);
        let in_turn = !tail_turn
            && {
                let next = (from..conv.entries.len())
                    .take_while(|&k| conv.entries[k].line < here)
                    .find(|&k| {
                        !conv.entries[k].has(flag::UNSEEN)
                            && !self.is_claim_entry(k as u32)
                            && parent[k] == NONE
                    });
                match next {
                    None => false,
                    Some(k) => {
                        let turn = self.turns[k];
                        if let Some(j) = self.opener(k)
                            && covers(j as u32)
                        {
                            return Err(refuse(format!(
                                "it covers the prompt that opened turn {turn} (line {}) but not the rest of that turn; a question is never summarized while its answer stays raw",
                                conv.entries[j].line
                            )));
                        }
                        true
                    }
                }
            };
        if !tail_turn && !in_turn {
            return Err(refuse(
                "it covers the most recent turn, which always stays verbatim",
            ));
        }
        if let Some(t) = cov.tail_line {
            let ok = t > last_leaf
                && t < here
                && conv
                    .entries
                    .binary_search_by_key(&t, |e| e.line)
                    .is_ok_and(|j| {
                        in_turn
                            || conv.entries[j].has(flag::TURN_START)
                            // A tail inside a turn whose prompt the claim leaves verbatim (a
                            // chunk of a long turn, or a cited fold with gaps inside one).
                            || self
                                .opener(j)
                                .filter(|&i| i < j)
                                .is_some_and(|i| !covers(i as u32))
                    });
            if !ok {
                return Err(refuse(format!(
                    "its recorded verbatim tail (line {t}) is not a turn after what it covers"
                )));
            }
        }
        Ok(())
    }
}

/// Whether entry `j` is one of `children` or hidden under one of them (`parent`: the standing
/// summary one level up of every entry, as the replay has it).
fn covers(children: &[u32], parent: &[u32], mut j: u32) -> bool {
    loop {
        if children.binary_search(&j).is_ok() {
            return true;
        }
        j = parent[j as usize];
        if j == NONE {
            return false;
        }
    }
}
