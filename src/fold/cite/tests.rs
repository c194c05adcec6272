//! Unit tests of citation parsing and candidate review: every rejection reason, nesting and
//! cycles, consumption with tool units, and the bound on calls.

use super::*;

/// An offer of `n` entries `m1…mN` (400 chars each, one turn each); `m3` (a tool call) and
/// `m4` (its result) are one unit.
fn offer(n: usize) -> Offer {
    let entries = (1..=n)
        .map(|k| Citable {
            handle: format!("m{k}"),
            line: k as u32 + 1,
            chars: 400,
            unit: if k == 4 { 3 } else { k as u32 },
            from_turn: k as u64,
            to_turn: k as u64,
            leaves: 1,
        })
        .collect();
    Offer {
        entries,
        model: "m".into(),
        reach: frame::Reach::Tool,
    }
}

fn nowhere(_: &str) -> Option<u32> {
    None
}

fn ok(_: &Preview<'_>) -> Result<(), crate::fold::audit::Faults> {
    Ok(())
}

/// One reply reviewed on a fresh review; the review afterwards.
fn review_one<'o>(o: &'o Offer, reply: &str) -> Review<'o> {
    let mut r = Review::new(o);
    r.begin_call();
    r.review(reply, &nowhere, &mut ok);
    r
}

fn reasons(r: &Review<'_>) -> Vec<(String, &'static str)> {
    r.rejected
        .iter()
        .map(|x| (x.name.clone(), x.reason.code()))
        .collect()
}

#[test]
fn handles_are_clean_unique_ids_else_lines() {
    assert_eq!(handle("m7", true, 9), "m7");
    assert_eq!(handle("line-12", true, 12), "line-12");
    assert_eq!(handle("toolu_01ABC", true, 3), "toolu_01ABC");
    assert_eq!(
        handle("m7", false, 9),
        "@9",
        "a repeated id is cited by its line"
    );
    assert_eq!(handle("a b", true, 4), "@4");
    assert_eq!(handle("x,y", true, 4), "@4");
    assert_eq!(handle("[m]", true, 4), "@4");
    assert_eq!(
        handle("#1", true, 4),
        "@4",
        "never mistaken for a candidate name"
    );
    assert_eq!(handle("@3", true, 4), "@4");
    assert_eq!(handle("", true, 4), "@4");
}

#[test]
fn replies_split_into_named_candidates() {
    let c = split_reply("Here you go.\n=== #1\nA [m1, m2].\n\n=== #2 ===\nB [m5, m6].\n");
    assert_eq!(c.len(), 2);
    assert_eq!(c[0].name.as_deref(), Some("#1"));
    assert_eq!(c[0].text, "A [m1, m2].");
    assert_eq!(c[1].name.as_deref(), Some("#2"));
    let one = split_reply("Only one [m1, m2].");
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].name, None);
    assert!(split_reply("NONE").is_empty());
    assert!(split_reply(" none. ").is_empty());
    assert!(split_reply("  \n").is_empty());
}

#[test]
fn citations_parse_or_say_why_not() {
    assert_eq!(
        citations("a [m1] b [m2, @7].").unwrap(),
        vec![vec!["m1".to_string()], vec!["m2".into(), "@7".into()]]
    );
    assert!(matches!(
        citations("a [m1, b"),
        Err(CiteError::Unclosed { .. })
    ));
    assert!(matches!(
        citations("a [m1\n] b"),
        Err(CiteError::Unclosed { .. })
    ));
    assert!(matches!(
        citations("a [m1 [m2]]"),
        Err(CiteError::Nested { .. })
    ));
    assert!(matches!(
        citations("a [m1, ]"),
        Err(CiteError::Empty { .. })
    ));
    assert!(matches!(citations("a []"), Err(CiteError::Empty { .. })));
    assert!(matches!(
        citations("a m1] b"),
        Err(CiteError::StrayClose { .. })
    ));
}

#[test]
fn strip_and_rename_touch_only_citations() {
    assert_eq!(
        strip("Port is 9090 [m4].\nHeading:\nx [m1, m2], y"),
        "Port is 9090.\nHeading:\nx, y"
    );
    let names: HashMap<String, String> = [("#1".to_string(), "msg-summary-1-3".to_string())]
        .into_iter()
        .collect();
    assert_eq!(
        rename("see #1 [#1, m5] and [m6]", &names),
        "see #1 [msg-summary-1-3, m5] and [m6]"
    );
}

