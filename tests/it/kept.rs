//! What the built-in summarizer keeps of a short agent session (issue 24), on sessions the real
//! agents wrote fresh (`scripts/agents/fresh-ids.sh`: Claude Code 2.1.332, Codex 0.171.0, pi
//! 1.6.0 and pi 0.73.1 against the loopback model, which reasons — a thinking block, a reasoning
//! item — before each reply): a request carrying a ticket id, a config path, API URLs, a key id,
//! a version and a limit, filler prompts around it ("ok", "yes do it", "thanks, go on"), and ten
//! tool calls. With the default flags, `mf compact --model extractive` folds each, and the summary
//! opens with the request, keeps every id the user stated and every call the agent made (its tool
//! and target), and copies none of the model's reasoning.

use serde_json::Value;

use crate::util::*;

const SESSIONS: [&str; 4] = [
    "claude-2.1.332-ids.jsonl",
    "codex-0.171.0-ids.jsonl",
    "pi-1.6.0-ids.jsonl",
    "pi-0.73.1-ids.jsonl",
];

/// What the user stated in the folded turns.
const IDS: [&str; 7] = [
    "PROJ-4821",
    "https://api.example.com/v2/orders",
    "config/checkout.yaml",
    "key_live_7Hq2Lx9Qe",
    "45s",
    "v2.3.1",
    "https://staging.example.com/v2/orders",
];

/// The targets of the calls the agents made in the folded turns (as each agent names its tools:
/// the read is `cat` for Codex, the write an `apply_patch`).
const CALLS: [&str; 6] = [
    "mkdir -p config",
    "config/checkout.yaml",
    "seq 1 120",
    "grep -c timeout timeouts.log",
    "sed -n 1,5p config/checkout.yaml",
    "echo \"client==v2.3.1\" > requirements.txt",
];

/// The text of the first string in `v` that starts with mf's label: the summary as written.
fn summary_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if s.starts_with("[summary of earlier turns") => Some(s.clone()),
        Value::Array(a) => a.iter().find_map(summary_text),
        Value::Object(m) => m.values().find_map(summary_text),
        _ => None,
    }
}

#[test]
fn extractive_folds_fresh_agent_sessions_keeping_ids_and_calls_never_reasoning() {
    for name in SESSIONS {
        let env = TestEnv::new();
        let path = env.copy_fixture(name);
        age(&path);
        let out = env.mf(&["compact", name, "--model", "extractive", "--json"]);
        assert_eq!(out.code, 0, "{name}: {out:?}");
        let rec = json_lines(&out.stdout).remove(0);
        assert_eq!(rec["action"], "folded", "{name}: {rec}");
        assert!(
            rec["before"]["tokens"].as_u64().unwrap() > 2000,
            "{name}: {rec}"
        );
        let audit = &rec["summaries"][0]["audit"];
        assert!(
            audit["retention"].as_f64().unwrap() >= 0.5,
            "{name}: {audit}"
        );
        let line = summary_lines(&path).remove(0);
        let text = summary_text(&line).expect("the summary's text");
        let body = text.split_once("\n\n").map_or("", |(_, b)| b);
        assert!(
            body.starts_with("Goal:\n- T1 user: Ticket PROJ-4821"),
            "{name}: the request is the goal:\n{body}"
        );
        for id in IDS {
            assert!(body.contains(id), "{name}: {id} lost:\n{body}");
        }
        for call in CALLS {
            assert!(
                body.contains(call),
                "{name}: the call {call:?} lost:\n{body}"
            );
        }
        for filler in ["user: ok", "yes do it"] {
            assert!(!body.contains(filler), "{name}: {filler:?} kept:\n{body}");
        }
        // The loopback model's reasoning names these, and nothing else does.
        assert!(
            !body.contains("scratch/hunch") && !body.contains("HUNCH_"),
            "{name}: reasoning copied:\n{body}"
        );
    }
}
