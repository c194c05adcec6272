//! The live-session guard: mf refuses (exit 75, "try again later") an agent session its agent is
//! running — judged by what a running agent leaves (Claude Code's `sessions/<pid>.json` with a
//! running pid, Codex's held `thread-writer-locks/<thread>.lock`, a tail in the middle of a step,
//! a modification time in the future), checked again under the lock right before the write — and
//! never a session only because it was written recently: a copy without `cp -p`, or mf's own
//! append, is not an agent at work.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::server::{TestServer, anthropic_ok};
use crate::util::*;

/// The refusal's exit status (`EX_TEMPFAIL`).
const BUSY: i32 = 75;

/// Agent fixtures mf folds with default flags, each with its format (the current agents'
/// sessions included: Claude Code 2.1.332 and pi 0.73.1 written by `scripts/agents/fresh.sh`).
const FIXTURES: &[&str] = &[
    "claude-session.jsonl",
    "claude-compacted.jsonl",
    "claude-2.1.332-multiturn.jsonl",
    "codex-rollout.jsonl",
    "codex-compacted.jsonl",
    "pi-session-v3.jsonl",
    "pi-session-v1.jsonl",
    "pi-0.73.1-multiturn.jsonl",
];

fn set_mtime(p: &Path, t: SystemTime) {
    let f = std::fs::File::options().write(true).open(p).unwrap();
    f.set_modified(t).unwrap();
}

fn age(p: &Path) {
    set_mtime(p, SystemTime::now() - Duration::from_secs(3600));
}

const COMPACT: &[&str] = &[
    "--model",
    "extractive",
    "--min-retention",
    "0",
    "--trigger",
    "0",
    "--json",
];

fn compact(env: &TestEnv, name: &str, vars: &[(&str, &str)]) -> Output {
    let mut args = vec!["compact", name];
    args.extend_from_slice(COMPACT);
    env.mf_env(&args, vars)
}

fn written_id(out: &Output) -> String {
    let r = &json_lines(&out.stdout)[0];
    assert_eq!(r["action"], "folded", "{out:?}");
    r["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| written_outcome(&s["outcome"]))
        .and_then(|s| s["id"].as_str())
        .unwrap()
        .to_string()
}

/// The first string value of `key` on any line (`sessionId`, or Codex's `session_meta` id).
fn first_str(p: &Path, key: &str) -> String {
    for l in String::from_utf8(read(p)).unwrap().lines() {
        let Ok(v) = serde_json::from_str::<Value>(l) else {
            continue;
        };
        let hit = if key == "thread" {
            (v["type"] == "session_meta").then(|| v["payload"]["id"].clone())
        } else {
            v.get(key).cloned()
        };
        if let Some(Value::String(s)) = hit {
            return s;
        }
    }
    panic!("no {key} in {}", p.display());
}

#[test]
fn compact_then_restore_at_once_succeeds() {
    for &name in FIXTURES {
        let env = TestEnv::new();
        let path = env.copy_fixture(name);
        age(&path);
        let original_recall = env.mf_ok(&["recall", name]).stdout;
        let out = compact(&env, name, &[]);
        assert_eq!(out.code, 0, "{name}: {out:?}");
        let id = written_id(&out);
        // mf's own append just set the mtime: that is no agent at work.
        let out = env.mf(&["expand", name, &id, "--restore"]);
        assert_eq!(out.code, 0, "{name}: restore right after compact: {out:?}");
        assert_eq!(
            env.mf_ok(&["recall", name]).stdout,
            original_recall,
            "{name}"
        );
        // And compacting again at once is not refused either.
        let out = compact(&env, name, &[]);
        assert_eq!(out.code, 0, "{name}: compact right after restore: {out:?}");
    }
}

#[test]
fn a_copy_with_a_fresh_mtime_and_no_agent_traces_is_not_refused() {
    for &name in FIXTURES {
        let env = TestEnv::new();
        // A copy made now, as `cp` without `-p` makes it; the agents' dirs exist, and hold
        // nothing for this session.
        env.copy_fixture(name);
        let home = env.path("home");
        std::fs::create_dir_all(home.join(".claude/sessions")).unwrap();
        std::fs::create_dir_all(home.join(".codex/thread-writer-locks")).unwrap();
        let out = compact(&env, name, &[("HOME", home.to_str().unwrap())]);
        assert_eq!(out.code, 0, "{name}: {out:?}");
        written_id(&out);
    }
}

#[test]
fn a_future_mtime_is_refused() {
    for &name in FIXTURES {
        let env = TestEnv::new();
        let path = env.copy_fixture(name);
        set_mtime(&path, SystemTime::now() + Duration::from_secs(3600));
        let before = read(&path);
        let out = compact(&env, name, &[]);
        assert_eq!(out.code, BUSY, "{name}: {out:?}");
        assert!(out.stderr.contains("in the future"), "{name}: {out:?}");
        assert!(out.stderr.contains("--force"), "{name}: {out:?}");
        let rec = &json_lines(&out.stdout)[0];
        assert_eq!(rec["action"], "error", "{name}");
        assert_eq!(rec["error"]["exitCode"], BUSY, "{name}");
        assert_eq!(read(&path), before, "{name} was written");
        // --force writes anyway.
        let mut args = vec!["compact", name, "--force"];
        args.extend_from_slice(COMPACT);
        let out = env.mf(&args);
        assert_eq!(out.code, 0, "{name}: {out:?}");
    }
}

/// A session cut right after the agent asked for a tool call (its result not yet written), and
/// one whose last line is half written, in the agent's own session directory.
#[test]
fn a_tail_in_the_middle_of_a_step_is_refused_while_recent() {
    // (fixture, a line of it that asks for a tool call: the session is cut after it, where the
    // agent keeps its sessions under HOME)
    for (name, call, dir) in [
        (
            "claude-2.1.332-multiturn.jsonl",
            "\"type\":\"tool_use\"",
            "home/.claude/projects/-work",
        ),
        (
            "pi-0.73.1-multiturn.jsonl",
            "\"type\":\"toolCall\"",
            "home/.pi/agent/sessions/--work--",
        ),
        (
            "codex-rollout.jsonl",
            "\"type\":\"function_call\"",
            "home/.codex/sessions/2026/11/30",
        ),
    ] {
        let text = String::from_utf8(read(&fixture(name))).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let last_call = lines.iter().rposition(|l| l.contains(call)).unwrap();
        let cut = lines[..=last_call].join("\n") + "\n";
        let env = TestEnv::new();
        let home = env.path("home");
        let home = [("HOME", home.to_str().unwrap())];
        std::fs::create_dir_all(env.path(dir)).unwrap();
        let rel = format!("{dir}/{name}");
        let path = env.write(&rel, &cut);
        let out = compact(&env, &rel, &home);
        assert_eq!(out.code, BUSY, "{name}: {out:?}");
        assert!(out.stderr.contains("no result yet"), "{name}: {out:?}");
        assert_eq!(read(&path), cut.as_bytes(), "{name} was written");
        // An hour later the agent is not coming back: mf may write.
        age(&path);
        let out = compact(&env, &rel, &home);
        assert_ne!(out.code, BUSY, "{name}: {out:?}");
        // A line the agent is still writing.
        let env = TestEnv::new();
        std::fs::create_dir_all(env.path(dir)).unwrap();
        let home = env.path("home");
        let home = home.to_str().unwrap();
        let path = env.path(&rel);
        std::fs::write(&path, read(&fixture(name))).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"type\":\"user\",\"mess")
            .unwrap();
        let before = read(&path);
        let out = compact(&env, &rel, &[("MF_TAIL_WAIT_MS", "50"), ("HOME", home)]);
        assert_eq!(out.code, BUSY, "{name}: {out:?}");
        assert!(
            out.stderr.contains("still being written"),
            "{name}: {out:?}"
        );
        assert_eq!(read(&path), before, "{name} was written");
    }
}

