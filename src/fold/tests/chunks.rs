//! Folds over the span budget, declines, rollups, protected messages, recall targets.

use super::*;

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
        let cost: usize = s.chars + s.items.len() * crate::fold::plan::PIECE_OVERHEAD_CHARS;
        assert!(
            cost + crate::fold::plan::REQUEST_OVERHEAD_CHARS <= budget * 4,
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
    let room = budget * 4 - crate::fold::plan::REQUEST_OVERHEAD_CHARS;
    let sizes: Vec<usize> = items.iter().map(|&i| l.item_chars(i)).collect();
    // A budget that fits two or three summaries a request: several groups, none alone.
    let two = (2 * (sizes.iter().max().unwrap() + crate::fold::plan::PIECE_OVERHEAD_CHARS)
        + crate::fold::plan::REQUEST_OVERHEAD_CHARS)
        .div_ceil(4);
    let groups = crate::fold::plan::rollup_groups(&l, &items, Some(two));
    assert!(
        groups.len() > 1
            && groups
                .iter()
                .all(|g| g.len() >= 2 || g == groups.last().unwrap()),
        "{sizes:?} {groups:?}"
    );
    for budget_tokens in [budget, two, 700, 100_000] {
        let groups = crate::fold::plan::rollup_groups(&l, &items, Some(budget_tokens));
        assert_eq!(groups.concat(), items, "every summary once, in order");
        let room = (budget_tokens * 4).saturating_sub(crate::fold::plan::REQUEST_OVERHEAD_CHARS);
        for g in &groups {
            let cost: usize = g
                .iter()
                .map(|&i| l.item_chars(i) + crate::fold::plan::PIECE_OVERHEAD_CHARS)
                .sum();
            assert!(g.len() == 1 || cost <= room, "a group of {cost} chars");
        }
    }
    assert!(room > 0);
    assert_eq!(
        crate::fold::plan::rollup_groups(&l, &items, None),
        vec![items.clone()]
    );
    assert_eq!(
        crate::fold::plan::rollup_groups(&l, &items, Some(100_000)).len(),
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
    assert!(
        matches!(plan.notes[..], [PlanNote::TargetUnmet { target: 100, fixed }] if fixed > 100),
        "{:?}",
        plan.notes
    );
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
    let cap = plan.spans[0].summary_cap.expect("a cap");
    assert!(
        matches!(plan.notes[..], [PlanNote::Squeezed { target: 2_000, held_to, goal }]
            if held_to == cap && goal > held_to),
        "{:?}",
        plan.notes
    );
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
