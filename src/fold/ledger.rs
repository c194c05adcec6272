//! `Ledger`: what a transcript currently means — which summaries stand, what they hide, the turns,
//! and the recall view in conversation order. Pure: built from entries and records only.

use std::collections::{HashMap, HashSet};

use crate::entry::{Coverage, DeclineReason, Entry, Record, RecordKind, Role};
use crate::fingerprint::content_fingerprint;

/// The start of mf's label; a line whose content starts with it claims to be a summary.
pub const LABEL_PREFIX: &str = "[summary of earlier turns";

/// A valid mf summary found in the file.
#[derive(Debug, Clone)]
pub struct Summary {
    /// Index into the entries.
    pub entry: usize,
    pub coverage: Coverage,
    /// Line of the retraction record, if the summary was withdrawn.
    pub retracted_at: Option<usize>,
    /// The entries it names, one level down, in order (its `coveredIds` resolved).
    pub children: Vec<usize>,
    /// Index of a standing summary that covers this one (nesting), if any.
    pub covered_by: Option<usize>,
    /// Original (non-summary) messages behind it, all levels down.
    pub leaf_count: usize,
    /// The first and last turn of those originals.
    pub from_turn: u64,
    pub to_turn: u64,
    /// Smallest line number among the originals: where the summary sits in conversation order.
    pub first_line: usize,
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

/// Something `explain` should point out.
#[derive(Debug, Clone, PartialEq)]
pub struct Flag {
    pub entry: usize,
    pub why: String,
}

/// One item of the recall view: a standing top-level summary or an entry no summary hides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item {
    Summary(usize),
    Message(usize),
}

#[derive(Debug)]
pub struct Ledger<'a> {
    pub entries: &'a [Entry],
    pub records: &'a [Record],
    /// Turn of every entry (0 = preamble before the first user message). For valid summaries,
    /// the turn their coverage ends at.
    pub turns: Vec<u64>,
    /// Valid summaries keyed by entry index.
    pub summaries: HashMap<usize, Summary>,
    /// Entries hidden from recall, mapped to the top-level standing summary that hides them.
    pub hidden_by: HashMap<usize, usize>,
    /// The recall view in conversation order (summaries at the place of their first original);
    /// `recall_order` gives the order recall prints.
    pub view: Vec<Item>,
    pub flags: Vec<Flag>,
    index: HashMap<&'a str, usize>,
}

