//! `mf expand`: originals, nesting, restore, unknown ids.

use crate::util::*;

#[test]
fn expand_prints_the_original_lines_byte_for_byte() {
    let env = TestEnv::new();
    let f = env.copy_fixture("incident-northwind.jsonl");
    let original = String::from_utf8(read(&f)).unwrap();
    let rec = json_lines(
        &env.mf_ok(&[
            "compact",
            "incident-northwind.jsonl",
            "--model",
            "extractive",
            "--json",
        ])
        .stdout,
    )
    .remove(0);
    let id = rec["summaries"][0]["id"].as_str().unwrap();
    let out = env.mf(&["expand", "incident-northwind.jsonl", id]);
    assert_eq!(out.code, 0, "{out:?}");
    let n = rec["span"]["entryCount"].as_u64().unwrap() as usize;
    let expected: String = original
        .lines()
        .skip(1)
        .take(n)
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(out.stdout, expected);
}

#[test]
fn nested_fold_covers_the_first_summary_and_deep_expand_reaches_both_levels() {
    let env = TestEnv::new();
    env.write("c.jsonl", &conversation(12));
    let first = json_lines(
        &env.mf_ok(&[
            "compact",
            "c.jsonl",
            "--model",
            "extractive",
            "--min-retention",
            "0",
            "--json",
        ])
        .stdout,
    )
    .remove(0);
    assert_eq!(first["action"], "folded", "{first}");
    let s1 = first["summaries"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(s1, "msg-summary-1-9");

    // Append more turns, as an agent would.
    let mut more = String::new();
    for n in 13..=30 {
        more += &line(
            &format!("u{n}"),
            "user",
            &format!("Question {n}: and the museum pass for day {n}? Budget is €{n}0."),
        );
        more.push('\n');
        more += &line(
            &format!("a{n}"),
            "assistant",
            &format!("Answer {n}: the pass for day {n} costs €{n}5, ticket MP-{n}."),
        );
        more.push('\n');
    }
    let path = env.path("c.jsonl");
    let mut all = String::from_utf8(read(&path)).unwrap();
    all += &more;
    std::fs::write(&path, &all).unwrap();

    let second = json_lines(
        &env.mf_ok(&[
            "compact",
            "c.jsonl",
            "--model",
            "extractive",
            "--min-retention",
            "0",
            "--recent",
            "2",
            "--json",
        ])
        .stdout,
    )
    .remove(0);
    assert_eq!(second["action"], "folded", "{second}");
    let covered = last_covered(&env.path("c.jsonl"));
    assert!(
        covered.contains(&s1),
        "the second summary covers the first: {covered:?}"
    );
    assert_eq!(second["span"]["fromTurn"], 1);
    let s2 = second["summaries"][0]["id"].as_str().unwrap().to_string();
    assert_eq!(s2, "msg-summary-1-29");
    assert_eq!(
        second["span"]["originalCount"],
        18 + (covered.len() as u64 - 1)
    );

    // Recall shows only the outer summary.
    let recall = json_lines(&env.mf_ok(&["recall", "c.jsonl"]).stdout);
    let summaries: Vec<_> = recall
        .iter()
        .filter(|m| m["content"].as_str().unwrap().starts_with("[summary"))
        .collect();
    assert_eq!(summaries.len(), 1);
    assert!(
        summaries[0]["content"]
            .as_str()
            .unwrap()
            .contains("turns 1–29")
    );

    // One level: the first summary's line plus the newer originals.
    let shallow = json_lines(&env.mf_ok(&["expand", "c.jsonl", &s2]).stdout);
    assert_eq!(shallow[0]["id"], s1.as_str());
    // Deep: all originals of both levels, in order, and no summary.
    let deep = json_lines(&env.mf_ok(&["expand", "c.jsonl", &s2, "--deep"]).stdout);
    let ids: Vec<&str> = deep.iter().map(|m| m["id"].as_str().unwrap()).collect();
    let mut expected = Vec::new();
    for n in 1..=29 {
        expected.push(format!("u{n}"));
        expected.push(format!("a{n}"));
    }
    assert_eq!(ids, expected);

    // The inner summary cannot be retracted alone while the outer stands.
    let inner = env.mf(&["expand", "c.jsonl", &s1, "--restore"]);
    assert_eq!(inner.code, 1, "{inner:?}");
    assert!(inner.stderr.contains(&s2), "{inner:?}");
    // Retracting the outer one brings back the first summary and the newer turns.
    assert_eq!(env.mf(&["expand", "c.jsonl", &s2, "--restore"]).code, 0);
    let recall = json_lines(&env.mf_ok(&["recall", "c.jsonl"]).stdout);
    assert!(
        recall[0]["content"].as_str().unwrap().contains("turns 1–9"),
        "{}",
        recall[0]
    );
    assert_eq!(recall.len(), 1 + 1 + (60 - 18));
}

#[test]
fn unknown_id_lists_the_summaries() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    env.mf_ok(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
    ]);
    let out = env.mf(&["expand", "incident-northwind.jsonl", "msg-summary-9-9"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("no entry `msg-summary-9-9`"), "{out:?}");
    assert!(
        out.stderr
            .contains("msg-summary-1-13 (turns 1–13, standing)"),
        "{out:?}"
    );
    // An ordinary entry's id prints that entry (as `mf search` names it); it cannot be restored.
    let out = env.mf_ok(&["expand", "incident-northwind.jsonl", "m2"]);
    assert_eq!(json_lines(&out.stdout).len(), 1, "{out:?}");
    assert_eq!(json_lines(&out.stdout)[0]["id"], "m2");
    let out = env.mf(&["expand", "incident-northwind.jsonl", "m2", "--restore"]);
    assert_eq!(out.code, 1);
    assert!(out.stderr.contains("ordinary message"), "{out:?}");
}

#[test]
fn restore_twice_is_harmless() {
    let env = TestEnv::new();
    let f = env.copy_fixture("incident-northwind.jsonl");
    env.mf_ok(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
    ]);
    assert_eq!(
        env.mf(&[
            "expand",
            "incident-northwind.jsonl",
            "msg-summary-1-13",
            "--restore"
        ])
        .code,
        0
    );
    let size = read(&f).len();
    let again = env.mf(&[
        "expand",
        "incident-northwind.jsonl",
        "msg-summary-1-13",
        "--restore",
    ]);
    assert_eq!(again.code, 0, "{again:?}");
    assert!(again.stderr.contains("already retracted"), "{again:?}");
    assert_eq!(read(&f).len(), size);
}
