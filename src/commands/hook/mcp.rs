//! mf's MCP server registered for Claude Code as `claude mcp add` writes it: a member `"mf"` of
//! the top-level `mcpServers` object of the global config (user scope) or of `.mcp.json`
//! (project scope). The user's file is edited as text: mf inserts its member and, on uninstall,
//! takes out exactly the bytes it inserted while they are still there unchanged (else only its
//! member); every other byte stays as it was.

use serde_json::Value;

use crate::json_span::{self, Object};

/// The value of Claude Code's `mcpServers.mf`: `mf mcp --agent claude` on stdio.
pub fn claude_entry(mf: &str) -> String {
    let command = serde_json::to_string(mf).unwrap_or_else(|_| "\"mf\"".into());
    format!(
        r#"{{"type": "stdio", "command": {command}, "args": ["mcp", "--agent", "claude"], "env": {{}}}}"#
    )
}

/// What an `mf` server already there is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Found {
    /// Exactly mf's entry.
    Same,
    /// mf's, for an mf elsewhere (an absolute path to a program named `mf`, the same arguments).
    Moved,
    /// Someone else's.
    Theirs,
}

/// Whether `value` (JSON text) is mf's registration `entry`, one of an mf elsewhere, or not mf's.
pub fn judge(value: &str, entry: &str) -> Found {
    let (Ok(v), Ok(e)) = (
        serde_json::from_str::<Value>(value),
        serde_json::from_str::<Value>(entry),
    ) else {
        return Found::Theirs;
    };
    if v == e {
        return Found::Same;
    }
    let mf_like = v
        .get("command")
        .and_then(Value::as_str)
        .map(std::path::Path::new)
        .is_some_and(|p| p.is_absolute() && p.file_name().is_some_and(|n| n == "mf"));
    let same_run = v.get("args") == e.get("args")
        && matches!(v.get("type").and_then(Value::as_str), None | Some("stdio"));
    if mf_like && same_run {
        Found::Moved
    } else {
        Found::Theirs
    }
}

/// The file mf writes when there is none.
fn new_file(entry: &str) -> String {
    format!("{{\n  \"mcpServers\": {{\n    \"mf\": {entry}\n  }}\n}}\n")
}

/// The whitespace before `obj`'s last member (after its `{` or `,`), which a member inserted
/// after it copies: the file's own line end and indentation.
fn member_ws<'a>(text: &'a str, obj: &Object) -> &'a str {
    let Some(last) = obj.members.last() else {
        return "";
    };
    let head = &text[..last.start];
    let from = head.trim_end_matches([' ', '\t', '\n', '\r']).len();
    &text[from..last.start]
}

/// `text` with `member` (`"key": value`) inserted as `obj`'s last member.
fn insert_last(text: &str, obj: &Object, member: &str) -> String {
    match obj.members.last() {
        None => format!("{}{member}{}", &text[..obj.open + 1], &text[obj.open + 1..]),
        Some(last) => format!(
            "{},{}{member}{}",
            &text[..last.value.end],
            member_ws(text, obj),
            &text[last.value.end..]
        ),
    }
}

/// `text` without `obj`'s member `k`, with the separator that goes with it.
fn remove_member(text: &str, obj: &Object, k: usize) -> String {
    let m = &obj.members[k];
    let (from, to) = if obj.members.len() == 1 {
        (m.start, m.value.end)
    } else if k + 1 == obj.members.len() {
        (obj.members[k - 1].value.end, m.value.end)
    } else {
        (m.start, obj.members[k + 1].start)
    };
    format!("{}{}", &text[..from], &text[to..])
}

/// The member `"mcpServers": {"mf": …}` for an object whose members are separated by `ws`.
fn servers_member(entry: &str, ws: &str) -> String {
    if ws.contains('\n') {
        let indent = &ws[ws.rfind('\n').map_or(0, |i| i + 1)..];
        let unit = if indent.contains('\t') { "\t" } else { "  " };
        format!("\"mcpServers\": {{{ws}{unit}\"mf\": {entry}{ws}}}")
    } else {
        format!("\"mcpServers\": {{ \"mf\": {entry} }}")
    }
}

/// Claude Code's file (`None`: there is none) with mf's server added; unchanged when it is there.
/// Refused: a file that is not a JSON object, a `mcpServers` that is not one, an `mf` server
/// of someone else's.
pub fn add(old: Option<&str>, entry: &str) -> Result<String, String> {
    let Some(text) = old else {
        return Ok(new_file(entry));
    };
    let top = json_span::top_object(text)?;
    let Some((_, servers)) = top.get("mcpServers") else {
        let member = servers_member(entry, member_ws(text, &top));
        return Ok(insert_last(text, &top, &member));
    };
    let servers = json_span::object_at(text, servers.value.start)
        .map_err(|_| "its `mcpServers` is not an object".to_string())?;
    match servers.get("mf") {
        None => Ok(insert_last(text, &servers, &format!("\"mf\": {entry}"))),
        Some((_, m)) => match judge(&text[m.value.clone()], entry) {
            Found::Same => Ok(text.to_string()),
            Found::Moved => Ok(format!(
                "{}{entry}{}",
                &text[..m.value.start],
                &text[m.value.end..]
            )),
            Found::Theirs => Err(format!(
                "it already has an MCP server named `mf` that mf did not write: {}",
                crate::text::prefix(&text[m.value.clone()], 300)
            )),
        },
    }
}

/// What uninstalling does to Claude Code's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removal {
    /// No `mf` server there.
    Absent,
    /// An `mf` server that is not mf's: left as it is.
    Theirs,
    /// The file as it was before mf's entry (or with only that entry taken out).
    Write(String),
    /// mf created the file: it goes.
    Delete,
}

