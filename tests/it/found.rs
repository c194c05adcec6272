//! Bugs the trust suites found beyond the fifteen defects of issue 6, one test each (the fix
//! commit names the bug).

use crate::trust::*;
use crate::util::*;
use std::time::Duration;

/// An agent that calls a tool before the first user message gets its result after it.
fn preamble_call() -> String {
    let mut s = String::new();
    for v in [
        serde_json::json!({"role": "system", "content": "You are an ops agent."}),
        serde_json::json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_boot", "type": "function", "function": {"name": "boot", "arguments": "{}"}}]}),
        serde_json::json!({"role": "user", "content": "Hi, what did the boot check find?"}),
        serde_json::json!({"role": "tool", "tool_call_id": "call_boot", "name": "boot", "content": "boot check: /var 91% full, 3 services degraded"}),
        serde_json::json!({"role": "assistant", "content": "The boot check found /var at 91% and 3 degraded services."}),
    ] {
        s += &v.to_string();
        s.push('\n');
    }
    for n in 2..25 {
        s += &serde_json::json!({"role": "user", "content": format!("Question {n}: status of service S-{n}?")}).to_string();
        s.push('\n');
        s += &serde_json::json!({"role": "assistant", "content": format!("Service S-{n} is healthy at {}% load.", n * 3)}).to_string();
        s.push('\n');
    }
    s
}

