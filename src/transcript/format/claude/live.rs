//! Whether Claude Code is running a session: a `sessions/<pid>.json` that names the session,
//! written by a process that still runs (told apart from a later process with the same pid by
//! its start time, where the system says it).

use std::path::Path;

use serde_json::Value;

/// A Claude Code process, still running, whose `sessions/<pid>.json` names `session_id`.
pub fn claude_process(dir: &Path, session_id: &str) -> Option<String> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&p) else {
            continue;
        };
        let Ok(v) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        if v.get("sessionId").and_then(Value::as_str) != Some(session_id) {
            continue;
        }
        let Some(pid) = v.get("pid").and_then(Value::as_i64) else {
            continue;
        };
        if running(pid, v.get("procStart").and_then(Value::as_str)) {
            return Some(format!(
                "Claude Code process {pid} is running this session ({})",
                p.display()
            ));
        }
    }
    None
}

/// Whether process `pid` exists (signal 0: it exists even when it belongs to another user).
/// Where the system says when a process started (Linux), a pid reused by a later process is
/// told apart by Claude Code's `procStart`.
pub(crate) fn running(pid: i64, proc_start: Option<&str>) -> bool {
    let Some(p) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    match rustix::process::test_kill_process(p) {
        Ok(()) | Err(rustix::io::Errno::PERM) => {}
        Err(_) => return false,
    }
    match (proc_start, start_time(pid)) {
        (Some(claimed), Some(actual)) => claimed == actual,
        _ => true,
    }
}

/// The start time of a process in clock ticks since boot, as Claude Code records it
/// (`procStart`), where the system tells it (Linux's `/proc/<pid>/stat`, field 22).
fn start_time(pid: i64) -> Option<String> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19).map(str::to_string)
}
