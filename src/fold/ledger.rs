//! `Ledger`: what a transcript means now. Pure: built from the conversation's entries, claims
//! and records only.
//!
//! The ledger replays the file in order. A line that claims to be an mf summary (or stub) is
//! honoured only if mf could have written it at that point of the file: mf's shape and label,
//! a fingerprint that matches its content, coverage of existing, visible, foldable entries
//! whose bytes still hash to the digest it carries, never the preamble, never a tool call
//! apart from its results, and never the verbatim tail (a whole turn must follow what it
//! covers). Anything else is an ordinary entry, flagged. A retraction un-applies a standing
//! summary. What stands at the end hides exactly the entries it covers — nothing else.

use std::collections::HashMap;

use crate::entry::{
    ClaimKind, Conversation, DeclineReason, DeclinedSpan, NONE, Record, RecordKind, Role, flag,
};

/// A valid mf summary or stub found in the file.
#[derive(Debug, Clone)]
pub struct Summary {
    /// Its entry.
    pub entry: u32,
    pub kind: ClaimKind,
    /// The entries it names, one level down, in file order.
    pub children: Vec<u32>,
    /// Line of the retraction record, if it was withdrawn.
    pub retracted_at: Option<u32>,
    /// The standing summary that covers this one (nesting), if any.
    pub covered_by: Option<u32>,
    /// Original (non-summary) messages behind it, all levels down.
    pub leaf_count: usize,
    /// The first and last turn of those originals.
    pub from_turn: u64,
    pub to_turn: u64,
    /// Index of its first original: where it stands in conversation order.
    pub first_leaf: u32,
    /// Line of its last original.
    pub last_leaf_line: u32,
}

impl Summary {
    pub fn standing(&self) -> bool {
        self.retracted_at.is_none()
    }

    /// `standing`, `nested` (inside a standing summary) or `retracted`.
    pub fn state(&self) -> &'static str {
        if self.retracted_at.is_some() {
            "retracted"
        } else if self.covered_by.is_some() {
            "nested"
        } else {
            "standing"
        }
    }
}

/// What kind of thing `explain` and `verify` point out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagKind {
    /// A summary whose covered lines changed since it was written: not honoured.
    Stale,
    /// A line with mf's coverage record that mf could not have written: not honoured.
    NotHonoured,
    /// Content that starts with mf's label but carries no coverage: an ordinary entry.
    LookAlike,
    /// A summary written by mf 0.1.0: bound to ids only, so edits to its lines go unnoticed.
    Unverifiable,
    /// A retraction that names no standing summary.
    BadRetraction,
    /// A record this mf does not know.
    UnknownRecord,
    /// A summary the agent's own later compaction took over: information, not a problem.
    Superseded,
    /// A summary on a branch the agent left (pi's `/tree` moved back past it): the agent does
    /// not send it and mf does not honour it; information, not a problem.
    OffBranch,
    /// A summary in a write mf did not finish (the write itself is reported).
    Unfinished,
}

impl FlagKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FlagKind::Stale => "stale",
            FlagKind::NotHonoured => "not-honoured",
            FlagKind::LookAlike => "look-alike",
            FlagKind::Unverifiable => "unverifiable",
            FlagKind::BadRetraction => "bad-retraction",
            FlagKind::UnknownRecord => "unknown-record",
            FlagKind::Superseded => "superseded",
            FlagKind::OffBranch => "off-branch",
            FlagKind::Unfinished => "unfinished",
        }
    }

    /// Whether `verify` counts it as a problem.
    pub fn is_problem(self) -> bool {
        !matches!(
            self,
            FlagKind::Unverifiable
                | FlagKind::LookAlike
                | FlagKind::Superseded
                | FlagKind::OffBranch
                | FlagKind::Unfinished
        )
    }
}

/// Something `explain` and `verify` should point out.
#[derive(Debug, Clone, PartialEq)]
pub struct Flag {
    pub line: u32,
    /// The entry, when the flag is about one.
    pub entry: Option<u32>,
    pub kind: FlagKind,
    pub why: String,
}

/// What a view item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    /// A standing top-level summary.
    Summary,
    /// A standing stub, in place of the tool result it hides.
    Stub,
    /// An entry nothing hides.
    Message,
}

/// One item of the recall view: an entry index.
pub type Item = u32;

