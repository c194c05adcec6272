//! Where the coding agents keep their sessions, as the environment says: the directories of
//! their running sessions (for the live guard), the roots `mf sessions` searches, the latest
//! session of an agent for a directory, and where `mf hook` installs and keeps its state.

use std::path::{Path, PathBuf};

use super::{ev, var};
use crate::error::MfError;

/// Where the agents say which sessions they are running.
pub fn agent_dirs() -> crate::transcript::AgentDirs {
    let home = var(ev::HOME).map(PathBuf::from);
    crate::transcript::AgentDirs {
        claude_sessions: var(ev::CLAUDE_CONFIG_DIR)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".claude")))
            .map(|d| d.join("sessions")),
        codex_home: var(ev::CODEX_HOME)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".codex"))),
    }
}

/// Where Claude Code, Codex and pi keep their sessions (`mf sessions`, `compact --latest`):
/// `$CLAUDE_CONFIG_DIR/projects` (default `~/.claude/projects`), `$CODEX_HOME/sessions` (default
/// `~/.codex/sessions`), and for pi `$PI_CODING_AGENT_SESSION_DIR`, else the `sessionDir` of pi's
/// user settings (`<agent dir>/settings.json`), else `<agent dir>/sessions`, the agent directory
/// being `$PI_CODING_AGENT_DIR` (default `~/.pi/agent`).
pub fn session_roots() -> crate::transcript::sessions::SessionRoots {
    let home = var(ev::HOME).map(PathBuf::from);
    let tilde = |p: String| -> PathBuf {
        match (p.strip_prefix("~/"), &home) {
            (Some(rest), Some(h)) => h.join(rest),
            _ if p == "~" => home.clone().unwrap_or_else(|| PathBuf::from(&p)),
            _ => PathBuf::from(p),
        }
    };
    let pi_agent = var(ev::PI_CODING_AGENT_DIR)
        .map(&tilde)
        .or_else(|| home.as_ref().map(|h| h.join(".pi").join("agent")));
    let pi_setting = pi_agent.as_ref().and_then(|d| {
        let text = std::fs::read_to_string(d.join("settings.json")).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        let dir = v.get("sessionDir")?.as_str()?.trim().to_string();
        // A relative `sessionDir` resolves from the directory pi runs in: not one place.
        (!dir.is_empty())
            .then(|| tilde(dir))
            .filter(|p| p.is_absolute())
    });
    crate::transcript::sessions::SessionRoots {
        claude_projects: var(ev::CLAUDE_CONFIG_DIR)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".claude")))
            .map(|d| d.join("projects")),
        codex_sessions: var(ev::CODEX_HOME)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".codex")))
            .map(|d| d.join("sessions")),
        pi_sessions: var(ev::PI_CODING_AGENT_SESSION_DIR)
            .map(&tilde)
            .or(pi_setting)
            .or_else(|| pi_agent.map(|d| d.join("sessions"))),
    }
}

/// The spellings of a `--cwd` directory a session may record: as given (made absolute against
/// the current directory) and with its links resolved.
pub fn cwd_spellings(cwd: &Path) -> Vec<String> {
    let abs = std::path::absolute(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let mut out = vec![abs.to_string_lossy().into_owned()];
    if let Ok(real) = std::fs::canonicalize(&abs) {
        let real = real.to_string_lossy().into_owned();
        if !out.contains(&real) {
            out.push(real);
        }
    }
    out
}

/// Where `mf hook install` writes, and the mf the hooks run.
#[derive(Debug, Clone)]
pub struct HookPaths {
    /// Claude Code's settings: `~/.claude/settings.json` (`$CLAUDE_CONFIG_DIR/settings.json`), or
    /// with `--project` `.claude/settings.json` in the current directory.
    pub claude_settings: PathBuf,
    /// Codex's config: `$CODEX_HOME/config.toml` (default `~/.codex/config.toml`).
    pub codex_config: PathBuf,
    /// The compact prompt file mf writes beside it.
    pub codex_prompt: PathBuf,
    /// This mf, as an absolute path.
    pub mf: PathBuf,
}

pub fn hook_paths(scope: crate::cli::HookScope) -> Result<HookPaths, MfError> {
    let home = var(ev::HOME).map(PathBuf::from);
    let no_home = || {
        MfError::usage(
            "HOME is not set: mf cannot tell where the agent keeps its settings",
            Some("set HOME (or CLAUDE_CONFIG_DIR / CODEX_HOME)".into()),
        )
    };
    let claude_dir = var(ev::CLAUDE_CONFIG_DIR)
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".claude")));
    let codex_home = var(ev::CODEX_HOME)
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".codex")));
    let claude_settings = match scope {
        crate::cli::HookScope::User => claude_dir.ok_or_else(no_home)?.join("settings.json"),
        crate::cli::HookScope::Project => std::path::absolute(".claude/settings.json")
            .map_err(|e| MfError::usage(format!("cannot tell the current directory: {e}"), None))?,
    };
    let codex_home = codex_home.ok_or_else(no_home)?;
    let mf = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| MfError::usage(format!("cannot tell where this mf is: {e}"), None))?;
    Ok(HookPaths {
        claude_settings,
        codex_config: codex_home.join("config.toml"),
        codex_prompt: codex_home.join("mf-compact-prompt.md"),
        mf,
    })
}

/// Where `mf hook` keeps what one hook hands the next (Claude Code's new summary, from PostCompact
/// to SessionStart): `mf/hooks` in the cache directory (`$MF_CACHE_DIR`, `$XDG_CACHE_HOME`, else
/// `~/.cache`).
pub fn hook_state_dir() -> Option<PathBuf> {
    let dir = var(ev::MF_CACHE_DIR).map(PathBuf::from).or_else(|| {
        var(ev::XDG_CACHE_HOME)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| var(ev::HOME).map(|h| PathBuf::from(h).join(".cache")))
    })?;
    Some(dir.join("mf").join("hooks"))
}

