//! Claims: what a summary binds its values to, checked against what the span binds them to.
//!
//! Words alone do not make a summary right: "142 passed, 87 failed" uses only figures the span
//! says, yet the span may say 13 failed and 87 lines read. The audit binds each salient value to
//! what it is about and checks the binding:
//! - a figure or a day/time with its noun ([`BindingKind::Figure`]): `13 failed`, `port 9090`,
//!   `cap $3750`, `standup on Thursday` — the word right after the value, else the word before
//!   it past filler (`the port is 9090`);
//! - a path with its verb ([`BindingKind::Action`]): `created src/config.rs` where the agent only
//!   read it;
//! - a status with its subject ([`BindingKind::Status`]): `tests pass` where the span's latest word
//!   on the tests is that they fail.
//!
//! A claim is *misstated* when the span never says the value next to its word and binds that word
//! to another value (or, for a path, shows only reads of it; for a status, last said the
//! opposite). Loose where the span is read (a value and its word in the same or a neighbouring
//! sentence support a claim), tight where the summary is read (only the word bound to the value):
//! a paraphrase stands, a swapped value does not.

use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

use super::*;

/// What a claim binds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BindingKind {
    /// A figure or a day/time with its noun.
    Figure,
    /// A path with what was done to it.
    Action,
    /// A status with its subject.
    Status,
}

impl BindingKind {
    pub fn as_str(self) -> &'static str {
        match self {
            BindingKind::Figure => "figure",
            BindingKind::Action => "action",
            BindingKind::Status => "status",
        }
    }
}

/// A claim of the summary that the span binds otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Misstatement {
    pub kind: BindingKind,
    /// The summary's words (`87 failed`, `created src/config.rs`, `tests pass`).
    pub claim: String,
    /// What the span says instead (`13 failed`, `read src/config.rs`, `tests fail`).
    pub span_says: String,
    /// The turn that says it.
    pub turn: u64,
    /// The piece (of the span) that says it: the caller maps it to a line.
    #[serde(skip)]
    pub piece: usize,
    /// The transcript line that says it, when the caller knows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
}

fn stemmer() -> &'static Stemmer {
    static S: OnceLock<Stemmer> = OnceLock::new();
    S.get_or_init(|| Stemmer::create(Algorithm::English))
}

fn stem(w: &str) -> String {
    stemmer().stem(&w.to_lowercase()).into_owned()
}

/// Words between a value and the noun before it that do not change what it is bound to.
#[rustfmt::skip]
const FILLER: &[&str] = &[
    "is", "are", "was", "were", "be", "been", "of", "at", "on", "for", "by", "until", "to", "set",
    "now", "about", "around", "approximately", "roughly", "exactly", "only", "just", "every",
    "each", "the", "a", "an", "its", "their", "our", "all", "total", "totals", "totalling",
    "equals", "equal", "reached", "hit", "down", "up",
];

/// Words a value is never bound to: too general to say what it is about.
#[rustfmt::skip]
const UNBOUND: &[&str] = &[
    "and", "or", "but", "than", "then", "with", "from", "into", "onto", "over", "under", "after",
    "before", "between", "via", "per", "vs", "versus", "times", "more", "less", "fewer", "most",
    "least", "other", "another", "same", "new", "old", "first", "last", "next", "previous",
    "turn", "turns", "step", "steps", "item", "items", "see", "also", "which",
    "that", "this", "these", "those", "there", "here", "when", "while", "where", "what", "who",
    "how", "why", "not", "no", "yes", "if", "so", "as", "like", "out", "off", "in", "it", "they",
    "we", "you", "i", "he", "she", "them", "us", "me", "him", "her", "his", "has", "have", "had",
    "do", "does", "did", "will", "would", "can", "could", "should", "may", "might", "must",
    "got", "get", "gets", "let", "make", "made", "says", "said", "use", "used", "using",
    // Who said it, not what a value is about (`user: 132`, `bash: 15 …`).
    "user", "assistant", "tool", "tools", "bash", "shell", "system", "result", "results",
    "output", "input", "call", "calls", "ran", "run", "read", "wrote", "edit", "write",
];

/// Words between a figure and the noun it counts.
#[rustfmt::skip]
const MODIFIERS: &[&str] = &[
    "new", "more", "other", "additional", "extra", "old", "existing", "separate", "distinct",
    "unique", "open", "remaining", "total", "unit", "integration", "failing", "passing", "broken",
    "flaky", "skipped", "ignored",
];

