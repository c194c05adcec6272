//! `mf eval`: what a fold keeps that the rest of the session goes on to use. Each file is read
//! (never written), cut at its split (`crate::eval::cut`); the file as it stood at the cut is
//! copied into a private directory and folded there by compact's own pipeline (handed in by the
//! command table: commands never import each other), once per run; each copy is read back as
//! `mf recall` reads it and measured (`crate::eval`); `render::eval` prints the figures.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::cli::{CompactArgs, EvalArgs};
use crate::decision::{Action, DecisionRecord, Reason};
use crate::entry::estimate_tokens;
use crate::error::{MfError, classify, hints};
use crate::eval::{self, Cut, Said, Spread};
use crate::exit_status::ExitStatus;
use crate::fold::Ledger;
use crate::fold::audit::Item;
use crate::interrupt::Interrupt;
use crate::render::eval::{
    ClassView, CutView, EvalView, FoldView, FutureUseView, LostView, QuestionView, QuestionsView,
    ViewSize, strategy_name,
};
use crate::render::{self, Ui};
use crate::search::Query;
use crate::settings::{CompactSettings, ModelChoice};
use crate::transcript::{self, ReadOptions};

/// Compact's pipeline: every file of the settings folded in place, each file's record or error.
pub type Compact<'a> = &'a dyn Fn(&CompactSettings) -> Result<Vec<Result<DecisionRecord>>>;

/// How many lost items a file's figures name.
const LOST_LISTED: usize = 20;

/// How many of search's hits may hold an answer.
const SEARCH_TOP: usize = 3;

/// A question and the answer that should be reachable.
#[derive(Debug, Clone, serde::Deserialize)]
struct Question {
    question: String,
    answer: String,
}

/// One file made ready: its cut, what the future uses that the past holds, its copies.
struct Prepared {
    format: String,
    tokens: usize,
    cut: Cut,
    cut_line: u32,
    cut_turn: u64,
    found: Vec<Item>,
    copies: Vec<PathBuf>,
    /// Estimated tokens of the copy's recall view before the fold.
    view_before: usize,
}

/// What one run's fold left.
struct Measured {
    kept: eval::Kept,
    view_tokens: usize,
    /// Per question: answered by recall, by search.
    answered: Vec<(bool, bool)>,
}

