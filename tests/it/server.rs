//! A loopback HTTP/1.1 server for provider tests: it records every request and answers from a
//! script (status, headers, body, delay, or a hang) or from a function of the request (to route
//! faults per file, check a request's size, or answer at the length asked), counting requests in
//! flight. It binds 127.0.0.1:0 only and stops when dropped.

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub delay: Duration,
    /// Accept, read the request, never answer (until the server stops).
    pub hang: bool,
}

impl Reply {
    pub fn json(status: u16, body: &str) -> Self {
        Self {
            status,
            headers: vec![],
            body: body.to_string(),
            delay: Duration::ZERO,
            hang: false,
        }
    }
    pub fn header(mut self, k: &str, v: &str) -> Self {
        self.headers.push((k.to_string(), v.to_string()));
        self
    }
    pub fn delay(mut self, d: Duration) -> Self {
        self.delay = d;
        self
    }
    pub fn hang() -> Self {
        Self {
            status: 200,
            headers: vec![],
            body: String::new(),
            delay: Duration::ZERO,
            hang: true,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Lower-cased names.
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub at: Instant,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("request body is JSON")
    }
}

/// Answers a request (and its number, from 0) with a reply.
pub type Responder = Arc<dyn Fn(&Recorded, usize) -> Reply + Send + Sync>;

pub struct TestServer {
    pub addr: SocketAddr,
    requests: Arc<Mutex<Vec<Recorded>>>,
    pub max_in_flight: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl TestServer {
    /// Answer request n with `script[n]`, and the last entry after the script runs out.
    pub fn start(script: Vec<Reply>) -> Self {
        Self::respond(move |_, n| script.get(n).or(script.last()).cloned().expect("a script"))
    }

    /// Answer every request with `f(request, n)`.
    pub fn respond(f: impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static) -> Self {
        let script: Responder = Arc::new(f);
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let in_flight = Arc::new(AtomicUsize::new(0));
        let max_in_flight = Arc::new(AtomicUsize::new(0));
        let counter = Arc::new(AtomicUsize::new(0));
        {
            let (requests, stop, in_flight, max_in_flight) = (
                requests.clone(),
                stop.clone(),
                in_flight.clone(),
                max_in_flight.clone(),
            );
            std::thread::spawn(move || {
                let started = Instant::now();
                while !stop.load(Ordering::SeqCst) && started.elapsed() < Duration::from_secs(120) {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let (requests, stop, in_flight, max_in_flight, counter, script) = (
                                requests.clone(),
                                stop.clone(),
                                in_flight.clone(),
                                max_in_flight.clone(),
                                counter.clone(),
                                script.clone(),
                            );
                            std::thread::spawn(move || {
                                handle(
                                    stream,
                                    &requests,
                                    &stop,
                                    &in_flight,
                                    &max_in_flight,
                                    &counter,
                                    &script,
                                )
                            });
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            });
        }
        Self {
            addr,
            requests,
            max_in_flight,
            stop,
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// Wait until at least `n` requests arrived (or `limit` passes).
    pub fn wait_for(&self, n: usize, limit: Duration) -> bool {
        let start = Instant::now();
        while start.elapsed() < limit {
            if self.requests().len() >= n {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

type Parsed = (String, String, Vec<(String, String)>, String);

fn read_request(stream: &mut TcpStream) -> Option<Parsed> {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let header_end = loop {
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..header_end]).to_string();
    let mut lines = head.split("\r\n");
    let first = lines.next()?.to_string();
    let mut parts = first.split(' ');
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter(|l| !l.is_empty())
        .filter_map(|l| {
            l.split_once(':')
                .map(|(k, v)| (k.trim().to_lowercase(), v.trim().to_string()))
        })
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[header_end..].to_vec();
    while body.len() < len {
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some((
        method,
        path,
        headers,
        String::from_utf8_lossy(&body).to_string(),
    ))
}

fn handle(
    mut stream: TcpStream,
    requests: &Mutex<Vec<Recorded>>,
    stop: &AtomicBool,
    in_flight: &AtomicUsize,
    max_in_flight: &AtomicUsize,
    counter: &AtomicUsize,
    script: &Responder,
) {
    let Some((method, path, headers, body)) = read_request(&mut stream) else {
        return;
    };
    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    max_in_flight.fetch_max(now, Ordering::SeqCst);
    let recorded = Recorded {
        method,
        path,
        headers,
        body,
        at: Instant::now(),
    };
    requests.lock().unwrap().push(recorded.clone());
    let n = counter.fetch_add(1, Ordering::SeqCst);
    let reply = script(&recorded, n);
    if reply.hang {
        let start = Instant::now();
        while !stop.load(Ordering::SeqCst) && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(20));
        }
        in_flight.fetch_sub(1, Ordering::SeqCst);
        return;
    }
    std::thread::sleep(reply.delay);
    let reason = match reply.status {
        200 => "OK",
        307 => "Temporary Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    };
    let mut out = format!(
        "HTTP/1.1 {} {reason}\r\ncontent-length: {}\r\nconnection: close\r\n",
        reply.status,
        reply.body.len()
    );
    if !reply
        .headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
    {
        out.push_str("content-type: application/json\r\n");
    }
    for (k, v) in &reply.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    out.push_str(&reply.body);
    let _ = stream.write_all(out.as_bytes());
    let _ = stream.flush();
    in_flight.fetch_sub(1, Ordering::SeqCst);
}

/// A complete Anthropic Messages reply.
pub fn anthropic_ok(text: &str) -> Reply {
    Reply::json(
        200,
        &serde_json::json!({
            "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-haiku-5-5",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 1800, "output_tokens": 60}
        })
        .to_string(),
    )
    .header("request-id", "req_ok_1")
}

/// A complete Chat Completions reply.
pub fn openai_ok(text: &str) -> Reply {
    Reply::json(
        200,
        &serde_json::json!({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4.1-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": null}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1700, "completion_tokens": 55, "total_tokens": 1755}
        })
        .to_string(),
    )
    .header("x-request-id", "req_oa_1")
}
