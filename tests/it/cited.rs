//! `--strategy cited`: summaries that cite their sources. Offline with the built-in extractive
//! summarizer (non-contiguous coverage that recall, `expand --deep`, `explain` and `verify`
//! handle), and with a scripted model on a loopback server (rejections with reasons, sent back
//! on the next call, within the bound on calls).

use std::collections::HashSet;

use mf::decision::Reason;
use mf::entry::DeclineReason;
use mf::fold::SkipReason;

use crate::server::{TestServer, openai_ok};
use crate::util::*;

const FILE: &str = "incident-northwind.jsonl";

/// The original lines of a file by id (every message line has one in the fixture).
fn lines_by_id(original: &str) -> std::collections::HashMap<String, String> {
    original
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["id"].as_str().unwrap().to_string(), l.to_string())
        })
        .collect()
}

fn user_ids(original: &str) -> HashSet<String> {
    original
        .lines()
        .filter_map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["role"] == "user").then(|| v["id"].as_str().unwrap().to_string())
        })
        .collect()
}

/// Ids in recall order, from `recall --format memory`.
fn recall_ids(env: &TestEnv) -> Vec<String> {
    let out = env.mf(&["recall", FILE, "--format", "memory"]);
    assert_eq!(out.code, 0, "{out:?}");
    out.stdout
        .lines()
        .filter(|l| l.starts_with("<memory "))
        .map(|l| {
            l.split(" id=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap()
                .to_string()
        })
        .collect()
}

/// Whether coverage ranges leave a gap: more than one range.
fn ranges(summary: &serde_json::Value) -> usize {
    summary["mf"]["coverage"]["lines"].as_array().unwrap().len()
}

#[test]
fn extractive_cited_run_yields_non_contiguous_coverage_that_every_command_handles() {
    let (env, f, original_bytes) = incident();
    let original = String::from_utf8(original_bytes.clone()).unwrap();
    let out = env.mf(&[
        "compact",
        FILE,
        "--model",
        "extractive",
        "--strategy",
        "cited",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    assert_eq!(rec["action"], "folded", "{rec}");
    assert_eq!(rec["calls"], 1, "the extractive's candidates pass at once");
    let written: Vec<&serde_json::Value> = rec["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["outcome"] == "written")
        .collect();
    assert!(written.len() >= 2, "a multi-summary run: {rec}");
    assert_eq!(&read(&f)[..original_bytes.len()], &original_bytes[..]);

    // Coverage: exactly the ids each summary reports, disjoint, never a user message, with gaps.
    let lines = summary_lines(&f);
    assert_eq!(lines.len(), written.len());
    let users = user_ids(&original);
    let mut all = HashSet::new();
    let mut gaps = 0;
    for (line, s) in lines.iter().zip(&written) {
        let covered = covered_ids(&f, line);
        let reported: Vec<String> = s["coveredIds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect();
        assert_eq!(covered, reported, "the record names exactly the coverage");
        assert!(covered.len() >= 2);
        for id in &covered {
            assert!(!users.contains(id), "{id}: --protect user is on for cited");
            assert!(all.insert(id.clone()), "{id} is covered twice");
        }
        if ranges(line) > 1 {
            gaps += 1;
        }
        // Every line of the text cites an id of what it covers.
        let body = line["content"]
            .as_str()
            .unwrap()
            .split("]\n\n")
            .nth(1)
            .unwrap();
        for l in body.lines().filter(|l| !l.trim_end().ends_with(':')) {
            let cited = l
                .rsplit_once(" [")
                .expect("a citation")
                .1
                .trim_end_matches(']');
            for h in cited.split(", ") {
                assert!(
                    covered.iter().any(|c| c == h),
                    "{h} cited but not covered: {l}"
                );
            }
        }
    }
    assert_eq!(
        gaps,
        written.len(),
        "every summary skips the user messages between its entries"
    );
    // Some entries of the span were not cited: they stay verbatim.
    assert_eq!(
        rec["reason"],
        "folded 24 entries (turns 1–13) into 2 cited summaries in 1 call; 12 entries of the span no summary cited stay verbatim, 32 entries stay verbatim in all",
        "{rec}"
    );

    // verify: clean.
    let v = env.mf(&["verify", FILE]);
    assert_eq!(v.code, 0, "{v:?}");

    // recall: the summaries (by turn), then every entry none covers, in file order.
    let got = recall_ids(&env);
    let mut expected: Vec<String> = written
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect();
    expected.extend(
        original
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .filter(|id| !all.contains(id)),
    );
    assert_eq!(got, expected);

    // expand --deep: the covered lines, byte for byte, in order.
    let by_id = lines_by_id(&original);
    for (line, s) in lines.iter().zip(&written) {
        let id = s["id"].as_str().unwrap();
        let out = env.mf(&["expand", FILE, id, "--deep"]);
        assert_eq!(out.code, 0, "{out:?}");
        let want: String = covered_ids(&f, line)
            .iter()
            .map(|c| format!("{}\n", by_id[c]))
            .collect();
        assert_eq!(out.stdout, want, "{id}");
    }

    // explain: each summary with its audit and what it cites.
    let ex: serde_json::Value =
        serde_json::from_str(&env.mf_ok(&["explain", FILE, "--json"]).stdout).unwrap();
    for s in ex["summaries"].as_array().unwrap() {
        assert!(s["audit"]["retention"].as_f64().unwrap() >= 0.5, "{s}");
        assert_eq!(s["cited"]["round"], 1);
        assert!(!s["cited"]["cites"].as_array().unwrap().is_empty());
    }
    let text = env.mf_ok(&["explain", FILE]).stdout;
    assert!(text.contains("citations of msg-summary-"), "{text}");
    // explain ID: a covered entry names the summary that hides it.
    let first_covered = covered_ids(&f, &lines[0])[0].clone();
    let focus: serde_json::Value = serde_json::from_str(
        &env.mf_ok(&["explain", FILE, &first_covered, "--json"])
            .stdout,
    )
    .unwrap();
    assert_eq!(focus["focus"]["hiddenBy"], written[0]["id"]);

    // expand --restore: the first summary's entries come back, the rest stays folded.
    let id0 = written[0]["id"].as_str().unwrap();
    assert_eq!(env.mf(&["expand", FILE, id0, "--restore"]).code, 0);
    let after = recall_ids(&env);
    assert!(!after.contains(&id0.to_string()));
    for c in covered_ids(&f, &lines[0]) {
        assert!(after.contains(&c), "{c} is verbatim again");
    }
    for c in covered_ids(&f, &lines[1]) {
        assert!(!after.contains(&c), "{c} stays folded");
    }
    assert_eq!(env.mf(&["verify", FILE]).code, 0);
}

#[test]
fn a_second_cited_run_nests_the_first_summaries_and_expand_deep_reaches_the_originals() {
    let (env, f, original_bytes) = incident();
    let original = String::from_utf8(original_bytes).unwrap();
    let args = [
        "compact",
        FILE,
        "--model",
        "extractive",
        "--strategy",
        "cited",
        "--json",
    ];
    let first = json_lines(&env.mf_ok(&args).stdout).remove(0);
    assert_eq!(first["action"], "folded");
    let inner = summary_lines(&f);
    let second = json_lines(&env.mf_ok(&args).stdout).remove(0);
    assert_eq!(second["action"], "folded", "{second}");
    let outer = summary_lines(&f).pop().unwrap();
    let outer_id = outer["id"].as_str().unwrap();
    let covered = covered_ids(&f, &outer);
    for s in &inner {
        assert!(covered.contains(&s["id"].as_str().unwrap().to_string()));
    }
    assert_eq!(env.mf(&["verify", FILE]).code, 0);
    // Deep: the originals under the nested summaries, in conversation order.
    let by_id = lines_by_id(&original);
    let mut leaves: Vec<String> = Vec::new();
    for c in &covered {
        match inner.iter().find(|s| s["id"] == c.as_str()) {
            Some(s) => leaves.extend(covered_ids(&f, s)),
            None => leaves.push(c.clone()),
        }
    }
    let order: Vec<&str> = original
        .lines()
        .map(|l| {
            let (_, rest) = l.split_once("\"id\": \"").unwrap();
            rest.split('"').next().unwrap()
        })
        .collect();
    leaves.sort_by_key(|id| order.iter().position(|o| o == id).unwrap());
    let want: String = leaves.iter().map(|c| format!("{}\n", by_id[c])).collect();
    let out = env.mf(&["expand", FILE, outer_id, "--deep"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.stdout, want);
}

/// A loopback model speaking Chat Completions, and `mf compact --strategy cited` against it.
fn scripted(env: &TestEnv, server: &TestServer, extra: &[&str]) -> Output {
    let base = format!("{}/v1", server.url());
    let mut args = vec![
        "compact",
        FILE,
        "--model",
        "openai-compatible:scripted",
        "--base-url",
        &base,
        "--strategy",
        "cited",
        "--json",
    ];
    args.extend(extra);
    env.mf(&args)
}

/// The text of a recorded request: the system and user messages.
fn request_text(r: &crate::server::Recorded) -> (String, String) {
    let body = r.json();
    let msgs = body["messages"].as_array().unwrap();
    (
        msgs[0]["content"].as_str().unwrap().to_string(),
        msgs[1]["content"].as_str().unwrap().to_string(),
    )
}

fn rejections(rec: &serde_json::Value) -> Vec<(String, String, u64)> {
    rec["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s.get("rejection").is_some())
        .map(|s| {
            (
                s["candidate"].as_str().unwrap().to_string(),
                s["rejection"]["reason"].as_str().unwrap().to_string(),
                s["round"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn invalid_too_long_single_source_and_cyclic_candidates_are_rejected_and_sent_back() {
    let long = "The p99 latency of checkout-api kept climbing through the morning while the team looked at dashboards, deploy logs, change requests and cache metrics, one after another, without a clear answer yet. ".repeat(4);
    let first = format!(
        "Here are the summaries.\n\
=== #1\nThe p99 jumped from about 210 ms to 1,840 ms [m5, m99].\n\
=== #2\n{long}[m40, m44]\n\
=== #3\nThe deploy log of checkout-api was read [m7].\n\
=== #4\nThe cache TTL fell to 60 s [m26, #5].\n\
=== #5\nPRICING-4471 restored it [m34, #4].\n\
=== #6\nTwo changes landed at 07:42 and 07:55 UTC: v4.18.0 cut the pool from 64 to 8 and PRICING_TIMEOUT_MS went from 300 to 2000 [m9]. pricing-svc p99 went from 95 ms to 1,620 ms; CR-2291 was approved by Marcus Webb [m14]. The cache hit ratio fell from 94% to 31% [m20].\n"
    );
    let second = "=== #7\nSince the fix, checkout-api p99 is back to 238 ms at 14:00 UTC, down from 1,210 ms at 13:30 UTC [m40, m44]. A load test EV-88213 is set for 2026-12-01 10:00 UTC [m46, m48, m50].";
    let server = TestServer::start(vec![openai_ok(&first), openai_ok(second)]);
    let (env, f, original) = incident();
    let out = scripted(&env, &server, &["--min-retention", "0"]);
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    assert_eq!(rec["action"], "folded", "{rec}");
    assert_eq!(rec["calls"], 2);
    let reqs = server.requests();
    assert_eq!(
        reqs.len(),
        2,
        "a correction call, then nothing rejected: done"
    );

    // Each rejected with its reason, in the decision record.
    let mut got = rejections(rec);
    got.sort();
    assert_eq!(
        got,
        vec![
            ("#1".to_string(), "unknown-id".to_string(), 1),
            ("#2".to_string(), "too-long".to_string(), 1),
            ("#3".to_string(), "single-source".to_string(), 1),
            ("#4".to_string(), "cycle".to_string(), 1),
            ("#5".to_string(), "cycle".to_string(), 1),
        ]
    );
    let detail = |name: &str| -> String {
        rec["summaries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["candidate"] == name && s.get("rejection").is_some())
            .map(|s| s["rejection"]["detail"].as_str().unwrap().to_string())
            .unwrap()
    };
    assert_eq!(
        detail("#1"),
        "it cites `m99`, which is not an entry of this conversation"
    );
    assert!(detail("#2").contains("over 4/5 of the"), "{}", detail("#2"));
    assert!(
        detail("#3").contains("(m7); a summary needs at least 2"),
        "{}",
        detail("#3")
    );
    assert_eq!(
        detail("#4"),
        "it forms a cycle of summaries citing each other: #4 → #5 → #4"
    );

    // The first request showed the ids and the rules; the second carried every reason.
    let (system, user) = request_text(&reqs[0]);
    assert!(
        system.contains("=== #1") && system.contains("[m4, m7]"),
        "{system}"
    );
    assert!(user.contains(" · id m5]"), "{user}");
    assert!(user.contains(" · id m9]"), "{user}");
    assert!(
        !user.contains(" · id m2]"),
        "a protected user message is not offered"
    );
    let (_, retry) = request_text(&reqs[1]);
    for name in ["#1", "#2", "#3", "#4", "#5"] {
        assert!(
            retry.contains(&format!("- {name}: {}", detail(name))),
            "{name}: {retry}"
        );
    }
    assert!(retry.contains("- #6 covers m9, m14, m20"), "{retry}");
    assert!(
        retry.contains("<<<TRANSCRIPT"),
        "the transcript is sent again"
    );

    // What stands: #6 and #7, non-contiguous, verified; the originals untouched.
    let written: Vec<&serde_json::Value> = rec["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["outcome"] == "written")
        .collect();
    let names: Vec<&str> = written
        .iter()
        .map(|s| s["candidate"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["#6", "#7"]);
    let lines = summary_lines(&f);
    assert_eq!(covered_ids(&f, &lines[0]), ["m9", "m14", "m20"]);
    assert_eq!(
        covered_ids(&f, &lines[1]),
        ["m40", "m44", "m46", "m48", "m49", "m50"]
    );
    // The text is written as the model cited it; what its lines left out of what they cite
    // follows in mf's section (it is on with the audit off, as for the summary strategy).
    let content = lines[1]["content"].as_str().unwrap();
    let own = content
        .split("\n\nKept verbatim by mf (the summary above left these out):")
        .next()
        .unwrap();
    assert!(
        own.ends_with(second.trim_start_matches("=== #7\n")),
        "the text is written as the model cited it: {content}"
    );
    assert_eq!(&read(&f)[..original.len()], &original[..]);
    assert_eq!(env.mf(&["verify", FILE]).code, 0);
    let recall = recall_ids(&env);
    for id in ["m7", "m8", "m26", "m34", "m36", "m38", "m39", "m42"] {
        assert!(recall.contains(&id.to_string()), "{id} stays verbatim");
    }
    for id in ["m9", "m14", "m20", "m40", "m44", "m46", "m48", "m49", "m50"] {
        assert!(!recall.contains(&id.to_string()), "{id} is covered");
    }

    // explain shows the rejections of the fold.
    let text = env.mf_ok(&["explain", FILE]).stdout;
    assert!(text.contains("rejected in its fold: 5"), "{text}");
    assert!(
        text.contains("#4 (call 1, cycle): it forms a cycle of summaries citing each other"),
        "{text}"
    );
    let table = env.mf_ok(&["explain", FILE, "--json"]).stdout;
    let ex: serde_json::Value = serde_json::from_str(&table).unwrap();
    let rejected = ex["summaries"][0]["cited"]["rejected"].as_array().unwrap();
    assert_eq!(rejected.len(), 5);
}

#[test]
fn malformed_citations_and_lossy_candidates_are_rejected_with_their_reasons() {
    // With the audit at its default: a candidate that drops the span's figures is declined.
    let first = "=== #1\nThe p99 jumped [m5, \n\
=== #2\nThings happened and were looked into [m9, m14, m20].\n";
    let server = TestServer::start(vec![openai_ok(first), openai_ok("NONE")]);
    let (env, f, _) = incident();
    let out = scripted(&env, &server, &[]);
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    let mut got = rejections(rec);
    got.sort();
    assert_eq!(
        got,
        vec![
            ("#1".to_string(), "malformed-citation".to_string(), 1),
            ("#2".to_string(), "lossy".to_string(), 1),
        ]
    );
    let lossy = rec["summaries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["candidate"] == "#2")
        .unwrap();
    assert!(
        lossy["audit"]["retention"].as_f64().unwrap() < 0.5,
        "the audit ran on the candidate: {lossy}"
    );
    assert!(
        lossy["rejection"]["detail"].as_str().unwrap().starts_with(
            "its retention audit declined it: the model's own words keep 0% of the salient items"
        ),
        "{lossy}"
    );
    // The model answered NONE to the correction: two calls, nothing stands, the fold declined.
    assert_eq!(server.requests().len(), 2);
    let (_, retry) = request_text(&server.requests()[1]);
    assert!(retry.contains("a citation does not parse"), "{retry}");
    assert!(retry.contains("its retention audit declined it"), "{retry}");
    assert_eq!(rec["action"], "declined", "{rec}");
    assert!(summary_lines(&f).is_empty());
}

#[test]
fn a_fold_whose_every_candidate_is_rejected_stops_at_fifteen_calls_and_is_not_paid_twice() {
    let server = TestServer::start(vec![openai_ok(
        "=== #1\nThe deploy log of checkout-api was read [m7].",
    )]);
    let (env, f, original) = incident();
    let out = scripted(&env, &server, &["--min-retention", "0"]);
    assert_eq!(out.code, 0, "{out:?}");
    let rec = &json_lines(&out.stdout)[0];
    assert_eq!(server.requests().len(), 15, "at most 15 calls per fold");
    assert_eq!(rec["calls"], 15);
    assert_eq!(rec["action"], "declined", "{rec}");
    assert_eq!(
        rec["reason"],
        "every candidate summary was rejected: 15 candidates in 15 calls, 15 rejected (single-source 15); last: #1: it draws on 1 entry not already summarized (m7); a summary needs at least 2 (cite more entries, or merge it into another summary); verdict remembered for this span and model",
        "{rec}"
    );
    let rounds: Vec<u64> = rejections(rec).iter().map(|r| r.2).collect();
    assert_eq!(rounds, (1..=15).collect::<Vec<u64>>());
    // Every correction request carried the reason.
    for r in &server.requests()[1..] {
        let (_, user) = request_text(r);
        assert!(
            user.contains("- #1: it draws on 1 entry not already summarized (m7)"),
            "{user}"
        );
    }
    // The verdict is remembered: one decline line, and the next run asks nothing.
    let now = read(&f);
    let added = json_lines(std::str::from_utf8(&now[original.len()..]).unwrap());
    assert_eq!(added.len(), 1);
    assert_eq!(added[0]["mf"]["kind"], "decline");
    assert_eq!(added[0]["mf"]["reason"], "rejected");
    let again = scripted(&env, &server, &["--min-retention", "0"]).ok();
    let rec2 = &json_lines(&again.stdout)[0];
    assert_eq!(rec2["action"], "skipped", "{rec2}");
    // The reason names the decline record (the file's last line) and its verdict.
    let skip = SkipReason::DeclinedBefore {
        line: String::from_utf8_lossy(&now).lines().count() as u32,
        at_ms: 0,
        reason: DeclineReason::Rejected,
    };
    assert_eq!(rec2["reason"], Reason::Skip(skip).to_string(), "{rec2}");
    assert_eq!(server.requests().len(), 15, "not paid twice");
    let text = env.mf_ok(&["explain", FILE]).stdout;
    assert!(text.contains("declined (rejected)"), "{text}");
    assert_eq!(env.mf(&["verify", FILE]).code, 0);
}

#[test]
fn a_cited_fold_with_output_writes_a_copy_with_its_nested_summaries() {
    // A summary that nests another of the same reply is written after it, over the staged copy.
    let reply = "=== #2\nThe incident, start to fix [#1, m40, m44].\n\
=== #1\nTwo changes landed at 07:42 and 07:55 UTC: v4.18.0 cut the pool from 64 to 8 and PRICING_TIMEOUT_MS went from 300 to 2000 [m9]. pricing-svc p99 went from 95 ms to 1,620 ms; CR-2291 was approved by Marcus Webb [m14]. The cache hit ratio fell from 94% to 31% [m20].";
    let server = TestServer::start(vec![openai_ok(reply)]);
    let (env, f, original) = incident();
    let out = scripted(&env, &server, &["--min-retention", "0", "-o", "out.jsonl"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(read(&f), original, "the input is untouched");
    let rec = &json_lines(&out.stdout)[0];
    assert_eq!(rec["action"], "folded", "{rec}");
    assert_eq!(rec["linesAppended"], 2);
    let copy = env.path("out.jsonl");
    let lines = summary_lines(&copy);
    assert_eq!(lines.len(), 2);
    let inner_id = lines[0]["id"].as_str().unwrap().to_string();
    assert_eq!(covered_ids(&copy, &lines[0]), ["m9", "m14", "m20"]);
    assert_eq!(
        covered_ids(&copy, &lines[1]),
        ["m40", "m44", inner_id.as_str()]
    );
    assert!(
        lines[1]["content"]
            .as_str()
            .unwrap()
            .contains(&format!("[{inner_id}, m40, m44]")),
        "the candidate's name is replaced by the written id"
    );
    let v = env.mf(&["verify", "out.jsonl"]);
    assert_eq!(v.code, 0, "{v:?}");
    let outer = lines[1]["id"].as_str().unwrap();
    let ex = env.mf_ok(&["explain", "out.jsonl"]).stdout;
    assert!(ex.contains(&format!("nested in {outer}")), "{ex}");
}
