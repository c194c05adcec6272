//! Output a script or a CI log can trust (issue 18, item 6): tables on a pipe are plain lines,
//! on a terminal they fit its width; `--strategy mask` needs no model; completions; `-vv`;
//! "did you mean" for a model name; every environment variable in `--help`.

use std::io::Read;
use std::process::Stdio;

use crate::util::*;

/// Box drawing (U+2500–U+257F) and the ASCII table borders comfy-table draws.
fn has_box_drawing(s: &str) -> bool {
    s.chars().any(|c| ('\u{2500}'..='\u{257f}').contains(&c))
        || s.lines()
            .any(|l| l.starts_with("+-") || l.starts_with("| "))
}

fn widest(s: &str) -> usize {
    s.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

/// Run `mf` with stdout (and stderr) on a fresh pseudo-terminal `cols` wide; its output, `\r`
/// dropped.
fn on_a_pty(env: &TestEnv, args: &[&str], vars: &[(&str, &str)], cols: u16) -> (i32, String) {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("a pty");
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(name.to_str().unwrap())
        .expect("open the pty's terminal side");
    rustix::termios::tcsetwinsize(
        &slave,
        rustix::termios::Winsize {
            ws_row: 50,
            ws_col: cols,
            ws_xpixel: 0,
            ws_ypixel: 0,
        },
    )
    .unwrap();
    let mut cmd = env.command(args, vars);
    cmd.stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave));
    let mut child = cmd.spawn().expect("run mf");
    drop(cmd);
    let mut master = std::fs::File::from(master);
    let mut bytes = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match master.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
            // Linux answers EIO once the terminal side is closed by every writer.
            Err(_) => break,
        }
    }
    let code = child.wait().unwrap().code().unwrap_or(-1);
    (code, String::from_utf8_lossy(&bytes).replace('\r', ""))
}

