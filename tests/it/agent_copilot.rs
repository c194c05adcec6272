//! GitHub Copilot CLI sessions (issue 26), on `copilot-1.0.102-tools.jsonl`: a session the real
//! `@github/copilot` 1.0.102 wrote (`copilot -p … --allow-all`, then four `--continue` turns) in
//! its custom-provider mode against the loopback fake model (scripts/agents/harness/fakeapi.py +
//! fake_copilot.py), which asked for `bash` calls: 5 prompts, 12 tool calls (one reply with two
//! parallel calls). What the agent then sends from mf's lines was checked with the real agent
//! (scripts/agents/copilot.sh); these tests pin those lines.

use std::path::PathBuf;

use serde_json::Value;

use crate::util::*;

const FIXTURE: &str = "copilot-1.0.102-tools.jsonl";

fn session() -> (TestEnv, PathBuf) {
    let env = TestEnv::without_audit();
    let p = env.copy_fixture(FIXTURE);
    age(&p);
    (env, p)
}

fn lines_of(p: &std::path::Path) -> Vec<Value> {
    file_lines(p)
}

#[test]
fn a_copilot_session_is_read_as_its_own_turns_and_tool_pairs() {
    let (env, _) = session();
    let ex = json_lines(&env.mf_ok(&["explain", FIXTURE, "--json"]).stdout).remove(0);
    assert_eq!(ex["format"], "copilot", "{ex}");
    let recall = env.mf_ok(&["recall", FIXTURE]).stdout;
    let msgs = json_lines(&recall);
    let users: Vec<&Value> = msgs.iter().filter(|m| m["role"] == "user").collect();
    assert_eq!(users.len(), 5, "five prompts: {recall}");
    assert!(
        users[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("first: start.")
    );
    // Every call is answered, by id, and no result is without its call.
    let calls: Vec<String> = msgs
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().cloned().unwrap_or_default())
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    let results: Vec<String> = msgs
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(calls.len(), 12, "{recall}");
    let (mut a, mut b) = (calls.clone(), results.clone());
    a.sort();
    b.sort();
    assert_eq!(a, b);
    // The system prompt is prompt state, not a message.
    assert!(!msgs.iter().any(|m| m["role"] == "system"));
}

#[test]
fn compact_folds_a_copilot_session_as_its_own_compaction_and_restore_is_exact() {
    let (env, p) = session();
    let before = read(&p);
    let out = env.mf_ok(&["compact", FIXTURE, "--model", "extractive", "--json"]);
    let rec = json_lines(&out.stdout).remove(0);
    assert_eq!(rec["action"], "folded", "{rec}");
    let after = read(&p);
    assert_eq!(
        &after[..before.len()],
        &before[..],
        "the originals are kept byte for byte"
    );
    env.mf_ok(&["verify", FIXTURE]);
    // The appended lines are Copilot events: the summary, Copilot's compaction pair carrying
    // mf's summary, then marked copies of the kept events (same bytes but id and parentId).
    let all = lines_of(&p);
    let n0 = before
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    let new = &all[n0..];
    for l in new {
        for k in ["type", "data", "id", "timestamp", "parentId"] {
            assert!(l.get(k).is_some(), "{k} missing in {l}");
        }
        assert!(l["type"].as_str().unwrap().contains('.'), "{l}");
    }
    let complete = new
        .iter()
        .find(|l| l["type"] == "session.compaction_complete")
        .expect("a compaction_complete");
    assert_eq!(complete["data"]["success"], true);
    let summary = complete["data"]["summaryContent"].as_str().unwrap();
    assert!(
        summary.starts_with("[summary of earlier turns"),
        "{summary}"
    );
    let copies: Vec<&Value> = new.iter().filter(|l| l["mf"]["op"] == "copy").collect();
    assert!(!copies.is_empty());
    assert_eq!(
        copies[0]["type"], "user.message",
        "the kept tail opens with its prompt"
    );
    // Each event's parent is the one before it.
    for w in new.windows(2) {
        assert_eq!(w[1]["parentId"], w[0]["id"]);
    }
    let originals = &all[..n0];
    for c in &copies {
        let of = c["mf"]["of"].as_str().unwrap();
        let orig = originals
            .iter()
            .find(|o| o["id"] == of)
            .expect("a copy names its original");
        assert_eq!(
            c["data"], orig["data"],
            "a copy carries the original's data"
        );
        assert_ne!(c["id"], orig["id"]);
    }
    // Restore: Copilot's context_cleared, then copies of every event mf shows.
    let sid = new
        .iter()
        .find(|l| l["type"] == "mf.summary")
        .and_then(|l| l["data"]["id"].as_str())
        .unwrap()
        .to_string();
    let n1 = all.len();
    env.mf_ok(&["expand", FIXTURE, &sid, "--restore", "--force"]);
    env.mf_ok(&["verify", FIXTURE]);
    let all2 = lines_of(&p);
    let restored = &all2[n1..];
    assert!(
        restored
            .iter()
            .any(|l| l["type"] == "session.context_cleared")
    );
    let copied: Vec<&str> = restored
        .iter()
        .filter(|l| l["mf"]["op"] == "copy")
        .map(|l| l["mf"]["of"].as_str().unwrap())
        .collect();
    let wanted: Vec<&str> = originals
        .iter()
        .filter(|o| {
            matches!(
                o["type"].as_str(),
                Some("user.message" | "assistant.message" | "tool.execution_complete")
            )
        })
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        copied, wanted,
        "the restore shows every original message, in order"
    );
    // Read back, the session has every turn again and no standing summary.
    let recall = env.mf_ok(&["recall", FIXTURE]).stdout;
    assert_eq!(
        json_lines(&recall)
            .iter()
            .filter(|m| m["role"] == "user")
            .count(),
        5
    );
    assert!(read(&p).starts_with(&before));
}