#[derive(Debug)]
pub struct Ledger<'a> {
    pub conv: Conversation<'a>,
    /// Turn of every entry (0 = the preamble, before the first user message). For a summary, the
    /// last turn it covers.
    pub turns: Vec<u32>,
    /// For a tool result: the entry of the call it answers (`NONE` otherwise).
    pub call_of: Vec<u32>,
    /// For a tool call: the last entry that answers one of its calls (`NONE` if unanswered).
    pub last_result: Vec<u32>,
    /// Valid summaries and stubs, keyed by entry.
    pub summaries: HashMap<u32, Summary>,
    /// For every entry: the top-level standing summary or stub that hides it, or `NONE`.
    pub hidden_by: Vec<u32>,
    /// The recall view in conversation order (summaries at the place of their first original,
    /// stubs in place of what they hide).
    pub view: Vec<Item>,
    pub flags: Vec<Flag>,
    /// Binding declines: span digest → (reason, model, record line).
    pub declines: Vec<(String, DeclineReason, String, u32, u64)>,
    /// Binding declines by the anchor lines they span: (first, last, reason, model), in file
    /// order of the records.
    declined_lines: Vec<(u32, u32, DeclineReason, String)>,
    /// The key of each binding decline (parallel to `declines`) and of each entry of
    /// `declined_lines`.
    decline_keys: Vec<Option<String>>,
    declined_line_keys: Vec<Option<String>>,
    /// What this run's verdicts would be keyed by (`RecordKind::Decline::key`): a lossy or
    /// rejected decline binds only under the same key. `None` (explain): any key binds.
    pub decline_key: Option<String>,
    /// `--retry`: no decline binds; every span is asked again.
    pub retry: bool,
}

mod check;
mod honour;

/// Why a claim is not honoured, and whether it is only stale, or history the agent's own
/// compaction took over.
struct Refusal {
    stale: bool,
    superseded: bool,
    /// On a branch the agent no longer follows: history, not a problem.
    off_branch: bool,
    why: String,
}

fn refuse(why: impl Into<String>) -> Refusal {
    Refusal {
        stale: false,
        superseded: false,
        off_branch: false,
        why: why.into(),
    }
}

impl<'a> Ledger<'a> {
    pub fn new(conv: Conversation<'a>) -> Self {
        let n = conv.entries.len();
        let mut l = Ledger {
            conv,
            turns: vec![0; n],
            call_of: vec![NONE; n],
            last_result: vec![NONE; n],
            summaries: HashMap::new(),
            hidden_by: vec![NONE; n],
            view: Vec::new(),
            flags: Vec::new(),
            declines: Vec::new(),
            declined_lines: Vec::new(),
            decline_keys: Vec::new(),
            declined_line_keys: Vec::new(),
            decline_key: None,
            retry: false,
        };
        l.number_turns();
        l.pair_tools();
        l.replay();
        l.build_view();
        l
    }

    pub fn entries_len(&self) -> usize {
        self.conv.entries.len()
    }

    /// Whether entry `i` is a real user message, seen by the agent or not. A line with mf's shape
    /// and coverage is not one; a user message that merely looks like mf's (its text starts with
    /// mf's label) is.
    fn real_user_message(&self, i: usize) -> bool {
        self.conv.entries[i].has(flag::TURN_START)
            && self
                .conv
                .claim(i)
                .is_none_or(|c| c.shape_ok.is_err() || c.coverage.is_err())
    }

    /// Whether entry `i` starts a turn: a real user message that the agent sees.
    pub fn starts_turn(&self, i: usize) -> bool {
        !self.conv.entries[i].has(flag::UNSEEN) && self.real_user_message(i)
    }

    /// The seam rule, for the planner and for the re-vet of a claim on read alike: a fold may
    /// begin at entry `i`, or end just before it, only when `i` starts a turn, or starts a tool
    /// unit inside one — it is no tool result, and every tool call before it in its turn has all
    /// its results before it. A tool unit is never split; a streamed response is one entry.
    pub fn seam_before(&self, i: usize) -> bool {
        // A turn led by commands nothing answered (`flag::LEADS_TURN`) opens at its first
        // leading entry: nothing between it and the turn's prompt is a seam.
        let led = |j: usize| self.conv.entries[j].has(flag::LEADS_TURN);
        if led(i) || (i > 0 && led(i - 1) && self.turns[i - 1] == self.turns[i]) {
            return self.turns[i] != 0 && (i == 0 || self.turns[i - 1] != self.turns[i]);
        }
        if self.starts_turn(i) {
            return true;
        }
        let turn = self.turns[i];
        if turn == 0 || self.call_of[i] != NONE || !self.conv.answers(i).is_empty() {
            return false;
        }
        let mut j = i;
        while j > 0 {
            j -= 1;
            if self.turns[j] != turn {
                break;
            }
            let last = self.last_result[j];
            if last != NONE && last as usize >= i {
                return false;
            }
        }
        true
    }