/// `mf eval`: resolve the settings as compact does, cut and copy every file, fold the copies,
/// measure, print; the exit status the files add up to.
pub fn eval(
    args: EvalArgs,
    config: Option<&Path>,
    ui: Ui,
    interrupt: &Interrupt,
    compact: Compact<'_>,
) -> Result<ExitStatus> {
    let (runs, split, json) = (args.runs, args.split, args.json);
    let questions = match &args.questions {
        Some(p) => read_questions(p)?,
        None => Vec::new(),
    };
    let asks = args.questions.is_some();
    // Standard input is read once, into the input's unnamed copy; compact's check that it is
    // not compacted in place concerns a write eval never makes.
    let inputs = args.files.clone();
    if inputs.iter().filter(|f| f.as_os_str() == "-").count() > 1 {
        return Err(MfError::usage(
            "standard input can be read once: give `-` as one file",
            None,
        )
        .into());
    }
    let mut settings = CompactSettings::resolve(compact_args(args), config)?;
    settings.files = inputs;
    let model = match &settings.model {
        _ if !settings.policy.strategy.summarizes() => None,
        ModelChoice::Extractive => Some(crate::summarizer::extractive::NAME.to_string()),
        ModelChoice::Remote(r) => Some(r.model.id.clone()),
    };
    // Read in full, the input and the copies alike: no checkpoint is used or kept (eval writes
    // nothing, not even to the cache).
    let private = ReadOptions {
        cache: None,
        ..settings.read.clone()
    };
    let input = private.clone();
    let dir = tempfile::Builder::new()
        .prefix("mf-eval-")
        .tempdir()
        .context("cannot make a private directory for the copies")?;

    let (mut status, mut rows, prepared) =
        prepare_all(&settings, model.as_ref(), &input, (split, runs), dir.path());

    // Every copy of every file, folded by compact's own pipeline in one run (at most -j at
    // once): in place, as `mf compact FILE` would, with nothing else to guard.
    let copies: Vec<PathBuf> = prepared
        .iter()
        .flatten()
        .flat_map(|p| p.copies.iter().cloned())
        .collect();
    let mut records = if copies.is_empty() {
        Vec::new()
    } else {
        let mut s = settings.clone();
        s.files = copies;
        s.outputs = None;
        s.dry_run = false;
        s.force = true;
        s.audit.retry = true;
        s.read = private.clone();
        compact(&s)?
    }
    .into_iter();

    for (row, p) in rows.iter_mut().zip(&prepared) {
        let Some(p) = p else { continue };
        let mut measured = Vec::new();
        let mut cost: Option<f64> = None;
        for copy in &p.copies {
            let record = records.next().expect("a record per copy");
            let rec = match record {
                Ok(rec) => rec,
                Err(e) => {
                    // Said of the file, not of its private copy.
                    let named = |s: &str| s.replace(&copy.display().to_string(), &row.file);
                    let code = classify(&e);
                    status = status.worst(code);
                    let message = named(&e.to_string());
                    let hints: Vec<String> = hints(&e).iter().map(|h| named(h)).collect();
                    if !matches!(code, ExitStatus::Interrupted(_)) {
                        render::error(&anyhow::anyhow!("{message}"), &hints);
                    }
                    row.error.get_or_insert_with(|| message.clone());
                    row.folds.push(FoldView {
                        action: Action::Error,
                        reason: Reason::Unsaid,
                        calls: 0,
                        error: Some(message),
                    });
                    continue;
                }
            };
            if rec.degraded {
                status = status.worst(ExitStatus::NotCompacted);
            }
            if let Some(c) = &rec.cost
                && rec.calls > 0
            {
                *cost.get_or_insert(0.0) += c.usd;
                row.cost_estimated |= c.estimated;
            }
            row.folds.push(FoldView {
                action: rec.action,
                reason: rec.reason.clone(),
                calls: rec.calls,
                error: rec
                    .failure
                    .as_ref()
                    .map(|f| f.message.replace(&copy.display().to_string(), &row.file)),
            });
            match measure(copy, &private, &p.found, &questions) {
                Ok(m) => measured.push(m),
                Err(e) => {
                    status = status.worst(failed(&e, row));
                }
            }
        }
        row.cost_usd = cost;
        if measured.is_empty() {
            continue;
        }
        measures_into(row, p, &measured, &questions, asks);
    }
    drop(dir);
    if let Some(sig) = interrupt.received() {
        // What was measured before the signal is printed; nothing was written either way.
        status = ExitStatus::Interrupted(sig);
    }

    for n in render::eval::notes(&rows) {
        ui.note(&n);
    }
    let printed = if json {
        render::eval::json_lines(&rows)
    } else {
        render::stdout(&format!("{}\n", render::eval::table(&ui, &rows)))
    };
    if let Err(e) = printed
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        return Err(e.into());
    }
    Ok(status)
}

/// Every file cut and copied for its runs (`split`, `runs`) into `dir`: its row (what was cut,
/// or why it could not be), and what was prepared; the exit status so far.
fn prepare_all(
    settings: &CompactSettings,
    model: Option<&String>,
    input: &ReadOptions,
    (split, runs): (f64, usize),
    dir: &Path,
) -> (ExitStatus, Vec<EvalView>, Vec<Option<Prepared>>) {
    let mut status = ExitStatus::Success;
    let mut rows: Vec<EvalView> = Vec::with_capacity(settings.files.len());
    let mut prepared: Vec<Option<Prepared>> = Vec::with_capacity(settings.files.len());
    for (k, file) in settings.files.iter().enumerate() {
        let mut row = EvalView {
            file: display(file),
            format: None,
            model: model.cloned(),
            strategy: strategy_name(settings.policy.strategy),
            tokens: None,
            cut: None,
            runs,
            folds: Vec::new(),
            future_use: None,
            view: None,
            questions: None,
            cost_usd: None,
            cost_estimated: false,
            error: None,
        };
        match prepare(file, input, split, dir, k, runs) {
            Ok(p) => {
                row.format = Some(p.format.clone());
                row.tokens = Some(p.tokens);
                row.cut = Some(CutView {
                    line: p.cut_line,
                    turn: p.cut_turn,
                    at: if p.cut.turn_seam { "turn" } else { "tool-unit" },
                    share: round3(p.cut.share()),
                    past_tokens: p.cut.past_tokens,
                    future_tokens: p.cut.future_tokens,
                });
                prepared.push(Some(p));
            }
            Err(e) => {
                status = status.worst(failed(&e, &mut row));
                prepared.push(None);
            }
        }
        rows.push(row);
    }
    (status, rows, prepared)
}

