//! A short seeded run of the fuzz harness (fuzz/src/lib.rs: the line reader on arbitrary
//! bytes, the ledger on built and forged files, the planner and what mf would write) so the
//! fuzz targets' invariants hold in every `cargo test`. The long runs are cargo-fuzz's
//! (fuzz/README.md); `MF_TRUST_FUZZ_ITERS` lengthens this one (default 200).

#[path = "../../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod harness;

use crate::trust::{figure, seed};
use crate::util::fixture;

#[test]
fn fuzz_harness_holds_on_fixtures_and_seeded_inputs() {
    let iters = figure("MF_TRUST_FUZZ_ITERS", 200);
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
}
