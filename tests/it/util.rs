//! Test harness: a temp dir, fixture copies, the real `mf` binary with a scrubbed environment,
//! and small transcript builders.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub struct TestEnv {
    pub dir: tempfile::TempDir,
    /// Environment every `mf` run here gets.
    pub vars: Vec<(&'static str, &'static str)>,
}

pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

impl Output {
    /// This run, after failing the test at the caller's line (with the exit code, stdout and
    /// stderr) unless it exited 0: for set-up steps whose success the test relies on.
    #[track_caller]
    pub fn ok(self) -> Self {
        assert_eq!(self.code, 0, "a set-up run of mf failed: {self:?}");
        self
    }
}

/// Run any command (not mf: use [`TestEnv::mf_ok`]) and fail the test at the caller's line, with
/// the command, its exit status, stdout and stderr, unless it succeeded.
#[track_caller]
pub fn run_ok(cmd: &mut Command) -> std::process::Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("could not run {cmd:?}: {e}"));
    check_ok(&format!("{cmd:?}"), out)
}

/// Fail the test at the caller's line unless `out` (of `what`) succeeded; returns it.
#[track_caller]
pub fn check_ok(what: &str, out: std::process::Output) -> std::process::Output {
    assert!(
        out.status.success(),
        "a set-up command failed: {what}\n{}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Whether the tests run as root (the effective user id is 0).
pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

impl TestEnv {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().expect("a temp dir"),
            vars: Vec::new(),
        }
    }

    /// A temp dir whose `mf` runs accept any summary the audit would call lossy
    /// (`MF_MIN_RETENTION=0`) or wrong (`MF_ALLOW_INVENTIONS=1`): for tests of what mf writes and
    /// hides, not of what a summary keeps.
    pub fn without_audit() -> Self {
        Self {
            vars: vec![("MF_MIN_RETENTION", "0"), ("MF_ALLOW_INVENTIONS", "1")],
            ..Self::new()
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Copy a committed fixture into the temp dir.
    pub fn copy_fixture(&self, name: &str) -> PathBuf {
        let dest = self.path(name);
        std::fs::copy(fixture(name), &dest).expect("copy fixture");
        let mut perms = std::fs::metadata(&dest).unwrap().permissions();
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(&dest, perms).unwrap();
        dest
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let p = self.path(name);
        std::fs::write(&p, text).expect("write");
        p
    }

    /// Run `mf` with only the given environment.
    #[must_use = "check the exit code, or run a set-up step with `mf_ok`"]
    pub fn mf(&self, args: &[&str]) -> Output {
        self.mf_env(args, &[])
    }

    /// Run `mf` as a set-up step: the test fails at the caller's line, showing the command, exit
    /// code, stdout and stderr, unless it exits 0.
    #[track_caller]
    pub fn mf_ok(&self, args: &[&str]) -> Output {
        self.mf_env_ok(args, &[])
    }

    /// [`Self::mf_env`] as a set-up step that must exit 0 (see [`Self::mf_ok`]).
    #[track_caller]
    pub fn mf_env_ok(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let out = self.mf_env(args, env);
        assert_eq!(
            out.code,
            0,
            "a set-up run failed: mf {}\n{out:?}",
            args.join(" ")
        );
        out
    }

    #[must_use = "check the exit code, or run a set-up step with `mf_env_ok`"]
    pub fn mf_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut cmd = self.command(args, env);
        let out = cmd.output().expect("run mf");
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).expect("utf-8 stdout"),
            stderr: String::from_utf8(out.stderr).expect("utf-8 stderr"),
        }
    }

    /// Run a shell script in the temp dir with only this environment's variables.
    #[must_use = "check the exit status, or run a set-up step with `sh_ok`"]
    pub fn sh(&self, script: &str) -> std::process::Output {
        Command::new("sh")
            .args(["-c", script])
            .current_dir(self.dir.path())
            .env_clear()
            .envs(self.vars.iter().copied())
            .output()
            .expect("run sh")
    }

    /// [`Self::sh`] as a set-up step: fails the test at the caller's line unless the script exits 0.
    #[track_caller]
    pub fn sh_ok(&self, script: &str) -> std::process::Output {
        check_ok(&format!("sh -c {script:?}"), self.sh(script))
    }

    pub fn command(&self, args: &[&str], env: &[(&str, &str)]) -> Command {
        let mut cmd = Command::new(mf_bin());
        cmd.args(args)
            .current_dir(self.dir.path())
            .env_clear()
            .stdin(Stdio::null());
        if let Ok(path) = std::env::var("PATH") {
            cmd.env("PATH", path);
        }
        cmd.env("NO_COLOR", "1");
        for (k, v) in self.vars.iter().chain(env) {
            cmd.env(k, v);
        }
        cmd
    }
}

