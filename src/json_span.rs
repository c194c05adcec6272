//! JSON read for its byte spans, so that a config file of another program can be edited by
//! inserting or cutting bytes, every other byte left as it was: a user's CRLF line ends, their
//! indentation, a duplicate key, a number too big for a float, a `\u` escape (even a lone
//! surrogate, which `JSON.parse` accepts and serde_json refuses) all survive.
//!
//! It checks JSON's grammar as it goes (so a span it hands back is always a whole value), keeps
//! no values, and nests at most [`MAX_DEPTH`] deep (no input overflows the stack).

use std::ops::Range;

/// Deepest nesting read (deeper input is refused, not followed).
pub const MAX_DEPTH: usize = 256;

/// A member of an object: its key (decoded; a lone surrogate escape reads as U+FFFD) and where
/// its key and value are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub key: String,
    /// The key's opening quote.
    pub start: usize,
    /// The value, from its first byte to just after its last.
    pub value: Range<usize>,
}

/// An object: where its braces are and its members in file order (duplicates included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    /// The `{`.
    pub open: usize,
    /// The `}`.
    pub close: usize,
    pub members: Vec<Member>,
}

impl Object {
    /// The member `key` as a reader of the file sees it: the last of that name (`JSON.parse`,
    /// serde_json and Claude Code keep the last of duplicate keys).
    pub fn get(&self, key: &str) -> Option<(usize, &Member)> {
        self.members
            .iter()
            .enumerate()
            .rev()
            .find(|(_, m)| m.key == key)
    }
}

/// The whole text as one JSON object (whitespace around it allowed, nothing else).
pub fn top_object(text: &str) -> Result<Object, String> {
    let b = text.as_bytes();
    let at = skip_ws(b, 0);
    let obj = object_at(text, at)?;
    let end = skip_ws(b, obj.close + 1);
    if end != b.len() {
        return Err(format!(
            "{}: more after the top-level object",
            place(b, end)
        ));
    }
    Ok(obj)
}

/// The object whose `{` is at `at`.
pub fn object_at(text: &str, at: usize) -> Result<Object, String> {
    let b = text.as_bytes();
    if b.get(at) != Some(&b'{') {
        return Err(format!("{}: not an object", place(b, at)));
    }
    let mut members = Vec::new();
    let mut i = skip_ws(b, at + 1);
    if b.get(i) == Some(&b'}') {
        return Ok(Object {
            open: at,
            close: i,
            members,
        });
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return Err(format!("{}: a key was expected", place(b, i)));
        }
        let key_end = skip_string(b, i)?;
        let key = decode_string(&text[i..key_end]);
        let colon = skip_ws(b, key_end);
        if b.get(colon) != Some(&b':') {
            return Err(format!("{}: `:` was expected", place(b, colon)));
        }
        let v = skip_ws(b, colon + 1);
        let v_end = skip_value(b, v, 1)?;
        members.push(Member {
            key,
            start: i,
            value: v..v_end,
        });
        let next = skip_ws(b, v_end);
        match b.get(next) {
            Some(b',') => i = skip_ws(b, next + 1),
            Some(b'}') => {
                return Ok(Object {
                    open: at,
                    close: next,
                    members,
                });
            }
            _ => return Err(format!("{}: `,` or `}}` was expected", place(b, next))),
        }
    }
}

/// An array: where its brackets are and the span of each element, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Array {
    /// The `[`.
    pub open: usize,
    /// The `]`.
    pub close: usize,
    pub items: Vec<Range<usize>>,
}

