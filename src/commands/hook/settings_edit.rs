//! An agent's `settings.json` (Claude Code's, Qwen Code's: the same `hooks` layout) edited as
//! text: mf inserts its hook groups (and, for Claude Code, its permission rule) in the file's own style (indentation, line ends, compact or pretty) and, on uninstall,
//! cuts out exactly those elements with the separator that goes with them. Every other byte —
//! key order, `\u` escapes, duplicate keys, numbers too big for a float, a missing final line
//! end — stays as it was: the file is never parsed into values and written back.
//!
//! mf's hook is known by an exact marker: its command is `<mf> hook claude-code # added by mf
//! hook install`, where `<mf>` is an absolute path to a program named `mf` (a shell comment:
//! Claude Code runs the command with a shell). A hook of the user's own whose command merely
//! ends in `mf hook claude-code` is not mf's.

use serde::Serialize;
use serde_json::{Value, json};

use crate::json_span::{self, Object};

/// The agent whose settings are edited: what mf's hook is called with and where it goes.
#[derive(Debug, Clone, Copy)]
pub struct Target {
    /// The word after `mf hook` in mf's command (`claude-code`, `qwen`).
    pub hook: &'static str,
    /// The events mf's hook runs on.
    pub events: &'static [&'static str],
    /// The permission rule that lets the agent call mf's MCP tools, where it asks for one.
    pub rule: Option<&'static str>,
    /// Seconds the agent gives mf's hook, where mf sets them.
    pub timeout: Option<u64>,
    /// Whether mf's hook group carries an (empty) `matcher`.
    pub matcher: bool,
}

/// Claude Code: four events, the permission rule, a timeout, a matcher.
pub const CLAUDE: Target = Target {
    hook: "claude-code",
    events: &[
        "PreCompact",
        "PostCompact",
        "SessionStart",
        "UserPromptSubmit",
    ],
    rule: Some(RULE),
    timeout: Some(TIMEOUT_SECS),
    matcher: true,
};

/// Qwen Code: its PreCompact hook (Qwen's default timeout, no matcher).
pub const QWEN: Target = Target {
    hook: "qwen",
    events: &["PreCompact"],
    rule: None,
    timeout: None,
    matcher: false,
};
/// What ends mf's hook command: the marker uninstall knows it by.
pub const MARK: &str = "# added by mf hook install";
/// The permission rule that lets Claude Code call mf's MCP tools without asking (they only
/// read): without it, a non-interactive `claude -p` refuses the call.
pub const RULE: &str = "mcp__mf";
/// Seconds Claude Code gives mf's hook.
pub const TIMEOUT_SECS: u64 = 60;

/// The command mf's hook runs, `mf` a shell word for this mf.
pub fn command(t: &Target, mf_word: &str) -> String {
    format!("{mf_word} hook {} {MARK}", t.hook)
}

/// The command earlier versions of mf wrote (no marker): known only as this mf's, exactly.
pub fn legacy_command(t: &Target, mf_word: &str) -> String {
    format!("{mf_word} hook {}", t.hook)
}

/// A container's spans: its brackets and each element (a member from its key to its value's end).
struct Spans {
    open: usize,
    close: usize,
    items: Vec<(usize, usize)>,
}

fn of_object(o: &Object) -> Spans {
    Spans {
        open: o.open,
        close: o.close,
        items: o.members.iter().map(|m| (m.start, m.value.end)).collect(),
    }
}

fn of_array(a: &json_span::Array) -> Spans {
    Spans {
        open: a.open,
        close: a.close,
        items: a.items.iter().map(|r| (r.start, r.end)).collect(),
    }
}

/// The file's style: its line end, its indentation unit, whether it is written on one line.
struct Style {
    nl: &'static str,
    unit: String,
    compact: bool,
}

fn line_indent(text: &str, pos: usize) -> &str {
    let start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let line = &text[start..pos];
    let n = line.len() - line.trim_start_matches([' ', '\t']).len();
    &line[..n]
}

