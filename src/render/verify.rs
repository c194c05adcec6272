//! Renderer for `mf verify`: the report type (filled by the command) and its table.

use serde::Serialize;

use crate::render::Ui;

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerifyReport {
    pub file: String,
    pub format: Option<String>,
    /// No problems.
    pub clean: bool,
    pub entries: usize,
    pub lines: u32,
    /// Summaries and stubs that stand.
    pub standing: usize,
    pub problems: Vec<Finding>,
    /// Things worth knowing that are not problems.
    pub notes: Vec<Finding>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    pub line: u32,
    pub kind: String,
    pub what: String,
}

/// One table for all files: a row per problem and note, and a verdict per file.
pub fn table(ui: &Ui, reports: &[VerifyReport]) -> String {
    let mut t = ui.table();
    t.set_header(vec!["file", "line", "kind", "what"]);
    for r in reports {
        if r.clean && r.notes.is_empty() {
            t.add_row(vec![
                r.file.clone(),
                "—".into(),
                "clean".into(),
                format!(
                    "{} entries, {} standing summar{}; every summary checked",
                    r.entries,
                    r.standing,
                    if r.standing == 1 { "y" } else { "ies" }
                ),
            ]);
        }
        for p in r.problems.iter().chain(&r.notes) {
            t.add_row(vec![
                r.file.clone(),
                if p.line == 0 {
                    "—".into()
                } else {
                    p.line.to_string()
                },
                p.kind.clone(),
                p.what.clone(),
            ]);
        }
    }
    let bad = reports.iter().filter(|r| !r.clean).count();
    let verdict = if bad == 0 {
        format!(
            "clean: {} file{}",
            reports.len(),
            if reports.len() == 1 { "" } else { "s" }
        )
    } else {
        format!(
            "{} of {} file{} with problems",
            bad,
            reports.len(),
            if reports.len() == 1 { "" } else { "s" }
        )
    };
    format!("{t}\n{verdict}\n")
}
