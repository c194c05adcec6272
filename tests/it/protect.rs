//! `--protect user` (issue 9, acceptance 3), a property over every committed fixture, every
//! corpus transcript (`MF_CORPUS`) and randomized generated conversations: whatever folds —
//! one span, chunks, a recall target, a window, masks then a summary, a second compaction over
//! the first — no user message is ever covered. A user message is what the format's reader
//! makes one: the entry that starts a turn (in `mf recall --format memory`, the first block of
//! each turn after the preamble, role `user`). After every compaction each of them is still in
//! recall, under its id, with its text byte for byte.
//!
//! The same checker, run without `--protect user`, finds covered user messages: it can fail.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::corpus::corpus_files;
use crate::util::*;

/// One block of `mf recall --format memory`.
#[derive(Debug, Clone, PartialEq)]
struct Block {
    /// `turn:N`, or `turns:A-B` for a summary.
    source: String,
    role: String,
    id: String,
    body: String,
}

fn attr<'a>(head: &'a str, name: &str) -> &'a str {
    let key = format!("{name}=\"");
    let at = head
        .find(&key)
        .unwrap_or_else(|| panic!("no {name} in {head}"))
        + key.len();
    let len = head[at..].find('"').expect("a closing quote");
    &head[at..at + len]
}

/// Parse memory blocks (a body cannot contain `</memory>`: mf escapes it).
fn blocks(out: &str) -> Vec<Block> {
    let mut v = Vec::new();
    let mut rest = out;
    while let Some(start) = rest.find("<memory ") {
        let head_end = start + rest[start..].find(">\n").expect("a header line");
        let head = &rest[start..head_end];
        let body_start = head_end + 2;
        let end = body_start
            + rest[body_start..]
                .find("\n</memory>")
                .expect("a closing tag");
        v.push(Block {
            source: attr(head, "source").to_string(),
            role: attr(head, "role").to_string(),
            id: attr(head, "id")
                .replace("&quot;", "\"")
                .replace("&lt;", "<")
                .replace("&amp;", "&"),
            body: rest[body_start..end].to_string(),
        });
        rest = &rest[end + "\n</memory>".len()..];
    }
    v
}

fn recall_blocks(env: &TestEnv, name: &str) -> Vec<Block> {
    let out = env.mf(&["recall", name, "--format", "memory"]);
    assert_eq!(out.code, 0, "{name}: {out:?}");
    blocks(&out.stdout)
}

/// The user messages of a recall view with no mf summary in it: the first `user` block of each
/// turn after the preamble. An agent's own compaction summary (`explain`'s `native` lines) is
/// not one: the turn it sits in started before the agent's compaction, out of view.
fn user_messages(name: &str, view: &[Block], native: &[String]) -> Vec<Block> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut turns = std::collections::HashSet::new();
    // pi's own compaction may cut inside a turn: the entry after its summary then continues a
    // turn that began before the compaction (out of view) too.
    let mut after_native = false;
    for b in view {
        let Some(turn) = b.source.strip_prefix("turn:") else {
            continue;
        };
        let turn: u64 = turn.parse().expect("a turn number");
        if turn == 0 {
            continue;
        }
        turns.insert(turn);
        if std::mem::take(&mut after_native) {
            seen.insert(turn);
        }
        if native.contains(&b.id) {
            seen.insert(turn);
            after_native = true;
        } else if b.role == "user" && seen.insert(turn) {
            out.push(b.clone());
        }
    }
    // Every turn in view has its user message (or began before the agent's own compaction).
    assert_eq!(seen, turns, "{name}: turns without a user message");
    out
}

/// The ids of the agent's own compaction summaries in a file (`line-N`, and a pi v2+ entry's own
/// id).
fn native_summaries(env: &TestEnv, name: &str) -> Vec<String> {
    let out = env.mf(&["explain", name, "--json"]);
    assert_eq!(out.code, 0, "{name}: {out:?}");
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let text = std::fs::read_to_string(env.path(name)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut ids = Vec::new();
    for n in v["native"].as_array().unwrap() {
        let line = n["line"].as_u64().unwrap() as usize;
        ids.push(format!("line-{line}"));
        // A pi v2+ entry is addressed by its own id.
        if let Some(id) = serde_json::from_str::<serde_json::Value>(lines[line - 1])
            .ok()
            .and_then(|l| l["id"].as_str().map(str::to_string))
        {
            ids.push(id);
        }
    }
    ids
}

/// The user messages of `users` not in `view` under their id with the same text.
fn covered<'a>(users: &'a [Block], view: &[Block]) -> Vec<&'a Block> {
    let by_id: BTreeMap<&str, &Block> = view.iter().map(|b| (b.id.as_str(), b)).collect();
    users
        .iter()
        .filter(|u| {
            by_id
                .get(u.id.as_str())
                .is_none_or(|b| b.body != u.body || b.role != "user")
        })
        .collect()
}

