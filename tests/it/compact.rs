//! `mf compact` on real files.

use crate::util::*;

#[test]
fn compact_appends_one_summary_and_keeps_every_original_byte() {
    let (env, f, before) = incident();
    let out = env.mf(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    assert_eq!(rec["action"], "folded", "{out:?}");
    assert_eq!(rec["written"], true);
    assert_eq!(rec["linesAppended"], 1);

    let after = read(&f);
    assert_eq!(
        sha(&after[..before.len()]),
        sha(&before),
        "original bytes changed"
    );
    let new: Vec<_> = json_lines(std::str::from_utf8(&after[before.len()..]).unwrap());
    assert_eq!(new.len(), 1, "one summary line, which is its own record");
    let summary = &new[0];
    assert!(
        std::str::from_utf8(&after[before.len()..])
            .unwrap()
            .starts_with("{\"mf\":{\"v\":2,\"kind\":\"summary\""),
        "every line mf writes begins with its prefix"
    );
    assert_eq!(summary["role"], "system");
    let id = summary["id"].as_str().unwrap();
    assert!(id.starts_with("msg-summary-1-"), "{id}");
    let cov = &summary["mf"]["coverage"];
    assert_eq!(cov["model"], "extractive");
    // Coverage names the covered lines and a digest of their bytes.
    let ranges = cov["lines"].as_array().unwrap();
    assert_eq!(ranges.len(), 1, "{cov}");
    assert_eq!(ranges[0], serde_json::json!([2, 50]), "{cov}");
    assert_eq!(cov["entryCount"], 49);
    assert_eq!(cov["digest"].as_str().unwrap().len(), 32);
    assert_eq!(cov["tailLine"], 51);
    assert_eq!(summary["turn"], cov["toTurn"]);
    let content = summary["content"].as_str().unwrap();
    assert!(
        content.starts_with("[summary of earlier turns 1–"),
        "{content}"
    );
    assert!(content.contains("SUMMARY written by extractive"));
    assert_eq!(
        cov["fingerprint"].as_str().unwrap(),
        mf::digest::content_fingerprint(content)
    );
    // The summary is well under the span it replaces.
    let span_chars = rec["span"]["chars"].as_u64().unwrap();
    let summary_chars = rec["summaries"][0]["chars"].as_u64().unwrap();
    assert_eq!(rec["summaries"][0]["id"], id);
    assert!(
        summary_chars * 2 < span_chars,
        "{summary_chars} vs {span_chars}"
    );
    assert!(rec["after"]["tokens"].as_u64().unwrap() < rec["before"]["tokens"].as_u64().unwrap());

    // A second run folds nothing new and says so.
    let again = env.mf(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
        "--json",
    ]);
    assert_eq!(again.code, 0, "{again:?}");
    let rec2 = &json_lines(&again.stdout)[0];
    assert_eq!(rec2["action"], "skipped");
    assert_eq!(
        rec2["reason"], "not worth a call: 7 uncovered entries (below the trigger of 20)",
        "{again:?}"
    );
    assert_eq!(rec2["written"], false);
    assert_eq!(read(&f), after, "second run wrote something");
}

#[test]
fn table_output_on_a_pipe_names_the_action() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    let out = env.mf(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("folded"), "{out:?}");
    assert!(out.stdout.contains("msg-summary-1-"), "{out:?}");
    assert!(
        out.stderr.is_empty(),
        "stderr should be quiet on success: {out:?}"
    );
}

#[test]
fn output_leaves_input_untouched_and_writes_input_plus_new_lines() {
    let (env, f, before) = incident();
    let out = env.mf(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
        "--output",
        "out/compacted.jsonl",
    ]);
    assert_ne!(
        out.code, 0,
        "a missing output directory is an error: {out:?}"
    );
    std::fs::create_dir(env.path("out")).unwrap();
    let out = env.mf(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
        "--output",
        "out/compacted.jsonl",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(read(&f), before, "input must be untouched");
    let copy = read(&env.path("out/compacted.jsonl"));
    assert_eq!(&copy[..before.len()], &before[..]);
    assert_eq!(
        json_lines(std::str::from_utf8(&copy[before.len()..]).unwrap()).len(),
        1
    );
    assert_eq!(json_lines(&out.stdout)[0]["output"], "out/compacted.jsonl");
    // Recall of the copy holds the summary.
    let recall = env.mf(&["recall", "out/compacted.jsonl"]);
    assert!(
        recall.stdout.contains("[summary of earlier turns"),
        "{recall:?}"
    );
}

