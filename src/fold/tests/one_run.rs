//! An agent that shows one unbroken run of entries after its summaries (pi): every plan, and
//! every prefix of its chunks (what compact writes when a chunk is declined), leaves a view the
//! agent can show; what stops a fold is said.

use super::*;
use crate::fold::plan::KeptFor;

/// The law: after folding `folded`, what stays in view besides summaries is one unbroken run to
/// the end of the view — or the prompt of a turn folded inside, then (after that turn's folded
/// entries, none opening a turn) such a run.
fn assert_one_run(l: &Ledger<'_>, folded: &std::collections::HashSet<Item>, what: &str) {
    let summary = |it: Item| {
        l.kind(it) == ItemKind::Summary
            || l.conv.entries[it as usize].has(crate::entry::flag::NATIVE_SUMMARY)
    };
    let opens = |it: Item| match l.kind(it) {
        ItemKind::Message => l.starts_turn(it as usize),
        ItemKind::Stub => false,
        ItemKind::Summary => l.starts_turn(l.summaries[&it].first_leaf as usize),
    };
    let view = &l.view;
    let Some(p) = view
        .iter()
        .position(|it| !folded.contains(it) && !summary(*it))
    else {
        return;
    };
    let mut q = p + 1;
    if opens(view[p]) {
        while q < view.len() && (folded.contains(&view[q]) || summary(view[q])) && !opens(view[q]) {
            q += 1;
        }
    }
    for &it in &view[q..] {
        assert!(
            !folded.contains(&it) && !summary(it),
            "{what}: item {it} folds (or stands as a summary) after item {} stays verbatim: view {view:?}, folded {folded:?}",
            view[p]
        );
    }
}

/// A random agent session with no preamble (as pi's: its prompt is not an entry).
fn session(rng: &mut fastrand::Rng) -> Conv {
    let mut c = Conv {
        one_run: true,
        ..Conv::default()
    };
    for t in 0..rng.usize(1..10) {
        c.push(&format!("u{t}"), Role::User, rng.u32(10..600), &[], &[]);
        for k in 0..rng.usize(0..10) {
            if rng.u8(0..3) == 0 {
                c.push(
                    &format!("a{t}-{k}"),
                    Role::Assistant,
                    rng.u32(10..900),
                    &[],
                    &[],
                );
                continue;
            }
            let call = format!("k{t}-{k}");
            c.push(&format!("c{t}-{k}"), Role::Assistant, 60, &[&call], &[]);
            let size = if rng.u8(0..10) == 0 {
                20_000
            } else {
                rng.u32(50..2500)
            };
            c.push(&format!("r{t}-{k}"), Role::Tool, size, &[], &[&call]);
        }
        c.push(
            &format!("z{t}"),
            Role::Assistant,
            rng.u32(10..600),
            &[],
            &[],
        );
    }
    c
}

#[test]
fn on_an_agent_that_shows_one_run_every_plan_and_every_prefix_of_it_can_be_shown() {
    let mut rng = fastrand::Rng::with_seed(0x0121);
    let (mut checked, mut cut, mut chunked) = (0, 0, 0);
    for case in 0..600 {
        let mut c = session(&mut rng);
        // Sometimes an earlier fold stands, made as mf makes it.
        if rng.bool() {
            let l = Ledger::new(c.conv());
            let p = FoldPolicy {
                recent: rng.usize(2..10),
                min_fold: 1,
                ..policy(2)
            };
            if let Decision::Fold(plan) = plan(&l, &p, "m") {
                for (k, s) in plan.spans.iter().enumerate() {
                    c.fold_span(&format!("E{k}"), s);
                }
            }
        }
        let recent = rng.usize(1..8);
        let p = FoldPolicy {
            recent,
            recent_tokens: if rng.bool() {
                FoldPolicy::default().recent_tokens
            } else {
                rng.usize(0..1500)
            },
            size: (rng.u8(0..4) == 0).then(|| recent + rng.usize(1..30)),
            trigger: 0,
            min_fold: 1,
            max_span_tokens: rng.bool().then(|| rng.usize(800..4000)),
            protect_user: rng.u8(0..5) == 0,
            ..FoldPolicy::default()
        };
        let l = Ledger::new(c.conv());
        let what = format!("case {case}");
        let plan = match plan(&l, &p, "m") {
            Decision::Fold(plan) => plan,
            Decision::Skip(_) => continue,
        };
        checked += 1;
        chunked += usize::from(plan.spans.len() > 1);
        cut += usize::from(
            plan.notes
                .iter()
                .any(|n| matches!(n, PlanNote::OneRun { .. })),
        );
        assert_lawful_turns(&l, &plan, &what);
        for k in 1..=plan.spans.len() {
            let folded: std::collections::HashSet<Item> = plan.spans[..k]
                .iter()
                .flat_map(|s| s.items.iter().copied())
                .collect();
            assert_one_run(&l, &folded, &format!("{what}, the first {k} chunks"));
        }
        // Written as mf writes them, the chunks are honoured, and what an agent reading the file
        // anew is shown is the same kind of view.
        let mut w = c.clone();
        for (k, s) in plan.spans.iter().enumerate() {
            w.fold_span(&format!("S{k}"), s);
        }
        let lw = Ledger::new(w.conv());
        assert!(lw.flags.is_empty(), "{what}: {:?}", lw.flags);
        assert_one_run(&lw, &Default::default(), &format!("{what}, written"));
    }
    assert!(checked > 200, "only {checked} plans checked");
    assert!(chunked > 50 && cut > 20, "{chunked} chunked, {cut} cut");
}

