//! `testgen fidelity`: the fidelity measurement of issue 9. For generated planted-fact
//! conversations of several lengths and seeds, it runs `mf compact` with each strategy (and a
//! named model), then scores `mf recall` against the planted facts: per-class retention in the
//! recall view, the compression ratio (recall tokens after ÷ before), corrections kept at their
//! latest value, and the audit's verdicts from the decision record. Prints Markdown tables.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;
use testgen::CLASSES;
use testgen::score::{Score, ViewMessage, ratio, read_view, score, total};

pub const USAGE: &str =
    "  testgen fidelity [--mf PATH] [--model MODEL] [--turns 12,40,120] [--seeds 1,2,3]
                   [--strategy S]... [--dir DIR] [-- MF_COMPACT_ARGS...]
      run `mf compact --model MODEL --strategy S` on generated conversations and print the
      fidelity tables (strategies default to summary, mask and mask,summary; arguments after
      `--` go to every `mf compact`)";

pub struct Options {
    pub mf: String,
    pub model: String,
    pub turns: Vec<usize>,
    pub seeds: Vec<u64>,
    pub strategies: Vec<String>,
    pub dir: Option<String>,
    pub extra: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            mf: "mf".into(),
            model: "extractive".into(),
            turns: vec![12, 40, 120],
            seeds: vec![1, 2, 3],
            strategies: Vec::new(),
            dir: None,
            extra: Vec::new(),
        }
    }
}

fn list<T: std::str::FromStr>(s: &str, what: &str) -> Result<Vec<T>, String> {
    s.split(',')
        .map(|x| {
            x.trim()
                .parse()
                .map_err(|_| format!("{what}: not a number: {x}"))
        })
        .collect()
}

pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Options, String> {
    let mut o = Options::default();
    let mut it = args.into_iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--mf" => o.mf = value()?,
            "--model" => o.model = value()?,
            "--turns" => o.turns = list(&value()?, "--turns")?,
            "--seeds" => o.seeds = list(&value()?, "--seeds")?,
            "--strategy" => o.strategies.push(value()?),
            "--dir" => o.dir = Some(value()?),
            "--" => {
                o.extra = it.by_ref().collect();
                break;
            }
            other => return Err(format!("unknown flag {other}")),
        }
    }
    if o.strategies.is_empty() {
        o.strategies = vec!["summary".into(), "mask".into(), "mask,summary".into()];
    }
    Ok(o)
}

/// One `mf compact` of one conversation with one strategy.
struct Run {
    score: Score,
    /// Recall tokens after ÷ before, from the decision record (mf's estimate).
    tokens: f64,
    /// The same from this tool's count of the views' characters.
    chars: f64,
    exit: i32,
    action: String,
    written: usize,
    stubs: usize,
    declined: BTreeMap<String, usize>,
    retentions: Vec<f64>,
    inventions: usize,
    superseded: usize,
    forgeries: usize,
    echoes: usize,
    calls: u64,
    secs: f64,
}

