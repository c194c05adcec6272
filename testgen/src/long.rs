//! [`long_session`]: one prompt and many tool calls, in the session format of each agent (Claude
//! Code, Codex, pi) or as chat JSONL — the shape `claude -p`, `codex exec` and `pi -p` write for a
//! single long task. Every tool call carries a path or a command, every result is long (file
//! contents, grep hits, test output), some responses are streamed over several rows (Claude Code)
//! or open with reasoning (Codex), and every fifth step makes two calls in parallel. Deterministic
//! in its arguments: ids, uuids and timestamps come from the seed, not the clock.

use serde_json::{Value, json};

use crate::Rng;

/// The agent formats [`long_session`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    Claude,
    Codex,
    Pi,
    Chat,
}

impl Agent {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "claude" => Agent::Claude,
            "codex" => Agent::Codex,
            "pi" => Agent::Pi,
            "chat" => Agent::Chat,
            _ => return None,
        })
    }
}

/// The prompt every long session opens with (tests look for it verbatim in recall).
pub const LONG_PROMPT: &str = "The nightly build of ledgerline fails in crates/ledger/src/export.rs since the streaming change; find out why, fix it, and make `cargo test -p ledger` pass again. Check every module that touches the export path before you change anything.";

const MODULES: &[&str] = &[
    "export", "db", "stream", "csv", "accounts", "ledger", "rows", "batch", "retry", "config",
    "schema", "audit", "cursor", "writer",
];
const DIRS: &[&str] = &[
    "crates/ledger/src",
    "crates/ledger/tests",
    "crates/api/src",
    "crates/db/src",
];
const IDENTS: &[&str] = &[
    "ExportCursor",
    "RowBatch",
    "flush_chunk",
    "open_stream",
    "LedgerRow",
    "write_header",
    "retry_budget",
    "AccountId",
    "next_page",
    "CsvSink",
];

/// One tool call: what the agent's tool is called, its input, and the output it returned.
struct Call {
    /// The tool's name in Claude Code (`Read`, `Bash`, `Grep`).
    cc_tool: &'static str,
    /// The path or command it works on.
    target: String,
    /// A shell command doing the same (what Codex and pi run).
    command: String,
    output: String,
}

fn path(rng: &mut Rng) -> String {
    format!("{}/{}.rs", rng.pick(DIRS), rng.pick(MODULES))
}

fn source_lines(rng: &mut Rng, from: usize, n: usize) -> String {
    let mut out = String::new();
    for k in from..from + n {
        let id = rng.pick(IDENTS);
        let m = rng.pick(MODULES);
        let line = match rng.below(6) {
            0 => format!("pub fn {m}_{k}(cursor: &mut {id}) -> Result<usize, ExportError> {{"),
            1 => format!(
                "    let batch = {m}::{id}::new(cursor.page_size * {});",
                k % 7 + 1
            ),
            2 => format!("    // {m}: keep the {id} open until the last chunk is flushed"),
            3 => format!(
                "    if written > MAX_CHUNK_BYTES {{ return Err(ExportError::TooLarge({k})); }}"
            ),
            4 => format!("    tracing::debug!(rows = batch.len(), page = {k}, \"{m} page\");"),
            _ => "}".to_string(),
        };
        // `nl -ba` numbering (tab-separated), as `sed -n`/`cat -n` print it.
        out.push_str(&format!("{k:6}\t{line}\n"));
    }
    out
}

