//! Qwen Code sessions (issue 26): read as Qwen's own format (never as Claude Code's, whose
//! linking keys it shares), folded with default flags into the `chat_compression` record Qwen
//! resumes from, verified, restored exactly.
//!
//! Fixtures, written by `@qwen-code/qwen-code` 0.24.4 (node 22) against the loopback scripted
//! model (scripts/agents/harness/fakeapi.py + fake_qwen.py):
//! - `qwen-0.24.4-tools.jsonl`: 4 prompts (one a new session, then `qwen -c`), 11 tool calls
//!   (read_file, write_file, run_shell_command; two in parallel), thought parts in turn 2.
//! - `qwen-0.24.4-compressed.jsonl`: 3 prompts, then Qwen's own `/compress` (a
//!   `system/chat_compression` record whose history replaces what came before).

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

use crate::util::*;

const TOOLS: &str = "qwen-0.24.4-tools.jsonl";
const COMPRESSED: &str = "qwen-0.24.4-compressed.jsonl";

fn verify_clean(env: &TestEnv, name: &str) {
    let out = env.mf(&["verify", name]);
    assert_eq!(out.code, 0, "{name}: verify: {out:?}");
}

/// The lines appended after `before` (which must be unchanged), parsed.
fn appended(path: &Path, before: &[u8]) -> Vec<Value> {
    let now = read(path);
    assert_eq!(&now[..before.len()], before, "the original bytes changed");
    json_lines(std::str::from_utf8(&now[before.len()..]).unwrap())
}

