//! `Redactor`: finds secrets in text — provider API keys and tokens, bearer tokens, private key
//! blocks, passwords in URLs, AWS-style keys, and the exact key mf itself uses — and replaces
//! each with a typed placeholder such as `[REDACTED:anthropic-key]`, counting what it replaced
//! (never keeping a value). Pure.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use regex::Regex;

/// What was redacted, by kind.
pub type Counts = BTreeMap<&'static str, usize>;

struct Pattern {
    kind: &'static str,
    re: Regex,
    /// The capture group to replace (0: the whole match).
    group: usize,
}

fn patterns() -> &'static [Pattern] {
    static P: OnceLock<Vec<Pattern>> = OnceLock::new();
    P.get_or_init(|| {
        let p = |kind, re: &str, group| Pattern {
            kind,
            re: Regex::new(re).expect("a valid pattern"),
            group,
        };
        vec![
            p(
                "private-key",
                r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----",
                0,
            ),
            p("anthropic-key", r"sk-ant-[A-Za-z0-9_\-]{20,}", 0),
            p(
                "openai-key",
                r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
                0,
            ),
            p(
                "github-token",
                r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
                0,
            ),
            p("slack-token", r"\bxox[abprs]-[A-Za-z0-9\-]{10,}", 0),
            p("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}", 0),
            p("aws-access-key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", 0),
            p(
                "aws-secret-key",
                r#"(?i)aws_?secret_?access_?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})"#,
                1,
            ),
            p("stripe-key", r"\b[sr]k_live_[0-9A-Za-z]{20,}", 0),
            p(
                "jwt",
                r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
                0,
            ),
            p(
                "bearer-token",
                r"(?i)\bbearer\s+([A-Za-z0-9\-._~+/]{16,}=*)",
                1,
            ),
            p(
                "url-password",
                r"\b[a-zA-Z][a-zA-Z0-9+.\-]*://[^/\s:@]+:([^@\s/]+)@",
                1,
            ),
        ]
    })
}

/// A URL's userinfo (`user:password@`, or a bare token `token@`) and the values of query
/// parameters that carry credentials (`?key=`, `api_key`, `token`, `access_token`, …).
fn url_patterns() -> &'static (Regex, Regex) {
    static P: OnceLock<(Regex, Regex)> = OnceLock::new();
    P.get_or_init(|| {
        (
            Regex::new(r"(?i)\b([a-z][a-z0-9+.\-]*://)([^/?#\s@]+)@").expect("a valid pattern"),
            Regex::new(
                r"(?i)([?&;](?:key|api[_\-]?key|apikey|token|access[_\-]?token|auth[_\-]?token|auth|secret|client[_\-]?secret|password|passwd|pwd|sig|signature|x-amz-signature|x-goog-signature|code)=)([^&#\s\x22'<>]+)",
            )
            .expect("a valid pattern"),
        )
    })
}

/// `text` with every credential in a URL replaced: the password of `user:password@` (the user
/// stays), a bare `token@` whole, and the values of credential query parameters. For anything
/// mf prints or writes that may hold a URL the user gave (`--base-url`, errors, records).
pub fn url_credentials(text: &str) -> String {
    let (userinfo, query) = url_patterns();
    if !text.contains("://") && !text.contains('=') {
        return text.to_string();
    }
    let out = userinfo.replace_all(text, |c: &regex::Captures<'_>| {
        let info = &c[2];
        match info.split_once(':') {
            Some((user, _)) => format!("{}{user}:[REDACTED]@", &c[1]),
            None => format!("{}[REDACTED]@", &c[1]),
        }
    });
    query.replace_all(&out, "${1}[REDACTED]").into_owned()
}

/// Query parameters whose values are settings, never secrets: a URL mf shows keeps them.
const PLAIN_PARAMS: &[&str] = &[
    "api-version",
    "api_version",
    "version",
    "v",
    "model",
    "format",
    "stream",
    "beta",
    "alt",
];

