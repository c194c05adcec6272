//! Ranked search over a session's entries, pure: a query and entry texts in, scores and the
//! matching lines out (no I/O; the caller reads the texts).
//!
//! A query has two parts. **Exact terms** — "quoted phrases", identifiers (`OPS-4471`,
//! `parse_config`, `getUser`), paths (`src/main.rs`, `~/.claude.json`), numbers (`9090`,
//! `3.14`), URLs and addresses — match as written (case-insensitively, at word boundaries for
//! identifiers and numbers, so `90` does not match `9090`). **Words** are ranked by BM25 over
//! BM25's tokenizer (the `bm25` crate: Unicode normalization, English stop words and stemming,
//! so "shipped" finds "ship"). An entry's score is BM25 of the words plus, for each exact term it
//! holds, that term's inverse document frequency times [`EXACT_WEIGHT`]: an entry that holds the
//! rare identifier a question names ranks above prose that only shares its words.
//!
//! "The user" in a question is about who said it, not a word to find: it is dropped from the
//! words and the user's own messages get [`ROLE_BOOST`]; likewise "the assistant" / "you" for the
//! assistant's messages.
//!
//! The scan keeps per entry only its length and the counts of the query's words ([`DocStats`]),
//! so memory does not grow with the entries' text; the texts of the few hits are read again for
//! their matching lines.

use bm25::{Language, LanguageMode, Tokenizer};

use crate::entry::Role;

/// BM25's term-frequency saturation and length normalization (the usual values).
const K1: f32 = 1.2;
const B: f32 = 0.75;
/// How much an exact term counts against the words: its IDF times this.
pub const EXACT_WEIGHT: f32 = 3.0;
/// The factor for entries of the role a question names ("what did the user …").
pub const ROLE_BOOST: f32 = 2.0;
/// Two words of a question that stand next to each other in an entry too ("checkout hotfix
/// commit") say more than each alone: each such pair adds its words' mean IDF times this.
pub const PAIR_WEIGHT: f32 = 1.0;
/// A tool call and its result are one unit: each gets this share of the other's score (the
/// call names the command or path, the result holds the value a question asks for).
pub const UNIT_SHARE: f32 = 0.5;
/// Exact terms beyond this many are matched as words only.
const MAX_EXACT: usize = 64;
/// A query of more characters is refused (a pasted page is not a question).
pub const MAX_QUERY_CHARS: usize = 2_000;

/// Why a query cannot be searched for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryError {
    /// Only common words (stop words): nothing to rank by.
    Empty,
    /// Over [`MAX_QUERY_CHARS`] characters.
    TooLong(usize),
}

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QueryError::Empty => write!(
                f,
                "the query has nothing to look for (only common words): name a word, an identifier, a path, a number or a \"quoted phrase\""
            ),
            QueryError::TooLong(n) => write!(
                f,
                "the query is {n} characters long, over the {MAX_QUERY_CHARS} a query may have: search for the words, names or values that matter"
            ),
        }
    }
}

/// What kind of exact term a query holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExactKind {
    /// A "quoted phrase".
    Phrase,
    /// A path, a file name with an extension, a URL.
    Path,
    /// A number (digits, with `.`, `,`, `:` inside).
    Number,
    /// Anything else with a digit, an underscore, inner capitals or joining punctuation.
    Identifier,
}

/// A term matched as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exact {
    /// Lower-cased, whitespace collapsed.
    pub text: String,
    pub kind: ExactKind,
}

/// A parsed query.
pub struct Query {
    pub exact: Vec<Exact>,
    /// Distinct stemmed words, in query order.
    pub words: Vec<String>,
    /// The role a question asks about ("the user …").
    pub role: Option<Role>,
    tokenizer: bm25::DefaultTokenizer,
    /// The tokenizer's stop words (English), to count an entry's words without tokenizing it.
    stop: std::collections::HashSet<String>,
    /// Every word is ASCII: an entry that holds none of them as a substring (lower-cased)
    /// cannot hold them as tokens, so it is only counted.
    ascii: bool,
}

