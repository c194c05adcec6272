//! Scale: histories many times a model's span budget (chunks, rollups), a giant agent turn folded
//! inside the turn, `--target-tokens`. Transcripts come from `testgen`; summaries from a loopback
//! OpenAI-compatible server that checks every request against the span budget and answers at the
//! length the request asks for.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use mf::decision::Note;
use mf::fold::plan::PlanNote;
use serde_json::Value;

use crate::server::{Recorded, Reply, TestServer, openai_ok};
use crate::util::*;

/// Tokens allowed on top of the prompt text for the chat template's framing of its two messages
/// (role markers, separators).
const FRAMING_TOKENS: usize = 16;

/// The size of a request's prompt in tokens, measured as mf measures spans and budgets
/// (`entry::estimate_tokens`, used by `fold/budget.rs` and `fold/plan.rs`: 4 characters a
/// token, rounded up) over the text the model reads — every message's content, the system
/// instruction included — plus `FRAMING_TOKENS`.
///
/// The bound the tests check is `prompt_tokens(request) <= --max-span-tokens`: the whole prompt,
/// instruction and framing included, fits the budget the span was cut for.
fn prompt_tokens(r: &Recorded) -> usize {
    let body = r.json();
    let mut chars = body["system"].as_str().map_or(0, |s| s.chars().count());
    for m in body["messages"].as_array().expect("messages") {
        chars += m["content"].as_str().map_or(0, |s| s.chars().count());
    }
    mf::entry::estimate_tokens(chars) + FRAMING_TOKENS
}

/// A summarizer that refuses (400, as a server whose context is full would) any request over
/// `budget`, and otherwise answers with the transcript's own words, as many as the request asks
/// for ("Keep the summary under about N words"), headers and delimiters left out.
fn summarizer(budget: usize) -> TestServer {
    TestServer::respond(move |r, _| answer(r, budget))
}

fn answer(r: &Recorded, budget: usize) -> Reply {
    {
        let tokens = prompt_tokens(r);
        if tokens > budget {
            return Reply::json(
                400,
                &serde_json::json!({"error": {"type": "invalid_request_error",
                    "message": format!("prompt of {tokens} tokens is over the budget of {budget}")}})
                .to_string(),
            );
        }
        let body = r.json();
        let user = body["messages"][1]["content"].as_str().unwrap_or_default();
        let words: usize = user
            .split("under about ")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(50);
        let text: Vec<&str> = user
            .lines()
            .skip_while(|l| !l.starts_with("<<<TRANSCRIPT"))
            .skip(1)
            .filter(|l| !l.starts_with('[') && !l.starts_with("<<<"))
            .flat_map(str::split_whitespace)
            .take(words)
            .collect();
        openai_ok(&text.join(" "))
    }
}

/// The arguments that point mf at the loopback summarizer with a span budget. The retention
/// audit is off: these replies are the transcript's first words, and the audit has tests of its
/// own; here the subject is coverage and budgets.
fn remote_args(server: &TestServer, budget: usize) -> Vec<String> {
    [
        "--model",
        "openai-compatible:loopback",
        "--base-url",
        &format!("{}/v1", server.url()),
        "--max-span-tokens",
        &budget.to_string(),
        "--min-retention",
        "0",
        "--allow-inventions",
        "--retries",
        "0",
        "--json",
    ]
    .map(str::to_string)
    .to_vec()
}

fn mf(env: &TestEnv, args: &[&str], more: &[String]) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    all.extend(more.iter().map(String::as_str));
    env.mf(&all)
}

/// The lines of a file's bytes, each with its newline.
fn lines_of(bytes: &[u8]) -> Vec<&[u8]> {
    bytes.split_inclusive(|&b| b == b'\n').collect()
}

/// One original message line.
struct Msg {
    /// 1-based line number.
    line: usize,
    id: String,
    role: String,
    calls: Vec<String>,
    answers: Option<String>,
}

