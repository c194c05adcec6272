//! Unit tests of the engine's laws, on hand-built entries.

use crate::entry::{Coverage, DeclineReason, Entry, Record, RecordKind, Role, SummaryClaim};
use crate::fingerprint::content_fingerprint;
use crate::fold::{Decision, FoldPolicy, Item, Ledger, SkipReason, plan};

fn e(id: &str, line: usize, role: Role, text: &str) -> Entry {
    Entry {
        id: id.into(),
        line,
        role,
        text: text.into(),
        tool_calls: vec![],
        tool_call_id: None,
        tool_name: None,
        summary: None,
    }
}

/// system preamble + `turns` user/assistant pairs: ids s, u1, a1, u2, a2, …
fn convo(turns: usize) -> Vec<Entry> {
    let mut v = vec![e("s", 1, Role::System, "be brief")];
    for n in 1..=turns {
        v.push(e(
            &format!("u{n}"),
            v.len() + 1,
            Role::User,
            &format!("question {n}"),
        ));
        v.push(e(
            &format!("a{n}"),
            v.len() + 1,
            Role::Assistant,
            &format!("answer {n} with some detail"),
        ));
    }
    v
}

fn policy(recent: usize) -> FoldPolicy {
    FoldPolicy {
        recent,
        size: None,
        trigger: 0,
        min_fold: 2,
    }
}

fn fold_ids(entries: &[Entry], records: &[Record], p: &FoldPolicy) -> Vec<String> {
    match plan(&Ledger::new(entries, records), p) {
        Decision::Fold(f) => f.span.ids,
        Decision::Skip(s) => panic!("expected a fold, got {:?}", s.reason),
    }
}

#[test]
fn tail_stays_verbatim_and_seam_rounds_out_to_a_whole_turn() {
    let v = convo(5);
    // recent 3 → cut before a4 (inside turn 4) → rounded out to before u4.
    assert_eq!(
        fold_ids(&v, &[], &policy(3)),
        ["u1", "a1", "u2", "a2", "u3", "a3"]
    );
    // recent 2 → cut before u5, already a turn start.
    assert_eq!(
        fold_ids(&v, &[], &policy(2)),
        ["u1", "a1", "u2", "a2", "u3", "a3", "u4", "a4"]
    );
    // recent 0 folds everything after the preamble, which is never folded.
    assert_eq!(fold_ids(&v, &[], &policy(0)).len(), 10);
}

#[test]
fn a_tool_call_never_leaves_its_results_behind() {
    let mut v = convo(3);
    // Turn 4 with a system note in the middle of a call's results — seams inside are refused.
    let mut call = e("a4", 0, Role::Assistant, "");
    call.tool_calls = vec!["c1".into(), "c2".into()];
    let mut r1 = e("t1", 0, Role::Tool, "r1");
    r1.tool_call_id = Some("c1".into());
    let mut r2 = e("t2", 0, Role::Tool, "r2");
    r2.tool_call_id = Some("c2".into());
    for x in [
        e("u4", 0, Role::User, "go"),
        call,
        r1,
        r2,
        e("a4b", 0, Role::Assistant, "done"),
    ] {
        let mut x = x;
        x.line = v.len() + 1;
        v.push(x);
    }
    for recent in 1..=4 {
        let ids = fold_ids(&v, &[], &policy(recent));
        assert_eq!(
            ids.last().map(String::as_str),
            Some("a3"),
            "recent {recent}: {ids:?}"
        );
    }
}

#[test]
fn a_user_message_between_call_and_result_keeps_both_turns_together() {
    let mut v = convo(2);
    let mut call = e("a3", 6, Role::Assistant, "");
    call.tool_calls = vec!["c9".into()];
    v.push(e("u3", 6, Role::User, "do it"));
    v.push(call);
    v.push(e("u4", 8, Role::User, "are you done?"));
    let mut res = e("t9", 9, Role::Tool, "result");
    res.tool_call_id = Some("c9".into());
    v.push(res);
    v.push(e("a4", 10, Role::Assistant, "yes"));
    for (i, x) in v.iter_mut().enumerate() {
        x.line = i + 1;
    }
    // recent 2 would cut before t9; before u4 splits the pair; so the seam goes before u3.
    assert_eq!(fold_ids(&v, &[], &policy(2)), ["u1", "a1", "u2", "a2"]);
}

