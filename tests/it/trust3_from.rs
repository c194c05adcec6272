//! Issue 25, defects 5 and 6: a file read under the wrong `--from` (or a session of an agent mf
//! does not read) is refused, never read as nothing; a base URL's query stays after the joined
//! path, a fragment is refused, and what may be secret in a URL is shown nowhere.

use crate::server::{TestServer, openai_ok};
use crate::util::{Output, TestEnv, read};

/// One fixture of each format mf reads: (file, its `--from` name, its label in messages).
const FILES: [(&str, &str, &str); 4] = [
    ("openai-derived.jsonl", "chat", "chat"),
    ("claude-session.jsonl", "claude", "Claude Code"),
    ("codex-rollout.jsonl", "codex", "Codex"),
    ("pi-session-v3.jsonl", "pi", "pi"),
];

/// Every command that takes `--from`, reading `file`.
fn commands(file: &str) -> Vec<Vec<String>> {
    let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        v(&["compact", file, "--model", "extractive", "--json"]),
        v(&["compact", file, "--model", "extractive", "--dry-run"]),
        v(&["recall", file]),
        v(&["explain", file]),
        v(&["verify", file]),
        v(&["verify", file, "--json"]),
        v(&["search", file, "deploy"]),
        v(&["expand", file, "@2"]),
        v(&["eval", file, "--model", "extractive"]),
        v(&["summarize", file, "--model", "extractive"]),
    ]
}

fn run(env: &TestEnv, args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    env.mf(&args)
}

#[test]
fn a_wrong_from_is_refused_by_every_command_naming_what_the_file_looks_like() {
    let env = TestEnv::new();
    for (file, _, _) in FILES {
        env.copy_fixture(file);
    }
    for (file, actual, _) in FILES {
        let before = read(&env.path(file));
        for (_, told, told_label) in FILES {
            if told == actual {
                continue;
            }
            for mut args in commands(file) {
                args.extend(["--from".to_string(), told.to_string()]);
                let out = run(&env, &args);
                let said = format!("{}{}", out.stdout, out.stderr);
                assert_eq!(out.code, 1, "mf {} must fail: {out:?}", args.join(" "));
                assert!(
                    said.contains(&format!(
                        "read as {told_label} (--from {told}), it holds no {told_label} entries"
                    )) && said.contains(&format!("use --from {actual}")),
                    "mf {}: the error names the format told and the one found: {out:?}",
                    args.join(" ")
                );
                assert!(
                    !said.contains("uncovered entr") && !said.contains(": clean:"),
                    "mf {}: {out:?}",
                    args.join(" ")
                );
            }
        }
        assert_eq!(read(&env.path(file)), before, "{file} changed");
    }
}

#[test]
fn the_right_from_reads_each_format_as_before() {
    let env = TestEnv::new();
    for (file, from, _) in FILES {
        env.copy_fixture(file);
        let out = env.mf(&["verify", file, "--from", from]);
        assert_eq!(out.code, 0, "{out:?}");
        let out = env.mf(&["recall", file, "--from", from]);
        assert_eq!(out.code, 0, "{out:?}");
        assert!(!out.stdout.is_empty(), "{out:?}");
    }
    // A session of the format told that holds no message yet is empty, not wrong.
    env.write(
        "snapshots-only.jsonl",
        "{\"type\":\"file-history-snapshot\",\"messageId\":\"m\",\"snapshot\":{},\"isSnapshotUpdate\":false}\n",
    );
    let out = env.mf(&["verify", "snapshots-only.jsonl", "--from", "claude"]);
    assert_eq!(out.code, 0, "{out:?}");
    // An empty file is empty under any --from.
    env.write("empty.jsonl", "");
    let out = env.mf(&["verify", "empty.jsonl", "--from", "codex"]);
    assert_eq!(out.code, 0, "{out:?}");
}

