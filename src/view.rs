//! The view a read-only command works on: a transcript read for viewing (and what its tail and
//! skipped lines say), an entry found by its address, and a view item in printable form. Shared
//! by `recall`, `expand`, `explain` and `compact`, which do not import each other.

use std::path::Path;

use anyhow::Result;

use crate::entry::{ClaimKind, Covered, flag};
use crate::error::MfError;
use crate::fold::{Item, ItemKind, Ledger};
use crate::render::Ui;
use crate::render::recall::RecallItem;
use crate::render::search::SearchHit;
use crate::search::{DocStats, Query};
use crate::transcript::{self, NoteKind, ReadOptions, Tail, Transcript};

/// The printable form of a view item.
pub fn item(t: &Transcript, ledger: &Ledger<'_>, it: Item) -> std::io::Result<RecallItem> {
    let i = it as usize;
    let kind = ledger.kind(it);
    let text = t.text(i)?;
    let (summary_turns, role) = match kind {
        ItemKind::Summary => (Some(ledger.item_turns(it)), "system"),
        _ => (None, ledger.conv.entries[i].role.as_str()),
    };
    let messages = match kind {
        ItemKind::Summary => vec![serde_json::json!({"role": "system", "content": text})],
        _ => t.chat_messages(i)?,
    };
    Ok(RecallItem {
        id: t.id_string(i),
        summary_turns,
        turn: ledger.item_turns(it).1,
        role,
        text,
        messages,
        native: t.raw_lines(i)?,
        framed: ledger.summaries.contains_key(&it),
    })
}

/// Read a transcript for a read-only command: an incomplete last line is left out with a warning,
/// and lines mf had to skip or recover are mentioned.
/// `-v`: how much of the file was read, and how much came from a checkpoint.
pub fn log_read(ui: &Ui, t: &Transcript) {
    let mb = |b: u64| match b {
        0..1_000 => format!("{b} bytes"),
        1_000..1_000_000 => format!("{:.1} kB", b as f64 / 1e3),
        _ => format!("{:.1} MB", b as f64 / 1e6),
    };
    if t.from_checkpoint > 0 {
        ui.log(&format!(
            "{}: {} from a checkpoint, {} read",
            t.display(),
            mb(t.from_checkpoint),
            mb(t.len.saturating_sub(t.from_checkpoint))
        ));
    } else {
        ui.log(&format!("{}: {} read in full", t.display(), mb(t.len)));
    }
}

pub fn read_for_view(path: &Path, opts: &ReadOptions, ui: &Ui) -> Result<Transcript> {
    let t = transcript::read(path, opts)?;
    log_read(ui, &t);
    match t.tail {
        Tail::Torn { line, mf: false, .. } => ui.warn(&format!(
            "{}:{line}: the last line is incomplete (no newline, not valid JSON) and is left out; it may still be being written",
            t.display()
        )),
        Tail::Torn { line, mf: true, .. } => ui.warn(&format!(
            "{}:{line}: the last line is one mf began and did not finish (it was interrupted); it is left out, and the next mf write closes it",
            t.display()
        )),
        _ => {}
    }
    let torn = t
        .notes
        .iter()
        .filter(|n| n.kind == NoteKind::TornMf)
        .count();
    if torn > 0 {
        ui.warn(&format!(
            "{}: {torn} line{} that an interrupted mf began are skipped (`mf verify` lists them)",
            t.display(),
            if torn == 1 { "" } else { "s" }
        ));
    }
    Ok(t)
}

