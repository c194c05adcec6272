//! Issue 28: every `mf …` command line in the README, CONTRIBUTING.md and docs/*.md runs.
//!
//! Each fenced shell block (` ```sh `, `bash`, `shell`, `console`, or no language) is read line
//! by line (a line ending in `\` or `|` goes on), and every `mf SUBCOMMAND …` in it — after a
//! pipe, inside `$(…)`, behind `xargs …` or `claude mcp add mf --`, or as `cargo run -- …` — is an
//! example. Each one:
//! - parses: clap accepts it (`mf::cli::Cli`), with its placeholders (`FILE`, `MODEL`, `ID`,
//!   `SHELL`, `$VAR`, globs, `$(…)`) made concrete; so an unknown flag in a doc fails here;
//! - runs: the real binary, in a temp dir of fixture copies (every `*.jsonl` it names is a copy
//!   of a committed chat fixture unless the dir already holds it), with its own `HOME`, and
//!   exits with a code a working command can (0, 1; 3 for a remote model, never 2). No request
//!   leaves the machine: every key is bogus and every base URL (`--base-url` values included) is
//!   `http://127.0.0.1:1`, where nothing answers, so a remote model reaches its call and exits 3.
//!
//! The quick start runs as a whole, twice in a row: the README's set-up command 1 (which `.ci/run`
//! runs too) and its offline block verbatim through `sh -e`, and the agent block's mf lines with
//! `extractive` for `haiku` (the one change, because `haiku` needs the network) on a Claude Code
//! session in the temp `HOME`. A line of a block that is not mf, or an example that cannot run
//! offline, is listed below with the reason. Relative links between the pages are checked too.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{TestEnv, fixture, mf_bin};

/// Examples that are not run (only parsed), each with why: a substring of the command line.
const NOT_RUN: &[(&str, &str)] = &[
    // None today: every example runs offline. Add `("mf …", "why")` for one that cannot.
];

/// Lines of a quick-start block that are not mf, and why the test does not run them.
const QUICKSTART_NOT_MF: &[(&str, &str)] = &[
    (
        "claude --continue",
        "the agent itself, resumed; scripts/agents/e2e.sh resumes the real agents after mf compact",
    ),
    (
        "export ANTHROPIC_API_KEY=",
        "the key a remote model needs; the test runs the block with extractive, which needs none",
    ),
];

/// Relative links whose target another change adds (checked once it exists).
const LINKS_ADDED_ELSEWHERE: &[(&str, &str)] = &[(
    "docs/batch.md",
    "issue 27 (--batch, --service-tier flex) adds it with its README paragraph",
)];

/// The chat fixture every named transcript is a copy of.
const CHAT: &str = "incident-northwind.jsonl";
/// The Claude Code session the agent quick start folds.
const CLAUDE: &str = "claude-2.1.332-multiturn.jsonl";
const NOWHERE: &str = "http://127.0.0.1:1";
/// The word standing for the file names `xargs` appends to a command.
const XARGS_FILES: &str = "<the files xargs appends>";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// README.md, CONTRIBUTING.md and docs/*.md, as paths relative to the repository.
fn pages() -> Vec<String> {
    let mut out = vec!["README.md".to_string(), "CONTRIBUTING.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    out.extend(docs);
    out
}

struct Block {
    page: String,
    /// The HTML comment right above the fence, if any (`<!-- quickstart: offline … -->`).
    marker: String,
    /// (1-based line, text) of each logical line: continuations joined.
    lines: Vec<(usize, String)>,
}

fn shell_blocks(page: &str) -> Vec<Block> {
    let text = std::fs::read_to_string(root().join(page)).unwrap();
    let mut out = Vec::new();
    let mut last_nonblank = String::new();
    let mut open: Option<Block> = None;
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        if let Some(block) = open.as_mut() {
            if raw.trim_start().starts_with("```") {
                if let Some(p) = pending.take() {
                    block.lines.push(p);
                }
                out.push(open.take().unwrap());
                continue;
            }
            let (start, mut acc) = pending.take().unwrap_or((n, String::new()));
            let body = raw.trim_end();
            let goes_on = body.ends_with('\\') || body.ends_with('|');
            acc.push_str(body.strip_suffix('\\').unwrap_or(body));
            acc.push(' ');
            if goes_on && !body.trim_start().starts_with('#') {
                pending = Some((start, acc));
            } else {
                block.lines.push((start, acc.trim().to_string()));
            }
            continue;
        }
        if let Some(lang) = raw.trim_start().strip_prefix("```") {
            let lang = lang.trim();
            let shell = matches!(lang, "" | "sh" | "bash" | "shell" | "console");
            let marker = if last_nonblank.starts_with("<!--") {
                last_nonblank.clone()
            } else {
                String::new()
            };
            // A block of another language is skipped to its end the same way.
            open = Some(Block {
                page: page.to_string(),
                marker,
                lines: Vec::new(),
            });
            if !shell {
                // Swallow it: read on to the closing fence without keeping anything.
                open.as_mut().unwrap().page = String::new();
            }
            continue;
        }
        if !raw.trim().is_empty() {
            last_nonblank = raw.trim().to_string();
        }
    }
    out.retain(|b| !b.page.is_empty());
    out
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    Op(String),
}

