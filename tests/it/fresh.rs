//! What is generated from the CLI definitions and committed — the shell completions in
//! `completions/` and the man pages in `man/` — is exactly what the binary generates now; and the
//! help is what a user needs: every command's help ends with two or three examples that parse,
//! env vars are shown, global flags are listed apart, and `--model <TAB>` offers model names.

use std::path::Path;

use crate::util::*;

const REGENERATE: &str = "regenerate them with `bash scripts/regenerate.sh` and commit the result";

fn committed(rel: &str) -> Option<String> {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)).ok()
}

fn generated(args: &[&str]) -> String {
    let out = TestEnv::new().mf(args);
    assert_eq!(out.code, 0, "mf {args:?}: {out:?}");
    out.stdout
}

#[test]
fn committed_completions_and_man_pages_are_what_the_binary_generates() {
    let mut stale = Vec::new();
    for (shell, file) in [
        ("bash", "mf.bash"),
        ("zsh", "_mf"),
        ("fish", "mf.fish"),
        ("powershell", "_mf.ps1"),
        ("elvish", "mf.elv"),
    ] {
        let rel = format!("completions/{file}");
        if committed(&rel).as_deref() != Some(generated(&["completions", shell]).as_str()) {
            stale.push(rel);
        }
    }
    let mut pages = vec![("man/mf.1".to_string(), generated(&["man"]))];
    for c in mf::cli::MAN_PAGES {
        pages.push((format!("man/mf-{c}.1"), generated(&["man", c])));
    }
    for (rel, text) in &pages {
        if committed(rel).as_deref() != Some(text.as_str()) {
            stale.push(rel.clone());
        }
    }
    // No page for a command that is gone.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    for entry in std::fs::read_dir(&dir).expect("man/ exists") {
        let name = format!("man/{}", entry.unwrap().file_name().to_string_lossy());
        if !pages.iter().any(|(rel, _)| *rel == name) {
            stale.push(format!("{name} (no such command)"));
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files: {}; {REGENERATE}",
        stale.join(", ")
    );
    // The pages are real roff for the real commands.
    assert!(pages[0].1.starts_with(".ie \\n(.g") && pages[0].1.contains(".SH SUBCOMMANDS"));
    let compact = &pages[1].1;
    assert!(compact.contains(".TH mf-compact 1") && compact.contains("\\-\\-files\\-from"));
}

/// `mf COMMAND --help` for every visible command, and for mf itself.
fn helps() -> Vec<(String, String)> {
    let mut out = vec![("mf".to_string(), generated(&["--help"]))];
    for c in mf::cli::MAN_PAGES {
        out.push((format!("mf {c}"), generated(&[c, "--help"])));
    }
    out
}

/// The words of the `mf …` part of an example line (the piece of a pipeline that runs mf, before
/// any redirection).
fn example_args(line: &str) -> Vec<String> {
    let cmd = line
        .split(" | ")
        .map(str::trim)
        .find(|c| c.starts_with("mf "))
        .unwrap_or_else(|| panic!("an example runs mf: {line}"));
    let cmd = cmd.split(" > ").next().unwrap();
    assert!(
        !cmd.contains('\'') && !cmd.contains('"'),
        "an example's mf part has no quoting to get wrong: {line}"
    );
    cmd.split_whitespace().map(str::to_string).collect()
}

#[test]
fn every_help_ends_with_two_or_three_examples_that_parse() {
    use clap::Parser;
    for (who, help) in helps() {
        let tail = help
            .rsplit_once("\nExamples:\n")
            .unwrap_or_else(|| panic!("`{who} --help` has no examples:\n{help}"))
            .1;
        let lines: Vec<&str> = tail.lines().collect();
        assert!(
            (2..=3).contains(&lines.len()),
            "`{who} --help` should end with 2–3 examples, not {}:\n{tail}",
            lines.len()
        );
        for line in lines {
            assert!(line.starts_with("  "), "`{who} --help` ends with: {line}");
            let args = example_args(line);
            assert_eq!(args[0], "mf", "{who}: {line}");
            if who != "mf" {
                assert_eq!(args[1], who.trim_start_matches("mf "), "{who}: {line}");
            }
            if let Err(e) = mf::cli::Cli::try_parse_from(&args) {
                panic!("`{who} --help` example does not parse: {line}\n{e}");
            }
        }
    }
}

