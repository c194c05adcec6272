//! A live writer: a thread appends chat lines the way agents do — each line in two `write()`
//! calls, 40 bytes and then the rest about 2 ms later — while `mf compact` runs in a loop on the
//! same file. Afterwards every appended line is intact and either in recall or covered by a
//! valid summary (the independent model decides), every mf run either folded, skipped or
//! refused with a reason, and `mf verify` is clean (notes allowed).
//!
//! CI appends a few hundred lines; by hand: `MF_TRUST_LINES=1000 cargo test --test it live_writer
//! -- --nocapture`.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::trust::*;
use crate::util::*;

/// The writer's line `i`: a user or assistant message, always longer than 40 bytes.
fn writer_line(i: usize) -> String {
    let role = if i.is_multiple_of(2) {
        "user"
    } else {
        "assistant"
    };
    line(
        &format!("w{i}"),
        role,
        &format!(
            "live line {i}: {} order O-{i:05} is {} and costs ${}.{:02}",
            if role == "user" { "what about" } else { "the" },
            ["shipped", "pending", "lost", "returned"][i % 4],
            i * 3 % 500,
            i % 100
        ),
    )
}

#[test]
fn live_writer_never_loses_or_glues_a_line() {
    let lines = figure("MF_TRUST_LINES", 300);
    let env = TestEnv::without_audit();
    let f = env.write("live.jsonl", &conversation(12));
    let done = Arc::new(AtomicBool::new(false));
    let writer = {
        let (f, done) = (f.clone(), done.clone());
        std::thread::spawn(move || {
            let mut rng = fastrand::Rng::with_seed(7);
            let mut file = std::fs::OpenOptions::new().append(true).open(&f).unwrap();
            for i in 0..lines {
                let l = writer_line(i) + "\n";
                file.write_all(&l.as_bytes()[..40]).unwrap();
                std::thread::sleep(Duration::from_millis(2));
                file.write_all(&l.as_bytes()[40..]).unwrap();
                std::thread::sleep(Duration::from_micros(rng.u64(0..6000)));
            }
            done.store(true, Ordering::SeqCst);
        })
    };
    let started = Instant::now();
    let (mut runs, mut folded, mut skipped, mut refused) = (0, 0, 0, 0);
    let mut reasons: std::collections::BTreeMap<String, usize> = Default::default();
    loop {
        let last = done.load(Ordering::SeqCst);
        let out = env.mf(&[
            "compact",
            "live.jsonl",
            "--model",
            "extractive",
            "--trigger",
            "12",
            "--recent",
            "4",
            "--json",
        ]);
        runs += 1;
        match out.code {
            0 => {
                let action = json_lines(&out.stdout)[0]["action"]
                    .as_str()
                    .unwrap()
                    .to_string();
                match action.as_str() {
                    "folded" => folded += 1,
                    "skipped" | "declined" => skipped += 1,
                    other => panic!("run {runs}: {other}: {out:?}"),
                }
            }
            1 => {
                // Refused, with a reason that names the file and says nothing was written.
                let rec = &json_lines(&out.stdout)[0];
                let msg = rec["error"]["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                assert!(msg.contains("live.jsonl"), "run {runs}: {out:?}");
                let why = if msg.contains("last line is incomplete") {
                    "incomplete last line at read"
                } else if msg.contains("in the middle of a line") {
                    "mid-line at write"
                } else if msg.contains("changed while mf was working") {
                    "changed while working"
                } else {
                    panic!("run {runs}: an unexpected refusal: {out:?}")
                };
                assert!(
                    msg.contains("Nothing was") || msg.contains("nothing was"),
                    "run {runs}: {out:?}"
                );
                *reasons.entry(why.to_string()).or_default() += 1;
                refused += 1;
            }
            _ => panic!("run {runs}: {out:?}"),
        }
        if last {
            break;
        }
    }
    writer.join().unwrap();
    eprintln!(
        "live_writer: {lines} lines appended in {:?}; {runs} mf runs: {folded} folded, {skipped} skipped, {refused} refused {reasons:?}",
        started.elapsed()
    );
    assert!(folded > 0, "mf folded at least once while the writer wrote");

    // Every appended line is whole (in place, or rejoined around an mf line) and in recall or
    // covered by a valid summary.
    let m = assert_recall_is_models(&env, &f);
    let text = read(&f);
    let mut interleaved = 0;
    let mut hidden = 0;
    for i in 0..lines {
        let l = writer_line(i);
        let needle = format!("\n{l}\n");
        if !text.windows(needle.len()).any(|w| w == needle.as_bytes()) {
            interleaved += 1;
        }
        let k = m
            .lines
            .iter()
            .position(|x| x.raw == l.as_bytes())
            .unwrap_or_else(|| panic!("line {i} is not intact: {l}"));
        if m.hidden_by[k].is_some() {
            hidden += 1;
        }
    }
    let shown = recall(&env, "live.jsonl");
    for i in 0..lines {
        let content =
            serde_json::from_str::<serde_json::Value>(&writer_line(i)).unwrap()["content"].clone();
        let k = m
            .lines
            .iter()
            .position(|x| x.raw == writer_line(i).as_bytes())
            .unwrap();
        assert_eq!(
            m.hidden_by[k].is_none(),
            shown.iter().any(|s| s["content"] == content),
            "line {i}: in recall exactly when no valid summary covers it"
        );
    }
    eprintln!(
        "live_writer: {hidden} of {lines} lines covered by standing summaries, {interleaved} interleaved with an mf line and rejoined, {} standing summaries",
        m.top_level().len()
    );
    let (code, report) = verify(&env, &f);
    assert_eq!(code, 0, "{report:#}");
}
