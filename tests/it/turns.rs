//! Long agent turns (issue 13): a single-prompt session — one prompt and dozens of tool calls, the
//! shape `claude -p`, `codex exec` and `pi -p` write — is one turn, and it folds inside: the
//! prompt stays verbatim, the older tool units fold, the newest stay; no tool unit is split; the
//! recall view comes down to about a third; every summary written is honoured, and restore gives
//! back the original recall. The sessions are `testgen long` sessions in each agent's own format
//! (and chat), checked against the file as read independently (`corpus::Parsed`).

use std::path::PathBuf;

use mf::decision::Note;
use serde_json::Value;
use testgen::{Agent, LONG_PROMPT};

use crate::corpus::Parsed;
use crate::util::*;

const FORMATS: [(&str, Agent); 4] = [
    ("claude", Agent::Claude),
    ("codex", Agent::Codex),
    ("pi", Agent::Pi),
    ("chat", Agent::Chat),
];

/// A generated single-prompt session of `calls` tool calls in `format`, in the temp dir.
fn long(env: &TestEnv, format: &str, agent: Agent, calls: usize) -> PathBuf {
    let name = format!("long-{format}-{calls}.jsonl");
    env.write(&name, &testgen::long_session(agent, calls, 3))
}

/// A long session of `format` (45 tool calls) in a fresh temp dir.
struct Long {
    env: TestEnv,
    path: PathBuf,
    file: String,
}

fn long_in_new_dir(format: &str, agent: Agent) -> Long {
    let env = TestEnv::new();
    let path = long(&env, format, agent, 45);
    let file = path.file_name().unwrap().to_str().unwrap().to_string();
    Long { env, path, file }
}

/// `mf compact FILE --model extractive --force --json EXTRA…`, which must exit 0: its record.
#[track_caller]
fn compact_long(env: &TestEnv, file: &str, extra: &[&str]) -> Value {
    let mut args = vec![
        "compact",
        file,
        "--model",
        "extractive",
        "--force",
        "--json",
    ];
    args.extend_from_slice(extra);
    let out = env.mf(&args);
    assert_eq!(out.code, 0, "{args:?}: {out:?}");
    record(&out)
}

fn record(out: &Output) -> Value {
    json_lines(&out.stdout)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no record: {out:?}"))
}

/// `mf recall FILE --format chat`: the messages a model would be sent.
fn recall(env: &TestEnv, file: &str) -> Vec<Value> {
    let out = env.mf(&["recall", file, "--format", "chat"]);
    assert_eq!(out.code, 0, "{out:?}");
    json_lines(&out.stdout)
}

