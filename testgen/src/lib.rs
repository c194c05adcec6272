//! Deterministic generators of chat JSONL transcripts for testing and benchmarking mf.
//!
//! - [`facts`]: a work conversation of N turns with planted facts of every audit class (paths,
//!   commands, numbers, dates, identifiers, URLs, e-mail addresses, issue numbers, error codes,
//!   quoted errors, names) — in user turns, assistant replies, tool-call arguments and tool
//!   results — some later corrected ("the billing port is 9090, not 8080"), wrapped in filler
//!   prose and long tool outputs; with the list of planted facts and their latest values.
//! - [`agent_session`]: an agent session with one giant turn of hundreds of tool calls.
//! - [`long_session`]: one prompt and many tool calls in the session format of Claude Code,
//!   Codex or pi (or chat), as the agents write a single long task.
//! - [`bulk`]: a large synthetic transcript (a million lines, hundreds of MB) streamed to a
//!   writer, for benchmarks.
//!
//! Every output is a function of its arguments and the seed: no clock, no environment.
//! Lines are OpenAI chat messages: `{"id","role","content","tool_calls","tool_call_id","name"}`.

use std::collections::HashSet;
use std::io::{self, Write};

use serde::Serialize;

mod long;
pub mod score;
mod words;

pub use long::{Agent, LONG_PROMPT, long_session};

use words::*;

/// SplitMix64: small, fast, and the same on every platform and version.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() >> 11) % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + (self.next_u64() % (hi - lo + 1))
    }

    pub fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64) < p
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    pub fn shuffle<T>(&mut self, xs: &mut [T]) {
        for i in (1..xs.len()).rev() {
            let j = self.below(i + 1);
            xs.swap(i, j);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Messages

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Function {
    pub name: String,
    /// JSON text, as the OpenAI API carries it.
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub function: Function,
}

/// One chat message (one JSONL line).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Message {
    pub id: String,
    pub role: &'static str,
    pub content: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Message {
    /// A message of plain text: no tool calls, not a tool result.
    pub fn text(id: String, role: &'static str, content: String) -> Self {
        Self {
            id,
            role,
            content: Some(content),
            tool_calls: Vec::new(),
            tool_call_id: None,
            name: None,
        }
    }
}

/// Where a fact (or a correction) was said.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    User,
    Assistant,
    ToolCall,
    ToolResult,
}

impl Placement {
    pub fn as_str(self) -> &'static str {
        match self {
            Placement::User => "user",
            Placement::Assistant => "assistant",
            Placement::ToolCall => "tool-call",
            Placement::ToolResult => "tool-result",
        }
    }
}

/// The audit classes, by their kebab-case names (as mf's `ItemClass` serializes them).
pub const CLASSES: [&str; 11] = [
    "path",
    "command",
    "number",
    "date",
    "identifier",
    "url",
    "email",
    "issue",
    "error-code",
    "quoted-error",
    "name",
];

/// Classes whose facts may be corrected later.
const CORRECTABLE: [&str; 7] = [
    "path",
    "number",
    "date",
    "identifier",
    "url",
    "email",
    "name",
];

/// A planted fact.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Fact {
    /// The audit class (`path`, `number`, …).
    pub class: &'static str,
    /// What the value is of ("billing port"), for facts stated as `the SUBJECT is VALUE`.
    pub subject: String,
    /// The value as planted, verbatim.
    pub value: String,
    /// The value after any correction (`value` when never corrected).
    pub latest: String,
    /// Where it was planted.
    pub placed: Placement,
    /// The turn it was planted in (turns count from 1; the system preamble is turn 0).
    pub turn: u64,
    /// The turn that corrects it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub corrected_turn: Option<u64>,
    /// Who says the correction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub corrected_by: Option<Placement>,
}

/// A generated conversation and what was planted in it.
#[derive(Debug, Clone, PartialEq)]
pub struct Conversation {
    pub messages: Vec<Message>,
    pub facts: Vec<Fact>,
}

impl Conversation {
    /// The messages as JSONL (one message per line, each ending in a newline).
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for m in &self.messages {
            out.push_str(&serde_json::to_string(m).expect("messages serialize"));
            out.push('\n');
        }
        out
    }

    /// The planted facts as a JSON array.
    pub fn facts_json(&self) -> String {
        serde_json::to_string_pretty(&self.facts).expect("facts serialize")
    }
}

// ---------------------------------------------------------------------------------------------
// Values

/// How a number fact's value is written.
#[derive(Debug, Clone, Copy)]
pub(crate) enum NumberKind {
    Port,
    Millis,
    Dollars,
    Gigabytes,
    Percent,
    Rps,
    Count,
    Thousands,
    Days,
}

#[derive(Debug, Clone, Copy)]
pub(crate) enum DateKind {
    Iso,
    MonthDay,
    MonthDayYear,
    TimeUtc,
}