#[test]
fn an_unanswered_call_in_the_last_turn_is_a_live_tail() {
    let mut v = convo(3);
    let mut call = e("a4", 9, Role::Assistant, "");
    call.tool_calls = vec!["live".into()];
    v.push(e("u4", 8, Role::User, "run it"));
    v.push(call);
    assert_eq!(
        fold_ids(&v, &[], &policy(0)).last().map(String::as_str),
        Some("a3")
    );
}

#[test]
fn trigger_and_min_fold_decide_whether_a_call_is_worth_it() {
    let v = convo(5);
    let l = Ledger::new(&v, &[]);
    let p = FoldPolicy {
        recent: 2,
        size: None,
        trigger: 20,
        min_fold: 2,
    };
    match plan(&l, &p) {
        Decision::Skip(s) => assert_eq!(
            s.reason,
            SkipReason::BelowTrigger {
                uncovered: 11,
                trigger: 20
            }
        ),
        d => panic!("{d:?}"),
    }
    let p = FoldPolicy {
        recent: 2,
        size: None,
        trigger: 0,
        min_fold: 9,
    };
    match plan(&l, &p) {
        Decision::Skip(s) => assert_eq!(
            s.reason,
            SkipReason::TooFew {
                would_fold: 8,
                min_fold: 9
            }
        ),
        d => panic!("{d:?}"),
    }
    let p = FoldPolicy {
        recent: 10,
        size: None,
        trigger: 0,
        min_fold: 2,
    };
    assert!(
        matches!(plan(&l, &p), Decision::Skip(s) if matches!(s.reason, SkipReason::NothingBeforeTail { .. }))
    );
}

#[test]
fn size_window_start_rounds_forward_to_a_whole_turn() {
    let v = convo(6);
    // 12 candidates; size 7 starts at a3 (inside turn 3) → moves to u4; recent 2 → ends before u6.
    let p = FoldPolicy {
        recent: 2,
        size: Some(7),
        trigger: 0,
        min_fold: 2,
    };
    assert_eq!(fold_ids(&v, &[], &p), ["u4", "a4", "u5", "a5"]);
}

fn summary_entry(id: &str, line: usize, covered: &[&str], from: u64, to: u64) -> Entry {
    let content = format!("[summary of earlier turns {from}–{to} — x]\n\nshort");
    let mut s = e(id, line, Role::System, &content);
    s.summary = Some(SummaryClaim {
        content: Some(content.clone()),
        coverage: Ok(Coverage {
            from_turn: from,
            to_turn: to,
            entry_count: covered.len() as u64,
            covered_ids: covered.iter().map(|s| (*s).to_string()).collect(),
            model: "m".into(),
            summarized_at_ms: 0,
            usage: None,
            fingerprint: content_fingerprint(&content),
        }),
    });
    s
}

#[test]
fn standing_summaries_hide_exactly_their_ids_and_nest() {
    let mut v = convo(6);
    v.push(summary_entry("S1", 14, &["u1", "a1", "u2", "a2"], 1, 2));
    let l = Ledger::new(&v, &[]);
    let view_ids: Vec<&str> = l
        .view
        .iter()
        .map(|&it| l.item_entry(it).id.as_str())
        .collect();
    assert_eq!(
        view_ids,
        ["s", "S1", "u3", "a3", "u4", "a4", "u5", "a5", "u6", "a6"]
    );
    // A later fold takes S1 into its span.
    let ids = fold_ids(&v, &[], &policy(2));
    assert_eq!(ids, ["S1", "u3", "a3", "u4", "a4", "u5", "a5"]);
    match plan(&l, &policy(2)) {
        Decision::Fold(f) => {
            assert_eq!(f.span.leaf_count, 4 + 6);
            assert_eq!((f.span.from_turn, f.span.to_turn), (1, 5));
        }
        d => panic!("{d:?}"),
    }
    // With an outer summary standing, S1 is nested and hidden with everything under it.
    v.push(summary_entry("S2", 15, &["S1", "u3", "a3"], 1, 3));
    let l = Ledger::new(&v, &[]);
    assert_eq!(l.summaries[&13].covered_by, Some(14));
    let view_ids: Vec<&str> = l
        .view
        .iter()
        .map(|&it| l.item_entry(it).id.as_str())
        .collect();
    assert_eq!(view_ids, ["s", "S2", "u4", "a4", "u5", "a5", "u6", "a6"]);
    // Retracting S2 brings S1 back.
    let retract = Record {
        line: 16,
        at_ms: 0,
        kind: RecordKind::Retract {
            summary_id: "S2".into(),
            fingerprint: String::new(),
        },
    };
    let r = [retract];
    let l = Ledger::new(&v, &r);
    let view_ids: Vec<&str> = l
        .view
        .iter()
        .map(|&it| l.item_entry(it).id.as_str())
        .collect();
    assert_eq!(
        view_ids,
        ["s", "S1", "u3", "a3", "u4", "a4", "u5", "a5", "u6", "a6"]
    );
}

