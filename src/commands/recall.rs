//! `mf recall`: what a model should see now — standing summaries and every entry none covers.

use anyhow::Result;

use crate::cli::{RecallArgs, RecallFormat};
use crate::fold::{Ledger, fit_budget};
use crate::render::recall::Format;
use crate::render::{self, Ui};
use crate::settings::read_options;
use crate::transcript::CacheOptions;
use crate::view::{item, read_for_view};

pub fn recall(args: &RecallArgs, cache: Option<&CacheOptions>, ui: &Ui) -> Result<()> {
    let t = read_for_view(&args.file, &read_options(args.from, cache), ui)?;
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
