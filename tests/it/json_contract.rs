//! The `--json` decision record, parsed by a strict mirror of the format documented in docs/record.md
//! and `decision.rs`: an added, removed or renamed key fails here.

#![allow(dead_code)]

use serde::Deserialize;

use crate::util::*;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Decision {
    file: String,
    #[serde(default)]
    format: Option<String>,
    action: String,
    reason: String,
    model: Option<String>,
    span: Option<Span>,
    verbatim: Option<Verbatim>,
    summaries: Vec<Summary>,
    usage: Option<Usage>,
    before: Size,
    after: Size,
    cost: Option<Cost>,
    #[serde(default)]
    redacted: std::collections::BTreeMap<String, usize>,
    #[serde(default)]
    scrubbed: std::collections::BTreeMap<String, usize>,
    calls: usize,
    written: bool,
    lines_appended: usize,
    output: Option<String>,
    #[serde(default)]
    notes: Vec<String>,
    #[serde(default)]
    error: Option<ErrorRec>,
    #[serde(default)]
    failure: Option<FailureRec>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FailureRec {
    kind: String,
    message: String,
    exit_code: u8,
    degraded: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Span {
    from_turn: u64,
    to_turn: u64,
    entry_count: usize,
    original_count: usize,
    lines: Vec<[u32; 2]>,
    first_id: String,
    last_id: String,
    digest: String,
    chars: usize,
    tokens: usize,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Verbatim {
    entry_count: usize,
    preamble_count: usize,
    protected_count: usize,
    from_turn: Option<u64>,
    to_turn: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Summary {
    id: String,
    from_turn: u64,
    to_turn: u64,
    entry_count: usize,
    chars: usize,
    tokens: usize,
    #[serde(default)]
    audit: Option<serde_json::Value>,
    outcome: String,
    /// `--strategy cited` only.
    #[serde(default)]
    candidate: Option<String>,
    #[serde(default)]
    round: Option<usize>,
    #[serde(default)]
    covered_ids: Vec<String>,
    #[serde(default)]
    rejection: Option<Rejection>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rejection {
    reason: String,
    detail: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ErrorRec {
    message: String,
    exit_code: u8,
    #[serde(default)]
    hints: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Usage {
    input_tokens: u64,
    output_tokens: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Cost {
    usd: f64,
    estimated: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Size {
    chars: usize,
    tokens: usize,
}

#[test]
fn decision_records_match_the_documented_shape() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    for (args, action) in [
        (vec!["--dry-run"], "planned"),
        (vec![], "folded"),
        (vec![], "skipped"),
    ] {
        let mut argv = vec![
            "compact",
            "incident-northwind.jsonl",
            "--model",
            "extractive",
            "--json",
        ];
        argv.extend(args);
        let out = env.mf(&argv);
        assert_eq!(out.code, 0, "{out:?}");
        let d: Decision = serde_json::from_str(out.stdout.trim())
            .unwrap_or_else(|e| panic!("{e}: {}", out.stdout));
        assert_eq!(d.action, action);
        assert_eq!(d.verbatim.as_ref().unwrap().preamble_count, 1);
        assert_eq!(d.format.as_deref(), Some("chat"));
        assert_eq!(d.before.tokens, d.before.chars.div_ceil(4));
        if action != "skipped" {
            let c = d.cost.as_ref().expect("a cost for the built-in summarizer");
            assert_eq!((c.usd, c.estimated), (0.0, false));
        }
        if action == "folded" {
            let s = d.span.unwrap();
            assert_eq!(s.lines, vec![[2, 50]]);
            assert_eq!((s.first_id.as_str(), s.last_id.as_str()), ("m2", "m50"));
            assert_eq!(s.digest.len(), 32);
            assert_eq!(d.summaries.len(), 1);
            assert_eq!(d.summaries[0].outcome, "written");
            assert_eq!(d.calls, 1);
            assert!(d.after.chars < d.before.chars);
        }
    }
}

#[test]
fn cited_records_match_the_documented_shape() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    let out = env.mf(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
        "--strategy",
        "cited",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let d: Decision =
        serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {}", out.stdout));
    assert_eq!(d.action, "folded");
    assert!(
        d.verbatim.unwrap().protected_count > 0,
        "--protect user by default"
    );
    for s in &d.summaries {
        assert_eq!(
            s.candidate.as_deref().map(|c| c.starts_with('#')),
            Some(true)
        );
        assert_eq!(s.round, Some(1));
        assert_eq!(s.covered_ids.len(), s.entry_count);
        assert!(s.rejection.is_none());
    }
}

#[test]
fn a_failed_file_has_an_error_record() {
    let env = TestEnv::new();
    env.write(
        "bad.jsonl",
        "{\"role\":\"user\",\"content\":\"hi\"}\nnot json\n",
    );
    let out = env.mf(&["compact", "bad.jsonl", "--model", "extractive", "--json"]);
    assert_eq!(out.code, 1, "{out:?}");
    let d: Decision =
        serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {}", out.stdout));
    assert_eq!(d.action, "error");
    let e = d.error.unwrap();
    assert_eq!(e.exit_code, 1);
    assert!(e.message.starts_with("bad.jsonl:2:"), "{}", e.message);
    assert!(!e.hints.is_empty());
    // The same failure in the one shape every failed file has.
    let f = d.failure.expect("a failed file has a failure");
    assert_eq!(
        (f.kind.as_str(), f.exit_code, f.degraded),
        ("bad-input", 1, false)
    );
    assert_eq!(f.message, e.message);
}
