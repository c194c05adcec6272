//! `mf compact --batch` and `--service-tier flex` against loopback servers that implement the
//! providers' batch endpoints as documented (protocols.md §10): Anthropic Message Batches
//! (submit, poll, results at `results_url` in any order, cancel) and OpenAI's Batch API (a
//! JSONL file uploaded, a batch made of it, polled, its output and error files read).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};

use crate::server::{Recorded, Reply, TestServer, anthropic_ok};
use crate::util::{TestEnv, json_lines};

/// What a simulated provider does with a batch.
#[derive(Default)]
struct Plan {
    /// Polls answered "in progress" before a batch ends.
    polls: usize,
    /// Polls answered 503 first (a provider restarting between submit and collect).
    unavailable_polls: usize,
    /// Custom ids (by the order they were submitted) that error, and that expire.
    errored: Vec<usize>,
    expired: Vec<usize>,
    /// The whole batch expires at 24 h (OpenAI: status `expired`, its requests in the error file).
    batch_expires: bool,
    /// A first summary that keeps nothing (the audit declines it); a retry that names what it
    /// left out is answered with those items.
    lossy_first: bool,
    /// Polls before any batch after the first ends (default: `polls`).
    later_polls: Option<usize>,
}

/// What the simulated model writes for a request's body.
fn summary_for(params: &Value, lossy_first: bool) -> String {
    let user = format!(
        "{}\n{}",
        params["system"].as_str().unwrap_or_default(),
        params["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
    );
    if user.contains("was not accepted") {
        let items: Vec<&str> = user
            .lines()
            .filter_map(|l| l.strip_prefix("- "))
            .filter_map(|l| l.rsplit_once(" (").map(|(item, _)| item))
            .collect();
        // (mf's appendix may already hold every item, and the note then names none.)
        return format!("{SUMMARY} The cache TTL is 900 s. {}", items.join("; "));
    }
    if lossy_first {
        return "Things happened in this conversation and then more things happened.".into();
    }
    SUMMARY.into()
}

struct SimBatch {
    requests: Vec<(String, Value)>,
    polled: usize,
    canceled: bool,
    /// Whether it is the first batch submitted (`Plan::later_polls` is for the others).
    first: bool,
}

impl SimBatch {
    fn new(requests: Vec<(String, Value)>, first: bool) -> Self {
        SimBatch {
            requests,
            polled: 0,
            canceled: false,
            first,
        }
    }

    fn ended(&self, plan: &Plan) -> bool {
        let polls = if self.first {
            plan.polls
        } else {
            plan.later_polls.unwrap_or(plan.polls)
        };
        self.canceled || self.polled > polls
    }
}

#[derive(Default)]
struct Sim {
    plan: Mutex<Plan>,
    url: OnceLock<String>,
    batches: Mutex<HashMap<String, SimBatch>>,
    files: Mutex<HashMap<String, Vec<(String, Value)>>>,
    unavailable: AtomicUsize,
}

const SUMMARY: &str = "Goal: checkout is fast again. State: the config is /etc/checkout/app.toml; OPS-4471 tracks the cache TTL.";

fn message(text: &str) -> Value {
    json!({"id": "msg_b", "type": "message", "role": "assistant", "model": "claude-haiku-5-5",
        "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 1800, "output_tokens": 60}})
}

fn completion(text: &str) -> Value {
    json!({"id": "chatcmpl-b", "object": "chat.completion", "created": 1, "model": "gpt-6-luna",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": null}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1700, "completion_tokens": 55, "total_tokens": 1755}})
}

impl Sim {
    fn start(plan: Plan) -> (Arc<Sim>, TestServer) {
        let sim = Arc::new(Sim {
            plan: Mutex::new(plan),
            ..Sim::default()
        });
        let s = sim.clone();
        let server = TestServer::respond(move |r, n| s.answer(r, n));
        sim.url.set(server.url()).unwrap();
        (sim, server)
    }

    fn set(&self, f: impl FnOnce(&mut Plan)) {
        f(&mut self.plan.lock().unwrap());
    }

    fn anthropic_status(&self, id: &str, b: &SimBatch) -> Value {
        let plan = self.plan.lock().unwrap();
        let ended = b.ended(&plan);
        let n = b.requests.len() as u64;
        let errored = plan.errored.iter().filter(|&&k| (k as u64) < n).count() as u64;
        let expired = plan.expired.iter().filter(|&&k| (k as u64) < n).count() as u64;
        let counts = if !ended {
            json!({"processing": n, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0})
        } else if b.canceled {
            json!({"processing": 0, "succeeded": 0, "errored": 0, "canceled": n, "expired": 0})
        } else {
            json!({"processing": 0, "succeeded": n - errored - expired, "errored": errored, "canceled": 0, "expired": expired})
        };
        json!({"id": id, "type": "message_batch",
            "processing_status": if ended { "ended" } else if b.canceled { "canceling" } else { "in_progress" },
            "request_counts": counts,
            "results_url": if ended { Value::from(format!("{}/v1/messages/batches/{id}/results", self.url.get().unwrap())) } else { Value::Null },
            "expires_at": "2026-12-04T20:00:00Z"})
    }

    fn openai_status(&self, id: &str, b: &SimBatch) -> Value {
        let plan = self.plan.lock().unwrap();
        let ended = plan.batch_expires || b.ended(&plan);
        let n = b.requests.len() as u64;
        let status = if b.canceled {
            "cancelled"
        } else if plan.batch_expires {
            "expired"
        } else if ended {
            "completed"
        } else {
            "in_progress"
        };
        let failed = if plan.batch_expires || b.canceled {
            n
        } else {
            plan.errored.len() as u64
        };
        json!({"id": id, "object": "batch", "endpoint": "/v1/chat/completions", "status": status,
            "request_counts": {"total": n, "completed": if ended { n - failed } else { 0 }, "failed": if ended { failed } else { 0 }},
            "output_file_id": if ended && status == "completed" { Value::from(format!("out-{id}")) } else { Value::Null },
            "error_file_id": if ended && failed > 0 { Value::from(format!("err-{id}")) } else { Value::Null }})
    }

    fn answer(&self, r: &Recorded, n: usize) -> Reply {
        let path = r.path.split('?').next().unwrap_or_default().to_string();
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        match (r.method.as_str(), parts.as_slice()) {
            ("POST", ["v1", "messages"]) => anthropic_ok(SUMMARY),
            ("POST", ["v1", "messages", "batches"]) => {
                let requests = r.json()["requests"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|q| {
                        (
                            q["custom_id"].as_str().unwrap().to_string(),
                            q["params"].clone(),
                        )
                    })
                    .collect();
                let id = format!("msgbatch_{n}");
                let b = SimBatch::new(requests, self.batches.lock().unwrap().is_empty());
                let st = self.anthropic_status(&id, &b);
                self.batches.lock().unwrap().insert(id, b);
                Reply::json(200, &st.to_string())
            }
            ("GET", ["v1", "messages", "batches", id]) | ("GET", ["v1", "batches", id]) => {
                let openai = parts[1] == "batches";
                if self.unavailable.fetch_add(1, Ordering::SeqCst)
                    < self.plan.lock().unwrap().unavailable_polls
                {
                    return Reply::json(
                        503,
                        r#"{"error":{"type":"overloaded_error","message":"restarting"}}"#,
                    );
                }
                let mut batches = self.batches.lock().unwrap();
                let Some(b) = batches.get_mut(*id) else {
                    return Reply::json(
                        404,
                        r#"{"error":{"type":"not_found_error","message":"no such batch"}}"#,
                    );
                };
                b.polled += 1;
                let st = if openai {
                    self.openai_status(id, b)
                } else {
                    self.anthropic_status(id, b)
                };
                Reply::json(200, &st.to_string())
            }
            ("POST", ["v1", "messages", "batches", id, "cancel"])
            | ("POST", ["v1", "batches", id, "cancel"]) => {
                let openai = parts[1] == "batches";
                let mut batches = self.batches.lock().unwrap();
                let b = batches.get_mut(*id).unwrap();
                b.canceled = true;
                let st = if openai {
                    self.openai_status(id, b)
                } else {
                    self.anthropic_status(id, b)
                };
                Reply::json(200, &st.to_string())
            }
            ("GET", ["v1", "messages", "batches", id, "results"]) => {
                let batches = self.batches.lock().unwrap();
                let b = &batches[*id];
                let plan = self.plan.lock().unwrap();
                // Results in another order than the requests.
                let lines: Vec<String> = b
                    .requests
                    .iter()
                    .enumerate()
                    .rev()
                    .map(|(k, (cid, _))| {
                        let result = if b.canceled {
                            json!({"type": "canceled"})
                        } else if plan.errored.contains(&k) {
                            json!({"type": "errored", "error": {"type": "error", "error": {"type": "invalid_request_error", "message": "bad params"}}})
                        } else if plan.expired.contains(&k) {
                            json!({"type": "expired"})
                        } else {
                            json!({"type": "succeeded", "message": message(&summary_for(&b.requests[k].1, plan.lossy_first))})
                        };
                        json!({"custom_id": cid, "result": result}).to_string()
                    })
                    .collect();
                Reply::json(200, &(lines.join("\n") + "\n"))
            }
            ("POST", ["v1", "files"]) => {
                let requests: Vec<(String, Value)> = r
                    .body
                    .lines()
                    .filter(|l| l.starts_with("{\"custom_id\""))
                    .map(|l| {
                        let v: Value = serde_json::from_str(l).unwrap();
                        (
                            v["custom_id"].as_str().unwrap().to_string(),
                            v["body"].clone(),
                        )
                    })
                    .collect();
                assert!(
                    r.body.contains("name=\"purpose\"") && r.body.contains("batch"),
                    "{}",
                    r.body
                );
                let id = format!("file-{n}");
                self.files.lock().unwrap().insert(id.clone(), requests);
                Reply::json(
                    200,
                    &json!({"id": id, "object": "file", "purpose": "batch"}).to_string(),
                )
            }
            ("POST", ["v1", "batches"]) => {
                let body = r.json();
                assert_eq!(body["completion_window"], "24h");
                assert_eq!(body["endpoint"], "/v1/chat/completions");
                let file = body["input_file_id"].as_str().unwrap();
                let requests = self.files.lock().unwrap()[file].clone();
                let id = format!("batch_{n}");
                let b = SimBatch::new(requests, self.batches.lock().unwrap().is_empty());
                let st = self.openai_status(&id, &b);
                self.batches.lock().unwrap().insert(id, b);
                Reply::json(200, &st.to_string())
            }
            ("GET", ["v1", "files", file, "content"]) => {
                let (kind, id) = file.split_once('-').unwrap();
                let batches = self.batches.lock().unwrap();
                let b = &batches[id];
                let plan = self.plan.lock().unwrap();
                let lines: Vec<String> = b
                    .requests
                    .iter()
                    .enumerate()
                    .rev()
                    .filter_map(|(k, (cid, _))| {
                        let failed = plan.batch_expires || b.canceled || plan.errored.contains(&k);
                        match (kind, failed) {
                            ("out", false) => Some(json!({"id": "r", "custom_id": cid,
                                "response": {"status_code": 200, "request_id": "req", "body": completion(SUMMARY)}, "error": null})),
                            ("err", true) => Some(json!({"id": "r", "custom_id": cid, "response": null,
                                "error": {"code": if plan.batch_expires { "batch_expired" } else if b.canceled { "batch_cancelled" } else { "server_error" }, "message": "not done"}})),
                            _ => None,
                        }
                    })
                    .map(|v| v.to_string())
                    .collect();
                Reply::json(200, &(lines.join("\n") + "\n"))
            }
            ("POST", ["v1", "chat", "completions"]) => {
                Reply::json(200, &completion(SUMMARY).to_string())
            }
            other => panic!("unexpected request {other:?}"),
        }
    }
}

/// A chat long enough to fold turns 1–3 and keep the last two verbatim.
fn chat(tag: &str) -> String {
    chat_of(tag, 5)
}

fn chat_of(tag: &str, turns: usize) -> String {
    let pad = " I compared every number with last week's baseline before drawing any conclusion.";
    let mut out = String::new();
    let mut k = 0;
    let mut line = |role: &str, text: String| {
        k += 1;
        out.push_str(
            &json!({"id": format!("{tag}-{k}"), "role": role, "content": text}).to_string(),
        );
        out.push('\n');
    };
    line("system", "You are an operations assistant.".into());
    for turn in 1..=turns {
        line(
            "user",
            format!(
                "Turn {turn} of {tag}: checkout is slow; the config is /etc/checkout/app.toml."
            ),
        );
        line(
            "assistant",
            format!(
                "For {tag}, OPS-4471 tracks the cache TTL of 900 s.{}",
                pad.repeat(6)
            ),
        );
    }
    out
}

struct Run {
    env: TestEnv,
    files: Vec<String>,
    state: String,
}

impl Run {
    fn new(n: usize) -> Self {
        let env = TestEnv::without_audit();
        let files = (0..n)
            .map(|k| {
                let name = format!("s{k}.jsonl");
                env.write(&name, &chat(&format!("s{k}")));
                name
            })
            .collect();
        let state = env.path("state").display().to_string();
        Run { env, files, state }
    }

    fn mf(&self, server: &TestServer, model: &str, extra: &[&str]) -> crate::util::Output {
        let base = format!("{}/v1", server.url());
        let mut args: Vec<&str> = vec!["compact"];
        args.extend(self.files.iter().map(String::as_str));
        args.extend([
            "--model",
            model,
            "--base-url",
            &base,
            "--trigger",
            "0",
            "--recent",
            "2",
            "--json",
        ]);
        args.extend_from_slice(extra);
        self.env.mf_env(
            &args,
            &[
                ("ANTHROPIC_API_KEY", "sk-ant-test"),
                ("OPENAI_API_KEY", "sk-test"),
                ("MF_STATE_DIR", &self.state),
                ("MF_BATCH_POLL_MS", "20"),
            ],
        )
    }

    fn admin(&self, server: &TestServer, flag: &str) -> crate::util::Output {
        let _ = server;
        self.env.mf_env(
            &["compact", flag],
            &[
                ("ANTHROPIC_API_KEY", "sk-ant-test"),
                ("OPENAI_API_KEY", "sk-test"),
                ("MF_STATE_DIR", &self.state),
            ],
        )
    }

    fn bytes(&self) -> Vec<Vec<u8>> {
        self.files
            .iter()
            .map(|f| std::fs::read(self.env.path(f)).unwrap())
            .collect()
    }

    /// Summaries written into each file.
    fn summaries(&self) -> Vec<usize> {
        self.bytes()
            .iter()
            .map(|b| {
                String::from_utf8_lossy(b)
                    .matches("\"kind\":\"summary\"")
                    .count()
            })
            .collect()
    }

    fn kept(&self) -> usize {
        std::fs::read_dir(&self.state).map_or(0, |d| d.count())
    }
}

fn count(server: &TestServer, method: &str, path: &str) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.method == method && r.path.split('?').next() == Some(path))
        .count()
}

fn records(out: &crate::util::Output) -> Vec<Value> {
    json_lines(&out.stdout)
}

#[test]
fn three_files_go_as_one_batch_with_no_synchronous_call_and_cost_half_the_synchronous_run() {
    let (_sim, server) = Sim::start(Plan {
        polls: 2,
        ..Plan::default()
    });
    let run = Run::new(3);
    let out = run.mf(&server, "haiku", &["--batch"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(count(&server, "POST", "/v1/messages/batches"), 1);
    assert_eq!(
        count(&server, "POST", "/v1/messages"),
        0,
        "no synchronous call"
    );
    let batch = server
        .requests()
        .into_iter()
        .find(|r| r.path == "/v1/messages/batches")
        .unwrap();
    assert_eq!(batch.json()["requests"].as_array().unwrap().len(), 3);
    let recs = records(&out);
    assert_eq!(recs.len(), 3, "{out:?}");
    for r in &recs {
        assert_eq!(r["action"], "folded", "{r}");
        assert_eq!(r["tiers"], json!({"batch": 1}), "{r}");
    }
    // The same usage, synchronously: twice the price.
    let (_sim2, sync_server) = Sim::start(Plan::default());
    let sync = Run::new(3);
    let out2 = sync.mf(&sync_server, "haiku", &[]);
    assert_eq!(out2.code, 0, "{out2:?}");
    for (b, s) in recs.iter().zip(records(&out2)) {
        assert_eq!(b["usage"], s["usage"]);
        let (b, s) = (
            b["cost"]["usd"].as_f64().unwrap(),
            s["cost"]["usd"].as_f64().unwrap(),
        );
        assert!(
            s > 0.0 && (b * 2.0 - s).abs() < 1e-12,
            "batch {b} vs sync {s}"
        );
    }
    // Collected and written: nothing is left to collect.
    assert_eq!(run.kept(), 0);
}

#[test]
fn a_run_that_stops_waiting_writes_nothing_and_exits_75_and_the_next_run_collects_without_submitting()
 {
    let (sim, server) = Sim::start(Plan {
        polls: 1_000_000,
        ..Plan::default()
    });
    let run = Run::new(2);
    let before = run.bytes();
    let out = run.mf(&server, "haiku", &["--batch", "--batch-wait", "0"]);
    assert_eq!(out.code, 75, "{out:?}");
    assert_eq!(run.bytes(), before, "nothing half is written");
    assert!(
        out.stderr.contains("run the same command again")
            || out.stderr.contains("Run the same command again"),
        "{}",
        out.stderr
    );
    for r in records(&out) {
        assert_eq!(r["failure"]["kind"], "batch-pending", "{r}");
    }
    assert_eq!(run.kept(), 1, "the batch is kept");
    let st = run.admin(&server, "--batch-status");
    assert_eq!(st.code, 0, "{st:?}");
    assert!(
        st.stdout.contains("msgbatch_0") && st.stdout.contains("in_progress"),
        "{st:?}"
    );
    sim.set(|p| p.polls = 0);
    let again = run.mf(&server, "haiku", &["--batch"]);
    assert_eq!(again.code, 0, "{again:?}");
    assert_eq!(
        count(&server, "POST", "/v1/messages/batches"),
        1,
        "not submitted again"
    );
    for r in records(&again) {
        assert_eq!(r["action"], "folded", "{r}");
    }
    assert_eq!(run.kept(), 0);
}

#[test]
fn results_in_another_order_one_errored_and_one_expired_are_reported_per_span_and_never_written() {
    let (_sim, server) = Sim::start(Plan {
        errored: vec![0],
        expired: vec![1],
        ..Plan::default()
    });
    let run = Run::new(3);
    let before = run.bytes();
    let out = run.mf(&server, "haiku", &["--batch"]);
    // Two spans stay verbatim (a summarizer failure: exit 3); one is written.
    assert_eq!(out.code, 3, "{out:?}");
    let recs = records(&out);
    let failed: Vec<&Value> = recs.iter().filter(|r| r["action"] != "folded").collect();
    assert_eq!(failed.len(), 2, "{recs:?}");
    let text = serde_json::to_string(&failed).unwrap();
    assert!(
        text.contains("errored") && text.contains("invalid_request_error"),
        "{text}"
    );
    assert!(text.contains("expired"), "{text}");
    // The failed spans are remembered as summarizer failures (asked again by a later run), no
    // summary is written for them, and the originals are untouched.
    let mut written = run.summaries();
    written.sort();
    assert_eq!(written, vec![0, 0, 1]);
    for (a, b) in run.bytes().iter().zip(&before) {
        assert!(a.starts_with(b));
    }
}

#[test]
fn a_batch_canceled_from_outside_is_reported_and_nothing_is_written() {
    let (_sim, server) = Sim::start(Plan {
        polls: 1_000_000,
        ..Plan::default()
    });
    let run = Run::new(1);
    let before = run.bytes();
    let out = run.mf(&server, "haiku", &["--batch", "--batch-wait", "0"]);
    assert_eq!(out.code, 75, "{out:?}");
    let cancel = run.admin(&server, "--batch-cancel");
    assert_eq!(cancel.code, 0, "{cancel:?}");
    assert_eq!(
        count(&server, "POST", "/v1/messages/batches/msgbatch_0/cancel"),
        1
    );
    let again = run.mf(&server, "haiku", &["--batch"]);
    assert_eq!(again.code, 3, "{again:?}");
    assert!(again.stdout.contains("canceled"), "{again:?}");
    assert_eq!(run.summaries(), vec![0]);
    assert!(run.bytes()[0].starts_with(&before[0]));
    assert_eq!(count(&server, "POST", "/v1/messages/batches"), 1);
}

#[test]
fn polls_the_provider_does_not_answer_while_it_restarts_are_asked_again() {
    let (_sim, server) = Sim::start(Plan {
        polls: 1,
        unavailable_polls: 4,
        ..Plan::default()
    });
    let run = Run::new(1);
    let out = run.mf(&server, "haiku", &["--batch", "--retries", "0"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stderr.contains("asking again"), "{}", out.stderr);
    assert_eq!(records(&out)[0]["action"], "folded");
}

#[test]
fn two_runs_collecting_the_same_batch_write_one_summary() {
    let (sim, server) = Sim::start(Plan {
        polls: 1_000_000,
        ..Plan::default()
    });
    let run = Run::new(1);
    assert_eq!(
        run.mf(&server, "haiku", &["--batch", "--batch-wait", "0"])
            .code,
        75
    );
    sim.set(|p| p.polls = 0);
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(|| run.mf(&server, "haiku", &["--batch"]));
        let b = s.spawn(|| run.mf(&server, "haiku", &["--batch"]));
        (a.join().unwrap(), b.join().unwrap())
    });
    assert_eq!((a.code, b.code), (0, 0), "{a:?} {b:?}");
    assert_eq!(count(&server, "POST", "/v1/messages/batches"), 1);
    assert_eq!(run.summaries(), vec![1], "one summary, written once");
    let v = run.env.mf(&["verify", &run.files[0]]);
    assert_eq!(v.code, 0, "{v:?}");
    let folded = [a, b]
        .iter()
        .filter(|o| records(o)[0]["action"] == "folded")
        .count();
    assert_eq!(folded, 1, "one run writes");
}

#[test]
fn a_file_appended_to_while_its_batch_ran_uses_the_answers_still_valid_and_asks_the_rest() {
    let (sim, server) = Sim::start(Plan {
        polls: 1_000_000,
        ..Plan::default()
    });
    let run = Run::new(1);
    assert_eq!(
        run.mf(&server, "haiku", &["--batch", "--batch-wait", "0"])
            .code,
        75
    );
    sim.set(|p| p.polls = 0);
    let path = run.env.path(&run.files[0]);
    let mut more = std::fs::read_to_string(&path).unwrap();
    more.push_str(
        &json!({"id": "late-u", "role": "user", "content": "One more: the TTL is now 60 s."})
            .to_string(),
    );
    more.push('\n');
    more.push_str(
        &json!({"id": "late-a", "role": "assistant", "content": "Noted: 60 s."}).to_string(),
    );
    more.push('\n');
    std::fs::write(&path, more).unwrap();
    let out = run.mf(&server, "haiku", &["--batch"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(records(&out)[0]["action"], "folded", "{out:?}");
    // The span moved with the tail: its answer no longer fits and it is asked anew.
    assert_eq!(count(&server, "POST", "/v1/messages/batches"), 2);
    assert_eq!(run.env.mf(&["verify", &run.files[0]]).code, 0);
}

#[test]
fn openai_uploads_one_file_and_makes_one_batch_for_several_files() {
    let (_sim, server) = Sim::start(Plan {
        polls: 1,
        ..Plan::default()
    });
    let run = Run::new(3);
    let out = run.mf(&server, "gpt-6-luna", &["--batch"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(count(&server, "POST", "/v1/files"), 1);
    assert_eq!(count(&server, "POST", "/v1/batches"), 1);
    assert_eq!(count(&server, "POST", "/v1/chat/completions"), 0);
    let upload = server
        .requests()
        .into_iter()
        .find(|r| r.path == "/v1/files")
        .unwrap();
    assert_eq!(
        upload
            .body
            .lines()
            .filter(|l| l.starts_with("{\"custom_id\""))
            .count(),
        3
    );
    assert!(
        upload
            .header("content-type")
            .unwrap()
            .starts_with("multipart/form-data")
    );
    for r in records(&out) {
        assert_eq!(r["action"], "folded", "{r}");
        assert_eq!(r["tiers"], json!({"batch": 1}));
    }
}

#[test]
fn an_openai_batch_that_expires_at_24_hours_reports_each_span_expired() {
    let (_sim, server) = Sim::start(Plan {
        batch_expires: true,
        ..Plan::default()
    });
    let run = Run::new(2);
    let before = run.bytes();
    let out = run.mf(&server, "gpt-6-luna", &["--batch"]);
    assert_eq!(out.code, 3, "{out:?}");
    for r in records(&out) {
        assert!(
            serde_json::to_string(&r).unwrap().contains("expired"),
            "{r}"
        );
    }
    assert_eq!(run.summaries(), vec![0, 0]);
    for (a, b) in run.bytes().iter().zip(&before) {
        assert!(a.starts_with(b));
    }
}

#[test]
fn flex_sends_service_tier_flex_and_is_priced_at_the_batch_rate() {
    let (_sim, server) = Sim::start(Plan::default());
    let run = Run::new(1);
    let out = run.mf(&server, "gpt-6-luna", &["--service-tier", "flex"]);
    assert_eq!(out.code, 0, "{out:?}");
    let call = server
        .requests()
        .into_iter()
        .find(|r| r.path == "/v1/chat/completions")
        .unwrap();
    assert_eq!(call.json()["service_tier"], "flex");
    let flex = records(&out)[0].clone();
    assert_eq!(flex["tiers"], json!({"flex": 1}));
    let (_s2, server2) = Sim::start(Plan::default());
    let run2 = Run::new(1);
    let std = records(&run2.mf(&server2, "gpt-6-luna", &[]))[0].clone();
    assert!(std.get("tiers").is_none(), "{std}");
    let call2 = server2
        .requests()
        .into_iter()
        .find(|r| r.path == "/v1/chat/completions")
        .unwrap();
    assert!(call2.json().get("service_tier").is_none());
    let (f, s) = (
        flex["cost"]["usd"].as_f64().unwrap(),
        std["cost"]["usd"].as_f64().unwrap(),
    );
    assert!((f * 2.0 - s).abs() < 1e-12, "flex {f} vs standard {s}");
}

#[test]
fn flex_unavailable_falls_back_to_the_default_tier_only_when_allowed() {
    let unavailable = |r: &Recorded, _n: usize| {
        if r.json().get("service_tier").is_some() {
            Reply::json(
                429,
                r#"{"error":{"type":"rate_limit_error","code":"resource_unavailable","message":"Resource Unavailable"}}"#,
            )
        } else {
            Reply::json(200, &completion(SUMMARY).to_string())
        }
    };
    let server = TestServer::respond(unavailable);
    let run = Run::new(1);
    let before = run.bytes();
    let out = run.mf(
        &server,
        "gpt-6-luna",
        &["--service-tier", "flex", "--retries", "1"],
    );
    assert_eq!(
        out.code, 3,
        "without --flex-fallback the span stays verbatim: {out:?}"
    );
    assert_eq!(run.summaries(), vec![0]);
    assert!(run.bytes()[0].starts_with(&before[0]));
    let server = TestServer::respond(unavailable);
    let out = run.mf(
        &server,
        "gpt-6-luna",
        &[
            "--service-tier",
            "flex",
            "--flex-fallback",
            "--retries",
            "1",
        ],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let r = records(&out)[0].clone();
    assert_eq!(r["action"], "folded");
    assert_eq!(r["tiers"], json!({"standard": 1}), "{r}");
    assert!(
        serde_json::to_string(&r)
            .unwrap()
            .contains("--flex-fallback"),
        "{r}"
    );
}

#[test]
fn batch_and_flex_are_refused_for_a_model_without_them() {
    let run = Run::new(1);
    let out = run.env.mf_env(
        &[
            "compact",
            &run.files[0],
            "--model",
            "openai-compatible:x",
            "--base-url",
            "http://127.0.0.1:1/v1",
            "--batch",
        ],
        &[("MF_STATE_DIR", &run.state)],
    );
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("no batch API"), "{}", out.stderr);
    let out = run.env.mf_env(
        &[
            "compact",
            &run.files[0],
            "--model",
            "haiku",
            "--service-tier",
            "flex",
        ],
        &[("ANTHROPIC_API_KEY", "k")],
    );
    assert_eq!(out.code, 2, "{out:?}");
    assert!(out.stderr.contains("OpenAI's tier"), "{}", out.stderr);
}

#[test]
fn a_declined_span_is_asked_again_in_a_second_batch_and_a_rollup_in_a_later_one() {
    // --retry-lossy: the first answer keeps nothing and is declined; the retry naming what it
    // left out goes in the next batch, and its answer is written.
    let (_sim, server) = Sim::start(Plan {
        lossy_first: true,
        ..Plan::default()
    });
    let env_run = Run {
        env: TestEnv::new(),
        ..Run::new(0)
    };
    let run = Run {
        files: vec!["s0.jsonl".into()],
        ..env_run
    };
    run.env.write("s0.jsonl", &chat("s0"));
    let out = run.mf(&server, "haiku", &["--batch", "--retry-lossy"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(
        count(&server, "POST", "/v1/messages/batches"),
        2,
        "the retry went as a second batch"
    );
    assert_eq!(count(&server, "POST", "/v1/messages"), 0);
    let r = records(&out)[0].clone();
    assert_eq!(r["action"], "folded", "{r}");
    assert_eq!(r["tiers"], json!({"batch": 2}), "{r}");
    assert_eq!(run.summaries(), vec![1]);

    // --rollup: the chunk summaries go in one batch, their rollup in the next.
    let (_sim, server) = Sim::start(Plan::default());
    let run = Run::new(1);
    run.env.write("s0.jsonl", &chat_of("s0", 16));
    let out = run.mf(
        &server,
        "haiku",
        &["--batch", "--rollup", "--max-span-tokens", "1200"],
    );
    assert_eq!(out.code, 0, "{out:?}");
    let r = records(&out)[0].clone();
    let outcomes: Vec<&str> = r["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["outcome"].as_str().unwrap())
        .collect();
    assert!(
        outcomes.iter().filter(|o| **o == "written").count() >= 2,
        "{r}"
    );
    assert!(outcomes.contains(&"written (rollup)"), "{r}");
    assert!(count(&server, "POST", "/v1/messages/batches") >= 2);
    assert_eq!(count(&server, "POST", "/v1/messages"), 0);
    assert_eq!(run.env.mf(&["verify", &run.files[0]]).code, 0);
}

#[test]
fn a_rollup_left_in_a_batch_is_collected_by_the_next_run() {
    // The chunks' batch answers at once; the rollup's is still working when the wait ends.
    let (sim, server) = Sim::start(Plan {
        polls: 0,
        later_polls: Some(1_000_000),
        ..Plan::default()
    });
    let run = Run::new(1);
    run.env.write("s0.jsonl", &chat_of("s0", 16));
    let args = ["--batch", "--rollup", "--max-span-tokens", "1200"];
    let first = run.mf(
        &server,
        "haiku",
        &[&args[..], &["--batch-wait", "1s"]].concat(),
    );
    assert_eq!(first.code, 75, "{first:?}");
    let r = records(&first)[0].clone();
    assert_eq!(
        r["action"], "folded",
        "the chunk summaries are written: {r}"
    );
    assert!(run.summaries()[0] >= 2);
    assert!(
        serde_json::to_string(&r)
            .unwrap()
            .contains("rollup waiting"),
        "{r}"
    );
    assert_eq!(count(&server, "POST", "/v1/messages/batches"), 2);
    sim.set(|p| p.later_polls = Some(0));
    let again = run.mf(&server, "haiku", &args);
    assert_eq!(again.code, 0, "{again:?}");
    // The rollup's batch was collected, not submitted again (a next level of rollup is a new
    // question, in a batch of its own).
    let mut ids: Vec<String> = server
        .requests()
        .into_iter()
        .filter(|r| r.path == "/v1/messages/batches")
        .flat_map(|r| {
            r.json()["requests"]
                .as_array()
                .unwrap()
                .iter()
                .map(|q| q["custom_id"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    let n = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), n, "no request was asked twice");
    let r = records(&again)[0].clone();
    assert!(
        serde_json::to_string(&r)
            .unwrap()
            .contains("written (rollup)"),
        "{r}"
    );
    assert_eq!(run.env.mf(&["verify", &run.files[0]]).code, 0);
    assert_eq!(run.kept(), 0);
}

/// Start `mf compact --batch` on `run`'s files and wait until its batch is submitted and kept.
fn started(run: &Run, server: &TestServer) -> std::process::Child {
    let base = format!("{}/v1", server.url());
    let mut args: Vec<&str> = vec!["compact"];
    args.extend(run.files.iter().map(String::as_str));
    args.extend([
        "--model",
        "haiku",
        "--base-url",
        &base,
        "--trigger",
        "0",
        "--recent",
        "2",
        "--json",
        "--batch",
    ]);
    let mut cmd = run.env.command(
        &args,
        &[
            ("ANTHROPIC_API_KEY", "sk-ant-test"),
            ("MF_STATE_DIR", &run.state),
            ("MF_BATCH_POLL_MS", "20"),
        ],
    );
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while !(run.kept() == 1 && count(server, "GET", "/v1/messages/batches/msgbatch_0") > 0) {
        assert!(
            t0.elapsed() < std::time::Duration::from_secs(30),
            "no batch submitted"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child
}

#[test]
fn ctrl_c_while_waiting_exits_75_writes_nothing_and_a_kill_loses_no_batch() {
    let (sim, server) = Sim::start(Plan {
        polls: 1_000_000,
        ..Plan::default()
    });
    let run = Run::new(1);
    let before = run.bytes();
    let child = started(&run, &server);
    assert!(crate::trust::signal(child.id(), "INT"));
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(75), "{stderr}");
    assert!(stderr.contains("stopped waiting (SIGINT)"), "{stderr}");
    assert_eq!(run.bytes(), before);
    assert_eq!(run.kept(), 1);

    // A kill: the batch was kept before the wait began, so the next run collects it.
    let run2 = Run::new(1);
    let (sim2, server2) = Sim::start(Plan {
        polls: 1_000_000,
        ..Plan::default()
    });
    let mut child = started(&run2, &server2);
    assert!(crate::trust::signal(child.id(), "KILL"));
    let _ = child.wait();
    assert_eq!(run2.kept(), 1);
    sim2.set(|p| p.polls = 0);
    let out = run2.mf(&server2, "haiku", &["--batch"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(count(&server2, "POST", "/v1/messages/batches"), 1);
    assert_eq!(records(&out)[0]["action"], "folded");
    let _ = sim;
}
