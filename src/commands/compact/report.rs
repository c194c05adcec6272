//! What a compact run reports: every file's record (errors included), printed last; the exit
//! status the files add up to (`--allow-degraded` accepts an outage, never a setup error); and,
//! after a signal, what was written before it.

use anyhow::Result;

use crate::decision::DecisionRecord;
use crate::error::{classify, failure_kind, hints};
use crate::exit_status::ExitStatus;
use crate::interrupt::{self, Interrupt};
use crate::render::{self, Ui};
use crate::settings::CompactSettings;

/// Print every file's record (errors included) and say what the run amounts to.
pub(super) fn finish(
    settings: &CompactSettings,
    ui: &Ui,
    interrupt: &Interrupt,
    results: Vec<Result<DecisionRecord>>,
) -> Result<ExitStatus> {
    let mut status = ExitStatus::Success;
    // A signal that stopped the wait for a batch ends the run "try again later" (75): the
    // batch is kept and the next run collects it.
    let waiting = results.iter().any(|r| match r {
        Ok(r) => r.waiting,
        Err(e) => failure_kind(e) == "batch-pending",
    });
    let mut records = Vec::with_capacity(results.len());
    let single = results.len() == 1;
    for (file, result) in settings.files.iter().zip(results) {
        match result {
            Ok(r) => {
                if r.degraded && !settings.allow_degraded {
                    status = status.worst(ExitStatus::NotCompacted);
                }
                if r.waiting {
                    status = status.worst(ExitStatus::Busy);
                }
                records.push(r);
            }
            Err(e) => {
                let code = match classify(&e) {
                    ExitStatus::Interrupted(_) => {
                        ExitStatus::Interrupted(interrupt.received().unwrap_or(2))
                    }
                    other => other,
                };
                // --allow-degraded accepts an outage, never a setup error: a base URL that never
                // answered (wrong port or host) keeps its 3.
                let kind = failure_kind(&e);
                let degraded = matches!(kind, "summarizer-outage" | "summarizer-error");
                if !(code == ExitStatus::NotCompacted && settings.allow_degraded && degraded) {
                    status = status.worst(code);
                }
                if !matches!(code, ExitStatus::Interrupted(_)) {
                    render::error(&e, &hints(&e));
                }
                if settings.json || !single {
                    records.push(DecisionRecord::error(
                        &file.display().to_string(),
                        e.to_string(),
                        code.code(),
                        hints(&e),
                        kind,
                    ));
                }
            }
        }
    }
    if let Some(sig) = interrupt.received().filter(|_| !waiting) {
        status = ExitStatus::Interrupted(sig);
        let written: Vec<String> = records
            .iter()
            .filter(|r| r.written)
            .map(|r| {
                format!(
                    "{} line{} to {}",
                    r.lines_appended,
                    if r.lines_appended == 1 { "" } else { "s" },
                    r.output.as_deref().unwrap_or(&r.file)
                )
            })
            .collect();
        ui.note(&format!(
            "interrupted by {}: {}",
            interrupt::name(sig),
            if written.is_empty() {
                "nothing was written".to_string()
            } else {
                format!(
                    "wrote {} (complete); nothing else was written",
                    written.join(", ")
                )
            }
        ));
    }
    // What was written stands even if stdout is closed: printing comes last.
    if let Err(e) = render::decisions(ui, &records, settings.json, &settings.records_to)
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(e.into());
    }
    Ok(status)
}