struct Values {
    rng: Rng,
    used: HashSet<String>,
    subjects: HashSet<String>,
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl Values {
    fn new(rng: Rng) -> Self {
        Self {
            rng,
            used: HashSet::new(),
            subjects: HashSet::new(),
        }
    }

    /// A fresh value from `make`: never one used before, and never one whose digits were used.
    fn fresh(&mut self, make: impl Fn(&mut Rng) -> String) -> String {
        loop {
            let v = make(&mut self.rng);
            let digits: String = v.chars().filter(char::is_ascii_digit).collect();
            let digit_key = format!("#digits:{digits}");
            if self.used.contains(&v) || (digits.len() >= 2 && self.used.contains(&digit_key)) {
                continue;
            }
            self.used.insert(v.clone());
            if digits.len() >= 2 {
                self.used.insert(digit_key);
            }
            return v;
        }
    }

    fn subject(&mut self, nouns: &[&str]) -> String {
        loop {
            let s = format!("{} {}", self.rng.pick(QUALIFIERS), self.rng.pick(nouns));
            if self.subjects.insert(s.clone()) {
                return s;
            }
        }
    }

    fn number(&mut self, kind: NumberKind) -> String {
        self.fresh(|r| match kind {
            NumberKind::Port => r.range(3000, 9999).to_string(),
            NumberKind::Millis => format!("{}ms", r.range(12, 240) * 10),
            NumberKind::Dollars => format!("${}", thousands(r.range(20, 1980) * 50)),
            NumberKind::Gigabytes => {
                if r.chance(0.5) {
                    format!("{}.{} GB", r.range(1, 64), r.range(1, 9))
                } else {
                    format!("{} GB", r.range(11, 990))
                }
            }
            NumberKind::Percent => format!("{}%", r.range(11, 97)),
            NumberKind::Rps => format!("{} rps", r.range(11, 490) * 10),
            NumberKind::Count => r.range(101, 999).to_string(),
            NumberKind::Thousands => thousands(r.range(1001, 98999)),
            NumberKind::Days => format!("{} days", r.range(11, 400)),
        })
    }

    fn date(&mut self, kind: DateKind) -> String {
        self.fresh(|r| {
            let month = r.below(12);
            let day = r.range(1, 28);
            match kind {
                DateKind::Iso => format!("2027-{:02}-{:02}", month + 1, day),
                DateKind::MonthDay => format!("{} {day}", MONTH_NAMES[month]),
                DateKind::MonthDayYear => format!("{} {day}, 2027", MONTH_NAMES[month]),
                DateKind::TimeUtc => format!("{:02}:{:02} UTC", r.range(0, 23), r.range(0, 11) * 5),
            }
        })
    }

    fn path(&mut self) -> String {
        self.fresh(|r| {
            let svc = r.pick(SERVICES);
            let stem = r.pick(FILE_STEMS);
            match r.below(5) {
                0 => format!("/etc/{svc}/{stem}.conf"),
                1 => format!("~/.config/{svc}/{stem}.toml"),
                2 => format!("./scripts/{svc}_{stem}.sh"),
                _ => format!(
                    "{}/{svc}/{stem}.{}",
                    r.pick(DIRS),
                    r.pick(&["yaml", "toml", "py", "rs", "json", "sql", "ts"])
                ),
            }
        })
    }

    fn command(&mut self) -> String {
        self.fresh(|r| {
            let svc = r.pick(SERVICES);
            let n = r.range(2, 9);
            match r.below(12) {
                0 => format!(
                    "kubectl rollout restart deploy/{svc}-api -n {}",
                    r.pick(NAMESPACES)
                ),
                1 => format!("cargo test -p {svc} --lib {}", r.pick(TEST_FILTERS)),
                2 => format!(
                    "git bisect start v{n}.{}.0 v{n}.{}.0",
                    r.range(10, 19),
                    r.range(20, 29)
                ),
                3 => format!(
                    "psql -h db-{n}.internal -c 'select count(*) from {svc}_{}'",
                    r.pick(TABLES)
                ),
                4 => format!(
                    "docker compose up -d {svc}-{}",
                    r.pick(&["worker", "cache", "db", "proxy"])
                ),
                5 => format!(
                    "terraform plan -target=module.{svc}_{}",
                    r.pick(&["cache", "queue", "bucket", "db"])
                ),
                6 => format!("python3 scripts/{svc}_{}.py --dry-run", r.pick(FILE_STEMS)),
                7 => format!(
                    "helm upgrade {svc} charts/{svc} --set replicas={}",
                    r.range(10, 40)
                ),
                8 => format!(
                    "journalctl -u {svc}-{}.service --since today",
                    r.pick(&["worker", "api", "sync"])
                ),
                9 => format!("redis-cli -h cache-{n} --scan --pattern '{svc}:*'"),
                10 => format!(
                    "npm run build -- --filter {svc}-{}",
                    r.pick(&["web", "admin", "ui"])
                ),
                _ => format!(
                    "grep -rn {}_{} src/{svc}",
                    r.pick(TABLES),
                    r.pick(FILE_STEMS)
                ),
            }
        })
    }

    fn identifier(&mut self) -> String {
        self.fresh(|r| match r.below(5) {
            0 => loop {
                let h: String = (0..8)
                    .map(|_| char::from(b"0123456789abcdef"[r.below(16)]))
                    .collect();
                if h.chars().any(|c| c.is_ascii_digit())
                    && h.chars().any(|c| c.is_ascii_alphabetic())
                {
                    break h;
                }
            },
            1 => format!("CR-{}", r.range(1000, 9999)),
            2 => format!("build_{}", r.range(1000, 9999)),
            3 => format!(
                "{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}",
                r.next_u64() as u32,
                r.next_u64() as u16,
                r.next_u64() as u16 & 0xfff,
                r.next_u64() as u16 & 0xfff,
                r.next_u64() & 0xffff_ffff_ffff
            ),
            _ => format!("v{}.{}.{}", r.range(2, 9), r.range(10, 40), r.range(1, 9)),
        })
    }

    fn url(&mut self) -> String {
        self.fresh(|r| {
            format!(
                "https://{}/{}/{}-{}-{}",
                r.pick(HOSTS),
                r.pick(&["d", "wiki", "runbooks", "docs", "incidents"]),
                r.pick(SERVICES),
                r.pick(&["latency", "errors", "rollout", "capacity", "oncall"]),
                r.range(10, 999)
            )
        })
    }

    fn email(&mut self) -> String {
        self.fresh(|r| {
            let first = r.pick(FIRST_NAMES).to_lowercase();
            let last = r.pick(LAST_NAMES).to_lowercase();
            if r.chance(0.25) {
                format!("@{first}-{last}")
            } else {
                format!(
                    "{first}.{last}@{}.example",
                    r.pick(COMPANIES).to_lowercase()
                )
            }
        })
    }

    fn name(&mut self) -> String {
        self.fresh(|r| {
            if r.chance(0.2) {
                r.pick(COMPANIES).to_string()
            } else {
                format!("{} {}", r.pick(FIRST_NAMES), r.pick(LAST_NAMES))
            }
        })
    }

    fn issue(&mut self) -> String {
        self.fresh(|r| match r.below(3) {
            0 => format!("#{}", r.range(1000, 9999)),
            1 => format!("PR {}", r.range(100, 999)),
            _ => format!("GH-{}", r.range(100, 9999)),
        })
    }

    fn error_code(&mut self) -> String {
        self.fresh(|r| match r.below(5) {
            0 => format!("exit code {}", r.range(2, 255)),
            1 => format!("E0{}", r.range(100, 799)),
            2 => format!(
                "HTTP {}",
                r.pick(&[400, 401, 403, 404, 409, 410, 422, 429, 500, 502, 503, 504])
            ),
            3 => r.pick(ERRNO).to_string(),
            _ => format!("ERR_{}_{}", r.pick(ERR_WORDS), r.pick(ERR_WORDS)),
        })
    }

    fn quoted_error(&mut self) -> String {
        self.fresh(|r| {
            let base = r.pick(ERROR_MESSAGES);
            if r.chance(0.5) {
                base.to_string()
            } else {
                format!(
                    "{base} on {}-{}",
                    r.pick(SERVICES),
                    r.pick(&["worker", "replica", "node", "shard"])
                )
            }
        })
    }
}

/// A value of `class`, with the subject it is stated about (correctable classes only).
fn value_of(v: &mut Values, class: &str, subject_kind: usize) -> (String, String) {
    match class {
        "number" => {
            let (noun, kind) = NUMBER_SUBJECTS[subject_kind % NUMBER_SUBJECTS.len()];
            (v.subject(&[noun]), v.number(kind))
        }
        "date" => {
            let (noun, kind) = DATE_SUBJECTS[subject_kind % DATE_SUBJECTS.len()];
            (v.subject(&[noun]), v.date(kind))
        }
        "path" => (v.subject(PATH_NOUNS), v.path()),
        "identifier" => (v.subject(ID_NOUNS), v.identifier()),
        "url" => (v.subject(URL_NOUNS), v.url()),
        "email" => (v.subject(EMAIL_NOUNS), v.email()),
        "name" => (v.subject(NAME_NOUNS), v.name()),
        "command" => (String::new(), v.command()),
        "issue" => (String::new(), v.issue()),
        "error-code" => (String::new(), v.error_code()),
        "quoted-error" => (String::new(), v.quoted_error()),
        other => unreachable!("unknown class {other}"),
    }
}

/// The same kind of value again (for a correction).
fn another_value(v: &mut Values, class: &str, subject_kind: usize) -> String {
    match class {
        "number" => v.number(NUMBER_SUBJECTS[subject_kind % NUMBER_SUBJECTS.len()].1),
        "date" => v.date(DATE_SUBJECTS[subject_kind % DATE_SUBJECTS.len()].1),
        "path" => v.path(),
        "identifier" => v.identifier(),
        "url" => v.url(),
        "email" => v.email(),
        "name" => v.name(),
        other => unreachable!("{other} is not correctable"),
    }
}

/// Where a class can be planted; the tool result comes last.
fn placements(class: &str) -> &'static [Placement] {
    use Placement::*;
    match class {
        "error-code" | "quoted-error" => &[User, Assistant, ToolResult],
        _ => &[User, Assistant, ToolCall, ToolResult],
    }
}