fn call(rng: &mut Rng, step: usize) -> Call {
    match rng.below(4) {
        0 | 1 => {
            let p = path(rng);
            let from = rng.range(1, 400) as usize;
            let n = rng.range(40, 90) as usize;
            Call {
                cc_tool: "Read",
                command: format!("sed -n '{from},{}p' {p}", from + n),
                target: p,
                output: source_lines(rng, from, n),
            }
        }
        2 => {
            let id = rng.pick(IDENTS);
            let mut out = String::new();
            for _ in 0..rng.range(15, 40) {
                let p = path(rng);
                out.push_str(&format!(
                    "{p}:{}:    let {} = {id}::open(&pool, account)?;\n",
                    rng.range(10, 900),
                    rng.pick(MODULES)
                ));
            }
            Call {
                cc_tool: "Grep",
                target: id.to_string(),
                command: format!("rg -n '{id}' crates/"),
                output: out,
            }
        }
        _ => {
            let cmd = format!("cargo test -p ledger {} -- --nocapture", rng.pick(MODULES));
            let mut out = format!(
                "   Compiling ledger v0.4.{step} (/work/ledgerline/crates/ledger)\n    Finished `test` profile [unoptimized + debuginfo] target(s) in {}.{}s\n     Running unittests src/lib.rs (target/debug/deps/ledger-{:016x})\n",
                rng.range(2, 40),
                rng.range(0, 9),
                rng.next_u64()
            );
            let tests = rng.range(20, 50);
            for k in 0..tests {
                let ok = rng.below(9) != 0;
                out.push_str(&format!(
                    "test {}::tests::{}_{k} ... {}\n",
                    rng.pick(MODULES),
                    rng.pick(IDENTS).to_lowercase(),
                    if ok { "ok" } else { "FAILED" }
                ));
            }
            out.push_str(&format!(
                "\nthread 'export::tests::streams_{step}' panicked at crates/ledger/src/export.rs:{}:9:\nchunk boundary split a row: expected 4096 bytes, got {}\n\ntest result: FAILED. {} passed; 3 failed; 0 ignored; finished in 0.{}s\n",
                rng.range(100, 600),
                rng.range(4000, 4200),
                tests - 3,
                rng.range(10, 99)
            ));
            Call {
                cc_tool: "Bash",
                target: cmd.clone(),
                command: cmd,
                output: out,
            }
        }
    }
}

const THOUGHTS: &[&str] = &[
    "Let me look at how the export cursor pages through the rows.",
    "The failure is in the chunk boundary; I need to see where chunks are flushed.",
    "Checking the callers before changing the signature.",
    "The retry path re-opens the stream; that could duplicate a row.",
    "Running the tests again to see whether the boundary error moved.",
];

struct Ids {
    rng: Rng,
}

impl Ids {
    fn hex(&mut self, n: usize) -> String {
        let mut s = String::new();
        while s.len() < n {
            s.push_str(&format!("{:016x}", self.rng.next_u64()));
        }
        s.truncate(n);
        s
    }

    fn uuid(&mut self) -> String {
        let h = self.hex(32);
        format!(
            "{}-{}-4{}-a{}-{}",
            &h[..8],
            &h[8..12],
            &h[13..16],
            &h[17..20],
            &h[20..]
        )
    }

    fn alnum(&mut self, n: usize) -> String {
        const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        (0..n).map(|_| A[self.rng.below(A.len())] as char).collect()
    }
}

/// Milliseconds since the epoch as ISO-8601 UTC (`2026-11-30T11:29:48.037Z`).
fn iso(ms: u64) -> String {
    mf::transcript::format::common::iso_timestamp(ms)
}

/// The steps of the task: each one or two calls, sometimes with a thought first.
fn steps(calls: usize, rng: &mut Rng) -> Vec<(Option<&'static str>, Vec<Call>)> {
    let mut out = Vec::new();
    let (mut made, mut step) = (0, 0);
    while made < calls {
        step += 1;
        let k = if step % 5 == 0 { 2 } else { 1 }.min(calls - made);
        let thought = rng.chance(0.4).then(|| *rng.pick(THOUGHTS));
        let cs = (0..k).map(|_| call(rng, step)).collect();
        out.push((thought, cs));
        made += k;
    }
    out
}

const ANSWER: &str = "Fixed: `flush_chunk` in crates/ledger/src/export.rs split a row when a page ended exactly on the 4096-byte chunk boundary; it now carries the partial row into the next chunk. `cargo test -p ledger` passes (all export tests green).";

