//! `mf eval`: the real binary on fixtures — it writes nothing (a read-only file, the directory
//! unchanged), its figures are those of `mf compact` + `mf recall` + `mf search` on the session
//! as it stood at the cut, `--questions`, the `--json` shape, a loopback model over `--runs 2`,
//! and the corpus (gated by MF_CORPUS).

use std::path::{Path, PathBuf};

use crate::server::{TestServer, anthropic_ok};
use crate::util::*;

const KEY: &str = "sk-ant-TEST-EVAL-0000";

/// Every file under `dir` with its bytes.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let bytes = read(&p);
                out.push((p, bytes));
            }
        }
    }
    out.sort();
    out
}

fn read_only(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o444)).expect("chmod");
}

fn one(out: &Output) -> serde_json::Value {
    let rows = json_lines(&out.stdout);
    assert_eq!(rows.len(), 1, "one object: {out:?}");
    rows.into_iter().next().unwrap()
}

fn median(v: &serde_json::Value) -> f64 {
    v["median"]
        .as_f64()
        .unwrap_or_else(|| panic!("a spread: {v}"))
}

#[test]
fn eval_measures_a_read_only_file_and_writes_nothing() {
    let env = TestEnv::new();
    let f = env.copy_fixture("incident-northwind.jsonl");
    read_only(&f);
    let cache = env.path("cache");
    std::fs::create_dir(&cache).unwrap();
    let before = tree(env.dir.path());
    for strategy in ["summary", "cited", "mask"] {
        let out = env.mf_env(
            &[
                "eval",
                "incident-northwind.jsonl",
                "--model",
                "extractive",
                "--strategy",
                strategy,
                "--json",
            ],
            &[("MF_CACHE_DIR", cache.to_str().unwrap())],
        );
        assert_eq!(out.code, 0, "{strategy}: {out:?}");
        let r = one(&out);
        assert_eq!(r["strategy"], strategy);
        assert_eq!(r["format"], "chat");
        assert_eq!(r["runs"], 1);
        assert_eq!(r["cut"]["at"], "turn");
        let share = r["cut"]["share"].as_f64().unwrap();
        assert!((0.6..=0.8).contains(&share), "{r}");
        let fu = &r["futureUse"];
        let found = fu["found"].as_u64().unwrap();
        assert!(found >= 10, "{r}");
        let kept = median(&fu["kept"]);
        assert!(kept <= found as f64);
        assert!(
            (median(&fu["share"]) - kept / found as f64).abs() < 0.001,
            "{r}"
        );
        let by_class: u64 = fu["byClass"]
            .as_object()
            .unwrap()
            .values()
            .map(|c| c["found"].as_u64().unwrap())
            .sum();
        assert_eq!(by_class, found);
        assert_eq!(
            fu["lost"].as_array().unwrap().len() as f64,
            (found as f64 - kept).min(20.0)
        );
        // Nothing was written: the file, the directory, the checkpoints.
        assert_eq!(tree(env.dir.path()), before, "{strategy} wrote something");
    }
}

#[test]
fn the_summary_fold_loses_what_its_recall_view_lacks_and_mask_and_cited_lose_less() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    let share = |strategy: &str| {
        let out = env.mf_ok(&[
            "eval",
            "incident-northwind.jsonl",
            "--model",
            "extractive",
            "--strategy",
            strategy,
            "--json",
        ]);
        let r = one(&out);
        (
            r["folds"][0]["action"].as_str().unwrap().to_string(),
            median(&r["futureUse"]["share"]),
        )
    };
    let (summary_action, summary) = share("summary");
    assert_eq!(summary_action, "folded");
    assert!(
        summary < 1.0,
        "the extractive summary keeps some, not all: {summary}"
    );
    let (cited_action, cited) = share("cited");
    assert_eq!(cited_action, "folded");
    assert!(cited >= summary, "{cited} < {summary}");
    // Nothing to mask here: the view stays verbatim, and keeps everything.
    let (mask_action, mask) = share("mask");
    assert_eq!(mask_action, "skipped");
    assert_eq!(mask, 1.0);
}

/// The first `line - 1` lines of a one-entry-a-line chat file: the session at the cut.
fn prefix(env: &TestEnv, file: &Path, line: u64, name: &str) -> PathBuf {
    let text = std::fs::read_to_string(file).unwrap();
    let head: String = text.split_inclusive('\n').take(line as usize - 1).collect();
    env.write(name, &head)
}

