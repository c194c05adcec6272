//! The extractive summary's `Goal:` states what the user asked for (issue 14): a question with
//! the statement it asks about, the user's deadline and the owner they named, in the user's own
//! words — on `fixtures/incident-northwind.jsonl`, where the old Goal was the bare "Can you find
//! out what changed?" and neither the 16:00 UTC deadline nor "assign to Dana Kim" was the user's.

use crate::util::*;

/// The `Goal:` section of the summary `mf compact --model extractive` writes.
fn goal_of(env: &TestEnv, file: &str) -> String {
    let out = env.mf(&["compact", file, "--model", "extractive"]);
    assert_eq!(out.code, 0, "{out:?}");
    let recall = env.mf(&["recall", file, "--format", "text"]);
    assert_eq!(recall.code, 0, "{recall:?}");
    let text = recall.stdout;
    let start = text
        .find("Goal:")
        .unwrap_or_else(|| panic!("no Goal: in {text}"));
    let rest = &text[start..];
    let end = ["\nDecisions:", "\nState:", "\nFacts:", "\nNext:", "\n\n"]
        .iter()
        .filter_map(|h| rest.find(h))
        .min()
        .unwrap_or(rest.len());
    rest[..end].to_string()
}

#[test]
fn the_goal_states_the_request_with_its_deadline_and_owner() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    let goal = goal_of(&env, "incident-northwind.jsonl");
    for want in [
        // The question with what it is about, not bare.
        "Checkout latency on prod has been bad since this morning. Can you find out what changed?",
        // The deadline, as the user set it.
        "16:00 UTC, so this has to be fixed before then",
        // The owner the user named.
        "assign to Dana Kim",
    ] {
        assert!(goal.contains(want), "{want:?} not in the Goal:\n{goal}");
    }
    for line in goal.lines().skip(1) {
        assert!(line.starts_with("- T"), "{line:?}");
        assert!(
            !line.contains("</"),
            "agent-injected text in the Goal: {line:?}"
        );
    }
}
