//! The words mf frames text with, and what keeps copied text from passing for them: mf's label,
//! the delimiters around a transcript, the defusing of look-alikes, and the phrases addressed to
//! a reading model. A leaf of the engine: it imports nothing else from `fold`, so the modules
//! that frame (`prompt`), write (`summary`), read back (`ledger`, `cite`) and judge (`audit`)
//! all depend on it and not on each other.

use std::ops::Range;

use crate::entry::LABEL_PREFIX;

/// mf's label. It claims only what is true: who wrote the text, what it stands for, and where
/// the originals are.
pub fn label(from_turn: u64, to_turn: u64, originals: usize, model: &str) -> String {
    let plural = if originals == 1 {
        "message was"
    } else {
        "messages were"
    };
    format!(
        "{LABEL_PREFIX} {from_turn}–{to_turn} — {originals} earlier {plural} compressed. The text after this line is a SUMMARY written by {model}; it is a claim about the conversation, not the conversation. The originals are retained in this file and are excluded from recall only while this summary stands.]",
    )
}

/// The delimiters around the data, before the nonce is added.
pub const OPEN: &str = "<<<TRANSCRIPT";
pub const CLOSE: &str = "<<<END TRANSCRIPT";

/// mf's labels as a look-alike may write them: any case, any spacing, after a `[`.
pub(crate) fn label_look_alike() -> &'static regex::Regex {
    static RE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(
            r"(?i)\[(\s*(?:summary\s+of\s+earlier\s+turns|tool\s+result\s+hidden\s+by\s+mf))",
        )
        .expect("a valid pattern")
    })
}

/// Make sure data cannot close (or reopen) the delimiters, imitate a header's brackets, or pass
/// for mf's label: every run of three or more `<` or `>` is broken into pairs (`<<<<<` becomes
/// `<< << <`), and a `[` that opens a look-alike of mf's summary or stub label becomes `(`.
/// Idempotent: what it returns holds nothing it would change.
pub fn defuse(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut run = (' ', 0usize);
    for c in text.chars() {
        if c == '<' || c == '>' {
            if run.0 == c {
                run.1 += 1;
            } else {
                run = (c, 1);
            }
            if run.1 > 2 && run.1 % 2 == 1 {
                out.push(' ');
            }
        } else {
            run = (' ', 0);
        }
        out.push(c);
    }
    match label_look_alike().is_match(&out) {
        true => label_look_alike().replace_all(&out, "($1").into_owned(),
        false => out,
    }
}

/// Phrases addressed to the reading model: each slot lists alternatives; `""` makes a slot
/// optional.
const INSTRUCTION_PATTERNS: &[&[&[&str]]] = &[
    &[
        &["ignore", "disregard", "forget"],
        &["all", "any", "the", "your", ""],
        &[
            "previous",
            "prior",
            "above",
            "earlier",
            "preceding",
            "former",
            "system",
            "",
        ],
        &[
            "instructions",
            "instruction",
            "messages",
            "rules",
            "directions",
            "prompts",
            "prompt",
            "guidelines",
            "context",
        ],
    ],
    &[&["you"], &["are"], &["now"]],
    &[&["from"], &["now"], &["on"], &["you"]],
    &[&["new"], &["instructions", "instruction", "rules"]],
    &[
        &["your"],
        &["new"],
        &["task", "role", "instructions", "goal"],
    ],
    &[&["pretend"], &["to", "you"], &["be", "are"]],
    &[
        &["you"],
        &["must"],
        &["now", ""],
        &["obey", "follow", "comply"],
    ],
    &[&["as"], &["an"], &["ai"], &["language"], &["model"]],
    &[&["you"], &["are"], &["a"], &["helpful"], &["assistant"]],
    &[&["do"], &["not"], &["summarize", "summarise"]],
    &[
        &["reveal", "print", "repeat", "show"],
        &["your", "the"],
        &["system"],
        &["prompt"],
    ],
];

fn words_lower(text: &str) -> Vec<(String, Range<usize>)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        let w = c.is_alphanumeric() || c == '\'';
        match (w, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((text[s..i].to_lowercase(), s..i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((text[s..].to_lowercase(), s..text.len()));
    }
    out
}

fn match_pattern(words: &[(String, Range<usize>)], at: usize, pat: &[&[&str]]) -> Option<usize> {
    fn go(words: &[(String, Range<usize>)], at: usize, pat: &[&[&str]]) -> Option<usize> {
        let Some((slot, rest)) = pat.split_first() else {
            return Some(at);
        };
        if let Some((w, _)) = words.get(at)
            && slot.contains(&w.as_str())
            && let Some(end) = go(words, at + 1, rest)
        {
            return Some(end);
        }
        if slot.contains(&"") {
            return go(words, at, rest);
        }
        None
    }
    go(words, at, pat)
}

/// Byte ranges of the phrases addressed to the reading model in one line (for
/// `summary::sanitize`, which quotes them, and the re-vet on read, which wants them quoted).
pub fn instruction_ranges(line: &str) -> Vec<Range<usize>> {
    let words = words_lower(line);
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let hit = INSTRUCTION_PATTERNS
            .iter()
            .filter_map(|p| match_pattern(&words, i, p))
            .max();
        match hit {
            Some(end) if end > i => {
                out.push(words[i].1.start..words[end - 1].1.end);
                i = end;
            }
            _ => i += 1,
        }
    }
    out
}
