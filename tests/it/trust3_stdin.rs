//! Issue 25, defect 2: standard input has a bound (`MF_STDIN_LIMIT`, default 1 GiB), checked
//! while it is read, with an error that names the bound and the setting; nothing of it is left in
//! the temporary directory; blank lines cost nothing per line.

use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::util::{Output, TestEnv, conversation};

/// Run mf with `input` on stdin and `TMPDIR` pointed at an empty directory of the test's own;
/// the run's output and what that directory holds afterwards.
fn run_stdin(
    env: &TestEnv,
    args: &[&str],
    input: &[u8],
    vars: &[(&str, &str)],
) -> (Output, Vec<String>) {
    let tmp = env.path("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let tmp_s = tmp.to_str().unwrap().to_string();
    let mut all: Vec<(&str, &str)> = vars.to_vec();
    all.push(("TMPDIR", &tmp_s));
    let mut child = env
        .command(args, &all)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run mf");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // mf may stop reading early (that is the point): a closed pipe is not the test's error.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait for mf");
    writer.join().unwrap();
    let left: Vec<String> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    (
        Output {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        },
        left,
    )
}

/// Every command that reads `-`, as a person (or the pi extension) runs it.
const STDIN_COMMANDS: &[&[&str]] = &[
    &["summarize", "--model", "extractive"],
    &["summarize", "-", "--json", "--model", "extractive"],
    &["compact", "-", "--model", "extractive", "--output", "-"],
    &["recall", "-"],
    &["verify", "-"],
    &["search", "-", "hotel"],
    &["explain", "-"],
];

#[test]
fn over_the_bound_every_stdin_command_refuses_and_leaves_nothing() {
    let env = TestEnv::new();
    let input = conversation(10);
    assert!(input.len() > 1000);
    for args in STDIN_COMMANDS {
        let (out, left) = run_stdin(&env, args, input.as_bytes(), &[("MF_STDIN_LIMIT", "1000")]);
        assert_eq!(out.code, 1, "mf {}: {out:?}", args.join(" "));
        // verify reports an unreadable file in its report (stdout); the others on stderr.
        let said = if args[0] == "verify" {
            &out.stdout
        } else {
            &out.stderr
        };
        assert!(
            said.contains("bound of 1000 bytes (MF_STDIN_LIMIT)"),
            "mf {}: the error names the bound and the setting: {out:?}",
            args.join(" ")
        );
        assert!(
            !out.stdout.contains("Hotel"),
            "mf {}: {out:?}",
            args.join(" ")
        );
        assert!(
            left.is_empty(),
            "mf {} left {left:?} in TMPDIR",
            args.join(" ")
        );
    }
}

#[test]
fn under_and_at_the_bound_stdin_is_read() {
    let env = TestEnv::new();
    let input = conversation(10);
    let exact = input.len().to_string();
    let under = (input.len() - 1).to_string();
    for args in STDIN_COMMANDS {
        if args[0] == "verify" {
            continue; // a conversation mf never compacted: verify has nothing to say, exit 0 too
        }
        let (out, left) = run_stdin(&env, args, input.as_bytes(), &[("MF_STDIN_LIMIT", &exact)]);
        assert_eq!(out.code, 0, "mf {}: {out:?}", args.join(" "));
        assert!(
            left.is_empty(),
            "mf {} left {left:?} in TMPDIR",
            args.join(" ")
        );
    }
    let (out, _) = run_stdin(
        &env,
        &["recall", "-"],
        input.as_bytes(),
        &[("MF_STDIN_LIMIT", &under)],
    );
    assert_eq!(out.code, 1, "{out:?}");
    // The default bound (1 GiB) reads it too.
    let (out, _) = run_stdin(&env, &["recall", "-"], input.as_bytes(), &[]);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("Hotel Aurora 10"), "{out:?}");
}

#[test]
fn the_pi_extension_gets_a_readable_error() {
    // integrations/pi runs `mf summarize - --json` and shows mf's `error:` line (and its hint).
    let env = TestEnv::new();
    let input = conversation(10);
    let (out, _) = run_stdin(
        &env,
        &["summarize", "-", "--json", "--model", "extractive"],
        input.as_bytes(),
        &[("MF_STDIN_LIMIT", "1KiB")],
    );
    assert_eq!(out.code, 1, "{out:?}");
    let error = out
        .stderr
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_default();
    assert!(
        error.contains("standard input is longer than mf's bound of 1 KiB (MF_STDIN_LIMIT)"),
        "{out:?}"
    );
    let hint = out
        .stderr
        .lines()
        .find(|l| l.starts_with("hint: "))
        .unwrap_or_default();
    assert!(hint.contains("MF_STDIN_LIMIT"), "{out:?}");
}

#[test]
fn endless_input_stops_promptly() {
    let env = TestEnv::new();
    let tmp = env.path("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut child = env
        .command(
            &["summarize", "--model", "extractive"],
            &[
                ("MF_STDIN_LIMIT", "1MiB"),
                ("TMPDIR", tmp.to_str().unwrap()),
            ],
        )
        .stdin(std::fs::File::open("/dev/zero").unwrap())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mf was still reading /dev/zero after 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("bound of 1 MiB"));
    assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
}

