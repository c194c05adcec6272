//! `Entry`: one message of the conversation as the engine sees it — where its bytes are, who
//! spoke, how long it is, which tool calls it opens and answers — and the claims and records mf
//! reads back from its own lines. No JSON and no I/O: the transcript module builds these, the
//! fold engine reads them. Entries are small and `Copy` so that a million of them fit in a
//! fraction of the file's size; text is read back from the file only when it is needed.

/// The start of mf's label: the first line of every summary's content. A line whose content
/// starts with it claims to be a summary; whether the claim holds is the engine's call.
pub const LABEL_PREFIX: &str = "[summary of earlier turns";

/// The start of a stub's content (a tool result hidden by `--strategy mask`).
pub const STUB_PREFIX: &str = "[tool result hidden by mf";

/// How the reason begins for a claim whose write mf did not finish (`Claim::shape_ok`).
pub const UNFINISHED_WRITE: &str = "part of a write mf did not finish";

/// "No index" in the `u32` index fields below.
pub const NONE: u32 = u32::MAX;

/// Who spoke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[repr(u8)]
pub enum Role {
    /// `system` / `developer`, and an agent's injected context.
    System,
    User,
    Assistant,
    /// A tool's result.
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// Entry flags, a bit set (`Entry::flags`).
pub mod flag {
    /// A real user message: it starts a turn.
    pub const TURN_START: u8 = 1;
    /// Not part of what the agent's model sees (off the active branch, before the agent's own
    /// compaction, or marked by the agent as not sent). Kept in the file, never shown or folded.
    pub const UNSEEN: u8 = 2;
    /// An agent's own compaction summary (a floor: what lies before it is already summarized).
    pub const NATIVE_SUMMARY: u8 = 4;
    /// Never folded (carried verbatim by every fold, like the preamble).
    pub const PINNED: u8 = 8;
    /// Before the agent's own compaction: history the agent no longer sees (always with
    /// `UNSEEN`), still counted in the turns.
    pub const HISTORY: u8 = 16;
    /// Belongs to the turn after it although it comes before that turn's prompt: the user's
    /// built-in command that nothing answered (Claude Code's `/clear` and its caveat and output
    /// rows) before the first prompt. Not preamble: it folds with that turn; left raw before a
    /// fold (as mf's folds before this flag left it), it is not a fault.
    pub const LEADS_TURN: u8 = 32;
}

/// One message (or one message-like unit) of the conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    /// 1-based physical line where the entry starts: its anchor, stable under appends. (A line
    /// another writer began and mf's append interrupted is anchored where its rest is, so that no
    /// two entries share an anchor.)
    pub line: u32,
    pub role: Role,
    /// `flag::*` bits.
    pub flags: u8,
    /// Characters of model-visible text (content, tool calls and their arguments, results).
    pub chars: u32,
    /// Hash of the entry's exact bytes (every line of it), for coverage digests.
    pub hash: u64,
    /// Hash of the entry's id string (its own id, its uuid, or `line-N`).
    pub id: u64,
    /// Byte offset of the entry's first line in the file.
    pub pos: u64,
    /// Bytes of the first line (without its line end).
    pub len: u32,
    /// Index of the entry's further pieces in the transcript's piece table, or `NONE`.
    pub more: u32,
    /// Index into `Conversation::links` (tool calls opened and answered), or `NONE`.
    pub link: u32,
    /// Index into `Conversation::claims` when the line claims to be mf's, or `NONE`.
    pub claim: u32,
}

impl Entry {
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// The tool calls an entry opens and the calls it answers, as ranges into `Conversation::tool_ids`
/// (hashes of the call ids).
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Link {
    pub calls: std::ops::Range<u32>,
    pub answers: std::ops::Range<u32>,
}

/// What kind of mf line a claim is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ClaimKind {
    /// A summary standing for the entries it covers.
    Summary,
    /// A stub standing in, in place, for one tool result (`--strategy mask`).
    Stub,
}

/// What a line says about itself as an mf summary or stub. Whether the claim holds is the
/// engine's call (`fold::Ledger`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Claim {
    pub entry: u32,
    pub kind: ClaimKind,
    /// The line's own `id` string.
    pub id: String,
    /// The parsed coverage record, or why it could not be read.
    pub coverage: Result<Coverage, String>,
    /// Fingerprint of the exact content string, computed on read (`None`: content not a string).
    pub content_fingerprint: Option<String>,
    /// The first line of the content (where mf's label stands).
    pub label: String,
    /// Whether the line has the role and shape mf writes for this kind in this format.
    pub shape_ok: Result<(), String>,
}

