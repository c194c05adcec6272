//! Recall on demand: `mf search` over what the folds hide, `mf expand` of one entry, the label
//! that names a summary's id and how to read its originals, and `mf mcp` spoken to as a plain
//! JSON-RPC client would (initialize, tools/list, tools/call), on chat and agent sessions.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

use crate::util::*;

/// A fixture copied, aged (so no live guard stops a write) and folded with the built-in summarizer.
fn folded(env: &TestEnv, fixture: &str, extra: &[&str]) -> Value {
    let p = env.copy_fixture(fixture);
    age(&p);
    let mut args = vec![
        "compact",
        fixture,
        "--model",
        "extractive",
        "--min-retention",
        "0",
        "--json",
    ];
    args.extend_from_slice(extra);
    let rec = json_lines(&env.mf_ok(&args).stdout).remove(0);
    assert_eq!(rec["action"], "folded", "{fixture}: {rec}");
    rec
}

fn search(env: &TestEnv, file: &str, query: &str, extra: &[&str]) -> (i32, Vec<Value>, String) {
    let mut args = vec!["search", file, query, "--json"];
    args.extend_from_slice(extra);
    let out = env.mf(&args);
    (out.code, json_lines(&out.stdout), out.stderr)
}

#[test]
fn a_folded_fact_is_found_by_its_identifier_its_path_its_number_and_a_question_in_words() {
    let env = TestEnv::new();
    let rec = folded(&env, "incident-northwind.jsonl", &[]);
    let summary = rec["summaries"][0]["id"].as_str().unwrap().to_string();
    // An identifier, a path, a number: the entry that holds each ranks first, folded under the summary.
    for (query, needle) in [
        ("redis-pricing-02.internal", "redis-pricing-02.internal"),
        ("deploy/prod/cache.yaml", "deploy/prod/cache.yaml"),
        ("1840", "1840"),
    ] {
        let (code, hits, err) = search(&env, "incident-northwind.jsonl", query, &[]);
        assert_eq!(code, 0, "{query}: {err}");
        assert!(
            hits[0]["text"].as_str().unwrap().contains(needle),
            "{query}: {hits:?}"
        );
        assert_eq!(hits[0]["folded"], true);
        assert_eq!(hits[0]["coveredBy"], summary.as_str());
    }
    // A question in words, with none of its terms written as in the file.
    let (code, hits, _) = search(
        &env,
        "incident-northwind.jsonl",
        "who is the on-call person this week",
        &["--limit", "3"],
    );
    assert_eq!(code, 0);
    assert!(
        hits.iter()
            .any(|h| h["text"].as_str().unwrap().contains("Priya Raman")),
        "{hits:?}"
    );
    assert!(hits.len() <= 3);
}