/// The fold settings each file is compacted with (extractive, audit off so that every fold
/// the plan allows is written).
const SETTINGS: &[&[&str]] = &[
    &["--recent", "1"],
    &["--recent", "2", "--max-span-tokens", "300"],
    &["--recent", "1", "--target-tokens", "1500"],
    &["--recent", "3", "--size", "30"],
    &[
        "--recent",
        "1",
        "--strategy",
        "mask,summary",
        "--keep-tool-results",
        "1",
    ],
];

/// What compacting one file with one setting (twice: the second run folds over the first)
/// came to.
#[derive(Default, Debug)]
struct Tally {
    runs: usize,
    folded: usize,
    protected: u64,
    refused: Vec<String>,
    violations: Vec<String>,
}

/// Compact a fresh copy of `src` with `setting`, twice, and check every user message after
/// each run. `protect`: pass `--protect user`.
fn check_file(src: &Path, setting: &[&str], protect: bool, t: &mut Tally) {
    let env = TestEnv::new();
    let name = src.file_name().unwrap().to_str().unwrap().to_string();
    std::fs::copy(src, env.path(&name)).unwrap();
    let out = env.mf(&["recall", &name, "--format", "memory"]);
    if out.code == 1 && out.stderr.contains("this is a fine-tuning dataset") {
        // Not a transcript: refused by name, never folded.
        t.refused.push(name);
        return;
    }
    assert_eq!(out.code, 0, "{name}: {out:?}");
    let before = blocks(&out.stdout);
    let native = native_summaries(&env, &name);
    let users = user_messages(&name, &before, &native);
    for round in 1..=2 {
        let mut args = vec![
            "compact",
            name.as_str(),
            "--model",
            "extractive",
            "--trigger",
            "0",
            "--min-retention",
            "0",
            "--force",
            "--json",
        ];
        if protect {
            args.extend(["--protect", "user"]);
        }
        // A second round, where the tail was longer than one entry, folds with a tail of one
        // entry, over the first round's summary.
        let mut setting = setting.to_vec();
        if round == 2 {
            let p = setting.iter().position(|a| *a == "--recent").unwrap();
            if setting[p + 1] == "1" {
                break;
            }
            setting[p + 1] = "1";
            setting.retain(|a| *a != "--size" && *a != "30");
        }
        args.extend(setting.iter().copied());
        let file_before = read(&env.path(&name));
        let out = env.mf(&args);
        t.runs += 1;
        let ctx = format!("{name} {setting:?} round {round}");
        match out.code {
            0 => {}
            // An agent session that cannot show a non-contiguous fold refuses it, whole.
            1 if out.stderr.contains("cannot show what this would leave") => {
                assert_eq!(read(&env.path(&name)), file_before, "{ctx}: written");
                t.refused.push(ctx);
                continue;
            }
            _ => panic!("{ctx}: {out:?}"),
        }
        for rec in json_lines(&out.stdout) {
            if rec["action"] == "folded" {
                t.folded += 1;
            }
            t.protected += rec["verbatim"]["protectedCount"].as_u64().unwrap_or(0);
        }
        let after = recall_blocks(&env, &name);
        for u in covered(&users, &after) {
            t.violations.push(format!(
                "{ctx}: user message {} (turn {}) is not in recall verbatim",
                u.id, u.source
            ));
        }
    }
}

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut v: Vec<PathBuf> = walk(&dir)
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    v.sort();
    v
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// File `i` under the settings `k` with `(i + k) % every == 0` (1: every file under every one).
fn run_all(files: &[PathBuf], protect: bool, every: usize) -> Tally {
    let mut t = Tally::default();
    for (i, f) in files.iter().enumerate() {
        for (k, s) in SETTINGS.iter().enumerate() {
            if (i + k) % every == 0 {
                check_file(f, s, protect, &mut t);
            }
        }
    }
    t
}

/// Each fixture under a third of the settings (every setting on a third of the fixtures, in
/// turn); the long suite runs every fixture under every setting.
#[test]
fn protect_user_never_covers_a_user_message_in_the_fixtures() {
    protect_user_on_the_fixtures(3);
}

#[test]
#[ignore = "long suite (every fixture under every setting): .ci/run runs the `_long` tests by name"]
fn protect_user_never_covers_a_user_message_in_the_fixtures_long() {
    protect_user_on_the_fixtures(1);
}

