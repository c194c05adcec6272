//! Pieces of text rendering shared by the formats: content parts, media placeholders, tool
//! arguments.

use serde_json::Value;

use crate::transcript::read::LineError;

/// Text built line by line, with the byte ranges of the lines that are the model's reasoning
/// (a thinking block, a reasoning item): what it thought, not what it said.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Marked {
    pub text: String,
    pub reasoning: Vec<std::ops::Range<usize>>,
}

impl Marked {
    /// Text none of which is reasoning.
    pub fn plain(text: String) -> Self {
        Self {
            text,
            reasoning: Vec::new(),
        }
    }

    /// Append `line` as [`push_line`] does, marked as reasoning when `reasoning`.
    pub fn push(&mut self, line: &str, reasoning: bool) {
        if line.is_empty() {
            return;
        }
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        let start = self.text.len();
        self.text.push_str(line);
        if reasoning {
            self.reasoning.push(start..self.text.len());
        }
    }

    /// Append `other` as one line (as [`push_line`] does), its reasoning ranges with it.
    pub fn append(&mut self, other: Marked) {
        if other.text.is_empty() {
            return;
        }
        if !self.text.is_empty() {
            self.text.push('\n');
        }
        let base = self.text.len();
        self.text.push_str(&other.text);
        self.reasoning.extend(
            other
                .reasoning
                .into_iter()
                .map(|r| r.start + base..r.end + base),
        );
    }
}

/// Append `line` to `text`, on a new line when `text` is not empty.
pub fn push_line(text: &mut String, line: &str) {
    if line.is_empty() {
        return;
    }
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(line);
}

/// Tool arguments as text: a JSON string as is, anything else as compact JSON.
pub fn arguments_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The first line of a text.
pub fn first_line(s: &str) -> String {
    s.split('\n').next().unwrap_or_default().to_string()
}

/// A human size: `512 B`, `118 kB`, `3.4 MB`.
pub fn size(bytes: usize) -> String {
    if bytes < 1000 {
        format!("{bytes} B")
    } else if bytes < 1_000_000 {
        format!("{} kB", bytes / 1000)
    } else {
        format!("{:.1} MB", bytes as f64 / 1e6)
    }
}

/// Decoded size of base64 text.
pub fn base64_size(b64: &str) -> usize {
    let n = b64.trim_end_matches('=').len();
    n * 3 / 4
}

/// The placeholder for an image: its type and size when the data is inline, never the data.
pub fn image_placeholder(mime: Option<&str>, data_len: Option<usize>) -> String {
    match (mime, data_len) {
        (Some(m), Some(n)) => format!("[image {m} {}]", size(n)),
        (Some(m), None) => format!("[image {m}]"),
        (None, Some(n)) => format!("[image {}]", size(n)),
        (None, None) => "[image]".into(),
    }
}

/// An image given by URL: a `data:` URL becomes its type and size, any other URL stays a bare
/// placeholder (the URL may carry a token).
pub fn image_url_placeholder(url: &str) -> String {
    if let Some(rest) = url.strip_prefix("data:") {
        let (meta, data) = rest.split_once(',').unwrap_or((rest, ""));
        let mime = meta.split(';').next().filter(|m| !m.is_empty());
        let len = if meta.ends_with(";base64") {
            base64_size(data)
        } else {
            data.len()
        };
        image_placeholder(mime, Some(len))
    } else {
        image_placeholder(None, None)
    }
}

