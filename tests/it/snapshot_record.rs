//! The decision record, byte for byte, on every fixture: `explain --json` before the fold (what
//! compact would do now), `compact --json` with the built-in summarizer, the lines that fold
//! appended, then `explain --json` and `verify --json` after it; and the incident fixture under each
//! strategy. These snapshots (`tests/it/snapshots/record_*.snap`) are the proof that a refactor
//! leaves the JSON contract and the written lines as they were, so they are strict: only the temp
//! dir, the version and the times a run cannot repeat are filtered (`summarizedAtMs`/`atMs`, the
//! agents' `timestamp`s, and the random ids mf gives an agent's new lines, numbered in order so a
//! line's parent still names the line before it).

use crate::mf_snapshot;
use crate::util::*;

/// Every fixture under `fixtures/` (checked against the directory by
/// `every_fixture_has_record_snapshots`), with the name its snapshots carry.
const FIXTURES: &[(&str, &str)] = &[
    (
        "claude-2.1.332-compacted-twice-in-one-turn.jsonl",
        "claude_2_1_332_compacted_twice_in_one_turn",
    ),
    ("claude-2.1.332-ids.jsonl", "claude_2_1_332_ids"),
    ("claude-2.1.332-multiturn.jsonl", "claude_2_1_332_multiturn"),
    ("claude-compacted.jsonl", "claude_compacted"),
    ("claude-session.jsonl", "claude_session"),
    (
        "claude-subagent-sidechain.jsonl",
        "claude_subagent_sidechain",
    ),
    ("codex-0.171-exec-tools.jsonl", "codex_0_171_exec_tools"),
    ("codex-0.171.0-ids.jsonl", "codex_0_171_0_ids"),
    ("codex-0.171.0-multiturn.jsonl", "codex_0_171_0_multiturn"),
    ("codex-compacted.jsonl", "codex_compacted"),
    ("codex-rollout.jsonl", "codex_rollout"),
    (
        "copilot-1.0.102-native-compaction.jsonl",
        "copilot_1_0_102_native_compaction",
    ),
    ("copilot-1.0.102-subagent.jsonl", "copilot_1_0_102_subagent"),
    ("copilot-1.0.102-tools.jsonl", "copilot_1_0_102_tools"),
    (
        "gemini-0.61.0-compressed-mid-turn.jsonl",
        "gemini_0_61_0_compressed_mid_turn",
    ),
    (
        "gemini-0.61.0-native-compression.jsonl",
        "gemini_0_61_0_native_compression",
    ),
    ("gemini-0.61.0-tools.jsonl", "gemini_0_61_0_tools"),
    ("incident-northwind.jsonl", "incident_northwind"),
    ("openai-derived.jsonl", "openai_derived"),
    ("pi-0.73-session-tools.jsonl", "pi_0_73_session_tools"),
    ("pi-0.73.1-ids.jsonl", "pi_0_73_1_ids"),
    ("pi-0.73.1-long-run.jsonl", "pi_0_73_1_long_run"),
    ("pi-0.73.1-multiturn.jsonl", "pi_0_73_1_multiturn"),
    ("pi-1.6-native-compaction.jsonl", "pi_1_6_native_compaction"),
    ("pi-1.6-session-tools.jsonl", "pi_1_6_session_tools"),
    ("pi-1.6.0-ids.jsonl", "pi_1_6_0_ids"),
    ("pi-1.6.0-mf-continued.jsonl", "pi_1_6_0_mf_continued"),
    ("pi-1.6.0-multiturn.jsonl", "pi_1_6_0_multiturn"),
    ("pi-session-v1.jsonl", "pi_session_v1"),
    ("pi-session-v3.jsonl", "pi_session_v3"),
    ("qwen-0.24.4-compressed.jsonl", "qwen_0_24_4_compressed"),
    ("qwen-0.24.4-tools.jsonl", "qwen_0_24_4_tools"),
];

