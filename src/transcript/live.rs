//! Live: whether an agent is running a session now, judged by what a running agent leaves —
//! beside the session (its pid file, its lock: the format's adapter knows its agent's, see
//! `Adapter::running`), in the tail of the file (a line still being written, a tool call
//! without its result, a prompt or tool result without the model's reply), a modification time
//! in the future — and never by a recent write alone: a copy made without `cp -p`, or mf's own
//! append, is not an agent at work. The tail is read only for a file in an agent's own session
//! directory: a copy elsewhere is judged by the pid file, the lock and the clock alone.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use super::wire::MF_PREFIX;
use super::{Tail, Transcript, TranscriptError};
use crate::entry::{NONE, Role, flag};

/// Where the agents keep the files that say a session is in use.
#[derive(Debug, Clone, Default)]
pub struct AgentDirs {
    /// Claude Code's `sessions/` directory (`~/.claude/sessions`): `<pid>.json` per running process.
    pub claude_sessions: Option<PathBuf>,
    /// `$CODEX_HOME` (`~/.codex`): `thread-writer-locks/<thread-id>.lock`, locked while a thread runs.
    pub codex_home: Option<PathBuf>,
    /// Qwen Code's runtime directory (`$QWEN_RUNTIME_DIR`, else `$QWEN_HOME`, default `~/.qwen`):
    /// `tmp/session-writer-locks/<session-id>.lock`, held by a Qwen process writing the session.
    pub qwen_runtime: Option<PathBuf>,
    /// The directories the agents keep their sessions in (Claude Code's `projects/`, Codex's
    /// `sessions/`, pi's sessions directory): only a file under one of them is one an agent may
    /// be writing without leaving a pid file or a lock, so only there does the tail speak.
    pub sessions: Vec<PathBuf>,
}

impl AgentDirs {
    /// Whether `path` lies under one of the agents' session directories (both resolved, so a
    /// link or a relative path is judged by where the file is).
    pub fn holds_session(&self, path: &std::path::Path) -> bool {
        let Ok(file) = std::fs::canonicalize(path) else {
            return false;
        };
        self.sessions.iter().any(|d| {
            std::fs::canonicalize(d)
                .map(|d| file.starts_with(d))
                .unwrap_or(false)
        })
    }
}

/// What the live guard looks at.
#[derive(Debug, Clone, Default)]
pub struct Guard {
    pub dirs: AgentDirs,
    /// How long after its last write a session whose tail shows the agent in the middle of a
    /// step (a line being written, a tool call without its result, a prompt or result without a
    /// reply) still counts as live.
    pub window: Duration,
}

/// A modification time this far ahead of the clock is "in the future" (closer than this, it
/// is taken as written now: network filesystems' clocks drift a little).
const FUTURE_SLACK: Duration = Duration::from_secs(2);

impl Guard {
    /// Refuse (`TranscriptError::Live`) a session its agent is running, judged on the file as
    /// read (`t`) and as it is now (`file`, the same file, open).
    pub fn check(&self, t: &Transcript, file: &File) -> Result<(), TranscriptError> {
        match self.why_live(t, file, SystemTime::now()) {
            Some(why) => Err(TranscriptError::Live {
                path: t.path.clone(),
                format: t.format.describe(),
                why,
            }),
            None => Ok(()),
        }
    }

    /// The check again, right before mf writes (under the lock): the file must not have grown
    /// since it was read — an agent that appended while mf was working is running — and must
    /// still not look live.
    pub fn check_before_write(&self, t: &Transcript, file: &File) -> Result<(), TranscriptError> {
        let size = file
            .metadata()
            .map_err(|source| TranscriptError::Open {
                path: t.path.clone(),
                source,
            })?
            .len();
        if size > t.len {
            return Err(TranscriptError::Live {
                path: t.path.clone(),
                format: t.format.describe(),
                why: format!(
                    "{} bytes were appended to it while mf was working (after line {}): the agent is running",
                    size - t.len,
                    t.lines
                ),
            });
        }
        self.check(t, file)
    }

