//! `Extractive`: the built-in offline summarizer (`--model extractive`). Deterministic, no key.
//!
//! It keeps the sentences that carry the span's facts — numbers, amounts, dates, names, file
//! paths, identifiers, decisions and commitments — and the user's requests, attributed by turn
//! and author, within a budget of about a third of the span. It copies sentences; it never
//! invents text.

use crate::entry::Role;
use crate::fold::SummaryRequest;
use crate::fold::prompt::Piece;
use crate::summarizer::{Summarizer, SummaryFuture, SummaryReply};

/// The name users pass to `--model`.
pub const NAME: &str = "extractive";

/// Longest sentence kept whole; longer ones are cut with an ellipsis.
const MAX_SENTENCE: usize = 240;

#[derive(Debug, Default, Clone, Copy)]
pub struct Extractive;

impl Summarizer for Extractive {
    fn model(&self) -> &str {
        NAME
    }

    fn summarize<'a>(&'a self, request: &'a SummaryRequest) -> SummaryFuture<'a> {
        let text = summarize(&request.pieces, request.target_chars);
        Box::pin(async move { Ok(SummaryReply { text, usage: None }) })
    }
}

#[derive(Debug)]
struct Sentence {
    piece: usize,
    order: usize,
    text: String,
    chars: usize,
    score: f32,
}

/// Pick sentences within `budget` characters and lay them out by turn and author.
pub fn summarize(pieces: &[Piece], budget: usize) -> String {
    let mut sentences = Vec::new();
    for (pi, piece) in pieces.iter().enumerate() {
        for text in split_sentences(&piece.text) {
            let score = score(&text, piece);
            let order = sentences.len();
            let text = clip(&text);
            let chars = text.chars().count();
            sentences.push(Sentence {
                piece: pi,
                order,
                text,
                chars,
                score,
            });
        }
    }

    // Greedy by score (ties: earlier first), counting the per-group heading once per group.
    // First the best sentence of each user message (every request gets a voice), then the rest.
    let mut ranked: Vec<&Sentence> = sentences.iter().filter(|s| s.score > 0.0).collect();
    ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.order.cmp(&b.order)));
    let mut has_first = vec![false; pieces.len()];
    let mut is_first = vec![false; sentences.len()];
    let mut firsts: Vec<&Sentence> = Vec::new();
    for s in &ranked {
        if pieces[s.piece].role == Some(Role::User) && !has_first[s.piece] {
            has_first[s.piece] = true;
            is_first[s.order] = true;
            firsts.push(s);
        }
    }
    let rest = ranked.iter().filter(|s| !is_first[s.order]).copied();
    let mut chosen: Vec<&Sentence> = Vec::new();
    let mut group_used = vec![false; pieces.len()];
    let mut used = 0usize;
    for s in firsts.iter().copied().chain(rest) {
        if used >= budget {
            break;
        }
        let heading = if group_used[s.piece] {
            0
        } else {
            heading(&pieces[s.piece]).chars().count() + 1
        };
        let cost = s.chars + 1 + heading;
        if used + cost > budget {
            continue;
        }
        used += cost;
        group_used[s.piece] = true;
        chosen.push(s);
    }
    if chosen.is_empty() {
        // Nothing scored or nothing fit: keep the first request, cut to the budget.
        if let Some(s) = sentences
            .iter()
            .find(|s| pieces[s.piece].role == Some(Role::User))
            .or(sentences.first())
        {
            let h = heading(&pieces[s.piece]);
            let room = budget.saturating_sub(h.chars().count() + 1).max(1);
            return format!("{h} {}", cut(&s.text, room));
        }
        return String::new();
    }
    chosen.sort_by_key(|s| s.order);

    let mut out = String::new();
    let mut current: Option<usize> = None;
    for s in chosen {
        if current == Some(s.piece) {
            out.push(' ');
        } else {
            if current.is_some() {
                out.push('\n');
            }
            out.push_str(&heading(&pieces[s.piece]));
            out.push(' ');
            current = Some(s.piece);
        }
        out.push_str(&s.text);
    }
    out
}

fn heading(piece: &Piece) -> String {
    if piece.role.is_none() {
        format!("({}):", piece.author)
    } else {
        format!("T{} {}:", piece.turn, piece.author)
    }
}

