//! Issue 25, defect 7 (agent-facing): what mf writes into an agent's session is what the agent
//! will send, and what mf copies of the agent's own lines is their bytes.

use std::collections::HashMap;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::util::{TestEnv, age, json_lines, read};

/// Floats that serde_json without `float_roundtrip` reads one unit in the last place off (found
/// by a search over `1.7e9 + fraction` values; each is the shortest form of its double, as
/// `JSON.stringify` and Codex write it).
const FLOATS: [&str; 5] = [
    "1740219417.8939915",
    "1730471407.2104483",
    "1761030994.8049679",
    "1702965286.4977515",
    "1781487558.1304321",
];

/// A number no f64 holds, a float in a form a serializer never writes, and an escape: bytes only
/// a copy of the original keeps.
const RAW: &str = r#""probe":[12345678901234567890123,1.0E2,"\u00e9"]"#;

/// `fixture` with `"create_time":<float>` and [`RAW`] put first in every object line (and, for a
/// Codex rollout, in every payload), written into `env` as `name`. With `after_mf`, only the
/// lines after mf's last line get them (what mf covered keeps its bytes, so its summary stands).
fn with_probes(env: &TestEnv, fixture: &str, name: &str, after_mf: bool) -> std::path::PathBuf {
    let text = std::fs::read_to_string(crate::util::fixture(fixture)).unwrap();
    let from = match after_mf {
        true => {
            text.lines()
                .collect::<Vec<_>>()
                .iter()
                .rposition(|l| l.starts_with("{\"mf\""))
                .unwrap()
                + 1
        }
        false => 0,
    };
    let mut out = String::new();
    for (k, l) in text.lines().enumerate() {
        let f = FLOATS[k % FLOATS.len()];
        let probe = format!("\"create_time\":{f},{RAW},");
        if k < from || l.starts_with("{\"mf\"") {
            // mf's own line (it begins with its `mf` member).
            out.push_str(l);
            out.push('\n');
            continue;
        }
        let mut l = l.replacen('{', &format!("{{{probe}"), 1);
        if let Some(at) = l.find("\"payload\":{") {
            l.insert_str(at + "\"payload\":{".len(), &probe);
        }
        out.push_str(&l);
        out.push('\n');
    }
    let p = env.write(name, &out);
    age(&p);
    p
}

