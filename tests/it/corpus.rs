//! The shared corpus of real transcripts. Its path comes from `MF_CORPUS` (set by `.ci/run`).
//! Every test that reads it is `#[ignore = "needs MF_CORPUS …"]`, so a fresh clone's `cargo test`
//! reports it ignored (never passed); `.ci/run` runs them with `--include-ignored`, and there a
//! missing or unset `MF_CORPUS` fails them.
//!
//! What they prove on every corpus file: it is read (or refused as the dataset it is) with the
//! turn count of `SOURCES.md`; over many fold settings no fold separates a tool call from its
//! result, splits a streamed Claude Code response, or reaches before an agent's own compaction —
//! checked against the file as read here, line by line, not through mf; and compact + `expand
//! --restore` leaves the original bytes and the original recall.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::*;

/// The corpus files. A test that calls this is `#[ignore = "needs MF_CORPUS …"]`; run, it fails
/// when `MF_CORPUS` is unset or names no corpus.
pub fn corpus_files() -> Vec<PathBuf> {
    let dir = corpus_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("MF_CORPUS={} cannot be read: {e}", dir.display()))
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).into_iter().flatten())
        .map(|f| f.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    assert!(
        files.len() >= 20,
        "{} files in {}",
        files.len(),
        dir.display()
    );
    files
}

fn name_of(p: &Path) -> String {
    p.file_name().unwrap().to_str().unwrap().to_string()
}

/// What each corpus file is, and its turns as `SOURCES.md` counts them ("Real user-turn
/// counts"): Claude Code counts typed prompts, plus a slash command only when the assistant
/// answers it (a custom command); a built-in one (`/clear`, `/mcp`) joins the next turn, so its
/// "+1" in the table is not a turn of its own; a sub-agent's prompts (sidechain) are turns only in
/// the sub-agent's own file, read on its own (issue 13: its first prompt is the Task prompt).
/// Codex counts `event_msg/user_message`; pi counts `user` and `bashExecution` messages. Turns
/// before an agent's own compaction count (they are history). Files the table leaves out: the
/// two small Codex files and the pi v3 file have one prompt each (their rows in "Files"), and
/// the derived chat file has five user messages.
const EXPECTED: &[(&str, Option<u64>)] = &[
    ("cc-2.0.14-streaming-split-unpaired-tail.jsonl", Some(2)),
    ("cc-2.0.55-image-in-tool-result.jsonl", Some(0)), // starts with an assistant line
    ("cc-2.0.64-agent-warmup-sidechain.jsonl", Some(1)), // a sub-agent's own file: "Warmup"
    ("cc-2.0.64-parallel-writes-small.jsonl", Some(3)),
    ("cc-2.0.76-autocompact-222l.jsonl", Some(14)), // 14 (+1 /clear, which joins the next turn)
    ("cc-2.0.76-thinking-tools-233l.jsonl", Some(13)), // 13 (+1 /clear)
    ("cc-2.1.38-tool-heavy-queue-ops.jsonl", Some(2)), // 2 (+1 /mcp)
    ("cc-2.1.39-autocompact-hooks-progress-1512l.jsonl", Some(2)),
    ("cc-2.1.39-subagent-acompact-summarizer.jsonl", Some(1)), // a sub-agent's own file
    ("cc-2.1.39-subagent-sidechain-file.jsonl", Some(1)),      // a sub-agent's own file
    ("cc-2.1.4-summary-entries-interrupt.jsonl", Some(3)),
    ("cc-synthetic-edge-cases-malformed.jsonl", Some(4)), // 3 (+1 custom command, answered)
    (
        "codex-0.104-desktop-compacted-2722l-redacted.jsonl",
        Some(38),
    ),
    ("codex-0.104-desktop-small-redacted.jsonl", Some(1)),
    ("codex-0.135.0-exec-redacted.jsonl", Some(1)),
    ("codex-0.40.0-vscode-shell-base64-image.jsonl", Some(2)),
    ("DERIVED-per-message-flattened.jsonl", Some(5)),
    ("messages-per-conversation-tool-calls.jsonl", None), // a dataset: refused
    ("messages-per-conversation-toy.jsonl", None),        // a dataset: refused
    ("pi-v1-before-compaction-1003l.jsonl", Some(58)),
    ("pi-v1-large-session-1019l.jsonl", Some(88)),
    ("pi-v3-session-info-redacted.jsonl", Some(1)),
];

fn expected(name: &str) -> Option<u64> {
    EXPECTED
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("{name} is not in the table of corpus files"))
        .1
}