#[test]
fn questions_are_answered_as_recall_and_search_answer_them_after_compact_on_the_cut_session() {
    let env = TestEnv::new();
    let f = env.copy_fixture("incident-northwind.jsonl");
    let questions = [
        ("Who approved the pool change?", "Marcus Webb"),
        (
            "Which commit switched checkout-api to pricing-svc v2?",
            "9f3c2ab",
        ),
        ("What is the on-call pager number?", "555-0199"),
    ];
    let q: String = questions
        .iter()
        .map(|(q, a)| format!("{}\n", serde_json::json!({"question": q, "answer": a})))
        .collect();
    env.write("q.jsonl", &format!("{q}\n"));
    let out = env.mf_ok(&[
        "eval",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
        "--questions",
        "q.jsonl",
        "--json",
    ]);
    let r = one(&out);
    let qs = &r["questions"];
    assert_eq!(qs["asked"], 3);
    // The oracle: the session as it stood at the cut, compacted and read by the real commands.
    let _cut = prefix(&env, &f, r["cut"]["line"].as_u64().unwrap(), "cut.jsonl");
    env.mf_ok(&["compact", "cut.jsonl", "--model", "extractive"]);
    let recall = env
        .mf_ok(&["recall", "cut.jsonl", "--format", "text"])
        .stdout;
    for (k, (question, answer)) in questions.iter().enumerate() {
        let hits = env.mf(&["search", "cut.jsonl", question, "--limit", "3", "--json"]);
        let by_search = json_lines(&hits.stdout)
            .iter()
            .any(|h| h["text"].as_str().unwrap().contains(answer));
        let each = &qs["each"][k];
        assert_eq!(each["question"], *question);
        assert_eq!(each["recall"], u64::from(recall.contains(answer)), "{each}");
        assert_eq!(each["search"], u64::from(by_search), "{each}");
    }
    // The three kinds are there: in the summary, only behind search, nowhere.
    assert_eq!(
        (
            median(&qs["recall"]),
            median(&qs["search"]),
            median(&qs["either"])
        ),
        (1.0, 2.0, 2.0),
        "{qs}"
    );
    // And futureUse's kept items are the oracle's recall view's.
    let lost = r["futureUse"]["lost"].as_array().unwrap();
    assert!(!lost.is_empty());
    for item in lost {
        let text = item["text"].as_str().unwrap();
        assert!(!recall.contains(text), "{text} is in the recall view");
    }

    // A bad questions file is refused, naming the line.
    env.write(
        "bad.jsonl",
        "{\"question\": \"a\", \"answer\": \"b\"}\nnot json\n",
    );
    let out = env.mf(&[
        "eval",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
        "--questions",
        "bad.jsonl",
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("bad.jsonl:2"), "{out:?}");
    assert!(out.stdout.is_empty());
}

#[test]
fn a_table_on_a_pipe_is_tab_separated_and_a_file_with_no_seam_is_an_error_beside_the_others() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    env.write(
        "one.jsonl",
        "{\"role\": \"user\", \"content\": \"only one message, at /etc/hosts\"}\n",
    );
    let out = env.mf(&[
        "eval",
        "incident-northwind.jsonl",
        "one.jsonl",
        "--model",
        "extractive",
    ]);
    assert_eq!(out.code, 1, "{out:?}");
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines[0], "file\tfold\tcut\tfound\tkept\tshare\tview tokens",
        "{out:?}"
    );
    assert!(
        lines[1].starts_with("incident-northwind.jsonl\tfolded\t"),
        "{out:?}"
    );
    assert!(lines[2].starts_with("one.jsonl\t—\t—"), "{out:?}");
    assert!(out.stderr.contains("no seam to cut at"), "{out:?}");
    // --json carries the error in the file's object.
    let out = env.mf(&["eval", "one.jsonl", "--model", "extractive", "--json"]);
    assert_eq!(out.code, 1);
    let r = one(&out);
    assert!(r["error"].as_str().unwrap().contains("no seam"), "{r}");
    assert!(r["futureUse"].is_null());
    // Standard input is measured like a file (read once, into mf's unnamed copy).
    let piped = env.sh(&format!(
        "{} eval - --model extractive < incident-northwind.jsonl",
        mf_bin()
    ));
    assert!(piped.status.success(), "{piped:?}");
    let text = String::from_utf8(piped.stdout).unwrap();
    assert!(
        text.lines()
            .nth(1)
            .unwrap()
            .starts_with("<stdin>\tfolded\t"),
        "{text}"
    );
    // No model named: a usage error, as compact's.
    let out = env.mf(&["eval", "incident-northwind.jsonl"]);
    assert_eq!(out.code, 2, "{out:?}");
}

