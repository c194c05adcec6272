//! Renderers for the recall view (and for `expand --format text`): JSONL, text, memory blocks.

use crate::commands::recall::RecallItem;

/// One chat-shaped JSON object per line.
pub fn jsonl(items: &[RecallItem]) -> String {
    let mut out = String::new();
    for it in items {
        out.push_str(&serde_json::to_string(&it.message).expect("a message serializes"));
        out.push('\n');
    }
    out
}

fn heading(it: &RecallItem) -> String {
    match it.summary_turns {
        Some((a, b)) => format!("── summary of turns {a}–{b} · {} ──", it.id),
        None => format!("── turn {} · {} · {} ──", it.turn, it.role, it.id),
    }
}

/// Readable text: a heading per entry, then its text.
pub fn text(items: &[RecallItem]) -> String {
    let mut out = String::new();
    for it in items {
        out.push_str(&heading(it));
        out.push('\n');
        out.push_str(it.text.trim_end());
        out.push_str("\n\n");
    }
    out
}

/// `<memory source="turn:N">…</memory>` blocks; summaries carry `source="turns:A-B"`.
pub fn memory(items: &[RecallItem]) -> String {
    let mut out = String::new();
    for it in items {
        let source = match it.summary_turns {
            Some((a, b)) => format!("turns:{a}-{b}"),
            None => format!("turn:{}", it.turn),
        };
        let kind = if it.summary_turns.is_some() {
            "summary"
        } else {
            it.role
        };
        // The body cannot close its own block.
        let body = it.text.trim_end().replace("</memory", "<\\/memory");
        out.push_str(&format!(
            "<memory source=\"{source}\" role=\"{kind}\" id=\"{}\">\n{body}\n</memory>\n",
            attr(&it.id)
        ));
    }
    out
}

fn attr(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}