/// The agent a flag names.
pub fn agent_of(a: crate::cli::AgentArg) -> crate::transcript::sessions::Agent {
    use crate::transcript::sessions::Agent;
    match a {
        crate::cli::AgentArg::Claude => Agent::Claude,
        crate::cli::AgentArg::Codex => Agent::Codex,
        crate::cli::AgentArg::Pi => Agent::Pi,
    }
}

/// The session files, newest first, of `agent` (all three when `None`), run in `cwd` if given.
pub fn find_sessions(
    agent: Option<crate::cli::AgentArg>,
    cwd: Option<&Path>,
) -> Vec<crate::transcript::sessions::Found> {
    use crate::transcript::sessions::{self, Agent};
    let agents: Vec<Agent> = match agent {
        Some(a) => vec![agent_of(a)],
        None => Agent::ALL.to_vec(),
    };
    let cwd = cwd.map(cwd_spellings).unwrap_or_default();
    sessions::find(&session_roots(), &agents, &cwd)
}

/// `compact --latest AGENT [--cwd DIR]`: the newest such session's path.
pub fn latest_session(agent: crate::cli::AgentArg, cwd: Option<&Path>) -> Result<PathBuf, MfError> {
    if let Some(dir) = cwd
        && !dir.is_dir()
    {
        return Err(MfError::usage(
            format!("--cwd `{}` is not a directory", dir.display()),
            None,
        ));
    }
    find_sessions(Some(agent), cwd)
        .into_iter()
        .next()
        .map(|f| f.path)
        .ok_or_else(|| {
            let roots = session_roots();
            let a = agent_of(agent);
            MfError::refused(
                format!(
                    "no {} session found{} (looked in {})",
                    a.name(),
                    cwd.map(|c| format!(" run in {}", c.display()))
                        .unwrap_or_default(),
                    roots
                        .of(a)
                        .map_or_else(|| "no home directory".into(), |p| p.display().to_string())
                ),
                Some("`mf sessions` lists the sessions mf finds and where it looks".into()),
            )
        })
}

/// The agent whose session a file of this format is.
pub fn agent_of_format(f: crate::transcript::Format) -> Option<crate::transcript::sessions::Agent> {
    use crate::transcript::Format;
    use crate::transcript::sessions::Agent;
    match f {
        Format::Claude => Some(Agent::Claude),
        Format::Codex => Some(Agent::Codex),
        Format::Pi => Some(Agent::Pi),
        Format::Chat => None,
    }
}

/// Whether mf's recall tool is registered for the agent of the session at `session` (its
/// project being the directory the session records): Claude Code's `mf` MCP server (user scope
/// in `~/.claude.json`, local scope under its `projects`, or the project's `.mcp.json`), Codex's
/// `[mcp_servers.mf]`, pi's settings listing mf's extension. Reads a few small files; any
/// problem is a "no".
pub fn recall_tool_installed(agent: crate::transcript::sessions::Agent, session: &Path) -> bool {
    use crate::transcript::sessions::{Agent, head_cwd};
    let home = var(ev::HOME).map(PathBuf::from);
    let json = |p: PathBuf| -> Option<serde_json::Value> {
        let meta = std::fs::metadata(&p).ok()?;
        // A settings file is small; a huge one is not read here.
        (meta.len() < 64 << 20)
            .then(|| std::fs::read(&p).ok())
            .flatten()
            .and_then(|b| serde_json::from_slice(&b).ok())
    };
    let has_mf = |v: Option<&serde_json::Value>| {
        v.and_then(|s| s.get("mf"))
            .is_some_and(serde_json::Value::is_object)
    };
    match agent {
        Agent::Claude => {
            let project = head_cwd(session, agent);
            let config = var(ev::CLAUDE_CONFIG_DIR)
                .map(|d| PathBuf::from(d).join(".claude.json"))
                .or_else(|| home.as_ref().map(|h| h.join(".claude.json")));
            let user = config.and_then(json);
            has_mf(user.as_ref().and_then(|u| u.get("mcpServers")))
                || project.as_ref().is_some_and(|p| {
                    has_mf(
                        user.as_ref()
                            .and_then(|u| u.get("projects"))
                            .and_then(|ps| ps.get(p.as_str()))
                            .and_then(|pr| pr.get("mcpServers")),
                    ) || has_mf(
                        json(Path::new(p).join(".mcp.json"))
                            .as_ref()
                            .and_then(|m| m.get("mcpServers")),
                    )
                })
        }
        Agent::Codex => var(ev::CODEX_HOME)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".codex")))
            .and_then(|d| std::fs::read_to_string(d.join("config.toml")).ok())
            .and_then(|text| toml::from_str::<toml::Table>(&text).ok())
            .is_some_and(|t| {
                t.get("mcp_servers")
                    .and_then(|s| s.get("mf"))
                    .is_some_and(toml::Value::is_table)
            }),
        Agent::Pi => var(ev::PI_CODING_AGENT_DIR)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".pi").join("agent")))
            .and_then(|d| json(d.join("settings.json")))
            .and_then(|v| v.get("extensions").cloned())
            .and_then(|e| e.as_array().cloned())
            .is_some_and(|list| {
                list.iter().filter_map(serde_json::Value::as_str).any(|p| {
                    let p = p.trim_end_matches('/');
                    p.ends_with("integrations/pi") || p.ends_with("mf-pi") || p.contains("/mf/")
                })
            }),
    }
}
