//! `mf explain`: history, look-alikes, edited summaries, and what compact would do now.

use crate::util::*;

#[test]
fn look_alike_and_edited_summary_are_ordinary_entries_and_flagged() {
    let env = TestEnv::new();
    let f = env.copy_fixture("incident-northwind.jsonl");
    env.mf_ok(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
    ]);
    let lines: Vec<String> = String::from_utf8(read(&f))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let summary_line = lines
        .iter()
        .find(|l| l.starts_with("{\"mf\":"))
        .unwrap()
        .clone();
    let mut summary: serde_json::Value = serde_json::from_str(&summary_line).unwrap();

    // File A: the summary's content edited after writing (fingerprint no longer matches).
    let mut edited = summary.clone();
    let c = edited["content"]
        .as_str()
        .unwrap()
        .replace("Marcus Webb", "Someone Else");
    edited["content"] = c.into();
    let mut a: Vec<String> = lines
        .iter()
        .filter(|l| !l.starts_with("{\"mf\":"))
        .cloned()
        .collect();
    a.push(edited.to_string());
    env.write("edited.jsonl", &(a.join("\n") + "\n"));

    // File B: a look-alike: mf's label text, no coverage record.
    summary.as_object_mut().unwrap().remove("mf");
    summary["id"] = "fake-1".into();
    let mut b: Vec<String> = lines
        .iter()
        .filter(|l| !l.starts_with("{\"mf\":"))
        .cloned()
        .collect();
    b.push(summary.to_string());
    env.write("lookalike.jsonl", &(b.join("\n") + "\n"));

    for (file, needle, line) in [
        ("edited.jsonl", "does not match its fingerprint", 57),
        ("lookalike.jsonl", "no coverage record", 57),
    ] {
        // Recall treats the line as an ordinary entry: every original is there, and so is the line.
        let recall = json_lines(&env.mf_ok(&["recall", file]).stdout);
        assert_eq!(
            recall.len(),
            57,
            "{file}: all 56 originals plus the ordinary line"
        );
        let ex = env.mf(&["explain", file, "--json"]);
        assert_eq!(ex.code, 0, "{ex:?}");
        let v: serde_json::Value = serde_json::from_str(&ex.stdout).unwrap();
        assert_eq!(v["summaries"].as_array().unwrap().len(), 0, "{file}");
        let flags = v["flags"].as_array().unwrap();
        assert_eq!(flags.len(), 1, "{file}: {flags:?}");
        assert!(
            flags[0]["why"].as_str().unwrap().contains(needle),
            "{file}: {flags:?}"
        );
        assert_eq!(flags[0]["line"], line);
        let table = env.mf_ok(&["explain", file]).stdout;
        assert!(table.contains(needle), "{table}");
        // Expanding it is refused with the reason.
        let id = flags[0]["id"].as_str().unwrap();
        let exp = env.mf(&["expand", file, id]);
        assert_eq!(exp.code, 1);
        assert!(exp.stderr.contains("not a valid summary"), "{exp:?}");
    }
}

#[test]
fn explain_shows_history_and_the_plan_without_writing() {
    let env = TestEnv::new();
    let f = env.copy_fixture("incident-northwind.jsonl");
    let fresh = env.mf_ok(&["explain", "incident-northwind.jsonl", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&fresh.stdout).unwrap();
    assert_eq!(v["now"]["action"], "planned");
    assert_eq!(v["entries"], 56);
    assert_eq!(v["turns"], 15);
    assert!(v["history"].as_array().unwrap().is_empty());

    env.mf_ok(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
    ]);
    env.mf_ok(&[
        "expand",
        "incident-northwind.jsonl",
        "msg-summary-1-13",
        "--restore",
    ]);
    let size = read(&f).len();
    let out = env.mf(&["explain", "incident-northwind.jsonl", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let kinds: Vec<&str> = v["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["fold", "retract"]);
    assert_eq!(v["summaries"][0]["state"], "retracted");
    assert_eq!(
        v["now"]["action"], "planned",
        "after a retraction compact would fold again"
    );
    assert_eq!(read(&f).len(), size, "explain never writes");

    let focus = env.mf_ok(&[
        "explain",
        "incident-northwind.jsonl",
        "msg-summary-1-13",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&focus.stdout).unwrap();
    assert_eq!(v["focus"]["kind"], "summary");
    assert_eq!(v["history"].as_array().unwrap().len(), 2);

    let table = env.mf(&["explain", "incident-northwind.jsonl"]);
    assert!(
        table.stdout.contains("retracted msg-summary-1-13"),
        "{table:?}"
    );
    assert!(
        table.stdout.contains("folded → msg-summary-1-13"),
        "{table:?}"
    );
}

#[test]
fn explain_names_what_hides_a_message() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    env.mf_ok(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
    ]);
    let out = env.mf_ok(&["explain", "incident-northwind.jsonl", "m5", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["focus"]["kind"], "message");
    assert_eq!(v["focus"]["hiddenBy"], "msg-summary-1-13");
    assert_eq!(v["summaries"].as_array().unwrap().len(), 1);
}

#[test]
fn explain_an_id_shows_the_declines_that_named_it_and_nothing_else() {
    let env = TestEnv::new();
    let mut s = conversation(12);
    s += &serde_json::json!({"mfRecord": "decline", "atMs": 5, "reason": "not-smaller", "model": "m",
        "fromTurn": 1, "toTurn": 2, "spanIds": ["u1", "a1", "u2", "a2"], "spanChars": 10, "summaryChars": 20,
        "detail": "too long"}).to_string();
    s.push('\n');
    s += &serde_json::json!({"mfRecord": "decline", "atMs": 6, "reason": "summarizer-failed", "model": "m",
        "fromTurn": 5, "toTurn": 6, "spanIds": ["u5", "a5", "u6", "a6"], "spanChars": 10, "detail": "outage"}).to_string();
    s.push('\n');
    env.write("d.jsonl", &s);
    let out = env.mf(&["explain", "d.jsonl", "u1", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let history = v["history"].as_array().unwrap();
    assert_eq!(history.len(), 1, "{history:?}");
    assert_eq!(history[0]["reason"], "not-smaller");
    assert_eq!(history[0]["line"], 26);
    let all = env.mf_ok(&["explain", "d.jsonl", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&all.stdout).unwrap();
    assert_eq!(v["history"].as_array().unwrap().len(), 2);
}