/// The byte ranges of a URL's query values that may be secret (every value but those of
/// [`PLAIN_PARAMS`], a bare `?token` whole) and of its fragment.
fn secret_ranges(url: &str) -> Vec<std::ops::Range<usize>> {
    let end = url.find('#').unwrap_or(url.len());
    let mut out = Vec::new();
    if let Some(q) = url[..end].find('?') {
        let mut at = q + 1;
        for part in url[at..end].split('&') {
            let (name, value) = match part.find('=') {
                Some(i) => (&part[..i], at + i + 1),
                None => ("", at),
            };
            let stop = at + part.len();
            if stop > value && !PLAIN_PARAMS.iter().any(|p| p.eq_ignore_ascii_case(name)) {
                out.push(value..stop);
            }
            at = stop + 1;
        }
    }
    if end + 1 < url.len() {
        out.push(end + 1..url.len());
    }
    out
}

/// A URL the user gave (a base URL, the endpoint mf posts to) as mf shows it: its userinfo
/// redacted as [`url_credentials`] does, every query value but a plain setting's
/// (`api-version`, `model`, …) and any fragment replaced by `[REDACTED]`.
pub fn url_shown(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    let mut last = 0;
    for r in secret_ranges(url) {
        out.push_str(&url[last..r.start]);
        out.push_str("[REDACTED]");
        last = r.end;
    }
    out.push_str(&url[last..]);
    url_credentials(&out)
}

/// The credential values in a URL (its userinfo password or token, its query values but a plain
/// setting's, its fragment), to be scrubbed as exact strings wherever they appear.
pub fn url_secrets(url: &str) -> Vec<String> {
    let (userinfo, query) = url_patterns();
    let mut out = Vec::new();
    for c in userinfo.captures_iter(url) {
        let info = &c[2];
        out.push(match info.split_once(':') {
            Some((_, pass)) => pass.to_string(),
            None => info.to_string(),
        });
    }
    for c in query.captures_iter(url) {
        out.push(c[2].to_string());
    }
    for r in secret_ranges(url) {
        let value = url[r].to_string();
        if !out.contains(&value) {
            out.push(value);
        }
    }
    out.retain(|s| s.len() >= 4);
    out
}

/// Finds and replaces secrets.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Exact values to remove wherever they appear (the key mf uses).
    exact: Vec<String>,
}

impl Redactor {
    pub fn new(exact: impl IntoIterator<Item = String>) -> Self {
        Self {
            exact: exact.into_iter().filter(|s| s.len() >= 8).collect(),
        }
    }

    /// `v` as JSON with every string redacted (`None` if it does not serialize): what a record
    /// carries of an audit.
    pub fn scrubbed_json(&self, v: &impl serde::Serialize) -> Option<serde_json::Value> {
        let mut j = serde_json::to_value(v).ok()?;
        self.redact_value(&mut j);
        Some(j)
    }

    /// Every string in `v` redacted, for records built from text that may hold a secret (an
    /// audit's items are pieces of a summary: one that is a piece of a known key goes too).
    pub fn redact_value(&self, v: &mut serde_json::Value) {
        use serde_json::Value;
        match v {
            Value::String(s) => {
                let piece_of_key =
                    s.len() >= 8 && self.exact.iter().any(|k| k.contains(s.as_str()));
                *s = if piece_of_key {
                    "[REDACTED:api-key]".to_string()
                } else {
                    self.redact(s, &mut Counts::new())
                };
            }
            Value::Array(items) => items.iter_mut().for_each(|x| self.redact_value(x)),
            Value::Object(map) => map.values_mut().for_each(|x| self.redact_value(x)),
            _ => {}
        }
    }

