//! What mf writes to an agent's session, as the agent will read it (issue 13, points 5 and 6):
//! streamed Claude Code rows merge only within one response; a write cut short by a crash counts
//! for nothing — not in recall, not in `compact`, reported by `verify`, written again by the next
//! `compact` — in all three agent formats, under the rule each agent applies to honour it; a
//! summary the agent's own compaction took over is information for `verify`; a restore after
//! Claude Code's own compaction keeps the agent's order. The real agents were checked by hand
//! (`scripts/agents/kill-loop.sh`); here their rules are applied to the lines, without Node.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::trust::{problem_kinds, verify};
use crate::util::*;

fn lines_of(bytes: &[u8]) -> Vec<Value> {
    bytes
        .split(|&b| b == b'\n')
        .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
        .collect()
}

/// A Claude Code session as a server that answers every request with one fixed message id
/// writes it: every assistant row's `message.id` the same.
fn fixed_ids(fixture_name: &str) -> String {
    let mut out = String::new();
    for l in std::fs::read_to_string(fixture(fixture_name))
        .unwrap()
        .lines()
    {
        let mut v: Value = serde_json::from_str(l).unwrap();
        if v["type"] == "assistant" && v["message"]["id"].is_string() {
            v["message"]["id"] = "msg_fixed".into();
        }
        out.push_str(&serde_json::to_string(&v).unwrap());
        out.push('\n');
    }
    out
}

fn entries(env: &TestEnv, p: &Path) -> u64 {
    verify(env, p).1["entries"].as_u64().unwrap()
}

