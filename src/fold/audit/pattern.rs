//! Pattern lines: one line that stands for many of the same shape, and what it stands for.
//!
//! A long agent run repeats itself — a hundred `echo line N | tee out-N.txt` calls, thirty reads
//! of `out-N.txt`. Listed one by one they cannot fit a summary's budget; dropped, they are facts
//! lost. A pattern line writes the shape once with `{n}` where the number varies, and the values
//! after it: `Bash(echo line {n} | tee out-{n}.txt) for {n} = 1–9, 11, 13–100`. It is exact —
//! every instance can be read back from it — so the audit counts what it stands for: [`expand`]
//! replaces each pattern by its instances, one per line, and the audit matches items (and looks
//! for inventions) in that text. A pattern that claims instances the span never had is therefore
//! an invention like any other.
//!
//! Bounded: a pattern of more than [`MAX_VALUES`] values, a range wider than that, or an expansion
//! past [`MAX_EXPANDED`] characters is left as written (its instances are then not counted).

use std::borrow::Cow;

/// The placeholder a pattern's template carries where the value goes.
pub const HOLE: &str = "{n}";
/// What separates a pattern's template from its values.
pub const VALUES: &str = " for {n} = ";
/// The most values one pattern may stand for.
pub const MAX_VALUES: usize = 2000;
/// The most characters the expansion of one text may add.
pub const MAX_EXPANDED: usize = 4_000_000;

/// The values of a pattern written as a list: runs of three or more consecutive integers as
/// `a–b`, the others one by one, in the order given (sort them first for the shortest list).
pub fn list(values: &[String]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < values.len() {
        let mut j = i;
        while j + 1 < values.len()
            && matches!(
                (plain(&values[j]), plain(&values[j + 1])),
                (Some(a), Some(b)) if b == a + 1
            )
        {
            j += 1;
        }
        if j >= i + 2 {
            out.push(format!("{}–{}", values[i], values[j]));
            i = j + 1;
        } else {
            out.push(values[i].clone());
            i += 1;
        }
    }
    out.join(", ")
}

/// A number written plainly (no leading zero), which a range may stand for.
fn plain(v: &str) -> Option<u64> {
    if v.is_empty() || (v.len() > 1 && v.starts_with('0')) || !v.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    v.parse().ok()
}

/// The line a pattern is written as: `template` (with [`HOLE`] where values go), then the
/// values.
pub fn line(template: &str, values: &[String]) -> String {
    format!("{template}{VALUES}{}", list(values))
}

/// Parse a list of values at the start of `s`: items separated by `, `, each a value (digits)
/// or a range `a–b` (`-` and `..` read as `–`). Returns the values and the bytes it took.
fn parse_values(s: &str) -> Option<(Vec<String>, usize)> {
    let b = s.as_bytes();
    let mut at = 0;
    let mut out: Vec<String> = Vec::new();
    let digits = |from: usize| -> usize {
        let mut e = from;
        while e < b.len() && b[e].is_ascii_digit() {
            e += 1;
        }
        e
    };
    loop {
        let end = digits(at);
        if end == at {
            return None;
        }
        let first = &s[at..end];
        at = end;
        let dash = ["–", "..", "-"].iter().find(|d| s[at..].starts_with(**d));
        if let Some(d) = dash
            && digits(at + d.len()) > at + d.len()
        {
            let e = digits(at + d.len());
            let (lo, hi) = (plain(first)?, plain(&s[at + d.len()..e])?);
            if hi < lo || hi - lo >= MAX_VALUES as u64 {
                return None;
            }
            out.extend((lo..=hi).map(|v| v.to_string()));
            at = e;
        } else {
            out.push(first.to_string());
        }
        if out.len() > MAX_VALUES {
            return None;
        }
        if s[at..].starts_with(", ") && digits(at + 2) > at + 2 {
            at += 2;
        } else {
            return Some((out, at));
        }
    }
}

