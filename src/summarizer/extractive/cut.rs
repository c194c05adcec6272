//! Cutting a unit into copyable chunks: whole sentences, clauses of long ones, windows around
//! their items, tool calls as `name(value, …)`; copied text defused.

use super::*;

/// The chunks of a unit: (text, items). A sentence up to `MAX_CHUNK` characters is one chunk;
/// a longer one is cut at clause boundaries, and a clause still too long is cut into windows
/// around its items. A tool call becomes `name(value, …)` with the values that carry items.
///
/// A call that names its target shows the target (see [`call_values`]) and carries the items
/// it shows; its other values that carry items follow as chunks of their own (`workdir: …`),
/// not calls. Returns (text, items, whether it is a call).
pub(super) fn cut<'u>(
    pieces: &[Piece],
    u: &'u Unit,
    shown: &mut std::collections::HashSet<String>,
) -> Vec<(String, Vec<&'u audit::Item>, bool)> {
    if let Some(call) = &u.call {
        let targeted = call_values(pieces, u, shown);
        let values = targeted.as_ref().map_or(&call.values, |(t, _)| t);
        let shows = |text: &str, it: &audit::Item| text.contains(collapse(&it.text).as_str());
        let extras: Vec<(String, Vec<&audit::Item>, bool)> = targeted
            .as_ref()
            .map(|(_, e)| e.as_slice())
            .unwrap_or_default()
            .iter()
            .flat_map(|(k, v)| {
                // A long value: windows around its items, as a long target's.
                let parts: Vec<String> = if v.chars().count() <= MAX_VALUE {
                    vec![v.clone()]
                } else {
                    let ranges: Vec<std::ops::Range<usize>> =
                        audit::extract(v).into_iter().map(|i| i.at).collect();
                    windows(v, &ranges).into_iter().map(|(t, _)| t).collect()
                };
                parts
                    .into_iter()
                    .map(move |p| if k.is_empty() { p } else { format!("{k}: {p}") })
            })
            .map(|e| {
                let mine = u.items.iter().filter(|it| shows(&e, it)).collect();
                (e, mine, false)
            })
            .collect();
        let mut parts: Vec<String> = Vec::new();
        for v in values {
            let v = collapse(v);
            if v.chars().count() <= MAX_VALUE {
                parts.push(v);
            } else {
                let items = audit::extract(&v);
                let ranges: Vec<std::ops::Range<usize>> =
                    items.iter().map(|i| i.at.clone()).collect();
                parts.extend(windows(&v, &ranges).into_iter().map(|(t, _)| t));
            }
        }
        let whole = format!("{}({})", call.name, parts.join(", "));
        let items: Vec<&audit::Item> = u
            .items
            .iter()
            .filter(|it| targeted.is_none() || shows(&whole, it))
            .collect();
        if whole.chars().count() <= MAX_CHUNK * 2 || parts.len() < 2 {
            let mut out = vec![(whole, items, true)];
            out.extend(extras);
            return out;
        }
        // One chunk per value, each with the items it shows.
        let mut out: Vec<(String, Vec<&audit::Item>, bool)> = parts
            .into_iter()
            .map(|p| {
                let mine: Vec<&audit::Item> = u.items.iter().filter(|it| shows(&p, it)).collect();
                (format!("{}({p})", call.name), mine, true)
            })
            .collect();
        out.extend(extras);
        return out;
    }
    let text = &pieces[u.piece].text[u.range.clone()];
    let base = u.range.start;
    let rel: Vec<std::ops::Range<usize>> = u
        .items
        .iter()
        .map(|it| it.at.start.saturating_sub(base)..it.at.end.saturating_sub(base))
        .collect();
    let body = strip_bullet(text);
    let offset = text.len() - body.len();
    if body.chars().count() <= MAX_CHUNK {
        return vec![(collapse(body), u.items.iter().collect(), false)];
    }
    let rel: Vec<std::ops::Range<usize>> = rel
        .into_iter()
        .map(|r| r.start.saturating_sub(offset)..r.end.saturating_sub(offset))
        .collect();
    let mut out = Vec::new();
    for (t, range) in clauses(body, &rel) {
        let mine: Vec<&audit::Item> = u
            .items
            .iter()
            .zip(&rel)
            .filter(|(_, r)| r.start >= range.start && r.start < range.end)
            .map(|(it, _)| it)
            .collect();
        out.push((t, mine, false));
    }
    out
}

