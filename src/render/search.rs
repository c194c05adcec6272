//! `mf search` hits: readable blocks (a terminal, a pipe, and what `mf mcp` hands a model) and
//! one JSON object per hit. The blocks defuse an entry's look-alike of mf's label or
//! delimiters; the JSON carries the exact text.

use serde::Serialize;

use super::one_line;
use crate::search::Snippet;

/// One hit, ready to print.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub rank: usize,
    /// The entry's id, as `mf expand` takes it.
    pub id: String,
    /// The 1-based line where the entry starts.
    pub line: u32,
    pub turn: u64,
    pub role: &'static str,
    /// The tool a tool result answers, when the line says it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    pub score: f32,
    /// Hidden from the model now (by a summary or stub, or the agent's own compaction).
    pub folded: bool,
    /// The summary or stub that hides it, or the agent's own compaction entry.
    pub covered_by: Option<String>,
    #[serde(serialize_with = "snippets")]
    pub matches: Vec<Snippet>,
    /// The entry's text, at most 4,000 bytes of it.
    pub text: String,
    /// Characters of the whole text.
    pub text_chars: usize,
    /// mf's own summary or stub, honoured: its first line is mf's label, shown as it is; an
    /// entry's look-alike of it (or of the delimiters) is defused in the readable blocks.
    #[serde(skip)]
    pub framed: bool,
}

fn snippets<S: serde::Serializer>(v: &[Snippet], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = s.serialize_seq(Some(v.len()))?;
    for m in v {
        seq.serialize_element(&serde_json::json!({
            "textLine": m.line + 1,
            "text": m.text,
            "match": m.matches,
        }))?;
    }
    seq.end()
}

/// The heading of a hit: rank, id, turn, role, line, what hides it.
fn heading(h: &SearchHit) -> String {
    let role = match &h.tool {
        Some(tool) => format!("{} ({})", h.role, one_line(tool)),
        None => h.role.to_string(),
    };
    let hidden = match (&h.folded, &h.covered_by) {
        (true, Some(id)) => format!(" · folded by {}", one_line(id)),
        (true, None) => " · folded".to_string(),
        (false, _) => String::new(),
    };
    format!(
        "{}. {} · turn {} · {role} · line {}{hidden}",
        h.rank,
        one_line(&h.id),
        h.turn,
        h.line
    )
}

/// A line of a hit's text as shown: on one line, an entry's look-alike of mf's label or
/// delimiters defused (the first line of mf's own summary or stub is its label, kept).
fn shown_line(h: &SearchHit, line: usize, text: &str) -> String {
    one_line(&super::shown(text, h.framed && line == 0))
}

/// Hits as readable blocks: the heading, then the matching lines (`>`) with their context.
pub fn text(hits: &[SearchHit]) -> String {
    let mut out = String::new();
    for (k, h) in hits.iter().enumerate() {
        if k > 0 {
            out.push('\n');
        }
        out.push_str(&heading(h));
        out.push('\n');
        let mut last: Option<usize> = None;
        for m in &h.matches {
            if last.is_some_and(|l| m.line > l + 1) {
                out.push_str("   …\n");
            }
            out.push_str(if m.matches { "   > " } else { "     " });
            out.push_str(&shown_line(h, m.line, &m.text));
            out.push('\n');
            last = Some(m.line);
        }
        if h.matches.is_empty() {
            let first: String = h
                .text
                .lines()
                .next()
                .unwrap_or("")
                .chars()
                .take(240)
                .collect();
            out.push_str("     ");
            out.push_str(&shown_line(h, 0, &first));
            out.push('\n');
        }
    }
    out
}

/// One JSON object per hit, a line each.
pub fn json_lines(hits: &[SearchHit]) -> String {
    let mut out = String::new();
    for h in hits {
        out.push_str(&serde_json::to_string(h).expect("a hit serializes"));
        out.push('\n');
    }
    out
}
