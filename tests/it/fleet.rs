//! Many files: one run over a mix of good, bad and failing files (`--files-from - -0`, `--json`
//! with an error record per failed file, the exit-code precedence the README documents), and the
//! recipes of docs/fleets.md for running mf over a fleet of files — `xargs -P` on one host, and the
//! shard command of a Kubernetes Indexed Job — run exactly as the page prints them.

use std::collections::HashMap;
use std::path::Path;

use mf::decision::{Decline, Reason};
use serde_json::Value;

use crate::server::{Reply, TestServer, openai_ok};
use crate::util::*;

/// Run a shell script in the test's directory with mf on PATH and only the given variables.
fn sh(env: &TestEnv, script: &str, vars: &[(&str, &str)]) -> Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_mf")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = std::process::Command::new("bash");
    cmd.arg("-c")
        .arg(script)
        .current_dir(env.dir.path())
        .env_clear()
        .env("PATH", path)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("bash runs");
    Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

const MARKER: &str = "OUTAGE-7731";

/// A summarizer that fails (HTTP 500) for any span holding `MARKER`, and answers otherwise.
fn summarizer() -> TestServer {
    TestServer::respond(|r, _| {
        if r.body.contains(MARKER) {
            Reply::json(
                500,
                r#"{"error":{"type":"server_error","message":"the upstream is down"}}"#,
            )
        } else {
            openai_ok(
                "The user planned hotel stays city by city; each was booked with a confirmation code.",
            )
        }
    })
}

/// The good, bad and failing files of the mixed run, by name.
fn mixed_files() -> Vec<(&'static str, String)> {
    vec![
        ("a plain.jsonl", conversation(14)),
        ("b\nnew line.jsonl", conversation(15)),
        ("c.jsonl", conversation(16)),
        ("d.jsonl", conversation(17)),
        (
            "bad.jsonl",
            conversation(14).replacen("\"role\":\"assistant\"", "\"role\":\"assistant\",,", 1),
        ),
        (
            "notes.jsonl",
            "{\"level\":\"info\",\"msg\":\"started\"}\n{\"level\":\"warn\",\"msg\":\"slow\"}\n"
                .into(),
        ),
        (
            "fails.jsonl",
            conversation(14).replace("Question 1:", &format!("Question 1 ({MARKER}):")),
        ),
    ]
}

fn write_all(env: &TestEnv, dir: &str, files: &[(&str, String)]) -> HashMap<String, Vec<u8>> {
    std::fs::create_dir_all(env.path(dir)).unwrap();
    files
        .iter()
        .map(|(name, text)| {
            let p = env.path(&format!("{dir}/{name}"));
            std::fs::write(&p, text).unwrap();
            (format!("{dir}/{name}"), text.as_bytes().to_vec())
        })
        .collect()
}

fn remote(server_url: &str) -> String {
    format!(
        "--model openai-compatible:loopback --base-url {server_url}/v1 --max-span-tokens 50000 \
         --retries 0 --min-retention 0"
    )
}