// ---------------------------------------------------------------------------------------------
// Sentences

fn fill(template: &str, subject: &str, value: &str) -> String {
    template.replace("{s}", subject).replace("{v}", value)
}

/// The sentence that plants a fact in a user or assistant message.
fn fact_sentence(rng: &mut Rng, class: &str, subject: &str, value: &str, by_user: bool) -> String {
    let templates: &[&str] = match (class, by_user) {
        ("command", true) => &[
            "To reproduce it, run `{v}`.",
            "I usually run `{v}` to check this.",
            "What I ran was:\n$ {v}",
        ],
        ("command", false) => &[
            "I ran `{v}` to confirm it.",
            "You can rerun `{v}` to see the same output.",
        ],
        ("issue", true) => &[
            "This is tracked in {v}.",
            "There is an open thread about it in {v}.",
        ],
        ("issue", false) => &["I linked this to {v}.", "The fix is in {v}."],
        ("error-code", true) => &[
            "The job dies with {v} every time.",
            "I keep seeing {v} in the console.",
        ],
        ("error-code", false) => &[
            "The failing step stops with {v}.",
            "The logs show {v} right before the restart.",
        ],
        ("quoted-error", true) => &[
            "The worker logs the error \"{v}\" on every retry.",
            "It fails with \"{v}\" when I try it.",
        ],
        ("quoted-error", false) => &[
            "The stack trace ends with the error \"{v}\".",
            "The client reports the error \"{v}\" and gives up.",
        ],
        (_, true) => &[
            "For the record, the {s} is {v}.",
            "Keep in mind that the {s} is {v}.",
            "Just so you know, the {s} is {v}.",
            "The {s} is {v}, in case that matters.",
        ],
        (_, false) => &[
            "I checked, and the {s} is {v}.",
            "Noted: the {s} is {v}.",
            "According to the config, the {s} is {v}.",
        ],
    };
    let template: &&str = rng.pick(templates);
    fill(template, subject, value)
}

