//! `testgen`: write generated chat transcripts.
//!
//! ```text
//! testgen facts --turns 40 [--seed 1] [--out chat.jsonl] [--facts facts.json]
//! testgen agent --calls 300 [--seed 1] [--out session.jsonl]
//! testgen long --format claude|codex|pi|chat --calls 45 [--seed 1] [--out session.jsonl]
//! testgen bulk [--lines 1000000] [--size 300M] [--seed 1] [--out big.jsonl]
//! testgen fidelity [--mf PATH] [--model MODEL] [--strategy S]... [-- MF_COMPACT_ARGS...]
//! ```
//!
//! Without `--out` the transcript goes to stdout. A summary line goes to stderr.

use std::fs::File;
use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Instant;

const USAGE: &str = "usage:
  testgen facts --turns N [--seed S] [--out FILE] [--facts FILE]
      a work conversation of N turns with planted facts (and, with --facts, the list of them)
  testgen agent --calls N [--seed S] [--out FILE]
      an agent session whose second turn makes N tool calls (one giant turn)
  testgen long --format claude|codex|pi|chat --calls N [--seed S] [--out FILE]
      a single-prompt agent session of N tool calls in that agent's own session format
  testgen bulk [--lines N] [--size BYTES] [--seed S] [--out FILE]
      a large transcript of at least N lines (default 1000000) and BYTES bytes (default 300M;
      K, M and G suffixes are powers of 1024)
";

mod measure;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = if args.first().map(String::as_str) == Some("fidelity") {
        measure::parse(args.into_iter().skip(1)).and_then(|o| measure::run(&o))
    } else {
        run(args)
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("testgen: {e}\n{USAGE}{}", measure::USAGE);
            ExitCode::from(2)
        }
    }
}

struct Args {
    mode: String,
    turns: Option<usize>,
    calls: Option<usize>,
    seed: u64,
    out: Option<String>,
    facts: Option<String>,
    format: Option<String>,
    lines: u64,
    size: u64,
}

fn parse_size(s: &str) -> Result<u64, String> {
    let (num, mult) = match s.chars().last() {
        Some('K' | 'k') => (&s[..s.len() - 1], 1 << 10),
        Some('M' | 'm') => (&s[..s.len() - 1], 1 << 20),
        Some('G' | 'g') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>()
        .map(|n| n * mult)
        .map_err(|_| format!("not a size: {s}"))
}

fn parse(args: Vec<String>) -> Result<Args, String> {
    let mut it = args.into_iter();
    let mode = it.next().ok_or("no mode given")?;
    if !["facts", "agent", "long", "bulk"].contains(&mode.as_str()) {
        return Err(format!("unknown mode {mode:?}"));
    }
    let mut a = Args {
        mode,
        turns: None,
        calls: None,
        seed: 1,
        out: None,
        facts: None,
        format: None,
        lines: 1_000_000,
        size: 300 << 20,
    };
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--turns" => a.turns = Some(value()?.parse().map_err(|_| "--turns takes a number")?),
            "--calls" => a.calls = Some(value()?.parse().map_err(|_| "--calls takes a number")?),
            "--seed" => a.seed = value()?.parse().map_err(|_| "--seed takes a number")?,
            "--out" | "-o" => a.out = Some(value()?),
            "--facts" => a.facts = Some(value()?),
            "--format" => a.format = Some(value()?),
            "--lines" => a.lines = value()?.parse().map_err(|_| "--lines takes a number")?,
            "--size" => a.size = parse_size(&value()?)?,
            "-h" | "--help" => return Err("help".into()),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(a)
}

fn output(path: &Option<String>) -> io::Result<Box<dyn Write>> {
    Ok(match path {
        Some(p) => Box::new(File::create(p)?),
        None => Box::new(io::stdout().lock()),
    })
}

fn run(args: Vec<String>) -> Result<(), String> {
    let a = parse(args)?;
    let started = Instant::now();
    let io_err = |e: io::Error| e.to_string();
    if a.mode == "facts" {
        let turns = a.turns.ok_or("facts needs --turns")?;
        let conv = testgen::facts(turns, a.seed);
        let mut out = output(&a.out).map_err(io_err)?;
        out.write_all(conv.to_jsonl().as_bytes()).map_err(io_err)?;
        out.flush().map_err(io_err)?;
        if let Some(p) = &a.facts {
            std::fs::write(p, conv.facts_json() + "\n").map_err(io_err)?;
        }
        let corrected = conv
            .facts
            .iter()
            .filter(|f| f.corrected_turn.is_some())
            .count();
        eprintln!(
            "testgen: {} messages in {turns} turns, {} facts planted ({corrected} corrected later)",
            conv.messages.len(),
            conv.facts.len()
        );
    } else if a.mode == "agent" {
        let calls = a.calls.ok_or("agent needs --calls")?;
        let conv = testgen::agent_session(calls, a.seed);
        let mut out = output(&a.out).map_err(io_err)?;
        out.write_all(conv.to_jsonl().as_bytes()).map_err(io_err)?;
        out.flush().map_err(io_err)?;
        eprintln!(
            "testgen: {} messages, {calls} tool calls in one turn",
            conv.messages.len()
        );
    } else if a.mode == "long" {
        let calls = a.calls.ok_or("long needs --calls")?;
        let format = a.format.as_deref().ok_or("long needs --format")?;
        let agent =
            testgen::Agent::parse(format).ok_or("--format is one of claude, codex, pi, chat")?;
        let text = testgen::long_session(agent, calls, a.seed);
        let mut out = output(&a.out).map_err(io_err)?;
        out.write_all(text.as_bytes()).map_err(io_err)?;
        out.flush().map_err(io_err)?;
        eprintln!(
            "testgen: a {format} session of one prompt and {calls} tool calls, {} lines",
            text.lines().count()
        );
    } else {
        let out = output(&a.out).map_err(io_err)?;
        let stats = testgen::bulk(
            out,
            testgen::BulkOptions {
                min_lines: a.lines,
                min_bytes: a.size,
                seed: a.seed,
            },
        )
        .map_err(io_err)?;
        eprintln!(
            "testgen: {} lines, {} bytes ({:.1} MB), {} turns in {:.2} s",
            stats.lines,
            stats.bytes,
            stats.bytes as f64 / (1u64 << 20) as f64,
            stats.turns,
            started.elapsed().as_secs_f64()
        );
    }
    Ok(())
}
