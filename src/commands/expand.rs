//! `mf expand`: the originals behind a summary, one level or all the way down; `--restore`
//! retracts the summary so recall is verbatim again.

use anyhow::Result;

use crate::cli::{ExpandArgs, ExpandFormat};
use crate::commands::compact::system_now_ms;
use crate::commands::recall::{item, read_for_view};
use crate::entry::{Record, RecordKind};
use crate::error::MfError;
use crate::fold::{Item, Ledger};
use crate::render::{self, Ui};
use crate::transcript::{self, TranscriptError};

pub fn expand(args: &ExpandArgs, ui: &Ui) -> Result<()> {
    let t = read_for_view(&args.file, ui)?;
    let ledger = Ledger::new(&t.entries, &t.records);
    let summaries = ledger.summaries_in_order();
    let list = || {
        if summaries.is_empty() {
            format!("`{}` has no summaries", args.file.display())
        } else {
            let names: Vec<String> = summaries
                .iter()
                .map(|s| {
                    let state = s.state();
                    format!(
                        "{} (turns {}–{}, {state})",
                        t.entries[s.entry].id, s.from_turn, s.to_turn
                    )
                })
                .collect();
            format!("its summaries: {}", names.join(", "))
        }
    };
    let Some(i) = ledger.find(&args.id) else {
        return Err(MfError::refused(
            format!("no entry `{}` in `{}`", args.id, args.file.display()),
            Some(list()),
        )
        .into());
    };
    if !ledger.summaries.contains_key(&i) {
        let why = ledger.flags.iter().find(|f| f.entry == i).map_or_else(
            || {
                format!(
                    "`{}` is an ordinary message (line {}), not a summary",
                    args.id, t.entries[i].line
                )
            },
            |f| {
                format!(
                    "`{}` (line {}) is not a valid summary: {}",
                    args.id, t.entries[i].line, f.why
                )
            },
        );
        return Err(MfError::refused(why, Some(list())).into());
    }

    // The originals, in order: one level, or down through nested summaries.
    let mut order = Vec::new();
    collect(&ledger, i, args.deep, &mut order);
    match args.format {
        ExpandFormat::Jsonl => {
            let mut s = String::new();
            for &j in &order {
                s.push_str(t.raw_line(j));
                s.push('\n');
            }
            render::stdout(&s)?;
        }
        ExpandFormat::Text => {
            let items = order.iter().map(|&j| {
                let it = if ledger.summaries.contains_key(&j) {
                    Item::Summary(j)
                } else {
                    Item::Message(j)
                };
                item(&t, &ledger, it)
            });
            render::recall::write(crate::cli::RecallFormat::Text, items)?;
        }
    }

    if args.restore {
        restore(args, ui, &ledger, i)?;
    }
    Ok(())
}

fn collect(ledger: &Ledger<'_>, summary: usize, deep: bool, out: &mut Vec<usize>) {
    for &j in ledger.children(summary) {
        if deep && ledger.summaries.contains_key(&j) {
            collect(ledger, j, deep, out);
        } else {
            out.push(j);
        }
    }
}

fn restore(args: &ExpandArgs, ui: &Ui, ledger: &Ledger<'_>, i: usize) -> Result<()> {
    let s = &ledger.summaries[&i];
    let id = &ledger.entries[i].id;
    if s.retracted_at.is_some() {
        ui.note(&format!("`{id}` is already retracted; nothing written"));
        return Ok(());
    }
    if let Some(outer) = s.covered_by {
        let outer_id = &ledger.entries[outer].id;
        return Err(MfError::refused(
            format!("`{id}` is inside the standing summary `{outer_id}`; retracting it alone would change nothing in recall"),
            Some(format!("restore `{outer_id}` first: mf expand {} {outer_id} --restore", args.file.display())),
        )
        .into());
    }
    let record = Record {
        line: 0,
        at_ms: system_now_ms(),
        kind: RecordKind::Retract {
            summary_id: id.clone(),
            fingerprint: s.coverage.fingerprint.clone(),
        },
    };
    let mut locked = transcript::lock(&args.file, |p| {
        ui.note(&format!(
            "waiting for the lock on `{}` (another mf is writing it)",
            p.display()
        ));
    })?;
    let (_, now) = locked.reread()?;
    let check = Ledger::new(&now.entries, &now.records);
    match check.find(id).and_then(|j| check.summaries.get(&j)) {
        Some(again) if again.retracted_at.is_none() && again.covered_by.is_none() => {}
        _ => {
            return Err(TranscriptError::Changed {
                path: args.file.clone(),
                what: format!("`{id}` is no longer a standing summary"),
            }
            .into());
        }
    }
    locked.append(&now, &[transcript::record_line(&record)])?;
    ui.note(&format!(
        "retracted `{id}`: turns {}–{} are verbatim in recall again ({} original messages)",
        s.from_turn, s.to_turn, s.leaf_count
    ));
    Ok(())
}
