//! Snapshots of every command's human output, uv-style: the real binary on the fixtures, the
//! command, exit code, stdout and stderr in one snapshot (`tests/it/snapshots/cli_*.snap`), with
//! only the temp dir, the version and record times filtered. A changed output fails here; review it
//! with `INSTA_UPDATE=always cargo test --test it snapshot_cli` and `git diff tests/it/snapshots/`.

use crate::mf_snapshot;
use crate::util::*;

const INCIDENT: &str = "incident-northwind.jsonl";

/// The incident fixture in a temp dir, folded once by the built-in summarizer.
fn folded() -> TestEnv {
    let env = TestEnv::new();
    env.copy_fixture(INCIDENT);
    env.mf_ok(&["compact", INCIDENT, "--model", "extractive"]);
    env
}

fn fixture_env(name: &str) -> TestEnv {
    let env = TestEnv::new();
    env.copy_fixture(name);
    env
}

#[test]
fn compact_folded() {
    let env = fixture_env(INCIDENT);
    let out = mf_snapshot!(
        "cli_compact_folded",
        env,
        ["compact", INCIDENT, "--model", "extractive"]
    );
    assert_eq!(out.code, 0);
}

#[test]
fn compact_nothing_to_fold() {
    let env = folded();
    let out = mf_snapshot!(
        "cli_compact_nothing_to_fold",
        env,
        ["compact", INCIDENT, "--model", "extractive"]
    );
    assert_eq!(out.code, 0);
}

#[test]
fn compact_declined_then_remembered() {
    let env = fixture_env(INCIDENT);
    let out = mf_snapshot!(
        "cli_compact_declined",
        env,
        [
            "compact",
            INCIDENT,
            "--model",
            "extractive",
            "--min-retention",
            "0.95"
        ]
    );
    assert_eq!(out.code, 0);
    let again = mf_snapshot!(
        "cli_compact_declined_again",
        env,
        [
            "compact",
            INCIDENT,
            "--model",
            "extractive",
            "--min-retention",
            "0.95"
        ]
    );
    assert_eq!(again.code, 0);
}

#[test]
fn compact_dry_run() {
    let env = fixture_env(INCIDENT);
    let before = read(&env.path(INCIDENT));
    let out = mf_snapshot!(
        "cli_compact_dry_run",
        env,
        ["compact", INCIDENT, "--model", "extractive", "--dry-run"]
    );
    assert_eq!(out.code, 0);
    assert_eq!(
        read(&env.path(INCIDENT)),
        before,
        "a dry run writes nothing"
    );
}

#[test]
fn compact_strategy_mask() {
    let env = fixture_env(INCIDENT);
    mf_snapshot!(
        "cli_compact_strategy_mask",
        env,
        [
            "compact",
            INCIDENT,
            "--model",
            "extractive",
            "--strategy",
            "mask",
            "--keep-tool-results",
            "1"
        ]
    );
}

#[test]
fn compact_strategy_mask_summary() {
    let env = fixture_env(INCIDENT);
    mf_snapshot!(
        "cli_compact_strategy_mask_summary",
        env,
        [
            "compact",
            INCIDENT,
            "--model",
            "extractive",
            "--strategy",
            "mask,summary"
        ]
    );
}

#[test]
fn compact_strategy_cited() {
    let env = fixture_env(INCIDENT);
    mf_snapshot!(
        "cli_compact_strategy_cited",
        env,
        [
            "compact",
            INCIDENT,
            "--model",
            "extractive",
            "--strategy",
            "cited"
        ]
    );
}

#[test]
fn compact_strategy_summary_in_chunks_with_rollup() {
    let env = fixture_env(INCIDENT);
    mf_snapshot!(
        "cli_compact_rollup",
        env,
        [
            "compact",
            INCIDENT,
            "--model",
            "extractive",
            "--max-span-tokens",
            "1000",
            "--rollup"
        ]
    );
}

#[test]
fn compact_agent_sessions() {
    for (name, snap) in [
        ("claude-session.jsonl", "cli_compact_claude"),
        ("codex-rollout.jsonl", "cli_compact_codex"),
        ("pi-session-v3.jsonl", "cli_compact_pi"),
    ] {
        let env = fixture_env(name);
        let out = mf_snapshot!(snap, env, ["compact", name, "--model", "extractive"]);
        assert_eq!(out.code, 0, "{name}");
    }
}

#[test]
fn compact_malformed_line_names_file_and_line() {
    let env = TestEnv::new();
    let mut text = conversation(12);
    text.push_str("{\"role\":\"user\",\"content\": oops}\n");
    text += &line("u13", "user", "and one more");
    text.push('\n');
    env.write("broken.jsonl", &text);
    let out = mf_snapshot!(
        "cli_compact_malformed",
        env,
        ["compact", "broken.jsonl", "--model", "extractive"]
    );
    assert_eq!(out.code, 1);
}

#[test]
fn compact_missing_file() {
    let env = TestEnv::new();
    let out = mf_snapshot!(
        "cli_compact_missing_file",
        env,
        ["compact", "nope.jsonl", "--model", "extractive"]
    );
    assert_eq!(out.code, 1);
}

#[test]
fn compact_without_a_model_is_a_usage_error() {
    let env = fixture_env(INCIDENT);
    let out = mf_snapshot!("cli_compact_no_model", env, ["compact", INCIDENT]);
    assert_eq!(out.code, 2);
}

#[test]
fn compact_unknown_flag_is_a_usage_error() {
    let env = fixture_env(INCIDENT);
    let out = mf_snapshot!(
        "cli_compact_unknown_flag",
        env,
        [
            "compact",
            INCIDENT,
            "--model",
            "extractive",
            "--recnet",
            "3"
        ]
    );
    assert_eq!(out.code, 2);
}

