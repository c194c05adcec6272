//! The write: mf's lines appended to the file under its lock (checked at that instant), or the
//! copy `--output` names (a file, a directory, stdout); and the lines themselves, for the
//! format, refused before anything is paid when the agent could not show them.

use std::path::Path;

use anyhow::Result;

use super::FileRun;
use crate::decision::Note;
use crate::entry::{Draft, RecordKind, estimate_tokens};
use crate::fold::{Item, Ledger, Plan, summary};
use crate::settings::CompactSettings;
use crate::transcript::{self, Locked, OutputTarget, Transcript, TranscriptError};

/// Read a transcript for a read-only look (`--dry-run`, `--max-cost`, `-o`).
pub(super) fn read_only(
    path: &Path,
    settings: &CompactSettings,
) -> Result<Transcript, TranscriptError> {
    transcript::read(path, &settings.read)
}

/// Where the lines of a file go.
pub(super) struct Sink<'a> {
    /// In place: the file, opened for appending and locked.
    pub(super) handle: Option<Locked>,
    pub(super) output: Option<&'a OutputTarget>,
}

/// The file again, after mf's own append (in place), or as it was (a copy).
pub(super) fn reread(
    t: &Transcript,
    sink: &Sink<'_>,
    settings: &CompactSettings,
) -> Result<Transcript> {
    match &sink.handle {
        Some(h) => Ok(h.read(&settings.read)?),
        None => Ok(read_only(&t.path, settings)?),
    }
}

impl FileRun<'_> {
    /// The file again, after mf's own append (in place), or as it was (a copy).
    pub(super) fn reread(&self, t: &Transcript) -> Result<Transcript> {
        reread(t, &self.sink, self.settings)
    }

    /// Append `lines` to the transcript under its lock (checked at that instant), or write the
    /// copy for `--output`; what was written in the record.
    /// A signal during the append takes effect after it.
    pub(super) fn write(
        &mut self,
        t: &Transcript,
        lines: &[String],
        plan: Option<&Plan>,
    ) -> Result<()> {
        let FileRun {
            settings,
            ctx,
            sink,
            r,
            ..
        } = self;
        let (settings, ctx) = (*settings, *ctx);
        if settings.dry_run {
            return Ok(());
        }
        if let Some(target) = sink.output {
            let _critical = ctx.interrupt.critical();
            transcript::write_copy(target, t, lines, settings.force)?;
            r.written = !lines.is_empty();
            r.lines_appended += lines.len();
            r.output = Some(match target {
                OutputTarget::Stdout => "-".to_string(),
                OutputTarget::File(p) => p.display().to_string(),
            });
            return Ok(());
        }
        if lines.is_empty() {
            return Ok(());
        }
        let h = sink.handle.as_mut().expect("in place, the file is open");
        let _critical = ctx.interrupt.critical();
        let size = h.check_same(t)?;
        if t.format.is_agent() && !settings.force {
            // Again, under the lock, right before the write: an agent that wrote while mf was
            // working (or started meanwhile) is running, and mf's lines would land among its own.
            settings.live.check_before_write(t, h.file())?;
        }
        if let Some(plan) = plan {
            if size > t.len {
                // An agent appended meanwhile: the fold must still be lawful with its lines.
                let now = h.read(&settings.read)?;
                let ledger = Ledger::new(now.conversation());
                if !plan.holds_in(&ledger) {
                    return Err(TranscriptError::Changed {
                        path: t.path.clone(),
                        what: "lines appended meanwhile change what may be folded".into(),
                    }
                    .into());
                }
            } else {
                let items: Vec<usize> = plan
                    .spans
                    .iter()
                    .flat_map(|s| s.items.iter().map(|&i| i as usize))
                    .collect();
                if !t
                    .still_holds(h.file(), &items)
                    .map_err(|source| TranscriptError::Open {
                        path: t.path.clone(),
                        source,
                    })?
                {
                    return Err(TranscriptError::Changed {
                        path: t.path.clone(),
                        what: "the lines being folded were edited".into(),
                    }
                    .into());
                }
            }
        }
        let a = h.append(t, lines, settings.tail_wait)?;
        r.written = true;
        r.lines_appended += lines.len();
        if a.closed_torn_mf {
            r.notes.push(Note::ClosedTornLine);
        }
        if a.interleaved {
            ctx.ui.warn(&format!(
                "{}: another program wrote to the file at the same instant as mf; mf's lines and its are both kept (`mf verify` shows where)",
                t.display()
            ));
            r.notes.push(Note::Interleaved);
        }
        Ok(())
    }
}

/// The lines for a write, and for an agent's session what makes it show mf's recall after the
/// write. A view the agent cannot show is refused here, before anything is appended.
pub(super) fn lines_for(
    t: &Transcript,
    ledger: &Ledger<'_>,
    drafts: &[Draft],
    folds: &[(Vec<Item>, usize)],
    stubs: &[(Item, usize)],
    records: &[(RecordKind, u64)],
    now: u64,
) -> Result<Vec<String>> {
    // The one rule of what a summary may cover, asked once more right before the lines exist:
    // a summary the re-vet on read would not honour is never written.
    if let Some((d, why)) = drafts
        .iter()
        .zip(ledger.would_honour(drafts))
        .find_map(|(d, v)| v.err().map(|why| (d, why)))
    {
        return Err(crate::error::MfError::refused(
            format!(
                "{}: mf would not honour its own summary {} ({}) on read: {why}; nothing was written",
                t.display(),
                d.id,
                crate::text::turn_span(d.coverage.from_turn, d.coverage.to_turn)
            ),
            Some("this is a bug in mf's planner; please report it (the file is unchanged)".into()),
        )
        .into());
    }
    let changes_view = !drafts.is_empty();
    let shown = (t.format.is_agent() && changes_view).then(|| ledger.next_view(folds, stubs, None));
    Ok(t.lines_for(&transcript::Write {
        drafts,
        records,
        shown: shown.as_deref(),
        now_ms: now,
        tokens_before: estimate_tokens(ledger.view_chars()) as u64,
    })?)
}

/// Refuse, before anything is paid, a plan whose result the agent could not be shown.
pub(super) fn check_expressible(t: &Transcript, ledger: &Ledger<'_>, plan: &Plan) -> Result<()> {
    if !t.format.is_agent() {
        return Ok(());
    }
    let drafts: Vec<Draft> = plan
        .spans
        .iter()
        .map(|span| {
            summary::draft(
                span,
                String::new(),
                summary::Signed {
                    model: "",
                    reach: None,
                    now_ms: 0,
                    tail_line: None,
                },
                "",
                None,
                Vec::new(),
            )
        })
        .collect();
    let folds: Vec<(Vec<Item>, usize)> = plan
        .spans
        .iter()
        .enumerate()
        .map(|(k, s)| (s.items.clone(), k))
        .collect();
    lines_for(t, ledger, &drafts, &folds, &[], &[], 0).map(|_| ())
}
