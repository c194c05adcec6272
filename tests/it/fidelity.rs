//! Fidelity of the built-in summarizer on planted-fact conversations (issue 9): fold all but the
//! last turn of the generator's 12-, 40- and 120-turn transcripts with `extractive` at a quarter
//! of the span's characters, and check what the summary kept against the list of planted facts —
//! independently of the audit — and that the audit accepts it.
//!
//! The span is built here from the generated messages (as mf renders entries: content, then a
//! `[calls name(args)]` line per tool call), without mf's planner.

use std::collections::BTreeMap;

use mf::entry::Role;
use mf::fold::audit::{self, AuditOptions};
use mf::fold::prompt::{DEFAULT_INSTRUCTION, Piece};
use mf::summarizer::extractive;
use testgen::score::states as has;
use testgen::{Conversation, Fact, Placement};

const SEEDS: [u64; 3] = [1, 2, 3];
const MAX_SHARE: f64 = 0.25;

/// The pieces of turns 1 to the second-to-last turn, and the last turn's number.
fn span(conv: &Conversation) -> (Vec<Piece>, u64) {
    let mut turn = 0;
    let mut all = Vec::new();
    for m in &conv.messages {
        let role = match m.role {
            "system" => Role::System,
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "tool" => Role::Tool,
            other => panic!("unexpected role {other}"),
        };
        if role == Role::User {
            turn += 1;
        }
        let mut text = m.content.clone().unwrap_or_default();
        for c in &m.tool_calls {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str(&format!(
                "[calls {}({})]",
                c.function.name, c.function.arguments
            ));
        }
        let author = match (&m.name, role) {
            (Some(name), Role::Tool) => format!("tool:{name}"),
            _ => role.as_str().to_string(),
        };
        all.push((
            turn,
            Piece {
                turn,
                author,
                role: Some(role),
                reasoning: Vec::new(),
                text,
            },
        ));
    }
    let last = turn;
    let pieces = all
        .into_iter()
        .filter(|(t, _)| *t >= 1 && *t < last)
        .map(|(_, p)| p)
        .collect();
    (pieces, last)
}

/// The value a faithful summary of the span states for `f`, and the one it must not state as
/// current (when the span corrects it).
fn expected(f: &Fact, last: u64) -> (&str, Option<&str>) {
    match f.corrected_turn {
        Some(t) if t < last => (&f.latest, Some(&f.value)),
        _ => (&f.value, None),
    }
}

#[derive(Default)]
struct Tally {
    planted: usize,
    kept: usize,
    tool_planted: usize,
    tool_kept: usize,
}

fn share(kept: usize, planted: usize) -> String {
    if planted == 0 {
        "  —  ".into()
    } else {
        format!("{:.2}", kept as f64 / planted as f64)
    }
}

/// The first seed, at every size; the long suite adds the other seeds and the report of how far
/// below the target the facts survive.
#[test]
fn extractive_keeps_planted_facts_at_a_quarter_of_the_span() {
    extractive_fidelity(&SEEDS[..1], false);
}

#[test]
#[ignore = "long suite (every seed, and smaller targets reported): .ci/run runs the `_long` tests by name"]
fn extractive_keeps_planted_facts_at_a_quarter_of_the_span_long() {
    extractive_fidelity(&SEEDS, true);
}