#[test]
fn valid_candidates_consume_exactly_what_they_cite() {
    let o = offer(8);
    let r = review_one(
        &o,
        "=== #1\nState:\n- The deploy cut the pool [m1, m2].\n=== #2\nThe cache fell [m6] and was fixed [m8].",
    );
    assert!(r.rejected.is_empty(), "{:?}", r.rejected);
    assert_eq!(r.accepted.len(), 2);
    assert_eq!(r.accepted[0].entries, vec![0, 1]);
    // Non-contiguous: m7 between m6 and m8 stays verbatim.
    assert_eq!(r.accepted[1].entries, vec![5, 7]);
    assert_eq!(r.unconsumed(), vec![2, 3, 4, 6]);
    assert_eq!((r.accepted[1].from_turn, r.accepted[1].to_turn), (6, 8));
    assert!(!r.may_ask(), "nothing rejected: no correction call");
}

#[test]
fn a_tool_call_brings_its_results() {
    let o = offer(8);
    let r = review_one(&o, "Called it [m3] and said so [m5].");
    assert!(r.rejected.is_empty(), "{:?}", r.rejected);
    assert_eq!(r.accepted[0].entries, vec![2, 3, 4]);
    assert_eq!(r.accepted[0].sources, vec![2, 4]);
}

#[test]
fn each_rejection_reason() {
    let o = offer(8);
    let cases: &[(&str, &str)] = &[
        ("A [m1, m2", "malformed-citation"),
        ("A [m1, , m2].", "malformed-citation"),
        ("Nothing cited at all.", "uncited"),
        ("A [m1, m2].\nAn uncited claim.", "uncited"),
        ("A [m1, m99].", "unknown-id"),
        ("A [m1] and [image].", "unknown-id"),
        ("A [m1].", "single-source"),
        ("A [m1, m1] twice.", "single-source"),
        ("A [#1, m2].", "self-citation"),
        ("A [m1, m2] per [#7].", "unknown-id"),
    ];
    for (text, code) in cases {
        let r = review_one(&o, &format!("=== #1\n{text}"));
        assert_eq!(reasons(&r), vec![("#1".to_string(), *code)], "{text}");
        assert!(r.accepted.is_empty());
        assert!(
            !r.rejected[0].reason.to_string().is_empty(),
            "a reason in words"
        );
    }
    // Not in the span: the id exists elsewhere in the file.
    let mut r = Review::new(&o);
    r.begin_call();
    r.review("A [m1, m2, m0].", &|h| (h == "m0").then_some(1), &mut ok);
    assert_eq!(
        r.rejected[0].reason,
        Rejection::NotInSpan {
            id: "m0".into(),
            line: 1
        }
    );
    assert!(
        r.rejected[0]
            .reason
            .to_string()
            .contains("not in this excerpt")
    );
}

