//! `mf recall`: what a model should see now — standing summaries and every entry none covers.

use std::path::Path;

use anyhow::Result;

use crate::cli::{RecallArgs, RecallFormat};
use crate::fold::{Item, Ledger, fit_budget};
use crate::render::{self, Ui};
use crate::transcript::{self, Tail, Transcript};

/// One item of the recall view, ready to print.
#[derive(Debug, Clone)]
pub struct RecallItem {
    pub id: String,
    /// `Some((from, to))` for a summary.
    pub summary_turns: Option<(u64, u64)>,
    pub turn: u64,
    pub role: &'static str,
    /// The chat-shaped message.
    pub message: serde_json::Value,
    /// Model-visible text.
    pub text: String,
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

/// The recall view of a transcript as printable items (all of it, or what fits `budget`).
pub fn view(t: &Transcript, budget: Option<usize>) -> Vec<RecallItem> {
    let ledger = Ledger::new(&t.entries, &t.records);
    let items = match budget {
        Some(b) => fit_budget(&ledger, b),
        None => ledger.view.clone(),
    };
    items
        .into_iter()
        .map(|it| {
            let e = ledger.item_entry(it);
            let (summary_turns, turn) = match it {
                Item::Summary(_) => {
                    let (a, b) = ledger.item_turns(it);
                    (Some((a, b)), b)
                }
                Item::Message(i) => (None, ledger.turns[i]),
            };
            let message = match it {
                Item::Summary(_) => serde_json::json!({"role": "system", "content": e.text}),
                Item::Message(i) => t.chat_message(i),
            };
            RecallItem {
                id: e.id.clone(),
                summary_turns,
                turn,
                role: e.role.as_str(),
                message,
                text: e.text.clone(),
            }
        })
        .collect()
}

pub fn recall(args: &RecallArgs, ui: &Ui) -> Result<()> {
    let t = read_for_view(&args.file, ui)?;
    let items = view(&t, args.budget);
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
    let text = match args.format {
        RecallFormat::Jsonl => render::recall::jsonl(&items),
        RecallFormat::Text => render::recall::text(&items),
        RecallFormat::Memory => render::recall::memory(&items),
    };
    render::stdout(&text)?;
    Ok(())
}
