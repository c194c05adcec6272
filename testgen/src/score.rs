//! Scoring a recall view against a generated conversation's planted facts: which facts (per
//! audit class) the view still states, whether every corrected fact is stated at its latest
//! value and never stated as current at its old one by a summary, and the view's size. It reads
//! the view as chat JSON lines (what `mf recall` prints) and knows nothing of mf itself.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::{CLASSES, Conversation, Fact, Placement};

/// The text a model reads in a recall view, message by message.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewMessage {
    /// For one of mf's summaries (its content starts with mf's label), the turns it covers.
    pub summary: Option<(u64, u64)>,
    /// Content, then each tool call as `name(arguments)` and its decoded argument strings.
    pub text: String,
}

/// mf's summary label, as it begins a summary's content.
const SUMMARY_LABEL: &str = "[summary of earlier turns";

/// Read a recall view printed as chat JSON lines.
pub fn read_view(jsonl: &str) -> Result<Vec<ViewMessage>, String> {
    let mut out = Vec::new();
    for (k, line) in jsonl.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value =
            serde_json::from_str(line).map_err(|e| format!("recall line {}: {e}", k + 1))?;
        let mut text = match &v["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        };
        let summary = text.strip_prefix(SUMMARY_LABEL).and_then(label_turns);
        if let Some(calls) = v["tool_calls"].as_array() {
            for c in calls {
                let name = c["function"]["name"].as_str().unwrap_or("");
                let args = c["function"]["arguments"].as_str().unwrap_or("");
                text.push_str(&format!("\n{name}({args})"));
                if let Ok(parsed) = serde_json::from_str::<Value>(args) {
                    strings(&parsed, &mut text);
                }
            }
        }
        out.push(ViewMessage { summary, text });
    }
    Ok(out)
}

/// `A–B]` after the label's opening words: the turns a summary covers.
fn label_turns(rest: &str) -> Option<(u64, u64)> {
    let span = rest.trim_start().split([' ', ']']).next()?;
    let (a, b) = span.split_once('–')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn strings(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push('\n');
            out.push_str(s);
        }
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

/// `value` occurs in `text`, not as part of a longer word or number.
pub fn states(text: &str, value: &str) -> bool {
    text.match_indices(value).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + value.len()..].chars().next();
        let edge = |c: Option<char>, inner: Option<char>| {
            c.is_none_or(|c| !c.is_alphanumeric()) || inner.is_none_or(|i| !i.is_alphanumeric())
        };
        edge(before, value.chars().next()) && edge(after, value.chars().next_back())
    })
}

/// Planted and kept facts of one class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Facts said by the user, the assistant or in tool-call arguments (what mf's audit counts).
    pub planted: usize,
    pub kept: usize,
    /// Facts planted only in a tool result (reported apart).
    pub tool_planted: usize,
    pub tool_kept: usize,
}

impl Tally {
    pub fn add(&mut self, o: Tally) {
        self.planted += o.planted;
        self.kept += o.kept;
        self.tool_planted += o.tool_planted;
        self.tool_kept += o.tool_kept;
    }
}

/// What a recall view kept of a conversation's planted facts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Score {
    /// Per audit class, in [`CLASSES`] order.
    pub classes: BTreeMap<&'static str, Tally>,
    /// Corrected facts, and those stated at their latest value and never as current at their
    /// old one by a summary.
    pub corrections: usize,
    pub corrections_ok: usize,
    /// Facts (counted ones) the view does not state, as `class: value`.
    pub missing: Vec<String>,
    /// Corrections not kept: `subject: old → latest (why)`.
    pub bad_corrections: Vec<String>,
    /// Characters of the view's text.
    pub chars: usize,
}

impl Score {
    /// Counted facts kept ÷ planted over all classes.
    pub fn retention(&self) -> f64 {
        let (k, p) = self
            .classes
            .values()
            .fold((0, 0), |(k, p), t| (k + t.kept, p + t.planted));
        ratio(k, p)
    }

    /// Tool-result facts kept ÷ planted.
    pub fn tool_retention(&self) -> f64 {
        let (k, p) = self
            .classes
            .values()
            .fold((0, 0), |(k, p), t| (k + t.tool_kept, p + t.tool_planted));
        ratio(k, p)
    }

