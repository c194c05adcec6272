//! What a CI job scripts on (issue 18, item 6): every failed file's record carries one
//! machine-readable `failure` (an outage too, whose action stays `declined`), docs/record.md's jq
//! lines find them, and `--allow-degraded` accepts an outage but never a base URL that never
//! answered (a wrong port or host: a setup error).

use std::time::Duration;

use crate::server::{Reply, TestServer, anthropic_ok};
use crate::util::*;

const KEY: &str = "sk-ant-TEST-SENTINEL-0000";

/// `mf compact FILES --model haiku --json EXTRA…` against `url` (the audit off: this is about
/// failures, not retention).
fn compact(env: &TestEnv, files: &[&str], url: &str, extra: &[&str]) -> Output {
    let mut args = vec!["compact"];
    args.extend_from_slice(files);
    args.extend([
        "--model",
        "haiku",
        "--json",
        "--min-retention",
        "0",
        "--no-progress",
        "-j",
        "1",
    ]);
    args.extend_from_slice(extra);
    env.mf_env(
        &args,
        &[("ANTHROPIC_BASE_URL", url), ("ANTHROPIC_API_KEY", KEY)],
    )
}

/// A loopback URL where nothing listens (the port was bound and let go).
fn closed_url() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("http://{}", l.local_addr().unwrap())
}

fn two_files(env: &TestEnv) {
    env.write("a.jsonl", &conversation(14));
    env.write("b.jsonl", &conversation(15));
}

/// The jq programs of docs/record.md's lines that select failed files (`select(.failure…)`).
fn readme_failure_programs() -> Vec<String> {
    let readme = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/record.md"),
    )
    .unwrap();
    let programs: Vec<String> = readme
        .lines()
        .filter(|l| l.contains("jq") && l.contains("select(.failure"))
        .filter_map(|l| {
            let start = l.find("jq")?;
            let rest = &l[start..];
            let open = rest.find('\'')?;
            let close = rest[open + 1..].find('\'')?;
            Some(rest[open + 1..open + 1 + close].to_string())
        })
        .collect();
    assert!(
        programs.len() >= 2,
        "docs/record.md shows how to select failed files with jq: {programs:?}"
    );
    programs
}

/// Run a jq program over `results` (a file in `env`), or `None` when jq is not installed.
fn jq(env: &TestEnv, program: &str, results: &str) -> Option<(i32, String)> {
    let out = std::process::Command::new("jq")
        .args(["-r", program, results])
        .current_dir(env.dir.path())
        .output()
        .ok()?;
    Some((
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    ))
}

#[test]
fn an_outage_and_a_setup_error_each_carry_a_failure_the_readme_jq_lines_find() {
    // An outage: HTTP 529 on every attempt.
    let err = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    let server = TestServer::start(vec![Reply::json(529, err)]);
    let env = TestEnv::new();
    two_files(&env);
    let out = compact(&env, &["a.jsonl"], &server.url(), &["--retries", "0"]);
    assert_eq!(out.code, 3, "{out:?}");
    let outage = json_lines(&out.stdout).remove(0);
    // Every existing field as it was: the action is still `declined`, no `error`.
    assert_eq!(outage["action"], "declined", "{outage}");
    assert!(outage.get("error").is_none(), "{outage}");
    assert_eq!(
        outage["failures"].as_array().map(Vec::len),
        Some(1),
        "{outage}"
    );
    let f = &outage["failure"];
    assert_eq!(f["kind"], "summarizer-outage", "{outage}");
    assert_eq!(f["exitCode"], 3, "{outage}");
    assert_eq!(f["degraded"], true, "{outage}");
    assert!(
        f["message"].as_str().unwrap().contains("529"),
        "the failure says what happened: {outage}"
    );

    // A setup error: nothing ever answered at the URL.
    let out2 = compact(&env, &["b.jsonl"], &closed_url(), &["--retries", "0"]);
    assert_eq!(out2.code, 3, "{out2:?}");
    let setup = json_lines(&out2.stdout).remove(0);
    assert_eq!(setup["action"], "error", "{setup}");
    assert_eq!(
        setup["failure"]["kind"], "summarizer-unreachable",
        "{setup}"
    );
    assert_eq!(setup["failure"]["exitCode"], 3, "{setup}");
    assert_eq!(setup["failure"]["degraded"], false, "{setup}");
    assert_eq!(setup["failure"]["message"], setup["error"]["message"]);

    // A file that compacted has no failure.
    let ok = TestServer::start(vec![anthropic_ok(
        "The user planned hotel stays city by city; each was booked with a confirmation code.",
    )]);
    let env2 = TestEnv::new();
    two_files(&env2);
    let good = compact(&env2, &["a.jsonl"], &ok.url(), &[]);
    assert_eq!(good.code, 0, "{good:?}");
    let good = json_lines(&good.stdout).remove(0);
    assert_eq!(good["action"], "folded", "{good}");
    assert!(good.get("failure").is_none(), "{good}");

    // docs/record.md's jq lines, run over these records: every failed file, by its kind.
    let results = format!("{}{}{}\n", out.stdout, out2.stdout, good);
    std::fs::write(env.path("results.jsonl"), &results).unwrap();
    for program in readme_failure_programs() {
        let Some((code, text)) = jq(&env, &program, "results.jsonl") else {
            // No jq here: the same selection, parsed as the JSON it is.
            let failed: Vec<_> = json_lines(&results)
                .into_iter()
                .filter(|r| !r["failure"].is_null())
                .collect();
            assert_eq!(failed.len(), 2, "{results}");
            continue;
        };
        assert_eq!(code, 0, "jq {program}: {text}");
        if program.contains("degraded") {
            // The setup errors only (what --allow-degraded never lets through).
            assert!(
                text.contains("b.jsonl") && !text.contains("a.jsonl"),
                "jq {program}: {text}"
            );
        } else {
            assert!(
                text.contains("a.jsonl")
                    && text.contains("summarizer-outage")
                    && text.contains("b.jsonl")
                    && text.contains("summarizer-unreachable"),
                "jq {program}: {text}"
            );
        }
    }
}