#[test]
fn tables_on_a_pipe_are_plain_lines_with_no_box_drawing() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    std::fs::copy(
        fixture("incident-northwind.jsonl"),
        env.path("second.jsonl"),
    )
    .unwrap();

    // One decision record: `key: value` lines.
    let out = env.mf(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!has_box_drawing(&out.stdout), "{}", out.stdout);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[0], "file: incident-northwind.jsonl", "{}", out.stdout);
    assert!(lines.contains(&"action: folded"), "{}", out.stdout);
    assert!(lines.contains(&"model: extractive"), "{}", out.stdout);
    assert!(
        lines.iter().all(|l| l.split_once(": ").is_some()),
        "every line is `key: value`: {}",
        out.stdout
    );

    // Several files: TSV under a header, a total last; every line the same number of cells.
    let out = env.mf(&[
        "compact",
        "incident-northwind.jsonl",
        "second.jsonl",
        "--model",
        "extractive",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!has_box_drawing(&out.stdout), "{}", out.stdout);
    let rows: Vec<Vec<&str>> = out
        .stdout
        .lines()
        .map(|l| l.split('\t').collect())
        .collect();
    assert_eq!(
        rows[0],
        [
            "file",
            "action",
            "folded",
            "tokens_before",
            "tokens_after",
            "cost",
            "reason"
        ]
    );
    assert!(
        rows.iter().all(|r| r.len() == rows[0].len()),
        "{}",
        out.stdout
    );
    assert_eq!(rows[1][..2], ["incident-northwind.jsonl", "skipped"]);
    assert_eq!(rows[2][..3], ["second.jsonl", "folded", "49"]);
    assert!(rows[2][3].parse::<usize>().unwrap() > rows[2][4].parse::<usize>().unwrap());
    assert_eq!(rows[3][0], "total (2 files)");

    // explain: sections of `key: value` records.
    let out = env.mf(&["explain", "incident-northwind.jsonl"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!has_box_drawing(&out.stdout), "{}", out.stdout);
    for want in [
        "  id: msg-summary-1-13",
        "  retention: 82%",
        "  decision: folded → msg-summary-1-13",
        "  action: skipped",
    ] {
        assert!(
            out.stdout.lines().any(|l| l == want),
            "{want}: {}",
            out.stdout
        );
    }

    // models: TSV under a header, one line per model, numbers in full.
    let out = env.mf(&["models"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!has_box_drawing(&out.stdout), "{}", out.stdout);
    let rows: Vec<Vec<&str>> = out
        .stdout
        .lines()
        .map(|l| l.split('\t').collect())
        .collect();
    assert_eq!(rows[0][..3], ["model", "alias", "provider"]);
    assert!(
        rows.iter().all(|r| r.len() == rows[0].len()),
        "{}",
        out.stdout
    );
    let haiku = rows.iter().find(|r| r[1] == "haiku").expect("a haiku row");
    assert_eq!(haiku[2], "anthropic");
    assert!(haiku[5].parse::<u64>().unwrap() >= 100_000, "{haiku:?}");

    // verify was plain lines already; it stays so.
    let out = env.mf(&["verify", "incident-northwind.jsonl"]);
    assert!(!has_box_drawing(&out.stdout), "{}", out.stdout);
}

#[test]
fn tables_on_a_terminal_fit_its_width_and_columns_is_honoured() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    // COLUMNS beats the terminal's own width.
    let (code, out) = on_a_pty(
        &env,
        &[
            "compact",
            "incident-northwind.jsonl",
            "--model",
            "extractive",
            "--no-progress",
        ],
        &[("COLUMNS", "80")],
        200,
    );
    assert_eq!(code, 0, "{out}");
    assert!(has_box_drawing(&out), "a table on a terminal: {out}");
    assert!(out.contains("folded"), "{out}");
    assert!(widest(&out) <= 80, "wider than COLUMNS=80:\n{out}");
    for args in [
        &["explain", "incident-northwind.jsonl"][..],
        &["models"][..],
    ] {
        let (code, out) = on_a_pty(&env, args, &[("COLUMNS", "80")], 200);
        assert_eq!(code, 0, "{out}");
        assert!(widest(&out) <= 80, "{args:?} wider than 80:\n{out}");
        let (code, out) = on_a_pty(&env, args, &[("COLUMNS", "60")], 200);
        assert_eq!(code, 0, "{out}");
        assert!(widest(&out) <= 60, "{args:?} wider than 60:\n{out}");
    }
    // Without COLUMNS, the terminal's width.
    let (code, out) = on_a_pty(&env, &["explain", "incident-northwind.jsonl"], &[], 72);
    assert_eq!(code, 0, "{out}");
    assert!(
        widest(&out) <= 72,
        "wider than the 72-column terminal:\n{out}"
    );
    assert!(has_box_drawing(&out), "{out}");
}

/// A chat with four turns, each with a large tool result, then a short last turn.
fn tool_chat() -> String {
    let mut l = vec![line("sys", "system", "You are a diagnostics agent.")];
    for k in 1..=4 {
        l.push(line(
            &format!("u{k}"),
            "user",
            &format!("Check region {k}."),
        ));
        l.push(serde_json::json!({"id": format!("a{k}"), "role": "assistant", "content": null, "tool_calls": [{"id": format!("c{k}"), "type": "function", "function": {"name": "metrics", "arguments": "{}"}}]}).to_string());
        let rows: Vec<String> = (1..=30)
            .map(|r| format!("t{k} row {r}: status=ok latency={}ms", 100 + r))
            .collect();
        l.push(serde_json::json!({"id": format!("t{k}"), "role": "tool", "tool_call_id": format!("c{k}"), "name": "metrics", "content": rows.join("\n")}).to_string());
        l.push(line(
            &format!("a{k}b"),
            "assistant",
            &format!("Region {k} is healthy."),
        ));
    }
    l.push(line("u5", "user", "Thanks."));
    l.push(line("a5", "assistant", "You are welcome."));
    l.join("\n") + "\n"
}

#[test]
fn strategy_mask_needs_no_model_and_records_none() {
    let env = TestEnv::new();
    let f = env.write("tools.jsonl", &tool_chat());
    let before = read(&f);
    let args = [
        "compact",
        "tools.jsonl",
        "--strategy",
        "mask",
        "--keep-tool-results",
        "1",
        "--recent",
        "2",
        "--json",
    ];
    let out = env.mf(&args);
    assert_eq!(out.code, 0, "{out:?}");
    let r = json_lines(&out.stdout).remove(0);
    assert_eq!(r["action"], "masked", "{r:#}");
    assert!(r["model"].is_null(), "a mask names no model: {r:#}");
    assert_eq!(r["calls"], 0, "{r:#}");
    let after = read(&f);
    assert!(after.len() > before.len() && after.starts_with(&before));

    // A model named in the environment (a CI job's MF_MODEL) is not set up: no key is needed.
    let env = TestEnv::new();
    env.write("tools.jsonl", &tool_chat());
    let out = env.mf_env(&args, &[("MF_MODEL", "haiku")]);
    assert_eq!(out.code, 0, "{out:?}");
    let r = json_lines(&out.stdout).remove(0);
    assert_eq!(r["action"], "masked", "{r:#}");
    assert!(r["model"].is_null(), "{r:#}");

    // The human record on a pipe says so too, and a mistyped model name is still an error.
    let env = TestEnv::new();
    env.write("tools.jsonl", &tool_chat());
    let out = env.mf(&args[..args.len() - 1]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.lines().any(|l| l == "action: masked"), "{out:?}");
    let out = env.mf(&[
        "compact",
        "tools.jsonl",
        "--strategy",
        "mask",
        "--model",
        "no-such-model",
    ]);
    assert_eq!(out.code, 2, "{out:?}");

    // mask,summary still needs a model.
    let out = env.mf(&["compact", "tools.jsonl", "--strategy", "mask,summary"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("no summarizer model named"), "{out:?}");
}

/// A directory holding `mf` (a link to the binary under test), for a shell's PATH.
fn mf_on_path(env: &TestEnv) -> std::path::PathBuf {
    let dir = env.path("bin");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(mf_bin(), dir.join("mf")).unwrap();
    dir
}

/// What mf offers, asked the way `shell`'s hook asks (`MF_COMPLETE=SHELL mf -- WORDS…`).
fn asked(env: &TestEnv, shell: &str, words: &[&str]) -> Vec<String> {
    let index = (words.len() - 1).to_string();
    let mut args = vec!["--"];
    args.extend(words);
    let out = env.mf_env(
        &args,
        &[
            ("MF_COMPLETE", shell),
            ("_CLAP_COMPLETE_INDEX", &index),
            ("_CLAP_IFS", "\n"),
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    out.stdout
        .lines()
        .map(|l| l.split(['\t', ':']).next().unwrap().to_string())
        .collect()
}

#[test]
fn strategy_system_prompt_and_expand_ids_complete_in_bash_zsh_and_fish() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    env.write("prompt.txt", "Summarize tersely.");
    let out = env.mf(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
    ]);
    assert_eq!(out.code, 0, "{out:?}");

    // Every shell's hook script comes from `mf completions SHELL` and calls mf back.
    for shell in ["bash", "zsh", "fish"] {
        let out = env.mf(&["completions", shell]);
        assert_eq!(out.code, 0, "{out:?}");
        assert!(
            out.stdout.contains("MF_COMPLETE"),
            "{shell}: {}",
            out.stdout
        );
    }

    // The answers, as zsh and fish ask for them.
    for shell in ["zsh", "fish"] {
        let strategies = asked(&env, shell, &["mf", "compact", "f", "--strategy", ""]);
        assert_eq!(
            strategies[..4],
            ["summary", "mask", "mask,summary", "cited"],
            "{shell}"
        );
        let ids = asked(
            &env,
            shell,
            &["mf", "expand", "incident-northwind.jsonl", "msg"],
        );
        assert_eq!(ids, ["msg-summary-1-13"], "{shell}");
        let prompt = asked(
            &env,
            shell,
            &["mf", "compact", "f", "--system-prompt", "@pro"],
        );
        assert_eq!(prompt, ["@prompt.txt"], "{shell}");
    }

    // bash: the real completion function, run by bash.
    let bash = std::process::Command::new("bash").arg("--version").output();
    assert!(
        bash.is_ok_and(|o| o.status.success()),
        "this test runs bash's completion function; install bash"
    );
    let bin = mf_on_path(&env);
    let script = env.mf(&["completions", "bash"]).stdout;
    env.write("mf.bash", &script);
    let run = |words: &str| {
        let body = format!(
            r#"source ./mf.bash
COMP_WORDS=({words}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); COMP_TYPE=9
_clap_complete_mf mf "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}""#
        );
        let out = std::process::Command::new("bash")
            .args(["--norc", "--noprofile", "-c", &body])
            .current_dir(env.dir.path())
            .env_clear()
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        run(r#"mf compact f --strategy """#)[..4],
        ["summary", "mask", "mask,summary", "cited"]
    );
    assert_eq!(run("mf compact f --strategy mask,"), ["mask,summary"]);
    assert_eq!(run("mf compact f --system-prompt @pro"), ["@prompt.txt"]);
    assert_eq!(
        run("mf expand incident-northwind.jsonl msg"),
        ["msg-summary-1-13"]
    );
    let ids = run(r#"mf expand --format text incident-northwind.jsonl """#);
    assert!(ids.contains(&"msg-summary-1-13".to_string()), "{ids:?}");
    assert_eq!(run("mf compact f --model hai"), ["haiku"]);
}

#[test]
fn vv_adds_headers_and_timings_never_the_key() {
    use crate::server::{Haiku55, TestServer, haiku_5_5};
    const KEY: &str = "sk-ant-test-0123456789abcdefghij";
    let server = TestServer::respond(haiku_5_5(Haiku55::new(
        "Priya traced checkout p99 (1,840 ms) to the pricing cache.",
    )));
    let url = server.url();
    let vars = [
        ("ANTHROPIC_BASE_URL", url.as_str()),
        ("ANTHROPIC_API_KEY", KEY),
    ];
    let env = TestEnv::without_audit();
    env.write("a.jsonl", &conversation(30));
    let out = env.mf_env(&["-v", "compact", "a.jsonl", "--model", "haiku"], &vars);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("POST "), "{out:?}");
    assert!(!out.stderr.contains("request headers"), "{out:?}");

    let env = TestEnv::without_audit();
    env.write("a.jsonl", &conversation(30));
    let out = env.mf_env(&["-vv", "compact", "a.jsonl", "--model", "haiku"], &vars);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("POST "), "{out:?}");
    let headers = out
        .stderr
        .lines()
        .find(|l| l.contains("request headers:"))
        .unwrap_or_else(|| panic!("-vv shows the request headers: {out:?}"));
    assert!(headers.contains("x-api-key: [redacted]"), "{headers}");
    assert!(headers.contains("anthropic-version: "), "{headers}");
    assert!(
        out.stderr
            .lines()
            .any(|l| l.contains("HTTP 200 headers after") && l.contains("content-type")),
        "{out:?}"
    );
    assert!(
        !out.stderr.contains(KEY) && !out.stdout.contains(KEY),
        "{out:?}"
    );
    assert!(!out.stderr.contains("1,840 ms"), "no bodies: {out:?}");
}

#[test]
fn a_mistyped_model_name_gets_the_closest_known_names() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    for (typed, want) in [
        ("haiku-5.6", "claude-haiku-5-5"),
        ("hiaku", "haiku"),
        ("sonet", "sonnet"),
        ("extractiv", "extractive"),
    ] {
        let out = env.mf(&["compact", "incident-northwind.jsonl", "--model", typed]);
        assert_eq!(out.code, 2, "{out:?}");
        let first = out.stderr.lines().next().unwrap_or_default();
        assert!(
            first.contains("did you mean") && first.contains(&format!("`{want}`")),
            "{typed}: {out:?}"
        );
        // explain plans with a model too.
        let out = env.mf(&["explain", "incident-northwind.jsonl", "--model", typed]);
        assert_eq!(out.code, 2, "{out:?}");
        assert!(out.stderr.contains("did you mean"), "{out:?}");
    }
    // Nothing near: no guess.
    let out = env.mf(&["compact", "incident-northwind.jsonl", "--model", "zzz"]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(!out.stderr.contains("did you mean"), "{out:?}");
}

#[test]
fn help_lists_every_environment_variable_mf_reads() {
    let env = TestEnv::new();
    let help = env.mf(&["--help"]);
    assert_eq!(help.code, 0, "{help:?}");
    assert!(help.stdout.contains("MF_LIVE_SECONDS"), "{}", help.stdout);
    // Every variable `settings::env_vars` names (HOME and the debug-build fault switch aside).
    let source = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/settings/mod.rs"),
    )
    .unwrap();
    let names: Vec<&str> = source
        .lines()
        .filter_map(|l| l.trim().strip_prefix("pub const "))
        .filter_map(|l| l.split_once(": &str = \""))
        .map(|(_, v)| v.trim_end_matches("\";"))
        .filter(|n| !matches!(*n, "HOME" | "MF_DEBUG_PANIC_ON"))
        .collect();
    assert!(names.len() >= 20, "{names:?}");
    for n in names {
        assert!(help.stdout.contains(n), "`mf --help` does not mention {n}");
    }
}