impl std::fmt::Debug for Query {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Query")
            .field("exact", &self.exact)
            .field("words", &self.words)
            .field("role", &self.role)
            .finish()
    }
}

/// What the scan keeps of one entry.
#[derive(Debug, Clone, Default)]
pub struct DocStats {
    /// Tokens after stop words (BM25's document length).
    pub len: u32,
    /// Occurrences of each query word (parallel to `Query::words`).
    pub tf: Vec<u16>,
    /// Bit `k`: the entry holds exact term `k`.
    pub exact: u64,
    /// Bit `k`: query words `k` and `k + 1` stand next to each other in the entry.
    pub pairs: u64,
}

/// One line of an entry's text shown with a hit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snippet {
    /// 0-based line of the entry's text.
    pub line: usize,
    pub text: String,
    /// A line that matches (the others are context).
    pub matches: bool,
}

fn tokenizer() -> bm25::DefaultTokenizer {
    bm25::DefaultTokenizer::builder()
        .language_mode(LanguageMode::Fixed(Language::English))
        .normalization(true)
        .stemming(true)
        .stopwords(true)
        .build()
}

/// Punctuation a word in prose may carry around it.
fn outer(c: char) -> bool {
    !(c.is_alphanumeric() || matches!(c, '_' | '/' | '~' | '$' | '@' | '#' | '\\'))
}

/// Whether a token (outer punctuation trimmed) is meant as written, and as what.
fn exact_kind(token: &str) -> Option<ExactKind> {
    let has_digit = token.chars().any(|c| c.is_ascii_digit());
    let has_alpha = token.chars().any(char::is_alphabetic);
    if token.chars().count() < 2 {
        return None;
    }
    if has_digit
        && !has_alpha
        && token
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | ',' | ':' | '-' | '+' | '%' | '$'))
    {
        return Some(ExactKind::Number);
    }
    if token.contains("://")
        || token.contains('/')
        || token.contains('\\')
        || token.starts_with('~')
        || file_like(token)
    {
        return Some(ExactKind::Path);
    }
    let inner_capital = token
        .chars()
        .zip(token.chars().skip(1))
        .any(|(a, b)| a.is_lowercase() && b.is_uppercase());
    let inner_join = token
        .trim_matches(|c: char| !c.is_alphanumeric())
        .chars()
        .any(|c| matches!(c, '_' | ':' | '@' | '#' | '=' | '$'));
    let hyphen_code = token.contains('-') && has_digit;
    let all_caps = has_alpha
        && token.chars().filter(|c| c.is_alphabetic()).count() >= 2
        && token
            .chars()
            .filter(|c| c.is_alphabetic())
            .all(char::is_uppercase);
    if has_digit || inner_capital || inner_join || hyphen_code || all_caps {
        return Some(ExactKind::Identifier);
    }
    None
}

