//! The shared corpus of real transcripts (`../shared/corpus`): every file is either read or
//! refused by name — never a panic, never a write.

use std::path::Path;

use crate::util::*;

#[test]
fn every_corpus_file_is_read_or_refused_by_name() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let files: Vec<_> = std::fs::read_dir(&corpus)
        .unwrap_or_else(|e| panic!("the shared corpus is expected at {}: {e}", corpus.display()))
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).into_iter().flatten())
        .map(|f| f.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert!(files.len() >= 20, "{} files", files.len());
    let env = TestEnv::new();
    for f in files {
        let name = f.file_name().unwrap().to_str().unwrap().to_string();
        std::fs::copy(&f, env.path(&name)).unwrap();
        let before = read(&env.path(&name));
        let out = env.mf(&["compact", &name, "--model", "extractive", "--json"]);
        match out.code {
            0 => assert!(
                name.starts_with("DERIVED"),
                "{name} was read as chat: {out:?}"
            ),
            1 => {
                assert!(
                    out.stderr.contains(&format!("{name}:1: this looks like")),
                    "{name}: {out:?}"
                );
                assert_eq!(read(&env.path(&name)), before, "{name} was written");
            }
            _ => panic!("{name}: {out:?}"),
        }
    }
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
