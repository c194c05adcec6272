//! The agents' own session formats on the project's fixtures (no corpus needed): a Claude Code
//! session and one with Claude Code's own compaction, a Codex rollout and one with Codex's own
//! compaction, a pi v3 session with an abandoned branch and a pi v1 session with pi's own
//! compaction. Each fixture was checked with the real agent (`scripts/agents/run.sh`).
//!
//! What is checked here, per format: detection and turn counts; that `compact` appends only
//! mf's lines (the original bytes stay identical) and `verify` is clean; that recall shows the
//! summary first and then exactly the original's tail; that the lines mf writes for the agent
//! (its "view") have the shape the agents were verified to honour (see the module docs of
//! `src/transcript/format/{claude,codex,pi}.rs`); that `expand --restore` writes the undo and
//! recall equals the original recall again; the agents' own compactions as floors; `--format
//! native`; `explain`; and the live-session guard. Lines are read here independently of mf.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use serde_json::Value;

use crate::util::*;

const CC: &str = "claude-session.jsonl";
const CC_COMPACTED: &str = "claude-compacted.jsonl";
const CODEX: &str = "codex-rollout.jsonl";
const CODEX_COMPACTED: &str = "codex-compacted.jsonl";
const PI3: &str = "pi-session-v3.jsonl";
const PI1: &str = "pi-session-v1.jsonl";

/// Every agent fixture, its format, and its turns: Claude Code counts typed prompts plus slash
/// commands the assistant answers (a built-in one such as `/cost` joins the next turn); Codex
/// counts `event_msg/user_message`; pi counts `user` and `bashExecution` messages on the active
/// path. Turns before an agent's own compaction are counted (they are history, not gone).
const FIXTURES: &[(&str, &str, u64)] = &[
    (CC, "claude", 10), // 9 typed prompts + /changelog (answered); /cost joins turn 4
    (CC_COMPACTED, "claude", 10), // 5 before Claude Code's boundary, 5 after
    (CODEX, "codex", 9),
    (CODEX_COMPACTED, "codex", 9), // 5 before Codex's compacted line, 4 after
    (PI3, "pi", 9),                // 8 typed + 1 bashExecution; the abandoned prompt is not a turn
    (PI1, "pi", 10),               // 5 before pi's compaction (kept point), 5 after
];

/// A copy of a fixture in a temp dir, aged, with its original bytes.
struct Session {
    env: TestEnv,
    name: String,
    path: PathBuf,
    original: Vec<u8>,
}

fn session(fixture: &str) -> Session {
    let env = TestEnv::new();
    let path = env.copy_fixture(fixture);
    age(&path);
    let original = read(&path);
    Session {
        env,
        name: fixture.to_string(),
        path,
        original,
    }
}

impl Session {
    fn run(&self, args: &[&str]) -> Output {
        self.env.mf(args)
    }

    fn ok(&self, args: &[&str]) -> Output {
        let out = self.run(args);
        assert_eq!(out.code, 0, "{}: mf {args:?}: {out:?}", self.name);
        out
    }

    fn explain(&self) -> Value {
        json_lines(&self.ok(&["explain", &self.name, "--json"]).stdout).remove(0)
    }

    fn recall(&self, format: &str) -> String {
        self.ok(&["recall", &self.name, "--format", format]).stdout
    }

    fn recall_chat(&self) -> Vec<Value> {
        json_lines(&self.recall("chat"))
    }

    /// `compact --model extractive --force` with `extra`; the decision record.
    fn compact(&self, extra: &[&str]) -> Value {
        let mut args = vec![
            "compact",
            &self.name,
            "--model",
            "extractive",
            "--min-retention",
            "0",
            "--force",
            "--json",
        ];
        args.extend_from_slice(extra);
        let rec = json_lines(&self.ok(&args).stdout).remove(0);
        assert_eq!(rec["action"], "folded", "{}: {rec}", self.name);
        rec
    }

    fn bytes(&self) -> Vec<u8> {
        read(&self.path)
    }

    /// The file's lines from byte `from` on, parsed; the bytes before `from` must be the given
    /// prefix, byte for byte.
    fn appended_after(&self, prefix: &[u8]) -> Vec<Value> {
        let now = self.bytes();
        assert!(now.len() > prefix.len(), "{}: nothing appended", self.name);
        assert_eq!(
            sha(&now[..prefix.len()]),
            sha(prefix),
            "{}: the original bytes changed",
            self.name
        );
        assert_eq!(&now[..prefix.len()], prefix);
        let tail = std::str::from_utf8(&now[prefix.len()..]).unwrap();
        assert!(tail.ends_with('\n'));
        let lines = json_lines(tail);
        for l in &lines {
            assert!(
                l.get("mf").is_some_and(Value::is_object),
                "{}: appended a line that is not mf's: {l}",
                self.name
            );
        }
        lines
    }

    fn verify_clean(&self) {
        let out = self.run(&["verify", &self.name, "--json"]);
        let rep = json_lines(&out.stdout).remove(0);
        assert_eq!(out.code, 0, "{}: {rep}", self.name);
        assert_eq!(rep["clean"], true, "{}: {rep}", self.name);
    }

