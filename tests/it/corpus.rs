//! The shared corpus of real transcripts. Its path comes from `MF_CORPUS` (set by `.ci/run`);
//! without it these tests say they are skipped, so `cargo test` passes on a fresh clone. When
//! `MF_CORPUS` is set and missing, they fail.

use std::path::PathBuf;

use crate::util::*;

/// The corpus files, or `None` (with a note) when `MF_CORPUS` is not set.
pub fn corpus_files() -> Option<Vec<PathBuf>> {
    let Some(dir) = std::env::var_os("MF_CORPUS") else {
        eprintln!("skipped: MF_CORPUS is not set (it names ../shared/corpus; .ci/run sets it)");
        return None;
    };
    let dir = PathBuf::from(dir);
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
    Some(files)
}

#[test]
fn every_corpus_file_is_read_or_refused_by_name() {
    let Some(files) = corpus_files() else { return };
    let env = TestEnv::new();
    for f in files {
        let name = f.file_name().unwrap().to_str().unwrap().to_string();
        std::fs::copy(&f, env.path(&name)).unwrap();
        let before = read(&env.path(&name));
        // `--force`: the copy was just written, so an agent session would look live.
        let out = env.mf(&[
            "compact",
            &name,
            "--model",
            "extractive",
            "--force",
            "--json",
        ]);
        match out.code {
            0 => {}
            1 => {
                assert!(
                    out.stderr.contains(&format!("{name}: this is")),
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