fn extractive_fidelity(seeds: &[u64], smaller_targets: bool) {
    let mut report = String::from(
        "\nfidelity of `extractive` at ≤ 0.25 of the span (facts planted in user/assistant/tool-call; tool-result facts apart)\n",
    );
    let mut failures = Vec::new();
    for turns in [12usize, 40, 120] {
        for &seed in seeds {
            let conv = testgen::facts(turns, seed);
            let (pieces, last) = span(&conv);
            let span_chars: usize = pieces.iter().map(|p| p.text.chars().count()).sum();
            let target = (span_chars as f64 * MAX_SHARE) as usize;
            let summary = extractive::summarize(&pieces, target);
            let chars = summary.chars().count();
            let ctx = format!("{turns} turns, seed {seed}");
            if chars > target {
                failures.push(format!("{ctx}: {chars} chars over the target of {target}"));
            }

            let mut by_class: BTreeMap<&str, Tally> = BTreeMap::new();
            let (mut corrections, mut corrections_ok) = (0, 0);
            for f in conv.facts.iter().filter(|f| f.turn < last) {
                let (value, old) = expected(f, last);
                let kept = has(&summary, value);
                let t = by_class.entry(f.class).or_default();
                if f.placed == Placement::ToolResult {
                    t.tool_planted += 1;
                    t.tool_kept += usize::from(kept);
                } else {
                    t.planted += 1;
                    t.kept += usize::from(kept);
                }
                if let Some(old) = old {
                    corrections += 1;
                    // The latest value is stated; a line that still says the old one says the
                    // new one too ("9090, not 8080") or is marked superseded.
                    let stale: Vec<&str> = summary
                        .lines()
                        .filter(|l| has(l, old) && !has(l, value) && !l.contains("(superseded)"))
                        .collect();
                    if kept && stale.is_empty() {
                        corrections_ok += 1;
                    } else {
                        failures.push(format!(
                            "{ctx}: {} corrected from {old} to {value} (turn {:?}): latest kept: {kept}, stated as current in {stale:?}",
                            f.subject, f.corrected_turn
                        ));
                    }
                }
            }
            for class in testgen::CLASSES {
                let t = by_class.get(class);
                let (planted, kept) = t.map_or((0, 0), |t| (t.planted, t.kept));
                if planted == 0 {
                    failures.push(format!("{ctx}: no {class} fact planted where it counts"));
                } else if (kept as f64) < 0.9 * planted as f64 {
                    let missing: Vec<&str> = conv
                        .facts
                        .iter()
                        .filter(|f| {
                            f.turn < last && f.class == class && f.placed != Placement::ToolResult
                        })
                        .map(|f| expected(f, last).0)
                        .filter(|v| !has(&summary, v))
                        .collect();
                    failures.push(format!(
                        "{ctx}: {class} retention {kept}/{planted} is under 0.9; missing {missing:?}"
                    ));
                }
            }

            let audit = audit::audit(
                &pieces,
                &summary,
                DEFAULT_INSTRUCTION,
                &AuditOptions::default(),
            );
            if let Some(reason) = audit.verdict(0.5, false) {
                failures.push(format!("{ctx}: the audit declines the summary: {reason}"));
            }
            if !audit.superseded.is_empty()
                || !audit.inventions.is_empty()
                || !audit.forgeries.is_empty()
            {
                failures.push(format!(
                    "{ctx}: audit flags: superseded {:?}, inventions {:?}, forgeries {:?}",
                    audit.superseded, audit.inventions, audit.forgeries
                ));
            }

            if seed == SEEDS[0] {
                report.push_str(&format!(
                    "\n{turns} turns (seed {seed}): span {span_chars} chars, summary {chars} chars = {:.3} of the span; corrections at latest value {corrections_ok}/{corrections}; audit retention {:.2} ({}/{} items, tool-result-only items kept {}/{})\n",
                    chars as f64 / span_chars as f64,
                    audit.retention,
                    audit.kept,
                    audit.found,
                    audit.classes.iter().map(|c| c.tool_results_kept).sum::<usize>(),
                    audit.classes.iter().map(|c| c.tool_results_found).sum::<usize>(),
                ));
                // How far below the target the planted facts still survive (reported only).
                let mut smaller = Vec::new();
                let shares: &[f64] = if smaller_targets {
                    &[0.05, 0.10, 0.15, 0.20]
                } else {
                    &[]
                };
                for &share in shares {
                    let s = extractive::summarize(&pieces, (span_chars as f64 * share) as usize);
                    let planted: Vec<&Fact> = conv
                        .facts
                        .iter()
                        .filter(|f| f.turn < last && f.placed != Placement::ToolResult)
                        .collect();
                    let kept = planted
                        .iter()
                        .filter(|f| has(&s, expected(f, last).0))
                        .count();
                    smaller.push(format!("{share:.2} → {kept}/{}", planted.len()));
                }
                if smaller_targets {
                    report.push_str(&format!(
                        "  planted facts kept at smaller targets: {}\n",
                        smaller.join(", ")
                    ));
                }
                report.push_str("  class          planted  kept  retention | tool-result planted  kept  retention\n");
                for class in testgen::CLASSES {
                    let d = Tally::default();
                    let t = by_class.get(class).unwrap_or(&d);
                    report.push_str(&format!(
                        "  {class:<14} {:>7} {:>5}  {:>9} | {:>19} {:>5}  {:>9}\n",
                        t.planted,
                        t.kept,
                        share(t.kept, t.planted),
                        t.tool_planted,
                        t.tool_kept,
                        share(t.tool_kept, t.tool_planted)
                    ));
                }
            } else {
                report.push_str(&format!(
                    "  seed {seed}: {:.3} of the span; planted kept {}/{}; corrections {corrections_ok}/{corrections}; audit retention {:.2}\n",
                    chars as f64 / span_chars as f64,
                    by_class.values().map(|t| t.kept).sum::<usize>(),
                    by_class.values().map(|t| t.planted).sum::<usize>(),
                    audit.retention,
                ));
            }
        }
    }
    eprintln!("{report}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_generated_transcripts_read_as_chat() {
    // The generator's output is what mf reads: every line parses, and the roles alternate in
    // turns (a tool result follows the call it answers).
    let conv = testgen::facts(12, 9);
    let jsonl = conv.to_jsonl();
    let mut pending: Vec<String> = Vec::new();
    for line in jsonl.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        match v["role"].as_str().expect("a role") {
            "assistant" => {
                assert!(pending.is_empty(), "{line}");
                if let Some(calls) = v["tool_calls"].as_array() {
                    pending = calls
                        .iter()
                        .map(|c| c["id"].as_str().unwrap().to_string())
                        .collect();
                }
            }
            "tool" => {
                let id = v["tool_call_id"].as_str().unwrap();
                assert_eq!(pending.first().map(String::as_str), Some(id), "{line}");
                pending.remove(0);
            }
            _ => assert!(pending.is_empty(), "{line}"),
        }
    }
}