/// The bytes a run appended to `original`, with what cannot repeat filtered: an agent line's
/// `timestamp` (ISO text, or pi 1.6's milliseconds), the record times, and each id that is not in the original file (a fresh UUID,
/// pi's 8-hex id, the 8-hex id of a set of lines before its `:k/n`),
/// replaced by `[ID n]` in order of first appearance, so references between the new lines stay
/// checked.
fn appended_text(original: &[u8], now: &[u8]) -> String {
    assert!(now.starts_with(original), "mf changed the file's bytes");
    let old = String::from_utf8_lossy(original);
    let new = String::from_utf8(now[original.len()..].to_vec()).expect("utf-8 lines");
    let ts = regex::Regex::new(r#""timestamp":"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z""#).unwrap();
    let new = ts.replace_all(&new, r#""timestamp":"[TIME]""#);
    let ms = regex::Regex::new(r#""(summarizedAtMs|atMs)":[0-9]+"#).unwrap();
    let new = ms.replace_all(&new, r#""$1":"[MS]""#);
    // pi 1.6 stamps each message with milliseconds since the epoch.
    let pi_ms = regex::Regex::new(r#""timestamp":[0-9]{13}\b"#).unwrap();
    let new = pi_ms
        .replace_all(&new, r#""timestamp":"[MS]""#)
        .into_owned();
    let id = regex::Regex::new(
        r#""([0-9a-f]{8}(?:-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})?)(:[0-9]+/[0-9]+)?""#,
    )
    .unwrap();
    let mut seen: Vec<String> = Vec::new();
    id.replace_all(&new, |c: &regex::Captures| {
        let v = &c[1];
        if old.contains(v) {
            return c[0].to_string();
        }
        let n = match seen.iter().position(|s| s == v) {
            Some(n) => n,
            None => {
                seen.push(v.to_string());
                seen.len() - 1
            }
        };
        format!("\"[ID {}]{}\"", n + 1, c.get(2).map_or("", |m| m.as_str()))
    })
    .into_owned()
}

/// A coverage's `digest` hashes the bytes of the lines it names; when those include a line this
/// run appended (a rollup over chunk summaries, a span over a stub), the bytes carry the run's
/// time and the digest differs run to run. Only such a digest is filtered, told by its `lines`
/// reaching past the original file's last line; every digest over the original lines stays.
fn new_line_digests(text: &str, original: &[u8]) -> String {
    let last = original.iter().filter(|&&b| b == b'\n').count() as u64;
    let cov = regex::Regex::new(
        r#""lines":\[((?:\[[0-9]+,[0-9]+\],?)+)\]((?:,"[A-Za-z]+":(?:"[^"]*"|[0-9]+|null))*),"digest":"[0-9a-f]{32}""#,
    )
    .unwrap();
    let num = regex::Regex::new("[0-9]+").unwrap();
    cov.replace_all(text, |c: &regex::Captures| {
        let past = num
            .find_iter(&c[1])
            .any(|n| n.as_str().parse::<u64>().unwrap() > last);
        if past {
            format!(
                r#""lines":[{}]{},"digest":"[DIGEST OVER NEW LINES]""#,
                &c[1], &c[2]
            )
        } else {
            c[0].to_string()
        }
    })
    .into_owned()
}

/// A summary's label names the file it was written to (`… run: mf expand /tmp/.tmpXYZ/f.jsonl
/// ID.]`), a temp dir that differs run to run, and so does the fingerprint of its content: the
/// path becomes `[FILE]` and each fingerprint `[FP]` (the content itself stays compared).
fn label_paths(text: &str) -> String {
    let path = regex::Regex::new(r"run: mf expand \S+ ").unwrap();
    let text = path.replace_all(text, "run: mf expand [FILE] ");
    let fp = regex::Regex::new(r#""fingerprint":"[^"]*""#).unwrap();
    fp.replace_all(&text, r#""fingerprint":"[FP]""#)
        .into_owned()
}

fn snapshot_appended(snap: &str, original: &[u8], now: &[u8]) {
    let text = label_paths(&new_line_digests(&appended_text(original, now), original));
    snapshot_settings().bind(|| insta::assert_snapshot!(snap, text));
}

/// The record of one fixture: before, the fold, what it wrote, after.
fn records(name: &str, snap: &str) {
    let env = TestEnv::new();
    let f = env.copy_fixture(name);
    let original = read(&f);
    mf_snapshot!(
        format!("record_{snap}_explain_before"),
        env,
        ["explain", name, "--json"]
    );
    let out = mf_snapshot!(
        format!("record_{snap}_compact"),
        env,
        ["compact", name, "--model", "extractive", "--json"]
    );
    assert_eq!(out.code, 0, "{:?}", out.0);
    snapshot_appended(&format!("record_{snap}_appended"), &original, &read(&f));
    let args = ["explain", name, "--json"];
    let out = env.mf(&args);
    let text = new_line_digests(&snapshot_text(&env, &args, &out), &original);
    snapshot_settings()
        .bind(|| insta::assert_snapshot!(format!("record_{snap}_explain_after"), text));
    mf_snapshot!(
        format!("record_{snap}_verify_after"),
        env,
        ["verify", name, "--json"]
    );
}

macro_rules! record_tests {
    ($($test:ident => $i:expr),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                let (name, snap) = FIXTURES[$i];
                records(name, snap);
            }
        )*
    };
}

record_tests! {
    record_claude_2_1_332_compacted_twice_in_one_turn => 0,
    record_claude_2_1_332_ids => 1,
    record_claude_2_1_332_multiturn => 2,
    record_claude_compacted => 3,
    record_claude_session => 4,
    record_claude_subagent_sidechain => 5,
    record_codex_0_171_exec_tools => 6,
    record_codex_0_171_0_ids => 7,
    record_codex_0_171_0_multiturn => 8,
    record_codex_compacted => 9,
    record_codex_rollout => 10,
    record_copilot_1_0_102_native_compaction => 11,
    record_copilot_1_0_102_subagent => 12,
    record_copilot_1_0_102_tools => 13,
    record_gemini_0_61_0_compressed_mid_turn => 14,
    record_gemini_0_61_0_native_compression => 15,
    record_gemini_0_61_0_tools => 16,
    record_incident_northwind => 17,
    record_openai_derived => 18,
    record_pi_0_73_session_tools => 19,
    record_pi_0_73_1_ids => 20,
    record_pi_0_73_1_long_run => 21,
    record_pi_0_73_1_multiturn => 22,
    record_pi_1_6_native_compaction => 23,
    record_pi_1_6_session_tools => 24,
    record_pi_1_6_0_ids => 25,
    record_pi_1_6_0_mf_continued => 26,
    record_pi_1_6_0_multiturn => 27,
    record_pi_session_v1 => 28,
    record_pi_session_v3 => 29,
    record_qwen_0_24_4_compressed => 30,
    record_qwen_0_24_4_tools => 31,
}

#[test]
fn every_fixture_has_record_snapshots() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".jsonl"))
        .collect();
    on_disk.sort();
    let listed: Vec<String> = FIXTURES.iter().map(|(n, _)| n.to_string()).collect();
    assert_eq!(
        listed, on_disk,
        "a fixture without record snapshots: add it to FIXTURES and to record_tests!"
    );
}

/// The incident fixture under one set of compact flags: the record, the appended lines, and the
/// record of explain and verify after it.
fn strategy(snap: &str, flags: &[&str]) {
    let env = TestEnv::new();
    let name = "incident-northwind.jsonl";
    let f = env.copy_fixture(name);
    let original = read(&f);
    let mut args = vec!["compact", name, "--model", "extractive", "--json"];
    args.extend_from_slice(flags);
    let out = env.mf(&args);
    let text = snapshot_text(&env, &args, &out);
    snapshot_settings().bind(|| insta::assert_snapshot!(format!("record_{snap}_compact"), text));
    snapshot_appended(&format!("record_{snap}_appended"), &original, &read(&f));
    let args = ["explain", name, "--json"];
    let out = env.mf(&args);
    let text = new_line_digests(&snapshot_text(&env, &args, &out), &original);
    snapshot_settings()
        .bind(|| insta::assert_snapshot!(format!("record_{snap}_explain_after"), text));
    mf_snapshot!(
        format!("record_{snap}_verify_after"),
        env,
        ["verify", name, "--json"]
    );
}

#[test]
fn record_strategy_mask() {
    strategy("mask", &["--strategy", "mask", "--keep-tool-results", "1"]);
}

#[test]
fn record_strategy_mask_summary() {
    strategy("mask_summary", &["--strategy", "mask,summary"]);
}

#[test]
fn record_strategy_cited() {
    strategy("cited", &["--strategy", "cited"]);
}

#[test]
fn record_chunks_and_rollup() {
    strategy("rollup", &["--max-span-tokens", "1200", "--rollup"]);
}

#[test]
fn record_declined() {
    strategy("declined", &["--min-retention", "0.95"]);
}

#[test]
fn record_dry_run() {
    strategy("dry_run", &["--dry-run"]);
}

#[test]
fn record_protect_user_and_target() {
    strategy(
        "protect_target",
        &["--protect", "user", "--target-tokens", "1200"],
    );
}