#[test]
fn flags_that_read_the_environment_say_so_and_global_flags_stand_apart() {
    let compact = generated(&["compact", "--help"]);
    let explain = generated(&["explain", "--help"]);
    // Every flag with an environment variable (settings.rs reads them) names it in its help.
    for (help, flag, var) in [
        (&compact, "--model", "MF_MODEL"),
        (&compact, "--base-url", "MF_BASE_URL"),
        (&compact, "--recent", "MF_RECENT"),
        (&compact, "--timeout", "MF_TIMEOUT"),
        (&compact, "--no-progress", "MF_NO_PROGRESS"),
        (&compact, "--config", "MF_CONFIG"),
        (&explain, "--recent", "MF_RECENT"),
        (&explain, "--model", "MF_MODEL"),
    ] {
        let at = [format!("{flag} "), format!("{flag}\n")]
            .iter()
            .filter_map(|f| help.find(f.as_str()))
            .min()
            .unwrap_or_else(|| panic!("{flag} not in help:\n{help}"));
        let next_flag = help[at + flag.len()..]
            .find("\n  -")
            .map_or(help.len(), |k| at + flag.len() + k);
        let words = help[at..next_flag]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            words.contains(&format!("[env: {var}]")),
            "{flag} does not show [env: {var}]:\n{}",
            &help[at..next_flag]
        );
    }
    // Global flags under their own heading, after the command's own options.
    for (who, help) in helps() {
        let (own, global) = help
            .split_once("\nGlobal options:\n")
            .unwrap_or_else(|| panic!("`{who} --help` has no global options heading:\n{help}"));
        // The section ends at the next unindented line (a heading, or the after-help text).
        let global: String = global
            .lines()
            .take_while(|l| l.is_empty() || l.starts_with(' '))
            .collect::<Vec<_>>()
            .join("\n");
        for flag in ["--quiet", "--no-progress", "--verbose", "--config"] {
            assert!(global.contains(flag), "{who}: {flag} is not global");
            assert!(
                !own.contains(flag),
                "{who}: {flag} is listed with its own flags"
            );
        }
    }
}

#[test]
fn model_completion_offers_the_model_names() {
    // bash: run the committed completion hook the way bash's TAB does; it asks mf (on PATH).
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions/mf.bash");
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(mf_bin(), bin.path().join("mf")).unwrap();
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source '{}'; COMP_WORDS=(mf compact --model ''); COMP_CWORD=3; COMP_TYPE=9; \
             COMP_LINE='mf compact --model '; COMP_POINT=${{#COMP_LINE}}; \
             _clap_complete_mf mf '' --model; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        ))
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin.path().display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .output()
        .expect("bash runs");
    let offered = String::from_utf8(out.stdout).unwrap();
    let names = [
        "extractive",
        "haiku",
        "sonnet",
        "opus",
        "openai-compatible:",
    ];
    for name in names {
        assert!(
            offered.lines().any(|l| l == name),
            "`mf compact --model <TAB>` does not offer {name}: {offered:?} {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // zsh and fish ask mf the same way (`MF_COMPLETE=SHELL mf -- WORDS`).
    let env = TestEnv::new();
    for shell in ["zsh", "fish"] {
        let out = env.mf_env(
            &["--", "mf", "compact", "--model", ""],
            &[("MF_COMPLETE", shell), ("_CLAP_COMPLETE_INDEX", "3")],
        );
        for name in names {
            assert!(
                out.stdout
                    .lines()
                    .any(|l| l.starts_with(name.trim_end_matches(':'))),
                "{shell} is not offered {name}: {out:?}"
            );
        }
    }
}