fn style(text: &str, top: &Object) -> Style {
    let nl = if text.contains("\r\n") { "\r\n" } else { "\n" };
    let Some(first) = top.members.first() else {
        return Style {
            nl,
            unit: "  ".into(),
            compact: false,
        };
    };
    let compact = !text[top.open + 1..first.start].contains('\n');
    let outer = line_indent(text, top.open).len();
    let inner = line_indent(text, first.start);
    let unit = inner.get(outer..).filter(|u| !u.is_empty()).unwrap_or("  ");
    Style {
        nl,
        unit: unit.to_string(),
        compact,
    }
}

/// `v` as JSON in the file's style, its lines after the first indented by `indent`.
fn render(v: &Value, st: &Style, indent: &str) -> String {
    if st.compact {
        return v.to_string();
    }
    let mut buf = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(st.unit.as_bytes());
    let mut ser = serde_json::Serializer::with_formatter(&mut buf, fmt);
    v.serialize(&mut ser).expect("a JSON value serializes");
    String::from_utf8(buf)
        .expect("JSON is UTF-8")
        .replace('\n', &format!("{}{indent}", st.nl))
}

/// `text` with an element inserted last in the container `sp`: after its last element with the
/// same whitespace that element has before it; in an empty one on lines of its own (pretty).
fn insert(text: &str, sp: &Spans, st: &Style, piece: impl Fn(&str) -> String) -> String {
    match sp.items.last() {
        Some(&(s, e)) => {
            let from = text[..s].trim_end_matches([' ', '\t', '\n', '\r']).len();
            let ws = &text[from..s];
            let p = piece(line_indent(text, s));
            format!("{},{ws}{p}{}", &text[..e], &text[e..])
        }
        None if st.compact => format!("{}{}{}", &text[..=sp.open], piece(""), &text[sp.close..]),
        None => {
            let indent = line_indent(text, sp.open);
            let child = format!("{indent}{}", st.unit);
            format!(
                "{}{nl}{child}{}{nl}{indent}{}",
                &text[..=sp.open],
                piece(&child),
                &text[sp.close..],
                nl = st.nl
            )
        }
    }
}

/// `text` without element `k` of `sp` and the separator that goes with it (the only element:
/// everything between the brackets).
fn cut(text: &str, sp: &Spans, k: usize) -> String {
    let (from, to) = if sp.items.len() == 1 {
        (sp.open + 1, sp.close)
    } else if k + 1 == sp.items.len() {
        (sp.items[k - 1].1, sp.items[k].1)
    } else {
        (sp.items[k].0, sp.items[k + 1].0)
    };
    format!("{}{}", &text[..from], &text[to..])
}

fn member(key: &str, v: &Value, st: &Style, indent: &str) -> String {
    let colon = if st.compact { ":" } else { ": " };
    format!("{}{colon}{}", Value::from(key), render(v, st, indent))
}

/// A shell word back to the text it stands for (as `shell_word` quotes), if it is one.
fn unquote(w: &str) -> Option<String> {
    if let Some(inner) = w.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
        return Some(inner.replace(r"'\''", "'"));
    }
    (!w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c)))
    .then(|| w.to_string())
}

/// Whether a hook object is mf's: its command carries mf's marker after an absolute path to a
/// program named `mf`, or it is exactly the hook earlier versions of this mf wrote.
fn is_mf_hook(t: &Target, h: &Value, legacy: &str) -> bool {
    let Some(c) = h.get("command").and_then(Value::as_str) else {
        return false;
    };
    if h.get("type").and_then(Value::as_str) != Some("command") {
        return false;
    }
    if let Some(w) = c.strip_suffix(&format!(" hook {} {MARK}", t.hook)) {
        return unquote(w).is_some_and(|p| {
            let p = std::path::Path::new(&p);
            p.is_absolute() && p.file_name().is_some_and(|n| n == "mf")
        });
    }
    *h == hook_object(t, legacy)
}