/// A correction, by form: the first four name the old value, the last three do not.
fn correction_sentence(form: usize, by_user: bool, subject: &str, old: &str, new: &str) -> String {
    let lead = if by_user {
        "Sorry, I got that wrong: "
    } else {
        "I need to correct myself: "
    };
    match form % 7 {
        0 => format!("{lead}the {subject} is {new}, not {old}."),
        1 => format!("The {subject} changed from {old} to {new}."),
        2 => format!("Please use {new} instead of {old} for the {subject}."),
        3 => format!("The {subject} is no longer {old}, now it's {new}."),
        4 => format!("Correction: the {subject} is {new}."),
        5 => format!("Actually it's {new} for the {subject}."),
        _ => format!("Update: the {subject} is now {new}."),
    }
}

/// A tool call that carries a fact in its arguments: (function, JSON arguments).
fn fact_call(class: &str, subject: &str, value: &str) -> (String, String) {
    let args = match class {
        "path" => serde_json::json!({ "path": value }),
        "command" => serde_json::json!({ "cmd": value }),
        "url" => serde_json::json!({ "url": value }),
        "email" => serde_json::json!({ "to": value, "subject": "status of the rollout" }),
        "issue" => serde_json::json!({ "ref": value }),
        "name" => serde_json::json!({ "assignee": value, "role": subject }),
        "number" => match value.parse::<u64>() {
            Ok(n) => serde_json::json!({ "setting": subject, "value": n }),
            Err(_) => serde_json::json!({ "setting": subject, "value": value }),
        },
        _ => serde_json::json!({ "setting": subject, "value": value }),
    };
    let name = match class {
        "path" => "read_file",
        "command" => "run_shell",
        "url" => "http_get",
        "email" => "send_email",
        "issue" => "get_issue",
        "name" => "assign_owner",
        _ => "set_config",
    };
    (name.to_string(), args.to_string())
}

/// The line that carries a fact inside a tool result.
fn fact_line(class: &str, subject: &str, value: &str) -> String {
    match class {
        "command" => format!("hint: retry with `{value}`"),
        "error-code" => format!("2026-11-28T07:42:10Z worker-3 ERROR job failed with {value}"),
        "quoted-error" => format!("ERROR: \"{value}\""),
        "issue" => format!("linked: {value}"),
        _ => format!("{subject}: {value}"),
    }
}

// ---------------------------------------------------------------------------------------------
// The facts conversation

struct Planted {
    fact: Fact,
    kind: usize,
}

struct Turn {
    user: Vec<String>,
    assistant: Vec<String>,
    calls: Vec<(String, String)>,
    results: Vec<String>,
}

