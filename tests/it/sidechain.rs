//! A Claude Code sub-agent's own file (issue 13): every row `isSidechain`, the first user row the
//! Task prompt its parent gave it. mf reads it with its turns and folds it like any single-prompt
//! session — the prompt verbatim, the recall view down to about a third — and the rows it writes
//! are the sub-agent's (`isSidechain: true`, its `agentId`, the parent's `sessionId`), which is
//! how Claude Code loads a sub-agent's rows back.

use serde_json::Value;

use crate::util::*;

/// The chat messages `mf recall` gives.
fn recall(env: &TestEnv, file: &str) -> Vec<Value> {
    let out = env.mf(&["recall", file, "--format", "chat"]);
    assert_eq!(out.code, 0, "{out:?}");
    json_lines(&out.stdout)
}

/// Fold the sub-agent file `name` (in `env`) with default flags and check everything above.
fn folds_as_the_sub_agent(env: &TestEnv, name: &str) {
    let rows = file_lines(&env.path(name));
    let agent = rows[0]["agentId"].as_str().expect("an agentId").to_string();
    let session = rows[0]["sessionId"]
        .as_str()
        .expect("a sessionId")
        .to_string();
    let prompt = rows[0]["message"]["content"]
        .as_str()
        .expect("the Task prompt")
        .to_string();
    assert!(
        rows.iter()
            .filter(|r| r.get("message").is_some())
            .all(|r| r["isSidechain"] == true),
        "{name}: not a sub-agent's own file"
    );
    let explain = env.mf(&["explain", name, "--json"]);
    assert_eq!(explain.code, 0, "{explain:?}");
    let turns = json_lines(&explain.stdout)[0]["turns"].as_u64().unwrap();
    assert!(turns >= 1, "{name}: read as {turns} turns");
    let before = recall(env, name);
    let out = env.mf(&["compact", name, "--model", "extractive", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    assert_eq!(rec["action"], "folded", "{name}: {}", rec["reason"]);
    let (b, a) = (
        rec["before"]["tokens"].as_f64().unwrap(),
        rec["after"]["tokens"].as_f64().unwrap(),
    );
    assert!(a <= 0.35 * b, "{name}: {a} of {b} recall tokens");
    let after = recall(env, name);
    assert!(
        after
            .iter()
            .any(|m| m["role"] == "user" && m["content"].as_str() == Some(prompt.as_str())),
        "{name}: the Task prompt is not verbatim in recall"
    );
    // What mf wrote for Claude Code to load is the sub-agent's own.
    let written: Vec<Value> = file_lines(&env.path(name)).split_off(rows.len());
    let shown: Vec<&Value> = written
        .iter()
        .filter(|r| r["mf"]["kind"] == "view")
        .collect();
    assert!(!shown.is_empty(), "{name}: no rows for Claude Code");
    for r in &shown {
        assert_eq!(r["isSidechain"], true, "{r}");
        assert_eq!(r["agentId"].as_str(), Some(agent.as_str()), "{r}");
        assert_eq!(r["sessionId"].as_str(), Some(session.as_str()), "{r}");
    }
    assert!(
        shown
            .iter()
            .any(|r| r["type"] == "user" && r["isCompactSummary"] == true),
        "{name}: no summary row"
    );
    let verify = env.mf(&["verify", name]);
    assert_eq!(verify.code, 0, "{verify:?}");
    // Restoring the summary gives the original recall back.
    let id = rec["summaries"][0]["id"].as_str().unwrap().to_string();
    let restore = env.mf(&["expand", name, &id, "--restore"]);
    assert_eq!(restore.code, 0, "{restore:?}");
    assert_eq!(recall(env, name), before, "{name}: restore");
}

#[test]
fn a_sub_agents_own_file_folds_with_its_prompt_verbatim() {
    let env = TestEnv::new();
    let f = env.copy_fixture("claude-subagent-sidechain.jsonl");
    let name = f.file_name().unwrap().to_str().unwrap();
    folds_as_the_sub_agent(&env, name);
}

#[test]
#[ignore = "needs MF_CORPUS (the shared corpus; .ci/run sets it)"]
fn the_corpus_sub_agent_file_folds_to_a_third() {
    let env = TestEnv::new();
    let src = corpus_dir().join("claude-code/cc-2.1.39-subagent-sidechain-file.jsonl");
    let name = "agent-a2898e3.jsonl";
    std::fs::copy(&src, env.path(name)).expect("copy the corpus file");
    folds_as_the_sub_agent(&env, name);
}
