//! The HTTP client's retry loop with an injected sleeper: exact waits, attempt counts.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use mf::http::{FailureKind, HttpClient, HttpSettings, Request, Sleeper};

use crate::server::{Reply, TestServer};

#[derive(Default)]
struct Recording(Mutex<Vec<Duration>>);

impl Sleeper for Recording {
    fn sleep(
        &self,
        d: Duration,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
        self.0.lock().unwrap().push(d);
        Box::pin(async {})
    }
}

fn client(retries: u32, sleeper: Arc<Recording>, jitter: fn() -> f64) -> HttpClient {
    let settings = HttpSettings {
        retries,
        timeout: Duration::from_secs(5),
        ..HttpSettings::default()
    };
    HttpClient::new(settings)
        .unwrap()
        .with_sleeper(sleeper, jitter)
}

fn request(server: &TestServer) -> Request {
    Request::json(
        format!("{}/v1/messages", server.url()),
        b"{}".to_vec(),
        "test".into(),
    )
}

fn block<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(f)
}

#[test]
fn backoff_without_a_header_doubles_up_to_the_retry_limit() {
    let err = r#"{"error":{"type":"server_error","message":"busy"}}"#;
    let server = TestServer::start(vec![
        Reply::json(503, err),
        Reply::json(503, err),
        Reply::json(503, err),
        Reply::json(200, "{}"),
    ]);
    let sleeper = Arc::new(Recording::default());
    let resp = block(client(3, sleeper.clone(), || 0.0).send(&request(&server))).unwrap();
    assert_eq!((resp.status, resp.attempts), (200, 4));
    assert_eq!(
        *sleeper.0.lock().unwrap(),
        [
            Duration::from_millis(500),
            Duration::from_secs(1),
            Duration::from_secs(2)
        ]
    );

    // Full jitter takes a quarter off; with 2 retries, three 503s are the end.
    let server = TestServer::start(vec![Reply::json(503, err)]);
    let sleeper = Arc::new(Recording::default());
    let e = block(client(2, sleeper.clone(), || 1.0).send(&request(&server))).unwrap_err();
    assert_eq!(e.kind, FailureKind::Exhausted);
    assert_eq!(e.attempts, 3);
    assert_eq!(server.requests().len(), 3);
    assert_eq!(
        *sleeper.0.lock().unwrap(),
        [Duration::from_millis(375), Duration::from_millis(750)]
    );
    assert!(
        e.message.contains("HTTP 503 server_error: busy")
            && e.message.contains("gave up after 3 attempts"),
        "{}",
        e.message
    );
}

#[test]
fn server_waits_are_taken_as_given_and_too_long_ones_stop() {
    let server = TestServer::start(vec![
        Reply::json(429, "{}")
            .header("retry-after-ms", "1500")
            .header("retry-after", "30"),
        Reply::json(200, "{}"),
    ]);
    let sleeper = Arc::new(Recording::default());
    block(client(2, sleeper.clone(), || 0.0).send(&request(&server))).unwrap();
    assert_eq!(*sleeper.0.lock().unwrap(), [Duration::from_millis(1500)]);

    let server = TestServer::start(vec![Reply::json(429, "{}").header("retry-after", "3600")]);
    let sleeper = Arc::new(Recording::default());
    let e = block(client(2, sleeper.clone(), || 0.0).send(&request(&server))).unwrap_err();
    assert_eq!(e.kind, FailureKind::WaitTooLong);
    assert_eq!(server.requests().len(), 1);
    assert!(sleeper.0.lock().unwrap().is_empty());
    assert!(e.message.contains("3600s"), "{}", e.message);
}

#[test]
fn connection_refused_is_retried_then_named() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let req = Request::json(
        format!("http://127.0.0.1:{port}/v1/messages"),
        b"{}".to_vec(),
        "test".into(),
    );
    let sleeper = Arc::new(Recording::default());
    let e = block(client(2, sleeper.clone(), || 0.0).send(&req)).unwrap_err();
    assert_eq!((e.kind, e.attempts), (FailureKind::Unreachable, 3));
    assert_eq!(sleeper.0.lock().unwrap().len(), 2);
    assert!(e.message.contains("could not connect"), "{}", e.message);
}

#[test]
fn non_retryable_statuses_take_one_request() {
    for status in [400u16, 401, 403, 404, 413, 422] {
        let server = TestServer::start(vec![Reply::json(
            status,
            r#"{"error":{"type":"x","message":"no"}}"#,
        )]);
        let e = block(client(2, Arc::new(Recording::default()), || 0.0).send(&request(&server)))
            .unwrap_err();
        assert_eq!(server.requests().len(), 1, "{status}");
        assert_eq!(e.status, Some(status));
    }
}