/// A work conversation of `turns` turns with planted facts, deterministic in `seed`.
///
/// About 1.3 facts per turn (every class at least once from 11 turns up), spread over user
/// turns, assistant replies, tool-call arguments and tool results; about one fact in six is
/// corrected in a later turn by the user or the assistant. The last turn plants nothing. The
/// first message is a system prompt (turn 0).
pub fn facts(turns: usize, seed: u64) -> Conversation {
    let turns = turns.max(2);
    let mut rng = Rng::new(seed);
    let mut values = Values::new(Rng::new(seed.wrapping_mul(31).wrapping_add(7)));

    // Which class each fact is, round by round, and where it is planted.
    let planting_turns = turns - 1;
    let total = (planting_turns * 13)
        .div_ceil(10)
        .max(CLASSES.len().min(planting_turns * 2));
    let mut classes: Vec<&'static str> = Vec::new();
    while classes.len() < total {
        let mut round = CLASSES.to_vec();
        rng.shuffle(&mut round);
        classes.extend(round);
    }
    classes.truncate(total);
    let mut placement_counter: std::collections::HashMap<&str, usize> = Default::default();
    let mut planted: Vec<Planted> = Vec::new();
    for (i, class) in classes.into_iter().enumerate() {
        let turn = 1 + (i * planting_turns / total) as u64;
        let options = placements(class);
        // Placements rotate; the first of each class is never a tool result (those count apart),
        // so every class is planted where it counts from the first round on.
        let k = placement_counter
            .entry(class)
            .or_insert(rng.below(options.len() - 1));
        let placed = options[*k % options.len()];
        *k += 1;
        let kind = rng.below(64);
        let (subject, value) = value_of(&mut values, class, kind);
        planted.push(Planted {
            fact: Fact {
                class,
                subject,
                latest: value.clone(),
                value,
                placed,
                turn,
                corrected_turn: None,
                corrected_by: None,
            },
            kind,
        });
    }

    // Corrections: one fact in six, spread evenly over the facts whose class allows one and
    // that have a later planting turn to be corrected in.
    let eligible: Vec<usize> = planted
        .iter()
        .enumerate()
        .filter(|(_, p)| CORRECTABLE.contains(&p.fact.class) && p.fact.turn < planting_turns as u64)
        .map(|(i, _)| i)
        .collect();
    let wanted = total.div_ceil(6).min(eligible.len());
    let chosen: Vec<usize> = (0..wanted)
        .map(|j| eligible[j * eligible.len() / wanted.max(1)])
        .collect();
    let mut corrections: Vec<(u64, Placement, String)> = Vec::new();
    let first_form = rng.below(7);
    for (form, i) in (first_form..).zip(chosen) {
        let p = &mut planted[i];
        let f = &mut p.fact;
        let span = (planting_turns as u64 - f.turn).min(1 + turns as u64 / 5);
        let at = f.turn + 1 + rng.range(0, span - 1);
        let by = if rng.chance(0.5) {
            Placement::User
        } else {
            Placement::Assistant
        };
        // A value planted in tool-call arguments has no sentence to point back to: name it.
        let this_form = if f.placed == Placement::ToolCall {
            form % 4
        } else {
            form
        };
        let new = another_value(&mut values, f.class, p.kind);
        let sentence =
            correction_sentence(this_form, by == Placement::User, &f.subject, &f.value, &new);
        f.latest = new;
        f.corrected_turn = Some(at);
        f.corrected_by = Some(by);
        corrections.push((at, by, sentence));
    }

    let mut plan: Vec<Turn> = (0..=turns)
        .map(|_| Turn {
            user: Vec::new(),
            assistant: Vec::new(),
            calls: Vec::new(),
            results: Vec::new(),
        })
        .collect();
    for p in &planted {
        let f = &p.fact;
        let t = &mut plan[f.turn as usize];
        match f.placed {
            Placement::User => t
                .user
                .push(fact_sentence(&mut rng, f.class, &f.subject, &f.value, true)),
            Placement::Assistant => t.assistant.push(fact_sentence(
                &mut rng, f.class, &f.subject, &f.value, false,
            )),
            Placement::ToolCall => t.calls.push(fact_call(f.class, &f.subject, &f.value)),
            Placement::ToolResult => t.results.push(fact_line(f.class, &f.subject, &f.value)),
        }
    }
    for (at, by, sentence) in corrections {
        let t = &mut plan[at as usize];
        match by {
            Placement::User => t.user.push(sentence),
            _ => t.assistant.push(sentence),
        }
    }

    let mut messages = Vec::new();
    let mut next_id = 1;
    let mut id = || {
        let s = format!("m{next_id}");
        next_id += 1;
        s
    };
    messages.push(Message::text(id(), "system", SYSTEM_PROMPT.to_string()));
    let mut call_no = 0;
    for (turn, t) in plan.into_iter().enumerate().skip(1) {
        // The user: filler around the facts, then a request.
        let user = prose(&mut rng, USER_FILLER, (1, 2), t.user, USER_REQUESTS);
        messages.push(Message::text(id(), "user", user));

        // Tool calls: the fact calls, or a routine one in most turns.
        let mut calls = t.calls;
        let mut results = t.results;
        let last = turn == turns;
        if calls.is_empty() && (!results.is_empty() || (!last && rng.chance(0.7))) {
            calls.push(routine_call(&mut rng));
        }
        if !calls.is_empty() {
            let mut tool_calls = Vec::new();
            let mut outputs = Vec::new();
            for (k, (name, args)) in calls.into_iter().enumerate() {
                call_no += 1;
                let call_id = format!("call_{call_no}");
                let mut lines = tool_output(&mut rng, &name);
                if k == 0 {
                    for line in results.drain(..) {
                        let at = 1 + rng.below(lines.len());
                        lines.insert(at, line);
                    }
                }
                outputs.push((call_id.clone(), name.clone(), lines.join("\n")));
                tool_calls.push(ToolCall {
                    id: call_id,
                    kind: "function",
                    function: Function {
                        name,
                        arguments: args,
                    },
                });
            }
            messages.push(Message {
                id: id(),
                role: "assistant",
                content: rng
                    .chance(0.4)
                    .then(|| rng.pick(ASSISTANT_PREAMBLES).to_string()),
                tool_calls,
                tool_call_id: None,
                name: None,
            });
            for (call_id, name, output) in outputs {
                messages.push(Message {
                    id: id(),
                    role: "tool",
                    content: Some(output),
                    tool_calls: Vec::new(),
                    tool_call_id: Some(call_id),
                    name: Some(name),
                });
            }
        }

        // The assistant's reply: filler around the facts.
        let reply = prose(
            &mut rng,
            ASSISTANT_FILLER,
            (2, 4),
            t.assistant,
            ASSISTANT_CLOSERS,
        );
        messages.push(Message::text(id(), "assistant", reply));
    }
    Conversation {
        messages,
        facts: planted.into_iter().map(|p| p.fact).collect(),
    }
}

/// Sentences joined into prose; a sentence holding a line break (a `$ ` command) gets its own
/// lines.
/// A message's prose: `lo..=hi` filler sentences, the facts put among them at random places,
/// then one closing sentence.
fn prose(
    rng: &mut Rng,
    filler: &[&str],
    (lo, hi): (u64, u64),
    facts: Vec<String>,
    closers: &[&str],
) -> String {
    let mut out = Vec::new();
    for _ in 0..rng.range(lo, hi) {
        out.push(rng.pick(filler).to_string());
    }
    for s in facts {
        let at = rng.below(out.len() + 1);
        out.insert(at, s);
    }
    out.push(rng.pick(closers).to_string());
    join_prose(&out)
}

fn join_prose(sentences: &[String]) -> String {
    let mut out = String::new();
    for s in sentences {
        if !out.is_empty() {
            out.push(
                if s.contains('\n') || out.ends_with(|c: char| c.is_alphanumeric()) {
                    '\n'
                } else {
                    ' '
                },
            );
        }
        out.push_str(s);
        if s.contains('\n') {
            out.push('\n');
        }
    }
    out.trim_end().to_string()
}

