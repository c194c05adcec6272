//! `--strategy mask`: stubs in place of old tool results, no model call.

use anyhow::Result;

use super::Compaction;
use super::write::lines_for;
use crate::decision::{Action, DecisionRecord, Note, Reason, Size, SummaryOutcome, SummaryRecord};
use crate::entry::{Draft, estimate_tokens};
use crate::fold::summary::StubInfo;
use crate::fold::{self, Item, Ledger, Span, summary};
use crate::settings::CompactSettings;
use crate::transcript::{Format, Transcript};

/// `--strategy mask`: stubs for old tool results, no call.
pub(super) fn mask(
    t: &Transcript,
    ledger: &Ledger<'_>,
    settings: &CompactSettings,
    ctx: &Compaction,
    r: &mut DecisionRecord,
) -> Result<Vec<String>> {
    let results = match fold::plan_mask(ledger, &settings.policy) {
        Ok(v) => v,
        Err(reason) => {
            r.reason = Reason::Skip(reason);
            return Ok(Vec::new());
        }
    };
    let now = (ctx.now_ms)();
    let mut drafts: Vec<Draft> = Vec::new();
    let mut saved = 0usize;
    let mut taken: Vec<String> = Vec::new();
    for it in results {
        let span = Span::of(ledger, vec![it]);
        let text = t.text(it as usize)?;
        let info = StubInfo {
            tool: t.tool_name(it as usize),
            chars: text.chars().count(),
            first_line: text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .to_string(),
        };
        let base = format!("msg-stub-{}", ledger.conv.entries[it as usize].line);
        let id = summary::fresh_id(&base, |id| t.has_id(id) || taken.iter().any(|x| x == id));
        taken.push(id.clone());
        let d = summary::stub(
            &span,
            id.clone(),
            &info,
            &crate::decision::stub_how_back(&t.display(), &id),
            settings.policy.keep_tool_results,
            now,
        );
        saved += info.chars.saturating_sub(d.chars());
        r.summaries.push(SummaryRecord {
            id,
            from_turn: span.from_turn,
            to_turn: span.to_turn,
            entry_count: 1,
            chars: d.chars(),
            tokens: estimate_tokens(d.chars()),
            audit: None,
            outcome: if settings.dry_run {
                SummaryOutcome::Planned
            } else {
                SummaryOutcome::Written
            },
            ..SummaryRecord::default()
        });
        drafts.push(d);
    }
    r.action = if settings.dry_run {
        Action::Planned
    } else {
        Action::Masked
    };
    r.reason = Reason::Masked {
        dry_run: settings.dry_run,
        stubs: drafts.len(),
        keep: settings.policy.keep_tool_results,
    };
    r.after = Size::of(r.after.chars.saturating_sub(saved));
    let stubs: Vec<(Item, usize)> = drafts
        .iter()
        .enumerate()
        .map(|(k, d)| (d.stub_of.expect("a stub stands for one entry"), k))
        .collect();
    let lines = lines_for(t, ledger, &drafts, &[], &stubs, &[], now)?;
    if t.format == Format::Pi && !drafts.is_empty() {
        // The nearest thing pi can show append-only; said where it is read.
        let note = Note::StubsByContextEdit;
        ctx.ui.warn(&format!("{}: {note}", t.display()));
        r.notes.push(note);
    }
    if settings.dry_run {
        return Ok(Vec::new());
    }
    Ok(lines)
}
