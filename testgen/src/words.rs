//! Word lists for the generators. Filler prose carries no facts: no digits, no capitalised
//! words after the first, no paths or code.

use crate::{DateKind, NumberKind};

pub const SYSTEM_PROMPT: &str = "You are a helpful engineering assistant for the platform team. You can search logs, query metrics, read files and run shell commands. Be precise about numbers, paths and times.";

pub const QUALIFIERS: &[&str] = &[
    "billing", "checkout", "search", "ledger", "ingest", "payments", "reports", "catalog",
    "shipping", "notify", "accounts", "pricing", "staging", "mobile", "partner", "export",
    "archive", "identity",
];

pub const NUMBER_SUBJECTS: &[(&str, NumberKind)] = &[
    ("port", NumberKind::Port),
    ("timeout", NumberKind::Millis),
    ("budget", NumberKind::Dollars),
    ("disk quota", NumberKind::Gigabytes),
    ("error budget", NumberKind::Percent),
    ("rate limit", NumberKind::Rps),
    ("pool size", NumberKind::Count),
    ("batch size", NumberKind::Thousands),
    ("retention period", NumberKind::Days),
    ("memory limit", NumberKind::Gigabytes),
    ("retry delay", NumberKind::Millis),
    ("monthly spend", NumberKind::Dollars),
];

pub const DATE_SUBJECTS: &[(&str, DateKind)] = &[
    ("release freeze", DateKind::Iso),
    ("migration window", DateKind::MonthDay),
    ("vendor demo", DateKind::TimeUtc),
    ("audit deadline", DateKind::MonthDayYear),
    ("cutover date", DateKind::Iso),
    ("maintenance slot", DateKind::TimeUtc),
    ("launch date", DateKind::MonthDay),
];

pub const PATH_NOUNS: &[&str] = &[
    "rollout config",
    "export script",
    "nginx vhost",
    "feature flags file",
    "cron definition",
    "schema migration",
    "alert rules",
];
pub const ID_NOUNS: &[&str] = &[
    "hotfix commit",
    "canary build",
    "change request",
    "trace handle",
    "release tag",
];
pub const URL_NOUNS: &[&str] = &[
    "latency dashboard",
    "runbook",
    "incident doc",
    "status page",
    "capacity sheet",
];
pub const EMAIL_NOUNS: &[&str] = &[
    "vendor contact",
    "on-call alias",
    "escalation contact",
    "budget owner",
];
pub const NAME_NOUNS: &[&str] = &[
    "release owner",
    "incident lead",
    "reviewer",
    "vendor",
    "approver",
];

pub const MONTH_NAMES: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

pub const SERVICES: &[&str] = &[
    "billing", "checkout", "search", "ledger", "ingest", "payments", "reports", "catalog",
    "shipping", "notify", "accounts", "pricing",
];
pub const FILE_STEMS: &[&str] = &[
    "settings",
    "rollout",
    "cache",
    "flags",
    "worker",
    "schedule",
    "limits",
    "export_job",
    "retry_policy",
    "routes",
];
pub const DIRS: &[&str] = &[
    "deploy",
    "config",
    "services",
    "infra",
    "charts",
    "migrations",
    "ops",
    "src",
];
pub const NAMESPACES: &[&str] = &["prod", "staging", "canary"];
pub const TEST_FILTERS: &[&str] = &["retry", "export", "ledger_sync", "parse"];
pub const TABLES: &[&str] = &["orders", "invoices", "events", "sessions", "refunds"];
pub const HOSTS: &[&str] = &[
    "grafana.acme.example",
    "wiki.acme.example",
    "status.acme.example",
    "runbooks.acme.example",
];

pub const FIRST_NAMES: &[&str] = &[
    "Marcus", "Dana", "Priya", "Tomas", "Aiko", "Lena", "Omar", "Grace", "Mateo", "Ingrid", "Kofi",
    "Sofia", "Ravi", "Elena", "Jonas", "Amara", "Felix", "Yara", "Nikolai", "Zainab", "Hugo",
    "Camille", "Darius", "Freya", "Luca", "Noor", "Soren", "Talia", "Viktor", "Wren",
];
#[rustfmt::skip]
pub const LAST_NAMES: &[&str] = &[
    "Webb", "Kim", "Raman", "Novak", "Tanaka", "Fischer", "Haddad", "Okafor", "Silva", "Berg",
    "Mensah", "Rossi", "Iyer", "Petrova", "Lindqvist", "Adeyemi", "Moreau", "Castillo", "Ahmadi",
    "Brennan", "Costa", "Dvorak", "Eriksen", "Farouk", "Gallo", "Horvat", "Ivanova", "Jensen",
    "Kowalski", "Laurent",
];
#[rustfmt::skip]
pub const COMPANIES: &[&str] = &[
    "Contoso", "Fabrikam", "Northwind", "Tailspin", "Litware", "Adatum", "Woodgrove", "Proseware",
    "Wingtip", "Lamna", "Relecloud", "Alpine",
];