#[test]
fn a_wrong_from_on_stdin_is_refused_too() {
    let env = TestEnv::new();
    env.copy_fixture("codex-rollout.jsonl");
    for cmd in [
        "summarize - --model extractive --from pi",
        "recall - --from claude",
        "verify - --from chat",
    ] {
        let out = env.sh(&format!(
            "{} {cmd} < codex-rollout.jsonl",
            crate::util::mf_bin()
        ));
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(1), "{cmd}: {said}");
        assert!(
            said.contains("<stdin>: read as") && said.contains("use --from codex"),
            "{cmd}: {said}"
        );
    }
}

const GEMINI: &str = concat!(
    r#"{"sessionId":"5e55","projectHash":"ab12","startTime":"2026-12-02T10:00:00.000Z","lastUpdated":"2026-12-02T10:00:00.000Z","kind":"main"}"#,
    "\n",
    r#"{"id":"m1","timestamp":"2026-12-02T10:00:00.000Z","type":"user","content":[{"text":"hi"}]}"#,
    "\n",
    r#"{"id":"m2","timestamp":"2026-12-02T10:00:01.000Z","type":"gemini","content":[{"text":"hello"}]}"#,
    "\n",
);

/// A Qwen Code session as formats.md §5.3 shows it: Claude Code's linking keys, Gemini
/// `Content` messages, a tool result row of its own.
const QWEN: &str = concat!(
    r#"{"uuid":"11111111-1111-4111-8111-111111111111","parentUuid":null,"sessionId":"5e55","timestamp":"2026-12-02T10:00:00.000Z","type":"user","cwd":"/tmp/w","version":"0.24.4","message":{"role":"user","parts":[{"text":"list the files and deploy"}]}}"#,
    "\n",
    r#"{"uuid":"22222222-2222-4222-8222-222222222222","parentUuid":"11111111-1111-4111-8111-111111111111","sessionId":"5e55","timestamp":"2026-12-02T10:00:01.000Z","type":"assistant","cwd":"/tmp/w","version":"0.24.4","model":"m","message":{"role":"model","parts":[{"functionCall":{"id":"c1","name":"list_directory","args":{"path":"/tmp/w"}}}]}}"#,
    "\n",
    r#"{"uuid":"33333333-3333-4333-8333-333333333333","parentUuid":"22222222-2222-4222-8222-222222222222","sessionId":"5e55","timestamp":"2026-12-02T10:00:02.000Z","type":"tool_result","cwd":"/tmp/w","version":"0.24.4","message":{"role":"user","parts":[{"functionResponse":{"id":"c1","name":"list_directory","response":{"output":"a.txt"}}}]},"toolCallResult":{"callId":"c1","status":"success"}}"#,
    "\n",
    r#"{"uuid":"44444444-4444-4444-8444-444444444444","parentUuid":"33333333-3333-4333-8333-333333333333","sessionId":"5e55","timestamp":"2026-12-02T10:00:03.000Z","type":"assistant","cwd":"/tmp/w","version":"0.24.4","model":"m","message":{"role":"model","parts":[{"text":"One file: a.txt"}]}}"#,
    "\n",
);

const COPILOT: &str = concat!(
    r#"{"type":"session.start","data":{"sessionId":"5e55","version":1},"id":"e1","timestamp":"2026-12-02T10:00:00.000Z","parentId":null}"#,
    "\n",
    r#"{"type":"user.message","data":{"content":"hi","messageId":"m1"},"id":"e2","timestamp":"2026-12-02T10:00:01.000Z","parentId":"e1"}"#,
    "\n",
    r#"{"type":"assistant.message","data":{"content":"hello","toolRequests":[]},"id":"e3","timestamp":"2026-12-02T10:00:02.000Z","parentId":"e2"}"#,
    "\n",
);