#[test]
fn many_files_the_good_ones_compact_and_every_failure_is_reported() {
    let server = summarizer();
    let env = TestEnv::new();
    let originals = write_all(&env, "in", &mixed_files());
    let out = sh(
        &env,
        &format!(
            "find in -name '*.jsonl' -print0 | mf compact --files-from - -0 {} --json",
            remote(&server.url())
        ),
        &[],
    );
    // A file error (1) outranks a summarizer failure (3).
    assert_eq!(out.code, 1, "{out:?}");
    let records: HashMap<String, Value> = json_lines(&out.stdout)
        .into_iter()
        .map(|r| (r["file"].as_str().unwrap().to_string(), r))
        .collect();
    assert_eq!(records.len(), 7, "one object per file: {out:?}");
    for name in [
        "in/a plain.jsonl",
        "in/b\nnew line.jsonl",
        "in/c.jsonl",
        "in/d.jsonl",
    ] {
        let r = &records[name];
        assert_eq!(r["action"], "folded", "{name}: {r}");
        let p = env.path(name);
        assert_eq!(&read(&p)[..originals[name].len()], &originals[name][..]);
        assert_eq!(summary_lines(&p).len(), 1, "{name}");
    }
    for (name, says) in [
        ("in/bad.jsonl", "in/bad.jsonl:3:"),
        ("in/notes.jsonl", "not a chat message"),
    ] {
        let r = &records[name];
        assert_eq!(r["action"], "error", "{r}");
        assert_eq!(r["error"]["exitCode"], 1, "{r}");
        let message = r["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{message}");
        assert_eq!(read(&env.path(name)), originals[name], "{name} untouched");
        assert!(out.stderr.contains(&format!("error: {message}")), "{out:?}");
    }
    // The failing summarizer: declined, one warning, the span verbatim, a decline record.
    let r = &records["in/fails.jsonl"];
    assert_eq!(r["action"], "declined", "{r}");
    let failed = r["failures"][0]["message"].as_str().unwrap();
    assert!(failed.contains("500"), "{r}");
    assert_eq!(
        r["reason"],
        Reason::Declined(Decline::SummarizerFailed(failed.to_string())).to_string(),
        "{r}"
    );
    assert!(summary_lines(&env.path("in/fails.jsonl")).is_empty());
    assert_eq!(
        out.stderr
            .lines()
            .filter(|l| l.starts_with("warning:") && l.contains("fails.jsonl"))
            .count(),
        1,
        "{out:?}"
    );
    assert_eq!(server.requests().len(), 5, "one call per foldable file");
}

#[test]
fn exit_codes_follow_the_documented_precedence() {
    let files = mixed_files();
    let pick = |names: &[&str]| -> Vec<(&'static str, String)> {
        files
            .iter()
            .filter(|(n, _)| names.contains(n))
            .cloned()
            .collect()
    };
    let run = |names: &[&str], url: &str, extra: &str| -> (Output, Vec<Value>) {
        let env = TestEnv::new();
        write_all(&env, "in", &pick(names));
        let list: Vec<String> = names.iter().map(|n| format!("in/{n}")).collect();
        std::fs::write(env.path("list"), list.join("\0")).unwrap();
        let out = sh(
            &env,
            &format!(
                "mf compact --files-from list -0 {} --json {extra}",
                remote(url)
            ),
            &[],
        );
        let recs = json_lines(&out.stdout);
        assert_eq!(recs.len(), names.len(), "{out:?}");
        (out, recs)
    };
    // A fresh server for each run (the test server stops accepting after two minutes).
    let served = |names: &[&str], extra: &str| {
        let server = summarizer();
        run(names, &server.url(), extra).0.code
    };
    // A summarizer that failed: 3; with --allow-degraded, 0.
    assert_eq!(served(&["c.jsonl", "fails.jsonl"], ""), 3);
    assert_eq!(served(&["c.jsonl", "fails.jsonl"], "--allow-degraded"), 0);
    // A file error beats it, --allow-degraded or not.
    assert_eq!(served(&["bad.jsonl", "fails.jsonl"], ""), 1);
    assert_eq!(served(&["bad.jsonl", "fails.jsonl"], "--allow-degraded"), 1);
    // Nothing answering (connection refused) is a setup error named as such, per file
    // (`action: error`, exit code 3); the run exits 3, --allow-degraded or not (it accepts an
    // outage, never a wrong URL).
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let (out, recs) = run(&["c.jsonl", "d.jsonl"], &closed, "");
    assert_eq!(out.code, 3, "{out:?}");
    for r in &recs {
        assert_eq!(r["action"], "error", "{r}");
        assert_eq!(r["error"]["exitCode"], 3, "{r}");
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("setup error: nothing answered"),
            "{r}"
        );
    }
    assert_eq!(
        run(&["c.jsonl", "d.jsonl"], &closed, "--allow-degraded")
            .0
            .code,
        3
    );
    assert_eq!(
        run(&["c.jsonl", "bad.jsonl"], &closed, "--allow-degraded")
            .0
            .code,
        1
    );
}

