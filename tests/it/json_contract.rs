//! The `--json` decision record, parsed by a strict mirror of the format documented in README.md
//! and `decision.rs`: an added, removed or renamed key fails here.

#![allow(dead_code)]

use serde::Deserialize;

use crate::util::*;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Decision {
    file: String,
    action: String,
    reason: String,
    model: Option<String>,
    span: Option<Span>,
    verbatim: Verbatim,
    summary: Option<Summary>,
    usage: Option<Usage>,
    before: Size,
    after: Size,
    cost: Option<Cost>,
    written: bool,
    lines_appended: usize,
    output: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Span {
    from_turn: u64,
    to_turn: u64,
    entry_count: usize,
    original_count: usize,
    covered_ids: Vec<String>,
    chars: usize,
    tokens: usize,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Verbatim {
    entry_count: usize,
    preamble_count: usize,
    from_turn: Option<u64>,
    to_turn: Option<u64>,
    ids: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Summary {
    id: String,
    chars: usize,
    tokens: usize,
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
        assert_eq!(d.verbatim.preamble_count, 1);
        assert_eq!(d.before.tokens, d.before.chars.div_ceil(4));
        if action != "skipped" {
            let c = d.cost.as_ref().expect("a cost for the built-in summarizer");
            assert_eq!((c.usd, c.estimated), (0.0, false));
        }
        if action == "folded" {
            let s = d.span.unwrap();
            assert_eq!(s.entry_count, s.covered_ids.len());
            assert!(d.summary.is_some());
            assert!(d.after.chars < d.before.chars);
        }
    }
}
