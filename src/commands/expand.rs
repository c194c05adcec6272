//! `mf expand`: the originals behind a summary or stub, one level or all the way down;
//! `--restore` retracts it so recall is verbatim again. The retraction is written before
//! anything is printed, so a closed pipe never keeps it from happening or hides it.

use anyhow::Result;

use crate::cli::{ExpandArgs, ExpandFormat};
use crate::entry::RecordKind;
use crate::entry::flag;
use crate::error::MfError;
use crate::fold::{FlagKind, Ledger, Summary};
use crate::interrupt::Interrupt;
use crate::render::recall::Format;
use crate::render::{self, Ui};
use crate::settings::{read_options, tail_wait};
use crate::transcript::{self, Locked, Transcript};
use crate::view::{item, originals, read_for_view, resolve, standing_folds};

pub fn expand(args: &ExpandArgs, ui: &Ui, interrupt: &Interrupt) -> Result<()> {
    // Always the whole file: what expand prints or restores is checked against every line.
    let opts = read_options(args.from, None);
    let Some(id) = args.id.as_deref() else {
        return Err(which_id(args, &read_for_view(&args.file, &opts, ui)?).into());
    };
    // --restore writes: open for appending (and lock) before reading, so what is checked is
    // what is written to.
    let handle = lock_for_restore(args, ui, interrupt)?;
    let t = match &handle {
        Some(h) => h.read(&opts)?,
        None => read_for_view(&args.file, &opts, ui)?,
    };
    let ledger = Ledger::new(t.conversation());
    let i = resolve(&t, &ledger, id)?;
    if let Some(h) = handle {
        // Only a summary or stub can be retracted.
        if !ledger.summaries.contains_key(&i) {
            return Err(not_a_summary(&t, &ledger, i, id, args.restore).into());
        }
        restore(args, &t, &ledger, i, h, ui, interrupt)?;
    } else if ledger.is_claim_entry(i) && !ledger.summaries.contains_key(&i) {
        // A line that claims to be mf's and is not honoured: refused, with why.
        return Err(not_a_summary(&t, &ledger, i, id, args.restore).into());
    }

    print_originals(args, &t, &ledger, i)
}

