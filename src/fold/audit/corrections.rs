//! Corrections a span states ("the port is 9090, not 8080"), and whether a text states a
//! corrected value as if it were current.

use super::*;

/// How far back (in sentences) a correction that does not name the old value looks for it.
const CORRECTION_LOOKBACK: usize = 5000;

// ---------------------------------------------------------------------------------------------
// Corrections

/// A value the span corrects: `old` was stated, `new` replaces it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Correction {
    pub class: ItemClass,
    pub old: String,
    #[serde(skip)]
    pub old_key: String,
    pub new: String,
    #[serde(skip)]
    pub new_key: String,
    /// The turn that states the correction.
    pub turn: u64,
    /// Index of the unit that states the correction.
    #[serde(skip)]
    pub unit: usize,
}

impl Correction {
    /// `new` (stated in unit `unit` of `turn`) replaces `old`.
    fn of(old: &Item, new: &Item, turn: u64, unit: usize) -> Self {
        Self {
            class: old.class,
            old: old.text.clone(),
            old_key: old.key.clone(),
            new: new.text.clone(),
            new_key: new.key.clone(),
            turn,
            unit,
        }
    }
}

#[rustfmt::skip]
pub(super) const CHANGE_VERBS: &[&str] = &[
    "changed", "change", "changes", "changing", "moved", "move", "moves", "switched", "switch",
    "bumped", "bump", "raised", "raise", "lowered", "lower", "increased", "increase", "decreased",
    "decrease", "reduced", "reduce", "updated", "update", "migrated", "migrate", "renamed",
    "rename", "rescheduled", "reschedule", "pushed", "postponed", "shifted", "cut", "set",
    "edited", "corrected", "reassigned", "handed",
];
#[rustfmt::skip]
pub(super) const INFERRED_MARKERS: &[&str] = &[
    "actually", "correction", "update:", "updated:", "is now ", "are now ", "'s now ", "now it's ",
    "now it is ", "now is ", "should be ", "corrected", "i misspoke", "i was wrong",
    "got that wrong", "my mistake",
];
/// Markers of a correction in the user's own words only (an agent's "moved to" narrates work).
#[rustfmt::skip]
pub(super) const USER_MARKERS: &[&str] = &[
    "from now on", "moved to ", "move it to ", "replaced by ", "switch to ", "switched to ",
    "withdrawn", "withdraw ", "scratch that", "forget ",
];

pub(super) fn word_at(lower: &str, at: usize, w: &str) -> bool {
    let before_ok = at == 0
        || !lower[..at]
            .chars()
            .last()
            .is_some_and(|c| c.is_alphanumeric());
    let after = at + w.len();
    let after_ok = after >= lower.len()
        || !lower[after..]
            .chars()
            .next()
            .is_some_and(|c| c.is_alphanumeric())
        || w.ends_with(' ');
    before_ok && after_ok
}

pub(super) fn find_words<'l>(lower: &'l str, w: &'l str) -> impl Iterator<Item = usize> + 'l {
    lower
        .match_indices(w)
        .map(|(i, _)| i)
        .filter(move |&i| word_at(lower, i, w))
}

/// Only filler between two positions: punctuation, articles and copulas.
pub(super) fn gap_ok(gap: &str, max: usize) -> bool {
    if gap.len() > max {
        return false;
    }
    gap.split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .all(|w| {
            matches!(
                w,
                "the"
                    | "a"
                    | "an"
                    | "to"
                    | "it's"
                    | "its"
                    | "it"
                    | "is"
                    | "be"
                    | "now"
                    | "at"
                    | "on"
                    | "in"
                    | "of"
                    | "was"
                    | "use"
                    | "and"
                    | "we"
                    | "are"
                    | "they're"
                    | "that's"
                    | "should"
                    | "by"
                    | "with"
            )
        })
}