/// The `mf` binary the tests run: this build, or `MF_TEST_BIN` (to run the suites against
/// another build, for example an old release a regression test must fail on).
pub fn mf_bin() -> String {
    std::env::var("MF_TEST_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_mf").to_string())
}

/// Whether a summary's `outcome` in a decision record says it was written: exactly one of the
/// documented words for a summary written (a chunk, a rollup, a cited summary nested in a later
/// one).
pub fn written_outcome(outcome: &serde_json::Value) -> bool {
    use mf::decision::SummaryOutcome;
    [
        SummaryOutcome::Written,
        SummaryOutcome::WrittenRollup,
        SummaryOutcome::WrittenNested,
    ]
    .iter()
    .any(|o| *outcome == o.to_string())
}

/// A temp dir holding a copy of the incident fixture, its path, and its original bytes.
pub fn incident() -> (TestEnv, PathBuf, Vec<u8>) {
    let env = TestEnv::new();
    let f = env.copy_fixture("incident-northwind.jsonl");
    let original = read(&f);
    (env, f, original)
}

pub fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).expect("read file")
}

pub fn sha(bytes: &[u8]) -> u64 {
    mf::digest::fnv1a64(bytes)
}

/// One chat line.
pub fn line(id: &str, role: &str, content: &str) -> String {
    serde_json::json!({"id": id, "role": role, "content": content}).to_string()
}

/// A plain conversation of `turns` user/assistant pairs with ids `u{n}` / `a{n}`, after a system line.
pub fn conversation(turns: usize) -> String {
    let mut s = line("sys", "system", "You are a helpful travel planner.") + "\n";
    for n in 1..=turns {
        s += &line(
            &format!("u{n}"),
            "user",
            &format!(
                "Question {n}: what about the hotel in city number {n}? I need it booked for {n} nights starting 2026-12-{:02}.",
                n % 28 + 1
            ),
        );
        s.push('\n');
        s += &line(
            &format!("a{n}"),
            "assistant",
            &format!(
                "Answer {n}: Hotel Aurora {n} in city {n} costs ${} a night; I booked {n} nights under confirmation ABC-{n:04}. Breakfast is included and checkout is at 11:00.",
                100 + n
            ),
        );
        s.push('\n');
    }
    s
}

