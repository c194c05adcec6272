//! Issue 28, point 4, the words that remained: whose retention a declined summary's row shows,
//! the id of a declined row, `explain` on a span already declined, where a base URL came from,
//! `summarize` on a terminal, and a line that is not JSON.

use crate::server::{TestServer, openai_ok};
use crate::util::*;

/// A reply that keeps almost nothing of the incident (mf adds what it left out).
const GENERIC: &str = "Goal: the user and the assistant worked on a problem together.\nState: they talked it through and agreed on what to do next.";

fn compact_generic(env: &TestEnv, server: &TestServer, extra: &[&str]) -> Output {
    let base = format!("{}/v1", server.url());
    let mut args = vec![
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "openai-compatible:loop",
        "--base-url",
        &base,
    ];
    args.extend(extra);
    env.mf(&args)
}

#[test]
fn a_declined_generic_summary_says_whose_retention_is_whose_and_has_no_empty_id() {
    let server = TestServer::start(vec![openai_ok(GENERIC)]);
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    let out = compact_generic(&env, &server, &[]);
    assert_eq!(out.code, 0, "{out:?}");
    let row = out
        .stdout
        .lines()
        .find(|l| l.starts_with("summary:"))
        .unwrap_or_else(|| panic!("{}", out.stdout));
    // Not "retention 84% · declined as lossy: its own words keep 0%": which share is whose.
    assert!(
        row.contains("with mf's appendix ") && row.contains(" · the model's own words kept 0%"),
        "{row}"
    );
    assert!(!row.contains("retention"), "{row}");
    assert!(
        row.contains("declined as lossy: the model's own words keep 0% of the salient items"),
        "{row}"
    );
    // A declined summary has no id, and its row says so rather than leaving a gap.
    assert!(
        row.starts_with("summary: not written (no id) · turns 1–13 · "),
        "{row}"
    );
    // The record keeps the figures as they were.
    let out = compact_generic(&env, &server, &["--json", "--retry"]);
    let rec = &json_lines(&out.stdout)[0];
    assert_eq!(rec["summaries"][0]["id"], "", "{rec}");
}

#[test]
fn explain_without_a_model_says_a_span_was_declined_and_by_which_model() {
    let server = TestServer::start(vec![openai_ok(GENERIC)]);
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    assert_eq!(compact_generic(&env, &server, &[]).code, 0);
    let out = env.mf_ok(&["explain", "incident-northwind.jsonl"]);
    assert!(
        out.stdout.contains(
            "note: this span (turns 1–13) was already declined as lossy by openai-compatible:loop (record on line 57): `mf compact --model openai-compatible:loop` skips it until it grows (`--retry` asks again); another model is asked"
        ),
        "{}",
        out.stdout
    );
    // With the model that declined it, the plan itself says so (as before).
    let out = env.mf_ok(&[
        "explain",
        "incident-northwind.jsonl",
        "--model",
        "openai-compatible:loop",
    ]);
    assert!(out.stdout.contains("already asked"), "{}", out.stdout);
}

#[test]
fn summarize_on_a_terminal_says_it_reads_standard_input_and_how_to_end_it() {
    use std::io::Write;
    use std::process::Stdio;

    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let env = TestEnv::new();
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("a pty");
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let terminal = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(name.to_str().unwrap())
        .expect("open the pty's terminal side");
    let mut cmd = env.command(&["summarize", "--model", "extractive"], &[]);
    cmd.stdin(Stdio::from(terminal))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().expect("run mf");
    drop(cmd);
    // The person ends the input at once (Ctrl-D on an empty line).
    let mut master = std::fs::File::from(master);
    master.write_all(b"\x04").unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("mf: reading the span from standard input, which is this terminal: paste chat JSONL (one message a line), then press Ctrl-D on an empty line to end it"),
        "{stderr}"
    );
    assert!(stderr.contains("`mf summarize FILE`"), "{stderr}");
    // From anything else (here /dev/null), nothing is said about it.
    let out = env.mf(&["summarize", "--model", "extractive"]);
    assert!(!out.stderr.contains("this terminal"), "{}", out.stderr);
}

#[test]
fn a_line_that_is_not_json_is_said_in_words_not_the_parsers() {
    let env = TestEnv::new();
    for (line, words) in [
        (
            r#"{"role":"user","content":nope}"#,
            "b.jsonl:1:27: not valid JSON: a bare word where a value belongs (JSON's only bare words are true, false and null; text goes in double quotes)",
        ),
        (
            r#"{"role":"user",content:"x"}"#,
            "b.jsonl:1:16: not valid JSON: a key is not in double quotes (JSON writes a key as `\"key\"`)",
        ),
        (
            r#"{"role":"user","content":"x""#,
            "b.jsonl:1:28: not valid JSON: the line ends before the JSON does (an unclosed `{`, `[` or `\"`): was it cut short?",
        ),
    ] {
        env.write("b.jsonl", &format!("{line}\n"));
        let out = env.mf(&["recall", "b.jsonl"]);
        assert_eq!(out.code, 1, "{out:?}");
        assert!(out.stderr.contains(words), "{line}: {}", out.stderr);
        assert!(!out.stderr.contains("expected"), "{}", out.stderr);
    }
}

#[test]
fn an_unreachable_server_names_where_its_url_came_from() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    // Port 9 on this machine: nothing answers.
    for (model, vars, from) in [
        (
            "haiku",
            vec![
                ("ANTHROPIC_API_KEY", "k"),
                ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
            ],
            "check ANTHROPIC_BASE_URL and",
        ),
        (
            "openai:gpt-4.1-mini",
            vec![
                ("OPENAI_API_KEY", "k"),
                ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1"),
            ],
            "check OPENAI_BASE_URL and",
        ),
        (
            "openai-compatible:loop",
            vec![("MF_BASE_URL", "http://127.0.0.1:9/v1")],
            "check MF_BASE_URL and",
        ),
    ] {
        let out = env.mf_env(
            &[
                "compact",
                "incident-northwind.jsonl",
                "--model",
                model,
                "--retries",
                "0",
            ],
            &vars,
        );
        assert_ne!(out.code, 0, "{out:?}");
        assert!(out.stderr.contains(from), "{model}: {}", out.stderr);
        assert!(
            !out.stderr.contains("--base-url"),
            "{model}: {}",
            out.stderr
        );
    }
    // Given as a flag, the flag is named.
    let out = env.mf(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "openai-compatible:loop",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--retries",
        "0",
    ]);
    assert!(
        out.stderr.contains("check --base-url and"),
        "{}",
        out.stderr
    );
}