impl<'a> Ledger<'a> {
    pub fn new(entries: &'a [Entry], records: &'a [Record]) -> Self {
        let index: HashMap<&str, usize> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.id.as_str(), i))
            .collect();

        // 1. Which summary claims hold.
        let mut flags = Vec::new();
        let mut valid: HashMap<usize, Coverage> = HashMap::new();
        for (i, e) in entries.iter().enumerate() {
            let Some(claim) = &e.summary else { continue };
            match check_claim(i, claim, &index) {
                Ok(cov) => {
                    valid.insert(i, cov);
                }
                Err(why) => flags.push(Flag { entry: i, why }),
            }
        }
        // A covered id may only name a valid summary or an ordinary entry; a summary naming an
        // invalid summary is still valid (that line is an ordinary entry it stands for).

        // 2. Turns, over every entry that is not a valid summary.
        let mut turns = vec![0u64; entries.len()];
        let mut turn = 0u64;
        for (i, e) in entries.iter().enumerate() {
            if valid.contains_key(&i) {
                continue;
            }
            if e.role == Role::User {
                turn += 1;
            }
            turns[i] = turn;
        }

        // 3. Retractions.
        let mut retracted: HashMap<usize, usize> = HashMap::new();
        for r in records {
            if let RecordKind::Retract { summary_id, .. } = &r.kind
                && let Some(&i) = index.get(summary_id.as_str())
                && valid.contains_key(&i)
                && r.line > entries[i].line
            {
                retracted.entry(i).or_insert(r.line);
            }
        }

        // 4. Leaves, turn ranges and positions of every valid summary (covered ids are earlier
        //    lines, so a walk in file order sees nested summaries first).
        let mut summaries: HashMap<usize, Summary> = HashMap::new();
        let mut order: Vec<usize> = valid.keys().copied().collect();
        order.sort_unstable();
        for &i in &order {
            let cov = valid.remove(&i).expect("a valid summary");
            let children: Vec<usize> = cov
                .covered_ids
                .iter()
                .map(|id| index[id.as_str()])
                .collect();
            let (mut leaves, mut from, mut to, mut first) = (0usize, u64::MAX, 0u64, usize::MAX);
            for &j in &children {
                if let Some(inner) = summaries.get(&j) {
                    leaves += inner.leaf_count;
                    from = from.min(inner.from_turn);
                    to = to.max(inner.to_turn);
                    first = first.min(inner.first_line);
                } else {
                    leaves += 1;
                    from = from.min(turns[j]);
                    to = to.max(turns[j]);
                    first = first.min(entries[j].line);
                }
            }
            turns[i] = to;
            summaries.insert(
                i,
                Summary {
                    entry: i,
                    coverage: cov,
                    children,
                    retracted_at: retracted.get(&i).copied(),
                    covered_by: None,
                    leaf_count: leaves,
                    from_turn: from,
                    to_turn: to,
                    first_line: first,
                },
            );
        }

        // 5. Nesting among standing summaries: the latest standing summary that names another wins.
        for &i in &order {
            if !summaries[&i].standing() {
                continue;
            }
            for j in summaries[&i].children.clone() {
                if let Some(inner) = summaries.get_mut(&j) {
                    inner.covered_by = Some(i);
                }
            }
        }

        // 6. What the top-level standing summaries hide, all levels down.
        let mut hidden_by: HashMap<usize, usize> = HashMap::new();
        for &i in &order {
            let s = &summaries[&i];
            if !s.standing() || s.covered_by.is_some() {
                continue;
            }
            let mut stack = s.children.clone();
            while let Some(j) = stack.pop() {
                if hidden_by.insert(j, i).is_some() {
                    continue;
                }
                if let Some(inner) = summaries.get(&j) {
                    stack.extend_from_slice(&inner.children);
                }
            }
        }

        // 7. The recall view: top-level standing summaries at the place of their first original,
        //    then every entry nothing hides, in file order.
        let mut keyed: Vec<(usize, u8, Item)> = Vec::new();
        for (i, e) in entries.iter().enumerate() {
            if hidden_by.contains_key(&i) {
                continue;
            }
            match summaries.get(&i) {
                Some(s) if s.standing() && s.covered_by.is_none() => {
                    keyed.push((s.first_line, 0, Item::Summary(i)));
                }
                Some(_) => {} // withdrawn or nested: not part of the view
                None => keyed.push((e.line, 1, Item::Message(i))),
            }
        }
        keyed.sort_by_key(|&(line, rank, _)| (line, rank));
        let view = keyed.into_iter().map(|(_, _, item)| item).collect();

        Self {
            entries,
            records,
            turns,
            summaries,
            hidden_by,
            view,
            flags,
            index,
        }
    }

    pub fn find(&self, id: &str) -> Option<usize> {
        self.index.get(id).copied()
    }

    pub fn entry(&self, i: usize) -> &'a Entry {
        &self.entries[i]
    }

    /// Turn range of a view item.
    pub fn item_turns(&self, item: Item) -> (u64, u64) {
        match item {
            Item::Summary(i) => {
                let s = &self.summaries[&i];
                (s.from_turn, s.to_turn)
            }
            Item::Message(i) => (self.turns[i], self.turns[i]),
        }
    }

    pub fn item_entry(&self, item: Item) -> &'a Entry {
        match item {
            Item::Summary(i) | Item::Message(i) => &self.entries[i],
        }
    }

    /// Characters a model would read for this item.
    pub fn item_chars(&self, item: Item) -> usize {
        self.item_entry(item).chars()
    }

    /// Items in recall order (law 6): standing summaries first, ordered by the turns they cover,
    /// then every other item in file order. `view` itself stays in conversation order, which is
    /// what planning works on.
    pub fn recall_order(&self, items: &[Item]) -> Vec<Item> {
        let mut summaries: Vec<Item> = items
            .iter()
            .copied()
            .filter(|it| matches!(it, Item::Summary(_)))
            .collect();
        summaries.sort_by_key(|&it| (self.item_turns(it), self.item_entry(it).line));
        let mut messages: Vec<Item> = items
            .iter()
            .copied()
            .filter(|it| matches!(it, Item::Message(_)))
            .collect();
        messages.sort_by_key(|&it| self.item_entry(it).line);
        summaries.extend(messages);
        summaries
    }

    /// Characters of the whole recall view.
    pub fn view_chars(&self) -> usize {
        self.view.iter().map(|&it| self.item_chars(it)).sum()
    }

    /// Entries that are ordinary messages and that no standing summary hides (the preamble included).
    pub fn uncovered_count(&self) -> usize {
        self.view
            .iter()
            .filter(|it| matches!(it, Item::Message(_)))
            .count()
    }

    /// Whether an item belongs to the preamble (before the first user message), which is never folded.
    pub fn is_preamble(&self, item: Item) -> bool {
        matches!(item, Item::Message(i) if self.turns[i] == 0)
    }

    /// Valid summaries in file order.
    pub fn summaries_in_order(&self) -> Vec<&Summary> {
        let mut v: Vec<&Summary> = self.summaries.values().collect();
        v.sort_by_key(|s| s.entry);
        v
    }

    /// The ids a summary names, one level down, in order.
    pub fn children(&self, summary: usize) -> &[usize] {
        &self.summaries[&summary].children
    }

    /// Whether a "not smaller" verdict was already recorded for exactly these ids.
    pub fn declined_before(&self, ids: &[String]) -> Option<&'a Record> {
        self.records.iter().rev().find(|r| {
            matches!(&r.kind, RecordKind::Decline { reason: DeclineReason::NotSmaller, span_ids, .. } if span_ids == ids)
        })
    }
}