pub(super) fn content_words(text: &str, items: &[Item], base: usize) -> HashSet<String> {
    let mut masked = text.to_string();
    for it in items {
        if it.at.start >= base && it.at.end <= base + text.len() {
            let (s, e) = (it.at.start - base, it.at.end - base);
            if masked.is_char_boundary(s) && masked.is_char_boundary(e) {
                masked.replace_range(s..e, &" ".repeat(e - s));
            }
        }
    }
    masked
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| w.len() >= 4)
        .map(str::to_lowercase)
        .filter(|w| !STOP_WORDS.contains(&w.as_str()) && !NAME_STOP.contains(&w.as_str()))
        .collect()
}

/// Direct corrections in one sentence: `X, not Y`, `X rather than Y`, `not Y but X`,
/// `X instead of Y`, `instead of Y, X`, `changed from Y to X`, `Y -> X`, `no longer Y, now X`,
/// `X, no longer Y`, `Y was withdrawn` (next to X), `Y, replaced by X`, `replace Y with X`.
/// Items' ranges are relative to `text` plus `base`. Returns (old, new) item indices.
pub(super) fn direct_corrections(text: &str, items: &[Item], base: usize) -> Vec<(usize, usize)> {
    direct_corrections_in(text, items, base, Source::User)
}

/// [`direct_corrections`]; `arrows_count` false for text whose arrows are never corrections
/// (a tool's output).
fn direct_corrections_in(
    text: &str,
    items: &[Item],
    base: usize,
    who: Source,
) -> Vec<(usize, usize)> {
    let f = Finder {
        lower: text.to_ascii_lowercase(),
        items,
        base,
        user: who == Source::User,
    };
    let mut out = Vec::new();
    let mut add = |old: Option<usize>, new: Option<usize>| {
        if let (Some(o), Some(n)) = (old, new)
            && o != n
            && items[o].class == items[n].class
            && items[o].key != items[n].key
        {
            out.push((o, n));
        }
    };
    not_or_rather_than(&f, &mut add);
    instead_of(&f, &mut add);
    changed_from_to(&f, &mut add);
    // A tool's output (tables, logs, code) says no change with an arrow.
    if who != Source::ToolResult {
        arrows(&f, &mut add);
    }
    no_longer(&f, &mut add);
    // Withdrawing and replacing are the user's words for a correction; in an agent's narration
    // or a tool's output they describe work (`appendMessage, replaced by queueMessage`).
    if who == Source::User {
        withdrawn(&f, &mut add);
        replaced_by(&f, &mut add);
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The text (lowercased) and its items, for the correction patterns to look around a marker.
struct Finder<'a> {
    lower: String,
    items: &'a [Item],
    base: usize,
    /// The user's own words (some corrections are only theirs).
    user: bool,
}

impl Finder<'_> {
    /// An item's range, relative to the text.
    fn rel(&self, it: &Item) -> (usize, usize) {
        (
            it.at.start.saturating_sub(self.base),
            it.at.end.saturating_sub(self.base),
        )
    }

    /// The last item (of `class`, if given) ending at most `max` words before `pos`.
    fn before(&self, pos: usize, max: usize, class: Option<ItemClass>) -> Option<usize> {
        self.items
            .iter()
            .enumerate()
            .filter(|(_, it)| {
                let (_, e) = self.rel(it);
                e <= pos && class.is_none_or(|c| c == it.class) && gap_ok(&self.lower[e..pos], max)
            })
            .map(|(k, _)| k)
            .next_back()
    }

    /// The first item (of `class`, if given) starting at most `max` words after `pos`.
    fn after(&self, pos: usize, max: usize, class: Option<ItemClass>) -> Option<usize> {
        self.items
            .iter()
            .enumerate()
            .filter(|(_, it)| {
                let (s, _) = self.rel(it);
                s >= pos && class.is_none_or(|c| c == it.class) && gap_ok(&self.lower[pos..s], max)
            })
            .map(|(k, _)| k)
            .next()
    }
}