/// The char boundary at or before `at`.
fn floor_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The char boundary at or after `at`.
fn ceil_boundary(text: &str, mut at: usize) -> usize {
    at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at += 1;
    }
    at
}

/// A word of a text: its range and its lowercase form.
struct Word {
    at: Range<usize>,
    lower: String,
}

/// The words of `text` outside every item's range (`ms` of `250ms` is the item's).
fn words_of(text: &str, items: &[Item], base: usize) -> Vec<Word> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    let inside = |s: usize, e: usize| {
        items
            .iter()
            .any(|it| it.at.start < base + e && base + s < it.at.end)
    };
    let push = |s: usize, e: usize, out: &mut Vec<Word>| {
        if !inside(s, e) {
            out.push(Word {
                at: s..e,
                lower: text[s..e].to_lowercase(),
            });
        }
    };
    for (i, c) in text.char_indices() {
        let wordy = c.is_alphabetic() || (c == '\'' && start.is_some());
        match (wordy, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                push(s, i, &mut out);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        push(s, text.len(), &mut out);
    }
    out
}

fn content(w: &str) -> bool {
    w.chars().count() >= 3
        && !UNBOUND.contains(&w)
        && !FILLER.contains(&w)
        && !STOP_WORDS.contains(&w)
        && !w.contains('\'')
}

/// Only spaces (no line break) between: a value and the word it is bound to sit together.
fn tight(gap: &str) -> bool {
    gap.len() <= 3 && gap.chars().all(|c| c == ' ' || c == '\t')
}

/// Before a value: spaces only. A colon starts a field or a list of values (`logs:
/// 2026-11-28T18:31Z, …`), not a claim about each one.
fn tight_before(gap: &str) -> bool {
    tight(gap)
}

/// A value bound to a word.
#[derive(Debug, Clone)]
struct Binding {
    item: Item,
    /// The stem of the word it is bound to.
    word: String,
    /// The value and its word as written (`87 failed`).
    text: String,
    /// A count's status (`397 tests passed` binds 397 to `passed` too): misstated on its own,
    /// whatever the noun's binding.
    status: bool,
}

/// The values of a text (figures and days/times) and the words each is bound to: the content
/// word right after it, and the content word before it past filler words (`port 9090 latency`
/// binds 9090 both ways: a claim stands when either binding does).
fn bindings(text: &str, items: &[Item], base: usize) -> Vec<Binding> {
    let words = words_of(text, items, base);
    let mut out = Vec::new();
    for it in items {
        if !matches!(it.class, ItemClass::Number | ItemClass::Date) {
            continue;
        }
        let (s, e) = (it.at.start - base, it.at.end - base);
        if e > text.len() || !text.is_char_boundary(s) || !text.is_char_boundary(e) {
            continue;
        }
        // The noun a figure counts, past a modifier or two (`13 new tests`, `3 failing checks`).
        let right = {
            let mut end = e;
            let mut found = None;
            for w in words.iter().filter(|w| w.at.start >= e).take(3) {
                if !tight(&text[end..w.at.start]) {
                    break;
                }
                if MODIFIERS.contains(&w.lower.as_str()) {
                    end = w.at.end;
                    continue;
                }
                found = content(&w.lower).then_some(w);
                break;
            }
            found
        };
        let left = || {
            let mut end = s;
            let mut skipped = 0;
            for w in words.iter().rev().filter(|w| w.at.end <= s) {
                let gap = &text[w.at.end..end];
                let ok = if end == s {
                    tight_before(gap)
                } else {
                    tight(gap)
                };
                if !ok {
                    return None;
                }
                if FILLER.contains(&w.lower.as_str()) && skipped < 2 {
                    skipped += 1;
                    end = w.at.start;
                    continue;
                }
                return content(&w.lower).then_some(w);
            }
            None
        };
        // A verb before a counted noun (`Added 13 new tests`) is not what the figure is about.
        let left = left().filter(|w| {
            right.is_none()
                || !(w.lower.ends_with("ed") || w.lower.ends_with("ing") || w.lower.ends_with('s'))
        });
        // The status of what a figure counts: `397 tests passed`, `13 checks failing`.
        let status = right.and_then(|noun| {
            words
                .iter()
                .find(|w| w.at.start >= noun.at.end)
                .filter(|w| tight(&text[noun.at.end..w.at.start]) && status_of(&w.lower).is_some())
        });
        // A capitalised word is a heading's or a name's (`### Background Processing`), not a
        // noun a figure is about.
        let lower_case = |w: &&Word| !text[w.at.clone()].starts_with(char::is_uppercase);
        let (right, left) = (right.filter(lower_case), left.filter(lower_case));
        for w in right.into_iter().chain(left) {
            let shown = if w.at.start >= e {
                &text[s..w.at.end]
            } else {
                &text[w.at.start..e]
            };
            out.push(Binding {
                item: it.clone(),
                word: stem(&w.lower),
                text: shown.split_whitespace().collect::<Vec<_>>().join(" "),
                status: false,
            });
        }
        if let Some(w) = status {
            out.push(Binding {
                item: it.clone(),
                word: stem(&w.lower),
                text: text[s..w.at.end]
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
                status: true,
            });
        }
    }
    out
}