#[test]
fn a_hit_is_an_id_expand_prints() {
    let env = TestEnv::new();
    folded(&env, "incident-northwind.jsonl", &[]);
    let (_, hits, _) = search(
        &env,
        "incident-northwind.jsonl",
        "redis-pricing-02.internal",
        &[],
    );
    let id = hits[0]["id"].as_str().unwrap();
    let line = hits[0]["line"].as_u64().unwrap() as usize;
    let out = env.mf_ok(&["expand", "incident-northwind.jsonl", id]);
    let original = std::fs::read_to_string(env.path("incident-northwind.jsonl")).unwrap();
    assert_eq!(
        out.stdout,
        format!("{}\n", original.lines().nth(line - 1).unwrap())
    );
    let text = env.mf_ok(&["expand", "incident-northwind.jsonl", id, "--format", "text"]);
    assert!(
        text.stdout.contains("redis-pricing-02.internal"),
        "{}",
        text.stdout
    );
    // An ordinary entry cannot be restored: only a summary or stub can.
    let out = env.mf(&["expand", "incident-northwind.jsonl", id, "--restore"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("ordinary message"), "{out:?}");
}

#[test]
fn search_shows_the_matching_lines_with_their_context_on_a_pipe() {
    let env = TestEnv::new();
    folded(&env, "incident-northwind.jsonl", &[]);
    let out = env.mf_ok(&[
        "search",
        "incident-northwind.jsonl",
        "redis-pricing-02.internal",
        "--limit",
        "1",
    ]);
    let mut lines = out.stdout.lines();
    let head = lines.next().unwrap();
    assert!(head.starts_with("1. m"), "{head}");
    assert!(head.contains(" · folded by msg-summary-1-13"), "{head}");
    assert!(
        out.stdout
            .contains("   >   host: redis-pricing-02.internal"),
        "{}",
        out.stdout
    );
}

#[test]
fn no_hit_exits_1_and_an_empty_query_is_a_usage_error() {
    let env = TestEnv::new();
    folded(&env, "incident-northwind.jsonl", &[]);
    let out = env.mf(&["search", "incident-northwind.jsonl", "zanzibar-quokka"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stdout.is_empty());
    assert!(
        out.stderr.contains("no hit in 49 folded entries"),
        "{out:?}"
    );
    assert!(out.stderr.contains("--all"), "{out:?}");
    let out = env.mf(&["search", "incident-northwind.jsonl", "the of and"]);
    assert_eq!(out.code, 2, "{out:?}");
    let long = "word ".repeat(1_000);
    let out = env.mf(&["search", "incident-northwind.jsonl", &long]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("5000 characters long"), "{out:?}");
    let out = env.mf(&["search", "missing.jsonl", "x"]);
    assert_eq!(out.code, 1, "{out:?}");
}

#[test]
fn the_default_scope_is_what_the_folds_hide_and_all_is_every_entry() {
    let env = TestEnv::new();
    folded(&env, "incident-northwind.jsonl", &[]);
    // The newest turns stay verbatim: the model sees them, so only --all finds them.
    let original = std::fs::read_to_string(env.path("incident-northwind.jsonl")).unwrap();
    let last_user = original
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .rfind(|v| v["role"] == "user" && v.get("mf").is_none())
        .unwrap();
    let id = last_user["id"].as_str().unwrap().to_string();
    let phrase: String = last_user["content"]
        .as_str()
        .unwrap()
        .split_whitespace()
        .take(4)
        .collect::<Vec<_>>()
        .join(" ");
    let quoted = format!("\"{phrase}\"");
    let (_, hits, _) = search(
        &env,
        "incident-northwind.jsonl",
        &quoted,
        &["--limit", "50"],
    );
    assert!(
        hits.iter()
            .all(|h| h["folded"] == true && h["id"] != id.as_str()),
        "{hits:?}"
    );
    let (code, hits, _) = search(&env, "incident-northwind.jsonl", &quoted, &["--all"]);
    assert_eq!(code, 0);
    assert_eq!(hits[0]["id"], id.as_str(), "{hits:?}");
    assert_eq!(hits[0]["folded"], false);
    assert_eq!(hits[0]["coveredBy"], Value::Null);
}

#[test]
fn a_file_with_nothing_folded_is_searched_whole_and_says_so() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    let out = env.mf(&[
        "search",
        "incident-northwind.jsonl",
        "redis-pricing-02.internal",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(
        out.stderr
            .contains("nothing in `incident-northwind.jsonl` is folded: searched every entry"),
        "{out:?}"
    );
    assert_eq!(json_lines(&out.stdout)[0]["folded"], false);
}

#[test]
fn search_works_on_each_agents_sessions_and_names_what_hides_the_hit() {
    for fixture in [
        "claude-session.jsonl",
        "codex-rollout.jsonl",
        "pi-session-v3.jsonl",
    ] {
        let env = TestEnv::new();
        let rec = folded(&env, fixture, &[]);
        let summary = rec["summaries"][0]["id"].as_str().unwrap().to_string();
        // Whatever a folded entry says can be found again: take a distinctive word of one.
        let hidden = env
            .mf_ok(&["expand", fixture, &summary, "--format", "text"])
            .stdout;
        // The entries' own text, not the headings with their ids.
        let hidden: String = hidden
            .lines()
            .filter(|l| !l.starts_with("── "))
            .collect::<Vec<_>>()
            .join("\n");
        let word = hidden
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '.'))
            .filter(|w| {
                w.len() >= 8
                    && w.chars()
                        .any(|c| c.is_ascii_digit() || c == '_' || c == '.')
            })
            .find(|w| !w.starts_with('.') && !w.ends_with('.'))
            .unwrap_or_else(|| panic!("{fixture}: no identifier in the folded text"))
            .to_string();
        let (code, hits, err) = search(&env, fixture, &word, &[]);
        assert_eq!(code, 0, "{fixture}: {word}: {err}");
        assert!(
            hits[0]["text"]
                .as_str()
                .unwrap()
                .to_lowercase()
                .contains(&word.to_lowercase()),
            "{fixture}: {word}: {hits:?}"
        );
        assert_eq!(hits[0]["coveredBy"], summary.as_str(), "{fixture}");
        // The hit's id is one expand takes.
        let id = hits[0]["id"].as_str().unwrap();
        env.mf_ok(&["expand", fixture, id, "--format", "text"]);
    }
}

#[test]
fn an_agents_own_compaction_hides_what_it_folded_and_search_finds_it() {
    let env = TestEnv::new();
    let p = env.copy_fixture("claude-compacted.jsonl");
    age(&p);
    let hidden: Vec<Value> = file_lines(&p);
    let boundary = hidden
        .iter()
        .position(|v| v["subtype"] == "compact_boundary")
        .expect("a compact boundary");
    // A user prompt before Claude Code's own compaction.
    let prompt = hidden[..boundary]
        .iter()
        .find_map(|v| {
            (v["type"] == "user")
                .then(|| v["message"]["content"].as_str().map(str::to_string))
                .flatten()
        })
        .expect("a typed prompt before the boundary");
    let words: String = prompt
        .split_whitespace()
        .take(5)
        .collect::<Vec<_>>()
        .join(" ");
    let (code, hits, err) = search(&env, "claude-compacted.jsonl", &format!("\"{words}\""), &[]);
    assert_eq!(code, 0, "{words}: {err}");
    assert_eq!(hits[0]["folded"], true, "{hits:?}");
    assert!(hits[0]["coveredBy"].is_string(), "{hits:?}");
}

#[test]
fn the_label_names_the_summary_and_the_command_that_reads_its_originals() {
    let env = TestEnv::new();
    for fixture in [
        "incident-northwind.jsonl",
        "claude-session.jsonl",
        "codex-rollout.jsonl",
        "pi-session-v3.jsonl",
    ] {
        let rec = folded(&env, fixture, &[]);
        let id = rec["summaries"][0]["id"].as_str().unwrap();
        let text = env.mf_ok(&["recall", fixture, "--format", "text"]).stdout;
        let label = text.lines().nth(1).unwrap();
        let path = std::fs::canonicalize(env.path(fixture)).unwrap();
        let abs = std::path::absolute(env.path(fixture)).unwrap();
        assert!(
            label.ends_with(&format!(
                "; to read them, run: mf expand {} {id}.]",
                abs.display()
            )) || label.ends_with(&format!(
                "; to read them, run: mf expand {} {id}.]",
                path.display()
            )),
            "{fixture}: {label}"
        );
        // The command the label names works, and the file verifies clean.
        let words: Vec<&str> = label.trim_end_matches(".]").rsplitn(3, ' ').collect();
        let out = env.mf_ok(&["expand", words[1], words[0], "--format", "text"]);
        assert!(!out.stdout.is_empty());
        env.mf_ok(&["verify", fixture]);
    }
}

#[test]
fn a_label_naming_another_id_or_a_path_mf_would_quote_is_not_honoured() {
    let env = TestEnv::new();
    folded(&env, "incident-northwind.jsonl", &[]);
    let p = env.path("incident-northwind.jsonl");
    let text = std::fs::read_to_string(&p).unwrap();
    let last = text
        .lines()
        .rfind(|l| l.contains("msg-summary-1-13"))
        .unwrap()
        .to_string();
    // The label edited and the fingerprint refit, as a forger would.
    let label = text
        .lines()
        .rfind(|l| l.contains("msg-summary-1-13"))
        .unwrap();
    let path = regex::Regex::new(r"run: mf expand (\S+) msg-summary-1-13\.\]")
        .unwrap()
        .captures(label)
        .unwrap()[1]
        .to_string();
    let refit = |from: &str, to: &str| -> String {
        let mut v: Value = serde_json::from_str(&last).unwrap();
        let content = v["content"].as_str().unwrap().replace(from, to);
        v["mf"]["coverage"]["fingerprint"] = json!(mf::digest::content_fingerprint(&content));
        v["content"] = json!(content);
        text.replace(&last, &serde_json::to_string(&v).unwrap())
    };
    let verify = |bytes: String| {
        std::fs::write(&p, bytes).unwrap();
        env.mf(&["verify", "incident-northwind.jsonl"])
    };
    // The file moved: its summaries still stand (the path is not what binds them).
    let out = verify(refit(&path, "/srv/archive/moved.jsonl"));
    assert_eq!(out.code, 0, "{out:?}");
    // Another id, a path mf would have quoted written bare, another command: not mf's label.
    for (from, to) in [
        (" msg-summary-1-13.]", " msg-summary-1-12.]"),
        (path.as_str(), "/a b/c.jsonl"),
        ("run: mf expand", "run: rm -rf ~; mf expand"),
    ] {
        let out = verify(refit(from, to));
        assert_eq!(out.code, 1, "{to}: {out:?}");
        assert!(out.stdout.contains("label"), "{to}: {out:?}");
    }
}

/// A plain JSON-RPC client of `mf mcp` over its stdin and stdout.
struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Client {
    fn start(env: &TestEnv, args: &[&str], home: &Path) -> Client {
        Client::start_with(env, args, home, &[])
    }

    fn start_with(env: &TestEnv, args: &[&str], home: &Path, vars: &[(&str, &str)]) -> Client {
        let mut cmd = Command::new(mf_bin());
        cmd.arg("mcp")
            .args(args)
            .current_dir(env.path(""))
            .env_clear()
            .env("HOME", home)
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .envs(vars.iter().copied());
        let mut child = cmd.spawn().expect("start mf mcp");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut c = Client {
            child,
            stdin,
            stdout,
            next: 1,
        };
        let init = c.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}),
        );
        assert_eq!(init["result"]["serverInfo"]["name"], "mf", "{init}");
        assert!(
            init["result"]["capabilities"]["tools"].is_object(),
            "{init}"
        );
        c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        c
    }

    fn send(&mut self, v: Value) {
        writeln!(self.stdin, "{v}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.stdout.read_line(&mut line).unwrap() > 0,
                "the server closed its output"
            );
            let v: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
            if v["id"] == id {
                return v;
            }
        }
    }

    /// A tool call: (is it an error, its text).
    fn call(&mut self, tool: &str, args: Value) -> (bool, String) {
        let r = self.request("tools/call", json!({"name": tool, "arguments": args}));
        let res = &r["result"];
        assert!(res.is_object(), "{tool}: {r}");
        (
            res["isError"] == true,
            res["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        )
    }

    fn close(mut self) {
        drop(self.stdin);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "mf mcp exited {status}");
    }
}

