//! `mf mcp`: an MCP server on stdio (the official Rust SDK, `rmcp`) that lets the agent reach
//! what a fold hid: `search` the folded originals, `expand` a summary, a stub or one entry
//! (paged), list the `folds` standing. It reads sessions and never writes one (nor a
//! checkpoint): every call reads the file as it is now.
//!
//! A call that names no `file` reads the server's session: `--file`, else the newest session of
//! `--agent` (any agent when not given) run in `--cwd` (the server's working directory), found
//! anew at each call, since an agent starts its servers before its session file exists. When
//! several of those sessions are live, the call says so and asks for `file`. A problem is a tool
//! error the model can read (`isError`), never the end of the server.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use schemars::JsonSchema;
use serde::Deserialize;

use crate::cli::{AgentArg, McpArgs};
use crate::entry::ClaimKind;
use crate::exit_status::ExitStatus;
use crate::fold::Ledger;
use crate::render::recall::text_block;
use crate::search::Query;
use crate::settings::{agent_of, calling_session_id, find_sessions, live_guard, read_options};
use crate::transcript::{self, Transcript};
use crate::view::{Scope, item, originals, resolve, search, standing_folds};

/// Hits a `search` call returns when it asks for none, and at most.
const DEFAULT_HITS: u32 = 5;
const MAX_HITS: u32 = 50;
/// Tokens an `expand` page holds when the call asks for none, and the bounds (4 characters a
/// token, as mf estimates everywhere).
const DEFAULT_PAGE_TOKENS: u32 = 8_000;
const MIN_PAGE_TOKENS: u32 = 200;
const MAX_PAGE_TOKENS: u32 = 100_000;
/// Sessions looked at (newest first) to tell which one is live.
const LIVE_CANDIDATES: usize = 8;

/// Where a call without `file` reads.
#[derive(Debug, Clone)]
enum Session {
    File(PathBuf),
    Newest {
        agent: Option<AgentArg>,
        cwd: PathBuf,
        /// The id of the calling agent's session, when it says it (Claude Code does).
        id: Option<String>,
    },
}

#[derive(Debug, Clone)]
pub struct Recall {
    session: Arc<Session>,
    /// Where relative `file` arguments are resolved.
    cwd: Arc<PathBuf>,
    tool_router: ToolRouter<Self>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SearchParams {
    /// What to look for: words, a question, identifiers, paths, numbers, "quoted phrases".
    pub query: String,
    /// The session file (default: this agent's current session).
    #[serde(default)]
    pub file: Option<String>,
    /// Hits to return (default 5, at most 50).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Search every entry, not only what summaries hide.
    #[serde(default)]
    pub all: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExpandParams {
    /// A summary's or stub's id (as its label or `folds` names it), or one entry's id (as
    /// `search` shows it).
    pub id: String,
    /// The session file (default: this agent's current session).
    #[serde(default)]
    pub file: Option<String>,
    /// At most this many tokens in one page (default 8000).
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Where to go on: the cursor the previous page ended with.
    #[serde(default)]
    pub cursor: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct FoldsParams {
    /// The session file (default: this agent's current session).
    #[serde(default)]
    pub file: Option<String>,
}

fn text_result(text: String) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text)])
}

fn error_result(text: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

#[tool_router]
impl Recall {
    fn new(session: Session, cwd: PathBuf) -> Self {
        Recall {
            session: Arc::new(session),
            cwd: Arc::new(cwd),
            tool_router: Self::tool_router(),
        }
    }

    #[tool(
        name = "search",
        description = "Search the original messages that mf's summaries hide in this session (the tool calls, outputs and the user's own words a summary may have left out). Identifiers, paths, numbers and \"quoted phrases\" match exactly; a question in words works too. Returns ranked hits with their ids; pass an id to `expand` for the whole entry."
    )]
    async fn search(&self, Parameters(p): Parameters<SearchParams>) -> CallToolResult {
        let this = self.clone();
        blocking(move || this.do_search(p)).await
    }

    #[tool(
        name = "expand",
        description = "The original messages behind a summary or stub id (as the summary's label names it), or one entry by its id (as `search` returns it), verbatim. Long results come in pages: call again with the cursor the page ends with."
    )]
    async fn expand(&self, Parameters(p): Parameters<ExpandParams>) -> CallToolResult {
        let this = self.clone();
        blocking(move || this.do_expand(p)).await
    }

    #[tool(
        name = "folds",
        description = "The summaries standing in this session: each one's id, the turns and lines it covers, the model that wrote it and how much of its span its audit found kept."
    )]
    async fn folds(&self, Parameters(p): Parameters<FoldsParams>) -> CallToolResult {
        let this = self.clone();
        blocking(move || this.do_folds(p)).await
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "mf",
    instructions = "mf folded older turns of this conversation into summaries and kept every original message in the session file. When a summary lacks a detail you need (an exact value, a path, a command's output, what the user decided), `search` for it, then `expand` an id to read the originals verbatim. `folds` lists the summaries."
)]
impl ServerHandler for Recall {}

