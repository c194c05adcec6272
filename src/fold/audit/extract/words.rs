//! Word lists and single-token classifiers: what one word is (a URL, a path, a date, a number
//! with its unit, an id, a version, an error code, part of a name).

use super::*;

pub(in crate::fold::audit) const MONTHS: [(&str, &str); 12] = [
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
pub(in crate::fold::audit) const WEEKDAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];
pub(in crate::fold::audit) const TIMEZONES: &[&str] = &[
    "utc", "gmt", "z", "cet", "cest", "eet", "eest", "wet", "west", "bst", "ist", "jst", "kst",
    "aest", "aedt", "pst", "pdt", "mst", "mdt", "cst", "cdt", "est", "edt", "hst", "akst",
];
#[rustfmt::skip]
pub(in crate::fold::audit) const ERRNO: &[&str] = &[
    "ECONNREFUSED", "ECONNRESET", "ECONNABORTED", "ENOENT", "EACCES", "EPERM", "ETIMEDOUT",
    "EADDRINUSE", "EADDRNOTAVAIL", "EPIPE", "ENOMEM", "ENOSPC", "EEXIST", "EAGAIN", "EHOSTUNREACH",
    "ENETUNREACH", "EMFILE", "ENFILE", "EBADF", "EINVAL", "EISDIR", "ENOTDIR", "ENOTEMPTY",
    "EROFS", "EBUSY", "EINTR", "EIO", "ENOTFOUND", "EAI_AGAIN", "EPROTO", "ESRCH", "EDEADLK",
];
pub(in crate::fold::audit) const ERROR_TYPES: &[&str] = &[
    "OOMKilled",
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "Segfault",
    "SegmentationFault",
];
#[rustfmt::skip]
pub(in crate::fold::audit) const ERROR_WORDS: &[&str] = &[
    "error", "errors", "errored", "failed", "fails", "fail", "failure", "failing", "exception",
    "panic", "panicked", "fatal", "refused", "denied", "timeout", "traceback", "crash", "crashed",
    "crashes", "cannot", "can't", "couldn't", "unable", "invalid", "rejected", "rejects",
    "aborted", "abort", "warning", "stderr",
];
/// Capitalised words that are not names.
#[rustfmt::skip]
pub(in crate::fold::audit) const NAME_STOP: &[&str] = &[
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
pub(in crate::fold::audit) const NAME_CONNECTORS: &[&str] = &[
    "de", "van", "von", "der", "den", "da", "di", "la", "le", "du", "bin", "al", "of", "y",
];
/// Programs whose first word makes a backticked span or a shell line a command.
#[rustfmt::skip]
pub(in crate::fold::audit) const COMMANDS: &[&str] = &[
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
pub(in crate::fold::audit) const AMBIGUOUS_COMMANDS: &[&str] = &[
    "make", "find", "cat", "head", "tail", "sort", "touch", "cd", "go", "kill", "top", "watch",
    "echo", "export", "source", "free", "less", "env", "diff", "cut", "tee", "service", "kind",
    "ping", "dig", "black", "uv",
];
pub(in crate::fold::audit) const COMMAND_KEYS: &[&str] = &[
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
/// Argument keys whose bare number places or bounds what a call reads (`read_file(offset: 1200,
/// limit: 400)`, `search_logs(turn: 17)`, `grep(-C: 3)`): a parameter of the action, not its
/// target, so not an item. A figure with a unit (`250ms`, `$4,200`) under them still is.
pub(in crate::fold::audit) const PARAMETER_KEYS: &[&str] = &[
    "offset",
    "limit",
    "line",
    "lines",
    "line_number",
    "start_line",
    "end_line",
    "view_range",
    "insert_line",
    "page",
    "page_size",
    "per_page",
    "turn",
    "head_limit",
    "max_results",
    "max_count",
    "depth",
    "cursor",
    "-a",
    "-b",
    "-c",
    "context",
    "timeout",
    "timeout_ms",
    "yield_time_ms",
    "max_output_tokens",
    "max_tokens",
    "tail",
    "head",
    "top_k",
];
#[rustfmt::skip]
pub(in crate::fold::audit) const FILE_EXTENSIONS: &[&str] = &[
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
pub(in crate::fold::audit) const NOT_FILES: &[&str] = &[
    "node.js", "vue.js", "next.js", "nuxt.js", "react.js", "express.js", "d3.js", "three.js",
    "chart.js", "ember.js", "nest.js", "deno.land",
];
#[rustfmt::skip]
pub(in crate::fold::audit) const URL_SCHEMES: &[&str] = &[
    "http://", "https://", "ftp://", "ssh://", "git://", "s3://", "gs://", "ws://", "wss://",
    "file://", "postgres://", "postgresql://", "mysql://", "redis://", "rediss://", "mongodb://",
    "mongodb+srv://", "amqp://", "jdbc:",
];
#[rustfmt::skip]
pub(in crate::fold::audit) const STOP_WORDS: &[&str] = &[
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

pub(in crate::fold::audit) fn is_error_word(w: &str) -> bool {
    ERROR_WORDS.contains(&w)
}

pub(in crate::fold::audit) fn month_index(w: &str) -> Option<usize> {
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

/// A weekday's name, or its plural (`Tuesdays`: a day a thing happens on, week after week).
pub(in crate::fold::audit) fn weekday(w: &str) -> bool {
    weekday_key(w).is_some()
}

/// The weekday a word names, singular and lowercase (`Tuesdays` → `tuesday`).
pub(in crate::fold::audit) fn weekday_key(w: &str) -> Option<String> {
    let one = match w.len() {
        7..=10 if w.ends_with(['s', 'S']) && !w.ends_with("ss") => &w[..w.len() - 1],
        _ => w,
    };
    [w, one]
        .into_iter()
        .find(|c| (6..=9).contains(&c.len()) && WEEKDAYS.iter().any(|d| c.eq_ignore_ascii_case(d)))
        .map(str::to_ascii_lowercase)
}

// ---------------------------------------------------------------------------------------------
// Single-token classifiers

pub(in crate::fold::audit) fn is_url(w: &str) -> bool {
    let scheme = w.contains("://")
        || (w.contains(':') && w.len() > 5 && text::starts_with_ignore_ascii_case(w, "jdbc:"));
    let www = w.len() > 4 && text::starts_with_ignore_ascii_case(w, "www.");
    if !scheme && !www {
        return false;
    }
    let l = w.to_ascii_lowercase();
    URL_SCHEMES
        .iter()
        .any(|s| l.starts_with(s) && l.len() > s.len() + 1)
        || (l.starts_with("www.") && l[4..].chars().next().is_some_and(char::is_alphanumeric))
}

pub(in crate::fold::audit) fn is_email(w: &str) -> bool {
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
pub(in crate::fold::audit) const ROOT_DIRS: &[&str] = &[
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

pub(in crate::fold::audit) fn path_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | '@' | '+' | '~' | '%' | ',' | '=')
}

/// The path without a `:LINE[:COL]` suffix, if `w` is a path.
pub(in crate::fold::audit) fn path_of(w: &str) -> Option<&str> {
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

pub(in crate::fold::audit) fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

pub(in crate::fold::audit) fn iso_date(w: &str) -> Option<(String, Option<String>)> {
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

pub(in crate::fold::audit) fn slash_date(w: &str) -> bool {
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
pub(in crate::fold::audit) fn time_of(w: &str) -> Option<String> {
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

pub(in crate::fold::audit) fn is_year(w: &str) -> bool {
    w.len() == 4 && all_digits(w) && w.parse::<u32>().is_ok_and(|y| (1900..=2100).contains(&y))
}

/// Unit aliases: for a unit written as a separate word (`3.5 GB`) and attached (`250ms`).
pub(in crate::fold::audit) fn unit_alias(u: &str, attached: bool) -> Option<&'static str> {
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
pub(in crate::fold::audit) fn parse_number(w: &str) -> Option<(String, Option<String>)> {
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

pub(in crate::fold::audit) fn number_key(
    value: &str,
    unit: Option<&str>,
) -> (String, Option<String>) {
    match unit {
        Some(u) => (format!("num:{value}:{u}"), Some(format!("num:{value}"))),
        None => (format!("num:{value}"), None),
    }
}

pub(in crate::fold::audit) fn is_small_count(value: &str) -> bool {
    value.len() == 1 && all_digits(value)
}

pub(in crate::fold::audit) fn is_hex_id(w: &str) -> bool {
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

pub(in crate::fold::audit) fn is_uuid(w: &str) -> bool {
    let parts: Vec<&str> = w.split('-').collect();
    parts.len() == 5
        && parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
        && parts
            .iter()
            .all(|p| p.chars().all(|c| c.is_ascii_hexdigit()))
}

pub(in crate::fold::audit) fn is_ticket_key(w: &str) -> bool {
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

pub(in crate::fold::audit) fn is_version(w: &str) -> bool {
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

pub(in crate::fold::audit) fn is_ipv4(w: &str) -> bool {
    let host = w.split(['/', ':']).next().unwrap_or("");
    let parts: Vec<&str> = host.split('.').collect();
    parts.len() == 4
        && parts
            .iter()
            .all(|p| all_digits(p) && p.len() <= 3 && p.parse::<u32>().is_ok_and(|v| v <= 255))
        && w[host.len()..].chars().skip(1).all(|c| c.is_ascii_digit())
}

pub(in crate::fold::audit) fn is_ordinal(w: &str) -> bool {
    let l = w.to_ascii_lowercase();
    ["st", "nd", "rd", "th"]
        .iter()
        .any(|s| l.strip_suffix(s).is_some_and(all_digits))
}

pub(in crate::fold::audit) fn is_turn_label(w: &str) -> bool {
    w.strip_prefix('T').is_some_and(all_digits)
}

pub(in crate::fold::audit) fn is_code_identifier(w: &str) -> bool {
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

pub(in crate::fold::audit) fn error_code_single(w: &str) -> bool {
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

pub(in crate::fold::audit) fn issue_single(w: &str) -> Option<String> {
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

pub(in crate::fold::audit) fn lower(s: &str) -> String {
    s.to_lowercase()
}

pub(in crate::fold::audit) fn is_name_stop(w: &str) -> bool {
    static STOP: std::sync::LazyLock<HashSet<&'static str>> =
        std::sync::LazyLock::new(|| NAME_STOP.iter().copied().collect());
    STOP.contains(lower(w).as_str())
}

pub(in crate::fold::audit) fn is_name_word(w: &str) -> bool {
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