/// `mf expand FILE` without an id: a usage error that lists the ids there are to expand.
fn which_id(args: &ExpandArgs, t: &Transcript) -> MfError {
    let ledger = Ledger::new(t.conversation());
    let (mine, natives) = standing_folds(t, &ledger);
    let file = render::one_line(&t.display());
    let verb = if args.restore {
        "expand --restore"
    } else {
        "expand"
    };
    if mine.is_empty() {
        let agent = if natives.is_empty() {
            String::new()
        } else {
            format!(
                " (the agent's own compaction{} {} hide{} what came before; the originals are in the file: `mf search {file} QUERY` finds them)",
                if natives.len() == 1 { "" } else { "s" },
                natives
                    .iter()
                    .map(|n| n.split(" · ").next().unwrap_or(n).to_string())
                    .map(|id| format!("`{id}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                if natives.len() == 1 { "s" } else { "" },
            )
        };
        return MfError::usage(
            format!(
                "`mf {verb}` needs the id of a summary, and no summary of mf's stands in {file}{agent}"
            ),
            Some(format!(
                "an entry's id (as `mf search {file} QUERY` shows it) or @LINE prints one message"
            )),
        );
    }
    let mut list = format!("`mf {verb}` needs the id of a summary; these stand in {file}:");
    for l in &mine {
        list.push_str("\n  ");
        list.push_str(l);
    }
    let first = mine[0].split(" · ").next().unwrap_or_default();
    MfError::usage(
        list,
        Some(format!(
            "`mf expand {file} {first}{}`",
            if args.restore { " --restore" } else { "" }
        )),
    )
}

/// `--restore` writes: the file opened for appending and locked before it is read, so what is
/// checked is what is written to. The lock is waited for in steps, so a signal ends the wait.
fn lock_for_restore(args: &ExpandArgs, ui: &Ui, interrupt: &Interrupt) -> Result<Option<Locked>> {
    if !args.restore {
        return Ok(None);
    }
    let h = transcript::open_for_append(&args.file)?;
    if !h.try_lock()? {
        ui.note(&format!(
            "waiting for the lock on `{}` (another mf is working on it)",
            args.file.display()
        ));
        // Waited for in steps, so a signal ends the wait (and nothing is written).
        while !h.try_lock()? {
            if interrupt.received().is_some() {
                return Err(MfError::Interrupted.into());
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
    }
    Ok(Some(h))
}

/// Why the entry `id` names is no summary to expand or restore: an ordinary message, a summary
/// the agent's own compaction took over (or mf withdrew on a branch the agent has left), or a
/// summary line that is not valid.
fn not_a_summary(t: &Transcript, ledger: &Ledger<'_>, i: u32, id: &str, restore: bool) -> MfError {
    let line = t.entries[i as usize].line;
    let Some(f) = ledger.flags.iter().find(|f| f.entry == Some(i)) else {
        return MfError::refused(
            format!("`{id}` is an ordinary message (line {line}), not a summary"),
            None,
        );
    };
    if f.kind != FlagKind::Superseded {
        return MfError::refused(
            format!("`{id}` (line {line}) is not a valid summary: {}", f.why),
            None,
        );
    }
    let file = render::one_line(&t.display());
    let doing = if restore {
        "cannot be restored"
    } else {
        "no longer stands"
    };
    if t.entries[i as usize].has(flag::HISTORY) {
        // mf's summary was valid; the agent's own compaction now stands for what it folded.
        MfError::refused(
            format!(
                "`{id}` (line {line}) {doing}: the agent compacted the session itself after it, so the agent's own summary now stands for those turns and mf's summary hides nothing{}",
                if restore {
                    "; restoring it would change nothing the agent reads (nothing written)"
                } else {
                    ""
                }
            ),
            Some(format!(
                "the originals are still in the file: `mf search {file} QUERY` finds a detail in them and `mf expand {file} ENTRY-ID` prints one; only the agent can undo its own compaction (mf never reaches before it)"
            )),
        )
    } else {
        MfError::refused(
            format!("`{id}` (line {line}) {doing}: {}", f.why),
            Some(format!(
                "its originals are shown again already: `mf recall {file}` shows what the agent reads"
            )),
        )
    }
}

/// `--restore`: retract summary `i` (under the lock, checked at that instant), unless it is
/// already retracted; refused for a summary inside a standing one.
fn restore(
    args: &ExpandArgs,
    t: &Transcript,
    ledger: &Ledger<'_>,
    i: u32,
    mut h: Locked,
    ui: &Ui,
    interrupt: &Interrupt,
) -> Result<()> {
    let s: &Summary = &ledger.summaries[&i];
    let id = t.id_string(i as usize);
    if s.retracted_at.is_some() {
        ui.note(&format!("`{id}` is already retracted; nothing written"));
    } else if let Some(outer) = s.covered_by {
        let outer_id = t.id_string(outer as usize);
        return Err(MfError::refused(
            format!("`{id}` is inside the standing summary `{outer_id}`; retracting it alone would change nothing in recall"),
            Some(format!("restore `{outer_id}` first: mf expand {} {outer_id} --restore", args.file.display())),
        )
        .into());
    } else {
        let guard = crate::settings::live_guard();
        if t.format.is_agent() && !args.force {
            guard.check(t, h.file())?;
        }
        t.check_tail()?;
        let fingerprint = t
            .claims
            .get(t.entries[i as usize].claim as usize)
            .and_then(|c| c.coverage.as_ref().ok())
            .map(|c| c.fingerprint.clone())
            .unwrap_or_default();
        let kind = RecordKind::Retract {
            summary_id: id.clone(),
            fingerprint,
        };
        let shown = t
            .format
            .is_agent()
            .then(|| ledger.next_view(&[], &[], Some(i)));
        let lines = t.lines_for(&crate::transcript::Write {
            drafts: &[],
            records: &[(kind, crate::clock::now_ms())],
            shown: shown.as_deref(),
            now_ms: crate::clock::now_ms(),
            tokens_before: crate::entry::estimate_tokens(ledger.view_chars()) as u64,
        })?;
        {
            let _critical = interrupt.critical();
            if interrupt.received().is_some() {
                return Err(MfError::Interrupted.into());
            }
            if t.format.is_agent() && !args.force {
                guard.check_before_write(t, h.file())?;
            }
            h.append(t, &lines, tail_wait())?;
        }
        ui.note(&format!(
            "retracted `{id}`: {} verbatim in recall again ({} original message{})",
            if s.kind == crate::entry::ClaimKind::Stub {
                "the tool result is".to_string()
            } else {
                format!(
                    "{} {}",
                    crate::text::turn_span(s.from_turn, s.to_turn),
                    if s.from_turn == s.to_turn {
                        "is"
                    } else {
                        "are"
                    }
                )
            },
            s.leaf_count,
            if s.leaf_count == 1 { "" } else { "s" }
        ));
    }
    Ok(())
}

/// The originals, in order: one level, or down through nested summaries.
fn print_originals(args: &ExpandArgs, t: &Transcript, ledger: &Ledger<'_>, i: u32) -> Result<()> {
    // A summary or stub: its originals; an ordinary entry: itself.
    let order = if ledger.summaries.contains_key(&i) {
        originals(ledger, i, args.deep)
    } else {
        vec![i]
    };
    match args.format {
        ExpandFormat::Jsonl => {
            let mut out = Vec::new();
            for &j in &order {
                for line in t.raw_lines(j as usize)? {
                    out.extend_from_slice(&line);
                    out.push(b'\n');
                }
            }
            render::stdout_bytes(&out)?;
        }
        ExpandFormat::Text => {
            render::recall::write(Format::Text, order.iter().map(|&j| item(t, ledger, j)))?;
        }
    }
    Ok(())
}
