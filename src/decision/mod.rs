//! `DecisionRecord`: the output contract of `compact` (and the "now" part of `explain`), as
//! printed by `--json`: one object per input file, errors included. The README documents every
//! key; keys are camelCase and optional ones are omitted when empty.

use serde::Serialize;

use crate::entry::{Usage, estimate_tokens};
use crate::fold::{Item, Ledger, Plan, Span};

mod outcome;
pub use outcome::{Decline, DeclineCounts, Note, Reason, SummaryOutcome};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Folded,
    Masked,
    Declined,
    Skipped,
    Planned,
    Error,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Folded => "folded",
            Action::Masked => "masked",
            Action::Declined => "declined",
            Action::Skipped => "skipped",
            Action::Planned => "planned",
            Action::Error => "error",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub struct Size {
    pub chars: usize,
    pub tokens: usize,
}

impl Size {
    pub fn of(chars: usize) -> Self {
        Self {
            chars,
            tokens: estimate_tokens(chars),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpanRecord {
    pub from_turn: u64,
    pub to_turn: u64,
    pub entry_count: usize,
    /// Original messages behind it, through nested summaries.
    pub original_count: usize,
    /// Anchor-line ranges of the entries it covers.
    pub lines: Vec<[u32; 2]>,
    pub first_id: String,
    pub last_id: String,
    pub digest: String,
    pub chars: usize,
    pub tokens: usize,
}

impl SpanRecord {
    pub fn of(span: &Span, id_of: &dyn Fn(Item) -> String) -> Self {
        Self {
            from_turn: span.from_turn,
            to_turn: span.to_turn,
            entry_count: span.items.len(),
            original_count: span.leaf_count,
            lines: span.ranges.clone(),
            first_id: span.items.first().map(|&i| id_of(i)).unwrap_or_default(),
            last_id: span.items.last().map(|&i| id_of(i)).unwrap_or_default(),
            digest: span.digest.clone(),
            chars: span.chars,
            tokens: span.tokens(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VerbatimRecord {
    pub entry_count: usize,
    /// Of those, entries of the preamble (before the first user message, never folded).
    pub preamble_count: usize,
    /// Of those, user messages kept out of the fold (`--protect user`).
    pub protected_count: usize,
    pub from_turn: Option<u64>,
    pub to_turn: Option<u64>,
}

impl VerbatimRecord {
    pub fn of(ledger: &Ledger<'_>, items: &[Item], protected: usize) -> Self {
        let items: Vec<Item> = items
            .iter()
            .copied()
            .filter(|&it| ledger.kind(it) != crate::fold::ItemKind::Summary)
            .collect();
        let items = &items[..];
        let preamble_count = items.iter().filter(|&&it| ledger.is_preamble(it)).count();
        let turns = items
            .iter()
            .filter(|&&it| !ledger.is_preamble(it))
            .map(|&it| ledger.item_turns(it));
        Self {
            entry_count: items.len(),
            preamble_count,
            protected_count: protected,
            from_turn: turns.clone().map(|t| t.0).min(),
            to_turn: turns.map(|t| t.1).max(),
        }
    }
}

/// One summary or stub written (or judged).
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct SummaryRecord {
    pub id: String,
    pub from_turn: u64,
    pub to_turn: u64,
    pub entry_count: usize,
    pub chars: usize,
    pub tokens: usize,
    /// The retention audit of this summary (absent for stubs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub audit: Option<serde_json::Value>,
    /// What became of it: `written`, or why it was declined.
    pub outcome: SummaryOutcome,
    /// `--strategy cited`: the candidate's name in the summarizer's reply (`#2`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidate: Option<String>,
    /// `--strategy cited`: the call that brought it (1-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub round: Option<usize>,
    /// `--strategy cited`: the ids a written summary covers, exactly.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub covered_ids: Vec<String>,
    /// `--strategy cited`: why the candidate was rejected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejection: Option<RejectionRecord>,
}

impl SummaryRecord {
    /// The record of draft `d` (id `id`) written for `span`: its turns, size and audit.
    pub fn of(
        span: &crate::fold::Span,
        d: &crate::entry::Draft,
        id: &str,
        audit: Option<serde_json::Value>,
        outcome: SummaryOutcome,
    ) -> Self {
        SummaryRecord {
            id: id.to_string(),
            from_turn: span.from_turn,
            to_turn: span.to_turn,
            entry_count: span.items.len(),
            chars: d.chars(),
            tokens: crate::entry::estimate_tokens(d.chars()),
            audit,
            outcome,
            ..SummaryRecord::default()
        }
    }
}

/// Why a cited candidate summary was rejected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RejectionRecord {
    /// A stable name: `malformed-citation`, `uncited`, `unknown-id`, `not-in-span`,
    /// `single-source`, `too-long`, `self-citation`, `cycle`, `cites-rejected`, `name-taken`,
    /// `empty`, `lossy`.
    pub reason: String,
    /// The reason in words, as the summarizer was told.
    pub detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageRecord {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl From<Usage> for UsageRecord {
    fn from(u: Usage) -> Self {
        Self {
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
        }
    }
}

/// What a run cost (or would cost), from the price table or `--price-in` / `--price-out`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CostRecord {
    /// US dollars, rounded to a tenth of a cent's useful precision (6 significant digits).
    #[serde(serialize_with = "round_usd")]
    pub usd: f64,
    /// True when computed from mf's estimate of the tokens rather than the provider's usage.
    pub estimated: bool,
}

fn round_usd<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(round6(*v))
}

/// How a stub (`--strategy mask`) tells the reader to get the hidden tool result back.
pub fn stub_how_back(file: &str, id: &str) -> String {
    format!("`mf expand {file} {id}` shows it, with --restore it comes back")
}

/// Dollars, rounded to what is useful: whole cents above a dollar, four significant digits below
/// a cent, never binary noise such as `0.005918400000000001`.
pub fn usd(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v >= 1.0 {
        format!("{v:.2}")
    } else if v >= 0.01 {
        format!("{v:.4}")
    } else {
        // Below a cent: four significant digits, written out.
        let digits = (-v.log10()).ceil() as usize + 3;
        format!("{v:.digits$}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

/// Round to 6 decimal places (a millionth of a dollar): no binary noise like `…0000001`.
pub fn round6(v: f64) -> f64 {
    (v * 1e6).round() / 1e6
}

impl CostRecord {
    pub fn of(price: (f64, f64), input_tokens: u64, output_tokens: u64, estimated: bool) -> Self {
        let usd = (input_tokens as f64 * price.0 + output_tokens as f64 * price.1) / 1_000_000.0;
        Self { usd, estimated }
    }

    pub fn plus(self, other: CostRecord) -> Self {
        Self {
            usd: self.usd + other.usd,
            estimated: self.estimated || other.estimated,
        }
    }
}

/// A summarizer call that failed on a span (`failures[]`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FailureRecord {
    pub from_turn: u64,
    pub to_turn: u64,
    /// A stable name: `refusal`, `content-filter`, `cut-off`, `cut-off-by-thinking`; null when
    /// the failure has none (an outage, a reply that was not JSON).
    pub reason: Option<&'static str>,
    pub message: String,
    /// What the provider reported for the failed call(s), when it answered.
    pub usage: Option<UsageRecord>,
    /// What it cost (paid, though nothing came of it).
    pub cost: Option<CostRecord>,
}

/// The error a file ended in (`action: "error"`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorRecord {
    pub message: String,
    pub exit_code: u8,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hints: Vec<String>,
}

/// Why a file failed (`failure`): on every record whose file did not compact as asked, an error
/// or a span the summarizer failed on, in one shape a CI script can match (`select(.failure)`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FileFailure {
    /// A stable name: `summarizer-unreachable`, `summarizer-setup`, `summarizer-outage`,
    /// `summarizer-error`, `session-in-use`, `bad-input`, `refused`, `usage`, `interrupted`,
    /// `internal`, `error`.
    pub kind: &'static str,
    pub message: String,
    /// The exit status this file calls for (before `--allow-degraded`).
    pub exit_code: u8,
    /// Whether `--allow-degraded` accepts it (an outage or an unusable reply: the span stayed
    /// verbatim; never a setup error).
    pub degraded: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionRecord {
    pub file: String,
    /// The transcript's format (`chat`, `claude`, `codex`, `pi`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    pub action: Action,
    pub reason: Reason,
    pub model: Option<String>,
    pub span: Option<SpanRecord>,
    pub verbatim: Option<VerbatimRecord>,
    /// Every summary (one per chunk, then the rollup) and stub written or judged.
    pub summaries: Vec<SummaryRecord>,
    pub usage: Option<UsageRecord>,
    pub before: Size,
    pub after: Size,
    pub cost: Option<CostRecord>,
    /// Secrets replaced by placeholders before the span left the machine, by kind.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub redacted: std::collections::BTreeMap<&'static str, usize>,
    /// Secrets removed from summaries before they were written, by kind.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub scrubbed: std::collections::BTreeMap<&'static str, usize>,
    /// Calls made to the summarizer.
    pub calls: usize,
    /// Calls by the price tier they ran at (`batch`, `flex`, `standard`), when the run asked for
    /// a half-price tier; absent otherwise.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub tiers: std::collections::BTreeMap<&'static str, usize>,
    pub written: bool,
    pub lines_appended: usize,
    pub output: Option<String>,
    /// Remarks: a target that cannot be met, a fold inside a turn, …
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorRecord>,
    /// Why the file failed, when it did (an error, or a span the summarizer failed on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<FileFailure>,
    /// Every summarizer call that failed on a span (which stayed verbatim): why, by a stable
    /// name where the provider gave one, and what it cost.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<FailureRecord>,
    /// A summarizer failed on some span (it stayed verbatim): the file is not fully compacted.
    #[serde(skip)]
    pub degraded: bool,
    /// `--batch --rollup`: the ids of the summaries whose rollup waits for a batch answer.
    #[serde(skip)]
    pub rollup_pending: Option<Vec<String>>,
    /// The file is not done: part of its work waits in a provider batch (exit 75).
    #[serde(skip)]
    pub waiting: bool,
}

impl DecisionRecord {
    /// An empty record for `file`.
    pub fn new(file: &str, model: Option<&str>) -> Self {
        DecisionRecord {
            file: file.to_string(),
            format: None,
            action: Action::Skipped,
            reason: Reason::Unsaid,
            model: model.map(str::to_string),
            span: None,
            verbatim: None,
            summaries: Vec::new(),
            usage: None,
            before: Size::default(),
            after: Size::default(),
            cost: None,
            redacted: Default::default(),
            scrubbed: Default::default(),
            calls: 0,
            tiers: Default::default(),
            written: false,
            lines_appended: 0,
            output: None,
            notes: Vec::new(),
            error: None,
            failure: None,
            failures: Vec::new(),
            degraded: false,
            rollup_pending: None,
            waiting: false,
        }
    }

    /// A summarizer failed on a span, which stays verbatim: the file is not fully compacted
    /// (exit 3; 0 with `--allow-degraded`). The first such failure is the record's `failure`.
    pub fn degrade(&mut self, e: &crate::summarizer::SummarizerError) {
        self.degraded = true;
        self.failure.get_or_insert_with(|| FileFailure {
            kind: crate::error::summarizer_failure_kind(e),
            message: e.message.clone(),
            exit_code: crate::exit_status::ExitStatus::NotCompacted.code(),
            degraded: true,
        });
    }

    /// The record of a file that failed (`kind`: `error::failure_kind`).
    pub fn error(
        file: &str,
        message: String,
        exit_code: u8,
        hints: Vec<String>,
        kind: &'static str,
    ) -> Self {
        let mut r = Self::new(file, None);
        r.action = Action::Error;
        r.reason = Reason::Error(message.clone());
        r.failure = Some(FileFailure {
            kind,
            message: message.clone(),
            exit_code,
            degraded: matches!(kind, "summarizer-outage" | "summarizer-error"),
        });
        r.error = Some(ErrorRecord {
            message,
            exit_code,
            hints,
        });
        r
    }

    /// What a plan would do, before any call.
    pub fn planned(&mut self, ledger: &Ledger<'_>, plan: &Plan, id_of: &dyn Fn(Item) -> String) {
        self.action = Action::Planned;
        self.reason = Reason::Planned {
            entries: plan.whole.items.len(),
            from_turn: plan.whole.from_turn,
            to_turn: plan.whole.to_turn,
            calls: plan.spans.len(),
            verbatim: plan.verbatim.len(),
        };
        self.span = Some(SpanRecord::of(&plan.whole, id_of));
        self.verbatim = Some(VerbatimRecord::of(
            ledger,
            &plan.verbatim,
            plan.protected.len(),
        ));
        if let Some(turn) = plan.split_turn {
            self.notes.push(Note::SplitTurn(turn));
        }
        if plan.in_turn {
            self.notes.push(Note::InTurn);
        }
        if !plan.oversized.is_empty() {
            self.notes.push(Note::Oversized(plan.oversized.len()));
        }
        if !plan.notes.is_empty() {
            self.notes.push(Note::Plan(plan.notes.clone()));
        }
    }
}

/// `mf summarize --json`: one object for the whole input (the contract hooks rely on).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummarizeRecord {
    /// mf's label, the model's text and mf's section of what it left out; `null` unless accepted.
    pub summary: Option<String>,
    pub model: String,
    pub strategy: &'static str,
    /// The audit of the summary, in the shape `compact` records it (`null` with several chunks:
    /// each chunk's is in `chunks`).
    pub audit: Option<serde_json::Value>,
    pub chunks: Vec<SummarizeChunk>,
    pub calls: usize,
    pub usage: Option<UsageRecord>,
    /// US dollars: the provider's usage when reported, else mf's estimate; 0 for the built-in.
    #[serde(serialize_with = "round_usd_opt")]
    pub cost_usd: Option<f64>,
    pub accepted: bool,
    pub reason: SummarizeReason,
    /// The summarizer's failure, when one ended the run.
    #[serde(skip)]
    pub failure: Option<crate::summarizer::SummarizerError>,
}

impl SummarizeRecord {
    pub fn new(model: &str) -> Self {
        Self {
            summary: None,
            model: model.to_string(),
            strategy: "summary",
            audit: None,
            chunks: Vec::new(),
            calls: 0,
            usage: None,
            cost_usd: None,
            accepted: false,
            reason: SummarizeReason::Pending,
            failure: None,
        }
    }
}

/// One chunk of a `summarize` span (a span larger than one call is summarized in chunks).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SummarizeChunk {
    pub from_turn: u64,
    pub to_turn: u64,
    pub entry_count: usize,
    pub accepted: bool,
    pub reason: ChunkOutcome,
    pub audit: Option<serde_json::Value>,
}

/// What became of one chunk of `mf summarize` (`chunks[].reason`).
#[derive(Debug, Clone, PartialEq)]
pub enum ChunkOutcome {
    /// Not asked yet.
    Pending,
    /// The summarizer failed (its message).
    Failed(String),
    /// The audit declined the reply.
    Lossy(crate::fold::audit::Faults),
    /// Accepted: the entries and turns it stands for, and its length with mf's label.
    Accepted {
        entries: usize,
        from_turn: u64,
        to_turn: u64,
        chars: usize,
    },
}

impl ChunkOutcome {
    /// Declined or failed.
    pub fn declined(&self) -> bool {
        matches!(self, ChunkOutcome::Failed(_) | ChunkOutcome::Lossy(_))
    }
}

/// Why `mf summarize` came to what it did (`reason`).
#[derive(Debug, Clone, PartialEq)]
pub enum SummarizeReason {
    /// Nothing decided yet.
    Pending,
    /// `--dry-run`: what would be asked, and its estimated cost when a price is known.
    DryRun {
        entries: usize,
        from_turn: u64,
        to_turn: u64,
        calls: usize,
        model: String,
        tokens_in: u64,
        tokens_out: u64,
        cost: Option<f64>,
    },
    /// What became of the chunks, in order.
    Chunks(Vec<ChunkOutcome>),
}

fn round_usd_opt<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => round_usd(v, s),
        None => s.serialize_none(),
    }
}