#[test]
fn mcp_serves_search_expand_and_folds_over_json_rpc() {
    let env = TestEnv::new();
    folded(&env, "incident-northwind.jsonl", &[]);
    let before = read(&env.path("incident-northwind.jsonl"));
    let home = env.path("home");
    std::fs::create_dir_all(&home).unwrap();
    let mut c = Client::start(&env, &["--file", "incident-northwind.jsonl"], &home);
    let tools = c.request("tools/list", json!({}));
    let mut names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(names, ["expand", "folds", "search"]);
    for t in tools["result"]["tools"].as_array().unwrap() {
        assert!(t["inputSchema"]["properties"].is_object(), "{t}");
    }
    let (err, text) = c.call(
        "search",
        json!({"query": "redis-pricing-02.internal", "limit": 2}),
    );
    assert!(!err, "{text}");
    assert!(
        text.contains("folded by msg-summary-1-13") && text.contains("redis-pricing-02.internal"),
        "{text}"
    );
    let id = text
        .lines()
        .find(|l| l.starts_with("1. "))
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .to_string();
    let (err, text) = c.call("expand", json!({"id": id}));
    assert!(!err && text.contains("redis-pricing-02.internal"), "{text}");
    let (err, text) = c.call("folds", json!({}));
    assert!(!err, "{text}");
    assert!(
        text.contains("msg-summary-1-13 · summary · turns 1–13 · 49 messages"),
        "{text}"
    );
    // A summary's originals, paged: every page moves on, and the pages add up to the whole.
    let (_, whole) = c.call(
        "expand",
        json!({"id": "msg-summary-1-13", "max_tokens": 100_000}),
    );
    assert!(!whole.contains("… more"), "one page");
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let mut args = json!({"id": "msg-summary-1-13", "max_tokens": 300});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let (err, page) = c.call("expand", args);
        assert!(!err, "{page}");
        pages.push(page.clone());
        match page.rsplit_once("and cursor \"") {
            Some((_, rest)) => cursor = Some(rest.trim_end_matches('"').to_string()),
            None => break,
        }
        assert!(pages.len() < 100, "the pages do not end");
    }
    assert!(pages.len() > 2, "{}", pages.len());
    let body = |p: &str| -> String {
        let p = p.split_once("\n\n").map_or("", |x| x.1);
        p.rsplit_once("\n… more").map_or(p, |x| x.0).to_string()
    };
    let joined: String = pages.iter().map(|p| body(p)).collect();
    assert_eq!(joined, body(&whole));
    // Tool errors, and the server goes on.
    let (err, text) = c.call("expand", json!({"id": "no-such-id"}));
    assert!(
        err && text.contains("no entry `no-such-id`") && text.contains("msg-summary-1-13"),
        "{text}"
    );
    let (err, text) = c.call(
        "expand",
        json!({"id": "msg-summary-1-13", "cursor": "99.0"}),
    );
    assert!(err && text.contains("cursor"), "{text}");
    let (err, text) = c.call("search", json!({"query": "q".repeat(10_000)}));
    assert!(err && text.contains("10000 characters long"), "{text}");
    let (err, text) = c.call("search", json!({"query": "zanzibar-quokka"}));
    assert!(!err && text.starts_with("No hit"), "{text}");
    let (err, text) = c.call("search", json!({"query": "the of"}));
    assert!(err && text.contains("nothing to look for"), "{text}");
    env.write("notes.txt", "not a session\n");
    let (err, text) = c.call("search", json!({"query": "x1", "file": "notes.txt"}));
    assert!(err && text.contains("notes.txt"), "{text}");
    let (err, text) = c.call("folds", json!({"file": "missing.jsonl"}));
    assert!(err && text.contains("missing.jsonl"), "{text}");
    let (err, _) = c.call("folds", json!({}));
    assert!(!err, "the server still answers");
    c.close();
    assert_eq!(
        read(&env.path("incident-northwind.jsonl")),
        before,
        "the server never writes"
    );
}

