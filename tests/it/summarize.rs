//! `mf summarize`: a span on stdin (or a file) → an audited summary on stdout, nothing written;
//! the `--json` contract the hooks rely on, and the exit codes.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use crate::server::{Reply, TestServer, anthropic_ok};
use crate::util::{Output, TestEnv, fixture, read};

const KEY: &str = "sk-ant-test-summarize-0123456789";
const LABEL: &str = "[summary of ";

/// Run mf with `input` on its stdin.
fn with_stdin(env: &TestEnv, args: &[&str], vars: &[(&str, &str)], input: &[u8]) -> Output {
    let mut cmd = env.command(args, vars);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run mf");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write stdin");
    let out = child.wait_with_output().expect("wait for mf");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
        stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
    }
}

fn json(out: &Output) -> serde_json::Value {
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "one JSON object on stdout: {out:?}");
    serde_json::from_str(lines[0]).expect("JSON on stdout")
}

/// Every file under `dir`, with its bytes.
fn tree(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let bytes = read(&p);
                out.push((p, bytes));
            }
        }
    }
    out.sort();
    out
}

fn anthropic(server: &TestServer) -> Vec<(&'static str, String)> {
    vec![
        ("ANTHROPIC_BASE_URL", server.url()),
        ("ANTHROPIC_API_KEY", KEY.to_string()),
    ]
}

fn vars<'a>(v: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    v.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

#[test]
fn a_file_is_summarized_on_stdout_with_mf_label_and_nothing_is_written() {
    let env = TestEnv::new();
    let f = env.copy_fixture("incident-northwind.jsonl");
    let cache = env.path("cache");
    let before = tree(env.dir.path());
    let out = env.mf_env(
        &[
            "summarize",
            "incident-northwind.jsonl",
            "--model",
            "extractive",
        ],
        &[("MF_CACHE_DIR", cache.to_str().unwrap())],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.starts_with(LABEL), "{out:?}");
    assert!(out.stdout.contains("written by extractive"), "{out:?}");
    // A fact of the span is in the summary.
    assert!(out.stdout.contains("Priya Raman"), "{out:?}");
    assert_eq!(tree(env.dir.path()), before, "nothing was written");
    assert_eq!(read(&f), read(&fixture("incident-northwind.jsonl")));
}

#[test]
fn stdin_is_the_default_input_and_json_is_one_object_with_the_contract() {
    let env = TestEnv::new();
    let before = tree(env.dir.path());
    let input = read(&fixture("incident-northwind.jsonl"));
    let out = with_stdin(
        &env,
        &["summarize", "--model", "extractive", "--json"],
        &[],
        &input,
    );
    assert_eq!(out.code, 0, "{out:?}");
    let j = json(&out);
    for key in [
        "summary", "model", "strategy", "audit", "usage", "costUsd", "accepted", "reason",
    ] {
        assert!(j.get(key).is_some(), "`{key}` in {j}");
    }
    assert_eq!(j["accepted"], true);
    assert_eq!(j["model"], "extractive");
    assert_eq!(j["strategy"], "summary");
    assert_eq!(j["costUsd"], 0.0);
    assert!(j["summary"].as_str().unwrap().starts_with(LABEL));
    // The audit has the shape of compact's record.
    assert!(j["audit"]["retention"].as_f64().unwrap() >= 0.5, "{j}");
    assert!(j["audit"]["found"].as_u64().unwrap() > 0, "{j}");
    assert_eq!(tree(env.dir.path()), before, "nothing was written");
}

#[test]
fn every_input_format_is_read_from_a_file_and_from_stdin() {
    for name in [
        "incident-northwind.jsonl",
        "claude-2.1.332-multiturn.jsonl",
        "codex-0.171.0-multiturn.jsonl",
        "pi-1.6.0-multiturn.jsonl",
        "pi-session-v1.jsonl",
    ] {
        let env = TestEnv::new();
        let f = env.copy_fixture(name);
        let by_file = env.mf(&["summarize", name, "--model", "extractive", "--json"]);
        assert_eq!(by_file.code, 0, "{name}: {by_file:?}");
        let by_stdin = with_stdin(
            &env,
            &["summarize", "-", "--model", "extractive", "--json"],
            &[],
            &read(&f),
        );
        assert_eq!(by_stdin.code, 0, "{name}: {by_stdin:?}");
        let (a, b) = (json(&by_file), json(&by_stdin));
        assert_eq!(a["accepted"], true, "{name}: {a}");
        assert!(
            a["summary"].as_str().unwrap().starts_with(LABEL),
            "{name}: {a}"
        );
        // The same span, whichever way it came in.
        assert_eq!(a["summary"], b["summary"], "{name}");
        assert_eq!(read(&f), read(&fixture(name)), "{name}: unchanged");
    }
}