#[test]
fn a_tool_result_whose_call_is_in_the_preamble_never_makes_mf_refuse_its_own_summary() {
    let env = TestEnv::without_audit();
    let f = env.write("boot.jsonl", &preamble_call());
    let out = env.mf(&["compact", "boot.jsonl", "--model", "extractive", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(json_lines(&out.stdout)[0]["action"], "folded", "{out:?}");
    assert_verify_clean(&env, &f);
    let m = assert_recall_is_models(&env, &f);
    assert_eq!(m.top_level().len(), 1, "the summary stands");
    // The result stays verbatim with its call (both before the summary in recall order).
    let shown = recall(&env, "boot.jsonl");
    assert!(shown.iter().any(|m| m["tool_call_id"] == "call_boot"));
    // A second run has nothing new to fold and writes nothing.
    let before = read(&f);
    let out = env.mf(&["compact", "boot.jsonl", "--model", "extractive", "--json"]);
    assert_eq!(json_lines(&out.stdout)[0]["action"], "skipped", "{out:?}");
    assert_eq!(read(&f), before);
}

#[test]
fn a_last_line_of_blanks_without_a_newline_is_ended_before_mf_appends() {
    // A hand-edited file that ends in spaces: in place, and with -o.
    let env = TestEnv::without_audit();
    let text = conversation(24) + "   ";
    let f = env.write("ws.jsonl", &text);
    let (code, report) = verify(&env, &f);
    assert_eq!(code, 0, "{report:#}");
    assert_eq!(report["lines"], 50, "{report:#}");
    assert_eq!(
        report["notes"][0]["line"], 50,
        "the note names the last line: {report:#}"
    );
    let out = env.mf_env(
        &["compact", "ws.jsonl", "--model", "extractive", "--json"],
        &[("MF_TAIL_WAIT_MS", "300")],
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(json_lines(&out.stdout)[0]["action"], "folded", "{out:?}");
    assert!(
        read(&f).starts_with(format!("{text}\n").as_bytes()),
        "the blank line is ended first"
    );
    assert_verify_clean(&env, &f);
    assert_eq!(assert_recall_is_models(&env, &f).top_level().len(), 1);

    let g = env.write("ws2.jsonl", &text);
    let out = env.mf(&[
        "compact",
        "ws2.jsonl",
        "--model",
        "extractive",
        "-o",
        "out.jsonl",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let o = env.path("out.jsonl");
    assert_verify_clean(&env, &o);
    assert_eq!(
        assert_recall_is_models(&env, &o).top_level().len(),
        1,
        "the copy's summary stands"
    );
    assert_eq!(read(&g), text.as_bytes());
}

#[test]
fn a_fold_whose_verbatim_tail_starts_with_a_summary_records_a_turn_as_its_tail() {
    // A --size fold leaves the older turns uncovered; the next fold ends right where that
    // summary begins.
    let env = TestEnv::without_audit();
    let f = env.write("c.jsonl", &conversation(40));
    let out = env.mf(&[
        "compact",
        "c.jsonl",
        "--model",
        "extractive",
        "--size",
        "20",
        "--recent",
        "4",
        "--json",
    ]);
    assert_eq!(json_lines(&out.stdout)[0]["action"], "folded", "{out:?}");
    let out = env.mf(&[
        "compact",
        "c.jsonl",
        "--model",
        "extractive",
        "--recent",
        "5",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(json_lines(&out.stdout)[0]["action"], "folded", "{out:?}");
    assert_verify_clean(&env, &f);
    let m = assert_recall_is_models(&env, &f);
    assert_eq!(m.top_level().len(), 2, "both summaries stand");
}

#[test]
fn ctrl_c_while_restore_waits_for_the_lock_writes_nothing() {
    use std::io::BufRead;
    let env = TestEnv::without_audit();
    let f = env.write("c.jsonl", &conversation(30));
    assert_eq!(
        env.mf(&["compact", "c.jsonl", "--model", "extractive"])
            .code,
        0
    );
    let id = summary_lines(&f)[0]["id"].as_str().unwrap().to_string();
    let before = read(&f);
    let holder = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .open(&f)
        .unwrap();
    holder.lock().unwrap();
    let mut child = spawn(&env, &["expand", "c.jsonl", &id, "--restore"], &[]);
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let said = lines.next().expect("mf said it is waiting").unwrap();
    assert!(said.contains("waiting for the lock on"), "{said}");
    assert!(signal(child.id(), "INT"));
    // Ctrl-C ends the wait at once; the retraction the user gave up on is never written.
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() && start.elapsed() < std::time::Duration::from_secs(3)
    {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    drop(holder);
    let status = child.wait().unwrap();
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert_eq!(status.code(), Some(130), "{rest:?}");
    assert!(
        start.elapsed() < std::time::Duration::from_secs(3),
        "Ctrl-C ended the wait"
    );
    assert_eq!(read(&f), before, "no retraction written");
    assert!(rest.iter().any(|l| l.contains("interrupted")), "{rest:?}");
}

#[test]
fn a_fold_over_a_summary_with_protected_user_messages_records_a_tail_after_all_it_covers() {
    // --protect user leaves the user messages verbatim between what the summary covers; a later
    // fold without it takes that summary in and ends at one of those user messages.
    let env = TestEnv::without_audit();
    let f = env.write("c.jsonl", &conversation(20));
    let out = env.mf(&[
        "compact",
        "c.jsonl",
        "--model",
        "extractive",
        "--protect",
        "user",
        "--recent",
        "4",
        "--json",
    ]);
    assert_eq!(json_lines(&out.stdout)[0]["action"], "folded", "{out:?}");
    assert_verify_clean(&env, &f);
    let out = env.mf(&[
        "compact",
        "c.jsonl",
        "--model",
        "extractive",
        "--recent",
        "6",
        "--trigger",
        "4",
        "--json",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(json_lines(&out.stdout)[0]["action"], "folded", "{out:?}");
    assert_verify_clean(&env, &f);
    let m = assert_recall_is_models(&env, &f);
    assert_eq!(
        m.top_level().len(),
        1,
        "the new summary stands over the first"
    );
}

#[test]
fn a_summary_over_a_retracted_summary_is_not_honoured() {
    // mf never writes one (a retracted summary is not in view); a line that claims it, with a
    // correct digest and the label such a nesting would have, is flagged and hides nothing.
    let env = TestEnv::without_audit();
    let f = env.write("c.jsonl", &conversation(30));
    assert_eq!(
        env.mf(&["compact", "c.jsonl", "--model", "extractive"])
            .code,
        0
    );
    let s1 = summary_lines(&f)[0].clone();
    let id = s1["id"].as_str().unwrap().to_string();
    assert_eq!(env.mf(&["expand", "c.jsonl", &id, "--restore"]).code, 0);
    let before = recall(&env, "c.jsonl");
    let text = read(&f);
    let s1_line = String::from_utf8(text.clone())
        .unwrap()
        .lines()
        .position(|l| l.contains(&format!("\"id\":\"{id}\"")))
        .unwrap() as u32
        + 1;
    let cov = &s1["mf"]["coverage"];
    let forged = crate::model::forged_summary(
        &text,
        &[s1_line],
        &crate::model::Forge {
            id: "msg-summary-over-retracted",
            label_turns: Some((
                cov["fromTurn"].as_u64().unwrap(),
                cov["toTurn"].as_u64().unwrap(),
                cov["entryCount"].as_u64().unwrap() as usize,
            )),
            ..crate::model::Forge::default()
        },
    );
    append(&f, (forged + "\n").as_bytes());
    let m = assert_recall_is_models(&env, &f);
    assert!(m.top_level().is_empty(), "nothing stands");
    let after = recall(&env, "c.jsonl");
    assert_eq!(&after[..before.len()], &before[..], "nothing hidden");
    let (code, report) = verify(&env, &f);
    assert_eq!(code, 1);
    assert!(
        report["problems"].to_string().contains("retracted"),
        "{report:#}"
    );
}

#[test]
fn a_torn_mf_line_cut_right_after_an_object_inside_it_is_not_read_as_a_glued_line() {
    // mf's line carries nested objects (its audit's items); a crash can cut it right after one.
    // That object parses, but it is part of mf's line, not a line another writer glued on.
    let env = TestEnv::without_audit();
    let f = env.write("c.jsonl", &conversation(30));
    let original = read(&f);
    let out = env.mf(&["compact", "c.jsonl", "--model", "extractive"]);
    assert_eq!(out.code, 0, "{out:?}");
    let full = read(&f);
    let added = &full[original.len()..];
    let ends: Vec<usize> = added
        .iter()
        .enumerate()
        .filter(|&(k, &b)| b == b'}' && k + 2 < added.len())
        .map(|(k, _)| k + 1)
        .collect();
    assert!(ends.len() > 5, "the summary line has nested objects");
    for &cut in ends.iter().step_by(ends.len() / 5) {
        let mut torn = original.clone();
        torn.extend_from_slice(&added[..cut]);
        std::fs::write(&f, &torn).unwrap();
        // The fragment closed (as the next mf run does), then an agent's next line.
        append(&f, b"\n");
        append(&f, line("w1", "user", "after the crash").as_bytes());
        append(&f, b"\n");
        let shown = recall(&env, "c.jsonl");
        assert_eq!(
            shown.len(),
            62,
            "every original and the agent's line, cut at {cut}: {shown:?}"
        );
        assert_eq!(shown.last().unwrap()["content"], "after the crash");
        let (_, report) = verify(&env, &f);
        assert_eq!(problem_kinds(&report), ["torn-mf-line"], "{report:#}");
    }
}

#[test]
fn a_line_half_written_when_compact_reads_is_waited_for_then_folded_after() {
    // The agent is between the two write() calls of its line when mf starts: mf waits for the
    // line to end (MF_TAIL_WAIT_MS) instead of refusing, then folds and appends after it.
    let env = TestEnv::without_audit();
    let f = env.write("c.jsonl", &conversation(30));
    let original = read(&f);
    let agent = line("w7", "user", "a line an agent was writing when mf started") + "\n";
    append(&f, &agent.as_bytes()[..30]);
    let child = spawn(
        &env,
        &["compact", "c.jsonl", "--model", "extractive", "--json"],
        &[("MF_TAIL_WAIT_MS", "5000".into())],
    );
    std::thread::sleep(Duration::from_millis(400));
    append(&f, &agent.as_bytes()[30..]);
    let out = finish(child, Duration::from_secs(30));
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(json_lines(&out.stdout)[0]["action"], "folded", "{out:?}");
    let now = read(&f);
    let mut expected = original;
    expected.extend_from_slice(agent.as_bytes());
    assert_eq!(
        &now[..expected.len()],
        &expected[..],
        "the agent's line is whole"
    );
    assert_verify_clean(&env, &f);
    // Left half-written, it is refused once the wait is over, and nothing is written.
    let g = env.write("d.jsonl", &conversation(30));
    append(&g, &agent.as_bytes()[..30]);
    let before = read(&g);
    let out = env.mf_env(
        &["compact", "d.jsonl", "--model", "extractive"],
        &[("MF_TAIL_WAIT_MS", "200")],
    );
    assert_eq!(out.code, 1, "{out:?}");
    assert_eq!(read(&g), before);
}

#[test]
fn a_line_interrupted_by_mfs_append_can_be_folded_without_its_summary() {
    // Another writer began a line, mf's append landed inside it, the writer finished it. The
    // rejoined line and mf's line began on the same physical line; a later fold that takes the
    // rejoined line but not mf's (here retracted) must write a summary that stands.
    let env = TestEnv::without_audit();
    let base = conversation(30);
    env.write("base.jsonl", &base);
    let out = env.mf(&[
        "compact",
        "base.jsonl",
        "--model",
        "extractive",
        "-o",
        "with.jsonl",
    ]);
    assert_eq!(out.code, 0, "{out:?}");
    let with = String::from_utf8(read(&env.path("with.jsonl"))).unwrap();
    let summary_line = &with[base.len()..];
    let id = json_lines(summary_line)[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let w = line("w1", "user", "a line an agent wrote in two parts") + "\n";
    let mut text = base.clone() + &w[..20] + summary_line + &w[20..];
    for n in 31..45 {
        text += &line(
            &format!("u{n}"),
            "user",
            &format!("Question {n}: and city {n}?"),
        );
        text.push('\n');
        text += &line(
            &format!("a{n}"),
            "assistant",
            &format!("City {n} costs ${}.", 100 + n),
        );
        text.push('\n');
    }
    let f = env.write("c.jsonl", &text);
    let out = env.mf(&["expand", "c.jsonl", &id, "--restore"]);
    assert_eq!(out.code, 0, "{out:?}");
    let out = env.mf(&["compact", "c.jsonl", "--model", "extractive", "--json"]);
    assert_eq!(json_lines(&out.stdout)[0]["action"], "folded", "{out:?}");
    assert_verify_clean(&env, &f);
    let (_, report) = verify(&env, &f);
    assert_eq!(report["standing"], 1, "the new summary stands: {report:#}");
    let shown = recall(&env, "c.jsonl");
    assert_eq!(
        shown.len(),
        8,
        "the summary, the system prompt, the tail: {shown:?}"
    );
    assert!(
        !shown
            .iter()
            .any(|s| s["content"] == "a line an agent wrote in two parts"),
        "the rejoined line is folded: {shown:?}"
    );
}

#[test]
fn output_to_a_device_or_fifo_writes_into_it_and_never_replaces_it() {
    // `-o /dev/null --force` as root renamed a regular file over /dev/null. A device or FIFO is
    // written into, as a shell redirection would (no --force needed), and stays what it was.
    use std::os::unix::fs::FileTypeExt;
    let env = TestEnv::new();
    let f = env.write("c.jsonl", &conversation(30));
    let original = read(&f);
    // A FIFO, read by another thread.
    let fifo = env.path("pipe");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(&fifo).unwrap())
    };
    let out = env.mf(&["compact", "c.jsonl", "--model", "extractive", "-o", "pipe"]);
    assert_eq!(out.code, 0, "{out:?}");
    let through = reader.join().unwrap();
    assert!(
        through.starts_with(&original),
        "the copy went through the pipe"
    );
    assert!(through.len() > original.len(), "with mf's lines");
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    // A character device like /dev/null (made here, as root; `mknod` needs it), with --force.
    let dev = env.path("null");
    let root = is_root();
    if root {
        assert!(
            std::process::Command::new("mknod")
                .args(["-m", "666", dev.to_str().unwrap(), "c", "1", "3"])
                .status()
                .unwrap()
                .success()
        );
        let out = env.mf(&[
            "compact",
            "c.jsonl",
            "--model",
            "extractive",
            "-o",
            "null",
            "--force",
        ]);
        assert_eq!(out.code, 0, "{out:?}");
        assert!(
            std::fs::metadata(&dev)
                .unwrap()
                .file_type()
                .is_char_device(),
            "the device is still a device"
        );
    }
    assert_eq!(read(&f), original);
}
