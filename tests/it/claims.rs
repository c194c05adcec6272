//! Claims end to end (issue 24): a summary whose every word occurs in the span but that binds a
//! value otherwise — a swapped figure, a file said to be created that the agent only read, a
//! flipped status — is declined as misstated, at every `--min-retention`, with the claim, what
//! the span says and its line in the record and in `explain`; `--allow-inventions` writes it; a
//! rollup is judged against the originals under it, not only the summaries it reads.

use serde_json::Value;

use crate::server::{TestServer, openai_ok};
use crate::util::*;

const MODEL: &str = "openai-compatible:loop";

fn msg(v: Value) -> String {
    v.to_string()
}

/// An agent chat: a config file read (never written), a test run (142 passed, 13 failed), a fix,
/// and the tests passing. Turn 4 stays verbatim with `--recent 2`.
fn test_chat() -> String {
    let pad = " I checked each step against the previous run before writing this down.";
    [
        msg(serde_json::json!({"id": "sys", "role": "system", "content": "You are a coding assistant."})),
        msg(serde_json::json!({"id": "u1", "role": "user", "content": "Run the billing tests and tell me what fails."})),
        msg(serde_json::json!({"id": "a1", "role": "assistant", "content": format!("Reading the config first.{pad}"),
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file",
                "arguments": "{\"path\":\"src/billing/config.rs\"}"}}]})),
        msg(serde_json::json!({"id": "t1", "role": "tool", "tool_call_id": "c1", "name": "read_file",
            "content": "pub const RETRIES: u32 = 5;\n(87 lines read)"})),
        msg(serde_json::json!({"id": "a1b", "role": "assistant", "content": format!("Now the tests.{pad}"),
            "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "shell",
                "arguments": "{\"cmd\":\"cargo test --lib billing\"}"}}]})),
        msg(serde_json::json!({"id": "t2", "role": "tool", "tool_call_id": "c2", "name": "shell",
            "content": "test result: FAILED. 142 passed; 13 failed; 0 ignored"})),
        msg(serde_json::json!({"id": "a1c", "role": "assistant", "content": format!("142 passed and 13 failed, all in the refund module.{pad}")})),
        msg(serde_json::json!({"id": "u2", "role": "user", "content": "Fix the refund rounding."})),
        msg(serde_json::json!({"id": "a2", "role": "assistant", "content": format!("Fixed the rounding in the refund module; the billing tests pass now.{pad}")})),
        msg(serde_json::json!({"id": "u3", "role": "user", "content": "Good. Write the changelog entry."})),
        msg(serde_json::json!({"id": "a3", "role": "assistant", "content": format!("Done.{pad}")})),
        msg(serde_json::json!({"id": "u4", "role": "user", "content": "Thanks, what is next?"})),
        msg(serde_json::json!({"id": "a4", "role": "assistant", "content": "Next is the invoice export."})),
    ]
    .join("\n")
        + "\n"
}

const FAITHFUL: &str = "Read src/billing/config.rs (RETRIES 5, 87 lines). Ran `cargo test --lib billing`: 142 passed, 13 failed, all in the refund module. Fixed the refund rounding; the billing tests pass now. The changelog entry is written.";

fn compact(env: &TestEnv, server: &TestServer, extra: &[&str]) -> Output {
    let base = format!("{}/v1", server.url());
    let mut args = vec![
        "compact",
        "chat.jsonl",
        "--model",
        MODEL,
        "--base-url",
        &base,
        "--recent",
        "2",
        "--trigger",
        "0",
        "--json",
    ];
    args.extend_from_slice(extra);
    env.mf(&args)
}

fn record(out: &Output) -> Value {
    json_lines(&out.stdout).remove(0)
}

#[test]
fn a_faithful_summary_folds() {
    let env = TestEnv::new();
    env.write("chat.jsonl", &test_chat());
    let server = TestServer::start(vec![openai_ok(FAITHFUL)]);
    let out = compact(&env, &server, &[]);
    let rec = record(&out);
    assert_eq!(rec["action"], "folded", "{rec}");
    assert!(
        rec["summaries"][0]["audit"].get("misstated").is_none(),
        "{rec}"
    );
}