/// Claude Code's file without mf's server: the bytes mf inserted, when they are still there as
/// mf wrote them (the file is then byte for byte what it was); else only the `mf` member.
pub fn remove(text: &str, entry: &str) -> Result<Removal, String> {
    if text == new_file(entry) {
        return Ok(Removal::Delete);
    }
    let top = json_span::top_object(text)?;
    let Some((ki, s)) = top.get("mcpServers") else {
        return Ok(Removal::Absent);
    };
    let Ok(servers) = json_span::object_at(text, s.value.start) else {
        return Ok(Removal::Absent);
    };
    let Some((mi, m)) = servers.get("mf") else {
        return Ok(Removal::Absent);
    };
    if judge(&text[m.value.clone()], entry) == Found::Theirs {
        return Ok(Removal::Theirs);
    }
    // The file before install is the one install turns into this text.
    let without_mf = remove_member(text, &servers, mi);
    if add(Some(&without_mf), entry).as_deref() == Ok(text) {
        return Ok(Removal::Write(without_mf));
    }
    if servers.members.len() == 1 {
        let without_servers = remove_member(text, &top, ki);
        if add(Some(&without_servers), entry).as_deref() == Ok(text) {
            return Ok(Removal::Write(without_servers));
        }
    }
    Ok(Removal::Write(without_mf))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MF: &str = "/usr/local/bin/mf";

    fn round_trip(old: Option<&str>) -> String {
        let e = claude_entry(MF);
        let with = add(old, &e).unwrap();
        // Read as Claude Code reads it (the last `mcpServers`, its `mf`).
        let top = json_span::top_object(&with).unwrap_or_else(|err| panic!("{err}: {with}"));
        let servers = json_span::object_at(&with, top.get("mcpServers").unwrap().1.value.start);
        let m = servers.unwrap().get("mf").unwrap().1.clone();
        assert_eq!(judge(&with[m.value], &e), Found::Same, "{with}");
        if let Ok(v) = serde_json::from_str::<Value>(&with) {
            assert_eq!(v["mcpServers"]["mf"]["command"], MF, "{with}");
            assert_eq!(
                v["mcpServers"]["mf"]["args"],
                serde_json::json!(["mcp", "--agent", "claude"])
            );
        }
        assert_eq!(add(Some(&with), &e).unwrap(), with, "idempotent");
        match (remove(&with, &e).unwrap(), old) {
            (Removal::Delete, None) => {}
            (Removal::Write(back), Some(old)) => assert_eq!(back, old, "{with}"),
            (r, _) => panic!("{r:?} for {old:?}"),
        }
        with
    }

    #[test]
    fn install_then_uninstall_gives_the_file_back_byte_for_byte() {
        round_trip(None);
        for old in [
            "{}",
            "{}\n",
            "{\n}\n",
            " {\"a\":1}",
            "{\"mcpServers\":{}}",
            "{\"mcpServers\": {\n  }}",
            "{\n  \"n\": 123456789012345678901234567890,\n  \"s\": \"\\ud800 \\u00e9\"\n}\n",
            "{\r\n  \"mcpServers\": {\r\n    \"other\": {\"command\": \"x\"}\r\n  },\r\n  \"k\": [1, 2]\r\n}\r\n",
            "{\"a\": 1, \"a\": 2, \"mcpServers\": {\"x\": {}}, \"mcpServers\": {\"y\": {}}}",
            "{\n\t\"tabs\": true\n}",
            "{\"mcpServers\" : { \"z\" : { } } , \"b\" : null }",
        ] {
            round_trip(Some(old));
        }
        // The last of duplicate `mcpServers` is the one Claude Code reads: mf's goes there.
        let with = round_trip(Some("{\"mcpServers\": {\"x\": {}}, \"mcpServers\": {}}"));
        assert!(with.starts_with("{\"mcpServers\": {\"x\": {}}, \"mcpServers\": {\"mf\""));
        // Pretty files stay pretty, in their own line ends.
        let with = round_trip(Some("{\r\n  \"a\": 1\r\n}\r\n"));
        assert!(
            with.contains("\"a\": 1,\r\n  \"mcpServers\": {\r\n    \"mf\": {"),
            "{with}"
        );
    }

    #[test]
    fn someone_elses_mf_is_refused_and_kept_and_a_moved_mf_is_mfs() {
        let e = claude_entry(MF);
        let theirs = "{\"mcpServers\": {\"mf\": {\"command\": \"mf\", \"args\": [\"mcp\"]}}}";
        assert!(add(Some(theirs), &e).unwrap_err().contains("did not write"));
        assert_eq!(remove(theirs, &e).unwrap(), Removal::Theirs);
        let moved = add(None, &claude_entry("/opt/old/mf")).unwrap();
        let now = add(Some(&moved), &e).unwrap();
        assert!(now.contains(MF) && !now.contains("/opt/old"), "{now}");
        // Changed since mf wrote it (Claude Code rewrote the file): only the member goes.
        let rewritten = "{\n  \"x\": 1,\n  \"mcpServers\": {\n    \"mf\": {\n      \"type\": \"stdio\",\n      \"command\": \"/usr/local/bin/mf\",\n      \"args\": [\"mcp\", \"--agent\", \"claude\"],\n      \"env\": {}\n    }\n  }\n}";
        assert_eq!(
            remove(rewritten, &e).unwrap(),
            Removal::Write("{\n  \"x\": 1,\n  \"mcpServers\": {\n    \n  }\n}".into())
        );
        assert_eq!(remove("{\"a\": 1}", &e).unwrap(), Removal::Absent);
        assert!(add(Some("[1]"), &e).is_err());
        assert!(add(Some("{\"mcpServers\": []}"), &e).is_err());
    }
}
