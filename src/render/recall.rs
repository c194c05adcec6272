//! Renderers for the recall view (and for `expand --format text`): JSONL, text, memory blocks,
//! streamed item by item to stdout.

use std::io::{self, BufWriter, Write};

use crate::cli::RecallFormat;
use crate::commands::recall::RecallItem;

/// Write items to stdout in `format`, one at a time.
pub fn write<'a>(
    format: RecallFormat,
    items: impl Iterator<Item = RecallItem<'a>>,
) -> io::Result<()> {
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(64 * 1024, stdout.lock());
    for it in items {
        match format {
            RecallFormat::Jsonl => {
                serde_json::to_writer(&mut out, &it.message())?;
                out.write_all(b"\n")?;
            }
            RecallFormat::Text => text(&mut out, &it)?,
            RecallFormat::Memory => memory(&mut out, &it)?,
        }
    }
    out.flush()
}

fn heading(it: &RecallItem<'_>) -> String {
    match it.summary_turns {
        Some((a, b)) => format!("── summary of turns {a}–{b} · {} ──", it.id),
        None => format!("── turn {} · {} · {} ──", it.turn, it.role, it.id),
    }
}

/// Readable text: a heading per entry, then its text.
fn text(out: &mut impl Write, it: &RecallItem<'_>) -> io::Result<()> {
    writeln!(out, "{}\n{}\n", heading(it), it.text.trim_end())
}

/// `<memory source="turn:N">…</memory>` blocks; summaries carry `source="turns:A-B"`.
fn memory(out: &mut impl Write, it: &RecallItem<'_>) -> io::Result<()> {
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
    writeln!(
        out,
        "<memory source=\"{source}\" role=\"{kind}\" id=\"{}\">\n{body}\n</memory>",
        attr(it.id)
    )
}

fn attr(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}