/// The array whose `[` is at `at`.
pub fn array_at(text: &str, at: usize) -> Result<Array, String> {
    let b = text.as_bytes();
    if b.get(at) != Some(&b'[') {
        return Err(format!("{}: not an array", place(b, at)));
    }
    let mut items = Vec::new();
    let mut i = skip_ws(b, at + 1);
    if b.get(i) == Some(&b']') {
        return Ok(Array {
            open: at,
            close: i,
            items,
        });
    }
    loop {
        let end = skip_value(b, i, 1)?;
        items.push(i..end);
        let next = skip_ws(b, end);
        match b.get(next) {
            Some(b',') => i = skip_ws(b, next + 1),
            Some(b']') => {
                return Ok(Array {
                    open: at,
                    close: next,
                    items,
                });
            }
            _ => return Err(format!("{}: `,` or `]` was expected", place(b, next))),
        }
    }
}

/// The text of a JSON string literal (quotes included) decoded; a lone surrogate escape reads
/// as U+FFFD. The literal is one [`skip_string`] accepted.
pub fn decode_string(lit: &str) -> String {
    let inner = &lit[1..lit.len() - 1];
    if !inner.contains('\\') {
        return inner.to_string();
    }
    let mut out = String::with_capacity(inner.len());
    let mut units: Vec<u16> = Vec::new();
    let flush = |units: &mut Vec<u16>, out: &mut String| {
        out.extend(char::decode_utf16(units.drain(..)).map(|c| c.unwrap_or('\u{FFFD}')));
    };
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            flush(&mut units, &mut out);
            out.push(c);
            continue;
        }
        let e = chars.next().unwrap_or('\\');
        if e == 'u' {
            let hex: String = chars.by_ref().take(4).collect();
            units.push(u16::from_str_radix(&hex, 16).unwrap_or(0xFFFD));
            continue;
        }
        flush(&mut units, &mut out);
        out.push(match e {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            'b' => '\u{8}',
            'f' => '\u{c}',
            other => other,
        });
    }
    flush(&mut units, &mut out);
    out
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

fn place(b: &[u8], i: usize) -> String {
    let i = i.min(b.len());
    let line = b[..i].iter().filter(|&&c| c == b'\n').count() + 1;
    let col = i - b[..i]
        .iter()
        .rposition(|&c| c == b'\n')
        .map_or(0, |p| p + 1)
        + 1;
    if i == b.len() {
        format!("line {line}, column {col} (the end of the file)")
    } else {
        format!("line {line}, column {col}")
    }
}

/// Just after the string literal whose `"` is at `i`.
fn skip_string(b: &[u8], i: usize) -> Result<usize, String> {
    let mut j = i + 1;
    loop {
        match b.get(j) {
            None => return Err(format!("{}: an unterminated string", place(b, i))),
            Some(b'"') => return Ok(j + 1),
            Some(b'\\') => match b.get(j + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => j += 2,
                Some(b'u') => {
                    let hex = b.get(j + 2..j + 6).unwrap_or_default();
                    if hex.len() != 4 || !hex.iter().all(u8::is_ascii_hexdigit) {
                        return Err(format!("{}: a bad \\u escape", place(b, j)));
                    }
                    j += 6;
                }
                _ => return Err(format!("{}: a bad escape", place(b, j))),
            },
            Some(&c) if c < 0x20 => {
                return Err(format!("{}: a control character in a string", place(b, j)));
            }
            Some(_) => j += 1,
        }
    }
}