/// Status words: what a subject is (`tests pass`, `the build is failing`): (ok, present).
fn status_of(w: &str) -> Option<(bool, bool)> {
    match w {
        "pass" | "passes" | "passing" | "green" | "succeeds" | "succeeding" => Some((true, true)),
        "fail" | "fails" | "failing" | "broken" | "red" => Some((false, true)),
        "passed" | "succeeded" => Some((true, false)),
        "failed" | "broke" => Some((false, false)),
        _ => None,
    }
}

/// A subject with its status.
struct Status {
    subject: String,
    ok: bool,
    /// Said in the present tense (`pass`, `failing`): what is so now, not history.
    present: bool,
    text: String,
}

/// The statuses a text states: a content word, then optionally `is/are/now/still/all`, then a
/// status word.
fn statuses(text: &str, items: &[Item], base: usize) -> Vec<Status> {
    let words = words_of(text, items, base);
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let Some((ok, present)) = status_of(&w.lower) else {
            continue;
        };
        // A command right before: `cargo test` passes, `npm run build` fails.
        if let Some(cmd) = items.iter().find(|it| {
            it.class == ItemClass::Command
                && it.at.end <= base + w.at.start
                && text
                    .get(it.at.end.saturating_sub(base)..w.at.start)
                    .is_some_and(|g| {
                        g.len() <= 3 && g.chars().all(|c| matches!(c, ' ' | '`' | '\''))
                    })
        }) {
            let l = cmd.text.to_lowercase();
            if let Some(subject) = ["test", "build", "lint", "check"]
                .iter()
                .find(|s| l.contains(*s))
            {
                out.push(Status {
                    subject: stem(subject),
                    ok,
                    present,
                    text: format!("{} {}", cmd.text, w.lower),
                });
                continue;
            }
        }
        let mut j = i;
        let mut end = w.at.start;
        let mut skipped = 0;
        while j > 0 {
            j -= 1;
            let prev = &words[j];
            if !tight(&text[prev.at.end..end]) {
                break;
            }
            if matches!(
                prev.lower.as_str(),
                "is" | "are" | "now" | "still" | "all" | "currently"
            ) && skipped < 2
            {
                skipped += 1;
                end = prev.at.start;
                continue;
            }
            if content(&prev.lower) && status_of(&prev.lower).is_none() {
                out.push(Status {
                    subject: stem(&prev.lower),
                    ok,
                    present,
                    text: text[prev.at.start..w.at.end]
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" "),
                });
            }
            break;
        }
    }
    out
}

/// What a summary says was done to a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Done {
    Created,
    Edited,
    Deleted,
}

fn done_of(w: &str) -> Option<Done> {
    match w {
        "created" | "creates" | "create" | "creating" | "added" | "adds" | "wrote" | "writes"
        | "written" | "generated" | "scaffolded" => Some(Done::Created),
        "edited" | "edits" | "modified" | "modifies" | "updated" | "updates" | "changed"
        | "patched" | "rewrote" | "rewritten" | "refactored" => Some(Done::Edited),
        "deleted" | "deletes" | "removed" | "removes" | "erased" => Some(Done::Deleted),
        _ => None,
    }
}