/// Shell words and operators of one line: quotes removed (`$(…)` and `$VAR` kept as written
/// inside a word), a comment dropped, redirections as operators.
fn lex(line: &str) -> Vec<Tok> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut i = 0;
    let flush = |word: &mut String, in_word: &mut bool, out: &mut Vec<Tok>| {
        if *in_word {
            out.push(Tok::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' => flush(&mut word, &mut in_word, &mut out),
            '#' if !in_word => break,
            '\'' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    // `$` inside single quotes is literal: keep it from being expanded.
                    word.push(if chars[i] == '$' { '\u{1}' } else { chars[i] });
                    i += 1;
                }
            }
            '"' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '$' && chars.get(i + 1) == Some(&'(') {
                        let end = subst_end(&chars, i);
                        word.extend(&chars[i..end]);
                        i = end;
                        continue;
                    }
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        i += 1;
                    }
                    word.push(chars[i]);
                    i += 1;
                }
            }
            '$' if chars.get(i + 1) == Some(&'(') => {
                in_word = true;
                let end = subst_end(&chars, i);
                word.extend(&chars[i..end]);
                i = end;
                continue;
            }
            '\\' if i + 1 < chars.len() => {
                in_word = true;
                word.push(chars[i + 1]);
                i += 1;
            }
            '|' | '&' | ';' | '(' | ')' => {
                flush(&mut word, &mut in_word, &mut out);
                let mut op = c.to_string();
                if chars.get(i + 1) == Some(&c) {
                    op.push(c);
                    i += 1;
                }
                out.push(Tok::Op(op));
            }
            '<' | '>' => {
                // `2>`, `3>file`, `>>`, `2>&1`: the digits before it belong to the operator.
                let fd = if in_word && word.chars().all(|d| d.is_ascii_digit()) {
                    in_word = false;
                    std::mem::take(&mut word)
                } else {
                    flush(&mut word, &mut in_word, &mut out);
                    String::new()
                };
                let mut op = format!("{fd}{c}");
                while matches!(chars.get(i + 1), Some('>') | Some('&')) {
                    op.push(chars[i + 1]);
                    i += 1;
                }
                out.push(Tok::Op(format!("redirect {op}")));
            }
            _ => {
                in_word = true;
                word.push(c);
            }
        }
        i += 1;
    }
    flush(&mut word, &mut in_word, &mut out);
    out
}

