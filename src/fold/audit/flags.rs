//! What a summary must not do besides losing items: echo the instruction, imitate mf's framing
//! (forgeries), or address the reading model with instructions.

use super::*;

pub(super) fn five_grams(text: &str) -> Vec<String> {
    let words: Vec<String> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    words.windows(5).map(|w| w.join(" ")).collect()
}

/// The share of the summary's word 5-grams found in the instruction.
pub(super) fn echo_ratio(summary: &str, instruction: &str) -> (f64, usize) {
    let grams = five_grams(summary);
    if grams.is_empty() {
        return (0.0, 0);
    }
    let known: HashSet<String> = five_grams(instruction).into_iter().collect();
    let hits = grams.iter().filter(|g| known.contains(*g)).count();
    (hits as f64 / grams.len() as f64, grams.len())
}

pub(super) fn delimiter_token(line: &str, at: usize) -> String {
    let b = line.as_bytes();
    let mut s = at;
    while s > 0 && matches!(b[s - 1], b'<' | b'>') {
        s -= 1;
    }
    let mut e = at;
    while e < b.len() && matches!(b[e], b'<' | b'>') {
        e += 1;
    }
    let mut k = e;
    let mut n = 0;
    while k < b.len() && !matches!(b[k], b'<' | b'>' | b'\n') && n < 24 {
        k += 1;
        n += 1;
    }
    if k < b.len() && matches!(b[k], b'<' | b'>') {
        e = k;
        while e < b.len() && matches!(b[e], b'<' | b'>') {
            e += 1;
        }
    }
    let s = floor_char(line, s);
    let e = ceil_char(line, e);
    line[s..e].trim().to_string()
}

pub(super) fn forgeries_in(summary: &str) -> Vec<Forgery> {
    let mut out: Vec<Forgery> = Vec::new();
    for line in summary.lines() {
        let la = line.to_ascii_lowercase();
        // [turn 15 · user]
        for (p, _) in la.match_indices("[turn") {
            let rest = la[p + 5..].trim_start();
            if rest.chars().next().is_some_and(|c| c.is_ascii_digit()) {
                let end = line[p..]
                    .find(']')
                    .map_or_else(|| line.len().min(p + 40), |e| p + e + 1);
                let end = ceil_char(line, end.min(line.len()));
                out.push(Forgery {
                    kind: "turn-heading",
                    text: capped(&line[p..end], 60),
                });
            }
        }
        // <<<TRANSCRIPT>>>, <<<END TRANSCRIPT>>, <<END TRANSCRIPT>>
        let mut delim = None;
        if let Some(p) = la.find("<<<").or_else(|| la.find(">>>")) {
            delim = Some(p);
        } else if let Some(t) = la.find("transcript") {
            let near = |pat: &str| {
                la.match_indices(pat).any(|(q, _)| {
                    let (a, b) = if q < t { (q + 2, t) } else { (t + 10, q) };
                    b.saturating_sub(a) <= 6
                })
            };
            if near("<<") || near(">>") {
                delim = la.find("<<").or_else(|| la.find(">>"));
            }
        }
        if let Some(p) = delim {
            out.push(Forgery {
                kind: "delimiter",
                text: capped(&delimiter_token(line, p), 60),
            });
        }
        // Role markers
        let t = la.trim_start();
        for role in ["user:", "assistant:", "system:", "human:"] {
            if t.starts_with(role) {
                out.push(Forgery {
                    kind: "role-marker",
                    text: capped(line.trim(), 80),
                });
                break;
            }
        }
        for marker in [
            "<|im_start|>",
            "<|im_end|>",
            "<|system|>",
            "<|user|>",
            "<|assistant|>",
            "<|endoftext|>",
            "[inst]",
            "[/inst]",
            "<<sys>>",
        ] {
            if let Some(p) = la.find(marker) {
                out.push(Forgery {
                    kind: "role-marker",
                    text: line[p..p + marker.len()].to_string(),
                });
            }
        }
        if let Some(p) = la.find(LABEL) {
            let end = line[p..]
                .find(']')
                .map_or(line.len().min(p + 60), |e| p + e + 1);
            let end = ceil_char(line, end.min(line.len()));
            out.push(Forgery {
                kind: "label",
                text: capped(&line[p..end], 80),
            });
        }
    }
    out
}

pub(super) fn instructions_in(summary: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in summary.lines() {
        for r in instruction_ranges(line) {
            out.push(line[r].to_string());
        }
    }
    out
}

/// The summary's forgeries, unless the span itself carries the same text (the summary quotes it).
pub(super) fn forgeries_unquoted(pieces: &[Piece], summary: &str) -> Vec<Forgery> {
    let raw_forgeries = forgeries_in(summary);
    if raw_forgeries.is_empty() {
        raw_forgeries
    } else {
        raw_forgeries
            .into_iter()
            .filter(|f| {
                let needle = if f.kind == "label" {
                    LABEL
                } else {
                    f.text.as_str()
                };
                !pieces.iter().any(|p| {
                    p.text.contains(needle)
                        || (f.kind == "label" && p.text.to_lowercase().contains(LABEL))
                })
            })
            .collect()
    }
}

/// The phrases of the summary addressed to the reading model, each marked when the span says it.
pub(super) fn instruction_flags(pieces: &[Piece], summary: &str) -> Vec<InstructionFlag> {
    let phrases = instructions_in(summary);
    if phrases.is_empty() {
        Vec::new()
    } else {
        let needles: Vec<Vec<String>> = phrases.iter().map(|p| norm_tokens(p)).collect();
        let quoted = occur_in(&mut pieces.iter().map(|p| p.text.as_str()), &needles);
        phrases
            .into_iter()
            .zip(quoted)
            .map(|(text, quoted)| InstructionFlag { text, quoted })
            .collect()
    }
}

/// `s`, or its first `n - 1` characters and `…`.
pub(super) fn capped(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
    t.push('…');
    t
}
