//! The CLI surface: clap's own checks, committed completions, help.

use clap::CommandFactory;

use crate::util::*;

#[test]
fn clap_definition_is_consistent() {
    mf::cli::Cli::command().debug_assert();
}

#[test]
fn committed_completions_match_the_cli() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("completions");
    for (shell, file) in [
        (clap_complete::Shell::Bash, "mf.bash"),
        (clap_complete::Shell::Zsh, "_mf"),
        (clap_complete::Shell::Fish, "mf.fish"),
        (clap_complete::Shell::PowerShell, "_mf.ps1"),
        (clap_complete::Shell::Elvish, "mf.elv"),
    ] {
        let fresh = mf::commands::completions::script(shell);
        let committed = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
        assert!(
            fresh == committed,
            "completions/{file} is out of date; regenerate with `cargo run -- completions {shell} > completions/{file}`"
        );
    }
}

#[test]
fn completions_command_prints_a_script() {
    let env = TestEnv::new();
    let out = env.mf(&["completions", "bash"]);
    assert_eq!(out.code, 0);
    assert!(
        out.stdout.contains("_mf()"),
        "{}",
        &out.stdout[..200.min(out.stdout.len())]
    );
}

#[test]
fn usage_errors_exit_2() {
    let env = TestEnv::new();
    assert_eq!(env.mf(&["compact"]).code, 2);
    assert_eq!(env.mf(&["frobnicate"]).code, 2);
    let help = env.mf(&["--help"]);
    assert_eq!(help.code, 0);
    assert!(help.stdout.contains("Exit codes"));
}
