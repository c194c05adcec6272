//! Which summaries stand: nesting, retraction, forgeries, mf 0.1.0 coverage, the agent's own.

use super::*;

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
    c.claims[c.entries[i as usize].claim as usize].label =
        crate::fold::frame::plain_label(1, 9, 2, "m");
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
        let content = format!("{}\n\nshort", crate::fold::frame::plain_label(1, 2, 4, "m"));
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
fn an_agents_own_summary_stands_before_what_it_kept() {
    let mut c = convo(3);
    // The agent compacted: u1..a2 are history; its summary (the line after a3, where the agent
    // appends it) kept u3 on; the conversation went on after it.
    for id in ["u1", "a1", "u2", "a2"] {
        let i = c.idx(id) as usize;
        c.entries[i].flags |= flag::UNSEEN | flag::HISTORY;
    }
    let n = c.msg("N", Role::User);
    c.entries[n as usize].flags = flag::NATIVE_SUMMARY;
    c.placements.push((n, c.idx("u3")));
    c.msg("u4", Role::User);
    c.msg("a4", Role::Assistant);
    let l = Ledger::new(c.conv());
    assert_eq!(ids(&c, &l.view), ["s", "N", "u3", "a3", "u4", "a4"]);
    assert_eq!(
        *l.turns.iter().max().unwrap(),
        4,
        "history still counts in turns"
    );
    // A fold starts with the agent's summary, and mf honours it.
    assert_eq!(fold_ids(&c, &policy(1)), ["N", "u3", "a3"]);
    let items: Vec<Item> = ["N", "u3", "a3"].iter().map(|x| c.idx(x)).collect();
    c.fold("S", &items);
    let l = Ledger::new(c.conv());
    assert!(l.flags.is_empty(), "{:?}", l.flags);
    assert_eq!(ids(&c, &l.view), ["s", "S", "u4", "a4"]);
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

/// A user's command nothing answered, before the first prompt (Claude Code's `/clear`), leads
/// the first turn: it is no preamble, a fold takes it with that turn, and a fold that left it raw
/// before it (as mf's folds did before) is honoured still.
#[test]
fn a_leading_command_folds_with_the_first_turn() {
    let mut c = Conv::default();
    c.msg("s", Role::System);
    for id in ["cav", "clr", "out"] {
        let i = c.msg(id, Role::User);
        c.entries[i as usize].flags = flag::LEADS_TURN;
    }
    for n in 1..=3 {
        c.msg(&format!("u{n}"), Role::User);
        c.msg(&format!("a{n}"), Role::Assistant);
    }
    let l = Ledger::new(c.conv());
    assert_eq!(l.turns[c.idx("cav") as usize], 1);
    assert_eq!(
        l.turns[c.idx("u1") as usize],
        1,
        "the prompt is in the turn it leads"
    );
    assert_eq!(l.turns[c.idx("u2") as usize], 2);
    assert!(!l.is_preamble(c.idx("clr")));
    assert_eq!(
        fold_ids(&c, &policy(1)),
        ["cav", "clr", "out", "u1", "a1", "u2", "a2"]
    );
    let mut new = c.clone();
    let items: Vec<Item> = ["cav", "clr", "out", "u1", "a1", "u2", "a2"]
        .iter()
        .map(|x| new.idx(x))
        .collect();
    new.fold("S", &items);
    let l = Ledger::new(new.conv());
    assert!(l.flags.is_empty(), "{:?}", l.flags);
    assert_eq!(ids(&new, &l.view), ["s", "S", "u3", "a3"]);
    let items: Vec<Item> = ["u1", "a1", "u2", "a2"].iter().map(|x| c.idx(x)).collect();
    c.fold("S", &items);
    let l = Ledger::new(c.conv());
    assert!(l.flags.is_empty(), "{:?}", l.flags);
    // (In conversation order; a format that shows its summary first places it so.)
    assert_eq!(
        ids(&c, &l.view),
        ["s", "cav", "clr", "out", "S", "u3", "a3"]
    );
}