    /// Turns: a turn starts at each real user message that the agent sees, or saw before its own
    /// compaction (history still counts, so turn numbers stay those the user knows).
    /// Entries that lead a turn (`flag::LEADS_TURN`) open the turn whose prompt follows them.
    fn number_turns(&mut self) {
        let mut turn = 0u32;
        let mut led = false;
        for i in 0..self.conv.entries.len() {
            let e = &self.conv.entries[i];
            let counted = !e.has(flag::UNSEEN) || e.has(flag::HISTORY);
            if counted && e.has(flag::LEADS_TURN) && !self.real_user_message(i) {
                if !led {
                    turn += 1;
                    led = true;
                }
            } else if counted && self.real_user_message(i) {
                if !led {
                    turn += 1;
                }
                led = false;
            }
            self.turns[i] = turn;
        }
    }

    /// Pair each tool result with the nearest preceding open call of its id, in its turn if it
    /// has one there, else in any earlier turn. Reused call ids pair one to one, in order.
    fn pair_tools(&mut self) {
        // Open calls as stacks per call id, kept as linked nodes: (entry, node below, open).
        let mut top: HashMap<u64, u32> = HashMap::new();
        let mut nodes: Vec<(u32, u32, bool)> = Vec::new();
        for i in 0..self.conv.entries.len() {
            let e = &self.conv.entries[i];
            if e.has(flag::UNSEEN) || e.link == NONE {
                continue;
            }
            let turn = self.turns[i];
            for &id in self.conv.answers(i) {
                let Some(&t) = top.get(&id) else { continue };
                // The nearest open call of this id in this turn, else the nearest open one.
                let (mut k, mut any) = (t, NONE);
                let mut found = NONE;
                while k != NONE {
                    let (c, below, open) = nodes[k as usize];
                    if open {
                        if self.turns[c as usize] == turn {
                            found = k;
                            break;
                        }
                        if any == NONE {
                            any = k;
                        }
                    }
                    k = below;
                }
                let pick = if found != NONE { found } else { any };
                if pick != NONE {
                    nodes[pick as usize].2 = false;
                    let c = nodes[pick as usize].0;
                    self.call_of[i] = c;
                    self.last_result[c as usize] = i as u32;
                }
                // Drop answered calls from the top, so reused ids stay cheap.
                let mut t = top[&id];
                while t != NONE && !nodes[t as usize].2 {
                    t = nodes[t as usize].1;
                }
                if t == NONE {
                    top.remove(&id);
                } else {
                    top.insert(id, t);
                }
            }
            for &id in self.conv.calls(i) {
                let below = top.get(&id).copied().unwrap_or(NONE);
                nodes.push((i as u32, below, true));
                top.insert(id, (nodes.len() - 1) as u32);
            }
        }
    }

    /// Whether entry `i` is an mf line (honoured or not), not an entry of the conversation itself.
    pub fn is_claim_entry(&self, i: u32) -> bool {
        self.conv.entries[i as usize].claim != NONE
    }