#[test]
fn allow_degraded_accepts_an_outage_but_not_a_url_that_never_answered() {
    let env = TestEnv::new();
    two_files(&env);
    // A wrong port: connection refused on every attempt, nothing ever answered. A setup error,
    // so --allow-degraded does not make it 0. (A host name that does not resolve is the same
    // class in mf; tests talk only to 127.0.0.1, so it is not tried here.)
    let out = compact(
        &env,
        &["a.jsonl", "b.jsonl"],
        &closed_url(),
        &["--retries", "1", "--allow-degraded"],
    );
    assert_eq!(out.code, 3, "{out:?}");
    for r in json_lines(&out.stdout) {
        assert_eq!(r["failure"]["kind"], "summarizer-unreachable", "{r}");
    }
    // Outages after retries: 5xx, overload, a timeout. 0 with --allow-degraded (3 without).
    let err5 = r#"{"type":"error","error":{"type":"api_error","message":"Internal"}}"#;
    let overload = r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
    for (what, reply, extra) in [
        ("500", Reply::json(500, err5), vec!["--retries", "1"]),
        ("529", Reply::json(529, overload), vec!["--retries", "1"]),
        (
            "timeout",
            Reply::hang(),
            vec!["--retries", "0", "--timeout", "1"],
        ),
    ] {
        let env = TestEnv::new();
        two_files(&env);
        let server = TestServer::start(vec![reply.clone()]);
        let strict = compact(&env, &["a.jsonl"], &server.url(), &extra);
        assert_eq!(strict.code, 3, "{what}: {strict:?}");
        let server = TestServer::start(vec![reply]);
        let mut args = extra.clone();
        args.push("--allow-degraded");
        let lenient = compact(&env, &["b.jsonl"], &server.url(), &args);
        assert_eq!(lenient.code, 0, "{what}: {lenient:?}");
        assert_eq!(
            json_lines(&lenient.stdout)[0]["failure"]["kind"],
            "summarizer-outage",
            "{what}: {lenient:?}"
        );
    }

    // A server that answered and then went away (refusing from then on) is an outage, not a
    // wrong URL: the first file folds, the second stays verbatim, and --allow-degraded says 0.
    let env = TestEnv::new();
    two_files(&env);
    let server = TestServer::start(vec![
        anthropic_ok(
            "The user planned hotel stays city by city; each was booked with a confirmation code.",
        )
        .delay(Duration::from_millis(700)),
    ]);
    let url = server.url();
    let mut cmd = env.command(
        &[
            "compact",
            "a.jsonl",
            "b.jsonl",
            "--model",
            "haiku",
            "--json",
            "--min-retention",
            "0",
            "--no-progress",
            "-j",
            "1",
            "--retries",
            "1",
            "--allow-degraded",
        ],
        &[("ANTHROPIC_BASE_URL", &url), ("ANTHROPIC_API_KEY", KEY)],
    );
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().unwrap();
    // The first request is in; stop listening while its (delayed) answer is still on the way.
    assert!(server.wait_for(1, Duration::from_secs(20)));
    drop(server);
    let out = child.wait_with_output().unwrap();
    let (code, stdout) = (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    let recs = json_lines(&stdout);
    assert_eq!(recs.len(), 2, "{stdout}\n{stderr}");
    assert_eq!(recs[0]["action"], "folded", "{stdout}\n{stderr}");
    assert_eq!(
        recs[1]["failure"]["kind"], "summarizer-outage",
        "{stdout}\n{stderr}"
    );
    assert_eq!(code, 0, "{stdout}\n{stderr}");
}