/// Every number in `text` (a JSON line), as written.
fn number_literals(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let (mut out, mut i, mut in_str) = (Vec::new(), 0, false);
    while i < b.len() {
        let c = b[i];
        if in_str {
            match c {
                b'\\' => i += 1,
                b'"' => in_str = false,
                _ => {}
            }
            i += 1;
        } else if c == b'"' {
            in_str = true;
            i += 1;
        } else if c == b'-' || c.is_ascii_digit() {
            let s = i;
            while i < b.len() && matches!(b[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                i += 1;
            }
            out.push(text[s..i].to_string());
        } else {
            i += 1;
        }
    }
    out
}

fn standing_ids(env: &TestEnv, name: &str) -> Vec<String> {
    let ex = env.mf_ok(&["explain", name, "--json"]);
    let ex: Value = serde_json::from_str(&ex.stdout).unwrap();
    ex["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["state"] == "standing")
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect()
}

/// Compact, then restore every summary; every line mf appended carries the probes' numbers only
/// as the original wrote them, and the agent's own items mf copies (Codex's history, pi's
/// entries written after mf's compaction) are their original bytes.
fn probes_survive(fixture: &str, format: &str, compact: bool) {
    let env = TestEnv::without_audit();
    let name = format!("s-{fixture}");
    let path = with_probes(&env, fixture, &name, !compact);
    let original = read(&path);
    let written: std::collections::HashSet<String> =
        number_literals(std::str::from_utf8(&original).unwrap())
            .into_iter()
            .collect();
    if compact {
        let out = env.mf(&[
            "compact",
            &name,
            "--from",
            format,
            "--model",
            "extractive",
            "--force",
            "--json",
            "--trigger",
            "0",
            "--recent",
            "2",
        ]);
        let rec = json_lines(&out.stdout).remove(0);
        assert_eq!(rec["action"], "folded", "{fixture}: {out:?}");
    }
    for id in standing_ids(&env, &name).iter().rev() {
        env.mf_ok(&["expand", &name, id, "--restore", "--force"]);
    }
    let now = read(&path);
    assert_eq!(
        &now[..original.len()],
        &original[..],
        "{fixture}: original bytes changed"
    );
    let appended = std::str::from_utf8(&now[original.len()..]).unwrap();
    assert!(!appended.is_empty());
    for n in number_literals(appended) {
        // mf's own numbers (ordinals, coverage, turns, an audit's ratios) are not the probes'.
        let v: f64 = n.parse().unwrap();
        let probe = FLOATS
            .iter()
            .any(|f| (f.parse::<f64>().unwrap() - v).abs() < 1.0);
        if probe || v > 1e20 || (v == 100.0 && n != "100") {
            assert!(
                written.contains(&n),
                "{fixture}: mf wrote the number {n}, which the original never held"
            );
        }
    }
    // What mf copied is the original's bytes: Codex's history items, pi's copied entries.
    let orig_text = std::str::from_utf8(&original).unwrap();
    for l in appended.lines() {
        let v: Value = serde_json::from_str(l).unwrap();
        if v["type"] == "compacted" {
            let items = v["payload"]["replacement_history"].as_array().unwrap();
            let copied = orig_text
                .lines()
                .filter(|o| o.contains("\"type\":\"response_item\""))
                .filter(|o| {
                    let m: HashMap<&str, &RawValue> = serde_json::from_str(o).unwrap();
                    l.contains(m["payload"].get())
                })
                .count();
            let originals = items
                .iter()
                .filter(|i| i["create_time"].is_number())
                .count();
            assert_eq!(
                copied, originals,
                "{fixture}: a history item is not its original's bytes"
            );
            assert!(originals > 0);
        }
        if v["mf"]["op"] == "copy" {
            let of = v["mf"]["of"].as_str().unwrap();
            let o = orig_text
                .lines()
                .find(|o| o.contains(&format!("\"id\":\"{of}\"")))
                .unwrap();
            let tail = |s: &str| s[s.find("\"timestamp\"").unwrap()..].to_string();
            assert_eq!(
                tail(l),
                tail(o),
                "{fixture}: pi's entry {of} copied with other bytes"
            );
        }
    }
    let verify = env.mf(&["verify", &name, "--from", format]);
    assert_eq!(verify.code, 0, "{fixture}: {verify:?}");
}

#[test]
fn codex_history_items_are_copied_as_their_bytes_through_compact_and_restore() {
    probes_survive("codex-0.171.0-multiturn.jsonl", "codex", true);
    probes_survive("codex-rollout.jsonl", "codex", true);
    probes_survive("codex-compacted.jsonl", "codex", true);
}

#[test]
fn pi_entries_copied_on_restore_keep_their_bytes() {
    // Its summary was written by mf before pi went on: the restore copies what pi wrote since.
    probes_survive("pi-1.6.0-mf-continued.jsonl", "pi", false);
}

#[test]
fn claude_and_chat_restores_write_no_number_they_did_not_read() {
    probes_survive("claude-2.1.332-multiturn.jsonl", "claude", true);
    probes_survive("pi-1.6.0-multiturn.jsonl", "pi", true);
    probes_survive("incident-northwind.jsonl", "chat", true);
}

/// What pi writes after `/tree` moves back past an entry without a branch summary
/// (`SessionManager.branch` in pi 1.6.0's `core/session-manager.js` only moves its leaf): the
/// next prompt and reply, parented at the target. `turns` prompts with replies, long enough to
/// fold.
fn pi_branch_from(path: &std::path::Path, target: &str, turns: usize) {
    let mut parent = target.to_string();
    let mut text = String::new();
    for k in 0..turns {
        let (u, a) = (format!("b0{k:02}0001"), format!("b0{k:02}0002"));
        let prompt = format!(
            "branch step {k}: after /tree, rework the parser in src/parse_{k}.rs so that error E{k}04 names the line; keep the old API. {}",
            "Context on what came before it and why it matters. ".repeat(6)
        );
        let reply = format!(
            "Done with step {k}: src/parse_{k}.rs now reports E{k}04 with the line number; 12 tests pass. {}",
            "Details of the change and what was checked. ".repeat(6)
        );
        let user = serde_json::json!({"type": "message", "id": u, "parentId": parent,
            "timestamp": "2026-12-02T10:00:00.000Z",
            "message": {"role": "user", "content": [{"type": "text", "text": prompt}], "timestamp": 1796200000000u64}});
        let asst = serde_json::json!({"type": "message", "id": a, "parentId": u,
            "timestamp": "2026-12-02T10:00:01.000Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": reply}],
                "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
                "stopReason": "stop", "timestamp": 1796200001000u64}});
        text.push_str(&format!("{user}\n{asst}\n"));
        parent = a;
    }
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
    drop(f);
    age(path);
}