/// Split text into sentences: by line, then at `.`, `!` or `?` followed by whitespace.
fn split_sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim().trim_start_matches(['-', '*', '•']).trim();
        if line.is_empty() {
            continue;
        }
        let chars: Vec<char> = line.chars().collect();
        let mut start = 0;
        for i in 0..chars.len() {
            let end_mark = matches!(chars[i], '.' | '!' | '?');
            let next_ws = chars.get(i + 1).is_none_or(|c| c.is_whitespace());
            if end_mark && next_ws {
                // Not after a one- or two-letter abbreviation like "e.g." or "Dr."
                let word: String = chars[start..i]
                    .iter()
                    .rev()
                    .take_while(|c| c.is_alphabetic())
                    .collect();
                let abbreviation = chars[i] == '.'
                    && (word.len() == 1
                        || matches!(word.as_str(), "rD" | "rM" | "sM" | "tS" | "sv" | "gi"));
                if abbreviation && i + 1 < chars.len() {
                    continue;
                }
                push_sentence(&mut out, &chars[start..=i]);
                start = i + 1;
            }
        }
        if start < chars.len() {
            push_sentence(&mut out, &chars[start..]);
        }
    }
    out
}

fn push_sentence(out: &mut Vec<String>, chars: &[char]) {
    let s: String = chars.iter().collect();
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if s.chars().any(char::is_alphanumeric) {
        out.push(s);
    }
}

fn clip(s: &str) -> String {
    cut(s, MAX_SENTENCE)
}

fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
    t.push('…');
    t
}

const DECISION_WORDS: &[&str] = &[
    "decide",
    "decided",
    "decision",
    "agree",
    "agreed",
    "will",
    "won't",
    "going",
    "let's",
    "plan",
    "planned",
    "chose",
    "choose",
    "choice",
    "prefer",
    "prefers",
    "preferred",
    "want",
    "wants",
    "need",
    "needs",
    "must",
    "should",
    "always",
    "never",
    "don't",
    "confirm",
    "confirmed",
    "approve",
    "approved",
    "deadline",
    "budget",
    "require",
    "required",
    "requirement",
    "promise",
    "commit",
    "committed",
    "schedule",
    "scheduled",
    "booked",
    "cancel",
    "cancelled",
    "switch",
    "use",
    "keep",
    "avoid",
    "allergic",
    "favorite",
    "favourite",
];
const REQUEST_STARTS: &[&str] = &[
    "please", "can", "could", "would", "i want", "i need", "i'd like", "help", "make", "add",
    "fix", "write", "create", "remove", "change", "update", "show", "tell", "find", "give",
    "explain", "book", "send", "set",
];
const TIME_WORDS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "today",
    "tomorrow",
    "yesterday",
    "tonight",
    "week",
    "month",
    "year",
    "am",
    "pm",
];
const FILLER: &[&str] = &[
    "ok",
    "okay",
    "sure",
    "thanks",
    "thank you",
    "great",
    "cool",
    "nice",
    "yes",
    "no",
    "hello",
    "hi",
    "got it",
    "sounds good",
    "you're welcome",
    "no problem",
    "perfect",
    "awesome",
];

fn score(sentence: &str, piece: &Piece) -> f32 {
    let lower = sentence.to_lowercase();
    let bare = lower.trim_matches(|c: char| !c.is_alphanumeric() && c != ' ' && c != '\'');
    if FILLER.contains(&bare) {
        return 0.0;
    }
    let words: Vec<&str> = sentence.split_whitespace().collect();
    let lower_words: Vec<String> = words
        .iter()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                .to_lowercase()
        })
        .collect();
    let mut s = 0.2f32;

    // A tool-call echo (`[calls name(args)]`): the assistant's own words usually say it better.
    if sentence.starts_with("[calls ") {
        return 0.5;
    }
    let numbers = words
        .iter()
        .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
        .count();
    if numbers > 0 {
        s += 2.0 + (numbers.min(5) - 1) as f32 * 0.5;
    }
    if sentence.contains(['$', '€', '£', '%']) {
        s += 1.0;
    }
    if lower_words.iter().any(|w| TIME_WORDS.contains(&w.as_str())) {
        s += 1.0;
    }
    if words.iter().any(|w| looks_like_path(w)) {
        s += 2.0;
    }
    if words.iter().any(|w| looks_like_identifier(w)) {
        s += 1.0;
    }
    let names = words
        .iter()
        .skip(1)
        .filter(|w| {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric());
            w.len() > 1
                && w.chars().next().is_some_and(char::is_uppercase)
                && w.chars().skip(1).any(char::is_lowercase)
        })
        .count();
    s += names.min(3) as f32;
    if lower_words
        .iter()
        .any(|w| DECISION_WORDS.contains(&w.as_str()))
    {
        s += 2.0;
    }
    match piece.role {
        Some(Role::User) => {
            s += 1.5;
            if sentence.ends_with('?') || REQUEST_STARTS.iter().any(|p| lower.starts_with(p)) {
                s += 3.0;
            }
            if lower_words
                .iter()
                .any(|w| DECISION_WORDS.contains(&w.as_str()))
            {
                s += 1.5; // a user's stated preference or decision
            }
        }
        Some(Role::Tool) => s -= 0.5,
        Some(Role::System) => s += 0.5,
        None => s += 1.0, // an earlier summary: already distilled
        Some(Role::Assistant) => {}
    }
    // Long sentences cost much of the budget: they must carry more to be worth it.
    let len = sentence.chars().count();
    if len > 160 {
        s -= 1.0 + (len - 160) as f32 / 160.0;
    }
    // Short sentences with no signal are filler.
    if sentence.chars().count() < 12 && s < 1.5 {
        return 0.0;
    }
    s
}

