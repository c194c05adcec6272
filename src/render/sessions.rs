//! The session list of `mf sessions`: a table on a terminal, tab-separated lines on a pipe,
//! JSON lines with `--json`, NUL-ended paths with `-0`.

use std::io::{self, Write};

use serde::Serialize;

use super::Ui;

/// One session, as `mf sessions` shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionView {
    pub agent: &'static str,
    pub path: String,
    /// The working directory the session was run in (as the file records it).
    pub project: Option<String>,
    /// ISO-8601 UTC.
    pub modified: String,
    /// Milliseconds since the epoch.
    pub modified_ms: u64,
    pub size: u64,
    /// Estimated tokens of what the agent is shown now (mf's recall view), 4 characters a token.
    pub tokens: Option<u64>,
    /// Whether the agent is running it now, and why mf thinks so.
    pub live: Option<bool>,
    pub live_why: Option<String>,
    /// Standing mf summaries in the file.
    pub mf_folds: Option<usize>,
    /// The agent's own compaction summaries in the file.
    pub agent_folds: Option<usize>,
    /// Why the file could not be read (the other fields then say only what the directory does).
    pub error: Option<String>,
}

/// `-0`: each path ended by a NUL byte.
pub fn paths_nul(rows: &[SessionView]) -> io::Result<()> {
    let mut out = io::stdout().lock();
    for r in rows {
        out.write_all(r.path.as_bytes())?;
        out.write_all(b"\0")?;
    }
    out.flush()
}

/// `--json`: one object per session, one per line.
pub fn json_lines(rows: &[SessionView]) -> io::Result<()> {
    let mut out = io::stdout().lock();
    for r in rows {
        serde_json::to_writer(&mut out, r)?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

fn size_text(b: u64) -> String {
    match b {
        0..1_000 => format!("{b} B"),
        1_000..1_000_000 => format!("{:.1} kB", b as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", b as f64 / 1e6),
        _ => format!("{:.1} GB", b as f64 / 1e9),
    }
}

fn folded_text(r: &SessionView) -> String {
    let mut parts = Vec::new();
    if let Some(n) = r.mf_folds.filter(|&n| n > 0) {
        parts.push(format!("mf {n}"));
    }
    if let Some(n) = r.agent_folds.filter(|&n| n > 0) {
        parts.push(format!("{} {n}", r.agent));
    }
    if parts.is_empty() {
        if r.error.is_some() { "?" } else { "no" }.into()
    } else {
        parts.join(", ")
    }
}

fn live_text(r: &SessionView) -> &'static str {
    match r.live {
        Some(true) => "live",
        Some(false) => "-",
        None => "?",
    }
}

/// The list for people: a table on a terminal; on a pipe, a header line and one tab-separated
/// line per session (agent, modified as ISO-8601 UTC, size in bytes, tokens, live, folded,
/// project, path), never wrapped.
/// A path or project that holds a control character (a newline, a tab, an escape) shows it
/// escaped (`\n`), so it cannot break a row or drive the terminal; `--json` and `-0` carry it
/// exactly.
pub fn table(ui: &Ui, rows: &[SessionView]) -> io::Result<()> {
    let header = [
        "agent", "modified", "size", "tokens", "live", "folded", "project", "path",
    ];
    // On a terminal, for people: the time in UTC (said so), sizes in kB/MB, tokens with
    // separators. On a pipe, for tools (as compact's TSV): the ISO time with its zone, bare
    // numbers (bytes, tokens).
    let people = ui.settings.stdout_is_terminal;
    let cells = |r: &SessionView| -> [String; 8] {
        [
            r.agent.to_string(),
            if people {
                format!(
                    "{} UTC",
                    r.modified
                        .get(..19)
                        .unwrap_or(&r.modified)
                        .replace('T', " ")
                )
            } else {
                r.modified.clone()
            },
            if people {
                size_text(r.size)
            } else {
                r.size.to_string()
            },
            r.tokens.map_or_else(
                || "?".into(),
                |t| {
                    if people {
                        super::thousands(t as usize)
                    } else {
                        t.to_string()
                    }
                },
            ),
            live_text(r).into(),
            folded_text(r),
            r.project
                .as_deref()
                .map_or_else(|| "?".into(), super::one_line),
            match &r.error {
                Some(e) => super::one_line(&format!("{} (unreadable: {e})", r.path)),
                None => super::one_line(&r.path),
            },
        ]
    };
    let mut out = io::stdout().lock();
    if ui.settings.stdout_is_terminal {
        let mut t = ui.grid(super::Plain::Tsv);
        t.set_header(header);
        for r in rows {
            t.add_row(cells(r));
        }
        writeln!(out, "{}", t.render(ui, ""))?;
    } else {
        writeln!(out, "{}", header.join("\t"))?;
        for r in rows {
            // Each cell is one line without a tab (control characters are shown escaped).
            let c = cells(r);
            writeln!(out, "{}", c.join("\t"))?;
        }
    }
    out.flush()
}