fn recall_of(env: &TestEnv, p: &Path) -> Vec<Value> {
    let out = env.mf(&["recall", p.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{out:?}");
    json_lines(&out.stdout)
}

/// A recall with the ids of summaries in their labels made one (`msg-summary-1-9.2` as
/// `msg-summary-1-9`).
fn same_id(recall: &[Value]) -> String {
    let text = serde_json::to_string(recall).unwrap();
    regex::Regex::new(r"(msg-summary-[0-9]+-[0-9]+)\.[0-9]+\.\]")
        .unwrap()
        .replace_all(&text, "$1.]")
        .into_owned()
}

/// Every tool result in a recall follows the call it answers.
fn assert_paired(recall: &[Value]) {
    let mut calls = std::collections::HashSet::new();
    for m in recall {
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            calls.insert(c["id"].as_str().unwrap().to_string());
        }
        if m["role"] == "tool" {
            let id = m["tool_call_id"].as_str().unwrap();
            assert!(calls.contains(id), "a tool result without its call: {m}");
        }
    }
}

#[test]
fn a_message_id_that_recurs_turns_later_is_a_new_response() {
    let env = TestEnv::new();
    for name in ["claude-session.jsonl", "claude-compacted.jsonl"] {
        let own = env.copy_fixture(name);
        let fixed = env.write(&format!("fixed-{name}"), &fixed_ids(name));
        // The same entries (48 for 48, not fewer), the same recall: each reply in its own turn.
        assert_eq!(entries(&env, &fixed), entries(&env, &own), "{name}");
        let (a, b) = (recall_of(&env, &own), recall_of(&env, &fixed));
        assert_eq!(a, b, "{name}: a later reply moved into an earlier message");
        assert_paired(&b);
        let replies = |r: &[Value]| r.iter().filter(|m| m["role"] == "assistant").count();
        assert!(replies(&b) >= 5, "{name}");
        // After a fold, too: every kept assistant row stays, every result has its call.
        let out = env.mf(&[
            "compact",
            fixed.to_str().unwrap(),
            "--model",
            "extractive",
            "--recent",
            "2",
            "--trigger",
            "0",
            "--force",
        ]);
        assert_eq!(out.code, 0, "{out:?}");
        let after = recall_of(&env, &fixed);
        assert!(
            after[0]["content"]
                .as_str()
                .unwrap()
                .starts_with("[summary")
        );
        assert_paired(&after);
        assert_eq!(after[1..], a[a.len() - (after.len() - 1)..], "{name}");
    }
}

/// The agent formats, their fixtures, and whether the agent honours mf's last write in these
/// bytes, by the agent's own rule (verified with the real agents by the kill loop):
/// - Claude Code relinks nothing unless every row the last boundary preserves is in the file
///   (mf's summary row, written last, is preserved first);
/// - Codex honours a `compacted` line only when it parses (mf writes it last);
/// - pi honours a `compaction` entry only when it parses (mf writes it last).
const AGENTS: &[(&str, &str)] = &[
    ("claude", "claude-session.jsonl"),
    ("codex", "codex-rollout.jsonl"),
    ("pi", "pi-session-v3.jsonl"),
];

fn agent_honours(agent: &str, appended: &[u8]) -> bool {
    let rows = lines_of(appended);
    match agent {
        "claude" => {
            let Some(b) = rows
                .iter()
                .rev()
                .find(|r| r["subtype"] == "compact_boundary")
            else {
                return false;
            };
            let have: std::collections::HashSet<&str> =
                rows.iter().filter_map(|r| r["uuid"].as_str()).collect();
            b["compactMetadata"]["preservedMessages"]["uuids"]
                .as_array()
                .unwrap()
                .iter()
                .take(1)
                .all(|u| have.contains(u.as_str().unwrap()))
        }
        "codex" => rows.iter().any(|r| r["type"] == "compacted"),
        _ => rows.iter().any(|r| r["type"] == "compaction"),
    }
}

fn compact(env: &TestEnv, p: &Path) -> Value {
    let out = env.mf(&[
        "compact",
        p.to_str().unwrap(),
        "--model",
        "extractive",
        "--recent",
        "2",
        "--force",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    json_lines(&out.stdout).remove(0)
}

fn standing(env: &TestEnv, p: &Path) -> u64 {
    verify(env, p).1["standing"].as_u64().unwrap()
}

#[test]
fn a_write_cut_short_counts_for_nothing_until_the_next_compact_writes_it_whole() {
    for &(agent, name) in AGENTS {
        let env = TestEnv::new();
        let p = env.copy_fixture(name);
        let original = read(&p);
        let before = recall_of(&env, &p);
        assert_eq!(compact(&env, &p)["action"], "folded", "{agent}");
        let whole = read(&p);
        let summary_recall = recall_of(&env, &p);
        let appended = whole[original.len()..].to_vec();
        assert!(agent_honours(agent, &appended), "{agent}");
        let ends: Vec<usize> = appended
            .iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(k, _)| k + 1)
            .collect();
        assert!(ends.len() >= 2, "{agent}: a multi-line write");
        // Every cut: inside each line (early, in the middle, one byte short), and after each
        // line but the last.
        let mut cuts = Vec::new();
        let mut start = 0;
        for &end in &ends {
            cuts.extend([start + 30, (start + end) / 2, end - 2]);
            if end < appended.len() {
                cuts.push(end);
            }
            start = end;
        }
        for cut in cuts {
            let what = format!("{agent}, cut at byte {cut} of {}", appended.len());
            let mut bytes = original.clone();
            bytes.extend_from_slice(&appended[..cut]);
            std::fs::write(&p, &bytes).unwrap();
            // The agent shows the originals; so does mf.
            assert!(!agent_honours(agent, &appended[..cut]), "{what}");
            assert_eq!(standing(&env, &p), 0, "{what}");
            assert_eq!(recall_of(&env, &p), before, "{what}");
            let (code, report) = verify(&env, &p);
            assert_eq!(code, 1, "{what}: {report:#}");
            let kinds = problem_kinds(&report);
            // Once the write's set tag is there (right after mf's version, in its first bytes),
            // verify names the unfinished write; before that only mf's torn line is there.
            let unfinished = cut >= 40;
            assert_eq!(
                kinds.iter().any(|k| k == "unfinished-write"),
                unfinished,
                "{what}: {report:#}"
            );
            assert!(
                !kinds.is_empty()
                    && kinds
                        .iter()
                        .all(|k| k == "unfinished-write" || k == "torn-mf-line"),
                "{what}: {report:#}"
            );
            // The next compact writes it again, whole; the agent honours it; verify is clean
            // but for the torn line it explains.
            assert_eq!(compact(&env, &p)["action"], "folded", "{what}");
            let now = read(&p);
            assert_eq!(&now[..original.len()], &original[..], "{what}");
            assert!(
                agent_honours(agent, &now[bytes.len()..]),
                "{what}: the repair"
            );
            assert_eq!(standing(&env, &p), 1, "{what}");
            // The repair's summary is the same but for its id (`….2`: the cut line holds the
            // first), which its label names.
            assert_eq!(
                same_id(&recall_of(&env, &p)),
                same_id(&summary_recall),
                "{what}"
            );
            let (_, report) = verify(&env, &p);
            assert!(
                problem_kinds(&report).iter().all(|k| k == "torn-mf-line"),
                "{what}: {report:#}"
            );
            assert_eq!(
                report["notes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|n| n["kind"] == "unfinished-write"),
                unfinished,
                "{what}: the repaired write is still explained: {report:#}"
            );
        }
    }
}

/// The agent's own compaction, appended as the agent writes it, after mf's fold.
fn agent_compacts(agent: &str, p: &Path) {
    let rows = lines_of(&read(p));
    let mut add = String::new();
    match agent {
        "claude" => {
            let last = rows.iter().rev().find(|r| r["uuid"].is_string()).unwrap();
            let sid = rows.iter().find_map(|r| r["sessionId"].as_str()).unwrap();
            let b = serde_json::json!({"parentUuid": null, "logicalParentUuid": last["uuid"],
                "isSidechain": false, "userType": "external", "cwd": "/home/dev", "sessionId": sid,
                "version": "2.1.332", "type": "system", "subtype": "compact_boundary",
                "content": "Conversation compacted", "isMeta": false, "timestamp": "2027-01-01T00:00:00.000Z",
                "uuid": "aaaaaaaa-0000-4000-8000-000000000001", "level": "info",
                "compactMetadata": {"trigger": "auto", "preTokens": 150_000}});
            let s = serde_json::json!({"parentUuid": "aaaaaaaa-0000-4000-8000-000000000001",
                "isSidechain": false, "userType": "external", "cwd": "/home/dev", "sessionId": sid,
                "version": "2.1.332", "type": "user", "message": {"role": "user",
                "content": "This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\nAnalysis: the agent's own summary."},
                "isVisibleInTranscriptOnly": true, "isCompactSummary": true,
                "uuid": "aaaaaaaa-0000-4000-8000-000000000002", "timestamp": "2027-01-01T00:00:00.001Z"});
            let u = serde_json::json!({"parentUuid": "aaaaaaaa-0000-4000-8000-000000000002",
                "isSidechain": false, "userType": "external", "cwd": "/home/dev", "sessionId": sid,
                "version": "2.1.332", "type": "user", "message": {"role": "user", "content": "and now the docs"},
                "uuid": "aaaaaaaa-0000-4000-8000-000000000003", "timestamp": "2027-01-01T00:00:01.000Z"});
            for v in [b, s, u] {
                add += &format!("{v}\n");
            }
        }
        "codex" => {
            let c = serde_json::json!({"timestamp": "2027-01-01T00:00:00.000Z", "type": "compacted",
                "payload": {"message": "", "replacement_history": [
                    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "and now the docs"}]},
                    {"type": "compaction", "encrypted_content": "gAAAAB-opaque"}]}});
            let e = serde_json::json!({"timestamp": "2027-01-01T00:00:00.001Z", "type": "event_msg",
                "payload": {"type": "context_compacted"}});
            add += &format!("{c}\n{e}\n");
        }
        _ => {
            let leaf = rows.iter().rev().find_map(|r| r["id"].as_str()).unwrap();
            let c = serde_json::json!({"type": "compaction", "id": "c0ffee01", "parentId": leaf,
                "timestamp": "2027-01-01T00:00:00.000Z", "summary": "pi's own summary",
                "firstKeptEntryId": leaf, "tokensBefore": 150_000});
            add += &format!("{c}\n");
        }
    }
    crate::trust::append(p, add.as_bytes());
}