/// Words that, near a path in the span, say it was (or is to be) changed: the span leaves room
/// for a summary's "created" or "edited".
#[rustfmt::skip]
const CHANGE_WORDS: &[&str] = &[
    "created", "create", "creates", "creating", "wrote", "write", "writes", "writing", "written",
    "edited", "edit", "edits", "editing", "modified", "modify", "updated", "update", "updating",
    "changed", "change", "added", "add", "adding", "generated", "generate", "saved", "save",
    "patched", "patch", "moved", "move", "renamed", "rename", "copied", "copy", "replaced",
    "deleted", "delete", "removed", "remove", "fixed", "fix", "refactored", "rewrote",
    "overwrote", "overwritten", "touched", "applied", "apply", "made", "make", "new",
];

/// How write tools report what they did.
#[rustfmt::skip]
const WRITE_REPORTS: &[&str] = &[
    "created successfully", "successfully created", "has been created", "has been updated",
    "updated successfully", "successfully updated", "successfully wrote", "wrote to", "written to",
    "saved to", "has been deleted", "has been removed", "successfully deleted", "applied patch",
    "success. updated the following files", "edited successfully", "successfully replaced",
];

#[rustfmt::skip]
const DELETE_WORDS: &[&str] = &[
    "deleted", "delete", "deletes", "deleting", "removed", "remove", "removes", "removing", "rm",
    "unlink", "unlinked", "erased", "erase", "dropped", "moved", "renamed", "mv", "trash",
];

/// Whether a shell command may change the files it names: a redirect into a file, an in-place
/// edit, a copy, move, removal, creation, patch or checkout. Anything else (a test run, a build,
/// `cat`, `grep`, `git diff`) only uses them.
fn writes_command(cmd: &str) -> bool {
    let l = cmd.to_ascii_lowercase();
    let l = l
        .replace("2>&1", "")
        .replace(">/dev/null", "")
        .replace("> /dev/null", "");
    if l.contains('>') || l.contains(" -i") || l.contains("--in-place") {
        return true;
    }
    let words: Vec<&str> = l
        .split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | ')'))
        .filter(|w| !w.is_empty())
        .collect();
    words.iter().enumerate().any(|(k, w)| {
        let w = w.rsplit('/').next().unwrap_or(w);
        matches!(
            w,
            "tee"
                | "mv"
                | "cp"
                | "rm"
                | "touch"
                | "mkdir"
                | "install"
                | "patch"
                | "truncate"
                | "ln"
                | "rsync"
                | "dd"
                | "unzip"
                | "tar"
                | "rmdir"
                | "shred"
                | "chmod"
        ) || (w == "git"
            && words.get(k + 1).is_some_and(|s| {
                matches!(
                    *s,
                    "checkout"
                        | "restore"
                        | "apply"
                        | "mv"
                        | "rm"
                        | "reset"
                        | "stash"
                        | "am"
                        | "cherry-pick"
                        | "revert"
                        | "merge"
                        | "rebase"
                        | "pull"
                )
            }))
    })
}

/// The same file: equal, or one ends with the other at a `/` (`src/a.rs`, `/repo/src/a.rs`).
fn same_path(a: &str, b: &str) -> bool {
    let (a, b) = (a.trim_start_matches("./"), b.trim_start_matches("./"));
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    long == short || (long.ends_with(short) && long[..long.len() - short.len()].ends_with('/'))
}

/// The claims a summary makes that the span binds otherwise.
pub(super) fn misstated(
    pieces: &[Piece],
    units: &[Unit],
    context: &[&str],
    summary: &str,
    max: usize,
) -> Vec<Misstatement> {
    let span = SpanClaims::new(pieces, units, context);
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    let expanded = pattern::expand(summary);
    for line in expanded.lines() {
        for r in sentence_ranges(line) {
            let s = &line[r.clone()];
            let items = extract(s);
            let old = marks_old(s);
            // A value bound both ways is misstated only when both bindings are.
            let all = bindings(s, &items, 0);
            for b in all.iter().filter(|b| b.status) {
                if let Some(m) = span.figure(b)
                    && seen.insert((BindingKind::Status, m.claim.clone()))
                {
                    out.push(Misstatement {
                        kind: BindingKind::Status,
                        ..m
                    });
                }
            }
            let sides: Vec<Binding> = all.into_iter().filter(|b| !b.status).collect();
            for sides in sides.chunk_by(|a, b| a.item.at == b.item.at) {
                let found: Vec<Option<Misstatement>> =
                    sides.iter().map(|b| span.figure(b)).collect();
                if found.iter().all(Option::is_some)
                    && let Some(Some(m)) = found.into_iter().next()
                    && seen.insert((BindingKind::Figure, m.claim.clone()))
                {
                    out.push(m);
                }
            }
            for it in items.iter().filter(|i| i.class == ItemClass::Path) {
                if let Some(done) = said_done(s, it)
                    && let Some(m) = span.action(it, done)
                    && seen.insert((BindingKind::Action, m.claim.clone()))
                {
                    out.push(m);
                }
            }
            for st in statuses(s, &items, 0) {
                // A present status marked as old ("was failing before") is history.
                if st.present && old {
                    continue;
                }
                if let Some(m) = span.status(&st, &expanded)
                    && seen.insert((BindingKind::Status, st.text.clone()))
                {
                    out.push(m);
                }
            }
        }
    }
    out.truncate(max.max(1));
    out
}