#[test]
fn recall_order_puts_summaries_first_and_the_rest_in_file_order() {
    let mut v = convo(6);
    // A window fold in the middle: S covers turns 3–4; turns 1–2 and 5–6 stay uncovered.
    v.push(summary_entry("S", 14, &["u3", "a3", "u4", "a4"], 3, 4));
    let l = Ledger::new(&v, &[]);
    let conv: Vec<&str> = l
        .view
        .iter()
        .map(|&it| l.item_entry(it).id.as_str())
        .collect();
    assert_eq!(
        conv,
        ["s", "u1", "a1", "u2", "a2", "S", "u5", "a5", "u6", "a6"]
    );
    let recall: Vec<&str> = l
        .recall_order(&l.view)
        .iter()
        .map(|&it| l.item_entry(it).id.as_str())
        .collect();
    assert_eq!(
        recall,
        ["S", "s", "u1", "a1", "u2", "a2", "u5", "a5", "u6", "a6"]
    );
}

#[test]
fn a_summary_with_a_bad_record_is_an_ordinary_entry() {
    let mut v = convo(3);
    let mut forged = summary_entry("F", 8, &["u1", "nope"], 1, 1);
    v.push(forged.clone());
    let l = Ledger::new(&v, &[]);
    assert!(l.summaries.is_empty());
    assert!(l.flags[0].why.contains("`nope`"), "{:?}", l.flags);
    assert_eq!(l.view.len(), 8);
    // Content edited after writing.
    forged = summary_entry("F", 8, &["u1"], 1, 1);
    if let Some(c) = forged.summary.as_mut() {
        c.content = Some("edited".into());
    }
    v.pop();
    v.push(forged);
    let l = Ledger::new(&v, &[]);
    assert!(l.flags[0].why.contains("fingerprint"), "{:?}", l.flags);
    assert!(l.view.contains(&Item::Message(7)));
}

#[test]
fn a_not_smaller_verdict_binds_the_exact_span_only() {
    let v = convo(5);
    let ids: Vec<String> = ["u1", "a1", "u2", "a2", "u3", "a3"]
        .iter()
        .map(|s| (*s).to_string())
        .collect();
    let rec = Record {
        line: 99,
        at_ms: 5,
        kind: RecordKind::Decline {
            reason: DeclineReason::NotSmaller,
            model: "m".into(),
            from_turn: 1,
            to_turn: 3,
            span_ids: ids,
            span_chars: 1,
            summary_chars: Some(2),
            detail: String::new(),
        },
    };
    let r = [rec];
    let l = Ledger::new(&v, &r);
    assert!(
        matches!(plan(&l, &policy(3)), Decision::Skip(s) if s.reason == SkipReason::DeclinedBefore { line: 99, at_ms: 5 })
    );
    // A larger span is a new question.
    assert!(matches!(plan(&l, &policy(2)), Decision::Fold(_)));
}