/// Issue 9, acceptance 6, end to end: `mf compact --model extractive` (its defaults) on the
/// generator's 120-turn conversations, several seeds. In the recall view afterwards: every
/// class's planted facts (those said by the user, the assistant or in tool-call arguments — what
/// the audit counts) kept at ≥ 0.9, every correction at its latest value and never stated as
/// current at its old one by the summary, and the view at most a quarter of the original's
/// tokens (mf's estimate, and this test's own count of the view's characters). Facts planted
/// only in tool results are reported apart.
/// One seed in the default run; the long suite runs four.
#[test]
fn compacted_120_turn_conversations_keep_their_facts_in_a_quarter_of_the_view() {
    compacted_120_turns(&[1]);
}

#[test]
#[ignore = "long suite (four seeds): .ci/run runs the `_long` tests by name"]
fn compacted_120_turn_conversations_keep_their_facts_in_a_quarter_of_the_view_long() {
    compacted_120_turns(&[1, 2, 3, 4]);
}

fn compacted_120_turns(seeds: &[u64]) {
    use testgen::score::{ratio, read_view, score};
    let mut report = String::from(
        "\n`mf compact --model extractive` on 120-turn conversations: the recall view after\n",
    );
    let mut failures = Vec::new();
    for &seed in seeds {
        let conv = testgen::facts(120, seed);
        let env = crate::util::TestEnv::new();
        env.write("chat.jsonl", &conv.to_jsonl());
        let recall = |env: &crate::util::TestEnv| {
            let out = env.mf(&["recall", "chat.jsonl"]);
            assert_eq!(out.code, 0, "{out:?}");
            read_view(&out.stdout).expect("recall is chat JSON lines")
        };
        let before = score(&conv, &recall(&env));
        assert_eq!(before.retention(), 1.0, "the original states every fact");
        let out = env.mf(&["compact", "chat.jsonl", "--model", "extractive", "--json"]);
        assert_eq!(out.code, 0, "{out:?}");
        let rec = &crate::util::json_lines(&out.stdout)[0];
        let ctx = format!("seed {seed}");
        if rec["action"] != "folded" {
            failures.push(format!("{ctx}: not folded: {}", rec["reason"]));
            continue;
        }
        let after = score(&conv, &recall(&env));
        let tokens =
            rec["after"]["tokens"].as_f64().unwrap() / rec["before"]["tokens"].as_f64().unwrap();
        let chars = after.chars as f64 / before.chars as f64;
        if tokens > 0.25 || chars > 0.25 {
            failures.push(format!(
                "{ctx}: the recall view is {tokens:.3} of the original's tokens ({chars:.3} of its characters), over 0.25"
            ));
        }
        for (class, t) in &after.classes {
            if t.planted == 0 {
                failures.push(format!("{ctx}: no {class} fact planted where it counts"));
            } else if ratio(t.kept, t.planted) < 0.9 {
                failures.push(format!(
                    "{ctx}: {class} retention {}/{} is under 0.9",
                    t.kept, t.planted
                ));
            }
        }
        if after.corrections == 0 || after.corrections_ok != after.corrections {
            failures.push(format!(
                "{ctx}: corrections at their latest value {}/{}: {:?}",
                after.corrections_ok, after.corrections, after.bad_corrections
            ));
        }
        // The audit accepted it and flags nothing.
        let audit = &rec["summaries"][0]["audit"];
        for flag in ["inventions", "superseded", "forgeries"] {
            if audit[flag].as_array().is_none_or(|a| !a.is_empty()) {
                failures.push(format!("{ctx}: the audit flags {flag}: {}", audit[flag]));
            }
        }
        report.push_str(&format!(
            "  seed {seed}: {tokens:.3} of the tokens ({chars:.3} of the characters); facts kept {:.3} (worst class {:?}); tool-result facts {:.3}; corrections {}/{}; audit retention {}\n",
            after.retention(),
            after.worst_class(),
            after.tool_retention(),
            after.corrections_ok,
            after.corrections,
            audit["retention"],
        ));
        if seed == 1 {
            report.push_str("    class          planted  kept | tool-result planted  kept\n");
            for (class, t) in &after.classes {
                report.push_str(&format!(
                    "    {class:<14} {:>7} {:>5} | {:>19} {:>5}\n",
                    t.planted, t.kept, t.tool_planted, t.tool_kept
                ));
            }
        }
    }
    eprintln!("{report}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---- agent-shaped sessions and any model (issue 14) ------------------------------------------

mod agent_shaped {
    use crate::server::{TestServer, openai_ok};
    use crate::util::*;
    use serde_json::{Value, json};

    const OWNERS: [&str; 8] = [
        "Dana Kim",
        "Priya Raman",
        "Marcus Webb",
        "Lena Fox",
        "Omar Haddad",
        "Sofia Reyes",
        "Ken Ito",
        "Ada Stone",
    ];

    /// A planted fact and where the session says it.
    #[allow(dead_code)]
    struct Planted {
        text: String,
        user: bool,
    }

    /// An agent-shaped session (chat JSONL with tool calls): per turn a prompt with a path, a
    /// deadline, an owner and a budget; a read of the file (its body), an edit (a body), a test
    /// command whose result carries an error line and an exit status; and a closing remark.
    fn session(turns: usize) -> (String, Vec<Planted>) {
        let mut lines = vec![line("sys", "system", "You are a coding agent.")];
        let mut planted = Vec::new();
        let body = |k: usize| -> String {
            (0..40)
                .map(|i| format!("    let total_{k}_{i} = round_cents(amount_{i} * rate_{k});\n"))
                .collect()
        };
        for k in 1..=turns {
            let path = format!("src/billing{k}/charge.rs");
            let deadline = format!("{}:00 UTC", 8 + k);
            let owner = OWNERS[(k - 1) % OWNERS.len()];
            let budget = format!("${k}00");
            let cmd = format!("cargo test -p billing{k}");
            lines.push(line(
                &format!("u{k}"),
                "user",
                &format!(
                    "Fix the refund rounding in {path}. Deploy only after {deadline}; {owner} owns the rollout and the budget is {budget}."
                ),
            ));
            for (text, user) in [
                (&path, true),
                (&deadline, true),
                (&owner.to_string(), true),
                (&budget, true),
            ] {
                planted.push(Planted {
                    text: text.clone(),
                    user,
                });
            }
            planted.push(Planted {
                text: cmd.clone(),
                user: false,
            });
            let call = |id: &str, name: &str, args: Value| -> String {
                json!({"id": format!("a{k}{id}"), "role": "assistant", "content": null,
                    "tool_calls": [{"id": format!("c{k}{id}"), "type": "function",
                        "function": {"name": name, "arguments": args.to_string()}}]})
                .to_string()
            };
            let result = |id: &str, name: &str, text: &str| -> String {
                json!({"id": format!("t{k}{id}"), "role": "tool", "tool_call_id": format!("c{k}{id}"),
                    "name": name, "content": text})
                .to_string()
            };
            lines.push(call("r", "read_file", json!({"path": path})));
            lines.push(result("r", "read_file", &body(k)));
            lines.push(call(
                "e",
                "edit_file",
                json!({"path": path, "old_string": body(k), "new_string": body(k).replace("round_cents", "floor_cents")}),
            ));
            lines.push(result("e", "edit_file", "ok"));
            lines.push(call("b", "run_command", json!({"command": cmd})));
            lines.push(result(
                "b",
                "run_command",
                &format!("error[E0308]: mismatched types in billing{k}\nexit code 101"),
            ));
            lines.push(line(
                &format!("z{k}"),
                "assistant",
                "I changed the rounding to floor and ran the tests; one type error is left.",
            ));
        }
        (lines.join("\n") + "\n", planted)
    }

    fn run(reply: &str) -> (Value, String, String, Vec<Planted>) {
        let server = TestServer::start(vec![openai_ok(reply); 8]);
        let env = TestEnv::new();
        let (text, planted) = session(8);
        let f = env.write("agent.jsonl", &text);
        let before = env
            .mf_ok(&["recall", f.to_str().unwrap(), "--format", "text"])
            .stdout;
        let out = env.mf(&[
            "compact",
            f.to_str().unwrap(),
            "--model",
            "openai-compatible:loop",
            "--base-url",
            &format!("{}/v1", server.url()),
            "--max-span-tokens",
            "1000000",
            "--json",
        ]);
        assert_eq!(out.code, 0, "{out:?}");
        let rec: Value = serde_json::from_str(out.stdout.lines().next().unwrap()).unwrap();
        let after = env
            .mf_ok(&["recall", f.to_str().unwrap(), "--format", "text"])
            .stdout;
        (rec, before, after, planted)
    }

    /// Kept ÷ planted, for the facts the later turns need (all but the last turn's, which stays).
    fn kept(planted: &[Planted], recall: &str) -> f64 {
        let folded = &planted[..planted.len() - 5];
        let n = folded.iter().filter(|p| recall.contains(&p.text)).count();
        n as f64 / folded.len() as f64
    }

    fn faithful() -> String {
        let mut s = String::from("Goal:\n");
        for k in 1..=7 {
            s.push_str(&format!(
                "- The user wants the refund rounding in src/billing{k}/charge.rs fixed, deployed only after {}:00 UTC, with {} owning the rollout and a budget of ${k}00.\n",
                8 + k,
                OWNERS[k - 1]
            ));
        }
        s.push_str("State:\n- The agent switched the rounding to floor in each file; the tests still fail with a type error.\n");
        s
    }

    fn figures_only() -> String {
        let mut s = String::from("Facts:\n");
        for k in 1..=7 {
            s.push_str(&format!("- {}:00 UTC, ${k}00\n", 8 + k));
        }
        s
    }

    const INVENTED: &str = "The team fixed every refund bug by 07:45 UTC, cut costs by $12,345 across 37 modules and shipped release 4.9.1 to all 2,048 customers without a single failed test.";

    #[test]
    fn any_model_keeps_the_user_facts_and_action_targets_by_construction() {
        for (name, reply) in [("faithful", faithful()), ("figures only", figures_only())] {
            let (rec, before, after, planted) = run(&reply);
            assert_eq!(rec["action"], "folded", "{name}: {rec}");
            let a = &rec["summaries"][0]["audit"];
            assert!(a["retention"].as_f64().unwrap() >= 0.9, "{name}: {a}");
            let share = kept(&planted, &after);
            assert!(
                share >= 0.9,
                "{name}: kept {share} of the planted facts:\n{after}"
            );
            let ratio = after.len() as f64 / before.len() as f64;
            assert!(ratio <= 0.5, "{name}: recall {ratio} of the original");
            // mf's section names each left-out item verbatim with its turn and kind.
            assert!(
                after.contains(mf::fold::audit::APPENDIX_HEADING),
                "{name}: {after}"
            );
            assert!(
                after.contains("- T1 ran `cargo test -p billing1` → error[E0308]"),
                "{name}: {after}"
            );
            if name == "figures only" {
                assert!(a["modelRetention"].as_f64().unwrap() < 0.5, "{name}: {a}");
                assert!(
                    after.contains(
                        "- T1 user: \"Fix the refund rounding in src/billing1/charge.rs.\""
                    ),
                    "{name}: {after}"
                );
            }
        }
    }

    #[test]
    fn a_fluent_paragraph_with_invented_figures_is_declined() {
        let (rec, before, after, _) = run(INVENTED);
        assert_eq!(rec["action"], "declined", "{rec}");
        // Declined for the figures nothing it read says: the audit lists them as inventions.
        let inventions: Vec<&str> = rec["summaries"][0]["audit"]["inventions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["text"].as_str().unwrap())
            .collect();
        assert!(
            inventions
                .iter()
                .any(|&i| i == "$12,345" || i == "07:45 UTC"),
            "{rec}"
        );
        assert_eq!(before, after);
    }
}

// ---- the calibration set (issue 14) ----------------------------------------------------------

mod calibration {
    use crate::server::{TestServer, openai_ok};
    use crate::util::*;
    use serde_json::Value;

    const GENERIC: &str = "The user and the assistant worked through the task together over many turns. The assistant read the relevant parts of the project, made a series of careful changes, and ran the checks to confirm that everything behaved as expected. Several issues came up along the way and were resolved, and the work is now in a good state, with a few follow-up items left for later.";

    /// Every agent compaction in `file`: (the session cut just before it, the entries the agent
    /// kept, the agent's summary) — the same cases `scripts/calibration/cases.py` builds.
    fn compactions(file: &std::path::Path) -> Vec<(String, usize, String)> {
        let text = std::fs::read_to_string(file).unwrap();
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let mut out = Vec::new();
        for (i, line) in lines.iter().enumerate() {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            if v["isCompactSummary"] == true {
                let mut cut = i;
                while cut > 0 && !lines[cut].contains("\"compact_boundary\"") {
                    cut -= 1;
                }
                let c = &v["message"]["content"];
                let summary = match c {
                    Value::String(s) => s.clone(),
                    Value::Array(a) => a
                        .iter()
                        .filter_map(|x| x["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => continue,
                };
                out.push((lines[..cut].concat(), 1, summary));
            } else if v["type"] == "compaction" {
                let kept = v["firstKeptEntryIndex"].as_u64().map_or(i, |k| k as usize);
                let recent = lines[kept.min(i)..i]
                    .iter()
                    .filter(|l| {
                        l.contains("\"type\":\"message\"") || l.contains("\"type\": \"message\"")
                    })
                    .count()
                    .max(1);
                out.push((
                    lines[..i].concat(),
                    recent,
                    v["summary"].as_str().unwrap_or("").to_string(),
                ));
            }
        }
        out
    }

    /// Every run of digits changed: the same shape, the wrong value.
    fn change_figures(s: &str) -> String {
        s.chars()
            .map(|c| match c.to_digit(10) {
                Some(d) => char::from_digit((d + 1) % 10, 10).unwrap(),
                None => c,
            })
            .collect()
    }

    /// Serve `reply` over the cut and return the decision record.
    fn verdict(cut: &str, recent: usize, reply: Option<&str>) -> Value {
        let env = TestEnv::new();
        let f = env.write("cut.jsonl", cut);
        let server = TestServer::respond({
            let reply = reply.unwrap_or("").to_string();
            move |_, _| openai_ok(&reply)
        });
        let base = format!("{}/v1", server.url());
        let recent = recent.to_string();
        let mut args = vec![
            "compact",
            f.to_str().unwrap(),
            "--json",
            "--recent",
            &recent,
            "--max-span-tokens",
            "1000000",
            "--trigger",
            "0",
            "--force",
        ];
        match reply {
            Some(_) => args.extend([
                "--model",
                "openai-compatible:calibration",
                "--base-url",
                &base,
            ]),
            None => args.extend(["--model", "extractive"]),
        }
        let out = env.mf(&args);
        serde_json::from_str(out.stdout.lines().next().unwrap_or("{}")).unwrap()
    }

    fn check(files: &[std::path::PathBuf]) -> usize {
        let mut n = 0;
        let mut wrong = Vec::new();
        for f in files {
            for (k, (cut, recent, summary)) in compactions(f).into_iter().enumerate() {
                let name = format!("{}#{k}", f.display());
                let sentences: Vec<&str> = summary
                    .split_inclusive(['.', '\n'])
                    .filter(|s| !s.trim().is_empty())
                    .collect();
                let short: String = sentences.iter().step_by(5).copied().collect();
                for (kind, reply, want) in [
                    ("a (agent's own)", Some(summary.clone()), "folded"),
                    ("b (extractive)", None, "folded"),
                    (
                        "c1 (short, figures changed)",
                        Some(change_figures(&short)),
                        "declined",
                    ),
                    (
                        "c2 (figures changed)",
                        Some(change_figures(&summary)),
                        "declined",
                    ),
                    (
                        "c3 (generic paragraph)",
                        Some(GENERIC.to_string()),
                        "declined",
                    ),
                ] {
                    if kind.starts_with("c1") && change_figures(&short) == short {
                        continue; // nothing to change: no figure left in the short copy
                    }
                    let rec = verdict(&cut, recent, reply.as_deref());
                    n += 1;
                    if rec["action"] != want {
                        wrong.push(format!(
                            "{name} {kind}: {} ({})",
                            rec["action"], rec["reason"]
                        ));
                    }
                }
            }
        }
        assert!(wrong.is_empty(), "miscalibrated:\n{}", wrong.join("\n"));
        n
    }

    #[test]
    fn the_committed_compactions_calibrate() {
        let n = check(&[fixture("pi-session-v1.jsonl")]);
        assert!(n >= 4, "{n} cases");
        // The committed Claude Code fixture's summary is synthetic: it states "30 days", which
        // nothing before its compaction says. The audit catches exactly that.
        let (cut, recent, summary) = compactions(&fixture("claude-compacted.jsonl")).remove(0);
        let rec = verdict(&cut, recent, Some(&summary));
        assert_eq!(rec["action"], "declined", "{rec}");
        assert!(
            rec["reason"]
                .as_str()
                .unwrap()
                .contains("it states what nothing it read says (30 days)"),
            "{rec}"
        );
        let rec = verdict(&cut, recent, Some(&summary.replace("30 days", "a month")));
        assert_eq!(rec["action"], "folded", "{rec}");
    }

    /// Case (d): the real small model (SmolLM2-135M behind llama.cpp's OpenAI-compatible server,
    /// `scripts/calibration/small-model.sh`, run by hand) summarized the committed agent sessions;
    /// its replies are kept in `fixtures/calibration/NAME.dK.txt` (K: the call). Served again, in
    /// the order it gave them, over the same session and flags, every one is declined and nothing
    /// folds.
    #[test]
    fn the_small_models_summaries_are_declined() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/calibration");
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| {
                let n = e.unwrap().file_name().into_string().ok()?;
                n.strip_suffix(".d1.txt").map(str::to_string)
            })
            .collect();
        names.sort();
        assert!(names.len() >= 3, "small-model replies for {names:?}");
        for name in &names {
            let replies: Vec<String> = (1..)
                .map(|k| dir.join(format!("{name}.d{k}.txt")))
                .take_while(|p| p.exists())
                .map(|p| std::fs::read_to_string(p).unwrap())
                .collect();
            let env = TestEnv::new();
            let f = env.write(
                "s.jsonl",
                &std::fs::read_to_string(fixture(&format!("{name}.jsonl"))).unwrap(),
            );
            let server = TestServer::respond({
                let replies = replies.clone();
                move |_, k| openai_ok(&replies[k.min(replies.len() - 1)])
            });
            let base = format!("{}/v1", server.url());
            let out = env.mf(&[
                "compact",
                f.to_str().unwrap(),
                "-o",
                env.path("out.jsonl").to_str().unwrap(),
                "--force",
                "--json",
                "--trigger",
                "0",
                "--max-span-tokens",
                "2500",
                "--model",
                "openai-compatible:smollm2",
                "--base-url",
                &base,
            ]);
            let rec: Value = serde_json::from_str(out.stdout.lines().next().unwrap_or("{}"))
                .unwrap_or_else(|e| panic!("{name}: {e}: {}{}", out.stdout, out.stderr));
            assert_eq!(server.requests().len(), replies.len(), "{name}: {rec}");
            assert_eq!(rec["action"], "declined", "{name}: {rec}");
            // What the file now holds: no summary, one lossy decline a call.
            let ex = env.mf(&["explain", env.path("out.jsonl").to_str().unwrap(), "--json"]);
            let ex: Value = serde_json::from_str(ex.stdout.lines().next().unwrap_or("{}")).unwrap();
            assert_eq!(ex["summaries"], serde_json::json!([]), "{name}: {ex}");
            let declines: Vec<&Value> = ex["history"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|h| h["kind"] == "decline")
                .collect();
            assert_eq!(declines.len(), replies.len(), "{name}: {ex}");
            assert!(
                declines.iter().all(|d| d["reason"] == "lossy"),
                "{name}: {ex}"
            );
        }
    }

    #[test]
    #[ignore = "needs MF_CORPUS (the shared corpus; .ci/run sets it)"]
    fn the_corpus_compactions_calibrate() {
        let dir = corpus_dir();
        let n = check(&[
            dir.join("claude-code/cc-2.1.39-autocompact-hooks-progress-1512l.jsonl"),
            dir.join("claude-code/cc-2.0.76-autocompact-222l.jsonl"),
            dir.join("pi/pi-v1-before-compaction-1003l.jsonl"),
        ]);
        assert!(n >= 16, "{n} cases");
    }
}
