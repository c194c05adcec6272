//! The measures on hand-built conversations and texts.

use super::*;
use crate::fold::tests::Conv;

/// Append an entry to `c` (its id from its line).
fn push(c: &mut Conv, role: Role, chars: u32, calls: &[&str], answers: &[&str]) {
    let id = format!("e{}", c.next_line());
    c.push(&id, role, chars, calls, answers);
}

/// `turns` turns of a user message and an answer, 100 tokens each turn.
fn chat(turns: usize) -> Conv {
    let mut c = Conv::default();
    for _ in 0..turns {
        push(&mut c, Role::User, 80, &[], &[]);
        push(&mut c, Role::Assistant, 320, &[], &[]);
    }
    c
}

#[test]
fn the_cut_is_the_turn_start_nearest_seventy_percent_of_the_tokens() {
    let c = chat(10);
    let l = Ledger::new(c.conv());
    let cut = cut(&l, DEFAULT_SPLIT).expect("a cut");
    // Turn 8 starts at entry 14, after 7 turns of 100 tokens.
    assert_eq!(cut.at, 14);
    assert_eq!((cut.past_tokens, cut.future_tokens), (700, 300));
    assert!(cut.turn_seam);
    assert!((cut.share() - 0.7).abs() < 1e-9);
    // Another split moves the cut with it.
    assert_eq!(super::cut(&l, 0.5).map(|c| c.at), Some(10));
}

#[test]
fn a_single_prompt_run_is_cut_between_tool_units_never_between_a_call_and_its_result() {
    let mut c = Conv::default();
    push(&mut c, Role::User, 40, &[], &[]);
    for k in 0..10 {
        let id = format!("call{k}");
        push(&mut c, Role::Assistant, 40, &[&id], &[]);
        push(&mut c, Role::Tool, 360, &[], &[&id]);
    }
    let l = Ledger::new(c.conv());
    let cut = cut(&l, DEFAULT_SPLIT).expect("a cut");
    assert!(!cut.turn_seam);
    // A call starts the future: its result is never cut off from it.
    assert_eq!(c.entries[cut.at].role, Role::Assistant);
    assert!(l.seam_before(cut.at));
    assert!((cut.share() - 0.7).abs() < 0.06, "{}", cut.share());
}

#[test]
fn a_turn_start_within_the_slack_beats_a_nearer_seam_inside_a_turn() {
    // Turn 1: 600 tokens of tool units; turn 2 starts at 60 % of the tokens.
    let mut c = Conv::default();
    push(&mut c, Role::User, 40, &[], &[]);
    for k in 0..6 {
        let id = format!("call{k}");
        push(&mut c, Role::Assistant, 40, &[&id], &[]);
        push(&mut c, Role::Tool, 352, &[], &[&id]);
    }
    push(&mut c, Role::User, 40, &[], &[]);
    push(&mut c, Role::Assistant, 1550, &[], &[]);
    let l = Ledger::new(c.conv());
    let cut = cut(&l, DEFAULT_SPLIT).expect("a cut");
    assert!(cut.turn_seam);
    assert_eq!(cut.at, 13);
}

#[test]
fn a_session_with_no_seam_inside_has_no_cut() {
    let mut c = Conv::default();
    push(&mut c, Role::User, 400, &[], &[]);
    assert_eq!(cut(&Ledger::new(c.conv()), DEFAULT_SPLIT), None);
    // A call and its result are one unit: nothing lies between them.
    let mut c = Conv::default();
    push(&mut c, Role::User, 40, &[], &[]);
    push(&mut c, Role::Assistant, 400, &["a"], &[]);
    push(&mut c, Role::Tool, 400, &[], &["a"]);
    let cut = cut(&Ledger::new(c.conv()), DEFAULT_SPLIT).expect("before the call");
    assert_eq!(cut.at, 1);
}