/// mf's hook object for `command`.
fn hook_object(t: &Target, command: &str) -> Value {
    let mut h = json!({"type": "command", "command": command});
    if let Some(secs) = t.timeout {
        h["timeout"] = json!(secs);
    }
    h
}

fn value(text: &str, r: (usize, usize)) -> Option<Value> {
    serde_json::from_str(&text[r.0..r.1]).ok()
}

/// One cut of mf's entries, if any is left: a hook group of mf's alone, a hook of mf's inside a
/// group of the user's, the permission rule. With `collapse`, a container left empty by the cut
/// goes with it (mf created it).
fn one_cut(t: &Target, text: &str, collapse: bool, legacy: &str) -> Result<Option<String>, String> {
    let top = json_span::top_object(text)?;
    let top_sp = of_object(&top);
    for (hk, hm) in top.members.iter().enumerate() {
        if hm.key == "hooks" {
            let Ok(hooks) = json_span::object_at(text, hm.value.start) else {
                continue;
            };
            let hooks_sp = of_object(&hooks);
            for (ek, em) in hooks.members.iter().enumerate() {
                if !t.events.contains(&em.key.as_str()) {
                    continue;
                }
                let Ok(arr) = json_span::array_at(text, em.value.start) else {
                    continue;
                };
                let arr_sp = of_array(&arr);
                for (gk, &g) in arr_sp.items.iter().enumerate() {
                    let Some(gv) = value(text, g) else { continue };
                    let Some(list) = gv.get("hooks").and_then(Value::as_array) else {
                        continue;
                    };
                    let mine = list.iter().filter(|h| is_mf_hook(t, h, legacy)).count();
                    if mine == 0 {
                        continue;
                    }
                    let only_mf_keys = gv
                        .as_object()
                        .is_some_and(|o| o.keys().all(|k| k == "matcher" || k == "hooks"));
                    if mine == list.len() && only_mf_keys {
                        return Ok(Some(if collapse && arr_sp.items.len() == 1 {
                            if hooks_sp.items.len() == 1 {
                                cut(text, &top_sp, hk)
                            } else {
                                cut(text, &hooks_sp, ek)
                            }
                        } else {
                            cut(text, &arr_sp, gk)
                        }));
                    }
                    // A group of the user's holding a hook of mf's: only the hook goes.
                    let go = json_span::object_at(text, g.0)?;
                    let Some((_, lm)) = go.get("hooks") else {
                        continue;
                    };
                    let inner = of_array(&json_span::array_at(text, lm.value.start)?);
                    for (k, &h) in inner.items.iter().enumerate() {
                        if value(text, h).is_some_and(|h| is_mf_hook(t, &h, legacy)) {
                            return Ok(Some(cut(text, &inner, k)));
                        }
                    }
                }
            }
        }
        if let Some(rule) = t.rule
            && hm.key == "permissions"
        {
            let Ok(perms) = json_span::object_at(text, hm.value.start) else {
                continue;
            };
            let perms_sp = of_object(&perms);
            for (ak, am) in perms.members.iter().enumerate() {
                if am.key != "allow" {
                    continue;
                }
                let Ok(arr) = json_span::array_at(text, am.value.start) else {
                    continue;
                };
                let arr_sp = of_array(&arr);
                for (k, &r) in arr_sp.items.iter().enumerate() {
                    if value(text, r) == Some(json!(rule)) {
                        return Ok(Some(if collapse && arr_sp.items.len() == 1 {
                            if perms_sp.items.len() == 1 {
                                cut(text, &top_sp, hk)
                            } else {
                                cut(text, &perms_sp, ak)
                            }
                        } else {
                            cut(text, &arr_sp, k)
                        }));
                    }
                }
            }
        }
    }
    Ok(None)
}

