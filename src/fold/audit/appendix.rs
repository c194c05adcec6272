//! The section mf adds after a model's summary: the salient items it left out, verbatim, each
//! with its turn and kind, within a bounded share of the summary's length.

use super::*;

/// The heading of the section mf adds after a model's summary: the salient items it left out.
pub const APPENDIX_HEADING: &str = "Kept verbatim by mf (the summary above left these out):";

/// The least share of `min_retention` a model's own words must keep (0.1 at the default 0.5):
/// under it the summary is generic text, whatever mf's section adds.
pub const MIN_OWN_SHARE: f64 = 0.2;

/// The share of the summary's length the added section may take at most (or, when the summary is
/// shorter than the length asked for, up to that length).
pub const APPENDIX_SHARE: f64 = 1.0;

/// The section mf adds after a model's summary (see [`APPENDIX_HEADING`]): the salient items of
/// the span that `summary` leaves out, most salient first, each verbatim on a line with its turn
/// and kind — `- T4 user: "deploy only after 16:00 UTC"`, `- T12 edited src/billing/charge.rs`,
/// ``- T7 ran `cargo test` → error[E0502]: …``, `- T9 url https://…` — within `budget`
/// characters. Returns the section (empty when nothing is missing or nothing fits) and how many
/// of the missing items it carries. Deterministic: the same span and summary give the same
/// section.
pub fn appendix(
    pieces: &[Piece],
    summary: &str,
    opts: &AuditOptions,
    budget: usize,
) -> (String, usize) {
    // Counted as the audit counts: the model's reasoning is not what was said.
    let said = crate::fold::prompt::without_reasoning(pieces);
    let pieces: &[Piece] = &said;
    let span = Counted::new(pieces);
    let units = &span.units;
    let said = Said::new(summary);
    let mut missing: Vec<(&Found, u32)> = span
        .found
        .iter()
        .filter_map(|f| {
            if span.superseded(f) {
                return None;
            }
            let w = span.weight(f, opts)?;
            (!said.has(&f.item)).then_some((f, w))
        })
        .collect();
    missing.sort_by(|(a, wa), (b, wb)| {
        wb.cmp(wa)
            .then(b.importance().cmp(&a.importance()))
            .then(a.order.cmp(&b.order))
    });
    let mut lines: Vec<String> = Vec::new();
    let mut used = APPENDIX_HEADING.chars().count() + 1;
    let mut units_done: HashSet<usize> = HashSet::new();
    // Targets of the same action in the same turn share a line: `- T12 read a.rs, b.rs`.
    let mut groups: HashMap<(u64, &'static str), usize> = HashMap::new();
    for (f, _) in &missing {
        if units_done.contains(&f.unit) {
            continue;
        }
        let u = &units[f.unit];
        let piece = &pieces[u.piece];
        let mut group = None;
        let line = match (u.source, &u.call) {
            (Source::User, _) => {
                let text = &piece.text[u.range.clone()];
                format!(
                    "- T{} user: \"{}\"",
                    f.turn,
                    clip_around(text, &f.item, 200)
                )
            }
            (Source::ToolCall, Some(call)) => {
                let verb = action_of(&call.name);
                let what = match f.item.class {
                    ItemClass::Command => format!("`{}`", capped(&f.item.text, 160)),
                    _ => capped(&f.item.text, 160),
                };
                let outcome = if verb == Some("ran") && f.item.class == ItemClass::Command {
                    outcome_after(pieces, u.piece)
                } else {
                    None
                };
                match (verb, outcome) {
                    (Some(v), Some(o)) => format!("- T{} {v} {what} → {o}", f.turn),
                    (Some(v), None) => {
                        if let Some(&k) = groups.get(&(f.turn, v)) {
                            let add = defuse_line(&format!(", {what}"));
                            let cost = add.chars().count();
                            if used + cost <= budget {
                                used += cost;
                                lines[k].push_str(&add);
                            }
                            continue;
                        }
                        group = Some((f.turn, v));
                        format!("- T{} {v} {what}", f.turn)
                    }
                    (None, _) => format!(
                        "- T{} called {} with {what}",
                        f.turn,
                        capped(&call.name, 40)
                    ),
                }
            }
            _ => format!(
                "- T{} {} {}",
                f.turn,
                f.item.class.as_str(),
                capped(&f.item.text, 160)
            ),
        };
        let line = defuse_line(&line);
        let cost = line.chars().count() + 1;
        if used + cost > budget {
            continue;
        }
        used += cost;
        if u.source == Source::User {
            units_done.insert(f.unit);
        }
        if let Some(g) = group {
            groups.insert(g, lines.len());
        }
        lines.push(line);
    }
    if lines.is_empty() {
        return (String::new(), 0);
    }
    // Every item the added lines carry, not only the one each line was written for.
    let added = Said::new(&lines.join("\n"));
    let n = missing.iter().filter(|(f, _)| added.has(&f.item)).count();
    let mut out = String::from(APPENDIX_HEADING);
    for l in &lines {
        out.push('\n');
        out.push_str(l);
    }
    (out, n)
}

/// A line of the appendix cannot pass for mf's label or a delimiter.
pub(super) fn defuse_line(l: &str) -> String {
    let l = defuse(l);
    if l.to_lowercase().contains(LABEL) {
        l.replace('[', "(").replace(']', ")")
    } else {
        l
    }
}

/// `text` (one sentence) cut to at most about `max` characters around `item`, at char
/// boundaries; a cut is marked `…`.
pub(super) fn clip_around(text: &str, item: &Item, max: usize) -> String {
    let text = text.trim();
    if text.chars().count() <= max {
        return text.replace('\n', " ");
    }
    let at = text.find(item.text.as_str()).unwrap_or(0);
    let before: Vec<(usize, char)> = text[..at].char_indices().collect();
    let keep_before = max / 3;
    let start = if before.len() > keep_before {
        before[before.len() - keep_before].0
    } else {
        0
    };
    let body: String = text[start..].chars().take(max.saturating_sub(2)).collect();
    let mut s = String::new();
    if start > 0 {
        s.push('…');
    }
    s.push_str(body.trim());
    if start + body.len() < text.len() {
        s.push('…');
    }
    s.replace('\n', " ")
}

/// What the command of piece `call_piece` came to: the first line of its results that states
/// an error or an exit status, if any.
pub(super) fn outcome_after(pieces: &[Piece], call_piece: usize) -> Option<String> {
    for p in pieces.iter().skip(call_piece + 1) {
        if p.role != Some(Role::Tool) {
            break;
        }
        for line in p.text.lines() {
            let l = line.to_ascii_lowercase();
            if [
                "error",
                "exit code",
                "exited with",
                "failed",
                "panicked",
                "fatal",
            ]
            .iter()
            .any(|w| l.contains(w))
            {
                return Some(capped(line.trim(), 120));
            }
        }
    }
    None
}