/// Just after the value that starts at `i`.
fn skip_value(b: &[u8], i: usize, depth: usize) -> Result<usize, String> {
    if depth > MAX_DEPTH {
        return Err(format!("{}: nested too deeply", place(b, i)));
    }
    match b.get(i) {
        Some(b'"') => skip_string(b, i),
        Some(b'{') => {
            let mut j = skip_ws(b, i + 1);
            if b.get(j) == Some(&b'}') {
                return Ok(j + 1);
            }
            loop {
                if b.get(j) != Some(&b'"') {
                    return Err(format!("{}: a key was expected", place(b, j)));
                }
                j = skip_ws(b, skip_string(b, j)?);
                if b.get(j) != Some(&b':') {
                    return Err(format!("{}: `:` was expected", place(b, j)));
                }
                j = skip_ws(b, skip_value(b, skip_ws(b, j + 1), depth + 1)?);
                match b.get(j) {
                    Some(b',') => j = skip_ws(b, j + 1),
                    Some(b'}') => return Ok(j + 1),
                    _ => return Err(format!("{}: `,` or `}}` was expected", place(b, j))),
                }
            }
        }
        Some(b'[') => {
            let mut j = skip_ws(b, i + 1);
            if b.get(j) == Some(&b']') {
                return Ok(j + 1);
            }
            loop {
                j = skip_ws(b, skip_value(b, j, depth + 1)?);
                match b.get(j) {
                    Some(b',') => j = skip_ws(b, j + 1),
                    Some(b']') => return Ok(j + 1),
                    _ => return Err(format!("{}: `,` or `]` was expected", place(b, j))),
                }
            }
        }
        Some(b't') if b[i..].starts_with(b"true") => Ok(i + 4),
        Some(b'f') if b[i..].starts_with(b"false") => Ok(i + 5),
        Some(b'n') if b[i..].starts_with(b"null") => Ok(i + 4),
        Some(b'-' | b'0'..=b'9') => skip_number(b, i),
        _ => Err(format!("{}: a value was expected", place(b, i))),
    }
}

/// JSON's number grammar (any number of digits: a big integer is a number like any other).
fn skip_number(b: &[u8], i: usize) -> Result<usize, String> {
    let digits = |mut j: usize| {
        let s = j;
        while b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        (j, j - s)
    };
    let mut j = i + usize::from(b[i] == b'-');
    let (k, n) = digits(j);
    if n == 0 || (b[j] == b'0' && n > 1) {
        return Err(format!("{}: a bad number", place(b, i)));
    }
    j = k;
    if b.get(j) == Some(&b'.') {
        let (k, n) = digits(j + 1);
        if n == 0 {
            return Err(format!("{}: a bad number", place(b, i)));
        }
        j = k;
    }
    if matches!(b.get(j), Some(b'e' | b'E')) {
        j += 1;
        if matches!(b.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let (k, n) = digits(j);
        if n == 0 {
            return Err(format!("{}: a bad number", place(b, i)));
        }
        j = k;
    }
    Ok(j)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_spans_and_the_last_of_duplicate_keys() {
        let t = "\u{feff}";
        assert!(top_object(t).is_err());
        let t = "{\r\n  \"a\": 123456789012345678901234567890,\r\n  \"b\": \"\\ud800x\",\r\n  \"a\": [1, {\"x\": null}]\r\n}\r\n";
        let o = top_object(t).unwrap();
        assert_eq!(o.members.len(), 3);
        let (k, a) = o.get("a").unwrap();
        assert_eq!(k, 2);
        assert_eq!(&t[a.value.clone()], "[1, {\"x\": null}]");
        assert_eq!(
            &t[o.members[0].value.clone()],
            "123456789012345678901234567890"
        );
        assert_eq!(o.members[1].key, "b");
        assert_eq!(decode_string("\"m\\u0066\""), "mf");
        assert_eq!(decode_string("\"\\ud800x\""), "\u{FFFD}x");
        assert_eq!(decode_string("\"\\ud83d\\ude00\""), "😀");
        assert_eq!(&t[o.close..o.close + 1], "}");
    }

    #[test]
    fn bad_json_is_refused_with_a_place() {
        for bad in [
            "",
            "[]",
            "{",
            "{\"a\" 1}",
            "{\"a\": 01}",
            "{\"a\": 1,}",
            "{\"a\": tru}",
            "{\"a\": \"\\x\"}",
            "{} {}",
            "{\"a\": -}",
            "{\"a\": 1.}",
            "{\"a\": 1e}",
        ] {
            assert!(top_object(bad).is_err(), "{bad}");
        }
        let deep = format!("{{\"a\": {}{}}}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(top_object(&deep).unwrap_err().contains("nested too deeply"));
        assert!(
            top_object("{\n\"a\": }")
                .unwrap_err()
                .starts_with("line 2, column 6")
        );
    }
}
