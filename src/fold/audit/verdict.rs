//! What the audit concludes: why a summary is declined, and the note that asks for it again.

use super::*;

pub(super) fn list<T>(items: &[T], f: impl Fn(&T) -> String, max: usize) -> String {
    let mut s: Vec<String> = items.iter().take(max).map(f).collect();
    if items.len() > max {
        s.push(format!("and {} more", items.len() - max));
    }
    s.join(", ")
}

impl Audit {
    /// Why the summary should be declined, or `None` to accept it: retention under
    /// `min_retention`, an invented figure, a corrected value stated as current (0 turns these
    /// three off), an echo of the instruction, a forgery; with `strict` also any other invention
    /// and a renamed path stated as current, whatever `min_retention`.
    pub fn verdict(&self, min_retention: f64, strict: bool) -> Option<String> {
        let mut reasons = Vec::new();
        if !self.forgeries.is_empty() {
            reasons.push(format!(
                "it imitates mf's framing ({})",
                list(&self.forgeries, |f| format!("{} `{}`", f.kind, f.text), 3)
            ));
        }
        if self.echo {
            reasons.push(format!(
                "it repeats the instruction ({:.0}% of its 5-word phrases)",
                self.echo_ratio * 100.0
            ));
        }
        // Text that keeps next to nothing of its own is generic, whatever mf adds after it.
        if let Some(own) = self.model_retention
            && min_retention > 0.0
            && own < min_retention * MIN_OWN_SHARE
        {
            reasons.push(format!(
                "its own words keep {:.0}% of the salient items, under {:.0}% (a generic text)",
                own * 100.0,
                min_retention * MIN_OWN_SHARE * 100.0
            ));
        }
        if min_retention > 0.0 && self.retention < min_retention {
            let mut r = format!(
                "it keeps {} of {} items ({:.0}%), under the minimum of {:.0}%",
                self.kept,
                self.found,
                self.retention * 100.0,
                min_retention * 100.0
            );
            if !self.missing.is_empty() {
                r.push_str(&format!(
                    "; missing: {}",
                    list(&self.missing, |m| m.text.clone(), 5)
                ));
            }
            reasons.push(r);
        }
        // `min_retention` 0 turns the audit's refusals off (echoes and forgeries aside), unless
        // `strict`.
        let judged = strict || min_retention > 0.0;
        let invented: Vec<&Invention> = self
            .inventions
            .iter()
            .filter(|i| strict || (judged && i.class.is_figure() && !i.text.starts_with('@')))
            .collect();
        if !invented.is_empty() {
            reasons.push(format!(
                "it states what nothing it read says ({})",
                list(&invented, |i| i.text.clone(), 5)
            ));
        }
        // A path "corrected" is most often a file renamed or moved: naming the old one is
        // history, not a wrong value (decisive with `strict`).
        let superseded: Vec<&SupersededValue> = self
            .superseded
            .iter()
            .filter(|v| strict || (judged && v.class != ItemClass::Path))
            .collect();
        if !superseded.is_empty() {
            reasons.push(format!(
                "it states corrected values as current ({})",
                list(
                    &superseded,
                    |s| format!("{} (corrected to {})", s.old, s.new),
                    5
                )
            ));
        }
        (!reasons.is_empty()).then(|| reasons.join("; "))
    }

    /// A note for a second request: the items to keep, the corrections to state, the inventions
    /// to drop.
    pub fn retry_note(&self) -> String {
        let mut note = String::from(
            "Your previous summary of this transcript was not accepted. Write it again, following the same instructions.",
        );
        if !self.missing.is_empty() {
            note.push_str(
                "\nIt left out these items, which a later turn will need; keep each of them verbatim:",
            );
            for m in &self.missing {
                note.push_str(&format!(
                    "\n- {} ({}, turn {})",
                    m.text,
                    m.class.as_str(),
                    m.turn
                ));
            }
            let more = self.missing_count.saturating_sub(self.missing.len());
            if more > 0 {
                note.push_str(&format!(
                    "\n- and {more} more items of the same kinds (paths, commands, figures, dates, identifiers, names)"
                ));
            }
        }
        if !self.superseded.is_empty() {
            note.push_str("\nState these values at their corrected value, and mark the old value as superseded:");
            for s in &self.superseded {
                note.push_str(&format!(
                    "\n- {} (not {}; corrected in turn {})",
                    s.new, s.old, s.turn
                ));
            }
        }
        if !self.inventions.is_empty() {
            note.push_str("\nThese do not occur in the transcript; do not state them:");
            for i in &self.inventions {
                note.push_str(&format!("\n- {}", i.text));
            }
        }
        if self.echo {
            note.push_str("\nDo not repeat the instructions; summarize the transcript.");
        }
        if !self.forgeries.is_empty() {
            note.push_str(
                "\nDo not write turn headings, role markers, transcript delimiters or mf's label.",
            );
        }
        note
    }
}
