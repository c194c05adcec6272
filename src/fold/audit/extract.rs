//! Items in text: a tokenizer, one classifier per item class, and the units (sentences and tool
//! calls) of a span with the items each carries.

use super::*;
use crate::text;

// ---------------------------------------------------------------------------------------------
// Tokens

#[derive(Debug, Clone, Copy)]
pub(super) struct Tok<'a> {
    /// The token less surrounding quotes, brackets and trailing punctuation.
    core: &'a str,
    start: usize,
    end: usize,
    raw_start: usize,
    /// The raw (whitespace-separated) token.
    raw: &'a str,
    /// Starts a sentence: first on its line, or after `.`, `!`, `?`, `:` or a bullet.
    sentence_start: bool,
    /// Starts a sentence after a hard stop (line start, `.`, `!`, `?`): where units split.
    hard_start: bool,
    line_start: bool,
    /// Punctuation was trimmed after the core (a name run stops there).
    trailed: bool,
}

pub(super) const LEAD_TRIM: &[char] = &[
    '"', '\'', '(', '[', '{', '<', '`', '*', '“', '‘', '«', '¿', '¡', '…',
];
pub(super) const TRAIL_TRIM: &[char] = &[
    '"', '\'', ')', ']', '}', '>', '`', '*', ',', ';', ':', '.', '!', '?', '”', '’', '»', '…',
];
pub(super) const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "vs", "mr", "mrs", "ms", "dr", "st", "no", "approx", "inc", "ltd", "jr", "sr",
    "cf", "fig", "al", "ca",
];

pub(super) fn trim_core(raw: &str) -> (usize, &str, bool) {
    let mut s = raw.trim_start_matches(LEAD_TRIM);
    let lead = raw.len() - s.len();
    let before = s.len();
    while let Some(c) = s.chars().last() {
        if !TRAIL_TRIM.contains(&c) {
            break;
        }
        if c == ')' && s.matches('(').count() >= s.matches(')').count() {
            break;
        }
        if c == ']' && s.matches('[').count() >= s.matches(']').count() {
            break;
        }
        s = &s[..s.len() - c.len_utf8()];
    }
    for poss in ["'s", "’s"] {
        if s.len() > poss.len() + 1 && s.ends_with(poss) {
            s = &s[..s.len() - poss.len()];
        }
    }
    (lead, s, s.len() < before)
}

pub(super) fn is_list_number(raw: &str) -> bool {
    let r = raw.trim_end_matches(['.', ')']);
    r.len() < raw.len() && !r.is_empty() && r.len() <= 3 && r.bytes().all(|b| b.is_ascii_digit())
}

pub(super) fn is_bullet(raw: &str) -> bool {
    matches!(raw, "-" | "*" | "•" | "+" | ">" | "–" | "—" | "·")
        || (raw.starts_with('#') && raw.bytes().all(|b| b == b'#'))
        || is_list_number(raw)
}

/// Whether a token ends a sentence: `(soft, hard)`. `after_number`: the token before it is a
/// number, so a short lower-case word with a period is a unit ending the sentence (`60 s.`,
/// `310 ms.`), not an initial or a title.
pub(super) fn ends_sentence(raw: &str, core: &str, after_number: bool) -> (bool, bool) {
    let r = raw.trim_end_matches(['"', '\'', ')', ']', '”', '’', '*', '`']);
    let Some(last) = r.chars().last() else {
        return (false, false);
    };
    if last == ':' {
        return (true, false);
    }
    if !matches!(last, '.' | '!' | '?') {
        return (false, false);
    }
    if last == '.' {
        let lower = core.to_ascii_lowercase();
        let unit = after_number
            && core.chars().count() <= 3
            && core.chars().all(|c| c.is_ascii_lowercase());
        if unit {
            return (true, true);
        }
        if ABBREVIATIONS.contains(&lower.as_str())
            || (core.chars().count() == 1 && core.chars().all(char::is_alphabetic))
        {
            return (false, false);
        }
    }
    (true, true)
}

/// A number as a word: digits, with separators and a sign or currency sign (`60`, `1,840`,
/// `4.2`, `$300`).
fn is_number_word(core: &str) -> bool {
    let digits = core.trim_start_matches(['$', '€', '£', '-', '+', '~']);
    !digits.is_empty()
        && digits.starts_with(|c: char| c.is_ascii_digit())
        && digits
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, ',' | '.'))
}

pub(super) fn tokenize(text: &str) -> Vec<Tok<'_>> {
    let mut out = Vec::new();
    let (mut soft, mut hard, mut line_start) = (true, true, true);
    let mut after_number = false;
    let mut chars = text.char_indices().peekable();
    while let Some(&(i, c)) = chars.peek() {
        if c.is_whitespace() {
            if c == '\n' {
                soft = true;
                hard = true;
                line_start = true;
            }
            chars.next();
            continue;
        }
        let start = i;
        let mut end = i;
        while let Some(&(j, d)) = chars.peek() {
            if d.is_whitespace() {
                break;
            }
            end = j + d.len_utf8();
            chars.next();
        }
        let raw = &text[start..end];
        let (lead, core, trailed) = trim_core(raw);
        let tok = Tok {
            core,
            start: start + lead,
            end: start + lead + core.len(),
            raw_start: start,
            raw,
            sentence_start: soft,
            hard_start: hard,
            line_start,
            trailed,
        };
        line_start = false;
        if is_bullet(raw) && soft {
            // The sentence starts after the bullet.
        } else {
            let (s, h) = ends_sentence(raw, core, after_number);
            soft = s;
            hard = h;
        }
        if !core.is_empty() {
            after_number = is_number_word(core);
            out.push(tok);
        }
    }
    out
}

/// Byte ranges of the sentences of `text`: split at line ends and at `.`, `!` or `?` followed by
/// whitespace (not after abbreviations such as `e.g.` or single letters). Leading bullets are
/// part of the sentence; empty sentences are skipped.
pub fn sentence_ranges(text: &str) -> Vec<Range<usize>> {
    let toks = tokenize(text);
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut cur: Option<Range<usize>> = None;
    for t in &toks {
        if t.hard_start
            && let Some(r) = cur.take()
        {
            out.push(r);
        }
        let end = t.raw_start + t.raw.len();
        match &mut cur {
            Some(r) => r.end = end,
            None => cur = Some(t.raw_start..end),
        }
    }
    // Tokens that were only punctuation are dropped by `tokenize`; a bullet before the first
    // word is fine to lose.
    out.extend(cur);
    out.retain(|r| text[r.clone()].chars().any(char::is_alphanumeric));
    out
}

// ---------------------------------------------------------------------------------------------
// Word lists

