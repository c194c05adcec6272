//! Checkpoints: a rerun after the file grew reads only the new bytes, and sees exactly what a
//! full read sees; a checkpoint whose file changed under it is not used.

use std::io::Write as _;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::corpus::corpus_files;
use crate::util::*;

/// An environment whose checkpoints go to `cache` and are kept for files of any size.
fn cached(env: &TestEnv) -> Vec<(&'static str, String)> {
    vec![
        ("MF_CACHE_DIR", env.path("cache").display().to_string()),
        ("MF_CACHE_MIN_BYTES", "0".to_string()),
    ]
}

fn run(env: &TestEnv, args: &[&str], vars: &[(&'static str, String)]) -> Output {
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.mf_env(args, &vars)
}

/// mf's checkpoint directory under the cache directory `cache`.
fn checkpoint_dir(env: &TestEnv) -> PathBuf {
    env.path("cache").join("mf").join("checkpoints")
}

fn checkpoints(env: &TestEnv) -> Vec<PathBuf> {
    std::fs::read_dir(checkpoint_dir(env))
        .map(|d| {
            d.map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|e| e == "ckpt"))
                .collect()
        })
        .unwrap_or_default()
}

/// `explain --json` and `recall` of `name`, through the checkpoint, and with `--no-cache`.
fn both_ways(env: &TestEnv, name: &str) -> (Output, Output, Output, Output) {
    let vars = cached(env);
    let explain = run(env, &["-v", "explain", name, "--json"], &vars).ok();
    let recall = run(env, &["recall", name], &vars).ok();
    let full_explain = run(env, &["--no-cache", "explain", name, "--json"], &vars).ok();
    let full_recall = run(env, &["--no-cache", "recall", name], &vars).ok();
    (explain, recall, full_explain, full_recall)
}

fn split_lines(bytes: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let lines: Vec<usize> = bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    let cut = lines.get(lines.len() / 2).copied().unwrap_or(0);
    (bytes[..cut].to_vec(), bytes[cut..].to_vec())
}

/// Half the file, read (the checkpoint is saved); the rest appended, read again: the second read
/// goes on from the checkpoint and sees what a full read sees.
fn rerun_matches_full_read(env: &TestEnv, source: &Path) {
    let name = source.file_name().unwrap().to_str().unwrap().to_string();
    let bytes = read(source);
    let (head, rest) = split_lines(&bytes);
    if head.is_empty() || rest.is_empty() {
        return;
    }
    let path = env.path(&name);
    std::fs::write(&path, &head).unwrap();
    let first = run(env, &["explain", &name, "--json"], &cached(env));
    if first.code != 0 {
        // A file mf refuses is refused the same way with or without a checkpoint.
        let again = run(
            env,
            &["--no-cache", "explain", &name, "--json"],
            &cached(env),
        );
        assert_eq!(first.code, again.code, "{name}");
        return;
    }
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(&rest)
        .unwrap();
    let (explain, recall, full_explain, full_recall) = both_ways(env, &name);
    assert!(
        explain.stderr.contains("from a checkpoint"),
        "{name}: the rerun read the whole file\n{explain:?}"
    );
    assert_eq!(explain.code, full_explain.code, "{name}");
    assert_eq!(
        explain.stdout, full_explain.stdout,
        "{name}: explain differs"
    );
    assert_eq!(recall.code, full_recall.code, "{name}");
    assert_eq!(recall.stdout, full_recall.stdout, "{name}: recall differs");
    assert_eq!(
        recall.stderr, full_recall.stderr,
        "{name}: recall's notes differ"
    );
}

#[test]
fn a_rerun_goes_on_from_the_checkpoint_and_matches_a_full_read_on_the_fixtures() {
    let env = TestEnv::new();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut n = 0;
    for f in std::fs::read_dir(dir).unwrap() {
        let f = f.unwrap().path();
        if f.extension().is_some_and(|e| e == "jsonl") {
            rerun_matches_full_read(&env, &f);
            n += 1;
        }
    }
    assert!(n >= 2);
    assert!(!checkpoints(&env).is_empty());
}

