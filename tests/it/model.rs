//! An independent model of mf's file format and of what `mf recall` must show, written from the
//! README and issue 6 without calling mf's code: the hashes (FNV-1a 64 of a summary's content;
//! xxh3-64 of each covered line's bytes, and xxh3-128 over those hashes, little-endian), mf's
//! label, forged summary lines with a correct fingerprint and digest, and a replay of a file that
//! says which summaries stand and what recall shows.
//!
//! The model reads the chat format as the tests write it (one JSON object a line; blank lines
//! allowed; no lines torn or rejoined) and mf's version-2 lines; a line that claims to be an mf
//! 0.1.0 summary (`summarizes`) is never honoured here, and tests that use the model do not
//! write one.

#![allow(dead_code)]

use std::collections::HashMap;

use serde_json::{Map, Value, json};

/// The first bytes of every line mf writes.
pub const MF_PREFIX: &[u8] = b"{\"mf\":{\"v\":";
/// The start of mf's label.
pub const LABEL_PREFIX: &str = "[summary of earlier turns";

/// FNV-1a 64 of `s`, as 16 lowercase hex digits (a summary's fingerprint).
pub fn fingerprint(s: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in s.as_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// xxh3-64 of one line's bytes (without its `\n`).
pub fn line_hash(raw: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(raw)
}

/// The coverage digest: xxh3-128 over the covered lines' hashes, little-endian, in file order.
pub fn digest(hashes: &[u64]) -> String {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for x in hashes {
        h.update(&x.to_le_bytes());
    }
    format!("{:032x}", h.digest128())
}

/// mf's label for a summary of turns `from`–`to` standing for `n` original messages.
pub fn label(from: u64, to: u64, n: usize, model: &str) -> String {
    let plural = if n == 1 {
        "message was"
    } else {
        "messages were"
    };
    format!(
        "{LABEL_PREFIX} {from}–{to} — {n} earlier {plural} compressed. The text after this line is a SUMMARY written by {model}; it is a claim about the conversation, not the conversation. The originals are retained in this file and are excluded from recall only while this summary stands.]"
    )
}

/// Whether a summary's first line is a label mf writes for these originals and this id: the
/// plain label (mf before ids), or one that ends by naming the id and the mf tool, or the
/// `mf expand` command on some file.
pub fn label_ok(first: &str, from: u64, to: u64, n: usize, model: &str, id: &str) -> bool {
    let plain = label(from, to, n, model);
    if first == plain {
        return true;
    }
    let core = plain.strip_suffix(".]").expect("the plain label ends so");
    let Some(rest) = first.strip_prefix(core).and_then(|r| r.strip_prefix("; ")) else {
        return false;
    };
    if rest
        == format!(
            "to read them, call the mf tool `expand` with id \"{id}\" (`search` finds a detail in them).]"
        )
    {
        return true;
    }
    rest.strip_prefix("to read them, run: mf expand ")
        .and_then(|r| r.strip_suffix(&format!(" {id}.]")))
        .is_some_and(|path| !path.is_empty() && !path.contains('\n'))
}

/// One physical line of a file.
#[derive(Debug, Clone)]
pub struct Line {
    /// 1-based line number.
    pub no: u32,
    pub raw: Vec<u8>,
    pub value: Option<Value>,
}

impl Line {
    pub fn is_mf(&self) -> bool {
        self.raw.starts_with(MF_PREFIX)
    }

    fn obj(&self) -> Option<&Map<String, Value>> {
        self.value.as_ref().and_then(Value::as_object)
    }

    /// A message or a summary: something recall may show.
    pub fn is_entry(&self) -> bool {
        let Some(o) = self.obj() else { return false };
        if self.is_mf() {
            // A line of a version or kind this mf does not know is kept and ignored.
            o["mf"]["v"] == 2 && matches!(o["mf"]["kind"].as_str(), Some("summary" | "stub"))
        } else {
            o.get("role").and_then(Value::as_str).is_some() && !o.contains_key("mfRecord")
        }
    }

    pub fn role(&self) -> &str {
        self.obj()
            .and_then(|o| o.get("role"))
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// A real user message: it starts a turn. mf's own lines never do.
    pub fn starts_turn(&self) -> bool {
        self.is_entry() && !self.is_mf() && self.role() == "user"
    }

    pub fn content(&self) -> Option<&str> {
        self.obj()
            .and_then(|o| o.get("content"))
            .and_then(Value::as_str)
    }

    fn call_ids(&self) -> Vec<String> {
        self.obj()
            .and_then(|o| o.get("tool_calls"))
            .and_then(Value::as_array)
            .map(|calls| {
                calls
                    .iter()
                    .filter_map(|c| c.get("id").and_then(Value::as_str))
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }

    fn answers(&self) -> Option<String> {
        if self.role() != "tool" {
            return None;
        }
        self.obj()
            .and_then(|o| o.get("tool_call_id"))
            .and_then(Value::as_str)
            .map(str::to_string)
    }

    /// The chat message recall prints for an ordinary entry.
    pub fn chat_message(&self) -> Value {
        let o = self.obj().expect("an entry is an object");
        let mut out = Map::new();
        out.insert(
            "role".into(),
            o.get("role").cloned().unwrap_or(Value::from("system")),
        );
        out.insert(
            "content".into(),
            o.get("content").cloned().unwrap_or(Value::Null),
        );
        for key in ["name", "tool_calls", "tool_call_id", "function_call"] {
            if let Some(v) = o.get(key)
                && !v.is_null()
            {
                out.insert(key.into(), v.clone());
            }
        }
        Value::Object(out)
    }
}

/// Split a file into lines (a last line without a newline counts; blank lines are kept, parsed
/// as nothing), recovering what mf documents it recovers: a torn mf line is skipped and a line
/// glued after it is read; another writer's line interrupted by mf's (`{"role":…{"mf":…}` then
/// the rest on the next line) yields mf's line at the line where the interruption began, then
/// the rejoined line at the line that holds its rest.
pub fn lines_of(bytes: &[u8]) -> Vec<Line> {
    fn object(b: &[u8]) -> Option<Value> {
        serde_json::from_slice::<Value>(b)
            .ok()
            .filter(Value::is_object)
    }
    let mut out = Vec::new();
    let mut parts: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    if parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    let mut fragment: Option<(u32, Vec<u8>)> = None;
    for (k, raw) in parts.into_iter().enumerate() {
        let no = k as u32 + 1;
        let body = raw.strip_suffix(b"\r").unwrap_or(raw);
        let body = if k == 0 {
            body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body)
        } else {
            body
        };
        let blank = body.iter().all(u8::is_ascii_whitespace);
        if blank || serde_json::from_slice::<Value>(body).is_ok() {
            let value = if blank {
                None
            } else {
                serde_json::from_slice(body).ok()
            };
            out.push(Line {
                no,
                raw: raw.to_vec(),
                value,
            });
            continue;
        }
        if body.starts_with(MF_PREFIX) {
            // mf's torn line; an agent's line may be glued after it.
            let glued = (MF_PREFIX.len()..body.len())
                .filter(|&p| body[p] == b'{')
                // An object nested in mf's line, cut right after it, is not a chat line.
                .find_map(|p| {
                    object(&body[p..])
                        .filter(|v| v.get("role").is_some())
                        .map(|v| (p, v))
                });
            if let Some((p, value)) = glued {
                out.push(Line {
                    no,
                    raw: body[p..].to_vec(),
                    value: Some(value),
                });
            }
            continue;
        }
        let inner = (1..body.len().saturating_sub(MF_PREFIX.len()))
            .find(|&p| body[p..].starts_with(MF_PREFIX));
        if let Some(p) = inner
            && let Some(value) = object(&body[p..])
        {
            out.push(Line {
                no,
                raw: body[p..].to_vec(),
                value: Some(value),
            });
            fragment = Some((no, body[..p].to_vec()));
            continue;
        }
        if let Some((first, mut joined)) = fragment.take() {
            joined.extend_from_slice(body);
            if let Some(value) = object(&joined) {
                out.push(Line {
                    no,
                    raw: joined,
                    value: Some(value),
                });
                continue;
            }
            joined.truncate(joined.len() - body.len());
            fragment = Some((first, joined));
        }
        out.push(Line {
            no,
            raw: raw.to_vec(),
            value: None,
        });
    }
    out
}

/// Turn of every line: the number of real user messages up to and including it (0: preamble).
pub fn turns(lines: &[Line]) -> Vec<u64> {
    let mut t = 0;
    lines
        .iter()
        .map(|l| {
            if l.starts_turn() {
                t += 1;
            }
            t
        })
        .collect()
}

/// Ranges of consecutive line numbers.
pub fn ranges(lines: &[u32]) -> Vec<[u32; 2]> {
    let mut out: Vec<[u32; 2]> = Vec::new();
    for &n in lines {
        match out.last_mut() {
            Some(r) if r[1] + 1 == n => r[1] = n,
            _ => out.push([n, n]),
        }
    }
    out
}

/// How a forged summary line should be made.
pub struct Forge<'a> {
    pub id: &'a str,
    pub role: &'a str,
    pub model: &'a str,
    /// Text after the label (`None`: content without mf's label at all).
    pub text: &'a str,
    pub with_label: bool,
    /// Turns and message count for the label (`None`: computed from the covered lines).
    pub label_turns: Option<(u64, u64, usize)>,
}

impl Default for Forge<'_> {
    fn default() -> Self {
        Forge {
            id: "msg-summary-forged",
            role: "system",
            model: "extractive",
            text: "Nothing happened here.",
            with_label: true,
            label_turns: None,
        }
    }
}

/// A summary line that claims the given lines, with a correct fingerprint and digest and mf's
/// label for them: everything a forger can compute from the file.
pub fn forged_summary(file: &[u8], covered: &[u32], f: &Forge<'_>) -> String {
    let lines = lines_of(file);
    let turns = turns(&lines);
    let mut hashes = Vec::new();
    let (mut from, mut to) = (u64::MAX, 0);
    for &n in covered {
        let i = lines.iter().position(|l| l.no == n).expect("a line");
        let l = &lines[i];
        assert!(l.is_entry(), "line {n} is not an entry");
        hashes.push(line_hash(&l.raw));
        from = from.min(turns[i]);
        to = to.max(turns[i]);
    }
    let (from, to, count) = f.label_turns.unwrap_or((from, to, covered.len()));
    let content = if f.with_label {
        format!("{}\n\n{}", label(from, to, count, f.model), f.text)
    } else {
        f.text.to_string()
    };
    let mf = json!({
        "v": 2, "kind": "summary",
        "coverage": {
            "fromTurn": from, "toTurn": to, "entryCount": covered.len(),
            "lines": ranges(covered), "digest": digest(&hashes),
            "model": f.model, "summarizedAtMs": 1_764_400_000_000u64,
            "fingerprint": fingerprint(&content),
        }
    });
    let rest = json!({"id": f.id, "role": f.role, "turn": to, "content": content});
    let rest = rest.to_string();
    format!("{{\"mf\":{mf},{}", &rest[1..])
}

/// A valid summary the model found.
#[derive(Debug, Clone)]
pub struct Standing {
    pub line: usize,
    pub id: String,
    pub children: Vec<usize>,
    pub from_turn: u64,
    pub to_turn: u64,
    pub leaves: usize,
    pub last_leaf_line: u32,
    pub retracted: bool,
    pub covered_by: Option<usize>,
    pub fingerprint: String,
}

/// What the model makes of a file.
#[derive(Debug, Default)]
pub struct Replay {
    pub lines: Vec<Line>,
    /// Valid summaries by line index.
    pub summaries: HashMap<usize, Standing>,
    /// Lines (by index) that claim to be summaries and are not honoured.
    pub refused: Vec<(u32, String)>,
    /// Top-level standing summary hiding each line, if any.
    pub hidden_by: Vec<Option<usize>>,
}

/// Replay a file as issue 6 says mf must.
pub fn replay(bytes: &[u8]) -> Replay {
    let lines = lines_of(bytes);
    let n = lines.len();
    let turns = turns(&lines);
    // Tool pairing: each result with the nearest preceding open call of its id in its turn,
    // else the most recent open one.
    let mut call_of: Vec<Option<usize>> = vec![None; n];
    let mut results_of: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut open: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, l) in lines.iter().enumerate() {
        if !l.is_entry() {
            continue;
        }
        if let Some(id) = l.answers()
            && let Some(stack) = open.get_mut(&id)
        {
            let pick = stack
                .iter()
                .rposition(|&c| turns[c] == turns[i])
                .or_else(|| stack.len().checked_sub(1));
            if let Some(k) = pick {
                let c = stack.remove(k);
                call_of[i] = Some(c);
                results_of[c].push(i);
            }
        }
        for id in l.call_ids() {
            open.entry(id).or_default().push(i);
        }
    }
    let mut r = Replay {
        hidden_by: vec![None; n],
        ..Replay::default()
    };
    let mut parent: Vec<Option<usize>> = vec![None; n];
    for i in 0..n {
        let l = &lines[i];
        let Some(o) = l.obj() else { continue };
        if l.is_mf() && o["mf"]["kind"] == "retract" {
            retract(&mut r, &mut parent, &o["mf"]);
            continue;
        }
        let claims = l.is_mf() && l.is_entry();
        let legacy = !l.is_mf()
            && l.is_entry()
            && (o.contains_key("summarizes")
                || l.content().is_some_and(|c| c.starts_with(LABEL_PREFIX)));
        if legacy {
            r.refused.push((l.no, "look-alike or mf 0.1.0 line".into()));
            continue;
        }
        if !claims {
            continue;
        }
        match check(&lines, &turns, &call_of, &results_of, &r, &parent, i) {
            Ok(s) => {
                for &c in &s.children {
                    parent[c] = Some(i);
                    if let Some(inner) = r.summaries.get_mut(&c) {
                        inner.covered_by = Some(i);
                    }
                }
                r.summaries.insert(i, s);
            }
            Err(why) => r.refused.push((l.no, why)),
        }
    }
    for i in 0..n {
        let mut top = None;
        let mut j = i;
        while let Some(p) = parent[j] {
            top = Some(p);
            j = p;
        }
        r.hidden_by[i] = top;
    }
    r.lines = lines;
    r
}

