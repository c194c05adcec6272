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
}

impl Agent {
    pub const ALL: [Agent; 3] = [Agent::Claude, Agent::Codex, Agent::Pi];

    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Pi => "pi",
        }
    }

    /// The transcript format its sessions are in.
    pub fn format(self) -> Format {
        match self {
            Agent::Claude => Format::Claude,
            Agent::Codex => Format::Codex,
            Agent::Pi => Format::Pi,
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
}

impl SessionRoots {
    pub fn of(&self, agent: Agent) -> Option<&Path> {
        match agent {
            Agent::Claude => self.claude_projects.as_deref(),
            Agent::Codex => self.codex_sessions.as_deref(),
            Agent::Pi => self.pi_sessions.as_deref(),
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

/// Every session file of `agents` under `roots`, newest first; with `cwd`, only those run in
/// that working directory (any of the spellings given, e.g. as typed and canonical).
pub fn find(roots: &SessionRoots, agents: &[Agent], cwd: &[String]) -> Vec<Found> {
    let mut found = Vec::new();
    for &agent in agents {
        let Some(root) = roots.of(agent) else {
            continue;
        };
        match agent {
            Agent::Claude => claude(root, cwd, &mut found),
            Agent::Codex => codex(root, cwd, &mut found),
            Agent::Pi => pi(root, cwd, &mut found),
        }
    }
    found.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
    found
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

fn dir_entries(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn push(out: &mut Vec<Found>, agent: Agent, path: PathBuf, project: Option<String>) {
    if let Some((size, modified)) = stat(&path) {
        out.push(Found {
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
fn claude(root: &Path, cwd: &[String], out: &mut Vec<Found>) {
    let dirs: Vec<PathBuf> = if cwd.is_empty() {
        dir_entries(root)
            .into_iter()
            .filter(|p| p.is_dir())
            .collect()
    } else {
        let mut dirs = Vec::new();
        for c in cwd {
            let (name, shortened) = claude_project_dir(c);
            if shortened {
                dirs.extend(dir_entries(root).into_iter().filter(|p| {
                    p.is_dir()
                        && p.file_name()
                            .and_then(|n| n.to_str())
                            .is_some_and(|n| n.starts_with(&name))
                }));
            } else {
                dirs.push(root.join(name));
            }
        }
        dirs.sort();
        dirs.dedup();
        dirs
    };
    for dir in dirs {
        for p in dir_entries(&dir) {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if !is_jsonl(&p) || name.starts_with("agent-") || !p.is_file() {
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
            push(out, Agent::Claude, p, project);
        }
    }
}

/// Codex: `sessions/YYYY/MM/DD/rollout-*.jsonl` (older installs: flat in `sessions/`).
fn codex(root: &Path, cwd: &[String], out: &mut Vec<Found>) {
    let mut stack = vec![(root.to_path_buf(), 0u8)];
    while let Some((dir, depth)) = stack.pop() {
        for p in dir_entries(&dir) {
            if p.is_dir() {
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
                push(out, Agent::Codex, p, project);
            }
        }
    }
}

/// pi: `<sessions>/--<cwd>--/<time>_<id>.jsonl`, or flat in a sessions directory the user chose.
fn pi(root: &Path, cwd: &[String], out: &mut Vec<Found>) {
    let mut files = Vec::new();
    for p in dir_entries(root) {
        if p.is_dir() {
            files.extend(
                dir_entries(&p)
                    .into_iter()
                    .filter(|f| is_jsonl(f) && f.is_file()),
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
            push(out, Agent::Pi, p, project);
        }
    }
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
            Agent::Claude => v.get("cwd"),
            Agent::Codex => (v.get("type").and_then(Value::as_str) == Some("session_meta"))
                .then(|| v.get("payload").and_then(|p| p.get("cwd")))
                .flatten(),
            Agent::Pi => (v.get("type").and_then(Value::as_str) == Some("session"))
                .then(|| v.get("cwd"))
                .flatten(),
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