/// `X, not Y`, `X rather than Y`, `not Y but X`.
fn not_or_rather_than(f: &Finder<'_>, add: &mut impl FnMut(Option<usize>, Option<usize>)) {
    let (lower, items) = (&f.lower, f.items);
    for marker in ["not ", "rather than "] {
        for p in find_words(lower, marker) {
            let end = p + marker.len();
            if marker == "not " && lower[..p].ends_with("no ") {
                continue;
            }
            let new = f.before(p, 6, None);
            match new {
                Some(n) => add(f.after(end, 16, Some(items[n].class)), Some(n)),
                None if marker == "not " => {
                    // not Y but X
                    if let Some(o) = f.after(end, 16, None) {
                        let (_, oe) = f.rel(&items[o]);
                        let tail = &lower[oe..];
                        if let Some(b) = tail.find(" but ")
                            && b <= 4
                        {
                            let n = f.after(oe + b + 5, 16, Some(items[o].class));
                            add(Some(o), n);
                        }
                    }
                }
                None => {}
            }
        }
    }
}

/// `X instead of Y`, `instead of Y, X`.
fn instead_of(f: &Finder<'_>, add: &mut impl FnMut(Option<usize>, Option<usize>)) {
    let (lower, items) = (&f.lower, f.items);
    for p in find_words(lower, "instead of ") {
        let end = p + "instead of ".len();
        let Some(o) = f.after(end, 16, None) else {
            continue;
        };
        let class = items[o].class;
        let n = items
            .iter()
            .enumerate()
            .filter(|(_, it)| it.class == class && f.rel(it).1 <= p && p - f.rel(it).1 <= 60)
            .map(|(k, _)| k)
            .next_back()
            .or_else(|| {
                let (_, oe) = f.rel(&items[o]);
                items
                    .iter()
                    .enumerate()
                    .filter(|(_, it)| {
                        it.class == class && f.rel(it).0 >= oe && f.rel(it).0 - oe <= 60
                    })
                    .map(|(k, _)| k)
                    .next()
            });
        add(Some(o), n);
    }
}

/// `changed from Y to X` (after a verb of change).
fn changed_from_to(f: &Finder<'_>, add: &mut impl FnMut(Option<usize>, Option<usize>)) {
    let (lower, items) = (&f.lower, f.items);
    let has_change_verb = |upto: usize| {
        lower[..upto]
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| CHANGE_VERBS.contains(&w))
    };
    for p in find_words(lower, "from ") {
        if !has_change_verb(p) {
            continue;
        }
        let Some(o) = f.after(p + 5, 16, None) else {
            continue;
        };
        let (_, oe) = f.rel(&items[o]);
        if let Some(t) = lower[oe..].find(" to ")
            && gap_ok(&lower[oe..oe + t], 4)
        {
            add(Some(o), f.after(oe + t + 4, 16, Some(items[o].class)));
        }
    }
}

/// `Y -> X`, `Y → X`, `Y => X`: a value changed, said with an arrow. Not a chain
/// (`parse → plan → fold`, `a.rs -> b.rs -> c.rs`), not a table row, not code (a return type
/// after `)`), and not what a process does (`spawns worker-1 → worker-2`): an arrow between
/// anything but figures and dates is a correction only in a sentence that says a change.
fn arrows(f: &Finder<'_>, add: &mut impl FnMut(Option<usize>, Option<usize>)) {
    let (lower, items) = (&f.lower, f.items);
    let all: Vec<(usize, &str)> = ["->", "→", "=>"]
        .iter()
        .flat_map(|a| lower.match_indices(a).map(|(p, _)| (p, *a)))
        .collect();
    if all.len() != 1 || lower.trim_start().starts_with('|') || lower.matches('|').count() >= 2 {
        return;
    }
    let (p, arrow) = all[0];
    // `fn f(v: u64) -> i64`, `def f(x) -> int`, `(a) => b`: a return type or a closure in
    // code, not a value changed.
    if lower[..p].trim_end().ends_with(')') {
        return;
    }
    let says_change = lower
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| CHANGE_VERBS.contains(&w) || matches!(w, "now" | "update" | "updated"));
    if let Some(o) = f.before(p, 3, None)
        && (says_change || matches!(items[o].class, ItemClass::Number | ItemClass::Date))
    {
        add(Some(o), f.after(p + arrow.len(), 3, Some(items[o].class)));
    }
}

