//! `mf verify`: a file's integrity, without calling anything — every summary's coverage exists
//! and still hashes to its digest, fingerprints match, retractions name real summaries, mf's
//! lines are well formed, torn mf lines are explained, the tail is whole, and every line, read on
//! its own, is one an agent can read. Exit 0 when clean; 1 when there is any problem, each a
//! `file:line: kind: what` line.

use anyhow::Result;

use crate::cli::VerifyArgs;
use crate::exit_status::ExitStatus;
use crate::fold::Ledger;
use crate::render::notes::note_view;
use crate::render::verify::{Finding, VerifyReport};
use crate::render::{self, Ui};
use crate::settings::read_options;
use crate::transcript::{self, NoteKind, Tail, Transcript};

/// Verify one file.
pub fn verify_file(path: &std::path::Path, opts: &transcript::ReadOptions) -> VerifyReport {
    let t = match transcript::read(path, opts) {
        Ok(t) => t,
        Err(e) => return unreadable(path, &e),
    };
    let ledger = Ledger::new(t.conversation());
    let (mut problems, mut notes) = flagged_and_noted(&t, &ledger);
    if path.as_os_str() != "-" {
        scan_lines(path, &t, &mut problems, &mut notes);
    }
    tail_finding(&t, &mut problems, &mut notes);
    problems.sort_by_key(|p| p.line);
    VerifyReport {
        file: t.display(),
        format: Some(t.format.name().to_string()),
        clean: problems.is_empty(),
        entries: t.entries.len(),
        lines: t.lines,
        standing: ledger
            .summaries
            .values()
            .filter(|s| s.standing() && s.covered_by.is_none())
            .count(),
        problems,
        notes,
    }
}

/// The report of a file that cannot be read at all.
fn unreadable(path: &std::path::Path, e: &transcript::TranscriptError) -> VerifyReport {
    use transcript::TranscriptError as E;
    let line = match e {
        E::Malformed { line, .. } | E::NotMessage { line, .. } | E::Torn { line, .. } => {
            *line as u32
        }
        _ => 0,
    };
    VerifyReport {
        file: path.display().to_string(),
        format: None,
        clean: false,
        entries: 0,
        lines: 0,
        standing: 0,
        problems: vec![Finding {
            line,
            kind: "unreadable".into(),
            what: e.to_string(),
        }],
        notes: Vec::new(),
    }
}

/// The ledger's flags and the reader's notes, as problems and notes.
fn flagged_and_noted(t: &Transcript, ledger: &Ledger<'_>) -> (Vec<Finding>, Vec<Finding>) {
    let mut problems = Vec::new();
    let mut notes = Vec::new();
    for f in &ledger.flags {
        let finding = Finding {
            line: f.line,
            kind: f.kind.as_str().into(),
            what: f.why.clone(),
        };
        if f.kind.is_problem() {
            problems.push(finding);
        } else {
            notes.push(finding);
        }
    }
    for n in &t.notes {
        let (kind, what) = note_view(&n.kind);
        let finding = Finding {
            line: n.line,
            kind: kind.into(),
            what,
        };
        match n.kind {
            NoteKind::TornMf => problems.push(finding),
            NoteKind::UnfinishedWrite {
                repaired: false, ..
            } => problems.push(finding),
            NoteKind::Skipped(_) if t.format == transcript::Format::Chat => problems.push(finding),
            _ => notes.push(finding),
        }
    }
    (problems, notes)
}

/// Every line on its own, whatever the format's reader made of it: one that is not JSON, or
/// carries mf's object in a shape mf does not write, is a problem unless mf's own recovery
/// already explains that line (its torn line, a line its append interrupted).
fn scan_lines(
    path: &std::path::Path,
    t: &Transcript,
    problems: &mut Vec<Finding>,
    notes: &mut Vec<Finding>,
) {
    // A line mf's append interrupted is explained only when its halves were rejoined.
    let mut explained = std::collections::HashSet::new();
    for n in &t.notes {
        match n.kind {
            NoteKind::TornMf | NoteKind::GluedAfterTornMf => {
                explained.insert(n.line);
            }
            NoteKind::Rejoined { first } => {
                explained.insert(n.line);
                explained.insert(first);
            }
            NoteKind::InterruptedByMf | NoteKind::Skipped(_) | NoteKind::UnfinishedWrite { .. } => {
            }
        }
    }
    match transcript::scan::scan(path) {
        Ok(issues) => {
            for i in issues {
                if explained.contains(&i.line) {
                    continue;
                }
                // The reader's own note for the same line gives way to the plainer finding.
                notes.retain(|n: &Finding| !(n.line == i.line && n.kind == "skipped"));
                problems.retain(|n: &Finding| !(n.line == i.line && n.kind == "skipped"));
                problems.push(Finding {
                    line: i.line,
                    kind: i.kind.into(),
                    what: i.what,
                });
            }
        }
        Err(e) => problems.push(Finding {
            line: 0,
            kind: "unreadable".into(),
            what: format!("cannot read every line: {e}"),
        }),
    }
}

/// The tail: a torn last line is a problem; one without a newline, a note.
fn tail_finding(t: &Transcript, problems: &mut Vec<Finding>, notes: &mut Vec<Finding>) {
    match t.tail {
        Tail::Torn { line, bytes, mf, .. } => problems.push(Finding {
            line: line as u32,
            kind: if mf { "torn-mf-line" } else { "torn-tail" }.into(),
            what: if mf {
                format!("the last line ({bytes} bytes) is one mf began and did not finish; the next mf write closes it with a newline")
            } else {
                format!("the last line ({bytes} bytes) is incomplete: no newline, not valid JSON; another program may be writing it")
            },
        }),
        Tail::Unterminated => notes.push(Finding {
            line: t.lines,
            kind: "unterminated".into(),
            what: "the last line has no newline; mf adds one before it appends".into(),
        }),
        Tail::Clean => {}
    }
}

pub fn verify(args: &VerifyArgs, _ui: &Ui) -> Result<ExitStatus> {
    // Always the whole file, never a checkpoint.
    let opts = read_options(args.from, None);
    let reports: Vec<VerifyReport> = args.files.iter().map(|f| verify_file(f, &opts)).collect();
    if args.json {
        let mut text = String::new();
        for r in &reports {
            text.push_str(&serde_json::to_string(r).expect("a report serializes"));
            text.push('\n');
        }
        render::stdout(&text)?;
    } else {
        render::stdout(&render::verify::lines(&reports))?;
    }
    Ok(if reports.iter().all(|r| r.clean) {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}