fn mf(opts: &Options, args: &[&str]) -> Result<(i32, String, String), String> {
    let out = Command::new(&opts.mf)
        .args(args)
        .env("MF_NO_PROGRESS", "1")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", opts.mf))?;
    Ok((
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

fn recall(opts: &Options, file: &Path) -> Result<Vec<ViewMessage>, String> {
    let f = file.to_str().ok_or("a UTF-8 path")?;
    let (code, out, err) = mf(opts, &["recall", f])?;
    if code != 0 {
        return Err(format!("mf recall {f}: exit {code}: {err}"));
    }
    read_view(&out)
}

fn run_one(
    opts: &Options,
    conv: &testgen::Conversation,
    file: &Path,
    strategy: &str,
    before: &Score,
) -> Result<Run, String> {
    let f = file.to_str().ok_or("a UTF-8 path")?;
    let mut args = vec![
        "compact",
        f,
        "--model",
        &opts.model,
        "--strategy",
        strategy,
        "--json",
    ];
    args.extend(opts.extra.iter().map(String::as_str));
    let started = Instant::now();
    let (exit, out, err) = mf(opts, &args)?;
    let secs = started.elapsed().as_secs_f64();
    let rec: Value = out
        .lines()
        .find(|l| !l.trim().is_empty())
        .and_then(|l| serde_json::from_str(l).ok())
        .ok_or_else(|| format!("mf compact {f}: exit {exit}, no decision record: {err}"))?;
    let after = score(conv, &recall(opts, file)?);
    let num = |v: &Value| v.as_f64().unwrap_or(0.0);
    let mut run = Run {
        tokens: num(&rec["after"]["tokens"]) / num(&rec["before"]["tokens"]).max(1.0),
        chars: after.chars as f64 / before.chars.max(1) as f64,
        score: after,
        exit,
        action: rec["action"].as_str().unwrap_or("?").to_string(),
        written: 0,
        stubs: 0,
        declined: BTreeMap::new(),
        retentions: Vec::new(),
        inventions: 0,
        superseded: 0,
        forgeries: 0,
        echoes: 0,
        calls: rec["calls"].as_u64().unwrap_or(0),
        secs,
    };
    for s in rec["summaries"].as_array().into_iter().flatten() {
        let outcome = s["outcome"].as_str().unwrap_or("");
        let id = s["id"].as_str().unwrap_or("");
        if id.starts_with("msg-stub-") {
            run.stubs += 1;
            continue;
        }
        if outcome.starts_with("written") {
            run.written += 1;
        } else if let Some(why) = outcome.strip_prefix("declined") {
            let kind = if why.starts_with(" as lossy") {
                "lossy"
            } else {
                "not smaller"
            };
            *run.declined.entry(kind.into()).or_default() += 1;
        }
        let a = &s["audit"];
        if let Some(r) = a["retention"].as_f64() {
            run.retentions.push(r);
        }
        let n = |k: &str| a[k].as_array().map_or(0, Vec::len);
        run.inventions += n("inventions");
        run.superseded += n("superseded");
        run.forgeries += n("forgeries");
        run.echoes += usize::from(a["echo"] == true);
    }
    if run.action == "declined" && run.declined.is_empty() {
        // The summarizer failed (no summary to audit).
        *run.declined.entry("summarizer failed".into()).or_default() += 1;
    }
    Ok(run)
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

fn pct(x: f64) -> String {
    format!("{:.0} %", x * 100.0)
}

pub fn run(opts: &Options) -> Result<(), String> {
    let dir = match &opts.dir {
        Some(d) => PathBuf::from(d),
        None => std::env::temp_dir().join(format!("testgen-fidelity-{}", std::process::id())),
    };
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // (strategy, turns) → runs over the seeds.
    let mut results: BTreeMap<(usize, usize), Vec<Run>> = BTreeMap::new();
    for &turns in &opts.turns {
        for &seed in &opts.seeds {
            let conv = testgen::facts(turns, seed);
            let original = dir.join(format!("t{turns}-s{seed}.jsonl"));
            std::fs::write(&original, conv.to_jsonl()).map_err(|e| e.to_string())?;
            let before = score(&conv, &recall(opts, &original)?);
            for (k, strategy) in opts.strategies.iter().enumerate() {
                let file = dir.join(format!("t{turns}-s{seed}-{}.jsonl", slug(strategy)));
                std::fs::copy(&original, &file).map_err(|e| e.to_string())?;
                let r = run_one(opts, &conv, &file, strategy, &before)?;
                eprintln!(
                    "{turns} turns, seed {seed}, {strategy}: {} (exit {}), {} calls, {:.1} s, {:.3} of the tokens, facts {:.2}, corrections {}/{}",
                    r.action,
                    r.exit,
                    r.calls,
                    r.secs,
                    r.tokens,
                    r.score.retention(),
                    r.score.corrections_ok,
                    r.score.corrections
                );
                results.entry((k, turns)).or_default().push(r);
            }
        }
    }
    print_tables(opts, &results);
    if opts.dir.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}

fn print_tables(opts: &Options, results: &BTreeMap<(usize, usize), Vec<Run>>) {
    let seeds = opts
        .seeds
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    println!(
        "`--model {}`{}, seeds {seeds}; each cell sums or spans the seeds.\n",
        opts.model,
        if opts.extra.is_empty() {
            String::new()
        } else {
            format!(" with `{}`", opts.extra.join(" "))
        }
    );
    println!(
        "| strategy | turns | recall after ÷ before (tokens) | planted facts kept | worst class | tool-result facts kept | corrections at latest value | audit verdicts |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for ((k, turns), runs) in results {
        let t = total(runs.iter().map(|r| &r.score));
        let span = |f: fn(&Run) -> f64| {
            let (lo, hi) = runs
                .iter()
                .fold((f64::MAX, 0f64), |(lo, hi), r| (lo.min(f(r)), hi.max(f(r))));
            if (hi - lo).abs() < 0.0005 {
                format!("{lo:.3}")
            } else {
                format!("{lo:.3}–{hi:.3}")
            }
        };
        let worst = match t.worst_class() {
            Some((c, r)) if r < 1.0 => format!("{c} {}", pct(r)),
            Some(_) => "none under 100 %".into(),
            None => "—".into(),
        };
        let (kept, planted) = t
            .classes
            .values()
            .fold((0, 0), |(k, p), c| (k + c.kept, p + c.planted));
        let (tk, tp) = t
            .classes
            .values()
            .fold((0, 0), |(k, p), c| (k + c.tool_kept, p + c.tool_planted));
        println!(
            "| `{}` | {turns} | {} ({} by characters) | {kept}/{planted} ({}) | {worst} | {tk}/{tp} ({}) | {}/{} | {} |",
            opts.strategies[*k],
            span(|r| r.tokens),
            span(|r| r.chars),
            pct(ratio(kept, planted)),
            pct(ratio(tk, tp)),
            t.corrections_ok,
            t.corrections,
            verdicts(runs),
        );
    }
    println!(
        "\nPer class (planted facts kept in the recall view, facts said where the audit counts them):\n"
    );
    print!("| strategy | turns |");
    for c in CLASSES {
        print!(" {c} |");
    }
    println!();
    print!("|---|---|");
    for _ in CLASSES {
        print!("---|");
    }
    println!();
    for ((k, turns), runs) in results {
        let t = total(runs.iter().map(|r| &r.score));
        print!("| `{}` | {turns} |", opts.strategies[*k]);
        for c in CLASSES {
            let x = t.classes[c];
            print!(" {}/{} |", x.kept, x.planted);
        }
        println!();
    }
}

/// The audit's verdicts over the runs of one row, in words.
fn verdicts(runs: &[Run]) -> String {
    let written: usize = runs.iter().map(|r| r.written).sum();
    let stubs: usize = runs.iter().map(|r| r.stubs).sum();
    let mut declined: BTreeMap<&str, usize> = BTreeMap::new();
    for r in runs {
        for (k, n) in &r.declined {
            *declined.entry(k).or_default() += n;
        }
    }
    let rets: Vec<f64> = runs
        .iter()
        .flat_map(|r| r.retentions.iter().copied())
        .collect();
    let mut parts = Vec::new();
    if written > 0 || !rets.is_empty() {
        let (lo, hi) = rets
            .iter()
            .fold((f64::MAX, 0f64), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        parts.push(format!(
            "{written} written{}",
            if rets.is_empty() {
                String::new()
            } else if (hi - lo).abs() < 0.005 {
                format!(", audit retention {}", pct(lo))
            } else {
                format!(", audit retention {}–{}", pct(lo), pct(hi))
            }
        ));
    }
    for (k, n) in declined {
        parts.push(format!("{n} declined ({k})"));
    }
    if stubs > 0 {
        parts.push(format!("{stubs} stubs"));
    }
    let flags: Vec<String> = [
        (
            "inventions",
            runs.iter().map(|r| r.inventions).sum::<usize>(),
        ),
        ("superseded", runs.iter().map(|r| r.superseded).sum()),
        ("forgeries", runs.iter().map(|r| r.forgeries).sum()),
        ("echoes", runs.iter().map(|r| r.echoes).sum()),
    ]
    .into_iter()
    .filter(|(_, n)| *n > 0)
    .map(|(k, n)| format!("{n} {k}"))
    .collect();
    if !rets.is_empty() {
        parts.push(if flags.is_empty() {
            "no flags".into()
        } else {
            format!("flagged: {}", flags.join(", "))
        });
    }
    let failed: Vec<String> = runs
        .iter()
        .filter(|r| r.exit != 0)
        .map(|r| r.exit.to_string())
        .collect();
    if !failed.is_empty() {
        parts.push(format!("exit {}", failed.join(", ")));
    }
    if parts.is_empty() {
        "—".into()
    } else {
        parts.join("; ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategies_keep_their_commas_and_the_rest_goes_to_mf() {
        let o = parse(
            [
                "--turns",
                "12,120",
                "--strategy",
                "mask,summary",
                "--strategy",
                "cited",
                "--",
                "--base-url",
                "http://127.0.0.1:8081/v1",
            ]
            .map(String::from),
        )
        .unwrap();
        assert_eq!(o.turns, [12, 120]);
        assert_eq!(o.seeds, [1, 2, 3]);
        assert_eq!(o.strategies, ["mask,summary", "cited"]);
        assert_eq!(o.extra, ["--base-url", "http://127.0.0.1:8081/v1"]);
        let d = parse(Vec::new()).unwrap();
        assert_eq!(d.strategies, ["summary", "mask", "mask,summary"]);
        assert!(parse(["--turns", "x"].map(String::from)).is_err());
    }
}