/// `no longer Y, now X`.
fn no_longer(f: &Finder<'_>, add: &mut impl FnMut(Option<usize>, Option<usize>)) {
    let (lower, items) = (&f.lower, f.items);
    for p in find_words(lower, "no longer ") {
        let Some(o) = f.after(p + "no longer ".len(), 16, None) else {
            continue;
        };
        let (_, oe) = f.rel(&items[o]);
        let class = items[o].class;
        let n = items
            .iter()
            .enumerate()
            .find(|(_, it)| it.class == class && f.rel(it).0 >= oe && f.rel(it).0 - oe <= 60)
            .map(|(k, _)| k)
            // `X, no longer Y`: the current value before the marker.
            .or_else(|| {
                if !f.user {
                    return None;
                }
                items
                    .iter()
                    .enumerate()
                    .filter(|(_, it)| {
                        it.class == class && f.rel(it).1 <= p && p - f.rel(it).1 <= 60
                    })
                    .map(|(k, _)| k)
                    .next_back()
            });
        add(Some(o), n);
    }
}

/// Words after a value that withdraw it (`$3750 was withdrawn`, `Austin is off`).
#[rustfmt::skip]
const WITHDRAWN: &[&str] = &[
    "was withdrawn", "is withdrawn", "withdrawn", "was dropped", "is dropped", "was cancelled",
    "is cancelled", "was canceled", "is canceled", "is off", "is off the table", "no longer applies",
    "no longer stands", "is out", "was wrong", "is wrong", "is obsolete", "is superseded",
    "was superseded", "is void", "was retracted", "is retracted", "does not apply",
    "doesn't apply", "no longer holds",
];

/// Words before a value that withdraw it (`withdraw $3750`, `forget Austin`, `scratch 8080`).
#[rustfmt::skip]
const WITHDRAW: &[&str] = &["withdraw ", "withdrew ", "scratch ", "forget ", "drop ", "cancel "];

/// `Y was withdrawn` / `withdraw Y` next to X: the other value of Y's class in the sentence
/// (the nearest) replaces it.
fn withdrawn(f: &Finder<'_>, add: &mut impl FnMut(Option<usize>, Option<usize>)) {
    let (lower, items) = (&f.lower, f.items);
    let mut olds: Vec<usize> = Vec::new();
    for (k, it) in items.iter().enumerate() {
        let (s, e) = f.rel(it);
        if e > lower.len() || s > lower.len() {
            continue;
        }
        let after = lower[e..].trim_start_matches([' ', ',']);
        let before = lower[..s].trim_end_matches(['"', '\'', '`', ' ']);
        let before = &lower[..before.len()];
        let by_after = WITHDRAWN.iter().any(|w| {
            after.starts_with(w)
                && !after[w.len()..]
                    .chars()
                    .next()
                    .is_some_and(char::is_alphanumeric)
        });
        let by_before = WITHDRAW.iter().any(|w| {
            let w = w.trim_end();
            before.ends_with(w) && word_at(lower, before.len() - w.len(), w)
        });
        if by_after || by_before {
            olds.push(k);
        }
    }
    for o in olds {
        let (os, _) = f.rel(&items[o]);
        let n = items
            .iter()
            .enumerate()
            .filter(|(k, it)| *k != o && it.class == items[o].class && it.key != items[o].key)
            .min_by_key(|(_, it)| f.rel(it).0.abs_diff(os))
            .map(|(k, _)| k);
        add(Some(o), n);
    }
}

/// `Y, replaced by X`, `Y was replaced by X`, `replace Y with X`, `swap Y for X`.
fn replaced_by(f: &Finder<'_>, add: &mut impl FnMut(Option<usize>, Option<usize>)) {
    let (lower, items) = (&f.lower, f.items);
    for p in find_words(lower, "replaced by ") {
        let o = f.before(p, 4, None);
        if let Some(o) = o {
            add(
                Some(o),
                f.after(p + "replaced by ".len(), 4, Some(items[o].class)),
            );
        }
    }
    for (verb, with) in [
        ("replace ", " with "),
        ("swap ", " for "),
        ("replacing ", " with "),
    ] {
        for p in find_words(lower, verb) {
            let Some(o) = f.after(p + verb.len(), 4, None) else {
                continue;
            };
            let (_, oe) = f.rel(&items[o]);
            if let Some(w) = lower[oe..].find(with)
                && gap_ok(&lower[oe..oe + w], 4)
            {
                add(
                    Some(o),
                    f.after(oe + w + with.len(), 4, Some(items[o].class)),
                );
            }
        }
    }
}

