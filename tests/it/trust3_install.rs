//! Issue 25 (trust, round 3), defects 1 and 3 and two of 8: `mf hook install` never writes
//! through a link it did not expect, gives the user's config bytes back, refuses what it cannot
//! write before writing anything; the hook's own cache directory is never a planted link; the
//! hook has a deadline of its own while stdin stays open.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::util::{TestEnv, is_root};

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn home(env: &TestEnv) -> String {
    let h = env.path("home");
    std::fs::create_dir_all(&h).unwrap();
    h.to_str().unwrap().to_string()
}

/// mf's backups of `file` there are.
fn backups_of(file: &Path) -> Vec<PathBuf> {
    let dir = file.parent().unwrap();
    let name = file.file_name().unwrap().to_str().unwrap();
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with(&format!("{name}.mf-backup"))
        })
        .collect();
    out.sort();
    out
}

/// Every file under `dir` (relative paths), links included, sorted.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.filter_map(Result::ok) {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The eleven settings files of defect 3 (None: no file before install).
fn matrix() -> Vec<(&'static str, Option<&'static str>)> {
    vec![
        (
            "pretty",
            Some("{\n  \"model\": \"opus\",\n  \"env\": {\n    \"A\": \"1\"\n  }\n}\n"),
        ),
        (
            "compact",
            Some("{\"model\":\"opus\",\"env\":{\"A\":\"1\"}}\n"),
        ),
        (
            "CRLF",
            Some(
                "{\r\n  \"model\": \"opus\",\r\n  \"permissions\": {\r\n    \"deny\": [\"Bash(rm:*)\"]\r\n  }\r\n}\r\n",
            ),
        ),
        (
            "escapes",
            Some(
                "{\n  \"name\": \"caf\\u00e9 \\ud83d\\ude00 \\udc00\",\n  \"p\\u0061th\": \"a\\/b\"\n}\n",
            ),
        ),
        (
            "duplicate keys",
            Some(
                "{\n  \"model\": \"opus\",\n  \"model\": \"sonnet\",\n  \"hooks\": {},\n  \"hooks\": {\"Stop\": []}\n}\n",
            ),
        ),
        (
            "big integer",
            Some("{\n  \"n\": 123456789012345678901234567890,\n  \"f\": 1.50E+3\n}\n"),
        ),
        ("no trailing newline", Some("{\n  \"model\": \"opus\"\n}")),
        (
            "tabs",
            Some("{\n\t\"model\": \"opus\",\n\t\"env\": {\n\t\t\"A\": \"1\"\n\t}\n}\n"),
        ),
        (
            "user hooks",
            Some(
                "{\n  \"hooks\": {\n    \"PreCompact\": [\n      {\n        \"matcher\": \"auto\",\n        \"hooks\": [\n          {\"type\": \"command\", \"command\": \"echo mine\"}\n        ]\n      }\n    ],\n    \"Stop\": [{\"matcher\": \"\", \"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}]\n  },\n  \"permissions\": {\"allow\": [\"Bash(ls:*)\"]}\n}\n",
            ),
        ),
        (
            "user hook ending in mf hook claude-code",
            Some(
                "{\n  \"hooks\": {\n    \"SessionStart\": [\n      {\"matcher\": \"\", \"hooks\": [{\"type\": \"command\", \"command\": \"/opt/wrap/mf hook claude-code\", \"timeout\": 60}]},\n      {\"matcher\": \"\", \"hooks\": [{\"type\": \"command\", \"command\": \"logger mf hook claude-code\"}]}\n    ]\n  }\n}\n",
            ),
        ),
        ("no file", None),
    ]
}