#[test]
fn what_the_agent_no_longer_sees_is_not_counted() {
    let mut c = chat(10);
    // The first four turns are history an agent's own compaction took away.
    for e in &mut c.entries[..8] {
        e.flags |= flag::UNSEEN | flag::HISTORY;
    }
    let l = Ledger::new(c.conv());
    assert!(!counted(&l, 0) && counted(&l, 8));
    let cut = cut(&l, DEFAULT_SPLIT).expect("a cut");
    assert_eq!(cut.past_tokens + cut.future_tokens, 600);
    assert!(cut.at >= 8);
    // A tool's result is seen, but it is no use of what came before.
    let mut c = Conv::default();
    push(&mut c, Role::User, 40, &[], &[]);
    push(&mut c, Role::Assistant, 40, &["a"], &[]);
    push(&mut c, Role::Tool, 40, &[], &["a"]);
    let l = Ledger::new(c.conv());
    assert!(is_use(&l, 0) && is_use(&l, 1) && !is_use(&l, 2));
}

#[test]
fn found_counts_each_item_the_future_uses_that_the_past_holds_once() {
    let past = Said::new(
        "The user: the config is at /etc/app/config.toml and the ticket is OPS-4471.\n\
         Ran `cargo test --lib` which failed on port 9090.",
    );
    let future = [
        "Edit /etc/app/config.toml for OPS-4471",
        "and again /etc/app/config.toml; now on port 9090, and create src/new_module.rs",
    ];
    let f = found(&past, future);
    let texts: Vec<&str> = f.iter().map(|i| i.text.as_str()).collect();
    assert!(texts.contains(&"/etc/app/config.toml"), "{texts:?}");
    assert!(texts.contains(&"OPS-4471"), "{texts:?}");
    assert!(texts.iter().any(|t| t.contains("9090")), "{texts:?}");
    // Said again, counted once; new in the future, not found.
    assert_eq!(
        texts
            .iter()
            .filter(|t| **t == "/etc/app/config.toml")
            .count(),
        1
    );
    assert!(!texts.iter().any(|t| t.contains("new_module")), "{texts:?}");

    let view = Said::new("Summary: edited `/etc/app/config.toml`.");
    let k = kept(&f, &view);
    assert_eq!(k.kept, 1);
    assert_eq!(k.lost.len(), f.len() - 1);
    assert!(k.lost.iter().any(|i| i.text == "OPS-4471"));
    assert_eq!(k.by_class.get(&ItemClass::Path), Some(&1));
    assert!((k.share(f.len()) - 1.0 / f.len() as f64).abs() < 1e-9);
    // Everything kept by the verbatim past itself.
    assert_eq!(kept(&f, &past).kept, f.len());
    assert_eq!(kept(&[], &view).share(0), 1.0);
}

#[test]
fn items_match_as_the_audit_matches_them() {
    let cases = [
        ("the budget is $4,200", "we spent 4200", true),
        ("the budget is $4,200", "we spent 4300", false),
        ("see `src/main.rs`", "in src/main.rs:12", true),
        ("ticket CR-2291", "cr-2291 closed", true),
        ("port 9090", "port 8080", false),
    ];
    for (item_text, text, want) in cases {
        for it in audit::extract(item_text) {
            let said = Said::new(text);
            assert_eq!(
                said.has(&it),
                audit::mentions(text, &it),
                "{item_text:?} in {text:?}"
            );
            if it.class != ItemClass::Name {
                assert_eq!(said.has(&it), want, "{item_text:?} in {text:?}: {it:?}");
            }
        }
    }
}

#[test]
fn answers_are_found_normalised_at_word_boundaries() {
    let s = Said::new("The office picked is **Rotterdam**, from  March 14.");
    assert!(s.contains("rotterdam"));
    assert!(s.contains("\"March 14\""));
    assert!(!s.contains("Rotter"));
    assert!(!s.contains(""));
}

#[test]
fn a_spread_is_the_least_middle_and_greatest_figure() {
    assert_eq!(
        Spread::of(&[3.0, 1.0, 2.0]),
        Spread {
            min: 1.0,
            median: 2.0,
            max: 3.0
        }
    );
    assert_eq!(Spread::of(&[4.0, 1.0, 2.0, 3.0]).median, 2.5);
    assert_eq!(Spread::of(&[]).max, 0.0);
    assert!(Spread::of(&[0.5, 0.5]).is_single());
    assert!(!Spread::of(&[0.5, 0.6]).is_single());
}