pub(super) const MONTHS: [(&str, &str); 12] = [
    ("january", "jan"),
    ("february", "feb"),
    ("march", "mar"),
    ("april", "apr"),
    ("may", "may"),
    ("june", "jun"),
    ("july", "jul"),
    ("august", "aug"),
    ("september", "sep"),
    ("october", "oct"),
    ("november", "nov"),
    ("december", "dec"),
];
pub(super) const WEEKDAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];
pub(super) const TIMEZONES: &[&str] = &[
    "utc", "gmt", "z", "cet", "cest", "eet", "eest", "wet", "west", "bst", "ist", "jst", "kst",
    "aest", "aedt", "pst", "pdt", "mst", "mdt", "cst", "cdt", "est", "edt", "hst", "akst",
];
#[rustfmt::skip]
pub(super) const ERRNO: &[&str] = &[
    "ECONNREFUSED", "ECONNRESET", "ECONNABORTED", "ENOENT", "EACCES", "EPERM", "ETIMEDOUT",
    "EADDRINUSE", "EADDRNOTAVAIL", "EPIPE", "ENOMEM", "ENOSPC", "EEXIST", "EAGAIN", "EHOSTUNREACH",
    "ENETUNREACH", "EMFILE", "ENFILE", "EBADF", "EINVAL", "EISDIR", "ENOTDIR", "ENOTEMPTY",
    "EROFS", "EBUSY", "EINTR", "EIO", "ENOTFOUND", "EAI_AGAIN", "EPROTO", "ESRCH", "EDEADLK",
];
pub(super) const ERROR_TYPES: &[&str] = &[
    "OOMKilled",
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "Segfault",
    "SegmentationFault",
];
#[rustfmt::skip]
pub(super) const ERROR_WORDS: &[&str] = &[
    "error", "errors", "errored", "failed", "fails", "fail", "failure", "failing", "exception",
    "panic", "panicked", "fatal", "refused", "denied", "timeout", "traceback", "crash", "crashed",
    "crashes", "cannot", "can't", "couldn't", "unable", "invalid", "rejected", "rejects",
    "aborted", "abort", "warning", "stderr",
];
/// Capitalised words that are not names.
#[rustfmt::skip]
pub(super) const NAME_STOP: &[&str] = &[
    "the", "a", "an", "this", "that", "these", "those", "it", "its", "it's", "we", "i", "i'm",
    "i'll", "i've", "i'd", "you", "he", "she", "they", "our", "your", "my", "his", "her", "their",
    "if", "when", "then", "and", "but", "or", "so", "also", "please", "thanks", "thank", "hi",
    "hello", "hey", "yes", "no", "ok", "okay", "sure", "let", "let's", "here", "there", "what",
    "why", "how", "who", "where", "which", "after", "before", "once", "since", "while", "for",
    "from", "in", "on", "at", "by", "to", "of", "with", "without", "as", "not", "all", "any",
    "some", "each", "every", "both", "just", "only", "now", "today", "tomorrow", "yesterday",
    "note", "update", "correction", "actually", "sorry", "done", "next", "first", "second",
    "third", "finally", "great", "good", "right", "well", "maybe", "perhaps", "however",
    "otherwise", "instead", "meanwhile", "is", "are", "was", "were", "do", "does", "did", "can",
    "could", "would", "should", "will", "shall", "may", "might", "must", "have", "has", "had",
    "be", "user", "assistant", "system", "tool", "summary", "goal", "goals", "decisions",
    "decision", "state", "files", "open", "superseded", "constraints", "figures", "commands",
    "questions", "todo", "true", "false", "none", "null", "yeah", "no.", "still", "even",
    "because", "though", "although", "until", "unless", "whether", "again", "around", "about",
    "into", "over", "under", "between", "during", "through", "per", "via", "etc", "mon", "tue",
    "wed", "thu", "fri", "sat", "sun", "one", "two", "three", "four", "five", "six", "seven",
    "eight", "nine", "ten", "hmm", "oh", "ah", "wow", "cool", "nice", "perfect", "understood",
    "noted", "got", "looks", "seems", "quick", "quickly", "re", "fyi", "btw", "ps", "nb",
];
pub(super) const NAME_CONNECTORS: &[&str] = &[
    "de", "van", "von", "der", "den", "da", "di", "la", "le", "du", "bin", "al", "of", "y",
];
/// Programs whose first word makes a backticked span or a shell line a command.
#[rustfmt::skip]
pub(super) const COMMANDS: &[&str] = &[
    "git", "cargo", "rustc", "rustup", "npm", "npx", "yarn", "pnpm", "node", "deno", "bun",
    "python", "python3", "pip", "pip3", "pipx", "poetry", "uv", "pytest", "tox", "go", "gofmt",
    "java", "mvn", "gradle", "javac", "dotnet", "ruby", "gem", "bundle", "rake", "rails", "php",
    "composer", "docker", "docker-compose", "podman", "kubectl", "helm", "minikube", "kind",
    "terraform", "tofu", "ansible", "ansible-playbook", "vagrant", "aws", "gcloud", "gsutil", "az",
    "doctl", "flyctl", "heroku", "vercel", "curl", "wget", "ssh", "scp", "rsync", "sftp",
    "systemctl", "journalctl", "service", "psql", "pg_dump", "pg_restore", "mysql", "mysqldump",
    "redis-cli", "mongosh", "sqlite3", "grep", "rg", "sed", "awk", "jq", "yq", "ls", "cat", "less",
    "tail", "head", "find", "fd", "xargs", "chmod", "chown", "mkdir", "rm", "mv", "cp", "ln",
    "touch", "tar", "zip", "unzip", "gzip", "sudo", "make", "cmake", "ninja", "bazel", "gcc",
    "clang", "nginx", "openssl", "dig", "nslookup", "ping", "traceroute", "netstat", "ss", "lsof",
    "ps", "kill", "pkill", "top", "htop", "df", "du", "free", "uname", "env", "export", "source",
    "echo", "printf", "bash", "sh", "zsh", "brew", "apt", "apt-get", "yum", "dnf", "apk", "nix",
    "mf", "diff", "wc", "sort", "uniq", "cut", "tee", "watch", "crontab", "ffmpeg", "cd",
    "supervisorctl", "pm2", "celery", "gunicorn", "uvicorn", "alembic", "prisma", "gh", "glab",
    "svn", "hg", "perl", "lua", "tmux", "nc", "telnet", "jest", "vitest", "eslint", "prettier",
    "tsc", "mypy", "ruff", "black", "flake8", "clippy-driver", "rg",
];
/// Commands that are also English words: they need a flag or a path-like argument.
pub(super) const AMBIGUOUS_COMMANDS: &[&str] = &[
    "make", "find", "cat", "head", "tail", "sort", "touch", "cd", "go", "kill", "top", "watch",
    "echo", "export", "source", "free", "less", "env", "diff", "cut", "tee", "service", "kind",
    "ping", "dig", "black", "uv",
];
pub(super) const COMMAND_KEYS: &[&str] = &[
    "cmd",
    "command",
    "commands",
    "script",
    "shell",
    "bash",
    "sh",
    "run",
    "commandline",
    "command_line",
    "cmdline",
];
#[rustfmt::skip]
pub(super) const FILE_EXTENSIONS: &[&str] = &[
    "rs", "py", "js", "mjs", "cjs", "ts", "tsx", "jsx", "go", "java", "kt", "rb", "php", "c", "h",
    "cc", "cpp", "hpp", "cs", "swift", "m", "scala", "sh", "bash", "zsh", "ps1", "toml", "yaml",
    "yml", "json", "jsonl", "ndjson", "xml", "ini", "cfg", "conf", "env", "lock", "md", "rst",
    "txt", "csv", "tsv", "log", "sql", "html", "htm", "css", "scss", "vue", "svelte", "proto",
    "graphql", "tf", "tfvars", "hcl", "dockerfile", "gradle", "pdf", "docx", "xlsx", "pptx", "png",
    "jpg", "jpeg", "gif", "svg", "zip", "gz", "tgz", "tar", "parquet", "ipynb", "lua", "pl", "r",
    "dart", "ex", "exs", "erl", "hs", "ml", "zig", "nix", "pem", "crt", "key", "pub", "service",
    "timer", "socket", "plist", "bak", "db", "sqlite", "wasm", "so", "dll", "exe",
];
#[rustfmt::skip]
pub(super) const NOT_FILES: &[&str] = &[
    "node.js", "vue.js", "next.js", "nuxt.js", "react.js", "express.js", "d3.js", "three.js",
    "chart.js", "ember.js", "nest.js", "deno.land",
];
#[rustfmt::skip]
pub(super) const URL_SCHEMES: &[&str] = &[
    "http://", "https://", "ftp://", "ssh://", "git://", "s3://", "gs://", "ws://", "wss://",
    "file://", "postgres://", "postgresql://", "mysql://", "redis://", "rediss://", "mongodb://",
    "mongodb+srv://", "amqp://", "jdbc:",
];
#[rustfmt::skip]
pub(super) const STOP_WORDS: &[&str] = &[
    "the", "a", "an", "is", "are", "was", "were", "be", "been", "it", "its", "it's", "this",
    "that", "to", "of", "in", "on", "at", "for", "and", "or", "but", "not", "now", "so", "we",
    "our", "you", "your", "i", "my", "me", "us", "with", "from", "by", "as", "has", "have", "had",
    "will", "would", "should", "can", "could", "just", "also", "then", "there", "here", "what",
    "which", "who", "please", "sorry", "got", "get", "use", "using", "instead", "actually",
    "correction", "update", "updated", "changed", "change", "longer", "rather", "than", "wrong",
    "record", "right", "that's", "let", "let's", "keep", "mind", "note", "noted", "said", "says",
    "make", "sure", "all", "any", "one", "more", "less", "into", "out", "off", "up", "down",
    "since", "until", "after", "before", "again", "still", "yet", "do", "does", "did", "done",
];