/// Install, install again, uninstall: the settings file (here a plain file or a link to one in
/// a dotfiles directory) comes back byte for byte, a link stays a link, and nothing mf made is
/// left behind — in user scope and in a project's.
#[test]
fn uninstall_gives_every_settings_file_back_byte_for_byte_in_both_scopes_and_through_a_link() {
    for project in [false, true] {
        for link in [false, true] {
            for (what, original) in matrix() {
                if link && original.is_none() {
                    continue;
                }
                let env = TestEnv::new();
                let h = home(&env);
                let settings = if project {
                    env.path(".claude/settings.json")
                } else {
                    env.path("home/.claude/settings.json")
                };
                std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
                let real = if link {
                    let t = env.path("dotfiles/settings.json");
                    std::fs::create_dir_all(t.parent().unwrap()).unwrap();
                    std::os::unix::fs::symlink(&t, &settings).unwrap();
                    t
                } else {
                    settings.clone()
                };
                if let Some(text) = original {
                    std::fs::write(&real, text).unwrap();
                } else {
                    std::fs::remove_dir(settings.parent().unwrap()).unwrap();
                }
                let before = tree(env.dir.path());
                let case = format!("{what} (project {project}, link {link})");
                let mut args = vec!["hook", "install", "claude-code"];
                if project {
                    args.push("--project");
                }
                let out = env.mf_env(&args, &[("HOME", &h)]);
                assert_eq!(out.code, 0, "{case}: {out:?}");
                let installed = read(&real);
                let v: serde_json::Value = match serde_json::from_slice(&installed) {
                    Ok(v) => v,
                    // serde_json refuses a lone surrogate escape that Claude Code reads.
                    Err(_) => serde_json::from_str(
                        &String::from_utf8_lossy(&installed).replace("\\udc00", ""),
                    )
                    .unwrap(),
                };
                let pre = v["hooks"]["PreCompact"].as_array().unwrap();
                let cmd = pre.last().unwrap()["hooks"][0]["command"].as_str().unwrap();
                assert!(cmd.contains(" hook claude-code"), "{case}: {cmd}");
                if let Some(text) = original {
                    // The first backup holds the user's own bytes.
                    assert_eq!(read(&backup_path(&settings)), text.as_bytes(), "{case}");
                    if text.contains("\r\n") {
                        let s = String::from_utf8(installed.clone()).unwrap();
                        assert!(!s.replace("\r\n", "").contains('\n'), "{case}: {s}");
                    }
                    // Every byte of the user's is still there, in order (mf only inserted).
                    let s = String::from_utf8(installed.clone()).unwrap();
                    let mut at = 0;
                    for c in text.chars() {
                        let Some(i) = s[at..].find(c) else {
                            panic!("{case}: the user's byte {c:?} is gone: {s}");
                        };
                        at += i + c.len_utf8();
                    }
                }
                let out = env.mf_env(&args, &[("HOME", &h)]);
                assert_eq!(out.code, 0, "{case}: {out:?}");
                assert_eq!(
                    read(&real),
                    installed,
                    "{case}: install twice changes nothing"
                );
                args[1] = "uninstall";
                let out = env.mf_env(&args, &[("HOME", &h)]);
                assert_eq!(out.code, 0, "{case}: {out:?}");
                match original {
                    Some(text) => {
                        assert_eq!(
                            String::from_utf8_lossy(&read(&real)),
                            text,
                            "{case}: uninstall gives the bytes back"
                        );
                        assert!(
                            settings
                                .symlink_metadata()
                                .unwrap()
                                .file_type()
                                .is_symlink()
                                == link,
                            "{case}: a link stays a link"
                        );
                    }
                    None => assert!(!settings.exists(), "{case}: no file where there was none"),
                }
                assert_eq!(
                    tree(env.dir.path()),
                    before,
                    "{case}: nothing of mf's is left (backups, .mcp.json, directories)"
                );
            }
        }
    }
}

fn backup_path(settings: &Path) -> PathBuf {
    let mut n = settings.file_name().unwrap().to_os_string();
    n.push(".mf-backup");
    settings.with_file_name(n)
}

/// Changed since install: uninstall takes out only mf's entries (known by their marker) and
/// leaves every other byte — the user's own hook that merely ends in `mf hook claude-code`
/// included. The first backup is never overwritten.
#[test]
fn uninstall_after_an_edit_removes_only_mfs_entries_and_the_first_backup_stays() {
    for (what, original) in matrix() {
        let Some(original) = original else { continue };
        let env = TestEnv::new();
        let h = home(&env);
        let settings = env.path("home/.claude/settings.json");
        std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
        std::fs::write(&settings, original).unwrap();
        env.mf_env(&["hook", "install", "claude-code"], &[("HOME", &h)])
            .ok();
        // The user edits the file after install: a first line of their own.
        let installed = String::from_utf8(read(&settings)).unwrap();
        let open = installed.find('{').unwrap() + 1;
        let edit = |s: &str| format!("{}\"mine\": 1,{}", &s[..open], &s[open..]);
        std::fs::write(&settings, edit(&installed)).unwrap();
        let out = env.mf_env(&["hook", "uninstall", "claude-code"], &[("HOME", &h)]);
        assert_eq!(out.code, 0, "{what}: {out:?}");
        let after = String::from_utf8(read(&settings)).unwrap();
        assert_eq!(after, edit(original), "{what}");
        assert!(after.contains("mf hook claude-code") == original.contains("mf hook claude-code"));
        assert_eq!(read(&backup_path(&settings)), original.as_bytes(), "{what}");
        // Install again over the edited file: a second backup, the first untouched.
        env.mf_env(&["hook", "install", "claude-code"], &[("HOME", &h)])
            .ok();
        assert_eq!(read(&backup_path(&settings)), original.as_bytes(), "{what}");
        let all = backups_of(&settings);
        assert_eq!(all.len(), 2, "{what}: {all:?}");
        assert_eq!(read(&all[1]), edit(original).as_bytes(), "{what}");
    }
}