/// What keeps an entry verbatim in a fold's reach stops it there, and is named.
#[test]
fn a_fold_on_an_agent_that_shows_one_run_stops_where_something_stays_verbatim() {
    let mut c = Conv {
        one_run: true,
        ..Conv::default()
    };
    for n in 1..=6 {
        c.push(&format!("u{n}"), Role::User, 400, &[], &[]);
        c.push(&format!("a{n}"), Role::Assistant, 2000, &[], &[]);
    }
    let l = Ledger::new(c.conv());
    // --protect user: the first prompt stays, so nothing before it can fold.
    let p = FoldPolicy {
        protect_user: true,
        ..policy(2)
    };
    match plan(&l, &p, "m") {
        Decision::Skip(s) => assert_eq!(
            s.reason,
            SkipReason::OneRun {
                turn: 1,
                why: KeptFor::Protected
            }
        ),
        Decision::Fold(f) => panic!("folded {:?}", f.whole.items),
    }
    // --size: the oldest turns stay outside the window, before what would fold.
    let p = FoldPolicy {
        size: Some(6),
        ..policy(2)
    };
    match plan(&l, &p, "m") {
        Decision::Skip(s) => assert_eq!(
            s.reason,
            SkipReason::OneRun {
                turn: 1,
                why: KeptFor::Window
            }
        ),
        Decision::Fold(f) => panic!("folded {:?}", f.whole.items),
    }
    // The same plans on an agent that shows what stays in any order fold.
    let mut any = c.clone();
    any.one_run = false;
    let la = Ledger::new(any.conv());
    assert!(matches!(plan(&la, &p, "m"), Decision::Fold(_)));
    // A chunk declined before stops the chunks after it: only those before it are asked.
    let p = FoldPolicy {
        max_span_tokens: Some(1500),
        min_fold: 1,
        ..policy(2)
    };
    let Decision::Fold(first) = plan(&l, &p, "m") else {
        panic!("no fold")
    };
    assert!(first.spans.len() >= 3, "{:?}", first.spans.len());
    let mut d = c.clone();
    decline(&mut d, &first.spans[1], DeclineReason::Lossy, "m");
    let ld = Ledger::new(d.conv());
    let Decision::Fold(again) = plan(&ld, &p, "m") else {
        panic!("no fold")
    };
    assert_eq!(again.spans, first.spans[..1].to_vec());
    assert!(again.notes.contains(&PlanNote::OneRun {
        turn: first.spans[1].from_turn,
        why: KeptFor::Declined,
        chunks: first.spans.len() - 2,
        from_turn: first.spans[2].from_turn,
    }));
    // Declined first: nothing before it, and the skip says it was declined.
    let mut d = c.clone();
    decline(&mut d, &first.spans[0], DeclineReason::Lossy, "m");
    let ld = Ledger::new(d.conv());
    match plan(&ld, &p, "m") {
        Decision::Skip(s) => assert!(
            matches!(s.reason, SkipReason::DeclinedBefore { .. }),
            "{:?}",
            s.reason
        ),
        Decision::Fold(f) => panic!("folded {:?}", f.whole.items),
    }
}