/// Many random conversations (plain turns, tool calls with several results, system notes,
/// earlier summaries): every fold plan obeys the laws.
#[test]
fn random_conversations_always_fold_lawfully() {
    let mut rng = fastrand::Rng::with_seed(0x6d66);
    let mut checked = 0;
    for case in 0..600 {
        let mut v: Vec<Entry> = Vec::new();
        let push = |v: &mut Vec<Entry>, mut x: Entry| {
            x.line = v.len() + 1;
            v.push(x);
        };
        if rng.bool() {
            push(&mut v, e("sys", 0, Role::System, "preamble"));
        }
        let turns = rng.usize(0..14);
        let mut call_no = 0;
        for t in 0..turns {
            push(
                &mut v,
                e(
                    &format!("u{t}"),
                    0,
                    Role::User,
                    "a question with some words",
                ),
            );
            for k in 0..rng.usize(0..4) {
                match rng.u8(0..4) {
                    0 => {
                        let n = rng.usize(1..4);
                        let mut call = e(&format!("c{t}-{k}"), 0, Role::Assistant, "");
                        let ids: Vec<String> = (0..n)
                            .map(|_| {
                                call_no += 1;
                                format!("call{call_no}")
                            })
                            .collect();
                        call.tool_calls = ids.clone();
                        push(&mut v, call);
                        // The last call of the last turn may be left unanswered (a live tail).
                        let answered = if t + 1 == turns && rng.u8(0..4) == 0 {
                            n - 1
                        } else {
                            n
                        };
                        for id in ids.iter().take(answered) {
                            let mut r = e(&format!("r-{id}"), 0, Role::Tool, "result 42");
                            r.tool_call_id = Some(id.clone());
                            push(&mut v, r);
                        }
                    }
                    1 => push(&mut v, e(&format!("s{t}-{k}"), 0, Role::System, "note")),
                    _ => push(
                        &mut v,
                        e(&format!("a{t}-{k}"), 0, Role::Assistant, "an answer"),
                    ),
                }
            }
        }
        let recent = rng.usize(0..8);
        let size = if rng.bool() {
            Some(recent + rng.usize(1..20))
        } else {
            None
        };
        let policy = FoldPolicy {
            recent,
            size,
            trigger: 0,
            min_fold: 1,
        };
        let l = Ledger::new(&v, &[]);
        let Decision::Fold(p) = plan(&l, &policy) else {
            continue;
        };
        checked += 1;
        let pos = |id: &str| {
            l.view
                .iter()
                .position(|&it| l.item_entry(it).id == id)
                .unwrap()
        };
        let (first, last) = (pos(&p.span.ids[0]), pos(p.span.ids.last().unwrap()));
        assert_eq!(
            last - first + 1,
            p.span.ids.len(),
            "case {case}: the span is contiguous"
        );
        // Starts and ends on a turn boundary.
        assert_eq!(
            l.entries[match l.view[first] {
                Item::Message(i) | Item::Summary(i) => i,
            }]
            .role,
            Role::User,
            "case {case}"
        );
        if let Some(&next) = l.view.get(last + 1) {
            assert_eq!(
                l.item_entry(next).role,
                Role::User,
                "case {case}: the tail starts a turn"
            );
        }
        // The preamble is never folded; the tail keeps at least `recent` entries.
        assert!(
            p.span.ids.iter().all(|id| l.turns[l.find(id).unwrap()] > 0),
            "case {case}"
        );
        assert!(
            l.view.len() - last > recent.min(l.view.len()),
            "case {case}"
        );
        // No tool call is separated from any of its results.
        let folded: std::collections::HashSet<&str> =
            p.span.ids.iter().map(String::as_str).collect();
        for x in &v {
            if let Some(call) = &x.tool_call_id {
                let caller = v.iter().find(|c| c.tool_calls.contains(call)).unwrap();
                assert_eq!(
                    folded.contains(caller.id.as_str()),
                    folded.contains(x.id.as_str()),
                    "case {case}: {call} split"
                );
            }
            if !x.tool_calls.is_empty() && folded.contains(x.id.as_str()) {
                let answered = x
                    .tool_calls
                    .iter()
                    .all(|c| v.iter().any(|r| r.tool_call_id.as_ref() == Some(c)));
                let last_turn = l.turns[l.find(&x.id).unwrap()] == *l.turns.iter().max().unwrap();
                assert!(
                    answered || !last_turn,
                    "case {case}: a live tail was folded"
                );
            }
        }
    }
    assert!(checked > 250, "only {checked} folds were checked");
}
