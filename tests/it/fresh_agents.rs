//! Sessions as today's agents write them (issue 13), on fixtures the real agents wrote fresh
//! against a loopback model that asked for tool calls (the agent ran them in a temp dir, then
//! answered in text):
//! - `codex-0.171-exec-tools.jsonl`: `codex exec` 0.171.0, then two `codex exec resume` turns;
//!   3 prompts, 6 `exec_command` calls. Every line carries `"ordinal": N`; the prompt is recorded
//!   as `event_msg/item_completed` with a `UserMessage` item (no `event_msg/user_message`).
//! - `pi-1.6-session-tools.jsonl`: `@earendil-works/pi-coding-agent` 1.6.0 `-p` (Node 22), 6
//!   prompts, 12 `bash`/`read` calls; it opens with a `system` message entry (prompt and tools).
//! - `pi-1.6-native-compaction.jsonl`: the same kind of pi 1.6 session (7 prompts), then pi's own
//!   compaction (RPC `compact`, `keepRecentTokens` 150): pi cut inside turn 5, keeping from its
//!   final answer and summarizing the turn's prefix apart ("Turn Context (split turn)"); the
//!   entry carries `systemMessage`, `usage` and `details`; then 3 more prompts.
//! - `pi-0.73-session-tools.jsonl`: `@mariozechner/pi-coding-agent` 0.73.1, the same prompts
//!   (v3, no system entry), for comparison.
//!
//! What the agents then did with mf's lines was checked by hand with the real agents (in place,
//! in the agent's own home): `codex exec resume` after `mf compact` sends the preamble, mf's
//! summary, the kept turn and the new prompt; after `mf expand --restore` the whole history;
//! pi 1.6 after `mf compact` sends its system prompt (identical), mf's summary and the kept turn,
//! and appends no system entry; after a restore following a continuation it sends every
//! original turn, with no note. These tests pin the lines that made that so.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{Value, json};

use crate::server::{TestServer, openai_ok};
use crate::util::*;

const CODEX171: &str = "codex-0.171-exec-tools.jsonl";
const CODEX_LEGACY: &str = "codex-rollout.jsonl";
const PI16: &str = "pi-1.6-session-tools.jsonl";
const PI073: &str = "pi-0.73-session-tools.jsonl";
const PI16_NATIVE: &str = "pi-1.6-native-compaction.jsonl";

/// `compact --model extractive --json` with `extra`: the record, which must say `folded`.
fn compact(env: &TestEnv, name: &str, extra: &[&str]) -> Value {
    let mut args = vec!["compact", name, "--model", "extractive", "--json"];
    args.extend_from_slice(extra);
    let rec = json_lines(&env.mf_ok(&args).stdout).remove(0);
    assert_eq!(rec["action"], "folded", "{rec}");
    rec
}

fn restore(env: &TestEnv, path: &Path, name: &str, id: &str) {
    age(path);
    env.mf_ok(&["expand", name, id, "--restore"]);
}

fn verify_clean(env: &TestEnv, name: &str) {
    let out = env.mf(&["verify", name]);
    assert_eq!(out.code, 0, "{name}: verify: {out:?}");
}

/// The file's lines after the first `n` bytes, parsed; the first `n` bytes unchanged.
fn appended(path: &Path, before: &[u8]) -> Vec<Value> {
    let now = read(path);
    assert_eq!(&now[..before.len()], before, "the original bytes changed");
    let lines = json_lines(std::str::from_utf8(&now[before.len()..]).unwrap());
    assert!(!lines.is_empty(), "nothing appended");
    for l in &lines {
        assert!(l["mf"].is_object(), "a line that is not mf's: {l}");
    }
    lines
}

fn ranges(summary: &Value) -> Vec<(u32, u32)> {
    summary["mf"]["coverage"]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[0].as_u64().unwrap() as u32, r[1].as_u64().unwrap() as u32))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Codex 0.171.

/// The `response_item` payloads of a rollout, with their line numbers.
fn response_items(lines: &[(u32, Value)]) -> Vec<(u32, Value)> {
    lines
        .iter()
        .filter(|(_, v)| v["type"] == "response_item")
        .map(|(n, v)| (*n, v["payload"].clone()))
        .collect()
}

