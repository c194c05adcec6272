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
        qwen_runtime: var(ev::QWEN_RUNTIME_DIR)
            .or_else(|| var(ev::QWEN_HOME))
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".qwen"))),
        sessions: {
            let roots = session_roots();
            crate::transcript::sessions::Agent::ALL
                .iter()
                .filter_map(|&a| roots.of(a).map(Path::to_path_buf))
                .collect()
        },
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
        copilot_sessions: var(ev::COPILOT_HOME)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".copilot")))
            .map(|d| d.join("session-state")),
        qwen_projects: var(ev::QWEN_RUNTIME_DIR)
            .or_else(|| var(ev::QWEN_HOME))
            .map(&tilde)
            .or_else(|| home.as_ref().map(|h| h.join(".qwen")))
            .map(|d| d.join("projects")),
        // Gemini CLI: `$GEMINI_CLI_HOME/.gemini/tmp` (default `~/.gemini/tmp`).
        gemini_tmp: var(ev::GEMINI_CLI_HOME)
            .map(&tilde)
            .or_else(|| home.clone())
            .map(|h| h.join(".gemini").join("tmp")),
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
    /// Where Claude Code reads the MCP servers mf registers: the user's global config
    /// ([`claude_global_config`]), or with `--project` `.mcp.json` in the current directory.
    pub claude_mcp: PathBuf,
    /// Qwen Code's settings: `$QWEN_HOME/settings.json` (default `~/.qwen/settings.json`), or
    /// with `--project` `.qwen/settings.json` in the current directory.
    pub qwen_settings: PathBuf,
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
    let here = |name: &str| {
        std::path::absolute(name)
            .map_err(|e| MfError::usage(format!("cannot tell the current directory: {e}"), None))
    };
    let (claude_settings, claude_mcp) = match scope {
        crate::cli::HookScope::User => (
            claude_dir.ok_or_else(no_home)?.join("settings.json"),
            claude_global_config().ok_or_else(no_home)?,
        ),
        crate::cli::HookScope::Project => (here(".claude/settings.json")?, here(".mcp.json")?),
    };
    let qwen_settings = match scope {
        crate::cli::HookScope::User => var(ev::QWEN_HOME)
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".qwen")))
            .ok_or_else(no_home)?
            .join("settings.json"),
        crate::cli::HookScope::Project => here(".qwen/settings.json")?,
    };
    let codex_home = codex_home.ok_or_else(no_home)?;
    let mf = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| MfError::usage(format!("cannot tell where this mf is: {e}"), None))?;
    Ok(HookPaths {
        claude_settings,
        codex_config: codex_home.join("config.toml"),
        codex_prompt: codex_home.join("mf-compact-prompt.md"),
        claude_mcp,
        qwen_settings,
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
        crate::cli::AgentArg::Copilot => Agent::Copilot,
        crate::cli::AgentArg::Qwen => Agent::Qwen,
        crate::cli::AgentArg::Gemini => Agent::Gemini,
    }
}

/// The session files, newest first, of `agent` (all three when `None`), run in `cwd` if given.
pub fn find_sessions(
    agent: Option<crate::cli::AgentArg>,
    cwd: Option<&Path>,
) -> Vec<crate::transcript::sessions::Found> {
    scan_sessions(agent, cwd).found
}