/// How a summary's coverage names its entries.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Covered {
    /// mf 0.1.0: entry ids. Honoured only when every id is an explicit id that occurs once.
    Ids(Vec<String>),
    /// Inclusive ranges of anchor lines, in conversation order, with a digest of the covered
    /// entries' bytes.
    Lines {
        ranges: Vec<[u32; 2]>,
        digest: String,
    },
}

/// How a summary's coverage was chosen, as recorded beside it (`"strategy"` in its mf object).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ClaimStrategy {
    /// One run of the view between seams mf chooses: no raw entry inside it but those a fold
    /// keeps out (user messages under `--protect user`, the prompt of a turn folded inside,
    /// entries the format pins).
    Summary,
    /// `--strategy cited`: exactly what the summary cites, so its coverage may have gaps.
    Cited,
}

impl ClaimStrategy {
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimStrategy::Summary => "summary",
            ClaimStrategy::Cited => "cited",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "summary" => Some(ClaimStrategy::Summary),
            "cited" => Some(ClaimStrategy::Cited),
            _ => None,
        }
    }
}

/// The coverage record of a summary or stub.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Coverage {
    /// 1 (mf 0.1.0) or 2.
    pub version: u32,
    pub from_turn: u64,
    pub to_turn: u64,
    pub entry_count: u64,
    pub covered: Covered,
    /// Anchor line of the first entry of the verbatim tail when the fold was planned (v2).
    pub tail_line: Option<u32>,
    /// For a stub: how many newer tool results were kept verbatim when it was written.
    pub kept_results: Option<u32>,
    /// How the fold that wrote it chose what to cover (`None`: written before mf recorded it,
    /// read by the rules of then).
    pub strategy: Option<ClaimStrategy>,
    pub model: String,
    pub summarized_at_ms: u64,
    pub usage: Option<Usage>,
    /// Fingerprint of the exact content string.
    pub fingerprint: String,
}

/// Token usage reported by a summarizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The tier the call ran at (what it is billed at); not written into transcripts.
    #[serde(skip)]
    pub tier: Tier,
}

/// The price tier a provider call runs at.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// The provider's default tier, at its list price.
    #[default]
    Standard,
    /// A provider batch (Anthropic Message Batches, OpenAI Batch API): half price, answered
    /// within 24 hours.
    Batch,
    /// OpenAI's flex tier: batch price, synchronous, may be unavailable (429).
    Flex,
}

impl Tier {
    /// The share of the list price a call at this tier is billed (both providers: 50 % off
    /// input and output, cache reads and writes included).
    pub fn price_factor(self) -> f64 {
        match self {
            Tier::Standard => 1.0,
            Tier::Batch | Tier::Flex => 0.5,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Standard => "standard",
            Tier::Batch => "batch",
            Tier::Flex => "flex",
        }
    }
}

/// A span named by its ends, its size and a digest of its entries (bounded, however big the span).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SpanRef {
    pub from_line: u32,
    pub to_line: u32,
    pub count: u64,
    pub digest: String,
    pub from_turn: u64,
    pub to_turn: u64,
}

/// A non-message line mf wrote: a remembered decision. Recall ignores these.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Record {
    pub line: u32,
    pub at_ms: u64,
    pub kind: RecordKind,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum RecordKind {
    /// A summary was written (mf 0.1.0 wrote these beside each summary; newer summaries carry
    /// everything in their own line).
    Fold {
        summary_id: String,
        model: String,
        from_turn: u64,
        to_turn: u64,
        entry_count: u64,
        span_chars: u64,
        summary_chars: u64,
    },
    /// A fold was considered and not made.
    Decline {
        reason: DeclineReason,
        model: String,
        span: DeclinedSpan,
        span_chars: u64,
        summary_chars: Option<u64>,
        detail: String,
        /// What the call(s) behind the verdict were billed, when the provider reported it
        /// (absent in records of older mf and for verdicts made without a call).
        usage: Option<Usage>,
        /// What decided it besides the span and the model: a digest of the instruction, the
        /// strategy and the audit's threshold (`None` in records of mf before 0.3). A lossy or
        /// rejected decline binds only a run with the same key.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        key: Option<String>,
    },
    /// A summary was withdrawn; its originals are verbatim in recall again.
    Retract {
        summary_id: String,
        fingerprint: String,
    },
    /// A record kind from a newer mf, or a damaged one: kept, shown by `explain`, otherwise ignored.
    Unknown { kind: String },
}

/// Which span a decline is about.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DeclinedSpan {
    /// mf 0.1.0 listed every id.
    Ids {
        ids: Vec<String>,
        from_turn: u64,
        to_turn: u64,
    },
    Ref(SpanRef),
}