fn text(m: &Value) -> String {
    match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Everything that must hold after a fold of a long single-prompt session: the record says it
/// folded; each summary written names whole tool units (checked against the file as read here);
/// recall opens with mf's summary, then the prompt verbatim as a user message of its own, and
/// ends with the session's last message; `verify` is clean.
fn assert_folded_inside(env: &TestEnv, file: &str, format: &str, rec: &Value, before: &[Value]) {
    let what = format!("{file} {}", rec["reason"]);
    assert_eq!(rec["action"], "folded", "{what}: {rec}");
    let path = env.path(file);
    let parsed = Parsed::read(&path, format);
    let summaries = summary_lines(&path);
    assert!(!summaries.is_empty(), "{what}");
    for s in &summaries {
        let cov = &s["mf"]["coverage"];
        let ranges: Vec<(u32, u32)> = cov["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r[0].as_u64().unwrap() as u32, r[1].as_u64().unwrap() as u32))
            .collect();
        let problems = parsed.problems(&ranges, cov["entryCount"].as_u64().unwrap());
        assert!(problems.is_empty(), "{what}: {problems:?}");
    }
    let after = recall(env, file);
    let first = after
        .iter()
        .position(|m| m["role"] != "system" || text(m).starts_with("[summary of earlier turns"))
        .unwrap();
    assert!(
        text(&after[first]).starts_with("[summary of earlier turns"),
        "{what}: recall does not open with mf's summary: {:?}",
        &after[first]
    );
    let prompt = after
        .iter()
        .position(|m| m["role"] == "user" && text(m) == LONG_PROMPT);
    assert!(
        prompt.is_some_and(|p| p > first),
        "{what}: the prompt is not verbatim after the summary in recall"
    );
    assert_eq!(
        after.last(),
        before.last(),
        "{what}: the newest message changed"
    );
    assert!(after.len() < before.len(), "{what}: recall is no shorter");
    let v = env.mf(&["verify", file]);
    assert_eq!(v.code, 0, "{what}: {v:?}");
}

/// Restore every summary: the original recall comes back, and the original bytes are untouched.
fn assert_restores(env: &TestEnv, file: &str, original: &[u8], before: &[Value]) {
    for s in summary_lines(&env.path(file)) {
        // pi keeps it in `data`, Codex in `payload`, Claude Code and chat at the top.
        let id = s["data"]["id"]
            .as_str()
            .or(s["payload"]["id"].as_str())
            .or(s["id"].as_str())
            .map(str::to_string)
            .unwrap_or_else(|| panic!("no id on {s}"));
        let out = env.mf(&["expand", file, &id, "--restore", "--force"]);
        assert_eq!(out.code, 0, "{file}: {out:?}");
    }
    let now = read(&env.path(file));
    assert_eq!(&now[..original.len()], original, "{file}: original bytes");
    assert_eq!(recall(env, file), before, "{file}: recall after restore");
}

/// Each format under one of the tail settings, in turn (every setting on some format); the long
/// suite runs every format under every setting.
#[test]
fn a_long_single_prompt_session_of_every_agent_folds_inside_its_turn() {
    long_single_prompt_sessions_fold_inside_their_turn(false);
}

#[test]
#[ignore = "long suite (every format under every tail setting): .ci/run runs the `_long` tests by name"]
fn a_long_single_prompt_session_of_every_agent_folds_inside_its_turn_long() {
    long_single_prompt_sessions_fold_inside_their_turn(true);
}

fn long_single_prompt_sessions_fold_inside_their_turn(all: bool) {
    let settings: [&[&str]; 3] = [&[], &["--recent", "1"], &["--recent-tokens", "0"]];
    for (i, (format, agent)) in FORMATS.iter().enumerate() {
        let (format, agent) = (*format, *agent);
        for (k, flags) in settings.iter().enumerate() {
            if !all && k != i % settings.len() {
                continue;
            }
            let flags = *flags;
            let Long { env, path, file } = long_in_new_dir(format, agent);
            let original = read(&path);
            let before = recall(&env, &file);
            let mut extra = vec!["--min-retention", "0"];
            extra.extend(flags);
            let rec = compact_long(&env, &file, &extra);
            assert_folded_inside(&env, &file, format, &rec, &before);
            // The record says the long turn (turn 1) was folded inside, its prompt verbatim.
            assert_eq!(
                rec["notes"],
                serde_json::json!([Note::SplitTurn(1).to_string()]),
                "{format} {flags:?}: no note says the turn was folded inside"
            );
            let (b, a) = (
                rec["before"]["tokens"].as_f64().unwrap(),
                rec["after"]["tokens"].as_f64().unwrap(),
            );
            assert!(b > 20_000.0, "{format}: the session is {b} tokens");
            assert!(
                a <= 0.35 * b,
                "{format} {flags:?}: recall {a} of {b} tokens ({:.2})",
                a / b
            );
            assert_restores(&env, &file, &original, &before);
        }
    }
}

#[test]
fn a_target_that_cannot_be_met_folds_what_it_can_and_says_so() {
    for (format, agent) in FORMATS {
        let Long { env, file, .. } = long_in_new_dir(format, agent);
        let before = recall(&env, &file);
        let rec = compact_long(
            &env,
            &file,
            &["--min-retention", "0", "--target-tokens", "200"],
        );
        assert_folded_inside(&env, &file, format, &rec, &before);
        // The planner's remark (its words) after the note on the turn folded inside.
        let notes = rec["notes"].as_array().unwrap();
        assert_eq!(notes.len(), 2, "{format}: {rec}");
        assert_eq!(notes[0], Note::SplitTurn(1).to_string(), "{format}: {rec}");
        let said = notes[1].as_str().unwrap();
        let tokens = match format {
            "claude" => 1664,
            "codex" => 1801,
            "pi" => 1637,
            _ => 1655,
        };
        assert_eq!(
            said,
            format!(
                "the target of 200 tokens cannot be met: the preamble and verbatim tail alone are ~{tokens} tokens; folding everything before them"
            ),
            "{format}: {rec}"
        );
        assert!(rec["after"]["tokens"].as_u64().unwrap() > 200, "{rec}");
    }
}

#[test]
fn mask_stubs_the_old_results_of_a_long_turn_where_the_format_can_show_a_stub() {
    for (format, agent) in FORMATS {
        let Long { env, path, file } = long_in_new_dir(format, agent);
        let original = read(&path);
        let out = env.mf(&[
            "compact",
            &file,
            "--strategy",
            "mask",
            "--model",
            "extractive",
            "--force",
            "--json",
        ]);
        match format {
            // Claude Code and pi show a stub by what they resume from (an appended copy of
            // the result's row; a `context_edit`): the original lines stay as they were.
            "claude" | "pi" => {
                assert_eq!(out.code, 0, "{format}: {out:?}");
                let rec = record(&out);
                assert_eq!(rec["action"], "masked", "{format}: {rec}");
                let stubs = rec["summaries"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|s| s["outcome"] == "written")
                    .count();
                assert!(stubs > 20, "{format}: {stubs} stubs");
                assert!(
                    read(&path).starts_with(&original),
                    "{format}: an original byte changed"
                );
                let after = recall(&env, &file);
                assert!(
                    after
                        .iter()
                        .any(|m| m["role"] == "user" && text(m) == LONG_PROMPT),
                    "{format}: the prompt"
                );
            }
            _ => {
                assert_eq!(out.code, 0, "{format}: {out:?}");
                let rec = record(&out);
                assert_eq!(rec["action"], "masked", "{format}: {rec}");
                let stubs = file_lines(&path)
                    .into_iter()
                    .filter(|v| v["mf"]["kind"] == "stub")
                    .count();
                assert!(stubs > 20, "{format}: {stubs} stubs");
                let after = recall(&env, &file);
                assert!(
                    after
                        .iter()
                        .any(|m| m["role"] == "user" && text(m) == LONG_PROMPT),
                    "{format}: the prompt"
                );
            }
        }
    }
}

#[test]
fn a_span_budget_too_small_for_any_unit_says_so_truthfully() {
    for (format, agent) in FORMATS {
        let Long { env, file, .. } = long_in_new_dir(format, agent);
        let rec = compact_long(&env, &file, &["--max-span-tokens", "400"]);
        assert_eq!(rec["action"], "skipped", "{format}: {rec}");
        // Every unit of the long turn is over what 400 tokens leave after the framing (Codex
        // writes each tool call and result as more units than the others).
        let units = if format == "codex" { 47 } else { 35 };
        assert_eq!(
            rec["reason"],
            format!(
                "not worth a call: each of the {units} units that would fold is larger than one call may carry (--max-span-tokens 400 leaves ~0 tokens for the transcript after the request's own ~650 tokens of framing); they stay verbatim"
            ),
            "{format}: {rec}"
        );
    }
}

/// Over tails and budgets: every fold is lawful (whole tool units, nothing before the prompt's
/// turn left raw while the prompt folds, verify clean) and the prompt is verbatim in recall.
///
/// The default run takes each of the 40 settings on one format (a quarter of the matrix); the
/// long suite every setting on every format.
#[test]
fn long_turns_fold_lawfully_under_every_tail_and_span_setting() {
    long_turns_fold_lawfully(4, 15);
}

#[test]
#[ignore = "long suite (every format under every setting): .ci/run runs the `_long` tests by name"]
fn long_turns_fold_lawfully_under_every_tail_and_span_setting_long() {
    long_turns_fold_lawfully(1, 80);
}

/// Format `i` under the settings `k` (in order) with `(i + k) % every == 0`; at least
/// `min_folds` of those runs fold (pi refuses some settings up front), so the checks mean something.
fn long_turns_fold_lawfully(every: usize, min_folds: usize) {
    let mut folds = 0;
    for (i, (format, agent)) in FORMATS.into_iter().enumerate() {
        let env = TestEnv::new();
        let src = testgen::long_session(agent, 30, 11);
        let mut k = 0;
        for recent in ["0", "1", "3", "8", "30"] {
            for recent_tokens in ["0", "800", "3000", "100000"] {
                for span in [None, Some("1500")] {
                    k += 1;
                    if (i + k) % every != 0 {
                        continue;
                    }
                    let file = format!("{format}-{recent}-{recent_tokens}-{span:?}.jsonl");
                    env.write(&file, &src);
                    let mut args = vec![
                        "compact",
                        &file,
                        "--model",
                        "extractive",
                        "--min-retention",
                        "0",
                        "--force",
                        "--trigger",
                        "0",
                        "--recent",
                        recent,
                        "--recent-tokens",
                        recent_tokens,
                        "--json",
                    ];
                    if let Some(s) = span {
                        args.extend(["--max-span-tokens", s]);
                    }
                    let out = env.mf(&args);
                    let what = format!(
                        "{format} --recent {recent} --recent-tokens {recent_tokens} --max-span-tokens {span:?}"
                    );
                    if format == "pi"
                        && out.code == 1
                        && out.stderr.contains("cannot show what this would leave")
                    {
                        continue; // pi shows one run after its summary; said up front
                    }
                    assert_eq!(out.code, 0, "{what}: {out:?}");
                    let rec = record(&out);
                    let path = env.path(&file);
                    let parsed = Parsed::read(&path, format);
                    for s in summary_lines(&path) {
                        let cov = &s["mf"]["coverage"];
                        let ranges: Vec<(u32, u32)> = cov["lines"]
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|r| (r[0].as_u64().unwrap() as u32, r[1].as_u64().unwrap() as u32))
                            .collect();
                        let p = parsed.problems(&ranges, cov["entryCount"].as_u64().unwrap());
                        assert!(p.is_empty(), "{what}: {p:?}");
                    }
                    if rec["action"] == "folded" {
                        folds += 1;
                        let after = recall(&env, &file);
                        assert!(
                            after
                                .iter()
                                .any(|m| m["role"] == "user" && text(m) == LONG_PROMPT),
                            "{what}: the prompt is not verbatim in recall"
                        );
                        let v = env.mf(&["verify", &file]);
                        assert_eq!(v.code, 0, "{what}: {v:?}");
                    }
                }
            }
        }
    }
    assert!(folds >= min_folds, "only {folds} folds");
}

/// Flip to `true` once the fidelity lane's audit (issue 14) is merged: the size target then holds
/// with the default `--min-retention` too (today the retention audit declines some extractive
/// summaries of agent sessions as lossy).
const TARGET_WITH_DEFAULT_AUDIT: bool = false;

#[test]
fn with_default_flags_a_long_session_folds_to_a_third_or_is_declined_on_the_record() {
    for (format, agent) in FORMATS {
        let Long { env, file, .. } = long_in_new_dir(format, agent);
        let before = recall(&env, &file);
        let rec = compact_long(&env, &file, &[]);
        let (b, a) = (
            rec["before"]["tokens"].as_f64().unwrap(),
            rec["after"]["tokens"].as_f64().unwrap(),
        );
        eprintln!("{format}: {} {b} -> {a} ({:.2})", rec["action"], a / b);
        match rec["action"].as_str().unwrap() {
            "folded" => {
                assert_folded_inside(&env, &file, format, &rec, &before);
                assert!(a <= 0.35 * b, "{format}: {a} of {b}");
            }
            "declined" if !TARGET_WITH_DEFAULT_AUDIT => {
                // Declined as lossy, in the documented words with the audit's detail.
                let lossy = &rec["summaries"][0];
                let detail = file_lines(&env.path(&file))
                    .into_iter()
                    .find(|v| v["mf"]["kind"] == "decline")
                    .expect("a decline record");
                assert_eq!(detail["mf"]["reason"], "lossy", "{format}: {rec}");
                let why = detail["mf"]["detail"].as_str().unwrap();
                assert!(!why.is_empty());
                for said in [&rec["reason"], &lossy["outcome"]] {
                    assert!(
                        said.as_str().unwrap().contains(why),
                        "{format}: {said} / {why}"
                    );
                }
                assert_eq!(
                    recall(&env, &file),
                    before,
                    "{format}: a decline changed recall"
                );
            }
            other => panic!("{format}: {other}: {}", rec["reason"]),
        }
    }
}

#[test]
#[ignore = "needs MF_CORPUS (the shared corpus; .ci/run sets it)"]
fn long_corpus_turns_fold_inside() {
    let dir = corpus_dir();
    // One turn of 161 entries (~44k tokens) after Claude Code's own compaction; and a Codex
    // rollout of two turns whose first holds nearly everything.
    for (file, format, limit) in [
        (
            "claude-code/cc-2.1.39-autocompact-hooks-progress-1512l.jsonl",
            "claude",
            0.5,
        ),
        (
            "codex/codex-0.40.0-vscode-shell-base64-image.jsonl",
            "codex",
            0.35,
        ),
    ] {
        for flags in [&[][..], &["--recent", "1"]] {
            let env = TestEnv::new();
            let name = file.rsplit('/').next().unwrap();
            let dest = env.path(name);
            std::fs::write(&dest, read(&dir.join(file))).unwrap();
            let original = read(&dest);
            let before = recall(&env, name);
            let mut args = vec![
                "compact",
                name,
                "--model",
                "extractive",
                "--min-retention",
                "0",
                "--force",
                "--json",
            ];
            args.extend(flags);
            let out = env.mf(&args);
            assert_eq!(out.code, 0, "{name} {flags:?}: {out:?}");
            let rec = record(&out);
            assert_eq!(rec["action"], "folded", "{name} {flags:?}: {rec}");
            let parsed = Parsed::read(&dest, format);
            for s in summary_lines(&dest) {
                let cov = &s["mf"]["coverage"];
                let ranges: Vec<(u32, u32)> = cov["lines"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|r| (r[0].as_u64().unwrap() as u32, r[1].as_u64().unwrap() as u32))
                    .collect();
                let p = parsed.problems(&ranges, cov["entryCount"].as_u64().unwrap());
                assert!(p.is_empty(), "{name}: {p:?}");
            }
            let (b, a) = (
                rec["before"]["tokens"].as_f64().unwrap(),
                rec["after"]["tokens"].as_f64().unwrap(),
            );
            assert!(a <= limit * b, "{name} {flags:?}: {a} of {b}");
            assert_eq!(env.mf(&["verify", name]).code, 0, "{name}");
            let after = recall(&env, name);
            assert_eq!(after.last(), before.last(), "{name}");
            if format == "codex" {
                // A prompt (the IDE's wrapping included) stays verbatim unless its whole turn
                // folded: a question is never summarized while any of its answer stays raw.
                // (The Claude Code session's prompt lies behind its own compaction: it was
                // never in recall.)
                let prompts: Vec<usize> = (0..before.len())
                    .filter(|&i| {
                        before[i]["role"] == "user"
                            && text(&before[i]).starts_with("# Context from my IDE")
                    })
                    .collect();
                for (k, &i) in prompts.iter().enumerate() {
                    if after.contains(&before[i]) {
                        continue;
                    }
                    let end = prompts.get(k + 1).copied().unwrap_or(before.len());
                    let raw = before[i + 1..end].iter().find(|m| after.contains(m));
                    assert!(
                        raw.is_none(),
                        "{name} {flags:?}: a prompt folded while its answer stays: {:.80}",
                        text(&before[i])
                    );
                }
            }
            assert_restores(&env, name, &original, &before);
        }
    }
}
