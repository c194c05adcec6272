//! Sessions: where Claude Code, Codex and pi keep their session files, how each names a
//! project's directory, and which files there are sessions (the directories come in as values;
//! `settings` finds them in the environment).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use super::Format;

/// An agent whose sessions mf can list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Agent {
    Claude,
    Codex,
    Pi,
    Copilot,
    Qwen,
    Gemini,
}

impl Agent {
    pub const ALL: [Agent; 6] = [
        Agent::Claude,
        Agent::Codex,
        Agent::Pi,
        Agent::Copilot,
        Agent::Qwen,
        Agent::Gemini,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Pi => "pi",
            Agent::Copilot => "copilot",
            Agent::Qwen => "qwen",
            Agent::Gemini => "gemini",
        }
    }

    /// The transcript format its sessions are in.
    pub fn format(self) -> Format {
        match self {
            Agent::Claude => Format::Claude,
            Agent::Codex => Format::Codex,
            Agent::Pi => Format::Pi,
            Agent::Copilot => Format::Copilot,
            Agent::Qwen => Format::Qwen,
            Agent::Gemini => Format::Gemini,
        }
    }
}

/// Where each agent keeps its sessions (`None`: not known here, e.g. no home directory).
#[derive(Debug, Clone, Default)]
pub struct SessionRoots {
    /// Claude Code's `projects/` (`$CLAUDE_CONFIG_DIR/projects`, default `~/.claude/projects`).
    pub claude_projects: Option<PathBuf>,
    /// Codex's `sessions/` (`$CODEX_HOME/sessions`, default `~/.codex/sessions`).
    pub codex_sessions: Option<PathBuf>,
    /// pi's sessions directory (`$PI_CODING_AGENT_SESSION_DIR`, pi's `sessionDir` setting, else
    /// `$PI_CODING_AGENT_DIR/sessions`, default `~/.pi/agent/sessions`).
    pub pi_sessions: Option<PathBuf>,
    /// GitHub Copilot CLI's `session-state/` (`$COPILOT_HOME/session-state`, default
    /// `~/.copilot/session-state`).
    pub copilot_sessions: Option<PathBuf>,
    /// Qwen Code's `projects/` (`$QWEN_RUNTIME_DIR/projects`, else `$QWEN_HOME/projects`, default
    /// `~/.qwen/projects`).
    pub qwen_projects: Option<PathBuf>,
    /// Gemini CLI's `tmp/` (`$GEMINI_CLI_HOME/.gemini/tmp`, default `~/.gemini/tmp`), its
    /// sessions at `<project>/chats/session-*.jsonl`.
    pub gemini_tmp: Option<PathBuf>,
}

impl SessionRoots {
    pub fn of(&self, agent: Agent) -> Option<&Path> {
        match agent {
            Agent::Claude => self.claude_projects.as_deref(),
            Agent::Codex => self.codex_sessions.as_deref(),
            Agent::Pi => self.pi_sessions.as_deref(),
            Agent::Copilot => self.copilot_sessions.as_deref(),
            Agent::Qwen => self.qwen_projects.as_deref(),
            Agent::Gemini => self.gemini_tmp.as_deref(),
        }
    }
}

/// One session file found.
#[derive(Debug, Clone)]
pub struct Found {
    pub agent: Agent,
    pub path: PathBuf,
    pub modified: SystemTime,
    pub size: u64,
    /// The working directory the session was run in, as the file records it (else, for Claude
    /// Code and pi, the project directory's name).
    pub project: Option<String>,
}

/// Claude Code's name for a project's directory under `projects/`: the working directory with
/// every character that is not an ASCII letter or digit replaced by `-` (as JavaScript's
/// `replace(/[^a-zA-Z0-9]/g, "-")` does it: one `-` per UTF-16 unit, so a character outside the
/// Basic Multilingual Plane becomes two). Claude Code 2.1 cuts a name longer than 200 to its
/// first 200 characters, a `-` and a hash of the path; the hash is not reproduced here, so for
/// such a path this returns the 201-character prefix every candidate directory starts with.
pub fn claude_project_dir(cwd: &str) -> (String, bool) {
    let mut out = String::with_capacity(cwd.len());
    for c in cwd.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            for _ in 0..c.len_utf16() {
                out.push('-');
            }
        }
    }
    if out.len() <= CLAUDE_NAME_MAX {
        (out, false)
    } else {
        out.truncate(CLAUDE_NAME_MAX);
        out.push('-');
        (out, true)
    }
}