fn messages(original: &[u8]) -> Vec<Msg> {
    lines_of(original)
        .iter()
        .enumerate()
        .map(|(k, l)| {
            let v: Value = serde_json::from_slice(l).unwrap();
            Msg {
                line: k + 1,
                id: v["id"].as_str().unwrap().to_string(),
                role: v["role"].as_str().unwrap().to_string(),
                calls: v["tool_calls"]
                    .as_array()
                    .map(|c| {
                        c.iter()
                            .map(|c| c["id"].as_str().unwrap().to_string())
                            .collect()
                    })
                    .unwrap_or_default(),
                answers: v["tool_call_id"].as_str().map(str::to_string),
            }
        })
        .collect()
}

/// What a chunk summary covers, read three ways that must agree: its coverage ranges (read by
/// hand), `mf expand` (the original lines, byte for byte), and the ids in file order.
fn chunk_coverage(env: &TestEnv, file: &Path, original: &[u8], summary: &Value) -> Vec<String> {
    let id = summary["id"].as_str().unwrap();
    let ids = covered_ids(file, summary);
    let lines = lines_of(original);
    let by_id: HashMap<String, usize> = messages(original)
        .into_iter()
        .map(|m| (m.id, m.line))
        .collect();
    let expected: Vec<u8> = ids
        .iter()
        .flat_map(|i| lines[by_id[i] - 1].to_vec())
        .collect();
    let out = env.mf(&["expand", file.file_name().unwrap().to_str().unwrap(), id]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout.as_bytes() == expected.as_slice(),
        "`mf expand {id}` is not the covered lines byte for byte"
    );
    ids
}

/// Check that chunks partition exactly `expected` (ids in file order): no overlap, nothing
/// missing, nothing extra, each chunk contiguous in the file, and no tool unit split (a call and
/// its result are always in the same chunk).
fn assert_partition(chunks: &[Vec<String>], expected: &[String], msgs: &[Msg]) {
    let mut seen = HashSet::new();
    for c in chunks {
        for id in c {
            assert!(seen.insert(id.clone()), "{id} is covered by two chunks");
        }
    }
    let all: HashSet<String> = expected.iter().cloned().collect();
    assert_eq!(seen, all, "the chunks do not cover exactly the folded span");
    let pos: HashMap<&str, usize> = expected
        .iter()
        .enumerate()
        .map(|(k, id)| (id.as_str(), k))
        .collect();
    let by_id: HashMap<&str, &Msg> = msgs.iter().map(|m| (m.id.as_str(), m)).collect();
    for c in chunks {
        let p: Vec<usize> = c.iter().map(|id| pos[id.as_str()]).collect();
        assert!(
            p.windows(2).all(|w| w[1] == w[0] + 1),
            "a chunk is not one run of the span: {c:?}"
        );
        let calls: HashSet<&str> = c
            .iter()
            .flat_map(|id| by_id[id.as_str()].calls.iter().map(String::as_str))
            .collect();
        let answers: HashSet<&str> = c
            .iter()
            .filter_map(|id| by_id[id.as_str()].answers.as_deref())
            .collect();
        assert_eq!(
            calls, answers,
            "a chunk holds a tool call without its result, or a result without its call: {c:?}"
        );
    }
}

/// The decision record's summaries, split into chunk summaries and rollups.
fn written(rec: &Value) -> (Vec<String>, Vec<String>) {
    let mut chunks = Vec::new();
    let mut rollups = Vec::new();
    for s in rec["summaries"].as_array().unwrap() {
        let id = s["id"].as_str().unwrap().to_string();
        match s["outcome"].as_str().unwrap() {
            "written" => chunks.push(id),
            "written (rollup)" => rollups.push(id),
            other => panic!("{id}: {other}"),
        }
    }
    (chunks, rollups)
}