/// A single-prompt agent session of `calls` tool calls in the given format, as JSONL.
pub fn long_session(agent: Agent, calls: usize, seed: u64) -> String {
    let mut rng = Rng::new(seed);
    let steps = steps(calls, &mut rng);
    let mut ids = Ids {
        rng: Rng::new(seed ^ 0x5eed),
    };
    let mut ms = 1_764_500_000_000u64 + seed % 1000 * 1000;
    let mut tick = || {
        ms += 700;
        ms
    };
    let lines: Vec<Value> = match agent {
        Agent::Claude => claude(&steps, &mut ids, &mut tick),
        Agent::Codex => codex(&steps, &mut ids, &mut tick),
        Agent::Pi => pi(&steps, &mut ids, &mut tick),
        Agent::Chat => chat(&steps, &mut ids),
    };
    let mut out = String::new();
    for l in lines {
        out.push_str(&serde_json::to_string(&l).expect("json"));
        out.push('\n');
    }
    out
}

fn claude(
    steps: &[(Option<&'static str>, Vec<Call>)],
    ids: &mut Ids,
    tick: &mut dyn FnMut() -> u64,
) -> Vec<Value> {
    let session = ids.uuid();
    let cwd = "/work/ledgerline";
    let env = |parent: Option<&str>, uuid: &str, ts: u64| {
        json!({
            "parentUuid": parent,
            "isSidechain": false,
            "userType": "external",
            "cwd": cwd,
            "sessionId": session,
            "version": "2.1.332",
            "gitBranch": "main",
            "uuid": uuid,
            "timestamp": iso(ts),
        })
    };
    let merge = |mut base: Value, more: Value| {
        for (k, v) in more.as_object().unwrap() {
            base[k] = v.clone();
        }
        base
    };
    let mut out = Vec::new();
    let first = ids.uuid();
    out.push(merge(
        env(None, &first, tick()),
        json!({"type": "user", "message": {"role": "user", "content": LONG_PROMPT}, "permissionMode": "bypassPermissions"}),
    ));
    let mut parent = first;
    let usage = json!({"input_tokens": 4, "cache_creation_input_tokens": 1200, "cache_read_input_tokens": 18000, "output_tokens": 120, "service_tier": "standard"});
    let assistant = |id: &str, content: Value, stop: Option<&str>| {
        json!({"type": "assistant", "requestId": format!("req_{id}"), "message": {
            "model": "claude-sonnet-4-5-20250929", "id": id, "type": "message", "role": "assistant",
            "content": content, "stop_reason": stop, "stop_sequence": null, "usage": usage}})
    };
    for (thought, calls) in steps {
        let mid = format!("msg_01{}", ids.alnum(22));
        // One response, streamed as one row per content block.
        let mut blocks = Vec::new();
        if let Some(t) = thought {
            blocks.push(json!({"type": "text", "text": t}));
        }
        let mut uses = Vec::new();
        for c in calls {
            let tid = format!("toolu_01{}", ids.alnum(22));
            let input = match c.cc_tool {
                "Read" => json!({"file_path": format!("{cwd}/{}", c.target)}),
                "Grep" => {
                    json!({"pattern": c.target, "path": "crates/", "output_mode": "content", "-n": true})
                }
                _ => json!({"command": c.command, "description": "Run the ledger tests"}),
            };
            blocks.push(json!({"type": "tool_use", "id": tid, "name": c.cc_tool, "input": input}));
            uses.push(tid);
        }
        let mut assistant_uuid = String::new();
        let n = blocks.len();
        for (k, b) in blocks.into_iter().enumerate() {
            let u = ids.uuid();
            let stop = (k + 1 == n).then_some("tool_use");
            out.push(merge(
                env(Some(&parent), &u, tick()),
                assistant(&mid, json!([b]), stop),
            ));
            parent = u.clone();
            assistant_uuid = u;
        }
        for (c, tid) in calls.iter().zip(&uses) {
            let u = ids.uuid();
            out.push(merge(
                env(Some(&parent), &u, tick()),
                json!({"type": "user",
                    "message": {"role": "user", "content": [{"tool_use_id": tid, "type": "tool_result", "content": c.output, "is_error": false}]},
                    "toolUseResult": {"stdout": c.output, "stderr": "", "interrupted": false},
                    "sourceToolAssistantUUID": assistant_uuid}),
            ));
            parent = u;
        }
    }
    let mid = format!("msg_01{}", ids.alnum(22));
    let u = ids.uuid();
    out.push(merge(
        env(Some(&parent), &u, tick()),
        assistant(
            &mid,
            json!([{"type": "text", "text": ANSWER}]),
            Some("end_turn"),
        ),
    ));
    out
}

fn codex(
    steps: &[(Option<&'static str>, Vec<Call>)],
    ids: &mut Ids,
    tick: &mut dyn FnMut() -> u64,
) -> Vec<Value> {
    let thread = ids.uuid();
    let cwd = "/work/ledgerline";
    let mut out = Vec::new();
    let mut line = |ts: u64, ty: &str, payload: Value| {
        out.push(json!({"timestamp": iso(ts), "type": ty, "payload": payload}));
    };
    let t0 = tick();
    line(
        t0,
        "session_meta",
        json!({"id": thread, "timestamp": iso(t0), "cwd": cwd, "originator": "codex_exec", "cli_version": "0.104.0", "source": "exec", "model_provider": "openai"}),
    );
    line(
        tick(),
        "response_item",
        json!({"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "<permissions instructions>Filesystem sandboxing: workspace-write. Approval policy: never.</permissions instructions>"}]}),
    );
    line(
        tick(),
        "response_item",
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": format!("<environment_context>\n  <cwd>{cwd}</cwd>\n  <shell>bash</shell>\n</environment_context>")}]}),
    );
    line(
        tick(),
        "turn_context",
        json!({"cwd": cwd, "approval_policy": "never", "model": "gpt-5.5", "summary": "auto"}),
    );
    line(
        tick(),
        "response_item",
        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": LONG_PROMPT}]}),
    );
    line(
        tick(),
        "event_msg",
        json!({"type": "user_message", "message": LONG_PROMPT, "images": []}),
    );
    for (thought, calls) in steps {
        if let Some(t) = thought {
            line(
                tick(),
                "response_item",
                json!({"type": "reasoning", "summary": [{"type": "summary_text", "text": format!("**{t}**")}], "content": null, "encrypted_content": format!("gAAAA{}", ids.alnum(40))}),
            );
        }
        let mut cids = Vec::new();
        for c in calls {
            let cid = format!("call_{}", ids.alnum(24));
            let args = json!({"command": ["bash", "-lc", c.command], "workdir": cwd}).to_string();
            line(
                tick(),
                "response_item",
                json!({"type": "function_call", "name": "shell", "arguments": args, "call_id": cid}),
            );
            cids.push(cid);
        }
        for (c, cid) in calls.iter().zip(&cids) {
            let output =
                json!({"output": c.output, "metadata": {"exit_code": 0, "duration_seconds": 0.4}})
                    .to_string();
            line(
                tick(),
                "response_item",
                json!({"type": "function_call_output", "call_id": cid, "output": output}),
            );
        }
        line(
            tick(),
            "event_msg",
            json!({"type": "token_count", "info": null}),
        );
    }
    line(
        tick(),
        "response_item",
        json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": ANSWER}]}),
    );
    line(
        tick(),
        "event_msg",
        json!({"type": "agent_message", "message": ANSWER}),
    );
    line(
        tick(),
        "event_msg",
        json!({"type": "task_complete", "last_agent_message": ANSWER}),
    );
    out
}

fn pi(
    steps: &[(Option<&'static str>, Vec<Call>)],
    ids: &mut Ids,
    tick: &mut dyn FnMut() -> u64,
) -> Vec<Value> {
    let mut out = Vec::new();
    let t0 = tick();
    out.push(json!({"type": "session", "version": 3, "id": ids.uuid(), "timestamp": iso(t0), "cwd": "/work/ledgerline"}));
    let mut parent: Option<String> = None;
    let mut entry = |ids: &mut Ids, ts: u64, mut v: Value, parent: &mut Option<String>| {
        let id = ids.hex(8);
        let mut m = json!({"type": v["type"].clone(), "id": id, "parentId": parent.clone(), "timestamp": iso(ts)});
        for (k, x) in v.as_object_mut().unwrap().iter() {
            if k != "type" {
                m[k] = x.clone();
            }
        }
        *parent = Some(id);
        out.push(m);
    };
    entry(
        ids,
        tick(),
        json!({"type": "model_change", "provider": "anthropic", "modelId": "claude-sonnet-4-5"}),
        &mut parent,
    );
    entry(
        ids,
        tick(),
        json!({"type": "thinking_level_change", "thinkingLevel": "off"}),
        &mut parent,
    );
    let ts = tick();
    entry(
        ids,
        ts,
        json!({"type": "message", "message": {"role": "user", "content": [{"type": "text", "text": LONG_PROMPT}], "timestamp": ts}}),
        &mut parent,
    );
    let usage = json!({"input": 20000, "output": 120, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 20120, "cost": {"input": 0.06, "output": 0.002, "cacheRead": 0, "cacheWrite": 0, "total": 0.062}});
    for (thought, calls) in steps {
        let mut content = Vec::new();
        if let Some(t) = thought {
            content.push(json!({"type": "text", "text": t}));
        }
        let mut cids = Vec::new();
        for c in calls {
            let cid = format!("toolu_01{}", ids.alnum(22));
            content.push(json!({"type": "toolCall", "id": cid, "name": "bash", "arguments": {"command": c.command}}));
            cids.push(cid);
        }
        let ts = tick();
        entry(
            ids,
            ts,
            json!({"type": "message", "message": {"role": "assistant", "content": content, "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage, "stopReason": "toolUse", "timestamp": ts}}),
            &mut parent,
        );
        for (c, cid) in calls.iter().zip(&cids) {
            let ts = tick();
            entry(
                ids,
                ts,
                json!({"type": "message", "message": {"role": "toolResult", "toolCallId": cid, "toolName": "bash", "content": [{"type": "text", "text": c.output}], "isError": false, "timestamp": ts}}),
                &mut parent,
            );
        }
    }
    let ts = tick();
    entry(
        ids,
        ts,
        json!({"type": "message", "message": {"role": "assistant", "content": [{"type": "text", "text": ANSWER}], "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5", "usage": usage, "stopReason": "stop", "timestamp": ts}}),
        &mut parent,
    );
    out
}

fn chat(steps: &[(Option<&'static str>, Vec<Call>)], ids: &mut Ids) -> Vec<Value> {
    let mut out = vec![
        json!({"role": "system", "content": "You are a coding agent working in /work/ledgerline. Use the shell tool."}),
        json!({"role": "user", "content": LONG_PROMPT}),
    ];
    for (thought, calls) in steps {
        let mut tcs = Vec::new();
        for c in calls {
            tcs.push(json!({"id": format!("call_{}", ids.alnum(24)), "type": "function", "function": {"name": "shell", "arguments": json!({"command": c.command}).to_string()}}));
        }
        out.push(json!({"role": "assistant", "content": thought, "tool_calls": tcs}));
        for (c, tc) in calls.iter().zip(&tcs) {
            out.push(json!({"role": "tool", "tool_call_id": tc["id"], "name": "shell", "content": c.output}));
        }
    }
    out.push(json!({"role": "assistant", "content": ANSWER}));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_is_utc_with_milliseconds() {
        assert_eq!(iso(1_764_502_188_037), "2025-11-30T11:29:48.037Z");
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn sessions_are_deterministic_and_hold_every_call() {
        for agent in [Agent::Claude, Agent::Codex, Agent::Pi, Agent::Chat] {
            let a = long_session(agent, 45, 7);
            assert_eq!(a, long_session(agent, 45, 7));
            assert_ne!(a, long_session(agent, 45, 8));
            assert!(a.contains(LONG_PROMPT));
            assert!(a.len() > 100_000, "{agent:?}: {} bytes", a.len());
            for l in a.lines() {
                serde_json::from_str::<Value>(l).unwrap();
            }
        }
    }
}