/// The texts pi sends for the session (its path from the leaf), mf's summary entries as pi
/// shows them (a `compaction` stands for what it summarised).
fn recall_texts(env: &TestEnv, name: &str) -> Vec<String> {
    let out = env.mf_ok(&["recall", name, "--format", "chat"]);
    json_lines(&out.stdout)
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// pi: `/tree` back past mf's fold is a normal move. `verify` stays clean (the summary left on
/// the abandoned branch is a note, `off-branch`), recall shows the branch pi sends, and a new
/// compact folds that branch and is honoured.
#[test]
fn pi_tree_back_past_mfs_fold_is_a_note_and_the_new_branch_folds() {
    let env = TestEnv::without_audit();
    let name = "pi.jsonl";
    let path = env.copy_fixture("pi-1.6.0-multiturn.jsonl");
    std::fs::rename(&path, env.path(name)).unwrap();
    let path = env.path(name);
    age(&path);
    let out = env.mf(&[
        "compact",
        name,
        "--model",
        "extractive",
        "--force",
        "--json",
        "--trigger",
        "0",
        "--recent",
        "2",
    ]);
    assert_eq!(json_lines(&out.stdout)[0]["action"], "folded", "{out:?}");
    let folded = standing_ids(&env, name);
    assert_eq!(folded.len(), 1);
    // Back to pi's second assistant entry (inside what mf folded), then on from there.
    let lines = crate::util::numbered(&read(&path));
    let target = lines
        .iter()
        .filter(|(_, v)| v["type"] == "message" && v["message"]["role"] == "assistant")
        .nth(1)
        .map(|(_, v)| v["id"].as_str().unwrap().to_string())
        .unwrap();
    pi_branch_from(&path, &target, 8);

    let v = env.mf(&["verify", name, "--json"]);
    let rep = json_lines(&v.stdout).remove(0);
    assert_eq!(
        v.code, 0,
        "a summary on the branch pi left is not a problem: {v:?}"
    );
    assert_eq!(rep["clean"], true, "{rep}");
    let ex: Value = serde_json::from_str(&env.mf_ok(&["explain", name, "--json"]).stdout).unwrap();
    let flags = ex["flags"].as_array().unwrap();
    assert!(
        flags
            .iter()
            .any(|f| f["kind"] == "off-branch" && f["id"] == folded[0].as_str()),
        "{ex}"
    );
    assert!(flags.iter().all(|f| f["kind"] == "off-branch"), "{ex}");
    // Recall is pi's path: from the root to the new leaf, every text as pi wrote it.
    let path_texts: Vec<String> = crate::util::pi_path(&crate::util::numbered(&read(&path)))
        .iter()
        .filter(|(_, v)| v["type"] == "message")
        .map(|(_, v)| {
            v["message"]["content"]
                .as_array()
                .map(|c| {
                    c.iter()
                        .filter_map(|b| b["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .unwrap_or_default()
        })
        .collect();
    let recalled = recall_texts(&env, name);
    for t in path_texts.iter().filter(|t| !t.is_empty()) {
        assert!(
            recalled.iter().any(|r| r.contains(t.as_str())),
            "pi sends {t:?}, recall does not show it"
        );
    }
    assert!(
        !recalled.iter().any(|r| r.contains("mf summary")),
        "{recalled:?}"
    );

    // A new compact folds the branch pi follows, and what it writes stands.
    let out = env.mf(&[
        "compact",
        name,
        "--model",
        "extractive",
        "--force",
        "--json",
        "--trigger",
        "0",
        "--recent",
        "2",
    ]);
    assert_eq!(json_lines(&out.stdout)[0]["action"], "folded", "{out:?}");
    let v = env.mf(&["verify", name]);
    assert_eq!(v.code, 0, "{v:?}");
    let now = standing_ids(&env, name);
    assert_eq!(now.len(), 1, "{now:?}");
    assert_ne!(now, folded);
    assert!(recall_texts(&env, name)[0].contains(now[0].as_str()));
}

use crate::hook::run_hook;

fn hook_event(name: &str, path: &std::path::Path, extra: &str) -> String {
    format!(
        r#"{{"session_id":"2e9d4a70-51c3-4b8f-a6d2-8f1c0e3b9d47","transcript_path":{},"cwd":"/home/dev/src/billing-worker","hook_event_name":"{name}"{extra}}}"#,
        serde_json::to_string(path.to_str().unwrap()).unwrap()
    )
}

/// `claude-compacted.jsonl` with a second auto-compaction in the same turn: its rows up to
/// Claude's first summary (line 27), the turn going on without a prompt (three rows of the next
/// one), then Claude's second boundary and summary, as Claude Code 2.1 writes them. The two
/// summaries' texts as PostCompact hands them over.
fn twice_compacted(env: &TestEnv) -> (std::path::PathBuf, String, String) {
    let text = std::fs::read_to_string(crate::util::fixture("claude-compacted.jsonl")).unwrap();
    let rows: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut out: Vec<Value> = rows[..27].to_vec();
    let first = rows[26]["message"]["content"].as_str().unwrap();
    let first_summary = first[first.find("summarized below:\n").unwrap() + 18..].to_string();
    let mut parent = rows[26]["uuid"].clone();
    for r in &rows[29..32] {
        let mut r = r.clone();
        r["parentUuid"] = parent.clone();
        parent = r["uuid"].clone();
        out.push(r);
    }
    let second_summary = "Analysis:\nThe user is adding idempotency to the payment webhook handler.\n\nSummary:\n1. Primary Request and Intent:\n   - Keep webhook deliveries idempotent; a cleanup job for old keys was started.".to_string();
    let mut boundary = rows[25].clone();
    boundary["uuid"] = Value::from("7b0c2d4e-1111-4222-8333-944455566677");
    boundary["logicalParentUuid"] = parent;
    boundary["timestamp"] = Value::from("2026-03-05T14:30:00.000Z");
    let mut summary = rows[26].clone();
    summary["uuid"] = Value::from("7b0c2d4e-2222-4333-8444-955566677788");
    summary["parentUuid"] = boundary["uuid"].clone();
    summary["timestamp"] = Value::from("2026-03-05T14:30:00.100Z");
    summary["message"]["content"] = Value::from(format!(
        "This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\n{second_summary}"
    ));
    out.push(boundary);
    out.push(summary);
    let body: String = out.iter().map(|v| format!("{v}\n")).collect();
    (
        env.write("claude-twice.jsonl", &body),
        first_summary,
        second_summary,
    )
}

/// Claude auto-compacts twice in one turn: PostCompact keeps both summaries, and the report that
/// goes with the next prompt says what both lost (the first's losses too), once.
#[test]
fn claude_compacting_twice_in_one_turn_reports_what_both_compactions_lost() {
    let env = TestEnv::new();
    let (f, first, second) = twice_compacted(&env);
    for s in [&first, &second] {
        let extra = format!(
            r#","trigger":"auto","compact_summary":{}"#,
            serde_json::to_string(s).unwrap()
        );
        let (code, out, err) = run_hook(&env, &hook_event("PostCompact", &f, &extra));
        assert_eq!((code, out.as_str()), (0, ""), "{err}");
    }
    let (code, out, err) = run_hook(
        &env,
        &hook_event("UserPromptSubmit", &f, r#","prompt":"next""#),
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out:?} {err}"));
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    // Lost by the first compaction (the report on it alone says so; see tests/it/hook.rs).
    assert!(
        ctx.contains("migrations/0042_processed_webhooks.sql"),
        "{ctx}"
    );
    // Lost by the second: the rows between the two summaries.
    assert!(ctx.contains("internal/jobs/cleanup_webhooks.go"), "{ctx}");
    assert!(ctx.contains("Claude compacted 2 times"), "{ctx}");
    // Once only.
    let (_, out, _) = run_hook(
        &env,
        &hook_event("UserPromptSubmit", &f, r#","prompt":"again""#),
    );
    assert_eq!(out, "");
}

/// The rows Claude Code writes for a `/clear` typed as a session's first input (its caveat, the
/// command, its empty output), as in the corpus's cc-2.0.76-autocompact session.
const CLEAR_ROWS: [&str; 3] = [
    r#"{"parentUuid":null,"isSidechain":false,"userType":"external","type":"user","message":{"role":"user","content":"Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to."},"isMeta":true,"uuid":"c1ea0000-0000-4000-8000-000000000001","timestamp":"2026-11-30T10:00:00.000Z"}"#,
    r#"{"parentUuid":"c1ea0000-0000-4000-8000-000000000001","isSidechain":false,"userType":"external","type":"user","message":{"role":"user","content":"<command-name>/clear</command-name>\n            <command-message>clear</command-message>\n            <command-args></command-args>"},"uuid":"c1ea0000-0000-4000-8000-000000000002","timestamp":"2026-11-30T10:00:00.100Z"}"#,
    r#"{"parentUuid":"c1ea0000-0000-4000-8000-000000000002","isSidechain":false,"userType":"external","type":"user","message":{"role":"user","content":"<local-command-stdout></local-command-stdout>"},"uuid":"c1ea0000-0000-4000-8000-000000000003","timestamp":"2026-11-30T10:00:00.200Z"}"#,
];

/// A Claude Code session (the real 2.1.332 multi-turn fixture) that opens with `/clear`.
fn opens_with_clear(env: &TestEnv, name: &str) -> std::path::PathBuf {
    let text =
        std::fs::read_to_string(crate::util::fixture("claude-2.1.332-multiturn.jsonl")).unwrap();
    let mut lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let first = lines.iter().position(|v| v.get("uuid").is_some()).unwrap();
    let session = lines[first]["sessionId"].clone();
    lines[first]["parentUuid"] = Value::from("c1ea0000-0000-4000-8000-000000000003");
    let mut out = String::new();
    for (k, v) in lines.iter().enumerate() {
        if k == first {
            for row in CLEAR_ROWS {
                let mut r: Value = serde_json::from_str(row).unwrap();
                r["sessionId"] = session.clone();
                out.push_str(&serde_json::to_string(&r).unwrap());
                out.push('\n');
            }
        }
        out.push_str(&serde_json::to_string(v).unwrap());
        out.push('\n');
    }
    let path = env.write(name, &out);
    age(&path);
    path
}

/// Claude Code: a session that opens with `/clear` folds the command with its first turn. Kept
/// as preamble, Claude Code showed it after mf's summary: the model read the user clearing the
/// summary (checked with the real `claude -p --resume`, scripts/agents/run.sh).
#[test]
fn a_leading_clear_folds_with_the_first_turn_not_after_the_summary() {
    let env = TestEnv::without_audit();
    let name = "clear.jsonl";
    opens_with_clear(&env, name);
    let shown = recall_texts(&env, name);
    assert!(
        shown.iter().any(|t| t.contains("<command-name>/clear")),
        "{shown:?}"
    );
    let out = env.mf(&[
        "compact",
        name,
        "--model",
        "extractive",
        "--recent",
        "1",
        "--force",
        "--json",
    ]);
    assert_eq!(json_lines(&out.stdout)[0]["action"], "folded", "{out:?}");
    let shown = recall_texts(&env, name);
    assert!(
        shown[0].starts_with("[summary of earlier turns"),
        "the summary comes first: {shown:?}"
    );
    for t in &shown {
        assert!(
            !t.contains("<command-name>/clear") && !t.starts_with("Caveat:"),
            "the /clear rows stand after mf's summary: {shown:?}"
        );
    }
    let out = env.mf(&["verify", name]);
    assert_eq!(out.code, 0, "{out:?}");
}

/// A fold mf wrote before a leading `/clear` folded with its turn (it left the rows raw after
/// the summary, where the agent still shows them) is still honoured, and recall still shows them.
#[test]
fn a_fold_written_when_a_leading_clear_stayed_raw_is_still_honoured() {
    let env = TestEnv::without_audit();
    let name = "legacy.jsonl".to_string();
    std::fs::copy(
        crate::util::fixture("legacy/claude-clear-folded-before-leads.jsonl"),
        env.path(&name),
    )
    .unwrap();
    let out = env.mf(&["verify", &name]);
    assert_eq!(out.code, 0, "{out:?}");
    let shown = recall_texts(&env, &name);
    assert!(
        shown[0].starts_with("[summary of earlier turns"),
        "{shown:?}"
    );
    assert!(
        shown.iter().any(|t| t.contains("<command-name>/clear")),
        "{shown:?}"
    );
}

/// Claude Code 2.1.332 compacting twice in one turn, as the real agent did it (the fixture is
/// its session: a `claude -p` turn whose API calls twice answered "prompt is too long", so
/// Claude compacted reactively twice, and then the session resumed). The hooks ran in this
/// order, each on the file as it then was: SessionStart(compact) and PostCompact on 37 lines
/// (the first compaction's rows not written yet), then the turn went on, SessionStart(compact)
/// and PostCompact on 69 lines (the second's rows not written yet), and SessionStart(resume) on
/// 108. At the second SessionStart the newest summary in the file is the first one, which the
/// model has gone on from: mf says nothing then (it used to judge the first summary against
/// what the second replaced), and the next prompt's report covers both compactions — the user's
/// words the first summary dropped included.
#[test]
fn claude_compacting_twice_in_one_real_turn_is_reported_once_with_both_losses() {
    let env = TestEnv::new();
    let real = std::fs::read_to_string(crate::util::fixture(
        "claude-2.1.332-compacted-twice-in-one-turn.jsonl",
    ))
    .unwrap();
    let lines: Vec<&str> = real.split_inclusive('\n').collect();
    assert_eq!(lines.len(), 108);
    let f = env.path("session.jsonl");
    let at = |n: usize| std::fs::write(&f, lines[..n].concat()).unwrap();
    let sid = "008967b0-be59-4904-aa01-52afccffc154";
    let event = |name: &str, extra: &str| {
        format!(
            r#"{{"session_id":"{sid}","transcript_path":{},"cwd":"/tmp/cc2/cwd","hook_event_name":"{name}"{extra}}}"#,
            serde_json::to_string(f.to_str().unwrap()).unwrap()
        )
    };
    let summary = |first: &str| {
        format!(
            r#","trigger":"auto","compact_summary":{}"#,
            serde_json::to_string(&format!(
                "<summary>Fake summary of 1 earlier prompts ({first}); 1 tool results. Pending: PLAN[bash:echo one ;; bash:echo two ;; bash:echo three ;; bash:echo four]</summary>"
            ))
            .unwrap()
        )
    };
    let quiet = |input: String| {
        let (code, out, err) = run_hook(&env, &input);
        assert_eq!((code, out.as_str()), (0, ""), "{input}: {err}");
    };
    at(37);
    quiet(event("SessionStart", r#","source":"compact""#));
    quiet(event("PostCompact", &summary("TWICE")));
    at(69);
    quiet(event("SessionStart", r#","source":"compact""#));
    quiet(event("PostCompact", &summary("This")));
    at(108);
    let (code, out, err) = run_hook(&env, &event("SessionStart", r#","source":"resume""#));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out:?} {err}"));
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(ctx.contains("Claude compacted 2 times"), "{ctx}");
    assert!(ctx.contains("/srv/billing/releases/v2.14"), "{ctx}");
    assert!(ctx.contains("(@4)"), "{ctx}");
    // Once only.
    let (_, out, _) = run_hook(
        &env,
        &event("UserPromptSubmit", r#","prompt":"NEXT what now""#),
    );
    assert_eq!(out, "");
}