    /// The class with the lowest retention of counted facts, and that retention.
    pub fn worst_class(&self) -> Option<(&'static str, f64)> {
        self.classes
            .iter()
            .filter(|(_, t)| t.planted > 0)
            .map(|(c, t)| (*c, ratio(t.kept, t.planted)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }
}

pub fn ratio(kept: usize, planted: usize) -> f64 {
    if planted == 0 {
        1.0
    } else {
        kept as f64 / planted as f64
    }
}

/// Score a recall view against the facts planted in `conv`.
pub fn score(conv: &Conversation, view: &[ViewMessage]) -> Score {
    let all: String = view
        .iter()
        .map(|m| m.text.as_str())
        .collect::<Vec<_>>()
        .join("\n");
    let mut s = Score {
        chars: view.iter().map(|m| m.text.chars().count()).sum(),
        ..Score::default()
    };
    for c in CLASSES {
        s.classes.insert(c, Tally::default());
    }
    for f in &conv.facts {
        let kept = states(&all, &f.latest);
        let t = s.classes.get_mut(f.class).expect("a known class");
        if f.placed == Placement::ToolResult {
            t.tool_planted += 1;
            t.tool_kept += usize::from(kept);
        } else {
            t.planted += 1;
            t.kept += usize::from(kept);
            if !kept {
                s.missing.push(format!("{}: {}", f.class, f.latest));
            }
        }
        if f.corrected_turn.is_some() {
            s.corrections += 1;
            match correction_problem(f, view, kept) {
                None => s.corrections_ok += 1,
                Some(why) => s
                    .bad_corrections
                    .push(format!("{}: {} → {} ({why})", f.subject, f.value, f.latest)),
            }
        }
    }
    s
}

/// Why a corrected fact is not kept at its latest value, if it is not: the latest value is
/// missing, or a summary of turns that include the correction has a line that states the old
/// value without the new one and without marking it superseded. (Verbatim messages are the
/// conversation itself: the old value stands there before the message that corrects it; so does
/// a summary of turns before the correction.)
fn correction_problem(f: &Fact, view: &[ViewMessage], kept: bool) -> Option<String> {
    if !kept {
        return Some("the latest value is not in the view".into());
    }
    let corrected = f.corrected_turn?;
    let stale: Vec<&str> = view
        .iter()
        .filter(|m| m.summary.is_some_and(|(_, to)| to >= corrected))
        .flat_map(|m| m.text.lines())
        .filter(|l| {
            states(l, &f.value)
                && !states(l, &f.latest)
                && !l.to_ascii_lowercase().contains("superseded")
        })
        .collect();
    (!stale.is_empty()).then(|| format!("a summary states the old value as current: {stale:?}"))
}

/// Sum scores (several seeds).
pub fn total<'a>(scores: impl IntoIterator<Item = &'a Score>) -> Score {
    let mut t = Score::default();
    for c in CLASSES {
        t.classes.insert(c, Tally::default());
    }
    for s in scores {
        for (c, x) in &s.classes {
            t.classes.get_mut(c).expect("a known class").add(*x);
        }
        t.corrections += s.corrections;
        t.corrections_ok += s.corrections_ok;
        t.missing.extend(s.missing.iter().cloned());
        t.bad_corrections.extend(s.bad_corrections.iter().cloned());
        t.chars += s.chars;
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_whole_values_only() {
        assert!(states("port 9090, not 8080", "9090"));
        assert!(!states("port 90901", "9090"));
        assert!(states("see /etc/a.conf.", "/etc/a.conf"));
        assert!(!states("x19090", "9090"));
    }

    #[test]
    fn the_whole_conversation_keeps_every_fact_and_a_stale_summary_is_caught() {
        let conv = crate::facts(20, 4);
        let view = read_view(&conv.to_jsonl()).unwrap();
        let s = score(&conv, &view);
        assert_eq!(s.retention(), 1.0, "{:?}", s.missing);
        assert_eq!(s.tool_retention(), 1.0);
        assert!(s.corrections > 0);
        assert_eq!(s.corrections_ok, s.corrections, "{:?}", s.bad_corrections);

        // A summary that states a corrected fact's old value as current fails that correction,
        // and one that leaves a fact out loses it.
        let f = conv
            .facts
            .iter()
            .find(|f| f.corrected_turn.is_some())
            .unwrap();
        let t = f.corrected_turn.unwrap();
        let summary = |to: u64| {
            let line = serde_json::json!({"role": "system", "content": format!(
                "{SUMMARY_LABEL} 1–{to} — 9 earlier messages were compressed.]\n\n- the {} is {}",
                f.subject, f.value)});
            let mut v = read_view(&line.to_string()).unwrap();
            assert_eq!(v[0].summary, Some((1, to)));
            v.extend(view.iter().cloned());
            score(&conv, &v)
        };
        let s2 = summary(t);
        assert_eq!(
            s2.corrections_ok,
            s.corrections - 1,
            "{:?}",
            s2.bad_corrections
        );
        // A summary of turns before the correction may state the value it knew.
        assert_eq!(summary(t - 1).corrections_ok, s.corrections);
        let keep: Vec<ViewMessage> = view
            .iter()
            .filter(|m| !states(&m.text, &f.latest))
            .cloned()
            .collect();
        let s3 = score(&conv, &keep);
        assert!(s3.corrections_ok < s.corrections);
        assert!(s3.retention() < 1.0 || s3.tool_retention() < 1.0);
    }
}
