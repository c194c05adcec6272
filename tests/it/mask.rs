//! `--strategy mask` (issue 9, acceptance 4): old tool results replaced by stubs with no model
//! call; only results outside the kept ones — the verbatim tail and the newest
//! `--keep-tool-results N` — are stubbed (and only those a stub shortens); `expand STUB_ID`
//! prints the original line byte for byte, `expand --restore` brings recall back to what it was,
//! and the file's original lines are never touched. Then `--strategy mask,summary`.

use std::path::Path;

use serde_json::{Value, json};

use crate::server::{TestServer, openai_ok};
use crate::util::*;

/// A tool result of `n` lines, each naming it (so its text is unique).
fn result_text(tag: &str, n: usize) -> String {
    (1..=n)
        .map(|k| {
            format!(
                "{tag} row {k}: status=ok latency={}ms region=eu-west-1",
                100 + k
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn call(id: &str, name: &str) -> Value {
    json!({"id": id, "type": "function", "function": {"name": name, "arguments": format!("{{\"q\":\"{id}\"}}")}})
}

fn result(id: &str, call: &str, name: &str, text: &str) -> String {
    json!({"id": id, "role": "tool", "tool_call_id": call, "name": name, "content": text})
        .to_string()
}

/// Four turns. Results: t1 (big), t2 (big), t3 (small), t4 (big) before the last turn; t5–t8
/// (big) in the last turn, which is the verbatim tail with `--recent 5`.
fn tool_chat() -> String {
    let mut l = vec![line("sys", "system", "You are a diagnostics agent.")];
    l.push(line("u1", "user", "Check the payments service."));
    l.push(json!({"id": "a1", "role": "assistant", "content": null, "tool_calls": [call("c1", "metrics")]}).to_string());
    l.push(result("t1", "c1", "metrics", &result_text("t1", 20)));
    l.push(line("a1b", "assistant", "Payments look healthy."));
    l.push(line("u2", "user", "And the ledger and the cache?"));
    l.push(json!({"id": "a2", "role": "assistant", "content": null, "tool_calls": [call("c2", "metrics"), call("c3", "ping")]}).to_string());
    l.push(result("t2", "c2", "metrics", &result_text("t2", 20)));
    l.push(result("t3", "c3", "ping", "pong 3ms"));
    l.push(line("a2b", "assistant", "Ledger fine, cache answers."));
    l.push(line("u3", "user", "Now the logs of the gateway."));
    l.push(json!({"id": "a3", "role": "assistant", "content": null, "tool_calls": [call("c4", "logs")]}).to_string());
    l.push(result("t4", "c4", "logs", &result_text("t4", 30)));
    l.push(line("a3b", "assistant", "The gateway logs are clean."));
    l.push(line("u4", "user", "Last: all four regions."));
    l.push(json!({"id": "a4", "role": "assistant", "content": null, "tool_calls": [call("c5", "metrics"), call("c6", "metrics"), call("c7", "metrics"), call("c8", "metrics")]}).to_string());
    for k in 5..=8 {
        l.push(result(
            &format!("t{k}"),
            &format!("c{k}"),
            "metrics",
            &result_text(&format!("t{k}"), 15),
        ));
    }
    l.push(line("a4b", "assistant", "All four regions are fine."));
    l.join("\n") + "\n"
}

/// The exact line of the file whose `id` is `id`.
fn original_line(text: &str, id: &str) -> String {
    text.lines()
        .find(|l| serde_json::from_str::<Value>(l).is_ok_and(|v| v["id"] == id))
        .unwrap_or_else(|| panic!("no line {id}"))
        .to_string()
}

/// The stubs written: (stub id, the id of the result it hides).
fn stubs(file: &Path) -> Vec<(String, String)> {
    file_lines(file)
        .into_iter()
        .filter(|v| v["mf"]["kind"] == "stub")
        .map(|v| {
            let id = v["id"].as_str().unwrap().to_string();
            let hidden = covered_ids(file, &v);
            assert_eq!(hidden.len(), 1, "a stub hides one entry: {v}");
            (id, hidden[0].clone())
        })
        .collect()
}

fn recall(env: &TestEnv) -> String {
    let out = env.mf(&["recall", "tools.jsonl"]);
    assert_eq!(out.code, 0, "{out:?}");
    out.stdout
}

/// `--strategy mask` against a model that is never called.
fn mask(env: &TestEnv, server: &TestServer, keep: &str) -> Output {
    let base = format!("{}/v1", server.url());
    env.mf(&[
        "compact",
        "tools.jsonl",
        "--model",
        "openai-compatible:never",
        "--base-url",
        &base,
        "--strategy",
        "mask",
        "--keep-tool-results",
        keep,
        "--recent",
        "5",
        "--json",
    ])
}

#[test]
fn mask_stubs_only_results_outside_the_tail_and_the_kept_ones_without_a_call() {
    // keep 2: the tail's four results are kept anyway; t3 is too small for a stub.
    // keep 6: the six newest results (t3–t8) are kept.
    for (keep, expected) in [("2", vec!["t1", "t2", "t4"]), ("6", vec!["t1", "t2"])] {
        let server = TestServer::start(vec![openai_ok("never used")]);
        let env = TestEnv::new();
        let f = env.write("tools.jsonl", &tool_chat());
        let original = read(&f);
        let original_text = String::from_utf8(original.clone()).unwrap();
        let before = recall(&env);

        let out = mask(&env, &server, keep);
        assert_eq!(out.code, 0, "{out:?}");
        assert!(server.requests().is_empty(), "mask called the model");
        let rec = &json_lines(&out.stdout)[0];
        assert_eq!(rec["action"], "masked", "{rec}");
        assert_eq!(rec["calls"], 0);
        let written = stubs(&f);
        let hidden: Vec<&str> = written.iter().map(|(_, h)| h.as_str()).collect();
        assert_eq!(hidden, expected, "keep {keep}");
        let ids: Vec<&str> = rec["summaries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap())
            .collect();
        assert_eq!(
            ids,
            written.iter().map(|(s, _)| s.as_str()).collect::<Vec<_>>()
        );
        // The original lines are untouched; only stub lines and their records follow them.
        let now = read(&f);
        assert_eq!(&now[..original.len()], &original[..]);
        for v in json_lines(std::str::from_utf8(&now[original.len()..]).unwrap()) {
            assert!(v.get("mf").is_some(), "not an mf line: {v}");
        }

        // Recall: each stubbed result is replaced where it stood, answering the same call;
        // the kept ones are there verbatim.
        let after = json_lines(&recall(&env));
        let before_lines = json_lines(&before);
        assert_eq!(after.len(), before_lines.len());
        for (b, a) in before_lines.iter().zip(&after) {
            assert_eq!(a["role"], b["role"]);
            assert_eq!(a["tool_call_id"], b["tool_call_id"]);
            let tag = b["content"]
                .as_str()
                .and_then(|c| c.split(' ').next())
                .unwrap_or("");
            if expected.contains(&tag) {
                let stub_id = &written.iter().find(|(_, h)| h == tag).unwrap().0;
                let c = a["content"].as_str().unwrap();
                assert!(
                    c.contains(&format!("mf expand tools.jsonl {stub_id}")),
                    "{c}"
                );
                assert!(c.len() < 400, "{c}");
                assert!(!c.contains("row 2:"), "{c}");
            } else {
                assert_eq!(a, b, "kept verbatim");
            }
        }

        // expand STUB_ID prints the original line, byte for byte.
        for (stub, id) in &written {
            let out = env.mf(&["expand", "tools.jsonl", stub]);
            assert_eq!(out.code, 0, "{out:?}");
            assert_eq!(out.stdout, original_line(&original_text, id) + "\n");
        }
        // --restore each: recall is what it was; the original bytes are still the prefix.
        for (stub, _) in &written {
            let out = env.mf(&["expand", "tools.jsonl", stub, "--restore"]);
            assert_eq!(out.code, 0, "{out:?}");
        }
        assert_eq!(recall(&env), before);
        assert_eq!(&read(&f)[..original.len()], &original[..]);
        // A second mask run stubs them again, as new stubs.
        let out = mask(&env, &server, keep);
        assert_eq!(json_lines(&out.stdout)[0]["action"], "masked", "{out:?}");
        assert_eq!(stubs(&f).len(), 2 * expected.len());
        assert!(server.requests().is_empty());
    }
}

#[test]
fn mask_with_nothing_outside_the_kept_ones_skips() {
    // All eight results kept; or a tail that holds every turn.
    for args in [
        ["--keep-tool-results", "8", "--recent", "5"],
        ["--keep-tool-results", "1", "--recent", "100"],
    ] {
        let server = TestServer::start(vec![openai_ok("never used")]);
        let env = TestEnv::new();
        let f = env.write("tools.jsonl", &tool_chat());
        let original = read(&f);
        let base = format!("{}/v1", server.url());
        let mut all = vec![
            "compact",
            "tools.jsonl",
            "--model",
            "openai-compatible:never",
            "--base-url",
            &base,
            "--strategy",
            "mask",
            "--json",
        ];
        all.extend(args);
        let out = env.mf(&all);
        assert_eq!(out.code, 0, "{out:?}");
        let rec = &json_lines(&out.stdout)[0];
        assert_eq!(rec["action"], "skipped", "{args:?}: {rec}");
        // The eight results in view, and the number kept as asked.
        let keep: usize = args[1].parse().unwrap();
        let in_tail = if args[3] == "5" { 4 } else { 8 };
        let newest = keep.max(in_tail).min(8);
        let skip = mf::fold::SkipReason::NothingToMask {
            results: 8,
            keep,
            tail: in_tail,
            kept: newest - in_tail,
            small: 8 - newest,
        };
        assert_eq!(
            rec["reason"],
            mf::decision::Reason::Skip(skip).to_string(),
            "{args:?}: {rec}"
        );
        assert_eq!(read(&f), original);
        assert!(server.requests().is_empty());
    }
}

#[test]
fn mask_then_summary_stubs_first_and_the_summary_reads_the_stubs() {
    let server = TestServer::start(vec![openai_ok(
        "The user had diagnostics run on payments, ledger, cache and the gateway; all were healthy; results t1, t2 and t4 are kept by mf as stubs.",
    )]);
    let env = TestEnv::new();
    let f = env.write("tools.jsonl", &tool_chat());
    let original = read(&f);
    let original_text = String::from_utf8(original.clone()).unwrap();
    let before = recall(&env);
    let base = format!("{}/v1", server.url());
    let out = env.mf(&[
        "compact",
        "tools.jsonl",
        "--model",
        "openai-compatible:loop",
        "--base-url",
        &base,
        "--strategy",
        "mask,summary",
        "--keep-tool-results",
        "2",
        "--recent",
        "5",
        "--trigger",
        "0",
        "--min-retention",
        "0",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    assert_eq!(rec["action"], "folded", "{rec}");
    // One call, for the summary; it read the stubs, not the results they hide.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let body = reqs[0].body.clone();
    for tag in ["t1", "t2", "t4"] {
        assert!(!body.contains(&format!("{tag} row 2:")), "{tag} sent whole");
    }
    assert!(body.contains("msg-stub-"), "the stubs are in the span");
    assert!(
        body.contains("pong 3ms"),
        "the small result is sent as it is"
    );
    // Stubs, then a summary over turns 1–3 that covers them; the tail's results verbatim.
    let written = stubs(&f);
    assert_eq!(
        written.iter().map(|(_, h)| h.as_str()).collect::<Vec<_>>(),
        ["t1", "t2", "t4"]
    );
    let summary = summary_lines(&f).pop().expect("a summary");
    let covered = covered_ids(&f, &summary);
    for (stub, _) in &written {
        assert!(
            covered.contains(stub),
            "{stub} not under the summary: {covered:?}"
        );
    }
    for id in ["u1", "a1", "a1b", "u2", "t3", "u3", "a3b"] {
        assert!(covered.contains(&id.to_string()), "{id}: {covered:?}");
    }
    let view = json_lines(&recall(&env));
    assert_eq!(view.len(), 2 + 7, "summary, preamble, the last turn");
    assert_eq!(view[1]["content"], "You are a diagnostics agent.");
    assert!(
        view[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("[summary of earlier turns 1–3")
    );
    // expand --deep goes through the stubs to the original results, byte for byte.
    let sid = summary["id"].as_str().unwrap();
    let deep = env.mf(&["expand", "tools.jsonl", sid, "--deep"]);
    assert_eq!(deep.code, 0, "{deep:?}");
    for id in [
        "u1", "a1", "t1", "a1b", "u2", "a2", "t2", "t3", "a2b", "u3", "a3", "t4", "a3b",
    ] {
        let l = original_line(&original_text, id);
        assert!(
            deep.stdout.lines().any(|x| x == l),
            "{id} not in expand --deep"
        );
    }
    // Restore the summary, then the stubs: recall is what it was.
    assert_eq!(env.mf(&["expand", "tools.jsonl", sid, "--restore"]).code, 0);
    for (stub, _) in &written {
        let out = env.mf(&["expand", "tools.jsonl", stub, "--restore"]);
        assert_eq!(out.code, 0, "{out:?}");
    }
    assert_eq!(recall(&env), before);
    assert_eq!(&read(&f)[..original.len()], &original[..]);
}

/// The tool messages of a recall (`--format chat`) whose content differs from `before`'s: the
/// stubs, as (tool call id, content). Everything else is the same message.
fn stubbed_results(before: &[Value], after: &[Value]) -> Vec<(String, String)> {
    assert_eq!(before.len(), after.len(), "{after:#?}");
    let mut out = Vec::new();
    for (b, a) in before.iter().zip(after) {
        if a == b {
            continue;
        }
        assert_eq!(a["role"], "tool", "only tool results change: {a}");
        assert_eq!(a["tool_call_id"], b["tool_call_id"]);
        out.push((
            a["tool_call_id"].as_str().unwrap().to_string(),
            a["content"].as_str().unwrap().to_string(),
        ));
    }
    out
}

/// The stubs in an agent's session: (stub id, the line it hides, parsed).
fn agent_stubs(file: &Path) -> Vec<(String, Value)> {
    let text = String::from_utf8(read(file)).unwrap();
    let lines: Vec<&str> = text.split('\n').collect();
    file_lines(file)
        .into_iter()
        .filter(|v| v["mf"]["kind"] == "stub")
        .map(|v| {
            let ranges = &v["mf"]["coverage"]["lines"];
            assert_eq!(ranges[0][0], ranges[0][1], "a stub hides one line: {v}");
            let n = ranges[0][0].as_u64().unwrap() as usize;
            (
                [&v["data"]["id"], &v["payload"]["id"], &v["id"]]
                    .iter()
                    .find_map(|x| x.as_str())
                    .unwrap()
                    .to_string(),
                serde_json::from_str(lines[n - 1]).unwrap(),
            )
        })
        .collect()
}

/// The lines appended after `len` bytes, parsed.
fn appended(file: &Path, len: usize) -> Vec<Value> {
    json_lines(std::str::from_utf8(&read(file)[len..]).unwrap())
}

/// What makes each agent show the stubs (issue 28, point 3): Claude Code a copy of the
/// result's row with the stub's text, listed by the boundary in the original's place; Codex
/// the stub's output item in its replacement history; pi (1.6) a `context_edit` of the result.
fn agent_shows(format: &str, lines: &[Value], stub: &str, original_row: &Value) {
    let has_stub = |v: &Value| v.to_string().contains(&stub[..60]);
    match format {
        "claude" => {
            let boundary = lines
                .iter()
                .rfind(|v| v["subtype"] == "compact_boundary")
                .expect("a boundary");
            let listed = &boundary["compactMetadata"]["preservedMessages"]["uuids"];
            let copy = lines
                .iter()
                .find(|v| v["type"] == "user" && has_stub(v))
                .expect("a copy of the row with the stub");
            assert!(listed.as_array().unwrap().contains(&copy["uuid"]));
            assert!(!listed.as_array().unwrap().contains(&original_row["uuid"]));
            assert_eq!(
                copy["message"]["content"][0]["tool_use_id"],
                original_row["message"]["content"][0]["tool_use_id"]
            );
            assert!(copy.get("toolUseResult").is_none());
        }
        "codex" => {
            let compacted = lines
                .iter()
                .rfind(|v| v["type"] == "compacted")
                .expect("a compacted line");
            let history = compacted["payload"]["replacement_history"]
                .as_array()
                .unwrap();
            let item = history
                .iter()
                .find(|i| {
                    i["call_id"] == original_row["payload"]["call_id"] && i.get("output").is_some()
                })
                .expect("the result's item");
            assert!(has_stub(item), "{item}");
        }
        "pi" => {
            let edit = lines
                .iter()
                .find(|v| v["type"] == "context_edit" && has_stub(v))
                .expect("a context_edit");
            assert_eq!(edit["targetId"], original_row["id"]);
        }
        other => panic!("{other}"),
    }
}

#[test]
fn mask_on_agent_sessions_shows_stubs_the_agent_resumes_with_and_restore_brings_the_results_back() {
    for (fixture, format) in [
        ("claude-session.jsonl", "claude"),
        ("codex-0.171-exec-tools.jsonl", "codex"),
        ("pi-1.6.0-ids.jsonl", "pi"),
    ] {
        let (env, f) = aged_session(fixture);
        let original = read(&f);
        let before = recall_chat(&env, fixture);
        let out = env.mf(&["compact", fixture, "--strategy", "mask", "--json"]);
        assert_eq!(out.code, 0, "{fixture}: {out:?}");
        let rec = &json_lines(&out.stdout)[0];
        assert_eq!(rec["action"], "masked", "{fixture}: {rec}");
        let written = agent_stubs(&f);
        assert!(!written.is_empty(), "{fixture}");
        // The originals stay; mf only appended.
        let now = read(&f);
        assert_eq!(&now[..original.len()], &original[..], "{fixture}");
        let lines = appended(&f, original.len());

        // mf's recall: each stubbed result answers its call with the stub, the rest as it was.
        let after = recall_chat(&env, fixture);
        let changed = stubbed_results(&before, &after);
        assert_eq!(changed.len(), written.len(), "{fixture}: {changed:?}");
        for ((_, content), (stub_id, orig)) in changed.iter().zip(&written) {
            assert!(
                content.contains(&format!("mf expand {fixture} {stub_id}")),
                "{fixture}: {content}"
            );
            agent_shows(format, &lines, content, orig);
        }
        // pi shows stubs only from 1.6 on, and says so, in the record and on stderr.
        let pi_note = mf::decision::Note::StubsByContextEdit.to_string();
        let noted = rec["notes"]
            .as_array()
            .is_some_and(|n| n.contains(&Value::from(pi_note.as_str())));
        assert_eq!(noted, format == "pi", "{fixture}: {rec}");
        assert_eq!(out.stderr.contains(&pi_note), format == "pi", "{fixture}");

        // --restore each stub: recall is what it was, and the agent is shown the results again.
        for (stub, _) in &written {
            age(&f);
            let len = read(&f).len();
            env.mf_ok(&["expand", fixture, stub, "--restore"]);
            let lines = appended(&f, len);
            assert!(!lines.is_empty(), "{fixture}");
        }
        assert_eq!(recall_chat(&env, fixture), before, "{fixture}");
        if format == "pi" {
            let back = appended(&f, original.len())
                .into_iter()
                .filter(|v| v["type"] == "context_edit" && v["mf"]["op"] == "restore")
                .count();
            assert_eq!(back, written.len(), "{fixture}");
        }
    }
}

#[test]
fn mask_on_a_pi_v1_session_is_refused_with_what_to_do() {
    // pi's v1 session, its tool results long enough for a stub.
    let env = TestEnv::new();
    let pad = "# keep the connection alive past the server's limit\\n".repeat(20);
    let text: String = String::from_utf8(read(&fixture("pi-session-v1.jsonl")))
        .unwrap()
        .lines()
        .map(|l| {
            if l.contains("\"toolResult\"") {
                l.replacen("\"text\":\"", &format!("\"text\":\"{pad}"), 1) + "\n"
            } else {
                l.to_string() + "\n"
            }
        })
        .collect();
    let f = env.write("pi-session-v1.jsonl", &text);
    age(&f);
    let original = read(&f);
    let out = env.mf(&[
        "compact",
        "pi-session-v1.jsonl",
        "--strategy",
        "mask",
        "--keep-tool-results",
        "1",
        "--recent",
        "1",
    ]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("v1"), "{}", out.stderr);
    assert!(out.stderr.contains("resume it once"), "{}", out.stderr);
    assert_eq!(read(&f), original, "nothing written");
}