fn protect_user_on_the_fixtures(every: usize) {
    let files = fixtures();
    assert!(files.len() >= 2, "{files:?}");
    let t = run_all(&files, true, every);
    assert!(t.violations.is_empty(), "{}", t.violations.join("\n"));
    // The property was exercised: folds were written and user messages protected in them.
    assert!(t.folded >= files.len() / every, "{t:?}");
    assert!(t.protected > 0, "{t:?}");
    eprintln!(
        "fixtures: {} runs, {} folds, {} user messages protected, refused: {:?}",
        t.runs, t.folded, t.protected, t.refused
    );
}

#[test]
#[ignore = "needs MF_CORPUS (the shared corpus; .ci/run sets it)"]
fn protect_user_never_covers_a_user_message_in_the_corpus() {
    let files = corpus_files();
    let t = run_all(&files, true, 1);
    assert!(t.violations.is_empty(), "{}", t.violations.join("\n"));
    assert!(t.folded >= 20, "{t:?}");
    assert!(t.protected >= 20, "{t:?}");
    eprintln!(
        "corpus: {} files, {} runs, {} folds, {} user messages protected; refused ({}): {:?}",
        files.len(),
        t.runs,
        t.folded,
        t.protected,
        t.refused.len(),
        t.refused
    );
}

#[test]
fn without_protect_user_the_checker_finds_covered_user_messages() {
    // The checker is not vacuous: the same runs without --protect fold user messages away.
    let t = run_all(&fixtures(), false, 3);
    assert!(t.violations.len() >= 2, "{t:?}");
    assert_eq!(t.protected, 0);
}

/// Generated conversations, written in two parts with a compaction after each: random length,
/// tail, chunk budget, recall target, window and strategy per seed.
#[test]
fn protect_user_holds_on_randomized_generated_conversations() {
    let mut folded = 0;
    let mut protected = 0u64;
    for seed in 1..=8u64 {
        let mut rng = testgen::Rng::new(seed * 7919);
        let turns = 6 + rng.below(40);
        let conv = testgen::facts(turns, seed);
        let jsonl = conv.to_jsonl();
        let lines: Vec<&str> = jsonl.lines().collect();
        let cut = 1 + rng.below(lines.len() - 1);
        let env = TestEnv::new();
        let f = env.write("gen.jsonl", &(lines[..cut].join("\n") + "\n"));
        // The user messages are known from the generator: every user line.
        let users: Vec<(String, String)> = conv
            .messages
            .iter()
            .filter(|m| m.role == "user")
            .map(|m| (m.id.clone(), m.content.clone().unwrap_or_default()))
            .collect();
        for part in 0..2 {
            if part == 1 {
                let mut text = String::from_utf8(read(&f)).unwrap();
                text.push_str(&(lines[cut..].join("\n") + "\n"));
                std::fs::write(&f, text).unwrap();
            }
            let recent = (1 + rng.below(8)).to_string();
            let span = (256 + rng.below(4000)).to_string();
            let target = (500 + rng.below(6000)).to_string();
            let size = (12 + rng.below(80)).to_string();
            let keep = (1 + rng.below(4)).to_string();
            let mut args = vec![
                "compact",
                "gen.jsonl",
                "--model",
                "extractive",
                "--protect",
                "user",
                "--trigger",
                "0",
                "--json",
                "--recent",
                &recent,
            ];
            if rng.chance(0.5) {
                args.extend(["--max-span-tokens", &span]);
            }
            if rng.chance(0.4) {
                args.extend(["--target-tokens", &target]);
            }
            if rng.chance(0.3) && size.parse::<usize>().unwrap() > recent.parse().unwrap() {
                args.extend(["--size", &size]);
            }
            if rng.chance(0.4) {
                args.extend(["--strategy", "mask,summary", "--keep-tool-results", &keep]);
            }
            if rng.chance(0.5) {
                args.extend(["--min-retention", "0"]);
            }
            let out = env.mf(&args);
            assert_eq!(out.code, 0, "seed {seed} {args:?}: {out:?}");
            for rec in json_lines(&out.stdout) {
                folded += usize::from(rec["action"] == "folded");
                protected += rec["verbatim"]["protectedCount"].as_u64().unwrap_or(0);
            }
            let view = recall_blocks(&env, "gen.jsonl");
            let present = String::from_utf8(read(&f)).unwrap();
            for (id, content) in &users {
                if !present.contains(&format!("\"id\":\"{id}\"")) {
                    continue; // not written yet
                }
                let b = view.iter().find(|b| b.id == *id);
                assert!(
                    b.is_some_and(|b| b.role == "user" && b.body == content.trim_end()),
                    "seed {seed} part {part} {args:?}: user message {id} is not in recall verbatim"
                );
            }
        }
    }
    assert!(folded >= 8, "{folded} folds");
    assert!(protected >= 8, "{protected} protected");
}