/// What a file's copies measured, as its row says it: the spread over the runs of what the
/// future used and the view kept, and, with `--questions`, of what recall and search answer.
fn measures_into(
    row: &mut EvalView,
    p: &Prepared,
    measured: &[Measured],
    questions: &[Question],
    asks: bool,
) {
    let found = p.found.len();
    let of = |f: &dyn Fn(&Measured) -> f64| Spread::of(&measured.iter().map(f).collect::<Vec<_>>());
    let mut by_class = std::collections::BTreeMap::new();
    for (class, n) in eval::by_class(&p.found) {
        by_class.insert(
            class.as_str(),
            ClassView {
                found: n,
                kept: of(&|m| m.kept.by_class.get(&class).copied().unwrap_or(0) as f64),
            },
        );
    }
    row.future_use = Some(FutureUseView {
        found,
        kept: of(&|m| m.kept.kept as f64),
        share: of(&|m| round3(m.kept.share(found))),
        by_class,
        lost: measured[0]
            .kept
            .lost
            .iter()
            .take(LOST_LISTED)
            .map(|it| LostView {
                class: it.class.as_str(),
                text: it.text.clone(),
            })
            .collect(),
    });
    row.view = Some(ViewSize {
        before: p.view_before,
        after: of(&|m| m.view_tokens as f64),
    });
    if asks {
        let answered = |way: fn(&(bool, bool)) -> bool| {
            move |m: &Measured| m.answered.iter().filter(|a| way(a)).count() as f64
        };
        row.questions = Some(QuestionsView {
            asked: questions.len(),
            recall: of(&answered(|a| a.0)),
            search: of(&answered(|a| a.1)),
            either: of(&answered(|a| a.0 || a.1)),
            each: questions
                .iter()
                .enumerate()
                .map(|(k, q)| QuestionView {
                    question: q.question.clone(),
                    answer: q.answer.clone(),
                    recall: measured.iter().filter(|m| m.answered[k].0).count(),
                    search: measured.iter().filter(|m| m.answered[k].1).count(),
                })
                .collect(),
        });
    }
}

/// The compact flags `mf eval` takes, as compact's own arguments (for the same settings).
fn compact_args(a: EvalArgs) -> CompactArgs {
    CompactArgs {
        files: a
            .files
            .into_iter()
            .map(|f| {
                if f.as_os_str() == "-" {
                    PathBuf::from("stdin.jsonl")
                } else {
                    f
                }
            })
            .collect(),
        latest: None,
        cwd: None,
        files_from: None,
        null: false,
        model: a.model,
        policy: a.policy,
        rollup: false,
        system_prompt: a.system_prompt,
        dry_run: false,
        output: None,
        force: true,
        json: a.json,
        record: None,
        jobs: a.jobs,
        allow_degraded: false,
        audit: a.audit,
        provider: a.provider,
        tier: crate::cli::TierArgs::default(),
    }
}

fn display(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "<stdin>".into()
    } else {
        path.display().to_string()
    }
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// A file's error: said on stderr, kept in its row; the exit status it calls for.
fn failed(e: &anyhow::Error, row: &mut EvalView) -> ExitStatus {
    render::error(e, &hints(e));
    row.error.get_or_insert_with(|| e.to_string());
    classify(e)
}

/// The questions: one JSON object `{"question", "answer"}` a line; blank lines are skipped.
fn read_questions(path: &Path) -> Result<Vec<Question>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        MfError::refused(
            format!("cannot read the questions `{}`: {e}", path.display()),
            None,
        )
    })?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let q: Question = serde_json::from_str(line).map_err(|e| {
            MfError::refused(
                format!("{}:{}: not a question: {e}", path.display(), n + 1),
                Some(r#"each line is one JSON object: {"question": "…", "answer": "…"}"#.into()),
            )
        })?;
        if crate::fold::audit::norm_text(&q.answer).is_empty() {
            return Err(MfError::refused(
                format!("{}:{}: the answer is empty", path.display(), n + 1),
                None,
            )
            .into());
        }
        out.push(q);
    }
    if out.is_empty() {
        return Err(
            MfError::refused(format!("`{}` holds no question", path.display()), None).into(),
        );
    }
    Ok(out)
}