    /// Replay claims and retractions in file order.
    fn replay(&mut self) {
        let conv = self.conv;
        // Direct parent of every entry (the standing summary that covers it, one level up).
        let mut parent = vec![NONE; conv.entries.len()];
        let mut records = conv.records.iter().peekable();
        let mut by_id: HashMap<&str, Vec<u32>> = HashMap::new();
        for i in 0..conv.entries.len() as u32 {
            let line = conv.entries[i as usize].line;
            while let Some(r) = records.next_if(|r| r.line < line) {
                self.record(r, &mut parent, &by_id);
            }
            let Some(claim) = conv.claim(i as usize) else {
                continue;
            };
            match self.check(i, &parent) {
                Ok(children) => {
                    for &c in &children {
                        parent[c as usize] = i;
                        if let Some(inner) = self.summaries.get_mut(&c) {
                            inner.covered_by = Some(i);
                        }
                    }
                    let s = self.summary_of(i, claim.kind, children);
                    self.summaries.insert(i, s);
                    by_id.entry(claim.id.as_str()).or_default().push(i);
                    if let Ok(c) = &claim.coverage
                        && c.version == 1
                    {
                        self.flags.push(Flag {
                            line,
                            entry: Some(i),
                            kind: FlagKind::Unverifiable,
                            why: "written by mf 0.1.0: its coverage names ids only, so an edit to a covered line cannot be detected; it is honoured because every id it names occurs exactly once".into(),
                        });
                    }
                }
                Err(r) => {
                    let kind = if claim.coverage.is_err()
                        && claim.label.starts_with(crate::entry::LABEL_PREFIX)
                        && matches!(&claim.coverage, Err(w) if w.contains("no coverage record"))
                    {
                        FlagKind::LookAlike
                    } else if claim
                        .shape_ok
                        .as_ref()
                        .is_err_and(|w| w.starts_with(crate::entry::UNFINISHED_WRITE))
                    {
                        FlagKind::Unfinished
                    } else if r.superseded {
                        FlagKind::Superseded
                    } else if r.off_branch {
                        FlagKind::OffBranch
                    } else if r.stale {
                        FlagKind::Stale
                    } else {
                        FlagKind::NotHonoured
                    };
                    self.flags.push(Flag {
                        line,
                        entry: Some(i),
                        kind,
                        why: r.why,
                    });
                }
            }
        }
        for r in records {
            self.record(r, &mut parent, &by_id);
        }
        // What the top-level standing summaries hide.
        for i in 0..conv.entries.len() {
            let mut top = NONE;
            let mut j = i as u32;
            while parent[j as usize] != NONE {
                j = parent[j as usize];
                top = j;
            }
            self.hidden_by[i] = top;
        }
    }

    fn record(&mut self, r: &Record, parent: &mut [u32], by_id: &HashMap<&str, Vec<u32>>) {
        match &r.kind {
            RecordKind::Retract {
                summary_id,
                fingerprint,
            } => {
                let target = by_id.get(summary_id.as_str()).and_then(|v| {
                    v.iter().rev().copied().find(|&s| {
                        self.summaries[&s].standing()
                            && self
                                .conv
                                .claim(s as usize)
                                .and_then(|c| c.coverage.as_ref().ok())
                                .is_some_and(|c| &c.fingerprint == fingerprint)
                    })
                });
                let Some(s) = target else {
                    if self.withdrawn_off_path(r.line, summary_id, fingerprint) {
                        return; // it withdrew a summary now on a branch the agent left
                    }
                    self.flags.push(Flag {
                        line: r.line,
                        entry: None,
                        kind: FlagKind::BadRetraction,
                        why: format!("a retraction of `{summary_id}`, which is not a standing summary with that fingerprint here; ignored"),
                    });
                    return;
                };
                if let Some(outer) = self.summaries[&s].covered_by
                    && self.summaries[&outer].standing()
                {
                    self.flags.push(Flag {
                        line: r.line,
                        entry: Some(s),
                        kind: FlagKind::BadRetraction,
                        why: format!("a retraction of `{summary_id}`, which lies inside a standing summary; ignored"),
                    });
                    return;
                }
                let children = self.summaries[&s].children.clone();
                for c in children {
                    parent[c as usize] = NONE;
                    if let Some(inner) = self.summaries.get_mut(&c) {
                        inner.covered_by = None;
                    }
                }
                if let Some(sm) = self.summaries.get_mut(&s) {
                    sm.retracted_at = Some(r.line);
                }
            }
            RecordKind::Decline {
                reason,
                model,
                span,
                key,
                ..
            } if reason.binding() => {
                let digest = match span {
                    DeclinedSpan::Ref(sr) => {
                        self.declined_lines.push((
                            sr.from_line,
                            sr.to_line,
                            *reason,
                            model.clone(),
                        ));
                        self.declined_line_keys.push(key.clone());
                        Some(sr.digest.clone())
                    }
                    DeclinedSpan::Ids { ids, .. } => self.resolve_ids(ids).ok().map(|v| {
                        let lines = v.iter().map(|&j| self.conv.entries[j as usize].line);
                        if let (Some(a), Some(b)) = (lines.clone().min(), lines.max()) {
                            self.declined_lines.push((a, b, *reason, model.clone()));
                            self.declined_line_keys.push(key.clone());
                        }
                        crate::digest::digest_of(
                            v.iter().map(|&j| self.conv.entries[j as usize].hash),
                        )
                    }),
                };
                if let Some(d) = digest {
                    self.declines
                        .push((d, *reason, model.clone(), r.line, r.at_ms));
                    self.decline_keys.push(key.clone());
                }
            }
            RecordKind::Unknown { kind } => self.flags.push(Flag {
                line: r.line,
                entry: None,
                kind: FlagKind::UnknownRecord,
                why: format!("an mf line of kind `{kind}` that this mf does not know; ignored"),
            }),
            _ => {}
        }
    }