#[test]
fn dry_run_plans_without_writing() {
    let (env, f, before) = incident();
    let out = env.mf(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
        "--dry-run",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    assert_eq!(rec["action"], "planned");
    assert_eq!(rec["written"], false);
    assert!(rec["span"]["entryCount"].as_u64().unwrap() > 10);
    assert_eq!(read(&f), before);
}

#[test]
fn several_files_each_get_a_record() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    env.write("short.jsonl", &conversation(2));
    let out = env.mf(&[
        "compact",
        "incident-northwind.jsonl",
        "short.jsonl",
        "--model",
        "extractive",
        "--json",
        "-j",
        "2",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let recs = json_lines(&out.stdout);
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[0]["file"], "incident-northwind.jsonl");
    assert_eq!(recs[0]["action"], "folded");
    assert_eq!(recs[1]["file"], "short.jsonl");
    assert_eq!(recs[1]["action"], "skipped");
}

#[test]
fn one_bad_file_among_several_fails_the_run_but_not_the_others() {
    let env = TestEnv::new();
    let good = env.copy_fixture("incident-northwind.jsonl");
    env.write(
        "bad.jsonl",
        "{\"role\":\"user\",\"content\":\"hi\"}\nnot json\n",
    );
    let before = read(&good);
    let out = env.mf(&[
        "compact",
        "bad.jsonl",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
        "--json",
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("bad.jsonl:2:"), "{out:?}");
    assert_eq!(
        out.stderr
            .lines()
            .filter(|l| l.starts_with("error:"))
            .count(),
        1,
        "one error, printed once: {out:?}"
    );
    // With --json every file has a record, the failed one too.
    let recs = json_lines(&out.stdout);
    assert_eq!(recs.len(), 2, "{out:?}");
    assert_eq!(recs[0]["action"], "error");
    assert_eq!(recs[0]["file"], "bad.jsonl");
    assert_eq!(recs[0]["error"]["exitCode"], 1);
    assert!(
        recs[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("bad.jsonl:2:"),
        "{out:?}"
    );
    assert_eq!(recs[1]["action"], "folded");
    assert!(read(&good).len() > before.len());
}

#[test]
fn model_is_never_defaulted() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    let out = env.mf(&["compact", "incident-northwind.jsonl"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("--model"), "{out:?}");
    assert!(
        out.stderr.contains("extractive"),
        "lists the choices: {out:?}"
    );
    let out = env.mf_env(
        &["compact", "incident-northwind.jsonl", "--json"],
        &[("MF_MODEL", "extractive")],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(json_lines(&out.stdout)[0]["model"], "extractive");
    let out = env.mf(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "no-such-model",
    ]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("unknown model `no-such-model`"),
        "{out:?}"
    );
}

#[test]
fn recent_cut_inside_a_turn_and_inside_tool_results_keeps_the_whole_turn() {
    let env = TestEnv::new();
    let mut s = conversation(12);
    // Turn 13: a user request, an assistant with three parallel calls, their results, an answer.
    s += &line(
        "u13",
        "user",
        "Check the weather in Oslo, Bergen and Tromsø for 2026-12-05.",
    );
    s.push('\n');
    s += &serde_json::json!({"id": "a13", "role": "assistant", "content": null, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Oslo\"}"}},
        {"id": "c2", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Bergen\"}"}},
        {"id": "c3", "type": "function", "function": {"name": "weather", "arguments": "{\"city\":\"Tromsø\"}"}}]}).to_string();
    s.push('\n');
    for (c, t) in [("c1", "-3C snow"), ("c2", "4C rain"), ("c3", "-9C clear")] {
        s += &serde_json::json!({"id": format!("r{c}"), "role": "tool", "tool_call_id": c, "name": "weather", "content": t}).to_string();
        s.push('\n');
    }
    s += &line(
        "a13b",
        "assistant",
        "Oslo -3C with snow, Bergen 4C with rain, Tromsø -9C and clear.",
    );
    s.push('\n');
    env.write("tools.jsonl", &s);
    // --recent 3 lands on `rc2`, inside the results of a13's calls.
    let out = env.mf(&[
        "compact",
        "tools.jsonl",
        "--model",
        "extractive",
        "--min-retention",
        "0",
        "--recent",
        "3",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    assert_eq!(rec["action"], "folded", "{out:?}");
    let covered = last_covered(&env.path("tools.jsonl"));
    for id in ["u13", "a13", "rc1", "rc2", "rc3", "a13b"] {
        assert!(
            !covered.iter().any(|c| c == id),
            "{id} of the cut turn was folded: {covered:?}"
        );
    }
    assert_eq!(covered.last().map(String::as_str), Some("a12"));
    assert_eq!(rec["span"]["lastId"], "a12");
    assert_eq!(rec["span"]["toTurn"], 12);
    assert_eq!(rec["verbatim"]["toTurn"], 13);
    assert_eq!(rec["verbatim"]["entryCount"], 7);
    assert_eq!(rec["verbatim"]["preambleCount"], 1);
    // The recall keeps call and results together.
    let recall = json_lines(&env.mf_ok(&["recall", "tools.jsonl"]).stdout);
    let roles: Vec<&str> = recall.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        [
            "system",
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "tool",
            "assistant"
        ]
    );
}