/// Longest project directory name Claude Code writes before it shortens it with a hash.
const CLAUDE_NAME_MAX: usize = 200;

/// pi's name for a project's directory under its sessions directory: `--`, the working
/// directory without its leading `/` (or `\`) and with `/`, `\` and `:` replaced by `-`, `--`.
pub fn pi_project_dir(cwd: &str) -> String {
    let trimmed = cwd
        .strip_prefix('/')
        .or_else(|| cwd.strip_prefix('\\'))
        .unwrap_or(cwd);
    let body: String = trimmed
        .chars()
        .map(|c| {
            if matches!(c, '/' | '\\' | ':') {
                '-'
            } else {
                c
            }
        })
        .collect();
    format!("--{body}--")
}

/// What a search of the agents' directories found: the sessions, newest first, the directories
/// (and entries) it could not read, and the files it passed over for not being JSON.
#[derive(Debug, Default)]
pub struct Scan {
    pub found: Vec<Found>,
    /// A directory or entry mf could not read, and why (a root that does not exist is not one:
    /// that agent is not installed).
    pub unreadable: Vec<(PathBuf, String)>,
    /// Files named like sessions that do not open with a JSON object (empty, text, binary).
    pub not_json: Vec<PathBuf>,
}

/// Every session file of `agents` under `roots`, newest first; with `cwd`, only those run in
/// that working directory (any of the spellings given, e.g. as typed and canonical).
pub fn find(roots: &SessionRoots, agents: &[Agent], cwd: &[String]) -> Vec<Found> {
    scan(roots, agents, cwd).found
}

/// [`find`], with what could not be read and what was passed over.
pub fn scan(roots: &SessionRoots, agents: &[Agent], cwd: &[String]) -> Scan {
    let mut scan = Scan::default();
    for &agent in agents {
        let Some(root) = roots.of(agent) else {
            continue;
        };
        match agent {
            Agent::Claude => claude(root, cwd, &mut scan),
            Agent::Codex => codex(root, cwd, &mut scan),
            Agent::Pi => pi(root, cwd, &mut scan),
            Agent::Copilot => copilot(root, cwd, &mut scan),
            Agent::Qwen => qwen(root, cwd, &mut scan),
            Agent::Gemini => gemini(root, cwd, &mut scan),
        }
    }
    scan.found.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
    scan
}

/// A regular file's size and modification time (a link is followed; anything else is skipped).
fn stat(path: &Path) -> Option<(u64, SystemTime)> {
    let meta = std::fs::metadata(path).ok()?;
    meta.is_file().then(|| {
        (
            meta.len(),
            meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        )
    })
}

fn is_jsonl(p: &Path) -> bool {
    p.extension().is_some_and(|x| x == "jsonl")
}

/// What a directory entry is, a link followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dir,
    File,
    Other,
}

/// A directory's entries, sorted, each with what it is. A directory that cannot be read, and an
/// entry whose kind cannot be told (a dangling link, a link loop), go to `scan.unreadable`;
/// with `missing_ok`, a directory that does not exist is simply empty (an agent not installed,
/// a project with no sessions).
fn dir_entries(dir: &Path, missing_ok: bool, scan: &mut Scan) -> Vec<(PathBuf, Kind)> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if missing_ok && e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            scan.unreadable.push((dir.to_path_buf(), e.to_string()));
            return Vec::new();
        }
    };
    let mut v = Vec::new();
    for e in rd {
        let e = match e {
            Ok(e) => e,
            Err(err) => {
                scan.unreadable.push((dir.to_path_buf(), err.to_string()));
                continue;
            }
        };
        let p = e.path();
        match std::fs::metadata(&p) {
            Ok(m) if m.is_dir() => v.push((p, Kind::Dir)),
            Ok(m) if m.is_file() => v.push((p, Kind::File)),
            Ok(_) => v.push((p, Kind::Other)),
            Err(err) => scan.unreadable.push((p, err.to_string())),
        }
    }
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// How much of a file's head is read to tell whether it holds JSON lines.
const JSON_HEAD_BYTES: u64 = 64 << 10;

