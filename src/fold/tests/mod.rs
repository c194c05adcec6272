//! Unit tests of the engine's laws, on hand-built conversations: the helpers here, the tests
//! by subject in the modules below.

mod chunks;
mod honour;
mod honour_rule;
mod long_turns;
mod mask;
mod one_run;
mod random;
mod seams;

use crate::digest::{content_fingerprint, id_hash};
use crate::entry::{
    Claim, ClaimKind, Conversation, Covered, DeclineReason, DeclinedSpan, Entry, Link, NONE,
    Record, RecordKind, Role, SpanRef, flag,
};
use crate::fold::ledger::FlagKind;
use crate::fold::plan::PlanNote;
use crate::fold::{Decision, FoldPolicy, Item, ItemKind, Ledger, SkipReason, Span, plan, summary};

/// A conversation being built: entries with ids, tool links and claims (also the builder of
/// other modules' unit tests: `eval`).
#[derive(Default, Clone)]
pub(crate) struct Conv {
    pub(crate) entries: Vec<Entry>,
    links: Vec<Link>,
    tool_ids: Vec<u64>,
    claims: Vec<Claim>,
    records: Vec<Record>,
    placements: Vec<(u32, u32)>,
    ids: Vec<String>,
    /// The agent shows one unbroken run after its summaries (pi).
    one_run: bool,
}

impl Conv {
    pub(crate) fn conv(&self) -> Conversation<'_> {
        Conversation {
            entries: &self.entries,
            links: &self.links,
            tool_ids: &self.tool_ids,
            claims: &self.claims,
            records: &self.records,
            placements: &self.placements,
            one_run: self.one_run,
        }
    }

    /// The line after every line so far (an entry's or a record's: each has a line of its own).
    pub(crate) fn next_line(&self) -> u32 {
        let entry = self.entries.last().map_or(0, |e| e.line);
        let record = self.records.last().map_or(0, |r| r.line);
        entry.max(record) + 1
    }

    pub(crate) fn push(
        &mut self,
        id: &str,
        role: Role,
        chars: u32,
        calls: &[&str],
        answers: &[&str],
    ) -> u32 {
        let link = if calls.is_empty() && answers.is_empty() {
            NONE
        } else {
            let c0 = self.tool_ids.len() as u32;
            self.tool_ids.extend(calls.iter().map(|c| id_hash(c)));
            let c1 = self.tool_ids.len() as u32;
            self.tool_ids.extend(answers.iter().map(|c| id_hash(c)));
            let a1 = self.tool_ids.len() as u32;
            self.links.push(Link {
                calls: c0..c1,
                answers: c1..a1,
            });
            (self.links.len() - 1) as u32
        };
        let line = self.next_line();
        self.entries.push(Entry {
            line,
            role,
            flags: if role == Role::User {
                flag::TURN_START
            } else {
                0
            },
            chars,
            hash: id_hash(&format!("bytes of {id}")),
            id: id_hash(id),
            pos: u64::from(line) * 100,
            len: 99,
            more: NONE,
            link,
            claim: NONE,
        });
        self.ids.push(id.to_string());
        (self.entries.len() - 1) as u32
    }

    fn msg(&mut self, id: &str, role: Role) -> u32 {
        self.push(id, role, 40, &[], &[])
    }

    /// Append the claim mf would write for `items` (checked by nothing here: the ledger decides).
    fn fold(&mut self, id: &str, items: &[Item]) -> u32 {
        let l = Ledger::new(self.conv());
        let mut sorted = items.to_vec();
        sorted.sort_by_key(|&it| l.position(it));
        let span = Span::of(&l, sorted);
        let d = summary::draft(
            &span,
            id.into(),
            summary::Signed {
                model: "m",
                reach: Some(&crate::fold::frame::Reach::Tool),
                now_ms: 0,
                tail_line: None,
            },
            "short",
            None,
            Vec::new(),
        );
        self.claim_entry(id, ClaimKind::Summary, d.content, d.coverage)
    }

    /// Append the claim mf writes for a span of a plan (with the chunk's own tail line).
    fn fold_span(&mut self, id: &str, span: &Span) -> u32 {
        let d = summary::draft(
            span,
            id.into(),
            summary::Signed {
                model: "m",
                reach: Some(&crate::fold::frame::Reach::Tool),
                now_ms: 0,
                tail_line: None,
            },
            "short",
            None,
            Vec::new(),
        );
        self.claim_entry(id, ClaimKind::Summary, d.content, d.coverage)
    }

    fn claim_entry(
        &mut self,
        id: &str,
        kind: ClaimKind,
        content: String,
        coverage: crate::entry::Coverage,
    ) -> u32 {
        let i = self.push(id, Role::System, content.chars().count() as u32, &[], &[]);
        self.entries[i as usize].flags = 0;
        self.entries[i as usize].claim = self.claims.len() as u32;
        self.claims.push(Claim {
            entry: i,
            kind,
            id: id.into(),
            content_fingerprint: Some(content_fingerprint(&content)),
            label: content.split('\n').next().unwrap_or_default().to_string(),
            coverage: Ok(coverage),
            shape_ok: Ok(()),
        });
        i
    }

    fn retract(&mut self, id: &str) {
        let i = self.ids.iter().position(|x| x == id).unwrap();
        let fp = self.claims[self.entries[i].claim as usize]
            .coverage
            .as_ref()
            .unwrap()
            .fingerprint
            .clone();
        let line = self.next_line();
        self.records.push(Record {
            line,
            at_ms: 0,
            kind: RecordKind::Retract {
                summary_id: id.into(),
                fingerprint: fp,
            },
        });
    }

    fn idx(&self, id: &str) -> u32 {
        self.ids.iter().position(|x| x == id).unwrap() as u32
    }
}

