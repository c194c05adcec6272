//! What the audit concludes: why a summary is declined (`Faults`, typed in `fold::fault`), and
//! the note that asks for it again.

use super::*;

impl Audit {
    /// [`Audit::verdict_allowing`] with inventions not allowed: what `compact` does unless
    /// `--allow-inventions`.
    pub fn verdict(&self, min_retention: f64, strict: bool) -> Option<Faults> {
        self.verdict_allowing(min_retention, strict, false)
    }

    /// Why the summary should be declined, or `None` to accept it: retention under
    /// `min_retention` (0 turns this off); at every threshold an invented figure, a misstated
    /// claim, a corrected value stated as current (`allow_inventions` turns these three off), an
    /// echo of the instruction, a forgery; with `strict` also any other invention and a renamed
    /// path stated as current.
    pub fn verdict_allowing(
        &self,
        min_retention: f64,
        strict: bool,
        allow_inventions: bool,
    ) -> Option<Faults> {
        let mut faults = Vec::new();
        if !self.forgeries.is_empty() {
            faults.push(Fault::Forged(
                self.forgeries
                    .iter()
                    .map(|f| (f.kind.to_string(), f.text.clone()))
                    .collect(),
            ));
        }
        if self.echo {
            faults.push(Fault::Echo(self.echo_ratio));
        }
        // Text that keeps next to nothing of its own is generic, whatever mf adds after it.
        if let Some(own) = self.model_retention
            && min_retention > 0.0
            && own < min_retention * MIN_OWN_SHARE
        {
            faults.push(Fault::Generic {
                own,
                floor: min_retention * MIN_OWN_SHARE,
            });
        }
        if min_retention > 0.0 && self.retention < min_retention {
            faults.push(Fault::Lossy {
                kept: self.kept,
                found: self.found,
                retention: self.retention,
                min: min_retention,
                missing: self.missing.iter().map(|m| m.text.clone()).collect(),
            });
        }
        // `min_retention` governs retention only: what is wrong declines at every threshold,
        // unless the user allows inventions (`strict` overrides that).
        let judged = strict || !allow_inventions;
        let invented: Vec<String> = self
            .inventions
            .iter()
            .filter(|i| strict || (judged && i.class.is_figure() && !i.text.starts_with('@')))
            .map(|i| i.text.clone())
            .collect();
        if !invented.is_empty() {
            faults.push(Fault::Invented(invented));
        }
        // A path "corrected" is most often a file renamed or moved: naming the old one is
        // history, not a wrong value (decisive with `strict`).
        let superseded: Vec<(String, String)> = self
            .superseded
            .iter()
            .filter(|v| strict || (judged && v.class != ItemClass::Path))
            .map(|v| (v.old.clone(), v.new.clone()))
            .collect();
        if !superseded.is_empty() {
            faults.push(Fault::Superseded(superseded));
        }
        if judged && !self.misstated.is_empty() {
            faults.push(Fault::Misstated(
                self.misstated
                    .iter()
                    .map(|m| crate::fold::fault::Misstated {
                        kind: m.kind.as_str(),
                        claim: m.claim.clone(),
                        span_says: m.span_says.clone(),
                        turn: m.turn,
                        line: m.line,
                    })
                    .collect(),
            ));
        }
        (!faults.is_empty()).then_some(Faults(faults))
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
        if !self.misstated.is_empty() {
            note.push_str("\nThese claims say otherwise than the transcript; state what it says:");
            for m in &self.misstated {
                note.push_str(&format!(
                    "\n- not \"{}\": the transcript says \"{}\" (turn {})",
                    m.claim, m.span_says, m.turn
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
