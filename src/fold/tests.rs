//! Unit tests of the engine's laws, on hand-built conversations.

use crate::digest::{content_fingerprint, id_hash};
use crate::entry::{
    Claim, ClaimKind, Conversation, Covered, DeclineReason, DeclinedSpan, Entry, Link, NONE,
    Record, RecordKind, Role, SpanRef, flag,
};
use crate::fold::ledger::FlagKind;
use crate::fold::{Decision, FoldPolicy, Item, ItemKind, Ledger, SkipReason, Span, plan, summary};

/// A conversation being built: entries with ids, tool links and claims.
#[derive(Default, Clone)]
struct Conv {
    entries: Vec<Entry>,
    links: Vec<Link>,
    tool_ids: Vec<u64>,
    claims: Vec<Claim>,
    records: Vec<Record>,
    placements: Vec<(u32, u32)>,
    ids: Vec<String>,
}

impl Conv {
    fn conv(&self) -> Conversation<'_> {
        Conversation {
            entries: &self.entries,
            links: &self.links,
            tool_ids: &self.tool_ids,
            claims: &self.claims,
            records: &self.records,
            placements: &self.placements,
        }
    }

    fn next_line(&self) -> u32 {
        self.entries.last().map_or(1, |e| e.line + 1)
    }

    fn push(&mut self, id: &str, role: Role, chars: u32, calls: &[&str], answers: &[&str]) -> u32 {
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
        let d = summary::draft(&span, id.into(), "m", "short", None, 0, None, Vec::new());
        self.claim_entry(id, ClaimKind::Summary, d.content, d.coverage)
    }

    /// Append the claim mf writes for a span of a plan (with the chunk's own tail line).
    fn fold_span(&mut self, id: &str, span: &Span) -> u32 {
        let d = summary::draft(span, id.into(), "m", "short", None, 0, None, Vec::new());
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

#[test]
fn tail_stays_verbatim_and_seam_rounds_out_to_a_whole_turn() {
    let c = convo(5);
    // recent 3 → cut before a4 (inside turn 4) → rounded out to before u4.
    assert_eq!(
        fold_ids(&c, &policy(3)),
        ["u1", "a1", "u2", "a2", "u3", "a3"]
    );
    // recent 2 → cut before u5, already a turn start.
    assert_eq!(fold_ids(&c, &policy(2)).len(), 8);
    // recent 0: the last turn still stays verbatim, and the preamble is never folded.
    assert_eq!(fold_ids(&c, &policy(0)).len(), 8);
}

#[test]
fn a_tool_call_never_leaves_its_results_behind() {
    let mut c = convo(3);
    c.msg("u4", Role::User);
    c.push("a4", Role::Assistant, 10, &["c1", "c2"], &[]);
    c.push("t1", Role::Tool, 10, &[], &["c1"]);
    c.msg("note", Role::System);
    c.push("t2", Role::Tool, 10, &[], &["c2"]);
    c.msg("a4b", Role::Assistant);
    c.msg("u5", Role::User);
    c.msg("a5", Role::Assistant);
    for recent in 1..=6 {
        let f = fold_ids(&c, &policy(recent));
        let folded_call = f.iter().any(|x| x == "a4");
        for r in ["t1", "t2"] {
            assert_eq!(
                folded_call,
                f.iter().any(|x| x == r),
                "recent {recent}: {f:?}"
            );
        }
    }
}

#[test]
fn a_user_message_between_call_and_result_keeps_both_turns_together() {
    let mut c = convo(2);
    c.msg("u3", Role::User);
    c.push("a3", Role::Assistant, 10, &["c9"], &[]);
    c.msg("u4", Role::User);
    c.push("t9", Role::Tool, 10, &[], &["c9"]);
    c.msg("a4", Role::Assistant);
    c.msg("u5", Role::User);
    c.msg("a5", Role::Assistant);
    // recent 3 would cut before t9 or before u4; both split the pair; so the seam goes before u3.
    assert_eq!(fold_ids(&c, &policy(3)), ["u1", "a1", "u2", "a2"]);
}

#[test]
fn reused_call_ids_pair_one_to_one_and_do_not_block_folding() {
    // Every turn calls `call_0` (real logs do this).
    let mut c = Conv::default();
    c.msg("s", Role::System);
    for n in 1..=8 {
        c.msg(&format!("u{n}"), Role::User);
        c.push(&format!("c{n}"), Role::Assistant, 10, &["call_0"], &[]);
        c.push(&format!("r{n}"), Role::Tool, 10, &[], &["call_0"]);
        c.msg(&format!("a{n}"), Role::Assistant);
    }
    let l = Ledger::new(c.conv());
    for n in 1..=8 {
        assert_eq!(
            l.call_of[c.idx(&format!("r{n}")) as usize],
            c.idx(&format!("c{n}")),
            "r{n} pairs with its own turn's call"
        );
    }
    assert_eq!(fold_ids(&c, &policy(4)).len(), 7 * 4);
}

#[test]
fn trigger_min_fold_and_size_window() {
    let c = convo(5);
    let l = Ledger::new(c.conv());
    let p = FoldPolicy {
        recent: 2,
        trigger: 20,
        ..FoldPolicy::default()
    };
    assert!(
        matches!(plan(&l, &p, "m"), Decision::Skip(s) if matches!(s.reason, SkipReason::BelowTrigger { uncovered: 11, .. }))
    );
    let p = FoldPolicy {
        recent: 2,
        trigger: 0,
        min_fold: 20,
        ..FoldPolicy::default()
    };
    assert!(
        matches!(plan(&l, &p, "m"), Decision::Skip(s) if matches!(s.reason, SkipReason::TooFew { would_fold: 8, .. }))
    );
    // 12 candidates; size 7 starts at a3 (inside turn 3) → moves to u4; recent 2 → ends before u6.
    let c = convo(6);
    let p = FoldPolicy {
        recent: 2,
        size: Some(7),
        trigger: 0,
        ..FoldPolicy::default()
    };
    assert_eq!(fold_ids(&c, &p), ["u4", "a4", "u5", "a5"]);
}

#[test]
fn summaries_hide_exactly_what_they_cover_nest_and_retract() {
    let mut c = convo(6);
    let items: Vec<Item> = ["u1", "a1", "u2", "a2"].iter().map(|x| c.idx(x)).collect();
    c.fold("S1", &items);
    assert_eq!(
        view_ids(&c),
        ["s", "S1", "u3", "a3", "u4", "a4", "u5", "a5", "u6", "a6"]
    );
    // A later fold takes S1 into its span.
    assert_eq!(
        fold_ids(&c, &policy(2)),
        ["S1", "u3", "a3", "u4", "a4", "u5", "a5"]
    );
    let items: Vec<Item> = ["S1", "u3", "a3"].iter().map(|x| c.idx(x)).collect();
    c.fold("S2", &items);
    let l = Ledger::new(c.conv());
    assert_eq!(l.summaries[&c.idx("S1")].covered_by, Some(c.idx("S2")));
    assert_eq!(l.summaries[&c.idx("S2")].leaf_count, 6);
    assert_eq!(
        view_ids(&c),
        ["s", "S2", "u4", "a4", "u5", "a5", "u6", "a6"]
    );
    // Retracting the inner one alone is ignored and flagged; the outer one brings S1 back.
    let mut inner = c.clone();
    inner.retract("S1");
    let l = Ledger::new(inner.conv());
    assert!(l.flags.iter().any(|f| f.kind == FlagKind::BadRetraction));
    assert_eq!(ids(&inner, &l.view), view_ids(&c));
    c.retract("S2");
    assert_eq!(
        view_ids(&c),
        ["s", "S1", "u3", "a3", "u4", "a4", "u5", "a5", "u6", "a6"]
    );
    // Recall order: summaries first, then the rest in conversation order.
    let l = Ledger::new(c.conv());
    assert_eq!(ids(&c, &l.recall_order(&l.view))[..3], ["S1", "s", "u3"]);
}

/// A claim mf could not have written is an ordinary entry, flagged; nothing is hidden.
#[test]
fn forged_or_changed_summaries_hide_nothing() {
    let base = convo(5);
    let everything = ids(&base, &Ledger::new(base.conv()).view);
    let check = |c: &Conv, why: &str| {
        let l = Ledger::new(c.conv());
        assert!(l.summaries.is_empty(), "{why}: honoured");
        let mut v = ids(c, &l.view);
        v.retain(|x| x != "F");
        assert_eq!(v, everything, "{why}: something hidden");
        assert!(!l.flags.is_empty(), "{why}: not flagged");
        l.flags[0].clone()
    };
    let f = |c: &Conv, xs: &[&str]| -> Vec<Item> { xs.iter().map(|x| c.idx(x)).collect() };
    // The preamble.
    let mut c = base.clone();
    let items = f(&c, &["s", "u1", "a1"]);
    c.fold("F", &items);
    assert!(check(&c, "preamble").why.contains("preamble"));
    // The most recent turn.
    let mut c = base.clone();
    let items = f(&c, &["u4", "a4", "u5", "a5"]);
    c.fold("F", &items);
    assert!(check(&c, "tail").why.contains("most recent turn"));
    // A tool call without its result.
    let mut c = convo(2);
    c.msg("u3", Role::User);
    c.push("a3", Role::Assistant, 10, &["k"], &[]);
    c.push("t3", Role::Tool, 10, &[], &["k"]);
    c.msg("u4", Role::User);
    let everything_t = ids(&c, &Ledger::new(c.conv()).view);
    let items = f(&c, &["u3", "a3"]);
    c.fold("F", &items);
    let l = Ledger::new(c.conv());
    assert!(l.summaries.is_empty());
    assert!(l.flags[0].why.contains("result"), "{:?}", l.flags);
    let mut v = ids(&c, &l.view);
    v.retain(|x| x != "F");
    assert_eq!(v, everything_t);
    // Content edited after writing: the fingerprint no longer matches.
    let mut c = base.clone();
    let items = f(&c, &["u1", "a1"]);
    let i = c.fold("F", &items);
    c.claims[c.entries[i as usize].claim as usize].content_fingerprint = Some("0".into());
    assert!(check(&c, "edited").why.contains("fingerprint"));
    // A covered line changed since: stale.
    let mut c = base.clone();
    let items = f(&c, &["u1", "a1"]);
    c.fold("F", &items);
    let a1 = c.idx("a1") as usize;
    c.entries[a1].hash ^= 1;
    assert_eq!(check(&c, "stale").kind, FlagKind::Stale);
    // A line removed inside the span: the count no longer holds (stale too).
    let mut c = base.clone();
    let items = f(&c, &["u1", "a1", "u2"]);
    c.fold("F", &items);
    let gone = c.idx("a1") as usize;
    c.entries.remove(gone);
    c.ids.remove(gone);
    let l = Ledger::new(c.conv());
    assert!(l.summaries.is_empty());
    assert_eq!(l.flags[0].kind, FlagKind::Stale);
    // Wrong role or shape.
    let mut c = base.clone();
    let items = f(&c, &["u1", "a1"]);
    let i = c.fold("F", &items);
    c.claims[c.entries[i as usize].claim as usize].shape_ok = Err("role user".into());
    assert!(check(&c, "shape").why.contains("role user"));
    // A label that does not name what it covers.
    let mut c = base.clone();
    let items = f(&c, &["u1", "a1"]);
    let i = c.fold("F", &items);
    c.claims[c.entries[i as usize].claim as usize].label = summary::label(1, 9, 2, "m");
    assert!(check(&c, "label").why.contains("label"));
    // Covering something another standing summary stands for.
    let mut c = base.clone();
    let items = f(&c, &["u1", "a1"]);
    c.fold("G", &items);
    let items = f(&c, &["a1", "u2", "a2"]);
    c.fold("F", &items);
    let l = Ledger::new(c.conv());
    assert_eq!(l.summaries.len(), 1);
    assert!(
        l.flags[0].why.contains("already stands for"),
        "{:?}",
        l.flags
    );
}

#[test]
fn coverage_written_by_mf_0_1_0_is_honoured_only_for_unique_explicit_ids() {
    let mk = |ids: Vec<String>| {
        let mut c = convo(5);
        let content = format!("{}\n\nshort", summary::label(1, 2, 4, "m"));
        let cov = crate::entry::Coverage {
            version: 1,
            from_turn: 1,
            to_turn: 2,
            entry_count: ids.len() as u64,
            covered: Covered::Ids(ids),
            tail_line: None,
            kept_results: None,
            strategy: None,
            model: "m".into(),
            summarized_at_ms: 0,
            usage: None,
            fingerprint: content_fingerprint(&content),
        };
        c.claim_entry("S", ClaimKind::Summary, content, cov);
        c
    };
    let ok = mk(vec!["u1".into(), "a1".into(), "u2".into(), "a2".into()]);
    let l = Ledger::new(ok.conv());
    assert_eq!(l.summaries.len(), 1);
    assert!(l.flags.iter().any(|f| f.kind == FlagKind::Unverifiable));
    let derived = mk(vec!["line-2".into(), "a1".into(), "u2".into(), "a2".into()]);
    assert!(Ledger::new(derived.conv()).summaries.is_empty());
    let mut dup = mk(vec!["u1".into(), "a1".into(), "u2".into(), "a2".into()]);
    dup.msg("u1", Role::User);
    let l = Ledger::new(dup.conv());
    assert!(l.summaries.is_empty(), "a duplicated id cannot be trusted");
}

#[test]
fn a_binding_decline_keys_the_exact_span() {
    let mut c = convo(5);
    let l = Ledger::new(c.conv());
    let Decision::Fold(p) = plan(&l, &policy(3), "m") else {
        panic!()
    };
    c.records.push(Record {
        line: 99,
        at_ms: 5,
        kind: RecordKind::Decline {
            reason: DeclineReason::NotSmaller,
            model: "m".into(),
            span: DeclinedSpan::Ref(SpanRef {
                from_line: p.whole.first_line,
                to_line: p.whole.last_line,
                count: p.whole.items.len() as u64,
                digest: p.whole.digest.clone(),
                from_turn: 1,
                to_turn: 3,
            }),
            span_chars: 1,
            summary_chars: Some(2),
            key: None,
            detail: String::new(),
            usage: None,
        },
    });
    let l = Ledger::new(c.conv());
    assert!(
        matches!(plan(&l, &policy(3), "other"), Decision::Skip(s) if matches!(s.reason, SkipReason::DeclinedBefore { line: 99, .. }))
    );
    // A larger span is a new question.
    assert!(matches!(plan(&l, &policy(2), "m"), Decision::Fold(_)));
}

#[test]
fn a_span_over_the_budget_is_chunked_at_safe_seams() {
    // Turns of ~1,000 chars; a budget that fits about three of them per call.
    let mut c = Conv::default();
    c.msg("s", Role::System);
    for n in 1..=20 {
        c.push(&format!("u{n}"), Role::User, 200, &[], &[]);
        c.push(&format!("a{n}"), Role::Assistant, 800, &[], &[]);
    }
    let budget = 1_500;
    let p = FoldPolicy {
        max_span_tokens: Some(budget),
        ..policy(2)
    };
    let l = Ledger::new(c.conv());
    let Decision::Fold(plan) = plan(&l, &p, "m") else {
        panic!()
    };
    assert!(plan.spans.len() > 3, "{} chunks", plan.spans.len());
    assert!(!plan.in_turn);
    let mut all = Vec::new();
    for s in &plan.spans {
        let cost: usize = s.chars + s.items.len() * super::plan::PIECE_OVERHEAD_CHARS;
        assert!(
            cost + super::plan::REQUEST_OVERHEAD_CHARS <= budget * 4,
            "{cost}"
        );
        assert_eq!(
            c.entries[s.items[0] as usize].role,
            Role::User,
            "a chunk starts a turn"
        );
        all.extend_from_slice(&s.items);
    }
    assert_eq!(all, plan.whole.items);
    // Every chunk, written as mf would, is honoured.
    let mut w = c.clone();
    for (k, s) in plan.spans.iter().enumerate() {
        w.fold(&format!("C{k}"), &s.items);
    }
    let l = Ledger::new(w.conv());
    assert_eq!(l.summaries.len(), plan.spans.len(), "{:?}", l.flags);
}

#[test]
fn rollup_groups_fit_the_budget_in_order_and_cover_every_summary_once() {
    // Twenty chunk summaries, written as mf would, then grouped for a rollup.
    let mut c = Conv::default();
    c.msg("s", Role::System);
    for n in 1..=20 {
        c.push(&format!("u{n}"), Role::User, 200, &[], &[]);
        c.push(&format!("a{n}"), Role::Assistant, 800, &[], &[]);
    }
    let budget = 1_500;
    let p = FoldPolicy {
        max_span_tokens: Some(budget),
        ..policy(2)
    };
    let Decision::Fold(plan) = plan(&Ledger::new(c.conv()), &p, "m") else {
        panic!()
    };
    let mut w = c.clone();
    for (k, s) in plan.spans.iter().enumerate() {
        w.fold(&format!("C{k}"), &s.items);
    }
    let l = Ledger::new(w.conv());
    let mut items: Vec<Item> = l.summaries.keys().copied().collect();
    items.sort_by_key(|&i| l.summaries[&i].first_leaf);
    let room = budget * 4 - super::plan::REQUEST_OVERHEAD_CHARS;
    let sizes: Vec<usize> = items.iter().map(|&i| l.item_chars(i)).collect();
    // A budget that fits two or three summaries a request: several groups, none alone.
    let two = (2 * (sizes.iter().max().unwrap() + super::plan::PIECE_OVERHEAD_CHARS)
        + super::plan::REQUEST_OVERHEAD_CHARS)
        .div_ceil(4);
    let groups = super::plan::rollup_groups(&l, &items, Some(two));
    assert!(
        groups.len() > 1
            && groups
                .iter()
                .all(|g| g.len() >= 2 || g == groups.last().unwrap()),
        "{sizes:?} {groups:?}"
    );
    for budget_tokens in [budget, two, 700, 100_000] {
        let groups = super::plan::rollup_groups(&l, &items, Some(budget_tokens));
        assert_eq!(groups.concat(), items, "every summary once, in order");
        let room = (budget_tokens * 4).saturating_sub(super::plan::REQUEST_OVERHEAD_CHARS);
        for g in &groups {
            let cost: usize = g
                .iter()
                .map(|&i| l.item_chars(i) + super::plan::PIECE_OVERHEAD_CHARS)
                .sum();
            assert!(g.len() == 1 || cost <= room, "a group of {cost} chars");
        }
    }
    assert!(room > 0);
    assert_eq!(
        super::plan::rollup_groups(&l, &items, None),
        vec![items.clone()]
    );
    assert_eq!(
        super::plan::rollup_groups(&l, &items, Some(100_000)).len(),
        1
    );
}

#[test]
fn a_giant_turn_is_split_at_tool_units_and_a_giant_unit_stays_verbatim() {
    let mut c = Conv::default();
    c.msg("s", Role::System);
    c.msg("u1", Role::User);
    for k in 0..30 {
        let call = format!("k{k}");
        c.push(&format!("c{k}"), Role::Assistant, 100, &[&call], &[]);
        let size = if k == 10 { 50_000 } else { 400 };
        c.push(&format!("r{k}"), Role::Tool, size, &[], &[&call]);
    }
    c.msg("u2", Role::User);
    c.msg("a2", Role::Assistant);
    let p = FoldPolicy {
        max_span_tokens: Some(1_000),
        ..policy(1)
    };
    let l = Ledger::new(c.conv());
    let Decision::Fold(plan) = plan(&l, &p, "m") else {
        panic!()
    };
    assert!(plan.in_turn);
    assert_eq!(plan.oversized.len(), 1);
    assert_eq!(ids(&c, &plan.oversized[0]), ["c10", "r10"]);
    for s in &plan.spans {
        // No chunk separates a call from its result.
        for &it in &s.items {
            let r = l.last_result[it as usize];
            if r != NONE {
                assert!(s.items.contains(&r));
            }
        }
    }
    let mut w = c.clone();
    for (k, s) in plan.spans.iter().enumerate() {
        w.fold(&format!("C{k}"), &s.items);
    }
    assert_eq!(Ledger::new(w.conv()).summaries.len(), plan.spans.len());
}

#[test]
fn protected_user_messages_stay_out_of_the_fold_and_the_coverage_holds() {
    let c = convo(6);
    let p = FoldPolicy {
        protect_user: true,
        ..policy(2)
    };
    let l = Ledger::new(c.conv());
    let Decision::Fold(plan) = plan(&l, &p, "m") else {
        panic!()
    };
    assert_eq!(ids(&c, &plan.whole.items), ["a1", "a2", "a3", "a4", "a5"]);
    assert_eq!(ids(&c, &plan.protected), ["u1", "u2", "u3", "u4", "u5"]);
    let mut w = c.clone();
    w.fold("S", &plan.whole.items);
    let l = Ledger::new(w.conv());
    assert_eq!(l.summaries.len(), 1, "{:?}", l.flags);
    assert_eq!(
        ids(&w, &l.recall_order(&l.view)),
        ["S", "s", "u1", "u2", "u3", "u4", "u5", "u6", "a6"]
    );
}

#[test]
fn target_tokens_folds_the_fewest_oldest_turns() {
    let mut c = Conv::default();
    c.msg("s", Role::System);
    for n in 1..=10 {
        c.push(&format!("u{n}"), Role::User, 400, &[], &[]);
        c.push(&format!("a{n}"), Role::Assistant, 3_600, &[], &[]);
    }
    // 10 turns of 1,000 tokens each; the target leaves room for about 6.
    let p = FoldPolicy {
        target_tokens: Some(6_500),
        ..policy(1)
    };
    let l = Ledger::new(c.conv());
    let Decision::Fold(plan) = plan(&l, &p, "m") else {
        panic!()
    };
    let folded = plan.whole.items.len() / 2;
    assert!((4..=5).contains(&folded), "{folded} turns folded");
    // Under a target the tail alone exceeds: fold everything foldable and say so.
    let p = FoldPolicy {
        target_tokens: Some(100),
        ..policy(1)
    };
    let Decision::Fold(plan) = super::plan(&l, &p, "m") else {
        panic!()
    };
    assert_eq!(plan.whole.items.len(), 18);
    assert!(plan.note.unwrap().contains("cannot be met"));
    assert_eq!(plan.spans[0].summary_cap, None);
    // A target a fifth of everything cannot meet, but the tail leaves room under: everything
    // folds, its summary held to the room (the tail is turn 10, 1,000 tokens; a fifth of the
    // 9,000 folded would be 1,800).
    let p = FoldPolicy {
        target_tokens: Some(2_000),
        ..policy(1)
    };
    let Decision::Fold(plan) = super::plan(&l, &p, "m") else {
        panic!()
    };
    assert_eq!(plan.whole.items.len(), 18);
    assert!(
        plan.note.as_deref().unwrap().contains("held to"),
        "{:?}",
        plan.note
    );
    let cap = plan.spans[0].summary_cap.expect("a cap");
    assert!((800..=1_000).contains(&cap), "{cap}");
    assert_eq!(plan.spans[0].summary_target_tokens(&p), cap);
    // Chunked, the room is shared by size.
    let p = FoldPolicy {
        target_tokens: Some(2_000),
        max_span_tokens: Some(3_000),
        ..policy(1)
    };
    let Decision::Fold(plan) = super::plan(&l, &p, "m") else {
        panic!()
    };
    assert!(plan.spans.len() > 1);
    let caps: usize = plan.spans.iter().map(|s| s.summary_cap.unwrap()).sum();
    assert!(caps <= cap, "{caps} > {cap}");
    // Already under the target: nothing to do.
    let p = FoldPolicy {
        target_tokens: Some(1_000_000),
        ..policy(1)
    };
    assert!(
        matches!(super::plan(&l, &p, "m"), Decision::Skip(s) if matches!(s.reason, SkipReason::UnderTarget { .. }))
    );
}

#[test]
fn mask_stubs_every_large_result_but_the_newest_kept() {
    let mut c = convo(1);
    for k in 0..6 {
        let call = format!("k{k}");
        c.msg(&format!("u{k}x"), Role::User);
        c.push(&format!("c{k}"), Role::Assistant, 10, &[&call], &[]);
        c.push(
            &format!("r{k}"),
            Role::Tool,
            if k == 1 { 50 } else { 5_000 },
            &[],
            &[&call],
        );
    }
    let p = FoldPolicy {
        keep_tool_results: 2,
        ..policy(1)
    };
    let l = Ledger::new(c.conv());
    let stubs = super::plan_mask(&l, &p).unwrap();
    // r0..r3 are older than the 2 kept; r1 is too small to be worth a stub.
    assert_eq!(ids(&c, &stubs), ["r0", "r2", "r3"]);
}

#[test]
fn mask_never_stubs_a_result_in_the_verbatim_tail() {
    // The last turn has three large results; with --recent 4 the tail is that whole turn.
    let mut c = convo(1);
    for k in 0..2 {
        c.msg(&format!("u{k}x"), Role::User);
        c.push(
            &format!("c{k}"),
            Role::Assistant,
            10,
            &[&format!("k{k}")],
            &[],
        );
        c.push(
            &format!("r{k}"),
            Role::Tool,
            5_000,
            &[],
            &[&format!("k{k}")],
        );
    }
    c.msg("ulast", Role::User);
    c.push("clast", Role::Assistant, 10, &["x1", "x2", "x3"], &[]);
    for x in ["x1", "x2", "x3"] {
        c.push(&format!("r{x}"), Role::Tool, 5_000, &[], &[x]);
    }
    c.msg("alast", Role::Assistant);
    let l = Ledger::new(c.conv());
    let p = FoldPolicy {
        keep_tool_results: 1,
        ..policy(4)
    };
    assert_eq!(ids(&c, &super::plan_mask(&l, &p).unwrap()), ["r0", "r1"]);
    // keep 4 reaches past the tail: r1 stays too.
    let p = FoldPolicy {
        keep_tool_results: 4,
        ..policy(4)
    };
    assert_eq!(ids(&c, &super::plan_mask(&l, &p).unwrap()), ["r0"]);
    // A tail of every turn: nothing to mask.
    let p = FoldPolicy {
        keep_tool_results: 1,
        ..policy(100)
    };
    assert!(matches!(
        super::plan_mask(&l, &p),
        Err(SkipReason::NothingToMask { .. })
    ));
}

#[test]
fn an_agents_own_summary_stands_before_what_it_kept() {
    let mut c = convo(4);
    // The agent compacted: u1..a2 are history; its summary (line after a4) kept u3 on.
    for id in ["u1", "a1", "u2", "a2"] {
        let i = c.idx(id) as usize;
        c.entries[i].flags |= flag::UNSEEN | flag::HISTORY;
    }
    let n = c.msg("N", Role::User);
    c.entries[n as usize].flags = flag::NATIVE_SUMMARY;
    c.placements.push((n, c.idx("u3")));
    let l = Ledger::new(c.conv());
    assert_eq!(ids(&c, &l.view), ["s", "N", "u3", "a3", "u4", "a4"]);
    assert_eq!(
        *l.turns.iter().max().unwrap(),
        4,
        "history still counts in turns"
    );
    // A fold starts with the agent's summary.
    assert_eq!(fold_ids(&c, &policy(1)), ["N", "u3", "a3"]);
}

/// Many random conversations (turns, tool calls with several results and reused ids, system
/// notes): every plan obeys the laws, and every chunk written as mf would write it is honoured.
#[test]
fn random_conversations_always_fold_lawfully() {
    let mut rng = fastrand::Rng::with_seed(0x6d66);
    let mut checked = 0;
    for case in 0..500 {
        let mut c = Conv::default();
        if rng.bool() {
            c.msg("sys", Role::System);
        }
        let turns = rng.usize(0..14);
        let mut call_no = 0;
        for t in 0..turns {
            c.push(&format!("u{t}"), Role::User, rng.u32(10..400), &[], &[]);
            for k in 0..rng.usize(0..4) {
                match rng.u8(0..4) {
                    0 => {
                        let n = rng.usize(1..4);
                        let ids: Vec<String> = (0..n)
                            .map(|_| {
                                call_no += 1;
                                if rng.u8(0..3) == 0 {
                                    "call_0".to_string()
                                } else {
                                    format!("call{call_no}")
                                }
                            })
                            .collect();
                        let refs: Vec<&str> = ids.iter().map(String::as_str).collect();
                        c.push(&format!("c{t}-{k}"), Role::Assistant, 30, &refs, &[]);
                        let answered = if t + 1 == turns && rng.u8(0..4) == 0 {
                            n - 1
                        } else {
                            n
                        };
                        for (j, id) in ids.iter().take(answered).enumerate() {
                            c.push(
                                &format!("r{t}-{k}-{j}"),
                                Role::Tool,
                                rng.u32(10..3000),
                                &[],
                                &[id],
                            );
                        }
                    }
                    1 => {
                        c.msg(&format!("s{t}-{k}"), Role::System);
                    }
                    _ => {
                        c.push(
                            &format!("a{t}-{k}"),
                            Role::Assistant,
                            rng.u32(10..900),
                            &[],
                            &[],
                        );
                    }
                }
            }
        }
        let recent = rng.usize(0..8);
        let p = FoldPolicy {
            recent,
            recent_tokens: if rng.bool() {
                FoldPolicy::default().recent_tokens
            } else {
                rng.usize(0..1500)
            },
            size: rng.bool().then(|| recent + rng.usize(1..20)),
            trigger: 0,
            min_fold: 1,
            max_span_tokens: rng.bool().then(|| rng.usize(800..3000)),
            protect_user: rng.u8(0..4) == 0,
            ..FoldPolicy::default()
        };
        let l = Ledger::new(c.conv());
        let Decision::Fold(plan) = plan(&l, &p, "m") else {
            continue;
        };
        checked += 1;
        assert_lawful_turns(&l, &plan, &format!("case {case}"));
        for s in &plan.spans {
            for &it in &s.items {
                assert!(!l.is_preamble(it), "case {case}: the preamble was folded");
                if p.protect_user {
                    assert!(
                        !l.is_user_message(it),
                        "case {case}: a user message was folded"
                    );
                }
                // No tool call is separated from any of its results, within one chunk.
                let r = l.last_result[it as usize];
                if r != NONE {
                    assert!(s.items.contains(&r), "case {case}: a call left its result");
                }
                let call = l.call_of[it as usize];
                if call != NONE {
                    assert!(
                        s.items.contains(&call),
                        "case {case}: a result left its call"
                    );
                }
            }
        }
        // Written as mf would write them, every chunk is honoured and hides exactly its items.
        let mut w = c.clone();
        for (k, s) in plan.spans.iter().enumerate() {
            w.fold_span(&format!("S{k}"), s);
        }
        let lw = Ledger::new(w.conv());
        assert_eq!(
            lw.summaries.len(),
            plan.spans.len(),
            "case {case}: {:?}",
            lw.flags
        );
        let hidden: Vec<Item> = (0..c.entries.len() as u32)
            .filter(|&i| lw.hidden_by[i as usize] != NONE)
            .collect();
        let mut folded: Vec<Item> = plan.whole.items.clone();
        folded.sort_unstable();
        assert_eq!(hidden, folded, "case {case}: hidden ≠ folded");
        assert!(
            lw.view
                .iter()
                .filter(|&&it| lw.kind(it) == ItemKind::Summary)
                .count()
                == plan.spans.len()
        );
    }
    assert!(checked > 150, "only {checked} folds were checked");
}

/// Some chunks of a plan are declined or fail (the audit, the summarizer): whatever subset of
/// them is written, each is honoured on its own, and no turn's question is folded while any of
/// its answer stays raw.
#[test]
fn any_subset_of_a_plans_chunks_is_lawful_on_its_own() {
    let mut rng = fastrand::Rng::with_seed(0x1616);
    let mut partial = 0;
    for case in 0..300 {
        let mut c = Conv::default();
        c.msg("sys", Role::System);
        for t in 0..rng.usize(2..8) {
            c.push(&format!("u{t}"), Role::User, rng.u32(10..400), &[], &[]);
            for k in 0..rng.usize(0..12) {
                let call = format!("k{t}-{k}");
                c.push(&format!("c{t}-{k}"), Role::Assistant, 60, &[&call], &[]);
                let size = if rng.u8(0..8) == 0 {
                    20_000
                } else {
                    rng.u32(50..2500)
                };
                c.push(&format!("r{t}-{k}"), Role::Tool, size, &[], &[&call]);
            }
            c.push(
                &format!("a{t}"),
                Role::Assistant,
                rng.u32(10..600),
                &[],
                &[],
            );
        }
        let p = FoldPolicy {
            recent: rng.usize(1..6),
            min_fold: 1,
            max_span_tokens: Some(rng.usize(800..4000)),
            ..policy(1)
        };
        let l = Ledger::new(c.conv());
        let Decision::Fold(plan) = plan(&l, &p, "m") else {
            continue;
        };
        let mut w = c.clone();
        let mut written = Vec::new();
        for (k, s) in plan.spans.iter().enumerate() {
            if rng.bool() {
                w.fold_span(&format!("S{k}"), s);
                written.push(s);
            }
        }
        partial += usize::from(written.len() < plan.spans.len() && !written.is_empty());
        let lw = Ledger::new(w.conv());
        assert_eq!(
            lw.summaries.len(),
            written.len(),
            "case {case}: {:?}",
            lw.flags
        );
        // No prompt hidden while an entry of its turn stays shown.
        for &it in &lw.view {
            if lw.kind(it) != ItemKind::Message {
                continue;
            }
            let t = lw.turns[it as usize];
            if t == 0 {
                continue;
            }
            let prompt = (0..c.entries.len())
                .find(|&j| lw.turns[j] == t && lw.starts_turn(j))
                .unwrap();
            assert_eq!(
                lw.hidden_by[prompt], NONE,
                "case {case}: turn {t}'s prompt is folded while entry {it} of it is shown"
            );
        }
    }
    assert!(partial > 50, "only {partial} partial writes");
}

/// The laws of the seam, for a plan: the newest entry never folds; a turn whose prompt folds
/// folds whole (but for what never folds: fixed entries, units too large for one call); a turn
/// folded inside keeps its prompt and the entries after the fold verbatim.
fn assert_lawful_turns(l: &Ledger<'_>, plan: &super::Plan, what: &str) {
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

#[test]
fn a_long_turn_folds_inside_keeping_its_prompt_and_newest_tool_units() {
    // 45 units of ~2,000 characters: ~23k tokens in one turn.
    let c = long_turn(45, 2_000);
    let l = Ledger::new(c.conv());
    for recent in [0, 1, 5] {
        let p = FoldPolicy {
            recent_tokens: 1_000,
            tail_goal: None,
            ..policy(recent)
        };
        let Decision::Fold(plan) = plan(&l, &p, "m") else {
            panic!("recent {recent}: a long turn must fold inside")
        };
        assert_lawful_turns(&l, &plan, &format!("recent {recent}"));
        assert_eq!(plan.split_turn, Some(1));
        let f = ids(&c, &plan.whole.items);
        assert_eq!(f[0], "c0", "the fold starts after the prompt");
        assert!(!f.contains(&"u1".to_string()));
        // The tail: the newest units that fit in 1,000 tokens (two ~500-token units), and at
        // least the `recent` entries, whole.
        let tail: Vec<String> = ids(&c, &l.view[plan.whole.items.len() + 2..]);
        assert_eq!(tail.last().unwrap(), "a1");
        assert!(
            tail[0].starts_with('c'),
            "the tail starts at a call: {tail:?}"
        );
        let kept_chars: usize = l.view[plan.whole.items.len() + 2..]
            .iter()
            .map(|&it| l.item_chars(it))
            .sum();
        assert!(kept_chars <= 4_000 || tail.len() <= recent + 2, "{tail:?}");
        // Written as mf would write it, the fold is honoured: the recall view is the prompt,
        // the summary, then the kept units.
        let mut w = c.clone();
        w.fold("S", &plan.whole.items);
        let lw = Ledger::new(w.conv());
        assert_eq!(lw.summaries.len(), 1, "{:?}", lw.flags);
        let view = view_ids(&w);
        assert_eq!(view[..3], ["s", "u1", "S"]);
        assert_eq!(view[3..], tail[..]);
    }
    // A turn that fits the tail stays whole, as before.
    let p = FoldPolicy {
        recent_tokens: 1_000_000,
        tail_goal: None,
        ..policy(1)
    };
    assert!(matches!(
        plan(&l, &p, "m"),
        Decision::Skip(s) if matches!(s.reason, SkipReason::NothingBeforeTail { .. })
    ));
}

#[test]
fn withdrawing_a_fold_inside_a_turn_shows_the_turn_in_its_own_order_again() {
    // A short first turn, then a long one: the fold takes turn 1 whole and turn 2's older units,
    // and stands where turn 1 began, before the prompt of turn 2 it left verbatim.
    let mut c = Conv::default();
    c.msg("s", Role::System);
    c.push("u0", Role::User, 300, &[], &[]);
    c.push("a0", Role::Assistant, 300, &[], &[]);
    let long = long_turn(12, 2_000);
    for (k, e) in long.entries.iter().enumerate().skip(1) {
        let id = long.ids[k].clone();
        let (calls, answers): (Vec<String>, Vec<String>) = match id.as_bytes()[0] {
            b'c' => {
                let k: usize = id[1..].parse().unwrap();
                if k % 4 == 3 {
                    (vec![format!("k{k}a"), format!("k{k}b")], vec![])
                } else {
                    (vec![format!("k{k}")], vec![])
                }
            }
            b'r' => (vec![], vec![format!("k{}", &id[1..])]),
            _ => (vec![], vec![]),
        };
        let calls: Vec<&str> = calls.iter().map(String::as_str).collect();
        let answers: Vec<&str> = answers.iter().map(String::as_str).collect();
        c.push(&id, e.role, e.chars, &calls, &answers);
    }
    let l = Ledger::new(c.conv());
    let p = FoldPolicy {
        recent_tokens: 1_000,
        tail_goal: None,
        ..policy(1)
    };
    let Decision::Fold(plan) = plan(&l, &p, "m") else {
        panic!()
    };
    let mut w = c.clone();
    let s = w.fold("S", &plan.whole.items);
    let lw = Ledger::new(w.conv());
    assert_eq!(lw.summaries.len(), 1, "{:?}", lw.flags);
    let shown: Vec<Item> = lw
        .next_view(&[], &[], Some(s))
        .into_iter()
        .map(|x| match x {
            crate::entry::Shown::Existing(i) => i,
            crate::entry::Shown::New(_) => panic!("nothing new"),
        })
        .collect();
    assert_eq!(ids(&w, &shown), ids(&c, &l.view), "the original order");
}

#[test]
fn a_summary_over_a_turns_prompt_with_its_rest_raw_is_not_honoured() {
    let c = long_turn(10, 2_000);
    let l = Ledger::new(c.conv());
    let items: Vec<Item> = l.view[1..l.view.len() - 3].to_vec(); // u1 and all but the last unit
    let mut w = c.clone();
    w.fold("S", &items);
    let lw = Ledger::new(w.conv());
    assert!(lw.summaries.is_empty());
    assert!(
        lw.flags
            .iter()
            .any(|f| f.kind == FlagKind::NotHonoured && f.why.contains("prompt that opened turn 1")),
        "{:?}",
        lw.flags
    );
    // Without the prompt it stands.
    let mut w = c.clone();
    w.fold("S", &items[1..]);
    assert_eq!(Ledger::new(w.conv()).summaries.len(), 1);
}

#[test]
fn a_span_budget_no_unit_fits_gives_that_reason() {
    let c = long_turn(45, 2_000);
    let l = Ledger::new(c.conv());
    let p = FoldPolicy {
        max_span_tokens: Some(400),
        recent_tokens: 1_000,
        tail_goal: None,
        ..policy(1)
    };
    match plan(&l, &p, "m") {
        Decision::Skip(s) => {
            assert!(
                matches!(s.reason, SkipReason::TooLargeForACall { budget: 400, .. }),
                "{:?}",
                s.reason
            );
            let why = s.reason.describe();
            assert!(why.contains("larger than one call may carry"), "{why}");
            assert!(!why.contains("nothing new"), "{why}");
        }
        Decision::Fold(_) => panic!("nothing fits a 400-token call"),
    }
}

#[test]
fn long_turns_fold_lawfully_under_every_tail_and_budget() {
    let mut rng = fastrand::Rng::with_seed(0x7475);
    let mut folded = 0;
    for case in 0..300 {
        let c = long_turn(rng.usize(3..60), rng.u32(50..4_000));
        let p = FoldPolicy {
            recent: rng.usize(0..12),
            recent_tokens: rng.usize(0..8_000),
            tail_goal: None,
            max_span_tokens: rng.bool().then(|| rng.usize(700..6_000)),
            min_fold: 1,
            ..policy(0)
        };
        let l = Ledger::new(c.conv());
        let Decision::Fold(plan) = plan(&l, &p, "m") else {
            continue;
        };
        folded += 1;
        let what = format!("case {case} ({p:?})");
        assert_lawful_turns(&l, &plan, &what);
        for s in &plan.spans {
            for &it in &s.items {
                let r = l.last_result[it as usize];
                assert!(
                    r == NONE || s.items.contains(&r),
                    "{what}: a call left its result"
                );
                let call = l.call_of[it as usize];
                assert!(
                    call == NONE || s.items.contains(&call),
                    "{what}: a result left its call"
                );
            }
        }
        let mut w = c.clone();
        for (k, s) in plan.spans.iter().enumerate() {
            w.fold(&format!("S{k}"), &s.items);
        }
        let lw = Ledger::new(w.conv());
        assert_eq!(
            lw.summaries.len(),
            plan.spans.len(),
            "{what}: {:?}",
            lw.flags
        );
        assert!(
            view_ids(&w).contains(&"u1".to_string()),
            "{what}: the prompt is gone"
        );
    }
    assert!(folded > 150, "only {folded} folds");
}

/// A decline record, as mf writes one, for a span of `c`.
fn decline(c: &mut Conv, span: &super::plan::Span, reason: DeclineReason, model: &str) {
    let line = c.entries.last().map_or(1, |e| e.line) + 1;
    c.records.push(Record {
        line,
        at_ms: 5,
        kind: span.decline(reason, model, Some(1), String::new()),
    });
}

#[test]
fn a_second_run_with_nothing_new_asks_nothing() {
    // Chunks written, some declined: the next plan would only regroup summaries and declined
    // entries into new spans. Nothing new: no call, for any grouping.
    let mut c = Conv::default();
    c.msg("s", Role::System);
    for n in 1..=30 {
        c.push(&format!("u{n}"), Role::User, 200, &[], &[]);
        c.push(&format!("a{n}"), Role::Assistant, 800, &[], &[]);
    }
    let p = FoldPolicy {
        max_span_tokens: Some(1_500),
        ..policy(2)
    };
    let l = Ledger::new(c.conv());
    let Decision::Fold(first) = plan(&l, &p, "m") else {
        panic!()
    };
    assert!(first.spans.len() > 4);
    for (k, s) in first.spans.iter().enumerate() {
        if k % 3 == 1 {
            decline(&mut c, s, DeclineReason::NotSmaller, "m");
        } else if k % 3 == 2 {
            decline(&mut c, s, DeclineReason::Lossy, "m");
        } else {
            c.fold(&format!("S{k}"), &s.items);
        }
    }
    for budget in [1_500, 3_000, 100_000] {
        let p = FoldPolicy {
            max_span_tokens: Some(budget),
            ..policy(2)
        };
        let l = Ledger::new(c.conv());
        match plan(&l, &p, "m") {
            Decision::Skip(s) => assert!(
                matches!(
                    s.reason,
                    SkipReason::NothingNew { .. } | SkipReason::DeclinedBefore { .. }
                ),
                "{:?}",
                s.reason
            ),
            Decision::Fold(f) => panic!("asked again at {budget}: {} spans", f.spans.len()),
        }
    }
    // Another model may try what this one made lossy, but not what was not smaller.
    let l = Ledger::new(c.conv());
    if let Decision::Fold(f) = plan(&l, &p, "other") {
        for s in &f.spans {
            assert!(s.items.iter().any(|&it| l.is_fresh(it, "other")));
        }
    }
    // New turns are new material: they are folded (with what stood before them).
    for n in 31..=40 {
        c.push(&format!("u{n}"), Role::User, 200, &[], &[]);
        c.push(&format!("a{n}"), Role::Assistant, 800, &[], &[]);
    }
    let l = Ledger::new(c.conv());
    let Decision::Fold(next) = plan(&l, &p, "m") else {
        panic!("new turns are not folded")
    };
    for s in &next.spans {
        assert!(s.items.iter().any(|&it| l.is_fresh(it, "m")));
    }
}

#[test]
fn slivers_between_giant_units_are_not_asked_about() {
    // Each turn: a short prompt and reply around a tool result far over the budget. What lies
    // between the giant units is a few hundred characters: a summary would not be shorter.
    let mut c = Conv::default();
    c.msg("s", Role::System);
    for n in 1..=12 {
        c.push(&format!("u{n}"), Role::User, 120, &[], &[]);
        let call = format!("k{n}");
        c.push(&format!("c{n}"), Role::Assistant, 60, &[&call], &[]);
        c.push(&format!("r{n}"), Role::Tool, 60_000, &[], &[&call]);
        c.push(&format!("a{n}"), Role::Assistant, 150, &[], &[]);
    }
    let p = FoldPolicy {
        max_span_tokens: Some(3_000),
        ..policy(2)
    };
    let l = Ledger::new(c.conv());
    match plan(&l, &p, "m") {
        Decision::Skip(s) => assert!(
            matches!(s.reason, SkipReason::NothingNew { stale: 0, small } if small > 5),
            "{:?}",
            s.reason
        ),
        Decision::Fold(f) => panic!("{} slivers asked about", f.spans.len()),
    }
}
