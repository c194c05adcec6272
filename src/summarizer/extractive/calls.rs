//! Tool calls as the summary keeps them: the tool's name and its target — the shell command,
//! the path read, written or edited, the URL fetched, the pattern searched for — copied from the
//! call's arguments, not its bodies (a file's content, an edit's old and new text).

use std::collections::HashSet;

use super::*;

/// Argument keys whose value is what a call acts on: a command, a path, a URL, a pattern.
#[rustfmt::skip]
const TARGET_KEYS: &[&str] = &[
    // What a shell runs.
    "cmd", "command", "commands", "script", "shell", "bash", "sh", "run", "commandline",
    "command_line", "cmdline",
    // What a file tool reads, writes or edits.
    "file_path", "filepath", "path", "paths", "file", "files", "filename", "notebook_path",
    "target_file", "absolute_path", "relative_path",
    // What a web tool fetches or searches for.
    "url", "urls", "uri", "query", "q",
    // What a search tool looks for.
    "pattern", "glob", "regex", "search", "include",
];

/// Argument keys whose value is a body of text (a file's content, an edit's old and new text, a
/// patch): never copied, save the paths a patch names in its headers. The audit's list
/// (`fold::audit`'s `BODY_KEYS`): what it does not count is not worth a summary's room, and what
/// it counts (pi's `oldText` / `newText`) a summary may be asked for.
#[rustfmt::skip]
const BODY_KEYS: &[&str] = &[
    "content", "contents", "new_string", "old_string", "new_str", "old_str", "file_text",
    "new_source", "text", "patch", "input", "diff", "edits", "code", "body", "data",
];

/// A call's value that is not its target: (argument key, value).
pub(super) type Extra = (String, String);

/// A patch body's header lines (`*** Add File: notes.md`), as written less the `*** `.
fn patch_headers(value: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in value.lines() {
        let l = line.trim();
        for p in [
            "*** Update File: ",
            "*** Add File: ",
            "*** Delete File: ",
            "*** Move to: ",
        ] {
            if l.starts_with(p) {
                out.push(l.trim_start_matches("*** ").to_string());
            }
        }
        if let Some(rest) = l.strip_prefix("+++ b/") {
            out.push(rest.to_string());
        }
    }
    out
}

/// What a call's chunks show: its targets, and apart (as `key: value`, each only the first time
/// the span's calls give it: a `workdir` is said once, not on every call) the other values that
/// carry items, as (key, value). `None` when the call's arguments name no target: the chunk shows every value
/// that carries items, as [`cut`] does.
pub(super) fn call_values(
    pieces: &[Piece],
    u: &Unit,
    shown: &mut HashSet<String>,
) -> Option<(Vec<String>, Vec<Extra>)> {
    let (_, args) = audit::parse_call(&pieces[u.piece].text[u.range.clone()])?;
    let leaves = audit::call_leaves(args);
    let is = |keys: &[&str], k: &str| keys.iter().any(|t| t.eq_ignore_ascii_case(k));
    let mut targets: Vec<String> = Vec::new();
    let mut others: Vec<Extra> = Vec::new();
    for leaf in &leaves {
        let patch = patch_headers(&leaf.value);
        if !patch.is_empty() {
            targets.extend(patch);
        } else if is(BODY_KEYS, &leaf.key) {
            continue;
        } else if is(TARGET_KEYS, &leaf.key) {
            targets.push(target_text(&leaf.key, &leaf.value));
        } else {
            others.push((leaf.key.clone(), collapse(&leaf.value)));
        }
    }
    if targets.is_empty() {
        return None;
    }
    let extras = others
        .into_iter()
        .filter(|(_, v)| shown.insert(v.clone()))
        .collect();
    Some((targets, extras))
}

/// A target as shown: a command's first line (what follows is a body: a heredoc, a script).
fn target_text(key: &str, value: &str) -> String {
    let v = value.trim();
    let command = TARGET_KEYS[..11]
        .iter()
        .any(|t| t.eq_ignore_ascii_case(key));
    if command && v.contains('\n') {
        return collapse(v.lines().next().unwrap_or(""));
    }
    collapse(v)
}
