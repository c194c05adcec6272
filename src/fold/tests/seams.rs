//! Where a fold may end: the tail, tool units, the trigger and the window.

use super::*;

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
