//! `mf recall`: what a model should see now — standing summaries and every entry none covers.

use std::path::Path;

use anyhow::Result;

use crate::cli::RecallArgs;
use crate::fold::{Item, Ledger, fit_budget};
use crate::render::{self, Ui};
use crate::transcript::{self, Tail, Transcript};

/// One item of the recall view, ready to print.
#[derive(Debug, Clone)]
pub struct RecallItem<'a> {
    pub id: &'a str,
    /// `Some((from, to))` for a summary.
    pub summary_turns: Option<(u64, u64)>,
    pub turn: u64,
    pub role: &'static str,
    /// Model-visible text.
    pub text: &'a str,
    transcript: &'a Transcript,
    entry: usize,
}

impl RecallItem<'_> {
    /// The chat-shaped message: the line's chat fields, or a system message for a summary.
    pub fn message(&self) -> serde_json::Value {
        if self.summary_turns.is_some() {
            serde_json::json!({"role": "system", "content": self.text})
        } else {
            self.transcript.chat_message(self.entry)
        }
    }
}

/// Printable items for entries of a transcript (by entry index).
pub fn item<'a>(t: &'a Transcript, ledger: &Ledger<'_>, it: Item) -> RecallItem<'a> {
    let (entry, summary_turns, turn) = match it {
        Item::Summary(i) => {
            let (a, b) = ledger.item_turns(it);
            (i, Some((a, b)), b)
        }
        Item::Message(i) => (i, None, ledger.turns[i]),
    };
    let e = &t.entries[entry];
    RecallItem {
        id: &e.id,
        summary_turns,
        turn,
        role: e.role.as_str(),
        text: &e.text,
        transcript: t,
        entry,
    }
}

/// Read a transcript for a read-only command: an incomplete last line is warned about and left out.
pub fn read_for_view(path: &Path, ui: &Ui) -> Result<Transcript> {
    let t = transcript::read(path)?;
    if let Tail::Torn { line, .. } = t.tail {
        ui.warn(&format!(
            "{}:{line}: the last line is incomplete (no newline, not valid JSON) and is left out; it may still be being written",
            path.display()
        ));
    }
    Ok(t)
}

pub fn recall(args: &RecallArgs, ui: &Ui) -> Result<()> {
    let t = read_for_view(&args.file, ui)?;
    let ledger = Ledger::new(&t.entries, &t.records);
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
    render::recall::write(
        args.format,
        items.into_iter().map(|it| item(&t, &ledger, it)),
    )?;
    Ok(())
}