#[test]
fn a_remote_model_is_called_once_a_run_and_each_figure_is_given_over_the_runs() {
    let env = TestEnv::new();
    let f = env.copy_fixture("incident-northwind.jsonl");
    let bytes = read(&f);
    // Two runs, two summaries: one names more of what the rest of the session uses.
    let server = TestServer::respond(|_, n| {
        anthropic_ok(if n == 0 {
            "Priya Raman (on call) traced checkout-api p99 from 210 ms to 1,840 ms to v4.18.0 (commit 9f3c2ab): pricing-svc v2, pool 64 -> 8, PRICING_TIMEOUT_MS 300 -> 2000. CR-2291 approved by Marcus Webb. pricing-svc v2 cache ttl_seconds 900 -> 60 and warmup off; Contoso demo 16:00 UTC."
        } else {
            "Priya Raman traced a checkout latency rise to a deploy; Marcus Webb approved it."
        })
    });
    let url = server.url();
    let out = env.mf_env(
        &[
            "eval",
            "incident-northwind.jsonl",
            "--model",
            "haiku",
            "--runs",
            "2",
            "--min-retention",
            "0",
            "--json",
        ],
        &[("ANTHROPIC_BASE_URL", &url), ("ANTHROPIC_API_KEY", KEY)],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(server.requests().len(), 2, "one call a run");
    let r = one(&out);
    assert_eq!(r["runs"], 2);
    let folds = r["folds"].as_array().unwrap();
    assert_eq!(folds.len(), 2);
    assert!(
        folds
            .iter()
            .all(|f| f["action"] == "folded" && f["calls"] == 1),
        "{r}"
    );
    let kept = &r["futureUse"]["kept"];
    assert!(
        kept["min"].as_f64() < kept["max"].as_f64(),
        "the runs differ: {r}"
    );
    assert_eq!(
        median(kept),
        (kept["min"].as_f64().unwrap() + kept["max"].as_f64().unwrap()) / 2.0
    );
    assert!(r["costUsd"].as_f64().unwrap() > 0.0, "{r}");
    assert!(!out.stdout.contains(KEY) && !out.stderr.contains(KEY));
    assert_eq!(read(&f), bytes);
}

#[test]
#[ignore = "needs MF_CORPUS (the shared corpus; .ci/run sets it)"]
fn eval_measures_every_corpus_session_it_can_cut_and_writes_nothing() {
    let dir = corpus_dir();
    let env = TestEnv::new();
    let mut files = Vec::new();
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                files.push(p);
            }
        }
    }
    files.sort();
    let before: Vec<Vec<u8>> = files.iter().map(|f| read(f)).collect();
    let mut args = vec!["eval".to_string()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    args.extend(["--model", "extractive", "--json", "--no-cache"].map(String::from));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = env.mf(&argv);
    assert!(matches!(out.code, 0 | 1), "{out:?}");
    let rows = json_lines(&out.stdout);
    assert_eq!(rows.len(), files.len());
    let mut folded = 0;
    for r in &rows {
        if let Some(e) = r["error"].as_str() {
            // Only a file mf cannot cut, or one that is no transcript.
            assert!(
                e.contains("no seam to cut at") || e.contains("fine-tuning dataset"),
                "{r}"
            );
            continue;
        }
        let fu = &r["futureUse"];
        let found = fu["found"].as_f64().unwrap();
        let kept = median(&fu["kept"]);
        assert!(kept <= found, "{r}");
        let action = r["folds"][0]["action"].as_str().unwrap();
        if action == "folded" {
            folded += 1;
            assert!(
                median(&r["view"]["after"]) < r["view"]["before"].as_f64().unwrap(),
                "{r}"
            );
        } else {
            // Nothing folded: the verbatim view keeps everything.
            assert_eq!(kept, found, "{r}");
        }
    }
    assert!(folded >= 5, "{out:?}");
    for (f, b) in files.iter().zip(&before) {
        assert_eq!(&read(f), b, "{} changed", f.display());
    }
}
