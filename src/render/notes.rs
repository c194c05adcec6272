//! What a reader's note on a line (a torn mf line, a rejoined or skipped line, an unfinished
//! write) says to a person: its stable kind and its words, for `verify` and `explain`.

use crate::transcript::NoteKind;

pub fn note_view(kind: &NoteKind) -> (&'static str, String) {
    match kind {
        NoteKind::TornMf => (
            "torn-mf-line",
            "a line an interrupted mf began and did not finish; skipped (it hides nothing)".into(),
        ),
        NoteKind::GluedAfterTornMf => (
            "recovered",
            "another writer's line was glued after mf's torn line; it was recovered".into(),
        ),
        NoteKind::InterruptedByMf => (
            "interleaved",
            "another writer's line was interrupted here by mf's append; mf's line was read".into(),
        ),
        NoteKind::Rejoined { first } => (
            "rejoined",
            format!("the rest of the line begun on line {first}; the two halves were rejoined"),
        ),
        NoteKind::Skipped(why) => (
            "skipped",
            format!("not a line of this format, skipped as the agent skips it: {why}"),
        ),
        NoteKind::UnfinishedWrite {
            whole,
            of,
            repaired,
        } => (
            "unfinished-write",
            format!(
                "a write an interrupted mf began here and did not finish ({whole} of its {of} lines are whole): none of it counts, and the agent, which honours it only through its last line, shows what it showed before; {}",
                if *repaired {
                    "a later mf write landed whole"
                } else {
                    "the next `mf compact` (or `mf expand --restore`) writes it again"
                }
            ),
        ),
    }
}