/// The history Qwen resumes from, as its `SessionApiHistoryAccumulator` builds it: the chain
/// from the last record with an identity back by `parentUuid`, each record's `message`, a
/// `chat_compression` history replacing everything before it.
fn qwen_history(bytes: &[u8]) -> Vec<Value> {
    let recs: Vec<Value> = json_lines(std::str::from_utf8(bytes).unwrap())
        .into_iter()
        .filter(|r| r["uuid"].as_str().is_some_and(|u| !u.is_empty()) && r["sessionId"].is_string())
        .collect();
    let mut first = std::collections::HashMap::new();
    for (k, r) in recs.iter().enumerate() {
        first
            .entry(r["uuid"].as_str().unwrap().to_string())
            .or_insert(k);
    }
    let mut chain = Vec::new();
    let mut cur = recs.len().checked_sub(1);
    while let Some(k) = cur {
        chain.push(k);
        cur = recs[k]["parentUuid"]
            .as_str()
            .and_then(|p| first.get(p).copied());
    }
    chain.reverse();
    let mut h: Vec<Value> = Vec::new();
    for k in chain {
        let r = &recs[k];
        if r["type"] == "system" {
            if r["subtype"] == "chat_compression"
                && let Some(items) = r["systemPayload"]["compressedHistory"].as_array()
            {
                h = items.clone();
            }
            continue;
        }
        if !r["message"].is_object() {
            continue;
        }
        // A mid-turn message joins the user message before it.
        if r["subtype"] == "mid_turn_user_message"
            && let Some(last) = h.last_mut().filter(|l| l["role"] == "user")
        {
            let more = r["message"]["parts"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            last["parts"].as_array_mut().unwrap().extend(more);
            continue;
        }
        h.push(r["message"].clone());
    }
    h
}

fn assert_paired(history: &[Value]) {
    let ids = |k: &str| -> Vec<String> {
        history
            .iter()
            .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
            .filter_map(|p| p[k]["id"].as_str().map(str::to_string))
            .collect()
    };
    let (calls, results) = (ids("functionCall"), ids("functionResponse"));
    assert_eq!(
        calls.iter().collect::<HashSet<_>>(),
        results.iter().collect::<HashSet<_>>(),
        "calls and results are not paired"
    );
}

#[test]
fn a_qwen_session_is_read_as_qwen_code_with_its_turns_and_tool_pairs() {
    let (env, _) = aged_session(TOOLS);
    let ex = explain_json(&env, TOOLS);
    assert_eq!(ex["format"], "qwen", "{ex}");
    assert_eq!(ex["turns"], 4, "{ex}");
    let chat = recall_chat(&env, TOOLS);
    let prompts: Vec<&str> = chat
        .iter()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .map(|t| t.split(' ').next().unwrap())
        .collect();
    assert_eq!(prompts, ["setup:", "inspect:", "change:", "wrap:"]);
    let calls: HashSet<&str> = chat
        .iter()
        .flat_map(|m| m["tool_calls"].as_array().into_iter().flatten())
        .filter_map(|c| c["id"].as_str())
        .collect();
    let results: HashSet<&str> = chat
        .iter()
        .filter(|m| m["role"] == "tool")
        .filter_map(|m| m["tool_call_id"].as_str())
        .collect();
    assert_eq!(calls.len(), 11);
    assert_eq!(calls, results);
    // The thought parts stay with their message.
    assert!(
        chat.iter().any(|m| m["role"] == "assistant"
            && m["content"]
                .as_str()
                .is_some_and(|t| t.contains("hunch-inspect-1"))),
        "{chat:?}"
    );
    verify_clean(&env, TOOLS);
}

#[test]
fn compact_with_default_flags_writes_the_compression_qwen_resumes_from_and_restore_sends_all() {
    let (env, path) = aged_session(TOOLS);
    let original = read(&path);
    let before = qwen_history(&original);
    let rec = json_lines(
        &env.mf_ok(&["compact", TOOLS, "--model", "extractive", "--json"])
            .stdout,
    )
    .remove(0);
    assert_eq!(rec["action"], "folded", "{rec}");
    let out = appended(&path, &original);
    // mf's summary (no uuid: Qwen skips it), then the chat_compression record on the leaf.
    let (claim, view) = (&out[0], out.last().unwrap());
    assert_eq!(claim["type"], "mf_summary");
    assert!(claim.get("uuid").is_none());
    assert_eq!(view["type"], "system");
    assert_eq!(view["subtype"], "chat_compression");
    let leaf = json_lines(std::str::from_utf8(&original).unwrap())
        .last()
        .unwrap()["uuid"]
        .clone();
    assert_eq!(view["parentUuid"], leaf);
    // Qwen's own record, as its validator takes it: a fresh uuid, a string parent, the session's
    // id, a known type and subtype, an ISO timestamp, a history array.
    let uuid = view["uuid"].as_str().unwrap();
    assert_eq!(uuid.len(), 36);
    assert!(!original.windows(uuid.len()).any(|w| w == uuid.as_bytes()));
    assert!(view["timestamp"].as_str().unwrap().ends_with('Z'));
    assert!(view["systemPayload"]["compressedHistory"].is_array());
    assert_eq!(view["systemPayload"]["info"]["compressionStatus"], 1);
    assert_eq!(
        view["sessionId"],
        json_lines(std::str::from_utf8(&original).unwrap())[0]["sessionId"]
    );
    // What Qwen sends: mf's summary, Qwen's acknowledgement, then the original's last messages.
    let now = qwen_history(&read(&path));
    let label = claim["data"]["content"]
        .as_str()
        .unwrap()
        .lines()
        .next()
        .unwrap();
    assert!(label.starts_with("[summary of earlier turns"), "{label}");
    assert_eq!(now[0]["role"], "user");
    assert!(
        now[0]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with(label)
    );
    assert_eq!(
        now[1]["parts"][0]["text"],
        "Got it. Thanks for the additional context!"
    );
    let kept = &now[2..];
    assert!(!kept.is_empty() && kept.len() < before.len());
    assert_eq!(kept, &before[before.len() - kept.len()..]);
    assert_paired(&now);
    verify_clean(&env, TOOLS);

    // Restore: Qwen sends every message again, exactly.
    let id = rec["summaries"][0]["id"].as_str().unwrap().to_string();
    age(&path);
    let restored_at = read(&path);
    env.mf_ok(&["expand", TOOLS, &id, "--restore"]);
    let out = appended(&path, &restored_at);
    assert_eq!(out.last().unwrap()["subtype"], "chat_compression");
    assert_eq!(qwen_history(&read(&path)), before);
    verify_clean(&env, TOOLS);
}

#[test]
fn qwens_own_compression_is_a_floor_carried_first() {
    let (env, path) = aged_session(COMPRESSED);
    let ex = explain_json(&env, COMPRESSED);
    assert_eq!(ex["format"], "qwen", "{ex}");
    let chat = recall_chat(&env, COMPRESSED);
    // Only the compression's history: what came before it is history Qwen no longer sends.
    assert_eq!(chat.len(), 1, "{chat:?}");
    assert!(
        chat[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("<state_snapshot>")
    );
    // Nothing to fold after it; mf writes nothing.
    let original = read(&path);
    let out = env.mf_ok(&["compact", COMPRESSED, "--model", "extractive", "--json"]);
    assert_eq!(json_lines(&out.stdout)[0]["action"], "skipped");
    assert_eq!(read(&path), original);
    verify_clean(&env, COMPRESSED);
}

#[test]
fn from_qwen_reads_it_and_claude_code_is_not_taken_for_it() {
    let (env, _) = aged_session(TOOLS);
    let ex = json_lines(
        &env.mf_ok(&["explain", TOOLS, "--json", "--from", "qwen"])
            .stdout,
    )
    .remove(0);
    assert_eq!(ex["turns"], 4);
    let claude = env.copy_fixture("claude-session.jsonl");
    let ex = json_lines(
        &env.mf_ok(&["explain", claude.to_str().unwrap(), "--json"])
            .stdout,
    )
    .remove(0);
    assert_eq!(ex["format"], "claude");
}

#[test]
fn mf_sessions_lists_qwen_sessions_under_qwen_home() {
    let env = TestEnv::new();
    let home = env.path("qh");
    let chats = home.join("projects").join("-tmp-qe-proj").join("chats");
    std::fs::create_dir_all(&chats).unwrap();
    std::fs::copy(
        fixture(TOOLS),
        chats.join("ef295454-095e-475e-8144-716998ec34ce.jsonl"),
    )
    .unwrap();
    let out = env.mf_env(
        &["sessions", "--agent", "qwen", "--json"],
        &[
            ("QWEN_HOME", home.to_str().unwrap()),
            ("HOME", env.path("h").to_str().unwrap()),
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let text = &out.stdout;
    assert!(
        text.contains("ef295454-095e-475e-8144-716998ec34ce.jsonl"),
        "{text}"
    );
    assert!(text.contains("/tmp/qe/proj"), "{text}");
}

#[test]
fn a_session_qwen_holds_the_writer_lock_of_is_refused_as_live() {
    let (env, path) = aged_session(TOOLS);
    let sid = "ef295454-095e-475e-8144-716998ec34ce";
    let locks = env.path("qh").join("tmp").join("session-writer-locks");
    std::fs::create_dir_all(&locks).unwrap();
    let lock = locks.join(format!("{sid}.lock"));
    // This test's own process stands for the Qwen process holding the lock.
    let record = |state: &str| {
        format!(
            r#"{{"schema_version":1,"state":"{state}","session_id":"{sid}","owner_id":"o","pid":{},"hostname":"h","process_kind":"daemon"}}"#,
            std::process::id()
        )
    };
    std::fs::write(&lock, record("active")).unwrap();
    let before = read(&path);
    let vars = [
        ("QWEN_HOME", env.path("qh").to_str().unwrap().to_string()),
        ("HOME", env.path("h").to_str().unwrap().to_string()),
    ];
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let out = env.mf_env(
        &["compact", TOOLS, "--model", "extractive", "--json"],
        &vars,
    );
    assert_eq!(out.code, 75, "{out:?}");
    assert!(out.stderr.contains("writer lock"), "{out:?}");
    assert_eq!(read(&path), before);
    // A released lock does not stand in the way.
    std::fs::write(&lock, record("released")).unwrap();
    let out = env.mf_env(
        &["compact", TOOLS, "--model", "extractive", "--json"],
        &vars,
    );
    assert_eq!(out.code, 0, "{out:?}");
}

/// A Qwen record line (`parent` "" for a root).
fn rec(uuid: &str, parent: &str, ty: &str, role: &str, text: &str) -> String {
    let parent = if parent.is_empty() {
        "null".to_string()
    } else {
        format!("\"{parent}\"")
    };
    format!(
        r#"{{"uuid":"{uuid}","parentUuid":{parent},"sessionId":"s1","timestamp":"2026-12-03T10:00:00.000Z","type":"{ty}","cwd":"/w","version":"0.24.4","message":{{"role":"{role}","parts":[{{"text":"{text}"}}]}}}}"#
    ) + "\n"
}

#[test]
fn only_the_chain_qwen_resumes_is_shown_and_fragments_are_one_message() {
    let env = TestEnv::new();
    let text = [
        rec("r1", "", "user", "user", "first prompt"),
        rec("r2", "r1", "assistant", "model", "first answer"),
        rec("r3", "r2", "user", "user", "abandoned prompt"),
        rec("r4", "r3", "assistant", "model", "abandoned answer"),
        // A rewind: a new branch off r2; the last record is the leaf.
        rec("r5", "r2", "user", "user", "second prompt"),
        rec("r6", "r5", "assistant", "model", "second answer, part one"),
        // A later fragment of r6 (the same uuid): its parts join r6's.
        rec("r6", "r5", "assistant", "model", "part two"),
        // A line without a valid identity: Qwen skips it.
        r#"{"type":"user","message":{"role":"user","parts":[{"text":"no identity"}]}}"#.to_string()
            + "\n",
    ]
    .concat();
    let p = env.write("branch.jsonl", &text);
    let chat = recall_chat(&env, p.to_str().unwrap());
    let texts: Vec<&str> = chat
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        [
            "first prompt",
            "first answer",
            "second prompt",
            "second answer, part one\npart two"
        ]
    );
    let ex = explain_json(&env, p.to_str().unwrap());
    assert_eq!(ex["format"], "qwen");
    assert_eq!(ex["turns"], 2, "{ex}");
    assert_eq!(ex["branch"]["offBranch"], 2, "{ex}");
    verify_clean(&env, p.to_str().unwrap());
}

#[test]
fn mask_writes_stubs_qwen_shows_in_place_of_the_results_and_restore_brings_them_back() {
    let env = TestEnv::new();
    let mut text = String::new();
    let mut parent = String::new();
    let mut n = 0;
    let mut add = |ty: &str, role: &str, parts: Value| {
        n += 1;
        let uuid = format!("u{n:04}");
        let line = serde_json::json!({"uuid": uuid, "parentUuid": if parent.is_empty() { Value::Null } else { Value::from(parent.clone()) },
            "sessionId": "s", "timestamp": "2026-12-03T10:00:00.000Z", "type": ty, "cwd": "/w", "version": "0.24.4",
            "message": {"role": role, "parts": parts}});
        text.push_str(&format!("{line}\n"));
        parent = uuid;
    };
    for t in 0..4 {
        add(
            "user",
            "user",
            serde_json::json!([{"text": format!("turn{t} please read files")}]),
        );
        for k in 0..4 {
            let id = format!("c{t}{k}");
            add(
                "assistant",
                "model",
                serde_json::json!([{"functionCall": {"id": id, "name": "read_file", "args": {"file_path": format!("/w/f{t}{k}")}}}]),
            );
            let output = format!("line of file {t} {k}\n").repeat(300);
            add(
                "tool_result",
                "user",
                serde_json::json!([{"functionResponse": {"id": id, "name": "read_file", "response": {"output": output}}}]),
            );
        }
        add(
            "assistant",
            "model",
            serde_json::json!([{"text": format!("done {t}")}]),
        );
    }
    let path = env.write("big.jsonl", &text);
    age(&path);
    let original = read(&path);
    let before = qwen_history(&original);
    let rec = json_lines(
        &env.mf_ok(&[
            "compact",
            "big.jsonl",
            "--model",
            "extractive",
            "--strategy",
            "mask",
            "--json",
        ])
        .stdout,
    )
    .remove(0);
    assert_eq!(rec["action"], "masked", "{rec}");
    let now = qwen_history(&read(&path));
    assert_eq!(now.len(), before.len());
    assert_paired(&now);
    let stubbed = now
        .iter()
        .filter(|c| {
            c["parts"][0]["functionResponse"]["response"]["output"]
                .as_str()
                .is_some_and(|o| o.starts_with("[tool result hidden by mf"))
        })
        .count();
    assert!(stubbed > 0);
    verify_clean(&env, "big.jsonl");
    for s in rec["summaries"].as_array().unwrap().iter().rev() {
        age(&path);
        env.mf_ok(&[
            "expand",
            "big.jsonl",
            s["id"].as_str().unwrap(),
            "--restore",
        ]);
    }
    assert_eq!(qwen_history(&read(&path)), before);
    verify_clean(&env, "big.jsonl");
}

#[test]
fn a_mid_turn_message_in_the_kept_tail_is_joined_as_qwen_joins_it() {
    let env = TestEnv::new();
    let mut text = String::new();
    let mut parent = String::new();
    let mut n = 0;
    let mut add = |ty: &str, subtype: Option<&str>, role: &str, parts: Value| {
        n += 1;
        let uuid = format!("u{n:04}");
        let mut line = serde_json::json!({"uuid": uuid, "parentUuid": if parent.is_empty() { Value::Null } else { Value::from(parent.clone()) },
            "sessionId": "s", "timestamp": "2026-12-03T10:00:00.000Z", "type": ty, "cwd": "/w", "version": "0.24.4",
            "message": {"role": role, "parts": parts}});
        if let Some(st) = subtype {
            line["subtype"] = Value::from(st);
        }
        text.push_str(&format!("{line}\n"));
        parent = uuid;
    };
    for t in 0..6 {
        add(
            "user",
            None,
            "user",
            serde_json::json!([{"text": format!("turn{t} run things")}]),
        );
        for k in 0..2 {
            let id = format!("c{t}{k}");
            add(
                "assistant",
                None,
                "model",
                serde_json::json!([{"functionCall": {"id": id, "name": "run_shell_command", "args": {"command": format!("echo {t} {k}")}}}]),
            );
            add(
                "tool_result",
                None,
                "user",
                serde_json::json!([{"functionResponse": {"id": id, "name": "run_shell_command", "response": {"output": format!("output line {t} {k} of a longer run\n").repeat(20)}}}]),
            );
            if t == 5 && k == 0 {
                add(
                    "user",
                    Some("mid_turn_user_message"),
                    "user",
                    serde_json::json!([{"text": "also check the logs"}]),
                );
            }
        }
        add(
            "assistant",
            None,
            "model",
            serde_json::json!([{"text": format!("done {t}")}]),
        );
    }
    let path = env.write("mid.jsonl", &text);
    age(&path);
    let original = read(&path);
    let before = qwen_history(&original);
    let rec = json_lines(
        &env.mf_ok(&["compact", "mid.jsonl", "--model", "extractive", "--json"])
            .stdout,
    )
    .remove(0);
    assert_eq!(rec["action"], "folded", "{rec}");
    let now = qwen_history(&read(&path));
    let kept = &now[2..];
    assert_eq!(kept, &before[before.len() - kept.len()..]);
    assert!(
        kept.iter()
            .any(|c| c["parts"].as_array().unwrap().len() == 2),
        "the mid-turn message is joined: {kept:?}"
    );
    verify_clean(&env, "mid.jsonl");
    age(&path);
    env.mf_ok(&[
        "expand",
        "mid.jsonl",
        rec["summaries"][0]["id"].as_str().unwrap(),
        "--restore",
    ]);
    assert_eq!(qwen_history(&read(&path)), before);
}

#[test]
fn mf_hook_qwen_answers_precompact_with_a_keep_list_qwen_adds_to_its_summary_instructions() {
    let (env, path) = aged_session(TOOLS);
    let input = |event: &str| {
        format!(
            r#"{{"session_id":"s","transcript_path":"{}","cwd":"/w","hook_event_name":"{event}","trigger":"manual","custom_instructions":""}}"#,
            path.display()
        )
    };
    let before = read(&path);
    env.write("pre.json", &input("PreCompact"));
    let out = env.sh_ok(&format!("{} hook qwen < pre.json", mf_bin()));
    let answer: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(answer["hookSpecificOutput"]["hookEventName"], "PreCompact");
    let text = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(text.starts_with("mf keep-list:"), "{text}");
    assert!(
        text.contains("first notes about the project") || text.contains("todo.txt"),
        "{text}"
    );
    // Qwen Code 0.24.4 takes at most 4,000 characters of it.
    assert!(text.chars().count() <= 4_000, "{}", text.chars().count());
    // Other events get nothing; the session is never written.
    env.write("start.json", &input("SessionStart"));
    let out = env.sh_ok(&format!("{} hook qwen < start.json", mf_bin()));
    assert!(out.stdout.is_empty());
    assert_eq!(read(&path), before);
}

/// `mf hook install qwen` puts mf's PreCompact hook in Qwen Code's settings (`$QWEN_HOME`, else
/// `~/.qwen`, or the project's `.qwen/` with `--project`), once; `uninstall` gives the file back
/// byte for byte (and removes a file mf created), a user's own hooks and keys untouched.
#[test]
fn hook_install_qwen_adds_the_precompact_hook_and_uninstall_gives_the_file_back() {
    let env = TestEnv::new();
    let home = env.path("home");
    std::fs::create_dir_all(home.join(".qwen")).unwrap();
    let h = home.to_str().unwrap();
    let settings = home.join(".qwen/settings.json");
    // No file: created, then removed.
    let out = env.mf_env(&["hook", "install", "qwen"], &[("HOME", h)]);
    assert_eq!(out.code, 0, "{out:?}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    let cmd = v["hooks"]["PreCompact"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert!(
        cmd.ends_with(" hook qwen # added by mf hook install"),
        "{v}"
    );
    assert!(
        std::path::Path::new(cmd.split(' ').next().unwrap()).is_absolute(),
        "{cmd}"
    );
    let again = env.mf_env(&["hook", "install", "qwen"], &[("HOME", h)]);
    assert!(again.stderr.contains("nothing to change"), "{again:?}");
    let out = env.mf_env(&["hook", "uninstall", "qwen"], &[("HOME", h)]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!settings.exists(), "mf created it, mf removes it");
    std::fs::create_dir_all(home.join(".qwen")).unwrap();
    // A user's file (CRLF, their own PreCompact hook, keys mf does not know): back byte for byte.
    let mine = "{\r\n  \"model\": {\"name\": \"qwen3-coder\"},\r\n  \"hooks\": {\"PreCompact\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"echo mine\"}]}]},\r\n  \"n\": 123456789012345678901234567890\r\n}\r\n";
    std::fs::write(&settings, mine).unwrap();
    env.mf_env(&["hook", "install", "qwen"], &[("HOME", h)])
        .ok();
    let with = std::fs::read_to_string(&settings).unwrap();
    assert!(
        with.contains("echo mine") && with.contains("hook qwen # added by mf"),
        "{with}"
    );
    env.mf_env(&["hook", "uninstall", "qwen"], &[("HOME", h)])
        .ok();
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), mine);
    // $QWEN_HOME moves it; --project writes the project's .qwen/settings.json.
    let qh = env.path("qh");
    std::fs::create_dir_all(&qh).unwrap();
    env.mf_env(
        &["hook", "install", "qwen"],
        &[("HOME", h), ("QWEN_HOME", qh.to_str().unwrap())],
    )
    .ok();
    assert!(qh.join("settings.json").exists());
    env.mf_env(&["hook", "install", "qwen", "--project"], &[("HOME", h)])
        .ok();
    assert!(env.path(".qwen/settings.json").exists());
}