/// Find the corrections a span states, in order.
pub fn corrections(pieces: &[Piece], units: &[Unit]) -> Vec<Correction> {
    let mut out: Vec<Correction> = Vec::new();
    let mut words_cache: HashMap<usize, HashSet<String>> = HashMap::new();
    for (ui, unit) in units.iter().enumerate() {
        if unit.call.is_some() || unit.items.is_empty() {
            continue;
        }
        let text = &pieces[unit.piece].text[unit.range.clone()];
        let lower = text.to_ascii_lowercase();
        let turn = pieces[unit.piece].turn;
        let direct = direct_corrections_in(text, &unit.items, unit.range.start, unit.source);
        for &(o, n) in &direct {
            let (old, new) = (&unit.items[o], &unit.items[n]);
            out.push(Correction::of(old, new, turn, ui));
        }
        if !direct.is_empty() {
            continue;
        }
        let user = unit.source == Source::User;
        let Some(marker_at) = INFERRED_MARKERS
            .iter()
            .chain(USER_MARKERS.iter().filter(|_| user))
            .filter_map(|m| lower.find(m).map(|p| p + m.len()))
            .min()
        else {
            continue;
        };
        let Some(new) = unit
            .items
            .iter()
            .find(|it| it.at.start >= unit.range.start + marker_at.min(lower.len()))
            .or_else(|| unit.items.last())
        else {
            continue;
        };
        let mine = content_words(text, &unit.items, unit.range.start);
        if mine.is_empty() {
            continue;
        }
        // The earlier sentence must share the subject: two content words when there are two
        // ("billing port"), not just "port".
        let need = mine.len().min(2);
        let mut best: Option<(usize, usize, &Item)> = None;
        let from = ui.saturating_sub(CORRECTION_LOOKBACK);
        for j in (from..ui).rev() {
            let u = &units[j];
            if u.call.is_some() {
                continue;
            }
            let candidates: Vec<&Item> = u
                .items
                .iter()
                .filter(|it| it.class == new.class && it.key != new.key)
                .collect();
            if candidates.is_empty() {
                continue;
            }
            let words = words_cache.entry(j).or_insert_with(|| {
                content_words(
                    &pieces[u.piece].text[u.range.clone()],
                    &u.items,
                    u.range.start,
                )
            });
            let score = words.intersection(&mine).count();
            if score >= need && best.is_none_or(|(s, _, _)| score > s) {
                // The candidate nearest a shared word.
                let utext = &pieces[u.piece].text;
                let shared: Vec<usize> = mine
                    .iter()
                    .filter(|w| words.contains(*w))
                    .filter_map(|w| {
                        lower_find(&utext[u.range.clone()], w).map(|p| p + u.range.start)
                    })
                    .collect();
                let pick = candidates
                    .iter()
                    .min_by_key(|it| {
                        shared
                            .iter()
                            .map(|&p| p.abs_diff(it.at.start))
                            .min()
                            .unwrap_or(usize::MAX)
                    })
                    .copied()
                    .unwrap_or(candidates[0]);
                best = Some((score, j, pick));
            }
        }
        if let Some((_, _, old)) = best {
            out.push(Correction::of(old, new, turn, ui));
        }
    }
    // A correction stands only while the conversation does not come back to the old value: a
    // later user or assistant sentence that states it (without the new value, not marked as
    // old) makes it current again ("restore ttl_seconds 900").
    out.retain(|c| {
        !units[c.unit + 1..].iter().any(|u| {
            matches!(
                u.source,
                Source::User | Source::Assistant | Source::ToolCall
            ) && u.items.iter().any(|it| it.key == c.old_key)
                && !u.items.iter().any(|it| it.key == c.new_key)
                && (u.call.is_some() || !marks_old(&pieces[u.piece].text[u.range.clone()]))
        })
    });
    out
}

