//! The fuzz harness for mf's trust core, shared by the cargo-fuzz targets (`fuzz_targets/`) and
//! a short seeded run in the test suite (`tests/it/fuzz_smoke.rs` includes this file).
//!
//! - `read`: the line reader on arbitrary bytes — never panics; every entry's bytes are where
//!   the index says, and hash to the entry's hash.
//! - `ledger`: a file built from fuzz bytes by a small program (fixture lines, chat lines with
//!   colliding ids and reused call ids, summaries forged with mf's own digest and label — often
//!   over what mf never folds — retractions, deleted, duplicated, swapped and damaged lines), then
//!   `Ledger::new`: what stands hides exactly its descendants, never the preamble, never the
//!   last turn, never a tool call apart from its results; every claim not honoured is flagged;
//!   the view holds every entry nothing hides, once.
//! - `plan`: the same files, then `fold::plan` under a policy from the fuzz bytes; every span
//!   mf would write is appended as mf writes it, the file read again, and the new summary must
//!   be honoured, stand at the top, hide exactly its span, and leave everything else as it was.

#![allow(clippy::missing_panics_doc)]

use std::cell::RefCell;
use std::collections::{BTreeSet, HashSet};
use std::os::unix::fs::FileExt;

use mf::entry::{ClaimKind, NONE, RecordKind, flag};
use mf::fold::{self, Decision, FoldPolicy, ItemKind, Ledger, Span, summary};
use mf::transcript::{self, Format, ReadOptions, Source, Tail, Transcript, wire};

const INCIDENT: &str = include_str!("../../fixtures/incident-northwind.jsonl");
const OPENAI: &str = include_str!("../../fixtures/openai-derived.jsonl");

thread_local! {
    static FILE: RefCell<Option<std::fs::File>> = const { RefCell::new(None) };
}

/// Read `bytes` as a transcript file (`chat`: skip format detection).
pub fn read_bytes(bytes: &[u8], chat: bool) -> Result<Transcript, transcript::TranscriptError> {
    FILE.with(|cell| {
        let mut slot = cell.borrow_mut();
        let f = slot.get_or_insert_with(|| tempfile::tempfile().expect("a temp file"));
        f.set_len(0).expect("truncate");
        f.write_all_at(bytes, 0).expect("write");
        let file = f.try_clone().expect("dup");
        transcript::read_source(
            Source {
                path: "fuzz.jsonl".into(),
                file,
                identity: (0, 0),
            },
            &ReadOptions {
                format: chat.then_some(Format::Chat),
                cache: None,
                vet: Some(mf::fold::frame::vet_claim),
                stdin: Default::default(),
            },
        )
    })
}

/// The reader on arbitrary bytes.
pub fn read_target(bytes: &[u8]) {
    let Ok(t) = read_bytes(bytes, false) else {
        return;
    };
    check_index(&t, bytes);
}

fn check_index(t: &Transcript, bytes: &[u8]) {
    assert_eq!(t.len, bytes.len() as u64, "read every byte");
    let physical = bytes.iter().filter(|&&b| b == b'\n').count()
        + usize::from(bytes.last().is_some_and(|&b| b != b'\n'));
    assert_eq!(t.lines as usize, physical, "physical lines");
    let mut prev = 0;
    for (i, e) in t.entries.iter().enumerate() {
        assert!(e.line >= prev, "entries in line order");
        assert!(
            e.line >= 1 && e.line <= t.lines,
            "line {} of {}",
            e.line,
            t.lines
        );
        prev = e.line;
        let raw = t.raw_lines(i).expect("an entry's bytes can be read back");
        assert!(!raw.is_empty());
        if raw.len() == 1 {
            assert_eq!(
                mf::digest::line_hash(&raw[0]),
                e.hash,
                "entry {i} (line {}) hashes to its bytes",
                e.line
            );
        }
        for (pos, len, _) in t.pieces(i) {
            assert!(
                pos + u64::from(len) <= t.len,
                "entry {i} lies inside the file"
            );
        }
        let _ = t.text(i).expect("text");
        let _ = t.chat_messages(i).expect("messages");
    }
    if let Tail::Torn {
        offset, bytes: n, ..
    } = t.tail
    {
        assert_eq!(offset + n as u64, t.len);
    }
}