fn routine_call(rng: &mut Rng) -> (String, String) {
    let svc = rng.pick(SERVICES);
    match rng.below(4) {
        0 => (
            "search_logs".into(),
            serde_json::json!({ "service": svc, "query": rng.pick(LOG_QUERIES) }).to_string(),
        ),
        1 => (
            "query_metrics".into(),
            serde_json::json!({ "service": svc, "metric": rng.pick(METRICS), "window": rng.pick(&["24h", "6h", "1h"]) })
                .to_string(),
        ),
        2 => (
            "list_deploys".into(),
            serde_json::json!({ "service": svc }).to_string(),
        ),
        _ => (
            "read_runbook".into(),
            serde_json::json!({ "topic": rng.pick(LOG_QUERIES) }).to_string(),
        ),
    }
}

/// A tool's output: 8 to 24 lines of logs or metrics.
fn tool_output(rng: &mut Rng, tool: &str) -> Vec<String> {
    let n = rng.range(8, 24) as usize;
    let mut lines = Vec::with_capacity(n + 1);
    lines.push(format!("# {tool}: {n} records"));
    for _ in 0..n {
        lines.push(log_line(rng));
    }
    lines
}

fn log_line(rng: &mut Rng) -> String {
    let svc = rng.pick(SERVICES);
    let ts = format!(
        "2026-11-28T{:02}:{:02}:{:02}Z",
        rng.range(0, 23),
        rng.range(0, 59),
        rng.range(0, 59)
    );
    match rng.below(4) {
        0 => format!(
            "{ts} {svc}-{} INFO request completed status=200 latency={}ms bytes={} req={:012x}",
            rng.range(1, 9),
            rng.range(11, 99),
            rng.range(10000, 99999),
            rng.next_u64() & 0xffff_ffff_ffff
        ),
        1 => format!(
            "{ts} {svc}-{} WARN {} (attempt {} of {})",
            rng.range(1, 9),
            rng.pick(LOG_WARNINGS),
            rng.range(1, 3),
            rng.range(4, 5)
        ),
        2 => format!(
            "{{\"service\": \"{svc}\", \"window\": \"{}m\", \"p50_ms\": {}, \"p99_ms\": {}, \"errors\": {}}}",
            rng.range(1, 9) * 5,
            rng.range(11, 60),
            rng.range(61, 99),
            rng.range(0, 9)
        ),
        _ => format!(
            "{ts} {svc}-{} DEBUG {} queue_depth={} workers={}",
            rng.range(1, 9),
            rng.pick(LOG_DEBUG),
            rng.range(11, 99),
            rng.range(2, 9)
        ),
    }
}

// ---------------------------------------------------------------------------------------------
// Agent sessions

/// An agent session with one giant turn: a short opening turn, then a turn in which the
/// assistant makes `calls` tool calls (mostly one per message, every fifth message three in
/// parallel, some with a line of commentary) each answered by its result, then three short turns.
/// Ids: `u{n}` user, `a{n}` assistant, `t{n}` tool results, `c{n}` call ids; the first message
/// is a system prompt (turn 0). Deterministic in `seed`.
pub fn agent_session(calls: usize, seed: u64) -> Conversation {
    let mut rng = Rng::new(seed);
    let mut messages = Vec::new();
    let mut n = 0usize;
    let mut next = |prefix: &str| {
        n += 1;
        format!("{prefix}{n}")
    };
    messages.push(Message::text("sys".into(), "system", SYSTEM_PROMPT.into()));
    messages.push(Message::text(
        next("u"),
        "user",
        format!("{} {}", rng.pick(USER_FILLER), rng.pick(USER_REQUESTS)),
    ));
    messages.push(Message::text(
        next("a"),
        "assistant",
        rng.pick(ASSISTANT_FILLER).to_string(),
    ));
    messages.push(Message::text(
        next("u"),
        "user",
        format!(
            "Go through every service and check its logs, metrics, deploys and runbooks; make {calls} checks if you have to. {}",
            rng.pick(USER_REQUESTS)
        ),
    ));
    let mut made = 0usize;
    let mut step = 0usize;
    while made < calls {
        step += 1;
        let parallel = if step.is_multiple_of(5) { 3 } else { 1 };
        let k = parallel.min(calls - made);
        let mut tool_calls = Vec::with_capacity(k);
        for _ in 0..k {
            let (name, arguments) = routine_call(&mut rng);
            tool_calls.push(ToolCall {
                id: next("c"),
                kind: "function",
                function: Function { name, arguments },
            });
        }
        let content = rng
            .chance(0.3)
            .then(|| rng.pick(ASSISTANT_FILLER).to_string());
        messages.push(Message {
            id: next("a"),
            role: "assistant",
            content,
            tool_calls: tool_calls.clone(),
            tool_call_id: None,
            name: None,
        });
        for call in &tool_calls {
            let lines = rng.range(2, 6) as usize;
            let mut out = vec![format!("# {}: {lines} records", call.function.name)];
            out.extend((0..lines).map(|_| log_line(&mut rng)));
            messages.push(Message {
                id: next("t"),
                role: "tool",
                content: Some(out.join("\n")),
                tool_calls: Vec::new(),
                tool_call_id: Some(call.id.clone()),
                name: Some(call.function.name.clone()),
            });
        }
        made += k;
    }
    messages.push(Message::text(
        next("a"),
        "assistant",
        format!("I made {calls} checks. {}", rng.pick(ASSISTANT_CLOSERS)),
    ));
    for _ in 0..3 {
        messages.push(Message::text(
            next("u"),
            "user",
            format!("{} {}", rng.pick(USER_FILLER), rng.pick(USER_REQUESTS)),
        ));
        messages.push(Message::text(
            next("a"),
            "assistant",
            rng.pick(ASSISTANT_FILLER).to_string(),
        ));
    }
    Conversation {
        messages,
        facts: Vec::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// Bulk

/// What [`bulk`] writes: at least `min_lines` lines and `min_bytes` bytes, in whole turns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BulkOptions {
    pub min_lines: u64,
    pub min_bytes: u64,
    pub seed: u64,
}

/// What [`bulk`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BulkStats {
    pub lines: u64,
    pub bytes: u64,
    pub turns: u64,
}