/// system preamble + `turns` user/assistant pairs: ids s, u1, a1, u2, a2, …
fn convo(turns: usize) -> Conv {
    let mut c = Conv::default();
    c.msg("s", Role::System);
    for n in 1..=turns {
        c.msg(&format!("u{n}"), Role::User);
        c.msg(&format!("a{n}"), Role::Assistant);
    }
    c
}

fn policy(recent: usize) -> FoldPolicy {
    FoldPolicy {
        recent,
        trigger: 0,
        ..FoldPolicy::default()
    }
}

fn ids(c: &Conv, items: &[Item]) -> Vec<String> {
    items.iter().map(|&i| c.ids[i as usize].clone()).collect()
}

fn fold_ids(c: &Conv, p: &FoldPolicy) -> Vec<String> {
    match plan(&Ledger::new(c.conv()), p, "m") {
        Decision::Fold(f) => ids(c, &f.whole.items),
        Decision::Skip(s) => panic!("expected a fold, got {:?}", s.reason),
    }
}

fn view_ids(c: &Conv) -> Vec<String> {
    let l = Ledger::new(c.conv());
    ids(c, &l.view)
}

/// The laws of the seam, for a plan: the newest entry never folds; a turn whose prompt folds
/// folds whole (but for what never folds: fixed entries, units too large for one call); a turn
/// folded inside keeps its prompt and the entries after the fold verbatim.
fn assert_lawful_turns(l: &Ledger<'_>, plan: &crate::fold::Plan, what: &str) {
    let folded: std::collections::HashSet<Item> = plan.whole.items.iter().copied().collect();
    let last = *l.view.last().unwrap();
    assert!(!folded.contains(&last), "{what}: the newest entry folded");
    let turn_of = |it: Item| l.item_turns(it).1;
    for &it in &l.view {
        let prompt = l.kind(it) == ItemKind::Message && l.starts_turn(it as usize);
        // (A turn cut by the span budget keeps its prompt verbatim, so a unit too large for
        // any call or a sliver between such units never stays raw in a turn whose prompt folded.)
        if !prompt || !folded.contains(&it) {
            continue;
        }
        let t = turn_of(it);
        for &j in &l.view {
            if turn_of(j) == t && l.kind(j) == ItemKind::Message && !l.is_fixed(j) {
                assert!(
                    folded.contains(&j) || (plan.protected.contains(&j)),
                    "{what}: the prompt of turn {t} folded but entry {j} of it stays raw: folded {:?}, view {:?}, plan {:?}",
                    plan.whole.items,
                    l.view,
                    (
                        plan.split_turn,
                        plan.in_turn,
                        &plan.oversized,
                        &plan.protected
                    )
                );
            }
        }
    }
    if let Some(t) = plan.split_turn {
        let prompt = l.view.iter().copied().find(|&it| {
            turn_of(it) == t && l.kind(it) == ItemKind::Message && l.starts_turn(it as usize)
        });
        if let Some(p) = prompt {
            assert!(
                !folded.contains(&p),
                "{what}: the split turn's prompt folded"
            );
            assert!(
                plan.verbatim.contains(&p),
                "{what}: the prompt is not verbatim"
            );
        }
    }
}

/// A single-prompt agent session: the system prompt, one prompt, `units` tool units (a call and
/// its result of `result` characters; every fourth step two calls in parallel), a final answer.
fn long_turn(units: usize, result: u32) -> Conv {
    let mut c = Conv::default();
    c.msg("s", Role::System);
    c.push("u1", Role::User, 300, &[], &[]);
    for k in 0..units {
        if k % 4 == 3 {
            let (x, y) = (format!("k{k}a"), format!("k{k}b"));
            c.push(&format!("c{k}"), Role::Assistant, 120, &[&x, &y], &[]);
            c.push(&format!("r{k}a"), Role::Tool, result, &[], &[&x]);
            c.push(&format!("r{k}b"), Role::Tool, result, &[], &[&y]);
        } else {
            let x = format!("k{k}");
            c.push(&format!("c{k}"), Role::Assistant, 120, &[&x], &[]);
            c.push(&format!("r{k}"), Role::Tool, result, &[], &[&x]);
        }
    }
    c.push("a1", Role::Assistant, 400, &[], &[]);
    c
}

/// A decline record, as mf writes one, for a span of `c`.
fn decline(c: &mut Conv, span: &crate::fold::plan::Span, reason: DeclineReason, model: &str) {
    let line = c.entries.last().map_or(1, |e| e.line) + 1;
    c.records.push(Record {
        line,
        at_ms: 5,
        kind: span.decline(reason, model, Some(1), String::new()),
    });
}