#[test]
#[ignore = "needs MF_CORPUS (the shared corpus; .ci/run sets it)"]
fn a_rerun_goes_on_from_the_checkpoint_and_matches_a_full_read_on_the_corpus() {
    let files = corpus_files();
    let env = TestEnv::new();
    for f in files {
        rerun_matches_full_read(&env, &f);
    }
}

#[test]
fn a_generated_transcript_grown_in_many_steps_reads_like_the_whole_file() {
    let env = TestEnv::new();
    let mut bytes = Vec::new();
    testgen::bulk(
        &mut bytes,
        testgen::BulkOptions {
            min_lines: 2_000,
            min_bytes: 0,
            seed: 7,
        },
    )
    .unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let path = env.path("grown.jsonl");
    std::fs::write(&path, "").unwrap();
    let vars = cached(&env);
    for chunk in lines.chunks(lines.len() / 7 + 1) {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(chunk.concat().as_bytes()).unwrap();
        drop(f);
        let cached_run = run(&env, &["explain", "grown.jsonl", "--json"], &vars).ok();
        let full = run(
            &env,
            &["--no-cache", "explain", "grown.jsonl", "--json"],
            &vars,
        )
        .ok();
        assert_eq!(cached_run.stdout, full.stdout);
    }
    // And a compaction through the checkpoint writes a summary the full read honours.
    let out = run(
        &env,
        &[
            "compact",
            "grown.jsonl",
            "--model",
            "extractive",
            "--min-retention",
            "0",
            "--json",
        ],
        &vars,
    );
    assert_eq!(out.code, 0, "{out:?}");
    let (explain, recall, full_explain, full_recall) = both_ways(&env, "grown.jsonl");
    assert!(explain.stderr.contains("from a checkpoint"), "{explain:?}");
    assert_eq!(explain.stdout, full_explain.stdout);
    assert_eq!(recall.stdout, full_recall.stdout);
    assert!(recall.stdout.contains("[summary of earlier turns"));
    let verify = run(&env, &["verify", "grown.jsonl"], &vars);
    assert_eq!(verify.code, 0, "{verify:?}");
}

/// A checkpointed file, grown by one line; returns its path.
fn checkpointed(env: &TestEnv) -> PathBuf {
    let path = env.copy_fixture("incident-northwind.jsonl");
    let out = run(env, &["explain", "incident-northwind.jsonl"], &cached(env));
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(checkpoints(env).len(), 1);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(b"{\"role\":\"user\",\"content\":\"and one more thing\"}\n")
        .unwrap();
    path
}

fn reads_in_full(env: &TestEnv) {
    let (explain, recall, full_explain, full_recall) = both_ways(env, "incident-northwind.jsonl");
    assert!(
        explain.stderr.contains("read in full"),
        "a changed file was read from its checkpoint\n{explain:?}"
    );
    assert_eq!(explain.stdout, full_explain.stdout);
    assert_eq!(recall.stdout, full_recall.stdout);
}

#[test]
fn the_checkpoint_is_used_when_nothing_changed_but_the_end() {
    let env = TestEnv::new();
    checkpointed(&env);
    let out = run(
        &env,
        &["-v", "explain", "incident-northwind.jsonl"],
        &cached(&env),
    );
    assert!(out.stderr.contains("from a checkpoint"), "{out:?}");
}

#[test]
fn a_line_edited_in_place_is_noticed() {
    let env = TestEnv::new();
    let path = checkpointed(&env);
    // Same length, same inode: one digit of a figure in the middle of the file changes.
    let bytes = read(&path);
    let at = bytes
        .windows(4)
        .position(|w| w == b"2026")
        .expect("a year in the fixture")
        + 3;
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.write_all_at(b"7", at as u64).unwrap();
    reads_in_full(&env);
}

#[test]
fn a_replaced_file_is_noticed() {
    let env = TestEnv::new();
    let path = checkpointed(&env);
    let bytes = read(&path);
    std::fs::remove_file(&path).unwrap();
    std::fs::write(&path, &bytes).unwrap();
    reads_in_full(&env);
}

#[test]
fn a_truncated_file_is_noticed() {
    let env = TestEnv::new();
    let path = checkpointed(&env);
    let bytes = read(&path);
    let (head, _) = split_lines(&bytes);
    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.set_len(head.len() as u64).unwrap();
    reads_in_full(&env);
}

