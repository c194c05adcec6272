//! A long single-prompt agent run folded by the built-in summarizer (issue 14, the fresh
//! sessions): one prompt, then dozens of tool calls of the same shape. Listed one by one, the
//! calls cannot fit the summary's budget and the extractive summary used to be declined by mf's
//! own audit ("keeps 45 of 111 items (40%)"), so nothing folded. Calls of one shape now become
//! one pattern line (`bash(echo line {n} … out-{n}.txt) for {n} = 1–40`) that the audit reads
//! as every call it stands for: the fold is accepted with every salient item kept. A pattern
//! that claims calls the span never made is an invention, and a summary that drops the calls
//! is still declined.
//!
//! `fixtures/pi-0.73.1-long-run.jsonl` was written by the real pi 0.73.1
//! (`@mariozechner/pi-coding-agent`) against the loopback model of `scripts/agents/` with the
//! prompt `long: a long single-prompt run. PLAN[bash*40:echo line {n} of the long run | tee
//! out-{n}.txt ;; read*12:out-{n}.txt ;; write*12:w-{n}.txt=written by call {n} of the long
//! run]` (`harness/agent.py new DIR pi073 PROMPT`): 64 tool calls in one turn.

use serde_json::Value;

use crate::server::{TestServer, openai_ok};
use crate::util::*;

const FIXTURE: &str = "pi-0.73.1-long-run.jsonl";

/// `--recent-tokens 600`: the turn is larger than the tail holds, so its older calls fold (the
/// fresh 160-call runs do so at the default).
fn compact(env: &TestEnv, extra: &[&str]) -> Value {
    let mut args = vec!["compact", FIXTURE, "--recent-tokens", "600", "--json"];
    args.extend_from_slice(extra);
    let out = env.mf(&args);
    assert_eq!(out.code, 0, "{out:?}");
    let recs = json_lines(&out.stdout);
    assert_eq!(recs.len(), 1, "{out:?}");
    recs.into_iter().next().unwrap()
}

#[test]
fn the_built_in_summary_of_a_long_single_prompt_run_passes_its_own_audit() {
    let env = TestEnv::new();
    let f = env.copy_fixture(FIXTURE);
    let r = compact(&env, &["--model", "extractive"]);
    assert_eq!(r["action"], "folded", "{r:#}");
    let a = &r["summaries"][0]["audit"];
    let (found, kept) = (a["found"].as_u64().unwrap(), a["kept"].as_u64().unwrap());
    assert!(found >= 100, "the span's 40 calls carry >100 items: {a:#}");
    assert_eq!(kept, found, "every salient item kept: {a:#}");
    assert_eq!(
        a["appended"], 0,
        "the built-in summary needs no appendix: {a:#}"
    );
    assert!(
        a["inventions"].as_array().is_none_or(Vec::is_empty),
        "{a:#}"
    );
    // Small: the pattern line costs one call's line, not forty.
    let chars = r["summaries"][0]["chars"].as_u64().unwrap();
    let span = r["span"]["chars"].as_u64().unwrap();
    assert!(
        chars * 5 <= span,
        "summary {chars} chars of a {span}-char span"
    );
    // The summary an agent reads back says every call.
    let recall = env.mf(&["recall", FIXTURE, "--format", "text"]);
    assert_eq!(recall.code, 0, "{recall:?}");
    assert!(
        recall
            .stdout
            .contains("echo line {n} of the long run | tee out-{n}.txt) for {n} = 1–40"),
        "{}",
        recall.stdout
    );
    assert!(!recall.stdout.contains("out-17.txt"), "call 17 folded");
    assert!(read(&f).len() > std::fs::metadata(fixture(FIXTURE)).unwrap().len() as usize);
}

/// A model's reply over the same span through the loopback server.
fn served(reply: &str) -> Value {
    let env = TestEnv::new();
    env.copy_fixture(FIXTURE);
    let server = TestServer::start(vec![openai_ok(reply)]);
    let base = format!("{}/v1", server.url());
    compact(
        &env,
        &["--model", "openai-compatible:loop", "--base-url", &base],
    )
}

#[test]
fn a_pattern_line_is_held_to_what_it_claims() {
    // Exact: accepted on its own words (nothing appended).
    let exact = served(
        "Goal: run the long single-prompt plan.\nState: the agent ran `echo line {n} of the long run | tee out-{n}.txt` for {n} = 1–40.",
    );
    assert_eq!(exact["action"], "folded", "{exact:#}");
    let a = &exact["summaries"][0]["audit"];
    assert_eq!(a["kept"], a["found"], "{a:#}");
    assert_eq!(a["appended"], 0, "{a:#}");

    // Claiming calls 41–60, which the span never made: invented figures and paths, declined.
    let invented = served(
        "Goal: run the long single-prompt plan.\nState: the agent ran `echo line {n} of the long run | tee out-{n}.txt` for {n} = 1–60.",
    );
    assert_eq!(invented["action"], "declined", "{invented:#}");
    let inv = invented["summaries"][0]["audit"]["inventions"].to_string();
    assert!(
        inv.contains("out-45.txt") && !inv.contains("out-40.txt"),
        "{inv}"
    );

    // A fluent paragraph without the calls: declined, whatever mf could add after it.
    let generic = served(
        "The agent worked through a long plan of shell commands, reading and writing files as asked, and everything went well.",
    );
    assert_eq!(generic["action"], "declined", "{generic:#}");
}