fn retract(r: &mut Replay, parent: &mut [Option<usize>], mf: &Value) {
    let (Some(id), Some(fp)) = (mf["summaryId"].as_str(), mf["fingerprint"].as_str()) else {
        return;
    };
    // The latest standing summary with that id and fingerprint.
    let target = r
        .summaries
        .values()
        .filter(|s| s.id == id && !s.retracted && s.fingerprint == fp)
        .map(|s| s.line)
        .max();
    let Some(s) = target else { return };
    if let Some(outer) = r.summaries[&s].covered_by
        && !r.summaries[&outer].retracted
    {
        return;
    }
    for c in r.summaries[&s].children.clone() {
        parent[c] = None;
        if let Some(inner) = r.summaries.get_mut(&c) {
            inner.covered_by = None;
        }
    }
    r.summaries.get_mut(&s).unwrap().retracted = true;
}

#[allow(clippy::too_many_arguments)]
fn check(
    lines: &[Line],
    turns: &[u64],
    call_of: &[Option<usize>],
    results_of: &[Vec<usize>],
    r: &Replay,
    parent: &[Option<usize>],
    s: usize,
) -> Result<Standing, String> {
    let l = &lines[s];
    let o = l.obj().unwrap();
    let mf = &o["mf"];
    if mf["v"] != 2 || mf["kind"] != "summary" {
        return Err("not a version-2 summary".into());
    }
    let cov = mf["coverage"].as_object().ok_or("no coverage")?;
    let allowed = [
        "fromTurn",
        "toTurn",
        "entryCount",
        "lines",
        "digest",
        "tailLine",
        "keptResults",
        "model",
        "summarizedAtMs",
        "usage",
        "fingerprint",
    ];
    if cov.keys().any(|k| !allowed.contains(&k.as_str())) {
        return Err("unknown coverage field".into());
    }
    for k in ["fromTurn", "toTurn", "entryCount", "summarizedAtMs"] {
        if !cov.get(k).is_some_and(Value::is_u64) {
            return Err(format!("coverage {k} missing"));
        }
    }
    let model = cov.get("model").and_then(Value::as_str).ok_or("no model")?;
    let fp = cov
        .get("fingerprint")
        .and_then(Value::as_str)
        .ok_or("no fingerprint")?;
    let want_digest = cov
        .get("digest")
        .and_then(Value::as_str)
        .ok_or("no digest")?;
    if l.role() != "system" {
        return Err("role is not system".into());
    }
    let id = o.get("id").and_then(Value::as_str).unwrap_or("");
    if id.is_empty() {
        return Err("no id".into());
    }
    let content = l.content().ok_or("content is not a string")?;
    if fingerprint(content) != fp {
        return Err("fingerprint mismatch (edited)".into());
    }
    // Coverage: the entries on the lines of its ranges, in order, before it.
    let ranges: Vec<[u32; 2]> = cov
        .get("lines")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .ok_or("bad ranges")?;
    let here = l.no;
    let mut children = Vec::new();
    let mut prev_end = 0;
    for (k, &[a, b]) in ranges.iter().enumerate() {
        if a > b || (k > 0 && a <= prev_end) || b >= here {
            return Err("ranges out of order or not before it".into());
        }
        prev_end = b;
        let inside: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].no >= a && lines[i].no <= b && lines[i].is_entry())
            .collect();
        if inside.is_empty() {
            return Err("an empty range".into());
        }
        children.extend(inside);
    }
    if children.is_empty() {
        return Err("covers nothing".into());
    }
    if cov["entryCount"].as_u64() != Some(children.len() as u64) {
        return Err("stale: entry count".into());
    }
    let hashes: Vec<u64> = children.iter().map(|&c| line_hash(&lines[c].raw)).collect();
    if digest(&hashes) != want_digest {
        return Err("stale: digest".into());
    }
    for &c in &children {
        let inner = r.summaries.get(&c);
        if turns[c] == 0 && inner.is_none() {
            return Err("covers the preamble".into());
        }
        if parent[c].is_some() {
            return Err("covers what another standing summary stands for".into());
        }
        if inner.is_some_and(|s| s.retracted) {
            return Err("covers a retracted summary".into());
        }
    }
    let covers = |mut j: usize| loop {
        if children.contains(&j) {
            return true;
        }
        match parent[j] {
            Some(p) => j = p,
            None => return false,
        }
    };
    for &c in &children {
        if r.summaries.contains_key(&c) {
            continue;
        }
        if let Some(k) = call_of[c]
            && !covers(k)
        {
            return Err("a tool result without its call".into());
        }
        if results_of[c].iter().any(|&j| !covers(j)) {
            return Err("a tool call without its result".into());
        }
    }
    // A question is never summarized while its answer stays raw: a turn whose prompt it covers
    // is covered whole (or, with no strategy recorded beside it, by the summaries after it).
    let recorded = mf.get("strategy").is_some();
    let later_covers = |no: u32| {
        lines[s + 1..].iter().any(|l| {
            l.is_mf()
                && l.obj()
                    .and_then(|o| o["mf"]["coverage"]["lines"].as_array())
                    .is_some_and(|rs| {
                        rs.iter().any(|r| {
                            let (a, b) = (r[0].as_u64().unwrap_or(0), r[1].as_u64().unwrap_or(0));
                            (a..=b).contains(&u64::from(no))
                        })
                    })
        })
    };
    for j in 0..s {
        if !lines[j].starts_turn() || !covers(j) {
            continue;
        }
        for k in j + 1..s {
            if turns[k] != turns[j] {
                break;
            }
            let e = &lines[k];
            if e.is_entry()
                && !e.is_mf()
                && parent[k].is_none()
                && !covers(k)
                // A tool result stays with its call: one whose call stays raw (pinned before
                // the conversation) is not the question's answer left out.
                && call_of[k].is_none_or(&covers)
                && (recorded || !later_covers(e.no))
            {
                return Err("covers a question but not its answer".into());
            }
        }
    }
    let (mut from, mut to, mut leaves, mut last_leaf) = (u64::MAX, 0, 0, 0u32);
    for &c in &children {
        match r.summaries.get(&c) {
            Some(inner) => {
                from = from.min(inner.from_turn);
                to = to.max(inner.to_turn);
                leaves += inner.leaves;
                last_leaf = last_leaf.max(inner.last_leaf_line);
            }
            None => {
                from = from.min(turns[c]);
                to = to.max(turns[c]);
                leaves += 1;
                last_leaf = last_leaf.max(lines[c].no);
            }
        }
    }
    // Whether the turn of line `k` keeps its prompt verbatim (a turn folded inside).
    let prompt_kept = |k: usize| {
        (0..=k)
            .rev()
            .take_while(|&i| turns[i] == turns[k])
            .find(|&i| lines[i].starts_turn())
            .is_some_and(|i| !covers(i))
    };
    // A whole turn the agent sees must follow what it covers, or (a turn too large for the
    // verbatim tail, folded inside) the newest part of that turn, with the prompt that opened it.
    let tail =
        lines.iter().enumerate().any(|(j, e)| {
            e.no > last_leaf && e.no < here && e.starts_turn() && parent[j].is_none()
        }) || lines
            .iter()
            .enumerate()
            .find(|(j, e)| {
                e.no > last_leaf
                    && e.no < here
                    && e.is_entry()
                    && !e.is_mf()
                    && parent[*j].is_none()
            })
            .is_some_and(|(k, _)| prompt_kept(k));
    if !tail {
        return Err("covers the most recent turn".into());
    }
    if let Some(t) = cov.get("tailLine").and_then(Value::as_u64) {
        let t = t as u32;
        // A user message, or a place inside a turn whose prompt it leaves verbatim (a chunk
        // of a turn too long for one call).
        let ok = t > last_leaf
            && t < here
            && lines
                .iter()
                .position(|e| e.no == t && e.is_entry())
                .is_some_and(|k| {
                    let e = &lines[k];
                    (!e.is_mf() && e.role() == "user") || prompt_kept(k)
                });
        if !ok {
            return Err("its recorded verbatim tail is not a turn after it".into());
        }
    }
    let first = content.split('\n').next().unwrap_or("");
    if !label_ok(first, from, to, leaves, model, id) {
        return Err("label does not match".into());
    }
    Ok(Standing {
        line: s,
        id: id.to_string(),
        children,
        from_turn: from,
        to_turn: to,
        leaves,
        last_leaf_line: last_leaf,
        retracted: false,
        covered_by: None,
        fingerprint: fp.to_string(),
    })
}

