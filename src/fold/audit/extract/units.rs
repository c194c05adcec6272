//! Units: the sentences and tool calls of a span, each with its items and where it came from
//! (the user, the assistant, a tool call, a tool result); text the agent injected is not the
//! user's.

use super::*;

/// A tool call, as the unit that carries its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct CallUnit {
    pub name: String,
    /// Argument values that carry items, verbatim, in order.
    pub values: Vec<String>,
}

/// A sentence of the span (or a whole tool call) with its items.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    /// Index of the piece in the span.
    pub piece: usize,
    pub source: Source,
    /// Byte range in the piece's text.
    pub range: Range<usize>,
    /// Items, with ranges in the piece's text (a call's items all carry the call's range).
    pub items: Vec<Item>,
    pub call: Option<CallUnit>,
}

/// The source of a piece's prose.
pub fn source_of(piece: &Piece) -> Source {
    match piece.role {
        Some(Role::User) => Source::User,
        Some(Role::Assistant) => Source::Assistant,
        Some(Role::Tool) => Source::ToolResult,
        Some(Role::System) | None => Source::Other,
    }
}

/// Blocks an agent puts into a user row that the user did not type: reminders, the tools it
/// used before a summary, slash-command wrappers, local command output, task notifications,
/// Codex's environment context and `AGENTS.md` instructions.
pub const INJECTED_TAGS: &[&str] = &[
    "system-reminder",
    "tools-used-before-summary",
    "command-name",
    "command-message",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "task-notification",
    "environment_context",
    "user_instructions",
    "INSTRUCTIONS",
    "user-prompt-submit-hook",
    "bash-stdout",
    "bash-stderr",
    "ide_opened_file",
    "ide_selection",
    "ide_diagnostics",
    "attachment",
    "turn_aborted",
    "user_shell_command",
];

/// Wrappers whose content the user did type (`<command-args>`): only the tags go.
pub(in crate::fold::audit) const WRAPPER_TAGS: &[&str] =
    &["command-args", "bash-input", "user_query"];

/// Byte ranges of `text` the agent injected (see [`INJECTED_TAGS`]), merged and in order. An
/// unclosed block runs to the end of the text.
pub fn injected_ranges(text: &str) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    if !text.contains('<') && !text.contains("AGENTS.md") {
        return out;
    }
    for tag in INJECTED_TAGS {
        let open = format!("<{tag}");
        let close = format!("</{tag}>");
        let mut from = 0;
        while let Some(p) = text[from..].find(&open) {
            let start = from + p;
            let after = start + open.len();
            if !text[after..].starts_with(['>', ' ', '\n']) {
                from = after;
                continue;
            }
            let end = text[after..]
                .find(&close)
                .map_or(text.len(), |e| after + e + close.len());
            out.push(start..end);
            from = end;
        }
    }
    for tag in WRAPPER_TAGS {
        for t in [format!("<{tag}>"), format!("</{tag}>")] {
            for (p, _) in text.match_indices(&t) {
                out.push(p..p + t.len());
            }
        }
    }
    // Codex: "# AGENTS.md instructions for /path" up to the end of its <INSTRUCTIONS> block.
    for (p, _) in text.match_indices("# AGENTS.md instructions") {
        let end = text[p..]
            .find("</INSTRUCTIONS>")
            .map_or(text.len(), |e| p + e + "</INSTRUCTIONS>".len());
        out.push(p..end);
    }
    out.sort_by_key(|r| (r.start, r.end));
    let mut merged: Vec<Range<usize>> = Vec::new();
    for r in out {
        match merged.last_mut() {
            Some(m) if r.start <= m.end => m.end = m.end.max(r.end),
            _ => merged.push(r),
        }
    }
    merged
}

/// The parts of a user message the user typed: the text less [`injected_ranges`], as byte
/// ranges with some non-space text in each.
pub fn typed_ranges(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut at = 0;
    for r in injected_ranges(text)
        .into_iter()
        .chain(std::iter::once(text.len()..text.len()))
    {
        if r.start > at && !text[at..r.start].trim().is_empty() {
            out.push(at..r.start);
        }
        at = at.max(r.end);
    }
    out
}

/// What a tool call does to its target, from the tool's name: `read`, `edited`, `wrote`, `ran`,
/// `searched`, or `None` for another tool.
pub fn action_of(tool: &str) -> Option<&'static str> {
    let t = tool.to_ascii_lowercase();
    let has = |ws: &[&str]| ws.iter().any(|w| t.contains(w));
    if has(&["write", "create"]) {
        Some("wrote")
    } else if has(&["edit", "patch", "replace", "update"]) {
        Some("edited")
    } else if has(&["read", "view", "open", "cat"]) {
        Some("read")
    } else if has(&["bash", "shell", "exec", "command", "run", "terminal"]) {
        Some("ran")
    } else if has(&["grep", "glob", "search", "find", "ls", "list"]) {
        Some("searched")
    } else {
        None
    }
}