/// Read a file, cut it, find what its future uses of its past, and copy the file as it stood at
/// the cut once per run (`DIR/K-RUN/NAME`).
fn prepare(
    path: &Path,
    read: &ReadOptions,
    split: f64,
    dir: &Path,
    k: usize,
    runs: usize,
) -> Result<Prepared> {
    let t = transcript::read(path, read)?;
    let ledger = Ledger::new(t.conversation());
    let cut = eval::cut(&ledger, split).ok_or_else(|| {
        MfError::refused(
            format!(
                "`{}` has no seam to cut at: a fold needs whole turns or tool units on both sides",
                t.display()
            ),
            None,
        )
    })?;
    // The file as it stood when the future began: up to the first line of the first entry
    // from the cut on (mf's lines written later are not in it).
    let upto = t.entries[cut.at..]
        .iter()
        .map(|e| e.pos)
        .min()
        .unwrap_or(t.len);
    let mut past = Vec::new();
    let mut future = Vec::new();
    for i in 0..t.entries.len() {
        if i < cut.at && eval::counted(&ledger, i) {
            past.push(t.text(i)?);
        } else if i >= cut.at && eval::is_use(&ledger, i) {
            future.push(t.text(i)?);
        }
    }
    let said = Said::new(&past.join("\n"));
    drop(past);
    let found = eval::found(&said, future.iter().map(String::as_str));
    let name = path.file_name().map_or_else(
        || "stdin.jsonl".into(),
        |n| n.to_string_lossy().into_owned(),
    );
    let mut copies = Vec::with_capacity(runs);
    for r in 0..runs {
        let d = dir.join(format!("{k}-{r}"));
        std::fs::create_dir(&d)
            .with_context(|| format!("cannot make the directory `{}`", d.display()))?;
        let copy = d.join(&name);
        transcript::write_prefix(&t, upto, &copy)?;
        copies.push(copy);
    }
    let view_before = {
        let c = transcript::read(&copies[0], read)?;
        estimate_tokens(Ledger::new(c.conversation()).view_chars())
    };
    Ok(Prepared {
        format: t.format.name().to_string(),
        tokens: cut.past_tokens + cut.future_tokens,
        cut,
        cut_line: t.entries[cut.at].line,
        cut_turn: u64::from(ledger.turns[cut.at]),
        found,
        copies,
        view_before,
    })
}

/// Read a folded copy as recall reads it and take its measures.
fn measure(
    copy: &Path,
    read: &ReadOptions,
    found: &[Item],
    questions: &[Question],
) -> Result<Measured> {
    let t = transcript::read(copy, read)?;
    let ledger = Ledger::new(t.conversation());
    let mut texts = Vec::with_capacity(ledger.view.len());
    for &it in &ledger.view {
        texts.push(t.text(it as usize)?);
    }
    let view = Said::new(&texts.join("\n"));
    drop(texts);
    let mut answered = Vec::with_capacity(questions.len());
    for q in questions {
        let by_recall = view.contains(&q.answer);
        let by_search = match Query::new(&q.question) {
            Ok(query) => {
                let found = crate::view::search(
                    &t,
                    &ledger,
                    &query,
                    crate::view::Scope::Folded,
                    SEARCH_TOP,
                )?;
                let mut any = false;
                for hit in &found.hits {
                    if let Some(i) = t.entries.iter().position(|e| e.line == hit.line)
                        && Said::new(&t.text(i)?).contains(&q.answer)
                    {
                        any = true;
                        break;
                    }
                }
                any
            }
            Err(_) => false,
        };
        answered.push((by_recall, by_search));
    }
    Ok(Measured {
        kept: eval::kept(found, &view),
        view_tokens: estimate_tokens(ledger.view_chars()),
        answered,
    })
}