    /// `text` with every secret replaced by a typed placeholder, and what was replaced.
    pub fn redact(&self, text: &str, counts: &mut Counts) -> String {
        let mut out = text.to_string();
        for secret in &self.exact {
            let n = out.matches(secret.as_str()).count();
            if n > 0 {
                out = out.replace(secret.as_str(), "[REDACTED:api-key]");
                *counts.entry("api-key").or_default() += n;
            }
        }
        for p in patterns() {
            if !p.re.is_match(&out) {
                continue;
            }
            let mut n = 0;
            let replaced =
                p.re.replace_all(&out, |c: &regex::Captures<'_>| {
                    n += 1;
                    let whole = c.get(0).expect("a match").as_str();
                    match c.get(p.group) {
                        Some(g) if p.group > 0 => {
                            let start = g.start() - c.get(0).expect("a match").start();
                            format!(
                                "{}[REDACTED:{}]{}",
                                &whole[..start],
                                p.kind,
                                &whole[start + g.len()..]
                            )
                        }
                        _ => format!("[REDACTED:{}]", p.kind),
                    }
                })
                .into_owned();
            if n > 0 {
                *counts.entry(p.kind).or_default() += n;
                out = replaced;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(text: &str) -> (String, Counts) {
        let mut c = Counts::new();
        let out = Redactor::new(["sk-live-exact-value-123".to_string()]).redact(text, &mut c);
        (out, c)
    }

    #[test]
    fn every_kind_is_replaced_and_counted_never_kept() {
        let cases = [
            (
                "key sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123",
                "anthropic-key",
            ),
            (
                "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx12",
                "openai-key",
            ),
            (
                "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
                "github-token",
            ),
            ("xoxb-1234567890-abcdefghij", "slack-token"),
            ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "google-api-key"),
            ("AKIAIOSFODNN7EXAMPLE is the id", "aws-access-key"),
            (
                "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                "aws-secret-key",
            ),
            (
                "Authorization: Bearer abcdef0123456789abcdef",
                "bearer-token",
            ),
            (
                "postgres://admin:hunter2secret@db.internal:5432/app",
                "url-password",
            ),
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----",
                "private-key",
            ),
            (
                "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
                "jwt",
            ),
            ("the key sk-live-exact-value-123 leaked", "api-key"),
        ];
        for (text, kind) in cases {
            let (out, c) = r(text);
            assert_eq!(c.get(kind), Some(&1), "{text} → {out} {c:?}");
            assert!(out.contains(&format!("[REDACTED:{kind}]")), "{out}");
        }
        let (out, _) = r("postgres://admin:hunter2secret@db");
        assert!(
            !out.contains("hunter2secret") && out.contains("admin:"),
            "{out}"
        );
    }

    #[test]
    fn credentials_in_urls_are_redacted_and_the_rest_kept() {
        let u = "http://user:s3cr3tpw@127.0.0.1:8080/v1?key=tok3nvalue&model=x";
        let out = url_credentials(&format!("POST {u} failed"));
        assert_eq!(
            out,
            "POST http://user:[REDACTED]@127.0.0.1:8080/v1?key=[REDACTED]&model=x failed"
        );
        assert_eq!(
            url_credentials("https://ghp_abcdef123456@github.com/x"),
            "https://[REDACTED]@github.com/x"
        );
        for q in [
            "api_key",
            "api-key",
            "apikey",
            "token",
            "access_token",
            "TOKEN",
            "sig",
        ] {
            let out = url_credentials(&format!("https://h/p?a=1&{q}=v4lue-9"));
            assert!(!out.contains("v4lue-9"), "{q}: {out}");
        }
        assert_eq!(
            url_secrets(u),
            vec!["s3cr3tpw".to_string(), "tok3nvalue".to_string()]
        );
        for plain in [
            "see https://example.com/a?c=d",
            "a=b",
            "mail me@example.com",
        ] {
            assert_eq!(url_credentials(plain), plain);
        }
    }

    #[test]
    fn a_url_mf_shows_hides_every_query_value_but_a_setting_and_any_fragment() {
        assert_eq!(
            url_shown("http://u:pw0rd123@h:9/v1?api-version=2024-10-21&x=priv4te&tok3n#k=frag"),
            "http://u:[REDACTED]@h:9/v1?api-version=2024-10-21&x=[REDACTED]&[REDACTED]#[REDACTED]"
        );
        assert_eq!(
            url_shown("https://api.openai.com/v1"),
            "https://api.openai.com/v1"
        );
        assert_eq!(
            url_secrets("http://h/v1?x=priv4te&model=gpt#k=frag"),
            vec!["priv4te".to_string(), "k=frag".to_string()]
        );
    }

    #[test]
    fn ordinary_text_is_untouched() {
        for text in [
            "the port is 9090, not 8080",
            "see https://example.com/a/b?c=d",
            "skip-this-step and sk-short",
            "commit 3f2a9c1e in src/main.rs",
        ] {
            let (out, c) = r(text);
            assert_eq!(out, text);
            assert!(c.is_empty());
        }
    }
}
