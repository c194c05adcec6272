//! Tool calls of one shape as one pattern line (see `fold::audit::pattern`).

use super::*;

/// The fewest tool calls of one shape that are written as a pattern line.
pub(super) const MIN_PATTERN: usize = 3;

/// Tool calls of the same shape — the same text but for one number, like a hundred
/// `echo line N | tee out-N.txt` — also as one pattern line (`fold::audit::pattern`) that
/// carries every item of every call it stands for, at the cost of one. Appended to `chunks`;
/// the selection picks them like any other chunk (they carry the most items per character).
/// Returns the pattern chunk each call it stands for belongs to (by `order`).
pub(super) fn add_patterns(chunks: &mut Vec<Chunk>) -> HashMap<usize, usize> {
    let mut pattern_of: HashMap<usize, usize> = HashMap::new();
    use audit::pattern;
    // Candidate templates: for each number a call's text carries, the text with that number
    // (every digit run equal to it) made the hole.
    let mut groups: HashMap<(Section, String), Vec<(usize, String)>> = HashMap::new();
    for (i, c) in chunks.iter().enumerate() {
        if !c.call
            || c.superseded
            || !c.requires.is_empty()
            || c.text.contains(pattern::HOLE)
            || c.text.contains(pattern::VALUES)
        {
            continue;
        }
        let runs = digit_runs(&c.text);
        let mut values: Vec<&str> = runs.iter().map(|r| &c.text[r.clone()]).collect();
        values.sort_unstable();
        values.dedup();
        for v in values {
            let mut t = String::new();
            let mut last = 0;
            for r in runs.iter().filter(|r| &c.text[(*r).clone()] == v) {
                t.push_str(&c.text[last..r.start]);
                t.push_str(pattern::HOLE);
                last = r.end;
            }
            t.push_str(&c.text[last..]);
            groups
                .entry((c.section, t))
                .or_default()
                .push((i, v.to_string()));
        }
    }
    // Largest groups first; a call joins one pattern at most.
    type Group = ((Section, String), Vec<(usize, String)>);
    let mut order: Vec<Group> = groups
        .into_iter()
        .filter(|(_, m)| m.len() >= MIN_PATTERN)
        .collect();
    order.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    let mut taken = vec![false; chunks.len()];
    for ((section, template), members) in order {
        let mut members: Vec<(usize, String)> =
            members.into_iter().filter(|(i, _)| !taken[*i]).collect();
        members.sort_by(|a, b| (a.1.len(), a.1.as_str(), a.0).cmp(&(b.1.len(), b.1.as_str(), b.0)));
        members.dedup_by(|a, b| a.1 == b.1);
        if members.len() < MIN_PATTERN {
            continue;
        }
        let values: Vec<String> = members.iter().map(|(_, v)| v.clone()).collect();
        let mut text = pattern::line(template.trim_end_matches('.'), &values);
        text.push('.');
        let mut ids: Vec<usize> = Vec::new();
        for (i, _) in &members {
            taken[*i] = true;
            ids.extend(&chunks[*i].ids);
        }
        ids.sort_unstable();
        ids.dedup();
        let first = members
            .iter()
            .map(|(i, _)| *i)
            .min()
            .expect("a group has members");
        let (piece, line) = (chunks[first].piece, chunks[first].line);
        for (i, _) in &members {
            pattern_of.insert(*i, chunks.len());
        }
        chunks.push(Chunk {
            piece,
            line,
            call: true,
            order: chunks.len(),
            source: Source::ToolCall,
            chars: text.chars().count(),
            text,
            ids,
            requires: Vec::new(),
            section,
            superseded: false,
        });
    }
    pattern_of
}

/// The byte ranges of the maximal runs of ASCII digits in `text`.
pub(super) fn digit_runs(text: &str) -> Vec<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let s = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            out.push(s..i);
        } else {
            i += 1;
        }
    }
    out
}