fn explain_json(env: &TestEnv, name: &str, extra: &[&str]) -> Value {
    let mut args = vec!["explain", name, "--json"];
    args.extend_from_slice(extra);
    let out = env.mf(&args);
    assert_eq!(out.code, 0, "{out:?}");
    serde_json::from_str(&out.stdout).unwrap()
}

#[test]
fn a_history_ten_times_the_span_budget_folds_in_chunks_within_budget_and_rolls_up() {
    const BUDGET: usize = 2000;
    let env = TestEnv::new();
    let f = env.write("long.jsonl", &testgen::facts(60, 11).to_jsonl());
    let original = read(&f);
    let msgs = messages(&original);

    // The uncovered history (what would fold) is at least 10× the budget.
    let plan = explain_json(&env, "long.jsonl", &["--max-span-tokens", "2000"]);
    let history = plan["now"]["span"]["tokens"].as_u64().unwrap() as usize;
    assert!(history >= 10 * BUDGET, "{history} tokens of history");

    let server = summarizer(BUDGET);
    let out = mf(
        &env,
        &["compact", "long.jsonl", "--rollup", "-j", "3"],
        &remote_args(&server, BUDGET),
    );
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    assert_eq!(rec["action"], "folded", "{rec}");

    // No request exceeded the budget (the server would have refused it, and mf failed).
    let requests = server.requests();
    for r in &requests {
        let t = prompt_tokens(r);
        assert!(t <= BUDGET, "a request of {t} tokens, over {BUDGET}");
    }
    assert_eq!(requests.len(), rec["calls"].as_u64().unwrap() as usize);

    // Chunk summaries with exact coverage: together exactly the folded span, no overlaps, no
    // tool unit split; each chunk starts a turn (no turn here is over the budget on its own).
    let (chunk_ids, rollup_ids) = written(rec);
    assert!(chunk_ids.len() >= 10, "{} chunks", chunk_ids.len());
    assert!(!rec.to_string().contains("inside the turn"), "{rec}");
    let summaries: HashMap<String, Value> = summary_lines(&f)
        .into_iter()
        .map(|s| (s["id"].as_str().unwrap().to_string(), s))
        .collect();
    let chunks: Vec<Vec<String>> = chunk_ids
        .iter()
        .map(|id| chunk_coverage(&env, &f, &original, &summaries[id]))
        .collect();
    let tail = rec["verbatim"]["entryCount"].as_u64().unwrap() as usize
        - rec["verbatim"]["preambleCount"].as_u64().unwrap() as usize;
    let folded: Vec<String> = msgs[1..msgs.len() - tail]
        .iter()
        .map(|m| m.id.clone())
        .collect();
    assert_eq!(msgs[0].role, "system");
    assert_eq!(
        msgs[msgs.len() - tail].role,
        "user",
        "the tail starts a turn"
    );
    assert_partition(&chunks, &folded, &msgs);
    let by_id: HashMap<&str, &Msg> = msgs.iter().map(|m| (m.id.as_str(), m)).collect();
    for c in &chunks {
        assert_eq!(by_id[c[0].as_str()].role, "user", "chunk {c:?}");
    }

    // --rollup: one summary covers them all (in levels, when the chunk summaries do not fit one
    // request): explain shows every chunk nested, and one standing summary over everything.
    assert!(!rollup_ids.is_empty());
    let after = explain_json(&env, "long.jsonl", &[]);
    let states: HashMap<String, (String, Option<String>)> = after["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_string(),
                (
                    s["state"].as_str().unwrap().to_string(),
                    s["nestedIn"].as_str().map(str::to_string),
                ),
            )
        })
        .collect();
    let standing: Vec<&String> = states
        .iter()
        .filter(|(_, (st, _))| st == "standing")
        .map(|(id, _)| id)
        .collect();
    assert_eq!(standing.len(), 1, "{states:?}");
    let top = standing[0].clone();
    assert_eq!(&top, rollup_ids.last().unwrap());
    for id in chunk_ids.iter().chain(&rollup_ids[..rollup_ids.len() - 1]) {
        let mut at = id.clone();
        let mut hops = 0;
        while let (st, Some(up)) = &states[&at] {
            assert_eq!(st, "nested");
            at = up.clone();
            hops += 1;
            assert!(hops < 10);
        }
        assert_eq!(at, top, "{id} is not under the rollup");
    }

    // `expand --deep` of the rollup: the original lines of the folded span, byte for byte.
    let deep = env.mf(&["expand", "long.jsonl", &top, "--deep"]);
    assert_eq!(deep.code, 0, "{deep:?}");
    let lines = lines_of(&original);
    let expected: Vec<u8> = lines[1..lines.len() - tail].concat();
    assert!(deep.stdout.as_bytes() == expected.as_slice());
    assert_eq!(&read(&f)[..original.len()], &original[..], "originals kept");

    // Recall is now the rollup and the tail.
    let recall = json_lines(&env.mf_ok(&["recall", "long.jsonl"]).stdout);
    assert_eq!(recall.len(), 1 + 1 + tail, "preamble, rollup, tail");
    assert_eq!(
        after["now"]["before"]["tokens"].as_u64().unwrap(),
        rec["after"]["tokens"].as_u64().unwrap()
    );
}

