//! Shared helpers for the suites that break mf on purpose (issue 6): a loopback summarizer,
//! signals, child processes with deadlines, generated conversations, figures from the
//! environment, and the check that recall equals the independent model's.

#![allow(dead_code)]

use std::io::Write;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::model;
use crate::server::{Reply, TestServer, anthropic_ok};
use crate::util::*;

/// The key the loopback provider is given (and must never find in a file).
pub const KEY: &str = "sk-ant-api03-TRUSTSENTINEL-0123456789abcdef";

/// Environment that points `--model haiku` at a loopback server.
pub fn haiku_env(server: &TestServer) -> Vec<(&'static str, String)> {
    vec![
        ("ANTHROPIC_BASE_URL", server.url()),
        ("ANTHROPIC_API_KEY", KEY.to_string()),
    ]
}

pub fn run_with(env: &TestEnv, args: &[&str], vars: &[(&'static str, String)]) -> Output {
    let v: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.mf_env(args, &v)
}

/// Start `mf` with piped output.
pub fn spawn(env: &TestEnv, args: &[&str], vars: &[(&'static str, String)]) -> Child {
    let v: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.command(args, &v)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mf")
}

/// Wait for a child, killing it (and failing) after `limit`.
pub fn finish(child: Child, limit: Duration) -> Output {
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let d = done.clone();
    let watchdog = std::thread::spawn(move || {
        let start = Instant::now();
        while start.elapsed() < limit {
            if d.load(std::sync::atomic::Ordering::SeqCst) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = signal(pid, "KILL");
        true
    });
    let out = child.wait_with_output().expect("wait for mf");
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let killed = watchdog.join().unwrap();
    let out = Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(!killed, "mf did not finish within {limit:?}: {out:?}");
    out
}

/// Send a signal by name (`INT`, `TERM`, `HUP`, `KILL`). Returns whether it was delivered.
pub fn signal(pid: u32, name: &str) -> bool {
    use rustix::process::{Pid, Signal, kill_process};
    let sig = match name {
        "INT" => Signal::INT,
        "TERM" => Signal::TERM,
        "HUP" => Signal::HUP,
        "KILL" => Signal::KILL,
        other => panic!("no signal {other}"),
    };
    let Some(pid) = Pid::from_raw(pid as i32) else {
        return false;
    };
    kill_process(pid, sig).is_ok()
}

/// A figure from the environment (for long runs by hand), else the CI default.
pub fn figure(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(default)
}

/// The seed for a randomized test: `MF_TRUST_SEED`, else from the clock (printed either way).
pub fn seed(test: &str) -> u64 {
    let s = std::env::var("MF_TRUST_SEED")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        });
    eprintln!("{test}: seed {s} (rerun with MF_TRUST_SEED={s})");
    s
}

/// Append bytes to a file as another program would (no lock).
pub fn append(path: &Path, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .expect("open for append");
    f.write_all(bytes).expect("append");
}

/// A conversation whose turns carry large tool results: about `mb` megabytes of model-visible
/// text in `turns` turns, after a system line.
pub fn big_conversation(turns: usize, mb: f64) -> String {
    let per = ((mb * 1e6) as usize / turns.max(1)).max(200);
    let mut s = line("sys", "system", "You are a careful operations assistant.") + "\n";
    for n in 1..=turns {
        s += &line(
            &format!("u{n}"),
            "user",
            &format!("Turn {n}: fetch the log for job J-{n:05} and tell me what failed."),
        );
        s.push('\n');
        s += &serde_json::json!({"id": format!("c{n}"), "role": "assistant", "content": null,
            "tool_calls": [{"id": format!("call_{n}"), "type": "function",
                "function": {"name": "read_log", "arguments": format!("{{\"job\":\"J-{n:05}\"}}")}}]})
        .to_string();
        s.push('\n');
        let mut log = String::with_capacity(per + 80);
        let mut k = 0;
        while log.len() < per {
            log += &format!(
                "{n:05}.{k:06} worker-{} step ok in {} ms\n",
                k % 17,
                (k * 7) % 900
            );
            k += 1;
        }
        s += &serde_json::json!({"id": format!("r{n}"), "role": "tool", "tool_call_id": format!("call_{n}"),
            "name": "read_log", "content": log})
        .to_string();
        s.push('\n');
        s += &line(
            &format!("a{n}"),
            "assistant",
            &format!(
                "Job J-{n:05} failed at step {} with exit code {}.",
                n * 3,
                n % 7 + 1
            ),
        );
        s.push('\n');
    }
    s
}

/// A loopback provider answering with a summary of about `bytes` bytes (after `delay`).
pub fn big_summary_server(bytes: usize, delay: Duration) -> TestServer {
    let mut text = String::with_capacity(bytes + 100);
    let mut k = 0;
    while text.len() < bytes {
        text += &format!(
            "Job J-{k:05} failed at step {} with exit code {}. ",
            k * 3,
            k % 7 + 1
        );
        k += 1;
    }
    TestServer::start(vec![anthropic_ok(&text).delay(delay)])
}

/// A loopback provider answering with one short summary (after `delay`).
pub fn small_summary_server(delay: Duration) -> TestServer {
    TestServer::start(vec![
        anthropic_ok(
            "The user asked about hotels in many cities; bookings ABC-0001 to ABC-0030 were made.",
        )
        .delay(delay),
    ])
}

/// The loopback server that always fails (HTTP 500).
pub fn failing_server() -> TestServer {
    TestServer::start(vec![Reply::json(
        500,
        r#"{"type":"error","error":{"type":"api_error","message":"boom"}}"#,
    )])
}

/// mf's recall (chat format) must be exactly what the model says.
pub fn assert_recall_is_models(env: &TestEnv, file: &Path) -> model::Replay {
    let name = file.file_name().unwrap().to_str().unwrap();
    let out = env.mf(&["recall", name]);
    assert_eq!(out.code, 0, "recall: {out:?}");
    let got = json_lines(&out.stdout);
    let m = model::replay(&read(file));
    let want = m.recall();
    if got != want {
        let show = |v: &[serde_json::Value]| {
            v.iter()
                .map(|x| {
                    let c = x["content"]
                        .as_str()
                        .unwrap_or("")
                        .chars()
                        .take(60)
                        .collect::<String>();
                    format!("  {} {c:?}", x["role"])
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        panic!(
            "recall differs from the model for {}\nmf ({}):\n{}\nmodel ({}):\n{}\nmodel refused: {:?}\nfile:\n{}",
            file.display(),
            got.len(),
            show(&got),
            want.len(),
            show(&want),
            m.refused,
            String::from_utf8_lossy(&read(file))
                .chars()
                .take(6000)
                .collect::<String>()
        );
    }
    m
}

/// `mf verify` on a file: (exit code, JSON report).
pub fn verify(env: &TestEnv, file: &Path) -> (i32, serde_json::Value) {
    let out = env.mf(&["verify", file.to_str().unwrap(), "--json"]);
    let v = json_lines(&out.stdout)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("verify printed a report: {out:?}"));
    (out.code, v)
}

/// The kinds of `verify`'s problems.
pub fn problem_kinds(report: &serde_json::Value) -> Vec<String> {
    report["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap().to_string())
        .collect()
}

/// Assert `mf verify` is clean (notes allowed).
pub fn assert_verify_clean(env: &TestEnv, file: &Path) {
    let (code, report) = verify(env, file);
    assert_eq!(code, 0, "verify is not clean: {report:#}");
    assert_eq!(report["clean"], true, "{report:#}");
}

/// The lines a file gained after `before`, parsed.
pub fn new_lines(file: &Path, before: &[u8]) -> Vec<serde_json::Value> {
    let now = read(file);
    assert_eq!(&now[..before.len()], before, "earlier bytes changed");
    json_lines(std::str::from_utf8(&now[before.len()..]).unwrap())
}

/// The chat messages `mf recall` prints.
pub fn recall(env: &TestEnv, name: &str) -> Vec<serde_json::Value> {
    let out = env.mf(&["recall", name]);
    assert_eq!(out.code, 0, "{out:?}");
    json_lines(&out.stdout)
}