/// JSON-escaped text fragments, built once from the seed.
struct Pools {
    user: Vec<String>,
    assistant: Vec<String>,
    log: Vec<String>,
}

fn escape(s: &str) -> String {
    let quoted = serde_json::to_string(s).expect("strings serialize");
    quoted[1..quoted.len() - 1].to_string()
}

impl Pools {
    fn new(rng: &mut Rng) -> Self {
        let mut user = Vec::new();
        for _ in 0..256 {
            let mut s = vec![rng.pick(USER_FILLER).to_string()];
            if rng.chance(0.5) {
                s.push(format!(
                    "Order #{} for customer C-{} was due on 2026-11-{:02} and cost ${}.{:02}.",
                    rng.range(1000, 99999),
                    rng.range(1, 997),
                    rng.range(1, 28),
                    rng.range(5, 500),
                    rng.range(0, 99)
                ));
            }
            s.push(rng.pick(USER_REQUESTS).to_string());
            user.push(escape(&s.join(" ")));
        }
        let mut assistant = Vec::new();
        for _ in 0..256 {
            let s: Vec<&str> = (0..rng.range(1, 3))
                .map(|_| *rng.pick(ASSISTANT_FILLER))
                .collect();
            assistant.push(escape(&s.join(" ")));
        }
        let log = (0..1024).map(|_| escape(&log_line(rng))).collect();
        Pools {
            user,
            assistant,
            log,
        }
    }
}

