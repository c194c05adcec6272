//! `Ui` and the renderers: the only module that prints. stdout carries data (tables, JSON,
//! transcripts); stderr carries talk (warnings, notes, progress, errors).

use std::io::{self, Write};
use std::time::Duration;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::decision::DecisionRecord;
use crate::settings::UiSettings;

pub mod explain;
pub mod recall;

/// The printer every command talks through.
#[derive(Debug, Clone, Copy)]
pub struct Ui {
    settings: UiSettings,
}

impl Ui {
    pub fn new(settings: UiSettings) -> Self {
        Self { settings }
    }

    /// A warning on stderr (unless `--quiet`).
    pub fn warn(&self, message: &str) {
        if !self.settings.quiet {
            let _ = writeln!(io::stderr().lock(), "warning: {message}");
        }
    }

    /// A note on stderr (unless `--quiet`).
    pub fn note(&self, message: &str) {
        if !self.settings.quiet {
            let _ = writeln!(io::stderr().lock(), "mf: {message}");
        }
    }

    /// Whether `-v` was given.
    pub fn verbose(&self) -> bool {
        self.settings.verbose
    }

    /// A `-v` line on stderr.
    pub fn log(&self, message: &str) {
        if self.settings.verbose {
            let _ = writeln!(io::stderr().lock(), "mf: {message}");
        }
    }

    /// A spinner on stderr, only on a terminal.
    pub fn spinner(&self, message: String) -> ProgressBar {
        if !self.settings.progress {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("a valid template"),
        );
        bar.set_message(message);
        bar.enable_steady_tick(Duration::from_millis(100));
        bar
    }

    /// A bar over several files, only on a terminal.
    pub fn files_bar(&self, total: usize) -> ProgressBar {
        if !self.settings.progress || total < 2 {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} files {msg}")
                .expect("a valid template"),
        );
        bar
    }

    pub fn table(&self) -> Table {
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED);
        if self.settings.stdout_is_terminal {
            t.set_content_arrangement(ContentArrangement::Dynamic);
        } else {
            t.set_content_arrangement(ContentArrangement::Disabled);
        }
        t
    }
}

/// Print an error (and its causes and hints) on stderr.
pub fn error(err: &anyhow::Error, hints: &[String]) {
    let mut e = io::stderr().lock();
    let _ = writeln!(e, "error: {err}");
    for cause in err.chain().skip(1) {
        let _ = writeln!(e, "  caused by: {cause}");
    }
    for h in hints {
        let _ = writeln!(e, "\nhint: {h}");
    }
}

/// Write raw text to stdout.
pub fn stdout(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

/// Print decision records: JSON lines with `--json`, else a table per file.
pub fn decisions(ui: &Ui, records: &[DecisionRecord], json: bool) -> io::Result<()> {
    let mut text = String::new();
    if json {
        for r in records {
            text.push_str(&serde_json::to_string(r).expect("a decision record serializes"));
            text.push('\n');
        }
        return stdout(&text);
    }
    for r in records {
        text.push_str(&decision_table(ui, r));
        text.push('\n');
    }
    stdout(&text)
}

fn turns(from: Option<u64>, to: Option<u64>) -> String {
    match (from, to) {
        (Some(a), Some(b)) if a == b => format!("turn {a}"),
        (Some(a), Some(b)) => format!("turns {a}–{b}"),
        _ => "—".into(),
    }
}

fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn decision_table(ui: &Ui, r: &DecisionRecord) -> String {
    let mut t = ui.table();
    t.set_header(vec!["file", &r.file]);
    t.add_row(vec!["action", r.action.as_str()]);
    t.add_row(vec!["reason", &r.reason]);
    t.add_row(vec!["model", r.model.as_deref().unwrap_or("—")]);
    let span = r.span.as_ref().map_or("—".to_string(), |s| {
        let originals = if s.original_count == s.entry_count {
            String::new()
        } else {
            format!(" ({} original messages)", s.original_count)
        };
        format!(
            "{} · {} entries{originals} · {} chars (~{} tokens)",
            turns(Some(s.from_turn), Some(s.to_turn)),
            s.entry_count,
            thousands(s.chars),
            thousands(s.tokens)
        )
    });
    t.add_row(vec!["span".to_string(), span]);
    let v = &r.verbatim;
    let where_ = match (v.preamble_count, v.from_turn) {
        (0, _) => turns(v.from_turn, v.to_turn),
        (_, None) => "preamble".to_string(),
        (_, Some(_)) => format!("preamble + {}", turns(v.from_turn, v.to_turn)),
    };
    t.add_row(vec![
        "verbatim".to_string(),
        format!("{where_} · {} entries", v.entry_count),
    ]);
    if let Some(s) = &r.summary {
        t.add_row(vec![
            "summary".to_string(),
            format!(
                "{} · {} chars (~{} tokens)",
                s.id,
                thousands(s.chars),
                thousands(s.tokens)
            ),
        ]);
    }
    if let Some(u) = &r.usage {
        t.add_row(vec![
            "usage".to_string(),
            format!("{} in · {} out tokens", u.input_tokens, u.output_tokens),
        ]);
    }
    let context = if r.before == r.after {
        format!(
            "{} chars (~{} tokens), unchanged",
            thousands(r.before.chars),
            thousands(r.before.tokens)
        )
    } else {
        format!(
            "{} → {} chars (~{} → ~{} tokens)",
            thousands(r.before.chars),
            thousands(r.after.chars),
            thousands(r.before.tokens),
            thousands(r.after.tokens)
        )
    };
    t.add_row(vec!["context".to_string(), context]);
    if let Some(c) = &r.cost {
        let how = if c.estimated { " (estimated)" } else { "" };
        let usd = if c.usd == 0.0 {
            "$0".to_string()
        } else {
            format!("${:.4}", c.usd)
        };
        t.add_row(vec!["cost".to_string(), format!("{usd}{how}")]);
    }
    let written = match (r.written, &r.output) {
        (true, Some(out)) => format!("yes: {} line(s) in {out}", r.lines_appended),
        (true, None) => format!("yes: {} line(s) appended", r.lines_appended),
        (false, Some(out)) => format!("no new lines; copy written to {out}"),
        (false, None) => "no".into(),
    };
    t.add_row(vec!["written".to_string(), written]);
    t.to_string()
}

/// The `mf models` table.
pub fn models_table(ui: &Ui, rows: &[crate::commands::models::ModelView]) -> String {
    let mut t = ui.table();
    t.set_header(vec![
        "alias",
        "provider",
        "id",
        "context",
        "$ in / Mtok",
        "$ out / Mtok",
        "verified",
    ]);
    for r in rows {
        t.add_row(vec![
            r.alias.unwrap_or("").to_string(),
            r.provider.to_string(),
            r.id.to_string(),
            if r.context_tokens == 0 {
                "—".into()
            } else {
                thousands(r.context_tokens as usize)
            },
            format!("{:.2}", r.price_in_per_mtok),
            format!("{:.2}", r.price_out_per_mtok),
            r.verified.to_string(),
        ]);
    }
    format!(
        "{t}\nAlso: anthropic:<id>, openai:<id>, bare OpenAI names (gpt-…, o…), and openai-compatible:<name> with --base-url.\n"
    )
}