#[test]
fn copilots_own_compaction_is_a_floor() {
    let env = TestEnv::without_audit();
    let text = concat!(
        r#"{"type":"session.start","data":{"sessionId":"s1","context":{"cwd":"/w"}},"id":"e1","timestamp":"2026-12-03T10:00:00.000Z","parentId":null}"#,
        "\n",
        r#"{"type":"user.message","data":{"content":"one"},"id":"e2","timestamp":"2026-12-03T10:00:01.000Z","parentId":"e1"}"#,
        "\n",
        r#"{"type":"assistant.message","data":{"messageId":"m1","content":"did one","toolRequests":[]},"id":"e3","timestamp":"2026-12-03T10:00:02.000Z","parentId":"e2"}"#,
        "\n",
        r#"{"type":"session.compaction_start","data":{"trigger":"manual"},"id":"e4","timestamp":"2026-12-03T10:00:03.000Z","parentId":"e3"}"#,
        "\n",
        r#"{"type":"session.compaction_complete","data":{"success":true,"outcome":"applied","summaryContent":"NATIVE SUMMARY"},"id":"e5","timestamp":"2026-12-03T10:00:04.000Z","parentId":"e4"}"#,
        "\n",
        r#"{"type":"user.message","data":{"content":"two"},"id":"e6","timestamp":"2026-12-03T10:00:05.000Z","parentId":"e5"}"#,
        "\n",
        r#"{"type":"assistant.message","data":{"messageId":"m2","content":"did two","toolRequests":[]},"id":"e7","timestamp":"2026-12-03T10:00:06.000Z","parentId":"e6"}"#,
        "\n",
    );
    env.write("c.jsonl", text);
    let recall = env.mf_ok(&["recall", "c.jsonl"]).stdout;
    assert!(recall.contains("NATIVE SUMMARY"), "{recall}");
    assert!(!recall.contains("did one"), "{recall}");
    assert!(recall.contains("did two"), "{recall}");
}

#[test]
fn copilot_sessions_are_found_under_copilot_home() {
    let env = TestEnv::without_audit();
    let dir = env.path("cphome/session-state/f8e2f0b9-bc5b-411e-82db-836ca598f181");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fixture(FIXTURE), dir.join("events.jsonl")).unwrap();
    let home = env.path("cphome");
    let out = env.mf_env_ok(
        &["sessions", "--agent", "copilot", "--json"],
        &[("COPILOT_HOME", home.to_str().unwrap())],
    );
    assert!(out.stdout.contains("events.jsonl"), "{out:?}");
    assert!(out.stdout.contains("copilot"), "{out:?}");
}