/// What the summary's sentence says was done to the path `it`: a verb in the three words
/// before it (`created the file src/a.rs`), or right after it (`src/a.rs was deleted`).
fn said_done(s: &str, it: &Item) -> Option<Done> {
    let words = words_of(s, std::slice::from_ref(it), 0);
    let before: Vec<&Word> = words.iter().filter(|w| w.at.end <= it.at.start).collect();
    let joined = |gap: &str| {
        gap.chars()
            .all(|c| matches!(c, ' ' | '`' | '\'' | '"' | '*'))
    };
    let mut start = it.at.start;
    for w in before.iter().rev().take(3) {
        if !joined(&s[w.at.end..start]) {
            break;
        }
        start = w.at.start;
        if let Some(d) = done_of(&w.lower) {
            return Some(d);
        }
        if !matches!(
            w.lower.as_str(),
            "the" | "a" | "an" | "new" | "file" | "files" | "config" | "script" | "module"
        ) {
            break;
        }
    }
    // After it, only a passive (`src/a.rs was deleted`, `src/a.rs (created)`): words joined by
    // spaces, not a heading's colon (`a.rs: Removed the cap` removed something from it).
    let mut end = it.at.end;
    for w in words.iter().filter(|w| w.at.start >= it.at.end).take(3) {
        if !joined(&s[end..w.at.start].replace('(', "")) {
            break;
        }
        if let Some(d) = done_of(&w.lower)
            && w.lower.ends_with("ed")
        {
            return Some(d);
        }
        if !matches!(
            w.lower.as_str(),
            "was" | "is" | "were" | "has" | "been" | "got"
        ) {
            break;
        }
        end = w.at.end;
    }
    None
}

/// The span's bindings, indexed for the checks.
struct SpanClaims<'a> {
    pieces: &'a [Piece],
    units: &'a [Unit],
    /// What the summarizer also read, after the span (the verbatim tail): a claim it supports
    /// stands, and its word on a status is the latest.
    context: &'a [&'a str],
    /// The span's figures by value and by word, built when a summary first states a figure
    /// (most summaries of long tool runs state few: the span is not read for them otherwise).
    figures: std::cell::OnceCell<Figures>,
}

/// The span's figures, indexed for the figure checks.
struct Figures {
    /// Every value bound to a word: (stem, unit, binding).
    bound: HashMap<String, Vec<(usize, Binding)>>,
    /// Units that say a value, by key.
    saying: HashMap<String, Vec<usize>>,
    /// Units (not calls) that say a value and a word, by the word's stem.
    word_units: HashMap<String, Vec<usize>>,
}

impl Figures {
    fn of(pieces: &[Piece], units: &[Unit]) -> Self {
        let mut bound: HashMap<String, Vec<(usize, Binding)>> = HashMap::new();
        let mut saying: HashMap<String, Vec<usize>> = HashMap::new();
        let mut word_units: HashMap<String, Vec<usize>> = HashMap::new();
        for (ui, u) in units.iter().enumerate() {
            for it in &u.items {
                for k in it.registered() {
                    saying.entry(k).or_default().push(ui);
                }
            }
            if u.call.is_some() || u.items.is_empty() {
                continue;
            }
            let text = &pieces[u.piece].text[u.range.clone()];
            let mut stems: Vec<String> = words_of(text, &[], 0)
                .into_iter()
                .filter(|w| content(&w.lower))
                .map(|w| stem(&w.lower))
                .collect();
            stems.sort_unstable();
            stems.dedup();
            for st in stems {
                word_units.entry(st).or_default().push(ui);
            }
            for b in bindings(text, &u.items, u.range.start) {
                bound.entry(b.word.clone()).or_default().push((ui, b));
            }
        }
        Self {
            bound,
            saying,
            word_units,
        }
    }
}

