//! `mf sessions` and `compact --latest` over a fake HOME holding sessions of Claude Code, Codex
//! and pi, run in projects whose names hold `_`, `-`, spaces and dots.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::util::{TestEnv, fixture, json_lines};

/// A fixture with its recorded working directory replaced by `cwd`, written to `dest` with the
/// modification time `age` ago.
fn plant(fixture_name: &str, old_cwd: &str, cwd: &Path, dest: &Path, age: u64) -> PathBuf {
    let text = std::fs::read_to_string(fixture(fixture_name)).unwrap();
    let escaped = serde_json::to_string(cwd.to_str().unwrap()).unwrap();
    let text = text.replace(old_cwd, &escaped[1..escaped.len() - 1]);
    std::fs::create_dir_all(dest.parent().unwrap()).unwrap();
    std::fs::write(dest, text).unwrap();
    let f = std::fs::File::options().write(true).open(dest).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(age))
        .unwrap();
    dest.to_path_buf()
}

struct Home {
    env: TestEnv,
    home: PathBuf,
    under: PathBuf,
    dash: PathBuf,
    spaced: PathBuf,
    claude_under: PathBuf,
    claude_dash: PathBuf,
    claude_compacted: PathBuf,
    codex: PathBuf,
    pi: PathBuf,
}

const CLAUDE_CWD: &str = "/tmp/mf-fresh-claude.7uHL83/cwd";
const CODEX_CWD: &str = "/tmp/mf-fresh-codex.pmuhXm/cwd";
const PI_CWD: &str = "/tmp/mf-fresh-pi.ZvH4Wu/cwd";