/// The index just past the `)` that closes the `$(` at `start`.
fn subst_end(chars: &[char], start: usize) -> usize {
    let mut depth = 0;
    let mut i = start + 1;
    while i < chars.len() {
        match chars[i] {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    panic!("unclosed $( in {:?}", chars.iter().collect::<String>())
}

/// Every mf invocation of a line: its words after `mf`, as written (placeholders unresolved),
/// the ones inside `$(…)` first.
fn invocations(line: &str) -> Vec<Vec<String>> {
    let toks = lex(line);
    let mut out = Vec::new();
    for t in &toks {
        if let Tok::Word(w) = t {
            for inner in substitutions(w) {
                out.extend(invocations(&inner));
            }
        }
    }
    let is_sub = |t: Option<&Tok>| match t {
        Some(Tok::Word(w)) => mf::cli::MAN_PAGES.contains(&w.as_str()) || w.starts_with('-'),
        _ => false,
    };
    let mut i = 0;
    // Whether `xargs` runs the command: it appends the file names it reads.
    let mut xargs = false;
    while i < toks.len() {
        match &toks[i] {
            Tok::Word(w) if w == "xargs" => xargs = true,
            Tok::Op(op) if !op.starts_with("redirect") => xargs = false,
            _ => {}
        }
        let start = match &toks[i] {
            // `mf` followed by anything but `--` (`claude mcp add mf -- mf mcp` names a server
            // first): a mistyped subcommand is an example too, and fails to parse.
            Tok::Word(w)
                if w == "mf"
                    && matches!(toks.get(i + 1), Some(Tok::Word(next)) if next != "--") =>
            {
                Some(i + 1)
            }
            // `cargo run [--release] [--locked] [-q] -- SUBCOMMAND …` is mf too (not `-p testgen`).
            Tok::Word(w) if w == "cargo" && toks.get(i + 1) == Some(&Tok::Word("run".into())) => {
                let dashes = toks[i..]
                    .iter()
                    .position(|t| *t == Tok::Word("--".into()) || matches!(t, Tok::Op(_)))
                    .map(|k| i + k);
                match dashes {
                    Some(k)
                        if toks[k] == Tok::Word("--".into())
                            && !toks[i..k].contains(&Tok::Word("-p".into()))
                            && is_sub(toks.get(k + 1)) =>
                    {
                        Some(k + 1)
                    }
                    _ => None,
                }
            }
            _ => None,
        };
        let Some(start) = start else {
            i += 1;
            continue;
        };
        let mut args = Vec::new();
        let mut k = start;
        while k < toks.len() {
            match &toks[k] {
                Tok::Word(w) => args.push(w.clone()),
                Tok::Op(op) if op.starts_with("redirect") => {
                    // The target of a redirection (`> results.jsonl`) is not an argument.
                    if !op.ends_with('&') && matches!(toks.get(k + 1), Some(Tok::Word(_))) {
                        k += 1;
                    }
                }
                Tok::Op(_) => break,
            }
            k += 1;
        }
        if xargs {
            args.push(XARGS_FILES.to_string());
        }
        out.push(args);
        i = k;
    }
    out
}

/// The commands inside `$(…)` in a word.
fn substitutions(word: &str) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < chars.len() {
        if chars[i] == '$' && chars[i + 1] == '(' {
            let end = subst_end(&chars, i);
            out.push(chars[i + 2..end - 1].iter().collect());
            i = end;
        } else {
            i += 1;
        }
    }
    out
}

struct Example {
    page: String,
    line: usize,
    text: String,
    args: Vec<String>,
}

fn examples() -> Vec<Example> {
    let mut out = Vec::new();
    for page in pages() {
        for block in shell_blocks(&page) {
            for (line, text) in &block.lines {
                for args in invocations(text) {
                    out.push(Example {
                        page: block.page.clone(),
                        line: *line,
                        text: text.clone(),
                        args,
                    });
                }
            }
        }
    }
    out
}

/// A temp dir of fixture copies with a `HOME` of its own, holding a Claude Code session.
struct Sandbox {
    env: TestEnv,
}

impl Sandbox {
    fn new() -> Self {
        let env = TestEnv::new();
        for dir in ["home", "tmp", "out", "fixtures", "logs/team-a"] {
            std::fs::create_dir_all(env.path(dir)).unwrap();
        }
        std::fs::copy(fixture(CHAT), env.path("fixtures").join(CHAT)).unwrap();
        for name in ["logs/a.jsonl", "logs/b.jsonl", "logs/team-a/c.jsonl"] {
            std::fs::copy(fixture(CHAT), env.path(name)).unwrap();
        }
        std::fs::write(env.path("files.txt"), "logs/a.jsonl\nlogs/b.jsonl\n").unwrap();
        let project = env.path("home/.claude/projects/-work-app");
        std::fs::create_dir_all(&project).unwrap();
        let session = project.join("0b6f3c4e-5a1d-4a8e-9a57-3f6d2c1e7b90.jsonl");
        std::fs::copy(fixture(CLAUDE), &session).unwrap();
        crate::util::age(&session);
        Sandbox { env }
    }

    fn dir(&self) -> &Path {
        self.env.dir.path()
    }

    fn vars(&self) -> Vec<(String, String)> {
        let home = self.env.path("home");
        let mut v = vec![
            ("HOME".into(), home.display().to_string()),
            ("TMPDIR".into(), self.env.path("tmp").display().to_string()),
            (
                "XDG_CONFIG_HOME".into(),
                home.join(".config").display().to_string(),
            ),
            (
                "XDG_CACHE_HOME".into(),
                home.join(".cache").display().to_string(),
            ),
            ("NO_COLOR".into(), "1".into()),
            ("MF_MODEL".into(), "extractive".into()),
        ];
        for key in ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "MF_API_KEY"] {
            v.push((key.into(), "sk-docs-example-not-a-key".into()));
        }
        for url in ["ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "MF_BASE_URL"] {
            v.push((url.into(), NOWHERE.into()));
        }
        let bin = Path::new(&mf_bin()).parent().unwrap().to_path_buf();
        let path = std::env::var("PATH").unwrap_or_default();
        v.push(("PATH".into(), format!("{}:{path}", bin.display())));
        v
    }

    fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(self.dir()).env_clear().envs(self.vars());
        cmd
    }

    /// The value of `$NAME` in an example.
    fn var(&self, name: &str) -> String {
        match name {
            "tmp" | "TMPDIR" => self.env.path("tmp").display().to_string(),
            "out" => self.env.path("out").display().to_string(),
            "HOME" => self.env.path("home").display().to_string(),
            "JOB_COMPLETION_INDEX" => "0".into(),
            "SHARDS" => "2".into(),
            _ => panic!("an example uses ${name}: give it a value in Sandbox::var"),
        }
    }

    /// One word of an example made concrete: `$(…)` run here, `$VAR` and `~` expanded,
    /// placeholders given a value, a glob expanded, a base URL pointed at nothing.
    fn word(&self, word: &str, previous: Option<&str>) -> Vec<String> {
        if previous == Some("--base-url") {
            return vec![NOWHERE.into()];
        }
        if word == XARGS_FILES {
            return self.glob("logs/*.jsonl");
        }
        let mut w = word.to_string();
        for inner in substitutions(word) {
            let value = self.substitute(&inner);
            w = w.replacen(&format!("$({inner})"), &value, 1);
        }
        w = self.expand_vars(&w).replace('\u{1}', "$");
        if let Some(rest) = w.strip_prefix("~/") {
            w = format!("{}/{rest}", self.var("HOME"));
        }
        // Absolute paths of the examples (`/tmp/…`, `/path/to/…`) land in the temp dir.
        if w.starts_with('/')
            && !w.starts_with("/dev/")
            && !w.starts_with(&self.dir().display().to_string())
        {
            w = self
                .dir()
                .join(w.trim_start_matches('/'))
                .display()
                .to_string();
        }
        let w = match w.as_str() {
            "FILE" | "FILE…" | "SESSION" => "chat.jsonl".to_string(),
            "MODEL" => "extractive".into(),
            "ID" => "msg-summary-1-13".into(),
            "SHELL" => "bash".into(),
            "AGENT" => "claude".into(),
            "DIR" => ".".into(),
            "USD" => "1".into(),
            _ => w,
        };
        if w.contains('*') {
            return self.glob(&w);
        }
        vec![w]
    }

    fn expand_vars(&self, w: &str) -> String {
        let mut out = String::new();
        let chars: Vec<char> = w.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if chars[i] == '$' {
                let braced = chars.get(i + 1) == Some(&'{');
                let from = if braced { i + 2 } else { i + 1 };
                let mut end = from;
                while end < chars.len() && (chars[end].is_ascii_alphanumeric() || chars[end] == '_')
                {
                    end += 1;
                }
                if end > from {
                    let name: String = chars[from..end].iter().collect();
                    out.push_str(&self.var(&name));
                    i = if braced { end + 1 } else { end };
                    continue;
                }
            }
            out.push(chars[i]);
            i += 1;
        }
        out
    }

    /// `dir/*.ext` (the only glob the examples use): the files of `dir` with that ending.
    fn glob(&self, pattern: &str) -> Vec<String> {
        let (dir, file) = pattern.rsplit_once('/').unwrap_or((".", pattern));
        let suffix = file
            .strip_prefix('*')
            .unwrap_or_else(|| panic!("glob {pattern}"));
        let mut out: Vec<String> = std::fs::read_dir(self.dir().join(dir))
            .unwrap_or_else(|e| panic!("glob {pattern}: {e}"))
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(suffix))
            .map(|n| format!("{dir}/{n}"))
            .collect();
        out.sort();
        assert!(!out.is_empty(), "glob {pattern} matched nothing");
        out
    }

    /// What `$(inner)` prints here: its mf command run in the temp dir.
    fn substitute(&self, inner: &str) -> String {
        let calls = invocations(inner);
        assert_eq!(calls.len(), 1, "$({inner}) is one mf command");
        let args = self.args(&calls[0]);
        let out = self.command(&mf_bin()).args(&args).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let first = text.lines().next().unwrap_or("").trim().to_string();
        assert!(
            !first.is_empty(),
            "$({inner}) printed nothing here: {out:?}"
        );
        first
    }

    /// An example's words made concrete; the `*.jsonl` files they name made (copies of the
    /// chat fixture) unless they are outputs.
    fn args(&self, words: &[String]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (k, w) in words.iter().enumerate() {
            let previous = k.checked_sub(1).map(|p| words[p].as_str());
            for value in self.word(w, previous) {
                let output = matches!(previous, Some("-o" | "--output" | "--record" | "--out"));
                let path = self.dir().join(&value);
                if !output && value.ends_with(".jsonl") && !value.starts_with('-') && !path.exists()
                {
                    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                    std::fs::copy(fixture(CHAT), &path).unwrap();
                }
                out.push(value);
            }
        }
        out
    }

    /// What the example reads on standard input.
    fn stdin(&self, args: &[String]) -> Vec<u8> {
        let from_list = args
            .windows(2)
            .any(|w| w[0] == "--files-from" && w[1] == "-");
        if from_list {
            let sep = if args.iter().any(|a| a == "-0") {
                "\0"
            } else {
                "\n"
            };
            return format!("logs/a.jsonl{sep}logs/b.jsonl{sep}").into_bytes();
        }
        match args.first().map(String::as_str) {
            Some("mcp") => concat!(
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"docs","version":"0"}}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                "\n"
            )
            .as_bytes()
            .to_vec(),
            Some("hook") => b"{}\n".to_vec(),
            _ => std::fs::read(fixture(CHAT)).unwrap(),
        }
    }

    /// Run mf with these (concrete) arguments: exit code, stdout, stderr.
    fn run(&self, args: &[String]) -> (i32, String, String) {
        let mut child = self
            .command(&mf_bin())
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let input = self.stdin(args);
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            let _ = stdin.write_all(&input);
        });
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > Duration::from_secs(60) {
                let _ = child.kill();
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

/// Whether the example names a model that is called over the network.
fn remote(args: &[String]) -> bool {
    args.windows(2)
        .any(|w| matches!(w[0].as_str(), "--model" | "-m") && w[1] != "extractive")
}

#[test]
fn the_pages_hold_examples_of_every_command() {
    let all = examples();
    if std::env::var_os("MF_DOCS_LIST").is_some() {
        for e in &all {
            eprintln!("{}:{}: mf {}", e.page, e.line, e.args.join(" "));
        }
    }
    assert!(all.len() > 40, "only {} examples found", all.len());
    for cmd in mf::cli::MAN_PAGES {
        assert!(
            all.iter()
                .any(|e| e.args.first().map(String::as_str) == Some(cmd)),
            "no example of `mf {cmd}` in README.md or docs/"
        );
    }
    // The extraction itself: a pipe, a substitution, xargs and `cargo run --` are all seen.
    let line = r#"find logs -print0 | xargs -0 mf compact --json > r.jsonl && mf compact "$(mf sessions --latest)" --model haiku  # x"#;
    assert_eq!(
        invocations(line),
        vec![
            vec!["sessions".to_string(), "--latest".into()],
            vec!["compact".to_string(), "--json".into(), XARGS_FILES.into()],
            vec![
                "compact".to_string(),
                "$(mf sessions --latest)".into(),
                "--model".into(),
                "haiku".into()
            ],
        ]
    );
    assert_eq!(
        invocations(
            "cargo run --release -- compact f.jsonl 3>rec.jsonl; cargo run -p testgen -- facts"
        ),
        vec![vec!["compact".to_string(), "f.jsonl".into()]]
    );
    assert_eq!(
        invocations("claude mcp add mf -- mf mcp --agent claude"),
        vec![vec!["mcp".to_string(), "--agent".into(), "claude".into()]]
    );
}

#[test]
fn a_mistyped_subcommand_in_an_example_fails() {
    use clap::Parser;
    let calls = invocations("ls | mf compcat chat.jsonl");
    assert_eq!(
        calls,
        vec![vec!["compcat".to_string(), "chat.jsonl".into()]]
    );
    let err =
        mf::cli::Cli::try_parse_from(std::iter::once("mf".to_string()).chain(calls[0].clone()))
            .expect_err("an unknown subcommand is refused");
    assert_eq!(err.kind(), clap::error::ErrorKind::InvalidSubcommand);
}

#[test]
fn every_example_parses() {
    use clap::Parser;
    let sandbox = Sandbox::new();
    let mut bad = Vec::new();
    for e in examples() {
        let args = sandbox.args(&e.args);
        let parsed = mf::cli::Cli::try_parse_from(std::iter::once("mf".to_string()).chain(args));
        if let Err(err) = parsed {
            use clap::error::ErrorKind::*;
            if !matches!(err.kind(), DisplayHelp | DisplayVersion) {
                bad.push(format!(
                    "{}:{}: {}\n{}",
                    e.page,
                    e.line,
                    e.text,
                    err.render()
                ));
            }
        }
    }
    assert!(bad.is_empty(), "examples clap refuses:\n{}", bad.join("\n"));
}

#[test]
fn an_unknown_flag_in_an_example_fails() {
    // The check above is not blind: the same extraction and parse refuse a flag mf lacks.
    use clap::Parser;
    let sandbox = Sandbox::new();
    let calls = invocations("mf compact chat.jsonl --model extractive --no-such-flag");
    let args = sandbox.args(&calls[0]);
    let err = mf::cli::Cli::try_parse_from(std::iter::once("mf".to_string()).chain(args))
        .expect_err("an unknown flag is refused");
    assert_eq!(err.kind(), clap::error::ErrorKind::UnknownArgument);
}

#[test]
fn every_example_runs_on_fixture_copies() {
    let all = examples();
    let mut failures = Vec::new();
    let mut seen_not_run = Vec::new();
    let jobs: Vec<&Example> = all
        .iter()
        .filter(|e| {
            let skip = NOT_RUN.iter().find(|(what, _)| e.text.contains(what));
            if let Some((what, _)) = skip {
                seen_not_run.push(*what);
            }
            skip.is_none()
        })
        .collect();
    // Remote models wait out their retries against a port where nothing answers: run a few at
    // once.
    let results: Vec<(String, Option<String>)> = std::thread::scope(|s| {
        let chunks: Vec<Vec<&Example>> = (0..4)
            .map(|k| jobs.iter().skip(k).step_by(4).copied().collect())
            .collect();
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                s.spawn(move || {
                    chunk
                        .into_iter()
                        .map(|e| {
                            let sandbox = Sandbox::new();
                            let args = sandbox.args(&e.args);
                            let (code, stdout, stderr) = sandbox.run(&args);
                            // A remote model's call finds nothing at its base URL: 3 (0 with --dry-run).
                            let allowed: &[i32] =
                                if remote(&args) { &[0, 1, 3] } else { &[0, 1] };
                            let what = format!("{}:{}: mf {}", e.page, e.line, args.join(" "));
                            let problem = (!allowed.contains(&code)
                                || stderr.contains("internal error"))
                            .then(|| {
                                format!("{what}\n  from: {}\n  exit {code} (want one of {allowed:?})\n  stdout: {}\n  stderr: {}",
                                    e.text,
                                    stdout.lines().take(5).collect::<Vec<_>>().join("\n          "),
                                    stderr.trim())
                            });
                            (what, problem)
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    for (_, problem) in &results {
        if let Some(p) = problem {
            failures.push(p.clone());
        }
    }
    for (what, why) in NOT_RUN {
        assert!(
            seen_not_run.contains(what),
            "NOT_RUN lists `{what}` ({why}), which no page holds any more"
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {} examples did not run as documented:\n{}",
        failures.len(),
        results.len(),
        failures.join("\n")
    );
}

/// The block under the README's `<!-- {marker}` comment.
fn readme_block(marker: &str) -> Block {
    shell_blocks("README.md")
        .into_iter()
        .find(|b| b.marker.starts_with(&format!("<!-- {marker}")))
        .unwrap_or_else(|| panic!("README has no block marked `<!-- {marker}`"))
}

fn sh(sandbox: &Sandbox, script: &str) -> std::process::Output {
    sandbox
        .command("sh")
        .args(["-ec", script])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn set_up_command_1_runs_twice_and_leaves_the_fixture_as_committed() {
    let block = readme_block("setup");
    let (_, first) = block
        .lines
        .iter()
        .find(|(_, l)| l.contains("cargo run"))
        .expect("set-up command 1");
    // .ci/run runs the same command (with --locked -q): keep the two in step.
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    let mf_part = &first[first.find("-- compact").expect("cargo run -- compact") + 3..];
    assert!(
        ci.contains(mf_part) && ci.contains("out=\"$(mktemp -d)\""),
        ".ci/run no longer runs the README's set-up command 1 ({mf_part})"
    );
    let sandbox = Sandbox::new();
    let fixture_copy = sandbox.dir().join("fixtures").join(CHAT);
    let before = std::fs::read(&fixture_copy).unwrap();
    // `cargo run --release --` is the binary under test (the test must not build a release).
    let script = first.replacen("cargo run --release --", &mf_bin(), 1);
    for run in 1..=2 {
        let out = sh(&sandbox, &script);
        assert!(
            out.status.success(),
            "run {run} of set-up command 1 failed: {script}\n{out:?}"
        );
    }
    assert_eq!(std::fs::read(&fixture_copy).unwrap(), before);
}

#[test]
fn the_offline_quick_start_runs_twice_in_a_row() {
    let block = readme_block("quickstart: offline");
    let script: Vec<&str> = block.lines.iter().map(|(_, l)| l.as_str()).collect();
    let script = script.join("\n");
    let sandbox = Sandbox::new();
    for run in 1..=2 {
        let out = sh(&sandbox, &script);
        assert!(
            out.status.success(),
            "run {run} of the offline quick start failed:\n{script}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("action: folded") && stdout.contains("action: skipped"),
            "run {run}: the first compact folds, the second skips:\n{stdout}"
        );
    }
}

#[test]
fn the_agent_quick_start_folds_the_newest_session_twice() {
    let block = readme_block("quickstart: agent");
    let sandbox = Sandbox::new();
    let session = std::fs::read_dir(sandbox.env.path("home/.claude/projects/-work-app"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let before = std::fs::read(&session).unwrap();
    let mut ran = Vec::new();
    let mut listed = BTreeMap::new();
    for run in 1..=2 {
        for (_, line) in &block.lines {
            if invocations(line).is_empty() {
                let (what, why) = QUICKSTART_NOT_MF
                    .iter()
                    .find(|(what, _)| line.starts_with(what))
                    .unwrap_or_else(|| {
                        panic!("a quick-start line that is not mf and not listed: {line}")
                    });
                listed.insert(*what, *why);
                continue;
            }
            // `haiku` needs the network; `extractive` folds the same session offline.
            let script = line.replace("--model haiku", "--model extractive");
            let out = sh(&sandbox, &script);
            assert!(
                out.status.success(),
                "run {run}: {script}\n--- stdout ---\n{}\n--- stderr ---\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            ran.push((
                run,
                script,
                String::from_utf8_lossy(&out.stdout).into_owned(),
            ));
        }
    }
    assert_eq!(listed.len(), QUICKSTART_NOT_MF.len(), "{listed:?}");
    let compacts: Vec<&(i32, String, String)> = ran
        .iter()
        .filter(|(_, s, _)| s.contains("compact"))
        .collect();
    assert_eq!(compacts.len(), 2, "{ran:?}");
    assert!(
        compacts[0].2.contains("action: folded"),
        "the first run folds the session: {}",
        compacts[0].2
    );
    assert!(
        compacts[1].2.contains("action: skipped"),
        "the second run folds nothing new: {}",
        compacts[1].2
    );
    let after = std::fs::read(&session).unwrap();
    assert!(
        after.len() > before.len() && after.starts_with(&before),
        "the newest session was appended to, its bytes kept"
    );
}

/// GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(page: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(page).unwrap();
    let mut out: Vec<String> = Vec::new();
    let mut fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
        }
        if fence || !line.starts_with('#') {
            continue;
        }
        let base = slug(line.trim_start_matches('#'));
        let n = out
            .iter()
            .filter(|a| **a == base || a.starts_with(&format!("{base}-")))
            .count();
        out.push(if n == 0 { base } else { format!("{base}-{n}") });
    }
    out
}

#[test]
fn relative_links_between_the_pages_resolve() {
    let mut bad = Vec::new();
    for page in pages() {
        let path = root().join(&page);
        let text = std::fs::read_to_string(&path).unwrap();
        let dir = path.parent().unwrap();
        for (n, line) in text.lines().enumerate() {
            let mut rest = line;
            while let Some(at) = rest.find("](") {
                let tail = &rest[at + 2..];
                let Some(end) = tail.find(')') else { break };
                let target = &tail[..end];
                rest = &tail[end..];
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
                let file_path = if file.is_empty() {
                    path.clone()
                } else {
                    dir.join(file)
                };
                let from_root = file_path
                    .strip_prefix(root())
                    .map(|p| p.display().to_string())
                    .unwrap_or_default();
                if !file_path.exists() {
                    let elsewhere = LINKS_ADDED_ELSEWHERE
                        .iter()
                        .any(|(f, _)| from_root.ends_with(f));
                    if !elsewhere {
                        bad.push(format!("{page}:{}: {target}: no such file", n + 1));
                    }
                    continue;
                }
                if !anchor.is_empty()
                    && file_path.extension().is_some_and(|e| e == "md")
                    && !anchors(&file_path).iter().any(|a| a == anchor)
                {
                    bad.push(format!("{page}:{}: {target}: no such heading", n + 1));
                }
            }
        }
    }
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}

#[test]
fn the_readme_stays_short() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 400,
        "README.md has {lines} lines; move the detail to docs/ (at most 400)"
    );
}