/// Whether a file opens with a JSON object: its first line parses as one (or, longer than the
/// head read, starts as one). An empty file, text and binary files are not sessions.
fn opens_with_json(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::new();
    let Ok(f) = std::fs::File::open(path) else {
        // Listed with the reason it cannot be read (`describe` opens it again).
        return true;
    };
    if f.take(JSON_HEAD_BYTES).read_to_end(&mut head).is_err() {
        return true;
    }
    let start = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(head.len());
    let head = &head[start..];
    if head.first() != Some(&b'{') {
        return false;
    }
    match memchr::memchr(b'\n', head) {
        Some(end) => serde_json::from_slice::<serde_json::Map<String, Value>>(&head[..end]).is_ok(),
        None => true,
    }
}

fn push(scan: &mut Scan, agent: Agent, path: PathBuf, project: Option<String>) {
    if let Some((size, modified)) = stat(&path) {
        if !opens_with_json(&path) {
            scan.not_json.push(path);
            return;
        }
        scan.found.push(Found {
            agent,
            path,
            modified,
            size,
            project,
        });
    }
}

/// Whether a session recorded as run in `project` matches the `--cwd` filter.
fn matches_cwd(project: Option<&str>, cwd: &[String]) -> bool {
    cwd.is_empty()
        || project.is_some_and(|p| {
            let p = p.trim_end_matches('/');
            cwd.iter().any(|c| c.trim_end_matches('/') == p)
        })
}

/// Claude Code: `projects/<encoded cwd>/<session>.jsonl`. Sub-agent transcripts
/// (`agent-*.jsonl`, and everything in a session's own directory) are not sessions.
fn claude(root: &Path, cwd: &[String], scan: &mut Scan) {
    let dirs: Vec<PathBuf> = if cwd.is_empty() {
        dir_entries(root, true, scan)
            .into_iter()
            .filter(|(_, k)| *k == Kind::Dir)
            .map(|(p, _)| p)
            .collect()
    } else {
        let mut dirs = Vec::new();
        for c in cwd {
            let (name, shortened) = claude_project_dir(c);
            if shortened {
                dirs.extend(
                    dir_entries(root, true, scan)
                        .into_iter()
                        .filter(|(p, k)| {
                            *k == Kind::Dir
                                && p.file_name()
                                    .and_then(|n| n.to_str())
                                    .is_some_and(|n| n.starts_with(&name))
                        })
                        .map(|(p, _)| p),
                );
            } else {
                dirs.push(root.join(name));
            }
        }
        dirs.sort();
        dirs.dedup();
        dirs
    };
    for dir in dirs {
        // A project directory named for `--cwd` may not exist: no sessions there.
        for (p, kind) in dir_entries(&dir, !cwd.is_empty(), scan) {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if !is_jsonl(&p) || name.starts_with("agent-") || kind != Kind::File {
                continue;
            }
            let project = head_cwd(&p, Agent::Claude);
            // Two directories can share a name (`/a_b` and `/a-b` both become `-a-b`): the cwd
            // the file records decides; a file that records none is taken by its directory.
            if !cwd.is_empty() && project.is_some() && !matches_cwd(project.as_deref(), cwd) {
                continue;
            }
            let project = project.or_else(|| {
                dir.file_name()
                    .and_then(|n| n.to_str())
                    .map(|n| n.to_string())
            });
            push(scan, Agent::Claude, p, project);
        }
    }
}

