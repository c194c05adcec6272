//! Renderer for `mf explain`: summaries, history, flags and the decision for now, as tables.

use crate::commands::explain::Explanation;
use crate::render::{Ui, decision_table};

pub fn tables(ui: &Ui, ex: &Explanation) -> String {
    let mut out = format!(
        "{}: {} entries in {} turns\n",
        ex.file, ex.entries, ex.turns
    );
    if let Some(f) = &ex.focus {
        out.push_str(&format!(
            "\n{} (line {}) is a {}{}\n",
            f.id,
            f.line,
            f.kind,
            f.hidden_by
                .as_ref()
                .map_or(String::new(), |s| format!(", hidden from recall by {s}"))
        ));
    }

    out.push_str("\nsummaries\n");
    if ex.summaries.is_empty() {
        out.push_str("  none\n");
    } else {
        let mut t = ui.table();
        t.set_header(vec![
            "id",
            "line",
            "turns",
            "entries",
            "originals",
            "model",
            "state",
            "chars",
        ]);
        for s in &ex.summaries {
            let state = match &s.nested_in {
                Some(outer) => format!("nested in {outer}"),
                None => s.state.to_string(),
            };
            t.add_row(vec![
                s.id.clone(),
                s.line.to_string(),
                format!("{}–{}", s.from_turn, s.to_turn),
                s.entry_count.to_string(),
                s.original_count.to_string(),
                s.model.clone(),
                state,
                s.chars.to_string(),
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }

    out.push_str("\nhistory\n");
    if ex.history.is_empty() {
        out.push_str("  no decisions recorded\n");
    } else {
        let mut t = ui.table();
        t.set_header(vec![
            "line", "decision", "turns", "entries", "model", "detail",
        ]);
        for h in &ex.history {
            let what = match (h.kind, &h.summary_id, &h.reason) {
                ("fold", Some(id), _) => format!("folded → {id}"),
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
                h.detail.clone(),
            ]);
        }
        out.push_str(&format!("{t}\n"));
    }

    out.push_str("\nflags\n");
    if ex.flags.is_empty() {
        out.push_str("  none\n");
    } else {
        let mut t = ui.table();
        t.set_header(vec!["line", "id", "why"]);
        for f in &ex.flags {
            t.add_row(vec![f.line.to_string(), f.id.clone(), f.why.clone()]);
        }
        out.push_str(&format!("{t}\n"));
    }

    out.push_str("\nnow (what `mf compact` would do; nothing is called or written)\n");
    out.push_str(&decision_table(ui, &ex.now));
    out.push('\n');
    out
}