/// The sessions of Gemini CLI, Qwen Code and Copilot CLI (refused by name before mf read them)
/// are each read as their own format, and never misread: read under another `--from`, each is
/// refused, naming what it looks like and the `--from` that reads it; nothing is written.
#[test]
fn sessions_of_the_newer_agents_are_read_as_their_own_and_never_misread() {
    let env = TestEnv::new();
    for (name, text, format, what) in [
        ("gemini.jsonl", GEMINI, "gemini", "a Gemini CLI session"),
        ("qwen.jsonl", QWEN, "qwen", "a Qwen Code session"),
        (
            "copilot.jsonl",
            COPILOT,
            "copilot",
            "a GitHub Copilot CLI session",
        ),
    ] {
        let path = env.write(name, text);
        let out = env.mf(&["explain", name, "--json"]);
        assert_eq!(out.code, 0, "{name}: {out:?}");
        assert!(
            out.stdout.contains(&format!("\"format\":\"{format}\"")),
            "{name}: {out:?}"
        );
        for from in ["claude", "chat", "codex", "pi", "gemini", "qwen", "copilot"] {
            if from == format {
                continue;
            }
            let out = env.mf(&["recall", name, "--from", from]);
            let said = format!("{}{}", out.stdout, out.stderr);
            assert_eq!(out.code, 1, "{name} --from {from}: {out:?}");
            assert!(
                said.contains(&format!("(--from {from})")) && said.contains(what),
                "{name} --from {from}: {out:?}"
            );
        }
        assert_eq!(read(&path), text.as_bytes(), "{name} changed");
    }
}

/// `compact` of the incident fixture against `base` with an OpenAI-compatible model, `-v`, JSON
/// record; `vars` added to the environment.
fn compact_at(env: &TestEnv, base: &str, vars: &[(&str, &str)]) -> Output {
    let mut args = vec![
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "openai-compatible:smollm2",
        "-v",
        "--json",
    ];
    if !base.is_empty() {
        args.extend(["--base-url", base]);
    }
    env.mf_env(&args, vars)
}

#[test]
fn a_base_url_query_stays_after_the_joined_path_and_its_values_are_shown_nowhere() {
    let server = TestServer::start(vec![openai_ok(
        "The deploy of northwind failed on the migration; it was rolled back.",
    )]);
    let env = TestEnv::without_audit();
    let file = env.copy_fixture("incident-northwind.jsonl");
    let base = format!(
        "{}/v1?key=k3y-in-query-77&tenant=privat3-tenant&api-version=2024-10-21",
        server.url()
    );
    let out = compact_at(&env, &base, &[]);
    assert_eq!(out.code, 0, "{out:?}");
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1, "{out:?}");
    assert_eq!(
        reqs[0].path,
        "/v1/chat/completions?key=k3y-in-query-77&tenant=privat3-tenant&api-version=2024-10-21"
    );
    let written = String::from_utf8(read(&file)).unwrap();
    for secret in ["k3y-in-query-77", "privat3-tenant"] {
        for (what, text) in [
            ("stdout", &out.stdout),
            ("stderr", &out.stderr),
            ("the file", &written),
        ] {
            assert!(!text.contains(secret), "{secret} in {what}: {out:?}");
        }
    }
    // -v shows where it posts, with the plain setting kept.
    assert!(
        out.stderr.contains(
            "/v1/chat/completions?key=[REDACTED]&tenant=[REDACTED]&api-version=2024-10-21"
        ),
        "{out:?}"
    );
}

#[test]
fn a_base_url_fragment_is_refused_and_printed_nowhere() {
    let server = TestServer::start(vec![openai_ok("unused")]);
    let env = TestEnv::without_audit();
    let file = env.copy_fixture("incident-northwind.jsonl");
    let before = read(&file);
    let fragment = "fr4gment-s3cret-99";
    let base = format!("{}/v1#key={fragment}", server.url());
    for (how, out) in [
        ("--base-url", compact_at(&env, &base, &[])),
        (
            "MF_BASE_URL",
            compact_at(&env, "", &[("MF_BASE_URL", &base)]),
        ),
    ] {
        assert_eq!(out.code, 2, "{how}: {out:?}");
        assert!(
            out.stderr.contains("has a fragment") && out.stderr.contains("remove the `#`"),
            "{how}: {out:?}"
        );
        for (what, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            assert!(
                !text.contains(fragment),
                "{how}: fragment in {what}: {out:?}"
            );
        }
    }
    assert!(server.requests().is_empty(), "nothing is sent");
    assert_eq!(read(&file), before, "nothing is written");
    assert!(!String::from_utf8_lossy(&read(&file)).contains(fragment));
}