/// `text` without mf's entries (see [`one_cut`]).
pub fn remove(t: &Target, text: &str, collapse: bool, legacy: &str) -> Result<String, String> {
    let mut text = text.to_string();
    while let Some(cut) = one_cut(t, &text, collapse, legacy)? {
        text = cut;
    }
    Ok(text)
}

/// The hook group mf adds to each event.
fn group(t: &Target, command: &str) -> Value {
    if t.matcher {
        json!({"matcher": "", "hooks": [hook_object(t, command)]})
    } else {
        json!({"hooks": [hook_object(t, command)]})
    }
}

/// The settings file mf writes where there is none.
pub fn template(t: &Target, command: &str, legacy: &str) -> String {
    add(t, Some("{}\n"), command, legacy).expect("mf's own file")
}

/// Claude Code's settings (`None`: no file) with mf's hooks and permission rule: any of mf's
/// already there taken out first, then inserted last in their containers.
pub fn add(t: &Target, old: Option<&str>, command: &str, legacy: &str) -> Result<String, String> {
    let Some(old) = old.filter(|x| !x.trim().is_empty()) else {
        return Ok(template(t, command, legacy));
    };
    let mut text = remove(t, old, false, legacy)?;
    let top = json_span::top_object(&text)?;
    let st = style(&text, &top);
    let rule = t.rule.unwrap_or_default();
    match top.get("permissions") {
        _ if t.rule.is_none() => {}
        None => {
            text = insert(&text, &of_object(&top), &st, |i| {
                member("permissions", &json!({"allow": [rule]}), &st, i)
            })
        }
        Some((_, m)) => {
            let perms = json_span::object_at(&text, m.value.start)
                .map_err(|_| "its `permissions` is not an object".to_string())?;
            match perms.get("allow") {
                None => {
                    text = insert(&text, &of_object(&perms), &st, |i| {
                        member("allow", &json!([rule]), &st, i)
                    })
                }
                Some((_, a)) => {
                    let arr = json_span::array_at(&text, a.value.start)
                        .map_err(|_| "its `permissions.allow` is not an array".to_string())?;
                    let sp = of_array(&arr);
                    if !sp
                        .items
                        .iter()
                        .any(|&r| value(&text, r) == Some(json!(rule)))
                    {
                        text = insert(&text, &sp, &st, |_| Value::from(rule).to_string());
                    }
                }
            }
        }
    }
    let g = group(t, command);
    let top = json_span::top_object(&text)?;
    let Some((_, hm)) = top.get("hooks") else {
        let all: serde_json::Map<String, Value> = t
            .events
            .iter()
            .map(|e| (e.to_string(), json!([g.clone()])))
            .collect();
        return Ok(insert(&text, &of_object(&top), &st, |i| {
            member("hooks", &Value::Object(all.clone()), &st, i)
        }));
    };
    let hooks_at = hm.value.start;
    for &event in t.events {
        let hooks = json_span::object_at(&text, hooks_at)
            .map_err(|_| "its `hooks` is not an object".to_string())?;
        text = match hooks.get(event) {
            None => insert(&text, &of_object(&hooks), &st, |i| {
                member(event, &json!([g.clone()]), &st, i)
            }),
            Some((_, em)) => {
                let arr = json_span::array_at(&text, em.value.start)
                    .map_err(|_| format!("its `hooks.{event}` is not an array"))?;
                insert(&text, &of_array(&arr), &st, |i| render(&g, &st, i))
            }
        };
    }
    Ok(text)
}