/// Defect 1: a repository ships `.claude/settings.json.mf-backup` as a link to a file outside;
/// installing in the clone refuses, names the link, and writes nothing anywhere.
#[test]
fn a_planted_backup_link_is_refused_and_nothing_is_written() {
    let env = TestEnv::new();
    let h = home(&env);
    let outside = env.path("home/.bashrc");
    std::fs::write(&outside, "export PS1='$ '\n").unwrap();
    std::fs::create_dir_all(env.path(".claude")).unwrap();
    let settings = env.path(".claude/settings.json");
    std::fs::write(&settings, "{\"model\": \"opus\"}\n").unwrap();
    let link = env.path(".claude/settings.json.mf-backup");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let before = tree(env.dir.path());
    let out = env.mf_env(
        &["hook", "install", "claude-code", "--project"],
        &[("HOME", &h)],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains(link.to_str().unwrap()), "{out:?}");
    assert!(out.stderr.contains("symlink"), "{out:?}");
    assert_eq!(read(&outside), b"export PS1='$ '\n");
    assert_eq!(read(&settings), b"{\"model\": \"opus\"}\n");
    assert_eq!(tree(env.dir.path()), before, "no file written, none made");
}

/// A settings file mf cannot write (immutable as root, read-only otherwise): refused with the
/// documented refusal exit (1, not the internal 2), the file named, and no backup left behind —
/// nothing is written before every target is checked.
#[test]
fn an_unwritable_settings_file_is_refused_before_anything_is_written() {
    let env = TestEnv::new();
    let h = home(&env);
    let settings = env.path("home/.claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, "{\"model\": \"opus\"}\n").unwrap();
    let immutable = is_root();
    if immutable {
        let ok = std::process::Command::new("chattr")
            .arg("+i")
            .arg(&settings)
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            eprintln!(
                "SKIPPED an_unwritable_settings_file_is_refused_before_anything_is_written: \
running as root and `chattr +i` is not available here (no chattr, or the file system has no \
immutable flag)"
            );
            return;
        }
    } else {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&settings, std::fs::Permissions::from_mode(0o444)).unwrap();
    }
    let before = tree(env.dir.path());
    let out = env.mf_env(&["hook", "install", "claude-code"], &[("HOME", &h)]);
    if immutable {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&settings)
            .status();
    }
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains(settings.to_str().unwrap()), "{out:?}");
    assert!(
        out.stderr.contains("chattr -i") || out.stderr.contains("chmod"),
        "{out:?}"
    );
    assert_eq!(read(&settings), b"{\"model\": \"opus\"}\n");
    assert_eq!(
        tree(env.dir.path()),
        before,
        "no backup, no .claude.json: nothing written"
    );
}

/// Defect 8: `mf` in a shared (1777) cache directory planted as a link to another directory:
/// neither the hook's state nor a checkpoint is written through it.
#[test]
fn a_planted_mf_link_in_a_shared_cache_dir_is_not_followed() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let h = home(&env);
    let shared = env.path("shared-tmp");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let theirs = env.path("theirs");
    std::fs::create_dir(&theirs).unwrap();
    std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::os::unix::fs::symlink(&theirs, shared.join("mf")).unwrap();
    let cache = [
        ("HOME", h.as_str()),
        ("MF_CACHE_DIR", shared.to_str().unwrap()),
        ("MF_CACHE_MIN_BYTES", "1"),
    ];
    // The hook's PostCompact keeps Claude Code's summary in the cache: refused, exit 0.
    let input = r#"{"session_id":"s-1","transcript_path":"/nonexistent","hook_event_name":"PostCompact","compact_summary":"the secret plan"}"#;
    let mut cmd = env.command(&["hook", "claude-code"], &cache);
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
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("is a symlink"), "{stderr}");
    // A read that would leave a checkpoint.
    let file = env.copy_fixture("claude-session.jsonl");
    let out = env.mf_env(&["recall", file.to_str().unwrap()], &cache);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        tree(&theirs),
        Vec::<String>::new(),
        "nothing written through the planted link"
    );
}

