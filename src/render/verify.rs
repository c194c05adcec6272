//! Renderer for `mf verify`: the report type (filled by the command) and its lines.

use serde::Serialize;

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

/// One line per finding, `file:line: kind: what` (notes as `file:line: note: kind: what`), then
/// a line per clean file and the verdict. Every line stands alone, for grep and editors.
pub fn lines(reports: &[VerifyReport]) -> String {
    let mut out = String::new();
    let at = |r: &VerifyReport, line: u32| {
        if line == 0 {
            r.file.clone()
        } else {
            format!("{}:{line}", r.file)
        }
    };
    for r in reports {
        for p in &r.problems {
            out.push_str(&format!(
                "{}: {}: {}\n",
                at(r, p.line),
                p.kind,
                one_line(&p.what)
            ));
        }
        for n in &r.notes {
            out.push_str(&format!(
                "{}: note: {}: {}\n",
                at(r, n.line),
                n.kind,
                one_line(&n.what)
            ));
        }
        if r.clean {
            out.push_str(&format!(
                "{}: clean: {} entries, {} standing summar{}; every summary checked\n",
                r.file,
                r.entries,
                r.standing,
                if r.standing == 1 { "y" } else { "ies" }
            ));
        }
    }
    let bad = reports.iter().filter(|r| !r.clean).count();
    let problems: usize = reports.iter().map(|r| r.problems.len()).sum();
    let files = |n: usize| format!("{n} file{}", if n == 1 { "" } else { "s" });
    if bad == 0 {
        out.push_str(&format!("clean: {}\n", files(reports.len())));
    } else {
        out.push_str(&format!(
            "{} problem{} in {} of {}\n",
            problems,
            if problems == 1 { "" } else { "s" },
            bad,
            files(reports.len())
        ));
    }
    out
}

/// A finding's text on one line.
fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}
