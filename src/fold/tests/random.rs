//! Random conversations and partial writes: every plan is lawful, every chunk on its own.

use super::*;

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
