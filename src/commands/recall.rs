//! `mf recall`: what a model should see now — standing summaries and every entry none covers.

use std::path::Path;

use anyhow::Result;

use crate::cli::{RecallArgs, RecallFormat};
use crate::fold::{Item, ItemKind, Ledger, fit_budget};
use crate::render::recall::{Format, RecallItem};
use crate::render::{self, Ui};
use crate::settings::read_options;
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
    let message = match kind {
        ItemKind::Summary => serde_json::json!({"role": "system", "content": text}),
        _ => t.chat_message(i)?,
    };
    Ok(RecallItem {
        id: t.id_string(i),
        summary_turns,
        turn: ledger.item_turns(it).1,
        role,
        text,
        message,
        native: t.raw_lines(i)?,
    })
}

/// Read a transcript for a read-only command: an incomplete last line is left out with a warning,
/// and lines mf had to skip or recover are mentioned.
pub fn read_for_view(path: &Path, opts: ReadOptions, ui: &Ui) -> Result<Transcript> {
    let t = transcript::read(path, opts)?;
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

pub fn recall(args: &RecallArgs, ui: &Ui) -> Result<()> {
    let t = read_for_view(&args.file, read_options(args.from), ui)?;
    let ledger = Ledger::new(t.conversation());
    let items = match args.budget {
        Some(b) => ledger.recall_order(&fit_budget(&ledger, b)),
        None => ledger.recall_order(&ledger.view),
    };
    if let Some(b) = args.budget
        && items.is_empty()
        && !t.entries.is_empty()
    {
        ui.warn(&format!(
            "a budget of {b} tokens leaves no room after the {} reserved (at least {} are needed); nothing printed",
            crate::fold::budget::RESERVE_TOKENS,
            crate::fold::budget::MIN_ROOM_TOKENS
        ));
    }
    let format = match args.format {
        RecallFormat::Chat => Format::Chat,
        RecallFormat::Native => Format::Native,
        RecallFormat::Text => Format::Text,
        RecallFormat::Memory => Format::Memory,
    };
    render::recall::write(format, items.into_iter().map(|it| item(&t, &ledger, it)))?;
    Ok(())
}
