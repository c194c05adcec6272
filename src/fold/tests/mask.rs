//! `--strategy mask`: which tool results become stubs.

use super::*;

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
    let stubs = crate::fold::plan_mask(&l, &p).unwrap();
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
    assert_eq!(
        ids(&c, &crate::fold::plan_mask(&l, &p).unwrap()),
        ["r0", "r1"]
    );
    // keep 4 reaches past the tail: r1 stays too.
    let p = FoldPolicy {
        keep_tool_results: 4,
        ..policy(4)
    };
    assert_eq!(ids(&c, &crate::fold::plan_mask(&l, &p).unwrap()), ["r0"]);
    // A tail of every turn: nothing to mask.
    let p = FoldPolicy {
        keep_tool_results: 1,
        ..policy(100)
    };
    assert!(matches!(
        crate::fold::plan_mask(&l, &p),
        Err(SkipReason::NothingToMask { .. })
    ));
}