    /// mf 0.1.0 coverage: every id must be an explicit id that occurs exactly once in the file.
    fn resolve_ids(&self, ids: &[String]) -> Result<Vec<u32>, String> {
        let mut count: HashMap<u64, (u32, u32)> = HashMap::with_capacity(ids.len());
        for id in ids {
            count.insert(crate::digest::id_hash(id), (0, NONE));
        }
        for (i, e) in self.conv.entries.iter().enumerate() {
            if let Some(c) = count.get_mut(&e.id) {
                c.0 += 1;
                c.1 = i as u32;
            }
        }
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            if id.starts_with("line-") || id.contains("@line-") {
                return Err(format!(
                    "written by mf 0.1.0 over line-number ids (`{id}`), which shift when a line is removed; it cannot be checked against the file"
                ));
            }
            match count[&crate::digest::id_hash(id)] {
                (0, _) => {
                    return Err(format!(
                        "its coverage names `{id}`, which is not in the file"
                    ));
                }
                (1, i) => out.push(i),
                (n, _) => {
                    return Err(format!(
                        "its coverage names `{id}`, which {n} entries of the file carry; it cannot tell which"
                    ));
                }
            }
        }
        let mut seen = std::collections::HashSet::new();
        for &i in &out {
            if !seen.insert(i) {
                return Err("its coverage names one entry twice".into());
            }
        }
        out.sort_unstable();
        Ok(out)
    }

    /// Whether a retraction after claim `s` names it (its id and fingerprint).
    fn withdrawn_later(&self, s: u32, id: &str, fingerprint: &str) -> bool {
        let here = self.conv.entries[s as usize].line;
        self.conv.records.iter().any(|r| {
            r.line > here
                && matches!(&r.kind, RecordKind::Retract { summary_id, fingerprint: f }
                    if summary_id == id && f == fingerprint)
        })
    }

    /// Whether the summary a retraction names (id and fingerprint), written before the
    /// retraction's line, is on a branch the agent no longer follows: the retraction withdrew
    /// it before that branch was left. (Scans the claims: only on a retraction that names no
    /// standing summary.)
    fn withdrawn_off_path(&self, line: u32, id: &str, fingerprint: &str) -> bool {
        (0..self.conv.entries.len()).any(|s| {
            let e = &self.conv.entries[s];
            e.line < line
                && e.has(flag::UNSEEN)
                && self.conv.claim(s).is_some_and(|c| {
                    c.id == id
                        && c.coverage
                            .as_ref()
                            .is_ok_and(|c| c.fingerprint == fingerprint)
                })
        })
    }

    /// The entries a v2 coverage names: every entry whose anchor line lies in its ranges.
    fn resolve_lines(&self, ranges: &[[u32; 2]], before: u32) -> Result<Vec<u32>, String> {
        let entries = self.conv.entries;
        let mut out = Vec::new();
        let mut prev_end = 0u32;
        for (k, &[a, b]) in ranges.iter().enumerate() {
            if a > b || (k > 0 && a <= prev_end) {
                return Err("its coverage ranges are not in order".into());
            }
            if b >= before {
                return Err(format!(
                    "its coverage reaches line {b}, which is not before the summary itself (line {before})"
                ));
            }
            prev_end = b;
            let start = entries.partition_point(|e| e.line < a);
            let end = entries.partition_point(|e| e.line <= b);
            if start == end {
                return Err(format!("its coverage range {a}–{b} holds no entry"));
            }
            out.extend((start..end).map(|i| i as u32));
        }
        Ok(out)
    }

    /// Turns and original-message count behind a set of children. A summary or a stub counts
    /// with the turns of what it stands for (a stub is appended at the end of the file, in a
    /// later turn than the result it hides; `build_view` gives it that result's turn only after
    /// the replay).
    fn span_of(&self, children: &[u32]) -> (u64, u64, usize) {
        let (mut from, mut to, mut leaves) = (u64::MAX, 0u64, 0usize);
        for &c in children {
            match self.summaries.get(&c) {
                Some(inner) => {
                    from = from.min(inner.from_turn);
                    to = to.max(inner.to_turn);
                    leaves += inner.leaf_count;
                }
                None => {
                    let t = u64::from(self.turns[c as usize]);
                    from = from.min(t);
                    to = to.max(t);
                    leaves += 1;
                }
            }
        }
        (from, to, leaves)
    }

    fn summary_of(&self, i: u32, kind: ClaimKind, children: Vec<u32>) -> Summary {
        let (from, to, leaves) = self.span_of(&children);
        let mut first_leaf = u32::MAX;
        let mut last_leaf_line = 0;
        for &c in &children {
            match self.summaries.get(&c) {
                Some(inner) => {
                    if first_leaf == u32::MAX
                        || self.order_key(inner.first_leaf) < self.order_key(first_leaf)
                    {
                        first_leaf = inner.first_leaf;
                    }
                    last_leaf_line = last_leaf_line.max(inner.last_leaf_line);
                }
                None => {
                    if first_leaf == u32::MAX || self.order_key(c) < self.order_key(first_leaf) {
                        first_leaf = c;
                    }
                    last_leaf_line = last_leaf_line.max(self.conv.entries[c as usize].line);
                }
            }
        }
        Summary {
            entry: i,
            kind,
            children,
            retracted_at: None,
            covered_by: None,
            leaf_count: leaves,
            from_turn: from,
            to_turn: to,
            first_leaf,
            last_leaf_line,
        }
    }

    /// The recall view in conversation order.
    fn build_view(&mut self) {
        let conv = self.conv;
        for (i, t) in self.turns.iter_mut().enumerate() {
            if let Some(s) = self.summaries.get(&(i as u32)) {
                *t = s.to_turn as u32;
            }
        }
        let placed: std::collections::HashSet<u32> =
            conv.placements.iter().map(|&(e, _)| e).collect();
        let mut view = Vec::new();
        let mut k = 0;
        for i in 0..conv.entries.len() as u32 {
            while k < conv.placements.len() && conv.placements[k].1 == i {
                self.place(conv.placements[k].0, &mut view);
                k += 1;
            }
            if !placed.contains(&i) {
                self.place(i, &mut view);
            }
        }
        while k < conv.placements.len() {
            self.place(conv.placements[k].0, &mut view);
            k += 1;
        }
        self.view = view;
    }

    /// Put entry `i` where it stands in the view: itself if nothing hides it (a valid summary
    /// stands where its first original was, a withdrawn one nowhere), or the summary that hides
    /// it if it is that summary's first original.
    fn place(&self, i: u32, view: &mut Vec<Item>) {
        let e = &self.conv.entries[i as usize];
        if e.has(flag::UNSEEN) {
            return;
        }
        let h = self.hidden_by[i as usize];
        if h == NONE {
            if !self.summaries.contains_key(&i) {
                view.push(i);
            }
        } else if self.summaries[&h].first_leaf == i {
            view.push(h);
        }
    }

    /// Where an item stands in conversation order, as an index into the view-ordered entries.
    fn order_key(&self, i: u32) -> (u32, u8) {
        match self.conv.placements.iter().find(|&&(e, _)| e == i) {
            Some(&(_, before)) => (before, 0),
            None => (i, 1),
        }
    }

    /// What a view item is.
    pub fn kind(&self, item: Item) -> ItemKind {
        match self.summaries.get(&item) {
            Some(s) if s.standing() && s.kind == ClaimKind::Stub => ItemKind::Stub,
            Some(s) if s.standing() => ItemKind::Summary,
            _ => ItemKind::Message,
        }
    }

    /// Turn range of a view item.
    pub fn item_turns(&self, item: Item) -> (u64, u64) {
        match self.summaries.get(&item) {
            Some(s) if s.kind == ClaimKind::Summary => (s.from_turn, s.to_turn),
            _ => {
                let t = u64::from(self.turns[item as usize]);
                (t, t)
            }
        }
    }

    /// Characters a model would read for this item.
    pub fn item_chars(&self, item: Item) -> usize {
        self.conv.entries[item as usize].chars as usize
    }

    /// Original messages behind an item.
    pub fn item_leaves(&self, item: Item) -> usize {
        match self.summaries.get(&item) {
            Some(s) if s.kind == ClaimKind::Summary => s.leaf_count,
            _ => 1,
        }
    }

    /// Items in recall order: standing summaries first, ordered by the turns they cover, then
    /// every other item in conversation order.
    pub fn recall_order(&self, items: &[Item]) -> Vec<Item> {
        let first = |it: Item| {
            self.kind(it) == ItemKind::Summary
                || self.conv.entries[it as usize].has(flag::NATIVE_SUMMARY)
        };
        let mut summaries: Vec<Item> = items.iter().copied().filter(|&it| first(it)).collect();
        summaries.sort_by_key(|&it| (self.item_turns(it), self.conv.entries[it as usize].line));
        summaries.extend(items.iter().copied().filter(|&it| !first(it)));
        summaries
    }

    /// Characters of the whole recall view.
    pub fn view_chars(&self) -> usize {
        self.view.iter().map(|&it| self.item_chars(it)).sum()
    }

    /// Items a new fold could consume: every view item but summaries.
    pub fn uncovered_count(&self) -> usize {
        self.view
            .iter()
            .filter(|&&it| self.kind(it) != ItemKind::Summary)
            .count()
    }

    /// Whether an item belongs to the preamble (before the first user message), never folded.
    pub fn is_preamble(&self, item: Item) -> bool {
        self.kind(item) == ItemKind::Message && self.turns[item as usize] == 0
    }

    /// Whether an item may never be folded: the preamble, and entries the format pins.
    pub fn is_fixed(&self, item: Item) -> bool {
        self.is_preamble(item) || self.conv.entries[item as usize].has(flag::PINNED)
    }

    /// Where an item stands in conversation order: a summary at its first original.
    pub fn position(&self, item: Item) -> (u32, u8) {
        match self.summaries.get(&item) {
            Some(s) => self.order_key(s.first_leaf),
            None => self.order_key(item),
        }
    }

    /// The originals a summary stands for, all levels down, in conversation order.
    pub fn originals_under(&self, summary: Item) -> Vec<Item> {
        let mut out = Vec::new();
        let mut stack = vec![summary];
        while let Some(s) = stack.pop() {
            for c in self.children_in_order(s).into_iter().rev() {
                if self.summaries.contains_key(&c) {
                    stack.push(c);
                } else {
                    out.push(c);
                }
            }
        }
        out.sort_by_key(|&i| self.position(i));
        out
    }

    /// A summary's children in conversation order (a nested summary where its originals were).
    pub fn children_in_order(&self, summary: Item) -> Vec<Item> {
        let mut c = self.summaries[&summary].children.clone();
        c.sort_by_key(|&j| (self.position(j), u8::from(!self.summaries.contains_key(&j))));
        c
    }

    /// Valid summaries and stubs in file order.
    pub fn summaries_in_order(&self) -> Vec<&Summary> {
        let mut v: Vec<&Summary> = self.summaries.values().collect();
        v.sort_by_key(|s| s.entry);
        v
    }

    /// A binding decline already recorded for a span with this digest (for "lossy", only for the
    /// same model): its line and time.
    pub fn declined_before(&self, digest: &str, model: &str) -> Option<(u32, u64, DeclineReason)> {
        if self.retry {
            return None;
        }
        self.declines
            .iter()
            .zip(&self.decline_keys)
            .rev()
            .find(|((d, reason, m, _, _), key)| d == digest && self.binds(*reason, m, key, model))
            .map(|((_, r, _, line, at), _)| (*line, *at, *r))
    }

    /// Every decline recorded for a span with this digest, newest first, whichever model it
    /// binds: its reason, model and record line (what `explain` without a model tells).
    pub fn declines_of<'s>(
        &'s self,
        digest: &'s str,
    ) -> impl Iterator<Item = (DeclineReason, &'s str, u32)> + 's {
        self.declines
            .iter()
            .rev()
            .filter(move |(d, ..)| d == digest)
            .map(|(_, r, m, line, _)| (*r, m.as_str(), *line))
    }

    /// Whether a binding decline by `m` under `key` binds a run with `model` (and this ledger's
    /// `decline_key`): "not smaller" binds every run; "lossy" and "rejected" only the same model
    /// under the same key — another instruction, strategy or threshold asks again.
    fn binds(&self, reason: DeclineReason, m: &str, key: &Option<String>, model: &str) -> bool {
        reason == DeclineReason::NotSmaller
            || (m == model
                && self
                    .decline_key
                    .as_ref()
                    .is_none_or(|k| key.as_deref() == Some(k.as_str())))
    }

    /// Whether a view item is new material for a fold with `model`: a message (not a summary or
    /// a stub mf wrote) that no binding decline binding `model` has already spanned. A fold with
    /// nothing new would only re-ask what was answered or refused before.
    pub fn is_fresh(&self, item: Item, model: &str) -> bool {
        if self.kind(item) != ItemKind::Message {
            return false;
        }
        let line = self.conv.entries[item as usize].line;
        self.retry
            || !self
                .declined_lines
                .iter()
                .zip(&self.declined_line_keys)
                .any(|((a, b, reason, m), key)| {
                    (*a..=*b).contains(&line) && self.binds(*reason, m, key, model)
                })
    }

    /// What the agent is to be shown after writing summaries over `folds` (each a span's items,
    /// the draft index of its summary), stubs over `stubs` (item, draft index), and retracting
    /// `retract`: summaries first (by the turns they cover), then every other item in
    /// conversation order.
    pub fn next_view(
        &self,
        folds: &[(Vec<Item>, usize)],
        stubs: &[(Item, usize)],
        retract: Option<Item>,
    ) -> Vec<crate::entry::Shown> {
        use crate::entry::Shown;
        let mut gone: std::collections::HashMap<Item, Option<usize>> = Default::default();
        for (items, d) in folds {
            let first = items
                .iter()
                .copied()
                .min_by_key(|&it| self.position(it))
                .expect("a span has items");
            for &it in items {
                gone.insert(it, None);
            }
            gone.insert(first, Some(*d));
        }
        let mut summaries: Vec<((u64, u64), Shown)> = Vec::new();
        let mut rest: Vec<Shown> = Vec::new();
        let push = |it: Item, summaries: &mut Vec<((u64, u64), Shown)>, rest: &mut Vec<Shown>| {
            if self.kind(it) == ItemKind::Summary {
                summaries.push((self.item_turns(it), Shown::Existing(it)));
            } else {
                rest.push(Shown::Existing(it));
            }
        };
        for &it in &self.view {
            if Some(it) == retract {
                for c in self.children_in_order(it) {
                    push(c, &mut summaries, &mut rest);
                }
                continue;
            }
            match gone.get(&it) {
                Some(Some(d)) => {
                    let (items, _) = folds.iter().find(|(_, x)| x == d).expect("its fold");
                    let (mut a, mut b) = (u64::MAX, 0);
                    for &i in items {
                        let (x, y) = self.item_turns(i);
                        a = a.min(x);
                        b = b.max(y);
                    }
                    summaries.push(((a, b), Shown::New(*d)));
                }
                Some(None) => {}
                None => match stubs.iter().find(|(s, _)| *s == it) {
                    Some(&(_, d)) => rest.push(Shown::New(d)),
                    None => push(it, &mut summaries, &mut rest),
                },
            }
        }
        summaries.sort_by_key(|(t, _)| *t);
        // A withdrawn summary's originals go back where they stand in conversation order: a fold
        // inside a turn covered the entries after its prompt, so they interleave with what it
        // left verbatim.
        if retract.is_some() {
            let at = |s: &Shown| match *s {
                Shown::Existing(it) => self.position(it),
                Shown::New(d) => stubs
                    .iter()
                    .find(|&&(_, x)| x == d)
                    .map_or((u32::MAX, 1), |&(it, _)| self.position(it)),
            };
            rest.sort_by_key(at);
        }
        summaries.into_iter().map(|(_, s)| s).chain(rest).collect()
    }

    /// Whether an entry is a user message the agent's user typed (for `--protect user`).
    pub fn is_user_message(&self, item: Item) -> bool {
        let e = &self.conv.entries[item as usize];
        // A command the user typed that leads a turn (`/clear`) is theirs too.
        self.kind(item) == ItemKind::Message
            && e.role == Role::User
            && (e.has(flag::TURN_START) || e.has(flag::LEADS_TURN))
    }

    /// Coverage digest of entries (in file order).
    pub fn digest(&self, items: &[Item]) -> String {
        let sorted = sorted(items);
        crate::digest::digest_of(sorted.iter().map(|&i| self.conv.entries[i as usize].hash))
    }

    /// Anchor-line ranges naming exactly these entries: consecutive entries (in file order)
    /// share a range.
    pub fn line_ranges(&self, items: &[Item]) -> Vec<[u32; 2]> {
        let sorted = sorted(items);
        let mut out: Vec<[u32; 2]> = Vec::new();
        let mut prev: Option<u32> = None;
        for &i in sorted.iter() {
            let line = self.conv.entries[i as usize].line;
            match (prev, out.last_mut()) {
                (Some(p), Some(last)) if p + 1 == i => last[1] = line,
                _ => out.push([line, line]),
            }
            prev = Some(i);
        }
        out
    }
}

/// Items in file order, without copying when they already are (the common case).
fn sorted(items: &[Item]) -> std::borrow::Cow<'_, [Item]> {
    if items.windows(2).all(|w| w[0] < w[1]) {
        std::borrow::Cow::Borrowed(items)
    } else {
        let mut v = items.to_vec();
        v.sort_unstable();
        std::borrow::Cow::Owned(v)
    }
}
