//! `--strategy cited` with a model's candidates: what a written cited summary leaves out of
//! what it cites comes back in mf's "Kept verbatim by mf" section (verbatim, with turn and
//! kind, within the same bounded share), its audit records the model's own retention and the
//! final one, and the file verifies and explains clean; an invented figure is still declined.
//! Rollups get the same section (they share the summary strategy's call).

use crate::server::{TestServer, openai_ok};
use crate::util::*;

const FILE: &str = "billing.jsonl";

/// The user's deadline (turn 2) and the path edited in that turn.
const DEADLINE: &str =
    "Ship the fix, but deploy only after 16:00 UTC on 2026-12-04; the freeze lasts until then.";
const EDITED: &str = "src/billing/charge.rs";

/// A chat with tool calls: a file read, an edit under a user's deadline, a test run, then
/// turns of small talk that stay verbatim as the recent tail.
fn billing(env: &TestEnv) -> std::path::PathBuf {
    let body = "    // charge with retries\n    let mut attempt = 0;\n    loop {\n        attempt += 1;\n        match gateway.charge(&order) {\n            Ok(r) => break Ok(r),\n            Err(e) if attempt < limit => sleep(backoff),\n            Err(e) => break Err(e),\n        }\n    }\n".repeat(6);
    let call = |id: &str, call: &str, name: &str, args: serde_json::Value| {
        serde_json::json!({"id": id, "role": "assistant", "content": null, "tool_calls": [
            {"id": call, "type": "function", "function": {"name": name, "arguments": args.to_string()}}]})
    };
    let tool = |id: &str, call: &str, name: &str, content: &str| serde_json::json!({"id": id, "role": "tool", "tool_call_id": call, "name": name, "content": content});
    let msg = |id: &str, role: &str, content: &str| serde_json::json!({"id": id, "role": role, "content": content});
    let mut lines = vec![
        msg(
            "m1",
            "system",
            "You are a coding assistant for the billing team.",
        ),
        msg(
            "m2",
            "user",
            "Card charges fail when the gateway is slow. Look at the retry loop.",
        ),
        call(
            "m3",
            "c1",
            "read_file",
            serde_json::json!({"path": "src/billing/retry.rs"}),
        ),
        tool("m4", "c1", "read_file", &body),
        msg(
            "m5",
            "assistant",
            "The retry loop gives up after 3 attempts with a 500 ms backoff, which is too short for the gateway's slow minutes.",
        ),
        msg("m6", "user", DEADLINE),
        call(
            "m7",
            "c2",
            "edit_file",
            serde_json::json!({"path": EDITED, "old_string": "let limit = 3;", "new_string": "let limit = 5;"}),
        ),
        tool(
            "m8",
            "c2",
            "edit_file",
            &format!("The edit was applied.\n{body}"),
        ),
        msg(
            "m9",
            "assistant",
            "I raised the retry limit to 5 attempts and the backoff to 800 ms.",
        ),
        msg("m10", "user", "Run the billing tests."),
        call(
            "m11",
            "c3",
            "run_command",
            serde_json::json!({"command": "cargo test billing"}),
        ),
        tool(
            "m12",
            "c3",
            "run_command",
            &format!("{body}\ntest result: ok. 42 passed; 0 failed"),
        ),
        msg(
            "m13",
            "assistant",
            "All 42 billing tests pass with the new limit.",
        ),
    ];
    for k in 0..6 {
        let n = 14 + 2 * k;
        lines.push(msg(
            &format!("m{n}"),
            "user",
            &format!("Small question {k}: is the change documented?"),
        ));
        lines.push(msg(
            &format!("m{}", n + 1),
            "assistant",
            &format!("Yes, note {k} of the changelog says so."),
        ));
    }
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    env.write(FILE, &text)
}

/// `mf compact --strategy cited --json` against a loopback model speaking Chat Completions.
fn cited(env: &TestEnv, server: &TestServer, extra: &[&str]) -> Output {
    let base = format!("{}/v1", server.url());
    let mut args = vec![
        "compact",
        FILE,
        "--model",
        "openai-compatible:scripted",
        "--base-url",
        &base,
        "--strategy",
        "cited",
        "--json",
    ];
    args.extend(extra);
    env.mf(&args)
}

/// A candidate that cites the deadline's turn and the edit, in words that leave out the
/// deadline, the edited path, the file read and the command run.
const LEAVES_OUT: &str = "=== #1\nThe user asked to ship the retry fix [m6]. The retry loop gave up after 3 attempts with a 500 ms backoff [m3, m5]; the limit is now 5 attempts and the backoff 800 ms [m7, m9]. All 42 billing tests pass [m11, m13].\n";