pub(super) fn strip_bullet(text: &str) -> &str {
    let t = text.trim_start();
    for b in ["- ", "* ", "• ", "+ ", "> "] {
        if let Some(r) = t.strip_prefix(b) {
            return r.trim_start();
        }
    }
    t
}

pub(super) fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Cut a long sentence into chunks of at most `MAX_CHUNK` characters at clause boundaries
/// (never inside an item); a clause still too long is cut into windows around its items.
/// Returns (display text, byte range in `text`).
pub(super) fn clauses(
    text: &str,
    items: &[std::ops::Range<usize>],
) -> Vec<(String, std::ops::Range<usize>)> {
    let inside = |p: usize| items.iter().any(|r| r.start < p && p < r.end);
    let mut bounds = vec![0];
    for sep in [", ", "; ", " — ", " – ", " | ", " - ", ": "] {
        for (i, _) in text.match_indices(sep) {
            let p = i + sep.len();
            if !inside(i) && !inside(p) {
                bounds.push(p);
            }
        }
    }
    bounds.push(text.len());
    bounds.sort_unstable();
    bounds.dedup();
    let mut segs: Vec<std::ops::Range<usize>> = bounds.windows(2).map(|w| w[0]..w[1]).collect();
    // Merge neighbours up to the limit.
    let mut merged: Vec<std::ops::Range<usize>> = Vec::new();
    for s in segs.drain(..) {
        if let Some(last) = merged.last_mut()
            && text[last.start..s.end].chars().count() <= MAX_CHUNK
        {
            last.end = s.end;
            continue;
        }
        merged.push(s);
    }
    let mut out = Vec::new();
    for seg in merged {
        let seg_text = &text[seg.clone()];
        if seg_text.chars().count() <= MAX_CHUNK {
            let t = seg_text.trim_end_matches([',', ';', ':', ' ', '|', '-', '—', '–']);
            out.push((
                mark(text, seg.start, seg.start + t.len(), t),
                seg.start..seg.start + t.len(),
            ));
            continue;
        }
        let local: Vec<std::ops::Range<usize>> = items
            .iter()
            .filter(|r| r.start >= seg.start && r.start < seg.end)
            .map(|r| r.start - seg.start..r.end.min(seg.end) - seg.start)
            .collect();
        if local.is_empty() {
            // No items: keep its opening only (a request or a decision may be there).
            let end = floor_ws(seg_text, MAX_CHUNK - 1);
            let t = &seg_text[..end];
            out.push((
                mark(text, seg.start, seg.start + end, t),
                seg.start..seg.start + end,
            ));
            continue;
        }
        for (t, r) in windows(seg_text, &local) {
            let abs = seg.start + r.start..seg.start + r.end;
            out.push((mark_edges(text, abs.clone(), &t), abs));
        }
    }
    out
}

/// Windows of `text` around `items` (byte ranges), merged when they overlap, cut at
/// whitespace. Returns (text without edge marks, range).
pub(super) fn windows(
    text: &str,
    items: &[std::ops::Range<usize>],
) -> Vec<(String, std::ops::Range<usize>)> {
    let mut spans: Vec<std::ops::Range<usize>> = Vec::new();
    let mut sorted = items.to_vec();
    sorted.sort_by_key(|r| r.start);
    for r in sorted {
        let start = ceil_ws(text, r.start.saturating_sub(WINDOW), r.start);
        let end = floor_ws_from(text, (r.end + WINDOW).min(text.len()), r.end);
        match spans.last_mut() {
            Some(last)
                if start <= last.end + 8 && text[last.start..end].chars().count() <= MAX_CHUNK =>
            {
                last.end = last.end.max(end)
            }
            _ => spans.push(start..end),
        }
    }
    spans
        .into_iter()
        .map(|r| (text[r.clone()].trim().to_string(), r))
        .collect()
}