#[test]
fn a_giant_turn_folds_inside_the_turn_between_tool_units() {
    const BUDGET: usize = 3000;
    let env = TestEnv::new();
    let conv = testgen::agent_session(300, 5);
    let f = env.write("agent.jsonl", &conv.to_jsonl());
    let original = read(&f);
    let msgs = messages(&original);
    // Turn 2 is one giant turn: 300 calls, far over the budget.
    let users: Vec<usize> = (0..msgs.len())
        .filter(|&k| msgs[k].role == "user")
        .collect();
    let giant: Vec<&Msg> = msgs[users[1]..users[2]].iter().collect();
    let giant_chars: usize = lines_of(&original)[users[1]..users[2]]
        .iter()
        .map(|l| l.len())
        .sum();
    assert!(giant_chars / 4 > 5 * BUDGET, "{giant_chars} chars");

    let plan = explain_json(&env, "agent.jsonl", &["--max-span-tokens", "3000"]);
    assert!(
        plan["now"]["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| *n == Note::InTurn.to_string()),
        "{}",
        plan["now"]
    );

    let server = summarizer(BUDGET);
    let out = mf(
        &env,
        &["compact", "agent.jsonl"],
        &remote_args(&server, BUDGET),
    );
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    assert_eq!(rec["action"], "folded", "{rec}");
    // The decision record says it folded inside a turn.
    assert!(
        rec["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| *n == Note::InTurn.to_string()),
        "{rec}"
    );
    for r in server.requests() {
        let t = prompt_tokens(&r);
        assert!(t <= BUDGET, "a request of {t} tokens, over {BUDGET}");
    }

    let (chunk_ids, rollups) = written(rec);
    assert!(rollups.is_empty());
    let summaries: HashMap<String, Value> = summary_lines(&f)
        .into_iter()
        .map(|s| (s["id"].as_str().unwrap().to_string(), s))
        .collect();
    let chunks: Vec<Vec<String>> = chunk_ids
        .iter()
        .map(|id| chunk_coverage(&env, &f, &original, &summaries[id]))
        .collect();
    // Everything from turn 1 through the giant turn folds but the giant turn's prompt: a turn
    // cut across chunks keeps its question verbatim (no chunk may fold it while the rest of
    // its answer is in another chunk); the three short turns stay.
    let folded: Vec<String> = msgs[1..users[2]]
        .iter()
        .filter(|m| m.id != msgs[users[1]].id)
        .map(|m| m.id.clone())
        .collect();
    assert_partition(&chunks, &folded, &msgs);
    // Several chunks lie wholly inside the giant turn, and every chunk boundary inside it falls
    // before an assistant message (a tool unit's start), never before a tool result.
    let giant_ids: HashSet<&str> = giant.iter().map(|m| m.id.as_str()).collect();
    let inside = chunks
        .iter()
        .filter(|c| c.iter().all(|id| giant_ids.contains(id.as_str())))
        .count();
    assert!(inside >= 5, "{inside} chunks inside the giant turn");
    let by_id: HashMap<&str, &Msg> = msgs.iter().map(|m| (m.id.as_str(), m)).collect();
    for c in &chunks {
        let first = by_id[c[0].as_str()];
        assert!(
            first.role == "user" || (first.role == "assistant" && first.answers.is_none()),
            "a chunk starts at {} ({})",
            first.id,
            first.role
        );
    }
    // A unit of three parallel calls travels whole.
    assert!(giant.iter().any(|m| m.calls.len() == 3));

    // Recall never shows a tool result without its call.
    let recall = json_lines(&env.mf_ok(&["recall", "agent.jsonl"]).stdout);
    let mut calls = HashSet::new();
    for m in &recall {
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            calls.insert(c["id"].as_str().unwrap().to_string());
        }
        if let Some(id) = m["tool_call_id"].as_str() {
            assert!(calls.contains(id), "a result without its call in recall");
        }
    }
}

#[test]
fn target_tokens_brings_the_recall_view_under_the_target() {
    let env = TestEnv::new();
    let text = testgen::facts(80, 3).to_jsonl();
    env.write("long.jsonl", &text);
    let before = explain_json(&env, "long.jsonl", &[]);
    let view = before["now"]["before"]["tokens"].as_u64().unwrap() as usize;
    // A target the oldest half of the turns meets when folded (a fifth of their size).
    let target = view * 6 / 10;
    let target_arg = target.to_string();
    let default_to = before["now"]["span"]["toTurn"].as_u64().unwrap();

    // explain shows the plan; compact carries it out.
    let plan = explain_json(
        &env,
        "long.jsonl",
        &["--model", "extractive", "--target-tokens", &target_arg],
    );
    assert_eq!(plan["now"]["action"], "planned");
    let out = env.mf(&[
        "compact",
        "long.jsonl",
        "--model",
        "extractive",
        "--target-tokens",
        &target_arg,
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    assert_eq!(rec["action"], "folded", "{rec}");
    assert_eq!(
        rec["span"], plan["now"]["span"],
        "compact does what explain showed"
    );
    // The recall view, as explain estimates it now, is within the target…
    let after = explain_json(&env, "long.jsonl", &[]);
    let now = after["now"]["before"]["tokens"].as_u64().unwrap() as usize;
    assert!(now <= target, "recall view is ~{now} tokens, over {target}");
    assert_eq!(now, rec["after"]["tokens"].as_u64().unwrap() as usize);
    // …and only the oldest turns needed were folded, not everything the default would fold.
    let to = rec["span"]["toTurn"].as_u64().unwrap();
    assert!(to < default_to, "folded through turn {to} of {default_to}");
    assert_eq!(rec["span"]["fromTurn"], 1);
    // A second run has nothing to do.
    let again = env.mf_ok(&[
        "compact",
        "long.jsonl",
        "--model",
        "extractive",
        "--target-tokens",
        &target_arg,
        "--json",
    ]);
    let again = &json_lines(&again.stdout)[0];
    assert_eq!(again["action"], "skipped", "{again}");
    // The label names the file's path, so the view's size depends on the temp dir's.
    let reason = again["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("nothing to do: the recall view is ~")
            && reason.ends_with(" tokens, within the target of 20257"),
        "{again}"
    );

    // A target that a fifth of everything foldable still misses: everything before the tail
    // folds, its summary held to the room left, and the view meets the target.
    let env = TestEnv::new();
    env.write("long.jsonl", &text);
    let tight = (view / 5).to_string();
    let out = env.mf(&[
        "compact",
        "long.jsonl",
        "--model",
        "extractive",
        "--target-tokens",
        &tight,
        "--min-retention",
        "0",
        "--allow-inventions",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    assert_eq!(rec["action"], "folded", "{rec}");
    assert_eq!(
        rec["span"]["toTurn"], default_to,
        "everything before the tail folds"
    );
    // The planner's remark: everything before the tail folds, its summary squeezed.
    assert_eq!(
        rec["notes"],
        serde_json::json!([Note::Plan(vec![PlanNote::Squeezed {
            target: 6752,
            held_to: 6058,
            goal: 6634
        }])
        .to_string()]),
        "{rec}"
    );
    let now = explain_json(&env, "long.jsonl", &[])["now"]["before"]["tokens"]
        .as_u64()
        .unwrap() as usize;
    assert!(
        now <= view / 5,
        "recall view is ~{now} tokens, over {}",
        view / 5
    );

    // When the verbatim tail alone is over the target, mf says so and folds what it can.
    let env = TestEnv::new();
    env.write("long.jsonl", &text);
    let args = [
        "long.jsonl",
        "--model",
        "extractive",
        "--recent",
        "100",
        "--target-tokens",
        "2000",
    ];
    let plan = explain_json(&env, args[0], &args[1..]);
    let says = |v: &Value| {
        v["notes"]
            == serde_json::json!([Note::Plan(vec![PlanNote::TargetUnmet {
                target: 2000,
                fixed: 11184
            }])
            .to_string()])
    };
    assert!(says(&plan["now"]), "{}", plan["now"]);
    let mut compact = vec!["compact"];
    compact.extend(args);
    compact.push("--json");
    let out = env.mf(&compact);
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    assert!(says(rec), "{rec}");
    assert_eq!(rec["action"], "folded", "{rec}");
    let after = rec["after"]["tokens"].as_u64().unwrap();
    assert!(after > 2000 && after < rec["before"]["tokens"].as_u64().unwrap());
    // The same words on a terminal-less human run.
    let env = TestEnv::new();
    env.write("long.jsonl", &text);
    let mut human = compact.clone();
    human.retain(|a| *a != "--json");
    let out = env.mf(&human);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        format!("{}{}", out.stdout, out.stderr).contains("cannot be met"),
        "{out:?}"
    );
}

#[test]
fn a_rollup_the_provider_rejects_leaves_the_chunk_summaries_standing() {
    const BUDGET: usize = 2000;
    let env = TestEnv::new();
    let f = env.write("long.jsonl", &testgen::facts(30, 2).to_jsonl());
    let original = read(&f);
    // Chunks are answered; a request made of summaries (the rollup) is rejected.
    let server = TestServer::respond(|r, _| {
        if r.body.contains(" · summary of turns ") {
            Reply::json(
                400,
                r#"{"error":{"type":"invalid_request_error","message":"no"}}"#,
            )
        } else {
            answer(r, BUDGET)
        }
    });
    let out = mf(
        &env,
        &["compact", "long.jsonl", "--rollup"],
        &remote_args(&server, BUDGET),
    );
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    assert_eq!(rec["action"], "folded", "{rec}");
    assert_eq!(rec["written"], true);
    // One note per rollup group the provider rejected, with the provider's error.
    let failed = Note::RollupFailed(format!(
        "openai-compatible:loopback at {}/v1/chat/completions rejected the request: HTTP 400 invalid_request_error: no",
        server.url()
    ));
    let notes = rec["notes"].as_array().unwrap();
    assert!(
        !notes.is_empty() && notes.iter().all(|n| *n == failed.to_string()),
        "{rec}"
    );
    let (chunks, rollups) = written(rec);
    assert!(chunks.len() >= 2 && rollups.is_empty(), "{rec}");
    assert_eq!(summary_lines(&f).len(), chunks.len());
    let after = explain_json(&env, "long.jsonl", &[]);
    assert!(
        after["summaries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["state"] == "standing")
    );
    assert_eq!(&read(&f)[..original.len()], &original[..]);
}