impl<'a> SpanClaims<'a> {
    fn new(pieces: &'a [Piece], units: &'a [Unit], context: &'a [&'a str]) -> Self {
        Self {
            pieces,
            units,
            context,
            figures: std::cell::OnceCell::new(),
        }
    }

    fn figures(&self) -> &Figures {
        self.figures
            .get_or_init(|| Figures::of(self.pieces, self.units))
    }

    /// Lines of the context that hold `needle` (case-insensitive).
    fn context_lines<'s>(&'s self, needle: &'s str) -> impl Iterator<Item = &'s str> + 's {
        let needle = needle.to_lowercase();
        self.context
            .iter()
            .flat_map(|t| t.lines())
            .filter(move |l| l.to_lowercase().contains(&needle))
    }

    fn text(&self, ui: usize) -> &str {
        let u = &self.units[ui];
        &self.pieces[u.piece].text[u.range.clone()]
    }

    /// The values of `class` that unit `ui` (with its neighbours in the same piece) says next to
    /// the word `word` (a stem): in a call's arguments, any of the call's values when the word is
    /// among them; in text, a value with no other value of the class between it and the word
    /// (`standup on Thursday and retro on Friday` does not bind Friday to the standup). Each with
    /// the text from the word to the value.
    fn adjacent(&self, ui: usize, word: &str, class: ItemClass) -> Vec<(&'a Item, String)> {
        let u = &self.units[ui];
        if let Some(c) = &u.call {
            let has = c
                .values
                .iter()
                .flat_map(|v| words_of(v, &[], 0))
                .any(|w| stem(&w.lower) == word);
            return if has {
                u.items
                    .iter()
                    .filter(|it| it.class == class)
                    .map(|it| (it, it.text.clone()))
                    .collect()
            } else {
                Vec::new()
            };
        }
        let units = self.units;
        let near: Vec<&'a Unit> = (ui.saturating_sub(1)..=(ui + 1).min(units.len() - 1))
            .map(|j| &units[j])
            .filter(|n| n.piece == u.piece && n.call.is_none())
            .collect();
        let text = &self.pieces[u.piece].text;
        let (lo, hi) = (
            near.iter().map(|n| n.range.start).min().unwrap_or(0),
            near.iter().map(|n| n.range.end).max().unwrap_or(0),
        );
        let values: Vec<&'a Item> = near
            .iter()
            .flat_map(|n| n.items.iter())
            .filter(|it| it.class == class)
            .collect();
        let words: Vec<Range<usize>> = words_of(&text[lo..hi], &[], 0)
            .into_iter()
            .filter(|w| stem(&w.lower) == word)
            .map(|w| w.at.start + lo..w.at.end + lo)
            .collect();
        let mut out = Vec::new();
        for v in &values {
            for w in &words {
                let (a, z) = if w.start < v.at.start {
                    (w.end, v.at.start)
                } else {
                    (v.at.end, w.start)
                };
                let between = values
                    .iter()
                    .any(|o| o.key != v.key && o.at.start >= a && o.at.end <= z);
                if !between && z.saturating_sub(a) <= 80 {
                    let (s, e) = (w.start.min(v.at.start), w.end.max(v.at.end));
                    let shown = text
                        .get(s..e)
                        .unwrap_or(&v.text)
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" ");
                    out.push((*v, shown));
                    break;
                }
            }
        }
        out
    }

    /// A figure claim the span binds otherwise: the span never says the value next to the word
    /// (nor does the tail the summarizer read), says the value somewhere, and says the word next
    /// to another value of the same class.
    fn figure(&self, b: &Binding) -> Option<Misstatement> {
        let units: Vec<usize> = b
            .item
            .lookups()
            .iter()
            .filter_map(|k| self.figures().saying.get(k))
            .flatten()
            .copied()
            .collect();
        if units.is_empty() {
            return None; // not in the span: an invention, not a misstatement
        }
        let is_v = |o: &Item| {
            o.key == b.item.key
                || o.lookups().iter().any(|k| b.item.registered().contains(k))
                || b.item.lookups().iter().any(|k| o.registered().contains(k))
        };
        if let Some(others) = self.figures().bound.get(&b.word)
            && others.iter().any(|(_, o)| is_v(&o.item))
        {
            return None;
        }
        if units.iter().any(|&u| {
            self.adjacent(u, &b.word, b.item.class)
                .iter()
                .any(|(v, _)| is_v(v))
        }) {
            return None;
        }
        if self
            .context_lines(&b.item.text)
            .any(|l| words_of(l, &[], 0).iter().any(|w| stem(&w.lower) == b.word))
        {
            return None;
        }
        // What the span binds the word to instead: tightly, else next to it.
        let tight = self.figures().bound.get(&b.word).and_then(|others| {
            others
                .iter()
                .rev()
                .find(|(_, o)| o.item.class == b.item.class)
                .map(|(ui, o)| (*ui, o.text.clone()))
        });
        let (ui, says) = tight.or_else(|| {
            self.figures()
                .word_units
                .get(&b.word)?
                .iter()
                .take(500)
                .find_map(|&ui| {
                    self.adjacent(ui, &b.word, b.item.class)
                        .into_iter()
                        .find(|(v, _)| !is_v(v))
                        .map(|(_, shown)| (ui, shown))
                })
        })?;
        Some(self.cite(BindingKind::Figure, b.text.clone(), says, ui))
    }

    /// A path the summary says was created, edited or deleted, where the span shows only reads
    /// of it (for a deletion: no deletion at all) and no word of changing it.
    fn action(&self, it: &Item, done: Done) -> Option<Misstatement> {
        let mut first_read: Option<(usize, &'static str)> = None;
        let mut changed = false;
        let mut deleted = false;
        let mut named = false;
        for (ui, u) in self.units.iter().enumerate() {
            let has = u
                .items
                .iter()
                .any(|x| x.class == ItemClass::Path && same_path(&x.text, &it.text));
            if !has {
                continue;
            }
            named = true;
            match &u.call {
                Some(c) => {
                    let act = action_of(&c.name);
                    let cmd = c.values.first().map(String::as_str).unwrap_or("");
                    match act {
                        Some("read" | "searched") => {
                            first_read.get_or_insert((ui, act.unwrap_or("read")));
                        }
                        Some("ran") if !writes_command(cmd) => {
                            first_read.get_or_insert((ui, "read"));
                        }
                        Some("ran") => {
                            changed = true;
                            let l = cmd.to_ascii_lowercase();
                            deleted |= l
                                .split(|c: char| !c.is_alphanumeric())
                                .any(|w| DELETE_WORDS.contains(&w));
                        }
                        Some(_) => changed = true,
                        // Another tool that names the path may have changed it (a sub-agent's
                        // task writes files too), save one that only fetches or looks up.
                        None => {
                            let l = c.name.to_ascii_lowercase();
                            changed |= !["fetch", "web", "lookup", "todo"]
                                .iter()
                                .any(|w| l.contains(w));
                            deleted |= ["delete", "remove", "unlink"].iter().any(|w| l.contains(w));
                        }
                    }
                }
                None if u.source == Source::ToolResult => {
                    // A tool's own report of a write (`File created successfully at: …`, `The
                    // file … has been updated`) is what the call did; any other output that
                    // names the path (a search hit, a listing, code) says nothing of changing it.
                    let l = self.text(ui).to_lowercase();
                    let report = WRITE_REPORTS.iter().any(|r| l.contains(r));
                    changed |= report;
                    deleted |= report && DELETE_WORDS.iter().any(|w| l.contains(w));
                }
                None => {
                    // A word of change next to the path, in the user's or the assistant's words.
                    let text = self.text(ui);
                    let base = u.range.start;
                    for x in u
                        .items
                        .iter()
                        .filter(|x| x.class == ItemClass::Path && same_path(&x.text, &it.text))
                    {
                        let (s0, e0) = (x.at.start - base, x.at.end - base);
                        let words = words_of(text, &u.items, base);
                        let near: Vec<&Word> = words
                            .iter()
                            .filter(|w| w.at.end <= s0)
                            .rev()
                            .take(4)
                            .chain(words.iter().filter(|w| w.at.start >= e0).take(4))
                            .collect();
                        changed |= near
                            .iter()
                            .any(|w| CHANGE_WORDS.contains(&w.lower.as_str()));
                        deleted |= near
                            .iter()
                            .any(|w| DELETE_WORDS.contains(&w.lower.as_str()));
                    }
                }
            }
        }
        if !named {
            return None;
        }
        // The span itself says it, in any entry (a plan that says `Create src/a.rs`, copied):
        // the summary repeats what it read.
        let family: &[&str] = match done {
            Done::Created => &["creat", "add", "write", "wrote", "written", "generat"],
            Done::Edited => &[
                "edit", "modifi", "updat", "chang", "patch", "rewrit", "refactor",
            ],
            Done::Deleted => &["delet", "remov", "eras"],
        };
        let says_it = self.units.iter().any(|u| {
            u.call.is_none()
                && u.items
                    .iter()
                    .any(|x| x.class == ItemClass::Path && same_path(&x.text, &it.text))
                && {
                    let text = &self.pieces[u.piece].text;
                    u.items
                        .iter()
                        .filter(|x| x.class == ItemClass::Path && same_path(&x.text, &it.text))
                        .any(|x| {
                            let lo = floor_boundary(text, x.at.start.saturating_sub(40));
                            let hi = ceil_boundary(text, (x.at.end + 30).min(text.len()));
                            words_of(&text[lo..hi], &[], 0).iter().any(|w| {
                                let st = stem(&w.lower);
                                family.iter().any(|f| st.starts_with(f))
                            })
                        })
                }
        });
        if says_it {
            return None;
        }
        // The tail the summarizer also read may say it.
        for l in self.context_lines(&it.text) {
            let words = words_of(l, &[], 0);
            changed |= words
                .iter()
                .any(|w| CHANGE_WORDS.contains(&w.lower.as_str()));
            deleted |= words
                .iter()
                .any(|w| DELETE_WORDS.contains(&w.lower.as_str()));
        }
        let verb = match done {
            Done::Created => "created",
            Done::Edited => "edited",
            Done::Deleted => "deleted",
        };
        let wrong = match done {
            Done::Created | Done::Edited => !changed,
            Done::Deleted => !deleted,
        };
        if !wrong {
            return None;
        }
        let (ui, how) = first_read.or_else(|| {
            // Deleted, but the span only wrote or named it.
            self.units
                .iter()
                .position(|u| {
                    u.items
                        .iter()
                        .any(|x| x.class == ItemClass::Path && same_path(&x.text, &it.text))
                })
                .map(|ui| (ui, if changed { "changed" } else { "named" }))
        })?;
        if done != Done::Deleted && first_read.is_none() {
            return None;
        }
        Some(self.cite(
            BindingKind::Action,
            format!("{verb} {}", it.text),
            format!("{how} {}", it.text),
            ui,
        ))
    }

    /// A status the span contradicts: in the present tense, one the span's latest word on the
    /// same subject contradicts, when the summary nowhere states that latest status; in the past
    /// tense (history), one the span never says of the subject while it says the opposite.
    fn status(&self, st: &Status, summary: &str) -> Option<Misstatement> {
        let mut latest: Option<(usize, Status)> = None;
        let mut ever = false;
        for (ui, u) in self.units.iter().enumerate() {
            if u.call.is_some() {
                continue;
            }
            let text = self.text(ui);
            if !text
                .to_lowercase()
                .contains(&st.subject[..st.subject.len().min(4)])
            {
                continue;
            }
            for s in statuses(text, &u.items, u.range.start) {
                if s.subject == st.subject {
                    ever |= s.ok == st.ok;
                    latest = Some((ui, s));
                }
            }
        }
        let (ui, last) = latest?;
        if last.ok == st.ok || (!st.present && ever) {
            return None;
        }
        // The tail the summarizer also read has the last word when it says the same.
        let prefix = &st.subject[..st.subject.len().min(4)];
        let tail: Vec<Status> = self
            .context_lines(prefix)
            .flat_map(|l| statuses(l, &extract(l), 0))
            .filter(|s| s.subject == st.subject)
            .collect();
        if tail.iter().any(|s| s.ok == st.ok) {
            return None;
        }
        // The summary states the latest status too (a history: "failed, then passes").
        let also = summary.lines().any(|l| {
            let items = extract(l);
            statuses(l, &items, 0)
                .iter()
                .any(|s| s.subject == st.subject && s.ok == last.ok)
        });
        if also {
            return None;
        }
        Some(self.cite(BindingKind::Status, st.text.clone(), last.text, ui))
    }

    fn cite(&self, kind: BindingKind, claim: String, span_says: String, ui: usize) -> Misstatement {
        let piece = self.units[ui].piece;
        Misstatement {
            kind,
            claim: capped(&claim, 160),
            span_says: capped(&span_says, 160),
            turn: self.pieces[piece].turn,
            piece,
            line: None,
        }
    }
}
