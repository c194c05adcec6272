//! `mf hook claude-code` (Claude Code's PreCompact and SessionStart hooks) and `mf hook
//! install|uninstall claude-code|codex`, on fixtures and a fake HOME.

use std::io::Write;
use std::process::Stdio;

use serde_json::Value;

use crate::util::{TestEnv, fixture, read};

/// Run `mf hook claude-code` with `input` on stdin (HOME in the temp dir, so mf's hook state
/// is there).
pub(crate) fn run_hook(env: &TestEnv, input: &str) -> (i32, String, String) {
    let mut cmd = env.command(
        &["hook", "claude-code"],
        &[("HOME", env.path("home").to_str().unwrap())],
    );
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The compacted fixture as it is when Claude Code's SessionStart hook runs: up to its summary
/// row (line 27), nothing of the user's after it.
fn at_compaction(env: &TestEnv) -> std::path::PathBuf {
    let text = std::fs::read_to_string(fixture("claude-compacted.jsonl")).unwrap();
    let head: String = text.lines().take(27).map(|l| format!("{l}\n")).collect();
    assert!(head.lines().last().unwrap().contains("isCompactSummary"));
    env.write("claude-at-compaction.jsonl", &head)
}

fn event(name: &str, path: &std::path::Path, extra: &str) -> String {
    format!(
        r#"{{"session_id":"2e9d4a70-51c3-4b8f-a6d2-8f1c0e3b9d47","transcript_path":{},"cwd":"/home/dev/src/billing-worker","hook_event_name":"{name}"{extra}}}"#,
        serde_json::to_string(path.to_str().unwrap()).unwrap()
    )
}

#[test]
fn pre_compact_prints_the_salient_items_claude_is_about_to_summarize() {
    let env = TestEnv::new();
    let f = env.copy_fixture("claude-compacted.jsonl");
    let before = read(&f);
    let (code, out, err) = run_hook(
        &env,
        &event(
            "PreCompact",
            &f,
            r#","trigger":"manual","custom_instructions":"""#,
        ),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("mf keep-list:"), "{out}");
    // Verbatim, from what Claude is shown now (after its earlier compaction), most salient first:
    // the user's own words lead.
    let items: Vec<&str> = out.lines().skip(1).collect();
    assert!(
        items[0].starts_with("- T") && items[0].contains(" user: \""),
        "{out}"
    );
    assert!(
        out.contains("schedule it nightly at 03:10 UTC next to the other jobs"),
        "{out}"
    );
    assert!(
        out.contains("/home/dev/src/billing-worker/internal/jobs/cleanup_webhooks.go"),
        "{out}"
    );
    // Nothing from before Claude's own compaction (turn 1's handler.go edit is summarized there).
    assert!(!out.contains("T1 "), "{out}");
    // Within Claude Code's 10,000-character limit on a PreCompact hook's output.
    assert!(out.chars().count() < 10_000);
    assert_eq!(read(&f), before, "the hook never writes the session");
}

#[test]
fn session_start_after_a_compaction_reports_what_the_summary_lost_with_pointers() {
    let env = TestEnv::new();
    let f = at_compaction(&env);
    let before = read(&f);
    let (code, out, err) = run_hook(
        &env,
        &event(
            "SessionStart",
            &f,
            r#","source":"compact","model":"claude-sonnet-4-5""#,
        ),
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        ctx.starts_with("mf audit of the compaction summary above (line 27)"),
        "{ctx}"
    );
    // The summary at line 27 does not name the migration file turn 2 wrote: reported verbatim,
    // with its turn and the line that says it.
    let lost = ctx
        .lines()
        .find(|l| l.contains("migrations/0042_processed_webhooks.sql"))
        .unwrap_or_else(|| panic!("{ctx}"));
    assert!(lost.starts_with("- T2 "), "{lost}");
    let at: usize = lost
        .rsplit("(@")
        .next()
        .unwrap()
        .trim_end_matches(')')
        .parse()
        .unwrap();
    let text = std::fs::read_to_string(&f).unwrap();
    let line = text.lines().nth(at - 1).unwrap();
    assert!(
        line.contains("0042_processed_webhooks.sql"),
        "line {at}: {line}"
    );
    // What the summary kept is not listed.
    let summary = text.lines().nth(26).unwrap();
    assert!(summary.contains("isCompactSummary"));
    assert!(
        summary.contains("processed_webhooks"),
        "the fixture's summary names the table"
    );
    assert!(!ctx.contains("- T1 user"), "{ctx}");
    assert_eq!(read(&f), before, "the hook never writes the session");
}

#[test]
fn the_keep_list_claude_code_echoes_into_the_session_does_not_count_as_kept() {
    // Claude Code 2.1.332 records a PreCompact hook's output after its summary as a
    // `<local-command-stdout>` row: mf's own words there are not what the summary kept.
    let env = TestEnv::new();
    let f = at_compaction(&env);
    let text = std::fs::read_to_string(&f).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let row = serde_json::json!({
        "parentUuid": last["uuid"], "isSidechain": false, "type": "user",
        "message": {"role": "user", "content": "<local-command-stdout>Compacted\nPreCompact [mf hook claude-code] completed successfully: mf keep-list: the conversation you are summarizing states the items below\n- T2 wrote /home/dev/src/billing-worker/migrations/0042_processed_webhooks.sql</local-command-stdout>"},
        "uuid": "5594d6d6-4bb5-4f5c-8fcd-16b2a991205d", "timestamp": "2026-11-30T10:00:00.000Z",
        "sessionId": last["sessionId"], "cwd": last["cwd"], "version": "2.1.332", "userType": "external"
    });
    std::fs::write(&f, format!("{text}{row}\n")).unwrap();
    let (code, out, err) = run_hook(&env, &event("SessionStart", &f, r#","source":"compact""#));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        ctx.contains("migrations/0042_processed_webhooks.sql"),
        "{ctx}"
    );
}

#[test]
fn session_start_waits_for_the_summary_claude_code_is_still_writing() {
    // Claude Code 2.1.332 runs the SessionStart hook before its writer has flushed the new
    // compaction rows: the hook reads again until they are there (and does not report on an
    // older compaction that prompts of the user's followed).
    let env = TestEnv::new();
    let text = std::fs::read_to_string(fixture("claude-compacted.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let f = env.write(
        "late.jsonl",
        &lines[..26]
            .iter()
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
    );
    let summary = format!("{}\n", lines[26]);
    let path = f.clone();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(700));
        use std::io::Write;
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(summary.as_bytes())
            .unwrap();
    });
    let t = std::time::Instant::now();
    let (code, out, err) = run_hook(&env, &event("SessionStart", &f, r#","source":"compact""#));
    writer.join().unwrap();
    assert_eq!(code, 0, "{err}");
    assert!(t.elapsed() >= std::time::Duration::from_millis(600));
    assert!(out.contains("(line 27)"), "{out}");
    // The whole fixture: its compaction is followed by the user's prompts, so it is not the one
    // just written; after the wait, nothing is reported.
    let old = env.copy_fixture("claude-compacted.jsonl");
    let (code, out, _) = run_hook(&env, &event("SessionStart", &old, r#","source":"compact""#));
    assert_eq!((code, out.as_str()), (0, ""));
}

#[test]
fn post_compact_hands_claude_codes_new_summary_to_the_session_start_that_follows() {
    // Claude Code 2.1.332 writes its compaction rows only after the SessionStart hooks ran; it
    // gives the summary to PostCompact first. mf keeps it in its cache (not the session) and
    // audits it at SessionStart against what Claude was shown.
    let env = TestEnv::new();
    let text = std::fs::read_to_string(fixture("claude-compacted.jsonl")).unwrap();
    let f = env.write(
        "before.jsonl",
        &text
            .lines()
            .take(25)
            .map(|l| format!("{l}\n"))
            .collect::<String>(),
    );
    let before = read(&f);
    let summary = "The user is building webhook dedup in /home/dev/src/billing-worker/internal/webhook/handler.go.";
    let post = event(
        "PostCompact",
        &f,
        &format!(
            r#","trigger":"manual","compact_summary":{}"#,
            serde_json::to_string(summary).unwrap()
        ),
    );
    let (code, out, err) = run_hook(&env, &post);
    assert_eq!((code, out.as_str()), (0, ""), "{err}");
    let (code, out, err) = run_hook(&env, &event("SessionStart", &f, r#","source":"compact""#));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        ctx.starts_with("mf audit of the compaction summary above:"),
        "{ctx}"
    );
    assert!(
        ctx.contains("migrations/0042_processed_webhooks.sql"),
        "{ctx}"
    );
    assert!(
        !ctx.contains("edited /home/dev/src/billing-worker/internal/webhook/handler.go"),
        "kept: {ctx}"
    );
    assert_eq!(read(&f), before, "the session is never written");
    // Taken once: the next SessionStart has nothing kept (and the file no summary of Claude's).
    let (code, out, _) = run_hook(&env, &event("SessionStart", &f, r#","source":"compact""#));
    assert_eq!((code, out.as_str()), (0, ""));
}

#[test]
fn the_hook_is_silent_and_succeeds_on_everything_else() {
    let env = TestEnv::new();
    let f = env.copy_fixture("claude-compacted.jsonl");
    let missing = env.path("gone.jsonl");
    for input in [
        event("SessionStart", &f, r#","source":"startup""#),
        event("SessionStart", &f, r#","source":"resume""#),
        event("UserPromptSubmit", &f, r#","prompt":"hi""#),
        event("PreCompact", &missing, r#","trigger":"auto""#),
        event("SessionStart", &missing, r#","source":"compact""#),
        "not json".to_string(),
        String::new(),
        r#"{"hook_event_name":"PreCompact"}"#.to_string(),
    ] {
        let (code, out, _) = run_hook(&env, &input);
        assert_eq!(code, 0, "{input}");
        assert_eq!(out, "", "{input}");
    }
    // A session without a compaction of Claude's: nothing to report after "compact".
    let plain = env.copy_fixture("claude-session.jsonl");
    let (code, out, _) = run_hook(
        &env,
        &event("SessionStart", &plain, r#","source":"compact""#),
    );
    assert_eq!((code, out.as_str()), (0, ""));
    // PostCompact prints nothing: what it keeps is reported with the next prompt.
    let (code, out, _) = run_hook(
        &env,
        &event(
            "PostCompact",
            &f,
            r#","trigger":"auto","compact_summary":"x""#,
        ),
    );
    assert_eq!((code, out.as_str()), (0, ""));
}

#[test]
#[ignore = "needs MF_CORPUS (the shared corpus; .ci/run sets it)"]
fn the_hook_answers_well_within_its_timeout_on_the_largest_corpus_session() {
    let dir = crate::util::corpus_dir().join("claude-code");
    let largest = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .max_by_key(|p| std::fs::metadata(p).unwrap().len())
        .unwrap();
    let env = TestEnv::new();
    // The session as it is when SessionStart(compact) runs: up to Claude's last summary row, the
    // model not yet gone on from it (a summary the conversation went on from is an earlier
    // compaction's, on which the hook says nothing).
    let text = std::fs::read_to_string(&largest).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let last_summary = lines
        .iter()
        .rposition(|l| l.contains("\"isCompactSummary\":true"))
        .expect("the largest Claude Code corpus session has a compaction");
    let at_compaction = env.write("largest.jsonl", &lines[..=last_summary].concat());
    for (name, extra, path) in [
        ("PreCompact", r#","trigger":"auto""#, &largest),
        ("SessionStart", r#","source":"compact""#, &at_compaction),
    ] {
        let largest = path;
        let t = std::time::Instant::now();
        let mut cmd = env.command(&["--no-cache", "hook", "claude-code"], &[]);
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(event(name, largest, extra).as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let took = t.elapsed();
        assert_eq!(out.status.code(), Some(0));
        assert!(
            !out.stdout.is_empty(),
            "{name} on {} said nothing",
            largest.display()
        );
        // The hook is installed with a 60 s timeout (Claude Code's default is 600 s); even a
        // debug build answers within it (a release build: 0.5 s and 1.8 s on this 3 MB session).
        assert!(
            took.as_secs() < 45,
            "{name} took {took:?} on {}",
            largest.display()
        );
        eprintln!("{name}: {took:?} on {}", largest.display());
    }
}

fn home_env() -> (TestEnv, String) {
    let env = TestEnv::new();
    let home = env.path("home");
    std::fs::create_dir_all(&home).unwrap();
    let h = home.to_str().unwrap().to_string();
    (env, h)
}

#[test]
fn install_claude_code_merges_both_hooks_idempotently_with_a_backup_and_uninstall_removes_them() {
    let (env, home) = home_env();
    let settings = env.path("home/.claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let original = r#"{
  "model": "opus",
  "hooks": {
    "PreCompact": [{"matcher": "auto", "hooks": [{"type": "command", "command": "echo mine"}]}]
  }
}
"#;
    std::fs::write(&settings, original).unwrap();
    let out = env.mf_env(&["hook", "install", "claude-code"], &[("HOME", &home)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: Value = serde_json::from_slice(&read(&settings)).unwrap();
    assert_eq!(v["model"], "opus");
    let pre = v["hooks"]["PreCompact"].as_array().unwrap();
    assert_eq!(pre.len(), 2, "{v}");
    assert_eq!(pre[0]["hooks"][0]["command"], "echo mine");
    let cmd = pre[1]["hooks"][0]["command"].as_str().unwrap();
    assert!(
        cmd.ends_with(" hook claude-code # added by mf hook install"),
        "{cmd}"
    );
    assert_eq!(pre[1]["hooks"][0]["type"], "command");
    let start = &v["hooks"]["SessionStart"][0];
    assert_eq!(start["matcher"], "");
    assert_eq!(start["hooks"][0]["command"], cmd);
    // The command runs this mf.
    let exe = std::fs::canonicalize(crate::util::mf_bin()).unwrap();
    assert!(cmd.starts_with(exe.to_str().unwrap()), "{cmd}");
    let backup = env.path("home/.claude/settings.json.mf-backup");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), original);

    // Again: nothing changes.
    let once = read(&settings);
    let out = env.mf_env(&["hook", "install", "claude-code"], &[("HOME", &home)]);
    assert_eq!(out.code, 0);
    assert!(
        out.stderr.contains("already has mf's hooks"),
        "{}",
        out.stderr
    );
    assert_eq!(read(&settings), once);

    // Uninstall: the user's own hook stays, mf's go.
    let out = env.mf_env(&["hook", "uninstall", "claude-code"], &[("HOME", &home)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let after: Value = serde_json::from_slice(&read(&settings)).unwrap();
    assert_eq!(after, serde_json::from_str::<Value>(original).unwrap());
    let out = env.mf_env(&["hook", "uninstall", "claude-code"], &[("HOME", &home)]);
    assert!(out.stderr.contains("has no mf hooks"), "{}", out.stderr);

    // A settings file that is not JSON is refused, untouched.
    std::fs::write(&settings, "{ \"model\": ").unwrap();
    let out = env.mf_env(&["hook", "install", "claude-code"], &[("HOME", &home)]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("settings.json"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{ \"model\": ");
}

#[test]
fn install_claude_code_project_writes_the_projects_settings() {
    let (env, home) = home_env();
    let out = env.mf_env(
        &["hook", "install", "claude-code", "--project"],
        &[("HOME", &home)],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: Value = serde_json::from_slice(&read(&env.path(".claude/settings.json"))).unwrap();
    assert_eq!(v["hooks"]["PreCompact"][0]["matcher"], "");
    assert!(!env.path("home/.claude/settings.json").exists());
    // Claude Code's settings directory variable is honoured for --user.
    let dir = env.path("cc");
    let out = env.mf_env(
        &["hook", "install", "claude-code", "--user"],
        &[
            ("HOME", &home),
            ("CLAUDE_CONFIG_DIR", dir.to_str().unwrap()),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(dir.join("settings.json").exists());
}

#[test]
fn install_codex_writes_a_compact_prompt_file_and_the_key_and_uninstall_restores_the_config() {
    let (env, home) = home_env();
    let config = env.path("home/.codex/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let original = "# my config\nmodel = \"gpt-5\"\n\n[profiles.fast]\nmodel = \"o4-mini\"\n";
    std::fs::write(&config, original).unwrap();
    let out = env.mf_env(&["hook", "install", "codex"], &[("HOME", &home)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr.contains("compacts remotely"),
        "says what remote compaction ignores: {}",
        out.stderr
    );
    let text = std::fs::read_to_string(&config).unwrap();
    let prompt = env.path("home/.codex/mf-compact-prompt.md");
    let t: toml::Table = toml::from_str(&text).unwrap();
    assert_eq!(
        t["experimental_compact_prompt_file"].as_str(),
        Some(prompt.to_str().unwrap())
    );
    assert_eq!(t["model"].as_str(), Some("gpt-5"));
    assert!(
        text.ends_with(original),
        "the user's lines stay as they were: {text}"
    );
    let p = std::fs::read_to_string(&prompt).unwrap();
    assert!(
        p.contains("Kept verbatim") && p.contains("copied verbatim"),
        "{p}"
    );
    assert_eq!(
        std::fs::read_to_string(env.path("home/.codex/config.toml.mf-backup")).unwrap(),
        original
    );
    let once = read(&config);
    let out = env.mf_env(&["hook", "install", "codex"], &[("HOME", &home)]);
    assert_eq!(out.code, 0);
    assert_eq!(read(&config), once);
    let out = env.mf_env(&["hook", "uninstall", "codex"], &[("HOME", &home)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), original);
    assert!(!prompt.exists());
    // A compact prompt of the user's own is not overwritten.
    std::fs::write(&config, "compact_prompt = \"mine\"\n").unwrap();
    let out = env.mf_env(&["hook", "install", "codex"], &[("HOME", &home)]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("compact_prompt"), "{}", out.stderr);
    let _ = fixture("claude-session.jsonl");
}

#[test]
fn the_report_goes_with_the_next_prompt_when_session_start_came_first() {
    // Claude Code 2.1.332 runs SessionStart(compact) before PostCompact: the kept summary is
    // reported with the next prompt (UserPromptSubmit), on the row that has reached the file.
    let env = TestEnv::new();
    let f = at_compaction(&env);
    let (code, out, _) = run_hook(
        &env,
        &event(
            "PostCompact",
            &f,
            r#","trigger":"manual","compact_summary":"s""#,
        ),
    );
    assert_eq!((code, out.as_str()), (0, ""));
    let (code, out, err) = run_hook(&env, &event("UserPromptSubmit", &f, r#","prompt":"next""#));
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(ctx.contains("(line 27)"), "{ctx}");
    assert!(
        ctx.contains("migrations/0042_processed_webhooks.sql"),
        "{ctx}"
    );
    // Once only.
    let (_, out, _) = run_hook(&env, &event("UserPromptSubmit", &f, r#","prompt":"again""#));
    assert_eq!(out, "");
}

// ---------------------------------------------------------------------------------------------
// mf's MCP server, registered by `mf hook install`

/// Whether `path`'s `mcpServers.mf` runs this mf as `mf mcp --agent AGENT`.
fn registers_mf(path: &std::path::Path, agent: &str) -> bool {
    let Ok(v) = serde_json::from_slice::<Value>(&read(path)) else {
        return false;
    };
    let exe = std::fs::canonicalize(crate::util::mf_bin()).unwrap();
    let s = &v["mcpServers"]["mf"];
    s["type"] == "stdio"
        && s["command"] == exe.to_str().unwrap()
        && s["args"] == serde_json::json!(["mcp", "--agent", agent])
        && s["env"] == serde_json::json!({})
}

#[test]
fn install_and_uninstall_claude_code_give_every_file_back_byte_for_byte() {
    let cases: [(&str, Option<&str>); 7] = [
        ("no file", None),
        (
            "other servers",
            Some(
                "{\n  \"numStartups\": 3,\n  \"mcpServers\": {\n    \"github\": {\n      \"type\": \"stdio\",\n      \"command\": \"gh-mcp\",\n      \"args\": [],\n      \"env\": {}\n    }\n  },\n  \"projects\": {}\n}",
            ),
        ),
        (
            "CRLF",
            Some("{\r\n  \"theme\": \"dark\",\r\n  \"tipsHistory\": {\"a\": 1}\r\n}\r\n"),
        ),
        (
            "big integer",
            Some("{\"userID\": 123456789012345678901234567890, \"ratio\": 1.50E+3}"),
        ),
        (
            "duplicate keys",
            Some(
                "{\"mcpServers\": {\"a\": {}}, \"x\": 1, \"x\": 2, \"mcpServers\": {\"b\": {}, \"b\": {\"command\": \"b2\"}}}\n",
            ),
        ),
        (
            "escapes",
            Some("{\"name\": \"caf\\u00e9 \\ud83d\\ude00 \\udc00\", \"mcp\\u0053ervers\": {}}\n"),
        ),
        ("odd spacing", Some("\n\t{ \"a\" :[ 1 ,2 ] }  \n\n")),
    ];
    for (what, original) in cases {
        let (env, home) = home_env();
        let file = env.path("home/.claude.json");
        let settings = env.path("home/.claude/settings.json");
        if let Some(text) = original {
            std::fs::write(&file, text).unwrap();
        }
        let run = |args: &[&str]| {
            let mut all = vec!["hook"];
            all.extend(args);
            let out = env.mf_env(&all, &[("HOME", &home)]);
            assert_eq!(out.code, 0, "{what}: {}", out.stderr);
            out
        };
        run(&["install", "claude-code"]);
        let installed = read(&file);
        if what == "escapes" || what == "duplicate keys" {
            // serde_json would read these differently from Claude Code: the edit is checked as text.
            let text = String::from_utf8(installed.clone()).unwrap();
            assert!(text.contains(r#""mf": {"type": "stdio""#), "{what}: {text}");
        } else {
            assert!(
                registers_mf(&file, "claude"),
                "{what}: {}",
                String::from_utf8_lossy(&installed)
            );
        }
        if what == "CRLF" {
            assert!(
                !String::from_utf8_lossy(&installed)
                    .replace("\r\n", "")
                    .contains('\n')
            );
        }
        // Idempotent.
        let out = run(&["install", "claude-code"]);
        assert!(
            out.stderr.contains("already registers mf's MCP server"),
            "{what}: {}",
            out.stderr
        );
        assert_eq!(read(&file), installed, "{what}");
        run(&["uninstall", "claude-code"]);
        match original {
            Some(text) => assert_eq!(read(&file), text.as_bytes(), "{what}"),
            None => assert!(!file.exists(), "{what}: mf created it, mf removes it"),
        }
        assert!(!settings.exists(), "{what}: the settings mf created go too");
        let out = run(&["uninstall", "claude-code"]);
        assert!(
            out.stderr.contains("has no MCP server of mf's"),
            "{what}: {}",
            out.stderr
        );
    }
}

#[test]
fn install_claude_code_edits_a_symlinked_file_through_the_link_and_refuses_a_symlinked_backup() {
    let (env, home) = home_env();
    let target = env.path("dotfiles/claude.json");
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    let original = "{\r\n  \"theme\": \"light\"\r\n}\r\n";
    std::fs::write(&target, original).unwrap();
    let link = env.path("home/.claude.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    // The settings too, symlinked, CRLF: given back byte for byte.
    let settings_target = env.path("dotfiles/settings.json");
    let settings_original = "{\r\n  \"model\": \"opus\",\r\n  \"n\": 1.0\r\n}\r\n";
    std::fs::write(&settings_target, settings_original).unwrap();
    std::fs::create_dir_all(env.path("home/.claude")).unwrap();
    let settings = env.path("home/.claude/settings.json");
    std::os::unix::fs::symlink(&settings_target, &settings).unwrap();

    let out = env.mf_env(&["hook", "install", "claude-code"], &[("HOME", &home)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert!(
        settings
            .symlink_metadata()
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(registers_mf(&target, "claude"));
    let v: Value = serde_json::from_slice(&read(&settings_target)).unwrap();
    assert!(v["hooks"]["PreCompact"].is_array());
    let out = env.mf_env(&["hook", "uninstall", "claude-code"], &[("HOME", &home)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(read(&target), original.as_bytes());
    assert_eq!(read(&settings_target), settings_original.as_bytes());

    // A backup path that is a symlink: refused, named, and nothing is written.
    let elsewhere = env.path("elsewhere");
    std::fs::write(&elsewhere, "keep me").unwrap();
    let backup = env.path("home/.claude.json.mf-backup");
    let _ = std::fs::remove_file(&backup);
    std::os::unix::fs::symlink(&elsewhere, &backup).unwrap();
    let out = env.mf_env(&["hook", "install", "claude-code"], &[("HOME", &home)]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(backup.to_str().unwrap()),
        "{}",
        out.stderr
    );
    assert_eq!(std::fs::read_to_string(&elsewhere).unwrap(), "keep me");
    assert_eq!(read(&target), original.as_bytes());
    assert_eq!(read(&settings_target), settings_original.as_bytes());
}

#[test]
fn install_claude_code_refuses_an_mf_server_of_the_users_own_and_dry_run_writes_nothing() {
    let (env, home) = home_env();
    let file = env.path("home/.claude.json");
    let theirs = "{\"mcpServers\": {\"mf\": {\"type\": \"stdio\", \"command\": \"mf\", \"args\": [\"mcp\", \"--agent\", \"claude\"], \"env\": {}}}}\n";
    std::fs::write(&file, theirs).unwrap();
    let out = env.mf_env(&["hook", "install", "claude-code"], &[("HOME", &home)]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("MCP server named `mf` that mf did not write"),
        "{}",
        out.stderr
    );
    assert_eq!(read(&file), theirs.as_bytes());
    assert!(
        !env.path("home/.claude/settings.json").exists(),
        "nothing written"
    );
    // Uninstall leaves it be (and still takes out what is mf's).
    let out = env.mf_env(&["hook", "uninstall", "claude-code"], &[("HOME", &home)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("left as it is"), "{}", out.stderr);
    assert_eq!(read(&file), theirs.as_bytes());

    // --dry-run: says what it would write, writes nothing.
    std::fs::remove_file(&file).unwrap();
    let out = env.mf_env(
        &["hook", "install", "claude-code", "--dry-run"],
        &[("HOME", &home)],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains("settings.json would be:"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("hook claude-code"), "{}", out.stdout);
    assert!(
        out.stdout.contains(
            ".claude.json (user scope): mcpServers would gain \"mf\": {\"type\": \"stdio\""
        ),
        "{}",
        out.stdout
    );
    assert!(!file.exists() && !env.path("home/.claude").exists());
    let out = env.mf_env(
        &["hook", "install", "codex", "--dry-run"],
        &[("HOME", &home)],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("mcp_servers.mf.args = [\"mcp\", \"--agent\", \"codex\"]"),
        "{}",
        out.stdout
    );
    assert!(!env.path("home/.codex").exists());
}

#[test]
fn install_claude_code_registers_in_claude_config_dir_and_in_the_projects_mcp_json() {
    let (env, home) = home_env();
    let dir = env.path("cc");
    let out = env.mf_env(
        &["hook", "install", "claude-code"],
        &[
            ("HOME", &home),
            ("CLAUDE_CONFIG_DIR", dir.to_str().unwrap()),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(registers_mf(&dir.join(".claude.json"), "claude"));
    assert!(!env.path("home/.claude.json").exists());
    // The tools only read: allowed, so a non-interactive `claude -p` may call them.
    let settings: serde_json::Value =
        serde_json::from_slice(&read(&dir.join("settings.json"))).unwrap();
    let allow = settings["permissions"]["allow"].as_array().unwrap();
    assert_eq!(
        allow.iter().filter(|r| *r == "mcp__mf").count(),
        1,
        "{settings}"
    );
    let again = env.mf_env(
        &["hook", "install", "claude-code"],
        &[
            ("HOME", &home),
            ("CLAUDE_CONFIG_DIR", dir.to_str().unwrap()),
        ],
    );
    assert_eq!(again.code, 0, "{}", again.stderr);
    let settings: serde_json::Value =
        serde_json::from_slice(&read(&dir.join("settings.json"))).unwrap();
    assert_eq!(
        settings["permissions"]["allow"].as_array().unwrap().len(),
        1,
        "{settings}"
    );

    let mcp = env.path(".mcp.json");
    let original = "{\n  \"mcpServers\": {\n    \"db\": {\"command\": \"db-mcp\"}\n  }\n}\n";
    std::fs::write(&mcp, original).unwrap();
    let out = env.mf_env(
        &["hook", "install", "claude-code", "--project"],
        &[("HOME", &home)],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(registers_mf(&mcp, "claude"));
    assert!(out.stderr.contains("approve"), "{}", out.stderr);
    assert!(
        !env.path("home/.claude.json").exists(),
        "user scope untouched"
    );
    let out = env.mf_env(
        &["hook", "uninstall", "claude-code", "--project"],
        &[("HOME", &home)],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(read(&mcp), original.as_bytes());
    assert!(!env.path(".claude/settings.json").exists());
}

#[test]
fn install_and_uninstall_codex_give_the_config_back_byte_for_byte() {
    for original in [
        None,
        Some(
            "model = \"gpt-5\"\r\n\r\n[mcp_servers.docs]\r\ncommand = \"docs-mcp\"\r\nargs = [\"--stdio\"]\r\n",
        ),
        Some("# no final line end\nn = 123456789012345678\nmodel = \"o3\""),
    ] {
        let (env, home) = home_env();
        let config = env.path("home/.codex/config.toml");
        if let Some(text) = original {
            std::fs::create_dir_all(config.parent().unwrap()).unwrap();
            std::fs::write(&config, text).unwrap();
        }
        let out = env.mf_env(&["hook", "install", "codex"], &[("HOME", &home)]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let text = std::fs::read_to_string(&config).unwrap();
        let t: toml::Table = toml::from_str(&text).unwrap();
        let exe = std::fs::canonicalize(crate::util::mf_bin()).unwrap();
        assert_eq!(t["mcp_servers"]["mf"]["command"].as_str(), exe.to_str());
        assert_eq!(
            t["mcp_servers"]["mf"]["args"],
            toml::Value::Array(vec!["mcp".into(), "--agent".into(), "codex".into()])
        );
        if let Some(o) = original {
            assert!(text.ends_with(o), "{text}");
            if o.contains("docs") {
                assert!(t["mcp_servers"]["docs"].is_table());
                assert_eq!(
                    t["model"].as_str(),
                    Some("gpt-5"),
                    "still top-level: {text}"
                );
            }
        }
        let out = env.mf_env(&["hook", "install", "codex"], &[("HOME", &home)]);
        assert!(out.stderr.contains("nothing to change"), "{}", out.stderr);
        assert_eq!(std::fs::read_to_string(&config).unwrap(), text);
        let out = env.mf_env(&["hook", "uninstall", "codex"], &[("HOME", &home)]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        match original {
            Some(o) => assert_eq!(read(&config), o.as_bytes()),
            None => assert!(!config.exists()),
        }
        assert!(!env.path("home/.codex/mf-compact-prompt.md").exists());
    }
    // An `mf` server of the user's own is refused, untouched.
    let (env, home) = home_env();
    let config = env.path("home/.codex/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let theirs = "[mcp_servers.mf]\ncommand = \"mf\"\nargs = [\"mcp\"]\n";
    std::fs::write(&config, theirs).unwrap();
    let out = env.mf_env(&["hook", "install", "codex"], &[("HOME", &home)]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("[mcp_servers.mf]"), "{}", out.stderr);
    assert_eq!(read(&config), theirs.as_bytes());
    assert!(!env.path("home/.codex/mf-compact-prompt.md").exists());
}
