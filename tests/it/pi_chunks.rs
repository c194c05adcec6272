//! pi's chunked folds (issue 24, point 4). A pi session shows one unbroken run of entries after
//! its latest compaction entry, so a fold there must cover a prefix of what pi sends and keep an
//! unbroken tail. The planner plans only such folds (so `explain` and `compact` agree on every pi
//! session), and when one chunk of a chunked fold is declined, what still stands is written as pi
//! can show it — the chunks before it, or nothing — and the record says which chunk and why; the
//! run exits as a declined fold does, never as an error after paying.

use std::path::Path;

use serde_json::Value;

use crate::server::{Recorded, Reply, TestServer, openai_ok};
use crate::util::*;

/// What the good chunks get: a short summary with nothing in it the span does not say.
const BENIGN: &str = "The assistant worked through the request, reading the code and running the tools it needed, and reported what it found.";

/// How the loopback provider answers the chunk it is told to spoil.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Bad {
    /// It repeats the instruction it was given (the audit declines an echo at any threshold).
    Echo,
    /// It answers longer than the span (declined: not smaller).
    Long,
    /// It fails (HTTP 500, after mf's retries).
    Fails,
}

/// Which request the provider spoils.
#[derive(Clone, Copy, Debug)]
enum Which {
    /// The n-th to arrive (0-based; with `-j 1` the chunks are asked in order).
    Nth(usize),
    /// The one whose transcript holds this text.
    #[allow(dead_code)]
    Holding(&'static str),
}

/// A loopback OpenAI-compatible provider that answers the request `which` names as `how` says
/// and every other one with [`BENIGN`].
fn provider(which: Which, how: Bad) -> TestServer {
    TestServer::respond(move |req: &Recorded, n| {
        let body = req.json();
        let spoil = match which {
            Which::Nth(k) => n == k,
            Which::Holding(text) => body["messages"][1]["content"]
                .as_str()
                .is_some_and(|u| u.contains(text)),
        };
        if !spoil {
            return openai_ok(BENIGN);
        }
        match how {
            Bad::Echo => openai_ok(body["messages"][0]["content"].as_str().unwrap()),
            Bad::Long => openai_ok(&BENIGN.repeat(400)),
            Bad::Fails => Reply::json(500, r#"{"error":{"message":"boom","type":"server_error"}}"#),
        }
    })
}

/// What pi sends from a session (its context builder, as `scripts/agents/check-agents.sh pi`
/// shows it): the path from the leaf; after its latest compaction entry, that entry's summary,
/// then the path's messages from its first kept entry on. Returns the summary (if any) and the
/// line numbers of the messages sent.
fn pi_sends(bytes: &[u8]) -> (Option<String>, Vec<u32>) {
    let lines = numbered(bytes);
    let path = pi_path(&lines);
    let is_message = |v: &Value| v["type"] == "message";
    let Some(c) = path.iter().rposition(|(_, v)| v["type"] == "compaction") else {
        let sent = path.iter().filter(|(_, v)| is_message(v)).map(|(n, _)| *n);
        return (None, sent.collect());
    };
    let compaction = &path[c].1;
    let from = match compaction["firstKeptEntryId"].as_str() {
        Some(id) => path.iter().position(|(_, v)| v["id"] == id).unwrap_or(c),
        None => c,
    };
    let sent = path[from..]
        .iter()
        .enumerate()
        .filter(|&(k, (_, v))| from + k != c && is_message(v))
        .map(|(_, (n, _))| *n)
        .collect();
    (compaction["summary"].as_str().map(str::to_string), sent)
}

/// The lines an mf summary line covers.
fn covered_lines(claim: &Value) -> Vec<u32> {
    claim["mf"]["coverage"]["lines"]
        .as_array()
        .map(|rs| {
            rs.iter()
                .flat_map(|r| r[0].as_u64().unwrap() as u32..=r[1].as_u64().unwrap() as u32)
                .collect()
        })
        .unwrap_or_default()
}

fn compact(env: &TestEnv, file: &Path, server: &TestServer, extra: &[&str]) -> (Output, Value) {
    let url = format!("{}/v1", server.url());
    let mut args = vec![
        "compact",
        file.to_str().unwrap(),
        "--model",
        "openai-compatible:loopback",
        "--base-url",
        &url,
        "--retries",
        "0",
        "--force",
        "--json",
    ];
    args.extend_from_slice(extra);
    let out = env.mf(&args);
    let rec = out
        .stdout
        .lines()
        .next()
        .and_then(|l| serde_json::from_str(l).ok())
        .unwrap_or(Value::Null);
    (out, rec)
}

/// The chunks a fold plans on this file (every request of a run whose replies are all good):
/// the turns each covers.
fn chunks(source: &Path, flags: &[&str]) -> Vec<(u64, u64)> {
    let env = TestEnv::without_audit();
    let f = env.path("chunks.jsonl");
    std::fs::copy(source, &f).unwrap();
    let server = provider(Which::Nth(usize::MAX), Bad::Echo);
    let (out, rec) = compact(&env, &f, &server, flags);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(rec["action"], "folded", "{rec:#}");
    let turns: Vec<(u64, u64)> = rec["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["fromTurn"].as_u64().unwrap(),
                s["toTurn"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(turns.len(), server.requests().len());
    turns
}

fn chunk_count(fixture: &str, flags: &[&str]) -> usize {
    chunks(&self::fixture(fixture), flags).len()
}

/// One chunk of a chunked fold on a pi session is declined: the run exits as a declined fold
/// does, asks about no chunk after it (one call at a time), writes the first `keep` chunks as pi
/// can show them (or nothing), and its record says which chunk was declined and why.
fn declined_chunk(source: &Path, flags: &[&str], bad: usize, keep: usize, how: Bad) {
    let fixture = source.file_name().unwrap().to_str().unwrap();
    let what = format!("{fixture} {flags:?}, chunk {bad} {how:?}");
    let env = TestEnv::without_audit();
    let f = env.path(fixture);
    std::fs::copy(source, &f).unwrap();
    let original = read(&f);
    let server = provider(Which::Nth(bad), how);
    let mut args = flags.to_vec();
    args.extend(["-j", "1"]);
    let (out, rec) = compact(&env, &f, &server, &args);
    let want = if how == Bad::Fails { 3 } else { 0 };
    assert_eq!(out.code, want, "{what}: {out:?}");
    assert!(!out.stderr.contains("unbroken run"), "{what}: {out:?}");
    // Nothing after the declined chunk was asked about.
    assert_eq!(server.requests().len(), bad + 1, "{what}: {rec:#}");
    let summaries = rec["summaries"].as_array().unwrap();
    let written: Vec<&Value> = summaries
        .iter()
        .filter(|s| written_outcome(&s["outcome"]))
        .collect();
    // The chunks before it are written, unless all they would save is under a tenth of the view
    // (then they are declined as a whole, as on any file).
    let under_saving = under_saving(summaries);
    assert_eq!(written.len() + under_saving, keep, "{what}: {rec:#}");
    let keep = written.len();
    // The chunks planned that stand neither written nor declined say why.
    for s in summaries.iter().filter(|s| !written.contains(s)) {
        let o = s["outcome"].as_str().unwrap();
        assert!(
            o.starts_with("declined")
                || o.starts_with("not written:")
                || o.starts_with("not asked:"),
            "{what}: {o}"
        );
    }
    // The declined chunk is named, with the audit's (or the provider's) reason.
    let declined = match how {
        Bad::Fails => &rec["failures"][0],
        _ => &summaries[bad],
    };
    assert!(declined["fromTurn"].is_u64(), "{what}: {declined:#}");
    match how {
        Bad::Echo => assert!(
            declined["outcome"]
                .as_str()
                .unwrap()
                .contains("it repeats the instruction"),
            "{what}: {declined:#}"
        ),
        Bad::Long => assert!(
            declined["outcome"]
                .as_str()
                .unwrap()
                .contains("not shorter"),
            "{what}: {declined:#}"
        ),
        Bad::Fails => assert!(
            declined["message"].as_str().unwrap().contains("500"),
            "{what}: {declined:#}"
        ),
    }
    let now = read(&f);
    assert_eq!(&now[..original.len()], &original[..], "{what}");
    let (summary, sent) = pi_sends(&now);
    let (_, sent_before) = pi_sends(&original);
    if keep == 0 {
        assert_eq!(rec["action"], "declined", "{what}: {rec:#}");
        assert_eq!(sent, sent_before, "{what}: pi sends something else");
        assert!(summary.is_none(), "{what}");
    } else {
        assert_eq!(rec["action"], "folded", "{what}: {rec:#}");
        // pi sends the chunks written, as summaries, then an unbroken run: every message of
        // the original path after what they cover (the prompt of a turn folded inside goes
        // into the summary pi sends).
        let summary = summary.unwrap_or_else(|| panic!("{what}: pi sends no summary"));
        let claims: Vec<Value> = numbered(&now[original.len()..])
            .into_iter()
            .map(|(_, v)| v)
            .filter(|v| v["type"] == "custom" && v["data"]["content"].is_string())
            .collect();
        assert_eq!(claims.len(), keep, "{what}");
        let mut covered: Vec<u32> = Vec::new();
        for c in &claims {
            assert!(
                summary.contains(c["data"]["content"].as_str().unwrap()),
                "{what}: pi's summary lacks a chunk written"
            );
            covered.extend(covered_lines(c));
        }
        let last = *covered.iter().max().unwrap();
        let expected: Vec<u32> = sent_before.iter().copied().filter(|n| *n > last).collect();
        assert_eq!(sent, expected, "{what}: pi does not send the unbroken rest");
        let (code, report) = crate::trust::verify(&env, &f);
        assert_eq!(code, 0, "{what}: {report:#}");
    }
    // `explain` now says what `compact` would do: nothing until the declined span grows (a
    // chunk the summarizer failed on is asked again; chunks cut back to a turn seam may fold
    // anew with that turn's prompt left verbatim).
    let file = f.to_str().unwrap();
    let args = [
        &[
            "explain",
            file,
            "--model",
            "openai-compatible:loopback",
            "--json",
        ][..],
        flags,
    ]
    .concat();
    let ex: Value = serde_json::from_str(&env.mf_ok(&args).stdout).unwrap();
    if how != Bad::Fails && keep == bad {
        assert_eq!(ex["now"]["action"], "skipped", "{what}: {:#}", ex["now"]);
    }
}

#[test]
fn a_pi_chunk_declined_leaves_the_chunks_before_it_written_and_exits_as_a_declined_fold() {
    for (fixture, flags) in [
        (
            "pi-0.73.1-long-run.jsonl",
            &["--max-span-tokens", "1500"][..],
        ),
        ("pi-session-v3.jsonl", &["--max-span-tokens", "1500"][..]),
    ] {
        let n = chunk_count(fixture, flags);
        assert!(n >= 2, "{fixture}: {n} chunks");
        let source = self::fixture(fixture);
        for bad in 0..n {
            declined_chunk(&source, flags, bad, bad, Bad::Echo);
        }
        declined_chunk(&source, flags, n - 1, n - 1, Bad::Long);
        declined_chunk(&source, flags, 1, 1, Bad::Fails);
    }
}

/// A pi session whose first turn is too large for one call, then eight short turns.
fn big_turn_then_short_ones(env: &TestEnv) -> std::path::PathBuf {
    let text = std::fs::read_to_string(fixture("pi-0.73.1-long-run.jsonl")).unwrap();
    let mut last = numbered(text.as_bytes()).last().unwrap().1["id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut out = text;
    for k in 0..8 {
        let (u, a) = (format!("f{k:03}a00"), format!("f{k:03}b00"));
        let ask = format!(
            "turn {}: please check config/service-{k}.toml and report the port it sets; {}",
            k + 2,
            "the deploy notes say it changed. ".repeat(20)
        );
        let answer = format!(
            "config/service-{k}.toml sets port {}; {}",
            9000 + k,
            "nothing else in it changed since the last deploy. ".repeat(20)
        );
        let user = serde_json::json!({"type": "message", "id": u, "parentId": last,
            "timestamp": "2026-12-01T12:31:00.000Z",
            "message": {"role": "user", "content": [{"type": "text", "text": ask}], "timestamp": 1796128260000u64}});
        let assistant = serde_json::json!({"type": "message", "id": a, "parentId": u,
            "timestamp": "2026-12-01T12:31:01.000Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": answer}],
                "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                "stopReason": "stop", "timestamp": 1796128261000u64}});
        out.push_str(&format!("{user}\n{assistant}\n"));
        last = a;
    }
    env.write("pi-big-turn.jsonl", &out)
}

/// A turn too large for one call, folded inside at tool-unit seams, keeps its prompt verbatim
/// (no summary holds a question while part of its answer stays raw), and pi can show only one
/// run after its summaries: the fold stops before the turn after it, and says so. Before, explain
/// planned the whole fold and compact refused it (exit 1). A chunk declined among those that
/// stand leaves the ones before it written.
#[test]
fn a_pi_fold_stops_before_what_pi_cannot_show_after_a_turn_too_large_for_one_call() {
    let env = TestEnv::new();
    let source = big_turn_then_short_ones(&env);
    let flags = &["--max-span-tokens", "1500"][..];
    let ex: Value = serde_json::from_str(
        &env.mf_ok(
            &[
                &[
                    "explain",
                    source.to_str().unwrap(),
                    "--model",
                    "extractive",
                    "--json",
                ][..],
                flags,
            ]
            .concat(),
        )
        .stdout,
    )
    .unwrap();
    let plan = &ex["now"];
    assert_eq!(plan["action"], "planned", "{plan:#}");
    assert_eq!(plan["span"]["toTurn"], 1, "{plan:#}");
    let note = mf::decision::Note::Plan(vec![mf::fold::plan::PlanNote::OneRun {
        turn: 1,
        why: mf::fold::plan::KeptFor::Prompt,
        chunks: 5,
        from_turn: 1,
    }]);
    assert!(
        plan["notes"]
            .as_array()
            .unwrap()
            .contains(&Value::from(note.to_string())),
        "{plan:#}"
    );
    let turns = chunks(&source, flags);
    assert!(
        turns.len() >= 2 && turns.iter().all(|t| *t == (1, 1)),
        "{turns:?}"
    );
    for bad in 0..turns.len() {
        declined_chunk(&source, flags, bad, bad, Bad::Echo);
    }
}

// ---- explain and compact agree on every pi session -----------------------------------------

/// The flag sets the agreement is checked under: the defaults, chunked folds, and every flag
/// that keeps entries verbatim inside a fold's reach.
const FLAG_SETS: &[&[&str]] = &[
    &[],
    &["--trigger", "2", "--recent", "2"],
    &["--max-span-tokens", "1000", "--trigger", "2"],
    &["--max-span-tokens", "1500"],
    &["--max-span-tokens", "2000"],
    &["--protect", "user", "--trigger", "2"],
    &["--size", "30", "--recent", "4", "--trigger", "2"],
    &["--target-tokens", "1500", "--max-span-tokens", "1200"],
];

/// `explain --json`'s "now" for `file` under `flags`, then `compact --model extractive` on it
/// under the same flags: the fold explain plans is the fold compact plans and asks about (the
/// same span, chunks and verbatim entries), or the same skip; compact never refuses it.
/// Returns whether compact wrote anything.
fn explain_then_compact(env: &TestEnv, file: &Path, flags: &[&str], what: &str) -> bool {
    let name = file.to_str().unwrap();
    let mut args = vec!["explain", name, "--model", "extractive", "--json"];
    args.extend_from_slice(flags);
    let ex: Value = serde_json::from_str(&env.mf_ok(&args).stdout).unwrap();
    let plan = &ex["now"];
    let mut args = vec![
        "compact",
        name,
        "--model",
        "extractive",
        "--json",
        "--force",
    ];
    args.extend_from_slice(flags);
    let out = env.mf(&args);
    let rec: Value = serde_json::from_str(out.stdout.lines().next().unwrap_or("null"))
        .unwrap_or_else(|_| panic!("{what}: {out:?}"));
    assert_eq!(
        out.code, 0,
        "{what}: explain planned {plan:#}\ncompact: {out:?}"
    );
    match plan["action"].as_str().unwrap() {
        "skipped" => {
            assert_eq!(rec["action"], "skipped", "{what}: {plan:#}\n{rec:#}");
            assert_eq!(rec["reason"], plan["reason"], "{what}");
            assert_eq!(rec["span"], plan["span"], "{what}");
        }
        "planned" => {
            assert!(
                rec["action"] == "folded" || rec["action"] == "declined",
                "{what}: explain planned {plan:#}\ncompact: {rec:#}"
            );
            assert_eq!(rec["span"], plan["span"], "{what}: {plan:#}\n{rec:#}");
            assert_eq!(
                rec["verbatim"], plan["verbatim"],
                "{what}: {plan:#}\n{rec:#}"
            );
            // As many chunks asked about (or, after a decline, left unasked) as planned calls.
            let calls = plan["reason"]
                .as_str()
                .unwrap()
                .split(" in ")
                .nth(1)
                .and_then(|s| s.split(' ').next())
                .map_or(1, |n| if n == "one" { 1 } else { n.parse().unwrap() });
            assert_eq!(
                rec["summaries"].as_array().unwrap().len(),
                calls,
                "{what}: {plan:#}\n{rec:#}"
            );
            for note in plan["notes"].as_array().into_iter().flatten() {
                assert!(
                    rec["notes"].as_array().unwrap().contains(note),
                    "{what}: {note} in explain, not in compact: {rec:#}"
                );
            }
        }
        other => panic!("{what}: explain says {other}: {plan:#}"),
    }
    rec["written"] == true
}

/// For one pi session: under every flag set, explain and compact agree on the session as it is,
/// again on what that compact left (an earlier mf fold), and on the session after an earlier mf
/// fold made with other flags. Returns how many of the checks compacted something.
fn explain_agrees_with_compact(env: &TestEnv, source: &Path, flag_sets: &[&[&str]]) -> usize {
    let name = source.file_name().unwrap().to_str().unwrap();
    let fresh = |tag: &str| {
        let f = env.path(&format!("{tag}-{name}"));
        std::fs::copy(source, &f).unwrap();
        f
    };
    let mut folded = 0;
    for (k, flags) in flag_sets.iter().enumerate() {
        let f = fresh(&format!("a{k}"));
        for round in 1..=2 {
            let what = format!("{name} {flags:?} round {round}");
            folded += usize::from(explain_then_compact(env, &f, flags, &what));
        }
        // An earlier mf fold made with other flags.
        let f = fresh(&format!("b{k}"));
        let earlier = &["--trigger", "2", "--recent", "8"];
        explain_then_compact(env, &f, earlier, &format!("{name} earlier fold"));
        let what = format!("{name} {flags:?} after an earlier fold");
        folded += usize::from(explain_then_compact(env, &f, flags, &what));
    }
    folded
}

/// Each pi fixture under a third of the flag sets (every flag set on a third of the fixtures,
/// in turn); the long suite runs every fixture under every flag set.
#[test]
fn explain_plans_what_compact_does_on_pi_fixtures() {
    explain_plans_what_compact_does(3);
}

#[test]
#[ignore = "long suite (every pi fixture under every flag set): .ci/run runs the `_long` tests by name"]
fn explain_plans_what_compact_does_on_every_pi_fixture_long() {
    explain_plans_what_compact_does(1);
}

/// Fixture `i` under the flag sets `k` with `(i + k) % every == 0`.
fn explain_plans_what_compact_does(every: usize) {
    let env = TestEnv::without_audit();
    let mut fixtures: Vec<_> = std::fs::read_dir(fixture(""))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("pi-"))
        .collect();
    fixtures.sort();
    assert!(fixtures.len() >= 8, "{fixtures:?}");
    let (mut folded, mut sets) = (0, 0);
    for (i, f) in fixtures.iter().enumerate() {
        let chosen: Vec<&[&str]> = (0..FLAG_SETS.len())
            .filter(|k| (i + k) % every == 0)
            .map(|k| FLAG_SETS[k])
            .collect();
        sets += chosen.len();
        folded += explain_agrees_with_compact(&env, f, &chosen);
    }
    // The checks fold often enough to mean something (most flag sets fold each fixture).
    assert!(folded >= sets / 2, "{folded} of {sets}");
}

#[test]
#[ignore = "needs MF_CORPUS (the shared corpus; .ci/run sets it)"]
fn explain_plans_what_compact_does_on_every_pi_corpus_session() {
    let env = TestEnv::without_audit();
    let dir = corpus_dir().join("pi");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no pi sessions in {}", dir.display());
    // The corpus sessions are large: the defaults, a chunked fold, and each flag that keeps
    // entries verbatim (the fixtures take every flag set).
    let sets: Vec<&[&str]> = [0, 2, 5, 6].iter().map(|&k| FLAG_SETS[k]).collect();
    let folded: usize = files
        .iter()
        .map(|f| explain_agrees_with_compact(&env, f, &sets))
        .sum();
    assert!(folded > 0);
}

// ---- the other formats ---------------------------------------------------------------------

/// On Claude Code, Codex and chat files, which show summaries first and then whatever stays, a
/// declined chunk never errors either: every other chunk is written, the declined one is named
/// with the audit's reason, and the file verifies clean.
#[test]
fn a_declined_chunk_never_errors_on_claude_code_codex_or_chat_files() {
    for (fixture, flags) in [
        ("claude-session.jsonl", &["--max-span-tokens", "2000"][..]),
        ("codex-rollout.jsonl", &["--max-span-tokens", "2000"][..]),
        (
            "codex-0.171.0-multiturn.jsonl",
            &["--max-span-tokens", "1500"][..],
        ),
        (
            "incident-northwind.jsonl",
            &["--max-span-tokens", "1500"][..],
        ),
    ] {
        let n = chunk_count(fixture, flags);
        assert!(n >= 2, "{fixture}: {n} chunks");
        for bad in 0..n {
            let what = format!("{fixture} {flags:?}, chunk {bad}");
            let env = TestEnv::without_audit();
            let f = env.copy_fixture(fixture);
            let server = provider(Which::Nth(bad), Bad::Echo);
            let mut args = flags.to_vec();
            args.extend(["-j", "1"]);
            let (out, rec) = compact(&env, &f, &server, &args);
            assert_eq!(out.code, 0, "{what}: {out:?}");
            assert_eq!(server.requests().len(), n, "{what}");
            let summaries = rec["summaries"].as_array().unwrap();
            let written = summaries
                .iter()
                .filter(|s| written_outcome(&s["outcome"]))
                .count();
            // Every other chunk is written, unless all they would save is under a tenth of the
            // view (then the fold is declined as a whole, as on any file).
            let under_saving = under_saving(summaries);
            assert_eq!(written + under_saving, n - 1, "{what}: {rec:#}");
            let action = if written > 0 { "folded" } else { "declined" };
            assert_eq!(rec["action"], action, "{what}: {rec:#}");
            assert!(
                summaries[bad]["outcome"]
                    .as_str()
                    .unwrap()
                    .contains("it repeats the instruction"),
                "{what}: {rec:#}"
            );
            let (code, report) = crate::trust::verify(&env, &f);
            assert_eq!(code, 0, "{what}: {report:#}");
        }
    }
}

/// How many of a record's summaries were declined because the fold would save too little.
fn under_saving(summaries: &[Value]) -> usize {
    summaries
        .iter()
        .filter(|s| {
            s["outcome"]
                .as_str()
                .unwrap()
                .contains("the fold would save")
        })
        .count()
}