/// `copilot-1.0.102-subagent.jsonl`: one prompt whose reply calls the `task` tool; Copilot ran a
/// sub-agent (its events carry `agentId`: its own prompt, a `bash` call and answer) and the main
/// model got only the task's result. mf reads the main conversation only.
#[test]
fn a_sub_agents_events_are_not_the_main_conversation() {
    let env = TestEnv::without_audit();
    env.copy_fixture("copilot-1.0.102-subagent.jsonl");
    let recall = env
        .mf_ok(&["recall", "copilot-1.0.102-subagent.jsonl"])
        .stdout;
    let msgs = json_lines(&recall);
    assert_eq!(
        msgs.iter().filter(|m| m["role"] == "user").count(),
        1,
        "{recall}"
    );
    // The main model's two replies, not the sub-agent's (its `bash` call and its answer).
    assert_eq!(
        msgs.iter().filter(|m| m["role"] == "assistant").count(),
        2,
        "{recall}"
    );
    let calls: Vec<&Value> = msgs
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
        .collect();
    assert_eq!(calls.len(), 1, "{recall}");
    assert_eq!(calls[0]["function"]["name"], "task");
    assert_eq!(msgs.iter().filter(|m| m["role"] == "tool").count(), 1);
    env.mf_ok(&["verify", "copilot-1.0.102-subagent.jsonl"]);
}

/// `copilot-1.0.102-native-compaction.jsonl`: 3 prompts, Copilot's own `/compact`
/// (`session.compaction_complete` with its `summaryContent`), then 4 more prompts. mf folds only
/// after Copilot's summary and carries it first in the summary it writes; a restore shows
/// Copilot's summary and everything after it again.
#[test]
fn mf_folds_after_copilots_own_compaction_and_carries_its_summary() {
    const NATIVE: &str = "copilot-1.0.102-native-compaction.jsonl";
    let env = TestEnv::without_audit();
    let p = env.copy_fixture(NATIVE);
    age(&p);
    let before = read(&p);
    let native_summary = lines_of(&p)
        .iter()
        .find(|l| l["type"] == "session.compaction_complete")
        .map(|l| l["data"]["summaryContent"].as_str().unwrap().to_string())
        .unwrap();
    let recall = env.mf_ok(&["recall", NATIVE]).stdout;
    assert!(recall.contains(&native_summary), "{recall}");
    assert!(
        !recall.contains("turn2: more."),
        "before the floor: {recall}"
    );
    let rec = json_lines(
        &env.mf_ok(&["compact", NATIVE, "--model", "extractive", "--json"])
            .stdout,
    )
    .remove(0);
    assert_eq!(rec["action"], "folded", "{rec}");
    assert_eq!(rec["span"]["fromTurn"], 4, "{rec}");
    env.mf_ok(&["verify", NATIVE]);
    assert!(read(&p).starts_with(&before));
    let all = lines_of(&p);
    let mine = all
        .iter()
        .rfind(|l| l["type"] == "session.compaction_complete" && l.get("mf").is_some())
        .expect("mf's compaction");
    let text = mine["data"]["summaryContent"].as_str().unwrap();
    assert!(text.starts_with(&native_summary), "{text}");
    assert!(text.contains("[summary of earlier turns"), "{text}");
    let sid = all
        .iter()
        .find(|l| l["type"] == "mf.summary")
        .and_then(|l| l["data"]["id"].as_str())
        .unwrap()
        .to_string();
    let n = all.len();
    env.mf_ok(&["expand", NATIVE, &sid, "--restore", "--force"]);
    env.mf_ok(&["verify", NATIVE]);
    let restored = &lines_of(&p)[n..];
    let shown = restored
        .iter()
        .find(|l| l["type"] == "session.compaction_complete")
        .expect("the restore shows Copilot's summary again");
    assert_eq!(shown["data"]["summaryContent"], native_summary.as_str());
    let prompts = restored
        .iter()
        .filter(|l| l["mf"]["op"] == "copy" && l["type"] == "user.message")
        .count();
    assert_eq!(prompts, 4, "every prompt after Copilot's compaction");
}

#[test]
fn a_stub_is_refused_by_name_and_nothing_is_written() {
    let (env, p) = session();
    let before = read(&p);
    let out = env.mf(&["compact", FIXTURE, "--strategy", "mask"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("GitHub Copilot CLI session") && out.stderr.contains("stub"),
        "{out:?}"
    );
    assert_eq!(read(&p), before);
}
