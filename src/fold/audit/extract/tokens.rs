//! Tokens: words with their core (quotes, brackets and trailing punctuation off), and where
//! sentences end.

use super::*;

#[derive(Debug, Clone, Copy)]
pub(in crate::fold::audit) struct Tok<'a> {
    /// The token less surrounding quotes, brackets and trailing punctuation.
    pub(in crate::fold::audit) core: &'a str,
    pub(in crate::fold::audit) start: usize,
    pub(in crate::fold::audit) end: usize,
    pub(in crate::fold::audit) raw_start: usize,
    /// The raw (whitespace-separated) token.
    pub(in crate::fold::audit) raw: &'a str,
    /// Starts a sentence: first on its line, or after `.`, `!`, `?`, `:` or a bullet.
    pub(in crate::fold::audit) sentence_start: bool,
    /// Starts a sentence after a hard stop (line start, `.`, `!`, `?`): where units split.
    pub(in crate::fold::audit) hard_start: bool,
    pub(in crate::fold::audit) line_start: bool,
    /// Punctuation was trimmed after the core (a name run stops there).
    pub(in crate::fold::audit) trailed: bool,
}

pub(in crate::fold::audit) const LEAD_TRIM: &[char] = &[
    '"', '\'', '(', '[', '{', '<', '`', '*', '“', '‘', '«', '¿', '¡', '…',
];
pub(in crate::fold::audit) const TRAIL_TRIM: &[char] = &[
    '"', '\'', ')', ']', '}', '>', '`', '*', ',', ';', ':', '.', '!', '?', '”', '’', '»', '…',
];
pub(in crate::fold::audit) const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "vs", "mr", "mrs", "ms", "dr", "st", "no", "approx", "inc", "ltd", "jr", "sr",
    "cf", "fig", "al", "ca",
];

pub(in crate::fold::audit) fn trim_core(raw: &str) -> (usize, &str, bool) {
    let mut s = raw.trim_start_matches(LEAD_TRIM);
    let lead = raw.len() - s.len();
    let before = s.len();
    while let Some(c) = s.chars().last() {
        if !TRAIL_TRIM.contains(&c) {
            break;
        }
        if c == ')' && s.matches('(').count() >= s.matches(')').count() {
            break;
        }
        if c == ']' && s.matches('[').count() >= s.matches(']').count() {
            break;
        }
        s = &s[..s.len() - c.len_utf8()];
    }
    for poss in ["'s", "’s"] {
        if s.len() > poss.len() + 1 && s.ends_with(poss) {
            s = &s[..s.len() - poss.len()];
        }
    }
    (lead, s, s.len() < before)
}

pub(in crate::fold::audit) fn is_list_number(raw: &str) -> bool {
    let r = raw.trim_end_matches(['.', ')']);
    r.len() < raw.len() && !r.is_empty() && r.len() <= 3 && r.bytes().all(|b| b.is_ascii_digit())
}

pub(in crate::fold::audit) fn is_bullet(raw: &str) -> bool {
    matches!(raw, "-" | "*" | "•" | "+" | ">" | "–" | "—" | "·")
        || (raw.starts_with('#') && raw.bytes().all(|b| b == b'#'))
        || is_list_number(raw)
}

/// Whether a token ends a sentence: `(soft, hard)`. `after_number`: the token before it is a
/// number, so a short lower-case word with a period is a unit ending the sentence (`60 s.`,
/// `310 ms.`), not an initial or a title.
pub(in crate::fold::audit) fn ends_sentence(
    raw: &str,
    core: &str,
    after_number: bool,
) -> (bool, bool) {
    let r = raw.trim_end_matches(['"', '\'', ')', ']', '”', '’', '*', '`']);
    let Some(last) = r.chars().last() else {
        return (false, false);
    };
    if last == ':' {
        return (true, false);
    }
    if !matches!(last, '.' | '!' | '?') {
        return (false, false);
    }
    if last == '.' {
        let lower = core.to_ascii_lowercase();
        let unit = after_number
            && core.chars().count() <= 3
            && core.chars().all(|c| c.is_ascii_lowercase());
        if unit {
            return (true, true);
        }
        if ABBREVIATIONS.contains(&lower.as_str())
            || (core.chars().count() == 1 && core.chars().all(char::is_alphabetic))
        {
            return (false, false);
        }
    }
    (true, true)
}

/// A number as a word: digits, with separators and a sign or currency sign (`60`, `1,840`,
/// `4.2`, `$300`).
pub(in crate::fold::audit) fn is_number_word(core: &str) -> bool {
    let digits = core.trim_start_matches(['$', '€', '£', '-', '+', '~']);
    !digits.is_empty()
        && digits.starts_with(|c: char| c.is_ascii_digit())
        && digits
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, ',' | '.'))
}

pub(in crate::fold::audit) fn tokenize(text: &str) -> Vec<Tok<'_>> {
    let mut out = Vec::new();
    let (mut soft, mut hard, mut line_start) = (true, true, true);
    let mut after_number = false;
    let mut chars = text.char_indices().peekable();
    while let Some(&(i, c)) = chars.peek() {
        if c.is_whitespace() {
            if c == '\n' {
                soft = true;
                hard = true;
                line_start = true;
            }
            chars.next();
            continue;
        }
        let start = i;
        let mut end = i;
        while let Some(&(j, d)) = chars.peek() {
            if d.is_whitespace() {
                break;
            }
            end = j + d.len_utf8();
            chars.next();
        }
        let raw = &text[start..end];
        let (lead, core, trailed) = trim_core(raw);
        let tok = Tok {
            core,
            start: start + lead,
            end: start + lead + core.len(),
            raw_start: start,
            raw,
            sentence_start: soft,
            hard_start: hard,
            line_start,
            trailed,
        };
        line_start = false;
        if is_bullet(raw) && soft {
            // The sentence starts after the bullet.
        } else {
            let (s, h) = ends_sentence(raw, core, after_number);
            soft = s;
            hard = h;
        }
        if !core.is_empty() {
            after_number = is_number_word(core);
            out.push(tok);
        }
    }
    out
}

/// Byte ranges of the sentences of `text`: split at line ends and at `.`, `!` or `?` followed by
/// whitespace (not after abbreviations such as `e.g.` or single letters). Leading bullets are
/// part of the sentence; empty sentences are skipped.
pub fn sentence_ranges(text: &str) -> Vec<Range<usize>> {
    let toks = tokenize(text);
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut cur: Option<Range<usize>> = None;
    for t in &toks {
        if t.hard_start
            && let Some(r) = cur.take()
        {
            out.push(r);
        }
        let end = t.raw_start + t.raw.len();
        match &mut cur {
            Some(r) => r.end = end,
            None => cur = Some(t.raw_start..end),
        }
    }
    // Tokens that were only punctuation are dropped by `tokenize`; a bullet before the first
    // word is fine to lose.
    out.extend(cur);
    out.retain(|r| text[r.clone()].chars().any(char::is_alphanumeric));
    out
}
