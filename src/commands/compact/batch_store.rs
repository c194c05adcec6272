//! The batches mf submitted, kept in its own state directory (`settings::tier::state_dir`): one
//! file per batch, naming the provider, model and base URL it went to, the files and requests
//! (by key) it holds, and, once collected, what each request came to. A rerun reads them to
//! collect a batch instead of submitting again; `--batch-status` lists them; `--batch-cancel`
//! cancels them. Written through `own_file` (no link followed, `0600` in a `0700` directory).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::entry::{Tier, Usage};
use crate::summarizer::wire::ItemResult;
use crate::summarizer::{SummarizerError, SummaryReply};

/// How long a provider keeps a batch's results (Anthropic: 29 days); a record older than this
/// is of no use and is forgotten.
const KEPT_MS: u64 = 29 * 24 * 3_600 * 1_000;

/// One submitted batch.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchRecord {
    pub version: u32,
    pub id: String,
    pub provider: String,
    /// The model id (what `model::resolve` takes back).
    pub model: String,
    pub base_url: String,
    pub submitted_at_ms: u64,
    /// The transcript files whose calls it holds (as given on the command line).
    pub files: Vec<String>,
    /// The requests' keys (their `custom_id`s).
    pub keys: Vec<String>,
    /// The provider's word for it when last seen, and its counts.
    pub status: String,
    pub done: u64,
    pub total: u64,
    /// Whether its results were read (then `results` holds them).
    pub collected: bool,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub results: BTreeMap<String, Stored>,
    /// `--rollup`: per file, the ids of the summaries written whose rollup this batch holds.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub rollups: BTreeMap<String, Vec<String>>,
}

/// What one request came to, as kept.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "type")]
pub enum Stored {
    Answered {
        text: String,
        input_tokens: Option<u64>,
        output_tokens: Option<u64>,
        #[serde(default)]
        notes: Vec<String>,
    },
    /// The reply came but cannot be used (a refusal, a cut-off), or the request errored,
    /// expired or was canceled: reported in the run that collected it, asked anew after.
    Failed { kind: String, message: String },
}

impl Stored {
    pub fn of(item: &ItemResult) -> Self {
        match item {
            ItemResult::Answered(Ok(r)) => Stored::Answered {
                text: r.text.clone(),
                input_tokens: r.usage.map(|u| u.input_tokens),
                output_tokens: r.usage.map(|u| u.output_tokens),
                notes: r.notes.clone(),
            },
            ItemResult::Answered(Err(e)) => Stored::Failed {
                kind: "unusable".into(),
                message: e.message.clone(),
            },
            ItemResult::Errored(m) => Stored::Failed {
                kind: "errored".into(),
                message: m.clone(),
            },
            ItemResult::Expired => Stored::Failed {
                kind: "expired".into(),
                message:
                    "the request expired unanswered (a batch's requests expire after 24 hours)"
                        .into(),
            },
            ItemResult::Canceled => Stored::Failed {
                kind: "canceled".into(),
                message: "the request was canceled before it was answered".into(),
            },
        }
    }

    /// The reply a summarizer call gets from it.
    pub fn reply(&self) -> Result<SummaryReply, SummarizerError> {
        match self {
            Stored::Answered {
                text,
                input_tokens,
                output_tokens,
                notes,
            } => Ok(SummaryReply {
                text: text.clone(),
                usage: match (input_tokens, output_tokens) {
                    (Some(i), Some(o)) => Some(Usage {
                        input_tokens: *i,
                        output_tokens: *o,
                        tier: Tier::Batch,
                    }),
                    _ => None,
                },
                notes: notes.clone(),
            }),
            Stored::Failed { kind, message } => Err(SummarizerError::degrade(format!(
                "batch request {kind}: {message}"
            ))),
        }
    }
}

/// The directory of batch records.
pub struct Store {
    dir: Option<PathBuf>,
}

impl Store {
    pub fn new(dir: Option<PathBuf>) -> Self {
        Self { dir }
    }

    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Every record kept, oldest first; records past the providers' keeping are forgotten.
    pub fn all(&self, now_ms: u64) -> Vec<BatchRecord> {
        let Some(dir) = &self.dir else {
            return Vec::new();
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut out: Vec<BatchRecord> = entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
            .filter_map(|e| {
                let f = crate::own_file::open_own(&e.path()).ok()?;
                serde_json::from_reader(std::io::BufReader::new(f)).ok()
            })
            .collect();
        out.retain(|r: &BatchRecord| {
            let old = now_ms.saturating_sub(r.submitted_at_ms) > KEPT_MS;
            if old {
                self.forget(&r.id);
            }
            !old
        });
        out.sort_by_key(|r| r.submitted_at_ms);
        out
    }

    /// Keep `r` (replacing what was kept under its id).
    pub fn save(&self, r: &BatchRecord) -> Result<()> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let own = if dir.ends_with("mf/batches") { 2 } else { 1 };
        crate::own_file::private_dir(dir, own)
            .with_context(|| format!("cannot keep batch {} in {}", r.id, dir.display()))?;
        let bytes = serde_json::to_vec_pretty(r).expect("a record serializes");
        crate::own_file::replace_own(&dir.join(file_name(&r.id)), &bytes)
            .with_context(|| format!("cannot keep batch {} in {}", r.id, dir.display()))
    }

    /// Forget batch `id` (collected and used, canceled, or too old).
    pub fn forget(&self, id: &str) {
        if let Some(dir) = &self.dir {
            let _ = std::fs::remove_file(dir.join(file_name(id)));
        }
    }
}

/// A file name for a provider's batch id: the id when it is plain, else its digest.
fn file_name(id: &str) -> String {
    if !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        format!("{id}.json")
    } else {
        format!("{:016x}.json", crate::digest::fnv1a64(id.as_bytes()))
    }
}
