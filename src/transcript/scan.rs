//! `scan`: every physical line of a file looked at on its own, whatever the format's reader makes
//! of it — for `mf verify`, which must see what an adapter skips: a line that is not UTF-8 or
//! not JSON (which an agent's own reader fails on or drops), and a line that carries an `mf`
//! object but is not in the exact shape mf writes (re-serialized by another program, or forged).

use std::io::{BufRead, BufReader};
use std::path::Path;

use super::wire::MF_PREFIX;

/// What is wrong with one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIssue {
    /// 1-based physical line.
    pub line: u32,
    /// `not-utf8`, `not-json` or `reshaped-mf-line`.
    pub kind: &'static str,
    pub what: String,
}

/// Every complete line of `path` (a last line without a newline is the reader's business).
pub fn scan(path: &Path) -> std::io::Result<Vec<LineIssue>> {
    let mut r = BufReader::with_capacity(1 << 20, std::fs::File::open(path)?);
    let mut out = Vec::new();
    let mut buf = Vec::new();
    let mut line = 0u32;
    loop {
        buf.clear();
        if r.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        let Some(body) = buf.strip_suffix(b"\n") else {
            break;
        };
        line += 1;
        let body = body.strip_suffix(b"\r").unwrap_or(body);
        let body = if line == 1 {
            body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body)
        } else {
            body
        };
        if let Some(issue) = judge(body) {
            out.push(LineIssue {
                line,
                kind: issue.0,
                what: issue.1,
            });
        }
    }
    Ok(out)
}

fn judge(body: &[u8]) -> Option<(&'static str, String)> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    if let Err(e) = std::str::from_utf8(body) {
        return Some((
            "not-utf8",
            format!(
                "not valid UTF-8 (byte {}); an agent's reader fails on it or drops it",
                e.valid_up_to() + 1
            ),
        ));
    }
    let v = match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(v) => v,
        // JSON.parse (every agent's reader) accepts a lone surrogate; serde does not, so such a
        // line is judged as mf reads it, with U+FFFD in the surrogate's place.
        Err(_)
            if super::json::lone_surrogates_replaced(body)
                .is_some_and(|b| serde_json::from_slice::<serde_json::Value>(&b).is_ok()) =>
        {
            return None;
        }
        Err(e) => {
            let mf_inside = memchr::memmem::find(body, MF_PREFIX).is_some();
            return Some((
                "not-json",
                format!(
                    "not a JSON line ({}, column {}){}; an agent's reader fails on it or drops it",
                    e.to_string().split(" at line ").next().unwrap_or_default(),
                    e.column(),
                    if mf_inside {
                        "; it holds something shaped like an mf line, which is not read as one"
                    } else {
                        ""
                    }
                ),
            ));
        }
    };
    if v.get("mf").is_some_and(serde_json::Value::is_object) && !body.starts_with(MF_PREFIX) {
        return Some((
            "reshaped-mf-line",
            "carries an mf object but is not in the exact shape mf writes (re-serialized or edited by another program, or forged); it is read as an ordinary line and hides nothing".into(),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_bad_line_is_found_with_its_number() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.jsonl");
        let text = [
            &b"{\"role\":\"user\",\"content\":\"hi\"}\n"[..],
            b"GARBAGE{\"mf\":{\"v\":2,\"kind\":\"decline\"}}\n",
            b"{\"role\":\"user\",\"content\":\"\xff\"}\n",
            b"{\"role\":\"system\",\"mf\":{\"v\":2,\"kind\":\"summary\"},\"content\":\"x\"}\n",
            b"{\"mf\":{\"v\":2,\"kind\":\"decline\"}}\n",
            b"\n",
            b"{\"content\":\"\\ud800\",\"role\":\"user\"}\n",
            b"{\"torn\":",
        ]
        .concat();
        std::fs::write(&p, text).unwrap();
        let got: Vec<(u32, &str)> = scan(&p).unwrap().iter().map(|i| (i.line, i.kind)).collect();
        assert_eq!(
            got,
            vec![(2, "not-json"), (3, "not-utf8"), (4, "reshaped-mf-line")]
        );
    }
}