/// `text` with every pattern replaced by its instances, one per line (the rest as written).
/// Text without a pattern is returned as it is.
pub fn expand(text: &str) -> Cow<'_, str> {
    if !text.contains(VALUES) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut added = 0usize;
    for (n, line) in text.split('\n').enumerate() {
        if n > 0 {
            out.push('\n');
        }
        added += expand_line(line, &mut out, MAX_EXPANDED.saturating_sub(added));
    }
    Cow::Owned(out)
}

/// Push `line` expanded onto `out`, adding at most `room` characters; returns how many it
/// added beyond the line's own length.
fn expand_line(line: &str, out: &mut String, room: usize) -> usize {
    let start_len = out.len();
    let mut rest = line;
    let mut instances: Vec<String> = Vec::new();
    let mut plain_text = String::new();
    while let Some(k) = rest.find(VALUES) {
        let template = &rest[..k];
        let after = &rest[k + VALUES.len()..];
        match parse_values(after).filter(|_| template.contains(HOLE)) {
            Some((values, used)) => {
                let cost: usize = values.len() * (template.len() + 1);
                if out.len() - start_len + cost > room {
                    plain_text.push_str(&rest[..k + VALUES.len() + used]);
                } else {
                    instances.extend(values.iter().map(|v| template.replace(HOLE, v)));
                }
                rest = &after[used..];
            }
            None => {
                plain_text.push_str(&rest[..k + VALUES.len()]);
                rest = after;
            }
        }
    }
    plain_text.push_str(rest);
    if instances.is_empty() {
        out.push_str(line);
        return 0;
    }
    out.push_str(&plain_text);
    for i in &instances {
        out.push('\n');
        out.push_str(i);
    }
    (out.len() - start_len).saturating_sub(line.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_list_writes_runs_as_ranges() {
        assert_eq!(
            list(&strs(&["1", "2", "3", "5", "7", "8", "9", "10"])),
            "1–3, 5, 7–10"
        );
        assert_eq!(list(&strs(&["1", "2"])), "1, 2");
        assert_eq!(list(&strs(&["007", "008", "009"])), "007, 008, 009");
    }

    #[test]
    fn a_pattern_line_expands_to_exactly_its_instances() {
        let vals: Vec<String> = (1..=100)
            .filter(|v| *v != 10)
            .map(|v| v.to_string())
            .collect();
        let l = line(
            "- T1 assistant: Bash(echo line {n} | tee out-{n}.txt)",
            &vals,
        );
        assert!(l.ends_with("for {n} = 1–9, 11–100"), "{l}");
        let e = expand(&l);
        let lines: Vec<&str> = e.lines().skip(1).collect();
        assert_eq!(lines.len(), 99);
        assert_eq!(
            lines[0],
            "- T1 assistant: Bash(echo line 1 | tee out-1.txt)"
        );
        assert!(!e.contains("out-10.txt"));
        assert!(e.contains("tee out-100.txt)"));
    }

    #[test]
    fn text_without_a_pattern_is_untouched_and_hostile_lists_are_bounded() {
        assert!(matches!(expand("plain {n} text"), Cow::Borrowed(_)));
        let huge = "x {n} for {n} = 1–999999999";
        assert_eq!(expand(huge), huge);
        let no_hole = "x for {n} = 1–3";
        assert_eq!(expand(no_hole), no_hole);
        let many: String = (0..200)
            .map(|_| "a very long template {n} for {n} = 1–1999\n")
            .collect();
        assert!(expand(&many).len() <= many.len() + MAX_EXPANDED + 2000);
    }

    #[test]
    fn two_patterns_on_one_line_expand_each() {
        let l = "- T1 assistant: Read(a-{n}.txt) for {n} = 1, 2. Write(b-{n}.txt) for {n} = 7–9.";
        let e = expand(l);
        for want in [
            "Read(a-1.txt)",
            "Read(a-2.txt)",
            "Write(b-7.txt)",
            "Write(b-9.txt)",
        ] {
            assert!(e.contains(want), "{want} in {e}");
        }
        assert!(!e.contains("b-1.txt"));
    }
}