/// Argument keys whose value is a body of text (a file's content, an edit's old and new text):
/// not salient, save the paths a patch names in its headers.
pub(in crate::fold::audit) const BODY_KEYS: &[&str] = &[
    "content",
    "contents",
    "new_string",
    "old_string",
    "new_str",
    "old_str",
    "file_text",
    "new_source",
    "text",
    "patch",
    "input",
    "diff",
    "edits",
    "code",
    "body",
    "data",
];

/// Paths a patch body names in its headers (`*** Update File: src/a.rs`, `+++ b/src/a.rs`).
pub(in crate::fold::audit) fn patch_paths(value: &str) -> Vec<Item> {
    let mut out = Vec::new();
    for line in value.lines() {
        let l = line.trim();
        let rest = [
            "*** Update File: ",
            "*** Add File: ",
            "*** Delete File: ",
            "*** Move to: ",
        ]
        .iter()
        .find_map(|p| l.strip_prefix(p))
        .or_else(|| l.strip_prefix("+++ b/"))
        .or_else(|| l.strip_prefix("--- a/"));
        if let Some(r) = rest {
            let r = r.trim();
            if let Some(p) = path_of(r) {
                out.push(Item::new(
                    ItemClass::Path,
                    p,
                    p.trim_end_matches('/').to_lowercase(),
                    0..0,
                ));
            }
        }
    }
    out
}

/// A piece split into segments: (source, byte range, whether it is a tool call).
pub(in crate::fold::audit) fn segments(piece: &Piece) -> Vec<(Source, Range<usize>, bool)> {
    let text = piece.text.as_str();
    let source = source_of(piece);
    if source == Source::User {
        return typed_ranges(text)
            .into_iter()
            .map(|r| (source, r, false))
            .collect();
    }
    if source != Source::Assistant {
        return vec![(source, 0..text.len(), false)];
    }
    let mut out: Vec<(Source, Range<usize>, bool)> = Vec::new();
    let mut offset = 0;
    let mut call_start: Option<usize> = None;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let body = line.trim_end_matches(['\n', '\r']);
        if call_start.is_none() && body.trim_start().starts_with("[calls ") {
            call_start = Some(start);
        }
        if let Some(cs) = call_start {
            if body.trim_end().ends_with(")]") {
                out.push((Source::ToolCall, cs..start + body.len(), true));
                call_start = None;
            }
            continue;
        }
        match out.last_mut() {
            Some((Source::Assistant, r, false)) if r.end == start || r.end + 1 == start => {
                r.end = start + body.len()
            }
            _ => out.push((Source::Assistant, start..start + body.len(), false)),
        }
    }
    if let Some(cs) = call_start {
        // An unterminated call line: read it as prose.
        out.push((Source::Assistant, cs..text.len(), false));
    }
    out
}

/// Split the span into units: one per sentence of prose, one per tool call, each with the items
/// it carries.
pub fn units(pieces: &[Piece]) -> Vec<Unit> {
    let mut out = Vec::new();
    for (pi, piece) in pieces.iter().enumerate() {
        for (source, range, is_call) in segments(piece) {
            let seg = &piece.text[range.clone()];
            if is_call {
                let (name, args) = parse_call(seg).unwrap_or(("?", ""));
                let leaves = call_leaves(args);
                let mut items = Vec::new();
                let mut values = Vec::new();
                for leaf in leaves {
                    let body = BODY_KEYS.contains(&leaf.key.to_ascii_lowercase().as_str());
                    let leaf_items = if body {
                        patch_paths(&leaf.value)
                    } else {
                        leaf.items
                    };
                    if leaf_items.is_empty() {
                        continue;
                    }
                    values.push(if body {
                        leaf_items
                            .iter()
                            .map(|i| i.text.clone())
                            .collect::<Vec<_>>()
                            .join(" ")
                    } else {
                        leaf.value
                    });
                    for mut it in leaf_items {
                        it.at = range.clone();
                        items.push(it);
                    }
                }
                out.push(Unit {
                    piece: pi,
                    source,
                    range: range.clone(),
                    items,
                    call: Some(CallUnit {
                        name: name.trim().to_string(),
                        values,
                    }),
                });
                continue;
            }
            let items = extract(seg);
            let sentences = sentence_ranges(seg);
            let mut it = items.into_iter().peekable();
            for (k, s) in sentences.iter().enumerate() {
                let next_start = sentences.get(k + 1).map_or(usize::MAX, |n| n.start);
                let mut mine = Vec::new();
                while let Some(item) = it.peek() {
                    if item.at.start >= next_start {
                        break;
                    }
                    let mut item = it.next().expect("peeked");
                    item.at = item.at.start + range.start..item.at.end + range.start;
                    mine.push(item);
                }
                out.push(Unit {
                    piece: pi,
                    source,
                    range: s.start + range.start..s.end + range.start,
                    items: mine,
                    call: None,
                });
            }
        }
    }
    out
}
