//! Concurrency: eight `mf compact` at once on one file against a loopback provider pay for one
//! call and write one summary; every process exits with a record that says what it did.
//! `MF_TRUST_ROUNDS` repeats it (default 2).

use std::time::Duration;

use crate::trust::*;
use crate::util::*;

#[test]
fn eight_compacts_at_once_pay_for_one_call_and_write_one_summary() {
    let rounds = figure("MF_TRUST_ROUNDS", 2);
    for round in 0..rounds {
        let server = small_summary_server(Duration::from_millis(300));
        let env = TestEnv::without_audit();
        let f = env.write("c.jsonl", &conversation(40));
        let original = read(&f);
        let children: Vec<_> = (0..8)
            .map(|_| {
                spawn(
                    &env,
                    &["compact", "c.jsonl", "--model", "haiku", "--json"],
                    &haiku_env(&server),
                )
            })
            .collect();
        let outs: Vec<Output> = children
            .into_iter()
            .map(|c| finish(c, Duration::from_secs(120)))
            .collect();
        let mut actions = Vec::new();
        for o in &outs {
            assert_eq!(o.code, 0, "round {round}: {o:?}");
            let recs = json_lines(&o.stdout);
            assert_eq!(
                recs.len(),
                1,
                "round {round}: one record per process: {o:?}"
            );
            let r = &recs[0];
            assert!(
                !r["reason"].as_str().unwrap_or_default().is_empty(),
                "round {round}: the record says why: {r:#}"
            );
            actions.push(r["action"].as_str().unwrap().to_string());
            match r["action"].as_str().unwrap() {
                "folded" => {
                    assert_eq!(r["written"], true);
                    assert_eq!(r["calls"], 1);
                }
                "skipped" => {
                    assert_eq!(r["written"], false);
                    assert_eq!(r["calls"], 0);
                    assert_eq!(
                        r["reason"],
                        "not worth a call: 7 uncovered entries (below the trigger of 20)",
                        "round {round}: {r:#}"
                    );
                }
                other => panic!("round {round}: {other}: {o:?}"),
            }
        }
        actions.sort();
        assert_eq!(
            actions,
            [
                "folded", "skipped", "skipped", "skipped", "skipped", "skipped", "skipped",
                "skipped"
            ],
            "round {round}"
        );
        assert_eq!(server.requests().len(), 1, "round {round}: one paid call");
        let added = new_lines(&f, &original);
        assert_eq!(added.len(), 1, "round {round}: one line appended");
        assert_eq!(added[0]["mf"]["kind"], "summary");
        let waited = outs
            .iter()
            .filter(|o| o.stderr.contains("waiting for the lock"))
            .count();
        assert!(waited >= 1, "round {round}: the others said they waited");
        assert_verify_clean(&env, &f);
        assert_recall_is_models(&env, &f);
    }
}

#[test]
fn compacts_and_restores_at_once_leave_a_file_mf_can_explain() {
    // Four compacts and four restores of the summary the first run writes, all at once: every
    // process ends in a documented way and the file verifies clean.
    let server = small_summary_server(Duration::from_millis(200));
    let env = TestEnv::without_audit();
    let f = env.write("c.jsonl", &conversation(40));
    assert_eq!(
        run_with(
            &env,
            &["compact", "c.jsonl", "--model", "haiku"],
            &haiku_env(&server)
        )
        .code,
        0
    );
    let id = summary_lines(&f)[0]["id"].as_str().unwrap().to_string();
    let mut more = String::new();
    for n in 41..=70 {
        more += &line(
            &format!("v{n}"),
            "user",
            &format!("Question {n}: and the hotel in city {n}?"),
        );
        more.push('\n');
        more += &line(
            &format!("b{n}"),
            "assistant",
            &format!("Answer {n}: Hotel {n}, ref R-{n:03}."),
        );
        more.push('\n');
    }
    append(&f, more.as_bytes());
    let mut children = Vec::new();
    for k in 0..8 {
        children.push(if k % 2 == 0 {
            spawn(
                &env,
                &["compact", "c.jsonl", "--model", "haiku", "--json"],
                &haiku_env(&server),
            )
        } else {
            spawn(&env, &["expand", "c.jsonl", &id, "--restore"], &[])
        });
    }
    for c in children {
        let o = finish(c, Duration::from_secs(120));
        assert!(
            o.code == 0 || (o.code == 1 && o.stderr.contains("error:")),
            "{o:?}"
        );
    }
    assert_verify_clean(&env, &f);
    assert_recall_is_models(&env, &f);
}