#[test]
#[ignore = "needs MF_CORPUS (the shared corpus; .ci/run sets it)"]
fn every_corpus_file_is_read_with_its_turns_or_refused_by_name() {
    let files = corpus_files();
    let names: HashSet<String> = files.iter().map(|f| name_of(f)).collect();
    for (n, _) in EXPECTED {
        assert!(names.contains(*n), "{n} is missing from the corpus");
    }
    let env = TestEnv::new();
    for f in &files {
        let name = name_of(f);
        let path = f.to_str().unwrap();
        let out = env.mf(&["explain", path, "--json"]);
        match expected(&name) {
            Some(turns) => {
                assert_eq!(out.code, 0, "{name}: {out:?}");
                let ex = json_lines(&out.stdout).remove(0);
                assert_eq!(ex["turns"], turns, "{name}");
                let v = env.mf(&["verify", path, "--json"]);
                assert_eq!(v.code, 0, "{name}: {v:?}");
                // The entries mf indexes are the ones read here, independently.
                let rep = json_lines(&v.stdout).remove(0);
                let lines = Parsed::read(f, rep["format"].as_str().unwrap());
                assert_eq!(
                    rep["entries"],
                    lines.entries.len(),
                    "{name}: entries read here and by mf differ"
                );
            }
            None => {
                assert_eq!(out.code, 1, "{name}: {out:?}");
                assert!(
                    out.stderr
                        .contains(&format!("{name}: this is a fine-tuning dataset")),
                    "{name}: {out:?}"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The file read independently: entries (what mf folds as one unit), their tool calls and
// results, streamed responses, and the agent's own floor.

/// One entry: the unit a coverage range names by its anchor (first) line.
#[derive(Debug)]
struct Entry {
    anchor: u32,
    /// Every line of the entry (a streamed Claude Code response has several).
    lines: Vec<u32>,
    calls: Vec<String>,
    results: Vec<String>,
    /// Claude Code: the row's uuid (for preserved rows).
    uuid: Option<String>,
}

pub(crate) struct Parsed {
    entries: Vec<Entry>,
    /// Entries whose anchor is at or after this line may be folded: after the agent's own last
    /// compaction (pi: its first kept entry; Claude Code: plus the rows it preserves).
    floor: u32,
    preserved: HashSet<String>,
    /// Claude Code: the lines of each streamed response (`message.id`) with several rows.
    streamed: Vec<Vec<u32>>,
}

fn lines_of(path: &Path) -> Vec<(u32, Value)> {
    let bytes = std::fs::read(path).unwrap();
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .filter_map(|(k, l)| {
            let l = l.strip_suffix(b"\r").unwrap_or(l);
            match serde_json::from_slice::<Value>(l) {
                Ok(v @ Value::Object(_)) => Some((k as u32 + 1, v)),
                _ => None,
            }
        })
        .collect()
}

fn strings(v: Option<&Vec<Value>>, ty: &str, key: &str) -> Vec<String> {
    v.map(|bs| {
        bs.iter()
            .filter(|b| b["type"] == ty)
            .filter_map(|b| b[key].as_str().map(str::to_string))
            .collect()
    })
    .unwrap_or_default()
}

impl Parsed {
    pub(crate) fn read(path: &Path, format: &str) -> Parsed {
        let lines = lines_of(path);
        match format {
            "claude" => Self::claude(&lines),
            "codex" => Self::codex(&lines),
            "pi" => Self::pi(&lines),
            "chat" => Self::chat(&lines),
            other => panic!("{other}"),
        }
    }

    fn entry(anchor: u32) -> Entry {
        Entry {
            anchor,
            lines: vec![anchor],
            calls: Vec::new(),
            results: Vec::new(),
            uuid: None,
        }
    }

    fn claude(lines: &[(u32, Value)]) -> Parsed {
        let mut entries: Vec<Entry> = Vec::new();
        let mut by_message: HashMap<String, usize> = HashMap::new();
        let mut seen: HashSet<String> = HashSet::new();
        for (n, v) in lines {
            let content = v["message"]["content"].as_array();
            let message = matches!(v["type"].as_str(), Some("user" | "assistant"))
                && v["message"].is_object()
                && v.get("mf").is_none();
            if !message {
                continue;
            }
            let uuid = v["uuid"].as_str().map(str::to_string);
            if let Some(u) = &uuid
                && !seen.insert(u.clone())
            {
                continue; // a row replayed with an earlier uuid is not a new entry
            }
            let calls = strings(content, "tool_use", "id");
            let results = strings(content, "tool_result", "tool_use_id");
            let mid = (v["type"] == "assistant")
                .then(|| v["message"]["id"].as_str().map(str::to_string))
                .flatten();
            if let Some(&k) = mid.as_ref().and_then(|m| by_message.get(m)) {
                let e = &mut entries[k];
                e.lines.push(*n);
                e.calls.extend(calls);
                continue;
            }
            if let Some(m) = mid {
                by_message.insert(m, entries.len());
            }
            entries.push(Entry {
                calls,
                results,
                uuid,
                ..Self::entry(*n)
            });
        }
        // Claude Code's own last boundary (not a sub-agent's, not mf's).
        let boundary = lines.iter().rev().find(|(_, v)| {
            v["subtype"] == "compact_boundary" && v["isSidechain"] != true && v.get("mf").is_none()
        });
        let (floor, preserved) = match boundary {
            None => (0, HashSet::new()),
            Some((n, b)) => {
                let meta = &b["compactMetadata"];
                let mut p: HashSet<String> = meta["preservedMessages"]["uuids"]
                    .as_array()
                    .map(|u| {
                        u.iter()
                            .filter_map(|x| x.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                if let (Some(head), Some(tail)) = (
                    meta["preservedSegment"]["headUuid"].as_str(),
                    meta["preservedSegment"]["tailUuid"].as_str(),
                ) && p.is_empty()
                {
                    let parent: HashMap<&str, &str> = lines
                        .iter()
                        .filter_map(|(_, v)| Some((v["uuid"].as_str()?, v["parentUuid"].as_str()?)))
                        .collect();
                    let mut cur = Some(tail);
                    while let Some(u) = cur {
                        p.insert(u.to_string());
                        if u == head || p.len() > lines.len() {
                            break;
                        }
                        cur = parent.get(u).copied();
                    }
                }
                (*n + 1, p)
            }
        };
        let streamed = entries
            .iter()
            .filter(|e| e.lines.len() > 1)
            .map(|e| e.lines.clone())
            .collect();
        Parsed {
            entries,
            floor,
            preserved,
            streamed,
        }
    }

    fn codex(lines: &[(u32, Value)]) -> Parsed {
        let mut entries = Vec::new();
        let mut floor = 0;
        for (n, v) in lines {
            if v.get("mf").is_some() {
                continue;
            }
            let p = &v["payload"];
            match v["type"].as_str() {
                Some("response_item") => {
                    let ty = p["type"].as_str().unwrap_or_default();
                    let id = p["call_id"].as_str().map(str::to_string);
                    let mut e = Self::entry(*n);
                    if matches!(
                        ty,
                        "function_call" | "custom_tool_call" | "local_shell_call"
                    ) {
                        e.calls.extend(id);
                    } else if ty.ends_with("_output") {
                        e.results.extend(id);
                    }
                    entries.push(e);
                }
                Some("compacted") => {
                    entries.push(Self::entry(*n));
                    floor = *n + 1; // the compaction itself is carried, never folded
                }
                _ => {}
            }
        }
        Parsed {
            entries,
            floor,
            preserved: HashSet::new(),
            streamed: Vec::new(),
        }
    }

    fn pi(lines: &[(u32, Value)]) -> Parsed {
        let mut entries = Vec::new();
        for (n, v) in lines {
            if v.get("mf").is_some() {
                continue;
            }
            match v["type"].as_str() {
                Some("message") => {
                    let m = &v["message"];
                    let mut e = Self::entry(*n);
                    e.calls = strings(m["content"].as_array(), "toolCall", "id");
                    if m["role"] == "toolResult" {
                        e.results
                            .extend(m["toolCallId"].as_str().map(str::to_string));
                    }
                    entries.push(e);
                }
                Some("compaction" | "branch_summary" | "custom_message") => {
                    entries.push(Self::entry(*n))
                }
                _ => {}
            }
        }
        // pi's own last compaction: entries before its first kept entry are history. v1 names
        // it by index into the parsed entries (the header is 0), v2+ by id. (The corpus's v2+
        // file has no compaction and no branches, so the path is the file.)
        let floor = lines
            .iter()
            .rev()
            .find(|(_, v)| v["type"] == "compaction" && v.get("mf").is_none())
            .map_or(0, |(_, c)| {
                let kept = match (
                    c["firstKeptEntryId"].as_str(),
                    c["firstKeptEntryIndex"].as_u64(),
                ) {
                    (Some(id), _) => lines.iter().find(|(_, v)| v["id"] == id),
                    (None, Some(ix)) => lines.get(ix as usize),
                    _ => None,
                };
                kept.expect("the first kept entry").0
            });
        Parsed {
            entries,
            floor,
            preserved: HashSet::new(),
            streamed: Vec::new(),
        }
    }

    fn chat(lines: &[(u32, Value)]) -> Parsed {
        let entries = lines
            .iter()
            .filter(|(_, v)| v.get("mf").is_none() && v.get("role").is_some())
            .map(|(n, v)| {
                let mut e = Self::entry(*n);
                if let Some(calls) = v["tool_calls"].as_array() {
                    e.calls = calls
                        .iter()
                        .filter_map(|c| c["id"].as_str().map(str::to_string))
                        .collect();
                }
                e.results
                    .extend(v["tool_call_id"].as_str().map(str::to_string));
                e
            })
            .collect();
        Parsed {
            entries,
            floor: 0,
            preserved: HashSet::new(),
            streamed: Vec::new(),
        }
    }

    /// The entries a coverage names: those anchored in its ranges.
    fn covered(&self, ranges: &[(u32, u32)]) -> Vec<usize> {
        (0..self.entries.len())
            .filter(|&k| {
                let a = self.entries[k].anchor;
                ranges.iter().any(|&(x, y)| x <= a && a <= y)
            })
            .collect()
    }

    /// Everything wrong with a fold over `ranges` that claims `count` entries.
    pub(crate) fn problems(&self, ranges: &[(u32, u32)], count: u64) -> Vec<String> {
        let mut out = Vec::new();
        let cov = self.covered(ranges);
        if cov.len() as u64 != count {
            out.push(format!(
                "its ranges hold {} entries as read here, it claims {count}",
                cov.len()
            ));
        }
        let inside: HashSet<usize> = cov.iter().copied().collect();
        for &k in &cov {
            let e = &self.entries[k];
            // Nothing before the agent's own floor, except what the agent preserved.
            if e.anchor < self.floor && !e.uuid.as_ref().is_some_and(|u| self.preserved.contains(u))
            {
                out.push(format!(
                    "line {} lies before the agent's own compaction (line {})",
                    e.anchor,
                    self.floor - 1
                ));
            }
            // A result goes with its call: the nearest earlier entry making that call.
            for r in &e.results {
                let call = (0..k).rev().find(|&j| self.entries[j].calls.contains(r));
                if let Some(j) = call
                    && !inside.contains(&j)
                {
                    out.push(format!(
                        "the result on line {} is folded, its call on line {} is not",
                        e.anchor, self.entries[j].anchor
                    ));
                }
            }
            // A call goes with its results: every later entry answering it, up to the next
            // call with the same id.
            for c in &e.calls {
                for j in k + 1..self.entries.len() {
                    let other = &self.entries[j];
                    if other.results.contains(c) && !inside.contains(&j) {
                        out.push(format!(
                            "the call on line {} is folded, its result on line {} is not",
                            e.anchor, other.anchor
                        ));
                    }
                    if other.calls.contains(c) {
                        break;
                    }
                }
            }
        }
        // A streamed response: all its rows or none (a fold names an entry by its first row;
        // one that starts on a later row of a response splits it).
        for rows in &self.streamed {
            let first = ranges.iter().any(|&(x, y)| x <= rows[0] && rows[0] <= y);
            for &r in &rows[1..] {
                let starts_here = ranges.iter().any(|&(x, _)| x == r);
                let ends_here = ranges.iter().any(|&(_, y)| y == r);
                if !first && (starts_here || ends_here) {
                    out.push(format!("a range begins or ends on line {r}, inside a response that starts on line {}", rows[0]));
                }
            }
        }
        out
    }
}

fn ranges_of(v: &Value) -> Vec<(u32, u32)> {
    v.as_array()
        .expect("line ranges")
        .iter()
        .map(|r| (r[0].as_u64().unwrap() as u32, r[1].as_u64().unwrap() as u32))
        .collect()
}

/// The fold settings tried on every file.
fn settings() -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for r in (0..=8).chain([12, 25, 60]) {
        out.push(vec!["--recent".into(), r.to_string()]);
    }
    for (size, recent) in [(30, 6), (120, 10)] {
        out.push(vec![
            "--size".into(),
            size.to_string(),
            "--recent".into(),
            recent.to_string(),
        ]);
    }
    for (max, recent) in [(1500, 2), (6000, 4)] {
        out.push(vec![
            "--max-span-tokens".into(),
            max.to_string(),
            "--recent".into(),
            recent.to_string(),
        ]);
    }
    out
}

#[test]
#[ignore = "needs MF_CORPUS (the shared corpus; .ci/run sets it)"]
fn no_fold_separates_a_call_from_its_result_splits_a_response_or_crosses_a_floor() {
    let files = corpus_files();
    let files: Vec<PathBuf> = files
        .into_iter()
        .filter(|f| expected(&name_of(f)).is_some())
        .collect();
    let settings = settings();
    // Two workers: the files are independent.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: std::sync::Mutex<Vec<FileReport>> = Default::default();
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(f) = files.get(k) else { break };
                    let r = check_file(f, &settings);
                    results.lock().unwrap().push(r);
                }
            });
        }
    });
    let results = results.into_inner().unwrap();
    let mut problems = Vec::new();
    let (mut planned, mut written) = (0, 0);
    for (name, p, w, errs) in &results {
        eprintln!("{name}: {p} folds planned, {w} summaries written and checked");
        planned += p;
        written += w;
        problems.extend(errs.iter().map(|e| format!("{name}: {e}")));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(
        planned >= 100 && written >= 100,
        "{planned} planned, {written} written"
    );
}

/// A file's name, folds planned, summaries written, and what was wrong.
type FileReport = (String, usize, usize, Vec<String>);

/// Every setting on one file: the planned fold (the whole span) and every summary written
/// (each chunk), checked against the file as read here.
fn check_file(f: &Path, settings: &[Vec<String>]) -> FileReport {
    let name = name_of(f);
    let env = TestEnv::new();
    let original = read(f);
    let mut parsed: Option<Parsed> = None;
    let (mut planned, mut written, mut refused) = (0, 0, 0);
    let mut errs = Vec::new();
    for (k, s) in settings.iter().enumerate() {
        let out_name = format!("out-{k}.jsonl");
        let mut args: Vec<&str> = vec![
            f.to_str().unwrap(),
            "--model",
            "extractive",
            "--min-retention",
            "0",
            // The audit off (this test is about bytes, not what a summary keeps).
            "--allow-inventions",
            "--trigger",
            "0",
            "--json",
            "-o",
            &out_name,
        ];
        args.extend(s.iter().map(String::as_str));
        let mut all = vec!["compact"];
        all.extend(args);
        let out = env.mf(&all);
        // pi shows one summary, then one unbroken run of entries: a fold that would leave
        // entries verbatim in its middle (a --size window, an oversized tool unit between
        // chunks) is refused before anything is called, and the refusal says why.
        if out.code == 1
            && name.starts_with("pi-")
            && out.stderr.contains("cannot show what this would leave")
        {
            refused += 1;
            continue;
        }
        if out.code != 0 {
            errs.push(format!("{s:?}: {out:?}"));
            continue;
        }
        let rec = json_lines(&out.stdout).remove(0);
        let p = parsed.get_or_insert_with(|| Parsed::read(f, rec["format"].as_str().unwrap()));
        if rec["span"].is_object() && rec["action"] != "skipped" {
            planned += 1;
            for e in p.problems(
                &ranges_of(&rec["span"]["lines"]),
                rec["span"]["entryCount"].as_u64().unwrap(),
            ) {
                errs.push(format!("{s:?}: planned: {e}"));
            }
        }
        let path = env.path(&out_name);
        if !path.exists() {
            continue;
        }
        let now = read(&path);
        assert!(
            now.starts_with(&original),
            "{name}: -o changed the original lines"
        );
        for l in json_lines(std::str::from_utf8(&now[original.len()..]).unwrap()) {
            if l["mf"]["kind"] != "summary" {
                continue;
            }
            written += 1;
            let cov = &l["mf"]["coverage"];
            for e in p.problems(
                &ranges_of(&cov["lines"]),
                cov["entryCount"].as_u64().unwrap(),
            ) {
                errs.push(format!("{s:?}: written: {e}"));
            }
        }
    }
    if refused > 0 {
        eprintln!("{name}: {refused} settings refused (a pi session cannot show them)");
    }
    (name, planned, written, errs)
}

#[test]
#[ignore = "needs MF_CORPUS (the shared corpus; .ci/run sets it)"]
fn compact_and_restore_leave_every_corpus_file_as_it_was() {
    let files = corpus_files();
    let env = TestEnv::new();
    let mut folded: Vec<String> = Vec::new();
    for f in &files {
        let name = name_of(f);
        if expected(&name).is_none() {
            continue;
        }
        std::fs::copy(f, env.path(&name)).unwrap();
        let p = env.path(&name);
        let mut perms = std::fs::metadata(&p).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(&p, perms).unwrap();
        let original = read(f);
        let recall = |fmt: &str| {
            let out = env.mf(&["recall", &name, "--format", fmt]);
            assert_eq!(out.code, 0, "{name}: {out:?}");
            out.stdout
        };
        let (chat, native) = (recall("chat"), recall("native"));
        let out = env.mf(&[
            "compact",
            &name,
            "--model",
            "extractive",
            "--min-retention",
            "0",
            // The audit off (this test is about bytes, not what a summary keeps).
            "--allow-inventions",
            "--force",
            "--trigger",
            "0",
            "--recent",
            "1",
            "--json",
        ]);
        assert_eq!(out.code, 0, "{name}: {out:?}");
        let rec = json_lines(&out.stdout).remove(0);
        let now = read(&p);
        assert_eq!(
            sha(&now[..original.len()]),
            sha(&original),
            "{name}: the original bytes changed"
        );
        if rec["action"] != "folded" {
            // Nothing folded: too short, or a summary not smaller (a decline, recorded).
            eprintln!("{name}: {} ({})", rec["action"], rec["reason"]);
            continue;
        }
        folded.push(name.clone());
        assert_ne!(
            recall("chat"),
            chat,
            "{name}: the fold changed nothing in recall"
        );
        for s in rec["summaries"].as_array().unwrap() {
            let id = s["id"].as_str().unwrap();
            let out = env.mf(&["expand", &name, id, "--restore", "--force"]);
            assert_eq!(out.code, 0, "{name}: {out:?}");
        }
        let now = read(&p);
        assert_eq!(
            sha(&now[..original.len()]),
            sha(&original),
            "{name}: the original bytes changed"
        );
        let v = env.mf(&["verify", &name]);
        assert_eq!(v.code, 0, "{name}: {v:?}");
        assert_eq!(recall("chat"), chat, "{name}: recall after restore");
        assert_eq!(
            recall("native"),
            native,
            "{name}: native recall after restore"
        );
    }
    // Every file with more than one turn folds, except those whose older turns are shorter
    // than a summary or where a fold would save under a tenth of the view (cc-2.1.38: 596 of
    // 9,139 chars); the decline is recorded.
    let want = [
        "cc-2.0.14-streaming-split-unpaired-tail.jsonl",
        "cc-2.0.64-parallel-writes-small.jsonl",
        "cc-2.0.76-autocompact-222l.jsonl",
        "cc-2.0.76-thinking-tools-233l.jsonl",
        "cc-2.1.38-tool-heavy-queue-ops.jsonl",
        // One long turn after Claude Code's own compaction: folded inside (issue 13).
        "cc-2.1.39-autocompact-hooks-progress-1512l.jsonl",
        // A sub-agent's own file: its one long turn, folded inside (issue 13).
        "cc-2.1.39-subagent-sidechain-file.jsonl",
        "cc-2.1.4-summary-entries-interrupt.jsonl",
        "cc-synthetic-edge-cases-malformed.jsonl",
        "codex-0.104-desktop-compacted-2722l-redacted.jsonl",
        "codex-0.40.0-vscode-shell-base64-image.jsonl",
        "pi-v1-before-compaction-1003l.jsonl",
        "pi-v1-large-session-1019l.jsonl",
    ];
    assert_eq!(folded, want, "the files that folded");
}

#[test]
fn the_derived_openai_file_folds_with_its_tool_calls_whole() {
    let env = TestEnv::new();
    env.copy_fixture("openai-derived.jsonl");
    let out = env.mf(&[
        "compact",
        "openai-derived.jsonl",
        "--model",
        "extractive",
        "--min-retention",
        "0",
        // The audit off (this test is about bytes, not what a summary keeps).
        "--allow-inventions",
        "--trigger",
        "0",
        "--recent",
        "3",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    // Turn 5 (the weather question, its three calls and results, the answer) stays whole.
    assert_eq!(rec["verbatim"]["fromTurn"], 5, "{rec}");
    assert_eq!(rec["verbatim"]["entryCount"], 1 + 6, "{rec}");
    assert_eq!(rec["span"]["toTurn"], 4);
}

/// The checker above finds what it looks for (on the project's fixtures, no corpus needed):
/// a result folded without its call, a call without its result, a fold that begins inside a
/// streamed response, one that reaches before an agent's own compaction, and a wrong count.
#[test]
fn the_fold_checker_catches_each_kind_of_bad_fold() {
    let cc = Parsed::read(&fixture("claude-session.jsonl"), "claude");
    // The first response: a thinking, a text and two parallel calls, on four rows.
    let rows = cc.streamed[0].clone();
    assert_eq!(rows.len(), 4);
    let first = cc.entries.iter().position(|e| e.anchor == rows[0]).unwrap();
    let calls = &cc.entries[first].calls;
    assert_eq!(calls.len(), 2);
    let results: Vec<u32> = cc
        .entries
        .iter()
        .filter(|e| e.results.iter().any(|r| calls.contains(r)))
        .map(|e| e.anchor)
        .collect();
    assert_eq!(results.len(), 2);
    let (prompt, last) = (rows[0] - 1, *results.iter().max().unwrap());
    let answer = cc.entries[cc.entries.iter().position(|e| e.anchor == last).unwrap() + 1].anchor;
    let count = |r: &[(u32, u32)]| cc.covered(r).len() as u64;
    let whole = [(prompt, answer)];
    assert_eq!(cc.problems(&whole, count(&whole)), Vec::<String>::new());
    assert!(
        !cc.problems(&whole, count(&whole) + 1).is_empty(),
        "a wrong count"
    );
    let one_result = [(prompt, results[0].min(results[1]))];
    let p = cc.problems(&one_result, count(&one_result));
    assert!(p.iter().any(|e| e.contains("its result on line")), "{p:?}");
    let from_piece = [(rows[2], answer)];
    let p = cc.problems(&from_piece, count(&from_piece));
    assert!(p.iter().any(|e| e.contains("inside a response")), "{p:?}");
    assert!(p.iter().any(|e| e.contains("its call on line")), "{p:?}");

    let floor = Parsed::read(&fixture("claude-compacted.jsonl"), "claude");
    let before = [(floor.floor - 2, floor.floor + 3)];
    let p = floor.problems(&before, floor.covered(&before).len() as u64);
    assert!(
        p.iter()
            .any(|e| e.contains("before the agent's own compaction")),
        "{p:?}"
    );
    let after = [(floor.floor, floor.floor + 5)];
    assert_eq!(
        floor.problems(&after, floor.covered(&after).len() as u64),
        Vec::<String>::new()
    );

    for (name, format) in [
        ("pi-session-v1.jsonl", "pi"),
        ("codex-compacted.jsonl", "codex"),
    ] {
        let p = Parsed::read(&fixture(name), format);
        assert!(p.floor > 0, "{name}");
        let r = [(p.floor - 1, p.floor + 4)];
        let found = p.problems(&r, p.covered(&r).len() as u64);
        assert!(
            found
                .iter()
                .any(|e| e.contains("before the agent's own compaction")),
            "{name}: {found:?}"
        );
    }
    let codex = Parsed::read(&fixture("codex-rollout.jsonl"), "codex");
    let call = codex
        .entries
        .iter()
        .find(|e| !e.calls.is_empty())
        .unwrap()
        .anchor;
    let r = [(call, call)];
    let p = codex.problems(&r, 1);
    assert!(p.iter().any(|e| e.contains("its result on line")), "{p:?}");
}

// ---------------------------------------------------------------------------------------------
// The sessions agents have before they compact (issue 13): the longest corpus sessions sit
// behind their agent's own compaction, where mf never folds; the session as it stood just
// before each compaction is what the agent had when it ran out of room.

/// From every corpus session, the session as it stood just before each of its agent's own
/// compactions: the lines before each `compact_boundary` (Claude Code, not a sub-agent's),
/// `compaction` (pi) and `compacted` (Codex) line. `(name, bytes, an earlier compaction stays in
/// it)`.
pub fn precompaction_cuts() -> Vec<(String, Vec<u8>, bool)> {
    let mut out = Vec::new();
    for f in corpus_files() {
        let name = name_of(&f);
        if expected(&name).is_none() {
            continue;
        }
        let bytes = read(&f);
        let mut start = 0usize;
        let mut earlier = false;
        for (k, l) in bytes.split(|&b| b == b'\n').enumerate() {
            let here = start;
            start += l.len() + 1;
            let Ok(Value::Object(v)) = serde_json::from_slice::<Value>(l) else {
                continue;
            };
            if v.contains_key("mf") {
                continue;
            }
            let cut = (v.get("subtype").and_then(Value::as_str) == Some("compact_boundary")
                && v.get("isSidechain") != Some(&Value::Bool(true)))
                || matches!(
                    v.get("type").and_then(Value::as_str),
                    Some("compaction" | "compacted")
                );
            if cut {
                let stem = name.trim_end_matches(".jsonl");
                out.push((
                    format!("{stem}-before-{}.jsonl", k + 1),
                    bytes[..here].to_vec(),
                    earlier,
                ));
                earlier = true;
            }
        }
    }
    out
}

/// The last typed prompt in a chat recall: a user message that is not injected context.
fn last_prompt(recall: &[Value]) -> Option<String> {
    recall
        .iter()
        .rev()
        .filter(|m| m["role"] == "user")
        .filter_map(|m| m["content"].as_str())
        .find(|t| {
            !t.is_empty() && !t.starts_with('<') && !t.starts_with('[') && !t.starts_with("Caveat:")
        })
        .map(str::to_string)
}

#[test]
#[ignore = "needs MF_CORPUS (the shared corpus; .ci/run sets it)"]
fn the_sessions_agents_had_before_they_compacted_fold_lawfully_and_restore() {
    let cuts = precompaction_cuts();
    assert!(cuts.len() >= 5, "{} cuts", cuts.len());
    let env = TestEnv::new();
    let mut problems: Vec<String> = Vec::new();
    let mut folded = 0;
    for (name, bytes, _) in &cuts {
        let src = env.path(name);
        std::fs::write(&src, bytes).unwrap();
        let ex = env.mf(&["explain", name, "--json"]);
        if ex.code != 0 {
            problems.push(format!("{name}: explain: {ex:?}"));
            continue;
        }
        let format = json_lines(&ex.stdout)[0]["format"]
            .as_str()
            .unwrap()
            .to_string();
        let parsed = Parsed::read(&src, &format);
        let recall = |file: &str, fmt: &str| {
            let out = env.mf(&["recall", file, "--format", fmt]);
            (out.code, out.stdout)
        };
        let (chat, native) = (recall(name, "chat"), recall(name, "native"));
        if chat.0 != 0 || native.0 != 0 {
            problems.push(format!("{name}: recall exits {} / {}", chat.0, native.0));
            continue;
        }
        for strategy in ["summary", "mask", "mask,summary", "cited"] {
            let what = format!("{name} --strategy {strategy}");
            let file = format!("{}-{}.jsonl", name.trim_end_matches(".jsonl"), strategy);
            let path = env.path(&file);
            std::fs::write(&path, bytes).unwrap();
            let out = env.mf(&[
                "compact",
                &file,
                "--model",
                "extractive",
                "--strategy",
                strategy,
                "--force",
                "--json",
            ]);
            let now = read(&path);
            if !now.starts_with(bytes) {
                problems.push(format!("{what}: the original bytes changed"));
                continue;
            }
            // A pi v1 session's entries have no ids for a stub to name: mf refuses up front,
            // writing nothing, and says to resume it once in pi (which migrates it). Every other
            // session is masked.
            if strategy.starts_with("mask") && format == "pi" && out.code == 1 {
                if !out.stderr.contains("a pi v1 session's entries have no ids") || now != *bytes {
                    problems.push(format!("{what}: not the documented refusal: {out:?}"));
                }
                continue;
            }
            // pi cannot show a summary with gaps, so `cited` is refused for it (the README says).
            if strategy == "cited" && format == "pi" {
                if out.code != 1
                    || !out.stderr.contains("cannot show what this would leave")
                    || now != *bytes
                {
                    problems.push(format!("{what}: not the documented refusal: {out:?}"));
                }
                continue;
            }
            if out.code != 0 {
                problems.push(format!(
                    "{what}: exit {}: {}",
                    out.code,
                    out.stderr.lines().take(3).collect::<Vec<_>>().join(" | ")
                ));
                continue;
            }
            let rec = json_lines(&out.stdout).remove(0);
            let original_lines = bytes.iter().filter(|&&b| b == b'\n').count() as u32;
            for l in json_lines(std::str::from_utf8(&now[bytes.len()..]).unwrap()) {
                if l["mf"]["kind"] != "summary" {
                    continue;
                }
                let cov = &l["mf"]["coverage"];
                // After a mask on Claude Code, a summary also covers the stub copies mf appended
                // (rows the original file, which the checker reads, does not hold); `verify`
                // below judges those folds.
                if ranges_of(&cov["lines"])
                    .iter()
                    .any(|&(_, to)| to > original_lines)
                {
                    continue;
                }
                for e in parsed.problems(
                    &ranges_of(&cov["lines"]),
                    cov["entryCount"].as_u64().unwrap(),
                ) {
                    problems.push(format!("{what}: {e}"));
                }
            }
            let v = env.mf(&["verify", &file]);
            if v.code != 0 {
                problems.push(format!("{what}: verify: {v:?}"));
            }
            if recall(&file, "chat").0 != 0 {
                problems.push(format!("{what}: recall after compact fails"));
            }
            if !matches!(rec["action"].as_str(), Some("folded" | "masked")) {
                eprintln!("{what}: {} ({})", rec["action"], rec["reason"]);
                continue;
            }
            folded += 1;
            // Newest first, as one undoes: a summary over stubs before the stubs under it.
            for s in rec["summaries"].as_array().unwrap().iter().rev() {
                if !written_outcome(&s["outcome"]) {
                    continue;
                }
                let id = s["id"].as_str().unwrap();
                let out = env.mf(&["expand", &file, id, "--restore", "--force"]);
                if out.code != 0 {
                    problems.push(format!("{what}: restore {id}: {out:?}"));
                }
            }
            if !read(&path).starts_with(bytes) {
                problems.push(format!("{what}: the original bytes changed on restore"));
            }
            let v = env.mf(&["verify", &file]);
            if v.code != 0 {
                problems.push(format!("{what}: verify after restore: {v:?}"));
            }
            if recall(&file, "chat") != chat || recall(&file, "native") != native {
                problems.push(format!("{what}: recall after restore is not the original"));
            }
        }
    }
    eprintln!("{} cuts, {folded} folds made and restored", cuts.len());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(folded >= 5, "only {folded} folds");
}

/// The size target on the cuts: default `compact --model extractive` (the retention audit off,
/// which issue 14 recalibrates) brings every cut over 20k tokens to at most 0.35 of its recall
/// tokens, or 0.5 where an earlier compaction of the agent's own stays in it as a floor; the last
/// prompt stays verbatim in recall.
#[test]
#[ignore = "needs MF_CORPUS (the shared corpus; .ci/run sets it)"]
fn the_sessions_agents_had_before_they_compacted_come_down_to_a_third() {
    let env = TestEnv::new();
    let mut problems = Vec::new();
    let mut measured = 0;
    for (name, bytes, floor) in precompaction_cuts() {
        std::fs::write(env.path(&name), &bytes).unwrap();
        let before = json_lines(&env.mf_ok(&["recall", &name, "--format", "chat"]).stdout);
        let out = env.mf(&[
            "compact",
            &name,
            "--model",
            "extractive",
            "--min-retention",
            "0",
            // The audit off (this test is about bytes, not what a summary keeps).
            "--allow-inventions",
            "--force",
            "--json",
        ]);
        if out.code != 0 {
            problems.push(format!(
                "{name}: exit {}: {}",
                out.code,
                out.stderr.lines().next().unwrap_or("")
            ));
            continue;
        }
        let rec = json_lines(&out.stdout).remove(0);
        let (b, a) = (
            rec["before"]["tokens"].as_f64().unwrap(),
            rec["after"]["tokens"].as_f64().unwrap(),
        );
        eprintln!(
            "{name}: {b} -> {a} tokens ({:.2}), {}",
            a / b,
            rec["action"]
        );
        if b <= 20_000.0 {
            continue;
        }
        measured += 1;
        let limit = if floor { 0.5 } else { 0.35 };
        if a > limit * b {
            problems.push(format!(
                "{name}: {a} of {b} tokens ({:.2} > {limit})",
                a / b
            ));
        }
        let after = json_lines(&env.mf_ok(&["recall", &name, "--format", "chat"]).stdout);
        if let Some(p) = last_prompt(&before)
            && !after
                .iter()
                .any(|m| m["content"].as_str() == Some(p.as_str()))
        {
            problems.push(format!("{name}: the last prompt is not verbatim in recall"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(measured >= 4, "only {measured} cuts over 20k tokens");
}