/// Claude Code's directory name for a project, spelled out by hand for the test.
fn claude_dir(cwd: &Path) -> String {
    cwd.to_str()
        .unwrap()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

fn fake_home() -> Home {
    let env = TestEnv::new();
    let home = env.path("home");
    let work = env.path("work");
    let under = work.join("my_app");
    let dash = work.join("my-app");
    let spaced = work.join("my app v1.2");
    for d in [&under, &dash, &spaced] {
        std::fs::create_dir_all(d).unwrap();
    }
    // `my_app` and `my-app` share Claude Code's directory name.
    assert_eq!(claude_dir(&under), claude_dir(&dash));
    let projects = home.join(".claude/projects").join(claude_dir(&under));
    let claude_under = plant(
        "claude-2.1.332-multiturn.jsonl",
        CLAUDE_CWD,
        &under,
        &projects.join("11111111-1111-4111-8111-111111111111.jsonl"),
        500,
    );
    let claude_dash = plant(
        "claude-2.1.332-multiturn.jsonl",
        CLAUDE_CWD,
        &dash,
        &projects.join("22222222-2222-4222-8222-222222222222.jsonl"),
        400,
    );
    // A sub-agent's transcript beside them and in a session's own directory: not sessions.
    plant(
        "claude-2.1.332-multiturn.jsonl",
        CLAUDE_CWD,
        &under,
        &projects.join("agent-1234abcd.jsonl"),
        10,
    );
    plant(
        "claude-2.1.332-multiturn.jsonl",
        CLAUDE_CWD,
        &under,
        &projects.join("11111111-1111-4111-8111-111111111111/subagents/agent-a1.jsonl"),
        10,
    );
    let compacted_text = std::fs::read_to_string(fixture("claude-compacted.jsonl")).unwrap();
    let compacted_cwd = compacted_text
        .lines()
        .find_map(|l| {
            serde_json::from_str::<serde_json::Value>(l)
                .ok()?
                .get("cwd")?
                .as_str()
                .map(str::to_string)
        })
        .expect("the fixture records a cwd");
    let claude_compacted = plant(
        "claude-compacted.jsonl",
        &compacted_cwd,
        &spaced,
        &home
            .join(".claude/projects")
            .join(claude_dir(&spaced))
            .join("33333333-3333-4333-8333-333333333333.jsonl"),
        300,
    );
    let codex = plant(
        "codex-0.171.0-multiturn.jsonl",
        CODEX_CWD,
        &spaced,
        &home.join(
            ".codex/sessions/2026/11/30/rollout-2026-11-30T10-00-00-019ad000-0000-7000-8000-000000000000.jsonl",
        ),
        200,
    );
    let pi_dir = format!(
        "--{}--",
        under
            .to_str()
            .unwrap()
            .trim_start_matches('/')
            .replace('/', "-")
    );
    let pi = plant(
        "pi-1.6.0-multiturn.jsonl",
        PI_CWD,
        &under,
        &home
            .join(".pi/agent/sessions")
            .join(pi_dir)
            .join("2026-11-30T10-00-00-000Z_019ad000.jsonl"),
        100,
    );
    Home {
        env,
        home,
        under,
        dash,
        spaced,
        claude_under,
        claude_dash,
        claude_compacted,
        codex,
        pi,
    }
}

impl Home {
    fn mf(&self, args: &[&str]) -> crate::util::Output {
        let home = self.home.to_str().unwrap();
        let cache = self.env.path("cache");
        self.env.mf_env(
            args,
            &[("HOME", home), ("MF_CACHE_DIR", cache.to_str().unwrap())],
        )
    }
}

fn paths(rows: &[serde_json::Value]) -> Vec<PathBuf> {
    rows.iter()
        .map(|r| PathBuf::from(r["path"].as_str().unwrap()))
        .collect()
}

#[test]
fn sessions_lists_every_agents_sessions_newest_first() {
    let h = fake_home();
    let out = h.mf(&["sessions", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rows = json_lines(&out.stdout);
    assert_eq!(
        paths(&rows),
        vec![
            h.pi.clone(),
            h.codex.clone(),
            h.claude_compacted.clone(),
            h.claude_dash.clone(),
            h.claude_under.clone()
        ],
        "newest first, sub-agent transcripts left out: {}",
        out.stdout
    );
    let agents: Vec<&str> = rows.iter().map(|r| r["agent"].as_str().unwrap()).collect();
    assert_eq!(agents, ["pi", "codex", "claude", "claude", "claude"]);
    let projects: Vec<&str> = rows
        .iter()
        .map(|r| r["project"].as_str().unwrap())
        .collect();
    assert_eq!(
        projects,
        [
            h.under.to_str().unwrap(),
            h.spaced.to_str().unwrap(),
            h.spaced.to_str().unwrap(),
            h.dash.to_str().unwrap(),
            h.under.to_str().unwrap()
        ]
    );
    for r in &rows {
        assert!(r["tokens"].as_u64().unwrap() > 0, "{r}");
        assert!(r["size"].as_u64().unwrap() > 0, "{r}");
        assert_eq!(r["live"], false, "{r}");
        assert_eq!(r["mfFolds"], 0, "{r}");
        assert!(r["error"].is_null(), "{r}");
        assert!(r["modified"].as_str().unwrap().ends_with('Z'), "{r}");
    }
    // Claude Code's own compaction is counted as the agent's fold.
    assert!(rows[2]["agentFolds"].as_u64().unwrap() >= 1, "{}", rows[2]);
    assert_eq!(rows[0]["agentFolds"], 0);

    // On a pipe: a header and one tab-separated line per session.
    let out = h.mf(&["sessions"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 6, "{}", out.stdout);
    assert!(lines[0].starts_with("agent\tmodified\tsize\ttokens\tlive\tfolded"));
    assert!(lines[1].starts_with("pi\t") && lines[1].ends_with(h.pi.to_str().unwrap()));
    assert!(lines[3].contains("\tclaude 1\t"), "{}", lines[3]);

    // -0: the paths, each ended by a NUL.
    let out = h
        .env
        .command(
            &["sessions", "-0", "--agent", "claude"],
            &[("HOME", h.home.to_str().unwrap())],
        )
        .output()
        .unwrap();
    let expected: Vec<u8> = [&h.claude_compacted, &h.claude_dash, &h.claude_under]
        .iter()
        .flat_map(|p| {
            let mut b = p.to_str().unwrap().as_bytes().to_vec();
            b.push(0);
            b
        })
        .collect();
    assert_eq!(out.stdout, expected);
}

#[test]
fn sessions_filters_by_agent_and_by_the_directory_each_session_was_run_in() {
    let h = fake_home();
    let list = |args: &[&str]| {
        let mut a = vec!["sessions", "--json"];
        a.extend_from_slice(args);
        let out = h.mf(&a);
        assert_eq!(out.code, 0, "{}", out.stderr);
        paths(&json_lines(&out.stdout))
    };
    let under = h.under.to_str().unwrap();
    let dash = h.dash.to_str().unwrap();
    let spaced = h.spaced.to_str().unwrap();
    // `my_app` and `my-app` share Claude Code's project directory: the session's own cwd tells them apart.
    assert_eq!(
        list(&["--cwd", under]),
        vec![h.pi.clone(), h.claude_under.clone()]
    );
    assert_eq!(list(&["--cwd", dash]), vec![h.claude_dash.clone()]);
    assert_eq!(
        list(&["--cwd", spaced]),
        vec![h.codex.clone(), h.claude_compacted.clone()]
    );
    // A relative --cwd, with a trailing slash, is the same directory.
    assert_eq!(
        list(&["--cwd", "work/my app v1.2/"]),
        vec![h.codex.clone(), h.claude_compacted.clone()]
    );
    assert_eq!(list(&["--agent", "codex"]), vec![h.codex.clone()]);
    assert_eq!(
        list(&["--agent", "pi", "--cwd", dash]),
        Vec::<PathBuf>::new()
    );
    assert_eq!(
        list(&["--agent", "claude", "--latest"]),
        vec![h.claude_compacted.clone()]
    );
    // --latest alone prints the path, for `--files-from -`.
    let out = h.mf(&["sessions", "--latest", "--agent", "claude", "--cwd", under]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout, format!("{}\n", h.claude_under.display()));
    // Nothing there: an empty list and a note saying where mf looked.
    let out = h.mf(&["sessions", "--agent", "codex", "--cwd", dash]);
    assert_eq!(out.code, 0);
    assert_eq!(out.stdout.lines().count(), 1, "{}", out.stdout);
    assert!(out.stderr.contains("no sessions found"), "{}", out.stderr);
    assert!(out.stderr.contains(".codex/sessions"), "{}", out.stderr);
}

#[test]
fn sessions_honours_the_agents_own_directory_variables() {
    let h = fake_home();
    let elsewhere = h.env.path("elsewhere");
    std::fs::rename(h.home.join(".codex"), &elsewhere).unwrap();
    std::fs::create_dir_all(h.env.path("pi-sessions")).unwrap();
    let pi_flat = h.env.path("pi-sessions").join("2026-11-30_x.jsonl");
    std::fs::rename(&h.pi, &pi_flat).unwrap();
    let out = h.env.mf_env(
        &["sessions", "--json", "--agent", "codex"],
        &[
            ("HOME", h.home.to_str().unwrap()),
            ("CODEX_HOME", elsewhere.to_str().unwrap()),
        ],
    );
    let rows = json_lines(&out.stdout);
    assert_eq!(rows.len(), 1, "{}{}", out.stdout, out.stderr);
    assert!(
        rows[0]["path"]
            .as_str()
            .unwrap()
            .starts_with(elsewhere.to_str().unwrap())
    );
    let out = h.env.mf_env(
        &["sessions", "--json", "--agent", "pi"],
        &[
            ("HOME", h.home.to_str().unwrap()),
            (
                "PI_CODING_AGENT_SESSION_DIR",
                h.env.path("pi-sessions").to_str().unwrap(),
            ),
        ],
    );
    assert_eq!(paths(&json_lines(&out.stdout)), vec![pi_flat]);
}

#[test]
fn compact_latest_compacts_the_newest_session_of_that_agent_there() {
    let h = fake_home();
    let before: Vec<Vec<u8>> = [&h.claude_under, &h.claude_dash, &h.claude_compacted]
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    let out = h.mf(&[
        "compact",
        "--latest",
        "claude",
        "--cwd",
        h.under.to_str().unwrap(),
        "--model",
        "extractive",
        "--trigger",
        "2",
        "--recent",
        "2",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rec = &json_lines(&out.stdout)[0];
    assert_eq!(
        rec["file"].as_str().unwrap(),
        h.claude_under.to_str().unwrap()
    );
    assert_eq!(rec["written"], true, "{rec}");
    assert!(
        std::fs::read(&h.claude_under)
            .unwrap()
            .starts_with(&before[0])
    );
    assert_eq!(std::fs::read(&h.claude_dash).unwrap(), before[1]);
    assert_eq!(std::fs::read(&h.claude_compacted).unwrap(), before[2]);
    // The list now says it is folded by mf.
    let out = h.mf(&[
        "sessions",
        "--json",
        "--cwd",
        h.under.to_str().unwrap(),
        "--agent",
        "claude",
    ]);
    assert_eq!(json_lines(&out.stdout)[0]["mfFolds"], 1, "{}", out.stdout);

    // No such session: refused (exit 1), saying where mf looked.
    let out = h.mf(&[
        "compact",
        "--latest",
        "codex",
        "--cwd",
        h.under.to_str().unwrap(),
        "--model",
        "extractive",
    ]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("no codex session found"),
        "{}",
        out.stderr
    );
}
