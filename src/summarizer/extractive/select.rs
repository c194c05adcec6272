//! The selection: the chunks chosen within the budget, the greedy cover of items, and the
//! layout by section, turn and author.

use super::*;

/// A line heading: `T3 user:`, `(summary of turns 1–4):`, `T2 user (superseded):`.
pub(super) fn prefix(piece: &Piece, superseded: bool) -> String {
    let mark = if superseded { " (superseded)" } else { "" };
    if piece.role.is_none() {
        format!("({}){mark}:", piece.author)
    } else {
        format!("T{} {}{mark}:", piece.turn, piece.author)
    }
}

/// The chunks chosen so far and the exact length of their layout.
pub(super) struct Selection<'p> {
    pub(super) pieces: &'p [Piece],
    /// When citing: handles to cite at the end of each piece's lines, and its units.
    pub(super) cite: Option<CiteCtx<'p>>,
    /// When citing: what each unit's lines may take, and what they take so far.
    pub(super) unit_room: HashMap<u32, usize>,
    pub(super) unit_used: HashMap<u32, usize>,
    /// Pieces a line is also cited for (`represent`), by line.
    pub(super) extra: HashMap<(Section, usize), Vec<usize>>,
    pub(super) budget: usize,
    pub(super) chosen: Vec<usize>,
    pub(super) is_chosen: Vec<bool>,
    pub(super) sections: [bool; 6],
    /// Lines: (section, piece) → chunks on it.
    pub(super) lines: HashMap<(Section, usize), usize>,
    /// Σ (line length + 1): the layout's length plus one.
    pub(super) total: usize,
    /// Inventory ids the chosen chunks carry.
    pub(super) covered: Vec<bool>,
    /// Chunks never to choose.
    pub(super) banned: std::collections::HashSet<usize>,
}

#[derive(Debug, PartialEq)]
pub(super) struct Ranked {
    ratio: f64,
    order: usize,
}