/// Model-visible text of an OpenAI-style `content` value: a string, null, or an array of parts
/// (text parts' text; images, audio and files as placeholders), parts joined by newlines.
pub fn content_text(content: Option<&Value>) -> String {
    match content {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            let mut text = String::new();
            for part in parts {
                let piece = match part {
                    Value::String(s) => s.clone(),
                    Value::Object(p) => match p.get("type").and_then(Value::as_str) {
                        Some("text" | "input_text" | "output_text") | None => p
                            .get("text")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        Some("image_url" | "input_image") => {
                            let url = p
                                .get("image_url")
                                .and_then(|u| u.get("url").or(Some(u)))
                                .and_then(Value::as_str);
                            url.map_or_else(|| image_placeholder(None, None), image_url_placeholder)
                        }
                        Some("image") => image_placeholder(
                            p.get("mimeType")
                                .or_else(|| p.get("source").and_then(|s| s.get("media_type")))
                                .and_then(Value::as_str),
                            p.get("data")
                                .or_else(|| p.get("source").and_then(|s| s.get("data")))
                                .and_then(Value::as_str)
                                .map(base64_size),
                        ),
                        Some("input_audio" | "audio") => "[audio]".to_string(),
                        Some("file" | "input_file") => "[file]".to_string(),
                        Some(other) => format!("[{other}]"),
                    },
                    other => other.to_string(),
                };
                push_line(&mut text, &piece);
            }
            text
        }
        Some(other) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_become_type_and_size_never_data() {
        let v: Value = serde_json::json!([
            {"type": "text", "text": "look"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{}", "A".repeat(160_000))}},
            {"type": "image_url", "image_url": {"url": "https://x/y.png?token=secret"}},
        ]);
        let t = content_text(Some(&v));
        assert_eq!(t, "look\n[image image/png 120 kB]\n[image]");
    }
}

/// An ISO-8601 UTC timestamp with milliseconds (`2026-11-30T11:29:48.037Z`), the form the
/// agents write.
pub fn iso_timestamp(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

/// A fresh 8-hex id not in `taken`.
pub fn fresh_hex8(taken: &impl Fn(&str) -> bool) -> String {
    loop {
        let id = format!("{:08x}", fastrand::u32(..));
        if !taken(&id) {
            return id;
        }
    }
}

/// A fresh random UUID (v4).
pub fn fresh_uuid() -> String {
    let a = fastrand::u128(..);
    let b = (a & !(0xf000 << 64)) | (0x4000 << 64);
    let b = (b & !(0xc000 << 48)) | (0x8000 << 48);
    let h = format!("{b:032x}");
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// A JSON object with mf's `mf` object first, then `rest`'s fields, as one line.
pub fn mf_first(mf: serde_json::Value, rest: serde_json::Map<String, Value>) -> String {
    let mut obj = serde_json::Map::new();
    obj.insert("mf".into(), mf);
    obj.extend(rest);
    serde_json::to_string(&Value::Object(obj)).expect("a line serializes")
}

#[cfg(test)]
mod time_tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_utc_with_milliseconds() {
        assert_eq!(iso_timestamp(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_timestamp(1_764_502_188_037), "2025-11-30T11:29:48.037Z");
        assert_eq!(iso_timestamp(951_782_400_000), "2000-02-29T00:00:00.000Z");
        let u = fresh_uuid();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
    }
}

/// A JSON object kept in a checkpoint as its JSON text (the checkpoint's binary encoding cannot
/// hold a self-describing value).
pub mod json_text {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::{Map, Value};

    pub fn serialize<S: Serializer>(v: &Map<String, Value>, s: S) -> Result<S::Ok, S::Error> {
        serde_json::to_string(v)
            .map_err(serde::ser::Error::custom)?
            .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Map<String, Value>, D::Error> {
        let text = String::deserialize(d)?;
        serde_json::from_str(&text).map_err(serde::de::Error::custom)
    }
}

/// An agent format's line: any JSON object (the agents' own readers skip the kinds they do not
/// know).
pub fn parse_object(line: &[u8]) -> Result<Value, LineError> {
    match serde_json::from_slice::<Value>(line) {
        Ok(v) if v.is_object() => Ok(v),
        Ok(_) => Err(LineError {
            message: "not a JSON object".into(),
            column: 1,
        }),
        Err(e) => Err(LineError::from_json(&e)),
    }
}

/// Whether `v` has the shape of an agent's line: a string `type` and one of `keys` (the objects
/// nested inside a line, such as content blocks, have no such key).
pub fn is_typed_line(v: &Value, keys: &[&str]) -> bool {
    v.get("type").is_some_and(Value::is_string) && keys.iter().any(|k| v.get(k).is_some())
}

/// The entry a standing stub stands in for (the first line it covers), or `NONE`.
pub fn stubbed(t: &crate::transcript::Transcript, c: &crate::entry::Claim) -> u32 {
    let orig = c.coverage.as_ref().ok().and_then(|cov| match &cov.covered {
        crate::entry::Covered::Lines { ranges, .. } => ranges.first().map(|r| r[0]),
        crate::entry::Covered::Ids(_) => None,
    });
    orig.and_then(|l| t.entries.binary_search_by_key(&l, |e| e.line).ok())
        .map_or(crate::entry::NONE, |j| j as u32)
}