fn check_claim(
    i: usize,
    claim: &crate::entry::SummaryClaim,
    index: &HashMap<&str, usize>,
) -> Result<Coverage, String> {
    let cov = match &claim.coverage {
        Ok(c) => c,
        Err(why) => return Err(format!("looks like an mf summary but is not one: {why}")),
    };
    let Some(content) = &claim.content else {
        return Err("it has a coverage record but its content is not a string".into());
    };
    if content_fingerprint(content) != cov.fingerprint {
        return Err(format!(
            "its content does not match its fingerprint {} (edited after it was written); treated as an ordinary entry",
            cov.fingerprint
        ));
    }
    if cov.covered_ids.is_empty() {
        return Err("its coverage names no ids".into());
    }
    if cov.entry_count != cov.covered_ids.len() as u64 {
        return Err(format!(
            "its coverage says {} entries but names {} ids",
            cov.entry_count,
            cov.covered_ids.len()
        ));
    }
    let mut seen = HashSet::new();
    for id in &cov.covered_ids {
        if !seen.insert(id.as_str()) {
            return Err(format!("its coverage names `{id}` twice"));
        }
        match index.get(id.as_str()) {
            None => {
                return Err(format!(
                    "its coverage names `{id}`, which is not in the file"
                ));
            }
            Some(&j) if j >= i => {
                return Err(format!(
                    "its coverage names `{id}`, which is not earlier in the file"
                ));
            }
            Some(_) => {}
        }
    }
    if cov.from_turn > cov.to_turn {
        return Err(format!(
            "its coverage runs backwards (turns {}–{})",
            cov.from_turn, cov.to_turn
        ));
    }
    Ok(cov.clone())
}
