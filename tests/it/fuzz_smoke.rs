//! A short seeded run of the fuzz harness (fuzz/src/lib.rs: the line reader on arbitrary
//! bytes, the ledger on built and forged files, the planner and what mf would write; the
//! retention audit, the extractive summarizer and the citation parser on text full of
//! multi-byte characters) so the fuzz targets' invariants hold in every `cargo test`. The long runs are cargo-fuzz's
//! (fuzz/README.md); the default run tries 40 inputs, CI's long suite (`_long`) 200, and
//! `MF_TRUST_FUZZ_ITERS` sets that count.

#[path = "../../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod harness;

use crate::trust::{figure, seed};
use crate::util::fixture;

/// 40 seeded inputs in the default run; the long suite runs `MF_TRUST_FUZZ_ITERS` (200).
#[test]
fn fuzz_harness_holds_on_fixtures_and_seeded_inputs() {
    fuzz_harness(40);
}

#[test]
#[ignore = "long suite (200 seeded inputs): .ci/run runs the `_long` tests by name"]
fn fuzz_harness_holds_on_fixtures_and_seeded_inputs_long() {
    fuzz_harness(figure("MF_TRUST_FUZZ_ITERS", 200));
}

fn fuzz_harness(iters: usize) {
    let mut rng = fastrand::Rng::with_seed(seed("fuzz_smoke"));
    let fixtures: Vec<Vec<u8>> = ["incident-northwind.jsonl", "openai-derived.jsonl"]
        .iter()
        .map(|f| std::fs::read(fixture(f)).unwrap())
        .collect();
    for f in &fixtures {
        harness::read_target(f);
    }
    // Inputs the fuzzer once crashed on (fuzz/regressions/).
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    for e in std::fs::read_dir(dir).unwrap() {
        let data = std::fs::read(e.unwrap().path()).unwrap();
        harness::read_target(&data);
        harness::ledger_target(&data);
        harness::plan_target(&data);
        harness::audit_target(&data);
        harness::extractive_target(&data);
        harness::cite_target(&data);
    }
    for k in 0..iters {
        // Arbitrary bytes, and a fixture with a few bytes changed, cut or repeated.
        let len = rng.usize(0..400);
        let bytes: Vec<u8> = (0..len).map(|_| rng.u8(..)).collect();
        let mut mutated = fixtures[k % 2].clone();
        for _ in 0..rng.usize(1..4) {
            let p = rng.usize(0..mutated.len());
            match rng.u8(0..4) {
                0 => mutated[p] = rng.u8(..),
                1 => mutated.truncate(p),
                2 => {
                    let q = rng.usize(p..mutated.len().max(p + 1)).min(mutated.len());
                    let piece = mutated[p..q].to_vec();
                    mutated.extend_from_slice(&piece);
                }
                _ => mutated.insert(p, b"\n{}\"[ "[rng.usize(0..6)]),
            }
            if mutated.is_empty() {
                break;
            }
        }
        let outcome = std::panic::catch_unwind(|| {
            harness::read_target(&bytes);
            harness::read_target(&mutated);
            harness::ledger_target(&bytes);
            harness::plan_target(&bytes);
        });
        if outcome.is_err() {
            let path = std::env::temp_dir().join(format!("mf-fuzz-smoke-{k}.bin"));
            std::fs::write(&path, &bytes).unwrap();
            std::fs::write(path.with_extension("mutated"), &mutated).unwrap();
            panic!("iteration {k}: input saved to {}", path.display());
        }
    }
}

/// The multi-byte sequences the text targets are seeded with (fuzz/seeds/multibyte.txt: one a
/// line, `\n` for a line break).
fn multibyte_seeds() -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/multibyte.txt");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.replace("\\n", "\n"))
        .collect()
}

/// The strings of a fixture's lines, as the text targets' pieces (a role character, then text).
fn fixture_pieces(name: &str) -> Vec<String> {
    fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) if s.len() > 3 => out.push(s.clone()),
            serde_json::Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
            serde_json::Value::Object(m) => m.values().for_each(|v| strings(v, out)),
            _ => {}
        }
    }
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    let mut out = Vec::new();
    for l in text.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(l) else {
            continue;
        };
        let role = match v["role"].as_str() {
            Some("user") => '0',
            Some("tool") => '2',
            Some("system") => '3',
            _ => '1',
        };
        let mut s = Vec::new();
        strings(&v, &mut s);
        out.extend(s.into_iter().map(|s| format!("{role}{s}")));
    }
    out
}

