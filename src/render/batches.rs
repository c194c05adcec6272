//! `mf compact --batch-status` / `--batch-cancel`: the batches mf submitted and has not
//! collected, one line each on stdout (tab-separated on a pipe), a note on stderr when there
//! are none.

use std::io::{self, Write};
use std::path::Path;

use super::Ui;

/// One kept batch, as the provider last reported it.
#[derive(Debug, Clone)]
pub struct BatchRow {
    pub id: String,
    pub provider: String,
    pub model: String,
    pub status: String,
    pub done: u64,
    pub total: u64,
    pub submitted_at_ms: u64,
    pub files: Vec<String>,
    /// Why the provider could not be asked now (the status is then the last one seen).
    pub unreachable: Option<String>,
}

/// Print the batches; `canceled`: they were just asked to cancel.
pub fn batches(ui: &Ui, rows: &[BatchRow], canceled: bool, dir: Option<&Path>) -> io::Result<()> {
    if rows.is_empty() {
        ui.note(&format!(
            "no batch is waiting to be collected{}",
            dir.map_or(String::new(), |d| format!(
                " (mf keeps them in {})",
                d.display()
            ))
        ));
        return Ok(());
    }
    let mut out = io::stdout().lock();
    let people = ui.stdout_is_terminal();
    if people {
        writeln!(
            out,
            "batch\tprovider\tmodel\tstatus\tanswered\tsubmitted (UTC)\tfiles"
        )?;
    }
    for r in rows {
        let when = crate::transcript::format::common::iso_timestamp(r.submitted_at_ms);
        let when = if people {
            when.get(..19).unwrap_or(&when).replace('T', " ")
        } else {
            when
        };
        writeln!(
            out,
            "{}\t{}\t{}\t{}\t{}/{}\t{}\t{}",
            r.id,
            r.provider,
            r.model,
            r.status,
            r.done,
            r.total,
            when,
            r.files.join(" ")
        )?;
        if let Some(why) = &r.unreachable {
            ui.warn(&format!(
                "batch {}: could not ask {}: {why}; the status shown is the last one seen",
                r.id, r.provider
            ));
        }
    }
    if canceled {
        ui.note(&format!(
            "asked the provider to cancel {} batch{}; requests already answered are still collected by the next run, the rest end canceled",
            rows.len(),
            if rows.len() == 1 { "" } else { "es" }
        ));
    }
    Ok(())
}