fn assert_paired(items: &[Value]) {
    let ids = |pred: &dyn Fn(&str) -> bool| -> HashSet<String> {
        items
            .iter()
            .filter(|it| it["type"].as_str().is_some_and(pred))
            .map(|it| it["call_id"].as_str().unwrap().to_string())
            .collect()
    };
    let calls = ids(&|t| t == "function_call" || t == "custom_tool_call");
    let outputs = ids(&|t| t.ends_with("_output"));
    assert!(!calls.is_empty());
    assert_eq!(calls, outputs, "calls and outputs are not paired");
}

/// The ordinals of `lines`: every one has one, each the one before plus one, from `next`.
fn assert_ordinals_from(lines: &[Value], next: u64) {
    for (k, l) in lines.iter().enumerate() {
        assert_eq!(
            l["ordinal"].as_u64(),
            Some(next + k as u64),
            "line {k} of mf's append: {l}"
        );
    }
}

#[test]
fn codex_0171_rollout_is_read_with_its_turns() {
    let (env, _) = aged_session(CODEX171);
    let ex = explain_json(&env, CODEX171);
    assert_eq!(ex["turns"], 3, "{ex}");
    // The prompts start the turns: each fold is of whole turns, the newest stays verbatim.
    let rec = compact(&env, CODEX171, &[]);
    assert_eq!(rec["span"]["fromTurn"], 1, "{rec}");
    assert_eq!(rec["verbatim"]["toTurn"], 3, "{rec}");
    let after = recall_chat(&env, CODEX171);
    assert!(
        after[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("[summary of earlier turns 1–"),
        "{}",
        after[0]
    );
    assert_eq!(
        after.last().unwrap()["content"],
        "Done with: Who is the owner, per the notes?. I ran 2 commands; notes.txt has the facts."
    );
    verify_clean(&env, CODEX171);
}

#[test]
fn codex_0171_every_line_mf_appends_carries_the_next_ordinal() {
    let (env, path) = aged_session(CODEX171);
    let original = read(&path);
    let lines = numbered(&original);
    let top = lines
        .iter()
        .map(|(_, v)| v["ordinal"].as_u64().expect("0.171 numbers every line"))
        .max()
        .unwrap();
    let items = response_items(&lines);
    let before = recall_chat(&env, CODEX171);

    compact(&env, CODEX171, &["--recent", "1"]);
    let out = appended(&path, &original);
    assert_eq!(out.len(), 3, "{out:?}");
    assert_ordinals_from(&out, top + 1);
    // `compacted` last: Codex acts on it alone, so a write cut before it leaves Codex as it was.
    assert_eq!(out[0]["type"], "mf_summary");
    assert_eq!(out[1]["payload"]["type"], "context_compacted");
    assert_eq!(out[2]["type"], "compacted");
    // The history Codex resumes from: the preamble, mf's summary, the kept items verbatim.
    let first_prompt = lines
        .iter()
        .find(|(_, v)| v["payload"]["item"]["type"] == "UserMessage")
        .unwrap()
        .0;
    let last_folded = ranges(&out[0]).iter().map(|r| r.1).max().unwrap();
    let preamble: Vec<Value> = items
        .iter()
        .filter(|(n, _)| *n < first_prompt - 1)
        .map(|(_, p)| p.clone())
        .collect();
    let kept: Vec<Value> = items
        .iter()
        .filter(|(n, _)| *n > last_folded)
        .map(|(_, p)| p.clone())
        .collect();
    assert_eq!(kept[0]["role"], "user");
    let h = out[2]["payload"]["replacement_history"].as_array().unwrap();
    let text = out[0]["payload"]["content"].as_str().unwrap();
    assert_eq!(&h[..preamble.len()], &preamble[..]);
    assert_eq!(
        h[preamble.len()],
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
    );
    assert_eq!(&h[preamble.len() + 1..], &kept[..]);
    assert_paired(h);
    verify_clean(&env, CODEX171);

    // Restore: the whole history again, numbered on.
    let compacted = read(&path);
    let id = out[0]["payload"]["id"].as_str().unwrap().to_string();
    restore(&env, &path, CODEX171, &id);
    let undo = appended(&path, &compacted);
    assert_ordinals_from(&undo, top + 1 + out.len() as u64);
    let all: Vec<Value> = items.into_iter().map(|(_, p)| p).collect();
    let full = undo.iter().find(|l| l["type"] == "compacted").unwrap();
    assert_eq!(
        full["payload"]["replacement_history"].as_array().unwrap(),
        &all
    );
    assert_eq!(recall_chat(&env, CODEX171), before);
    verify_clean(&env, CODEX171);
}

#[test]
fn a_rollout_without_ordinals_gets_none() {
    let (env, path) = aged_session(CODEX_LEGACY);
    let original = read(&path);
    compact(&env, CODEX_LEGACY, &["--recent", "2", "--force"]);
    for l in appended(&path, &original) {
        assert!(l.get("ordinal").is_none(), "{l}");
    }
}

// ---------------------------------------------------------------------------------------------
// pi 1.6.

/// The first line of the session: its `system` message entry.
fn system_entry(lines: &[(u32, Value)]) -> (u32, Value) {
    let (n, v) = lines
        .iter()
        .find(|(_, v)| v["message"]["role"] == "system")
        .unwrap();
    (*n, v["message"].clone())
}

#[test]
fn pi_16_system_entry_is_neither_a_turn_nor_shown() {
    let (env, path) = aged_session(PI16);
    let lines = numbered(&read(&path));
    let (sys_line, _) = system_entry(&lines);
    let ex = explain_json(&env, PI16);
    assert_eq!(ex["turns"], 6);
    assert_eq!(
        ex["entries"], 36,
        "36 messages besides the system entry: {ex}"
    );
    let shown = recall_chat(&env, PI16);
    assert_eq!(shown.len(), 36);
    assert_eq!(
        shown[0],
        json!({"role": "user", "content": "Read notes.txt and tell me the port"})
    );
    for m in &shown {
        assert!(
            !(m["role"] == "user" && m["content"] == ""),
            "an empty user message in recall"
        );
        assert!(m["role"] != "system", "the system entry shown: {m}");
    }
    let rec = compact(&env, PI16, &[]);
    for (a, b) in rec["span"]["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r[0].as_u64().unwrap(), r[1].as_u64().unwrap()))
    {
        assert!(
            !(a..=b).contains(&(sys_line as u64)),
            "the system entry is folded"
        );
    }
}

#[test]
fn pi_16_compacts_with_default_flags_as_explain_says_and_carries_the_system_message() {
    let (env, path) = aged_session(PI16);
    let original = read(&path);
    let lines = numbered(&original);
    let (_, system) = system_entry(&lines);
    let before = recall_chat(&env, PI16);
    let plan = explain_json(&env, PI16)["now"].clone();
    assert_eq!(plan["action"], "planned", "{plan}");

    let rec = compact(&env, PI16, &[]);
    assert_eq!(rec["span"], plan["span"], "explain and compact disagree");
    let out = appended(&path, &original);
    assert_eq!(out.len(), 2, "{out:?}");
    let (claim, view) = (&out[0], &out[1]);
    assert_eq!(view["type"], "compaction");
    assert_eq!(view["parentId"], claim["id"]);
    // The first kept entry is the prompt of the turn that stays.
    let last_folded = ranges(claim).iter().map(|r| r.1).max().unwrap();
    let first_kept = pi_path(&lines)
        .into_iter()
        .find(|(n, v)| *n > last_folded && v["type"] == "message")
        .unwrap();
    assert_eq!(first_kept.1["message"]["role"], "user");
    assert_eq!(view["firstKeptEntryId"], first_kept.1["id"]);
    // pi's prompt and tools as pi replays them, stamped with the compaction's time: pi then
    // keeps its prompt and appends no system entry of its own.
    let sm = &view["systemMessage"];
    assert_eq!(sm["role"], "system");
    assert_eq!(sm["content"], "");
    assert_eq!(sm["sections"], system["sections"]);
    assert_eq!(
        sm["sections"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        system["sections"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        "the sections in pi's order (the prompt is rendered in it)"
    );
    assert_eq!(sm["toolsAdded"], system["toolsAdded"]);
    let at = claim["mf"]["coverage"]["summarizedAtMs"].as_u64().unwrap();
    let ts = sm["timestamp"].as_u64().unwrap();
    assert!((at..at + 10).contains(&ts), "{ts} vs {at}");

    let after = recall_chat(&env, PI16);
    assert!(
        after[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("[summary of earlier turns 1–")
    );
    let tail = after.len() - 1;
    assert_eq!(&after[1..], &before[before.len() - tail..]);
    verify_clean(&env, PI16);
}

/// pi's `context_edit` line, chained on `parent`.
fn context_edit(id: &str, parent: &str, target: &str, replacement: Value) -> String {
    json!({"type": "context_edit", "id": id, "parentId": parent, "timestamp": "2026-12-01T09:40:00.000Z",
           "targetId": target, "replacement": replacement})
    .to_string()
}

#[test]
fn a_context_edit_hides_or_replaces_its_target_in_recall_and_for_the_summarizer() {
    let (env, path) = aged_session(PI16);
    let lines = numbered(&read(&path));
    let msgs: Vec<&(u32, Value)> = lines
        .iter()
        .filter(|(_, v)| v["type"] == "message")
        .collect();
    // Turn 1's answer is hidden; turn 2's first tool result (a `bash` run) is replaced.
    let answer = msgs
        .iter()
        .find(|(_, v)| {
            v["message"]["role"] == "assistant" && v["message"]["content"][0]["type"] == "text"
        })
        .unwrap();
    let hidden = answer.1["message"]["content"][0]["text"].as_str().unwrap();
    let second_prompt = msgs
        .iter()
        .position(|(_, v)| v["message"]["content"][0]["text"] == "Now count the lines of notes.txt")
        .unwrap();
    let result = msgs[second_prompt..]
        .iter()
        .find(|(_, v)| v["message"]["role"] == "toolResult")
        .unwrap();
    let original = result.1["message"]["content"][0]["text"].as_str().unwrap();
    assert!(original.starts_with("step-"), "{original}");
    let leaf = lines.last().unwrap().1["id"].as_str().unwrap();
    let mut text = String::from_utf8(read(&path)).unwrap();
    text.push_str(&context_edit(
        "e0000001",
        leaf,
        answer.1["id"].as_str().unwrap(),
        Value::Null,
    ));
    text.push('\n');
    text.push_str(&context_edit(
        "e0000002",
        "e0000001",
        result.1["id"].as_str().unwrap(),
        json!({"content": "[pruned by an extension]"}),
    ));
    text.push('\n');
    std::fs::write(&path, text).unwrap();
    age(&path);

    let shown = recall_chat(&env, PI16);
    let all = serde_json::to_string(&shown).unwrap();
    assert!(!all.contains(hidden), "a hidden entry in recall");
    assert!(
        !all.contains(original),
        "a replaced entry's old content in recall"
    );
    let replaced = shown
        .iter()
        .find(|m| m["tool_call_id"] == result.1["message"]["toolCallId"])
        .unwrap();
    assert_eq!(replaced["content"], "[pruned by an extension]");
    assert_eq!(shown.len(), 35);

    // The summarizer gets what pi sends.
    let server = TestServer::start(vec![openai_ok(
        "Goal: read notes.txt. Facts: port 8123, owner Rosa, deploy on fridays.",
    )]);
    let base = format!("{}/v1", server.url());
    let out = env.mf(&[
        "compact",
        PI16,
        "--model",
        "openai-compatible:scripted",
        "--base-url",
        &base,
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    let sent = reqs[0].json().to_string();
    assert!(sent.contains("[pruned by an extension]"), "{sent}");
    assert!(!sent.contains(original));
    assert!(!sent.contains(hidden));
}

/// What pi appends when it goes on from mf's compaction: a prompt and its answer.
fn continue_as_pi(path: &Path) -> (String, String) {
    let lines = numbered(&read(path));
    let leaf = lines.last().unwrap().1["id"].as_str().unwrap().to_string();
    let prompt = "And which day do we deploy, again?";
    let answer = "Fridays, per notes.txt.";
    let user = json!({"type": "message", "id": "c0ffee01", "parentId": leaf, "timestamp": "2026-12-01T10:00:00.000Z",
        "message": {"role": "user", "content": [{"type": "text", "text": prompt}], "timestamp": 1796119200000u64}});
    let reply = json!({"type": "message", "id": "c0ffee02", "parentId": "c0ffee01", "timestamp": "2026-12-01T10:00:01.000Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": answer}], "api": "openai-completions",
                    "provider": "fake", "model": "fake-model", "stopReason": "stop", "timestamp": 1796119201000u64}});
    let mut text = String::from_utf8(read(path)).unwrap();
    text.push_str(&format!("{user}\n{reply}\n"));
    std::fs::write(path, text).unwrap();
    age(path);
    (prompt.into(), answer.into())
}

#[test]
fn pi_v3_restore_after_the_agent_went_on_leaves_no_note() {
    for name in [PI073, PI16] {
        let (env, path) = aged_session(name);
        let before = recall_chat(&env, name);
        let rec = compact(&env, name, &[]);
        let id = rec["summaries"][0]["id"].as_str().unwrap().to_string();
        let (prompt, answer) = continue_as_pi(&path);
        let went_on = read(&path);
        restore(&env, &path, name, &id);
        let undo = appended(&path, &went_on);
        for l in &undo {
            assert!(
                l["type"] != "compaction",
                "{name}: restore wrote a compaction: {l}"
            );
        }
        let after = recall_chat(&env, name);
        let mut want = before.clone();
        want.push(json!({"role": "user", "content": prompt}));
        want.push(json!({"role": "assistant", "content": answer}));
        assert_eq!(after, want, "{name}: recall after restore");
        // pi's path: the originals, then the two entries pi wrote, as copies (same content).
        let all = numbered(&read(&path));
        let path_now = pi_path(&all);
        assert!(
            path_now.iter().all(|(_, v)| v["type"] != "compaction"),
            "{name}: a compaction on pi's path"
        );
        let texts: Vec<&Value> = path_now
            .iter()
            .filter(|(_, v)| v["type"] == "message" && v["message"]["role"] == "user")
            .map(|(_, v)| &v["message"]["content"][0]["text"])
            .collect();
        assert_eq!(texts.len(), 7, "{name}");
        assert_eq!(texts[6], prompt.as_str());
        verify_clean(&env, name);
    }
}

#[test]
fn pi_073_sessions_compact_as_before() {
    let (env, path) = aged_session(PI073);
    let original = read(&path);
    let ex = explain_json(&env, PI073);
    assert_eq!(ex["turns"], 6);
    assert_eq!(ex["entries"], 36);
    let before = recall_chat(&env, PI073);
    compact(&env, PI073, &[]);
    let out = appended(&path, &original);
    assert_eq!(out.len(), 2);
    let view = &out[1];
    assert_eq!(view["type"], "compaction");
    assert!(
        view.get("systemMessage").is_none(),
        "0.73 has no system entries"
    );
    let lines = numbered(&original);
    let last_folded = ranges(&out[0]).iter().map(|r| r.1).max().unwrap();
    let first_kept = lines
        .iter()
        .find(|(n, v)| *n > last_folded && v["type"] == "message")
        .unwrap();
    assert_eq!(view["firstKeptEntryId"], first_kept.1["id"]);
    let after = recall_chat(&env, PI073);
    let tail = after.len() - 1;
    assert_eq!(&after[1..], &before[before.len() - tail..]);
    verify_clean(&env, PI073);
}

#[test]
fn after_pis_own_compaction_mf_carries_pis_system_checkpoint() {
    let (env, path) = aged_session(PI16_NATIVE);
    let original = read(&path);
    let lines = numbered(&original);
    let (floor, native) = lines
        .iter()
        .find(|(_, v)| v["type"] == "compaction")
        .unwrap()
        .clone();
    // What pi sends: its summary, then from the kept entry (an answer, mid-turn) on.
    let before = recall_chat(&env, PI16_NATIVE);
    assert_eq!(before[0]["content"], native["summary"]);
    let kept = lines
        .iter()
        .find(|(_, v)| v["id"] == native["firstKeptEntryId"])
        .unwrap();
    assert_eq!(kept.1["message"]["role"], "assistant");
    assert_eq!(
        before[1]["content"],
        kept.1["message"]["content"][0]["text"]
    );
    assert_eq!(before.len(), 14 + 18);
    let ex = explain_json(&env, PI16_NATIVE);
    assert_eq!(ex["native"][0]["line"], floor);

    compact(&env, PI16_NATIVE, &[]);
    let out = appended(&path, &original);
    let view = out.last().unwrap();
    assert_eq!(view["type"], "compaction");
    // pi's checkpoint at its own compaction is the prompt now (no system entry after it).
    let (sm, was) = (&view["systemMessage"], &native["systemMessage"]);
    for k in ["role", "content", "sections", "toolsAdded"] {
        assert_eq!(sm[k], was[k], "{k}");
    }
    // mf's fold takes pi's summary in (pi then sends mf's alone) and keeps the newest turn.
    assert!(ranges(&out[0]).iter().any(|r| (r.0..=r.1).contains(&floor)));
    let after = recall_chat(&env, PI16_NATIVE);
    assert!(
        after[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("[summary of earlier turns")
    );
    let tail = after.len() - 1;
    assert_eq!(&after[1..], &before[before.len() - tail..]);
    verify_clean(&env, PI16_NATIVE);
}