/// While the summarizer thinks (a loopback model answering after 3 s), the agent appends a line:
/// mf refuses at write time, with nothing of its own written.
#[test]
fn a_line_appended_during_a_slow_summarizer_call_makes_mf_refuse() {
    for name in [
        "claude-2.1.332-multiturn.jsonl",
        "codex-rollout.jsonl",
        "pi-0.73.1-multiturn.jsonl",
    ] {
        let server = TestServer::start(vec![
            anthropic_ok("Short summary of the earlier turns.").delay(Duration::from_secs(3)),
        ]);
        let env = TestEnv::new();
        let path = env.copy_fixture(name);
        age(&path);
        // The agent's next line: a copy of its last one (what it is does not matter here).
        let text = String::from_utf8(read(&path)).unwrap();
        let agent_line = text.lines().last().unwrap().to_string() + "\n";
        let url = server.url();
        let out = std::thread::scope(|scope| {
            scope.spawn(|| {
                // Once mf's request has reached the model, the agent writes its line.
                assert!(
                    server.wait_for(1, Duration::from_secs(30)),
                    "{name}: no request"
                );
                std::thread::sleep(Duration::from_millis(300));
                std::fs::OpenOptions::new()
                    .append(true)
                    .open(&path)
                    .unwrap()
                    .write_all(agent_line.as_bytes())
                    .unwrap();
            });
            env.mf_env(
                &[
                    "compact",
                    name,
                    "--model",
                    "haiku",
                    "--min-retention",
                    "0",
                    "--trigger",
                    "0",
                    "--json",
                ],
                &[
                    ("ANTHROPIC_BASE_URL", url.as_str()),
                    ("ANTHROPIC_API_KEY", "sk-ant-test-live"),
                ],
            )
        });
        assert_eq!(server.requests().len(), 1, "{name}: the call was made");
        assert_eq!(out.code, BUSY, "{name}: {out:?}");
        assert!(
            out.stderr.contains("appended to it while mf was working"),
            "{name}: {out:?}"
        );
        assert_eq!(
            read(&path),
            (text + &agent_line).into_bytes(),
            "{name}: the file holds the agent's line and nothing of mf's"
        );
    }
}