#[test]
fn verify_is_clean_after_mfs_fold_and_then_the_agents_own_compaction() {
    for &(agent, name) in AGENTS {
        let env = TestEnv::new();
        let p = env.copy_fixture(name);
        assert_eq!(compact(&env, &p)["action"], "folded", "{agent}");
        agent_compacts(agent, &p);
        let (code, report) = verify(&env, &p);
        assert_eq!(code, 0, "{agent}: {report:#}");
        let said = report["notes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["kind"] == "superseded")
            .unwrap_or_else(|| panic!("{agent}: verify says what happened: {report:#}"));
        assert!(
            said["what"]
                .as_str()
                .unwrap()
                .contains("the agent compacted the session itself"),
            "{said}"
        );
        let out = env.mf(&["explain", p.to_str().unwrap()]);
        assert_eq!(out.code, 0, "{out:?}");
        assert!(
            out.stdout
                .contains("the agent compacted the session itself"),
            "{agent}: explain says it: {}",
            out.stdout
        );
    }
}

/// `claude-compacted.jsonl` with the boundary preserving the last turn before it, as newer
/// Claude Code writes it (`preservedSegment`): Claude Code then sends its summary, the preserved
/// rows (which lie before the summary in the file), and what follows.
fn with_preserved_segment() -> String {
    let mut out = String::new();
    for l in std::fs::read_to_string(fixture("claude-compacted.jsonl"))
        .unwrap()
        .lines()
    {
        let mut v: Value = serde_json::from_str(l).unwrap();
        if v["subtype"] == "compact_boundary" {
            v["compactMetadata"]["preservedSegment"] = serde_json::json!({
                "headUuid": "3b246b47-f1c2-4d7b-9a57-5e3c0f0e9d21",
                "anchorUuid": "b6910780-2f55-4c8a-9b1e-6a3e0f4d2c77",
                "tailUuid": "a43be368-0d1e-4b6f-8c2a-7e5d9f1b3c40"});
        }
        out.push_str(&serde_json::to_string(&v).unwrap());
        out.push('\n');
    }
    out
}

#[test]
fn restore_after_claude_codes_own_compaction_keeps_its_order() {
    let env = TestEnv::new();
    let text = with_preserved_segment();
    let rows = lines_of(text.as_bytes());
    let uuid_of = |prefix: &str| -> String {
        rows.iter()
            .filter_map(|r| r["uuid"].as_str())
            .find(|u| u.starts_with(prefix))
            .unwrap_or_else(|| panic!("no row {prefix}"))
            .to_string()
    };
    // The fixture's uuids, completed (the segment names them in full).
    let text = text
        .replace("3b246b47-f1c2-4d7b-9a57-5e3c0f0e9d21", &uuid_of("3b246b47"))
        .replace("b6910780-2f55-4c8a-9b1e-6a3e0f4d2c77", &uuid_of("b6910780"))
        .replace("a43be368-0d1e-4b6f-8c2a-7e5d9f1b3c40", &uuid_of("a43be368"));
    let p = env.write("cc.jsonl", &text);
    let before = recall_of(&env, &p);
    let native = before
        .iter()
        .position(|m| {
            m["content"]
                .as_str()
                .is_some_and(|c| c.starts_with("This session is being continued"))
        })
        .expect("the agent's summary in recall");
    assert_eq!(native, 0, "mf's recall starts with the agent's summary");
    let by_uuid: HashMap<String, Value> = rows
        .iter()
        .filter_map(|r| Some((r["uuid"].as_str()?.to_string(), r.clone())))
        .collect();
    // Restore right after the agent's compaction and after a fold of mf's.
    let out = env.mf(&[
        "compact",
        "cc.jsonl",
        "--model",
        "extractive",
        "--recent",
        "1",
        "--trigger",
        "0",
        "--force",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let folded = read(&p);
    let id = summary_lines(&p)
        .last()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .expect("a summary");
    let out = env.mf(&["expand", "cc.jsonl", &id, "--restore", "--force"]);
    assert_eq!(out.code, 0, "{out:?}");
    let undo = lines_of(&read(&p)[folded.len()..]);
    let boundary = undo
        .iter()
        .rev()
        .find(|r| r["subtype"] == "compact_boundary")
        .unwrap();
    let kept: Vec<&Value> = boundary["compactMetadata"]["preservedMessages"]["uuids"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|u| by_uuid.get(u.as_str().unwrap()))
        .filter(|r| r["type"] == "user" || r["type"] == "assistant")
        .collect();
    // What Claude Code will send, in the order it relinks the rows: its summary first, never
    // an assistant message first, and the order of mf's recall.
    assert_eq!(kept[0]["isCompactSummary"], true, "{kept:?}");
    assert_ne!(kept[0]["type"], "assistant");
    let texts: Vec<String> = kept
        .iter()
        .filter_map(|r| match &r["message"]["content"] {
            Value::String(s) => Some(s.clone()),
            Value::Array(b) => b
                .iter()
                .find_map(|b| b["text"].as_str().map(str::to_string)),
            _ => None,
        })
        .collect();
    let recall_texts: Vec<String> = recall_of(&env, &p)
        .iter()
        .filter_map(|m| m["content"].as_str().map(str::to_string))
        .filter(|c| texts.contains(c))
        .collect();
    let ours: Vec<String> = texts
        .iter()
        .filter(|t| recall_texts.contains(t))
        .cloned()
        .collect();
    assert_eq!(ours, recall_texts, "the agent's order is mf's recall order");
    assert_eq!(recall_of(&env, &p), before);
}

/// A fixture with its tool results grown by about `mb` megabytes of log (all but the newest,
/// which stay in the verbatim tail), so that mf's append is big enough for a kill to cut.
fn inflated(agent: &str, name: &str, mb: f64) -> String {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let mut rows: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let is_result = |v: &Value| match agent {
        "claude" => {
            v["type"] == "user"
                && v["message"]["content"]
                    .as_array()
                    .is_some_and(|b| b.iter().any(|b| b["type"] == "tool_result"))
        }
        "codex" => {
            v["payload"]["type"] == "function_call_output" && v["payload"]["output"].is_string()
        }
        _ => v["message"]["role"] == "toolResult",
    };
    let at: Vec<usize> = (0..rows.len()).filter(|&k| is_result(&rows[k])).collect();
    let grow = &at[..at.len().saturating_sub(2).max(1)];
    let per = (mb * 1e6) as usize / grow.len();
    for (n, &k) in grow.iter().enumerate() {
        let mut log = String::with_capacity(per + 64);
        let mut j = 0;
        while log.len() < per {
            log += &format!("{n:05}.{j:06} worker-{} step ok\n", j % 17);
            j += 1;
        }
        let v = &mut rows[k];
        match agent {
            "claude" => {
                let b = v["message"]["content"]
                    .as_array_mut()
                    .unwrap()
                    .iter_mut()
                    .find(|b| b["type"] == "tool_result")
                    .unwrap();
                b["content"] = Value::from(format!("{}\n{log}", b["content"]));
            }
            "codex" => {
                let o = v["payload"]["output"].as_str().unwrap().to_string();
                v["payload"]["output"] = Value::from(o + "\n" + &log);
            }
            _ => v["message"]["content"]
                .as_array_mut()
                .unwrap()
                .push(serde_json::json!({"type": "text", "text": log})),
        }
    }
    rows.iter().map(|v| format!("{v}\n")).collect()
}

/// The kill loop of issue 6 on the agent formats, at CI size: SIGKILL on the first bytes of
/// mf's append (a few per format; `MF_AGENT_KILLS` for more). After each kill: the original
/// bytes are identical; mf counts a summary standing exactly when the agent's rule honours what
/// the kill left; `verify` explains a cut write; the next `compact` writes it whole. The real
/// agents: `scripts/agents/kill-loop.sh`. The default run has the cut writes of
/// `a_write_cut_short_counts_for_nothing_until_the_next_compact_writes_it_whole` (every cut, no
/// kill); this loop of megabyte compactions is CI's.
#[test]
#[ignore = "long suite (a kill loop): .ci/run runs the `_long` tests by name"]
fn sigkill_during_an_agent_write_leaves_the_agent_and_mf_agreeing_long() {
    use crate::trust::{big_summary_server, figure, haiku_env, run_with, signal, spawn};
    let kills = figure("MF_AGENT_KILLS", 3);
    for &(agent, name) in AGENTS {
        let env = TestEnv::without_audit();
        let p = env.path(name);
        let original = inflated(agent, name, 1.0).into_bytes();
        let args = [
            "compact",
            name,
            "--model",
            "haiku",
            "--max-span-tokens",
            "100000000",
            "--force",
            "--json",
        ];
        let (mut torn, mut whole, mut nothing) = (0, 0, 0);
        for k in 0..kills {
            std::fs::write(&p, &original).unwrap();
            let server = big_summary_server(original.len() * 2 / 5, Duration::ZERO);
            let child = spawn(&env, &args, &haiku_env(&server));
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(60)
                && std::fs::metadata(&p).unwrap().len() <= original.len() as u64
            {
                std::thread::sleep(Duration::from_micros(50));
            }
            std::thread::sleep(Duration::from_micros(fastrand::u64(0..200)));
            signal(child.id(), "KILL");
            let _ = child.wait_with_output();
            let what = format!("{agent}, kill {k}");
            let now = read(&p);
            assert_eq!(&now[..original.len()], &original[..], "{what}");
            let rest = &now[original.len()..];
            let honoured = agent_honours(agent, rest);
            let (code, report) = verify(&env, &p);
            assert_eq!(
                report["standing"].as_u64().unwrap(),
                u64::from(honoured),
                "{what}: mf and the agent disagree: {report:#}"
            );
            if rest.is_empty() {
                nothing += 1;
                assert_eq!(code, 0, "{what}: {report:#}");
            } else if honoured {
                whole += 1;
                assert_eq!(code, 0, "{what}: {report:#}");
            } else {
                torn += 1;
                assert_eq!(code, 1, "{what}: {report:#}");
                assert!(
                    problem_kinds(&report)
                        .iter()
                        .all(|k| k == "unfinished-write" || k == "torn-mf-line"),
                    "{what}: {report:#}"
                );
            }
            let server = big_summary_server(original.len() * 2 / 5, Duration::ZERO);
            let out = run_with(&env, &args, &haiku_env(&server));
            assert_eq!(out.code, 0, "{what}: {out:?}");
            let now = read(&p);
            assert_eq!(&now[..original.len()], &original[..], "{what}");
            let (_, report) = verify(&env, &p);
            assert_eq!(report["standing"], 1, "{what}: {report:#}");
            assert!(
                problem_kinds(&report).iter().all(|k| k == "torn-mf-line"),
                "{what}: {report:#}"
            );
        }
        eprintln!(
            "{agent}: {kills} kills: {nothing} left nothing, {whole} the whole write, {torn} a cut one"
        );
    }
}

/// Claude Code runs a tool as soon as its block has streamed and writes the result before the
/// response's next block (cc-2.1.38 in the corpus): pieces of one response (same `message.id`,
/// `requestId` and prompt size) around their own results are one message; the same ids after a
/// result with a larger prompt (a server answering every call with fixed ids) are a new reply.
#[test]
fn pieces_of_one_response_around_its_own_tool_results_are_one_message() {
    let env = TestEnv::new();
    let row = |n: u32, parent: u32, ty: &str, message: Value| {
        serde_json::json!({
            "type": ty, "uuid": format!("u{n}"),
            "parentUuid": if parent == 0 { Value::Null } else { format!("u{parent}").into() },
            "sessionId": "s1", "requestId": "req_1", "message": message,
        })
        .to_string()
    };
    let piece = |tool: &str, input: u64| {
        serde_json::json!({"role": "assistant", "id": "msg_1", "model": "claude-test",
            "usage": {"input_tokens": input, "output_tokens": 5},
            "content": [{"type": "tool_use", "id": tool, "name": "Bash", "input": {"command": "ls"}}]})
    };
    let result = |tool: &str| {
        serde_json::json!({"role": "user",
            "content": [{"type": "tool_result", "tool_use_id": tool, "content": "ok"}]})
    };
    let session = |second_input: u64| {
        [
            row(
                1,
                0,
                "user",
                serde_json::json!({"role": "user", "content": "list it"}),
            ),
            row(2, 1, "assistant", piece("t1", 100)),
            row(3, 2, "user", result("t1")),
            row(4, 3, "assistant", piece("t2", second_input)),
            row(5, 4, "user", result("t2")),
        ]
        .join("\n")
            + "\n"
    };
    let one = env.write("one.jsonl", &session(100));
    assert_eq!(
        entries(&env, &one),
        4,
        "prompt, one reply with two calls, two results"
    );
    let r = recall_of(&env, &one);
    assert_eq!(r[1]["tool_calls"].as_array().unwrap().len(), 2, "{r:?}");
    assert_paired(&r);
    let two = env.write("two.jsonl", &session(180));
    assert_eq!(
        entries(&env, &two),
        5,
        "a later call's reply is its own message"
    );
    assert_paired(&recall_of(&env, &two));
}