#[test]
fn too_long_counts_the_label_against_what_it_consumes() {
    let o = offer(8);
    // Two entries: 800 chars, 200 tokens; at most 160 tokens with the label.
    let label = frame::plain_label(1, 2, 2, "m").chars().count();
    let room = 160 * 4 - label - 2;
    let fits = format!("{} [m1, m2]", "x".repeat(room - 10));
    let r = review_one(&o, &fits);
    assert!(r.rejected.is_empty(), "{:?}", r.rejected);
    let over = format!("{} [m1, m2]", "x".repeat(room + 10));
    let r = review_one(&o, &over);
    match &r.rejected[0].reason {
        Rejection::TooLong {
            tokens,
            consumed,
            limit,
        } => {
            assert_eq!((*consumed, *limit), (200, 160));
            assert!(*tokens > 160);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(r.rejected[0].reason.code(), "too-long");
}

#[test]
fn an_entry_taken_by_an_earlier_summary_is_not_a_new_source() {
    let o = offer(8);
    let r = review_one(&o, "=== #1\nA [m1, m2].\n=== #2\nB again [m2, m5].");
    assert_eq!(reasons(&r), vec![("#2".to_string(), "single-source")]);
    match &r.rejected[0].reason {
        Rejection::TooFewSources { new } => assert_eq!(new, &vec!["m5".to_string()]),
        other => panic!("{other:?}"),
    }
    assert_eq!(r.accepted[0].entries, vec![0, 1]);
}

#[test]
fn cycles_and_self_citations_are_rejected_with_their_path() {
    let o = offer(8);
    let r = review_one(
        &o,
        "=== #1\nA [m1, #2].\n=== #2\nB [m2, #1].\n=== #3\nC [m5, m6].",
    );
    let mut got = reasons(&r);
    got.sort();
    assert_eq!(
        got,
        vec![("#1".to_string(), "cycle"), ("#2".to_string(), "cycle")]
    );
    let one = r.rejected.iter().find(|x| x.name == "#1").unwrap();
    assert_eq!(
        one.reason,
        Rejection::Cycle {
            path: vec!["#1".into(), "#2".into(), "#1".into()]
        }
    );
    assert_eq!(
        r.accepted.len(),
        1,
        "the candidate outside the cycle stands"
    );
    // A longer cycle, and a candidate that cites a member of it.
    let r = review_one(
        &o,
        "=== #1\nA [m1, #3].\n=== #2\nB [m2, #1].\n=== #3\nC [m5, #2].\n=== #4\nD [m6, m7, #1].",
    );
    let c1 = r.rejected.iter().find(|x| x.name == "#1").unwrap();
    assert_eq!(
        c1.reason,
        Rejection::Cycle {
            path: vec!["#1".into(), "#3".into(), "#2".into(), "#1".into()]
        }
    );
    let c4 = r.rejected.iter().find(|x| x.name == "#4").unwrap();
    assert_eq!(c4.reason, Rejection::CitesRejected { name: "#1".into() });
    // Citing itself.
    let r = review_one(&o, "=== #5\nE [m1, m2, #5].");
    assert_eq!(
        r.rejected[0].reason,
        Rejection::SelfCitation { name: "#5".into() }
    );
}

#[test]
fn a_summary_may_nest_another_of_the_same_fold() {
    let o = offer(8);
    // #2 comes first in the reply but nests #1: it is checked after it.
    let r = review_one(
        &o,
        "=== #2\nAll of it [#1, m5, m6].\n=== #1\nThe start [m1, m2].",
    );
    assert!(r.rejected.is_empty(), "{:?}", r.rejected);
    let one = r.accepted.iter().position(|a| a.name == "#1").unwrap();
    let two = r.accepted.iter().position(|a| a.name == "#2").unwrap();
    assert_eq!(r.accepted[two].nested, vec![one]);
    assert_eq!(r.accepted[one].nested_in, Some(two));
    assert_eq!((r.accepted[one].level, r.accepted[two].level), (0, 1));
    assert_eq!(r.accepted[two].leaves, 4);
    assert_eq!(
        r.accepted[two].consumed_chars,
        800 + r.accepted[one].chars,
        "a nested summary counts at its own length"
    );
    assert_eq!(r.by_level(), vec![vec![one], vec![two]]);
    // A nested one counts as a source; a second nesting of it does not.
    let r = review_one(
        &o,
        "=== #1\nA [m1, m2].\n=== #2\nB [#1, m5].\n=== #3\nC [#1, m6].",
    );
    assert_eq!(reasons(&r), vec![("#3".to_string(), "single-source")]);
}

#[test]
fn names_are_not_reused_and_unnamed_ones_get_free_names() {
    let o = offer(8);
    let r = review_one(&o, "=== #1\nA [m1, m2].\n=== #1\nB [m5, m6].");
    assert_eq!(reasons(&r), vec![("#1".to_string(), "name-taken")]);
    let mut r = Review::new(&o);
    r.begin_call();
    r.review("=== #1\nA [m1, m2].\n=== #2\nB [m5].", &nowhere, &mut ok);
    r.begin_call();
    // An unnamed candidate after #1 was accepted: it becomes #2 (free again after rejection).
    r.review("B [m5, m6].", &nowhere, &mut ok);
    assert_eq!(r.accepted.len(), 2);
    assert_eq!(r.accepted[1].name, "#2");
    assert_eq!(r.accepted[1].round, 2);
    r.begin_call();
    r.review(
        "=== #1\nC [m7, m8].\n=== #3\nAll of it [#1, #2].",
        &nowhere,
        &mut ok,
    );
    assert_eq!(r.rejected.last().unwrap().reason.code(), "name-taken");
    // #3 nests the accepted #1 and #2, not the rejected newcomer that reused the name.
    let three = r.accepted.last().unwrap();
    assert_eq!(
        (three.name.as_str(), three.nested.clone()),
        ("#3", vec![0, 1])
    );
}

#[test]
fn the_judge_has_the_last_word() {
    let o = offer(8);
    let mut r = Review::new(&o);
    r.begin_call();
    let mut seen = Vec::new();
    r.review(
        "=== #1\nA [m1, m2].\n=== #2\nB [m5, m6].",
        &nowhere,
        &mut |p: &Preview<'_>| {
            seen.push((p.name.to_string(), p.entries.to_vec()));
            if p.name == "#2" {
                Err(crate::fold::audit::Faults(vec![
                    crate::fold::audit::Fault::Lossy {
                        kept: 1,
                        found: 4,
                        retention: 0.25,
                        min: 0.5,
                        missing: vec!["m6".into()],
                    },
                ]))
            } else {
                Ok(())
            }
        },
    );
    assert_eq!(
        seen,
        vec![
            ("#1".to_string(), vec![0, 1]),
            ("#2".to_string(), vec![4, 5])
        ]
    );
    assert_eq!(reasons(&r), vec![("#2".to_string(), "lossy")]);
    assert_eq!(
        r.unconsumed(),
        vec![2, 3, 4, 5, 6, 7],
        "a declined one consumes nothing"
    );
}

#[test]
fn feedback_names_what_stands_what_was_rejected_and_why() {
    let o = offer(8);
    let r = review_one(&o, "=== #1\nA [m1, m2].\n=== #2\nB [m5, m99].");
    let f = r.feedback().expect("feedback after a rejection");
    assert!(f.contains("#1 covers m1, m2"), "{f}");
    assert!(
        f.contains("#2: it cites `m99`, which is not an entry"),
        "{f}"
    );
    assert!(
        f.contains("B [m5, m99]."),
        "the rejected text is shown: {f}"
    );
    assert!(
        f.contains("Entries no summary covers yet: m3, m4, m5"),
        "{f}"
    );
    assert!(f.contains("names #1 are taken"), "{f}");
    let clean = review_one(&o, "A [m1, m2].");
    assert_eq!(clean.feedback(), None);
}

/// Drive a fold as `compact` does: ask while `may_ask`, review each reply.
fn drive<'o>(o: &'o Offer, mut reply: impl FnMut(usize, Option<String>) -> String) -> Review<'o> {
    let mut r = Review::new(o);
    while r.may_ask() {
        let round = r.begin_call();
        let text = reply(round, r.feedback());
        r.review(&text, &nowhere, &mut ok);
    }
    r
}

