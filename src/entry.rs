//! The domain view of one transcript line: `Entry` (a message) and `Record` (mf's own bookkeeping).
//!
//! These types know nothing of JSON: the transcript module builds them from lines and writes
//! them back. The fold engine reads them and nothing else.

/// Who spoke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `system` (and `developer`, its newer OpenAI name).
    System,
    User,
    Assistant,
    /// `tool` (and the legacy `function`).
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

/// One message line of the transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Stable id: the line's own `id`, else derived from its line number (`line-N`).
    pub id: String,
    /// 1-based physical line number in the file.
    pub line: usize,
    pub role: Role,
    /// The model-visible text: content parts, tool calls and their arguments, rendered as text.
    /// Images and other binary parts become short placeholders.
    pub text: String,
    /// Ids of the tool calls this (assistant) message makes.
    pub tool_calls: Vec<String>,
    /// For a tool result: the id of the call it answers.
    pub tool_call_id: Option<String>,
    /// For a tool result: the tool's name, when the line says it.
    pub tool_name: Option<String>,
    /// Set when the line claims to be an mf summary, by a coverage record or by mf's label text.
    /// Whether the claim holds is the engine's call (see `fold::Ledger`).
    pub summary: Option<SummaryClaim>,
}

impl Entry {
    /// Characters of model-visible text, the unit every size in mf is measured in.
    pub fn chars(&self) -> usize {
        self.text.chars().count()
    }
}

/// What a line says about itself as an mf summary.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryClaim {
    /// The exact `content` string (the fingerprint is taken over it), if content is a string.
    pub content: Option<String>,
    /// The parsed coverage record, or why it could not be read.
    pub coverage: Result<Coverage, String>,
}

/// The coverage record of a summary (`summarizes` in the file).
#[derive(Debug, Clone, PartialEq)]
pub struct Coverage {
    pub from_turn: u64,
    pub to_turn: u64,
    pub entry_count: u64,
    /// The exact ids this summary stands for, in conversation order.
    pub covered_ids: Vec<String>,
    pub model: String,
    pub summarized_at_ms: u64,
    pub usage: Option<Usage>,
    /// FNV-1a 64 of the exact content string, 16 hex digits.
    pub fingerprint: String,
}

/// Token usage reported by a summarizer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

/// A non-message line mf wrote: a remembered decision. Recall ignores these.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub line: usize,
    pub at_ms: u64,
    pub kind: RecordKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RecordKind {
    /// A summary was written.
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
        from_turn: u64,
        to_turn: u64,
        span_ids: Vec<String>,
        span_chars: u64,
        summary_chars: Option<u64>,
        detail: String,
    },
    /// A summary was withdrawn; its originals are verbatim in recall again.
    Retract {
        summary_id: String,
        fingerprint: String,
    },
    /// A record kind from a newer mf: kept, shown by `explain`, otherwise ignored.
    Unknown { kind: String },
}

/// Why a fold was declined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeclineReason {
    /// Label plus summary would not be shorter than the span. Persisted: the same span is never asked again.
    NotSmaller,
    /// The summarizer failed; the span stayed verbatim. Not binding: a later run asks again.
    SummarizerFailed,
}

impl DeclineReason {
    pub fn as_str(self) -> &'static str {
        match self {
            DeclineReason::NotSmaller => "not-smaller",
            DeclineReason::SummarizerFailed => "summarizer-failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "not-smaller" => Some(Self::NotSmaller),
            "summarizer-failed" => Some(Self::SummarizerFailed),
            _ => None,
        }
    }
}

/// Estimated tokens for a number of characters: 4 characters a token, rounded up.
pub fn estimate_tokens(chars: usize) -> usize {
    chars.div_ceil(4)
}
