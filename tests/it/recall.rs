//! `mf recall` and its round trip with `expand --restore`.

use crate::util::*;

#[test]
fn recall_hides_covered_entries_and_restore_brings_them_back() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    let before = env.mf(&["recall", "incident-northwind.jsonl"]);
    assert_eq!(before.code, 0, "{before:?}");
    let before_lines = json_lines(&before.stdout);
    assert_eq!(before_lines.len(), 56);

    let out = env.mf_ok(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
        "--json",
    ]);
    let rec = &json_lines(&out.stdout)[0];
    let id = rec["summaries"][0]["id"].as_str().unwrap().to_string();
    let covered = last_covered(&env.path("incident-northwind.jsonl"));

    let after = json_lines(&env.mf_ok(&["recall", "incident-northwind.jsonl"]).stdout);
    // The summary first, then every entry it does not cover, in file order: the preamble, the tail.
    assert!(
        after[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("[summary of earlier turns"),
        "{}",
        after[0]
    );
    assert_eq!(after[0]["role"], "system");
    assert!(
        after[1]["content"]
            .as_str()
            .unwrap()
            .starts_with("You are Ops Helper")
    );
    assert_eq!(after.len(), 56 - covered.len() + 1);
    // None of the covered entries' contents appear; the tail's do.
    let text = env
        .mf_ok(&["recall", "incident-northwind.jsonl", "--format", "text"])
        .stdout;
    assert!(!text.contains("── turn 1 · user"), "{text}");
    assert!(
        text.contains("envs/demo-contoso.yaml"),
        "the last turn is verbatim"
    );
    for m in &after[2..] {
        assert!(
            m.get("mf").is_none() && m.get("id").is_none(),
            "recall lines are chat-shaped: {m}"
        );
    }
    // Recall lines carry only chat fields.
    assert!(after.iter().all(|m| m.get("ts").is_none()));

    let restore = env.mf(&["expand", "incident-northwind.jsonl", &id, "--restore"]);
    assert_eq!(restore.code, 0, "{restore:?}");
    assert!(restore.stderr.contains("retracted"), "{restore:?}");
    let restored = env.mf_ok(&["recall", "incident-northwind.jsonl"]);
    assert_eq!(
        restored.stdout, before.stdout,
        "recall after restore equals recall before compact"
    );

    // A retracted span can be folded again; the new summary gets a fresh id.
    let again = env.mf(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
        "--json",
    ]);
    let rec2 = &json_lines(&again.stdout)[0];
    assert_eq!(rec2["action"], "folded", "{again:?}");
    assert_eq!(
        rec2["summaries"][0]["id"].as_str().unwrap(),
        format!("{id}.2")
    );
}

#[test]
fn memory_and_text_formats() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    env.mf_ok(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
    ]);
    let mem = env
        .mf_ok(&["recall", "incident-northwind.jsonl", "--format", "memory"])
        .stdout;
    assert!(
        mem.starts_with("<memory source=\"turns:1-13\" role=\"summary\" id=\"msg-summary-1-13\">\n[summary of earlier turns 1–13"),
        "{mem}"
    );
    assert!(
        mem.contains(
            "</memory>\n<memory source=\"turn:0\" role=\"system\" id=\"m1\">\nYou are Ops Helper"
        ),
        "{mem}"
    );
    assert!(
        mem.contains("<memory source=\"turn:15\" role=\"assistant\""),
        "{mem}"
    );
    assert_eq!(
        mem.matches("<memory ").count(),
        mem.matches("</memory>").count()
    );
}

#[test]
fn budget_keeps_summaries_first_then_the_newest_entries() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    env.mf_ok(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
        "--recent",
        "20",
    ]);
    let all = json_lines(&env.mf_ok(&["recall", "incident-northwind.jsonl"]).stdout);
    // Room = 700 - 256 = 444 tokens ≈ 1,776 chars: preamble (~45 tokens) + summary, then what fits.
    let out = env.mf(&["recall", "incident-northwind.jsonl", "--budget", "700"]);
    assert_eq!(out.code, 0, "{out:?}");
    let some = json_lines(&out.stdout);
    assert!(
        some.len() < all.len() && some.len() >= 3,
        "{} of {}",
        some.len(),
        all.len()
    );
    assert_eq!(some[0], all[0]);
    assert_eq!(some[1], all[1], "the summary comes first");
    assert_eq!(some.last(), all.last(), "the newest entry is kept");
    // What is kept after the summary is a contiguous newest suffix.
    let tail = &some[2..];
    assert_eq!(tail, &all[all.len() - tail.len()..]);
    // A tool result never appears without its call.
    if let Some(first) = tail.first() {
        assert_ne!(first["role"], "tool", "{first}");
    }
    let total: usize = some
        .iter()
        .map(|m| m["content"].as_str().map_or(0, |c| c.chars().count()))
        .sum();
    assert!(total / 4 <= 1200 - 256 + 50, "{total} chars");

    // Too small a budget leaves no room at all.
    let none = env.mf(&["recall", "incident-northwind.jsonl", "--budget", "300"]);
    assert_eq!(none.code, 0);
    assert!(none.stdout.is_empty());
    assert!(none.stderr.contains("no room"), "{none:?}");
}

#[test]
fn recall_warns_about_an_incomplete_last_line_and_leaves_it_out() {
    let env = TestEnv::new();
    let s = conversation(2) + "{\"role\":\"user\",\"con";
    env.write("live.jsonl", &s);
    let out = env.mf(&["recall", "live.jsonl"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(json_lines(&out.stdout).len(), 5);
    assert!(
        out.stderr
            .contains("live.jsonl:6: the last line is incomplete"),
        "{out:?}"
    );
}

#[test]
fn closed_pipe_is_not_an_error() {
    let env = TestEnv::new();
    let mut big = String::new();
    for _ in 0..30 {
        big += &conversation(20);
    }
    env.write("big.jsonl", &big);
    let mut child = env
        .command(&["recall", "big.jsonl", "--format", "text"], &[])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // close the read end at once
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
