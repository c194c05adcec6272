//! Bad input: a clear error with file:line, nothing written, exit 1.

use crate::util::*;

#[test]
fn malformed_line_is_named_and_nothing_is_written() {
    let env = TestEnv::new();
    let mut s = conversation(12);
    let mut lines: Vec<&str> = s.lines().collect();
    lines[6] = "{\"role\": \"user\", \"content\": \"unterminated}";
    s = lines.join("\n") + "\n";
    let f = env.write("bad.jsonl", &s);
    let out = env.mf(&["compact", "bad.jsonl", "--model", "extractive"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("bad.jsonl:7:"), "{out:?}");
    assert!(out.stderr.contains("hint:"), "{out:?}");
    assert!(out.stdout.is_empty());
    assert_eq!(read(&f), s.as_bytes());
    for cmd in ["recall", "explain"] {
        let out = env.mf(&[cmd, "bad.jsonl"]);
        assert_eq!(out.code, 1, "{cmd}: {out:?}");
        assert!(out.stderr.contains("bad.jsonl:7:"), "{out:?}");
    }
}

#[test]
fn torn_last_line_is_refused_and_never_appended_onto() {
    let env = TestEnv::new();
    let s = conversation(12) + "{\"role\":\"user\",\"content\":\"half a li";
    let f = env.write("torn.jsonl", &s);
    let out = env.mf(&["compact", "torn.jsonl", "--model", "extractive"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("torn.jsonl:26:"), "{out:?}");
    assert!(out.stderr.contains("incomplete"), "{out:?}");
    assert_eq!(read(&f), s.as_bytes());
}

#[test]
fn missing_file_and_directory() {
    let env = TestEnv::new();
    let out = env.mf(&["compact", "nope.jsonl", "--model", "extractive"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("nope.jsonl"), "{out:?}");
    assert!(out.stderr.contains("No such file"), "{out:?}");
    std::fs::create_dir(env.path("adir")).unwrap();
    let out = env.mf(&["compact", "adir", "--model", "extractive"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(out.stderr.contains("is a directory"), "{out:?}");
    let out = env.mf(&["recall", "adir"]);
    assert_eq!(out.code, 1, "{out:?}");
}

#[test]
fn not_one_transcript() {
    let env = TestEnv::new();
    let ds = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}\n";
    let f = env.write("ds.jsonl", ds);
    let out = env.mf(&["compact", "ds.jsonl", "--model", "extractive"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("ds.jsonl: this is a fine-tuning dataset: one whole conversation per line"),
        "{out:?}"
    );
    assert_eq!(read(&f), ds.as_bytes());
    // A chat file with a line of another format names it.
    env.write(
        "mixed.jsonl",
        "{\"role\":\"user\",\"content\":\"hi\"}\n{\"messages\":[]}\n",
    );
    let out = env.mf(&["recall", "mixed.jsonl"]);
    assert_eq!(out.code, 1, "{out:?}");
    assert!(
        out.stderr
            .contains("mixed.jsonl:2: this looks like a fine-tuning dataset"),
        "{out:?}"
    );
    env.write("arr.jsonl", "[1,2]\n");
    let out = env.mf(&["recall", "arr.jsonl"]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr
            .contains("arr.jsonl:1: line is JSON but not an object"),
        "{out:?}"
    );
}

#[test]
fn size_not_greater_than_recent_is_refused_with_the_reason() {
    let (env, f, before) = incident();
    let out = env.mf(&[
        "compact",
        "incident-northwind.jsonl",
        "--model",
        "extractive",
        "--size",
        "5",
        "--recent",
        "5",
    ]);
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr
            .contains("`--size 5` must be greater than `--recent 5`"),
        "{out:?}"
    );
    assert!(out.stderr.contains("never has anything to fold"), "{out:?}");
    assert_eq!(read(&f), before);
    let out = env.mf(&["explain", "incident-northwind.jsonl", "--size", "3"]);
    assert_eq!(out.code, 2, "{out:?}");
}

#[test]
fn blank_lines_are_tolerated_and_ids_follow_line_numbers() {
    let env = TestEnv::new();
    let s = "\n{\"role\":\"user\",\"content\":\"first\"}\n\n   \n{\"role\":\"assistant\",\"content\":\"second\"}\n";
    env.write("blank.jsonl", s);
    let out = env.mf(&["explain", "blank.jsonl", "line-5", "--json"]);
    assert_eq!(out.code, 0, "{out:?}");
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["focus"]["line"], 5);
    assert_eq!(v["entries"], 2);
}