#[test]
fn a_cited_summary_gets_back_the_deadline_and_the_edited_path_it_left_out() {
    let env = TestEnv::new();
    let f = billing(&env);
    let original = read(&f);
    let server = TestServer::start(vec![openai_ok(LEAVES_OUT)]);
    // Users' messages are offered (cited protects them by default).
    let out = cited(&env, &server, &["--protect", "none"]);
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    assert_eq!(rec["action"], "folded", "{rec}");
    assert_eq!(server.requests().len(), 1, "accepted at once: {rec}");
    let written: Vec<&serde_json::Value> = rec["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["outcome"] == "written")
        .collect();
    assert_eq!(written.len(), 1, "{rec}");
    let a = &written[0]["audit"];
    let own = a["modelRetention"]
        .as_f64()
        .expect("the model's own retention is recorded");
    let fin = a["retention"].as_f64().unwrap();
    assert!(own < 0.9, "{a}");
    assert!(fin >= 0.9 && fin > own, "{a}");
    assert!(a["appended"].as_u64().unwrap() >= 2, "{a}");

    // The line: the model's cited words as written, then mf's section, verbatim with turn and
    // kind; the same audit in the line as in the record.
    let lines = summary_lines(&f);
    assert_eq!(lines.len(), 1);
    assert_eq!(&lines[0]["mf"]["audit"], a);
    let content = lines[0]["content"].as_str().unwrap();
    let model = LEAVES_OUT.trim_start_matches("=== #1\n").trim_end();
    let at = content
        .find(model)
        .expect("the model's words stay as written");
    let section = &content[content
        .find("\n\nKept verbatim by mf (the summary above left these out):\n")
        .expect("mf's section")..];
    assert!(
        at < content.len() - section.len(),
        "the section comes after: {content}"
    );
    for line in [
        format!("- T2 user: \"{DEADLINE}\""),
        format!("- T2 edited {EDITED}"),
        "- T1 read src/billing/retry.rs".to_string(),
    ] {
        assert!(section.contains(&line), "{line} not in {section}");
    }
    // Within the bounded share: the section is no longer than the model's words.
    assert!(
        section.trim().chars().count() <= model.chars().count().max(400),
        "{section}"
    );
    assert_eq!(&read(&f)[..original.len()], &original[..]);

    // Read back: verify is clean, explain shows the summary and its audit, recall carries the
    // deadline through the summary (its entry is covered).
    let v = env.mf(&["verify", FILE]);
    assert_eq!(v.code, 0, "{v:?}");
    let ex: serde_json::Value =
        serde_json::from_str(&env.mf_ok(&["explain", FILE, "--json"]).stdout).unwrap();
    let s = &ex["summaries"][0];
    assert_eq!(s["audit"]["modelRetention"], a["modelRetention"], "{ex}");
    assert_eq!(s["audit"]["appended"], a["appended"], "{ex}");
    assert_eq!(s["cited"]["cites"][0], "m6", "{ex}");
    let text = env.mf_ok(&["explain", FILE]).stdout;
    assert!(text.contains("retention"), "{text}");
    let recall = env.mf_ok(&["recall", FILE, "--format", "text"]).stdout;
    assert!(recall.contains("16:00 UTC on 2026-12-04"), "{recall}");
    assert!(recall.contains(EDITED), "{recall}");
    assert!(!recall.contains("Look at the retry loop.") || recall.contains("Kept verbatim"));
}

#[test]
fn a_cited_summary_that_invents_a_figure_is_still_declined_whatever_mf_adds() {
    // Faithful but for one figure nothing says (a 1,200 ms backoff): mf's section would bring
    // back what it left out, yet the invention is the model's own and is declined.
    let invents = LEAVES_OUT.replace("the backoff 800 ms", "the backoff 1,200 ms");
    assert_ne!(invents, LEAVES_OUT);
    let env = TestEnv::new();
    let f = billing(&env);
    let server = TestServer::start(vec![openai_ok(&invents), openai_ok("NONE")]);
    let out = cited(&env, &server, &["--protect", "none"]);
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    assert_eq!(rec["action"], "declined", "{rec}");
    let rej = rec["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["candidate"] == "#1")
        .expect("the candidate's record");
    assert_eq!(rej["rejection"]["reason"], "lossy", "{rej}");
    // It was judged with mf's section (its own retention beside the final one), and declined
    // for the invention alone.
    let a = &rej["audit"];
    assert!(
        a["retention"].as_f64().unwrap()
            > a["modelRetention"]
                .as_f64()
                .expect("judged with mf's section"),
        "{a}"
    );
    let detail = rej["rejection"]["detail"].as_str().unwrap();
    assert!(
        detail.contains("it states what nothing it read says (1,200 ms"),
        "{detail}"
    );
    assert!(summary_lines(&f).is_empty());
    let (_, retry) = {
        let body = server.requests()[1].json();
        let m = body["messages"].as_array().unwrap().clone();
        (
            m[0]["content"].as_str().unwrap().to_string(),
            m[1]["content"].as_str().unwrap().to_string(),
        )
    };
    assert!(
        retry.contains("it states what nothing it read says"),
        "{retry}"
    );
}

/// The words of a request's transcript (delimiters and headers dropped), the first `share`
/// of them: a loopback summarizer that keeps some of what it read and leaves the rest out.
fn first_words(r: &crate::server::Recorded, share: f64) -> String {
    let body = r.json();
    let user = body["messages"][1]["content"].as_str().unwrap_or_default();
    let words: Vec<&str> = user
        .lines()
        .skip_while(|l| !l.starts_with("<<<TRANSCRIPT"))
        .skip(1)
        .filter(|l| !l.starts_with('[') && !l.starts_with("<<<"))
        .flat_map(str::split_whitespace)
        .collect();
    let n = ((words.len() as f64 * share) as usize).clamp(1, 60);
    words[..n].join(" ")
}

#[test]
fn a_rollup_gets_mf_s_section_of_what_it_left_out_of_the_summaries_under_it() {
    // Rollups go through the same call as the summary strategy: a rollup that keeps a part of
    // the chunk summaries under it carries mf's section of the rest, and records both
    // retentions.
    let env = TestEnv::new();
    let f = env.write("long.jsonl", &testgen::facts(30, 2).to_jsonl());
    let server = TestServer::respond(|r, _| {
        let rollup = r.body.contains(" · summary of turns ");
        openai_ok(&first_words(r, if rollup { 0.3 } else { 0.5 }))
    });
    let base = format!("{}/v1", server.url());
    let out = env.mf(&[
        "compact",
        "long.jsonl",
        "--rollup",
        "--model",
        "openai-compatible:loopback",
        "--base-url",
        &base,
        "--max-span-tokens",
        "2000",
        "--min-retention",
        "0",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    let rollups: Vec<&serde_json::Value> = rec["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["outcome"] == "written (rollup)")
        .collect();
    assert!(!rollups.is_empty(), "{rec}");
    let top = rollups.last().unwrap();
    let a = &top["audit"];
    let own = a["modelRetention"]
        .as_f64()
        .expect("the model's own retention");
    assert!(a["retention"].as_f64().unwrap() > own, "{a}");
    assert!(a["appended"].as_u64().unwrap() >= 1, "{a}");
    let line = summary_lines(&f)
        .into_iter()
        .find(|l| l["id"] == top["id"])
        .expect("the rollup's line");
    let content = line["content"].as_str().unwrap();
    assert!(
        content.contains("\n\nKept verbatim by mf (the summary above left these out):\n- T"),
        "{content}"
    );
    assert_eq!(&line["mf"]["audit"], a);
    let v = env.mf(&["verify", "long.jsonl"]);
    assert_eq!(v.code, 0, "{v:?}");
}

#[test]
fn a_cited_summary_that_nests_another_gets_back_what_it_left_out_of_it_at_its_turns() {
    // #2 folds #1 in: what #1 said and #2 leaves out comes back in #2's section, at #1's turn
    // (the nested summary is hidden by #2, so its words would be lost otherwise).
    let reply = "=== #1\nThe retry loop gave up after 3 attempts with a 500 ms backoff [m3, m5].\n\
=== #2\nThe retry loop was reworked in src/billing/charge.rs: the limit is now 5 attempts and the backoff 800 ms [#1, m7, m9]. The user wants it shipped [m6].\n";
    let env = TestEnv::new();
    let f = billing(&env);
    let server = TestServer::start(vec![openai_ok(reply)]);
    let out = cited(&env, &server, &["--protect", "none"]);
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    assert_eq!(rec["action"], "folded", "{rec}");
    let lines = summary_lines(&f);
    assert_eq!(lines.len(), 2, "{rec}");
    let outer = lines
        .iter()
        .find(|l| l["mf"]["cited"]["candidate"] == "#2")
        .unwrap();
    let content = outer["content"].as_str().unwrap();
    let section = &content[content.find("Kept verbatim by mf").expect(content)..];
    assert!(section.contains("- T1 "), "{section}");
    assert!(section.contains("500 ms"), "{section}");
    assert!(section.contains(DEADLINE), "{section}");
    assert!(!section.contains("- T0 "), "{section}");
    let a = &outer["mf"]["audit"];
    assert!(
        a["retention"].as_f64().unwrap() > a["modelRetention"].as_f64().unwrap(),
        "{a}"
    );
    let v = env.mf(&["verify", FILE]);
    assert_eq!(v.code, 0, "{v:?}");
    let recall = env.mf_ok(&["recall", FILE, "--format", "text"]).stdout;
    assert!(recall.contains("500 ms"), "{recall}");
    // What #1's own section carried (the file it read) is not lost when #2 hides it.
    assert!(recall.contains("src/billing/retry.rs"), "{recall}");
}
