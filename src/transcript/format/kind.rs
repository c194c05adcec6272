//! What a transcript format is, by name, and what a file's first lines say it is: a leaf (no
//! other module of mf is imported), so that errors can name formats without reaching the readers.

/// A transcript format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Format {
    /// One OpenAI-style chat message per line.
    Chat,
    /// A Claude Code session (`~/.claude/projects/…/<session>.jsonl`).
    Claude,
    /// A Codex CLI rollout (`~/.codex/sessions/…/rollout-*.jsonl`).
    Codex,
    /// A pi coding-agent session.
    Pi,
    /// A GitHub Copilot CLI session (`~/.copilot/session-state/<id>/events.jsonl`).
    Copilot,
    /// A Qwen Code session (`~/.qwen/projects/…/chats/<session>.jsonl`).
    Qwen,
    /// A Gemini CLI session (`~/.gemini/tmp/…/chats/session-*.jsonl`).
    Gemini,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Chat => "chat",
            Format::Claude => "claude",
            Format::Codex => "codex",
            Format::Pi => "pi",
            Format::Copilot => "copilot",
            Format::Qwen => "qwen",
            Format::Gemini => "gemini",
        }
    }

    /// Its short name in prose (`… finds no Codex entries`).
    pub fn label(self) -> &'static str {
        match self {
            Format::Chat => "chat",
            Format::Claude => "Claude Code",
            Format::Codex => "Codex",
            Format::Pi => "pi",
            Format::Copilot => "Copilot CLI",
            Format::Qwen => "Qwen Code",
            Format::Gemini => "Gemini CLI",
        }
    }

    /// What people call it, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Format::Chat => "a chat transcript (one message per line)",
            Format::Claude => "a Claude Code session",
            Format::Codex => "a Codex CLI rollout",
            Format::Pi => "a pi coding-agent session",
            Format::Copilot => "a GitHub Copilot CLI session",
            Format::Qwen => "a Qwen Code session",
            Format::Gemini => "a Gemini CLI session",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "chat" | "openai" => Format::Chat,
            "claude" | "claude-code" => Format::Claude,
            "codex" => Format::Codex,
            "pi" => Format::Pi,
            "copilot" | "copilot-cli" => Format::Copilot,
            "qwen" | "qwen-code" => Format::Qwen,
            "gemini" | "gemini-cli" => Format::Gemini,
            _ => return None,
        })
    }

    /// Whether the format belongs to an agent that may be writing the file right now.
    pub fn is_agent(self) -> bool {
        !matches!(self, Format::Chat)
    }

    /// Whether the agent shows only one unbroken run of entries after its summaries (pi), so that
    /// a fold must cover a prefix of what it sends.
    pub fn shows_one_run(self) -> bool {
        matches!(self, Format::Pi)
    }
}

/// What the first conclusive lines of a file say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detected {
    Format(Format),
    /// A file mf refuses, and what it is.
    Refused(&'static str),
}