pub(super) fn is_error_word(w: &str) -> bool {
    ERROR_WORDS.contains(&w)
}

pub(super) fn month_index(w: &str) -> Option<usize> {
    let l = w.trim_end_matches('.');
    if !(3..=9).contains(&l.len()) || !l.as_bytes()[0].is_ascii_alphabetic() {
        return None;
    }
    if l.eq_ignore_ascii_case("sept") {
        return Some(8);
    }
    MONTHS.iter().position(|(full, abbr)| {
        l.eq_ignore_ascii_case(full) || (l.eq_ignore_ascii_case(abbr) && *abbr != "may")
    })
}

pub(super) fn weekday(w: &str) -> bool {
    (6..=9).contains(&w.len()) && WEEKDAYS.iter().any(|d| w.eq_ignore_ascii_case(d))
}

// ---------------------------------------------------------------------------------------------
// Single-token classifiers

pub(super) fn is_url(w: &str) -> bool {
    if !(w.contains("://")
        || w.contains(':') && w.len() > 5 && text::starts_with_ignore_ascii_case(w, "jdbc:"))
        && !(w.len() > 4 && text::starts_with_ignore_ascii_case(w, "www."))
    {
        return false;
    }
    let l = w.to_ascii_lowercase();
    URL_SCHEMES
        .iter()
        .any(|s| l.starts_with(s) && l.len() > s.len() + 1)
        || (l.starts_with("www.") && l[4..].chars().next().is_some_and(char::is_alphanumeric))
}

pub(super) fn is_email(w: &str) -> bool {
    if let Some(handle) = w.strip_prefix('@') {
        return (2..=39).contains(&handle.len())
            && handle.chars().next().is_some_and(char::is_alphanumeric)
            && handle.chars().any(char::is_alphabetic)
            && handle
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
            && !handle.ends_with(['.', '-']);
    }
    let Some((local, domain)) = w.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && local
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '%' | '+' | '-'))
        && domain.contains('.')
        && domain
            .split('.')
            .all(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        && domain
            .rsplit('.')
            .next()
            .is_some_and(|tld| tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic()))
}

/// Top-level directories a one-segment absolute path may name.
const ROOT_DIRS: &[&str] = &[
    "bin",
    "boot",
    "dev",
    "etc",
    "home",
    "lib",
    "lib64",
    "media",
    "mnt",
    "opt",
    "proc",
    "root",
    "run",
    "sbin",
    "srv",
    "sys",
    "tmp",
    "usr",
    "var",
    "work",
    "workspace",
    "app",
    "data",
    "nix",
    "Users",
    "Applications",
    "Library",
    "Volumes",
    "private",
];

pub(super) fn path_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | '@' | '+' | '~' | '%' | ',' | '=')
}

/// The path without a `:LINE[:COL]` suffix, if `w` is a path.
pub(super) fn path_of(w: &str) -> Option<&str> {
    let mut p = w;
    // foo.rs:12 or foo.rs:12:5
    for _ in 0..2 {
        if let Some((head, tail)) = p.rsplit_once(':')
            && !tail.is_empty()
            && tail.bytes().all(|b| b.is_ascii_digit())
        {
            p = head;
        }
    }
    if p.len() < 2 {
        return None;
    }
    let bytes = p.as_bytes();
    // Windows: C:\dir\file.txt
    if bytes.len() > 3 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && bytes[2] == b'\\' {
        return Some(p);
    }
    if !p.chars().all(path_char) || p.contains("//") || p.ends_with(',') {
        return None;
    }
    let segs = |s: &str| -> bool {
        s.split('/').filter(|x| !x.is_empty()).count() >= 1 && s.chars().any(char::is_alphabetic)
    };
    if let Some(rest) = p.strip_prefix("~/") {
        return segs(rest).then_some(p);
    }
    if let Some(rest) = p.strip_prefix("./").or_else(|| p.strip_prefix("../")) {
        return segs(rest).then_some(p);
    }
    if let Some(rest) = p.strip_prefix('/') {
        let first = rest.split('/').next().unwrap_or("");
        // One segment with no extension (`/div`, `/span`, `/help`): a closing tag, a route or a
        // slash command far more often than a file, unless it is a well-known root.
        let lone = !rest.trim_end_matches('/').contains(['/', '.']);
        if lone && !ROOT_DIRS.contains(&rest.trim_end_matches('/')) {
            return None;
        }
        return (first.len() >= 2 && first.chars().any(char::is_alphabetic) && segs(rest))
            .then_some(p);
    }
    let last = p.rsplit('/').next().unwrap_or(p);
    let ext_ok = |known_only: bool| -> bool {
        let Some((stem, ext)) = last.rsplit_once('.') else {
            return false;
        };
        let stem = stem.trim_start_matches('.');
        let ext_l = ext.to_ascii_lowercase();
        !ext.is_empty()
            && ext.len() <= 10
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
            && (!known_only || FILE_EXTENSIONS.contains(&ext_l.as_str()))
            && (!stem.is_empty() || last.starts_with('.'))
    };
    if p.contains('/') {
        let first = p.chars().next().unwrap_or(' ');
        return ((first.is_alphanumeric() || first == '.' || first == '_')
            && p.split('/').all(|s| !s.is_empty())
            && ext_ok(false))
        .then_some(p);
    }
    // A bare file name: a known extension, a stem with a letter.
    let l = p.to_ascii_lowercase();
    (ext_ok(true)
        && !NOT_FILES.contains(&l.as_str())
        && last.chars().any(char::is_alphabetic)
        && !p.contains(['@', '+', '~', '%', ',', '=']))
    .then_some(p)
}

pub(super) fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

pub(super) fn iso_date(w: &str) -> Option<(String, Option<String>)> {
    let b = w.as_bytes();
    if b.len() < 10 || !b[..10].is_ascii() {
        return None;
    }
    let (y, m, d) = (&w[0..4], &w[5..7], &w[8..10]);
    let sep = b[4];
    if !(sep == b'-' || sep == b'/') || b[7] != sep || !all_digits(y) || !all_digits(m) {
        return None;
    }
    if !all_digits(d) {
        return None;
    }
    let (mn, dn): (u32, u32) = (m.parse().ok()?, d.parse().ok()?);
    if !(1..=12).contains(&mn) || !(1..=31).contains(&dn) {
        return None;
    }
    let date = format!("{y}-{m}-{d}");
    let rest = &w[10..];
    if rest.is_empty() {
        return Some((date, None));
    }
    // A time part: T07:42[:10[.123]][Z|+01:00]
    let t = rest.strip_prefix(['T', 't', '_'])?;
    let ok = t.len() >= 5
        && t.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, ':' | '.' | 'Z' | 'z' | '+' | '-'))
        && t.as_bytes()[2] == b':';
    ok.then(|| (w.to_ascii_lowercase(), Some(date)))
}

pub(super) fn slash_date(w: &str) -> bool {
    let parts: Vec<&str> = w.split('/').collect();
    parts.len() == 3
        && parts.iter().all(|p| all_digits(p))
        && parts[0].len() <= 2
        && parts[1].len() <= 2
        && (parts[2].len() == 4 || parts[2].len() == 2)
        && parts[0].parse::<u32>().is_ok_and(|v| (1..=31).contains(&v))
        && parts[1].parse::<u32>().is_ok_and(|v| (1..=31).contains(&v))
}

