//! `Batched`: a summarizer for `--batch` runs. A call it has an answer for (collected from a
//! provider batch) is answered at once; any other is queued for the next batch and fails as
//! `Pending`, which stops its file before anything is written. A request is known by its key:
//! a digest of everything the model reads (the one-time nonce left out), so a rerun that plans
//! the same span asks the same question and finds its answer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::fold::SummaryRequest;
use crate::summarizer::{
    CountFuture, Remote, Summarizer, SummarizerError, SummaryFuture, SummaryReply,
};

/// A call waiting for a batch: its key (the batch's `custom_id`) and its body.
#[derive(Debug, Clone)]
pub struct Queued {
    pub key: String,
    pub body: Value,
}

pub struct Batched {
    remote: Arc<Remote>,
    answers: Mutex<HashMap<String, Result<SummaryReply, SummarizerError>>>,
    queued: Mutex<Vec<Queued>>,
}

impl Batched {
    pub fn new(remote: Arc<Remote>) -> Self {
        Self {
            remote,
            answers: Mutex::default(),
            queued: Mutex::default(),
        }
    }

    pub fn remote(&self) -> &Remote {
        &self.remote
    }

    /// The key of a request: the model, what it reads (the nonce taken out) and its token cap.
    pub fn key(&self, req: &SummaryRequest) -> String {
        let strip = |s: &str| {
            if req.nonce.is_empty() {
                s.to_string()
            } else {
                s.replace(&req.nonce, "")
            }
        };
        let cap = self.remote.max_tokens(req).to_le_bytes();
        crate::digest::request_key(&[
            self.remote.model().as_bytes(),
            strip(&req.system).as_bytes(),
            strip(&req.user).as_bytes(),
            &cap,
        ])
    }

    /// An answer for the request with this key.
    pub fn answer(&self, key: String, reply: Result<SummaryReply, SummarizerError>) {
        self.answers
            .lock()
            .expect("the answers are never poisoned")
            .insert(key, reply);
    }

    /// Whether an answer for this key is held.
    pub fn has(&self, key: &str) -> bool {
        self.answers
            .lock()
            .expect("the answers are never poisoned")
            .contains_key(key)
    }

    /// The calls queued since the last take, each once.
    pub fn take_queued(&self) -> Vec<Queued> {
        std::mem::take(&mut *self.queued.lock().expect("the queue is never poisoned"))
    }
}

impl Summarizer for Batched {
    fn model(&self) -> &str {
        self.remote.model()
    }

    fn summarize<'a>(&'a self, req: &'a SummaryRequest) -> SummaryFuture<'a> {
        Box::pin(async move {
            let key = self.key(req);
            if let Some(reply) = self
                .answers
                .lock()
                .expect("the answers are never poisoned")
                .get(&key)
            {
                return reply.clone();
            }
            let mut queued = self.queued.lock().expect("the queue is never poisoned");
            if !queued.iter().any(|q| q.key == key) {
                queued.push(Queued {
                    body: self.remote.body(req),
                    key,
                });
            }
            Err(SummarizerError::pending())
        })
    }

    fn count_tokens<'a>(&'a self, req: &'a SummaryRequest) -> Option<CountFuture<'a>> {
        self.remote.count_tokens(req)
    }
}
