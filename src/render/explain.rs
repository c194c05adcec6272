//! Renderer for `mf explain`: the view types it prints (filled by the command) and its tables.

use serde::Serialize;

use crate::decision::{CostRecord, DecisionRecord, UsageRecord};
use crate::render::{Grid, Plain, Ui, decision_grid};

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Explanation {
    pub file: String,
    pub format: String,
    /// Entries in the file (summaries included).
    pub entries: usize,
    pub turns: u64,
    pub lines: u32,
    pub summaries: Vec<SummaryView>,
    pub history: Vec<HistoryEvent>,
    pub flags: Vec<FlagView>,
    /// Lines that are not simply lines: mf's own torn lines, lines recovered after a glue,
    /// lines the format's reader skips.
    pub notes: Vec<NoteView>,
    /// The agent's own compactions in the file.
    pub native: Vec<NativeView>,
    /// For an agent's session (or any file with entries off the active branch): what the agent
    /// sees against what the file also holds.
    pub branch: Option<BranchView>,
    /// What `compact` would do now with the given policy.
    pub now: DecisionRecord,
    /// With an ID: what that entry is and what hides it.
    pub focus: Option<Focus>,
    /// With a priced model and a fold to make: what its calls would cost at each tier the
    /// model's provider sells (estimated from the plan).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tier_costs: Vec<TierCost>,
}