#[test]
fn corrections_stop_at_the_bound() {
    let o = offer(8);
    let mut asked = 0;
    let r = drive(&o, |round, feedback| {
        asked += 1;
        if round > 1 {
            let f = feedback.expect("each correction carries the reason");
            assert!(
                f.contains("#1: it draws on 1 entry not already summarized (m1)"),
                "{f}"
            );
        }
        "=== #1\nOnly one source [m1].".into()
    });
    assert_eq!(asked, MAX_CALLS);
    assert_eq!(r.calls, MAX_CALLS);
    assert_eq!(r.rejected.len(), MAX_CALLS);
    assert!(r.accepted.is_empty());
    assert!(!r.may_ask());
    assert!(
        r.rejection_summary()
            .starts_with("15 candidates in 15 calls, 15 rejected (single-source 15)"),
        "{}",
        r.rejection_summary()
    );
}

#[test]
fn corrections_stop_when_nothing_is_rejected_or_the_model_has_nothing_more() {
    let o = offer(8);
    // Rejected, then corrected: two calls.
    let r = drive(&o, |round, feedback| match round {
        1 => "=== #1\nA [m1, m2].\n=== #2\nB [m5].".into(),
        _ => {
            let f = feedback.expect("the reason is sent back");
            assert!(
                f.contains("#2: it draws on 1 entry not already summarized (m5)"),
                "{f}"
            );
            "=== #2\nB [m5, m6].".into()
        }
    });
    assert_eq!(r.calls, 2);
    assert_eq!(r.accepted.len(), 2);
    // Rejected, then NONE: two calls, the first candidate stands.
    let r = drive(&o, |round, _| match round {
        1 => "=== #1\nA [m1, m2].\n=== #2\nB [m5].".into(),
        _ => "NONE".into(),
    });
    assert_eq!(r.calls, 2);
    assert_eq!(r.accepted.len(), 1);
    // NONE at once: one call, nothing.
    let r = drive(&o, |_, _| "NONE".into());
    assert_eq!((r.calls, r.accepted.len(), r.rejected.len()), (1, 0, 0));
}