    /// The id of the one standing summary.
    fn summary_id(&self) -> String {
        let ex = self.explain();
        let s: Vec<&Value> = ex["summaries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["state"] == "standing")
            .collect();
        assert_eq!(s.len(), 1, "{}: {ex}", self.name);
        s[0]["id"].as_str().unwrap().to_string()
    }

    fn restore(&self, id: &str) -> Output {
        self.ok(&["expand", &self.name, id, "--restore", "--force"])
    }
}

/// Coverage line ranges of a summary line.
fn ranges(summary: &Value) -> Vec<(u32, u32)> {
    summary["mf"]["coverage"]["lines"]
        .as_array()
        .expect("coverage ranges")
        .iter()
        .map(|r| (r[0].as_u64().unwrap() as u32, r[1].as_u64().unwrap() as u32))
        .collect()
}

fn covered(ranges: &[(u32, u32)], line: u32) -> bool {
    ranges.iter().any(|&(a, b)| a <= line && line <= b)
}

fn is_iso_ms(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 24
        && b.iter().enumerate().all(|(k, c)| match k {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            19 => *c == b'.',
            23 => *c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

/// The first message of a recall after a fold: mf's summary.
fn assert_mf_summary(m: &Value, what: &str) {
    assert_eq!(m["role"], "system", "{what}: {m}");
    assert!(
        m["content"]
            .as_str()
            .unwrap()
            .starts_with("[summary of earlier turns"),
        "{what}: {m}"
    );
}

/// After a fold: `after` is `lead` messages (summaries), then exactly the tail of `before`,
/// which starts with a user message (a whole turn).
fn assert_summary_then_tail(before: &[Value], after: &[Value], lead: usize, what: &str) {
    assert!(
        after.len() > lead && after.len() - lead < before.len(),
        "{what}"
    );
    let kept = &after[lead..];
    assert_eq!(
        kept,
        &before[before.len() - kept.len()..],
        "{what}: the kept turns differ from the original's tail"
    );
    assert_eq!(
        kept[0]["role"], "user",
        "{what}: the kept part starts mid-turn"
    );
}

// ---------------------------------------------------------------------------------------------
// Detection, turns, and compact + verify + recall + restore on every fixture.

#[test]
fn every_fixture_is_detected_with_its_turns() {
    let env = TestEnv::new();
    for &(name, format, turns) in FIXTURES {
        env.copy_fixture(name);
        let ex = json_lines(&env.mf_ok(&["explain", name, "--json"]).stdout).remove(0);
        assert_eq!(ex["format"], format, "{name}");
        assert_eq!(ex["turns"], turns, "{name}");
        let v = json_lines(&env.mf_ok(&["verify", name, "--json"]).stdout).remove(0);
        assert_eq!(v["format"], format, "{name}");
        assert_eq!(v["clean"], true, "{name}: {v}");
    }
}

#[test]
fn compact_appends_only_mf_lines_and_restore_gives_back_the_original_recall() {
    for &(name, _, _) in FIXTURES {
        let s = session(name);
        let chat = s.recall("chat");
        let native = s.recall("native");
        let rec = s.compact(&["--trigger", "0"]);
        let appended = s.appended_after(&s.original);
        assert_eq!(rec["linesAppended"], appended.len(), "{name}");
        s.verify_clean();
        let after = json_lines(&s.recall("chat"));
        assert!(
            after.len() < json_lines(&chat).len(),
            "{name}: recall did not shrink"
        );

        let compacted = s.bytes();
        let id = s.summary_id();
        s.restore(&id);
        let undo = s.appended_after(&compacted);
        assert!(
            undo.iter().any(|l| l["mf"]["kind"] == "retract"),
            "{name}: no retraction record"
        );
        s.verify_clean();
        assert_eq!(s.recall("chat"), chat, "{name}: recall after restore");
        assert_eq!(
            s.recall("native"),
            native,
            "{name}: native recall after restore"
        );
    }
}

#[test]
fn native_recall_prints_the_sources_own_lines() {
    for &(name, _, _) in FIXTURES {
        let s = session(name);
        let originals: Vec<&[u8]> = s.original.split(|&b| b == b'\n').collect();
        // Every line printed is one of the file's lines, in file order (an agent's own
        // compaction summary, which stands before the entries it kept, apart).
        let in_order = |printed: &[&[u8]], what: &str| {
            let mut at = 0usize;
            for p in printed {
                let v: Value = serde_json::from_slice(p).unwrap();
                if v["type"] == "compaction" || v["isCompactSummary"] == true {
                    assert!(originals.contains(p), "{name}: {v}");
                    continue;
                }
                let k = originals[at..]
                    .iter()
                    .position(|o| o == p)
                    .unwrap_or_else(|| {
                        panic!(
                            "{name} ({what}): printed a line not in the file (or out of order): {}",
                            String::from_utf8_lossy(p)
                        )
                    });
                at += k + 1;
            }
        };
        let before = s.recall("native");
        let before: Vec<&[u8]> = before.lines().map(str::as_bytes).collect();
        in_order(&before, "before");
        s.compact(&["--trigger", "0"]);
        let summary = s
            .appended_after(&s.original)
            .into_iter()
            .find(|l| l["mf"]["kind"] == "summary")
            .unwrap();
        let after = s.recall("native");
        let after: Vec<&[u8]> = after.lines().map(str::as_bytes).collect();
        // The summary is printed as the line mf appended; everything else as the source's lines.
        let k = after
            .iter()
            .position(|l| serde_json::from_slice::<Value>(l).unwrap() == summary)
            .expect("the summary's own line");
        assert!(k <= 1, "{name}: the summary is not first");
        let rest: Vec<&[u8]> = after
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != k)
            .map(|(_, l)| *l)
            .collect();
        in_order(&rest, "after");
        assert_eq!(rest.last(), before.last(), "{name}");
    }
}

// ---------------------------------------------------------------------------------------------
// Claude Code.

/// Rows with a uuid: uuid → (line, row).
fn cc_rows(lines: &[(u32, Value)]) -> HashMap<String, (u32, Value)> {
    lines
        .iter()
        .filter_map(|(n, v)| Some((v["uuid"].as_str()?.to_string(), (*n, v.clone()))))
        .collect()
}

fn is_message_row(v: &Value) -> bool {
    matches!(v["type"].as_str(), Some("user" | "assistant")) && v["message"].is_object()
}

/// The tail Claude Code resumes from: the last user or assistant row.
fn cc_tail(lines: &[(u32, Value)]) -> String {
    lines
        .iter()
        .rev()
        .find(|(_, v)| is_message_row(v) && v["isSidechain"] != true)
        .map(|(_, v)| v["uuid"].as_str().unwrap().to_string())
        .unwrap()
}

/// The message rows Claude Code shows from `tail`: the `parentUuid` chain back to a root (or to
/// a boundary), plus the other streamed pieces of each response on it (same `message.id`) and
/// the rows answering their tool calls — the side pieces a parallel call leaves off the chain.
fn cc_visible(lines: &[(u32, Value)], tail: &str) -> (HashSet<String>, HashSet<String>) {
    let rows = cc_rows(lines);
    let mut chain = HashSet::new();
    let mut cur = Some(tail.to_string());
    while let Some(u) = cur {
        let Some((_, v)) = rows.get(&u) else { break };
        if v["subtype"] == "compact_boundary" {
            break;
        }
        chain.insert(u.clone());
        cur = v["parentUuid"].as_str().map(str::to_string);
    }
    let chain: HashSet<String> = chain
        .into_iter()
        .filter(|u| is_message_row(&rows[u].1))
        .collect();
    let ids: HashSet<&str> = chain
        .iter()
        .filter_map(|u| rows[u].1["message"]["id"].as_str())
        .collect();
    let mut all: HashSet<String> = chain.clone();
    for (u, (_, v)) in &rows {
        if is_message_row(v) && v["message"]["id"].as_str().is_some_and(|i| ids.contains(i)) {
            all.insert(u.clone());
        }
    }
    let calls: HashSet<String> = all
        .iter()
        .flat_map(|u| blocks(&rows[u].1, "tool_use", "id"))
        .collect();
    for (u, (_, v)) in &rows {
        if blocks(v, "tool_result", "tool_use_id")
            .iter()
            .any(|c| calls.contains(c))
        {
            all.insert(u.clone());
        }
    }
    (chain, all)
}

fn blocks(v: &Value, ty: &str, key: &str) -> Vec<String> {
    v["message"]["content"]
        .as_array()
        .map(|bs| {
            bs.iter()
                .filter(|b| b["type"] == ty)
                .filter_map(|b| b[key].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn preserved(boundary: &Value) -> Vec<String> {
    boundary["compactMetadata"]["preservedMessages"]["uuids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap().to_string())
        .collect()
}

/// The envelope rows carry: copied from the session's rows.
fn assert_cc_envelope(row: &Value, original: &[(u32, Value)]) {
    let sid = original
        .iter()
        .find_map(|(_, v)| v["sessionId"].as_str())
        .unwrap();
    assert_eq!(row["sessionId"], sid, "{row}");
    assert_eq!(row["isSidechain"], false, "{row}");
    for k in ["cwd", "version", "gitBranch", "userType"] {
        assert!(row[k].is_string(), "{k}: {row}");
    }
}

#[test]
fn claude_code_compact_writes_a_boundary_that_preserves_exactly_the_kept_rows() {
    let s = session(CC);
    let lines = numbered(&s.original);
    let rows = cc_rows(&lines);
    let before = s.recall_chat();
    // Keep the last two turns: the ninth has two parallel calls answered out of order.
    s.compact(&["--recent", "9"]);
    let out = s.appended_after(&s.original);
    let kinds: Vec<&str> = out.iter().map(|l| l["type"].as_str().unwrap()).collect();
    // The summary row last: Claude Code honours the write only once it is whole.
    assert_eq!(kinds, ["mf-summary", "system", "system", "user"], "{out:?}");
    let (summary, trailer, boundary, shown) = (&out[0], &out[1], &out[2], &out[3]);
    let cov = ranges(summary);

    // The boundary: a root, logically after the last folded row, preserving the kept rows.
    assert_eq!(boundary["subtype"], "compact_boundary");
    assert!(boundary["parentUuid"].is_null());
    let logical = boundary["logicalParentUuid"].as_str().unwrap();
    assert!(
        covered(&cov, rows[logical].0),
        "the logical parent is not a folded row"
    );
    assert_cc_envelope(boundary, &lines);
    let tail = cc_tail(&lines);
    let mut uuids = preserved(boundary);
    assert_eq!(
        uuids.last(),
        Some(&tail),
        "the last preserved uuid is not the tail"
    );
    let meta = &boundary["compactMetadata"];
    assert_eq!(meta["preservedSegment"]["headUuid"], uuids[0].as_str());
    assert_eq!(meta["preservedSegment"]["tailUuid"], tail.as_str());
    // The summary row is preserved first, hung on the boundary (Claude Code relinks nothing
    // while a preserved row is missing: until the summary row is whole it shows the originals).
    assert_eq!(uuids[0], shown["uuid"].as_str().unwrap());
    assert_eq!(meta["preservedMessages"]["anchorUuid"], boundary["uuid"]);
    assert_eq!(meta["preservedSegment"]["anchorUuid"], boundary["uuid"]);
    uuids.remove(0);
    // Exactly the kept message rows: the chain after the fold and the side pieces of its
    // streamed responses (a parallel call's second piece and its result are off the chain).
    let last_folded = cov.iter().map(|r| r.1).max().unwrap();
    let (chain, visible) = cc_visible(&lines, &tail);
    let want: HashSet<String> = visible
        .into_iter()
        .filter(|u| rows[u].0 > last_folded)
        .collect();
    let got: HashSet<String> = uuids
        .iter()
        .filter(|u| is_message_row(&rows[*u].1))
        .cloned()
        .collect();
    assert_eq!(got, want);
    assert!(
        want.iter().any(|u| !chain.contains(u)),
        "the fixture keeps a side piece"
    );
    for u in &uuids {
        let (n, v) = &rows[u];
        assert!(!covered(&cov, *n), "a folded row is preserved: line {n}");
        assert_ne!(v["type"], "progress", "a progress row is preserved");
    }

    // The summary row Claude Code shows first, and the trailer on the tail.
    assert_eq!(shown["isCompactSummary"], true);
    assert_eq!(shown["isVisibleInTranscriptOnly"], true);
    assert_eq!(shown["parentUuid"], boundary["uuid"]);
    assert_eq!(shown["message"]["role"], "user");
    let text = shown["message"]["content"].as_str().unwrap();
    assert!(
        text.starts_with(summary["content"].as_str().unwrap()),
        "{text}"
    );
    assert_cc_envelope(shown, &lines);
    assert_eq!(trailer["parentUuid"], tail.as_str());
    assert_eq!(trailer["subtype"], "informational");
    assert_cc_envelope(trailer, &lines);

    // Timestamps: strictly increasing, newer than every row of the session.
    let newest = lines
        .iter()
        .filter_map(|(_, v)| v["timestamp"].as_str())
        .max()
        .unwrap()
        .to_string();
    let mut prev = newest;
    for l in &out {
        let t = l["timestamp"].as_str().unwrap();
        assert!(is_iso_ms(t), "{t}");
        assert!(t > prev.as_str(), "timestamp {t} is not after {prev}");
        prev = t.to_string();
    }

    // Recall: the summary, then the original's last two turns.
    let after = s.recall_chat();
    assert_mf_summary(&after[0], CC);
    assert_summary_then_tail(&before, &after, 1, CC);
    assert_eq!(
        after[1]["content"],
        "commit everything with a sensible message"
    );
}

#[test]
fn claude_code_restore_re_preserves_the_whole_chain() {
    let s = session(CC);
    let lines = numbered(&s.original);
    let rows = cc_rows(&lines);
    let before = s.recall_chat();
    s.compact(&[]);
    let compacted = s.bytes();
    let id = s.summary_id();
    s.restore(&id);
    let out = s.appended_after(&compacted);
    let kinds: Vec<&str> = out.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["mf-record", "system", "system"], "{out:?}");
    let (trailer, boundary) = (&out[1], &out[2]);
    assert_eq!(boundary["subtype"], "compact_boundary");
    assert!(boundary["parentUuid"].is_null());
    // Anchored on itself: nothing extra reaches the model.
    let meta = &boundary["compactMetadata"];
    assert_eq!(meta["preservedMessages"]["anchorUuid"], boundary["uuid"]);
    let tail = cc_tail(&lines);
    let uuids = preserved(boundary);
    assert_eq!(uuids.last(), Some(&tail));
    let (_, visible) = cc_visible(&lines, &tail);
    let got: HashSet<String> = uuids
        .iter()
        .filter(|u| is_message_row(&rows[*u].1))
        .cloned()
        .collect();
    assert_eq!(
        got, visible,
        "the whole original chain with its side pieces"
    );
    assert_eq!(trailer["parentUuid"], tail.as_str());
    assert!(out.iter().all(|l| l["isCompactSummary"].is_null()));
    assert!(compacted.len() > s.original.len());
    assert_eq!(s.recall_chat(), before);
}

#[test]
fn claude_codes_own_compaction_is_a_floor_and_mfs_fold_takes_its_summary_in() {
    let s = session(CC_COMPACTED);
    let lines = numbered(&s.original);
    let rows = cc_rows(&lines);
    let floor = lines
        .iter()
        .find(|(_, v)| v["subtype"] == "compact_boundary")
        .unwrap()
        .0;
    let (agent_line, agent_summary) = lines
        .iter()
        .find(|(_, v)| v["isCompactSummary"] == true)
        .map(|(n, v)| (*n, v["message"]["content"].as_str().unwrap().to_string()))
        .unwrap();
    // Before mf: the agent's summary first, nothing from before the boundary.
    let before = s.recall_chat();
    assert_eq!(before[0]["content"], agent_summary.as_str());
    let early: Vec<&str> = lines
        .iter()
        .filter(|(n, v)| *n < floor && v["type"] == "user" && v["message"]["content"].is_string())
        .map(|(_, v)| v["message"]["content"].as_str().unwrap())
        .collect();
    assert_eq!(early.len(), 5);
    let recall_text = s.recall("chat");
    for p in &early {
        assert!(!recall_text.contains(*p), "history in recall: {p}");
    }
    let ex = s.explain();
    assert_eq!(ex["turns"], 10, "history turns are counted");
    assert_eq!(ex["native"][0]["line"], agent_line);
    assert!(
        s.ok(&["explain", CC_COMPACTED])
            .stdout
            .contains("the agent's own compactions")
    );

    // mf's fold takes the agent's summary in, and nothing before the boundary.
    s.compact(&["--trigger", "0", "--recent", "1"]);
    let out = s.appended_after(&s.original);
    let cov = ranges(&out[0]);
    assert!(
        covered(&cov, agent_line),
        "the fold leaves the agent's summary out: {cov:?}"
    );
    assert!(
        cov.iter().all(|r| r.0 > floor),
        "the fold crosses the boundary: {cov:?}"
    );
    let boundary = &out[2];
    for u in preserved(boundary).iter().skip(1) {
        assert!(rows[u].0 > floor, "a row before the boundary is preserved");
    }
    let after = s.recall_chat();
    assert_mf_summary(&after[0], CC_COMPACTED);
    assert_summary_then_tail(&before, &after, 1, CC_COMPACTED);

    // Undo: the chain from the agent's summary on, preserved again; the same recall.
    let compacted = s.bytes();
    s.restore(&s.summary_id());
    let undo = s.appended_after(&compacted);
    let uuids = preserved(&undo[2]);
    assert_eq!(
        rows[&uuids[0]].0, agent_line,
        "the chain starts at the agent's summary"
    );
    assert!(uuids.iter().all(|u| rows[u].0 > floor));
    assert_eq!(s.recall_chat(), before);
}

// ---------------------------------------------------------------------------------------------
// Codex.

/// `response_item` payloads with their line numbers.
fn response_items(lines: &[(u32, Value)]) -> Vec<(u32, Value)> {
    lines
        .iter()
        .filter(|(_, v)| v["type"] == "response_item")
        .map(|(n, v)| (*n, v["payload"].clone()))
        .collect()
}

fn assert_calls_paired(items: &[Value]) {
    let id = |it: &Value| it["call_id"].as_str().unwrap().to_string();
    let calls: HashSet<String> = items
        .iter()
        .filter(|it| {
            matches!(
                it["type"].as_str(),
                Some("function_call" | "custom_tool_call")
            )
        })
        .map(id)
        .collect();
    let outputs: HashSet<String> = items
        .iter()
        .filter(|it| it["type"].as_str().is_some_and(|t| t.ends_with("_output")))
        .map(id)
        .collect();
    assert!(!calls.is_empty());
    assert_eq!(calls, outputs, "calls and outputs are not paired");
}

/// Checks the two view lines: `compacted` whose history is `lead`, the summary as a user
/// message (when there is one), then `kept`; and `event_msg/context_compacted`.
fn assert_codex_view(view: &[Value], lead: &[Value], summary: Option<&str>, kept: &[Value]) {
    assert_eq!(view.len(), 2, "{view:?}");
    // The `compacted` line last: Codex honours the write only once it is whole.
    let (e, c) = (&view[0], &view[1]);
    assert_eq!(c["type"], "compacted");
    assert_eq!(e["type"], "event_msg");
    assert_eq!(
        e["payload"],
        serde_json::json!({"type": "context_compacted"})
    );
    for l in view {
        assert!(is_iso_ms(l["timestamp"].as_str().unwrap()), "{l}");
    }
    let h = c["payload"]["replacement_history"].as_array().unwrap();
    assert_eq!(
        &h[..lead.len()],
        lead,
        "the history does not start with what must stay first"
    );
    let mut rest = &h[lead.len()..];
    match summary {
        Some(text) => {
            assert_eq!(c["payload"]["message"], text);
            assert_eq!(
                rest[0],
                serde_json::json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
            );
            rest = &rest[1..];
        }
        None => assert_eq!(c["payload"]["message"], ""),
    }
    assert_eq!(
        rest, kept,
        "the kept items are not the original's, verbatim and in order"
    );
    assert_calls_paired(h);
}

#[test]
fn codex_compact_writes_a_history_of_preamble_summary_and_kept_items() {
    let s = session(CODEX);
    let lines = numbered(&s.original);
    let items = response_items(&lines);
    let first_prompt = lines
        .iter()
        .find(|(_, v)| v["payload"]["type"] == "user_message")
        .unwrap()
        .0;
    let preamble: Vec<Value> = items
        .iter()
        .filter(|(n, _)| *n < first_prompt - 1)
        .map(|(_, p)| p.clone())
        .collect();
    assert_eq!(
        preamble.len(),
        3,
        "developer, AGENTS.md and environment_context"
    );
    let before = s.recall_chat();
    s.compact(&["--recent", "10"]);
    let out = s.appended_after(&s.original);
    assert_eq!(out[0]["type"], "mf_summary");
    let cov = ranges(&out[0]);
    assert!(
        cov.iter().all(|r| r.0 >= first_prompt - 1),
        "the preamble is folded"
    );
    let last_folded = cov.iter().map(|r| r.1).max().unwrap();
    let kept: Vec<Value> = items
        .iter()
        .filter(|(n, _)| *n > last_folded)
        .map(|(_, p)| p.clone())
        .collect();
    assert_eq!(kept[0]["role"], "user");
    let text = out[0]["payload"]["content"].as_str().unwrap();
    assert_codex_view(&out[1..], &preamble, Some(text), &kept);

    let after = s.recall_chat();
    assert_mf_summary(&after[0], CODEX);
    // Recall: the summary, then the preamble (never folded), then the original's tail.
    let tail_len = after.len() - 1 - preamble.len();
    assert_eq!(&after[1..1 + preamble.len()], &before[..preamble.len()]);
    assert_eq!(
        &after[1 + preamble.len()..],
        &before[before.len() - tail_len..]
    );

    // Undo: the whole original history back in one compacted line.
    let compacted = s.bytes();
    s.restore(&s.summary_id());
    let undo = s.appended_after(&compacted);
    assert_eq!(undo[0]["type"], "mf_record");
    let all: Vec<Value> = items.into_iter().map(|(_, p)| p).collect();
    assert_codex_view(&undo[1..], &[], None, &all);
    assert_eq!(s.recall_chat(), before);
}

#[test]
fn codexs_own_compaction_is_a_floor_and_mf_carries_it_pinned() {
    let s = session(CODEX_COMPACTED);
    let lines = numbered(&s.original);
    let (floor, native) = lines
        .iter()
        .find(|(_, v)| v["type"] == "compacted")
        .map(|(n, v)| (*n, v["payload"].clone()))
        .unwrap();
    let native_history = native["replacement_history"].as_array().unwrap().clone();
    let native_summary = native["message"].as_str().unwrap();
    // Before mf: the agent's compaction first; nothing before it except through its history.
    let before = s.recall_chat();
    assert!(
        before[0]["content"]
            .as_str()
            .unwrap()
            .contains(native_summary)
    );
    let recall_text = s.recall("chat");
    let early_answers: Vec<&str> = lines
        .iter()
        .filter(|(n, v)| *n < floor && v["payload"]["role"] == "assistant")
        .map(|(_, v)| v["payload"]["content"][0]["text"].as_str().unwrap())
        .collect();
    assert_eq!(early_answers.len(), 5);
    for a in &early_answers {
        assert!(!recall_text.contains(*a), "history in recall: {a}");
    }
    let ex = s.explain();
    assert_eq!(ex["turns"], 9, "history turns are counted");
    assert_eq!(ex["native"][0]["line"], floor);

    // mf folds after it and carries it, pinned, first in the new history.
    s.compact(&["--trigger", "0", "--recent", "1"]);
    let out = s.appended_after(&s.original);
    let cov = ranges(&out[0]);
    assert!(
        cov.iter().all(|r| r.0 > floor),
        "the fold takes in or crosses the agent's compaction: {cov:?}"
    );
    let last_folded = cov.iter().map(|r| r.1).max().unwrap();
    let items = response_items(&lines);
    let kept: Vec<Value> = items
        .iter()
        .filter(|(n, _)| *n > last_folded)
        .map(|(_, p)| p.clone())
        .collect();
    let text = out[0]["payload"]["content"].as_str().unwrap();
    assert_codex_view(&out[1..], &native_history, Some(text), &kept);
    let after = s.recall_chat();
    assert_eq!(after[0], before[0], "the agent's compaction stays first");
    assert_mf_summary(&after[1], CODEX_COMPACTED);
    assert_summary_then_tail(&before, &after, 2, CODEX_COMPACTED);

    // Undo: the agent's history and everything after it.
    let compacted = s.bytes();
    s.restore(&s.summary_id());
    let undo = s.appended_after(&compacted);
    let after_floor: Vec<Value> = items
        .into_iter()
        .filter(|(n, _)| *n > floor)
        .map(|(_, p)| p)
        .collect();
    let mut want = native_history.clone();
    want.extend(after_floor);
    assert_codex_view(&undo[1..], &[], None, &want);
    assert_eq!(s.recall_chat(), before);
}

// ---------------------------------------------------------------------------------------------
// pi.

fn is_hex8(s: &str) -> bool {
    s.len() == 8 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

#[test]
fn pi_v3_compact_chains_on_the_leaf_and_keeps_from_the_first_kept_entry() {
    let s = session(PI3);
    let lines = numbered(&s.original);
    let path = pi_path(&lines);
    let leaf = lines.last().unwrap().1["id"].as_str().unwrap().to_string();
    let ids: HashSet<&str> = lines.iter().filter_map(|(_, v)| v["id"].as_str()).collect();
    // The abandoned branch is in the file but not on the path, and not in recall.
    let abandoned = "also parallelize rendering with worker threads";
    assert!(String::from_utf8_lossy(&s.original).contains(abandoned));
    assert!(!path.iter().any(|(_, v)| v.to_string().contains(abandoned)));
    let before = s.recall_chat();
    assert!(!s.recall("chat").contains(abandoned));

    s.compact(&["--recent", "6"]);
    let out = s.appended_after(&s.original);
    assert_eq!(out.len(), 2, "{out:?}");
    let (claim, view) = (&out[0], &out[1]);
    assert_eq!(claim["type"], "custom");
    assert_eq!(claim["customType"], "mf");
    assert_eq!(claim["parentId"], leaf.as_str(), "not chained on pi's leaf");
    assert_eq!(view["type"], "compaction");
    assert_eq!(view["parentId"], claim["id"]);
    for l in &out {
        let id = l["id"].as_str().unwrap();
        assert!(is_hex8(id) && !ids.contains(id), "{id}");
        assert!(is_iso_ms(l["timestamp"].as_str().unwrap()));
    }
    let cov = ranges(claim);
    let last_folded = cov.iter().map(|r| r.1).max().unwrap();
    let first_kept = path
        .iter()
        .find(|(n, v)| *n > last_folded && v["type"] == "message")
        .unwrap();
    assert_eq!(first_kept.1["message"]["role"], "user");
    assert_eq!(view["firstKeptEntryId"], first_kept.1["id"]);
    assert!(
        view["summary"]
            .as_str()
            .unwrap()
            .contains(claim["data"]["content"].as_str().unwrap())
    );
    assert!(view["tokensBefore"].is_u64());
    assert_eq!(view["fromHook"], true);
    // Nothing on the abandoned branch is covered.
    for (n, v) in &lines {
        if covered(&cov, *n) {
            assert!(
                path.iter().any(|(m, _)| m == n),
                "covers line {n} off the path: {v}"
            );
        }
    }
    let after = s.recall_chat();
    assert_mf_summary(&after[0], PI3);
    assert_summary_then_tail(&before, &after, 1, PI3);

    // Undo: one entry that is not sent to the model, parented where the compaction was, so
    // the compaction is left on a branch pi no longer follows.
    let compacted = s.bytes();
    s.restore(&s.summary_id());
    let undo = s.appended_after(&compacted);
    let last = undo.last().unwrap();
    assert_eq!(last["type"], "custom");
    assert_eq!(last["parentId"], view["parentId"]);
    assert!(undo.iter().all(|l| l["type"] == "custom"));
    assert_eq!(s.recall_chat(), before);
}

#[test]
fn pi_v1_compact_names_the_first_kept_entry_by_index() {
    let s = session(PI1);
    let lines = numbered(&s.original);
    assert!(
        lines[0].1["version"].is_null()
            && lines
                .iter()
                .all(|(_, v)| v["id"].is_null() || v["type"] == "session")
    );
    let (floor, native) = lines
        .iter()
        .find(|(_, v)| v["type"] == "compaction")
        .map(|(n, v)| (*n, v.clone()))
        .unwrap();
    let kept_index = native["firstKeptEntryIndex"].as_u64().unwrap() as usize;
    // v1: the index counts parsed entries, the header being 0 (no blank lines here).
    let native_kept_line = lines[kept_index].0;
    assert_eq!(lines[kept_index].1["message"]["role"], "user");
    let before = s.recall_chat();
    assert_eq!(before[0]["content"], native["summary"]);
    assert_eq!(
        before[1]["content"],
        lines[kept_index].1["message"]["content"][0]["text"]
    );
    let recall_text = s.recall("chat");
    let early: Vec<String> = lines[..kept_index]
        .iter()
        .filter(|(_, v)| v["message"]["role"] == "user")
        .map(|(_, v)| {
            v["message"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(early.len(), 4);
    for p in &early {
        assert!(!recall_text.contains(p.as_str()), "history in recall: {p}");
    }
    let ex = s.explain();
    assert_eq!(ex["turns"], 10, "history turns are counted");
    assert_eq!(ex["native"][0]["line"], floor);

    s.compact(&["--trigger", "0", "--recent", "2"]);
    let out = s.appended_after(&s.original);
    assert_eq!(out.len(), 2, "{out:?}");
    let (claim, view) = (&out[0], &out[1]);
    assert_eq!(claim["type"], "custom");
    assert!(
        claim["id"].is_null() && claim["parentId"].is_null(),
        "v1 entries have no ids"
    );
    assert_eq!(view["type"], "compaction");
    assert!(view["id"].is_null() && view["firstKeptEntryId"].is_null());
    let cov = ranges(claim);
    assert!(
        covered(&cov, floor),
        "the fold leaves pi's summary out: {cov:?}"
    );
    assert!(
        cov.iter().all(|r| r.0 >= native_kept_line),
        "the fold reaches before pi's kept point: {cov:?}"
    );
    let last_folded = cov.iter().map(|r| r.1).max().unwrap();
    let first_kept = lines
        .iter()
        .position(|(n, v)| *n > last_folded && v["type"] == "message")
        .unwrap();
    assert_eq!(view["firstKeptEntryIndex"], first_kept);
    let after = s.recall_chat();
    assert_mf_summary(&after[0], PI1);
    assert_summary_then_tail(&before, &after, 1, PI1);

    // Undo in v1: pi's own compaction again, verbatim (summary and kept index).
    let compacted = s.bytes();
    s.restore(&s.summary_id());
    let undo = s.appended_after(&compacted);
    let again = undo.last().unwrap();
    assert_eq!(again["type"], "compaction");
    assert_eq!(again["summary"], native["summary"]);
    assert_eq!(again["firstKeptEntryIndex"], native["firstKeptEntryIndex"]);
    assert_eq!(s.recall_chat(), before);
}

#[test]
fn explain_shows_the_active_branch_and_what_lies_off_it() {
    let env = TestEnv::new();
    env.copy_fixture("pi-session-v3.jsonl");
    env.copy_fixture("claude-compacted.jsonl");
    let out = env.mf(&["explain", "pi-session-v3.jsonl"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stdout
            .contains("active branch: 31 entries, its leaf on line 37; 2 off it"),
        "{out:?}"
    );
    let json = env.mf_ok(&["explain", "pi-session-v3.jsonl", "--json"]);
    let ex = json_lines(&json.stdout).remove(0);
    assert_eq!(ex["branch"]["entries"], 31);
    assert_eq!(ex["branch"]["offBranch"], 2);
    assert_eq!(ex["branch"]["leafLine"], 37);
    // Before the agent's own compaction: history it no longer sends, counted apart.
    let json = env.mf_ok(&["explain", "claude-compacted.jsonl", "--json"]);
    let ex = json_lines(&json.stdout).remove(0);
    assert_eq!(ex["branch"]["beforeNative"], 20);
    assert_eq!(ex["branch"]["offBranch"], 0);
    let out = env.mf(&["explain", "claude-compacted.jsonl"]);
    assert!(
        out.stdout
            .contains("a fold takes it in with the turns after it"),
        "{out:?}"
    );
}

/// A pi 1.6 session that mf folded and pi then continued for three turns (written by the real
/// pi 1.6.0 in scripts/agents/e2e.sh), folded again, then every summary restored newest first:
/// `verify` stays clean. Restoring the older summary leaves pi's branch that holds the newer
/// summary and its retraction; that withdrawn summary is history, not a problem (e2e found
/// "not-honoured: it is on a branch the agent no longer follows" and a "bad-retraction" there,
/// on pi 1.6.0 and 0.73.1).
#[test]
fn pi_restoring_every_summary_newest_first_leaves_verify_clean() {
    let env = TestEnv::new();
    let f = env.copy_fixture("pi-1.6.0-mf-continued.jsonl");
    let name = f.to_str().unwrap();
    let out = env.mf(&[
        "compact",
        name,
        "--model",
        "extractive",
        "--json",
        "--force",
    ]);
    let rec: Value = serde_json::from_str(out.stdout.lines().next().unwrap_or("{}")).unwrap();
    assert_eq!(rec["action"], "folded", "{out:?}");
    let ex = env.mf(&["explain", name, "--json"]);
    let ex: Value = serde_json::from_str(&ex.stdout).unwrap();
    let ids: Vec<String> = ex["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 2, "{ex}");
    for id in ids.iter().rev() {
        let out = env.mf(&["expand", name, id, "--restore", "--force"]);
        assert_eq!(out.code, 0, "restore {id}: {out:?}");
        let v = env.mf(&["verify", name]);
        assert_eq!(v.code, 0, "after restoring {id}: {v:?}");
    }
    let recall = env.mf(&["recall", name]);
    assert!(
        !recall.stdout.contains("[summary of earlier turns"),
        "{}",
        recall.stdout
    );
    assert_eq!(
        recall.stdout.matches("\"role\":\"user\"").count(),
        7,
        "every prompt is back: {}",
        recall.stdout
    );
}