/// `14:05`, `14:05:30`, `9:30pm`, `10am`: the normalised time.
pub(super) fn time_of(w: &str) -> Option<String> {
    if !w.as_bytes().first().is_some_and(u8::is_ascii_digit) || w.len() > 12 {
        return None;
    }
    let l = w.to_ascii_lowercase();
    let (body, suffix) = if let Some(b) = l.strip_suffix("am") {
        (b, "am")
    } else if let Some(b) = l.strip_suffix("pm") {
        (b, "pm")
    } else {
        (l.as_str(), "")
    };
    let parts: Vec<&str> = body.split(':').collect();
    let ok = match parts.as_slice() {
        [h] => {
            !suffix.is_empty()
                && all_digits(h)
                && h.parse::<u32>().is_ok_and(|v| (1..=12).contains(&v))
        }
        [h, m] | [h, m, _] => {
            all_digits(h)
                && h.len() <= 2
                && m.len() == 2
                && all_digits(m)
                && h.parse::<u32>().is_ok_and(|v| v <= 24)
                && m.parse::<u32>().is_ok_and(|v| v < 60)
                && parts.get(2).is_none_or(|s| {
                    let s = s.split('.').next().unwrap_or("");
                    s.len() == 2 && all_digits(s)
                })
        }
        _ => false,
    };
    ok.then(|| format!("{body}{suffix}"))
}

pub(super) fn is_year(w: &str) -> bool {
    w.len() == 4 && all_digits(w) && w.parse::<u32>().is_ok_and(|y| (1900..=2100).contains(&y))
}

/// Unit aliases: for a unit written as a separate word (`3.5 GB`) and attached (`250ms`).
pub(super) fn unit_alias(u: &str, attached: bool) -> Option<&'static str> {
    let l = u.to_ascii_lowercase();
    let word = match l.as_str() {
        "ms" | "msec" | "msecs" | "millisecond" | "milliseconds" => "ms",
        "µs" | "μs" | "microseconds" => "us",
        "ns" | "nanoseconds" => "ns",
        "sec" | "secs" | "second" | "seconds" => "s",
        "min" | "mins" | "minute" | "minutes" => "min",
        "hr" | "hrs" | "hour" | "hours" => "h",
        "day" | "days" => "d",
        "wk" | "wks" | "week" | "weeks" => "wk",
        "month" | "months" => "mo",
        "yr" | "yrs" | "year" | "years" => "y",
        "kb" | "mb" | "gb" | "tb" | "pb" | "kib" | "mib" | "gib" | "tib" => match l.as_str() {
            "kb" => "kb",
            "mb" => "mb",
            "gb" => "gb",
            "tb" => "tb",
            "pb" => "pb",
            "kib" => "kib",
            "mib" => "mib",
            "gib" => "gib",
            _ => "tib",
        },
        "byte" | "bytes" => "b",
        "%" | "percent" | "pct" => "%",
        "rps" | "req/s" | "reqs/s" | "requests/s" => "rps",
        "qps" => "qps",
        "tps" => "tps",
        "rpm" => "rpm",
        "usd" | "dollar" | "dollars" => "$",
        "eur" | "euro" | "euros" => "€",
        "gbp" => "£",
        "cores" | "vcpu" | "vcpus" => "cpu",
        "fps" => "fps",
        "hz" | "khz" | "mhz" | "ghz" => match l.as_str() {
            "hz" => "hz",
            "khz" => "khz",
            "mhz" => "mhz",
            _ => "ghz",
        },
        "kbps" | "mbps" | "gbps" => match l.as_str() {
            "kbps" => "kbps",
            "mbps" => "mbps",
            _ => "gbps",
        },
        "px" => "px",
        "°c" => "c",
        "°f" => "f",
        _ => "",
    };
    if !word.is_empty() {
        return Some(word);
    }
    if !attached {
        return None;
    }
    Some(match l.as_str() {
        "s" => "s",
        "m" => "m",
        "h" => "h",
        "d" => "d",
        "w" => "wk",
        "y" => "y",
        "k" => "k",
        "x" => "x",
        "b" => "b",
        "bn" => "bn",
        "mm" => "mm",
        "cm" => "cm",
        "km" => "km",
        "kg" => "kg",
        "g" => "g",
        "c" => "c",
        "us" => "us",
        _ => return None,
    })
}

/// A number, normalised: (value, unit). `$4,200.00` → (`4200`, `$`); `3.5GB` → (`3.5`, `gb`).
pub(super) fn parse_number(w: &str) -> Option<(String, Option<String>)> {
    let mut s = w.trim_start_matches(['~', '≈', '+']);
    let mut sign = "";
    if let Some(r) = s.strip_prefix(['-', '−']) {
        sign = "-";
        s = r;
    }
    let mut prefix = None;
    for (sym, unit) in [("US$", "$"), ("$", "$"), ("€", "€"), ("£", "£"), ("¥", "¥")] {
        if let Some(r) = s.strip_prefix(sym) {
            prefix = Some(unit);
            s = r;
            break;
        }
    }
    let digits_end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == ',' || c == '.' || c == '_'))
        .map_or(s.len(), |(i, _)| i);
    let num = &s[..digits_end];
    let num = num.trim_end_matches(['.', ',']);
    let suffix = &s[num.len()..];
    let suffix = suffix.trim_start_matches(['.', ',']);
    if num.is_empty() || !num.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    let (int, frac) = match num.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (num, None),
    };
    if frac.is_some_and(|f| f.is_empty() || !all_digits(f)) {
        return None;
    }
    // Thousands separators: groups of exactly three after the first.
    let int_clean: String = if int.contains([',', '_']) {
        let groups: Vec<&str> = int.split([',', '_']).collect();
        if groups[0].is_empty()
            || groups[0].len() > 3
            || groups[1..].iter().any(|g| g.len() != 3)
            || !groups.iter().all(|g| all_digits(g))
        {
            return None;
        }
        groups.concat()
    } else {
        if !all_digits(int) {
            return None;
        }
        int.to_string()
    };
    let mut value = format!("{sign}{int_clean}");
    if let Some(f) = frac {
        let f = f.trim_end_matches('0');
        if !f.is_empty() {
            value.push('.');
            value.push_str(f);
        }
    }
    let suffix = suffix.strip_prefix('-').unwrap_or(suffix);
    let suffix_unit = if suffix.is_empty() || suffix == "+" {
        None
    } else {
        Some(unit_alias(suffix, true)?)
    };
    let unit = match (prefix, suffix_unit) {
        (Some(p), Some(u)) => Some(format!("{p}{u}")),
        (Some(p), None) => Some(p.to_string()),
        (None, Some(u)) => Some(u.to_string()),
        (None, None) => None,
    };
    Some((value, unit))
}

pub(super) fn number_key(value: &str, unit: Option<&str>) -> (String, Option<String>) {
    match unit {
        Some(u) => (format!("num:{value}:{u}"), Some(format!("num:{value}"))),
        None => (format!("num:{value}"), None),
    }
}

pub(super) fn is_small_count(value: &str) -> bool {
    value.len() == 1 && all_digits(value)
}

pub(super) fn is_hex_id(w: &str) -> bool {
    let h = w.strip_prefix("0x").unwrap_or(w);
    let prefixed = h.len() < w.len();
    h.len() >= if prefixed { 2 } else { 7 }
        && h.len() <= 64
        && h.chars().all(|c| c.is_ascii_hexdigit())
        && (prefixed
            || (h.chars().any(|c| c.is_ascii_digit())
                && h.chars().any(|c| c.is_ascii_alphabetic())))
        && (h.chars().all(|c| !c.is_ascii_uppercase())
            || h.chars().all(|c| !c.is_ascii_lowercase()))
}

pub(super) fn is_uuid(w: &str) -> bool {
    let parts: Vec<&str> = w.split('-').collect();
    parts.len() == 5
        && parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
        && parts
            .iter()
            .all(|p| p.chars().all(|c| c.is_ascii_hexdigit()))
}

pub(super) fn is_ticket_key(w: &str) -> bool {
    let Some((head, tail)) = w.split_once('-') else {
        return false;
    };
    (1..=16).contains(&head.len())
        && head.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && head
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        && (1..=9).contains(&tail.len())
        && all_digits(tail)
}

pub(super) fn is_version(w: &str) -> bool {
    let (v, body) = match w.strip_prefix(['v', 'V']) {
        Some(b) => (true, b),
        None => (false, w),
    };
    let core = body.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.iter().all(|p| all_digits(p))
        && ((v && !parts.is_empty() && (parts.len() >= 2 || body.len() > core.len()))
            || parts.len() >= 3)
        && parts.len() <= 4
}