/// A Claude Code process file (`~/.claude/sessions/<pid>.json`) naming the session: refused while
/// its pid runs, not once it has exited (a killed Claude Code leaves the file behind).
#[test]
fn a_live_claude_pid_file_is_refused_and_a_dead_one_is_not() {
    let name = "claude-2.1.332-multiturn.jsonl";
    let env = TestEnv::new();
    let path = env.copy_fixture(name);
    age(&path);
    let sid = first_str(&path, "sessionId");
    let home = env.path("home");
    let sessions = home.join(".claude/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let vars = [("HOME", home.to_str().unwrap())];
    let mut sleeper = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let pid = sleeper.id();
    let pid_file = sessions.join(format!("{pid}.json"));
    std::fs::write(
        &pid_file,
        serde_json::json!({"pid": pid, "sessionId": sid, "cwd": "/tmp", "status": "busy"})
            .to_string(),
    )
    .unwrap();
    let before = read(&path);
    let out = compact(&env, name, &vars);
    assert_eq!(out.code, BUSY, "{out:?}");
    assert!(
        out.stderr.contains(&format!("Claude Code process {pid}")),
        "{out:?}"
    );
    assert_eq!(read(&path), before);
    // CLAUDE_CONFIG_DIR moves ~/.claude: the same file found there.
    let moved = env.path("claude-config");
    std::fs::create_dir_all(moved.join("sessions")).unwrap();
    std::fs::copy(
        &pid_file,
        moved.join("sessions").join(format!("{pid}.json")),
    )
    .unwrap();
    let out = compact(
        &env,
        name,
        &[("CLAUDE_CONFIG_DIR", moved.to_str().unwrap())],
    );
    assert_eq!(out.code, BUSY, "{out:?}");
    // On Linux Claude Code also records when its process started: a pid file whose pid now
    // belongs to another process is stale.
    if cfg!(target_os = "linux") {
        std::fs::write(
            &pid_file,
            serde_json::json!({"pid": pid, "sessionId": sid, "procStart": "1"}).to_string(),
        )
        .unwrap();
        let out = compact(&env, name, &vars);
        assert_eq!(out.code, 0, "a reused pid: {out:?}");
        let id = written_id(&out);
        assert_eq!(env.mf(&["expand", name, &id, "--restore"]).code, 0);
        std::fs::write(
            &pid_file,
            serde_json::json!({"pid": pid, "sessionId": sid}).to_string(),
        )
        .unwrap();
    }
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
    // The process is gone; its file is still there.
    assert!(pid_file.exists());
    let out = compact(&env, name, &vars);
    assert_eq!(out.code, 0, "a dead pid: {out:?}");
    written_id(&out);
}

/// Codex holds an exclusive lock on `thread-writer-locks/<thread>.lock` while it runs a thread,
/// and removes the file when it exits; a killed Codex leaves the file, unlocked.
#[test]
fn a_held_codex_thread_lock_is_refused_and_a_left_over_one_is_not() {
    let name = "codex-rollout.jsonl";
    let env = TestEnv::new();
    let path = env.copy_fixture(name);
    age(&path);
    let thread = first_str(&path, "thread");
    let codex_home = env.path("codex-home");
    let locks = codex_home.join("thread-writer-locks");
    std::fs::create_dir_all(&locks).unwrap();
    let lock = locks.join(format!("{thread}.lock"));
    let held = std::fs::File::create(&lock).unwrap();
    held.lock().unwrap();
    let vars = [("CODEX_HOME", codex_home.to_str().unwrap())];
    let before = read(&path);
    let out = compact(&env, name, &vars);
    assert_eq!(out.code, BUSY, "{out:?}");
    assert!(out.stderr.contains("Codex holds the lock"), "{out:?}");
    assert_eq!(read(&path), before);
    held.unlock().unwrap();
    drop(held);
    assert!(lock.exists());
    let out = compact(&env, name, &vars);
    assert_eq!(out.code, 0, "a left-over, unlocked lock file: {out:?}");
    written_id(&out);
}

/// The exit status is documented (README, docs/record.md), and docs/fleets.md's Kubernetes recipe
/// retries it.
#[test]
fn the_busy_exit_status_is_documented_and_retried_by_the_recipe() {
    let page = |name: &str| {
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(name)).unwrap()
    };
    let section = |text: &str, title: &str| {
        let start = text.find(title).unwrap_or_else(|| panic!("{title}"));
        let rest = &text[start + title.len()..];
        rest[..rest.find("\n## ").unwrap_or(rest.len())].to_string()
    };
    for name in ["README.md", "docs/record.md"] {
        let codes = section(&page(name), "## Exit codes");
        assert!(
            codes.lines().any(|l| l.starts_with("| 75 |")),
            "{name}'s Exit codes table has no row for 75"
        );
    }
    let fleet = section(&page("docs/fleets.md"), "# Fleets and CI");
    let fail_index = fleet
        .lines()
        .skip_while(|l| !l.contains("action: FailIndex"))
        .find(|l| l.trim_start().starts_with("values:"))
        .expect("the recipe's FailIndex rule names its exit codes");
    assert!(
        !fail_index.contains("75"),
        "the recipe must retry 75: {fail_index}"
    );
    assert!(fleet.contains("75"), "the recipe says that it retries 75");
}
