//! The view a read-only command works on: a transcript read for viewing (and what its tail and
//! skipped lines say), an entry found by its address, and a view item in printable form. Shared
//! by `recall`, `expand`, `explain` and `compact`, which do not import each other.

use std::path::Path;

use anyhow::Result;

use crate::error::MfError;
use crate::fold::{Item, ItemKind, Ledger};
use crate::render::Ui;
use crate::render::recall::RecallItem;
use crate::transcript::{self, NoteKind, ReadOptions, Tail, Transcript};

/// The printable form of a view item.
pub fn item(t: &Transcript, ledger: &Ledger<'_>, it: Item) -> std::io::Result<RecallItem> {
    let i = it as usize;
    let kind = ledger.kind(it);
    let text = t.text(i)?;
    let (summary_turns, role) = match kind {
        ItemKind::Summary => (Some(ledger.item_turns(it)), "system"),
        _ => (None, ledger.conv.entries[i].role.as_str()),
    };
    let messages = match kind {
        ItemKind::Summary => vec![serde_json::json!({"role": "system", "content": text})],
        _ => t.chat_messages(i)?,
    };
    Ok(RecallItem {
        id: t.id_string(i),
        summary_turns,
        turn: ledger.item_turns(it).1,
        role,
        text,
        messages,
        native: t.raw_lines(i)?,
    })
}

/// Read a transcript for a read-only command: an incomplete last line is left out with a warning,
/// and lines mf had to skip or recover are mentioned.
/// `-v`: how much of the file was read, and how much came from a checkpoint.
pub fn log_read(ui: &Ui, t: &Transcript) {
    let mb = |b: u64| match b {
        0..1_000 => format!("{b} bytes"),
        1_000..1_000_000 => format!("{:.1} kB", b as f64 / 1e3),
        _ => format!("{:.1} MB", b as f64 / 1e6),
    };
    if t.from_checkpoint > 0 {
        ui.log(&format!(
            "{}: {} from a checkpoint, {} read",
            t.display(),
            mb(t.from_checkpoint),
            mb(t.len.saturating_sub(t.from_checkpoint))
        ));
    } else {
        ui.log(&format!("{}: {} read in full", t.display(), mb(t.len)));
    }
}

pub fn read_for_view(path: &Path, opts: &ReadOptions, ui: &Ui) -> Result<Transcript> {
    let t = transcript::read(path, opts)?;
    log_read(ui, &t);
    match t.tail {
        Tail::Torn { line, mf: false, .. } => ui.warn(&format!(
            "{}:{line}: the last line is incomplete (no newline, not valid JSON) and is left out; it may still be being written",
            t.display()
        )),
        Tail::Torn { line, mf: true, .. } => ui.warn(&format!(
            "{}:{line}: the last line is one mf began and did not finish (it was interrupted); it is left out, and the next mf write closes it",
            t.display()
        )),
        _ => {}
    }
    let torn = t
        .notes
        .iter()
        .filter(|n| n.kind == NoteKind::TornMf)
        .count();
    if torn > 0 {
        ui.warn(&format!(
            "{}: {torn} line{} that an interrupted mf began are skipped (`mf verify` lists them)",
            t.display(),
            if torn == 1 { "" } else { "s" }
        ));
    }
    Ok(t)
}

/// The entry an address names, or an error that says what the file has.
pub fn resolve(t: &Transcript, ledger: &Ledger<'_>, address: &str) -> Result<u32> {
    let list = || {
        let summaries = ledger.summaries_in_order();
        if summaries.is_empty() {
            format!("`{}` has no summaries", t.display())
        } else {
            let names: Vec<String> = summaries
                .iter()
                .map(|s| {
                    format!(
                        "{} (turns {}–{}, {})",
                        t.id_string(s.entry as usize),
                        s.from_turn,
                        s.to_turn,
                        s.state()
                    )
                })
                .collect();
            format!("its summaries: {}", names.join(", "))
        }
    };
    match t.find(address)[..] {
        [] => Err(MfError::refused(
            format!("no entry `{address}` in `{}`", t.display()),
            Some(list()),
        )
        .into()),
        [i] => Ok(i as u32),
        ref many => Err(MfError::refused(
            format!(
                "`{address}` names {} entries of `{}` (lines {})",
                many.len(),
                t.display(),
                many.iter()
                    .map(|&i| t.entries[i].line.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Some(format!(
                "address one by its line: `@{}`",
                t.entries[many[0]].line
            )),
        )
        .into()),
    }
}
