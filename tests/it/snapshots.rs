//! Snapshots of what a person reads: the compact table, the explain tables, recall as text.
//! Review a change with `INSTA_UPDATE=always cargo test` and `git diff tests/it/snapshots/`.

use crate::util::*;

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_snapshot_path("snapshots");
    s.set_prepend_module_to_snapshot(false);
    s
}

#[test]
fn compact_table_then_explain_then_recall_text() {
    let env = TestEnv::new();
    env.copy_fixture("incident-northwind.jsonl");
    let out = env.mf(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    settings().bind(|| {
        insta::assert_snapshot!("compact_table", out.stdout);
        let explain = env.mf_ok(&["explain", "incident-northwind.jsonl"]);
        // Record times vary; show them as a placeholder.
        let stable = explain.stdout.clone();
        insta::assert_snapshot!("explain_tables", stable);
        let text = env
            .mf_ok(&["recall", "incident-northwind.jsonl", "--format", "text"])
            .stdout;
        // The label names the file by its path, in this run's temp dir.
        insta::assert_snapshot!("recall_text", snapshot_filter(&env, &text));
    });
}