/// A Claude Code process file naming session `sid`, held by a running process: the session is
/// live while the process runs.
fn claude_running(home: &Path, sid: &str) -> Child {
    let sessions = home.join(".claude/sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    let sleeper = Command::new("sleep").arg("120").spawn().unwrap();
    let pid = sleeper.id();
    std::fs::write(
        sessions.join(format!("{pid}.json")),
        json!({"pid": pid, "sessionId": sid, "cwd": "/tmp", "status": "busy"}).to_string(),
    )
    .unwrap();
    sleeper
}

#[test]
fn mcp_without_a_file_reads_the_newest_session_of_the_directory_and_says_what_to_pass() {
    let env = TestEnv::new();
    let home = env.path("home");
    let project = env.path("proj");
    std::fs::create_dir_all(&project).unwrap();
    let project = std::fs::canonicalize(&project).unwrap();
    let cwd = project.to_str().unwrap();
    // No session yet: a tool error naming what to pass.
    let mut c = Client::start(&env, &["--agent", "claude", "--cwd", cwd], &home);
    let (err, text) = c.call("folds", json!({}));
    assert!(
        err && text.contains("no claude session") && text.contains("`file`"),
        "{text}"
    );
    // One session: read without naming it (the agent starts its server before the file exists).
    let dir = home
        .join(".claude/projects")
        .join(cwd.replace(|c: char| !c.is_ascii_alphanumeric(), "-"));
    std::fs::create_dir_all(&dir).unwrap();
    let original = std::fs::read_to_string(fixture("claude-session.jsonl")).unwrap();
    let sid = "7c0b5d1e-3f4a-4c8e-9a61-2d5e8f0b7a93";
    assert!(original.contains(sid));
    let (a, b) = (
        "aaaaaaaa-0000-4000-8000-000000000001",
        "bbbbbbbb-0000-4000-8000-000000000002",
    );
    let session = |id: &str| {
        original
            .replace("/home/dev/src/ledgerline", cwd)
            .replace(sid, id)
    };
    std::fs::write(dir.join(format!("{a}.jsonl")), session(a)).unwrap();
    let (err, text) = c.call("folds", json!({}));
    assert!(!err && text.contains(a), "{text}");
    // Two live sessions: which one is for the caller to say.
    std::fs::write(dir.join(format!("{b}.jsonl")), session(b)).unwrap();
    let mut running = vec![claude_running(&home, a), claude_running(&home, b)];
    let (err, text) = c.call("folds", json!({}));
    assert!(
        err && text.contains("2 claude sessions")
            && text.contains("are live")
            && text.contains(a)
            && text.contains(b),
        "{text}"
    );
    let (err, text) = c.call(
        "folds",
        json!({"file": dir.join(format!("{b}.jsonl")).to_str().unwrap()}),
    );
    assert!(!err && text.contains(b), "{text}");
    c.close();
    // Claude Code names its session to its MCP servers: that one is read, live or not.
    let mut c = Client::start_with(
        &env,
        &["--agent", "claude", "--cwd", cwd],
        &home,
        &[("CLAUDE_CODE_SESSION_ID", a)],
    );
    let (err, text) = c.call("folds", json!({}));
    assert!(!err && text.contains(a), "{text}");
    c.close();
    for p in &mut running {
        let _ = p.kill();
        let _ = p.wait();
    }
}