/// What the planned calls would cost at one tier.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TierCost {
    /// `standard`, `batch` or `flex`.
    pub tier: &'static str,
    pub usd: f64,
    /// The flag that asks for it.
    pub flag: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryView {
    pub id: String,
    /// `summary` or `stub`.
    pub kind: &'static str,
    pub line: u32,
    pub from_turn: u64,
    pub to_turn: u64,
    pub entry_count: usize,
    pub original_count: usize,
    pub model: String,
    pub summarized_at_ms: u64,
    /// `standing`, `nested` (inside a standing summary) or `retracted`.
    pub state: &'static str,
    pub nested_in: Option<String>,
    pub chars: usize,
    /// The audit recorded with the summary, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit: Option<serde_json::Value>,
    /// `--strategy cited`: the candidate it was, the call that brought it, what it cites, and
    /// (on the first summary of a fold) the candidates rejected in that fold and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cited: Option<serde_json::Value>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEvent {
    pub line: u32,
    pub at_ms: u64,
    /// `fold`, `stub`, `decline`, `retract` or `unknown`.
    pub kind: &'static str,
    pub summary_id: Option<String>,
    pub reason: Option<String>,
    pub model: Option<String>,
    pub from_turn: Option<u64>,
    pub to_turn: Option<u64>,
    pub entry_count: Option<u64>,
    pub detail: String,
    /// What the call(s) behind a fold or decline were billed, as the provider reported it.
    pub usage: Option<UsageRecord>,
    /// Its cost at the model's price band for that usage (null when no price is known).
    pub cost: Option<CostRecord>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FlagView {
    pub line: u32,
    pub id: Option<String>,
    pub kind: &'static str,
    pub why: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NoteView {
    pub line: u32,
    pub kind: &'static str,
    pub detail: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NativeView {
    pub line: u32,
    pub detail: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Focus {
    pub id: String,
    pub line: u32,
    /// `summary`, `stub`, `message` or `look-alike`.
    pub kind: &'static str,
    /// The top-level standing summary that hides it from recall, if any.
    pub hidden_by: Option<String>,
}

fn retention(s: &SummaryView) -> String {
    s.audit
        .as_ref()
        .and_then(|a| a.get("retention"))
        .and_then(serde_json::Value::as_f64)
        .map_or("—".into(), |x| format!("{:.0}%", x * 100.0))
}

/// The active branch of a session: the entries on the path the agent resumes.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchView {
    /// Entries on the active branch (what the agent's model is shown, before mf's folds).
    pub entries: usize,
    /// The anchor line of the branch's last entry (the leaf).
    pub leaf_line: Option<u32>,
    /// Entries off it: abandoned branches, side chains, rows the agent does not send.
    pub off_branch: usize,
    /// Entries before the agent's own compaction: history it no longer sends.
    pub before_native: usize,
}

/// A section's grid: a table flush left, or lines indented under its heading.
fn section(ui: &Ui, t: &Grid) -> String {
    format!("{}\n", t.render(ui, "  "))
}

/// Lines of running text, each wrapped to a terminal's width.
fn prose_lines(ui: &Ui, text: &str) -> String {
    text.lines()
        .map(|l| {
            let body = l.trim_start();
            ui.prose(body, &l[..l.len() - body.len()])
        })
        .collect()
}

/// `mf explain` in words: sections of tables on a terminal, `key: value` records on a pipe.
pub fn tables(ui: &Ui, ex: &Explanation) -> String {
    let mut out = ui.prose(
        &format!(
            "{} ({}): {} entries in {} turns, {} lines",
            ex.file, ex.format, ex.entries, ex.turns, ex.lines
        ),
        "",
    );
    if let Some(b) = &ex.branch {
        let mut line = String::new();
        line.push_str(&format!(
            "active branch: {} entr{}{}",
            b.entries,
            if b.entries == 1 { "y" } else { "ies" },
            b.leaf_line
                .map_or(String::new(), |l| format!(", its leaf on line {l}"))
        ));
        let mut aside = Vec::new();
        if b.off_branch > 0 {
            aside.push(format!(
                "{} off it (abandoned branches, side chains, rows the agent does not send)",
                b.off_branch
            ));
        }
        if b.before_native > 0 {
            aside.push(format!(
                "{} before the agent's own compaction",
                b.before_native
            ));
        }
        if !aside.is_empty() {
            line.push_str(&format!(
                "; {}: kept in the file, never shown or folded",
                aside.join(", ")
            ));
        }
        out.push_str(&ui.prose(&line, ""));
    }
    if let Some(f) = &ex.focus {
        out.push('\n');
        out.push_str(&ui.prose(
            &format!(
                "{} (line {}) is a {}{}",
                f.id,
                f.line,
                f.kind,
                f.hidden_by
                    .as_ref()
                    .map_or(String::new(), |s| format!(", hidden from recall by {s}"))
            ),
            "",
        ));
    }

    out.push_str("\nsummaries\n");
    if ex.summaries.is_empty() {
        out.push_str("  none\n");
    } else {
        let mut t = ui.grid(Plain::Records);
        t.set_header(vec![
            "id",
            "line",
            "turns",
            "entries",
            "originals",
            "model",
            "state",
            "chars",
            "retention",
        ]);
        for s in &ex.summaries {
            let state = match &s.nested_in {
                Some(outer) => format!("nested in {outer}"),
                None => s.state.to_string(),
            };
            t.add_row(vec![
                s.id.clone(),
                s.line.to_string(),
                if s.from_turn == s.to_turn {
                    s.from_turn.to_string()
                } else {
                    format!("{}–{}", s.from_turn, s.to_turn)
                },
                s.entry_count.to_string(),
                s.original_count.to_string(),
                s.model.clone(),
                state,
                s.chars.to_string(),
                retention(s),
            ]);
        }
        out.push_str(&section(ui, &t));
        for s in &ex.summaries {
            if let Some(a) = &s.audit {
                out.push('\n');
                out.push_str(&ui.prose(&format!("audit of {}", s.id), ""));
                out.push_str(&prose_lines(ui, &audit_lines(a)));
            }
            if let Some(c) = &s.cited {
                out.push('\n');
                out.push_str(&ui.prose(&format!("citations of {}", s.id), ""));
                out.push_str(&prose_lines(ui, &cited_lines(c)));
            }
        }
    }

    if !ex.native.is_empty() {
        out.push_str("\nthe agent's own compactions\n");
        let mut t = ui.grid(Plain::Records);
        t.set_header(vec!["line", "what"]);
        for n in &ex.native {
            t.add_row(vec![n.line.to_string(), n.detail.clone()]);
        }
        out.push_str(&section(ui, &t));
    }

    out.push_str("\nhistory\n");
    if ex.history.is_empty() {
        out.push_str("  no decisions recorded\n");
    } else {
        let mut t = ui.grid(Plain::Records);
        t.set_header(vec![
            "line", "decision", "turns", "entries", "model", "tokens", "cost", "detail",
        ]);
        for h in &ex.history {
            let what = match (h.kind, &h.summary_id, &h.reason) {
                ("fold", Some(id), _) => format!("folded → {id}"),
                ("stub", Some(id), _) => format!("masked → {id}"),
                ("retract", Some(id), _) => format!("retracted {id}"),
                ("decline", _, Some(reason)) => format!("declined ({reason})"),
                (k, _, _) => k.to_string(),
            };
            let turns = match (h.from_turn, h.to_turn) {
                (Some(a), Some(b)) => format!("{a}–{b}"),
                _ => "—".into(),
            };
            t.add_row(vec![
                h.line.to_string(),
                what,
                turns,
                h.entry_count.map_or("—".into(), |n| n.to_string()),
                h.model.clone().unwrap_or_else(|| "—".into()),
                h.usage.map_or("—".into(), |u| {
                    format!(
                        "{} in, {} out",
                        crate::render::thousands(u.input_tokens as usize),
                        crate::render::thousands(u.output_tokens as usize)
                    )
                }),
                h.cost
                    .map_or("—".into(), |c| format!("${}", crate::render::usd(c.usd))),
                h.detail.clone(),
            ]);
        }
        out.push_str(&section(ui, &t));
    }

    out.push_str("\nflags\n");
    if ex.flags.is_empty() && ex.notes.is_empty() {
        out.push_str("  none\n");
    } else {
        let mut t = ui.grid(Plain::Records);
        t.set_header(vec!["line", "id", "kind", "why"]);
        for f in &ex.flags {
            t.add_row(vec![
                f.line.to_string(),
                f.id.clone().unwrap_or_else(|| "—".into()),
                f.kind.to_string(),
                f.why.clone(),
            ]);
        }
        for n in &ex.notes {
            t.add_row(vec![
                n.line.to_string(),
                "—".into(),
                n.kind.to_string(),
                n.detail.clone(),
            ]);
        }
        out.push_str(&section(ui, &t));
    }

    out.push('\n');
    out.push_str(&ui.prose(
        "now (what `mf compact` would do; nothing is called or written)",
        "",
    ));
    out.push_str(&section(ui, &decision_grid(ui, &ex.now)));
    if !ex.tier_costs.is_empty() {
        let each: Vec<String> = ex
            .tier_costs
            .iter()
            .map(|c| {
                format!(
                    "${} {}{}",
                    crate::render::usd(c.usd),
                    c.tier,
                    if c.flag.is_empty() {
                        String::new()
                    } else {
                        format!(" ({})", c.flag)
                    }
                )
            })
            .collect();
        out.push_str(&ui.prose(
            &format!("the same run would cost (estimated): {}", each.join(" · ")),
            "",
        ));
    }
    out
}

/// One listed audit item in words: `"16:00 UTC" (date, turn 4)`,
/// `"v1" → "v2" (turn 3)`, `heading: "## Summary"`.
fn audit_item(x: &serde_json::Value) -> String {
    let field = |k: &str| x.get(k).and_then(serde_json::Value::as_str);
    let turn = x
        .get("turn")
        .and_then(serde_json::Value::as_u64)
        .map(|t| format!(", turn {t}"))
        .unwrap_or_default();
    match x {
        serde_json::Value::String(s) => format!("{s:?}"),
        _ if field("old").is_some() => format!(
            "{:?} → {:?} ({}{turn})",
            field("old").unwrap_or(""),
            field("new").unwrap_or(""),
            field("class").unwrap_or("value"),
        ),
        _ if field("claim").is_some() => {
            let line = x
                .get("line")
                .and_then(serde_json::Value::as_u64)
                .map(|l| format!("line {l}"))
                .unwrap_or_else(|| turn.trim_start_matches(", ").to_string());
            format!(
                "{:?}: the span says {:?} ({}, {line})",
                field("claim").unwrap_or(""),
                field("spanSays").unwrap_or(""),
                field("kind").unwrap_or("claim"),
            )
        }
        _ if field("kind").is_some() => {
            format!(
                "{}: {:?}",
                field("kind").unwrap_or(""),
                field("text").unwrap_or("")
            )
        }
        _ if field("text").is_some() => match field("class") {
            Some(class) => format!("{:?} ({class}{turn})", field("text").unwrap_or("")),
            None => format!("{:?}", field("text").unwrap_or("")),
        },
        other => other.to_string(),
    }
}

/// What a cited summary records about its fold, as a few readable lines.
pub fn cited_lines(c: &serde_json::Value) -> String {
    let s = |v: &serde_json::Value, k: &str| {
        v.get(k)
            .map(|x| match x {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            })
            .unwrap_or_else(|| "?".into())
    };
    let cites: Vec<String> = c
        .get("cites")
        .and_then(serde_json::Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let mut out = format!(
        "  candidate {} of call {} ({} call{} in its fold); cites {}\n",
        s(c, "candidate"),
        s(c, "round"),
        s(c, "calls"),
        if s(c, "calls") == "1" { "" } else { "s" },
        if cites.is_empty() {
            "—".to_string()
        } else {
            cites.join(", ")
        }
    );
    if let Some(rej) = c.get("rejected").and_then(serde_json::Value::as_array) {
        out.push_str(&format!("  rejected in its fold: {}\n", rej.len()));
        for r in rej {
            out.push_str(&format!(
                "  - {} (call {}, {}): {}\n",
                s(r, "candidate"),
                s(r, "round"),
                s(r, "reason"),
                s(r, "detail")
            ));
        }
    }
    out
}

/// An audit as a few readable lines.
pub fn audit_lines(a: &serde_json::Value) -> String {
    let mut out = String::new();
    if let Some(w) = super::retention_words(a) {
        out.push_str(&format!("  {w}"));
    }
    if let Some(classes) = a.get("classes").and_then(serde_json::Value::as_array) {
        let parts: Vec<String> = classes
            .iter()
            .filter_map(|c| {
                let name = c.get("class")?.as_str()?;
                let found = c.get("found")?.as_u64()?;
                let kept = c.get("kept")?.as_u64()?;
                (found > 0).then(|| format!("{name} {kept}/{found}"))
            })
            .collect();
        if !parts.is_empty() {
            out.push_str(&format!(" · {}", parts.join(", ")));
        }
    }
    out.push('\n');
    for (key, label) in [
        ("missing", "missing"),
        ("inventions", "invented"),
        ("superseded", "superseded"),
        ("misstated", "misstated"),
        ("forgeries", "forged structure"),
        ("instructions", "instructions to the assistant"),
    ] {
        if let Some(v) = a.get(key).and_then(serde_json::Value::as_array)
            && !v.is_empty()
        {
            // What the audit quotes from the span, defused as an entry's text is shown.
            let items: Vec<String> = v
                .iter()
                .take(12)
                .map(|x| super::shown(&audit_item(x), false))
                .collect();
            let more = v.len().saturating_sub(items.len());
            let more = if more > 0 {
                format!(" … and {more} more")
            } else {
                String::new()
            };
            out.push_str(&format!("  {label}: {}{more}\n", items.join("; ")));
        }
    }
    if let Some(e) = a.get("echo").and_then(serde_json::Value::as_f64)
        && e > 0.0
    {
        out.push_str(&format!("  echoes the instruction: {:.0}%\n", e * 100.0));
    }
    out
}