/// The first whitespace at or after `from` (but not after `limit`), as a char boundary.
pub(super) fn ceil_ws(text: &str, from: usize, limit: usize) -> usize {
    let i = crate::text::ceil(text, from).min(limit);
    if i == 0 {
        return 0;
    }
    // After the whitespace, which may be wider than a byte (U+2029, U+3000).
    match text[i..limit]
        .char_indices()
        .find(|(_, c)| c.is_whitespace())
    {
        Some((p, c)) => i + p + c.len_utf8(),
        None => limit,
    }
}

/// The last whitespace at or before `to` (but not before `limit`).
pub(super) fn floor_ws_from(text: &str, to: usize, limit: usize) -> usize {
    let i = crate::text::floor(text, to).max(limit);
    if i >= text.len() {
        return text.len();
    }
    match text[limit..i].rfind(char::is_whitespace) {
        Some(p) => limit + p,
        None => i,
    }
}

/// A byte offset at most `chars` characters into `text`, moved back to a whitespace.
pub(super) fn floor_ws(text: &str, chars: usize) -> usize {
    let end = text
        .char_indices()
        .nth(chars)
        .map_or(text.len(), |(i, _)| i);
    if end >= text.len() {
        return text.len();
    }
    text[..end]
        .rfind(char::is_whitespace)
        .filter(|&p| p > 0)
        .unwrap_or(end)
}

pub(super) fn mark(text: &str, start: usize, end: usize, t: &str) -> String {
    mark_edges(text, start..end, t)
}

/// Collapse whitespace and mark cut edges with `…`.
pub(super) fn mark_edges(text: &str, r: std::ops::Range<usize>, t: &str) -> String {
    let mut s = collapse(t);
    if r.start > 0 {
        s.insert(0, '…');
    }
    if r.end < text.trim_end().len() {
        s.push('…');
    }
    s
}

/// Make sure a copied sentence cannot pass for mf's framing: delimiter runs (`<<<`), chat
/// template markers (`<|im_start|>`), turn headings (`[turn 3 · user]`) and mf's label.
pub(super) fn defuse(s: &str) -> String {
    if !s.contains(['<', '>', '[']) {
        return s.to_string();
    }
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '<' || c == '>' {
            let mut j = i;
            while j < chars.len() && chars[j] == c {
                j += 1;
            }
            let run = j - i;
            let pipe = (c == '<' && chars.get(j) == Some(&'|'))
                || (c == '>' && i > 0 && chars[i - 1] == '|');
            let sub = if run >= 2 || pipe {
                if c == '<' { '‹' } else { '›' }
            } else {
                c
            };
            out.extend(std::iter::repeat_n(sub, run));
            i = j;
            continue;
        }
        out.push(c);
        i += 1;
    }
    let mut out = replace_ci(
        &out,
        "[summary of earlier turns",
        "(summary of earlier turns",
    );
    out = replace_ci(&out, "[inst]", "(inst)");
    out = replace_ci(&out, "[/inst]", "(/inst)");
    // [turn 3 · user] → (turn 3 · user)
    let lower = out.to_ascii_lowercase();
    let mut fixed = String::with_capacity(out.len());
    let mut last = 0;
    for (p, _) in lower.match_indices("[turn") {
        let rest = lower[p + 5..].trim_start();
        if rest.chars().next().is_some_and(|c| c.is_ascii_digit()) {
            fixed.push_str(&out[last..p]);
            fixed.push('(');
            last = p + 1;
            if let Some(close) = out[p..].find(']') {
                fixed.push_str(&out[last..p + close]);
                fixed.push(')');
                last = p + close + 1;
            }
        }
    }
    fixed.push_str(&out[last..]);
    fixed
}

pub(super) fn replace_ci(s: &str, from: &str, to: &str) -> String {
    let lower = s.to_ascii_lowercase();
    let mut out = String::with_capacity(s.len());
    let mut last = 0;
    for (p, _) in lower.match_indices(from) {
        out.push_str(&s[last..p]);
        out.push_str(to);
        last = p + from.len();
    }
    out.push_str(&s[last..]);
    out
}