#[test]
fn a_bound_that_is_not_a_size_is_a_usage_error_only_where_stdin_is_read() {
    let env = TestEnv::new();
    let input = conversation(2);
    let (out, _) = run_stdin(
        &env,
        &["recall", "-"],
        input.as_bytes(),
        &[("MF_STDIN_LIMIT", "lots")],
    );
    assert_eq!(out.code, 2, "{out:?}");
    assert!(
        out.stderr.contains("MF_STDIN_LIMIT=lots is not a size"),
        "{out:?}"
    );
    let file = env.write("c.jsonl", &input);
    let out = env.mf_env(
        &["recall", file.to_str().unwrap()],
        &[("MF_STDIN_LIMIT", "lots")],
    );
    assert_eq!(out.code, 0, "{out:?}");
}

/// The peak resident memory (VmHWM, KiB) of a running process, polled until it ends.
fn peak_rss_kib(mut child: std::process::Child) -> (u64, std::process::ExitStatus) {
    let status_path = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        if let Ok(s) = std::fs::read_to_string(&status_path)
            && let Some(kib) = s
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            peak = peak.max(kib);
        }
        if let Some(st) = child.try_wait().unwrap() {
            return (peak, st);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn blank_lines_cost_nothing_per_line() {
    // 20 MB of newlines between two messages: each blank line was a parsed slot (~200 bytes),
    // 900 MB for a 4 MiB block of them; now they are counted.
    let env = TestEnv::new();
    let mut bytes = crate::util::line("u1", "user", "hello there").into_bytes();
    bytes.push(b'\n');
    bytes.extend(std::iter::repeat_n(b'\n', 20 << 20));
    bytes.extend(crate::util::line("a1", "assistant", "general kenobi").into_bytes());
    bytes.push(b'\n');
    let file = env.path("blank.jsonl");
    std::fs::write(&file, &bytes).unwrap();
    let child = env
        .command(
            &["search", file.to_str().unwrap(), "kenobi", "--no-cache"],
            &[],
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (peak, status) = peak_rss_kib(child);
    assert!(status.success(), "{status}");
    assert!(peak > 0, "no VmHWM read");
    assert!(
        peak < 150 * 1024,
        "peak RSS {peak} KiB for 20 MB of blank lines"
    );
}

/// A signal while standard input is copied stops the copy at once (`timeout`, Ctrl-C): the
/// commands that stop in order after a signal (summarize, compact) used to go on reading up to
/// the bound, or to the end of the disk before it. The input is a pipe that never ends, fed
/// slowly (so the bound is never what stops it).
#[test]
fn a_signal_stops_the_copy_of_standard_input() {
    let env = TestEnv::new();
    let tmp = env.path("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    for args in [
        &["summarize", "--model", "extractive"][..],
        &["compact", "-", "--model", "extractive", "--output", "-"][..],
    ] {
        let mut child = env
            .command(args, &[("TMPDIR", tmp.to_str().unwrap())])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let feeder = std::thread::spawn(move || {
            let chunk = vec![b' '; 16 << 10];
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(30) {
                if stdin.write_all(&chunk).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        std::thread::sleep(Duration::from_millis(500));
        rustix::process::kill_process(
            rustix::process::Pid::from_child(&child),
            rustix::process::Signal::TERM,
        )
        .unwrap();
        let start = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if start.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{args:?}: mf was still copying its input 10 s after SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let out = child.wait_with_output().unwrap();
        feeder.join().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(status.code(), Some(143), "{args:?}: {stderr}");
        assert!(
            stderr.contains("nothing of it was kept") || stderr.contains("nothing was written"),
            "{args:?}: {stderr}"
        );
        assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
    }
}

/// A regular file on standard input over the bound is refused by its size, before a byte of it
/// is copied.
#[test]
fn a_file_on_stdin_over_the_bound_is_refused_by_its_size() {
    let env = TestEnv::new();
    let file = env.write("big.jsonl", &conversation(40));
    // No temporary directory at all: the refusal comes before any copy is begun.
    let tmp = env.path("no-such-tmp");
    let out = env
        .command(
            &["recall", "-"],
            &[
                ("MF_STDIN_LIMIT", "1000"),
                ("TMPDIR", tmp.to_str().unwrap()),
            ],
        )
        .stdin(std::fs::File::open(&file).unwrap())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("bound of 1000 bytes"), "{stderr}");
    assert!(!tmp.exists());
}

/// `--files-from` reads its list under the same bound, from a pipe or a file: an endless list
/// (`/dev/zero`) stops at the bound instead of growing in memory until the machine runs out.
#[test]
fn a_file_list_is_read_under_the_bound_too() {
    let env = TestEnv::new();
    for (args, stdin) in [
        (
            &["compact", "--files-from", "-", "--model", "extractive"][..],
            true,
        ),
        (
            &[
                "compact",
                "--files-from",
                "/dev/zero",
                "--model",
                "extractive",
            ][..],
            false,
        ),
    ] {
        let mut cmd = env.command(args, &[("MF_STDIN_LIMIT", "1MiB")]);
        if stdin {
            cmd.stdin(std::fs::File::open("/dev/zero").unwrap());
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{args:?}: still reading the list after 20 s");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("bound of 1 MiB (MF_STDIN_LIMIT)"),
            "{stderr}"
        );
    }
}