pub(super) fn lower_find(hay: &str, word: &str) -> Option<usize> {
    let l = hay.to_lowercase();
    if l.len() != hay.len() {
        return None;
    }
    find_words(&l, word).next()
}

/// Words that mark a value as no longer current.
#[rustfmt::skip]
pub(super) const OLD_MARKERS: &[&str] = &[
    "superseded", "previously", "formerly", "earlier", "was", "were", "old", "older", "not",
    "instead", "longer", "replaced", "corrected", "correction", "changed", "from", "outdated",
    "obsolete", "initially", "originally", "before", "→", "⇒",
];

pub(super) fn marked_old(tokens: &[String]) -> bool {
    tokens.iter().any(|t| OLD_MARKERS.contains(&t.as_str()))
        || tokens
            .windows(2)
            .any(|w| (w[0] == "-" || w[0] == "=") && w[1] == ">")
}

/// Does `text` mark what it states as no longer current ("was", "not", "previously",
/// "superseded", "changed from", an arrow)?
pub(super) fn marks_old(text: &str) -> bool {
    marked_old(&norm_tokens(text))
}

/// A sentence's view for correction checks: its tokens and the keys of its items.
pub(super) struct SentenceView {
    toks: Vec<String>,
    keys: HashSet<String>,
}

impl SentenceView {
    fn new(text: &str) -> Self {
        Self {
            toks: norm_tokens(text),
            keys: extract(text).iter().flat_map(Item::registered).collect(),
        }
    }

    /// Does the sentence name the value: by its key, or — for a value that cannot be a common
    /// word (a digit, punctuation or several words) — by its words up to formatting?
    fn names(&self, key: &str, text: &str) -> bool {
        if self.keys.contains(key) {
            return true;
        }
        let t = norm_tokens(text);
        let distinctive = t.len() > 1 || text.chars().any(|c| !c.is_alphabetic());
        distinctive && contains_seq(&self.toks, &t)
    }
}

impl Correction {
    /// Does `text` state the old value as current: a sentence of it that names the old value,
    /// not the new one, and nothing that marks the old one as old ("was", "not", "superseded",
    /// "changed from", an arrow)?
    pub fn stale_in(&self, text: &str) -> bool {
        sentence_ranges(text).into_iter().any(|r| {
            let v = SentenceView::new(&text[r]);
            self.stale(&v, &[])
        })
    }

    fn stale(&self, v: &SentenceView, head: &[String]) -> bool {
        v.names(&self.old_key, &self.old)
            && !v.names(&self.new_key, &self.new)
            && !marked_old(&v.toks)
            && !marked_old(head)
    }
}

pub(super) fn superseded_in(
    summary: &str,
    corrections: &[Correction],
    max: usize,
) -> Vec<SupersededValue> {
    let sentences: Vec<(Vec<String>, SentenceView)> = summary_sentences(summary)
        .into_iter()
        .map(|(head, s)| (norm_tokens(&head), SentenceView::new(s)))
        .collect();
    // Corrections the summary itself states (to spot one turned around).
    let mut stated: HashSet<(String, String)> = HashSet::new();
    for line in summary.lines() {
        let items = extract(line);
        for (o, n) in direct_corrections(line, &items, 0) {
            stated.insert((items[o].key.clone(), items[n].key.clone()));
        }
    }
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for c in corrections {
        if !seen.insert((c.old_key.clone(), c.new_key.clone())) {
            continue;
        }
        if !sentences.iter().any(|(_, v)| v.names(&c.old_key, &c.old)) {
            continue;
        }
        let how = if stated.contains(&(c.new_key.clone(), c.old_key.clone())) {
            Some("reversed")
        } else if !sentences.iter().any(|(_, v)| v.names(&c.new_key, &c.new)) {
            Some("no-correction")
        } else if sentences.iter().any(|(head, v)| c.stale(v, head)) {
            Some("unmarked")
        } else {
            None
        };
        if let Some(how) = how {
            out.push(SupersededValue {
                class: c.class,
                old: c.old.clone(),
                new: c.new.clone(),
                turn: c.turn,
                how,
            });
        }
    }
    out.truncate(max.max(1));
    out
}