#[test]
fn a_misstated_claim_is_declined_at_every_threshold_and_cited() {
    for (wrong, claim, says) in [
        (
            FAITHFUL.replace("13 failed", "87 failed"),
            "87 failed",
            "13 failed",
        ),
        (
            FAITHFUL.replace(
                "Read src/billing/config.rs",
                "Created src/billing/config.rs",
            ),
            "created src/billing/config.rs",
            "read src/billing/config.rs",
        ),
        (
            FAITHFUL.replace("tests pass now", "tests fail"),
            "tests fail",
            "tests pass",
        ),
    ] {
        for min in ["0.5", "0"] {
            let env = TestEnv::new();
            let f = env.write("chat.jsonl", &test_chat());
            let before = read(&f);
            let server = TestServer::start(vec![openai_ok(&wrong)]);
            let out = compact(&env, &server, &["--min-retention", min]);
            assert_eq!(out.code, 0, "a declined fold is a success: {out:?}");
            let rec = record(&out);
            assert_eq!(rec["action"], "declined", "{min} {claim}: {rec}");
            let m = &rec["summaries"][0]["audit"]["misstated"][0];
            assert_eq!(m["claim"], claim, "{rec}");
            assert_eq!(m["spanSays"], says, "{rec}");
            let line = m["line"].as_u64().expect("the span's line");
            let at = String::from_utf8_lossy(&before)
                .lines()
                .nth(line as usize - 1)
                .unwrap()
                .to_string();
            assert!(
                at.to_lowercase()
                    .contains(&says.split(' ').next().unwrap().to_lowercase()),
                "line {line} says it: {at}"
            );
            let reason = rec["reason"].as_str().unwrap();
            assert!(
                reason.contains(&format!("it misstates what the span says (`{claim}`: the span says `{says}`, line {line})")),
                "{reason}"
            );
            // explain shows the claim, what the span says and the line.
            let ex = env.mf_ok(&["explain", "chat.jsonl"]).stdout;
            assert!(
                ex.contains(&format!("`{claim}`: the span says `{says}`, line {line}")),
                "{ex}"
            );
            // Nothing folded: recall is every original entry, and no summary was written.
            let recall = json_lines(&env.mf_ok(&["recall", "chat.jsonl"]).stdout);
            assert_eq!(recall.len(), 13, "{recall:?}");
            assert!(
                summary_lines(&f).is_empty(),
                "a misstated summary was written"
            );
        }
        // --allow-inventions writes it (the record still lists the claim).
        let env = TestEnv::new();
        env.write("chat.jsonl", &test_chat());
        let server = TestServer::start(vec![openai_ok(&wrong)]);
        let out = compact(&env, &server, &["--allow-inventions"]);
        let rec = record(&out);
        assert_eq!(rec["action"], "folded", "{rec}");
        assert_eq!(rec["summaries"][0]["audit"]["misstated"][0]["claim"], claim);
    }
}

#[test]
fn invented_figures_decline_with_the_retention_check_off() {
    let env = TestEnv::new();
    env.write("chat.jsonl", &test_chat());
    let invented = format!("{FAITHFUL} It cost $7,777 over 31337 requests.");
    let server = TestServer::start(vec![openai_ok(&invented)]);
    let out = compact(&env, &server, &["--min-retention", "0"]);
    let rec = record(&out);
    assert_eq!(rec["action"], "declined", "{rec}");
    assert!(
        rec["reason"]
            .as_str()
            .unwrap()
            .contains("it states what nothing it read says ($7,777, 31337)"),
        "{rec}"
    );
    let env = TestEnv::new();
    env.write("chat.jsonl", &test_chat());
    let server = TestServer::start(vec![openai_ok(&invented)]);
    let out = env.mf_env(
        &[
            "compact",
            "chat.jsonl",
            "--model",
            MODEL,
            "--base-url",
            &format!("{}/v1", server.url()),
            "--recent",
            "2",
            "--trigger",
            "0",
            "--json",
            "--min-retention",
            "0",
        ],
        &[("MF_ALLOW_INVENTIONS", "1")],
    );
    assert_eq!(record(&out)["action"], "folded", "{out:?}");
}

#[test]
fn a_rollup_is_judged_against_the_originals_under_it() {
    // A name only a tool's output says (not salient: no chunk summary needs to keep it) is no
    // invention in a rollup over them.
    let env = TestEnv::new();
    let pad = "x ".repeat(1500);
    let mut lines = vec![msg(
        serde_json::json!({"id": "sys", "role": "system", "content": "You are an operations assistant."}),
    )];
    for k in 1..=6 {
        lines.push(msg(serde_json::json!({"id": format!("u{k}"), "role": "user", "content": format!("Step {k} of the deploy. {pad}")})));
        lines.push(msg(serde_json::json!({"id": format!("a{k}"), "role": "assistant", "content": format!("Checking step {k}."),
            "tool_calls": [{"id": format!("c{k}"), "type": "function", "function": {"name": "shell", "arguments": "{\"cmd\":\"deploy status\"}"}}]})));
        let out = if k == 2 {
            format!("deployed by build_8812 {pad}")
        } else {
            format!("ok {pad}")
        };
        lines.push(msg(serde_json::json!({"id": format!("t{k}"), "role": "tool", "tool_call_id": format!("c{k}"), "name": "shell", "content": out})));
    }
    env.write("chat.jsonl", &(lines.join("\n") + "\n"));
    let server = TestServer::respond(|r, _| {
        if r.body.contains(" · summary of turns ") {
            openai_ok("The deploy ran in steps; build_8812 was deployed.")
        } else {
            openai_ok("A deploy step was checked.")
        }
    });
    let base = format!("{}/v1", server.url());
    let out = env.mf(&[
        "compact",
        "chat.jsonl",
        "--rollup",
        "--model",
        MODEL,
        "--base-url",
        &base,
        "--max-span-tokens",
        "2000",
        "--min-retention",
        "0",
        "--recent",
        "2",
        "--trigger",
        "0",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let rec = record(&out);
    let rollups: Vec<&Value> = rec["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["outcome"] == "written (rollup)")
        .collect();
    assert!(!rollups.is_empty(), "the rollup is written: {rec}");
    assert_eq!(
        rollups.last().unwrap()["audit"]["inventions"],
        serde_json::json!([])
    );
}