fn looks_like_path(w: &str) -> bool {
    let w = w.trim_matches(|c: char| matches!(c, '`' | '"' | '\'' | '(' | ')' | ',' | ';' | ':'));
    if w.contains("://") {
        return true;
    }
    let slash = w.contains('/')
        && w.chars().filter(|c| c.is_alphanumeric()).count() >= 2
        && !w.starts_with("//");
    let ext = w.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
            && stem
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
            && !ext.chars().all(char::is_uppercase)
    });
    slash || (ext && w.contains(|c: char| c == '_' || c == '/' || c.is_lowercase()))
}

fn looks_like_identifier(w: &str) -> bool {
    let w = w.trim_matches(|c: char| !c.is_alphanumeric());
    if w.len() < 3 {
        return false;
    }
    let letters = w.chars().any(char::is_alphabetic);
    let digits = w.chars().any(|c| c.is_ascii_digit());
    let joiners = w.contains(['_', '-', '#']);
    let camel = w.chars().skip(1).any(char::is_uppercase) && w.chars().any(char::is_lowercase);
    (letters && (digits || joiners)) || camel || w.starts_with('#')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(turn: u64, role: Role, text: &str) -> Piece {
        Piece {
            turn,
            author: role.as_str().into(),
            role: Some(role),
            text: text.into(),
        }
    }

    #[test]
    fn keeps_facts_and_requests_drops_filler() {
        let pieces = vec![
            piece(
                1,
                Role::User,
                "Hi there! Can you book the venue for March 14? The budget is $4,200.",
            ),
            piece(
                1,
                Role::Assistant,
                "Sure. I booked Hall B at 12 Queen St for March 14 for $3,950. That is a lovely choice.",
            ),
            piece(2, Role::User, "Thanks! Great."),
            piece(
                2,
                Role::Assistant,
                "You're welcome. Let me know anything else. The contract is in docs/venue-contract.pdf.",
            ),
        ];
        let out = summarize(&pieces, 220);
        assert!(out.contains("$4,200") || out.contains("March 14?"), "{out}");
        assert!(out.contains("$3,950"), "{out}");
        assert!(out.contains("docs/venue-contract.pdf"), "{out}");
        assert!(!out.contains("Thanks"), "{out}");
        assert!(!out.contains("lovely"), "{out}");
        assert!(
            out.chars().count() <= 220,
            "{} chars: {out}",
            out.chars().count()
        );
        assert!(out.starts_with("T1 user:"), "{out}");
    }

    #[test]
    fn deterministic_and_within_budget() {
        let long = "The server at 10.0.0.7 failed at 03:12 UTC. ".repeat(50);
        let pieces = vec![
            piece(1, Role::User, "Why did prod go down on Friday?"),
            piece(1, Role::Assistant, &long),
        ];
        let a = summarize(&pieces, 300);
        let b = summarize(&pieces, 300);
        assert_eq!(a, b);
        assert!(a.chars().count() <= 300);
        assert!(a.contains("Why did prod go down on Friday?"));
    }

    #[test]
    fn splits_sentences_but_not_abbreviations_or_decimals() {
        let s =
            split_sentences("Version 3.5 ships e.g. on Monday. Then we test! Done?\n- bullet item");
        assert_eq!(
            s,
            [
                "Version 3.5 ships e.g. on Monday.",
                "Then we test!",
                "Done?",
                "bullet item"
            ]
        );
    }
}
