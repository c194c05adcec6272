//! Trust, round 2 (issue 16): checkpoints mf owns and that cannot serve a wrong prefix, a bounded
//! reply, credentials in URLs, claims re-vetted on read, idempotent defusing, strict record
//! lines, and a `verify` that tells the truth. Each test fails on 4662681.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::util::*;

fn vars<'a>(list: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    list.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

/// A generated chat transcript of at least `bytes` bytes.
fn bulk(bytes: u64, seed: u64) -> String {
    let mut out = Vec::new();
    testgen::bulk(
        &mut out,
        testgen::BulkOptions {
            min_lines: 0,
            min_bytes: bytes,
            seed,
        },
    )
    .unwrap();
    String::from_utf8(out).unwrap()
}

// 1. Checkpoints mf owns.

#[test]
fn pruning_never_deletes_another_programs_ckpt_files() {
    let env = TestEnv::new();
    let shared = env.path("shared");
    std::fs::create_dir(&shared).unwrap();
    // 300 checkpoints of another program (PyTorch Lightning's extension), some named the way
    // mf names its own, some owned by another user when the tests run as root.
    let root = rustix::process::geteuid().is_root();
    let mut theirs: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for k in 0..300u32 {
        let name = if k % 2 == 0 {
            format!("epoch={k}-step={}.ckpt", k * 100)
        } else {
            format!("{:016x}.ckpt", u64::from(k) * 0x9e37_79b9)
        };
        let p = shared.join(name);
        let bytes = format!("PK\u{3}\u{4} lightning weights {k}").into_bytes();
        std::fs::write(&p, &bytes).unwrap();
        if root && k % 3 == 0 {
            std::os::unix::fs::chown(&p, Some(4242), Some(4242)).unwrap();
        }
        theirs.push((p, bytes));
    }
    env.write("big.jsonl", &bulk(300_000, 3));
    let list = [
        ("MF_CACHE_DIR", shared.display().to_string()),
        ("MF_CACHE_MIN_BYTES", "0".to_string()),
    ];
    for _ in 0..2 {
        let out = env.mf_env(&["recall", "big.jsonl"], &vars(&list));
        assert_eq!(out.code, 0, "{out:?}");
    }
    let gone: Vec<String> = theirs
        .iter()
        .filter(|(p, bytes)| std::fs::read(p).ok().as_ref() != Some(bytes))
        .map(|(p, _)| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(
        gone.is_empty(),
        "{} files of another program were deleted or changed: {gone:?}",
        gone.len()
    );
    if root {
        let foreign = theirs
            .iter()
            .filter(|(p, _)| std::fs::metadata(p).unwrap().uid() == 4242)
            .count();
        assert_eq!(foreign, 100);
    }
}

// 2. Checkpoints that cannot serve a wrong prefix.

/// Shorten one line by a byte and lengthen a later one by a byte: the same size, every byte the
/// old fingerprint sampled (both 64 KiB ends, sixteen 4 KiB windows) unchanged, mtime restored.
fn same_size_edit_outside_the_samples(path: &Path) {
    let mut bytes = read(path);
    let n = bytes.len();
    let meta = std::fs::metadata(path).unwrap();
    // The gap after the third window and before the fourth.
    let w = |k: usize| n / 17 * k;
    let (lo, hi) = (w(3) + 4096 + 2000, w(4) - 2000);
    assert!(lo + 10_000 < hi, "a file too small for the test: {n} bytes");
    let find_text_after = |bytes: &[u8], from: usize| -> usize {
        let pat = b"\"content\":\"";
        from + bytes[from..]
            .windows(pat.len() + 1)
            .position(|x| &x[..pat.len()] == pat && x[pat.len()].is_ascii_alphanumeric())
            .unwrap()
            + pat.len()
    };
    let a = find_text_after(&bytes, lo);
    let b = find_text_after(&bytes, a + 5000);
    assert!(b < hi, "no second line in the gap");
    // The later edit first, so the earlier position stays right.
    let c = bytes[b];
    bytes.insert(b, c);
    bytes.remove(a);
    assert_eq!(bytes.len(), n);
    std::fs::write(path, &bytes).unwrap();
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_times(
        std::fs::FileTimes::new()
            .set_modified(meta.modified().unwrap())
            .set_accessed(meta.accessed().unwrap()),
    )
    .unwrap();
}

#[test]
fn a_same_size_edit_anywhere_in_the_prefix_is_never_served_from_a_checkpoint() {
    let env = TestEnv::new();
    let path = env.write("big.jsonl", &bulk(2_500_000, 5));
    let list = [
        ("MF_CACHE_DIR", env.path("cache").display().to_string()),
        ("MF_CACHE_MIN_BYTES", "0".to_string()),
    ];
    let v = vars(&list);
    // The first read saves the checkpoint.
    let out = env.mf_env(&["recall", "big.jsonl"], &v);
    assert_eq!(out.code, 0, "{out:?}");
    same_size_edit_outside_the_samples(&path);
    for format in ["chat", "native"] {
        let cached = env.mf_env(&["recall", "big.jsonl", "--format", format], &v);
        let full = env.mf_env(
            &["--no-cache", "recall", "big.jsonl", "--format", format],
            &v,
        );
        assert_eq!(full.code, 0, "{full:?}");
        assert_eq!(cached.code, 0, "{cached:?}");
        assert!(
            cached.stdout == full.stdout,
            "--format {format}: a cached recall differs from a full read ({} vs {} bytes; {} null system lines)",
            cached.stdout.len(),
            full.stdout.len(),
            cached
                .stdout
                .matches(r#"{"role":"system","content":null}"#)
                .count()
        );
        for l in cached.stdout.lines() {
            serde_json::from_str::<serde_json::Value>(l)
                .unwrap_or_else(|e| panic!("--format {format}: not JSON ({e}): {l:.200}"));
        }
    }
    // And compact works through it (no false "changed while mf was working").
    let out = env.mf_env(
        &[
            "compact",
            "big.jsonl",
            "--model",
            "extractive",
            "--min-retention",
            "0",
        ],
        &v,
    );
    assert_eq!(out.code, 0, "{out:?}");
    assert!(!out.stderr.contains("changed while"), "{out:?}");
}

// 4. Credentials in URLs.

#[test]
fn credentials_in_the_base_url_are_never_shown_or_written() {
    use crate::server::{Reply, TestServer};
    let server = TestServer::start(vec![Reply::json(
        500,
        r#"{"error":{"type":"server_error","message":"boom"}}"#,
    )]);
    let env = TestEnv::new();
    let path = env.write("c.jsonl", &conversation(12));
    let host = server.url().trim_start_matches("http://").to_string();
    let secrets = ["s3cr3tpw", "tok3nvalue99", "apik3yvalue", "t0kenvalue"];
    let urls = [
        format!("http://user:s3cr3tpw@{host}/v1?key=tok3nvalue99"),
        format!("http://{host}/v1?api_key=apik3yvalue&token=t0kenvalue"),
    ];
    for url in &urls {
        for json in [false, true] {
            let mut args = vec![
                "-v",
                "compact",
                "c.jsonl",
                "--model",
                "openai-compatible:loop",
                "--base-url",
                url,
                "--retries",
                "0",
                "--recent",
                "2",
            ];
            if json {
                args.push("--json");
            }
            let out = env.mf(&args);
            let file = String::from_utf8(read(&path)).unwrap();
            for s in secrets {
                assert!(!out.stderr.contains(s), "stderr shows {s}:\n{}", out.stderr);
                assert!(!out.stdout.contains(s), "stdout shows {s}:\n{}", out.stdout);
                assert!(!file.contains(s), "the transcript holds {s}");
            }
            assert!(
                out.stderr.contains("[REDACTED]") || out.stdout.contains("[REDACTED]"),
                "the URL is not shown at all, so the test proves nothing: {out:?}"
            );
        }
    }
    assert!(!server.requests().is_empty());
    // A URL mf refuses is not echoed with its password either.
    let out = env.mf(&[
        "compact",
        "c.jsonl",
        "--model",
        "openai-compatible:loop",
        "--base-url",
        "ftp://user:s3cr3tpw@127.0.0.1/v1",
    ]);
    assert_ne!(out.code, 0);
    assert!(!out.stderr.contains("s3cr3tpw"), "{}", out.stderr);
}
