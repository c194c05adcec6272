//! Gemini CLI sessions (issue 26), on fixtures the real agent wrote against the loopback scripted
//! model (scripts/agents/harness/fake_gemini.py), `@google/gemini-cli` 0.61.0, Node 22:
//! - `gemini-0.61.0-tools.jsonl`: `gemini -p` then five `--resume latest -p` runs; 6 prompts, 12
//!   tool calls (`run_shell_command`, `read_file`, `write_file`, two in parallel once), one
//!   prompt answered in text; every resume adds a header and `$set messages` re-syncs.
//! - `gemini-0.61.0-native-compression.jsonl`: 5 prompts, then Gemini's own compression
//!   (`model.compressionThreshold` 0.001) in the middle of the next turn: a `$set messages` whose
//!   messages have new ids (the snapshot, its acknowledgement, copies of the kept turns).
//!
//! What Gemini CLI then did with mf's lines was checked with the real agent (scripts/agents/
//! gemini.sh): after `mf compact` its next request carries the session context, mf's summary and
//! the kept turn; after `mf expand --restore` every original turn again. These tests pin the lines
//! that made that so.

use std::path::Path;

use serde_json::Value;

use crate::util::*;

const TOOLS: &str = "gemini-0.61.0-tools.jsonl";
const NATIVE: &str = "gemini-0.61.0-native-compression.jsonl";

fn compact(env: &TestEnv, name: &str, extra: &[&str]) -> Value {
    let mut args = vec!["compact", name, "--model", "extractive", "--json"];
    args.extend_from_slice(extra);
    let rec = json_lines(&env.mf_ok(&args).stdout).remove(0);
    assert_eq!(rec["action"], "folded", "{rec}");
    rec
}

fn verify_clean(env: &TestEnv, name: &str) {
    let out = env.mf(&["verify", name]);
    assert_eq!(out.code, 0, "{name}: verify: {out:?}");
}

/// The lines appended after `before`, parsed; `before` unchanged.
fn appended(path: &Path, before: &[u8]) -> Vec<Value> {
    let now = read(path);
    assert_eq!(&now[..before.len()], before, "the original bytes changed");
    json_lines(std::str::from_utf8(&now[before.len()..]).unwrap())
}

/// The message list Gemini CLI loads from a file, as its `loadConversationRecord` builds it:
/// message records by id (a later one replacing the earlier in place), a `$set messages`
/// replacing the whole list.
fn gemini_messages(path: &Path) -> Vec<Value> {
    let mut order: Vec<String> = Vec::new();
    let mut by_id: std::collections::HashMap<String, Value> = Default::default();
    for v in file_lines(path) {
        if let Some(id) = v.get("id").and_then(Value::as_str) {
            if !by_id.contains_key(id) {
                order.push(id.to_string());
            }
            by_id.insert(id.to_string(), v.clone());
        } else if let Some(list) = v.pointer("/$set/messages").and_then(Value::as_array) {
            order.clear();
            by_id.clear();
            for m in list {
                let id = m["id"].as_str().unwrap().to_string();
                if !by_id.contains_key(&id) {
                    order.push(id.clone());
                }
                by_id.insert(id, m.clone());
            }
        }
    }
    order
        .into_iter()
        .map(|id| by_id.remove(&id).unwrap())
        .collect()
}