/// The entry an address names, or an error that says what the file has.
pub fn resolve(t: &Transcript, ledger: &Ledger<'_>, address: &str) -> Result<u32> {
    let list = || {
        let summaries = ledger.summaries_in_order();
        if summaries.is_empty() {
            format!("`{}` has no summaries", t.display())
        } else {
            let names: Vec<String> = summaries
                .iter()
                .map(|s| {
                    format!(
                        "{} (turns {}–{}, {})",
                        t.id_string(s.entry as usize),
                        s.from_turn,
                        s.to_turn,
                        s.state()
                    )
                })
                .collect();
            format!("its summaries: {}", names.join(", "))
        }
    };
    match t.find(address)[..] {
        [] => Err(MfError::refused(
            format!("no entry `{address}` in `{}`", t.display()),
            Some(list()),
        )
        .into()),
        [i] => Ok(i as u32),
        ref many => Err(MfError::refused(
            format!(
                "`{address}` names {} entries of `{}` (lines {})",
                many.len(),
                t.display(),
                many.iter()
                    .map(|&i| t.entries[i].line.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Some(format!(
                "address one by its line: `@{}`",
                t.entries[many[0]].line
            )),
        )
        .into()),
    }
}

/// What `mf search` looks through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// What the model cannot see now: entries a standing summary or stub hides, and entries
    /// before the agent's own compaction.
    Folded,
    /// Every entry (mf's own summaries and stubs aside).
    All,
}

/// A search's hits and what was searched.
#[derive(Debug)]
pub struct Found {
    pub hits: Vec<SearchHit>,
    /// Entries searched.
    pub searched: usize,
    pub scope: Scope,
    /// The file has nothing folded, so every entry was searched.
    pub widened: bool,
}

/// Whether the model cannot see entry `i` now, and what stands for it: a standing summary or
/// stub (its id), or the agent's own compaction (that entry's id).
fn folded_under(t: &Transcript, ledger: &Ledger<'_>, i: usize) -> Option<Option<String>> {
    let h = ledger.hidden_by[i];
    if h != crate::entry::NONE {
        return Some(Some(t.id_string(h as usize)));
    }
    if t.entries[i].has(crate::entry::flag::HISTORY) {
        let native = (i + 1..t.entries.len())
            .find(|&j| t.entries[j].has(crate::entry::flag::NATIVE_SUMMARY))
            .map(|j| t.id_string(j));
        return Some(native);
    }
    None
}

/// Search a transcript's entries. The scan keeps per entry only what ranking needs, reads the
/// texts on both cores, and reads the hits' texts again for their lines.
pub fn search(
    t: &Transcript,
    ledger: &Ledger<'_>,
    query: &Query,
    scope: Scope,
    limit: usize,
) -> std::io::Result<Found> {
    let candidates = |scope: Scope| -> Vec<usize> {
        (0..t.entries.len())
            // mf's lines, and the agent's own compaction summaries, are summaries: search finds
            // originals (those an agent's summary stands for are searched as history).
            .filter(|&i| {
                !ledger.is_claim_entry(i as u32)
                    && !ledger.summaries.contains_key(&(i as u32))
                    && !t.entries[i].has(crate::entry::flag::NATIVE_SUMMARY)
            })
            .filter(|&i| scope == Scope::All || folded_under(t, ledger, i).is_some())
            .collect()
    };
    let mut entries = candidates(scope);
    let widened = scope == Scope::Folded && entries.is_empty();
    if widened {
        entries = candidates(Scope::All);
    }
    let stats = scan(t, query, &entries)?;
    // A tool call and its results rank as a unit; so does a user's reply with the assistant's
    // message it answers ("minor, this is a big change" answers "patch or minor?").
    let searched: std::collections::HashSet<u32> = entries.iter().map(|&i| i as u32).collect();
    let mut unit: std::collections::HashMap<u32, u32> = std::collections::HashMap::new();
    let mut said: Option<usize> = None;
    for &i in &entries {
        let call = ledger.call_of[i];
        if call != crate::entry::NONE && searched.contains(&call) {
            unit.insert(i as u32, call);
            unit.entry(call).or_insert(i as u32);
        }
        match t.entries[i].role {
            crate::entry::Role::Assistant if call == crate::entry::NONE => said = Some(i),
            crate::entry::Role::User => {
                if let Some(a) =
                    said.filter(|&a| a + 1 == i || ledger.turns[a] + 1 == ledger.turns[i])
                {
                    unit.entry(i as u32).or_insert(a as u32);
                }
                said = None;
            }
            _ => {}
        }
    }
    let only_exact = query.only_exact();
    let ranked = query.rank(&stats, limit, |k| {
        (!only_exact).then(|| unit.get(&k).copied()).flatten()
    });
    let mut hits = Vec::with_capacity(ranked.len());
    for (rank, (i, score)) in ranked.into_iter().enumerate() {
        let i = i as usize;
        let text = t.text(i)?;
        let covered_by = folded_under(t, ledger, i);
        let e = &t.entries[i];
        hits.push(SearchHit {
            rank: rank + 1,
            id: t.id_string(i),
            line: e.line,
            turn: u64::from(ledger.turns[i]),
            role: e.role.as_str(),
            tool: (e.role == crate::entry::Role::Tool)
                .then(|| t.tool_name(i))
                .flatten(),
            score,
            folded: covered_by.is_some(),
            covered_by: covered_by.flatten(),
            matches: query.snippets(&text, 1, 3, 240),
            framed: ledger.summaries.contains_key(&(i as u32)),
            text_chars: text.chars().count(),
            text: crate::text::prefix(&text, HIT_TEXT_CHARS).to_string(),
        });
    }
    Ok(Found {
        hits,
        searched: entries.len(),
        scope: if widened { Scope::All } else { scope },
        widened,
    })
}

/// How much of a hit's text `--json` carries.
const HIT_TEXT_CHARS: usize = 4_000;

/// Each entry's ranking facts, read on both cores.
fn scan(
    t: &Transcript,
    query: &Query,
    entries: &[usize],
) -> std::io::Result<Vec<(u32, crate::entry::Role, DocStats)>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    let chunk = entries.len().div_ceil(threads.max(1)).max(1);
    let parts: Vec<std::io::Result<Vec<(u32, crate::entry::Role, DocStats)>>> =
        std::thread::scope(|s| {
            let handles: Vec<_> = entries
                .chunks(chunk)
                .map(|part| {
                    s.spawn(move || {
                        part.iter()
                            .map(|&i| {
                                let text = t.text(i)?;
                                Ok((i as u32, t.entries[i].role, query.stats(&text)))
                            })
                            .collect()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a scan thread does not panic"))
                .collect()
        });
    let mut out = Vec::with_capacity(entries.len());
    for p in parts {
        out.extend(p?);
    }
    Ok(out)
}

/// The originals behind summary `summary`, in conversation order: one level, or (`deep`) down
/// through nested summaries to the original messages.
pub fn originals(ledger: &Ledger<'_>, summary: Item, deep: bool) -> Vec<Item> {
    let mut out = Vec::new();
    collect(ledger, summary, deep, &mut out);
    out
}

fn collect(ledger: &Ledger<'_>, summary: Item, deep: bool, out: &mut Vec<Item>) {
    for j in ledger.children_in_order(summary) {
        if deep && ledger.summaries.contains_key(&j) {
            collect(ledger, j, deep, out);
        } else {
            out.push(j);
        }
    }
}

/// A field of an mf line's `mf` object (`audit`, `cited`), read back from its line.
pub fn mf_field(t: &Transcript, i: usize, key: &str) -> Option<serde_json::Value> {
    let values = t.values(i).ok()?;
    values
        .iter()
        .find_map(|v| v.get("mf").and_then(|m| m.get(key)).cloned())
}

/// The folds standing in `t`, one line each for people and models (`mf mcp`'s `folds`, `mf
/// expand` without an id): mf's summaries and stubs (id, turns, lines, model, retention), and
/// the agent's own compactions.
pub fn standing_folds(t: &Transcript, ledger: &Ledger<'_>) -> (Vec<String>, Vec<String>) {
    let mut lines = Vec::new();
    for s in ledger.summaries_in_order() {
        if !s.standing() || s.covered_by.is_some() {
            continue;
        }
        let i = s.entry as usize;
        let cov = t
            .claims
            .get(t.entries[i].claim as usize)
            .and_then(|c| c.coverage.as_ref().ok());
        let lines_of = cov
            .and_then(|c| match &c.covered {
                Covered::Lines { ranges, .. } => Some(
                    ranges
                        .iter()
                        .map(|r| {
                            if r[0] == r[1] {
                                r[0].to_string()
                            } else {
                                format!("{}–{}", r[0], r[1])
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
                Covered::Ids(_) => None,
            })
            .map(|l| format!(" (lines {l})"))
            .unwrap_or_default();
        let retention = mf_field(t, i, "audit")
            .and_then(|a| a.get("retention").and_then(serde_json::Value::as_f64))
            .map(|r| format!(" · retention {:.0}%", r * 100.0))
            .unwrap_or_default();
        let model = cov
            .map(|c| format!(" · by {}", c.model))
            .unwrap_or_default();
        lines.push(match s.kind {
            ClaimKind::Summary => format!(
                "{} · summary · turns {}–{} · {} message{}{lines_of}{model}{retention}",
                t.id_string(i),
                s.from_turn,
                s.to_turn,
                s.leaf_count,
                if s.leaf_count == 1 { "" } else { "s" },
            ),
            ClaimKind::Stub => format!(
                "{} · stub · turn {} · one tool result{lines_of}",
                t.id_string(i),
                s.to_turn
            ),
        });
    }
    let natives: Vec<String> = (0..t.entries.len())
        .filter(|&i| t.entries[i].has(flag::NATIVE_SUMMARY) && ledger.kind(i as u32) == ItemKind::Message)
        .map(|i| {
            format!(
                "{} · the agent's own compaction · line {} (what comes before it is hidden from the model; `search` finds it)",
                t.id_string(i),
                t.entries[i].line
            )
        })
        .collect();
    (lines, natives)
}
