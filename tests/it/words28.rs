//! Issue 28 ("the newcomer's path"), the words: exit codes in every command's `--help` (75
//! where a command can return it), a missing file's OS error said once, `expand FILE` without
//! an id listing the summaries there are, a mistyped model id refused with the id it was meant
//! to be (a model newer than mf's table still passes).

use crate::mf_snapshot;
use crate::util::TestEnv;

#[test]
fn every_command_says_its_exit_codes_and_those_that_write_to_a_session_say_75() {
    let env = TestEnv::new();
    // Every visible command (the list `mf man` keeps whole).
    for cmd in mf::cli::MAN_PAGES {
        let out = env.mf(&[cmd, "--help"]);
        assert_eq!(out.code, 0, "{cmd}");
        assert!(out.stdout.contains("Exit codes:"), "{cmd}: {}", out.stdout);
        let says_75 = out.stdout.contains(" 75 ");
        assert_eq!(
            says_75,
            matches!(cmd, "compact" | "expand"),
            "{cmd}: 75 is said by the commands that write to a session: {}",
            out.stdout
        );
    }
    let out = env.mf(&["--help"]);
    assert!(
        out.stdout.contains(" 75 an agent session in use"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_missing_file_says_its_os_error_once() {
    let env = TestEnv::new();
    let out = env.mf(&["recall", "nope.jsonl"]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr.matches("No such file or directory").count(),
        1,
        "{}",
        out.stderr
    );
}

#[test]
fn expand_without_an_id_lists_the_summaries_to_expand() {
    let env = TestEnv::new();
    let f = env.copy_fixture("incident-northwind.jsonl");
    env.mf_ok(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
    ]);
    let out = mf_snapshot!(
        "words28_expand_no_id",
        env,
        ["expand", "incident-northwind.jsonl"]
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("msg-summary-1-13 · summary · turns 1–13"),
        "{}",
        out.stderr
    );
    let out = env.mf(&["expand", "incident-northwind.jsonl", "--restore"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains(&format!(
            "`mf expand {} msg-summary-1-13 --restore`",
            f.display()
        )) || out.stderr.contains("msg-summary-1-13 --restore`"),
        "{}",
        out.stderr
    );
    env.copy_fixture("claude-compacted.jsonl");
    let out = mf_snapshot!(
        "words28_expand_no_id_agent_compaction",
        env,
        ["expand", "claude-compacted.jsonl"]
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("agent's own compaction"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_mistyped_model_id_is_refused_with_the_one_meant_and_a_newer_one_passes() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    let out = mf_snapshot!(
        "words28_model_cut_short",
        env,
        [
            "compact",
            "incident-northwind.jsonl",
            "--model",
            "claude-haik",
            "--dry-run"
        ]
    );
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("did you mean `claude-haiku-5-5`"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("anthropic:claude-haik"),
        "{}",
        out.stderr
    );
    let out = env.mf(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "claude-hiaku-5-5",
        "--dry-run",
    ]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    for fine in [
        "claude-haiku-5-6",
        "anthropic:claude-haik",
        "gpt-5",
        "o3",
        "claude-haiku-4-5-20251001",
    ] {
        let out = env.mf(&[
            "compact",
            "incident-northwind.jsonl",
            "--model",
            fine,
            "--dry-run",
        ]);
        assert_eq!(out.code, 0, "{fine}: {}", out.stderr);
    }
}
