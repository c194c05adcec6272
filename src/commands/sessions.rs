//! `mf sessions`: the sessions of Claude Code, Codex and pi on this machine, newest first — what
//! each is, how large, what the agent sees of it now, whether it is live, whether it is folded.

use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Result;

use crate::cli::SessionsArgs;
use crate::entry::{estimate_tokens, flag};
use crate::error::MfError;
use crate::exit_status::ExitStatus;
use crate::fold::Ledger;
use crate::render::sessions::{self as view, SessionView};
use crate::render::{self, Ui};
use crate::settings::{agent_of, live_guard, read_options, scan_sessions, session_roots};
use crate::transcript::sessions::{Agent, Found};
use crate::transcript::{self, CacheOptions, Guard, ReadOptions};

fn ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// What one session file holds now.
fn describe(f: &Found, opts: &ReadOptions, guard: &Guard, now: SystemTime) -> SessionView {
    let mut v = SessionView {
        agent: f.agent.name(),
        path: f.path.display().to_string(),
        project: f.project.clone(),
        modified: transcript::format::common::iso_timestamp(ms(f.modified)),
        modified_ms: ms(f.modified),
        size: f.size,
        tokens: None,
        live: None,
        live_why: None,
        mf_folds: None,
        agent_folds: None,
        error: None,
    };
    let t = match transcript::read(&f.path, opts) {
        Ok(t) => t,
        Err(e) => {
            v.error = Some(e.to_string());
            return v;
        }
    };
    let ledger = Ledger::new(t.conversation());
    v.tokens = Some(estimate_tokens(ledger.view_chars()) as u64);
    v.mf_folds = Some(
        ledger
            .summaries_in_order()
            .iter()
            .filter(|s| s.state() == "standing")
            .count(),
    );
    v.agent_folds = Some(
        t.entries
            .iter()
            .filter(|e| e.has(flag::NATIVE_SUMMARY))
            .count(),
    );
    match std::fs::File::open(&f.path) {
        Ok(file) => {
            let why = guard.why_live(&t, &file, now);
            v.live = Some(why.is_some());
            v.live_why = why;
        }
        Err(e) => v.error = Some(format!("cannot open it to check whether it is live: {e}")),
    }
    v
}

pub fn sessions(args: &SessionsArgs, cache: Option<&CacheOptions>, ui: &Ui) -> Result<ExitStatus> {
    if let Some(dir) = &args.cwd
        && !dir.is_dir()
    {
        return Err(MfError::usage(
            format!("--cwd `{}` is not a directory", dir.display()),
            None,
        )
        .into());
    }
    let scan = scan_sessions(args.agent, args.cwd.as_deref());
    // A directory mf could not read may hold sessions: said, and the run exits 1 (as `find` and
    // `ls` do), after listing what it could read.
    for (dir, why) in &scan.unreadable {
        ui.warn(&format!(
            "cannot read `{}` ({why}); sessions in it are not listed",
            render::path_line(dir)
        ));
    }
    if !scan.not_json.is_empty() {
        ui.log(&format!(
            "passed over {} file{} that do not hold JSON lines: {}",
            scan.not_json.len(),
            if scan.not_json.len() == 1 { "" } else { "s" },
            scan.not_json
                .iter()
                .map(|p| render::path_line(p))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let status = if scan.unreadable.is_empty() {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    };
    let mut found = scan.found;
    if args.latest {
        found.truncate(1);
    }
    if found.is_empty() {
        let roots = session_roots();
        let looked: Vec<String> = match args.agent {
            Some(a) => vec![agent_of(a)],
            None => Agent::ALL.to_vec(),
        }
        .into_iter()
        .map(|a| match roots.of(a) {
            Some(p) => format!("{} in {}", a.name(), render::path_line(p)),
            None => format!("{} (no home directory to look in)", a.name()),
        })
        .collect();
        ui.note(&format!(
            "no sessions found{} (looked for {})",
            args.cwd
                .as_ref()
                .map(|c| format!(" run in {}", render::path_line(c)))
                .unwrap_or_default(),
            looked.join("; ")
        ));
    }
    if args.null {
        let rows: Vec<SessionView> = found
            .iter()
            .map(|f| SessionView {
                agent: f.agent.name(),
                path: f.path.display().to_string(),
                project: f.project.clone(),
                modified: String::new(),
                modified_ms: ms(f.modified),
                size: f.size,
                tokens: None,
                live: None,
                live_why: None,
                mf_folds: None,
                agent_folds: None,
                error: None,
            })
            .collect();
        view::paths_nul(&rows)?;
        return Ok(status);
    }
    let guard = live_guard();
    let now = SystemTime::now();
    let rows: Vec<SessionView> = found
        .iter()
        .map(|f| {
            describe(
                f,
                &read_options(None, cache).with_format(f.agent),
                &guard,
                now,
            )
        })
        .collect();
    if args.json {
        view::json_lines(&rows)?;
    } else if args.latest {
        // `--latest` alone: the path, for `$(mf sessions --latest)` and `--files-from -`.
        render::stdout(
            &rows
                .iter()
                .map(|r| format!("{}\n", r.path))
                .collect::<String>(),
        )?;
    } else {
        view::table(ui, &rows)?;
    }
    Ok(status)
}

/// Read options for one agent's session.
trait WithFormat {
    fn with_format(self, agent: Agent) -> Self;
}

impl WithFormat for ReadOptions {
    fn with_format(mut self, agent: Agent) -> Self {
        self.format = Some(agent.format());
        self
    }
}