#[test]
fn unterminated_last_line_gets_a_newline_before_the_append() {
    let env = TestEnv::new();
    let mut s = conversation(12);
    s.pop(); // drop the final newline: the last line is complete JSON without one
    let f = env.write("unterminated.jsonl", &s);
    let out = env.mf(&[
        "compact",
        "unterminated.jsonl",
        "--model",
        "extractive",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let after = String::from_utf8(read(&f)).unwrap();
    assert!(after.starts_with(&s));
    assert_eq!(&after[s.len()..s.len() + 1], "\n");
    assert_eq!(file_lines(&f).len(), 25 + 1);
}

#[test]
fn size_window_folds_only_the_newest_entries() {
    let env = TestEnv::new();
    env.write("c.jsonl", &conversation(15));
    let out = env.mf(&[
        "compact",
        "c.jsonl",
        "--model",
        "extractive",
        "--min-retention",
        "0",
        "--size",
        "12",
        "--recent",
        "4",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    assert_eq!(rec["action"], "folded", "{out:?}");
    let covered = last_covered(&env.path("c.jsonl"));
    // 30 candidates; window = newest 12 → starts at u10; tail = last 4 → u14..a15.
    assert_eq!(
        covered,
        ["u10", "a10", "u11", "a11", "u12", "a12", "u13", "a13"]
    );
    // Entries before the window stay verbatim in recall, after the summary.
    let recall = json_lines(&env.mf_ok(&["recall", "c.jsonl"]).stdout);
    assert_eq!(recall.len(), 1 + 18 + 1 + 4);
}

#[test]
fn a_held_lock_is_waited_for_and_said() {
    use std::io::BufRead;
    let env = TestEnv::new();
    let f = env.copy_fixture("incident-northwind.jsonl");
    let holder = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .open(&f)
        .unwrap();
    holder.lock().unwrap();
    let mut child = env
        .command(
            &[
                "compact",
                "incident-northwind.jsonl",
                "--model",
                "extractive",
                "--json",
            ],
            &[],
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait (bounded) until mf says it is waiting, then release the lock.
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines() {
            let _ = tx.send(line.unwrap_or_default());
        }
    });
    let said = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("mf said something while waiting");
    assert!(said.contains("waiting for the lock on"), "{said}");
    let before = read(&f);
    assert_eq!(
        before,
        read(&fixture("incident-northwind.jsonl")),
        "nothing written while the lock is held"
    );
    holder.unlock().unwrap();
    drop(holder);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        read(&f).len() > before.len(),
        "the fold landed after the lock was released"
    );
    assert_eq!(
        json_lines(&String::from_utf8(out.stdout).unwrap())[0]["action"],
        "folded"
    );
}

#[test]
fn ctrl_c_while_waiting_for_the_lock_exits_130_and_writes_nothing() {
    use std::io::BufRead;
    let (env, f, original) = incident();
    let holder = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .open(&f)
        .unwrap();
    holder.lock().unwrap();
    let mut child = env
        .command(
            &[
                "compact",
                "incident-northwind.jsonl",
                "--model",
                "extractive",
            ],
            &[],
        )
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let said = lines.next().expect("mf said it is waiting").unwrap();
    assert!(said.contains("waiting for the lock on"), "{said}");
    let kill = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    drop(holder);
    assert_eq!(read(&f), original, "nothing written");
}