/// Run a call's file work off the async runtime; a panic in it is a tool error, not the end of
/// the server.
async fn blocking(
    work: impl FnOnce() -> Result<String, String> + Send + 'static,
) -> CallToolResult {
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(text)) => text_result(text),
        Ok(Err(why)) => error_result(why),
        Err(e) => error_result(format!(
            "mf failed on this call (a bug; please report it): {e}"
        )),
    }
}

impl Recall {
    /// The session a call reads.
    fn file(&self, file: Option<&str>) -> Result<PathBuf, String> {
        if let Some(f) = file.filter(|f| !f.trim().is_empty()) {
            let p = Path::new(f);
            return Ok(if p.is_absolute() {
                p.to_path_buf()
            } else {
                self.cwd.join(p)
            });
        }
        match &*self.session {
            Session::File(p) => Ok(p.clone()),
            Session::Newest { agent, cwd, id } => newest_session(*agent, cwd, id.as_deref()),
        }
    }

    fn read(&self, file: Option<&str>) -> Result<Transcript, String> {
        let path = self.file(file)?;
        transcript::read(&path, &read_options(None, None)).map_err(|e| e.to_string())
    }

    fn do_search(&self, p: SearchParams) -> Result<String, String> {
        let query = Query::new(&p.query).map_err(|e| e.to_string())?;
        let t = self.read(p.file.as_deref())?;
        let ledger = Ledger::new(t.conversation());
        let limit = p.limit.unwrap_or(DEFAULT_HITS).clamp(1, MAX_HITS) as usize;
        let scope = if p.all == Some(true) {
            Scope::All
        } else {
            Scope::Folded
        };
        let found = search(&t, &ledger, &query, scope, limit)
            .map_err(|e| format!("cannot read `{}`: {e}", t.display()))?;
        let what = match (found.widened, found.scope) {
            (true, _) => "entries (nothing is folded in it)",
            (false, Scope::All) => "entries",
            (false, Scope::Folded) => "folded entries",
        };
        if found.hits.is_empty() {
            return Ok(format!(
                "No hit among the {} {what} of {}.{}",
                found.searched,
                t.display(),
                if found.scope == Scope::Folded {
                    " Try other words, or `all: true` to search every entry."
                } else {
                    " Try other words."
                }
            ));
        }
        Ok(format!(
            "{} hit{} among the {} {what} of {}:\n\n{}\nRead a whole entry, or a summary's originals, with `expand` and its id.",
            found.hits.len(),
            if found.hits.len() == 1 { "" } else { "s" },
            found.searched,
            t.display(),
            crate::render::search::text(&found.hits)
        ))
    }

    fn do_expand(&self, p: ExpandParams) -> Result<String, String> {
        let t = self.read(p.file.as_deref())?;
        let ledger = Ledger::new(t.conversation());
        let i = resolve(&t, &ledger, p.id.trim()).map_err(|e| {
            let hints = crate::error::hints(&e);
            match hints.is_empty() {
                true => format!("{e:#}"),
                false => format!("{e:#}; {}", hints.join("; ")),
            }
        })?;
        let (order, heading) = match ledger.summaries.get(&i) {
            Some(s) => (
                originals(&ledger, i, true),
                match s.kind {
                    ClaimKind::Summary => format!(
                        "The originals behind {} ({}, {} message{}; {}) in {}:",
                        t.id_string(i as usize),
                        crate::text::turn_span(s.from_turn, s.to_turn),
                        s.leaf_count,
                        if s.leaf_count == 1 { "" } else { "s" },
                        s.state(),
                        t.display()
                    ),
                    ClaimKind::Stub => format!(
                        "The tool result behind the stub {} in {}:",
                        t.id_string(i as usize),
                        t.display()
                    ),
                },
            ),
            None => (
                vec![i],
                format!(
                    "Entry {} (turn {}, {}, line {}) of {}:",
                    t.id_string(i as usize),
                    ledger.turns[i as usize],
                    t.entries[i as usize].role.as_str(),
                    t.entries[i as usize].line,
                    t.display()
                ),
            ),
        };
        let (start_item, start_char) = match p.cursor.as_deref().map(str::trim) {
            None | Some("") => (0, 0),
            Some(c) => parse_cursor(c)
                .filter(|&(k, _)| k < order.len())
                .ok_or_else(|| format!("the cursor `{c}` is not one this id's pages end with: start again without a cursor"))?,
        };
        let budget = p
            .max_tokens
            .unwrap_or(DEFAULT_PAGE_TOKENS)
            .clamp(MIN_PAGE_TOKENS, MAX_PAGE_TOKENS) as usize
            * 4;
        let mut out = String::new();
        if (start_item, start_char) == (0, 0) {
            out.push_str(&heading);
            out.push_str("\n\n");
        } else {
            out.push_str(&format!("{heading} (continued)\n\n"));
        }
        let mut used = 0usize;
        for (k, &j) in order.iter().enumerate().skip(start_item) {
            let block = text_block(
                &item(&t, &ledger, j).map_err(|e| format!("cannot read `{}`: {e}", t.display()))?,
            );
            let skip = if k == start_item { start_char } else { 0 };
            let rest: String = block.chars().skip(skip).collect();
            let n = rest.chars().count();
            if used + n <= budget {
                out.push_str(&rest);
                used += n;
                continue;
            }
            // Over the page: what fits (at least something, so every page moves on).
            let room = budget
                .saturating_sub(used)
                .max(if used == 0 { 1 } else { 0 });
            let part: String = rest.chars().take(room).collect();
            out.push_str(&part);
            let left: usize = n - room
                + order[k + 1..]
                    .iter()
                    .map(|&m| ledger.item_chars(m))
                    .sum::<usize>();
            out.push_str(&format!(
                "\n… more (about {} tokens): call expand with id \"{}\" and cursor \"{}.{}\"",
                left.div_ceil(4),
                p.id.trim(),
                k,
                skip + room
            ));
            return Ok(out);
        }
        Ok(out)
    }