    /// Why the session looks live at `now`, or `None`.
    pub fn why_live(&self, t: &Transcript, file: &File, now: SystemTime) -> Option<String> {
        if let Some(why) = t.agent_running(&self.dirs) {
            return Some(why);
        }
        let modified = file.metadata().ok()?.modified().ok()?;
        if let Ok(ahead) = modified.duration_since(now)
            && ahead > FUTURE_SLACK
        {
            return Some(format!(
                "its modification time is {} s in the future, so mf cannot tell whether the agent is still writing it",
                ahead.as_secs()
            ));
        }
        if ends_with_mf_line(t) {
            // Nothing was written after mf's own last lines: the agent has not written since.
            return None;
        }
        let age = now.duration_since(modified).unwrap_or_default();
        if age >= self.window {
            return None;
        }
        if !self.dirs.holds_session(&t.path) {
            // A copy elsewhere (`cp` without `-p`, a file handed over for compaction): no agent
            // writes it without leaving its pid file or lock, checked above, whatever its tail.
            return None;
        }
        mid_step(t).map(|step| {
            format!(
                "it was written {:.1} s ago and {step}: the agent is in the middle of a step",
                age.as_secs_f64()
            )
        })
    }
}

/// Whether a line starts with mf's prefix.
fn is_mf_at(t: &Transcript, pos: u64) -> bool {
    let mut buf = [0u8; MF_PREFIX.len()];
    t.file.read_exact_at(&mut buf, pos).is_ok() && buf == *MF_PREFIX
}

/// Whether the last line of the file is one mf wrote (complete, or torn by a crash of mf's).
fn ends_with_mf_line(t: &Transcript) -> bool {
    match t.tail {
        Tail::Torn { mf, .. } => return mf,
        Tail::Unterminated | Tail::Clean => {}
    }
    let mut end = t.len;
    // Skip the final newline(s) and blank lines.
    let mut byte = [0u8; 1];
    while end > 0 {
        if t.file.read_exact_at(&mut byte, end - 1).is_err() {
            return false;
        }
        if !byte[0].is_ascii_whitespace() {
            break;
        }
        end -= 1;
    }
    if end == 0 {
        return false;
    }
    let mut start = end;
    let mut chunk = vec![0u8; 4096];
    'scan: while start > 0 {
        let from = start.saturating_sub(chunk.len() as u64);
        let buf = &mut chunk[..(start - from) as usize];
        if t.file.read_exact_at(buf, from).is_err() {
            return false;
        }
        if let Some(p) = memchr::memrchr(b'\n', buf) {
            start = from + p as u64 + 1;
            break 'scan;
        }
        start = from;
    }
    is_mf_at(t, start)
}

/// What in the tail shows the agent in the middle of a step, if anything: a line still being
/// written, or a last message that waits for something (a tool call without its result, a
/// prompt or a tool result without the model's reply). mf's own lines, what the agent does not
/// send and injected context are passed over.
fn mid_step(t: &Transcript) -> Option<String> {
    match t.tail {
        Tail::Torn { mf: false, .. } => return Some("its last line is still being written".into()),
        Tail::Unterminated => return Some("its last line has no newline yet".into()),
        Tail::Torn { mf: true, .. } | Tail::Clean => {}
    }
    let last = t
        .entries
        .iter()
        .enumerate()
        .rev()
        .find(|(_, e)| !e.has(flag::UNSEEN) && e.role != Role::System && !is_mf_at(t, e.pos));
    let (i, e) = last?;
    if e.has(flag::NATIVE_SUMMARY) {
        return None;
    }
    match e.role {
        Role::Assistant => {
            let calls = if e.link == NONE {
                0
            } else {
                t.links[e.link as usize].calls.len()
            };
            (calls > 0).then(|| {
                format!(
                    "its last message (line {}) asks for {} tool call{} with no result yet",
                    t.entries[i].line,
                    calls,
                    if calls == 1 { "" } else { "s" }
                )
            })
        }
        Role::Tool => Some(format!(
            "its last message (line {}) is a tool result the model has not answered yet",
            e.line
        )),
        Role::User => Some(format!(
            "its last message (line {}) is a prompt with no reply yet",
            e.line
        )),
        Role::System => None,
    }
}