/// Whether `text` already has mf's hook (this command) on every event and the rule, as Claude
/// Code reads it (the last of duplicate keys).
pub fn installed(t: &Target, text: &str, command: &str) -> bool {
    let Ok(top) = json_span::top_object(text) else {
        return false;
    };
    let g = group(t, command);
    let get_obj = |o: &Object, k: &str| {
        o.get(k)
            .and_then(|(_, m)| json_span::object_at(text, m.value.start).ok())
    };
    let get_arr = |o: &Object, k: &str| {
        o.get(k)
            .and_then(|(_, m)| json_span::array_at(text, m.value.start).ok())
    };
    let rule = t.rule.is_none_or(|rule| {
        get_obj(&top, "permissions")
            .and_then(|p| get_arr(&p, "allow"))
            .is_some_and(|a| {
                a.items
                    .iter()
                    .any(|r| value(text, (r.start, r.end)) == Some(json!(rule)))
            })
    });
    let Some(hooks) = get_obj(&top, "hooks") else {
        return false;
    };
    rule && t.events.iter().all(|e| {
        get_arr(&hooks, e).is_some_and(|a| {
            a.items
                .iter()
                .any(|r| value(text, (r.start, r.end)).as_ref() == Some(&g))
        })
    })
}

/// Whether `text` holds any entry of mf's.
pub fn has_mf(t: &Target, text: &str, legacy: &str) -> Result<bool, String> {
    Ok(one_cut(t, text, false, legacy)?.is_some())
}

/// The ways to cut one empty container mf may have created: an event's array or `hooks`, an
/// `allow` array or `permissions`.
fn empty_cuts(t: &Target, text: &str) -> Vec<String> {
    let Ok(top) = json_span::top_object(text) else {
        return Vec::new();
    };
    let top_sp = of_object(&top);
    let mut out = Vec::new();
    for (k, m) in top.members.iter().enumerate() {
        let inner = match m.key.as_str() {
            "hooks" => t.events,
            "permissions" if t.rule.is_some() => &["allow"][..],
            _ => continue,
        };
        let Ok(obj) = json_span::object_at(text, m.value.start) else {
            continue;
        };
        if obj.members.is_empty() {
            out.push(cut(text, &top_sp, k));
        }
        let sp = of_object(&obj);
        for (j, im) in obj.members.iter().enumerate() {
            if inner.contains(&im.key.as_str())
                && json_span::array_at(text, im.value.start).is_ok_and(|a| a.items.is_empty())
            {
                out.push(cut(text, &sp, j));
            }
        }
    }
    out
}