    fn do_folds(&self, p: FoldsParams) -> Result<String, String> {
        let t = self.read(p.file.as_deref())?;
        let ledger = Ledger::new(t.conversation());
        let (lines, natives) = standing_folds(&t, &ledger);
        if lines.is_empty() && natives.is_empty() {
            return Ok(format!(
                "No summary stands in {}: the model sees every message.",
                t.display()
            ));
        }
        let mut out = format!("Folds standing in {}:\n", t.display());
        for l in lines.iter().chain(&natives) {
            out.push_str("- ");
            out.push_str(l);
            out.push('\n');
        }
        out.push_str("Read a summary's originals with `expand` and its id.");
        Ok(out)
    }
}

/// `K.C`: item `K` of the page order, character `C` of its text.
fn parse_cursor(c: &str) -> Option<(usize, usize)> {
    let (k, ch) = c.split_once('.')?;
    Some((k.parse().ok()?, ch.parse().ok()?))
}

/// The session of the calling agent when it named it, else the newest session run in `cwd`;
/// when several of the newest are live, none (the call must say which).
fn newest_session(
    agent: Option<AgentArg>,
    cwd: &Path,
    id: Option<&str>,
) -> Result<PathBuf, String> {
    let found = find_sessions(agent, Some(cwd));
    if let Some(f) = id.and_then(|id| {
        found.iter().find(|f| {
            f.path
                .file_stem()
                .is_some_and(|s| s.to_string_lossy() == id)
        })
    }) {
        return Ok(f.path.clone());
    }
    let whose = agent.map_or("Claude Code, Codex or pi".to_string(), |a| {
        agent_of(a).name().to_string()
    });
    if found.is_empty() {
        return Err(format!(
            "no {whose} session was run in {} yet: pass `file` (the session's path; `mf sessions` lists them)",
            cwd.display()
        ));
    }
    let guard = live_guard();
    let now = std::time::SystemTime::now();
    let recent = now - std::time::Duration::from_secs(24 * 3600);
    let candidates: Vec<_> = found
        .iter()
        .take(LIVE_CANDIDATES)
        .filter(|f| f.modified >= recent)
        .collect();
    // One session written lately (or none): the newest, without reading it to ask whether it
    // is live.
    if candidates.len() <= 1 {
        return Ok(found[0].path.clone());
    }
    let live: Vec<&PathBuf> = candidates
        .into_iter()
        .filter(|f| {
            let Ok(file) = std::fs::File::open(&f.path) else {
                return false;
            };
            transcript::read(&f.path, &read_options(None, None))
                .is_ok_and(|t| guard.why_live(&t, &file, now).is_some())
        })
        .map(|f| &f.path)
        .collect();
    match live.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Ok(found[0].path.clone()),
        many => Err(format!(
            "{} {whose} sessions run in {} are live: {}; pass `file` with the one to read",
            many.len(),
            cwd.display(),
            many.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// `mf mcp`: serve until the client closes stdin.
pub fn serve(args: &McpArgs) -> Result<ExitStatus> {
    let here = std::env::current_dir()?;
    let session = match &args.file {
        Some(f) => Session::File(if f.is_absolute() {
            f.clone()
        } else {
            here.join(f)
        }),
        None => Session::Newest {
            agent: args.agent,
            cwd: args.cwd.clone().map_or_else(
                || here.clone(),
                |c| if c.is_absolute() { c } else { here.join(c) },
            ),
            id: calling_session_id(),
        },
    };
    let server = Recall::new(session, here);
    super::block_on(async move {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| anyhow::anyhow!("the MCP client did not initialize: {e}"))?;
        running.waiting().await?;
        anyhow::Ok(())
    })??;
    Ok(ExitStatus::Success)
}
