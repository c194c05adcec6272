//! `mf compact … --output -`: standard output carries the compacted transcript and nothing else;
//! the decision record goes to stderr, or (`--record PATH`) as JSON lines to a file or a
//! descriptor the user names.

use crate::util::*;

fn sh(env: &TestEnv, script: &str) -> Output {
    let script = script.replace("MF", &format!("'{}'", mf_bin()));
    let out = env.sh(&script);
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

#[test]
fn compact_to_stdout_piped_into_verify_is_clean() {
    let env = TestEnv::new();
    let f = env.copy_fixture("incident-northwind.jsonl");
    let original = read(&f);
    for json in ["", " --json"] {
        let out = sh(
            &env,
            &format!(
                "MF compact - -o - --model extractive --min-retention 0{json} < incident-northwind.jsonl > out.jsonl 2> err.txt && MF verify - < out.jsonl"
            ),
        );
        assert_eq!(out.code, 0, "{json}: {out:?}");
        assert!(out.stdout.contains("clean"), "{json}: {out:?}");
        let streamed = read(&env.path("out.jsonl"));
        assert!(
            streamed.starts_with(&original),
            "{json}: the original bytes first"
        );
        assert!(
            streamed.len() > original.len(),
            "{json}: a summary appended"
        );
        // Every line of stdout is a line of the transcript (no record among them).
        for l in String::from_utf8(streamed).unwrap().lines() {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert!(v.get("action").is_none(), "{json}: a record on stdout: {l}");
        }
        // The record went to stderr.
        let err = String::from_utf8(read(&env.path("err.txt"))).unwrap();
        if json.is_empty() {
            assert!(err.contains("folded"), "{err}");
        } else {
            let rec = err
                .lines()
                .find_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .unwrap_or_else(|| panic!("no JSON record on stderr: {err}"));
            assert_eq!(rec["action"], "folded");
        }
    }
    assert_eq!(read(&f), original, "the input is untouched");
}

#[test]
fn the_record_goes_to_the_file_or_descriptor_named() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    // A path.
    let out = sh(
        &env,
        "MF compact - -o - --model extractive --min-retention 0 --record rec.jsonl < incident-northwind.jsonl | MF verify -",
    );
    assert_eq!(out.code, 0, "{out:?}");
    let rec = file_lines(&env.path("rec.jsonl"));
    assert_eq!(rec.len(), 1);
    assert_eq!(rec[0]["action"], "folded");
    // A descriptor the shell opened.
    let out = sh(
        &env,
        "MF compact - -o - --model extractive --min-retention 0 --record /dev/fd/3 3> fd.jsonl < incident-northwind.jsonl > out.jsonl && MF verify - < out.jsonl",
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(file_lines(&env.path("fd.jsonl"))[0]["action"], "folded");
    // In place, `--record` takes the records off stdout.
    let out = env.mf(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
        "--min-retention",
        "0",
        "--record",
        "inplace.jsonl",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, "");
    assert_eq!(
        file_lines(&env.path("inplace.jsonl"))[0]["action"],
        "folded"
    );
    // Both on stdout cannot be.
    let out = sh(
        &env,
        "MF compact - -o - --model extractive --record - < incident-northwind.jsonl",
    );
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("--record"), "{out:?}");
    assert_eq!(out.stdout, "");
}