/// The file before `mf hook install` turned it into `text`, as far as the text tells: mf's
/// entries cut out, and each container mf created with them (one left empty whose cut install
/// would undo byte for byte); when `text` was changed since, only mf's entries and the
/// containers they leave empty.
pub fn before(t: &Target, text: &str, command: &str, legacy: &str) -> Result<String, String> {
    let mut cur = remove(t, text, false, legacy)?;
    if add(t, Some(&cur), command, legacy).as_deref() != Ok(text) {
        return remove(t, text, true, legacy);
    }
    'more: loop {
        for cand in empty_cuts(t, &cur) {
            if add(t, Some(&cand), command, legacy).as_deref() == Ok(text) {
                cur = cand;
                continue 'more;
            }
        }
        return Ok(cur);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMD: &str = "/usr/bin/mf hook claude-code # added by mf hook install";
    const LEGACY: &str = "/usr/bin/mf hook claude-code";

    #[test]
    fn install_then_uninstall_is_byte_exact_in_every_style() {
        for old in [
            "{}",
            "{}\n",
            "{\n  \"model\": \"opus\"\n}\n",
            "{\"model\":\"opus\"}",
            "{\r\n  \"a\": \"\\u00e9\",\r\n  \"n\": 123456789012345678901234567890\r\n}\r\n",
            "{\n\t\"a\": 1,\n\t\"a\": 2\n}",
            "{\n  \"hooks\": {\n    \"PreCompact\": [\n      {\"matcher\": \"auto\", \"hooks\": [{\"type\": \"command\", \"command\": \"/opt/mf hook claude-code\"}]}\n    ]\n  },\n  \"permissions\": {\"allow\": []}\n}\n",
            "{\"hooks\": {}, \"permissions\": {\"deny\": [\"x\"]}}",
        ] {
            let with = add(&CLAUDE, Some(old), CMD, LEGACY).unwrap();
            assert!(installed(&CLAUDE, &with, CMD), "{with}");
            assert_eq!(
                add(&CLAUDE, Some(&with), CMD, LEGACY).unwrap(),
                with,
                "idempotent"
            );
            let v: Value = serde_json::from_str(&with).unwrap_or_else(|e| panic!("{e}: {with}"));
            assert_eq!(
                v["hooks"]["PreCompact"].as_array().unwrap().last().unwrap()["hooks"][0]["command"],
                CMD
            );
            assert_eq!(before(&CLAUDE, &with, CMD, LEGACY).unwrap(), old, "{with}");
            if old.contains("\r\n") {
                assert!(!with.replace("\r\n", "").contains('\n'), "{with}");
            }
        }
        let t = template(&CLAUDE, CMD, LEGACY);
        assert!(t.ends_with("}\n") && installed(&CLAUDE, &t, CMD), "{t}");
    }

    #[test]
    fn only_hooks_with_the_marker_are_mf_s() {
        let user = "{\"hooks\": {\"PreCompact\": [{\"matcher\": \"\", \"hooks\": [{\"type\": \"command\", \"command\": \"wrap mf hook claude-code\"}, {\"type\": \"command\", \"command\": \"/opt/x/mf hook claude-code\", \"timeout\": 60}]}]}}";
        assert!(!has_mf(&CLAUDE, user, LEGACY).unwrap());
        let with = add(&CLAUDE, Some(user), CMD, LEGACY).unwrap();
        assert_eq!(before(&CLAUDE, &with, CMD, LEGACY).unwrap(), user);
        // A moved mf's marked hook is mf's; an earlier version's is mf's only exactly.
        let moved = add(
            &CLAUDE,
            Some("{}"),
            "'/a b/mf' hook claude-code # added by mf hook install",
            LEGACY,
        )
        .unwrap();
        assert_eq!(remove(&CLAUDE, &moved, true, LEGACY).unwrap(), "{}");
        let old = format!(
            "{{\"hooks\": {{\"PreCompact\": [{}]}}}}",
            group(&CLAUDE, LEGACY)
        );
        assert_eq!(remove(&CLAUDE, &old, true, LEGACY).unwrap(), "{}");
    }

    /// Qwen Code's settings: only its PreCompact hook (no matcher, no timeout, no permission
    /// rule), and the file back byte for byte, a user's own PreCompact hook and permissions kept.
    #[test]
    fn qwen_s_hook_goes_in_and_out_byte_exact() {
        const Q: &str = "/usr/bin/mf hook qwen # added by mf hook install";
        const QL: &str = "/usr/bin/mf hook qwen";
        for old in [
            "{}\n",
            "{\n  \"model\": {\"name\": \"qwen3-coder\"},\n  \"permissions\": {\"allow\": [\"x\"]}\n}\n",
            "{\"hooks\": {\"PreCompact\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"echo mine\"}]}]}}",
        ] {
            let with = add(&QWEN, Some(old), Q, QL).unwrap();
            assert!(installed(&QWEN, &with, Q), "{with}");
            let v: Value = serde_json::from_str(&with).unwrap();
            let groups = v["hooks"]["PreCompact"].as_array().unwrap();
            assert_eq!(
                groups.last().unwrap(),
                &json!({"hooks": [{"type": "command", "command": Q}]})
            );
            assert!(v["hooks"].get("SessionStart").is_none(), "{with}");
            assert!(!with.contains("mcp__mf"), "{with}");
            assert_eq!(before(&QWEN, &with, Q, QL).unwrap(), old, "{with}");
            // Claude Code's rules do not see Qwen's hook as theirs, nor the other way round.
            assert!(!has_mf(&CLAUDE, &with, LEGACY).unwrap());
        }
    }
}