pub(super) fn is_ipv4(w: &str) -> bool {
    let host = w.split(['/', ':']).next().unwrap_or("");
    let parts: Vec<&str> = host.split('.').collect();
    parts.len() == 4
        && parts
            .iter()
            .all(|p| all_digits(p) && p.len() <= 3 && p.parse::<u32>().is_ok_and(|v| v <= 255))
        && w[host.len()..].chars().skip(1).all(|c| c.is_ascii_digit())
}

pub(super) fn is_ordinal(w: &str) -> bool {
    let l = w.to_ascii_lowercase();
    ["st", "nd", "rd", "th"]
        .iter()
        .any(|s| l.strip_suffix(s).is_some_and(all_digits))
}

pub(super) fn is_turn_label(w: &str) -> bool {
    w.strip_prefix('T').is_some_and(all_digits)
}

pub(super) fn is_code_identifier(w: &str) -> bool {
    if w.len() < 3
        || !w
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        || !w.chars().any(|c| c.is_ascii_alphabetic())
        || w.starts_with(['.', '-'])
        || w.ends_with(['.', '-'])
        || is_ordinal(w)
        || is_turn_label(w)
    {
        return false;
    }
    let digit = w.chars().any(|c| c.is_ascii_digit());
    let underscore = w.contains('_') && w.chars().filter(|c| c.is_ascii_alphabetic()).count() >= 2;
    let camel = w.chars().next().is_some_and(|c| c.is_ascii_lowercase())
        && w.as_bytes()
            .windows(2)
            .any(|p| p[0].is_ascii_lowercase() && p[1].is_ascii_uppercase());
    digit || underscore || camel
}

pub(super) fn error_code_single(w: &str) -> bool {
    let bytes = w.as_bytes();
    // rustc-style E0502
    if bytes.len() == 5 && bytes[0] == b'E' && all_digits(&w[1..]) {
        return true;
    }
    if w.starts_with("ERR") && w.len() >= 4 {
        let rest = &w[3..];
        if rest
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        {
            return true;
        }
    }
    if ERRNO.contains(&w) || ERROR_TYPES.contains(&w) {
        return true;
    }
    if w.starts_with("SIG") && w.len() >= 6 && w[3..].chars().all(|c| c.is_ascii_uppercase()) {
        return true;
    }
    // Exception types: KeyError, NullPointerException, io::ErrorKind is not one.
    if w.len() > 6
        && w.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '.')
        && (w.ends_with("Error") || w.ends_with("Exception"))
        && w != "Error"
    {
        return true;
    }
    // SCREAMING_SNAKE status names: PERMISSION_DENIED, DEADLINE_EXCEEDED, …
    if w.contains('_')
        && w.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    {
        const MARKS: &[&str] = &[
            "ERR",
            "FAIL",
            "DENIED",
            "TIMEOUT",
            "TIMED_OUT",
            "EXCEEDED",
            "REFUSED",
            "INVALID",
            "NOT_FOUND",
            "EXHAUSTED",
            "UNAVAILABLE",
            "UNAUTHENTICATED",
            "UNAUTHORIZED",
            "FORBIDDEN",
            "ABORTED",
            "CONFLICT",
        ];
        return MARKS.iter().any(|m| w.contains(m));
    }
    false
}

pub(super) fn issue_single(w: &str) -> Option<String> {
    if !w.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    if let Some(n) = w.strip_prefix('#') {
        return (all_digits(n) && n.len() <= 7).then(|| format!("#{n}"));
    }
    if let Some((repo, n)) = w.rsplit_once('#') {
        return (repo.contains('/')
            && all_digits(n)
            && repo
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.')))
        .then(|| format!("#{n}"));
    }
    let upper = w.to_ascii_uppercase();
    for p in ["GH-", "PR-", "PR#", "MR-", "GH#"] {
        if let Some(n) = upper.strip_prefix(p) {
            return (all_digits(n) && n.len() <= 7).then(|| format!("#{n}"));
        }
    }
    None
}

pub(super) fn lower(s: &str) -> String {
    s.to_lowercase()
}

pub(super) fn is_name_stop(w: &str) -> bool {
    static STOP: std::sync::LazyLock<HashSet<&'static str>> =
        std::sync::LazyLock::new(|| NAME_STOP.iter().copied().collect());
    STOP.contains(lower(w).as_str())
}

pub(super) fn is_name_word(w: &str) -> bool {
    let mut chars = w.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    first.is_uppercase()
        && w.chars().count() >= 2
        && w.chars().any(char::is_lowercase)
        && w.chars()
            .all(|c| c.is_alphabetic() || matches!(c, '\'' | '’' | '-'))
        && !is_name_stop(w)
        && !weekday(w)
        && month_index(w).is_none()
}

// ---------------------------------------------------------------------------------------------
// Extraction

pub(super) struct Extractor<'a> {
    text: &'a str,
    toks: Vec<Tok<'a>>,
    claimed: Vec<bool>,
    items: Vec<Item>,
}

impl<'a> Extractor<'a> {
    fn lc(&self, i: usize) -> Option<String> {
        self.toks.get(i).map(|t| t.core.to_ascii_lowercase())
    }

    fn claim(&mut self, from: usize, to: usize) {
        for c in &mut self.claimed[from..=to] {
            *c = true;
        }
    }

    fn span(&self, from: usize, to: usize) -> (Range<usize>, &'a str) {
        let r = self.toks[from].start..self.toks[to].end;
        (r.clone(), &self.text[r])
    }

    fn push(
        &mut self,
        class: ItemClass,
        from: usize,
        to: usize,
        key: String,
        base: Option<String>,
    ) {
        let (at, text) = self.span(from, to);
        self.items
            .push(Item::new(class, text, key, at).with_base(base));
        self.claim(from, to);
    }

    /// No punctuation between token `i` and the next.
    fn joined(&self, i: usize) -> bool {
        let t = &self.toks[i];
        !t.trailed
            && t.raw_start + t.raw.len() == t.end
            && self
                .toks
                .get(i + 1)
                .is_some_and(|n| !n.hard_start && n.start == n.raw_start)
    }

    fn run(mut self) -> Vec<Item> {
        self.lines();
        let n = self.toks.len();
        for i in 0..n {
            if self.claimed[i] {
                continue;
            }
            self.multi(i);
            if !self.claimed[i] {
                self.single(i);
            }
        }
        self.names();
        self.items.sort_by_key(|it| (it.at.start, it.at.end));
        self.items
    }

    /// Commands on their own lines or in backticks, and quoted error strings.
    fn lines(&mut self) {
        let text = self.text;
        let mut fence: Option<bool> = None;
        let mut offset = 0;
        for line in text.split_inclusive('\n') {
            let base = offset;
            offset += line.len();
            let body = line.trim_end_matches(['\n', '\r']);
            let t = body.trim_start();
            let lead = body.len() - t.len();
            if let Some(lang) = t.strip_prefix("```") {
                fence = match fence {
                    Some(_) => None,
                    None => {
                        let lang = lang.trim().to_ascii_lowercase();
                        Some(matches!(
                            lang.as_str(),
                            "" | "sh" | "bash" | "shell" | "console" | "zsh" | "terminal" | "fish"
                        ))
                    }
                };
                continue;
            }
            let prompt = t
                .strip_prefix("$ ")
                .map(|r| (r, true))
                .or_else(|| (fence == Some(true)).then_some((t, false)));
            if let Some((cmd, dollar)) = prompt {
                let cmd_trim = cmd.trim();
                let start =
                    base + lead + (t.len() - cmd.len()) + (cmd.len() - cmd.trim_start().len());
                if !cmd_trim.starts_with('#') && (dollar || looks_like_command(cmd_trim, true)) {
                    self.command(cmd_trim, start);
                }
            }
            if fence.is_none() {
                self.backticks(body, base);
                self.quoted_errors(body, base);
            }
        }
    }

    fn command(&mut self, cmd: &str, start: usize) {
        let cmd = cmd.trim_end_matches([',', ';']);
        if cmd.is_empty() || cmd.chars().count() > 200 {
            return;
        }
        self.items.push(Item::new(
            ItemClass::Command,
            cmd,
            norm_text(cmd),
            start..start + cmd.len(),
        ));
    }