#[test]
fn compact_a_live_session_is_busy() {
    let env = fixture_env("claude-session.jsonl");
    let f = std::fs::File::options()
        .write(true)
        .open(env.path("claude-session.jsonl"))
        .unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(86_400 * 3))
        .unwrap();
    drop(f);
    let out = mf_snapshot!(
        "cli_compact_busy",
        env,
        ["compact", "claude-session.jsonl", "--model", "extractive"]
    );
    assert_eq!(out.code, 75);
}

#[test]
fn recall_each_format() {
    let env = folded();
    for format in ["chat", "native", "text", "memory"] {
        let out = mf_snapshot!(
            format!("cli_recall_{format}"),
            env,
            ["recall", INCIDENT, "--format", format]
        );
        assert_eq!(out.code, 0, "{format}");
    }
    let out = mf_snapshot!(
        "cli_recall_text_budget",
        env,
        ["recall", INCIDENT, "--format", "text", "--budget", "400"]
    );
    assert_eq!(out.code, 0);
}

#[test]
fn recall_agent_session_native() {
    let env = fixture_env("pi-session-v3.jsonl");
    env.mf_ok(&["compact", "pi-session-v3.jsonl", "--model", "extractive"]);
    mf_snapshot!(
        "cli_recall_pi_text",
        env,
        ["recall", "pi-session-v3.jsonl", "--format", "text"]
    );
}

#[test]
fn expand_and_restore() {
    let env = folded();
    for (snap, format) in [("cli_expand_jsonl", "jsonl"), ("cli_expand_text", "text")] {
        let out = mf_snapshot!(
            snap,
            env,
            ["expand", INCIDENT, "msg-summary-1-13", "--format", format]
        );
        assert_eq!(out.code, 0, "{format}");
    }
    let out = mf_snapshot!(
        "cli_expand_unknown_id",
        env,
        ["expand", INCIDENT, "msg-summary-9-99"]
    );
    assert_eq!(out.code, 1);
    let out = mf_snapshot!(
        "cli_expand_restore",
        env,
        ["expand", INCIDENT, "msg-summary-1-13", "--restore"]
    );
    assert_eq!(out.code, 0);
    mf_snapshot!("cli_explain_after_restore", env, ["explain", INCIDENT]);
}

#[test]
fn explain_before_and_after() {
    let env = fixture_env(INCIDENT);
    mf_snapshot!("cli_explain_unfolded", env, ["explain", INCIDENT]);
    env.mf_ok(&[
        "compact",
        INCIDENT,
        "--model",
        "extractive",
        "--min-retention",
        "0.95",
    ]);
    mf_snapshot!("cli_explain_declined", env, ["explain", INCIDENT]);
    env.mf_ok(&["compact", INCIDENT, "--model", "extractive"]);
    mf_snapshot!("cli_explain_folded", env, ["explain", INCIDENT]);
}

#[test]
fn verify_clean_and_with_problems() {
    let env = folded();
    let out = mf_snapshot!("cli_verify_clean", env, ["verify", INCIDENT]);
    assert_eq!(out.code, 0);
    // Change one byte of a covered line (line 2): the summary's digest no longer matches.
    let p = env.path(INCIDENT);
    let text = String::from_utf8(read(&p)).unwrap();
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    let at = lines[1].find("Priya").expect("line 2 names Priya");
    lines[1].replace_range(at..at + 5, "Pryia");
    std::fs::write(&p, lines.concat()).unwrap();
    let out = mf_snapshot!("cli_verify_tampered", env, ["verify", INCIDENT]);
    assert_eq!(out.code, 1);
    mf_snapshot!("cli_explain_tampered", env, ["explain", INCIDENT]);
    // A torn last line (no newline at the end).
    let torn = TestEnv::new();
    torn.write(
        "torn.jsonl",
        &(conversation(3) + "{\"role\":\"user\",\"content\":\"half"),
    );
    let out = mf_snapshot!("cli_verify_torn", torn, ["verify", "torn.jsonl"]);
    assert_eq!(out.code, 1);
}

#[test]
fn eval_table_and_a_declined_fold() {
    let env = TestEnv::new();
    env.copy_fixture(INCIDENT);
    // On a pipe: tab-separated values on stdout; the file is only read.
    let out = mf_snapshot!("cli_eval", env, ["eval", INCIDENT, "--model", "extractive"]);
    assert_eq!(out.code, 0);
    // A fold the audit declines: reported, its view the verbatim one.
    let out = mf_snapshot!(
        "cli_eval_declined",
        env,
        [
            "eval",
            INCIDENT,
            "--model",
            "extractive",
            "--min-retention",
            "1"
        ]
    );
    assert_eq!(out.code, 0);
}

#[test]
fn models_table() {
    let env = TestEnv::new();
    let out = mf_snapshot!("cli_models", env, ["models"]);
    assert_eq!(out.code, 0);
}

#[test]
fn help_of_every_command() {
    let env = TestEnv::new();
    let out = mf_snapshot!("cli_help", env, ["--help"]);
    assert_eq!(out.code, 0);
    for cmd in [
        "compact",
        "recall",
        "expand",
        "explain",
        "eval",
        "verify",
        "models",
        "completions",
        "man",
    ] {
        let out = mf_snapshot!(format!("cli_help_{cmd}"), env, [cmd, "--help"]);
        assert_eq!(out.code, 0, "{cmd}");
    }
    let out = mf_snapshot!("cli_version", env, ["--version"]);
    assert_eq!(out.code, 0);
    let out = mf_snapshot!("cli_no_command", env, []);
    assert_eq!(out.code, 2);
    let out = mf_snapshot!("cli_unknown_command", env, ["compcat"]);
    assert_eq!(out.code, 2);
}