#[test]
fn a_summary_the_audit_declines_is_not_printed_and_exits_1() {
    let env = TestEnv::new();
    env.copy_fixture("claude-session.jsonl");
    let args = [
        "summarize",
        "claude-session.jsonl",
        "--model",
        "extractive",
        "--min-retention",
        "1",
    ];
    let out = env.mf(&args);
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(out.stdout, "", "a declined summary is not printed");
    assert!(!out.stderr.is_empty(), "stderr says why: {out:?}");
    let mut with_json = args.to_vec();
    with_json.push("--json");
    let out = env.mf(&with_json);
    assert_eq!(out.code, 1, "{out:?}");
    let j = json(&out);
    assert_eq!(j["accepted"], false);
    assert!(j["summary"].is_null());
    assert!(!j["reason"].as_str().unwrap().is_empty());
    assert!(j["audit"]["retention"].as_f64().unwrap() < 1.0, "{j}");
}

#[test]
fn a_model_summary_gets_mf_section_of_what_it_left_out_through_the_same_call() {
    let server = TestServer::start(vec![anthropic_ok(
        "The on-call engineer asked why checkout latency rose; the assistant investigated.",
    )]);
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    let before = tree(env.dir.path());
    let v = anthropic(&server);
    let out = env.mf_env(
        &[
            "summarize",
            "incident-northwind.jsonl",
            "--model",
            "haiku",
            "--min-retention",
            "0",
            "--json",
        ],
        &vars(&v),
    );
    assert_eq!(out.code, 0, "{out:?}");
    let j = json(&out);
    let summary = j["summary"].as_str().unwrap();
    assert!(summary.starts_with(LABEL), "{j}");
    assert!(summary.contains("checkout latency rose"), "{j}");
    assert!(
        summary.contains(mf::fold::audit::APPENDIX_HEADING),
        "{summary}"
    );
    assert!(j["audit"]["appended"].as_u64().unwrap() > 0, "{j}");
    assert_eq!(j["usage"]["inputTokens"], 1800);
    assert_eq!(j["usage"]["outputTokens"], 60);
    assert!(j["costUsd"].as_f64().unwrap() > 0.0, "{j}");
    // One request, the transcript as data between delimiters, the key never printed.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let body = reqs[0].json();
    let user = body["messages"][0]["content"].to_string();
    assert!(user.contains("Priya Raman"), "{user}");
    assert!(!out.stdout.contains(KEY) && !out.stderr.contains(KEY));
    assert_eq!(tree(env.dir.path()), before, "nothing was written");
}

#[test]
fn a_failing_summarizer_exits_3_and_says_so_in_json() {
    let fail = || {
        Reply::json(
            500,
            r#"{"type":"error","error":{"type":"api_error","message":"overloaded"}}"#,
        )
    };
    let server = TestServer::start(vec![fail(), fail(), fail()]);
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    let v = anthropic(&server);
    let out = env.mf_env(
        &[
            "summarize",
            "incident-northwind.jsonl",
            "--model",
            "haiku",
            "--retries",
            "0",
            "--json",
        ],
        &vars(&v),
    );
    assert_eq!(out.code, 3, "{out:?}");
    let j = json(&out);
    assert_eq!(j["accepted"], false);
    assert!(j["summary"].is_null());
    assert!(j["audit"].is_null());
    assert!(!j["reason"].as_str().unwrap().is_empty());

    // Nothing listening at all: also 3, nothing on stdout without --json.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let out = env.mf_env(
        &[
            "summarize",
            "incident-northwind.jsonl",
            "--model",
            "haiku",
            "--retries",
            "0",
        ],
        &[("ANTHROPIC_BASE_URL", &url), ("ANTHROPIC_API_KEY", KEY)],
    );
    assert_eq!(out.code, 3, "{out:?}");
    assert_eq!(out.stdout, "");
}

#[test]
fn dry_run_and_max_cost_make_no_call() {
    let server = TestServer::start(vec![]);
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    let v = anthropic(&server);
    let out = env.mf_env(
        &[
            "summarize",
            "incident-northwind.jsonl",
            "--model",
            "haiku",
            "--dry-run",
            "--json",
        ],
        &vars(&v),
    );
    assert_eq!(out.code, 0, "{out:?}");
    let j = json(&out);
    assert!(j["summary"].is_null());
    assert!(j["costUsd"].as_f64().unwrap() > 0.0, "{j}");
    let out = env.mf_env(
        &[
            "summarize",
            "incident-northwind.jsonl",
            "--model",
            "haiku",
            "--max-cost",
            "0.0000001",
        ],
        &vars(&v),
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(!out.stderr.is_empty(), "stderr says why: {out:?}");
    assert!(server.requests().is_empty(), "no call was made");
}

#[test]
fn a_system_prompt_replaces_the_instruction() {
    let server = TestServer::start(vec![anthropic_ok("A short summary of the incident.")]);
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    let v = anthropic(&server);
    let out = env.mf_env(
        &[
            "summarize",
            "incident-northwind.jsonl",
            "--model",
            "haiku",
            "--min-retention",
            "0",
            "--system-prompt",
            "Summarize for the pricing team only.",
        ],
        &vars(&v),
    );
    assert_eq!(out.code, 0, "{out:?}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert!(
        reqs[0].json()["system"]
            .to_string()
            .contains("Summarize for the pricing team only."),
        "{}",
        reqs[0].json()["system"]
    );
}