/// [`find_sessions`], with the directories that could not be read and the files passed over.
pub fn scan_sessions(
    agent: Option<crate::cli::AgentArg>,
    cwd: Option<&Path>,
) -> crate::transcript::sessions::Scan {
    use crate::transcript::sessions::{self, Agent};
    let agents: Vec<Agent> = match agent {
        Some(a) => vec![agent_of(a)],
        None => Agent::ALL.to_vec(),
    };
    let cwd = cwd.map(cwd_spellings).unwrap_or_default();
    sessions::scan(&session_roots(), &agents, &cwd)
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

/// The id of the session of the agent that started this process, when the agent says it
/// (Claude Code's `CLAUDE_CODE_SESSION_ID`, set for its MCP servers).
pub fn calling_session_id() -> Option<String> {
    var(ev::CLAUDE_CODE_SESSION_ID).filter(|id| {
        id.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
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
        Format::Copilot => Some(Agent::Copilot),
        Format::Qwen => Some(Agent::Qwen),
        Format::Gemini => Some(Agent::Gemini),
        Format::Chat => None,
    }
}

/// Claude Code's global config, where its user-scope MCP servers are (top-level `mcpServers`)
/// and its local-scope ones (`projects[<dir>].mcpServers`): `$CLAUDE_CONFIG_DIR/.claude.json`,
/// else `~/.claude.json` — unless the legacy `<config dir>/.config.json` is there, not empty,
/// which Claude Code 2.1.332 reads instead (its `getGlobalClaudeFile`).
pub fn claude_global_config() -> Option<PathBuf> {
    claude_global_config_in(&AgentHomes::from_env())
}

/// The directories the agents' config is found from, as the environment says them.
#[derive(Debug, Clone, Default)]
pub struct AgentHomes {
    pub home: Option<PathBuf>,
    /// `$CLAUDE_CONFIG_DIR`
    pub claude_config_dir: Option<PathBuf>,
    /// `$CODEX_HOME`
    pub codex_home: Option<PathBuf>,
    /// `$PI_CODING_AGENT_DIR`
    pub pi_agent_dir: Option<PathBuf>,
}

impl AgentHomes {
    pub fn from_env() -> Self {
        let home = var(ev::HOME).map(PathBuf::from);
        let pi_agent_dir =
            var(ev::PI_CODING_AGENT_DIR).map(|p| match (p.strip_prefix("~/"), &home) {
                (Some(rest), Some(h)) => h.join(rest),
                _ => PathBuf::from(p),
            });
        AgentHomes {
            claude_config_dir: var(ev::CLAUDE_CONFIG_DIR).map(PathBuf::from),
            codex_home: var(ev::CODEX_HOME).map(PathBuf::from),
            pi_agent_dir,
            home,
        }
    }
}

fn claude_global_config_in(h: &AgentHomes) -> Option<PathBuf> {
    let legacy = h
        .claude_config_dir
        .clone()
        .or_else(|| h.home.as_ref().map(|h| h.join(".claude")))
        .map(|d| d.join(".config.json"));
    if let Some(l) = legacy
        && std::fs::metadata(&l).is_ok_and(|m| m.is_file() && m.len() > 0)
    {
        return Some(l);
    }
    h.claude_config_dir
        .clone()
        .or_else(|| h.home.clone())
        .map(|d| d.join(".claude.json"))
}

/// Most bytes read of one agent config file by [`recall_tool_installed`].
const MAX_CONFIG_BYTES: u64 = 64 << 20;

fn read_small(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut s = String::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_CONFIG_BYTES)
        .read_to_string(&mut s)
        .ok()?;
    Some(s)
}

/// Whether `text` (a JSON object) holds `path` (keys, outermost first) as an object member.
fn json_has(text: &str, path: &[&str]) -> bool {
    let Ok(mut obj) = crate::json_span::top_object(text) else {
        return false;
    };
    for (i, key) in path.iter().enumerate() {
        let Some((_, m)) = obj.get(key) else {
            return false;
        };
        if i + 1 == path.len() {
            return true;
        }
        match crate::json_span::object_at(text, m.value.start) {
            Ok(o) => obj = o,
            Err(_) => return false,
        }
    }
    false
}

/// Whether mf's recall tools are registered for `agent` (in `project`, when given): an MCP
/// server named `mf` for Claude Code (user scope: the global config's `mcpServers`; local scope:
/// its `projects[<project or its git root>].mcpServers`; project scope: `.mcp.json` in the project
/// or a directory above it) and for Codex (`[mcp_servers.mf]` in `$CODEX_HOME/config.toml` or the
/// project's `.codex/config.toml`); mf's extension for pi (an `extensions` or `packages` entry of
/// pi's `settings.json`, the agent's or the project's `.pi/settings.json`, whose path ends with
/// `integrations/pi` or names `mf`; or an `extensions/mf` directory pi discovers). Reads a few
/// small files; false on any error.
pub fn recall_tool_installed(
    agent: crate::transcript::sessions::Agent,
    project: Option<&Path>,
) -> bool {
    recall_tool_installed_in(&AgentHomes::from_env(), agent, project)
}

/// [`recall_tool_installed`] with the agents' directories given.
pub fn recall_tool_installed_in(
    h: &AgentHomes,
    agent: crate::transcript::sessions::Agent,
    project: Option<&Path>,
) -> bool {
    use crate::transcript::sessions::Agent;
    let dirs: Vec<PathBuf> = project
        .map(|p| cwd_spellings(p).into_iter().map(PathBuf::from).collect())
        .unwrap_or_default();
    match agent {
        Agent::Claude => {
            if let Some(text) = claude_global_config_in(h).and_then(|p| read_small(&p)) {
                if json_has(&text, &["mcpServers", "mf"]) {
                    return true;
                }
                // Local scope: keyed by the project's directory (its git root when it has one).
                let mut keys: Vec<String> = Vec::new();
                for d in &dirs {
                    keys.push(d.to_string_lossy().into_owned());
                    if let Some(root) = d.ancestors().find(|a| a.join(".git").exists()) {
                        keys.push(root.to_string_lossy().into_owned());
                    }
                }
                if keys
                    .iter()
                    .any(|k| json_has(&text, &["projects", k, "mcpServers", "mf"]))
                {
                    return true;
                }
            }
            dirs.iter().any(|d| {
                d.ancestors().any(|a| {
                    read_small(&a.join(".mcp.json"))
                        .is_some_and(|t| json_has(&t, &["mcpServers", "mf"]))
                })
            })
        }
        Agent::Codex => {
            let has = |p: PathBuf| {
                read_small(&p)
                    .and_then(|t| toml::from_str::<toml::Table>(&t).ok())
                    .is_some_and(|t| {
                        t.get("mcp_servers")
                            .and_then(|s| s.as_table())
                            .is_some_and(|s| s.contains_key("mf"))
                    })
            };
            let codex_home = h
                .codex_home
                .clone()
                .or_else(|| h.home.as_ref().map(|h| h.join(".codex")));
            codex_home.is_some_and(|d| has(d.join("config.toml")))
                || dirs
                    .iter()
                    .any(|d| has(d.join(".codex").join("config.toml")))
        }
        // mf's recall tool is not offered to Qwen Code yet.
        Agent::Qwen => false,
        Agent::Pi => {
            let agent_dir = h
                .pi_agent_dir
                .clone()
                .or_else(|| h.home.as_ref().map(|h| h.join(".pi").join("agent")));
            let mut places: Vec<PathBuf> = agent_dir.into_iter().collect();
            places.extend(dirs.iter().map(|d| d.join(".pi")));
            places.iter().any(|d| {
                d.join("extensions").join("mf").is_dir()
                    || read_small(&d.join("settings.json")).is_some_and(|t| pi_lists_mf(&t))
            })
        }
        // Copilot CLI's MCP servers: `~/.copilot/mcp-config.json`.
        Agent::Copilot => h
            .home
            .as_ref()
            .and_then(|h| read_small(&h.join(".copilot").join("mcp-config.json")))
            .is_some_and(|t| json_has(&t, &["mcpServers", "mf"])),
        // mf installs no recall tool in Gemini CLI (yet).
        Agent::Gemini => false,
    }
}

/// Whether pi's settings list mf's extension (`extensions` or `packages`).
fn pi_lists_mf(text: &str) -> bool {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
        return false;
    };
    let is_mf = |s: &str| {
        let s = s.trim().trim_end_matches('/');
        let s = s.strip_suffix("/index.ts").unwrap_or(s);
        s.ends_with("integrations/pi")
            || s.split(|c: char| !c.is_ascii_alphanumeric())
                .any(|w| w == "mf")
    };
    ["extensions", "packages"].iter().any(|k| {
        v.get(k).and_then(|l| l.as_array()).is_some_and(|l| {
            l.iter().any(|e| {
                e.as_str()
                    .or_else(|| e.get("source").and_then(|s| s.as_str()))
                    .or_else(|| e.get("path").and_then(|s| s.as_str()))
                    .is_some_and(is_mf)
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::sessions::Agent;

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn recall_tool_installed_reads_where_each_agent_registers_servers() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let project = tmp.path().join("work").join("repo");
        let sub = project.join("src");
        std::fs::create_dir_all(&sub).unwrap();
        let h = AgentHomes {
            home: Some(home.clone()),
            ..AgentHomes::default()
        };
        let installed = |a, p: Option<&Path>| recall_tool_installed_in(&h, a, p);
        for a in Agent::ALL {
            assert!(!installed(a, Some(&project)), "{a:?}");
            assert!(!installed(a, None), "{a:?}");
        }
        let claude_json = home.join(".claude.json");
        let mf = r#"{"type": "stdio", "command": "mf", "args": ["mcp", "--agent", "claude"]}"#;
        // Claude Code, user scope; another server is not mf's; broken JSON is false.
        write(&claude_json, r#"{"mcpServers": {"other": {}}}"#);
        assert!(!installed(Agent::Claude, None));
        write(&claude_json, "{\"mcpServers\": {");
        assert!(!installed(Agent::Claude, None));
        write(
            &claude_json,
            &format!(
                "{{\"n\": 123456789012345678901234567890, \"s\": \"\\udc00\", \"mcpServers\": {{\"mf\": {mf}}}}}"
            ),
        );
        assert!(installed(Agent::Claude, None));
        assert!(!installed(Agent::Codex, None));
        // Local scope: the project's entry (or its git root's) in the global config.
        let canon = std::fs::canonicalize(&project).unwrap();
        let key = serde_json::to_string(&canon.to_string_lossy()).unwrap();
        write(
            &claude_json,
            &format!("{{\"projects\": {{{key}: {{\"mcpServers\": {{\"mf\": {mf}}}}}}}}}"),
        );
        assert!(installed(Agent::Claude, Some(&project)));
        assert!(!installed(Agent::Claude, Some(&tmp.path().join("work"))));
        assert!(!installed(Agent::Claude, Some(&sub)));
        std::fs::create_dir_all(project.join(".git")).unwrap();
        assert!(
            installed(Agent::Claude, Some(&sub)),
            "keyed by the git root"
        );
        std::fs::remove_file(&claude_json).unwrap();
        // Project scope: .mcp.json in the project or above it.
        write(
            &project.join(".mcp.json"),
            &format!("{{\"mcpServers\": {{\"mf\": {mf}}}}}"),
        );
        assert!(installed(Agent::Claude, Some(&sub)));
        assert!(!installed(Agent::Claude, None));
        // $CLAUDE_CONFIG_DIR moves the global config.
        let cc = tmp.path().join("cc");
        write(
            &cc.join(".claude.json"),
            &format!("{{\"mcpServers\": {{\"mf\": {mf}}}}}"),
        );
        let with_dir = AgentHomes {
            claude_config_dir: Some(cc),
            ..h.clone()
        };
        assert!(recall_tool_installed_in(&with_dir, Agent::Claude, None));

        // Codex: [mcp_servers.mf] in $CODEX_HOME/config.toml (default ~/.codex).
        write(
            &home.join(".codex/config.toml"),
            "[mcp_servers.other]\ncommand = \"x\"\n",
        );
        assert!(!installed(Agent::Codex, None));
        write(
            &home.join(".codex/config.toml"),
            "model = \"o3\"\n[mcp_servers.mf]\ncommand = \"mf\"\nargs = [\"mcp\"]\n",
        );
        assert!(installed(Agent::Codex, None));
        write(&home.join(".codex/config.toml"), "[mcp_servers.mf\n");
        assert!(!installed(Agent::Codex, None));

        // pi: mf's extension in the agent's settings.json.
        let pi = home.join(".pi/agent/settings.json");
        write(&pi, r#"{"extensions": ["/opt/other/ext"]}"#);
        assert!(!installed(Agent::Pi, None));
        write(
            &pi,
            r#"{"extensions": ["/home/u/src/mf/integrations/pi/"]}"#,
        );
        assert!(installed(Agent::Pi, None));
        write(&pi, r#"{"extensions": ["/home/u/pi-exts/mf"]}"#);
        assert!(installed(Agent::Pi, None));
        write(&pi, "not json");
        assert!(!installed(Agent::Pi, None));
        let other = AgentHomes {
            pi_agent_dir: Some(tmp.path().join("pi")),
            ..h.clone()
        };
        write(
            &tmp.path().join("pi/settings.json"),
            r#"{"extensions": ["~/x/integrations/pi"]}"#,
        );
        assert!(recall_tool_installed_in(&other, Agent::Pi, None));
    }
}