/// Parse stdout as JSON lines.
pub fn json_lines(s: &str) -> Vec<serde_json::Value> {
    s.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// The parsed lines of a transcript file.
pub fn file_lines(p: &Path) -> Vec<serde_json::Value> {
    json_lines(&String::from_utf8(read(p)).unwrap())
}

/// The ids a summary line covers, resolved by hand from its coverage ranges (an independent
/// reading: every message line whose number lies in a range; its `id`, else `line-N`).
pub fn covered_ids(file: &Path, summary: &serde_json::Value) -> Vec<String> {
    let text = String::from_utf8(read(file)).unwrap();
    let ranges = summary["mf"]["coverage"]["lines"]
        .as_array()
        .expect("coverage ranges")
        .iter()
        .map(|r| (r[0].as_u64().unwrap(), r[1].as_u64().unwrap()))
        .collect::<Vec<_>>();
    let mut out = Vec::new();
    for (k, l) in text.split('\n').enumerate() {
        let n = k as u64 + 1;
        if !ranges.iter().any(|&(a, b)| a <= n && n <= b) {
            continue;
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(l) else {
            continue;
        };
        if v.get("role").is_none() {
            continue;
        }
        out.push(
            v["id"]
                .as_str()
                .map_or_else(|| format!("line-{n}"), str::to_string),
        );
    }
    out
}

/// The mf summary lines of a file, in order.
pub fn summary_lines(file: &Path) -> Vec<serde_json::Value> {
    file_lines(file)
        .into_iter()
        .filter(|v| v["mf"]["kind"] == "summary")
        .collect()
}

/// The ids of a file's last summary's coverage.
pub fn last_covered(file: &Path) -> Vec<String> {
    let s = summary_lines(file);
    covered_ids(file, s.last().expect("a summary"))
}

/// Set a file's modification time an hour back: the live-session guard then lets mf write.
pub fn age(p: &Path) {
    let f = std::fs::File::options().write(true).open(p).unwrap();
    f.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(3600))
        .unwrap();
}

/// The parsed lines of some bytes, by line number (1-based), blank lines left out.
pub fn numbered(bytes: &[u8]) -> Vec<(u32, serde_json::Value)> {
    std::str::from_utf8(bytes)
        .unwrap()
        .split('\n')
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(k, l)| (k as u32 + 1, serde_json::from_str(l).unwrap()))
        .collect()
}

/// pi's active path: `parentId` from the last entry (pi's leaf) to the root, root first.
pub fn pi_path(lines: &[(u32, serde_json::Value)]) -> Vec<(u32, serde_json::Value)> {
    let by_id: std::collections::HashMap<&str, &(u32, serde_json::Value)> = lines
        .iter()
        .filter_map(|l| Some((l.1["id"].as_str()?, l)))
        .collect();
    let mut out = Vec::new();
    let mut cur = lines.last().and_then(|(_, v)| v["id"].as_str());
    while let Some(id) = cur {
        let l = by_id[id];
        out.push(l.clone());
        cur = l.1["parentId"].as_str();
    }
    out.reverse();
    out
}

/// The shared corpus directory from `MF_CORPUS`. Tests that need it are
/// `#[ignore = "needs MF_CORPUS …"]` (a fresh clone reports them ignored, never passed);
/// `.ci/run` sets it and runs them with `--include-ignored`, where unset or missing fails.
#[track_caller]
pub fn corpus_dir() -> std::path::PathBuf {
    let dir = std::env::var_os("MF_CORPUS").map(std::path::PathBuf::from).expect(
        "this test needs MF_CORPUS=<path to ../shared/corpus> (run it as .ci/run does, with --include-ignored)",
    );
    assert!(
        dir.is_dir(),
        "MF_CORPUS={} is not a directory",
        dir.display()
    );
    dir
}

/// One `mf` run as a snapshot shows it, uv-style: the command, the exit code, stdout and stderr
/// together, with only what truly varies between runs filtered (see [`snapshot_filter`]).
pub fn snapshot_text(env: &TestEnv, args: &[&str], out: &Output) -> String {
    let text = format!(
        "$ mf {}\nexit: {}\n----- stdout -----\n{}\n----- stderr -----\n{}",
        args.join(" "),
        out.code,
        out.stdout,
        out.stderr
    );
    snapshot_filter(env, &text)
}