/// The audit, extractive and cite targets on the multi-byte seeds, on fixture text, and on
/// random mixes of both with the syntax the extractor and the citation parser look for, cut at
/// random byte offsets (`MF_TRUST_FUZZ_ITERS` inputs of each, default 60).
#[test]
fn text_targets_hold_on_multibyte_seeds_and_fixture_text() {
    let iters = figure("MF_TRUST_FUZZ_ITERS", 60);
    let mut rng = fastrand::Rng::with_seed(seed("fuzz_smoke_text"));
    let seeds = multibyte_seeds();
    assert!(seeds.len() >= 20, "{} seeds", seeds.len());
    let sep = harness::PIECE_SEP.to_string();
    for l in &seeds {
        for role in ["0", "1", "2", "5"] {
            let (l, sep) = (l.as_str(), sep.as_str());
            let text = [role, l, sep, "0", l, sep, "1", l].concat();
            harness::audit_target(text.as_bytes());
            harness::cite_target(format!("m1 {l}\nm2 {l}{sep}=== #1\n{l} [m1, m2]").as_bytes());
        }
        // A budget of 400 characters (two bytes, little-endian), then six pieces.
        let mut input = 400u16.to_le_bytes().to_vec();
        input.extend_from_slice([l.as_str(); 6].join(sep.as_str()).as_bytes());
        harness::extractive_target(&input);
    }
    let mut fixture_text = fixture_pieces("incident-northwind.jsonl");
    fixture_text.extend(fixture_pieces("openai-derived.jsonl"));
    let syntax = [
        "→",
        ":",
        "/",
        ".",
        " ",
        "\n",
        "1031",
        "jdbc:",
        "www.",
        "://",
        "@",
        "#12",
        "$4,200",
        "E0502",
        "[calls Bash({\"command\":\"ls\"})]",
        "=== #1\n",
        "[m1]",
        "[@2, m3]",
        "[#1]",
        "`",
        "\"",
        "actually ",
        " instead of ",
        "not ",
        "İ",
        "ﬁ",
        "\u{301}",
        "\u{200d}",
        "😀",
        "中",
    ];
    for k in 0..iters {
        let mut text = String::new();
        for _ in 0..rng.usize(1..40) {
            match rng.u8(0..4) {
                0 => text.push_str(&seeds[rng.usize(0..seeds.len())]),
                1 => text.push_str(&fixture_text[rng.usize(0..fixture_text.len())]),
                2 => text.push_str(&sep),
                _ => text.push_str(syntax[rng.usize(0..syntax.len())]),
            }
        }
        // Cut at a random byte, as the fuzzer does (the targets read bytes lossily).
        let mut bytes = text.into_bytes();
        bytes.truncate(rng.usize(0..=bytes.len()));
        let outcome = std::panic::catch_unwind(|| {
            harness::audit_target(&bytes);
            harness::extractive_target(&bytes);
            harness::cite_target(&bytes);
        });
        if outcome.is_err() {
            let path = std::env::temp_dir().join(format!("mf-fuzz-smoke-text-{k}.bin"));
            std::fs::write(&path, &bytes).unwrap();
            panic!("iteration {k}: input saved to {}", path.display());
        }
    }
}

/// Replay one input (a crash cargo-fuzz saved, or one this test saved): `MF_FUZZ_REPLAY=PATH
/// cargo test --test it fuzz_replay -- --ignored --nocapture`. The file the input builds is
/// written next to it as PATH.jsonl.
#[test]
#[ignore = "replays one input named by MF_FUZZ_REPLAY (by hand)"]
fn fuzz_replay() {
    let path = std::path::PathBuf::from(std::env::var("MF_FUZZ_REPLAY").expect("MF_FUZZ_REPLAY"));
    let data = std::fs::read(&path).unwrap();
    std::fs::write(path.with_extension("jsonl"), harness::build(&data)).unwrap();
    // The plan target reads its policy from the first 8 bytes and builds from the rest.
    std::fs::write(
        path.with_extension("plan.jsonl"),
        harness::build(&data[data.len().min(8)..]),
    )
    .unwrap();
    harness::read_target(&data);
    harness::ledger_target(&data);
    harness::plan_target(&data);
    harness::audit_target(&data);
    harness::extractive_target(&data);
    harness::cite_target(&data);
}