    fn backticks(&mut self, line: &str, base: usize) {
        let mut rest = line;
        let mut pos = 0;
        while let Some(open) = rest.find('`') {
            if rest[open..].starts_with("``") {
                let skip = rest[open..].len() - rest[open..].trim_start_matches('`').len();
                pos += open + skip;
                rest = &rest[open + skip..];
                continue;
            }
            let after = &rest[open + 1..];
            let Some(close) = after.find('`') else { break };
            let inner = &after[..close];
            let inner_start = base + pos + open + 1;
            let t = inner.trim();
            if looks_like_command(t, false) {
                let s = inner_start + (inner.len() - inner.trim_start().len());
                self.command(t, s);
            }
            pos += open + 1 + close + 1;
            rest = &after[close + 1..];
        }
    }

    fn quoted_errors(&mut self, line: &str, base: usize) {
        let mut i = 0;
        while i < line.len() {
            let c = line[i..].chars().next().unwrap_or(' ');
            let close = match c {
                '"' => Some('"'),
                '“' => Some('”'),
                '\'' => Some('\''),
                '`' => Some('`'),
                _ => None,
            };
            let Some(close) = close else {
                i += c.len_utf8();
                continue;
            };
            // A single quote opens only at a word start (not in "don't").
            if c == '\''
                && line[..i]
                    .chars()
                    .next_back()
                    .is_some_and(char::is_alphanumeric)
            {
                i += 1;
                continue;
            }
            let from = i + c.len_utf8();
            let Some(rel) = line[from..].find(close) else {
                break;
            };
            let mut end = from + rel;
            if close == '\'' {
                // The closing quote must end a word: skip apostrophes inside words.
                let mut search = from;
                let mut found = None;
                while let Some(r) = line[search..].find('\'') {
                    let at = search + r;
                    let next = line[at + 1..].chars().next();
                    if next.is_none_or(|n| !n.is_alphanumeric()) {
                        found = Some(at);
                        break;
                    }
                    search = at + 1;
                }
                match found {
                    Some(a) => end = a,
                    None => break,
                }
            }
            let inner = &line[from..end];
            self.quoted(line, inner, from, end, base);
            i = end + close.len_utf8();
        }
    }

    fn quoted(&mut self, line: &str, inner: &str, from: usize, end: usize, base: usize) {
        let t = inner.trim();
        let n = t.chars().count();
        if !(4..=160).contains(&n) || !t.chars().any(char::is_alphabetic) {
            return;
        }
        let single = !t.contains(char::is_whitespace);
        if single || looks_like_command(t, false) {
            return;
        }
        let words = |s: &str| -> bool {
            s.split(|c: char| !(c.is_alphanumeric() || c == '\''))
                .any(|w| is_error_word(&w.to_lowercase()))
        };
        // The context: up to 80 characters either side, within the sentence.
        let mut window_start = floor_char(line, from.saturating_sub(80));
        if let Some(p) = [". ", "! ", "? "]
            .iter()
            .filter_map(|s| {
                line[window_start..floor_char(line, from.saturating_sub(1)).max(window_start)]
                    .rfind(s)
            })
            .max()
        {
            window_start += p + 2;
        }
        let mut window_end = ceil_char(line, (end + 80).min(line.len()));
        if let Some(p) = [". ", "! ", "? "]
            .iter()
            .filter_map(|s| line[end..window_end].find(s))
            .min()
        {
            window_end = end + p + 1;
        }
        let context = &line[window_start..window_end];
        if words(t) || words(context) {
            let s = base + from + (inner.len() - inner.trim_start().len());
            self.items.push(Item::new(
                ItemClass::QuotedError,
                t,
                norm_text(t),
                s..s + t.len(),
            ));
        }
    }

    /// Patterns spanning several tokens that start at token `i`.
    fn multi(&mut self, i: usize) {
        let core = self.toks[i].core;
        // Most tokens start no pattern: skip them without allocating.
        let first = core.as_bytes()[0];
        if !(first.is_ascii_alphanumeric()
            || matches!(first, b'$' | b'~' | b'+' | b'-')
            || first >= 0x80)
            || core.len() > 24
        {
            return;
        }
        // Lower case only for the short words that start a pattern.
        let l = if first.is_ascii_alphabetic() && core.len() <= 10 {
            core.to_ascii_lowercase()
        } else {
            String::new()
        };
        // HTTP 503, HTTP/1.1 503
        if (l == "http" || l == "https" || l.starts_with("http/"))
            && let Some(n) = self.toks.get(i + 1).map(|t| t.core)
            && http_status(n)
            && !self.claimed[i + 1]
        {
            self.push(
                ItemClass::ErrorCode,
                i,
                i + 1,
                format!("http:{n}"),
                Some(format!("num:{n}")),
            );
            return;
        }
        // exit code 2, exited with 137, exit status 1, return code 3
        if (matches!(
            l.as_str(),
            "exit" | "exited" | "exits" | "exiting" | "returncode"
        ) || (l == "return" && self.lc(i + 1).as_deref() == Some("code")))
            && !self.toks[i].trailed
        {
            let mut j = i + 1;
            while j < self.toks.len()
                && j <= i + 3
                && !self.toks[j].trailed
                && matches!(
                    self.lc(j).as_deref(),
                    Some("code" | "status" | "with" | "a" | "an" | "of" | "=")
                )
            {
                j += 1;
            }
            if let Some(t) = self.toks.get(j)
                && all_digits(t.core)
                && t.core.len() <= 3
                && !t.hard_start
            {
                let key = format!("exit:{}", t.core);
                self.push(ItemClass::ErrorCode, i, j, key, None);
                return;
            }
        }
        // PR 45, PR #45, issue 12, pull request #45, MR !12
        let issue_word = matches!(
            l.as_str(),
            "pr" | "mr" | "issue" | "issues" | "prs" | "ticket"
        ) || (l == "pull" && self.lc(i + 1).as_deref() == Some("request"));
        if issue_word {
            let j = if l == "pull" { i + 2 } else { i + 1 };
            if let Some(t) = self.toks.get(j) {
                let n = t.core.trim_start_matches(['#', '!']);
                if all_digits(n) && n.len() <= 7 && (l != "ticket" || t.core.starts_with('#')) {
                    let key = format!("#{n}");
                    self.push(ItemClass::Issue, i, j, key, None);
                    return;
                }
            }
        }
        // Weekday before a date: one item, keyed by the date.
        if weekday(core) {
            let next = i + 1;
            let can_join = !self.toks[i].trailed || self.toks[i].raw.ends_with(',');
            if can_join && next < self.toks.len() && !self.toks[next].hard_start {
                if let Some((key, base)) = iso_date(self.toks[next].core) {
                    self.push(ItemClass::Date, i, next, key, base);
                    return;
                }
                if let Some((to, key, base)) = self.month_date(next) {
                    self.push(ItemClass::Date, i, to, key, base);
                    return;
                }
            }
            if core.chars().next().is_some_and(char::is_uppercase) {
                self.push(ItemClass::Date, i, i, core.to_ascii_lowercase(), None);
            }
            return;
        }
        if let Some((to, key, base)) = self.month_date(i) {
            self.push(ItemClass::Date, i, to, key, base);
            return;
        }
        // 14 March [2026]
        if all_digits(core)
            && core.len() <= 2
            && core.parse::<u32>().is_ok_and(|d| (1..=31).contains(&d))
            && let Some(m) = self.toks.get(i + 1)
            && !self.toks[i].trailed
            && m.core.chars().next().is_some_and(char::is_uppercase)
            && let Some(mi) = month_index(m.core)
        {
            let month = MONTHS[mi].0;
            if let Some(y) = self.toks.get(i + 2)
                && is_year(y.core)
                && !m.trailed
            {
                let key = format!("{month} {core} {}", y.core);
                self.push(
                    ItemClass::Date,
                    i,
                    i + 2,
                    key,
                    Some(format!("{month} {core}")),
                );
            } else {
                self.push(ItemClass::Date, i, i + 1, format!("{month} {core}"), None);
            }
            return;
        }
        // Times with a zone or am/pm: 14:05 UTC, 9:30pm, 3 pm
        let next_lc = self
            .toks
            .get(i + 1)
            .filter(|n| !n.hard_start && !self.toks[i].trailed)
            .map(|n| n.core.to_ascii_lowercase());
        let ampm = |w: &str| matches!(w, "am" | "pm" | "a.m" | "p.m");
        let bare_hour = all_digits(core)
            && core.parse::<u32>().is_ok_and(|h| (1..=12).contains(&h))
            && next_lc.as_deref().is_some_and(ampm);
        let time = time_of(core);
        if time.is_some() || bare_hour {
            let time = time.unwrap_or_else(|| core.to_string());
            let (mut to, mut key, mut base) = (i, time.clone(), None);
            if let Some(next) = next_lc {
                if ampm(&next) && !time.ends_with('m') {
                    to = i + 1;
                    key = format!("{time}{}", next.replace('.', ""));
                } else if TIMEZONES.contains(&next.as_str())
                    || (next.starts_with("utc") && next.len() > 3)
                {
                    to = i + 1;
                    base = Some(time.clone());
                    key = format!("{time} {next}");
                }
            }
            self.push(ItemClass::Date, i, to, key, base);
            return;
        }
        // 3.5 GB, 250 ms, 12 percent
        if let Some((value, None)) = parse_number(core)
            && !self.toks[i].trailed
            && let Some(next) = self.toks.get(i + 1)
            && !next.hard_start
            && let Some(unit) = unit_alias(next.core, false)
        {
            let (key, base) = number_key(&value, Some(unit));
            self.push(ItemClass::Number, i, i + 1, key, base);
        }
    }