/// What varies between two runs of the same command on the same bytes, and nothing else: the
/// temp dir's path, mf's version, the milliseconds since the epoch a record carries
/// (`summarizedAtMs`, `atMs`), a summary's fingerprint, and how many seconds ahead a future modification time is. Everything else in a snapshot is compared byte for byte.
pub fn snapshot_filter(env: &TestEnv, text: &str) -> String {
    let mut s = text.to_string();
    let dir = env.dir.path();
    let mut dirs = vec![dir.display().to_string()];
    if let Ok(c) = dir.canonicalize() {
        dirs.push(c.display().to_string());
    }
    dirs.sort_by_key(|d| std::cmp::Reverse(d.len()));
    for d in dirs {
        s = s.replace(&d, "[TEMP]");
    }
    s = s.replace(env!("CARGO_PKG_VERSION"), "[VERSION]");
    let ms = regex::Regex::new(r#""(summarizedAtMs|atMs)":[0-9]+"#).unwrap();
    let s = ms.replace_all(&s, r#""$1":"[MS]""#);
    // A summary's label names its file by its path in the temp dir, and so its content's
    // fingerprint differs run to run.
    let fp = regex::Regex::new(r#""fingerprint":"[0-9a-f]+""#).unwrap();
    let s = fp.replace_all(&s, r#""fingerprint":"[FP]""#);
    // How far in the future a file's modification time is (the live-session refusal).
    let ahead = regex::Regex::new(r"[0-9]+ s in the future").unwrap();
    ahead.replace_all(&s, "[N] s in the future").into_owned()
}

/// insta's settings for the snapshots under `tests/it/snapshots/` (named by the test, no module
/// prefix). A changed or missing snapshot fails the test: `.ci/run` sets `INSTA_UPDATE=no` and
/// `CI`, so nothing is written there; locally a `.snap.new` appears beside the old one for review
/// (`INSTA_UPDATE=always cargo test …` accepts, then read `git diff tests/it/snapshots/`).
pub fn snapshot_settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path("snapshots");
    s.set_prepend_module_to_snapshot(false);
    s
}

/// A run whose exit code is in its snapshot already: its [`Output`] may be looked at or dropped.
pub struct Snapped(pub Output);

impl std::ops::Deref for Snapped {
    type Target = Output;
    fn deref(&self) -> &Output {
        &self.0
    }
}

/// Run `mf` and snapshot what it showed (command, exit code, stdout, stderr) under `name`;
/// returns the run's [`Output`] (as a [`Snapped`]) for further checks.
/// `mf_snapshot!("name", env, ["recall", "x.jsonl"])`, or with extra environment:
/// `mf_snapshot!("name", env, [...], &[("MF_RECENT", "3")])`.
#[macro_export]
macro_rules! mf_snapshot {
    ($name:expr, $env:expr, [$($arg:expr),* $(,)?]) => {
        $crate::mf_snapshot!($name, $env, [$($arg),*], &[])
    };
    ($name:expr, $env:expr, [$($arg:expr),* $(,)?], $vars:expr) => {{
        let env: &$crate::util::TestEnv = &$env;
        let args: &[&str] = &[$($arg),*];
        let out = env.mf_env(args, $vars);
        let text = $crate::util::snapshot_text(env, args, &out);
        $crate::util::snapshot_settings().bind(|| ::insta::assert_snapshot!($name, text));
        $crate::util::Snapped(out)
    }};
}

/// A copy of fixture `name`, aged, in an environment that accepts whatever the audit says (for
/// tests about what mf reads and writes, not what a summary keeps).
pub fn aged_session(name: &str) -> (TestEnv, PathBuf) {
    let env = TestEnv::without_audit();
    let p = env.copy_fixture(name);
    age(&p);
    (env, p)
}

/// `mf explain NAME --json` (which must exit 0): its object.
#[track_caller]
pub fn explain_json(env: &TestEnv, name: &str) -> serde_json::Value {
    json_lines(&env.mf_ok(&["explain", name, "--json"]).stdout).remove(0)
}

/// `mf recall NAME --format chat` (which must exit 0): the messages a model is sent.
#[track_caller]
pub fn recall_chat(env: &TestEnv, name: &str) -> Vec<serde_json::Value> {
    json_lines(&env.mf_ok(&["recall", name, "--format", "chat"]).stdout)
}