impl Eq for Ranked {}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        self.ratio
            .total_cmp(&other.ratio)
            .then(other.order.cmp(&self.order))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<'p> Selection<'p> {
    pub(super) fn new(
        pieces: &'p [Piece],
        budget: usize,
        items: usize,
        cite: Option<CiteCtx<'p>>,
    ) -> Self {
        let mut unit_room: HashMap<u32, usize> = HashMap::new();
        if let Some(c) = cite {
            for (&u, &n) in c.units.iter().zip(c.chars) {
                *unit_room.entry(u).or_insert(0) += n * CITED_LINE_PCT / 100;
            }
        }
        Self {
            pieces,
            cite,
            unit_room,
            unit_used: HashMap::new(),
            extra: HashMap::new(),
            budget,
            chosen: Vec::new(),
            is_chosen: Vec::new(),
            sections: [false; 6],
            lines: HashMap::new(),
            total: 0,
            covered: vec![false; items],
            banned: std::collections::HashSet::new(),
        }
    }

    pub(super) fn cost(&self, c: &Chunk) -> usize {
        if self.lines.contains_key(&(c.section, c.line)) {
            return c.chars + 1;
        }
        let mut cost = 2
            + prefix(&self.pieces[c.line], c.superseded).chars().count()
            + 1
            + c.chars
            + 1
            + self.suffix(c.line).chars().count();
        if !self.sections[c.section as usize] {
            cost += c.section.heading().chars().count() + 1;
        }
        cost
    }

    /// What ends a line of a piece: its citation, when citing (the piece, then the pieces
    /// the line also stands for).
    pub(super) fn suffix(&self, piece: usize) -> String {
        self.suffix_of(None, piece)
    }

    pub(super) fn suffix_of(&self, section: Option<Section>, piece: usize) -> String {
        let Some(h) = self.cite.map(|c| c.handles) else {
            return String::new();
        };
        let mut s = format!(" [{}", h[piece]);
        if let Some(more) = section.and_then(|sec| self.extra.get(&(sec, piece))) {
            for &q in more {
                s.push_str(", ");
                s.push_str(&h[q]);
            }
        }
        s.push(']');
        s
    }

    /// When citing: a piece no line was copied from, whose every item the summary carries, is
    /// cited too — on the first line that carries one of its items (that line states what the
    /// piece said) — as long as the budget allows.
    pub(super) fn represent(&mut self, chunks: &[Chunk], needs: &[Need]) {
        let Some(ctx) = self.cite else { return };
        let h = ctx.handles;
        let mut cited = vec![false; self.pieces.len()];
        for &i in &self.chosen {
            cited[chunks[i].piece] = true;
        }
        let mut items: Vec<Vec<usize>> = vec![Vec::new(); self.pieces.len()];
        for c in chunks {
            items[c.piece].extend(c.ids.iter().copied().filter(|&id| needs[id].weight > 0.0));
        }
        // Lines in the order they are laid out, with the items they carry.
        let mut lines: Vec<((Section, usize), Vec<usize>)> = Vec::new();
        let mut order: Vec<usize> = self.chosen.clone();
        order.sort_by_key(|&i| (chunks[i].section, chunks[i].piece, chunks[i].order));
        for i in order {
            let key = (chunks[i].section, chunks[i].piece);
            match lines.last_mut() {
                Some((k, ids)) if *k == key => ids.extend(&chunks[i].ids),
                _ => lines.push((key, chunks[i].ids.clone())),
            }
        }
        for q in 0..self.pieces.len() {
            if cited[q] || items[q].is_empty() || !items[q].iter().all(|&id| self.covered[id]) {
                continue;
            }
            let Some((key, _)) = lines
                .iter()
                .find(|(_, ids)| ids.iter().any(|id| items[q].contains(id)))
            else {
                continue;
            };
            let cost = 2 + h[q].chars().count();
            let u = ctx.units[q];
            if self.total + cost > self.budget + 1
                || self.unit_used.get(&u).copied().unwrap_or(0) + cost > self.unit_room[&u]
            {
                continue;
            }
            self.total += cost;
            *self.unit_used.entry(u).or_insert(0) += cost;
            self.extra.entry(*key).or_default().push(q);
            cited[q] = true;
        }
    }

    pub(super) fn fits(&self, c: &Chunk) -> bool {
        self.total + self.cost(c) <= self.budget + 1
    }

    pub(super) fn add(&mut self, chunks: &[Chunk], i: usize) {
        let c = &chunks[i];
        let cost = self.cost(c);
        if let Some(ctx) = self.cite {
            *self.unit_used.entry(ctx.units[c.piece]).or_insert(0) += cost;
        }
        self.total += cost;
        self.sections[c.section as usize] = true;
        *self.lines.entry((c.section, c.line)).or_insert(0) += 1;
        if self.is_chosen.len() < chunks.len() {
            self.is_chosen.resize(chunks.len(), false);
        }
        self.is_chosen[i] = true;
        self.chosen.push(i);
        for &id in &c.ids {
            self.covered[id] = true;
        }
    }

    pub(super) fn chosen(&self, i: usize) -> bool {
        self.is_chosen.get(i).copied().unwrap_or(false)
    }

    pub(super) fn try_add(&mut self, chunks: &[Chunk], i: usize) -> bool {
        let c = &chunks[i];
        if self.chosen(i)
            || self.banned.contains(&i)
            || !self.fits(c)
            || c.requires.iter().any(|&id| !self.covered[id])
        {
            return false;
        }
        if let Some(ctx) = self.cite {
            let u = ctx.units[c.piece];
            if self.unit_used.get(&u).copied().unwrap_or(0) + self.cost(c) > self.unit_room[&u] {
                return false;
            }
        }
        self.add(chunks, i);
        true
    }

    /// Greedy cover of the items not yet covered (counted ones, or with `tool_only` those
    /// found only in tool results): the chunk with the most uncovered weight per character
    /// first, re-scored lazily as items get covered.
    pub(super) fn cover(&mut self, chunks: &[Chunk], needs: &[Need], tool_only: bool) {
        let gain = |c: &Chunk, covered: &[bool]| -> f64 {
            c.ids
                .iter()
                .filter(|&&id| !covered[id] && needs[id].tool_only == tool_only)
                .map(|&id| needs[id].weight)
                .sum()
        };
        let ratio = |c: &Chunk, g: f64| g / (c.chars as f64 + 12.0);
        let mut heap: BinaryHeap<Ranked> = chunks
            .iter()
            .filter(|c| !self.chosen(c.order))
            .filter_map(|c| {
                let g = gain(c, &self.covered);
                (g > 0.0).then(|| Ranked {
                    ratio: ratio(c, g),
                    order: c.order,
                })
            })
            .collect();
        while let Some(top) = heap.pop() {
            let c = &chunks[top.order];
            let g = gain(c, &self.covered);
            if g <= 0.0 {
                continue;
            }
            let r = ratio(c, g);
            if r < top.ratio - 1e-12 {
                heap.push(Ranked {
                    ratio: r,
                    order: top.order,
                });
                continue;
            }
            self.try_add(chunks, top.order);
        }
    }

    pub(super) fn render(&self, chunks: &[Chunk]) -> String {
        let mut by_line: Vec<(Section, usize, usize)> = self
            .chosen
            .iter()
            .map(|&i| (chunks[i].section, chunks[i].line, chunks[i].order))
            .collect();
        by_line.sort_unstable();
        let mut out = String::new();
        let mut current: Option<(Section, usize)> = None;
        for (section, piece, order) in by_line {
            if current != Some((section, piece))
                && let Some((s, p)) = current
            {
                out.push_str(&self.suffix_of(Some(s), p));
            }
            if current.map(|(s, _)| s) != Some(section) {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(section.heading());
            }
            if current != Some((section, piece)) {
                out.push_str("\n- ");
                out.push_str(&prefix(&self.pieces[piece], section == Section::Superseded));
                out.push(' ');
            } else {
                out.push(' ');
            }
            out.push_str(&chunks[order].text);
            current = Some((section, piece));
        }
        if let Some((s, p)) = current {
            out.push_str(&self.suffix_of(Some(s), p));
        }
        debug_assert_eq!(out.chars().count() + 1, self.total);
        out
    }
}

/// Nothing fit: the first user sentence that is not filler (or the first sentence), cut to the
/// budget.
pub(super) fn fallback(pieces: &[Piece], chunks: &[Chunk], budget: usize) -> String {
    let Some(c) = chunks
        .iter()
        .find(|c| c.source == Source::User && !c.superseded && !is_filler(&c.text))
        .or_else(|| chunks.iter().find(|c| !c.superseded && !c.text.is_empty()))
    else {
        return String::new();
    };
    let head = prefix(&pieces[c.piece], false);
    let room = budget.saturating_sub(head.chars().count() + 1);
    if room < 2 {
        return String::new();
    }
    let body: String = if c.chars <= room {
        c.text.clone()
    } else {
        let mut t = c.text[..floor_ws(&c.text, room - 1)].trim_end().to_string();
        t.push('…');
        t
    };
    format!("{head} {body}")
}