    /// `March 14`, `Mar 14, 2026`, `March 2026` starting at token `i`: (last token, key, base).
    fn month_date(&self, i: usize) -> Option<(usize, String, Option<String>)> {
        let m = self.toks.get(i)?;
        let mi = month_index(m.core)?;
        if !m.core.chars().next().is_some_and(char::is_uppercase) {
            return None;
        }
        let month = MONTHS[mi].0;
        let d = self.toks.get(i + 1)?;
        if d.hard_start || m.trailed {
            return None;
        }
        let day = d
            .core
            .trim_end_matches(|c: char| c.is_ascii_alphabetic())
            .to_string();
        let suffix_ok = d.core.len() == day.len() || is_ordinal(d.core);
        if all_digits(&day)
            && day.len() <= 2
            && suffix_ok
            && day.parse::<u32>().is_ok_and(|v| (1..=31).contains(&v))
        {
            let day = day.trim_start_matches('0').to_string();
            if let Some(y) = self.toks.get(i + 2)
                && is_year(y.core)
                && !y.hard_start
            {
                return Some((
                    i + 2,
                    format!("{month} {day} {}", y.core),
                    Some(format!("{month} {day}")),
                ));
            }
            return Some((i + 1, format!("{month} {day}"), None));
        }
        if is_year(d.core) {
            return Some((i + 1, format!("{month} {}", d.core), None));
        }
        None
    }

    fn single(&mut self, i: usize) {
        let t = self.toks[i];
        let w = t.core;
        // A plain lower-case word is none of the classes below (each needs a digit, an upper-case
        // letter, or punctuation): most tokens stop here.
        if w.bytes().all(|b| b.is_ascii_lowercase()) {
            return;
        }
        // list numbering ("1." at a line start) is layout, not a number
        if t.line_start && is_list_number(t.raw) {
            return;
        }
        // KEY=VALUE, ranges (1–13, 09:00-12:00): classify the parts.
        for sep in ['=', '–', '—'] {
            if w.contains(sep) && !is_url(w) {
                self.parts(i, sep);
                return;
            }
        }
        if is_url(w) {
            let key = w.to_ascii_lowercase().trim_end_matches('/').to_string();
            self.push(ItemClass::Url, i, i, key, None);
            return;
        }
        if is_email(w) {
            self.push(ItemClass::Email, i, i, w.to_ascii_lowercase(), None);
            return;
        }
        if let Some(key) = issue_single(w) {
            self.push(ItemClass::Issue, i, i, key, None);
            return;
        }
        if let Some((key, base)) = iso_date(w) {
            self.push(ItemClass::Date, i, i, key, base);
            return;
        }
        if slash_date(w) || is_year(w) {
            self.push(ItemClass::Date, i, i, w.to_string(), None);
            return;
        }
        if let Some(time) = time_of(w) {
            self.push(ItemClass::Date, i, i, time, None);
            return;
        }
        if let Some(p) = path_of(w) {
            let (at, _) = self.span(i, i);
            let key = p.trim_end_matches('/').to_lowercase();
            self.items.push(Item::new(
                ItemClass::Path,
                p,
                key,
                at.start..at.start + p.len(),
            ));
            self.claim(i, i);
            return;
        }
        if error_code_single(w) {
            self.push(ItemClass::ErrorCode, i, i, w.to_ascii_lowercase(), None);
            return;
        }
        if http_status(w) && self.http_context(i) {
            self.push(
                ItemClass::ErrorCode,
                i,
                i,
                format!("http:{w}"),
                Some(format!("num:{w}")),
            );
            return;
        }
        if is_uuid(w) || is_hex_id(w) || is_ticket_key(w) || is_version(w) || is_ipv4(w) {
            self.push(ItemClass::Identifier, i, i, w.to_ascii_lowercase(), None);
            return;
        }
        if let Some((value, unit)) = parse_number(w) {
            let prev = i.checked_sub(1).and_then(|p| self.lc(p));
            let turn_number = matches!(prev.as_deref(), Some("turn" | "turns"));
            if (unit.is_some() || !is_small_count(&value)) && !turn_number {
                let (key, base) = number_key(&value, unit.as_deref());
                self.push(ItemClass::Number, i, i, key, base);
            }
            return;
        }
        // host:port → the port is a number
        if let Some((host, port)) = w.rsplit_once(':')
            && all_digits(port)
            && port.len() >= 2
            && port.len() <= 5
            && host.chars().next().is_some_and(char::is_alphabetic)
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
        {
            let s = t.start + host.len() + 1;
            self.items.push(Item::new(
                ItemClass::Number,
                port,
                format!("num:{port}"),
                s..s + port.len(),
            ));
            self.claim(i, i);
            return;
        }
        if is_code_identifier(w) {
            self.push(ItemClass::Identifier, i, i, w.to_ascii_lowercase(), None);
        }
    }

    /// Classify the parts of a token split at `sep`, as if each were a token of its own.
    fn parts(&mut self, i: usize, sep: char) {
        let t = self.toks[i];
        let prev = i.checked_sub(1).and_then(|p| self.lc(p));
        if matches!(prev.as_deref(), Some("turn" | "turns")) {
            self.claim(i, i);
            return;
        }
        let mut offset = t.start;
        let mut items = Vec::new();
        for part in t.core.split(sep) {
            let (lead, core, _) = trim_core(part);
            if !core.is_empty() {
                let sub = Extractor {
                    text: self.text,
                    toks: vec![Tok {
                        core,
                        start: offset + lead,
                        end: offset + lead + core.len(),
                        raw_start: offset,
                        raw: part,
                        sentence_start: false,
                        hard_start: false,
                        line_start: false,
                        trailed: false,
                    }],
                    claimed: vec![false],
                    items: Vec::new(),
                };
                let mut sub = sub;
                sub.single(0);
                items.extend(sub.items);
            }
            offset += part.len() + sep.len_utf8();
        }
        self.items.extend(items);
        self.claim(i, i);
    }

    fn http_context(&self, i: usize) -> bool {
        const BEFORE: &[&str] = &[
            "http",
            "status",
            "code",
            "returned",
            "returns",
            "returning",
            "return",
            "got",
            "gets",
            "getting",
            "throws",
            "threw",
            "responded",
            "responds",
            "response",
            "error",
        ];
        let prev = |k: usize| i.checked_sub(k).and_then(|p| self.lc(p));
        let p1 = prev(1);
        let p2 = prev(2);
        if p1.as_deref().is_some_and(|p| BEFORE.contains(&p)) {
            return true;
        }
        if matches!(p1.as_deref(), Some("a" | "an" | "the"))
            && p2.as_deref().is_some_and(|p| BEFORE.contains(&p))
        {
            return true;
        }
        let n1 = self.lc(i + 1);
        let n2 = self.lc(i + 2);
        matches!(
            (n1.as_deref(), n2.as_deref()),
            (
                Some("error" | "errors" | "response" | "responses" | "status" | "ok"),
                _
            ) | (Some("not"), Some("found" | "modified" | "acceptable"))
                | (Some("bad"), Some("request" | "gateway"))
                | (Some("internal"), Some("server"))
                | (Some("service"), Some("unavailable"))
                | (Some("gateway"), Some("timeout"))
                | (Some("too"), Some("many"))
                | (Some("no"), Some("content"))
                | (
                    Some(
                        "unauthorized"
                            | "forbidden"
                            | "conflict"
                            | "created"
                            | "accepted"
                            | "unprocessable"
                            | "gone",
                    ),
                    _,
                )
        )
    }