fn user_texts(msgs: &[Value]) -> Vec<String> {
    msgs.iter()
        .filter(|m| m["type"] == "user")
        .filter_map(|m| m.pointer("/content/0/text").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_gemini_session_reads_as_its_own_with_turns_and_tool_pairs() {
    let (env, _) = aged_session(TOOLS);
    let msgs = recall_chat(&env, TOOLS);
    let prompts: Vec<&str> = msgs
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    // Real prompts only: not the injected `<session_context>`, not a tool's response.
    assert_eq!(prompts.len(), 6, "{prompts:?}");
    assert!(prompts[0].starts_with("ALPHA"));
    assert!(prompts.iter().all(|p| !p.contains("<session_context>")));
    // Every call has its result.
    let calls: Vec<String> = msgs
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(calls.len(), 12, "{calls:?}");
    for c in &calls {
        assert!(
            msgs.iter()
                .any(|m| m["role"] == "tool" && m["tool_call_id"] == c.as_str()),
            "no result for {c}"
        );
    }
    let ex = json_lines(&env.mf_ok(&["explain", TOOLS, "--json"]).stdout).remove(0);
    assert_eq!(ex["format"], "gemini", "{ex}");
    verify_clean(&env, TOOLS);
}

#[test]
fn compact_with_default_flags_folds_and_gemini_loads_the_summary_then_the_kept_tail() {
    let (env, path) = aged_session(TOOLS);
    let before = read(&path);
    let full = gemini_messages(&path);
    let rec = compact(&env, TOOLS, &[]);
    let id = rec["summaries"][0]["id"].as_str().unwrap().to_string();
    verify_clean(&env, TOOLS);
    let lines = appended(&path, &before);
    // mf's summary line has no `id` and no `$set`: Gemini skips it; the last line is the view.
    for l in &lines[..lines.len() - 1] {
        assert!(l.get("id").is_none() && l.get("$set").is_none(), "{l}");
        assert!(l.get("mf").is_some(), "{l}");
    }
    let view = lines.last().unwrap();
    assert!(view["mf"].is_object() && view["$set"]["messages"].is_array());
    // What Gemini loads: its session context, mf's summary, then the kept messages, each the
    // original record exactly.
    let loaded = gemini_messages(&path);
    let texts = user_texts(&loaded);
    assert!(texts[0].starts_with("<session_context>"), "{texts:?}");
    assert!(
        texts[1].starts_with("[summary of earlier turns"),
        "{texts:?}"
    );
    assert!(
        texts.iter().all(|t| !t.starts_with("ALPHA")),
        "a folded turn is loaded"
    );
    let kept = &loaded[2..];
    assert!(!kept.is_empty());
    for m in kept {
        assert!(full.contains(m), "a kept message is not the original: {m}");
    }
    // Every call kept has its result kept.
    for m in kept.iter().filter(|m| m["type"] == "gemini") {
        for c in m["toolCalls"].as_array().cloned().unwrap_or_default() {
            assert!(c["result"].is_array(), "{c}");
        }
    }
    // Restore: Gemini loads every original message again, and the file's first bytes stay.
    age(&path);
    env.mf_ok(&["expand", TOOLS, &id, "--restore"]);
    verify_clean(&env, TOOLS);
    let back = gemini_messages(&path);
    let is_summary = |m: &Value| {
        m.pointer("/content/0/text")
            .and_then(Value::as_str)
            .is_some_and(|t| t.starts_with("[summary of earlier turns"))
    };
    let orig_prompts = user_texts(&full);
    let back_prompts = user_texts(&back);
    for p in orig_prompts.iter().filter(|p| !p.starts_with("<session")) {
        assert!(back_prompts.contains(p), "restore lost {p}");
    }
    // Every message record of the original file is loaded again, as its last record.
    let ids: Vec<String> = back
        .iter()
        .filter_map(|m| m["id"].as_str().map(str::to_string))
        .collect();
    for l in json_lines(std::str::from_utf8(&before).unwrap()) {
        if let Some(id) = l.get("id").and_then(Value::as_str) {
            assert!(ids.iter().any(|i| i == id), "restore left out {id}");
        }
    }
    assert!(!back.iter().any(is_summary), "a summary is still loaded");
    assert_eq!(&read(&path)[..before.len()], &before[..]);
}

#[test]
fn gemini_s_own_compression_is_a_floor() {
    let (env, path) = aged_session(NATIVE);
    let ex = json_lines(&env.mf_ok(&["explain", NATIVE, "--json"]).stdout).remove(0);
    assert_eq!(ex["format"], "gemini", "{ex}");
    let text = env.mf_ok(&["explain", NATIVE]).stdout;
    assert!(text.contains("the agent's own compactions"), "{text}");
    assert!(text.contains("line: 70"), "{text}");
    // What stands before the compression is not recalled.
    let msgs = recall_chat(&env, NATIVE);
    assert!(
        msgs.iter()
            .all(|m| !m["content"].as_str().unwrap_or("").starts_with("ALPHA")),
        "{msgs:?}"
    );
    verify_clean(&env, NATIVE);
    let _ = path;
}

/// A Gemini session of `turns` prompts, each with one shell call whose output is `big` chars.
fn big_session(turns: usize, big: usize) -> String {
    let mut out = String::from(
        r#"{"sessionId":"5e55","projectHash":"ab12","startTime":"2026-12-02T10:00:00.000Z","lastUpdated":"2026-12-02T10:00:00.000Z","kind":"main"}"#,
    );
    out.push('\n');
    for k in 0..turns {
        let call = format!("run_shell_command__call_{k}");
        let output = format!("line {k} ").repeat(big / 7);
        let lines = [
            serde_json::json!({"id": format!("u{k}"), "timestamp": "2026-12-02T10:00:00.000Z", "type": "user", "content": [{"text": format!("prompt {k}: run it")}]}),
            serde_json::json!({"id": format!("g{k}"), "timestamp": "2026-12-02T10:00:01.000Z", "type": "gemini", "content": "Running.", "toolCalls": [{"id": call, "name": "run_shell_command", "args": {"command": "seq 1000"}, "result": [{"functionResponse": {"id": call, "name": "run_shell_command", "response": {"output": output}}}], "status": "success"}]}),
            serde_json::json!({"id": format!("r{k}"), "timestamp": "2026-12-02T10:00:02.000Z", "type": "user", "content": [{"functionResponse": {"id": call, "name": "run_shell_command", "response": {"output": output}}}]}),
            serde_json::json!({"id": format!("d{k}"), "timestamp": "2026-12-02T10:00:03.000Z", "type": "gemini", "content": format!("done {k}")}),
        ];
        for l in lines {
            out.push_str(&l.to_string());
            out.push('\n');
        }
    }
    out
}

#[test]
fn a_stub_is_refused_in_a_gemini_session() {
    let env = TestEnv::without_audit();
    let path = env.write("big.jsonl", &big_session(8, 4000));
    age(&path);
    let before = read(&path);
    let out = env.mf(&[
        "compact",
        "big.jsonl",
        "--model",
        "extractive",
        "--strategy",
        "mask",
        "--keep-tool-results",
        "1",
    ]);
    assert_ne!(out.code, 0, "{out:?}");
    assert!(
        format!("{}{}", out.stdout, out.stderr).contains("stub cannot stand in for it"),
        "{out:?}"
    );
    assert_eq!(read(&path), before);
    // A summary fold of the same session is written, and verifies clean.
    let rec = compact(&env, "big.jsonl", &[]);
    assert_eq!(rec["written"], true, "{rec}");
    verify_clean(&env, "big.jsonl");
}

#[test]
fn a_gemini_session_is_detected_and_never_taken_for_another_agent_s() {
    let env = TestEnv::new();
    let p = env.write(
        "g.jsonl",
        concat!(
            r#"{"sessionId":"5e55","projectHash":"ab12","startTime":"2026-12-02T10:00:00.000Z","lastUpdated":"2026-12-02T10:00:00.000Z","kind":"main"}"#,
            "\n",
            r#"{"id":"m1","timestamp":"2026-12-02T10:00:00.000Z","type":"user","content":[{"text":"hi"}]}"#,
            "\n",
            r#"{"id":"m2","timestamp":"2026-12-02T10:00:01.000Z","type":"gemini","content":"hello"}"#,
            "\n",
        ),
    );
    let ex = json_lines(&env.mf_ok(&["explain", "g.jsonl", "--json"]).stdout).remove(0);
    assert_eq!(ex["format"], "gemini", "{ex}");
    let msgs = recall_chat(&env, "g.jsonl");
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert_eq!(msgs[1]["content"], "hello");
    let out = env.mf_ok(&["recall", "g.jsonl", "--from", "gemini"]);
    assert!(out.stdout.contains("hello"));
    let _ = p;
}

/// `gemini-0.61.0-compressed-mid-turn.jsonl`: 6 prompts, then Gemini's own compression twice
/// (the second in the middle of the SQUASH turn: its list ends with the turn's call, whose result
/// follows it), then 4 more turns. mf's fold after it keeps the compression and the rest of the
/// turn it cut into (the call's result) first, then its summary: every call Gemini sends has its
/// result right after it.
#[test]
fn a_turn_gemini_s_compression_cut_into_stays_whole_before_mf_s_summary() {
    const MID: &str = "gemini-0.61.0-compressed-mid-turn.jsonl";
    let (env, path) = aged_session(MID);
    let before = read(&path);
    compact(&env, MID, &[]);
    verify_clean(&env, MID);
    let view = appended(&path, &before).pop().unwrap();
    let list = view["$set"]["messages"].as_array().unwrap().clone();
    let summary = list
        .iter()
        .position(|m| {
            m.pointer("/content/0/text")
                .and_then(Value::as_str)
                .is_some_and(|t| t.starts_with("[summary of earlier turns"))
        })
        .expect("mf's summary");
    // Every call in the list before mf's summary is answered before it.
    let calls: Vec<String> = list[..summary]
        .iter()
        .filter(|m| m["type"] == "gemini")
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| {
            p.pointer("/functionCall/id")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .collect();
    assert!(!calls.is_empty(), "the compression's list has no open call");
    for c in &calls {
        let answered = list[..summary].iter().any(|m| {
            m["content"].as_array().into_iter().flatten().any(|p| {
                p.pointer("/functionResponse/id")
                    .and_then(Value::as_str)
                    .is_some_and(|r| r.ends_with(c.as_str()))
            })
        });
        assert!(
            answered,
            "{c} is answered only after mf's summary: {list:?}"
        );
    }
}

#[test]
fn sessions_finds_gemini_sessions_under_its_home_override() {
    let env = TestEnv::new();
    let gh = env.path("gemini-home");
    let chats = gh.join(".gemini").join("tmp").join("work").join("chats");
    std::fs::create_dir_all(&chats).unwrap();
    let s = chats.join("session-2026-12-03T16-36-e492147a.jsonl");
    std::fs::copy(fixture(TOOLS), &s).unwrap();
    // Not sessions: another file in chats/, a sub-agent's chat one level deeper, the file a
    // resume starts and never writes a message to.
    std::fs::write(chats.join("notes.jsonl"), "{}\n").unwrap();
    let stub: String = std::fs::read_to_string(fixture(TOOLS))
        .unwrap()
        .lines()
        .take(2)
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(chats.join("session-2026-12-03T16-37-e492147a.jsonl"), stub).unwrap();
    std::fs::create_dir_all(chats.join("e492147a")).unwrap();
    std::fs::copy(fixture(TOOLS), chats.join("e492147a").join("sub.jsonl")).unwrap();
    let home = env.path("home");
    std::fs::create_dir_all(&home).unwrap();
    let vars = [
        ("HOME", home.to_str().unwrap()),
        ("GEMINI_CLI_HOME", gh.to_str().unwrap()),
    ];
    let out = env.mf_env(&["sessions", "--json", "--agent", "gemini"], &vars);
    assert_eq!(out.code, 0, "{out:?}");
    let rows = json_lines(&out.stdout);
    assert_eq!(rows.len(), 1, "{out:?}");
    assert_eq!(rows[0]["path"].as_str().unwrap(), s.to_str().unwrap());
    assert_eq!(rows[0]["project"], "/tmp/gx/work", "{}", rows[0]);
    // By the directory it was run in; and in the list of every agent's sessions.
    let out = env.mf_env(&["sessions", "--json", "--cwd", "/tmp/gx/work"], &vars);
    assert_eq!(json_lines(&out.stdout).len(), 1, "{out:?}");
    let out = env.mf_env(&["sessions", "--json", "--cwd", "/elsewhere"], &vars);
    assert_eq!(json_lines(&out.stdout).len(), 0, "{out:?}");
}

#[test]
fn a_rewind_drops_the_message_and_every_later_one_and_a_later_record_replaces_an_earlier() {
    let env = TestEnv::new();
    env.write(
        "r.jsonl",
        concat!(
            r#"{"sessionId":"5e55","projectHash":"ab12","startTime":"2026-12-02T10:00:00.000Z","lastUpdated":"2026-12-02T10:00:00.000Z","kind":"main"}"#,
            "\n",
            r#"{"id":"m1","timestamp":"2026-12-02T10:00:00.000Z","type":"user","content":[{"text":"first prompt"}]}"#,
            "\n",
            r#"{"id":"m2","timestamp":"2026-12-02T10:00:01.000Z","type":"gemini","content":"draft answer"}"#,
            "\n",
            r#"{"id":"m2","timestamp":"2026-12-02T10:00:01.000Z","type":"gemini","content":"final answer"}"#,
            "\n",
            r#"{"id":"m3","timestamp":"2026-12-02T10:00:02.000Z","type":"user","content":[{"text":"second prompt"}]}"#,
            "\n",
            r#"{"id":"m4","timestamp":"2026-12-02T10:00:03.000Z","type":"gemini","content":"second answer"}"#,
            "\n",
            r#"{"$rewindTo":"m3"}"#,
            "\n",
            r#"{"id":"m5","timestamp":"2026-12-02T10:00:04.000Z","type":"user","content":[{"text":"another prompt"}]}"#,
            "\n",
        ),
    );
    let msgs = recall_chat(&env, "r.jsonl");
    let texts: Vec<&str> = msgs
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["first prompt", "final answer", "another prompt"]);
}