#[test]
fn a_damaged_checkpoint_is_not_used() {
    let env = TestEnv::new();
    checkpointed(&env);
    for ckpt in checkpoints(&env) {
        let mut bytes = read(&ckpt);
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x55;
        std::fs::write(&ckpt, &bytes).unwrap();
    }
    reads_in_full(&env);
}

#[test]
fn no_cache_and_mf_no_cache_keep_no_checkpoint() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    let vars = cached(&env);
    let out = run(
        &env,
        &["--no-cache", "explain", "incident-northwind.jsonl"],
        &vars,
    );
    assert_eq!(out.code, 0, "{out:?}");
    let mut vars = vars;
    vars.push(("MF_NO_CACHE", "1".to_string()));
    let out = run(&env, &["recall", "incident-northwind.jsonl"], &vars);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(checkpoints(&env).is_empty());
}

#[test]
fn small_files_are_not_checkpointed_by_default() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    let out = run(
        &env,
        &["explain", "incident-northwind.jsonl"],
        &[("MF_CACHE_DIR", env.path("cache").display().to_string())],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(checkpoints(&env).is_empty());
}

#[test]
fn a_checkpoint_someone_else_could_have_written_is_not_used() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    env.write("c.jsonl", &conversation(40));
    let vars = cached(&env);
    let used = |env: &TestEnv| {
        let out = run(env, &["-v", "explain", "c.jsonl"], &vars);
        assert_eq!(out.code, 0, "{out:?}");
        out.stderr.contains("from a checkpoint")
    };
    assert!(!used(&env), "the first read saves the checkpoint");
    assert!(used(&env), "the second read uses it");
    let set = |p: &Path, mode: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    let ckpt = checkpoints(&env).remove(0);
    // A checkpoint file others may write: not used.
    set(&ckpt, 0o666);
    assert!(!used(&env), "a world-writable checkpoint was used");
    set(&ckpt, 0o600);
    assert!(used(&env));
    // A checkpoint directory others may write: not used.
    set(&checkpoint_dir(&env), 0o777);
    assert!(
        !used(&env),
        "a checkpoint in a world-writable directory was used"
    );
    set(&checkpoint_dir(&env), 0o700);
    // A symlink in the checkpoint's place: not followed.
    let moved = env.path("elsewhere.ckpt");
    std::fs::rename(&ckpt, &moved).unwrap();
    std::os::unix::fs::symlink(&moved, &ckpt).unwrap();
    assert!(!used(&env), "a symlinked checkpoint was followed");
    // A shared directory named as the cache (a /tmp of its own) keeps its mode.
    let shared = env.path("shared");
    std::fs::create_dir(&shared).unwrap();
    set(&shared, 0o1777);
    let vars = [
        ("MF_CACHE_DIR", shared.display().to_string()),
        ("MF_CACHE_MIN_BYTES", "0".to_string()),
    ];
    // mf keeps its checkpoints in a private directory of its own there, so they are used.
    let out = run(&env, &["-v", "explain", "c.jsonl"], &vars);
    assert!(!out.stderr.contains("from a checkpoint"), "{out:?}");
    let out = run(&env, &["-v", "explain", "c.jsonl"], &vars);
    assert!(out.stderr.contains("from a checkpoint"), "{out:?}");
    let own = shared.join("mf").join("checkpoints");
    for d in [shared.join("mf"), own.clone()] {
        let mode = std::fs::metadata(&d).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o700, "{}", d.display());
    }
    let mode = std::fs::metadata(&shared).unwrap().permissions().mode() & 0o7777;
    assert_eq!(
        mode, 0o1777,
        "mf changed the mode of a directory it did not make"
    );
    // A checkpoint directory someone else made writable for all is not written to.
    set(&own, 0o777);
    for f in std::fs::read_dir(&own).unwrap() {
        std::fs::remove_file(f.unwrap().path()).unwrap();
    }
    for _ in 0..2 {
        let out = run(&env, &["-v", "explain", "c.jsonl"], &vars);
        assert!(!out.stderr.contains("from a checkpoint"), "{out:?}");
    }
    assert_eq!(std::fs::read_dir(&own).unwrap().count(), 0);
}
