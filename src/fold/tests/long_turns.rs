//! Long agent turns folded inside: the prompt and the newest tool units stay.

use super::*;

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
        let w = fold_and_honour(&c, &plan, &what);
        assert!(
            view_ids(&w).contains(&"u1".to_string()),
            "{what}: the prompt is gone"
        );
    }
    assert!(folded > 150, "only {folded} folds");
}

/// A long run whose tool unit `at` straddles a second prompt: the call, then `u2`, then its
/// result (the planner's turn seams do not see `u2`'s turn begin inside that unit).
fn straddled(units: usize, result: u32, at: usize) -> Conv {
    let mut c = Conv::default();
    c.msg("s", Role::System);
    c.push("u1", Role::User, 300, &[], &[]);
    for k in 0..units {
        let x = format!("k{k}");
        c.push(&format!("c{k}"), Role::Assistant, 120, &[&x], &[]);
        if k == at {
            c.push("u2", Role::User, 200, &[], &[]);
        }
        c.push(&format!("r{k}"), Role::Tool, result, &[], &[&x]);
    }
    c.push("a1", Role::Assistant, 400, &[], &[]);
    c
}

#[test]
fn a_prompt_inside_a_straddling_tool_unit_stays_verbatim_while_its_turn_goes_on() {
    let mut rng = fastrand::Rng::with_seed(0x5354);
    let mut inside = 0;
    for case in 0..300 {
        let units = rng.usize(4..40);
        let c = straddled(units, rng.u32(50..3_000), rng.usize(0..units - 1));
        let p = FoldPolicy {
            recent: rng.usize(0..6),
            recent_tokens: rng.usize(0..6_000),
            tail_goal: None,
            max_span_tokens: rng.bool().then(|| rng.usize(700..6_000)),
            min_fold: 1,
            ..policy(0)
        };
        let l = Ledger::new(c.conv());
        let Decision::Fold(plan) = plan(&l, &p, "m") else {
            continue;
        };
        let what = format!("case {case} ({p:?})");
        assert_lawful_turns(&l, &plan, &what);
        let u2 = c.idx("u2");
        if plan.verbatim.contains(&u2) && plan.whole.items.contains(&c.idx("r0")) {
            inside += 1;
        }
        fold_and_honour(&c, &plan, &what);
    }
    assert!(inside > 20, "only {inside} folds kept u2 verbatim inside");
}

/// `c` with the plan's spans folded as mf writes them, read again: every summary is honoured.
fn fold_and_honour(c: &Conv, plan: &crate::fold::Plan, what: &str) -> Conv {
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
    w
}