impl DeclinedSpan {
    pub fn turns(&self) -> (u64, u64) {
        match self {
            DeclinedSpan::Ids {
                from_turn, to_turn, ..
            } => (*from_turn, *to_turn),
            DeclinedSpan::Ref(r) => (r.from_turn, r.to_turn),
        }
    }

    pub fn count(&self) -> u64 {
        match self {
            DeclinedSpan::Ids { ids, .. } => ids.len() as u64,
            DeclinedSpan::Ref(r) => r.count,
        }
    }
}

/// Why a fold was declined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum DeclineReason {
    /// Label plus summary would not be shorter than the span. Binding: never asked again.
    NotSmaller,
    /// The summary kept too little of the span, echoed the instruction or forged structure.
    /// Binding for the same span and model.
    Lossy,
    /// The summarizer failed; the span stayed verbatim. Not binding: a later run asks again.
    SummarizerFailed,
    /// `--strategy cited`: every candidate summary was rejected (bad citations, too long, a
    /// single source, a cycle…) within the calls a fold may make. Binding for the same span and
    /// model.
    Rejected,
}

impl DeclineReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DeclineReason::NotSmaller => "not-smaller",
            DeclineReason::Lossy => "lossy",
            DeclineReason::SummarizerFailed => "summarizer-failed",
            DeclineReason::Rejected => "rejected",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "not-smaller" => Some(Self::NotSmaller),
            "lossy" => Some(Self::Lossy),
            "summarizer-failed" => Some(Self::SummarizerFailed),
            "rejected" => Some(Self::Rejected),
            _ => None,
        }
    }

    /// Whether the verdict keeps the same span from being asked again.
    pub fn binding(self) -> bool {
        !matches!(self, DeclineReason::SummarizerFailed)
    }
}

/// One item of what the agent is to be shown after a write, in recall order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// An entry of the file: a message, or a summary or stub already standing.
    Existing(u32),
    /// The draft at this index of the drafts being written.
    New(usize),
}

/// Everything the engine reads about one transcript, borrowed from it.
#[derive(Debug, Clone, Copy)]
pub struct Conversation<'a> {
    pub entries: &'a [Entry],
    pub links: &'a [Link],
    pub tool_ids: &'a [u64],
    pub claims: &'a [Claim],
    pub records: &'a [Record],
    /// Entries that stand elsewhere in conversation order than in the file: `(entry, before)`,
    /// the entry stands just before entry `before` (an agent's own compaction summary stands
    /// before the first entry it kept). Sorted by `before`.
    pub placements: &'a [(u32, u32)],
    /// The agent shows one unbroken run of entries after its summaries (pi: one compaction
    /// entry, then the path from its first kept entry on), so a fold must cover a prefix of
    /// what it sends (`fold::plan` plans only such folds).
    pub one_run: bool,
}

impl<'a> Conversation<'a> {
    /// Hashes of the call ids an entry opens.
    pub fn calls(&self, i: usize) -> &'a [u64] {
        match self.entries[i].link {
            NONE => &[],
            l => {
                let r = &self.links[l as usize].calls;
                &self.tool_ids[r.start as usize..r.end as usize]
            }
        }
    }

    /// Hashes of the call ids an entry answers.
    pub fn answers(&self, i: usize) -> &'a [u64] {
        match self.entries[i].link {
            NONE => &[],
            l => {
                let r = &self.links[l as usize].answers;
                &self.tool_ids[r.start as usize..r.end as usize]
            }
        }
    }

    pub fn claim(&self, i: usize) -> Option<&'a Claim> {
        match self.entries[i].claim {
            NONE => None,
            c => Some(&self.claims[c as usize]),
        }
    }
}

/// Estimated tokens for a number of characters: 4 characters a token, rounded up.
pub fn estimate_tokens(chars: usize) -> usize {
    chars.div_ceil(4)
}

/// A summary or stub mf is about to write, before any format shapes it into lines.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub kind: ClaimKind,
    pub id: String,
    /// The last turn it covers (never one the conversation has not reached).
    pub turn: u64,
    /// mf's label, a blank line, the text.
    pub content: String,
    pub coverage: Coverage,
    /// For a stub: the entry it stands in for (its call id and tool name are copied).
    pub stub_of: Option<u32>,
    /// Further fields of mf's record, each already serialized as JSON (`audit`, `redacted`, …).
    pub extra: Vec<(&'static str, String)>,
}

impl Draft {
    pub fn chars(&self) -> usize {
        self.content.chars().count()
    }
}