/// Defect 8: the hook with its stdin held open (a caller that never closes it) gives up after
/// its own deadline and exits 0 with a warning, as on its other failures.
#[test]
fn the_hook_has_a_deadline_of_its_own_while_stdin_stays_open() {
    let env = TestEnv::new();
    let h = home(&env);
    let mut cmd = env.command(&["hook", "claude-code"], &[("HOME", &h)]);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"{\"hook_event_name\":").unwrap();
    // Held open (not dropped) while the hook runs.
    let deadline = Duration::from_secs(30);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > deadline {
            let _ = child.kill();
            panic!("the hook still ran after {deadline:?} with stdin open");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let took = start.elapsed();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.code(), Some(0), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(stderr.contains("did not end within"), "{stderr}");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

/// Codex's config and Claude Code's MCP registration: install then uninstall, byte for byte,
/// and no backup left behind.
#[test]
fn codex_config_and_the_mcp_registration_come_back_byte_for_byte() {
    let env = TestEnv::new();
    let h = home(&env);
    let config = env.path("home/.codex/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let toml =
        "# mine\r\nmodel = \"gpt-5\"\r\n\r\n[mcp_servers.other]\r\ncommand = \"x\"  # keep\r\n";
    std::fs::write(&config, toml).unwrap();
    let claude_json = env.path("home/.claude.json");
    let json = "{\"userID\": 123456789012345678901234567890, \"mcpServers\": {\"a\": {}}, \"k\": \"\\u00e9\"}";
    std::fs::write(&claude_json, json).unwrap();
    let before = tree(env.dir.path());
    for agent in ["codex", "claude-code"] {
        env.mf_env(&["hook", "install", agent], &[("HOME", &h)])
            .ok();
        env.mf_env(&["hook", "install", agent], &[("HOME", &h)])
            .ok();
        env.mf_env(&["hook", "uninstall", agent], &[("HOME", &h)])
            .ok();
    }
    assert_eq!(read(&config), toml.as_bytes());
    assert_eq!(read(&claude_json), json.as_bytes());
    assert_eq!(tree(env.dir.path()), before);
}

/// Codex's compact prompt is mf's own file: a link planted at its name (to a file of the
/// user's) is refused on install and on uninstall, named, and nothing is written or removed.
#[test]
fn a_link_at_codexs_compact_prompt_is_neither_written_through_nor_removed() {
    let env = TestEnv::new();
    let h = home(&env);
    let outside = env.path("home/.bashrc");
    std::fs::write(&outside, "export PS1='$ '\n").unwrap();
    let codex = env.path("home/.codex");
    std::fs::create_dir_all(&codex).unwrap();
    let link = codex.join("mf-compact-prompt.md");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let before = tree(env.dir.path());
    for verb in ["install", "uninstall"] {
        let out = env.mf_env(&["hook", verb, "codex"], &[("HOME", &h)]);
        assert_eq!(out.code, 1, "{verb}: {out:?}");
        assert!(out.stderr.contains(link.to_str().unwrap()), "{out:?}");
        assert!(out.stderr.contains("symlink"), "{out:?}");
        assert_eq!(read(&outside), b"export PS1='$ '\n");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            tree(env.dir.path()),
            before,
            "{verb}: nothing written or removed"
        );
    }
}

/// `--record PATH` is an output the user named: a symlink there to a regular file (a repository
/// can ship `out/records.jsonl` as a link to `~/.bashrc`) is refused before anything is paid or
/// written; a link to `/dev/null` and a descriptor path are followed as asked.
#[test]
fn a_record_path_that_links_to_a_file_is_refused_before_the_run() {
    let env = TestEnv::new();
    let chat = env.write("chat.jsonl", &crate::util::conversation(12));
    let before = read(&chat);
    let outside = env.path("bashrc");
    std::fs::write(&outside, "export PS1='$ '\n").unwrap();
    let link = env.path("records.jsonl");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let args = |rec: &str| {
        vec![
            "compact".to_string(),
            chat.to_str().unwrap().to_string(),
            "--model".into(),
            "extractive".into(),
            "--trigger".into(),
            "0".into(),
            "--record".into(),
            rec.to_string(),
        ]
    };
    let run = |rec: &str| {
        let a = args(rec);
        env.mf(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let out = run(link.to_str().unwrap());
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr.contains("records.jsonl") && out.stderr.contains("symlink"),
        "{out:?}"
    );
    assert_eq!(read(&outside), b"export PS1='$ '\n");
    assert_eq!(read(&chat), before, "refused before the fold was written");
    let null = env.path("null-link");
    std::os::unix::fs::symlink("/dev/null", &null).unwrap();
    let out = run(null.to_str().unwrap());
    assert_eq!(out.code, 0, "{out:?}");
    let out = env.sh(&format!(
        "{} {} 3>{}",
        crate::util::mf_bin(),
        args("/dev/fd/3").join(" "),
        env.path("fd.jsonl").display()
    ));
    assert!(out.status.success(), "{out:?}");
    let recs = std::fs::read_to_string(env.path("fd.jsonl")).unwrap();
    assert!(recs.contains("\"action\""), "{recs}");
}