/// `name.ext`: a dot followed by a short extension of letters and digits.
fn file_like(token: &str) -> bool {
    match token.rsplit_once('.') {
        Some((name, ext)) => {
            !name.is_empty()
                && (1..=6).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
                && name
                    .chars()
                    .last()
                    .is_some_and(|c| c.is_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// Words that name who spoke, not what was said.
fn role_word(w: &str) -> Option<Role> {
    match w {
        "user" | "users" | "user's" | "customer" | "i" | "me" | "my" => Some(Role::User),
        "assistant" | "assistant's" | "agent" | "agent's" | "you" | "your" => Some(Role::Assistant),
        _ => None,
    }
}

impl Query {
    /// A query as a person or a model writes it, or why it cannot be searched for.
    pub fn new(query: &str) -> Result<Query, QueryError> {
        let n = query.chars().count();
        if n > MAX_QUERY_CHARS {
            return Err(QueryError::TooLong(n));
        }
        let q = Query::parse(query);
        if q.is_empty() {
            return Err(QueryError::Empty);
        }
        Ok(q)
    }

    pub fn parse(query: &str) -> Query {
        let query: String = query.chars().take(MAX_QUERY_CHARS).collect();
        let tokenizer = tokenizer();
        let mut exact: Vec<Exact> = Vec::new();
        let mut prose = String::with_capacity(query.len());
        let mut role = None;
        // Quoted phrases first; what is left is split on whitespace.
        let mut rest = query.as_str();
        while let Some(open) = rest.find(['"', '“', '”']) {
            prose.push_str(&rest[..open]);
            let after = &rest[open..];
            let q = after.chars().next().expect("a quote").len_utf8();
            match after[q..].find(['"', '“', '”']) {
                Some(close) => {
                    let phrase = collapse(&after[q..q + close]);
                    if !phrase.is_empty() {
                        exact.push(Exact {
                            text: phrase,
                            kind: ExactKind::Phrase,
                        });
                    }
                    prose.push(' ');
                    prose.push_str(&after[q..q + close]);
                    prose.push(' ');
                    rest = &after[q + close + 1..];
                }
                None => {
                    prose.push_str(&after[q..]);
                    rest = "";
                }
            }
        }
        prose.push_str(rest);
        let mut words_text = String::with_capacity(prose.len());
        for raw in prose.split_whitespace() {
            let token = raw.trim_matches(outer);
            let lower = token.to_lowercase();
            if let Some(r) = role_word(&lower) {
                role = role.or(Some(r));
                continue;
            }
            if let Some(kind) = exact_kind(token) {
                let text = lower.clone();
                if !exact.iter().any(|e| e.text == text) {
                    exact.push(Exact { text, kind });
                }
            }
            words_text.push_str(raw);
            words_text.push(' ');
        }
        exact.truncate(MAX_EXACT);
        let mut words: Vec<String> = Vec::new();
        for w in tokenizer.tokenize(&words_text) {
            if !words.contains(&w) {
                words.push(w);
            }
        }
        let ascii = words.iter().all(|w| w.is_ascii());
        Query {
            exact,
            words,
            role,
            tokenizer,
            stop: stop_words::get(stop_words::LANGUAGE::English)
                .iter()
                .map(|w| w.to_string())
                .collect(),
            ascii,
        }
    }

    /// Only exact terms: every word is a piece of one (`src/utils/config.ts`, `OPS-4471`). Such
    /// a query names the entry it wants; units (a call with its result) do not share scores then.
    pub fn only_exact(&self) -> bool {
        !self.exact.is_empty()
            && self.words.iter().all(|w| {
                self.exact
                    .iter()
                    .any(|e| self.tokenizer.tokenize(&e.text).contains(w))
            })
    }

    /// Nothing to look for.
    pub fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.words.is_empty()
    }

    /// What the scan keeps of one entry's text.
    pub fn stats(&self, text: &str) -> DocStats {
        let mut s = DocStats {
            len: 0,
            tf: vec![0; self.words.len()],
            exact: 0,
            pairs: 0,
        };
        if text.is_empty() {
            return s;
        }
        let lower = text.to_lowercase();
        for (k, e) in self.exact.iter().enumerate() {
            if holds(&lower, e) {
                s.exact |= 1 << k;
            }
        }
        // An entry that holds none of the words (as text) is only counted: BM25 needs its
        // length for the mean, not its tokens. Its count splits on what is not a letter, a
        // digit or an apostrophe, where the tokenizer splits by Unicode's word rules (they
        // differ on a few joined words such as `a.b`, which moves the mean by a hair).
        if s.exact == 0 && self.ascii && !self.words.iter().any(|w| lower.contains(w.as_str())) {
            s.len = lower
                .split(|c: char| !(c.is_alphanumeric() || c == '\''))
                .filter(|w| !w.is_empty() && !self.stop.contains(*w))
                .count() as u32;
            return s;
        }
        let tokens = self.tokenizer.tokenize(text);
        s.len = tokens.len() as u32;
        if !self.words.is_empty() {
            let mut last: Option<usize> = None;
            for t in &tokens {
                let k = self.words.iter().position(|w| w == t);
                if let Some(k) = k {
                    s.tf[k] = s.tf[k].saturating_add(1);
                    if let Some(j) = last
                        && j + 1 == k
                        && j < 64
                    {
                        s.pairs |= 1 << j;
                    }
                }
                last = k;
            }
        }
        s
    }

    /// Scores of the entries, best first (ties in entry order), at most `limit`; entries that
    /// match nothing are left out. `unit(key)`: the entry a tool result answers (or the result
    /// a call opens) among `docs`, whose score it shares ([`UNIT_SHARE`]).
    pub fn rank(
        &self,
        docs: &[(u32, Role, DocStats)],
        limit: usize,
        unit: impl Fn(u32) -> Option<u32>,
    ) -> Vec<(u32, f32)> {
        let n = docs.len() as f32;
        if docs.is_empty() {
            return Vec::new();
        }
        let idf = |df: usize| {
            let df = df as f32;
            (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        };
        let avgdl =
            (docs.iter().map(|d| d.2.len as f64).sum::<f64>() / docs.len() as f64).max(1.0) as f32;
        let word_idf: Vec<f32> = (0..self.words.len())
            .map(|k| idf(docs.iter().filter(|d| d.2.tf[k] > 0).count()))
            .collect();
        let exact_idf: Vec<f32> = (0..self.exact.len())
            .map(|k| idf(docs.iter().filter(|d| d.2.exact & (1 << k) != 0).count()))
            .collect();
        let base: Vec<f32> = docs
            .iter()
            .map(|(_, role, s)| {
                let norm = K1 * (1.0 - B + B * s.len as f32 / avgdl);
                let mut score: f32 =
                    s.tf.iter()
                        .zip(&word_idf)
                        .filter(|(tf, _)| **tf > 0)
                        .map(|(&tf, idf)| idf * (tf as f32 * (K1 + 1.0)) / (tf as f32 + norm))
                        .sum();
                score += word_idf
                    .windows(2)
                    .enumerate()
                    .filter(|(k, _)| *k < 64 && s.pairs & (1 << k) != 0)
                    .map(|(_, w)| PAIR_WEIGHT * (w[0] + w[1]) / 2.0)
                    .sum::<f32>();
                score += exact_idf
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| s.exact & (1 << k) != 0)
                    .map(|(_, idf)| EXACT_WEIGHT * idf.max(0.1))
                    .sum::<f32>();
                if score > 0.0 && self.role == Some(*role) {
                    score *= ROLE_BOOST;
                }
                score.max(0.0)
            })
            .collect();
        // Each entry's score, with its share of its unit's (a call's, a result's, the message a
        // reply answers).
        let at: std::collections::HashMap<u32, usize> =
            docs.iter().enumerate().map(|(i, d)| (d.0, i)).collect();
        let mut scored: Vec<(u32, f32)> = docs
            .iter()
            .enumerate()
            .map(|(i, (key, _, _))| {
                let shared = unit(*key)
                    .and_then(|p| at.get(&p))
                    .map_or(0.0, |&j| UNIT_SHARE * base[j]);
                (*key, base[i] + shared)
            })
            .filter(|&(_, s)| s > 0.0)
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        scored.truncate(limit);
        scored
    }

    /// The lines of `text` that match, each with `context` lines around it, at most `max`
    /// matching lines (the best first in text order), every line cut to `width` characters
    /// around its first match.
    pub fn snippets(&self, text: &str, context: usize, max: usize, width: usize) -> Vec<Snippet> {
        let lines: Vec<&str> = text.lines().collect();
        let mut weight: Vec<(usize, usize)> = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let w = self.line_weight(line);
            if w > 0 {
                weight.push((i, w));
            }
        }
        weight.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        weight.truncate(max);
        let mut chosen: Vec<usize> = weight.iter().map(|w| w.0).collect();
        chosen.sort_unstable();
        let mut out: Vec<Snippet> = Vec::new();
        for &m in &chosen {
            let from = m.saturating_sub(context);
            let to = (m + context).min(lines.len().saturating_sub(1));
            for (i, line) in lines.iter().enumerate().take(to + 1).skip(from) {
                if out.iter().any(|s| s.line == i) || (line.trim().is_empty() && i != m) {
                    continue;
                }
                out.push(Snippet {
                    line: i,
                    text: self.cut(line, width),
                    matches: chosen.contains(&i),
                });
            }
        }
        out.sort_by_key(|s| s.line);
        out
    }

    /// How much a line matches: exact terms count 4, words 1.
    fn line_weight(&self, line: &str) -> usize {
        if line.trim().is_empty() {
            return 0;
        }
        let lower = line.to_lowercase();
        let exact = self.exact.iter().filter(|e| holds(&lower, e)).count();
        let words = if self.words.is_empty() {
            0
        } else {
            let tokens = self.tokenizer.tokenize(line);
            self.words.iter().filter(|w| tokens.contains(w)).count()
        };
        exact * 4 + words
    }

    /// A long line cut to `width` characters around its first match.
    fn cut(&self, line: &str, width: usize) -> String {
        let chars = line.chars().count();
        if chars <= width {
            return line.to_string();
        }
        let lower = line.to_lowercase();
        let at = self
            .exact
            .iter()
            .filter_map(|e| find_term(&lower, e))
            .chain(self.words.iter().filter_map(|w| lower.find(w.as_str())))
            .min()
            .unwrap_or(0);
        // `lower` may differ in length from `line` for a few characters; map by characters.
        let at_chars = lower.get(..at).map_or(0, |s| s.chars().count()).min(chars);
        let start = at_chars.saturating_sub(width / 3);
        let end = (start + width).min(chars);
        let start = end.saturating_sub(width);
        let body: String = line.chars().skip(start).take(end - start).collect();
        format!(
            "{}{body}{}",
            if start > 0 { "…" } else { "" },
            if end < chars { "…" } else { "" }
        )
    }
}

/// Whitespace runs collapsed, lower-cased.
fn collapse(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Whether the lower-cased text holds the term as written.
fn holds(lower: &str, e: &Exact) -> bool {
    find_term(lower, e).is_some()
}

/// Where the term first occurs as written: a phrase with any whitespace between its words; an
/// identifier or number not inside a longer run of letters, digits or `_` (a path may be a
/// suffix of a longer path).
fn find_term(lower: &str, e: &Exact) -> Option<usize> {
    if e.kind == ExactKind::Phrase && e.text.contains(' ') {
        return find_phrase(lower, &e.text);
    }
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(k) = lower[from..].find(e.text.as_str()) {
        let at = from + k;
        let end = at + e.text.len();
        let before = lower[..at].chars().next_back();
        let after = lower[end..].chars().next();
        let first = e.text.chars().next().expect("non-empty");
        let last = e.text.chars().next_back().expect("non-empty");
        let left_ok = e.kind == ExactKind::Path || !word(first) || !before.is_some_and(word);
        let right_ok = !word(last) || !after.is_some_and(word);
        // A number is not the head of a longer number ("3.1" in "3.14"), nor its tail.
        let number_ok = e.kind != ExactKind::Number
            || (!after.is_some_and(|c| c == '.' || c == ',')
                || !lower[end..]
                    .chars()
                    .nth(1)
                    .is_some_and(|c| c.is_ascii_digit()));
        if left_ok && right_ok && number_ok {
            return Some(at);
        }
        from = at + lower[at..].chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// A phrase whose words may be separated by any whitespace in the text.
fn find_phrase(lower: &str, phrase: &str) -> Option<usize> {
    let words: Vec<&str> = phrase.split(' ').collect();
    let mut from = 0;
    while let Some(k) = lower[from..].find(words[0]) {
        let at = from + k;
        let mut pos = at + words[0].len();
        let mut ok = true;
        for w in &words[1..] {
            let rest = &lower[pos..];
            let trimmed = rest.trim_start();
            if trimmed.len() == rest.len() || !trimmed.starts_with(w) {
                ok = false;
                break;
            }
            pos += rest.len() - trimmed.len() + w.len();
        }
        if ok {
            return Some(at);
        }
        from = at + lower[at..].chars().next().map_or(1, char::len_utf8);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(q: &str, docs: &[(Role, &str)]) -> Vec<u32> {
        let q = Query::parse(q);
        let stats: Vec<(u32, Role, DocStats)> = docs
            .iter()
            .enumerate()
            .map(|(i, (r, t))| (i as u32, *r, q.stats(t)))
            .collect();
        q.rank(&stats, 10, |_| None)
            .into_iter()
            .map(|(k, _)| k)
            .collect()
    }

    #[test]
    fn exact_terms_are_recognised_by_kind() {
        let q = Query::parse(
            r#"where is OPS-4471 in src/main.rs on port 9090, "blue green deploy", getUser and parse_config at https://x.io/a?"#,
        );
        let kinds: Vec<(&str, ExactKind)> =
            q.exact.iter().map(|e| (e.text.as_str(), e.kind)).collect();
        assert!(kinds.contains(&("blue green deploy", ExactKind::Phrase)));
        assert!(kinds.contains(&("ops-4471", ExactKind::Identifier)));
        assert!(kinds.contains(&("src/main.rs", ExactKind::Path)));
        assert!(kinds.contains(&("9090", ExactKind::Number)));
        assert!(kinds.contains(&("getuser", ExactKind::Identifier)));
        assert!(kinds.contains(&("parse_config", ExactKind::Identifier)));
        assert!(kinds.contains(&("https://x.io/a", ExactKind::Path)));
        assert!(!kinds.iter().any(|(t, _)| *t == "where" || *t == "port"));
    }

    #[test]
    fn a_number_matches_only_whole() {
        let docs = [
            (Role::Assistant, "listening on 19090 and 90901"),
            (Role::Assistant, "the proxy listens on port 9090 now"),
            (Role::Assistant, "version 9090.1 is out"),
        ];
        assert_eq!(rank("9090", &docs), vec![1]);
    }

    #[test]
    fn an_identifier_outranks_prose_that_shares_words() {
        let docs = [
            (
                Role::User,
                "the ticket for the outage is important, track the ticket",
            ),
            (Role::Assistant, "filed as OPS-4471"),
            (Role::User, "ops team said 4471 things"),
        ];
        assert_eq!(rank("which ticket is OPS-4471", &docs)[0], 1);
    }

    #[test]
    fn a_question_in_words_finds_the_users_decision() {
        let docs = [
            (Role::User, "Can you check the order status for the laptop?"),
            (
                Role::Assistant,
                "The replacement unit is in stock; I can ship it to any office.",
            ),
            (
                Role::User,
                "Please send the replacement to our Rotterdam office, not Amsterdam.",
            ),
            (
                Role::Tool,
                "offices: Amsterdam, Rotterdam, Utrecht (shipping table)",
            ),
        ];
        let r = rank(
            "which office did the user want the replacement shipped to",
            &docs,
        );
        assert_eq!(r[0], 2, "{r:?}");
    }

    #[test]
    fn a_phrase_matches_across_line_breaks_and_only_in_order() {
        let docs = [
            (Role::User, "deploy green then blue"),
            (Role::User, "we go with a blue\n  green deploy"),
        ];
        assert_eq!(rank(r#""blue green deploy""#, &docs), vec![1, 0]);
    }

    #[test]
    fn a_tool_result_shares_the_score_of_the_call_it_answers() {
        let q = Query::parse("how many insertions did the git commit make");
        let docs = [
            (Role::User, "please commit"),
            (
                Role::Assistant,
                "[calls bash({\"command\": \"git commit -m 'refactor'\"})]",
            ),
            (
                Role::Tool,
                "[main 83a6c26] refactor\n 12 files changed, 3324 insertions(+)",
            ),
            (Role::Assistant, "git is how we keep history"),
        ];
        let stats: Vec<(u32, Role, DocStats)> = docs
            .iter()
            .enumerate()
            .map(|(i, (r, t))| (i as u32, *r, q.stats(t)))
            .collect();
        let unit = |k: u32| match k {
            1 => Some(2),
            2 => Some(1),
            _ => None,
        };
        let score = |v: &[(u32, f32)], k: u32| v.iter().find(|x| x.0 == k).unwrap().1;
        let alone = q.rank(&stats, 10, |_| None);
        let paired = q.rank(&stats, 10, unit);
        // The result gains half its call's score, the call half the result's; the rest keep theirs.
        let (c, r) = (score(&alone, 1), score(&alone, 2));
        assert!(
            (score(&paired, 2) - (r + UNIT_SHARE * c)).abs() < 1e-4,
            "{paired:?}"
        );
        assert!(
            (score(&paired, 1) - (c + UNIT_SHARE * r)).abs() < 1e-4,
            "{paired:?}"
        );
        assert!((score(&paired, 0) - score(&alone, 0)).abs() < 1e-6);
    }

    #[test]
    fn words_that_stand_together_as_in_the_question_rank_first() {
        let docs = [
            (
                Role::Assistant,
                "the billing hotfix commit is b0fc6fd0; checkout is fine",
            ),
            (Role::Assistant, "the checkout hotfix commit is CR-8814"),
            (Role::Assistant, "commit the hotfix for checkout later"),
        ];
        assert_eq!(rank("what is the checkout hotfix commit", &docs)[0], 1);
    }

    #[test]
    fn a_query_of_exact_terms_only_is_told_from_a_question() {
        assert!(Query::parse("src/utils/config.ts").only_exact());
        assert!(Query::parse("OPS-4471 9090").only_exact());
        assert!(!Query::parse("which file is src/utils/config.ts").only_exact());
        assert!(!Query::parse("the cache").only_exact());
    }

    #[test]
    fn nothing_matches_nothing() {
        assert!(rank("zebra", &[(Role::User, "no such animal here")]).is_empty());
        assert!(Query::parse("the of and").is_empty());
    }

    #[test]
    fn snippets_show_the_matching_lines_with_context() {
        let q = Query::parse("Rotterdam");
        let text = "line one\nline two\nship to Rotterdam\nline four\nline five";
        let s = q.snippets(text, 1, 3, 200);
        let lines: Vec<(usize, bool)> = s.iter().map(|s| (s.line, s.matches)).collect();
        assert_eq!(lines, vec![(1, false), (2, true), (3, false)]);
    }

    #[test]
    fn a_long_line_is_cut_around_its_match() {
        let q = Query::parse("needle");
        let line = format!("{}needle{}", "a ".repeat(300), " b".repeat(300));
        let s = q.snippets(&line, 0, 1, 80);
        assert!(s[0].text.contains("needle"), "{:?}", s[0].text);
        assert!(s[0].text.chars().count() <= 82);
    }

    #[test]
    fn a_huge_or_empty_query_is_refused() {
        assert_eq!(
            Query::new(&"word ".repeat(5_000)).unwrap_err(),
            QueryError::TooLong(25_000)
        );
        assert_eq!(Query::new("what is the").unwrap_err(), QueryError::Empty);
        assert!(Query::new("OPS-4471").is_ok());
    }
}
