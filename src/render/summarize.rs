//! `mf summarize`'s output: the summary (or, with `--json`, one object) on stdout.

use std::io::Write;

use crate::decision::SummarizeRecord;
use crate::render::Ui;

/// On stderr: why the summary was declined.
pub fn declined(ui: Ui, out: &SummarizeRecord) {
    ui.note(&format!("declined: {}", out.reason));
}

/// Print the result: the accepted summary as text, a dry run's estimate, or nothing when it was
/// declined (stderr says why); with `json`, the whole record as one line.
pub fn write(out: &SummarizeRecord, json: bool) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    let r = if json {
        serde_json::to_writer(&mut stdout, out)
            .map_err(std::io::Error::other)
            .and_then(|()| writeln!(stdout))
    } else if let Some(s) = &out.summary {
        writeln!(stdout, "{}", s.trim_end())
    } else if out.chunks.is_empty() && out.failure.is_none() {
        // A dry run: the estimate is the data asked for.
        writeln!(stdout, "{}", out.reason)
    } else {
        Ok(())
    };
    match r.and_then(|()| stdout.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}
