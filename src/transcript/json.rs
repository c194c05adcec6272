//! JSON lines as the agents write them, including what serde_json refuses: a lone UTF-16
//! surrogate escape (`"\ud83d"` without its pair), which JavaScript's `JSON.stringify` writes
//! when a string was cut inside an emoji, and which Claude Code, Codex and pi read back as
//! U+FFFD. mf reads it the same way: a line that does not parse and holds one is parsed again
//! from a copy with each unpaired escape replaced by `\ufffd` (the same six bytes, so every
//! offset stays), and the line's bytes on disk are never touched. A line that parses pays
//! nothing.

use serde_json::Value;

/// A copy of `line` with every lone surrogate escape (`\uD800`–`\uDFFF` not part of a high +
/// low pair, and not itself escaped, as in `\\ud83d`) replaced by `\ufffd`; `None` when there
/// is none.
pub fn lone_surrogates_replaced(line: &[u8]) -> Option<Vec<u8>> {
    let unit = |k: usize| -> Option<u16> {
        let h = line.get(k..k + 4)?;
        u16::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()
    };
    let mut out: Option<Vec<u8>> = None;
    let mut i = 0;
    while let Some(p) = memchr::memchr(b'\\', &line[i..]) {
        let at = i + p;
        match line.get(at + 1) {
            Some(b'u') => {
                let high = unit(at + 2);
                let paired = |u: u16| {
                    (0xD800..0xDC00).contains(&u)
                        && line.get(at + 6..at + 8) == Some(b"\\u")
                        && unit(at + 8).is_some_and(|l| (0xDC00..0xE000).contains(&l))
                };
                match high {
                    Some(u) if paired(u) => i = at + 12,
                    Some(u) if (0xD800..0xE000).contains(&u) => {
                        let o = out.get_or_insert_with(|| line.to_vec());
                        o[at + 2..at + 6].copy_from_slice(b"fffd");
                        i = at + 6;
                    }
                    _ => i = at + 2,
                }
            }
            // Any other escape, `\\` included: the next byte is not an escape's start.
            Some(_) => i = at + 2,
            None => break,
        }
    }
    out
}

/// Parse a line as JSON, reading a lone surrogate escape as U+FFFD (see the module docs).
pub fn from_slice(line: &[u8]) -> serde_json::Result<Value> {
    serde_json::from_slice(line).or_else(|e| match lone_surrogates_replaced(line) {
        Some(fixed) => serde_json::from_slice(&fixed),
        None => Err(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unpaired_unescaped_surrogates_are_replaced() {
        let r =
            |s: &str| lone_surrogates_replaced(s.as_bytes()).map(|v| String::from_utf8(v).unwrap());
        assert_eq!(
            r(r#"{"a":"x\ud83d"}"#).as_deref(),
            Some(r#"{"a":"x\ufffd"}"#)
        );
        assert_eq!(
            r(r#"{"a":"\uDE00y"}"#).as_deref(),
            Some(r#"{"a":"\ufffdy"}"#)
        );
        // A pair stays; a high surrogate before another high one is lone.
        assert_eq!(r(r#"{"a":"\ud83d\ude00"}"#), None);
        assert_eq!(
            r(r#"{"a":"\ud83d\ud83d\ude00"}"#).as_deref(),
            Some(r#"{"a":"\ufffd\ud83d\ude00"}"#)
        );
        // An escaped backslash before `u` is text, not an escape; an odd run escapes.
        assert_eq!(r(r#"{"a":"\\ud83d"}"#), None);
        assert_eq!(
            r(r#"{"a":"\\\ud83d"}"#).as_deref(),
            Some(r#"{"a":"\\\ufffd"}"#)
        );
        assert_eq!(r(r#"{"a":"\u00e9 \n"}"#), None);
        let v = from_slice(br#"{"a":"hi \ud83d","b":"\ud83d\ude00"}"#).unwrap();
        assert_eq!(v["a"], "hi \u{fffd}");
        assert_eq!(v["b"], "\u{1f600}");
        assert!(from_slice(br#"{"a":"\ud83d"#).is_err());
    }
}