/// Stream a large synthetic chat transcript to `w`: turns of a user message, in most turns an
/// assistant tool call and its (long) result, and an assistant reply. Tool outputs grow or
/// shrink so that the byte and line minimums are reached at about the same time. Writes whole
/// turns and stops at the first turn boundary where both minimums are met.
pub fn bulk<W: Write>(w: W, opts: BulkOptions) -> io::Result<BulkStats> {
    let mut w = io::BufWriter::with_capacity(1 << 20, w);
    let mut rng = Rng::new(opts.seed);
    let pools = Pools::new(&mut rng);
    let mut stats = BulkStats::default();
    let mut line = Vec::with_capacity(1 << 16);
    let emit =
        |line: &mut Vec<u8>, stats: &mut BulkStats, w: &mut io::BufWriter<W>| -> io::Result<()> {
            line.push(b'\n');
            w.write_all(line)?;
            stats.lines += 1;
            stats.bytes += line.len() as u64;
            line.clear();
            Ok(())
        };
    let system = format!(
        "{{\"id\":\"sys\",\"role\":\"system\",\"content\":\"{}\"}}",
        escape(SYSTEM_PROMPT)
    );
    line.extend_from_slice(system.as_bytes());
    emit(&mut line, &mut stats, &mut w)?;
    let mut n: u64 = 0;
    while stats.lines < opts.min_lines || stats.bytes < opts.min_bytes {
        stats.turns += 1;
        let turn = stats.turns;
        n += 1;
        write!(
            line,
            "{{\"id\":\"u{n}\",\"role\":\"user\",\"content\":\"{}\"}}",
            pools.user[rng.below(pools.user.len())]
        )?;
        emit(&mut line, &mut stats, &mut w)?;
        if rng.chance(0.8) {
            n += 1;
            let call = n;
            let svc = rng.pick(SERVICES);
            write!(
                line,
                "{{\"id\":\"a{n}\",\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{{\"id\":\"c{call}\",\"type\":\"function\",\"function\":{{\"name\":\"search_logs\",\"arguments\":\"{{\\\"service\\\": \\\"{svc}\\\", \\\"turn\\\": {turn}}}\"}}}}]}}"
            )?;
            emit(&mut line, &mut stats, &mut w)?;
            // Size the output so both minimums land together: about four lines a turn.
            let lines_left = opts.min_lines.saturating_sub(stats.lines);
            let bytes_left = opts.min_bytes.saturating_sub(stats.bytes);
            let target = if bytes_left == 0 {
                300
            } else if lines_left == 0 {
                64 * 1024
            } else {
                let per_line = bytes_left / lines_left.max(1);
                (per_line * 4).saturating_sub(600).clamp(200, 256 * 1024) as usize
            };
            n += 1;
            write!(
                line,
                "{{\"id\":\"t{n}\",\"role\":\"tool\",\"tool_call_id\":\"c{call}\",\"name\":\"search_logs\",\"content\":\""
            )?;
            let start = line.len();
            while line.len() - start < target {
                if line.len() > start {
                    line.extend_from_slice(b"\\n");
                }
                line.extend_from_slice(pools.log[rng.below(pools.log.len())].as_bytes());
            }
            line.extend_from_slice(b"\"}");
            emit(&mut line, &mut stats, &mut w)?;
        }
        n += 1;
        write!(
            line,
            "{{\"id\":\"a{n}\",\"role\":\"assistant\",\"content\":\"{}\"}}",
            pools.assistant[rng.below(pools.assistant.len())]
        )?;
        emit(&mut line, &mut stats, &mut w)?;
    }
    w.flush()?;
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_are_deterministic_and_plant_every_class() {
        let a = facts(40, 7);
        let b = facts(40, 7);
        assert_eq!(a, b);
        assert_ne!(a.to_jsonl(), facts(40, 8).to_jsonl());
        for (turns, seed) in [(12, 1), (12, 2), (12, 3), (40, 7)] {
            let c = facts(turns, seed);
            for class in CLASSES {
                assert!(
                    c.facts
                        .iter()
                        .any(|f| f.class == class && f.placed != Placement::ToolResult),
                    "{turns} turns, seed {seed}: {class} is never planted outside tool results"
                );
            }
        }
        for p in [
            Placement::User,
            Placement::Assistant,
            Placement::ToolCall,
            Placement::ToolResult,
        ] {
            assert!(
                a.facts.iter().any(|f| f.placed == p),
                "nothing planted as {p:?}"
            );
        }
        let corrected = a
            .facts
            .iter()
            .filter(|f| f.corrected_turn.is_some())
            .count();
        assert!(
            corrected * 9 >= a.facts.len() && corrected * 4 <= a.facts.len(),
            "{corrected} of {} corrected",
            a.facts.len()
        );
    }

    #[test]
    fn every_planted_value_is_in_the_transcript_where_it_was_planted() {
        let c = facts(120, 3);
        let jsonl = c.to_jsonl();
        let mut turn = 0;
        let mut by_turn: Vec<Vec<&Message>> = vec![Vec::new()];
        for m in &c.messages {
            if m.role == "user" {
                turn += 1;
                by_turn.push(Vec::new());
            }
            by_turn[turn].push(m);
        }
        assert_eq!(turn, 120);
        for f in &c.facts {
            let msgs = &by_turn[f.turn as usize];
            let found = msgs.iter().any(|m| match f.placed {
                Placement::User => {
                    m.role == "user" && m.content.as_deref().is_some_and(|t| t.contains(&f.value))
                }
                Placement::Assistant => {
                    m.role == "assistant"
                        && m.content.as_deref().is_some_and(|t| t.contains(&f.value))
                }
                Placement::ToolCall => m.tool_calls.iter().any(|c| {
                    let v: serde_json::Value = serde_json::from_str(&c.function.arguments).unwrap();
                    v.to_string().contains(&f.value)
                        || v.as_object()
                            .unwrap()
                            .values()
                            .any(|x| x.as_str() == Some(&f.value) || *x == f.value)
                }),
                Placement::ToolResult => {
                    m.role == "tool" && m.content.as_deref().is_some_and(|t| t.contains(&f.value))
                }
            });
            assert!(found, "{f:?} not planted");
            if let Some(t) = f.corrected_turn {
                assert!(t > f.turn && t < 120, "{f:?}");
                assert!(
                    by_turn[t as usize]
                        .iter()
                        .any(|m| m.content.as_deref().is_some_and(|c| c.contains(&f.latest))),
                    "{f:?}"
                );
            }
        }
        for line in jsonl.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert!(v["id"].is_string() && v["role"].is_string(), "{line}");
        }
        // The last turn plants nothing.
        assert!(
            c.facts
                .iter()
                .all(|f| f.turn < 120 && f.corrected_turn.is_none_or(|t| t < 120))
        );
    }

    #[test]
    fn values_are_unique() {
        let c = facts(120, 11);
        let mut seen = HashSet::new();
        for f in &c.facts {
            assert!(seen.insert(f.value.clone()), "{} planted twice", f.value);
            if f.latest != f.value {
                assert!(seen.insert(f.latest.clone()), "{} planted twice", f.latest);
            }
        }
    }

    #[test]
    fn agent_session_has_one_giant_turn_of_answered_calls() {
        let c = agent_session(300, 4);
        assert_eq!(c, agent_session(300, 4));
        let users: Vec<usize> = (0..c.messages.len())
            .filter(|&i| c.messages[i].role == "user")
            .collect();
        assert_eq!(users.len(), 5);
        let giant = &c.messages[users[1]..users[2]];
        let calls: Vec<&ToolCall> = giant.iter().flat_map(|m| &m.tool_calls).collect();
        assert_eq!(calls.len(), 300);
        assert!(giant.iter().any(|m| m.tool_calls.len() == 3));
        // Every call is answered right after its message, in order.
        let mut i = 0;
        while i < giant.len() {
            let k = giant[i].tool_calls.len();
            for (j, call) in giant[i].tool_calls.iter().enumerate() {
                assert_eq!(giant[i + 1 + j].tool_call_id.as_ref(), Some(&call.id));
            }
            i += 1 + k;
        }
        for m in &c.messages {
            let line = serde_json::to_string(m).unwrap();
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            assert!(v["id"].is_string() && v["role"].is_string(), "{line}");
        }
    }

    #[test]
    fn bulk_meets_both_minimums_in_valid_lines() {
        for (lines, bytes) in [(2_000, 100_000), (500, 2_000_000), (5_000, 10_000)] {
            let mut out = Vec::new();
            let stats = bulk(
                &mut out,
                BulkOptions {
                    min_lines: lines,
                    min_bytes: bytes,
                    seed: 5,
                },
            )
            .unwrap();
            assert!(stats.lines >= lines && stats.bytes >= bytes, "{stats:?}");
            assert_eq!(stats.bytes, out.len() as u64);
            let text = String::from_utf8(out).unwrap();
            assert_eq!(text.lines().count() as u64, stats.lines);
            for line in text.lines() {
                let v: serde_json::Value =
                    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
                assert!(v["role"].is_string());
            }
            // It stops at the first turn that meets both: one minimum is met by less than a turn.
            assert!(
                stats.lines < lines + 5 || stats.bytes < bytes + 300_000,
                "{stats:?}"
            );
            let mut again = Vec::new();
            bulk(
                &mut again,
                BulkOptions {
                    min_lines: lines,
                    min_bytes: bytes,
                    seed: 5,
                },
            )
            .unwrap();
            assert_eq!(again, text.as_bytes());
        }
    }
}