impl Replay {
    /// Top-level standing summaries (by line index).
    pub fn top_level(&self) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .summaries
            .values()
            .filter(|s| !s.retracted && s.covered_by.is_none())
            .map(|s| s.line)
            .collect();
        v.sort_unstable();
        v
    }

    /// What `mf recall` (chat format) must print: standing summaries ordered by the turns they
    /// cover, then every entry no standing summary hides, in file order.
    pub fn recall(&self) -> Vec<Value> {
        let mut sums: Vec<&Standing> = self
            .top_level()
            .into_iter()
            .map(|i| &self.summaries[&i])
            .collect();
        sums.sort_by_key(|s| (s.from_turn, s.to_turn, s.line));
        let mut out: Vec<Value> = sums
            .iter()
            .map(|s| json!({"role": "system", "content": self.lines[s.line].content().unwrap()}))
            .collect();
        for (i, l) in self.lines.iter().enumerate() {
            if !l.is_entry() || self.hidden_by[i].is_some() || self.summaries.contains_key(&i) {
                continue;
            }
            out.push(l.chat_message());
        }
        out
    }

    /// Line numbers hidden from recall.
    pub fn hidden_lines(&self) -> Vec<u32> {
        (0..self.lines.len())
            .filter(|&i| self.hidden_by[i].is_some())
            .map(|i| self.lines[i].no)
            .collect()
    }
}