/// Codex: `sessions/YYYY/MM/DD/rollout-*.jsonl` (older installs: flat in `sessions/`).
fn codex(root: &Path, cwd: &[String], scan: &mut Scan) {
    let mut stack = vec![(root.to_path_buf(), 0u8)];
    while let Some((dir, depth)) = stack.pop() {
        for (p, kind) in dir_entries(&dir, depth == 0, scan) {
            if kind == Kind::Dir {
                if depth < 3 {
                    stack.push((p, depth + 1));
                }
                continue;
            }
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if !is_jsonl(&p) || !name.starts_with("rollout-") {
                continue;
            }
            let project = head_cwd(&p, Agent::Codex);
            if matches_cwd(project.as_deref(), cwd) {
                push(scan, Agent::Codex, p, project);
            }
        }
    }
}

/// GitHub Copilot CLI: `<session-state>/<session id>/events.jsonl`.
fn copilot(root: &Path, cwd: &[String], scan: &mut Scan) {
    for (p, kind) in dir_entries(root, true, scan) {
        if kind != Kind::Dir {
            continue;
        }
        let f = p.join("events.jsonl");
        if !f.is_file() {
            continue;
        }
        let project = head_cwd(&f, Agent::Copilot);
        if matches_cwd(project.as_deref(), cwd) {
            push(scan, Agent::Copilot, f, project);
        }
    }
}

/// pi: `<sessions>/--<cwd>--/<time>_<id>.jsonl`, or flat in a sessions directory the user chose.
fn pi(root: &Path, cwd: &[String], scan: &mut Scan) {
    let mut files = Vec::new();
    for (p, kind) in dir_entries(root, true, scan) {
        if kind == Kind::Dir {
            files.extend(
                dir_entries(&p, false, scan)
                    .into_iter()
                    .filter(|(f, k)| is_jsonl(f) && *k == Kind::File)
                    .map(|(f, _)| f),
            );
        } else if is_jsonl(&p) {
            files.push(p);
        }
    }
    for p in files {
        let project = head_cwd(&p, Agent::Pi);
        let project = match project {
            Some(c) => Some(c),
            // No header cwd: the directory's name stands for the project.
            None => p
                .parent()
                .and_then(|d| d.file_name())
                .and_then(|n| n.to_str())
                .filter(|n| n.starts_with("--") && n.ends_with("--") && n.len() > 4)
                .map(|n| n.to_string()),
        };
        let keep = cwd.is_empty()
            || matches_cwd(project.as_deref(), cwd)
            || project
                .as_deref()
                .is_some_and(|n| cwd.iter().any(|c| pi_project_dir(c) == n));
        if keep {
            push(scan, Agent::Pi, p, project);
        }
    }
}

/// Qwen Code: `projects/<cwd, each non-alphanumeric character as ->/chats/<session>.jsonl` (its
/// sub-agents' transcripts are in directories below `chats/`, not listed).
fn qwen(root: &Path, cwd: &[String], scan: &mut Scan) {
    for (dir, kind) in dir_entries(root, true, scan) {
        if kind != Kind::Dir {
            continue;
        }
        let chats = dir.join("chats");
        if !chats.is_dir() {
            continue;
        }
        for (p, kind) in dir_entries(&chats, false, scan) {
            if !is_jsonl(&p) || kind != Kind::File {
                continue;
            }
            let project = head_cwd(&p, Agent::Qwen);
            if matches_cwd(project.as_deref(), cwd) {
                push(scan, Agent::Qwen, p, project);
            }
        }
    }
}

/// Gemini CLI: `<tmp>/<project>/chats/session-*.jsonl` (a sub-agent's chat lies one directory
/// deeper, under its parent session's id, and is not a session of its own).
fn gemini(root: &Path, cwd: &[String], scan: &mut Scan) {
    for (project_dir, kind) in dir_entries(root, true, scan) {
        if kind != Kind::Dir {
            continue;
        }
        let chats = project_dir.join("chats");
        if !chats.is_dir() {
            continue;
        }
        for (p, k) in dir_entries(&chats, false, scan) {
            let named = p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("session-"));
            // A resume starts a file of its own that never gets a message (a header and the
            // session context, again at each resume): not a session.
            if k != Kind::File || !is_jsonl(&p) || !named || !gemini_has_messages(&p) {
                continue;
            }
            let project = head_cwd(&p, Agent::Gemini);
            if cwd.is_empty() || matches_cwd(project.as_deref(), cwd) {
                push(scan, Agent::Gemini, p, project);
            }
        }
    }
}