/// The fenced code block that follows `marker` in docs/fleets.md.
fn readme_block(marker: &str) -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/fleets.md"))
            .unwrap();
    let at = readme
        .find(marker)
        .unwrap_or_else(|| panic!("docs/fleets.md has no `{marker}`"));
    let rest = &readme[at..];
    let open = rest.find("```").expect("a code block after the marker");
    let body = &rest[open..];
    let body = &body[body.find('\n').unwrap() + 1..];
    body[..body.find("```").expect("the block ends")].to_string()
}

/// `files` small transcripts under `logs/` (in four subdirectories; the eighth name has a space).
fn fleet(env: &TestEnv, files: u64) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for k in 0..files {
        let dir = format!("logs/team-{}", k % 4);
        std::fs::create_dir_all(env.path(&dir)).unwrap();
        let name = if k == 7 {
            format!("{dir}/session {k}.jsonl")
        } else {
            format!("{dir}/session-{k}.jsonl")
        };
        let text = testgen::facts(12, k + 1).to_jsonl();
        std::fs::write(env.path(&name), &text).unwrap();
        out.push((name, text.into_bytes()));
    }
    out
}

fn assert_all_compacted(env: &TestEnv, files: &[(String, Vec<u8>)], records: &[Value]) {
    assert_eq!(records.len(), files.len(), "one record per file");
    let by_file: HashMap<&str, &Value> = records
        .iter()
        .map(|r| (r["file"].as_str().unwrap(), r))
        .collect();
    assert_eq!(by_file.len(), files.len(), "no file twice");
    for (name, original) in files {
        let r = by_file
            .get(name.as_str())
            .unwrap_or_else(|| panic!("no record for {name}"));
        assert_eq!(r["action"], "folded", "{name}: {r}");
        let p = env.path(name);
        assert_eq!(&read(&p)[..original.len()], &original[..], "{name}");
        assert_eq!(summary_lines(&p).len(), 1, "{name} compacted once");
    }
}

#[test]
fn the_readme_xargs_recipe_compacts_every_file() {
    let recipe = readme_block("<!-- recipe: xargs ");
    assert!(
        recipe.contains("xargs -0") && recipe.contains("-P"),
        "{recipe}"
    );
    let env = TestEnv::new();
    let files = fleet(&env, 64);
    let out = sh(&env, &recipe, &[("MF_MODEL", "extractive")]);
    assert_eq!(out.code, 0, "{out:?}");
    let results = std::fs::read_to_string(env.path("results.jsonl")).unwrap();
    assert_all_compacted(&env, &files, &json_lines(&results));
}

#[test]
fn the_readme_job_shards_cover_every_file_once() {
    let shard = readme_block("<!-- recipe: shard ");
    let job = readme_block("<!-- recipe: job ");
    // The Job runs the same command, with as many completions as SHARDS.
    for line in shard.lines().filter(|l| !l.trim().is_empty()) {
        assert!(job.contains(line.trim()), "the Job does not run: {line}");
    }
    let completions = job
        .lines()
        .find_map(|l| l.trim().strip_prefix("completions: "))
        .expect("completions")
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    assert!(job.contains("completionMode: Indexed"));
    assert!(
        job.contains(&format!("value: \"{completions}\"")),
        "SHARDS is not the number of completions"
    );

    // Run the shard command for every index of a 3-way Job over the file list.
    let env = TestEnv::new();
    let files = fleet(&env, 20);
    let list: String = files.iter().map(|(n, _)| format!("{n}\n")).collect();
    std::fs::write(env.path("files.txt"), list).unwrap();
    std::fs::create_dir(env.path("results")).unwrap();
    let mut records = Vec::new();
    for i in 0..3 {
        let out = sh(
            &env,
            &shard,
            &[
                ("JOB_COMPLETION_INDEX", &i.to_string()),
                ("SHARDS", "3"),
                ("MF_MODEL", "extractive"),
            ],
        );
        assert_eq!(out.code, 0, "shard {i}: {out:?}");
        let mine =
            json_lines(&std::fs::read_to_string(env.path(&format!("results/{i}.jsonl"))).unwrap());
        assert!(
            (6..=7).contains(&mine.len()),
            "shard {i} took {}",
            mine.len()
        );
        records.extend(mine);
    }
    assert_all_compacted(&env, &files, &records);
}