pub const ERRNO: &[&str] = &[
    "ECONNREFUSED",
    "ECONNRESET",
    "ETIMEDOUT",
    "ENOSPC",
    "EACCES",
    "EADDRINUSE",
    "ENOENT",
    "EMFILE",
    "EHOSTUNREACH",
];
pub const ERR_WORDS: &[&str] = &[
    "CONN", "TLS", "CERT", "RESET", "TIMEOUT", "QUOTA", "AUTH", "SCHEMA", "PARSE", "LOCK",
];
#[rustfmt::skip]
pub const ERROR_MESSAGES: &[&str] = &[
    "connection reset by peer", "too many open files", "certificate has expired",
    "deadline exceeded while waiting for lock", "permission denied for schema reporting",
    "no space left on device", "upstream timed out while reading response header",
    "invalid token audience", "duplicate key value violates unique constraint",
    "could not serialize access due to concurrent update", "broken pipe while writing response",
    "unexpected end of input", "name resolution failed", "lock wait timeout exceeded",
    "out of memory while building index", "max retries exceeded for upstream",
    "request body too large", "failed to acquire lease",
];

#[rustfmt::skip]
pub const USER_FILLER: &[&str] = &[
    "I've been going back and forth on this all morning and I still don't have a clear picture.",
    "The team has been asking about it since the standup, so I'd like to get ahead of it.",
    "I don't want us to make things worse by guessing.",
    "Honestly this has been bugging me for a while.",
    "Take your time, but keep me posted as you go.",
    "We should be careful here, because the last change in this area caused a lot of noise.",
    "I think we need a clearer picture before we decide anything.",
    "It would be great if we could wrap this up today.",
    "My gut says it's something in the config, but I could be wrong.",
    "Let's not rush a fix before we understand what's going on.",
    "The dashboards look a bit odd to me, but maybe I'm reading them wrong.",
    "I'd rather have a boring fix than a clever one.",
    "Whatever we do, it needs to be easy to roll back.",
    "I told the others we would have an answer soon.",
    "This keeps coming up in the weekly review, so it matters.",
    "Support has been fielding complaints about it, which is never a good sign.",
    "I want to make sure we are not chasing a symptom instead of the cause.",
    "Please keep the explanation short, the others will read it later.",
    "We must not lose any data while we sort this out.",
    "If it turns out to be something trivial, that's fine too.",
];
pub const USER_REQUESTS: &[&str] = &[
    "Can you look into it?",
    "What do you suggest we do next?",
    "Please check the logs and tell me what you find.",
    "Can you figure out what changed?",
    "Could you double-check that before we move on?",
    "What would you recommend?",
    "Please dig into this and report back.",
    "Can you confirm that's what we're seeing?",
    "Let me know what you think.",
    "Can you summarize where we are?",
];
pub const ASSISTANT_PREAMBLES: &[&str] = &[
    "Let me check.",
    "Looking into it now.",
    "I'll pull the data first.",
    "Checking the logs first.",
];
#[rustfmt::skip]
pub const ASSISTANT_FILLER: &[&str] = &[
    "Let me look into that.", "That lines up with what I saw earlier in the logs.",
    "I'll keep an eye on the error rate while this rolls out.",
    "Nothing in the recent changes stands out yet, so I'm going to dig a little deeper.",
    "The pattern suggests the problem is upstream rather than in our own service.",
    "It's worth ruling out the obvious causes first.",
    "I went through the recent deploys and the configuration history.",
    "The retries are masking part of the problem, which makes the graphs look calmer than they are.",
    "We should be able to narrow this down with a couple more checks.",
    "I don't see anything alarming in the resource usage.",
    "This looks like a capacity issue rather than a code bug.",
    "The timing matches the window when traffic usually peaks.",
    "I would hold off on any rollback until we know more.",
    "There's a fair amount of noise in these logs, so I filtered out the routine entries.",
    "The good news is that nothing is failing outright.",
    "We will want to write this down in the incident notes later.",
    "I compared the healthy and unhealthy instances side by side.",
    "Most of the slow requests share the same code path.",
    "It could also be a slow dependency, so I checked those as well.",
    "I'm fairly confident about the cause, but I want one more data point.",
    "The alerting thresholds seem reasonable, so the pages were deserved.",
    "I'd suggest we keep the current settings until the next deploy window.",
    "From what I can tell, the cache is doing its job most of the time.",
    "It's a small change, but it touches a path every request goes through.",
];
pub const ASSISTANT_CLOSERS: &[&str] = &[
    "Let me know if you want me to go further.",
    "I can keep digging if you'd like.",
    "Tell me how you want to proceed.",
    "Happy to help with the next step.",
    "Shall I prepare a change for review?",
];

pub const LOG_QUERIES: &[&str] = &[
    "timeout errors",
    "connection resets",
    "slow queries",
    "failed jobs",
    "cache misses",
    "retry storms",
];
pub const METRICS: &[&str] = &["latency", "errors", "throughput", "saturation"];
pub const LOG_WARNINGS: &[&str] = &[
    "slow upstream response",
    "retrying request",
    "cache miss rate above threshold",
    "connection pool nearly exhausted",
];
pub const LOG_DEBUG: &[&str] = &[
    "heartbeat ok",
    "flushed batch",
    "rotated log segment",
    "refreshed token",
];