/// Whether a Gemini CLI file holds a message record (a line with a string `id`) in its head.
fn gemini_has_messages(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::new();
    let Ok(f) = std::fs::File::open(path) else {
        return true; // listed, and what cannot be read is said where it is read
    };
    if f.take(HEAD_BYTES).read_to_end(&mut head).is_err() {
        return true;
    }
    head.split(|&b| b == b'\n').any(|line| {
        serde_json::from_slice::<Value>(line)
            .is_ok_and(|v| v.get("id").is_some_and(Value::is_string))
    })
}

/// The first workspace directory Gemini CLI names in its session context (`- **Workspace
/// Directories:**` then `  - <dir>` lines), or the `directories` it records.
fn gemini_workspace(v: &Value) -> Option<String> {
    if let Some(d) = v
        .get("directories")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .and_then(Value::as_str)
    {
        return Some(d.to_string());
    }
    let msgs = v.get("$set")?.get("messages")?.as_array()?;
    for m in msgs {
        for p in m
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(t) = p.get("text").and_then(Value::as_str) else {
                continue;
            };
            let Some(at) = t.find("Workspace Directories:") else {
                continue;
            };
            let dir = t[at..].lines().nth(1)?.trim().strip_prefix("- ")?.trim();
            if !dir.is_empty() {
                return Some(dir.to_string());
            }
        }
    }
    None
}

/// How much of a file's head is read to find the working directory it records.
const HEAD_BYTES: u64 = 256 << 10;

/// The working directory a session records in its first lines: Claude Code's `cwd` on its rows,
/// Codex's `session_meta.payload.cwd`, pi's header `cwd`.
pub fn head_cwd(path: &Path, agent: Agent) -> Option<String> {
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(HEAD_BYTES)
        .read_to_end(&mut head)
        .ok()?;
    for line in head.split(|&b| b == b'\n').take(200) {
        let Ok(v) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        let found = match agent {
            Agent::Claude | Agent::Qwen => v.get("cwd"),
            Agent::Codex => (v.get("type").and_then(Value::as_str) == Some("session_meta"))
                .then(|| v.get("payload").and_then(|p| p.get("cwd")))
                .flatten(),
            Agent::Pi => (v.get("type").and_then(Value::as_str) == Some("session"))
                .then(|| v.get("cwd"))
                .flatten(),
            Agent::Copilot => (v.get("type").and_then(Value::as_str) == Some("session.start"))
                .then(|| v.pointer("/data/context/cwd"))
                .flatten(),
            Agent::Gemini => {
                if let Some(c) = gemini_workspace(&v) {
                    return Some(c);
                }
                None
            }
        };
        if let Some(c) = found.and_then(Value::as_str).filter(|c| !c.is_empty()) {
            return Some(c.to_string());
        }
        if agent == Agent::Pi {
            // pi's header is line 1: a file without one is not a pi session (pi refuses it).
            return None;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_code_names_a_project_by_replacing_every_non_alphanumeric_unit() {
        assert_eq!(
            claude_project_dir("/home/me/my_app v2.1").0,
            "-home-me-my-app-v2-1"
        );
        // One `-` per UTF-16 unit: é is one, 🎉 two.
        assert_eq!(claude_project_dir("/é/🎉").0, "-----");
        let long = format!("/{}", "a".repeat(300));
        let (name, shortened) = claude_project_dir(&long);
        assert!(shortened);
        assert_eq!(name.len(), 201);
        assert!(name.ends_with("a-"));
    }

    #[test]
    fn pi_names_a_project_by_its_path_with_separators_as_dashes() {
        assert_eq!(
            pi_project_dir("/home/me/my_app v2.1"),
            "--home-me-my_app v2.1--"
        );
        assert_eq!(pi_project_dir("C:\\work\\x"), "--C--work-x--");
    }
}