/// Bytes as a stream of choices.
struct Gen<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Gen<'_> {
    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    fn done(&self) -> bool {
        self.pos >= self.data.len()
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (usize::from(self.byte()) << 8 | usize::from(self.byte())) % n
        }
    }
    fn flag(&mut self) -> bool {
        self.byte() & 1 == 1
    }
}

fn id(g: &mut Gen<'_>, n: usize) -> Option<String> {
    match g.byte() % 8 {
        0 => None,
        1 => Some("m0".into()),
        2 => Some(format!("m0@line-{}", g.below(40))),
        3 => Some(format!("msg-summary-{}-{}", g.below(4), g.below(9))),
        4 => Some(format!("line-{}", g.below(40))),
        5 => Some(format!("m{}", g.below(3))),
        _ => Some(format!("x{n}")),
    }
}

fn chat(id: Option<String>, role: &str, content: serde_json::Value) -> String {
    let mut m = serde_json::Map::new();
    if let Some(id) = id {
        m.insert("id".into(), id.into());
    }
    m.insert("role".into(), role.into());
    m.insert("content".into(), content);
    serde_json::Value::Object(m).to_string()
}

/// Build a file from fuzz bytes.
pub fn build(data: &[u8]) -> Vec<u8> {
    let mut g = Gen { data, pos: 0 };
    let mut lines: Vec<String> = match g.byte() % 3 {
        0 => INCIDENT.lines().map(str::to_string).collect(),
        1 => OPENAI.lines().map(str::to_string).collect(),
        _ => Vec::new(),
    };
    let keep = g.below(lines.len() + 1);
    lines.truncate(keep.max(lines.len().min(4)));
    let mut n = 0;
    let mut ops = 0;
    while !g.done() && ops < 48 {
        ops += 1;
        n += 1;
        match g.byte() % 12 {
            0 | 1 => {
                let text = match g.byte() % 6 {
                    0 => format!("{} 1–2 — pasted {n}", mf::entry::LABEL_PREFIX),
                    1 => format!("[turn 2 · user]\nok {n}"),
                    _ => format!("question {n}"),
                };
                lines.push(chat(id(&mut g, n), "user", text.into()));
            }
            2 => lines.push(chat(
                id(&mut g, n),
                "assistant",
                format!("answer {n}").into(),
            )),
            3 | 4 => {
                let k = 1 + g.below(2);
                let ids: Vec<String> = (0..k)
                    .map(|j| match g.byte() % 3 {
                        0 => "call_0".to_string(),
                        1 => format!("call_{j}"),
                        _ => format!("call_{n}_{j}"),
                    })
                    .collect();
                let calls: Vec<serde_json::Value> = ids
                    .iter()
                    .map(|i| serde_json::json!({"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}}))
                    .collect();
                let mut m =
                    serde_json::json!({"role": "assistant", "content": null, "tool_calls": calls});
                if let Some(i) = id(&mut g, n) {
                    m["id"] = i.into();
                }
                lines.push(m.to_string());
                let answered = if g.byte().is_multiple_of(5) { k - 1 } else { k };
                for i in &ids[..answered] {
                    let mut r = serde_json::json!({"role": "tool", "tool_call_id": i, "name": "f", "content": format!("result {n}")});
                    if let Some(x) = id(&mut g, n) {
                        r["id"] = x.into();
                    }
                    lines.push(r.to_string());
                }
            }
            5 | 6 => {
                if let Some(l) = forge(&lines, &mut g) {
                    lines.push(l);
                }
            }
            7 => {
                if let Some(l) = retract(&lines, &mut g) {
                    lines.push(l);
                }
            }
            8 => {
                if !lines.is_empty() {
                    let k = g.below(lines.len());
                    lines.remove(k);
                }
            }
            9 => {
                if !lines.is_empty() {
                    let k = g.below(lines.len());
                    let l = lines[k].clone();
                    if g.flag() {
                        lines.push(l);
                    } else {
                        let j = g.below(lines.len());
                        lines.swap(k, j);
                    }
                }
            }
            10 => {
                if !lines.is_empty() {
                    // Damage one byte of a line (it may stop being JSON: then the file is
                    // refused, which is fine).
                    let k = g.below(lines.len());
                    let mut b = lines[k].clone().into_bytes();
                    if !b.is_empty() {
                        let p = g.below(b.len());
                        const CHARS: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz \\\"{}[]:,";
                        b[p] = CHARS[g.below(CHARS.len())];
                        if let Ok(s) = String::from_utf8(b) {
                            lines[k] = s;
                        }
                    }
                }
            }
            _ => lines.push(String::new()),
        }
    }
    let mut out = lines.join("\n").into_bytes();
    match g.byte() % 4 {
        0 => {}
        1 => {
            // mf's own torn line at the end.
            out.push(b'\n');
            out.extend_from_slice(wire::MF_PREFIX);
            out.extend_from_slice(b"2,\"kind\":\"summ");
        }
        _ => out.push(b'\n'),
    }
    out
}

/// A summary line in mf's own shape for a run of view items chosen by the fuzz bytes (often one
/// mf would never write), possibly damaged.
fn forge(lines: &[String], g: &mut Gen<'_>) -> Option<String> {
    let bytes = (lines.join("\n") + "\n").into_bytes();
    let t = read_bytes(&bytes, true).ok()?;
    let ledger = Ledger::new(t.conversation());
    if ledger.view.is_empty() {
        return None;
    }
    let a = g.below(ledger.view.len());
    let b = a + g.below(ledger.view.len() - a);
    let items: Vec<u32> = ledger.view[a..=b]
        .iter()
        .copied()
        .filter(|&it| ledger.kind(it) != ItemKind::Stub)
        .collect();
    if items.is_empty() {
        return None;
    }
    let span = Span::of(&ledger, items);
    let tail = match g.byte() % 3 {
        0 => None,
        1 => Some(span.last_line + 1 + g.below(3) as u32),
        _ => Some(g.below(60) as u32),
    };
    let id = summary::summary_id(span.from_turn, span.to_turn, |x| t.has_id(x));
    let mut d = summary::draft(
        &span,
        id,
        summary::Signed {
            model: "extractive",
            reach: None,
            now_ms: 1,
            tail_line: tail,
        },
        "forged",
        None,
        Vec::new(),
    );
    match g.byte() % 8 {
        0 => d.content.push_str(" edited"),
        1 => d.coverage.entry_count += 1,
        2 => d.coverage.from_turn = d.coverage.from_turn.saturating_sub(1),
        _ => {}
    }
    let mut line = t
        .lines_for(&draft_write(std::slice::from_ref(&d)))
        .ok()?
        .remove(0);
    match g.byte() % 10 {
        0 => line = line.replace("\"role\":\"system\"", "\"role\":\"user\""),
        1 => line = line.replace("\"role\":\"system\"", "\"role\":\"tool\""),
        _ => {}
    }
    Some(line)
}

fn retract(lines: &[String], g: &mut Gen<'_>) -> Option<String> {
    let bytes = (lines.join("\n") + "\n").into_bytes();
    let t = read_bytes(&bytes, true).ok()?;
    let ledger = Ledger::new(t.conversation());
    let sums = ledger.summaries_in_order();
    let (summary_id, fingerprint) = if sums.is_empty() || g.byte().is_multiple_of(5) {
        (
            format!("msg-summary-{}-{}", g.below(3), g.below(9)),
            "0".repeat(16),
        )
    } else {
        let s = sums[g.below(sums.len())].entry as usize;
        let fp = t.claims[t.entries[s].claim as usize]
            .coverage
            .as_ref()
            .map(|c| c.fingerprint.clone())
            .unwrap_or_default();
        (t.id_string(s), fp)
    };
    Some(wire::record_line(
        &RecordKind::Retract {
            summary_id,
            fingerprint,
        },
        1,
    ))
}

/// Everything a summary stands for, all levels down.
fn descendants(ledger: &Ledger<'_>, s: u32, out: &mut BTreeSet<u32>) {
    for &c in &ledger.summaries[&s].children {
        out.insert(c);
        if ledger.summaries.contains_key(&c) {
            descendants(ledger, c, out);
        }
    }
}

/// What must hold of any ledger.
pub fn check_ledger(t: &Transcript, ledger: &Ledger<'_>) {
    let n = t.entries.len();
    let tops: Vec<u32> = ledger
        .summaries
        .values()
        .filter(|s| s.standing() && s.covered_by.is_none())
        .map(|s| s.entry)
        .collect();
    // What stands hides exactly its descendants; nothing else is hidden.
    let mut expected = vec![NONE; n];
    for &s in &tops {
        let mut d = BTreeSet::new();
        descendants(ledger, s, &mut d);
        for c in d {
            assert_eq!(
                expected[c as usize], NONE,
                "entry {c} under two standing summaries"
            );
            expected[c as usize] = s;
        }
    }
    assert_eq!(ledger.hidden_by, expected, "hidden_by is what stands");
    for (s, sm) in &ledger.summaries {
        let here = t.entries[*s as usize].line;
        for &c in &sm.children {
            assert!(
                t.entries[c as usize].line < here,
                "a summary covers only earlier lines"
            );
        }
    }
    for i in 0..n {
        let hidden = ledger.hidden_by[i] != NONE;
        if !hidden || ledger.summaries.contains_key(&(i as u32)) {
            continue;
        }
        assert!(
            ledger.turns[i] > 0,
            "the preamble (entry {i}) is never hidden"
        );
        let call = ledger.call_of[i];
        if call != NONE {
            assert_eq!(
                ledger.hidden_by[call as usize], ledger.hidden_by[i],
                "a tool result is hidden with its call"
            );
        }
        let last = ledger.last_result[i];
        if last != NONE {
            for j in i + 1..=last as usize {
                if ledger.call_of[j] == i as u32 {
                    assert_eq!(
                        ledger.hidden_by[j], ledger.hidden_by[i],
                        "a tool call is hidden with its results"
                    );
                }
            }
        }
    }
    if let Some(last_turn) = (0..n).rev().find(|&i| ledger.starts_turn(i)) {
        assert_eq!(
            ledger.hidden_by[last_turn], NONE,
            "the last turn stays verbatim"
        );
    }
    // Every claim not honoured is flagged.
    for c in &t.claims {
        if !ledger.summaries.contains_key(&c.entry) {
            assert!(
                ledger.flags.iter().any(|f| f.entry == Some(c.entry)),
                "the claim on line {} is flagged",
                t.entries[c.entry as usize].line
            );
        }
    }
    // The view: every entry nothing hides, once; standing top-level summaries once.
    let mut seen = HashSet::new();
    for &it in &ledger.view {
        assert!(seen.insert(it), "item {it} twice in the view");
    }
    for i in 0..n as u32 {
        let e = &t.entries[i as usize];
        let valid = ledger.summaries.contains_key(&i);
        let want = !e.has(flag::UNSEEN)
            && if valid {
                tops.contains(&i)
            } else {
                ledger.hidden_by[i as usize] == NONE
            };
        assert_eq!(seen.contains(&i), want, "entry {i} in the view");
    }
    let _ = ledger.recall_order(&ledger.view);
}

/// The ledger on a built file.
pub fn ledger_target(data: &[u8]) {
    let bytes = build(data);
    let Ok(t) = read_bytes(&bytes, true) else {
        return;
    };
    check_index(&t, &bytes);
    let ledger = Ledger::new(t.conversation());
    check_ledger(&t, &ledger);
}

/// The planner on a built file, and what mf would write.
pub fn plan_target(data: &[u8]) {
    let split = data.len().min(8);
    let (knobs, rest) = data.split_at(split);
    let k = |i: usize| knobs.get(i).copied().unwrap_or(0) as usize;
    let policy = FoldPolicy {
        recent: k(0) % 8,
        size: (k(1) % 3 == 0).then(|| k(0) % 8 + 1 + k(2) % 30),
        trigger: k(3) % 12,
        min_fold: 1 + k(4) % 3,
        protect_user: k(5) % 4 == 0,
        max_span_tokens: (k(6) % 3 == 0).then_some(256 + k(7) * 8),
        ..FoldPolicy::default()
    };
    let Ok(policy) = policy.validate() else {
        return;
    };
    let bytes = build(rest);
    let Ok(t) = read_bytes(&bytes, true) else {
        return;
    };
    if t.check_tail().is_err() {
        return;
    }
    let ledger = Ledger::new(t.conversation());
    check_ledger(&t, &ledger);
    let Decision::Fold(plan) = fold::plan(&ledger, &policy, "extractive") else {
        return;
    };
    assert!(plan.holds_in(&ledger));
    let mut drafts = Vec::new();
    let mut taken: Vec<String> = Vec::new();
    for span in &plan.spans {
        for &it in &span.items {
            assert!(!ledger.is_preamble(it), "a span never holds the preamble");
            assert!(ledger.view.contains(&it), "a span holds view items");
        }
        let id = summary::summary_id(span.from_turn, span.to_turn, |x| {
            t.has_id(x) || taken.iter().any(|y| y == x)
        });
        taken.push(id.clone());
        drafts.push(summary::draft(
            span,
            id,
            summary::Signed {
                model: "extractive",
                reach: Some(&mf::fold::frame::Reach::Tool),
                now_ms: 1,
                tail_line: plan.tail_line,
            },
            "what happened",
            None,
            Vec::new(),
        ));
    }
    let lines = t.lines_for(&draft_write(&drafts)).expect("lines");
    // Appended as mf appends: a newline first when the last line has none.
    let mut grown = bytes.clone();
    if matches!(t.tail, Tail::Unterminated | Tail::Torn { mf: true, .. }) {
        grown.push(b'\n');
    }
    let first_new = grown.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
    for l in &lines {
        grown.extend_from_slice(l.as_bytes());
        grown.push(b'\n');
    }
    let t2 = read_bytes(&grown, true).expect("mf reads what it wrote");
    let l2 = Ledger::new(t2.conversation());
    check_ledger(&t2, &l2);
    let mut folded: BTreeSet<u32> = BTreeSet::new();
    for (k, span) in plan.spans.iter().enumerate() {
        let line = first_new + k as u32;
        let s = t2
            .entries
            .iter()
            .position(|e| e.line == line)
            .expect("the new summary is an entry") as u32;
        let sm = l2.summaries.get(&s).unwrap_or_else(|| {
            panic!(
                "mf does not honour the summary it wrote on line {line} (lines {:?}, tail line {:?}, view lines {:?}): {:?}",
                span.items.iter().map(|&i| t.entries[i as usize].line).collect::<Vec<_>>(),
                plan.tail_line,
                ledger.view.iter().map(|&i| (t.entries[i as usize].line, ledger.turns[i as usize], ledger.starts_turn(i as usize), format!("{:?}", ledger.kind(i)))).collect::<Vec<_>>(),
                l2.flags
                    .iter()
                    .filter(|f| f.line == line)
                    .collect::<Vec<_>>()
            )
        });
        assert_eq!(sm.kind, ClaimKind::Summary);
        assert!(
            sm.standing() && sm.covered_by.is_none(),
            "the new summary stands on top"
        );
        let mut children = sm.children.clone();
        children.sort_unstable();
        let mut items = span.items.clone();
        items.sort_unstable();
        assert_eq!(children, items, "it covers exactly its span");
        folded.extend(items);
    }
    // Everything else is as it was.
    for &it in &ledger.view {
        if folded.contains(&it) {
            assert!(!l2.view.contains(&it), "a folded item leaves the view");
        } else {
            assert!(
                l2.view.contains(&it),
                "item {it} outside the fold stays in the view"
            );
        }
    }
}

/// A write of summary drafts alone, as `mf compact` writes them to a chat file.
fn draft_write(drafts: &[mf::entry::Draft]) -> transcript::Write<'_> {
    transcript::Write {
        drafts,
        records: &[],
        shown: None,
        now_ms: 0,
        tokens_before: 0,
    }
}

// ---------------------------------------------------------------------------------------------
// Text targets: the retention audit's extractor, the extractive summarizer and the citation
// parser, over arbitrary UTF-8 (bytes that are not UTF-8 are read lossily, as U+FFFD).

use std::collections::HashMap;

use mf::entry::Role;
use mf::fold::audit::{self, AuditOptions};
use mf::fold::cite::{self, Citable, Offer, Review};
use mf::fold::{CiteRequest, Piece};
use mf::summarizer::extractive;

/// The separator of pieces in a text input (ASCII record separator).
pub const PIECE_SEP: char = '\u{1e}';

/// A span from text: pieces separated by [`PIECE_SEP`]; a piece's first character picks its
/// author (user, assistant, a tool result, system, an earlier summary, or an assistant message
/// carrying a tool call `[calls name(args)]`), the rest is its text.
pub fn pieces_of(text: &str) -> Vec<Piece> {
    text.split(PIECE_SEP)
        .enumerate()
        .map(|(k, raw)| {
            let mut chars = raw.chars();
            let pick = chars.next().map_or(0, |c| c as u32 % 6);
            let rest = chars.as_str();
            let (author, role, text) = match pick {
                0 => ("user".to_string(), Some(Role::User), rest.to_string()),
                1 => (
                    "assistant".to_string(),
                    Some(Role::Assistant),
                    rest.to_string(),
                ),
                2 => ("tool:Read".to_string(), Some(Role::Tool), rest.to_string()),
                3 => ("system".to_string(), Some(Role::System), rest.to_string()),
                4 => ("summary of turns 1–2".to_string(), None, rest.to_string()),
                _ => {
                    let (name, args) = rest.split_once('(').unwrap_or(("Bash", rest));
                    (
                        "assistant".to_string(),
                        Some(Role::Assistant),
                        format!("[calls {name}({args})]"),
                    )
                }
            };
            Piece {
                turn: (k / 2) as u64 + 1,
                author,
                role,
                text,
                reasoning: Vec::new(),
            }
        })
        .collect()
}

fn assert_range_in(text: &str, r: &std::ops::Range<usize>, what: &str) {
    assert!(
        r.start <= r.end && r.end <= text.len(),
        "{what}: range {r:?} outside a text of {} bytes",
        text.len()
    );
    assert!(
        text.is_char_boundary(r.start) && text.is_char_boundary(r.end),
        "{what}: range {r:?} cuts a character of {text:?}"
    );
}

/// The retention audit on arbitrary text: the extractor, sentences, units, corrections and the
/// whole audit of a summary (the first piece) against the span (the rest) never panic; every
/// range they report lies in its text on character boundaries; kept ≤ found, retention in 0–1.
pub fn audit_target(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let text = text.as_ref();
    for item in audit::extract(text) {
        assert_range_in(text, &item.at, "extract");
        let _ = audit::mentions(text, &item);
        let _ = audit::norm_text(&item.text);
    }
    let mut last = 0;
    for r in audit::sentence_ranges(text) {
        assert_range_in(text, &r, "sentence");
        assert!(r.start >= last, "sentences in order, apart");
        last = r.end;
    }
    for leaf in audit::call_leaves(text) {
        let _ = leaf.items.len();
    }
    let _ = audit::parse_call(text);
    let mut pieces = pieces_of(text);
    let summary = pieces.remove(0).text;
    let units = audit::units(&pieces);
    for u in &units {
        let piece = &pieces[u.piece].text;
        assert_range_in(piece, &u.range, "unit");
        for item in &u.items {
            assert_range_in(piece, &item.at, "unit item");
        }
    }
    let _ = audit::corrections(&pieces, &units);
    for count_tool_results in [false, true] {
        let opts = AuditOptions {
            count_tool_results,
            max_listed: 5,
        };
        let a = audit::audit(&pieces, &summary, "Keep every path.", &opts);
        assert!(a.kept <= a.found, "kept {} of {}", a.kept, a.found);
        assert!(
            (0.0..=1.0).contains(&a.retention),
            "retention {}",
            a.retention
        );
        let _ = a.verdict(0.5, true);
        let _ = a.retry_note();
    }
}

/// An offer for `pieces` as mf makes one: a handle per piece (its id when the text starts with
/// a clean word, else `@LINE`), a tool result in its call's unit.
pub fn offer_of(pieces: &[Piece]) -> Offer {
    let mut unit = 0u32;
    let entries = pieces
        .iter()
        .enumerate()
        .map(|(k, p)| {
            if p.role != Some(Role::Tool) {
                unit += 1;
            }
            let line = k as u32 + 1;
            let word = p.text.split_whitespace().next().unwrap_or("");
            Citable {
                handle: cite::handle(word, true, line),
                line,
                chars: p.text.chars().count(),
                unit,
                from_turn: p.turn,
                to_turn: p.turn,
                leaves: 1,
            }
        })
        .collect();
    Offer {
        entries,
        model: "extractive".to_string(),
        reach: mf::fold::frame::Reach::Tool,
    }
}

/// The extractive summarizer on arbitrary text: `summarize` under a budget from the first two
/// bytes, then the audit of what it wrote (as `compact` runs it); `summarize_cited`, whose reply
/// must parse as citations of the offer (it checks itself with mf's rules before it answers).
pub fn extractive_target(data: &[u8]) {
    let (budget, rest) = match data {
        [a, b, rest @ ..] => (usize::from(u16::from_le_bytes([*a, *b])), rest),
        _ => (400, data),
    };
    let text = String::from_utf8_lossy(rest);
    let pieces = pieces_of(&text);
    let out = extractive::summarize(&pieces, budget);
    let _ = audit::audit(&pieces, &out, "", &AuditOptions::default());
    let offer = offer_of(&pieces);
    let request = CiteRequest {
        offer: offer.clone(),
        round: 1,
    };
    let reply = extractive::summarize_cited(&pieces, &request, budget.max(1));
    let mut review = Review::new(&offer);
    review.begin_call();
    let round = review.review(&reply, &|_| None, &mut |_| Ok(()));
    for &r in &round.rejected {
        assert!(
            !matches!(review.rejected[r].reason, cite::Rejection::Malformed(_)),
            "the extractive summarizer wrote a citation that does not parse: {:?}\nreply: {reply:?}",
            review.rejected[r].reason
        );
    }
}

/// The citation parser on arbitrary text: the first piece describes the span (one entry per
/// line, the line's first word its id), the rest are replies, reviewed in turn as a cited fold
/// reviews them; every candidate is accepted or rejected, what is consumed is consumed once by
/// an accepted candidate, and the texts built from it (feedback, summary) never panic.
pub fn cite_target(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split(PIECE_SEP);
    let span = parts.next().unwrap_or("");
    let pieces: Vec<Piece> = span
        .lines()
        .take(64)
        .enumerate()
        .map(|(k, l)| Piece {
            turn: (k / 2) as u64 + 1,
            author: "user".into(),
            role: Some(if l.starts_with('<') {
                Role::Tool
            } else {
                Role::User
            }),
            text: l.to_string(),
            reasoning: Vec::new(),
        })
        .collect();
    let offer = offer_of(&pieces);
    let names: HashMap<String, String> = offer
        .entries
        .iter()
        .map(|e| (e.handle.clone(), format!("@{}", e.line)))
        .collect();
    let mut review = Review::new(&offer);
    for reply in parts.take(cite::MAX_CALLS) {
        for c in cite::split_reply(reply) {
            let _ = cite::citations(&c.text);
            let _ = cite::uncited_line(&c.text);
            let _ = cite::strip(&c.text);
            let _ = cite::rename(&c.text, &names);
        }
        if !review.may_ask() {
            break;
        }
        review.begin_call();
        let round = review.review(
            reply,
            &|id| id.chars().next().filter(char::is_ascii_digit).map(|_| 7),
            &mut |p| {
                if p.text.chars().count() % 7 == 3 {
                    Err(mf::fold::audit::Faults(vec![mf::fold::audit::Fault::Echo(
                        1.0,
                    )]))
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(
            round.accepted.len() + round.rejected.len(),
            round.candidates,
            "every candidate accepted or rejected"
        );
        for (k, by) in review.consumed_by.iter().enumerate() {
            if let Some(a) = by {
                assert!(
                    review.accepted[*a].entries.contains(&k),
                    "entry {k} consumed by a candidate that does not list it"
                );
            }
        }
        let _ = review.feedback();
        let _ = review.by_level();
        let _ = review.rejection_summary();
    }
}