    /// Runs of capitalised words.
    fn names(&mut self) {
        let n = self.toks.len();
        let mut i = 0;
        while i < n {
            if self.claimed[i] || !is_name_word(self.toks[i].core) {
                i += 1;
                continue;
            }
            let mut j = i;
            loop {
                if !self.joined(j) || j + 1 >= n {
                    break;
                }
                let next = self.toks[j + 1];
                if !self.claimed[j + 1] && is_name_word(next.core) {
                    j += 1;
                    continue;
                }
                // "Bank of America", "Ludwig van Beethoven"
                if NAME_CONNECTORS.contains(&next.core)
                    && self.joined(j + 1)
                    && j + 2 < n
                    && !self.claimed[j + 2]
                    && is_name_word(self.toks[j + 2].core)
                {
                    j += 2;
                    continue;
                }
                break;
            }
            let single_at_start = j == i && self.toks[i].sentence_start;
            if !single_at_start {
                let (at, text) = self.span(i, j);
                let key = lower(&text.split_whitespace().collect::<Vec<_>>().join(" "));
                self.items.push(Item::new(ItemClass::Name, text, key, at));
                self.claim(i, j);
            }
            i = j + 1;
        }
    }
}

pub(super) fn floor_char(s: &str, i: usize) -> usize {
    text::floor(s, i)
}

pub(super) fn ceil_char(s: &str, i: usize) -> usize {
    text::ceil(s, i)
}

pub(super) fn http_status(w: &str) -> bool {
    w.len() == 3 && all_digits(w) && w.parse::<u32>().is_ok_and(|v| (100..=599).contains(&v))
}

pub(super) fn looks_like_command(s: &str, line: bool) -> bool {
    if s.is_empty() || s.chars().count() > 200 || s.contains('\n') {
        return false;
    }
    let mut words: Vec<&str> = s.split_whitespace().collect();
    // Environment assignments and sudo in front of the program.
    while words
        .first()
        .is_some_and(|w| w.contains('=') && !w.starts_with('-') && !w.starts_with('='))
    {
        words.remove(0);
    }
    if words.first() == Some(&"sudo") {
        words.remove(0);
    }
    let Some(first) = words.first() else {
        return false;
    };
    if first.starts_with("./") || first.starts_with("../") || first.starts_with("~/") {
        return first.len() > 2;
    }
    if !COMMANDS.contains(first) {
        return false;
    }
    if AMBIGUOUS_COMMANDS.contains(first) {
        return words.len() >= 2
            && words[1..].iter().any(|w| {
                w.starts_with('-') || w.contains('/') || w.contains('.') || w.contains('*')
            });
    }
    line || words.len() >= 2
}

/// The items of prose text (a message, a tool result, a summary).
pub fn extract(text: &str) -> Vec<Item> {
    let toks = tokenize(text);
    let claimed = vec![false; toks.len()];
    Extractor {
        text,
        toks,
        claimed,
        items: Vec::new(),
    }
    .run()
}

/// One argument value of a tool call and its items.
#[derive(Debug, Clone, PartialEq)]
pub struct Leaf {
    /// The argument's name (the innermost key).
    pub key: String,
    /// The value as text (a string verbatim, a number as written).
    pub value: String,
    pub items: Vec<Item>,
}

/// The argument values of a tool call, in order, each with its items.
///
/// JSON arguments are walked: a string under a command key (`cmd`, `command`, …) is a command
/// (and its paths are items too); other strings are read as prose, and a string that is only a
/// name (`"Dana Kim"`) is a name; numbers of two or more digits are numbers. Arguments that are
/// not JSON are read as prose.
pub fn call_leaves(args: &str) -> Vec<Leaf> {
    fn walk(v: &Value, key: &str, out: &mut Vec<Leaf>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    walk(v, k, out);
                }
            }
            Value::Array(a) => {
                if COMMAND_KEYS.contains(&key.to_ascii_lowercase().as_str())
                    && a.iter().all(Value::is_string)
                {
                    let joined: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
                    walk(&Value::String(joined.join(" ")), key, out);
                    return;
                }
                for v in a {
                    walk(v, key, out);
                }
            }
            Value::String(s) => {
                let mut items = Vec::new();
                let s_trim = s.trim();
                if COMMAND_KEYS.contains(&key.to_ascii_lowercase().as_str())
                    && !s_trim.is_empty()
                    && s_trim.chars().count() <= 300
                {
                    let first_line = s_trim.lines().next().unwrap_or("");
                    let cmd = if s_trim.contains('\n') {
                        first_line
                    } else {
                        s_trim
                    };
                    items.push(Item::new(ItemClass::Command, cmd, norm_text(cmd), 0..0));
                }
                // A command's items are those of its first line: what follows (a heredoc, a
                // script) is a body, like a file's content.
                let is_command = !items.is_empty();
                let mut inner = if is_command && s_trim.contains('\n') {
                    extract(s_trim.lines().next().unwrap_or(""))
                } else {
                    extract(s)
                };
                if inner.is_empty() && items.is_empty() {
                    let words: Vec<&str> = s_trim.split_whitespace().collect();
                    if (1..=4).contains(&words.len())
                        && words.iter().all(|w| {
                            let c = w.trim_end_matches(['.', ',']);
                            c.chars().next().is_some_and(char::is_uppercase)
                                && c.chars().any(char::is_lowercase)
                                && c.chars()
                                    .all(|c| c.is_alphabetic() || matches!(c, '\'' | '-'))
                        })
                        && !words.iter().any(|w| NAME_STOP.contains(&lower(w).as_str()))
                    {
                        inner.push(Item::new(ItemClass::Name, s_trim, lower(s_trim), 0..0));
                    }
                }
                items.extend(inner);
                if !items.is_empty() {
                    out.push(Leaf {
                        key: key.to_string(),
                        value: s.clone(),
                        items,
                    });
                }
            }
            Value::Number(n) => {
                let text = n.to_string();
                if let Some((value, unit)) = parse_number(&text)
                    && !is_small_count(&value)
                {
                    let (k, base) = number_key(&value, unit.as_deref());
                    out.push(Leaf {
                        key: key.to_string(),
                        value: text.clone(),
                        items: vec![Item::new(ItemClass::Number, &text, k, 0..0).with_base(base)],
                    });
                }
            }
            Value::Bool(_) | Value::Null => {}
        }
    }
    let mut out = Vec::new();
    match serde_json::from_str::<Value>(args) {
        Ok(v) => walk(&v, "", &mut out),
        Err(_) => {
            let items = extract(args);
            if !items.is_empty() {
                out.push(Leaf {
                    key: String::new(),
                    value: args.to_string(),
                    items,
                });
            }
        }
    }
    out
}

/// Split `[calls name(args)]` into name and arguments.
pub fn parse_call(text: &str) -> Option<(&str, &str)> {
    let body = text.trim().strip_prefix("[calls ")?.strip_suffix(")]")?;
    let open = body.find('(')?;
    Some((&body[..open], &body[open + 1..]))
}

// ---------------------------------------------------------------------------------------------
// Units: sentences with their items and source

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
const WRAPPER_TAGS: &[&str] = &["command-args", "bash-input", "user_query"];

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
        .chain([text.len()..text.len()])
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
const BODY_KEYS: &[&str] = &[
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
fn patch_paths(value: &str) -> Vec<Item> {
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
pub(super) fn segments(piece: &Piece) -> Vec<(Source, Range<usize>, bool)> {
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
